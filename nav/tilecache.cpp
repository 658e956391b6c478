/* tilecache.cpp -- a Detour tile from one compressed height layer: the
 * obstacles marked into it, then DetourTileCache's region, contour and
 * polygon builders and dtCreateNavMeshData (navmesh.h's step 3). What a
 * build does once per layer and a change repeats for the tiles it touches.
 */
#include "nav_internal.h"

namespace pfnav {

/* The obstacle's marked footprint: the obstacle grown by the agent radius
 * on x and z, plus one voxel (dtMarkCylinderArea reaches half a voxel past
 * the radius). Used to find the tiles it touches. */
void obstacle_bounds(const NavBase *b, const pf_nav_obstacle *o, float bmin[3], float bmax[3]) {
    float r = b->cfg.agent_radius + b->cfg.cell_size;
    if (o->shape == PF_NAV_CYLINDER) {
        bmin[0] = o->pos[0] - o->radius - r;
        bmin[1] = o->pos[1];
        bmin[2] = o->pos[2] - o->radius - r;
        bmax[0] = o->pos[0] + o->radius + r;
        bmax[1] = o->pos[1] + o->height;
        bmax[2] = o->pos[2] + o->radius + r;
    } else {
        bmin[0] = o->bmin[0] - r;
        bmin[1] = o->bmin[1];
        bmin[2] = o->bmin[2] - r;
        bmax[0] = o->bmax[0] + r;
        bmax[1] = o->bmax[1];
        bmax[2] = o->bmax[2] + r;
    }
}

/* Marks the tiles (tile grid cells) a box overlaps on x/z in `touched`. */
void mark_tiles(const NavBase *b, const float bmin[3], const float bmax[3],
                unsigned char *touched) {
    float tw = b->tile_world;
    int x0 = (int)floorf((bmin[0] - b->bmin[0]) / tw),
        x1 = (int)floorf((bmax[0] - b->bmin[0]) / tw);
    int z0 = (int)floorf((bmin[2] - b->bmin[2]) / tw),
        z1 = (int)floorf((bmax[2] - b->bmin[2]) / tw);
    if (x1 < 0 || z1 < 0 || x0 >= b->tw || z0 >= b->th) return;
    if (x0 < 0) x0 = 0;
    if (z0 < 0) z0 = 0;
    if (x1 >= b->tw) x1 = b->tw - 1;
    if (z1 >= b->th) z1 = b->th - 1;
    for (int z = z0; z <= z1; z++)
        for (int x = x0; x <= x1; x++) touched[x + z * b->tw] = 1;
}

/* Frees what a layer build allocated, whatever step it stopped at. */
struct LayerScratch {
    dtTileCacheAlloc *alloc;
    dtTileCacheLayer *layer = nullptr;
    dtTileCacheContourSet *lcset = nullptr;
    dtTileCachePolyMesh *lmesh = nullptr;
    explicit LayerScratch(dtTileCacheAlloc *a) : alloc(a) {}
    ~LayerScratch() {
        dtFreeTileCacheLayer(alloc, layer);
        dtFreeTileCacheContourSet(alloc, lcset);
        dtFreeTileCachePolyMesh(alloc, lmesh);
    }
};

/* Detour tile data from one compressed layer: decompress, mark the
 * obstacles (area 0), regions, contours, polygons (DetourTileCache's
 * builders, as dtTileCache::buildNavMeshTile), flags from the areas'
 * state, dtCreateNavMeshData. *data = NULL when the layer has no polygons
 * left. Thread-safe: reads b, obstacles and the area state only. */
dtStatus tile_from_layer(NavBase *b, const dtCompressedTile *ct, const pf_nav_obstacle *obs,
                         uint32_t nobs, const bool *area_enabled, unsigned char **data, int *size,
                         int *npolys) {
    *data = NULL;
    *size = 0;
    *npolys = 0;
    LayerScratch sc(&b->talloc);
    dtStatus st =
        dtDecompressTileCacheLayer(&b->talloc, &b->comp, ct->data, ct->dataSize, &sc.layer);
    if (dtStatusFailed(st)) return st;
    const dtTileCacheLayerHeader *h = ct->header;
    const float cs = b->cfg.cell_size, ch = b->cfg.cell_height;
    const float r = b->cfg.agent_radius;
    /* The layer's x/z extent, for a quick overlap test. */
    float lx0 = h->bmin[0], lz0 = h->bmin[2];
    float lx1 = h->bmin[0] + (float)h->width * cs, lz1 = h->bmin[2] + (float)h->height * cs;
    for (uint32_t i = 0; i < nobs; i++) {
        float omin[3], omax[3];
        obstacle_bounds(b, &obs[i], omin, omax);
        if (omax[0] < lx0 || omin[0] > lx1 || omax[2] < lz0 || omin[2] > lz1) continue;
        const pf_nav_obstacle *o = &obs[i];
        if (o->shape == PF_NAV_CYLINDER) {
            st = dtMarkCylinderArea(*sc.layer, h->bmin, cs, ch, o->pos, o->radius + r, o->height,
                                    DT_TILECACHE_NULL_AREA);
        } else {
            float bmin[3] = {o->bmin[0] - r, o->bmin[1], o->bmin[2] - r};
            float bmax[3] = {o->bmax[0] + r, o->bmax[1], o->bmax[2] + r};
            st = dtMarkBoxArea(*sc.layer, h->bmin, cs, ch, bmin, bmax, DT_TILECACHE_NULL_AREA);
        }
        if (dtStatusFailed(st)) return st;
    }
    st = dtBuildTileCacheRegions(&b->talloc, *sc.layer, b->walkable_climb);
    if (dtStatusFailed(st)) return st;
    sc.lcset = dtAllocTileCacheContourSet(&b->talloc);
    if (!sc.lcset) return DT_FAILURE | DT_OUT_OF_MEMORY;
    st = dtBuildTileCacheContours(&b->talloc, *sc.layer, b->walkable_climb, b->cfg.edge_max_error,
                                  *sc.lcset);
    if (dtStatusFailed(st)) return st;
    sc.lmesh = dtAllocTileCachePolyMesh(&b->talloc);
    if (!sc.lmesh) return DT_FAILURE | DT_OUT_OF_MEMORY;
    st = dtBuildTileCachePolyMesh(&b->talloc, *sc.lcset, *sc.lmesh);
    if (dtStatusFailed(st)) return st;
    if (sc.lmesh->npolys == 0) return DT_SUCCESS;

    for (int i = 0; i < sc.lmesh->npolys; i++) {
        unsigned char a = sc.lmesh->areas[i];
        sc.lmesh->flags[i] = area_enabled[a & 63] ? FLAG_WALK : FLAG_DISABLED;
    }
    dtNavMeshCreateParams p;
    memset(&p, 0, sizeof p);
    p.verts = sc.lmesh->verts;
    p.vertCount = sc.lmesh->nverts;
    p.polys = sc.lmesh->polys;
    p.polyAreas = sc.lmesh->areas;
    p.polyFlags = sc.lmesh->flags;
    p.polyCount = sc.lmesh->npolys;
    p.nvp = DT_VERTS_PER_POLYGON;
    p.walkableHeight = b->cfg.agent_height;
    p.walkableRadius = b->cfg.agent_radius;
    p.walkableClimb = b->cfg.agent_max_climb;
    p.tileX = h->tx;
    p.tileY = h->ty;
    p.tileLayer = h->tlayer;
    p.cs = cs;
    p.ch = ch;
    /* dtTileCache leaves the BV tree out; pathd builds it, since every
     * query starts with a nearest-polygon lookup. */
    p.buildBvTree = true;
    dtVcopy(p.bmin, h->bmin);
    dtVcopy(p.bmax, h->bmax);
    if (!dtCreateNavMeshData(&p, data, size)) return DT_FAILURE | DT_OUT_OF_MEMORY;
    *data = widen_links(*data, size, cs);
    if (!*data) return DT_FAILURE | DT_OUT_OF_MEMORY;
    *npolys = sc.lmesh->npolys;
    return DT_SUCCESS;
}

} /* namespace pfnav */
