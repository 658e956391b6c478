/* test_routes_sessions.c -- server/routes_sessions.c over HTTP: D* Lite sessions (create, read,
 * delete, JSON and NDJSON updates, private changes, map PATCHes, rejected updates, expiry, quotas,
 * maps deleted or replaced). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itest.h"
#include "testutil.h"

/* The session's state without its stats: what must not change after a
 * rejected update. Free with free(). */
static char *state_of(const hc_server *s, const char *url) {
    cJSON *j = it_call(s, "GET", url, NULL, NULL, 200);
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
    j = it_call(s, "POST", path, "application/json", body, 200);
    *found = it_truth(j, "found");
    c = *found ? it_num(j, "cost") : -1;
    if (version) *version = (uint64_t)it_num(j, "map_version");
    if (cached) *cached = it_truth(j, "stats.cached");
    cJSON_Delete(j);
    return c;
}

/* Polls /v1/info until it reports at most n sessions; returns how many. */
static int wait_sessions(const hc_server *s, int n) {
    unsigned polls = 0;
    for (;;) {
        cJSON *j = it_call(s, "GET", "/v1/info", NULL, NULL, 200);
        int have = (int)it_num(j, "sessions");
        cJSON_Delete(j);
        if (have <= n) return have;
        tu_waiting(&polls, "sessions reaped");
    }
}

START_TEST(routes_sessions_create_read_delete) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160];
    cJSON *a, *b;
    it_put_door_map(&s, "d");
    a = it_session_create(&s, "d", 0, 3, 9, 3, ",\"ttl_s\":30", url, sizeof(url));
    ck_assert(it_truth(a, "found"));
    it_path_ends(a, 0, 3, 9, 3);
    ck_assert(it_path_has(a, 4, 3)); /* through the open gate */
    ck_assert_double_eq_tol(it_num(a, "cost"), 9.0, 1e-9);
    ck_assert_int_eq((int)it_num(a, "ttl_s"), 30);
    ck_assert_int_eq((int)it_num(a, "map_version"), 1);
    ck_assert_str_eq(it_str(a, "algorithm"), "dstar");
    ck_assert_int_eq(strlen(it_str(a, "session_id")), 32);

    b = it_call(&s, "GET", url, NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(b, "cost"), it_num(a, "cost"), 1e-9);
    ck_assert_str_eq(it_str(b, "session_id"), it_str(a, "session_id"));
    ck_assert_str_eq(it_str(b, "stats.rebase"), "none");
    /* The session's own memory: more than its search's tile, far less than
     * a copy of the map per cell would be on a large map. */
    ck_assert_double_gt(it_num(b, "stats.memory_bytes"), 1000);
    cJSON_Delete(b);
    b = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(b, "sessions"), 1);
    ck_assert_int_gt((int)it_num(b, "limits.max_sessions_per_map"), 0);
    cJSON_Delete(b);

    ck_assert_ptr_null(it_call(&s, "DELETE", url, NULL, NULL, 204));
    it_call_error(&s, "GET", url, NULL, NULL, 404, "session_not_found", NULL);
    it_call_error(&s, "DELETE", url, NULL, NULL, 404, "session_not_found", NULL);
    it_call_error(&s, "GET", "/v1/maps/d/sessions/nosuchsession", NULL, NULL, 404,
                  "session_not_found", NULL);
    /* The session belongs to its map: another map's URL does not find it. */
    cJSON_Delete(a);
    a = it_session_create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url));
    {
        char other[200];
        it_put_door_map(&s, "e");
        snprintf(other, sizeof(other), "/v1/maps/e/sessions/%s", it_str(a, "session_id"));
        it_call_error(&s, "GET", other, NULL, NULL, 404, "session_not_found", NULL);
    }
    cJSON_Delete(a);

    /* Bad creates. */
    it_call_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                  "{\"start\":[0,3],\"goal\":[10,3]}", 422, "off_map", "goal");
    it_call_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                  "{\"start\":[4,1],\"goal\":[9,3]}", 422, "blocked", "start");
    it_call_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                  "{\"start\":[0,3],\"goal\":[9,3],\"ttl_s\":0}", 422, "invalid_value", "ttl_s");
    it_call_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                  "{\"start\":[0,3],\"goal\":[9,3],\"ttl_s\":99999999}", 422, "invalid_value",
                  "ttl_s");
    it_call_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                  "{\"start\":[0,3],\"goal\":[9,3],\"speed\":1}", 400, "invalid_request", "speed");
    /* The agent is the kind's business: a grid session's is agent_size. */
    it_call_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                  "{\"start\":[0,3],\"goal\":[9,3],\"agent_type\":\"big\"}", 422, "invalid_value",
                  "agent_type");
    it_call_error(&s, "POST", "/v1/maps/d/sessions", "application/json", "{\"start\":[0,3]", 400,
                  "malformed_json", NULL);
    it_call_error(&s, "POST", "/v1/maps/nomap/sessions", "application/json",
                  "{\"start\":[0,3],\"goal\":[9,3]}", 404, "map_not_found", NULL);
    it_call_error(&s, "PUT", url, "application/json", "{}", 405, "method_not_allowed", NULL);
    it_stop(&s);
}
END_TEST

START_TEST(routes_sessions_updates_json_and_ndjson) {
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
    it_put_door_map(&s, "d");
    a = it_session_create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url));
    c0 = it_num(a, "cost");
    cJSON_Delete(a);
    /* One update at a time. */
    u = it_session_update(&s, url, "application/json", steps[0], 200);
    it_path_ends(u, 1, 3, 9, 3);
    ck_assert_double_eq_tol(it_num(u, "cost"), c0 - 1, 1e-9);
    ck_assert_int_eq((int)it_num(u, "stats.updates"), 1);
    cJSON_Delete(u);
    u = it_session_update(&s, url, "application/json", steps[1], 200);
    ck_assert(!it_path_has(u, 6, 3) && !it_path_has(u, 6, 2));
    ck_assert_double_gt(it_num(u, "cost"), c0 - 1);
    cJSON_Delete(u);
    u = it_session_update(&s, url, "application/json", steps[2], 200);
    cJSON_Delete(u);
    u = it_session_update(&s, url, "application/json", steps[3], 200);
    it_path_ends(u, 2, 3, 9, 6);

    /* The same four as one NDJSON request (blank lines allowed) on a second
     * session: the final answer is the same. */
    a = it_session_create(&s, "d", 0, 3, 9, 3, NULL, url2, sizeof(url2));
    cJSON_Delete(a);
    {
        char body[1024];
        cJSON *v;
        snprintf(body, sizeof(body), "%s\n%s\n\n%s\r\n%s\n", steps[0], steps[1], steps[2],
                 steps[3]);
        v = it_session_update(&s, url2, "application/x-ndjson", body, 200);
        ck_assert_int_eq((int)it_num(v, "stats.updates"), 4);
        ck_assert_double_eq_tol(it_num(v, "cost"), it_num(u, "cost"), 1e-9);
        ck_assert_int_eq(cJSON_GetArraySize(it_get(v, "path")),
                         cJSON_GetArraySize(it_get(u, "path")));
        it_path_ends(v, 2, 3, 9, 6);
        cJSON_Delete(v);
    }
    cJSON_Delete(u);
    /* Closing the gate privately: no way through (the hatch is closed).
     * The gate is a cut vertex of the map, so the answer comes from the
     * map's cut vertices without a search (core/cuts.h). */
    u = it_session_update(&s, url, "application/json",
                          "{\"doors\":[{\"id\":\"gate\",\"open\":false}]}", 200);
    ck_assert(!it_truth(u, "found"));
    ck_assert_str_eq(it_str(u, "reason"), "unreachable");
    ck_assert_int_eq((int)it_num(u, "stats.expanded"), 0);
    cJSON_Delete(u);
    /* Opening the hatch privately: the way over the top. */
    u = it_session_update(&s, url, "application/json",
                          "{\"doors\":[{\"id\":\"hatch\",\"open\":true}]}", 200);
    ck_assert(it_truth(u, "found"));
    ck_assert(it_path_has(u, 4, 0));
    cJSON_Delete(u);
    /* A goal the session blocked itself is refused. */
    it_call_error(&s, "POST", "/v1/maps/d/sessions/x/updates", "application/json", "{}", 404,
                  "session_not_found", NULL);
    it_call_error(&s, "POST", url, "application/json", "{}", 405, "method_not_allowed", NULL);
    {
        char path[200];
        snprintf(path, sizeof(path), "%s/updates", url);
        it_call_error(&s, "POST", path, "text/plain", "{}", 415, "unsupported_media_type",
                      "Content-Type");
    }
    it_stop(&s);
}
END_TEST

START_TEST(routes_sessions_private_changes_stay_private) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char ua[160], ub[160];
    cJSON *a, *b;
    bool found;
    double before, after;
    it_put_door_map(&s, "d");
    before = path_cost(&s, "d", 0, 3, 9, 3, ",\"cache\":false", &found, NULL, NULL);
    ck_assert(found);
    a = it_session_create(&s, "d", 0, 3, 9, 3, NULL, ua, sizeof(ua));
    b = it_session_create(&s, "d", 0, 3, 9, 3, NULL, ub, sizeof(ub));
    cJSON_Delete(a);
    cJSON_Delete(b);
    a = it_session_update(&s, ua, "application/json",
                          "{\"doors\":[{\"id\":\"gate\",\"open\":false}],"
                          "\"cells\":[{\"x\":2,\"y\":3,\"cost\":0}]}",
                          200);
    ck_assert(!it_truth(a, "found"));
    cJSON_Delete(a);
    /* Session B and path queries still see the open gate. */
    b = it_call(&s, "GET", ub, NULL, NULL, 200);
    ck_assert(it_truth(b, "found"));
    ck_assert(it_path_has(b, 4, 3));
    ck_assert_int_eq((int)it_num(b, "map_version"), 1);
    cJSON_Delete(b);
    after = path_cost(&s, "d", 0, 3, 9, 3, ",\"cache\":false,\"algorithm\":\"astar\"", &found, NULL,
                      NULL);
    ck_assert(found);
    ck_assert_double_eq_tol(after, before, 1e-9);
    b = it_call(&s, "GET", "/v1/maps/d", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(b, "version"), 1);
    cJSON_Delete(b);
    it_stop(&s);
}
END_TEST

/* A door made of a wall edge, closed and opened for one session and for the
 * world. */
START_TEST(routes_sessions_wall_door) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160];
    cJSON *a;
    bool found;
    cJSON_Delete(it_call(&s, "PUT", "/v1/maps/w", "application/json",
                         "{\"rows\":[\".....\",\".....\",\".....\"],"
                         "\"walls\":[[2,0,\"E\"],[2,2,\"E\"]],"
                         "\"doors\":{\"curtain\":{\"walls\":[[2,1,\"E\"]]}}}",
                         201));
    a = it_session_create(&s, "w", 0, 1, 4, 1, NULL, url, sizeof(url));
    ck_assert(it_truth(a, "found"));
    ck_assert_double_eq_tol(it_num(a, "cost"), 4.0, 1e-9);
    cJSON_Delete(a);
    a = it_session_update(&s, url, "application/json",
                          "{\"doors\":[{\"id\":\"curtain\",\"open\":false}]}", 200);
    ck_assert(!it_truth(a, "found"));
    cJSON_Delete(a);
    path_cost(&s, "w", 0, 1, 4, 1, NULL, &found, NULL, NULL);
    ck_assert(found); /* the world's curtain is still open */
    a = it_session_update(&s, url, "application/json",
                          "{\"doors\":[{\"id\":\"curtain\",\"open\":true}]}", 200);
    ck_assert(it_truth(a, "found"));
    cJSON_Delete(a);
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/w", "application/json",
                         "{\"doors\":[{\"id\":\"curtain\",\"open\":false}]}", 200));
    path_cost(&s, "w", 0, 1, 4, 1, NULL, &found, NULL, NULL);
    ck_assert(!found);
    /* The session pinned the curtain open: its view wins. */
    a = it_call(&s, "GET", url, NULL, NULL, 200);
    ck_assert(it_truth(a, "found"));
    ck_assert_int_eq((int)it_num(a, "map_version"), 2);
    cJSON_Delete(a);
    it_stop(&s);
}
END_TEST

START_TEST(routes_sessions_patch_seen_by_all) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char ua[160], ub[160];
    cJSON *a, *b, *j;
    bool found, cached;
    uint64_t ver;
    it_put_door_map(&s, "d");
    a = it_session_create(&s, "d", 0, 3, 9, 3, NULL, ua, sizeof(ua));
    b = it_session_create(&s, "d", 0, 5, 9, 5, NULL, ub, sizeof(ub));
    cJSON_Delete(a);
    cJSON_Delete(b);
    /* A query cached on version 1. */
    path_cost(&s, "d", 0, 3, 9, 3, NULL, &found, &ver, &cached);
    path_cost(&s, "d", 0, 3, 9, 3, NULL, &found, &ver, &cached);
    ck_assert(found && cached && ver == 1);

    /* The world: the gate closes, the hatch opens. */
    j = it_call(&s, "PATCH", "/v1/maps/d", "application/json",
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
    a = it_call(&s, "GET", ua, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(a, "map_version"), 2);
    ck_assert_str_eq(it_str(a, "stats.rebase"), "incremental");
    ck_assert(it_truth(a, "found") && it_path_has(a, 4, 0) && !it_path_has(a, 4, 3));
    cJSON_Delete(a);
    b = it_session_update(&s, ub, "application/json", "{\"position\":[1,5]}", 200);
    ck_assert_int_eq((int)it_num(b, "map_version"), 2);
    ck_assert(it_truth(b, "found") && it_path_has(b, 4, 0));
    cJSON_Delete(b);

    /* Several versions behind: incremental from the change log. */
    for (int i = 0; i < 3; i++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"cells\":[{\"x\":9,\"y\":6,\"cost\":%d}]}", 2 + i);
        cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/d", "application/json", body, 200));
    }
    a = it_call(&s, "GET", ua, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(a, "map_version"), 5);
    ck_assert_str_eq(it_str(a, "stats.rebase"), "incremental");
    cJSON_Delete(a);
    /* Further behind than the log (64 versions): rebuilt, still optimal. */
    for (int i = 0; i < 70; i++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"cells\":[{\"x\":%d,\"y\":6,\"cost\":%d}]}", 5 + i % 4,
                 1 + i % 3);
        cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/d", "application/json", body, 200));
    }
    b = it_call(&s, "GET", ub, NULL, NULL, 200);
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
    a = it_session_update(&s, ua, "application/json",
                          "{\"doors\":[{\"id\":\"hatch\",\"open\":false}]}", 200);
    ck_assert(!it_truth(a, "found"));
    cJSON_Delete(a);
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/d", "application/json",
                         "{\"doors\":[{\"id\":\"gate\",\"open\":true}]}", 200));
    a = it_call(&s, "GET", ua, NULL, NULL, 200);
    ck_assert(it_truth(a, "found") && it_path_has(a, 4, 3) && !it_path_has(a, 4, 0));
    cJSON_Delete(a);

    /* Bad PATCHes change nothing. */
    it_call_error(&s, "PATCH", "/v1/maps/d", "application/json",
                  "{\"doors\":[{\"id\":\"portcullis\",\"open\":true}]}", 422, "invalid_value",
                  "doors[0].id");
    it_call_error(&s, "PATCH", "/v1/maps/d", "application/json",
                  "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":1},{\"x\":-1,\"y\":1,\"cost\":0}]}", 422,
                  "off_map", "cells[1]");
    it_call_error(&s, "PATCH", "/v1/maps/d", "application/json", "{\"cells\":[]}", 422,
                  "invalid_value", NULL);
    it_call_error(&s, "PATCH", "/v1/maps/d", "application/json",
                  "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":256}]}", 422, "invalid_value",
                  "cells[0].cost");
    it_call_error(&s, "PATCH", "/v1/maps/d", "application/json", "{\"position\":[1,1]}", 400,
                  "invalid_request", "position");
    it_call_error(&s, "PATCH", "/v1/maps/nomap", "application/json",
                  "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":1}]}", 404, "map_not_found", NULL);
    j = it_call(&s, "GET", "/v1/maps/d", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 76);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

START_TEST(routes_sessions_bad_updates_leave_session_unchanged) {
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
    it_put_door_map(&s, "d");
    a = it_session_create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url));
    cJSON_Delete(a);
    /* Some private state first, so "unchanged" covers it. */
    cJSON_Delete(it_session_update(&s, url, "application/json",
                                   "{\"position\":[0,2],\"cells\":[{\"x\":6,\"y\":3,\"cost\":0}]}",
                                   200));
    before = state_of(&s, url);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[200];
        snprintf(path, sizeof(path), "%s/updates", url);
        it_call_error(&s, "POST", path, bad[i].ctype, bad[i].body, bad[i].status, bad[i].code,
                      bad[i].field);
        after = state_of(&s, url);
        ck_assert_msg(strcmp(before, after) == 0, "case %zu changed the session:\n%s\n%s", i,
                      before, after);
        free(after);
    }
    free(before);
    /* The session still works, and the private block at (6,3) is still
     * there (a rejected update did not drop it). */
    a = it_session_update(&s, url, "application/json", "{\"position\":[0,3]}", 200);
    ck_assert(it_truth(a, "found") && !it_path_has(a, 6, 3));
    cJSON_Delete(a);
    it_stop(&s);
}
END_TEST

/* The reaper frees an idle session past its ttl_s and keeps one within
 * it. The long one's hour cannot pass on any machine while the short
 * one's second does. */
START_TEST(routes_sessions_ttl_expiry) {
    hc_server s = it_start(ARGS("--workers", "2", "--session-max-ttl", "3600"));
    char short_url[160], long_url[160];
    cJSON *a;
    it_put_door_map(&s, "d");
    a = it_session_create(&s, "d", 0, 3, 9, 3, ",\"ttl_s\":1", short_url, sizeof(short_url));
    cJSON_Delete(a);
    a = it_session_create(&s, "d", 0, 3, 9, 3, ",\"ttl_s\":3600", long_url, sizeof(long_url));
    cJSON_Delete(a);
    it_call_error(&s, "POST", "/v1/maps/d/sessions", "application/json",
                  "{\"start\":[0,3],\"goal\":[9,3],\"ttl_s\":3601}", 422, "invalid_value", "ttl_s");
    /* The reaper frees the idle one (1 s ttl, swept every second). */
    ck_assert_int_eq(wait_sessions(&s, 1), 1);
    it_call_error(&s, "GET", short_url, NULL, NULL, 404, "session_not_found", NULL);
    a = it_call(&s, "GET", long_url, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(a, "ttl_s"), 3600);
    cJSON_Delete(a);
    it_stop(&s);
}
END_TEST

START_TEST(routes_sessions_per_map_limit) {
    hc_server s =
        it_start(ARGS("--workers", "2", "--max-sessions-per-map", "2", "--retry-after", "3"));
    char u1[160], u2[160], u3[160];
    hc_resp r;
    char ra[16];
    cJSON *j;
    it_put_door_map(&s, "d");
    it_put_door_map(&s, "e");
    cJSON_Delete(it_session_create(&s, "d", 0, 3, 9, 3, NULL, u1, sizeof(u1)));
    cJSON_Delete(it_session_create(&s, "d", 0, 3, 9, 3, NULL, u2, sizeof(u2)));
    r = it_req(&s, "POST", "/v1/maps/d/sessions", "application/json",
               "{\"start\":[0,3],\"goal\":[9,3]}");
    ck_assert_int_eq(r.status, 429);
    ck_assert_str_eq(hc_header(&r, "Retry-After", ra, sizeof(ra)), "3");
    j = it_json_text(r.body);
    ck_assert_str_eq(it_str(j, "error.code"), "too_many_sessions");
    cJSON_Delete(j);
    hc_free(&r);
    /* Another map has its own quota; a deleted session frees a slot. */
    cJSON_Delete(it_session_create(&s, "e", 0, 3, 9, 3, NULL, u3, sizeof(u3)));
    ck_assert_ptr_null(it_call(&s, "DELETE", u1, NULL, NULL, 204));
    cJSON_Delete(it_session_create(&s, "d", 0, 3, 9, 3, NULL, u1, sizeof(u1)));
    it_stop(&s);
}
END_TEST

START_TEST(routes_sessions_map_delete_or_replace_ends_sessions) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char ua[160], ub[160];
    it_put_door_map(&s, "d");
    cJSON_Delete(it_session_create(&s, "d", 0, 3, 9, 3, NULL, ua, sizeof(ua)));
    cJSON_Delete(it_session_create(&s, "d", 0, 5, 9, 5, NULL, ub, sizeof(ub)));
    ck_assert_int_eq(wait_sessions(&s, 2), 2);
    /* Replacing the map ends them. */
    cJSON_Delete(it_call(&s, "PUT", "/v1/maps/d", "application/json", it_door_map, 200));
    it_call_error(&s, "GET", ua, NULL, NULL, 404, "session_not_found", NULL);
    it_call_error(&s, "POST", ub, NULL, NULL, 405, "method_not_allowed", NULL);
    ck_assert_int_eq(wait_sessions(&s, 0), 0);
    /* Deleting the map ends them, and a map created again has none. */
    cJSON_Delete(it_session_create(&s, "d", 0, 3, 9, 3, NULL, ua, sizeof(ua)));
    ck_assert_ptr_null(it_call(&s, "DELETE", "/v1/maps/d", NULL, NULL, 204));
    ck_assert_int_eq(wait_sessions(&s, 0), 0);
    it_put_door_map(&s, "d");
    it_call_error(&s, "GET", ua, NULL, NULL, 404, "session_not_found", NULL);
    {
        char path[200];
        snprintf(path, sizeof(path), "%s/updates", ua);
        it_call_error(&s, "POST", path, "application/json", "{\"position\":[0,2]}", 404,
                      "session_not_found", NULL);
    }
    it_stop(&s);
}
END_TEST

/* Navmesh sessions: a path corridor on the same routes. Moving along the
 * path keeps the corridor (rebase none) and the path from the new position;
 * a PATCH, a new goal or a jump plan anew (rebuilt); refusals change
 * nothing; replacing the map ends the session. */
START_TEST(routes_sessions_navmesh_corridor) {
    hc_server s = it_start(NULL);
    char url[200], *text = it_open_map_text(24, 9), *env = it_nav_envelope(text, NULL);
    cJSON *j;
    hc_resp r;
    float p[3];
    double l0;
    free(text);
    it_put_map(&s, "n", "application/json", env, 201);
    free(env);

    r = it_req(&s, "POST", "/v1/maps/n/sessions", "application/json",
               "{\"start\":[1.5,0,1.5],\"goal\":[1.5,0,7.5],\"ttl_s\":60}");
    ck_assert_int_eq(r.status, 201);
    ck_assert_ptr_nonnull(hc_header(&r, "Location", url, sizeof(url)));
    j = it_json(&r);
    hc_free(&r);
    ck_assert(it_truth(j, "found") && !it_truth(j, "partial"));
    ck_assert_str_eq(it_str(j, "algorithm"), "polyanya");
    ck_assert_str_eq(it_str(j, "stats.rebase"), "rebuilt");
    ck_assert_int_gt((int)it_num(j, "polygons"), 1);
    l0 = it_num(j, "length");
    ck_assert_double_gt(l0, 42.0); /* round the wall's gap at the right end */
    it_nav_point(j, 1, p);         /* the first corner, towards the gap */
    ck_assert_float_gt(p[0], 20.0f);
    cJSON_Delete(j);

    /* Two steps along the first leg: the corridor follows, the path is
     * shorter by about the distance walked. */
    j = it_session_update(&s, url, "application/json", "{\"position\":[4.5,0,1.7]}", 200);
    ck_assert_str_eq(it_str(j, "stats.rebase"), "none");
    ck_assert_double_eq_tol(it_num(j, "length"), l0 - 3.0, 0.1);
    it_nav_point(j, 0, p);
    ck_assert_float_eq_tol(p[0], 4.5f, 1e-3f);
    cJSON_Delete(j);
    j = it_session_update(&s, url, "application/x-ndjson",
                          "{\"position\":[6.5,0,1.8]}\n\n{\"position\":[8.5,0,1.9]}\n", 200);
    ck_assert_int_eq((int)it_num(j, "stats.updates"), 2);
    ck_assert_str_eq(it_str(j, "stats.rebase"), "none");
    ck_assert_double_eq_tol(it_num(j, "length"), l0 - 7.0, 0.15);
    cJSON_Delete(j);

    /* A crate on the way: the next update plans anew on version 2. */
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/n", "application/json",
                         "{\"obstacles\":[{\"id\":\"c\",\"box\":{\"min\":[14,-1,0],\"max\":[16,3,2."
                         "5]}}]}",
                         200));
    j = it_call(&s, "GET", url, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "map_version"), 2);
    ck_assert_str_eq(it_str(j, "stats.rebase"), "rebuilt");
    {
        bool above = false; /* the path now passes the crate above z 2.5 */
        for (int i = 0; i < it_nav_npoints(j); i++) {
            it_nav_point(j, i, p);
            above |= p[0] > 13.5f && p[0] < 16.5f && p[2] > 2.5f;
        }
        ck_assert(above);
    }
    cJSON_Delete(j);
    /* A new goal: planned anew. */
    j = it_session_update(&s, url, "application/json", "{\"goal\":[10.5,0,1.5]}", 200);
    ck_assert_str_eq(it_str(j, "stats.rebase"), "rebuilt");
    ck_assert_double_eq_tol(it_num(j, "length"), 2.0, 0.25);
    cJSON_Delete(j);
    /* A jump across the map: planned anew from there. */
    j = it_session_update(&s, url, "application/json", "{\"position\":[20.5,0,7.5]}", 200);
    ck_assert_str_eq(it_str(j, "stats.rebase"), "rebuilt");
    it_nav_point(j, 0, p);
    ck_assert_float_eq_tol(p[2], 7.5f, 1e-3f);
    cJSON_Delete(j);

    /* Refusals leave the session as it was. */
    it_call_error(&s, "POST", "/v1/maps/n/sessions", "application/json",
                  "{\"start\":[1,1],\"goal\":[3,1]}", 400, "invalid_request", "start");
    it_call_error(&s, "POST", "/v1/maps/n/sessions", "application/json",
                  "{\"start\":[1,0,1],\"goal\":[3,1]}", 400, "invalid_request", "goal");
    it_call_error(&s, "POST", "/v1/maps/n/sessions", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goal\":[40,0,1]}", 422, "blocked", "goal");
    it_call_error(&s, "POST", "/v1/maps/n/sessions", "application/json",
                  "{\"start\":[15,0,1],\"goal\":[1.5,0,1.5]}", 422, "blocked", "start");
    it_call_error(&s, "POST", url, "application/json", "{\"position\":[3,1]}", 405,
                  "method_not_allowed", NULL);
    {
        char upd[240];
        snprintf(upd, sizeof(upd), "%s/updates", url);
        it_call_error(&s, "POST", upd, "application/json", "{\"position\":[3,1]}", 400,
                      "invalid_request", "position");
        it_call_error(&s, "POST", upd, "application/json",
                      "{\"cells\":[{\"x\":1,\"y\":1,"
                      "\"cost\":0}]}",
                      400, "invalid_request", "cells");
        it_call_error(&s, "POST", upd, "application/json", "{\"goal\":[15,0,1]}", 422, "blocked",
                      "goal");
        it_call_error(&s, "POST", upd, "application/x-ndjson",
                      "{\"goal\":[1.5,0,1.5]}\n{\"position\":[99,0,1]}\n", 422, "blocked",
                      "lines[1].position");
    }
    j = it_call(&s, "GET", url, NULL, NULL, 200);
    ck_assert_double_eq_tol(((const cJSON *)cJSON_GetArrayItem(it_get(j, "goal"), 0))->valuedouble,
                            10.5, 1e-4);
    ck_assert_str_eq(it_str(j, "stats.rebase"), "none");
    cJSON_Delete(j);

    /* A grid session on a navmesh map is refused, and the other way round. */
    it_put_map(&s, "g", "text/x-movingai-map", "type octile\nheight 1\nwidth 4\nmap\n....\n", 201);
    it_call_error(&s, "POST", "/v1/maps/g/sessions", "application/json",
                  "{\"start\":[0,0,0],\"goal\":[3,0,0]}", 400, "invalid_request", "start");
    /* Replacing the map ends the session. */
    it_put_map(&s, "n", "text/x-movingai-map", "type octile\nheight 1\nwidth 4\nmap\n....\n", 200);
    it_call_error(&s, "GET", url, NULL, NULL, 404, "session_not_found", NULL);
    it_stop(&s);
}
END_TEST

static char *create_session(const hc_server *s, const char *map, int sx, int sy, int gx, int gy) {
    char path[96], body[96];
    hc_resp r;
    cJSON *j;
    char *sid;
    snprintf(path, sizeof(path), "/v1/maps/%s/sessions", map);
    snprintf(body, sizeof(body), "{\"start\":[%d,%d],\"goal\":[%d,%d]}", sx, sy, gx, gy);
    r = it_req(s, "POST", path, "application/json", body);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    j = it_json(&r);
    sid = strdup(it_str(j, "session_id"));
    cJSON_Delete(j);
    hc_free(&r);
    return sid;
}

START_TEST(routes_sessions_list_pages) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char *sids[5];
    hc_resp r;
    cJSON *j;
    it_put_map(&s, "u", "application/json", it_gap_map, 201);
    it_put_map(&s, "v", "application/json", it_gap_map, 201);
    for (int i = 0; i < 5; i++) sids[i] = create_session(&s, i < 4 ? "u" : "v", i, 0, 0, 7);
    r = it_req(&s, "GET", "/v1/maps/u/sessions", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert_int_eq((int)it_num(j, "count"), 4);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "sessions")), 4);
    ck_assert(cJSON_IsNull(it_get(j, "next")));
    for (int i = 0; i < 3; i++) /* sorted by id */
        ck_assert(strcmp(it_str(cJSON_GetArrayItem(it_get(j, "sessions"), i), "session_id"),
                         it_str(cJSON_GetArrayItem(it_get(j, "sessions"), i + 1), "session_id")) <
                  0);
    ck_assert_int_eq((int)it_num(j, "sessions.0.goal.1"), 7);
    cJSON_Delete(j);
    hc_free(&r);
    /* Pages of two. */
    r = it_req(&s, "GET", "/v1/maps/u/sessions?limit=2", NULL, NULL);
    j = it_json(&r);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "sessions")), 2);
    {
        char path[160];
        snprintf(path, sizeof(path), "/v1/maps/u/sessions?limit=2&after=%s", it_str(j, "next"));
        cJSON_Delete(j);
        hc_free(&r);
        r = it_req(&s, "GET", path, NULL, NULL);
        j = it_json(&r);
        ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "sessions")), 2);
        ck_assert(cJSON_IsNull(it_get(j, "next")));
    }
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/u/sessions?limit=0", NULL, NULL);
    it_expect_error(&r, 422, "invalid_value", "limit");
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/u/sessions?page=1", NULL, NULL);
    it_expect_error(&r, 400, "invalid_request", "page");
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/zz/sessions", NULL, NULL);
    it_expect_error(&r, 404, "map_not_found", NULL);
    hc_free(&r);
    for (int i = 0; i < 5; i++) free(sids[i]);
    it_stop(&s);
}
END_TEST

/* D* Lite sessions of a 2x2 agent: the one-cell door stops it until the
 * session opens the wall beside the door for itself. */
START_TEST(routes_sessions_agent_size) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-agent-size", "3"));
    hc_resp r;
    cJSON *j;
    char path[160];
    it_put_map(&s, "u", "application/json", it_gap_map, 201);
    j = it_call(&s, "POST", "/v1/maps/u/sessions", "application/json",
                "{\"start\":[0,0],\"goal\":[0,4],\"agent_size\":2}", 201);
    ck_assert(!it_truth(j, "found"));
    ck_assert_int_eq((int)it_num(j, "agent_size"), 2);
    snprintf(path, sizeof(path), "/v1/maps/u/sessions/%s/updates", it_str(j, "session_id"));
    cJSON_Delete(j);
    r = it_req(&s, "POST", path, "application/json", "{\"cells\":[{\"x\":6,\"y\":3,\"cost\":1}]}");
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert(it_truth(j, "found"));
    ck_assert_int_eq((int)it_num(j, "path.0.0"), 0);
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "POST", path, "application/json", "{\"position\":[10,6]}");
    it_expect_error(&r, 422, "blocked", "position");
    hc_free(&r);
    it_call_error(&s, "POST", "/v1/maps/u/sessions", "application/json",
                  "{\"start\":[0,0],\"goal\":[0,4],\"agent_size\":4}", 422, "invalid_value",
                  "agent_size");
    it_call_error(&s, "POST", "/v1/maps/u/sessions", "application/json",
                  "{\"start\":[11,0],\"goal\":[0,4],\"agent_size\":2}", 422, "blocked", "start");
    it_stop(&s);
}
END_TEST

/* Moving targets (issue 29): a chase over HTTP. An agent follows the path
 * each answer gives it (one step a frame, now and then a jump anywhere)
 * after a goal that random-walks; every frame is one update {position,
 * goal}. Under each policy the test restates the replanning rules
 * (ReplanPolicy in proto/openapi.yaml) on its own record of the route it
 * was last given and the goal it was planned to, and checks every answer:
 * the reason and whether it replanned; an answer that did not replan
 * searched nothing (expanded 0) and is the kept route from the agent on;
 * one that did is optimal (tests/testutil.c's reference Dijkstra). It
 * counts replans and expansions and holds /metrics to the same counts.
 * Counted, never timed: the interval here is min_updates (frames). */

#define CHASE_W 40
#define CHASE_H 30
#define CHASE_FRAMES 150

typedef struct chase_policy {
    const char *name, *json; /* the create's "replan" member */
    double threshold;
    int min_updates;
    double hysteresis;
} chase_policy;

typedef struct chase_counts {
    int replans, skipped, by_reason[9], goal_moves, kept;
    double expanded;
} chase_counts;

static const char *const chase_reasons[9] = {"initial",   "blocked",    "off_route",
                                             "route_end", "goal_moved", "map_changed",
                                             "unchanged", "interval",   "threshold"};

static int reason_index(const char *name) {
    for (int i = 0; i < 9; i++)
        if (strcmp(name, chase_reasons[i]) == 0) return i;
    ck_abort_msg("unknown replan reason '%s'", name);
    return -1;
}

/* The route as the test keeps it: the cells of the last answer that
 * replanned, from where the agent was then to its end. */
typedef struct chase_route {
    pf_point c[CHASE_W * CHASE_H];
    int n;
} chase_route;

static int route_index(const chase_route *r, pf_point p) {
    for (int i = 0; i < r->n; i++)
        if (r->c[i].x == p.x && r->c[i].y == p.y) return i;
    return -1;
}

/* What walking r costs on g: each cell entered times the step's length. */
static double route_cost(const pf_grid *g, const chase_route *r) {
    double c = 0;
    for (int i = 1; i < r->n; i++)
        c += pf_grid_cost(g, r->c[i]) *
             (r->c[i].x != r->c[i - 1].x && r->c[i].y != r->c[i - 1].y ? 1.4142135623730951 : 1.0);
    return c;
}

static void read_path(const cJSON *j, chase_route *r) {
    const cJSON *path = it_get(j, "path"), *pt;
    r->n = 0;
    cJSON_ArrayForEach(pt, path) {
        r->c[r->n].x = (int32_t)cJSON_GetArrayItem(pt, 0)->valueint;
        r->c[r->n].y = (int32_t)cJSON_GetArrayItem(pt, 1)->valueint;
        r->n++;
    }
}

static void chase_one(const hc_server *s, const pf_grid *g, const chase_policy *pol, uint64_t *rng,
                      chase_counts *cnt) {
    static chase_route route, got; /* 10 KiB each: off the stack */
    pf_point agent, goal, planned = {-1, -1};
    bool have_route = false;
    int steps = 0;
    route.n = got.n = 0;
    char url[160], extra[160], body[160], upd[240];
    cJSON *j;
    ck_assert(tu_random_walkable(rng, g, &agent));
    ck_assert(tu_random_walkable(rng, g, &goal));
    snprintf(extra, sizeof(extra), ",\"replan\":%s", pol->json);
    j = it_session_create(s, "chase", agent.x, agent.y, goal.x, goal.y, extra, url, sizeof(url));
    snprintf(upd, sizeof(upd), "%s/updates", url);
    (void)body;
    for (int frame = 0;; frame++) {
        /* The answer to check: the create's (frame 0) or the update's. */
        const char *want;
        int k;
        bool replans;
        if (frame == 0) {
            want = "initial";
        } else {
            double d = hypot(goal.x - planned.x, goal.y - planned.y);
            int at = have_route ? route_index(&route, agent) : -1;
            steps++;
            if (!have_route)
                want = "initial";
            else if (at < 0)
                want = "off_route";
            else if (at == route.n - 1 && (goal.x != route.c[at].x || goal.y != route.c[at].y))
                want = "route_end";
            else if (d <= pol->threshold)
                want = d > 0 ? "threshold" : "unchanged";
            else if (steps < pol->min_updates)
                want = "interval";
            else
                want = "goal_moved";
        }
        k = reason_index(want);
        replans = k <= 5;
        ck_assert_msg(strcmp(it_str(j, "replan.reason"), want) == 0,
                      "%s frame %d: reason %s, rules say %s", pol->name, frame,
                      it_str(j, "replan.reason"), want);
        ck_assert_int_eq(it_truth(j, "replan.replanned"), replans);
        ck_assert_double_eq(it_num(j, "replan.policy.goal_threshold"), pol->threshold);
        ck_assert_int_eq((int)it_num(j, "replan.policy.min_updates"), pol->min_updates);
        cnt->by_reason[k]++;
        cnt->expanded += it_num(j, "stats.expanded");
        read_path(j, &got);
        if (replans) {
            double ref = tu_reference_cost(g, agent, goal);
            cnt->replans++;
            if (frame > 0 && have_route && (goal.x != planned.x || goal.y != planned.y))
                cnt->goal_moves++;
            ck_assert_int_eq(it_truth(j, "found"), ref >= 0);
            if (ref >= 0) {
                double c = it_num(j, "cost");
                /* Optimal; with hysteresis, within 1/(1 - h) of it. The
                 * answer's cost is its path's either way. */
                if (pol->hysteresis == 0)
                    ck_assert_msg(fabs(c - ref) <= 1e-6 * (1 + ref),
                                  "%s frame %d: cost %.9f, reference %.9f", pol->name, frame, c,
                                  ref);
                else
                    ck_assert_msg(c >= ref - 1e-6 * (1 + ref) &&
                                      c <= ref / (1 - pol->hysteresis) + 1e-6 * (1 + ref),
                                  "%s frame %d: cost %.9f, reference %.9f", pol->name, frame, c,
                                  ref);
                if (strcmp(it_str(j, "replan.route"), "kept") == 0) cnt->kept++;
                ck_assert(got.n >= 1 && got.c[0].x == agent.x && got.c[0].y == agent.y);
                ck_assert_msg(fabs(route_cost(g, &got) - c) <= 1e-6 * (1 + c),
                              "%s frame %d: cost %.9f, its path's %.9f", pol->name, frame, c,
                              route_cost(g, &got));
                ck_assert(got.c[got.n - 1].x == goal.x && got.c[got.n - 1].y == goal.y);
            }
            route = got;
            have_route = ref >= 0;
            planned = goal;
            steps = 0;
        } else {
            /* No search: the kept route from the agent on. */
            int at = route_index(&route, agent);
            cnt->skipped++;
            ck_assert_int_eq((int)it_num(j, "stats.expanded"), 0);
            ck_assert(it_truth(j, "found") && at >= 0);
            ck_assert_int_eq(got.n, route.n - at);
            for (int i = 0; i < got.n; i++)
                ck_assert(got.c[i].x == route.c[at + i].x && got.c[i].y == route.c[at + i].y);
        }
        cJSON_Delete(j);
        if (frame == CHASE_FRAMES) break;
        /* The next frame: the target walks, the agent steps along its path
         * (or, one frame in 25, jumps anywhere). */
        if (tu_below(rng, 2)) {
            for (int t = 0; t < 8; t++) {
                pf_point q = {goal.x + (int32_t)tu_below(rng, 3) - 1,
                              goal.y + (int32_t)tu_below(rng, 3) - 1};
                if (pf_grid_in_bounds(g, q) && pf_grid_cost(g, q) > 0) {
                    goal = q;
                    break;
                }
            }
        }
        if (tu_below(rng, 25) == 0)
            ck_assert(tu_random_walkable(rng, g, &agent));
        else if (got.n > 1)
            agent = got.c[1];
        snprintf(body, sizeof(body), "{\"position\":[%d,%d],\"goal\":[%d,%d]}", agent.x, agent.y,
                 goal.x, goal.y);
        j = it_session_update(s, url, "application/json", body, 200);
    }
}

START_TEST(routes_sessions_chase_policies) {
    static const chase_policy pols[] = {
        {"every update", "{}", 0, 0, 0},
        {"every 10 updates", "{\"min_updates\":10}", 0, 10, 0},
        {"threshold 3", "{\"goal_threshold\":3}", 3, 0, 0},
        {"threshold 2, every 4", "{\"goal_threshold\":2,\"min_updates\":4}", 2, 4, 0},
        {"every update, hysteresis 0.3", "{\"hysteresis\":0.3}", 0, 0, 0.3},
    };
    enum { NPOL = sizeof(pols) / sizeof(pols[0]) };
    uint64_t rng = tu_seed("routes_sessions_chase_policies", 0xc4a5e29);
    hc_server s = it_start(ARGS("--workers", "2"));
    char rows[CHASE_H][CHASE_W + 1], json[CHASE_H * (CHASE_W + 4) + 64], *p = json;
    const char *rp[CHASE_H];
    chase_counts cnt[NPOL], all;
    char *t;
    pf_grid *g;
    memset(cnt, 0, sizeof(cnt));
    memset(&all, 0, sizeof(all));
    /* A random map, one cell in six a wall, as JSON rows and as the
     * reference's grid. */
    p += sprintf(p, "{\"rows\":[");
    for (int y = 0; y < CHASE_H; y++) {
        for (int x = 0; x < CHASE_W; x++) rows[y][x] = tu_below(&rng, 6) == 0 ? '#' : '.';
        rows[y][CHASE_W] = '\0';
        rp[y] = rows[y];
        p += sprintf(p, "%s\"%s\"", y ? "," : "", rows[y]);
    }
    sprintf(p, "]}");
    g = tu_grid_from_ascii(rp, CHASE_H, 8);
    it_put_map(&s, "chase", "application/json", json, 201);
    for (int i = 0; i < NPOL; i++) {
        chase_one(&s, g, &pols[i], &rng, &cnt[i]);
        all.replans += cnt[i].replans;
        all.skipped += cnt[i].skipped;
        all.goal_moves += cnt[i].goal_moves;
        all.expanded += cnt[i].expanded;
        for (int k = 0; k < 9; k++) all.by_reason[k] += cnt[i].by_reason[k];
        fprintf(stderr, "chase %-30s replans %3d skipped %3d expanded %8.0f kept %d\n",
                pols[i].name, cnt[i].replans, cnt[i].skipped, cnt[i].expanded, cnt[i].kept);
    }
    /* Each policy did what it is for: fewer replans than every update. */
    for (int i = 1; i < 4; i++)
        ck_assert_msg(cnt[i].replans < cnt[0].replans, "%s: %d replans, every update %d",
                      pols[i].name, cnt[i].replans, cnt[0].replans);
    ck_assert_int_gt(cnt[1].by_reason[7], 0); /* interval */
    ck_assert_int_gt(cnt[2].by_reason[8], 0); /* threshold */
    ck_assert_int_gt(all.by_reason[2], 0);    /* off_route (the jumps) */
    ck_assert_int_gt(all.by_reason[4], 0);    /* goal_moved */
    /* /metrics counted what the answers said. */
    {
        hc_resp r = it_req(&s, "GET", "/metrics", NULL, NULL);
        ck_assert_int_eq(r.status, 200);
        t = strdup(r.body);
        hc_free(&r);
    }
    for (int k = 0; k < 9; k++) {
        char series[96];
        const char *line;
        snprintf(series, sizeof(series), "pathd_session_replans%s_total{reason=\"%s\"} ",
                 k <= 5 ? "" : "_skipped", chase_reasons[k]);
        line = strstr(t, series);
        ck_assert_msg(line, "no %s", series);
        ck_assert_msg(strtod(line + strlen(series), NULL) == all.by_reason[k], "%s%s, counted %d",
                      series, line + strlen(series), all.by_reason[k]);
    }
    {
        const char *inc = strstr(t, "pathd_session_goal_moves_total{how=\"incremental\"} "),
                   *fresh = strstr(t, "pathd_session_goal_moves_total{how=\"fresh\"} "),
                   *exp = strstr(t, "pathd_expanded_total{algorithm=\"dstar\"} ");
        double ni, nf;
        ck_assert(inc && fresh && exp);
        ni = strtod(strchr(inc, '}') + 2, NULL);
        nf = strtod(strchr(fresh, '}') + 2, NULL);
        ck_assert_double_eq(ni + nf, all.goal_moves);
        ck_assert_double_gt(ni, nf); /* the search kept on most goal moves */
        ck_assert_double_eq(strtod(strchr(exp, '}') + 2, NULL), all.expanded);
    }
    free(t);
    pf_grid_destroy(g);
    it_stop(&s);
}
END_TEST

/* The policy's fields: each bad value named, nothing changed by a refused
 * update; an update changes the policy from that request on. */
START_TEST(routes_sessions_replan_policy_fields) {
    static const struct {
        const char *member, *field;
    } bad[] = {
        {"\"replan\":{\"goal_threshold\":-1}", "replan.goal_threshold"},
        {"\"replan\":{\"goal_threshold\":1e9}", "replan.goal_threshold"},
        {"\"replan\":{\"hysteresis\":0.95}", "replan.hysteresis"},
        {"\"replan\":{\"min_interval_ms\":3600001}", "replan.min_interval_ms"},
        {"\"replan\":{\"min_updates\":-2}", "replan.min_updates"},
        {"\"replan\":{\"min_updates\":1.5}", "replan.min_updates"},
        {"\"replan\":{\"often\":true}", "replan.often"},
        {"\"replan\":[1]", "replan"},
    };
    hc_server s = it_start(ARGS("--workers", "2", "--session-goal-threshold", "2",
                                "--session-min-replan-interval-ms", "3600000"));
    char url[160], upd[200], body[200], *before;
    cJSON *j;
    it_put_door_map(&s, "d");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hc_resp r;
        snprintf(body, sizeof(body), "{\"start\":[0,3],\"goal\":[9,3],%s}", bad[i].member);
        r = it_req(&s, "POST", "/v1/maps/d/sessions", "application/json", body);
        ck_assert_msg(r.status == 422 || r.status == 400, "%s: %d", bad[i].member, r.status);
        it_expect_error(&r, r.status, r.status == 422 ? "invalid_value" : "invalid_request",
                        bad[i].field);
        hc_free(&r);
    }
    /* The server's defaults, and its floor on the interval: an hour, so
     * that no replan here but the forced ones is allowed, whatever the
     * clock says between two requests. */
    j = it_session_create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url));
    ck_assert_double_eq(it_num(j, "replan.policy.goal_threshold"), 2);
    ck_assert_int_eq((int)it_num(j, "replan.policy.min_interval_ms"), 3600000);
    ck_assert_str_eq(it_str(j, "replan.reason"), "initial");
    cJSON_Delete(j);
    snprintf(upd, sizeof(upd), "%s/updates", url);
    before = state_of(&s, url);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hc_resp r;
        snprintf(body, sizeof(body), "{\"goal\":[9,2],%s}", bad[i].member);
        r = it_req(&s, "POST", upd, "application/json", body);
        ck_assert_msg(r.status == 422 || r.status == 400, "%s: %d", bad[i].member, r.status);
        hc_free(&r);
        {
            char *now = state_of(&s, url);
            ck_assert_str_eq(now, before);
            free(now);
        }
    }
    free(before);
    /* A goal move of one cell: within the threshold, the kept route. */
    j = it_session_update(&s, url, "application/json", "{\"goal\":[9,2]}", 200);
    ck_assert_str_eq(it_str(j, "replan.reason"), "threshold");
    ck_assert(!it_truth(j, "replan.replanned"));
    ck_assert_int_eq((int)it_num(j, "stats.expanded"), 0);
    it_path_ends(j, 0, 3, 9, 3);
    cJSON_Delete(j);
    /* The policy changed by an update, that update already under it: any
     * goal move asks for a replan now, and the interval holds it back (the
     * floor wins over the 0 asked for). */
    j = it_session_update(&s, url, "application/json",
                          "{\"goal\":[9,1],\"replan\":{\"goal_threshold\":0,"
                          "\"min_interval_ms\":0}}",
                          200);
    ck_assert_str_eq(it_str(j, "replan.reason"), "interval");
    ck_assert(!it_truth(j, "replan.replanned"));
    ck_assert_double_eq(it_num(j, "replan.policy.goal_threshold"), 0);
    ck_assert_int_eq((int)it_num(j, "replan.policy.min_interval_ms"), 3600000);
    it_path_ends(j, 0, 3, 9, 3);
    cJSON_Delete(j);
    /* The session's own wall across its route: blocked, replanned whatever
     * the policy, to the goal as it is now. */
    j = it_session_update(&s, url, "application/json",
                          "{\"replan\":{\"min_updates\":1000},\"cells\":[{\"x\":4,\"y\":3,"
                          "\"blocked\":true}]}",
                          200);
    ck_assert_str_eq(it_str(j, "replan.reason"), "blocked");
    ck_assert(it_truth(j, "replan.replanned"));
    ck_assert_int_eq((int)it_num(j, "replan.policy.min_updates"), 1000);
    /* The gate was the only way (the hatch is shut): the route is lost. */
    ck_assert(!it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "replan.route"), "lost");
    cJSON_Delete(j);
    /* The session opens the hatch: no route to follow, so it replans at
     * once (initial), the interval notwithstanding. */
    j = it_session_update(&s, url, "application/json",
                          "{\"doors\":[{\"id\":\"hatch\",\"open\":true}]}", 200);
    ck_assert_str_eq(it_str(j, "replan.reason"), "initial");
    ck_assert(it_truth(j, "found") && it_path_has(j, 4, 0));
    it_path_ends(j, 0, 3, 9, 1);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.session_goal_threshold"), 2);
    ck_assert_int_eq((int)it_num(j, "limits.session_min_replan_interval_ms"), 3600000);
    ck_assert_int_eq((int)it_num(j, "limits.session_replan_updates"), 0);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* Hysteresis keeping a route (issue 29): two routes of equal cost round a
 * block; the session takes one. A cost on a cell of it (the session's own
 * change) makes the other way cheaper by about a tenth. With hysteresis 0.3
 * the session keeps its way (route "kept", no flip, the answer's cost the
 * kept way's, above the optimum and within 1/(1-h) of it); without, it
 * switches sides: a flip, and pathd_session_route_flips_total counts it
 * (one flip in all). */
START_TEST(routes_sessions_hysteresis_keeps_route) {
    static const char map[] = "{\"rows\":[\".........\",\".........\",\"...###...\","
                              "\"...###...\",\"...###...\",\".........\",\".........\"]}";
    static const double hs[2] = {0.3, 0};
    hc_server s = it_start(ARGS("--workers", "2"));
    it_put_map(&s, "block", "application/json", map, 201);
    int flips = 0;
    for (int k = 0; k < 2; k++) {
        char url[160], extra[64], body[96];
        cJSON *j;
        snprintf(extra, sizeof(extra), ",\"replan\":{\"hysteresis\":%g}", hs[k]);
        j = it_session_create(&s, "block", 0, 3, 8, 3, extra, url, sizeof(url));
        const bool top = it_path_has(j, 4, 1), bottom = it_path_has(j, 4, 5);
        ck_assert_msg(top != bottom, "the route passes the block on one side");
        const double first = it_num(j, "cost");
        cJSON_Delete(j);
        /* Its way round the block costs more now (the session's view). */
        snprintf(body, sizeof(body), "{\"cells\":[{\"x\":4,\"y\":%d,\"cost\":2}]}", top ? 1 : 5);
        j = it_session_update(&s, url, "application/json", body, 200);
        ck_assert_str_eq(it_str(j, "replan.reason"), "map_changed");
        ck_assert(it_truth(j, "replan.replanned"));
        const double optimum = first; /* the other side, untouched */
        const double cost = it_num(j, "cost");
        if (hs[k] > 0) {
            ck_assert_str_eq(it_str(j, "replan.route"), "kept");
            ck_assert(!it_truth(j, "replan.flip"));
            ck_assert(it_path_has(j, 4, top ? 1 : 5) && !it_path_has(j, 4, top ? 5 : 1));
            ck_assert_msg(cost > optimum + 0.5 && cost <= optimum / (1 - hs[k]) + 1e-9,
                          "kept cost %g, optimum %g", cost, optimum);
        } else {
            ck_assert_str_eq(it_str(j, "replan.route"), "switched");
            ck_assert(it_truth(j, "replan.flip"));
            ck_assert(it_path_has(j, 4, top ? 5 : 1) && !it_path_has(j, 4, top ? 1 : 5));
            ck_assert_double_eq_tol(cost, optimum, 1e-6);
            flips++;
        }
        it_path_ends(j, 0, 3, 8, 3);
        cJSON_Delete(j);
    }
    {
        hc_resp r = it_req(&s, "GET", "/metrics", NULL, NULL);
        const char *f = strstr(r.body, "\npathd_session_route_flips_total ");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq((int)strtod(f + strlen("\npathd_session_route_flips_total "), NULL),
                         flips);
        ck_assert_int_eq(flips, 1);
        hc_free(&r);
    }
    it_stop(&s);
}
END_TEST

/* The goal of a navmesh corridor session slides along its corridor
 * (issue 29, Detour's moveTargetPosition): a small goal move is followed
 * without a search (reason target_adjusted, route adjusted, the path ends
 * at the new goal), until the moves since the last plan add up past
 * --nav-target-slide-pct of the search box (then goal_moved, a plan); a
 * goal that stopped where it slid to is "unchanged"; a move through a wall
 * plans anew. /metrics counts the slides as incremental goal moves and as
 * skipped replans. With --nav-target-slide-pct 0 every goal move plans. */
START_TEST(routes_sessions_navmesh_target_slides) {
    for (int off = 0; off < 2; off++) {
        hc_server s = it_start(off ? ARGS("--nav-target-slide-pct", "0") : NULL);
        char url[200], *text = it_open_map_text(24, 9), *env = it_nav_envelope(text, NULL);
        char body[96];
        cJSON *j;
        hc_resp r;
        float p[3];
        int slides = 0, plans = 0;
        free(text);
        it_put_map(&s, "n", "application/json", env, 201);
        free(env);
        r = it_req(&s, "POST", "/v1/maps/n/sessions", "application/json",
                   "{\"start\":[1.5,0,1.5],\"goal\":[10.5,0,1.5]}");
        ck_assert_int_eq(r.status, 201);
        ck_assert_ptr_nonnull(hc_header(&r, "Location", url, sizeof(url)));
        hc_free(&r);
        /* Steps of 0.2 along x: slides, then a plan once they add up. */
        for (int i = 1; i <= 40 && plans < 2; i++) {
            const float gx = 10.5f + 0.2f * (float)i;
            snprintf(body, sizeof(body), "{\"goal\":[%.1f,0,1.5]}", (double)gx);
            j = it_session_update(&s, url, "application/json", body, 200);
            const int n = it_nav_npoints(j);
            it_nav_point(j, n - 1, p);
            ck_assert_float_eq_tol(p[0], gx, 1e-3f);
            ck_assert_float_eq_tol(p[2], 1.5f, 1e-3f);
            if (it_truth(j, "replan.replanned")) {
                ck_assert_str_eq(it_str(j, "replan.reason"), "goal_moved");
                ck_assert_str_eq(it_str(j, "replan.route"), "new");
                plans++;
            } else {
                ck_assert_msg(!off, "slides are off, yet step %d slid", i);
                ck_assert_str_eq(it_str(j, "replan.reason"), "target_adjusted");
                ck_assert_str_eq(it_str(j, "replan.route"), "adjusted");
                ck_assert_int_eq((int)it_num(j, "stats.expanded"), 0);
                slides++;
            }
            cJSON_Delete(j);
        }
        ck_assert_int_eq(plans, 2);
        if (!off) {
            ck_assert_int_gt(slides, 1);
            /* A slide, then the goal stays: nothing to do. */
            j = it_call(&s, "GET", url, NULL, NULL, 200);
            it_nav_point(j, it_nav_npoints(j) - 1, p);
            cJSON_Delete(j);
            snprintf(body, sizeof(body), "{\"goal\":[%.1f,0,1.5]}", (double)p[0] + 0.2);
            j = it_session_update(&s, url, "application/json", body, 200);
            ck_assert_str_eq(it_str(j, "replan.reason"), "target_adjusted");
            cJSON_Delete(j);
            slides++;
            j = it_session_update(&s, url, "application/json", "{\"position\":[1.5,0,1.5]}", 200);
            ck_assert_str_eq(it_str(j, "replan.reason"), "unchanged");
            ck_assert(!it_truth(j, "replan.replanned"));
            cJSON_Delete(j);
        }
        /* Through the wall: the goal is just below it, a plan. */
        j = it_session_update(&s, url, "application/json", "{\"goal\":[10.5,0,5.5]}", 200);
        ck_assert_str_eq(it_str(j, "replan.reason"), "goal_moved");
        ck_assert(it_truth(j, "replan.replanned"));
        cJSON_Delete(j);
        {
            hc_resp m = it_req(&s, "GET", "/metrics", NULL, NULL);
            const char *inc =
                           strstr(m.body, "pathd_session_goal_moves_total{how=\"incremental\"} "),
                       *sk = strstr(
                           m.body,
                           "pathd_session_replans_skipped_total{reason=\"target_adjusted\"} ");
            ck_assert(inc && sk);
            ck_assert_int_eq((int)strtod(strchr(inc, '}') + 2, NULL), slides);
            ck_assert_int_eq((int)strtod(strchr(sk, '}') + 2, NULL), slides);
            hc_free(&m);
        }
        it_stop(&s);
    }
}
END_TEST

/* A serpentine n x n map: every other row a wall with one gap, at the
 * right end and the left end by turns, so a plan from (0, 0) to (0, n-1)
 * expands about half the map. Free with free(). */
static char *serpentine_map(int n) {
    size_t cap = (size_t)n * (size_t)(n + 1) + 64, len;
    char *t = malloc(cap);
    ck_assert_ptr_nonnull(t);
    len = (size_t)snprintf(t, cap, "type octile\nheight %d\nwidth %d\nmap\n", n, n);
    for (int y = 0; y < n; y++) {
        for (int x = 0; x < n; x++) {
            bool wall = y % 2 == 1 && x != (y % 4 == 1 ? n - 1 : 0);
            t[len++] = wall ? '@' : '.';
        }
        t[len++] = '\n';
    }
    t[len] = 0;
    return t;
}

/* A session's max_expanded and deadline_ms bound every plan: a plan they
 * stop answers found false with reason node_budget or deadline, and the
 * next request goes on with the same repair (D* Lite keeps its state), so
 * the reads end at the unlimited session's path and cost, and together
 * expand as much as it did (no work lost, none redone). A navmesh session
 * refuses both; deadline_ms past the server's max_deadline_ms is 422. */
START_TEST(routes_sessions_plan_limits) {
    hc_server s = it_start(ARGS("--max-deadline-ms", "60000"));
    char url[160], url2[160];
    char *map = serpentine_map(128);
    cJSON *free_run, *a;
    int reads;
    uint64_t expanded, full;
    double cost;
    it_put_map(&s, "snake", "text/x-movingai-map", map, 201);
    free(map);
    free_run = it_session_create(&s, "snake", 0, 0, 0, 127, NULL, url, sizeof(url));
    ck_assert(it_truth(free_run, "found"));
    cost = it_num(free_run, "cost");
    full = (uint64_t)it_num(free_run, "stats.expanded");
    ck_assert_uint_gt(full, 4000);
    {
        bool found;
        ck_assert_double_eq_tol(
            path_cost(&s, "snake", 0, 0, 0, 127, ",\"algorithm\":\"dijkstra\"", &found, NULL, NULL),
            cost, 1e-6);
    }

    a = it_session_create(&s, "snake", 0, 0, 0, 127, ",\"max_expanded\":500", url2, sizeof(url2));
    ck_assert(!it_truth(a, "found"));
    a = it_session_read_until_found(&s, a, url2, "node_budget", 500, &reads, &expanded);
    ck_assert_double_eq_tol(it_num(a, "cost"), cost, 1e-9);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "path")),
                     cJSON_GetArraySize(cJSON_GetObjectItem(free_run, "path")));
    ck_assert_int_ge(reads, (int)(full / 500));
    ck_assert_uint_eq(expanded, full);
    fprintf(
        stderr,
        "routes_sessions_plan_limits: max_expanded 500: %d reads, %llu expanded (%llu unlimited)\n",
        reads, (unsigned long long)expanded, (unsigned long long)full);
    cJSON_Delete(a);
    cJSON_Delete(free_run);

    /* 1 ms against a plan of more than 100,000 expansions: it stops at a
     * read of the clock (every 4,096), and goes on. */
    map = serpentine_map(512);
    it_put_map(&s, "long", "text/x-movingai-map", map, 201);
    free(map);
    free_run = it_session_create(&s, "long", 0, 0, 0, 511, NULL, url, sizeof(url));
    full = (uint64_t)it_num(free_run, "stats.expanded");
    ck_assert_uint_gt(full, 100000);
    a = it_session_create(&s, "long", 0, 0, 0, 511, ",\"deadline_ms\":1", url2, sizeof(url2));
    ck_assert(!it_truth(a, "found"));
    a = it_session_read_until_found(&s, a, url2, "deadline", 0, &reads, &expanded);
    ck_assert_double_eq_tol(it_num(a, "cost"), it_num(free_run, "cost"), 1e-9);
    ck_assert_uint_eq(expanded, full);
    ck_assert_int_ge(reads, 2);
    fprintf(stderr, "routes_sessions_plan_limits: deadline_ms 1: %d reads, %llu expanded\n", reads,
            (unsigned long long)expanded);
    cJSON_Delete(a);
    cJSON_Delete(free_run);

    it_call_error(&s, "POST", "/v1/maps/snake/sessions", "application/json",
                  "{\"start\":[0,0],\"goal\":[0,127],\"deadline_ms\":60001}", 422, "invalid_value",
                  "deadline_ms");
    it_call_error(&s, "POST", "/v1/maps/snake/sessions", "application/json",
                  "{\"start\":[0,0],\"goal\":[0,127],\"deadline_ms\":0}", 422, "invalid_value",
                  "deadline_ms");
    it_call_error(&s, "POST", "/v1/maps/snake/sessions", "application/json",
                  "{\"start\":[0,0],\"goal\":[0,127],\"max_expanded\":-1}", 422, "invalid_value",
                  "max_expanded");
    it_call_error(&s, "POST", "/v1/maps/snake/sessions", "application/json",
                  "{\"start\":[0,0],\"goal\":[0,127],\"max_expanded\":\"9\"}", 400,
                  "invalid_request", "max_expanded");
    it_put_nav_open(&s, "nav", 8, 8);
    it_call_error(&s, "POST", "/v1/maps/nav/sessions", "application/json",
                  "{\"start\":[0.5,0,0.5],\"goal\":[6.5,0,6.5],\"max_expanded\":100}", 422,
                  "invalid_value", "max_expanded");
    it_call_error(&s, "POST", "/v1/maps/nav/sessions", "application/json",
                  "{\"start\":[0.5,0,0.5],\"goal\":[6.5,0,6.5],\"deadline_ms\":100}", 422,
                  "invalid_value", "deadline_ms");
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_sessions) {
    Suite *s = suite_create("routes_sessions");
    TCase *tc = tcase_create("routes_sessions");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_sessions_create_read_delete);
    tcase_add_test(tc, routes_sessions_updates_json_and_ndjson);
    tcase_add_test(tc, routes_sessions_private_changes_stay_private);
    tcase_add_test(tc, routes_sessions_wall_door);
    tcase_add_test(tc, routes_sessions_patch_seen_by_all);
    tcase_add_test(tc, routes_sessions_bad_updates_leave_session_unchanged);
    tcase_add_test(tc, routes_sessions_ttl_expiry);
    tcase_add_test(tc, routes_sessions_per_map_limit);
    tcase_add_test(tc, routes_sessions_map_delete_or_replace_ends_sessions);
    tcase_add_test(tc, routes_sessions_navmesh_corridor);
    tcase_add_test(tc, routes_sessions_list_pages);
    tcase_add_test(tc, routes_sessions_agent_size);
    tcase_add_test(tc, routes_sessions_chase_policies);
    tcase_add_test(tc, routes_sessions_replan_policy_fields);
    tcase_add_test(tc, routes_sessions_hysteresis_keeps_route);
    tcase_add_test(tc, routes_sessions_navmesh_target_slides);
    tcase_add_test(tc, routes_sessions_plan_limits);
    suite_add_tcase(s, tc);
    return s;
}
