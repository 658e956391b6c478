/* test_viewer.c -- GET / (the debug viewer page) and GET /v1/maps/{id}/cells,
 * the map export the viewer draws from. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "testutil.h"

/* Costs 1 and 7, a wall edge, a closed door over one cell and an open one
 * over a wall edge. */
static const char map_json[] = "{\"rows\":[\"..~.#\",\"....#\",\".....\"],\"legend\":{\"~\":7},"
                               "\"walls\":[[0,0,\"E\"],[1,1,\"S\"]],"
                               "\"doors\":{\"gate\":{\"cells\":[[4,2]],\"open\":false},"
                               "\"hatch\":{\"walls\":[[2,2,\"E\"]],\"open\":true}}}";

START_TEST(viewer_page_and_cells) {
    hc_server s = it_start(NULL);
    hc_resp r = it_req(&s, "GET", "/", NULL, NULL);
    char buf[64];
    cJSON *j;
    const cJSON *walls;
    static const int want[3][5] = {{1, 1, 7, 1, 0}, {1, 1, 1, 1, 0}, {1, 1, 1, 1, 0}};

    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(hc_header(&r, "Content-Type", buf, sizeof(buf)), "text/html; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(r.body, "<canvas"));
    /* The page only talks to routes that exist. */
    ck_assert_ptr_nonnull(strstr(r.body, "/cells"));
    hc_free(&r);

    r = it_req(&s, "PUT", "/v1/maps/m", "application/json", map_json);
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

TU_SUITE(viewer) {
    Suite *s = suite_create("viewer");
    TCase *tc = tcase_create("viewer");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, viewer_page_and_cells);
    suite_add_tcase(s, tc);
    return s;
}
