/* routes_feature.c -- see routes_feature.h. */
#include "routes_feature.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"

pf_mapver *pf__route_feature_map(pf_req *r, pf_registry *registry, unsigned feature,
                                 const char *field) {
    pf_mapver *mv = pf_registry_get(registry, pf_req_map_id(r));
    pf_proto_error e;
    if (!mv) {
        pf_req_answer_no_map(r);
        return NULL;
    }
    if (!pf_kind_has(mv->kind, feature)) {
        pf_kind_refuse(&e, mv->kind, mv->id, feature, field);
        pf_mapver_release(mv);
        pf_req_answer_perror(r, &e);
        return NULL;
    }
    return mv;
}

typedef struct feature_job {
    const pf_feature_route *f;
    const pf_config *cfg;           /* slice_ms */
    const pf_kind_request_ops *ops; /* the kind's that parsed req */
    pf_mapver *mv;                  /* a reference */
    void *req;
    uint64_t t0_ns, deadline_ns;
    pf_mem *mem;    /* the budget a paused run's state is charged to */
    size_t charged; /* PF_MEM_SCRATCH: what req holds while the job waits */
} feature_job;

static void free_feature_job(void *p) {
    feature_job *job = p;
    pf_mem_uncharge(job->mem, PF_MEM_SCRATCH, job->charged);
    pf_mapver_release(job->mv);
    if (job->req) job->ops->free_req(job->req);
    free(job);
}

static void answer_deadline(pf_req *r, const feature_job *job) {
    pf_req_answer_error(
        r, PF_ERR_DEADLINE, NULL, "The deadline of %llu ms passed before the %s was ready.",
        (unsigned long long)((job->deadline_ns - job->t0_ns) / 1000000ull), job->f->what);
}

/* Runs the request's parts on this worker until it is answered (false)
 * or paused and queued again (true: r is not the caller's now). Past each
 * --slice-ms the kind pauses; when another request waits for a worker the
 * job gives this one back (pf_req_yield) with what the run holds charged
 * to the memory budget, and goes on later on any worker, as a batch of
 * paths does between queries. When the budget cannot take it, or nobody
 * waits, the run simply goes on. */
static bool run_parts(pf_req *r, pf_search_ctx *ctx, feature_job *job, pf_jsonw *w,
                      pf_proto_error *e, pf_status *st) {
    pf_kind_slice s = {&job->deadline_ns, (uint64_t)job->cfg->slice_ms * 1000000ull, 0, false, 0};
    s.slice_end = pf_clock_now_ns() + s.slice_ns;
    for (;;) {
        s.paused = false;
        s.held = 0;
        *st = job->ops->run(job->mv, ctx, job->req, &s, w, e);
        if (*st || !s.paused) return false;
        if (s.held && !pf_mem_try_charge(job->mem, PF_MEM_SCRATCH, s.held)) continue;
        job->charged = s.held;
        if (pf_req_yield(r)) return true; /* the rest later; r is not ours now */
        pf_mem_uncharge(job->mem, PF_MEM_SCRATCH, job->charged);
        job->charged = 0;
    }
}

/* Job: the kind runs the request with the worker's search context. */
static void run_feature(pf_req *r, pf_search_ctx *ctx) {
    feature_job *job = pf_req_state(r);
    pf_proto_error e;
    pf_jsonw w;
    pf_status st;
    pf_mem_uncharge(job->mem, PF_MEM_SCRATCH, job->charged); /* it runs again */
    job->charged = 0;
    if (pf_clock_now_ns() >= job->deadline_ns) {
        answer_deadline(r, job);
    } else if (job->ops->builds && job->ops->builds(job->mv, job->req) && pf_req_run_as_build(r)) {
        return; /* it builds data first: again in the build queue */
    } else if (!ctx) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
    } else if (run_parts(r, ctx, job, &w, &e, &st)) {
        return; /* paused: again in the queue */
    } else if (st == PF_OK) {
        pf_req_answer_json(r, &w);
    } else if (st == PF_ECANCELED) {
        answer_deadline(r, job);
    } else {
        pf_req_answer_perror(r, &e);
    }
    pf_req_finish(r);
}

/* The environment that parses a request for a map that does not exist:
 * the first kind with the feature. */
static const pf_kind_env *env_without_map(const pf_kinds *kinds, unsigned feature) {
    for (size_t i = 0; pf_kinds_registered[i]; i++)
        if (pf_kind_has(pf_kinds_registered[i], feature))
            return pf_kinds_env(kinds, pf_kinds_registered[i]);
    return NULL;
}

void pf__route_feature(pf_req *r, pf_registry *registry, const pf_kinds *kinds,
                       const pf_config *cfg, pf_mem *mem, const pf_feature_route *f) {
    feature_job *job = calloc(1, sizeof(*job));
    const pf_kind_env *env;
    pf_proto_error e;
    int64_t deadline_ms = 0;
    size_t len;
    const char *body = pf_req_body(r, &len);
    pf_jsonw w;
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->f = f;
    job->cfg = cfg;
    job->mem = mem;
    job->t0_ns = pf_req_arrival_ns(r);
    pf_req_set_state(r, job, free_feature_job);
    job->mv = pf_registry_get(registry, pf_req_map_id(r));
    if (job->mv && !pf_kind_has(job->mv->kind, f->feature)) {
        pf_kind_refuse(&e, job->mv->kind, job->mv->id, f->feature, "id");
        pf_req_answer_perror(r, &e);
        return;
    }
    env = job->mv ? pf_kinds_env(kinds, job->mv->kind) : env_without_map(kinds, f->feature);
    job->ops = f->ops(env->kind);
    if (job->ops->parse(env, body, len, &job->req, &deadline_ms, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    if (!job->mv) {
        pf_req_answer_no_map(r);
        return;
    }
    /* As a path query's: a deadline past --max-deadline-ms is refused,
     * not cut, so a client never waits on a deadline it did not get. */
    if (deadline_ms > cfg->max_deadline_ms) {
        pf_req_answer_error(r, PF_ERR_INVALID_VALUE, "deadline_ms",
                            "deadline_ms %lld is above this server's max_deadline_ms (%lld).",
                            (long long)deadline_ms, (long long)cfg->max_deadline_ms);
        return;
    }
    job->deadline_ns =
        job->t0_ns + (uint64_t)(deadline_ms ? deadline_ms : cfg->deadline_ms) * 1000000ull;
    if (job->ops->cached && job->ops->cached(job->mv, job->req, &w)) {
        pf_req_answer_json(r, &w);
        return;
    }
    pf_req_set_deadline(r, job->deadline_ns); /* also while it waits for a worker */
    pf_req_dispatch(r, PF_JOB_SEARCH, run_feature);
}
