/* metrics.c -- see metrics.h. */
#include "metrics.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "router.h"

static const int codes[PF_METRICS_NCODES] = {MHD_HTTP_OK,
                                             MHD_HTTP_CREATED,
                                             MHD_HTTP_NO_CONTENT,
                                             MHD_HTTP_BAD_REQUEST,
                                             MHD_HTTP_NOT_FOUND,
                                             MHD_HTTP_METHOD_NOT_ALLOWED,
                                             MHD_HTTP_CONTENT_TOO_LARGE,
                                             MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                                             MHD_HTTP_UNPROCESSABLE_CONTENT,
                                             MHD_HTTP_TOO_MANY_REQUESTS,
                                             MHD_HTTP_INTERNAL_SERVER_ERROR,
                                             MHD_HTTP_SERVICE_UNAVAILABLE,
                                             MHD_HTTP_GATEWAY_TIMEOUT,
                                             MHD_HTTP_CONFLICT};
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
    atomic_init(&m->cache_hits, 0);
    atomic_init(&m->cache_misses, 0);
    atomic_init(&m->in_flight, 0);
}

void pf_metrics_request_begin(pf_metrics *m) {
    atomic_fetch_add_explicit(&m->in_flight, 1, memory_order_relaxed);
}

uint64_t pf_metrics_in_flight(pf_metrics *m) {
    return atomic_load_explicit(&m->in_flight, memory_order_relaxed);
}

void pf_metrics_count_search(pf_metrics *m, uint64_t expanded) {
    atomic_fetch_add_explicit(&m->searches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->expanded, expanded, memory_order_relaxed);
}

void pf_metrics_count_cache(pf_metrics *m, bool hit) {
    atomic_fetch_add_explicit(hit ? &m->cache_hits : &m->cache_misses, 1, memory_order_relaxed);
}

void pf_metrics_request_end(pf_metrics *m, pf_route r, int http_code, uint64_t latency_us) {
    int c = PF_METRICS_NCODES, b = 0;
    if ((unsigned)r >= PF_ROUTE_COUNT) r = PF_ROUTE_NONE;
    for (int i = 0; i < PF_METRICS_NCODES; i++)
        if (codes[i] == http_code) c = i;
    while (b < PF_METRICS_NBUCKETS && latency_us > bounds_us[b]) b++;
    atomic_fetch_add_explicit(&m->requests[r][c], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->latency[r][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->latency_sum_us[r], latency_us, memory_order_relaxed);
    atomic_fetch_sub_explicit(&m->in_flight, 1, memory_order_relaxed);
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

/* One unlabelled sample with its HELP and TYPE lines. %.17g prints integer
 * counts below 2^53 exactly. */
static void scalar(pf_jsonw *w, const char *name, const char *type, const char *help,
                   double value) {
    line(w, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, value);
}

void pf_metrics_write(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    pf_metrics *mm = (pf_metrics *)m; /* atomic loads take non-const pointers in C11 */
    unsigned long long hits = LOAD(mm->cache_hits), misses = LOAD(mm->cache_misses);
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
    scalar(w, "pathd_searches_total", "counter", "Searches run on the worker pool.",
           (double)LOAD(mm->searches));
    scalar(w, "pathd_expanded_total", "counter", "Nodes expanded by searches.",
           (double)LOAD(mm->expanded));
    scalar(w, "pathd_queue_depth", "gauge", "Jobs waiting for a worker.", g->queue_depth);
    scalar(w, "pathd_queue_limit", "gauge", "Jobs that may wait before 503.", g->queue_limit);
    scalar(w, "pathd_workers_busy", "gauge", "Workers running a job.", g->running);
    scalar(w, "pathd_workers", "gauge", "Worker threads.", g->workers);
    scalar(w, "pathd_queue_rejected_total", "counter", "Jobs refused because the queue was full.",
           (double)g->rejected);
    scalar(w, "pathd_cache_hits_total", "counter", "Path cache hits (maps held now).",
           (double)LOAD(mm->cache_hits));
    scalar(w, "pathd_cache_misses_total", "counter", "Path cache misses (maps held now).",
           (double)LOAD(mm->cache_misses));
    scalar(w, "pathd_cache_hit_ratio", "gauge", "Hits / lookups of the path caches.",
           (hits + misses) ? (double)hits / (double)(hits + misses) : 0.0);
    scalar(w, "pathd_maps", "gauge", "Maps held.", (double)g->maps);
    scalar(w, "pathd_sessions", "gauge", "Sessions held (D* Lite and navmesh corridors).",
           (double)g->sessions);
    scalar(w, "pathd_streams", "gauge", "Open WebSocket session and crowd streams.",
           (double)g->streams);
    scalar(w, "pathd_crowds", "gauge", "Crowds held (navmesh maps).", (double)g->crowds);
    scalar(w, "pathd_requests_in_flight", "gauge", "Requests received and not yet answered.",
           (double)LOAD(mm->in_flight));
}
