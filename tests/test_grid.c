/* test_grid.c -- the map model and its parsers. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "map_io.h"
#include "testutil.h"

START_TEST(grid_create_checks_limits) {
    pf_grid *g = (pf_grid *)1;
    pf_grid_limits lim = {100, 1000, 4};
    ck_assert_int_eq(pf_grid_create(0, 5, NULL, &g), PF_ERANGE);
    ck_assert_ptr_null(g);
    ck_assert_int_eq(pf_grid_create(101, 1, &lim, &g), PF_ELIMIT);
    ck_assert_int_eq(pf_grid_create(50, 50, &lim, &g), PF_ELIMIT); /* 2500 > 1000 cells */
    ck_assert_int_eq(pf_grid_create(INT32_MAX, INT32_MAX, NULL, &g), PF_ELIMIT);
    ck_assert_int_eq(pf_grid_create(10, 10, &lim, &g), PF_OK);
    ck_assert_int_eq(pf_grid_walkable_count(g), 100);
    pf_grid_destroy(g);
    pf_grid_destroy(NULL);
}
END_TEST

/* The diagonal rule: without corner cutting both orthogonal cells must be
 * walkable; with it, one is enough; never between two obstacles. */
START_TEST(grid_corner_rule_both_modes) {
    const char *rows[] = {"..", "#."};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 8);
    pf_point a = {0, 0}, b = {1, 1};
    ck_assert(!pf_grid_can_step(g, a, b));
    pf_grid_set_rules(g, 8, true);
    ck_assert(pf_grid_can_step(g, a, b));
    ck_assert(pf_grid_can_step(g, b, a)); /* symmetric */
    pf_grid_set_cost(g, (pf_point){1, 0}, 0);
    ck_assert(!pf_grid_can_step(g, a, b)); /* squeezing between two obstacles */
    pf_grid_set_rules(g, 4, false);
    pf_grid_set_cost(g, (pf_point){1, 0}, 1);
    pf_grid_set_cost(g, (pf_point){0, 1}, 1);
    ck_assert(!pf_grid_can_step(g, a, b)); /* no diagonals at all */
    ck_assert(pf_grid_can_step(g, a, (pf_point){1, 0}));
    ck_assert_int_eq(pf_grid_set_rules(g, 6, false), PF_EINVAL);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(grid_walls_block_edges_and_corners) {
    pf_grid *g = NULL;
    ck_assert_int_eq(pf_grid_create(3, 3, NULL, &g), PF_OK);
    pf_point c = {1, 1};
    ck_assert(!pf_grid_has_walls(g));
    ck_assert(pf_grid_is_uniform(g));
    ck_assert_int_eq(pf_grid_set_wall(g, c, PF_DIR_E, true), PF_OK);
    ck_assert(pf_grid_is_wall(g, (pf_point){2, 1}, PF_DIR_W)); /* both sides see it */
    ck_assert(!pf_grid_can_step(g, c, (pf_point){2, 1}));
    ck_assert(!pf_grid_can_step(g, (pf_point){2, 1}, c));
    /* The diagonals whose L routes cross that edge. */
    ck_assert(!pf_grid_can_step(g, c, (pf_point){2, 0}));
    ck_assert(!pf_grid_can_step(g, (pf_point){1, 0}, (pf_point){2, 1}));
    ck_assert(pf_grid_can_step(g, c, (pf_point){0, 0}));
    ck_assert(!pf_grid_is_uniform(g));
    pf_grid_set_rules(g, 8, true); /* one open L route is enough */
    ck_assert(pf_grid_can_step(g, c, (pf_point){2, 0}));
    ck_assert_int_eq(pf_grid_set_wall(g, (pf_point){2, 2}, PF_DIR_E, true), PF_ERANGE);
    ck_assert_int_eq(pf_grid_set_wall(g, c, PF_DIR_SE, true), PF_EINVAL);
    ck_assert_int_eq(pf_grid_set_wall(g, c, PF_DIR_E, false), PF_OK);
    ck_assert(!pf_grid_has_walls(g));
    pf_grid_destroy(g);
}
END_TEST

START_TEST(grid_doors_open_and_close_as_a_unit) {
    pf_grid *g = NULL;
    int32_t idx = -1, idx2;
    ck_assert_int_eq(pf_grid_create(4, 4, NULL, &g), PF_OK);
    pf_grid_set_cost(g, (pf_point){1, 1}, 7);
    pf_point cells[] = {{1, 1}, {1, 2}};
    pf_edge edges[] = {{{2, 2}, PF_DIR_E}};
    ck_assert_int_eq(pf_grid_add_door(g, "gate", cells, 2, edges, 1, false, &idx), PF_OK);
    ck_assert_int_eq(idx, 0);
    ck_assert(!pf_grid_is_walkable(g, cells[0]));
    ck_assert(pf_grid_is_wall(g, edges[0].a, PF_DIR_E));
    ck_assert_int_eq(pf_grid_set_door(g, idx, true), PF_OK);
    ck_assert_int_eq(pf_grid_cost(g, cells[0]), 7); /* cost restored */
    ck_assert_int_eq(pf_grid_cost(g, cells[1]), 1);
    ck_assert(!pf_grid_is_wall(g, edges[0].a, PF_DIR_E));
    ck_assert_int_eq(pf_grid_door_find(g, "gate"), 0);
    ck_assert_int_eq(pf_grid_door_find(g, "nope"), -1);
    ck_assert_int_eq(pf_grid_add_door(g, "gate", cells, 1, NULL, 0, true, &idx2), PF_EINVAL);
    pf_point off[] = {{9, 9}};
    ck_assert_int_eq(pf_grid_add_door(g, "x", off, 1, NULL, 0, true, &idx2), PF_ERANGE);
    ck_assert_int_eq(pf_grid_door_count(g), 1);
    /* A clone is independent. */
    pf_grid *c = pf_grid_clone(g);
    ck_assert_ptr_nonnull(c);
    pf_grid_set_door(c, 0, false);
    ck_assert(pf_grid_is_walkable(g, cells[0]));
    ck_assert(!pf_grid_is_walkable(c, cells[0]));
    pf_grid_destroy(c);
    pf_grid_destroy(g);
}
END_TEST

/* Move masks stay in step with the rule after random edits. */
START_TEST(grid_moves_match_rule_after_edits) {
    uint64_t st = tu_seed("grid_moves_match_rule_after_edits", 0x6717);
    for (int m = 0; m < 200; m++) {
        tu_map_opts o = {1, 12, 0.4, true, true, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        for (int k = 0; k < 30; k++) {
            pf_point p = {(int32_t)tu_below(&st, (uint32_t)w), (int32_t)tu_below(&st, (uint32_t)h)};
            if (tu_below(&st, 2))
                pf_grid_set_cost(g, p, (uint8_t)tu_below(&st, 3));
            else
                pf_grid_set_wall(g, p, (int)tu_below(&st, 4), tu_below(&st, 2));
        }
        /* A one-step reference query agrees with can_step on every pair. */
        for (int32_t y = 0; y < h; y++)
            for (int32_t x = 0; x < w; x++)
                for (int d = 0; d < 8; d++) {
                    pf_point a = {x, y}, b = {x + pf_dir_dx[d], y + pf_dir_dy[d]};
                    if (!pf_grid_in_bounds(g, b) || !pf_grid_is_walkable(g, a) ||
                        !pf_grid_is_walkable(g, b))
                        continue;
                    bool step = pf_grid_can_step(g, a, b);
                    ck_assert(step == pf_grid_can_step(g, b, a));
                    if (step) {
                        double ref = tu_reference_cost(g, a, b);
                        ck_assert(ref >= 0 && ref <= pf_grid_step_cost(g, a, b) + 1e-9);
                    }
                }
        pf_grid_destroy(g);
    }
}
END_TEST

START_TEST(map_io_movingai_parses_and_strips_cr) {
    const char *txt = "type octile\r\nheight 2\r\nwidth 3\r\nmap\r\n.@T\r\nGSW\r\n";
    pf_grid *g = NULL;
    pf_parse_error err;
    ck_assert_int_eq(pf_map_parse_movingai(txt, strlen(txt), NULL, &g, &err), PF_OK);
    ck_assert_int_eq(pf_grid_width(g), 3);
    ck_assert_int_eq(pf_grid_height(g), 2);
    ck_assert(pf_grid_is_walkable(g, (pf_point){0, 0}));
    ck_assert(!pf_grid_is_walkable(g, (pf_point){1, 0}));
    ck_assert(!pf_grid_is_walkable(g, (pf_point){2, 0}));
    ck_assert(pf_grid_is_walkable(g, (pf_point){1, 1}));
    ck_assert(!pf_grid_is_walkable(g, (pf_point){2, 1}));
    ck_assert_int_eq(pf_grid_connectivity(g), 8);
    ck_assert(!pf_grid_corner_cutting(g));
    pf_grid_destroy(g);
}
END_TEST

static void expect_parse_error(const char *txt, pf_status want, int line, const char *needle) {
    pf_grid *g = (pf_grid *)1;
    pf_parse_error err = {0, ""};
    pf_grid_limits lim = {1000, 10000, 8};
    pf_status st = pf_map_parse_movingai(txt, strlen(txt), &lim, &g, &err);
    ck_assert_msg(st == want, "'%s': status %s", txt, pf_status_str(st));
    ck_assert_ptr_null(g);
    ck_assert_int_eq(err.line, line);
    ck_assert_msg(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
}

START_TEST(map_io_movingai_errors_name_the_line) {
    expect_parse_error("type octile\nheight 2\nwidth 2\nmap\n..\n.X\n", PF_EPARSE, 6,
                       "unknown map character 'X' at column 2");
    expect_parse_error("type octile\nheight 2\nwidth 2\nmap\n...\n..\n", PF_EPARSE, 5,
                       "has 3 characters");
    expect_parse_error("type octile\nheight 3\nwidth 2\nmap\n..\n..\n", PF_EPARSE, 6, "2 rows");
    expect_parse_error("type octile\nheight 2\nmap\n", PF_EPARSE, 3, "both");
    expect_parse_error("type octile\nheight 2000\nwidth 2\nmap\n", PF_ELIMIT, 4, "limit");
    expect_parse_error("type octile\nheight 200\nwidth 200\nmap\n", PF_ELIMIT, 4, "limit");
    expect_parse_error("type octile\nheight 99999999999\nwidth 2\nmap\n", PF_EPARSE, 2, "header");
    expect_parse_error("hello\n", PF_EPARSE, 1, "header");
    expect_parse_error("", PF_EPARSE, 0, "end of input");
    expect_parse_error("type octile\nheight 1\nwidth 1\nmap\n.\nextra\n", PF_EPARSE, 6,
                       "after the");
}
END_TEST

START_TEST(map_io_ascii_legend) {
    pf_legend legend;
    pf_grid *g = NULL;
    pf_parse_error err;
    for (int i = 0; i < 256; i++) legend[i] = -1;
    legend['.'] = 1;
    legend['~'] = 5;
    legend['#'] = 0;
    const char *txt = ".~#\n...\n";
    ck_assert_int_eq(pf_map_parse_ascii(txt, strlen(txt), legend, NULL, &g, &err), PF_OK);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){1, 0}), 5);
    ck_assert_int_eq(pf_grid_min_cost(g), 1);
    ck_assert(!pf_grid_is_uniform(g));
    pf_grid_destroy(g);
    const char *bad = "..\n.?\n";
    ck_assert_int_eq(pf_map_parse_ascii(bad, strlen(bad), legend, NULL, &g, &err), PF_EPARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_null(g);
    const char *ragged = "..\n.\n";
    ck_assert_int_eq(pf_map_parse_ascii(ragged, strlen(ragged), legend, NULL, &g, &err), PF_EPARSE);
    ck_assert_int_eq(err.line, 2);
}
END_TEST

START_TEST(map_io_scen_parses_and_reports_errors) {
    const char *txt = "version 1\n0\tmaps/dao/arena.map\t49\t49\t1\t2\t3\t4\t2.82842712\n"
                      "1\tmaps/dao/arena.map\t49\t49\t5\t6\t7\t8\t5.5\n";
    pf_scen sc;
    pf_parse_error err;
    ck_assert_int_eq(pf_scen_parse(txt, strlen(txt), 0, &sc, &err), PF_OK);
    ck_assert_uint_eq(sc.count, 2);
    ck_assert_str_eq(pf_scen_map_basename(sc.map), "arena.map");
    ck_assert_int_eq(sc.entries[1].goal.y, 8);
    ck_assert_double_eq_tol(sc.entries[0].optimal, 2.82842712, 1e-12);
    pf_scen_free(&sc);
    ck_assert_int_eq(pf_scen_parse(txt, strlen(txt), 1, &sc, &err), PF_ELIMIT);
    const char *bad = "version 1\n0\ta.map\t49\t49\t1\tx\t3\t4\t2.8\n";
    ck_assert_int_eq(pf_scen_parse(bad, strlen(bad), 0, &sc, &err), PF_EPARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "start y"));
    ck_assert_int_eq(pf_scen_parse("nope\n", 5, 0, &sc, &err), PF_EPARSE);
}
END_TEST

TU_SUITE(grid) {
    Suite *s = suite_create("grid");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, grid_create_checks_limits);
    tcase_add_test(tc, grid_corner_rule_both_modes);
    tcase_add_test(tc, grid_walls_block_edges_and_corners);
    tcase_add_test(tc, grid_doors_open_and_close_as_a_unit);
    tcase_add_test(tc, grid_moves_match_rule_after_edits);
    tcase_add_test(tc, map_io_movingai_parses_and_strips_cr);
    tcase_add_test(tc, map_io_movingai_errors_name_the_line);
    tcase_add_test(tc, map_io_ascii_legend);
    tcase_add_test(tc, map_io_scen_parses_and_reports_errors);
    suite_add_tcase(s, tc);
    return s;
}
