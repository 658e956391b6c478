/* test_routes_ops.c -- server/routes_ops.c over HTTP: /healthz, /readyz, /v1/info, /metrics, the
 * viewer page. */
#include <check.h>
#include <string.h>

#include "itest.h"
#include "testutil.h"

START_TEST(routes_ops_health_info_metrics) {
    hc_server s = it_start(ARGS("--workers", "2"));
    hc_resp r = it_req(&s, "GET", "/healthz", NULL, NULL);
    cJSON *j;
    char buf[64];
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(hc_header(&r, "Content-Type", buf, sizeof(buf)), "application/json");
    j = it_json(&r);
    ck_assert_str_eq(it_str(j, "status"), "ok");
    cJSON_Delete(j);
    hc_free(&r);

    r = it_req(&s, "GET", "/readyz", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    hc_free(&r);

    r = it_req(&s, "GET", "/v1/info", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert_str_eq(it_str(j, "api"), "v1");
    /* Every limit of the issue is reported. */
    ck_assert_int_eq((int)it_num(j, "limits.workers"), 2);
    ck_assert(it_num(j, "limits.max_body_bytes") > 0);
    ck_assert(it_num(j, "limits.max_map_cells") > 0);
    ck_assert(it_num(j, "limits.max_batch") > 0);
    ck_assert(it_num(j, "limits.max_connections") > 0);
    ck_assert(it_get(j, "limits.max_connections_per_ip") != NULL);
    ck_assert(it_num(j, "limits.connection_timeout_s") > 0);
    ck_assert(it_num(j, "limits.queue_limit") > 0);
    ck_assert(it_num(j, "limits.default_deadline_ms") > 0);
    ck_assert(it_get(j, "cache.hit_ratio") != NULL);
    ck_assert_int_eq((int)it_num(j, "pool.workers"), 2);
    cJSON_Delete(j);
    hc_free(&r);

    r = it_req(&s, "HEAD", "/healthz", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    hc_free(&r);

    r = it_req(&s, "GET", "/metrics", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "pathd_requests_total{route=\"healthz\",status=\"200\"}"));
    ck_assert_ptr_nonnull(strstr(r.body, "pathd_queue_depth"));
    ck_assert_ptr_nonnull(strstr(r.body, "pathd_cache_hits_total"));
    ck_assert_ptr_nonnull(strstr(r.body, "pathd_request_duration_seconds_bucket"));
    hc_free(&r);
    it_stop(&s);
}
END_TEST

/* GET /: the debug viewer page (server/viewer.html). */
START_TEST(routes_ops_viewer_page) {
    hc_server s = it_start(NULL);
    hc_resp r = it_req(&s, "GET", "/", NULL, NULL);
    char buf[64];

    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(hc_header(&r, "Content-Type", buf, sizeof(buf)), "text/html; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(r.body, "<canvas"));
    /* The page only talks to routes that exist. */
    ck_assert_ptr_nonnull(strstr(r.body, "/cells"));
    hc_free(&r);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_ops) {
    Suite *s = suite_create("routes_ops");
    TCase *tc = tcase_create("routes_ops");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_ops_health_info_metrics);
    tcase_add_test(tc, routes_ops_viewer_page);
    suite_add_tcase(s, tc);
    return s;
}
