/* test_nav_json.c -- proto/nav_json.c and proto/nav_info.c: navmesh uploads (envelope and
 * model/obj settings), PATCH bodies, path requests (JSON, query string, batch), the path
 * answer, the store's envelope round trip, and the library's errors as the API's. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"
#include "nav_json.h"
#include "nav_path_json.h"
#include "testutil.h"

static void expect(const pf_proto_error *e, pf_status got, pf_status st, const char *code,
                   const char *field) {
    ck_assert_msg(got == st, "status %d, expected %d (%s: %s)", got, st, e->field, e->message);
    ck_assert_str_eq(pf_error_code(e->code), code);
    ck_assert_str_eq(e->field, field);
    ck_assert(strlen(e->message) > 0);
}

static pf_status upload_json(const char *s, pf_nav_upload *u, pf_proto_error *e) {
    cJSON *root = NULL;
    pf_grid_limits gl = pf_grid_default_limits();
    pf_nav_limits nl = pf_nav_default_limits();
    pf_status st = pf_jsonr_parse(s, strlen(s), &root, e);
    memset(u, 0, sizeof(*u));
    if (!st) st = pf_nav_upload_from_json(root, &gl, &nl, u, e);
    cJSON_Delete(root);
    return st;
}

static const char full[] =
    "{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nv 4 0 0\\nv 4 0 4\\nf 3 2 1\\n\",\"cell_size\":0."
    "5,\"cell_height\":0.25,\"tile_size\":32,\"edge_max_error\":2,\"agent\":{\"radius\":0.4,"
    "\"height\":1.8,\"max_climb\":0.3,\"max_slope\":30},\"areas\":[{\"id\":\"mud\",\"boxes\":[{"
    "\"min\":[0,-1,0],\"max\":[1,1,1]}],\"cost\":4,\"enabled\":false}],\"obstacles\":[{\"id\":"
    "\"crate\",\"box\":{\"min\":[1,0,1],\"max\":[2,1,2]}},{\"id\":\"barrel\",\"cylinder\":{"
    "\"base\":[3,0,3],\"radius\":0.5,\"height\":1}}],\"area_state\":[{\"id\":\"mud\","
    "\"enabled\":true,\"cost\":2}]}";

START_TEST(nav_json_upload_envelope) {
    pf_nav_upload u, v;
    pf_proto_error e;
    pf_jsonw w;
    ck_assert_int_eq(upload_json(full, &u, &e), PF_OK);
    ck_assert_float_eq(u.config.cell_size, 0.5f);
    ck_assert_float_eq(u.config.cell_height, 0.25f);
    ck_assert_int_eq(u.config.tile_size, 32);
    ck_assert_float_eq(u.config.edge_max_error, 2.0f);
    ck_assert_float_eq_tol(u.config.agent_radius, 0.4f, 1e-6f);
    ck_assert_float_eq_tol(u.config.agent_max_slope, 30.0f, 1e-6f);
    ck_assert_uint_eq(u.obj.nverts, 3);
    ck_assert_uint_eq(u.obj.ntris, 1);
    ck_assert_uint_eq(u.nareas, 1);
    ck_assert_str_eq(u.areas[0].name, "mud");
    ck_assert(!u.areas[0].enabled);
    ck_assert_float_eq(u.areas[0].cost, 4.0f);
    ck_assert_uint_eq(u.nobstacles, 2);
    ck_assert_int_eq(u.obstacles[0].shape, PF_NAV_BOX);
    ck_assert_int_eq(u.obstacles[1].shape, PF_NAV_CYLINDER);
    ck_assert_float_eq(u.obstacles[1].radius, 0.5f);
    ck_assert_uint_eq(u.narea_state, 1);
    ck_assert(u.area_state[0].set_enabled && u.area_state[0].enabled);
    ck_assert(u.area_state[0].set_cost);

    /* What the store keeps of it (the source members) reads back the same. */
    pf_jsonw_init(&w, 1024);
    pf_jsonw_obj_begin(&w);
    pf_nav_write_source_members(&w, &u);
    pf_jsonw_obj_end(&w);
    {
        char *text = strndup(w.buf, w.len);
        ck_assert_int_eq(upload_json(text, &v, &e), PF_OK);
        free(text);
    }
    pf_jsonw_free(&w);
    ck_assert_mem_eq(&v.config, &u.config, sizeof(u.config));
    ck_assert_str_eq(v.obj_text, u.obj_text);
    ck_assert_uint_eq(v.nareas, 1);
    ck_assert_str_eq(v.areas[0].name, "mud");
    ck_assert_float_eq(v.areas[0].boxes[0].bmax[1], 1.0f);
    ck_assert_uint_eq(v.nobstacles, 0); /* the state is written apart, per version */
    pf_nav_upload_free(&v);
    pf_nav_upload_free(&u);

    /* Defaults. */
    ck_assert_int_eq(upload_json("{\"kind\":\"navmesh\",\"from_grid\":\"type octile\\nheight "
                                 "1\\nwidth 2\\nmap\\n..\\n\"}",
                                 &u, &e),
                     PF_OK);
    {
        pf_nav_config d = pf_nav_default_grid_config(); /* a grid's own */
        ck_assert_mem_eq(&u.config, &d, sizeof(d));
    }
    ck_assert_ptr_nonnull(u.grid);
    ck_assert_int_eq(pf_grid_width(u.grid), 2);
    pf_nav_upload_free(&u);
}
END_TEST

START_TEST(nav_json_upload_errors) {
    static const struct {
        const char *body;
        pf_status st;
        const char *code, *field;
    } cases[] = {
        {"{\"kind\":\"navmesh\"}", PF_EPARSE, "invalid_request", "obj"},
        {"{\"kind\":\"navmesh\",\"obj\":\"\",\"from_grid\":\"\"}", PF_EPARSE, "invalid_request",
         "from_grid"},
        {"{\"kind\":\"navmesh\",\"obj\":7}", PF_EPARSE, "invalid_request", "obj"},
        {"{\"kind\":\"navmesh\",\"from_grid\":7}", PF_EPARSE, "invalid_request", "from_grid"},
        {"{\"kind\":\"navmesh\",\"from_grid\":\"x\",\"cell_size\":0}", PF_EINVAL, "invalid_value",
         "cell_size"},
        {"{\"kind\":\"navmesh\",\"from_grid\":\"x\",\"tile_size\":8}", PF_EINVAL, "invalid_value",
         "tile_size"},
        {"{\"kind\":\"navmesh\",\"from_grid\":\"x\",\"tile_size\":32.5}", PF_EPARSE,
         "invalid_request", "tile_size"},
        {"{\"kind\":\"navmesh\",\"from_grid\":\"x\",\"agent\":{\"radius\":51}}", PF_EINVAL,
         "invalid_value", "agent.radius"},
        {"{\"kind\":\"navmesh\",\"from_grid\":\"x\",\"agent\":{\"width\":1}}", PF_EPARSE,
         "invalid_request", "agent.width"},
        {"{\"kind\":\"navmesh\",\"from_grid\":\"x\",\"agent\":[]}", PF_EPARSE, "invalid_request",
         "agent"},
        {"{\"kind\":\"navmesh\",\"from_grid\":\"type octile\\nheight 1\\nwidth 2\\nmap\\n.\\n\"}",
         PF_EPARSE, "malformed_map", "from_grid"},
        {"{\"kind\":\"navmesh\",\"from_grid\":{\"rows\":[\"..\",\"...\"]}}", PF_EINVAL,
         "invalid_value", "from_grid.rows[1]"},
        {"{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nf 1 1 1\",\"areas\":[{\"id\":\"a\"}]}",
         PF_EPARSE, "invalid_request", "areas[0].boxes"},
        {"{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nf 1 1 1\",\"areas\":[{\"id\":\"a\",\"boxes\":"
         "[{\"min\":[0,0,0],\"max\":[1,1]}]}]}",
         PF_EPARSE, "invalid_request", "areas[0].boxes[0].max"},
        {"{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nf 1 1 1\",\"areas\":[{\"id\":\"a\",\"boxes\":"
         "[{\"min\":[0,0,0],\"max\":[1,1,1]}],\"cost\":0}]}",
         PF_EINVAL, "invalid_value", "areas[0].cost"},
        {"{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nf 1 1 1\",\"obstacles\":[{\"id\":\"c\"}]}",
         PF_EPARSE, "invalid_request", "obstacles[0]"},
        {"{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nf 1 1 1\",\"obstacles\":[{\"id\":\"c\","
         "\"cylinder\":{\"base\":[0,0,0],\"radius\":-1,\"height\":1}}]}",
         PF_EINVAL, "invalid_value", "obstacles[0].cylinder.radius"},
        {"{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nf 1 1 1\",\"obstacles\":[{\"id\":\"c\","
         "\"box\":{\"min\":[0,0,0],\"max\":[1,1,1]},\"cylinder\":{}}]}",
         PF_EPARSE, "invalid_request", "obstacles[0]"},
        {"{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nf 1 1 1\",\"area_state\":[{\"enabled\":true}]}",
         PF_EPARSE, "invalid_request", "area_state[0].id"},
        {"{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\nf 1 1 1\",\"extra\":1}", PF_EPARSE,
         "invalid_request", "extra"},
        {"{\"kind\":\"navmesh\",\"obj\":\"v 0 0 q\\n\"}", PF_EPARSE, "malformed_map", "obj"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pf_nav_upload u;
        pf_proto_error e;
        pf_status st = upload_json(cases[i].body, &u, &e);
        ck_assert_msg(st == cases[i].st && strcmp(pf_error_code(e.code), cases[i].code) == 0 &&
                          strcmp(e.field, cases[i].field) == 0,
                      "case %zu: status %d code %s field '%s' (%s); expected %d %s '%s'", i, st,
                      pf_error_code(e.code), e.field, e.message, cases[i].st, cases[i].code,
                      cases[i].field);
    }
}
END_TEST

START_TEST(nav_json_upload_obj_settings) {
    pf_nav_limits nl = pf_nav_default_limits();
    const char *obj = "v 0 0 0\nv 1 0 0\nv 1 0 1\nf 3 2 1\n";
    pf_kv kv[3] = {{"cell_size", "0.3"}, {"agent_radius", "0"}, {"tile_size", "48"}};
    pf_nav_upload u;
    pf_proto_error e;
    ck_assert_int_eq(pf_nav_upload_from_obj(obj, strlen(obj), kv, 3, &nl, &u, &e), PF_OK);
    ck_assert_float_eq_tol(u.config.cell_size, 0.3f, 1e-6f);
    ck_assert_float_eq(u.config.agent_radius, 0.0f);
    ck_assert_int_eq(u.config.tile_size, 48);
    ck_assert_uint_eq(u.obj.ntris, 1);
    pf_nav_upload_free(&u);
    kv[0].value = "abc";
    expect(&e, pf_nav_upload_from_obj(obj, strlen(obj), kv, 1, &nl, &u, &e), PF_EPARSE,
           "invalid_request", "cell_size");
    kv[0].value = NULL;
    expect(&e, pf_nav_upload_from_obj(obj, strlen(obj), kv, 1, &nl, &u, &e), PF_EPARSE,
           "invalid_request", "cell_size");
    kv[0].value = "11";
    expect(&e, pf_nav_upload_from_obj(obj, strlen(obj), kv, 1, &nl, &u, &e), PF_EINVAL,
           "invalid_value", "cell_size");
    kv[0].key = "agent_radius";
    kv[0].value = "0.1";
    expect(&e, pf_nav_upload_from_obj(obj, strlen(obj), kv, 2, &nl, &u, &e), PF_EPARSE,
           "invalid_request", "agent_radius");
    kv[0].key = "colour";
    expect(&e, pf_nav_upload_from_obj(obj, strlen(obj), kv, 1, &nl, &u, &e), PF_EPARSE,
           "invalid_request", "colour");
    nl.max_vertices = 2;
    expect(&e, pf_nav_upload_from_obj(obj, strlen(obj), NULL, 0, &nl, &u, &e), PF_ELIMIT,
           "limit_exceeded", "limits.nav_max_vertices");
}
END_TEST

START_TEST(nav_json_patch) {
    pf_nav_patch p;
    pf_proto_error e;
    const char *ok = "{\"obstacles\":[{\"id\":\"a\",\"box\":{\"min\":[0,0,0],\"max\":[1,1,1]}}],"
                     "\"remove_obstacles\":[\"b\",\"c\"],\"areas\":[{\"id\":\"gate\",\"cost\":2}]}";
    ck_assert_int_eq(pf_nav_patch_parse(ok, strlen(ok), &p, &e), PF_OK);
    ck_assert_uint_eq(p.nput, 1);
    ck_assert_uint_eq(p.nremove, 2);
    ck_assert_str_eq(p.remove[1], "c");
    ck_assert_uint_eq(p.nareas, 1);
    ck_assert(p.areas[0].set_cost && !p.areas[0].set_enabled);
    {
        pf_nav_change c = pf_nav_patch_change(&p);
        ck_assert_uint_eq(c.nput, 1);
        ck_assert_str_eq(c.remove[0], "b");
    }
    pf_nav_patch_free(&p);
    static const struct {
        const char *body;
        pf_status st;
        const char *code, *field;
    } cases[] = {
        {"{}", PF_EPARSE, "invalid_request", ""},
        {"{\"obstacles\":[],\"remove_obstacles\":[]}", PF_EPARSE, "invalid_request", ""},
        {"{\"cells\":[]}", PF_EPARSE, "invalid_request", "cells"},
        {"{\"remove_obstacles\":\"a\"}", PF_EPARSE, "invalid_request", "remove_obstacles"},
        {"{\"remove_obstacles\":[\"a\",\"b c\"]}", PF_EINVAL, "invalid_value",
         "remove_obstacles[1]"},
        {"{\"remove_obstacles\":[3]}", PF_EPARSE, "invalid_request", "remove_obstacles[0]"},
        {"{\"areas\":[{\"id\":\"g\",\"enabled\":1}]}", PF_EPARSE, "invalid_request",
         "areas[0].enabled"},
        {"{\"areas\":[{\"id\":\"g\",\"cost\":1e9}]}", PF_EINVAL, "invalid_value", "areas[0].cost"},
        {"{\"obstacles\":[{\"id\":\"a\",\"box\":{\"min\":[0,0,0],\"max\":[1,1,\"x\"]}}]}",
         PF_EPARSE, "invalid_request", "obstacles[0].box.max"},
        {"{\"obstacles\":[{\"box\":{\"min\":[0,0,0],\"max\":[1,1,1]}}]}", PF_EPARSE,
         "invalid_request", "obstacles[0].id"},
        {"[]", PF_EPARSE, "invalid_request", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pf_status st = pf_nav_patch_parse(cases[i].body, strlen(cases[i].body), &p, &e);
        ck_assert_msg(st == cases[i].st && strcmp(pf_error_code(e.code), cases[i].code) == 0 &&
                          strcmp(e.field, cases[i].field) == 0,
                      "case %zu: status %d code %s field '%s' (%s)", i, st, pf_error_code(e.code),
                      e.field, e.message);
    }
}
END_TEST

START_TEST(nav_json_path_requests) {
    pf_nav_path_request q, *b = NULL;
    pf_proto_error e;
    size_t n;
    int64_t dl;
    const char *ok = "{\"start\":[1,2,3.5],\"goal\":[-4,0,1e3],\"algorithm\":\"detour\","
                     "\"search_box\":[1,2,1],\"deadline_ms\":50,\"cache\":false}";
    ck_assert_int_eq(pf_nav_path_request_parse(ok, strlen(ok), 10, &q, &e), PF_OK);
    ck_assert_float_eq(q.start[2], 3.5f);
    ck_assert_float_eq(q.goal[2], 1000.0f);
    ck_assert_int_eq(q.algorithm, PF_NAV_DETOUR);
    ck_assert(q.has_box && q.box[1] == 2.0f);
    ck_assert_int_eq(q.deadline_ms, 50);
    ck_assert(!q.use_cache);
    ck_assert_int_eq(
        pf_nav_path_request_parse("{\"start\":[0,0,0],\"goal\":[1,0,0]}", 32, 10, &q, &e), PF_OK);
    ck_assert_int_eq(q.algorithm, PF_NAV_POLYANYA);
    ck_assert(!q.has_box && q.use_cache && q.deadline_ms == 0);
    {
        pf_kv kv[4] = {{"start", "1,2,3"},
                       {"goal", "4,5,6"},
                       {"algorithm", "polyanya"},
                       {"search_box", "1,1,1"}};
        ck_assert_int_eq(pf_nav_path_request_from_query(kv, 4, 10, &q, &e), PF_OK);
        ck_assert_float_eq(q.goal[1], 5.0f);
        kv[1].value = "4,5";
        expect(&e, pf_nav_path_request_from_query(kv, 4, 10, &q, &e), PF_EPARSE, "invalid_request",
               "goal");
        kv[1].value = "4,5,6";
        kv[3].value = "11,1,1";
        expect(&e, pf_nav_path_request_from_query(kv, 4, 10, &q, &e), PF_EINVAL, "invalid_value",
               "search_box");
        expect(&e, pf_nav_path_request_from_query(kv, 1, 10, &q, &e), PF_EPARSE, "invalid_request",
               "goal");
    }
    static const struct {
        const char *body;
        pf_status st;
        const char *code, *field;
    } cases[] = {
        {"{\"goal\":[0,0,0]}", PF_EPARSE, "invalid_request", "start"},
        {"{\"start\":[0,0],\"goal\":[0,0,0]}", PF_EPARSE, "invalid_request", "start"},
        {"{\"start\":[0,0,0],\"goal\":[0,0,null]}", PF_EPARSE, "invalid_request", "goal"},
        {"{\"start\":[0,0,0],\"goal\":[0,0,2e7]}", PF_EINVAL, "invalid_value", "goal"},
        {"{\"start\":[0,0,0],\"goal\":[0,0,0],\"algorithm\":\"astar\"}", PF_EINVAL, "invalid_value",
         "algorithm"},
        {"{\"start\":[0,0,0],\"goal\":[0,0,0],\"search_box\":[1,-1,1]}", PF_EINVAL, "invalid_value",
         "search_box"},
        {"{\"start\":[0,0,0],\"goal\":[0,0,0],\"deadline_ms\":0}", PF_EINVAL, "invalid_value",
         "deadline_ms"},
        {"{\"start\":[0,0,0],\"goal\":[0,0,0],\"weight\":2}", PF_EPARSE, "invalid_request",
         "weight"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pf_status st = pf_nav_path_request_parse(cases[i].body, strlen(cases[i].body), 10, &q, &e);
        ck_assert_msg(st == cases[i].st && strcmp(pf_error_code(e.code), cases[i].code) == 0 &&
                          strcmp(e.field, cases[i].field) == 0,
                      "case %zu: status %d code %s field '%s' (%s)", i, st, pf_error_code(e.code),
                      e.field, e.message);
    }
    {
        const char *batch = "{\"deadline_ms\":9,\"queries\":[{\"start\":[0,0,0],\"goal\":[1,0,0]},"
                            "{\"start\":[0,0,0],\"goal\":[2,0,0],\"algorithm\":\"detour\"}]}";
        ck_assert_int_eq(pf_nav_path_batch_parse(batch, strlen(batch), 4, 10, &b, &n, &dl, &e),
                         PF_OK);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(dl, 9);
        ck_assert_int_eq(b[1].algorithm, PF_NAV_DETOUR);
        free(b);
        expect(&e, pf_nav_path_batch_parse(batch, strlen(batch), 1, 10, &b, &n, &dl, &e), PF_ELIMIT,
               "limit_exceeded", "queries");
        batch = "{\"queries\":[{\"start\":[0,0,0],\"goal\":[1,0]}]}";
        expect(&e, pf_nav_path_batch_parse(batch, strlen(batch), 4, 10, &b, &n, &dl, &e), PF_EPARSE,
               "invalid_request", "queries[0].goal");
        batch = "{\"queries\":[]}";
        expect(&e, pf_nav_path_batch_parse(batch, strlen(batch), 4, 10, &b, &n, &dl, &e), PF_EPARSE,
               "invalid_request", "queries");
    }
}
END_TEST

START_TEST(nav_json_answer_and_errors) {
    float pts[6] = {1, 0.2f, 1.123456f, 4, 0.2f, 5};
    pf_nav_path p;
    pf_jsonw w;
    cJSON *j;
    pf_nav_error ne;
    pf_proto_error e;
    memset(&p, 0, sizeof(p));
    p.points = pts;
    p.npoints = 2;
    p.partial = true;
    p.out_of_nodes = true;
    p.length = 5.0000004;
    p.cost = 10;
    p.polygons = 3;
    pf_jsonw_init(&w, 256);
    pf_jsonw_obj_begin(&w);
    pf_nav_write_path_members(&w, &p, PF_NAV_DETOUR, NULL, 7);
    pf_nav_write_path_stats(&w, 12, 34, false);
    pf_jsonw_obj_end(&w);
    j = cJSON_ParseWithLength(w.buf, w.len);
    ck_assert_ptr_nonnull(j);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "found")));
    ck_assert_str_eq(cJSON_GetObjectItem(j, "reason")->valuestring, "node_budget");
    ck_assert_double_eq(cJSON_GetObjectItem(j, "length")->valuedouble, 5.0);
    ck_assert_double_eq_tol(
        cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "path"), 0), 2)->valuedouble,
        1.1235, 1e-9);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "algorithm")->valuestring, "detour");
    ck_assert_int_eq(cJSON_GetObjectItem(j, "map_version")->valueint, 7);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "stats"), "expanded")->valueint,
                     12);
    cJSON_Delete(j);
    pf_jsonw_free(&w);

    /* The library's phrases become sentences; its limits take their flags'
     * names. */
    snprintf(ne.field, sizeof(ne.field), "limits.max_obstacles");
    snprintf(ne.message, sizeof(ne.message), "4097 obstacles, more than 4096");
    expect(&e, pf_nav_error_to_proto(&e, PF_ELIMIT, &ne), PF_ELIMIT, "limit_exceeded",
           "limits.nav_max_obstacles");
    ck_assert_str_eq(e.message, "4097 obstacles, more than 4096.");
    snprintf(ne.field, sizeof(ne.field), "obstacles[2].radius");
    snprintf(ne.message, sizeof(ne.message), "must be positive.");
    expect(&e, pf_nav_error_to_proto(&e, PF_EINVAL, &ne), PF_EINVAL, "invalid_value",
           "obstacles[2].radius");
    ck_assert_str_eq(e.message, "Must be positive.");
    snprintf(ne.field, sizeof(ne.field), "from_grid.walls");
    expect(&e, pf_nav_error_to_proto(&e, PF_EUNSUPPORTED, &ne), PF_EUNSUPPORTED, "unsupported",
           "from_grid.walls");
}
END_TEST

TU_SUITE(nav_json) {
    Suite *s = suite_create("nav_json");
    TCase *tc = tcase_create("nav_json");
    tcase_add_test(tc, nav_json_upload_envelope);
    tcase_add_test(tc, nav_json_upload_errors);
    tcase_add_test(tc, nav_json_upload_obj_settings);
    tcase_add_test(tc, nav_json_patch);
    tcase_add_test(tc, nav_json_path_requests);
    tcase_add_test(tc, nav_json_answer_and_errors);
    suite_add_tcase(s, tc);
    return s;
}
