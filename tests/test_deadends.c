/* test_deadends.c -- the dead-end test of core/deadends.h against a brute
 * force built on the independent reference rule of testutil.c.
 *
 * Reference: cell u (neither end) lies on a simple path from s to g exactly
 * when no single cell c != u cuts u off from every end other than c (Menger:
 * two paths from u, one to s and one to g, sharing only u). So for each
 * query and each cell c, two breadth-first searches of the map without c,
 * from s and from g, mark what c does not cut off.
 *
 * Checked: every cell the reference puts on a simple s-g path is allowed
 * (soundness, random maps of both corner rules and wall-free perfect and
 * loopy mazes); on perfect mazes (corridor 1, no corner cutting: trees)
 * at most one cell besides them is allowed
 * (the walk finds the meeting block; its top cut vertex is the one extra),
 * so a test that no longer prunes fails too. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "deadends.h"
#include "maze.h"
#include "testutil.h"

/* on[u]: u lies on some simple path from s to g (s and g connected). */
static void reference_on_path(const pf_grid *g, pf_point s, pf_point t, bool *on, bool *rs,
                              bool *rt) {
    int32_t w = pf_grid_width(g), n = w * pf_grid_height(g), is = s.y * w + s.x, it = t.y * w + t.x;
    for (int32_t u = 0; u < n; u++) on[u] = pf_grid_is_walkable(g, (pf_point){u % w, u / w});
    for (int32_t c = 0; c < n; c++) {
        pf_point pc = {c % w, c / w};
        if (!pf_grid_is_walkable(g, pc)) continue;
        /* Reached from an end without passing c (an end that is c reaches
         * nothing). */
        if (c != is) tu_reference_reach(g, s, c, rs);
        if (c != it) tu_reference_reach(g, t, c, rt);
        for (int32_t u = 0; u < n; u++) {
            if (u == c || !on[u]) continue;
            if (!((c != is && rs[u]) || (c != it && rt[u]))) on[u] = false;
        }
    }
    on[is] = on[it] = true;
}

/* Checks q's answers for every cell; returns the allowed cells the reference
 * does not put on a path. */
static int check_query(const pf_grid *g, const pf_deadends *d, pf_point s, pf_point t,
                       const char *what, bool *on, bool *rs, bool *rt) {
    int32_t w = pf_grid_width(g), n = w * pf_grid_height(g), extra = 0;
    pf_deadends_query q;
    tu_reference_reach(g, s, -1, rs);
    if (!rs[t.y * w + t.x]) {
        ck_assert_msg(!pf_deadends_begin(d, s.y * w + s.x, t.y * w + t.x, &q),
                      "%s: (%d,%d)-(%d,%d) not connected but begun", what, s.x, s.y, t.x, t.y);
        return 0;
    }
    ck_assert_msg(pf_deadends_begin(d, s.y * w + s.x, t.y * w + t.x, &q),
                  "%s: (%d,%d)-(%d,%d) connected but refused", what, s.x, s.y, t.x, t.y);
    reference_on_path(g, s, t, on, rs, rt);
    for (int32_t u = 0; u < n; u++) {
        bool a;
        if (!pf_grid_is_walkable(g, (pf_point){u % w, u / w})) continue;
        a = pf_deadends_allowed(d, &q, u);
        ck_assert_msg(a || !on[u], "%s: (%d,%d) is on a simple path (%d,%d)-(%d,%d) but pruned",
                      what, u % w, u / w, s.x, s.y, t.x, t.y);
        extra += a && !on[u];
    }
    return extra;
}

START_TEST(deadends_sound_on_random_maps) {
    uint64_t st = tu_seed("deadends_sound_on_random_maps", 0xdead0001);
    int pruned_any = 0;
    for (int m = 0; m < 300; m++) {
        tu_map_opts o = {2, 12, 0.55, false, false, m % 3 == 0 ? 4 : 8, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t w = pf_grid_width(g), n = w * pf_grid_height(g);
        bool *on = malloc((size_t)n), *rs = malloc((size_t)n), *rt = malloc((size_t)n);
        pf_deadends *d = NULL;
        char what[48];
        ck_assert(on && rs && rt);
        ck_assert_int_eq(pf_deadends_build(g, 0.0, NULL, &d), PF_OK);
        snprintf(what, sizeof(what), "map %d", m);
        for (int k = 0; d && k < 6; k++) {
            pf_point s, t;
            int32_t before = 0, allowed = 0;
            pf_deadends_query q;
            tu_random_walkable(&st, g, &s);
            tu_random_walkable(&st, g, &t);
            check_query(g, d, s, t, what, on, rs, rt);
            if (!pf_deadends_begin(d, s.y * w + s.x, t.y * w + t.x, &q)) continue;
            for (int32_t u = 0; u < n; u++) {
                if (!pf_grid_is_walkable(g, (pf_point){u % w, u / w})) continue;
                before++;
                allowed += pf_deadends_allowed(d, &q, u);
            }
            pruned_any += allowed < before;
        }
        pf_deadends_destroy(d);
        free(on);
        free(rs);
        free(rt);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(pruned_any, 200); /* the test sees pruning happen */
}
END_TEST

START_TEST(deadends_tight_on_perfect_mazes) {
    uint64_t st = tu_seed("deadends_tight_on_perfect_mazes", 0xdead0002);
    for (int m = 0; m < 60; m++) {
        pf_maze_params p = {0};
        pf_grid *g = NULL;
        pf_deadends *d = NULL;
        int32_t n;
        bool *on, *rs, *rt;
        char what[48];
        p.width = 9 + (int32_t)tu_below(&st, 16);
        p.height = 9 + (int32_t)tu_below(&st, 16);
        p.seed = tu_rand(&st);
        p.corridor = 1 + (int32_t)tu_below(&st, 2);
        p.walls = PF_MAZE_WALL_CELLS;
        p.loops = m % 3 == 2 ? 0.2 : 0.0;
        p.connectivity = 8;
        p.corner_cutting = m % 2;
        ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_OK);
        n = pf_grid_width(g) * pf_grid_height(g);
        on = malloc((size_t)n);
        rs = malloc((size_t)n);
        rt = malloc((size_t)n);
        ck_assert(on && rs && rt);
        ck_assert_int_eq(pf_deadends_build(g, 0.0, NULL, &d), PF_OK);
        ck_assert_ptr_nonnull(d);
        snprintf(what, sizeof(what), "maze %d (corridor %d, loops %.1f)", m, p.corridor, p.loops);
        for (int k = 0; k < 8; k++) {
            pf_point s, t;
            int extra;
            tu_random_walkable(&st, g, &s);
            tu_random_walkable(&st, g, &t);
            extra = check_query(g, d, s, t, what, on, rs, rt);
            /* A corridor of width 1 without loops (and without corner
             * cutting, whose diagonals close cycles) is a tree of single
             * steps: at most L's top cut vertex is extra. */
            if (p.corridor == 1 && p.loops == 0.0 && !p.corner_cutting)
                ck_assert_msg(extra <= 1, "%s: %d cells allowed off every simple path", what,
                              extra);
        }
        pf_deadends_destroy(d);
        free(on);
        free(rs);
        free(rt);
        pf_grid_destroy(g);
    }
}
END_TEST

TU_SUITE(deadends) {
    Suite *s = suite_create("deadends");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, deadends_sound_on_random_maps);
    tcase_add_test(tc, deadends_tight_on_perfect_mazes);
    suite_add_tcase(s, tc);
    return s;
}
