/* test_registry.c -- server/registry.c: map versions, references, numbering and the PATCH change
 * log. */
#include <check.h>
#include <stdlib.h>

#include "registry.h"
#include "testutil.h"

START_TEST(registry_versions_and_references) {
    pf_registry *r = pf_registry_create(1);
    pf_grid *g1 = NULL, *g2 = NULL, *g3 = NULL;
    pf_planner *p1, *p2, *p3;
    pf_mapver *a, *b, *c, *held;
    bool created;
    ck_assert_int_eq(pf_grid_create(4, 4, NULL, &g1), PF_OK);
    ck_assert_int_eq(pf_grid_create(5, 5, NULL, &g2), PF_OK);
    ck_assert_int_eq(pf_grid_create(6, 6, NULL, &g3), PF_OK);
    ck_assert_int_eq(pf_planner_create(g1, NULL, &p1), PF_OK);
    ck_assert_int_eq(pf_planner_create(g2, NULL, &p2), PF_OK);
    ck_assert_int_eq(pf_planner_create(g3, NULL, &p3), PF_OK);
    a = pf_mapver_create("m", p1, 16, 1 << 20, 0, NULL);
    b = pf_mapver_create("m", p2, 16, 1 << 20, 0, NULL);
    c = pf_mapver_create("other", p3, 16, 1 << 20, 0, NULL);
    ck_assert_int_eq(pf_registry_publish(r, a, &created), PF_OK);
    ck_assert(created);
    ck_assert_uint_eq(a->version, 1);
    held = pf_registry_get(r, "m"); /* a search holds version 1 */
    ck_assert_ptr_eq(held, a);
    ck_assert_int_eq(pf_registry_publish(r, b, &created), PF_OK);
    ck_assert(!created);
    ck_assert_uint_eq(b->version, 2);
    /* Version 1 is still whole for its holder. */
    ck_assert_int_eq(pf_grid_width(pf_planner_grid(held->planner)), 4);
    pf_mapver_release(held);
    /* A second id does not fit a registry of one. */
    ck_assert_int_eq(pf_registry_publish(r, c, &created), PF_ELIMIT);
    pf_mapver_release(c);
    ck_assert(pf_registry_remove(r, "m"));
    ck_assert(!pf_registry_remove(r, "m"));
    ck_assert_ptr_null(pf_registry_get(r, "m"));
    ck_assert_uint_eq(pf_registry_count(r), 0);
    pf_registry_destroy(r);
}
END_TEST

START_TEST(registry_change_log_bounds) {
    pf_registry *reg = pf_registry_create(8);
    pf_mapver *cur = tu_small_mapver(reg, "m");
    uint64_t first = cur->version, lineage = cur->lineage;
    pf_point *cells;
    size_t n;
    for (int i = 0; i < 100; i++) {
        pf_point *changed = malloc(2 * sizeof(*changed));
        pf_planner *p = NULL;
        pf_mapver *next;
        pf_cell_change c = {{i % 8, 1}, (uint8_t)(i % 2)};
        ck_assert_int_eq(pf_planner_apply(cur->planner, &c, 1, NULL, 0, NULL, &p, NULL, NULL),
                         PF_OK);
        next = pf_mapver_create("m", p, 16, 1 << 20, 0, NULL);
        changed[0] = (pf_point){i % 8, 1};
        changed[1] = (pf_point){i, 100}; /* a marker: which version */
        ck_assert_int_eq(pf_mapver_set_log(next, cur, changed, 2, PF_MAPVER_LOG_CELLS), PF_OK);
        ck_assert_int_eq(pf_registry_swap(reg, cur, next), PF_OK);
        /* A stale expected version is refused. */
        ck_assert_int_eq(pf_registry_swap(reg, cur, next), PF_ECANCELED);
        pf_mapver_release(cur);
        cur = next;
        pf_mapver_retain(cur);
        ck_assert_uint_eq(cur->version, first + 1 + (uint64_t)i);
        ck_assert_uint_eq(cur->lineage, lineage);
    }
    ck_assert_uint_eq(cur->nlog, PF_MAPVER_LOG_VERSIONS);
    /* Three versions behind: the last three diffs' cells, each once (sorted
     * by row, then column). */
    ck_assert_int_eq(pf_mapver_changes_since(cur, cur->version - 3, &cells, &n), PF_OK);
    ck_assert_uint_eq(n, 6);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(cells[i].x, (97 + i) % 8);
        ck_assert_int_eq(cells[i].y, 1);
        ck_assert_int_eq(cells[3 + i].x, 97 + i);
    }
    free(cells);
    ck_assert_int_eq(pf_mapver_changes_since(cur, cur->version, &cells, &n), PF_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(
        pf_mapver_changes_since(cur, cur->version - PF_MAPVER_LOG_VERSIONS, &cells, &n), PF_OK);
    /* 64 markers, and (x, 1) for the 8 columns the PATCHes cycle through:
     * each once, however often it changed. */
    ck_assert_uint_eq(n, PF_MAPVER_LOG_VERSIONS + 8);
    free(cells);
    ck_assert_int_eq(
        pf_mapver_changes_since(cur, cur->version - PF_MAPVER_LOG_VERSIONS - 1, &cells, &n),
        PF_ELIMIT);
    /* A diff larger than the log may hold is not kept: the next version's
     * log is empty and a session one version behind is rebuilt. */
    {
        pf_point *big = malloc(5 * sizeof(*big));
        pf_planner *p = NULL;
        pf_mapver *next;
        pf_cell_change c = {{0, 0}, 2};
        for (int i = 0; i < 5; i++) big[i] = (pf_point){i, 0};
        ck_assert_int_eq(pf_planner_apply(cur->planner, &c, 1, NULL, 0, NULL, &p, NULL, NULL),
                         PF_OK);
        next = pf_mapver_create("m", p, 16, 1 << 20, 0, NULL);
        ck_assert_int_eq(pf_mapver_set_log(next, cur, big, 5, 4), PF_OK);
        ck_assert_uint_eq(next->nlog, 0);
        ck_assert_int_eq(pf_registry_swap(reg, cur, next), PF_OK);
        pf_mapver_release(cur);
        cur = next;
        pf_mapver_retain(cur);
        ck_assert_int_eq(pf_mapver_changes_since(cur, cur->version - 1, &cells, &n), PF_ELIMIT);
    }
    pf_mapver_release(cur);
    pf_registry_destroy(reg);
}
END_TEST

TU_SUITE(registry) {
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("registry");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, registry_versions_and_references);
    tcase_add_test(tc, registry_change_log_bounds);
    suite_add_tcase(s, tc);
    return s;
}
