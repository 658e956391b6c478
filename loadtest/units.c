/* units.c -- the many-units benchmarks: flow fields, distance tables and
 * agent sizes, in-process against core, each measured side by side with the
 * per-query astar it replaces, in one process and on one clock.
 *
 * flowfield: per map, for G rally points (the goals of G scenario entries
 * spread over the file): the field's build time (median of R builds), then
 * M units on random cells that reach the goal, each timed with one astar to
 * the goal (pf_planner_search, the server's dispatch) and with the walk along
 * the field's directions. With N units the astars cost N x astar and the
 * field costs build + N x walk, so the field pays from
 *   break-even N = build / (astar - walk)
 * units on. Every astar cost is checked against the field's cost to go.
 *
 * table: S sources and T targets on random cells of one connected region;
 * the table's time (median of R) against S x T astar queries, timed once,
 * and the entries checked against them.
 *
 * agents: the same scenario queries (those where the largest size fits at
 * both ends) for size 1 and each size asked, interleaved query by query:
 * per size the median over queries of t(size n) / t(size 1), the ratio of
 * the totals, and the mean path cost ratio (larger agents detour); plus the
 * one-time cost of each size's agent grid (and hierarchy with --algorithm
 * hpa), built on first use as the server builds them.
 */
#include "units.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents.h"
#include "flowfield.h"
#include "planner.h"
#include "report.h"
#include "scen.h"
#include "table.h"

#define EXIT_MISMATCH 1
#define EXIT_USAGE 2

typedef struct common_opts {
    clockid_t clock;
    bool json;
    size_t runs;
    uint64_t seed;
} common_opts;

static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static bool close_cost(double a, double b) {
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= 1e-9 * (1.0 + fabs(a) + fabs(b));
}

static bool parse_count(const char *s, size_t lo, size_t hi, size_t *out) {
    char *end;
    unsigned long long v;
    if (!*s || *s == '-') return false;
    v = strtoull(s, &end, 10);
    if (*end || v < lo || v > hi) return false;
    *out = (size_t)v;
    return true;
}

/* Options every subcommand takes: --clock, --json, --runs, --seed.
 * Returns 1 when handled, 0 when not one of them, -1 on a bad value. */
static int common_opt(int opt, const char *arg, common_opts *c) {
    switch (opt) {
    case 't':
        if (!pf_report_clock_from_name(arg, &c->clock)) {
            fprintf(stderr, "pathd-bench: --clock wants wall or cpu\n");
            return -1;
        }
        return 1;
    case 'j':
        c->json = true;
        return 1;
    case 'r':
        if (!parse_count(arg, 1, 1000, &c->runs)) {
            fprintf(stderr, "pathd-bench: --runs wants 1..1000\n");
            return -1;
        }
        return 1;
    case 's': {
        char *end;
        c->seed = strtoull(arg, &end, 0);
        if (*end) {
            fprintf(stderr, "pathd-bench: --seed wants an integer\n");
            return -1;
        }
        return 1;
    }
    default:
        return 0;
    }
}

#define COMMON_LONGOPTS                                                                            \
    {"clock", required_argument, NULL, 't'}, {"json", no_argument, NULL, 'j'},                     \
        {"runs", required_argument, NULL, 'r'}, {"seed", required_argument, NULL, 's'}, {          \
        "help", no_argument, NULL, 'h'                                                             \
    }

static const char common_help[] =
    "  --runs R         timed repetitions of each build (default 5; the median is reported)\n"
    "  --clock wall|cpu CLOCK_MONOTONIC (default) or the thread's CPU clock, which leaves out\n"
    "                   time descheduled on a busy machine\n"
    "  --seed N         the random cells (default 1)\n"
    "  --json           one JSON object per map\n";

static void common_defaults(common_opts *c) {
    c->clock = CLOCK_MONOTONIC;
    c->json = false;
    c->runs = 5;
    c->seed = 1;
}

static double median_of(double *v, size_t n) { return pf_report_median(v, n); }

/* Loads one scenario file for these benchmarks. */
static pf_bench_scen *load(const char *path, bool hpa) {
    pf_bench_scen_opts o;
    pf_bench_scen *s = NULL;
    char err[512] = "";
    memset(&o, 0, sizeof(o));
    o.build_hpa = hpa;
    if (pf_bench_scen_load(path, &o, &s, err, sizeof(err))) {
        fprintf(stderr, "pathd-bench: %s\n", err[0] ? err : path);
        return NULL;
    }
    return s;
}

/* flowfield */

static void flowfield_usage(FILE *f) {
    fprintf(f,
            "usage: pathd-bench flowfield [--goals G] [--units M] [--algorithm A] [options]\n"
            "                             FILE.scen...\n"
            "\n"
            "Per map: flow field build time for G rally points (default 3, the goals of\n"
            "entries spread over the file), M units (default 200) on random cells that\n"
            "reach the goal timed with one search each (--algorithm: astar, the default,\n"
            "or any other; optimal ones are checked against the field) and with a walk\n"
            "along the field, and the break-even unit count build / (search - walk).\n"
            "The summary gives the median break-even over the maps of exactly 512x512\n"
            "cells.\n\n%s",
            common_help);
}

int pf_bench_flowfield_main(int argc, char **argv) {
    static const struct option longopts[] = {{"goals", required_argument, NULL, 'g'},
                                             {"units", required_argument, NULL, 'u'},
                                             {"algorithm", required_argument, NULL, 'a'},
                                             COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    common_opts c;
    pf_algorithm algo = PF_ALGO_ASTAR;
    size_t ngoals = 3, nunits = 200, n512 = 0;
    double be512[64];
    int opt, rc = 0;
    pf_search_ctx *ctx;

    common_defaults(&c);
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int k = common_opt(opt, optarg, &c);
        if (k < 0) return EXIT_USAGE;
        if (k) continue;
        if (opt == 'g' && parse_count(optarg, 1, 64, &ngoals)) continue;
        if (opt == 'u' && parse_count(optarg, 1, 100000, &nunits)) continue;
        if (opt == 'a' && pf_algorithm_from_name(optarg, &algo) && algo != PF_ALGO_DSTAR) continue;
        if (opt == 'h') {
            flowfield_usage(stdout);
            return 0;
        }
        flowfield_usage(stderr);
        return EXIT_USAGE;
    }
    if (optind >= argc) {
        flowfield_usage(stderr);
        return EXIT_USAGE;
    }
    ctx = pf_search_ctx_create();
    if (!ctx) return EXIT_USAGE;
    for (int i = optind; i < argc; i++) {
        pf_bench_scen *s = load(argv[i], algo == PF_ALGO_HPA);
        size_t ne, nb = 0, mism = 0, units_timed = 0;
        double build[64 * 16], astar_sum = 0, walk_sum = 0, *astar_all;
        uint64_t st = c.seed, settled = 0;
        if (!s) {
            rc = EXIT_USAGE;
            continue;
        }
        const pf_planner *p = pf_bench_scen_planner(s);
        const pf_grid *g = pf_planner_grid(p);
        const pf_scen_entry *e = pf_bench_scen_entries(s, &ne);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        astar_all = malloc(ngoals * nunits * sizeof(*astar_all));
        if (!astar_all || ne == 0) {
            free(astar_all);
            pf_bench_scen_destroy(s);
            continue;
        }
        for (size_t k = 0; k < ngoals; k++) {
            pf_point goal = e[k * ne / ngoals].goal;
            pf_flow_query q = {&goal, 1, false, {0, 0, 0, 0}, NULL, NULL, 0};
            pf_flowfield *f = NULL;
            for (size_t r = 0; r < c.runs; r++) {
                double t0 = pf_report_now_us(c.clock);
                if (pf_flowfield_build(ctx, g, &q, &f, NULL)) {
                    fprintf(stderr, "pathd-bench: %s: flow field failed\n", argv[i]);
                    rc = EXIT_USAGE;
                    break;
                }
                if (nb < sizeof(build) / sizeof(build[0]))
                    build[nb++] = pf_report_now_us(c.clock) - t0;
                if (r + 1 < c.runs) pf_flowfield_destroy(f);
            }
            if (!f) continue;
            pf_flow_stats fs;
            pf_flowfield_get_stats(f, &fs);
            settled = fs.expanded;
            for (size_t u = 0; u < nunits && fs.reachable > 1; u++) {
                pf_point a;
                do {
                    a.x = (int32_t)(rnd(&st) % (uint64_t)w);
                    a.y = (int32_t)(rnd(&st) % (uint64_t)h);
                } while (isinf(pf_flowfield_cost_at(f, a)));
                pf_query aq = pf_query_make(a, goal, algo);
                pf_result res;
                double t0 = pf_report_now_us(c.clock), t1, t2, acc = 0;
                pf_status rs = pf_planner_search(ctx, p, &aq, &res);
                t1 = pf_report_now_us(c.clock);
                for (pf_point x = a; pf_flowfield_dir_at(f, x) != PF_FLOW_GOAL;) {
                    uint8_t d = pf_flowfield_dir_at(f, x);
                    pf_point y = {x.x + pf_dir_dx[d], x.y + pf_dir_dy[d]};
                    acc += pf_grid_step_cost(g, x, y);
                    x = y;
                }
                t2 = pf_report_now_us(c.clock);
                if (rs != PF_OK || !close_cost(acc, pf_flowfield_cost_at(f, a)) ||
                    (pf_algorithm_is_optimal(algo) && !close_cost(res.cost, acc)) ||
                    res.cost < acc - 1e-6 * (1 + acc))
                    mism++;
                astar_all[units_timed++] = t1 - t0;
                astar_sum += t1 - t0;
                walk_sum += t2 - t1;
            }
            pf_flowfield_destroy(f);
        }
        if (units_timed && nb) {
            double bmed = median_of(build, nb), am = astar_sum / (double)units_timed;
            double wm = walk_sum / (double)units_timed, ap50 = median_of(astar_all, units_timed);
            double be = am > wm ? bmed / (am - wm) : INFINITY;
            if (w == 512 && h == 512 && n512 < 64) be512[n512++] = be;
            if (c.json)
                printf("{\"map\":\"%s\",\"width\":%d,\"height\":%d,\"field_build_ms\":%.3f,"
                       "\"settled\":%llu,\"algorithm\":\"%s\",\"search_mean_us\":%.2f,"
                       "\"search_p50_us\":%.2f,\"walk_mean_us\":%.3f,\"units\":%zu,"
                       "\"break_even_units\":%.1f,\"mismatches\":%zu}\n",
                       pf_bench_scen_name(s), w, h, bmed / 1000.0, (unsigned long long)settled,
                       pf_algorithm_name(algo), am, ap50, wm, units_timed, be, mism);
            else
                printf("%-16.16s %5dx%-5d field p50 %7.2f ms  %s mean %8.1f us (p50 %7.1f)  "
                       "walk %6.2f us  break-even %6.0f units  mismatches %zu\n",
                       pf_bench_scen_name(s), w, h, bmed / 1000.0, pf_algorithm_name(algo), am,
                       ap50, wm, be, mism);
            fflush(stdout);
        }
        if (mism) rc = rc ? rc : EXIT_MISMATCH;
        free(astar_all);
        pf_bench_scen_destroy(s);
    }
    if (!c.json && n512)
        printf("median break-even over %zu maps of 512x512: %.0f units\n", n512,
               median_of(be512, n512));
    pf_search_ctx_destroy(ctx);
    return rc;
}

/* table */

static void table_usage(FILE *f) {
    fprintf(f,
            "usage: pathd-bench table [--sources S] [--targets T] [options] FILE.scen...\n"
            "\n"
            "Per map: an S x T distance table (default 50 x 50) between random cells of\n"
            "one connected region, timed R times (median), against the S x T astar\n"
            "queries it answers, timed once; every entry is checked against its astar.\n\n%s",
            common_help);
}

int pf_bench_table_main(int argc, char **argv) {
    static const struct option longopts[] = {{"sources", required_argument, NULL, 'S'},
                                             {"targets", required_argument, NULL, 'T'},
                                             COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    common_opts c;
    size_t ns = 50, nt = 50;
    int opt, rc = 0;
    pf_search_ctx *ctx;

    common_defaults(&c);
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int k = common_opt(opt, optarg, &c);
        if (k < 0) return EXIT_USAGE;
        if (k) continue;
        if (opt == 'S' && parse_count(optarg, 1, PF_TABLE_MAX_SIDE, &ns)) continue;
        if (opt == 'T' && parse_count(optarg, 1, PF_TABLE_MAX_SIDE, &nt)) continue;
        if (opt == 'h') {
            table_usage(stdout);
            return 0;
        }
        table_usage(stderr);
        return EXIT_USAGE;
    }
    if (optind >= argc) {
        table_usage(stderr);
        return EXIT_USAGE;
    }
    ctx = pf_search_ctx_create();
    if (!ctx) return EXIT_USAGE;
    for (int i = optind; i < argc; i++) {
        pf_bench_scen *s = load(argv[i], false);
        size_t ne, mism = 0;
        uint64_t st = c.seed;
        if (!s) {
            rc = EXIT_USAGE;
            continue;
        }
        const pf_planner *p = pf_bench_scen_planner(s);
        const pf_grid *g = pf_planner_grid(p);
        const pf_scen_entry *e = pf_bench_scen_entries(s, &ne);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        pf_point *src = malloc((ns + nt) * sizeof(*src)), *tgt;
        double *costs = malloc(ns * nt * sizeof(*costs)), times[1000], astar_total = 0;
        pf_flowfield *reach = NULL;
        pf_point seed_cell = ne ? e[0].start : (pf_point){0, 0};
        pf_flow_query rq = {&seed_cell, 1, false, {0, 0, 0, 0}, NULL, NULL, 0};
        pf_table_stats ts;
        if (!src || !costs || pf_flowfield_build(ctx, g, &rq, &reach, NULL)) {
            free(src);
            free(costs);
            pf_bench_scen_destroy(s);
            rc = EXIT_USAGE;
            continue;
        }
        tgt = src + ns;
        /* Cells of the first entry's region: every entry has a path. */
        for (size_t k = 0; k < ns + nt; k++) {
            do {
                src[k].x = (int32_t)(rnd(&st) % (uint64_t)w);
                src[k].y = (int32_t)(rnd(&st) % (uint64_t)h);
            } while (isinf(pf_flowfield_cost_at(reach, src[k])));
        }
        pf_flowfield_destroy(reach);
        for (size_t r = 0; r < c.runs; r++) {
            double t0 = pf_report_now_us(c.clock);
            pf_table_compute(ctx, g, src, ns, tgt, nt, PF_TABLE_AUTO, NULL, NULL, costs, &ts);
            times[r] = pf_report_now_us(c.clock) - t0;
        }
        for (size_t a = 0; a < ns; a++)
            for (size_t b = 0; b < nt; b++) {
                pf_query q = pf_query_make(src[a], tgt[b], PF_ALGO_ASTAR);
                pf_result res;
                double t0 = pf_report_now_us(c.clock);
                pf_status rs = pf_planner_search(ctx, p, &q, &res);
                astar_total += pf_report_now_us(c.clock) - t0;
                if (rs != PF_OK || !close_cost(res.cost, costs[a * nt + b])) mism++;
            }
        double tm = median_of(times, c.runs);
        if (c.json)
            printf("{\"map\":\"%s\",\"width\":%d,\"height\":%d,\"sources\":%zu,\"targets\":%zu,"
                   "\"table_ms\":%.3f,\"searches\":%llu,\"settled\":%llu,\"astar_total_ms\":%.3f,"
                   "\"speedup\":%.2f,\"mismatches\":%zu}\n",
                   pf_bench_scen_name(s), w, h, ns, nt, tm / 1000.0,
                   (unsigned long long)ts.searches, (unsigned long long)ts.expanded,
                   astar_total / 1000.0, astar_total / tm, mism);
        else
            printf("%-16.16s %5dx%-5d %zux%zu table p50 %8.2f ms (%llu searches, %llu settled)  "
                   "%zu astar %8.2f ms  astar/table %.2fx  mismatches %zu\n",
                   pf_bench_scen_name(s), w, h, ns, nt, tm / 1000.0,
                   (unsigned long long)ts.searches, (unsigned long long)ts.expanded, ns * nt,
                   astar_total / 1000.0, astar_total / tm, mism);
        fflush(stdout);
        if (mism) rc = rc ? rc : EXIT_MISMATCH;
        free(src);
        free(costs);
        pf_bench_scen_destroy(s);
    }
    pf_search_ctx_destroy(ctx);
    return rc;
}

/* agents */

static void agents_usage(FILE *f) {
    fprintf(f,
            "usage: pathd-bench agents [--sizes 2,3,4] [--algorithm astar|hpa]\n"
            "                          [--max-queries N] [options] FILE.scen...\n"
            "\n"
            "Per map: the scenario queries (at most N, default 200, spread over the file)\n"
            "where the largest size fits at start and goal, run for size 1 and every size\n"
            "asked, interleaved query by query. Per size: median over queries of\n"
            "t(size) / t(size 1), the ratio of the total times, the mean cost ratio, and\n"
            "the one-time build of the size's agent grid (and hierarchy with hpa).\n\n%s",
            common_help);
}

#define MAX_SIZES 8

int pf_bench_agents_main(int argc, char **argv) {
    static const struct option longopts[] = {{"sizes", required_argument, NULL, 'z'},
                                             {"algorithm", required_argument, NULL, 'a'},
                                             {"max-queries", required_argument, NULL, 'n'},
                                             COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    common_opts c;
    int32_t sizes[MAX_SIZES] = {2, 3, 4};
    size_t nsizes = 3, maxq = 200;
    pf_algorithm algo = PF_ALGO_ASTAR;
    int opt, rc = 0;
    pf_search_ctx *ctx;

    common_defaults(&c);
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int k = common_opt(opt, optarg, &c);
        if (k < 0) return EXIT_USAGE;
        if (k) continue;
        if (opt == 'z') {
            char buf[128], *tok, *save = NULL;
            snprintf(buf, sizeof(buf), "%s", optarg);
            nsizes = 0;
            for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                size_t v;
                if (nsizes == MAX_SIZES || !parse_count(tok, 2, PF_AGENT_SIZE_MAX, &v)) {
                    fprintf(stderr, "pathd-bench: --sizes wants up to %d sizes in 2..%d\n",
                            MAX_SIZES, PF_AGENT_SIZE_MAX);
                    return EXIT_USAGE;
                }
                sizes[nsizes++] = (int32_t)v;
            }
            if (nsizes == 0) return EXIT_USAGE;
            continue;
        }
        if (opt == 'a' && pf_algorithm_from_name(optarg, &algo) &&
            (algo == PF_ALGO_ASTAR || algo == PF_ALGO_HPA))
            continue;
        if (opt == 'n' && parse_count(optarg, 1, 1000000, &maxq)) continue;
        if (opt == 'h') {
            agents_usage(stdout);
            return 0;
        }
        agents_usage(stderr);
        return EXIT_USAGE;
    }
    if (optind >= argc) {
        agents_usage(stderr);
        return EXIT_USAGE;
    }
    ctx = pf_search_ctx_create();
    if (!ctx) return EXIT_USAGE;
    for (int i = optind; i < argc; i++) {
        pf_bench_scen *s = load(argv[i], algo == PF_ALGO_HPA);
        size_t ne, nq = 0;
        int32_t big = 1;
        double grid_ms[MAX_SIZES], hpa_ms[MAX_SIZES];
        const pf_grid *ag[MAX_SIZES + 1];
        if (!s) {
            rc = EXIT_USAGE;
            continue;
        }
        const pf_planner *p = pf_bench_scen_planner(s);
        const pf_scen_entry *e = pf_bench_scen_entries(s, &ne);
        for (size_t k = 0; k < nsizes; k++) {
            double t0 = pf_report_now_us(c.clock);
            if (pf_planner_agent_grid(p, sizes[k], NULL, &ag[k])) {
                rc = EXIT_USAGE;
                break;
            }
            grid_ms[k] = (pf_report_now_us(c.clock) - t0) / 1000.0;
            hpa_ms[k] = NAN;
            if (algo == PF_ALGO_HPA) {
                const pf_hpa *hh;
                t0 = pf_report_now_us(c.clock);
                if (pf_agents_hpa(pf_planner_agents(p), sizes[k], NULL, &hh)) {
                    rc = EXIT_USAGE;
                    break;
                }
                hpa_ms[k] = (pf_report_now_us(c.clock) - t0) / 1000.0;
            }
            if (sizes[k] > big) big = sizes[k];
        }
        if (rc == EXIT_USAGE) {
            pf_bench_scen_destroy(s);
            continue;
        }
        const pf_grid *gbig;
        pf_planner_agent_grid(p, big, NULL, &gbig);
        size_t cap = maxq < ne ? maxq : ne;
        double *t1 = malloc((cap ? cap : 1) * (2 * nsizes + 1) * sizeof(*t1));
        double *tn, *ratio;
        double sum1 = 0, sumn[MAX_SIZES] = {0}, cost1 = 0, costn[MAX_SIZES] = {0};
        size_t fail = 0;
        if (!t1) {
            pf_bench_scen_destroy(s);
            rc = EXIT_USAGE;
            continue;
        }
        tn = t1 + cap;
        ratio = tn + cap * nsizes;
        for (size_t j = 0; j < cap; j++) {
            const pf_scen_entry *x = &e[j * ne / cap]; /* spread over the file */
            if (!pf_grid_is_walkable(gbig, x->start) || !pf_grid_is_walkable(gbig, x->goal))
                continue;
            pf_query q = pf_query_make(x->start, x->goal, algo);
            pf_result r;
            double t0 = pf_report_now_us(c.clock);
            pf_status r1 = pf_planner_search(ctx, p, &q, &r);
            double d1 = pf_report_now_us(c.clock) - t0, k1 = r.cost;
            bool ok = r1 == PF_OK;
            double dn[MAX_SIZES], kn[MAX_SIZES];
            for (size_t k = 0; k < nsizes && ok; k++) {
                q.agent_size = sizes[k];
                t0 = pf_report_now_us(c.clock);
                pf_status rn = pf_planner_search(ctx, p, &q, &r);
                dn[k] = pf_report_now_us(c.clock) - t0;
                kn[k] = r.cost;
                if (rn != PF_OK) ok = false; /* the big agent cannot get there: skip */
            }
            if (!ok) {
                fail++;
                continue;
            }
            t1[nq] = d1;
            sum1 += d1;
            cost1 += k1;
            for (size_t k = 0; k < nsizes; k++) {
                tn[k * cap + nq] = dn[k];
                ratio[k * cap + nq] = dn[k] / (d1 > 0 ? d1 : 1e-3);
                sumn[k] += dn[k];
                costn[k] += kn[k];
            }
            nq++;
        }
        if (nq == 0 && !c.json)
            printf("%-16.16s %s: no query where every size reaches the goal (%zu skipped)\n",
                   pf_bench_scen_name(s), pf_algorithm_name(algo), fail);
        for (size_t k = 0; k < nsizes && nq; k++) {
            double rmed = median_of(ratio + k * cap, nq), p1 = median_of(t1, nq);
            double pn = median_of(tn + k * cap, nq);
            if (c.json)
                printf("{\"map\":\"%s\",\"algorithm\":\"%s\",\"size\":%d,\"queries\":%zu,"
                       "\"skipped\":%zu,\"p50_us_size1\":%.2f,\"p50_us\":%.2f,"
                       "\"median_time_ratio\":%.3f,\"total_time_ratio\":%.3f,\"cost_ratio\":%.4f,"
                       "\"grid_build_ms\":%.3f,\"hpa_build_ms\":%.3f}\n",
                       pf_bench_scen_name(s), pf_algorithm_name(algo), sizes[k], nq, fail, p1, pn,
                       rmed, sumn[k] / sum1, costn[k] / cost1, grid_ms[k],
                       isnan(hpa_ms[k]) ? -1.0 : hpa_ms[k]);
            else
                printf("%-16.16s %s size %d: %zu queries  p50 %7.1f us (size 1: %7.1f)  "
                       "median ratio %.2fx  total ratio %.2fx  cost ratio %.3f  grid %.1f ms%s",
                       pf_bench_scen_name(s), pf_algorithm_name(algo), sizes[k], nq, pn, p1, rmed,
                       sumn[k] / sum1, costn[k] / cost1, grid_ms[k], isnan(hpa_ms[k]) ? "\n" : "");
            if (!c.json && !isnan(hpa_ms[k])) printf("  hierarchy %.1f ms\n", hpa_ms[k]);
        }
        fflush(stdout);
        free(t1);
        pf_bench_scen_destroy(s);
    }
    pf_search_ctx_destroy(ctx);
    return rc;
}
