/* metrics.h -- what /metrics tells: requests by route and status, their
 * latency, the time jobs wait for a worker apart from the time searches
 * take, searches by algorithm and outcome, map builds and repairs, D* Lite
 * session plans, repairs and rebases, WebSocket upgrades and messages,
 * memory by kind against the budget, process figures and the build; written
 * as Prometheus text (exposition format 0.0.4) for GET /metrics.
 *
 * Counters and histograms only, no derived ratios: a hit ratio or a mean
 * is PromQL's job (rate(pathd_cache_hits_total[5m]) / ...), and a ratio
 * computed here could not be aggregated across instances. docs/operations.md (Metrics) lists
 * every family.
 *
 * Lock-free: relaxed atomic counters, safe from any thread. One
 * process-wide set lives in a pf_metrics the server owns and hands to the
 * modules that count. Nothing here allocates.
 */
#ifndef PF_SERVER_METRICS_H
#define PF_SERVER_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "jsonw.h"
#include "kind.h"
#include "memory.h"
#include "pool.h"
#include "routes.h"
#include "search.h"
#include "status.h"

/* Histogram buckets, upper bounds in microseconds from 50 us to 60 s (one
 * set for every duration: requests, queue waits, searches, builds); a last
 * +Inf bucket follows. */
#define PF_METRICS_NBUCKETS 20
/* The HTTP codes counted one by one (101 included); others count as
 * "other". */
#define PF_METRICS_NCODES 19

/* A duration histogram: per-bucket counts (not cumulative; the writer sums
 * them) and the sum of the observations in microseconds. */
typedef struct pf_metrics_hist {
    atomic_uint_fast64_t bucket[PF_METRICS_NBUCKETS + 1];
    atomic_uint_fast64_t sum_us;
} pf_metrics_hist;

/* How a search ended (the outcome label). */
typedef enum pf_metrics_outcome {
    PF_OUTCOME_FOUND = 0,   /* a path */
    PF_OUTCOME_UNREACHABLE, /* no path exists */
    PF_OUTCOME_BUDGET,      /* max_expanded ran out */
    PF_OUTCOME_DEADLINE,    /* the request's deadline stopped it */
    PF_OUTCOME_ERROR,       /* anything else: unsupported, bad heuristic, no memory */
    PF_OUTCOME_COUNT
} pf_metrics_outcome;

/* The outcome of a search that returned st. */
pf_metrics_outcome pf_metrics_outcome_of(pf_status st);

/* A D* Lite session plan (the kind label). */
typedef enum pf_metrics_plan {
    PF_PLAN_INITIAL = 0, /* a fresh search: new session, or rebuilt */
    PF_PLAN_REPAIR,      /* the existing search repaired after updates or a rebase */
    PF_PLAN_UNCHANGED,   /* nothing changed since the last plan (a read) */
    PF_PLAN_COUNT
} pf_metrics_plan;

/* WebSocket message types (the type label). */
typedef enum pf_metrics_ws {
    PF_WS_MSG_TEXT = 0,
    PF_WS_MSG_BINARY,
    PF_WS_MSG_PING,
    PF_WS_MSG_PONG,
    PF_WS_MSG_CLOSE,
    PF_WS_MSG_COUNT
} pf_metrics_ws;

/* Memory kinds (the kind label of pathd_memory_bytes): memory.h's
 * pf_mem_kind, what the budget (--max-memory) counts. */

/* The by-algorithm families have a slot per algorithm of every kind of map
 * (kind.h's pf_kind_slot: a grid's are core's pf_algorithm, a navmesh's
 * follow), labelled by pf_kinds_algorithm_label. */
#define PF_METRICS_ALGOS PF_KINDS_ALGORITHMS_MAX

/* The pool's job kinds as labels: PF_JOB_SEARCH, PF_JOB_BUILD. */
#define PF_METRICS_NJOBS 2

typedef struct pf_metrics {
    atomic_uint_fast64_t requests[PF_ROUTE_COUNT][PF_METRICS_NCODES + 1];
    pf_metrics_hist latency[PF_ROUTE_COUNT];
    atomic_uint_fast64_t in_flight;
    pf_metrics_hist queue_wait[PF_METRICS_NJOBS];
    /* By algorithm slot (kind.h). */
    atomic_uint_fast64_t searches[PF_METRICS_ALGOS][PF_OUTCOME_COUNT];
    pf_metrics_hist search_time[PF_METRICS_ALGOS];
    atomic_uint_fast64_t expanded[PF_METRICS_ALGOS];
    atomic_uint_fast64_t cache_hits, cache_misses;
    pf_metrics_hist map_build, map_repair;
    atomic_uint_fast64_t plans[PF_PLAN_COUNT][PF_OUTCOME_COUNT];
    pf_metrics_hist plan_time[PF_PLAN_COUNT];
    atomic_uint_fast64_t rebases_incremental, rebases_rebuilt;
    atomic_uint_fast64_t ws_upgrades;
    atomic_uint_fast64_t ws_messages[2][PF_WS_MSG_COUNT]; /* [0] received, [1] sent */
    atomic_uint_fast64_t ws_bytes[2];
} pf_metrics;

void pf_metrics_init(pf_metrics *m);
/* A request arrived (counts it in flight). */
void pf_metrics_request_begin(pf_metrics *m);
/* The request begun earlier is done: counts it for route r with the status
 * it was answered with (0: none was sent; 101 for a WebSocket upgrade) and
 * its latency. */
void pf_metrics_request_end(pf_metrics *m, pf_route r, int http_code, uint64_t latency_us);
/* Requests begun and not yet done. */
uint64_t pf_metrics_in_flight(pf_metrics *m);

/* A job of `kind` waited wait_us from its submission until a worker took
 * it. */
void pf_metrics_observe_queue_wait(pf_metrics *m, pf_job_kind kind, uint64_t wait_us);
/* One path search of the algorithm in slot `slot` (kind.h's
 * pf_kind_slot: the one asked for, or the map's default; a grid's slot is
 * its pf_algorithm) ran on a worker, returned st, expanded `expanded` nodes
 * and took us microseconds of search (queue time excluded). */
void pf_metrics_count_search(pf_metrics *m, int slot, pf_status st, uint64_t expanded, uint64_t us);
/* The same with its outcome said directly (a navmesh's: _UNREACHABLE for
 * a partial path, _BUDGET when the node pool ran out). */
void pf_metrics_count_search_outcome(pf_metrics *m, int slot, pf_metrics_outcome outcome,
                                     uint64_t expanded, uint64_t us);
/* One lookup of a path cache: a hit or a miss. */
void pf_metrics_count_cache(pf_metrics *m, bool hit);
/* A map version was built from an upload (parse, preprocessing, HPA*) in
 * us microseconds. */
void pf_metrics_observe_map_build(pf_metrics *m, uint64_t us);
/* A PATCH made the next version (grid copy, jps tables, HPA* repair) in us
 * microseconds. */
void pf_metrics_observe_map_repair(pf_metrics *m, uint64_t us);
/* A D* Lite session planned: its kind, status (PF_OK, PF_NO_PATH,
 * PF_EBLOCKED counts as unreachable, PF_ENOMEM as error), expanded nodes
 * (counted under algorithm dstar) and duration. */
void pf_metrics_count_plan(pf_metrics *m, pf_metrics_plan kind, pf_status st, uint64_t expanded,
                           uint64_t us);
/* A session was brought to a newer map version: incrementally (with the
 * change log) or rebuilt. */
void pf_metrics_count_rebase(pf_metrics *m, bool incremental);
/* A WebSocket upgrade's socket was handed to the stream hub. */
void pf_metrics_count_ws_upgrade(pf_metrics *m);
/* A WebSocket message (frame, for control frames) of `len` payload bytes
 * was received (sent false) or sent. ws_op is the RFC 6455 opcode. */
void pf_metrics_count_ws_message(pf_metrics *m, bool sent, int ws_op, uint64_t len);

/* The state the writer reads from the server's parts at scrape time. */
typedef struct pf_metrics_gauges {
    int queue_depth, queue_limit, running, workers;
    uint64_t rejected;
    uint64_t expired, requeued; /* pool: deadline passed in the queue; slices given back */
    uint64_t maps;
    uint64_t sessions, streams, crowds;
    uint64_t crowd_steps; /* steps every crowd took since the start */
    uint64_t connections, closed_slow_request, closed_idle; /* conns.h */
    uint64_t stream_closes_slow_reader, stream_closes_idle, stream_closes_session_gone;
    uint64_t memory_refused;       /* charges the budget refused */
    uint64_t memory[PF_MEM_COUNT]; /* bytes by kind */
    uint64_t memory_budget;        /* bytes; 0: no budget */
    bool loading;                  /* the data directory's maps still loading */
    uint64_t store_quarantined, store_skipped, store_temp_removed; /* what the start found */
    /* --store (store_guard.h): shared is false without it. */
    bool shared, shared_writes_ok, shared_durable;
    uint64_t shared_losses, shared_restored, shared_refused_not_durable, shared_refused_unavailable,
        shared_unknown, shared_unconfirmed;
    uint64_t tokens_read, tokens_write; /* tokens in force */
} pf_metrics_gauges;

/* Appends the Prometheus text exposition (format 0.0.4) to w's buffer: m,
 * g, the process figures read from /proc/self (resident and virtual
 * memory, CPU time, open and maximum file descriptors, threads, start
 * time; a figure that cannot be read is left out) and pathd_build_info. */
void pf_metrics_write(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w);

#endif
