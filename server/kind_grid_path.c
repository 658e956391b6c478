/* kind_grid_path.c -- path queries on a grid (kind.h's path operations):
 * GET .../path's query string, POST .../path's JSON, POST .../paths'
 * batch (path_json.h), each query run on the worker's search context
 * (pf_planner_search, core's one dispatch) within the request's deadline,
 * its answer cached per (query, version). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_stop.h"
#include "clock.h"
#include "kind_grid_internal.h"
#include "path.h"
#include "snap.h"

static pf_path_limits path_limits(const pf_config *cfg) {
    pf_path_limits l = {(size_t)cfg->max_goals, (int32_t)cfg->max_agent_size,
                        (int32_t)cfg->max_snap_radius};
    return l;
}

/* Whether q has any of the fields that come with limits. */
static bool extended(const pf_path_request *q) {
    return q->ngoals > 0 || q->agent_size > 1 || q->partial || q->snap;
}

static pf_algorithm resolve_algorithm(const pf_mapver *mv, const pf_path_request *q) {
    return q->has_algorithm ? q->algorithm : pf__grid_default_algorithm(mv);
}

static pf_cache_key cache_key(const pf_mapver *mv, const pf_path_request *q) {
    pf_cache_key k = pf_cache_key_make(q->start, q->goal, resolve_algorithm(mv, q), q->heuristic,
                                       q->weight, q->smooth, q->max_expanded, mv->version);
    if (extended(q)) {
        /* The canonical rest of the request: a tag, the options, the goals. */
        int32_t head[6] = {0x70617468 /* "path" */,      q->agent_size,     q->partial, q->snap,
                           q->snap ? q->snap_radius : 0, (int32_t)q->ngoals};
        pf_cache_key_extra2(&k, head, sizeof(head), q->goals, q->ngoals * sizeof(*q->goals));
    }
    return k;
}

static bool cacheable(const pf_mapver *mv, const pf_path_request *q) {
    return q->use_cache && !q->debug && mv->env && mv->env->d.cfg->cache_entries > 0;
}

/* Looks q up in the map's cache; on a hit writes the answer and returns
 * true. */
static bool answer_from_cache(const pf_mapver *mv, const pf_path_request *q, pf_jsonw *w) {
    pf_cache_key k;
    pf_cache_value v;
    pf_path_answer a;
    uint64_t t0 = pf_clock_now_ns();
    if (!cacheable(mv, q)) return false;
    k = cache_key(mv, q);
    if (!pf_kind_cache_get(mv, mv->cache, &k, &v)) return false;
    memset(&a, 0, sizeof(a)); /* nothing was searched for this answer: expanded 0 */
    a.time_us = (pf_clock_now_ns() - t0) / 1000;
    a.cached = true;
    pf_jsonw_obj_begin(w);
    pf_jsonw_raw_members(w, v.json, v.len);
    pf_path_write_stats(w, &a);
    pf_jsonw_obj_end(w);
    free(v.json);
    return true;
}

/* Parsing: the queries are an array of pf_path_request (one, or a
 * batch's). */

/* One query: from a GET's query string (kv), else a JSON body. */
pf_status pf__grid_path_parse_one(const pf_kind_env *env, const pf_kv *kv, size_t nkv,
                                  const char *body, size_t len, void **q, int64_t *deadline_ms,
                                  pf_proto_error *e) {
    pf_path_limits lim = path_limits(env->d.cfg);
    pf_path_request *one = calloc(1, sizeof(*one));
    pf_status st;
    *q = one;
    if (!one) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    st = kv ? pf_path_request_from_query_lim(kv, nkv, &lim, one, e)
            : pf_path_request_parse_lim(body, len, &lim, one, e);
    *deadline_ms = one->deadline_ms;
    return st;
}

pf_status pf__grid_path_parse_batch(const pf_kind_env *env, const char *body, size_t len,
                                    size_t max, void **q, size_t *n, int64_t *deadline_ms,
                                    pf_proto_error *e) {
    pf_path_limits lim = path_limits(env->d.cfg);
    pf_path_request *qs = NULL;
    pf_status st = pf_path_batch_parse_lim(body, len, max, &lim, &qs, n, deadline_ms, e);
    *q = qs;
    return st;
}

void pf__grid_paths_free(void *q, size_t n) { pf_path_batch_free(q, n); }

bool pf__grid_path_cached(const pf_mapver *mv, const void *q, size_t i, pf_jsonw *w) {
    return answer_from_cache(mv, (const pf_path_request *)q + i, w);
}

/* A grid query runs on the worker's search context. */
void *pf__grid_scratch_get(const pf_kind_env *env, pf_search_ctx *ctx) {
    (void)env;
    return ctx;
}

void pf__grid_scratch_put(const pf_kind_env *env, void *scratch) {
    (void)env;
    (void)scratch;
}

/* Checks point p (field f) on g, the grid of agent size n: snaps it when
 * asked (*moved tells whether it moved), accepts a blocked cell on the map
 * when allow_blocked (a partial answer's goal), else names the error. */
static pf_status check_point(const pf_grid *g, int32_t n, const pf_path_request *pq, pf_point *p,
                             const char *f, bool allow_blocked, bool *moved, pf_proto_error *e) {
    pf_point at = *p;
    char why[160] = "";
    *moved = false;
    if (pf_grid_is_walkable(g, *p)) return PF_OK;
    if (pq->snap) {
        if (pf_snap(g, *p, pq->snap_radius, &at) == PF_OK) {
            *p = at;
            *moved = true;
            return PF_OK;
        }
        snprintf(why, sizeof(why), "; no cell within snap_radius %d %s", (int)pq->snap_radius,
                 n > 1 ? "fits the agent" : "is walkable");
    }
    if (!pf_grid_in_bounds(g, *p))
        return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                  "%s (%d,%d) is outside the %dx%d map%s.", f, (int)p->x, (int)p->y,
                                  (int)pf_grid_width(g), (int)pf_grid_height(g), why);
    if (allow_blocked) return PF_OK;
    if (n > 1)
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                  "%s (%d,%d): an agent of size %d does not fit there (its %dx%d "
                                  "square from that cell covers a blocked cell, crosses a wall or "
                                  "leaves the map)%s.",
                                  f, (int)p->x, (int)p->y, (int)n, (int)n, (int)n, why);
    return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f, "%s (%d,%d) is a blocked cell%s.",
                              f, (int)p->x, (int)p->y, why);
}

/* A sentence for an answer that another algorithm than the one asked
 * gave, for one of the new reasons; NULL otherwise. */
static const char *fallback_note(pf_algorithm asked, pf_algorithm ran, const pf_path_request *q) {
    if (asked == ran) return NULL;
    if (q->ngoals && (asked == PF_ALGO_JPS || asked == PF_ALGO_HPA || asked == PF_ALGO_AUTO ||
                      asked == PF_ALGO_SUBGOAL)) {
        return asked == PF_ALGO_JPS       ? "jps has no nearest-goal form; astar answered."
               : asked == PF_ALGO_HPA     ? "hpa has no nearest-goal form; astar answered."
               : asked == PF_ALGO_SUBGOAL ? "subgoal has no nearest-goal form; astar answered."
                                          : "auto has no nearest-goal form; astar answered.";
    }
    if (q->agent_size > 1 && asked == PF_ALGO_JPS)
        return "jps serves one-cell agents only; astar answered on the agent's grid.";
    if (q->agent_size > 1 && asked == PF_ALGO_SUBGOAL)
        return "subgoal serves one-cell agents only; astar answered on the agent's grid.";
    if (q->partial && (asked == PF_ALGO_JPS || asked == PF_ALGO_HPA || asked == PF_ALGO_SUBGOAL))
        return asked == PF_ALGO_JPS   ? "jps did not reach the goal; astar found the partial path."
               : asked == PF_ALGO_HPA ? "hpa did not reach the goal; astar found the partial path."
                                      : "subgoal did not reach the goal; astar found the partial "
                                        "path.";
    return NULL;
}

/* A query's points as checked (snapped, maybe) on the agent's grid. */
typedef struct points {
    pf_point start, goal;
    pf_point *goals; /* the nearest-goal form's (with goal_moves after them), else NULL */
    bool *goal_moves;
    bool start_moved, goal_moved;
} points;

/* Checks pq's start and goal (or goals) on g into *pt; on an error
 * nothing is held. */
static pf_status check_points(const pf_grid *g, const pf_path_request *pq, const char *prefix,
                              points *pt, pf_proto_error *e) {
    char f[48];
    pf_status st;
    memset(pt, 0, sizeof(*pt));
    pt->start = pq->start;
    pt->goal = pq->goal;
    snprintf(f, sizeof(f), "%sstart", prefix);
    if ((st = check_point(g, pq->agent_size, pq, &pt->start, f, false, &pt->start_moved, e)))
        return st;
    if (!pq->ngoals) {
        snprintf(f, sizeof(f), "%sgoal", prefix);
        return check_point(g, pq->agent_size, pq, &pt->goal, f, pq->partial, &pt->goal_moved, e);
    }
    pt->goals = malloc(pq->ngoals * (sizeof(*pt->goals) + sizeof(*pt->goal_moves)));
    if (!pt->goals)
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    pt->goal_moves = (bool *)(pt->goals + pq->ngoals);
    for (size_t i = 0; i < pq->ngoals; i++) {
        pt->goals[i] = pq->goals[i];
        snprintf(f, sizeof(f), "%sgoals[%zu]", prefix, i);
        if ((st = check_point(g, pq->agent_size, pq, &pt->goals[i], f, pq->partial,
                              &pt->goal_moves[i], e))) {
            free(pt->goals);
            pt->goals = NULL;
            return st;
        }
    }
    return PF_OK;
}

/* The error of a search that ended with st, other than an answer (found,
 * no path, out of budget) or its deadline, described in e. */
static pf_status search_error(const pf_mapver *mv, const pf_path_request *pq, pf_algorithm algo,
                              pf_status st, const char *prefix, pf_proto_error *e) {
    char f[48];
    switch (st) {
    case PF_EUNSUPPORTED:
        snprintf(f, sizeof(f), "%salgorithm", prefix);
        if (pq->ngoals)
            return pf_proto_error_set(e, st, PF_ERR_UNSUPPORTED, f,
                                      "Algorithm '%s' has no nearest-goal form; use astar or "
                                      "dijkstra with 'goals' (jps and hpa run astar).",
                                      pf_algorithm_name(algo));
        return pf_proto_error_set(
            e, st, PF_ERR_UNSUPPORTED, f, "Algorithm '%s' is not available on map '%s'%s.",
            pf_algorithm_name(algo), mv->id,
            algo == PF_ALGO_HPA       ? " (it has no HPA* hierarchy)"
            : algo == PF_ALGO_SUBGOAL ? " (it has no subgoal hierarchy: see the map's 'subgoal' "
                                        "and --subgoal-work-per-cell)"
                                      : "");
    case PF_EINVAL:
        snprintf(f, sizeof(f), "%sheuristic", prefix);
        return pf_proto_error_set(e, st, PF_ERR_INVALID_VALUE, f,
                                  "Heuristic '%s' overestimates on this map, so %s would not be "
                                  "optimal; pick another.",
                                  pf_heuristic_name(pq->heuristic), pf_algorithm_name(algo));
    case PF_ENOMEM:
        return pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    default:
        return pf_proto_error_set(e, st, PF_ERR_NONE, NULL, "The search failed: %s.",
                                  pf_status_str(st));
    }
}

/* Writes the answer of a search that ended with st (found, no path, out of
 * budget) on g into w, smoothing its path when asked, and caches it. */
static pf_status write_answer(const pf_mapver *mv, const pf_grid *g, const pf_path_request *pq,
                              pf_algorithm algo, pf_status st, const pf_result *res,
                              const points *pt, int32_t which, uint64_t t0, pf_jsonw *w,
                              pf_proto_error *e) {
    pf_path_answer a;
    pf_point *smoothed = NULL;
    size_t m0;
    memset(&a, 0, sizeof(a));
    a.status = st;
    a.algorithm = res->algorithm;
    a.cost = res->cost;
    a.path = res->path;
    a.path_len = res->path_len;
    a.partial = res->partial;
    a.partial_reason = res->partial_reason;
    a.agent_size = pq->agent_size;
    a.note = fallback_note(algo, res->algorithm, pq);
    a.start_snapped = pt->start_moved;
    a.start_at = pt->start;
    if (pt->goals && which >= 0) {
        a.has_goals = true;
        a.goal_index = which;
        a.goal = pt->goals[which];
        a.goal_snapped = pt->goal_moves[which];
        a.goal_at = pt->goals[which];
    } else if (!pt->goals) {
        a.goal_snapped = pt->goal_moved;
        a.goal_at = pt->goal;
    }
    if (st == PF_OK && pq->smooth && res->path_len > 2) {
        size_t n = 0;
        double cost = res->cost;
        smoothed = malloc(res->path_len * sizeof(*smoothed));
        if (!smoothed)
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        /* String pulling can cut through expensive cells on maps with
         * varying costs; a smoothed path that costs more is not taken. */
        if (pf_path_smooth(g, res->path, res->path_len, smoothed, &n, &cost) == PF_OK &&
            cost <= res->cost + 1e-9 * (1.0 + res->cost)) {
            a.path = smoothed;
            a.path_len = n;
            a.cost = cost;
        }
    }
    a.expanded_cells = res->expanded_cells;
    a.expanded_cells_len = res->expanded_cells_len;
    a.abstract_path = res->abstract_path;
    a.abstract_path_len = res->abstract_path_len;
    a.map_width = pf_grid_width(g);
    a.map_version = mv->version;
    a.expanded = res->expanded;
    a.time_us = (pf_clock_now_ns() - t0) / 1000;
    a.debug = pq->debug;
    pf_jsonw_obj_begin(w);
    m0 = w->len;
    pf_path_write_members(w, &a);
    if (cacheable(mv, pq) && st != PF_EBUDGET && !pf_jsonw_failed(w)) {
        pf_cache_key k = cache_key(mv, pq);
        pf_cache_value v = {w->buf + m0, w->len - m0};
        pf_cache_put(mv->cache, &k, &v); /* a full cache or ENOMEM only loses the entry */
    }
    pf_path_write_stats(w, &a);
    pf_jsonw_obj_end(w);
    free(smoothed);
    return PF_OK;
}

/* Runs one path query on a worker and writes its answer into w. Returns
 * PF_OK (answer written: found or not), PF_ECANCELED (deadline passed),
 * or an error described in e (nothing written). */
static pf_status run_query(const pf_kind_path_run *run, const pf_path_request *pq,
                           const char *prefix, pf_jsonw *w, pf_proto_error *e) {
    const pf_mapver *mv = run->mv;
    pf_planner *planner = pf_grid_planner(mv);
    const pf_grid *g = pf_planner_grid(planner);
    pf_algorithm algo = resolve_algorithm(mv, pq);
    pf_query q;
    pf_result res;
    points pt;
    int32_t which = -1;
    uint64_t t0;
    pf_status st;

    if (run->batch && answer_from_cache(mv, pq, w)) return PF_OK;
    /* The grid the agent moves on (built the first time a size is used,
     * within the request's deadline). */
    if (pq->agent_size > 1) {
        pf_build_stop bs = pf_build_stop_make(pf_clock_deadline_passed, (void *)run->deadline);
        if ((st = pf_planner_agent_grid(planner, pq->agent_size, &bs, &g)) == PF_ECANCELED)
            return st;
        if (st)
            return pf_proto_error_set(e, st, PF_ERR_NONE, NULL,
                                      "Preparing agent size %d failed: %s.", (int)pq->agent_size,
                                      pf_status_str(st));
    }
    if ((st = check_points(g, pq, prefix, &pt, e))) return st;
    q = pf_query_make(pt.start, pt.goal, algo);
    q.heuristic = pq->heuristic;
    q.weight = algo == PF_ALGO_WEIGHTED ? pq->weight : 1.0;
    q.max_expanded = pq->max_expanded;
    q.record_expanded = pq->debug;
    q.should_stop = pf_clock_deadline_passed;
    q.stop_ud = (void *)run->deadline;
    q.agent_size = pq->agent_size;
    q.partial = pq->partial;
    t0 = pf_clock_now_ns();
    if (pt.goals)
        st = pf_planner_search_nearest(run->scratch, planner, &q, pt.goals, pq->ngoals, &res,
                                       &which);
    else
        st = pf_planner_search(run->scratch, planner, &q, &res);
    pf__grid_count_search(mv->env, algo, st, res.expanded, (pf_clock_now_ns() - t0) / 1000);
    if (st == PF_OK || st == PF_NO_PATH || st == PF_EBUDGET)
        st = write_answer(mv, g, pq, algo, st, &res, &pt, which, t0, w, e);
    else if (st != PF_ECANCELED)
        st = search_error(mv, pq, algo, st, prefix, e);
    free(pt.goals);
    return st;
}

/* Whether auto may run hpa on mv (then an agent size's hierarchy may be
 * built): some distance bin of its measurement picks hpa. */
static bool auto_may_hpa(const pf_mapver *mv) {
    pf_planner_auto_info ai;
    if (!pf_planner_has_hpa(pf_grid_planner(mv))) return false;
    pf_planner_auto_info_get(pf_grid_planner(mv), &ai);
    return !ai.exact_faster;
}

/* run_query with room in the memory budget for the agent data a new
 * agent size builds (registry.h: pf_mapver_reserve_agent). */
/* Whether query pq may run HPA* on its agent size's own hierarchy. */
static bool wants_agent_hpa(const pf_mapver *mv, const pf_path_request *pq) {
    pf_algorithm a = resolve_algorithm(mv, pq);
    return a == PF_ALGO_HPA || (a == PF_ALGO_AUTO && auto_may_hpa(mv));
}

bool pf__grid_path_builds(const pf_mapver *mv, const void *q, size_t i) {
    const pf_path_request *pq = (const pf_path_request *)q + i;
    return pq->agent_size > 1 &&
           pf_planner_agent_pending(pf_grid_planner(mv), pq->agent_size, wants_agent_hpa(mv, pq));
}

pf_status pf__grid_path_run(const pf_kind_path_run *run, const void *q, size_t i,
                            const char *prefix, pf_jsonw *w, pf_proto_error *e) {
    const pf_path_request *pq = (const pf_path_request *)q + i;
    size_t reserved;
    char f[48];
    pf_status st;
    snprintf(f, sizeof(f), "%sagent_size", prefix);
    if ((st = pf__grid_reserve_agent(run->mv, pq->agent_size, wants_agent_hpa(run->mv, pq),
                                     &reserved, f, e)))
        return st;
    st = run_query(run, pq, prefix, w, e);
    pf__grid_settle(run->mv, reserved);
    return st;
}
