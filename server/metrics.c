/* metrics.c -- see metrics.h. */
#include "metrics.h"

#include <dirent.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "router.h"
#include "version.h"
#include "ws.h"

/* The commit the binary was built from (the Makefile generates it). */
extern const char pf_build_commit[];

static const int codes[PF_METRICS_NCODES] = {MHD_HTTP_SWITCHING_PROTOCOLS,
                                             MHD_HTTP_OK,
                                             MHD_HTTP_CREATED,
                                             MHD_HTTP_NO_CONTENT,
                                             MHD_HTTP_BAD_REQUEST,
                                             MHD_HTTP_NOT_FOUND,
                                             MHD_HTTP_METHOD_NOT_ALLOWED,
                                             MHD_HTTP_CONFLICT,
                                             MHD_HTTP_CONTENT_TOO_LARGE,
                                             MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                                             MHD_HTTP_UNPROCESSABLE_CONTENT,
                                             MHD_HTTP_TOO_MANY_REQUESTS,
                                             MHD_HTTP_INTERNAL_SERVER_ERROR,
                                             MHD_HTTP_SERVICE_UNAVAILABLE,
                                             MHD_HTTP_GATEWAY_TIMEOUT,
                                             MHD_HTTP_UNAUTHORIZED,
                                             MHD_HTTP_FORBIDDEN,
                                             MHD_HTTP_MISDIRECTED_REQUEST,
                                             MHD_HTTP_NOT_IMPLEMENTED};
static const uint64_t bounds_us[PF_METRICS_NBUCKETS] = {
    50,     100,    250,    500,     1000,    2500,    5000,     10000,    25000,    50000,
    100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000, 20000000, 30000000, 60000000};

static const char *const outcome_names[PF_OUTCOME_COUNT] = {"found", "unreachable", "budget",
                                                            "deadline", "error"};
static const char *const plan_names[PF_PLAN_COUNT] = {"initial", "repair", "unchanged"};
static const char *const ws_names[PF_WS_MSG_COUNT] = {"text", "binary", "ping", "pong", "close"};
static const char *const mem_names[PF_MEM_COUNT] = {"maps",   "caches", "sessions", "streams",
                                                    "bodies", "crowds", "scratch",  "answers"};
/* The algorithm label of slot a of the by-algorithm arrays. */
static const char *algo_label(int a) { return pf_kinds_algorithm_label((size_t)a); }
static const char *const job_names[PF_METRICS_NJOBS] = {"search", "build"};

#define ADD(x, v) atomic_fetch_add_explicit(&(x), (v), memory_order_relaxed)
#define LOAD(x) ((unsigned long long)atomic_load_explicit(&(x), memory_order_relaxed))

static void hist_init(pf_metrics_hist *h) {
    for (int b = 0; b <= PF_METRICS_NBUCKETS; b++) atomic_init(&h->bucket[b], 0);
    atomic_init(&h->sum_us, 0);
}

static void hist_observe(pf_metrics_hist *h, uint64_t us) {
    int b = 0;
    while (b < PF_METRICS_NBUCKETS && us > bounds_us[b]) b++;
    ADD(h->bucket[b], 1);
    ADD(h->sum_us, us);
}

/* Zeroes every counter: atomic_init on each, as C11 asks of atomics. */
void pf_metrics_init(pf_metrics *m) {
    atomic_uint_fast64_t *scalars[] = {
        &m->in_flight,        &m->cache_hits,    &m->cache_misses, &m->rebases_incremental,
        &m->rebases_rebuilt,  &m->ws_upgrades,   &m->ws_bytes[0],  &m->ws_bytes[1],
        &m->goal_moves[0],    &m->goal_moves[1], &m->route_flips,  &m->stream_answers[0],
        &m->stream_answers[1]};
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) atomic_init(scalars[i], 0);
    for (int r = 0; r < PF_ROUTE_COUNT; r++) {
        for (int c = 0; c <= PF_METRICS_NCODES; c++) atomic_init(&m->requests[r][c], 0);
        hist_init(&m->latency[r]);
    }
    for (int k = 0; k < PF_METRICS_NJOBS; k++) hist_init(&m->queue_wait[k]);
    for (int a = 0; a < (int)pf_kinds_algorithm_slots(); a++) {
        for (int o = 0; o < PF_OUTCOME_COUNT; o++) atomic_init(&m->searches[a][o], 0);
        hist_init(&m->search_time[a]);
        atomic_init(&m->expanded[a], 0);
    }
    hist_init(&m->map_build);
    hist_init(&m->map_repair);
    for (int k = 0; k < PF_PLAN_COUNT; k++) {
        for (int o = 0; o < PF_OUTCOME_COUNT; o++) atomic_init(&m->plans[k][o], 0);
        hist_init(&m->plan_time[k]);
    }
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < PF_WS_MSG_COUNT; t++) atomic_init(&m->ws_messages[d][t], 0);
    for (int r = 0; r < PF_REPLAN_REASON_COUNT; r++) atomic_init(&m->replan_reasons[r], 0);
}

pf_metrics_outcome pf_metrics_outcome_of(pf_status st) {
    switch (st) {
    case PF_OK:
        return PF_OUTCOME_FOUND;
    case PF_NO_PATH:
    case PF_EBLOCKED:
        return PF_OUTCOME_UNREACHABLE;
    case PF_EBUDGET:
        return PF_OUTCOME_BUDGET;
    case PF_ECANCELED:
        return PF_OUTCOME_DEADLINE;
    default:
        return PF_OUTCOME_ERROR;
    }
}

void pf_metrics_request_begin(pf_metrics *m) { ADD(m->in_flight, 1); }

uint64_t pf_metrics_in_flight(pf_metrics *m) {
    return atomic_load_explicit(&m->in_flight, memory_order_relaxed);
}

void pf_metrics_request_end(pf_metrics *m, pf_route r, int http_code, uint64_t latency_us) {
    int c = PF_METRICS_NCODES;
    if ((unsigned)r >= PF_ROUTE_COUNT) r = PF_ROUTE_NONE;
    for (int i = 0; i < PF_METRICS_NCODES; i++)
        if (codes[i] == http_code) c = i;
    ADD(m->requests[r][c], 1);
    hist_observe(&m->latency[r], latency_us);
    atomic_fetch_sub_explicit(&m->in_flight, 1, memory_order_relaxed);
}

void pf_metrics_observe_queue_wait(pf_metrics *m, pf_job_kind kind, uint64_t wait_us) {
    hist_observe(&m->queue_wait[kind == PF_JOB_BUILD ? 1 : 0], wait_us);
}

void pf_metrics_count_search_outcome(pf_metrics *m, int slot, pf_metrics_outcome outcome,
                                     uint64_t expanded, uint64_t us) {
    if (slot < 0 || (size_t)slot >= pf_kinds_algorithm_slots()) slot = PF_ALGO_ASTAR;
    if ((unsigned)outcome >= PF_OUTCOME_COUNT) outcome = PF_OUTCOME_ERROR;
    ADD(m->searches[slot][outcome], 1);
    ADD(m->expanded[slot], expanded);
    hist_observe(&m->search_time[slot], us);
}

void pf_metrics_count_search(pf_metrics *m, int slot, pf_status st, uint64_t expanded,
                             uint64_t us) {
    pf_metrics_count_search_outcome(m, slot, pf_metrics_outcome_of(st), expanded, us);
}

void pf_metrics_count_cache(pf_metrics *m, bool hit) {
    ADD(*(hit ? &m->cache_hits : &m->cache_misses), 1);
}

void pf_metrics_observe_map_build(pf_metrics *m, uint64_t us) { hist_observe(&m->map_build, us); }

void pf_metrics_observe_map_repair(pf_metrics *m, uint64_t us) { hist_observe(&m->map_repair, us); }

void pf_metrics_count_plan(pf_metrics *m, pf_metrics_plan kind, pf_status st, uint64_t expanded,
                           uint64_t us) {
    if ((unsigned)kind >= PF_PLAN_COUNT) kind = PF_PLAN_INITIAL;
    ADD(m->plans[kind][pf_metrics_outcome_of(st)], 1);
    ADD(m->expanded[PF_ALGO_DSTAR], expanded);
    hist_observe(&m->plan_time[kind], us);
}

void pf_metrics_count_rebase(pf_metrics *m, bool incremental) {
    ADD(*(incremental ? &m->rebases_incremental : &m->rebases_rebuilt), 1);
}

void pf_metrics_count_replan(pf_metrics *m, pf_replan_reason why) {
    if ((unsigned)why < PF_REPLAN_REASON_COUNT) ADD(m->replan_reasons[why], 1);
}

void pf_metrics_count_goal_move(pf_metrics *m, bool incremental) {
    ADD(m->goal_moves[incremental ? 0 : 1], 1);
}

void pf_metrics_count_route_flip(pf_metrics *m) { ADD(m->route_flips, 1); }

void pf_metrics_count_stream_answer(pf_metrics *m, bool unchanged) {
    ADD(m->stream_answers[unchanged ? 1 : 0], 1);
}

void pf_metrics_count_ws_upgrade(pf_metrics *m) { ADD(m->ws_upgrades, 1); }

void pf_metrics_count_ws_message(pf_metrics *m, bool sent, int ws_op, uint64_t len) {
    int t;
    switch (ws_op) {
    case PF_WS_OP_TEXT:
        t = PF_WS_MSG_TEXT;
        break;
    case PF_WS_OP_BINARY:
        t = PF_WS_MSG_BINARY;
        break;
    case PF_WS_OP_PING:
        t = PF_WS_MSG_PING;
        break;
    case PF_WS_OP_PONG:
        t = PF_WS_MSG_PONG;
        break;
    default:
        t = PF_WS_MSG_CLOSE;
        break;
    }
    ADD(m->ws_messages[sent][t], 1);
    ADD(m->ws_bytes[sent], len);
}

/* Writing */

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

/* A family's HELP and TYPE lines. */
static void family(pf_jsonw *w, const char *name, const char *type, const char *help) {
    line(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One unlabelled sample with its HELP and TYPE lines. %.17g prints integer
 * counts below 2^53 exactly. */
static void scalar(pf_jsonw *w, const char *name, const char *type, const char *help,
                   double value) {
    family(w, name, type, help);
    line(w, "%s %.17g\n", name, value);
}

/* The samples of one histogram whose labels are `labels` ("" or
 * `route="x"`): cumulative buckets, sum in seconds, count. A histogram
 * nothing was observed in is written too (all zeros) when `always`, so
 * dashboards and alerts find the series before the first event. */
static void hist(pf_jsonw *w, const char *name, const char *labels, const pf_metrics_hist *h,
                 bool always) {
    pf_metrics_hist *hh = (pf_metrics_hist *)h; /* atomic loads take non-const pointers in C11 */
    unsigned long long cum = 0, total = 0;
    const char *sep = *labels ? "," : "";
    for (int b = 0; b <= PF_METRICS_NBUCKETS; b++) total += LOAD(hh->bucket[b]);
    if (!total && !always) return;
    for (int b = 0; b <= PF_METRICS_NBUCKETS; b++) {
        cum += LOAD(hh->bucket[b]);
        if (b < PF_METRICS_NBUCKETS)
            line(w, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep,
                 (double)bounds_us[b] / 1e6, cum);
        else
            line(w, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep, cum);
    }
    if (*labels) {
        line(w, "%s_sum{%s} %.6f\n", name, labels, (double)LOAD(hh->sum_us) / 1e6);
        line(w, "%s_count{%s} %llu\n", name, labels, cum);
    } else {
        line(w, "%s_sum %.6f\n", name, (double)LOAD(hh->sum_us) / 1e6);
        line(w, "%s_count %llu\n", name, cum);
    }
}

/* Process figures from /proc/self (Linux). Each is left out when it
 * cannot be read, as the Prometheus client libraries do. */
static void write_process(pf_jsonw *w) {
    long page = sysconf(_SC_PAGESIZE), ticks = sysconf(_SC_CLK_TCK);
    FILE *f;
    struct rlimit rl;
    DIR *d;

    f = fopen("/proc/self/stat", "r");
    if (f) {
        char buf[1024], *p;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        unsigned long utime, stime, vsize;
        unsigned long long start;
        long threads, rss;
        buf[n] = '\0';
        fclose(f);
        /* The command name (field 2) may hold spaces and parentheses: the
         * fields after it start past its last ')'. Fields 14, 15 (utime,
         * stime), 20 (threads), 22 (starttime), 23 (vsize), 24 (rss). */
        p = strrchr(buf, ')');
        if (p && ticks > 0 && page > 0 &&
            sscanf(p + 2,
                   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %ld %*d "
                   "%llu %lu %ld",
                   &utime, &stime, &threads, &start, &vsize, &rss) == 6) {
            struct timespec now_real, now_boot;
            double boot = 0;
            if (clock_gettime(CLOCK_REALTIME, &now_real) == 0 &&
                clock_gettime(CLOCK_BOOTTIME, &now_boot) == 0)
                boot = ((double)now_real.tv_sec + now_real.tv_nsec / 1e9) -
                       ((double)now_boot.tv_sec + now_boot.tv_nsec / 1e9);
            scalar(w, "process_cpu_seconds_total", "counter",
                   "User and system CPU time spent, in seconds.",
                   (double)(utime + stime) / (double)ticks);
            scalar(w, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
                   (double)rss * (double)page);
            scalar(w, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
                   (double)vsize);
            scalar(w, "process_threads", "gauge", "Threads of the process.", (double)threads);
            if (boot > 0)
                scalar(w, "process_start_time_seconds", "gauge",
                       "Start time of the process since the Unix epoch, in seconds.",
                       boot + (double)start / (double)ticks);
        }
    }
    d = opendir("/proc/self/fd");
    if (d) {
        long n = 0;
        struct dirent *e;
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') n++;
        closedir(d);
        /* Less the one opendir itself holds. */
        scalar(w, "process_open_fds", "gauge", "Open file descriptors.", (double)(n - 1));
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        scalar(w, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
               (double)rl.rlim_cur);
}

#ifdef __clang__
#define PF_COMPILER "clang " __clang_version__
#else
#define PF_COMPILER "gcc " __VERSION__
#endif

/* The build and the HTTP requests. */
static void write_requests(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    pf_metrics *mm = (pf_metrics *)m; /* atomic loads take non-const pointers in C11 */
    char labels[128];
    (void)g;

    family(w, "pathd_build_info", "gauge",
           "Always 1; the labels say which build this is (version, commit, compiler).");
    line(w, "pathd_build_info{version=\"%s\",api=\"v1\",commit=\"%s\",compiler=\"%s\"} 1\n",
         PF_SERVER_VERSION, pf_build_commit, PF_COMPILER);

    family(w, "pathd_requests_total", "counter",
           "HTTP requests answered, by route and status (101: WebSocket upgrades).");
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
    family(w, "pathd_request_duration_seconds", "histogram",
           "Time from a request's arrival to its answer, queue and search included.");
    for (int r = 0; r < PF_ROUTE_COUNT; r++) {
        snprintf(labels, sizeof(labels), "route=\"%s\"", pf_route_name((pf_route)r));
        hist(w, "pathd_request_duration_seconds", labels, &m->latency[r], false);
    }
    scalar(w, "pathd_requests_in_flight", "gauge", "Requests received and not yet answered.",
           (double)LOAD(mm->in_flight));
}

/* The pool. */
static void write_pool(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    char labels[128];

    family(w, "pathd_queue_wait_seconds", "histogram",
           "Time a job waited in the pool's queue for a worker, by job kind (search: paths, "
           "batches, session plans, exports; build: uploads and PATCHes).");
    for (int k = 0; k < PF_METRICS_NJOBS; k++) {
        snprintf(labels, sizeof(labels), "kind=\"%s\"", job_names[k]);
        hist(w, "pathd_queue_wait_seconds", labels, &m->queue_wait[k], true);
    }
    scalar(w, "pathd_queue_depth", "gauge", "Jobs waiting for a worker.", g->queue_depth);
    scalar(w, "pathd_queue_limit", "gauge", "Jobs that may wait before 503.", g->queue_limit);
    scalar(w, "pathd_queue_rejected_total", "counter", "Jobs refused because the queue was full.",
           (double)g->rejected);
    scalar(w, "pathd_queue_expired_total", "counter",
           "Jobs answered 504 because their deadline passed while they waited for a worker.",
           (double)g->expired);
    scalar(w, "pathd_queue_requeued_total", "counter",
           "Slices long jobs (batches) gave back to waiting requests.", (double)g->requeued);
    scalar(w, "pathd_workers_busy", "gauge", "Workers running a job.", g->running);
    scalar(w, "pathd_workers", "gauge", "Worker threads.", g->workers);
}

/* Connections (conns.h). */
static void write_connections(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    (void)m;
    scalar(w, "pathd_connections", "gauge", "Open HTTP connections (both listeners).",
           (double)g->connections);
    scalar(w, "pathd_connections_closed_slow_request_total", "counter",
           "Connections closed because a request took longer than --request-timeout to arrive.",
           (double)g->closed_slow_request);
    scalar(w, "pathd_connections_closed_idle_total", "counter",
           "Connections closed after --conn-timeout without a request line.",
           (double)g->closed_idle);
}

/* Searches. */
static void write_searches(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    pf_metrics *mm = (pf_metrics *)m; /* atomic loads take non-const pointers in C11 */
    char labels[128];
    (void)g;

    family(w, "pathd_searches_total", "counter",
           "Path searches run on the pool (cache hits excluded), by the algorithm asked for and "
           "outcome.");
    for (int a = 0; a < (int)pf_kinds_algorithm_slots(); a++) {
        if (a == PF_ALGO_DSTAR) continue; /* sessions: pathd_session_plans_total */
        for (int o = 0; o < PF_OUTCOME_COUNT; o++)
            line(w, "pathd_searches_total{algorithm=\"%s\",outcome=\"%s\"} %llu\n", algo_label(a),
                 outcome_names[o], LOAD(mm->searches[a][o]));
    }
    family(w, "pathd_search_duration_seconds", "histogram",
           "Time a path search took on its worker (queue time excluded), by algorithm.");
    for (int a = 0; a < (int)pf_kinds_algorithm_slots(); a++) {
        if (a == PF_ALGO_DSTAR) continue; /* D* Lite's plans have a family of their own */
        snprintf(labels, sizeof(labels), "algorithm=\"%s\"", algo_label(a));
        hist(w, "pathd_search_duration_seconds", labels, &m->search_time[a], true);
    }
    family(w, "pathd_expanded_total", "counter",
           "Nodes expanded by searches, by algorithm (dstar: session plans).");
    for (int a = 0; a < (int)pf_kinds_algorithm_slots(); a++)
        line(w, "pathd_expanded_total{algorithm=\"%s\"} %llu\n", algo_label(a),
             LOAD(mm->expanded[a]));
    scalar(w, "pathd_cache_hits_total", "counter",
           "Path cache hits. The hit ratio is rate(hits) / (rate(hits) + rate(misses)).",
           (double)LOAD(mm->cache_hits));
    scalar(w, "pathd_cache_misses_total", "counter", "Path cache misses.",
           (double)LOAD(mm->cache_misses));
}

/* Maps. */
static void write_maps(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    scalar(w, "pathd_maps", "gauge", "Maps held.", (double)g->maps);
    family(w, "pathd_map_build_duration_seconds", "histogram",
           "Time an uploaded map took to parse and prepare (jps tables, landmarks, HPA*).");
    hist(w, "pathd_map_build_duration_seconds", "", &m->map_build, true);
    family(w, "pathd_map_repair_duration_seconds", "histogram",
           "Time a PATCH took to make the next map version (HPA* repaired locally).");
    hist(w, "pathd_map_repair_duration_seconds", "", &m->map_repair, true);
}

/* Sessions. */
static void write_sessions(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    pf_metrics *mm = (pf_metrics *)m; /* atomic loads take non-const pointers in C11 */
    char labels[128];

    scalar(w, "pathd_sessions", "gauge", "D* Lite sessions held.", (double)g->sessions);
    family(w, "pathd_session_plans_total", "counter",
           "D* Lite session plans by kind (initial: a fresh search; repair: the search repaired "
           "after updates or a map change; unchanged: a read) and outcome.");
    for (int k = 0; k < PF_PLAN_COUNT; k++)
        for (int o = 0; o < PF_OUTCOME_COUNT; o++) {
            if (o == PF_OUTCOME_BUDGET || o == PF_OUTCOME_DEADLINE) continue; /* no budget */
            line(w, "pathd_session_plans_total{kind=\"%s\",outcome=\"%s\"} %llu\n", plan_names[k],
                 outcome_names[o], LOAD(mm->plans[k][o]));
        }
    family(w, "pathd_session_plan_duration_seconds", "histogram",
           "Time a D* Lite session plan took on its worker, by kind.");
    for (int k = 0; k < PF_PLAN_COUNT; k++) {
        snprintf(labels, sizeof(labels), "kind=\"%s\"", plan_names[k]);
        hist(w, "pathd_session_plan_duration_seconds", labels, &m->plan_time[k], true);
    }
    family(w, "pathd_session_rebases_total", "counter",
           "Sessions brought to a newer map version: incrementally from the change log, or "
           "rebuilt (further behind than the log reaches).");
    line(w, "pathd_session_rebases_total{how=\"incremental\"} %llu\n",
         LOAD(mm->rebases_incremental));
    line(w, "pathd_session_rebases_total{how=\"rebuilt\"} %llu\n", LOAD(mm->rebases_rebuilt));
    family(w, "pathd_session_replans_total", "counter",
           "Session requests that replanned, by reason (initial, blocked, off_route, route_end: "
           "the route could not be followed; goal_moved, map_changed: the policy allowed it).");
    for (int r = 0; r < PF_REPLAN_REASON_COUNT; r++)
        if (pf_replan_reason_replans((pf_replan_reason)r))
            line(w, "pathd_session_replans_total{reason=\"%s\"} %llu\n",
                 pf_replan_reason_name((pf_replan_reason)r), LOAD(mm->replan_reasons[r]));
    family(w, "pathd_session_replans_skipped_total", "counter",
           "Session requests answered from the kept route without a search, by reason "
           "(unchanged: nothing asked for a plan; interval: too soon after the last replan; "
           "threshold: the goal moved less than the policy's goal_threshold; target_adjusted: a "
           "navmesh corridor's target slid along with the goal).");
    for (int r = 0; r < PF_REPLAN_REASON_COUNT; r++)
        if (!pf_replan_reason_replans((pf_replan_reason)r))
            line(w, "pathd_session_replans_skipped_total{reason=\"%s\"} %llu\n",
                 pf_replan_reason_name((pf_replan_reason)r), LOAD(mm->replan_reasons[r]));
    family(w, "pathd_session_goal_moves_total", "counter",
           "Replans after a goal move, by how the search handled it: incremental (the search "
           "kept: grid sessions' Moving Target D* Lite; navmesh corridors whose target slid "
           "along, no search) or fresh (searched anew).");
    line(w, "pathd_session_goal_moves_total{how=\"incremental\"} %llu\n", LOAD(mm->goal_moves[0]));
    line(w, "pathd_session_goal_moves_total{how=\"fresh\"} %llu\n", LOAD(mm->goal_moves[1]));
    scalar(w, "pathd_session_route_flips_total", "counter",
           "Replans whose new route turned the agent away from its kept one (course.h's flips; "
           "hysteresis keeps near-equal routes from flipping).",
           (double)LOAD(mm->route_flips));
}

/* Crowds. */
static void write_crowds(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    (void)m;
    scalar(w, "pathd_crowds", "gauge", "Crowds held (navmesh maps).", (double)g->crowds);
    scalar(w, "pathd_crowd_steps_total", "counter",
           "Simulation steps of every crowd (on request and ticks).", (double)g->crowd_steps);
}

/* WebSocket streams. */
static void write_streams(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    pf_metrics *mm = (pf_metrics *)m; /* atomic loads take non-const pointers in C11 */

    scalar(w, "pathd_streams", "gauge", "Open WebSocket session and crowd streams.",
           (double)g->streams);
    scalar(w, "pathd_ws_upgrades_total", "counter",
           "WebSocket upgrades (101) whose connection became a stream.",
           (double)LOAD(mm->ws_upgrades));
    family(w, "pathd_ws_messages_total", "counter",
           "WebSocket messages (control frames included), by direction and type.");
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < PF_WS_MSG_COUNT; t++)
            line(w, "pathd_ws_messages_total{direction=\"%s\",type=\"%s\"} %llu\n",
                 d ? "sent" : "received", ws_names[t], LOAD(mm->ws_messages[d][t]));
    family(w, "pathd_ws_message_bytes_total", "counter",
           "Payload bytes of WebSocket messages, by direction.");
    line(w, "pathd_ws_message_bytes_total{direction=\"received\"} %llu\n", LOAD(mm->ws_bytes[0]));
    line(w, "pathd_ws_message_bytes_total{direction=\"sent\"} %llu\n", LOAD(mm->ws_bytes[1]));
    scalar(w, "pathd_stream_closes_slow_reader_total", "counter",
           "Streams closed (1008) because their peer did not read.",
           (double)g->stream_closes_slow_reader);
    scalar(w, "pathd_stream_closes_idle_total", "counter",
           "Streams closed after --ws-idle-timeout without a message.",
           (double)g->stream_closes_idle);
    scalar(w, "pathd_stream_closes_session_gone_total", "counter",
           "Streams closed because their session ended.", (double)g->stream_closes_session_gone);
    family(w, "pathd_stream_session_answers_total", "counter",
           "Session answers sent on streams (a session's WebSocket and /v1/stream): full (with "
           "the path), or unchanged (the plan did not change since the last answer on that "
           "stream: no path sent).");
    line(w, "pathd_stream_session_answers_total{kind=\"full\"} %llu\n",
         LOAD(mm->stream_answers[0]));
    line(w, "pathd_stream_session_answers_total{kind=\"unchanged\"} %llu\n",
         LOAD(mm->stream_answers[1]));
}

/* Memory. */
static void write_memory(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    (void)m;
    family(w, "pathd_memory_bytes", "gauge",
           "Bytes charged to the memory budget, by kind (maps: the versions' grids, preprocessing "
           "and change logs; caches: the path caches; sessions: D* Lite searches; streams: "
           "WebSocket buffers; bodies: request bodies being received; scratch: search engines "
           "requests hold between slices and pooled graph search contexts; answers: answer bodies "
           "queued for clients not reading them yet).");
    for (int k = 0; k < PF_MEM_COUNT; k++)
        line(w, "pathd_memory_bytes{kind=\"%s\"} %llu\n", mem_names[k],
             (unsigned long long)g->memory[k]);
    scalar(w, "pathd_memory_budget_bytes", "gauge",
           "The memory budget (--max-memory, or 3/4 of what the process may use) the kinds of "
           "pathd_memory_bytes count against.",
           (double)g->memory_budget);
    scalar(w, "pathd_memory_refused_total", "counter",
           "Charges the memory budget refused (507, 503, close 1013, uncached answers).",
           (double)g->memory_refused);
}

/* The data directory's start, and the tokens. */
static void write_store(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    (void)m;
    scalar(w, "pathd_maps_loading", "gauge", "1 while the stored maps load (readyz is 503).",
           g->loading ? 1.0 : 0.0);
    scalar(w, "pathd_store_quarantined_files", "gauge",
           "Files the last start moved to DIR/quarantine/ (damaged, or past the limits).",
           (double)g->store_quarantined);
    scalar(w, "pathd_store_skipped_files", "gauge",
           "Files the last start could not use and left in place (unreadable, not a map id).",
           (double)g->store_skipped);
    scalar(w, "pathd_store_temp_removed", "gauge",
           "Temporary files of an earlier run the last start removed.",
           (double)g->store_temp_removed);
    if (g->shared) {
        scalar(w, "pathd_store_writes_accepted", "gauge",
               "--store: 1 while this instance acknowledges changes to the shared store (it was "
               "checked, keeps what it acknowledges or --store-accept-volatile, no loss being "
               "repaired).",
               g->shared_writes_ok ? 1.0 : 0.0);
        scalar(w, "pathd_store_durable", "gauge",
               "--store: 1 when the last check found appendonly, RDB save points or a connected "
               "replica.",
               g->shared_durable ? 1.0 : 0.0);
        scalar(w, "pathd_store_data_losses_total", "counter",
               "--store: times this instance found that the shared store lost data (epoch "
               "changed, counter or events went back, a map older than a copy).",
               (double)g->shared_losses);
        scalar(w, "pathd_store_maps_restored_total", "counter",
               "--store: map copies this instance put back into the store after a loss.",
               (double)g->shared_restored);
        family(w, "pathd_store_changes_refused_total", "counter",
               "--store: changes answered 503 before reaching the store, by reason (not_durable: "
               "the store would lose them; unavailable: not checked yet, or repairing a loss).");
        line(w,
             "pathd_store_changes_refused_total{reason=\"not_durable\"} %llu\n"
             "pathd_store_changes_refused_total{reason=\"unavailable\"} %llu\n",
             (unsigned long long)g->shared_refused_not_durable,
             (unsigned long long)g->shared_refused_unavailable);
        family(w, "pathd_store_changes_unconfirmed_total", "counter",
               "--store: changes answered 503 store_outcome_unknown, by reason (timeout: sent, "
               "no answer within --store-timeout-ms; replicas: made, but fewer replicas than "
               "--store-wait-replicas confirmed in time).");
        line(w,
             "pathd_store_changes_unconfirmed_total{reason=\"timeout\"} %llu\n"
             "pathd_store_changes_unconfirmed_total{reason=\"replicas\"} %llu\n",
             (unsigned long long)g->shared_unknown, (unsigned long long)g->shared_unconfirmed);
    }
    family(w, "pathd_auth_tokens", "gauge", "Bearer tokens in force, by scope.");
    line(w, "pathd_auth_tokens{scope=\"read\"} %llu\npathd_auth_tokens{scope=\"write\"} %llu\n",
         (unsigned long long)g->tokens_read, (unsigned long long)g->tokens_write);
}

/* The families in the order /metrics lists them, a section a part of
 * the server. */
static void (*const sections[])(const pf_metrics *, const pf_metrics_gauges *, pf_jsonw *) = {
    write_requests, write_pool,   write_connections, write_searches, write_maps,
    write_sessions, write_crowds, write_streams,     write_memory,   write_store,
};

void pf_metrics_write(const pf_metrics *m, const pf_metrics_gauges *g, pf_jsonw *w) {
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) sections[i](m, g, w);
    write_process(w);
}
