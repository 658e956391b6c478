/* routes_fields.c -- the flow field route; see routes_fields.h. */
#include "routes_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "flowfield_json.h"
#include "planner.h"
#include "request.h"

typedef struct field_job {
    pf_fields_routes *m;
    pf_mapver *mv; /* a reference */
    pf_flow_request q;
    uint64_t t0_ns, deadline_ns;
    /* Between slices (the job gives its worker back, pf_req_yield). */
    pf_flow_build *b; /* NULL before the first slice */
    pf_box box;
    size_t charged;     /* PF_MEM_SCRATCH: what b holds while the job waits */
    uint64_t slice_end; /* the current slice's end (monotonic ns) */
    uint64_t run_us;    /* time on workers */
} field_job;

static void free_field_job(void *p) {
    field_job *job = p;
    pf_mem_uncharge(job->m->mem, PF_MEM_SCRATCH, job->charged);
    pf_flow_build_free(job->b);
    pf_mapver_release(job->mv);
    pf_flow_request_clear(&job->q);
    free(job);
}

static pf_cache_key field_key(const pf_mapver *mv, const pf_flow_request *q) {
    pf_point none = {0, 0};
    pf_cache_key k =
        pf_cache_key_make(none, none, PF_ALGO_DIJKSTRA, PF_H_DEFAULT, 0, false, 0, mv->version);
    int32_t head[9] = {0x666c6f77 /* "flow" */,
                       q->agent_size,
                       q->costs,
                       q->has_region,
                       q->has_region ? q->region.x : 0,
                       q->has_region ? q->region.y : 0,
                       q->has_region ? q->region.w : 0,
                       q->has_region ? q->region.h : 0,
                       (int32_t)q->ngoals};
    pf_cache_key_extra2(&k, head, sizeof(head), q->goals, q->ngoals * sizeof(*q->goals));
    return k;
}

static bool cacheable(const pf_fields_routes *m, const pf_mapver *mv, const pf_flow_request *q) {
    return q->use_cache && mv->fields && m->cfg->flowfield_cache_entries > 0;
}

/* On a hit writes the cached field with fresh stats and returns true. */
static bool answer_from_cache(pf_fields_routes *m, const pf_mapver *mv, const pf_flow_request *q,
                              pf_jsonw *w) {
    pf_cache_key k;
    pf_cache_value v;
    uint64_t t0 = pf_clock_now_ns();
    bool hit;
    if (!cacheable(m, mv, q)) return false;
    k = field_key(mv, q);
    hit = pf_cache_get(mv->fields, &k, &v);
    pf_metrics_count_cache(m->metrics, hit);
    if (!hit) return false;
    pf_jsonw_init(w, v.len + 128);
    pf_jsonw_obj_begin(w);
    pf_jsonw_raw_members(w, v.json, v.len);
    pf_flow_write_stats(w, 0, (pf_clock_now_ns() - t0) / 1000, true);
    pf_jsonw_obj_end(w);
    free(v.json);
    return true;
}

/* The goals against g (the agent's grid) and the box: field names match
 * the request's form. */
static pf_status check_goals(const pf_grid *g, const pf_flow_request *q, pf_box box,
                             pf_proto_error *e) {
    char f[32];
    for (size_t i = 0; i < q->ngoals; i++) {
        pf_point p = q->goals[i];
        if (q->goals_list)
            snprintf(f, sizeof(f), "goals[%zu]", i);
        else
            snprintf(f, sizeof(f), "goal");
        if (p.x < box.x || p.y < box.y || p.x - box.x >= box.w || p.y - box.y >= box.h)
            return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                      "%s (%d,%d) is outside the %s.", f, (int)p.x, (int)p.y,
                                      q->has_region ? "region" : "map");
        if (!pf_grid_is_walkable(g, p)) {
            if (q->agent_size > 1)
                return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                          "%s (%d,%d): an agent of size %d does not fit there.", f,
                                          (int)p.x, (int)p.y, (int)q->agent_size);
            return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                      "%s (%d,%d) is a blocked cell.", f, (int)p.x, (int)p.y);
        }
    }
    return PF_OK;
}

static void answer_deadline(pf_req *r, const field_job *job) {
    pf_req_answer_error(r, PF_ERR_DEADLINE, NULL,
                        "The deadline of %llu ms passed before the flow field was ready.",
                        (unsigned long long)((job->deadline_ns - job->t0_ns) / 1000000ull));
}

/* The search's cue to pause: its slice is over. */
static bool slice_over(void *ud) {
    const field_job *job = ud;
    return pf_clock_now_ns() >= job->slice_end;
}

/* What begin_field did. */
typedef enum begin_outcome {
    BEGUN = 0, /* the search is started */
    ANSWERED,  /* an error was answered */
    REQUEUED   /* queued again as a build: r is not the caller's now */
} begin_outcome;

/* The first slice: the agent's grid, the box, the goals, the search
 * started. */
static begin_outcome begin_field(pf_req *r, pf_search_ctx *ctx, field_job *job) {
    pf_fields_routes *m = job->m;
    const pf_mapver *mv = job->mv;
    const pf_flow_request *q = &job->q;
    const pf_grid *g;
    pf_flow_query fq;
    pf_proto_error e;
    size_t reserved;
    pf_status st;
    /* The agent's grid, built (within the memory budget and the deadline)
     * on first use, in the build queue (pf_req_run_as_build). */
    if (pf_planner_agent_pending(mv->planner, q->agent_size, false) && pf_req_run_as_build(r))
        return REQUEUED;
    if (pf_mapver_reserve_agent(mv, q->agent_size, false, &reserved, "agent_size", &e)) {
        pf_req_answer_perror(r, &e);
        return ANSWERED;
    }
    {
        pf_build_stop bs = pf_build_stop_make(pf_clock_deadline_passed, &job->deadline_ns);
        st = pf_planner_agent_grid(mv->planner, q->agent_size, &bs, &g);
    }
    pf_mapver_settle(mv, reserved);
    if (st == PF_ECANCELED) {
        answer_deadline(r, job);
        return ANSWERED;
    }
    if (st) {
        pf_req_answer_error(r, pf_error_for_status(st), NULL, "Preparing agent size %d failed: %s.",
                            (int)q->agent_size, pf_status_str(st));
        return ANSWERED;
    }
    job->box = (pf_box){0, 0, pf_grid_width(g), pf_grid_height(g)};
    if (q->has_region) {
        job->box = q->region;
        if (job->box.x > pf_grid_width(g) - job->box.w ||
            job->box.y > pf_grid_height(g) - job->box.h) {
            pf_req_answer_error(r, PF_ERR_OFF_MAP, "region",
                                "The region %dx%d at (%d,%d) does not lie inside the %dx%d map.",
                                (int)job->box.w, (int)job->box.h, (int)job->box.x, (int)job->box.y,
                                (int)pf_grid_width(g), (int)pf_grid_height(g));
            return ANSWERED;
        }
    }
    if ((int64_t)job->box.w * job->box.h > m->cfg->max_flowfield_cells) {
        pf_req_answer_error(r, PF_ERR_LIMIT_EXCEEDED, "region",
                            "A flow field covers at most %lld cells (this server's "
                            "max_flowfield_cells); %s has %lld: give a smaller region.",
                            (long long)m->cfg->max_flowfield_cells,
                            q->has_region ? "this region" : "the whole map",
                            (long long)job->box.w * job->box.h);
        return ANSWERED;
    }
    if (check_goals(g, q, job->box, &e)) {
        pf_req_answer_perror(r, &e);
        return ANSWERED;
    }
    memset(&fq, 0, sizeof(fq));
    fq.goals = q->goals;
    fq.ngoals = q->ngoals;
    fq.has_region = q->has_region;
    fq.region = job->box;
    fq.should_stop = pf_clock_deadline_passed;
    fq.stop_ud = &job->deadline_ns;
    fq.max_expanded = (uint64_t)m->cfg->max_request_expanded;
    if ((st = pf_flowfield_start(ctx, g, &fq, &job->b, NULL))) {
        pf_req_answer_error(r, pf_error_for_status(st), NULL, "The flow field failed: %s.",
                            pf_status_str(st));
        return ANSWERED;
    }
    return BEGUN;
}

/* Writes, caches and answers the field. */
static void answer_field(pf_req *r, field_job *job, const pf_flowfield *f) {
    pf_fields_routes *m = job->m;
    const pf_flow_request *q = &job->q;
    pf_flow_stats fs;
    pf_jsonw w;
    size_t m0;
    uint64_t t0 = pf_clock_now_ns();
    pf_flowfield_get_stats(f, &fs);
    /* A flow field is one Dijkstra: counted as one dijkstra search. */
    pf_metrics_count_search(m->metrics, PF_ALGO_DIJKSTRA, PF_OK, fs.expanded, job->run_us);
    pf_jsonw_init(&w, (size_t)job->box.w * (size_t)job->box.h * (q->costs ? 7 : 2) + 1024);
    pf_jsonw_obj_begin(&w);
    m0 = w.len;
    pf_flow_write_members(&w, f, q->goals, q->ngoals, q->agent_size, job->mv->version, q->costs);
    if (cacheable(m, job->mv, q) && !pf_jsonw_failed(&w)) {
        pf_cache_key k = field_key(job->mv, q);
        pf_cache_value v = {w.buf + m0, w.len - m0};
        pf_cache_put(job->mv->fields, &k, &v); /* a full cache or ENOMEM only loses the entry */
    }
    pf_flow_write_stats(&w, fs.expanded, job->run_us + (pf_clock_now_ns() - t0) / 1000, false);
    pf_jsonw_obj_end(&w);
    pf_req_answer_json(r, &w);
}

/* Job: build, write and cache the field. The search runs in slices of
 * --slice-ms: past one, when another request waits for a worker, the job
 * queues itself again with its search paused (pf_req_yield; the engine it
 * holds meanwhile is charged to the memory budget, and when the budget
 * cannot take it the search simply goes on) and goes on later, on any
 * worker, as a batch of paths does between queries. */
static void run_field(pf_req *r, pf_search_ctx *ctx) {
    field_job *job = pf_req_state(r);
    pf_flowfield *f = NULL;
    uint64_t t0 = pf_clock_now_ns(), run_us0 = job->run_us;
    pf_status st;

    pf_mem_uncharge(job->m->mem, PF_MEM_SCRATCH, job->charged); /* it runs again */
    job->charged = 0;
    if (t0 >= job->deadline_ns) {
        answer_deadline(r, job);
        goto out_finish;
    }
    if (!ctx) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        goto out_finish;
    }
    if (!job->b) {
        begin_outcome b = begin_field(r, ctx, job);
        if (b == REQUEUED) return; /* the agent's grid is built first, in the build queue */
        if (b == ANSWERED) goto out_finish;
    }
    for (;;) {
        size_t hold;
        job->slice_end = pf_clock_now_ns() + (uint64_t)job->m->cfg->slice_ms * 1000000ull;
        st = pf_flowfield_resume(ctx, job->b, slice_over, job, &f);
        if (st || f) break;
        /* Paused at the slice's end: give the worker back if someone waits
         * and the budget can hold the paused search. */
        hold = pf_flow_build_memory(job->b);
        if (!pf_mem_try_charge(job->m->mem, PF_MEM_SCRATCH, hold)) continue;
        job->charged = hold;
        /* Set before the yield: after it the job is not ours. */
        job->run_us = run_us0 + (pf_clock_now_ns() - t0) / 1000;
        if (pf_req_yield(r)) return; /* the rest later; r is not ours now */
        pf_mem_uncharge(job->m->mem, PF_MEM_SCRATCH, hold);
        job->charged = 0;
    }
    job->run_us = run_us0 + (pf_clock_now_ns() - t0) / 1000;
    if (st == PF_ECANCELED) {
        answer_deadline(r, job);
    } else if (st == PF_ELIMIT) {
        pf_req_answer_error(r, PF_ERR_LIMIT_EXCEEDED, NULL,
                            "The flow field's search settled %llu cells, this server's "
                            "max_request_expanded; give a smaller region.",
                            (unsigned long long)job->m->cfg->max_request_expanded);
    } else if (st) {
        pf_req_answer_error(r, pf_error_for_status(st), NULL, "The flow field failed: %s.",
                            pf_status_str(st));
    } else {
        answer_field(r, job, f);
    }
out_finish:
    pf_flowfield_destroy(f);
    pf_req_finish(r);
}

void pf__route_flowfield_post(pf_req *r, pf_fields_routes *m) {
    field_job *job = calloc(1, sizeof(*job));
    pf_flow_limits lim = {(size_t)m->cfg->max_flowfield_goals, (int32_t)m->cfg->max_agent_size};
    pf_proto_error e;
    size_t len;
    const char *body = pf_req_body(r, &len);
    pf_jsonw w;
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->m = m;
    job->t0_ns = pf_req_arrival_ns(r);
    pf_req_set_state(r, job, free_field_job);
    /* A navmesh map has no cells: refused before the body is read
     * (its points would be [x, y] cells). */
    job->mv = pf_registry_get(m->registry, pf_req_map_id(r));
    if (job->mv && job->mv->nav) {
        pf_req_answer_error(r, PF_ERR_UNSUPPORTED, "id",
                            "Map '%s' is a navmesh: flow fields are for grid maps (use POST "
                            "/v1/maps/%s/path for paths, POST /v1/maps/%s/crowds for many units).",
                            pf_req_map_id(r), pf_req_map_id(r), pf_req_map_id(r));
        return;
    }
    if (pf_flow_request_parse(body, len, &lim, &job->q, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    if (!job->mv) {
        pf_req_answer_error(r, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.",
                            pf_req_map_id(r));
        return;
    }
    /* As a path query's: a deadline past --max-deadline-ms is refused,
     * not cut, so a client never waits on a deadline it did not get. */
    if (job->q.deadline_ms > m->cfg->max_deadline_ms) {
        pf_req_answer_error(r, PF_ERR_INVALID_VALUE, "deadline_ms",
                            "deadline_ms %lld is above this server's max_deadline_ms (%lld).",
                            (long long)job->q.deadline_ms, (long long)m->cfg->max_deadline_ms);
        return;
    }
    job->deadline_ns =
        job->t0_ns +
        (uint64_t)(job->q.deadline_ms ? job->q.deadline_ms : m->cfg->deadline_ms) * 1000000ull;
    if (answer_from_cache(m, job->mv, &job->q, &w)) {
        pf_req_answer_json(r, &w);
        return;
    }
    pf_req_set_deadline(r, job->deadline_ns); /* also while it waits for a worker */
    pf_req_dispatch(r, PF_JOB_SEARCH, run_field);
}
