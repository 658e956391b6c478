/* test_session_json.c -- proto/session_json.c: session requests, updates
 * (JSON and NDJSON), map PATCH bodies and the session answer. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_json.h"
#include "testutil.h"

static pf_status parse_create(const char *s, int64_t max_ttl, pf_session_request *q,
                              pf_proto_error *e) {
    return pf_session_request_parse(s, strlen(s), max_ttl, q, e);
}

static pf_status parse_updates(const char *s, bool ndjson, size_t max, pf_update_list *l,
                               pf_proto_error *e) {
    return pf_update_list_parse(s, strlen(s), ndjson, max, l, e);
}

/* Checks e: status, code and field. */
static void expect(const pf_proto_error *e, pf_status got, pf_status st, const char *code,
                   const char *field) {
    ck_assert_int_eq(got, st);
    ck_assert_int_eq(e->status, st);
    ck_assert_str_eq(pf_error_code(e->code), code);
    ck_assert_str_eq(e->field, field);
    ck_assert(strlen(e->message) > 0);
}

START_TEST(session_json_request_fields_and_errors) {
    pf_session_request q;
    pf_proto_error e;
    ck_assert_int_eq(parse_create("{\"start\":[1,2],\"goal\":[3,4],\"ttl_s\":30}", 60, &q, &e),
                     PF_OK);
    ck_assert_int_eq(q.start.x, 1);
    ck_assert_int_eq(q.start.y, 2);
    ck_assert_int_eq(q.goal.x, 3);
    ck_assert_int_eq(q.goal.y, 4);
    ck_assert_int_eq(q.ttl_s, 30);
    ck_assert_int_eq(parse_create("{\"goal\":[3,4],\"start\":[0,0]}", 60, &q, &e), PF_OK);
    ck_assert_int_eq(q.ttl_s, 0); /* not given: the server's default */

    expect(&e, parse_create("{\"start\":[1,2]}", 60, &q, &e), PF_EPARSE, "invalid_request", "goal");
    expect(&e, parse_create("{\"goal\":[1,2]}", 60, &q, &e), PF_EPARSE, "invalid_request", "start");
    expect(&e, parse_create("{\"start\":[1],\"goal\":[1,2]}", 60, &q, &e), PF_EPARSE,
           "invalid_request", "start");
    expect(&e, parse_create("{\"start\":[1,2],\"goal\":[1,2],\"ttl_s\":61}", 60, &q, &e), PF_EINVAL,
           "invalid_value", "ttl_s");
    expect(&e, parse_create("{\"start\":[1,2],\"goal\":[1,2],\"ttl_s\":0}", 60, &q, &e), PF_EINVAL,
           "invalid_value", "ttl_s");
    expect(&e, parse_create("{\"start\":[1,2],\"goal\":[1,2],\"speed\":3}", 60, &q, &e), PF_EPARSE,
           "invalid_request", "speed");
    expect(&e, parse_create("{\"start\":[1,2],\"goal\":[1,2]} x", 60, &q, &e), PF_EPARSE,
           "malformed_json", "");
    expect(&e, parse_create("[1,2]", 60, &q, &e), PF_EPARSE, "invalid_request", "");
}
END_TEST

START_TEST(session_json_update_json_one) {
    pf_update_list l;
    pf_proto_error e;
    const char ok[] = "{\"position\":[1,1],\"cells\":[{\"x\":2,\"y\":3,\"cost\":5},"
                      "{\"x\":0,\"y\":0,\"blocked\":true},{\"x\":4,\"y\":4,\"blocked\":false}],"
                      "\"doors\":[{\"id\":\"gate\",\"open\":false}]}";
    char buf[32];
    ck_assert_int_eq(parse_updates(ok, false, 8, &l, &e), PF_OK);
    ck_assert_uint_eq(l.n, 1);
    ck_assert(!l.ndjson);
    ck_assert_str_eq(pf_update_prefix(&l, 0, buf, sizeof(buf)), "");
    ck_assert(l.items[0].has_position);
    ck_assert(!l.items[0].has_goal);
    ck_assert_int_eq(l.items[0].position.x, 1);
    ck_assert_uint_eq(l.items[0].ncells, 3);
    ck_assert_int_eq(l.items[0].cells[0].p.x, 2);
    ck_assert_int_eq(l.items[0].cells[0].p.y, 3);
    ck_assert_int_eq(l.items[0].cells[0].cost, 5);
    ck_assert_int_eq(l.items[0].cells[1].cost, 0); /* blocked */
    ck_assert_int_eq(l.items[0].cells[2].cost, 1); /* unblocked: cost 1 */
    ck_assert_uint_eq(l.items[0].ndoors, 1);
    ck_assert_str_eq(l.items[0].doors[0].id, "gate");
    ck_assert(!l.items[0].doors[0].open);
    pf_update_list_free(&l);
    ck_assert_ptr_null(l.items);

    expect(&e,
           parse_updates("{\"cells\":[{\"x\":1,\"y\":1,\"cost\":1,\"blocked\":true}]}", false, 8,
                         &l, &e),
           PF_EPARSE, "invalid_request", "cells[0].cost");
    expect(&e, parse_updates("{\"cells\":[{\"x\":1,\"y\":1,\"cost\":256}]}", false, 8, &l, &e),
           PF_EINVAL, "invalid_value", "cells[0].cost");
    expect(&e, parse_updates("{\"cells\":[{\"x\":1,\"cost\":2}]}", false, 8, &l, &e), PF_EPARSE,
           "invalid_request", "cells[0].y");
    expect(&e, parse_updates("{\"cells\":{}}", false, 8, &l, &e), PF_EPARSE, "invalid_request",
           "cells");
    expect(&e, parse_updates("{\"doors\":[{\"id\":\"\",\"open\":true}]}", false, 8, &l, &e),
           PF_EINVAL, "invalid_value", "doors[0].id");
    expect(&e, parse_updates("{\"doors\":[{\"id\":\"gate\"}]}", false, 8, &l, &e), PF_EPARSE,
           "invalid_request", "doors[0].open");
    expect(&e, parse_updates("{\"teleport\":[1,1]}", false, 8, &l, &e), PF_EPARSE,
           "invalid_request", "teleport");
    ck_assert_ptr_null(l.items); /* nothing is left to free after an error */
}
END_TEST

START_TEST(session_json_update_ndjson_lines) {
    pf_update_list l;
    pf_proto_error e;
    char buf[32];
    ck_assert_int_eq(parse_updates("{\"goal\":[5,5]}\n{\"position\":[2,2]}\n", true, 2, &l, &e),
                     PF_OK);
    ck_assert_uint_eq(l.n, 2);
    ck_assert(l.ndjson);
    ck_assert(l.items[0].has_goal && !l.items[0].has_position);
    ck_assert(l.items[1].has_position && !l.items[1].has_goal);
    ck_assert_int_eq(l.items[1].position.x, 2);
    ck_assert_str_eq(pf_update_prefix(&l, 1, buf, sizeof(buf)), "lines[1].");
    pf_update_list_free(&l);

    /* The field names the line. */
    expect(&e, parse_updates("{\"goal\":[5,5]}\n{\"position\":[2]}\n", true, 8, &l, &e), PF_EPARSE,
           "invalid_request", "lines[1].position");
    expect(&e, parse_updates("{\"goal\":[5,5]}\n{nope\n", true, 8, &l, &e), PF_EPARSE,
           "malformed_json", "lines[1]");
    ck_assert(strncmp(e.message, "lines[1]: ", 10) == 0);
    expect(&e, parse_updates("{\"goal\":[5,5]}\n[1]\n", true, 8, &l, &e), PF_EPARSE,
           "invalid_request", "lines[1]");
    /* Limits are checked before anything is parsed. */
    expect(&e, parse_updates("{}\n{}\n{}\n", true, 2, &l, &e), PF_ELIMIT, "limit_exceeded", "");
    ck_assert_ptr_null(l.items);
    expect(&e, parse_updates(" \n\t\n", true, 2, &l, &e), PF_EINVAL, "invalid_value", "");
}
END_TEST

START_TEST(session_json_patch) {
    pf_update u;
    pf_proto_error e;
    const char ok[] = "{\"cells\":[{\"x\":1,\"y\":0,\"cost\":0}],\"doors\":[{\"id\":\"d\","
                      "\"open\":true}]}";
    ck_assert_int_eq(pf_map_patch_parse(ok, strlen(ok), &u, &e), PF_OK);
    ck_assert_uint_eq(u.ncells, 1);
    ck_assert_uint_eq(u.ndoors, 1);
    ck_assert(u.doors[0].open);
    pf_update_free(&u);
    ck_assert_ptr_null(u.cells);
    expect(&e, pf_map_patch_parse("{}", 2, &u, &e), PF_EINVAL, "invalid_value", "");
    expect(&e, pf_map_patch_parse("{\"cells\":[]}", 12, &u, &e), PF_EINVAL, "invalid_value", "");
    /* An agent's position belongs to a session, not to the map. */
    expect(&e, pf_map_patch_parse("{\"position\":[1,1]}", 18, &u, &e), PF_EPARSE, "invalid_request",
           "position");
}
END_TEST

START_TEST(session_json_answer) {
    const pf_point path[3] = {{0, 0}, {1, 1}, {2, 1}};
    pf_session_answer a;
    pf_jsonw w;
    char *s;
    cJSON *j;
    memset(&a, 0, sizeof(a));
    a.session_id = "0123";
    a.map_id = "m";
    a.status = PF_OK;
    a.cost = 2.5;
    a.path = path;
    a.path_len = 3;
    a.position = path[0];
    a.goal = path[2];
    a.map_version = 4;
    a.ttl_s = 60;
    a.expanded = 17;
    a.updates = 2;
    a.rebase = "incremental";
    a.memory_bytes = 1000;
    pf_jsonw_init(&w, 0);
    pf_session_write_answer(&w, &a);
    s = tu_jsonw_text(&w);
    j = cJSON_Parse(s);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "session_id")->valuestring, "0123");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "map_id")->valuestring, "m");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "found")));
    ck_assert_double_eq(cJSON_GetObjectItem(j, "cost")->valuedouble, 2.5);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "path")), 3);
    ck_assert_int_eq(
        cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "path"), 2), 0)->valueint, 2);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "algorithm")->valuestring, "dstar");
    ck_assert_int_eq(cJSON_GetObjectItem(j, "map_version")->valueint, 4);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "ttl_s")->valueint, 60);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "stats"), "expanded")->valueint,
                     17);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "stats"), "rebase")->valuestring,
                     "incremental");
    cJSON_Delete(j);
    free(s);

    /* Not found: a reason, an empty path, no cost. */
    a.status = PF_EBLOCKED;
    pf_jsonw_init(&w, 0);
    pf_session_write_answer(&w, &a);
    s = tu_jsonw_text(&w);
    j = cJSON_Parse(s);
    ck_assert_ptr_nonnull(j);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "found")));
    ck_assert_str_eq(cJSON_GetObjectItem(j, "reason")->valuestring, "blocked");
    ck_assert_ptr_null(cJSON_GetObjectItem(j, "cost"));
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "path")), 0);
    cJSON_Delete(j);
    free(s);
    a.status = PF_NO_PATH;
    pf_jsonw_init(&w, 0);
    pf_session_write_answer(&w, &a);
    s = tu_jsonw_text(&w);
    ck_assert_ptr_nonnull(strstr(s, "\"reason\":\"unreachable\""));
    free(s);
}
END_TEST

/* Node ids (a waypoint graph's): a string of 1..64 bytes or an integer,
 * start and goal of one form; written back as sent. */
START_TEST(session_json_node_ids) {
    pf_session_request q;
    pf_proto_error e;
    pf_update_list l;
    pf_jsonw w;
    char big[100];
    ck_assert_int_eq(parse_create("{\"start\":\"door 1\",\"goal\":17}", 60, &q, &e), PF_OK);
    ck_assert_int_eq(q.start.dims, 1);
    ck_assert_str_eq(q.start.node, "door 1");
    ck_assert(!q.start.node_int);
    ck_assert_int_eq(q.goal.dims, 1);
    ck_assert_str_eq(q.goal.node, "17");
    ck_assert(q.goal.node_int);
    pf_jsonw_init(&w, 64);
    pf_jsonw_arr_begin(&w);
    pf_place_write(&w, &q.start);
    pf_place_write(&w, &q.goal);
    pf_jsonw_arr_end(&w);
    {
        size_t n;
        char *out = pf_jsonw_take(&w, &n);
        ck_assert_str_eq(out, "[\"door 1\",17]");
        free(out);
    }
    expect(&e, parse_create("{\"start\":\"\",\"goal\":\"b\"}", 60, &q, &e), PF_EINVAL,
           "invalid_value", "start");
    memset(big, 'x', 65);
    big[65] = 0;
    {
        char body[200];
        snprintf(body, sizeof(body), "{\"start\":\"a\",\"goal\":\"%s\"}", big);
        expect(&e, parse_create(body, 60, &q, &e), PF_EINVAL, "invalid_value", "goal");
    }
    expect(&e, parse_create("{\"start\":1.5,\"goal\":2}", 60, &q, &e), PF_EPARSE, "invalid_request",
           "start");
    expect(&e, parse_create("{\"start\":\"a\",\"goal\":[1,2]}", 60, &q, &e), PF_EPARSE,
           "invalid_request", "goal");
    expect(&e, parse_create("{\"start\":[1,2],\"goal\":\"b\"}", 60, &q, &e), PF_EPARSE,
           "invalid_request", "goal");
    ck_assert_int_eq(parse_updates("{\"position\":\"a\",\"goal\":4}", false, 8, &l, &e), PF_OK);
    ck_assert_int_eq(l.items[0].position.dims, 1);
    ck_assert_str_eq(l.items[0].goal.node, "4");
    pf_update_list_free(&l);
}
END_TEST

TU_SUITE(session_json) {
    Suite *s = suite_create("session_json");
    TCase *tc = tcase_create("session_json");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, session_json_request_fields_and_errors);
    tcase_add_test(tc, session_json_update_json_one);
    tcase_add_test(tc, session_json_update_ndjson_lines);
    tcase_add_test(tc, session_json_patch);
    tcase_add_test(tc, session_json_answer);
    tcase_add_test(tc, session_json_node_ids);
    suite_add_tcase(s, tc);
    return s;
}
