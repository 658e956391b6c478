/* metrics.h -- request counters and latency histograms, written as
 * Prometheus text for GET /metrics.
 *
 * Lock-free: relaxed atomic counters, safe from any thread. One process-wide
 * set of counters lives in a pf_metrics the server owns.
 */
#ifndef PF_SERVER_METRICS_H
#define PF_SERVER_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "jsonw.h"
#include "router.h"

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
} pf_metrics;

void pf_metrics_init(pf_metrics *m);
/* Counts one answered request. */
void pf_metrics_observe(pf_metrics *m, pf_route r, int http_code, uint64_t latency_us);

/* Extra gauges the writer prints next to the counters. */
typedef struct pf_metrics_gauges {
    int queue_depth, queue_limit, running, workers;
    uint64_t rejected;
    uint64_t cache_hits, cache_misses;
    uint64_t maps;
    uint64_t sessions, streams;
    uint64_t in_flight;
} pf_metrics_gauges;

/* Appends the Prometheus text exposition (format 0.0.4) to w's buffer. */
void pf_metrics_write(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w);

#endif
