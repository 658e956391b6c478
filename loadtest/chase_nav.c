/* chase_nav.c -- `pathd-bench chase` on navmeshes, in-process: N chasers
 * after N random-walking targets on a 3D level (an OBJ file or gen:NAME,
 * levels.h), each chaser a path corridor (navmesh.h) as a navmesh
 * session holds one.
 *
 * Every frame each target walks, with probability --target-speed, --nav-step
 * along its heading (turning with probability --turn, or when the step
 * would leave the mesh), put on the mesh; then each chaser's policy
 * decides, its corridor answers, and it walks twice --nav-step along the
 * answered path. Policies (a table below):
 *   every-frame  a corridor plan (polyanya) to the target every frame
 *   threshold    a plan when the target is farther than --threshold (mesh
 *                units) from where the last plan aimed; else the corridor
 *                follows the agent to the goal it holds
 *   slide        what a navmesh session does by default: a target move the
 *                corridor can follow slides its end (pf_nav_corridor_move_target,
 *                Detour's moveTargetPosition) while the moves since the last
 *                plan add up to at most the search box's half width
 *                (--nav-target-slide-pct 100); else a plan
 * Reported per level, policy and chaser count: plans (searches, the
 * corridor's own replans included), slides, polyanya expansions, CPU time
 * per frame (thread CPU clock, all chasers), mean distance to the target,
 * and the answered path's ground length (polyanya's metric) against a
 * fresh query's from the same point to the same target (untimed): mean and
 * largest ratio (under 1 for threshold, whose path ends at the old goal).
 * The chasers are put back on the ground after each walk.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chase.h"
#include "detour_direct.h"
#include "levels.h"
#include "navmesh.h"
#include "obj.h"
#include "report.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2

typedef enum { NAV_EVERY, NAV_THRESHOLD, NAV_SLIDE } nav_policy;

static const struct {
    const char *name;
    nav_policy p;
} nav_policies[] = {{"every-frame", NAV_EVERY}, {"threshold", NAV_THRESHOLD}, {"slide", NAV_SLIDE}};
#define NNAV (sizeof(nav_policies) / sizeof(nav_policies[0]))

typedef struct nchaser {
    float pos[3], target[3], planned[3];
    double heading, slid;
    uint64_t rng;
    pf_nav_corridor *c;
    float *pts; /* the last answer's corners */
    uint32_t npts, cap;
    bool ok;
} nchaser;

typedef struct nstats {
    uint64_t plans, slides, expanded, failed;
    double frame_us, dist_sum, ratio_sum, ratio_max;
    uint64_t dist_n, ratio_n;
} nstats;

static double urand(uint64_t *s) {
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static double dist3(const float a[3], const float b[3]) {
    double d = 0;
    for (int k = 0; k < 3; k++) d += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
    return sqrt(d);
}

/* The target's frame (see the top). */
static void walk_target(nchaser *c, pf_nav_query *q, const pf_navmesh *nm,
                        const pf_chase_nav_opts *o) {
    if (urand(&c->rng) >= o->speed) return;
    if (urand(&c->rng) < o->turn) c->heading = 2 * M_PI * urand(&c->rng);
    for (int tries = 0; tries < 8; tries++) {
        float p[3] = {c->target[0] + (float)(o->step * cos(c->heading)), c->target[1],
                      c->target[2] + (float)(o->step * sin(c->heading))},
              s[3];
        if (pf_nav_nearest(q, nm, p, NULL, s) == PF_OK &&
            hypot((double)s[0] - p[0], (double)s[2] - p[2]) < 0.25 * o->step) {
            memcpy(c->target, s, sizeof(s));
            return;
        }
        c->heading = 2 * M_PI * urand(&c->rng);
    }
}

/* The chaser walks `len` along its corners. */
static void walk_chaser(nchaser *c, double len) {
    for (uint32_t i = 0; i + 1 < c->npts && len > 0; i++) {
        const float *b = &c->pts[3 * (i + 1)];
        double d = dist3(c->pos, b);
        if (d <= len) {
            memcpy(c->pos, b, 3 * sizeof(float));
            len -= d;
            continue;
        }
        for (int k = 0; k < 3; k++) c->pos[k] += (float)((b[k] - c->pos[k]) * (len / d));
        return;
    }
}

static int keep_points(nchaser *c, const pf_nav_path *p) {
    if (p->npoints > c->cap) {
        float *n = realloc(c->pts, (size_t)p->npoints * 3 * sizeof(float));
        if (!n) return -1;
        c->pts = n;
        c->cap = p->npoints;
    }
    memcpy(c->pts, p->points, (size_t)p->npoints * 3 * sizeof(float));
    c->npts = p->npoints;
    return 0;
}

static int run(const pf_navmesh *nm, pf_dd *dd, const pf_chase_nav_opts *o, size_t n,
               nav_policy pol, nstats *s) {
    nchaser *cs = calloc(n, sizeof(*cs));
    pf_nav_query *q = NULL, *fq = NULL;
    float ext[3];
    int rc = EXIT_USAGE;
    memset(s, 0, sizeof(*s));
    pf_navmesh_default_extents(nm, ext);
    const double limit = ext[0];
    if (!cs || pf_nav_query_create(65535, &q) || pf_nav_query_create(65535, &fq)) goto out;
    uint64_t rng = o->seed ^ 0xc4a5e;
    for (size_t i = 0; i < n; i++) {
        nchaser *c = &cs[i];
        c->rng = o->seed * UINT64_C(0x100000001B3) + i;
        c->heading = 2 * M_PI * urand(&c->rng);
        if (pf_nav_corridor_create(4096, &c->c)) goto out;
        /* A start and a target the start reaches. */
        for (int tries = 0; tries < 100 && !c->ok; tries++) {
            pf_nav_path p;
            const char *which;
            if (!pf_dd_random_point(dd, &rng, c->pos) || !pf_dd_random_point(dd, &rng, c->target))
                goto out;
            if (pf_nav_corridor_plan(c->c, q, nm, c->pos, c->target, NULL, PF_NAV_POLYANYA, &p,
                                     &which) == PF_OK &&
                !p.partial && !p.links && keep_points(c, &p) == 0) {
                memcpy(c->planned, c->target, sizeof(c->planned));
                c->ok = true;
            }
        }
        if (!c->ok) goto out;
    }
    for (int f = 0; f < o->frames; f++) {
        for (size_t i = 0; i < n; i++) walk_target(&cs[i], q, nm, o);
        double t0 = pf_report_now_us(CLOCK_THREAD_CPUTIME_ID);
        for (size_t i = 0; i < n; i++) {
            nchaser *c = &cs[i];
            pf_nav_path p;
            const char *which;
            bool plan = pol == NAV_EVERY, replanned = false, slid = false;
            pf_status st = PF_OK;
            if (pol == NAV_THRESHOLD) plan = dist3(c->target, c->planned) > o->threshold;
            if (pol == NAV_SLIDE) {
                float cp[3], cg[3];
                pf_nav_corridor_position(c->c, cp, cg);
                const double d = dist3(c->target, cg);
                if (d > 0 && c->slid + d <= limit &&
                    pf_nav_corridor_move_target(c->c, q, nm, c->target, &slid) == PF_OK && slid) {
                    c->slid += d;
                    s->slides++;
                }
                plan = d > 0 && !slid;
            }
            if (plan) {
                st = pf_nav_corridor_plan(c->c, q, nm, c->pos, c->target, NULL, PF_NAV_POLYANYA, &p,
                                          &which);
                replanned = true;
            } else {
                st =
                    pf_nav_corridor_move(c->c, q, nm, c->pos, (float)limit, &p, &replanned, &which);
            }
            if (st != PF_OK) {
                s->failed++;
                continue;
            }
            if (replanned) {
                float cp[3];
                s->plans++;
                s->expanded += p.expanded;
                pf_nav_corridor_position(c->c, cp, c->planned);
                c->slid = 0;
            }
            if (keep_points(c, &p) != 0) goto out;
        }
        s->frame_us += pf_report_now_us(CLOCK_THREAD_CPUTIME_ID) - t0;
        for (size_t i = 0; i < n; i++) {
            nchaser *c = &cs[i];
            pf_nav_path fp;
            const char *which;
            /* Untimed: the answer against a fresh query from the same point. */
            double len = 0; /* on the ground plane: polyanya's metric */
            for (uint32_t k = 0; k + 1 < c->npts; k++)
                len += hypot((double)c->pts[3 * k + 3] - c->pts[3 * k],
                             (double)c->pts[3 * k + 5] - c->pts[3 * k + 2]);
            if (c->npts &&
                pf_nav_find_path(fq, nm, c->pts, c->target, NULL, PF_NAV_POLYANYA, &fp, &which) ==
                    PF_OK &&
                !fp.partial && fp.ground_length > 1e-3) {
                const double ratio = len / fp.ground_length;
                s->ratio_sum += ratio;
                s->ratio_n++;
                if (ratio > s->ratio_max) s->ratio_max = ratio;
            }
            /* Along its corners, then on the ground (a straight piece
             * between corners on a slope leaves it). */
            walk_chaser(c, 2 * o->step);
            float g[3];
            if (pf_nav_nearest(q, nm, c->pos, NULL, g) == PF_OK) memcpy(c->pos, g, sizeof(g));
            s->dist_sum += dist3(c->pos, c->target);
            s->dist_n++;
        }
    }
    rc = s->failed ? EXIT_FAILED : 0;
out:
    for (size_t i = 0; cs && i < n; i++) {
        pf_nav_corridor_destroy(cs[i].c);
        free(cs[i].pts);
    }
    free(cs);
    pf_nav_query_destroy(q);
    pf_nav_query_destroy(fq);
    return rc;
}

int pf_bench_chase_nav(const char *path, const pf_chase_nav_opts *o) {
    pf_bench_level lvl;
    pf_nav_error nerr;
    pf_navmesh *nm = NULL;
    pf_dd *dd = NULL;
    int rc = EXIT_USAGE;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    pf_nav_limits lim = pf_nav_default_limits();
    memset(&lvl, 0, sizeof lvl);
    if (pf_bench_level_load(path, o->seed, &lim, "pathd-bench chase", &lvl) != PF_OK) goto out;
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.geom = &lvl.geom;
    in.config = pf_nav_default_config();
    lim.build_ms = 3600000; /* measured, not stopped */
    if (pf_nav_build(&in, &lim, NULL, &nm, &nerr) != PF_OK) {
        fprintf(stderr, "pathd-bench chase: %s: navmesh build: %s: %s\n", path, nerr.field,
                nerr.message);
        goto out;
    }
    if (pf_dd_create(nm, 65535, &dd) != PF_OK) goto out;
    rc = 0;
    if (!o->json)
        printf("%-14s %-12s %4s %7s %7s %10s %9s %7s %11s %9s\n", "level", "policy", "n", "plans",
               "slides", "expanded", "us/frame", "dist", "length/opt", "max");
    for (size_t ni = 0; ni < o->nchasers; ni++)
        for (size_t pi = 0; pi < NNAV; pi++) {
            nstats s;
            const size_t n = o->chasers[ni];
            int r = run(nm, dd, o, n, nav_policies[pi].p, &s);
            if (r == EXIT_USAGE) {
                fprintf(stderr, "pathd-bench chase: %s: no room or no reachable pairs\n", name);
                rc = r;
                goto out;
            }
            if (r) rc = r;
            const double dist = s.dist_n ? s.dist_sum / (double)s.dist_n : NAN,
                         ratio = s.ratio_n ? s.ratio_sum / (double)s.ratio_n : NAN;
            if (o->json)
                printf("{\"mode\":\"navmesh\",\"level\":\"%s\",\"policy\":\"%s\",\"chasers\":%zu,"
                       "\"frames\":%d,\"plans\":%llu,\"slides\":%llu,\"expanded\":%llu,"
                       "\"frame_us_mean\":%.1f,\"mean_distance\":%.3f,\"length_ratio_mean\":%.4f,"
                       "\"length_ratio_max\":%.4f,\"failed\":%llu}\n",
                       name, nav_policies[pi].name, n, o->frames, (unsigned long long)s.plans,
                       (unsigned long long)s.slides, (unsigned long long)s.expanded,
                       s.frame_us / o->frames, dist, ratio, s.ratio_max,
                       (unsigned long long)s.failed);
            else
                printf("%-14.14s %-12s %4zu %7llu %7llu %10llu %9.1f %7.2f %11.4f %9.4f\n", name,
                       nav_policies[pi].name, n, (unsigned long long)s.plans,
                       (unsigned long long)s.slides, (unsigned long long)s.expanded,
                       s.frame_us / o->frames, dist, ratio, s.ratio_max);
            fflush(stdout);
        }
out:
    pf_dd_destroy(dd);
    pf_navmesh_release(nm);
    pf_bench_level_free(&lvl);
    return rc;
}
