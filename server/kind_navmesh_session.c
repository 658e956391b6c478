/* kind_navmesh_session.c -- path corridor sessions on a navmesh (kind.h's
 * session operations; nav/navmesh.h's dtPathCorridor).
 *
 * A session holds a corridor instead of a D* Lite search: an update moves
 * the agent along it (the corridor follows, its path is kept and
 * funnelled again) or sets a new goal (planned anew); a new map version
 * (obstacles or areas PATCHed), a position the corridor cannot reach or a
 * blocked one make it plan anew from where the agent is. Updates have a
 * position and a goal only, points [x,y,z].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "kind_navmesh_internal.h"
#include "session.h"

/* A navmesh session's state: its corridor, the agent's position and goal,
 * and whether the next plan starts anew (created, a new goal) instead of
 * following the agent along the corridor. */
typedef struct nav_session {
    const pf_mapver *mv; /* the version it is on (the session holds the reference) */
    pf_nav_corridor *corr;
    uint32_t nav_type; /* the agent type's index in the map (the same in every version) */
    float npos[3], ngoal[3];
    bool replan, nplanned; /* nplanned: the corridor's first plan (at create) succeeded */
    /* Replanning (core/replan.h): the policy and its state, and the version
     * the corridor last planned on. push_*: the last full answer on a
     * stream, its stream and its corners (3 floats each, owned). */
    pf_replan rp;
    uint64_t planned_version;
    /* How far the goal slid along the corridor since its last plan (the
     * goal's moves added up): bounded by --nav-target-slide-pct. */
    double slid;
    uint64_t push_stream;
    float *push_pts;
    uint32_t push_n;
} nav_session;

pf_status pf__nav_session_create(const pf_mapver *mv, const pf_session_request *q,
                                 const char *prefix, void **state, size_t *reserve,
                                 pf_proto_error *e) {
    nav_session *s;
    const pf_navmesh *view;
    pf_status st;
    char f[48];
    *state = NULL;
    *reserve = PF_SESSION_NAV_RESERVE;
    if (q->start.dims != 3)
        return pf_proto_error_set(
            e, PF_EPARSE, PF_ERR_INVALID_REQUEST, (snprintf(f, sizeof(f), "%sstart", prefix), f),
            "Map '%s' is a navmesh: 'start' and 'goal' are points [x, y, z].", mv->id);
    if (q->has_agent_size)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE,
                                  (snprintf(f, sizeof(f), "%sagent_size", prefix), f),
                                  "Field '%s' is for grid sessions: a navmesh session's agent is "
                                  "one of its map's agent types (agent_type).",
                                  f);
    /* A navmesh plan is one search whose nodes --nav-max-nodes bounds (its
     * answer then says out_of_nodes and the path is partial), and it has
     * no point at which it could stop and go on later. */
    if (q->max_expanded || q->deadline_ms) {
        const char *which = q->max_expanded ? "max_expanded" : "deadline_ms";
        snprintf(f, sizeof(f), "%s%s", prefix, which);
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Field '%s' is for grid and graph sessions: a navmesh session's "
                                  "plan is one search bounded by the server's nav_max_nodes.",
                                  f);
    }
    snprintf(f, sizeof(f), "%sagent_type", prefix);
    if ((st = pf_nav_agent_view(pf_navmesh_of(mv), q->agent_type, f, &view, e))) return st;
    /* Whether the points are near the mesh is the first plan's business
     * (on a worker): an answer with reason "blocked", then 201. */
    if (!(s = calloc(1, sizeof(*s))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (pf_nav_corridor_create(PF_SESSION_NAV_MAX_POLYS, &s->corr)) {
        free(s);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    s->mv = mv;
    s->nav_type = pf_nav_agent_index(view);
    memcpy(s->npos, q->start.xyz, sizeof(s->npos));
    memcpy(s->ngoal, q->goal.xyz, sizeof(s->ngoal));
    s->replan = true;
    pf_session_policy(mv->env ? mv->env->d.cfg : NULL, NULL, &q->replan, &s->rp.policy);
    *state = s;
    return PF_OK;
}

void pf__nav_session_free(void *state) {
    nav_session *s = state;
    if (!s) return;
    pf_nav_corridor_destroy(s->corr);
    free(s->push_pts);
    free(s);
}

size_t pf__nav_session_memory(const void *state) {
    const nav_session *s = state;
    return sizeof(*s) + pf_nav_corridor_memory(s->corr) + (size_t)s->push_n * 3 * sizeof(float);
}

void pf__nav_session_where(const void *state, pf_place *position, pf_place *goal) {
    const nav_session *s = state;
    memset(position, 0, sizeof(*position));
    memset(goal, 0, sizeof(*goal));
    position->dims = goal->dims = 3;
    memcpy(position->xyz, s->npos, sizeof(s->npos));
    memcpy(goal->xyz, s->ngoal, sizeof(s->ngoal));
}

/* The corridor sees the new version at its next move and plans anew on it
 * (its polygons may be gone). */
const char *pf__nav_session_rebase(void *state, const pf_mapver *from, const pf_mapver *to) {
    nav_session *s = state;
    (void)from;
    s->mv = to;
    return "none";
}

/* Checks the updates of l for a navmesh session on nm: position and goal
 * only, points [x,y,z] near the mesh (the default search box). */
static pf_status validate(const nav_session *s, pf_nav_query *q, const pf_update_list *l,
                          pf_proto_error *e) {
    const pf_navmesh *nm = pf_navmesh_agent_type(pf_navmesh_of(s->mv), s->nav_type);
    char pbuf[40], f[160];
    float ext[3], snapped[3];
    pf_navmesh_default_extents(nm, ext);
    for (size_t i = 0; i < l->n; i++) {
        const pf_update *u = &l->items[i];
        const char *prefix = pf_update_prefix(l, i, pbuf, sizeof(pbuf));
        if (u->ncells || u->ndoors) {
            snprintf(f, sizeof(f), "%s%s", prefix, u->ncells ? "cells" : "doors");
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_REQUEST, f,
                                      "A navmesh session's update has a position and a goal "
                                      "only; obstacles and areas change for everyone with "
                                      "PATCH /v1/maps/%s.",
                                      s->mv->id);
        }
        for (int k = 0; k < 2; k++) {
            bool has = k ? u->has_goal : u->has_position;
            const pf_place *at = k ? &u->goal : &u->position;
            bool is3 = at->dims == 3;
            const float *pt = at->xyz;
            if (!has) continue;
            snprintf(f, sizeof(f), "%s%s", prefix, k ? "goal" : "position");
            if (!is3)
                return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                          "Field '%s' must be a point [x, y, z]: map '%s' is a "
                                          "navmesh.",
                                          f, s->mv->id);
            if (pf_nav_nearest(q, nm, pt, ext, snapped) != PF_OK)
                return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                          "No walkable polygon within +-(%g, %g, %g) of %s (%g, "
                                          "%g, %g).",
                                          (double)ext[0], (double)ext[1], (double)ext[2], f,
                                          (double)pt[0], (double)pt[1], (double)pt[2]);
        }
    }
    return PF_OK;
}

/* Whether p's corners after its first point are the last ones of the
 * corners after the first that s last pushed: the agent moved along the
 * same corridor, the way ahead is what the stream has. */
static bool same_way(const nav_session *s, const pf_nav_path *p) {
    uint32_t n = p->npoints, m = s->push_n;
    if (n < 1 || m < 1 || n > m) return false;
    return memcmp(&p->points[3], &s->push_pts[3 * (m - n + 1)],
                  (size_t)(n - 1) * 3 * sizeof(float)) == 0;
}

/* Keeps p's corners as what stream `stream` was last sent in full. */
static void remember_push(nav_session *s, uint64_t stream, const pf_nav_path *p) {
    float *pts = NULL;
    uint32_t n = p ? p->npoints : 0;
    if (n && !(pts = malloc((size_t)n * 3 * sizeof(float)))) n = 0; /* then a full answer again */
    if (n) memcpy(pts, p->points, (size_t)n * 3 * sizeof(float));
    free(s->push_pts);
    s->push_pts = pts;
    s->push_n = n;
    s->push_stream = n ? stream : 0;
}

/* The session job's part for a navmesh session (synced): validate and
 * apply the moves, decide with the policy (replan.h) whether to plan anew
 * or follow the corridor, count, answer: in full, or short on a stream
 * whose last full answer still holds (run->stream). A goal move within
 * the policy's threshold (or before its interval) keeps the corridor to
 * the goal last planned to; the corridor replans by itself when the agent
 * leaves it or the map version changed (reasons off_route, map_changed). */
static pf_error session_run(const pf_kind_session_run *run, nav_session *s, pf_nav_query *q,
                            const pf_update_list *l, pf_jsonw *w);

/* The answer's path points live in the scratch (q's point buffers), so the
 * scratch goes back to the pool only after the answer is written: another
 * worker takes it at once (ThreadSanitizer caught a path query writing a
 * scratch a session was still reading, in concurrency_navmesh_races). */
pf_error pf__nav_session_run(const pf_kind_session_run *run, void *state, const pf_update_list *l,
                             pf_jsonw *w) {
    pf_navq *navq = run->mv->env ? pf_navmesh_navq(run->mv->env) : NULL;
    pf_nav_query *q = navq ? pf_navq_get(navq) : NULL;
    pf_error e = session_run(run, state, q, l, w);
    if (q) pf_navq_put(navq, q);
    return e;
}

static pf_error session_run(const pf_kind_session_run *run, nav_session *s, pf_nav_query *q,
                            const pf_update_list *l, pf_jsonw *w) {
    const pf_navmesh *nm = pf_navmesh_agent_type(pf_navmesh_of(run->mv), s->nav_type);
    const pf_config *cfg = run->mv->env ? run->mv->env->d.cfg : NULL;
    pf_metrics *m = run->metrics;
    uint64_t t0 = run->t0_ns;
    pf_nav_session_answer a;
    pf_replan_answer ra;
    pf_replan_input in;
    pf_replan_reason why;
    pf_proto_error e;
    pf_nav_path p;
    const char *which = NULL;
    bool replanned = true, goal_moved, adjusted = false;
    float ext[3];
    pf_status st;
    if (!q) {
        pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
        return PF_ERR_NO_MEMORY;
    }
    s->mv = run->mv;
    if (l && validate(s, q, l, &e)) {
        pf_proto_write_perror(w, &e);
        return e.code;
    }
    for (size_t i = 0; l && i < l->n; i++) {
        const pf_update *u = &l->items[i];
        if (u->has_goal) memcpy(s->ngoal, u->goal.xyz, sizeof(s->ngoal));
        if (u->has_position) memcpy(s->npos, u->position.xyz, sizeof(s->npos));
        pf_session_policy(cfg, &s->rp.policy, &u->replan, &s->rp.policy);
    }
    memset(&in, 0, sizeof(in));
    in.now_ms = pf_clock_now_ns() / 1000000u;
    for (int k = 0; k < 3; k++) in.goal[k] = s->ngoal[k];
    in.has_route = s->nplanned && !s->replan;
    in.map_changed = s->nplanned && run->mv->version != s->planned_version;
    why = pf_replan_decide(&s->rp, &in);
    goal_moved = s->nplanned && (s->rp.goal[0] != s->ngoal[0] || s->rp.goal[1] != s->ngoal[1] ||
                                 s->rp.goal[2] != s->ngoal[2]);
    pf_navmesh_default_extents(nm, ext);
    /* A goal move the corridor can follow without a search: its target
     * slides (pf_nav_corridor_move_target) while the moves since the last
     * plan add up to at most the slide limit. Where the policy would
     * replan for the move (goal_moved) that is reason target_adjusted; a
     * move it holds back (threshold, interval) slides too, so the path
     * still ends at the goal. */
    if (s->nplanned && !s->replan && !in.map_changed &&
        (why == PF_REPLAN_GOAL_MOVED || !pf_replan_reason_replans(why))) {
        float cp[3], cg[3];
        double d = 0, limit = (cfg ? (double)cfg->nav_target_slide_pct : 100.0) / 100.0 * ext[0];
        pf_nav_corridor_position(s->corr, cp, cg);
        for (int k = 0; k < 3; k++) d += ((double)s->ngoal[k] - cg[k]) * (s->ngoal[k] - cg[k]);
        d = sqrt(d);
        if (d > 0 && s->slid + d <= limit) {
            st = pf_nav_corridor_move_target(s->corr, q, nm, s->ngoal, &adjusted);
            if (st == PF_ENOMEM) {
                pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
                return PF_ERR_NO_MEMORY;
            }
            if (adjusted) s->slid += d;
        }
        if (why == PF_REPLAN_GOAL_MOVED && (adjusted || (d == 0 && s->slid > 0)))
            /* Followed now, or already (the goal stopped where it slid to). */
            why = adjusted ? PF_REPLAN_TARGET_ADJUSTED : PF_REPLAN_UNCHANGED;
    }
    if (pf_replan_reason_replans(why)) {
        st = pf_nav_corridor_plan(s->corr, q, nm, s->npos, s->ngoal, NULL, PF_NAV_POLYANYA, &p,
                                  &which);
    } else {
        /* Following the agent: a position further than the search box's
         * width from where the corridor can take it is a teleport. */
        st = pf_nav_corridor_move(s->corr, q, nm, s->npos, ext[0], &p, &replanned, &which);
        /* The corridor replanned by itself, to the goal it holds. */
        if (replanned) why = in.map_changed ? PF_REPLAN_MAP_CHANGED : PF_REPLAN_OFF_ROUTE;
    }
    if (st == PF_ENOMEM) {
        pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
        return PF_ERR_NO_MEMORY;
    }
    if (st != PF_OK && !s->nplanned) {
        /* The create's plan: an agent or a goal off the mesh is the
         * request's error, as on a grid (the session goes). */
        char msg[200];
        const char *f = which && strcmp(which, "goal") == 0 ? "goal" : "start";
        const float *pt = f[0] == 'g' ? s->ngoal : s->npos;
        snprintf(msg, sizeof(msg), "No walkable polygon within +-(%g, %g, %g) of %s (%g, %g, %g).",
                 (double)ext[0], (double)ext[1], (double)ext[2], f, (double)pt[0], (double)pt[1],
                 (double)pt[2]);
        pf_proto_write_error(w, PF_ERR_BLOCKED, msg, f);
        return PF_ERR_BLOCKED;
    }
    pf_metrics_count_replan(m, why);
    if (why == PF_REPLAN_TARGET_ADJUSTED && !replanned) pf_metrics_count_goal_move(m, true);
    if (replanned && st == PF_OK) {
        double g[3];
        float cg[3], cp[3];
        pf_nav_corridor_position(s->corr, cp, cg);
        for (int k = 0; k < 3; k++) g[k] = cg[k];
        if (goal_moved && pf_replan_reason_replans(why)) pf_metrics_count_goal_move(m, false);
        adjusted = false; /* planned anew after all (the agent left the corridor) */
        pf_replan_done(&s->rp, pf_clock_now_ns() / 1000000u, g);
        s->planned_version = run->mv->version;
        s->slid = 0;
    }
    if (st == PF_OK) s->nplanned = true;
    /* Blocked (the agent or the goal has no polygon near it any more: an
     * obstacle came): answered as "blocked", planned again next time. */
    s->replan = st != PF_OK;
    if (replanned)
        pf__nav_count_search(m, PF_NAV_POLYANYA,
                             st != PF_OK      ? PF_OUTCOME_ERROR
                             : p.out_of_nodes ? PF_OUTCOME_BUDGET
                             : p.partial      ? PF_OUTCOME_UNREACHABLE
                                              : PF_OUTCOME_FOUND,
                             st == PF_OK ? p.expanded : 0, (pf_clock_now_ns() - t0) / 1000);
    memset(&ra, 0, sizeof(ra));
    ra.reason = pf_replan_reason_name(why);
    ra.replanned = replanned;
    ra.route = replanned ? (st == PF_OK ? "new" : "lost") : adjusted ? "adjusted" : "none";
    ra.policy = s->rp.policy;
    if (!replanned) p.expanded = 0; /* the corridor followed: no search */
    if (run->stream && run->stream == s->push_stream && st == PF_OK && !replanned &&
        same_way(s, &p)) {
        pf_session_short sa;
        memset(&sa, 0, sizeof(sa));
        sa.session_id = run->session_id;
        sa.map_id = run->map_id;
        sa.found = !p.partial;
        sa.cost = round(p.cost * 1e4) / 1e4;
        sa.position.dims = sa.goal.dims = 3;
        memcpy(sa.position.xyz, s->npos, sizeof(s->npos));
        memcpy(sa.goal.xyz, s->ngoal, sizeof(s->ngoal));
        sa.map_version = run->mv->version;
        sa.ttl_s = run->ttl_s;
        sa.replan = &ra;
        sa.time_us = (pf_clock_now_ns() - t0) / 1000;
        sa.updates = l ? l->n : 0;
        sa.rebase = "none";
        sa.memory_bytes = run->record_bytes + pf__nav_session_memory(s);
        pf_session_write_short(w, &sa);
        pf_metrics_count_stream_answer(m, true);
        return PF_ERR_NONE;
    }
    if (run->stream) {
        remember_push(s, run->stream, st == PF_OK ? &p : NULL);
        pf_metrics_count_stream_answer(m, false);
    }
    memset(&a, 0, sizeof(a));
    a.session_id = run->session_id;
    a.map_id = run->map_id;
    a.blocked = st != PF_OK;
    a.path = &p;
    a.algorithm = pf_nav_algorithm_name(PF_NAV_POLYANYA);
    a.position = s->npos;
    a.goal = s->ngoal;
    a.map_version = run->mv->version;
    a.ttl_s = run->ttl_s;
    a.time_us = (pf_clock_now_ns() - t0) / 1000;
    a.updates = l ? l->n : 0;
    a.rebase = replanned ? "rebuilt" : "none";
    a.memory_bytes = run->record_bytes + pf__nav_session_memory(s);
    a.replan = &ra;
    pf_session_write_nav_answer(w, &a);
    return PF_ERR_NONE;
}
