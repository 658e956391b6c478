/* navrun.c -- see navrun.h. */
#include "navrun.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <uv.h>

#include "clock.h"

/* One run: the tiles, shared by the caller and its helpers. */
typedef struct run_state {
    atomic_int refs;  /* the caller + every helper */
    atomic_uint next; /* the next tile to claim */
    uint32_t n;
    pf_nav_task_fn fn;
    void *arg;
    uv_mutex_t mu;
    uv_cond_t cv;
    uint32_t done; /* under mu */
    pf_pool *pool;
} run_state;

typedef struct helper {
    pf_pool_job job; /* first: the pool hands back &job */
    run_state *rs;
} helper;

static void state_release(run_state *rs) {
    if (atomic_fetch_sub_explicit(&rs->refs, 1, memory_order_acq_rel) != 1) return;
    uv_cond_destroy(&rs->cv);
    uv_mutex_destroy(&rs->mu);
    free(rs);
}

/* Runs tiles until none is left or the slice (deadline_ns, 0 = none) ends.
 * Returns true when tiles are left. */
static bool work(run_state *rs, uint64_t deadline_ns) {
    for (;;) {
        if (deadline_ns && pf_clock_now_ns() >= deadline_ns)
            return atomic_load_explicit(&rs->next, memory_order_relaxed) < rs->n;
        uint32_t i = atomic_fetch_add_explicit(&rs->next, 1, memory_order_relaxed);
        if (i >= rs->n) return false;
        rs->fn(rs->arg, i);
        uv_mutex_lock(&rs->mu);
        if (++rs->done == rs->n) uv_cond_broadcast(&rs->cv);
        uv_mutex_unlock(&rs->mu);
    }
}

static void helper_run(void *arg, pf_search_ctx *ctx) {
    helper *h = arg;
    (void)ctx;
    if (work(h->rs, pf_clock_now_ns() + PF_NAVRUN_SLICE_NS) &&
        pf_pool_submit(h->rs->pool, &h->job) == PF_OK)
        return; /* queued again: it keeps its reference */
    state_release(h->rs);
    free(h);
}

static void run(void *ctx, uint32_t n, pf_nav_task_fn fn, void *arg) {
    pf_navrun *nr = ctx;
    run_state *rs = calloc(1, sizeof(*rs));
    if (!rs || uv_mutex_init(&rs->mu)) {
        free(rs);
        for (uint32_t i = 0; i < n; i++) fn(arg, i); /* no memory for helpers: alone */
        return;
    }
    if (uv_cond_init(&rs->cv)) {
        uv_mutex_destroy(&rs->mu);
        free(rs);
        for (uint32_t i = 0; i < n; i++) fn(arg, i);
        return;
    }
    atomic_init(&rs->refs, 1);
    atomic_init(&rs->next, 0);
    rs->n = n;
    rs->fn = fn;
    rs->arg = arg;
    rs->pool = nr->pool;
    for (int k = 0; k < nr->helpers && (uint32_t)k + 1 < n; k++) {
        helper *h = calloc(1, sizeof(*h));
        if (!h) break;
        h->rs = rs;
        h->job.fn = helper_run;
        h->job.arg = h;
        h->job.kind = PF_JOB_SEARCH;
        atomic_fetch_add_explicit(&rs->refs, 1, memory_order_relaxed);
        if (pf_pool_submit(nr->pool, &h->job) != PF_OK) {
            atomic_fetch_sub_explicit(&rs->refs, 1, memory_order_relaxed);
            free(h);
            break;
        }
    }
    work(rs, 0);
    uv_mutex_lock(&rs->mu);
    while (rs->done < rs->n) uv_cond_wait(&rs->cv, &rs->mu);
    uv_mutex_unlock(&rs->mu);
    state_release(rs);
}

pf_nav_runner pf_navrun_runner(pf_navrun *nr) {
    pf_nav_runner r = {run, nr};
    return r;
}
