/* test_table.c -- distance tables against the reference Dijkstra: every
 * entry of forward, backward and automatic tables is the optimum (costs
 * make the two directions differ), paths read back are valid and cost what
 * the table says; agent sizes; bad input. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuts.h"
#include "planner.h"
#include "refsearch.h"
#include "table.h"
#include "testutil.h"

/* The 3x3 patch with mud in the middle, 4-connected: entering the mud
 * costs 5, leaving it 1, so a -> mud and mud -> a differ. */
START_TEST(table_textbook_asymmetric) {
    const char *rows[] = {"...", ".5.", "..."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 4);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point pts[2] = {{0, 1}, {1, 1}};
    double c[4];
    pf_table_stats ts;
    for (int d = 0; d < 3; d++) {
        ck_assert_int_eq(
            pf_table_compute(ctx, g, pts, 2, pts, 2, (pf_table_direction)d, NULL, NULL, c, &ts),
            PF_OK);
        ck_assert_double_eq(c[0], 0.0);
        ck_assert_double_eq_tol(c[1], 5.0, 1e-12); /* (0,1) -> mud */
        ck_assert_double_eq_tol(c[2], 1.0, 1e-12); /* mud -> (0,1) */
        ck_assert_double_eq(c[3], 0.0);
        ck_assert_uint_eq(ts.searches, 2);
        ck_assert_int_eq(ts.backward, d == PF_TABLE_BACKWARD);
    }
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(table_rejects_bad_input) {
    const char *rows[] = {"..#", "..#"};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 8);
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point ok[2] = {{0, 0}, {1, 1}}, bad[3] = {{0, 0}, {2, 1}, {5, 5}};
    double c[6];
    pf_table_stats ts;
    const pf_point *path;
    size_t len;
    ck_assert_int_eq(pf_table_compute(ctx, g, ok, 0, ok, 2, PF_TABLE_AUTO, NULL, NULL, c, &ts),
                     PF_EINVAL);
    ck_assert_int_eq(pf_table_compute(ctx, g, ok, 2, bad, 3, PF_TABLE_AUTO, NULL, NULL, c, &ts),
                     PF_EBLOCKED);
    ck_assert_int_eq(ts.bad_target, 1);
    ck_assert_int_eq(ts.bad_source, -1);
    ck_assert_int_eq(pf_table_compute(ctx, g, bad + 2, 1, ok, 2, PF_TABLE_AUTO, NULL, NULL, c, &ts),
                     PF_ERANGE);
    ck_assert_int_eq(ts.bad_source, 0);
    ck_assert_int_eq(pf_table_path(ctx, g, ok[1], &path, &len), PF_EINVAL); /* no search yet */
    ck_assert_int_eq(pf_table_search(ctx, g, ok[0], ok + 1, 1, false, NULL, NULL, c, NULL), PF_OK);
    ck_assert_int_eq(pf_table_path(ctx, g, ok[1], &path, &len), PF_OK);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(pf_table_path(ctx, g, (pf_point){2, 0}, &path, &len), PF_NO_PATH);
    ck_assert_int_eq(pf_table_path(ctx, g, (pf_point){3, 0}, &path, &len), PF_EINVAL);
    pf_search_ctx_destroy(ctx);
    pf_grid_destroy(g);
}
END_TEST

/* Random maps with costs: every entry equals the reference in all three
 * directions; the paths of one row per table are read back and checked. */
START_TEST(table_property_random_maps) {
    uint64_t st = tu_seed("table_property_random_maps", 0x7ab10001);
    pf_search_ctx *ctx = pf_search_ctx_create();
    long entries = 0;
    for (int m = 0; m < 300; m++) {
        tu_map_opts o = {2, 30, 0.3, m % 3 != 0, m % 4 == 0, 0, -1};
        pf_grid *g0 = tu_random_grid(&st, &o);
        pf_planner_opts po;
        pf_planner *p = NULL;
        memset(&po, 0, sizeof(po));
        ck_assert_int_eq(pf_planner_create(g0, &po, &p), PF_OK);
        const pf_grid *base = pf_planner_grid(p), *g;
        int32_t n = m % 5 == 4 ? 2 : 1, w = pf_grid_width(base);
        ck_assert_int_eq(pf_planner_agent_grid(p, n, NULL, &g), PF_OK);
        pf_point src[8], tgt[8];
        size_t ns = 1 + tu_below(&st, 8), nt = 1 + tu_below(&st, 8);
        if (pf_grid_walkable_count(g) == 0) {
            pf_planner_destroy(p);
            continue;
        }
        for (size_t i = 0; i < ns; i++) tu_random_walkable(&st, g, &src[i]);
        for (size_t j = 0; j < nt; j++) tu_random_walkable(&st, g, &tgt[j]);
        double *ref = malloc(ns * nt * sizeof(*ref));
        double *dist = malloc((size_t)w * pf_grid_height(g) * sizeof(*dist));
        double c[64];
        for (size_t i = 0; i < ns; i++) {
            ref_dists(base, n, &src[i], 1, false, dist);
            for (size_t j = 0; j < nt; j++) ref[i * nt + j] = dist[tgt[j].y * w + tgt[j].x];
        }
        for (int d = 0; d < 3; d++) {
            pf_table_stats ts;
            ck_assert_int_eq(pf_table_compute(ctx, g, src, ns, tgt, nt, (pf_table_direction)d, NULL,
                                              NULL, c, &ts),
                             PF_OK);
            for (size_t k = 0; k < ns * nt; k++)
                ck_assert_msg(ref_close(c[k], ref[k]), "map %d dir %d entry %zu: %.9f vs %.9f", m,
                              d, k, c[k], ref[k]);
            entries += (long)(ns * nt);
        }
        /* Paths: a forward row from source 0 and a backward column to
         * target 0, each path checked against the map and the table. */
        for (int back = 0; back < 2; back++) {
            pf_point origin = back ? tgt[0] : src[0];
            const pf_point *others = back ? src : tgt;
            size_t no = back ? ns : nt;
            double row[8];
            ck_assert_int_eq(
                pf_table_search(ctx, g, origin, others, no, back, NULL, NULL, row, NULL), PF_OK);
            for (size_t k = 0; k < no; k++) {
                const pf_point *path;
                size_t len;
                pf_status ps = pf_table_path(ctx, g, others[k], &path, &len);
                double pc;
                if (isinf(row[k])) {
                    ck_assert_int_eq(ps, PF_NO_PATH);
                    continue;
                }
                ck_assert_int_eq(ps, PF_OK);
                pf_point first = back ? others[k] : origin, last = back ? origin : others[k];
                ck_assert(path[0].x == first.x && path[0].y == first.y);
                ck_assert(path[len - 1].x == last.x && path[len - 1].y == last.y);
                ck_assert_int_eq(ref_agent_path_check(base, n, path, len, &pc), -1);
                ck_assert(ref_close(pc, row[k]));
            }
        }
        free(ref);
        free(dist);
        pf_planner_destroy(p);
    }
    ck_assert_int_gt(entries, 10000);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Tables with the components (pf_table_run): on random maps cut into
 * several components, every entry equals the reference (and the plain
 * table), the pairs in two components are counted as unreachable and
 * never searched for (an origin none of whose others it can reach runs no
 * search), and the searches settle no more cells than without the
 * components; agent grids use their base grid's components. A cap on the
 * cells settled ends the run with PF_ELIMIT. */
START_TEST(table_components_skip_unreachable) {
    uint64_t st = tu_seed("table_components_skip_unreachable", 0x7ab10002);
    pf_search_ctx *ctx = pf_search_ctx_create();
    long unreachable = 0, skipped_searches = 0;
    for (int m = 0; m < 300; m++) {
        tu_map_opts o = {4, 30, 0.45, m % 3 != 0, m % 4 == 0, 0, -1};
        pf_grid *g0 = tu_random_grid(&st, &o);
        pf_planner_opts po;
        pf_planner *p = NULL;
        memset(&po, 0, sizeof(po));
        ck_assert_int_eq(pf_planner_create(g0, &po, &p), PF_OK);
        const pf_grid *base = pf_planner_grid(p), *g;
        const struct pf_cuts *k = pf_planner_cuts(p, NULL);
        int32_t n = m % 5 == 4 ? 2 : 1, w = pf_grid_width(base);
        ck_assert_ptr_nonnull(k);
        ck_assert_int_eq(pf_planner_agent_grid(p, n, NULL, &g), PF_OK);
        pf_point src[8], tgt[8];
        size_t ns = 1 + tu_below(&st, 8), nt = 1 + tu_below(&st, 8);
        if (pf_grid_walkable_count(g) == 0) {
            pf_planner_destroy(p);
            continue;
        }
        for (size_t i = 0; i < ns; i++) tu_random_walkable(&st, g, &src[i]);
        for (size_t j = 0; j < nt; j++) tu_random_walkable(&st, g, &tgt[j]);
        double *dist = malloc((size_t)w * pf_grid_height(g) * sizeof(*dist));
        double ref[64], plain[64], c[64];
        long apart = 0;
        for (size_t i = 0; i < ns; i++) {
            ref_dists(base, n, &src[i], 1, false, dist);
            for (size_t j = 0; j < nt; j++) {
                ref[i * nt + j] = dist[tgt[j].y * w + tgt[j].x];
                /* The reference says unreachable wherever the components
                 * do (never the other way round). */
                if (!pf_cuts_connected(k, src[i].y * w + src[i].x, tgt[j].y * w + tgt[j].x)) {
                    ck_assert(isinf(ref[i * nt + j]));
                    apart++;
                }
            }
        }
        for (int d = 0; d < 3; d++) {
            pf_table_stats ps;
            pf_table_run t;
            size_t searched = 0, runs = 0;
            ck_assert_int_eq(pf_table_compute(ctx, g, src, ns, tgt, nt, (pf_table_direction)d, NULL,
                                              NULL, plain, &ps),
                             PF_OK);
            memset(&t, 0, sizeof(t));
            t.g = g;
            t.sources = src;
            t.ns = ns;
            t.targets = tgt;
            t.nt = nt;
            t.dir = (pf_table_direction)d;
            t.components = k;
            t.costs = c;
            ck_assert_int_eq(pf_table_run_init(&t), PF_OK);
            while (!pf_table_run_done(&t)) {
                ck_assert_int_eq(pf_table_run_next(ctx, &t), PF_OK);
                runs++;
                searched += pf_table_run_searched(&t);
            }
            for (size_t e = 0; e < ns * nt; e++)
                ck_assert_msg(ref_close(c[e], ref[e]) && ref_close(c[e], plain[e]),
                              "map %d dir %d entry %zu: %.9f vs %.9f", m, d, e, c[e], ref[e]);
            ck_assert_uint_eq(t.unreachable, (uint64_t)apart);
            ck_assert_uint_eq(t.stats.searches, searched);
            ck_assert_uint_le(t.stats.expanded, ps.expanded);
            ck_assert_uint_eq(runs, t.backward ? nt : ns);
            skipped_searches += (long)(runs - searched);
            unreachable += (long)t.unreachable;
            pf_table_run_clear(&t);
        }
        free(dist);
        pf_planner_destroy(p);
    }
    /* The maps were cut enough for both to happen. */
    ck_assert_int_gt(unreachable, 100);
    ck_assert_int_gt(skipped_searches, 10);
    pf_search_ctx_destroy(ctx);
}
END_TEST

/* Two rooms a wall apart: a table from one to the other searches nothing;
 * one with a target in each room stops each search once the near target
 * is settled; a cap below what a search needs ends it with PF_ELIMIT. */
START_TEST(table_components_textbook_and_cap) {
    const char *rows[] = {"......#......", "......#......", "......#......", "......#......"};
    pf_grid *g0 = tu_grid_from_ascii(rows, 4, 8);
    pf_planner_opts po;
    pf_planner *p = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point left[2] = {{0, 0}, {1, 3}}, right[2] = {{12, 0}, {8, 2}}, mixed[2] = {{1, 0}, {12, 3}};
    double c[4];
    pf_table_run t;
    memset(&po, 0, sizeof(po));
    ck_assert_int_eq(pf_planner_create(g0, &po, &p), PF_OK);
    memset(&t, 0, sizeof(t));
    t.g = pf_planner_grid(p);
    t.sources = left;
    t.ns = 2;
    t.targets = right;
    t.nt = 2;
    t.components = pf_planner_cuts(p, NULL);
    t.costs = c;
    ck_assert_int_eq(pf_table_run_init(&t), PF_OK);
    while (!pf_table_run_done(&t)) ck_assert_int_eq(pf_table_run_next(ctx, &t), PF_OK);
    ck_assert_uint_eq(t.stats.searches, 0);
    ck_assert_uint_eq(t.stats.expanded, 0);
    ck_assert_uint_eq(t.unreachable, 4);
    for (int e = 0; e < 4; e++) ck_assert(isinf(c[e]));
    pf_table_run_clear(&t);
    /* One target near, one across the wall: (0,0) -> (1,0) settles a few
     * cells, not the whole left room. */
    t.sources = left;
    t.ns = 1;
    t.targets = mixed;
    t.nt = 2;
    ck_assert_int_eq(pf_table_run_init(&t), PF_OK);
    ck_assert_int_eq(pf_table_run_next(ctx, &t), PF_OK);
    ck_assert(pf_table_run_done(&t));
    ck_assert_double_eq_tol(c[0], 1.0, 1e-12);
    ck_assert(isinf(c[1]));
    ck_assert_uint_eq(t.unreachable, 1);
    ck_assert_uint_le(t.stats.expanded, 4); /* (0,0) then its neighbours up to (1,0) */
    pf_table_run_clear(&t);
    /* The cap: 3 cells cannot reach (5,3) from (0,0). */
    {
        pf_point far[1] = {{5, 3}};
        t.targets = far;
        t.nt = 1;
        t.max_expanded = 3;
        ck_assert_int_eq(pf_table_run_init(&t), PF_OK);
        ck_assert_int_eq(pf_table_run_next(ctx, &t), PF_ELIMIT);
        ck_assert_uint_eq(t.stats.expanded, 3);
        pf_table_run_clear(&t);
        t.max_expanded = 100;
        ck_assert_int_eq(pf_table_run_init(&t), PF_OK);
        ck_assert_int_eq(pf_table_run_next(ctx, &t), PF_OK);
        ck_assert_double_eq_tol(c[0], 5 + 3 * (PF_SQRT2 - 1), 1e-9);
        pf_table_run_clear(&t);
    }
    pf_planner_destroy(p);
    pf_search_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(table) {
    Suite *s = suite_create("table");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, table_textbook_asymmetric);
    tcase_add_test(tc, table_rejects_bad_input);
    tcase_add_test(tc, table_components_textbook_and_cap);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("property");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, table_property_random_maps);
    tcase_add_test(slow, table_components_skip_unreachable);
    suite_add_tcase(s, slow);
    return s;
}
