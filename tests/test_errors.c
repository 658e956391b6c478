/* test_errors.c -- proto/errors.c: the error table and error bodies. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

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

/* The table: codes unique and snake_case, statuses client or server
 * errors, every error with a sentence; outside it, INTERNAL. */
START_TEST(errors_table_is_whole) {
    for (int a = PF_ERR_NONE + 1; a < PF_ERR_COUNT; a++) {
        const char *code = pf_error_code((pf_error)a), *s = pf_error_sentence((pf_error)a);
        int http = pf_error_http_status((pf_error)a);
        ck_assert_msg(http >= 400 && http <= 599, "%s: HTTP %d", code, http);
        ck_assert(strlen(code) > 0 && strlen(s) > 0);
        ck_assert_msg(s[0] >= 'A' && s[0] <= 'Z', "%s: sentence '%s'", code, s);
        for (const char *c = code; *c; c++) ck_assert((*c >= 'a' && *c <= 'z') || *c == '_');
        for (int b = PF_ERR_NONE + 1; b < a; b++)
            ck_assert_str_ne(pf_error_code((pf_error)b), code);
    }
    ck_assert_str_eq(pf_error_code(PF_ERR_NONE), "internal");
    ck_assert_str_eq(pf_error_code(PF_ERR_COUNT), "internal");
    ck_assert_int_eq(pf_error_http_status((pf_error)-1), 500);
    ck_assert_int_eq(pf_error_http_status(PF_ERR_MAP_NOT_FOUND), 404);
    ck_assert_str_eq(pf_error_code(PF_ERR_MAP_NOT_FOUND), "map_not_found");
}
END_TEST

/* A core status answers the HTTP status it always has (this was
 * server/http_status.c's mapping before the table). */
START_TEST(errors_for_status_keeps_http_statuses) {
    static const struct {
        pf_status st;
        const char *code;
        int http;
    } want[] = {
        {PF_EPARSE, "invalid_request", 400},
        {PF_EINVAL, "invalid_value", 422},
        {PF_ERANGE, "off_map", 422},
        {PF_EBLOCKED, "blocked", 422},
        {PF_EUNSUPPORTED, "unsupported", 422},
        {PF_ELIMIT, "limit_exceeded", 413},
        {PF_ECANCELED, "deadline_exceeded", 504},
        {PF_ENOMEM, "out_of_memory", 503},
        {PF_EIO, "storage_failed", 500},
    };
    pf_proto_error e;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        pf_error err = pf_error_for_status(want[i].st);
        ck_assert_str_eq(pf_error_code(err), want[i].code);
        ck_assert_int_eq(pf_error_http_status(err), want[i].http);
        ck_assert_int_eq(pf_proto_error_set(&e, want[i].st, PF_ERR_NONE, NULL, "x"), want[i].st);
        ck_assert_int_eq(e.code, err);
    }
    /* A default sentence stands in for a missing message. */
    {
        pf_jsonw w;
        char *s;
        pf_jsonw_init(&w, 0);
        pf_proto_write_error(&w, PF_ERR_NO_MEMORY, NULL, "");
        s = tu_jsonw_text(&w);
        ck_assert_str_eq(s, "{\"error\":{\"code\":\"out_of_memory\",\"message\":\"Out of "
                            "memory.\"}}");
        free(s);
    }
}
END_TEST

/* proto/openapi.yaml's ErrorObject.code enum lists exactly the table's
 * codes. */
START_TEST(errors_openapi_lists_every_code) {
    size_t len;
    char *y = tu_read_file("proto/openapi.yaml", &len), *a, *b;
    ck_assert_msg(y != NULL, "proto/openapi.yaml not readable (run from the repository)");
    a = strstr(y, "ErrorObject:");
    ck_assert_ptr_nonnull(a);
    a = strstr(a, "enum: [");
    ck_assert_ptr_nonnull(a);
    a += strlen("enum: [");
    b = strchr(a, ']');
    ck_assert_ptr_nonnull(b);
    *b = '\0';
    for (int e = PF_ERR_NONE + 1; e < PF_ERR_COUNT; e++) {
        const char *code = pf_error_code((pf_error)e);
        const char *p = a;
        bool found = false;
        while ((p = strstr(p, code))) {
            char before = p == a ? ' ' : p[-1], after = p[strlen(code)];
            if ((before == ' ' || before == '\n' || before == ',') &&
                (after == ',' || after == '\0' || after == ' ' || after == '\n'))
                found = true;
            p += strlen(code);
        }
        ck_assert_msg(found, "openapi.yaml's error codes miss %s", code);
    }
    {
        int n = 1;
        for (const char *p = a; *p; p++) n += *p == ',';
        ck_assert_int_eq(n, PF_ERR_COUNT - 1);
    }
    free(y);
}
END_TEST

TU_SUITE(errors) {
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("errors");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, errors_body);
    tcase_add_test(tc, errors_table_is_whole);
    tcase_add_test(tc, errors_for_status_keeps_http_statuses);
    tcase_add_test(tc, errors_openapi_lists_every_code);
    suite_add_tcase(s, tc);
    return s;
}
