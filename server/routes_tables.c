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
} table_job;

static void free_table_job(void *p) {
    table_job *job = p;
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

/* Paths: one forward search per source; its row of costs into costs, its
 * paths into pw as one array. PF_ELIMIT once the paths pass
 * max_table_path_cells. */
static pf_status run_with_paths(pf_search_ctx *ctx, const pf_grid *g, table_job *job, double *costs,
                                pf_jsonw *pw, uint64_t *expanded) {
    const pf_table_request *q = &job->q;
    int64_t cells = 0;
    pf_status st = PF_OK;
    pf_jsonw_arr_begin(pw);
    for (size_t i = 0; i < q->nsources && !st; i++) {
        uint64_t ex = 0;
        double *row = costs + i * q->ntargets;
        st = pf_table_search(ctx, g, q->sources[i], q->targets, q->ntargets, false,
                             pf_clock_deadline_passed, &job->deadline_ns, row, &ex);
        *expanded += ex;
        pf_jsonw_arr_begin(pw);
        for (size_t j = 0; j < q->ntargets && !st; j++) {
            const pf_point *path = NULL;
            size_t len = 0;
            if (isfinite(row[j]) && (st = pf_table_path(ctx, g, q->targets[j], &path, &len))) break;
            if ((cells += (int64_t)len) > job->m->cfg->max_table_path_cells) {
                st = PF_ELIMIT;
                break;
            }
            pf_table_write_path(pw, path, len);
        }
        pf_jsonw_arr_end(pw);
    }
    pf_jsonw_arr_end(pw);
    return st;
}

static void run_table(pf_req *r, pf_search_ctx *ctx) {
    table_job *job = pf_req_state(r);
    pf_tables_routes *m = job->m;
    const pf_table_request *q = &job->q;
    const pf_grid *g;
    pf_proto_error e;
    pf_table_stats ts;
    pf_table_answer a;
    pf_jsonw w, pw;
    double *costs = NULL;
    uint64_t t0 = pf_clock_now_ns(), expanded = 0;
    size_t reserved;
    pf_status st;

    memset(&pw, 0, sizeof(pw));
    if (pf_clock_now_ns() >= job->deadline_ns) {
        answer_deadline(r, job);
        goto out_finish;
    }
    if (!ctx || !(costs = malloc(q->nsources * q->ntargets * sizeof(*costs)))) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        goto out_finish;
    }
    /* The agent's grid, built (within the memory budget and the deadline)
     * on first use, in the build queue (pf_req_run_as_build). */
    if (pf_planner_agent_pending(job->mv->planner, q->agent_size, false) &&
        pf_req_run_as_build(r)) {
        free(costs);
        return;
    }
    if (pf_mapver_reserve_agent(job->mv, q->agent_size, false, &reserved, "agent_size", &e)) {
        pf_req_answer_perror(r, &e);
        goto out_finish;
    }
    {
        pf_build_stop bs = pf_build_stop_make(pf_clock_deadline_passed, &job->deadline_ns);
        st = pf_planner_agent_grid(job->mv->planner, q->agent_size, &bs, &g);
    }
    pf_mapver_settle(job->mv, reserved);
    if (st == PF_ECANCELED) {
        answer_deadline(r, job);
        goto out_finish;
    }
    if (st) {
        pf_req_answer_error(r, pf_error_for_status(st), NULL, "Preparing agent size %d failed: %s.",
                            (int)q->agent_size, pf_status_str(st));
        goto out_finish;
    }
    if (check_points(g, q->sources, q->nsources, "sources", q->agent_size, &e) ||
        check_points(g, q->targets, q->ntargets, "targets", q->agent_size, &e)) {
        pf_req_answer_perror(r, &e);
        goto out_finish;
    }
    memset(&ts, 0, sizeof(ts));
    if (q->paths) {
        pf_jsonw_init(&pw, q->nsources * q->ntargets * 64 + 16);
        st = run_with_paths(ctx, g, job, costs, &pw, &expanded);
        ts.searches = q->nsources;
        ts.expanded = expanded;
    } else {
        st = pf_table_compute(ctx, g, q->sources, q->nsources, q->targets, q->ntargets,
                              PF_TABLE_AUTO, pf_clock_deadline_passed, &job->deadline_ns, costs,
                              &ts);
    }
    /* A table's searches are Dijkstras: counted as one dijkstra search of
     * their expansions and time together. */
    pf_metrics_count_search(m->metrics, PF_ALGO_DIJKSTRA, st, ts.expanded,
                            (pf_clock_now_ns() - t0) / 1000);
    if (st == PF_ECANCELED) {
        answer_deadline(r, job);
        goto out_finish;
    }
    if (st == PF_ELIMIT) {
        pf_req_answer_error(r, PF_ERR_LIMIT_EXCEEDED, "paths",
                            "The paths of this table hold more than %lld cells (this server's "
                            "max_table_path_cells); ask for fewer entries or no paths.",
                            (long long)m->cfg->max_table_path_cells);
        goto out_finish;
    }
    if (st || (q->paths && pf_jsonw_failed(&pw))) {
        pf_req_answer_error(r, st ? pf_error_for_status(st) : PF_ERR_NO_MEMORY, NULL,
                            "The table failed: %s.", pf_status_str(st ? st : PF_ENOMEM));
        goto out_finish;
    }
    memset(&a, 0, sizeof(a));
    a.costs = costs;
    a.nsources = q->nsources;
    a.ntargets = q->ntargets;
    a.paths_json = q->paths ? pw.buf : NULL;
    a.paths_len = q->paths ? pw.len : 0;
    a.agent_size = q->agent_size;
    a.map_version = job->mv->version;
    a.searches = ts.searches;
    a.expanded = ts.expanded;
    a.backward = ts.backward;
    a.time_us = (pf_clock_now_ns() - t0) / 1000;
    pf_jsonw_init(&w, q->nsources * q->ntargets * 12 + (q->paths ? pw.len : 0) + 256);
    pf_table_write_answer(&w, &a);
    pf_req_answer_json(r, &w);
out_finish:
    if (pw.buf) pf_jsonw_free(&pw);
    free(costs);
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
    job->deadline_ns =
        job->t0_ns +
        (uint64_t)(job->q.deadline_ms ? job->q.deadline_ms : m->cfg->deadline_ms) * 1000000ull;
    pf_req_dispatch(r, PF_JOB_SEARCH, run_table);
}
