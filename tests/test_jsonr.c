/* test_jsonr.c -- proto/jsonr.c: strict JSON reading. */
#include <check.h>
#include <cjson/cJSON.h>
#include <string.h>

#include "jsonr.h"
#include "path_json.h"
#include "testutil.h"

START_TEST(jsonr_requires_end_of_input) {
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

START_TEST(jsonr_numbers_finite_integral_in_range) {
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

TU_SUITE(jsonr) {
    Suite *s = suite_create("jsonr");
    TCase *tc = tcase_create("jsonr");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, jsonr_requires_end_of_input);
    tcase_add_test(tc, jsonr_numbers_finite_integral_in_range);
    suite_add_tcase(s, tc);
    return s;
}
