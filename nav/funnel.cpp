/* funnel.cpp -- the straight path along a corridor, over exact portals.
 *
 * Detour's findStraightPath draws the portal between two polygons of
 * different tiles from the link's bmin..bmax, which connectExtLinks (and
 * pathd's own link repair) store truncated to 1/255 of the edge: the
 * portal's ends stop short of the neighbouring tile's vertices by up to
 * edge/255, and the funnel bends there instead of at the corner the
 * shortest path turns round (0.006 on a 1.5 edge, ~0.1 on nav_test's
 * 30-unit tile borders). polyanya measures the exact optimum over the
 * polygons' real edges, so its answers came out "not exact".
 *
 * Here each portal is the polygons' shared edge computed from the actual
 * vertices of both: within a tile the whole edge; across a tile border the
 * overlap of this polygon's edge with the neighbour's edge that links back,
 * its ends the neighbour's vertices where they fall inside the edge (x/z,
 * as polyanya's rings take them) and heights along this polygon's edge.
 * The funnel (Mononen's string pulling, as findStraightPath does it, in
 * x/z) then runs over those portals, and with area crossings when the mesh
 * has area costs; the caller clamps start and end into the corridor's end
 * polygons first, as findStraightPath does. Corridors through off-mesh links stay Detour's: their
 * portals are the link's ends.
 */
#include "nav_internal.h"

namespace {

/* Twice the signed area of a, b, c on x/z, Detour's dtTriArea2D sign. */
inline double tri2(const float *a, const float *b, const float *c) {
    const double abx = (double)b[0] - a[0], abz = (double)b[2] - a[2];
    const double acx = (double)c[0] - a[0], acz = (double)c[2] - a[2];
    return acx * abz - abx * acz;
}

/* Detour's dtVequal: the same point within 1/16384. */
inline bool veq(const float *a, const float *b) {
    return dtVdistSqr(a, b) < (1.0f / 16384.0f) * (1.0f / 16384.0f);
}

/* The portal from polygon a to its neighbour b: left and right as Detour's
 * getPortalPoints gives them (the start and the end of a's edge), clipped
 * to the stretch both polygons' edges share. false when a does not link
 * to b. */
bool exact_portal(const dtNavMesh *nav, dtPolyRef a, dtPolyRef b, float left[3], float right[3]) {
    const dtMeshTile *ta = NULL, *tb = NULL;
    const dtPoly *pa = NULL, *pb = NULL;
    if (dtStatusFailed(nav->getTileAndPolyByRef(a, &ta, &pa)) ||
        dtStatusFailed(nav->getTileAndPolyByRef(b, &tb, &pb)))
        return false;
    const dtLink *link = NULL;
    for (unsigned int i = pa->firstLink; i != DT_NULL_LINK; i = ta->links[i].next)
        if (ta->links[i].ref == b) {
            link = &ta->links[i];
            break;
        }
    if (!link || link->edge >= pa->vertCount) return false;
    const float *v0 = &ta->verts[pa->verts[link->edge] * 3];
    const float *v1 = &ta->verts[pa->verts[(link->edge + 1) % pa->vertCount] * 3];
    dtVcopy(left, v0);
    dtVcopy(right, v1);
    if (link->side == 0xff) return true; /* within a tile: the whole edge */
    int be = -1;
    for (unsigned int i = pb->firstLink; i != DT_NULL_LINK; i = tb->links[i].next)
        if (tb->links[i].ref == a) {
            be = tb->links[i].edge;
            break;
        }
    if (be < 0 || be >= pb->vertCount) {
        /* No link back (pathd's link repair makes one): Detour's portal. */

        dtVlerp(left, v0, v1, link->bmin / 255.0f);
        dtVlerp(right, v0, v1, link->bmax / 255.0f);
        return true;
    }
    const float *w0 = &tb->verts[pb->verts[be] * 3];
    const float *w1 = &tb->verts[pb->verts[(be + 1) % pb->vertCount] * 3];
    /* The overlap on the edge's long axis (border edges are axis-aligned). */
    const int ax = fabsf(v1[0] - v0[0]) >= fabsf(v1[2] - v0[2]) ? 0 : 2;
    const double len = (double)v1[ax] - v0[ax];
    if (len == 0) return true;
    double t0 = ((double)w0[ax] - v0[ax]) / len, t1 = ((double)w1[ax] - v0[ax]) / len;
    const float *p0 = w0, *p1 = w1;
    if (t0 > t1) {
        const double t = t0;
        t0 = t1;
        t1 = t;
        p0 = w1;
        p1 = w0;
    }
    if (t0 > 0) {
        dtVlerp(left, v0, v1, (float)t0);
        left[0] = p0[0];
        left[2] = p0[2];
    }
    if (t1 < 1) {
        dtVlerp(right, v0, v1, (float)t1);
        right[0] = p1[0];
        right[2] = p1[2];
    }
    return true;
}

struct Out {
    float *pts;
    unsigned char *flags;
    dtPolyRef *refs;
    int n, max;
};

/* Appends a point (one equal to the last only updates its flags and
 * polygon, as Detour's appendVertex). false when the buffer is full. */
bool append(Out *o, const float *p, unsigned char flags, dtPolyRef ref) {
    if (o->n > 0 && veq(&o->pts[3 * (o->n - 1)], p)) {
        o->flags[o->n - 1] = flags;
        o->refs[o->n - 1] = ref;
        return true;
    }
    if (o->n >= o->max) return false;
    dtVcopy(&o->pts[3 * o->n], p);
    o->flags[o->n] = flags;
    o->refs[o->n] = ref;
    o->n++;
    return true;
}

unsigned char area_of(const dtNavMesh *nav, dtPolyRef ref) {
    const dtMeshTile *t = NULL;
    const dtPoly *p = NULL;
    nav->getTileAndPolyByRefUnsafe(ref, &t, &p);
    return p->getArea();
}

/* The points where the segment from the last point to end crosses the
 * portals path[from] -> path[from + 1] .. path[to - 1] -> path[to] whose
 * polygons' areas differ (Detour's appendPortals with area crossings). */
bool append_crossings(Out *o, const dtNavMesh *nav, const dtPolyRef *path, int from, int to,
                      const float *end) {
    const float *s = &o->pts[3 * (o->n - 1)];
    float sp[3];
    dtVcopy(sp, s);
    for (int i = from; i < to; i++) {
        if (area_of(nav, path[i]) == area_of(nav, path[i + 1])) continue;
        float l[3], r[3];
        if (!exact_portal(nav, path[i], path[i + 1], l, r)) continue;
        float u, t;
        if (!dtIntersectSegSeg2D(sp, end, l, r, u, t)) continue;
        float p[3];
        dtVlerp(p, l, r, t);
        if (!append(o, p, 0, path[i + 1])) return false;
    }
    return true;
}

} /* namespace */

namespace pfnav {

bool corridor_has_links(const dtNavMesh *nav, const dtPolyRef *path, int n) {
    for (int i = 0; i < n; i++) {
        const dtMeshTile *t = NULL;
        const dtPoly *p = NULL;
        if (dtStatusFailed(nav->getTileAndPolyByRef(path[i], &t, &p))) return true;
        if (p->getType() == DT_POLYTYPE_OFFMESH_CONNECTION) return true;
    }
    return false;
}

int funnel(const dtNavMesh *nav, const float spos[3], const float epos[3], const dtPolyRef *path,
           int n, bool crossings, float *pts, unsigned char *flags, dtPolyRef *refs, int max) {
    if (n < 1 || max < 2) return -1;
    Out o = {pts, flags, refs, 0, max};
    float apex[3], pl[3], pr[3];
    dtVcopy(apex, spos);
    dtVcopy(pl, spos);
    dtVcopy(pr, spos);
    int ai = 0, li = 0, ri = 0;
    dtPolyRef lref = path[0], rref = path[0];
    append(&o, spos, DT_STRAIGHTPATH_START, path[0]);
    for (int i = 0; i < n; i++) {
        float l[3], r[3];
        if (i + 1 < n) {
            if (!exact_portal(nav, path[i], path[i + 1], l, r)) return -1;
            /* Starting on the first portal: skip it (as Detour does). */
            if (i == 0) {
                float t;
                if (dtDistancePtSegSqr2D(apex, l, r, t) < 0.001f * 0.001f) continue;
            }
        } else {
            dtVcopy(l, epos);
            dtVcopy(r, epos);
        }
        const dtPolyRef next = i + 1 < n ? path[i + 1] : 0;
        /* The right side narrows the funnel, or crosses the left: the left
         * end is a corner of the path. */
        if (tri2(apex, pr, r) <= 0) {
            if (veq(apex, pr) || tri2(apex, pl, r) > 0) {
                dtVcopy(pr, r);
                rref = next;
                ri = i;
            } else {
                if (crossings && !append_crossings(&o, nav, path, ai, li, pl)) return -1;
                dtVcopy(apex, pl);
                ai = li;
                if (!append(&o, apex, lref ? 0 : DT_STRAIGHTPATH_END, lref)) return -1;
                dtVcopy(pl, apex);
                dtVcopy(pr, apex);
                li = ri = ai;
                i = ai;
                continue;
            }
        }
        if (tri2(apex, pl, l) >= 0) {
            if (veq(apex, pl) || tri2(apex, pr, l) < 0) {
                dtVcopy(pl, l);
                lref = next;
                li = i;
            } else {
                if (crossings && !append_crossings(&o, nav, path, ai, ri, pr)) return -1;
                dtVcopy(apex, pr);
                ai = ri;
                if (!append(&o, apex, rref ? 0 : DT_STRAIGHTPATH_END, rref)) return -1;
                dtVcopy(pl, apex);
                dtVcopy(pr, apex);
                li = ri = ai;
                i = ai;
                continue;
            }
        }
    }
    if (crossings && !append_crossings(&o, nav, path, ai, n - 1, epos)) return -1;
    if (!append(&o, epos, DT_STRAIGHTPATH_END, 0)) return -1;
    return o.n;
}

} /* namespace pfnav */
