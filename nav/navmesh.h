/* navmesh.h -- navigation meshes: Recast builds, Detour queries, moving
 * obstacles, path corridors and crowds, behind a C interface.
 *
 * Recast/Detour (Debian librecast-dev: Recast, Detour, DetourTileCache,
 * DetourCrowd) is C++. The .cpp files of nav/ are the only C++ in pathd: a thin
 * shim that turns this contract into library calls. Everything above it is C.
 *
 * World: y is up. Points are float[3] = {x, y, z}. A grid map converted to a
 * mesh puts cell (x, y) on the floor square x..x+1, z = y..y+1 at height 0,
 * one cell one world unit.
 *
 * The pipeline (Mononen's Recast, as RecastDemo's Sample_TileMesh builds a
 * tile and Sample_SoloMesh the whole world when tile_size is 0):
 *   1. The world is cut into square tiles of tile_size voxels (one tile for
 *      a solo build). Each tile is voxelised once (triangles rasterised; a
 *      grid's walkable cells sampled at voxel centres). Then, for each agent
 *      type, from those same voxels: the triangles too steep for it left
 *      out, the three filters (low hanging obstacles, ledges, low
 *      ceilings), the compact heightfield, erosion by its radius, the named
 *      areas marked. Tiles are independent and run in parallel through a
 *      pf_nav_runner.
 *   2. Each type's compact heightfield of each tile is compressed and kept:
 *      it is what every later rebuild of that tile starts from.
 *   3. From it, after marking the obstacles that overlap it (not walkable):
 *      regions (watershed, monotone or layers), contours, polygons, the
 *      detail mesh (the ground's heights, within detail_sample_max_error),
 *      and dtCreateNavMeshData with the off-mesh links that start in it.
 * A change (obstacles, areas, links) repeats step 3 for the tiles it
 * touches only, for every agent type.
 *
 * Versions. A pf_navmesh is immutable once made, like the grid planner: any
 * number of threads may query one at once (each with its own pf_nav_query).
 * pf_nav_apply makes the next version: a copy of the Detour mesh (tile data
 * copied, tile references and salts kept, so polygon references of untouched
 * tiles stay valid from one version to the next and references into a
 * rebuilt tile never do) with the touched tiles rebuilt; the kept compact
 * heightfields are shared by every version of one build. Each version
 * keeps its obstacle, area and link state; a rebuild is the build's step 3
 * with that state.
 *
 * Agent types. A build serves one or more named agent types (radius,
 * height, climb, slope): the config's agent is the type "default", the
 * input may add others. Each type has its own Detour mesh in every
 * version; pf_navmesh_agent_type gives the version's view for one type,
 * which every query, corridor and crowd function takes. Obstacles, areas
 * and links apply to every type.
 *
 * Heights. Every point a query returns (snapped start and goal, path
 * corners, a partial path's end) is on the ground: its height is the
 * walkable input triangle's at its x/z (a grid's floor is y = 0), found
 * near the detail mesh's height there. Lengths are 3D lengths between those
 * points.
 *
 * Off-mesh links (Detour's off-mesh connections): a named jump, drop,
 * ladder or teleport from one point to another, one-way or both ways, with
 * a radius within which its ends attach to the mesh, an area (its cost and
 * enabled state are the area's) and its own cost factor. A link is stored
 * in the tile of its start; its end must lie in that tile or one of its 8
 * neighbours (Detour connects no further).
 *
 * Obstacles are the footprint of a thing (a crate, a closed door). The mesh
 * keeps the agent radius away from them, as it does from walls: a cylinder
 * is marked with radius + agent radius, a box grown by the agent radius on
 * x and z. An obstacle marks the walkable surface it overlaps in y.
 *
 * Areas are named sets of boxes (for a converted grid: its doors, one box a
 * cell) marked into the layers at build time, so polygons follow their
 * borders. An area has a cost (distance travelled in it is multiplied by
 * it) and is enabled or not; a disabled area's polygons stay in the mesh and
 * are excluded by every query, crowd and corridor. Grid cells of cost c > 1
 * become an unnamed area of cost c.
 *
 * Status and errors: actions return a pf_status (core/status.h); the build
 * and change functions also fill a pf_nav_error naming the input field at
 * fault and saying why. On error nothing is returned and nothing changes.
 *
 * Thread safety: no global state. pf_navmesh: concurrent readers, never
 * written after creation (its reference count is atomic). pf_nav_query,
 * pf_nav_corridor and pf_nav_crowd: one thread at a time each.
 */
#ifndef PF_NAV_NAVMESH_H
#define PF_NAV_NAVMESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Names of obstacles and areas: 1..PF_NAV_NAME_MAX-1 bytes of
 * [A-Za-z0-9_.-]. */
#define PF_NAV_NAME_MAX 64

/* Which input field an error is about and why. field is a JSON-style path
 * ("agent.radius", "obj", "obstacles[3].radius"), "" when no one field is
 * at fault. */
typedef struct pf_nav_error {
    char field[96];
    char message[200];
} pf_nav_error;

/* How the walkable area is cut into regions (RecastDemo's "Partitioning"):
 * watershed (rcBuildRegions: the best polygons, the slowest), monotone
 * (rcBuildRegionsMonotone: fast, long thin polygons), layers
 * (rcBuildLayerRegions: non-overlapping regions, good for tiles). Debian's
 * Recast (1.5.1) merges layer regions across areas, so a map with named
 * areas or cost classes refuses layers (PF_EUNSUPPORTED, "partition"). */
typedef enum pf_nav_partition {
    PF_NAV_WATERSHED = 0,
    PF_NAV_MONOTONE = 1,
    PF_NAV_LAYERS = 2
} pf_nav_partition;

/* Build settings (world units unless stated), each RecastDemo's with its
 * range; units as RecastDemo's sliders, so its numbers give its mesh. */
typedef struct pf_nav_config {
    float cell_size;               /* voxel side on x and z      [0.01, 10] */
    float cell_height;             /* voxel height on y          [0.01, 10] */
    float agent_radius;            /* erosion from walls         [0, 50]    */
    float agent_height;            /* clearance needed above     [cell_height, 100] */
    float agent_max_climb;         /* step height walked up      [0, 100]   */
    float agent_max_slope;         /* degrees                    [0, 89]    */
    int32_t tile_size;             /* voxels per tile side [16, 1024], or 0: one tile
                                      for the whole world (a solo build) */
    float edge_max_error;          /* contour simplification, voxels [0.1, 3] */
    int32_t region_min_size;       /* regions smaller than size^2 voxels are
                                      removed [0, 150] */
    int32_t region_merge_size;     /* regions smaller than size^2 are merged
                                      into neighbours [0, 150] */
    float edge_max_len;            /* longest contour edge, world units; 0 = no
                                      limit [0, 1000] */
    int32_t verts_per_poly;        /* [3, 6] (Detour's DT_VERTS_PER_POLYGON) */
    float detail_sample_dist;      /* detail mesh sample spacing, in cells
                                      (x cell_size); below 0.9: no samples
                                      [0, 64] */
    float detail_sample_max_error; /* detail mesh height error, in cell
                                      heights (x cell_height) [0, 64] */
    int32_t partition;             /* a pf_nav_partition */
} pf_nav_config;

/* RecastDemo's settings (Sample::resetCommonSettings): cell 0.3 x 0.2,
 * agent radius 0.6, height 2, climb 0.9, slope 45, regions 8 and 20, edges
 * 12 long and 1.3 off, 6 vertices a polygon, detail 6 and 1, watershed;
 * tiles of 32 voxels (Sample_TileMesh's). The defaults of a geometry
 * upload. */
pf_nav_config pf_nav_default_config(void);

/* The defaults of a grid converted to a mesh: cell 0.25 x 0.2, agent radius
 * 0.25, height 2, climb 0.4, tiles of 64, monotone regions (watershed
 * regions seed only two voxels from an edge, and a one-cell pocket or
 * corridor is two voxels wide after erosion), no region removed (a pocket
 * stays walkable, as on the grid), no edge length limit, the rest
 * RecastDemo's (regions under 20 x 20 voxels merged into a neighbour). This keeps every corridor
 * one cell wide (radius one voxel) and cuts two cells that touch only at a corner apart, as the
 * grid's no corner cutting rule does. */
pf_nav_config pf_nav_default_grid_config(void);

/* A named agent type beyond the config's ("default"). */
typedef struct pf_nav_agent_type {
    const char *name;                           /* PF_NAV_NAME_MAX rules; not "default" */
    float radius, height, max_climb, max_slope; /* the config's ranges */
} pf_nav_agent_type;

#define PF_NAV_MAX_AGENT_TYPES 8u

/* Limits of one build, checked before the work they bound. */
typedef struct pf_nav_limits {
    uint32_t max_vertices;     /* OBJ vertices */
    uint32_t max_triangles;    /* triangles after fan triangulation */
    uint64_t max_voxels;       /* voxel columns of the world's x/z extent */
    uint32_t max_tiles;        /* tile layers (polygon references are 32 bit:
                                  tiles x polygons per tile <= 2^22) */
    uint32_t build_ms;         /* wall time of a build or change, ms */
    uint32_t max_obstacles;    /* obstacles on one version */
    uint32_t max_areas;        /* named areas (<= 48) */
    uint32_t max_area_boxes;   /* boxes of all areas together */
    float max_search_extent;   /* largest half extent of a nearest-polygon box */
    uint32_t max_tile_spans;   /* voxel spans of one tile, estimated from its
                                  triangles before voxelising (each triangle
                                  adds at most one span to each voxel column
                                  its x/z bounds cover) */
    uint32_t max_column_spans; /* spans one voxel column may stack: bounded
                                  before voxelising by the triangles whose
                                  x/z bounds cover it (at most 4 x this),
                                  then checked after (Recast links at most
                                  63 spans of a column) */
    uint32_t max_links;        /* off-mesh links on one version */
    uint64_t max_bytes;        /* what a build or change may keep (its meshes,
                                  kept voxels, ground index); 0 = no limit */
} pf_nav_limits;

#define PF_NAV_DEFAULT_MAX_VERTICES (1u << 20)
#define PF_NAV_DEFAULT_MAX_TRIANGLES (1u << 21)
#define PF_NAV_DEFAULT_MAX_VOXELS (1ull << 26)
#define PF_NAV_DEFAULT_MAX_TILES 16384u
#define PF_NAV_DEFAULT_BUILD_MS 60000u
#define PF_NAV_DEFAULT_MAX_OBSTACLES 4096u
#define PF_NAV_DEFAULT_MAX_AREAS 48u
#define PF_NAV_DEFAULT_MAX_AREA_BOXES 65536u
#define PF_NAV_DEFAULT_MAX_SEARCH_EXTENT 64.0f
#define PF_NAV_DEFAULT_MAX_TILE_SPANS (1u << 20)
#define PF_NAV_DEFAULT_MAX_COLUMN_SPANS 64u
#define PF_NAV_DEFAULT_MAX_LINKS 4096u
/* Hard caps of the library: Detour's area ids are 6 bits (0 = not walkable,
 * 63 = plain ground, the rest named areas and grid cost classes). */
#define PF_NAV_MAX_AREAS 48u
#define PF_NAV_MAX_TILES (1u << 20)

pf_nav_limits pf_nav_default_limits(void);

/* Runs fn(arg, i) for every i in [0, n), in any order and possibly in
 * parallel, and returns once all have returned. The server runs tiles on its
 * worker pool; NULL (or run == NULL) runs them one by one on the caller. */
typedef void (*pf_nav_task_fn)(void *arg, uint32_t i);
typedef struct pf_nav_runner {
    void (*run)(void *ctx, uint32_t n, pf_nav_task_fn fn, void *arg);
    void *ctx;
} pf_nav_runner;

/* Geometry: a triangle soup, borrowed. Triangles index verts (3 floats each);
 * every index < nverts; coordinates finite. */
typedef struct pf_nav_geom {
    const float *verts;
    uint32_t nverts;
    const uint32_t *tris;
    uint32_t ntris;
} pf_nav_geom;

typedef struct pf_nav_box {
    float bmin[3], bmax[3];
} pf_nav_box;

/* A named area (see the top of the file). The boxes are borrowed. */
typedef struct pf_nav_area {
    const char *name;
    const pf_nav_box *boxes;
    size_t nboxes;
    float cost; /* [0.01, 1000] */
    bool enabled;
} pf_nav_area;

/* An off-mesh link. */
typedef struct pf_nav_link {
    char id[PF_NAV_NAME_MAX];
    float start[3], end[3];
    float radius;               /* (0, 1000]: its ends attach to polygons this close; 0 or
                                   less: the default agent's radius */
    bool bidir;                 /* both ways, or start to end only */
    char area[PF_NAV_NAME_MAX]; /* a named area's id, or "" (plain ground) */
    float cost;                 /* its length times this [0.01, 1000], times the area's */
    bool enabled;
} pf_nav_link;

/* What to build: geometry or a grid (exactly one), settings, areas. A grid
 * brings its doors as areas (named by the door, enabled when open, one box
 * per cell, the cost of its cells) and its costs as cost classes; grids with
 * wall edges or doors over wall edges are refused (PF_EUNSUPPORTED, field
 * "from_grid.walls"), as are more than the area limit's distinct costs. */
typedef struct pf_nav_build_input {
    const pf_nav_geom *geom;
    const pf_grid *grid;
    pf_nav_config config;
    const pf_nav_area *areas;
    size_t nareas;
    const pf_nav_agent_type *agent_types; /* beyond "default" */
    size_t nagent_types;
    const pf_nav_link *links;
    size_t nlinks;
} pf_nav_build_input;

typedef struct pf_navmesh pf_navmesh;

/* Builds a mesh. Statuses: PF_EINVAL (a setting out of range, bad
 * geometry), PF_ELIMIT (a limit; err names it: "limits.max_voxels",
 * "limits.build_ms", ...), PF_EUNSUPPORTED, PF_ENOMEM. On success *out
 * holds one reference (pf_navmesh_release). The build runs tiles through
 * `run`; it returns only after every task it started has returned. */
pf_status pf_nav_build(const pf_nav_build_input *in, const pf_nav_limits *lim,
                       const pf_nav_runner *run, pf_navmesh **out, pf_nav_error *err);

void pf_navmesh_retain(const pf_navmesh *nm);
/* Drops a reference; the last frees the version. NULL is a no-op. */
void pf_navmesh_release(const pf_navmesh *nm);

/* What a version holds, for the map info. */
typedef struct pf_nav_info {
    float bmin[3], bmax[3]; /* the world's bounds */
    pf_nav_config config;
    int32_t tiles_x, tiles_z; /* tile grid */
    uint32_t tile_layers;     /* compressed layers (Detour tiles at most) */
    uint32_t tiles;           /* Detour tiles with polygons */
    uint32_t polygons, vertices;
    uint32_t max_tile_polygons; /* what one tile may hold (2^poly bits) */
    size_t mesh_bytes;          /* this version's Detour mesh */
    size_t layer_bytes;         /* compressed layers, shared by the versions */
    uint64_t build_us;          /* the build (or change) that made it, wall time */
    uint32_t rebuilt_tiles;     /* tiles the change rebuilt (all, for a build) */
    uint32_t obstacles, areas, links;
    uint32_t agent_types; /* of the build, "default" first */
    size_t kept_bytes;    /* kept compact heightfields, all types */
    size_t ground_bytes;  /* the ground index (input triangles) */
    size_t total_bytes;   /* what the version holds in all: every type's
                             mesh, and the shared build data */
    size_t shared_bytes;  /* of which shared with the build's other versions */
    bool from_grid;
    int32_t grid_w, grid_h; /* the grid's size when from_grid */
} pf_nav_info;

void pf_navmesh_info(const pf_navmesh *nm, pf_nav_info *out);

/* Agent types: how many, and the view of version nm (any of its views) for
 * type i, or for the type named `name` (NULL when there is none). A view
 * shares the version's reference count (retain and release either). Index
 * 0 is "default", the version itself. */
uint32_t pf_navmesh_agent_type_count(const pf_navmesh *nm);
const pf_navmesh *pf_navmesh_agent_type(const pf_navmesh *nm, uint32_t i);
const pf_navmesh *pf_navmesh_agent_type_named(const pf_navmesh *nm, const char *name);
/* The type a view is for: its name and settings. */
typedef struct pf_nav_agent_info {
    const char *name;
    float radius, height, max_climb, max_slope;
    uint32_t polygons;
    size_t mesh_bytes, kept_bytes;
    uint64_t build_us; /* voxels to kept data and meshes, CPU time over all tiles */
} pf_nav_agent_info;
void pf_navmesh_agent_info(const pf_navmesh *view, pf_nav_agent_info *out);

/* Links from one polygon to another with none back: 0 on every mesh pathd
 * makes (Detour drops tile-border links past 4 a polygon edge; pathd adds
 * them back). A consistency check for the tests; O(links). */
uint32_t pf_navmesh_one_way_links(const pf_navmesh *nm);

/* Obstacles and areas of a version, by index (stable until the next
 * version): for GET map info. */
typedef enum pf_nav_shape { PF_NAV_CYLINDER = 0, PF_NAV_BOX = 1 } pf_nav_shape;

typedef struct pf_nav_obstacle {
    char id[PF_NAV_NAME_MAX];
    int32_t shape; /* a pf_nav_shape; anything else is refused */
    float pos[3];  /* cylinder: centre of its base */
    float radius, height;
    float bmin[3], bmax[3]; /* box */
} pf_nav_obstacle;

uint32_t pf_navmesh_obstacle_count(const pf_navmesh *nm);
const pf_nav_obstacle *pf_navmesh_obstacle(const pf_navmesh *nm, uint32_t i);

typedef struct pf_nav_area_state {
    const char *name; /* borrowed from the version; "" for a grid cost class */
    uint8_t area_id;
    float cost;
    bool enabled;
    size_t nboxes;
} pf_nav_area_state;

uint32_t pf_navmesh_area_count(const pf_navmesh *nm);
/* false for a bad index. */
bool pf_navmesh_area(const pf_navmesh *nm, uint32_t i, pf_nav_area_state *out);

/* Links of a version, by index (sorted by id), with their state. */
uint32_t pf_navmesh_link_count(const pf_navmesh *nm);
const pf_nav_link *pf_navmesh_link(const pf_navmesh *nm, uint32_t i);

/* A change: obstacles put (added, or moved when the id exists), removed by
 * id (an unknown id is an error), areas set, links put (added or replaced),
 * removed, or turned on or off. Applied as one. */
typedef struct pf_nav_area_change {
    const char *name;
    bool set_enabled, enabled;
    bool set_cost;
    float cost;
} pf_nav_area_change;

typedef struct pf_nav_link_change {
    const char *id;
    bool enabled;
} pf_nav_link_change;

typedef struct pf_nav_change {
    const pf_nav_obstacle *put;
    size_t nput;
    const char *const *remove;
    size_t nremove;
    const pf_nav_area_change *areas;
    size_t nareas;
    const pf_nav_link *put_links;
    size_t nput_links;
    const char *const *remove_links;
    size_t nremove_links;
    const pf_nav_link_change *link_states;
    size_t nlink_states;
} pf_nav_change;

/* Makes the next version of prev (any of its views) with the change
 * applied; prev is not touched; *out is the new version ("default").
 * Field names in err: "obstacles[i].<field>", "remove[i]",
 * "areas[i].<field>", "links[i].<field>", "remove_links[i]",
 * "link_states[i]" by position in the change. PF_EINVAL, PF_ELIMIT
 * ("limits.max_obstacles", "limits.build_ms", tile polygon capacity),
 * PF_ENOMEM. *out holds one reference. */
pf_status pf_nav_apply(const pf_navmesh *prev, const pf_nav_change *ch, const pf_nav_limits *lim,
                       const pf_nav_runner *run, pf_navmesh **out, pf_nav_error *err);

/* Queries. A pf_nav_query is per-thread scratch: Detour's node pool and the
 * path buffers, reused by every query on any version. max_nodes bounds the
 * polygons one search may visit [1, 65535] (Detour's node pool); a search
 * that runs out answers with what it reached (partial, out_of_nodes). */
typedef struct pf_nav_query pf_nav_query;

pf_status pf_nav_query_create(uint32_t max_nodes, pf_nav_query **out);
void pf_nav_query_destroy(pf_nav_query *q);
/* Bytes a query holds (its node pool, buffers and polyanya scratch). */
size_t pf_nav_query_memory(const pf_nav_query *q);

/* The default half extents of the nearest-polygon box of version nm:
 * x, z = max(2 agent radius, 4 cell size), y = agent height. */
void pf_navmesh_default_extents(const pf_navmesh *nm, float out[3]);

/* Nearest polygon to p within the box p +- extents (NULL: the default).
 * PF_OK with *snapped the closest point on it, inside the box; PF_EBLOCKED
 * when no enabled polygon has a point in the box; PF_ERANGE for a non-finite point or extents <= 0
 * or past limits.max_search_extent (checked by the caller; the query only
 * refuses non-finite and non-positive). */
pf_status pf_nav_nearest(pf_nav_query *q, const pf_navmesh *nm, const float p[3],
                         const float extents[3], float snapped[3]);

/* How the corridor is searched. POLYANYA (the default): an optimal
 * corridor (Cui, Harabor, Grastien 2017; see nav/polyanya.cpp), so the
 * funnelled path is the shortest on the mesh. DETOUR: dtNavMeshQuery's
 * findPath, A* between edge midpoints (faster on large open meshes, paths
 * a few percent longer). Unreachable goals and exhausted node budgets fall
 * back to findPath, whose partial result is the closest reachable polygon. */
typedef enum pf_nav_algorithm { PF_NAV_POLYANYA = 0, PF_NAV_DETOUR = 1 } pf_nav_algorithm;

typedef struct pf_nav_path {
    float *points; /* 3 floats a point; owned by the query, valid until its
                      next call */
    uint32_t npoints;
    bool partial;                  /* the goal is not reachable (or the search ran out of
                                      nodes): the path ends at the closest point reached */
    bool out_of_nodes;             /* Detour's DT_OUT_OF_NODES */
    double length;                 /* sum of the segment lengths (3D) */
    double ground_length;          /* the same on the ground plane (x/z): the
                                      metric polyanya's "exact" is in */
    double cost;                   /* sum of length x area cost (= length on plain ground) */
    uint32_t polygons;             /* polygons of the corridor */
    uint32_t expanded;             /* search nodes used (polyanya's pops, Detour's nodes) */
    uint32_t passes;               /* polyanya's searches: 1, or 2 when the first (with
                                      intermediate pruning) ran out of nodes and it ran
                                      again without; 0 for detour */
    bool exact;                    /* polyanya answered: the path is a shortest one
                                      in ground-plane length (x/z) among all paths
                                      on the mesh to the goal (or, partial, to the
                                      closest reachable point); its 3D length on
                                      slopes may exceed another path's */
    const char *inexact;           /* when not exact and polyanya was asked: why */
    float start[3], goal[3];       /* snapped start; the goal snapped (or the
                                      closest reachable point when partial) */
    float start_moved, goal_moved; /* how far snapping moved start and goal
                                      (before a partial goal's change) */
    uint32_t links;                /* off-mesh links the path takes */
    const uint32_t *corridor;      /* pf_nav_find_path: the corridor's polygon
                                      references, polygons of them, start to goal;
                                      owned by the query, valid until its next call */
} pf_nav_path;

/* findNearestPoly for start and goal, the corridor search (algo), then
 * the funnel (pathd's own over the polygons' exact shared edges, funnel.cpp;
 * Detour's findStraightPath for a corridor through an off-mesh link; with a
 * point where the path enters each area on maps whose areas have costs
 * other than 1). PF_OK (also when partial), PF_EBLOCKED with
 * *which = "start" or "goal" when no polygon is near it, PF_ERANGE for
 * non-finite input, PF_ENOMEM. */
pf_status pf_nav_find_path(pf_nav_query *q, const pf_navmesh *nm, const float start[3],
                           const float goal[3], const float extents[3], pf_nav_algorithm algo,
                           pf_nav_path *out, const char **which);

/* Detour raycast along the surface from `from` towards `to`, starting in
 * the polygon the ray enters (found a hair along it, default box): *t = the fraction of the way to
 * the first wall hit, 1 or more when there is none (Detour's FLT_MAX), and *visited the polygons
 * crossed. PF_EBLOCKED when `from` is off the mesh. */
pf_status pf_nav_raycast(pf_nav_query *q, const pf_navmesh *nm, const float from[3],
                         const float to[3], float *t, uint32_t *visited);

/* Line of sight on the mesh between a and b (world coordinates): each
 * end's polygon is the nearest within the default box (pf_nav_raycast's
 * hair along the segment), and *visible is true when they are one polygon,
 * or when Detour's raycast from a's polygon towards b hits no wall and
 * ends in b's polygon. An end with no polygon in its box sees nothing
 * (*visible false, PF_OK). PF_ERANGE for non-finite input, PF_ENOMEM. */
pf_status pf_nav_line_of_sight(pf_nav_query *q, const pf_navmesh *nm, const float a[3],
                               const float b[3], bool *visible);

/* Distance from p to the mesh surface: |p - closest point of the nearest
 * polygon within the default box|, or -1 when there is none. */
float pf_nav_distance_to_mesh(pf_nav_query *q, const pf_navmesh *nm, const float p[3]);

/* Path corridors (dtPathCorridor): one moving agent's path, kept up to date
 * as it moves. A corridor holds a reference to the version it planned on. */
typedef struct pf_nav_corridor pf_nav_corridor;

/* max_polys: the corridor's length cap [16, 65535]. */
pf_status pf_nav_corridor_create(uint32_t max_polys, pf_nav_corridor **out);
void pf_nav_corridor_destroy(pf_nav_corridor *c);

/* Plans from start to goal on nm (as pf_nav_find_path) and keeps the
 * corridor; out is the straight path along it. */
pf_status pf_nav_corridor_plan(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                               const float start[3], const float goal[3], const float extents[3],
                               pf_nav_algorithm algo, pf_nav_path *out, const char **which);

/* The agent is now at pos, on version nm. When nm is the corridor's version
 * and pos is reachable along the surface from the corridor's position
 * (within `slack` of where moving there ends), the corridor follows it
 * (movePosition) and its path is kept; otherwise (a new version: obstacles
 * or areas changed, a teleport, an invalid corridor) it replans from pos to
 * its goal. *replanned says which. out as pf_nav_corridor_plan. */
pf_status pf_nav_corridor_move(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                               const float pos[3], float slack, pf_nav_path *out, bool *replanned,
                               const char **which);

/* The goal moved to `goal`: Detour's moveTargetPosition. When the corridor
 * was planned on nm and reached its goal (not partial), and the goal,
 * snapped as a plan snaps it, lies in the corridor's last polygon or in
 * one next to it, reachable in a straight line along the surface from the
 * corridor's target, the target slides there: the polygons crossed are
 * merged into the corridor's end (dtMergeCorridorEndMoved), the corridor's
 * goal becomes `goal`, *slid = true, and pf_nav_corridor_move's next path
 * ends at the snapped goal. Otherwise (another version, a partial plan, a
 * wall between, a longer move, the corridor full) nothing changes and
 * *slid = false: plan anew. No search: the corridor is not optimal after a
 * slide; its path is at most the old path plus the straight slide (see
 * docs/moving-targets.md for the bound). PF_ERANGE for a non-finite goal,
 * PF_ENOMEM. */
pf_status pf_nav_corridor_move_target(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                                      const float goal[3], bool *slid);

/* Bytes the corridor holds (its polygon buffer included). */
size_t pf_nav_corridor_memory(const pf_nav_corridor *c);

/* The corridor's current position and goal (requested, unsnapped). */
void pf_nav_corridor_position(const pf_nav_corridor *c, float pos[3], float goal[3]);

/* Crowds (DetourCrowd): local steering of many agents with RVO-style
 * sampled velocity obstacles (dtObstacleAvoidanceQuery), separation and
 * collision resolution. A crowd runs on its own copy of the mesh, brought up
 * to a newer version by pf_nav_crowd_step (changed tiles only), as
 * DetourCrowd expects a mesh that tiles are replaced in. */
typedef struct pf_nav_crowd pf_nav_crowd;

typedef struct pf_nav_agent_params {
    float radius;     /* (0, the mesh's agent radius] */
    float height;     /* (0, 100] */
    float max_speed;  /* (0, 1000] units/s */
    float max_accel;  /* (0, 10000] units/s^2 */
    float separation; /* separation weight [0, 100] */
} pf_nav_agent_params;

/* Defaults for version nm: radius = the mesh's agent radius, height = the
 * mesh's agent height, speed 3.5, acceleration 8, separation 2. */
pf_nav_agent_params pf_nav_default_agent(const pf_navmesh *nm);

/* max_agents [1, 65535]. *out holds a reference to nm's copy. */
pf_status pf_nav_crowd_create(const pf_navmesh *nm, uint32_t max_agents, pf_nav_crowd **out);
void pf_nav_crowd_destroy(pf_nav_crowd *c);

/* Adds an agent at the nearest polygon to pos (default box; PF_EBLOCKED
 * when none), heading for target (PF_EBLOCKED, *which = "target", when no
 * polygon is near it; NULL = stand still). *id is its index, stable while it
 * lives. PF_ELIMIT when the crowd is full, PF_EINVAL for bad params (*which
 * names the field). */
pf_status pf_nav_crowd_add(pf_nav_crowd *c, const float pos[3], const float *target,
                           const pf_nav_agent_params *p, int32_t *id, const char **which);
/* PF_ERANGE for an id that is not an agent. */
pf_status pf_nav_crowd_remove(pf_nav_crowd *c, int32_t id);
/* New target (NULL = stop). PF_ERANGE for a bad id, PF_EBLOCKED off-mesh. */
pf_status pf_nav_crowd_set_target(pf_nav_crowd *c, int32_t id, const float *target);

/* Advances the simulation by dt seconds (0, 1]. When latest is not NULL and
 * is a newer version of the same build than the crowd's, the crowd's mesh is
 * first brought to it (only tiles that differ are copied; agents on or
 * planning through rebuilt tiles replan, as DetourCrowd does). PF_EINVAL for
 * a version of another build, PF_ENOMEM. */
pf_status pf_nav_crowd_step(pf_nav_crowd *c, float dt, const pf_navmesh *latest);
/* Only the first part of a step: the crowd's mesh brought to latest (as
 * above), so agents added next are placed on it. */
pf_status pf_nav_crowd_sync(pf_nav_crowd *c, const pf_navmesh *latest);

typedef enum pf_nav_agent_state {
    PF_NAV_AGENT_IDLE = 0, /* no target */
    PF_NAV_AGENT_MOVING,   /* following a path to its target */
    PF_NAV_AGENT_PLANNING, /* waiting for its path */
    PF_NAV_AGENT_ARRIVED,  /* within its radius of the (reachable) target */
    PF_NAV_AGENT_PARTIAL,  /* the target is unreachable: heading for the closest point */
    PF_NAV_AGENT_FAILED,   /* no path could be planned */
    PF_NAV_AGENT_OFF_MESH, /* the agent lost the mesh (e.g. under a new obstacle) */
    PF_NAV_AGENT_ON_LINK   /* traversing an off-mesh link */
} pf_nav_agent_state;

const char *pf_nav_agent_state_str(pf_nav_agent_state s);

typedef struct pf_nav_agent {
    float pos[3], vel[3], target[3];
    float radius;
    bool has_target;
    pf_nav_agent_state state;
} pf_nav_agent;

/* false when id is not an agent. */
bool pf_nav_crowd_agent(const pf_nav_crowd *c, int32_t id, pf_nav_agent *out);
/* Capacity (max_agents), number of agents, simulated seconds. */
uint32_t pf_nav_crowd_capacity(const pf_nav_crowd *c);
uint32_t pf_nav_crowd_count(const pf_nav_crowd *c);
double pf_nav_crowd_time(const pf_nav_crowd *c);
/* The version the crowd's mesh matches (borrowed). */
const pf_navmesh *pf_nav_crowd_version(const pf_nav_crowd *c);
/* The crowd's mesh bytes plus its agents and DetourCrowd's pools. */
size_t pf_nav_crowd_memory(const pf_nav_crowd *c);
/* What pf_nav_crowd_create(nm, max_agents) would hold: for charging it
 * before it is made. */
size_t pf_nav_crowd_estimate(const pf_navmesh *nm, uint32_t max_agents);

/* Failed Detour assertions tolerated since the process started (the one
 * known-harmless one; see common.cpp). Installed by the first corridor or
 * crowd: a process-wide hook of the library. For /metrics. */
unsigned long pf_nav_tolerated_asserts(void);

/* Which build a version belongs to (equal for a build and every version
 * pf_nav_apply made from it) and how many changes separate it from the
 * build. */
const void *pf_navmesh_lineage(const pf_navmesh *nm);
uint64_t pf_navmesh_generation(const pf_navmesh *nm);

#ifdef __cplusplus
}
#endif

#endif
