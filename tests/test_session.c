/* test_session.c -- server/session.c in-process: the sessions table (busy, limits, expiry) and the
 * session job; sessions of agents larger than one cell (the agent grids of core/clearance.c):
 * after every private change, move and map PATCH on random maps the plan is optimal for its size
 * on the session's own view of the map, by the reference Dijkstra and footprint check of
 * refsearch.c on a copy of that view kept by the test. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind_grid.h"
#include "metrics.h"
#include "planner.h"
#include "refsearch.h"
#include "registry.h"
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

    ck_assert_int_eq(pf_grid_sessions_add(t, a, p0, p1, 10, 0, &s1, &total), PF_OK);
    ck_assert_int_eq(pf_grid_sessions_add(t, a, p0, p1, 1, 0, &s2, &total), PF_OK);
    snprintf(id1, sizeof(id1), "%s", pf_session_id(s1));
    snprintf(id2, sizeof(id2), "%s", pf_session_id(s2));
    ck_assert_str_ne(id1, id2);
    /* The per-map quota, then the total. */
    ck_assert_int_eq(pf_grid_sessions_add(t, a, p0, p1, 10, 0, &x, &total), PF_ELIMIT);
    ck_assert(!total);
    ck_assert_int_eq(pf_grid_sessions_add(t, b, p0, p1, 10, 0, &s3, &total), PF_OK);
    ck_assert_int_eq(pf_grid_sessions_add(t, b, p0, p1, 10, 0, &x, &total), PF_ELIMIT);
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
    ck_assert_int_eq(pf_grid_sessions_add(t, a, p0, p1, 10, 0, &s1, &total), PF_OK);
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
    ck_assert_int_eq(pf_grid_sessions_add(t, mv, start, goal, 60, 0, &s, &total), PF_OK);

    j = run_job(t, reg, &m, s, NULL, PF_ERR_NONE);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "found")));
    ck_assert_double_eq_tol(cJSON_GetObjectItem(j, "cost")->valuedouble,
                            tu_reference_cost(pf_planner_grid(pf_grid_planner(mv)), start, goal),
                            1e-9);
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
    ck_assert_int_eq(pf_grid_session_goal(s).x, 7);
    ck_assert_int_eq(pf_grid_session_position(s).x, 0);
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

/* ---- agents larger than one cell (the agent grids of core/clearance.c) ---- */

static pf_mapver *publish(pf_registry *reg, pf_grid *g) {
    pf_planner *p = NULL;
    pf_mapver *mv;
    bool created;
    ck_assert_int_eq(pf_planner_create(g, NULL, &p), PF_OK);
    mv = pf_grid_mapver_create("m", p, 16, 1 << 20, 0, NULL);
    ck_assert_ptr_nonnull(mv);
    ck_assert_int_eq(pf_registry_publish(reg, mv, &created), PF_OK);
    pf_mapver_retain(mv);
    return mv;
}

/* One update with one private cell change or a position. */
static pf_update_list one_update(pf_point *cell, uint8_t cost, pf_point *pos) {
    pf_update_list l;
    memset(&l, 0, sizeof(l));
    l.items = calloc(1, sizeof(*l.items));
    l.n = 1;
    if (cell) {
        l.items[0].cells = calloc(1, sizeof(*l.items[0].cells));
        l.items[0].cells[0].p = *cell;
        l.items[0].cells[0].cost = cost;
        l.items[0].ncells = 1;
    }
    if (pos) {
        l.items[0].has_position = true;
        l.items[0].position = pf_place_cell(*pos);
    }
    return l;
}

static bool random_fit(uint64_t *st, const pf_grid *g, int32_t n, pf_point *p) {
    for (int k = 0; k < 300; k++) {
        p->x = (int32_t)tu_below(st, (uint32_t)pf_grid_width(g));
        p->y = (int32_t)tu_below(st, (uint32_t)pf_grid_height(g));
        if (ref_agent_fits(g, *p, n)) return true;
    }
    return false;
}

/* The session's plan against the reference on its view `eff`. */
static void check_plan(pf_session *s, const pf_grid *eff, int32_t n, int m, int round,
                       double *dist) {
    pf_point pos = pf_grid_session_position(s), goal = pf_grid_session_goal(s);
    pf_result r;
    pf_status st = pf_grid_session_plan(s, &r);
    double want, c;
    if (!ref_agent_fits(eff, pos, n) || !ref_agent_fits(eff, goal, n)) {
        ck_assert_msg(st == PF_EBLOCKED, "map %d round %d: status %d, the agent is blocked", m,
                      round, st);
        return;
    }
    ref_dists(eff, n, &pos, 1, false, dist);
    want = dist[goal.y * pf_grid_width(eff) + goal.x];
    if (isinf(want)) {
        ck_assert_msg(st == PF_NO_PATH, "map %d round %d: status %d, no path", m, round, st);
        return;
    }
    ck_assert_msg(st == PF_OK, "map %d round %d size %d: status %d, want %.6f", m, round, n, st,
                  want);
    ck_assert_int_eq(ref_agent_path_check(eff, n, r.path, r.path_len, &c), -1);
    ck_assert_msg(ref_close(c, want), "map %d round %d size %d: cost %.9f, want %.9f", m, round, n,
                  c, want);
    ck_assert(r.path[0].x == pos.x && r.path[0].y == pos.y);
}

START_TEST(session_agents_private_changes_moves_patches) {
    uint64_t st = tu_seed("session_agents_private_changes_moves_patches", 0xa9e55e55);
    pf_metrics metrics;
    pf_metrics_init(&metrics);
    long plans = 0;
    for (int m = 0; m < 200; m++) {
        tu_map_opts o = {8, 30, 0.2, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        pf_grid *eff = pf_grid_clone(g); /* the session's view */
        int32_t w = pf_grid_width(g), h = pf_grid_height(g), n = 2 + (int32_t)tu_below(&st, 2);
        bool *pinned = calloc((size_t)w * h, sizeof(*pinned));
        double *dist = malloc((size_t)w * h * sizeof(*dist));
        pf_registry *reg = pf_registry_create(4);
        pf_sessions *t = pf_sessions_create(16, 16);
        pf_mapver *cur = publish(reg, g);
        pf_session *s = NULL;
        pf_point start, goal;
        bool total;
        if (!random_fit(&st, eff, n, &start) || !random_fit(&st, eff, n, &goal)) goto next;
        ck_assert_int_eq(pf_grid_sessions_add_sized(t, cur, start, goal, n, 60, 0, &s, &total),
                         PF_OK);
        ck_assert_int_eq(pf_grid_session_agent_size(s), n);
        check_plan(s, eff, n, m, -1, dist);
        for (int round = 0; round < 10; round++) {
            int kind = (int)tu_below(&st, 3);
            pf_result cur_plan;
            bool on_path = pf_grid_session_plan(s, &cur_plan) == PF_OK && cur_plan.path_len > 1;
            /* Half of the changes go on or beside the current plan, where
             * they matter to the search. */
            pf_point near = {0, 0};
            if (on_path) {
                near = cur_plan.path[tu_below(&st, (uint32_t)cur_plan.path_len)];
                near.x += (int32_t)tu_below(&st, (uint32_t)n + 1);
                near.y += (int32_t)tu_below(&st, (uint32_t)n + 1);
                if (near.x >= w) near.x = w - 1;
                if (near.y >= h) near.y = h - 1;
            }
            if (kind == 0) { /* a private cell change */
                pf_point c = {(int32_t)tu_below(&st, (uint32_t)w),
                              (int32_t)tu_below(&st, (uint32_t)h)};
                if (on_path && tu_below(&st, 2)) c = near;
                uint8_t cost = tu_below(&st, 2) ? 0 : (uint8_t)(1 + tu_below(&st, 5));
                pf_update_list l = one_update(&c, cost, NULL);
                pf_proto_error e;
                ck_assert_int_eq(pf_grid_session_validate(s, &l, &e), PF_OK);
                ck_assert_int_eq(pf_grid_session_apply(s, &l), PF_OK);
                pf_update_list_free(&l);
                pf_grid_set_cost(eff, c, cost);
                pinned[c.y * w + c.x] = true;
            } else if (kind == 1) { /* a move along the plan */
                pf_result r;
                if (pf_grid_session_plan(s, &r) == PF_OK && r.path_len > 1) {
                    pf_point p = r.path[tu_below(&st, (uint32_t)r.path_len)];
                    pf_update_list l = one_update(NULL, 0, &p);
                    pf_proto_error e;
                    ck_assert_int_eq(pf_grid_session_validate(s, &l, &e), PF_OK);
                    ck_assert_int_eq(pf_grid_session_apply(s, &l), PF_OK);
                    pf_update_list_free(&l);
                }
            } else { /* a map PATCH: the session sees it at its next sync */
                pf_cell_change ch[4];
                size_t nc = 1 + tu_below(&st, 4);
                pf_point *changed = NULL;
                size_t nchanged = 0;
                pf_planner *p = NULL;
                pf_mapver *next;
                const char *how;
                for (size_t i = 0; i < nc; i++) {
                    ch[i].p.x = (int32_t)tu_below(&st, (uint32_t)w);
                    ch[i].p.y = (int32_t)tu_below(&st, (uint32_t)h);
                    if (on_path && i == 0) ch[i].p = near;
                    ch[i].cost = tu_below(&st, 2) ? 0 : (uint8_t)(1 + tu_below(&st, 3));
                    if (!pinned[ch[i].p.y * w + ch[i].p.x])
                        pf_grid_set_cost(eff, ch[i].p, ch[i].cost);
                }
                ck_assert_int_eq(pf_planner_apply(pf_grid_planner(cur), ch, nc, NULL, 0, NULL, &p,
                                                  &changed, &nchanged),
                                 PF_OK);
                next = pf_grid_mapver_create("m", p, 16, 1 << 20, 0, NULL);
                ck_assert_int_eq(
                    pf_mapver_set_log(next, cur, changed, nchanged, PF_MAPVER_LOG_CELLS), PF_OK);
                ck_assert_int_eq(pf_registry_swap(reg, cur, next), PF_OK);
                pf_mapver_release(cur);
                cur = next;
                pf_mapver_retain(cur);
                ck_assert_int_eq(pf_session_sync(s, reg, &how), PF_OK);
                ck_assert_str_eq(how, "incremental");
            }
            check_plan(s, eff, n, m, round, dist);
            plans++;
        }
        pf_sessions_release(t, s, 0);
    next:
        pf_sessions_destroy(t);
        pf_mapver_release(cur);
        pf_registry_destroy(reg);
        pf_grid_destroy(eff);
        free(pinned);
        free(dist);
    }
    ck_assert_int_gt(plans, 1000);
}
END_TEST

/* The troll's door: a 2x2 session cannot take a one-cell gap, and learns
 * of a gap opened privately. */
START_TEST(session_agents_textbook_gap) {
    const char *rows[] = {"........", "........", "###.####", "........", "........"};
    pf_grid *g = tu_grid_from_ascii(rows, 5, 8);
    pf_registry *reg = pf_registry_create(4);
    pf_sessions *t = pf_sessions_create(4, 4);
    pf_mapver *mv = publish(reg, g);
    pf_session *s;
    pf_result r;
    bool total;
    pf_point wallc = {4, 2};
    ck_assert_int_eq(
        pf_grid_sessions_add_sized(t, mv, (pf_point){0, 0}, (pf_point){0, 3}, 2, 60, 0, &s, &total),
        PF_OK);
    ck_assert_int_eq(pf_grid_session_plan(s, &r), PF_NO_PATH);
    pf_update_list l = one_update(&wallc, 1, NULL);
    pf_proto_error e;
    ck_assert_int_eq(pf_grid_session_validate(s, &l, &e), PF_OK);
    ck_assert_int_eq(pf_grid_session_apply(s, &l), PF_OK);
    pf_update_list_free(&l);
    ck_assert_int_eq(pf_grid_session_plan(s, &r), PF_OK); /* (3,2)-(4,2) is two wide now */
    ck_assert_int_eq(r.path[r.path_len - 1].y, 3);
    /* Positions must fit the agent in its view. */
    pf_point bad = {6, 1};
    l = one_update(NULL, 0, &bad);
    ck_assert_int_eq(pf_grid_session_validate(s, &l, &e), PF_EBLOCKED);
    pf_update_list_free(&l);
    pf_sessions_release(t, s, 0); /* held since it was made: the table frees it */
    ck_assert_int_eq(
        pf_grid_sessions_add_sized(t, mv, (pf_point){7, 0}, (pf_point){0, 3}, 2, 60, 0, &s, &total),
        PF_EBLOCKED);
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
    tc = tcase_create("agents");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, session_agents_textbook_gap);
    tcase_add_test(tc, session_agents_private_changes_moves_patches);
    suite_add_tcase(s, tc);
    return s;
}
