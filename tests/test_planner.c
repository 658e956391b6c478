/* test_planner.c -- the planner's dispatch for the many-units features:
 * partial answers through jps, hpa and auto (astar answers them), nearest
 * goals by algorithm; and its world changes (pf_planner_apply): the changes of
 * one PATCH coalesced, held against applying them one by one. Agent sizes
 * have their own suite (test_agents.c). */
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
    const pf_algorithm algos[3] = {PF_ALGO_JPS, PF_ALGO_HPA, PF_ALGO_AUTO};
    for (int a = 0; a < 3; a++) {
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
        ck_assert_int_eq(r.algorithm, algos[a] == PF_ALGO_AUTO
                                          ? pf_planner_auto_pick(p, q.start, q.goal)
                                          : algos[a]);
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
        bool ok = a == PF_ALGO_DIJKSTRA || a == PF_ALGO_ASTAR || a == PF_ALGO_JPS ||
                  a == PF_ALGO_HPA || a == PF_ALGO_AUTO || a == PF_ALGO_SUBGOAL;
        ck_assert_int_eq(st, ok ? PF_OK : PF_EUNSUPPORTED);
        if (!ok) continue;
        ck_assert_int_eq(which, 1);
        ck_assert_double_eq_tol(r.cost, 1 + 3 * sqrt(2.0), 1e-9);
    }
    pf_planner_destroy(p);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* The reference: the list applied one request at a time through the grid's
 * own setters, as pf_planner_apply did before it coalesced (cells in
 * order, then doors in order, a door request that finds its door so
 * already doing nothing). */
static void apply_one_by_one(pf_grid *g, const pf_cell_change *cells, size_t ncells,
                             const pf_door_change *doors, size_t ndoors) {
    for (size_t i = 0; i < ncells; i++) pf_grid_set_cost(g, cells[i].p, cells[i].cost);
    for (size_t i = 0; i < ndoors; i++)
        if (pf_grid_door_is_open(g, doors[i].door) != doors[i].open)
            pf_grid_set_door(g, doors[i].door, doors[i].open);
}

static bool same_cell(const pf_grid *a, const pf_grid *b, pf_point c) {
    if (pf_grid_cost(a, c) != pf_grid_cost(b, c)) return false;
    for (int d = PF_DIR_E; d <= PF_DIR_N; d++)
        if (pf_grid_is_wall(a, c, d) != pf_grid_is_wall(b, c, d)) return false;
    return true;
}

/* Random maps with up to four doors (sharing cells now and then), random
 * lists of cell changes and door requests with many repeats: the planner's
 * grid equals the one-by-one grid, its door states too, and the changed list
 * holds each cell that differs from the old grid exactly once, and no
 * other. */
START_TEST(planner_apply_coalesced_equals_one_by_one) {
    uint64_t st = tu_seed("planner_apply_coalesced_equals_one_by_one", 0x9a7c4e01);
    for (int m = 0; m < 2000; m++) {
        tu_map_opts o = {4, 24, 0.2, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o), *ref;
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        int ndoors_map = 1 + (int)tu_below(&st, 4);
        pf_cell_change cells[40];
        pf_door_change doors[200];
        size_t ncells = tu_below(&st, 40), ndoors = tu_below(&st, 200), nchanged = 0;
        pf_planner *p, *next;
        pf_planner_opts po = {.build_hpa = m % 4 == 0};
        pf_point *changed = NULL;
        bool *seen = calloc((size_t)w * (size_t)h, 1);

        for (int d = 0; d < ndoors_map; d++) {
            pf_point dc[8];
            pf_edge de[8];
            size_t nd = 1 + tu_below(&st, 8), ne = 0;
            char name[16];
            int32_t idx;
            for (size_t k = 0; k < nd; k++) {
                dc[k] = (pf_point){(int32_t)tu_below(&st, (uint32_t)w),
                                   (int32_t)tu_below(&st, (uint32_t)h)};
                if (dc[k].x + 1 < w && tu_below(&st, 2)) de[ne++] = (pf_edge){dc[k], PF_DIR_E};
            }
            snprintf(name, sizeof(name), "d%d", d);
            ck_assert_int_eq(pf_grid_add_door(g, name, dc, nd, de, ne, tu_below(&st, 2) != 0, &idx),
                             PF_OK);
        }
        for (size_t i = 0; i < ncells; i++) {
            cells[i].p = (pf_point){(int32_t)tu_below(&st, (uint32_t)w),
                                    (int32_t)tu_below(&st, (uint32_t)h)};
            cells[i].cost = (uint8_t)tu_below(&st, 4);
        }
        for (size_t i = 0; i < ndoors; i++) {
            doors[i].door = (int32_t)tu_below(&st, (uint32_t)ndoors_map);
            doors[i].open = tu_below(&st, 2) != 0;
        }
        ref = pf_grid_clone(g);
        apply_one_by_one(ref, cells, ncells, doors, ndoors);
        ck_assert_int_eq(pf_planner_create(g, &po, &p), PF_OK);
        ck_assert_int_eq(
            pf_planner_apply(p, cells, ncells, doors, ndoors, NULL, &next, &changed, &nchanged),
            PF_OK);
        for (int32_t d = 0; d < ndoors_map; d++)
            ck_assert_msg(pf_grid_door_is_open(pf_planner_grid(next), d) ==
                              pf_grid_door_is_open(ref, d),
                          "map %d door %d", m, d);
        for (size_t i = 0; i < nchanged; i++) {
            size_t at = (size_t)changed[i].y * (size_t)w + (size_t)changed[i].x;
            ck_assert_msg(!seen[at], "map %d: (%d,%d) listed twice", m, changed[i].x, changed[i].y);
            seen[at] = true;
        }
        for (int32_t y = 0; y < h; y++)
            for (int32_t x = 0; x < w; x++) {
                pf_point c = {x, y};
                bool differs = !same_cell(pf_planner_grid(p), ref, c);
                ck_assert_msg(same_cell(pf_planner_grid(next), ref, c), "map %d: (%d,%d)", m, x, y);
                ck_assert_msg(seen[(size_t)y * (size_t)w + (size_t)x] == differs,
                              "map %d: (%d,%d) %s", m, x, y,
                              differs ? "changed but not listed" : "listed but unchanged");
            }
        free(changed);
        free(seen);
        pf_grid_destroy(ref);
        pf_planner_destroy(next);
        pf_planner_destroy(p);
    }
}
END_TEST

/* The PATCH: a thousand toggles of a door of many cells. Toggled an
 * even number of times it changes nothing at all; an odd number, the door
 * once. */
START_TEST(planner_apply_thousand_toggles_of_a_big_door) {
    pf_grid *g = NULL;
    pf_planner *p, *next;
    pf_planner_opts po = {.build_hpa = true};
    pf_door_change doors[1001];
    pf_point dc[512];
    pf_point *changed = NULL;
    size_t nchanged;
    int32_t idx;
    ck_assert_int_eq(pf_grid_create(512, 64, NULL, &g), PF_OK);
    for (int i = 0; i < 512; i++) dc[i] = (pf_point){i, 32};
    ck_assert_int_eq(pf_grid_add_door(g, "wall", dc, 512, NULL, 0, true, &idx), PF_OK);
    ck_assert_int_eq(pf_planner_create(g, &po, &p), PF_OK);
    for (int i = 0; i < 1001; i++) doors[i] = (pf_door_change){idx, i % 2 != 0};
    /* closed, open, closed, ... 1000 requests: ends open, as it began. */
    ck_assert_int_eq(pf_planner_apply(p, NULL, 0, doors, 1000, NULL, &next, &changed, &nchanged),
                     PF_OK);
    ck_assert_uint_eq(nchanged, 0);
    ck_assert(pf_grid_door_is_open(pf_planner_grid(next), idx));
    pf_planner_destroy(next);
    free(changed);
    /* 1001 requests: ends closed, every door cell changed once. */
    ck_assert_int_eq(pf_planner_apply(p, NULL, 0, doors, 1001, NULL, &next, &changed, &nchanged),
                     PF_OK);
    ck_assert_uint_eq(nchanged, 512);
    ck_assert(!pf_grid_door_is_open(pf_planner_grid(next), idx));
    pf_planner_destroy(next);
    free(changed);
    pf_planner_destroy(p);
}
END_TEST

TU_SUITE(planner) {
    Suite *s = suite_create("planner");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, planner_partial_through_jps_and_hpa);
    tcase_add_test(tc, planner_partial_jps_fallback_on_costs);
    tcase_add_test(tc, planner_nearest_algorithms);
    tcase_add_test(tc, planner_apply_coalesced_equals_one_by_one);
    tcase_add_test(tc, planner_apply_thousand_toggles_of_a_big_door);
    suite_add_tcase(s, tc);
    return s;
}
