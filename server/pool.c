/* pool.c -- see pool.h.
 *
 * Searches wait in a binary min-heap ordered by (tag, seq): start-time fair
 * queuing (Goyal, Vin & Cheng, "Start-time Fair Queuing", SIGCOMM 1996)
 * with every job costing one unit. A client's next job starts at
 * max(virtual time, the finish tag of the client's previous job), the
 * virtual time being the tag of the job a worker took last; so a client
 * with a hundred jobs waiting holds tags far in the future, and a client
 * arriving now is served next. Clients are hashed into a fixed table of
 * finish tags (collisions share a share, nothing is allocated per client).
 *
 * Writes (PF_JOB_BUILD) wait in their own FIFO. Every job queued takes the
 * next number of one sequence (seq; a requeued slice takes a new one), and
 * a worker compares the oldest write with the search the fair queue would
 * serve next: the one queued first runs first. So a write waits for the
 * searches queued before it, never for those queued after it, and at most
 * build_limit writes run at once, so searches always keep a worker.
 *
 * Deadlines: a timer thread sleeps until the earliest deadline of a
 * waiting job, takes the jobs past their deadline off the queues and runs
 * their expire callbacks.
 */
#include "pool.h"

#include <stdlib.h>
#include <uv.h>

#include "clock.h"

#define CLIENT_SLOTS 4096 /* a power of two */

typedef struct fifo {
    pf_pool_job *head, *tail;
    int len;
} fifo;

struct pf_pool {
    uv_mutex_t mu;
    uv_cond_t cv;       /* workers wait here */
    uv_cond_t timer_cv; /* the deadline thread waits here */
    pf_pool_job **heap; /* searches, by (tag, seq) */
    int nheap, heap_cap;
    fifo builds;
    uint64_t vtime, seq;
    uint64_t finish[CLIENT_SLOTS]; /* per client slot: the finish tag of its last job */
    uint64_t next_deadline;        /* the timer's wake-up time, 0 = none */
    int workers, queue_limit, build_limit;
    int running, running_builds;
    uint64_t completed, rejected, expired, requeued;
    uint64_t completed_builds, writes_ahead;
    bool stopping, joined;
    uv_thread_t *threads;
    int nthreads;
    uv_thread_t timer;
    bool timer_started;
};

/* The worker thread's current job was requeued by its fn. */
static _Thread_local bool tl_requeued;

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

/* Heap of searches */

static bool sooner(const pf_pool_job *a, const pf_pool_job *b) {
    return a->tag < b->tag || (a->tag == b->tag && a->seq < b->seq);
}

static void heap_set(pf_pool *p, int i, pf_pool_job *j) {
    p->heap[i] = j;
    j->heap_pos = i;
}

static void sift_up(pf_pool *p, int i) {
    pf_pool_job *j = p->heap[i];
    while (i > 0) {
        int up = (i - 1) / 2;
        if (!sooner(j, p->heap[up])) break;
        heap_set(p, i, p->heap[up]);
        i = up;
    }
    heap_set(p, i, j);
}

static void sift_down(pf_pool *p, int i) {
    pf_pool_job *j = p->heap[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= p->nheap) break;
        if (c + 1 < p->nheap && sooner(p->heap[c + 1], p->heap[c])) c++;
        if (!sooner(p->heap[c], j)) break;
        heap_set(p, i, p->heap[c]);
        i = c;
    }
    heap_set(p, i, j);
}

static void heap_remove(pf_pool *p, int i) {
    pf_pool_job *last = p->heap[--p->nheap];
    if (i == p->nheap) return;
    heap_set(p, i, last);
    sift_down(p, i);
    sift_up(p, last->heap_pos);
}

static uint32_t client_slot(uint64_t client) {
    return (uint32_t)((client * 0x9E3779B97F4A7C15ull) >> 32) & (CLIENT_SLOTS - 1);
}

/* Tags j by its client's share and puts it in the heap (room checked by
 * the caller). */
static void enqueue_search(pf_pool *p, pf_pool_job *j) {
    uint32_t k = client_slot(j->client);
    uint64_t start = p->finish[k] > p->vtime ? p->finish[k] : p->vtime;
    j->tag = start;
    j->seq = p->seq++;
    p->finish[k] = start + 1;
    heap_set(p, p->nheap++, j);
    sift_up(p, p->nheap - 1);
}

static pf_pool_job *pop_search(pf_pool *p) {
    pf_pool_job *j = p->heap[0];
    heap_remove(p, 0);
    if (j->tag > p->vtime) p->vtime = j->tag;
    return j;
}

/* Deadlines */

/* A new job may need the timer sooner. Lock held. */
static void note_deadline(pf_pool *p, const pf_pool_job *j) {
    if (!j->deadline_ns || !j->expire) return;
    if (p->next_deadline == 0 || j->deadline_ns < p->next_deadline) {
        p->next_deadline = j->deadline_ns;
        uv_cond_signal(&p->timer_cv);
    }
}

/* Takes the jobs past their deadline off the queues into *out and returns
 * the earliest deadline left (0: none). Lock held. */
static uint64_t take_expired(pf_pool *p, uint64_t now, pf_pool_job **out) {
    uint64_t next = 0;
    for (int i = 0; i < p->nheap;) {
        pf_pool_job *j = p->heap[i];
        if (j->deadline_ns && j->expire && j->deadline_ns <= now) {
            heap_remove(p, i); /* another job moved to i: look at it again */
            j->next = *out;
            *out = j;
            continue;
        }
        if (j->deadline_ns && j->expire && (!next || j->deadline_ns < next)) next = j->deadline_ns;
        i++;
    }
    {
        fifo keep = {NULL, NULL, 0};
        while (p->builds.head) {
            pf_pool_job *j = fifo_pop(&p->builds);
            if (j->deadline_ns && j->expire && j->deadline_ns <= now) {
                j->next = *out;
                *out = j;
                continue;
            }
            if (j->deadline_ns && j->expire && (!next || j->deadline_ns < next))
                next = j->deadline_ns;
            fifo_push(&keep, j);
        }
        p->builds = keep;
    }
    return next;
}

static void timer_main(void *arg) {
    pf_pool *p = arg;
    uv_mutex_lock(&p->mu);
    while (!p->stopping) {
        uint64_t now = pf_clock_now_ns();
        pf_pool_job *gone = NULL;
        if (p->next_deadline == 0) {
            uv_cond_wait(&p->timer_cv, &p->mu);
            continue;
        }
        if (now < p->next_deadline) {
            /* Spurious wake-ups and new earlier deadlines both land here
             * again; the times are rechecked. */
            (void)uv_cond_timedwait(&p->timer_cv, &p->mu, p->next_deadline - now);
            continue;
        }
        p->next_deadline = take_expired(p, now, &gone);
        while (gone) {
            pf_pool_job *j = gone;
            gone = j->next;
            p->expired++;
            uv_mutex_unlock(&p->mu);
            j->expire(j->arg); /* may free j */
            uv_mutex_lock(&p->mu);
        }
    }
    uv_mutex_unlock(&p->mu);
}

/* Whether a write may start now: one waits and fewer than build_limit
 * run. Lock held. */
static bool write_ready(const pf_pool *p) {
    return p->builds.len > 0 && p->running_builds < p->build_limit;
}

/* The write lane's turn: a write may start and it was queued before the
 * search the fair queue serves next (or no search waits). Lock held. */
static bool write_first(const pf_pool *p) {
    return write_ready(p) && (p->nheap == 0 || p->builds.head->seq < p->heap[0]->seq);
}

static void worker_main(void *arg) {
    pf_pool *p = arg;
    /* A context that cannot be created leaves the worker to run jobs with
     * NULL; the job answers "out of memory" then. */
    pf_search_ctx *ctx = pf_search_ctx_create();

    uv_mutex_lock(&p->mu);
    for (;;) {
        pf_pool_job *j = NULL;
        if (write_first(p)) {
            if (p->nheap > 0) p->writes_ahead++;
            j = fifo_pop(&p->builds);
            p->running_builds++;
        } else if (p->nheap > 0) {
            j = pop_search(p);
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
            tl_requeued = false;
            j->fn(j->arg, ctx); /* may free j, or requeue it */
            uv_mutex_lock(&p->mu);
            p->running--;
            if (!tl_requeued) p->completed++;
            if (kind == PF_JOB_BUILD) {
                p->running_builds--;
                if (!tl_requeued) p->completed_builds++;
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
    /* Room for every admitted search: queue_limit waiting plus one
     * requeued by each worker. */
    p->heap_cap = queue_limit + workers;
    p->heap = calloc((size_t)p->heap_cap, sizeof(*p->heap));
    if (!p->heap) goto out_free_threads;
    if (uv_mutex_init(&p->mu)) goto out_free_heap;
    if (uv_cond_init(&p->cv)) goto out_destroy_mutex;
    if (uv_cond_init(&p->timer_cv)) goto out_destroy_cv;
    p->workers = workers;
    p->queue_limit = queue_limit;
    p->build_limit = workers > 1 ? workers - 1 : 1;
    if (uv_thread_create(&p->timer, timer_main, p)) goto out_destroy_timer_cv;
    p->timer_started = true;
    for (int i = 0; i < workers; i++) {
        if (uv_thread_create(&p->threads[i], worker_main, p)) {
            pf_pool_shutdown(p);
            goto out_destroy_timer_cv;
        }
        p->nthreads++;
    }
    *out = p;
    return PF_OK;

out_destroy_timer_cv:
    uv_cond_destroy(&p->timer_cv);
out_destroy_cv:
    uv_cond_destroy(&p->cv);
out_destroy_mutex:
    uv_mutex_destroy(&p->mu);
out_free_heap:
    free(p->heap);
out_free_threads:
    free(p->threads);
out_free_pool:
    free(p);
    return PF_ENOMEM;
}

pf_status pf_pool_submit_with(pf_pool *p, pf_pool_job *job, void (*before_fn)(void *ud), void *ud) {
    pf_status st = PF_OK;
    uv_mutex_lock(&p->mu);
    if (p->stopping) {
        st = PF_ECANCELED;
    } else if (p->nheap + p->builds.len >= p->queue_limit) {
        p->rejected++;
        st = PF_ELIMIT;
    } else {
        if (before_fn) before_fn(ud);
        if (job->kind == PF_JOB_BUILD) {
            job->seq = p->seq++;
            fifo_push(&p->builds, job);
        } else {
            enqueue_search(p, job);
        }
        note_deadline(p, job);
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

void pf_pool_requeue(pf_pool *p, pf_pool_job *job) {
    uv_mutex_lock(&p->mu);
    tl_requeued = true;
    p->requeued++;
    if (job->kind == PF_JOB_BUILD) {
        job->seq = p->seq++; /* queued now: after the searches already waiting */
        fifo_push(&p->builds, job);
    } else {
        enqueue_search(p, job);
    }
    note_deadline(p, job);
    uv_cond_signal(&p->cv);
    uv_mutex_unlock(&p->mu);
}

bool pf_pool_has_waiting(pf_pool *p) {
    bool any;
    uv_mutex_lock(&p->mu);
    any = p->nheap > 0 || write_ready(p);
    uv_mutex_unlock(&p->mu);
    return any;
}

void pf_pool_get_stats(pf_pool *p, pf_pool_stats *st) {
    uv_mutex_lock(&p->mu);
    st->workers = p->workers;
    st->queue_limit = p->queue_limit;
    st->queued = p->nheap + p->builds.len;
    st->queued_builds = p->builds.len;
    st->running = p->running;
    st->running_builds = p->running_builds;
    st->completed = p->completed;
    st->rejected = p->rejected;
    st->expired = p->expired;
    st->requeued = p->requeued;
    st->completed_builds = p->completed_builds;
    st->writes_ahead = p->writes_ahead;
    uv_mutex_unlock(&p->mu);
}

void pf_pool_shutdown(pf_pool *p) {
    uv_mutex_lock(&p->mu);
    p->stopping = true;
    uv_cond_broadcast(&p->cv);
    uv_cond_signal(&p->timer_cv);
    uv_mutex_unlock(&p->mu);
    if (p->joined) return;
    for (int i = 0; i < p->nthreads; i++) uv_thread_join(&p->threads[i]);
    if (p->timer_started) uv_thread_join(&p->timer);
    p->joined = true;
}

void pf_pool_destroy(pf_pool *p) {
    if (!p) return;
    pf_pool_shutdown(p);
    uv_cond_destroy(&p->timer_cv);
    uv_cond_destroy(&p->cv);
    uv_mutex_destroy(&p->mu);
    free(p->heap);
    free(p->threads);
    free(p);
}
