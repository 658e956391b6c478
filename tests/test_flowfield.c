/* test_flowfield.c -- flow fields against the reference Dijkstra of
 * refsearch.c: on random maps (costs, walls, both connectivities and corner
 * rules, regions, several goals, agent sizes) the cost of every cell is the
 * optimum to its nearest goal and following the directions from every cell
 * walks a path of exactly that cost to a goal. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flowfield.h"
#include "planner.h"
#include "refsearch.h"
#include "search.h"
#include "testutil.h"

static bool in_box(pf_box b, pf_point p) {
    return p.x >= b.x && p.y >= b.y && p.x < b.x + b.w && p.y < b.y + b.h;
}

/* Every cell of f against the reference distances ref (map-sized, to the
 * goals) on the grid `g` of agent size n: equal costs, NONE exactly where
 * unreachable, GOAL exactly at the goals, and from every cell the walk
 * along the directions stays in the box, obeys the agent's rule and costs
 * what the field says. */
static void check_field(const pf_grid *g, int32_t n, const pf_flowfield *f, const double *ref,
                        const pf_point *goals, size_t ngoals, int m) {
    pf_box b = pf_flowfield_region(f);
    int32_t w = pf_grid_width(g);
    size_t walked = 0;
    for (int32_t y = b.y; y < b.y + b.h; y++)
        for (int32_t x = b.x; x < b.x + b.w; x++) {
            pf_point p = {x, y};
            double want = ref[y * w + x], c = pf_flowfield_cost_at(f, p);
            uint8_t d = pf_flowfield_dir_at(f, p);
            bool goal = false;
            for (size_t k = 0; k < ngoals; k++) goal |= goals[k].x == x && goals[k].y == y;
            ck_assert_msg(ref_close(c, want), "map %d (%d,%d): field %.9f, reference %.9f", m, x, y,
                          c, want);
            ck_assert_msg((d == PF_FLOW_NONE) == isinf(want), "map %d (%d,%d): dir %d", m, x, y, d);
            ck_assert_msg((d == PF_FLOW_GOAL) == goal, "map %d (%d,%d): dir %d, goal %d", m, x, y,
                          d, goal);
            if (d == PF_FLOW_NONE) continue;
            /* Walk to the goal. */
            pf_point q = p;
            double acc = 0;
            size_t steps = 0;
            while (pf_flowfield_dir_at(f, q) != PF_FLOW_GOAL) {
                uint8_t dq = pf_flowfield_dir_at(f, q);
                double sc;
                ck_assert_msg(dq < 8, "map %d: walk from (%d,%d) meets dir %d at (%d,%d)", m, x, y,
                              dq, q.x, q.y);
                ck_assert(ref_agent_step(g, n, q, pf_dir_dx[dq], pf_dir_dy[dq], &sc));
                q.x += pf_dir_dx[dq];
                q.y += pf_dir_dy[dq];
                ck_assert(in_box(b, q));
                acc += sc;
                ck_assert_uint_le(++steps, (size_t)b.w * b.h);
                walked++;
            }
            ck_assert_msg(ref_close(acc, c), "map %d: walk from (%d,%d) costs %.9f, field %.9f", m,
                          x, y, acc, c);
        }
    (void)walked;
}

/* The 5x3 room with a wall: costs to go and the first steps by hand. */
START_TEST(flowfield_textbook_room) {
    const char *rows[] = {".....", ".###.", "....."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 4);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point goal = {0, 1};
    pf_flow_query q = {&goal, 1, false, {0, 0, 0, 0}, NULL, NULL, 0};
    pf_flowfield *f = NULL;
    int32_t bad;
    ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, &bad), PF_OK);
    ck_assert_int_eq(bad, -1);
    ck_assert_int_eq(pf_flowfield_dir_at(f, goal), PF_FLOW_GOAL);
    ck_assert_double_eq(pf_flowfield_cost_at(f, goal), 0.0);
    ck_assert_int_eq(pf_flowfield_dir_at(f, (pf_point){2, 1}), PF_FLOW_NONE);
    ck_assert(isinf(pf_flowfield_cost_at(f, (pf_point){2, 1})));
    uint8_t tie = pf_flowfield_dir_at(f, (pf_point){4, 1}); /* round the top or the bottom */
    ck_assert(tie == PF_DIR_N || tie == PF_DIR_S);
    ck_assert_double_eq_tol(pf_flowfield_cost_at(f, (pf_point){4, 1}), 6.0, 1e-12);
    ck_assert_int_eq(pf_flowfield_dir_at(f, (pf_point){0, 0}), PF_DIR_S);
    ck_assert_int_eq(pf_flowfield_dir_at(f, (pf_point){3, 2}), PF_DIR_W);
    ck_assert_int_eq(pf_flowfield_dir_at(f, (pf_point){9, 9}), PF_FLOW_NONE);
    pf_flow_stats st;
    pf_flowfield_get_stats(f, &st);
    ck_assert_int_eq(st.reachable, 12);
    ck_assert_double_eq_tol(st.max_cost, 6.0, 1e-12);
    ck_assert_uint_eq(st.expanded, 12);
    pf_flowfield_destroy(f);
    pf_flowfield_destroy(NULL);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

static bool stop_now(void *ud) {
    (void)ud;
    return true;
}

START_TEST(flowfield_rejects_bad_input) {
    const char *rows[] = {".....", ".###.", "....."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point goals[3] = {{0, 0}, {2, 1}, {7, 0}};
    pf_flowfield *f = NULL;
    int32_t bad;
    pf_flow_query q = {goals, 0, false, {0, 0, 0, 0}, NULL, NULL, 0};
    ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, &bad), PF_EINVAL);
    q.ngoals = 2;
    ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, &bad), PF_EBLOCKED);
    ck_assert_int_eq(bad, 1);
    goals[1] = goals[2];
    ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, &bad), PF_ERANGE);
    ck_assert_int_eq(bad, 1);
    q.ngoals = 1;
    q.has_region = true;
    q.region = (pf_box){1, 0, 4, 3}; /* the goal (0,0) is outside */
    ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, &bad), PF_ERANGE);
    ck_assert_int_eq(bad, 0);
    q.region = (pf_box){0, 0, 6, 3}; /* wider than the map */
    ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, &bad), PF_ERANGE);
    q.region = (pf_box){0, 0, 0, 3};
    ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, &bad), PF_EINVAL);
    q.region = (pf_box){0, 0, 2, 2};
    q.should_stop = stop_now;
    ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, &bad), PF_ECANCELED);
    ck_assert_ptr_null(f);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

/* Random maps, 1..6 goals, half of them inside a random region, agent
 * sizes 1..3 through the planner's agent grids. */
START_TEST(flowfield_property_random_maps) {
    uint64_t st = tu_seed("flowfield_property_random_maps", 0xf10e0001);
    pf_search_ctx *ctx = pf_search_ctx_create();
    int fields = 0;
    for (int m = 0; m < 400; m++) {
        tu_map_opts o = {2, 36, 0.35, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g0 = tu_random_grid(&st, &o);
        pf_planner_opts po;
        pf_planner *p = NULL;
        memset(&po, 0, sizeof(po));
        ck_assert_int_eq(pf_planner_create(g0, &po, &p), PF_OK);
        const pf_grid *base = pf_planner_grid(p);
        int32_t w = pf_grid_width(base), h = pf_grid_height(base);
        int32_t n = m % 4 == 3 ? 2 + (int32_t)tu_below(&st, 2) : 1;
        const pf_grid *g;
        ck_assert_int_eq(pf_planner_agent_grid(p, n, NULL, &g), PF_OK);
        pf_box box = {0, 0, w, h};
        bool region = tu_below(&st, 2);
        if (region) {
            box.w = 1 + (int32_t)tu_below(&st, (uint32_t)w);
            box.h = 1 + (int32_t)tu_below(&st, (uint32_t)h);
            box.x = (int32_t)tu_below(&st, (uint32_t)(w - box.w + 1));
            box.y = (int32_t)tu_below(&st, (uint32_t)(h - box.h + 1));
        }
        pf_point goals[6];
        size_t ng = 0, want = 1 + tu_below(&st, 6);
        for (int k = 0; k < 400 && ng < want; k++) {
            pf_point c = {box.x + (int32_t)tu_below(&st, (uint32_t)box.w),
                          box.y + (int32_t)tu_below(&st, (uint32_t)box.h)};
            if (pf_grid_is_walkable(g, c)) goals[ng++] = c;
        }
        if (ng > 1 && tu_below(&st, 4) == 0) goals[ng - 1] = goals[0]; /* a duplicate */
        if (ng == 0) {
            pf_planner_destroy(p);
            continue;
        }
        pf_flow_query q = {goals, ng, region, box, NULL, NULL, 0};
        pf_flowfield *f = NULL;
        ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, NULL), PF_OK);
        double *ref = malloc((size_t)w * h * sizeof(*ref));
        ref_dists_box(base, n, goals, ng, true, box.x, box.y, box.w, box.h, ref);
        check_field(base, n, f, ref, goals, ng, m);
        fields++;
        free(ref);
        pf_flowfield_destroy(f);
        pf_planner_destroy(p);
    }
    ck_assert_int_gt(fields, 300);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* A Moving AI map, one goal: the field's cost at every cell equals the
 * reference Dijkstra's from that cell to the goal (tests/refsearch.c, no
 * code of core's searches), infinite exactly where the goal cannot be
 * reached; walks along the field from random cells take steps the tests'
 * own movement rule allows and add up to the field's cost. */
START_TEST(flowfield_movingai_against_reference) {
    const char *dir;
    uint64_t st = tu_seed("flowfield_movingai_against_reference", 0xf10e0002);
    TU_NEED_BENCH_DIR(dir);
    pf_grid *g = tu_load_map(dir, "den520d.map");
    ck_assert_ptr_nonnull(g);
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    pf_search_ctx *ctx = pf_search_ctx_create();
    double *ref = malloc((size_t)w * h * sizeof(*ref));
    size_t reached = 0;
    pf_point goal;
    ck_assert_ptr_nonnull(ref);
    ck_assert(tu_random_walkable(&st, g, &goal));
    pf_flow_query q = {&goal, 1, false, {0, 0, 0, 0}, NULL, NULL, 0};
    pf_flowfield *f = NULL;
    ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, NULL), PF_OK);
    ref_dists(g, 1, &goal, 1, true, ref);
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point p = {x, y};
            double c = pf_flowfield_cost_at(f, p), want = ref[(size_t)y * w + x];
            if (!pf_grid_is_walkable(g, p)) continue;
            if (isinf(want)) {
                ck_assert_msg(isinf(c), "(%d,%d): field %.9f, unreachable", x, y, c);
                continue;
            }
            ck_assert_msg(ref_close(c, want), "(%d,%d): field %.9f reference %.9f", x, y, c, want);
            reached++;
        }
    ck_assert_uint_gt(reached, 1000);
    for (int k = 0; k < 60; k++) {
        pf_point s;
        double acc = 0, c;
        tu_random_walkable(&st, g, &s);
        c = pf_flowfield_cost_at(f, s);
        if (isinf(c)) continue;
        for (pf_point p = s; pf_flowfield_dir_at(f, p) != PF_FLOW_GOAL;) {
            uint8_t d = pf_flowfield_dir_at(f, p);
            double step;
            ck_assert(ref_agent_step(g, 1, p, pf_dir_dx[d], pf_dir_dy[d], &step));
            acc += step;
            p = (pf_point){p.x + pf_dir_dx[d], p.y + pf_dir_dy[d]};
        }
        ck_assert(ref_close(acc, c));
    }
    free(ref);
    pf_flowfield_destroy(f);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

/* Pauses after every poll (each 256 settled cells), counting them. */
static bool pause_always(void *ud) {
    (*(int *)ud)++;
    return true;
}

/* A field built in slices (pf_flowfield_start / resume) is the field built
 * at once, whichever contexts the slices run on: on random maps of up to
 * 90x90 cells, paused at every chance and resumed on three contexts in
 * turn (the engine travels with the build), directions and costs are the
 * same bytes. A cap on the cells settled ends the build with PF_ELIMIT. */
START_TEST(flowfield_slices_equal_one_build) {
    uint64_t st = tu_seed("flowfield_slices_equal_one_build", 0xf10e0003);
    pf_search_ctx *ctx[3] = {pf_search_ctx_create(), pf_search_ctx_create(),
                             pf_search_ctx_create()};
    long pauses = 0;
    for (int m = 0; m < 120; m++) {
        tu_map_opts o = {20, 90, 0.3, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        pf_point goals[3];
        size_t ng = 0;
        for (int k = 0; k < 3; k++)
            if (tu_random_walkable(&st, g, &goals[ng])) ng++;
        if (!ng) {
            pf_grid_destroy(g);
            continue;
        }
        pf_flow_query q = {goals, ng, false, {0, 0, 0, 0}, NULL, NULL, 0};
        pf_flowfield *one = NULL, *sliced = NULL;
        pf_flow_build *b = NULL;
        int polls = 0, slices = 0;
        size_t cells = (size_t)pf_grid_width(g) * (size_t)pf_grid_height(g);
        ck_assert_int_eq(pf_flowfield_build(ctx[0], g, &q, &one, NULL), PF_OK);
        ck_assert_int_eq(pf_flowfield_start(ctx[m % 3], g, &q, &b, NULL), PF_OK);
        while (!sliced) {
            ck_assert_int_eq(
                pf_flowfield_resume(ctx[(m + slices) % 3], b, pause_always, &polls, &sliced),
                PF_OK);
            if (!sliced) ck_assert_uint_gt(pf_flow_build_memory(b), cells * 9);
            slices++;
        }
        pf_flow_build_free(b);
        ck_assert_int_eq(slices, polls + 1); /* every poll paused it */
        ck_assert(memcmp(pf_flowfield_dirs(one), pf_flowfield_dirs(sliced), cells) == 0);
        ck_assert(memcmp(pf_flowfield_costs(one), pf_flowfield_costs(sliced),
                         cells * sizeof(double)) == 0);
        pauses += slices - 1;
        /* Capped below the reachable cells: PF_ELIMIT, nothing built. */
        {
            pf_flow_stats fs;
            pf_flowfield_get_stats(one, &fs);
            if (fs.expanded > 1) {
                pf_flowfield *none = NULL;
                q.max_expanded = fs.expanded - 1;
                ck_assert_int_eq(pf_flowfield_build(ctx[1], g, &q, &none, NULL), PF_ELIMIT);
                ck_assert_ptr_null(none);
                q.max_expanded = fs.expanded;
                ck_assert_int_eq(pf_flowfield_build(ctx[1], g, &q, &none, NULL), PF_OK);
                pf_flowfield_destroy(none);
            }
        }
        pf_flowfield_destroy(one);
        pf_flowfield_destroy(sliced);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(pauses, 500);
    for (int i = 0; i < 3; i++) pf_search_ctx_destroy(ctx[i]);
}
END_TEST

TU_SUITE(flowfield) {
    Suite *s = suite_create("flowfield");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, flowfield_textbook_room);
    tcase_add_test(tc, flowfield_rejects_bad_input);
    tcase_add_test(tc, flowfield_slices_equal_one_build);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("property");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, flowfield_property_random_maps);
    tcase_add_test(slow, flowfield_movingai_against_reference);
    suite_add_tcase(s, slow);
    return s;
}
