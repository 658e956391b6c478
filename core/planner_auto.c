/* planner_auto.c -- auto: the build's measurement of the exact search
 * against HPA*, and the per-query choice between them (planner.h).
 *
 * Which of the two is cheaper depends on the map far more than on anything
 * a query says: JPS with landmarks answers most queries on open, room and
 * street maps in microseconds and is exact, while on random obstacles its
 * jump points multiply and HPA* is several times faster; on 1-wide mazes
 * they cross over with distance. So the build times both on the same
 * sample queries, binned by a lower bound of their path length in cluster
 * sides (the scale at which the hierarchy starts to pay), and a query is
 * sent to what was faster in its bin. The bound is the landmarks' where
 * the map has them (landmarks.h), else the octile distance: on cluttered
 * maps ends 100 cells apart may be 1,000 cells of detour apart, where
 * HPA* is several times faster than jps, and octile distance put them
 * with the short queries, which jps wins (rand40, 40% random obstacles:
 * queries under 128 cells apart with detours of 200-1,100 went to jps,
 * where hpa was 1.4-10x faster). Exactness breaks ties: a
 * bin picks HPA* only when it was PF_PLANNER_AUTO_MARGIN times faster, so
 * where the exact search is the faster every answer is exact.
 *
 * The samples are drawn from a generator seeded by the map's size, so a
 * map's samples are the same every build; their times are thread CPU time,
 * which a busy machine disturbs less than wall time, but they remain
 * measurements, so two builds may choose differently in a bin where the
 * two are close. Either choice then costs about the same, and the answer
 * says which ran.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build_stop.h"
#include "clock_internal.h"
#include "grid_internal.h"
#include "planner_internal.h"
#include "search_internal.h"

/* A bin decides with at least this many samples; one with fewer (a map
 * with little room at that distance) takes its neighbour's choice. */
#define AUTO_MIN_SAMPLES 4
/* Untimed queries per bin that warm the map before the samples (below). */
#define AUTO_WARM_QUERIES 16

/* Bin b holds octile distances below bin_top(b) cluster sides: half an
 * octave each, from half a side (2^((b - 2) / 2)). Octaves were too wide
 * where the two searches cross over: on random512-10-0 (clusters of 64)
 * jps's mean over the scenario's queries of [256, 512) cells rose from 134
 * us at the bin's bottom to 433 at its top, hpa's from 120 to 180; the
 * samples, random pairs of cells, fall mostly in the bottom half, timed
 * jps at 117 against hpa's 155 and kept jps for the whole bin, where over
 * the scenario hpa was 1.8x faster (auto 1.14x the faster of the two). */
static double bin_top(int b) {
    /* 2^((b - 2) / 2) without pow: bin_of runs per query, up to 13 times
     * twice. Odd b is sqrt 2 times the even power below it; the values are
     * pow's to the bit. */
    if (b == PF_PLANNER_AUTO_BINS - 1) return INFINITY;
    return ldexp(b % 2 ? PF_SQRT2 : 1.0, (b - 2 - b % 2) / 2);
}

static int bin_of(double d, int32_t cs) {
    double sides = d / (double)cs;
    int b = 0;
    while (b < PF_PLANNER_AUTO_BINS - 1 && sides >= bin_top(b)) b++;
    return b;
}

static double octile(pf_point a, pf_point b, int conn) {
    int32_t dx = abs(a.x - b.x), dy = abs(a.y - b.y);
    if (conn == 4) return (double)(dx + dy);
    return (double)(dx > dy ? dx : dy) + (PF_SQRT2 - 1.0) * (double)(dx > dy ? dy : dx);
}

/* What auto bins a query by, in cells: the larger of the octile distance
 * and the landmarks' lower bound of the path length (in steps of the one
 * cost jps's maps have), or the octile distance without landmarks. */
static double query_distance(const pf_planner *p, pf_point s, pf_point t) {
    const pf_grid *g = p->grid;
    double d = octile(s, t, g->connectivity), h;
    if (!p->lm) return d;
    h = pf_landmarks_h(p->lm, s.y * g->w + s.x, t.y * g->w + t.x) / (double)p->lm->cost;
    return h > d ? h : d;
}

static uint64_t next_rand(uint64_t *s) {
    /* xorshift64* (Vigna 2016) */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static double rand_unit(uint64_t *s) { return (double)(next_rand(s) >> 11) * 0x1.0p-53; }

static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

pf_algorithm pf__auto_exact(const pf_planner *p) {
    return pf_jps_supports(p->grid) ? PF_ALGO_JPS : PF_ALGO_ASTAR;
}

/* A random walkable cell, or false after a few hundred misses (a map that
 * is nearly all blocked). */
static bool random_cell(const pf_grid *g, uint64_t *rs, pf_point *out) {
    for (int k = 0; k < 256; k++) {
        pf_point p = {(int32_t)(next_rand(rs) % (uint64_t)g->w),
                      (int32_t)(next_rand(rs) % (uint64_t)g->h)};
        if (g->cost[(size_t)p.y * g->w + p.x]) {
            *out = p;
            return true;
        }
    }
    return false;
}

/* Up to `tries` pairs of random cells for one in the same component whose
 * query_distance is in [lo, hi): 1 found, 0 none, -1 when the map has
 * (nearly) no walkable cell. */
static int random_pair(const pf_planner *p, double lo, double hi, int tries, uint64_t *rs,
                       pf_point *s, pf_point *t) {
    for (int k = 0; k < tries; k++) {
        double d;
        if (!random_cell(p->grid, rs, s) || !random_cell(p->grid, rs, t)) return -1;
        d = query_distance(p, *s, *t);
        if (d >= lo && d < hi && pf_hpa_connected(p->hpa, *s, *t)) return 1;
    }
    return 0;
}

/* A query of bin b: a walkable start and a goal in the same component
 * whose query_distance is within the bin, or false after many misses (the
 * map has no room for the bin). With landmarks the ends are drawn from
 * octile distances down to a quarter of the bin's (walls make the bound
 * longer), and the bound decides. */
static bool random_query(const pf_planner *p, int b, uint64_t *rs, pf_point *s, pf_point *t) {
    const pf_grid *g = p->grid;
    const double cs = (double)p->autom.cs;
    const double lo = b == 0 ? 1.0 : bin_top(b - 1) * cs, hi = bin_top(b) * cs;
    const double span = octile((pf_point){0, 0}, (pf_point){g->w, g->h}, 8);
    double dlo = p->lm ? lo / 4 : lo, dhi = hi > span ? span : hi;
    int found;
    if (dlo < 1.0) dlo = 1.0;
    if (dlo >= dhi) return false;
    /* Pairs of random cells first, as a server's queries come: an offset
     * drawn from a random cell leaves the map more often the longer and
     * the more diagonal it is, so the long bins' surviving offsets were
     * mostly along an axis, where jps jumps fastest (random512-10-0's
     * [512, 1024) bin: jps 464-525 us against hpa's 435-519 on such
     * samples, 818-880 against 626-656 on the scenario's queries of the
     * same octile range). The short bins, where random pairs seldom land,
     * take offsets. */
    if ((found = random_pair(p, lo, hi, 128, rs, s, t)) != 0) return found > 0;
    for (int k = 0; k < 64; k++) {
        double d = dlo + (dhi - dlo) * rand_unit(rs), r = rand_unit(rs), q;
        /* A major and a minor offset whose octile length is d. */
        double major = d / (1.0 + (PF_SQRT2 - 1.0) * r), minor = major * r;
        int32_t dx = (int32_t)lround(major), dy = (int32_t)lround(minor), tmp;
        if (next_rand(rs) & 1) {
            tmp = dx;
            dx = dy;
            dy = tmp;
        }
        if (next_rand(rs) & 1) dx = -dx;
        if (next_rand(rs) & 1) dy = -dy;
        if (!random_cell(g, rs, s)) return false;
        t->x = s->x + dx;
        t->y = s->y + dy;
        if (t->x < 0 || t->y < 0 || t->x >= g->w || t->y >= g->h) continue;
        if ((t->x == s->x && t->y == s->y) || !pf_hpa_connected(p->hpa, *s, *t)) continue;
        q = query_distance(p, *s, *t);
        if (q < lo || q >= hi) continue;
        return true;
    }
    /* The longest bins: an offset of that length from a random cell mostly
     * leaves the map (on a 512x512 map with 28-cell clusters, the last bin
     * got one sample of the 16 asked, and took its neighbour's choice,
     * where hpa was 1.3x faster in mean). Random pairs of cells do land
     * there, a few percent of them. */
    return random_pair(p, lo, hi, 2048, rs, s, t) > 0;
}

/* A sample search's stop callback: a search polls every 256 expansions
 * (search_internal.h), which on cluttered maps is already a slice of work
 * (a jps expansion scans whole rows): each of its polls is one. */
static bool poll_build(void *ud) { return pf_build_poll(ud); }

/* Thread CPU microseconds of one search of algorithm a; *ok false when it
 * did not answer (astar's node budget, or the build's stop). The searches
 * poll the build's stop like the server's own queries poll their
 * deadlines; without one they run as pathd-bench runs them. */
static double time_search(pf_search_ctx *ctx, const pf_planner *p, pf_algorithm a, pf_point s,
                          pf_point t, uint64_t budget, pf_build_stop *stop, bool *ok) {
    pf_query q = pf_query_make(s, t, a);
    pf_result r;
    uint64_t t0;
    pf_status st;
    q.max_expanded = a == PF_ALGO_ASTAR ? budget : 0;
    if (stop) {
        q.should_stop = poll_build;
        q.stop_ud = stop;
    }
    t0 = cpu_ns();
    st = pf_planner_search(ctx, p, &q, &r);
    *ok = st == PF_OK;
    return (double)(cpu_ns() - t0) / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The mean of v[0..n) without its largest eighth: a sample a busy machine
 * slowed (another process's cache traffic, an interrupt) is only ever
 * slower. Sorts v. */
static double trimmed_mean(double *v, int n) {
    int keep = n - n / 8;
    double sum = 0;
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    for (int i = 0; i < keep; i++) sum += v[i];
    return sum / keep;
}

pf_status pf__auto_calibrate(pf_planner *p, pf_build_stop *stop) {
    pf__auto_model *m = &p->autom;
    const pf_grid *g = p->grid;
    const int k = p->opts.auto_samples > PF_PLANNER_MAX_AUTO_SAMPLES ? PF_PLANNER_MAX_AUTO_SAMPLES
                  : p->opts.auto_samples                             ? p->opts.auto_samples
                                         : PF_PLANNER_DEFAULT_AUTO_SAMPLES;
    uint64_t rs = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)g->w << 32) ^ (uint64_t)g->h, t0, budget;
    pf_search_ctx *ctx;

    memset(m, 0, sizeof(*m));
    m->exact = pf__auto_exact(p);
    m->exact_faster = true;
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) m->pick[b] = m->exact;
    if (!p->hpa || k < 0 || (int64_t)g->w * g->h < PF_PLANNER_AUTO_MIN_CELLS) return PF_OK;
    ctx = pf_search_ctx_create();
    if (!ctx) return PF_OK;
    t0 = pf__mono_us();
    {
        pf_hpa_stats hs;
        pf_hpa_get_stats(p->hpa, &hs);
        m->cs = hs.cluster_size;
    }
    /* An astar that expands this many nodes has lost to HPA* whatever the
     * bin (HPA*'s searches expand far fewer). */
    budget = 64 * (uint64_t)m->cs * (uint64_t)m->cs;
    /* Warm-up: the first search of each kind sizes the context's scratch
     * for the map, which no later query pays for. */
    for (int b = PF_PLANNER_AUTO_BINS - 1; b >= 0; b--) {
        pf_point s, t;
        bool ok;
        if (!random_query(p, b, &rs, &s, &t)) continue;
        time_search(ctx, p, m->exact, s, t, budget, stop, &ok);
        time_search(ctx, p, PF_ALGO_HPA, s, t, budget, stop, &ok);
        break;
    }
    /* ... and a pass of other queries over every bin, untimed: a map just
     * built is cold (its clusters' trees and the context's pages untouched
     * since the build), and a cold HPA* query costs several times a warm
     * one where jps's barely changes. Without it the samples measured HPA*
     * as a server that has been answering for a while never sees it:
     * random512-30-g1 (pathd-bench gen), 16-32 cells, hpa 143-164 us
     * measured against a mean of 62 us over the map's own scenarios, so
     * auto kept jps in the 256-512 bin where hpa was 2.2x faster (auto
     * 1.26x the faster of the two; with a pass of 230 queries first, the
     * same queries timed 61 us). Other queries than the samples: a sample
     * run twice finds its own cells in the cache. */
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++)
        for (int i = 0; i < AUTO_WARM_QUERIES; i++) {
            pf_point s, t;
            bool ok;
            if (!random_query(p, b, &rs, &s, &t)) break;
            time_search(ctx, p, m->exact, s, t, budget, stop, &ok);
            time_search(ctx, p, PF_ALGO_HPA, s, t, budget, stop, &ok);
            if (p->sgh) time_search(ctx, p, PF_ALGO_SUBGOAL, s, t, budget, stop, &ok);
            if (pf_build_stopped(stop)) {
                pf_search_ctx_destroy(ctx);
                memset(m, 0, sizeof(*m));
                return PF_ECANCELED;
            }
        }
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) {
        double te[PF_PLANNER_MAX_AUTO_SAMPLES], th[PF_PLANNER_MAX_AUTO_SAMPLES],
            tsg[PF_PLANNER_MAX_AUTO_SAMPLES];
        bool exact_lost = false;
        int n = 0;
        for (int i = 0; i < k; i++) {
            pf_point s, t;
            bool ok;
            if (!random_query(p, b, &rs, &s, &t)) break;
            /* Once each, alternating which runs first so neither always
             * finds the caches warm from the other (running a query twice
             * would: the second run of a jps query reads its jump points
             * and landmark lines from the cache, which made maze512-1-0's
             * jps look twice as fast as it is). */
            if (i & 1) th[n] = time_search(ctx, p, PF_ALGO_HPA, s, t, budget, stop, &ok);
            if (p->sgh && i % 3 == 1)
                tsg[n] = time_search(ctx, p, PF_ALGO_SUBGOAL, s, t, budget, stop, &ok);
            te[n] = time_search(ctx, p, m->exact, s, t, budget, stop, &ok);
            exact_lost |= !ok;
            if (p->sgh && i % 3 != 1)
                tsg[n] = time_search(ctx, p, PF_ALGO_SUBGOAL, s, t, budget, stop, &ok);
            if (!(i & 1)) th[n] = time_search(ctx, p, PF_ALGO_HPA, s, t, budget, stop, &ok);
            if (pf_build_stopped(stop)) {
                pf_search_ctx_destroy(ctx);
                memset(m, 0, sizeof(*m));
                return PF_ECANCELED;
            }
            n++;
        }
        if (!n) continue;
        m->samples[b] = n;
        m->exact_us[b] = trimmed_mean(te, n);
        m->hpa_us[b] = trimmed_mean(th, n);
        m->subgoal_us[b] = p->sgh ? trimmed_mean(tsg, n) : 0;
        if (exact_lost) m->exact_us[b] = INFINITY;
    }
    pf_search_ctx_destroy(ctx);
    m->calibrated = true;
    m->exact_faster = true;
    /* Each bin's pick; a bin without samples takes the nearest measured
     * bin's, the shorter one first. */
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) {
        int src = -1;
        for (int d = 0; d < PF_PLANNER_AUTO_BINS && src < 0; d++) {
            if (b - d >= 0 && m->samples[b - d] >= AUTO_MIN_SAMPLES)
                src = b - d;
            else if (b + d < PF_PLANNER_AUTO_BINS && m->samples[b + d] >= AUTO_MIN_SAMPLES)
                src = b + d;
        }
        double best = src >= 0 ? m->exact_us[src] : 0;
        m->pick[b] = m->exact;
        /* Both exact: subgoal where it was PF_PLANNER_AUTO_MARGIN times
         * faster (keeping it costs memory and each PATCH a contraction:
         * planner_subgoal.c, which drops it where no bin picks it). */
        if (src >= 0 && m->subgoal_us[src] > 0 &&
            best > PF_PLANNER_AUTO_MARGIN * m->subgoal_us[src]) {
            m->pick[b] = PF_ALGO_SUBGOAL;
            best = m->subgoal_us[src];
        }
        if (src >= 0 && best > PF_PLANNER_AUTO_MARGIN * m->hpa_us[src]) {
            m->pick[b] = PF_ALGO_HPA;
            m->exact_faster = false;
        }
    }
    m->all_exact = true;
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) m->all_exact &= m->pick[b] == m->exact;
    for (int b = PF_PLANNER_AUTO_BINS - 1; b >= 0; b--)
        m->settled[b] =
            b == PF_PLANNER_AUTO_BINS - 1 || (m->settled[b + 1] && m->pick[b + 1] == m->pick[b]);
    m->calibrate_us = pf__mono_us() - t0;
    return PF_OK;
}

pf_algorithm pf_planner_auto_pick(const pf_planner *p, pf_point s, pf_point t) {
    const pf__auto_model *m = &p->autom;
    pf_algorithm a;
    int b;
    if (!p->hpa || !m->calibrated || m->all_exact || !m->cs) return m->exact;
    /* The bound is at least the octile distance, so its bin is at least
     * the octile's: where every bin from there picks the same, the
     * landmarks need not be read. */
    b = bin_of(octile(s, t, p->grid->connectivity), m->cs);
    if (!m->settled[b]) b = bin_of(query_distance(p, s, t), m->cs);
    a = m->pick[b];
    if (a != m->exact && m->exact == PF_ALGO_JPS && pf_jps_is_direct(p->jps, p->grid, s, t))
        return PF_ALGO_JPS;
    if (a == PF_ALGO_SUBGOAL && !p->sgh) return m->exact; /* a version that lost it */
    return a;
}

void pf_planner_auto_info_get(const pf_planner *p, pf_planner_auto_info *out) {
    const pf__auto_model *m = &p->autom;
    memset(out, 0, sizeof(*out));
    out->calibrated = m->calibrated;
    out->exact = m->calibrated ? m->exact : pf__auto_exact(p);
    out->exact_faster = m->exact_faster || !m->calibrated;
    out->calibrate_us = m->calibrate_us;
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) {
        out->bins[b].max_distance = m->cs ? bin_top(b) * m->cs : INFINITY;
        out->bins[b].samples = m->samples[b];
        out->bins[b].exact_us = m->exact_us[b];
        out->bins[b].hpa_us = m->hpa_us[b];
        out->bins[b].subgoal_us = m->subgoal_us[b];
        out->bins[b].pick = m->calibrated ? m->pick[b] : out->exact;
    }
}
