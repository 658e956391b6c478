/* pool.h -- the bounded worker pool every search and map build runs on.
 *
 * N worker threads (libuv threads, mutex and condition variable), each owning
 * one pf_search_ctx that it hands to every job it runs, so search scratch
 * memory is reused across queries. Jobs wait in two FIFO queues: searches and
 * map builds. Searches go first; at most max(1, workers - 1) builds run at a
 * time, so uploading a big map never stalls queries to other maps.
 *
 * The queue is bounded: pf_pool_submit refuses a job at once (PF_ELIMIT) when
 * `queue_limit` jobs are already waiting; the server answers 503. Jobs are
 * intrusive (the caller embeds a pf_pool_job), so submitting allocates
 * nothing.
 *
 * Thread-safe: submit and stats from any thread.
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
    struct pf_pool_job *next; /* owned by the pool while queued */
    pf_pool_fn fn;
    void *arg;
    pf_job_kind kind;
} pf_pool_job;

typedef struct pf_pool_stats {
    int workers;
    int queue_limit;
    int queued; /* searches + builds waiting */
    int queued_builds;
    int running;
    int running_builds;
    uint64_t completed;
    uint64_t rejected; /* refused because the queue was full */
} pf_pool_stats;

/* Starts `workers` threads. PF_ENOMEM, or PF_EINVAL for workers < 1 or
 * queue_limit < 1. */
pf_status pf_pool_create(int workers, int queue_limit, pf_pool **out);

/* Queues job (which must stay valid until its fn has run; fn may free it).
 * PF_ELIMIT when the queue is full, PF_ECANCELED after pf_pool_shutdown
 * began; the job is not queued then. */
pf_status pf_pool_submit(pf_pool *p, pf_pool_job *job);

/* Like pf_pool_submit, but calls before(ud) once there is room and before
 * any worker can see the job, with the pool's lock held. The server
 * suspends the HTTP connection there, so a worker never resumes a
 * connection not yet suspended. before must not call into the pool. */
pf_status pf_pool_submit_with(pf_pool *p, pf_pool_job *job, void (*before)(void *ud), void *ud);

void pf_pool_get_stats(pf_pool *p, pf_pool_stats *st);

/* Refuses new jobs, runs every job already queued, joins the workers. */
void pf_pool_shutdown(pf_pool *p);
/* Shuts down if needed and frees. NULL is a no-op. */
void pf_pool_destroy(pf_pool *p);

#endif
