/* test_server.c -- server modules in-process: router, cache, pool,
 * registry, config. The HTTP behaviour is in test_http.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cache.h"
#include "clock.h"
#include "config.h"
#include "pool.h"
#include "registry.h"
#include "router.h"
#include "testutil.h"

START_TEST(server_router_table) {
    pf_route_result r;
    ck_assert_int_eq(pf_route_find("GET", "/healthz", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_HEALTHZ);
    ck_assert_int_eq(pf_route_find("HEAD", "/v1/info", &r), PF_MATCH_OK);
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_MAPS_CREATE);
    ck_assert_int_eq(pf_route_find("PUT", "/v1/maps/a.b-c_9", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_MAP_PUT);
    ck_assert_str_eq(r.map_id, "a.b-c_9");
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/m/paths", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_PATHS_POST);
    ck_assert_str_eq(r.map_id, "m");
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/path", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_PATH_GET);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/paths", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "POST");
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/m", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD, PUT, PATCH, DELETE");
    ck_assert_int_eq(pf_route_find("PATCH", "/v1/maps/m", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_MAP_PATCH);
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/m/sessions", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSIONS_CREATE);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/0af3", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSION_GET);
    ck_assert_str_eq(r.session_id, "0af3");
    ck_assert_str_eq(r.map_id, "m");
    ck_assert_int_eq(pf_route_find("DELETE", "/v1/maps/m/sessions/0af3", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSION_DELETE);
    ck_assert_int_eq(pf_route_find("POST", "/v1/maps/m/sessions/0af3/updates", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSION_UPDATES);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/0af3/stream", &r), PF_MATCH_OK);
    ck_assert_int_eq(r.route, PF_ROUTE_SESSION_STREAM);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/0af3/updates", &r),
                     PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "POST");
    ck_assert_int_eq(pf_route_find("PUT", "/v1/maps/m/sessions/0af3", &r), PF_MATCH_BAD_METHOD);
    ck_assert_str_eq(r.allow, "GET, HEAD, DELETE");
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/0af3/other", &r),
                     PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/sessions/a%20b", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/m/other", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/nothing", &r), PF_MATCH_NOT_FOUND);
    ck_assert_int_eq(pf_route_find("GET", "/v1/maps/bad!id", &r), PF_MATCH_BAD_ID);
    {
        char id[80];
        memset(id, 'a', 65);
        id[65] = '\0';
        char path[128] = "/v1/maps/";
        strcat(path, id);
        ck_assert_int_eq(pf_route_find("GET", path, &r), PF_MATCH_BAD_ID);
    }
}
END_TEST

/* A cache value: the JSON members of an answer (any bytes do for the cache). */
static pf_cache_value val(const char *json) {
    pf_cache_value v = {(char *)json, strlen(json)};
    return v;
}

static bool got(const pf_cache_value *out, const char *json) {
    return out->len == strlen(json) && memcmp(out->json, json, out->len) == 0;
}

START_TEST(server_cache_lru_evicts_least_recent) {
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

START_TEST(server_cache_byte_bound_and_disabled) {
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

START_TEST(server_pool_bounded_queue) {
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
START_TEST(server_pool_queued_job_expires_at_deadline) {
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
    while (!soon.expired) {
        ck_assert_msg(pf_clock_now_ns() - t0 < 10 * 1000000000ull, "never expired");
        uv_cond_timedwait(&g.cv, &g.mu, 10 * 1000000ull);
    }
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
START_TEST(server_pool_fair_between_clients) {
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

START_TEST(server_pool_requeue_gives_worker_back) {
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

START_TEST(server_registry_versions_and_references) {
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

START_TEST(server_config_env_flags_help) {
    pf_config c;
    char err[200];
    bool help;
    char *argv1[] = {"pathd", "--workers=5", "--queue", "7", "--demo", NULL};
    char *argv2[] = {"pathd", "--workers", "0", NULL};
    char *argv3[] = {"pathd", "--nope", NULL};
    char *argv4[] = {"pathd", "--help", NULL};
    setenv("PATHD_WORKERS", "3", 1);
    setenv("PATHD_DEADLINE_MS", "250", 1);
    pf_config_defaults(&c);
    ck_assert_int_eq(pf_config_load(&c, 5, argv1, &help, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(c.workers, 5); /* the flag wins over the variable */
    ck_assert_int_eq(c.deadline_ms, 250);
    ck_assert_int_eq(c.queue_limit, 7);
    ck_assert(c.demo);
    pf_config_defaults(&c);
    ck_assert_int_eq(pf_config_load(&c, 3, argv2, &help, err, sizeof(err)), PF_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--workers"));
    ck_assert_int_eq(pf_config_load(&c, 2, argv3, &help, err, sizeof(err)), PF_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--nope"));
    setenv("PATHD_WORKERS", "many", 1);
    ck_assert_int_eq(pf_config_load(&c, 1, argv1, &help, err, sizeof(err)), PF_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "PATHD_WORKERS"));
    ck_assert_int_eq(pf_config_load(&c, 2, argv4, &help, err, sizeof(err)), PF_OK);
    ck_assert(help);
    unsetenv("PATHD_WORKERS");
    unsetenv("PATHD_DEADLINE_MS");
}
END_TEST

TU_SUITE(server) {
    Suite *s = suite_create("server");
    TCase *tc = tcase_create("server");
    tcase_add_test(tc, server_router_table);
    tcase_add_test(tc, server_cache_lru_evicts_least_recent);
    tcase_add_test(tc, server_cache_byte_bound_and_disabled);
    tcase_add_test(tc, server_pool_bounded_queue);
    tcase_add_test(tc, server_pool_queued_job_expires_at_deadline);
    tcase_add_test(tc, server_pool_fair_between_clients);
    tcase_add_test(tc, server_pool_requeue_gives_worker_back);
    tcase_add_test(tc, server_registry_versions_and_references);
    tcase_add_test(tc, server_config_env_flags_help);
    suite_add_tcase(s, tc);
    return s;
}
