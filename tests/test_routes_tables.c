/* test_routes_tables.c -- server/routes_tables.c over HTTP: distance
 * tables against single path requests, null entries, paths on request,
 * agent sizes, and every limit and field error. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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

/* A w x h map with a full wall across row h / 2: two components. Free
 * with free(). */
static char *split_map(int w, int h) {
    char *t = malloc((size_t)(w + 1) * h + 64);
    size_t n = (size_t)sprintf(t, "type octile\nheight %d\nwidth %d\nmap\n", h, w);
    for (int y = 0; y < h; y++) {
        memset(t + n, y == h / 2 ? '@' : '.', (size_t)w);
        n += (size_t)w;
        t[n++] = '\n';
    }
    t[n] = '\0';
    return t;
}

/* A table body: ns sources on row sy and nt targets on row ty, spread over
 * the width w. Free with free(). */
static char *rows_table(int ns, int sy, int nt, int ty, int w, const char *extra) {
    char *b = malloc((size_t)(ns + nt) * 24 + 128);
    size_t n = (size_t)sprintf(b, "{\"sources\":[");
    for (int i = 0; i < ns; i++)
        n += (size_t)sprintf(b + n, "%s[%d,%d]", i ? "," : "", i * (w - 1) / (ns > 1 ? ns - 1 : 1),
                             sy);
    n += (size_t)sprintf(b + n, "],\"targets\":[");
    for (int j = 0; j < nt; j++)
        n += (size_t)sprintf(b + n, "%s[%d,%d]", j ? "," : "", j * (w - 1) / (nt > 1 ? nt - 1 : 1),
                             ty);
    sprintf(b + n, "]%s}", extra);
    return b;
}

/* Unreachable pairs are answered from the map's components without a
 * search, a search stops once the targets it can reach are settled, a
 * deadline past --max-deadline-ms is refused (422 naming deadline_ms, as
 * for paths), and --max-request-expanded caps the cells a table may settle
 * (413). Before: 100x100 tables across a wall ran 41.7 s each (419 M
 * cells), and deadline_ms 3600000 was taken. */
START_TEST(routes_tables_components_deadline_and_cap) {
    hc_server s = it_start(ARGS("--max-deadline-ms", "10000", "--max-request-expanded", "20000"));
    char *map = split_map(128, 128), *b;
    cJSON *j;
    it_put_map(&s, "split", "text/x-movingai-map", map, 201);
    free(map);
    /* Every source above the wall, every target below: nothing searched. */
    b = rows_table(40, 3, 40, 120, 128, "");
    j = it_call(&s, "POST", "/v1/maps/split/table", "application/json", b, 200);
    free(b);
    ck_assert_int_eq((int)it_num(j, "stats.searches"), 0);
    ck_assert_int_eq((int)it_num(j, "stats.expanded"), 0);
    ck_assert_int_eq((int)it_num(j, "stats.unreachable"), 1600);
    ck_assert(cJSON_IsNull(it_get(j, "costs.0.0")) && cJSON_IsNull(it_get(j, "costs.39.39")));
    cJSON_Delete(j);
    /* Targets on both sides: the search waits only for those above the
     * wall, two cells away: a few cells settled, not the upper half's
     * 8192 (which it settled waiting for the target below). */
    j = it_call(&s, "POST", "/v1/maps/split/table", "application/json",
                "{\"sources\":[[0,0]],\"targets\":[[1,1],[2,2],[70,126]]}", 200);
    ck_assert_int_eq((int)it_num(j, "stats.unreachable"), 1);
    ck_assert_int_eq((int)it_num(j, "stats.searches"), 1);
    ck_assert(cJSON_IsNull(it_get(j, "costs.0.2")));
    ck_assert_double_eq_tol(it_num(j, "costs.0.1"), 2 * 1.4142135623730951, 1e-9);
    ck_assert_int_le((int)it_num(j, "stats.expanded"), 25);
    cJSON_Delete(j);
    /* Deadlines: at most --max-deadline-ms, as a path query's. */
    it_call_error(&s, "POST", "/v1/maps/split/table", "application/json",
                  "{\"sources\":[[0,0]],\"deadline_ms\":10001}", 422, "invalid_value",
                  "deadline_ms");
    it_call_error(&s, "POST", "/v1/maps/split/table", "application/json",
                  "{\"sources\":[[0,0]],\"deadline_ms\":3600000}", 422, "invalid_value",
                  "deadline_ms");
    j = it_call(&s, "POST", "/v1/maps/split/table", "application/json",
                "{\"sources\":[[0,0]],\"deadline_ms\":10000}", 200);
    cJSON_Delete(j);
    /* The cap: corner to corner of the upper half settles about 8000
     * cells a search; three searches pass 20000. */
    b = rows_table(3, 0, 3, 60, 128, "");
    {
        hc_resp r = it_req(&s, "POST", "/v1/maps/split/table", "application/json", b);
        it_expect_error(&r, 413, "limit_exceeded", NULL);
        ck_assert_ptr_nonnull(strstr(r.body, "max_request_expanded"));
        hc_free(&r);
    }
    free(b);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.max_request_expanded"), 20000);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* Whether fd has nothing to read yet (no answer, not closed). */
static bool unanswered(int fd) {
    char c;
    ssize_t k = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* A long table gives its worker back between its searches: on one worker,
 * a 100 x 100 table across a 512 x 512 map (about 26 million cells) is
 * still unanswered when a path query sent after it has its answer, and
 * the pool counts the slices it gave back. Before, the table held its
 * worker to the end (8 of 19 queries from another client got 504). */
START_TEST(routes_tables_long_table_yields) {
    hc_server s = it_start(ARGS("--workers", "1", "--max-deadline-ms", "600000"));
    char *map = it_open_map_text(512, 512), *b;
    int slow;
    cJSON *j;
    it_put_map(&s, "open", "text/x-movingai-map", map, 201);
    it_put_map(&s, "room", "application/json", it_room_json, 201);
    free(map);
    b = rows_table(100, 0, 100, 511, 512, ",\"deadline_ms\":600000");
    it_wait_pool(&s, 0, 0);
    slow = it_send_json_post(s.port, "/v1/maps/open/table", b);
    free(b);
    it_wait_pool(&s, 1, 0);
    j = it_call(&s, "POST", "/v1/maps/room/path", "application/json",
                "{\"start\":[0,0],\"goal\":[9,0],\"cache\":false}", 200);
    cJSON_Delete(j);
    ck_assert_msg(unanswered(slow), "the table ended before the query was answered");
    {
        hc_resp r;
        ck_assert_int_eq(hc_read(slow, &r), 0);
        ck_assert_int_eq(r.status, 200);
        j = it_json(&r);
        ck_assert_int_eq((int)it_num(j, "stats.searches"), 100);
        cJSON_Delete(j);
        hc_free(&r);
    }
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_ge((int)it_num(j, "pool.requeued"), 1);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_tables) {
    Suite *s = suite_create("routes_tables");
    TCase *tc = tcase_create("routes_tables");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_tables_table_against_paths);
    tcase_add_test(tc, routes_tables_components_deadline_and_cap);
    tcase_add_test(tc, routes_tables_long_table_yields);
    suite_add_tcase(s, tc);
    return s;
}
