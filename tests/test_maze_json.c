/* test_maze_json.c -- map generation requests: every field, defaults,
 * errors naming their field, the map limits, the canonical text. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maze_json.h"
#include "testutil.h"

static pf_status parse(const char *s, pf_generate_request *r, pf_proto_error *e) {
    pf_grid_limits l = pf_grid_default_limits();
    l.max_side = 1000;
    l.max_cells = 250000;
    return pf_generate_request_parse(s, strlen(s), &l, r, e);
}

START_TEST(maze_json_request_fields_and_errors) {
    pf_generate_request r;
    pf_proto_error e;
    char a[200], b[200];
    ck_assert_int_eq(parse("{\"type\":\"maze\",\"width\":41,\"height\":31,\"seed\":12345,"
                           "\"corridor_width\":2,\"walls\":\"edges\",\"loops\":0.25,"
                           "\"connectivity\":4,\"corner_cutting\":true,\"id\":\"level-1\"}",
                           &r, &e),
                     PF_OK);
    ck_assert(r.maze.width == 41 && r.maze.height == 31 && r.maze.seed == 12345);
    ck_assert(r.maze.corridor == 2 && r.maze.walls == PF_MAZE_WALL_EDGES);
    ck_assert(r.maze.loops == 0.25 && r.maze.connectivity == 4 && r.maze.corner_cutting);
    ck_assert(r.has_id && strcmp(r.id, "level-1") == 0);
    pf_generate_canonical(&r, a, sizeof(a));
    ck_assert_int_eq(parse("{\"loops\":0.25,\"seed\":12345,\"type\":\"maze\",\"height\":31,"
                           "\"width\":41,\"corridor_width\":2,\"walls\":\"edges\","
                           "\"connectivity\":4,\"corner_cutting\":true}",
                           &r, &e),
                     PF_OK);
    pf_generate_canonical(&r, b, sizeof(b));
    ck_assert_str_eq(a, b); /* member order and the id do not matter */
    ck_assert_int_eq(parse("{\"type\":\"maze\",\"width\":3,\"height\":3}", &r, &e), PF_OK);
    ck_assert(r.maze.seed == 0 && r.maze.corridor == 1 && r.maze.walls == PF_MAZE_WALL_CELLS);
    ck_assert(r.maze.loops == 0 && r.maze.connectivity == 8 && !r.maze.corner_cutting && !r.has_id);
    pf_generate_canonical(&r, b, sizeof(b));
    ck_assert_str_ne(a, b);
    /* The largest exact seed is taken as it is. */
    ck_assert_int_eq(
        parse("{\"type\":\"maze\",\"width\":3,\"height\":3,\"seed\":9007199254740991}", &r, &e),
        PF_OK);
    ck_assert(r.maze.seed == 9007199254740991ull);

    static const struct {
        const char *body;
        pf_status st;
        const char *field;
    } bad[] = {
        {"{\"width\":9,\"height\":9}", PF_EPARSE, "type"},
        {"{\"type\":\"cave\",\"width\":9,\"height\":9}", PF_EINVAL, "type"},
        {"{\"type\":\"maze\",\"height\":9}", PF_EPARSE, "width"},
        {"{\"type\":\"maze\",\"width\":9}", PF_EPARSE, "height"},
        {"{\"type\":\"maze\",\"width\":0,\"height\":9}", PF_EINVAL, "width"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":1001}", PF_ELIMIT, "height"},
        {"{\"type\":\"maze\",\"width\":600,\"height\":600}", PF_ELIMIT, "width"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"seed\":-1}", PF_EINVAL, "seed"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"seed\":1e300}", PF_EINVAL, "seed"},
        /* 2^53 + 1 reads as 2^53: neither is exact, both refused. */
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"seed\":9007199254740993}", PF_EINVAL,
         "seed"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"seed\":9007199254740992}", PF_EINVAL,
         "seed"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"corridor_width\":65}", PF_EINVAL,
         "corridor_width"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":4,\"corridor_width\":3}", PF_ERANGE, "height"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"walls\":\"thick\"}", PF_EINVAL, "walls"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"loops\":1.5}", PF_EINVAL, "loops"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"connectivity\":6}", PF_EINVAL,
         "connectivity"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"corner_cutting\":1}", PF_EPARSE,
         "corner_cutting"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"id\":\"\"}", PF_EPARSE, "id"},
        {"{\"type\":\"maze\",\"width\":9,\"height\":9,\"size\":3}", PF_EPARSE, "size"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(parse(bad[i].body, &r, &e) == bad[i].st, "%s: status %d (%s)", bad[i].body,
                      e.status, e.message);
        ck_assert_msg(strcmp(e.field, bad[i].field) == 0, "%s: field '%s'", bad[i].body, e.field);
    }
}
END_TEST

TU_SUITE(maze_json) {
    Suite *s = suite_create("maze_json");
    TCase *tc = tcase_create("proto");
    tcase_add_test(tc, maze_json_request_fields_and_errors);
    suite_add_tcase(s, tc);
    return s;
}
