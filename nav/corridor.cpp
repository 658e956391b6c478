/* corridor.cpp -- path corridors (navmesh.h "Corridors"): Detour's
 * dtPathCorridor planned by find_polys and moved along as its agent walks,
 * planned again when the agent leaves it or the version changed.
 */
#include "nav_internal.h"

using namespace pfnav;

extern "C" {

pf_status pf_nav_corridor_create(uint32_t max_polys, pf_nav_corridor **out) {
    *out = NULL;
    if (max_polys < 16 || max_polys > 65535) return PF_ERANGE;
    void *mem = calloc(1, sizeof(pf_nav_corridor));
    if (!mem) return PF_ENOMEM;
    install_assert_hook();
    pf_nav_corridor *c = new (mem) pf_nav_corridor();
    c->max_polys = max_polys;
    if (!c->corr.init((int)max_polys)) {
        pf_nav_corridor_destroy(c);
        return PF_ENOMEM;
    }
    *out = c;
    return PF_OK;
}

void pf_nav_corridor_destroy(pf_nav_corridor *c) {
    if (!c) return;
    pf_navmesh_release(c->nm);
    c->~pf_nav_corridor();
    free(c);
}

static pf_status corridor_plan(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                               const float start[3], pf_nav_path *out, const char **which) {
    int n = 0;
    const float *ext = c->has_extents ? c->extents : NULL;
    pf_status st = find_polys(q, nm, start, c->goal, ext, c->algo, out, which, &n);
    if (st) return st;
    /* setCorridor takes one fewer than the corridor holds (see above). */
    if ((uint32_t)n >= c->max_polys) {
        n = (int)c->max_polys - 1;
        out->partial = true;
        out->polygons = (uint32_t)n;
        float e[3];
        if (dtStatusSucceed(q->q->closestPointOnPoly(q->polys[n - 1], c->goal, e, NULL)))
            dtVcopy(out->goal, e);
    }
    c->corr.reset(q->polys[0], out->start);
    c->corr.setCorridor(out->goal, q->polys, n);
    if (c->nm != nm) {
        pf_navmesh_retain(nm);
        pf_navmesh_release(c->nm);
        c->nm = nm;
    }
    c->planned = true;
    c->partial = out->partial;
    c->out_of_nodes = out->out_of_nodes;
    c->exact = out->exact;
    c->inexact = out->inexact;
    return straight(q, nm, out->start, out->goal, q->polys, n, out);
}

pf_status pf_nav_corridor_plan(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                               const float start[3], const float goal[3], const float extents[3],
                               pf_nav_algorithm algo, pf_nav_path *out, const char **which) {
    c->algo = algo;
    if (!finite3(goal)) {
        if (which) *which = "goal";
        return PF_ERANGE;
    }
    if (extents) {
        if (!finite3(extents) || extents[0] <= 0 || extents[1] <= 0 || extents[2] <= 0) {
            if (which) *which = "extents";
            return PF_ERANGE;
        }
        dtVcopy(c->extents, extents);
        c->has_extents = true;
    } else {
        c->has_extents = false;
    }
    float saved[3];
    dtVcopy(saved, c->goal);
    dtVcopy(c->goal, goal);
    pf_status st = corridor_plan(c, q, nm, start, out, which);
    if (st) dtVcopy(c->goal, saved);
    return st;
}

pf_status pf_nav_corridor_move(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                               const float pos[3], float slack, pf_nav_path *out, bool *replanned,
                               const char **which) {
    *replanned = false;
    if (which) *which = NULL;
    if (!finite3(pos)) {
        if (which) *which = "position";
        return PF_ERANGE;
    }
    if (!c->planned) return PF_EINVAL;
    if (c->nm == nm) {
        pf_status st = bind_query(q, nm);
        if (st) return st;
        if (c->corr.movePosition(pos, q->q, &nm->filter) &&
            dtVdist(c->corr.getPos(), pos) <= slack &&
            c->corr.isValid(c->corr.getPathCount(), q->q, &nm->filter)) {
            memset(out, 0, sizeof *out);
            dtVcopy(out->start, c->corr.getPos());
            dtVcopy(out->goal, c->corr.getTarget());
            out->polygons = (uint32_t)c->corr.getPathCount();
            out->partial = c->partial;
            out->out_of_nodes = c->out_of_nodes;
            out->exact = c->exact;
            out->inexact = c->inexact;
            return straight(q, nm, c->corr.getPos(), c->corr.getTarget(), c->corr.getPath(),
                            c->corr.getPathCount(), out);
        }
    }
    *replanned = true;
    return corridor_plan(c, q, nm, pos, out, which);
}

pf_status pf_nav_corridor_move_target(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                                      const float goal[3], bool *slid) {
    enum { MAX_CROSS = 2 }; /* the target's polygon or one next to it */
    *slid = false;
    if (!finite3(goal)) return PF_ERANGE;
    if (!c->planned || c->nm != nm || c->partial || c->corr.getPathCount() < 1) return PF_OK;
    pf_status st = bind_query(q, nm);
    if (st) return st;
    float ext[3], snapped[3], result[3];
    if (c->has_extents)
        dtVcopy(ext, c->extents);
    else
        pf_navmesh_default_extents(nm, ext);
    dtPolyRef ref = 0, visited[MAX_CROSS];
    int nvisited = 0;
    if (dtStatusFailed(q->q->findNearestPoly(goal, ext, &nm->filter, &ref, snapped)) || !ref)
        return PF_OK; /* no polygon near it: the caller's plan says why */
    const int npath = c->corr.getPathCount();
    const dtPolyRef last = c->corr.getPath()[npath - 1];
    /* Detour's moveTargetPosition: along the surface from the target. A
     * wall on the way, or more polygons than MAX_CROSS, stops short of the
     * goal: no slide. (Of a longer way moveAlongSurface keeps the first
     * MAX_CROSS polygons, which do not end at the goal's: checked below.) */
    if (dtStatusFailed(q->q->moveAlongSurface(last, c->corr.getTarget(), snapped, &nm->filter,
                                              result, visited, &nvisited, MAX_CROSS)) ||
        nvisited < 1 || dtVdist2D(result, snapped) > 1e-3f)
        return PF_OK;
    /* moveAlongSurface works on the ground plane: where levels overlap it
     * may end above or below the goal. It must end in the goal's polygon. */
    if (visited[nvisited - 1] != ref) return PF_OK;
    dtPolyRef *path = (dtPolyRef *)malloc((size_t)c->max_polys * sizeof(dtPolyRef));
    if (!path) return PF_ENOMEM;
    memcpy(path, c->corr.getPath(), (size_t)npath * sizeof(dtPolyRef));
    int n = dtMergeCorridorEndMoved(path, npath, (int)c->max_polys - 1, visited, nvisited);
    /* The corridor full: the goal's polygon would not fit. */
    if (n >= 1 && path[n - 1] == visited[nvisited - 1]) {
        c->corr.setCorridor(snapped, path, n);
        dtVcopy(c->goal, goal);
        *slid = true;
    }
    free(path);
    return PF_OK;
}

void pf_nav_corridor_position(const pf_nav_corridor *c, float pos[3], float goal[3]) {
    dtVcopy(pos, c->corr.getPos());
    dtVcopy(goal, c->goal);
}

} /* extern "C" */
