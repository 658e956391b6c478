/* build_tile.cpp -- one tile of a build (navmesh.h's steps 1 and 2 and the
 * first step 3): voxelise the tile's triangles or grid cells, filter, erode,
 * mark the named areas, split into height layers, compress them, and make
 * each layer's Detour tile by the code path every later rebuild takes.
 * Tiles are independent: build_tile_task runs on any thread.
 */
#include "nav_internal.h"

namespace pfnav {

namespace {

/* Frees the Recast objects of one tile task. */
struct RasterScratch {
    rcHeightfield *hf = nullptr;
    rcCompactHeightfield *chf = nullptr;
    rcHeightfieldLayerSet *lset = nullptr;
    unsigned char *triareas = nullptr;
    ~RasterScratch() {
        rcFreeHeightField(hf);
        rcFreeCompactHeightfield(chf);
        rcFreeHeightfieldLayerSet(lset);
        free(triareas);
    }
};

bool job_abort_check(BuildJob *j, TileOut *o) {
    if (__atomic_load_n(&j->aborted, __ATOMIC_RELAXED)) {
        o->st = PF_ECANCELED;
        return true;
    }
    if (now_us() > j->deadline_us) {
        o->st = PF_ELIMIT;
        snprintf(o->why, sizeof o->why, "the build took longer than limits.build_ms");
        __atomic_store_n(&j->aborted, 1, __ATOMIC_RELAXED);
        return true;
    }
    return false;
}

void tile_fail(BuildJob *j, TileOut *o, pf_status st, const char *why) {
    o->st = st;
    snprintf(o->why, sizeof o->why, "%s", why);
    __atomic_store_n(&j->aborted, 1, __ATOMIC_RELAXED);
}

/* Marks the named area boxes into the compact heightfield: a span is in a
 * box when its voxel's centre is inside on x/z and its top within y. */
void mark_area_boxes(const NavBase *b, rcCompactHeightfield &chf) {
    for (uint32_t a = 0; a < b->nnamed; a++) {
        const AreaDef *ad = &b->areas[a];
        if (b->from_grid && ad->boxes == NULL) continue;
        for (size_t k = 0; k < ad->nboxes; k++) {
            const pf_nav_box *bx = &ad->boxes[k];
            int x0 = (int)ceilf((bx->bmin[0] - chf.bmin[0]) / chf.cs - 0.5f);
            int x1 = (int)floorf((bx->bmax[0] - chf.bmin[0]) / chf.cs - 0.5f);
            int z0 = (int)ceilf((bx->bmin[2] - chf.bmin[2]) / chf.cs - 0.5f);
            int z1 = (int)floorf((bx->bmax[2] - chf.bmin[2]) / chf.cs - 0.5f);
            if (x1 < 0 || z1 < 0 || x0 >= chf.width || z0 >= chf.height) continue;
            if (x0 < 0) x0 = 0;
            if (z0 < 0) z0 = 0;
            if (x1 >= chf.width) x1 = chf.width - 1;
            if (z1 >= chf.height) z1 = chf.height - 1;
            for (int z = z0; z <= z1; z++)
                for (int x = x0; x <= x1; x++) {
                    const rcCompactCell &c = chf.cells[x + z * chf.width];
                    for (unsigned i = c.index, ni = c.index + c.count; i < ni; i++) {
                        float top = chf.bmin[1] + (float)chf.spans[i].y * chf.ch;
                        if (top < bx->bmin[1] || top > bx->bmax[1]) continue;
                        if (chf.areas[i] != RC_NULL_AREA) chf.areas[i] = ad->id;
                    }
                }
        }
    }
}

/* A grid's walkable cells into the tile's heightfield: a cell is a floor
 * square at height 0; a voxel column is floor when its centre is in a
 * walkable cell. The span [0, 1) ends at y = bmin.y + ch = 0. */
bool rasterize_grid(BuildJob *j, TileOut *o, rcContext *ctx, RasterScratch *sc,
                    const float tbmin[3], int w) {
    const float cs = j->b->cfg.cell_size;
    const pf_grid *g = j->in->grid;
    const int32_t gw = pf_grid_width(g), gh = pf_grid_height(g);
    for (int vz = 0; vz < w; vz++) {
        float wz = tbmin[2] + ((float)vz + 0.5f) * cs;
        int32_t cy = (int32_t)floorf(wz);
        if (wz < 0 || cy >= gh) continue;
        for (int vx = 0; vx < w; vx++) {
            float wx = tbmin[0] + ((float)vx + 0.5f) * cs;
            int32_t cx = (int32_t)floorf(wx);
            if (wx < 0 || cx >= gw) continue;
            unsigned char a = j->cell_area[(size_t)cy * (size_t)gw + (size_t)cx];
            if (!a) continue;
            if (!rcAddSpan(ctx, *sc->hf, vx, vz, 0, 1, a, 1)) {
                tile_fail(j, o, PF_ENOMEM, "out of memory (spans)");
                return false;
            }
        }
    }
    return true;
}

/* The tile's triangles into its heightfield, then the sample's three
 * filters (overhangs, ledges, low ceilings). *empty when the tile has no
 * triangles. False when the task stops (o says why). */
bool rasterize_geom(BuildJob *j, TileOut *o, rcContext *ctx, RasterScratch *sc, uint32_t ti,
                    bool *empty) {
    const NavBase *b = j->b;
    const pf_nav_geom *geom = j->in->geom;
    uint32_t first = j->tile_first[ti], n = j->tile_first[ti + 1] - first;
    *empty = n == 0;
    if (n == 0) return true;
    sc->triareas = (unsigned char *)malloc(n);
    if (!sc->triareas) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (triangles)");
        return false;
    }
    /* Triangles one by one: the tile's list indexes the whole soup. */
    const float *v = geom->verts;
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t *t = &geom->tris[3 * (size_t)j->tile_tris[first + k]];
        int tri[3] = {(int)t[0], (int)t[1], (int)t[2]};
        unsigned char area = 0;
        rcMarkWalkableTriangles(ctx, b->cfg.agent_max_slope, v, (int)geom->nverts, tri, 1, &area);
        if (!rcRasterizeTriangle(ctx, &v[3 * (size_t)t[0]], &v[3 * (size_t)t[1]],
                                 &v[3 * (size_t)t[2]], area, *sc->hf, b->walkable_climb)) {
            tile_fail(j, o, PF_ENOMEM, "out of memory (rasterising)");
            return false;
        }
        if ((k & 1023) == 1023 && job_abort_check(j, o)) return false;
    }
    rcFilterLowHangingWalkableObstacles(ctx, b->walkable_climb, *sc->hf);
    rcFilterLedgeSpans(ctx, b->walkable_height, b->walkable_climb, *sc->hf);
    rcFilterWalkableLowHeightSpans(ctx, b->walkable_height, *sc->hf);
    return true;
}

/* The heightfield compacted, eroded, its areas marked and split into
 * height layers, each compressed into o. */
bool build_layers(BuildJob *j, TileOut *o, rcContext *ctx, RasterScratch *sc, int tx, int ty) {
    NavBase *b = j->b;
    sc->chf = rcAllocCompactHeightfield();
    if (!sc->chf ||
        !rcBuildCompactHeightfield(ctx, b->walkable_height, b->walkable_climb, *sc->hf, *sc->chf)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (compact heightfield)");
        return false;
    }
    rcFreeHeightField(sc->hf);
    sc->hf = nullptr;
    if (b->walkable_radius > 0 && !rcErodeWalkableArea(ctx, b->walkable_radius, *sc->chf)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (erosion)");
        return false;
    }
    mark_area_boxes(b, *sc->chf);
    sc->lset = rcAllocHeightfieldLayerSet();
    if (!sc->lset ||
        !rcBuildHeightfieldLayers(ctx, *sc->chf, b->border, b->walkable_height, *sc->lset)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (height layers)");
        return false;
    }
    if (sc->lset->nlayers > MAX_LAYERS) {
        char why[120];
        snprintf(why, sizeof why, "tile (%d, %d) has %d height layers, more than %d", tx, ty,
                 sc->lset->nlayers, MAX_LAYERS);
        tile_fail(j, o, PF_ELIMIT, why);
        return false;
    }
    for (int i = 0; i < sc->lset->nlayers; i++) {
        const rcHeightfieldLayer *layer = &sc->lset->layers[i];
        dtTileCacheLayerHeader header;
        memset(&header, 0, sizeof header);
        header.magic = DT_TILECACHE_MAGIC;
        header.version = DT_TILECACHE_VERSION;
        header.tx = tx;
        header.ty = ty;
        header.tlayer = i;
        dtVcopy(header.bmin, layer->bmin);
        dtVcopy(header.bmax, layer->bmax);
        header.width = (unsigned char)layer->width;
        header.height = (unsigned char)layer->height;
        header.minx = (unsigned char)layer->minx;
        header.maxx = (unsigned char)layer->maxx;
        header.miny = (unsigned char)layer->miny;
        header.maxy = (unsigned char)layer->maxy;
        header.hmin = (unsigned short)layer->hmin;
        header.hmax = (unsigned short)layer->hmax;
        unsigned char *data = NULL;
        int size = 0;
        dtStatus st = dtBuildTileCacheLayer(&b->comp, &header, layer->heights, layer->areas,
                                            layer->cons, &data, &size);
        if (dtStatusFailed(st)) {
            tile_fail(j, o, PF_ENOMEM, "out of memory (layer)");
            return false;
        }
        o->layer[o->nlayers] = data;
        o->layer_size[o->nlayers] = size;
        o->nav[o->nlayers] = NULL;
        o->nav_size[o->nlayers] = 0;
        o->npolys[o->nlayers] = 0;
        o->nlayers++;
    }
    return true;
}

/* Detour tiles from the compressed layers: the code path every later
 * rebuild takes, so a rebuild without obstacles gives the same tile. */
void tiles_from_layers(BuildJob *j, TileOut *o, int tx, int ty) {
    NavBase *b = j->b;
    for (int i = 0; i < o->nlayers; i++) {
        if (job_abort_check(j, o)) return;
        dtCompressedTile ct;
        memset(&ct, 0, sizeof ct);
        ct.header = (dtTileCacheLayerHeader *)o->layer[i];
        ct.data = o->layer[i];
        ct.dataSize = o->layer_size[i];
        bool enabled[64];
        for (int a = 0; a < 64; a++) enabled[a] = true;
        for (uint32_t a = 0; a < b->nareas; a++) enabled[b->areas[a].id] = b->areas[a].enabled0;
        dtStatus st =
            tile_from_layer(b, &ct, NULL, 0, enabled, &o->nav[i], &o->nav_size[i], &o->npolys[i]);
        if (dtStatusFailed(st)) {
            char why[120];
            if (dtStatusDetail(st, DT_BUFFER_TOO_SMALL))
                snprintf(why, sizeof why,
                         "tile (%d, %d) is too intricate for one tile (more than 255 regions "
                         "or a polygon hole too large): use a smaller tile_size",
                         tx, ty);
            else
                snprintf(why, sizeof why, "tile (%d, %d): out of memory", tx, ty);
            tile_fail(j, o, dtStatusDetail(st, DT_BUFFER_TOO_SMALL) ? PF_ELIMIT : PF_ENOMEM, why);
            return;
        }
    }
}

} /* namespace */

void tile_out_free(TileOut *t) {
    for (int i = 0; i < t->nlayers; i++) {
        dtFree(t->layer[i]);
        dtFree(t->nav[i]);
        t->layer[i] = t->nav[i] = NULL;
    }
    t->nlayers = 0;
}

void build_tile_task(void *arg, uint32_t ti) {
    BuildJob *j = (BuildJob *)arg;
    NavBase *b = j->b;
    TileOut *o = &j->out[ti];
    if (job_abort_check(j, o)) return;
    const int tx = (int)(ti % (uint32_t)b->tw), ty = (int)(ti / (uint32_t)b->tw);
    const pf_nav_config *cfg = &b->cfg;
    const float cs = cfg->cell_size, ch = cfg->cell_height;
    const int ts = cfg->tile_size, border = b->border;
    const int w = ts + 2 * border;
    rcContext ctx(false);
    RasterScratch sc;

    float tbmin[3], tbmax[3];
    tbmin[0] = b->bmin[0] + (float)(tx * ts - border) * cs;
    tbmin[1] = b->bmin[1];
    tbmin[2] = b->bmin[2] + (float)(ty * ts - border) * cs;
    tbmax[0] = b->bmin[0] + (float)((tx + 1) * ts + border) * cs;
    tbmax[1] = b->bmax[1];
    tbmax[2] = b->bmin[2] + (float)((ty + 1) * ts + border) * cs;

    sc.hf = rcAllocHeightfield();
    if (!sc.hf || !rcCreateHeightfield(&ctx, *sc.hf, w, w, tbmin, tbmax, cs, ch)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (heightfield)");
        return;
    }
    if (j->in->grid) {
        if (!rasterize_grid(j, o, &ctx, &sc, tbmin, w)) return;
    } else {
        bool empty = false;
        if (!rasterize_geom(j, o, &ctx, &sc, ti, &empty)) return;
        if (empty) return; /* nothing here */
    }
    if (job_abort_check(j, o)) return;
    if (!build_layers(j, o, &ctx, &sc, tx, ty)) return;
    rcFreeCompactHeightfield(sc.chf);
    sc.chf = nullptr;
    rcFreeHeightfieldLayerSet(sc.lset);
    sc.lset = nullptr;
    tiles_from_layers(j, o, tx, ty);
}

} /* namespace pfnav */
