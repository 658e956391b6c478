/* test_pool.c -- server/pool.c: the bounded worker pool. */
#include <check.h>
#include <string.h>
#include <uv.h>

#include "pool.h"
#include "testutil.h"

/* A job that blocks until released. */
typedef struct gate {
    uv_mutex_t mu;
    uv_cond_t cv;
    int open, started, ran;
    pf_pool_job job;
} gate;

static void gate_job(void *arg, pf_search_ctx *ctx) {
    gate *g = arg;
    ck_assert_ptr_nonnull(ctx);
    uv_mutex_lock(&g->mu);
    g->started++;
    uv_cond_broadcast(&g->cv);
    while (!g->open) uv_cond_wait(&g->cv, &g->mu);
    g->ran++;
    uv_mutex_unlock(&g->mu);
}

START_TEST(pool_bounded_queue) {
    pf_pool *p;
    gate g;
    pf_pool_job j2, j3;
    pf_pool_stats st;
    memset(&g, 0, sizeof(g));
    uv_mutex_init(&g.mu);
    uv_cond_init(&g.cv);
    ck_assert_int_eq(pf_pool_create(1, 1, &p), PF_OK);
    g.job = (pf_pool_job){NULL, gate_job, &g, PF_JOB_SEARCH};
    j2 = (pf_pool_job){NULL, gate_job, &g, PF_JOB_SEARCH};
    j3 = (pf_pool_job){NULL, gate_job, &g, PF_JOB_BUILD};
    ck_assert_int_eq(pf_pool_submit(p, &g.job), PF_OK);
    uv_mutex_lock(&g.mu);
    while (g.started < 1) uv_cond_wait(&g.cv, &g.mu); /* the worker holds job 1 */
    uv_mutex_unlock(&g.mu);
    ck_assert_int_eq(pf_pool_submit(p, &j2), PF_OK);     /* waits in the queue */
    ck_assert_int_eq(pf_pool_submit(p, &j3), PF_ELIMIT); /* refused at once */
    pf_pool_get_stats(p, &st);
    ck_assert_int_eq(st.running, 1);
    ck_assert_int_eq(st.queued, 1);
    ck_assert_uint_eq(st.rejected, 1);
    uv_mutex_lock(&g.mu);
    g.open = 1;
    uv_cond_broadcast(&g.cv);
    uv_mutex_unlock(&g.mu);
    pf_pool_shutdown(p); /* runs what was queued */
    ck_assert_int_eq(g.ran, 2);
    ck_assert_int_eq(pf_pool_submit(p, &j3), PF_ECANCELED);
    pf_pool_destroy(p);
    uv_cond_destroy(&g.cv);
    uv_mutex_destroy(&g.mu);
}
END_TEST

TU_SUITE(pool) {
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, pool_bounded_queue);
    suite_add_tcase(s, tc);
    return s;
}
