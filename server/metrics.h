/* metrics.h -- request counters and latency histograms, search and cache
 * counters, the requests in flight; written as Prometheus text for GET
 * /metrics.
 *
 * Lock-free: relaxed atomic counters, safe from any thread. One process-wide
 * set of counters lives in a pf_metrics the server owns and hands to the
 * modules that count.
 */
#ifndef PF_SERVER_METRICS_H
#define PF_SERVER_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "jsonw.h"
#include "routes.h"

/* Latency buckets, upper bounds in microseconds; a last +Inf bucket follows. */
#define PF_METRICS_NBUCKETS 14
/* The HTTP codes counted one by one; others count as "other". */
#define PF_METRICS_NCODES 14

typedef struct pf_metrics {
    atomic_uint_fast64_t requests[PF_ROUTE_COUNT][PF_METRICS_NCODES + 1];
    atomic_uint_fast64_t latency[PF_ROUTE_COUNT][PF_METRICS_NBUCKETS + 1];
    atomic_uint_fast64_t latency_sum_us[PF_ROUTE_COUNT];
    atomic_uint_fast64_t searches;
    atomic_uint_fast64_t expanded;
    atomic_uint_fast64_t cache_hits, cache_misses;
    atomic_uint_fast64_t in_flight;
} pf_metrics;

void pf_metrics_init(pf_metrics *m);
/* A request arrived (counts it in flight). */
void pf_metrics_request_begin(pf_metrics *m);
/* The request begun earlier is done: counts it for route r with the status
 * it was answered with (0: none was sent) and its latency. */
void pf_metrics_request_end(pf_metrics *m, pf_route r, int http_code, uint64_t latency_us);
/* Requests begun and not yet done. */
uint64_t pf_metrics_in_flight(pf_metrics *m);
/* One search ran on the pool and expanded `expanded` nodes. */
void pf_metrics_count_search(pf_metrics *m, uint64_t expanded);
/* One lookup of a path cache: a hit or a miss. */
void pf_metrics_count_cache(pf_metrics *m, bool hit);

/* Extra gauges the writer prints next to the counters. */
typedef struct pf_metrics_gauges {
    int queue_depth, queue_limit, running, workers;
    uint64_t rejected;
    uint64_t maps;
    uint64_t sessions, streams, crowds;
} pf_metrics_gauges;

/* Appends the Prometheus text exposition (format 0.0.4) to w's buffer. */
void pf_metrics_write(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w);

#endif
