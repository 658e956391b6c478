/* kind_graph_path.c -- path queries on a waypoint graph (kind.h's path
 * operations): between node ids, or points snapped to the nearest enabled
 * node through the graph's kd-tree (the answer names the node and how far
 * the point was), with Dijkstra or A* on a search context borrowed from the
 * environment's pool for a worker's run of queries. Answers between ids
 * are cached per (nodes, algorithm, max_expanded, partial, version). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kind_graph_internal.h"

/* Parsing: the queries are an array of pf_graph_path_request. */

pf_status pf__graph_path_parse_one(const pf_kind_env *env, const pf_kv *kv, size_t nkv,
                                   const char *body, size_t len, void **q, int64_t *deadline_ms,
                                   pf_proto_error *e) {
    pf_graph_path_request *one = calloc(1, sizeof(*one));
    size_t max_goals = (size_t)env->d.cfg->max_goals;
    pf_status st;
    *q = one;
    if (!one) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    st = kv ? pf_graph_path_request_from_query(kv, nkv, max_goals, one, e)
            : pf_graph_path_request_parse(body, len, max_goals, one, e);
    *deadline_ms = one->deadline_ms;
    return st;
}

pf_status pf__graph_path_parse_batch(const pf_kind_env *env, const char *body, size_t len,
                                     size_t max, void **q, size_t *n, int64_t *deadline_ms,
                                     pf_proto_error *e) {
    pf_graph_path_request *qs = NULL;
    pf_status st = pf_graph_path_batch_parse(body, len, max, (size_t)env->d.cfg->max_goals, &qs, n,
                                             deadline_ms, e);
    *q = qs;
    return st;
}

void pf__graph_paths_free(void *q, size_t n) {
    pf_graph_path_request *qs = q;
    /* A single query's parse leaves n 0 or 1; it may own goals either way. */
    for (size_t i = 0; qs && i < (n ? n : 1); i++) pf_graph_path_request_clear(&qs[i]);
    free(q);
}

/* Contexts: a pool in the environment, so a worker's run of queries reuses
 * one (its arrays grow to the largest graph searched). Each is charged to
 * the budget as it was when last given back (a context grows only while a
 * worker holds it). */
void *pf__graph_scratch_get(const pf_kind_env *env, pf_search_ctx *ctx) {
    pf__graph_env *ge = (pf__graph_env *)pf__graph_env_of(env);
    pf__graph_scratch *s = NULL;
    (void)ctx;
    pthread_mutex_lock(&ge->lock);
    if (ge->nfree) s = ge->free_ctx[--ge->nfree];
    pthread_mutex_unlock(&ge->lock);
    if (s) return s;
    if (!(s = calloc(1, sizeof(*s))) || !(s->ctx = pf_graph_ctx_create())) {
        free(s);
        return NULL;
    }
    s->charged = sizeof(*s) + pf_graph_ctx_memory(s->ctx);
    pf_mem_charge(env->d.mem, PF_MEM_SCRATCH, s->charged);
    return s;
}

void pf__graph_scratch_put(const pf_kind_env *env, void *scratch) {
    pf__graph_env *ge = (pf__graph_env *)pf__graph_env_of(env);
    pf__graph_scratch *s = scratch;
    size_t now;
    if (!s) return;
    now = sizeof(*s) + pf_graph_ctx_memory(s->ctx);
    if (now > s->charged)
        pf_mem_charge(env->d.mem, PF_MEM_SCRATCH, now - s->charged);
    else
        pf_mem_uncharge(env->d.mem, PF_MEM_SCRATCH, s->charged - now);
    s->charged = now;
    pthread_mutex_lock(&ge->lock);
    if (ge->nfree < ge->max_free) {
        ge->free_ctx[ge->nfree++] = s;
        s = NULL;
    }
    pthread_mutex_unlock(&ge->lock);
    pf__graph_scratch_free(env, s);
}

void pf__graph_scratch_free(const pf_kind_env *env, pf__graph_scratch *s) {
    if (!s) return;
    pf_mem_uncharge(env->d.mem, PF_MEM_SCRATCH, s->charged);
    pf_graph_ctx_destroy(s->ctx);
    free(s);
}

pf_graph_algorithm pf__graph_algorithm(const pf_mapver *mv, pf_graph_algorithm asked) {
    pf_graph_info gi;
    if ((asked == PF_GRAPH_AUTO || asked == PF_GRAPH_CH) &&
        pf_graph_ch_ready(pf__graph_world_of(mv)->g))
        return PF_GRAPH_CH;
    if (asked != PF_GRAPH_AUTO && asked != PF_GRAPH_ALT && asked != PF_GRAPH_CH) return asked;
    pf_graph_get_info(pf__graph_world_of(mv)->g, &gi);
    return gi.landmarks && gi.lm_scale > 0 ? PF_GRAPH_ALT : PF_GRAPH_ASTAR;
}

/* The cache: queries between two ids only (a point's answer says where it
 * was snapped from). */
static bool cacheable(const pf_mapver *mv, const pf_graph_path_request *q) {
    return q->use_cache && !q->goals && !q->exclude.n && !q->start.is_point && !q->goal.is_point &&
           mv->env && mv->env->d.cfg->cache_entries > 0;
}

static pf_cache_key cache_key(const pf_mapver *mv, const pf_graph_path_request *q, uint32_t s,
                              uint32_t t) {
    pf_cache_key k;
    uint32_t ends[3] = {s, t, q->partial};
    memset(&k, 0, sizeof(k));
    k.algorithm = (int32_t)pf__graph_algorithm(mv, q->algorithm);
    k.max_expanded = q->max_expanded;
    k.version = mv->version;
    pf_cache_key_extra(&k, ends, sizeof(ends));
    return k;
}

static void write_stats(pf_jsonw *w, uint64_t expanded, uint64_t us, bool cached) {
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "expanded", expanded);
    pf_jsonw_kuint(w, "time_us", us);
    pf_jsonw_kbool(w, "cached", cached);
    pf_jsonw_obj_end(w);
}

static bool answer_from_cache(const pf_mapver *mv, const pf_graph_path_request *q, pf_jsonw *w) {
    const pf_graph_doc *d = &pf__graph_world_of(mv)->doc->d;
    uint64_t t0 = pf_clock_now_ns();
    uint32_t s, t;
    pf_cache_key k;
    pf_cache_value v;
    if (!cacheable(mv, q)) return false;
    s = pf_graph_doc_node(d, q->start.id);
    t = pf_graph_doc_node(d, q->goal.id);
    if (s == PF_GRAPH_NONE || t == PF_GRAPH_NONE) return false;
    k = cache_key(mv, q, s, t);
    if (!pf_kind_cache_get(mv, mv->cache, &k, &v)) return false;
    pf_jsonw_obj_begin(w);
    pf_jsonw_raw_members(w, v.json, v.len);
    write_stats(w, 0, (pf_clock_now_ns() - t0) / 1000, true);
    pf_jsonw_obj_end(w);
    free(v.json);
    return true;
}

bool pf__graph_path_cached(const pf_mapver *mv, const void *q, size_t i, pf_jsonw *w) {
    return answer_from_cache(mv, (const pf_graph_path_request *)q + i, w);
}

pf_status pf__graph_exclude_mask(const pf_mapver *mv, const pf_graph_exclude *x, const char *prefix,
                                 uint64_t *mask, pf_proto_error *e) {
    const pf__graph_world *gw = pf__graph_world_of(mv);
    *mask = 0;
    for (size_t k = 0; k < x->n; k++) {
        bool known;
        *mask |= pf_graph_tag_mask(&gw->doc->tags, x->tags[k], &known);
        if (!known) {
            char f[96];
            snprintf(f, sizeof(f), "%sexclude_tags[%zu]", prefix, k);
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "No node or edge of map '%s' has tag '%s'%s.", mv->id,
                                      x->tags[k],
                                      gw->doc->tags.past ? " among its first 64 tags" : "");
        }
    }
    return PF_OK;
}

pf_status pf__graph_locate(const pf_mapver *mv, const pf_graph_place *p, const char *f, uint32_t *v,
                           double *dist, pf_proto_error *e) {
    const pf__graph_world *gw = pf__graph_world_of(mv);
    pf_graph_info gi;
    *dist = 0;
    if (!p->is_point) {
        if ((*v = pf_graph_doc_node(&gw->doc->d, p->id)) == PF_GRAPH_NONE)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Map '%s' has no node '%.64s'.", mv->id, p->id);
        return PF_OK;
    }
    pf_graph_get_info(gw->g, &gi);
    if (p->dims != gi.dim)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Map '%s' is a %dD graph; %s has %d coordinates.", mv->id, gi.dim,
                                  f, p->dims);
    if ((*v = pf_graph_nearest(gw->g, p->p, dist, NULL)) == PF_GRAPH_NONE)
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                  "Every node of map '%s' is disabled.", mv->id);
    return PF_OK;
}

pf_status pf__graph_resolve(const pf_mapver *mv, const pf_graph_place *p, const char *f,
                            uint32_t *v, double *dist, pf_proto_error *e) {
    pf_status st = pf__graph_locate(mv, p, f, v, dist, e);
    if (!st && !p->is_point && !pf_graph_node_enabled(pf__graph_world_of(mv)->g, *v))
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                  "Node '%.64s' of map '%s' is disabled.", p->id, mv->id);
    return st;
}

/* An end of a query: a node, or (snap "edge") a point on an edge, which
 * the search leaves (reaches) by its ends at a part of the edge's cost. */
typedef struct gend {
    const pf_graph_place *place;
    bool on_edge;
    uint32_t node;       /* a node end */
    uint32_t edge;       /* an edge end: the edge, ... */
    double at, dist;     /* ... the fraction along it from its from node, how far the point was */
    double point[3];     /* ... the point on it */
    uint32_t n;          /* the nodes the search starts (ends) at ... */
    uint32_t nodes[2];   /* ... */
    double costs[2];     /* ... and what getting there costs */
    double from_c, to_c; /* the edge's cost from its start to the point, and on to its end */
    bool both;
} gend;

/* p as an end (start: leaving it, else arriving at it), errors naming f. */
static pf_status resolve_end(const pf_mapver *mv, const pf_graph_place *p, bool snap_edge,
                             bool start, const char *f, gend *out, pf_proto_error *e) {
    const pf_graph *g = pf__graph_world_of(mv)->g;
    uint32_t u, v;
    double c;
    bool both, on;
    pf_graph_info gi;
    memset(out, 0, sizeof(*out));
    out->place = p;
    if (!p->is_point || !snap_edge) {
        pf_status st = pf__graph_resolve(mv, p, f, &out->node, &out->dist, e);
        out->n = 1;
        out->nodes[0] = out->node;
        return st;
    }
    pf_graph_get_info(g, &gi);
    if (p->dims != gi.dim)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Map '%s' is a %dD graph; %s has %d coordinates.", mv->id, gi.dim,
                                  f, p->dims);
    if ((out->edge = pf_graph_nearest_edge(g, p->p, &out->at, &out->dist)) == PF_GRAPH_NONE)
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                  "Map '%s' has no enabled edge between enabled nodes.", mv->id);
    out->on_edge = true;
    pf_graph_edge(g, out->edge, &u, &v, &c, &both, &on);
    for (int k = 0; k < 3; k++) {
        const double *a = pf_graph_node_pos(g, u), *b = pf_graph_node_pos(g, v);
        out->point[k] = a[k] + out->at * (b[k] - a[k]);
    }
    out->both = both;
    out->from_c = out->at * c;
    out->to_c = c - out->from_c;
    /* Leaving the point: on to `to`, or back to `from` on a two-way edge;
     * arriving: from `from`, or from `to` on a two-way edge. */
    out->nodes[out->n] = start ? v : u;
    out->costs[out->n++] = start ? out->to_c : out->from_c;
    if (both) {
        out->nodes[out->n] = start ? u : v;
        out->costs[out->n++] = start ? out->from_c : out->to_c;
    }
    out->node = out->nodes[0];
    return PF_OK;
}

/* The cost of going along one edge from start s to goal t on it, or
 * INFINITY (other edges, or against a one-way edge). */
static double direct_cost(const gend *s, const gend *t) {
    double d;
    if (!s->on_edge || !t->on_edge || s->edge != t->edge) return INFINITY;
    d = t->from_c - s->from_c;
    if (d >= 0) return d;
    return s->both ? -d : INFINITY;
}

static void write_end(pf_jsonw *w, const pf_graph_doc *d, const gend *g, uint32_t node, int dim) {
    pf_jsonw_obj_begin(w);
    if (node != PF_GRAPH_NONE) {
        pf_jsonw_key(w, "node");
        pf_graph_doc_write_id(w, d, node);
    }
    pf_jsonw_kbool(w, "snapped", g->place->is_point);
    if (g->place->is_point) pf_jsonw_kdouble(w, "distance", g->dist);
    if (g->on_edge) {
        pf_jsonw_kuint(w, "edge", g->edge);
        pf_jsonw_kdouble(w, "at", g->at);
        pf_jsonw_key(w, "point");
        pf_jsonw_arr_begin(w);
        for (int k = 0; k < dim; k++) pf_jsonw_double(w, g->point[k]);
        pf_jsonw_arr_end(w);
    }
    pf_jsonw_obj_end(w);
}

static bool deadline_passed(void *arg) { return pf_clock_now_ns() >= *(const uint64_t *)arg; }

/* The answer's members but the stats (what the cache keeps). goal: the
 * goal end reached (NULL: none, with goals). */
static void write_members(pf_jsonw *w, const pf_mapver *mv, const pf_graph_path_request *q,
                          pf_graph_algorithm algo, pf_status st, const pf_graph_path *p,
                          const gend *start, const gend *goal, size_t gi) {
    const pf__graph_world *gw = pf__graph_world_of(mv);
    const pf_graph_doc *d = &gw->doc->d;
    bool found = st == PF_OK;
    pf_jsonw_kbool(w, "found", found);
    if (!found) {
        if (p->len) pf_jsonw_kbool(w, "partial", true);
        pf_jsonw_kstr(w, "reason", st == PF_EBUDGET ? "budget" : "unreachable");
    }
    if (p->len || found) pf_jsonw_kdouble(w, "cost", p->cost);
    pf_jsonw_key(w, "path");
    pf_jsonw_arr_begin(w);
    for (size_t i = 0; i < p->len; i++) pf_graph_doc_write_id(w, d, p->nodes[i]);
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "edges");
    pf_jsonw_arr_begin(w);
    for (size_t i = 0; i + 1 < p->len; i++) pf_jsonw_uint(w, p->edges[i]);
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "points");
    pf_jsonw_arr_begin(w);
    for (size_t i = 0; i < p->len; i++) {
        const double *xyz = pf_graph_node_pos(gw->g, p->nodes[i]);
        pf_jsonw_arr_begin(w);
        for (int k = 0; k < d->dim; k++) pf_jsonw_double(w, xyz[k]);
        pf_jsonw_arr_end(w);
    }
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "start");
    write_end(w, d, start, start->on_edge ? (p->len ? p->nodes[0] : PF_GRAPH_NONE) : start->node,
              d->dim);
    if (goal) {
        pf_jsonw_key(w, "goal");
        write_end(w, d, goal,
                  goal->on_edge ? (found && p->len ? p->nodes[p->len - 1] : PF_GRAPH_NONE)
                                : goal->node,
                  d->dim);
    }
    if (q->goals && goal) pf_jsonw_kuint(w, "goal_index", gi);
    pf_jsonw_kstr(w, "algorithm", pf_graph_algorithm_name(algo));
    pf_jsonw_kuint(w, "map_version", mv->version);
}

/* The goal ends of q (its goal, or its goals) into *ends (*n of them),
 * errors naming the field. */
static pf_status resolve_goals(const pf_mapver *mv, const pf_graph_path_request *q,
                               const char *prefix, gend **ends, size_t *n, pf_proto_error *e) {
    size_t k = q->goals ? q->ngoals : 1;
    char f[64];
    pf_status st;
    *n = 0;
    if (!(*ends = calloc(k, sizeof(gend))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (size_t i = 0; i < k; i++) {
        if (q->goals)
            snprintf(f, sizeof(f), "%sgoals[%zu]", prefix, i);
        else
            snprintf(f, sizeof(f), "%sgoal", prefix);
        if ((st = resolve_end(mv, q->goals ? &q->goals[i] : &q->goal, q->snap_edge, false, f,
                              &(*ends)[i], e)))
            return st;
        *n = i + 1;
    }
    return PF_OK;
}

pf_status pf__graph_path_run(const pf_kind_path_run *run, const void *q, size_t i,
                             const char *prefix, pf_jsonw *w, pf_proto_error *e) {
    const pf_graph_path_request *pq = (const pf_graph_path_request *)q + i;
    const pf_mapver *mv = run->mv;
    const pf__graph_world *gw = pf__graph_world_of(mv);
    pf_graph_ctx *ctx = ((pf__graph_scratch *)run->scratch)->ctx;
    pf_graph_query gq;
    pf_graph_algorithm algo;
    pf_graph_path p;
    gend start, *ge = NULL;
    const gend *goal = NULL;
    size_t nge = 0, nflat = 0, gi = 0;
    uint32_t *gnodes = NULL;
    double *gcosts = NULL, direct = INFINITY;
    uint64_t mask = 0;
    size_t *gowner = NULL;
    char f[64];
    uint64_t t0, us;
    size_t m0;
    bool several;
    pf_status st;
    if (run->batch && pf_clock_now_ns() >= *run->deadline) return PF_ECANCELED;
    if (!ctx) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (run->batch && answer_from_cache(mv, pq, w)) return PF_OK;
    t0 = pf_clock_now_ns();
    snprintf(f, sizeof(f), "%sstart", prefix);
    if ((st = resolve_end(mv, &pq->start, pq->snap_edge, true, f, &start, e))) return st;
    if ((st = resolve_goals(mv, pq, prefix, &ge, &nge, e))) goto out;
    /* One goal node at no cost: the plain search; else goals with costs. */
    several = pq->goals || ge[0].on_edge;
    for (size_t k = 0; k < nge; k++) nflat += ge[k].n;
    if (several) {
        gnodes = malloc(nflat * sizeof(*gnodes));
        gcosts = malloc(nflat * sizeof(*gcosts));
        gowner = malloc(nflat * sizeof(*gowner));
        if (!gnodes || !gcosts || !gowner) {
            st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            goto out;
        }
        nflat = 0;
        for (size_t k = 0; k < nge; k++)
            for (uint32_t j = 0; j < ge[k].n; j++) {
                gnodes[nflat] = ge[k].nodes[j];
                gcosts[nflat] = ge[k].costs[j];
                gowner[nflat++] = k;
            }
    }
    if ((st = pf__graph_exclude_mask(mv, &pq->exclude, prefix, &mask, e))) goto out;
    algo = pf__graph_algorithm(mv, pq->algorithm);
    /* Several goals: alt's bounds are to one goal; it runs as astar. */
    if (several && algo == PF_GRAPH_ALT) algo = PF_GRAPH_ASTAR;
    gq = (pf_graph_query){start.node,
                          several ? 0 : ge[0].node,
                          algo,
                          pq->max_expanded,
                          pq->partial,
                          deadline_passed,
                          (void *)run->deadline,
                          gnodes,
                          several ? nflat : 0,
                          start.on_edge ? start.nodes : NULL,
                          start.on_edge ? start.costs : NULL,
                          start.on_edge ? start.n : 0,
                          several ? gcosts : NULL,
                          mask};
    /* What the hierarchy cannot answer (partial, goals, edges, tags) runs
     * as alt does, and is named so (core graph.h). */
    if (algo == PF_GRAPH_CH && !pf_graph_ch_usable(gw->g, &gq)) {
        algo = pf__graph_algorithm(mv, PF_GRAPH_ALT);
        if (several && algo == PF_GRAPH_ALT) algo = PF_GRAPH_ASTAR;
        gq.algorithm = algo;
    }
    st = pf_graph_search(gw->g, ctx, &gq, &p);
    if (st == PF_OK && several) {
        /* The goal reached: the entry at the path's end arriving cheapest. */
        double best = INFINITY;
        for (size_t k = 0; k < nflat; k++)
            if (gnodes[k] == p.end && gcosts[k] < best) {
                best = gcosts[k];
                gi = gowner[k];
            }
    } else if (!several) {
        gi = 0;
    }
    /* A start and a goal on one edge: along it, when that is cheaper. */
    for (size_t k = 0; k < nge; k++) {
        double dc = start.on_edge && (pf_graph_edge_tags(gw->g, start.edge) & mask)
                        ? INFINITY
                        : direct_cost(&start, &ge[k]);
        if (dc < direct && (st != PF_OK || dc <= p.cost)) {
            direct = dc;
            gi = k;
        }
    }
    if (isfinite(direct) && (st != PF_OK || direct <= p.cost)) {
        memset(&p, 0, sizeof(p));
        p.reached = true;
        p.cost = direct;
        st = PF_OK;
    }
    goal = st == PF_OK || !pq->goals ? &ge[gi] : NULL;
    us = (pf_clock_now_ns() - t0) / 1000;
    if (st == PF_ECANCELED) {
        pf__graph_count_search(mv->env ? mv->env->d.metrics : NULL, algo, PF_OUTCOME_DEADLINE,
                               p.expanded, us);
        goto out;
    }
    if (st != PF_OK && st != PF_NO_PATH && st != PF_EBUDGET) {
        pf__graph_count_search(mv->env ? mv->env->d.metrics : NULL, algo, PF_OUTCOME_ERROR,
                               p.expanded, us);
        st = pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                                "The query cannot be answered: %s.", pf_status_str(st));
        goto out;
    }
    pf__graph_count_search(mv->env ? mv->env->d.metrics : NULL, algo,
                           st == PF_OK        ? PF_OUTCOME_FOUND
                           : st == PF_EBUDGET ? PF_OUTCOME_BUDGET
                                              : PF_OUTCOME_UNREACHABLE,
                           p.expanded, us);
    pf_jsonw_obj_begin(w);
    m0 = w->len;
    write_members(w, mv, pq, algo, st, &p, &start, goal, gi);
    if (cacheable(mv, pq) && st != PF_EBUDGET && !pf_jsonw_failed(w)) {
        pf_cache_key k = cache_key(mv, pq, start.node, ge[0].node);
        pf_cache_value v = {w->buf + m0, w->len - m0};
        pf_cache_put(mv->cache, &k, &v);
    }
    write_stats(w, p.expanded, us, false);
    pf_jsonw_obj_end(w);
    st = PF_OK;
out:
    free(ge);
    free(gnodes);
    free(gcosts);
    free(gowner);
    return st;
}
