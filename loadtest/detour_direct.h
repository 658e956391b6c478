/* detour_direct.h -- the Detour-direct baseline of `pathd-bench navmesh`:
 * Detour's own query on pathd's mesh, in the same process, behind a C
 * interface (loadtest/detour_direct.cpp, C++ as nav/ is).
 *
 * A query is RecastDemo's NavMeshTesterTool straight path, nothing more:
 * findNearestPoly for start and goal (the same half extents and the same
 * query filter pathd uses on that version), findPath, the point of the last
 * polygon closest to the goal when the corridor stops short of it
 * (closestPointOnPoly), findStraightPath, and the 3D length of the points
 * Detour returns (no ground correction, no second search). What pathd adds
 * on top (ground heights, polyanya, the exact corridor to a partial goal) is
 * what the ratios measure.
 *
 * One pf_dd per thread; the mesh is borrowed and must outlive it.
 */
#ifndef PF_BENCH_DETOUR_DIRECT_H
#define PF_BENCH_DETOUR_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

#include "navmesh.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pf_dd pf_dd;

/* A query on nm (one agent type's view) with a node pool of max_nodes
 * [1, 65535], allocated here (dtNavMeshQuery::init), as a program calling
 * Detour does once per thread. PF_ERANGE, PF_ENOMEM. */
pf_status pf_dd_create(const pf_navmesh *nm, uint32_t max_nodes, pf_dd **out);
void pf_dd_destroy(pf_dd *d);

typedef struct pf_dd_path {
    bool found;        /* start and goal both have a polygon within the extents */
    bool reached;      /* the corridor ends in the goal's polygon */
    uint32_t npoints;  /* straight path corners */
    uint32_t polygons; /* corridor polygons */
    uint32_t expanded; /* findPath's nodes used */
    double length;     /* 3D length of the straight path */
} pf_dd_path;

/* One query (see the top of the file); extents NULL: the version's default
 * (pf_navmesh_default_extents). False on a Detour failure other than "no
 * polygon near" (out->found false then). */
bool pf_dd_path_find(pf_dd *d, const float start[3], const float goal[3], const float extents[3],
                     pf_dd_path *out);

/* A random point on the mesh (dtNavMeshQuery::findRandomPoint: a polygon
 * chosen by area, then a point in it) drawn from *rng. */
bool pf_dd_random_point(pf_dd *d, uint64_t *rng, float out[3]);

#ifdef __cplusplus
}
#endif

#endif
