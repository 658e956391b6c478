/* detour_direct.cpp -- see detour_direct.h. Detour called the way its demo
 * calls it; nothing of nav/ but the mesh and filter it borrows. */
/* core's headers are C and have no extern "C" of their own. */
extern "C" {
#include "grid.h"
#include "status.h"
}
#include "detour_direct.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <DetourCommon.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshQuery.h>
#include <DetourNode.h>

#include "navexport.h"

struct pf_dd {
    const pf_navmesh *nm;
    const dtNavMesh *nav;
    const dtQueryFilter *filter;
    dtNavMeshQuery *q;
    int max_polys;
    dtPolyRef *polys;
    float *points; /* 3 per corner */
    int max_points;
};

extern "C" {

pf_status pf_dd_create(const pf_navmesh *nm, uint32_t max_nodes, pf_dd **out) {
    *out = NULL;
    if (max_nodes < 1 || max_nodes > 65535) return PF_ERANGE;
    pf_dd *d = (pf_dd *)calloc(1, sizeof *d);
    if (!d) return PF_ENOMEM;
    d->nm = nm;
    d->nav = (const dtNavMesh *)pf_navmesh_detour_mesh(nm);
    d->filter = (const dtQueryFilter *)pf_navmesh_detour_filter(nm);
    d->max_polys = (int)max_nodes;
    d->max_points = 2 * (int)max_nodes + 2;
    d->q = dtAllocNavMeshQuery();
    d->polys = (dtPolyRef *)malloc((size_t)d->max_polys * sizeof(dtPolyRef));
    d->points = (float *)malloc((size_t)d->max_points * 3 * sizeof(float));
    if (!d->q || !d->polys || !d->points || dtStatusFailed(d->q->init(d->nav, (int)max_nodes))) {
        pf_dd_destroy(d);
        return PF_ENOMEM;
    }
    *out = d;
    return PF_OK;
}

void pf_dd_destroy(pf_dd *d) {
    if (!d) return;
    dtFreeNavMeshQuery(d->q);
    free(d->polys);
    free(d->points);
    free(d);
}

bool pf_dd_path_find(pf_dd *d, const float start[3], const float goal[3], const float extents[3],
                     pf_dd_path *out) {
    *out = pf_dd_path();
    float ext[3], spos[3], gpos[3];
    if (extents)
        dtVcopy(ext, extents);
    else
        pf_navmesh_default_extents(d->nm, ext);
    dtPolyRef sref = 0, gref = 0;
    if (dtStatusFailed(d->q->findNearestPoly(start, ext, d->filter, &sref, spos)) ||
        dtStatusFailed(d->q->findNearestPoly(goal, ext, d->filter, &gref, gpos)))
        return false;
    if (!sref || !gref) return true;
    out->found = true;
    int n = 0;
    dtStatus ds = d->q->findPath(sref, gref, spos, gpos, d->filter, d->polys, &n, d->max_polys);
    if (dtStatusFailed(ds) || n == 0) return false;
    out->expanded = (uint32_t)d->q->getNodePool()->getNodeCount();
    out->polygons = (uint32_t)n;
    out->reached = d->polys[n - 1] == gref;
    float epos[3];
    dtVcopy(epos, gpos);
    if (!out->reached) d->q->closestPointOnPoly(d->polys[n - 1], gpos, epos, NULL);
    int np = 0;
    ds = d->q->findStraightPath(spos, epos, d->polys, n, d->points, NULL, NULL, &np, d->max_points,
                                0);
    if (dtStatusFailed(ds)) return false;
    out->npoints = (uint32_t)np;
    for (int i = 0; i + 1 < np; i++)
        out->length += dtVdist(&d->points[3 * i], &d->points[3 * (i + 1)]);
    return true;
}

/* findRandomPoint takes a float (*)() with no state: the caller's generator
 * for the length of one call, per thread. */
static __thread uint64_t *dd_rng;

static float dd_frand() {
    uint64_t z = (*dd_rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (float)(z >> 40) / (float)(1u << 24);
}

bool pf_dd_random_point(pf_dd *d, uint64_t *rng, float out[3]) {
    dtPolyRef ref = 0;
    dd_rng = rng;
    dtStatus ds = d->q->findRandomPoint(d->filter, dd_frand, &ref, out);
    dd_rng = NULL;
    return dtStatusSucceed(ds) && ref;
}

} /* extern "C" */
