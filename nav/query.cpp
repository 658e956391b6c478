/* query.cpp -- queries on a version (navmesh.h "Queries"): a query's
 * scratch, the nearest polygon, paths (polyanya or Detour's findPath, then
 * findStraightPath), raycasts. Every point returned is put on the ground
 * (ground.cpp) and lengths are measured between those points.
 */
#include "nav_internal.h"

namespace pfnav {

void to_ground(const pf_navmesh *nm, float p[3]) {
    const NavBase *b = nm->base;
    const pf_nav_config *c = &b->cfg;
    /* The mesh's height is within a cell height of a voxel top; a polygon
     * corner takes the highest span around it (a slope's rise over a cell
     * more), the detail mesh its sample error more. */
    const float window = fmaxf(nm->at->climb, c->cell_height) +
                         c->cell_height * (c->detail_sample_max_error + 2.0f) + c->cell_size;
    float y;
    if (ground_height(b, p, window, &y)) p[1] = y;
}

pf_status bind_query(pf_nav_query *q, const pf_navmesh *nm) {
    if (q->bound == nm->nav) return PF_OK;
    if (dtStatusFailed(q->q->init(nm->nav, (int)q->max_nodes))) return PF_ENOMEM;
    q->bound = nm->nav;
    return PF_OK;
}

static pf_status nearest(pf_nav_query *q, const pf_navmesh *nm, const float p[3],
                         const float extents[3], dtPolyRef *ref, float snapped[3]) {
    float e[3];
    if (extents) {
        if (!finite3(extents) || extents[0] <= 0 || extents[1] <= 0 || extents[2] <= 0)
            return PF_ERANGE;
        dtVcopy(e, extents);
    } else {
        pf_navmesh_default_extents(nm, e);
    }
    if (!finite3(p)) return PF_ERANGE;
    pf_status st = bind_query(q, nm);
    if (st) return st;
    *ref = 0;
    dtStatus ds = q->q->findNearestPoly(p, e, &nm->filter, ref, snapped);
    if (dtStatusFailed(ds)) return PF_ERANGE;
    if (!*ref) return PF_EBLOCKED;
    to_ground(nm, snapped);
    /* findNearestPoly picks among polygons whose bounds overlap the box;
     * the point found must itself be in the box. */
    for (int k = 0; k < 3; k++)
        if (fabsf(snapped[k] - p[k]) > e[k]) return PF_EBLOCKED;
    return PF_OK;
}

/* The funnel along polys[0..npolys) into q's points: pathd's own over
 * exact portals (funnel.cpp), Detour's findStraightPath for a corridor
 * through off-mesh links. -1 on failure. */
static int straight_points(pf_nav_query *q, const pf_navmesh *nm, const float spos[3],
                           const float epos[3], const dtPolyRef *polys, int npolys,
                           bool crossings) {
    if (!corridor_has_links(nm->nav, polys, npolys)) {
        /* Start and end clamped into the corridor's first and last
         * polygons, as findStraightPath does (a corridor's target can lie
         * outside its last polygon after a slide). */
        float s[3], e[3];
        if (dtStatusFailed(q->q->closestPointOnPolyBoundary(polys[0], spos, s)) ||
            dtStatusFailed(q->q->closestPointOnPolyBoundary(polys[npolys - 1], epos, e)))
            return -1;
        return funnel(nm->nav, s, e, polys, npolys, crossings, q->points, q->flags, q->point_refs,
                      (int)q->max_points);
    }
    int n = 0;
    const int opts = crossings ? DT_STRAIGHTPATH_AREA_CROSSINGS : 0;
    dtStatus ds = q->q->findStraightPath(spos, epos, polys, npolys, q->points, q->flags,
                                         q->point_refs, &n, (int)q->max_points, opts);
    return dtStatusFailed(ds) ? -1 : n;
}

/* The straight path along polys[0..npolys) from spos to epos into out. */
pf_status straight(pf_nav_query *q, const pf_navmesh *nm, const float spos[3], const float epos[3],
                   const dtPolyRef *polys, int npolys, pf_nav_path *out) {
    const int n = straight_points(q, nm, spos, epos, polys, npolys, nm->costly);
    if (n < 0) return PF_ENOMEM;
    out->points = q->points;
    out->npoints = (uint32_t)n;
    out->length = 0;
    out->ground_length = 0;
    out->cost = 0;
    out->links = 0;
    for (int i = 0; i < n; i++) {
        to_ground(nm, &q->points[3 * i]);
        out->links += (q->flags[i] & DT_STRAIGHTPATH_OFFMESH_CONNECTION) != 0;
    }
    for (int i = 0; i + 1 < n; i++) {
        double len = dtVdist(&q->points[3 * i], &q->points[3 * (i + 1)]);
        out->length += len;
        out->ground_length += dtVdist2D(&q->points[3 * i], &q->points[3 * (i + 1)]);
        float c = 1.0f;
        const dtMeshTile *tile = NULL;
        const dtPoly *poly = NULL;
        if (nm->costly && q->point_refs[i] &&
            dtStatusSucceed(nm->nav->getTileAndPolyByRef(q->point_refs[i], &tile, &poly)))
            c = nm->area_cost[poly->getArea()];
        out->cost += len * c;
    }
    return PF_OK;
}

/* The ground-plane length of the funnelled path along polys[0..n), 1e30
 * when the funnel fails. */
static double funnel_ground(pf_nav_query *q, const pf_navmesh *nm, const float *spos,
                            const float *epos, const dtPolyRef *polys, int n) {
    const int np = straight_points(q, nm, spos, epos, polys, n, false);
    if (np < 0) return 1e30;
    double len = 0;
    for (int i = 0; i + 1 < np; i++) len += dtVdist2D(&q->points[3 * i], &q->points[3 * i + 3]);
    return len;
}

/* "exact" is a claim about the path returned, not about the search: the
 * funnel along polyanya's corridor (q->polys[0..n)) must come out as long
 * as polyanya measured (best), within EXACT_TOL x (1 + best). When it is
 * longer, Detour's corridor is tried too and the shorter of the two kept,
 * answered not exact. The funnel is pathd's own over exact portals
 * (funnel.cpp): Detour's findStraightPath took a tile-border portal from
 * the link's bmin..bmax, stored truncated to 1/255 of the edge, and bent
 * short of the corner polyanya turned round (0.0059 on a 1.5 edge, up to
 * ~0.1 on nav_test's 30-unit borders), which left such answers not exact.
 * A corridor polyanya found after its node table filled (found has
 * DT_OUT_OF_NODES) is never exact: successors were dropped on the way.
 * Returns the corridor's length in q->polys. */
static int check_exact(pf_nav_query *q, const pf_navmesh *nm, dtPolyRef sref, dtPolyRef gref,
                       pf_nav_path *out, double best, int n, dtStatus found) {
    static const double EXACT_TOL = 1e-4;
    if (dtStatusDetail(found, DT_OUT_OF_NODES)) {
        /* The goal reached after the node table filled: not exact. */
        out->out_of_nodes = true;
        out->inexact = "polyanya ran out of search nodes (nav_max_nodes) before it could prove "
                       "the path shortest";
        return n;
    }
    const double got = funnel_ground(q, nm, out->start, out->goal, q->polys, n);
    if (got <= best + EXACT_TOL * (1 + best)) {
        out->exact = true;
        return n;
    }
    out->inexact = "the funnel along polyanya's corridor came out longer than the search "
                   "measured: the shorter of polyanya's and Detour's paths";
    int n2 = 0;
    dtStatus ds = q->q->findPath(sref, gref, out->start, out->goal, &nm->filter, q->polys2, &n2,
                                 (int)q->max_nodes);
    out->expanded += (uint32_t)q->q->getNodePool()->getNodeCount();
    if (dtStatusFailed(ds) || n2 == 0 || q->polys2[n2 - 1] != gref) return n;
    if (funnel_ground(q, nm, out->start, out->goal, q->polys2, n2) >= got) return n;
    memcpy(q->polys, q->polys2, (size_t)n2 * sizeof(dtPolyRef));
    return n2;
}

/* A goal in another component: the answer is partial, its path the
 * shortest (when exact) to the closest point of the start's component. */
static void mark_apart(pf_nav_path *out) {
    out->partial = true;
    if (!out->inexact)
        out->inexact = "the goal is in another connected component of the mesh: the path ends at "
                       "the point of the start's component closest to the goal";
}

pf_status find_polys(pf_nav_query *q, const pf_navmesh *nm, const float start[3],
                     const float goal[3], const float extents[3], pf_nav_algorithm algo,
                     pf_nav_path *out, const char **which, int *npolys) {
    memset(out, 0, sizeof *out);
    if (which) *which = NULL;
    dtPolyRef sref, gref;
    pf_status st = nearest(q, nm, start, extents, &sref, out->start);
    if (st) {
        if (which) *which = "start";
        return st;
    }
    st = nearest(q, nm, goal, extents, &gref, out->goal);
    if (st) {
        if (which) *which = "goal";
        return st;
    }
    out->start_moved = dtVdist(start, out->start);
    out->goal_moved = dtVdist(goal, out->goal);
    /* Start and goal in different connected components of this version:
     * unreachable, known without a search (components.cpp). The answer is
     * Detour's partial one, the path to the point of the start's component
     * closest to the goal: that point is found by a scan of the component's
     * polygon boxes, then the search runs to it, in the start's component
     * alone. */
    const uint32_t cs = component_of(nm, sref), cg = component_of(nm, gref);
    bool apart = false;
    if (cs != cg) {
        dtPolyRef near = 0;
        float c[3];
        if (!closest_in_component(q, nm, cs, out->goal, &near, c)) {
            near = sref;
            dtVcopy(c, out->start);
        }
        to_ground(nm, c);
        dtVcopy(out->goal, c);
        gref = near;
        apart = true;
    }
    int n = 0;
    dtStatus ds = DT_FAILURE;
    if (algo == PF_NAV_POLYANYA && nm->root->nlinks_on) {
        /* polyanya searches the polygons' shared edges only. */
        out->inexact = "the map has enabled off-mesh links, which polyanya does not take: the "
                       "corridor is Detour's";
        algo = PF_NAV_DETOUR;
    }
    if (algo == PF_NAV_POLYANYA) {
        uint32_t ex = 0;
        double best = 0;
        ds = polyanya(q, nm, sref, gref, out->start, out->goal, q->polys, &n, (int)q->max_nodes,
                      &ex, &best);
        out->expanded = ex;
        out->passes = q->passes;
        /* Unreachable, out of nodes or a world too large for it: Detour
         * finds the closest reachable polygon (and is bounded by the same
         * node budget). */
        if (dtStatusSucceed(ds)) {
            n = check_exact(q, nm, sref, gref, out, best, n, ds);
            out->polygons = (uint32_t)n;
            *npolys = n;
            if (apart) mark_apart(out);
            return PF_OK;
        }
        out->out_of_nodes = dtStatusDetail(ds, DT_OUT_OF_NODES);
        if (dtStatusDetail(ds, DT_INVALID_PARAM))
            out->inexact = "the world is more than 2^22 voxels a side, past polyanya's point keys: "
                           "the corridor is Detour's";
    }
    ds = q->q->findPath(sref, gref, out->start, out->goal, &nm->filter, q->polys, &n,
                        (int)q->max_nodes);
    if (dtStatusFailed(ds) || n == 0) return PF_ENOMEM;
    out->expanded += (uint32_t)q->q->getNodePool()->getNodeCount();
    out->out_of_nodes = out->out_of_nodes || dtStatusDetail(ds, DT_OUT_OF_NODES);
    out->partial = q->polys[n - 1] != gref || dtStatusDetail(ds, DT_PARTIAL_RESULT);
    if (q->polys[n - 1] != gref) {
        /* The corridor ends short of the goal: end at the point of its last
         * polygon closest to the goal (NavMeshTesterTool). */
        float c[3];
        if (dtStatusSucceed(q->q->closestPointOnPoly(q->polys[n - 1], goal, c, NULL))) {
            to_ground(nm, c);
            dtVcopy(out->goal, c);
        }
        /* That point is reachable: the exact corridor to it. */
        if (algo == PF_NAV_POLYANYA && !out->out_of_nodes) {
            const dtPolyRef last = q->polys[n - 1];
            int n2 = 0;
            uint32_t ex = 0;
            double best = 0;
            ds = polyanya(q, nm, sref, last, out->start, out->goal, q->polys, &n2,
                          (int)q->max_nodes, &ex, &best);
            out->expanded += ex;
            if (dtStatusSucceed(ds)) {
                n = check_exact(q, nm, sref, last, out, best, n2, ds);
            } else {
                /* polyanya used q->polys: plan Detour's corridor again. */
                ds = q->q->findPath(sref, last, out->start, out->goal, &nm->filter, q->polys, &n,
                                    (int)q->max_nodes);
                if (dtStatusFailed(ds) || n == 0) return PF_ENOMEM;
            }
        }
    }
    out->polygons = (uint32_t)n;
    *npolys = n;
    if (apart) mark_apart(out);
    return PF_OK;
}

} /* namespace pfnav */

using namespace pfnav;

extern "C" {

pf_status pf_nav_query_create(uint32_t max_nodes, pf_nav_query **out) {
    *out = NULL;
    if (max_nodes < 1 || max_nodes > 65535) return PF_ERANGE;
    pf_nav_query *q = (pf_nav_query *)calloc(1, sizeof *q);
    if (!q) return PF_ENOMEM;
    q->max_nodes = max_nodes;
    q->max_points = 2 * max_nodes + 2;
    q->q = dtAllocNavMeshQuery();
    q->poly = poly_scratch_create(max_nodes);
    q->polys = (dtPolyRef *)malloc(max_nodes * sizeof(dtPolyRef));
    q->polys2 = (dtPolyRef *)malloc(max_nodes * sizeof(dtPolyRef));
    q->points = (float *)malloc((size_t)q->max_points * 3 * sizeof(float));
    q->flags = (unsigned char *)malloc(q->max_points);
    q->point_refs = (dtPolyRef *)malloc(q->max_points * sizeof(dtPolyRef));
    /* Detour's node pool and open list now, with no mesh yet (init keeps
     * the pointer only): the first query on a mesh then only binds it
     * (init clears the pools it finds big enough) instead of allocating
     * them on the worker's first query. pf_nav_query_memory counts them. */
    if (!q->q || !q->poly || !q->polys || !q->polys2 || !q->points || !q->flags || !q->point_refs ||
        dtStatusFailed(q->q->init(NULL, (int)max_nodes))) {
        pf_nav_query_destroy(q);
        return PF_ENOMEM;
    }
    /* The corridor and straight-path arrays mapped now as well (a fresh
     * malloc of this size is untouched pages: each first touch a page
     * fault, on the worker's first detour queries instead of here). */
    memset(q->polys, 0, max_nodes * sizeof(dtPolyRef));
    memset(q->polys2, 0, max_nodes * sizeof(dtPolyRef));
    memset(q->points, 0, (size_t)q->max_points * 3 * sizeof(float));
    memset(q->flags, 0, q->max_points);
    memset(q->point_refs, 0, q->max_points * sizeof(dtPolyRef));
    *out = q;
    return PF_OK;
}

void pf_nav_query_destroy(pf_nav_query *q) {
    if (!q) return;
    dtFreeNavMeshQuery(q->q);
    poly_scratch_destroy(q->poly);
    free(q->polys);
    free(q->polys2);
    free(q->points);
    free(q->flags);
    free(q->point_refs);
    free(q);
}

void pf_navmesh_default_extents(const pf_navmesh *nm, float e[3]) {
    const pf_nav_config *c = &nm->base->cfg;
    float xz = fmaxf(2.0f * nm->at->radius, 4.0f * c->cell_size);
    e[0] = xz;
    e[1] = nm->at->height;
    e[2] = xz;
}

pf_status pf_nav_nearest(pf_nav_query *q, const pf_navmesh *nm, const float p[3],
                         const float extents[3], float snapped[3]) {
    dtPolyRef ref;
    return nearest(q, nm, p, extents, &ref, snapped);
}

pf_status pf_nav_find_path(pf_nav_query *q, const pf_navmesh *nm, const float start[3],
                           const float goal[3], const float extents[3], pf_nav_algorithm algo,
                           pf_nav_path *out, const char **which) {
    int n = 0;
    pf_status st = find_polys(q, nm, start, goal, extents, algo, out, which, &n);
    if (st) return st;
    st = straight(q, nm, out->start, out->goal, q->polys, n, out);
    /* dtPolyRef is 32 bits here (nav_internal.h refuses DT_POLYREF64). */
    static_assert(sizeof(dtPolyRef) == sizeof(uint32_t), "32-bit polygon references");
    if (!st) out->corridor = reinterpret_cast<const uint32_t *>(q->polys);
    return st;
}

pf_status pf_nav_raycast(pf_nav_query *q, const pf_navmesh *nm, const float from[3],
                         const float to[3], float *t, uint32_t *visited) {
    dtPolyRef ref;
    float s[3], probe[3];
    if (!finite3(to) || !finite3(from)) return PF_ERANGE;
    /* A waypoint is often a polygon corner, on the boundary of several
     * polygons: start in the one the ray enters, found a hair along it. */
    const float len = dtVdist(from, to);
    dtVlerp(probe, from, to, len > 0 ? fminf(1e-3f / len, 0.5f) : 0.0f);
    pf_status st = nearest(q, nm, probe, NULL, &ref, s);
    if (st) return st;
    float normal[3];
    int n = 0;
    dtStatus ds =
        q->q->raycast(ref, from, to, &nm->filter, t, normal, q->polys, &n, (int)q->max_nodes);
    if (dtStatusFailed(ds)) return PF_ERANGE;
    if (*t == FLT_MAX) *t = 1.0f;
    if (visited) *visited = (uint32_t)n;
    return PF_OK;
}

pf_status pf_nav_line_of_sight(pf_nav_query *q, const pf_navmesh *nm, const float a[3],
                               const float b[3], bool *visible) {
    dtPolyRef aref, bref;
    float pa[3], pb[3], sa[3], sb[3], t = 0, normal[3];
    const float len = dtVdist(a, b);
    const float hair = len > 0 ? fminf(1e-3f / len, 0.5f) : 0.0f;
    int n = 0;
    *visible = false;
    if (!finite3(a) || !finite3(b)) return PF_ERANGE;
    /* Each end's polygon is the one the segment touches there: found a
     * hair along it towards the other end (a waypoint on a polygon edge or
     * corner belongs to the polygon the ray crosses). */
    dtVlerp(pa, a, b, hair);
    dtVlerp(pb, b, a, hair);
    pf_status st = nearest(q, nm, pa, NULL, &aref, sa);
    if (st == PF_EBLOCKED) return PF_OK;
    if (!st) st = nearest(q, nm, pb, NULL, &bref, sb);
    if (st == PF_EBLOCKED) return PF_OK;
    if (st) return st;
    if (aref == bref) {
        *visible = true;
        return PF_OK;
    }
    dtStatus ds =
        q->q->raycast(aref, a, b, &nm->filter, &t, normal, q->polys, &n, (int)q->max_nodes);
    if (dtStatusFailed(ds)) return PF_ERANGE;
    /* No wall hit and the walk ended in b's polygon (not in one above or
     * below it: the ray walks the ground plane). A walk longer than the
     * buffer (DT_BUFFER_TOO_SMALL) is not seen. */
    *visible = t == FLT_MAX && n > 0 && q->polys[n - 1] == bref && !(ds & DT_BUFFER_TOO_SMALL);
    return PF_OK;
}

float pf_nav_distance_to_mesh(pf_nav_query *q, const pf_navmesh *nm, const float p[3]) {
    dtPolyRef ref;
    float s[3];
    if (nearest(q, nm, p, NULL, &ref, s) != PF_OK) return -1.0f;
    return dtVdist(p, s);
}

} /* extern "C" */
