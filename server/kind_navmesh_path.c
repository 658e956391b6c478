/* kind_navmesh_path.c -- path queries on a navmesh (kind.h's path
 * operations): points [x,y,z] (nav_json.h), pf_nav_find_path with a
 * query borrowed from the environment's navq for a worker's run of
 * queries, answers cached per (points, search box, algorithm, agent type,
 * version). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kind_navmesh_internal.h"

/* The map's mesh for q's agent type; NULL when the map has no such type. */
static const pf_navmesh *nav_view(const pf_mapver *mv, const pf_nav_path_request *q) {
    return pf_navmesh_agent_type_named(pf_navmesh_of(mv),
                                       q->agent_type[0] ? q->agent_type : "default");
}

static const float *nav_box(const pf_navmesh *view, const pf_nav_path_request *q, float def[3]) {
    if (q->has_box) return q->box;
    pf_navmesh_default_extents(view, def);
    return def;
}

static bool cacheable(const pf_mapver *mv, const pf_nav_path_request *q) {
    return q->use_cache && !q->corridor && mv->env && mv->env->d.cfg->cache_entries > 0;
}

/* The key of q on mv (view: its agent type's mesh): its points and search
 * box hashed (cache.h's extra), the algorithm with the agent type's index
 * above it, below 0 (a grid's are >= 0). */
static pf_cache_key cache_key(const pf_mapver *mv, const pf_navmesh *view,
                              const pf_nav_path_request *q) {
    pf_cache_key k;
    float pts[9], def[3];
    memset(&k, 0, sizeof(k));
    k.algorithm = -1 - ((int32_t)q->algorithm | (int32_t)(pf_nav_agent_index(view) << 8));
    k.version = mv->version;
    memcpy(pts, q->start, 3 * sizeof(float));
    memcpy(pts + 3, q->goal, 3 * sizeof(float));
    memcpy(pts + 6, nav_box(view, q, def), 3 * sizeof(float));
    pf_cache_key_extra(&k, pts, sizeof(pts));
    return k;
}

/* Looks q up in the map's cache; on a hit writes the answer and returns
 * true. */
static bool answer_from_cache(const pf_mapver *mv, const pf_nav_path_request *q, pf_jsonw *w) {
    pf_cache_key k;
    pf_cache_value v;
    uint64_t t0 = pf_clock_now_ns();
    const pf_navmesh *view = nav_view(mv, q);
    if (!cacheable(mv, q) || !view) return false;
    k = cache_key(mv, view, q);
    if (!pf_kind_cache_get(mv, mv->cache, &k, &v)) return false;
    pf_jsonw_obj_begin(w);
    pf_jsonw_raw_members(w, v.json, v.len);
    pf_nav_write_path_stats(w, 0, (pf_clock_now_ns() - t0) / 1000, true);
    pf_jsonw_obj_end(w);
    free(v.json);
    return true;
}

/* Parsing: the queries are an array of pf_nav_path_request (one, or a
 * batch's). */

/* One query: from a GET's query string (kv), else a JSON body. */
pf_status pf__nav_path_parse_one(const pf_kind_env *env, const pf_kv *kv, size_t nkv,
                                 const char *body, size_t len, void **q, int64_t *deadline_ms,
                                 pf_proto_error *e) {
    float max = pf__nav_env_of(env)->max_extent;
    pf_nav_path_request *one = calloc(1, sizeof(*one));
    pf_status st;
    *q = one;
    if (!one) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    st = kv ? pf_nav_path_request_from_query(kv, nkv, max, one, e)
            : pf_nav_path_request_parse(body, len, max, one, e);
    *deadline_ms = one->deadline_ms;
    return st;
}

pf_status pf__nav_path_parse_batch(const pf_kind_env *env, const char *body, size_t len, size_t max,
                                   void **q, size_t *n, int64_t *deadline_ms, pf_proto_error *e) {
    pf_nav_path_request *qs = NULL;
    pf_status st = pf_nav_path_batch_parse(body, len, max, pf__nav_env_of(env)->max_extent, &qs, n,
                                           deadline_ms, e);
    *q = qs;
    return st;
}

void pf__nav_paths_free(void *q, size_t n) {
    (void)n; /* a navmesh query owns nothing */
    free(q);
}

bool pf__nav_path_cached(const pf_mapver *mv, const void *q, size_t i, pf_jsonw *w) {
    return answer_from_cache(mv, (const pf_nav_path_request *)q + i, w);
}

/* A navmesh query borrows Detour's node pool and buffers from the navq. */
void *pf__nav_scratch_get(const pf_kind_env *env, pf_search_ctx *ctx) {
    (void)ctx;
    return pf_navq_get(pf__nav_env_of(env)->navq);
}

void pf__nav_scratch_put(const pf_kind_env *env, void *scratch) {
    pf_navq_put(pf__nav_env_of(env)->navq, scratch);
}

/* One query. A search is bounded by --nav-max-nodes, not interrupted by
 * the deadline: the deadline is checked before each query of a batch (the
 * route checked it before a single one). */
pf_status pf__nav_path_run(const pf_kind_path_run *run, const void *q, size_t i, const char *prefix,
                           pf_jsonw *w, pf_proto_error *e) {
    const pf_nav_path_request *pq = (const pf_nav_path_request *)q + i;
    const pf_mapver *mv = run->mv;
    pf_nav_query *nq = run->scratch;
    float def[3];
    const pf_navmesh *view;
    const float *box;
    const char *which = NULL;
    pf_nav_path p;
    char f[48];
    uint64_t t0;
    size_t m0;
    pf_status st;
    if (run->batch && pf_clock_now_ns() >= *run->deadline) return PF_ECANCELED;
    snprintf(f, sizeof(f), "%sagent_type", prefix);
    if ((st = pf_nav_agent_view(pf_navmesh_of(mv), pq->agent_type, f, &view, e))) return st;
    box = nav_box(view, pq, def);
    if (run->batch && answer_from_cache(mv, pq, w)) return PF_OK;
    t0 = pf_clock_now_ns();
    st = pf_nav_find_path(nq, view, pq->start, pq->goal, box, pq->algorithm, &p, &which);
    if (st == PF_EBLOCKED) {
        const float *pt = which && strcmp(which, "goal") == 0 ? pq->goal : pq->start;
        snprintf(f, sizeof(f), "%s%s", prefix, which ? which : "start");
        return pf_proto_error_set(e, st, PF_ERR_BLOCKED, f,
                                  "No walkable polygon of map '%s' within the search box "
                                  "+-(%g, %g, %g) of %s (%g, %g, %g).",
                                  mv->id, (double)box[0], (double)box[1], (double)box[2], f,
                                  (double)pt[0], (double)pt[1], (double)pt[2]);
    }
    if (st == PF_ENOMEM) return pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (st)
        return pf_proto_error_set(e, st, PF_ERR_INVALID_VALUE, prefix[0] ? prefix : NULL,
                                  "The query cannot be answered: %s.", pf_status_str(st));
    pf__nav_count_search(mv->env->d.metrics, pq->algorithm,
                         p.out_of_nodes ? PF_OUTCOME_BUDGET
                         : p.partial    ? PF_OUTCOME_UNREACHABLE
                                        : PF_OUTCOME_FOUND,
                         p.expanded, (pf_clock_now_ns() - t0) / 1000);
    pf_jsonw_obj_begin(w);
    m0 = w->len;
    pf_nav_write_path_members(w, &p, pq->algorithm, pq->agent_type, mv->version);
    if (pq->corridor) pf_nav_write_corridor(w, &p);
    if (cacheable(mv, pq) && !p.out_of_nodes && !pf_jsonw_failed(w)) {
        pf_cache_key k = cache_key(mv, view, pq);
        pf_cache_value v = {w->buf + m0, w->len - m0};
        pf_cache_put(mv->cache, &k, &v);
    }
    pf_nav_write_path_stats(w, p.expanded, (pf_clock_now_ns() - t0) / 1000, false);
    pf_jsonw_obj_end(w);
    return PF_OK;
}
