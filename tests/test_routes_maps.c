/* test_routes_maps.c -- server/routes_maps.c over HTTP: map list, upload, info, cells, PATCH,
 * DELETE. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "testutil.h"

START_TEST(routes_maps_crud) {
    hc_server s = it_start(NULL);
    hc_resp r;
    cJSON *j;
    char buf[128], *text = it_open_map_text(20, 10);

    r = it_req(&s, "PUT", "/v1/maps/room", "application/json", it_room_json);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(hc_header(&r, "Location", buf, sizeof(buf)), "/v1/maps/room");
    j = it_json(&r);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    ck_assert_int_eq((int)it_num(j, "width"), 10);
    ck_assert_int_eq((int)it_num(j, "height"), 7);
    ck_assert_int_eq((int)it_num(j, "walkable_cells"), 64);
    cJSON_Delete(j);
    hc_free(&r);

    /* Replace: 200, version 2. Moving AI text this time. */
    r = it_req(&s, "PUT", "/v1/maps/room", "text/plain", text);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    ck_assert_int_eq((int)it_num(j, "width"), 20);
    cJSON_Delete(j);
    hc_free(&r);

    r = it_req(&s, "GET", "/v1/maps/room", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    ck_assert_str_eq(it_str(j, "id"), "room");
    cJSON_Delete(j);
    hc_free(&r);

    /* POST: the server names the map by content; the same upload again is
     * the same map, unchanged. */
    r = it_req(&s, "POST", "/v1/maps", "application/json", it_island_json);
    ck_assert_int_eq(r.status, 201);
    ck_assert_ptr_nonnull(hc_header(&r, "Location", buf, sizeof(buf)));
    ck_assert(strncmp(buf, "/v1/maps/m-", 11) == 0);
    hc_free(&r);
    r = it_req(&s, "POST", "/v1/maps", "application/json", it_island_json);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    ck_assert_str_eq(it_str(j, "id"), buf + strlen("/v1/maps/"));
    cJSON_Delete(j);
    hc_free(&r);

    r = it_req(&s, "GET", "/v1/maps", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "maps")), 2);
    cJSON_Delete(j);
    hc_free(&r);

    r = it_req(&s, "DELETE", "/v1/maps/room", NULL, NULL);
    ck_assert_int_eq(r.status, 204);
    ck_assert_uint_eq(r.body_len, 0);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/room", NULL, NULL);
    it_expect_error(&r, 404, "map_not_found", NULL);
    hc_free(&r);
    r = it_req(&s, "DELETE", "/v1/maps/room", NULL, NULL);
    it_expect_error(&r, 404, "map_not_found", NULL);
    hc_free(&r);

    /* Created again after a delete: version 1 again. */
    r = it_req(&s, "PUT", "/v1/maps/room", "application/json", it_room_json);
    ck_assert_int_eq(r.status, 201);
    j = it_json(&r);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    hc_free(&r);
    free(text);
    it_stop(&s);
}
END_TEST

/* Costs 1 and 7, a wall edge, a closed door over one cell and an open one
 * over a wall edge. */
static const char viewer_map[] = "{\"rows\":[\"..~.#\",\"....#\",\".....\"],\"legend\":{\"~\":7},"
                                 "\"walls\":[[0,0,\"E\"],[1,1,\"S\"]],"
                                 "\"doors\":{\"gate\":{\"cells\":[[4,2]],\"open\":false},"
                                 "\"hatch\":{\"walls\":[[2,2,\"E\"]],\"open\":true}}}";

/* GET /v1/maps/{id}/cells: the map export the viewer draws from. */
START_TEST(routes_maps_cells) {
    hc_server s = it_start(NULL);
    hc_resp r;
    char buf[64];
    cJSON *j;
    const cJSON *walls;
    static const int want[3][5] = {{1, 1, 7, 1, 0}, {1, 1, 1, 1, 0}, {1, 1, 1, 1, 0}};

    r = it_req(&s, "PUT", "/v1/maps/m", "application/json", viewer_map);
    ck_assert_int_eq(r.status, 201);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/m/cells", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    j = cJSON_ParseWithLength(r.body, r.body_len);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq((int)it_num(j, "width"), 5);
    ck_assert_int_eq((int)it_num(j, "height"), 3);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    {
        const char *hex = it_str(j, "costs");
        ck_assert_uint_eq(strlen(hex), 5 * 3 * 2);
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 5; x++) {
                char two[3] = {hex[2 * (y * 5 + x)], hex[2 * (y * 5 + x) + 1], 0};
                ck_assert_int_eq((int)strtol(two, NULL, 16), want[y][x]); /* the gate is shut */
            }
    }
    walls = it_get(j, "walls");
    ck_assert_int_eq(cJSON_GetArraySize(walls), 2);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(walls, 1), 2)->valuestring, "S");
    ck_assert(!it_truth(j, "doors.gate.open"));
    ck_assert(it_truth(j, "doors.hatch.open"));
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "doors.gate.cells")), 1);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "doors.hatch.walls")), 1);
    cJSON_Delete(j);
    hc_free(&r);

    /* Open the gate: its cell has its cost back, and the version moved. */
    r = it_req(&s, "PATCH", "/v1/maps/m", "application/json",
               "{\"doors\":[{\"id\":\"gate\",\"open\":true}]}");
    ck_assert_int_eq(r.status, 200);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/m/cells", NULL, NULL);
    j = cJSON_ParseWithLength(r.body, r.body_len);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    ck_assert(strncmp(it_str(j, "costs") + 2 * (2 * 5 + 4), "01", 2) == 0);
    cJSON_Delete(j);
    hc_free(&r);

    /* The export uploads back as it is (curl .../cells | curl -X PUT ...):
     * the copy exports the same bytes, its own id and version aside. */
    {
        hc_resp put, again;
        r = it_req(&s, "GET", "/v1/maps/m/cells", NULL, NULL);
        put = it_req(&s, "PUT", "/v1/maps/copy", "application/json", r.body);
        ck_assert_msg(put.status == 201, "PUT of the export: %d %s", put.status, put.body);
        again = it_req(&s, "GET", "/v1/maps/copy/cells", NULL, NULL);
        ck_assert_int_eq(again.status, 200);
        static const char head_m[] = "{\"id\":\"m\",\"version\":2,\"width\"";
        static const char head_copy[] = "{\"id\":\"copy\",\"version\":1,\"width\"";
        ck_assert(strncmp(r.body, head_m, sizeof(head_m) - 1) == 0);
        ck_assert(strncmp(again.body, head_copy, sizeof(head_copy) - 1) == 0);
        ck_assert_str_eq(strstr(again.body, "\"width\""), strstr(r.body, "\"width\""));
        hc_free(&put);
        hc_free(&again);
        hc_free(&r);
    }

    r = it_req(&s, "GET", "/v1/maps/nope/cells", NULL, NULL);
    ck_assert_int_eq(r.status, 404);
    hc_free(&r);
    r = it_req(&s, "POST", "/v1/maps/m/cells", "application/json", "{}");
    ck_assert_int_eq(r.status, 405);
    ck_assert_str_eq(hc_header(&r, "Allow", buf, sizeof(buf)), "GET, HEAD");
    hc_free(&r);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_maps) {
    Suite *s = suite_create("routes_maps");
    TCase *tc = tcase_create("routes_maps");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_maps_crud);
    tcase_add_test(tc, routes_maps_cells);
    suite_add_tcase(s, tc);
    return s;
}
