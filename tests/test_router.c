/* test_router.c -- server/router.c: method and path to route, from the table of routes (404, 405
 * and Allow, bad ids, body types). */
#include <check.h>
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

TU_SUITE(router) {
    Suite *s = suite_create("router");
    TCase *tc = tcase_create("router");
    tcase_add_test(tc, router_table);
    suite_add_tcase(s, tc);
    return s;
}
