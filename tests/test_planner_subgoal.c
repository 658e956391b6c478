/* test_planner_subgoal.c -- the planner's subgoal hierarchy
 * (core/planner_subgoal.c): `subgoal` and `auto` optimal against the
 * tests' reference Dijkstra on random mazes with corridors of 1-4 cells
 * and random maps, after PATCHes (pf_planner_apply) too; the work bound
 * deciding the same way on every build; refusals where there is none. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maze.h"
#include "planner.h"
#include "planner_internal.h"
#include "testutil.h"

/* A maze of corridors cw cells wide on a side x side grid (at least 64 a
 * side: the planner builds subgoal hierarchies on maps of 64x64 cells or
 * more), loops sometimes. */
static pf_grid *random_maze(uint64_t *rng, int32_t side, int32_t cw) {
    pf_maze_params mp = pf_maze_params_make(side, side, tu_below(rng, 1u << 30), cw);
    pf_grid *g = NULL;
    mp.loops = tu_below(rng, 2) ? 0.1 : 0.0;
    ck_assert_int_eq(pf_maze_generate(&mp, NULL, NULL, &g), PF_OK);
    return g;
}

/* Rooms of room x room cells (walls one cell thick between them) on a
 * side x side grid, as Moving AI's room maps: each wall between two rooms
 * has a door one or two cells wide (one wall in four has two, one in eight
 * none). Rooms with several doors give the hierarchy its dense core. */
static pf_grid *random_rooms(uint64_t *rng, int32_t side, int32_t room) {
    pf_grid *g = NULL;
    const int32_t step = room + 1;
    ck_assert_int_eq(pf_grid_create(side, side, NULL, &g), PF_OK);
    for (int32_t y = 0; y < side; y++)
        for (int32_t x = 0; x < side; x++)
            if (x % step == room || y % step == room)
                ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){x, y}, 0), PF_OK);
    for (int32_t y0 = 0; y0 < side; y0 += step)
        for (int32_t x0 = 0; x0 < side; x0 += step)
            for (int vertical = 0; vertical < 2; vertical++) {
                /* The wall right of (vertical) or below the room at x0, y0. */
                int32_t wx = vertical ? x0 + room : x0, wy = vertical ? y0 : y0 + room;
                if (wx >= side || wy >= side || tu_below(rng, 8) == 0) continue;
                for (int d = 1 + (tu_below(rng, 4) == 0); d > 0; d--) {
                    int32_t at = (int32_t)tu_below(rng, (uint32_t)room),
                            wide = 1 + (int32_t)tu_below(rng, 2);
                    for (int32_t k = at; k < at + wide && k < room; k++) {
                        pf_point c = vertical ? (pf_point){wx, wy + k} : (pf_point){wx + k, wy};
                        if (c.x < side && c.y < side)
                            ck_assert_int_eq(pf_grid_set_cost(g, c, 1), PF_OK);
                    }
                }
            }
    return g;
}

/* The path is start..goal by steps the tests' own rule allows, and costs
 * what the answer says. */
static const char *path_problem(const pf_grid *g, const pf_result *r, pf_point s, pf_point t) {
    double c = 0;
    if (r->path_len < 1) return "empty path";
    if (r->path[0].x != s.x || r->path[0].y != s.y) return "path does not start at the start";
    if (r->path[r->path_len - 1].x != t.x || r->path[r->path_len - 1].y != t.y)
        return "path does not end at the goal";
    for (size_t i = 1; i < r->path_len; i++) {
        int dx = r->path[i].x - r->path[i - 1].x, dy = r->path[i].y - r->path[i - 1].y;
        if (dx < -1 || dx > 1 || dy < -1 || dy > 1 || (!dx && !dy)) return "not a step";
        if (!tu_reference_can_step(g, r->path[i - 1], dx, dy)) return "a step the rule forbids";
        c += pf_grid_cost(g, r->path[i]) * (dx && dy ? sqrt(2.0) : 1.0);
    }
    if (fabs(c - r->cost) > 1e-6 * fmax(1.0, c)) return "path cost differs from the answer";
    return NULL;
}

/* n random queries on p by algo against the reference; mismatches. *ran
 * counts the answers `subgoal` gave. */
static int check_queries(pf_search_ctx *ctx, const pf_planner *p, pf_algorithm algo, uint64_t *rng,
                         int n, int *ran) {
    const pf_grid *g = pf_planner_grid(p);
    int bad = 0;
    for (int k = 0; k < n; k++) {
        pf_point a, b;
        pf_result r;
        pf_query q;
        pf_status st;
        double ref;
        const char *why = NULL;
        if (!tu_random_walkable(rng, g, &a) || !tu_random_walkable(rng, g, &b)) break;
        ref = tu_reference_cost(g, a, b);
        q = pf_query_make(a, b, algo);
        st = pf_planner_search(ctx, p, &q, &r);
        if (ref < 0)
            why = st == PF_NO_PATH ? NULL : "answered where the reference has no path";
        else if (st != PF_OK)
            why = "no answer where the reference has one";
        else if (algo == PF_ALGO_SUBGOAL && r.algorithm != PF_ALGO_SUBGOAL)
            why = "subgoal asked, another algorithm answered";
        else if (fabs(r.cost - ref) > 1e-6 * fmax(1.0, ref) && r.algorithm != PF_ALGO_HPA)
            why = "cost differs from the reference";
        else
            why = path_problem(g, &r, a, b);
        if (st == PF_OK && r.algorithm == PF_ALGO_SUBGOAL) (*ran)++;
        if (why && bad++ < 5)
            fprintf(stderr, "%s (%d,%d)->(%d,%d) on %dx%d: %s (%s: %.6f, reference %.6f)\n",
                    pf_algorithm_name(algo), a.x, a.y, b.x, b.y, pf_grid_width(g),
                    pf_grid_height(g), why, pf_algorithm_name(r.algorithm), r.cost, ref);
    }
    return bad;
}

/* Planners without auto's measurement (auto_samples -1) keep the
 * hierarchy wherever the bound lets it be built, whatever the timings. */
static pf_planner_opts opts_with(int64_t work_per_cell) {
    pf_planner_opts po;
    memset(&po, 0, sizeof(po));
    po.build_hpa = true;
    po.auto_samples = -1;
    po.subgoal_work_per_cell = work_per_cell;
    return po;
}

/* p's auto model set to send every bin to subgoal, as a measurement that
 * found it the fastest everywhere would. */
static void auto_all_subgoal(pf_planner *p) {
    pf__auto_model *m = &p->autom;
    m->calibrated = true;
    m->exact = PF_ALGO_JPS;
    m->exact_faster = true;
    m->all_exact = false;
    m->cs = 16;
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) {
        m->pick[b] = PF_ALGO_SUBGOAL;
        m->settled[b] = true;
    }
}

/* 60 mazes (64-96 cells a side, corridors 1-4 wide, some with loops), 20
 * room maps (rooms of 4-9 cells, many doors) and 20 random maps with few
 * obstacles, 40 queries each by subgoal and 40 by
 * auto (measured as an upload measures it, and once more with every bin
 * sent to subgoal): every answer is the reference's optimum by a valid
 * path. Most of them get the hierarchy at a generous bound. */
START_TEST(planner_subgoal_optimal) {
    uint64_t rng = tu_seed("planner_subgoal_optimal", 0x5b60);
    static const tu_map_opts open_opts = {64, 80, 0.08, false, false, 8, 0};
    pf_search_ctx *ctx = pf_search_ctx_create();
    int bad = 0, built = 0, ran = 0, auto_ran = 0;
    for (int m = 0; m < 100; m++) {
        pf_grid *g = m < 60   ? random_maze(&rng, 64 + (int32_t)tu_below(&rng, 33),
                                            1 + (int32_t)tu_below(&rng, 4))
                     : m < 80 ? random_rooms(&rng, 64 + (int32_t)tu_below(&rng, 33),
                                             4 + (int32_t)tu_below(&rng, 6))
                              : tu_random_grid(&rng, &open_opts);
        pf_planner_opts po = opts_with(100000);
        pf_planner *p, *measured;
        ck_assert_int_eq(pf_planner_create(pf_grid_clone(g), &po, &p), PF_OK);
        po.auto_samples = 4;
        ck_assert_int_eq(pf_planner_create(g, &po, &measured), PF_OK);
        bad += check_queries(ctx, measured, PF_ALGO_AUTO, &rng, 40, &auto_ran);
        if (pf_planner_has_subgoal(p)) {
            built++;
            bad += check_queries(ctx, p, PF_ALGO_SUBGOAL, &rng, 40, &ran);
            auto_all_subgoal(p);
            bad += check_queries(ctx, p, PF_ALGO_AUTO, &rng, 40, &auto_ran);
        }
        pf_planner_destroy(measured);
        pf_planner_destroy(p);
    }
    fprintf(stderr,
            "planner_subgoal_optimal: %d of 100 maps with the hierarchy, %d subgoal "
            "answers, %d of auto's by subgoal\n",
            built, ran, auto_ran);
    ck_assert_int_eq(bad, 0);
    ck_assert_int_ge(built, 60);
    ck_assert_int_ge(ran, 60 * 40);
    ck_assert_int_ge(auto_ran, 20 * 40); /* jps's direct answers take the rest */
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* PATCHed versions: 30 mazes and 10 room maps, each changed five times in
 * a row (1-6 cells blocked or opened, a PATCH's pf_planner_apply): the
 * new version keeps the hierarchy (repaired graph, contracted again in the
 * previous version's order) and answers as the reference does on its own
 * grid; its graph's figures equal a fresh planner's on the same grid. */
START_TEST(planner_subgoal_patches) {
    uint64_t rng = tu_seed("planner_subgoal_patches", 0x9a7c);
    pf_search_ctx *ctx = pf_search_ctx_create();
    int bad = 0, ran = 0, kept = 0;
    for (int m = 0; m < 40; m++) {
        pf_grid *g = m < 30 ? random_maze(&rng, 64 + (int32_t)tu_below(&rng, 17),
                                          2 + (int32_t)tu_below(&rng, 3))
                            : random_rooms(&rng, 64 + (int32_t)tu_below(&rng, 17),
                                           4 + (int32_t)tu_below(&rng, 6));
        pf_planner_opts po = opts_with(100000);
        pf_planner *p;
        ck_assert_int_eq(pf_planner_create(g, &po, &p), PF_OK);
        ck_assert_msg(pf_planner_has_subgoal(p), "map %d has no subgoal hierarchy", m);
        for (int round = 0; round < 5; round++) {
            pf_cell_change ch[6];
            int n = 1 + (int)tu_below(&rng, 6);
            pf_planner *q, *fresh;
            pf_planner_subgoal_info a, b;
            const pf_grid *pg = pf_planner_grid(p);
            for (int k = 0; k < n; k++) {
                ch[k].p.x = (int32_t)tu_below(&rng, (uint32_t)pf_grid_width(pg));
                ch[k].p.y = (int32_t)tu_below(&rng, (uint32_t)pf_grid_height(pg));
                ch[k].cost = pf_grid_cost(pg, ch[k].p) ? 0 : 1;
            }
            ck_assert_int_eq(pf_planner_apply(p, ch, (size_t)n, NULL, 0, NULL, &q, NULL, NULL),
                             PF_OK);
            kept += pf_planner_has_subgoal(q);
            bad += check_queries(ctx, q, PF_ALGO_SUBGOAL, &rng, 20, &ran);
            ck_assert_int_eq(pf_planner_create(pf_grid_clone(pf_planner_grid(q)), &po, &fresh),
                             PF_OK);
            pf_planner_subgoal_stats(q, &a);
            pf_planner_subgoal_stats(fresh, &b);
            ck_assert_int_eq(a.built, b.built);
            ck_assert_int_eq(a.subgoals, b.subgoals);
            ck_assert_int_eq(a.edges, b.edges);
            pf_planner_destroy(fresh);
            pf_planner_destroy(p);
            p = q;
        }
        pf_planner_destroy(p);
    }
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(kept, 40 * 5);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* The bound: the same map takes the same work on every build; a bound
 * below it stops the contraction and leaves a core, answers as exact; one
 * at it contracts all; 0 never builds (subgoal refused, auto never picks
 * it, nothing held);
 * maps under 64x64 cells never get one. A version whose upload had none
 * gets none from a PATCH. Memory counts it. auto's measurement keeps it
 * only where a bin picks it. */
START_TEST(planner_subgoal_work_bound) {
    uint64_t rng = tu_seed("planner_subgoal_work_bound", 0x11d3);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_grid *g = random_maze(&rng, 96, 2);
    const int64_t cells = 96 * 96;
    pf_planner_opts po = opts_with(100000);
    pf_planner *p, *p2, *low, *none, *patched;
    pf_planner_subgoal_info a, b, c;
    pf_result r;
    pf_query q;
    pf_point s, t;
    int ran = 0;
    ck_assert_int_eq(pf_planner_create(pf_grid_clone(g), &po, &p), PF_OK);
    ck_assert_int_eq(pf_planner_create(pf_grid_clone(g), &po, &p2), PF_OK);
    pf_planner_subgoal_stats(p, &a);
    pf_planner_subgoal_stats(p2, &b);
    ck_assert(a.built && b.built);
    ck_assert_uint_gt(a.work, 0);
    ck_assert_uint_eq(a.work, b.work);
    ck_assert_int_eq(a.shortcuts, b.shortcuts);
    ck_assert_uint_gt(a.memory_bytes, 0);
    ck_assert_int_eq(pf_subgoal_ch_core(p->sgh), 0);
    /* Just under the work it took, per cell: built, with a core, exact. */
    po = opts_with((int64_t)(a.work / (uint64_t)cells) - 1);
    ck_assert_int_eq(pf_planner_create(pf_grid_clone(g), &po, &low), PF_OK);
    pf_planner_subgoal_stats(low, &c);
    ck_assert(c.built);
    ck_assert_int_gt(pf_subgoal_ch_core(low->sgh), 0);
    ck_assert_int_eq(check_queries(ctx, low, PF_ALGO_SUBGOAL, &rng, 200, &ran), 0);
    ck_assert_int_eq(ran, 200);
    /* ... and at it (rounded up): all contracted. */
    pf_planner_destroy(p2);
    po = opts_with((int64_t)((a.work + (uint64_t)cells - 1) / (uint64_t)cells));
    ck_assert_int_eq(pf_planner_create(pf_grid_clone(g), &po, &p2), PF_OK);
    ck_assert(pf_planner_has_subgoal(p2));
    ck_assert_int_eq(pf_subgoal_ch_core(p2->sgh), 0);
    /* Kept where auto's measurement picks it in some bin, else dropped. */
    auto_all_subgoal(p2);
    for (int k = 1; k < PF_PLANNER_AUTO_BINS; k++) p2->autom.pick[k] = PF_ALGO_JPS;
    pf__planner_subgoal_keep(p2);
    ck_assert(pf_planner_has_subgoal(p2));
    p2->autom.pick[0] = PF_ALGO_HPA;
    pf__planner_subgoal_keep(p2);
    ck_assert(!pf_planner_has_subgoal(p2));
    pf_planner_subgoal_stats(p2, &c);
    ck_assert_uint_eq(c.memory_bytes, 0);
    po = opts_with(0);
    ck_assert_int_eq(pf_planner_create(pf_grid_clone(g), &po, &none), PF_OK);
    ck_assert(!pf_planner_has_subgoal(none));
    pf_planner_subgoal_stats(none, &c);
    ck_assert(!c.built);
    ck_assert_uint_eq(c.memory_bytes, 0);
    ck_assert_uint_eq(pf_planner_memory(p) - pf_planner_memory(none), a.memory_bytes);
    /* Without it: subgoal is refused, auto never runs it. */
    ck_assert(tu_random_walkable(&rng, g, &s) && tu_random_walkable(&rng, g, &t));
    q = pf_query_make(s, t, PF_ALGO_SUBGOAL);
    ck_assert_int_eq(pf_planner_search(ctx, none, &q, &r), PF_EUNSUPPORTED);
    ran = 0;
    ck_assert_int_eq(check_queries(ctx, none, PF_ALGO_AUTO, &rng, 100, &ran), 0);
    ck_assert_int_eq(ran, 0);
    /* A PATCH of a version without it does not build it. */
    {
        pf_cell_change ch = {s, 0};
        ck_assert_int_eq(pf_planner_apply(none, &ch, 1, NULL, 0, NULL, &patched, NULL, NULL),
                         PF_OK);
        ck_assert(!pf_planner_has_subgoal(patched));
        pf_planner_destroy(patched);
    }
    /* Under 64x64 cells: never. */
    {
        pf_grid *small = random_maze(&rng, 40, 2);
        pf_planner *sp;
        po = opts_with(100000);
        ck_assert_int_eq(pf_planner_create(small, &po, &sp), PF_OK);
        ck_assert(!pf_planner_has_subgoal(sp));
        pf_planner_destroy(sp);
    }
    pf_planner_destroy(p);
    pf_planner_destroy(p2);
    pf_planner_destroy(low);
    pf_planner_destroy(none);
    pf_grid_destroy(g);
    pf_search_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(planner_subgoal) {
    Suite *s = suite_create("planner_subgoal");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, planner_subgoal_work_bound);
    tcase_add_test(tc, planner_subgoal_optimal);
    tcase_add_test(tc, planner_subgoal_patches);
    suite_add_tcase(s, tc);
    return s;
}
