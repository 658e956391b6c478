/* test_subgoal.c -- simple subgoal graphs: optimal against the tests'
 * reference Dijkstra on thousands of random maps (with and without landmark
 * bounds), a local repair that equals a rebuild after random changes, the
 * Moving AI scenarios' optima, and the maps and queries it refuses. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "landmarks.h"
#include "map_io.h"
#include "subgoal.h"
#include "testutil.h"

/* The path is start..goal by steps the tests' own rule allows, and its
 * cost (entry costs, sqrt 2 diagonally) is the answer's. Returns a message
 * or NULL. */
static const char *path_problem(const pf_grid *g, const pf_subgoal_answer *a, pf_point s,
                                pf_point t) {
    if (a->path_len < 1) return "empty path";
    if (a->path[0].x != s.x || a->path[0].y != s.y) return "path does not start at the start";
    pf_point e = a->path[a->path_len - 1];
    if (e.x != t.x || e.y != t.y) return "path does not end at the goal";
    double c = 0;
    for (size_t i = 1; i < a->path_len; i++) {
        int dx = a->path[i].x - a->path[i - 1].x, dy = a->path[i].y - a->path[i - 1].y;
        if (dx < -1 || dx > 1 || dy < -1 || dy > 1 || (!dx && !dy)) return "not a step";
        if (!tu_reference_can_step(g, a->path[i - 1], dx, dy)) return "a step the rule forbids";
        c += pf_grid_cost(g, a->path[i]) * (dx && dy ? sqrt(2.0) : 1.0);
    }
    if (fabs(c - a->cost) > 1e-6 * fmax(1.0, c)) return "path cost differs from the answer";
    return NULL;
}

/* Queries between random walkable cells of g against the reference; returns
 * the number of mismatches (printing the first few). */
static int check_queries(const pf_grid *g, const pf_subgoal *s, const pf_subgoal_ch *ch,
                         const pf_landmarks *lm, pf_subgoal_ctx *c, uint64_t *rng, int queries,
                         const char *what) {
    int bad = 0;
    for (int q = 0; q < queries; q++) {
        pf_point a, b;
        if (!tu_random_walkable(rng, g, &a) || !tu_random_walkable(rng, g, &b)) break;
        double ref = tu_reference_cost(g, a, b);
        pf_subgoal_answer r;
        for (int k = 0; k < (ch ? 2 : 1); k++) {
            pf_status st = k ? pf_subgoal_ch_find(s, ch, g, lm, c, a, b, &r)
                             : pf_subgoal_find(s, g, lm, c, a, b, &r);
            const char *why = NULL;
            if (ref < 0)
                why = st == PF_NO_PATH ? NULL : "found a path the reference does not";
            else if (st != PF_OK)
                why = "no answer where the reference has one";
            else if (fabs(r.cost - ref) > 1e-6 * fmax(1.0, ref))
                why = "cost differs from the reference";
            else
                why = path_problem(g, &r, a, b);
            if (why && bad++ < 5)
                fprintf(stderr, "%s%s: (%d,%d)->(%d,%d) on %dx%d: %s (%.6f against %.6f)\n", what,
                        k ? " (hierarchy)" : "", a.x, a.y, b.x, b.y, pf_grid_width(g),
                        pf_grid_height(g), why, r.cost, ref);
        }
    }
    return bad;
}

static const tu_map_opts random_opts = {4, 40, 0.45, false, false, 8, 0};

/* 2,000 random maps of 4..40 cells a side and up to 45% blocked, 10
 * queries each, by the graph (octile bounds on half of the maps, landmark
 * bounds on the other half) and by its hierarchy: every cost is the
 * reference Dijkstra's and every path valid. On every third map the
 * hierarchy's work is bounded below what it takes, at random, so a core
 * of one to all of the subgoals is left uncontracted. */
START_TEST(subgoal_property_random_maps) {
    uint64_t rng = tu_seed("subgoal_property_random_maps", 0x5ab6);
    pf_subgoal_ctx *c = pf_subgoal_ctx_create();
    int bad = 0, maps = 0, with_lm = 0, with_core = 0;
    ck_assert_ptr_nonnull(c);
    for (int m = 0; m < 2000; m++) {
        pf_grid *g = tu_random_grid(&rng, &random_opts);
        pf_subgoal *s = NULL;
        ck_assert_int_eq(pf_subgoal_build(g, NULL, &s), PF_OK);
        pf_landmarks *lm = NULL;
        if ((m & 1) && pf_landmarks_build(g, (size_t)1 << 20, NULL, &lm) == PF_OK) with_lm++;
        pf_subgoal_ch *ch = NULL;
        ck_assert_int_eq(pf_subgoal_ch_build(s, 0, 0, NULL, &ch), PF_OK);
        ck_assert_int_eq(pf_subgoal_ch_core(ch), 0);
        if (m % 3 == 2 && pf_subgoal_count(s) > 1) {
            uint64_t w = pf_subgoal_ch_work(ch);
            pf_subgoal_ch_destroy(ch);
            ch = NULL;
            ck_assert_int_eq(
                pf_subgoal_ch_build(s, 0, 1 + tu_below(&rng, (uint32_t)(w - 1)), NULL, &ch), PF_OK);
            ck_assert_int_ge(pf_subgoal_ch_core(ch), 1);
            with_core++;
        }
        bad += check_queries(g, s, ch, lm, c, &rng, 10, "random");
        pf_subgoal_ch_destroy(ch);
        pf_landmarks_release(lm);
        pf_subgoal_destroy(s);
        pf_grid_destroy(g);
        maps++;
    }
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(maps, 2000);
    ck_assert_int_gt(with_lm, 500);
    ck_assert_int_gt(with_core, 500);
    pf_subgoal_ctx_destroy(c);
}
END_TEST

/* Mazes with 1-cell corridors and a uniform cost of 3: still optimal (the
 * cost scales every edge). */
START_TEST(subgoal_mazes_and_uniform_cost) {
    uint64_t rng = tu_seed("subgoal_mazes_and_uniform_cost", 0x3a2e);
    pf_subgoal_ctx *c = pf_subgoal_ctx_create();
    int bad = 0;
    for (int m = 0; m < 200; m++) {
        pf_grid *g = tu_perfect_maze(&rng, 3 + (int32_t)tu_below(&rng, 12),
                                     3 + (int32_t)tu_below(&rng, 12), 8, false);
        if (m & 1)
            for (int32_t y = 0; y < pf_grid_height(g); y++)
                for (int32_t x = 0; x < pf_grid_width(g); x++)
                    if (pf_grid_cost(g, (pf_point){x, y}))
                        ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){x, y}, 3), PF_OK);
        pf_subgoal *s = NULL;
        ck_assert_int_eq(pf_subgoal_build(g, NULL, &s), PF_OK);
        pf_subgoal_ch *ch = NULL;
        ck_assert_int_eq(pf_subgoal_ch_build(s, 0, 0, NULL, &ch), PF_OK);
        bad += check_queries(g, s, ch, NULL, c, &rng, 10, "maze");
        pf_subgoal_ch_destroy(ch);
        pf_subgoal_destroy(s);
        pf_grid_destroy(g);
    }
    ck_assert_int_eq(bad, 0);
    pf_subgoal_ctx_destroy(c);
}
END_TEST

/* 1,000 random maps, each changed 1-4 cells at a time (blocked or opened)
 * five times: the repaired graph has the subgoals and edges a fresh build
 * has and answers every query as the reference does. On 64x64 maps a
 * one-cell change recomputes fewer subgoals than the map has. */
START_TEST(subgoal_repair_equals_rebuild) {
    uint64_t rng = tu_seed("subgoal_repair_equals_rebuild", 0x7e9a);
    pf_subgoal_ctx *c = pf_subgoal_ctx_create();
    int bad = 0, differ = 0, local = 0, large = 0;
    for (int m = 0; m < 1000; m++) {
        tu_map_opts o = random_opts;
        if (m % 50 == 0) o.min_side = o.max_side = 64;
        pf_grid *g = tu_random_grid(&rng, &o);
        pf_subgoal *s = NULL;
        ck_assert_int_eq(pf_subgoal_build(g, NULL, &s), PF_OK);
        for (int round = 0; round < 5; round++) {
            pf_point chg[4];
            size_t n = 1 + tu_below(&rng, 4);
            if (o.min_side == 64) n = 1;
            for (size_t k = 0; k < n; k++) {
                chg[k].x = (int32_t)tu_below(&rng, (uint32_t)pf_grid_width(g));
                chg[k].y = (int32_t)tu_below(&rng, (uint32_t)pf_grid_height(g));
                ck_assert_int_eq(pf_grid_set_cost(g, chg[k], pf_grid_cost(g, chg[k]) ? 0 : 1),
                                 PF_OK);
            }
            pf_subgoal *r = NULL, *f = NULL;
            ck_assert_int_eq(pf_subgoal_repair(s, g, chg, n, NULL, &r), PF_OK);
            ck_assert_int_eq(pf_subgoal_build(g, NULL, &f), PF_OK);
            if (pf_subgoal_count(r) != pf_subgoal_count(f) ||
                pf_subgoal_edge_count(r) != pf_subgoal_edge_count(f))
                differ++;
            if (o.min_side == 64) {
                large++;
                if (pf_subgoal_recomputed(r) < pf_subgoal_count(r)) local++;
            }
            pf_subgoal_ch *ch = NULL;
            ck_assert_int_eq(pf_subgoal_ch_build(r, 0, 0, NULL, &ch), PF_OK);
            bad += check_queries(g, r, ch, NULL, c, &rng, 4, "repaired");
            pf_subgoal_ch_destroy(ch);
            pf_subgoal_destroy(f);
            pf_subgoal_destroy(s);
            s = r;
        }
        pf_subgoal_destroy(s);
        pf_grid_destroy(g);
    }
    ck_assert_int_eq(differ, 0);
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(large, 100);
    ck_assert_int_gt(local, 90);
    pf_subgoal_ctx_destroy(c);
}
END_TEST

/* Maps it does not serve, and queries it refuses. */
START_TEST(subgoal_refuses_and_edges) {
    const char *rows[] = {".....", ".#.#.", ".....", "#####", "....."};
    pf_grid *g = tu_grid_from_ascii(rows, 5, 8);
    pf_subgoal *s = NULL;
    pf_subgoal_ctx *c = pf_subgoal_ctx_create();
    pf_subgoal_answer a;
    ck_assert_int_eq(pf_subgoal_build(g, NULL, &s), PF_OK);
    ck_assert_int_eq(pf_subgoal_count(s), 6); /* the corners around the two pillars */
    ck_assert_int_eq(pf_subgoal_find(s, g, NULL, c, (pf_point){0, 0}, (pf_point){0, 0}, &a), PF_OK);
    ck_assert_uint_eq(a.path_len, 1);
    ck_assert_double_eq(a.cost, 0.0);
    ck_assert_int_eq(pf_subgoal_find(s, g, NULL, c, (pf_point){0, 0}, (pf_point){0, 4}, &a),
                     PF_NO_PATH);
    ck_assert_int_eq(pf_subgoal_find(s, g, NULL, c, (pf_point){0, 0}, (pf_point){1, 1}, &a),
                     PF_EBLOCKED);
    ck_assert_int_eq(pf_subgoal_find(s, g, NULL, c, (pf_point){0, 0}, (pf_point){5, 0}, &a),
                     PF_ERANGE);
    ck_assert_int_eq(pf_subgoal_find(s, g, NULL, c, (pf_point){0, 0}, (pf_point){4, 2}, &a), PF_OK);
    ck_assert_double_eq_tol(a.cost, tu_reference_cost(g, (pf_point){0, 0}, (pf_point){4, 2}), 1e-9);
    ck_assert_ptr_null(path_problem(g, &a, (pf_point){0, 0}, (pf_point){4, 2}));
    pf_subgoal_destroy(s);

    pf_subgoal *x = (pf_subgoal *)1;
    ck_assert_int_eq(pf_grid_set_rules(g, 8, true), PF_OK);
    ck_assert_int_eq(pf_subgoal_build(g, NULL, &x), PF_EUNSUPPORTED);
    ck_assert_ptr_null(x);
    ck_assert_int_eq(pf_grid_set_rules(g, 4, false), PF_OK);
    ck_assert_int_eq(pf_subgoal_build(g, NULL, &x), PF_EUNSUPPORTED);
    ck_assert_int_eq(pf_grid_set_rules(g, 8, false), PF_OK);
    ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){0, 0}, 2), PF_OK);
    ck_assert_int_eq(pf_subgoal_build(g, NULL, &x), PF_EUNSUPPORTED);
    ck_assert(!pf_subgoal_supports(g));
    pf_subgoal_ctx_destroy(c);
    pf_grid_destroy(g);
}
END_TEST

static bool stop_now(void *ud) {
    (*(int *)ud)++;
    return true;
}

/* A build told to stop returns PF_ECANCELED and nothing. */
START_TEST(subgoal_build_stops) {
    uint64_t rng = 9;
    tu_map_opts o = {300, 300, 0.3, false, false, 8, 0};
    pf_grid *g = tu_random_grid(&rng, &o);
    int polls = 0;
    pf_build_stop b = pf_build_stop_make(stop_now, &polls);
    pf_subgoal *s = (pf_subgoal *)1;
    ck_assert_int_eq(pf_subgoal_build(g, &b, &s), PF_ECANCELED);
    ck_assert_ptr_null(s);
    ck_assert_int_ge(polls, 1);
    pf_grid_destroy(g);
}
END_TEST

/* A sample of every shared scenario file: each cost is the listed optimum,
 * with octile and with landmark bounds; on the room and wide-corridor maps
 * also by the hierarchy (with and without landmarks) and by one stopped at
 * a quarter of its work, with a core. */
START_TEST(subgoal_movingai_scenarios_sampled) {
    const char *dir;
    TU_NEED_BENCH_DIR(dir);
    char **list = tu_list_scen(dir);
    pf_subgoal_ctx *c = pf_subgoal_ctx_create();
    int files = 0, bad = 0, checked = 0, with_ch = 0;
    ck_assert_ptr_nonnull(list);
    for (char **f = list; *f; f++) {
        pf_scen sc;
        pf_grid *g = tu_load_scen(dir, *f, &sc);
        pf_subgoal *s = NULL;
        pf_landmarks *lm = NULL;
        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(pf_subgoal_build(g, NULL, &s), PF_OK);
        ck_assert_int_eq(pf_landmarks_build(g, (size_t)16 << 20, NULL, &lm), PF_OK);
        /* The hierarchy on the families it is for (rooms, wide corridors):
         * on the open and 1-wide maps its contraction takes minutes. */
        pf_subgoal_ch *ch = NULL, *core = NULL;
        if (strstr(*f, "room") || strstr(*f, "maze512-8")) {
            ck_assert_int_eq(pf_subgoal_ch_build(s, 0, 0, NULL, &ch), PF_OK);
            /* and one stopped at a quarter of that work, with its core */
            ck_assert_int_eq(pf_subgoal_ch_build(s, 0, pf_subgoal_ch_work(ch) / 4, NULL, &core),
                             PF_OK);
            ck_assert_int_gt(pf_subgoal_ch_core(core), 0);
            with_ch++;
        }
        size_t step = sc.count / 100 + 1;
        for (size_t i = 0; i < sc.count; i += step) {
            const pf_scen_entry *e = &sc.entries[i];
            for (int k = 0; k < (ch ? 5 : 2); k++) {
                pf_subgoal_answer a;
                pf_status st =
                    k >= 2 ? pf_subgoal_ch_find(s, k == 4 ? core : ch, g, k == 3 ? NULL : lm, c,
                                                e->start, e->goal, &a)
                           : pf_subgoal_find(s, g, k ? lm : NULL, c, e->start, e->goal, &a);
                const char *why = st != PF_OK ? "no answer"
                                  : fabs(a.cost - e->optimal) > fmax(1e-3, 1e-5 * e->optimal)
                                      ? "not the optimum"
                                      : path_problem(g, &a, e->start, e->goal);
                checked++;
                if (why && bad++ < 5)
                    fprintf(stderr, "%s line %zu (%s): %s, %f against %f\n", *f, i + 2,
                            k == 4   ? "hierarchy with a core"
                            : k == 3 ? "hierarchy, octile bounds"
                            : k == 2 ? "hierarchy"
                            : k      ? "landmarks"
                                     : "octile",
                            why, a.cost, e->optimal);
            }
        }
        files++;
        pf_landmarks_release(lm);
        pf_subgoal_ch_destroy(ch);
        pf_subgoal_ch_destroy(core);
        pf_subgoal_destroy(s);
        pf_scen_free(&sc);
        pf_grid_destroy(g);
    }
    ck_assert_int_eq(bad, 0);
    ck_assert_int_gt(files, 0);
    ck_assert_int_gt(checked, 1000);
    ck_assert_int_eq(with_ch, 3);
    tu_free_list(list);
    pf_subgoal_ctx_destroy(c);
}
END_TEST

TU_SUITE(subgoal) {
    Suite *s = suite_create("subgoal");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, subgoal_refuses_and_edges);
    tcase_add_test(tc, subgoal_build_stops);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("slow");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, subgoal_property_random_maps);
    tcase_add_test(slow, subgoal_mazes_and_uniform_cost);
    tcase_add_test(slow, subgoal_repair_equals_rebuild);
    tcase_add_test(slow, subgoal_movingai_scenarios_sampled);
    suite_add_tcase(s, slow);
    return s;
}
