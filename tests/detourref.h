/* detourref.h -- the tests' own Detour reference: RecastDemo's solo and tiled
 * pipelines (Sample_SoloMesh::handleBuild, Sample_TileMesh::buildTileMesh)
 * and NavMeshTesterTool's path query, written again in tests/detourref.cpp
 * straight on Recast/Detour. It shares no code with nav/: what pathd's
 * navmeshes are checked against.
 */
#ifndef PF_TESTS_DETOURREF_H
#define PF_TESTS_DETOURREF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* RecastDemo's settings, in its units (Sample.cpp). */
typedef struct detourref_settings {
    float cell_size, cell_height;
    float agent_height, agent_radius, agent_max_climb, agent_max_slope;
    int region_min_size, region_merge_size;
    float edge_max_len, edge_max_error;
    int verts_per_poly;
    float detail_sample_dist, detail_sample_max_error;
    int partition; /* 0 watershed, 1 monotone, 2 layers */
    int tile_size; /* 0: Sample_SoloMesh */
} detourref_settings;

/* RecastDemo's defaults (Sample::resetCommonSettings), solo. */
detourref_settings detourref_demo_settings(void);

/* An off-mesh connection as RecastDemo's OffMeshConnectionTool makes it. */
typedef struct detourref_link {
    float start[3], end[3];
    float radius;
    bool bidir;
} detourref_link;

typedef struct detourref detourref;

/* Builds the reference; NULL when Recast or Detour fails (why in
 * detourref_error). */
detourref *detourref_build(const float *verts, int nverts, const int *tris, int ntris,
                           const detourref_settings *s, const detourref_link *links, int nlinks);
const char *detourref_error(void);
void detourref_free(detourref *r);

/* Polygons of the mesh (off-mesh connections not counted), tiles with
 * polygons. */
int detourref_polygons(const detourref *r);
int detourref_tiles(const detourref *r);

/* NavMeshTesterTool's straight path query (findNearestPoly with half
 * extents ext, findPath, the closest point of the last polygon when it is
 * not the goal's, findStraightPath): false when start or goal has no
 * polygon. *reached: the corridor ends in the goal's polygon. Points into
 * pts (3 each, at most max), their number in *n, the 3D length in *len,
 * off-mesh links taken in *links. */
bool detourref_path(detourref *r, const float s[3], const float e[3], const float ext[3],
                    bool *reached, float *pts, int max, int *n, double *len, int *links);

/* The tests' own flood fill over the reference mesh's polygons and links
 * (no search): from the polygon findNearestPoly gives s (half extents ext)
 * to e's. *reach: e's polygon is reached following links the way they go
 * (a one-way off-mesh link one way only); *joined: reached taking every
 * link both ways (the weakly connected component). false when s or e has
 * no polygon. */
bool detourref_flood(detourref *r, const float s[3], const float e[3], const float ext[3],
                     bool *reach, bool *joined);

/* Line of sight as NavMeshTesterTool's raycast shows it: a's and b's
 * polygons by findNearestPoly (half extents ext; the nearest point must be
 * in the box, as pathd snaps); *visible when they are
 * one, or when dtNavMeshQuery::raycast from a's hits no wall (t is
 * FLT_MAX) and its last polygon is b's. false when a or b has no polygon
 * or the raycast fails. */
bool detourref_sight(detourref *r, const float a[3], const float b[3], const float ext[3],
                     bool *visible);

/* A random point of the mesh (dtNavMeshQuery::findRandomPoint) from the
 * test's generator state. */
bool detourref_random_point(detourref *r, uint64_t *rng, float out[3]);

#ifdef __cplusplus
}
#endif

#endif
