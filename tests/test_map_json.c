/* test_map_json.c -- proto/map_json.c: JSON and Moving AI map bodies. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map_json.h"
#include "testutil.h"

static pf_status parse_map(const char *s, pf_grid **g, pf_proto_error *e) {
    return pf_map_json_parse(s, strlen(s), NULL, g, e);
}

START_TEST(map_json_full) {
    pf_grid *g = NULL;
    pf_proto_error e;
    const char doc[] = "{\"width\":4,\"height\":3,\"rows\":[\"..~#\",\"....\",\"#..G\"],"
                       "\"legend\":{\"~\":5},\"connectivity\":4,\"corner_cutting\":true,"
                       "\"walls\":[[0,1,\"E\"],[2,2,\"N\"]],"
                       "\"doors\":{\"gate\":{\"cells\":[[1,0]],\"walls\":[[3,1,\"S\"]],"
                       "\"open\":false}}}";
    ck_assert_int_eq(pf_map_json_parse(doc, sizeof(doc) - 1, NULL, &g, &e), PF_OK);
    ck_assert_int_eq(pf_grid_width(g), 4);
    ck_assert_int_eq(pf_grid_height(g), 3);
    ck_assert_int_eq(pf_grid_connectivity(g), 4);
    ck_assert(pf_grid_corner_cutting(g));
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){2, 0}), 5);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){3, 0}), 0);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){3, 2}), 1);
    ck_assert(pf_grid_is_wall(g, (pf_point){0, 1}, PF_DIR_E));
    ck_assert(pf_grid_is_wall(g, (pf_point){1, 1}, PF_DIR_W));
    ck_assert(pf_grid_is_wall(g, (pf_point){2, 1}, PF_DIR_S));
    ck_assert_int_eq(pf_grid_door_count(g), 1);
    ck_assert(!pf_grid_door_is_open(g, 0));
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){1, 0}), 0); /* closed door */
    pf_grid_destroy(g);
}
END_TEST

START_TEST(map_json_errors_name_the_field) {
    pf_grid *g = NULL;
    pf_proto_error e;
    pf_grid_limits lim = pf_grid_default_limits();
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\",\"...\"]}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "rows[1]");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\",\".x\"]}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "rows[1]");
    ck_assert_int_eq(parse_map("{\"width\":3,\"rows\":[\"..\"]}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "rows[0]");
    ck_assert_int_eq(parse_map("{\"height\":2,\"rows\":[\"..\"]}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "rows");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"legend\":{\"ab\":1}}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "legend.ab");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"legend\":{\"x\":256}}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "legend.x");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"walls\":[[1,0,\"E\"]]}", &g, &e), PF_ERANGE);
    ck_assert_str_eq(e.field, "walls[0]");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"walls\":[[0,0,\"NE\"]]}", &g, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "walls[0]");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"doors\":{\"d\":{\"cells\":[[5,5]]}}}", &g, &e),
                     PF_ERANGE);
    ck_assert_str_eq(e.field, "doors.d.cells[0]");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"doors\":{\"d\":{}}}", &g, &e), PF_EINVAL);
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"doors\":{\"d\":{\"cels\":[]}}}", &g, &e),
                     PF_EPARSE);
    ck_assert_str_eq(e.field, "doors.d.cels");
    ck_assert_int_eq(parse_map("{\"rows\":\"..\"}", &g, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "rows");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"colour\":1}", &g, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "colour");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"connectivity\":6}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "connectivity");
    /* The cell limit is checked before allocating. */
    lim.max_cells = 3;
    ck_assert_int_eq(pf_map_json_parse("{\"rows\":[\"..\",\"..\"]}", 20, &lim, &g, &e), PF_ELIMIT);
    ck_assert_ptr_null(g);
}
END_TEST

/* The export of a grid (what GET .../cells answers), as a string. */
static char *cells_of(const pf_grid *g) {
    pf_jsonw w;
    pf_jsonw_init(&w, 256);
    pf_map_write_cells(&w, "m", 7, g);
    return tu_jsonw_text(&w);
}

/* Everything a search or a later PATCH can see of two grids is the same:
 * rules, costs, move masks, walls, and each door's name, state, cells,
 * edges and open costs. */
static void assert_same_grid(const pf_grid *a, const pf_grid *b) {
    int32_t w = pf_grid_width(a), h = pf_grid_height(a);
    ck_assert_int_eq(pf_grid_width(b), w);
    ck_assert_int_eq(pf_grid_height(b), h);
    ck_assert_int_eq(pf_grid_connectivity(a), pf_grid_connectivity(b));
    ck_assert(pf_grid_corner_cutting(a) == pf_grid_corner_cutting(b));
    ck_assert_int_eq(pf_grid_walkable_count(a), pf_grid_walkable_count(b));
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point p = {x, y};
            ck_assert_int_eq(pf_grid_cost(a, p), pf_grid_cost(b, p));
            ck_assert_int_eq(pf_grid_moves(a, p), pf_grid_moves(b, p));
            for (int d = 0; d < 4; d++)
                ck_assert(pf_grid_is_wall(a, p, d) == pf_grid_is_wall(b, p, d));
        }
    ck_assert_int_eq(pf_grid_door_count(a), pf_grid_door_count(b));
    for (int32_t d = 0; d < pf_grid_door_count(a); d++) {
        size_t na, nb, ea, eb;
        const pf_point *ca = pf_grid_door_cells(a, d, &na), *cb = pf_grid_door_cells(b, d, &nb);
        pf_grid_door_edges(a, d, &ea);
        pf_grid_door_edges(b, d, &eb);
        ck_assert_str_eq(pf_grid_door_name(a, d), pf_grid_door_name(b, d));
        ck_assert(pf_grid_door_is_open(a, d) == pf_grid_door_is_open(b, d));
        ck_assert_uint_eq(na, nb);
        ck_assert_uint_eq(ea, eb);
        for (size_t k = 0; k < na; k++) {
            ck_assert(ca[k].x == cb[k].x && ca[k].y == cb[k].y);
            ck_assert_int_eq(pf_grid_door_open_cost(a, d, k), pf_grid_door_open_cost(b, d, k));
        }
    }
}

/* GET .../cells output uploads back as it is: random grids with costs,
 * walls and doors that overlap, then switched at random (so a cell's cost
 * depends on which door moved last), exported, parsed, exported again. The
 * grids agree on everything and the two exports are the same bytes. */
START_TEST(map_json_cells_export_uploads_back) {
    uint64_t seed = tu_seed("map_json_cells_export_uploads_back", 19), st = seed;
    tu_map_opts o = {1, 12, 0.3, true, true, 0, -1};
    for (int iter = 0; iter < 2000; iter++) {
        pf_grid *g = tu_random_grid(&st, &o), *back = NULL;
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        int ndoors = (int)tu_below(&st, 4);
        pf_proto_error e;
        char *one, *two;
        for (int d = 0; d < ndoors; d++) {
            pf_point cells[4];
            pf_edge edges[3];
            /* A door holds at most w x h cells (pf_grid_add_door's limit). */
            size_t nc = tu_below(&st, w * h < 4 ? (uint32_t)(w * h) + 1 : 5), ne = 0;
            char name[16];
            int32_t index;
            for (size_t k = 0; k < nc; k++)
                cells[k] = (pf_point){(int32_t)tu_below(&st, (uint32_t)w),
                                      (int32_t)tu_below(&st, (uint32_t)h)};
            for (int k = 0; k < 3 && w > 1; k++) {
                pf_point a = {(int32_t)tu_below(&st, (uint32_t)w - 1),
                              (int32_t)tu_below(&st, (uint32_t)h)};
                edges[ne++] = (pf_edge){a, PF_DIR_E};
            }
            if (nc + ne == 0) continue;
            snprintf(name, sizeof(name), "d%d", d);
            ck_assert_int_eq(
                pf_grid_add_door(g, name, cells, nc, edges, ne, tu_below(&st, 2), &index), PF_OK);
        }
        for (int k = 0; k < 4 && pf_grid_door_count(g) > 0; k++)
            pf_grid_set_door(g, (int32_t)tu_below(&st, (uint32_t)pf_grid_door_count(g)),
                             tu_below(&st, 2));
        one = cells_of(g);
        ck_assert_msg(pf_map_json_parse(one, strlen(one), NULL, &back, &e) == PF_OK,
                      "seed %llu iter %d: %s (%s) in %s", (unsigned long long)seed, iter, e.message,
                      e.field, one);
        assert_same_grid(g, back);
        two = cells_of(back);
        ck_assert_str_eq(one, two);
        free(one);
        free(two);
        pf_grid_destroy(back);
        pf_grid_destroy(g);
    }
}
END_TEST

START_TEST(map_json_costs_form_errors) {
    pf_grid *g = NULL;
    pf_proto_error e;
    pf_grid_limits lim = pf_grid_default_limits();
    /* Rows x 2: a door that costs 9 when open, declared shut. */
    ck_assert_int_eq(parse_map("{\"width\":2,\"height\":1,\"costs\":\"0105\",\"id\":\"x\","
                               "\"version\":3,\"doors\":{\"d\":{\"cells\":[[1,0]],"
                               "\"costs\":[9],\"open\":false}}}",
                               &g, &e),
                     PF_OK);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){0, 0}), 1);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){1, 0}), 5); /* as the costs say */
    ck_assert_int_eq(pf_grid_door_open_cost(g, 0, 0), 9);
    pf_grid_set_door(g, 0, false);
    pf_grid_set_door(g, 0, true);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){1, 0}), 9);
    pf_grid_destroy(g);
    /* Door costs in the rows form too. */
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"doors\":{\"d\":{\"cells\":[[1,0]],"
                               "\"costs\":[4]}}}",
                               &g, &e),
                     PF_OK);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){1, 0}), 4);
    pf_grid_destroy(g);
    ck_assert_int_eq(
        parse_map("{\"width\":2,\"height\":1,\"costs\":\"0101\",\"rows\":[\"..\"]}", &g, &e),
        PF_EPARSE);
    ck_assert_str_eq(e.field, "rows");
    ck_assert_int_eq(
        parse_map("{\"width\":2,\"height\":1,\"costs\":\"0101\",\"legend\":{}}", &g, &e),
        PF_EPARSE);
    ck_assert_str_eq(e.field, "legend");
    ck_assert_int_eq(parse_map("{\"width\":2,\"costs\":\"0101\"}", &g, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "height");
    ck_assert_int_eq(parse_map("{\"width\":2,\"height\":1,\"costs\":\"010\"}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "costs");
    ck_assert_int_eq(parse_map("{\"width\":2,\"height\":1,\"costs\":\"01g1\"}", &g, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "costs");
    ck_assert_ptr_nonnull(strstr(e.message, "x 1, y 0"));
    ck_assert_int_eq(parse_map("{\"width\":2,\"height\":1,\"costs\":7}", &g, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "costs");
    ck_assert_int_eq(parse_map("{\"width\":2,\"height\":1,\"costs\":\"0101\",\"id\":5}", &g, &e),
                     PF_EPARSE);
    ck_assert_str_eq(e.field, "id");
    ck_assert_int_eq(
        parse_map("{\"width\":2,\"height\":1,\"costs\":\"0101\",\"version\":-1}", &g, &e),
        PF_EINVAL);
    ck_assert_str_eq(e.field, "version");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"doors\":{\"d\":{\"cells\":[[1,0]],"
                               "\"costs\":[4,5]}}}",
                               &g, &e),
                     PF_EINVAL);
    ck_assert_str_eq(e.field, "doors.d.costs");
    ck_assert_int_eq(parse_map("{\"rows\":[\"..\"],\"doors\":{\"d\":{\"cells\":[[1,0]],"
                               "\"costs\":[0]}}}",
                               &g, &e),
                     PF_EINVAL);
    ck_assert_str_eq(e.field, "doors.d.costs[0]");
    /* The size is checked against the limit before anything is decoded. */
    lim.max_cells = 3;
    ck_assert_int_eq(parse_map("{\"width\":2,\"height\":2,\"costs\":\"01010101\"}", &g, &e), PF_OK);
    pf_grid_destroy(g);
    {
        const char doc[] = "{\"width\":2,\"height\":2,\"costs\":\"01010101\"}";
        ck_assert_int_eq(pf_map_json_parse(doc, sizeof(doc) - 1, &lim, &g, &e), PF_ELIMIT);
        ck_assert_str_eq(e.field, "costs");
        ck_assert_ptr_null(g);
    }
}
END_TEST

START_TEST(map_json_text_errors) {
    pf_grid *g = NULL;
    pf_proto_error e;
    const char bad[] = "type octile\nheight 2\nwidth 2\nmap\n..\n";
    const char ok[] = "type octile\nheight 1\nwidth 2\nmap\n.@\n";
    ck_assert_int_eq(pf_map_text_parse(bad, sizeof(bad) - 1, NULL, &g, &e), PF_EPARSE);
    ck_assert_str_eq(pf_error_code(e.code), "malformed_map");
    ck_assert_int_eq(pf_map_text_parse(ok, sizeof(ok) - 1, NULL, &g, &e), PF_OK);
    ck_assert_int_eq(pf_grid_cost(g, (pf_point){1, 0}), 0);
    pf_grid_destroy(g);
}
END_TEST

TU_SUITE(map_json) {
    Suite *s = suite_create("map_json");
    TCase *tc = tcase_create("map_json");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, map_json_full);
    tcase_add_test(tc, map_json_errors_name_the_field);
    tcase_add_test(tc, map_json_cells_export_uploads_back);
    tcase_add_test(tc, map_json_costs_form_errors);
    tcase_add_test(tc, map_json_text_errors);
    suite_add_tcase(s, tc);
    return s;
}
