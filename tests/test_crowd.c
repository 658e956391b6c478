/* test_crowd.c -- server/crowd.c in-process: the crowds table (limits, lookup by map, expiry,
 * dropping a map's crowds), the ticker's schedule (due crowds, skipped ticks), commands checked
 * whole before they change anything, and crowds following their map's versions. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crowd.h"
#include "kind_navmesh.h"
#include "map_json.h"
#include "testutil.h"

/* A published navmesh version of an open w x h grid. */
static pf_mapver *nav_mapver(pf_registry *reg, const char *id, int w, int h) {
    char *text = malloc((size_t)(w + 1) * (size_t)h + 64);
    size_t len = (size_t)sprintf(text, "type octile\nheight %d\nwidth %d\nmap\n", h, w);
    pf_grid_limits gl = pf_grid_default_limits();
    pf_nav_limits nl = pf_nav_default_limits();
    pf_nav_build_input in;
    pf_nav_error ne;
    pf_proto_error e;
    pf_navmesh *nm;
    pf_grid *g;
    pf_mapver *mv;
    bool created;
    for (int y = 0; y < h; y++) {
        memset(text + len, '.', (size_t)w);
        len += (size_t)w;
        text[len++] = '\n';
    }
    ck_assert_int_eq(pf_map_text_parse(text, len, &gl, &g, &e), PF_OK);
    free(text);
    memset(&in, 0, sizeof(in));
    in.grid = g;
    in.config = pf_nav_default_grid_config();
    ck_assert_int_eq(pf_nav_build(&in, &nl, NULL, &nm, &ne), PF_OK);
    pf_grid_destroy(g);
    mv = pf_navmesh_mapver_create(id, nm, pf_navsrc_create("\"kind\":\"navmesh\"", 17), 0, 0, 0,
                                  NULL);
    ck_assert_ptr_nonnull(mv);
    pf_mapver_retain(mv);
    ck_assert_int_eq(pf_registry_publish(reg, mv, &created), PF_OK);
    return mv; /* the caller's reference */
}

static pf_crowd_request request(int64_t max_agents, int64_t tick_hz) {
    pf_crowd_request r;
    memset(&r, 0, sizeof(r));
    r.max_agents = max_agents;
    r.tick_hz = tick_hz;
    return r;
}

START_TEST(crowd_table_limits_expiry_drop) {
    pf_registry *reg = pf_registry_create(8);
    pf_crowds *t = pf_crowds_create(3, 2);
    pf_mapver *a = nav_mapver(reg, "a", 12, 12), *b = nav_mapver(reg, "b", 12, 12);
    pf_crowd_request rq = request(4, 0);
    pf_crowd *c1, *c2, *c3, *x;
    pf_proto_error e;
    const uint64_t sec = 1000000000ull;
    char id1[PF_CROWD_ID_LEN + 1];
    bool total;

    ck_assert_int_eq(pf_crowds_add(t, a, &rq, NULL, 10, 0, &c1, &total, &e), PF_OK);
    ck_assert_int_eq(pf_crowds_add(t, a, &rq, NULL, 1, 0, &c2, &total, &e), PF_OK);
    ck_assert_int_eq(pf_crowds_add(t, a, &rq, NULL, 10, 0, &x, &total, &e), PF_ELIMIT);
    ck_assert(!total);
    ck_assert_int_eq(pf_crowds_add(t, b, &rq, NULL, 10, 0, &c3, &total, &e), PF_OK);
    ck_assert_int_eq(pf_crowds_add(t, b, &rq, NULL, 10, 0, &x, &total, &e), PF_ELIMIT);
    ck_assert(total);
    ck_assert_uint_eq(pf_crowds_count(t), 3);
    snprintf(id1, sizeof(id1), "%s", pf_crowd_id(c1));
    ck_assert_str_ne(id1, pf_crowd_id(c2));

    /* Found on its map only; a get restarts its idle clock. */
    ck_assert_ptr_null(pf_crowds_get(t, "b", id1, 0));
    x = pf_crowds_get(t, "a", id1, 9 * sec);
    ck_assert_ptr_eq(x, c1);
    pf_crowd_release(x);
    /* At 10 s c2 (ttl 1 s) is idle past its ttl; c1 was asked at 9 s and
     * c3 (ttl 10 s) is idle exactly its ttl. */
    ck_assert_int_eq(pf_crowds_reap(t, 10 * sec), 1);
    ck_assert(pf_crowd_is_gone(c2));
    ck_assert(!pf_crowd_is_gone(c1));
    ck_assert(!pf_crowd_is_gone(c3));
    /* Watched: never idle. */
    pf_crowd_watch(c3, true);
    ck_assert_int_eq(pf_crowds_reap(t, UINT64_MAX / 2), 1); /* c1, not c3 */
    pf_crowd_watch(c3, false);
    /* A map's crowds go with it; another lineage's only when asked. */
    ck_assert_int_eq(pf_crowds_drop_map(t, "b", b->lineage), 0);
    ck_assert_int_eq(pf_crowds_drop_map(t, "b", 0), 1);
    ck_assert(pf_crowd_is_gone(c3));
    ck_assert_uint_eq(pf_crowds_count(t), 0);
    ck_assert(!pf_crowds_remove(t, "a", id1));
    pf_crowd_release(c1);
    pf_crowd_release(c2);
    pf_crowd_release(c3);
    pf_crowds_destroy(t);
    pf_mapver_release(a);
    pf_mapver_release(b);
    pf_registry_destroy(reg);
}
END_TEST

START_TEST(crowd_ticks_due_and_skipped) {
    pf_registry *reg = pf_registry_create(8);
    pf_crowds *t = pf_crowds_create(8, 8);
    pf_mapver *a = nav_mapver(reg, "a", 12, 12);
    pf_crowd_request r10 = request(2, 10), r0 = request(2, 0);
    pf_crowd *c10, *c0, *due[4];
    pf_proto_error e;
    uint64_t next;
    const uint64_t ms = 1000000ull;
    bool total;
    pf_jsonw w;

    ck_assert_int_eq(pf_crowds_add(t, a, &r10, NULL, 60, 1000 * ms, &c10, &total, &e), PF_OK);
    ck_assert_int_eq(pf_crowds_add(t, a, &r0, NULL, 60, 1000 * ms, &c0, &total, &e), PF_OK);
    /* Due at once; the one that does not tick never is. */
    ck_assert_uint_eq(pf_crowds_due(t, 1000 * ms, due, 4, &next), 1);
    ck_assert_ptr_eq(due[0], c10);
    ck_assert_uint_eq(next, 1100 * ms);
    /* Its tick still runs at the next period: skipped, not queued. */
    ck_assert_uint_eq(pf_crowds_due(t, 1100 * ms, due + 1, 3, &next), 0);
    ck_assert_uint_eq(next, 1200 * ms);
    pf_jsonw_init(&w, 1024);
    ck_assert_int_eq(pf_crowd_tick(due[0], reg, &w), PF_ERR_NONE);
    ck_assert_ptr_nonnull(strstr(w.buf, "\"frame\":1"));
    ck_assert_ptr_nonnull(strstr(w.buf, "\"ticks_skipped\":1"));
    ck_assert_ptr_nonnull(strstr(w.buf, "\"time_s\":0.1"));
    pf_jsonw_free(&w);
    pf_crowd_tick_done(due[0]);
    pf_crowd_release(due[0]);
    /* Done: due again at its time, not before. */
    ck_assert_uint_eq(pf_crowds_due(t, 1150 * ms, due, 4, &next), 0);
    ck_assert_uint_eq(pf_crowds_due(t, 1200 * ms, due, 4, &next), 1);
    pf_crowd_tick_done(due[0]);
    pf_crowd_release(due[0]);
    /* Far behind (a stalled ticker): one tick, then the period from now. */
    ck_assert_uint_eq(pf_crowds_due(t, 5000 * ms, due, 4, &next), 1);
    ck_assert_uint_eq(next, 5100 * ms);
    pf_crowd_tick_done(due[0]);
    pf_crowd_release(due[0]);
    /* None ticking: next 0. */
    pf_crowds_remove(t, "a", pf_crowd_id(c10));
    ck_assert_uint_eq(pf_crowds_due(t, 6000 * ms, due, 4, &next), 0);
    ck_assert_uint_eq(next, 0);
    pf_crowd_release(c10);
    pf_crowd_release(c0);
    pf_crowds_destroy(t);
    pf_mapver_release(a);
    pf_registry_destroy(reg);
}
END_TEST

static pf_error run(pf_crowd *c, pf_registry *reg, pf_navq *q, const char *cmd, pf_jsonw *w) {
    pf_crowd_command k;
    pf_crowd_limits lim = {100, 60, 600, 3600};
    pf_proto_error e;
    pf_error err;
    if (pf_crowd_command_parse(cmd, strlen(cmd), &lim, &k, &e)) {
        ck_abort_msg("command %s: %s", cmd, e.message);
    }
    pf_jsonw_free(w);
    pf_jsonw_init(w, 4096);
    err = pf_crowd_run(c, reg, q, &k, w);
    pf_crowd_command_free(&k);
    return err;
}

/* A refused command changes nothing; a new map version reaches the crowd;
 * a replaced map ends it. */
START_TEST(crowd_commands_and_versions) {
    pf_registry *reg = pf_registry_create(8);
    pf_crowds *t = pf_crowds_create(8, 8);
    pf_mapver *a = nav_mapver(reg, "a", 20, 10);
    pf_crowd_request rq = request(3, 0);
    pf_navq *q;
    pf_crowd *c;
    pf_proto_error e;
    pf_jsonw w;
    char *before;
    bool total;
    ck_assert_int_eq(pf_navq_create(256, 2, &q), PF_OK);
    ck_assert_int_eq(pf_crowds_add(t, a, &rq, NULL, 60, 0, &c, &total, &e), PF_OK);
    pf_jsonw_init(&w, 4096);
    ck_assert_int_eq(run(c, reg, q, "{\"add\":[{\"position\":[1,0,5],\"target\":[19,0,5]}]}", &w),
                     PF_ERR_NONE);
    ck_assert_int_eq(run(c, reg, q, "{\"steps\":0}", &w), PF_ERR_NONE);
    before = strndup(w.buf, w.len);
    ck_assert_int_eq(run(c, reg, q,
                         "{\"add\":[{\"position\":[2,0,5]}],\"targets\":[{\"id\":0,\"target\":"
                         "[1,0,50]}]}",
                         &w),
                     PF_ERR_BLOCKED);
    ck_assert_ptr_nonnull(strstr(w.buf, "targets[0].target"));
    ck_assert_int_eq(run(c, reg, q, "{\"steps\":0}", &w), PF_ERR_NONE);
    {
        char *after = strndup(w.buf, w.len);
        ck_assert_str_eq(after, before); /* not even the add happened */
        free(after);
    }
    free(before);

    /* The next version (an obstacle) reaches the crowd at its next run. */
    {
        pf_nav_obstacle o;
        pf_nav_change ch;
        pf_nav_limits nl = pf_nav_default_limits();
        pf_navmesh *next;
        pf_nav_error ne;
        pf_mapver *mv;
        memset(&o, 0, sizeof(o));
        snprintf(o.id, sizeof(o.id), "p");
        o.shape = PF_NAV_CYLINDER;
        o.pos[0] = 10;
        o.pos[2] = 5;
        o.radius = 2;
        o.height = 2;
        memset(&ch, 0, sizeof(ch));
        ch.put = &o;
        ch.nput = 1;
        ck_assert_int_eq(pf_nav_apply(pf_navmesh_of(a), &ch, &nl, NULL, &next, &ne), PF_OK);
        pf_navsrc_retain(pf_navmesh_source(a));
        mv = pf_navmesh_mapver_create("a", next, pf_navmesh_source(a), 0, 0, 0, NULL);
        pf_mapver_retain(mv);
        ck_assert_int_eq(pf_registry_swap(reg, a, mv), PF_OK);
        ck_assert_int_eq(run(c, reg, q, "{\"steps\":60,\"dt\":0.1}", &w), PF_ERR_NONE);
        ck_assert_ptr_nonnull(strstr(w.buf, "\"map_version\":2"));
        pf_mapver_release(mv);
    }
    {
        /* It went round the pillar: x past it, outside its radius all the
         * way (checked at the end only here; the HTTP suite checks each
         * step). */
        cJSON *j = cJSON_ParseWithLength(w.buf, w.len);
        const cJSON *ag = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "agents"), 0);
        double x = cJSON_GetArrayItem(cJSON_GetObjectItem(ag, "position"), 0)->valuedouble;
        ck_assert_double_gt(x, 12.0);
        cJSON_Delete(j);
    }
    /* Replaced: the crowd ends. */
    {
        pf_mapver *b = nav_mapver(reg, "a", 8, 8);
        ck_assert_int_eq(run(c, reg, q, "{}", &w), PF_ERR_CROWD_NOT_FOUND);
        ck_assert(pf_crowd_is_gone(c));
        pf_mapver_release(b);
    }
    pf_jsonw_free(&w);
    pf_crowd_release(c);
    pf_crowds_destroy(t);
    pf_navq_destroy(q);
    pf_mapver_release(a);
    pf_registry_destroy(reg);
}
END_TEST

static bool pause_always(void *ud) {
    (*(int *)ud)++;
    return true;
}

/* A command's steps in parts (pf_crowd_run_part, paused after every
 * step, as the HTTP route does at each --slice-ms): the same agents, ids
 * and frame as the command run at once on a twin crowd; between parts the
 * crowd is free, and one removed meanwhile ends the command with
 * crowd_not_found. */
START_TEST(crowd_steps_in_parts) {
    pf_registry *reg = pf_registry_create(8);
    pf_crowds *t = pf_crowds_create(8, 8);
    pf_mapver *a = nav_mapver(reg, "a", 30, 12);
    pf_crowd_request rq = request(8, 0);
    const char *cmd_text = "{\"add\":[{\"position\":[1,0,5],\"target\":[28,0,5]},{\"position\":"
                           "[28,0,6],\"target\":[1,0,6]},{\"position\":[5,0,2],\"target\":[20,0,"
                           "10]}],\"steps\":50,\"dt\":0.1}";
    pf_crowd_limits lim = {8, 60, 600, 3600};
    pf_crowd_command cmd;
    pf_crowd_run_state rs;
    pf_navq *q;
    pf_crowd *one, *parts;
    pf_proto_error e;
    pf_jsonw w1, w2;
    bool total, done = false;
    int pauses = 0, calls = 0;
    cJSON *j1, *j2;
    ck_assert_int_eq(pf_navq_create(256, 2, &q), PF_OK);
    ck_assert_int_eq(pf_crowds_add(t, a, &rq, NULL, 60, 0, &one, &total, &e), PF_OK);
    ck_assert_int_eq(pf_crowds_add(t, a, &rq, NULL, 60, 0, &parts, &total, &e), PF_OK);
    ck_assert_int_eq(pf_crowd_command_parse(cmd_text, strlen(cmd_text), &lim, &cmd, &e), PF_OK);
    pf_jsonw_init(&w1, 4096);
    pf_jsonw_init(&w2, 4096);
    ck_assert_int_eq(pf_crowd_run(one, reg, q, &cmd, &w1), PF_ERR_NONE);
    memset(&rs, 0, sizeof(rs));
    while (!done) {
        ck_assert_int_eq(
            pf_crowd_run_part(parts, reg, q, &cmd, &rs, pause_always, &pauses, &w2, &done),
            PF_ERR_NONE);
        if (!done) ck_assert_uint_eq(w2.len, 0); /* nothing written between parts */
        calls++;
    }
    ck_assert_int_eq(calls, 50);
    ck_assert_int_eq(pauses, 49);
    j1 = cJSON_ParseWithLength(w1.buf, w1.len);
    j2 = cJSON_ParseWithLength(w2.buf, w2.len);
    ck_assert_ptr_nonnull(j1);
    ck_assert_ptr_nonnull(j2);
    {
        char *a1 = cJSON_PrintUnformatted(cJSON_GetObjectItem(j1, "agents"));
        char *a2 = cJSON_PrintUnformatted(cJSON_GetObjectItem(j2, "agents"));
        char *d1 = cJSON_PrintUnformatted(cJSON_GetObjectItem(j1, "added"));
        char *d2 = cJSON_PrintUnformatted(cJSON_GetObjectItem(j2, "added"));
        ck_assert_str_eq(a1, a2);
        ck_assert_str_eq(d1, d2);
        free(a1);
        free(a2);
        free(d1);
        free(d2);
    }
    ck_assert_int_eq((int)cJSON_GetObjectItem(j2, "frame")->valuedouble, 50);
    cJSON_Delete(j1);
    cJSON_Delete(j2);
    pf_crowd_run_clear(&rs);
    /* Removed between two parts: the rest is not run. */
    {
        const char *more = "{\"steps\":5}";
        pf_crowd_command c2;
        pf_jsonw w3;
        ck_assert_int_eq(pf_crowd_command_parse(more, strlen(more), &lim, &c2, &e), PF_OK);
        pf_jsonw_init(&w3, 1024);
        memset(&rs, 0, sizeof(rs));
        ck_assert_int_eq(
            pf_crowd_run_part(parts, reg, q, &c2, &rs, pause_always, &pauses, &w3, &done),
            PF_ERR_NONE);
        ck_assert(!done);
        ck_assert(pf_crowds_remove(t, "a", pf_crowd_id(parts)));
        ck_assert_int_eq(
            pf_crowd_run_part(parts, reg, q, &c2, &rs, pause_always, &pauses, &w3, &done),
            PF_ERR_CROWD_NOT_FOUND);
        pf_crowd_run_clear(&rs);
        pf_crowd_command_free(&c2);
        pf_jsonw_free(&w3);
    }
    pf_crowd_command_free(&cmd);
    pf_jsonw_free(&w1);
    pf_jsonw_free(&w2);
    pf_crowd_release(one);
    pf_crowd_release(parts);
    pf_crowds_destroy(t);
    pf_navq_destroy(q);
    pf_mapver_release(a);
    pf_registry_destroy(reg);
}
END_TEST

TU_SUITE(crowd) {
    Suite *s = suite_create("crowd");
    TCase *tc = tcase_create("crowd");
    tcase_add_test(tc, crowd_table_limits_expiry_drop);
    tcase_add_test(tc, crowd_ticks_due_and_skipped);
    tcase_add_test(tc, crowd_commands_and_versions);
    tcase_add_test(tc, crowd_steps_in_parts);
    suite_add_tcase(s, tc);
    return s;
}
