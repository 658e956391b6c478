/* kind_grid_field.c -- flow fields on a grid (PF_KIND_FLOWFIELDS;
 * flowfield_json.h): every cell's first step and cost to its nearest goal
 * (core/flowfield.h), on the agent size's grid, cached per (goals, region,
 * size, version) in the version's flow field cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "flowfield_json.h"
#include "kind_grid_internal.h"

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

static bool cacheable(const pf_mapver *mv, const pf_flow_request *q) {
    return q->use_cache && mv->fields && mv->env && mv->env->d.cfg->flowfield_cache_entries > 0;
}

/* On a hit writes the cached field with fresh stats and returns true. */
static bool field_cached(const pf_mapver *mv, const void *req, pf_jsonw *w) {
    const pf_flow_request *q = req;
    pf_cache_key k;
    pf_cache_value v;
    uint64_t t0 = pf_clock_now_ns();
    if (!cacheable(mv, q)) return false;
    k = field_key(mv, q);
    if (!pf_kind_cache_get(mv, mv->fields, &k, &v)) return false;
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

static pf_status field_parse(const pf_kind_env *env, const char *body, size_t len, void **req,
                             int64_t *deadline_ms, pf_proto_error *e) {
    const pf_config *cfg = env->d.cfg;
    pf_flow_limits lim = {(size_t)cfg->max_flowfield_goals, (int32_t)cfg->max_agent_size};
    pf_flow_request *q = calloc(1, sizeof(*q));
    pf_status st;
    *req = q;
    if (!q) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    st = pf_flow_request_parse(body, len, &lim, q, e);
    *deadline_ms = q->deadline_ms;
    return st;
}

static void field_free(void *req) {
    pf_flow_request_clear(req);
    free(req);
}

/* Builds, writes and caches the field. */
static pf_status field_run(const pf_mapver *mv, pf_search_ctx *ctx, const void *req,
                           const uint64_t *deadline, pf_jsonw *w, pf_proto_error *e) {
    const pf_config *cfg = mv->env->d.cfg;
    const pf_flow_request *q = req;
    const pf_grid *g;
    pf_box box;
    pf_flowfield *f = NULL;
    pf_flow_query fq;
    pf_flow_stats fs;
    uint64_t t0 = pf_clock_now_ns();
    size_t m0;
    pf_status st;

    if ((st = pf__grid_agent_grid(mv, q->agent_size, deadline, &g, e))) return st;
    box = (pf_box){0, 0, pf_grid_width(g), pf_grid_height(g)};
    if (q->has_region) {
        box = q->region;
        if (box.x > pf_grid_width(g) - box.w || box.y > pf_grid_height(g) - box.h)
            return pf_proto_error_set(
                e, PF_ERANGE, PF_ERR_OFF_MAP, "region",
                "The region %dx%d at (%d,%d) does not lie inside the %dx%d map.", (int)box.w,
                (int)box.h, (int)box.x, (int)box.y, (int)pf_grid_width(g), (int)pf_grid_height(g));
    }
    if ((int64_t)box.w * box.h > cfg->max_flowfield_cells)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "region",
                                  "A flow field covers at most %lld cells (this server's "
                                  "max_flowfield_cells); %s has %lld: give a smaller region.",
                                  (long long)cfg->max_flowfield_cells,
                                  q->has_region ? "this region" : "the whole map",
                                  (long long)box.w * box.h);
    if ((st = check_goals(g, q, box, e))) return st;
    memset(&fq, 0, sizeof(fq));
    fq.goals = q->goals;
    fq.ngoals = q->ngoals;
    fq.has_region = q->has_region;
    fq.region = box;
    fq.should_stop = pf_clock_deadline_passed;
    fq.stop_ud = (void *)deadline;
    st = pf_flowfield_build(ctx, g, &fq, &f, NULL);
    if (st == PF_ECANCELED) return st;
    if (st)
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                                  "The flow field failed: %s.", pf_status_str(st));
    pf_flowfield_get_stats(f, &fs);
    /* A flow field is one Dijkstra: counted as one dijkstra search. */
    pf__grid_count_search(mv->env, PF_ALGO_DIJKSTRA, PF_OK, fs.expanded,
                          (pf_clock_now_ns() - t0) / 1000);
    pf_jsonw_init(w, (size_t)box.w * (size_t)box.h * (q->costs ? 7 : 2) + 1024);
    pf_jsonw_obj_begin(w);
    m0 = w->len;
    pf_flow_write_members(w, f, q->goals, q->ngoals, q->agent_size, mv->version, q->costs);
    if (cacheable(mv, q) && !pf_jsonw_failed(w)) {
        pf_cache_key k = field_key(mv, q);
        pf_cache_value v = {w->buf + m0, w->len - m0};
        pf_cache_put(mv->fields, &k, &v); /* a full cache or ENOMEM only loses the entry */
    }
    pf_flow_write_stats(w, fs.expanded, (pf_clock_now_ns() - t0) / 1000, false);
    pf_jsonw_obj_end(w);
    pf_flowfield_destroy(f);
    return PF_OK;
}

/* A new agent size's grid is built first: a build's work. */
static bool field_builds(const pf_mapver *mv, const void *req) {
    return pf_planner_agent_pending(pf_grid_planner(mv), ((const pf_flow_request *)req)->agent_size,
                                    false);
}

const pf_kind_request_ops pf__grid_flowfield = {field_parse, field_cached, field_run, field_free,
                                                field_builds};
