/* test_routes_graph_sessions.c -- sessions on waypoint graph maps over
 * HTTP (server/kind_graph_session.c): create between node ids or points
 * snapped to nodes, agent and goal moves, repair after a map PATCH, each
 * answer's cost against a fresh path query's on the same version (also
 * through a random interleaving on a random graph), the replan policy's
 * reasons, NDJSON updates, the session stream (and its short answers) and
 * the multiplexed /v1/stream, delete, refusals naming the field, and the
 * metrics' graph_dstar_lite label. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "testutil.h"
#include "wsc.h"

/* A square room a-b-c-4 (10 apart) with a diagonal a-c costing 100, a
 * one-way shortcut 4->a, and "far" alone. */
static const char room_json[] =
    "{\"kind\":\"graph\",\"nodes\":["
    "{\"id\":\"a\",\"position\":[0,0]},{\"id\":\"b\",\"position\":[10,0]},"
    "{\"id\":\"c\",\"position\":[10,10]},{\"id\":4,\"position\":[0,10]},"
    "{\"id\":\"far\",\"position\":[100,100]}],"
    "\"edges\":[{\"from\":\"a\",\"to\":\"b\",\"id\":\"ab\"},{\"from\":\"b\",\"to\":\"c\"},"
    "{\"from\":\"c\",\"to\":4},{\"from\":4,\"to\":\"a\",\"cost\":1,\"oneway\":true},"
    "{\"from\":\"a\",\"to\":\"c\",\"cost\":100}]}";

/* Creates a session (201) and writes its URL. */
static cJSON *create(const hc_server *s, const char *map, const char *body, char *url, size_t cap) {
    char p[128];
    cJSON *j;
    snprintf(p, sizeof(p), "/v1/maps/%s/sessions", map);
    j = it_call(s, "POST", p, "application/json", body, 201);
    snprintf(url, cap, "/v1/maps/%s/sessions/%s", map, it_str(j, "session_id"));
    return j;
}

static cJSON *update(const hc_server *s, const char *url, const char *body) {
    char p[200];
    snprintf(p, sizeof(p), "%s/updates", url);
    return it_call(s, "POST", p, "application/json", body, 200);
}

/* A fresh path query's cost between two ids given as JSON values, or -1
 * when it finds none. */
static double fresh_cost(const hc_server *s, const char *map, const char *a, const char *b) {
    char p[128], body[256];
    hc_resp r;
    cJSON *j;
    double c = -1;
    snprintf(p, sizeof(p), "/v1/maps/%s/path", map);
    snprintf(body, sizeof(body), "{\"start\":%s,\"goal\":%s,\"cache\":false}", a, b);
    r = it_req(s, "POST", p, "application/json", body);
    j = it_json(&r);
    if (r.status == 200 && it_truth(j, "found")) c = it_num(j, "cost");
    cJSON_Delete(j);
    hc_free(&r);
    return c;
}

START_TEST(routes_graph_sessions_create_move_patch) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160], p[200];
    cJSON *j;
    it_put_map(&s, "g", "application/json", room_json, 201);
    /* Between ids: a to 4 costs 30 (a-b-c-4). */
    j = create(&s, "g", "{\"start\":\"a\",\"goal\":4}", url, sizeof(url));
    ck_assert(it_truth(j, "found"));
    ck_assert_double_eq_tol(it_num(j, "cost"), 30, 1e-9);
    ck_assert_double_eq_tol(it_num(j, "cost"), fresh_cost(&s, "g", "\"a\"", "4"), 1e-9);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "path")), 4);
    ck_assert_str_eq(it_str(j, "path.0"), "a");
    ck_assert_int_eq((int)it_num(j, "path.3"), 4); /* an integer id stays one */
    ck_assert_int_eq((int)it_num(j, "edges.0"), 0);
    ck_assert_double_eq(it_num(j, "points.1.0"), 10);
    ck_assert_str_eq(it_str(j, "position"), "a");
    ck_assert_int_eq((int)it_num(j, "goal"), 4);
    ck_assert_str_eq(it_str(j, "algorithm"), "dstar_lite");
    ck_assert_str_eq(it_str(j, "replan.reason"), "initial");
    ck_assert_int_gt((int)it_num(j, "stats.expanded"), 0);
    cJSON_Delete(j);
    /* The agent steps along its path: the kept route, no search. */
    j = update(&s, url, "{\"position\":\"b\"}");
    ck_assert_double_eq_tol(it_num(j, "cost"), 20, 1e-9);
    ck_assert_str_eq(it_str(j, "path.0"), "b");
    ck_assert(!it_truth(j, "replan.replanned"));
    ck_assert_int_eq((int)it_num(j, "stats.expanded"), 0);
    cJSON_Delete(j);
    /* A goal move replans (threshold 0) and reuses the search. */
    j = update(&s, url, "{\"goal\":\"c\"}");
    ck_assert_str_eq(it_str(j, "replan.reason"), "goal_moved");
    ck_assert(it_truth(j, "replan.replanned"));
    ck_assert_double_eq_tol(it_num(j, "cost"), 10, 1e-9);
    ck_assert_double_eq_tol(it_num(j, "cost"), fresh_cost(&s, "g", "\"b\"", "\"c\""), 1e-9);
    cJSON_Delete(j);
    /* A PATCH disables b-c (index 1): the session repairs on version 2. */
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/g", "application/json",
                         "{\"edges\":[{\"index\":1,\"enabled\":false}]}", 200));
    j = update(&s, url, "{\"position\":\"b\"}");
    ck_assert_int_eq((int)it_num(j, "map_version"), 2);
    ck_assert_str_eq(it_str(j, "stats.rebase"), "incremental");
    ck_assert(it_truth(j, "replan.replanned"));
    /* b to c now: b-a-c = 10 + 100. */
    ck_assert_double_eq_tol(it_num(j, "cost"), 110, 1e-9);
    ck_assert_double_eq_tol(it_num(j, "cost"), fresh_cost(&s, "g", "\"b\"", "\"c\""), 1e-9);
    cJSON_Delete(j);
    /* Points snap: [1, 9] is node 4; [x, y, 0] works on a 2D graph. */
    j = update(&s, url, "{\"position\":[1,9],\"goal\":[0.5,0.5,0]}");
    ck_assert_int_eq((int)it_num(j, "position"), 4);
    ck_assert_str_eq(it_str(j, "goal"), "a");
    ck_assert_double_eq_tol(it_num(j, "cost"), 1, 1e-9);
    cJSON_Delete(j);
    /* NDJSON: two lines applied in order. */
    snprintf(p, sizeof(p), "%s/updates", url);
    j = it_call(&s, "POST", p, "application/x-ndjson", "{\"position\":\"a\"}\n{\"goal\":\"far\"}\n",
                200);
    ck_assert(!it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "reason"), "unreachable");
    ck_assert_int_eq((int)it_num(j, "stats.updates"), 2);
    cJSON_Delete(j);
    /* The metrics count the sessions' search under its own label. */
    {
        hc_resp r = it_req(&s, "GET", "/metrics", NULL, NULL);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.body, "graph_dstar_lite"));
        hc_free(&r);
    }
    /* GET lists it with its places as node ids; delete; gone. */
    j = it_call(&s, "GET", url, NULL, NULL, 200);
    cJSON_Delete(j);
    it_call(&s, "DELETE", url, NULL, NULL, 204);
    it_call_error(&s, "GET", url, NULL, NULL, 404, "session_not_found", NULL);
    it_stop(&s);
}
END_TEST

START_TEST(routes_graph_sessions_refusals) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160], p[200];
    it_put_map(&s, "g", "application/json", room_json, 201);
    it_call_error(&s, "POST", "/v1/maps/g/sessions", "application/json",
                  "{\"start\":\"a\",\"goal\":\"nope\"}", 422, "invalid_value", "goal");
    it_call_error(&s, "POST", "/v1/maps/g/sessions", "application/json",
                  "{\"start\":\"a\",\"goal\":[1,1]}", 400, "invalid_request", "goal");
    it_call_error(&s, "POST", "/v1/maps/g/sessions", "application/json",
                  "{\"start\":\"a\",\"goal\":\"b\",\"agent_size\":2}", 422, "invalid_value",
                  "agent_size");
    it_call_error(&s, "POST", "/v1/maps/g/sessions", "application/json",
                  "{\"start\":[1,1,5],\"goal\":[1,1,0]}", 422, "invalid_value", "start");
    it_call_error(&s, "POST", "/v1/maps/g/sessions", "application/json",
                  "{\"start\":\"\",\"goal\":\"b\"}", 422, "invalid_value", "start");
    cJSON_Delete(create(&s, "g", "{\"start\":\"a\",\"goal\":\"c\"}", url, sizeof(url)));
    snprintf(p, sizeof(p), "%s/updates", url);
    it_call_error(&s, "POST", p, "application/json", "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":0}]}",
                  400, "invalid_request", "cells");
    it_call_error(&s, "POST", p, "application/json", "{\"position\":\"zz\"}", 422, "invalid_value",
                  "position");
    it_call_error(&s, "POST", p, "application/x-ndjson",
                  "{\"position\":\"b\"}\n{\"goal\":\"zz\"}\n", 422, "invalid_value",
                  "lines[1].goal");
    /* Nothing of a refused update was applied. */
    {
        cJSON *j = update(&s, url, "{\"goal\":\"c\"}");
        ck_assert_str_eq(it_str(j, "position"), "a");
        cJSON_Delete(j);
    }
    /* A grid session does not take a node id. */
    {
        char *text = it_open_map_text(8, 8);
        it_put_map(&s, "grid", "text/x-movingai-map", text, 201);
        free(text);
        it_call_error(&s, "POST", "/v1/maps/grid/sessions", "application/json",
                      "{\"start\":\"a\",\"goal\":\"b\"}", 400, "invalid_request", "start");
    }
    it_stop(&s);
}
END_TEST

/* A random graph uploaded, a session through random PATCHes, agent moves
 * and goal moves; after each, its answer against a fresh path query. */
START_TEST(routes_graph_sessions_random_against_fresh) {
    hc_server s = it_start(ARGS("--workers", "2"));
    uint64_t st = tu_seed("routes_graph_sessions_random_against_fresh", 2805);
    char url[160], buf[8192], a[16], b[16];
    size_t n = 0;
    int nn = 30, ne = 60, mismatches = 0, first = -1;
    cJSON *j;
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "{\"kind\":\"graph\",\"nodes\":[");
    for (int i = 0; i < nn; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s{\"id\":%d,\"position\":[%u,%u]}",
                              i ? "," : "", i, tu_below(&st, 50), tu_below(&st, 50));
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "],\"edges\":[");
    for (int e = 0; e < ne; e++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                              "%s{\"from\":%u,\"to\":%u,\"cost\":%u,\"oneway\":%s}", e ? "," : "",
                              tu_below(&st, (uint32_t)nn), tu_below(&st, (uint32_t)nn),
                              tu_below(&st, 60), tu_below(&st, 3) ? "false" : "true");
    snprintf(buf + n, sizeof(buf) - n, "]}");
    it_put_map(&s, "r", "application/json", buf, 201);
    cJSON_Delete(create(&s, "r", "{\"start\":0,\"goal\":1}", url, sizeof(url)));
    for (int step = 0; step < 60; step++) {
        uint32_t what = tu_below(&st, 3);
        if (what == 0) {
            snprintf(buf, sizeof(buf),
                     "{\"edges\":[{\"index\":%u,\"cost\":%u},{\"index\":%u,\"enabled\":%s}],"
                     "\"nodes\":[{\"id\":\"%u\",\"enabled\":%s}]}",
                     tu_below(&st, (uint32_t)ne), tu_below(&st, 60), tu_below(&st, (uint32_t)ne),
                     tu_below(&st, 2) ? "true" : "false", 2 + tu_below(&st, (uint32_t)nn - 2),
                     tu_below(&st, 3) ? "true" : "false");
            cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/r", "application/json", buf, 200));
            j = update(&s, url, "{\"replan\":{\"goal_threshold\":0}}");
        } else {
            snprintf(buf, sizeof(buf), "{\"%s\":%u}", what == 1 ? "position" : "goal",
                     tu_below(&st, (uint32_t)nn));
            j = update(&s, url, buf);
        }
        snprintf(a, sizeof(a), "%d", (int)it_num(j, "position"));
        snprintf(b, sizeof(b), "%d", (int)it_num(j, "goal"));
        {
            double want = fresh_cost(&s, "r", a, b);
            double got = it_truth(j, "found") ? it_num(j, "cost") : -1;
            if (fabs(want - got) > 1e-6 && !mismatches++) first = step;
        }
        cJSON_Delete(j);
    }
    ck_assert_msg(mismatches == 0, "%d answers differ from a fresh path query; first at step %d",
                  mismatches, first);
    it_stop(&s);
}
END_TEST

/* The session stream (short answers when the route did not change) and
 * the multiplexed /v1/stream (create and update on a graph map). */
START_TEST(routes_graph_sessions_streams) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160], path[200], sid[64];
    const char *m;
    int fd, status, op;
    char *msg;
    size_t len;
    cJSON *j;
    it_put_map(&s, "g", "application/json", room_json, 201);
    cJSON_Delete(create(&s, "g", "{\"start\":\"a\",\"goal\":\"c\"}", url, sizeof(url)));
    snprintf(path, sizeof(path), "%s/stream", url);
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake failed: %d", status);
    m = "{\"position\":\"a\"}";
    ck_assert_int_eq(wsc_send(fd, 1, m, strlen(m)), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    j = it_json_text(msg);
    free(msg);
    ck_assert_double_eq_tol(it_num(j, "cost"), 20, 1e-9);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "path")), 3);
    cJSON_Delete(j);
    /* Along the route: the stream has it, the answer is short. */
    m = "{\"position\":\"b\"}";
    ck_assert_int_eq(wsc_send(fd, 1, m, strlen(m)), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    j = it_json_text(msg);
    free(msg);
    ck_assert(it_truth(j, "unchanged"));
    ck_assert_double_eq_tol(it_num(j, "cost"), 10, 1e-9);
    ck_assert_str_eq(it_str(j, "position"), "b");
    cJSON_Delete(j);
    /* A refused update names its field and changes nothing. */
    m = "{\"goal\":\"zz\"}";
    ck_assert_int_eq(wsc_send(fd, 1, m, strlen(m)), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    j = it_json_text(msg);
    free(msg);
    ck_assert_str_eq(it_str(j, "error.field"), "goal");
    cJSON_Delete(j);
    wsc_close(fd);

    fd = wsc_connect(s.port, "/v1/stream", &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake failed: %d", status);
    m = "{\"op\":\"create\",\"map\":\"g\",\"tag\":1,\"create\":{\"start\":\"a\",\"goal\":4}}";
    ck_assert_int_eq(wsc_send(fd, 1, m, strlen(m)), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    j = it_json_text(msg);
    free(msg);
    ck_assert_int_eq((int)it_num(j, "status"), 201);
    ck_assert_str_eq(it_str(j, "op"), "create");
    ck_assert_double_eq_tol(it_num(j, "body.cost"), 30, 1e-9);
    snprintf(sid, sizeof(sid), "%s", it_str(j, "session"));
    cJSON_Delete(j);
    {
        char upd[256];
        snprintf(upd, sizeof(upd),
                 "{\"op\":\"update\",\"map\":\"g\",\"session\":\"%s\",\"tag\":2,"
                 "\"update\":{\"goal\":\"c\"}}",
                 sid);
        ck_assert_int_eq(wsc_send(fd, 1, upd, strlen(upd)), 0);
        ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
        j = it_json_text(msg);
        free(msg);
        ck_assert_int_eq((int)it_num(j, "status"), 200);
        ck_assert_int_eq((int)it_num(j, "tag"), 2);
        ck_assert_double_eq_tol(it_num(j, "body.cost"), 20, 1e-9);
        ck_assert_str_eq(it_str(j, "body.replan.reason"), "goal_moved");
        cJSON_Delete(j);
        m = "{\"op\":\"create\",\"map\":\"g\",\"create\":{\"start\":\"a\",\"goal\":\"zz\"}}";
        ck_assert_int_eq(wsc_send(fd, 1, m, strlen(m)), 0);
        ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
        j = it_json_text(msg);
        free(msg);
        ck_assert_int_eq((int)it_num(j, "status"), 422);
        ck_assert_str_eq(it_str(j, "body.error.field"), "create.goal");
        cJSON_Delete(j);
    }
    wsc_close(fd);
    it_stop(&s);
}
END_TEST

/* A session is charged to --max-memory: its search's records (32 bytes
 * and more a node of the graph) show in /v1/info's memory.sessions_bytes;
 * under a budget of 6 MB (the 20,000-node upload reserves 4.5 MB while
 * it builds and holds less; no ALT landmarks, which would add 4 MB)
 * sessions are created until one does not fit: 507, and the refusal keeps
 * nothing. */
START_TEST(routes_graph_sessions_memory) {
    const int n = 20000;
    char *body = it_graph_chain_json(n);
    hc_server s =
        it_start(ARGS("--workers", "1", "--max-memory", "6000000", "--graph-landmarks", "0"));
    double before, after = 0;
    int made = 0, refused = 0;
    cJSON *j;
    it_put_map(&s, "c", "application/json", body, 201);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    before = it_num(j, "memory.sessions_bytes");
    cJSON_Delete(j);
    while (made < 10 && !refused) {
        hc_resp r = it_req(&s, "POST", "/v1/maps/c/sessions", "application/json",
                           "{\"start\":0,\"goal\":19999}");
        if (r.status == 201) {
            made++;
            j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
            after = it_num(j, "memory.sessions_bytes");
            cJSON_Delete(j);
            ck_assert_double_ge(after, before + 32.0 * n * made);
        } else {
            it_expect_error(&r, 507, "insufficient_storage", NULL);
            refused = 1;
        }
        hc_free(&r);
    }
    ck_assert_int_ge(made, 1);
    ck_assert_int_eq(refused, 1);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_double_eq(it_num(j, "memory.sessions_bytes"), after);
    cJSON_Delete(j);
    it_stop(&s);
    free(body);
}
END_TEST

/* A session's max_expanded bounds every plan on a graph too: found false,
 * reason node_budget, and the next read goes on with the same repair, to
 * the unlimited session's cost with as many expansions in all. (deadline_ms
 * is the same stop as core's graph_dstar_refusals test, through
 * pf_plan_limits; routes_sessions_plan_limits stops a grid plan by it over
 * HTTP.) */
START_TEST(routes_graph_sessions_plan_limits) {
    char *body = it_graph_chain_json(3000);
    hc_server s = it_start(ARGS("--graph-landmarks", "0"));
    char url[160], url2[160];
    cJSON *full, *a;
    uint64_t total;
    int reads;
    it_put_map(&s, "c", "application/json", body, 201);
    free(body);
    full = create(&s, "c", "{\"start\":0,\"goal\":2999}", url, sizeof(url));
    ck_assert(it_truth(full, "found"));
    ck_assert_double_eq_tol(it_num(full, "cost"), 2999, 1e-9);
    a = create(&s, "c", "{\"start\":0,\"goal\":2999,\"max_expanded\":100}", url2, sizeof(url2));
    a = it_session_read_until_found(&s, a, url2, "node_budget", 100, &reads, &total);
    ck_assert_double_eq_tol(it_num(a, "cost"), 2999, 1e-9);
    ck_assert_uint_eq(total, (uint64_t)it_num(full, "stats.expanded"));
    ck_assert_int_ge(reads, 29);
    fprintf(stderr, "routes_graph_sessions_plan_limits: %d reads, %llu expanded\n", reads,
            (unsigned long long)total);
    cJSON_Delete(a);
    cJSON_Delete(full);
    it_call_error(&s, "POST", "/v1/maps/c/sessions", "application/json",
                  "{\"start\":0,\"goal\":2999,\"deadline_ms\":99999999}", 422, "invalid_value",
                  "deadline_ms");
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_graph_sessions) {
    Suite *s = suite_create("routes_graph_sessions");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_graph_sessions_create_move_patch);
    tcase_add_test(tc, routes_graph_sessions_refusals);
    tcase_add_test(tc, routes_graph_sessions_random_against_fresh);
    tcase_add_test(tc, routes_graph_sessions_streams);
    tcase_add_test(tc, routes_graph_sessions_memory);
    tcase_add_test(tc, routes_graph_sessions_plan_limits);
    suite_add_tcase(s, tc);
    return s;
}
