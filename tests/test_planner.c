/* test_planner.c -- the planner's dispatch for the many-units features:
 * partial answers through jps and hpa (astar answers them), nearest goals
 * by algorithm. Agent sizes have their own suite (test_agents.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"
#include "planner.h"
#include "refsearch.h"
#include "testutil.h"

static pf_planner *make(pf_grid *g) {
    pf_planner_opts po;
    pf_planner *p = NULL;
    memset(&po, 0, sizeof(po));
    po.build_hpa = true;
    ck_assert_int_eq(pf_planner_create(g, &po, &p), PF_OK);
    return p;
}

/* A closed room: jps and hpa cannot reach the goal inside it; with partial
 * the answer comes from astar, ends at the cell nearest to the goal and
 * says so; a reachable goal keeps the algorithm asked for. */
START_TEST(planner_partial_through_jps_and_hpa) {
    const char *rows[] = {"................", "................", ".......#####....",
                          ".......#...#....", ".......#...#....", ".......#####....",
                          "................", "................"};
    pf_grid *g = tu_grid_from_ascii(rows, 8, 8);
    pf_planner *p = make(g);
    pf_search_ctx *ctx = pf_search_ctx_create();
    const pf_algorithm algos[2] = {PF_ALGO_JPS, PF_ALGO_HPA};
    for (int a = 0; a < 2; a++) {
        pf_query q = pf_query_make((pf_point){0, 3}, (pf_point){9, 3}, algos[a]);
        pf_result r;
        ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_NO_PATH);
        q.partial = true;
        ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
        ck_assert(r.partial);
        ck_assert_int_eq(r.partial_reason, PF_NO_PATH);
        ck_assert_int_eq(r.algorithm, PF_ALGO_ASTAR);
        ck_assert_int_eq(r.path[r.path_len - 1].x, 9); /* above the room's top wall */
        ck_assert_int_eq(r.path[r.path_len - 1].y, 1);
        ck_assert_int_eq(pf_path_validate(pf_planner_grid(p), r.path, r.path_len, NULL, NULL),
                         PF_OK);
        q.goal = (pf_point){7, 2}; /* a wall cell */
        ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
        ck_assert(r.partial);
        ck_assert_int_eq(r.partial_reason, PF_EBLOCKED);
        q.goal = (pf_point){15, 7};
        ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
        ck_assert(!r.partial);
        ck_assert_int_eq(r.algorithm, algos[a]);
        /* Agent size 2 through hpa's own hierarchy. */
        q.goal = (pf_point){9, 3};
        q.agent_size = 2;
        ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
        ck_assert(r.partial);
        ck_assert_int_eq(ref_agent_path_check(pf_planner_grid(p), 2, r.path, r.path_len, NULL), -1);
    }
    pf_planner_destroy(p);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* On a map with costs jps falls back to astar, which answers partially
 * itself. */
START_TEST(planner_partial_jps_fallback_on_costs) {
    const char *rows[] = {"..5.....", "..5.###.", "..5.#.#.", "..5.###.", "..5....."};
    pf_grid *g = tu_grid_from_ascii(rows, 5, 8);
    pf_planner *p = make(g);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){5, 2}, PF_ALGO_JPS);
    pf_result r;
    q.partial = true;
    ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
    ck_assert_int_eq(r.algorithm, PF_ALGO_ASTAR);
    ck_assert(r.partial);
    ck_assert_int_eq(r.partial_reason, PF_NO_PATH);
    ck_assert_double_eq_tol(
        pf_heuristic_eval(PF_H_OCTILE, r.path[r.path_len - 1], (pf_point){5, 2}), 2.0, 1e-12);
    pf_planner_destroy(p);
    pf_search_ctx_destroy(ctx);
}
END_TEST

START_TEST(planner_nearest_algorithms) {
    pf_grid *g = NULL;
    ck_assert_int_eq(pf_grid_create(16, 16, NULL, &g), PF_OK);
    pf_planner *p = make(g);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point goals[2] = {{15, 15}, {3, 4}};
    for (int a = PF_ALGO_BFS; a < PF_ALGO_COUNT; a++) {
        pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){0, 0}, (pf_algorithm)a);
        pf_result r;
        int32_t which;
        pf_status st = pf_planner_search_nearest(ctx, p, &q, goals, 2, &r, &which);
        bool ok =
            a == PF_ALGO_DIJKSTRA || a == PF_ALGO_ASTAR || a == PF_ALGO_JPS || a == PF_ALGO_HPA;
        ck_assert_int_eq(st, ok ? PF_OK : PF_EUNSUPPORTED);
        if (!ok) continue;
        ck_assert_int_eq(which, 1);
        ck_assert_double_eq_tol(r.cost, 1 + 3 * sqrt(2.0), 1e-9);
    }
    pf_planner_destroy(p);
    pf_search_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(planner) {
    Suite *s = suite_create("planner");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, planner_partial_through_jps_and_hpa);
    tcase_add_test(tc, planner_partial_jps_fallback_on_costs);
    tcase_add_test(tc, planner_nearest_algorithms);
    suite_add_tcase(s, tc);
    return s;
}
