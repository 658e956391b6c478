/* test_table_json.c -- table requests (limits, defaults, errors naming
 * their field) and the answer's layout. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table_json.h"
#include "testutil.h"

static const pf_table_limits lim = {6, 4, 3};

static pf_status parse(const char *s, pf_table_request *r, pf_proto_error *e) {
    return pf_table_request_parse(s, strlen(s), &lim, r, e);
}

START_TEST(table_json_request_fields_and_errors) {
    pf_table_request r;
    pf_proto_error e;
    ck_assert_int_eq(parse("{\"sources\":[[1,2],[3,4]],\"targets\":[[5,6],[7,8],[9,9]],"
                           "\"agent_size\":3,\"deadline_ms\":9}",
                           &r, &e),
                     PF_OK);
    ck_assert(r.nsources == 2 && r.ntargets == 3 && r.targets[2].x == 9 && r.agent_size == 3);
    ck_assert(!r.paths && r.deadline_ms == 9);
    pf_table_request_clear(&r);
    ck_assert_int_eq(parse("{\"sources\":[[1,2],[3,4]],\"paths\":true}", &r, &e), PF_OK);
    ck_assert_ptr_eq(r.targets, r.sources); /* targets default to the sources */
    ck_assert(r.ntargets == 2 && r.paths);
    pf_table_request_clear(&r);
    ck_assert_ptr_null(r.sources);

    static const struct {
        const char *body;
        pf_status st;
        const char *field;
    } bad[] = {
        {"{}", PF_EPARSE, "sources"},
        {"{\"sources\":[]}", PF_EINVAL, "sources"},
        {"{\"sources\":[[1,1]],\"targets\":[]}", PF_EINVAL, "targets"},
        {"{\"sources\":[[1,1],[2]]}", PF_EPARSE, "sources[1]"},
        {"{\"sources\":[[1,1]],\"targets\":[[1,1],[1,4e10]]}", PF_ERANGE, "targets[1]"},
        {"{\"sources\":[[1,1],[1,1],[1,1]],\"targets\":[[1,1],[1,1],[1,1]]}", PF_ELIMIT, "targets"},
        {"{\"sources\":[[1,1],[1,1],[1,1]]}", PF_ELIMIT, "sources"},
        {"{\"sources\":[[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1]],\"targets\":[[0,0]]}", PF_ELIMIT,
         "sources"},
        {"{\"sources\":[[1,1],[1,1],[1,1]],\"targets\":[[1,1],[2,2]],\"paths\":true}", PF_ELIMIT,
         "paths"},
        {"{\"sources\":[[1,1]],\"agent_size\":4}", PF_EINVAL, "agent_size"},
        {"{\"sources\":[[1,1]],\"paths\":\"y\"}", PF_EPARSE, "paths"},
        {"{\"sources\":[[1,1]],\"sourcez\":1}", PF_EPARSE, "sourcez"},
        {"{\"sources\":{}}", PF_EPARSE, "sources"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(parse(bad[i].body, &r, &e) == bad[i].st, "%s: status %d (%s)", bad[i].body,
                      e.status, e.message);
        ck_assert_msg(strcmp(e.field, bad[i].field) == 0, "%s: field '%s'", bad[i].body, e.field);
        ck_assert_ptr_null(r.sources);
    }
}
END_TEST

START_TEST(table_json_answer_layout) {
    double costs[6] = {0, 1.5, INFINITY, 2, 0, 3.25};
    pf_point p[2] = {{0, 0}, {1, 0}};
    pf_jsonw pw, w;
    pf_jsonw_init(&pw, 0);
    pf_jsonw_arr_begin(&pw);
    pf_jsonw_arr_begin(&pw);
    pf_table_write_path(&pw, p, 2);
    pf_table_write_path(&pw, NULL, 0);
    pf_jsonw_arr_end(&pw);
    pf_jsonw_arr_end(&pw);
    pf_table_answer a = {costs, 2, 3, pw.buf, pw.len, 2, 7, 2, 40, 5, 6, true};
    pf_jsonw_init(&w, 0);
    pf_table_write_answer(&w, &a);
    size_t n;
    char *s = pf_jsonw_take(&w, &n);
    ck_assert_str_eq(
        s, "{\"costs\":[[0,1.5,null],[2,0,3.25]],\"paths\":[[[[0,0],[1,0]],null]],"
           "\"agent_size\":2,\"map_version\":7,\"stats\":{\"searches\":2,"
           "\"expanded\":40,\"unreachable\":6,\"direction\":\"backward\",\"time_us\":5}}");
    free(s);
    pf_jsonw_free(&pw);
}
END_TEST

TU_SUITE(table_json) {
    Suite *s = suite_create("table_json");
    TCase *tc = tcase_create("proto");
    tcase_add_test(tc, table_json_request_fields_and_errors);
    tcase_add_test(tc, table_json_answer_layout);
    suite_add_tcase(s, tc);
    return s;
}
