/* metrics.c -- see metrics.h. */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const int codes[PF_METRICS_NCODES] = {200, 201, 204, 400, 404, 405, 413,
                                             415, 422, 429, 500, 503, 504, 409};
static const uint64_t bounds_us[PF_METRICS_NBUCKETS] = {
    50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000, 5000000};

void pf_metrics_init(pf_metrics *m) {
    for (int r = 0; r < PF_ROUTE_COUNT; r++) {
        for (int c = 0; c <= PF_METRICS_NCODES; c++) atomic_init(&m->requests[r][c], 0);
        for (int b = 0; b <= PF_METRICS_NBUCKETS; b++) atomic_init(&m->latency[r][b], 0);
        atomic_init(&m->latency_sum_us[r], 0);
    }
    atomic_init(&m->searches, 0);
    atomic_init(&m->expanded, 0);
}

void pf_metrics_observe(pf_metrics *m, pf_route r, int http_code, uint64_t latency_us) {
    int c = PF_METRICS_NCODES, b = 0;
    if ((unsigned)r >= PF_ROUTE_COUNT) r = PF_ROUTE_NONE;
    for (int i = 0; i < PF_METRICS_NCODES; i++)
        if (codes[i] == http_code) c = i;
    while (b < PF_METRICS_NBUCKETS && latency_us > bounds_us[b]) b++;
    atomic_fetch_add_explicit(&m->requests[r][c], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->latency[r][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->latency_sum_us[r], latency_us, memory_order_relaxed);
}

static void line(pf_jsonw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(pf_jsonw *w, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0) return;
    pf_jsonw_append(w, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

#define LOAD(x) ((unsigned long long)atomic_load_explicit(&(x), memory_order_relaxed))

void pf_metrics_write(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    pf_metrics *mm = (pf_metrics *)m; /* atomic loads take non-const pointers in C11 */
    line(w, "# HELP pathd_requests_total HTTP requests answered, by route and status.\n"
            "# TYPE pathd_requests_total counter\n");
    for (int r = 0; r < PF_ROUTE_COUNT; r++)
        for (int c = 0; c <= PF_METRICS_NCODES; c++) {
            unsigned long long v = LOAD(mm->requests[r][c]);
            if (!v) continue;
            if (c < PF_METRICS_NCODES)
                line(w, "pathd_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                     pf_route_name((pf_route)r), codes[c], v);
            else
                line(w, "pathd_requests_total{route=\"%s\",status=\"other\"} %llu\n",
                     pf_route_name((pf_route)r), v);
        }
    line(w, "# HELP pathd_request_duration_seconds Time from the request's arrival to its "
            "answer.\n# TYPE pathd_request_duration_seconds histogram\n");
    for (int r = 0; r < PF_ROUTE_COUNT; r++) {
        unsigned long long cum = 0, total = 0;
        for (int b = 0; b <= PF_METRICS_NBUCKETS; b++) total += LOAD(mm->latency[r][b]);
        if (!total) continue;
        for (int b = 0; b <= PF_METRICS_NBUCKETS; b++) {
            cum += LOAD(mm->latency[r][b]);
            if (b < PF_METRICS_NBUCKETS)
                line(w, "pathd_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                     pf_route_name((pf_route)r), (double)bounds_us[b] / 1e6, cum);
            else
                line(w, "pathd_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
                     pf_route_name((pf_route)r), cum);
        }
        line(w, "pathd_request_duration_seconds_sum{route=\"%s\"} %.6f\n",
             pf_route_name((pf_route)r), (double)LOAD(mm->latency_sum_us[r]) / 1e6);
        line(w, "pathd_request_duration_seconds_count{route=\"%s\"} %llu\n",
             pf_route_name((pf_route)r), total);
    }
    line(w, "# HELP pathd_searches_total Searches run on the worker pool.\n"
            "# TYPE pathd_searches_total counter\npathd_searches_total %llu\n",
         LOAD(mm->searches));
    line(w, "# HELP pathd_expanded_total Nodes expanded by searches.\n"
            "# TYPE pathd_expanded_total counter\npathd_expanded_total %llu\n",
         LOAD(mm->expanded));
    line(w, "# HELP pathd_queue_depth Jobs waiting for a worker.\n"
            "# TYPE pathd_queue_depth gauge\npathd_queue_depth %d\n", g->queue_depth);
    line(w, "# HELP pathd_queue_limit Jobs that may wait before 503.\n"
            "# TYPE pathd_queue_limit gauge\npathd_queue_limit %d\n", g->queue_limit);
    line(w, "# HELP pathd_workers_busy Workers running a job.\n"
            "# TYPE pathd_workers_busy gauge\npathd_workers_busy %d\n", g->running);
    line(w, "# HELP pathd_workers Worker threads.\n"
            "# TYPE pathd_workers gauge\npathd_workers %d\n", g->workers);
    line(w, "# HELP pathd_queue_rejected_total Jobs refused because the queue was full.\n"
            "# TYPE pathd_queue_rejected_total counter\npathd_queue_rejected_total %llu\n",
         (unsigned long long)g->rejected);
    line(w, "# HELP pathd_cache_hits_total Path cache hits (maps held now).\n"
            "# TYPE pathd_cache_hits_total counter\npathd_cache_hits_total %llu\n",
         (unsigned long long)g->cache_hits);
    line(w, "# HELP pathd_cache_misses_total Path cache misses (maps held now).\n"
            "# TYPE pathd_cache_misses_total counter\npathd_cache_misses_total %llu\n",
         (unsigned long long)g->cache_misses);
    line(w, "# HELP pathd_cache_hit_ratio Hits / lookups of the path caches.\n"
            "# TYPE pathd_cache_hit_ratio gauge\npathd_cache_hit_ratio %g\n",
         g->cache_hits + g->cache_misses
             ? (double)g->cache_hits / (double)(g->cache_hits + g->cache_misses)
             : 0.0);
    line(w, "# HELP pathd_maps Maps held.\n# TYPE pathd_maps gauge\npathd_maps %llu\n",
         (unsigned long long)g->maps);
    line(w, "# HELP pathd_sessions D* Lite sessions held.\n# TYPE pathd_sessions gauge\n"
            "pathd_sessions %llu\n",
         (unsigned long long)g->sessions);
    line(w, "# HELP pathd_streams Open WebSocket session streams.\n"
            "# TYPE pathd_streams gauge\npathd_streams %llu\n",
         (unsigned long long)g->streams);
    line(w, "# HELP pathd_requests_in_flight Requests received and not yet answered.\n"
            "# TYPE pathd_requests_in_flight gauge\npathd_requests_in_flight %llu\n",
         (unsigned long long)g->in_flight);
}
