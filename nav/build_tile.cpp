/* build_tile.cpp -- one tile of a build (navmesh.h's steps 1 to 3):
 * voxelise the tile's triangles or grid cells once, then for each agent
 * type from those voxels the filters, the compact heightfield, erosion and
 * the named areas (Sample_TileMesh's buildTileMesh up to its convex
 * volumes), kept compressed, and the type's Detour tile (tilemesh.cpp).
 * Tiles are independent: build_tile_task runs on any thread.
 *
 * Bounded work. Recast's steps cannot be interrupted; so the work ahead is
 * bounded before it starts and the deadline checked between steps and
 * within the voxelisation (between triangles: the step whose cost grows
 * with the square of what is stacked). Before voxelising, each voxel
 * column's span count is bounded by the triangles whose x/z bounds cover
 * it (each adds at most one span there): more than 4 x
 * limits.max_column_spans anywhere stops the build (4: the bound counts
 * small triangles whose spans merge). After voxelising, before the compact
 * heightfield (whose neighbour search costs spans x the neighbours'
 * depth), the spans each column really holds: more than
 * limits.max_column_spans stops it (Recast links at most 63 spans of a
 * column to a neighbour's). The tile's total was bounded when the
 * triangles were binned (limits.max_tile_spans).
 */
#include "nav_internal.h"

namespace pfnav {

namespace {

/* Frees the Recast objects of one tile task. */
struct RasterScratch {
    rcHeightfield *hf = nullptr;
    rcCompactHeightfield *chf = nullptr;
    unsigned char *saved = nullptr; /* the spans' areas after voxelising */
    uint16_t *depth = nullptr;      /* triangles over each column */
    ~RasterScratch() {
        rcFreeHeightField(hf);
        rcFreeCompactHeightfield(chf);
        free(saved);
        free(depth);
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

/* Counts n bytes the build keeps against limits.max_bytes. */
bool charge(BuildJob *j, TileOut *o, uint64_t n) {
    const uint64_t total = __atomic_add_fetch(&j->bytes, n, __ATOMIC_RELAXED);
    if (!j->lim->max_bytes || total <= j->lim->max_bytes) return true;
    char why[160];
    snprintf(why, sizeof why,
             "the mesh would hold more than the %llu bytes left in the memory budget "
             "(limits.max_bytes)",
             (unsigned long long)j->lim->max_bytes);
    tile_fail(j, o, PF_ENOMEM, why);
    return false;
}

/* A grid's walkable cells into the tile's heightfield: a cell is a floor
 * square at height 0; a voxel column is floor when its centre is in a
 * walkable cell. The span [0, 1) ends at y = bmin.y + ch = 0. */
bool rasterize_grid(BuildJob *j, TileOut *o, rcContext *ctx, RasterScratch *sc) {
    const float cs = j->b->cfg.cell_size;
    const pf_grid *g = j->in->grid;
    const int32_t gw = pf_grid_width(g), gh = pf_grid_height(g);
    const rcHeightfield *hf = sc->hf;
    for (int vz = 0; vz < hf->height; vz++) {
        float wz = hf->bmin[2] + ((float)vz + 0.5f) * cs;
        int32_t cy = (int32_t)floorf(wz);
        if (wz < 0 || cy >= gh) continue;
        for (int vx = 0; vx < hf->width; vx++) {
            float wx = hf->bmin[0] + ((float)vx + 0.5f) * cs;
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

/* The voxel columns triangle t's x/z bounds cover in hf, clamped; false
 * when it covers none. */
bool tri_columns(const pf_nav_geom *g, uint32_t t, const rcHeightfield *hf, int *x0, int *x1,
                 int *z0, int *z1) {
    const uint32_t *tri = &g->tris[3 * (size_t)t];
    float lx = FLT_MAX, hx = -FLT_MAX, lz = FLT_MAX, hz = -FLT_MAX;
    for (int k = 0; k < 3; k++) {
        const float *v = &g->verts[3 * (size_t)tri[k]];
        lx = fminf(lx, v[0]);
        hx = fmaxf(hx, v[0]);
        lz = fminf(lz, v[2]);
        hz = fmaxf(hz, v[2]);
    }
    *x0 = (int)floorf((lx - hf->bmin[0]) / hf->cs);
    *x1 = (int)floorf((hx - hf->bmin[0]) / hf->cs);
    *z0 = (int)floorf((lz - hf->bmin[2]) / hf->cs);
    *z1 = (int)floorf((hz - hf->bmin[2]) / hf->cs);
    if (*x1 < 0 || *z1 < 0 || *x0 >= hf->width || *z0 >= hf->height) return false;
    if (*x0 < 0) *x0 = 0;
    if (*z0 < 0) *z0 = 0;
    if (*x1 >= hf->width) *x1 = hf->width - 1;
    if (*z1 >= hf->height) *z1 = hf->height - 1;
    return true;
}

/* Bounds every column's span count before voxelising: the triangles whose
 * x/z bounds cover it. */
bool check_columns(BuildJob *j, TileOut *o, RasterScratch *sc, uint32_t ti) {
    const rcHeightfield *hf = sc->hf;
    const uint32_t first = j->tile_first[ti], n = j->tile_first[ti + 1] - first;
    const uint32_t lim = 4 * j->lim->max_column_spans;
    sc->depth = (uint16_t *)calloc((size_t)hf->width * (size_t)hf->height, sizeof(uint16_t));
    if (!sc->depth) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (columns)");
        return false;
    }
    for (uint32_t k = 0; k < n; k++) {
        int x0, x1, z0, z1;
        if (!tri_columns(j->in->geom, j->tile_tris[first + k], hf, &x0, &x1, &z0, &z1)) continue;
        for (int z = z0; z <= z1; z++)
            for (int x = x0; x <= x1; x++) {
                uint16_t *d = &sc->depth[x + z * hf->width];
                if (*d < 65535) (*d)++;
                if (*d <= lim) continue;
                char why[160];
                snprintf(why, sizeof why,
                         "tile (%d, %d): more than %u triangles stack over one voxel column (at "
                         "%.2f, %.2f), past 4 x limits.max_column_spans",
                         (int)(ti % (uint32_t)j->b->tw), (int)(ti / (uint32_t)j->b->tw), lim,
                         (double)(hf->bmin[0] + ((float)x + 0.5f) * hf->cs),
                         (double)(hf->bmin[2] + ((float)z + 0.5f) * hf->cs));
                tile_fail(j, o, PF_ELIMIT, why);
                return false;
            }
    }
    free(sc->depth);
    sc->depth = nullptr;
    return true;
}

/* The tile's triangles into its heightfield, each with its slope class as
 * its area (the types it is flat enough for), merged within the default
 * type's climb as Recast merges. The deadline is checked every 64
 * triangles or 32768 voxel columns covered. */
bool rasterize_geom(BuildJob *j, TileOut *o, rcContext *ctx, RasterScratch *sc, uint32_t ti) {
    const NavBase *b = j->b;
    const pf_nav_geom *geom = j->in->geom;
    const uint32_t first = j->tile_first[ti], n = j->tile_first[ti + 1] - first;
    const float *v = geom->verts;
    uint64_t work = 0;
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t t = j->tile_tris[first + k];
        const uint32_t *tri = &geom->tris[3 * (size_t)t];
        if (!rcRasterizeTriangle(ctx, &v[3 * (size_t)tri[0]], &v[3 * (size_t)tri[1]],
                                 &v[3 * (size_t)tri[2]], j->tri_class[t], *sc->hf,
                                 b->agents[0].walkable_climb)) {
            tile_fail(j, o, PF_ENOMEM, "out of memory (rasterising)");
            return false;
        }
        int x0, x1, z0, z1;
        if (tri_columns(geom, t, sc->hf, &x0, &x1, &z0, &z1))
            work += (uint64_t)(x1 - x0 + 1) * (uint64_t)(z1 - z0 + 1);
        if (((k & 63) == 63 || work > 32768) && job_abort_check(j, o)) return false;
        if (work > 32768) work = 0;
    }
    return true;
}

/* The spans' areas in column order into sc->saved; their count. Stops the
 * build when a column holds more than limits.max_column_spans. */
bool save_areas(BuildJob *j, TileOut *o, RasterScratch *sc, size_t *nspans) {
    const rcHeightfield *hf = sc->hf;
    size_t n = 0;
    for (int c = 0; c < hf->width * hf->height; c++) {
        uint32_t depth = 0;
        for (const rcSpan *s = hf->spans[c]; s; s = s->next) depth++;
        n += depth;
        if (depth <= j->lim->max_column_spans) continue;
        char why[160];
        snprintf(why, sizeof why,
                 "tile (%d, %d): a voxel column (at %.2f, %.2f) stacks %u spans, more than "
                 "limits.max_column_spans",
                 (int)((size_t)(o - j->out) % (size_t)j->b->tw),
                 (int)((size_t)(o - j->out) / (size_t)j->b->tw),
                 (double)(hf->bmin[0] + ((float)(c % hf->width) + 0.5f) * hf->cs),
                 (double)(hf->bmin[2] + ((float)(c / hf->width) + 0.5f) * hf->cs), depth);
        tile_fail(j, o, PF_ELIMIT, why);
        return false;
    }
    sc->saved = (unsigned char *)malloc(n ? n : 1);
    if (!sc->saved) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (spans)");
        return false;
    }
    n = 0;
    for (int c = 0; c < hf->width * hf->height; c++)
        for (const rcSpan *s = hf->spans[c]; s; s = s->next)
            sc->saved[n++] = (unsigned char)s->area;
    *nspans = n;
    return true;
}

/* The spans' areas as type at sees them: a triangle's slope class becomes
 * plain ground when the type may walk it, else nothing; a grid's area ids
 * stay. */
void restore_areas(const BuildJob *j, RasterScratch *sc, const AgentType *at) {
    rcHeightfield *hf = sc->hf;
    const bool grid = j->in->grid != NULL;
    size_t n = 0;
    for (int c = 0; c < hf->width * hf->height; c++)
        for (rcSpan *s = hf->spans[c]; s; s = s->next) {
            const unsigned char a = sc->saved[n++];
            s->area = grid ? a : (a >= at->min_class ? AREA_GROUND : RC_NULL_AREA);
        }
}

/* The tile's voxels within type at's own border (a narrower type than the
 * widest): the spans of the inner columns into a heightfield of the bounds
 * Sample_TileMesh would give that type. Columns keep their spans (never
 * touching: rcAddSpan merged those), so re-adding them merges nothing. */
rcHeightfield *crop(const NavBase *b, const rcHeightfield *hf, const AgentType *at, int tx, int ty,
                    rcContext *ctx) {
    const int m = b->border - at->border, w = hf->width - 2 * m, h = hf->height - 2 * m;
    const float cs = b->cfg.cell_size, tcs = (float)b->ts * cs, pad = (float)at->border * cs;
    float bmin[3], bmax[3];
    bmin[0] = b->bmin[0] + (float)tx * tcs - pad;
    bmin[1] = hf->bmin[1];
    bmin[2] = b->bmin[2] + (float)ty * tcs - pad;
    bmax[0] = b->bmin[0] + (float)(tx + 1) * tcs + pad;
    bmax[1] = hf->bmax[1];
    bmax[2] = b->bmin[2] + (float)(ty + 1) * tcs + pad;
    rcHeightfield *out = rcAllocHeightfield();
    if (!out || !rcCreateHeightfield(ctx, *out, w, h, bmin, bmax, cs, hf->ch)) goto out_free;
    for (int z = 0; z < h; z++)
        for (int x = 0; x < w; x++)
            for (const rcSpan *s = hf->spans[(x + m) + (z + m) * hf->width]; s; s = s->next)
                if (!rcAddSpan(ctx, *out, x, z, (unsigned short)s->smin, (unsigned short)s->smax,
                               (unsigned char)s->area, 0))
                    goto out_free;
    return out;
out_free:
    rcFreeHeightField(out);
    return NULL;
}

/* build_type over heightfield hf (the tile's, or cropped for the type). */
bool build_type_on(BuildJob *j, TileOut *o, RasterScratch *sc, rcHeightfield *hf, uint32_t t,
                   int tx, int ty) {
    NavBase *b = j->b;
    const AgentType *at = &b->agents[t];
    rcContext ctx(false);
    if (!j->in->grid) {
        /* Overhangs, ledges and low ceilings (the sample's three filters). */
        rcFilterLowHangingWalkableObstacles(&ctx, at->walkable_climb, *hf);
        rcFilterLedgeSpans(&ctx, at->walkable_height, at->walkable_climb, *hf);
        rcFilterWalkableLowHeightSpans(&ctx, at->walkable_height, *hf);
    }
    if (job_abort_check(j, o)) return false;
    rcFreeCompactHeightfield(sc->chf);
    sc->chf = rcAllocCompactHeightfield();
    if (!sc->chf ||
        !rcBuildCompactHeightfield(&ctx, at->walkable_height, at->walkable_climb, *hf, *sc->chf)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (compact heightfield)");
        return false;
    }
    if (at->walkable_radius > 0 && !rcErodeWalkableArea(&ctx, at->walkable_radius, *sc->chf)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (erosion)");
        return false;
    }
    mark_area_boxes(b, *sc->chf);
    if (sc->chf->spanCount == 0) return true;
    if (!kept_store(*sc->chf, &o->kept[t])) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (kept voxels)");
        return false;
    }
    if (!charge(j, o, o->kept[t].size)) return false;
    if (job_abort_check(j, o)) return false;
    char why[120];
    why[0] = '\0';
    dtStatus st = tile_mesh(b, at, tx, ty, *sc->chf, j->vs, &o->nav[t], &o->nav_size[t],
                            &o->npolys[t], why, sizeof why);
    if (dtStatusFailed(st)) {
        char msg[160];
        const bool mem = dtStatusDetail(st, DT_OUT_OF_MEMORY);
        snprintf(msg, sizeof msg, "tile (%d, %d), agent type '%.40s': %.90s", tx, ty, at->name,
                 mem ? "out of memory" : why);
        tile_fail(j, o, mem ? PF_ENOMEM : PF_ELIMIT, msg);
        return false;
    }
    return charge(j, o, (uint64_t)o->nav_size[t]);
}

/* One agent type from the tile's voxels: filters, compact heightfield,
 * erosion, areas; kept; its Detour tile. */
bool build_type(BuildJob *j, TileOut *o, RasterScratch *sc, uint32_t t, int tx, int ty) {
    NavBase *b = j->b;
    const AgentType *at = &b->agents[t];
    rcContext ctx(false);
    restore_areas(j, sc, at);
    rcHeightfield *own = NULL;
    if (at->border < b->border && !(own = crop(b, sc->hf, at, tx, ty, &ctx))) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (heightfield)");
        return false;
    }
    const bool ok = build_type_on(j, o, sc, own ? own : sc->hf, t, tx, ty);
    rcFreeHeightField(own);
    return ok;
}

} /* namespace */

void tile_out_free(TileOut *t, uint32_t nagents) {
    for (uint32_t i = 0; t->nav && i < nagents; i++) {
        dtFree(t->nav[i]);
        t->nav[i] = NULL;
    }
    for (uint32_t i = 0; t->kept && i < nagents; i++) {
        free(t->kept[i].data);
        t->kept[i].data = NULL;
    }
}

void build_tile_task(void *arg, uint32_t ti) {
    BuildJob *j = (BuildJob *)arg;
    NavBase *b = j->b;
    TileOut *o = &j->out[ti];
    if (job_abort_check(j, o)) return;
    const int tx = (int)(ti % (uint32_t)b->tw), ty = (int)(ti / (uint32_t)b->tw);
    const float cs = b->cfg.cell_size;
    rcContext ctx(false);
    RasterScratch sc;
    uint64_t c0 = thread_cpu_us();
    if (j->in->geom && j->tile_first[ti + 1] == j->tile_first[ti]) return; /* nothing here */

    float tbmin[3], tbmax[3];
    int w, h;
    if (b->solo) {
        dtVcopy(tbmin, b->bmin);
        dtVcopy(tbmax, b->bmax);
        w = b->gw;
        h = b->gh;
    } else {
        const float tcs = (float)b->ts * cs, pad = (float)b->border * cs;
        tbmin[0] = b->bmin[0] + (float)tx * tcs - pad;
        tbmin[1] = b->bmin[1];
        tbmin[2] = b->bmin[2] + (float)ty * tcs - pad;
        tbmax[0] = b->bmin[0] + (float)(tx + 1) * tcs + pad;
        tbmax[1] = b->bmax[1];
        tbmax[2] = b->bmin[2] + (float)(ty + 1) * tcs + pad;
        w = h = b->ts + 2 * b->border;
    }
    sc.hf = rcAllocHeightfield();
    if (!sc.hf || !rcCreateHeightfield(&ctx, *sc.hf, w, h, tbmin, tbmax, cs, b->cfg.cell_height)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (heightfield)");
        return;
    }
    if (j->in->grid) {
        if (!rasterize_grid(j, o, &ctx, &sc)) return;
    } else {
        if (!check_columns(j, o, &sc, ti) || !rasterize_geom(j, o, &ctx, &sc, ti)) return;
    }
    size_t nspans = 0;
    if (job_abort_check(j, o) || !save_areas(j, o, &sc, &nspans)) return;
    o->cpu_us[b->nagents] = thread_cpu_us() - c0;
    if (nspans == 0) return;
    for (uint32_t t = 0; t < b->nagents; t++) {
        c0 = thread_cpu_us();
        if (!build_type(j, o, &sc, t, tx, ty)) return;
        o->cpu_us[t] = thread_cpu_us() - c0;
    }
}

} /* namespace pfnav */
