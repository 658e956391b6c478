/* test_path.c -- path validation and string-pulling smoothing. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "path.h"
#include "search.h"
#include "testutil.h"

START_TEST(path_validate_rejects_bad_paths) {
    const char *rows[] = {"...", ".#.", "..."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8);
    pf_point ok[] = {{0, 0}, {1, 0}, {2, 0}, {2, 1}};
    pf_point jump[] = {{0, 0}, {2, 0}};
    pf_point cut[] = {{0, 0}, {1, 0}, {2, 1}}; /* cuts the corner of (1,1) */
    pf_point blocked[] = {{0, 0}, {1, 1}};
    double c;
    size_t bad;
    ck_assert_int_eq(pf_path_validate(g, ok, 4, &c, NULL), PF_OK);
    ck_assert_double_eq_tol(c, 3.0, 1e-12);
    ck_assert_int_eq(pf_path_validate(g, jump, 2, NULL, &bad), PF_EINVAL);
    ck_assert_uint_eq(bad, 1);
    ck_assert_int_eq(pf_path_validate(g, cut, 3, NULL, &bad), PF_EINVAL);
    ck_assert_uint_eq(bad, 2);
    ck_assert_int_eq(pf_path_validate(g, blocked, 2, NULL, &bad), PF_EINVAL);
    ck_assert_int_eq(pf_path_validate(g, ok, 0, NULL, &bad), PF_EINVAL);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(path_line_of_sight_corners) {
    const char *rows[] = {"....", ".#..", "....", "...."};
    pf_grid *g = tu_grid_from_ascii(rows, 4, 8);
    /* Passing exactly through the corner of the blocked cell (1,1). */
    ck_assert(!pf_path_line_of_sight(g, (pf_point){0, 0}, (pf_point){2, 2}));
    ck_assert(!pf_path_line_of_sight(g, (pf_point){0, 1}, (pf_point){2, 1}));
    /* From (0.5,2.5) to (3.5,0.5) the segment is at y = 1.83 where it enters
     * column 1: inside the blocked cell (1,1). */
    ck_assert(!pf_path_line_of_sight(g, (pf_point){0, 2}, (pf_point){3, 0}));
    ck_assert(pf_path_line_of_sight(g, (pf_point){0, 3}, (pf_point){3, 2}));
    ck_assert(pf_path_line_of_sight(g, (pf_point){2, 0}, (pf_point){3, 3}));
    pf_grid_destroy(g);
}
END_TEST

/* Smoothed paths keep their endpoints, every segment is walkable, and on
 * uniform maps the smoothed length never exceeds the grid path's cost. */
START_TEST(path_smooth_property_random_maps) {
    uint64_t st = tu_seed("path_smooth_property_random_maps", 0x5a00);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point *buf = malloc(64 * 64 * sizeof(*buf));
    for (int m = 0; m < 400; m++) {
        tu_map_opts o = {2, 48, 0.35, false, m % 4 == 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        pf_point s, t;
        if (!tu_random_walkable(&st, g, &s)) {
            pf_grid_destroy(g);
            continue;
        }
        tu_random_walkable(&st, g, &t);
        pf_query q = pf_query_make(s, t, PF_ALGO_ASTAR);
        pf_result r;
        if (pf_search(ctx, g, &q, &r) == PF_OK) {
            size_t n;
            double c;
            ck_assert_int_eq(pf_path_smooth(g, r.path, r.path_len, buf, &n, &c), PF_OK);
            ck_assert_uint_ge(n, 1);
            ck_assert_uint_le(n, r.path_len);
            ck_assert(buf[0].x == s.x && buf[0].y == s.y);
            ck_assert(buf[n - 1].x == t.x && buf[n - 1].y == t.y);
            for (size_t i = 1; i < n; i++)
                ck_assert_msg(pf_path_line_of_sight(g, buf[i - 1], buf[i]), "map %d segment %zu", m,
                              i);
            if (!pf_grid_has_walls(g)) ck_assert(c <= r.cost + 1e-9);
        }
        pf_grid_destroy(g);
    }
    free(buf);
    pf_search_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(path) {
    Suite *s = suite_create("path");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, path_validate_rejects_bad_paths);
    tcase_add_test(tc, path_line_of_sight_corners);
    tcase_add_test(tc, path_smooth_property_random_maps);
    suite_add_tcase(s, tc);
    return s;
}
