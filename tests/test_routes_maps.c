/* test_routes_maps.c -- server/routes_maps.c over HTTP: map list, upload, info, cells,
 * hierarchy, PATCH, DELETE. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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
    r = it_req(&s, "PUT", "/v1/maps/room", "text/x-movingai-map", text);
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

START_TEST(routes_maps_generate_mazes) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-map-side", "200"));
    cJSON *j;
    char id[80], path[160];
    j = it_call(&s, "POST", "/v1/maps/generate", "application/json",
                "{\"type\":\"maze\",\"width\":41,\"height\":31,\"seed\":7}", 201);
    snprintf(id, sizeof(id), "%s", it_str(j, "id"));
    ck_assert(strncmp(id, "maze-", 5) == 0);
    ck_assert_int_eq((int)it_num(j, "width"), 41);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    /* The same parameters again: the same map, nothing built. */
    j = it_call(&s, "POST", "/v1/maps/generate", "application/json",
                "{\"seed\":7,\"height\":31,\"width\":41,\"type\":\"maze\",\"walls\":\"cells\"}",
                200);
    ck_assert_str_eq(it_str(j, "id"), id);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    /* Corner to corner: one way in a perfect maze. */
    snprintf(path, sizeof(path), "/v1/maps/%s/path", id);
    j = it_call(&s, "POST", path, "application/json",
                "{\"start\":[1,1],\"goal\":[39,29],\"algorithm\":\"bfs\"}", 200);
    ck_assert(it_truth(j, "found"));
    {
        double bfs_cost = it_num(j, "cost");
        cJSON_Delete(j);
        j = it_call(&s, "POST", path, "application/json",
                    "{\"start\":[1,1],\"goal\":[39,29],\"algorithm\":\"astar\"}", 200);
        ck_assert_double_eq_tol(it_num(j, "cost"), bfs_cost, 1e-9);
        cJSON_Delete(j);
    }
    /* Named, with edges, loops and wide corridors. */
    j = it_call(&s, "POST", "/v1/maps/generate", "application/json",
                "{\"type\":\"maze\",\"width\":60,\"height\":40,\"seed\":3,\"walls\":\"edges\","
                "\"corridor_width\":3,\"loops\":0.2,\"id\":\"arena-3\"}",
                201);
    ck_assert_str_eq(it_str(j, "id"), "arena-3");
    cJSON_Delete(j);
    j = it_call(&s, "POST", "/v1/maps/arena-3/path", "application/json",
                "{\"start\":[0,0],\"goal\":[57,36],\"agent_size\":3}", 200);
    ck_assert(it_truth(j, "found")); /* corridors three wide fit a 3x3 agent */
    cJSON_Delete(j);
    it_call_error(&s, "POST", "/v1/maps/generate", "application/json",
                  "{\"type\":\"maze\",\"width\":201,\"height\":31}", 413, "limit_exceeded",
                  "width");
    it_call_error(&s, "POST", "/v1/maps/generate", "application/json",
                  "{\"type\":\"maze\",\"width\":41,\"height\":31,\"walls\":\"x\"}", 422,
                  "invalid_value", "walls");
    it_call_error(&s, "POST", "/v1/maps/generate", "application/json",
                  "{\"type\":\"cave\",\"width\":41,\"height\":31}", 422, "invalid_value", "type");
    it_call_error(&s, "POST", "/v1/maps/generate", "application/json",
                  "{\"type\":\"maze\",\"width\":2,\"height\":31}", 422, "invalid_value", "width");
    it_call_error(&s, "POST", "/v1/maps/generate", "application/json",
                  "{\"type\":\"maze\",\"width\":9,\"height\":9,\"id\":\"a/b\"}", 400,
                  "invalid_map_id", "id");
    {
        hc_resp r = it_req(&s, "GET", "/v1/maps/generate", NULL, NULL);
        ck_assert_int_eq(r.status, 405);
        hc_free(&r);
    }
    /* "generate" names the route, so it is no map id. */
    it_call_error(&s, "PUT", "/v1/maps/generate", "application/json", it_room_json, 405,
                  "method_not_allowed", NULL);
    it_call_error(&s, "POST", "/v1/maps/generate", "application/json",
                  "{\"type\":\"maze\",\"width\":9,\"height\":9,\"id\":\"generate\"}", 400,
                  "invalid_map_id", "id");
    it_stop(&s);
}
END_TEST

/* GET /v1/maps/{id}/hierarchy: the HPA* graph the viewer draws, and a
 * debug hpa answer's abstract path through it. A 64x48 open map with a
 * wall across the middle (gap at the right end) and --cluster-size 16:
 * 4x3 clusters. */
START_TEST(routes_maps_hierarchy) {
    hc_server s = it_start(ARGS("--cluster-size", "16"));
    char *text = it_open_map_text(64, 48);
    hc_resp r;
    cJSON *j, *a;
    const cJSON *nodes, *inter, *intra, *ap;
    int n;
    it_put_map(&s, "h", "text/x-movingai-map", text, 201);
    free(text);

    r = it_req(&s, "GET", "/v1/maps/h/hierarchy", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    hc_free(&r);
    ck_assert_str_eq(it_str(j, "id"), "h");
    ck_assert_int_eq((int)it_num(j, "cluster_size"), 16);
    ck_assert_int_eq((int)it_num(j, "clusters_x"), 4);
    ck_assert_int_eq((int)it_num(j, "clusters_y"), 3);
    ck_assert_int_eq((int)it_num(j, "stats.clusters"), 12);
    ck_assert_int_eq((int)it_num(j, "stats.components"), 1);
    nodes = it_get(j, "nodes");
    inter = it_get(j, "inter_edges");
    n = cJSON_GetArraySize(nodes);
    ck_assert_int_eq(n, (int)it_num(j, "stats.abstract_nodes"));
    ck_assert_int_gt(n, 12);
    ck_assert_ptr_null(it_get(j, "intra_edges")); /* only when asked */
    /* A border edge joins two orthogonal neighbours in different clusters;
     * each pair once. */
    ck_assert_int_gt(cJSON_GetArraySize(inter), 0);
    for (int i = 0; i < cJSON_GetArraySize(inter); i++) {
        const cJSON *e = cJSON_GetArrayItem(inter, i);
        int va = cJSON_GetArrayItem(e, 0)->valueint, vb = cJSON_GetArrayItem(e, 1)->valueint;
        const cJSON *pa = cJSON_GetArrayItem(nodes, va), *pb = cJSON_GetArrayItem(nodes, vb);
        int ax = cJSON_GetArrayItem(pa, 0)->valueint, ay = cJSON_GetArrayItem(pa, 1)->valueint;
        int bx = cJSON_GetArrayItem(pb, 0)->valueint, by = cJSON_GetArrayItem(pb, 1)->valueint;
        ck_assert_int_lt(va, vb);
        ck_assert_int_eq(abs(ax - bx) + abs(ay - by), 1);
        ck_assert(ax / 16 != bx / 16 || ay / 16 != by / 16);
        ck_assert(ay != 24 && by != 24); /* never through the wall row but at its gap */
    }

    /* The abstract path of a debug hpa answer runs through these nodes. */
    r = it_req(&s, "POST", "/v1/maps/h/path", "application/json",
               "{\"start\":[0,0],\"goal\":[0,47],\"algorithm\":\"hpa\",\"debug\":true}");
    ck_assert_int_eq(r.status, 200);
    a = it_json(&r);
    hc_free(&r);
    ap = it_get(a, "abstract_path");
    ck_assert_ptr_nonnull(ap);
    ck_assert_int_gt(cJSON_GetArraySize(ap), 3);
    for (int i = 1; i + 1 < cJSON_GetArraySize(ap); i++) {
        const cJSON *p = cJSON_GetArrayItem(ap, i);
        bool found = false;
        for (int v = 0; v < n && !found; v++) {
            const cJSON *q = cJSON_GetArrayItem(nodes, v);
            found = cJSON_GetArrayItem(p, 0)->valueint == cJSON_GetArrayItem(q, 0)->valueint &&
                    cJSON_GetArrayItem(p, 1)->valueint == cJSON_GetArrayItem(q, 1)->valueint;
        }
        ck_assert_msg(found, "abstract path point %d is not a node", i);
    }
    /* The way round the wall runs through the clusters of the gap's
     * column (x 48..63). */
    {
        bool gap = false;
        for (int i = 0; i < cJSON_GetArraySize(ap); i++) {
            const cJSON *p = cJSON_GetArrayItem(ap, i);
            gap |= cJSON_GetArrayItem(p, 0)->valueint / 16 == 3;
        }
        ck_assert(gap);
    }
    cJSON_Delete(a);
    /* Not for other algorithms, nor without debug. */
    r = it_req(&s, "POST", "/v1/maps/h/path", "application/json",
               "{\"start\":[0,0],\"goal\":[0,47],\"algorithm\":\"astar\",\"debug\":true}");
    a = it_json(&r);
    ck_assert_ptr_null(it_get(a, "abstract_path"));
    cJSON_Delete(a);
    hc_free(&r);
    r = it_req(&s, "POST", "/v1/maps/h/path", "application/json",
               "{\"start\":[0,0],\"goal\":[0,47],\"algorithm\":\"hpa\"}");
    a = it_json(&r);
    ck_assert_ptr_null(it_get(a, "abstract_path"));
    cJSON_Delete(a);
    hc_free(&r);

    /* With intra=true: each cluster's node pairs, a < b, at a cost no
     * less than their octile distance. */
    r = it_req(&s, "GET", "/v1/maps/h/hierarchy?intra=true", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    a = it_json(&r);
    hc_free(&r);
    intra = it_get(a, "intra_edges");
    ck_assert_int_gt(cJSON_GetArraySize(intra), 0);
    for (int i = 0; i < cJSON_GetArraySize(intra); i++) {
        const cJSON *e = cJSON_GetArrayItem(intra, i);
        int va = cJSON_GetArrayItem(e, 0)->valueint, vb = cJSON_GetArrayItem(e, 1)->valueint;
        double c = cJSON_GetArrayItem(e, 2)->valuedouble;
        const cJSON *pa = cJSON_GetArrayItem(nodes, va), *pb = cJSON_GetArrayItem(nodes, vb);
        int dx = abs(cJSON_GetArrayItem(pa, 0)->valueint - cJSON_GetArrayItem(pb, 0)->valueint);
        int dy = abs(cJSON_GetArrayItem(pa, 1)->valueint - cJSON_GetArrayItem(pb, 1)->valueint);
        double oct = (dx > dy ? dx : dy) + (sqrt(2.0) - 1) * (dx > dy ? dy : dx);
        ck_assert_int_lt(va, vb);
        ck_assert_int_eq(cJSON_GetArrayItem(pa, 0)->valueint / 16,
                         cJSON_GetArrayItem(pb, 0)->valueint / 16);
        ck_assert_int_eq(cJSON_GetArrayItem(pa, 1)->valueint / 16,
                         cJSON_GetArrayItem(pb, 1)->valueint / 16);
        ck_assert(c >= oct - 1e-9);
    }
    cJSON_Delete(a);
    cJSON_Delete(j);

    /* Errors: a parameter that is not intra, a bad value, no such map, a
     * method the route does not take. */
    r = it_req(&s, "GET", "/v1/maps/h/hierarchy?edges=all", NULL, NULL);
    it_expect_error(&r, 400, "invalid_request", "edges");
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/h/hierarchy?intra=yes", NULL, NULL);
    it_expect_error(&r, 422, "invalid_value", "intra");
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/nope/hierarchy", NULL, NULL);
    it_expect_error(&r, 404, "map_not_found", NULL);
    hc_free(&r);
    r = it_req(&s, "DELETE", "/v1/maps/h/hierarchy", NULL, NULL);
    ck_assert_int_eq(r.status, 405);
    hc_free(&r);
    it_stop(&s);
}
END_TEST

/* A 20 x 20 floor square, wound counter-clockwise seen from above. */
static const char nav_floor_obj[] = "v 0 0 0\nv 20 0 0\nv 20 0 20\nv 0 0 20\nf 4 3 2 1\n";

/* Navmesh uploads: model/obj with settings in the query string, the JSON
 * envelope (obj text, from_grid as text or as a map object), POST's content
 * ids, map info, and every refusal naming its field. */
START_TEST(routes_maps_navmesh_uploads) {
    hc_server s = it_start(NULL);
    cJSON *j, *k;
    hc_resp r;
    char buf[128], *env;

    j = it_call(&s, "PUT", "/v1/maps/floor?cell_size=0.2&agent_radius=0.3", "model/obj",
                nav_floor_obj, 201);
    ck_assert_str_eq(it_str(j, "kind"), "navmesh");
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    ck_assert_str_eq(it_str(j, "default_algorithm"), "polyanya");
    ck_assert_double_eq_tol(it_num(j, "navmesh.settings.cell_size"), 0.2, 1e-6);
    ck_assert_double_eq_tol(it_num(j, "navmesh.settings.agent.radius"), 0.3, 1e-6);
    ck_assert_int_gt((int)it_num(j, "navmesh.polygons"), 0);
    ck_assert_int_eq((int)it_num(j, "navmesh.tiles.x"), 4); /* 20 / (32 x 0.2) */
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "navmesh.bounds.max")), 3);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(it_get(j, "navmesh.bounds.max"), 0)->valuedouble,
                            20.0, 1e-6);
    ck_assert(cJSON_IsNull(it_get(j, "navmesh.from_grid")));
    ck_assert_int_gt((int)it_num(j, "memory_bytes"), (int)it_num(j, "navmesh.mesh_bytes") - 1);
    cJSON_Delete(j);

    /* POST: the id is the content's, settings included. */
    r = it_req(&s, "POST", "/v1/maps", "model/obj", nav_floor_obj);
    ck_assert_int_eq(r.status, 201);
    j = it_json(&r);
    ck_assert_str_eq(hc_header(&r, "Location", buf, sizeof(buf)) + strlen("/v1/maps/"),
                     it_str(j, "id"));
    hc_free(&r);
    r = it_req(&s, "POST", "/v1/maps", "model/obj", nav_floor_obj);
    ck_assert_int_eq(r.status, 200);
    k = it_json(&r);
    ck_assert_str_eq(it_str(k, "id"), it_str(j, "id"));
    cJSON_Delete(k);
    hc_free(&r);
    k = it_call(&s, "POST", "/v1/maps?tile_size=48", "model/obj", nav_floor_obj, 201);
    ck_assert_str_ne(it_str(k, "id"), it_str(j, "id"));
    ck_assert_int_eq((int)it_num(k, "navmesh.settings.tile_size"), 48);
    cJSON_Delete(k);
    cJSON_Delete(j);

    /* The envelope: OBJ text, a converted grid as Moving AI text or a map
     * object. */
    j = it_call(&s, "PUT", "/v1/maps/env", "application/json",
                "{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nv 8 0 0\\nv 8 0 8\\nv 0 0 8\\nf 4 3 2 "
                "1\\n\",\"agent\":{\"radius\":0.5,\"height\":1.5},\"tile_size\":32}",
                201);
    ck_assert_double_eq_tol(it_num(j, "navmesh.settings.agent.radius"), 0.5, 1e-6);
    ck_assert_double_eq_tol(it_num(j, "navmesh.settings.agent.height"), 1.5, 1e-6);
    cJSON_Delete(j);
    {
        char *text = it_open_map_text(24, 9);
        env = it_nav_envelope(text, NULL);
        free(text);
    }
    j = it_call(&s, "PUT", "/v1/maps/grid", "application/json", env, 201);
    free(env);
    ck_assert_int_eq((int)it_num(j, "navmesh.from_grid.width"), 24);
    ck_assert_int_eq((int)it_num(j, "navmesh.from_grid.height"), 9);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(it_get(j, "navmesh.bounds.max"), 2)->valuedouble,
                            9.0, 1e-6);
    cJSON_Delete(j);
    j = it_call(&s, "PUT", "/v1/maps/grid2", "application/json",
                "{\"kind\":\"navmesh\",\"from_grid\":{\"rows\":[\"......\",\"..@@..\",\"......\"],"
                "\"doors\":{\"gate\":{\"cells\":[[2,1]],\"open\":false}}}}",
                201);
    k = cJSON_GetArrayItem(it_get(j, "navmesh.areas"), 0);
    ck_assert_str_eq(it_str(k, "id"), "gate");
    ck_assert(!it_truth(k, "enabled"));
    cJSON_Delete(j);
    /* A grid JSON map may say what it is. */
    cJSON_Delete(it_call(&s, "PUT", "/v1/maps/plain", "application/json",
                         "{\"kind\":\"grid\",\"rows\":[\"...\"]}", 201));
    j = it_call(&s, "GET", "/v1/maps", NULL, NULL, 200);
    {
        int grids = 0, navs = 0;
        const cJSON *m;
        cJSON_ArrayForEach(m, it_get(j, "maps")) {
            grids += strcmp(it_str(m, "kind"), "grid") == 0;
            navs += strcmp(it_str(m, "kind"), "navmesh") == 0;
        }
        ck_assert_int_eq(grids, 1);
        ck_assert_int_eq(navs, 6);
    }
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.nav_max_vertices"), 1 << 20);
    ck_assert_str_eq(cJSON_GetArrayItem(it_get(j, "navmesh_algorithms"), 0)->valuestring,
                     "polyanya");
    cJSON_Delete(j);
    it_call_error(&s, "GET", "/v1/maps/floor/cells", NULL, NULL, 422, "unsupported", NULL);

    /* Refusals, each naming its field; the map is unchanged after each. */
    it_call_error(&s, "PUT", "/v1/maps/floor", "model/obj",
                  "v 0 0 0\nv 20 0 0\nv 20 0 20\nf 1 2 3\n", 422, "invalid_value", "obj");
    it_call_error(&s, "PUT", "/v1/maps/floor", "model/obj", "v 0 0 0\nf 1 2 9\n", 422,
                  "invalid_value", "obj");
    it_call_error(&s, "PUT", "/v1/maps/floor", "model/obj", "v 0 0 x\n", 400, "malformed_map",
                  "obj");
    it_call_error(&s, "PUT", "/v1/maps/floor?speed=2", "model/obj", nav_floor_obj, 400,
                  "invalid_request", "speed");
    it_call_error(&s, "PUT", "/v1/maps/floor?cell_size=0", "model/obj", nav_floor_obj, 422,
                  "invalid_value", "cell_size");
    it_call_error(&s, "PUT", "/v1/maps/floor?tile_size=20.5", "model/obj", nav_floor_obj, 400,
                  "invalid_request", "tile_size");
    it_call_error(&s, "PUT", "/v1/maps/floor", "application/json",
                  "{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\",\"from_grid\":\"x\"}", 400,
                  "invalid_request", "from_grid");
    it_call_error(&s, "PUT", "/v1/maps/floor", "application/json",
                  "{\"kind\":\"navmesh\",\"from_grid\":\"x\",\"agent\":{\"radius\":-1}}", 422,
                  "invalid_value", "agent.radius");
    it_call_error(&s, "PUT", "/v1/maps/floor", "application/json",
                  "{\"kind\":\"navmesh\",\"from_grid\":{\"rows\":[\"...x\"]}}", 422,
                  "invalid_value", "from_grid.rows[0]");
    it_call_error(&s, "PUT", "/v1/maps/floor", "application/json",
                  "{\"kind\":\"navmesh\",\"from_grid\":{\"rows\":[\"...\"],\"walls\":[[0,0,"
                  "\"E\"]]}}",
                  422, "unsupported", "from_grid.walls");
    it_call_error(&s, "PUT", "/v1/maps/floor", "application/json",
                  "{\"kind\":\"navmesh\",\"from_grid\":\"x\",\"colour\":1}", 400, "invalid_request",
                  "colour");
    it_call_error(&s, "PUT", "/v1/maps/floor", "application/json", "{\"kind\":\"navmash\"}", 422,
                  "invalid_value", "kind");
    it_call_error(&s, "PUT", "/v1/maps/floor", "application/json",
                  "{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nv 1 0 0\\nv 1 0 1\\nf 3 2 1\\n\","
                  "\"obstacles\":[{\"id\":\"a b\",\"box\":{\"min\":[0,0,0],\"max\":[1,1,1]}}]}",
                  422, "invalid_value", "obstacles[0].id");
    j = it_call(&s, "GET", "/v1/maps/floor", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    it_stop(&s);

    /* The navmesh limits: named by their flags. */
    s = it_start(ARGS("--nav-max-vertices", "3", "--nav-max-voxels", "1000"));
    it_call_error(&s, "PUT", "/v1/maps/f", "model/obj", nav_floor_obj, 413, "limit_exceeded",
                  "limits.nav_max_vertices");
    it_call_error(&s, "PUT", "/v1/maps/f", "model/obj", "v 0 0 0\nv 20 0 20\nv 20 0 0\nf 1 2 3\n",
                  413, "limit_exceeded", "limits.nav_max_voxels");
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.nav_max_voxels"), 1000);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* The length of a navmesh path answer, its found flag and map version. */
static double nav_length(const hc_server *s, const char *map, float sx, float sz, float gx,
                         float gz, bool *found, int *version, bool *cached) {
    const float a[3] = {sx, 0, sz}, b[3] = {gx, 0, gz};
    cJSON *j = it_nav_path(s, map, a, b, NULL);
    double len = it_num(j, "length");
    *found = it_truth(j, "found");
    if (version) *version = (int)it_num(j, "map_version");
    if (cached) *cached = it_truth(j, "stats.cached");
    cJSON_Delete(j);
    return len;
}

/* PATCH of a navmesh map: obstacles put, moved and removed, areas switched;
 * each a new version whose paths go round (or end partial) and whose
 * removal gives the first path back; the old version's cache is dropped;
 * refusals change nothing; the data directory keeps it all. */
START_TEST(routes_maps_navmesh_patch) {
    char dir[] = "/tmp/pathd-nav-XXXXXX";
    hc_server s;
    cJSON *j;
    bool found, cached;
    int version;
    double straight, around;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    s = it_start(ARGS("--data-dir", dir));
    it_put_nav_open(&s, "n", 30, 9);

    straight = nav_length(&s, "n", 1.5f, 4.5f, 28.5f, 4.5f, &found, &version, &cached);
    ck_assert(found && version == 1 && !cached);
    ck_assert_double_eq_tol(straight, 27.0, 1e-3);
    nav_length(&s, "n", 1.5f, 4.5f, 28.5f, 4.5f, &found, &version, &cached);
    ck_assert(cached);

    /* A crate across the middle, a gap at z 8..9: the path goes round. */
    j = it_call(
        &s, "PATCH", "/v1/maps/n", "application/json",
        "{\"obstacles\":[{\"id\":\"crate\",\"box\":{\"min\":[14,-1,-1],\"max\":[16,3,7.5]}}]}",
        200);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    ck_assert_int_gt((int)it_num(j, "navmesh.tiles.rebuilt"), 0);
    ck_assert_int_lt((int)it_num(j, "navmesh.tiles.rebuilt"), 4);
    ck_assert_str_eq(it_str(cJSON_GetArrayItem(it_get(j, "navmesh.obstacles"), 0), "id"), "crate");
    cJSON_Delete(j);
    around = nav_length(&s, "n", 1.5f, 4.5f, 28.5f, 4.5f, &found, &version, &cached);
    ck_assert(found && version == 2 && !cached); /* the old version's answer is not served */
    ck_assert_double_gt(around, straight + 0.5); /* round the crate's end at z 7.5 + radius */

    /* Moved to close the gap too: the goal is cut off, the path partial. */
    j = it_call(&s, "PATCH", "/v1/maps/n", "application/json",
                "{\"obstacles\":[{\"id\":\"crate\",\"cylinder\":{\"base\":[15,0,4.5],"
                "\"radius\":6,\"height\":2}}]}",
                200);
    ck_assert_int_eq((int)it_num(j, "version"), 3);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "navmesh.obstacles")), 1);
    cJSON_Delete(j);
    {
        const float a[3] = {1.5f, 0, 4.5f}, b[3] = {28.5f, 0, 4.5f};
        float last[3];
        j = it_nav_path(&s, "n", a, b, NULL);
        ck_assert(!it_truth(j, "found") && it_truth(j, "partial"));
        ck_assert_str_eq(it_str(j, "reason"), "unreachable");
        it_nav_point(j, it_nav_npoints(j) - 1, last);
        /* It ends outside the cylinder, on the start's side. */
        ck_assert_float_lt(last[0], 15.0f);
        ck_assert_float_ge(hypotf(last[0] - 15.0f, last[2] - 4.5f), 6.0f);
        cJSON_Delete(j);
    }
    /* Refusals change nothing. */
    it_call_error(&s, "PATCH", "/v1/maps/n", "application/json",
                  "{\"remove_obstacles\":[\"crate\",\"barrel\"]}", 422, "invalid_value",
                  "remove_obstacles[1]");
    it_call_error(&s, "PATCH", "/v1/maps/n", "application/json",
                  "{\"obstacles\":[{\"id\":\"x\",\"box\":{\"min\":[1,0,1],\"max\":[0,1,2]}}]}", 422,
                  "invalid_value", "obstacles[0].box");
    it_call_error(&s, "PATCH", "/v1/maps/n", "application/json", "{\"cells\":[]}", 400,
                  "invalid_request", "cells");
    it_call_error(&s, "PATCH", "/v1/maps/n", "application/json", "{}", 400, "invalid_request",
                  NULL);
    it_call_error(&s, "PATCH", "/v1/maps/n", "application/json",
                  "{\"areas\":[{\"id\":\"nosuch\",\"enabled\":false}]}", 422, "invalid_value",
                  "areas[0].id");
    j = it_call(&s, "GET", "/v1/maps/n", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 3);
    cJSON_Delete(j);

    /* Removed: the first path again. */
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/n", "application/json",
                         "{\"remove_obstacles\":[\"crate\"]}", 200));
    ck_assert_double_eq_tol(nav_length(&s, "n", 1.5f, 4.5f, 28.5f, 4.5f, &found, &version, NULL),
                            straight, 1e-3);
    ck_assert(found && version == 4);

    /* Areas: a grid's closed door is a disabled area. */
    it_put_map(&s, "door", "application/json",
               "{\"kind\":\"navmesh\",\"from_grid\":{\"rows\":[\"..........\",\"@@@@@.@@@@\","
               "\"..........\"],\"doors\":{\"gate\":{\"cells\":[[5,1]],\"open\":false}}}}",
               201);
    nav_length(&s, "door", 0.5f, 0.5f, 0.5f, 2.5f, &found, NULL, NULL);
    ck_assert(!found);
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/door", "application/json",
                         "{\"areas\":[{\"id\":\"gate\",\"enabled\":true,\"cost\":3}]}", 200));
    {
        const float a[3] = {0.5f, 0, 0.5f}, b[3] = {0.5f, 0, 2.5f};
        j = it_nav_path(&s, "door", a, b, NULL);
        ck_assert(it_truth(j, "found"));
        ck_assert_double_gt(it_num(j, "cost"), it_num(j, "length")); /* the gate costs 3 */
        cJSON_Delete(j);
    }
    /* A grid PATCH body on a navmesh map and a navmesh one on a grid map. */
    it_put_map(&s, "g", "text/x-movingai-map", "type octile\nheight 1\nwidth 3\nmap\n...\n", 201);
    it_call_error(&s, "PATCH", "/v1/maps/g", "application/json", "{\"obstacles\":[]}", 400,
                  "invalid_request", "obstacles");

    /* The data directory keeps the navmesh maps at their versions, with
     * their obstacles and area states. */
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/n", "application/json",
                         "{\"obstacles\":[{\"id\":\"crate\",\"box\":{\"min\":[14,-1,-1],\"max\":"
                         "[16,3,7.5]}}]}",
                         200));
    it_stop(&s);
    s = it_start(ARGS("--data-dir", dir));
    j = it_call(&s, "GET", "/v1/maps/n", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 5);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "navmesh.obstacles")), 1);
    cJSON_Delete(j);
    ck_assert_double_eq_tol(nav_length(&s, "n", 1.5f, 4.5f, 28.5f, 4.5f, &found, &version, NULL),
                            around, 1e-3);
    ck_assert(found && version == 5);
    nav_length(&s, "door", 0.5f, 0.5f, 0.5f, 2.5f, &found, NULL, NULL);
    ck_assert(found);
    ck_assert_ptr_null(it_call(&s, "DELETE", "/v1/maps/n", NULL, NULL, 204));
    it_stop(&s);
    s = it_start(ARGS("--data-dir", dir));
    it_call_error(&s, "GET", "/v1/maps/n", NULL, NULL, 404, "map_not_found", NULL);
    ck_assert_ptr_null(it_call(&s, "DELETE", "/v1/maps/door", NULL, NULL, 204));
    ck_assert_ptr_null(it_call(&s, "DELETE", "/v1/maps/g", NULL, NULL, 204));
    it_stop(&s);
    ck_assert_int_eq(rmdir(dir), 0); /* the map files went with their maps */
}
END_TEST

/* A map whose middle row is a door of `side` cells. Free with free(). */
static char *door_row_map(int side) {
    size_t cap = (size_t)(side + 4) * (size_t)side + (size_t)side * 16 + 256, len = 0;
    char *b = malloc(cap);
    len += (size_t)sprintf(b, "{\"rows\":[");
    for (int y = 0; y < side; y++) {
        b[len++] = y ? ',' : ' ';
        b[len++] = '"';
        memset(b + len, '.', (size_t)side);
        len += (size_t)side;
        b[len++] = '"';
    }
    len += (size_t)sprintf(b + len, "],\"doors\":{\"gate\":{\"cells\":[");
    for (int x = 0; x < side; x++)
        len += (size_t)sprintf(b + len, "%s[%d,%d]", x ? "," : "", x, side / 2);
    sprintf(b + len, "]}}}");
    return b;
}

/* The PATCH: 1000 toggles of a door of 512 cells (30 KB) cost
 * +386 MB and 10 s of a worker; coalesced it costs one rewrite of the door
 * (or none), and the change log keeps each cell once. */
START_TEST(routes_maps_patch_toggles_coalesced) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char *map = door_row_map(512), *body = malloc(40000);
    size_t len = 0;
    long before, after;
    struct timespec t0;
    double took;
    hc_resp r;
    cJSON *j;
    it_put_map(&s, "big", "application/json", map, 201);
    len += (size_t)sprintf(body, "{\"doors\":[");
    for (int i = 0; i < 1001; i++)
        len += (size_t)sprintf(body + len, "%s{\"id\":\"gate\",\"open\":%s}", i ? "," : "",
                               i % 2 ? "true" : "false");
    sprintf(body + len, "]}");
    before = it_rss_kib(s.pid);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = it_req(&s, "PATCH", "/v1/maps/big", "application/json", body);
    took = it_since(&t0);
    after = it_rss_kib(s.pid);
    fprintf(stderr,
            "routes_maps_patch_toggles_coalesced: %zu-byte PATCH of 1001 toggles answered in "
            "%.3f s, server RSS %ld -> %ld KiB\n",
            strlen(body), took, before, after);
    ck_assert_msg(r.status == 200, "%d %.300s", r.status, r.body);
    j = it_json(&r);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    cJSON_Delete(j);
    hc_free(&r);
    ck_assert_msg(after - before < 32 * 1024, "the PATCH cost %ld KiB", after - before);
    /* Toggled 1001 times from open: closed now. */
    r = it_req(&s, "POST", "/v1/maps/big/path", "application/json",
               "{\"start\":[0,0],\"goal\":[0,511]}");
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert(!it_truth(j, "found"));
    cJSON_Delete(j);
    hc_free(&r);
    free(map);
    free(body);
    it_stop(&s);
}
END_TEST

/* More changes than --max-patch-changes: 422 too_many_changes, nothing
 * applied. */
START_TEST(routes_maps_patch_max_changes) {
    hc_server s = it_start(ARGS("--max-patch-changes", "3"));
    hc_resp r;
    cJSON *j;
    it_put_map(&s, "room", "application/json", it_room_json, 201);
    r = it_req(&s, "PATCH", "/v1/maps/room", "application/json",
               "{\"cells\":[{\"x\":0,\"y\":0,\"cost\":2},{\"x\":1,\"y\":0,\"cost\":2},"
               "{\"x\":2,\"y\":0,\"cost\":2},{\"x\":3,\"y\":0,\"cost\":2}]}");
    it_expect_error(&r, 422, "too_many_changes", NULL);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/room", NULL, NULL);
    j = it_json(&r);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "PATCH", "/v1/maps/room", "application/json",
               "{\"cells\":[{\"x\":0,\"y\":0,\"cost\":2},{\"x\":1,\"y\":0,\"cost\":2},"
               "{\"x\":2,\"y\":0,\"cost\":2}]}");
    ck_assert_int_eq(r.status, 200);
    hc_free(&r);
    it_stop(&s);
}
END_TEST

/* An open w x w Moving AI map. Free with free(). */
static char *open_text(int w) {
    size_t cap = (size_t)(w + 1) * (size_t)w + 64, len;
    char *b = malloc(cap);
    len = (size_t)sprintf(b, "type octile\nheight %d\nwidth %d\nmap\n", w, w);
    for (int y = 0; y < w; y++) {
        memset(b + len, '.', (size_t)w);
        len += (size_t)w;
        b[len++] = '\n';
    }
    b[len] = '\0';
    return b;
}

/* A w x w Moving AI map with every cell blocked with probability 1/5 (a
 * fixed pattern). Free with free(). */
static char *cluttered_text(int w) {
    char *b = open_text(w), *rows = strstr(b, "map\n") + 4;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int y = 0; y < w; y++)
        for (int i = 0; i < w; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (x % 5 == 0) rows[(size_t)y * (size_t)(w + 1) + (size_t)i] = '@';
        }
    return b;
}

/* --grid-build-ms bounds every grid build a request starts: an upload, a
 * generated maze and a PATCH's repair each stop inside their long phases
 * once it passes and answer 413 limit_exceeded naming
 * limits.grid_build_ms, with nothing published and nothing charged; a map
 * stored before is still loaded at start whatever its build takes. Before,
 * grid builds had no limit at all. */
START_TEST(routes_maps_grid_builds_bounded) {
    char dir[] = "/tmp/pathd-gridbuild-XXXXXX", *map = cluttered_text(1024);
    size_t cap = 64 + 5000 * 40, len = 0;
    char *patch = malloc(cap);
    hc_server s;
    hc_resp r;
    cJSON *j;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_ptr_nonnull(patch);
    /* Stored with the default limit. */
    s = it_start(ARGS("--data-dir", dir, "--max-map-side", "2048"));
    it_put_map(&s, "big", "text/x-movingai-map", map, 201);
    it_stop(&s);
    s = it_start(ARGS("--data-dir", dir, "--max-map-side", "2048", "--grid-build-ms", "1"));
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.grid_build_ms"), 1);
    cJSON_Delete(j);
    /* Loaded at start although it takes longer than 1 ms. */
    j = it_call(&s, "GET", "/v1/maps/big", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    /* A new upload of it: stopped. */
    r = it_req(&s, "PUT", "/v1/maps/big2", "text/x-movingai-map", map);
    it_expect_error(&r, 413, "limit_exceeded", "limits.grid_build_ms");
    ck_assert_ptr_nonnull(strstr(r.body, "grid_build_ms (1 ms)"));
    hc_free(&r);
    it_call_error(&s, "GET", "/v1/maps/big2", NULL, NULL, 404, "map_not_found", NULL);
    /* A maze: stopped. */
    it_call_error(&s, "POST", "/v1/maps/generate", "application/json",
                  "{\"type\":\"maze\",\"width\":2048,\"height\":2048,\"seed\":1,\"id\":\"mz\"}",
                  413, "limit_exceeded", "limits.grid_build_ms");
    it_call_error(&s, "GET", "/v1/maps/mz", NULL, NULL, 404, "map_not_found", NULL);
    /* A PATCH of 5000 cells: its repair is stopped, the map stays at
     * version 1. */
    len += (size_t)sprintf(patch, "{\"cells\":[");
    for (int i = 0; i < 5000; i++)
        len += (size_t)sprintf(patch + len, "%s{\"x\":%d,\"y\":%d,\"cost\":0}", i ? "," : "",
                               (i * 37) % 1024, (i * 101) % 1024);
    sprintf(patch + len, "]}");
    r = it_req(&s, "PATCH", "/v1/maps/big", "application/json", patch);
    it_expect_error(&r, 413, "limit_exceeded", "limits.grid_build_ms");
    hc_free(&r);
    j = it_call(&s, "GET", "/v1/maps/big", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    /* Nothing of the refused builds is held: one map's worth. */
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "maps"), 1);
    {
        double held = it_num(j, "memory.maps_bytes");
        cJSON_Delete(j);
        j = it_call(&s, "GET", "/v1/maps/big", NULL, NULL, 200);
        ck_assert_double_eq(held, it_num(j, "memory_bytes"));
        cJSON_Delete(j);
    }
    ck_assert_ptr_null(it_call(&s, "DELETE", "/v1/maps/big", NULL, NULL, 204));
    it_stop(&s);
    ck_assert_int_eq(rmdir(dir), 0);
    free(patch);
    free(map);
}
END_TEST

/* --max-memory: uploads are refused 507 insufficient_storage once the
 * budget cannot hold one more map, before it is built; the server's
 * resident memory stays within the budget; a DELETE makes room again; new
 * sessions are refused too once their search has no room. Before the
 * budget, uploads went on until the host ran out of memory. */
START_TEST(routes_maps_memory_budget) {
    hc_server s = it_start(ARGS("--max-memory", "40000000", "--landmark-bytes", "0",
                                "--max-sessions-per-map", "100000", "--max-sessions", "100000"));
    char *map = open_text(512), path[64];
    long before = it_rss_kib(s.pid), after;
    int n = 0, sessions = 0;
    hc_resp r;
    cJSON *j;
    for (;; n++) {
        ck_assert_msg(n < 40, "40 maps of 512x512 fitted a 40 MB budget");
        snprintf(path, sizeof(path), "/v1/maps/m%d", n);
        r = it_req(&s, "PUT", path, "text/x-movingai-map", map);
        if (r.status != 201) break;
        hc_free(&r);
    }
    it_expect_error(&r, 507, "insufficient_storage", NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "--max-memory"));
    hc_free(&r);
    ck_assert_int_ge(n, 1);
    after = it_rss_kib(s.pid);
    fprintf(stderr,
            "routes_maps_memory_budget: %d maps of 512x512 fit 40 MB; server RSS %ld -> %ld KiB\n",
            n, before, after);
    /* Not under TSan (its shadow memory is several times the heap) nor
     * ASan: its quarantine keeps every build's freed scratch (the auto
     * model's search context and jps scratch, ~124 bytes a cell, not held
     * by the map and not charged) resident, up to 256 MB. Since the
     * reservation is the map's real size (13.2 MB, 10.4 MB held) rather
     * than 64 bytes a cell (28.3 MB), 3 of these maps fit instead of 2 and
     * ASan's RSS passed the check (+59 MB for 31 MB held). */
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
    ck_assert_msg((after - before) * 1024 < 40000000 + (8 << 20), "RSS grew by %ld KiB",
                  after - before);
#endif
    r = it_req(&s, "GET", "/v1/info", NULL, NULL);
    j = it_json(&r);
    ck_assert_int_eq((int)it_num(j, "memory.budget_bytes"), 40000000);
    ck_assert(it_num(j, "memory.used_bytes") <= 40000000);
    ck_assert(it_num(j, "memory.maps_bytes") > 0);
    ck_assert(it_num(j, "memory.refused") >= 1);
    cJSON_Delete(j);
    hc_free(&r);
    /* Sessions: each reserves a search over the whole map until its first
     * plan; once none fits, 507. */
    for (;; sessions++) {
        ck_assert_msg(sessions < 20000, "sessions never ran out of room");
        r = it_req(&s, "POST", "/v1/maps/m0/sessions", "application/json",
                   "{\"start\":[0,0],\"goal\":[511,511]}");
        if (r.status != 201) break;
        hc_free(&r);
    }
    it_expect_error(&r, 507, "insufficient_storage", NULL);
    hc_free(&r);
    fprintf(stderr, "routes_maps_memory_budget: then %d sessions\n", sessions);
    /* DELETEs give their maps' memory back (their sessions' too): an
     * upload fits again. */
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/v1/maps/m%d", i);
        r = it_req(&s, "DELETE", path, NULL, NULL);
        ck_assert_int_eq(r.status, 204);
        hc_free(&r);
    }
    r = it_req(&s, "GET", "/v1/info", NULL, NULL);
    j = it_json(&r);
    ck_assert(it_num(j, "memory.maps_bytes") == 0);
    ck_assert(it_num(j, "memory.sessions_bytes") == 0);
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "PUT", "/v1/maps/again", "text/x-movingai-map", map);
    ck_assert_msg(r.status == 201, "%d %.200s", r.status, r.body);
    hc_free(&r);
    free(map);
    it_stop(&s);
}
END_TEST

/* What grid18 added holds memory too: a cached flow field counts as a
 * cache, a new agent size's grid and hierarchy as the map's, and a first
 * use the budget cannot hold is refused 507 before it is built. /v1/info
 * and /metrics report the same budget and kinds. */
START_TEST(routes_maps_memory_budget_agents_and_fields) {
    hc_server s = it_start(
        ARGS("--max-memory", "18000000", "--landmark-bytes", "0", "--jps-table-bytes", "0"));
    char *map = open_text(512), *metrics, want[96];
    double caches0, maps0;
    hc_resp r = it_req(&s, "PUT", "/v1/maps/u", "text/x-movingai-map", map);
    cJSON *j;
    ck_assert_msg(r.status == 201, "%d %.200s", r.status, r.body);
    hc_free(&r);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    caches0 = it_num(j, "memory.caches_bytes");
    maps0 = it_num(j, "memory.maps_bytes");
    cJSON_Delete(j);
    /* A cached flow field of the whole map: ~2 bytes a cell of answer. */
    j = it_call(&s, "POST", "/v1/maps/u/flowfield", "application/json", "{\"goal\":[5,5]}", 200);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_msg(it_num(j, "memory.caches_bytes") >= caches0 + 512 * 512,
                  "caches %.0f -> %.0f bytes after a cached 512x512 flow field", caches0,
                  it_num(j, "memory.caches_bytes"));
    cJSON_Delete(j);
    /* Agent size 2 with hpa would build a grid and a hierarchy: more than
     * the 18 MB budget has left. */
    r = it_req(&s, "POST", "/v1/maps/u/path", "application/json",
               "{\"start\":[0,0],\"goal\":[500,500],\"agent_size\":2,\"algorithm\":\"hpa\"}");
    it_expect_error(&r, 507, "insufficient_storage", "agent_size");
    ck_assert_ptr_nonnull(strstr(r.body, "--max-memory"));
    hc_free(&r);
    /* With astar only the agent's grid is built: it fits, and counts. */
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[0,0],\"goal\":[500,500],\"agent_size\":2,"
                "\"algorithm\":\"astar\"}",
                200);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_msg(it_num(j, "memory.maps_bytes") >= maps0 + 2 * 512 * 512,
                  "maps %.0f -> %.0f bytes after agent size 2's grid", maps0,
                  it_num(j, "memory.maps_bytes"));
    ck_assert(it_num(j, "memory.used_bytes") <= 18000000);
    /* /metrics says the same (memory_usage in routes_ops.c). */
    r = it_req(&s, "GET", "/metrics", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    metrics = r.body;
    ck_assert_ptr_nonnull(strstr(metrics, "\npathd_memory_budget_bytes 18000000\n"));
    snprintf(want, sizeof(want), "\npathd_memory_bytes{kind=\"maps\"} %.0f\n",
             it_num(j, "memory.maps_bytes"));
    ck_assert_msg(strstr(metrics, want), "no '%s' in /metrics", want + 1);
    hc_free(&r);
    cJSON_Delete(j);
    /* The version's caches and agent data go with it. */
    r = it_req(&s, "DELETE", "/v1/maps/u", NULL, NULL);
    ck_assert_int_eq(r.status, 204);
    hc_free(&r);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert(it_num(j, "memory.maps_bytes") == 0);
    ck_assert(it_num(j, "memory.caches_bytes") == 0);
    cJSON_Delete(j);
    free(map);
    it_stop(&s);
}
END_TEST

/* A body the budget cannot take is refused 503 with Retry-After while it
 * streams in, not buffered. */
START_TEST(routes_maps_memory_budget_body) {
    hc_server s = it_start(ARGS("--max-memory", "2000000"));
    char *map = open_text(2000), buf[16];
    hc_resp r = it_req(&s, "PUT", "/v1/maps/big", "text/x-movingai-map", map);
    it_expect_error(&r, 503, "overloaded", NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "--max-memory"));
    ck_assert_ptr_nonnull(hc_header(&r, "Retry-After", buf, sizeof(buf)));
    hc_free(&r);
    r = it_req(&s, "GET", "/healthz", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    hc_free(&r);
    free(map);
    it_stop(&s);
}
END_TEST

/* Path queries sent again and again (cache off) until told to stop, as a
 * game server queries its own maps: one thread of a flood, all from the
 * test's one address. */
typedef struct flood {
    uint16_t port;
    atomic_int *stop; /* set by the test's thread */
    atomic_int answered;
} flood;

static void *flood_main(void *arg) {
    flood *f = arg;
    const char *body =
        "{\"start\":[0,0],\"goal\":[9,0],\"algorithm\":\"dijkstra\",\"cache\":false}";
    while (!atomic_load(f->stop)) {
        hc_resp r;
        if (hc_request(f->port, "POST", "/v1/maps/m/path", "application/json", body, 0, NULL, &r) ==
                0 &&
            r.status == 200)
            atomic_fetch_add(&f->answered, 1);
        hc_free(&r);
    }
    return NULL;
}

/* Whether fd has nothing to read yet (no answer, not closed). */
static bool unanswered(int fd) {
    char c;
    ssize_t k = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* The write lane, through the server: one worker runs a batch of seconds
 * (it yields every --slice-ms to whatever waits) while four threads flood
 * path queries from the same address. A PATCH, a PUT, a session create
 * and a DELETE are each answered while the batch is still unanswered:
 * each waited only for the queries queued before it. Before, a worker
 * took a write only when no search waited, so under the flood they waited
 * for the batch's deadline and then for a gap in the flood (52-169 s seen).
 * The pool counts them as writes (completed_builds) started ahead of
 * waiting searches (writes_ahead). */
START_TEST(routes_maps_writes_not_starved_by_queries) {
    hc_server s =
        it_start(ARGS("--workers", "1", "--max-batch", "100000", "--max-deadline-ms", "600000"));
    char *map = it_open_map_text(512, 512), *batch = it_slow_batch(20000, 10000), url[160];
    enum { FLOOD = 4 };
    flood f[FLOOD];
    pthread_t th[FLOOD];
    atomic_int stop = 0;
    int slow;
    cJSON *j, *info;
    it_put_map(&s, "open", "text/x-movingai-map", map, 201);
    it_put_map(&s, "m", "application/json", it_room_json, 201);
    it_put_map(&s, "gone", "application/json", it_room_json, 201);
    free(map);
    it_wait_pool(&s, 0, 0);
    info = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    int builds0 = (int)it_num(info, "pool.completed_builds");
    cJSON_Delete(info);
    slow = it_send_json_post(s.port, "/v1/maps/open/paths", batch);
    free(batch);
    it_wait_pool(&s, 1, 0);
    for (int i = 0; i < FLOOD; i++) {
        f[i].port = s.port;
        f[i].stop = &stop;
        atomic_init(&f[i].answered, 0);
        ck_assert_int_eq(pthread_create(&th[i], NULL, flood_main, &f[i]), 0);
    }
    /* The flood is on: queries answered while the batch runs. */
    for (int i = 0; i < FLOOD; i++)
        while (atomic_load(&f[i].answered) < 2) sched_yield();

    j = it_call(&s, "PATCH", "/v1/maps/m", "application/json",
                "{\"cells\":[{\"x\":0,\"y\":6,\"cost\":0}]}", 200);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    cJSON_Delete(j);
    ck_assert_msg(unanswered(slow), "the batch ended before the PATCH was answered");
    j = it_call(&s, "PUT", "/v1/maps/m2", "application/json", it_room_json, 201);
    cJSON_Delete(j);
    ck_assert(unanswered(slow));
    j = it_session_create(&s, "m", 0, 0, 9, 0, NULL, url, sizeof(url));
    cJSON_Delete(j);
    ck_assert(unanswered(slow));
    it_call(&s, "DELETE", "/v1/maps/gone", NULL, NULL, 204);
    ck_assert(unanswered(slow));

    atomic_store(&stop, 1);
    for (int i = 0; i < FLOOD; i++) pthread_join(th[i], NULL);
    close(slow); /* the batch goes on until its deadline or the drain */
    info = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_ge((int)it_num(info, "pool.completed_builds") - builds0, 4);
    ck_assert_int_ge((int)it_num(info, "pool.writes_ahead"), 1);
    ck_assert_int_ge((int)it_num(info, "pool.requeued"), 4);
    cJSON_Delete(info);
    it_stop(&s);
}
END_TEST

/* A write has a deadline for its wait: queued behind a build that holds
 * the one worker (writes run max(1, workers - 1) at a time), a PATCH is
 * answered 504 at --max-deadline-ms, nothing changed. Before, a write
 * waited without limit. */
START_TEST(routes_maps_write_wait_deadline) {
    /* The build holding the worker is a generated maze: a small body, so
     * the request reaches the worker well within its own wait limit (a
     * megabyte upload could spend the 50 ms that limit used to be on its
     * body alone on a loaded machine, expire, and leave nothing running);
     * a 1024x1024 corridor-1 maze then builds for far longer than 200 ms.
     * Should it still expire in the queue (504) or build before the test
     * sees it run (201), it is asked again under a new id, until the build
     * is seen holding the worker. */
    hc_server s = it_start(ARGS("--workers", "1", "--deadline-ms", "200", "--max-deadline-ms",
                                "200", "--max-map-cells", "4194304"));
    char raw[512], gen[256];
    int put;
    size_t n;
    hc_resp r;
    cJSON *j;
    it_put_map(&s, "m", "application/json", it_room_json, 201);
    it_wait_pool(&s, 0, 0);
    for (int try = 0;; try++) {
        it_pool p;
        ck_assert_int_lt(try, 50);
        snprintf(gen, sizeof(gen),
                 "{\"type\":\"maze\",\"id\":\"big%d\",\"width\":1024,\"height\":1024,"
                 "\"corridor_width\":1,\"walls\":\"edges\",\"seed\":7}",
                 try);
        n = (size_t)snprintf(raw, sizeof(raw),
                             "POST /v1/maps/generate HTTP/1.1\r\nHost: localhost\r\nConnection: "
                             "close\r\nContent-Type: application/json\r\nContent-Length: "
                             "%zu\r\n\r\n%s",
                             strlen(gen), gen);
        put = hc_send_only(s.port, raw, n);
        ck_assert_int_ge(put, 0);
        for (;;) {
            p = it_pool_now(&s);
            if ((p.running == 1 && p.queued == 0) || !unanswered(put)) break;
        }
        if (p.running == 1 && p.queued == 0 && unanswered(put)) break;
        ck_assert_int_eq(hc_read(put, &r), 0);
        ck_assert_msg(r.status == 504 || r.status == 201, "maze: %d", r.status);
        hc_free(&r);
        it_wait_pool(&s, 0, 0);
    }
    r = it_req(&s, "PATCH", "/v1/maps/m", "application/json",
               "{\"cells\":[{\"x\":0,\"y\":6,\"cost\":0}]}");
    it_expect_error(&r, 504, "deadline_exceeded", NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "nothing changed"));
    hc_free(&r);
    ck_assert_int_eq(hc_read(put, &r), 0);
    ck_assert_int_eq(r.status, 201);
    hc_free(&r);
    j = it_call(&s, "GET", "/v1/maps/m", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_ge((int)it_num(j, "pool.expired"), 1);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_maps) {
    Suite *s = suite_create("routes_maps");
    TCase *tc = tcase_create("routes_maps");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_maps_crud);
    tcase_add_test(tc, routes_maps_writes_not_starved_by_queries);
    tcase_add_test(tc, routes_maps_write_wait_deadline);
    tcase_add_test(tc, routes_maps_cells);
    tcase_add_test(tc, routes_maps_generate_mazes);
    tcase_add_test(tc, routes_maps_hierarchy);
    tcase_add_test(tc, routes_maps_navmesh_uploads);
    tcase_add_test(tc, routes_maps_navmesh_patch);
    tcase_add_test(tc, routes_maps_patch_toggles_coalesced);
    tcase_add_test(tc, routes_maps_patch_max_changes);
    tcase_add_test(tc, routes_maps_memory_budget);
    tcase_add_test(tc, routes_maps_grid_builds_bounded);
    tcase_add_test(tc, routes_maps_memory_budget_body);
    tcase_add_test(tc, routes_maps_memory_budget_agents_and_fields);
    suite_add_tcase(s, tc);
    return s;
}
