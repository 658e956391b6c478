/* test_clearance.c -- clearance values and agent grids against the
 * footprint rule restated in refsearch.c, on random maps with costs, walls
 * and both corner rules; local repairs equal to rebuilds. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clearance.h"
#include "refsearch.h"
#include "testutil.h"

static pf_clearance *build_cl(const pf_grid *g, int32_t cap) {
    pf_clearance *c = NULL;
    ck_assert_int_eq(pf_clearance_build(g, cap, NULL, &c), PF_OK);
    return c;
}

static pf_grid *build_ag(const pf_grid *g, const pf_clearance *c, int32_t n) {
    pf_grid *a = NULL;
    ck_assert_int_eq(pf_agent_grid_build(g, c, n, NULL, &a), PF_OK);
    return a;
}

/* Every clearance value is the largest size that fits by the reference
 * rule, capped. */
static void assert_clearance_ok(const pf_grid *g, const pf_clearance *c, int m) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g), cap = pf_clearance_cap(c);
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point p = {x, y};
            int32_t want = 0;
            while (want < cap && ref_agent_fits(g, p, want + 1)) want++;
            ck_assert_msg(pf_clearance_at(c, p) == want, "map %d (%d,%d): clearance %d, want %d", m,
                          x, y, pf_clearance_at(c, p), want);
            for (int32_t n = 1; n <= cap; n++) ck_assert(pf_clearance_fits(c, p, n) == (n <= want));
        }
}

/* The agent grid of size n allows exactly the reference steps, at the
 * reference costs. */
static void assert_agent_grid_ok(const pf_grid *g, const pf_grid *a, int32_t n, int m) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    ck_assert_int_eq(pf_grid_width(a), w);
    ck_assert_int_eq(pf_grid_connectivity(a), pf_grid_connectivity(g));
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point p = {x, y};
            bool fits = ref_agent_fits(g, p, n);
            ck_assert_msg(pf_grid_is_walkable(a, p) == fits, "map %d n %d (%d,%d): fits", m, n, x,
                          y);
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    pf_point b = {x + dx, y + dy};
                    double c = 0;
                    if (!dx && !dy) continue;
                    bool ok = ref_agent_step(g, n, p, dx, dy, &c);
                    ck_assert_msg(pf_grid_can_step(a, p, b) == ok,
                                  "map %d n %d (%d,%d) step (%d,%d): grid %d, reference %d", m, n,
                                  x, y, dx, dy, pf_grid_can_step(a, p, b), ok);
                    /* The map's rule over the agent grid's own costs and
                     * walls gives the same step (what D* Lite relies on). */
                    ck_assert_msg(tu_reference_can_step(a, p, dx, dy) == ok,
                                  "map %d n %d (%d,%d) step (%d,%d): walls disagree", m, n, x, y,
                                  dx, dy);
                    if (ok) ck_assert(ref_close(pf_grid_step_cost(a, p, b), c));
                }
        }
}

/* A 1-cell gap stops an agent of size 2; the 2-cell gap lets it through. */
START_TEST(clearance_textbook_doors) {
    const char *rows[] = {"..........", "....#.....", "..........", "....#.....",
                          "....#.....", "....#.....", "....#.....", ".........."};
    pf_grid *g = tu_grid_from_ascii(rows, 8, 8);
    pf_clearance *c = build_cl(g, 4);
    ck_assert_int_eq(pf_clearance_at(c, (pf_point){3, 2}), 1); /* (4,1) and (4,3) are walls */
    ck_assert_int_eq(pf_clearance_at(c, (pf_point){0, 0}), 4); /* x 0..3 clear of the walls */
    ck_assert_int_eq(pf_clearance_at(c, (pf_point){5, 0}), 4);
    ck_assert_int_eq(pf_clearance_at(c, (pf_point){4, 4}), 0);
    ck_assert_int_eq(pf_clearance_at(c, (pf_point){9, 7}), 1);
    ck_assert_int_eq(pf_clearance_at(c, (pf_point){-1, 0}), 0);
    ck_assert(!pf_clearance_fits(c, (pf_point){3, 2}, 2));
    pf_grid *a = build_ag(g, c, 2);
    ck_assert(pf_grid_is_walkable(a, (pf_point){2, 0}));
    ck_assert(!pf_grid_is_walkable(a, (pf_point){3, 0})); /* would cover (4,1) */
    ck_assert(!pf_grid_is_walkable(a, (pf_point){9, 0})); /* off the map on the right */
    assert_agent_grid_ok(g, a, 2, -1);
    pf_grid_destroy(a);
    pf_clearance_destroy(c);
    pf_grid_destroy(g);
}
END_TEST

/* A wall edge inside a 2x2 square keeps a size-2 agent out of it. */
START_TEST(clearance_walls_split_squares) {
    pf_grid *g = NULL;
    ck_assert_int_eq(pf_grid_create(4, 4, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_grid_set_wall(g, (pf_point){1, 1}, PF_DIR_S, true), PF_OK);
    pf_clearance *c = build_cl(g, 4);
    /* Its 2x2 square does not reach row 2, its 3x3 square straddles the wall. */
    ck_assert_int_eq(pf_clearance_at(c, (pf_point){0, 0}), 2);
    ck_assert_int_eq(pf_clearance_at(c, (pf_point){1, 1}), 1);
    ck_assert_int_eq(pf_clearance_at(c, (pf_point){2, 2}), 2);
    assert_clearance_ok(g, c, -1);
    pf_clearance_destroy(c);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(clearance_rejects_bad_input) {
    pf_grid *g = NULL, *a = NULL;
    pf_clearance *c = NULL;
    ck_assert_int_eq(pf_grid_create(5, 5, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_clearance_build(g, 0, NULL, &c), PF_EINVAL);
    ck_assert_int_eq(pf_clearance_build(g, PF_AGENT_SIZE_MAX + 1, NULL, &c), PF_EINVAL);
    ck_assert_ptr_null(c);
    c = build_cl(g, 3);
    ck_assert_int_eq(pf_agent_grid_build(g, c, 1, NULL, &a), PF_EINVAL);
    ck_assert_int_eq(pf_agent_grid_build(g, c, 4, NULL, &a), PF_EINVAL);
    ck_assert_ptr_null(a);
    pf_point off = {5, 0};
    pf_clearance *r = NULL;
    ck_assert_int_eq(pf_clearance_repair(c, g, &off, 1, NULL, &r), PF_ERANGE);
    ck_assert_ptr_null(r);
    pf_clearance_destroy(c);
    pf_clearance_destroy(NULL);
    pf_grid_destroy(g);
}
END_TEST

/* Random maps: costs, walls, both connectivities and corner rules. */
START_TEST(clearance_property_random_maps) {
    uint64_t st = tu_seed("clearance_property_random_maps", 0xc1ea0001);
    for (int m = 0; m < 300; m++) {
        tu_map_opts o = {3, 24, 0.35, m % 2 == 0, m % 3 != 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t cap = 1 + (int32_t)tu_below(&st, 6);
        pf_clearance *c = build_cl(g, cap);
        assert_clearance_ok(g, c, m);
        for (int32_t n = 2; n <= cap && n <= 4; n++) {
            pf_grid *a = build_ag(g, c, n);
            assert_agent_grid_ok(g, a, n, m);
            pf_grid_destroy(a);
        }
        pf_clearance_destroy(c);
        pf_grid_destroy(g);
    }
}
END_TEST

/* Changes a few cells (costs, blocks, opens) and wall edges of g; lists the
 * changed cells as pf_planner_apply does (both cells of an edge). */
static size_t random_changes(uint64_t *st, pf_grid *g, pf_point *changed, size_t max) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    size_t n = 0, want = 1 + tu_below(st, (uint32_t)(max / 2));
    while (n + 2 <= max && want-- > 0) {
        pf_point p = {(int32_t)tu_below(st, (uint32_t)w), (int32_t)tu_below(st, (uint32_t)h)};
        if (tu_below(st, 3) == 0) {
            int d = (int)tu_below(st, 4);
            pf_point q = {p.x + pf_dir_dx[d], p.y + pf_dir_dy[d]};
            if (!pf_grid_in_bounds(g, q)) continue;
            pf_grid_set_wall(g, p, d, !pf_grid_is_wall(g, p, d));
            changed[n++] = p;
            changed[n++] = q;
        } else {
            uint8_t c = tu_below(st, 3) == 0 ? 0 : (uint8_t)(1 + tu_below(st, 5));
            pf_grid_set_cost(g, p, c);
            changed[n++] = p;
        }
    }
    return n;
}

/* Repairs over several rounds equal rebuilds, and the changed lists of
 * the agent grids name exactly the anchors that differ. */
START_TEST(clearance_repair_equals_rebuild) {
    uint64_t st = tu_seed("clearance_repair_equals_rebuild", 0xc1ea0002);
    for (int m = 0; m < 200; m++) {
        tu_map_opts o = {4, 30, 0.3, m % 2 == 0, m % 2 == 1, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t cap = 2 + (int32_t)tu_below(&st, 5), n = 2 + (int32_t)tu_below(&st, 3);
        if (n > cap) n = cap;
        pf_clearance *c = build_cl(g, cap);
        pf_grid *a = build_ag(g, c, n);
        for (int round = 0; round < 4; round++) {
            pf_point changed[16];
            pf_grid *g2 = pf_grid_clone(g);
            ck_assert_ptr_nonnull(g2);
            size_t nc = random_changes(&st, g2, changed, 16);
            pf_clearance *c2 = NULL, *fresh = build_cl(g2, cap);
            ck_assert_int_eq(pf_clearance_repair(c, g2, changed, nc, NULL, &c2), PF_OK);
            int32_t w = pf_grid_width(g2), h = pf_grid_height(g2);
            for (int32_t y = 0; y < h; y++)
                for (int32_t x = 0; x < w; x++)
                    ck_assert_msg(pf_clearance_at(c2, (pf_point){x, y}) ==
                                      pf_clearance_at(fresh, (pf_point){x, y}),
                                  "map %d round %d (%d,%d): repaired clearance differs", m, round,
                                  x, y);
            pf_grid *a2 = NULL, *afresh = build_ag(g2, fresh, n);
            pf_point *list = NULL;
            size_t nlist = 0;
            ck_assert_int_eq(
                pf_agent_grid_repair(a, g2, c2, n, changed, nc, NULL, &a2, &list, &nlist), PF_OK);
            size_t ndiff = 0;
            for (int32_t y = 0; y < h; y++)
                for (int32_t x = 0; x < w; x++) {
                    pf_point p = {x, y};
                    ck_assert_int_eq(pf_grid_cost(a2, p), pf_grid_cost(afresh, p));
                    ck_assert_int_eq(pf_grid_moves(a2, p), pf_grid_moves(afresh, p));
                    for (int d = 0; d < 4; d++)
                        ck_assert_int_eq(pf_grid_is_wall(a2, p, d), pf_grid_is_wall(afresh, p, d));
                    bool differs = pf_grid_cost(a, p) != pf_grid_cost(a2, p) ||
                                   pf_grid_moves(a, p) != pf_grid_moves(a2, p);
                    bool listed = false;
                    for (size_t k = 0; k < nlist; k++) listed |= list[k].x == x && list[k].y == y;
                    ck_assert_msg(differs == listed, "map %d (%d,%d): differs %d listed %d", m, x,
                                  y, differs, listed);
                    ndiff += differs;
                }
            ck_assert_uint_eq(ndiff, nlist);
            ck_assert_int_eq(pf_grid_walkable_count(a2), pf_grid_walkable_count(afresh));
            ck_assert_int_eq(pf_grid_min_cost(a2), pf_grid_min_cost(afresh));
            free(list);
            pf_grid_destroy(afresh);
            pf_clearance_destroy(fresh);
            pf_grid_destroy(a);
            pf_clearance_destroy(c);
            pf_grid_destroy(g);
            g = g2;
            c = c2;
            a = a2;
        }
        pf_grid_destroy(a);
        pf_clearance_destroy(c);
        pf_grid_destroy(g);
    }
}
END_TEST

TU_SUITE(clearance) {
    Suite *s = suite_create("clearance");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, clearance_textbook_doors);
    tcase_add_test(tc, clearance_walls_split_squares);
    tcase_add_test(tc, clearance_rejects_bad_input);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("property");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, clearance_property_random_maps);
    tcase_add_test(slow, clearance_repair_equals_rebuild);
    suite_add_tcase(s, slow);
    return s;
}
