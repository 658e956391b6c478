/* nav_internal.h -- what the nav/ shim's C++ files share: the layout of a
 * build (NavBase, its agent types, kept voxels and ground index), of a
 * version (pf_navmesh), of a query's scratch (pf_nav_query), of a corridor
 * and of a crowd, and the functions one file of nav/ offers another. Not a
 * public header: only the .cpp files of nav/ include it.
 *
 * The files, along Detour's own lines:
 *   common.cpp       errors, names, clocks, task runner, Detour's assert hook
 *   build.cpp        pf_nav_build: checks, bounds, triangles by tile, assembly
 *   build_areas.cpp  named areas, grid doors and cost classes of a build
 *   build_tile.cpp   one tile's voxels, once, and each agent type's kept voxels
 *   kept.cpp         a compact heightfield compressed and back (kept voxels)
 *   tilemesh.cpp     a Detour tile from kept voxels, obstacles and links
 *   tilelinks.cpp    tile-border links Detour leaves out (widen, repair)
 *   ground.cpp       the input triangles by cell: the ground's height at a point
 *   links.cpp        off-mesh links: checks, link cost classes, tiles
 *   version.cpp      versions and their agent type views: references, copies, info
 *   apply.cpp        pf_nav_apply: obstacles, areas, links, the next version
 *   memory.cpp       what a version, a query, a corridor and a crowd hold
 *   query.cpp        nearest polygon, paths, raycasts
 *   corridor.cpp     path corridors that follow a moving agent
 *   crowd.cpp        DetourCrowd behind pf_nav_crowd
 *   polyanya.cpp     the exact corridor search
 *   funnel.cpp       the straight path along a corridor over exact portals
 *   components.cpp   connected components of a version (unreachable in O(1))
 *   navexport.cpp    a version's tiles read in place (navexport.h, GET /mesh)
 */
#ifndef PF_NAV_INTERNAL_H
#define PF_NAV_INTERNAL_H

/* core's headers are C and have no extern "C" of their own. */
extern "C" {
#include "grid.h"
#include "status.h"
}
#include "navmesh.h"

#include <float.h>
#include <math.h>
#include <new>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <DetourCommon.h>
#include <DetourCrowd.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshBuilder.h>
#include <DetourNavMeshQuery.h>
#include <DetourNode.h>
#include <DetourPathCorridor.h>
#include <Recast.h>

#ifdef DT_POLYREF64
#error "pathd's reference bit budget assumes Debian's 32-bit dtPolyRef"
#endif

namespace pfnav {

/* Polygon flags: the filter includes WALK; a disabled area's polygons (and
 * a disabled link's) carry DISABLED only. */
const unsigned short FLAG_WALK = 1;
const unsigned short FLAG_DISABLED = 2;
/* Area ids: 0 not walkable, 63 plain ground (RC_WALKABLE_AREA), 1..62 named
 * areas, then grid cost classes, then link cost classes. */
const unsigned char AREA_GROUND = 63;
const int MAX_AREA_IDS = 62;
/* 32-bit references: tile index + polygon index take 22 bits, the salt 10. */
const int REF_BITS = 22;

/* PackBits run-length coding of the kept voxels (planes of span heights,
 * connections and areas: long runs on flat floors). A header byte h < 128
 * copies h+1 literal bytes; h >= 128 repeats the next byte 257-h times
 * (2..129). Worst case: one extra byte per 128. */
size_t packbits_bound(size_t n);
size_t packbits_encode(const unsigned char *in, size_t n, unsigned char *out);
/* false when the stream is malformed or does not fill exactly n bytes. */
bool packbits_decode(const unsigned char *in, size_t n_in, unsigned char *out, size_t n);

/* A named area or a grid cost class. */
struct AreaDef {
    char name[PF_NAV_NAME_MAX]; /* "" for a cost class */
    unsigned char id;
    pf_nav_box *boxes; /* owned */
    size_t nboxes;
    float cost0;   /* at build */
    bool enabled0; /* at build */
};

/* One tile's compact heightfield for one agent type, compressed (kept.cpp);
 * data NULL when the tile has no walkable span. */
struct KeptTile {
    unsigned char *data;
    uint32_t size;
};

/* An agent type of a build: its settings in voxels, its Detour mesh
 * parameters and its kept voxels. */
struct AgentType {
    char name[PF_NAV_NAME_MAX];
    float radius, height, climb, slope;
    int walkable_height, walkable_climb, walkable_radius; /* voxels */
    int border; /* voxels of tile border: its radius + 3 (Sample_TileMesh), 0 solo */
    /* The slope class a triangle needs to be walkable for this type: the
     * classes count the types a triangle is flat enough for. */
    unsigned char min_class;
    dtNavMeshParams nmp;
    uint32_t max_tile_polys;
    KeptTile *kept; /* [tw * th] */
    size_t kept_bytes;
    uint64_t build_us; /* CPU time of its share of the tile tasks */
};

/* The input triangles, for the ground's height at a point (ground.cpp):
 * those facing up, by square cells of 8 voxels. */
struct GroundIndex {
    float *verts; /* 3 a vertex */
    uint32_t nverts;
    uint32_t *tris; /* 3 a triangle */
    uint32_t ntris;
    float cell;      /* world units */
    int gx, gz;      /* cells */
    uint32_t *first; /* CSR: tri[first[c] .. first[c+1]) */
    uint32_t *items;
    /* [2 * ntris]: the heights a probe of triangle t can answer (its
     * vertices' widened by its slope times the probe's reach), so a lookup
     * skips the floors above and below in two comparisons. */
    float *yband;
    size_t bytes;
};

/* What every version of one build shares; immutable after the build. */
struct NavBase {
    int refs;          /* atomic */
    pf_nav_config cfg; /* the agent members are type 0's */
    bool solo;         /* tile_size 0: one tile */
    int ts;            /* voxels per tile side (the world's width when solo) */
    int border;        /* voxels voxelised around a tile: the widest type's */
    float bmin[3], bmax[3];
    int gw, gh; /* voxels */
    int tw, th; /* tiles */
    float tile_world;
    AgentType *agents; /* [nagents], "default" first */
    uint32_t nagents;
    AreaDef *areas; /* named areas first, then cost classes */
    uint32_t nareas, nnamed;
    unsigned char first_link_area; /* link cost classes use ids from here */
    GroundIndex ground;
    bool from_grid;
    int32_t grid_w, grid_h;
    bool exact;          /* the world fits polyanya's point keys (< 2^22 voxels a side) */
    size_t shared_bytes; /* this struct, areas, kept voxels, ground */
};

/* A link cost class: links of one area and cost factor share an area id,
 * whose cost is the area's times the factor. */
struct LinkClass {
    unsigned char base; /* the area it belongs to (AREA_GROUND for none) */
    float factor;
    unsigned char id;
};

/* What a tile's rebuild reads of a version. */
struct TileState {
    const pf_nav_obstacle *obs;
    uint32_t nobs;
    const bool *area_enabled; /* [64] */
    const pf_nav_link *links; /* sorted by id */
    const unsigned char *link_area;
    uint32_t nlinks;
};

/* Exact corridors (polyanya.cpp). A search's scratch, one per query. */
struct PolyScratch;
PolyScratch *poly_scratch_create(uint32_t max_nodes);
void poly_scratch_destroy(PolyScratch *s);
size_t poly_scratch_memory(const PolyScratch *s);
/* Builds polyanya's view of every agent type's mesh of the version (when
 * the world fits its point keys), so no search pays for it; false on
 * ENOMEM. */
bool version_views(pf_navmesh *root);
/* Frees a version's polyanya view. */
void view_free(void *view);

/* common.cpp */
uint64_t now_us();
uint64_t thread_cpu_us();
void set_err(pf_nav_error *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool finite3(const float *v);
bool valid_name(const char *s);
unsigned int next_pow2(unsigned int v);
int ilog2(unsigned int v);
/* Drops a reference to a build; the last frees it. */
void base_release(NavBase *b);
/* A tile slot of a mesh (dtNavMesh's non-const getTile is private). */
const dtMeshTile *tile_at(const dtNavMesh *nav, int i);
/* fn(arg, 0..n) through run (inline when run is NULL or has no run). */
void run_tasks(const pf_nav_runner *run, uint32_t n, pf_nav_task_fn fn, void *arg);
/* A box: finite, within +-1e7, min below max on every axis. */
pf_status check_box(const pf_nav_box *bx, pf_nav_error *err, const char *field);
/* Installs the process-wide Detour assertion hook (once). */
void install_assert_hook(void);
/* Whether two of ids[0..n) are equal: *first and *second their indices
 * (first < second, the pair with the smallest second). O(n log n); false
 * on ENOMEM too (*oom set). */
bool find_duplicate(const char *const *ids, size_t n, size_t *first, size_t *second, bool *oom);
/* A tile's x/z bounds without its border, computed as Recast computes the
 * polygon mesh's (so a point is in exactly the tile Detour files it in). */
void tile_bounds(const NavBase *b, int tx, int ty, float bmin[3], float bmax[3]);

/* version.cpp */
/* A new version of base with one view per agent type (each with no mesh
 * yet); the root is type 0. NULL on ENOMEM. */
pf_navmesh *version_alloc(NavBase *base);
void version_free(pf_navmesh *nm);
/* Each view's query filter and area tables from the root's area costs,
 * states and link classes. */
void version_set_filter(pf_navmesh *nm);
/* A copy of src, tile references and empty slots' salts kept. */
dtNavMesh *clone_nav(const dtNavMesh *src);
/* Brings dst (a clone of some version of src's build) to src, copying only
 * the tile slots that differ. */
dtStatus sync_nav(dtNavMesh *dst, const dtNavMesh *src);
/* The root's TileState. */
TileState version_tile_state(const pf_navmesh *root);

/* components.cpp */
/* The connected components of every view of the version; false on ENOMEM. */
bool version_components(pf_navmesh *root);
void components_free(pf_navmesh *v);
/* The component of polygon ref (UINT32_MAX: refused by the filter, or no
 * components). */
uint32_t component_of(const pf_navmesh *v, dtPolyRef ref);
/* The polygon of component c and its point closest to p (3D, as
 * closestPointOnPoly measures it, detail heights), without a search: a scan
 * of the component's boxes. false when c has no polygon. q is bound to v. */
bool closest_in_component(pf_nav_query *q, const pf_navmesh *v, uint32_t c, const float p[3],
                          dtPolyRef *ref, float out[3]);

/* memory.cpp: counts tiles, polygons, vertices and bytes of every view of
 * the version (and its total). */
void version_count(pf_navmesh *root);
/* What a crowd of max_agents holds on a copy of nav. */
size_t crowd_bytes(uint32_t max_agents, const dtNavMesh *nav);

/* kept.cpp */
/* chf compressed into *out (malloc'd). false on ENOMEM. */
bool kept_store(const rcCompactHeightfield &chf, KeptTile *out);
/* A compact heightfield from kept data (rcAlloc'd: rcFreeCompactHeightfield
 * frees it). NULL on ENOMEM or bad data. */
rcCompactHeightfield *kept_load(const KeptTile *k);

/* tilemesh.cpp */
/* The obstacle's marked footprint for type at (grown by its radius and a
 * voxel): used to find the tiles it touches. */
void obstacle_bounds(const NavBase *b, const AgentType *at, const pf_nav_obstacle *o, float bmin[3],
                     float bmax[3]);
/* Marks the tiles (tile grid cells) a box overlaps on x/z in `touched`. */
void mark_tiles(const NavBase *b, const float bmin[3], const float bmax[3], unsigned char *touched);
/* Detour tile data of tile (tx, ty) for type at from its compact
 * heightfield chf (modified: obstacles marked, regions): regions,
 * contours, polygons, detail mesh, links, dtCreateNavMeshData. *data NULL
 * when nothing is walkable. On failure *why says what (a phrase). */
dtStatus tile_mesh(const NavBase *b, const AgentType *at, int tx, int ty, rcCompactHeightfield &chf,
                   const TileState *vs, unsigned char **data, int *size, int *npolys, char *why,
                   size_t why_len);

/* tilelinks.cpp */
/* Tile data rewritten with room for every border link; NULL on ENOMEM. */
unsigned char *widen_links(unsigned char *data, int *size, float cs);
/* Adds the tile-border links Detour dropped. */
void repair_links(dtNavMesh *nav);

/* ground.cpp */
/* Builds the ground index of geometry g. false on ENOMEM. */
bool ground_build(NavBase *b, const pf_nav_geom *g);
void ground_free(GroundIndex *gi);
/* The height of the ground at x/z of p (a triangle holding it, else one
 * within a cell size), nearest to p's height within `window`; false when
 * there is none (a grid: none). */
bool ground_height(const NavBase *b, const float p[3], float window, float *y);

/* links.cpp */
/* Checks links (field names "<prefix>[i].<member>") against b: ids,
 * points within the world, end within the start tile's neighbours, radius,
 * cost, area. */
pf_status check_links(const NavBase *b, const pf_nav_link *links, size_t n, const char *prefix,
                      pf_nav_error *err);
/* The tile a link starts in (its index), -1 when outside the tile grid. */
int link_tile(const NavBase *b, const pf_nav_link *l);
/* The area id of each link (a cost class per distinct area and factor,
 * ids kept from prev's classes where they stay in use). PF_ELIMIT when the
 * ids run out. */
pf_status link_classes(const NavBase *b, const pf_nav_link *links, uint32_t n,
                       const LinkClass *prev, uint32_t nprev, LinkClass **classes,
                       uint32_t *nclasses, unsigned char **link_area, pf_nav_error *err);
int cmp_link(const void *a, const void *b);

/* build_tile.cpp: one tile's voxels and, per agent type, its kept voxels
 * and Detour tile. */
struct TileOut {
    unsigned char **nav; /* [nagents] */
    int *nav_size;
    int *npolys;
    KeptTile *kept; /* [nagents] */
    uint64_t *cpu_us;
    pf_status st;
    char why[160];
};

/* Build: geometry handed to the tile tasks. */
struct BuildJob {
    NavBase *b;
    const pf_nav_build_input *in;
    /* Triangles by tile (CSR): tile_tris[tile_first[t] .. tile_first[t+1]). */
    const uint32_t *tile_first;
    const uint32_t *tile_tris;
    const unsigned char *tri_class; /* slope class of each triangle */
    /* Grid: area id of every cell (0 blocked). */
    const unsigned char *cell_area;
    const pf_nav_limits *lim;
    const TileState *vs; /* the first version's links and area states */
    uint64_t deadline_us;
    int aborted;    /* atomic: a task failed or time ran out */
    uint64_t bytes; /* atomic: kept voxels and tiles made so far */
    TileOut *out;
};

/* Frees the tile data and kept voxels t still holds (not its arrays,
 * which the build owns). */
void tile_out_free(TileOut *t, uint32_t nagents);
/* The pf_nav_task_fn of a build: tile ti of the BuildJob arg. */
void build_tile_task(void *arg, uint32_t ti);

/* build_areas.cpp: named areas (from the input and a grid's doors) then
 * cost classes on the base; fills *cell_area_out for a grid. */
pf_status setup_areas(NavBase *b, const pf_nav_build_input *in, const pf_nav_limits *lim,
                      unsigned char **cell_area_out, pf_nav_error *err);
/* The area boxes' cover: voxel columns over all boxes, each box clipped to
 * the world (overlaps counted again). */
uint64_t area_box_columns(const NavBase *b);
/* Marks the named area boxes into chf (a span is in a box when its
 * voxel's centre is inside on x/z and its top within y). */
void mark_area_boxes(const NavBase *b, rcCompactHeightfield &chf);

} /* namespace pfnav */

struct pf_navmesh {
    mutable int refs;   /* atomic; the root's counts for every view */
    pf_navmesh *root;   /* the version (type 0) */
    pf_navmesh **types; /* root: [nagents], types[0] = root */
    uint32_t type;      /* index of the view's agent type */
    pfnav::NavBase *base;
    const pfnav::AgentType *at;
    dtNavMesh *nav;
    float area_cost[64];
    bool area_enabled[64];
    bool costly; /* some area costs other than 1: paths report area crossings */
    dtQueryFilter filter;
    /* The root owns these; views point at the root's. */
    pf_nav_obstacle *obs; /* sorted by id */
    uint32_t nobs;
    pf_nav_link *links; /* sorted by id */
    unsigned char *link_area;
    uint32_t nlinks, nlinks_on;
    pfnav::LinkClass *lclass;
    uint32_t nlclass;
    uint64_t generation;
    uint64_t build_us;
    uint32_t rebuilt;
    uint32_t tiles, polys, verts;
    size_t mesh_bytes;  /* this view's Detour mesh */
    size_t total_bytes; /* root: every view's mesh, the lists, the shared build data */
    mutable void *view; /* polyanya's view of the mesh, made with the version (atomic) */
    /* Connected components (components.cpp), made with the version:
     * comp[comp_first[tile slot] + polygon index], UINT32_MAX for a
     * polygon the filter refuses. */
    uint32_t *comp_first;
    uint32_t *comp;
    uint32_t ncomp;
    /* Component c's polygons are comp_list[comp_start[c]..comp_start[c+1]),
     * comp_box 6 floats each (min x y z, max x y z, detail included). */
    uint32_t *comp_start;
    dtPolyRef *comp_list;
    float *comp_box;
};

struct pf_nav_query {
    dtNavMeshQuery *q;
    const dtNavMesh *bound;
    uint32_t max_nodes;
    dtPolyRef *polys;
    dtPolyRef *polys2; /* a second corridor, when polyanya's is checked against Detour's */
    float *points;
    unsigned char *flags;
    dtPolyRef *point_refs;
    uint32_t max_points;
    pfnav::PolyScratch *poly;
    uint32_t passes; /* polyanya's last search: 2 when its pruned pass ran out of nodes */
};

namespace pfnav {
/* Polyanya from spos in sref to gpos in gref: an optimal corridor in
 * path[0..*npath), *best the ground-plane length it measured for it; DT_SUCCESS |
 * DT_OUT_OF_NODES: a corridor to the goal found after q's node budget ran out (successors were
 * dropped), so perhaps not the shortest. DT_FAILURE with DT_PARTIAL_RESULT when the goal is not
 * reachable, DT_OUT_OF_NODES when q's node budget ran out first, DT_INVALID_PARAM when the world
 * is too large for it (nm->base->exact false). */
dtStatus polyanya(pf_nav_query *q, const pf_navmesh *nm, dtPolyRef sref, dtPolyRef gref,
                  const float *spos, const float *gpos, dtPolyRef *path, int *npath, int max_path,
                  uint32_t *expanded, double *best);

/* funnel.cpp */
/* Whether the corridor path[0..n) passes an off-mesh link (or names a
 * polygon that is gone): such corridors keep Detour's findStraightPath. */
bool corridor_has_links(const dtNavMesh *nav, const dtPolyRef *path, int n);
/* The straight path from spos to epos along path[0..n) over the exact
 * portals (the shared stretch of both polygons' edges, not Detour's 1/255
 * link bounds), with the points where areas change when crossings: at most
 * max points into pts (3 each), flags (DT_STRAIGHTPATH_*) and refs (the
 * polygon each point's segment starts in). Returns the number of points,
 * -1 when two neighbours of the corridor do not link or max is too
 * small. */
int funnel(const dtNavMesh *nav, const float spos[3], const float epos[3], const dtPolyRef *path,
           int n, bool crossings, float *pts, unsigned char *flags, dtPolyRef *refs, int max);

/* query.cpp, for corridors */
/* Binds q's Detour query to nm's mesh (again only when it changed). */
pf_status bind_query(pf_nav_query *q, const pf_navmesh *nm);
/* The straight path along polys[0..npolys) from spos to epos into out. */
pf_status straight(pf_nav_query *q, const pf_navmesh *nm, const float spos[3], const float epos[3],
                   const dtPolyRef *polys, int npolys, pf_nav_path *out);
/* Snaps start and goal and finds the corridor into q->polys[0..*npolys). */
pf_status find_polys(pf_nav_query *q, const pf_navmesh *nm, const float start[3],
                     const float goal[3], const float extents[3], pf_nav_algorithm algo,
                     pf_nav_path *out, const char **which, int *npolys);
/* p's y put on the ground of nm's type near it (unchanged when none). */
void to_ground(const pf_navmesh *nm, float p[3]);
} /* namespace pfnav */

/* corridor.cpp */
struct pf_nav_corridor {
    dtPathCorridor corr;
    const pf_navmesh *nm; /* the version planned on (a reference) */
    uint32_t max_polys;
    float goal[3]; /* as requested */
    float extents[3];
    bool has_extents;
    bool planned;
    bool partial, out_of_nodes, exact; /* of the last plan */
    const char *inexact;
    pf_nav_algorithm algo;
};

/* crowd.cpp */
struct pf_nav_crowd {
    const pf_navmesh *ver; /* the view the crowd's mesh matches (a reference) */
    dtNavMesh *nav;        /* the crowd's own copy */
    dtCrowd *crowd;
    uint32_t max_agents;
    uint32_t count;
    double time;
    float *target; /* requested targets, 3 per agent */
    bool *has_target;
};

#endif
