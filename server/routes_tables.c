/* routes_tables.c -- the distance table route; see routes_tables.h. */
#include "routes_tables.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "planner.h"
#include "request.h"
#include "table.h"
#include "table_json.h"

typedef struct table_job {
    pf_tables_routes *m;
    pf_mapver *mv; /* a reference */
    pf_table_request q;
    uint64_t t0_ns, deadline_ns;
    /* Between slices (the job gives its worker back, pf_req_yield). */
    bool begun;
    const pf_grid *g; /* the agent's grid, of mv */
    pf_table_run t;
    double *costs;
    pf_jsonw pw; /* the paths so far, with paths */
    int64_t path_cells;
    uint64_t run_us; /* time on workers */
} table_job;

static void free_table_job(void *p) {
    table_job *job = p;
    pf_table_run_clear(&job->t);
    free(job->costs);
    if (job->pw.buf) pf_jsonw_free(&job->pw);
    pf_mapver_release(job->mv);
    pf_table_request_clear(&job->q);
    free(job);
}

static pf_status check_points(const pf_grid *g, const pf_point *p, size_t n, const char *name,
                              int32_t agent_size, pf_proto_error *e) {
    char f[40];
    for (size_t i = 0; i < n; i++) {
        if (pf_grid_is_walkable(g, p[i])) continue;
        snprintf(f, sizeof(f), "%s[%zu]", name, i);
        if (!pf_grid_in_bounds(g, p[i]))
            return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                      "%s (%d,%d) is outside the %dx%d map.", f, (int)p[i].x,
                                      (int)p[i].y, (int)pf_grid_width(g), (int)pf_grid_height(g));
        if (agent_size > 1)
            return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                      "%s (%d,%d): an agent of size %d does not fit there.", f,
                                      (int)p[i].x, (int)p[i].y, (int)agent_size);
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                  "%s (%d,%d) is a blocked cell.", f, (int)p[i].x, (int)p[i].y);
    }
    return PF_OK;
}

static void answer_deadline(pf_req *r, const table_job *job) {
    pf_req_answer_error(r, PF_ERR_DEADLINE, NULL,
                        "The deadline of %llu ms passed before the table was ready.",
                        (unsigned long long)((job->deadline_ns - job->t0_ns) / 1000000ull));
}

/* What begin_table did. */
typedef enum begin_outcome {
    BEGUN = 0, /* the run is ready */
    ANSWERED,  /* an error was answered */
    REQUEUED   /* queued again as a build: r is not the caller's now */
} begin_outcome;

/* The first slice: the agent's grid, the points, the run. */
static begin_outcome begin_table(pf_req *r, pf_search_ctx *ctx, table_job *job) {
    const pf_table_request *q = &job->q;
    pf_proto_error e;
    size_t reserved;
    pf_status st;
    /* The agent's grid, built (within the memory budget and the deadline)
     * on first use, in the build queue (pf_req_run_as_build). */
    if (pf_planner_agent_pending(job->mv->planner, q->agent_size, false) && pf_req_run_as_build(r))
        return REQUEUED;
    if (!ctx || !(job->costs = malloc(q->nsources * q->ntargets * sizeof(*job->costs)))) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return ANSWERED;
    }
    if (pf_mapver_reserve_agent(job->mv, q->agent_size, false, &reserved, "agent_size", &e)) {
        pf_req_answer_perror(r, &e);
        return ANSWERED;
    }
    {
        pf_build_stop bs = pf_build_stop_make(pf_clock_deadline_passed, &job->deadline_ns);
        st = pf_planner_agent_grid(job->mv->planner, q->agent_size, &bs, &job->g);
    }
    pf_mapver_settle(job->mv, reserved);
    if (st == PF_ECANCELED) {
        answer_deadline(r, job);
        return ANSWERED;
    }
    if (st) {
        pf_req_answer_error(r, pf_error_for_status(st), NULL, "Preparing agent size %d failed: %s.",
                            (int)q->agent_size, pf_status_str(st));
        return ANSWERED;
    }
    if (check_points(job->g, q->sources, q->nsources, "sources", q->agent_size, &e) ||
        check_points(job->g, q->targets, q->ntargets, "targets", q->agent_size, &e)) {
        pf_req_answer_perror(r, &e);
        return ANSWERED;
    }
    job->t.g = job->g;
    job->t.sources = q->sources;
    job->t.ns = q->nsources;
    job->t.targets = q->targets;
    job->t.nt = q->ntargets;
    /* Paths come from forward trees: one search per source. */
    job->t.dir = q->paths ? PF_TABLE_FORWARD : PF_TABLE_AUTO;
    /* The base grid's components (built once per map version): an agent
     * grid's moves are base moves (clearance.h's footprint rule: every
     * step of the square is a step of its anchor cell under the map's
     * rule), so cells apart on the base grid are apart for every agent.
     * NULL (no memory for them, or the deadline passed while they were
     * built) only costs the searches. */
    {
        /* Built once per version, under this request's deadline. */
        pf_build_stop bs = pf_build_stop_make(pf_clock_deadline_passed, &job->deadline_ns);
        job->t.components = pf_planner_cuts(job->mv->planner, &bs);
    }
    job->t.max_expanded = (uint64_t)job->m->cfg->max_request_expanded;
    job->t.stop = pf_clock_deadline_passed;
    job->t.stop_ud = &job->deadline_ns;
    job->t.costs = job->costs;
    if ((st = pf_table_run_init(&job->t))) {
        pf_req_answer_error(r, pf_error_for_status(st), NULL, "The table failed: %s.",
                            pf_status_str(st));
        return ANSWERED;
    }
    if (q->paths) {
        pf_jsonw_init(&job->pw, q->nsources * q->ntargets * 64 + 16);
        pf_jsonw_arr_begin(&job->pw);
    }
    job->begun = true;
    return BEGUN;
}

/* The paths of the row the last search ran, into job->pw. PF_ELIMIT once
 * they pass max_table_path_cells. */
static pf_status write_row_paths(pf_search_ctx *ctx, table_job *job, size_t i) {
    const pf_table_request *q = &job->q;
    const double *row = job->costs + i * q->ntargets;
    pf_status st = PF_OK;
    pf_jsonw_arr_begin(&job->pw);
    for (size_t j = 0; j < q->ntargets && !st; j++) {
        const pf_point *path = NULL;
        size_t len = 0;
        /* A finite cost was settled by this row's search, on this ctx. */
        if (isfinite(row[j]) && (st = pf_table_path(ctx, job->g, q->targets[j], &path, &len)))
            break;
        if ((job->path_cells += (int64_t)len) > job->m->cfg->max_table_path_cells) {
            st = PF_ELIMIT;
            break;
        }
        pf_table_write_path(&job->pw, path, len);
    }
    pf_jsonw_arr_end(&job->pw);
    return st;
}

static void answer_table(pf_req *r, table_job *job) {
    const pf_table_request *q = &job->q;
    pf_table_answer a;
    pf_jsonw w;
    if (q->paths) pf_jsonw_arr_end(&job->pw);
    if (q->paths && pf_jsonw_failed(&job->pw)) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, "The table failed: out of memory.");
        return;
    }
    memset(&a, 0, sizeof(a));
    a.costs = job->costs;
    a.nsources = q->nsources;
    a.ntargets = q->ntargets;
    a.paths_json = q->paths ? job->pw.buf : NULL;
    a.paths_len = q->paths ? job->pw.len : 0;
    a.agent_size = q->agent_size;
    a.map_version = job->mv->version;
    a.searches = job->t.stats.searches;
    a.expanded = job->t.stats.expanded;
    a.unreachable = job->t.unreachable;
    a.backward = job->t.stats.backward;
    a.time_us = job->run_us;
    pf_jsonw_init(&w, q->nsources * q->ntargets * 12 + (q->paths ? job->pw.len : 0) + 256);
    pf_table_write_answer(&w, &a);
    pf_req_answer_json(r, &w);
}

/* Job: the table, one search (a row or a column) at a time. Past each
 * --slice-ms, when another request waits for a worker, it queues itself
 * again (pf_req_yield) and goes on later from its next search, as a batch
 * of paths does between queries. Pairs in two components are answered
 * from the components without a search, each search stops once the
 * targets it can reach are settled, and all searches together settle at
 * most --max-request-expanded cells. */
static void run_table(pf_req *r, pf_search_ctx *ctx) {
    table_job *job = pf_req_state(r);
    pf_tables_routes *m = job->m;
    uint64_t t0 = pf_clock_now_ns(), slice_end = t0 + (uint64_t)m->cfg->slice_ms * 1000000ull;
    pf_status st = PF_OK;

    if (t0 >= job->deadline_ns) {
        answer_deadline(r, job);
        goto out_finish;
    }
    if (!job->begun) {
        begin_outcome b = begin_table(r, ctx, job);
        if (b == REQUEUED) return; /* the agent's grid is built first, in the build queue */
        if (b == ANSWERED) goto out_finish;
    }
    if (!ctx) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        goto out_finish;
    }
    while (!pf_table_run_done(&job->t)) {
        size_t row = job->t.next;
        if ((st = pf_table_run_next(ctx, &job->t))) break;
        if (job->q.paths && (st = write_row_paths(ctx, job, row))) break;
        if (!pf_table_run_done(&job->t) && pf_clock_now_ns() >= slice_end && pf_req_yield(r)) {
            job->run_us += (pf_clock_now_ns() - t0) / 1000;
            return; /* another request waited: the rest later; r is not ours now */
        }
    }
    job->run_us += (pf_clock_now_ns() - t0) / 1000;
    /* A table's searches are Dijkstras: counted as one dijkstra search of
     * their expansions and time together. */
    if (st || pf_table_run_done(&job->t))
        pf_metrics_count_search(m->metrics, PF_ALGO_DIJKSTRA, st, job->t.stats.expanded,
                                job->run_us);
    if (st == PF_ECANCELED) {
        answer_deadline(r, job);
    } else if (st == PF_ELIMIT && job->path_cells > m->cfg->max_table_path_cells) {
        pf_req_answer_error(r, PF_ERR_LIMIT_EXCEEDED, "paths",
                            "The paths of this table hold more than %lld cells (this server's "
                            "max_table_path_cells); ask for fewer entries or no paths.",
                            (long long)m->cfg->max_table_path_cells);
    } else if (st == PF_ELIMIT) {
        pf_req_answer_error(r, PF_ERR_LIMIT_EXCEEDED, NULL,
                            "The table's searches settled %llu cells, this server's "
                            "max_request_expanded; ask for fewer sources or targets, or nearer "
                            "ones.",
                            (unsigned long long)m->cfg->max_request_expanded);
    } else if (st) {
        pf_req_answer_error(r, pf_error_for_status(st), NULL, "The table failed: %s.",
                            pf_status_str(st));
    } else {
        answer_table(r, job);
    }
out_finish:
    pf_req_finish(r);
}

void pf__route_table_post(pf_req *r, pf_tables_routes *m) {
    table_job *job = calloc(1, sizeof(*job));
    pf_table_limits lim = {(size_t)m->cfg->max_table_entries, (size_t)m->cfg->max_table_paths,
                           (int32_t)m->cfg->max_agent_size};
    pf_proto_error e;
    size_t len;
    const char *body = pf_req_body(r, &len);
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->m = m;
    job->t0_ns = pf_req_arrival_ns(r);
    pf_req_set_state(r, job, free_table_job);
    /* A navmesh map has no cells: refused before the body is read
     * (its points would be [x, y] cells). */
    job->mv = pf_registry_get(m->registry, pf_req_map_id(r));
    if (job->mv && job->mv->nav) {
        pf_req_answer_error(r, PF_ERR_UNSUPPORTED, "id",
                            "Map '%s' is a navmesh: distance tables are for grid maps (use POST "
                            "/v1/maps/%s/paths, a batch of paths).",
                            pf_req_map_id(r), pf_req_map_id(r));
        return;
    }
    if (pf_table_request_parse(body, len, &lim, &job->q, &e)) {
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
    pf_req_set_deadline(r, job->deadline_ns); /* also while it waits for a worker */
    pf_req_dispatch(r, PF_JOB_SEARCH, run_table);
}
