/* navbench.c -- see navbench.h. */
#include "navbench.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detour_direct.h"
#include "levels.h"
#include "navmesh.h"
#include "obj.h"
#include "report.h"
#include "scen.h"

#define EXIT_MISMATCH 1
#define EXIT_USAGE 2

typedef struct nb_opts {
    size_t max_queries;
    bool cpu_clock;
    int threads;
    int obstacles;
    int crowd_sizes[8];
    int ncrowd;
    int crowd_steps;
    bool json;
    unsigned long long seed;
    uint32_t max_nodes;
    int unreachable;
    FILE *per_query;
} nb_opts;

static void usage(FILE *f) {
    fputs("usage: pathd-bench navmesh [options] LEVEL...\n"
          "\n"
          "A LEVEL is a Moving AI FILE.scen (its map converted to a navmesh: cell 0.25,\n"
          "agent radius 0.25, tiles of 64 voxels, the server's from_grid defaults), an\n"
          "OBJ file (built with RecastDemo's settings, as an upload's defaults), or a\n"
          "generated 3D level: gen:multifloor, gen:terrain (loadtest/levels.h).\n"
          "\n"
          "Every level:\n"
          "  build     wall ms on --threads threads and CPU ms, polygons, bytes\n"
          "  paths     the same pairs through pathd (pf_nav_find_path, polyanya and\n"
          "            detour) and through Detour direct, in this process on the same\n"
          "            mesh with the same filter and extents: findNearestPoly twice,\n"
          "            findPath, findStraightPath (loadtest/detour_direct.h). Each pair by\n"
          "            each method in turn. p50/p99/mean us over the pairs Detour reaches\n"
          "            and p50 over those it does not (its partial answer), each as a\n"
          "            ratio to Detour direct; path length / Detour direct's; pairs\n"
          "            whose answers differ (reached, partial, off the mesh)\n"
          "  first     the first query on a new version (polyanya), a new worker's\n"
          "            (a new pf_nav_query) first and the largest of its first ten,\n"
          "            for polyanya, detour and Detour direct\n"
          "Pairs: a scenario file's selected queries (cell centres, y 0); on a 3D level\n"
          "RecastDemo's test cases when nav_mesh_test.txt beside the OBJ names it,\n"
          "--max-queries pairs of random mesh points (findRandomPoint, --seed), then up\n"
          "to --unreachable pairs whose goal Detour direct does not reach.\n"
          "Scenario files also get: jps on the same queries, lengths over the listed\n"
          "optimum, and:\n"
          "  obstacles --obstacles rounds of a 2x2 box put at a random walkable cell then\n"
          "            removed (pf_nav_apply, one version each): p50/p99 ms, tiles rebuilt\n"
          "  crowd     for each --crowd size, agents at random cells heading for random\n"
          "            cells; --crowd-steps steps of 50 ms after 10 to settle: p50/p99 ms\n"
          "\n"
          "  --max-queries N    queries per level (scenarios: spread evenly; default 200)\n"
          "  --unreachable N    extra unreachable pairs per 3D level (default 20)\n"
          "  --max-nodes N      search node budget of every method (default 65535)\n"
          "  --clock wall|cpu   time queries, changes and steps with CLOCK_MONOTONIC or\n"
          "                     the thread's CPU clock (cpu: leaves out time descheduled)\n"
          "  --threads N        build threads (default 2)\n"
          "  --obstacles N      put/remove rounds (default 40; 0 = none)\n"
          "  --crowd N[,N...]   crowd sizes (default none), e.g. 100,500,1000\n"
          "  --crowd-steps N    timed steps per crowd (default 50)\n"
          "  --seed N           pairs, obstacles, crowds, generated levels (default 1)\n"
          "  --json             one JSON object per level\n"
          "  --per-query FILE   one tab-separated line per pair and pathd algorithm:\n"
          "                     level, pair, source, ends, algorithm, status, length,\n"
          "                     expanded, polygons, time_us, and Detour direct's status,\n"
          "                     length, expanded, polygons, time_us for that pair\n"
          "\n"
          "Exit status: 0 good; 1 a scenario the navmesh did not reach, a polyanya path\n"
          "longer than 1.02 x the optimum, or pathd and Detour direct answering a pair\n"
          "differently (reached, partial, off the mesh); 2 bad arguments or files.\n",
          f);
}

static double clock_us(bool cpu) {
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double process_cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p) {
    if (!n) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)ceil(p * (double)n) - 1;
    if (i >= n) i = n - 1;
    return v[i];
}

static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static pf_point random_cell(uint64_t *s, const pf_grid *g) {
    for (;;) {
        pf_point p = {(int32_t)(rnd(s) % (uint64_t)pf_grid_width(g)),
                      (int32_t)(rnd(s) % (uint64_t)pf_grid_height(g))};
        if (pf_grid_is_walkable(g, p)) return p;
    }
}

/* The build's runner: threads claiming tile indices. */
typedef struct nb_par {
    uint32_t n;
    pf_nav_task_fn fn;
    void *arg;
    uint32_t next;
} nb_par;

static void *nb_worker(void *a) {
    nb_par *j = a;
    for (;;) {
        uint32_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n) break;
        j->fn(j->arg, i);
    }
    return NULL;
}

static void nb_run(void *ctx, uint32_t n, pf_nav_task_fn fn, void *arg) {
    int threads = *(int *)ctx;
    nb_par j = {n, fn, arg, 0};
    pthread_t t[16];
    int started = 0;
    for (int i = 1; i < threads && i < 16; i++)
        if (pthread_create(&t[started], NULL, nb_worker, &j) == 0) started++;
    nb_worker(&j);
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
}

/* ---- the paths: pathd (polyanya, detour) against Detour direct ---- */

/* One query pair. optimal: the scenario's listed optimum (grid maps), or
 * < 0. source names where the pair comes from. */
typedef struct nb_pair {
    float s[3], g[3];
    double optimal;
    const char *source;
} nb_pair;

enum { M_POLYANYA, M_DETOUR, M_DIRECT, M_N };
static const char *const method_name[M_N] = {"polyanya", "detour", "detour_direct"};

/* A pair's answer by one method. */
typedef enum nb_status { ST_OK, ST_PARTIAL, ST_BLOCKED, ST_ERROR } nb_status;
static const char *const status_name[] = {"ok", "partial", "blocked", "error"};

typedef struct nb_rec {
    double us, length;
    uint32_t expanded, polygons;
    nb_status status;
} nb_rec;

typedef struct nb_stats {
    double p50, p99, mean;
    size_t n;
} nb_stats;

/* The first queries of fresh scratch, on FIRST_WORKERS new workers held at
 * once (each a new pf_nav_query, or a new dtNavMeshQuery for Detour direct,
 * as each server worker has its own), worker w on pairs 10w .. 10w+9:
 * medians over the workers of the first query's time and of the largest of
 * the first ten, each also over the same pair's warm time by the same
 * method (the main run's). polyanya's [0] is one worker only: the very first
 * query on the new version (cold: the process's first on this mesh; its
 * polyanya view is made with the version). */
#define FIRST_WORKERS 8
typedef struct nb_first {
    int workers, nq;
    double us[FIRST_WORKERS][10];
    double first_us, max10_us; /* medians over the workers */
    double first_x, max10_x;   /* the same over the pairs' warm times */
} nb_first;

typedef struct nb_result {
    size_t pairs, reachable, unreachable, blocked;
    nb_stats t[M_N]; /* reachable pairs (Detour direct reached the goal) */
    nb_stats u[M_N]; /* unreachable pairs (Detour direct's partial answer) */
    /* pathd's length over Detour direct's on pairs both reached */
    double len_mean[2], len_min[2], len_max[2];
    int longer[2];     /* more than 1% longer than Detour direct's */
    int disagree[2];   /* reached by one, not the other (or blocked by one) */
    nb_first first[2]; /* polyanya: [0] new version + new worker, [1] new worker */
    nb_first first_detour, first_direct;
    /* against the listed optimum (grid maps) */
    int missed[2], over;
    double opt_mean[2], opt_max[2];
} nb_result;

static nb_stats stats_of(double *v, size_t n) {
    nb_stats st = {NAN, NAN, NAN, n};
    if (!n) return st;
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += v[i];
    st.mean = sum / (double)n;
    st.p50 = pct(v, n, 0.50);
    st.p99 = pct(v, n, 0.99);
    return st;
}

static void run_pathd(pf_nav_query *q, const pf_navmesh *nm, const nb_pair *pr,
                      pf_nav_algorithm algo, bool cpu, nb_rec *r) {
    pf_nav_path p;
    const char *which;
    double t0 = clock_us(cpu);
    pf_status st = pf_nav_find_path(q, nm, pr->s, pr->g, NULL, algo, &p, &which);
    r->us = clock_us(cpu) - t0;
    r->status = st == PF_EBLOCKED ? ST_BLOCKED
                : st != PF_OK     ? ST_ERROR
                : p.partial       ? ST_PARTIAL
                                  : ST_OK;
    r->length = st == PF_OK ? p.length : 0;
    r->expanded = st == PF_OK ? p.expanded : 0;
    r->polygons = st == PF_OK ? p.polygons : 0;
}

static void run_direct(pf_dd *d, const nb_pair *pr, bool cpu, nb_rec *r) {
    pf_dd_path p;
    double t0 = clock_us(cpu);
    bool ok = pf_dd_path_find(d, pr->s, pr->g, NULL, &p);
    r->us = clock_us(cpu) - t0;
    r->status = !ok ? ST_ERROR : !p.found ? ST_BLOCKED : p.reached ? ST_OK : ST_PARTIAL;
    r->length = p.length;
    r->expanded = p.expanded;
    r->polygons = p.polygons;
}

/* Fresh workers' first ten queries (fewer when there are fewer pairs). */
static pf_status first_queries(const pf_navmesh *nm, const nb_pair *pairs, size_t n, int m,
                               int workers, uint32_t max_nodes, bool cpu, nb_first *out) {
    pf_nav_query *q[FIRST_WORKERS] = {NULL};
    pf_dd *d[FIRST_WORKERS] = {NULL};
    pf_status st = PF_OK;
    memset(out, 0, sizeof *out);
    out->workers = workers;
    out->nq = n < 10 ? (int)n : 10;
    for (int w = 0; w < workers && st == PF_OK; w++)
        st = m == M_DIRECT ? pf_dd_create(nm, max_nodes, &d[w])
                           : pf_nav_query_create(max_nodes, &q[w]);
    for (int w = 0; w < workers && st == PF_OK; w++)
        for (int i = 0; i < out->nq; i++) {
            nb_rec r;
            const nb_pair *pr = &pairs[((size_t)w * 10 + (size_t)i) % n];
            if (m == M_DIRECT)
                run_direct(d[w], pr, cpu, &r);
            else
                run_pathd(q[w], nm, pr, m == M_DETOUR ? PF_NAV_DETOUR : PF_NAV_POLYANYA, cpu, &r);
            out->us[w][i] = r.us;
        }
    for (int w = 0; w < workers; w++) {
        pf_nav_query_destroy(q[w]);
        pf_dd_destroy(d[w]);
    }
    return st;
}

/* The medians of fresh workers' first queries, also over the same pairs'
 * warm times rec[pair * M_N + m].us. */
static void first_figures(nb_first *f, const nb_rec *rec, size_t n, int m) {
    double a[FIRST_WORKERS], b[FIRST_WORKERS], c[FIRST_WORKERS], d[FIRST_WORKERS];
    if (!f->nq) return;
    for (int w = 0; w < f->workers; w++) {
        a[w] = f->us[w][0];
        c[w] = a[w] / rec[(((size_t)w * 10) % n) * M_N + (size_t)m].us;
        b[w] = d[w] = 0;
        for (int i = 0; i < f->nq; i++) {
            double warm = rec[(((size_t)w * 10 + (size_t)i) % n) * M_N + (size_t)m].us;
            if (f->us[w][i] > b[w]) b[w] = f->us[w][i];
            if (f->us[w][i] / warm > d[w]) d[w] = f->us[w][i] / warm;
        }
    }
    f->first_us = pct(a, (size_t)f->workers, 0.5);
    f->max10_us = pct(b, (size_t)f->workers, 0.5);
    f->first_x = pct(c, (size_t)f->workers, 0.5);
    f->max10_x = pct(d, (size_t)f->workers, 0.5);
}

static void write_pair_lines(FILE *f, const char *level, size_t i, const nb_pair *pr,
                             const nb_rec *r) {
    for (int m = 0; m < M_DIRECT; m++)
        fprintf(f,
                "%s\t%zu\t%s\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%s\t%s\t%.6f\t%u\t%u\t%.3f\t%s\t"
                "%.6f\t%u\t%u\t%.3f\n",
                level, i, pr->source, pr->s[0], pr->s[1], pr->s[2], pr->g[0], pr->g[1], pr->g[2],
                method_name[m], status_name[r[m].status], r[m].length, r[m].expanded, r[m].polygons,
                r[m].us, status_name[r[M_DIRECT].status], r[M_DIRECT].length, r[M_DIRECT].expanded,
                r[M_DIRECT].polygons, r[M_DIRECT].us);
}

#define PER_QUERY_HEADER                                                                           \
    "level\tpair\tsource\tstart_x\tstart_y\tstart_z\tgoal_x\tgoal_y\tgoal_z\talgorithm\tstatus\t"  \
    "length\texpanded\tpolygons\ttime_us\tdetour_direct_status\tdetour_direct_length\t"            \
    "detour_direct_expanded\tdetour_direct_polygons\tdetour_direct_time_us\n"

/* Every pair through the three methods, side by side: the first queries of
 * fresh workers, then a warm-up of up to 20 pairs, then each pair once by
 * each method in a rotating order (so no method always runs on the caches
 * another left). */
static pf_status measure(const char *level, const pf_navmesh *nm, const nb_pair *pairs, size_t n,
                         const nb_opts *o, FILE *per_query, nb_result *res) {
    memset(res, 0, sizeof *res);
    res->pairs = n;
    nb_rec *rec = calloc(n ? n * M_N : 1, sizeof *rec);
    double *tv[M_N], *uv[M_N];
    pf_nav_query *q = NULL;
    pf_dd *d = NULL;
    pf_status st = PF_ENOMEM;
    for (int m = 0; m < M_N; m++) {
        tv[m] = malloc((n ? n : 1) * sizeof(double));
        uv[m] = malloc((n ? n : 1) * sizeof(double));
    }
    if (!rec) goto out;
    for (int m = 0; m < M_N; m++)
        if (!tv[m] || !uv[m]) goto out;
    /* First queries: polyanya on the new version by a new worker, then
     * another new worker on the now warm version; Detour's. */
    if ((st = first_queries(nm, pairs, n, M_POLYANYA, 1, o->max_nodes, o->cpu_clock,
                            &res->first[0])) != PF_OK ||
        (st = first_queries(nm, pairs, n, M_POLYANYA, FIRST_WORKERS, o->max_nodes, o->cpu_clock,
                            &res->first[1])) != PF_OK ||
        (st = first_queries(nm, pairs, n, M_DETOUR, FIRST_WORKERS, o->max_nodes, o->cpu_clock,
                            &res->first_detour)) != PF_OK ||
        (st = first_queries(nm, pairs, n, M_DIRECT, FIRST_WORKERS, o->max_nodes, o->cpu_clock,
                            &res->first_direct)) != PF_OK)
        goto out;
    if ((st = pf_nav_query_create(o->max_nodes, &q)) != PF_OK ||
        (st = pf_dd_create(nm, o->max_nodes, &d)) != PF_OK)
        goto out;
    for (size_t i = 0; i < n && i < 20; i++) {
        nb_rec r;
        run_pathd(q, nm, &pairs[i], PF_NAV_POLYANYA, o->cpu_clock, &r);
        run_pathd(q, nm, &pairs[i], PF_NAV_DETOUR, o->cpu_clock, &r);
        run_direct(d, &pairs[i], o->cpu_clock, &r);
    }
    for (size_t i = 0; i < n; i++) {
        nb_rec *r = &rec[i * M_N];
        for (int k = 0; k < M_N; k++) {
            int m = (int)((i + (size_t)k) % M_N);
            if (m == M_DIRECT)
                run_direct(d, &pairs[i], o->cpu_clock, &r[m]);
            else
                run_pathd(q, nm, &pairs[i], m == M_DETOUR ? PF_NAV_DETOUR : PF_NAV_POLYANYA,
                          o->cpu_clock, &r[m]);
        }
        if (per_query) write_pair_lines(per_query, level, i, &pairs[i], r);
    }

    /* Figures. A pair is reachable when Detour direct reached the goal. */
    size_t nt = 0, nu = 0, both[2] = {0, 0}, nopt[2] = {0, 0};
    double lsum[2] = {0, 0}, osum[2] = {0, 0};
    for (int a = 0; a < 2; a++) {
        res->len_min[a] = INFINITY;
        res->len_max[a] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        const nb_rec *r = &rec[i * M_N];
        nb_status ds = r[M_DIRECT].status;
        if (ds == ST_OK) {
            for (int m = 0; m < M_N; m++) tv[m][nt] = r[m].us;
            nt++;
        } else if (ds == ST_PARTIAL) {
            for (int m = 0; m < M_N; m++) uv[m][nu] = r[m].us;
            nu++;
        } else {
            res->blocked++;
        }
        for (int a = 0; a < 2; a++) {
            if (r[a].status != ds) res->disagree[a]++;
            if (r[a].status == ST_OK && ds == ST_OK && r[M_DIRECT].length > 0) {
                double ratio = r[a].length / r[M_DIRECT].length;
                lsum[a] += ratio;
                if (ratio < res->len_min[a]) res->len_min[a] = ratio;
                if (ratio > res->len_max[a]) res->len_max[a] = ratio;
                if (ratio > 1.01) res->longer[a]++;
                both[a]++;
            }
            if (pairs[i].optimal > 0) {
                if (r[a].status != ST_OK) {
                    res->missed[a]++;
                    continue;
                }
                double ro = r[a].length / pairs[i].optimal;
                if (a == M_POLYANYA && ro > 1.02 + 1e-6) res->over++;
                osum[a] += ro;
                if (ro > res->opt_max[a]) res->opt_max[a] = ro;
                nopt[a]++;
            }
        }
    }
    if (n) {
        first_figures(&res->first[0], rec, n, M_POLYANYA);
        first_figures(&res->first[1], rec, n, M_POLYANYA);
        first_figures(&res->first_detour, rec, n, M_DETOUR);
        first_figures(&res->first_direct, rec, n, M_DIRECT);
    }
    res->reachable = nt;
    res->unreachable = nu;
    for (int a = 0; a < 2; a++) {
        res->len_mean[a] = both[a] ? lsum[a] / (double)both[a] : NAN;
        if (!both[a]) res->len_min[a] = res->len_max[a] = NAN;
        res->opt_mean[a] = nopt[a] ? osum[a] / (double)nopt[a] : NAN;
        if (!nopt[a]) res->opt_max[a] = NAN;
    }
    for (int m = 0; m < M_N; m++) {
        res->t[m] = stats_of(tv[m], nt);
        res->u[m] = stats_of(uv[m], nu);
    }
    st = PF_OK;
out:
    pf_nav_query_destroy(q);
    pf_dd_destroy(d);
    for (int m = 0; m < M_N; m++) {
        free(tv[m]);
        free(uv[m]);
    }
    free(rec);
    return st;
}

static void print_result_json(const nb_result *r) {
    printf("\"pairs\":%zu,\"reachable\":%zu,\"unreachable\":%zu,\"blocked\":%zu", r->pairs,
           r->reachable, r->unreachable, r->blocked);
    for (int m = 0; m < M_N; m++)
        printf(",\"%s_p50_us\":%.2f,\"%s_p99_us\":%.2f,\"%s_mean_us\":%.2f,"
               "\"%s_unreachable_p50_us\":%.2f,\"%s_unreachable_mean_us\":%.2f",
               method_name[m], r->t[m].p50, method_name[m], r->t[m].p99, method_name[m],
               r->t[m].mean, method_name[m], r->u[m].p50, method_name[m], r->u[m].mean);
    for (int a = 0; a < 2; a++)
        printf(",\"%s_x_direct_p50\":%.3f,\"%s_x_direct_p99\":%.3f,\"%s_x_direct_mean\":%.3f,"
               "\"%s_x_direct_unreachable_p50\":%.3f,\"%s_length_x_direct_mean\":%.5f,"
               "\"%s_length_x_direct_min\":%.5f,\"%s_length_x_direct_max\":%.5f,"
               "\"%s_longer\":%d,\"%s_disagree\":%d",
               method_name[a], r->t[a].p50 / r->t[M_DIRECT].p50, method_name[a],
               r->t[a].p99 / r->t[M_DIRECT].p99, method_name[a], r->t[a].mean / r->t[M_DIRECT].mean,
               method_name[a], r->u[a].p50 / r->u[M_DIRECT].p50, method_name[a], r->len_mean[a],
               method_name[a], r->len_min[a], method_name[a], r->len_max[a], method_name[a],
               r->longer[a], method_name[a], r->disagree[a]);
    printf(",\"first_version_polyanya_us\":%.2f,\"first_version_polyanya_x_warm\":%.2f,"
           "\"first_version_polyanya_max10_us\":%.2f,\"first_version_polyanya_max10_x_warm\":%.2f",
           r->first[0].first_us, r->first[0].first_x, r->first[0].max10_us, r->first[0].max10_x);
    const nb_first *fw[M_N] = {&r->first[1], &r->first_detour, &r->first_direct};
    for (int m = 0; m < M_N; m++)
        printf(",\"first_worker_%s_us\":%.2f,\"first_worker_%s_x_warm\":%.2f,"
               "\"first_worker_%s_max10_us\":%.2f,\"first_worker_%s_max10_x_warm\":%.2f",
               method_name[m], fw[m]->first_us, method_name[m], fw[m]->first_x, method_name[m],
               fw[m]->max10_us, method_name[m], fw[m]->max10_x);
}

static void print_result_text(const nb_result *r) {
    printf("  pairs      %zu: %zu reachable, %zu unreachable (Detour direct's partial answer), "
           "%zu off the mesh\n",
           r->pairs, r->reachable, r->unreachable, r->blocked);
    printf("  %-14s p50 %8.1f us  p99 %8.1f us  mean %8.1f us  unreachable p50 %8.1f us\n",
           "detour direct", r->t[M_DIRECT].p50, r->t[M_DIRECT].p99, r->t[M_DIRECT].mean,
           r->u[M_DIRECT].p50);
    for (int a = 0; a < 2; a++)
        printf("  %-14s p50 %8.1f us (x%.2f)  p99 %8.1f us (x%.2f)  mean %8.1f us (x%.2f)  "
               "unreachable p50 %8.1f us (x%.2f)\n"
               "  %-14s length / Detour direct's mean %.4f min %.4f max %.4f, %d over 1.01, "
               "%d answers differ\n",
               method_name[a], r->t[a].p50, r->t[a].p50 / r->t[M_DIRECT].p50, r->t[a].p99,
               r->t[a].p99 / r->t[M_DIRECT].p99, r->t[a].mean, r->t[a].mean / r->t[M_DIRECT].mean,
               r->u[a].p50, r->u[a].p50 / r->u[M_DIRECT].p50, "", r->len_mean[a], r->len_min[a],
               r->len_max[a], r->longer[a], r->disagree[a]);
    printf("  first      polyanya on the new version: its first query %.1f us (x%.1f the pair "
           "warm), largest of its first ten %.1f us (x%.1f; the first of the process on "
           "this mesh: cold code and data, its polyanya view made with the version)\n",
           r->first[0].first_us, r->first[0].first_x, r->first[0].max10_us, r->first[0].max10_x);
    const nb_first *fw[M_N] = {&r->first[1], &r->first_detour, &r->first_direct};
    for (int m = 0; m < M_N; m++)
        printf("  first      %-14s a new worker's first query %7.1f us (x%.1f the pair warm), "
               "largest of its first ten %7.1f us (x%.1f); medians of %d workers\n",
               m == M_DIRECT ? "detour direct" : method_name[m], fw[m]->first_us, fw[m]->first_x,
               fw[m]->max10_us, fw[m]->max10_x, fw[m]->workers);
}

/* ---- 3D levels: OBJ files and generated ones ---- */

/* RecastDemo's path test cases for an OBJ: the "pf sx sy sz ex ey ez"
 * lines of nav_mesh_test.txt in the OBJ's folder, when that file's "f"
 * line names the OBJ. */
static size_t demo_pairs(const char *objpath, nb_pair *out, size_t max) {
    char dir[1024], line[512], file[256] = "";
    const char *slash = strrchr(objpath, '/');
    const char *base = slash ? slash + 1 : objpath;
    int dl = slash ? (int)(slash - objpath) : 1;
    snprintf(dir, sizeof dir, "%.*s/nav_mesh_test.txt", dl, slash ? objpath : ".");
    FILE *f = fopen(dir, "r");
    size_t n = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        nb_pair p;
        memset(&p, 0, sizeof p);
        if (sscanf(line, "f %255s", file) == 1) continue;
        if (strcmp(file, base) != 0 || n == max) continue;
        if (sscanf(line, "pf %f %f %f %f %f %f", &p.s[0], &p.s[1], &p.s[2], &p.g[0], &p.g[1],
                   &p.g[2]) == 6) {
            p.optimal = -1;
            p.source = "demo";
            out[n++] = p;
        }
    }
    fclose(f);
    return n;
}

/* The pairs of a 3D level: RecastDemo's cases (nav_test.obj), then
 * --max-queries pairs of random points of the mesh, then up to
 * --unreachable pairs drawn until Detour direct does not reach the goal. */
static pf_status level_pairs(const char *path, const pf_navmesh *nm, const nb_opts *o,
                             nb_pair **out, size_t *nout) {
    size_t cap = 64 + o->max_queries + (size_t)o->unreachable, n = 0;
    nb_pair *p = calloc(cap, sizeof *p);
    pf_dd *d = NULL;
    pf_status st = PF_ENOMEM;
    uint64_t rng = o->seed ^ 0x5eedULL;
    *out = NULL;
    *nout = 0;
    if (!p || (st = pf_dd_create(nm, o->max_nodes, &d)) != PF_OK) goto out;
    n = demo_pairs(path, p, 64);
    for (size_t k = 0; k < o->max_queries; k++) {
        if (!pf_dd_random_point(d, &rng, p[n].s) || !pf_dd_random_point(d, &rng, p[n].g)) break;
        p[n].optimal = -1;
        p[n++].source = "random";
    }
    for (int k = 0, tries = 0; k < o->unreachable && tries < 200 * o->unreachable; tries++) {
        pf_dd_path dp;
        if (!pf_dd_random_point(d, &rng, p[n].s) || !pf_dd_random_point(d, &rng, p[n].g)) break;
        if (!pf_dd_path_find(d, p[n].s, p[n].g, NULL, &dp) || !dp.found || dp.reached) continue;
        p[n].optimal = -1;
        p[n++].source = "unreachable";
        k++;
    }
    *out = p;
    *nout = n;
    p = NULL;
    st = PF_OK;
out:
    pf_dd_destroy(d);
    free(p);
    return st;
}

/* An OBJ file, or "gen:NAME" (levels.h), built with RecastDemo's settings
 * (pf_nav_default_config), then measured. */
static int bench_level(const char *path, const nb_opts *o) {
    pf_bench_level lvl;
    pf_nav_error nerr;
    pf_navmesh *nm = NULL;
    nb_pair *pairs = NULL;
    size_t n = 0;
    int rc = EXIT_USAGE;
    memset(&lvl, 0, sizeof lvl);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    pf_nav_limits lim = pf_nav_default_limits();
    if (pf_bench_level_load(path, o->seed, &lim, "pathd-bench", &lvl) != PF_OK) goto out;
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.geom = &lvl.geom;
    in.config = pf_nav_default_config();
    lim.build_ms = 3600000; /* a sanitizer build is slow; the bench measures, it does not stop */
    int threads = o->threads;
    pf_nav_runner run = {nb_run, &threads};
    double w0 = clock_us(false), c0 = process_cpu_us();
    pf_status st = pf_nav_build(&in, &lim, &run, &nm, &nerr);
    double build_wall = (clock_us(false) - w0) / 1e3, build_cpu = (process_cpu_us() - c0) / 1e3;
    if (st != PF_OK) {
        fprintf(stderr, "pathd-bench: %s: navmesh build: %s: %s\n", path, nerr.field, nerr.message);
        rc = EXIT_MISMATCH;
        goto out;
    }
    pf_nav_info info;
    pf_navmesh_info(nm, &info);
    if ((st = level_pairs(path, nm, o, &pairs, &n)) != PF_OK) {
        fprintf(stderr, "pathd-bench: %s: pairs: %s\n", path, pf_status_str(st));
        goto out;
    }
    nb_result res;
    if ((st = measure(name, nm, pairs, n, o, o->per_query, &res)) != PF_OK) {
        fprintf(stderr, "pathd-bench: %s: queries: %s\n", path, pf_status_str(st));
        goto out;
    }
    rc = res.disagree[0] || res.disagree[1] ? EXIT_MISMATCH : 0;
    if (o->json) {
        printf("{\"mode\":\"navmesh\",\"level\":\"%s\",\"clock\":\"%s\",\"triangles\":%u,"
               "\"build_wall_ms\":%.1f,\"build_cpu_ms\":%.1f,\"threads\":%d,\"polygons\":%u,"
               "\"tiles\":%u,\"mesh_bytes\":%zu,\"max_nodes\":%u,",
               name, o->cpu_clock ? "cpu" : "wall", lvl.geom.ntris, build_wall, build_cpu,
               o->threads, info.polygons, info.tiles, info.mesh_bytes, o->max_nodes);
        print_result_json(&res);
        printf("}\n");
    } else {
        printf("%s (%u triangles, %s clock)\n", name, lvl.geom.ntris,
               o->cpu_clock ? "cpu" : "wall");
        printf("  build      %8.1f ms wall on %d threads, %8.1f ms cpu; %u polygons in %u tiles, "
               "mesh %zu KiB\n",
               build_wall, o->threads, build_cpu, info.polygons, info.tiles,
               info.mesh_bytes / 1024);
        print_result_text(&res);
    }
    fflush(stdout);
out:
    free(pairs);
    pf_navmesh_release(nm);
    pf_bench_level_free(&lvl);
    return rc;
}

/* ---- grid maps: Moving AI scenarios ---- */

static int bench_file(const char *path, const nb_opts *o) {
    pf_bench_scen_opts so;
    memset(&so, 0, sizeof so);
    so.max_queries = o->max_queries;
    so.cpu_clock = o->cpu_clock;
    so.landmark_bytes = PF_PLANNER_DEFAULT_LANDMARK_BYTES;
    so.landmark_min_cells = PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS;
    pf_bench_scen *sc = NULL;
    char err[256];
    if (pf_bench_scen_load(path, &so, &sc, err, sizeof err) != PF_OK) {
        fprintf(stderr, "pathd-bench: %s\n", err);
        return EXIT_USAGE;
    }
    const pf_grid *g = pf_planner_grid(pf_bench_scen_planner(sc));
    size_t n = 0;
    const pf_scen_entry *e = pf_bench_scen_entries(sc, &n);
    int rc = 0;

    /* Build. */
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.grid = g;
    in.config = pf_nav_default_grid_config();
    int threads = o->threads;
    pf_nav_runner run = {nb_run, &threads};
    pf_navmesh *nm = NULL;
    pf_nav_error nerr;
    double w0 = clock_us(false), c0 = process_cpu_us();
    pf_status st = pf_nav_build(&in, NULL, &run, &nm, &nerr);
    double build_wall = (clock_us(false) - w0) / 1e3, build_cpu = (process_cpu_us() - c0) / 1e3;
    if (st != PF_OK) {
        fprintf(stderr, "pathd-bench: %s: navmesh build: %s: %s\n", path, nerr.field, nerr.message);
        pf_bench_scen_destroy(sc);
        return EXIT_MISMATCH;
    }
    pf_nav_info info;
    pf_navmesh_info(nm, &info);

    /* Paths: jps, then the navmesh on the same queries. */
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_report jr;
    pf_bench_scen_run(sc, ctx, PF_ALGO_JPS, &jr);
    pf_search_ctx_destroy(ctx);
    nb_pair *pairs = calloc(n ? n : 1, sizeof *pairs);
    if (!pairs) {
        pf_navmesh_release(nm);
        pf_bench_scen_destroy(sc);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < n; i++) {
        pairs[i].s[0] = (float)e[i].start.x + 0.5f;
        pairs[i].s[2] = (float)e[i].start.y + 0.5f;
        pairs[i].g[0] = (float)e[i].goal.x + 0.5f;
        pairs[i].g[2] = (float)e[i].goal.y + 0.5f;
        pairs[i].optimal = e[i].optimal;
        pairs[i].source = "scen";
    }
    nb_result res;
    st = measure(pf_bench_scen_name(sc), nm, pairs, n, o, o->per_query, &res);
    free(pairs);
    if (st != PF_OK) {
        fprintf(stderr, "pathd-bench: %s: queries: %s\n", path, pf_status_str(st));
        pf_navmesh_release(nm);
        pf_bench_scen_destroy(sc);
        return EXIT_USAGE;
    }
    if (res.missed[0] || res.over || res.missed[1]) rc = EXIT_MISMATCH;

    /* Obstacles: put a 2x2 box, then remove it, each from the build. */
    uint64_t seed = o->seed;
    double *put = malloc((size_t)(o->obstacles ? o->obstacles : 1) * sizeof(double));
    double *rem = malloc((size_t)(o->obstacles ? o->obstacles : 1) * sizeof(double));
    double rebuilt = 0;
    for (int k = 0; k < o->obstacles; k++) {
        pf_point c = random_cell(&seed, g);
        pf_nav_obstacle ob;
        memset(&ob, 0, sizeof ob);
        snprintf(ob.id, sizeof ob.id, "bench");
        ob.shape = PF_NAV_BOX;
        ob.bmin[0] = (float)c.x;
        ob.bmin[1] = -1;
        ob.bmin[2] = (float)c.y;
        ob.bmax[0] = (float)c.x + 2;
        ob.bmax[1] = 2;
        ob.bmax[2] = (float)c.y + 2;
        pf_nav_change ch;
        memset(&ch, 0, sizeof ch);
        ch.put = &ob;
        ch.nput = 1;
        pf_navmesh *v1 = NULL, *v2 = NULL;
        double t0 = clock_us(o->cpu_clock);
        st = pf_nav_apply(nm, &ch, NULL, &run, &v1, &nerr);
        put[k] = (clock_us(o->cpu_clock) - t0) / 1e3;
        if (st != PF_OK) {
            fprintf(stderr, "pathd-bench: %s: put: %s\n", path, nerr.message);
            rc = EXIT_MISMATCH;
            break;
        }
        pf_nav_info vi;
        pf_navmesh_info(v1, &vi);
        rebuilt += vi.rebuilt_tiles;
        const char *ids[] = {"bench"};
        memset(&ch, 0, sizeof ch);
        ch.remove = ids;
        ch.nremove = 1;
        t0 = clock_us(o->cpu_clock);
        st = pf_nav_apply(v1, &ch, NULL, &run, &v2, &nerr);
        rem[k] = (clock_us(o->cpu_clock) - t0) / 1e3;
        pf_navmesh_release(v1);
        pf_navmesh_release(v2);
        if (st != PF_OK) {
            rc = EXIT_MISMATCH;
            break;
        }
    }

    /* Crowds. */
    double crowd_p50[8], crowd_p99[8];
    for (int ci = 0; ci < o->ncrowd; ci++) {
        int na = o->crowd_sizes[ci];
        crowd_p50[ci] = crowd_p99[ci] = NAN;
        pf_nav_crowd *c = NULL;
        if (pf_nav_crowd_create(nm, (uint32_t)na, &c) != PF_OK) continue;
        pf_nav_agent_params ap = pf_nav_default_agent(nm);
        for (int i = 0, tries = 0; i < na && tries < 20 * na; tries++) {
            pf_point a = random_cell(&seed, g), b = random_cell(&seed, g);
            float pa3[3] = {(float)a.x + 0.5f, 0, (float)a.y + 0.5f};
            float pb3[3] = {(float)b.x + 0.5f, 0, (float)b.y + 0.5f};
            int32_t id;
            const char *which;
            if (pf_nav_crowd_add(c, pa3, pb3, &ap, &id, &which) == PF_OK) i++;
        }
        for (int s = 0; s < 10; s++) pf_nav_crowd_step(c, 0.05f, NULL);
        double *steps = malloc((size_t)(o->crowd_steps ? o->crowd_steps : 1) * sizeof(double));
        for (int s = 0; s < o->crowd_steps; s++) {
            double t0 = clock_us(o->cpu_clock);
            pf_nav_crowd_step(c, 0.05f, NULL);
            steps[s] = (clock_us(o->cpu_clock) - t0) / 1e3;
        }
        crowd_p50[ci] = pct(steps, (size_t)o->crowd_steps, 0.5);
        crowd_p99[ci] = pct(steps, (size_t)o->crowd_steps, 0.99);
        free(steps);
        pf_nav_crowd_destroy(c);
    }

    const char *name = pf_bench_scen_name(sc);
    double put50 = pct(put, (size_t)o->obstacles, 0.5),
           put99 = pct(put, (size_t)o->obstacles, 0.99);
    double rem50 = pct(rem, (size_t)o->obstacles, 0.5),
           rem99 = pct(rem, (size_t)o->obstacles, 0.99);
    if (o->json) {
        printf("{\"mode\":\"navmesh\",\"map\":\"%s\",\"map_w\":%d,\"map_h\":%d,\"clock\":\"%s\","
               "\"queries\":%zu,\"build_wall_ms\":%.1f,\"build_cpu_ms\":%.1f,\"threads\":%d,"
               "\"polygons\":%u,\"tiles\":%u,\"mesh_bytes\":%zu,\"layer_bytes\":%zu,"
               "\"jps_p50_us\":%.2f,\"jps_p99_us\":%.2f,"
               "\"polyanya_mean_ratio\":%.4f,\"polyanya_max_ratio\":%.4f,\"polyanya_missed\":%d,"
               "\"detour_mean_ratio\":%.4f,\"detour_max_ratio\":%.4f,\"detour_missed\":%d,",
               name, pf_grid_width(g), pf_grid_height(g), o->cpu_clock ? "cpu" : "wall", n,
               build_wall, build_cpu, o->threads, info.polygons, info.tiles, info.mesh_bytes,
               info.layer_bytes, jr.p50_us, jr.p99_us, res.opt_mean[0], res.opt_max[0],
               res.missed[0], res.opt_mean[1], res.opt_max[1], res.missed[1]);
        print_result_json(&res);
        printf(",\"obstacles\":%d,\"put_p50_ms\":%.3f,\"put_p99_ms\":%.3f,\"remove_p50_ms\":%.3f,"
               "\"remove_p99_ms\":%.3f,\"mean_rebuilt_tiles\":%.2f,\"crowds\":[",
               o->obstacles, put50, put99, rem50, rem99,
               o->obstacles ? rebuilt / o->obstacles : 0.0);
        for (int ci = 0; ci < o->ncrowd; ci++)
            printf("%s{\"agents\":%d,\"step_p50_ms\":%.3f,\"step_p99_ms\":%.3f}", ci ? "," : "",
                   o->crowd_sizes[ci], crowd_p50[ci], crowd_p99[ci]);
        printf("]}\n");
    } else {
        printf("%s (%dx%d, %zu queries, %s clock)\n", name, pf_grid_width(g), pf_grid_height(g), n,
               o->cpu_clock ? "cpu" : "wall");
        printf("  build      %8.1f ms wall on %d threads, %8.1f ms cpu; %u polygons in %u tiles, "
               "mesh %zu KiB, layers %zu KiB\n",
               build_wall, o->threads, build_cpu, info.polygons, info.tiles, info.mesh_bytes / 1024,
               info.layer_bytes / 1024);
        printf("  jps        p50 %9.1f us  p99 %9.1f us\n", jr.p50_us, jr.p99_us);
        print_result_text(&res);
        for (int a = 0; a < 2; a++)
            printf("  %-10s x%.2f jps (p50)  length/optimum mean %.4f max %.4f  missed %d\n",
                   method_name[a], res.t[a].p50 / jr.p50_us, res.opt_mean[a], res.opt_max[a],
                   res.missed[a]);
        if (o->obstacles)
            printf("  obstacles  put p50 %.3f ms p99 %.3f ms; remove p50 %.3f ms p99 %.3f ms; "
                   "%.1f tiles rebuilt per change\n",
                   put50, put99, rem50, rem99, rebuilt / o->obstacles);
        for (int ci = 0; ci < o->ncrowd; ci++)
            printf("  crowd %5d step p50 %.3f ms p99 %.3f ms\n", o->crowd_sizes[ci], crowd_p50[ci],
                   crowd_p99[ci]);
    }
    fflush(stdout);
    free(put);
    free(rem);
    pf_navmesh_release(nm);
    pf_bench_scen_destroy(sc);
    return rc;
}

int pf_bench_navmesh_main(int argc, char **argv) {
    static const struct option longopts[] = {{"max-queries", required_argument, NULL, 'n'},
                                             {"clock", required_argument, NULL, 't'},
                                             {"threads", required_argument, NULL, 'T'},
                                             {"obstacles", required_argument, NULL, 'o'},
                                             {"crowd", required_argument, NULL, 'c'},
                                             {"crowd-steps", required_argument, NULL, 's'},
                                             {"seed", required_argument, NULL, 'S'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"max-nodes", required_argument, NULL, 'N'},
                                             {"unreachable", required_argument, NULL, 'U'},
                                             {"per-query", required_argument, NULL, 'P'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    nb_opts o;
    memset(&o, 0, sizeof o);
    o.max_queries = 200;
    o.threads = 2;
    o.obstacles = 40;
    o.crowd_steps = 50;
    o.seed = 1;
    o.max_nodes = 65535;
    o.unreachable = 20;
    const char *per_query_path = NULL;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end = NULL;
        long v;
        switch (opt) {
        case 'n':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 1) goto bad;
            o.max_queries = (size_t)v;
            break;
        case 't':
            if (strcmp(optarg, "cpu") == 0)
                o.cpu_clock = true;
            else if (strcmp(optarg, "wall") != 0)
                goto bad;
            break;
        case 'T':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 1 || v > 16) goto bad;
            o.threads = (int)v;
            break;
        case 'o':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 0 || v > 100000) goto bad;
            o.obstacles = (int)v;
            break;
        case 's':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 1 || v > 100000) goto bad;
            o.crowd_steps = (int)v;
            break;
        case 'S':
            o.seed = strtoull(optarg, &end, 0);
            if (!end || *end) goto bad;
            break;
        case 'c': {
            const char *p = optarg;
            o.ncrowd = 0;
            while (*p) {
                v = strtol(p, &end, 10);
                if (end == p || v < 1 || v > 65535 || o.ncrowd == 8) goto bad;
                o.crowd_sizes[o.ncrowd++] = (int)v;
                p = end;
                if (*p == ',')
                    p++;
                else if (*p)
                    goto bad;
            }
            break;
        }
        case 'j':
            o.json = true;
            break;
        case 'N':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 1 || v > 65535) goto bad;
            o.max_nodes = (uint32_t)v;
            break;
        case 'U':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 0 || v > 100000) goto bad;
            o.unreachable = (int)v;
            break;
        case 'P':
            per_query_path = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            goto bad;
        }
    }
    if (optind >= argc) goto bad;
    if (per_query_path) {
        if (!(o.per_query = fopen(per_query_path, "w"))) {
            fprintf(stderr, "pathd-bench: --per-query %s: %s\n", per_query_path, strerror(errno));
            return EXIT_USAGE;
        }
        fputs(PER_QUERY_HEADER, o.per_query);
    }
    int rc = 0;
    for (int i = optind; i < argc; i++) {
        size_t len = strlen(argv[i]);
        bool scen = len > 5 && strcmp(argv[i] + len - 5, ".scen") == 0;
        int r = scen ? bench_file(argv[i], &o) : bench_level(argv[i], &o);
        if (r > rc) rc = r;
    }
    if (o.per_query && fclose(o.per_query) != 0) {
        fprintf(stderr, "pathd-bench: --per-query %s: %s\n", per_query_path, strerror(errno));
        rc = EXIT_USAGE;
    }
    return rc;
bad:
    usage(stderr);
    return EXIT_USAGE;
}
