/* test_cache.c -- server/cache.c: the LRU path cache, its entry and byte bounds. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "testutil.h"

/* A cache value: the JSON members of an answer (any bytes do for the cache). */
static pf_cache_value val(const char *json) {
    pf_cache_value v = {(char *)json, strlen(json)};
    return v;
}

static bool got(const pf_cache_value *out, const char *json) {
    return out->len == strlen(json) && memcmp(out->json, json, out->len) == 0;
}

START_TEST(cache_lru_evicts_least_recent) {
    pf_cache *c = pf_cache_create(2, 1 << 20);
    pf_cache_value v, out;
    pf_cache_key k1 = pf_cache_key_make((pf_point){0, 0}, (pf_point){1, 1}, PF_ALGO_ASTAR,
                                        PF_H_DEFAULT, 1.5, false, 0, 1);
    pf_cache_key k2 = k1, k3 = k1, k1v2 = k1;
    pf_cache_stats st;
    k2.goal.x = 2;
    k3.goal.x = 3;
    k1v2.version = 2;
    v = val("\"cost\":1");
    ck_assert_int_eq(pf_cache_put(c, &k1, &v), PF_OK);
    v = val("\"cost\":2");
    ck_assert_int_eq(pf_cache_put(c, &k2, &v), PF_OK);
    /* Touch k1: k2 becomes the least recent and goes when k3 comes. */
    ck_assert(pf_cache_get(c, &k1, &out));
    ck_assert(got(&out, "\"cost\":1"));
    free(out.json);
    v = val("\"cost\":3");
    ck_assert_int_eq(pf_cache_put(c, &k3, &v), PF_OK);
    ck_assert(!pf_cache_get(c, &k2, &out));
    ck_assert(pf_cache_get(c, &k3, &out));
    ck_assert(got(&out, "\"cost\":3"));
    free(out.json);
    /* Another map version is another key. */
    ck_assert(!pf_cache_get(c, &k1v2, &out));
    pf_cache_get_stats(c, &st);
    ck_assert_uint_eq(st.hits, 2);
    ck_assert_uint_eq(st.misses, 2);
    ck_assert_uint_eq(st.entries, 2);
    /* The weight only counts for weighted. */
    {
        pf_cache_key a = pf_cache_key_make((pf_point){0, 0}, (pf_point){1, 1}, PF_ALGO_ASTAR,
                                           PF_H_DEFAULT, 3.0, false, 0, 1);
        ck_assert(pf_cache_get(c, &a, &out));
        free(out.json);
    }
    /* Storing under a present key replaces its value. */
    v = val("\"cost\":4");
    ck_assert_int_eq(pf_cache_put(c, &k3, &v), PF_OK);
    ck_assert(pf_cache_get(c, &k3, &out));
    ck_assert(got(&out, "\"cost\":4"));
    free(out.json);
    pf_cache_destroy(c);
}
END_TEST

START_TEST(cache_byte_bound_and_disabled) {
    char big[600];
    pf_cache_value v, out;
    pf_cache_key k = pf_cache_key_make((pf_point){0, 0}, (pf_point){1, 1}, PF_ALGO_BFS,
                                       PF_H_DEFAULT, 1, false, 0, 1);
    pf_cache *small = pf_cache_create(100, 300); /* an entry of 512 bytes does not fit */
    pf_cache *off = pf_cache_create(0, 1 << 20);
    memset(big, '1', 512);
    big[512] = '\0';
    v = val(big);
    ck_assert_int_eq(pf_cache_put(small, &k, &v), PF_OK);
    ck_assert(!pf_cache_get(small, &k, &out));
    ck_assert_int_eq(pf_cache_put(off, &k, &v), PF_OK);
    ck_assert(!pf_cache_get(off, &k, &out));
    /* A small answer (unreachable: no path points) fits. */
    v = val("\"found\":false");
    ck_assert_int_eq(pf_cache_put(small, &k, &v), PF_OK);
    ck_assert(pf_cache_get(small, &k, &out));
    ck_assert(got(&out, "\"found\":false"));
    free(out.json);
    pf_cache_destroy(small);
    pf_cache_destroy(off);
}
END_TEST

TU_SUITE(cache) {
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("cache");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, cache_lru_evicts_least_recent);
    tcase_add_test(tc, cache_byte_bound_and_disabled);
    suite_add_tcase(s, tc);
    return s;
}
