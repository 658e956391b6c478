/* routes_paths.c -- the path routes; see routes_paths.h. */
#include "routes_paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "request.h"

/* Query-string arguments a GET .../path may have. */
#define MAX_ARGS 32

/* What a path request keeps from its handler to its job. */
typedef struct paths_job {
    pf_paths_routes *m;
    pf_mapver *mv;          /* a reference */
    const pf_kind_env *env; /* the kind that parsed the queries: mv's (the default's without mv) */
    void *queries;          /* the kind's (kind.h), nqueries of them */
    size_t nqueries;
    bool batch;
    uint64_t t0_ns, deadline_ns;
    /* A batch between slices (pf_req_yield): the answer so far and the
     * next query. */
    pf_jsonw w;
    bool begun;
    size_t next;
} paths_job;

static void free_paths_job(void *p) {
    paths_job *job = p;
    pf_mapver_release(job->mv);
    if (job->queries) job->env->kind->paths_free(job->queries, job->nqueries);
    if (job->begun) pf_jsonw_free(&job->w);
    free(job);
}

/* Writes the error slot of one batch query: the error and the HTTP
 * status it would have had alone. */
static void write_slot_error(pf_jsonw *w, const pf_proto_error *e) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_kint(w, "status", pf_error_http_status(e->code));
    pf_jsonw_key(w, "error");
    pf_proto_write_error_obj(w, e->code, e->message, e->field);
    pf_jsonw_obj_end(w);
}

static void answer_deadline(pf_req *r, const paths_job *job) {
    pf_req_answer_error(r, PF_ERR_DEADLINE, NULL,
                        "The deadline of %llu ms passed before the answer was ready.",
                        (unsigned long long)((job->deadline_ns - job->t0_ns) / 1000000ull));
}

/* A batch's answer so far, kept in its job between slices: begun on its
 * first slice (batch_begin, which returns when the slice ends) and sent
 * when its last query is in (batch_answer). */
static uint64_t batch_begin(paths_job *job) {
    if (!job->begun) {
        pf_jsonw_init(&job->w, 512 * job->nqueries);
        job->begun = true;
        pf_jsonw_obj_begin(&job->w);
        pf_jsonw_key(&job->w, "results");
        pf_jsonw_arr_begin(&job->w);
    }
    return pf_clock_now_ns() + (uint64_t)job->m->cfg->slice_ms * 1000000ull;
}

static void batch_answer(pf_req *r, paths_job *job) {
    pf_jsonw_arr_end(&job->w);
    pf_jsonw_kuint(&job->w, "map_version", job->mv->version);
    pf_jsonw_obj_end(&job->w);
    pf_req_answer_json(r, &job->w);
    job->begun = false; /* the answer took the buffer */
}

/* Whether query i builds data before it runs (kind.h's path_builds). */
static bool builds(const paths_job *job, size_t i) {
    const pf_kind_ops *kind = job->env->kind;
    return kind->path_builds && i < job->nqueries && kind->path_builds(job->mv, job->queries, i);
}

/* Job: one path query or a batch, each query run by the map's kind with
 * the scratch it borrows for the run (the worker's search context, a
 * navmesh query). A batch runs its queries in slices of --slice-ms: past
 * one, when another search waits for a worker, it gives its scratch back,
 * queues itself again (pf_req_yield) and goes on later from its next
 * query, so long batches share the workers with everything else. Its
 * queries share the request's one deadline. */
static void run_paths(pf_req *r, pf_search_ctx *ctx) {
    paths_job *job = pf_req_state(r);
    const pf_kind_ops *kind = job->env->kind;
    pf_kind_path_run run = {job->mv, NULL, &job->deadline_ns, job->batch};
    pf_proto_error e;
    pf_status st = PF_OK;
    uint64_t slice_end;

    if (pf_clock_now_ns() >= job->deadline_ns) {
        answer_deadline(r, job); /* its deadline passed before it ran (on) */
        goto out_finish;
    }
    /* A query that builds data first (a new agent size) runs in the build
     * queue, so such builds never hold every worker (pool.h): its job
     * moves there and runs again; a batch goes on there until it yields. */
    if (builds(job, job->next) && pf_req_run_as_build(r)) return;
    if (!(run.scratch = kind->scratch_get(job->env, ctx))) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        goto out_finish;
    }
    if (!job->batch) {
        pf_jsonw w;
        pf_jsonw_init(&w, 4096);
        st = kind->path_run(&run, job->queries, 0, "", &w, &e);
        kind->scratch_put(job->env, run.scratch);
        if (st == PF_OK)
            pf_req_answer_json(r, &w);
        else if (st == PF_ECANCELED)
            answer_deadline(r, job);
        else
            pf_req_answer_perror(r, &e);
        if (st != PF_OK) pf_jsonw_free(&w);
        goto out_finish;
    }
    slice_end = batch_begin(job);
    while (job->next < job->nqueries) {
        char prefix[32];
        if (builds(job, job->next)) {
            /* The scratch goes back before the job is queued again: it may
             * run (and end) at once on another worker. */
            kind->scratch_put(job->env, run.scratch);
            if (pf_req_run_as_build(r)) return; /* r is not ours now */
            if (!(run.scratch = kind->scratch_get(job->env, ctx))) {
                pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
                goto out_finish;
            }
        }
        snprintf(prefix, sizeof(prefix), "queries[%zu].", job->next);
        st = kind->path_run(&run, job->queries, job->next, prefix, &job->w, &e);
        if (st == PF_ECANCELED) break;
        /* One bad query does not sink the batch: its slot holds the error. */
        if (st != PF_OK) write_slot_error(&job->w, &e);
        job->next++;
        if (job->next < job->nqueries && pf_clock_now_ns() >= slice_end) {
            /* The scratch goes back first: the job may run again at once
             * on another worker. */
            kind->scratch_put(job->env, run.scratch);
            if (pf_req_yield(r)) return; /* the rest later; r is not ours now */
            if (!(run.scratch = kind->scratch_get(job->env, ctx))) {
                pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
                goto out_finish;
            }
            slice_end = pf_clock_now_ns() + (uint64_t)job->m->cfg->slice_ms * 1000000ull;
        }
    }
    kind->scratch_put(job->env, run.scratch);
    if (st == PF_ECANCELED)
        answer_deadline(r, job);
    else
        batch_answer(r, job);
out_finish:
    pf_req_finish(r);
}

/* How the three routes send their queries. */
typedef enum form { FORM_QUERY, FORM_ONE, FORM_BATCH } form;

/* The queries of r in `form`, parsed by env's kind. */
static pf_status parse(pf_req *r, paths_job *job, form f, int64_t *deadline_ms, pf_proto_error *e) {
    const pf_kind_ops *kind = job->env->kind;
    size_t len;
    const char *body;
    if (f == FORM_QUERY) {
        pf_kv kv[MAX_ARGS];
        size_t n;
        if (!pf_req_query(r, kv, MAX_ARGS, &n))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, NULL,
                                      "Too many parameters.");
        job->nqueries = 1;
        return kind->path_parse_one(job->env, kv, n, NULL, 0, &job->queries, deadline_ms, e);
    }
    body = pf_req_body(r, &len);
    if (f == FORM_ONE) {
        job->nqueries = 1;
        return kind->path_parse_one(job->env, NULL, 0, body, len, &job->queries, deadline_ms, e);
    }
    return kind->path_parse_batch(job->env, body, len, (size_t)job->m->cfg->max_batch,
                                  &job->queries, &job->nqueries, deadline_ms, e);
}

/* The common part of the three routes: the map, the request parsed by its
 * kind, the deadline, the cache, the job. */
static void handle(pf_req *r, pf_paths_routes *m, form f) {
    paths_job *job = calloc(1, sizeof(*job));
    pf_proto_error e;
    int64_t deadline_ms = 0;
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->m = m;
    job->batch = f == FORM_BATCH;
    job->t0_ns = pf_req_arrival_ns(r);
    job->mv = pf_registry_get(m->registry, pf_req_map_id(r));
    /* The queries are the map's kind's (the version referenced here, so
     * its kind cannot change under the job); without a map the default
     * kind's, so a malformed body is still 400 before the 404. */
    job->env = !job->mv       ? pf_kinds_default(m->kinds)
               : job->mv->env ? job->mv->env
                              : pf_kinds_env(m->kinds, job->mv->kind);
    pf_req_set_state(r, job, free_paths_job);
    memset(&e, 0, sizeof(e));
    if (parse(r, job, f, &deadline_ms, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    if (!job->mv) {
        pf_req_answer_no_map(r);
        return;
    }
    if (pf_config_check_deadline(m->cfg, deadline_ms, "", &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    job->deadline_ns =
        job->t0_ns + (uint64_t)(deadline_ms ? deadline_ms : m->cfg->deadline_ms) * 1000000ull;
    if (!job->batch) {
        /* A cached answer needs no search: answer on this thread. */
        pf_jsonw w;
        pf_jsonw_init(&w, 4096);
        if (job->env->kind->path_cached(job->mv, job->queries, 0, &w)) {
            pf_req_answer_json(r, &w);
            return;
        }
        pf_jsonw_free(&w);
    }
    pf_req_set_deadline(r, job->deadline_ns);
    pf_req_dispatch(r, PF_JOB_SEARCH, run_paths);
}

void pf__route_path_get(pf_req *r, pf_paths_routes *m) { handle(r, m, FORM_QUERY); }

void pf__route_path_post(pf_req *r, pf_paths_routes *m) { handle(r, m, FORM_ONE); }

void pf__route_paths_post(pf_req *r, pf_paths_routes *m) { handle(r, m, FORM_BATCH); }
