/* test_dstar.c -- D* Lite sessions: textbook repairs, the corner rule over
 * private changes, errors, the budget, memory, and the property test: after
 * every update of thousands of random update sequences the session's cost
 * equals the reference Dijkstra on an equivalent grid, and a twin session on
 * the plain vertex store (pf_dstar_opts.plain_store) answers exactly as the
 * tiled one does. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuts.h"
#include "dstar.h"
#include "path.h"
#include "planner.h"
#include "refsearch.h"
#include "search.h"
#include "testutil.h"

static bool same_point(pf_point a, pf_point b) { return a.x == b.x && a.y == b.y; }

/* The tiled session's answer `a` and its plain-store twin's `b` to the same
 * call. The search is the same code over two vertex stores, so everything
 * must agree exactly: status, work counters, cost (summed in the same
 * order) and every point of the path. */
static void check_same(const pf_result *a, const pf_result *b, const char *what, int step) {
    ck_assert_msg(a->status == b->status && a->expanded == b->expanded &&
                      a->generated == b->generated,
                  "%s step %d: tiles %s (%llu expanded, %llu generated), plain store %s "
                  "(%llu, %llu)",
                  what, step, pf_status_str(a->status), (unsigned long long)a->expanded,
                  (unsigned long long)a->generated, pf_status_str(b->status),
                  (unsigned long long)b->expanded, (unsigned long long)b->generated);
    ck_assert_msg(a->path_len == b->path_len && a->cost == b->cost,
                  "%s step %d: tiles %zu points cost %.17g, plain store %zu points cost %.17g",
                  what, step, a->path_len, a->cost, b->path_len, b->cost);
    for (size_t i = 0; i < a->path_len; i++)
        ck_assert_msg(same_point(a->path[i], b->path[i]),
                      "%s step %d: point %zu is (%d, %d) on the tiles, (%d, %d) on the plain store",
                      what, step, i, a->path[i].x, a->path[i].y, b->path[i].x, b->path[i].y);
}

/* pf_dstar_plan on d and, when twin is not NULL, on twin, whose answer
 * must be the same. */
static pf_status plan_both(pf_dstar *d, pf_dstar *twin, uint64_t budget, pf_result *r,
                           const char *what, int step) {
    pf_status st = pf_dstar_plan(d, budget, r);
    if (twin) {
        pf_result rr;
        ck_assert_int_eq(pf_dstar_plan(twin, budget, &rr), rr.status);
        check_same(r, &rr, what, step);
    }
    return st;
}

/* Plans and checks the answer against the reference on `eff` (the effective
 * grid the session should see): same reachability, same cost, a valid path
 * from the agent to the goal whose cost is the reported one. With a twin
 * (else NULL), every plan call must answer on it as on d. */
static void check_plan_twin(pf_dstar *d, pf_dstar *twin, const pf_grid *eff, const char *what,
                            int step, uint64_t budget) {
    pf_point s = pf_dstar_position(d), t = pf_dstar_goal(d);
    pf_result r;
    pf_status st;
    int calls = 0;
    /* With a budget, plan again until the repair is done. */
    while ((st = plan_both(d, twin, budget, &r, what, step)) == PF_EBUDGET) {
        ck_assert_uint_eq(r.expanded, budget);
        ck_assert_int_lt(++calls, 1000000);
    }
    ck_assert_int_eq(r.status, st);
    if (!pf_grid_is_walkable(eff, s) || !pf_grid_is_walkable(eff, t)) {
        ck_assert_msg(st == PF_EBLOCKED, "%s step %d: status %s on a blocked endpoint", what, step,
                      pf_status_str(st));
        return;
    }
    double ref = tu_reference_cost(eff, s, t);
    if (ref < 0) {
        ck_assert_msg(st == PF_NO_PATH, "%s step %d: status %s, reference unreachable", what, step,
                      pf_status_str(st));
        ck_assert_uint_eq(r.path_len, 0);
        return;
    }
    ck_assert_msg(st == PF_OK, "%s step %d: status %s, reference %f", what, step, pf_status_str(st),
                  ref);
    ck_assert_msg(fabs(r.cost - ref) <= 1e-6 * fmax(1.0, ref),
                  "%s step %d: cost %.9f, reference %.9f", what, step, r.cost, ref);
    double pc;
    size_t bad = 0;
    ck_assert_msg(pf_path_validate(eff, r.path, r.path_len, &pc, &bad) == PF_OK,
                  "%s step %d: invalid path at index %zu", what, step, bad);
    ck_assert(same_point(r.path[0], s));
    ck_assert(same_point(r.path[r.path_len - 1], t));
    ck_assert_double_eq_tol(pc, r.cost, 1e-6 * fmax(1.0, ref));
}

static void check_plan(pf_dstar *d, const pf_grid *eff, const char *what, int step) {
    check_plan_twin(d, NULL, eff, what, step, 0);
}

/* A corridor closed by a door: the repair goes round, then back through
 * when it opens, and costs what a fresh search costs. */
START_TEST(dstar_textbook_door_closes_and_opens) {
    const char *rows[] = {"..........", ".########.", "..........", ".........."};
    pf_grid *g = tu_grid_from_ascii(rows, 4, 8);
    pf_dstar *d = NULL;
    pf_result r;
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){0, 0}, (pf_point){9, 0}, &d), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_double_eq_tol(r.cost, 9.0, 1e-9);
    /* Close the top row at x = 5: round through row 2. */
    ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){5, 0}, 0), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    /* (0,0) down to (0,2) [2], along to (9,2) [9], up to (9,0) [2]; the
     * corner rule forbids the diagonals past the wall ends. */
    ck_assert_double_eq_tol(r.cost, 13.0, 1e-9);
    ck_assert_uint_gt(r.expanded, 0);
    ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){5, 0}, 1), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_double_eq_tol(r.cost, 9.0, 1e-9);
    pf_dstar_destroy(d);
    pf_grid_destroy(g);
}
END_TEST

/* Blocking one orthogonal neighbour removes the diagonal step past it
 * without corner cutting, and keeps it with corner cutting. */
START_TEST(dstar_corner_rule_follows_private_cells) {
    for (int cut = 0; cut <= 1; cut++) {
        pf_grid *g = NULL;
        pf_dstar *d = NULL;
        pf_result r;
        ck_assert_int_eq(pf_grid_create(3, 3, NULL, &g), PF_OK);
        ck_assert_int_eq(pf_grid_set_rules(g, 8, cut), PF_OK);
        ck_assert_int_eq(pf_dstar_create(g, (pf_point){0, 0}, (pf_point){1, 1}, &d), PF_OK);
        ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
        ck_assert_double_eq_tol(r.cost, PF_SQRT2, 1e-9);
        ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){1, 0}, 0), PF_OK);
        ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
        ck_assert_double_eq_tol(r.cost, cut ? PF_SQRT2 : 2.0, 1e-9);
        /* A wall on the other route closes the diagonal under both rules. */
        ck_assert_int_eq(pf_dstar_set_wall(d, (pf_point){0, 1}, PF_DIR_E, true), PF_OK);
        ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
        ck_assert_uint_gt(r.path_len, 2);
        /* The base grid is untouched. */
        ck_assert(pf_grid_is_walkable(g, (pf_point){1, 0}));
        ck_assert(!pf_grid_is_wall(g, (pf_point){0, 1}, PF_DIR_E));
        pf_dstar_destroy(d);
        pf_grid_destroy(g);
    }
}
END_TEST

/* Two sessions on one base: a private change is seen by its session only. */
START_TEST(dstar_overlay_is_private) {
    const char *rows[] = {".....", ".###.", "....."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 4);
    pf_dstar *a = NULL, *b = NULL;
    pf_result r;
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){0, 0}, (pf_point){4, 0}, &a), PF_OK);
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){0, 0}, (pf_point){4, 0}, &b), PF_OK);
    ck_assert_int_eq(pf_dstar_set_cost(a, (pf_point){2, 0}, 0), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(a, 0, &r), PF_OK);
    ck_assert_double_eq_tol(r.cost, 8.0, 1e-9);
    ck_assert_int_eq(pf_dstar_plan(b, 0, &r), PF_OK);
    ck_assert_double_eq_tol(r.cost, 4.0, 1e-9);
    pf_dstar_destroy(a);
    pf_dstar_destroy(b);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(dstar_rejects_bad_arguments) {
    const char *rows[] = {"..#", "...", "..."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8), *other = NULL;
    pf_dstar *d = NULL;
    pf_result r;
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){0, 0}, (pf_point){3, 0}, &d), PF_ERANGE);
    ck_assert_ptr_null(d);
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){0, 0}, (pf_point){2, 0}, &d), PF_EBLOCKED);
    const pf_dstar_opts bad_root = {.root = PF_DSTAR_ROOT_AGENT + 1}, neg_root = {.root = -1};
    ck_assert_int_eq(pf_dstar_create_with(g, (pf_point){0, 0}, (pf_point){2, 2}, &bad_root, &d),
                     PF_EINVAL);
    ck_assert_ptr_null(d);
    ck_assert_int_eq(pf_dstar_create_with(g, (pf_point){0, 0}, (pf_point){2, 2}, &neg_root, &d),
                     PF_EINVAL);
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){0, 0}, (pf_point){2, 2}, &d), PF_OK);
    ck_assert_int_eq(pf_dstar_move(d, (pf_point){2, 0}), PF_EBLOCKED);
    ck_assert_int_eq(pf_dstar_move(d, (pf_point){-1, 0}), PF_ERANGE);
    ck_assert(same_point(pf_dstar_position(d), (pf_point){0, 0}));
    ck_assert_int_eq(pf_dstar_set_goal(d, (pf_point){2, 0}), PF_EBLOCKED);
    ck_assert(same_point(pf_dstar_goal(d), (pf_point){2, 2}));
    ck_assert_int_eq(pf_dstar_set_wall(d, (pf_point){0, 0}, PF_DIR_SE, true), PF_EINVAL);
    ck_assert_int_eq(pf_dstar_set_wall(d, (pf_point){0, 0}, PF_DIR_W, true), PF_ERANGE);
    ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){3, 3}, 1), PF_ERANGE);
    ck_assert_int_eq(pf_grid_create(4, 3, NULL, &other), PF_OK);
    ck_assert_int_eq(pf_dstar_rebase(d, other, NULL, 0), PF_EINVAL);
    ck_assert_ptr_eq(pf_dstar_grid(d), g);
    /* Blocking the agent's own cell: nothing to plan from. */
    ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){0, 0}, 0), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_EBLOCKED);
    ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){0, 0}, 1), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_double_eq_tol(r.cost, 2 * PF_SQRT2, 1e-9);
    /* Agent on the goal. */
    ck_assert_int_eq(pf_dstar_move(d, (pf_point){2, 2}), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_uint_eq(r.path_len, 1);
    ck_assert_double_eq(r.cost, 0.0);
    pf_dstar_destroy(d);
    pf_dstar_destroy(NULL);
    pf_grid_destroy(other);
    pf_grid_destroy(g);
}
END_TEST

/* A stop callback that says stop on its `stop_on`th poll of a plan. */
typedef struct stopper {
    int polls, stop_on;
} stopper;

static bool stop_on_nth(void *arg) {
    stopper *sp = arg;
    return ++sp->polls == sp->stop_on;
}

/* pf_dstar_plan_with's stop callback (plan_limits.h), as the server brings
 * a deadline: polled every poll_every expansions, a callback that says stop
 * on its Nth poll stops the plan with PF_ECANCELED after exactly N polls
 * and N x poll_every expansions, and no path. The session keeps its repair:
 * plans stopped the same way again and again end at the cost of an
 * unlimited plan on a fresh session (and the reference's), with as many
 * expansions in all. */
START_TEST(dstar_stop_callback_resumes) {
    enum { N = 3, EVERY = 16 };
    pf_grid *g = NULL;
    pf_dstar *d = NULL, *fresh = NULL;
    pf_result r, rf;
    pf_status st;
    stopper sp = {0, N};
    const pf_plan_limits lim = {0, stop_on_nth, &sp, EVERY};
    const pf_point a = {0, 0}, b = {47, 47};
    uint64_t total = 0;
    int plans = 0;
    /* A serpentine: walls every 6 columns, open at the bottom and the top
     * by turns, so the search has thousands of expansions to do. */
    ck_assert_int_eq(pf_grid_create(48, 48, NULL, &g), PF_OK);
    for (int32_t x = 5; x < 42; x += 6)
        for (int32_t y = 0; y < 47; y++)
            pf_grid_set_cost(g, (pf_point){x, (x / 6) % 2 ? y + 1 : y}, 0);
    ck_assert_int_eq(pf_dstar_create(g, a, b, &fresh), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(fresh, 0, &rf), PF_OK);
    ck_assert_uint_gt(rf.expanded, 4 * N * EVERY);
    ck_assert_int_eq(pf_dstar_create(g, a, b, &d), PF_OK);
    ck_assert_int_eq(pf_dstar_plan_with(d, &lim, &r), PF_ECANCELED);
    ck_assert_int_eq(r.status, PF_ECANCELED);
    ck_assert_int_eq(sp.polls, N);
    ck_assert_uint_le(r.expanded, (uint64_t)N * EVERY);
    ck_assert_uint_eq(r.expanded, (uint64_t)N * EVERY);
    ck_assert_uint_eq(r.path_len, 0);
    total = r.expanded;
    for (;;) {
        sp.polls = 0;
        st = pf_dstar_plan_with(d, &lim, &r);
        total += r.expanded;
        if (st != PF_ECANCELED) break;
        ck_assert_int_eq(sp.polls, N);
        ck_assert_uint_eq(r.expanded, (uint64_t)N * EVERY);
        ck_assert_int_lt(++plans, 10000);
    }
    ck_assert_int_eq(st, PF_OK);
    ck_assert_int_le(sp.polls, N);
    ck_assert_int_gt(plans, 2);
    ck_assert_double_eq(r.cost, rf.cost);
    ck_assert_uint_eq(total, rf.expanded);
    ck_assert_double_eq_tol(r.cost, tu_reference_cost(g, a, b), 1e-6);
    /* A budget is checked before the callback is polled: the budget's
     * PF_EBUDGET with no poll at all when it comes first. */
    pf_dstar_restart(d);
    {
        const pf_plan_limits both = {EVERY - 1, stop_on_nth, &sp, EVERY};
        sp.polls = 0;
        ck_assert_int_eq(pf_dstar_plan_with(d, &both, &r), PF_EBUDGET);
        ck_assert_uint_eq(r.expanded, EVERY - 1);
        ck_assert_int_eq(sp.polls, 0);
    }
    pf_dstar_destroy(fresh);
    pf_dstar_destroy(d);
    pf_grid_destroy(g);
}
END_TEST

/* A tiny budget stops the search with PF_EBUDGET; calling again continues,
 * changes in between included, and ends at the optimum. */
START_TEST(dstar_budget_resumes) {
    pf_grid *g = NULL;
    pf_dstar *d = NULL;
    pf_result r;
    pf_status st;
    uint64_t total = 0;
    int calls = 0;
    ck_assert_int_eq(pf_grid_create(40, 40, NULL, &g), PF_OK);
    for (int y = 0; y < 35; y++) pf_grid_set_cost(g, (pf_point){20, y}, 0);
    pf_grid *eff = pf_grid_clone(g);
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){2, 2}, (pf_point){37, 3}, &d), PF_OK);
    while ((st = pf_dstar_plan(d, 25, &r)) == PF_EBUDGET) {
        ck_assert_uint_eq(r.expanded, 25);
        ck_assert_uint_eq(r.path_len, 0);
        total += r.expanded;
        if (++calls == 3) {
            pf_dstar_set_cost(d, (pf_point){10, 10}, 0);
            pf_grid_set_cost(eff, (pf_point){10, 10}, 0);
        }
        ck_assert_int_lt(calls, 10000);
    }
    ck_assert_int_eq(st, PF_OK);
    ck_assert_int_gt(calls, 3);
    ck_assert_double_eq_tol(r.cost, tu_reference_cost(eff, (pf_point){2, 2}, (pf_point){37, 3}),
                            1e-6);
    (void)total;
    pf_dstar_destroy(d);
    pf_grid_destroy(eff);
    pf_grid_destroy(g);
}
END_TEST

/* Nothing changed: no work. A change the search never touched: no work. */
START_TEST(dstar_unrelated_change_costs_nothing) {
    pf_grid *g = NULL;
    pf_dstar *d = NULL;
    pf_result r;
    ck_assert_int_eq(pf_grid_create(100, 100, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){5, 50}, (pf_point){95, 50}, &d), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_uint_gt(r.expanded, 0);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_uint_eq(r.expanded, 0);
    ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){50, 5}, 0), PF_OK);
    ck_assert_int_eq(pf_dstar_set_wall(d, (pf_point){50, 95}, PF_DIR_N, true), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_uint_eq(r.expanded, 0);
    ck_assert_double_eq_tol(r.cost, 90.0, 1e-9);
    pf_dstar_destroy(d);
    pf_grid_destroy(g);
}
END_TEST

/* Rooms of 11x11 cells joined by doorways two cells wide: closing the
 * doorway the agent is about to take costs a repair less than a fresh A*
 * from the agent's position (the issue's benchmark, in miniature). */
START_TEST(dstar_door_repair_beats_fresh_astar) {
    const int32_t room = 12, n = 8, side = n * room + 1;
    pf_grid *g = NULL;
    pf_dstar *d = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    ck_assert_int_eq(pf_grid_create(side, side, NULL, &g), PF_OK);
    for (int32_t a = 0; a < side; a++)
        for (int32_t k = 0; k <= n; k++) {
            int32_t wline = k * room, off = a % room;
            bool gap = k > 0 && k < n && (off == room / 2 || off == room / 2 + 1);
            if (!gap) {
                pf_grid_set_cost(g, (pf_point){wline, a}, 0);
                pf_grid_set_cost(g, (pf_point){a, wline}, 0);
            }
        }
    pf_grid *eff = pf_grid_clone(g);
    pf_point s = {3, 3}, t = {side - 4, side - 4};
    ck_assert_int_eq(pf_dstar_create(g, s, t, &d), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    /* Walk to just before the first doorway cell on the path. */
    size_t k = 0;
    while (k + 1 < r.path_len && (r.path[k + 1].x % room != 0 && r.path[k + 1].y % room != 0)) k++;
    ck_assert_uint_gt(k, 0);
    pf_point door = r.path[k + 1];
    ck_assert_int_eq(pf_dstar_move(d, r.path[k]), PF_OK);
    /* Close both cells of that doorway. */
    for (int dd = -1; dd <= 1; dd++) {
        pf_point c =
            door.x % room == 0 ? (pf_point){door.x, door.y + dd} : (pf_point){door.x + dd, door.y};
        if (pf_grid_is_walkable(eff, c) && (c.x % room == 0 || c.y % room == 0)) {
            pf_dstar_set_cost(d, c, 0);
            pf_grid_set_cost(eff, c, 0);
        }
    }
    check_plan(d, eff, "door", 1);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_uint_eq(r.expanded, 0); /* check_plan did the repair */
    pf_dstar_destroy(d);
    ck_assert_int_eq(pf_dstar_create(g, s, t, &d), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_int_eq(pf_dstar_move(d, r.path[k]), PF_OK);
    for (int32_t i = 0; i < side * side; i++) {
        pf_point c = {i % side, i / side};
        if (pf_grid_cost(eff, c) != pf_grid_cost(g, c)) pf_dstar_set_cost(d, c, 0);
    }
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    uint64_t repair = r.expanded;
    pf_query q = pf_query_make(r.path[0], t, PF_ALGO_ASTAR);
    pf_result a;
    ck_assert_int_eq(pf_search(ctx, eff, &q, &a), PF_OK);
    ck_assert_double_eq_tol(a.cost, r.cost, 1e-6);
    fprintf(stderr, "dstar_door_repair_beats_fresh_astar: repair %llu, fresh astar %llu\n",
            (unsigned long long)repair, (unsigned long long)a.expanded);
    /* The agent stands at the doorway next to its start room, the worst place
     * for a backward search: the whole start room's g values go stale. The
     * repair still beats a fresh A*; on the shared maps the median repair is
     * a small fraction of it (see the closing note of the branch). */
    ck_assert_uint_lt(repair, a.expanded);
    pf_search_ctx_destroy(ctx);
    pf_dstar_destroy(d);
    pf_grid_destroy(eff);
    pf_grid_destroy(g);
}
END_TEST

/* Memory follows the touched cells: a short plan on a large map holds far
 * less than one byte a cell, and a new goal gives memory back. */
START_TEST(dstar_memory_follows_touched_cells) {
    pf_grid *g = NULL;
    pf_dstar *d = NULL;
    pf_result r;
    ck_assert_int_eq(pf_grid_create(1024, 1024, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){500, 500}, (pf_point){520, 510}, &d), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    size_t small = pf_dstar_memory(d);
    ck_assert_uint_lt(small, 64 * 1024);
    ck_assert_int_eq(pf_dstar_set_goal(d, (pf_point){1000, 20}), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_uint_gt(pf_dstar_memory(d), small);
    ck_assert_int_eq(pf_dstar_set_goal(d, (pf_point){510, 500}), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_uint_le(pf_dstar_memory(d), 2 * small);
    pf_dstar_destroy(d);
    pf_grid_destroy(g);
}
END_TEST

/* The plain store (pf_dstar_opts.plain_store) holds every cell of the map
 * from the first plan on, where the tiles hold only what the search
 * touched, and answers the same: a short plan, a change and a repair, a
 * new goal (the array is dropped and taken again). */
START_TEST(dstar_plain_store_answers_like_tiles) {
    enum { W = 512, H = 512 };
    pf_grid *g = NULL;
    pf_dstar *d = NULL, *ref = NULL;
    const pf_dstar_opts plain = {.plain_store = true};
    pf_result r, rr;
    ck_assert_int_eq(pf_grid_create(W, H, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){200, 200}, (pf_point){230, 215}, &d), PF_OK);
    ck_assert_int_eq(
        pf_dstar_create_with(g, (pf_point){200, 200}, (pf_point){230, 215}, &plain, &ref), PF_OK);
    ck_assert_uint_lt(pf_dstar_memory(ref), 4096);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(ref, 0, &rr), PF_OK);
    check_same(&r, &rr, "plain", 0);
    ck_assert_uint_lt(pf_dstar_memory(d), 64 * 1024);
    ck_assert_uint_ge(pf_dstar_memory(ref), (size_t)W * H * 8);
    pf_point wall = r.path[r.path_len / 2];
    ck_assert_int_eq(pf_dstar_set_cost(d, wall, 0), PF_OK);
    ck_assert_int_eq(pf_dstar_set_cost(ref, wall, 0), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(ref, 0, &rr), PF_OK);
    check_same(&r, &rr, "plain", 1);
    ck_assert_int_eq(pf_dstar_set_goal(d, (pf_point){10, 500}), PF_OK);
    ck_assert_int_eq(pf_dstar_set_goal(ref, (pf_point){10, 500}), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(ref, 0, &rr), PF_OK);
    check_same(&r, &rr, "plain", 2);
    ck_assert_double_eq_tol(r.cost, tu_reference_cost(g, (pf_point){200, 200}, (pf_point){10, 500}),
                            1e-6 * r.cost);
    pf_dstar_destroy(ref);
    pf_dstar_destroy(d);
    pf_grid_destroy(g);
}
END_TEST

/* Walls take no vertex memory: a comb (every odd column a wall below row 0)
 * whose goal side the search exhausts holds well under what the same
 * exhaustive search holds on the open grid, although both touch every tile
 * (storing the walls, they held the same). Opening a wall cell inside a
 * stored tile, privately and then through a rebase, makes that tile store
 * it, and the plans stay optimal. */
START_TEST(dstar_walls_take_no_memory) {
    enum { W = 256, H = 256 };
    pf_grid *g = NULL, *open = NULL, *g2 = NULL, *eff = NULL;
    pf_dstar *d = NULL;
    pf_result r;
    /* The open grid, the agent walled in at the bottom right. */
    ck_assert_int_eq(pf_grid_create(W, H, NULL, &open), PF_OK);
    const pf_point fence[] = {
        {W - 3, H - 2}, {W - 2, H - 2}, {W - 1, H - 2}, {W - 3, H - 1}, {W - 1, H - 1}};
    for (size_t i = 0; i < sizeof(fence) / sizeof(fence[0]); i++)
        ck_assert_int_eq(pf_grid_set_cost(open, fence[i], 0), PF_OK);
    ck_assert_int_eq(pf_dstar_create(open, (pf_point){W - 2, H - 1}, (pf_point){0, 0}, &d), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_NO_PATH);
    ck_assert_uint_gt(r.expanded, W * H - 8);
    size_t open_bytes = pf_dstar_memory(d);
    pf_dstar_destroy(d);
    ck_assert_int_eq(pf_grid_create(W, H, NULL, &g), PF_OK);
    for (int32_t x = 1; x < W; x += 2)
        for (int32_t y = 1; y < H; y++)
            ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){x, y}, 0), PF_OK);
    /* The agent's cell at the bottom of the last open column is cut off. */
    ck_assert_int_eq(pf_grid_set_cost(g, (pf_point){W - 2, H - 2}, 0), PF_OK);
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){W - 2, H - 1}, (pf_point){0, 0}, &d), PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_NO_PATH);
    ck_assert_uint_gt(r.expanded, W * H / 2 - H);
    ck_assert_msg(pf_dstar_memory(d) < open_bytes * 3 / 4, "comb %zu bytes, open grid %zu",
                  pf_dstar_memory(d), open_bytes);
    /* Open a wall between columns 0 and 2, and the agent's cell. */
    ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){1, 5}, 1), PF_OK);
    ck_assert_int_eq(pf_dstar_set_cost(d, (pf_point){W - 2, H - 2}, 1), PF_OK);
    eff = pf_grid_clone(g);
    ck_assert_ptr_nonnull(eff);
    ck_assert_int_eq(pf_grid_set_cost(eff, (pf_point){1, 5}, 1), PF_OK);
    ck_assert_int_eq(pf_grid_set_cost(eff, (pf_point){W - 2, H - 2}, 1), PF_OK);
    check_plan(d, eff, "private opening", 0);
    ck_assert_int_eq(pf_dstar_move(d, (pf_point){2, 9}), PF_OK);
    check_plan(d, eff, "private opening", 1);
    /* A rebase opens (3, 7), next to the agent's column: shorter. */
    g2 = pf_grid_clone(g);
    ck_assert_ptr_nonnull(g2);
    ck_assert_int_eq(pf_grid_set_cost(g2, (pf_point){3, 7}, 1), PF_OK);
    ck_assert_int_eq(pf_grid_set_cost(eff, (pf_point){3, 7}, 1), PF_OK);
    ck_assert_int_eq(pf_dstar_move(d, (pf_point){4, 9}), PF_OK);
    ck_assert_int_eq(pf_dstar_rebase(d, g2, (pf_point[]){{3, 7}}, 1), PF_OK);
    check_plan(d, eff, "rebase opening", 2);
    pf_dstar_destroy(d);
    pf_grid_destroy(eff);
    pf_grid_destroy(g2);
    pf_grid_destroy(g);
    pf_grid_destroy(open);
}
END_TEST

/* A private cost cheaper than every base cost lowers the heuristic's scale:
 * the session searches anew and stays optimal. */
START_TEST(dstar_cheaper_private_cost_stays_optimal) {
    const char *rows[] = {"5555555", "5555555", "5555555"};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8);
    pf_grid *eff = pf_grid_clone(g);
    pf_dstar *d = NULL;
    ck_assert_int_eq(pf_dstar_create(g, (pf_point){0, 0}, (pf_point){6, 0}, &d), PF_OK);
    check_plan(d, eff, "cheap", 0);
    for (int x = 0; x < 7; x++) {
        pf_dstar_set_cost(d, (pf_point){x, 2}, 1);
        pf_grid_set_cost(eff, (pf_point){x, 2}, 1);
    }
    check_plan(d, eff, "cheap", 1);
    pf_dstar_destroy(d);
    pf_grid_destroy(eff);
    pf_grid_destroy(g);
}
END_TEST

/* A world change through the planner reaches the session with the changed
 * list pf_planner_apply reports. */
START_TEST(dstar_rebase_from_planner_apply) {
    const char *rows[] = {"..........", "..........", "..........", ".........."};
    pf_grid *g = tu_grid_from_ascii(rows, 4, 8);
    pf_planner *p = NULL, *p2 = NULL;
    pf_point door[] = {{5, 0}, {5, 1}, {5, 2}};
    int32_t di;
    ck_assert_int_eq(pf_grid_add_door(g, "gate", door, 3, NULL, 0, true, &di), PF_OK);
    ck_assert_int_eq(pf_planner_create(g, NULL, &p), PF_OK);
    pf_dstar *d = NULL;
    pf_result r;
    ck_assert_int_eq(pf_dstar_create(pf_planner_grid(p), (pf_point){0, 0}, (pf_point){9, 0}, &d),
                     PF_OK);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_double_eq_tol(r.cost, 9.0, 1e-9);
    pf_door_change dc = {di, false};
    pf_point *changed = NULL;
    size_t n = 0;
    ck_assert_int_eq(pf_planner_apply(p, NULL, 0, &dc, 1, NULL, &p2, &changed, &n), PF_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(pf_dstar_rebase(d, pf_planner_grid(p2), changed, n), PF_OK);
    pf_planner_destroy(p);
    check_plan(d, pf_planner_grid(p2), "rebase", 0);
    ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
    ck_assert_double_eq_tol(r.cost, 3.0 + 6 * PF_SQRT2, 1e-9);
    free(changed);
    pf_dstar_destroy(d);
    pf_planner_destroy(p2);
}
END_TEST

/* Perfect mazes: blocking a cell ahead on the path cuts the goal off. With
 * the base's cut vertices the session says so without expanding anything,
 * where a session without them raises everything behind the cut; reopening
 * the cell then finds the old path at once. A world change (rebase) that
 * blocks the path is answered from the new base's components. A private
 * opening that bypasses the blocked cell turns the shortcut off. */
START_TEST(dstar_cut_off_goal_answers_without_search) {
    uint64_t st = tu_seed("dstar_cut_off_goal_answers_without_search", 0xc07);
    int tried = 0;
    for (int mi = 0; mi < 40; mi++) {
        pf_grid *g = tu_perfect_maze(&st, 16, 16, 8, false);
        pf_cuts *cuts = NULL;
        pf_dstar *a = NULL, *b = NULL;
        pf_point s, t;
        pf_result r, rb;
        tu_random_walkable(&st, g, &s);
        tu_random_walkable(&st, g, &t);
        ck_assert_int_eq(pf_cuts_build(g, NULL, &cuts), PF_OK);
        ck_assert_int_eq(pf_dstar_create(g, s, t, &a), PF_OK);
        ck_assert_int_eq(pf_dstar_create(g, s, t, &b), PF_OK);
        pf_dstar_set_cuts(a, cuts);
        ck_assert_int_eq(pf_dstar_plan(a, 0, &r), PF_OK);
        double cost0 = r.cost;
        if (r.path_len < 12) goto next;
        tried++;
        pf_point agent = r.path[2], cell = r.path[r.path_len / 2];
        ck_assert_int_eq(pf_dstar_plan(b, 0, &rb), PF_OK);
        for (int k = 0; k < 2; k++) {
            pf_dstar *d = k ? b : a;
            ck_assert_int_eq(pf_dstar_move(d, agent), PF_OK);
            ck_assert_int_eq(pf_dstar_set_cost(d, cell, 0), PF_OK);
        }
        ck_assert_int_eq(pf_dstar_plan(a, 0, &r), PF_NO_PATH);
        ck_assert_uint_eq(r.expanded, 0);
        ck_assert_int_eq(pf_dstar_plan(b, 0, &rb), PF_NO_PATH);
        ck_assert_uint_gt(rb.expanded, 0);
        /* Reopened: the deferred repair cancels out. */
        ck_assert_int_eq(pf_dstar_set_cost(a, cell, 1), PF_OK);
        ck_assert_int_eq(pf_dstar_plan(a, 0, &r), PF_OK);
        ck_assert_double_eq_tol(r.cost, tu_reference_cost(g, agent, t), 1e-6);
        ck_assert_double_lt(r.cost, cost0);

        /* The same cell blocked by the world. */
        pf_grid *g2 = pf_grid_clone(g);
        pf_cuts *cuts2 = NULL;
        ck_assert_ptr_nonnull(g2);
        pf_grid_set_cost(g2, cell, 0);
        ck_assert_int_eq(pf_dstar_rebase(a, g2, &cell, 1), PF_OK);
        ck_assert_int_eq(pf_cuts_build(g2, NULL, &cuts2), PF_OK);
        pf_dstar_set_cuts(a, cuts2);
        /* The overlay pins the cell at cost 1, so it stays open... */
        ck_assert_int_eq(pf_dstar_plan(a, 0, &r), PF_OK);
        /* ...and that opening turns the shortcut off: the search finds the
         * cell the private change opened. */
        ck_assert_uint_gt(pf_grid_walkable_count(g), pf_grid_walkable_count(g2));
        pf_dstar_destroy(a);
        ck_assert_int_eq(pf_dstar_create(g2, agent, t, &a), PF_OK);
        pf_dstar_set_cuts(a, cuts2);
        ck_assert_int_eq(pf_dstar_plan(a, 0, &r), PF_NO_PATH);
        ck_assert_uint_eq(r.expanded, 0);
        pf_cuts_destroy(cuts2);
        pf_grid_destroy(g2);
    next:
        pf_dstar_destroy(a);
        pf_dstar_destroy(b);
        pf_cuts_destroy(cuts);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(tried, 20);
}
END_TEST

/* The property test. The test keeps its own record of the session's overlay
 * and rebuilds the effective grid (base clone + overlay) after each update,
 * independently of dstar.c's overlay. */
typedef struct model {
    int16_t *cost; /* overlay cost per cell, -1 = none */
    int8_t *wall;  /* overlay wall per cell and dir (4 a cell), -1 = none */
} model;

static pf_grid *effective(const pf_grid *base, const model *m) {
    pf_grid *e = pf_grid_clone(base);
    int32_t w = pf_grid_width(base), h = pf_grid_height(base);
    ck_assert_ptr_nonnull(e);
    for (int32_t i = 0; i < w * h; i++) {
        pf_point p = {i % w, i / w};
        if (m->cost[i] >= 0) pf_grid_set_cost(e, p, (uint8_t)m->cost[i]);
        for (int dir = 0; dir < 4; dir++)
            if (m->wall[i * 4 + dir] >= 0) pf_grid_set_wall(e, p, dir, m->wall[i * 4 + dir] == 1);
    }
    return e;
}

static pf_point random_cell(uint64_t *st, const pf_grid *g) {
    pf_point p = {(int32_t)tu_below(st, (uint32_t)pf_grid_width(g)),
                  (int32_t)tu_below(st, (uint32_t)pf_grid_height(g))};
    return p;
}

/* A random cell near p (within 3), clamped to the map: changes near the
 * agent and its path exercise the repair more than changes anywhere. */
static pf_point near_cell(uint64_t *st, const pf_grid *g, pf_point p) {
    pf_point q = {p.x + (int32_t)tu_below(st, 7) - 3, p.y + (int32_t)tu_below(st, 7) - 3};
    if (q.x < 0) q.x = 0;
    if (q.y < 0) q.y = 0;
    if (q.x >= pf_grid_width(g)) q.x = pf_grid_width(g) - 1;
    if (q.y >= pf_grid_height(g)) q.y = pf_grid_height(g) - 1;
    return q;
}

static uint8_t random_cost(uint64_t *st, bool costs, int scale) {
    if (tu_below(st, 3) == 0) return 0;
    return costs ? (uint8_t)((1 + tu_below(st, 9)) * (uint32_t)scale) : 1;
}

START_TEST(dstar_property_random_updates) {
    uint64_t st = tu_seed("dstar_property_random_updates", 0xd57a2002);
    const int maps = 3000, updates = 20;
    uint64_t checks = 0;
    for (int mi = 0; mi < maps; mi++) {
        tu_map_opts o = {2, (mi % 8 == 0) ? 48 : 24, 0.35, mi % 2 == 0, mi % 3 == 0, 0, -1};
        /* Odd maps give the session the base's cut vertices, so cut-off
         * goals are answered without a search (and the repair waits);
         * one map in eight is then a perfect maze, where most changes on
         * the path cut the goal off. */
        bool use_cuts = mi % 2 == 1;
        pf_grid *base = mi % 8 == 7
                            ? tu_perfect_maze(&st, 1 + (int32_t)tu_below(&st, 12),
                                              1 + (int32_t)tu_below(&st, 12),
                                              tu_below(&st, 2) ? 8 : 4, tu_below(&st, 4) == 0)
                            : tu_random_grid(&st, &o);
        pf_cuts *cuts = NULL;
        int32_t w = pf_grid_width(base), h = pf_grid_height(base);
        bool costs = o.random_costs;
        int scale = 1;
        if (mi % 5 == 1) {
            /* Base costs 2..10: a private cost of 1 lowers the heuristic scale. */
            for (int32_t i = 0; i < w * h; i++) {
                pf_point p = {i % w, i / w};
                uint8_t c = pf_grid_cost(base, p);
                if (c) pf_grid_set_cost(base, p, (uint8_t)(c + 1));
            }
            costs = true;
        } else if (mi % 5 == 3) {
            /* Costs 25..250: a step spans more than a vertex tile's 2^31
             * window of exact g values (128 steps of cost 1, see
             * dstar_tiles.h),
             * so many cells keep their g in the wide side table. */
            scale = 25;
            for (int32_t i = 0; i < w * h; i++) {
                pf_point p = {i % w, i / w};
                uint8_t c = pf_grid_cost(base, p);
                if (c) pf_grid_set_cost(base, p, (uint8_t)(c > 10 ? 250 : c * 25));
            }
            costs = true;
        }
        pf_point s, t;
        if (!tu_random_walkable(&st, base, &s)) {
            pf_grid_destroy(base);
            continue;
        }
        tu_random_walkable(&st, base, &t);
        model m;
        m.cost = malloc((size_t)w * h * sizeof(*m.cost));
        m.wall = malloc((size_t)w * h * 4);
        ck_assert(m.cost && m.wall);
        for (int32_t i = 0; i < w * h; i++) m.cost[i] = -1;
        memset(m.wall, -1, (size_t)w * h * 4);

        /* d is the session under test, ref its twin on the plain vertex
         * store: every call goes to both, and every plan must answer the
         * same on both (check_same). */
        pf_dstar *d = NULL, *ref = NULL;
        const pf_dstar_opts plain = {.plain_store = true};
        char what[64];
        snprintf(what, sizeof(what), "map %d (%dx%d, %d-conn%s)", mi, w, h,
                 pf_grid_connectivity(base), pf_grid_corner_cutting(base) ? ", cut" : "");
        ck_assert_int_eq(pf_dstar_create(base, s, t, &d), PF_OK);
        ck_assert_int_eq(pf_dstar_create_with(base, s, t, &plain, &ref), PF_OK);
        if (use_cuts) {
            ck_assert_int_eq(pf_cuts_build(base, NULL, &cuts), PF_OK);
            pf_dstar_set_cuts(d, cuts);
            pf_dstar_set_cuts(ref, cuts);
        }
        pf_grid *eff = effective(base, &m);
        check_plan_twin(d, ref, eff, what, 0, 0);
        checks++;
        for (int u = 1; u <= updates; u++) {
            uint32_t op = tu_below(&st, 100);
            pf_point agent = pf_dstar_position(d);
            if (op < 30) {
                /* Private cell changes, mostly near the agent. */
                int k = 1 + (int)tu_below(&st, 3);
                for (int i = 0; i < k; i++) {
                    pf_point p =
                        tu_below(&st, 2) ? near_cell(&st, base, agent) : random_cell(&st, base);
                    uint8_t c = random_cost(&st, costs, scale);
                    ck_assert_int_eq(pf_dstar_set_cost(d, p, c), PF_OK);
                    ck_assert_int_eq(pf_dstar_set_cost(ref, p, c), PF_OK);
                    m.cost[p.y * w + p.x] = c;
                }
            } else if (op < 45) {
                /* Private wall edges, blocked or opened. */
                pf_point p =
                    tu_below(&st, 2) ? near_cell(&st, base, agent) : random_cell(&st, base);
                int dir = (int)tu_below(&st, 4);
                bool blocked = tu_below(&st, 3) != 0;
                pf_point q = {p.x + pf_dir_dx[dir], p.y + pf_dir_dy[dir]};
                pf_status ws = pf_dstar_set_wall(d, p, dir, blocked);
                ck_assert_int_eq(pf_dstar_set_wall(ref, p, dir, blocked), ws);
                if (!pf_grid_in_bounds(base, q)) {
                    ck_assert_int_eq(ws, PF_ERANGE);
                } else {
                    static const int opp[4] = {PF_DIR_W, PF_DIR_E, PF_DIR_N, PF_DIR_S};
                    ck_assert_int_eq(ws, PF_OK);
                    m.wall[(p.y * w + p.x) * 4 + dir] = blocked;
                    m.wall[(q.y * w + q.x) * 4 + opp[dir]] = blocked;
                }
            } else if (op < 70) {
                /* The agent walks a few steps of its current path, or jumps. */
                pf_result r;
                pf_status ps = plan_both(d, ref, 0, &r, what, u);
                if (ps == PF_OK && r.path_len > 1) {
                    size_t k = 1 + tu_below(&st, 4);
                    if (k >= r.path_len) k = r.path_len - 1;
                    ck_assert_int_eq(pf_dstar_move(d, r.path[k]), PF_OK);
                    ck_assert_int_eq(pf_dstar_move(ref, r.path[k]), PF_OK);
                } else {
                    pf_point p;
                    if (tu_random_walkable(&st, eff, &p)) {
                        ck_assert_int_eq(pf_dstar_move(d, p), PF_OK);
                        ck_assert_int_eq(pf_dstar_move(ref, p), PF_OK);
                    }
                }
            } else if (op < 78) {
                pf_point p;
                if (tu_random_walkable(&st, eff, &p)) {
                    ck_assert_int_eq(pf_dstar_set_goal(d, p), PF_OK);
                    ck_assert_int_eq(pf_dstar_set_goal(ref, p), PF_OK);
                }
            } else {
                /* A world change: a new base version with a few cell and
                 * wall changes, announced with the list of changed cells. */
                pf_grid *nb = pf_grid_clone(base);
                pf_point changed[16];
                size_t n = 0;
                ck_assert_ptr_nonnull(nb);
                int k = 1 + (int)tu_below(&st, 4);
                for (int i = 0; i < k; i++) {
                    pf_point p =
                        tu_below(&st, 2) ? near_cell(&st, base, agent) : random_cell(&st, base);
                    if (tu_below(&st, 4) == 0) {
                        int dir = (int)tu_below(&st, 4);
                        pf_point q = {p.x + pf_dir_dx[dir], p.y + pf_dir_dy[dir]};
                        if (!pf_grid_in_bounds(base, q)) continue;
                        pf_grid_set_wall(nb, p, dir, !pf_grid_is_wall(nb, p, dir));
                        changed[n++] = p;
                        changed[n++] = q;
                    } else {
                        pf_grid_set_cost(nb, p, random_cost(&st, costs, scale));
                        changed[n++] = p;
                    }
                }
                if (tu_below(&st, 4) == 0) {
                    /* Announced without its list (a session further
                     * behind than the change log): the overlay stays, the
                     * next plan searches anew. */
                    ck_assert_int_eq(pf_dstar_rebase_all(d, nb), PF_OK);
                    ck_assert_int_eq(pf_dstar_rebase_all(ref, nb), PF_OK);
                } else {
                    ck_assert_int_eq(pf_dstar_rebase(d, nb, changed, n), PF_OK);
                    ck_assert_int_eq(pf_dstar_rebase(ref, nb, changed, n), PF_OK);
                }
                ck_assert_ptr_eq(pf_dstar_grid(d), nb);
                if (use_cuts) {
                    pf_cuts_destroy(cuts);
                    ck_assert_int_eq(pf_cuts_build(nb, NULL, &cuts), PF_OK);
                    pf_dstar_set_cuts(d, cuts);
                    pf_dstar_set_cuts(ref, cuts);
                }
                pf_grid_destroy(base);
                base = nb;
            }
            pf_grid_destroy(eff);
            eff = effective(base, &m);
            snprintf(what, sizeof(what), "map %d op %u", mi, op);
            /* The session reads back the map it searches: every cell's
             * cost and walls as the model says (base, then overlay). */
            for (int32_t i = 0; i < w * h; i += 1 + (int32_t)tu_below(&st, 5)) {
                pf_point p = {i % w, i / w};
                ck_assert_int_eq(pf_dstar_cost(d, p), pf_grid_cost(eff, p));
                for (int dir = 0; dir < 4; dir++)
                    ck_assert_int_eq(pf_dstar_is_wall(d, p, dir), pf_grid_is_wall(eff, p, dir));
            }
            if (tu_below(&st, 16) == 0) {
                /* Searches anew, the overlay kept: the same optimum. */
                pf_dstar_restart(d);
                pf_dstar_restart(ref);
            }
            /* One plan in eight runs on a small budget, in many calls. */
            check_plan_twin(d, ref, eff, what, u,
                            tu_below(&st, 8) == 0 ? 1 + tu_below(&st, 40) : 0);
            checks++;
        }
        pf_grid_destroy(eff);
        pf_dstar_destroy(d);
        pf_dstar_destroy(ref);
        pf_cuts_destroy(cuts);
        pf_grid_destroy(base);
        free(m.cost);
        free(m.wall);
    }
    ck_assert_uint_gt(checks, (uint64_t)maps * updates / 2);
}
END_TEST

/* Moving targets: a chase. Every frame the target walks (a random allowed
 * step on the effective map; now and then a jump), the agent takes a step
 * or two along its plan (now and then a jump), and between frames come
 * private cells, private door toggles (a door's cells and wall edge closed
 * or opened at once, as a session's update applies them), and world
 * changes (a new base version with a door toggled or cells changed,
 * announced with its changed cells). After every frame the plan must cost
 * what the reference Dijkstra says on the effective grid (the base under
 * the test's own record of the overlay), and a twin session on the plain
 * vertex store must answer exactly alike. Each orientation runs: rooted at
 * the goal (a goal move re-roots), at the agent (an agent move re-roots),
 * and the automatic switch between them; half the cases have the cut
 * vertices, and a third re-root at every move (pf_dstar_opts.reroot_always)
 * instead of only when the path no longer runs through the moved end. */
typedef struct tdoor {
    pf_point cells[3];
    uint8_t open_cost[3];
    int ncells;
    pf_edge edge;
    bool has_edge, open;
} tdoor;

/* A door of up to three cells in a row from a random walkable cell, with
 * the wall edge below its first cell when that is on the map. */
static void random_door(uint64_t *st, const pf_grid *g, tdoor *dr) {
    pf_point p;
    memset(dr, 0, sizeof(*dr));
    dr->open = true;
    if (!tu_random_walkable(st, g, &p)) return;
    bool across = tu_below(st, 2);
    for (int i = 0; i < 3; i++) {
        pf_point c = {p.x + (across ? i : 0), p.y + (across ? 0 : i)};
        if (!pf_grid_in_bounds(g, c)) break;
        uint8_t cost = pf_grid_cost(g, c);
        dr->cells[dr->ncells] = c;
        dr->open_cost[dr->ncells++] = cost ? cost : 1;
    }
    dr->edge.a = p;
    dr->edge.dir = across ? PF_DIR_S : PF_DIR_E;
    dr->has_edge = pf_grid_in_bounds(
        g, (pf_point){p.x + pf_dir_dx[dr->edge.dir], p.y + pf_dir_dy[dr->edge.dir]});
}

/* Toggles door dr in the session's private view of d and its twin (and in
 * the test's record m). */
static void toggle_private_door(pf_dstar *d, pf_dstar *twin, tdoor *dr, model *m, int32_t w) {
    static const int opp[4] = {PF_DIR_W, PF_DIR_E, PF_DIR_N, PF_DIR_S};
    dr->open = !dr->open;
    for (int i = 0; i < dr->ncells; i++) {
        uint8_t c = dr->open ? dr->open_cost[i] : 0;
        ck_assert_int_eq(pf_dstar_set_cost(d, dr->cells[i], c), PF_OK);
        ck_assert_int_eq(pf_dstar_set_cost(twin, dr->cells[i], c), PF_OK);
        m->cost[dr->cells[i].y * w + dr->cells[i].x] = c;
    }
    if (dr->has_edge) {
        pf_point a = dr->edge.a, b = {a.x + pf_dir_dx[dr->edge.dir], a.y + pf_dir_dy[dr->edge.dir]};
        ck_assert_int_eq(pf_dstar_set_wall(d, a, dr->edge.dir, !dr->open), PF_OK);
        ck_assert_int_eq(pf_dstar_set_wall(twin, a, dr->edge.dir, !dr->open), PF_OK);
        m->wall[(a.y * w + a.x) * 4 + dr->edge.dir] = !dr->open;
        m->wall[(b.y * w + b.x) * 4 + opp[dr->edge.dir]] = !dr->open;
    }
}

/* A random step from p allowed on eff (p itself when none is). */
static pf_point random_step(uint64_t *st, const pf_grid *eff, pf_point p) {
    for (int tries = 0; tries < 16; tries++) {
        int k = (int)tu_below(st, 8);
        int dx = pf_dir_dx[k], dy = pf_dir_dy[k];
        if (tu_reference_can_step(eff, p, dx, dy)) return (pf_point){p.x + dx, p.y + dy};
    }
    return p;
}

START_TEST(dstar_property_moving_targets) {
    uint64_t st = tu_seed("dstar_property_moving_targets", 0x3707d2010);
    const int cases = 2400, frames = 30;
    static const int roots[3] = {PF_DSTAR_ROOT_AUTO, PF_DSTAR_ROOT_GOAL, PF_DSTAR_ROOT_AGENT};
    uint64_t checks = 0, rerooted[3] = {0}, deferred[3] = {0}, anew[3] = {0}, deleted = 0;
    for (int ci = 0; ci < cases; ci++) {
        const int root = roots[ci % 3];
        tu_map_opts o = {4, (ci % 8 == 0) ? 48 : 24, 0.3, ci % 2 == 0, ci % 5 == 0, 0, -1};
        bool use_cuts = (ci / 3) % 2 == 1;
        pf_grid *base = ci % 9 == 8 ? tu_perfect_maze(&st, 2 + (int32_t)tu_below(&st, 10),
                                                      2 + (int32_t)tu_below(&st, 10),
                                                      tu_below(&st, 2) ? 8 : 4, false)
                                    : tu_random_grid(&st, &o);
        int32_t w = pf_grid_width(base), h = pf_grid_height(base);
        pf_point s, t;
        if (!tu_random_walkable(&st, base, &s)) {
            pf_grid_destroy(base);
            continue;
        }
        tu_random_walkable(&st, base, &t);
        model m;
        m.cost = malloc((size_t)w * h * sizeof(*m.cost));
        m.wall = malloc((size_t)w * h * 4);
        ck_assert(m.cost && m.wall);
        for (int32_t i = 0; i < w * h; i++) m.cost[i] = -1;
        memset(m.wall, -1, (size_t)w * h * 4);
        tdoor priv, world;
        random_door(&st, base, &priv);
        random_door(&st, base, &world);

        pf_dstar *d = NULL, *twin = NULL;
        /* One case in three re-roots at every move (MT-D* Lite as
         * published), the others only when the path needs it. */
        const bool eager = (ci / 6) % 3 == 2;
        const pf_dstar_opts to = {.root = root, .reroot_always = eager},
                            po = {.plain_store = true, .root = root, .reroot_always = eager};
        pf_cuts *cuts = NULL;
        char what[96];
        ck_assert_int_eq(pf_dstar_create_with(base, s, t, &to, &d), PF_OK);
        ck_assert_int_eq(pf_dstar_create_with(base, s, t, &po, &twin), PF_OK);
        if (use_cuts) {
            ck_assert_int_eq(pf_cuts_build(base, NULL, &cuts), PF_OK);
            pf_dstar_set_cuts(d, cuts);
            pf_dstar_set_cuts(twin, cuts);
        }
        pf_grid *eff = effective(base, &m);
        snprintf(what, sizeof(what), "case %d root %d (%dx%d)", ci, root, w, h);
        check_plan_twin(d, twin, eff, what, 0, 0);
        for (int f = 1; f <= frames; f++) {
            uint32_t op = tu_below(&st, 100);
            pf_point agent = pf_dstar_position(d);
            if (op < 8) {
                int k = 1 + (int)tu_below(&st, 2);
                for (int i = 0; i < k; i++) {
                    pf_point p =
                        tu_below(&st, 2) ? near_cell(&st, base, agent) : random_cell(&st, base);
                    uint8_t c = random_cost(&st, o.random_costs, 1);
                    ck_assert_int_eq(pf_dstar_set_cost(d, p, c), PF_OK);
                    ck_assert_int_eq(pf_dstar_set_cost(twin, p, c), PF_OK);
                    m.cost[p.y * w + p.x] = c;
                }
            } else if (op < 14) {
                toggle_private_door(d, twin, &priv, &m, w);
            } else if (op < 20) {
                /* A world change: the world door toggled, or a few cells. */
                pf_grid *nb = pf_grid_clone(base);
                pf_point changed[16];
                size_t n = 0;
                ck_assert_ptr_nonnull(nb);
                if (tu_below(&st, 2)) {
                    world.open = !world.open;
                    for (int i = 0; i < world.ncells; i++) {
                        pf_grid_set_cost(nb, world.cells[i], world.open ? world.open_cost[i] : 0);
                        changed[n++] = world.cells[i];
                    }
                    if (world.has_edge) {
                        pf_point a = world.edge.a;
                        pf_grid_set_wall(nb, a, world.edge.dir, !world.open);
                        changed[n++] = a;
                        changed[n++] = (pf_point){a.x + pf_dir_dx[world.edge.dir],
                                                  a.y + pf_dir_dy[world.edge.dir]};
                    }
                } else {
                    for (int i = 0; i < 3; i++) {
                        pf_point p = near_cell(&st, base, tu_below(&st, 2) ? agent : t);
                        pf_grid_set_cost(nb, p, random_cost(&st, o.random_costs, 1));
                        changed[n++] = p;
                    }
                }
                ck_assert_int_eq(pf_dstar_rebase(d, nb, changed, n), PF_OK);
                ck_assert_int_eq(pf_dstar_rebase(twin, nb, changed, n), PF_OK);
                if (use_cuts) {
                    pf_cuts_destroy(cuts);
                    ck_assert_int_eq(pf_cuts_build(nb, NULL, &cuts), PF_OK);
                    pf_dstar_set_cuts(d, cuts);
                    pf_dstar_set_cuts(twin, cuts);
                }
                pf_grid_destroy(base);
                base = nb;
            }
            pf_grid_destroy(eff);
            eff = effective(base, &m);
            /* The target walks (and jumps one frame in twenty). */
            pf_point nt = tu_below(&st, 20) ? random_step(&st, eff, t) : t;
            if (nt.x == t.x && nt.y == t.y) tu_random_walkable(&st, eff, &nt);
            if (pf_grid_is_walkable(eff, nt)) {
                ck_assert_int_eq(pf_dstar_set_goal(d, nt), PF_OK);
                ck_assert_int_eq(pf_dstar_set_goal(twin, nt), PF_OK);
                t = nt;
            }
            /* The agent follows its plan one or two steps (or jumps). */
            if (tu_below(&st, 16)) {
                pf_result r;
                pf_status ps = plan_both(d, twin, 0, &r, what, f);
                if (ps == PF_OK && r.path_len > 1) {
                    size_t k = 1 + tu_below(&st, 2);
                    if (k >= r.path_len) k = r.path_len - 1;
                    ck_assert_int_eq(pf_dstar_move(d, r.path[k]), PF_OK);
                    ck_assert_int_eq(pf_dstar_move(twin, r.path[k]), PF_OK);
                }
            } else {
                pf_point p;
                if (tu_random_walkable(&st, eff, &p)) {
                    ck_assert_int_eq(pf_dstar_move(d, p), PF_OK);
                    ck_assert_int_eq(pf_dstar_move(twin, p), PF_OK);
                }
            }
            snprintf(what, sizeof(what), "case %d root %d frame %d op %u", ci, root, f, op);
            check_plan_twin(d, twin, eff, what, f,
                            tu_below(&st, 10) == 0 ? 1 + tu_below(&st, 30) : 0);
            pf_dstar_plan_info info;
            pf_dstar_last_plan(d, &info);
            rerooted[ci % 3] += info.rerooted;
            deferred[ci % 3] += info.deferred;
            anew[ci % 3] += info.anew;
            deleted += info.deleted;
            checks++;
        }
        pf_grid_destroy(eff);
        pf_dstar_destroy(d);
        pf_dstar_destroy(twin);
        pf_cuts_destroy(cuts);
        pf_grid_destroy(base);
        free(m.cost);
        free(m.wall);
    }
    fprintf(stderr,
            "dstar_property_moving_targets: %llu checks; (auto, goal, agent) re-rooted %llu %llu "
            "%llu, deferred %llu %llu %llu, anew %llu %llu %llu; %llu vertices reset\n",
            (unsigned long long)checks, (unsigned long long)rerooted[0],
            (unsigned long long)rerooted[1], (unsigned long long)rerooted[2],
            (unsigned long long)deferred[0], (unsigned long long)deferred[1],
            (unsigned long long)deferred[2], (unsigned long long)anew[0],
            (unsigned long long)anew[1], (unsigned long long)anew[2], (unsigned long long)deleted);
    ck_assert_uint_gt(checks, (uint64_t)cases * frames / 2);
    /* Every orientation re-rooted and deferred re-roots, many times. Rooted
     * at the agent (and in the automatic mode, which turns to it in a
     * chase) the root's end moved far more often without a search anew
     * than with one; rooted at the goal, a goal stepping away from the
     * agent lands outside the settled tree and the plan searches anew. */
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_gt(rerooted[i], 100);
        ck_assert_uint_gt(deferred[i], 100);
    }
    ck_assert_uint_gt(rerooted[0] + deferred[0], 3 * anew[0]);
    ck_assert_uint_gt(rerooted[2] + deferred[2], 3 * anew[2]);
}
END_TEST

/* A chase on an open 128x128 grid with scattered walls, 150 frames: the
 * target walks at random, the agent takes one step of its plan every third
 * frame (so it stays far behind). Rooted at
 * the agent, no plan after the first searches anew, and all plans together
 * expand under a tenth of what planning anew on every frame expands (a
 * fresh session per frame, side by side); the automatic root turns to the
 * agent after the second goal move (one more search anew). Rooted at the
 * goal, goal moves away from the agent search anew. Every answer costs what
 * the fresh search's does. */
START_TEST(dstar_goal_moves_reuse_the_search) {
    static const int roots[3] = {PF_DSTAR_ROOT_AGENT, PF_DSTAR_ROOT_AUTO, PF_DSTAR_ROOT_GOAL};
    uint64_t inc[3] = {0}, fresh[3] = {0}, anew[3] = {0};
    const uint64_t seed = tu_seed("dstar_goal_moves_reuse_the_search", 0x3a7e);
    for (int ri = 0; ri < 3; ri++) {
        uint64_t st = seed; /* the same map and walk for each root */
        tu_map_opts o = {128, 128, 0.15, false, false, 8, 0};
        pf_grid *g = tu_random_grid(&st, &o);
        pf_point a, t;
        pf_dstar *d = NULL;
        const pf_dstar_opts opts = {.root = roots[ri]};
        ck_assert(tu_random_walkable(&st, g, &a));
        do {
            tu_random_walkable(&st, g, &t);
        } while (tu_reference_cost(g, a, t) < 60);
        ck_assert_int_eq(pf_dstar_create_with(g, a, t, &opts, &d), PF_OK);
        for (int f = 0; f < 150; f++) {
            pf_result r, rf;
            pf_dstar *fd = NULL;
            pf_dstar_plan_info info;
            t = random_step(&st, g, t);
            ck_assert_int_eq(pf_dstar_set_goal(d, t), PF_OK);
            ck_assert_int_eq(pf_dstar_move(d, a), PF_OK);
            pf_status ps = pf_dstar_plan(d, 0, &r);
            pf_dstar_last_plan(d, &info);
            ck_assert_int_eq(pf_dstar_create(g, a, t, &fd), PF_OK);
            ck_assert_int_eq(pf_dstar_plan(fd, 0, &rf), ps);
            if (ps == PF_OK) ck_assert_double_eq_tol(r.cost, rf.cost, 1e-9 * (1 + rf.cost));
            inc[ri] += r.expanded;
            fresh[ri] += rf.expanded;
            anew[ri] += info.anew && f > 0;
            if (ps == PF_OK && r.path_len > 1 && f % 3 == 0) a = r.path[1];
            pf_dstar_destroy(fd);
        }
        pf_dstar_destroy(d);
        pf_grid_destroy(g);
    }
    fprintf(stderr,
            "dstar_goal_moves_reuse_the_search: expanded (agent, auto, goal) %llu %llu %llu, "
            "fresh %llu %llu %llu, anew after the first %llu %llu %llu\n",
            (unsigned long long)inc[0], (unsigned long long)inc[1], (unsigned long long)inc[2],
            (unsigned long long)fresh[0], (unsigned long long)fresh[1],
            (unsigned long long)fresh[2], (unsigned long long)anew[0], (unsigned long long)anew[1],
            (unsigned long long)anew[2]);
    ck_assert_uint_eq(anew[0], 0);
    ck_assert_uint_eq(anew[1], 1);
    ck_assert_uint_gt(anew[2], 10);
    ck_assert_uint_lt(10 * inc[0], fresh[0]);
    ck_assert_uint_lt(10 * inc[1], fresh[1]);
}
END_TEST

/* A perfect maze with the cut vertices: the agent's own private wall cuts
 * the goal off; while the goal wanders on the far side every plan answers
 * "no path" without expanding, whichever root; once it comes round to the
 * agent's side the plan is found, optimal. */
START_TEST(dstar_cut_off_goal_keeps_moving) {
    uint64_t st = tu_seed("dstar_cut_off_goal_keeps_moving", 0xc0ff);
    static const int roots[3] = {PF_DSTAR_ROOT_AUTO, PF_DSTAR_ROOT_GOAL, PF_DSTAR_ROOT_AGENT};
    int tried = 0;
    for (int mi = 0; mi < 60; mi++) {
        pf_grid *g = tu_perfect_maze(&st, 12, 12, 8, false);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        pf_cuts *cuts = NULL;
        pf_dstar *d = NULL;
        const pf_dstar_opts opts = {.root = roots[mi % 3]};
        pf_point s, t;
        pf_result r;
        bool *seen = malloc((size_t)w * h * sizeof(*seen));
        ck_assert_ptr_nonnull(seen);
        tu_random_walkable(&st, g, &s);
        tu_random_walkable(&st, g, &t);
        ck_assert_int_eq(pf_cuts_build(g, NULL, &cuts), PF_OK);
        ck_assert_int_eq(pf_dstar_create_with(g, s, t, &opts, &d), PF_OK);
        pf_dstar_set_cuts(d, cuts);
        ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
        if (r.path_len < 10) goto next;
        tried++;
        pf_point cut = r.path[r.path_len / 2];
        pf_grid *eff = pf_grid_clone(g);
        pf_grid_set_cost(eff, cut, 0);
        ck_assert_int_eq(pf_dstar_set_cost(d, cut, 0), PF_OK);
        tu_reference_reach(eff, s, -1, seen);
        int far = 0, near = 0;
        for (int f = 0; f < 40 && near == 0; f++) {
            pf_point nt = random_step(&st, eff, t);
            if (f == 39) /* come round to the agent's side */
                for (int32_t i = 0; i < w * h; i++)
                    if (seen[i]) nt = (pf_point){i % w, i / w};
            t = nt;
            ck_assert_int_eq(pf_dstar_set_goal(d, t), PF_OK);
            pf_status ps = pf_dstar_plan(d, 0, &r);
            if (!seen[t.y * w + t.x]) {
                ck_assert_int_eq(ps, PF_NO_PATH);
                ck_assert_uint_eq(r.expanded, 0);
                far++;
            } else {
                ck_assert_int_eq(ps, PF_OK);
                ck_assert_double_eq_tol(r.cost, tu_reference_cost(eff, s, t), 1e-6);
                near++;
            }
        }
        ck_assert_int_gt(far, 0);
        ck_assert_int_eq(near, 1);
        pf_grid_destroy(eff);
    next:
        free(seen);
        pf_dstar_destroy(d);
        pf_cuts_destroy(cuts);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(tried, 20);
}
END_TEST

/* Agent sizes: a session of an n x n agent plans on the planner's agent
 * grid of size n (as the server's sessions do). Chases of agents of sizes
 * 2 and 3 on random maps, every orientation: every plan costs what the
 * reference Dijkstra over the reference footprint rule (refsearch.h) says,
 * and its path passes the independent footprint check. */
START_TEST(dstar_chase_agent_sizes) {
    uint64_t st = tu_seed("dstar_chase_agent_sizes", 0xa9e);
    static const int roots[3] = {PF_DSTAR_ROOT_AUTO, PF_DSTAR_ROOT_GOAL, PF_DSTAR_ROOT_AGENT};
    long checked = 0;
    for (int m = 0; m < 120; m++) {
        tu_map_opts o = {8, 32, 0.25, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g0 = tu_random_grid(&st, &o);
        pf_planner *p = NULL;
        pf_planner_opts po;
        memset(&po, 0, sizeof(po));
        ck_assert_int_eq(pf_planner_create(g0, &po, &p), PF_OK);
        const pf_grid *base = pf_planner_grid(p), *ag = NULL;
        int32_t n = 2 + m % 2, w = pf_grid_width(base);
        ck_assert_int_eq(pf_planner_agent_grid(p, n, NULL, &ag), PF_OK);
        double *dist = malloc((size_t)w * pf_grid_height(base) * sizeof(*dist));
        ck_assert_ptr_nonnull(dist);
        pf_point s = {0, 0}, t = {0, 0};
        int k;
        for (k = 0; k < 200 && !ref_agent_fits(base, s, n); k++) tu_random_walkable(&st, base, &s);
        for (k = 0; k < 200 && !ref_agent_fits(base, t, n); k++) tu_random_walkable(&st, base, &t);
        if (!ref_agent_fits(base, s, n) || !ref_agent_fits(base, t, n)) goto next;
        const pf_dstar_opts opts = {.root = roots[m % 3]};
        pf_dstar *d = NULL;
        ck_assert_int_eq(pf_dstar_create_with(ag, s, t, &opts, &d), PF_OK);
        for (int f = 0; f < 25; f++) {
            for (int tries = 0; tries < 8; tries++) {
                int dir = (int)tu_below(&st, 8);
                if (ref_agent_step(base, n, t, pf_dir_dx[dir], pf_dir_dy[dir], NULL)) {
                    t = (pf_point){t.x + pf_dir_dx[dir], t.y + pf_dir_dy[dir]};
                    break;
                }
            }
            ck_assert_int_eq(pf_dstar_set_goal(d, t), PF_OK);
            ck_assert_int_eq(pf_dstar_move(d, s), PF_OK);
            pf_result r;
            pf_status ps = pf_dstar_plan(d, 0, &r);
            ref_dists(base, n, &s, 1, false, dist);
            double want = dist[t.y * w + t.x];
            if (isinf(want)) {
                ck_assert_int_eq(ps, PF_NO_PATH);
                continue;
            }
            ck_assert_msg(ps == PF_OK, "map %d size %d frame %d: %s", m, n, f, pf_status_str(ps));
            double c;
            ck_assert_int_eq(ref_agent_path_check(base, n, r.path, r.path_len, &c), -1);
            ck_assert_msg(ref_close(c, want) && ref_close(r.cost, want),
                          "map %d size %d frame %d: cost %.9f, path %.9f, reference %.9f", m, n, f,
                          r.cost, c, want);
            checked++;
            if (r.path_len > 1) s = r.path[1 + tu_below(&st, (uint32_t)(r.path_len > 2 ? 2 : 1))];
        }
        pf_dstar_destroy(d);
    next:
        free(dist);
        pf_planner_destroy(p);
    }
    ck_assert_int_gt(checked, 1000);
}
END_TEST

/* Chases on Moving AI maps (a city, a game map, a maze with corridors 8
 * wide), every orientation: chasers start at scenario starts, targets at
 * their goals and walk at random; after every frame the plan costs what
 * the reference Dijkstra says and is a valid path. */
START_TEST(dstar_chase_on_movingai_maps) {
    static const char *const files[] = {"Boston_0_512.map.scen", "den520d.map.scen",
                                        "maze512-8-0.map.scen"};
    static const int roots[3] = {PF_DSTAR_ROOT_AUTO, PF_DSTAR_ROOT_GOAL, PF_DSTAR_ROOT_AGENT};
    const char *dir;
    uint64_t st = tu_seed("dstar_chase_on_movingai_maps", 0x5ca1e);
    long checked = 0;
    TU_NEED_BENCH_DIR(dir);
    for (size_t fi = 0; fi < sizeof(files) / sizeof(files[0]); fi++) {
        pf_scen sc;
        pf_grid *g = tu_load_scen(dir, files[fi], &sc);
        for (int c = 0; c < 3; c++) {
            /* Entries from the second half of the file: longer chases. */
            const pf_scen_entry *e =
                &sc.entries[sc.count / 2 + tu_below(&st, (uint32_t)(sc.count / 2))];
            pf_point a = e->start, t = e->goal;
            const pf_dstar_opts opts = {.root = roots[c]};
            pf_dstar *d = NULL;
            char what[96];
            ck_assert_int_eq(pf_dstar_create_with(g, a, t, &opts, &d), PF_OK);
            for (int f = 0; f < 40; f++) {
                t = random_step(&st, g, t);
                ck_assert_int_eq(pf_dstar_set_goal(d, t), PF_OK);
                ck_assert_int_eq(pf_dstar_move(d, a), PF_OK);
                snprintf(what, sizeof(what), "%s root %d frame", files[fi], roots[c]);
                check_plan(d, g, what, f);
                pf_result r;
                ck_assert_int_eq(pf_dstar_plan(d, 0, &r), PF_OK);
                if (r.path_len > 1) a = r.path[1];
                checked++;
            }
            pf_dstar_destroy(d);
        }
        pf_scen_free(&sc);
        pf_grid_destroy(g);
    }
    ck_assert_int_eq(checked, 360);
}
END_TEST

TU_SUITE(dstar) {
    Suite *s = suite_create("dstar");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, dstar_textbook_door_closes_and_opens);
    tcase_add_test(tc, dstar_corner_rule_follows_private_cells);
    tcase_add_test(tc, dstar_overlay_is_private);
    tcase_add_test(tc, dstar_rejects_bad_arguments);
    tcase_add_test(tc, dstar_budget_resumes);
    tcase_add_test(tc, dstar_stop_callback_resumes);
    tcase_add_test(tc, dstar_unrelated_change_costs_nothing);
    tcase_add_test(tc, dstar_door_repair_beats_fresh_astar);
    tcase_add_test(tc, dstar_memory_follows_touched_cells);
    tcase_add_test(tc, dstar_plain_store_answers_like_tiles);
    tcase_add_test(tc, dstar_walls_take_no_memory);
    tcase_add_test(tc, dstar_cheaper_private_cost_stays_optimal);
    tcase_add_test(tc, dstar_rebase_from_planner_apply);
    tcase_add_test(tc, dstar_cut_off_goal_answers_without_search);

    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("slow");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, dstar_property_random_updates);
    tcase_add_test(slow, dstar_property_moving_targets);
    tcase_add_test(slow, dstar_chase_on_movingai_maps);
    tcase_add_test(slow, dstar_goal_moves_reuse_the_search);
    tcase_add_test(slow, dstar_cut_off_goal_keeps_moving);
    tcase_add_test(slow, dstar_chase_agent_sizes);
    suite_add_tcase(s, slow);
    return s;
}
