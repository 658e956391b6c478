/* test_metrics.c -- server/metrics.c: request counts by route and status,
 * latency buckets, requests in flight, search and cache counters, and the
 * Prometheus text they are written as. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "testutil.h"

static char *write_all(pf_metrics *m) {
    pf_metrics_gauges g;
    pf_jsonw w;
    memset(&g, 0, sizeof(g));
    g.workers = 3;
    g.maps = 2;
    pf_jsonw_init(&w, 0);
    pf_metrics_write(m, &g, &w);
    return tu_jsonw_text(&w);
}

START_TEST(metrics_counts_and_text) {
    pf_metrics m;
    char *t;
    pf_metrics_init(&m);
    for (int i = 0; i < 3; i++) pf_metrics_request_begin(&m);
    ck_assert_uint_eq(pf_metrics_in_flight(&m), 3);
    pf_metrics_request_end(&m, PF_ROUTE_PATH_POST, 200, 40);     /* first bucket */
    pf_metrics_request_end(&m, PF_ROUTE_PATH_POST, 422, 3000);   /* le 0.005 */
    pf_metrics_request_end(&m, PF_ROUTE_SESSION_STREAM, 101, 7); /* not a listed status */
    ck_assert_uint_eq(pf_metrics_in_flight(&m), 0);
    pf_metrics_count_search(&m, 10);
    pf_metrics_count_search(&m, 5);
    pf_metrics_count_cache(&m, true);
    pf_metrics_count_cache(&m, false);
    pf_metrics_count_cache(&m, false);
    t = write_all(&m);
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_requests_total{route=\"path_post\",status=\"200\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_requests_total{route=\"path_post\",status=\"422\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_requests_total{route=\"session_stream\",status=\"other\"} 1\n"));
    ck_assert_ptr_null(strstr(t, "route=\"healthz\"")); /* no request, no line */
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_bucket{route=\"path_post\",le=\"5e-05\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_bucket{route=\"path_post\",le=\"0.0025\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_bucket{route=\"path_post\",le=\"0.005\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_bucket{route=\"path_post\",le=\"+Inf\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_count{route=\"path_post\"} 2\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_searches_total 2\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_expanded_total 15\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_cache_hits_total 1\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_cache_misses_total 2\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_cache_hit_ratio 0.33333333333333331\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_workers 3\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_maps 2\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_requests_in_flight 0\n"));
    ck_assert_ptr_nonnull(strstr(t, "# TYPE pathd_requests_total counter\n"));
    free(t);
    /* A route outside the table counts as none. */
    pf_metrics_request_begin(&m);
    pf_metrics_request_end(&m, PF_ROUTE_COUNT, 404, 1);
    t = write_all(&m);
    ck_assert_ptr_nonnull(strstr(t, "pathd_requests_total{route=\"none\",status=\"404\"} 1\n"));
    free(t);
}
END_TEST

TU_SUITE(metrics) {
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("metrics");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, metrics_counts_and_text);
    suite_add_tcase(s, tc);
    return s;
}
