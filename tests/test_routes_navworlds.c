/* test_routes_navworlds.c -- navmesh worlds on the HTTP routes: every
 * RecastDemo setting named, range-checked and echoed; off-mesh links
 * uploaded (JSON and the query-string form), switched, removed and added
 * by PATCH, used by paths, sessions and crowds; agent types in paths,
 * sessions and crowds, obstacles applying to each; answers on the ground
 * saying how far snapping moved a point; and the bounds issue 25 asks of a
 * navmesh build (stacked floors refused before voxelising, area boxes by
 * their cover, a 65,536-obstacle PATCH by its count).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "testutil.h"

/* ---- the world ----
 * A floor 30 x 10 (y 0) split by a wall at x = 15 with a gap 1.2 wide at
 * z 4.4..5.6 (the default agent, radius 0.3, passes; "big", radius 0.8,
 * does not), and a platform (y 3) at x 20..28, z 12..18 reached only by
 * the off-mesh link "lift" from (24, 0, 9). */

typedef struct objtext {
    char *buf;
    size_t len, cap;
    int nv;
} objtext;

static void obj_printf(objtext *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void obj_printf(objtext *o, const char *fmt, ...) {
    va_list ap;
    if (o->cap - o->len < 256) {
        o->cap = o->cap ? 2 * o->cap : 4096;
        o->buf = realloc(o->buf, o->cap);
        ck_assert_ptr_nonnull(o->buf);
    }
    va_start(ap, fmt);
    o->len += (size_t)vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
}

/* A closed box, top facing up (counter-clockwise seen from above). */
static void obj_box(objtext *o, float x0, float y0, float z0, float x1, float y1, float z1) {
    for (int i = 0; i < 8; i++)
        obj_printf(o, "v %g %g %g\n", i & 1 ? x1 : x0, i & 4 ? y1 : y0, i & 2 ? z1 : z0);
    const int b = o->nv + 1;
    static const int q[6][4] = {{4, 6, 7, 5}, {0, 1, 3, 2}, {0, 4, 5, 1},
                                {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 5, 7, 3}};
    for (int f = 0; f < 6; f++)
        obj_printf(o, "f %d %d %d %d\n", b + q[f][0], b + q[f][1], b + q[f][2], b + q[f][3]);
    o->nv += 8;
}

static char *world_obj(void) {
    objtext o = {0};
    obj_box(&o, 0, -0.5f, 0, 30, 0, 10);
    obj_box(&o, 14.5f, 0, 0, 15.5f, 3, 4.4f);
    obj_box(&o, 14.5f, 0, 5.6f, 15.5f, 3, 10);
    obj_box(&o, 20, 2.5f, 12, 28, 3, 18);
    return o.buf;
}

static const char *const world_link =
    "{\"id\":\"lift\",\"start\":[24,0,9],\"end\":[24,3,13],\"radius\":0.5}";

/* The JSON envelope of the world with extra members (after a comma). */
static char *world_json(const char *extra) {
    char *obj = world_obj();
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "kind", "navmesh");
    cJSON_AddStringToObject(j, "obj", obj);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    free(obj);
    size_t n = strlen(text) + strlen(extra) + 8;
    char *out = malloc(n);
    text[strlen(text) - 1] = '\0'; /* drop the closing brace */
    snprintf(out, n, "%s%s%s}", text, extra[0] ? "," : "", extra);
    free(text);
    return out;
}

static const char *const world_settings =
    "\"cell_size\":0.3,\"cell_height\":0.2,\"agent\":{\"radius\":0.3,\"height\":2,"
    "\"max_climb\":0.9,\"max_slope\":45},\"agent_types\":[{\"id\":\"big\",\"radius\":0.8}]";

static void put_world(const hc_server *s, const char *id, bool links) {
    char extra[1024];
    snprintf(extra, sizeof extra, "%s%s%s%s", world_settings, links ? ",\"links\":[" : "",
             links ? world_link : "", links ? "]" : "");
    char *env = world_json(extra);
    it_put_map(s, id, "application/json", env, 201);
    free(env);
}

/* A path on map from a to b (agent type or NULL), answered 200. */
static cJSON *path(const hc_server *s, const char *map, const float a[3], const float b[3],
                   const char *type, const char *algo) {
    char body[512], url[128];
    snprintf(body, sizeof body,
             "{\"start\":[%g,%g,%g],\"goal\":[%g,%g,%g]%s%s%s,\"algorithm\":\"%s\",\"cache\":"
             "false}",
             a[0], a[1], a[2], b[0], b[1], b[2], type ? ",\"agent_type\":\"" : "", type ? type : "",
             type ? "\"" : "", algo ? algo : "polyanya");
    snprintf(url, sizeof url, "/v1/maps/%s/path", map);
    return it_call(s, "POST", url, "application/json", body, 200);
}

static bool reached(const hc_server *s, const char *map, const float a[3], const float b[3],
                    const char *type) {
    cJSON *j = path(s, map, a, b, type, NULL);
    bool r = it_truth(j, "found");
    cJSON_Delete(j);
    return r;
}

static void patch(const hc_server *s, const char *map, const char *body) {
    char url[128];
    snprintf(url, sizeof url, "/v1/maps/%s", map);
    cJSON_Delete(it_call(s, "PATCH", url, "application/json", body, 200));
}

static const float west[3] = {5, 0, 5}, east[3] = {25, 0, 5}, top[3] = {24, 3, 15};

/* ---- settings ---- */

/* Every RecastDemo setting: accepted, echoed in the map info; out of range
 * a 422 naming the field, in the JSON envelope and the query string. */
START_TEST(routes_navworlds_settings_named_and_echoed) {
    hc_server s = it_start(NULL);
    char *env = world_json(
        "\"cell_size\":0.25,\"cell_height\":0.1,\"tile_size\":48,\"region_min_size\":4,"
        "\"region_merge_size\":10,\"edge_max_len\":6,\"edge_max_error\":1.1,\"verts_per_poly\":5,"
        "\"detail_sample_dist\":4,\"detail_sample_max_error\":2,\"partition\":\"monotone\","
        "\"agent\":{\"radius\":0.4,\"height\":1.8,\"max_climb\":0.5,\"max_slope\":40}");
    cJSON *j = it_call(&s, "PUT", "/v1/maps/w", "application/json", env, 201);
    free(env);
    static const struct {
        const char *k;
        double v;
    } want[] = {{"cell_size", 0.25},       {"cell_height", 0.1},
                {"tile_size", 48},         {"region_min_size", 4},
                {"region_merge_size", 10}, {"edge_max_len", 6},
                {"edge_max_error", 1.1},   {"verts_per_poly", 5},
                {"detail_sample_dist", 4}, {"detail_sample_max_error", 2},
                {"agent.radius", 0.4},     {"agent.height", 1.8},
                {"agent.max_climb", 0.5},  {"agent.max_slope", 40}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char k[96];
        snprintf(k, sizeof k, "navmesh.settings.%s", want[i].k);
        ck_assert_msg(fabs(it_num(j, k) - want[i].v) < 1e-4, "%s: %g", k, it_num(j, k));
    }
    ck_assert_str_eq(it_str(j, "navmesh.settings.partition"), "monotone");
    cJSON_Delete(j);

    /* RecastDemo's defaults where the upload is silent. */
    env = world_json("");
    j = it_call(&s, "PUT", "/v1/maps/d", "application/json", env, 201);
    free(env);
    ck_assert_double_eq_tol(it_num(j, "navmesh.settings.cell_size"), 0.3, 1e-6);
    ck_assert_double_eq_tol(it_num(j, "navmesh.settings.agent.radius"), 0.6, 1e-6);
    ck_assert_int_eq((int)it_num(j, "navmesh.settings.region_min_size"), 8);
    ck_assert_int_eq((int)it_num(j, "navmesh.settings.region_merge_size"), 20);
    ck_assert_double_eq_tol(it_num(j, "navmesh.settings.edge_max_len"), 12, 1e-6);
    ck_assert_int_eq((int)it_num(j, "navmesh.settings.verts_per_poly"), 6);
    ck_assert_double_eq_tol(it_num(j, "navmesh.settings.detail_sample_dist"), 6, 1e-6);
    ck_assert_double_eq_tol(it_num(j, "navmesh.settings.detail_sample_max_error"), 1, 1e-6);
    ck_assert_str_eq(it_str(j, "navmesh.settings.partition"), "watershed");
    ck_assert_int_eq((int)it_num(j, "navmesh.settings.tile_size"), 32);
    cJSON_Delete(j);

    static const struct {
        const char *json, *query, *field;
    } bad[] = {
        {"\"region_min_size\":151", "region_min_size=151", "region_min_size"},
        {"\"region_merge_size\":-1", "region_merge_size=-1", "region_merge_size"},
        {"\"edge_max_len\":1001", "edge_max_len=1001", "edge_max_len"},
        {"\"edge_max_error\":0.05", "edge_max_error=0.05", "edge_max_error"},
        {"\"verts_per_poly\":7", "verts_per_poly=7", "verts_per_poly"},
        {"\"verts_per_poly\":2", "verts_per_poly=2", "verts_per_poly"},
        {"\"detail_sample_dist\":65", "detail_sample_dist=65", "detail_sample_dist"},
        {"\"detail_sample_max_error\":-1", "detail_sample_max_error=-1", "detail_sample_max_error"},
        {"\"partition\":\"voronoi\"", "partition=voronoi", "partition"},
        {"\"tile_size\":8", "tile_size=8", "tile_size"},
        {"\"tile_size\":1025", "tile_size=1025", "tile_size"},
        {"\"cell_size\":0", "cell_size=0", "cell_size"},
        {"\"agent\":{\"max_slope\":90}", "agent_max_slope=90", "agent.max_slope"},
    };
    char *obj = world_obj();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        env = world_json(bad[i].json);
        it_call_error(&s, "PUT", "/v1/maps/bad", "application/json", env, 422, "invalid_value",
                      bad[i].field);
        free(env);
        char url[160];
        snprintf(url, sizeof url, "/v1/maps/bad?%s", bad[i].query);
        hc_resp r = it_req(&s, "PUT", url, "model/obj", obj);
        ck_assert_msg(r.status == 422 || r.status == 400, "%s: %d", url, r.status);
        cJSON *e = it_json(&r);
        const char *field = it_str(e, "error.field");
        const char *want_q =
            strcmp(bad[i].field, "agent.max_slope") == 0 ? "agent_max_slope" : bad[i].field;
        ck_assert_msg(field && strcmp(field, want_q) == 0, "%s: field %s", url,
                      field ? field : "(none)");
        cJSON_Delete(e);
        hc_free(&r);
    }
    /* Layer regions lose areas in this Recast: refused with areas. */
    env = world_json("\"partition\":\"layers\",\"areas\":[{\"id\":\"mud\",\"boxes\":[{\"min\":[0,"
                     "-1,0],\"max\":[5,1,5]}]}]");
    it_call_error(&s, "PUT", "/v1/maps/bad", "application/json", env, 422, "unsupported",
                  "partition");
    free(env);
    free(obj);
    it_stop(&s);
}
END_TEST

/* ---- links ---- */

START_TEST(routes_navworlds_links) {
    hc_server s = it_start(NULL);
    put_world(&s, "w", true);
    cJSON *j = it_call(&s, "GET", "/v1/maps/w", NULL, NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "navmesh.links")), 1);
    ck_assert_str_eq(it_str(j, "navmesh.links.0.id"), "lift");
    ck_assert(it_truth(j, "navmesh.links.0.bidirectional") &&
              it_truth(j, "navmesh.links.0.enabled"));
    cJSON_Delete(j);

    /* The platform is reached by the lift only; polyanya does not take
     * links, so the answer is Detour's and says so. */
    j = path(&s, "w", west, top, NULL, NULL);
    ck_assert(it_truth(j, "found"));
    ck_assert_int_eq((int)it_num(j, "links"), 1);
    ck_assert(!it_truth(j, "exact"));
    ck_assert_ptr_nonnull(it_str(j, "inexact"));
    cJSON_Delete(j);
    ck_assert(reached(&s, "w", top, west, NULL)); /* both ways */

    /* Switched off like a door, and on again; removed; put back one way. */
    patch(&s, "w", "{\"link_states\":[{\"id\":\"lift\",\"enabled\":false}]}");
    ck_assert(!reached(&s, "w", west, top, NULL));
    patch(&s, "w", "{\"link_states\":[{\"id\":\"lift\",\"enabled\":true}]}");
    ck_assert(reached(&s, "w", west, top, NULL));
    patch(&s, "w", "{\"remove_links\":[\"lift\"]}");
    ck_assert(!reached(&s, "w", west, top, NULL));
    patch(&s, "w",
          "{\"links\":[{\"id\":\"drop\",\"start\":[24,3,13],\"end\":[24,0,9],"
          "\"bidirectional\":false}]}");
    ck_assert(reached(&s, "w", top, west, NULL));
    ck_assert(!reached(&s, "w", west, top, NULL));
    j = it_call(&s, "GET", "/v1/maps/w", NULL, NULL, 200);
    ck_assert_str_eq(it_str(j, "navmesh.links.0.id"), "drop");
    ck_assert(!it_truth(j, "navmesh.links.0.bidirectional"));
    cJSON_Delete(j);

    /* A session's corridor takes the link too. */
    patch(&s, "w", "{\"links\":[{\"id\":\"up\",\"start\":[24,0,9],\"end\":[24,3,13]}]}");
    j = it_call(&s, "POST", "/v1/maps/w/sessions", "application/json",
                "{\"start\":[5,0,5],\"goal\":[24,3,15]}", 201);
    ck_assert(it_truth(j, "found"));
    cJSON_Delete(j);
    patch(&s, "w", "{\"remove_links\":[\"up\"]}");

    /* Errors name the element. */
    it_call_error(&s, "PATCH", "/v1/maps/w", "application/json",
                  "{\"link_states\":[{\"id\":\"nope\",\"enabled\":true}]}", 422, "invalid_value",
                  "link_states[0]");
    it_call_error(&s, "PATCH", "/v1/maps/w", "application/json", "{\"remove_links\":[\"nope\"]}",
                  422, "invalid_value", "remove_links[0]");
    it_call_error(&s, "PATCH", "/v1/maps/w", "application/json",
                  "{\"links\":[{\"id\":\"far\",\"start\":[1,0,1],\"end\":[29,0,9]}]}", 422,
                  "invalid_value", "links[0].end");
    it_call_error(
        &s, "PATCH", "/v1/maps/w", "application/json",
        "{\"links\":[{\"id\":\"a\",\"start\":[1,0,1],\"end\":[2,0,2],\"area\":\"none\"}]}", 422,
        "invalid_value", "links[0].area");

    /* The query-string form with a model/obj upload. */
    char *obj = world_obj();
    hc_resp r = it_req(&s, "PUT",
                       "/v1/maps/q?cell_size=0.3&agent_radius=0.3&links=lift:24,0,9,24,3,13,0.5,"
                       "one_way&agent_types=big:0.8,2,0.9,45",
                       "model/obj", obj);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    hc_free(&r);
    free(obj);
    ck_assert(reached(&s, "q", west, top, NULL));
    ck_assert(!reached(&s, "q", top, west, NULL));
    it_call_error(&s, "PUT", "/v1/maps/q2?links=lift:24,0,9", "model/obj", "v 0 0 0\n", 400,
                  "invalid_request", "links");

    /* The link survives a restart of the map from its stored envelope: a
     * PATCH of another kind keeps it. */
    patch(&s, "q",
          "{\"obstacles\":[{\"id\":\"crate\",\"box\":{\"min\":[2,-1,2],\"max\":[3,1,3]}}]}");
    ck_assert(reached(&s, "q", west, top, NULL));
    it_stop(&s);
}
END_TEST

/* A crowd agent walks to the lift, rides it and stands on the platform. */
START_TEST(routes_navworlds_crowd_takes_link) {
    hc_server s = it_start(NULL);
    put_world(&s, "w", true);
    char url[200], step[240];
    hc_resp r = it_req(&s, "POST", "/v1/maps/w/crowds", "application/json",
                       "{\"agents\":[{\"position\":[22,0,7],\"target\":[24,3,15]}]}");
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    ck_assert_ptr_nonnull(hc_header(&r, "Location", url, sizeof url));
    hc_free(&r);
    snprintf(step, sizeof step, "%s/step", url);
    bool on_link = false;
    double y = 0;
    for (int i = 0; i < 40 && y < 2.5; i++) {
        cJSON *j = it_call(&s, "POST", step, "application/json", "{\"steps\":5,\"dt\":0.1}", 200);
        const cJSON *a = cJSON_GetArrayItem(it_get(j, "agents"), 0);
        on_link = on_link || strcmp(it_str(a, "state"), "on_link") == 0;
        y = cJSON_GetArrayItem(it_get(a, "position"), 1)->valuedouble;
        cJSON_Delete(j);
    }
    ck_assert_msg(y > 2.5, "the agent did not reach the platform (y %g)", y);
    (void)on_link; /* a 0.1 s step may jump over the short ride */
    it_stop(&s);
}
END_TEST

/* ---- agent types ---- */

START_TEST(routes_navworlds_agent_types) {
    hc_server s = it_start(NULL);
    put_world(&s, "w", false);
    cJSON *j = it_call(&s, "GET", "/v1/maps/w", NULL, NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "navmesh.agent_types")), 2);
    ck_assert_str_eq(it_str(j, "navmesh.agent_types.0.id"), "default");
    ck_assert_str_eq(it_str(j, "navmesh.agent_types.1.id"), "big");
    ck_assert_double_eq_tol(it_num(j, "navmesh.agent_types.1.radius"), 0.8, 1e-6);
    ck_assert_int_gt((int)it_num(j, "navmesh.agent_types.1.polygons"), 0);
    ck_assert_int_gt((int)it_num(j, "navmesh.agent_types.1.kept_voxel_bytes"), 0);
    cJSON_Delete(j);

    /* The gap lets the default agent through, not the big one. */
    ck_assert(reached(&s, "w", west, east, NULL));
    ck_assert(reached(&s, "w", west, east, "default"));
    ck_assert(!reached(&s, "w", west, east, "big"));
    j = path(&s, "w", west, east, "big", "detour");
    ck_assert_str_eq(it_str(j, "agent_type"), "big");
    cJSON_Delete(j);
    it_call_error(&s, "POST", "/v1/maps/w/path", "application/json",
                  "{\"start\":[5,0,5],\"goal\":[25,0,5],\"agent_type\":\"giant\"}", 422,
                  "invalid_value", "agent_type");
    it_call_error(&s, "GET", "/v1/maps/w/path?start=5,0,5&goal=25,0,5&agent_type=giant", NULL, NULL,
                  422, "invalid_value", "agent_type");
    /* A batch names each query's type. */
    j = it_call(&s, "POST", "/v1/maps/w/paths", "application/json",
                "{\"queries\":[{\"start\":[5,0,5],\"goal\":[25,0,5]},{\"start\":[5,0,5],"
                "\"goal\":[25,0,5],\"agent_type\":\"big\"}]}",
                200);
    ck_assert(it_truth(j, "results.0.found") && !it_truth(j, "results.1.found"));
    cJSON_Delete(j);

    /* An obstacle applies to every type: the default agent is stopped too. */
    patch(&s, "w",
          "{\"obstacles\":[{\"id\":\"plug\",\"box\":{\"min\":[14,-1,3],\"max\":[16,2,"
          "7]}}]}");
    ck_assert(!reached(&s, "w", west, east, NULL));
    ck_assert(!reached(&s, "w", west, east, "big"));
    patch(&s, "w", "{\"remove_obstacles\":[\"plug\"]}");
    ck_assert(reached(&s, "w", west, east, NULL));

    /* Sessions and crowds name the type. */
    j = it_call(&s, "POST", "/v1/maps/w/sessions", "application/json",
                "{\"start\":[5,0,5],\"goal\":[25,0,5],\"agent_type\":\"big\"}", 201);
    ck_assert(it_truth(j, "partial"));
    cJSON_Delete(j);
    j = it_call(&s, "POST", "/v1/maps/w/sessions", "application/json",
                "{\"start\":[5,0,5],\"goal\":[25,0,5]}", 201);
    ck_assert(!it_truth(j, "partial"));
    cJSON_Delete(j);
    it_call_error(&s, "POST", "/v1/maps/w/sessions", "application/json",
                  "{\"start\":[5,0,5],\"goal\":[25,0,5],\"agent_type\":\"giant\"}", 422,
                  "invalid_value", "agent_type");
    /* A navmesh session's agent is one of the map's types, not a size. */
    it_call_error(&s, "POST", "/v1/maps/w/sessions", "application/json",
                  "{\"start\":[5,0,5],\"goal\":[25,0,5],\"agent_size\":2}", 422, "invalid_value",
                  "agent_size");
    j = it_call(&s, "POST", "/v1/maps/w/crowds", "application/json",
                "{\"agent_type\":\"big\",\"agents\":[{\"position\":[5,0,5],\"radius\":0.8}]}", 201);
    cJSON_Delete(j);
    it_call_error(&s, "POST", "/v1/maps/w/crowds", "application/json",
                  "{\"agents\":[{\"position\":[5,0,5],\"radius\":0.8}]}", 422, "invalid_value",
                  "agents[0].radius"); /* the default type's radius is 0.3 */
    it_call_error(&s, "POST", "/v1/maps/w/crowds", "application/json", "{\"agent_type\":\"giant\"}",
                  422, "invalid_value", "agent_type");
    it_stop(&s);
}
END_TEST

/* ---- heights and snapping ---- */

/* A point on the ground snaps where it is (moved 0), a point above it by
 * how far it is, and every point of a path is on the ground. */
START_TEST(routes_navworlds_snapping_says_how_far) {
    hc_server s = it_start(NULL);
    put_world(&s, "w", true);
    const float above[3] = {5, 1.2f, 5};
    cJSON *j = path(&s, "w", west, east, NULL, NULL);
    ck_assert_double_eq_tol(it_num(j, "snapped.start"), 0, 1e-3);
    ck_assert_double_eq_tol(it_num(j, "snapped.goal"), 0, 1e-3);
    for (int i = 0; i < it_nav_npoints(j); i++) {
        float p[3];
        it_nav_point(j, i, p);
        ck_assert_float_eq_tol(p[1], 0.0f, 1e-3f); /* the floor is flat at 0 */
    }
    cJSON_Delete(j);
    j = path(&s, "w", above, top, NULL, NULL);
    ck_assert_double_eq_tol(it_num(j, "snapped.start"), 1.2, 1e-3);
    ck_assert_double_eq_tol(it_num(j, "snapped.goal"), 0, 1e-3);
    float p[3];
    it_nav_point(j, it_nav_npoints(j) - 1, p);
    ck_assert_float_eq_tol(p[1], 3.0f, 1e-3f); /* on the platform */
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* ---- bounds (issue 25 items 1 and 9) ---- */

/* 400 floors stacked 0.1 apart: refused before voxelising, by the spans a
 * voxel column would stack (limits.nav_max_column_spans), not after
 * minutes of Recast at the build deadline; another map answers meanwhile. */
START_TEST(routes_navworlds_stacked_floors_refused_before_voxelising) {
    hc_server s = it_start(ARGS("--nav-build-ms", "60000"));
    objtext o = {0};
    for (int i = 0; i < 400; i++)
        obj_box(&o, 0, (float)i * 0.1f - 0.05f, 0, 40, (float)i * 0.1f, 40);
    char url[64] = "/v1/maps/stack?cell_height=0.01";
    hc_resp r = it_req(&s, "PUT", url, "model/obj", o.buf);
    ck_assert_int_eq(r.status, 413);
    cJSON *e = it_json(&r);
    const char *f = it_str(e, "error.field");
    ck_assert_msg(f && (strcmp(f, "limits.nav_max_column_spans") == 0 ||
                        strcmp(f, "limits.nav_max_tile_spans") == 0),
                  "field %s", f ? f : "(none)");
    cJSON_Delete(e);
    hc_free(&r);
    /* With both span limits raised past it, the build deadline stops it,
     * inside the voxelisation (between triangles), still a 413. */
    it_stop(&s);
    s = it_start(ARGS("--nav-build-ms", "300", "--nav-max-column-spans", "16383",
                      "--nav-max-tile-spans", "16777216"));
    r = it_req(&s, "PUT", url, "model/obj", o.buf);
    ck_assert_int_eq(r.status, 413);
    e = it_json(&r);
    ck_assert_str_eq(it_str(e, "error.field"), "limits.nav_build_ms");
    cJSON_Delete(e);
    hc_free(&r);
    free(o.buf);
    it_stop(&s);
}
END_TEST

/* 65,536 area boxes over a 20 x 20 floor: refused by their cover before
 * the build (each box marks every voxel column under it). */
START_TEST(routes_navworlds_area_boxes_bounded) {
    hc_server s = it_start(NULL);
    size_t cap = 65536 * 48 + 4096, n = 0;
    char *areas = malloc(cap);
    n += (size_t)snprintf(areas + n, cap - n, "\"areas\":[{\"id\":\"mud\",\"boxes\":[");
    for (int i = 0; i < 65536; i++)
        n += (size_t)snprintf(areas + n, cap - n, "%s{\"min\":[0,-1,0],\"max\":[20,1,20]}",
                              i ? "," : "");
    snprintf(areas + n, cap - n, "]}]");
    objtext o = {0};
    obj_box(&o, 0, -0.5f, 0, 20, 0, 20);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "kind", "navmesh");
    cJSON_AddStringToObject(j, "obj", o.buf);
    char *head = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    head[strlen(head) - 1] = '\0';
    char *env = malloc(strlen(head) + strlen(areas) + 4);
    sprintf(env, "%s,%s}", head, areas);
    it_call_error(&s, "PUT", "/v1/maps/mud", "application/json", env, 413, "limit_exceeded",
                  "limits.nav_max_area_boxes");
    free(env);
    free(head);
    free(areas);
    free(o.buf);
    it_stop(&s);
}
END_TEST

/* A PATCH of 65,536 obstacles: refused by its count (413 naming
 * limits.nav_max_obstacles) before any pairwise look; one of 4,096 with a
 * duplicate id at its end names that element. */
START_TEST(routes_navworlds_obstacle_patch_counts_first) {
    hc_server s = it_start(NULL);
    put_world(&s, "w", false);
    const size_t cap = 65536 * 96 + 64;
    char *body = malloc(cap);
    for (int round = 0; round < 2; round++) {
        const int n = round ? 4096 : 65536;
        size_t k = (size_t)snprintf(body, cap, "{\"obstacles\":[");
        for (int i = 0; i < n; i++) {
            const int id = round && i == n - 1 ? 7 : i;
            k += (size_t)snprintf(
                body + k, cap - k,
                "%s{\"id\":\"o%d\",\"box\":{\"min\":[%d,-1,%d],\"max\":[%d,1,%d]}}", i ? "," : "",
                id, i % 28, i % 9, i % 28 + 1, i % 9 + 1);
        }
        snprintf(body + k, cap - k, "]}");
        if (round == 0)
            it_call_error(&s, "PATCH", "/v1/maps/w", "application/json", body, 413,
                          "limit_exceeded", "limits.nav_max_obstacles");
        else
            it_call_error(&s, "PATCH", "/v1/maps/w", "application/json", body, 422, "invalid_value",
                          "obstacles[4095].id");
    }
    free(body);
    it_stop(&s);
}
END_TEST

/* What the process holds stays what it is charged (issue 25 item 5): maps
 * uploaded until the budget refuses one (507), then crowds until it
 * refuses one; the resident memory is within 15% of what the budget
 * counts plus the process's own baseline. */
START_TEST(routes_navworlds_memory_charged_is_held) {
    hc_server s =
        it_start(ARGS("--max-memory", "134217728", "--max-maps", "1000", "--max-crowds", "1000",
                      "--max-crowds-per-map", "1000", "--max-crowd-agents", "2000"));
    cJSON *j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    cJSON_Delete(j);
    const long base_kib = it_rss_kib(s.pid);
    ck_assert_int_gt(base_kib, 0);
    int maps = 0, crowds = 0;
    for (int i = 0; i < 200; i++) {
        objtext o = {0};
        /* A 300 x 300 floor with a few walls: distinct per upload. */
        obj_box(&o, 0, -0.5f, 0, 300, 0, 300);
        for (int k = 0; k < 6; k++)
            obj_box(&o, 20.0f + 40 * k, 0, 10.0f + (float)i, 22.0f + 40 * k, 3, 200.0f + (float)i);
        char url[96];
        snprintf(url, sizeof url, "/v1/maps/m%d?tile_size=64", i);
        hc_resp r = it_req(&s, "PUT", url, "model/obj", o.buf);
        free(o.buf);
        const int status = r.status;
        /* 507: the map does not fit; 503: not even its body does now. */
        ck_assert_msg(status == 201 || status == 507 || status == 503, "upload %d: %d %s", i,
                      status, r.body);
        hc_free(&r);
        if (status != 201) break;
        maps++;
        /* Room left for crowds: maps up to 60% of the budget. */
        j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
        const bool full = it_num(j, "memory.used_bytes") > 0.6 * it_num(j, "memory.budget_bytes");
        cJSON_Delete(j);
        if (full) break;
    }
    ck_assert_int_gt(maps, 2);
    for (int i = 0; i < 1000; i++) {
        char url[96];
        snprintf(url, sizeof url, "/v1/maps/m%d/crowds", i % maps);
        hc_resp r = it_req(&s, "POST", url, "application/json", "{\"max_agents\":2000}");
        const int status = r.status;
        ck_assert_msg(status == 201 || status == 507 || status == 503, "crowd %d: %d %s", i, status,
                      r.body);
        hc_free(&r);
        if (status != 201) break;
        crowds++;
    }
    ck_assert_int_gt(crowds, 0);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    const double used = it_num(j, "memory.used_bytes"), mapsb = it_num(j, "memory.maps_bytes"),
                 crowdsb = it_num(j, "memory.crowds_bytes");
    cJSON_Delete(j);
    const long rss_kib = it_rss_kib(s.pid);
    const double held = (double)(rss_kib - base_kib) * 1024.0;
    fprintf(
        stderr,
        "routes_navworlds memory: %d maps, %d crowds; charged %.1f MB (maps %.1f, crowds %.1f), "
        "RSS %.1f MB over a %.1f MB baseline (held %.1f MB, %.2f x charged)\n",
        maps, crowds, used / 1e6, mapsb / 1e6, crowdsb / 1e6, (double)rss_kib * 1024 / 1e6,
        (double)base_kib * 1024 / 1e6, held / 1e6, held / used);
    /* A sanitizer's pathd holds shadow memory, redzones and a quarantine
     * of freed blocks besides: RSS says nothing there (as in test_http.c). */
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
    ck_assert_msg((double)rss_kib * 1024.0 <= 1.15 * (used + (double)base_kib * 1024.0),
                  "RSS %ld KiB past 1.15 x (charged %.0f + baseline %ld KiB)", rss_kib, used,
                  base_kib);
#endif
    it_stop(&s);
}
END_TEST

/* A slow navmesh build never starves another map's queries: while a
 * 15,625-tile build runs (its tiles as helper jobs that give their worker
 * back between tiles), a query to another map is answered, and the build
 * has not answered yet (the order of the answers, not the clock). */
START_TEST(routes_navworlds_build_does_not_starve_queries) {
    hc_server s = it_start(ARGS("--workers", "2", "--nav-build-ms", "20000"));
    put_world(&s, "w", false);
    objtext o = {0};
    obj_box(&o, 0, -0.5f, 0, 1200, 0, 1200);
    char head[256];
    int n = snprintf(head, sizeof head,
                     "PUT /v1/maps/big?tile_size=32 HTTP/1.1\r\nHost: localhost\r\nConnection: "
                     "close\r\nContent-Type: model/obj\r\nContent-Length: %zu\r\n\r\n",
                     o.len);
    char *raw = malloc((size_t)n + o.len);
    memcpy(raw, head, (size_t)n);
    memcpy(raw + n, o.buf, o.len);
    const it_pool p0 = it_pool_now(&s);
    int fd = hc_send_only(s.port, raw, (size_t)n + o.len);
    ck_assert_int_ge(fd, 0);
    free(raw);
    free(o.buf);
    /* The build is running once the pool runs it or its helpers. */
    it_pool p1;
    do p1 = it_pool_now(&s);
    while (p1.running == 0 && p1.completed == p0.completed);
    ck_assert(reached(&s, "w", west, east, NULL));
    struct pollfd pf = {fd, POLLIN, 0};
    ck_assert_msg(poll(&pf, 1, 0) == 0, "the build answered before the query");
    hc_resp r;
    ck_assert_int_eq(hc_read(fd, &r), 0);
    ck_assert_msg(r.status == 201 || r.status == 413, "build: %d %s", r.status, r.body);
    hc_free(&r);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_navworlds) {
    Suite *s = suite_create("routes_navworlds");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_navworlds_settings_named_and_echoed);
    tcase_add_test(tc, routes_navworlds_links);
    tcase_add_test(tc, routes_navworlds_crowd_takes_link);
    tcase_add_test(tc, routes_navworlds_agent_types);
    tcase_add_test(tc, routes_navworlds_snapping_says_how_far);
    tcase_add_test(tc, routes_navworlds_stacked_floors_refused_before_voxelising);
    tcase_add_test(tc, routes_navworlds_area_boxes_bounded);
    tcase_add_test(tc, routes_navworlds_obstacle_patch_counts_first);
    tcase_add_test(tc, routes_navworlds_memory_charged_is_held);
    tcase_add_test(tc, routes_navworlds_build_does_not_starve_queries);
    suite_add_tcase(s, tc);
    return s;
}
