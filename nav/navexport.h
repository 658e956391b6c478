/* navexport.h -- a read-only view of a navmesh version's geometry, tile by
 * tile: the polygons with their vertices, areas and walls, the triangles of
 * their surface (Detour's detail triangles), the off-mesh links, and the
 * boxes of the named areas. What GET /v1/maps/{id}/mesh writes and the
 * viewer draws (server/routes_mesh.c, proto/mesh_json.h).
 *
 * Detour keeps a mesh as tiles in slots 0..pf_navmesh_tile_slots()-1, some
 * empty. In a tile, polygon p has the reference ref_base | p (a dtPolyRef:
 * the ids corridors and crowds use), 3..6 vertices (indices into the tile's
 * verts) and, when it is an off-mesh link's polygon, 2. Its surface is
 * ntris triangles whose corners index the tile's verts (index < nverts) or
 * its detail vertices (index - nverts into dverts). A mesh built without a
 * detail mesh has no detail vertices: its triangles are the polygons' own
 * fans, at the polygons' heights.
 *
 * Everything here reads an immutable version (navmesh.h): any thread, any
 * number at once, no allocation. Pointers into nm live as long as nm.
 */
#ifndef PF_NAV_NAVEXPORT_H
#define PF_NAV_NAVEXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "navmesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most vertices a polygon has (Detour's DT_VERTS_PER_POLYGON). */
#define PF_NAV_POLY_VERTS_MAX 6

typedef struct pf_nav_tile_view {
    int32_t x, z, layer;    /* the tile's place in the tile grid, its height layer */
    uint32_t ref_base;      /* polygon p's reference is ref_base | p */
    const float *verts;     /* 3 floats a vertex */
    uint32_t nverts;        /* [0, 65535] */
    const float *dverts;    /* detail vertices, 3 floats each */
    uint32_t ndverts;       /* 0 when the tile has no detail mesh */
    uint32_t npolys;        /* polygons, off-mesh links' included */
    uint32_t ntris;         /* surface triangles of all its polygons */
    uint32_t nlinks;        /* off-mesh links starting in this tile */
    float bmin[3], bmax[3]; /* the tile's bounds */
} pf_nav_tile_view;

typedef struct pf_nav_poly_view {
    uint16_t verts[PF_NAV_POLY_VERTS_MAX]; /* indices into the tile's verts */
    uint8_t nverts;                        /* 3..6; 2 for a link */
    uint8_t area;   /* Detour area id: 63 ground, else navmesh.h's area ids */
    bool enabled;   /* false: a disabled area's polygon (no query walks it) */
    bool link;      /* an off-mesh link's polygon (no surface, no triangles) */
    uint8_t walls;  /* bit j: edge verts[j]..verts[j+1] is a wall (no neighbour) */
    uint32_t ntris; /* its surface triangles */
} pf_nav_poly_view;

typedef struct pf_nav_link_view {
    float start[3], end[3];
    float radius;
    bool bidirectional;
    uint8_t area;
    bool enabled;
    uint32_t ref; /* its polygon's reference */
} pf_nav_link_view;

/* Tile slots of nm's mesh (empty ones included). */
uint32_t pf_navmesh_tile_slots(const pf_navmesh *nm);

/* Slot `slot` of nm: false when it is empty or out of range. */
bool pf_navmesh_tile_view(const pf_navmesh *nm, uint32_t slot, pf_nav_tile_view *out);

/* Polygon p of the tile in `slot`: false for an empty slot or p out of
 * range. */
bool pf_navmesh_poly_view(const pf_navmesh *nm, uint32_t slot, uint32_t p, pf_nav_poly_view *out);

/* Triangle t of polygon p of the tile in `slot` (t < that polygon's ntris):
 * its corners as indices into the tile's verts then dverts (see the top of
 * the file). false when an argument is out of range. */
bool pf_navmesh_poly_triangle(const pf_navmesh *nm, uint32_t slot, uint32_t p, uint32_t t,
                              uint32_t out[3]);

/* Off-mesh link k of the tile in `slot` (k < nlinks). false out of range. */
bool pf_navmesh_link_view(const pf_navmesh *nm, uint32_t slot, uint32_t k, pf_nav_link_view *out);

/* Box k of named area (or cost class) i, as pf_navmesh_area lists them.
 * false out of range. */
bool pf_navmesh_area_box(const pf_navmesh *nm, uint32_t i, uint32_t k, pf_nav_box *out);

/* Totals over every tile of nm, for sizing an export before writing it. */
typedef struct pf_nav_export_counts {
    uint32_t tiles;  /* non-empty slots */
    uint64_t verts;  /* polygon vertices */
    uint64_t dverts; /* detail vertices */
    uint64_t polys;  /* polygons, links' included */
    uint64_t tris;   /* surface triangles */
    uint64_t links;  /* off-mesh links */
    uint64_t boxes;  /* boxes of the areas */
} pf_nav_export_counts;

void pf_navmesh_export_counts(const pf_navmesh *nm, pf_nav_export_counts *out);

/* The view's Detour mesh (a const dtNavMesh *) and the query filter pathd's
 * own queries on it use (a const dtQueryFilter *), for C++ code that calls
 * Detour itself on the same mesh: pathd-bench navmesh's Detour-direct
 * baseline (loadtest/detour_direct.cpp). Read-only; valid as long as nm. */
const void *pf_navmesh_detour_mesh(const pf_navmesh *nm);
const void *pf_navmesh_detour_filter(const pf_navmesh *nm);

#ifdef __cplusplus
}
#endif

#endif
