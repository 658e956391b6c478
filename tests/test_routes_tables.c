/* test_routes_tables.c -- server/routes_tables.c over HTTP: distance
 * tables against single path requests, null entries, paths on request,
 * agent sizes, and every limit and field error. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "itest.h"
#include "testutil.h"

START_TEST(routes_tables_table_against_paths) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-table-entries", "12", "--max-table-paths",
                                "6", "--max-table-path-cells", "20"));
    const int src[3][2] = {{0, 0}, {11, 0}, {2, 6}}, tgt[4][2] = {{0, 7}, {6, 1}, {8, 6}, {5, 4}};
    char body[512];
    cJSON *j;
    it_put_map(&s, "u", "application/json", it_gap_map, 201);
    snprintf(
        body, sizeof(body),
        "{\"sources\":[[%d,%d],[%d,%d],[%d,%d]],\"targets\":[[%d,%d],[%d,%d],[%d,%d],[%d,%d]]}",
        src[0][0], src[0][1], src[1][0], src[1][1], src[2][0], src[2][1], tgt[0][0], tgt[0][1],
        tgt[1][0], tgt[1][1], tgt[2][0], tgt[2][1], tgt[3][0], tgt[3][1]);
    it_call_error(&s, "POST", "/v1/maps/u/table", "application/json", body, 422, "blocked",
                  "targets[2]"); /* the room's wall */
    snprintf(body, sizeof(body),
             "{\"sources\":[[0,0],[11,0],[2,6]],\"targets\":[[0,7],[6,1],[5,4]]}");
    j = it_call(&s, "POST", "/v1/maps/u/table", "application/json", body, 200);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            int tb = b < 2 ? b : 3;
            char pb[128], key[32];
            cJSON *p;
            snprintf(pb, sizeof(pb), "{\"start\":[%d,%d],\"goal\":[%d,%d],\"algorithm\":\"astar\"}",
                     src[a][0], src[a][1], tgt[tb][0], tgt[tb][1]);
            p = it_call(&s, "POST", "/v1/maps/u/path", "application/json", pb, 200);
            snprintf(key, sizeof(key), "costs.%d.%d", a, b);
            ck_assert_msg(fabs(it_num(j, key) - it_num(p, "cost")) < 1e-9, "%s: %.6f vs %.6f", key,
                          it_num(j, key), it_num(p, "cost"));
            cJSON_Delete(p);
        }
    ck_assert_str_eq(it_str(j, "stats.direction"), "forward");
    cJSON_Delete(j);
    /* Unreachable entries are null; paths on request. */
    j = it_call(&s, "POST", "/v1/maps/u/table", "application/json",
                "{\"sources\":[[0,0],[10,6]],\"paths\":true}", 200);
    ck_assert(cJSON_IsNull(it_get(j, "costs.0.1")));
    ck_assert(cJSON_IsNull(it_get(j, "paths.0.1")));
    ck_assert_double_eq(it_num(j, "costs.1.1"), 0.0);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "paths.1.1")), 1);
    cJSON_Delete(j);
    it_call_error(&s, "POST", "/v1/maps/u/table", "application/json",
                  "{\"sources\":[[0,0],[1,0],[2,0],[3,0]]}", 413, "limit_exceeded", "sources");
    it_call_error(
        &s, "POST", "/v1/maps/u/table", "application/json",
        "{\"sources\":[[0,0],[1,0],[2,0]],\"targets\":[[0,1],[1,1],[2,1]],\"paths\":true}", 413,
        "limit_exceeded", "paths");
    it_call_error(&s, "POST", "/v1/maps/u/table", "application/json",
                  "{\"sources\":[[0,0]],\"targets\":[[11,4],[0,7]],\"paths\":true}", 413,
                  "limit_exceeded", "paths"); /* the paths pass 30 cells */
    it_call_error(&s, "POST", "/v1/maps/u/table", "application/json",
                  "{\"sources\":[[0,0]],\"targets\":[[50,0]]}", 422, "off_map", "targets[0]");
    it_call_error(&s, "POST", "/v1/maps/u/table", "application/json", "{\"sources\":[]}", 422,
                  "invalid_value", "sources");
    it_call_error(&s, "POST", "/v1/maps/u/table", "application/json", "{\"targets\":[[0,0]]}", 400,
                  "invalid_request", "sources");
    j = it_call(&s, "POST", "/v1/maps/u/table", "application/json",
                "{\"sources\":[[0,0]],\"targets\":[[0,4]],\"agent_size\":2}", 200);
    ck_assert(cJSON_IsNull(it_get(j, "costs.0.0"))); /* the door is too narrow */
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_tables) {
    Suite *s = suite_create("routes_tables");
    TCase *tc = tcase_create("routes_tables");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_tables_table_against_paths);
    suite_add_tcase(s, tc);
    return s;
}
