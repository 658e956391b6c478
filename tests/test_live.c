/* test_live.c -- the table of live objects (server/live.h) that sessions
 * and crowds share: limits, ids, exclusive and shared holds, expiry only
 * by the reaper (a lookup never frees), references outliving removal and
 * the table, the map's objects dropped, memory counted. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "testutil.h"

/* A live object that counts its frees and says its size. */
typedef struct thing {
    pf_live_obj live;
    int *freed;
    size_t bytes;
} thing;

static void thing_free(pf_live_obj *o) {
    thing *t = (thing *)(void *)o;
    (*t->freed)++;
    free(t);
}

static size_t thing_bytes(const pf_live_obj *o) { return ((const thing *)(const void *)o)->bytes; }

static const pf_live_type thing_type = {thing_free, thing_bytes};

static thing *new_thing(int *freed, size_t bytes) {
    thing *t = calloc(1, sizeof(*t));
    ck_assert_ptr_nonnull(t);
    t->freed = freed;
    t->bytes = bytes;
    return t;
}

/* Inserts a thing on mv, held (exclusive) or not, and gives it. */
static thing *add(pf_live *t, const pf_mapver *mv, int64_t ttl, bool hold, int *freed,
                  pf_status want) {
    thing *x = new_thing(freed, 100);
    bool total;
    pf_status st = pf_live_insert(t, &x->live, mv, ttl, NULL, hold, 0, &total);
    ck_assert_int_eq(st, want);
    if (st) {
        free(x);
        return NULL;
    }
    return x;
}

START_TEST(live_limits_ids_and_holds) {
    const uint64_t sec = 1000000000ull;
    pf_registry *reg = pf_registry_create(8);
    pf_mapver *a = tu_small_mapver(reg, "a"), *b = tu_small_mapver(reg, "b");
    pf_live *t = pf_live_create(&thing_type, 3, 2);
    pf_live_obj *o;
    int freed = 0;
    thing *x = add(t, a, 10, true, &freed, PF_OK), *y = add(t, a, 10, false, &freed, PF_OK), *z;
    ck_assert_str_ne(x->live.id, y->live.id);
    ck_assert_uint_eq(strlen(x->live.id), PF_LIVE_ID_LEN);
    add(t, a, 10, false, &freed, PF_ELIMIT); /* the map's limit */
    z = add(t, b, 10, false, &freed, PF_OK);
    add(t, b, 10, false, &freed, PF_ELIMIT); /* the table's */
    ck_assert_uint_eq(pf_live_count(t), 3);
    ck_assert_uint_eq(pf_live_count_map(t, "a"), 2);
    ck_assert_uint_eq(pf_live_memory(t), 300);
    /* Exclusive holds exclude each other, shared ones do not. */
    ck_assert_int_eq(pf_live_acquire(t, "a", x->live.id, true, 0, &o), PF_LIVE_BUSY);
    ck_assert_int_eq(pf_live_acquire(t, "a", x->live.id, false, 0, &o), PF_LIVE_OK);
    pf_live_unref(o);
    ck_assert_int_eq(pf_live_acquire(t, "b", x->live.id, false, 0, &o), PF_LIVE_NOT_FOUND);
    x->bytes = 250;
    pf_live_release(t, &x->live, 0); /* the insert's hold; its size counted again */
    ck_assert_uint_eq(pf_live_memory(t), 450);
    ck_assert_int_eq(pf_live_acquire(t, "a", x->live.id, true, 0, &o), PF_LIVE_OK);
    /* Removed while held: gone for everyone, freed when released. */
    ck_assert(pf_live_remove(t, "a", x->live.id));
    ck_assert(pf_live_is_gone(t, o));
    ck_assert(!pf_live_exists(t, "a", x->live.id, 0));
    ck_assert_int_eq(freed, 0);
    pf_live_release(t, o, 0);
    ck_assert_int_eq(freed, 1);
    ck_assert_uint_eq(pf_live_memory(t), 200);
    /* y and z: the callers' references from the insert. */
    pf_live_unref(&y->live);
    pf_live_unref(&z->live);
    ck_assert_int_eq(freed, 1);
    /* A map's objects go with it, of another lineage only when asked. */
    ck_assert_uint_eq(pf_live_drop_map(t, "b", b->lineage), 0);
    ck_assert_uint_eq(pf_live_drop_map(t, "b", b->lineage + 1), 1);
    ck_assert_int_eq(freed, 2);
    ck_assert_uint_eq(pf_live_count(t), 1);
    ck_assert_uint_eq(pf_live_reap(t, 5 * sec), 0); /* y: 10 s */
    pf_live_destroy(t);
    ck_assert_int_eq(freed, 3);
    pf_mapver_release(a);
    pf_mapver_release(b);
    pf_registry_destroy(reg);
}
END_TEST

/* An object idle past its ttl is not found, but only the reaper unlinks
 * and frees it: a lookup on some I/O thread never does. Held or watched
 * objects never expire. */
START_TEST(live_expiry_is_the_reapers) {
    const uint64_t sec = 1000000000ull;
    pf_registry *reg = pf_registry_create(8);
    pf_mapver *a = tu_small_mapver(reg, "a");
    pf_live *t = pf_live_create(&thing_type, 8, 8);
    pf_live_obj *o;
    int freed = 0;
    thing *idle = add(t, a, 1, false, &freed, PF_OK), *held = add(t, a, 1, true, &freed, PF_OK),
          *watched = add(t, a, 1, false, &freed, PF_OK);
    char id[PF_LIVE_ID_LEN + 1];
    snprintf(id, sizeof(id), "%s", idle->live.id);
    pf_live_unref(&idle->live);
    pf_live_watch(t, &watched->live, true, 0);
    pf_live_unref(&watched->live);
    ck_assert(pf_live_exists(t, "a", id, sec));
    ck_assert(!pf_live_exists(t, "a", id, 2 * sec));
    ck_assert_int_eq(pf_live_acquire(t, "a", id, false, 2 * sec, &o), PF_LIVE_NOT_FOUND);
    ck_assert_int_eq(pf_live_acquire(t, "a", id, true, 2 * sec, &o), PF_LIVE_NOT_FOUND);
    ck_assert_int_eq(freed, 0); /* looked up, expired, not freed */
    ck_assert_uint_eq(pf_live_count(t), 3);
    ck_assert_uint_eq(pf_live_reap(t, 2 * sec), 1);
    ck_assert_int_eq(freed, 1);
    ck_assert_uint_eq(pf_live_count(t), 2);
    /* The held one's clock starts at its release; the watched one's when
     * its last stream closes. */
    pf_live_release(t, &held->live, 10 * sec);
    pf_live_watch(t, &watched->live, false, 10 * sec);
    ck_assert_uint_eq(pf_live_reap(t, 11 * sec), 0);
    ck_assert_uint_eq(pf_live_reap(t, 12 * sec), 2);
    ck_assert_int_eq(freed, 3);
    pf_live_destroy(t);
    pf_mapver_release(a);
    pf_registry_destroy(reg);
}
END_TEST

/* A reference outlives the table (a crowd's tick still on the pool when
 * the server stops): the last one frees. */
START_TEST(live_references_outlive_the_table) {
    pf_registry *reg = pf_registry_create(8);
    pf_mapver *a = tu_small_mapver(reg, "a");
    pf_live *t = pf_live_create(&thing_type, 8, 8);
    int freed = 0;
    thing *x = add(t, a, 10, false, &freed, PF_OK);
    pf_live_retain(&x->live);
    pf_live_unref(&x->live); /* the insert's */
    pf_live_destroy(t);
    ck_assert_int_eq(freed, 0);
    pf_live_unref(&x->live);
    ck_assert_int_eq(freed, 1);
    pf_mapver_release(a);
    pf_registry_destroy(reg);
}
END_TEST

TU_SUITE(live) {
    Suite *s = suite_create("live");
    TCase *tc = tcase_create("live");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, live_limits_ids_and_holds);
    tcase_add_test(tc, live_expiry_is_the_reapers);
    tcase_add_test(tc, live_references_outlive_the_table);
    suite_add_tcase(s, tc);
    return s;
}
