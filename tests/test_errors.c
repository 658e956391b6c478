/* test_errors.c -- proto/errors.c: the error table and error bodies. */
#include <check.h>
#include <stdlib.h>

#include "errors.h"
#include "path_json.h"
#include "testutil.h"

START_TEST(errors_body) {
    pf_jsonw w;
    pf_proto_error e;
    char *s;
    pf_proto_error_set(&e, PF_EBLOCKED, PF_ERR_NONE, "goal", "Goal %d is blocked.", 3);
    ck_assert_str_eq(pf_error_code(e.code), "blocked");
    pf_jsonw_init(&w, 0);
    pf_proto_write_perror(&w, &e);
    s = tu_jsonw_text(&w);
    ck_assert_str_eq(s, "{\"error\":{\"code\":\"blocked\",\"message\":\"Goal 3 is blocked.\","
                        "\"field\":\"goal\"}}");
    free(s);
    pf_jsonw_init(&w, 0);
    pf_proto_write_error(&w, PF_ERR_NOT_FOUND, "No.", NULL);
    s = tu_jsonw_text(&w);
    ck_assert_str_eq(s, "{\"error\":{\"code\":\"not_found\",\"message\":\"No.\"}}");
    free(s);
}
END_TEST

TU_SUITE(errors) {
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("errors");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, errors_body);
    suite_add_tcase(s, tc);
    return s;
}
