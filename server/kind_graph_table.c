/* kind_graph_table.c -- distance tables on a waypoint graph
 * (PF_KIND_TABLES; graph_table_json.h): the optimal cost of every
 * (source, target) pair and, when asked, their paths. One Dijkstra a
 * source (core's pf_graph_row_run), stopped once the targets it can reach
 * are closed; pairs in different weak components are answered without a
 * search; all rows together close at most --max-request-expanded nodes;
 * the deadline is checked every 256 expansions and the run pauses between
 * rows past its slice (--slice-ms), as a grid's table does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "graph_table_json.h"
#include "kind_graph_internal.h"
#include "table_json.h"

/* A request and its run between parts (kind.h's pf_kind_slice). */
typedef struct table_req {
    pf_graph_table_request q;
    bool begun;
    double *sdist, *ddist; /* how far each point was from its node (sdist owns both) */
    uint32_t *src, *dst;   /* the places as nodes (src owns both) */
    double *costs;         /* nsources x ntargets */
    uint64_t mask;         /* exclude_tags as the map's tag bits */
    size_t next;           /* the next row */
    pf_jsonw pw;           /* the paths so far, with paths */
    uint64_t path_nodes, expanded, searches, unreachable, run_us;
} table_req;

static pf_status table_parse(const pf_kind_env *env, const char *body, size_t len, void **req,
                             int64_t *deadline_ms, pf_proto_error *e) {
    const pf_config *cfg = env->d.cfg;
    table_req *tr = calloc(1, sizeof(*tr));
    pf_status st;
    *req = tr;
    if (!tr) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    st = pf_graph_table_request_parse(body, len, (size_t)cfg->max_table_entries,
                                      (size_t)cfg->max_table_paths, &tr->q, e);
    *deadline_ms = tr->q.deadline_ms;
    return st;
}

static void table_free(void *req) {
    table_req *tr = req;
    free(tr->sdist);
    free(tr->src);
    free(tr->costs);
    if (tr->pw.buf) pf_jsonw_free(&tr->pw);
    pf_graph_table_request_clear(&tr->q);
    free(tr);
}

/* The first part: the places as nodes, the costs, the unreachable pairs. */
static pf_status begin_table(const pf_mapver *mv, table_req *tr, pf_proto_error *e) {
    const pf_graph_table_request *q = &tr->q;
    const pf_graph *g = pf__graph_world_of(mv)->g;
    size_t n = q->nsources + q->ntargets;
    pf_status st;
    tr->sdist = malloc(n * sizeof(double));
    tr->src = malloc(n * sizeof(uint32_t));
    tr->costs = malloc(q->nsources * q->ntargets * sizeof(double));
    if (!tr->sdist || !tr->src || !tr->costs)
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    tr->ddist = tr->sdist + q->nsources;
    tr->dst = tr->src + q->nsources;
    if ((st = pf__graph_exclude_mask(mv, &q->exclude, "", &tr->mask, e))) return st;
    for (size_t i = 0; i < q->nsources; i++) {
        char f[48];
        snprintf(f, sizeof(f), "sources[%zu]", i);
        if ((st = pf__graph_resolve(mv, &q->sources[i], f, &tr->src[i], &tr->sdist[i], e)))
            return st;
    }
    for (size_t j = 0; j < q->ntargets; j++) {
        char f[48];
        snprintf(f, sizeof(f), "targets[%zu]", j);
        if ((st = pf__graph_resolve(mv, &q->targets[j], f, &tr->dst[j], &tr->ddist[j], e)))
            return st;
    }
    for (size_t i = 0; i < q->nsources; i++)
        for (size_t j = 0; j < q->ntargets; j++)
            tr->unreachable +=
                pf_graph_component(g, tr->src[i]) != pf_graph_component(g, tr->dst[j]);
    if (q->paths) {
        pf_jsonw_init(&tr->pw, q->nsources * q->ntargets * 32 + 16);
        pf_jsonw_arr_begin(&tr->pw);
    }
    tr->begun = true;
    return PF_OK;
}

/* The paths of the row just run (on ctx), into tr->pw. PF_ELIMIT once
 * they pass max_table_path_cells nodes. */
static pf_status write_row_paths(const pf_mapver *mv, pf_graph_ctx *ctx, table_req *tr, size_t i,
                                 uint64_t max_nodes) {
    const pf_graph_doc *d = &pf__graph_world_of(mv)->doc->d;
    const double *row = tr->costs + i * tr->q.ntargets;
    pf_jsonw_arr_begin(&tr->pw);
    for (size_t j = 0; j < tr->q.ntargets; j++) {
        pf_graph_path p;
        if (!isfinite(row[j])) {
            pf_jsonw_null(&tr->pw);
            continue;
        }
        if (pf_graph_row_path(ctx, tr->dst[j], &p)) return PF_ENOMEM;
        if ((tr->path_nodes += p.len) > max_nodes) return PF_ELIMIT;
        pf_jsonw_arr_begin(&tr->pw);
        for (size_t k = 0; k < p.len; k++) pf_graph_doc_write_id(&tr->pw, d, p.nodes[k]);
        pf_jsonw_arr_end(&tr->pw);
    }
    pf_jsonw_arr_end(&tr->pw);
    return PF_OK;
}

static void write_ends(pf_jsonw *w, const pf_graph_doc *d, const pf_graph_place *p,
                       const uint32_t *v, const double *dist, size_t n) {
    pf_jsonw_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        pf_jsonw_obj_begin(w);
        pf_jsonw_key(w, "node");
        pf_graph_doc_write_id(w, d, v[i]);
        pf_jsonw_kbool(w, "snapped", p[i].is_point);
        if (p[i].is_point) pf_jsonw_kdouble(w, "distance", dist[i]);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
}

static pf_status write_table(const pf_mapver *mv, table_req *tr, pf_jsonw *w, pf_proto_error *e) {
    const pf_graph_table_request *q = &tr->q;
    const pf_graph_doc *d = &pf__graph_world_of(mv)->doc->d;
    if (q->paths) pf_jsonw_arr_end(&tr->pw);
    if (q->paths && pf_jsonw_failed(&tr->pw))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL,
                                  "The table failed: out of memory.");
    pf_jsonw_init(w, q->nsources * q->ntargets * 12 + (q->paths ? tr->pw.len : 0) +
                         (q->nsources + q->ntargets) * 48 + 256);
    pf_jsonw_obj_begin(w);
    pf_jsonw_key(w, "costs");
    pf_jsonw_arr_begin(w);
    for (size_t i = 0; i < q->nsources; i++)
        pf_table_write_row(w, tr->costs + i * q->ntargets, q->ntargets);
    pf_jsonw_arr_end(w);
    if (q->paths) {
        pf_jsonw_key(w, "paths");
        pf_jsonw_raw(w, tr->pw.buf, tr->pw.len);
    }
    pf_jsonw_key(w, "sources");
    write_ends(w, d, q->sources, tr->src, tr->sdist, q->nsources);
    pf_jsonw_key(w, "targets");
    write_ends(w, d, q->targets, tr->dst, tr->ddist, q->ntargets);
    pf_jsonw_kstr(w, "algorithm", "dijkstra");
    pf_jsonw_kuint(w, "map_version", mv->version);
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "searches", tr->searches);
    pf_jsonw_kuint(w, "expanded", tr->expanded);
    pf_jsonw_kuint(w, "unreachable", tr->unreachable);
    pf_jsonw_kuint(w, "time_us", tr->run_us);
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
    return PF_OK;
}

/* The rows, one search each, pausing after the row that ends past the
 * part's slice. */
static pf_status table_run(const pf_mapver *mv, pf_search_ctx *sctx, void *req, pf_kind_slice *s,
                           pf_jsonw *w, pf_proto_error *e) {
    const pf_config *cfg = mv->env->d.cfg;
    const pf_graph *g = pf__graph_world_of(mv)->g;
    const uint64_t max = (uint64_t)cfg->max_request_expanded;
    table_req *tr = req;
    uint64_t t0 = pf_clock_now_ns();
    pf__graph_scratch *sc;
    pf_graph_ctx *ctx;
    pf_status st = PF_OK;
    if (!tr->begun && (st = begin_table(mv, tr, e))) return st;
    if (!(sc = pf__graph_scratch_get(mv->env, sctx)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    ctx = sc->ctx;
    while (tr->next < tr->q.nsources) {
        size_t i = tr->next;
        uint64_t ex = 0;
        pf_graph_row row = {tr->src[i],
                            tr->dst,
                            tr->q.ntargets,
                            max > tr->expanded ? max - tr->expanded : 1,
                            pf_clock_deadline_passed,
                            (void *)s->deadline,
                            tr->mask};
        if (tr->expanded >= max) {
            st = PF_EBUDGET;
            break;
        }
        st = pf_graph_row_run(g, ctx, &row, tr->costs + i * tr->q.ntargets, &ex);
        tr->expanded += ex;
        tr->searches += ex > 0;
        if (st) break;
        if (tr->q.paths &&
            (st = write_row_paths(mv, ctx, tr, i, (uint64_t)cfg->max_table_path_cells)))
            break;
        tr->next++;
        if (tr->next < tr->q.nsources && pf_clock_now_ns() >= s->slice_end) {
            tr->run_us += (pf_clock_now_ns() - t0) / 1000;
            pf__graph_scratch_put(mv->env, sc);
            s->paused = true; /* the rest in a later part */
            s->held = tr->q.nsources * tr->q.ntargets * sizeof(double) + tr->pw.cap;
            return PF_OK;
        }
    }
    pf__graph_scratch_put(mv->env, sc);
    tr->run_us += (pf_clock_now_ns() - t0) / 1000;
    /* A table's searches are Dijkstras: one dijkstra search of their
     * expansions and time together. */
    pf__graph_count_search(mv->env->d.metrics, PF_GRAPH_DIJKSTRA,
                           st == PF_ECANCELED ? PF_OUTCOME_DEADLINE
                           : st == PF_OK      ? PF_OUTCOME_FOUND
                                              : PF_OUTCOME_ERROR,
                           tr->expanded, tr->run_us);
    if (st == PF_ECANCELED) return st;
    if (st == PF_ELIMIT)
        return pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, "paths",
                                  "The paths of this table hold more than %lld nodes (this "
                                  "server's max_table_path_cells); ask for fewer entries or no "
                                  "paths.",
                                  (long long)cfg->max_table_path_cells);
    if (st == PF_EBUDGET)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, NULL,
                                  "The table's searches closed %llu nodes, this server's "
                                  "max_request_expanded; ask for fewer sources or targets.",
                                  (unsigned long long)max);
    if (st)
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL, "The table failed: %s.",
                                  pf_status_str(st));
    return write_table(mv, tr, w, e);
}

const pf_kind_request_ops pf__graph_table = {table_parse, NULL, table_run, table_free, NULL};
