/* test_search.c -- bfs, dijkstra, astar, weighted, greedy: textbook examples,
 * property tests against the reference search, and the Moving AI scenarios;
 * and auto, the planner's choice between the exact search and HPA*. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map_io.h"
#include "path.h"
#include "planner.h"
#include "planner_internal.h"
#include "refsearch.h"
#include "search.h"
#include "testutil.h"

static pf_result run(pf_search_ctx *ctx, const pf_grid *g, pf_point s, pf_point t, pf_algorithm a) {
    pf_query q = pf_query_make(s, t, a);
    pf_result r;
    pf_search(ctx, g, &q, &r);
    return r;
}

/* The 7x5 room, wall at x=3 on rows 0-3 (gap at row 4), 4-connected. */
START_TEST(search_textbook_room_wall_gap) {
    const char *rows[] = {"...#...", "...#...", "...#...", "...#...", "......."};
    pf_grid *g = tu_grid_from_ascii(rows, 5, 4);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point s = {0, 2}, t = {6, 2};
    for (int a = PF_ALGO_BFS; a <= PF_ALGO_ASTAR; a++) {
        pf_result r = run(ctx, g, s, t, (pf_algorithm)a);
        ck_assert_int_eq(r.status, PF_OK);
        ck_assert_uint_eq(r.path_len - 1, 10);
        ck_assert_double_eq_tol(r.cost, 10.0, 1e-9);
    }
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

/* The 3x2 patch with mud of cost 5 at (1,0): BFS goes straight through,
 * Dijkstra goes around. */
START_TEST(search_textbook_mud_bfs_vs_dijkstra) {
    const char *rows[] = {".5.", "..."};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 4);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point s = {0, 0}, t = {2, 0};
    pf_result r = run(ctx, g, s, t, PF_ALGO_BFS);
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_double_eq_tol(r.cost, 6.0, 1e-9);
    ck_assert_uint_eq(r.path_len, 3);
    r = run(ctx, g, s, t, PF_ALGO_DIJKSTRA);
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_double_eq_tol(r.cost, 4.0, 1e-9);
    ck_assert_uint_eq(r.path_len, 5);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

/* The 8x6 level: Dijkstra and A* find 12 steps, A* expanding fewer cells;
 * greedy takes 16 steps with neighbours tried right, left, down, up. */
START_TEST(search_textbook_level_greedy_longer) {
    const char *rows[] = {"S.......", "####....", "........", "...##..#", ".#.##.#.", "..#....G"};
    pf_grid *g = tu_grid_from_ascii(rows, 6, 4);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point s = {0, 0}, t = {7, 5};
    pf_result d = run(ctx, g, s, t, PF_ALGO_DIJKSTRA);
    uint64_t dexp = d.expanded;
    ck_assert_int_eq(d.status, PF_OK);
    ck_assert_uint_eq(d.path_len - 1, 12);
    pf_result a = run(ctx, g, s, t, PF_ALGO_ASTAR);
    ck_assert_int_eq(a.status, PF_OK);
    ck_assert_uint_eq(a.path_len - 1, 12);
    ck_assert_uint_lt(a.expanded, dexp);
    pf_result gr = run(ctx, g, s, t, PF_ALGO_GREEDY);
    ck_assert_int_eq(gr.status, PF_OK);
    ck_assert_uint_eq(gr.path_len - 1, 16);
    ck_assert_int_eq(pf_path_validate(g, gr.path, gr.path_len, NULL, NULL), PF_OK);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

/* Open 15x15, corner to corner, 4-connected: the lower-h tie-break keeps A*
 * on the path instead of filling the grid. */
START_TEST(search_astar_tiebreak_open_grid) {
    pf_grid *g = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    ck_assert_int_eq(pf_grid_create(15, 15, NULL, &g), PF_OK);
    pf_grid_set_rules(g, 4, false);
    pf_result r = run(ctx, g, (pf_point){0, 0}, (pf_point){14, 14}, PF_ALGO_ASTAR);
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_uint_eq(r.path_len, 29);
    ck_assert_uint_le(r.expanded, 29 + 3);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(search_start_equals_goal_and_unreachable) {
    const char *rows[] = {"..#..", "..#..", "..#.."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8);
    pf_search_ctx *ctx = pf_search_ctx_create();
    for (int a = PF_ALGO_BFS; a <= PF_ALGO_GREEDY; a++) {
        pf_query q = pf_query_make((pf_point){1, 1}, (pf_point){1, 1}, (pf_algorithm)a);
        pf_result r;
        q.weight = 2.0;
        ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_OK);
        ck_assert_uint_eq(r.path_len, 1);
        ck_assert_int_eq(r.path[0].x, 1);
        ck_assert_double_eq(r.cost, 0.0);
        q.goal = (pf_point){4, 1};
        ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_NO_PATH);
        ck_assert_uint_eq(r.path_len, 0);
    }
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(search_rejects_bad_queries) {
    const char *rows[] = {"..#", "..."};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 8);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){3, 0}, PF_ALGO_ASTAR);
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_ERANGE);
    q.goal = (pf_point){2, 0};
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_EBLOCKED);
    q.goal = (pf_point){2, 1};
    q.heuristic = PF_H_MANHATTAN; /* overestimates with diagonals */
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_EINVAL);
    q = pf_query_make((pf_point){0, 0}, (pf_point){2, 1}, PF_ALGO_WEIGHTED);
    q.weight = 0.5;
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_EINVAL);
    q.weight = NAN;
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_EINVAL);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(search_node_budget_exhausted) {
    pf_grid *g = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    ck_assert_int_eq(pf_grid_create(64, 64, NULL, &g), PF_OK);
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){63, 63}, PF_ALGO_DIJKSTRA);
    q.max_expanded = 10;
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_EBUDGET);
    ck_assert_uint_eq(r.expanded, 10);
    ck_assert_uint_eq(r.path_len, 0);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

static bool stop_now(void *ud) {
    (void)ud;
    return true;
}

START_TEST(search_stop_callback_cancels) {
    pf_grid *g = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    ck_assert_int_eq(pf_grid_create(64, 64, NULL, &g), PF_OK);
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){63, 63}, PF_ALGO_ASTAR);
    q.should_stop = stop_now;
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_ECANCELED);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(search_records_expanded_cells) {
    pf_grid *g = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    ck_assert_int_eq(pf_grid_create(20, 20, NULL, &g), PF_OK);
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){19, 7}, PF_ALGO_DIJKSTRA);
    q.record_expanded = true;
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_OK);
    ck_assert_uint_eq(r.expanded_cells_len, r.expanded);
    ck_assert_int_eq(r.expanded_cells[0], 0);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

/* Every optimal algorithm agrees with the reference on reachability and
 * cost; weighted stays within w x optimal; every path is valid. */
START_TEST(search_property_random_maps) {
    uint64_t st = tu_seed("search_property_random_maps", 0x5eed0001);
    pf_search_ctx *ctx = pf_search_ctx_create();
    const int maps = 2000;
    for (int m = 0; m < maps; m++) {
        tu_map_opts o = {1, (m % 10 == 0) ? 128 : 40, 0.45, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        for (int k = 0; k < 3; k++) {
            pf_point s, t;
            if (!tu_random_walkable(&st, g, &s)) break;
            tu_random_walkable(&st, g, &t);
            double ref = tu_reference_cost(g, s, t);
            for (int a = PF_ALGO_BFS; a <= PF_ALGO_GREEDY; a++) {
                pf_query q = pf_query_make(s, t, (pf_algorithm)a);
                pf_result r;
                q.weight = 1.0 + (double)tu_below(&st, 30) / 10.0;
                pf_status rs = pf_search(ctx, g, &q, &r);
                if (ref < 0) {
                    ck_assert_msg(rs == PF_NO_PATH,
                                  "map %d algo %s: found a path to an unreachable goal", m,
                                  pf_algorithm_name((pf_algorithm)a));
                    continue;
                }
                ck_assert_msg(rs == PF_OK, "map %d algo %s: status %s, reference %f", m,
                              pf_algorithm_name((pf_algorithm)a), pf_status_str(rs), ref);
                double pc;
                ck_assert_int_eq(pf_path_validate(g, r.path, r.path_len, &pc, NULL), PF_OK);
                ck_assert(r.path[0].x == s.x && r.path[0].y == s.y);
                ck_assert(r.path[r.path_len - 1].x == t.x && r.path[r.path_len - 1].y == t.y);
                ck_assert_double_eq_tol(pc, r.cost, 1e-6);
                if (pf_algorithm_is_optimal((pf_algorithm)a))
                    ck_assert_msg(fabs(r.cost - ref) < 1e-6, "map %d %s cost %f reference %f", m,
                                  pf_algorithm_name((pf_algorithm)a), r.cost, ref);
                else if (a == PF_ALGO_WEIGHTED)
                    ck_assert_msg(r.cost <= q.weight * ref + 1e-6, "weighted %f > %f x %f", r.cost,
                                  q.weight, ref);
                else
                    ck_assert(r.cost >= ref - 1e-6);
            }
        }
        pf_grid_destroy(g);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* A planner over g (taken) with a hierarchy, landmarks and jump tables, and
 * auto measured on `samples` queries per bin (-1: not at all). */
static pf_planner *auto_planner(pf_grid *g, int samples) {
    pf_planner_opts o;
    pf_planner *p = NULL;
    memset(&o, 0, sizeof(o));
    o.build_hpa = true;
    o.landmark_bytes = PF_PLANNER_DEFAULT_LANDMARK_BYTES;
    o.landmark_min_cells = 32 * 32;
    o.jps_table_bytes = PF_JPS_DEFAULT_TABLE_BYTES;
    o.auto_samples = samples;
    ck_assert_int_eq(pf_planner_create(g, &o, &p), PF_OK);
    return p;
}

/* Checks an auto answer from s to t against the reference cost: optimal
 * when it says it ran an exact search, a valid path never below the
 * optimum when it ran hpa; *ran counts which ran. */
static void check_auto(pf_search_ctx *ctx, const pf_planner *p, pf_point s, pf_point t, int m,
                       int ran[PF_ALGO_COUNT]) {
    const pf_grid *g = pf_planner_grid(p);
    double ref = tu_reference_cost(g, s, t), pc;
    pf_query q = pf_query_make(s, t, PF_ALGO_AUTO);
    pf_result r;
    pf_status st = pf_planner_search(ctx, p, &q, &r);
    if (ref < 0) {
        ck_assert_msg(st == PF_NO_PATH, "map %d: auto %s for an unreachable goal", m,
                      pf_status_str(st));
        return;
    }
    ck_assert_msg(st == PF_OK, "map %d: auto %s, reference %f", m, pf_status_str(st), ref);
    ck_assert_msg(r.algorithm == PF_ALGO_JPS || r.algorithm == PF_ALGO_ASTAR ||
                      r.algorithm == PF_ALGO_HPA || r.algorithm == PF_ALGO_SUBGOAL,
                  "map %d: auto says it ran %s", m, pf_algorithm_name(r.algorithm));
    ran[r.algorithm]++;
    ck_assert_int_eq(pf_path_validate(g, r.path, r.path_len, &pc, NULL), PF_OK);
    ck_assert(r.path[0].x == s.x && r.path[0].y == s.y);
    ck_assert(r.path[r.path_len - 1].x == t.x && r.path[r.path_len - 1].y == t.y);
    ck_assert_double_eq_tol(pc, r.cost, 1e-6);
    if (pf_algorithm_is_optimal(r.algorithm))
        ck_assert_msg(fabs(r.cost - ref) < 1e-6, "map %d: auto ran %s, cost %f, reference %f", m,
                      pf_algorithm_name(r.algorithm), r.cost, ref);
    else
        ck_assert_msg(r.cost >= ref - 1e-6, "map %d: auto (hpa) %f below the optimum %f", m, r.cost,
                      ref);
}

/* auto against the reference Dijkstra, as every optimal algorithm: on
 * random maps of 64..112 cells a side (uniform ones, where the exact search
 * is jps, and ones with costs or walls, where it is astar), measured as an
 * upload measures them, every answer that says it ran jps or astar is
 * optimal and every hpa answer is a valid path never below the optimum.
 * Each map is searched again with a model that sends every bin to hpa, so
 * the hpa branch and jps's direct answers in it are held to the same
 * checks whatever the measurement chose. */
START_TEST(search_auto_against_reference) {
    uint64_t st = tu_seed("search_auto_against_reference", 0x5eed0a07);
    pf_search_ctx *ctx = pf_search_ctx_create();
    int ran[PF_ALGO_COUNT] = {0};
    for (int m = 0; m < 60; m++) {
        tu_map_opts o = {64, 112, 0.35, m % 3 == 1, m % 3 == 2, 8, -1};
        pf_planner *p = auto_planner(tu_random_grid(&st, &o), 2);
        const pf_grid *g = pf_planner_grid(p);
        for (int phase = 0; phase < 2; phase++) {
            if (phase == 1) {
                pf_planner *pm = (pf_planner *)p;
                for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) pm->autom.pick[b] = PF_ALGO_HPA;
                pm->autom.exact_faster = false;
                pm->autom.all_exact = false;
                pm->autom.calibrated = true;
                pm->autom.cs = pm->autom.cs ? pm->autom.cs : 16;
            }
            for (int k = 0; k < 12; k++) {
                pf_point s, t;
                if (!tu_random_walkable(&st, g, &s)) break;
                tu_random_walkable(&st, g, &t);
                check_auto(ctx, p, s, t, m, ran);
            }
        }
        pf_planner_destroy(p);
    }
    ck_assert_int_gt(ran[PF_ALGO_JPS], 50);
    ck_assert_int_gt(ran[PF_ALGO_ASTAR], 50);
    ck_assert_int_gt(ran[PF_ALGO_HPA], 50);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* auto's choices, with the model set by hand: every bin exact runs jps on
 * a uniform map and astar on one with costs; a bin sent to hpa runs hpa,
 * but jps where the straight canonical path is free; versions made by
 * pf_planner_apply keep the model; without a hierarchy or a measurement
 * auto runs the exact search; an overestimating heuristic is refused as
 * astar refuses it, whatever auto would pick. */
START_TEST(search_auto_choices) {
    pf_grid *g;
    pf_planner *p, *p2;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_planner_auto_info ai;
    pf_query q;
    pf_result r;
    pf_cell_change ch = {{40, 40}, 0};
    ck_assert_int_eq(pf_grid_create(128, 128, NULL, &g), PF_OK);
    for (int32_t y = 10; y < 118; y++) pf_grid_set_cost(g, (pf_point){64, y}, 0);
    p = auto_planner(g, -1);
    pf_planner_auto_info_get(p, &ai);
    ck_assert(!ai.calibrated);
    ck_assert(ai.exact_faster);
    ck_assert_int_eq(ai.exact, PF_ALGO_JPS);
    ck_assert_int_eq(pf_planner_auto_pick(p, (pf_point){0, 60}, (pf_point){127, 60}), PF_ALGO_JPS);
    {
        pf_planner *pm = p;
        for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) pm->autom.pick[b] = PF_ALGO_HPA;
        pm->autom.exact_faster = false;
        pm->autom.calibrated = true;
        pm->autom.cs = 16;
    }
    /* Blocked by the wall: hpa. A free straight line: jps. */
    ck_assert_int_eq(pf_planner_auto_pick(p, (pf_point){0, 60}, (pf_point){127, 60}), PF_ALGO_HPA);
    ck_assert_int_eq(pf_planner_auto_pick(p, (pf_point){0, 0}, (pf_point){127, 5}), PF_ALGO_JPS);
    q = pf_query_make((pf_point){0, 60}, (pf_point){127, 60}, PF_ALGO_AUTO);
    ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
    ck_assert_int_eq(r.algorithm, PF_ALGO_HPA);
    q.heuristic = PF_H_EUCLIDEAN; /* admissible: served */
    ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
    q.heuristic = PF_H_MANHATTAN; /* overestimates on 8-connected maps */
    ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_EINVAL);
    q.heuristic = (pf_heuristic)99;
    ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_EINVAL);
    /* The next version keeps the model. */
    ck_assert_int_eq(pf_planner_apply(p, &ch, 1, NULL, 0, NULL, &p2, NULL, NULL), PF_OK);
    ck_assert_int_eq(pf_planner_auto_pick(p2, (pf_point){0, 60}, (pf_point){127, 60}), PF_ALGO_HPA);
    pf_planner_destroy(p2);
    /* A cost on the map: the exact search is astar, jps's direct answers
     * no longer apply, and the version still keeps the model. */
    ch.cost = 3;
    ck_assert_int_eq(pf_planner_apply(p, &ch, 1, NULL, 0, NULL, &p2, NULL, NULL), PF_OK);
    ck_assert_int_eq(pf_planner_auto_pick(p2, (pf_point){0, 0}, (pf_point){127, 5}), PF_ALGO_HPA);
    {
        pf_planner *pm = p2;
        for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) pm->autom.pick[b] = pm->autom.exact;
        pm->autom.exact_faster = true;
        pm->autom.exact = PF_ALGO_ASTAR;
    }
    q = pf_query_make((pf_point){0, 60}, (pf_point){127, 60}, PF_ALGO_AUTO);
    ck_assert_int_eq(pf_planner_search(ctx, p2, &q, &r), PF_OK);
    ck_assert_int_eq(r.algorithm, PF_ALGO_ASTAR);
    ck_assert_double_eq_tol(r.cost, tu_reference_cost(pf_planner_grid(p2), q.start, q.goal), 1e-9);
    pf_planner_destroy(p2);
    pf_planner_destroy(p);
    /* No hierarchy: the exact search. */
    {
        pf_planner_opts o;
        memset(&o, 0, sizeof(o));
        ck_assert_int_eq(pf_grid_create(80, 80, NULL, &g), PF_OK);
        ck_assert_int_eq(pf_planner_create(g, &o, &p), PF_OK);
        q = pf_query_make((pf_point){0, 0}, (pf_point){79, 50}, PF_ALGO_AUTO);
        ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
        ck_assert_int_eq(r.algorithm, PF_ALGO_JPS);
        pf_planner_destroy(p);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* The build's measurement: on a 512x512 map with obstacles it samples every
 * bin the map has room for, each with every sample asked for -- the longest
 * too, whose distances a random offset from a random cell mostly throws off
 * the map (it used to get one sample and take its neighbour's choice) --
 * and what it reports is consistent: a bin picks hpa only where hpa was
 * PF_PLANNER_AUTO_MARGIN times faster, and always_exact holds exactly when
 * no bin does. */
START_TEST(search_auto_measurement) {
    uint64_t st = tu_seed("search_auto_measurement", 0x5eed0a08);
    tu_map_opts o = {512, 512, 0.2, false, false, 8, 0};
    pf_planner *p = auto_planner(tu_random_grid(&st, &o), 4);
    pf_planner_auto_info ai;
    bool any_hpa = false;
    pf_planner_auto_info_get(p, &ai);
    ck_assert(ai.calibrated);
    ck_assert_int_eq(ai.exact, PF_ALGO_JPS);
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) {
        /* Room: the bin starts below 0.9 of the map's diagonal. */
        double lo = b ? ai.bins[b - 1].max_distance : 0.0;
        if (lo < 0.9 * (511.0 + (M_SQRT2 - 1.0) * 511.0))
            ck_assert_msg(ai.bins[b].samples == 4, "bin %d (from %.0f cells): %d samples", b, lo,
                          ai.bins[b].samples);
    }
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) {
        if (ai.bins[b].pick == PF_ALGO_HPA) any_hpa = true;
        if (ai.bins[b].samples >= 4)
            ck_assert((ai.bins[b].pick == PF_ALGO_HPA) ==
                      (ai.bins[b].exact_us > PF_PLANNER_AUTO_MARGIN * ai.bins[b].hpa_us));
    }
    ck_assert(ai.exact_faster == !any_hpa);
    pf_planner_destroy(p);
}
END_TEST

/* A sample of every shared scenario file: astar and dijkstra match the
 * listed optimum. The full sweep is `make bench`. */
START_TEST(search_movingai_scenarios_sampled) {
    const char *dir;
    TU_NEED_BENCH_DIR(dir);
    char **list = tu_list_scen(dir);
    pf_search_ctx *ctx = pf_search_ctx_create();
    int files = 0;
    ck_assert_ptr_nonnull(list);
    for (char **f = list; *f; f++) {
        pf_scen sc;
        pf_grid *g = tu_load_scen(dir, *f, &sc);
        size_t step = sc.count / 12 + 1;
        for (size_t i = 0; i < sc.count; i += step) {
            const pf_scen_entry *e = &sc.entries[i];
            double tol = fmax(1e-3, 1e-5 * e->optimal);
            for (int a = PF_ALGO_DIJKSTRA; a <= PF_ALGO_ASTAR; a++) {
                pf_result r = run(ctx, g, e->start, e->goal, (pf_algorithm)a);
                ck_assert_int_eq(r.status, PF_OK);
                ck_assert_msg(fabs(r.cost - e->optimal) <= tol, "%s line %zu %s: %f vs %f", *f,
                              i + 2, pf_algorithm_name((pf_algorithm)a), r.cost, e->optimal);
            }
        }
        files++;
        pf_scen_free(&sc);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(files, 0);
    tu_free_list(list);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Partial answers (pf_query.partial), every grid-only algorithm: with the
 * goal out of reach (blocked or not) the path ends at the reachable cell
 * of least heuristic distance to the goal; for dijkstra and astar, among
 * those the cheapest, at its optimal cost. */
START_TEST(search_partial_unreachable_random_maps) {
    uint64_t st = tu_seed("search_partial_unreachable_random_maps", 0x9a471a11);
    pf_search_ctx *ctx = pf_search_ctx_create();
    int cases = 0;
    for (int m = 0; m < 500 && cases < 200; m++) {
        tu_map_opts o = {3, 32, 0.45, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        double *dist = malloc((size_t)w * h * sizeof(*dist));
        pf_point s, t = {0, 0};
        bool found = false;
        if (!tu_random_walkable(&st, g, &s)) goto next;
        ref_dists(g, 1, &s, 1, false, dist);
        for (int k = 0; k < 100 && !found; k++) {
            t.x = (int32_t)tu_below(&st, (uint32_t)w);
            t.y = (int32_t)tu_below(&st, (uint32_t)h);
            found = isinf(dist[t.y * w + t.x]);
        }
        if (!found) goto next;
        pf_heuristic hh = pf_grid_connectivity(g) == 8 ? PF_H_OCTILE : PF_H_MANHATTAN;
        double best_h = INFINITY, best_g = INFINITY;
        for (int32_t y = 0; y < h; y++)
            for (int32_t x = 0; x < w; x++) {
                double d = dist[y * w + x], hv = pf_heuristic_eval(hh, (pf_point){x, y}, t);
                if (isinf(d)) continue;
                if (hv < best_h || (hv == best_h && d < best_g)) {
                    best_h = hv;
                    best_g = d;
                }
            }
        for (int a = PF_ALGO_BFS; a <= PF_ALGO_GREEDY; a++) {
            pf_query q = pf_query_make(s, t, (pf_algorithm)a);
            pf_result r;
            double pc;
            q.partial = true;
            q.weight = 2.0;
            ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_OK);
            ck_assert(r.partial);
            ck_assert_int_eq(r.partial_reason,
                             pf_grid_is_walkable(g, t) ? PF_NO_PATH : PF_EBLOCKED);
            ck_assert(r.path[0].x == s.x && r.path[0].y == s.y);
            ck_assert_int_eq(pf_path_validate(g, r.path, r.path_len, &pc, NULL), PF_OK);
            ck_assert(ref_close(pc, r.cost));
            pf_point e = r.path[r.path_len - 1];
            ck_assert_msg(pf_heuristic_eval(hh, e, t) == best_h, "map %d %s: end h %.6f best %.6f",
                          m, pf_algorithm_name((pf_algorithm)a), pf_heuristic_eval(hh, e, t),
                          best_h);
            if (a == PF_ALGO_DIJKSTRA || a == PF_ALGO_ASTAR) ck_assert(ref_close(r.cost, best_g));
            /* Without partial the same query is a plain "no path". */
            q.partial = false;
            ck_assert_int_eq(pf_search(ctx, g, &q, &r),
                             pf_grid_is_walkable(g, t) ? PF_NO_PATH : PF_EBLOCKED);
            ck_assert(!r.partial);
        }
        cases++;
    next:
        free(dist);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(cases, 100);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* The node budget runs out: a partial answer towards the goal, from the
 * cells expanded so far; off-map goals stay errors. */
START_TEST(search_partial_budget_and_off_map) {
    pf_grid *g = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    ck_assert_int_eq(pf_grid_create(64, 64, NULL, &g), PF_OK);
    for (int32_t y = 0; y < 60; y++) pf_grid_set_cost(g, (pf_point){32, y}, 0);
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){63, 0}, PF_ALGO_ASTAR);
    q.partial = true;
    q.max_expanded = 50;
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_OK);
    ck_assert(r.partial);
    ck_assert_int_eq(r.partial_reason, PF_EBUDGET);
    ck_assert_uint_eq(r.expanded, 50);
    ck_assert_int_eq(pf_path_validate(g, r.path, r.path_len, NULL, NULL), PF_OK);
    ck_assert_int_gt(r.path[r.path_len - 1].x, 0);
    ck_assert_ptr_null(r.expanded_cells); /* recorded for the answer only */
    q.goal = (pf_point){64, 0};
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_ERANGE);
    q.goal = (pf_point){63, 0};
    q.start = (pf_point){32, 0}; /* a blocked start is never partial */
    ck_assert_int_eq(pf_search(ctx, g, &q, &r), PF_EBLOCKED);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

TU_SUITE(search) {
    Suite *s = suite_create("search");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, search_textbook_room_wall_gap);
    tcase_add_test(tc, search_textbook_mud_bfs_vs_dijkstra);
    tcase_add_test(tc, search_textbook_level_greedy_longer);
    tcase_add_test(tc, search_astar_tiebreak_open_grid);
    tcase_add_test(tc, search_start_equals_goal_and_unreachable);
    tcase_add_test(tc, search_rejects_bad_queries);
    tcase_add_test(tc, search_node_budget_exhausted);
    tcase_add_test(tc, search_stop_callback_cancels);
    tcase_add_test(tc, search_records_expanded_cells);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("slow");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, search_property_random_maps);
    tcase_add_test(slow, search_auto_against_reference);
    tcase_add_test(tc, search_auto_choices);
    tcase_add_test(slow, search_auto_measurement);
    tcase_add_test(slow, search_movingai_scenarios_sampled);
    tcase_add_test(slow, search_partial_unreachable_random_maps);
    tcase_add_test(slow, search_partial_budget_and_off_map);
    suite_add_tcase(s, slow);
    return s;
}
