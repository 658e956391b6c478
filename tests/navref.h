/* navref.h -- the tests' own Detour reference: RecastDemo's solo and tiled
 * pipelines (Sample_SoloMesh::handleBuild, Sample_TileMesh::buildTileMesh)
 * and NavMeshTesterTool's path query, written again in tests/navref.cpp
 * straight on Recast/Detour. It shares no code with nav/: what pathd's
 * navmeshes are checked against.
 */
#ifndef PF_TESTS_NAVREF_H
#define PF_TESTS_NAVREF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* RecastDemo's settings, in its units (Sample.cpp). */
typedef struct navref_settings {
    float cell_size, cell_height;
    float agent_height, agent_radius, agent_max_climb, agent_max_slope;
    int region_min_size, region_merge_size;
    float edge_max_len, edge_max_error;
    int verts_per_poly;
    float detail_sample_dist, detail_sample_max_error;
    int partition; /* 0 watershed, 1 monotone, 2 layers */
    int tile_size; /* 0: Sample_SoloMesh */
} navref_settings;

/* RecastDemo's defaults (Sample::resetCommonSettings), solo. */
navref_settings navref_demo_settings(void);

/* An off-mesh connection as RecastDemo's OffMeshConnectionTool makes it. */
typedef struct navref_link {
    float start[3], end[3];
    float radius;
    bool bidir;
} navref_link;

typedef struct navref navref;

/* Builds the reference; NULL when Recast or Detour fails (why in
 * navref_error). */
navref *navref_build(const float *verts, int nverts, const int *tris, int ntris,
                     const navref_settings *s, const navref_link *links, int nlinks);
const char *navref_error(void);
void navref_free(navref *r);

/* Polygons of the mesh (off-mesh connections not counted), tiles with
 * polygons. */
int navref_polygons(const navref *r);
int navref_tiles(const navref *r);

/* NavMeshTesterTool's straight path query (findNearestPoly with half
 * extents ext, findPath, the closest point of the last polygon when it is
 * not the goal's, findStraightPath): false when start or goal has no
 * polygon. *reached: the corridor ends in the goal's polygon. Points into
 * pts (3 each, at most max), their number in *n, the 3D length in *len,
 * off-mesh links taken in *links. */
bool navref_path(navref *r, const float s[3], const float e[3], const float ext[3], bool *reached,
                 float *pts, int max, int *n, double *len, int *links);

/* A random point of the mesh (dtNavMeshQuery::findRandomPoint) from the
 * test's generator state. */
bool navref_random_point(navref *r, uint64_t *rng, float out[3]);

#ifdef __cplusplus
}
#endif

#endif
