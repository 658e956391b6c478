/* pool.h -- the bounded worker pool every search and map build runs on.
 *
 * N worker threads (libuv threads, mutex and condition variable), each owning
 * one pf_search_ctx that it hands to every job it runs, so search scratch
 * memory is reused across queries. Jobs wait in two queues: searches, and
 * writes (PF_JOB_BUILD: uploads, PATCHes, DELETEs, generated maps, map
 * loads, session and crowd creates).
 *
 * The write lane. A write runs before every search queued after it: a
 * worker takes the oldest write when it was queued before the search the
 * fair queue would serve next (each queued job takes the next number of
 * one sequence; a slice a long job gives back takes a new one, so a batch
 * that began before a write yields to it at its next slice). So a write
 * waits at most for the searches already queued when it came (each a
 * query or one --slice-ms slice of a long job), however many arrive after
 * it, from its own address or another's. At most max(1, workers - 1)
 * writes run at a time, so searches always keep a worker and a slow build
 * never stalls queries to other maps; a write queued behind that many
 * running writes waits for one of them. The server gives a write a
 * deadline for its wait (request.c: --max-deadline-ms from its arrival):
 * still queued then, it is answered 504 without having changed anything.
 *
 * Fairness. Searches are served by start-time fair queuing between clients
 * (job.client, e.g. the client's address): a client with many jobs waiting
 * does not push a newcomer behind all of them, the newcomer is served next.
 * A long job (a batch of queries) gives its worker back between slices of
 * work: it asks pf_pool_has_waiting and, when another search or a write
 * that may start waits, requeues itself (pf_pool_requeue) behind its client's share, so a few
 * clients' long batches never hold every worker while others wait. One
 * client alone is served first come, first served.
 *
 * Deadlines. A job may carry a deadline: if it is still queued then, it is
 * taken off the queue and its expire callback runs instead of fn (on the
 * pool's timer thread), so a request whose deadline passes while it waits
 * is answered then, not when a worker frees up.
 *
 * The queue is bounded: pf_pool_submit refuses a job at once (PF_ELIMIT) when
 * `queue_limit` jobs are already waiting; the server answers 503. Jobs are
 * intrusive (the caller embeds a pf_pool_job), so submitting allocates
 * nothing.
 *
 * Thread-safe: submit, requeue, has_waiting and stats from any thread.
 */
#ifndef PF_SERVER_POOL_H
#define PF_SERVER_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "search.h"
#include "status.h"

typedef struct pf_pool pf_pool;

typedef enum pf_job_kind { PF_JOB_SEARCH = 0, PF_JOB_BUILD } pf_job_kind;

/* Runs on a worker with that worker's context. */
typedef void (*pf_pool_fn)(void *arg, pf_search_ctx *ctx);

typedef struct pf_pool_job {
    /* Set by the caller before submitting. */
    pf_pool_fn fn;
    void *arg;
    pf_job_kind kind;
    uint64_t client;      /* fair share key of a search; 0 for all jobs without one */
    uint64_t deadline_ns; /* clock.h's monotonic ns; 0 = none */
    /* With a deadline: runs instead of fn when the job is still queued at
     * its deadline, on the pool's timer thread (so it must be quick: an
     * answer, not a search). May free the job. NULL: the job waits for a
     * worker whatever its deadline. */
    void (*expire)(void *arg);
    /* Owned by the pool while queued. */
    struct pf_pool_job *next;
    uint64_t tag, seq;
    int heap_pos;
} pf_pool_job;

typedef struct pf_pool_stats {
    int workers;
    int queue_limit;
    int queued; /* searches + builds waiting */
    int queued_builds;
    int running;
    int running_builds;
    uint64_t completed;
    uint64_t rejected;         /* refused because the queue was full */
    uint64_t expired;          /* taken off the queue at their deadline */
    uint64_t requeued;         /* slices given back by long jobs */
    uint64_t completed_builds; /* writes run to their end (also in completed) */
    uint64_t writes_ahead;     /* writes started before a search queued after them */
} pf_pool_stats;

/* Starts `workers` threads and the deadline timer. PF_ENOMEM, or PF_EINVAL
 * for workers < 1 or queue_limit < 1. */
pf_status pf_pool_create(int workers, int queue_limit, pf_pool **out);

/* Queues job (which must stay valid until its fn or expire has run; they
 * may free it). PF_ELIMIT when the queue is full, PF_ECANCELED after
 * pf_pool_shutdown began; the job is not queued then. */
pf_status pf_pool_submit(pf_pool *p, pf_pool_job *job);

/* Like pf_pool_submit, but calls before(ud) once there is room and before
 * any worker can see the job, with the pool's lock held. The server
 * suspends the HTTP connection there, so a worker never resumes a
 * connection not yet suspended. before must not call into the pool. */
pf_status pf_pool_submit_with(pf_pool *p, pf_pool_job *job, void (*before)(void *ud), void *ud);

/* Called by a job's fn on its worker: queues the job again, a search
 * behind its client's share, a build (job->kind, which fn may change
 * first) at the end of the builds (never refused: it was admitted
 * already), and counts it as a slice given back, not as completed. fn
 * must return right after and not touch the job again. Its deadline and
 * expire still apply. */
void pf_pool_requeue(pf_pool *p, pf_pool_job *job);

/* Whether a search, or a write that may start now, is waiting for a
 * worker: a long job's cue to requeue itself. */
bool pf_pool_has_waiting(pf_pool *p);

void pf_pool_get_stats(pf_pool *p, pf_pool_stats *st);

/* Refuses new jobs, runs every job already queued (the expired too: their
 * fn sees the deadline passed), joins the workers. */
void pf_pool_shutdown(pf_pool *p);
/* Shuts down if needed and frees. NULL is a no-op. */
void pf_pool_destroy(pf_pool *p);

#endif
