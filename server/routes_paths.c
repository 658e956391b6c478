/* routes_paths.c -- the path routes; see routes_paths.h. */
#include "routes_paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "nav_json.h"
#include "path.h"
#include "planner.h"
#include "request.h"
#include "snap.h"

/* Query-string arguments a GET .../path may have. */
#define MAX_ARGS 32

/* What a path request keeps from its handler to its job. */
typedef struct paths_job {
    pf_paths_routes *m;
    pf_mapver *mv; /* a reference */
    pf_path_request one;
    pf_path_request *queries; /* &one, or the batch's (owned) */
    /* A navmesh map's queries instead (mv->nav when parsed). */
    pf_nav_path_request none;
    pf_nav_path_request *nqueries_v; /* &none, or the batch's (owned) */
    size_t nqueries;
    bool batch;
    uint64_t t0_ns, deadline_ns;
    /* A batch between slices (pf_req_yield): the answer so far and the
     * next query. */
    pf_jsonw w;
    bool begun;
    size_t next;
} paths_job;

static void free_paths_job(void *p) {
    paths_job *job = p;
    pf_mapver_release(job->mv);
    if (job->queries != &job->one)
        pf_path_batch_free(job->queries, job->nqueries);
    else
        pf_path_request_clear(&job->one);
    if (job->nqueries_v != &job->none) free(job->nqueries_v);
    if (job->begun) pf_jsonw_free(&job->w);
    free(job);
}

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
    return q->has_algorithm ? q->algorithm : pf_mapver_default_algorithm(mv);
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

static bool cacheable(const pf_paths_routes *m, const pf_path_request *q) {
    return q->use_cache && !q->debug && m->cfg->cache_entries > 0;
}

/* Looks q up in the map's cache; on a hit writes the answer and returns
 * true. */
static bool answer_from_cache(pf_paths_routes *m, const pf_mapver *mv, const pf_path_request *q,
                              pf_jsonw *w) {
    pf_cache_key k;
    pf_cache_value v;
    pf_path_answer a;
    uint64_t t0 = pf_clock_now_ns();
    bool hit;
    if (!cacheable(m, q)) return false;
    k = cache_key(mv, q);
    hit = pf_cache_get(mv->cache, &k, &v);
    pf_metrics_count_cache(m->metrics, hit);
    if (!hit) return false;
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

pf_status pf_paths_check_endpoints(const pf_mapver *mv, pf_point start, pf_point goal,
                                   const char *prefix, pf_proto_error *e) {
    const pf_grid *g = pf_planner_grid(mv->planner);
    const pf_point pts[2] = {start, goal};
    const char *names[2] = {"start", "goal"};
    char f[48];
    for (int i = 0; i < 2; i++) {
        if (pf_grid_is_walkable(g, pts[i])) continue;
        snprintf(f, sizeof(f), "%s%s", prefix, names[i]);
        if (!pf_grid_in_bounds(g, pts[i]))
            return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                      "%s (%d,%d) is outside the %dx%d map.", f, (int)pts[i].x,
                                      (int)pts[i].y, (int)pf_grid_width(g), (int)pf_grid_height(g));
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                  "%s (%d,%d) is a blocked cell.", f, (int)pts[i].x, (int)pts[i].y);
    }
    return PF_OK;
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
    if (q->ngoals && (asked == PF_ALGO_JPS || asked == PF_ALGO_HPA || asked == PF_ALGO_AUTO))
        return asked == PF_ALGO_JPS   ? "jps has no nearest-goal form; astar answered."
               : asked == PF_ALGO_HPA ? "hpa has no nearest-goal form; astar answered."
                                      : "auto has no nearest-goal form; astar answered.";
    if (q->agent_size > 1 && asked == PF_ALGO_JPS)
        return "jps serves one-cell agents only; astar answered on the agent's grid.";
    if (q->partial && (asked == PF_ALGO_JPS || asked == PF_ALGO_HPA))
        return asked == PF_ALGO_JPS ? "jps did not reach the goal; astar found the partial path."
                                    : "hpa did not reach the goal; astar found the partial path.";
    return NULL;
}

/* Runs one path query on a worker and writes its answer into w. Returns
 * PF_OK (answer written: found or not), PF_ECANCELED (deadline passed),
 * or an error described in e (nothing written). */
static pf_status run_query(paths_job *job, pf_search_ctx *ctx, const pf_path_request *pq,
                           const char *prefix, pf_jsonw *w, pf_proto_error *e) {
    pf_paths_routes *m = job->m;
    const pf_mapver *mv = job->mv;
    const pf_grid *g = pf_planner_grid(mv->planner);
    pf_algorithm algo = resolve_algorithm(mv, pq);
    pf_query q;
    pf_result res;
    pf_path_answer a;
    pf_point *smoothed = NULL, *goals = NULL, start = pq->start, goal = pq->goal;
    bool start_moved = false, goal_moved = false, *goal_moves = NULL;
    int32_t which = -1;
    char f[48];
    uint64_t t0;
    size_t m0;
    pf_status st;

    if (job->batch && answer_from_cache(m, mv, pq, w)) return PF_OK;
    /* The grid the agent moves on (built the first time a size is used,
     * within the request's deadline). */
    if (pq->agent_size > 1) {
        pf_build_stop bs = pf_build_stop_make(pf_clock_deadline_passed, &job->deadline_ns);
        if ((st = pf_planner_agent_grid(mv->planner, pq->agent_size, &bs, &g)) == PF_ECANCELED)
            return st;
        if (st)
            return pf_proto_error_set(e, st, PF_ERR_NONE, NULL,
                                      "Preparing agent size %d failed: %s.", (int)pq->agent_size,
                                      pf_status_str(st));
    }
    snprintf(f, sizeof(f), "%sstart", prefix);
    if ((st = check_point(g, pq->agent_size, pq, &start, f, false, &start_moved, e))) return st;
    if (pq->ngoals) {
        goals = malloc(pq->ngoals * (sizeof(*goals) + sizeof(*goal_moves)));
        if (!goals)
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goal_moves = (bool *)(goals + pq->ngoals);
        for (size_t i = 0; i < pq->ngoals; i++) {
            goals[i] = pq->goals[i];
            snprintf(f, sizeof(f), "%sgoals[%zu]", prefix, i);
            if ((st = check_point(g, pq->agent_size, pq, &goals[i], f, pq->partial, &goal_moves[i],
                                  e))) {
                free(goals);
                return st;
            }
        }
    } else {
        snprintf(f, sizeof(f), "%sgoal", prefix);
        if ((st = check_point(g, pq->agent_size, pq, &goal, f, pq->partial, &goal_moved, e)))
            return st;
    }
    q = pf_query_make(start, goal, algo);
    q.heuristic = pq->heuristic;
    q.weight = algo == PF_ALGO_WEIGHTED ? pq->weight : 1.0;
    q.max_expanded = pq->max_expanded;
    q.record_expanded = pq->debug;
    q.should_stop = pf_clock_deadline_passed;
    q.stop_ud = &job->deadline_ns;
    q.agent_size = pq->agent_size;
    q.partial = pq->partial;
    t0 = pf_clock_now_ns();
    if (goals)
        st = pf_planner_search_nearest(ctx, mv->planner, &q, goals, pq->ngoals, &res, &which);
    else
        st = pf_planner_search(ctx, mv->planner, &q, &res);
    pf_metrics_count_search(m->metrics, algo, st, res.expanded, (pf_clock_now_ns() - t0) / 1000);
    switch (st) {
    case PF_OK:
    case PF_NO_PATH:
    case PF_EBUDGET:
        break;
    case PF_ECANCELED:
        free(goals);
        return st;
    case PF_EUNSUPPORTED:
        free(goals);
        snprintf(f, sizeof(f), "%salgorithm", prefix);
        if (pq->ngoals)
            return pf_proto_error_set(e, st, PF_ERR_UNSUPPORTED, f,
                                      "Algorithm '%s' has no nearest-goal form; use astar or "
                                      "dijkstra with 'goals' (jps and hpa run astar).",
                                      pf_algorithm_name(algo));
        return pf_proto_error_set(e, st, PF_ERR_UNSUPPORTED, f,
                                  "Algorithm '%s' is not available on map '%s'%s.",
                                  pf_algorithm_name(algo), mv->id,
                                  algo == PF_ALGO_HPA ? " (it has no HPA* hierarchy)" : "");
    case PF_EINVAL:
        free(goals);
        snprintf(f, sizeof(f), "%sheuristic", prefix);
        return pf_proto_error_set(e, st, PF_ERR_INVALID_VALUE, f,
                                  "Heuristic '%s' overestimates on this map, so %s would not be "
                                  "optimal; pick another.",
                                  pf_heuristic_name(pq->heuristic), pf_algorithm_name(algo));
    case PF_ENOMEM:
        free(goals);
        return pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    default:
        free(goals);
        return pf_proto_error_set(e, st, PF_ERR_NONE, NULL, "The search failed: %s.",
                                  pf_status_str(st));
    }
    memset(&a, 0, sizeof(a));
    a.status = st;
    a.algorithm = res.algorithm;
    a.cost = res.cost;
    a.path = res.path;
    a.path_len = res.path_len;
    a.partial = res.partial;
    a.partial_reason = res.partial_reason;
    a.agent_size = pq->agent_size;
    a.note = fallback_note(algo, res.algorithm, pq);
    a.start_snapped = start_moved;
    a.start_at = start;
    if (goals && which >= 0) {
        a.has_goals = true;
        a.goal_index = which;
        a.goal = goals[which];
        a.goal_snapped = goal_moves[which];
        a.goal_at = goals[which];
    } else if (!goals) {
        a.goal_snapped = goal_moved;
        a.goal_at = goal;
    }
    free(goals);
    if (st == PF_OK && pq->smooth && res.path_len > 2) {
        size_t n = 0;
        double cost = res.cost;
        smoothed = malloc(res.path_len * sizeof(*smoothed));
        if (!smoothed)
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        /* String pulling can cut through expensive cells on maps with
         * varying costs; a smoothed path that costs more is not taken. */
        if (pf_path_smooth(g, res.path, res.path_len, smoothed, &n, &cost) == PF_OK &&
            cost <= res.cost + 1e-9 * (1.0 + res.cost)) {
            a.path = smoothed;
            a.path_len = n;
            a.cost = cost;
        }
    }
    a.expanded_cells = res.expanded_cells;
    a.expanded_cells_len = res.expanded_cells_len;
    a.abstract_path = res.abstract_path;
    a.abstract_path_len = res.abstract_path_len;
    a.map_width = pf_grid_width(g);
    a.map_version = mv->version;
    a.expanded = res.expanded;
    a.time_us = (pf_clock_now_ns() - t0) / 1000;
    a.debug = pq->debug;
    pf_jsonw_obj_begin(w);
    m0 = w->len;
    pf_path_write_members(w, &a);
    if (cacheable(m, pq) && st != PF_EBUDGET && !pf_jsonw_failed(w)) {
        pf_cache_key k = cache_key(mv, pq);
        pf_cache_value v = {w->buf + m0, w->len - m0};
        pf_cache_put(mv->cache, &k, &v); /* a full cache or ENOMEM only loses the entry */
    }
    pf_path_write_stats(w, &a);
    pf_jsonw_obj_end(w);
    free(smoothed);
    return PF_OK;
}

/* Whether auto may run hpa on mv (then an agent size's hierarchy may be
 * built): some distance bin of its measurement picks hpa. */
static bool auto_may_hpa(const pf_mapver *mv) {
    pf_planner_auto_info ai;
    if (!pf_planner_has_hpa(mv->planner)) return false;
    pf_planner_auto_info_get(mv->planner, &ai);
    return !ai.exact_faster;
}

/* Navmesh maps. */

static const float *nav_box(const pf_mapver *mv, const pf_nav_path_request *q, float def[3]) {
    if (q->has_box) return q->box;
    pf_navmesh_default_extents(mv->nav, def);
    return def;
}

static bool nav_cacheable(const pf_paths_routes *m, const pf_nav_path_request *q) {
    return q->use_cache && !q->corridor && m->cfg->cache_entries > 0;
}

static pf_cache_key nav_cache_key(const pf_mapver *mv, const pf_nav_path_request *q) {
    float def[3];
    return pf_cache_key_make_nav(q->start, q->goal, nav_box(mv, q, def), (int32_t)q->algorithm,
                                 mv->version);
}

/* As answer_from_cache, for a navmesh query. */
static bool nav_answer_from_cache(pf_paths_routes *m, const pf_mapver *mv,
                                  const pf_nav_path_request *q, pf_jsonw *w) {
    pf_cache_key k;
    pf_cache_value v;
    uint64_t t0 = pf_clock_now_ns();
    bool hit;
    if (!nav_cacheable(m, q)) return false;
    k = nav_cache_key(mv, q);
    hit = pf_cache_get(mv->cache, &k, &v);
    pf_metrics_count_cache(m->metrics, hit);
    if (!hit) return false;
    pf_jsonw_obj_begin(w);
    pf_jsonw_raw_members(w, v.json, v.len);
    pf_nav_write_path_stats(w, 0, (pf_clock_now_ns() - t0) / 1000, true);
    pf_jsonw_obj_end(w);
    free(v.json);
    return true;
}

/* One navmesh query (as run_one). A search is bounded by --nav-max-nodes,
 * not interrupted by the deadline: the deadline is checked between the
 * queries of a batch. */
static pf_status run_nav_one(paths_job *job, pf_nav_query *nq, const pf_nav_path_request *pq,
                             const char *prefix, pf_jsonw *w, pf_proto_error *e) {
    pf_paths_routes *m = job->m;
    const pf_mapver *mv = job->mv;
    float def[3];
    const float *box = nav_box(mv, pq, def);
    const char *which = NULL;
    pf_nav_path p;
    char f[48];
    uint64_t t0;
    size_t m0;
    pf_status st;
    if (job->batch && nav_answer_from_cache(m, mv, pq, w)) return PF_OK;
    t0 = pf_clock_now_ns();
    st = pf_nav_find_path(nq, mv->nav, pq->start, pq->goal, box, pq->algorithm, &p, &which);
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
    pf_metrics_count_nav_search(m->metrics, (int)pq->algorithm,
                                p.out_of_nodes ? PF_OUTCOME_BUDGET
                                : p.partial    ? PF_OUTCOME_UNREACHABLE
                                               : PF_OUTCOME_FOUND,
                                p.expanded, (pf_clock_now_ns() - t0) / 1000);
    pf_jsonw_obj_begin(w);
    m0 = w->len;
    pf_nav_write_path_members(w, &p, pq->algorithm, mv->version);
    if (pq->corridor) pf_nav_write_corridor(w, &p);
    if (nav_cacheable(m, pq) && !p.out_of_nodes && !pf_jsonw_failed(w)) {
        pf_cache_key k = nav_cache_key(mv, pq);
        pf_cache_value v = {w->buf + m0, w->len - m0};
        pf_cache_put(mv->cache, &k, &v);
    }
    pf_nav_write_path_stats(w, p.expanded, (pf_clock_now_ns() - t0) / 1000, false);
    pf_jsonw_obj_end(w);
    return PF_OK;
}

/* Writes the error slot of one batch query. */
static void write_slot_error(pf_jsonw *w, const pf_proto_error *e) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_kint(w, "status", pf_error_http_status(e->code));
    pf_jsonw_key(w, "error");
    pf_proto_write_error_obj(w, e->code, e->message, e->field);
    pf_jsonw_obj_end(w);
}

static void answer_deadline(pf_req *r, const paths_job *job);

/* A batch's answer so far, kept in its job between slices: begun on its
 * first slice (batch_begin, which returns when the slice ends) and sent
 * when its last query is in (batch_answer). */
static uint64_t batch_begin(paths_job *job) {
    if (!job->begun) {
        pf_jsonw_init(&job->w, 512 * job->nqueries);
        job->begun = true;
        pf_jsonw_obj_begin(&job->w);
        pf_jsonw_key(&job->w, "results");
        pf_jsonw_arr_begin(&job->w);
    }
    return pf_clock_now_ns() + (uint64_t)job->m->cfg->slice_ms * 1000000ull;
}

static void batch_answer(pf_req *r, paths_job *job) {
    pf_jsonw_arr_end(&job->w);
    pf_jsonw_kuint(&job->w, "map_version", job->mv->version);
    pf_jsonw_obj_end(&job->w);
    pf_req_answer_json(r, &job->w);
    job->begun = false; /* the answer took the buffer */
}

/* A navmesh map's queries (run_paths): one, or a batch in slices of
 * --slice-ms like a grid batch. Returns true when the batch gave its worker
 * back (pf_req_yield): r is not the caller's then, and it must not finish
 * it. */
static bool run_nav_paths(pf_req *r, paths_job *job) {
    pf_nav_query *nq = pf_navq_get(job->m->navq);
    pf_proto_error e;
    pf_status st = PF_OK;
    uint64_t slice_end;
    if (!nq) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return false;
    }
    if (!job->batch) {
        pf_jsonw w;
        pf_jsonw_init(&w, 4096);
        st = run_nav_one(job, nq, &job->nqueries_v[0], "", &w, &e);
        if (st == PF_OK) {
            pf_req_answer_json(r, &w);
        } else {
            pf_jsonw_free(&w);
            pf_req_answer_perror(r, &e);
        }
        pf_navq_put(job->m->navq, nq);
        return false;
    }
    slice_end = batch_begin(job);
    while (job->next < job->nqueries) {
        char prefix[32];
        if (pf_clock_now_ns() >= job->deadline_ns) {
            st = PF_ECANCELED;
            break;
        }
        snprintf(prefix, sizeof(prefix), "queries[%zu].", job->next);
        if (run_nav_one(job, nq, &job->nqueries_v[job->next], prefix, &job->w, &e) != PF_OK)
            write_slot_error(&job->w, &e);
        job->next++;
        if (job->next < job->nqueries && pf_clock_now_ns() >= slice_end) {
            /* The query context goes back to the pool first: the job may
             * run again at once on another worker. */
            pf_navq_put(job->m->navq, nq);
            if (pf_req_yield(r)) return true; /* the rest later; r is not ours now */
            if (!(nq = pf_navq_get(job->m->navq))) {
                pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
                return false;
            }
            slice_end = pf_clock_now_ns() + (uint64_t)job->m->cfg->slice_ms * 1000000ull;
        }
    }
    pf_navq_put(job->m->navq, nq);
    if (st == PF_ECANCELED) {
        answer_deadline(r, job);
        return false;
    }
    batch_answer(r, job);
    return false;
}

/* Whether query pq may run HPA* on its agent size's own hierarchy. */
static bool wants_agent_hpa(const paths_job *job, const pf_path_request *pq) {
    pf_algorithm a = resolve_algorithm(job->mv, pq);
    return a == PF_ALGO_HPA || (a == PF_ALGO_AUTO && auto_may_hpa(job->mv));
}

/* Whether query pq first builds its agent size's data (agents.h): then it
 * runs in the build queue (pf_req_run_as_build). */
static bool needs_build(const paths_job *job, const pf_path_request *pq) {
    return pq->agent_size > 1 &&
           pf_planner_agent_pending(job->mv->planner, pq->agent_size, wants_agent_hpa(job, pq));
}

/* run_query with room in the memory budget for the agent data a new
 * agent size builds (registry.h: pf_mapver_reserve_agent). */
static pf_status run_one(paths_job *job, pf_search_ctx *ctx, const pf_path_request *pq,
                         const char *prefix, pf_jsonw *w, pf_proto_error *e) {
    size_t reserved;
    char f[48];
    pf_status st;
    snprintf(f, sizeof(f), "%sagent_size", prefix);
    if ((st = pf_mapver_reserve_agent(job->mv, pq->agent_size, wants_agent_hpa(job, pq), &reserved,
                                      f, e)))
        return st;
    st = run_query(job, ctx, pq, prefix, w, e);
    pf_mapver_settle(job->mv, reserved);
    return st;
}

static void answer_deadline(pf_req *r, const paths_job *job) {
    pf_req_answer_error(r, PF_ERR_DEADLINE, NULL,
                        "The deadline of %llu ms passed before the answer was ready.",
                        (unsigned long long)((job->deadline_ns - job->t0_ns) / 1000000ull));
}

/* Job: one path query or a batch. A batch runs its queries in slices of
 * --slice-ms: past one, when another search waits for a worker, it queues
 * itself again (pf_req_yield) and goes on later from its next query, so
 * long batches share the workers with everything else. Its queries share
 * the request's one deadline. */
static void run_paths(pf_req *r, pf_search_ctx *ctx) {
    paths_job *job = pf_req_state(r);
    pf_proto_error e;
    pf_status st = PF_OK;
    uint64_t slice_end;

    if (pf_clock_now_ns() >= job->deadline_ns) {
        answer_deadline(r, job); /* its deadline passed before it ran (on) */
        goto out_finish;
    }
    if (job->mv->nav) {
        if (run_nav_paths(r, job)) return; /* gave its worker back */
        goto out_finish;
    }
    if (!ctx) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        goto out_finish;
    }
    if (!job->batch) {
        pf_jsonw w;
        if (needs_build(job, &job->queries[0]) && pf_req_run_as_build(r)) return;
        pf_jsonw_init(&w, 4096);
        st = run_one(job, ctx, &job->queries[0], "", &w, &e);
        if (st == PF_OK)
            pf_req_answer_json(r, &w);
        else if (st == PF_ECANCELED)
            answer_deadline(r, job);
        else
            pf_req_answer_perror(r, &e);
        if (st != PF_OK) pf_jsonw_free(&w);
        goto out_finish;
    }
    slice_end = batch_begin(job);
    while (job->next < job->nqueries) {
        char prefix[32];
        size_t i = job->next;
        /* A query that builds its agent size's data runs in the build
         * queue; the rest of the batch goes on there until it yields. */
        if (needs_build(job, &job->queries[i]) && pf_req_run_as_build(r)) return;
        snprintf(prefix, sizeof(prefix), "queries[%zu].", i);
        st = run_one(job, ctx, &job->queries[i], prefix, &job->w, &e);
        if (st == PF_ECANCELED) break;
        if (st != PF_OK) {
            /* One bad query does not sink the batch: its slot holds the
             * error and the HTTP status it would have had alone. */
            pf_jsonw_obj_begin(&job->w);
            pf_jsonw_kint(&job->w, "status", pf_error_http_status(e.code));
            pf_jsonw_key(&job->w, "error");
            pf_proto_write_error_obj(&job->w, e.code, e.message, e.field);
            pf_jsonw_obj_end(&job->w);
        }
        job->next++;
        if (job->next < job->nqueries && pf_clock_now_ns() >= slice_end && pf_req_yield(r))
            return; /* another request waited: the rest later; r is not ours now */
    }
    if (st == PF_ECANCELED) {
        answer_deadline(r, job);
        goto out_finish;
    }
    batch_answer(r, job);
out_finish:
    pf_req_finish(r);
}

/* The common part of the three routes: the map, the request parsed by
 * parse, the deadline, the cache, the job. */
typedef pf_status (*parse_fn)(pf_req *r, paths_job *job, int64_t *deadline_ms, pf_proto_error *e);

static void handle(pf_req *r, pf_paths_routes *m, bool batch, parse_fn parse, parse_fn nav_parse) {
    paths_job *job = calloc(1, sizeof(*job));
    pf_proto_error e;
    int64_t deadline_ms = 0;
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->m = m;
    job->batch = batch;
    job->queries = &job->one;
    job->nqueries_v = &job->none;
    job->t0_ns = pf_req_arrival_ns(r);
    job->mv = pf_registry_get(m->registry, pf_req_map_id(r));
    pf_req_set_state(r, job, free_paths_job);
    memset(&e, 0, sizeof(e));
    /* A navmesh map's queries have points [x,y,z]; the map is the version
     * referenced here, so its kind cannot change under the job. */
    if (job->mv && job->mv->nav) parse = nav_parse;
    if (parse(r, job, &deadline_ms, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    if (!job->mv) {
        pf_req_answer_error(r, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.",
                            pf_req_map_id(r));
        return;
    }
    if (deadline_ms > m->cfg->max_deadline_ms) {
        pf_req_answer_error(r, PF_ERR_INVALID_VALUE, "deadline_ms",
                            "deadline_ms %lld is above this server's max_deadline_ms (%lld).",
                            (long long)deadline_ms, (long long)m->cfg->max_deadline_ms);
        return;
    }
    job->deadline_ns =
        job->t0_ns + (uint64_t)(deadline_ms ? deadline_ms : m->cfg->deadline_ms) * 1000000ull;
    if (!batch) {
        /* A cached answer needs no search: answer on this thread. */
        pf_jsonw w;
        pf_jsonw_init(&w, 4096);
        if (job->mv->nav ? nav_answer_from_cache(m, job->mv, &job->nqueries_v[0], &w)
                         : answer_from_cache(m, job->mv, &job->queries[0], &w)) {
            pf_req_answer_json(r, &w);
            return;
        }
        pf_jsonw_free(&w);
    }
    pf_req_set_deadline(r, job->deadline_ns);
    pf_req_dispatch(r, PF_JOB_SEARCH, run_paths);
}

/* GET .../path?start=x,y&goal=x,y: the query string. */
static pf_status parse_query(pf_req *r, paths_job *job, int64_t *deadline_ms, pf_proto_error *e) {
    pf_kv kv[MAX_ARGS];
    size_t n;
    pf_status st;
    if (!pf_req_query(r, kv, MAX_ARGS, &n))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, NULL,
                                  "Too many parameters.");
    job->nqueries = 1;
    pf_path_limits lim = path_limits(job->m->cfg);
    st = pf_path_request_from_query_lim(kv, n, &lim, &job->one, e);
    *deadline_ms = job->one.deadline_ms;
    return st;
}

/* POST .../path: one JSON query. */
static pf_status parse_one(pf_req *r, paths_job *job, int64_t *deadline_ms, pf_proto_error *e) {
    size_t len;
    const char *body = pf_req_body(r, &len);
    pf_status st;
    job->nqueries = 1;
    pf_path_limits lim = path_limits(job->m->cfg);
    st = pf_path_request_parse_lim(body, len, &lim, &job->one, e);
    *deadline_ms = job->one.deadline_ms;
    return st;
}

/* POST .../paths: a batch. */
static pf_status parse_batch(pf_req *r, paths_job *job, int64_t *deadline_ms, pf_proto_error *e) {
    size_t len;
    const char *body = pf_req_body(r, &len);
    pf_path_request *q = NULL;
    pf_path_limits lim = path_limits(job->m->cfg);
    pf_status st = pf_path_batch_parse_lim(body, len, (size_t)job->m->cfg->max_batch, &lim, &q,
                                           &job->nqueries, deadline_ms, e);
    if (q) job->queries = q;
    return st;
}

/* The same three for a navmesh map. */
static pf_status nav_parse_query(pf_req *r, paths_job *job, int64_t *deadline_ms,
                                 pf_proto_error *e) {
    pf_kv kv[MAX_ARGS];
    size_t n;
    pf_status st;
    if (!pf_req_query(r, kv, MAX_ARGS, &n))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, NULL,
                                  "Too many parameters.");
    job->nqueries = 1;
    st = pf_nav_path_request_from_query(kv, n, (float)job->m->cfg->nav_max_search_extent,
                                        &job->none, e);
    *deadline_ms = job->none.deadline_ms;
    return st;
}

static pf_status nav_parse_one(pf_req *r, paths_job *job, int64_t *deadline_ms, pf_proto_error *e) {
    size_t len;
    const char *body = pf_req_body(r, &len);
    pf_status st;
    job->nqueries = 1;
    st = pf_nav_path_request_parse(body, len, (float)job->m->cfg->nav_max_search_extent, &job->none,
                                   e);
    *deadline_ms = job->none.deadline_ms;
    return st;
}

static pf_status nav_parse_batch(pf_req *r, paths_job *job, int64_t *deadline_ms,
                                 pf_proto_error *e) {
    size_t len;
    const char *body = pf_req_body(r, &len);
    pf_nav_path_request *q = NULL;
    pf_status st = pf_nav_path_batch_parse(body, len, (size_t)job->m->cfg->max_batch,
                                           (float)job->m->cfg->nav_max_search_extent, &q,
                                           &job->nqueries, deadline_ms, e);
    if (q) job->nqueries_v = q;
    return st;
}

void pf__route_path_get(pf_req *r, pf_paths_routes *m) {
    handle(r, m, false, parse_query, nav_parse_query);
}

void pf__route_path_post(pf_req *r, pf_paths_routes *m) {
    handle(r, m, false, parse_one, nav_parse_one);
}

void pf__route_paths_post(pf_req *r, pf_paths_routes *m) {
    handle(r, m, true, parse_batch, nav_parse_batch);
}
