/* test_replan.c -- the replanning policy's decision: its limits, a table of
 * situations and the reason each ends with, and a random walk through
 * thousands of steps checked against the rules restated plainly here. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "replan.h"
#include "testutil.h"

START_TEST(replan_policy_check_names_the_field) {
    static const struct {
        pf_replan_policy p;
        const char *field; /* NULL: accepted */
    } cases[] = {
        {{0, 0, 0, 0}, NULL},
        {{PF_REPLAN_INTERVAL_MAX_MS, PF_REPLAN_THRESHOLD_MAX, PF_REPLAN_HYSTERESIS_MAX, 0}, NULL},
        {{PF_REPLAN_INTERVAL_MAX_MS + 1, 0, 0, 0}, "min_interval_ms"},
        {{0, -0.5, 0, 0}, "goal_threshold"},
        {{0, PF_REPLAN_THRESHOLD_MAX * 2, 0, 0}, "goal_threshold"},
        {{0, NAN, 0, 0}, "goal_threshold"},
        {{0, INFINITY, 0, 0}, "goal_threshold"},
        {{0, 0, -0.01, 0}, "hysteresis"},
        {{0, 0, 0.95, 0}, "hysteresis"},
        {{0, 0, NAN, 0}, "hysteresis"},
        {{7, 1, 1.0, 0}, "hysteresis"},
        {{0, 0, 0, PF_REPLAN_STEPS_MAX}, NULL},
        {{0, 0, 0, PF_REPLAN_STEPS_MAX + 1}, "min_steps"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *field = "unset";
        pf_status st = pf_replan_policy_check(&cases[i].p, &field);
        if (!cases[i].field) {
            ck_assert_msg(st == PF_OK, "case %zu refused (%s)", i, field ? field : "-");
            ck_assert_ptr_null(field);
        } else {
            ck_assert_msg(st == PF_EINVAL, "case %zu accepted", i);
            ck_assert_msg(field && strcmp(field, cases[i].field) == 0, "case %zu: field %s", i,
                          field ? field : "NULL");
        }
    }
    ck_assert_int_eq(pf_replan_policy_check(&cases[2].p, NULL), PF_EINVAL);
}
END_TEST

/* One situation: the policy, the last replan (time, goal; none when
 * last_ms < 0), a pending map change, and this step's input. */
typedef struct situation {
    const char *what;
    pf_replan_policy policy;
    int64_t last_ms;
    double last_goal[2];
    pf_replan_input in;
    pf_replan_reason want;
} situation;

START_TEST(replan_decides_by_table) {
    const pf_replan_policy every = {0, 0, 0, 0}, timer = {500, 0, 0, 0}, thr = {0, 3, 0, 0},
                           both = {500, 3, 0.2, 0};
    const situation cases[] = {
        {"first step", every, -1, {0, 0}, {0, {1, 1, 0}, true, 0, 0, 0, 0}, PF_REPLAN_INITIAL},
        {"no route", timer, 0, {0, 0}, {10, {0, 0, 0}, false, 0, 0, 0, 0}, PF_REPLAN_INITIAL},
        {"blocked, in the interval",
         timer,
         0,
         {0, 0},
         {10, {0, 0, 0}, true, true, 0, 0, 0},
         PF_REPLAN_BLOCKED},
        {"off the route, in the interval",
         timer,
         0,
         {0, 0},
         {10, {0, 0, 0}, true, false, true, 0, 0},
         PF_REPLAN_OFF_ROUTE},
        {"route end short of the goal",
         both,
         0,
         {0, 0},
         {10, {1, 0, 0}, true, false, false, true, 0},
         PF_REPLAN_ROUTE_END},
        {"blocked wins over off route",
         every,
         0,
         {0, 0},
         {10, {0, 0, 0}, true, true, true, true, 0},
         PF_REPLAN_BLOCKED},
        {"nothing moved", every, 0, {4, 4}, {10, {4, 4, 0}, true, 0, 0, 0, 0}, PF_REPLAN_UNCHANGED},
        {"goal moved, no policy",
         every,
         0,
         {4, 4},
         {10, {5, 4, 0}, true, 0, 0, 0, 0},
         PF_REPLAN_GOAL_MOVED},
        {"goal moved, too soon",
         timer,
         0,
         {4, 4},
         {499, {9, 4, 0}, true, 0, 0, 0, 0},
         PF_REPLAN_INTERVAL},
        {"goal moved, interval over",
         timer,
         0,
         {4, 4},
         {500, {5, 4, 0}, true, 0, 0, 0, 0},
         PF_REPLAN_GOAL_MOVED},
        {"goal moved 3 cells (not past)",
         thr,
         0,
         {4, 4},
         {10, {7, 4, 0}, true, 0, 0, 0, 0},
         PF_REPLAN_THRESHOLD},
        {"goal moved past 3 cells",
         thr,
         0,
         {4, 4},
         {10, {6, 7, 0}, true, 0, 0, 0, 0},
         PF_REPLAN_GOAL_MOVED},
        {"past the threshold, too soon",
         both,
         100,
         {4, 4},
         {599, {8, 4, 0}, true, 0, 0, 0, 0},
         PF_REPLAN_INTERVAL},
        {"map changed",
         every,
         0,
         {4, 4},
         {1, {4, 4, 0}, true, 0, 0, 0, true},
         PF_REPLAN_MAP_CHANGED},
        {"map changed, too soon",
         timer,
         0,
         {4, 4},
         {1, {4, 4, 0}, true, 0, 0, 0, true},
         PF_REPLAN_INTERVAL},
        {"clock went back",
         timer,
         1000,
         {4, 4},
         {10, {9, 9, 0}, true, 0, 0, 0, 0},
         PF_REPLAN_INTERVAL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const situation *c = &cases[i];
        pf_replan r;
        pf_replan_init(&r, &c->policy);
        if (c->last_ms >= 0) {
            const double g[3] = {c->last_goal[0], c->last_goal[1], 0};
            pf_replan_done(&r, (uint64_t)c->last_ms, g);
        }
        pf_replan_reason why = pf_replan_decide(&r, &c->in);
        ck_assert_msg(why == c->want, "%s: %s, wanted %s", c->what, pf_replan_reason_name(why),
                      pf_replan_reason_name(c->want));
        ck_assert_uint_eq(r.count[why], 1);
        ck_assert(pf_replan_reason_forced(why) == (why <= PF_REPLAN_ROUTE_END));
    }
}
END_TEST

/* A map change the interval held back is remembered until a replan. */
START_TEST(replan_map_change_waits_for_the_interval) {
    const pf_replan_policy p = {100, 5, 0, 0};
    const double g[3] = {0, 0, 0};
    pf_replan r;
    pf_replan_input in = {0, {0, 0, 0}, true, false, false, false, false};
    pf_replan_init(&r, &p);
    pf_replan_done(&r, 0, g);
    in.now_ms = 50;
    in.map_changed = true;
    ck_assert_int_eq(pf_replan_decide(&r, &in), PF_REPLAN_INTERVAL);
    in.map_changed = false;
    in.now_ms = 99;
    ck_assert_int_eq(pf_replan_decide(&r, &in), PF_REPLAN_INTERVAL);
    in.now_ms = 100;
    ck_assert_int_eq(pf_replan_decide(&r, &in), PF_REPLAN_MAP_CHANGED);
    pf_replan_done(&r, 100, g);
    in.now_ms = 300;
    ck_assert_int_eq(pf_replan_decide(&r, &in), PF_REPLAN_UNCHANGED);
    /* A policy change keeps the last replan: the interval counts from it. */
    const pf_replan_policy slow = {1000, 0, 0, 0};
    pf_replan_set_policy(&r, &slow);
    in.goal[0] = 1;
    in.now_ms = 1099;
    ck_assert_int_eq(pf_replan_decide(&r, &in), PF_REPLAN_INTERVAL);
    in.now_ms = 1100;
    ck_assert_int_eq(pf_replan_decide(&r, &in), PF_REPLAN_GOAL_MOVED);
    ck_assert_uint_eq(r.count[PF_REPLAN_INTERVAL], 3);
    for (int k = 0; k < PF_REPLAN_REASON_COUNT; k++)
        ck_assert_str_ne(pf_replan_reason_name((pf_replan_reason)k), "unknown");
    ck_assert_str_eq(pf_replan_reason_name(PF_REPLAN_REASON_COUNT), "unknown");
    ck_assert_str_eq(pf_replan_reason_name(PF_REPLAN_GOAL_MOVED), "goal_moved");
}
END_TEST

/* Thousands of random steps under random policies: every decision is the
 * one the rules give, restated here on the test's own record of the last
 * replan (which the test keeps by calling pf_replan_done on every replan). */
START_TEST(replan_random_steps_follow_the_rules) {
    uint64_t st = tu_seed("replan_random_steps_follow_the_rules", 0x9e91a4);
    uint64_t seen[PF_REPLAN_REASON_COUNT] = {0};
    for (int run = 0; run < 300; run++) {
        /* A third of the runs count steps instead of (or besides) time. */
        pf_replan_policy p = {tu_below(&st, 4) * 50, tu_below(&st, 4) * 1.5, 0,
                              tu_below(&st, 3) == 0 ? (uint32_t)tu_below(&st, 6) : 0};
        pf_replan r;
        bool planned = false, changed = false;
        uint64_t now = 0, last = 0, steps = 0;
        double gx = 0, gy = 0, lx = 0, ly = 0;
        pf_replan_init(&r, &p);
        for (int step = 0; step < 100; step++) {
            pf_replan_input in;
            memset(&in, 0, sizeof(in));
            now += tu_below(&st, 60);
            if (tu_below(&st, 2)) {
                gx += (double)tu_below(&st, 3) - 1;
                gy += (double)tu_below(&st, 3) - 1;
            }
            in.now_ms = now;
            in.goal[0] = gx;
            in.goal[1] = gy;
            in.has_route = tu_below(&st, 20) != 0;
            in.blocked = in.has_route && tu_below(&st, 25) == 0;
            in.off_route = in.has_route && tu_below(&st, 25) == 0;
            in.at_end = in.has_route && tu_below(&st, 25) == 0;
            in.map_changed = tu_below(&st, 10) == 0;
            changed = changed || in.map_changed;
            steps++; /* steps since the last replan, this one included */
            /* The rules, in order. */
            pf_replan_reason want;
            double moved = hypot(gx - lx, gy - ly);
            if (!planned || !in.has_route)
                want = PF_REPLAN_INITIAL;
            else if (in.blocked)
                want = PF_REPLAN_BLOCKED;
            else if (in.off_route)
                want = PF_REPLAN_OFF_ROUTE;
            else if (in.at_end)
                want = PF_REPLAN_ROUTE_END;
            else if (moved <= p.goal_threshold && !changed)
                want = moved > 0 ? PF_REPLAN_THRESHOLD : PF_REPLAN_UNCHANGED;
            else if (now - last < p.min_interval_ms || steps < p.min_steps)
                want = PF_REPLAN_INTERVAL;
            else
                want = moved > p.goal_threshold ? PF_REPLAN_GOAL_MOVED : PF_REPLAN_MAP_CHANGED;
            pf_replan_reason why = pf_replan_decide(&r, &in);
            ck_assert_msg(why == want, "run %d step %d: %s, rules say %s", run, step,
                          pf_replan_reason_name(why), pf_replan_reason_name(want));
            seen[why]++;
            /* One replan in eight fails (no plan): the next step tries again. */
            if (pf_replan_reason_replans(why) && tu_below(&st, 8)) {
                const double g[3] = {gx, gy, 0};
                pf_replan_done(&r, now, g);
                planned = true;
                changed = false;
                last = now;
                steps = 0;
                lx = gx;
                ly = gy;
            }
        }
    }
    /* Every reason pf_replan_decide answers (target_adjusted is its
     * callers'): never seen here. */
    ck_assert_uint_eq(seen[PF_REPLAN_TARGET_ADJUSTED], 0);
    for (int k = 0; k < PF_REPLAN_TARGET_ADJUSTED; k++)
        ck_assert_msg(seen[k] > 10, "reason %s seen %llu times",
                      pf_replan_reason_name((pf_replan_reason)k), (unsigned long long)seen[k]);
}
END_TEST

TU_SUITE(replan) {
    Suite *s = suite_create("replan");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, replan_policy_check_names_the_field);
    tcase_add_test(tc, replan_decides_by_table);
    tcase_add_test(tc, replan_map_change_waits_for_the_interval);
    tcase_add_test(tc, replan_random_steps_follow_the_rules);
    suite_add_tcase(s, tc);
    return s;
}
