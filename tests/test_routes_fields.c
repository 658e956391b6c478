/* test_routes_fields.c -- server/routes_fields.c over HTTP: flow fields
 * (decoded, walked from every cell and held against path requests), their
 * cache per map version and its drop by PATCH, regions, agent sizes, every
 * limit and field error, and the limits /v1/info reports. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "b64dec.h"
#include "itest.h"
#include "testutil.h"

/* Walks the directions of a decoded flow field from (x, y) to a goal;
 * returns the steps, -1 when a step leaves the region or loops. */
static int walk(const unsigned char *dirs, int w, int h, int x, int y) {
    static const int dx[8] = {1, -1, 0, 0, 1, -1, 1, -1}, dy[8] = {0, 0, 1, -1, 1, 1, -1, -1};
    int steps = 0;
    while (dirs[y * w + x] != 8) {
        int d = dirs[y * w + x];
        if (d > 7 || steps > w * h) return -1;
        x += dx[d];
        y += dy[d];
        if (x < 0 || y < 0 || x >= w || y >= h) return -1;
        steps++;
    }
    return steps;
}

START_TEST(routes_fields_flowfield_cache_patch_limits) {
    hc_server s = it_start(
        ARGS("--workers", "2", "--max-flowfield-cells", "200", "--max-flowfield-goals", "2"));
    cJSON *j;
    unsigned char *dirs, *costs;
    size_t nd, nc;
    it_put_map(&s, "u", "application/json", it_gap_map, 201);
    j = it_call(&s, "POST", "/v1/maps/u/flowfield", "application/json", "{\"goal\":[0,0]}", 200);
    ck_assert_int_eq((int)it_num(j, "region.width"), 12);
    ck_assert_str_eq(it_str(j, "encoding"), "dir8-u8/cost-u32le");
    ck_assert(!it_truth(j, "stats.cached"));
    ck_assert(tu_b64_decode(it_str(j, "directions"), strlen(it_str(j, "directions")), &dirs, &nd));
    ck_assert(tu_b64_decode(it_str(j, "costs"), strlen(it_str(j, "costs")), &costs, &nc));
    ck_assert_uint_eq(nd, 96);
    ck_assert_uint_eq(nc, 4 * 96);
    /* Every cell with a route walks to the goal; its cost is the path's. */
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 12; x++) {
            int i = y * 12 + x;
            uint32_t v = (uint32_t)costs[4 * i] | (uint32_t)costs[4 * i + 1] << 8 |
                         (uint32_t)costs[4 * i + 2] << 16 | (uint32_t)costs[4 * i + 3] << 24;
            if (dirs[i] == 255) {
                ck_assert_uint_eq(v, 4294967295u);
                continue;
            }
            ck_assert_int_ge(walk(dirs, 12, 8, x, y), 0);
            if ((x + y) % 5 == 0) {
                char body[96];
                cJSON *p;
                snprintf(body, sizeof(body),
                         "{\"start\":[%d,%d],\"goal\":[0,0],\"algorithm\":"
                         "\"astar\"}",
                         x, y);
                p = it_call(&s, "POST", "/v1/maps/u/path", "application/json", body, 200);
                ck_assert_msg(fabs(it_num(p, "cost") - v / it_num(j, "cost_scale")) < 1e-3,
                              "(%d,%d): path %.4f field %u", x, y, it_num(p, "cost"), v);
                cJSON_Delete(p);
            }
        }
    ck_assert_int_eq(dirs[6 * 12 + 9], 255); /* the closed room */
    free(dirs);
    free(costs);
    cJSON_Delete(j);
    /* Cached; a PATCH drops it: the next field is built on the new version. */
    j = it_call(&s, "POST", "/v1/maps/u/flowfield", "application/json", "{\"goal\":[0,0]}", 200);
    ck_assert(it_truth(j, "stats.cached"));
    ck_assert_int_eq((int)it_num(j, "map_version"), 1);
    cJSON_Delete(j);
    {
        hc_resp r = it_req(&s, "PATCH", "/v1/maps/u", "application/json",
                           "{\"cells\":[{\"x\":5,\"y\":3,\"blocked\":true}]}");
        ck_assert_int_eq(r.status, 200);
        hc_free(&r);
    }
    j = it_call(&s, "POST", "/v1/maps/u/flowfield", "application/json",
                "{\"goal\":[0,0],\"costs\":false}", 200);
    ck_assert(!it_truth(j, "stats.cached"));
    ck_assert_int_eq((int)it_num(j, "map_version"), 2);
    ck_assert_ptr_null(it_get(j, "costs"));
    ck_assert(tu_b64_decode(it_str(j, "directions"), strlen(it_str(j, "directions")), &dirs, &nd));
    ck_assert_int_eq(dirs[4 * 12 + 0], 255); /* the door is shut */
    free(dirs);
    cJSON_Delete(j);
    /* Regions and agent sizes. */
    j = it_call(&s, "POST", "/v1/maps/u/flowfield", "application/json",
                "{\"goals\":[[1,1],[10,1]],\"region\":{\"x\":0,\"y\":0,\"width\":12,"
                "\"height\":3},\"agent_size\":2}",
                200);
    ck_assert_int_eq((int)it_num(j, "region.height"), 3);
    ck_assert_int_eq((int)it_num(j, "agent_size"), 2);
    cJSON_Delete(j);
    it_call_error(&s, "POST", "/v1/maps/u/flowfield", "application/json",
                  "{\"goal\":[1,1],\"region\":{\"x\":5,\"y\":0,\"width\":12,\"height\":3}}", 422,
                  "off_map", "region");
    it_call_error(&s, "POST", "/v1/maps/u/flowfield", "application/json",
                  "{\"goal\":[9,1],\"region\":{\"x\":0,\"y\":0,\"width\":8,\"height\":3}}", 422,
                  "off_map", "goal");
    it_call_error(&s, "POST", "/v1/maps/u/flowfield", "application/json",
                  "{\"goals\":[[1,1],[0,3]]}", 422, "blocked", "goals[1]");
    it_call_error(&s, "POST", "/v1/maps/u/flowfield", "application/json",
                  "{\"goals\":[[1,1],[1,2],[2,2]]}", 413, "limit_exceeded", "goals");
    it_call_error(&s, "POST", "/v1/maps/u/flowfield", "application/json",
                  "{\"goal\":[1,1],\"agent_size\":9}", 422, "invalid_value", "agent_size");
    it_call_error(&s, "POST", "/v1/maps/u/flowfield", "application/json",
                  "{\"goal\":[1,1],\"colour\":2}", 400, "invalid_request", "colour");
    it_call_error(&s, "POST", "/v1/maps/nope/flowfield", "application/json", "{\"goal\":[1,1]}",
                  404, "map_not_found", NULL);
    /* 16x16 = 256 cells: past --max-flowfield-cells 200 without a region. */
    it_put_map(&s, "big", "application/json",
               "{\"rows\":[\"................\",\"................\",\"................\","
               "\"................\",\"................\",\"................\","
               "\"................\",\"................\",\"................\","
               "\"................\",\"................\",\"................\","
               "\"................\",\"................\",\"................\","
               "\"................\"]}",
               201);
    it_call_error(&s, "POST", "/v1/maps/big/flowfield", "application/json", "{\"goal\":[1,1]}", 413,
                  "limit_exceeded", "region");
    j = it_call(&s, "POST", "/v1/maps/big/flowfield", "application/json",
                "{\"goal\":[1,1],\"region\":{\"x\":0,\"y\":0,\"width\":10,\"height\":10}}", 200);
    ck_assert_int_eq((int)it_num(j, "reachable"), 100);
    cJSON_Delete(j);
    {
        hc_resp r = it_req(&s, "GET", "/v1/maps/u", NULL, NULL);
        j = it_json(&r);
        ck_assert_int_eq((int)it_num(j, "agent_sizes.0.size"), 2);
        ck_assert(it_get(j, "flowfield_cache.entries") != NULL);
        cJSON_Delete(j);
        hc_free(&r);
        r = it_req(&s, "GET", "/v1/info", NULL, NULL);
        j = it_json(&r);
        ck_assert_int_eq((int)it_num(j, "limits.max_flowfield_cells"), 200);
        ck_assert_int_eq((int)it_num(j, "limits.max_table_entries"), 10000);
        ck_assert_int_eq((int)it_num(j, "limits.stream_max_inflight"), 4);
        cJSON_Delete(j);
        hc_free(&r);
    }
    it_stop(&s);
}
END_TEST

/* Whether fd has nothing to read yet (no answer, not closed). */
static bool unanswered(int fd) {
    char c;
    ssize_t k = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* A flow field gives its worker back every --slice-ms: on one worker, a
 * field over a 1024 x 1024 map is still unanswered when a path query sent
 * after it has its answer; the pool counts the slices given back, and the
 * field's answer is the same as one built without a query in between.
 * Its deadline is at most --max-deadline-ms (422 naming deadline_ms).
 * Before, a field held its worker to its end, and any deadline_ms was
 * taken. */
START_TEST(routes_fields_long_field_yields) {
    hc_server s =
        it_start(ARGS("--workers", "1", "--slice-ms", "1", "--max-deadline-ms", "3600000"));
    char *map = it_open_map_text(1024, 1024);
    const char *body = "{\"goal\":[0,0],\"cache\":false,\"deadline_ms\":3600000}";
    int slow;
    cJSON *j, *alone;
    it_put_map(&s, "big", "text/x-movingai-map", map, 201);
    it_put_map(&s, "room", "application/json", it_room_json, 201);
    free(map);
    it_call_error(&s, "POST", "/v1/maps/big/flowfield", "application/json",
                  "{\"goal\":[0,0],\"deadline_ms\":3600001}", 422, "invalid_value", "deadline_ms");
    alone = it_call(&s, "POST", "/v1/maps/big/flowfield", "application/json", body, 200);
    it_wait_pool(&s, 0, 0);
    slow = it_send_json_post(s.port, "/v1/maps/big/flowfield", body);
    it_wait_pool(&s, 1, 0);
    j = it_call(&s, "POST", "/v1/maps/room/path", "application/json",
                "{\"start\":[0,0],\"goal\":[9,0],\"cache\":false}", 200);
    cJSON_Delete(j);
    ck_assert_msg(unanswered(slow), "the field ended before the query was answered");
    {
        hc_resp r;
        ck_assert_int_eq(hc_read(slow, &r), 0);
        ck_assert_int_eq(r.status, 200);
        j = it_json(&r);
        ck_assert_str_eq(it_str(j, "directions"), it_str(alone, "directions"));
        ck_assert_str_eq(it_str(j, "costs"), it_str(alone, "costs"));
        ck_assert_int_eq((int)it_num(j, "stats.expanded"), (int)it_num(alone, "stats.expanded"));
        cJSON_Delete(j);
        hc_free(&r);
    }
    cJSON_Delete(alone);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_ge((int)it_num(j, "pool.requeued"), 1);
    ck_assert_int_eq((int)it_num(j, "memory.scratch_bytes"), 0); /* given back at the end */
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_fields) {
    Suite *s = suite_create("routes_fields");
    TCase *tc = tcase_create("routes_fields");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_fields_flowfield_cache_patch_limits);
    tcase_add_test(tc, routes_fields_long_field_yields);
    suite_add_tcase(s, tc);
    return s;
}
