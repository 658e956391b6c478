/* test_session.c -- server/session.c in-process: the sessions table (busy, limits, expiry) and the
 * session job. */
#include <check.h>
#include <stdio.h>

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

TU_SUITE(session) {
    Suite *s = suite_create("session");
    TCase *tc = tcase_create("session");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, session_table_busy_limits_expiry);
    suite_add_tcase(s, tc);
    return s;
}
