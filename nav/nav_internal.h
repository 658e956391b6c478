/* nav_internal.h -- what the nav/ shim's C++ files share: the layout of a
 * build (NavBase), of a version (pf_navmesh) and of a query's scratch
 * (pf_nav_query). Not a public header: only the .cpp files of nav/ include it.
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

/* Drops a reference to a build; the last frees it. */
void base_release(NavBase *b);

uint64_t now_us();
void set_err(pf_nav_error *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool finite3(const float *v);
bool valid_name(const char *s);
/* A tile slot of a mesh (dtNavMesh's non-const getTile is private). */
const dtMeshTile *tile_at(const dtNavMesh *nav, int i);

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
} /* namespace pfnav */

#endif
