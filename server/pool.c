/* pool.c -- see pool.h. */
#include "pool.h"

#include <stdlib.h>
#include <uv.h>

typedef struct fifo {
    pf_pool_job *head, *tail;
    int len;
} fifo;

struct pf_pool {
    uv_mutex_t mu;
    uv_cond_t cv;
    fifo searches, builds;
    int workers, queue_limit, build_limit;
    int running, running_builds;
    uint64_t completed, rejected;
    bool stopping, joined;
    uv_thread_t *threads;
    int nthreads;
};

static void fifo_push(fifo *f, pf_pool_job *j) {
    j->next = NULL;
    if (f->tail)
        f->tail->next = j;
    else
        f->head = j;
    f->tail = j;
    f->len++;
}

static pf_pool_job *fifo_pop(fifo *f) {
    pf_pool_job *j = f->head;
    f->head = j->next;
    if (!f->head) f->tail = NULL;
    f->len--;
    return j;
}

static void worker_main(void *arg) {
    pf_pool *p = arg;
    /* A context that cannot be created leaves the worker to run jobs with
     * NULL; the job answers "out of memory" then. */
    pf_search_ctx *ctx = pf_search_ctx_create();

    uv_mutex_lock(&p->mu);
    for (;;) {
        pf_pool_job *j = NULL;
        bool build_ok = p->builds.len > 0 && p->running_builds < p->build_limit;
        if (p->searches.len > 0) {
            j = fifo_pop(&p->searches);
        } else if (build_ok) {
            j = fifo_pop(&p->builds);
            p->running_builds++;
        } else if (p->stopping && p->builds.len == 0) {
            break;
        } else {
            uv_cond_wait(&p->cv, &p->mu);
            continue;
        }
        p->running++;
        uv_mutex_unlock(&p->mu);
        {
            pf_job_kind kind = j->kind;
            j->fn(j->arg, ctx); /* may free j */
            uv_mutex_lock(&p->mu);
            p->running--;
            p->completed++;
            if (kind == PF_JOB_BUILD) {
                p->running_builds--;
                /* A build slot opened: a worker may be waiting for it. */
                if (p->builds.len > 0) uv_cond_broadcast(&p->cv);
            }
        }
    }
    uv_mutex_unlock(&p->mu);
    pf_search_ctx_destroy(ctx);
}

pf_status pf_pool_create(int workers, int queue_limit, pf_pool **out) {
    pf_pool *p;
    *out = NULL;
    if (workers < 1 || queue_limit < 1) return PF_EINVAL;
    p = calloc(1, sizeof(*p));
    if (!p) return PF_ENOMEM;
    p->threads = calloc((size_t)workers, sizeof(*p->threads));
    if (!p->threads) goto out_free_pool;
    if (uv_mutex_init(&p->mu)) goto out_free_threads;
    if (uv_cond_init(&p->cv)) goto out_destroy_mutex;
    p->workers = workers;
    p->queue_limit = queue_limit;
    p->build_limit = workers > 1 ? workers - 1 : 1;
    for (int i = 0; i < workers; i++) {
        if (uv_thread_create(&p->threads[i], worker_main, p)) {
            pf_pool_shutdown(p);
            uv_cond_destroy(&p->cv);
            goto out_destroy_mutex;
        }
        p->nthreads++;
    }
    *out = p;
    return PF_OK;

out_destroy_mutex:
    uv_mutex_destroy(&p->mu);
out_free_threads:
    free(p->threads);
out_free_pool:
    free(p);
    return PF_ENOMEM;
}

pf_status pf_pool_submit_with(pf_pool *p, pf_pool_job *job, void (*before)(void *ud), void *ud) {
    pf_status st = PF_OK;
    uv_mutex_lock(&p->mu);
    if (p->stopping) {
        st = PF_ECANCELED;
    } else if (p->searches.len + p->builds.len >= p->queue_limit) {
        p->rejected++;
        st = PF_ELIMIT;
    } else {
        if (before) before(ud);
        fifo_push(job->kind == PF_JOB_BUILD ? &p->builds : &p->searches, job);
        /* One waiting worker is enough: a worker only waits when nothing
         * it may run is queued, so whichever wakes can take this job (a
         * build past the build limit waits for the broadcast of a
         * finishing build). */
        uv_cond_signal(&p->cv);
    }
    uv_mutex_unlock(&p->mu);
    return st;
}

pf_status pf_pool_submit(pf_pool *p, pf_pool_job *job) {
    return pf_pool_submit_with(p, job, NULL, NULL);
}

void pf_pool_get_stats(pf_pool *p, pf_pool_stats *st) {
    uv_mutex_lock(&p->mu);
    st->workers = p->workers;
    st->queue_limit = p->queue_limit;
    st->queued = p->searches.len + p->builds.len;
    st->queued_builds = p->builds.len;
    st->running = p->running;
    st->running_builds = p->running_builds;
    st->completed = p->completed;
    st->rejected = p->rejected;
    uv_mutex_unlock(&p->mu);
}

void pf_pool_shutdown(pf_pool *p) {
    uv_mutex_lock(&p->mu);
    p->stopping = true;
    uv_cond_broadcast(&p->cv);
    uv_mutex_unlock(&p->mu);
    if (p->joined) return;
    for (int i = 0; i < p->nthreads; i++) uv_thread_join(&p->threads[i]);
    p->joined = true;
}

void pf_pool_destroy(pf_pool *p) {
    if (!p) return;
    pf_pool_shutdown(p);
    uv_cond_destroy(&p->cv);
    uv_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}
