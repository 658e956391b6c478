/* test_nearest.c -- the nearest of several goals: costs equal the reference
 * Dijkstra's minimum over the goals, the goal named is one at that cost,
 * with the exact and the bounding-box heuristics, agent sizes through the
 * planner, partial answers, bad input. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nearest.h"
#include "planner.h"
#include "refsearch.h"
#include "search.h"
#include "testutil.h"

START_TEST(nearest_textbook_and_ties) {
    const char *rows[] = {"........", ".######.", "........"};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 4);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point goals[4] = {{7, 2}, {3, 0}, {0, 2}, {3, 0}};
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){0, 0}, PF_ALGO_ASTAR);
    pf_result r;
    int32_t which;
    ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, 4, &r, &which), PF_OK);
    ck_assert_int_eq(which, 2); /* (0,2) costs 2, (3,0) 3 */
    ck_assert_double_eq_tol(r.cost, 2.0, 1e-12);
    q.start = (pf_point){4, 0};
    ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, 4, &r, &which), PF_OK);
    ck_assert_int_eq(which, 1); /* (3,0) is listed twice: the lower index */
    ck_assert_double_eq_tol(r.cost, 1.0, 1e-12);
    ck_assert_uint_eq(r.path_len, 2);
    q.start = (pf_point){3, 0};
    ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, 4, &r, &which), PF_OK);
    ck_assert_int_eq(which, 1);
    ck_assert_uint_eq(r.path_len, 1);
    ck_assert_double_eq(r.cost, 0.0);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(nearest_rejects_bad_input) {
    const char *rows[] = {"...", ".#.", "..."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point goals[3] = {{2, 2}, {1, 1}, {3, 0}};
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){0, 0}, PF_ALGO_ASTAR);
    pf_result r;
    int32_t which;
    ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, 0, &r, &which), PF_EINVAL);
    ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, 2, &r, &which), PF_EBLOCKED);
    ck_assert_int_eq(which, 1);
    goals[1] = goals[2];
    ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, 2, &r, &which), PF_ERANGE);
    ck_assert_int_eq(which, 1);
    q.start = (pf_point){1, 1};
    ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, 1, &r, &which), PF_EBLOCKED);
    ck_assert_int_eq(which, -1);
    q.start = (pf_point){0, 0};
    q.algorithm = PF_ALGO_BFS;
    ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, 1, &r, &which), PF_EUNSUPPORTED);
    q.algorithm = PF_ALGO_ASTAR;
    q.heuristic = PF_H_MANHATTAN; /* overestimates with diagonals */
    ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, 1, &r, &which), PF_EINVAL);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

/* Random maps, 1..40 goals (exact heuristic up to 16, the box beyond), sizes
 * 1..2 through the planner with astar, dijkstra, jps and hpa (the last two
 * run astar). */
START_TEST(nearest_property_random_maps) {
    uint64_t st = tu_seed("nearest_property_random_maps", 0x4ea40001);
    pf_search_ctx *ctx = pf_search_ctx_create();
    long checked = 0;
    for (int m = 0; m < 300; m++) {
        tu_map_opts o = {2, 40, 0.35, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g0 = tu_random_grid(&st, &o);
        pf_planner_opts po;
        pf_planner *p = NULL;
        memset(&po, 0, sizeof(po));
        po.build_hpa = true;
        ck_assert_int_eq(pf_planner_create(g0, &po, &p), PF_OK);
        const pf_grid *base = pf_planner_grid(p), *g;
        int32_t n = m % 4 == 3 ? 2 : 1, w = pf_grid_width(base);
        ck_assert_int_eq(pf_planner_agent_grid(p, n, NULL, &g), PF_OK);
        if (pf_grid_walkable_count(g) == 0) {
            pf_planner_destroy(p);
            continue;
        }
        double *dist = malloc((size_t)w * pf_grid_height(base) * sizeof(*dist));
        for (int k = 0; k < 4; k++) {
            pf_point s, goals[40];
            size_t ng = 1 + tu_below(&st, k % 2 ? 40 : 8);
            tu_random_walkable(&st, g, &s);
            for (size_t i = 0; i < ng; i++) tu_random_walkable(&st, g, &goals[i]);
            ref_dists(base, n, &s, 1, false, dist);
            double best = INFINITY;
            for (size_t i = 0; i < ng; i++)
                if (dist[goals[i].y * w + goals[i].x] < best)
                    best = dist[goals[i].y * w + goals[i].x];
            static const pf_algorithm algos[] = {PF_ALGO_ASTAR, PF_ALGO_DIJKSTRA, PF_ALGO_JPS,
                                                 PF_ALGO_HPA};
            for (size_t a = 0; a < 4; a++) {
                pf_query q = pf_query_make(s, s, algos[a]);
                pf_result r;
                int32_t which;
                q.agent_size = n;
                pf_status rs = pf_planner_search_nearest(ctx, p, &q, goals, ng, &r, &which);
                if (isinf(best)) {
                    ck_assert_int_eq(rs, PF_NO_PATH);
                    ck_assert_int_eq(which, -1);
                    continue;
                }
                ck_assert_int_eq(rs, PF_OK);
                ck_assert_int_eq(r.algorithm,
                                 algos[a] == PF_ALGO_DIJKSTRA ? PF_ALGO_DIJKSTRA : PF_ALGO_ASTAR);
                ck_assert_msg(ref_close(r.cost, best), "map %d %zu goals %s: %.9f want %.9f", m, ng,
                              pf_algorithm_name(algos[a]), r.cost, best);
                ck_assert(which >= 0 && (size_t)which < ng);
                ck_assert(ref_close(dist[goals[which].y * w + goals[which].x], best));
                /* The lowest index among the goals on that cell. */
                for (int32_t i = 0; i < which; i++)
                    ck_assert(goals[i].x != goals[which].x || goals[i].y != goals[which].y);
                double pc;
                ck_assert_int_eq(ref_agent_path_check(base, n, r.path, r.path_len, &pc), -1);
                ck_assert(ref_close(pc, r.cost));
                ck_assert(r.path[r.path_len - 1].x == goals[which].x &&
                          r.path[r.path_len - 1].y == goals[which].y);
                checked++;
            }
        }
        free(dist);
        pf_planner_destroy(p);
    }
    ck_assert_int_gt(checked, 2000);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Every goal out of reach: the partial answer ends at the reachable cell
 * closest to any goal by the heuristic (then cheapest), and names the goal
 * closest to it. */
START_TEST(nearest_partial_random_maps) {
    uint64_t st = tu_seed("nearest_partial_random_maps", 0x4ea40002);
    pf_search_ctx *ctx = pf_search_ctx_create();
    int cases = 0;
    for (int m = 0; m < 400 && cases < 150; m++) {
        tu_map_opts o = {4, 30, 0.45, m % 2 == 0, false, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        double *dist = malloc((size_t)w * h * sizeof(*dist));
        pf_point s, goals[5];
        size_t ng = 1 + tu_below(&st, 5), k = 0;
        if (!tu_random_walkable(&st, g, &s)) goto next;
        ref_dists(g, 1, &s, 1, false, dist);
        for (int tries = 0; tries < 200 && k < ng; tries++) {
            pf_point c = {(int32_t)tu_below(&st, (uint32_t)w), (int32_t)tu_below(&st, (uint32_t)h)};
            if (isinf(dist[c.y * w + c.x])) goals[k++] = c; /* unreachable, maybe blocked */
        }
        if (k < ng) goto next;
        for (int a = 0; a < 2; a++) {
            pf_query q = pf_query_make(s, s, a ? PF_ALGO_DIJKSTRA : PF_ALGO_ASTAR);
            pf_result r;
            int32_t which;
            q.partial = true;
            ck_assert_int_eq(pf_search_nearest(ctx, g, &q, goals, ng, &r, &which), PF_OK);
            ck_assert(r.partial);
            pf_point e = r.path[r.path_len - 1];
            double best_h = INFINITY, best_g = INFINITY;
            pf_heuristic hh = pf_grid_connectivity(g) == 8 ? PF_H_OCTILE : PF_H_MANHATTAN;
            for (int32_t y = 0; y < h; y++)
                for (int32_t x = 0; x < w; x++) {
                    if (isinf(dist[y * w + x])) continue;
                    double hv = INFINITY;
                    for (size_t i = 0; i < ng; i++) {
                        double v = pf_heuristic_eval(hh, (pf_point){x, y}, goals[i]);
                        if (v < hv) hv = v;
                    }
                    if (hv < best_h || (hv == best_h && dist[y * w + x] < best_g)) {
                        best_h = hv;
                        best_g = dist[y * w + x];
                    }
                }
            double eh = INFINITY;
            for (size_t i = 0; i < ng; i++) {
                double v = pf_heuristic_eval(hh, e, goals[i]);
                if (v < eh) eh = v;
            }
            ck_assert_msg(eh == best_h, "map %d: end h %.6f, best %.6f", m, eh, best_h);
            ck_assert(ref_close(r.cost, best_g));
            ck_assert(ref_close(dist[e.y * w + e.x], r.cost));
            ck_assert(pf_heuristic_eval(hh, e, goals[which]) == eh);
            bool all_blocked = true;
            for (size_t i = 0; i < ng; i++) all_blocked &= !pf_grid_is_walkable(g, goals[i]);
            ck_assert_int_eq(r.partial_reason, all_blocked ? PF_EBLOCKED : PF_NO_PATH);
        }
        cases++;
    next:
        free(dist);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(cases, 50);
    pf_search_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(nearest) {
    Suite *s = suite_create("nearest");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, nearest_textbook_and_ties);
    tcase_add_test(tc, nearest_rejects_bad_input);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("property");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, nearest_property_random_maps);
    tcase_add_test(slow, nearest_partial_random_maps);
    suite_add_tcase(s, slow);
    return s;
}
