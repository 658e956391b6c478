/* test_snap.c -- the nearest walkable cell against a brute-force scan of
 * the whole map, from points on, beside and far off the map. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "snap.h"
#include "testutil.h"

START_TEST(snap_textbook) {
    const char *rows[] = {"#####", "###.#", "#####"};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8);
    pf_point out;
    ck_assert_int_eq(pf_snap(g, (pf_point){3, 1}, 0, &out), PF_OK); /* walkable: itself */
    ck_assert(out.x == 3 && out.y == 1);
    ck_assert_int_eq(pf_snap(g, (pf_point){1, 1}, 1, &out), PF_EBLOCKED);
    ck_assert_int_eq(pf_snap(g, (pf_point){1, 1}, 2, &out), PF_OK);
    ck_assert(out.x == 3 && out.y == 1);
    ck_assert_int_eq(pf_snap(g, (pf_point){7, 1}, 3, &out), PF_ERANGE);
    ck_assert_int_eq(pf_snap(g, (pf_point){7, 1}, 4, &out), PF_OK);
    ck_assert(out.x == 3 && out.y == 1);
    ck_assert_int_eq(pf_snap(g, (pf_point){INT32_MIN, INT32_MAX}, PF_SNAP_MAX_RADIUS, &out),
                     PF_ERANGE);
    ck_assert_int_eq(pf_snap(g, (pf_point){0, 0}, -1, &out), PF_EINVAL);
    ck_assert_int_eq(pf_snap(g, (pf_point){0, 0}, PF_SNAP_MAX_RADIUS + 1, &out), PF_EINVAL);
    pf_grid_destroy(g);
}
END_TEST

/* Random maps and points (some off the map): the answer is the brute-force
 * nearest by squared distance within the radius, then lower y, then lower
 * x. */
START_TEST(snap_property_random_maps) {
    uint64_t st = tu_seed("snap_property_random_maps", 0x5a470001);
    long checked = 0;
    for (int m = 0; m < 300; m++) {
        tu_map_opts o = {1, 24, 0.9, false, false, 8, 0};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        for (int k = 0; k < 20; k++) {
            pf_point p = {(int32_t)tu_below(&st, (uint32_t)(w + 12)) - 6,
                          (int32_t)tu_below(&st, (uint32_t)(h + 12)) - 6};
            int32_t r = (int32_t)tu_below(&st, 10);
            pf_point out, want = p;
            int64_t best = -1;
            pf_status s = pf_snap(g, p, r, &out);
            for (int32_t y = 0; y < h; y++)
                for (int32_t x = 0; x < w; x++) {
                    int64_t dx = x - p.x, dy = y - p.y, d2 = dx * dx + dy * dy;
                    if (!pf_grid_is_walkable(g, (pf_point){x, y})) continue;
                    if ((dx < 0 ? -dx : dx) > r || (dy < 0 ? -dy : dy) > r) continue;
                    if (best < 0 || d2 < best) {
                        best = d2;
                        want = (pf_point){x, y};
                    }
                }
            if (best < 0) {
                ck_assert_int_eq(s, pf_grid_in_bounds(g, p) ? PF_EBLOCKED : PF_ERANGE);
                continue;
            }
            ck_assert_int_eq(s, PF_OK);
            ck_assert_msg(out.x == want.x && out.y == want.y,
                          "map %d (%d,%d) r %d: (%d,%d) want (%d,%d)", m, p.x, p.y, r, out.x, out.y,
                          want.x, want.y);
            checked++;
        }
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(checked, 1000);
}
END_TEST

TU_SUITE(snap) {
    Suite *s = suite_create("snap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, snap_textbook);
    tcase_add_test(tc, snap_property_random_maps);
    suite_add_tcase(s, tc);
    return s;
}
