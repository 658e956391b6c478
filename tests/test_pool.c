/* test_pool.c -- server/pool.c: the bounded worker pool, its deadlines, its fair queue and
 * the slices long jobs give back. */
#include <check.h>
#include <string.h>
#include <uv.h>

#include "clock.h"
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
    g.job = (pf_pool_job){.fn = gate_job, .arg = &g, .kind = PF_JOB_SEARCH};
    j2 = (pf_pool_job){.fn = gate_job, .arg = &g, .kind = PF_JOB_SEARCH};
    j3 = (pf_pool_job){.fn = gate_job, .arg = &g, .kind = PF_JOB_BUILD};
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

/* A job recording when it ran or expired. */
typedef struct rec {
    uv_mutex_t *mu;
    uv_cond_t *cv;
    int *order, *n; /* order[(*n)++] = id when fn runs */
    int id;
    bool ran, expired;
    uint64_t expired_ns;
    pf_pool_job job;
} rec;

static void rec_run(void *arg, pf_search_ctx *ctx) {
    rec *x = arg;
    (void)ctx;
    uv_mutex_lock(x->mu);
    x->ran = true;
    x->order[(*x->n)++] = x->id;
    uv_cond_broadcast(x->cv);
    uv_mutex_unlock(x->mu);
}

static void rec_expire(void *arg) {
    rec *x = arg;
    uv_mutex_lock(x->mu);
    x->expired = true;
    x->expired_ns = pf_clock_now_ns();
    uv_cond_broadcast(x->cv);
    uv_mutex_unlock(x->mu);
}

static void rec_init(rec *x, gate *g, int *order, int *n, int id, uint64_t client) {
    memset(x, 0, sizeof(*x));
    x->mu = &g->mu;
    x->cv = &g->cv;
    x->order = order;
    x->n = n;
    x->id = id;
    x->job = (pf_pool_job){.fn = rec_run, .arg = x, .kind = PF_JOB_SEARCH, .client = client};
}

static void gate_start(gate *g, pf_pool *p) {
    memset(g, 0, sizeof(*g));
    uv_mutex_init(&g->mu);
    uv_cond_init(&g->cv);
    g->job = (pf_pool_job){.fn = gate_job, .arg = g, .kind = PF_JOB_SEARCH};
    ck_assert_int_eq(pf_pool_submit(p, &g->job), PF_OK);
    uv_mutex_lock(&g->mu);
    while (g->started < 1) uv_cond_wait(&g->cv, &g->mu); /* the worker holds it */
    uv_mutex_unlock(&g->mu);
}

static void gate_open(gate *g) {
    uv_mutex_lock(&g->mu);
    g->open = 1;
    uv_cond_broadcast(&g->cv);
    uv_mutex_unlock(&g->mu);
}

/* A job whose deadline passes while every worker is busy is taken off the
 * queue at its deadline and expires, without running; one with a later
 * deadline runs as usual. */
START_TEST(pool_queued_job_expires_at_deadline) {
    pf_pool *p;
    gate g;
    rec soon, later;
    int order[4], n = 0;
    uint64_t t0;
    pf_pool_stats st;
    ck_assert_int_eq(pf_pool_create(1, 4, &p), PF_OK);
    gate_start(&g, p);
    rec_init(&soon, &g, order, &n, 1, 0);
    rec_init(&later, &g, order, &n, 2, 0);
    t0 = pf_clock_now_ns();
    soon.job.deadline_ns = t0 + 100 * 1000000ull;
    soon.job.expire = rec_expire;
    later.job.deadline_ns = t0 + 3600 * 1000000000ull;
    later.job.expire = rec_expire;
    ck_assert_int_eq(pf_pool_submit(p, &later.job), PF_OK);
    ck_assert_int_eq(pf_pool_submit(p, &soon.job), PF_OK);
    uv_mutex_lock(&g.mu);
    while (!soon.expired) uv_cond_wait(&g.cv, &g.mu); /* Check's timeout ends a hang */
    uv_mutex_unlock(&g.mu);
    /* Not before its deadline (the worker is still busy: it could only have
     * been the timer). */
    ck_assert_uint_ge(soon.expired_ns - t0, 100 * 1000000ull);
    pf_pool_get_stats(p, &st);
    ck_assert_uint_eq(st.expired, 1);
    ck_assert_int_eq(st.queued, 1);
    gate_open(&g);
    pf_pool_shutdown(p);
    ck_assert(!soon.ran);
    ck_assert(later.ran && !later.expired);
    ck_assert_int_eq(n, 1);
    pf_pool_destroy(p);
    uv_cond_destroy(&g.cv);
    uv_mutex_destroy(&g.mu);
}
END_TEST

/* Five jobs of one client, then one of another: the newcomer runs second,
 * not sixth (start-time fair queuing); one client alone keeps its order. */
START_TEST(pool_fair_between_clients) {
    pf_pool *p;
    gate g;
    rec a[5], b;
    int order[8], n = 0;
    ck_assert_int_eq(pf_pool_create(1, 16, &p), PF_OK);
    gate_start(&g, p);
    for (int i = 0; i < 5; i++) {
        rec_init(&a[i], &g, order, &n, 10 + i, 7);
        ck_assert_int_eq(pf_pool_submit(p, &a[i].job), PF_OK);
    }
    rec_init(&b, &g, order, &n, 99, 8);
    ck_assert_int_eq(pf_pool_submit(p, &b.job), PF_OK);
    gate_open(&g);
    pf_pool_shutdown(p);
    ck_assert_int_eq(n, 6);
    ck_assert_int_eq(order[0], 10);
    ck_assert_int_eq(order[1], 99);
    for (int i = 1; i < 5; i++) ck_assert_int_eq(order[i + 1], 10 + i);
    pf_pool_destroy(p);
    uv_cond_destroy(&g.cv);
    uv_mutex_destroy(&g.mu);
}
END_TEST

/* A long job that gives its worker back when a search waits: the short
 * job runs between its slices. */
typedef struct longjob {
    pf_pool *p;
    pf_pool_job job;
    int done, slices, total;
    rec *shortj;
} longjob;

static void long_run(void *arg, pf_search_ctx *ctx) {
    longjob *l = arg;
    (void)ctx;
    l->slices++;
    while (l->done < l->total) {
        l->done++; /* a unit of work: one query of a batch */
        if (l->done < l->total && pf_pool_has_waiting(l->p)) {
            pf_pool_requeue(l->p, &l->job);
            return;
        }
    }
}

static void short_run(void *arg, pf_search_ctx *ctx) {
    rec *x = arg;
    (void)ctx;
    x->ran = true;
}

START_TEST(pool_requeue_gives_worker_back) {
    pf_pool *p;
    gate g;
    longjob l;
    rec s;
    int order[4], n = 0;
    pf_pool_stats st;
    ck_assert_int_eq(pf_pool_create(1, 4, &p), PF_OK);
    gate_start(&g, p);
    memset(&l, 0, sizeof(l));
    l.p = p;
    l.total = 5;
    l.job = (pf_pool_job){.fn = long_run, .arg = &l, .kind = PF_JOB_SEARCH, .client = 1};
    rec_init(&s, &g, order, &n, 1, 2);
    s.job.fn = short_run;
    ck_assert_int_eq(pf_pool_submit(p, &l.job), PF_OK);
    ck_assert_int_eq(pf_pool_submit(p, &s.job), PF_OK);
    gate_open(&g);
    pf_pool_shutdown(p);
    ck_assert(s.ran);
    ck_assert_int_eq(l.done, 5);
    ck_assert_int_eq(l.slices, 2); /* one unit, the short job, the other four */
    pf_pool_get_stats(p, &st);
    ck_assert_uint_eq(st.requeued, 1);
    ck_assert_uint_eq(st.completed, 3);
    pf_pool_destroy(p);
    uv_cond_destroy(&g.cv);
    uv_mutex_destroy(&g.mu);
}
END_TEST

/* The write lane: a write runs before every search queued after it, and
 * waits only for the searches the fair queue serves before that. One
 * worker, held; then searches 1, 2 (client 7), write 100, searches 3, 4
 * (client 7), 5 (client 8, a newcomer), write 101, search 6 (client 7).
 * The fair queue's order of the searches is 1, 5, 2, 3, 4, 6 (5 is a
 * newcomer: it shares the first tag); each write goes before the first of
 * them queued after it: 100 before 5, 101 before 6. */
START_TEST(pool_writes_before_later_searches) {
    static const struct {
        int id;
        uint64_t client; /* 0: a write */
    } jobs[] = {{1, 7}, {2, 7}, {100, 0}, {3, 7}, {4, 7}, {5, 8}, {101, 0}, {6, 7}};
    static const int want[] = {1, 100, 5, 2, 3, 4, 101, 6};
    enum { N = sizeof(jobs) / sizeof(jobs[0]) };
    pf_pool *p;
    gate g;
    rec r[N];
    int order[N], n = 0;
    pf_pool_stats st;
    ck_assert_int_eq(pf_pool_create(1, 16, &p), PF_OK);
    gate_start(&g, p);
    for (int i = 0; i < N; i++) {
        rec_init(&r[i], &g, order, &n, jobs[i].id, jobs[i].client);
        if (!jobs[i].client) r[i].job.kind = PF_JOB_BUILD;
        ck_assert_int_eq(pf_pool_submit(p, &r[i].job), PF_OK);
    }
    pf_pool_get_stats(p, &st);
    ck_assert_int_eq(st.queued, N);
    ck_assert_int_eq(st.queued_builds, 2);
    gate_open(&g);
    pf_pool_shutdown(p);
    ck_assert_int_eq(n, N);
    for (int i = 0; i < N; i++)
        ck_assert_msg(order[i] == want[i], "job %d ran %dth (expected %d)", order[i], i, want[i]);
    pf_pool_get_stats(p, &st);
    ck_assert_uint_eq(st.completed_builds, 2);
    ck_assert_uint_eq(st.writes_ahead, 2); /* each started while searches waited */
    ck_assert_uint_eq(st.completed, N + 1);
    pf_pool_destroy(p);
    uv_cond_destroy(&g.cv);
    uv_mutex_destroy(&g.mu);
}
END_TEST

/* A write that may start is a long job's cue to give its worker back,
 * like a waiting search: the write runs after the batch's first unit, not
 * after the whole batch. */
typedef struct watcher {
    pf_pool_job job;
    const longjob *l; /* the batch it watches */
    int seen;         /* units of the batch done when it ran */
    bool ran;
} watcher;

static void watcher_run(void *arg, pf_search_ctx *ctx) {
    watcher *w = arg;
    (void)ctx;
    w->ran = true;
    w->seen = w->l->done;
}

START_TEST(pool_long_job_yields_to_write) {
    pf_pool *p;
    gate g;
    longjob l;
    watcher w;
    pf_pool_stats st;
    ck_assert_int_eq(pf_pool_create(1, 4, &p), PF_OK);
    gate_start(&g, p);
    memset(&l, 0, sizeof(l));
    l.p = p;
    l.total = 5;
    l.job = (pf_pool_job){.fn = long_run, .arg = &l, .kind = PF_JOB_SEARCH, .client = 1};
    memset(&w, 0, sizeof(w));
    w.l = &l;
    w.job = (pf_pool_job){.fn = watcher_run, .arg = &w, .kind = PF_JOB_BUILD};
    ck_assert_int_eq(pf_pool_submit(p, &l.job), PF_OK);
    ck_assert_int_eq(pf_pool_submit(p, &w.job), PF_OK);
    gate_open(&g);
    pf_pool_shutdown(p);
    ck_assert(w.ran);
    ck_assert_int_eq(w.seen, 1); /* after the batch's first unit */
    ck_assert_int_eq(l.done, 5);
    ck_assert_int_eq(l.slices, 2);
    pf_pool_get_stats(p, &st);
    ck_assert_uint_eq(st.requeued, 1);
    ck_assert_uint_eq(st.completed_builds, 1);
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
    tcase_add_test(tc, pool_queued_job_expires_at_deadline);
    tcase_add_test(tc, pool_fair_between_clients);
    tcase_add_test(tc, pool_requeue_gives_worker_back);
    tcase_add_test(tc, pool_writes_before_later_searches);
    tcase_add_test(tc, pool_long_job_yields_to_write);
    suite_add_tcase(s, tc);
    return s;
}
