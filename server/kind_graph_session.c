/* kind_graph_session.c -- sessions on waypoint graphs (kind.h's session
 * operations over core/graph_dstar.h).
 *
 * A session holds an incremental search (D* Lite with MT-D* Lite's
 * re-rooting) between its agent's node and its goal's node: a new map
 * version (a PATCH) is repaired from the arcs that changed, a goal move or
 * an agent move reuses the search. Start, goal and the updates' position
 * and goal are node ids (a string or an integer, as uploaded) or points
 * snapped to the nearest enabled node: [x, y, z] ([x, y, 0] on a 2D
 * graph) or [x, y] integers on a 2D graph. Updates have a position and a
 * goal only: nodes and edges change for everyone with PATCH.
 *
 * The replanning policy is the grid's and the navmesh's (replan.h):
 * between replans the kept route is answered from the agent's node on
 * it, without a search; on a stream a run whose route did not change
 * answers short. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "graph_dstar.h"
#include "kind_graph_internal.h"
#include "session.h"

typedef struct graph_session {
    const pf_mapver *mv;
    pf_graph_dstar *d;
    uint32_t agent, goal; /* nodes now */
    /* The kept route (nodes, edges: len - 1), the version it was planned
     * on, its cost from its first node; has_route: a route is kept. */
    uint32_t *rn, *re;
    size_t rlen, rcap;
    bool has_route, planned;
    uint64_t planned_version;
    pf_replan rp;
    /* The last full answer on a stream: its stream and route's end. */
    uint64_t push_stream;
    uint32_t push_end;
    size_t push_len;
} graph_session;

static const pf_graph *graph_of(const pf_mapver *mv) { return pf__graph_world_of(mv)->g; }
static const pf_graph_doc *doc_of(const pf_mapver *mv) { return &pf__graph_world_of(mv)->doc->d; }

/* A session's place (session_json.h's pf_place: an id, [x, y] or
 * [x, y, z]; [x, y, 0] is a 2D graph's point) as a node, through the
 * kind's one resolver (pf__graph_locate): a disabled node named by id is
 * taken (the plan answers it blocked). */
static pf_status resolve(const pf_mapver *mv, const pf_place *p, const char *field, uint32_t *out,
                         pf_proto_error *e) {
    pf_graph_place gp;
    pf_graph_info gi;
    double dist;
    memset(&gp, 0, sizeof(gp));
    pf_graph_get_info(graph_of(mv), &gi);
    if (p->dims == 1) {
        snprintf(gp.id, sizeof(gp.id), "%s", p->node);
    } else if (p->dims == 2) {
        gp.is_point = true;
        gp.dims = 2;
        gp.p[0] = p->x;
        gp.p[1] = p->y;
    } else if (p->dims == 3) {
        gp.is_point = true;
        gp.dims = gi.dim == 2 && p->xyz[2] == 0 ? 2 : 3;
        for (int k = 0; k < 3; k++) gp.p[k] = p->xyz[k];
    } else {
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be a node id or a point.", field);
    }
    return pf__graph_locate(mv, &gp, field, out, &dist, e);
}

pf_status pf__graph_session_create(const pf_mapver *mv, const pf_session_request *q,
                                   const char *prefix, void **state, size_t *reserve,
                                   pf_proto_error *e) {
    graph_session *s;
    uint32_t a, b;
    pf_status st;
    char f[48];
    *state = NULL;
    *reserve = 0;
    if (q->has_agent_size || q->has_agent_type)
        return pf_proto_error_set(
            e, PF_EINVAL, PF_ERR_INVALID_VALUE,
            (snprintf(f, sizeof(f), "%s%s", prefix,
                      q->has_agent_size ? "agent_size" : "agent_type"),
             f),
            "Field '%s' is not for graph sessions: a graph's agent is a node.", f);
    snprintf(f, sizeof(f), "%sstart", prefix);
    if ((st = resolve(mv, &q->start, f, &a, e))) return st;
    snprintf(f, sizeof(f), "%sgoal", prefix);
    if ((st = resolve(mv, &q->goal, f, &b, e))) return st;
    if (!(s = calloc(1, sizeof(*s))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if ((st = pf_graph_dstar_create(graph_of(mv), a, b, PF_GRAPH_DSTAR_ROOT_AUTO, &s->d))) {
        free(s);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    s->mv = mv;
    s->agent = a;
    s->goal = b;
    pf_session_policy(mv->env ? mv->env->d.cfg : NULL, NULL, &q->replan, &s->rp.policy);
    *reserve = pf_graph_dstar_bound(graph_of(mv));
    *state = s;
    return PF_OK;
}

void pf__graph_session_free(void *state) {
    graph_session *s = state;
    if (!s) return;
    pf_graph_dstar_destroy(s->d);
    free(s->rn);
    free(s->re);
    free(s);
}

size_t pf__graph_session_memory(const void *state) {
    const graph_session *s = state;
    return sizeof(*s) + pf_graph_dstar_memory(s->d) + s->rcap * 2 * sizeof(uint32_t);
}

static void node_place(const pf_mapver *mv, uint32_t v, pf_place *p) {
    const pf_graph_doc *d = doc_of(mv);
    memset(p, 0, sizeof(*p));
    p->dims = 1;
    p->node_int = d->id_int[v] != 0;
    snprintf(p->node, sizeof(p->node), "%s", d->ids + d->id_off[v]);
}

void pf__graph_session_where(const void *state, pf_place *position, pf_place *goal) {
    const graph_session *s = state;
    node_place(s->mv, s->agent, position);
    node_place(s->mv, s->goal, goal);
}

/* A new version: the search repairs from the arcs that changed, at the
 * next plan. */
const char *pf__graph_session_rebase(void *state, const pf_mapver *from, const pf_mapver *to) {
    graph_session *s = state;
    (void)from;
    s->mv = to;
    if (pf_graph_dstar_set_graph(s->d, graph_of(to)) != PF_OK) return "rebuilt";
    return "incremental";
}

/* Checks every update of l and resolves its places (into an[i], gn[i]:
 * PF_GRAPH_NONE when not sent). */
static pf_status validate(const graph_session *s, const pf_update_list *l, uint32_t *an,
                          uint32_t *gn, pf_proto_error *e) {
    char pbuf[40], f[160];
    pf_status st;
    for (size_t i = 0; i < l->n; i++) {
        const pf_update *u = &l->items[i];
        const char *prefix = pf_update_prefix(l, i, pbuf, sizeof(pbuf));
        an[i] = gn[i] = PF_GRAPH_NONE;
        if (u->ncells || u->ndoors) {
            snprintf(f, sizeof(f), "%s%s", prefix, u->ncells ? "cells" : "doors");
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_REQUEST, f,
                                      "A graph session's update has a position and a goal only; "
                                      "nodes and edges change for everyone with PATCH "
                                      "/v1/maps/%s.",
                                      s->mv->id);
        }
        if (u->has_position) {
            snprintf(f, sizeof(f), "%sposition", prefix);
            if ((st = resolve(s->mv, &u->position, f, &an[i], e))) return st;
        }
        if (u->has_goal) {
            snprintf(f, sizeof(f), "%sgoal", prefix);
            if ((st = resolve(s->mv, &u->goal, f, &gn[i], e))) return st;
        }
    }
    return PF_OK;
}

static pf_status keep_route(graph_session *s, const pf_graph_path *p) {
    if (p->len > s->rcap) {
        uint32_t *rn = realloc(s->rn, p->len * sizeof(uint32_t)), *re;
        if (!rn) return PF_ENOMEM;
        s->rn = rn;
        if (!(re = realloc(s->re, p->len * sizeof(uint32_t)))) return PF_ENOMEM;
        s->re = re;
        s->rcap = p->len;
    }
    memcpy(s->rn, p->nodes, p->len * sizeof(uint32_t));
    if (p->len > 1) memcpy(s->re, p->edges, (p->len - 1) * sizeof(uint32_t));
    s->rlen = p->len;
    s->has_route = true;
    return PF_OK;
}

/* Where the agent is on the kept route (its index), or SIZE_MAX. */
static size_t route_at(const graph_session *s) {
    for (size_t i = 0; s->has_route && i < s->rlen; i++)
        if (s->rn[i] == s->agent) return i;
    return SIZE_MAX;
}

/* Whether the kept route from index i on is still open on g. */
static bool route_open(const graph_session *s, const pf_graph *g, size_t i) {
    for (size_t k = i; k < s->rlen; k++) {
        uint32_t from, to;
        double c;
        bool both, on;
        if (!pf_graph_node_enabled(g, s->rn[k])) return false;
        if (k + 1 < s->rlen) {
            pf_graph_edge(g, s->re[k], &from, &to, &c, &both, &on);
            if (!on) return false;
        }
    }
    return true;
}

static double route_cost(const graph_session *s, const pf_graph *g, size_t i) {
    double sum = 0;
    for (size_t k = i; k + 1 < s->rlen; k++) {
        uint32_t from, to;
        double c;
        bool both, on;
        pf_graph_edge(g, s->re[k], &from, &to, &c, &both, &on);
        sum += c;
    }
    return sum;
}

static void write_route(pf_jsonw *w, const graph_session *s, const pf_graph *g, size_t at,
                        bool found) {
    const pf_graph_doc *d = doc_of(s->mv);
    pf_graph_info gi;
    pf_graph_get_info(g, &gi);
    pf_jsonw_key(w, "path");
    pf_jsonw_arr_begin(w);
    for (size_t k = at; found && k < s->rlen; k++) pf_graph_doc_write_id(w, d, s->rn[k]);
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "edges");
    pf_jsonw_arr_begin(w);
    for (size_t k = at; found && k + 1 < s->rlen; k++) pf_jsonw_uint(w, s->re[k]);
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "points");
    pf_jsonw_arr_begin(w);
    for (size_t k = at; found && k < s->rlen; k++) {
        const double *p = pf_graph_node_pos(g, s->rn[k]);
        pf_jsonw_arr_begin(w);
        for (int c = 0; c < gi.dim; c++) pf_jsonw_double(w, round(p[c] * 1e4) / 1e4);
        pf_jsonw_arr_end(w);
    }
    pf_jsonw_arr_end(w);
}

/* The session job's part for a graph session: validate and apply the
 * moves, decide with the policy whether to plan (repairing the search) or
 * answer the kept route, count, answer in full or short. */
pf_error pf__graph_session_run(const pf_kind_session_run *run, void *state, const pf_update_list *l,
                               pf_jsonw *w) {
    graph_session *s = state;
    const pf_graph *g = graph_of(run->mv);
    const pf_config *cfg = run->mv->env ? run->mv->env->d.cfg : NULL;
    pf_metrics *m = run->metrics;
    uint64_t t0 = run->t0_ns, expanded = 0;
    uint32_t *an = NULL, *gn = NULL;
    pf_replan_answer ra;
    pf_replan_input in;
    pf_replan_reason why;
    pf_proto_error e;
    pf_graph_path p;
    pf_status st = PF_OK;
    const char *reason = NULL, *route = "none";
    bool replanned = false, goal_moved = false, found;
    size_t at;
    pf_place pos, gl;
    s->mv = run->mv;
    if (pf_graph_dstar_graph(s->d) != g && pf_graph_dstar_set_graph(s->d, g) != PF_OK) {
        pf_proto_write_error(w, PF_ERR_INTERNAL, NULL, NULL);
        return PF_ERR_INTERNAL;
    }
    if (l && l->n) {
        an = malloc(l->n * sizeof(uint32_t));
        gn = malloc(l->n * sizeof(uint32_t));
        if (!an || !gn) {
            free(an);
            free(gn);
            pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
            return PF_ERR_NO_MEMORY;
        }
        if (validate(s, l, an, gn, &e)) {
            free(an);
            free(gn);
            pf_proto_write_perror(w, &e);
            return e.code;
        }
        for (size_t i = 0; i < l->n; i++) {
            if (gn[i] != PF_GRAPH_NONE) s->goal = gn[i];
            if (an[i] != PF_GRAPH_NONE) s->agent = an[i];
            pf_session_policy(cfg, &s->rp.policy, &l->items[i].replan, &s->rp.policy);
        }
        free(an);
        free(gn);
    }
    at = route_at(s);
    memset(&in, 0, sizeof(in));
    in.now_ms = pf_clock_now_ns() / 1000000u;
    memcpy(in.goal, pf_graph_node_pos(g, s->goal), sizeof(in.goal));
    in.has_route = s->has_route;
    in.off_route = s->has_route && at == SIZE_MAX;
    in.blocked = s->has_route && at != SIZE_MAX && !route_open(s, g, at);
    in.at_end = s->has_route && at != SIZE_MAX && at + 1 == s->rlen && s->rn[at] != s->goal;
    in.map_changed = s->planned && run->mv->version != s->planned_version;
    why = pf_replan_decide(&s->rp, &in);
    goal_moved = s->planned && s->has_route && s->rn[s->rlen - 1] != s->goal;
    if (pf_replan_reason_replans(why) || !s->has_route) {
        double kept =
            s->has_route && at != SIZE_MAX && s->rn[s->rlen - 1] == s->goal && route_open(s, g, at)
                ? route_cost(s, g, at)
                : INFINITY;
        pf_graph_dstar_set_agent(s->d, s->agent);
        pf_graph_dstar_set_goal(s->d, s->goal);
        {
            /* The session's limits (kind.h): a plan they stop goes on at
             * the next run. */
            uint64_t deadline = run->deadline_ns;
            pf_plan_limits lim = {run->max_expanded, deadline ? pf_clock_deadline_passed : NULL,
                                  &deadline, 0};
            st = pf_graph_dstar_plan(s->d, &lim, &p);
        }
        expanded = p.expanded;
        replanned = true;
        if (st == PF_ENOMEM) {
            pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
            return PF_ERR_NO_MEMORY;
        }
        if (st == PF_OK) {
            /* Hysteresis (replan.h): the kept route stays unless the new
             * one is cheaper by the policy's fraction of it. */
            if (s->rp.policy.hysteresis > 0 && isfinite(kept) &&
                p.cost > kept * (1 - s->rp.policy.hysteresis)) {
                route = "kept";
                memmove(s->rn, s->rn + at, (s->rlen - at) * sizeof(uint32_t));
                if (s->rlen - at > 1)
                    memmove(s->re, s->re + at, (s->rlen - at - 1) * sizeof(uint32_t));
                s->rlen -= at;
            } else {
                bool same = s->has_route && at != SIZE_MAX && s->rlen - at == p.len &&
                            memcmp(s->rn + at, p.nodes, p.len * sizeof(uint32_t)) == 0;
                if (keep_route(s, &p)) {
                    pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
                    return PF_ERR_NO_MEMORY;
                }
                route = same ? "same" : "new";
            }
            at = 0;
        } else {
            s->has_route = false;
            route = "lost";
            reason = st == PF_EBLOCKED    ? "blocked"
                     : st == PF_EBUDGET   ? "node_budget"
                     : st == PF_ECANCELED ? "deadline"
                                          : "unreachable";
        }
        pf_metrics_count_replan(m, why);
        if (goal_moved) pf_metrics_count_goal_move(m, true);
        pf_replan_done(&s->rp, pf_clock_now_ns() / 1000000u, in.goal);
        s->planned = true;
        s->planned_version = run->mv->version;
        pf__graph_count_search(m, (pf_graph_algorithm)PF_GRAPH_ALGORITHMS,
                               st == PF_OK          ? PF_OUTCOME_FOUND
                               : st == PF_EBUDGET   ? PF_OUTCOME_BUDGET
                               : st == PF_ECANCELED ? PF_OUTCOME_DEADLINE
                               : st == PF_NO_PATH   ? PF_OUTCOME_UNREACHABLE
                                                    : PF_OUTCOME_ERROR,
                               expanded, (pf_clock_now_ns() - t0) / 1000);
    } else {
        pf_metrics_count_replan(m, why);
    }
    found = s->has_route;
    memset(&ra, 0, sizeof(ra));
    ra.reason = pf_replan_reason_name(why);
    ra.replanned = replanned;
    ra.route = route;
    ra.policy = s->rp.policy;
    node_place(run->mv, s->agent, &pos);
    node_place(run->mv, s->goal, &gl);
    if (run->stream && run->stream == s->push_stream && found && !replanned &&
        s->rn[s->rlen - 1] == s->push_end && s->rlen - at <= s->push_len) {
        pf_session_short sa;
        memset(&sa, 0, sizeof(sa));
        sa.session_id = run->session_id;
        sa.map_id = run->map_id;
        sa.found = true;
        sa.cost = round(route_cost(s, g, at) * 1e4) / 1e4;
        sa.position = pos;
        sa.goal = gl;
        sa.map_version = run->mv->version;
        sa.ttl_s = run->ttl_s;
        sa.replan = &ra;
        sa.time_us = (pf_clock_now_ns() - t0) / 1000;
        sa.updates = l ? l->n : 0;
        sa.rebase = "none";
        sa.memory_bytes = run->record_bytes + pf__graph_session_memory(s);
        pf_session_write_short(w, &sa);
        pf_metrics_count_stream_answer(m, true);
        return PF_ERR_NONE;
    }
    if (run->stream) {
        s->push_stream = found ? run->stream : 0;
        s->push_end = found ? s->rn[s->rlen - 1] : PF_GRAPH_NONE;
        s->push_len = found ? s->rlen - at : 0;
        pf_metrics_count_stream_answer(m, false);
    }
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "session_id", run->session_id);
    pf_jsonw_kstr(w, "map_id", run->map_id);
    pf_jsonw_kbool(w, "found", found);
    if (!found) pf_jsonw_kstr(w, "reason", reason ? reason : "unreachable");
    pf_jsonw_kdouble(w, "cost", found ? round(route_cost(s, g, at) * 1e4) / 1e4 : 0.0);
    write_route(w, s, g, at, found);
    pf_jsonw_key(w, "position");
    pf_place_write(w, &pos);
    pf_jsonw_key(w, "goal");
    pf_place_write(w, &gl);
    pf_jsonw_kstr(w, "algorithm", "dstar_lite");
    pf_jsonw_kuint(w, "map_version", run->mv->version);
    pf_jsonw_kint(w, "ttl_s", run->ttl_s);
    pf_replan_answer_write(w, &ra);
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "expanded", expanded);
    pf_jsonw_kuint(w, "time_us", (pf_clock_now_ns() - t0) / 1000);
    pf_jsonw_kuint(w, "updates", l ? l->n : 0);
    pf_jsonw_kstr(w, "rebase", run->rebase ? run->rebase : "none");
    pf_jsonw_kuint(w, "memory_bytes", run->record_bytes + pf__graph_session_memory(s));
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
    return PF_ERR_NONE;
}
