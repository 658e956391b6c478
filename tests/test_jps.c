/* test_jps.c -- jump point search: examples, property tests against the
 * reference Dijkstra under both corner rules, the astar fallback, updates
 * after map changes, long jumps, and the Moving AI scenarios. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deadends.h"
#include "jps.h"
#include "jps_internal.h"
#include "jpsref.h"
#include "landmarks.h"
#include "map_io.h"
#include "maze.h"
#include "path.h"
#include "planner.h"
#include "refsearch.h"
#include "search.h"
#include "testutil.h"

static pf_jps *make_jps(const pf_grid *g) {
    pf_jps *j = NULL;
    ck_assert_int_eq(pf_jps_create(g, NULL, NULL, &j), PF_OK);
    ck_assert_ptr_nonnull(j);
    return j;
}

static pf_result run_jps(pf_search_ctx *ctx, const pf_jps *j, const pf_grid *g, pf_point s,
                         pf_point t) {
    pf_query q = pf_query_make(s, t, PF_ALGO_JPS);
    pf_result r;
    pf_status st = pf_jps_search(ctx, j, g, &q, &r);
    ck_assert_int_eq(st, r.status);
    return r;
}

static pf_result run_astar(pf_search_ctx *ctx, const pf_grid *g, pf_point s, pf_point t) {
    pf_query q = pf_query_make(s, t, PF_ALGO_ASTAR);
    pf_result r;
    pf_search(ctx, g, &q, &r);
    return r;
}

/* The path is a valid cell path from s to t whose cost is the reported one. */
static void check_path(const pf_grid *g, const pf_result *r, pf_point s, pf_point t) {
    double pc = -1;
    size_t bad = 0;
    ck_assert_uint_ge(r->path_len, 1);
    ck_assert_msg(pf_path_validate(g, r->path, r->path_len, &pc, &bad) == PF_OK,
                  "invalid step at index %zu of %zu", bad, r->path_len);
    ck_assert(r->path[0].x == s.x && r->path[0].y == s.y);
    ck_assert(r->path[r->path_len - 1].x == t.x && r->path[r->path_len - 1].y == t.y);
    ck_assert_double_eq_tol(pc, r->cost, 1e-6);
}

/* A 9x7 room with a pillar: JPS finds the optimum with fewer expansions than
 * astar and reports its jump points. */
START_TEST(jps_textbook_room_pillar) {
    const char *rows[] = {".........", ".........", "...###...", "...###...",
                          "...###...", ".........", "........."};
    pf_grid *g = tu_grid_from_ascii(rows, 7, 8);
    pf_jps *j = make_jps(g);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point s = {0, 3}, t = {8, 3};
    pf_result a = run_astar(ctx, g, s, t);
    uint64_t aexp = a.expanded;
    double acost = a.cost;
    pf_result r = run_jps(ctx, j, g, s, t);
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_int_eq(r.algorithm, PF_ALGO_JPS);
    ck_assert_double_eq_tol(r.cost, acost, 1e-9);
    ck_assert_double_eq_tol(r.cost, 4.0 + 4.0 * PF_SQRT2, 1e-9);
    ck_assert_uint_lt(r.expanded, aexp);
    ck_assert_uint_gt(r.jump_points, 0);
    check_path(g, &r, s, t);
    pf_search_ctx_destroy(ctx);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
}
END_TEST

/* Diagonally touching obstacles: the gap is closed under both rules, and
 * only corner cutting may slip past a single corner. */
START_TEST(jps_corner_rules_differ) {
    const char *rows[] = {"....", ".#..", "..#.", "...."};
    pf_grid *g = tu_grid_from_ascii(rows, 4, 8);
    pf_jps *j = make_jps(g);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point s = {0, 0}, t = {3, 3};
    for (int cc = 0; cc <= 1; cc++) {
        ck_assert_int_eq(pf_grid_set_rules(g, 8, cc == 1), PF_OK);
        pf_result r = run_jps(ctx, j, g, s, t);
        ck_assert_int_eq(r.status, PF_OK);
        ck_assert_double_eq_tol(r.cost, tu_reference_cost(g, s, t), 1e-9);
        check_path(g, &r, s, t);
    }
    /* (1,1) -> (0,2) past one blocked corner: a diagonal step with corner
     * cutting, two straight steps without. Between two blocked corners, no
     * rule lets it through. */
    {
        const char *r2[] = {"###", "#.#", "..#"};
        const char *r3[] = {"###", "#.#", ".##"};
        pf_grid *g2 = tu_grid_from_ascii(r2, 3, 8), *g3 = tu_grid_from_ascii(r3, 3, 8);
        pf_jps *j2 = make_jps(g2), *j3 = make_jps(g3);
        for (int cc = 0; cc <= 1; cc++) {
            ck_assert_int_eq(pf_grid_set_rules(g2, 8, cc == 1), PF_OK);
            ck_assert_int_eq(pf_grid_set_rules(g3, 8, cc == 1), PF_OK);
            pf_result r = run_jps(ctx, j2, g2, (pf_point){1, 1}, (pf_point){0, 2});
            ck_assert_int_eq(r.status, PF_OK);
            ck_assert_double_eq_tol(r.cost, cc ? PF_SQRT2 : 2.0, 1e-9);
            check_path(g2, &r, (pf_point){1, 1}, (pf_point){0, 2});
            r = run_jps(ctx, j3, g3, (pf_point){1, 1}, (pf_point){0, 2});
            ck_assert_int_eq(r.status, PF_NO_PATH);
        }
        pf_jps_destroy(j2);
        pf_jps_destroy(j3);
        pf_grid_destroy(g2);
        pf_grid_destroy(g3);
    }
    pf_search_ctx_destroy(ctx);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(jps_start_equals_goal_and_unreachable) {
    const char *rows[] = {"..#..", "..#..", "..#.."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8);
    pf_jps *j = make_jps(g);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r = run_jps(ctx, j, g, (pf_point){1, 1}, (pf_point){1, 1});
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_uint_eq(r.path_len, 1);
    ck_assert_double_eq(r.cost, 0.0);
    r = run_jps(ctx, j, g, (pf_point){1, 1}, (pf_point){4, 1});
    ck_assert_int_eq(r.status, PF_NO_PATH);
    ck_assert_uint_eq(r.path_len, 0);
    ck_assert_ptr_null(r.path);
    pf_search_ctx_destroy(ctx);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(jps_rejects_bad_queries) {
    const char *rows[] = {"..#", "..."};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 8);
    pf_grid *other = NULL;
    pf_jps *j = make_jps(g), *jo;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){3, 0}, PF_ALGO_JPS);
    ck_assert_int_eq(pf_jps_search(ctx, j, g, &q, &r), PF_ERANGE);
    q.goal = (pf_point){2, 0};
    ck_assert_int_eq(pf_jps_search(ctx, j, g, &q, &r), PF_EBLOCKED);
    q.goal = (pf_point){2, 1};
    q.heuristic = PF_H_MANHATTAN; /* overestimates with diagonals, as for astar */
    ck_assert_int_eq(pf_jps_search(ctx, j, g, &q, &r), PF_EINVAL);
    q.heuristic = PF_H_DEFAULT;
    ck_assert_int_eq(pf_jps_search(ctx, j, g, &q, &r), PF_OK);
    /* Preprocessing built from a grid of another size. */
    ck_assert_int_eq(pf_grid_create(5, 5, NULL, &other), PF_OK);
    jo = make_jps(other);
    ck_assert_int_eq(pf_jps_search(ctx, jo, g, &q, &r), PF_EINVAL);
    ck_assert_int_eq(pf_jps_update(jo, g, NULL, 0, NULL), PF_EINVAL);
    ck_assert_int_eq(pf_jps_update(j, g, &(pf_point){3, 0}, 1, NULL), PF_ERANGE);
    pf_jps_destroy(jo);
    pf_jps_destroy(NULL);
    pf_grid_destroy(other);
    pf_search_ctx_destroy(ctx);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(jps_node_budget_and_stop) {
    pf_grid *g = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    uint64_t st = tu_seed("jps_node_budget_and_stop", 0x5eed0301);
    tu_map_opts o = {200, 200, 0.3, false, false, 8, 0};
    g = tu_random_grid(&st, &o);
    pf_jps *j = make_jps(g);
    pf_point s = {0, 0}, t = {199, 199};
    pf_grid_set_cost(g, s, 1);
    pf_grid_set_cost(g, t, 1);
    ck_assert_int_eq(pf_jps_update(j, g, (pf_point[]){s, t}, 2, NULL), PF_OK);
    pf_query q = pf_query_make(s, t, PF_ALGO_JPS);
    q.max_expanded = 3;
    pf_status rs = pf_jps_search(ctx, j, g, &q, &r);
    ck_assert(rs == PF_EBUDGET || rs == PF_NO_PATH || (rs == PF_OK && r.expanded <= 3));
    if (rs == PF_EBUDGET) {
        ck_assert_uint_eq(r.expanded, 3);
        ck_assert_uint_eq(r.path_len, 0);
    }
    q.max_expanded = 0;
    q.should_stop = NULL;
    q.record_expanded = true;
    rs = pf_jps_search(ctx, j, g, &q, &r);
    ck_assert_uint_eq(r.expanded_cells_len, r.expanded);
    ck_assert_int_eq(r.expanded_cells[0], 0);
    pf_search_ctx_destroy(ctx);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
}
END_TEST

static bool stop_now(void *ud) {
    (void)ud;
    return true;
}

START_TEST(jps_stop_callback_cancels) {
    pf_grid *g = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    ck_assert_int_eq(pf_grid_create(64, 64, NULL, &g), PF_OK);
    pf_grid_set_cost(g, (pf_point){1, 1}, 0);
    pf_jps *j = make_jps(g);
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){63, 60}, PF_ALGO_JPS);
    q.should_stop = stop_now;
    ck_assert_int_eq(pf_jps_search(ctx, j, g, &q, &r), PF_ECANCELED);
    ck_assert_uint_eq(r.path_len, 0);
    pf_search_ctx_destroy(ctx);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
}
END_TEST

/* Compares JPS on g (from s to t) with the reference cost `ref` (-1 when
 * unreachable). */
static void check_against(pf_search_ctx *ctx, const pf_jps *j, const pf_grid *g, pf_point s,
                          pf_point t, double ref, int m) {
    pf_result r = run_jps(ctx, j, g, s, t);
    ck_assert_int_eq(r.algorithm, PF_ALGO_JPS);
    if (ref < 0) {
        ck_assert_msg(r.status == PF_NO_PATH, "map %d: (%d,%d)->(%d,%d) status %s, unreachable", m,
                      s.x, s.y, t.x, t.y, pf_status_str(r.status));
        return;
    }
    ck_assert_msg(r.status == PF_OK, "map %d: (%d,%d)->(%d,%d) status %s, reference %f", m, s.x,
                  s.y, t.x, t.y, pf_status_str(r.status), ref);
    ck_assert_msg(fabs(r.cost - ref) < 1e-6,
                  "map %d cc %d: (%d,%d)->(%d,%d) cost %.9f reference %.9f", m,
                  pf_grid_corner_cutting(g), s.x, s.y, t.x, t.y, r.cost, ref);
    check_path(g, &r, s, t);
}

/* The layouts and direct settings a property test runs through: the
 * default, each layout forced with direct answers, and the plain reference
 * (block scans, no direct answers). */
static const struct {
    pf_jps_layout layout;
    bool direct;
} variants[] = {{PF_JPS_LAYOUT_AUTO, true},
                {PF_JPS_LAYOUT_TABLES, true},
                {PF_JPS_LAYOUT_BITS, true},
                {PF_JPS_LAYOUT_SCAN, false}};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

/* Thousands of random uniform maps (sizes 1..128, 0-45% blocked) built under
 * corner rule cc: JPS agrees with the reference Dijkstra (tests/refsearch.c,
 * no code of core's searches) on reachability and cost for every query; every
 * path is valid. Per phase, two sources, each with one full reference
 * Dijkstra and two targets. Each map is
 * searched in four phases: with the jump data in each variant (tables,
 * bits, the plain scans without direct answers: each query in every
 * variant, so the clever layouts are held against the plain one on the same
 * queries); then under the other rule without pf_jps_update, where the
 * stale jump data must be ignored although forced on; then after
 * pf_jps_update has rebuilt it for the new rule. */
static void property_run(const char *name, uint64_t dflt, int cc) {
    uint64_t st = tu_seed(name, dflt);
    pf_search_ctx *ctx = pf_search_ctx_create();
    const int maps = 2000;
    for (int m = 0; m < maps; m++) {
        tu_map_opts o = {1, (m % 10 == 0) ? 128 : 40, 0.45, false, false, 8, cc};
        pf_grid *g = tu_random_grid(&st, &o);
        pf_jps *j = make_jps(g);
        double *dist = malloc((size_t)pf_grid_width(g) * pf_grid_height(g) * sizeof(*dist));
        pf_point src = {0, 0};
        ck_assert_ptr_nonnull(dist);
        ck_assert(pf_jps_supports(g));
        for (int phase = 0; phase < 3; phase++) {
            if (phase == 1) ck_assert_int_eq(pf_grid_set_rules(g, 8, !cc), PF_OK);
            if (phase == 2) ck_assert_int_eq(pf_jps_update(j, g, NULL, 0, NULL), PF_OK);
            for (int k = 0; k < 4; k++) {
                pf_point s, t;
                double ref;
                if (k % 2 == 0) { /* a new source: its distances to every cell */
                    if (!tu_random_walkable(&st, g, &src)) break;
                    ref_dists(g, 1, &src, 1, false, dist);
                }
                s = src;
                tu_random_walkable(&st, g, &t);
                ref = isinf(dist[(size_t)t.y * pf_grid_width(g) + t.x])
                          ? -1
                          : dist[(size_t)t.y * pf_grid_width(g) + t.x];
                for (size_t v = 0; v < NVARIANTS; v++) {
                    pf_jps_set_layout(j, variants[v].layout);
                    pf_jps_set_direct(j, variants[v].direct);
                    check_against(ctx, j, g, s, t, ref, m);
                }
            }
        }
        free(dist);
        pf_jps_destroy(j);
        pf_grid_destroy(g);
    }
    pf_search_ctx_destroy(ctx);
}

START_TEST(jps_property_random_maps_no_corner_cutting) {
    property_run("jps_property_random_maps_no_corner_cutting", 0x5eed0311, 0);
}
END_TEST

START_TEST(jps_property_random_maps_corner_cutting) {
    property_run("jps_property_random_maps_corner_cutting", 0x5eed0312, 1);
}
END_TEST

/* Uniform maps whose cells all cost 7: costs scale, JPS still serves. */
START_TEST(jps_uniform_cost_other_than_one) {
    uint64_t st = tu_seed("jps_uniform_cost_other_than_one", 0x5eed0321);
    pf_search_ctx *ctx = pf_search_ctx_create();
    for (int m = 0; m < 200; m++) {
        tu_map_opts o = {1, 48, 0.4, false, false, 8, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        for (int32_t y = 0; y < pf_grid_height(g); y++)
            for (int32_t x = 0; x < pf_grid_width(g); x++)
                if (pf_grid_is_walkable(g, (pf_point){x, y}))
                    pf_grid_set_cost(g, (pf_point){x, y}, 7);
        pf_jps *j = make_jps(g);
        ck_assert(pf_jps_supports(g));
        for (int k = 0; k < 3; k++) {
            pf_point s, t;
            if (!tu_random_walkable(&st, g, &s)) break;
            tu_random_walkable(&st, g, &t);
            check_against(ctx, j, g, s, t, tu_reference_cost(g, s, t), m);
        }
        pf_jps_destroy(j);
        pf_grid_destroy(g);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Non-uniform costs, wall edges and 4-connectivity: astar runs instead, says
 * so, and answers exactly as astar, at the reference Dijkstra's cost. */
START_TEST(jps_falls_back_to_astar) {
    uint64_t st = tu_seed("jps_falls_back_to_astar", 0x5eed0331);
    pf_search_ctx *ctx = pf_search_ctx_create();
    for (int m = 0; m < 300; m++) {
        int kind = m % 3;
        tu_map_opts o = {2, 40, 0.3, kind == 0, kind == 1, kind == 2 ? 4 : 8, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        pf_jps *j = make_jps(g);
        pf_point s, t;
        if (kind == 0 && pf_grid_is_uniform(g)) goto next; /* all one cost by chance */
        if (kind == 1 && !pf_grid_has_walls(g)) goto next;
        ck_assert(!pf_jps_supports(g));
        if (!tu_random_walkable(&st, g, &s)) goto next;
        tu_random_walkable(&st, g, &t);
        {
            pf_result a = run_astar(ctx, g, s, t);
            pf_status as = a.status;
            double ac = a.cost;
            size_t alen = a.path_len;
            pf_result r = run_jps(ctx, j, g, s, t);
            ck_assert_int_eq(r.algorithm, PF_ALGO_ASTAR);
            ck_assert_int_eq(r.status, as);
            ck_assert_uint_eq(r.path_len, alen);
            ck_assert_double_eq_tol(r.cost, ac, 1e-9);
            if (as == PF_OK)
                ck_assert_double_eq_tol(r.cost, tu_reference_cost(g, s, t), 1e-6);
            else
                ck_assert(tu_reference_cost(g, s, t) < 0);
            ck_assert_uint_eq(r.jump_points, 0);
            if (as == PF_OK) check_path(g, &r, s, t);
        }
    next:
        pf_jps_destroy(j);
        pf_grid_destroy(g);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* After cells change, pf_jps_update brings both bit grids in step: every
 * answer matches the reference on the changed map, under both rules. A map
 * made non-uniform falls back, and JPS returns once it is uniform again. */
START_TEST(jps_update_follows_changes) {
    uint64_t st = tu_seed("jps_update_follows_changes", 0x5eed0341);
    pf_search_ctx *ctx = pf_search_ctx_create();
    for (int m = 0; m < 150; m++) {
        tu_map_opts o = {2, 60, 0.35, false, false, 8, m % 2};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        pf_jps *j = make_jps(g);
        pf_point changed[64];
        pf_jps_set_layout(j, m % 3 == 0 ? PF_JPS_LAYOUT_BITS : PF_JPS_LAYOUT_TABLES);
        size_t n = 0;
        for (int round = 0; round < 4; round++) {
            n = 1 + tu_below(&st, 64);
            for (size_t i = 0; i < n; i++) {
                changed[i] = (pf_point){(int32_t)tu_below(&st, (uint32_t)w),
                                        (int32_t)tu_below(&st, (uint32_t)h)};
                pf_grid_set_cost(g, changed[i], pf_grid_is_walkable(g, changed[i]) ? 0 : 1);
            }
            ck_assert_int_eq(pf_jps_update(j, g, changed, n, NULL), PF_OK);
            for (int k = 0; k < 3; k++) {
                pf_point s, t;
                if (!tu_random_walkable(&st, g, &s)) break;
                tu_random_walkable(&st, g, &t);
                check_against(ctx, j, g, s, t, tu_reference_cost(g, s, t), m);
            }
        }
        {
            pf_point s, t;
            if (tu_random_walkable(&st, g, &s)) {
                tu_random_walkable(&st, g, &t);
                pf_grid_set_cost(g, s, 5);
                ck_assert_int_eq(pf_jps_update(j, g, &s, 1, NULL), PF_OK);
                if (s.x != t.x || s.y != t.y)
                    ck_assert_int_eq(run_jps(ctx, j, g, s, t).algorithm, PF_ALGO_ASTAR);
                pf_grid_set_cost(g, s, 1);
                ck_assert_int_eq(pf_jps_update(j, g, &s, 1, NULL), PF_OK);
                check_against(ctx, j, g, s, t, tu_reference_cost(g, s, t), m);
            }
        }
        pf_jps_destroy(j);
        pf_grid_destroy(g);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* jps with landmarks (landmarks.h): on random uniform maps with doors, under
 * both corner rules and at cost 1 or 3, the heuristic never exceeds the
 * reference distance and jps stays optimal; after doors switch and cells are
 * blocked the landmarks stay valid and jps stays optimal; a cell opened
 * beyond the all-open map makes them invalid. */
/* The next version of g for the landmark tests: every door switched, then
 * up to `blocks` cells blocked (any cells, or walkable ones); what changed
 * into changed[0..32), the count returned. Only ever removes moves from
 * the all-open map, so the landmarks stay valid. */
static size_t next_version(uint64_t *st, pf_grid *g, pf_point *changed, int blocks, bool walkable) {
    size_t n = 0;
    for (int32_t d = 0; d < pf_grid_door_count(g); d++) {
        size_t nc;
        const pf_point *c = pf_grid_door_cells(g, d, &nc);
        pf_grid_set_door(g, d, !pf_grid_door_is_open(g, d));
        for (size_t k = 0; k < nc && n < 32; k++) changed[n++] = c[k];
    }
    for (int b = 0; b < blocks && n < 32; b++) {
        pf_point p = {(int32_t)tu_below(st, (uint32_t)pf_grid_width(g)),
                      (int32_t)tu_below(st, (uint32_t)pf_grid_height(g))};
        if (walkable && !tu_random_walkable(st, g, &p)) break;
        pf_grid_set_cost(g, p, 0);
        changed[n++] = p;
    }
    return n;
}

START_TEST(jps_landmarks_keep_optimal) {
    uint64_t st = tu_seed("jps_landmarks_keep_optimal", 0x5eed0361);
    pf_search_ctx *ctx = pf_search_ctx_create();
    int built = 0;
    for (int m = 0; m < 400; m++) {
        tu_map_opts o = {2, (m % 8 == 0) ? 96 : 40, 0.4, false, false, 8, m % 2};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        uint8_t cost = m % 3 == 0 ? 3 : 1;
        pf_landmarks *lm = NULL;
        pf_jps *j;
        pf_point changed[32];
        size_t n = 0;
        if (cost != 1)
            for (int32_t y = 0; y < h; y++)
                for (int32_t x = 0; x < w; x++)
                    if (pf_grid_is_walkable(g, (pf_point){x, y}))
                        pf_grid_set_cost(g, (pf_point){x, y}, cost);
        for (int d = 0; d < 3; d++) { /* doors over random cells, open or shut */
            pf_point c[2] = {
                {(int32_t)tu_below(&st, (uint32_t)w), (int32_t)tu_below(&st, (uint32_t)h)},
                {(int32_t)tu_below(&st, (uint32_t)w), (int32_t)tu_below(&st, (uint32_t)h)}};
            char name[16];
            int32_t idx;
            snprintf(name, sizeof(name), "d%d", d);
            if (pf_grid_cost(g, c[0]) == 0 || pf_grid_cost(g, c[1]) == 0)
                continue; /* keep it uniform */
            ck_assert_int_eq(pf_grid_add_door(g, name, c, 2, NULL, 0, tu_below(&st, 2), &idx),
                             PF_OK);
        }
        ck_assert_int_eq(pf_landmarks_build(g, (size_t)w * (size_t)h * 4 * 8, NULL, &lm), PF_OK);
        if (!lm) { /* a map with no two walkable cells apart */
            pf_grid_destroy(g);
            continue;
        }
        built++;
        j = make_jps(g);
        pf_jps_set_landmarks(j, lm);
        for (int round = 0; round < 3; round++) {
            if (round > 0) {
                n = next_version(&st, g, changed, 4, false);
                ck_assert(pf_landmarks_valid_for(lm, g, changed, n));
                ck_assert_int_eq(pf_jps_update(j, g, changed, n, NULL), PF_OK);
            }
            for (int k = 0; k < 4; k++) {
                pf_point s, t;
                double ref;
                if (!tu_random_walkable(&st, g, &s)) break;
                tu_random_walkable(&st, g, &t);
                ref = tu_reference_cost(g, s, t);
                if (ref >= 0)
                    ck_assert_msg(pf_landmarks_h(lm, s.y * w + s.x, t.y * w + t.x) <= ref + 1e-9,
                                  "map %d: heuristic above the distance", m);
                check_against(ctx, j, g, s, t, ref, m);
            }
        }
        /* Opening a cell that was blocked with every door open: invalid. */
        for (int32_t v = 0; v < w * h; v++) {
            pf_point p = {v % w, v / w};
            if (lm->open[v >> 6] >> (v & 63) & 1) continue;
            pf_grid_set_cost(g, p, cost);
            ck_assert(!pf_landmarks_valid_for(lm, g, &p, 1));
            break;
        }
        pf_jps_destroy(j);
        pf_landmarks_release(lm);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(built, 300);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Dead-end pruning (deadends.h) keeps jps optimal: on perfect and loopy
 * mazes (corridors 1-3 wide, both corner rules), with the landmarks and
 * their dead ends built from the all-open map and kept through versions
 * that switch doors and block cells, every layout agrees with the reference
 * Dijkstra. The pruned searches must expand fewer jump points than the same
 * searches without landmarks on perfect mazes, so the test sees the pruning
 * at work. */
START_TEST(jps_deadends_keep_optimal) {
    uint64_t st = tu_seed("jps_deadends_keep_optimal", 0x5eed0dea);
    pf_search_ctx *ctx = pf_search_ctx_create();
    int pruned = 0, queries = 0;
    for (int m = 0; m < 150; m++) {
        pf_maze_params p = {0};
        pf_grid *g = NULL;
        pf_landmarks *lm = NULL;
        pf_jps *j, *plain;
        int32_t w, h;
        pf_point changed[32];
        size_t n = 0;
        p.width = 20 + (int32_t)tu_below(&st, 60);
        p.height = 20 + (int32_t)tu_below(&st, 60);
        p.seed = tu_rand(&st);
        p.corridor = m % 4 == 3 ? 2 + (int32_t)tu_below(&st, 2) : 1;
        p.walls = PF_MAZE_WALL_CELLS;
        p.loops = m % 2 == 0 ? 0.0 : m % 3 == 0 ? 0.05 : 0.3;
        p.connectivity = 8;
        p.corner_cutting = (m / 5) % 2;
        ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_OK);
        w = pf_grid_width(g);
        h = pf_grid_height(g);
        for (int d = 0; d < 3; d++) { /* doors over random walkable cells */
            pf_point c[1];
            char name[16];
            int32_t idx;
            if (!tu_random_walkable(&st, g, &c[0])) break;
            snprintf(name, sizeof(name), "d%d", d);
            ck_assert_int_eq(pf_grid_add_door(g, name, c, 1, NULL, 0, tu_below(&st, 2), &idx),
                             PF_OK);
        }
        ck_assert_int_eq(pf_landmarks_build(g, (size_t)w * (size_t)h * 4 * 4, NULL, &lm), PF_OK);
        ck_assert_ptr_nonnull(lm);
        /* A corridor 2 or more wide has no cut vertex across it: only
         * one-wide perfect mazes are sure to have dead ends. */
        if (p.loops == 0.0 && !p.corner_cutting && p.corridor == 1)
            ck_assert_msg(lm->dead != NULL, "maze %d (%dx%d corridor %d): no dead ends", m, w, h,
                          p.corridor);
        j = make_jps(g);
        plain = make_jps(g);
        pf_jps_set_landmarks(j, lm);
        for (int round = 0; round < 3; round++) {
            if (round > 0) {
                n = next_version(&st, g, changed, 3, true);
                ck_assert(pf_landmarks_valid_for(lm, g, changed, n));
                ck_assert_int_eq(pf_jps_update(j, g, changed, n, NULL), PF_OK);
                ck_assert_int_eq(pf_jps_update(plain, g, changed, n, NULL), PF_OK);
            }
            for (int k = 0; k < 6; k++) {
                pf_point s, t;
                double ref;
                if (!tu_random_walkable(&st, g, &s)) break;
                tu_random_walkable(&st, g, &t);
                ref = tu_reference_cost(g, s, t);
                for (size_t v = 0; v < NVARIANTS; v++) {
                    pf_jps_set_layout(j, variants[v].layout);
                    pf_jps_set_direct(j, variants[v].direct);
                    check_against(ctx, j, g, s, t, ref, m);
                }
                if (ref > 0 && lm->dead && p.loops == 0.0 && !p.corner_cutting) {
                    pf_result a = run_jps(ctx, j, g, s, t), b = run_jps(ctx, plain, g, s, t);
                    queries++;
                    pruned += a.jump_points < b.jump_points;
                }
            }
        }
        pf_jps_destroy(j);
        pf_jps_destroy(plain);
        pf_landmarks_release(lm);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(queries, 50);
    ck_assert_int_gt(pruned, queries / 2);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* The planner builds landmarks for jps, keeps them through a PATCH that
 * closes a door and drops them when a PATCH opens a blocked cell; jps stays
 * optimal on every version. */
START_TEST(jps_planner_landmarks_across_versions) {
    static const char *const rows[] = {"..........", "....#.....", "....#.....", "....#.....",
                                       "..........", "##########", ".........."};
    pf_grid *g = tu_grid_from_ascii(rows, 7, 8);
    pf_planner_opts po = {false, 0, 1 << 20, 0, PF_JPS_DEFAULT_TABLE_BYTES, 0, 0, NULL};
    pf_planner *p1, *p2, *p3;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point gate[1] = {{0, 4}};
    int32_t idx;
    pf_door_change close = {0, false};
    pf_cell_change open_wall = {{3, 5}, 1};
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){9, 6}, PF_ALGO_JPS);
    pf_result r;
    ck_assert_int_eq(pf_grid_add_door(g, "gate", gate, 1, NULL, 0, true, &idx), PF_OK);
    ck_assert_int_eq(pf_planner_create(g, &po, &p1), PF_OK);
    ck_assert_ptr_nonnull(pf_planner_landmarks(p1));
    ck_assert_int_eq(pf_planner_apply(p1, NULL, 0, &close, 1, NULL, &p2, NULL, NULL), PF_OK);
    ck_assert_ptr_eq(pf_planner_landmarks(p2), pf_planner_landmarks(p1));
    ck_assert_int_eq(pf_planner_apply(p2, &open_wall, 1, NULL, 0, NULL, &p3, NULL, NULL), PF_OK);
    ck_assert_ptr_null(pf_planner_landmarks(p3));
    {
        const pf_planner *ps[3] = {p1, p2, p3};
        for (int i = 0; i < 3; i++) {
            double ref = tu_reference_cost(pf_planner_grid(ps[i]), q.start, q.goal);
            pf_planner_search(ctx, ps[i], &q, &r);
            if (ref < 0) {
                ck_assert_int_eq(r.status, PF_NO_PATH);
            } else {
                ck_assert_int_eq(r.status, PF_OK);
                ck_assert_double_eq_tol(r.cost, ref, 1e-9);
            }
        }
    }
    pf_planner_destroy(p1); /* p2 still holds the landmarks */
    pf_planner_search(ctx, p2, &q, &r);
    pf_planner_destroy(p2);
    pf_planner_destroy(p3);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* An 8192-cell open row is one jump (no recursion, no stack growth per
 * cell); the path is expanded to all 8192 cells. Also along a column and the
 * diagonal of a long strip, under both rules. */
START_TEST(jps_long_open_row_8192) {
    pf_grid *g = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    ck_assert_int_eq(pf_grid_create(8192, 3, NULL, &g), PF_OK);
    pf_jps *j = make_jps(g);
    for (int cc = 0; cc <= 1; cc++) {
        ck_assert_int_eq(pf_grid_set_rules(g, 8, cc == 1), PF_OK);
        pf_point s = {0, 1}, t = {8191, 1};
        pf_result r = run_jps(ctx, j, g, s, t);
        ck_assert_int_eq(r.status, PF_OK);
        ck_assert_int_eq(r.algorithm, PF_ALGO_JPS);
        ck_assert_uint_eq(r.path_len, 8192);
        ck_assert_double_eq_tol(r.cost, 8191.0, 1e-6);
        ck_assert_uint_le(r.expanded, 1);
        check_path(g, &r, s, t);
        r = run_jps(ctx, j, g, t, s);
        ck_assert_double_eq_tol(r.cost, 8191.0, 1e-6);
        check_path(g, &r, t, s);
        /* Corner to corner: two diagonal steps and a long straight run. */
        s = (pf_point){0, 0};
        t = (pf_point){8191, 2};
        r = run_jps(ctx, j, g, s, t);
        ck_assert_double_eq_tol(r.cost, 8189.0 + 2.0 * PF_SQRT2, 1e-6);
        check_path(g, &r, s, t);
    }
    pf_jps_destroy(j);
    pf_grid_destroy(g);

    /* A 3 x 8192 column, with a block near its end that forces a detour. */
    ck_assert_int_eq(pf_grid_create(3, 8192, NULL, &g), PF_OK);
    pf_grid_set_cost(g, (pf_point){1, 8000}, 0);
    j = make_jps(g);
    for (int cc = 0; cc <= 1; cc++) {
        ck_assert_int_eq(pf_grid_set_rules(g, 8, cc == 1), PF_OK);
        pf_point s = {1, 0}, t = {1, 8191};
        pf_result r = run_jps(ctx, j, g, s, t);
        ck_assert_int_eq(r.status, PF_OK);
        ck_assert_double_eq_tol(r.cost, tu_reference_cost(g, s, t), 1e-6);
        check_path(g, &r, s, t);
    }
    pf_jps_destroy(j);
    pf_grid_destroy(g);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* An empty 512x512 map corner to corner: one diagonal jump. */
START_TEST(jps_open_map_few_expansions) {
    pf_grid *g = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    ck_assert_int_eq(pf_grid_create(512, 512, NULL, &g), PF_OK);
    pf_jps *j = make_jps(g);
    ck_assert_uint_gt(pf_jps_memory(j), 2 * 512 * 512 / 8);
    pf_result r = run_jps(ctx, j, g, (pf_point){0, 0}, (pf_point){511, 511});
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_uint_eq(r.path_len, 512);
    ck_assert_uint_le(r.expanded, 1);
    r = run_jps(ctx, j, g, (pf_point){3, 500}, (pf_point){400, 7});
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_double_eq_tol(r.cost, 493.0 + 397.0 * (PF_SQRT2 - 1.0), 1e-6);
    ck_assert_uint_le(r.expanded, 1);
    check_path(g, &r, (pf_point){3, 500}, (pf_point){400, 7});
    pf_search_ctx_destroy(ctx);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
}
END_TEST

/* A query whose canonical path (diagonal first, then straight) is free is
 * answered from it: one expansion, the octile cost. Blocking one cell of that
 * path sends the query through the search, which still finds the octile
 * cost around it (straight first, then diagonal). */
START_TEST(jps_direct_path_only_when_free) {
    const char *open_rows[] = {"......", "......", "......", "......"};
    const char *blocked_rows[] = {"......", "......", "...#..", "......"};
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point s = {0, 0}, t = {5, 2};
    for (int b = 0; b <= 1; b++) {
        pf_grid *g = tu_grid_from_ascii(b ? blocked_rows : open_rows, 4, 8);
        pf_jps *j = make_jps(g);
        for (int cc = 0; cc <= 1; cc++) {
            ck_assert_int_eq(pf_grid_set_rules(g, 8, cc == 1), PF_OK);
            ck_assert_int_eq(pf_jps_update(j, g, NULL, 0, NULL), PF_OK);
            pf_result r = run_jps(ctx, j, g, s, t);
            ck_assert_int_eq(r.status, PF_OK);
            ck_assert_int_eq(r.algorithm, PF_ALGO_JPS);
            ck_assert_double_eq_tol(r.cost, 3.0 + 2.0 * PF_SQRT2, 1e-9);
            check_path(g, &r, s, t);
            if (b) {
                ck_assert_uint_gt(r.expanded, 1);
            } else {
                ck_assert_uint_eq(r.expanded, 1);
                ck_assert_uint_eq(r.path_len, 6);
                ck_assert_int_eq(r.path[1].x, 1);
                ck_assert_int_eq(r.path[1].y, 1);
            }
        }
        pf_jps_destroy(j);
        pf_grid_destroy(g);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* The direct path is written while it is tested: in a fresh context it grows
 * the path buffer (300 cells, past the first allocation), and when only its
 * last step is blocked (a diagonal past a corner without corner cutting)
 * the search that follows overwrites the cells already written. */
START_TEST(jps_direct_path_long_or_blocked_at_the_end) {
    pf_grid *g;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point s = {0, 0}, t = {299, 299};
    ck_assert_int_eq(pf_grid_create(300, 300, NULL, &g), PF_OK);
    pf_jps *j = make_jps(g);
    pf_result r = run_jps(ctx, j, g, s, t);
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_uint_eq(r.expanded, 1);
    ck_assert_uint_eq(r.path_len, 300);
    ck_assert_double_eq_tol(r.cost, 299.0 * PF_SQRT2, 1e-9);
    check_path(g, &r, s, t);
    pf_jps_destroy(j);
    pf_grid_set_cost(g, (pf_point){298, 299}, 0);
    j = make_jps(g);
    r = run_jps(ctx, j, g, s, t);
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_uint_gt(r.expanded, 1);
    ck_assert_double_eq_tol(r.cost, tu_reference_cost(g, s, t), 1e-9);
    check_path(g, &r, s, t);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* The fast path of direct answers takes the endpoints' walkability from the
 * direct test (a free canonical path includes both), and start == goal from
 * it too: a blocked start or goal with an otherwise free canonical path,
 * straight or diagonal, is still PF_EBLOCKED, start == goal is still the
 * trivial answer, recording the expanded cells still records the start, and
 * consecutive direct answers (whose paths start at different offsets of the
 * context's buffer) each hold their own path. */
START_TEST(jps_direct_fast_path_checks_endpoints) {
    const char *rows[] = {"......", "......", "......", "......"};
    pf_grid *g = tu_grid_from_ascii(rows, 4, 8);
    pf_jps *j;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    pf_query q;
    pf_grid_set_cost(g, (pf_point){0, 0}, 0);
    pf_grid_set_cost(g, (pf_point){5, 3}, 0);
    j = make_jps(g);
    /* A direct answer first: a fresh context's path buffer sends the first
     * one through search_full, which checks the endpoints itself. */
    ck_assert_uint_eq(run_jps(ctx, j, g, (pf_point){1, 1}, (pf_point){4, 2}).expanded, 1);
    /* Blocked start: straight along row 0, diagonal, diagonal then straight. */
    ck_assert_int_eq(run_jps(ctx, j, g, (pf_point){0, 0}, (pf_point){4, 0}).status, PF_EBLOCKED);
    ck_assert_int_eq(run_jps(ctx, j, g, (pf_point){0, 0}, (pf_point){3, 3}).status, PF_EBLOCKED);
    ck_assert_int_eq(run_jps(ctx, j, g, (pf_point){0, 0}, (pf_point){5, 2}).status, PF_EBLOCKED);
    /* Blocked goal, reached straight or diagonally; blocked start == goal. */
    ck_assert_int_eq(run_jps(ctx, j, g, (pf_point){5, 0}, (pf_point){5, 3}).status, PF_EBLOCKED);
    ck_assert_int_eq(run_jps(ctx, j, g, (pf_point){2, 0}, (pf_point){5, 3}).status, PF_EBLOCKED);
    ck_assert_int_eq(run_jps(ctx, j, g, (pf_point){0, 0}, (pf_point){0, 0}).status, PF_EBLOCKED);
    /* start == goal on an open cell. */
    r = run_jps(ctx, j, g, (pf_point){2, 2}, (pf_point){2, 2});
    ck_assert_int_eq(r.status, PF_OK);
    ck_assert_uint_eq(r.path_len, 1);
    ck_assert_uint_eq(r.generated, 1);
    /* Recorded expansions: the start alone. */
    q = pf_query_make((pf_point){1, 0}, (pf_point){4, 3}, PF_ALGO_JPS);
    q.record_expanded = true;
    ck_assert_int_eq(pf_jps_search(ctx, j, g, &q, &r), PF_OK);
    ck_assert_uint_eq(r.expanded, 1);
    ck_assert_uint_eq(r.expanded_cells_len, 1);
    ck_assert_int_eq(r.expanded_cells[0], 1);
    check_path(g, &r, q.start, q.goal);
    /* Direct answers one after the other, short and long, every direction. */
    for (int k = 0; k < 64; k++) {
        pf_point s = {1 + k % 5, k / 16}, t = {(k * 7) % 6, 3 - (k / 5) % 4};
        if (!pf_grid_is_walkable(g, s) || !pf_grid_is_walkable(g, t)) continue;
        r = run_jps(ctx, j, g, s, t);
        ck_assert_int_eq(r.status, PF_OK);
        check_path(g, &r, s, t);
        ck_assert_double_eq_tol(r.cost, tu_reference_cost(g, s, t), 1e-9);
    }
    pf_search_ctx_destroy(ctx);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
}
END_TEST

/* Whether the canonical path s -> t (diagonal first, then straight) is free,
 * stepping the grid's move masks: the test's own reference for the direct
 * answer. */
static bool canonical_free(const pf_grid *g, pf_point s, pf_point t) {
    pf_point p = s;
    while (p.x != t.x || p.y != t.y) {
        int32_t dx = t.x - p.x, dy = t.y - p.y;
        int32_t adx = dx < 0 ? -dx : dx, ady = dy < 0 ? -dy : dy;
        pf_point n = p;
        if (adx && ady) {
            n.x += dx > 0 ? 1 : -1;
            n.y += dy > 0 ? 1 : -1;
        } else if (adx) {
            n.x += dx > 0 ? 1 : -1;
        } else {
            n.y += dy > 0 ? 1 : -1;
        }
        if (!pf_grid_can_step(g, p, n)) return false;
        p = n;
    }
    return true;
}

/* A query is answered directly (one expansion) exactly when its canonical
 * path is free, on maps whose rows or columns span more than one 64-bit
 * word, in every direction, under both corner rules, after pf_jps_update
 * has followed cell changes, and under a rule the jump data was not built
 * for (before pf_jps_update). */
START_TEST(jps_direct_answer_iff_canonical_path_free) {
    uint64_t st = tu_seed("jps_direct_answer_iff_canonical_path_free", 0x5eed0d1e);
    const int32_t dims[][2] = {{9, 7}, {150, 11}, {11, 150}, {70, 70}};
    pf_search_ctx *ctx = pf_search_ctx_create();
    for (size_t d = 0; d < sizeof(dims) / sizeof(dims[0]); d++) {
        for (int cc = 0; cc <= 1; cc++) {
            int32_t w = dims[d][0], h = dims[d][1];
            pf_grid *g;
            pf_jps *j;
            ck_assert_int_eq(pf_grid_create(w, h, NULL, &g), PF_OK);
            ck_assert_int_eq(pf_grid_set_rules(g, 8, cc == 1), PF_OK);
            for (int32_t k = 0; k < w * h / 40; k++)
                pf_grid_set_cost(g,
                                 (pf_point){(int32_t)tu_below(&st, (uint32_t)w),
                                            (int32_t)tu_below(&st, (uint32_t)h)},
                                 0);
            j = make_jps(g);
            for (int phase = 0; phase < 3; phase++) {
                if (phase == 1) {
                    /* Change cells, then bring j in step. */
                    pf_point ch[8];
                    for (int k = 0; k < 8; k++) {
                        ch[k] = (pf_point){(int32_t)tu_below(&st, (uint32_t)w),
                                           (int32_t)tu_below(&st, (uint32_t)h)};
                        pf_grid_set_cost(g, ch[k], pf_grid_is_walkable(g, ch[k]) ? 0 : 1);
                    }
                    ck_assert_int_eq(pf_jps_update(j, g, ch, 8, NULL), PF_OK);
                } else if (phase == 2) {
                    /* The other rule, j not updated: its step bits are stale. */
                    ck_assert_int_eq(pf_grid_set_rules(g, 8, cc == 0), PF_OK);
                }
                for (int k = 0; k < 300; k++) {
                    pf_point s, t;
                    pf_result r;
                    if (!tu_random_walkable(&st, g, &s)) break;
                    tu_random_walkable(&st, g, &t);
                    if (s.x == t.x && s.y == t.y) continue;
                    r = run_jps(ctx, j, g, s, t);
                    if (canonical_free(g, s, t)) {
                        ck_assert_int_eq(r.status, PF_OK);
                        ck_assert_uint_eq(r.expanded, 1);
                        check_path(g, &r, s, t);
                        ck_assert_double_eq_tol(r.cost, pf_heuristic_eval(PF_H_OCTILE, s, t), 1e-9);
                    } else {
                        ck_assert_msg(r.expanded != 1 || r.status != PF_OK,
                                      "direct answer over a blocked path (%d,%d)->(%d,%d)", s.x,
                                      s.y, t.x, t.y);
                        if (r.status == PF_OK) check_path(g, &r, s, t);
                    }
                }
            }
            pf_jps_destroy(j);
            pf_grid_destroy(g);
        }
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Whether j's jump tables equal ref entry for entry; reports the first
 * difference. */
static void assert_tables_equal(const pf_jps *j, const uint16_t *ref, const pf_grid *g,
                                const char *what, int m) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    ck_assert_ptr_nonnull(j->jt);
    ck_assert_ptr_nonnull(ref);
    /* One check a mismatch, not a ck_assert a cell: each ck_assert marks
     * its point down a pipe to the runner, and 500,000 of them made this
     * take longer than a test's timeout on a loaded machine. */
    for (int32_t i = 0; i < w * h * 8; i++)
        if (j->jt[i] != ref[i])
            ck_assert_msg(0, "map %d (%s, cc %d): cell (%d,%d) dir %d: table %#x, reference %#x", m,
                          what, pf_grid_corner_cutting(g), (i / 8) % w, (i / 8) / w, i % 8,
                          j->jt[i], ref[i]);
}

/* The jump tables (JPS+) built with the bit grids equal the cell-by-cell
 * reference (tests/jpsref.c, from the definition alone) on random maps
 * under both rules; after random cell changes pf_jps_update's local repair
 * gives the tables of a fresh build and of the reference; a copy
 * (pf_jps_clone) updated the same way does too, and the original is
 * untouched; a rule change followed by pf_jps_update rebuilds them. */
START_TEST(jps_tables_match_reference_after_updates) {
    uint64_t st = tu_seed("jps_tables_match_reference_after_updates", 0x5eed0371);
    for (int m = 0; m < 300; m++) {
        tu_map_opts o = {1, (m % 10 == 0) ? 90 : 30, 0.45, false, false, 8, m % 2};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        pf_jps *j = make_jps(g), *copy;
        uint16_t *ref = ref_jump_tables(g), *before;
        assert_tables_equal(j, ref, g, "build", m);
        free(ref);
        before = malloc((size_t)w * h * 8 * sizeof(*before));
        ck_assert_ptr_nonnull(before);
        for (int round = 0; round < 3; round++) {
            pf_point changed[16];
            size_t n = 1 + tu_below(&st, round == 2 ? 16 : 4);
            pf_jps *fresh;
            memcpy(before, j->jt, (size_t)w * h * 8 * sizeof(*before));
            copy = pf_jps_clone(j);
            ck_assert_ptr_nonnull(copy);
            for (size_t i = 0; i < n; i++) {
                changed[i] = (pf_point){(int32_t)tu_below(&st, (uint32_t)w),
                                        (int32_t)tu_below(&st, (uint32_t)h)};
                pf_grid_set_cost(g, changed[i], pf_grid_is_walkable(g, changed[i]) ? 0 : 1);
            }
            ck_assert_int_eq(pf_jps_update(copy, g, changed, n, NULL), PF_OK);
            /* The copy changed, j did not. */
            ck_assert(memcmp(before, j->jt, (size_t)w * h * 8 * sizeof(*before)) == 0);
            ck_assert_int_eq(pf_jps_update(j, g, changed, n, NULL), PF_OK);
            fresh = make_jps(g);
            assert_tables_equal(j, fresh->jt, g, "update", m);
            assert_tables_equal(copy, fresh->jt, g, "clone + update", m);
            ref = ref_jump_tables(g);
            assert_tables_equal(j, ref, g, "reference after update", m);
            free(ref);
            pf_jps_destroy(fresh);
            pf_jps_destroy(copy);
        }
        ck_assert_int_eq(pf_grid_set_rules(g, 8, m % 2 == 0), PF_OK);
        ck_assert_int_eq(pf_jps_update(j, g, NULL, 0, NULL), PF_OK);
        ref = ref_jump_tables(g);
        assert_tables_equal(j, ref, g, "rule change", m);
        free(ref);
        free(before);
        pf_jps_destroy(j);
        pf_grid_destroy(g);
    }
}
END_TEST

/* A repair is local: on a 256x256 open map with a few walls, blocking one
 * cell changes the tables of a handful of lines, and the update gives a
 * fresh build's tables. The budget: tables only within table_bytes, none
 * at 0 (the search then uses the bits and stays optimal), stats say so. */
START_TEST(jps_tables_budget_and_local_repair) {
    pf_grid *g;
    pf_jps *j, *none, *fresh;
    pf_jps_params p0 = {0, 0}, small = {256 * 256 * 16 - 1, 0};
    pf_jps_stats stats;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point c = {128, 100};
    size_t diff = 0;
    uint16_t *before;
    ck_assert_int_eq(pf_grid_create(256, 256, NULL, &g), PF_OK);
    for (int32_t k = 0; k < 200; k++)
        pf_grid_set_cost(g, (pf_point){(k * 37) % 256, (k * 91) % 256}, 0);
    j = make_jps(g);
    pf_jps_get_stats(j, g, &stats);
    ck_assert_uint_eq(stats.table_bytes, 256 * 256 * 16);
    ck_assert_uint_ge(stats.memory_bytes, stats.table_bytes);
    ck_assert_int_eq(pf_jps_create(g, &p0, NULL, &none), PF_OK);
    pf_jps_get_stats(none, g, &stats);
    ck_assert_uint_eq(stats.table_bytes, 0);
    ck_assert(!stats.tables_pay);
    ck_assert_int_ne(stats.layout, PF_JPS_LAYOUT_TABLES);
    pf_jps_destroy(none);
    ck_assert_int_eq(pf_jps_create(g, &small, NULL, &none), PF_OK);
    pf_jps_set_layout(none, PF_JPS_LAYOUT_TABLES);
    pf_jps_get_stats(none, g, &stats);
    ck_assert_uint_eq(stats.table_bytes, 0);
    ck_assert_int_eq(stats.layout, PF_JPS_LAYOUT_BITS);
    {
        pf_point a = {3, 1}, b = {250, 201};
        pf_result r;
        ck_assert(pf_grid_is_walkable(g, a) && pf_grid_is_walkable(g, b));
        r = run_jps(ctx, none, g, a, b);
        ck_assert_int_eq(r.status, PF_OK);
        ck_assert_double_eq_tol(r.cost, tu_reference_cost(g, a, b), 1e-9);
    }
    pf_jps_destroy(none);
    before = malloc(256 * 256 * 8 * sizeof(*before));
    ck_assert_ptr_nonnull(before);
    memcpy(before, j->jt, 256 * 256 * 8 * sizeof(*before));
    pf_grid_set_cost(g, c, 0);
    ck_assert_int_eq(pf_jps_update(j, g, &c, 1, NULL), PF_OK);
    fresh = make_jps(g);
    assert_tables_equal(j, fresh->jt, g, "local repair", 0);
    for (size_t i = 0; i < 256 * 256 * 8; i++) {
        int32_t x = (int32_t)(i / 8) % 256, y = (int32_t)(i / 8) / 256;
        if (before[i] == j->jt[i]) continue;
        diff++;
        /* Straight entries only change on the three rows (E, W) and three
         * columns (S, N) through the change; diagonal ones where a diagonal
         * crosses those lines. */
        if (i % 8 < 2)
            ck_assert_msg(abs(y - c.y) <= 1, "E/W entry of (%d,%d) changed", x, y);
        else if (i % 8 < 4)
            ck_assert_msg(abs(x - c.x) <= 1, "S/N entry of (%d,%d) changed", x, y);
    }
    ck_assert_uint_gt(diff, 0);
    ck_assert_uint_lt(diff, 256 * 256 * 8 / 50);
    free(before);
    pf_jps_destroy(fresh);
    pf_jps_destroy(j);
    pf_grid_destroy(g);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* A sample of every shared scenario file matches its listed optimum in
 * every layout. The full sweep is `make bench`. */
START_TEST(jps_movingai_scenarios_sampled) {
    const char *dir;
    TU_NEED_BENCH_DIR(dir);
    char **list = tu_list_scen(dir);
    pf_search_ctx *ctx = pf_search_ctx_create();
    int files = 0;
    ck_assert_ptr_nonnull(list);
    for (char **f = list; *f; f++) {
        pf_scen sc;
        pf_grid *g = tu_load_scen(dir, *f, &sc);
        pf_jps *j = make_jps(g);
        size_t step = sc.count / 60 + 1;
        for (size_t i = 0; i < sc.count; i += step) {
            const pf_scen_entry *e = &sc.entries[i];
            double tol = fmax(1e-3, 1e-5 * e->optimal);
            for (int mode = 0; mode < (int)NVARIANTS; mode++) {
                pf_jps_set_layout(j, variants[mode].layout);
                pf_jps_set_direct(j, variants[mode].direct);
                pf_result r = run_jps(ctx, j, g, e->start, e->goal);
                ck_assert_int_eq(r.status, PF_OK);
                ck_assert_int_eq(r.algorithm, PF_ALGO_JPS);
                ck_assert_msg(fabs(r.cost - e->optimal) <= tol, "%s line %zu mode %d: %f vs %f", *f,
                              i + 2, mode, r.cost, e->optimal);
                check_path(g, &r, e->start, e->goal);
            }
        }
        files++;
        pf_jps_destroy(j);
        pf_scen_free(&sc);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(files, 0);
    tu_free_list(list);
    pf_search_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(jps) {
    Suite *s = suite_create("jps");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, jps_textbook_room_pillar);
    tcase_add_test(tc, jps_corner_rules_differ);
    tcase_add_test(tc, jps_start_equals_goal_and_unreachable);
    tcase_add_test(tc, jps_rejects_bad_queries);
    tcase_add_test(tc, jps_node_budget_and_stop);
    tcase_add_test(tc, jps_stop_callback_cancels);
    tcase_add_test(tc, jps_long_open_row_8192);
    tcase_add_test(tc, jps_open_map_few_expansions);
    tcase_add_test(tc, jps_direct_path_only_when_free);
    tcase_add_test(tc, jps_direct_path_long_or_blocked_at_the_end);
    tcase_add_test(tc, jps_direct_answer_iff_canonical_path_free);
    tcase_add_test(tc, jps_direct_fast_path_checks_endpoints);
    tcase_add_test(tc, jps_tables_budget_and_local_repair);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("slow");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, jps_property_random_maps_no_corner_cutting);
    tcase_add_test(slow, jps_property_random_maps_corner_cutting);
    tcase_add_test(slow, jps_uniform_cost_other_than_one);
    tcase_add_test(slow, jps_falls_back_to_astar);
    tcase_add_test(slow, jps_update_follows_changes);
    tcase_add_test(slow, jps_tables_match_reference_after_updates);
    tcase_add_test(slow, jps_landmarks_keep_optimal);
    tcase_add_test(slow, jps_deadends_keep_optimal);
    tcase_add_test(tc, jps_planner_landmarks_across_versions);
    tcase_add_test(slow, jps_movingai_scenarios_sampled);
    suite_add_tcase(s, slow);
    return s;
}
