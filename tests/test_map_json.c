/* test_map_json.c -- proto/map_json.c: JSON and Moving AI map bodies. */
#include <check.h>
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
    tcase_add_test(tc, map_json_text_errors);
    suite_add_tcase(s, tc);
    return s;
}
