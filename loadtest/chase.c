/* chase.c -- `pathd-bench chase`: N chasers after N random-walking targets on
 * a Moving AI map, F frames, under replanning policies, in-process.
 *
 * The setting of the textbook chapter the project started from: a chaser
 * follows a randomly walking target, and planning on every frame costs
 * far more than planning on a timer, or only when the target strayed a
 * few cells from where the last plan sent the chaser, for a chase that
 * looks the same. Each chaser i starts at the start of a selected scenario
 * entry, its target at the entry's goal. Every frame, each target walks
 * one cell with probability --target-speed, keeping its heading but for a
 * turn with probability --turn (a persistent random walk, seeded per
 * target: every policy sees the same targets); then each chaser's policy
 * (core/replan.h) decides whether to plan, the route it keeps (core/course.h)
 * gives its answer, and it steps one cell along it.
 *
 * Policies (a table below): every-frame (plan anew on every frame, what a
 * game does that calls its pathfinder each frame), timer (anew, at most
 * once every --timer-frames frames), threshold (anew, when the target
 * strayed more than --threshold cells from the goal of the last plan) and
 * incremental (every frame, on one D* Lite session per chaser that
 * re-roots and repairs instead of planning anew: Moving Target D* Lite,
 * core/dstar.h), plus timer-incremental and threshold-incremental. "Anew"
 * is a fresh D* Lite search, what a session did on every goal change
 * before. Timer and threshold go through core/replan.h's decision, which
 * also replans at once when the route cannot be followed. Each runs with
 * every --hysteresis value.
 *
 * Reported per map, policy, hysteresis and chaser count: replans, search
 * expansions, CPU time per frame (thread CPU clock, the whole frame of all
 * chasers: decisions, routes, searches), paths pushed (frames whose route
 * ahead changed, what a stream would send), route flips (course.h), mean
 * distance to the target, and the skipped replans by reason. For the
 * incremental policies, each plan after a goal move is set side by side
 * with a fresh D* Lite search and an A* for the same agent and goal
 * (untimed in the frame figures): expansions and time per goal move, p50
 * and p99, and the costs must agree (else exit 1).
 */
#include "chase.h"

#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "course.h"
#include "dstar.h"
#include "loadgen.h"
#include "replan.h"
#include "report.h"
#include "scen.h"
#include "search.h"

#define EXIT_MISMATCH 1
#define EXIT_USAGE 2
#define MAX_LIST 8 /* values of --chasers, --hysteresis, policies */

typedef enum { SEARCH_ANEW, SEARCH_INCREMENTAL } search_kind;

/* A policy of the table: planning on every frame (the naive baseline:
 * no replanning policy asked), or the timer and threshold of a
 * pf_replan_policy; and how it searches. */
typedef struct policy_def {
    const char *name;
    bool every, timer, threshold;
    search_kind search;
} policy_def;

static const policy_def policies[] = {
    {"every-frame", true, false, false, SEARCH_ANEW},
    {"timer", false, true, false, SEARCH_ANEW},
    {"threshold", false, false, true, SEARCH_ANEW},
    {"incremental", true, false, false, SEARCH_INCREMENTAL},
    {"timer-incremental", false, true, false, SEARCH_INCREMENTAL},
    {"threshold-incremental", false, false, true, SEARCH_INCREMENTAL},
};
#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

typedef struct opts {
    size_t chasers[MAX_LIST], nchasers;
    double hyst[MAX_LIST];
    size_t nhyst;
    const policy_def *pol[MAX_LIST];
    size_t npol;
    int frames;
    uint64_t seed;
    uint32_t frame_ms;
    int timer_frames;
    double threshold, speed, turn, min_bucket_frac;
    int root;
    bool reroot_always, compare, json;
    /* --url: against a running pathd over /v1/stream (chase_stream.c). */
    const char *url;
    char host[256], prefix[256];
    int port, server_pid;
    bool pol_given;
    double nav_step; /* navmesh levels: the target's step, mesh units */
} opts;

static void usage(FILE *f) {
    fputs("usage: pathd-bench chase [options] FILE.scen...\n"
          "\n"
          "N chasers after N random-walking targets per map, F frames, under replanning\n"
          "policies, in-process (see loadtest/chase.c). Chaser i starts at the start of\n"
          "selected scenario entry i mod n, its target at the entry's goal. A file\n"
          "ending in .obj or named gen:NAME is a navmesh level (see --nav-step).\n"
          "\n"
          "  --chasers N[,N...]    chasers per run (default 1,16,64)\n"
          "  --frames F            frames per run (default 150)\n"
          "  --policies LIST       of every-frame timer threshold incremental\n"
          "                        timer-incremental threshold-incremental (default the\n"
          "                        first four)\n"
          "  --hysteresis H[,H...] route hysteresis fractions in [0, 0.9] (default 0,0.2)\n"
          "  --timer-frames K      the timer policies' interval in frames (default 10)\n"
          "  --threshold D         the threshold policies' goal distance, cells (default 3)\n"
          "  --frame-ms MS         milliseconds a frame on the policies' clock (default 50)\n"
          "  --target-speed P      a target walks one cell a frame with probability P\n"
          "                        (default 0.5; the chasers walk one a frame)\n"
          "  --turn P              ... in a new random direction with probability P, else\n"
          "                        on (default 1: a plain random walk)\n"
          "  --seed S              the targets' walks (default 1)\n"
          "  --root auto|goal|agent  the incremental sessions' root (dstar.h; default auto)\n"
          "  --reroot always|needed  re-root at every move of the root's end (MT-D* Lite\n"
          "                        as published), or only when the path no longer runs\n"
          "                        through it (default needed; dstar.h)\n"
          "  --min-bucket-frac F   entries of buckets >= floor(F x (largest + 1)) only\n"
          "                        (default 0.25)\n"
          "  --no-compare          skip the side-by-side fresh search per goal move\n"
          "  --json                one JSON object per run\n"
          "  --url URL             against a running pathd (http://host:port[/prefix]):\n"
          "                        the map PUT as chase-NAME, chaser i a session on one\n"
          "                        multiplexed WebSocket (/v1/stream), one update a\n"
          "                        frame; policies every-frame, timer, threshold (the\n"
          "                        server's sessions always keep their D* Lite search);\n"
          "                        reports CPU time per frame on both sides\n"
          "  --server-pid PID      with --url: the server's CPU time from /proc/PID/stat\n"
          "                        (else process_cpu_seconds_total from its /metrics)\n"
          "  --nav-step S          navmesh levels (FILE.obj, gen:multifloor, gen:terrain,\n"
          "                        in-process; loadtest/chase_nav.c): the target's step in\n"
          "                        mesh units (default 0.3; the chasers walk twice that);\n"
          "                        policies every-frame, threshold (--threshold in mesh\n"
          "                        units) and slide (the corridor's target slides)\n"
          "\n"
          "Exit status: 0 fine; 1 a plan failed or an incremental plan's cost differs from\n"
          "the fresh search's; 2 bad arguments.\n",
          f);
}

/* One chaser and its target. */
typedef struct chaser {
    pf_point pos, target;
    int dir;      /* the target's heading, 0..7 */
    uint64_t rng; /* the target's walk */
    pf_course *route;
    pf_replan rp;
    pf_dstar *d;  /* incremental policies: the chaser's session */
    bool planned; /* ... which has planned before */
} chaser;

/* What one run counted. */
typedef struct run_stats {
    uint64_t replans, expanded, pushed, flips, kept, failed, mismatches;
    uint64_t reasons[PF_REPLAN_REASON_COUNT];
    double dist_sum;
    uint64_t dist_n;
    double *frame_us; /* per frame, all chasers */
    /* Incremental policies, per plan after a goal move. */
    double *inc_exp, *fresh_exp, *astar_exp, *ratio, *reset, *inc_us, *fresh_us;
    size_t nmoves, cap;
    uint64_t anew, rerooted;
    double memory; /* mean session bytes at the end */
} run_stats;

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static double unit_rand(uint64_t *s) { return (double)(splitmix(s) >> 11) * 0x1.0p-53; }

void pf_bench_chase_walk_init(uint64_t seed, size_t i, uint64_t *rng, int *dir) {
    *rng = seed * UINT64_C(0x100000001B3) + i;
    *dir = (int)(splitmix(rng) % 8);
}

/* The target's frame: with probability speed it walks one cell along its
 * heading, turning first with probability turn or when the heading is
 * blocked (up to eight tries, else it stays). */
void pf_bench_chase_walk(pf_point *target, int *dir, uint64_t *rng, const pf_grid *g, double speed,
                         double turn) {
    if (unit_rand(rng) >= speed) return;
    if (unit_rand(rng) < turn) *dir = (int)(splitmix(rng) % 8);
    for (int tries = 0; tries < 8; tries++) {
        pf_point n = {target->x + pf_dir_dx[*dir], target->y + pf_dir_dy[*dir]};
        if (pf_grid_can_step(g, *target, n)) {
            *target = n;
            return;
        }
        *dir = (int)(splitmix(rng) % 8);
    }
}

static int push_move(run_stats *s, double inc, double fresh, double astar, double reset,
                     double inc_us, double fresh_us) {
    if (s->nmoves == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        double **arrs[] = {&s->inc_exp, &s->fresh_exp, &s->astar_exp, &s->ratio,
                           &s->reset,   &s->inc_us,    &s->fresh_us};
        for (size_t i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++) {
            double *p = realloc(*arrs[i], cap * sizeof(*p));
            if (!p) return -1;
            *arrs[i] = p;
        }
        s->cap = cap;
    }
    s->inc_exp[s->nmoves] = inc;
    s->fresh_exp[s->nmoves] = fresh;
    s->astar_exp[s->nmoves] = astar;
    s->ratio[s->nmoves] = fresh > 0 ? inc / fresh : 0;
    s->reset[s->nmoves] = reset;
    s->inc_us[s->nmoves] = inc_us;
    s->fresh_us[s->nmoves] = fresh_us;
    s->nmoves++;
    return 0;
}

static void stats_free(run_stats *s) {
    free(s->frame_us);
    free(s->inc_exp);
    free(s->fresh_exp);
    free(s->astar_exp);
    free(s->ratio);
    free(s->reset);
    free(s->inc_us);
    free(s->fresh_us);
}

/* A fresh D* Lite search from agent to goal on g: the plan is copied into
 * *path (capacity *cap). */
static pf_status plan_anew(const pf_grid *g, pf_point agent, pf_point goal, pf_result *r,
                           pf_point **path, size_t *cap) {
    pf_dstar *d = NULL;
    pf_status st = pf_dstar_create(g, agent, goal, &d);
    if (st == PF_OK) st = pf_dstar_plan(d, 0, r);
    if (st == PF_OK && r->path_len > *cap) {
        pf_point *p = realloc(*path, r->path_len * sizeof(*p));
        if (!p) st = PF_ENOMEM;
        if (p) {
            *path = p;
            *cap = r->path_len;
        }
    }
    if (st == PF_OK) {
        memcpy(*path, r->path, r->path_len * sizeof(**path));
        r->path = *path;
    }
    pf_dstar_destroy(d);
    return st;
}

/* The side-by-side figures for one incremental plan after a goal move: a
 * fresh D* Lite search and an A* from the same agent to the same goal. */
static int compare_move(run_stats *s, const pf_grid *g, pf_search_ctx *ctx, pf_point from,
                        pf_point to, const pf_result *inc, double inc_us, uint64_t reset,
                        pf_point **buf, size_t *cap) {
    pf_result fr, ar;
    double t0 = pf_report_now_us(CLOCK_THREAD_CPUTIME_ID);
    pf_status st = plan_anew(g, from, to, &fr, buf, cap);
    double t1 = pf_report_now_us(CLOCK_THREAD_CPUTIME_ID);
    pf_query q = pf_query_make(from, to, PF_ALGO_ASTAR);
    pf_status sa = pf_search(ctx, g, &q, &ar);
    if (st != PF_OK || sa != PF_OK || !pf_bench_cost_matches(inc->cost, fr.cost) ||
        !pf_bench_cost_matches(ar.cost, fr.cost)) {
        fprintf(stderr,
                "pathd-bench chase: (%d,%d) -> (%d,%d): incremental cost %f, fresh %s %f, "
                "A* %s %f\n",
                from.x, from.y, to.x, to.y, inc->cost, pf_status_str(st), fr.cost,
                pf_status_str(sa), ar.cost);
        s->mismatches++;
        return 0;
    }
    return push_move(s, (double)inc->expanded, (double)fr.expanded, (double)ar.expanded,
                     (double)reset, inc_us, t1 - t0);
}

/* One run: n chasers under policy p with hysteresis h on g. */
static int run(const opts *o, const pf_grid *g, const pf_scen_entry *e, size_t ne, size_t n,
               const policy_def *p, double h, run_stats *s) {
    chaser *cs = calloc(n, sizeof(*cs));
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    pf_replan_policy pol = {p->timer ? (uint32_t)o->timer_frames * o->frame_ms : 0,
                            p->threshold ? o->threshold : 0.0, h, 0};
    const pf_dstar_opts dopts = {.root = o->root, .reroot_always = o->reroot_always};
    memset(s, 0, sizeof(*s));
    s->frame_us = calloc((size_t)o->frames, sizeof(*s->frame_us));
    if (!cs || !ctx || !s->frame_us) {
        rc = EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const pf_scen_entry *q = &e[i % ne];
        chaser *c = &cs[i];
        c->pos = q->start;
        c->target = q->goal;
        pf_bench_chase_walk_init(o->seed, i, &c->rng, &c->dir);
        pf_replan_init(&c->rp, &pol);
        if (!(c->route = pf_course_create())) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (p->search == SEARCH_INCREMENTAL &&
            pf_dstar_create_with(g, c->pos, c->target, &dopts, &c->d) != PF_OK) {
            rc = EXIT_USAGE;
            goto out;
        }
    }
    const pf_course_view view = pf_course_view_grid(g);
    for (int f = 0; f < o->frames; f++) {
        for (size_t i = 0; i < n; i++)
            pf_bench_chase_walk(&cs[i].target, &cs[i].dir, &cs[i].rng, g, o->speed, o->turn);
        double frame = 0;
        for (size_t i = 0; i < n; i++) {
            chaser *c = &cs[i];
            const pf_point from = c->pos;
            double t0 = pf_report_now_us(CLOCK_THREAD_CPUTIME_ID);
            bool on = pf_course_locate(c->route, c->pos);
            size_t ahead;
            const pf_point *a = pf_course_ahead(c->route, &ahead);
            pf_replan_input in = {(uint64_t)f * o->frame_ms,
                                  {c->target.x, c->target.y, 0},
                                  ahead > 0,
                                  ahead > 0 && on && pf_course_blocked(c->route, &view),
                                  ahead > 0 && !on,
                                  on && ahead == 1 &&
                                      !(a[0].x == c->target.x && a[0].y == c->target.y),
                                  false};
            pf_replan_reason why = p->every ? PF_REPLAN_GOAL_MOVED : pf_replan_decide(&c->rp, &in);
            if (!p->every) s->reasons[why]++;
            pf_result r;
            pf_status st = PF_OK;
            bool goal_moved = false;
            uint64_t reset = 0;
            if (pf_replan_reason_replans(why)) {
                if (p->search == SEARCH_INCREMENTAL) {
                    pf_point old = pf_dstar_goal(c->d);
                    goal_moved = c->planned && (old.x != c->target.x || old.y != c->target.y);
                    st = pf_dstar_move(c->d, c->pos);
                    if (!st) st = pf_dstar_set_goal(c->d, c->target);
                    if (!st) st = pf_dstar_plan(c->d, 0, &r);
                    pf_dstar_plan_info info;
                    pf_dstar_last_plan(c->d, &info);
                    c->planned = true;
                    s->anew += info.anew;
                    s->rerooted += info.rerooted;
                    reset = info.deleted;
                } else {
                    st = plan_anew(g, c->pos, c->target, &r, &buf, &cap);
                }
                if (st == PF_OK) {
                    pf_course_adoption ad;
                    s->replans++;
                    s->expanded += r.expanded;
                    if (pf_course_adopt(c->route, r.path, r.path_len, h, &view, &ad) != PF_OK) {
                        rc = EXIT_USAGE;
                        goto out;
                    }
                    s->flips += ad.flip;
                    s->kept += ad.outcome == PF_COURSE_KEPT;
                    s->pushed += ad.changed;
                    const double goal[3] = {c->target.x, c->target.y, 0};
                    pf_replan_done(&c->rp, (uint64_t)f * o->frame_ms, goal);
                } else {
                    s->failed++;
                }
            }
            /* The chaser walks one cell of its route. */
            if (pf_course_locate(c->route, c->pos)) {
                a = pf_course_ahead(c->route, &ahead);
                if (ahead > 1) c->pos = a[1];
            }
            double t1 = pf_report_now_us(CLOCK_THREAD_CPUTIME_ID);
            frame += t1 - t0;
            if (o->compare && goal_moved && st == PF_OK &&
                compare_move(s, g, ctx, from, c->target, &r, t1 - t0, reset, &buf, &cap)) {
                rc = EXIT_USAGE;
                goto out;
            }
            double dx = c->pos.x - c->target.x, dy = c->pos.y - c->target.y;
            s->dist_sum += sqrt(dx * dx + dy * dy);
            s->dist_n++;
        }
        s->frame_us[f] = frame;
    }
    for (size_t i = 0; i < n; i++) s->memory += cs[i].d ? (double)pf_dstar_memory(cs[i].d) : 0;
    s->memory /= (double)n;
out:
    for (size_t i = 0; cs && i < n; i++) {
        pf_course_destroy(cs[i].route);
        pf_dstar_destroy(cs[i].d);
    }
    free(cs);
    free(buf);
    pf_search_ctx_destroy(ctx);
    if (!rc && (s->failed || s->mismatches)) rc = EXIT_MISMATCH;
    return rc;
}

/* p-th percentile of v[0..n) (sorted in place). */
static double pct(double *v, size_t n, double p) {
    if (!n) return NAN;
    qsort(v, n, sizeof(*v), pf_report_cmp_double);
    return pf_report_percentile(v, n, p);
}

static void print_run(const opts *o, const char *map, const pf_grid *g, const policy_def *p,
                      double h, size_t n, run_stats *s) {
    double mean_frame = 0;
    for (int f = 0; f < o->frames; f++) mean_frame += s->frame_us[f];
    mean_frame /= o->frames;
    double p50 = pct(s->frame_us, (size_t)o->frames, 50),
           p99 = pct(s->frame_us, (size_t)o->frames, 99);
    double dist = s->dist_n ? s->dist_sum / (double)s->dist_n : NAN;
    uint64_t skipped = s->reasons[PF_REPLAN_UNCHANGED] + s->reasons[PF_REPLAN_INTERVAL] +
                       s->reasons[PF_REPLAN_THRESHOLD];
    if (o->json) {
        printf("{\"map\":\"%s\",\"map_w\":%d,\"map_h\":%d,\"policy\":\"%s\",\"hysteresis\":%g,"
               "\"root\":\"%s\",\"reroot\":\"%s\",\"chasers\":%zu,"
               "\"frames\":%d,\"replans\":%llu,\"skipped\":%llu,\"expanded\":%llu,"
               "\"frame_us_mean\":%.1f,\"frame_us_p50\":%.1f,\"frame_us_p99\":%.1f,"
               "\"pushed\":%llu,\"flips\":%llu,\"kept\":%llu,\"mean_distance\":%.2f,"
               "\"failed\":%llu,\"mismatches\":%llu,\"reasons\":{",
               map, (int)pf_grid_width(g), (int)pf_grid_height(g), p->name, h,
               o->root == PF_DSTAR_ROOT_GOAL    ? "goal"
               : o->root == PF_DSTAR_ROOT_AGENT ? "agent"
                                                : "auto",
               o->reroot_always ? "always" : "needed", n, o->frames, (unsigned long long)s->replans,
               (unsigned long long)skipped, (unsigned long long)s->expanded, mean_frame, p50, p99,
               (unsigned long long)s->pushed, (unsigned long long)s->flips,
               (unsigned long long)s->kept, dist, (unsigned long long)s->failed,
               (unsigned long long)s->mismatches);
        for (int k = 0; k < PF_REPLAN_REASON_COUNT; k++)
            printf("%s\"%s\":%llu", k ? "," : "", pf_replan_reason_name((pf_replan_reason)k),
                   (unsigned long long)s->reasons[k]);
        printf("}");
        if (p->search == SEARCH_INCREMENTAL)
            printf(",\"anew\":%llu,\"rerooted\":%llu,\"session_bytes\":%.0f",
                   (unsigned long long)s->anew, (unsigned long long)s->rerooted, s->memory);
        if (s->nmoves) {
            size_t m = s->nmoves;
            printf(",\"goal_moves\":%zu,\"incremental_expanded_p50\":%.0f,"
                   "\"incremental_expanded_p99\":%.0f,\"fresh_expanded_p50\":%.0f,"
                   "\"fresh_expanded_p99\":%.0f,\"astar_expanded_p50\":%.0f,"
                   "\"ratio_p50\":%.4f,\"ratio_p99\":%.4f,\"reset_p50\":%.0f,\"reset_p99\":%.0f,"
                   "\"incremental_us_p50\":%.1f,\"fresh_us_p50\":%.1f",
                   m, pct(s->inc_exp, m, 50), pct(s->inc_exp, m, 99), pct(s->fresh_exp, m, 50),
                   pct(s->fresh_exp, m, 99), pct(s->astar_exp, m, 50), pct(s->ratio, m, 50),
                   pct(s->ratio, m, 99), pct(s->reset, m, 50), pct(s->reset, m, 99),
                   pct(s->inc_us, m, 50), pct(s->fresh_us, m, 50));
        }
        printf("}\n");
    } else {
        printf("%-14.14s %-21s %4.2f %4zu %7llu %7llu %10llu %9.1f %9.1f %9.1f %7llu %6llu %7.2f\n",
               map, p->name, h, n, (unsigned long long)s->replans, (unsigned long long)skipped,
               (unsigned long long)s->expanded, mean_frame, p50, p99, (unsigned long long)s->pushed,
               (unsigned long long)s->flips, dist);
        if (s->nmoves) {
            size_t m = s->nmoves;
            printf("  %zu goal moves: expanded incremental p50 %.0f p99 %.0f, fresh D* Lite p50 "
                   "%.0f p99 %.0f (A* p50 %.0f); ratio p50 %.4f p99 %.4f; reset p50 %.0f p99 "
                   "%.0f; cpu us incremental p50 %.1f, fresh %.1f; %llu anew, %llu re-rooted; "
                   "%.0f B/session\n",
                   m, pct(s->inc_exp, m, 50), pct(s->inc_exp, m, 99), pct(s->fresh_exp, m, 50),
                   pct(s->fresh_exp, m, 99), pct(s->astar_exp, m, 50), pct(s->ratio, m, 50),
                   pct(s->ratio, m, 99), pct(s->reset, m, 50), pct(s->reset, m, 99),
                   pct(s->inc_us, m, 50), pct(s->fresh_us, m, 50), (unsigned long long)s->anew,
                   (unsigned long long)s->rerooted, s->memory);
        }
    }
    fflush(stdout);
}

/* run_file's part with --url: every run over the server's stream. */
static int run_stream(const opts *o, pf_bench_scen *sc, const pf_grid *g, const pf_scen_entry *e,
                      size_t ne) {
    char map_id[80];
    size_t len;
    int rc = 0;
    const char *text = pf_bench_scen_map_text(sc, &len);
    snprintf(map_id, sizeof(map_id), "chase-%s", pf_bench_scen_name(sc));
    for (char *c = map_id; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.') *c = '_';
    pf_chase_stream_run r = {.host = o->host,
                             .prefix = o->prefix,
                             .port = o->port,
                             .map_id = map_id,
                             .g = g,
                             .e = e,
                             .ne = ne,
                             .threshold = o->threshold,
                             .speed = o->speed,
                             .turn = o->turn,
                             .frames = o->frames,
                             .timer_frames = o->timer_frames,
                             .seed = o->seed,
                             .server_pid = o->server_pid,
                             .json = o->json};
    if ((rc = pf_bench_chase_stream_put(&r, text, len))) return rc;
    if (!o->json)
        printf("%-14s %-12s %4s %4s %7s %7s %10s %7s %7s %6s %7s %10s %10s\n", "map", "policy",
               "hyst", "n", "replans", "skipped", "expanded", "pushed", "short", "flips", "dist",
               "client us", "server us");
    for (size_t ni = 0; ni < o->nchasers; ni++)
        for (size_t pi = 0; pi < o->npol; pi++)
            for (size_t hi = 0; hi < o->nhyst; hi++) {
                r.chasers = o->chasers[ni];
                r.policy = o->pol[pi]->name;
                r.hysteresis = o->hyst[hi];
                int k = pf_bench_chase_stream(&r, pf_bench_scen_name(sc));
                if (k && (!rc || k == EXIT_USAGE)) rc = k;
                if (k == EXIT_USAGE) return rc;
            }
    return rc;
}

static int run_file(const char *path, const opts *o) {
    pf_bench_scen_opts so;
    pf_bench_scen *sc;
    char err[512] = "";
    size_t ne;
    int rc = 0;
    memset(&so, 0, sizeof(so));
    so.min_bucket_frac = o->min_bucket_frac;
    pf_status st = pf_bench_scen_load(path, &so, &sc, err, sizeof(err));
    if (st) {
        fprintf(stderr, "pathd-bench: %s\n", err[0] ? err : pf_status_str(st));
        return EXIT_USAGE;
    }
    const pf_scen_entry *e = pf_bench_scen_entries(sc, &ne);
    const pf_grid *g = pf_planner_grid(pf_bench_scen_planner(sc));
    if (ne == 0) {
        fprintf(stderr, "pathd-bench: %s: no entries selected\n", pf_bench_scen_name(sc));
        pf_bench_scen_destroy(sc);
        return EXIT_USAGE;
    }
    if (o->url) {
        rc = run_stream(o, sc, g, e, ne);
        goto out;
    }
    if (!o->json)
        printf("%-14s %-21s %4s %4s %7s %7s %10s %9s %9s %9s %7s %6s %7s\n", "map", "policy",
               "hyst", "n", "replans", "skipped", "expanded", "us/frame", "p50", "p99", "pushed",
               "flips", "dist");
    for (size_t ni = 0; ni < o->nchasers; ni++)
        for (size_t pi = 0; pi < o->npol; pi++)
            for (size_t hi = 0; hi < o->nhyst; hi++) {
                run_stats s;
                int r = run(o, g, e, ne, o->chasers[ni], o->pol[pi], o->hyst[hi], &s);
                if (r != EXIT_USAGE)
                    print_run(o, pf_bench_scen_name(sc), g, o->pol[pi], o->hyst[hi], o->chasers[ni],
                              &s);
                stats_free(&s);
                if (r && (!rc || r == EXIT_USAGE)) rc = r;
                if (r == EXIT_USAGE) goto out;
            }
out:
    pf_bench_scen_destroy(sc);
    return rc;
}

/* A comma-separated list of at most MAX_LIST numbers in [lo, hi]. */
static bool parse_list(const char *arg, double lo, double hi, double *v, size_t *n) {
    char *end;
    *n = 0;
    for (const char *s = arg;;) {
        double x = strtod(s, &end);
        if (end == s || !isfinite(x) || x < lo || x > hi || *n == MAX_LIST) return false;
        v[(*n)++] = x;
        if (*end == '\0') return true;
        if (*end != ',') return false;
        s = end + 1;
    }
}

static bool parse_policies(const char *arg, opts *o) {
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", arg);
    o->npol = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < NPOLICIES && strcmp(policies[i].name, t) != 0; i++) {
        }
        if (i == NPOLICIES || o->npol == MAX_LIST) return false;
        o->pol[o->npol++] = &policies[i];
    }
    return o->npol > 0;
}

int pf_bench_chase_main(int argc, char **argv) {
    static const struct option longopts[] = {{"chasers", required_argument, NULL, 'n'},
                                             {"frames", required_argument, NULL, 'f'},
                                             {"policies", required_argument, NULL, 'p'},
                                             {"hysteresis", required_argument, NULL, 'H'},
                                             {"timer-frames", required_argument, NULL, 'T'},
                                             {"threshold", required_argument, NULL, 'D'},
                                             {"frame-ms", required_argument, NULL, 'm'},
                                             {"target-speed", required_argument, NULL, 'v'},
                                             {"turn", required_argument, NULL, 'u'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"root", required_argument, NULL, 'r'},
                                             {"reroot", required_argument, NULL, 'R'},
                                             {"min-bucket-frac", required_argument, NULL, 'b'},
                                             {"no-compare", no_argument, NULL, 'C'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"url", required_argument, NULL, 'U'},
                                             {"server-pid", required_argument, NULL, 'P'},
                                             {"nav-step", required_argument, NULL, 'S'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    opts o;
    double v[MAX_LIST];
    size_t nv;
    int opt, rc = 0;
    memset(&o, 0, sizeof(o));
    o.chasers[0] = 1;
    o.chasers[1] = 16;
    o.chasers[2] = 64;
    o.nchasers = 3;
    o.hyst[0] = 0;
    o.hyst[1] = 0.2;
    o.nhyst = 2;
    for (o.npol = 0; o.npol < 4; o.npol++) o.pol[o.npol] = &policies[o.npol];
    o.frames = 150;
    o.seed = 1;
    o.frame_ms = 50;
    o.timer_frames = 10;
    o.threshold = 3;
    o.speed = 0.5;
    o.turn = 1;
    o.min_bucket_frac = 0.25;
    o.root = PF_DSTAR_ROOT_AUTO;
    o.compare = true;
    o.nav_step = 0.3;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'n':
            if (!parse_list(optarg, 1, 100000, v, &nv)) {
                fprintf(stderr, "pathd-bench chase: --chasers wants integers in 1..100000\n");
                return EXIT_USAGE;
            }
            o.nchasers = nv;
            for (size_t i = 0; i < nv; i++) o.chasers[i] = (size_t)v[i];
            break;
        case 'f':
            if (!parse_list(optarg, 1, 1000000, v, &nv) || nv != 1) {
                fprintf(stderr, "pathd-bench chase: --frames wants an integer in 1..1000000\n");
                return EXIT_USAGE;
            }
            o.frames = (int)v[0];
            break;
        case 'p':
            o.pol_given = true;
            if (!parse_policies(optarg, &o)) {
                fprintf(stderr, "pathd-bench chase: --policies wants names from the table "
                                "(see --help)\n");
                return EXIT_USAGE;
            }
            break;
        case 'H':
            if (!parse_list(optarg, 0, PF_REPLAN_HYSTERESIS_MAX, o.hyst, &o.nhyst)) {
                fprintf(stderr, "pathd-bench chase: --hysteresis wants numbers in [0, %g]\n",
                        PF_REPLAN_HYSTERESIS_MAX);
                return EXIT_USAGE;
            }
            break;
        case 'T':
            if (!parse_list(optarg, 1, 10000, v, &nv) || nv != 1) {
                fprintf(stderr, "pathd-bench chase: --timer-frames wants an integer in 1..10000\n");
                return EXIT_USAGE;
            }
            o.timer_frames = (int)v[0];
            break;
        case 'D':
            if (!parse_list(optarg, 0, 10000, v, &nv) || nv != 1) {
                fprintf(stderr, "pathd-bench chase: --threshold wants a number in [0, 10000]\n");
                return EXIT_USAGE;
            }
            o.threshold = v[0];
            break;
        case 'm':
            if (!parse_list(optarg, 1, 10000, v, &nv) || nv != 1) {
                fprintf(stderr, "pathd-bench chase: --frame-ms wants an integer in 1..10000\n");
                return EXIT_USAGE;
            }
            o.frame_ms = (uint32_t)v[0];
            break;
        case 'v':
        case 'u':
            if (!parse_list(optarg, 0, 1, v, &nv) || nv != 1) {
                fprintf(stderr, "pathd-bench chase: --%s wants a number in [0, 1]\n",
                        opt == 'v' ? "target-speed" : "turn");
                return EXIT_USAGE;
            }
            *(opt == 'v' ? &o.speed : &o.turn) = v[0];
            break;
        case 's':
            if (!parse_list(optarg, 0, 4e9, v, &nv) || nv != 1) {
                fprintf(stderr, "pathd-bench chase: --seed wants an integer in 0..4e9\n");
                return EXIT_USAGE;
            }
            o.seed = (uint64_t)v[0];
            break;
        case 'r':
            if (strcmp(optarg, "auto") == 0)
                o.root = PF_DSTAR_ROOT_AUTO;
            else if (strcmp(optarg, "goal") == 0)
                o.root = PF_DSTAR_ROOT_GOAL;
            else if (strcmp(optarg, "agent") == 0)
                o.root = PF_DSTAR_ROOT_AGENT;
            else {
                fprintf(stderr, "pathd-bench chase: --root wants auto, goal or agent\n");
                return EXIT_USAGE;
            }
            break;
        case 'R':
            if (strcmp(optarg, "always") != 0 && strcmp(optarg, "needed") != 0) {
                fprintf(stderr, "pathd-bench chase: --reroot wants always or needed\n");
                return EXIT_USAGE;
            }
            o.reroot_always = optarg[0] == 'a';
            break;
        case 'b':
            if (!pf_report_bucket_frac(optarg, &o.min_bucket_frac)) return EXIT_USAGE;
            break;
        case 'C':
            o.compare = false;
            break;
        case 'j':
            o.json = true;
            break;
        case 'U':
            o.url = optarg;
            if (pf_bench_parse_url(optarg, o.host, sizeof(o.host), &o.port, o.prefix,
                                   sizeof(o.prefix)) != 0) {
                fprintf(stderr, "pathd-bench chase: --url wants http://host:port[/prefix]\n");
                return EXIT_USAGE;
            }
            break;
        case 'S':
            if (!parse_list(optarg, 0.01, 100, v, &nv) || nv != 1) {
                fprintf(stderr, "pathd-bench chase: --nav-step wants a number in [0.01, 100]\n");
                return EXIT_USAGE;
            }
            o.nav_step = v[0];
            break;
        case 'P':
            if (!parse_list(optarg, 1, 4194304, v, &nv) || nv != 1) {
                fprintf(stderr, "pathd-bench chase: --server-pid wants a process id\n");
                return EXIT_USAGE;
            }
            o.server_pid = (int)v[0];
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (o.url) {
        /* The server's sessions always search incrementally. */
        bool given = false;
        for (size_t i = 0; i < o.npol; i++) given |= o.pol[i]->search == SEARCH_INCREMENTAL;
        if (given && o.pol_given) {
            fprintf(stderr, "pathd-bench chase: with --url the policies are every-frame, timer "
                            "and threshold (a session's search is always incremental)\n");
            return EXIT_USAGE;
        }
        if (given) o.npol = 3; /* the default list: its first three */
    }
    if (optind >= argc) {
        fprintf(stderr, "pathd-bench chase: no scenario files given\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    for (int i = optind; i < argc; i++) {
        const size_t len = strlen(argv[i]);
        int r;
        if (strncmp(argv[i], "gen:", 4) == 0 ||
            (len > 4 && strcmp(argv[i] + len - 4, ".obj") == 0)) {
            const pf_chase_nav_opts no = {o.chasers, o.nchasers, o.frames,   o.seed, o.threshold,
                                          o.speed,   o.turn,     o.nav_step, o.json};
            r = pf_bench_chase_nav(argv[i], &no);
        } else {
            r = run_file(argv[i], &o);
        }
        if (r && (!rc || r == EXIT_USAGE)) rc = r;
    }
    return rc;
}
