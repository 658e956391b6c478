/* test_proto.c -- proto/: the JSON writer, strict request parsing, path
 * requests and answers, JSON maps. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errors.h"
#include "jsonr.h"
#include "jsonw.h"
#include "map_json.h"
#include "path_json.h"
#include "testutil.h"

static char *take(pf_jsonw *w) {
    size_t n;
    char *s = pf_jsonw_take(w, &n);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(strlen(s), n);
    return s;
}

START_TEST(proto_jsonw_structure_and_escapes) {
    pf_jsonw w;
    char *s;
    pf_jsonw_init(&w, 4); /* tiny start: growth is exercised */
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kstr(&w, "a", "q\"b\\s\n\t\x01 é");
    pf_jsonw_kint(&w, "neg", INT64_MIN);
    pf_jsonw_kuint(&w, "big", UINT64_MAX);
    pf_jsonw_key(&w, "arr");
    pf_jsonw_arr_begin(&w);
    pf_jsonw_point(&w, -3, 0);
    pf_jsonw_point(&w, 2147483647, -2147483647 - 1);
    pf_jsonw_arr_begin(&w);
    pf_jsonw_arr_end(&w);
    pf_jsonw_null(&w);
    pf_jsonw_bool(&w, false);
    pf_jsonw_arr_end(&w);
    pf_jsonw_key(&w, "empty");
    pf_jsonw_obj_begin(&w);
    pf_jsonw_obj_end(&w);
    pf_jsonw_obj_end(&w);
    ck_assert(!pf_jsonw_failed(&w));
    s = take(&w);
    ck_assert_str_eq(s, "{\"a\":\"q\\\"b\\\\s\\n\\t\\u0001 é\",\"neg\":-9223372036854775808,"
                        "\"big\":18446744073709551615,\"arr\":[[-3,0],[2147483647,-2147483648],"
                        "[],null,false],\"empty\":{}}");
    free(s);
}
END_TEST

START_TEST(proto_jsonw_doubles_roundtrip) {
    static const double vals[] = {0.0,
                                  1.0,
                                  -2.5,
                                  0.1,
                                  1.0 / 3.0,
                                  1e300,
                                  5e-324,
                                  123456789.0,
                                  12.071067811865476,
                                  41.012193308819754,
                                  -0.0,
                                  9007199254740993.0};
    char buf[40];
    uint64_t st = tu_seed("proto_jsonw_doubles_roundtrip", 7);
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        pf_jsonw_fmt_double(vals[i], buf);
        ck_assert_msg(strtod(buf, NULL) == vals[i], "%.17g printed as %s", vals[i], buf);
    }
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = tu_rand(&st);
        double v;
        memcpy(&v, &bits, sizeof(v));
        if (!isfinite(v)) continue;
        pf_jsonw_fmt_double(v, buf);
        ck_assert_msg(strtod(buf, NULL) == v, "%.17g printed as %s", v, buf);
    }
    /* Shortest form: no 17-digit noise for simple values. */
    pf_jsonw_fmt_double(0.1, buf);
    ck_assert_str_eq(buf, "0.1");
    pf_jsonw_fmt_double(3.0, buf);
    ck_assert_str_eq(buf, "3");
    pf_jsonw_fmt_double(NAN, buf);
    ck_assert_str_eq(buf, "null");
}
END_TEST

START_TEST(proto_jsonw_depth_limit_fails_sticky) {
    pf_jsonw w;
    size_t n;
    pf_jsonw_init(&w, 0);
    for (int i = 0; i < PF_JSONW_MAX_DEPTH + 1; i++) pf_jsonw_arr_begin(&w);
    ck_assert(pf_jsonw_failed(&w));
    pf_jsonw_int(&w, 1);
    ck_assert_ptr_null(pf_jsonw_take(&w, &n));
    pf_jsonw_init(&w, 0);
    pf_jsonw_obj_end(&w); /* unbalanced */
    ck_assert(pf_jsonw_failed(&w));
    pf_jsonw_free(&w);
}
END_TEST

/* The budget: a 300-cell path answer costs microseconds, against
 * ~150 us for building and printing a cJSON tree. Both are timed here. */
START_TEST(proto_path_answer_300_cells_fast) {
    pf_point pts[300];
    pf_path_answer a;
    struct timespec t0, t1;
    double ours[51], tree[51];
    for (int i = 0; i < 300; i++) pts[i] = (pf_point){i, 511 - i};
    memset(&a, 0, sizeof(a));
    a.status = PF_OK;
    a.algorithm = PF_ALGO_HPA;
    a.cost = 423.12345678901234;
    a.path = pts;
    a.path_len = 300;
    a.map_version = 3;
    for (int rep = 0; rep < 51; rep++) {
        pf_jsonw w;
        cJSON *root, *arr;
        char *s;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pf_jsonw_init(&w, 4096);
        pf_path_write_answer(&w, &a);
        s = take(&w);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ours[rep] = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
        if (rep == 0) {
            cJSON *j = cJSON_Parse(s);
            ck_assert_ptr_nonnull(j);
            ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "path")), 300);
            ck_assert_double_eq(cJSON_GetObjectItem(j, "cost")->valuedouble, a.cost);
            cJSON_Delete(j);
        }
        free(s);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        root = cJSON_CreateObject();
        cJSON_AddBoolToObject(root, "found", 1);
        cJSON_AddNumberToObject(root, "cost", a.cost);
        arr = cJSON_AddArrayToObject(root, "path");
        for (int i = 0; i < 300; i++) {
            int xy[2] = {pts[i].x, pts[i].y};
            cJSON_AddItemToArray(arr, cJSON_CreateIntArray(xy, 2));
        }
        s = cJSON_PrintUnformatted(root);
        cJSON_Delete(root);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        tree[rep] = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
        free(s);
    }
    for (int i = 1; i < 51; i++)
        for (int k = i; k > 0 && ours[k] < ours[k - 1]; k--) {
            double t = ours[k];
            ours[k] = ours[k - 1];
            ours[k - 1] = t;
        }
    for (int i = 1; i < 51; i++)
        for (int k = i; k > 0 && tree[k] < tree[k - 1]; k--) {
            double t = tree[k];
            tree[k] = tree[k - 1];
            tree[k - 1] = t;
        }
    fprintf(stderr,
            "proto_path_answer_300_cells_fast: jsonw %.1f us, cJSON tree %.1f us (medians)\n",
            ours[25], tree[25]);
    ck_assert_msg(ours[25] < 200.0, "writing 300 cells took %.1f us", ours[25]);
    ck_assert_msg(ours[25] * 4 < tree[25], "jsonw (%.1f us) is not 4x faster than cJSON (%.1f us)",
                  ours[25], tree[25]);
}
END_TEST

START_TEST(proto_jsonr_requires_end_of_input) {
    cJSON *j;
    pf_proto_error e;
    const char ok[] = "  {\"a\":1}  \n";
    ck_assert_int_eq(pf_jsonr_parse(ok, sizeof(ok) - 1, &j, &e), PF_OK);
    cJSON_Delete(j);
    ck_assert_int_eq(pf_jsonr_parse("{\"a\":1}{", 8, &j, &e), PF_EPARSE);
    ck_assert_str_eq(pf_error_code(e.code), "malformed_json");
    ck_assert_ptr_nonnull(strstr(e.message, "byte 7"));
    ck_assert_int_eq(pf_jsonr_parse("{\"a\":", 5, &j, &e), PF_EPARSE);
    ck_assert_int_eq(pf_jsonr_parse("", 0, &j, &e), PF_EPARSE);
    /* An explicit length: bytes past it are not read. */
    ck_assert_int_eq(pf_jsonr_parse("[1]garbage", 3, &j, &e), PF_OK);
    cJSON_Delete(j);
}
END_TEST

START_TEST(proto_jsonr_numbers_finite_integral_in_range) {
    cJSON *j;
    pf_proto_error e;
    int64_t v;
    double d;
    const char doc[] = "{\"a\":3,\"b\":3.5,\"c\":1e400,\"d\":-5,\"e\":\"7\",\"f\":4294967296}";
    ck_assert_int_eq(pf_jsonr_parse(doc, sizeof(doc) - 1, &j, &e), PF_OK);
    ck_assert_int_eq(pf_jsonr_int(cJSON_GetObjectItem(j, "a"), "a", 0, 10, &v, &e), PF_OK);
    ck_assert_int_eq(v, 3);
    ck_assert_int_eq(pf_jsonr_int(cJSON_GetObjectItem(j, "b"), "b", 0, 10, &v, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "b");
    ck_assert_int_eq(pf_jsonr_int(cJSON_GetObjectItem(j, "c"), "c", 0, 10, &v, &e), PF_EPARSE);
    ck_assert_int_eq(pf_jsonr_number(cJSON_GetObjectItem(j, "c"), "c", 0, 10, &d, &e), PF_EPARSE);
    ck_assert_int_eq(pf_jsonr_int(cJSON_GetObjectItem(j, "d"), "d", 0, 10, &v, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "d");
    ck_assert_int_eq(pf_jsonr_int(cJSON_GetObjectItem(j, "e"), "e", 0, 10, &v, &e), PF_EPARSE);
    ck_assert_int_eq(pf_jsonr_int(cJSON_GetObjectItem(j, "f"), "f", INT32_MIN, INT32_MAX, &v, &e),
                     PF_EINVAL);
    cJSON_Delete(j);
}
END_TEST

static pf_status parse_req(const char *s, pf_path_request *r, pf_proto_error *e) {
    return pf_path_request_parse(s, strlen(s), r, e);
}

START_TEST(proto_path_request_fields_and_errors) {
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

START_TEST(proto_path_request_query_string) {
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

START_TEST(proto_batch_parse_limits_and_prefixes) {
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

START_TEST(proto_path_answer_not_found_and_debug) {
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
    s = take(&w);
    ck_assert_str_eq(s, "{\"found\":false,\"reason\":\"node_budget\",\"path\":[],\"algorithm\":"
                        "\"astar\",\"map_version\":7,\"stats\":{\"expanded\":3,\"time_us\":0,"
                        "\"cached\":false},\"expanded_cells\":[[0,0],[0,1],[2,2]]}");
    free(s);
}
END_TEST

static pf_status parse_map(const char *s, pf_grid **g, pf_proto_error *e) {
    return pf_map_json_parse(s, strlen(s), NULL, g, e);
}

START_TEST(proto_map_json_full) {
    pf_grid *g = NULL;
    pf_proto_error e;
    const char doc[] = "{\"width\":4,\"height\":3,\"rows\":[\"..~#\",\"....\",\"#..G\"],"
                       "\"legend\":{\"~\":5},\"connectivity\":4,\"corner_cutting\":true,"
                       "\"walls\":[[0,1,\"E\"],[2,2,\"N\"]],"
                       "\"doors\":{\"gate\":{\"cells\":[[1,0]],\"walls\":[[3,1,\"S\"]],"
                       "\"open\":false}}}";
    ck_assert_int_eq(pf_map_json_parse(doc, sizeof(doc) - 1, NULL, &g, &e), PF_OK);
    ck_assert_int_eq(pf_grid_width(g), 4);
    ck_assert_int_eq(pf_grid_height(g), 3);
    ck_assert_int_eq(pf_grid_connectivity(g), 4);
    ck_assert(pf_grid_corner_cutting(g));
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){2, 0}), 5);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){3, 0}), 0);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){3, 2}), 1);
    ck_assert(pf_grid_is_wall(g, (pf_point){0, 1}, PF_DIR_E));
    ck_assert(pf_grid_is_wall(g, (pf_point){1, 1}, PF_DIR_W));
    ck_assert(pf_grid_is_wall(g, (pf_point){2, 1}, PF_DIR_S));
    ck_assert_int_eq(pf_grid_door_count(g), 1);
    ck_assert(!pf_grid_door_is_open(g, 0));
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){1, 0}), 0); /* closed door */
    pf_grid_destroy(g);
}
END_TEST

START_TEST(proto_map_json_errors_name_the_field) {
    pf_grid *g = NULL;
    pf_proto_error e;
    pf_grid_limits lim = pf_grid_default_limits();
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\",\"...\"]}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "rows[1]");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\",\".x\"]}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "rows[1]");
    ck_assert_int_eq(parse_map("{\"width\":3,\"rows\":[\"..\"]}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "rows[0]");
    ck_assert_int_eq(parse_map("{\"height\":2,\"rows\":[\"..\"]}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "rows");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"legend\":{\"ab\":1}}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "legend.ab");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"legend\":{\"x\":256}}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "legend.x");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"walls\":[[1,0,\"E\"]]}", &g, &e), PF_ERANGE);
    ck_assert_str_eq(e.field, "walls[0]");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"walls\":[[0,0,\"NE\"]]}", &g, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "walls[0]");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"doors\":{\"d\":{\"cells\":[[5,5]]}}}", &g, &e),
                     PF_ERANGE);
    ck_assert_str_eq(e.field, "doors.d.cells[0]");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"doors\":{\"d\":{}}}", &g, &e), PF_EINVAL);
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"doors\":{\"d\":{\"cels\":[]}}}", &g, &e),
                     PF_EPARSE);
    ck_assert_str_eq(e.field, "doors.d.cels");
    ck_assert_int_eq(parse_map("{\"rows\":\"..\"}", &g, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "rows");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"colour\":1}", &g, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "colour");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"connectivity\":6}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "connectivity");
    /* The cell limit is checked before allocating. */
    lim.max_cells = 3;
    ck_assert_int_eq(pf_map_json_parse("{\"rows\":[\"..\",\"..\"]}", 20, &lim, &g, &e), PF_ELIMIT);
    ck_assert_ptr_null(g);
}
END_TEST

START_TEST(proto_map_text_errors) {
    pf_grid *g = NULL;
    pf_proto_error e;
    const char bad[] = "type octile\nheight 2\nwidth 2\nmap\n..\n";
    const char ok[] = "type octile\nheight 1\nwidth 2\nmap\n.@\n";
    ck_assert_int_eq(pf_map_text_parse(bad, sizeof(bad) - 1, NULL, &g, &e), PF_EPARSE);
    ck_assert_str_eq(pf_error_code(e.code), "malformed_map");
    ck_assert_int_eq(pf_map_text_parse(ok, sizeof(ok) - 1, NULL, &g, &e), PF_OK);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){1, 0}), 0);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(proto_error_body) {
    pf_jsonw w;
    pf_proto_error e;
    char *s;
    pf_proto_error_set(&e, PF_EBLOCKED, PF_ERR_NONE, "goal", "Goal %d is blocked.", 3);
    ck_assert_str_eq(pf_error_code(e.code), "blocked");
    pf_jsonw_init(&w, 0);
    pf_proto_write_perror(&w, &e);
    s = take(&w);
    ck_assert_str_eq(s, "{\"error\":{\"code\":\"blocked\",\"message\":\"Goal 3 is blocked.\","
                        "\"field\":\"goal\"}}");
    free(s);
    pf_jsonw_init(&w, 0);
    pf_proto_write_error(&w, PF_ERR_NOT_FOUND, "No.", NULL);
    s = take(&w);
    ck_assert_str_eq(s, "{\"error\":{\"code\":\"not_found\",\"message\":\"No.\"}}");
    free(s);
}
END_TEST

TU_SUITE(proto) {
    Suite *s = suite_create("proto");
    TCase *tc = tcase_create("proto");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, proto_jsonw_structure_and_escapes);
    tcase_add_test(tc, proto_jsonw_doubles_roundtrip);
    tcase_add_test(tc, proto_jsonw_depth_limit_fails_sticky);
    tcase_add_test(tc, proto_path_answer_300_cells_fast);
    tcase_add_test(tc, proto_jsonr_requires_end_of_input);
    tcase_add_test(tc, proto_jsonr_numbers_finite_integral_in_range);
    tcase_add_test(tc, proto_path_request_fields_and_errors);
    tcase_add_test(tc, proto_path_request_query_string);
    tcase_add_test(tc, proto_batch_parse_limits_and_prefixes);
    tcase_add_test(tc, proto_path_answer_not_found_and_debug);
    tcase_add_test(tc, proto_map_json_full);
    tcase_add_test(tc, proto_map_json_errors_name_the_field);
    tcase_add_test(tc, proto_map_text_errors);
    tcase_add_test(tc, proto_error_body);
    suite_add_tcase(s, tc);
    return s;
}
