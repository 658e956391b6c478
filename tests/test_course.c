/* test_course.c -- the route an agent follows between replans: finding the
 * agent on it, seeing it blocked, and adopting a new plan with hysteresis
 * (a table of situations, and thousands of random routes whose adoption is
 * checked against the contract restated plainly here: where the junction
 * is, what may be kept, what it may cost, what is a flip). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "course.h"
#include "dstar.h"
#include "search.h"
#include "testutil.h"

static bool same(pf_point a, pf_point b) { return a.x == b.x && a.y == b.y; }

static int64_t cheb(pf_point a, pf_point b) {
    int64_t dx = llabs((int64_t)a.x - b.x), dy = llabs((int64_t)a.y - b.y);
    return dx > dy ? dx : dy;
}

START_TEST(course_locates_the_agent_and_sees_blocks) {
    const char *rows[] = {"......", "......", "......"};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8);
    pf_course *r = pf_course_create();
    pf_course_view v = pf_course_view_grid(g);
    const pf_point path[] = {{0, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 2}};
    size_t n;
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_null(pf_course_ahead(r, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert(!pf_course_locate(r, (pf_point){0, 0}));
    ck_assert_int_eq(pf_course_set(r, path, 5), PF_OK);
    ck_assert(pf_course_locate(r, (pf_point){2, 1}));
    const pf_point *a = pf_course_ahead(r, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert(same(a[0], path[2]));
    /* Off the route: nothing changes. Back to an earlier point: found. */
    ck_assert(!pf_course_locate(r, (pf_point){5, 0}));
    pf_course_ahead(r, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert(pf_course_locate(r, (pf_point){1, 1}));
    pf_course_ahead(r, &n);
    ck_assert_uint_eq(n, 4);
    ck_assert(!pf_course_blocked(r, &v));
    ck_assert_double_eq_tol(pf_course_cost(&v, path, 5), 2 * sqrt(2.0) + 2, 1e-12);
    /* A blocked cell ahead. */
    ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){3, 1}, 0), PF_OK);
    ck_assert(pf_course_blocked(r, &v));
    ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){3, 1}, 1), PF_OK);
    /* A wall across a step ahead. */
    ck_assert_int_eq(pf_grid_set_wall(g, (pf_point){2, 1}, PF_DIR_E, true), PF_OK);
    ck_assert(pf_course_blocked(r, &v));
    ck_assert_int_eq(pf_grid_set_wall(g, (pf_point){2, 1}, PF_DIR_E, false), PF_OK);
    /* The corner rule: blocking (4,1) forbids the diagonal (3,1) -> (4,2). */
    ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){4, 1}, 0), PF_OK);
    ck_assert(pf_course_blocked(r, &v));
    /* Behind the agent does not count. */
    ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){4, 1}, 1), PF_OK);
    ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){0, 0}, 0), PF_OK);
    ck_assert(!pf_course_blocked(r, &v));
    pf_course_clear(r);
    pf_course_ahead(r, &n);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_gt(pf_course_memory(r), sizeof(pf_point) * 5);
    pf_course_destroy(r);
    pf_course_destroy(NULL);
    pf_grid_destroy(g);
}
END_TEST

/* Adoption, situation by situation, on an 11x7 room with a pillar in the
 * middle: the ways round it above and below cost the same. */
typedef struct adopt_case {
    const char *what;
    const pf_point *kept;
    size_t nk;
    const pf_point *fresh;
    size_t nf;
    double h;
    pf_course_outcome want;
    bool changed, flip;
} adopt_case;

START_TEST(course_adopt_by_table) {
    const char *rows[] = {"...........", "...........", "....###....", "....###....",
                          "....###....", "...........", "..........."};
    pf_grid *g = tu_grid_from_ascii(rows, 7, 8);
    pf_course_view v = pf_course_view_grid(g);
    /* Above the pillar and below it, from (1,3) to (9,3). */
    static const pf_point above[] = {{1, 3}, {2, 2}, {3, 1}, {4, 1}, {5, 1},
                                     {6, 1}, {7, 1}, {8, 2}, {9, 3}};
    static const pf_point below[] = {{1, 3}, {2, 4}, {3, 5}, {4, 5}, {5, 5},
                                     {6, 5}, {7, 5}, {8, 4}, {9, 3}};
    /* Above, then on to a goal that moved to (10,3) or (9,4). */
    static const pf_point above_on[] = {{1, 3}, {2, 2}, {3, 1}, {4, 1}, {5, 1},
                                        {6, 1}, {7, 1}, {8, 2}, {9, 3}, {10, 3}};
    static const pf_point above_side[] = {{1, 3}, {2, 2}, {3, 1}, {4, 1}, {5, 1},
                                          {6, 1}, {7, 1}, {8, 2}, {9, 3}, {9, 4}};
    static const pf_point below_on[] = {{1, 3}, {2, 4}, {3, 5}, {4, 5}, {5, 5},
                                        {6, 5}, {7, 5}, {8, 4}, {9, 3}, {10, 3}};
    /* Above, the long way: up to row 0 first (2 more). */
    static const pf_point high[] = {{1, 3}, {2, 2}, {3, 1}, {4, 0}, {5, 0},
                                    {6, 0}, {7, 1}, {8, 2}, {9, 3}};
    const adopt_case cases[] = {
        {"nothing kept", NULL, 0, above, 9, 0.2, PF_COURSE_NEW, true, false},
        {"the same", above, 9, above, 9, 0.2, PF_COURSE_SAME, false, false},
        {"goal moved on", above, 9, above_on, 10, 0.2, PF_COURSE_UPDATED, true, false},
        {"goal moved aside", above, 9, above_side, 10, 0.2, PF_COURSE_UPDATED, true, false},
        {"equal way below, hysteresis", above, 9, below_on, 10, 0.2, PF_COURSE_KEPT, true, false},
        {"equal way below, no hysteresis", above, 9, below_on, 10, 0, PF_COURSE_SWITCHED, true,
         true},
        {"equal way below, same goal", above, 9, below, 9, 0.2, PF_COURSE_KEPT, false, false},
        /* high costs 2 + 6 sqrt 2 = 10.49, below 4 + 4 sqrt 2 = 9.66: 8% less. */
        {"8% cheaper, h 0.05", high, 9, below, 9, 0.05, PF_COURSE_SWITCHED, true, true},
        {"8% cheaper, h 0.1", high, 9, below, 9, 0.1, PF_COURSE_KEPT, false, false},
        {"8% cheaper, stays near", high, 9, above, 9, 0.05, PF_COURSE_SWITCHED, true, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const adopt_case *c = &cases[i];
        pf_course *r = pf_course_create();
        pf_course_adoption ad;
        size_t n;
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(pf_course_set(r, c->kept, c->nk), PF_OK);
        ck_assert_int_eq(pf_course_adopt(r, c->fresh, c->nf, c->h, &v, &ad), PF_OK);
        ck_assert_msg(ad.outcome == c->want && ad.changed == c->changed && ad.flip == c->flip,
                      "%s: %s changed %d flip %d", c->what, pf_course_outcome_name(ad.outcome),
                      ad.changed, ad.flip);
        const pf_point *a = pf_course_ahead(r, &n);
        ck_assert(same(a[n - 1], c->fresh[c->nf - 1]) || c->want == PF_COURSE_SAME);
        if (c->want == PF_COURSE_KEPT) {
            /* Above to the junction (9,3), then the new path's tail. */
            ck_assert_uint_eq(n, 9 + (c->nf - 9));
            ck_assert(same(a[4], c->kept[4]));
            ck_assert_double_gt(ad.kept_cost, 0);
        }
        pf_course_destroy(r);
    }
    /* Errors leave the route as it was. */
    pf_course *r = pf_course_create();
    pf_course_adoption ad;
    size_t n;
    ck_assert_int_eq(pf_course_set(r, above, 9), PF_OK);
    ck_assert_int_eq(pf_course_adopt(r, below, 0, 0.2, &v, &ad), PF_EINVAL);
    ck_assert_int_eq(pf_course_adopt(r, below, 9, 1.0, &v, &ad), PF_EINVAL);
    ck_assert_int_eq(pf_course_adopt(r, below, 9, NAN, &v, &ad), PF_EINVAL);
    const pf_point *a = pf_course_ahead(r, &n);
    ck_assert(n == 9 && same(a[3], above[3]));
    /* A kept way that is blocked now is not kept. */
    ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){5, 1}, 0), PF_OK);
    ck_assert_int_eq(pf_course_adopt(r, below_on, 10, 0.5, &v, &ad), PF_OK);
    ck_assert_int_eq(ad.outcome, PF_COURSE_SWITCHED);
    pf_course_destroy(r);
    pf_grid_destroy(g);
}
END_TEST

/* The cost of p[0..n) on g, the test's own sum. */
static double walk_cost(const pf_grid *g, const pf_point *p, size_t n) {
    double c = 0;
    for (size_t i = 1; i < n; i++)
        c += pf_grid_cost(g, p[i]) *
             (p[i].x != p[i - 1].x && p[i].y != p[i - 1].y ? sqrt(2.0) : 1.0);
    return c;
}

static bool walkable(const pf_grid *g, const pf_point *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!pf_grid_is_walkable(g, p[i])) return false;
        if (i && !tu_reference_can_step(g, p[i - 1], p[i].x - p[i - 1].x, p[i].y - p[i - 1].y))
            return false;
    }
    return true;
}

/* Whether some point of a[0..na) (leaving out those within `skip` of
 * a[na - 1], skip < 0: none) is more than PF_COURSE_FLIP_CELLS from every
 * point of b[0..nb). */
static bool strays_from(const pf_point *a, size_t na, const pf_point *b, size_t nb, int64_t skip) {
    for (size_t i = 0; i < na; i++) {
        if (skip >= 0 && cheb(a[i], a[na - 1]) <= skip) continue;
        int64_t best = INT64_MAX;
        for (size_t j = 0; j < nb; j++)
            if (cheb(a[i], b[j]) < best) best = cheb(a[i], b[j]);
        if (best > PF_COURSE_FLIP_CELLS) return true;
    }
    return false;
}

/* An A* path from s to t on g (copied into buf), or 0 points. */
static size_t astar(pf_search_ctx *ctx, const pf_grid *g, pf_point s, pf_point t, pf_point *buf,
                    size_t cap) {
    pf_result r;
    pf_query q = pf_query_make(s, t, PF_ALGO_ASTAR);
    if (pf_search(ctx, g, &q, &r) != PF_OK || r.path_len > cap) return 0;
    memcpy(buf, r.path, r.path_len * sizeof(*buf));
    return r.path_len;
}

START_TEST(course_adopt_random_routes_keep_the_contract) {
    uint64_t st = tu_seed("course_adopt_random_routes_keep_the_contract", 0x40a7e);
    enum { CAP = 4096 };
    static pf_point kept[CAP], fresh[CAP], tmp[CAP];
    pf_search_ctx *ctx = pf_search_ctx_create();
    uint64_t seen[5] = {0}, flips = 0;
    static const double hs[] = {0, 0.05, 0.2, 0.5};
    ck_assert_ptr_nonnull(ctx);
    for (int run = 0; run < 3000; run++) {
        tu_map_opts o = {6, 32, 0.3, run % 2 == 0, run % 5 == 0, 8, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        pf_point a, t, w, t2;
        if (!tu_random_walkable(&st, g, &a)) goto next;
        tu_random_walkable(&st, g, &t);
        tu_random_walkable(&st, g, &w);
        /* The kept route: to t through a waypoint w (not the best way). */
        size_t n1 = astar(ctx, g, a, w, kept, CAP), nk = 0;
        size_t n2 = n1 ? astar(ctx, g, w, t, tmp, CAP) : 0;
        if (!n1 || !n2 || n1 + n2 > CAP) goto next;
        nk = n1 + n2 - 1;
        memcpy(kept + n1, tmp + 1, (n2 - 1) * sizeof(*tmp));
        /* The agent walked some of it; the goal moved; cells changed. */
        size_t at = tu_below(&st, (uint32_t)nk);
        pf_point agent = kept[at];
        t2 = t;
        for (int k = (int)tu_below(&st, 4); k > 0; k--) {
            pf_point q = {t2.x + (int32_t)tu_below(&st, 3) - 1,
                          t2.y + (int32_t)tu_below(&st, 3) - 1};
            if (pf_grid_is_walkable(g, q)) t2 = q;
        }
        for (int k = (int)tu_below(&st, 3); k > 0; k--) {
            pf_point q = kept[tu_below(&st, (uint32_t)nk)];
            if (!same(q, agent) && !same(q, t2) && tu_below(&st, 2)) pf_grid_set_cost(g, q, 0);
        }
        size_t nf = astar(ctx, g, agent, t2, fresh, CAP);
        if (!nf) goto next;
        double h = hs[tu_below(&st, 4)];
        pf_course *r = pf_course_create();
        pf_course_view v = pf_course_view_grid(g);
        pf_course_adoption ad;
        size_t n;
        ck_assert_int_eq(pf_course_set(r, kept, nk), PF_OK);
        ck_assert(pf_course_locate(r, agent));
        const pf_point *K = pf_course_ahead(r, &n);
        size_t m = n;
        memcpy(tmp, K, m * sizeof(*K)); /* K, before adoption changes the route */
        ck_assert_int_eq(pf_course_adopt(r, fresh, nf, h, &v, &ad), PF_OK);
        const pf_point *got = pf_course_ahead(r, &n);
        seen[ad.outcome]++;
        flips += ad.flip;
        /* Where the adopted route goes: from the agent to the new goal,
         * walkable, at most 1 / (1 - h) times the new path's cost. */
        ck_assert(same(got[0], agent));
        ck_assert(same(got[n - 1], fresh[nf - 1]) || ad.outcome == PF_COURSE_SAME);
        ck_assert_msg(walkable(g, got, n), "run %d: adopted route not walkable (%s)", run,
                      pf_course_outcome_name(ad.outcome));
        ck_assert_double_le(walk_cost(g, got, n), walk_cost(g, fresh, nf) / (1 - h) + 1e-9);
        if (h == 0) ck_assert(n == nf && memcmp(got, fresh, nf * sizeof(*fresh)) == 0);
        /* The junction, found the plain way: the kept cell furthest along
         * the new path. */
        size_t bj = 0, bk = 0;
        for (size_t j = 1; j < m; j++)
            for (size_t k = 0; k < nf; k++)
                if (same(tmp[j], fresh[k])) {
                    if (k > bk) {
                        bk = k;
                        bj = j;
                    }
                    break;
                }
        bool identical = m == nf && memcmp(tmp, fresh, nf * sizeof(*fresh)) == 0;
        bool same_way = bk > 0 && bj == bk && memcmp(tmp, fresh, (bk + 1) * sizeof(*fresh)) == 0;
        pf_course_outcome want;
        if (identical)
            want = PF_COURSE_SAME;
        else if (bk == 0)
            want = PF_COURSE_SWITCHED;
        else if (same_way)
            want = PF_COURSE_UPDATED;
        else if (h > 0 && walkable(g, tmp, bj + 1) &&
                 !(walk_cost(g, fresh, bk + 1) < (1 - h) * walk_cost(g, tmp, bj + 1)))
            want = PF_COURSE_KEPT;
        else
            want = PF_COURSE_SWITCHED;
        ck_assert_msg(ad.outcome == want, "run %d: %s, contract says %s", run,
                      pf_course_outcome_name(ad.outcome), pf_course_outcome_name(want));
        bool flip = false;
        if (want == PF_COURSE_SWITCHED)
            flip = bk == 0 ? strays_from(fresh, nf, tmp, m,
                                         cheb(tmp[m - 1], fresh[nf - 1]) + PF_COURSE_FLIP_CELLS)
                           : strays_from(fresh, bk + 1, tmp, bj + 1, -1);
        ck_assert_msg(ad.flip == flip, "run %d: flip %d, contract says %d", run, ad.flip, flip);
        if (want == PF_COURSE_KEPT) {
            ck_assert(n == bj + 1 + nf - bk - 1);
            ck_assert(memcmp(got, tmp, (bj + 1) * sizeof(*tmp)) == 0);
        }
        pf_course_destroy(r);
    next:
        pf_grid_destroy(g);
    }
    fprintf(stderr,
            "course_adopt_random: new %llu same %llu updated %llu switched %llu kept %llu, "
            "%llu flips\n",
            (unsigned long long)seen[0], (unsigned long long)seen[1], (unsigned long long)seen[2],
            (unsigned long long)seen[3], (unsigned long long)seen[4], (unsigned long long)flips);
    for (int k = 1; k < 5; k++) ck_assert_uint_gt(seen[k], 20);
    ck_assert_uint_gt(flips, 20);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* A D* Lite session's view reads its private overlay: a cell the session
 * blocked blocks the route, for it alone. */
START_TEST(course_view_of_a_session_reads_its_overlay) {
    const char *rows[] = {"......", "......"};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 8);
    pf_dstar *d = NULL;
    pf_course *r = pf_course_create();
    const pf_point path[] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}};
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){0, 0}, (pf_point){3, 0}, &d), PF_OK);
    pf_course_view v = pf_course_view_dstar(d), vg = pf_course_view_grid(g);
    ck_assert_int_eq(pf_course_set(r, path, 4), PF_OK);
    ck_assert(!pf_course_blocked(r, &v));
    ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){2, 0}, 0), PF_OK);
    ck_assert(pf_course_blocked(r, &v));
    ck_assert(!pf_course_blocked(r, &vg));
    ck_assert_int_eq(pf_dstar_cost(d, (pf_point){2, 0}), 0);
    ck_assert_int_eq(pf_dstar_cost(d, (pf_point){-1, 0}), 0);
    ck_assert(!pf_dstar_can_step(d, (pf_point){1, 0}, (pf_point){2, 0}));
    ck_assert(!pf_dstar_can_step(d, (pf_point){1, 0}, (pf_point){3, 0}));
    ck_assert(pf_dstar_can_step(d, (pf_point){1, 0}, (pf_point){1, 1}));
    /* The corner rule over the overlay: (1,1) -> (2,0) passes (2,1) and the
     * blocked (2,0) itself. */
    ck_assert(!pf_dstar_can_step(d, (pf_point){1, 1}, (pf_point){2, 0}));
    ck_assert_int_eq(pf_dstar_set_wall(d, (pf_point){0, 0}, PF_DIR_S, true), PF_OK);
    ck_assert(!pf_dstar_can_step(d, (pf_point){0, 0}, (pf_point){0, 1}));
    ck_assert(pf_grid_can_step(g, (pf_point){0, 0}, (pf_point){0, 1}));
    pf_course_destroy(r);
    pf_dstar_destroy(d);
    pf_grid_destroy(g);
}
END_TEST

TU_SUITE(course) {
    Suite *s = suite_create("course");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, course_locates_the_agent_and_sees_blocks);
    tcase_add_test(tc, course_adopt_by_table);
    tcase_add_test(tc, course_adopt_random_routes_keep_the_contract);
    tcase_add_test(tc, course_view_of_a_session_reads_its_overlay);
    suite_add_tcase(s, tc);
    return s;
}
