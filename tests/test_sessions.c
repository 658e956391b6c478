/* test_sessions.c -- integration tests of D* Lite sessions: the real pathd
 * on an ephemeral port, spoken to over HTTP and WebSocket (a raw client in
 * C, tests/wsc.c, and the npm `ws` package through tests/js/ws_client.js).
 *
 * Create/read/delete, updates as JSON and NDJSON, session-private changes,
 * map PATCHes seen by every session and by path queries, rejected updates
 * that leave the session as it was, idle expiry, the per-map quota, map
 * delete and replace ending sessions, and the stream.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "httpc.h"
#include "itest.h"
#include "planner.h"
#include "registry.h"
#include "session.h"
#include "testutil.h"
#include "wsc.h"

static cJSON *json_of(const char *body) {
    cJSON *j = cJSON_Parse(body);
    ck_assert_msg(j != NULL, "not JSON: %s", body);
    return j;
}

/* Sends a request, checks its status, returns the body as JSON (NULL for
 * 204). */
static cJSON *call(const hc_server *s, const char *method, const char *path, const char *ctype,
                   const char *body, int expect) {
    hc_resp r = it_req(s, method, path, ctype, body);
    cJSON *j = NULL;
    ck_assert_msg(r.status == expect, "%s %s: expected %d, got %d: %.400s", method, path, expect,
                  r.status, r.body);
    if (r.body_len) j = json_of(r.body);
    hc_free(&r);
    return j;
}

static void expect_error(const hc_server *s, const char *method, const char *path,
                         const char *ctype, const char *body, int status, const char *code,
                         const char *field) {
    cJSON *j = call(s, method, path, ctype, body, status);
    ck_assert_str_eq(it_str(j, "error.code"), code);
    if (field) ck_assert_str_eq(it_str(j, "error.field"), field);
    cJSON_Delete(j);
}

/* A 10x7 room split by a wall in column 4 with two doors in it: "gate" at
 * (4,3), open, and "hatch" at (4,0), closed. */
static const char door_map[] =
    "{\"rows\":[\"....#.....\",\"....#.....\",\"....#.....\",\"....#.....\",\"....#.....\","
    "\"....#.....\",\"....#.....\"],"
    "\"doors\":{\"gate\":{\"cells\":[[4,3]],\"open\":true},"
    "\"hatch\":{\"cells\":[[4,0]],\"open\":false}}}";

static void put_door_map(const hc_server *s, const char *id) {
    char path[64];
    cJSON *j;
    snprintf(path, sizeof(path), "/v1/maps/%s", id);
    j = call(s, "PUT", path, "application/json", door_map, 201);
    ck_assert_int_eq((int)it_num(j, "doors"), 2);
    cJSON_Delete(j);
}

/* Creates a session; returns its answer and writes its URL into url. */
static cJSON *create(const hc_server *s, const char *map, int sx, int sy, int gx, int gy,
                     const char *extra, char *url, size_t cap) {
    char path[96], body[160];
    hc_resp r;
    cJSON *j;
    char loc[160];
    snprintf(path, sizeof(path), "/v1/maps/%s/sessions", map);
    snprintf(body, sizeof(body), "{\"start\":[%d,%d],\"goal\":[%d,%d]%s}", sx, sy, gx, gy,
             extra ? extra : "");
    r = it_req(s, "POST", path, "application/json", body);
    ck_assert_msg(r.status == 201, "create: %d %s", r.status, r.body);
    j = json_of(r.body);
    ck_assert_ptr_nonnull(hc_header(&r, "Location", loc, sizeof(loc)));
    snprintf(url, cap, "/v1/maps/%s/sessions/%s", map, it_str(j, "session_id"));
    ck_assert_str_eq(loc, url);
    hc_free(&r);
    return j;
}

static cJSON *update(const hc_server *s, const char *url, const char *ctype, const char *body,
                     int expect) {
    char path[200];
    snprintf(path, sizeof(path), "%s/updates", url);
    return call(s, "POST", path, ctype, body, expect);
}

/* The path's first and last points. */
static void check_ends(const cJSON *j, int sx, int sy, int gx, int gy) {
    const cJSON *p = it_get(j, "path");
    int n = cJSON_GetArraySize(p);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(p, 0), 0)->valueint, sx);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(p, 0), 1)->valueint, sy);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(p, n - 1), 0)->valueint, gx);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(p, n - 1), 1)->valueint, gy);
}

/* Whether the path passes cell (x, y). */
static bool path_has(const cJSON *j, int x, int y) {
    const cJSON *pt;
    cJSON_ArrayForEach(pt, it_get(j, "path")) {
        if (cJSON_GetArrayItem(pt, 0)->valueint == x && cJSON_GetArrayItem(pt, 1)->valueint == y)
            return true;
    }
    return false;
}

/* The session's state without its stats: what must not change after a
 * rejected update. Free with free(). */
static char *state_of(const hc_server *s, const char *url) {
    cJSON *j = call(s, "GET", url, NULL, NULL, 200);
    char *out;
    cJSON_DeleteItemFromObject(j, "stats");
    out = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return out;
}

static double path_cost(const hc_server *s, const char *map, int sx, int sy, int gx, int gy,
                        const char *extra, bool *found, uint64_t *version, bool *cached) {
    char path[96], body[200];
    cJSON *j;
    double c;
    snprintf(path, sizeof(path), "/v1/maps/%s/path", map);
    snprintf(body, sizeof(body), "{\"start\":[%d,%d],\"goal\":[%d,%d]%s}", sx, sy, gx, gy,
             extra ? extra : "");
    j = call(s, "POST", path, "application/json", body, 200);
    *found = it_truth(j, "found");
    c = *found ? it_num(j, "cost") : -1;
    if (version) *version = (uint64_t)it_num(j, "map_version");
    if (cached) *cached = it_truth(j, "stats.cached");
    cJSON_Delete(j);
    return c;
}

START_TEST(sessions_create_read_delete) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160];
    cJSON *a, *b;
    put_door_map(&s, "d");
    a = create(&s, "d", 0, 3, 9, 3, ",\"ttl_s\":30", url, sizeof(url));
    ck_assert(it_truth(a, "found"));
    check_ends(a, 0, 3, 9, 3);
    ck_assert(path_has(a, 4, 3)); /* through the open gate */
    ck_assert_double_eq_tol(it_num(a, "cost"), 9.0, 1e-9);
    ck_assert_int_eq((int)it_num(a, "ttl_s"), 30);
    ck_assert_int_eq((int)it_num(a, "map_version"), 1);
    ck_assert_str_eq(it_str(a, "algorithm"), "dstar");
    ck_assert_int_eq(strlen(it_str(a, "session_id")), 32);

    b = call(&s, "GET", url, NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(b, "cost"), it_num(a, "cost"), 1e-9);
    ck_assert_str_eq(it_str(b, "session_id"), it_str(a, "session_id"));
    ck_assert_str_eq(it_str(b, "stats.rebase"), "none");
    /* The session's own memory: more than its search's tile, far less than
     * a copy of the map per cell would be on a large map. */
    ck_assert_double_gt(it_num(b, "stats.memory_bytes"), 1000);
    cJSON_Delete(b);
    b = call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(b, "sessions"), 1);
    ck_assert_int_gt((int)it_num(b, "limits.max_sessions_per_map"), 0);
    cJSON_Delete(b);

    ck_assert_ptr_null(call(&s, "DELETE", url, NULL, NULL, 204));
    expect_error(&s, "GET", url, NULL, NULL, 404, "session_not_found", NULL);
    expect_error(&s, "DELETE", url, NULL, NULL, 404, "session_not_found", NULL);
    expect_error(&s, "GET", "/v1/maps/d/sessions/nosuchsession", NULL, NULL, 404,
                 "session_not_found", NULL);
    /* The session belongs to its map: another map's URL does not find it. */
    cJSON_Delete(a);
    a = create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url));
    {
        char other[200];
        put_door_map(&s, "e");
        snprintf(other, sizeof(other), "/v1/maps/e/sessions/%s", it_str(a, "session_id"));
        expect_error(&s, "GET", other, NULL, NULL, 404, "session_not_found", NULL);
    }
    cJSON_Delete(a);

    /* Bad creates. */
    expect_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                 "{\"start\":[0,3],\"goal\":[10,3]}", 422, "off_map", "goal");
    expect_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                 "{\"start\":[4,1],\"goal\":[9,3]}", 422, "blocked", "start");
    expect_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                 "{\"start\":[0,3],\"goal\":[9,3],\"ttl_s\":0}", 422, "invalid_value", "ttl_s");
    expect_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                 "{\"start\":[0,3],\"goal\":[9,3],\"ttl_s\":99999999}", 422, "invalid_value",
                 "ttl_s");
    expect_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                 "{\"start\":[0,3],\"goal\":[9,3],\"speed\":1}", 400, "invalid_request", "speed");
    expect_error(&s, "POST", "/v1/maps/d/sessions", "application/json", "{\"start\":[0,3]", 400,
                 "malformed_json", NULL);
    expect_error(&s, "POST", "/v1/maps/nomap/sessions", "application/json",
                 "{\"start\":[0,3],\"goal\":[9,3]}", 404, "map_not_found", NULL);
    expect_error(&s, "PUT", url, "application/json", "{}", 405, "method_not_allowed", NULL);
    it_stop(&s);
}
END_TEST

START_TEST(sessions_updates_json_and_ndjson) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160], url2[160];
    cJSON *a, *u;
    double c0;
    static const char *const steps[] = {
        "{\"position\":[1,3]}",
        "{\"cells\":[{\"x\":6,\"y\":3,\"cost\":0},{\"x\":6,\"y\":2,\"blocked\":true}]}",
        "{\"position\":[2,3],\"cells\":[{\"x\":6,\"y\":4,\"cost\":9}]}",
        "{\"goal\":[9,6]}",
    };
    put_door_map(&s, "d");
    a = create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url));
    c0 = it_num(a, "cost");
    cJSON_Delete(a);
    /* One update at a time. */
    u = update(&s, url, "application/json", steps[0], 200);
    check_ends(u, 1, 3, 9, 3);
    ck_assert_double_eq_tol(it_num(u, "cost"), c0 - 1, 1e-9);
    ck_assert_int_eq((int)it_num(u, "stats.updates"), 1);
    cJSON_Delete(u);
    u = update(&s, url, "application/json", steps[1], 200);
    ck_assert(!path_has(u, 6, 3) && !path_has(u, 6, 2));
    ck_assert_double_gt(it_num(u, "cost"), c0 - 1);
    cJSON_Delete(u);
    u = update(&s, url, "application/json", steps[2], 200);
    cJSON_Delete(u);
    u = update(&s, url, "application/json", steps[3], 200);
    check_ends(u, 2, 3, 9, 6);

    /* The same four as one NDJSON request (blank lines allowed) on a second
     * session: the final answer is the same. */
    a = create(&s, "d", 0, 3, 9, 3, NULL, url2, sizeof(url2));
    cJSON_Delete(a);
    {
        char body[1024];
        cJSON *v;
        snprintf(body, sizeof(body), "%s\n%s\n\n%s\r\n%s\n", steps[0], steps[1], steps[2],
                 steps[3]);
        v = update(&s, url2, "application/x-ndjson", body, 200);
        ck_assert_int_eq((int)it_num(v, "stats.updates"), 4);
        ck_assert_double_eq_tol(it_num(v, "cost"), it_num(u, "cost"), 1e-9);
        ck_assert_int_eq(cJSON_GetArraySize(it_get(v, "path")),
                         cJSON_GetArraySize(it_get(u, "path")));
        check_ends(v, 2, 3, 9, 6);
        cJSON_Delete(v);
    }
    cJSON_Delete(u);
    /* Closing the gate privately: no way through (the hatch is closed).
     * The gate is a cut vertex of the map, so the answer comes from the
     * map's cut vertices without a search (core/cuts.h). */
    u = update(&s, url, "application/json", "{\"doors\":[{\"id\":\"gate\",\"open\":false}]}", 200);
    ck_assert(!it_truth(u, "found"));
    ck_assert_str_eq(it_str(u, "reason"), "unreachable");
    ck_assert_int_eq((int)it_num(u, "stats.expanded"), 0);
    cJSON_Delete(u);
    /* Opening the hatch privately: the way over the top. */
    u = update(&s, url, "application/json", "{\"doors\":[{\"id\":\"hatch\",\"open\":true}]}", 200);
    ck_assert(it_truth(u, "found"));
    ck_assert(path_has(u, 4, 0));
    cJSON_Delete(u);
    /* A goal the session blocked itself is refused. */
    expect_error(&s, "POST", "/v1/maps/d/sessions/x/updates", "application/json", "{}", 404,
                 "session_not_found", NULL);
    expect_error(&s, "POST", url, "application/json", "{}", 405, "method_not_allowed", NULL);
    {
        char path[200];
        snprintf(path, sizeof(path), "%s/updates", url);
        expect_error(&s, "POST", path, "text/plain", "{}", 415, "unsupported_media_type",
                     "Content-Type");
    }
    it_stop(&s);
}
END_TEST

START_TEST(sessions_private_changes_stay_private) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char ua[160], ub[160];
    cJSON *a, *b;
    bool found;
    double before, after;
    put_door_map(&s, "d");
    before = path_cost(&s, "d", 0, 3, 9, 3, ",\"cache\":false", &found, NULL, NULL);
    ck_assert(found);
    a = create(&s, "d", 0, 3, 9, 3, NULL, ua, sizeof(ua));
    b = create(&s, "d", 0, 3, 9, 3, NULL, ub, sizeof(ub));
    cJSON_Delete(a);
    cJSON_Delete(b);
    a = update(&s, ua, "application/json",
               "{\"doors\":[{\"id\":\"gate\",\"open\":false}],"
               "\"cells\":[{\"x\":2,\"y\":3,\"cost\":0}]}",
               200);
    ck_assert(!it_truth(a, "found"));
    cJSON_Delete(a);
    /* Session B and path queries still see the open gate. */
    b = call(&s, "GET", ub, NULL, NULL, 200);
    ck_assert(it_truth(b, "found"));
    ck_assert(path_has(b, 4, 3));
    ck_assert_int_eq((int)it_num(b, "map_version"), 1);
    cJSON_Delete(b);
    after = path_cost(&s, "d", 0, 3, 9, 3, ",\"cache\":false,\"algorithm\":\"astar\"", &found, NULL,
                      NULL);
    ck_assert(found);
    ck_assert_double_eq_tol(after, before, 1e-9);
    b = call(&s, "GET", "/v1/maps/d", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(b, "version"), 1);
    cJSON_Delete(b);
    it_stop(&s);
}
END_TEST

/* A door made of a wall edge, closed and opened for one session and for the
 * world. */
START_TEST(sessions_wall_door) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160];
    cJSON *a;
    bool found;
    cJSON_Delete(call(&s, "PUT", "/v1/maps/w", "application/json",
                      "{\"rows\":[\".....\",\".....\",\".....\"],"
                      "\"walls\":[[2,0,\"E\"],[2,2,\"E\"]],"
                      "\"doors\":{\"curtain\":{\"walls\":[[2,1,\"E\"]]}}}",
                      201));
    a = create(&s, "w", 0, 1, 4, 1, NULL, url, sizeof(url));
    ck_assert(it_truth(a, "found"));
    ck_assert_double_eq_tol(it_num(a, "cost"), 4.0, 1e-9);
    cJSON_Delete(a);
    a = update(&s, url, "application/json", "{\"doors\":[{\"id\":\"curtain\",\"open\":false}]}",
               200);
    ck_assert(!it_truth(a, "found"));
    cJSON_Delete(a);
    path_cost(&s, "w", 0, 1, 4, 1, NULL, &found, NULL, NULL);
    ck_assert(found); /* the world's curtain is still open */
    a = update(&s, url, "application/json", "{\"doors\":[{\"id\":\"curtain\",\"open\":true}]}",
               200);
    ck_assert(it_truth(a, "found"));
    cJSON_Delete(a);
    cJSON_Delete(call(&s, "PATCH", "/v1/maps/w", "application/json",
                      "{\"doors\":[{\"id\":\"curtain\",\"open\":false}]}", 200));
    path_cost(&s, "w", 0, 1, 4, 1, NULL, &found, NULL, NULL);
    ck_assert(!found);
    /* The session pinned the curtain open: its view wins. */
    a = call(&s, "GET", url, NULL, NULL, 200);
    ck_assert(it_truth(a, "found"));
    ck_assert_int_eq((int)it_num(a, "map_version"), 2);
    cJSON_Delete(a);
    it_stop(&s);
}
END_TEST

START_TEST(sessions_patch_seen_by_all) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char ua[160], ub[160];
    cJSON *a, *b, *j;
    bool found, cached;
    uint64_t ver;
    put_door_map(&s, "d");
    a = create(&s, "d", 0, 3, 9, 3, NULL, ua, sizeof(ua));
    b = create(&s, "d", 0, 5, 9, 5, NULL, ub, sizeof(ub));
    cJSON_Delete(a);
    cJSON_Delete(b);
    /* A query cached on version 1. */
    path_cost(&s, "d", 0, 3, 9, 3, NULL, &found, &ver, &cached);
    path_cost(&s, "d", 0, 3, 9, 3, NULL, &found, &ver, &cached);
    ck_assert(found && cached && ver == 1);

    /* The world: the gate closes, the hatch opens. */
    j = call(&s, "PATCH", "/v1/maps/d", "application/json",
             "{\"doors\":[{\"id\":\"gate\",\"open\":false},{\"id\":\"hatch\",\"open\":true}]}",
             200);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    ck_assert_int_eq((int)it_num(j, "cache.entries"), 0);
    cJSON_Delete(j);
    /* Path queries: the new version, not the cached answer. */
    path_cost(&s, "d", 0, 3, 9, 3, NULL, &found, &ver, &cached);
    ck_assert(found && !cached);
    ck_assert_int_eq((int)ver, 2);
    /* Both sessions at their next read or update. */
    a = call(&s, "GET", ua, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(a, "map_version"), 2);
    ck_assert_str_eq(it_str(a, "stats.rebase"), "incremental");
    ck_assert(it_truth(a, "found") && path_has(a, 4, 0) && !path_has(a, 4, 3));
    cJSON_Delete(a);
    b = update(&s, ub, "application/json", "{\"position\":[1,5]}", 200);
    ck_assert_int_eq((int)it_num(b, "map_version"), 2);
    ck_assert(it_truth(b, "found") && path_has(b, 4, 0));
    cJSON_Delete(b);

    /* Several versions behind: incremental from the change log. */
    for (int i = 0; i < 3; i++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"cells\":[{\"x\":9,\"y\":6,\"cost\":%d}]}", 2 + i);
        cJSON_Delete(call(&s, "PATCH", "/v1/maps/d", "application/json", body, 200));
    }
    a = call(&s, "GET", ua, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(a, "map_version"), 5);
    ck_assert_str_eq(it_str(a, "stats.rebase"), "incremental");
    cJSON_Delete(a);
    /* Further behind than the log (64 versions): rebuilt, still optimal. */
    for (int i = 0; i < 70; i++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"cells\":[{\"x\":%d,\"y\":6,\"cost\":%d}]}", 5 + i % 4,
                 1 + i % 3);
        cJSON_Delete(call(&s, "PATCH", "/v1/maps/d", "application/json", body, 200));
    }
    b = call(&s, "GET", ub, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(b, "map_version"), 75);
    ck_assert_str_eq(it_str(b, "stats.rebase"), "rebuilt");
    {
        double c =
            path_cost(&s, "d", 1, 5, 9, 5, ",\"algorithm\":\"dijkstra\"", &found, &ver, NULL);
        ck_assert(found);
        ck_assert_int_eq((int)ver, 75);
        ck_assert_double_eq_tol(it_num(b, "cost"), c, 1e-6);
    }
    cJSON_Delete(b);
    /* Private changes win over the world's: A closes the hatch for itself,
     * then the world reopens the gate; A sees the gate open, hatch closed. */
    a = update(&s, ua, "application/json", "{\"doors\":[{\"id\":\"hatch\",\"open\":false}]}", 200);
    ck_assert(!it_truth(a, "found"));
    cJSON_Delete(a);
    cJSON_Delete(call(&s, "PATCH", "/v1/maps/d", "application/json",
                      "{\"doors\":[{\"id\":\"gate\",\"open\":true}]}", 200));
    a = call(&s, "GET", ua, NULL, NULL, 200);
    ck_assert(it_truth(a, "found") && path_has(a, 4, 3) && !path_has(a, 4, 0));
    cJSON_Delete(a);

    /* Bad PATCHes change nothing. */
    expect_error(&s, "PATCH", "/v1/maps/d", "application/json",
                 "{\"doors\":[{\"id\":\"portcullis\",\"open\":true}]}", 422, "invalid_value",
                 "doors[0].id");
    expect_error(&s, "PATCH", "/v1/maps/d", "application/json",
                 "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":1},{\"x\":-1,\"y\":1,\"cost\":0}]}", 422,
                 "off_map", "cells[1]");
    expect_error(&s, "PATCH", "/v1/maps/d", "application/json", "{\"cells\":[]}", 422,
                 "invalid_value", NULL);
    expect_error(&s, "PATCH", "/v1/maps/d", "application/json",
                 "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":256}]}", 422, "invalid_value",
                 "cells[0].cost");
    expect_error(&s, "PATCH", "/v1/maps/d", "application/json", "{\"position\":[1,1]}", 400,
                 "invalid_request", "position");
    expect_error(&s, "PATCH", "/v1/maps/nomap", "application/json",
                 "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":1}]}", 404, "map_not_found", NULL);
    j = call(&s, "GET", "/v1/maps/d", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 76);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

START_TEST(sessions_bad_updates_leave_session_unchanged) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160];
    char *before, *after;
    cJSON *a;
    static const struct {
        const char *ctype, *body;
        int status;
        const char *code, *field;
    } bad[] = {
        {"application/json",
         "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":0},{\"x\":10,\"y\":0,\"cost\":0}]}", 422, "off_map",
         "cells[1]"},
        {"application/json",
         "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":0}],\"doors\":[{\"id\":\"nope\",\"open\":true}]}",
         422, "invalid_value", "doors[0].id"},
        {"application/json", "{\"position\":[4,1]}", 422, "blocked", "position"},
        {"application/json", "{\"cells\":[{\"x\":2,\"y\":2,\"cost\":0}],\"position\":[2,2]}", 422,
         "blocked", "position"},
        {"application/json", "{\"goal\":[99,1]}", 422, "off_map", "goal"},
        {"application/json", "{\"teleport\":[1,1]}", 400, "invalid_request", "teleport"},
        {"application/json", "{\"cells\":[{\"x\":1,\"y\":1}]}", 400, "invalid_request",
         "cells[0].cost"},
        {"application/json", "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":1,\"blocked\":true}]}", 400,
         "invalid_request", "cells[0].cost"},
        {"application/json", "{\"position\":[1,1]", 400, "malformed_json", NULL},
        {"application/json", "[1,2]", 400, "invalid_request", NULL},
        /* NDJSON: valid lines first, the bad one names its line (0-based). */
        {"application/x-ndjson",
         "{\"position\":[1,3]}\n{\"cells\":[{\"x\":1,\"y\":1,\"cost\":0}]}\n{\"position\":[1,1]}\n",
         422, "blocked", "lines[2].position"},
        {"application/x-ndjson", "{\"position\":[1,3]}\n\n{\"position\":[1,4]\n", 400,
         "malformed_json", "lines[2]"},
        /* Blank lines first: the line named is the one in the body, as for
         * a parse error. */
        {"application/x-ndjson", "\n\r\n{\"position\":[4,1]}\n", 422, "blocked",
         "lines[2].position"},
        {"application/x-ndjson", "\n\n{\"position\":[1,3]}\n\n{\"position\":[4,1]}\n", 422,
         "blocked", "lines[4].position"},
        {"application/x-ndjson", "{\"position\":[1,3]}\n{\"doors\":[{\"id\":\"x\",\"open\":1}]}\n",
         400, "invalid_request", "lines[1].doors[0].open"},
        {"application/x-ndjson",
         "{\"position\":[1,3]}\n{\"doors\":[{\"id\":\"x\",\"open\":true}]}\n", 422, "invalid_value",
         "lines[1].doors[0].id"},
        {"application/x-ndjson", "\n  \n", 422, "invalid_value", NULL},
    };
    put_door_map(&s, "d");
    a = create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url));
    cJSON_Delete(a);
    /* Some private state first, so "unchanged" covers it. */
    cJSON_Delete(update(&s, url, "application/json",
                        "{\"position\":[0,2],\"cells\":[{\"x\":6,\"y\":3,\"cost\":0}]}", 200));
    before = state_of(&s, url);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[200];
        snprintf(path, sizeof(path), "%s/updates", url);
        expect_error(&s, "POST", path, bad[i].ctype, bad[i].body, bad[i].status, bad[i].code,
                     bad[i].field);
        after = state_of(&s, url);
        ck_assert_msg(strcmp(before, after) == 0, "case %zu changed the session:\n%s\n%s", i,
                      before, after);
        free(after);
    }
    free(before);
    /* The session still works, and the private block at (6,3) is still
     * there (a rejected update did not drop it). */
    a = update(&s, url, "application/json", "{\"position\":[0,3]}", 200);
    ck_assert(it_truth(a, "found") && !path_has(a, 6, 3));
    cJSON_Delete(a);
    it_stop(&s);
}
END_TEST

/* Polls /v1/info until it reports n sessions, up to deadline_ms. */
static bool wait_sessions(const hc_server *s, int n, int deadline_ms) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cJSON *j = call(s, "GET", "/v1/info", NULL, NULL, 200);
        int have = (int)it_num(j, "sessions");
        cJSON_Delete(j);
        if (have == n) return true;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > deadline_ms)
            return false;
        {
            struct timespec nap = {0, 20 * 1000 * 1000}; /* polling pace, not synchronisation */
            nanosleep(&nap, NULL);
        }
    }
}

START_TEST(sessions_ttl_expiry) {
    hc_server s = it_start(ARGS("--workers", "2", "--session-max-ttl", "5"));
    char short_url[160], long_url[160];
    cJSON *a;
    put_door_map(&s, "d");
    a = create(&s, "d", 0, 3, 9, 3, ",\"ttl_s\":1", short_url, sizeof(short_url));
    cJSON_Delete(a);
    a = create(&s, "d", 0, 3, 9, 3, ",\"ttl_s\":5", long_url, sizeof(long_url));
    cJSON_Delete(a);
    expect_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                 "{\"start\":[0,3],\"goal\":[9,3],\"ttl_s\":6}", 422, "invalid_value", "ttl_s");
    /* The reaper frees the idle one (1 s ttl, swept every second). */
    ck_assert_msg(wait_sessions(&s, 1, 10000), "the idle session was not reaped");
    expect_error(&s, "GET", short_url, NULL, NULL, 404, "session_not_found", NULL);
    a = call(&s, "GET", long_url, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(a, "ttl_s"), 5);
    cJSON_Delete(a);
    it_stop(&s);
}
END_TEST

START_TEST(sessions_per_map_limit) {
    hc_server s =
        it_start(ARGS("--workers", "2", "--max-sessions-per-map", "2", "--retry-after", "3"));
    char u1[160], u2[160], u3[160];
    hc_resp r;
    char ra[16];
    cJSON *j;
    put_door_map(&s, "d");
    put_door_map(&s, "e");
    cJSON_Delete(create(&s, "d", 0, 3, 9, 3, NULL, u1, sizeof(u1)));
    cJSON_Delete(create(&s, "d", 0, 3, 9, 3, NULL, u2, sizeof(u2)));
    r = it_req(&s, "POST", "/v1/maps/d/sessions", "application/json",
               "{\"start\":[0,3],\"goal\":[9,3]}");
    ck_assert_int_eq(r.status, 429);
    ck_assert_str_eq(hc_header(&r, "Retry-After", ra, sizeof(ra)), "3");
    j = json_of(r.body);
    ck_assert_str_eq(it_str(j, "error.code"), "too_many_sessions");
    cJSON_Delete(j);
    hc_free(&r);
    /* Another map has its own quota; a deleted session frees a slot. */
    cJSON_Delete(create(&s, "e", 0, 3, 9, 3, NULL, u3, sizeof(u3)));
    ck_assert_ptr_null(call(&s, "DELETE", u1, NULL, NULL, 204));
    cJSON_Delete(create(&s, "d", 0, 3, 9, 3, NULL, u1, sizeof(u1)));
    it_stop(&s);
}
END_TEST

START_TEST(sessions_map_delete_or_replace_ends_sessions) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char ua[160], ub[160];
    put_door_map(&s, "d");
    cJSON_Delete(create(&s, "d", 0, 3, 9, 3, NULL, ua, sizeof(ua)));
    cJSON_Delete(create(&s, "d", 0, 5, 9, 5, NULL, ub, sizeof(ub)));
    ck_assert(wait_sessions(&s, 2, 1000));
    /* Replacing the map ends them. */
    cJSON_Delete(call(&s, "PUT", "/v1/maps/d", "application/json", door_map, 200));
    expect_error(&s, "GET", ua, NULL, NULL, 404, "session_not_found", NULL);
    expect_error(&s, "POST", ub, NULL, NULL, 405, "method_not_allowed", NULL);
    ck_assert(wait_sessions(&s, 0, 1000));
    /* Deleting the map ends them, and a map created again has none. */
    cJSON_Delete(create(&s, "d", 0, 3, 9, 3, NULL, ua, sizeof(ua)));
    ck_assert_ptr_null(call(&s, "DELETE", "/v1/maps/d", NULL, NULL, 204));
    ck_assert(wait_sessions(&s, 0, 1000));
    put_door_map(&s, "d");
    expect_error(&s, "GET", ua, NULL, NULL, 404, "session_not_found", NULL);
    {
        char path[200];
        snprintf(path, sizeof(path), "%s/updates", ua);
        expect_error(&s, "POST", path, "application/json", "{\"position\":[0,2]}", 404,
                     "session_not_found", NULL);
    }
    it_stop(&s);
}
END_TEST

START_TEST(sessions_stream_raw_client) {
    hc_server s = it_start(ARGS("--workers", "2", "--ws-max-message", "4096"));
    char url[160], path[200], body[512];
    int fd, status, op;
    char *msg;
    size_t len;
    cJSON *j;
    put_door_map(&s, "d");
    cJSON_Delete(create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url)));
    snprintf(path, sizeof(path), "%s/stream", url);

    /* Not a handshake: 426; unknown session: 404. */
    expect_error(&s, "GET", path, NULL, NULL, 426, "upgrade_required", NULL);
    ck_assert_int_eq(
        wsc_connect(s.port, "/v1/maps/d/sessions/nosuch/stream", &status, body, sizeof(body)), -1);
    ck_assert_int_eq(status, 404);
    ck_assert_ptr_nonnull(strstr(body, "session_not_found"));

    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake failed: %d", status);
    /* An update: the answer is the HTTP answer's JSON. */
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[1,3]}", 18), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 1);
    j = json_of(msg);
    ck_assert(it_truth(j, "found"));
    check_ends(j, 1, 3, 9, 3);
    ck_assert_int_eq((int)it_num(j, "stats.updates"), 1);
    cJSON_Delete(j);
    free(msg);
    /* Two messages in one write: two answers, in order. */
    {
        const char *m1 = "{\"doors\":[{\"id\":\"gate\",\"open\":false}]}";
        const char *m2 = "{\"doors\":[{\"id\":\"hatch\",\"open\":true}]}";
        ck_assert_int_eq(wsc_send(fd, 1, m1, strlen(m1)), 0);
        ck_assert_int_eq(wsc_send(fd, 1, m2, strlen(m2)), 0);
        ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
        j = json_of(msg);
        ck_assert(!it_truth(j, "found"));
        cJSON_Delete(j);
        free(msg);
        ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
        j = json_of(msg);
        ck_assert(it_truth(j, "found") && path_has(j, 4, 0));
        cJSON_Delete(j);
        free(msg);
    }
    /* A bad update: the error body, and the stream goes on. */
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[4,1]}", 18), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    j = json_of(msg);
    ck_assert_str_eq(it_str(j, "error.code"), "blocked");
    ck_assert_str_eq(it_str(j, "error.field"), "position");
    cJSON_Delete(j);
    free(msg);
    ck_assert_int_eq(wsc_send(fd, 1, "not json", 8), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_ptr_nonnull(strstr(msg, "malformed_json"));
    free(msg);
    /* Ping -> pong with the same payload. */
    ck_assert_int_eq(wsc_send(fd, 9, "abc", 3), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 10);
    ck_assert_str_eq(msg, "abc");
    free(msg);
    /* The HTTP side sees what the stream did. */
    j = call(&s, "GET", url, NULL, NULL, 200);
    ck_assert(it_truth(j, "found") && path_has(j, 4, 0));
    cJSON_Delete(j);
    /* Close handshake: the code comes back. */
    ck_assert_int_eq(wsc_send(fd, 8, "\x03\xe8", 2), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 8);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(((unsigned char)msg[0] << 8) | (unsigned char)msg[1], 1000);
    free(msg);
    wsc_close(fd);

    /* A message past ws_max_message: close 1009. */
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert(fd >= 0);
    {
        char *big = malloc(8192);
        memset(big, ' ', 8192);
        ck_assert_int_eq(wsc_send(fd, 1, big, 8192), 0);
        free(big);
    }
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 8);
    ck_assert_int_eq(((unsigned char)msg[0] << 8) | (unsigned char)msg[1], 1009);
    free(msg);
    wsc_close(fd);

    /* A text message that is not UTF-8: close 1007 (RFC 6455 8.1), the
     * session is unchanged and a new stream works. */
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert(fd >= 0);
    {
        const char *bad = "{\"doors\":[{\"id\":\"g\xc3\x28te\",\"open\":false}]}";
        char *before = state_of(&s, url), *after;
        ck_assert_int_eq(wsc_send(fd, 1, bad, strlen(bad)), 0);
        ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
        ck_assert_int_eq(op, 8);
        ck_assert_int_eq(((unsigned char)msg[0] << 8) | (unsigned char)msg[1], 1007);
        free(msg);
        wsc_close(fd);
        after = state_of(&s, url);
        ck_assert_str_eq(before, after);
        free(before);
        free(after);
    }
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert(fd >= 0);
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[1,3]}", 18), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 1);
    free(msg);
    wsc_close(fd);

    /* A stream open at SIGTERM is closed with 1001 and the server exits 0. */
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert(fd >= 0);
    kill(s.pid, SIGTERM);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 8);
    ck_assert_int_eq(((unsigned char)msg[0] << 8) | (unsigned char)msg[1], 1001);
    free(msg);
    wsc_close(fd);
    it_stop(&s);
}
END_TEST

/* Runs `node tests/js/ws_client.js url msgs...`, returns its stdout. */
static char *run_node(const char *url, const char *const *msgs, int *exit_status) {
    char cmd[4096];
    size_t n = 0, cap = 65536;
    char *out = malloc(cap);
    FILE *p;
    n = (size_t)snprintf(cmd, sizeof(cmd), "node tests/js/ws_client.js '%s'", url);
    for (; *msgs; msgs++) n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", *msgs);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    *exit_status = pclose(p);
    return out;
}

START_TEST(sessions_stream_npm_ws_client) {
    hc_server s;
    struct stat st;
    char url[160], wsurl[256], *out, *line, *save;
    int rc, lines = 0;
    static const char *const msgs[] = {"{\"position\":[1,3]}",
                                       "{\"cells\":[{\"x\":99,\"y\":0,\"cost\":0}]}",
                                       "{\"doors\":[{\"id\":\"gate\",\"open\":false}]}", NULL};
    if (system("node --version >/dev/null 2>&1") != 0 ||
        stat("tests/js/node_modules/ws", &st) != 0) {
        fprintf(stderr, "SKIPPED: sessions_stream_npm_ws_client: node or tests/js/node_modules "
                        "missing (make installs them with npm ci --prefix tests/js)\n");
        return;
    }
    s = it_start(ARGS("--workers", "2"));
    put_door_map(&s, "d");
    cJSON_Delete(create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url)));
    snprintf(wsurl, sizeof(wsurl), "ws://127.0.0.1:%u%s/stream", (unsigned)s.port, url);
    out = run_node(wsurl, msgs, &rc);
    ck_assert_msg(rc == 0, "ws_client.js failed (%d): %s", rc, out);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++) {
        cJSON *j;
        switch (lines) {
        case 0:
            j = json_of(line);
            ck_assert(it_truth(j, "found"));
            check_ends(j, 1, 3, 9, 3);
            cJSON_Delete(j);
            break;
        case 1:
            j = json_of(line);
            ck_assert_str_eq(it_str(j, "error.code"), "off_map");
            cJSON_Delete(j);
            break;
        case 2:
            j = json_of(line);
            ck_assert(!it_truth(j, "found"));
            cJSON_Delete(j);
            break;
        case 3:
            ck_assert_str_eq(line, "pong hello");
            break;
        case 4:
            ck_assert_str_eq(line, "closed 1000");
            break;
        default:
            ck_abort_msg("unexpected line %s", line);
        }
    }
    ck_assert_int_eq(lines, 5);
    free(out);
    it_stop(&s);
}
END_TEST

/* A published version of a small open map, for the table tests. */
static pf_mapver *small_version(pf_registry *reg, const char *id) {
    pf_grid *g = NULL;
    pf_planner *p = NULL;
    pf_mapver *mv;
    bool created;
    ck_assert_int_eq(pf_grid_create(8, 8, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_planner_create(g, NULL, &p), PF_OK);
    mv = pf_mapver_create(id, p, 16, 1 << 20, 0, NULL);
    ck_assert_ptr_nonnull(mv);
    ck_assert_int_eq(pf_registry_publish(reg, mv, &created), PF_OK);
    pf_mapver_retain(mv);
    return mv;
}

START_TEST(sessions_table_busy_limits_expiry) {
    pf_registry *reg = pf_registry_create(8);
    pf_sessions *t = pf_sessions_create(3, 2);
    pf_mapver *a = small_version(reg, "a"), *b = small_version(reg, "b");
    pf_session *s1, *s2, *s3, *x;
    pf_point p0 = {0, 0}, p1 = {7, 7};
    char id1[PF_SESSION_ID_LEN + 1], id2[PF_SESSION_ID_LEN + 1];
    const uint64_t sec = 1000000000ull;
    bool total;

    ck_assert_int_eq(pf_sessions_add(t, a, p0, p1, 10, 0, &s1, &total), PF_OK);
    ck_assert_int_eq(pf_sessions_add(t, a, p0, p1, 1, 0, &s2, &total), PF_OK);
    snprintf(id1, sizeof(id1), "%s", pf_session_id(s1));
    snprintf(id2, sizeof(id2), "%s", pf_session_id(s2));
    ck_assert_str_ne(id1, id2);
    /* The per-map quota, then the total. */
    ck_assert_int_eq(pf_sessions_add(t, a, p0, p1, 10, 0, &x, &total), PF_ELIMIT);
    ck_assert(!total);
    ck_assert_int_eq(pf_sessions_add(t, b, p0, p1, 10, 0, &s3, &total), PF_OK);
    ck_assert_int_eq(pf_sessions_add(t, b, p0, p1, 10, 0, &x, &total), PF_ELIMIT);
    ck_assert(total);
    pf_sessions_release(t, s3, 0);
    /* Held sessions are busy, never expire, and are found only on their
     * map. */
    ck_assert_int_eq(pf_sessions_acquire(t, "a", id1, 0, &x), PF_SESSION_BUSY);
    ck_assert_int_eq(pf_sessions_reap(t, 5 * sec), 0);
    pf_sessions_release(t, s1, 0);
    pf_sessions_release(t, s2, 0);
    ck_assert_int_eq(pf_sessions_acquire(t, "b", id1, 0, &x), PF_SESSION_NOT_FOUND);
    ck_assert_int_eq(pf_sessions_acquire(t, "a", id1, 0, &x), PF_SESSION_OK);
    ck_assert_ptr_eq(x, s1);
    /* Removed while held: gone for others, freed at release. */
    ck_assert(pf_sessions_remove(t, "a", id1));
    ck_assert(!pf_sessions_exists(t, "a", id1, 0));
    ck_assert_uint_eq(pf_sessions_count(t), 2);
    pf_sessions_release(t, x, 0);
    /* Idle past the ttl: expired on access and by the reaper. */
    ck_assert(pf_sessions_exists(t, "a", id2, sec));
    ck_assert(!pf_sessions_exists(t, "a", id2, 2 * sec));
    ck_assert_int_eq(pf_sessions_reap(t, 2 * sec), 1);
    ck_assert_uint_eq(pf_sessions_count(t), 1);
    /* A slot freed on map a. */
    ck_assert_int_eq(pf_sessions_add(t, a, p0, p1, 10, 0, &s1, &total), PF_OK);
    pf_sessions_release(t, s1, 0);
    /* Dropping a map's sessions keeps other maps'. */
    ck_assert_int_eq(pf_sessions_drop_map(t, "a", 0), 1);
    ck_assert_uint_eq(pf_sessions_count(t), 1);
    ck_assert_int_eq(pf_sessions_drop_map(t, "b", b->lineage), 0);
    ck_assert_int_eq(pf_sessions_drop_map(t, "b", b->lineage + 1), 1);
    ck_assert_uint_eq(pf_sessions_count(t), 0);
    pf_sessions_destroy(t);
    pf_mapver_release(a);
    pf_mapver_release(b);
    pf_registry_destroy(reg);
}
END_TEST

START_TEST(sessions_change_log_bounds) {
    pf_registry *reg = pf_registry_create(8);
    pf_mapver *cur = small_version(reg, "m");
    uint64_t first = cur->version, lineage = cur->lineage;
    pf_point *cells;
    size_t n;
    for (int i = 0; i < 100; i++) {
        pf_point *changed = malloc(2 * sizeof(*changed));
        pf_planner *p = NULL;
        pf_mapver *next;
        pf_cell_change c = {{i % 8, 1}, (uint8_t)(i % 2)};
        ck_assert_int_eq(pf_planner_apply(cur->planner, &c, 1, NULL, 0, &p, NULL, NULL), PF_OK);
        next = pf_mapver_create("m", p, 16, 1 << 20, 0, NULL);
        changed[0] = (pf_point){i % 8, 1};
        changed[1] = (pf_point){i, 100}; /* a marker: which version */
        ck_assert_int_eq(pf_mapver_set_log(next, cur, changed, 2), PF_OK);
        ck_assert_int_eq(pf_registry_swap(reg, cur, next), PF_OK);
        /* A stale expected version is refused. */
        ck_assert_int_eq(pf_registry_swap(reg, cur, next), PF_ECANCELED);
        pf_mapver_release(cur);
        cur = next;
        pf_mapver_retain(cur);
        ck_assert_uint_eq(cur->version, first + 1 + (uint64_t)i);
        ck_assert_uint_eq(cur->lineage, lineage);
    }
    ck_assert_uint_eq(cur->nlog, PF_MAPVER_LOG_VERSIONS);
    /* Three versions behind: the last three diffs, oldest first. */
    ck_assert_int_eq(pf_mapver_changes_since(cur, cur->version - 3, &cells, &n), PF_OK);
    ck_assert_uint_eq(n, 6);
    ck_assert_int_eq(cells[1].x, 97);
    ck_assert_int_eq(cells[5].x, 99);
    free(cells);
    ck_assert_int_eq(pf_mapver_changes_since(cur, cur->version, &cells, &n), PF_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(
        pf_mapver_changes_since(cur, cur->version - PF_MAPVER_LOG_VERSIONS, &cells, &n), PF_OK);
    ck_assert_uint_eq(n, 2 * PF_MAPVER_LOG_VERSIONS);
    free(cells);
    ck_assert_int_eq(
        pf_mapver_changes_since(cur, cur->version - PF_MAPVER_LOG_VERSIONS - 1, &cells, &n),
        PF_ELIMIT);
    pf_mapver_release(cur);
    pf_registry_destroy(reg);
}
END_TEST

TU_SUITE(sessions) {
    Suite *s = suite_create("sessions");
    TCase *tc = tcase_create("sessions");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sessions_table_busy_limits_expiry);
    tcase_add_test(tc, sessions_change_log_bounds);
    tcase_add_test(tc, sessions_create_read_delete);
    tcase_add_test(tc, sessions_updates_json_and_ndjson);
    tcase_add_test(tc, sessions_private_changes_stay_private);
    tcase_add_test(tc, sessions_wall_door);
    tcase_add_test(tc, sessions_patch_seen_by_all);
    tcase_add_test(tc, sessions_bad_updates_leave_session_unchanged);
    tcase_add_test(tc, sessions_ttl_expiry);
    tcase_add_test(tc, sessions_per_map_limit);
    tcase_add_test(tc, sessions_map_delete_or_replace_ends_sessions);
    tcase_add_test(tc, sessions_stream_raw_client);
    tcase_add_test(tc, sessions_stream_npm_ws_client);
    suite_add_tcase(s, tc);
    return s;
}
