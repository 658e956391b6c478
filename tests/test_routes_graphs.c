/* test_routes_graphs.c -- waypoint graph maps on the HTTP routes: JSON and
 * DIMACS uploads (PUT and POST), map info, paths between node ids and
 * between points snapped to the nearest node (the answer names it), GET
 * query strings, batches with a bad query in one slot, PATCH making a new
 * version whose answers differ (and the old cached one not served), the
 * refusals naming the element, the limits from the server's flags (and
 * /v1/info), features graphs do not have, and --data-dir bringing a
 * PATCHed graph back after a restart. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet.h"
#include "itest.h"
#include "testutil.h"

/* A square room a-b-c-d (10 apart) with a diagonal a-c costing 100, a
 * one-way shortcut d->a, and "far" alone (no edges). */
static const char graph_json[] =
    "{\"kind\":\"graph\",\"nodes\":["
    "{\"id\":\"a\",\"position\":[0,0]},{\"id\":\"b\",\"position\":[10,0]},"
    "{\"id\":\"c\",\"position\":[10,10],\"tags\":[\"door\"]},{\"id\":4,\"position\":[0,10]},"
    "{\"id\":\"far\",\"position\":[100,100]}],"
    "\"edges\":[{\"from\":\"a\",\"to\":\"b\",\"id\":\"ab\"},{\"from\":\"b\",\"to\":\"c\"},"
    "{\"from\":\"c\",\"to\":4},{\"from\":4,\"to\":\"a\",\"cost\":1,\"oneway\":true},"
    "{\"from\":\"a\",\"to\":\"c\",\"cost\":100}]}";

static cJSON *path_post(const hc_server *s, const char *map, const char *body) {
    char p[128];
    snprintf(p, sizeof(p), "/v1/maps/%s/path", map);
    return it_call(s, "POST", p, "application/json", body, 200);
}

/* The room's a -> 4 (cost 30) asking for algorithm `asked` (extra: more
 * members) is answered, and named, by `ran`. */
static void room_path_runs(const hc_server *s, const char *asked, const char *extra,
                           const char *ran) {
    char body[160];
    cJSON *j;
    snprintf(body, sizeof(body), "{\"start\":\"a\",\"goal\":4,\"algorithm\":\"%s\"%s}", asked,
             extra ? extra : "");
    j = path_post(s, "g", body);
    ck_assert_str_eq(it_str(j, "algorithm"), ran);
    ck_assert_double_eq_tol(it_num(j, "cost"), 30, 1e-9);
    cJSON_Delete(j);
}

START_TEST(routes_graphs_upload_info_and_paths) {
    hc_server s = it_start(ARGS("--workers", "2"));
    cJSON *j;
    it_put_map(&s, "g", "application/json", graph_json, 201);
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_str_eq(it_str(j, "kind"), "graph");
    ck_assert_int_eq((int)it_num(j, "graph.nodes"), 5);
    ck_assert_int_eq((int)it_num(j, "graph.edges"), 5);
    ck_assert_int_eq((int)it_num(j, "graph.arcs"), 9);
    ck_assert_int_eq((int)it_num(j, "graph.dimensions"), 2);
    ck_assert_double_eq_tol(it_num(j, "graph.heuristic_ratio"), 0.1, 1e-6); /* d->a: 1 over 10 */
    /* --graph-landmarks 8 by default: as many as the 5 nodes; auto is alt. */
    ck_assert_int_eq((int)it_num(j, "graph.landmarks"), 5);
    ck_assert_double_eq_tol(it_num(j, "graph.landmark_scale"), 1, 1e-9);
    ck_assert_int_eq((int)it_num(j, "graph.components"), 2); /* "far" is alone */
    /* --graph-ch-max-nodes 16,384 by default: every version has a
     * contraction hierarchy, and auto runs it. */
    ck_assert_str_eq(it_str(j, "default_algorithm"), "ch");
    ck_assert(it_num(j, "graph.ch_shortcuts") >= 0);
    ck_assert(it_truth(j, "graph.ch.built"));
    ck_assert_ptr_null(it_get(j, "graph.ch.absent"));
    cJSON_Delete(j);
    /* What a hierarchy cannot answer (partial) runs, and is named, alt. */
    room_path_runs(&s, "ch", ",\"partial\":true", "alt");
    /* a to 4: a-b-c-4 costs 30 (4->a is one-way; a-c-4 costs 110). */
    j = path_post(&s, "g", "{\"start\":\"a\",\"goal\":4}");
    ck_assert(it_truth(j, "found"));
    ck_assert_double_eq_tol(it_num(j, "cost"), 30, 1e-9);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "path")), 4);
    ck_assert_str_eq(it_str(j, "path.0"), "a");
    ck_assert_int_eq((int)it_num(j, "path.3"), 4); /* an integer id stays one */
    ck_assert_int_eq((int)it_num(j, "edges.0"), 0);
    ck_assert_double_eq(it_num(j, "points.1.0"), 10);
    ck_assert_str_eq(it_str(j, "algorithm"), "ch");
    ck_assert_int_eq((int)it_num(j, "map_version"), 1);
    ck_assert(!it_truth(j, "stats.cached"));
    cJSON_Delete(j);
    /* The way back uses the one-way edge. */
    j = path_post(&s, "g", "{\"start\":\"4\",\"goal\":\"a\",\"algorithm\":\"dijkstra\"}");
    ck_assert_double_eq_tol(it_num(j, "cost"), 1, 1e-9);
    ck_assert_str_eq(it_str(j, "algorithm"), "dijkstra");
    cJSON_Delete(j);
    /* Points snap to the nearest node; the answer says which and how far. */
    j = path_post(&s, "g",
                  "{\"start\":{\"point\":[9,1]},\"goal\":{\"point\":[1,8]},\"cache\":false}");
    ck_assert_str_eq(it_str(j, "start.node"), "b");
    ck_assert(it_truth(j, "start.snapped"));
    ck_assert_double_eq_tol(it_num(j, "start.distance"), 1.4142135623730951, 1e-9);
    ck_assert_int_eq((int)it_num(j, "goal.node"), 4);
    ck_assert_double_eq_tol(it_num(j, "cost"), 20, 1e-9);
    cJSON_Delete(j);
    /* GET with a query string; the second is the cache's. */
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=c", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 20, 1e-9);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=c", NULL, NULL, 200);
    ck_assert(it_truth(j, "stats.cached"));
    cJSON_Delete(j);
    /* Unreachable: "far"; partial gives the closed node nearest it. */
    j = path_post(&s, "g", "{\"start\":\"a\",\"goal\":\"far\"}");
    ck_assert(!it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "reason"), "unreachable");
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "path")), 0);
    cJSON_Delete(j);
    j = path_post(&s, "g", "{\"start\":\"a\",\"goal\":\"far\",\"partial\":true}");
    ck_assert(it_truth(j, "partial"));
    ck_assert_str_eq(it_str(j, "path.2"), "c"); /* (10,10) is nearest (100,100) */
    cJSON_Delete(j);
    /* max_expanded: a budget answer. */
    j = path_post(&s, "g", "{\"start\":\"a\",\"goal\":4,\"max_expanded\":1}");
    ck_assert(!it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "reason"), "budget");
    ck_assert_int_eq((int)it_num(j, "stats.expanded"), 1);
    cJSON_Delete(j);
    /* A batch: the bad query's slot holds its error. */
    j = it_call(&s, "POST", "/v1/maps/g/paths", "application/json",
                "{\"queries\":[{\"start\":\"a\",\"goal\":\"c\"},{\"start\":\"a\",\"goal\":\"zz\"},"
                "{\"start\":{\"point\":[0,0,0]},\"goal\":\"a\"}]}",
                200);
    ck_assert_double_eq_tol(it_num(j, "results.0.cost"), 20, 1e-9);
    ck_assert_int_eq((int)it_num(j, "results.1.status"), 422);
    ck_assert_str_eq(it_str(j, "results.1.error.field"), "queries[1].goal");
    ck_assert_str_eq(it_str(j, "results.2.error.field"), "queries[2].start");
    cJSON_Delete(j);
    /* Refusals of single queries. */
    it_call_error(&s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":\"a\",\"goal\":\"nope\"}", 422, "invalid_value", "goal");
    it_call_error(&s, "GET", "/v1/maps/g/path?start=a", NULL, NULL, 400, "invalid_request", "goal");
    it_call_error(&s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":\"a\",\"goal\":\"b\",\"algorithm\":\"jps\"}", 422, "invalid_value",
                  "algorithm");
    /* Features graphs do not have (sessions they have: routes_graph_sessions). */
    it_call_error(&s, "POST", "/v1/maps/g/flowfield", "application/json", "{\"goal\":[0,0]}", 422,
                  "unsupported", NULL);
    it_stop(&s);
}
END_TEST

START_TEST(routes_graphs_patch_makes_a_version) {
    hc_server s = it_start(ARGS("--workers", "2"));
    cJSON *j;
    it_put_map(&s, "g", "application/json", graph_json, 201);
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=c", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 20, 1e-9);
    cJSON_Delete(j);
    /* Disable b: a to c takes the diagonal; cost changes by id. */
    j = it_call(&s, "PATCH", "/v1/maps/g", "application/json",
                "{\"nodes\":[{\"id\":\"b\",\"enabled\":false}],"
                "\"edges\":[{\"index\":4,\"cost\":50}]}",
                200);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=c", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 50, 1e-9);
    ck_assert_int_eq((int)it_num(j, "map_version"), 2);
    ck_assert(!it_truth(j, "stats.cached"));
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "graph.disabled_nodes"), 1);
    /* Edge 4 went from 100 to 50: the landmarks' bounds are halved. */
    ck_assert_double_eq_tol(it_num(j, "graph.landmark_scale"), 0.5, 1e-9);
    cJSON_Delete(j);
    /* A disabled node named is blocked; a point never snaps to it. */
    it_call_error(&s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":\"b\",\"goal\":\"a\"}", 422, "blocked", "start");
    j = path_post(&s, "g", "{\"start\":{\"point\":[10,0]},\"goal\":\"a\"}");
    ck_assert_str_ne(it_str(j, "start.node"), "b");
    cJSON_Delete(j);
    /* PATCH refusals name the element; nothing changes. */
    it_call_error(&s, "PATCH", "/v1/maps/g", "application/json",
                  "{\"edges\":[{\"id\":\"nope\",\"enabled\":false}]}", 422, "invalid_value",
                  "edges[0].id");
    it_call_error(&s, "PATCH", "/v1/maps/g", "application/json",
                  "{\"edges\":[{\"index\":0,\"cost\":-1}]}", 422, "invalid_value", "edges[0].cost");
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    cJSON_Delete(j);
    /* Edge by id, enabled again. */
    j = it_call(&s, "PATCH", "/v1/maps/g", "application/json",
                "{\"nodes\":[{\"id\":\"b\",\"enabled\":true}],"
                "\"edges\":[{\"id\":\"ab\",\"cost\":2}]}",
                200);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=c", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 12, 1e-9);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

START_TEST(routes_graphs_refusals_and_limits) {
    hc_server s = it_start(ARGS("--graph-max-nodes", "4", "--graph-max-degree", "2"));
    cJSON *j;
    /* Past the node limit: 413 naming the flag. */
    it_call_error(&s, "PUT", "/v1/maps/g", "application/json", graph_json, 413, "limit_exceeded",
                  "nodes");
    it_call_error(&s, "PUT", "/v1/maps/g", "application/json",
                  "{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]},{\"id\":\"a\","
                  "\"position\":[1,1]}]}",
                  422, "invalid_value", "nodes[1].id");
    it_call_error(&s, "PUT", "/v1/maps/g", "application/json",
                  "{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]}],\"edges\":[{"
                  "\"from\":\"a\",\"to\":\"b\"}]}",
                  422, "invalid_value", "edges[0].to");
    it_call_error(&s, "PUT", "/v1/maps/g", "application/json",
                  "{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]}],\"edges\":[{"
                  "\"from\":\"a\",\"to\":\"a\",\"cost\":-2}]}",
                  422, "invalid_value", "edges[0].cost");
    it_call_error(&s, "PUT", "/v1/maps/g", "application/json",
                  "{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]}],\"edges\":[{"
                  "\"from\":\"a\",\"to\":\"a\"},{\"from\":\"a\",\"to\":\"a\"}]}",
                  413, "limit_exceeded", "edges[1]");
    it_call_error(&s, "PUT", "/v1/maps/g", "application/json",
                  "{\"kind\":\"graph\",\"dimacs\":{\"gr\":\"p sp 2 1\\na 1 3 1\\n\",\"co\":\"\"}}",
                  422, "invalid_value", "dimacs.gr");
    /* Nothing was made. */
    it_call_error(&s, "GET", "/v1/maps/g", NULL, NULL, 404, "map_not_found", NULL);
    /* DIMACS by POST /v1/maps. */
    j = it_call(&s, "POST", "/v1/maps", "application/json",
                "{\"kind\":\"graph\",\"dimacs\":{\"gr\":\"c road\\np sp 3 3\\na 1 2 5\\na 2 3 "
                "5\\na 1 3 20\\n\",\"co\":\"p aux sp co 3\\nv 1 0 0\\nv 2 5 0\\nv 3 10 0\\n\"}}",
                201);
    {
        char p[160];
        cJSON *a;
        snprintf(p, sizeof(p), "/v1/maps/%s/path?start=1&goal=3&algorithm=dijkstra",
                 it_str(j, "id"));
        a = it_call(&s, "GET", p, NULL, NULL, 200);
        ck_assert_double_eq_tol(it_num(a, "cost"), 10, 1e-9);
        ck_assert_int_eq((int)it_num(a, "path.1"), 2);
        cJSON_Delete(a);
        snprintf(p, sizeof(p), "/v1/maps/%s/path?start=3&goal=1", it_str(j, "id"));
        a = it_call(&s, "GET", p, NULL, NULL, 200);
        ck_assert(!it_truth(a, "found")); /* DIMACS arcs are one-way */
        cJSON_Delete(a);
    }
    cJSON_Delete(j);
    /* /v1/info names the limits and the algorithms. */
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.graph_max_nodes"), 4);
    ck_assert_int_eq((int)it_num(j, "limits.graph_max_degree"), 2);
    ck_assert_str_eq(it_str(j, "graph_algorithms.1"), "dijkstra");
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* Distance tables and nearest-of-goals on the routes: the square room's
 * costs by hand (a->c 20 through b, 4->a 1 one-way, "far" apart: null
 * without a search), paths as ids, points snapped, the limits (entries,
 * paths, --max-request-expanded, --max-goals) as 413 naming the field;
 * then random graphs against Floyd-Warshall written here. */
static void check_room_table(const hc_server *s) {
    cJSON *j =
        it_call(s, "POST", "/v1/maps/g/table", "application/json",
                "{\"sources\":[\"a\",4,\"far\"],\"targets\":[\"c\",\"a\",{\"point\":[99,99]}],"
                "\"paths\":true}",
                200);
    ck_assert_double_eq_tol(it_num(j, "costs.0.0"), 20, 1e-9);
    ck_assert_double_eq_tol(it_num(j, "costs.0.1"), 0, 1e-9);
    ck_assert(cJSON_IsNull(it_get(j, "costs.0.2")));
    ck_assert_double_eq_tol(it_num(j, "costs.1.0"), 10, 1e-9);
    ck_assert_double_eq_tol(it_num(j, "costs.1.1"), 1, 1e-9);
    ck_assert(cJSON_IsNull(it_get(j, "costs.2.0")));
    ck_assert_double_eq_tol(it_num(j, "costs.2.2"), 0, 1e-9);
    ck_assert_str_eq(it_str(j, "paths.0.0.1"), "b");
    ck_assert(cJSON_IsNull(it_get(j, "paths.0.2")));
    ck_assert_str_eq(it_str(j, "targets.2.node"), "far");
    ck_assert(it_truth(j, "targets.2.snapped"));
    ck_assert_int_eq((int)it_num(j, "stats.unreachable"), 4);
    /* far's row searched once (its own target is in its component). */
    ck_assert_int_eq((int)it_num(j, "stats.searches"), 3);
    ck_assert_str_eq(it_str(j, "algorithm"), "dijkstra");
    cJSON_Delete(j);
    /* A source whose targets are all apart searches nothing. */
    j = it_call(s, "POST", "/v1/maps/g/table", "application/json",
                "{\"sources\":[\"far\"],\"targets\":[\"a\",\"b\"]}", 200);
    ck_assert_int_eq((int)it_num(j, "stats.searches"), 0);
    ck_assert_int_eq((int)it_num(j, "stats.expanded"), 0);
    ck_assert_int_eq((int)it_num(j, "stats.unreachable"), 2);
    cJSON_Delete(j);
    it_call_error(s, "POST", "/v1/maps/g/table", "application/json",
                  "{\"sources\":[\"a\",\"nope\"]}", 422, "invalid_value", "sources[1]");
    it_call_error(s, "POST", "/v1/maps/g/table", "application/json",
                  "{\"sources\":[\"a\"],\"targets\":[{\"point\":[1,2,3]}]}", 422, "invalid_value",
                  "targets[0]");
    it_call_error(s, "POST", "/v1/maps/g/table", "application/json",
                  "{\"sources\":[\"a\"],\"bogus\":1}", 400, "invalid_request", "bogus");
    /* Nearest of several goals: c (20) before 4 (30); far never. */
    j = path_post(s, "g", "{\"start\":\"a\",\"goals\":[\"far\",4,\"c\"]}");
    ck_assert(it_truth(j, "found"));
    ck_assert_double_eq_tol(it_num(j, "cost"), 20, 1e-9);
    ck_assert_str_eq(it_str(j, "goal.node"), "c");
    ck_assert_int_eq((int)it_num(j, "goal_index"), 2);
    ck_assert_str_eq(it_str(j, "algorithm"), "astar"); /* alt's bounds are to one goal */
    cJSON_Delete(j);
    j = path_post(s, "g", "{\"start\":\"a\",\"goals\":[\"far\"],\"algorithm\":\"dijkstra\"}");
    ck_assert(!it_truth(j, "found"));
    ck_assert_ptr_null(it_get(j, "goal"));
    ck_assert_int_eq((int)it_num(j, "stats.expanded"), 0); /* apart: no search */
    cJSON_Delete(j);
    j = it_call(s, "GET", "/v1/maps/g/path?start=4&goals=far;a", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 1, 1e-9);
    ck_assert_int_eq((int)it_num(j, "goal_index"), 1);
    cJSON_Delete(j);
    j = path_post(s, "g", "{\"start\":\"a\",\"goals\":[{\"point\":[9,11]}]}");
    ck_assert_str_eq(it_str(j, "goal.node"), "c");
    ck_assert(it_truth(j, "goal.snapped"));
    cJSON_Delete(j);
    it_call_error(s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":\"a\",\"goal\":\"b\",\"goals\":[\"c\"]}", 400, "invalid_request",
                  "goals");
    it_call_error(s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":\"a\",\"goals\":[\"c\",\"nope\"]}", 422, "invalid_value", "goals[1]");
    it_call_error(s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":\"a\",\"goals\":[\"a\",\"b\",\"c\",4]}", 413, "limit_exceeded",
                  "goals");
    it_call_error(s, "POST", "/v1/maps/g/paths", "application/json",
                  "{\"queries\":[{\"start\":\"a\",\"goals\":[]}]}", 400, "malformed_request",
                  "queries[0].goals");
}

/* Floyd-Warshall over an edge list: d[i * n + j]. */
static void floyd(uint32_t n, uint32_t m, const uint32_t *from, const uint32_t *to,
                  const double *cost, const int *both, double *d) {
    for (uint32_t i = 0; i < n * n; i++) d[i] = i % (n + 1) == 0 ? 0 : INFINITY;
    for (uint32_t e = 0; e < m; e++) {
        if (cost[e] < d[from[e] * n + to[e]]) d[from[e] * n + to[e]] = cost[e];
        if (both[e] && cost[e] < d[to[e] * n + from[e]]) d[to[e] * n + from[e]] = cost[e];
    }
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                if (d[i * n + k] + d[k * n + j] < d[i * n + j])
                    d[i * n + j] = d[i * n + k] + d[k * n + j];
}

START_TEST(routes_graphs_tables_and_goals) {
    hc_server s = it_start(ARGS("--max-goals", "3", "--max-table-paths", "9"));
    uint64_t st = tu_seed("routes_graphs_tables_and_goals", 0x67a90010);
    unsigned mismatches = 0, finite = 0, nulls = 0;
    cJSON *j;
    it_put_map(&s, "g", "application/json", graph_json, 201);
    check_room_table(&s);
    it_call_error(
        &s, "POST", "/v1/maps/g/table", "application/json",
        "{\"sources\":[\"a\",\"b\",\"c\",4],\"targets\":[\"a\",\"b\",\"c\"],\"paths\":true}", 413,
        "limit_exceeded", "paths");
    /* Random graphs of 24 nodes, every pair against Floyd-Warshall. */
    for (int it = 0; it < 12; it++) {
        enum { N = 24 };
        uint32_t m = tu_below(&st, 3 * N), from[3 * N], to[3 * N];
        double cost[3 * N], d[N * N];
        int both[3 * N];
        char *body = malloc(16384), *tb = malloc(1024);
        size_t len = 0, tl = 0;
        len += (size_t)snprintf(body + len, 16384 - len, "{\"kind\":\"graph\",\"nodes\":[");
        for (uint32_t i = 0; i < N; i++)
            len += (size_t)snprintf(body + len, 16384 - len, "%s{\"id\":%u,\"position\":[%u,%u]}",
                                    i ? "," : "", i, tu_below(&st, 50), tu_below(&st, 50));
        len += (size_t)snprintf(body + len, 16384 - len, "],\"edges\":[");
        for (uint32_t e = 0; e < m; e++) {
            from[e] = tu_below(&st, N);
            to[e] = tu_below(&st, N);
            cost[e] = 1 + tu_below(&st, 100);
            both[e] = (int)tu_below(&st, 2);
            len += (size_t)snprintf(
                body + len, 16384 - len, "%s{\"from\":%u,\"to\":%u,\"cost\":%g,\"oneway\":%s}",
                e ? "," : "", from[e], to[e], cost[e], both[e] ? "false" : "true");
        }
        snprintf(body + len, 16384 - len, "]}");
        it_put_map(&s, "r", "application/json", body, it ? 200 : 201);
        floyd(N, m, from, to, cost, both, d);
        tl += (size_t)snprintf(tb + tl, 1024 - tl, "{\"sources\":[");
        for (uint32_t i = 0; i < N; i++)
            tl += (size_t)snprintf(tb + tl, 1024 - tl, "%s%u", i ? "," : "", i);
        snprintf(tb + tl, 1024 - tl, "]}");
        j = it_call(&s, "POST", "/v1/maps/r/table", "application/json", tb, 200);
        for (uint32_t a = 0; a < N; a++)
            for (uint32_t b = 0; b < N; b++) {
                char p[32];
                const cJSON *c;
                snprintf(p, sizeof(p), "costs.%u.%u", a, b);
                c = it_get(j, p);
                if (isinf(d[a * N + b])) {
                    nulls++;
                    mismatches += !cJSON_IsNull(c);
                } else {
                    finite++;
                    mismatches += !cJSON_IsNumber(c) || fabs(c->valuedouble - d[a * N + b]) > 1e-9;
                }
            }
        cJSON_Delete(j);
        free(body);
        free(tb);
    }
    ck_assert_uint_eq(mismatches, 0);
    ck_assert_uint_gt(finite, 500);
    ck_assert_uint_gt(nulls, 500);
    it_stop(&s);
    /* --max-request-expanded bounds the table's searches together. */
    s = it_start(ARGS("--max-request-expanded", "3"));
    it_put_map(&s, "g", "application/json", graph_json, 201);
    it_call_error(&s, "POST", "/v1/maps/g/table", "application/json",
                  "{\"sources\":[\"a\",\"b\"],\"targets\":[\"c\",4]}", 413, "limit_exceeded", NULL);
    j = it_call(&s, "POST", "/v1/maps/g/table", "application/json",
                "{\"sources\":[\"a\"],\"targets\":[\"b\"]}", 200);
    ck_assert_double_eq_tol(it_num(j, "costs.0.0"), 10, 1e-9);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* snap "edge": a point goes to the nearest point on an edge; the search
 * leaves (reaches) it by the edge's ends at their part of its cost; one
 * edge's two points go along it when that is cheaper (not against a
 * one-way edge). */
START_TEST(routes_graphs_edge_snap) {
    hc_server s = it_start(ARGS("--workers", "2"));
    cJSON *j;
    it_put_map(&s, "g", "application/json", graph_json, 201);
    /* (5,1) on a-b at 0.5; (10,6) on b-c at 0.6: 5 to b, 6 up b-c. */
    j = path_post(&s, "g",
                  "{\"start\":{\"point\":[5,1]},\"goal\":{\"point\":[10.5,6]},\"snap\":\"edge\"}");
    ck_assert(it_truth(j, "found"));
    ck_assert_double_eq_tol(it_num(j, "cost"), 11, 1e-9);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "path")), 1);
    ck_assert_str_eq(it_str(j, "path.0"), "b");
    ck_assert_int_eq((int)it_num(j, "start.edge"), 0);
    ck_assert_double_eq_tol(it_num(j, "start.at"), 0.5, 1e-9);
    ck_assert_double_eq_tol(it_num(j, "start.point.0"), 5, 1e-9);
    ck_assert_double_eq_tol(it_num(j, "start.distance"), 1, 1e-9);
    ck_assert_str_eq(it_str(j, "start.node"), "b");
    ck_assert_int_eq((int)it_num(j, "goal.edge"), 1);
    ck_assert_double_eq_tol(it_num(j, "goal.at"), 0.6, 1e-9);
    ck_assert_double_eq_tol(it_num(j, "goal.distance"), 0.5, 1e-9);
    cJSON_Delete(j);
    /* Both on a-b: along it, no node. */
    j = it_call(&s, "GET", "/v1/maps/g/path?start_point=2,0.5&goal_point=8,-1&snap=edge", NULL,
                NULL, 200);
    ck_assert(it_truth(j, "found"));
    ck_assert_double_eq_tol(it_num(j, "cost"), 6, 1e-9);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "path")), 0);
    ck_assert_ptr_null(it_get(j, "start.node"));
    cJSON_Delete(j);
    /* The one-way 4->a (cost 1, (0,10) to (0,0)): down it directly 0.6;
     * up it, around: 0.2 to a, a-b-c-4 30, 0.2 down to the goal. */
    j = path_post(
        &s, "g", "{\"start\":{\"point\":[0.1,8]},\"goal\":{\"point\":[-0.1,2]},\"snap\":\"edge\"}");
    ck_assert_double_eq_tol(it_num(j, "cost"), 0.6, 1e-9);
    cJSON_Delete(j);
    j = path_post(
        &s, "g", "{\"start\":{\"point\":[0.1,2]},\"goal\":{\"point\":[-0.1,8]},\"snap\":\"edge\"}");
    ck_assert_double_eq_tol(it_num(j, "cost"), 30.4, 1e-9);
    ck_assert_str_eq(it_str(j, "path.0"), "a");
    ck_assert_int_eq((int)it_num(j, "path.3"), 4);
    cJSON_Delete(j);
    /* Goals on edges: the nearest of them. */
    j = path_post(&s, "g",
                  "{\"start\":\"a\",\"goals\":[{\"point\":[10.2,9]},{\"point\":[3,0.1]}],"
                  "\"snap\":\"edge\"}");
    ck_assert_double_eq_tol(it_num(j, "cost"), 3, 1e-9);
    ck_assert_int_eq((int)it_num(j, "goal_index"), 1);
    ck_assert_int_eq((int)it_num(j, "goal.edge"), 0);
    cJSON_Delete(j);
    it_call_error(&s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":\"a\",\"goal\":\"b\",\"snap\":\"cell\"}", 422, "invalid_value",
                  "snap");
    /* Tag filters: c carries "door"; keeping off it, 4 is out of reach
     * (a-b-c-4 and a-c both enter c); an unknown tag is 422. */
    j = path_post(&s, "g", "{\"start\":\"a\",\"goal\":4,\"exclude_tags\":[\"door\"]}");
    ck_assert(!it_truth(j, "found"));
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=b&exclude_tags=door", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 10, 1e-9);
    cJSON_Delete(j);
    it_call_error(&s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":\"a\",\"goal\":4,\"exclude_tags\":[\"lava\"]}", 422, "invalid_value",
                  "exclude_tags[0]");
    it_stop(&s);
}
END_TEST

/* --graph-landmarks 0 and --graph-ch-max-nodes 0: no landmarks and no
 * hierarchy, so auto, ch and alt run (and name) astar; /v1/info reports
 * the flags. */
START_TEST(routes_graphs_landmarks_off) {
    hc_server s = it_start(
        ARGS("--graph-landmarks", "0", "--graph-ch-max-nodes", "0", "--graph-ch-build-ms", "5000"));
    cJSON *j;
    it_put_map(&s, "g", "application/json", graph_json, 201);
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "graph.landmarks"), 0);
    ck_assert_str_eq(it_str(j, "default_algorithm"), "astar");
    cJSON_Delete(j);
    room_path_runs(&s, "alt", NULL, "astar");
    room_path_runs(&s, "ch", NULL, "astar");
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "graph.ch_shortcuts"), 0);
    ck_assert(!it_truth(j, "graph.ch.built"));
    ck_assert_str_eq(it_str(j, "graph.ch.absent"), "disabled");
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.graph_ch_max_nodes"), 0);
    ck_assert_int_eq((int)it_num(j, "limits.graph_ch_build_ms"), 5000);
    ck_assert_str_eq(it_str(j, "graph_algorithms.4"), "ch");
    ck_assert_int_eq((int)it_num(j, "limits.graph_landmarks"), 0);
    ck_assert_int_eq((int)it_num(j, "limits.graph_landmark_max_nodes"), 1 << 18);
    ck_assert_str_eq(it_str(j, "graph_algorithms.3"), "alt");
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* --graph-ch-max-nodes below the graph's nodes: no hierarchy, and the
 * version says why (as one whose build ran past --graph-ch-build-ms says
 * build_deadline: core's graph_ch_build_stops counts that stop); ch runs,
 * and is named, alt, at the same cost; a PATCH's version says it too. */
START_TEST(routes_graphs_ch_absent) {
    hc_server s = it_start(ARGS("--graph-ch-max-nodes", "4", "--graph-ch-build-ms", "250"));
    cJSON *j;
    it_put_map(&s, "g", "application/json", graph_json, 201);
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert(!it_truth(j, "graph.ch.built"));
    ck_assert_str_eq(it_str(j, "graph.ch.absent"), "too_many_nodes");
    ck_assert_str_eq(it_str(j, "default_algorithm"), "alt");
    cJSON_Delete(j);
    room_path_runs(&s, "ch", NULL, "alt");
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/g", "application/json",
                         "{\"nodes\":[{\"id\":\"far\",\"enabled\":false}]}", 200));
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    ck_assert_str_eq(it_str(j, "graph.ch.absent"), "too_many_nodes");
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.graph_ch_build_ms"), 250);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* Hub labels (--graph-labels-max-bytes): by default a version's hierarchy
 * has them (graph.ch.labels: built, entries, bytes) and they are charged
 * with the version (maps_bytes exceeds a server's without them by at
 * least their bytes); ch answers through them at the same cost. 0 leaves
 * them out (absent disabled), a cap below what they need too (label_cap);
 * ch still runs as ch. /v1/info reports the flag. */
START_TEST(routes_graphs_ch_labels) {
    static const char *caps[] = {NULL, "0", "64"};
    static const char *absent[] = {NULL, "disabled", "label_cap"};
    double maps[3], bytes = 0;
    for (int k = 0; k < 3; k++) {
        hc_server s =
            caps[k] ? it_start(ARGS("--graph-labels-max-bytes", caps[k])) : it_start(NULL);
        cJSON *j;
        it_put_map(&s, "g", "application/json", graph_json, 201);
        j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
        ck_assert(it_truth(j, "graph.ch.built"));
        if (!absent[k]) {
            ck_assert(it_truth(j, "graph.ch.labels.built"));
            ck_assert(it_num(j, "graph.ch.labels.entries") >= 10); /* each node its own hub */
            bytes = it_num(j, "graph.ch.labels.bytes");
            ck_assert(bytes >= 16 * it_num(j, "graph.ch.labels.entries"));
        } else {
            ck_assert(!it_truth(j, "graph.ch.labels.built"));
            ck_assert_str_eq(it_str(j, "graph.ch.labels.absent"), absent[k]);
            ck_assert_double_eq(it_num(j, "graph.ch.labels.bytes"), 0);
        }
        cJSON_Delete(j);
        room_path_runs(&s, "ch", NULL, "ch");
        j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
        ck_assert_double_eq(it_num(j, "limits.graph_labels_max_bytes"),
                            caps[k] ? atof(caps[k]) : 32 << 20);
        maps[k] = it_num(j, "memory.maps_bytes");
        cJSON_Delete(j);
        it_stop(&s);
    }
    ck_assert_msg(maps[0] - maps[1] >= bytes,
                  "maps_bytes %.0f with labels of %.0f bytes, %.0f without", maps[0], bytes,
                  maps[1]);
}
END_TEST

/* Worker search contexts count against the memory budget (scratch): a
 * context grows to the largest graph it searched and stays pooled, so a
 * 20,000-node graph's first search leaves at least a cost a node charged,
 * which the budget reports, and a second search of the same graph charges
 * nothing more. */
START_TEST(routes_graphs_search_contexts_charged) {
    enum { N = 20000 };
    hc_server s = it_start(ARGS("--graph-ch-max-nodes", "0", "--graph-landmarks", "0"));
    char *body = it_graph_chain_json(N);
    double before, after, again;
    cJSON *j;
    it_put_map(&s, "chain", "application/json", body, 201);
    free(body);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    before = it_num(j, "memory.scratch_bytes");
    cJSON_Delete(j);
    ck_assert_double_eq(before, 0);
    j = path_post(&s, "chain",
                  "{\"start\":0,\"goal\":19999,\"algorithm\":\"dijkstra\",\"cache\":false}");
    ck_assert_double_eq_tol(it_num(j, "cost"), N - 1, 1e-6);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    after = it_num(j, "memory.scratch_bytes");
    ck_assert(it_num(j, "memory.used_bytes") >= it_num(j, "memory.maps_bytes") + after);
    cJSON_Delete(j);
    ck_assert_msg(after >= (double)N * sizeof(double),
                  "scratch %.0f bytes after a search of %d nodes", after, N);
    j = path_post(&s, "chain",
                  "{\"start\":19999,\"goal\":0,\"algorithm\":\"dijkstra\",\"cache\":false}");
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    again = it_num(j, "memory.scratch_bytes");
    cJSON_Delete(j);
    /* The same context, or a second worker's of the same size. */
    ck_assert_msg(again >= after && again <= 2 * after, "scratch %.0f, then %.0f", after, again);
    it_stop(&s);
}
END_TEST

/* --data-dir keeps a PATCHed graph: after a restart the same version,
 * states and answers. */
START_TEST(routes_graphs_data_dir_restart) {
    char dir[] = "/tmp/pathd-graphs-XXXXXX";
    hc_server s;
    cJSON *j;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    s = it_start(ARGS("--data-dir", dir));
    it_put_map(&s, "g", "application/json", graph_json, 201);
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/g", "application/json",
                         "{\"nodes\":[{\"id\":\"b\",\"enabled\":false}]}", 200));
    it_stop(&s);
    s = it_start(ARGS("--data-dir", dir));
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_str_eq(it_str(j, "kind"), "graph");
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    ck_assert_int_eq((int)it_num(j, "graph.disabled_nodes"), 1);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=c", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 100, 1e-9);
    cJSON_Delete(j);
    it_call(&s, "DELETE", "/v1/maps/g", NULL, NULL, 204);
    it_stop(&s);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* --store redis://: a graph uploaded and PATCHed on one instance is
 * answered by another, which builds it from the shared image and the
 * PATCH logged after it. */
START_TEST(routes_graphs_shared_store) {
    fl_proc redis;
    hc_server a, b;
    cJSON *j;
    ck_assert_msg(fl_have("redis-server"), "redis-server is not installed");
    redis = fl_redis_start();
    a = fl_pathd_start(fl_free_port(), redis.port, "a", NULL);
    b = fl_pathd_start(fl_free_port(), redis.port, "b", NULL);
    it_put_map(&a, "g", "application/json", graph_json, 201);
    cJSON_Delete(it_call(&a, "PATCH", "/v1/maps/g", "application/json",
                         "{\"edges\":[{\"id\":\"ab\",\"cost\":3}]}", 200));
    j = it_call(&b, "GET", "/v1/maps/g/path?start=a&goal=c", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 13, 1e-9);
    ck_assert_int_eq((int)it_num(j, "map_version"), 2);
    cJSON_Delete(j);
    j = it_call(&b, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_str_eq(it_str(j, "kind"), "graph");
    cJSON_Delete(j);
    it_stop(&b);
    it_stop(&a);
    fl_stop(&redis, SIGTERM);
}
END_TEST

/* Readers on two threads while the main one PATCHes edge "ab" twenty
 * times (odd PATCHes cost 3, even ones 10): every answer is the one of the
 * version it names (even versions: a to c costs 13, odd: 20), whichever
 * version the schedule gave it. Counted, not timed. */
typedef struct reader_arg {
    uint16_t port;
    int answers, wrong, failed;
} reader_arg;

static void *reader(void *p) {
    reader_arg *a = p;
    for (int i = 0; i < 60; i++) {
        hc_resp r;
        cJSON *j = NULL;
        memset(&r, 0, sizeof(r));
        if (hc_request(a->port, "GET", "/v1/maps/g/path?start=a&goal=c", NULL, NULL, 0, NULL, &r) ||
            r.status != 200 || !(j = cJSON_Parse(r.body))) {
            a->failed++;
            if (r.status) hc_free(&r);
            continue;
        }
        {
            const cJSON *v = cJSON_GetObjectItem(j, "map_version"),
                        *c = cJSON_GetObjectItem(j, "cost");
            if (!cJSON_IsNumber(v) || !cJSON_IsNumber(c) ||
                c->valuedouble != (((int)v->valuedouble % 2 == 0) ? 13 : 20))
                a->wrong++;
        }
        a->answers++;
        cJSON_Delete(j);
        hc_free(&r);
    }
    return NULL;
}

START_TEST(routes_graphs_patches_under_readers) {
    hc_server s = it_start(ARGS("--workers", "2"));
    pthread_t t[2];
    reader_arg ra[2];
    cJSON *j;
    it_put_map(&s, "g", "application/json", graph_json, 201);
    for (int i = 0; i < 2; i++) {
        ra[i] = (reader_arg){s.port, 0, 0, 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, reader, &ra[i]), 0);
    }
    for (int k = 1; k <= 20; k++)
        cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/g", "application/json",
                             k % 2 ? "{\"edges\":[{\"id\":\"ab\",\"cost\":3}]}"
                                   : "{\"edges\":[{\"id\":\"ab\",\"cost\":10}]}",
                             200));
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(ra[i].failed, 0);
        ck_assert_int_eq(ra[i].wrong, 0);
        ck_assert_int_eq(ra[i].answers, 60);
    }
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 21);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* A table's exclude_tags: c carries "door"; from a, c is null with it
 * (not entered) and 20 without; 4 is reached only through c (4->a is
 * one-way), so it is null too, as a path query with the same filter
 * says; an unknown tag is 422 naming exclude_tags[1]. */
START_TEST(routes_graphs_table_exclude_tags) {
    hc_server s = it_start(ARGS("--workers", "2"));
    cJSON *j;
    const cJSON *row;
    it_put_map(&s, "g", "application/json", graph_json, 201);
    j = it_call(&s, "POST", "/v1/maps/g/table", "application/json",
                "{\"sources\":[\"a\"],\"targets\":[\"c\",\"b\",4],\"exclude_tags\":[\"door\"]}",
                200);
    row = cJSON_GetArrayItem(it_get(j, "costs"), 0);
    ck_assert(cJSON_IsNull(cJSON_GetArrayItem(row, 0)));
    ck_assert_double_eq_tol(cJSON_GetArrayItem(row, 1)->valuedouble, 10, 1e-9);
    ck_assert(cJSON_IsNull(cJSON_GetArrayItem(row, 2)));
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=4&exclude_tags=door", NULL, NULL, 200);
    ck_assert(!it_truth(j, "found"));
    cJSON_Delete(j);
    j = it_call(&s, "POST", "/v1/maps/g/table", "application/json",
                "{\"sources\":[\"a\"],\"targets\":[\"c\",\"b\",4]}", 200);
    row = cJSON_GetArrayItem(it_get(j, "costs"), 0);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(row, 0)->valuedouble, 20, 1e-9);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(row, 2)->valuedouble, 30, 1e-9);
    cJSON_Delete(j);
    it_call_error(&s, "POST", "/v1/maps/g/table", "application/json",
                  "{\"sources\":[\"a\"],\"exclude_tags\":[\"door\",\"nope\"]}", 422,
                  "invalid_value", "exclude_tags[1]");
    it_call_error(&s, "POST", "/v1/maps/g/table", "application/json",
                  "{\"sources\":[\"a\"],\"exclude_tags\":\"door\"}", 400, "malformed_request",
                  "exclude_tags");
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_graphs) {
    Suite *s = suite_create("routes_graphs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_graphs_upload_info_and_paths);
    tcase_add_test(tc, routes_graphs_patch_makes_a_version);
    tcase_add_test(tc, routes_graphs_refusals_and_limits);
    tcase_add_test(tc, routes_graphs_landmarks_off);
    tcase_add_test(tc, routes_graphs_ch_absent);
    tcase_add_test(tc, routes_graphs_ch_labels);
    tcase_add_test(tc, routes_graphs_search_contexts_charged);
    tcase_add_test(tc, routes_graphs_tables_and_goals);
    tcase_add_test(tc, routes_graphs_edge_snap);
    tcase_add_test(tc, routes_graphs_table_exclude_tags);
    tcase_add_test(tc, routes_graphs_data_dir_restart);
    tcase_add_test(tc, routes_graphs_shared_store);
    tcase_add_test(tc, routes_graphs_patches_under_readers);
    suite_add_tcase(s, tc);
    return s;
}
