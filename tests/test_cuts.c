/* test_cuts.c -- components and cut vertices (core/cuts.h) against a
 * breadth-first search by the independent reference rule of testutil.c, on
 * random maps of both connectivities, both corner rules and wall edges,
 * and on perfect mazes, where almost every corridor cell is a cut vertex. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuts.h"
#include "testutil.h"

/* n random triples (a, b, c) of walkable cells of g, each answer checked
 * against the reference: connected(a, b) and separates(c, a, b). Returns
 * how many triples were separated, so callers can see the test bites. */
static int check_triples(uint64_t *st, const pf_grid *g, const char *what, int n) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g), sep = 0;
    bool *from_a = malloc((size_t)w * h * sizeof(bool)),
         *cut = malloc((size_t)w * h * sizeof(bool));
    pf_cuts *k = NULL;
    ck_assert(from_a && cut);
    ck_assert_int_eq(pf_cuts_build(g, NULL, &k), PF_OK);
    for (int i = 0; i < n; i++) {
        pf_point a, b, c;
        if (!tu_random_walkable(st, g, &a)) break;
        tu_random_walkable(st, g, &b);
        tu_random_walkable(st, g, &c);
        int32_t ia = a.y * w + a.x, ib = b.y * w + b.x, ic = c.y * w + c.x;
        tu_reference_reach(g, a, -1, from_a);
        ck_assert_msg(pf_cuts_connected(k, ia, ib) == from_a[ib], "%s: connected (%d,%d)-(%d,%d)",
                      what, a.x, a.y, b.x, b.y);
        bool ref = false;
        if (ic != ia && ic != ib && from_a[ib]) {
            tu_reference_reach(g, a, ic, cut);
            ref = !cut[ib];
        }
        ck_assert_msg(pf_cuts_separates(k, ic, ia, ib) == ref,
                      "%s: (%d,%d) separating (%d,%d)-(%d,%d): ref %d", what, c.x, c.y, a.x, a.y,
                      b.x, b.y, ref);
        sep += ref;
    }
    /* Blocked cells and off-map indices are never connected nor separating. */
    ck_assert(!pf_cuts_connected(k, -1, 0));
    ck_assert(!pf_cuts_separates(k, w * h, 0, 0));
    pf_cuts_destroy(k);
    free(from_a);
    free(cut);
    return sep;
}

START_TEST(cuts_match_reference_on_random_maps) {
    uint64_t st = tu_seed("cuts_match_reference_on_random_maps", 0xc075);
    int separated = 0;
    for (int mi = 0; mi < 1500; mi++) {
        /* Up to 55% blocked: many small components and narrow passages. */
        tu_map_opts o = {2, mi % 10 == 0 ? 60 : 20, 0.55, false, mi % 3 == 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        char what[48];
        snprintf(what, sizeof(what), "map %d", mi);
        separated += check_triples(&st, g, what, 20);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(separated, 200);
}
END_TEST

START_TEST(cuts_match_reference_on_mazes) {
    uint64_t st = tu_seed("cuts_match_reference_on_mazes", 0x3a2e);
    int separated = 0;
    for (int mi = 0; mi < 300; mi++) {
        int32_t cw = 1 + (int32_t)tu_below(&st, 20), ch = 1 + (int32_t)tu_below(&st, 20);
        pf_grid *g = tu_perfect_maze(&st, cw, ch, mi % 2 ? 8 : 4, mi % 4 == 3);
        char what[48];
        snprintf(what, sizeof(what), "maze %d (%dx%d)", mi, cw, ch);
        separated += check_triples(&st, g, what, 20);
        pf_grid_destroy(g);
    }
    /* In a tree most cells between two others cut them apart. */
    ck_assert_int_gt(separated, 1000);
}
END_TEST

/* A serpentine corridor of 128 rows of 512 cells, one walkable path of
 * 65,000 cells: the search must not recurse (nor overflow its stack). */
START_TEST(cuts_long_corridor_has_no_recursion) {
    const int32_t w = 512, h = 255;
    pf_grid *g = NULL;
    pf_cuts *k = NULL;
    ck_assert_int_eq(pf_grid_create(w, h, NULL, &g), PF_OK);
    for (int32_t y = 1; y < h; y += 2)
        for (int32_t x = 0; x < w; x++)
            if (x != ((y / 2) % 2 ? 0 : w - 1)) pf_grid_set_cost(g, (pf_point){x, y}, 0);
    ck_assert_int_eq(pf_cuts_build(g, NULL, &k), PF_OK);
    /* Row 2j runs east for even j, west for odd j; row 126 runs west. */
    int32_t first = 0, last = (h - 1) * w + ((h / 2) % 2 ? 0 : w - 1), mid = 126 * w + w / 2;
    ck_assert(pf_cuts_connected(k, first, last));
    ck_assert(pf_cuts_separates(k, mid, first, last));
    ck_assert(!pf_cuts_separates(k, mid, first, mid + 1));
    ck_assert(pf_cuts_separates(k, mid, first, mid - 1));
    ck_assert(!pf_cuts_separates(k, first, first, last));
    ck_assert(!pf_cuts_connected(k, first, w)); /* a blocked cell */
    ck_assert_uint_ge(pf_cuts_memory(k), (size_t)w * h * 13);
    pf_cuts_destroy(k);
    pf_grid_destroy(g);
}
END_TEST

TU_SUITE(cuts) {
    Suite *s = suite_create("cuts");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, cuts_long_corridor_has_no_recursion);
    tcase_add_test(tc, cuts_match_reference_on_mazes);
    tcase_add_test(tc, cuts_match_reference_on_random_maps);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}
