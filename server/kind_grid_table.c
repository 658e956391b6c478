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

/* A request and its run between parts (kind.h's pf_kind_slice). */
typedef struct table_req {
    pf_table_request q;
    bool begun;
    const pf_grid *g; /* the agent's grid, of the version */
    pf_table_run t;
    double *costs;
    pf_jsonw pw; /* the paths so far, with paths */
    int64_t path_cells;
    uint64_t run_us; /* time on workers */
} table_req;

static pf_status table_parse(const pf_kind_env *env, const char *body, size_t len, void **req,
                             int64_t *deadline_ms, pf_proto_error *e) {
    const pf_config *cfg = env->d.cfg;
    pf_table_limits lim = {(size_t)cfg->max_table_entries, (size_t)cfg->max_table_paths,
                           (int32_t)cfg->max_agent_size};
    table_req *tr = calloc(1, sizeof(*tr));
    pf_status st;
    *req = tr;
    if (!tr) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    st = pf_table_request_parse(body, len, &lim, &tr->q, e);
    *deadline_ms = tr->q.deadline_ms;
    return st;
}

static void table_free(void *req) {
    table_req *tr = req;
    pf_table_run_clear(&tr->t);
    free(tr->costs);
    if (tr->pw.buf) pf_jsonw_free(&tr->pw);
    pf_table_request_clear(&tr->q);
    free(tr);
}

/* The first part: the agent's grid, the points, the run. */
static pf_status begin_table(const pf_mapver *mv, table_req *tr, const uint64_t *deadline,
                             pf_proto_error *e) {
    const pf_table_request *q = &tr->q;
    pf_status st;
    if (!(tr->costs = malloc(q->nsources * q->ntargets * sizeof(*tr->costs))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if ((st = pf__grid_agent_grid(mv, q->agent_size, deadline, &tr->g, e))) return st;
    if ((st = check_points(tr->g, q->sources, q->nsources, "sources", q->agent_size, e)) ||
        (st = check_points(tr->g, q->targets, q->ntargets, "targets", q->agent_size, e)))
        return st;
    tr->t.g = tr->g;
    tr->t.sources = q->sources;
    tr->t.ns = q->nsources;
    tr->t.targets = q->targets;
    tr->t.nt = q->ntargets;
    /* Paths come from forward trees: one search per source. */
    tr->t.dir = q->paths ? PF_TABLE_FORWARD : PF_TABLE_AUTO;
    /* The base grid's components (built once per map version): an agent
     * grid's moves are base moves (clearance.h's footprint rule: every
     * step of the square is a step of its anchor cell under the map's
     * rule), so cells apart on the base grid are apart for every agent.
     * NULL (no memory for them, or the deadline passed while they were
     * built) only costs the searches. */
    {
        /* Built once per version, under this request's deadline. */
        pf_build_stop bs = pf_build_stop_make(pf_clock_deadline_passed, (void *)deadline);
        tr->t.components = pf_planner_cuts(pf_grid_planner(mv), &bs);
    }
    tr->t.max_expanded = (uint64_t)mv->env->d.cfg->max_request_expanded;
    tr->t.stop = pf_clock_deadline_passed;
    tr->t.stop_ud = (void *)deadline;
    tr->t.costs = tr->costs;
    if ((st = pf_table_run_init(&tr->t)))
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL, "The table failed: %s.",
                                  pf_status_str(st));
    if (q->paths) {
        pf_jsonw_init(&tr->pw, q->nsources * q->ntargets * 64 + 16);
        pf_jsonw_arr_begin(&tr->pw);
    }
    tr->begun = true;
    return PF_OK;
}

/* The paths of the row the last search ran, into tr->pw. PF_ELIMIT once
 * they pass max_table_path_cells. */
static pf_status write_row_paths(pf_search_ctx *ctx, table_req *tr, size_t i, int64_t max_cells) {
    const pf_table_request *q = &tr->q;
    const double *row = tr->costs + i * q->ntargets;
    pf_status st = PF_OK;
    pf_jsonw_arr_begin(&tr->pw);
    for (size_t j = 0; j < q->ntargets && !st; j++) {
        const pf_point *path = NULL;
        size_t len = 0;
        /* A finite cost was settled by this row's search, on this ctx. */
        if (isfinite(row[j]) && (st = pf_table_path(ctx, tr->g, q->targets[j], &path, &len))) break;
        if ((tr->path_cells += (int64_t)len) > max_cells) {
            st = PF_ELIMIT;
            break;
        }
        pf_table_write_path(&tr->pw, path, len);
    }
    pf_jsonw_arr_end(&tr->pw);
    return st;
}

static pf_status write_table(const pf_mapver *mv, table_req *tr, pf_jsonw *w, pf_proto_error *e) {
    const pf_table_request *q = &tr->q;
    pf_table_answer a;
    if (q->paths) pf_jsonw_arr_end(&tr->pw);
    if (q->paths && pf_jsonw_failed(&tr->pw))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL,
                                  "The table failed: out of memory.");
    memset(&a, 0, sizeof(a));
    a.costs = tr->costs;
    a.nsources = q->nsources;
    a.ntargets = q->ntargets;
    a.paths_json = q->paths ? tr->pw.buf : NULL;
    a.paths_len = q->paths ? tr->pw.len : 0;
    a.agent_size = q->agent_size;
    a.map_version = mv->version;
    a.searches = tr->t.stats.searches;
    a.expanded = tr->t.stats.expanded;
    a.unreachable = tr->t.unreachable;
    a.backward = tr->t.stats.backward;
    a.time_us = tr->run_us;
    pf_jsonw_init(w, q->nsources * q->ntargets * 12 + (q->paths ? tr->pw.len : 0) + 256);
    pf_table_write_answer(w, &a);
    return PF_OK;
}

/* The table, one search (a row or a column) at a time, pausing after the
 * search that ends past the part's slice. Pairs in two components are
 * answered from the components without a search, each search stops once
 * the targets it can reach are settled, and all searches together settle
 * at most --max-request-expanded cells. */
static pf_status table_run(const pf_mapver *mv, pf_search_ctx *ctx, void *req, pf_kind_slice *s,
                           pf_jsonw *w, pf_proto_error *e) {
    const pf_config *cfg = mv->env->d.cfg;
    table_req *tr = req;
    uint64_t t0 = pf_clock_now_ns();
    pf_status st = PF_OK;

    if (!tr->begun && (st = begin_table(mv, tr, s->deadline, e))) return st;
    while (!pf_table_run_done(&tr->t)) {
        size_t row = tr->t.next;
        if ((st = pf_table_run_next(ctx, &tr->t))) break;
        if (tr->q.paths && (st = write_row_paths(ctx, tr, row, cfg->max_table_path_cells))) break;
        if (!pf_table_run_done(&tr->t) && pf_clock_now_ns() >= s->slice_end) {
            tr->run_us += (pf_clock_now_ns() - t0) / 1000;
            s->paused = true; /* the rest in a later part */
            return PF_OK;
        }
    }
    tr->run_us += (pf_clock_now_ns() - t0) / 1000;
    /* A table's searches are Dijkstras: counted as one dijkstra search of
     * their expansions and time together. */
    pf__grid_count_search(mv->env, PF_ALGO_DIJKSTRA, st, tr->t.stats.expanded, tr->run_us);
    if (st == PF_ECANCELED) return st;
    if (st == PF_ELIMIT && tr->path_cells > cfg->max_table_path_cells)
        return pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, "paths",
                                  "The paths of this table hold more than %lld cells (this "
                                  "server's max_table_path_cells); ask for fewer entries or no "
                                  "paths.",
                                  (long long)cfg->max_table_path_cells);
    if (st == PF_ELIMIT)
        return pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, NULL,
                                  "The table's searches settled %llu cells, this server's "
                                  "max_request_expanded; ask for fewer sources or targets, or "
                                  "nearer ones.",
                                  (unsigned long long)cfg->max_request_expanded);
    if (st)
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL, "The table failed: %s.",
                                  pf_status_str(st));
    return write_table(mv, tr, w, e);
}

/* A new agent size's grid is built first: a build's work. */
static bool table_builds(const pf_mapver *mv, const void *req) {
    return pf_planner_agent_pending(pf_grid_planner(mv), ((const table_req *)req)->q.agent_size,
                                    false);
}

const pf_kind_request_ops pf__grid_table = {table_parse, NULL, table_run, table_free, table_builds};
