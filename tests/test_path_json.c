/* test_path_json.c -- proto/path_json.c: path requests (JSON, query string, batch) and answers. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path_json.h"
#include "testutil.h"

static pf_status parse_req(const char *s, pf_path_request *r, pf_proto_error *e) {
    return pf_path_request_parse(s, strlen(s), r, e);
}

/* A 300-cell path answer: well-formed JSON with every point and the cost
 * to the last bit. What it costs against a cJSON tree is measured by
 * scripts/bench-json.c (make bench-json), not here. */
START_TEST(path_json_answer_300_cells) {
    pf_point pts[300];
    pf_path_answer a;
    pf_jsonw w;
    cJSON *j, *path;
    char *s;
    for (int i = 0; i < 300; i++) pts[i] = (pf_point){i, 511 - i};
    memset(&a, 0, sizeof(a));
    a.status = PF_OK;
    a.algorithm = PF_ALGO_HPA;
    a.cost = 423.12345678901234;
    a.path = pts;
    a.path_len = 300;
    a.map_version = 3;
    pf_jsonw_init(&w, 4096);
    pf_path_write_answer(&w, &a);
    s = tu_jsonw_text(&w);
    j = cJSON_Parse(s);
    ck_assert_ptr_nonnull(j);
    path = cJSON_GetObjectItem(j, "path");
    ck_assert_int_eq(cJSON_GetArraySize(path), 300);
    for (int i = 0; i < 300; i++) {
        const cJSON *p = cJSON_GetArrayItem(path, i);
        ck_assert_int_eq(cJSON_GetArrayItem(p, 0)->valueint, i);
        ck_assert_int_eq(cJSON_GetArrayItem(p, 1)->valueint, 511 - i);
    }
    ck_assert_double_eq(cJSON_GetObjectItem(j, "cost")->valuedouble, a.cost);
    cJSON_Delete(j);
    free(s);
}
END_TEST

START_TEST(path_json_request_fields_and_errors) {
    pf_path_request r;
    pf_proto_error e;
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4],\"algorithm\":\"weighted\","
                               "\"weight\":2.5,\"smooth\":true,\"debug\":true,\"deadline_ms\":50,"
                               "\"max_expanded\":1000,\"heuristic\":\"euclidean\",\"cache\":false}",
                               &r, &e),
                     PF_OK);
    ck_assert_int_eq(r.start.x, 1);
    ck_assert_int_eq(r.goal.y, 4);
    ck_assert(r.has_algorithm && r.algorithm == PF_ALGO_WEIGHTED);
    ck_assert_double_eq(r.weight, 2.5);
    ck_assert(r.smooth && r.debug && !r.use_cache);
    ck_assert_int_eq(r.deadline_ms, 50);
    ck_assert_uint_eq(r.max_expanded, 1000);
    ck_assert_int_eq(r.heuristic, PF_H_EUCLIDEAN);
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4]}", &r, &e), PF_OK);
    ck_assert(!r.has_algorithm && r.use_cache && !r.smooth);

    ck_assert_int_eq(parse_req("{\"goal\":[3,4]}", &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "start");
    ck_assert_int_eq(parse_req("{\"start\":[1],\"goal\":[3,4]}", &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "start");
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4.5]}", &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "goal");
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,1e12]}", &r, &e), PF_ERANGE);
    ck_assert_str_eq(e.field, "goal");
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4],\"algorithm\":\"dstar\"}", &r, &e),
                     PF_EINVAL);
    ck_assert_str_eq(e.field, "algorithm");
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4],\"weight\":0.5}", &r, &e),
                     PF_EINVAL);
    ck_assert_str_eq(e.field, "weight");
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4],\"deadline_ms\":0}", &r, &e),
                     PF_EINVAL);
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4],\"smooth\":1}", &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "smooth");
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4],\"start\":[0,0]}", &r, &e),
                     PF_EPARSE);
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4],\"stat\":1}", &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "stat");
    ck_assert_int_eq(parse_req("[1,2]", &r, &e), PF_EPARSE);
}
END_TEST

START_TEST(path_json_request_query_string) {
    pf_path_request r;
    pf_proto_error e;
    pf_kv ok[] = {{"start", "1,2"}, {"goal", "30,-4"},  {"algorithm", "bfs"},
                  {"smooth", NULL}, {"debug", "false"}, {"deadline_ms", "10"}};
    pf_kv bad_point[] = {{"start", "1;2"}, {"goal", "3,4"}};
    pf_kv unknown[] = {{"start", "1,2"}, {"goal", "3,4"}, {"foo", "1"}};
    pf_kv twice[] = {{"start", "1,2"}, {"start", "3,4"}};
    pf_kv weight[] = {{"start", "1,2"}, {"goal", "3,4"}, {"weight", "abc"}};
    ck_assert_int_eq(pf_path_request_from_query(ok, 6, &r, &e), PF_OK);
    ck_assert_int_eq(r.goal.x, 30);
    ck_assert_int_eq(r.goal.y, -4);
    ck_assert(r.smooth && !r.debug);
    ck_assert_int_eq(r.algorithm, PF_ALGO_BFS);
    ck_assert_int_eq(pf_path_request_from_query(bad_point, 2, &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "start");
    ck_assert_int_eq(pf_path_request_from_query(unknown, 3, &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "foo");
    ck_assert_int_eq(pf_path_request_from_query(twice, 2, &r, &e), PF_EPARSE);
    ck_assert_int_eq(pf_path_request_from_query(weight, 3, &r, &e), PF_EPARSE);
    ck_assert_int_eq(pf_path_request_from_query(ok, 1, &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "goal");
}
END_TEST

START_TEST(path_json_batch_parse_limits_and_prefixes) {
    pf_path_request *q;
    size_t n;
    int64_t dl;
    pf_proto_error e;
    const char ok[] = "{\"queries\":[{\"start\":[0,0],\"goal\":[1,1]},{\"start\":[2,2],"
                      "\"goal\":[3,3],\"algorithm\":\"astar\"}],\"deadline_ms\":20}";
    const char bad[] = "{\"queries\":[{\"start\":[0,0],\"goal\":[1,1]},{\"start\":[2,2]}]}";
    const char item_deadline[] =
        "{\"queries\":[{\"start\":[0,0],\"goal\":[1,1],\"deadline_ms\":5}]}";
    ck_assert_int_eq(pf_path_batch_parse(ok, sizeof(ok) - 1, 10, &q, &n, &dl, &e), PF_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(dl, 20);
    ck_assert_int_eq(q[1].start.x, 2);
    free(q);
    ck_assert_int_eq(pf_path_batch_parse(ok, sizeof(ok) - 1, 1, &q, &n, &dl, &e), PF_ELIMIT);
    ck_assert_str_eq(e.field, "queries");
    ck_assert_int_eq(pf_path_batch_parse(bad, sizeof(bad) - 1, 10, &q, &n, &dl, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "queries[1].goal");
    ck_assert_int_eq(
        pf_path_batch_parse(item_deadline, sizeof(item_deadline) - 1, 10, &q, &n, &dl, &e),
        PF_EPARSE);
    ck_assert_str_eq(e.field, "queries[0].deadline_ms");
    ck_assert_int_eq(pf_path_batch_parse("{\"queries\":[]}", 14, 10, &q, &n, &dl, &e), PF_EINVAL);
}
END_TEST

START_TEST(path_json_answer_not_found_and_debug) {
    pf_path_answer a;
    pf_jsonw w;
    int32_t cells[] = {0, 5, 12};
    char *s;
    memset(&a, 0, sizeof(a));
    a.status = PF_EBUDGET;
    a.algorithm = PF_ALGO_ASTAR;
    a.map_version = 7;
    a.expanded = 3;
    a.debug = true;
    a.expanded_cells = cells;
    a.expanded_cells_len = 3;
    a.map_width = 5;
    pf_jsonw_init(&w, 0);
    pf_path_write_answer(&w, &a);
    s = tu_jsonw_text(&w);
    ck_assert_str_eq(s, "{\"found\":false,\"reason\":\"node_budget\",\"path\":[],\"algorithm\":"
                        "\"astar\",\"map_version\":7,\"stats\":{\"expanded\":3,\"time_us\":0,"
                        "\"cached\":false},\"expanded_cells\":[[0,0],[0,1],[2,2]]}");
    free(s);
}
END_TEST

static const pf_path_limits test_lim = {4, 8, 16};

static pf_status parse_lim(const char *s, pf_path_request *r, pf_proto_error *e) {
    return pf_path_request_parse_lim(s, strlen(s), &test_lim, r, e);
}

/* The fields that come with limits: accepted by the *_lim parsers, each
 * error naming its field; the plain parser still rejects them. */
START_TEST(path_json_goals_agents_partial_snap) {
    pf_path_request r;
    pf_proto_error e;
    ck_assert_int_eq(parse_lim("{\"start\":[1,2],\"goals\":[[3,4],[5,6]],\"agent_size\":3,"
                               "\"partial\":true,\"snap\":true,\"snap_radius\":5}",
                               &r, &e),
                     PF_OK);
    ck_assert_uint_eq(r.ngoals, 2);
    ck_assert(r.goals[1].x == 5 && r.goals[1].y == 6);
    ck_assert(r.goal.x == 3 && r.goal.y == 4);
    ck_assert_int_eq(r.agent_size, 3);
    ck_assert(r.partial && r.snap);
    ck_assert_int_eq(r.snap_radius, 5);
    pf_path_request_clear(&r);
    ck_assert_ptr_null(r.goals);
    ck_assert_int_eq(parse_lim("{\"start\":[1,2],\"goal\":[3,4],\"snap\":true}", &r, &e), PF_OK);
    ck_assert_int_eq(r.snap_radius, PF_PATH_DEFAULT_SNAP_RADIUS);
    ck_assert_int_eq(r.agent_size, 1);
    ck_assert_ptr_null(r.goals);

    static const struct {
        const char *body;
        pf_status st;
        const char *field;
    } bad[] = {
        {"{\"start\":[1,2],\"goal\":[1,1],\"goals\":[[3,4]]}", PF_EPARSE, "goals"},
        {"{\"start\":[1,2]}", PF_EPARSE, "goal"},
        {"{\"start\":[1,2],\"goals\":[]}", PF_EINVAL, "goals"},
        {"{\"start\":[1,2],\"goals\":{}}", PF_EPARSE, "goals"},
        {"{\"start\":[1,2],\"goals\":[[1,1],[2,2],[3,3],[4,4],[5,5]]}", PF_ELIMIT, "goals"},
        {"{\"start\":[1,2],\"goals\":[[1,1],[2,2],[3]]}", PF_EPARSE, "goals[2]"},
        {"{\"start\":[1,2],\"goals\":[[1,1],[2,1e12]]}", PF_ERANGE, "goals[1]"},
        {"{\"start\":[1,2],\"goal\":[1,1],\"agent_size\":0}", PF_EINVAL, "agent_size"},
        {"{\"start\":[1,2],\"goal\":[1,1],\"agent_size\":9}", PF_EINVAL, "agent_size"},
        {"{\"start\":[1,2],\"goal\":[1,1],\"agent_size\":2.5}", PF_EPARSE, "agent_size"},
        {"{\"start\":[1,2],\"goal\":[1,1],\"partial\":\"yes\"}", PF_EPARSE, "partial"},
        {"{\"start\":[1,2],\"goal\":[1,1],\"snap\":1}", PF_EPARSE, "snap"},
        {"{\"start\":[1,2],\"goal\":[1,1],\"snap_radius\":3}", PF_EINVAL, "snap_radius"},
        {"{\"start\":[1,2],\"goal\":[1,1],\"snap\":true,\"snap_radius\":17}", PF_EINVAL,
         "snap_radius"},
        {"{\"start\":[1,2],\"goal\":[1,1],\"snap\":true,\"snap_radius\":-1}", PF_EINVAL,
         "snap_radius"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&r, 0, sizeof(r));
        ck_assert_msg(parse_lim(bad[i].body, &r, &e) == bad[i].st, "%s: status %d", bad[i].body,
                      e.status);
        ck_assert_msg(strcmp(e.field, bad[i].field) == 0, "%s: field '%s'", bad[i].body, e.field);
        ck_assert_ptr_null(r.goals); /* nothing owned on error */
    }
    ck_assert_int_eq(parse_lim("{\"start\":[1,2],\"goal\":[1,1],\"agent_size\":9}", &r, &e),
                     PF_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "max_agent_size"));
    /* Without limits these are unknown fields. */
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goals\":[[3,4]]}", &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "goals");
    ck_assert_int_eq(parse_req("{\"start\":[1,2],\"goal\":[3,4],\"agent_size\":1}", &r, &e),
                     PF_EPARSE);
    ck_assert_str_eq(e.field, "agent_size");
}
END_TEST

START_TEST(path_json_query_and_batch_with_limits) {
    pf_path_request r, *q;
    pf_proto_error e;
    size_t n;
    int64_t dl;
    pf_kv ok[] = {{"start", "1,2"},  {"goals", "3,4;5,-6"}, {"agent_size", "2"},
                  {"partial", NULL}, {"snap", "1"},         {"snap_radius", "0"}};
    pf_kv bad_goal[] = {{"start", "1,2"}, {"goals", "3,4;5"}};
    pf_kv many[] = {{"start", "1,2"}, {"goals", "1,1;2,2;3,3;4,4;5,5"}};
    pf_kv both[] = {{"start", "1,2"}, {"goals", "1,1"}, {"goal", "2,2"}};
    pf_kv radius[] = {{"start", "1,2"}, {"goal", "1,1"}, {"snap_radius", "2"}};
    ck_assert_int_eq(pf_path_request_from_query_lim(ok, 6, &test_lim, &r, &e), PF_OK);
    ck_assert_uint_eq(r.ngoals, 2);
    ck_assert_int_eq(r.goals[1].y, -6);
    ck_assert(r.partial && r.snap && r.snap_radius == 0 && r.agent_size == 2);
    pf_path_request_clear(&r);
    ck_assert_int_eq(pf_path_request_from_query_lim(bad_goal, 2, &test_lim, &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "goals[1]");
    ck_assert_int_eq(pf_path_request_from_query_lim(many, 2, &test_lim, &r, &e), PF_ELIMIT);
    ck_assert_int_eq(pf_path_request_from_query_lim(both, 3, &test_lim, &r, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "goals");
    ck_assert_int_eq(pf_path_request_from_query_lim(radius, 3, &test_lim, &r, &e), PF_EINVAL);
    ck_assert_int_eq(pf_path_request_from_query(ok, 6, &r, &e), PF_EPARSE); /* no limits */

    const char batch[] = "{\"queries\":[{\"start\":[0,0],\"goals\":[[1,1],[2,2]]},"
                         "{\"start\":[2,2],\"goal\":[3,3],\"agent_size\":2}]}";
    const char bad[] = "{\"queries\":[{\"start\":[0,0],\"goals\":[[1,1],[2,2]]},"
                       "{\"start\":[2,2],\"goals\":[[3,3]],\"agent_size\":99}]}";
    ck_assert_int_eq(
        pf_path_batch_parse_lim(batch, sizeof(batch) - 1, 10, &test_lim, &q, &n, &dl, &e), PF_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(q[0].ngoals, 2);
    ck_assert_int_eq(q[1].agent_size, 2);
    pf_path_batch_free(q, n);
    /* The first query's goals are freed when the second fails (ASan). */
    ck_assert_int_eq(pf_path_batch_parse_lim(bad, sizeof(bad) - 1, 10, &test_lim, &q, &n, &dl, &e),
                     PF_EINVAL);
    ck_assert_str_eq(e.field, "queries[1].agent_size");
    pf_path_batch_free(NULL, 0);
}
END_TEST

START_TEST(path_json_answer_partial_goals_snap) {
    pf_path_answer a;
    pf_jsonw w;
    pf_point path[3] = {{0, 0}, {1, 1}, {2, 1}};
    char *s;
    memset(&a, 0, sizeof(a));
    a.status = PF_OK;
    a.partial = true;
    a.partial_reason = PF_EBLOCKED;
    a.algorithm = PF_ALGO_ASTAR;
    a.cost = 2.5;
    a.path = path;
    a.path_len = 3;
    a.has_goals = true;
    a.goal_index = 2;
    a.goal = (pf_point){9, 9};
    a.agent_size = 2;
    a.start_snapped = true;
    a.start_at = path[0];
    a.note = "jps serves one-cell agents only; astar answered.";
    a.map_version = 4;
    pf_jsonw_init(&w, 0);
    pf_path_write_answer(&w, &a);
    s = tu_jsonw_text(&w);
    ck_assert_str_eq(s, "{\"found\":false,\"partial\":true,\"reason\":\"blocked\",\"cost\":2.5,"
                        "\"path\":[[0,0],[1,1],[2,1]],\"end\":[2,1],\"goal_index\":2,"
                        "\"goal\":[9,9],\"agent_size\":2,\"snapped\":{\"start\":[0,0]},"
                        "\"algorithm\":\"astar\",\"map_version\":4,\"note\":\"jps serves one-cell "
                        "agents only; astar answered.\",\"stats\":{\"expanded\":0,\"time_us\":0,"
                        "\"cached\":false}}");
    free(s);
    /* A plain answer is as before: none of the new members. */
    memset(&a, 0, sizeof(a));
    a.status = PF_OK;
    a.path = path;
    a.path_len = 2;
    a.cost = 1.5;
    a.agent_size = 1;
    pf_jsonw_init(&w, 0);
    pf_path_write_members(&w, &a);
    s = tu_jsonw_text(&w);
    ck_assert_str_eq(s, "\"found\":true,\"cost\":1.5,\"path\":[[0,0],[1,1]],\"algorithm\":\"bfs\","
                        "\"map_version\":0");
    free(s);
}
END_TEST

TU_SUITE(path_json) {
    Suite *s = suite_create("path_json");
    TCase *tc = tcase_create("path_json");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, path_json_answer_300_cells);
    tcase_add_test(tc, path_json_request_fields_and_errors);
    tcase_add_test(tc, path_json_request_query_string);
    tcase_add_test(tc, path_json_batch_parse_limits_and_prefixes);
    tcase_add_test(tc, path_json_answer_not_found_and_debug);
    tcase_add_test(tc, path_json_goals_agents_partial_snap);
    tcase_add_test(tc, path_json_query_and_batch_with_limits);
    tcase_add_test(tc, path_json_answer_partial_goals_snap);
    suite_add_tcase(s, tc);
    return s;
}
