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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kind_navmesh_internal.h"

/* A navmesh session's state: its corridor, the agent's position and goal,
 * and whether the next plan starts anew (created, a new goal) instead of
 * following the agent along the corridor. */
typedef struct nav_session {
    const pf_mapver *mv; /* the version it is on (the session holds the reference) */
    pf_nav_corridor *corr;
    uint32_t nav_type; /* the agent type's index in the map (the same in every version) */
    float npos[3], ngoal[3];
    bool replan, nplanned; /* nplanned: the corridor's first plan (at create) succeeded */
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
    *state = s;
    return PF_OK;
}

void pf__nav_session_free(void *state) {
    nav_session *s = state;
    if (!s) return;
    pf_nav_corridor_destroy(s->corr);
    free(s);
}

size_t pf__nav_session_memory(const void *state) {
    const nav_session *s = state;
    return sizeof(*s) + pf_nav_corridor_memory(s->corr);
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

/* The session job's part for a navmesh session (synced): validate and
 * apply the moves, follow or plan, count, answer. */
pf_error pf__nav_session_run(const pf_kind_session_run *run, void *state, const pf_update_list *l,
                             pf_jsonw *w) {
    nav_session *s = state;
    const pf_navmesh *nm = pf_navmesh_agent_type(pf_navmesh_of(run->mv), s->nav_type);
    pf_navq *navq = run->mv->env ? pf_navmesh_navq(run->mv->env) : NULL;
    pf_nav_query *q = navq ? pf_navq_get(navq) : NULL;
    pf_metrics *m = run->metrics;
    uint64_t t0 = run->t0_ns;
    pf_nav_session_answer a;
    pf_proto_error e;
    pf_nav_path p;
    const char *which = NULL;
    bool replanned = true;
    float ext[3];
    pf_status st;
    if (!q) {
        pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
        return PF_ERR_NO_MEMORY;
    }
    s->mv = run->mv;
    if (l && validate(s, q, l, &e)) {
        pf_navq_put(navq, q);
        pf_proto_write_perror(w, &e);
        return e.code;
    }
    for (size_t i = 0; l && i < l->n; i++) {
        const pf_update *u = &l->items[i];
        if (u->has_goal) {
            memcpy(s->ngoal, u->goal.xyz, sizeof(s->ngoal));
            s->replan = true;
        }
        if (u->has_position) memcpy(s->npos, u->position.xyz, sizeof(s->npos));
    }
    pf_navmesh_default_extents(nm, ext);
    if (s->replan) {
        st = pf_nav_corridor_plan(s->corr, q, nm, s->npos, s->ngoal, NULL, PF_NAV_POLYANYA, &p,
                                  &which);
    } else {
        /* Following the agent: a position further than the search box's
         * width from where the corridor can take it is a teleport. */
        st = pf_nav_corridor_move(s->corr, q, nm, s->npos, ext[0], &p, &replanned, &which);
    }
    pf_navq_put(navq, q);
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
    if (st == PF_OK) s->nplanned = true;
    /* Blocked (the agent or the goal has no polygon near it any more: an
     * obstacle came): answered as "blocked", planned again next time. */
    s->replan = st != PF_OK;
    pf__nav_count_search(m, PF_NAV_POLYANYA,
                         st != PF_OK      ? PF_OUTCOME_ERROR
                         : p.out_of_nodes ? PF_OUTCOME_BUDGET
                         : p.partial      ? PF_OUTCOME_UNREACHABLE
                                          : PF_OUTCOME_FOUND,
                         st == PF_OK ? p.expanded : 0, (pf_clock_now_ns() - t0) / 1000);
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
    pf_session_write_nav_answer(w, &a);
    return PF_ERR_NONE;
}
