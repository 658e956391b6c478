/* scen.h -- the in-process scenario runner behind `pathd-bench scen`.
 *
 * A pf_bench_scen is one Moving AI scenario file loaded with its map (found by
 * basename beside the .scen file, see map_io.h), the planner built for it,
 * and the queries selected from it. pf_bench_scen_run times every selected
 * query through pf_planner_search, the dispatch the server uses, and fills a
 * pf_report (report.h). The http mode selects its queries with the same
 * rule, so both modes answer the same queries.
 *
 * Not thread-safe: one runner per thread.
 */
#ifndef PF_BENCH_SCEN_H
#define PF_BENCH_SCEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "map_io.h"
#include "planner.h"
#include "report.h"
#include "search.h"

typedef struct pf_bench_scen_opts {
    /* At most this many queries, spread evenly over the file (entry
     * floor(k * n / max_queries) for k = 0..max_queries-1 of the n entries
     * kept), so a short run still covers every bucket. 0 = every entry. */
    size_t max_queries;
    /* Keep only entries whose bucket >= floor(frac * (largest bucket + 1)):
     * 0.75 keeps the longest quarter of buckets. 0 keeps all. */
    double min_bucket_frac;
    bool build_hpa; /* build the HPA* hierarchy with the planner */
    /* Time queries in thread CPU time (CLOCK_THREAD_CPUTIME_ID) instead of
     * CLOCK_MONOTONIC: on a machine shared with other work, time the thread
     * spent descheduled is then left out. */
    bool cpu_clock;
    int32_t cluster_size;       /* HPA* cluster side, 0 = default */
    size_t landmark_bytes;      /* jps landmark tables per map, 0 = none (planner.h) */
    size_t jps_table_bytes;     /* jps jump tables per map, 0 = none (planner.h) */
    int64_t subgoal_work;       /* subgoal hierarchy's work bound per cell, 0 = none */
    int64_t landmark_min_cells; /* ... on maps of at least this many cells */
} pf_bench_scen_opts;

typedef struct pf_bench_scen pf_bench_scen;

/* Reads the scenario file at `path` and its map, applies the selection in o
 * (NULL = defaults) and builds the planner. On error returns PF_EPARSE (bad
 * file, the message says which and where), PF_EINVAL (unreadable file,
 * missing map, entries that do not fit the map), PF_ENOMEM, and writes a
 * sentence to err[0..errlen). On success *out is owned by the caller, freed
 * with pf_bench_scen_destroy. */
pf_status pf_bench_scen_load(const char *path, const pf_bench_scen_opts *o, pf_bench_scen **out,
                             char *err, size_t errlen);
void pf_bench_scen_destroy(pf_bench_scen *s);

/* The map's name: the scenario's basename without ".map.scen" / ".scen". */
const char *pf_bench_scen_name(const pf_bench_scen *s);
/* The selected queries, borrowed. */
const pf_scen_entry *pf_bench_scen_entries(const pf_bench_scen *s, size_t *n);
/* The map file's bytes as read (for uploading to a server), borrowed. */
const char *pf_bench_scen_map_text(const pf_bench_scen *s, size_t *len);
const pf_planner *pf_bench_scen_planner(const pf_bench_scen *s);
/* The same, to tune (pf_planner_tune_jps) between runs. */
pf_planner *pf_bench_scen_planner_mut(pf_bench_scen *s);
/* Microseconds pf_planner_create took. */
double pf_bench_scen_build_us(const pf_bench_scen *s);

/* Whether |cost - optimal| is within the scenario tolerance
 * max(1e-3, 1e-5 x optimal): the listed lengths carry 6 significant digits
 * in some files. */
bool pf_bench_cost_matches(double cost, double optimal);

/* Runs every selected query with algorithm `a` on ctx, one untimed warm-up
 * query first, and fills r (pf_report_init is called on it). Each query is
 * timed with CLOCK_MONOTONIC (or the thread's CPU clock, see cpu_clock)
 * around pf_planner_search alone; each returned
 * path is then checked with pf_path_validate (not timed).
 * Returns PF_OK when the run completed (mismatches are in r, not in the
 * status), PF_EUNSUPPORTED when the planner cannot run `a` (r->note says so),
 * PF_ENOMEM. The sorted per-query times of the run, in microseconds, stay
 * readable with pf_bench_scen_samples until the next run. */
pf_status pf_bench_scen_run(pf_bench_scen *s, pf_search_ctx *ctx, pf_algorithm a, pf_report *r);
const double *pf_bench_scen_samples(const pf_bench_scen *s, size_t *n);

/* Runs algorithms a[0] and a[1] side by side over the selected queries:
 * alternating blocks of `block` queries (0 = 1), and which of the two goes
 * first alternates too, so a noisy machine and the caches treat both
 * alike. Each block is preceded by tune(s, k, ud) for the algorithm k about
 * to run (may be NULL), which may retune the planner
 * (pf_bench_scen_planner_mut). Fills r[0] and r[1] as pf_bench_scen_run
 * does (seconds: the wall time of each one's blocks); their samples and
 * suboptimalities are slots 0 and 1 of pf_bench_scen_samples_of. Statuses
 * as pf_bench_scen_run. */
pf_status pf_bench_scen_run_pair(pf_bench_scen *s, pf_search_ctx *ctx, const pf_algorithm a[2],
                                 void (*tune)(pf_bench_scen *, int, void *), void *ud, size_t block,
                                 pf_report r[2]);
/* One query of the last run, in the order they ran (the file's order). */
typedef struct pf_bench_query {
    size_t id; /* its entry's index in the .scen file, from 0 */
    const pf_scen_entry *e;
    pf_status status;  /* pf_planner_search's */
    pf_algorithm ran;  /* what answered (auto's pick, jps's fallback) */
    uint64_t expanded; /* pf_result.expanded */
    double us;         /* its time, as the run's clock measured it */
    double cost;       /* the answer's cost, NAN without a path */
} pf_bench_query;

/* Slot k (0 or 1) of the last run, unsorted, one per selected query (an
 * error's time is NAN). */
const pf_bench_query *pf_bench_scen_queries_of(const pf_bench_scen *s, int k, size_t *n);

/* Slot k (0 or 1) of the last run: pf_bench_scen_run fills slot 0. */
const double *pf_bench_scen_samples_of(const pf_bench_scen *s, int k, size_t *n);
const double *pf_bench_scen_subopts_of(const pf_bench_scen *s, int k, size_t *n);
/* cost / optimum - 1 of each query of the last run that found a path,
 * sorted; same lifetime as the samples. */
const double *pf_bench_scen_subopts(const pf_bench_scen *s, size_t *n);

#endif
