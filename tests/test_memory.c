/* test_memory.c -- server/memory.c: the process memory budget. */
#include <check.h>

#include "memory.h"
#include "testutil.h"

START_TEST(memory_charges_within_budget) {
    pf_mem *m = pf_mem_create(1000);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(pf_mem_budget(m), 1000);
    ck_assert(pf_mem_try_charge(m, PF_MEM_MAPS, 600));
    ck_assert(pf_mem_try_charge(m, PF_MEM_SESSIONS, 400)); /* exactly the budget */
    ck_assert(!pf_mem_try_charge(m, PF_MEM_CACHES, 1));    /* one byte too many */
    ck_assert_uint_eq(pf_mem_refused(m), 1);
    ck_assert_uint_eq(pf_mem_used(m), 1000);
    ck_assert_uint_eq(pf_mem_used_by(m, PF_MEM_MAPS), 600);
    ck_assert_uint_eq(pf_mem_used_by(m, PF_MEM_CACHES), 0);
    /* What is held anyway may pass it; then nothing more fits. */
    pf_mem_charge(m, PF_MEM_STREAMS, 50);
    ck_assert_uint_eq(pf_mem_used(m), 1050);
    ck_assert(!pf_mem_try_charge(m, PF_MEM_BODIES, 1));
    pf_mem_uncharge(m, PF_MEM_MAPS, 600);
    pf_mem_uncharge(m, PF_MEM_STREAMS, 50);
    ck_assert_uint_eq(pf_mem_used(m), 400);
    ck_assert(pf_mem_try_charge(m, PF_MEM_BODIES, 600));
    ck_assert(!pf_mem_try_charge(m, PF_MEM_BODIES, (size_t)-1)); /* no wrap-around */
    pf_mem_destroy(m);
    /* No budget object: everything fits, nothing is counted. */
    ck_assert(pf_mem_try_charge(NULL, PF_MEM_MAPS, (size_t)-1));
    pf_mem_charge(NULL, PF_MEM_MAPS, 1);
    pf_mem_uncharge(NULL, PF_MEM_MAPS, 1);
}
END_TEST

START_TEST(memory_default_budget_and_estimates) {
    pf_mem *m = pf_mem_create(0);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_gt(pf_mem_budget(m), 0); /* 3/4 of RAM or of the cgroup's limit */
    pf_mem_destroy(m);
    /* Above what a 2047x2047 maze holds (189 MB, 45 bytes a cell). */
    ck_assert_uint_gt(pf_mem_map_estimate(2047ull * 2047, 0), 189218918);
    ck_assert_uint_gt(pf_mem_map_estimate(1, 1 << 20), 1 << 20);
    ck_assert_uint_gt(pf_mem_session_estimate(2047ull * 2047), 16598176);
    ck_assert_str_eq(pf_mem_kind_name(PF_MEM_SESSIONS), "sessions");
}
END_TEST

TU_SUITE(memory) {
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("memory");
    tcase_add_test(tc, memory_charges_within_budget);
    tcase_add_test(tc, memory_default_budget_and_estimates);
    suite_add_tcase(s, tc);
    return s;
}
