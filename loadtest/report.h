/* report.h -- the one report both benchmark modes print.
 *
 * `pathd-bench scen` (in-process, against core) and `pathd-bench http`
 * (against a server) fill the same pf_report, so a run of each over the same
 * scenarios prints the same fields and the two can be compared line by line.
 * A field a mode cannot measure is NaN (doubles) and printed as "-" in the
 * table and null in JSON.
 *
 * Nothing here is thread-safe; reports are printed from the main thread.
 */
#ifndef PF_REPORT_H
#define PF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Errors counted by kind: HTTP status or transport failure in http mode, the
 * core status name in scen mode. */
#define PF_REPORT_ERROR_KINDS 16

typedef struct pf_report_error {
    char kind[32]; /* "503", "connect", "timeout", "no path", ... */
    uint64_t count;
} pf_report_error;

typedef struct pf_report {
    char map[128];      /* the map's name (scenario basename without .map.scen) */
    char algorithm[32]; /* the algorithm that answered */
    int32_t map_w, map_h;

    /* Correctness against the scenario file. A mismatch is a query whose
     * cost differs from the listed optimum by more than
     * max(1e-3, 1e-5 x optimum), or that found no path; invalid counts
     * answers that are wrong for any algorithm: a path the map does not
     * allow, a cost that is not the path's cost, or a cost below the optimum. */
    uint64_t queries; /* queries answered (scen) / path requests sent (http) */
    uint64_t mismatches;
    uint64_t exact_mismatches; /* mismatches of answers from an optimal algorithm
                                  (what auto ran: jps or astar; scen mode) */
    uint64_t invalid;
    uint64_t checked;    /* answers whose path was checked against the map */
    int landmarks;       /* jps: landmarks of its differential heuristic */
    double landmarks_ms; /* ... and their build time */
    double dead_ends;    /* jps: dead-end fraction its pruning uses (deadends.h), 0 for none */
    double mean_subopt;  /* mean of cost / optimum - 1 over queries with a path */
    double p99_subopt;   /* its 99th percentile (scen mode; NAN in http mode) */
    double max_subopt;

    /* Latency of one query, microseconds: the search alone in scen mode, the
     * round trip (from the intended send time under --rate) in http mode. */
    double p50_us, p90_us, p99_us, p999_us, max_us, mean_us;
    uint64_t requests; /* every request or query issued, errors included */
    uint64_t errors;   /* requests that did not get an answer */
    pf_report_error error_kinds[PF_REPORT_ERROR_KINDS];
    int nerror_kinds;
    double rps;     /* answered queries per second of wall time (http) or of
                       summed search time (scen, one thread) */
    double seconds; /* wall time of the run */

    /* Search effort. */
    double mean_expanded;
    double ns_per_expansion; /* total search time / total expanded nodes */
    uint64_t expanded_total;
    double search_seconds;   /* summed per-query search (scen) or server (http) time */
    double mean_jump_points; /* jps only */
    /* jps only: what its searches read (pf_jps_stats): the layout ("scan",
     * "bits", "tables"; "" elsewhere), the jump tables' bytes, the share of
     * diagonal stops. */
    char jps_layout[8];
    size_t jps_table_bytes;
    double jps_stop_density;

    /* Per map preprocessing, NaN / 0 when absent. */
    double build_ms;     /* HPA* hierarchy build */
    size_t memory_bytes; /* pf_planner_memory */

    /* The server's own figures (http mode): a JSON object as text, borrowed;
     * printed under "server". NULL when absent. */
    const char *server_json;
    /* Latency per request kind (http mode): a JSON object as text, borrowed;
     * printed under "latency_by_kind" and, in the table, one line a kind.
     * NULL when absent. */
    const char *kinds_json;
    /* Session updates (http mode with sessions): a JSON object as text,
     * borrowed, {"moves":N,"cells":N,"doors":N} = updates that walked the
     * agent, changed a cell, opened or closed a door; printed under
     * "session_updates". NULL when absent. */
    const char *session_updates_json;

    /* A sentence when the run could not be done (e.g. the algorithm is not
     * available in this build); the numbers are then meaningless. */
    char note[160];
} pf_report;

/* A report with every count 0 and every measure NaN. */
void pf_report_init(pf_report *r);

/* Adds n errors of `kind` (truncated to 31 bytes); kinds past
 * PF_REPORT_ERROR_KINDS are counted under "other". */
void pf_report_add_error(pf_report *r, const char *kind, uint64_t n);

/* Human-readable output: one header line, then one row per report. */
void pf_report_print_header(FILE *f);
void pf_report_print_row(FILE *f, const pf_report *r);

/* The load generator's summary: requests, errors by kind, rps and the
 * latency percentiles in milliseconds, on one line. */
void pf_report_print_latency(FILE *f, const pf_report *r);

/* One JSON object on one line, with the keys map, algorithm, queries,
 * mismatches, mean_subopt, max_subopt, p50_us, p99_us, mean_expanded,
 * ns_per_expansion, requests, errors, rps, p50_ms, p90_ms, p99_ms, p999_ms,
 * max_ms, invalid, plus mean_us, errors_by_kind, checked, build_ms, memory_bytes,
 * jump_points, server and note where they apply. Returns false when out of memory. */
bool pf_report_print_json(FILE *f, const pf_report *r);

/* The p-th percentile (0..100) of n sorted samples, nearest rank. NaN for
 * n == 0. */
double pf_report_percentile(const double *sorted, size_t n, double p);
/* --clock's values: "wall" (CLOCK_MONOTONIC) or "cpu" (the thread's CPU
 * clock, which leaves out time descheduled on a busy machine). False for
 * anything else. */
bool pf_report_clock_from_name(const char *name, clockid_t *out);
/* --min-bucket-frac's value: a number in [0, 1), else false (and a message
 * on stderr naming the flag). */
bool pf_report_bucket_frac(const char *arg, double *out);
/* Microseconds on clock c. */
double pf_report_now_us(clockid_t c);
/* qsort comparator for doubles, ascending. */
int pf_report_cmp_double(const void *a, const void *b);
/* Sorts v[0..n) and returns its median (mean of the middle two for even n);
 * NAN for n = 0. */
double pf_report_median(double *v, size_t n);

#endif
