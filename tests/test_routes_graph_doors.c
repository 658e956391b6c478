/* test_routes_graph_doors.c -- door groups on waypoint graph maps over
 * HTTP: declared at upload ("doors"), opened and closed by name in PATCH
 * (a new version; the old cached answer not served; a session repairs),
 * the refusals naming the element, the limits from the flags (and
 * /v1/info), both stores keeping the doors and their state, and random
 * graphs with random door toggles against a reference Dijkstra written
 * here over the test's own model of which edges and nodes are enabled. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet.h"
#include "itest.h"
#include "testutil.h"

/* A corridor a-b-c (10 apart) and a detour a-d-c (costs 30 + 30).
 * Door "gate" is the edge b-c (by id) and node b; "side" the edge a-d
 * (by index 2), uploaded closed. */
static const char door_json[] =
    "{\"kind\":\"graph\",\"nodes\":["
    "{\"id\":\"a\",\"position\":[0,0]},{\"id\":\"b\",\"position\":[10,0]},"
    "{\"id\":\"c\",\"position\":[20,0]},{\"id\":7,\"position\":[10,10]}],"
    "\"edges\":[{\"from\":\"a\",\"to\":\"b\"},{\"from\":\"b\",\"to\":\"c\",\"id\":\"bc\"},"
    "{\"from\":\"a\",\"to\":7,\"cost\":30},{\"from\":7,\"to\":\"c\",\"cost\":30}],"
    "\"doors\":[{\"name\":\"gate\",\"edges\":[\"bc\"],\"nodes\":[\"b\"]},"
    "{\"name\":\"side\",\"edges\":[2],\"open\":false}]}";

static double cost_ac(const hc_server *s, int *version) {
    hc_resp r = it_req(s, "GET", "/v1/maps/g/path?start=a&goal=c", NULL, NULL);
    cJSON *j = it_json(&r);
    double c = -1;
    ck_assert_int_eq(r.status, 200);
    if (it_truth(j, "found")) c = it_num(j, "cost");
    if (version) *version = (int)it_num(j, "map_version");
    cJSON_Delete(j);
    hc_free(&r);
    return c;
}

static void patch(const hc_server *s, const char *body) {
    cJSON_Delete(it_call(s, "PATCH", "/v1/maps/g", "application/json", body, 200));
}

/* Door k of the map's info: its name and whether it is open. */
static bool door_open(const hc_server *s, int k, const char *name) {
    cJSON *j = it_call(s, "GET", "/v1/maps/g", NULL, NULL, 200);
    const cJSON *d = cJSON_GetArrayItem(it_get(j, "graph.doors"), k);
    bool open;
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(it_str(d, "name"), name);
    open = it_truth(d, "open");
    cJSON_Delete(j);
    return open;
}

START_TEST(routes_graph_doors_toggle) {
    hc_server s = it_start(ARGS("--workers", "2"));
    cJSON *j;
    char url[200], p[220];
    int v;
    it_put_map(&s, "g", "application/json", door_json, 201);
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "graph.doors")), 2);
    ck_assert_int_eq((int)it_num(cJSON_GetArrayItem(it_get(j, "graph.doors"), 0), "edges"), 1);
    ck_assert_int_eq((int)it_num(cJSON_GetArrayItem(it_get(j, "graph.doors"), 0), "nodes"), 1);
    ck_assert_int_eq((int)it_num(j, "graph.disabled_edges"), 1); /* side uploaded closed */
    cJSON_Delete(j);
    ck_assert(door_open(&s, 0, "gate"));
    ck_assert(!door_open(&s, 1, "side"));
    ck_assert_double_eq_tol(cost_ac(&s, &v), 20, 1e-9);
    ck_assert_double_eq_tol(cost_ac(&s, &v), 20, 1e-9); /* now cached */
    /* A session from a to c, on the corridor. */
    j = it_call(&s, "POST", "/v1/maps/g/sessions", "application/json",
                "{\"start\":\"a\",\"goal\":\"c\"}", 201);
    ck_assert_double_eq_tol(it_num(j, "cost"), 20, 1e-9);
    snprintf(url, sizeof(url), "/v1/maps/g/sessions/%s", it_str(j, "session_id"));
    cJSON_Delete(j);
    /* Closing the gate and opening the side door: one new version. */
    patch(&s, "{\"doors\":[{\"name\":\"gate\",\"open\":false},{\"name\":\"side\",\"open\":true}]}");
    ck_assert(!door_open(&s, 0, "gate"));
    ck_assert(door_open(&s, 1, "side"));
    ck_assert_double_eq_tol(cost_ac(&s, &v), 60, 1e-9);
    ck_assert_int_eq(v, 2);
    snprintf(p, sizeof(p), "%s/updates", url);
    j = it_call(&s, "POST", p, "application/json", "{\"position\":\"a\"}", 200);
    ck_assert_int_eq((int)it_num(j, "map_version"), 2);
    ck_assert_double_eq_tol(it_num(j, "cost"), 60, 1e-9);
    cJSON_Delete(j);
    /* The node b is a member: closed, it is blocked. */
    it_call_error(&s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":\"b\",\"goal\":\"a\"}", 422, "blocked", "start");
    /* Doors first, then nodes and edges: the edge named wins over its
     * door (the gate opens but b-c stays closed). */
    patch(&s, "{\"doors\":[{\"name\":\"gate\",\"open\":true}],"
              "\"edges\":[{\"id\":\"bc\",\"enabled\":false}]}");
    ck_assert(!door_open(&s, 0, "gate"));
    ck_assert_double_eq_tol(cost_ac(&s, &v), 60, 1e-9);
    ck_assert_int_eq(v, 3);
    patch(&s, "{\"doors\":[{\"name\":\"gate\",\"open\":true},{\"name\":\"side\",\"open\":false}]}");
    ck_assert(door_open(&s, 0, "gate"));
    ck_assert_double_eq_tol(cost_ac(&s, &v), 20, 1e-9);
    j = it_call(&s, "POST", p, "application/json", "{\"position\":\"a\"}", 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 20, 1e-9);
    cJSON_Delete(j);
    /* Refusals name the element and change nothing. */
    it_call_error(
        &s, "PATCH", "/v1/maps/g", "application/json",
        "{\"doors\":[{\"name\":\"gate\",\"open\":false},{\"name\":\"nope\",\"open\":true}]}", 422,
        "invalid_value", "doors[1].name");
    it_call_error(&s, "PATCH", "/v1/maps/g", "application/json",
                  "{\"doors\":[{\"name\":\"gate\"}]}", 400, "malformed_request", "doors[0].name");
    it_call_error(&s, "PATCH", "/v1/maps/g", "application/json",
                  "{\"doors\":[{\"name\":\"gate\",\"open\":1}]}", 400, "invalid_request",
                  "doors[0].open");
    it_call_error(&s, "PATCH", "/v1/maps/g", "application/json",
                  "{\"doors\":[{\"name\":\"gate\",\"open\":true,\"x\":1}]}", 400, "invalid_request",
                  "doors[0].x");
    ck_assert(door_open(&s, 0, "gate"));
    ck_assert_double_eq_tol(cost_ac(&s, &v), 20, 1e-9);
    ck_assert_int_eq(v, 4);
    it_stop(&s);
}
END_TEST

/* Upload refusals: each names its element. */
START_TEST(routes_graph_doors_refusals_and_limits) {
    static const char head[] =
        "{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]},"
        "{\"id\":\"b\",\"position\":[1,0]}],\"edges\":[{\"from\":\"a\",\"to\":\"b\",\"id\":\"e\"}],"
        "\"doors\":";
    static const struct {
        const char *doors;
        int status;
        const char *code, *field;
    } cases[] = {
        {"[{\"name\":\"x\",\"edges\":[0]},{\"name\":\"x\",\"nodes\":[\"a\"]}]", 422,
         "invalid_value", "doors[1].name"},
        {"[{\"name\":\"x\",\"edges\":[0,\"nope\"]}]", 422, "invalid_value", "doors[0].edges[1]"},
        {"[{\"name\":\"x\",\"edges\":[1]}]", 422, "invalid_value", "doors[0].edges[0]"},
        {"[{\"name\":\"x\",\"nodes\":[\"a\",\"zz\"]}]", 422, "invalid_value", "doors[0].nodes[1]"},
        {"[{\"name\":\"x\",\"nodes\":[3]}]", 422, "invalid_value", "doors[0].nodes[0]"},
        {"[{\"name\":\"x\"}]", 422, "invalid_value", "doors[0]"},
        {"[{\"name\":\"\",\"edges\":[0]}]", 422, "invalid_value", "doors[0].name"},
        {"[{\"edges\":[0]}]", 400, "malformed_map", "doors[0].name"},
        {"[{\"name\":\"x\",\"edges\":[true]}]", 400, "malformed_map", "doors[0].edges[0]"},
        {"[{\"name\":\"x\",\"edges\":0}]", 400, "malformed_map", "doors[0].edges"},
        {"[{\"name\":\"x\",\"edges\":[0],\"open\":\"no\"}]", 400, "invalid_request",
         "doors[0].open"},
        {"{\"name\":\"x\"}", 400, "malformed_map", "doors"},
        /* --graph-max-doors 2, --graph-max-door-members 3 */
        {"[{\"name\":\"x\",\"edges\":[0]},{\"name\":\"y\",\"edges\":[0]},{\"name\":\"z\","
         "\"edges\":[0]}]",
         413, "limit_exceeded", "doors"},
        {"[{\"name\":\"x\",\"edges\":[0,0]},{\"name\":\"y\",\"nodes\":[\"a\",\"b\"]}]", 413,
         "limit_exceeded", "doors[1]"},
    };
    hc_server s = it_start(ARGS("--graph-max-doors", "2", "--graph-max-door-members", "3"));
    cJSON *j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.graph_max_doors"), 2);
    ck_assert_int_eq((int)it_num(j, "limits.graph_max_door_members"), 3);
    cJSON_Delete(j);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char body[1024];
        hc_resp r;
        snprintf(body, sizeof(body), "%s%s}", head, cases[i].doors);
        r = it_req(&s, "PUT", "/v1/maps/g", "application/json", body);
        ck_assert_msg(r.status == cases[i].status, "case %zu: status %d", i, r.status);
        it_expect_error(&r, cases[i].status, cases[i].code, cases[i].field);
        hc_free(&r);
    }
    it_call_error(&s, "GET", "/v1/maps/g", NULL, NULL, 404, "map_not_found", NULL);
    /* Within the limits: 2 doors, 3 members. */
    {
        char body[1024];
        snprintf(body, sizeof(body), "%s%s}", head,
                 "[{\"name\":\"x\",\"edges\":[\"e\"]},{\"name\":\"y\",\"nodes\":[\"a\",\"b\"]}]");
        it_put_map(&s, "g", "application/json", body, 201);
    }
    patch(&s, "{\"doors\":[{\"name\":\"y\",\"open\":false}]}");
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "graph.disabled_nodes"), 2);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* --data-dir: the doors and their state come back after a restart, and
 * a PATCH by name works on the restored map. */
START_TEST(routes_graph_doors_data_dir) {
    char dir[] = "/tmp/pathd-doors-XXXXXX";
    hc_server s;
    int v;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    s = it_start(ARGS("--data-dir", dir));
    it_put_map(&s, "g", "application/json", door_json, 201);
    patch(&s, "{\"doors\":[{\"name\":\"gate\",\"open\":false},{\"name\":\"side\",\"open\":true}]}");
    it_stop(&s);
    s = it_start(ARGS("--data-dir", dir));
    ck_assert(!door_open(&s, 0, "gate"));
    ck_assert(door_open(&s, 1, "side"));
    ck_assert_double_eq_tol(cost_ac(&s, &v), 60, 1e-9);
    ck_assert_int_eq(v, 2);
    patch(&s, "{\"doors\":[{\"name\":\"gate\",\"open\":true}]}");
    ck_assert_double_eq_tol(cost_ac(&s, &v), 20, 1e-9);
    it_stop(&s);
    s = it_start(ARGS("--data-dir", dir));
    ck_assert(door_open(&s, 0, "gate"));
    ck_assert_double_eq_tol(cost_ac(&s, &v), 20, 1e-9);
    ck_assert_int_eq(v, 3);
    it_call(&s, "DELETE", "/v1/maps/g", NULL, NULL, 204);
    it_stop(&s);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* --store redis://: a door closed on one instance is closed on the other
 * (the image and the PATCH logged after it), and toggled there by name;
 * a third instance replays both PATCHes. */
START_TEST(routes_graph_doors_shared_store) {
    fl_proc redis;
    hc_server a, b, c;
    int v;
    ck_assert_msg(fl_have("redis-server"), "redis-server is not installed");
    redis = fl_redis_start();
    a = fl_pathd_start(fl_free_port(), redis.port, "a", NULL);
    b = fl_pathd_start(fl_free_port(), redis.port, "b", NULL);
    it_put_map(&a, "g", "application/json", door_json, 201);
    patch(&a, "{\"doors\":[{\"name\":\"gate\",\"open\":false},{\"name\":\"side\",\"open\":true}]}");
    ck_assert_double_eq_tol(cost_ac(&b, &v), 60, 1e-9);
    ck_assert_int_eq(v, 2);
    ck_assert(!door_open(&b, 0, "gate"));
    patch(&b, "{\"doors\":[{\"name\":\"side\",\"open\":false}]}");
    /* A third instance started now builds the image and replays both
     * logged door PATCHes (one from each instance). */
    c = fl_pathd_start(fl_free_port(), redis.port, "c", NULL);
    ck_assert_double_eq_tol(cost_ac(&c, &v), -1, 1e-9);
    ck_assert_int_eq(v, 3);
    ck_assert(!door_open(&c, 0, "gate"));
    ck_assert(!door_open(&c, 1, "side"));
    it_stop(&c);
    it_stop(&b);
    it_stop(&a);
    fl_stop(&redis, SIGTERM);
}
END_TEST

/* Random graphs and doors: after every door PATCH the server's costs
 * between random pairs equal a reference Dijkstra (O(n^2), written here)
 * over the test's model of the enabled edges and nodes. */
#define RN 14
#define RM 28
#define RD 5

typedef struct model {
    int from[RM], to[RM];
    double cost[RM];
    bool oneway[RM], eon[RM], non[RN];
    int dn, de[RD][4], ne[RD], dnode[RD][2], nn[RD];
} model;

static double reference(const model *g, int s, int t) {
    double dist[RN];
    bool done[RN] = {false};
    if (!g->non[s] || !g->non[t]) return -2;
    for (int i = 0; i < RN; i++) dist[i] = INFINITY;
    dist[s] = 0;
    for (;;) {
        int u = -1;
        for (int i = 0; i < RN; i++)
            if (!done[i] && isfinite(dist[i]) && (u < 0 || dist[i] < dist[u])) u = i;
        if (u < 0) break;
        done[u] = true;
        for (int k = 0; k < RM; k++) {
            int v = -1;
            if (!g->eon[k]) continue;
            if (g->from[k] == u)
                v = g->to[k];
            else if (!g->oneway[k] && g->to[k] == u)
                v = g->from[k];
            if (v >= 0 && g->non[v] && dist[u] + g->cost[k] < dist[v])
                dist[v] = dist[u] + g->cost[k];
        }
    }
    return isfinite(dist[t]) ? dist[t] : -1;
}

static char *random_upload(model *g, unsigned *seed) {
    cJSON *root = cJSON_CreateObject(), *nodes = cJSON_AddArrayToObject(root, "nodes"),
          *edges = cJSON_AddArrayToObject(root, "edges"), *doors;
    char *out;
    cJSON_AddStringToObject(root, "kind", "graph");
    for (int i = 0; i < RN; i++) {
        cJSON *n = cJSON_CreateObject();
        double pos[2] = {rand_r(seed) % 50, rand_r(seed) % 50};
        cJSON_AddNumberToObject(n, "id", i);
        cJSON_AddItemToObject(n, "position", cJSON_CreateDoubleArray(pos, 2));
        cJSON_AddItemToArray(nodes, n);
        g->non[i] = true;
    }
    for (int k = 0; k < RM; k++) {
        cJSON *e = cJSON_CreateObject();
        g->from[k] = rand_r(seed) % RN;
        g->to[k] = rand_r(seed) % RN;
        g->cost[k] = rand_r(seed) % 20;
        g->oneway[k] = rand_r(seed) % 3 == 0;
        g->eon[k] = true;
        cJSON_AddNumberToObject(e, "from", g->from[k]);
        cJSON_AddNumberToObject(e, "to", g->to[k]);
        cJSON_AddNumberToObject(e, "cost", g->cost[k]);
        if (g->oneway[k]) cJSON_AddTrueToObject(e, "oneway");
        cJSON_AddItemToArray(edges, e);
    }
    g->dn = 1 + rand_r(seed) % RD;
    doors = cJSON_AddArrayToObject(root, "doors");
    for (int d = 0; d < g->dn; d++) {
        cJSON *o = cJSON_CreateObject(), *de, *dnodes;
        char name[16];
        snprintf(name, sizeof(name), "d%d", d);
        cJSON_AddStringToObject(o, "name", name);
        de = cJSON_AddArrayToObject(o, "edges");
        dnodes = cJSON_AddArrayToObject(o, "nodes");
        g->ne[d] = 1 + rand_r(seed) % 4;
        g->nn[d] = rand_r(seed) % 3;
        for (int j = 0; j < g->ne[d]; j++) {
            g->de[d][j] = rand_r(seed) % RM;
            cJSON_AddItemToArray(de, cJSON_CreateNumber(g->de[d][j]));
        }
        for (int j = 0; j < g->nn[d]; j++) {
            g->dnode[d][j] = rand_r(seed) % RN;
            cJSON_AddItemToArray(dnodes, cJSON_CreateNumber(g->dnode[d][j]));
        }
        cJSON_AddItemToArray(doors, o);
    }
    out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}

START_TEST(routes_graph_doors_random_against_reference) {
    hc_server s = it_start(ARGS("--workers", "2"));
    unsigned seed = 2812;
    int checked = 0, wrong = 0;
    for (int round = 0; round < 12; round++) {
        model g;
        char *up = random_upload(&g, &seed);
        it_put_map(&s, "r", "application/json", up, round ? 200 : 201);
        free(up);
        for (int step = 0; step < 10; step++) {
            char body[512];
            size_t len = 0;
            int nt = 1 + rand_r(&seed) % 3;
            len += (size_t)snprintf(body + len, sizeof(body) - len, "{\"doors\":[");
            for (int t = 0; t < nt; t++) {
                int d = rand_r(&seed) % g.dn;
                bool open = rand_r(&seed) % 2;
                len += (size_t)snprintf(body + len, sizeof(body) - len,
                                        "%s{\"name\":\"d%d\",\"open\":%s}", t ? "," : "", d,
                                        open ? "true" : "false");
                for (int j = 0; j < g.ne[d]; j++) g.eon[g.de[d][j]] = open;
                for (int j = 0; j < g.nn[d]; j++) g.non[g.dnode[d][j]] = open;
            }
            snprintf(body + len, sizeof(body) - len, "]}");
            cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/r", "application/json", body, 200));
            for (int q = 0; q < 6; q++) {
                int a = rand_r(&seed) % RN, b = rand_r(&seed) % RN;
                double want = reference(&g, a, b), got;
                char p[160];
                hc_resp r;
                cJSON *j;
                snprintf(p, sizeof(p), "/v1/maps/r/path?start=%d&goal=%d", a, b);
                r = it_req(&s, "GET", p, NULL, NULL);
                j = it_json(&r);
                got = r.status == 422 ? -2 : it_truth(j, "found") ? it_num(j, "cost") : -1;
                if (fabs(got - want) > 1e-9) wrong++;
                checked++;
                cJSON_Delete(j);
                hc_free(&r);
            }
        }
    }
    ck_assert_int_eq(checked, 12 * 10 * 6);
    ck_assert_int_eq(wrong, 0);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_graph_doors) {
    Suite *s = suite_create("routes_graph_doors");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_graph_doors_toggle);
    tcase_add_test(tc, routes_graph_doors_refusals_and_limits);
    tcase_add_test(tc, routes_graph_doors_data_dir);
    tcase_add_test(tc, routes_graph_doors_shared_store);
    tcase_add_test(tc, routes_graph_doors_random_against_reference);
    suite_add_tcase(s, tc);
    return s;
}
