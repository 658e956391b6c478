/* sessions.c -- `pathd-bench sessions`: what many D* Lite sessions on one
 * shared map cost in memory, and how their repairs compare with a fresh A*.
 *
 * The server keeps one pf_dstar per moving agent over a shared base grid, so
 * the figure that decides how many agents fit is the bytes a session holds
 * once it has planned. This creates N sessions on one map, cycling through the
 * selected scenario entries (the longer buckets by default: agents crossing
 * the map touch the most cells), plans each once and reports
 * pf_dstar_memory per session (mean, median, max, total) next to the
 * process's resident set growth, which also counts malloc's own overhead.
 *
 * --repair then measures the repair the sessions exist for, per session: the
 * agent walks a quarter of its path, the cell REPAIR_AHEAD steps further on
 * its route closes, and the repaired plan's expansions and time are set
 * against a fresh A* from the agent's new position on the same changed map.
 */
#include "sessions.h"

#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuts.h"
#include "dstar.h"
#include "scen.h"

#define EXIT_MISMATCH 1
#define EXIT_USAGE 2
#define REPAIR_AHEAD 8 /* steps between the agent and the cell that closes */
#define MAX_DOOR 15    /* --door */

static void usage(FILE *f) {
    fputs("usage: pathd-bench sessions [--sessions N] [--min-bucket-frac F | --all-buckets]\n"
          "                            [--repair [--door W]] [--no-cuts] [--clock wall|cpu] "
          "[--json]\n"
          "                            FILE.scen...\n"
          "\n"
          "Per map: creates N D* Lite sessions (default 1000) on the one shared grid,\n"
          "session i taking selected entry i mod n of the scenario file, plans each\n"
          "once and reports pf_dstar_memory per session (mean, median, max, total) and\n"
          "the process's resident set growth over the N sessions. Every plan's cost is\n"
          "checked against the scenario optimum.\n"
          "\n"
          "  --sessions N          sessions per map (default 1000)\n"
          "  --min-bucket-frac F   entries of buckets >= floor(F x (largest + 1)) only\n"
          "                        (default 0.5: agents crossing the map)\n"
          "  --all-buckets         every entry (= --min-bucket-frac 0)\n"
          "  --repair              then, per session: walk a quarter of the path, close\n"
          "                        the cell 8 steps ahead on it, repair; report the median\n"
          "                        over sessions of repair/fresh-A* expansions and time;\n"
          "                        then reopen the cell and report that plan's median too\n"
          "  --door W              close W cells (1..15, default 1) across the path there,\n"
          "                        centred on it, like a door; the walkable ones only\n"
          "  --no-cuts             sessions without the map's cut vertices (cuts.h), so\n"
          "                        every repair searches, even when the goal is cut off\n"
          "  --clock wall|cpu      time repairs with CLOCK_MONOTONIC or the thread CPU clock\n"
          "  --json                one JSON object per map\n"
          "\n"
          "Exit status: 0 fine; 1 a plan missed the optimum or failed; 2 bad arguments.\n",
          f);
}

/* Resident set size in bytes, from /proc/self/statm; 0 when unreadable. */
static size_t rss_bytes(void) {
    unsigned long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
    fclose(f);
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* Bytes malloc has handed out, mmapped blocks included (glibc). */
static size_t heap_bytes(void) {
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

typedef struct opts {
    size_t sessions;
    double min_bucket_frac;
    bool repair, json, no_cuts;
    int door;
    clockid_t clock;
} opts;

typedef struct repair_stats {
    size_t n;          /* sessions measured */
    double exp_ratio;  /* median over sessions of repair / A* expansions */
    double time_ratio; /* median over sessions of repair / A* time */
    double repair_exp, astar_exp, repair_us, astar_us; /* medians */
    size_t cut_off;               /* repairs answered "no path" from the cut vertices */
    double reopen_exp, reopen_us; /* medians of the plan after the cell reopens */
} repair_stats;

/* The repair pass over every session (see the file comment). eff is a copy
 * of the base grid, changed and restored around each fresh A*. */
static int measure_repairs(pf_dstar **ss, size_t n, pf_grid *eff, const opts *o, repair_stats *rs) {
    double *v = malloc(8 * (n ? n : 1) * sizeof(*v));
    double *er, *tr, *rex, *aex, *rus, *aus, *oex, *ous;
    pf_search_ctx *ctx = pf_search_ctx_create();
    int rc = 0;
    size_t m = 0;
    if (!v || !ctx) {
        free(v);
        pf_search_ctx_destroy(ctx);
        return EXIT_USAGE;
    }
    /* Eight arrays of n in one allocation, carved once it exists. */
    er = v;
    tr = v + n;
    rex = v + 2 * n;
    aex = v + 3 * n;
    rus = v + 4 * n;
    aus = v + 5 * n;
    oex = v + 6 * n;
    ous = v + 7 * n;
    for (size_t i = 0; i < n; i++) {
        pf_result r, a;
        if (pf_dstar_plan(ss[i], 0, &r) != PF_OK) continue; /* no path: nothing to repair */
        if (r.path_len < 4 * REPAIR_AHEAD) continue;
        size_t at = r.path_len / 4;
        pf_point agent = r.path[at], mid = r.path[at + REPAIR_AHEAD];
        pf_point goal = pf_dstar_goal(ss[i]);
        /* The door: `door` cells across the path's direction there. */
        pf_point before = r.path[at + REPAIR_AHEAD - 1], after = r.path[at + REPAIR_AHEAD + 1];
        int px = -(after.y - before.y), py = after.x - before.x;
        px = (px > 0) - (px < 0);
        py = (py > 0) - (py < 0);
        pf_point closed[MAX_DOOR];
        uint8_t cost[MAX_DOOR];
        int nc = 0;
        for (int j = -(o->door - 1) / 2; j <= o->door / 2; j++) {
            pf_point c = {mid.x + j * px, mid.y + j * py};
            if (!pf_grid_in_bounds(eff, c) || !pf_grid_is_walkable(eff, c)) continue;
            closed[nc] = c;
            cost[nc++] = pf_grid_cost(eff, c);
        }
        if (pf_dstar_move(ss[i], agent)) {
            rc = EXIT_MISMATCH;
            continue;
        }
        /* The repair's time includes applying the change. */
        double t0 = pf_report_now_us(o->clock);
        pf_status st = PF_OK;
        for (int j = 0; j < nc && !st; j++) st = pf_dstar_set_cost(ss[i], closed[j], 0);
        if (!st) st = pf_dstar_plan(ss[i], 0, &r);
        double t1 = pf_report_now_us(o->clock);
        for (int j = 0; j < nc; j++) pf_grid_set_cost(eff, closed[j], 0);
        pf_query q = pf_query_make(agent, goal, PF_ALGO_ASTAR);
        double t2 = pf_report_now_us(o->clock);
        pf_status sa = pf_search(ctx, eff, &q, &a);
        double t3 = pf_report_now_us(o->clock);
        for (int j = 0; j < nc; j++) pf_grid_set_cost(eff, closed[j], cost[j]);
        if (st != sa || (st == PF_OK && !pf_bench_cost_matches(r.cost, a.cost))) {
            fprintf(stderr, "pathd-bench sessions: repair %zu: %s cost %f, A* %s cost %f\n", i,
                    pf_status_str(st), r.cost, pf_status_str(sa), a.cost);
            rc = EXIT_MISMATCH;
            continue;
        }
        if (st == PF_NO_PATH && r.expanded == 0) rs->cut_off++;
        /* The cell reopens: the repair deferred by a cut-off answer, or
         * the one just made, is undone. Its cost is part of the bill. */
        pf_result ro;
        double t4 = pf_report_now_us(o->clock);
        pf_status so = PF_OK;
        for (int j = 0; j < nc && !so; j++) so = pf_dstar_set_cost(ss[i], closed[j], cost[j]);
        if (so == PF_OK) so = pf_dstar_plan(ss[i], 0, &ro);
        double t5 = pf_report_now_us(o->clock);
        if (so != PF_OK) {
            fprintf(stderr, "pathd-bench sessions: reopen %zu: %s\n", i, pf_status_str(so));
            rc = EXIT_MISMATCH;
            continue;
        }
        if (a.expanded == 0 || t3 <= t2) continue;
        oex[m] = (double)ro.expanded;
        ous[m] = t5 - t4;
        er[m] = (double)r.expanded / (double)a.expanded;
        tr[m] = (t1 - t0) / (t3 - t2);
        rex[m] = (double)r.expanded;
        aex[m] = (double)a.expanded;
        rus[m] = t1 - t0;
        aus[m] = t3 - t2;
        m++;
    }
    rs->n = m;
    rs->exp_ratio = pf_report_median(er, m);
    rs->time_ratio = pf_report_median(tr, m);
    rs->repair_exp = pf_report_median(rex, m);
    rs->astar_exp = pf_report_median(aex, m);
    rs->repair_us = pf_report_median(rus, m);
    rs->astar_us = pf_report_median(aus, m);
    rs->reopen_exp = pf_report_median(oex, m);
    rs->reopen_us = pf_report_median(ous, m);
    free(v);
    pf_search_ctx_destroy(ctx);
    return rc;
}

static int run_file(const char *path, const opts *o) {
    pf_bench_scen_opts so;
    pf_bench_scen *s;
    char err[512] = "";
    size_t nsel, n = o->sessions, failed = 0, mismatches = 0;
    int rc = 0;

    memset(&so, 0, sizeof(so));
    so.min_bucket_frac = o->min_bucket_frac;
    pf_status st = pf_bench_scen_load(path, &so, &s, err, sizeof(err));
    if (st) {
        fprintf(stderr, "pathd-bench: %s\n", err[0] ? err : pf_status_str(st));
        return EXIT_USAGE;
    }
    const pf_scen_entry *e = pf_bench_scen_entries(s, &nsel);
    const pf_grid *g = pf_planner_grid(pf_bench_scen_planner(s));
    pf_cuts *cuts = NULL;
    pf_dstar **ss = calloc(n ? n : 1, sizeof(*ss));
    double *mem = malloc((n ? n : 1) * sizeof(*mem));
    double *plan_us = malloc((n ? n : 1) * sizeof(*plan_us));
    if (!ss || !mem || !plan_us || nsel == 0) {
        fprintf(stderr, "pathd-bench: %s: %s\n", pf_bench_scen_name(s),
                nsel ? "out of memory" : "no entries selected");
        rc = EXIT_USAGE;
        goto out;
    }

    if (!o->no_cuts && pf_cuts_build(g, NULL, &cuts)) {
        fprintf(stderr, "pathd-bench: %s: out of memory\n", pf_bench_scen_name(s));
        rc = EXIT_USAGE;
        goto out;
    }
    /* Freed memory of an earlier map would be reused and hide the growth:
     * hand it back first. */
    malloc_trim(0);
    size_t rss0 = rss_bytes(), heap0 = heap_bytes();
    double total = 0, maxm = 0;
    for (size_t i = 0; i < n; i++) {
        /* Spread over the selection like --max-queries when there are more
         * entries than sessions, else cycle through them. */
        const pf_scen_entry *q =
            &e[n >= nsel ? i % nsel : (size_t)((double)i * (double)nsel / (double)n)];
        pf_result r;
        st = pf_dstar_create(g, q->start, q->goal, &ss[i]);
        if (st == PF_OK) pf_dstar_set_cuts(ss[i], cuts);
        double t0 = pf_report_now_us(o->clock);
        if (st == PF_OK) st = pf_dstar_plan(ss[i], 0, &r);
        plan_us[i] = pf_report_now_us(o->clock) - t0;
        if (st != PF_OK) {
            failed++;
            if (!ss[i]) {
                mem[i] = 0;
                continue;
            }
        } else if (!pf_bench_cost_matches(r.cost, q->optimal)) {
            mismatches++;
        }
        mem[i] = (double)pf_dstar_memory(ss[i]);
        total += mem[i];
        if (mem[i] > maxm) maxm = mem[i];
    }
    size_t rss1 = rss_bytes(), heap1 = heap_bytes();
    double growth = rss1 > rss0 ? (double)(rss1 - rss0) : 0;
    double heap = heap1 > heap0 ? (double)(heap1 - heap0) : 0;
    double med = pf_report_median(mem, n), plan_med = pf_report_median(plan_us, n);
    if (failed || mismatches) rc = EXIT_MISMATCH;

    repair_stats rs = {0, NAN, NAN, NAN, NAN, NAN, NAN, 0, NAN, NAN};
    if (o->repair) {
        pf_grid *eff = pf_grid_clone(g);
        int r2 = eff ? measure_repairs(ss, n, eff, o, &rs) : EXIT_USAGE;
        pf_grid_destroy(eff);
        if (r2 && !rc) rc = r2;
    }

    if (o->json) {
        printf("{\"map\":\"%s\",\"map_w\":%d,\"map_h\":%d,\"sessions\":%zu,\"entries\":%zu,"
               "\"failed\":%zu,\"mismatches\":%zu,\"mean_bytes\":%.0f,\"median_bytes\":%.0f,"
               "\"max_bytes\":%.0f,\"total_bytes\":%.0f,\"heap_growth_bytes\":%.0f,"
               "\"rss_growth_bytes\":%.0f,\"plan_p50_us\":%.1f,\"cuts_bytes\":%zu,"
               "\"cuts_build_us\":%llu",
               pf_bench_scen_name(s), (int)pf_grid_width(g), (int)pf_grid_height(g), n, nsel,
               failed, mismatches, total / (double)n, med, maxm, total, heap, growth, plan_med,
               cuts ? pf_cuts_memory(cuts) : 0,
               cuts ? (unsigned long long)pf_cuts_build_us(cuts) : 0ull);
        if (o->repair)
            printf(",\"repairs\":%zu,\"repair_expanded_ratio\":%.4f,\"repair_time_ratio\":%.4f,"
                   "\"repair_expanded\":%.0f,\"astar_expanded\":%.0f,\"repair_us\":%.1f,"
                   "\"astar_us\":%.1f,\"cut_off\":%zu,\"reopen_expanded\":%.0f,"
                   "\"reopen_us\":%.1f",
                   rs.n, rs.exp_ratio, rs.time_ratio, rs.repair_exp, rs.astar_exp, rs.repair_us,
                   rs.astar_us, rs.cut_off, rs.reopen_exp, rs.reopen_us);
        printf("}\n");
    } else {
        printf("%-16.16s %4dx%-4d sessions %zu (entries %zu) failed %zu mismatches %zu\n"
               "  bytes/session mean %.0f median %.0f max %.0f; total %.1f MB; "
               "heap growth %.1f MB; RSS growth %.1f MB (%.0f B/session)\n"
               "  first plan p50 %.1f us; cut vertices %s %.1f MB built in %.1f ms\n",
               pf_bench_scen_name(s), (int)pf_grid_width(g), (int)pf_grid_height(g), n, nsel,
               failed, mismatches, total / (double)n, med, maxm, total / 1e6, heap / 1e6,
               growth / 1e6, growth / (double)n, plan_med, cuts ? "on," : "off",
               cuts ? (double)pf_cuts_memory(cuts) / 1e6 : 0.0,
               cuts ? (double)pf_cuts_build_us(cuts) / 1e3 : 0.0);
        if (o->repair)
            printf("  repair/A* median over %zu sessions: expanded %.4f, time %.4f "
                   "(median repair %.0f exp %.1f us, A* %.0f exp %.1f us)\n"
                   "  %zu answered no path from the cut vertices; plan after reopening the cell:\n"
                   "  median %.0f exp %.1f us\n",
                   rs.n, rs.exp_ratio, rs.time_ratio, rs.repair_exp, rs.repair_us, rs.astar_exp,
                   rs.astar_us, rs.cut_off, rs.reopen_exp, rs.reopen_us);
    }
    fflush(stdout);

out:
    if (ss)
        for (size_t i = 0; i < n; i++) pf_dstar_destroy(ss[i]);
    free(ss);
    free(mem);
    free(plan_us);
    pf_cuts_destroy(cuts);
    pf_bench_scen_destroy(s);
    return rc;
}

int pf_bench_sessions_main(int argc, char **argv) {
    static const struct option longopts[] = {{"sessions", required_argument, NULL, 's'},
                                             {"min-bucket-frac", required_argument, NULL, 'b'},
                                             {"all-buckets", no_argument, NULL, 'A'},
                                             {"repair", no_argument, NULL, 'r'},
                                             {"no-cuts", no_argument, NULL, 'C'},
                                             {"door", required_argument, NULL, 'D'},
                                             {"clock", required_argument, NULL, 't'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    opts o = {1000, 0.5, false, false, false, 1, CLOCK_MONOTONIC};
    int opt, rc = 0;
    char *end;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 's': {
            unsigned long long v = strtoull(optarg, &end, 10);
            if (*end || optarg[0] == '-' || v == 0 || v > 10000000) {
                fprintf(stderr, "pathd-bench: --sessions wants an integer in 1..10000000\n");
                return EXIT_USAGE;
            }
            o.sessions = (size_t)v;
            break;
        }
        case 'b':
            if (!pf_report_bucket_frac(optarg, &o.min_bucket_frac)) return EXIT_USAGE;
            break;
        case 'A':
            o.min_bucket_frac = 0;
            break;
        case 'r':
            o.repair = true;
            break;
        case 'C':
            o.no_cuts = true;
            break;
        case 'D': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > MAX_DOOR) {
                fprintf(stderr, "pathd-bench: --door wants an integer in 1..%d\n", MAX_DOOR);
                return EXIT_USAGE;
            }
            o.door = (int)v;
            break;
        }
        case 't':
            if (!pf_report_clock_from_name(optarg, &o.clock)) {
                fprintf(stderr, "pathd-bench: --clock wants wall or cpu\n");
                return EXIT_USAGE;
            }
            break;
        case 'j':
            o.json = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "pathd-bench sessions: no scenario files given\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    for (int i = optind; i < argc; i++) {
        int r = run_file(argv[i], &o);
        if (r && (!rc || r == EXIT_USAGE)) rc = r;
    }
    return rc;
}
