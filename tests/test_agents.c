/* test_agents.c -- agent sizes through the planner: astar, dijkstra, bfs,
 * jps (falls back), auto and hpa (a hierarchy per size) against the reference
 * footprint rule and Dijkstra of refsearch.c on random maps; lazy builds
 * from several threads; repairs through pf_planner_apply equal to fresh
 * planners; Moving AI maps. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "planner.h"
#include "refsearch.h"
#include "testutil.h"

static pf_planner *make_planner(pf_grid *g, bool hpa, int32_t cs) {
    pf_planner_opts po;
    pf_planner *p = NULL;
    memset(&po, 0, sizeof(po));
    po.build_hpa = hpa;
    po.cluster_size = cs;
    ck_assert_int_eq(pf_planner_create(g, &po, &p), PF_OK);
    return p;
}

static pf_status run(pf_search_ctx *ctx, const pf_planner *p, pf_point s, pf_point t,
                     pf_algorithm a, int32_t n, pf_result *r) {
    pf_query q = pf_query_make(s, t, a);
    q.agent_size = n;
    return pf_planner_search(ctx, p, &q, r);
}

/* A random anchor where an agent of side n fits (by the reference rule). */
static bool random_fit(uint64_t *st, const pf_grid *g, int32_t n, pf_point *p) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    for (int k = 0; k < 200; k++) {
        p->x = (int32_t)tu_below(st, (uint32_t)w);
        p->y = (int32_t)tu_below(st, (uint32_t)h);
        if (ref_agent_fits(g, *p, n)) return true;
    }
    return false;
}

/* A found path: from s to t, passes the footprint check, cost reported
 * exactly. Returns its cost. */
static double check_path(const pf_grid *g, int32_t n, const pf_result *r, pf_point s, pf_point t) {
    double c = 0;
    long bad = ref_agent_path_check(g, n, r->path, r->path_len, &c);
    ck_assert_msg(bad < 0, "size %d: footprint check fails at %ld of %zu", n, bad, r->path_len);
    ck_assert(r->path[0].x == s.x && r->path[0].y == s.y);
    ck_assert(r->path[r->path_len - 1].x == t.x && r->path[r->path_len - 1].y == t.y);
    ck_assert_msg(ref_close(c, r->cost), "path cost %.9f, reported %.9f", c, r->cost);
    return c;
}

/* The troll and the door: a one-cell door in the upper wall, a two-cell
 * gap at the right end of the lower one. The one-cell agent goes through
 * the door; the 2x2 troll cannot, but passes the gap. */
START_TEST(agents_textbook_troll_and_door) {
    const char *rows[] = {"..........", "..........", "#####.####", "..........", "..........",
                          "..........", "########..", "..........", ".........."};
    pf_grid *g = tu_grid_from_ascii(rows, 9, 8);
    pf_planner *p = make_planner(g, true, 4);
    pf_search_ctx *ctx = pf_search_ctx_create();
    const pf_grid *base = pf_planner_grid(p);
    pf_point s = {4, 0}, t = {4, 4};
    pf_result r;
    ck_assert_int_eq(run(ctx, p, s, t, PF_ALGO_ASTAR, 1, &r), PF_OK);
    ck_assert_double_eq_tol(r.cost, tu_reference_cost(base, s, t), 1e-9);
    ck_assert_int_eq(run(ctx, p, s, t, PF_ALGO_ASTAR, 2, &r), PF_NO_PATH);
    ck_assert_int_eq(run(ctx, p, s, t, PF_ALGO_DIJKSTRA, 2, &r), PF_NO_PATH);
    ck_assert_int_eq(run(ctx, p, s, t, PF_ALGO_HPA, 2, &r), PF_NO_PATH);
    pf_point s2 = {0, 3}, t2 = {0, 7};
    for (int a = 0; a < 2; a++) {
        ck_assert_int_eq(run(ctx, p, s2, t2, a ? PF_ALGO_HPA : PF_ALGO_ASTAR, 2, &r), PF_OK);
        check_path(base, 2, &r, s2, t2);
        bool gap = false;
        for (size_t i = 0; i < r.path_len; i++) gap |= r.path[i].x == 8 && r.path[i].y == 6;
        ck_assert(gap);
    }
    /* Where the troll does not fit: its square would cover a wall cell. */
    ck_assert_int_eq(run(ctx, p, s2, (pf_point){5, 5}, PF_ALGO_ASTAR, 2, &r), PF_EBLOCKED);
    pf_planner_destroy(p);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Sizes past core's cap, dstar, and jps falling back to astar. */
START_TEST(agents_limits_and_fallbacks) {
    pf_grid *g = NULL;
    ck_assert_int_eq(pf_grid_create(20, 20, NULL, &g), PF_OK);
    pf_planner *p = make_planner(g, false, 0);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_result r;
    const pf_grid *ag;
    ck_assert_int_eq(
        run(ctx, p, (pf_point){0, 0}, (pf_point){5, 5}, PF_ALGO_ASTAR, PF_AGENT_SIZE_MAX + 1, &r),
        PF_ELIMIT);
    ck_assert_int_eq(pf_planner_agent_grid(p, 0, NULL, &ag), PF_ELIMIT);
    ck_assert_int_eq(pf_planner_agent_grid(p, 1, NULL, &ag), PF_OK);
    ck_assert_ptr_eq(ag, pf_planner_grid(p));
    ck_assert_int_eq(run(ctx, p, (pf_point){0, 0}, (pf_point){5, 5}, PF_ALGO_JPS, 3, &r), PF_OK);
    ck_assert_int_eq(r.algorithm, PF_ALGO_ASTAR);
    ck_assert_double_eq_tol(r.cost, 5 * sqrt(2.0), 1e-9);
    ck_assert_int_eq(run(ctx, p, (pf_point){0, 0}, (pf_point){5, 5}, PF_ALGO_HPA, 3, &r),
                     PF_EUNSUPPORTED); /* no hierarchy on this planner */
    ck_assert_int_eq(run(ctx, p, (pf_point){0, 0}, (pf_point){5, 5}, PF_ALGO_DSTAR, 3, &r),
                     PF_EUNSUPPORTED);
    /* The agent's square must lie on the map. */
    ck_assert_int_eq(run(ctx, p, (pf_point){18, 0}, (pf_point){5, 5}, PF_ALGO_ASTAR, 3, &r),
                     PF_EBLOCKED);
    ck_assert_int_eq(run(ctx, p, (pf_point){20, 0}, (pf_point){5, 5}, PF_ALGO_ASTAR, 3, &r),
                     PF_ERANGE);
    /* pf_search itself serves one-cell agents only. */
    pf_query q = pf_query_make((pf_point){0, 0}, (pf_point){5, 5}, PF_ALGO_ASTAR);
    q.agent_size = 2;
    ck_assert_int_eq(pf_search(ctx, pf_planner_grid(p), &q, &r), PF_EUNSUPPORTED);
    pf_planner_destroy(p);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Random maps, sizes 1..4: astar, dijkstra and jps are optimal for the
 * size (reference Dijkstra over the reference footprint rule), bfs and hpa
 * find a path exactly when one exists; every path passes the independent
 * footprint check. */
START_TEST(agents_property_random_maps) {
    uint64_t st = tu_seed("agents_property_random_maps", 0xa6e70001);
    pf_search_ctx *ctx = pf_search_ctx_create();
    long checked = 0;
    for (int m = 0; m < 160; m++) {
        tu_map_opts o = {6, 36, 0.3, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        pf_planner *p = make_planner(g, true, 4 + (int32_t)tu_below(&st, 6));
        const pf_grid *base = pf_planner_grid(p);
        size_t cells = (size_t)pf_grid_width(base) * pf_grid_height(base);
        double *dist = malloc(cells * sizeof(*dist));
        ck_assert_ptr_nonnull(dist);
        for (int32_t n = 1; n <= 4; n++) {
            for (int k = 0; k < 6; k++) {
                pf_point s, t;
                if (!random_fit(&st, base, n, &s) || !random_fit(&st, base, n, &t)) break;
                ref_dists(base, n, &s, 1, false, dist);
                double want = dist[t.y * pf_grid_width(base) + t.x];
                static const pf_algorithm algos[] = {PF_ALGO_ASTAR, PF_ALGO_DIJKSTRA, PF_ALGO_JPS,
                                                     PF_ALGO_BFS,   PF_ALGO_HPA,      PF_ALGO_AUTO};
                for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
                    pf_result r;
                    pf_status rs = run(ctx, p, s, t, algos[a], n, &r);
                    if (isinf(want)) {
                        ck_assert_msg(rs == PF_NO_PATH, "map %d size %d %s: status %d, no path", m,
                                      n, pf_algorithm_name(algos[a]), rs);
                        continue;
                    }
                    ck_assert_msg(rs == PF_OK, "map %d size %d %s: status %d", m, n,
                                  pf_algorithm_name(algos[a]), rs);
                    double c = check_path(base, n, &r, s, t);
                    /* auto says what ran: never jps for an agent */
                    if (algos[a] == PF_ALGO_AUTO && n > 1) ck_assert(r.algorithm != PF_ALGO_JPS);
                    if (algos[a] == PF_ALGO_BFS || r.algorithm == PF_ALGO_HPA)
                        ck_assert(c >= want - 1e-9 * (1 + want));
                    else
                        ck_assert_msg(ref_close(c, want), "map %d size %d %s: cost %.9f, want %.9f",
                                      m, n, pf_algorithm_name(algos[a]), c, want);
                    checked++;
                }
            }
        }
        free(dist);
        pf_planner_destroy(p);
    }
    ck_assert_int_gt(checked, 2000);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Searches of sizes 2 and 3 (grid and hierarchy) on version 1, then map
 * changes through pf_planner_apply: version 2 has the pieces repaired (not
 * rebuilt on first use), and its answers are those of a fresh planner of
 * the same grid, hpa included (a repaired hierarchy is the rebuilt one). */
START_TEST(agents_repair_through_planner_apply) {
    uint64_t st = tu_seed("agents_repair_through_planner_apply", 0xa6e70002);
    pf_search_ctx *ctx = pf_search_ctx_create();
    for (int m = 0; m < 60; m++) {
        tu_map_opts o = {10, 48, 0.2, m % 2 == 0, m % 3 == 0, 0, -1};
        pf_grid *g = tu_random_grid(&st, &o);
        int32_t cs = 4 + (int32_t)tu_below(&st, 8);
        pf_planner *p = make_planner(g, true, cs);
        pf_result r;
        for (int32_t n = 2; n <= 3; n++) {
            const pf_hpa *h;
            ck_assert_int_eq(pf_agents_hpa(pf_planner_agents(p), n, NULL, &h), PF_OK);
        }
        for (int round = 0; round < 3; round++) {
            const pf_grid *base = pf_planner_grid(p);
            int32_t w = pf_grid_width(base), hh = pf_grid_height(base);
            pf_cell_change ch[10];
            size_t nc = 1 + tu_below(&st, 10);
            for (size_t i = 0; i < nc; i++) {
                ch[i].p.x = (int32_t)tu_below(&st, (uint32_t)w);
                ch[i].p.y = (int32_t)tu_below(&st, (uint32_t)hh);
                ch[i].cost = tu_below(&st, 2) ? 0 : (uint8_t)(1 + tu_below(&st, 4));
            }
            pf_planner *p2 = NULL;
            ck_assert_int_eq(pf_planner_apply(p, ch, nc, NULL, 0, NULL, &p2, NULL, NULL), PF_OK);
            pf_agents_class_stats cls[4];
            ck_assert_uint_eq(pf_agents_stats(pf_planner_agents(p2), cls, 4), 2);
            ck_assert(cls[0].size == 2 && cls[0].has_hpa && cls[1].size == 3 && cls[1].has_hpa);
            pf_grid *copy = pf_grid_clone(pf_planner_grid(p2));
            pf_planner *fresh = make_planner(copy, true, cs);
            for (int k = 0; k < 8; k++) {
                int32_t n = 2 + (int32_t)tu_below(&st, 2);
                pf_point s, t;
                const pf_grid *b2 = pf_planner_grid(p2);
                if (!random_fit(&st, b2, n, &s) || !random_fit(&st, b2, n, &t)) break;
                for (int a = 0; a < 2; a++) {
                    pf_algorithm al = a ? PF_ALGO_HPA : PF_ALGO_ASTAR;
                    pf_status s1 = run(ctx, p2, s, t, al, n, &r);
                    double c1 = r.cost;
                    if (s1 == PF_OK) check_path(b2, n, &r, s, t);
                    pf_status s2 = run(ctx, fresh, s, t, al, n, &r);
                    ck_assert_int_eq(s1, s2);
                    ck_assert_msg(c1 == r.cost, "map %d round %d size %d %s: %.9f vs fresh %.9f", m,
                                  round, n, pf_algorithm_name(al), c1, r.cost);
                }
            }
            pf_planner_destroy(fresh);
            pf_planner_destroy(p);
            p = p2;
        }
        pf_planner_destroy(p);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

typedef struct lazy_arg {
    const pf_planner *p;
    const pf_grid *grid[4];
    const pf_hpa *hpa[4];
    int ok;
} lazy_arg;

static void *lazy_worker(void *ud) {
    lazy_arg *a = ud;
    pf_search_ctx *ctx = pf_search_ctx_create();
    a->ok = ctx != NULL;
    for (int32_t n = 2; n <= 3 && a->ok; n++) {
        pf_result r;
        a->ok &= pf_planner_agent_grid(a->p, n, NULL, &a->grid[n]) == PF_OK;
        a->ok &= pf_agents_hpa(pf_planner_agents(a->p), n, NULL, &a->hpa[n]) == PF_OK;
        a->ok &= run(ctx, a->p, (pf_point){0, 0}, (pf_point){40, 40}, PF_ALGO_HPA, n, &r) == PF_OK;
    }
    pf_search_ctx_destroy(ctx);
    return NULL;
}

/* Four threads ask one fresh planner for the same sizes at once: all get
 * the same published pieces (a losing build is freed; ASan sees leaks). */
START_TEST(agents_lazy_build_from_threads) {
    pf_grid *g = NULL;
    ck_assert_int_eq(pf_grid_create(64, 64, NULL, &g), PF_OK);
    pf_planner *p = make_planner(g, true, 0);
    lazy_arg args[4];
    pthread_t th[4];
    memset(args, 0, sizeof(args));
    for (int i = 0; i < 4; i++) {
        args[i].p = p;
        ck_assert_int_eq(pthread_create(&th[i], NULL, lazy_worker, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        ck_assert(args[i].ok);
        for (int n = 2; n <= 3; n++) {
            ck_assert_ptr_eq(args[i].grid[n], args[0].grid[n]);
            ck_assert_ptr_eq(args[i].hpa[n], args[0].hpa[n]);
        }
    }
    ck_assert_uint_gt(pf_agents_memory(pf_planner_agents(p)), 2 * 64 * 64);
    pf_planner_destroy(p);
}
END_TEST

/* Two Moving AI maps, sizes 2 and 3: astar against the reference Dijkstra,
 * hpa against astar, auto as the map's choice says (astar for jps), every
 * path through the footprint check. */
START_TEST(agents_movingai_maps) {
    const char *dir;
    static const char *const maps[] = {"den520d.map", "8room_000.map"};
    uint64_t st = tu_seed("agents_movingai_maps", 0xa6e70003);
    TU_NEED_BENCH_DIR(dir);
    pf_search_ctx *ctx = pf_search_ctx_create();
    for (size_t mi = 0; mi < 2; mi++) {
        pf_grid *g = tu_load_map(dir, maps[mi]);
        ck_assert_msg(g != NULL, "cannot load %s", maps[mi]);
        pf_planner *p = make_planner(g, true, 0);
        const pf_grid *base = pf_planner_grid(p);
        size_t cells = (size_t)pf_grid_width(base) * pf_grid_height(base);
        double *dist = malloc(cells * sizeof(*dist));
        for (int32_t n = 2; n <= 3; n++) {
            pf_point s, t;
            ck_assert(random_fit(&st, base, n, &s));
            ref_dists(base, n, &s, 1, false, dist);
            for (int k = 0; k < 4; k++) {
                pf_result r;
                ck_assert(random_fit(&st, base, n, &t));
                double want = dist[t.y * pf_grid_width(base) + t.x];
                pf_status rs = run(ctx, p, s, t, PF_ALGO_ASTAR, n, &r);
                ck_assert_int_eq(rs, isinf(want) ? PF_NO_PATH : PF_OK);
                if (rs != PF_OK) continue;
                ck_assert(ref_close(check_path(base, n, &r, s, t), want));
                ck_assert_int_eq(run(ctx, p, s, t, PF_ALGO_HPA, n, &r), PF_OK);
                ck_assert(check_path(base, n, &r, s, t) >= want - 1e-6);
                /* auto: the map's choice, astar for jps; exact unless hpa ran */
                ck_assert_int_eq(run(ctx, p, s, t, PF_ALGO_AUTO, n, &r), PF_OK);
                ck_assert(r.algorithm == PF_ALGO_ASTAR || r.algorithm == PF_ALGO_HPA);
                ck_assert_int_eq(r.algorithm, pf_planner_auto_pick(p, s, t) == PF_ALGO_HPA
                                                  ? PF_ALGO_HPA
                                                  : PF_ALGO_ASTAR);
                if (r.algorithm == PF_ALGO_ASTAR)
                    ck_assert(ref_close(check_path(base, n, &r, s, t), want));
                else
                    ck_assert(check_path(base, n, &r, s, t) >= want - 1e-6);
            }
        }
        free(dist);
        pf_planner_destroy(p);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(agents) {
    Suite *s = suite_create("agents");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, agents_textbook_troll_and_door);
    tcase_add_test(tc, agents_limits_and_fallbacks);
    tcase_add_test(tc, agents_lazy_build_from_threads);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("property");
    tcase_set_timeout(slow, 900);
    tcase_add_test(slow, agents_property_random_maps);
    tcase_add_test(slow, agents_repair_through_planner_apply);
    tcase_add_test(slow, agents_movingai_maps);
    suite_add_tcase(s, slow);
    return s;
}
