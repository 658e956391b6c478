/* nav_internal.h -- what the nav/ shim's C++ files share: the layout of a
 * build (NavBase), of a version (pf_navmesh), of a query's scratch
 * (pf_nav_query), of a corridor and of a crowd, and the functions one file
 * of nav/ offers another. Not a public header: only the .cpp files of nav/
 * include it.
 *
 * The files, along Detour's own lines:
 *   common.cpp       errors, names, clocks, task runner, Detour's assert hook
 *   build.cpp        pf_nav_build: checks, bounds, triangles by tile, assembly
 *   build_areas.cpp  named areas, grid doors and cost classes of a build
 *   build_tile.cpp   one tile's voxels and compressed height layers
 *   tilecache.cpp    a Detour tile from a compressed layer and the obstacles
 *   tilelinks.cpp    tile-border links Detour leaves out (widen, repair)
 *   version.cpp      versions: references, copies, info
 *   apply.cpp        pf_nav_apply: obstacles and areas, the next version
 *   memory.cpp       what a version, a corridor and a crowd hold
 *   query.cpp        nearest polygon, paths, raycasts
 *   corridor.cpp     path corridors that follow a moving agent
 *   crowd.cpp        DetourCrowd behind pf_nav_crowd
 *   polyanya.cpp     the exact corridor search
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
#include <DetourTileCache.h>
#include <DetourTileCacheBuilder.h>
#include <Recast.h>

#ifdef DT_POLYREF64
#error "pathd's reference bit budget assumes Debian's 32-bit dtPolyRef"
#endif

namespace pfnav {

/* Polygon flags: the filter includes WALK; a disabled area's polygons carry
 * DISABLED only. */
const unsigned short FLAG_WALK = 1;
const unsigned short FLAG_DISABLED = 2;
/* Area ids: 0 not walkable, 63 plain ground (RC_WALKABLE_AREA, also
 * DT_TILECACHE_WALKABLE_AREA), 1..62 named areas then grid cost classes. */
const unsigned char AREA_GROUND = 63;
const int MAX_AREA_IDS = 62;
/* Height layers one tile may have (Sample_TempObstacles' MAX_LAYERS). */
const int MAX_LAYERS = 32;
/* 32-bit references: tile index + polygon index take 22 bits, the salt 10. */
const int REF_BITS = 22;

/* PackBits run-length coding of the tile cache layers (heights, areas and
 * connections: long runs on flat floors). A header byte h < 128 copies h+1
 * literal bytes; h >= 128 repeats the next byte 257-h times (2..129).
 * Worst case: one extra byte per 128. */
struct PackBits : public dtTileCacheCompressor {
    int maxCompressedSize(const int bufferSize) override {
        return bufferSize + bufferSize / 128 + 2;
    }

    dtStatus compress(const unsigned char *in, const int n, unsigned char *out, const int cap,
                      int *outSize) override {
        int i = 0, o = 0;
        while (i < n) {
            int run = 1;
            while (i + run < n && run < 129 && in[i + run] == in[i]) run++;
            if (run >= 2) {
                if (o + 2 > cap) return DT_FAILURE | DT_BUFFER_TOO_SMALL;
                out[o++] = (unsigned char)(257 - run);
                out[o++] = in[i];
                i += run;
                continue;
            }
            /* Literals up to the next run of two (or 128 of them). */
            int lit = 1;
            while (i + lit < n && lit < 128 && !(i + lit + 1 < n && in[i + lit] == in[i + lit + 1]))
                lit++;
            if (o + 1 + lit > cap) return DT_FAILURE | DT_BUFFER_TOO_SMALL;
            out[o++] = (unsigned char)(lit - 1);
            memcpy(out + o, in + i, (size_t)lit);
            o += lit;
            i += lit;
        }
        *outSize = o;
        return DT_SUCCESS;
    }

    dtStatus decompress(const unsigned char *in, const int n, unsigned char *out, const int cap,
                        int *outSize) override {
        int i = 0, o = 0;
        while (i < n) {
            unsigned h = in[i++];
            if (h < 128) {
                int lit = (int)h + 1;
                if (i + lit > n || o + lit > cap) return DT_FAILURE;
                memcpy(out + o, in + i, (size_t)lit);
                i += lit;
                o += lit;
            } else {
                int run = 257 - (int)h;
                if (i >= n || o + run > cap) return DT_FAILURE;
                memset(out + o, in[i++], (size_t)run);
                o += run;
            }
        }
        *outSize = o;
        return DT_SUCCESS;
    }
};

/* dtTileCache wants a mesh process object; pathd sets flags itself after
 * building (tile_from_layer), so this one does nothing. */
struct NoProcess : public dtTileCacheMeshProcess {
    void process(struct dtNavMeshCreateParams *, unsigned char *, unsigned short *) override {}
};

/* A named area or a grid cost class. */
struct AreaDef {
    char name[PF_NAV_NAME_MAX]; /* "" for a cost class */
    unsigned char id;
    pf_nav_box *boxes; /* owned */
    size_t nboxes;
    float cost0;   /* at build */
    bool enabled0; /* at build */
};

/* What every version of one build shares; immutable after the build. */
struct NavBase {
    int refs; /* atomic */
    pf_nav_config cfg;
    int walkable_height, walkable_climb, walkable_radius; /* voxels */
    int border;                                           /* voxels */
    float bmin[3], bmax[3];
    int gw, gh; /* voxels */
    int tw, th; /* tiles */
    float tile_world;
    dtTileCache *tc; /* the compressed layers */
    PackBits comp;
    dtTileCacheAlloc talloc; /* malloc-backed, stateless: safe from any thread */
    NoProcess tproc;
    dtNavMeshParams nmp;
    uint32_t nlayers;
    size_t layer_bytes;
    uint32_t max_tile_polys;
    AreaDef *areas; /* named areas first, then cost classes */
    uint32_t nareas, nnamed;
    bool from_grid;
    int32_t grid_w, grid_h;
    bool exact; /* the world fits polyanya's point keys (< 2^22 voxels a side) */
};

/* Exact corridors (polyanya.cpp). A search's scratch, one per query. */
struct PolyScratch;
PolyScratch *poly_scratch_create(uint32_t max_nodes);
void poly_scratch_destroy(PolyScratch *s);
/* Frees a version's polyanya view (built by the first search on it). */
void view_free(void *view);

/* common.cpp */
uint64_t now_us();
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

/* version.cpp */
pf_navmesh *version_alloc(NavBase *base);
void version_free(pf_navmesh *nm);
/* The query filter from the version's area costs. */
void version_set_filter(pf_navmesh *nm);
/* A copy of src, tile references and empty slots' salts kept. */
dtNavMesh *clone_nav(const dtNavMesh *src);
/* Brings dst (a clone of some version of src's build) to src, copying only
 * the tile slots that differ. */
dtStatus sync_nav(dtNavMesh *dst, const dtNavMesh *src);

/* memory.cpp: counts tiles, polygons, vertices and bytes of the version's
 * mesh. */
void version_count(pf_navmesh *nm);

/* tilecache.cpp */
/* The obstacle's marked footprint (grown by the agent radius and a voxel). */
void obstacle_bounds(const NavBase *b, const pf_nav_obstacle *o, float bmin[3], float bmax[3]);
/* Marks the tiles (tile grid cells) a box overlaps on x/z in `touched`. */
void mark_tiles(const NavBase *b, const float bmin[3], const float bmax[3], unsigned char *touched);
/* Detour tile data from one compressed layer with the obstacles marked. */
dtStatus tile_from_layer(NavBase *b, const dtCompressedTile *ct, const pf_nav_obstacle *obs,
                         uint32_t nobs, const bool *area_enabled, unsigned char **data, int *size,
                         int *npolys);

/* tilelinks.cpp */
/* Tile data rewritten with room for every border link; NULL on ENOMEM. */
unsigned char *widen_links(unsigned char *data, int *size, float cs);
/* Adds the tile-border links Detour dropped. */
void repair_links(dtNavMesh *nav);

/* build_tile.cpp: one tile's layers and Detour tiles. */
struct TileOut {
    int nlayers;
    unsigned char *layer[MAX_LAYERS];
    int layer_size[MAX_LAYERS];
    unsigned char *nav[MAX_LAYERS];
    int nav_size[MAX_LAYERS];
    int npolys[MAX_LAYERS];
    pf_status st;
    char why[120];
};

/* Build: geometry handed to the tile tasks. */
struct BuildJob {
    NavBase *b;
    const pf_nav_build_input *in;
    /* Triangles by tile (CSR): tile_tris[tile_first[t] .. tile_first[t+1]). */
    const uint32_t *tile_first;
    const uint32_t *tile_tris;
    /* Grid: area id of every cell (0 blocked). */
    const unsigned char *cell_area;
    uint64_t deadline_us;
    int aborted; /* atomic: a task failed or time ran out */
    TileOut *out;
};

void tile_out_free(TileOut *t);
/* The pf_nav_task_fn of a build: tile ti of the BuildJob arg. */
void build_tile_task(void *arg, uint32_t ti);

/* build_areas.cpp: named areas (from the input and a grid's doors) then
 * cost classes on the base; fills *cell_area_out for a grid. */
pf_status setup_areas(NavBase *b, const pf_nav_build_input *in, const pf_nav_limits *lim,
                      unsigned char **cell_area_out, pf_nav_error *err);

} /* namespace pfnav */

struct pf_navmesh {
    mutable int refs; /* atomic */
    pfnav::NavBase *base;
    dtNavMesh *nav;
    float area_cost[64];
    bool area_enabled[64];
    bool costly; /* some area costs other than 1: paths report area crossings */
    dtQueryFilter filter;
    pf_nav_obstacle *obs; /* sorted by id */
    uint32_t nobs;
    uint64_t generation;
    uint64_t build_us;
    uint32_t rebuilt;
    uint32_t tiles, polys, verts;
    size_t mesh_bytes;
    mutable void *view; /* polyanya's view of the mesh, built on first use (atomic) */
};

struct pf_nav_query {
    dtNavMeshQuery *q;
    const dtNavMesh *bound;
    uint32_t max_nodes;
    dtPolyRef *polys;
    float *points;
    unsigned char *flags;
    dtPolyRef *point_refs;
    uint32_t max_points;
    pfnav::PolyScratch *poly;
};

namespace pfnav {
/* Polyanya from spos in sref to gpos in gref: an optimal corridor in
 * path[0..*npath). DT_FAILURE with DT_PARTIAL_RESULT when the goal is not
 * reachable, DT_OUT_OF_NODES when q's node budget ran out, DT_INVALID_PARAM
 * when the world is too large for it (nm->base->exact false). */
dtStatus polyanya(pf_nav_query *q, const pf_navmesh *nm, dtPolyRef sref, dtPolyRef gref,
                  const float *spos, const float *gpos, dtPolyRef *path, int *npath, int max_path,
                  uint32_t *expanded);

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
    pf_nav_algorithm algo;
};

/* crowd.cpp */
struct pf_nav_crowd {
    const pf_navmesh *ver; /* the version the crowd's mesh matches (a reference) */
    dtNavMesh *nav;        /* the crowd's own copy */
    dtCrowd *crowd;
    uint32_t max_agents;
    uint32_t count;
    double time;
    float *target; /* requested targets, 3 per agent */
    bool *has_target;
};

#endif
