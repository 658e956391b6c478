/* test_session.c -- server/session.c in-process: the sessions table (busy, limits, expiry) and the
 * session job. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "testutil.h"

START_TEST(session_table_busy_limits_expiry) {
    pf_registry *reg = pf_registry_create(8);
    pf_sessions *t = pf_sessions_create(3, 2);
    pf_mapver *a = tu_small_mapver(reg, "a"), *b = tu_small_mapver(reg, "b");
    pf_session *s1, *s2, *s3, *x;
    pf_point p0 = {0, 0}, p1 = {7, 7};
    char id1[PF_SESSION_ID_LEN + 1], id2[PF_SESSION_ID_LEN + 1];
    const uint64_t sec = 1000000000ull;
    bool total;

    ck_assert_int_eq(pf_sessions_add(t, a, p0, p1, 10, 0, &s1, &total), PF_OK);
    ck_assert_int_eq(pf_sessions_add(t, a, p0, p1, 1, 0, &s2, &total), PF_OK);
    snprintf(id1, sizeof(id1), "%s", pf_session_id(s1));
    snprintf(id2, sizeof(id2), "%s", pf_session_id(s2));
    ck_assert_str_ne(id1, id2);
    /* The per-map quota, then the total. */
    ck_assert_int_eq(pf_sessions_add(t, a, p0, p1, 10, 0, &x, &total), PF_ELIMIT);
    ck_assert(!total);
    ck_assert_int_eq(pf_sessions_add(t, b, p0, p1, 10, 0, &s3, &total), PF_OK);
    ck_assert_int_eq(pf_sessions_add(t, b, p0, p1, 10, 0, &x, &total), PF_ELIMIT);
    ck_assert(total);
    pf_sessions_release(t, s3, 0);
    /* Held sessions are busy, never expire, and are found only on their
     * map. */
    ck_assert_int_eq(pf_sessions_acquire(t, "a", id1, 0, &x), PF_SESSION_BUSY);
    ck_assert_int_eq(pf_sessions_reap(t, 5 * sec), 0);
    pf_sessions_release(t, s1, 0);
    pf_sessions_release(t, s2, 0);
    ck_assert_int_eq(pf_sessions_acquire(t, "b", id1, 0, &x), PF_SESSION_NOT_FOUND);
    ck_assert_int_eq(pf_sessions_acquire(t, "a", id1, 0, &x), PF_SESSION_OK);
    ck_assert_ptr_eq(x, s1);
    /* Removed while held: gone for others, freed at release. */
    ck_assert(pf_sessions_remove(t, "a", id1));
    ck_assert(!pf_sessions_exists(t, "a", id1, 0));
    ck_assert_uint_eq(pf_sessions_count(t), 2);
    pf_sessions_release(t, x, 0);
    /* Idle past the ttl: expired on access and by the reaper. */
    ck_assert(pf_sessions_exists(t, "a", id2, sec));
    ck_assert(!pf_sessions_exists(t, "a", id2, 2 * sec));
    ck_assert_int_eq(pf_sessions_reap(t, 2 * sec), 1);
    ck_assert_uint_eq(pf_sessions_count(t), 1);
    /* A slot freed on map a. */
    ck_assert_int_eq(pf_sessions_add(t, a, p0, p1, 10, 0, &s1, &total), PF_OK);
    pf_sessions_release(t, s1, 0);
    /* Dropping a map's sessions keeps other maps'. */
    ck_assert_int_eq(pf_sessions_drop_map(t, "a", 0), 1);
    ck_assert_uint_eq(pf_sessions_count(t), 1);
    ck_assert_int_eq(pf_sessions_drop_map(t, "b", b->lineage), 0);
    ck_assert_int_eq(pf_sessions_drop_map(t, "b", b->lineage + 1), 1);
    ck_assert_uint_eq(pf_sessions_count(t), 0);
    pf_sessions_destroy(t);
    pf_mapver_release(a);
    pf_mapver_release(b);
    pf_registry_destroy(reg);
}
END_TEST

/* Runs the session job and parses its answer; checks the error it
 * returned against the body's code. */
static cJSON *run_job(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                      const char *update, pf_error want) {
    pf_update_list l;
    pf_proto_error e;
    pf_jsonw w;
    pf_error err;
    char *text;
    cJSON *j;
    memset(&l, 0, sizeof(l));
    if (update)
        ck_assert_int_eq(pf_update_list_parse(update, strlen(update), false, 8, &l, &e), PF_OK);
    pf_jsonw_init(&w, 0);
    err = pf_session_run(t, reg, m, s, update ? &l : NULL, &w);
    pf_update_list_free(&l);
    text = tu_jsonw_text(&w);
    ck_assert_msg(err == want, "job gave %s, want %s: %s", pf_error_code(err), pf_error_code(want),
                  text);
    j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    if (err != PF_ERR_NONE)
        ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "code")->valuestring,
                         pf_error_code(err));
    free(text);
    return j;
}

static int point_at(const cJSON *pt, int k) { return cJSON_GetArrayItem(pt, k)->valueint; }

/* Session plans counted, of every kind and outcome. */
static uint64_t plans(pf_metrics *m) {
    uint64_t n = 0;
    for (int k = 0; k < PF_PLAN_COUNT; k++)
        for (int o = 0; o < PF_OUTCOME_COUNT; o++) n += atomic_load(&m->plans[k][o]);
    return n;
}

/* The job both front ends run: a read plans, an update is validated as a
 * whole (a bad one changes nothing) then applied and repaired, and a map
 * that went away ends the session. */
START_TEST(session_job_plans_validates_and_ends) {
    pf_registry *reg = pf_registry_create(8);
    pf_sessions *t = pf_sessions_create(8, 8);
    pf_mapver *mv = tu_small_mapver(reg, "m");
    pf_metrics m;
    pf_session *s;
    pf_point start = {0, 0}, goal = {7, 7};
    bool total;
    cJSON *j;
    const cJSON *path;
    pf_metrics_init(&m);
    ck_assert_int_eq(pf_sessions_add(t, mv, start, goal, 60, 0, &s, &total), PF_OK);

    j = run_job(t, reg, &m, s, NULL, PF_ERR_NONE);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "found")));
    ck_assert_double_eq_tol(cJSON_GetObjectItem(j, "cost")->valuedouble,
                            tu_reference_cost(pf_planner_grid(mv->planner), start, goal), 1e-9);
    path = cJSON_GetObjectItem(j, "path");
    ck_assert_int_eq(point_at(cJSON_GetArrayItem(path, 0), 0), 0);
    ck_assert_int_eq(point_at(cJSON_GetArrayItem(path, cJSON_GetArraySize(path) - 1), 1), 7);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "session_id")->valuestring, pf_session_id(s));
    cJSON_Delete(j);
    ck_assert_uint_eq(atomic_load(&m.plans[PF_PLAN_INITIAL][PF_OUTCOME_FOUND]), 1);
    ck_assert_uint_eq(plans(&m), 1);

    /* Off the map: rejected, the session is as it was. */
    j = run_job(t, reg, &m, s, "{\"goal\":[1,1],\"position\":[99,0]}", PF_ERR_OFF_MAP);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "field")->valuestring,
                     "position");
    cJSON_Delete(j);
    ck_assert_int_eq(pf_session_goal(s).x, 7);
    ck_assert_int_eq(pf_session_position(s).x, 0);
    ck_assert_uint_eq(plans(&m), 1); /* nothing was searched */

    /* A move and a wall: applied, repaired. */
    j = run_job(t, reg, &m, s, "{\"position\":[1,1],\"cells\":[{\"x\":2,\"y\":2,\"cost\":0}]}",
                PF_ERR_NONE);
    path = cJSON_GetObjectItem(j, "path");
    ck_assert_int_eq(point_at(cJSON_GetArrayItem(path, 0), 0), 1);
    ck_assert_int_eq(point_at(cJSON_GetArrayItem(path, 0), 1), 1);
    for (int i = 0; i < cJSON_GetArraySize(path); i++)
        ck_assert(!(point_at(cJSON_GetArrayItem(path, i), 0) == 2 &&
                    point_at(cJSON_GetArrayItem(path, i), 1) == 2));
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "stats"), "updates")->valueint, 1);
    cJSON_Delete(j);
    ck_assert_uint_eq(atomic_load(&m.plans[PF_PLAN_REPAIR][PF_OUTCOME_FOUND]), 1);
    ck_assert_uint_eq(plans(&m), 2);

    /* The map is deleted: the session is over, and goes at its release. */
    ck_assert(pf_registry_remove(reg, "m"));
    j = run_job(t, reg, &m, s, NULL, PF_ERR_SESSION_NOT_FOUND);
    cJSON_Delete(j);
    pf_sessions_release(t, s, 0);
    ck_assert_uint_eq(pf_sessions_count(t), 0);
    pf_sessions_destroy(t);
    pf_mapver_release(mv);
    pf_registry_destroy(reg);
}
END_TEST

TU_SUITE(session) {
    Suite *s = suite_create("session");
    TCase *tc = tcase_create("session");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, session_table_busy_limits_expiry);
    tcase_add_test(tc, session_job_plans_validates_and_ends);
    suite_add_tcase(s, tc);
    return s;
}
