/* test_flowfield_json.c -- flow field requests (every field, every error
 * naming its field) and answers decoded back with tests/b64dec.c and held
 * against the field they were written from. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64dec.h"
#include "flowfield_json.h"
#include "testutil.h"

static const pf_flow_limits lim = {3, 4};

static pf_status parse(const char *s, pf_flow_request *r, pf_proto_error *e) {
    return pf_flow_request_parse(s, strlen(s), &lim, r, e);
}

START_TEST(flowfield_json_request_fields_and_errors) {
    pf_flow_request r;
    pf_proto_error e;
    ck_assert_int_eq(parse("{\"goals\":[[1,2],[3,4]],\"region\":{\"x\":1,\"y\":0,\"width\":5,"
                           "\"height\":6},\"agent_size\":2,\"costs\":false,\"deadline_ms\":20,"
                           "\"cache\":false}",
                           &r, &e),
                     PF_OK);
    ck_assert_uint_eq(r.ngoals, 2);
    ck_assert(r.has_region && r.region.x == 1 && r.region.w == 5 && r.region.h == 6);
    ck_assert(r.agent_size == 2 && !r.costs && !r.use_cache && r.deadline_ms == 20);
    pf_flow_request_clear(&r);
    ck_assert_int_eq(parse("{\"goal\":[7,8]}", &r, &e), PF_OK);
    ck_assert(r.ngoals == 1 && r.goals[0].x == 7 && !r.has_region && r.costs && r.use_cache);
    ck_assert_int_eq(r.agent_size, 1);
    pf_flow_request_clear(&r);

    static const struct {
        const char *body;
        pf_status st;
        const char *field;
    } bad[] = {
        {"{}", PF_EPARSE, "goal"},
        {"{\"goal\":[1,1],\"goals\":[[1,1]]}", PF_EPARSE, "goals"},
        {"{\"goals\":[]}", PF_EINVAL, "goals"},
        {"{\"goals\":[[1,1],[1,1],[1,1],[1,1]]}", PF_ELIMIT, "goals"},
        {"{\"goals\":[[1,1],\"x\"]}", PF_EPARSE, "goals[1]"},
        {"{\"goal\":[1]}", PF_EPARSE, "goal"},
        {"{\"goal\":[1,1],\"region\":[0,0,1,1]}", PF_EPARSE, "region"},
        {"{\"goal\":[1,1],\"region\":{\"x\":0,\"y\":0,\"width\":0,\"height\":1}}", PF_EINVAL,
         "region.width"},
        {"{\"goal\":[1,1],\"region\":{\"x\":-1,\"y\":0,\"width\":1,\"height\":1}}", PF_EINVAL,
         "region.x"},
        {"{\"goal\":[1,1],\"region\":{\"x\":0,\"y\":0,\"width\":1}}", PF_EPARSE, "region.height"},
        {"{\"goal\":[1,1],\"region\":{\"x\":0,\"y\":0,\"width\":1,\"height\":1,\"z\":1}}",
         PF_EPARSE, "region.z"},
        {"{\"goal\":[1,1],\"agent_size\":5}", PF_EINVAL, "agent_size"},
        {"{\"goal\":[1,1],\"costs\":0}", PF_EPARSE, "costs"},
        {"{\"goal\":[1,1],\"deadline_ms\":0}", PF_EINVAL, "deadline_ms"},
        {"{\"goal\":[1,1],\"colour\":1}", PF_EPARSE, "colour"},
        {"[]", PF_EPARSE, ""},
        {"{\"goal\":[1,1]} x", PF_EPARSE, ""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(parse(bad[i].body, &r, &e) == bad[i].st, "%s: status %d", bad[i].body,
                      e.status);
        ck_assert_msg(strcmp(e.field, bad[i].field) == 0, "%s: field '%s'", bad[i].body, e.field);
        ck_assert_ptr_null(r.goals);
    }
}
END_TEST

START_TEST(flowfield_json_cost_scale) {
    ck_assert_double_eq(pf_flow_cost_scale(0), 1000.0);
    ck_assert_double_eq(pf_flow_cost_scale(4294967.0), 1000.0);
    ck_assert_double_eq(pf_flow_cost_scale(4294968.0), 100.0);
    ck_assert(pf_flow_cost_scale(6e9) < 1.0);
    ck_assert(6e9 * pf_flow_cost_scale(6e9) <= 4294967294.0);
}
END_TEST

static const cJSON *member(const cJSON *o, const char *k) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    ck_assert_msg(it != NULL, "missing %s", k);
    return it;
}

/* An answer decodes back to the field: one direction byte and one scaled
 * cost a cell of the region, row by row. */
START_TEST(flowfield_json_answer_decodes_to_the_field) {
    uint64_t st = tu_seed("flowfield_json_answer_decodes_to_the_field", 0xf1d0);
    pf_search_ctx *ctx = pf_search_ctx_create();
    for (int m = 0; m < 40; m++) {
        tu_map_opts o = {2, 40, 0.3, true, false, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        pf_point goal;
        if (!tu_random_walkable(&st, g, &goal)) {
            pf_grid_destroy(g);
            continue;
        }
        pf_box box = {0, 0, pf_grid_width(g), pf_grid_height(g)};
        if (m % 2) {
            box.x = goal.x > 0 ? goal.x - 1 : 0;
            box.w = pf_grid_width(g) - box.x;
        }
        pf_flow_query q = {&goal, 1, m % 2 == 1, box, NULL, NULL, 0};
        pf_flowfield *f = NULL;
        ck_assert_int_eq(pf_flowfield_build(ctx, g, &q, &f, NULL), PF_OK);
        pf_jsonw w;
        pf_jsonw_init(&w, 0);
        pf_jsonw_obj_begin(&w);
        pf_flow_write_members(&w, f, &goal, 1, 1, 9, true);
        pf_flow_write_stats(&w, 5, 6, false);
        pf_jsonw_obj_end(&w);
        size_t len;
        char *s = pf_jsonw_take(&w, &len);
        cJSON *root = cJSON_ParseWithLength(s, len);
        ck_assert_ptr_nonnull(root);
        ck_assert_int_eq(member(root, "map_version")->valueint, 9);
        ck_assert_str_eq(member(root, "encoding")->valuestring, PF_FLOW_ENCODING);
        const cJSON *reg = member(root, "region");
        ck_assert_int_eq(member(reg, "x")->valueint, box.x);
        ck_assert_int_eq(member(reg, "width")->valueint, box.w);
        const char *ds = member(root, "directions")->valuestring;
        const char *cs = member(root, "costs")->valuestring;
        double scale = member(root, "cost_scale")->valuedouble;
        unsigned char *dirs, *costs;
        size_t nd, nc, cells = (size_t)box.w * box.h;
        ck_assert(tu_b64_decode(ds, strlen(ds), &dirs, &nd));
        ck_assert(tu_b64_decode(cs, strlen(cs), &costs, &nc));
        ck_assert_uint_eq(nd, cells);
        ck_assert_uint_eq(nc, 4 * cells);
        for (int32_t y = 0; y < box.h; y++)
            for (int32_t x = 0; x < box.w; x++) {
                size_t i = (size_t)y * box.w + x;
                pf_point p = {box.x + x, box.y + y};
                uint32_t v = (uint32_t)costs[4 * i] | (uint32_t)costs[4 * i + 1] << 8 |
                             (uint32_t)costs[4 * i + 2] << 16 | (uint32_t)costs[4 * i + 3] << 24;
                double c = pf_flowfield_cost_at(f, p);
                ck_assert_int_eq(dirs[i], pf_flowfield_dir_at(f, p));
                if (isinf(c))
                    ck_assert_uint_eq(v, PF_FLOW_COST_NONE);
                else
                    ck_assert_msg(fabs(v / scale - c) <= 0.5 / scale + 1e-9, "cost %.6f coded %u",
                                  c, v);
            }
        ck_assert_int_eq(member(member(root, "stats"), "expanded")->valueint, 5);
        free(dirs);
        free(costs);
        cJSON_Delete(root);
        free(s);
        pf_flowfield_destroy(f);
        pf_grid_destroy(g);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(flowfield_json) {
    Suite *s = suite_create("flowfield_json");
    TCase *tc = tcase_create("proto");
    tcase_add_test(tc, flowfield_json_request_fields_and_errors);
    tcase_add_test(tc, flowfield_json_cost_scale);
    tcase_add_test(tc, flowfield_json_answer_decodes_to_the_field);
    suite_add_tcase(s, tc);
    return s;
}
