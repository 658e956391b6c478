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
static bool cached_answer(const pf_mapver *mv, const pf_flow_request *q, pf_jsonw *w) {
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

/* A request and its run between parts (kind.h's pf_kind_slice). */
typedef struct field_req {
    pf_flow_request q;
    pf_flow_build *b;   /* NULL before the first part */
    pf_box box;         /* the field's */
    uint64_t slice_end; /* the current part's end (monotonic ns) */
    uint64_t run_us;    /* time on workers */
} field_req;

static pf_status field_parse(const pf_kind_env *env, const char *body, size_t len, void **req,
                             int64_t *deadline_ms, pf_proto_error *e) {
    const pf_config *cfg = env->d.cfg;
    pf_flow_limits lim = {(size_t)cfg->max_flowfield_goals, (int32_t)cfg->max_agent_size};
    field_req *fr = calloc(1, sizeof(*fr));
    pf_status st;
    *req = fr;
    if (!fr) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    st = pf_flow_request_parse(body, len, &lim, &fr->q, e);
    *deadline_ms = fr->q.deadline_ms;
    return st;
}

static bool field_cached(const pf_mapver *mv, const void *req, pf_jsonw *w) {
    return cached_answer(mv, &((const field_req *)req)->q, w);
}

static void field_free(void *req) {
    field_req *fr = req;
    pf_flow_build_free(fr->b);
    pf_flow_request_clear(&fr->q);
    free(fr);
}

/* The first part: the agent's grid, the box, the goals, the search
 * started (its cap: --max-request-expanded cells settled). */
static pf_status begin_field(const pf_mapver *mv, pf_search_ctx *ctx, field_req *fr,
                             const uint64_t *deadline, pf_proto_error *e) {
    const pf_config *cfg = mv->env->d.cfg;
    const pf_flow_request *q = &fr->q;
    const pf_grid *g;
    pf_flow_query fq;
    pf_status st;

    if ((st = pf__grid_agent_grid(mv, q->agent_size, deadline, &g, e))) return st;
    fr->box = (pf_box){0, 0, pf_grid_width(g), pf_grid_height(g)};
    if (q->has_region) {
        fr->box = q->region;
        if (fr->box.x > pf_grid_width(g) - fr->box.w || fr->box.y > pf_grid_height(g) - fr->box.h)
            return pf_proto_error_set(
                e, PF_ERANGE, PF_ERR_OFF_MAP, "region",
                "The region %dx%d at (%d,%d) does not lie inside the %dx%d map.", (int)fr->box.w,
                (int)fr->box.h, (int)fr->box.x, (int)fr->box.y, (int)pf_grid_width(g),
                (int)pf_grid_height(g));
    }
    if ((int64_t)fr->box.w * fr->box.h > cfg->max_flowfield_cells)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "region",
                                  "A flow field covers at most %lld cells (this server's "
                                  "max_flowfield_cells); %s has %lld: give a smaller region.",
                                  (long long)cfg->max_flowfield_cells,
                                  q->has_region ? "this region" : "the whole map",
                                  (long long)fr->box.w * fr->box.h);
    if ((st = check_goals(g, q, fr->box, e))) return st;
    memset(&fq, 0, sizeof(fq));
    fq.goals = q->goals;
    fq.ngoals = q->ngoals;
    fq.has_region = q->has_region;
    fq.region = fr->box;
    fq.should_stop = pf_clock_deadline_passed;
    fq.stop_ud = (void *)deadline;
    fq.max_expanded = (uint64_t)cfg->max_request_expanded;
    if ((st = pf_flowfield_start(ctx, g, &fq, &fr->b, NULL)))
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                                  "The flow field failed: %s.", pf_status_str(st));
    return PF_OK;
}

/* Writes and caches the field. */
static void write_field(const pf_mapver *mv, const field_req *fr, const pf_flowfield *f,
                        pf_jsonw *w) {
    const pf_flow_request *q = &fr->q;
    pf_flow_stats fs;
    uint64_t t0 = pf_clock_now_ns();
    size_t m0;
    pf_flowfield_get_stats(f, &fs);
    /* A flow field is one Dijkstra: counted as one dijkstra search. */
    pf__grid_count_search(mv->env, PF_ALGO_DIJKSTRA, PF_OK, fs.expanded, fr->run_us);
    pf_jsonw_init(w, (size_t)fr->box.w * (size_t)fr->box.h * (q->costs ? 7 : 2) + 1024);
    pf_jsonw_obj_begin(w);
    m0 = w->len;
    pf_flow_write_members(w, f, q->goals, q->ngoals, q->agent_size, mv->version, q->costs);
    if (cacheable(mv, q) && !pf_jsonw_failed(w)) {
        pf_cache_key k = field_key(mv, q);
        pf_cache_value v = {w->buf + m0, w->len - m0};
        pf_cache_put(mv->fields, &k, &v); /* a full cache or ENOMEM only loses the entry */
    }
    pf_flow_write_stats(w, fs.expanded, fr->run_us + (pf_clock_now_ns() - t0) / 1000, false);
    pf_jsonw_obj_end(w);
}

/* The search's cue to pause: its part is over. */
static bool slice_over(void *ud) {
    const field_req *fr = ud;
    return pf_clock_now_ns() >= fr->slice_end;
}

/* Builds the field one part at a time: each part runs --slice-ms, then
 * pauses holding the search's engine and the field it fills. */
static pf_status field_run(const pf_mapver *mv, pf_search_ctx *ctx, void *req, pf_kind_slice *s,
                           pf_jsonw *w, pf_proto_error *e) {
    field_req *fr = req;
    pf_flowfield *f = NULL;
    uint64_t t0 = pf_clock_now_ns();
    pf_status st;

    if (!fr->b && (st = begin_field(mv, ctx, fr, s->deadline, e))) return st;
    /* A part's own slice: after a pause the route did not yield on (the
     * budget could not hold the search, or nobody waited), a fresh one. */
    fr->slice_end = pf_clock_now_ns() + s->slice_ns;
    st = pf_flowfield_resume(ctx, fr->b, slice_over, fr, &f);
    fr->run_us += (pf_clock_now_ns() - t0) / 1000;
    if (!st && !f) {
        s->paused = true;
        s->held = pf_flow_build_memory(fr->b);
        return PF_OK;
    }
    if (st == PF_ECANCELED) return st;
    if (st == PF_ELIMIT)
        return pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, NULL,
                                  "The flow field's search settled %llu cells, this server's "
                                  "max_request_expanded; give a smaller region.",
                                  (unsigned long long)mv->env->d.cfg->max_request_expanded);
    if (st)
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                                  "The flow field failed: %s.", pf_status_str(st));
    write_field(mv, fr, f, w);
    pf_flowfield_destroy(f);
    return PF_OK;
}

/* A new agent size's grid is built first: a build's work. */
static bool field_builds(const pf_mapver *mv, const void *req) {
    return pf_planner_agent_pending(pf_grid_planner(mv), ((const field_req *)req)->q.agent_size,
                                    false);
}

const pf_kind_request_ops pf__grid_flowfield = {field_parse, field_cached, field_run, field_free,
                                                field_builds};
