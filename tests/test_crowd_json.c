/* test_crowd_json.c -- proto/crowd_json.c: crowd creates and commands, their defaults, and
 * every refusal naming its field. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowd_json.h"
#include "testutil.h"

static const pf_crowd_limits lim = {50, 30, 100, 3600};

START_TEST(crowd_json_create_and_command) {
    pf_crowd_request r;
    pf_crowd_command c;
    pf_proto_error e;
    const char *create = "{\"max_agents\":10,\"tick_hz\":5,\"ttl_s\":9,\"agents\":[{\"position\":"
                         "[1,0,2],\"target\":[3,0,4],\"radius\":0.2,\"max_speed\":2},{\"position\":"
                         "[5,0,5],\"target\":null}]}";
    const char *cmd = "{\"add\":[{\"position\":[1,2,3]}],\"remove\":[4,5],\"targets\":[{\"id\":1,"
                      "\"target\":[0,0,0]},{\"id\":2,\"target\":null}],\"tick_hz\":0,\"steps\":7,"
                      "\"dt\":0.25}";
    ck_assert_int_eq(pf_crowd_request_parse(create, strlen(create), &lim, &r, &e), PF_OK);
    ck_assert_int_eq(r.max_agents, 10);
    ck_assert_int_eq(r.tick_hz, 5);
    ck_assert_int_eq(r.ttl_s, 9);
    ck_assert_uint_eq(r.nagents, 2);
    ck_assert(r.agents[0].has_target && !r.agents[1].has_target);
    ck_assert_float_eq(r.agents[0].radius, 0.2f);
    ck_assert(isnan(r.agents[0].height) && isnan(r.agents[1].max_speed));
    pf_crowd_request_free(&r);
    ck_assert_int_eq(pf_crowd_request_parse("{}", 2, &lim, &r, &e), PF_OK);
    ck_assert_int_eq(r.max_agents, 50); /* min(100, the limit) */
    ck_assert_int_eq(r.tick_hz, 0);
    pf_crowd_request_free(&r);

    ck_assert_int_eq(pf_crowd_command_parse(cmd, strlen(cmd), &lim, &c, &e), PF_OK);
    ck_assert_uint_eq(c.nadd, 1);
    ck_assert_uint_eq(c.nremove, 2);
    ck_assert_int_eq(c.remove[1], 5);
    ck_assert_uint_eq(c.ntargets, 2);
    ck_assert(c.targets[0].has_target && !c.targets[1].has_target);
    ck_assert(c.has_tick_hz && c.tick_hz == 0);
    ck_assert(c.has_steps && c.steps == 7);
    ck_assert(c.has_dt && c.dt == 0.25);
    pf_crowd_command_free(&c);
    ck_assert_int_eq(pf_crowd_command_parse("{}", 2, &lim, &c, &e), PF_OK);
    ck_assert(!c.has_steps && !c.has_dt && !c.has_tick_hz);
    pf_crowd_command_free(&c);
}
END_TEST

START_TEST(crowd_json_refusals) {
    static const struct {
        bool create;
        const char *body;
        pf_status st;
        const char *code, *field;
    } cases[] = {
        {true, "{\"max_agents\":0}", PF_EINVAL, "invalid_value", "max_agents"},
        {true, "{\"max_agents\":51}", PF_EINVAL, "invalid_value", "max_agents"},
        {true, "{\"tick_hz\":31}", PF_EINVAL, "invalid_value", "tick_hz"},
        {true, "{\"ttl_s\":0}", PF_EINVAL, "invalid_value", "ttl_s"},
        {true, "{\"agents\":{}}", PF_EPARSE, "invalid_request", "agents"},
        {true, "{\"max_agents\":1,\"agents\":[{\"position\":[0,0,0]},{\"position\":[0,0,0]}]}",
         PF_ELIMIT, "limit_exceeded", "agents"},
        {true, "{\"agents\":[{}]}", PF_EPARSE, "invalid_request", "agents[0].position"},
        {true, "{\"agents\":[7]}", PF_EPARSE, "invalid_request", "agents[0]"},
        {true, "{\"agents\":[{\"position\":[0,0,0],\"radius\":-1}]}", PF_EINVAL, "invalid_value",
         "agents[0].radius"},
        {true, "{\"agents\":[{\"position\":[0,0,0],\"speed\":1}]}", PF_EPARSE, "invalid_request",
         "agents[0].speed"},
        {true, "{\"crowd\":1}", PF_EPARSE, "invalid_request", "crowd"},
        {false, "{\"remove\":[-1]}", PF_EINVAL, "invalid_value", "remove[0]"},
        {false, "{\"remove\":3}", PF_EPARSE, "invalid_request", "remove"},
        {false, "{\"targets\":[{\"id\":1}]}", PF_EPARSE, "invalid_request", "targets[0].target"},
        {false, "{\"targets\":[{\"target\":null}]}", PF_EPARSE, "invalid_request", "targets[0].id"},
        {false, "{\"targets\":[{\"id\":1,\"target\":[1,2]}]}", PF_EPARSE, "invalid_request",
         "targets[0].target"},
        {false, "{\"add\":[{\"position\":[0,0,0],\"target\":[0,0,\"a\"]}]}", PF_EPARSE,
         "invalid_request", "add[0].target"},
        {false, "{\"steps\":101}", PF_EINVAL, "invalid_value", "steps"},
        {false, "{\"steps\":1.5}", PF_EPARSE, "invalid_request", "steps"},
        {false, "{\"dt\":0}", PF_EINVAL, "invalid_value", "dt"},
        {false, "{\"dt\":2}", PF_EINVAL, "invalid_value", "dt"},
        {false, "{\"tick_hz\":-1}", PF_EINVAL, "invalid_value", "tick_hz"},
        {false, "{\"step\":1}", PF_EPARSE, "invalid_request", "step"},
        {false, "{\"steps\":1", PF_EPARSE, "malformed_json", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pf_proto_error e;
        pf_status st;
        if (cases[i].create) {
            pf_crowd_request r;
            st = pf_crowd_request_parse(cases[i].body, strlen(cases[i].body), &lim, &r, &e);
        } else {
            pf_crowd_command c;
            st = pf_crowd_command_parse(cases[i].body, strlen(cases[i].body), &lim, &c, &e);
        }
        ck_assert_msg(st == cases[i].st && strcmp(pf_error_code(e.code), cases[i].code) == 0 &&
                          strcmp(e.field, cases[i].field) == 0,
                      "case %zu: status %d code %s field '%s' (%s)", i, st, pf_error_code(e.code),
                      e.field, e.message);
    }
}
END_TEST

/* One range per agent parameter: a value just outside it and one far
 * outside are refused by the parser with the same field and sentence
 * (the crowd's own check said "at most 1000" for max_speed 5000, the
 * parser "[0, 10000]" for 20000). The radius's bound is the map's: the
 * parser refuses only what no map takes. */
START_TEST(crowd_json_one_range_per_field) {
    static const struct {
        const char *name;
        double just_out, far_out, inside;
        const char *sentence;
    } cases[] = {
        {"height", 100.5, 1e9, 100, "more than 0 and at most 100"},
        {"max_speed", 1000.5, 20000, 1000, "more than 0 and at most 1000"},
        {"max_accel", 10000.5, 1e7, 10000, "more than 0 and at most 10000"},
        {"separation", 100.5, 1e6, 0, "between 0 and 100"},
        {"radius", -0.5, -1e9, 1e4, "more than 0 and at most the agent radius"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double vals[3] = {cases[i].just_out, cases[i].far_out,
                          strcmp(cases[i].name, "separation") ? 0 : -1};
        char first[256] = "";
        for (int k = 0; k < 4; k++) {
            char body[160], field[64];
            pf_crowd_request r;
            pf_proto_error e;
            pf_status st;
            double v = k < 3 ? vals[k] : cases[i].inside;
            snprintf(body, sizeof(body), "{\"agents\":[{\"position\":[0,0,0],\"%s\":%.17g}]}",
                     cases[i].name, v);
            st = pf_crowd_request_parse(body, strlen(body), &lim, &r, &e);
            if (k == 3) {
                ck_assert_msg(st == PF_OK, "%s %g: %s", cases[i].name, v, e.message);
                pf_crowd_request_free(&r);
                continue;
            }
            snprintf(field, sizeof(field), "agents[0].%s", cases[i].name);
            ck_assert_msg(st == PF_EINVAL, "%s %g: status %d", cases[i].name, v, st);
            ck_assert_str_eq(pf_error_code(e.code), "invalid_value");
            ck_assert_str_eq(e.field, field);
            ck_assert_msg(strstr(e.message, cases[i].sentence), "%s", e.message);
            if (!first[0])
                snprintf(first, sizeof(first), "%s", e.message);
            else
                ck_assert_str_eq(e.message, first);
        }
    }
}
END_TEST

TU_SUITE(crowd_json) {
    Suite *s = suite_create("crowd_json");
    TCase *tc = tcase_create("crowd_json");
    tcase_add_test(tc, crowd_json_create_and_command);
    tcase_add_test(tc, crowd_json_refusals);
    tcase_add_test(tc, crowd_json_one_range_per_field);
    suite_add_tcase(s, tc);
    return s;
}
