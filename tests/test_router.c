/* test_router.c -- server/router.c: method and path to route, from the table of routes (404, 405
 * and Allow, bad ids, body types). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "router.h"
#include "testutil.h"

START_TEST(router_table) {
    pf_route_result r;
    ck_assert_int_eq(pf_route_find("GET", "/healthz", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_HEALTHZ);
    ck_assert_int_eq(pf_route_find("HEAD", "/v1/info", &r), PF_MATCH_OK);
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_MAPS_CREATE);
    ck_assert_int_eq(pf_route_find("PUT", "/v1/maps/a.b-c_9", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_MAP_PUT);
    ck_assert_str_eq(r.map_id, "a.b-c_9");
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/m/paths", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_PATHS_POST);
    ck_assert_str_eq(r.map_id, "m");
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/path", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_PATH_GET);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/paths", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "POST");
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/m", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD, PUT, PATCH, DELETE");
    ck_assert_int_eq(pf_route_find("PATCH", "/v1/maps/m", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_MAP_PATCH);
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/m/sessions", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSIONS_CREATE);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/0af3", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSION_GET);
    ck_assert_str_eq(r.session_id, "0af3");
    ck_assert_str_eq(r.map_id, "m");
    ck_assert_int_eq(pf_route_find("DELETE", "/v1/maps/m/sessions/0af3", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSION_DELETE);
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/m/sessions/0af3/updates", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSION_UPDATES);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/0af3/stream", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSION_STREAM);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/0af3/updates", &r),
                     PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "POST");
    ck_assert_int_eq(pf_route_find("PUT", "/v1/maps/m/sessions/0af3", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD, DELETE");
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/0af3/other", &r),
                     PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/a%20b", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/other", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/nothing", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/bad!id", &r), PF_MATCH_BAD_ID);
    {
        char id[80];
        memset(id, 'a', 65);
        id[65] = '\0';
        char path[128] = "/v1/maps/";
        strcat(path, id);
        ck_assert_int_eq(pf_route_find("GET", path, &r), PF_MATCH_BAD_ID);
    }
}
END_TEST

/* Allow is derived from the table: the path's methods in a fixed order,
 * HEAD wherever GET is. */
START_TEST(router_allow_from_the_table) {
    pf_route_result r;
    ck_assert_int_eq(pf_route_find("DELETE", "/v1/maps", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD, POST");
    ck_assert_int_eq(pf_route_find("PUT", "/v1/maps/m/path", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD, POST");
    ck_assert_int_eq(pf_route_find("DELETE", "/v1/maps/m/sessions", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD, POST");
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/flowfield", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "POST");
    /* The literal segment wins: "generate" is a route, not a map id. */
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/generate", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_MAPS_GENERATE);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/generate", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "POST");
    ck_assert_int_eq(pf_route_find("POST", "/", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD");
    ck_assert_int_eq(pf_route_find("BREW", "/healthz", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD");
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/m/sessions/s1/stream", &r),
                     PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD");
    /* A trailing slash is accepted where the shape says "/?" only. */
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_MAPS_LIST);
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_MAPS_CREATE);
    ck_assert_int_eq(pf_route_find("GET", "/healthz/", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps//path", &r), PF_MATCH_BAD_ID);
    ck_assert_int_eq(pf_route_find("GET", "", &r), PF_MATCH_NOT_FOUND);
}
END_TEST

/* Every row is reachable: its method on a path of its shape finds it, with
 * its captures; names are unique. */
START_TEST(router_every_row_reachable) {
    for (int i = 1; i < PF_ROUTE_COUNT; i++) {
        const char *shape = pf_route_shape((pf_route)i);
        char path[160] = "";
        size_t n = 0;
        pf_route_result r;
        for (const char *p = shape; *p && n + 8 < sizeof(path);) {
            if (strncmp(p, "{id}", 4) == 0) {
                n += (size_t)snprintf(path + n, sizeof(path) - n, "map-1");
                p += 4;
            } else if (strncmp(p, "{sid}", 5) == 0) {
                n += (size_t)snprintf(path + n, sizeof(path) - n, "0af3");
                p += 5;
            } else if (strncmp(p, "{cid}", 5) == 0) {
                n += (size_t)snprintf(path + n, sizeof(path) - n, "c-9b");
                p += 5;
            } else if (strcmp(p, "/?") == 0) {
                break;
            } else {
                path[n++] = *p++;
                path[n] = '\0';
            }
        }
        ck_assert_msg(pf_route_find(pf_route_method((pf_route)i), path, &r) == PF_MATCH_OK, "%s %s",
                      pf_route_method((pf_route)i), path);
        ck_assert_msg(r.route == (pf_route)i, "%s %s found %s", pf_route_method((pf_route)i), path,
                      pf_route_name(r.route));
        if (strstr(shape, "{id}")) ck_assert_str_eq(r.map_id, "map-1");
        if (strstr(shape, "{sid}")) ck_assert_str_eq(r.session_id, "0af3");
        if (strstr(shape, "{cid}")) ck_assert_str_eq(r.crowd_id, "c-9b");
        for (int j = 1; j < i; j++)
            ck_assert_str_ne(pf_route_name((pf_route)j), pf_route_name((pf_route)i));
    }
    ck_assert_str_eq(pf_route_name(PF_ROUTE_PATH_POST), "path_post");
    ck_assert_str_eq(pf_route_name(PF_ROUTE_NONE), "none");
    ck_assert_str_eq(pf_route_name(PF_ROUTE_COUNT), "none");
    ck_assert_int_eq(pf_route_scope(PF_ROUTE_HEALTHZ), PF_SCOPE_OPEN);
    ck_assert_int_eq(pf_route_scope(PF_ROUTE_PATH_GET), PF_SCOPE_READ);
    ck_assert_int_eq(pf_route_scope(PF_ROUTE_MAP_DELETE), PF_SCOPE_WRITE);
}
END_TEST

/* Shapes: captures, placeholders' rules, "/?", and a literal segment beats
 * a placeholder (what a row for /v1/maps/generate relies on). */
START_TEST(router_shapes_and_specificity) {
    pf_route_result r;
    uint32_t lit = 0, ph = 0, spec;
    memset(&r, 0, sizeof(r));
    ck_assert_int_eq(pf__route_shape_fits("/v1/maps/{id}", "/v1/maps/stats", &r, &ph), 2);
    ck_assert_str_eq(r.map_id, "stats");
    ck_assert_int_eq(pf__route_shape_fits("/v1/maps/stats", "/v1/maps/stats", &r, &lit), 2);
    ck_assert_uint_gt(lit, ph);
    ck_assert_int_eq(pf__route_shape_fits("/v1/maps/stats", "/v1/maps/other", &r, &spec), 0);
    /* "generate" is the name of a route, never a map id. */
    ck_assert_int_eq(pf__route_shape_fits("/v1/maps/{id}", "/v1/maps/generate", &r, &ph), 1);
    ck_assert(!pf_map_id_is_valid("generate", 8));
    ck_assert(pf_map_id_is_valid("generated", 9));
    /* The earlier literal segment weighs more than any later ones. */
    ck_assert_int_eq(pf__route_shape_fits("/v1/{id}/a/b/c", "/v1/k/a/b/c", &r, &ph), 2);
    ck_assert_int_eq(pf__route_shape_fits("/v1/k/{id}/{id}/{id}", "/v1/k/a/b/c", &r, &lit), 2);
    ck_assert_uint_gt(lit, ph);
    ck_assert_int_eq(
        pf__route_shape_fits("/v1/maps/{id}/sessions/{sid}", "/v1/maps/m/sessions/a.b", &r, &spec),
        0); /* '.' is not in a session id */
    ck_assert_int_eq(
        pf__route_shape_fits("/v1/maps/{id}/sessions/{sid}", "/v1/maps/m!/sessions/ab", &r, &spec),
        1);
    ck_assert_int_eq(pf__route_shape_fits("/v1/maps/{id}", "/v1/maps/m/x", &r, &spec), 0);
    ck_assert_int_eq(pf__route_shape_fits("/v1/maps/?", "/v1/maps/", &r, &spec), 2);
    ck_assert_int_eq(pf__route_shape_fits("/v1/maps/?", "/v1/maps", &r, &spec), 2);
    ck_assert_int_eq(pf__route_shape_fits("/v1/maps/?", "/v1/maps//", &r, &spec), 0);
    ck_assert_int_eq(pf__route_shape_fits("/", "/", &r, &spec), 2);
    ck_assert_int_eq(pf__route_shape_fits("/", "//", &r, &spec), 0);
}
END_TEST

/* Body types come from the table; a 415 names them. */
START_TEST(router_body_types) {
    char buf[200];
    ck_assert(!pf_route_has_body(PF_ROUTE_PATH_GET));
    ck_assert(pf_route_has_body(PF_ROUTE_MAP_PATCH));
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_MAP_PUT, "text/plain; charset=utf-8"),
                     PF_BODY_TEXT);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_MAPS_CREATE, "Application/JSON"), PF_BODY_JSON);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_MAP_PUT, "text/x-movingai-map"), PF_BODY_MOVINGAI);
    /* A write declares its type; a path query may leave it out. */
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_MAP_PUT, NULL), 0);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_MAP_PUT, ""), 0);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_MAP_PATCH, NULL), 0);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_SESSION_UPDATES, NULL), 0);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_PATH_POST, NULL), PF_BODY_ABSENT);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_PATH_POST, "text/plain"), 0);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_PATH_POST, "application/jsonx"), 0);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_PATH_POST, "application/x-ndjson"), 0);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_SESSION_UPDATES, "application/x-ndjson"),
                     PF_BODY_NDJSON);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_SESSION_UPDATES, "application/json ; x=y"),
                     PF_BODY_JSON);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_HEALTHZ, "application/json"), 0);
    pf_route_describe_bodies(PF_ROUTE_MAP_PUT, buf, sizeof(buf));
    ck_assert_str_eq(buf, "application/json, text/x-movingai-map (a Moving AI map), text/plain "
                          "(a Moving AI map, with a bearer token) or model/obj (Wavefront OBJ "
                          "geometry of a navmesh map)");
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_MAP_PUT, "model/obj"), PF_BODY_OBJ);
    ck_assert_int_eq(pf_route_body_kind(PF_ROUTE_PATH_POST, "model/obj"), 0);
    pf_route_describe_bodies(PF_ROUTE_PATH_POST, buf, sizeof(buf));
    ck_assert_str_eq(buf, "application/json");
    pf_route_describe_bodies(PF_ROUTE_SESSION_UPDATES, buf, sizeof(buf));
    ck_assert_str_eq(buf, "application/json or application/x-ndjson (one update a line)");
}
END_TEST

TU_SUITE(router) {
    Suite *s = suite_create("router");
    TCase *tc = tcase_create("router");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, router_table);
    tcase_add_test(tc, router_allow_from_the_table);
    tcase_add_test(tc, router_every_row_reachable);
    tcase_add_test(tc, router_shapes_and_specificity);
    tcase_add_test(tc, router_body_types);
    suite_add_tcase(s, tc);
    return s;
}
