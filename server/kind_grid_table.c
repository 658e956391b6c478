/* kind_grid_table.c -- distance tables on a grid (PF_KIND_TABLES;
 * table_json.h): the optimal cost of every (source, target) pair, and
 * their paths when asked, on the agent size's grid (core/table.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kind_grid_internal.h"
#include "table.h"
#include "table_json.h"

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

/* Paths: one forward search per source; its row of costs into costs, its
 * paths into pw as one array. PF_ELIMIT once the paths pass
 * max_table_path_cells. */
static pf_status run_with_paths(pf_search_ctx *ctx, const pf_grid *g, const pf_table_request *q,
                                const uint64_t *deadline, int64_t max_cells, double *costs,
                                pf_jsonw *pw, uint64_t *expanded) {
    int64_t cells = 0;
    pf_status st = PF_OK;
    pf_jsonw_arr_begin(pw);
    for (size_t i = 0; i < q->nsources && !st; i++) {
        uint64_t ex = 0;
        double *row = costs + i * q->ntargets;
        st = pf_table_search(ctx, g, q->sources[i], q->targets, q->ntargets, false,
                             pf_clock_deadline_passed, (void *)deadline, row, &ex);
        *expanded += ex;
        pf_jsonw_arr_begin(pw);
        for (size_t j = 0; j < q->ntargets && !st; j++) {
            const pf_point *path = NULL;
            size_t len = 0;
            if (isfinite(row[j]) && (st = pf_table_path(ctx, g, q->targets[j], &path, &len))) break;
            if ((cells += (int64_t)len) > max_cells) {
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

static pf_status table_parse(const pf_kind_env *env, const char *body, size_t len, void **req,
                             int64_t *deadline_ms, pf_proto_error *e) {
    const pf_config *cfg = env->d.cfg;
    pf_table_limits lim = {(size_t)cfg->max_table_entries, (size_t)cfg->max_table_paths,
                           (int32_t)cfg->max_agent_size};
    pf_table_request *q = calloc(1, sizeof(*q));
    pf_status st;
    *req = q;
    if (!q) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    st = pf_table_request_parse(body, len, &lim, q, e);
    *deadline_ms = q->deadline_ms;
    return st;
}

static void table_free(void *req) {
    pf_table_request_clear(req);
    free(req);
}

/* The table of costs (and paths) of one request. */
static pf_status table_run(const pf_mapver *mv, pf_search_ctx *ctx, const void *req,
                           const uint64_t *deadline, pf_jsonw *w, pf_proto_error *e) {
    const pf_config *cfg = mv->env->d.cfg;
    const pf_table_request *q = req;
    const pf_grid *g;
    pf_table_stats ts;
    pf_table_answer a;
    pf_jsonw pw;
    double *costs = NULL;
    uint64_t t0 = pf_clock_now_ns(), expanded = 0;
    pf_status st;

    memset(&pw, 0, sizeof(pw));
    if (!(costs = malloc(q->nsources * q->ntargets * sizeof(*costs))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if ((st = pf__grid_agent_grid(mv, q->agent_size, deadline, &g, e))) goto out_free;
    if ((st = check_points(g, q->sources, q->nsources, "sources", q->agent_size, e)) ||
        (st = check_points(g, q->targets, q->ntargets, "targets", q->agent_size, e)))
        goto out_free;
    memset(&ts, 0, sizeof(ts));
    if (q->paths) {
        pf_jsonw_init(&pw, q->nsources * q->ntargets * 64 + 16);
        st = run_with_paths(ctx, g, q, deadline, cfg->max_table_path_cells, costs, &pw, &expanded);
        ts.searches = q->nsources;
        ts.expanded = expanded;
    } else {
        st =
            pf_table_compute(ctx, g, q->sources, q->nsources, q->targets, q->ntargets,
                             PF_TABLE_AUTO, pf_clock_deadline_passed, (void *)deadline, costs, &ts);
    }
    /* A table's searches are Dijkstras: counted as one dijkstra search of
     * their expansions and time together. */
    pf__grid_count_search(mv->env, PF_ALGO_DIJKSTRA, st, ts.expanded,
                          (pf_clock_now_ns() - t0) / 1000);
    if (st == PF_ECANCELED) goto out_free;
    if (st == PF_ELIMIT) {
        pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, "paths",
                           "The paths of this table hold more than %lld cells (this server's "
                           "max_table_path_cells); ask for fewer entries or no paths.",
                           (long long)cfg->max_table_path_cells);
        goto out_free;
    }
    if (st || (q->paths && pf_jsonw_failed(&pw))) {
        st = pf_proto_error_set(e, st ? st : PF_ENOMEM,
                                st ? pf_error_for_status(st) : PF_ERR_NO_MEMORY, NULL,
                                "The table failed: %s.", pf_status_str(st ? st : PF_ENOMEM));
        goto out_free;
    }
    memset(&a, 0, sizeof(a));
    a.costs = costs;
    a.nsources = q->nsources;
    a.ntargets = q->ntargets;
    a.paths_json = q->paths ? pw.buf : NULL;
    a.paths_len = q->paths ? pw.len : 0;
    a.agent_size = q->agent_size;
    a.map_version = mv->version;
    a.searches = ts.searches;
    a.expanded = ts.expanded;
    a.backward = ts.backward;
    a.time_us = (pf_clock_now_ns() - t0) / 1000;
    pf_jsonw_init(w, q->nsources * q->ntargets * 12 + (q->paths ? pw.len : 0) + 256);
    pf_table_write_answer(w, &a);
out_free:
    if (pw.buf) pf_jsonw_free(&pw);
    free(costs);
    return st;
}

/* A new agent size's grid is built first: a build's work. */
static bool table_builds(const pf_mapver *mv, const void *req) {
    return pf_planner_agent_pending(pf_grid_planner(mv),
                                    ((const pf_table_request *)req)->agent_size, false);
}

const pf_kind_request_ops pf__grid_table = {table_parse, NULL, table_run, table_free, table_builds};
