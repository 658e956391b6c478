/* tilemesh.cpp -- a Detour tile from one tile's compact heightfield for one
 * agent type (navmesh.h's step 3), as Sample_TileMesh::buildTileMesh does
 * after erosion: the obstacles marked (not walkable), regions by the
 * build's partition, contours, polygons, the detail mesh, and
 * dtCreateNavMeshData with the off-mesh links that start in the tile. What
 * a build does once per tile and type, and a change repeats for the tiles
 * it touches.
 */
#include "nav_internal.h"

namespace pfnav {

namespace {

/* Recast's context with the last error or warning it logged kept: what a
 * failed step says (too many vertices, bad contours, out of memory). */
struct LogContext : public rcContext {
    char last[120];
    LogContext() : rcContext(true) {
        last[0] = '\0';
        enableTimer(false);
    }

  protected:
    void doLog(const rcLogCategory cat, const char *msg, const int len) override {
        if (cat == RC_LOG_PROGRESS) return;
        snprintf(last, sizeof last, "%.*s", len, msg);
    }
};

/* Frees what a tile mesh build allocated, whatever step it stopped at. */
struct MeshScratch {
    rcContourSet *cset = nullptr;
    rcPolyMesh *pmesh = nullptr;
    rcPolyMeshDetail *dmesh = nullptr;
    ~MeshScratch() {
        rcFreeContourSet(cset);
        rcFreePolyMesh(pmesh);
        rcFreePolyMeshDetail(dmesh);
    }
};

/* The obstacles overlapping chf marked not walkable, grown by the radius. */
void mark_obstacles(const NavBase *b, const AgentType *at, const TileState *vs,
                    rcCompactHeightfield &chf, rcContext *ctx) {
    const float r = at->radius;
    for (uint32_t i = 0; i < vs->nobs; i++) {
        float omin[3], omax[3];
        const pf_nav_obstacle *o = &vs->obs[i];
        obstacle_bounds(b, at, o, omin, omax);
        if (omax[0] < chf.bmin[0] || omin[0] > chf.bmax[0] || omax[2] < chf.bmin[2] ||
            omin[2] > chf.bmax[2])
            continue;
        if (o->shape == PF_NAV_CYLINDER) {
            rcMarkCylinderArea(ctx, o->pos, o->radius + r, o->height, RC_NULL_AREA, chf);
        } else {
            float bmin[3] = {o->bmin[0] - r, o->bmin[1], o->bmin[2] - r};
            float bmax[3] = {o->bmax[0] + r, o->bmax[1], o->bmax[2] + r};
            rcMarkBoxArea(ctx, bmin, bmax, RC_NULL_AREA, chf);
        }
    }
}

/* Regions by the build's partition (Sample_TileMesh's three), the type's
 * border excluded. */
bool partition(const NavBase *b, const AgentType *at, rcCompactHeightfield &chf, rcContext *ctx) {
    const pf_nav_config *c = &b->cfg;
    const int min_area = c->region_min_size * c->region_min_size;
    const int merge_area = c->region_merge_size * c->region_merge_size;
    switch (c->partition) {
    case PF_NAV_MONOTONE:
        return rcBuildRegionsMonotone(ctx, chf, at->border, min_area, merge_area);
    case PF_NAV_LAYERS:
        return rcBuildLayerRegions(ctx, chf, at->border, min_area);
    default:
        return rcBuildDistanceField(ctx, chf) &&
               rcBuildRegions(ctx, chf, at->border, min_area, merge_area);
    }
}

/* The links starting in tile (tx, ty), as dtNavMeshCreateParams wants
 * them, into arrays of n entries; returns how many. */
int tile_links(const NavBase *b, int tx, int ty, const TileState *vs, const float *pbmin,
               const float *pbmax, float *verts, float *rad, unsigned char *dir,
               unsigned char *area, unsigned short *flags, unsigned int *uid) {
    int n = 0;
    const int ti = tx + ty * b->tw;
    for (uint32_t i = 0; i < vs->nlinks; i++) {
        const pf_nav_link *l = &vs->links[i];
        if (link_tile(b, l) != ti) continue;
        float *v = &verts[6 * n];
        dtVcopy(v, l->start);
        dtVcopy(v + 3, l->end);
        /* Detour files a link by its start in [bmin, bmax) of the tile's
         * polygon bounds; keep it in by a hair should rounding put it on
         * the far edge. */
        for (int k = 0; k <= 2; k += 2) {
            if (v[k] < pbmin[k]) v[k] = pbmin[k];
            if (v[k] >= pbmax[k]) v[k] = nextafterf(pbmax[k], -FLT_MAX);
        }
        rad[n] = l->radius;
        dir[n] = l->bidir ? DT_OFFMESH_CON_BIDIR : 0;
        area[n] = vs->link_area[i];
        flags[n] =
            l->enabled && vs->area_enabled[vs->link_area[i] & 63] ? FLAG_WALK : FLAG_DISABLED;
        uid[n] = i + 1;
        n++;
    }
    return n;
}

/* dtCreateNavMeshData over the polygon and detail meshes, with the tile's
 * links and each polygon's flags from its area's state. */
dtStatus make_tile_data(const NavBase *b, const AgentType *at, int tx, int ty, MeshScratch *sc,
                        const TileState *vs, unsigned char **data, int *size) {
    rcPolyMesh *pm = sc->pmesh;
    for (int i = 0; i < pm->npolys; i++)
        pm->flags[i] = vs->area_enabled[pm->areas[i] & 63] ? FLAG_WALK : FLAG_DISABLED;
    uint32_t nl = 0;
    for (uint32_t i = 0; i < vs->nlinks; i++) nl += link_tile(b, &vs->links[i]) == tx + ty * b->tw;
    float *lverts = NULL, *lrad = NULL;
    unsigned char *ldir = NULL, *larea = NULL;
    unsigned short *lflags = NULL;
    unsigned int *luid = NULL;
    dtStatus st = DT_FAILURE | DT_OUT_OF_MEMORY;
    if (nl) {
        lverts = (float *)malloc(nl * 6 * sizeof(float));
        lrad = (float *)malloc(nl * sizeof(float));
        ldir = (unsigned char *)malloc(nl);
        larea = (unsigned char *)malloc(nl);
        lflags = (unsigned short *)malloc(nl * sizeof(unsigned short));
        luid = (unsigned int *)malloc(nl * sizeof(unsigned int));
        if (!lverts || !lrad || !ldir || !larea || !lflags || !luid) goto out_free;
        nl = (uint32_t)tile_links(b, tx, ty, vs, pm->bmin, pm->bmax, lverts, lrad, ldir, larea,
                                  lflags, luid);
    }
    {
        dtNavMeshCreateParams p;
        memset(&p, 0, sizeof p);
        p.verts = pm->verts;
        p.vertCount = pm->nverts;
        p.polys = pm->polys;
        p.polyAreas = pm->areas;
        p.polyFlags = pm->flags;
        p.polyCount = pm->npolys;
        p.nvp = pm->nvp;
        p.detailMeshes = sc->dmesh->meshes;
        p.detailVerts = sc->dmesh->verts;
        p.detailVertsCount = sc->dmesh->nverts;
        p.detailTris = sc->dmesh->tris;
        p.detailTriCount = sc->dmesh->ntris;
        p.offMeshConVerts = lverts;
        p.offMeshConRad = lrad;
        p.offMeshConDir = ldir;
        p.offMeshConAreas = larea;
        p.offMeshConFlags = lflags;
        p.offMeshConUserID = luid;
        p.offMeshConCount = (int)nl;
        p.walkableHeight = at->height;
        p.walkableRadius = at->radius;
        p.walkableClimb = at->climb;
        p.tileX = tx;
        p.tileY = ty;
        p.tileLayer = 0;
        dtVcopy(p.bmin, pm->bmin);
        dtVcopy(p.bmax, pm->bmax);
        p.cs = b->cfg.cell_size;
        p.ch = b->cfg.cell_height;
        p.buildBvTree = true;
        if (!dtCreateNavMeshData(&p, data, size)) goto out_free;
        *data = widen_links(*data, size, b->cfg.cell_size);
        st = *data ? DT_SUCCESS : (DT_FAILURE | DT_OUT_OF_MEMORY);
    }
out_free:
    free(lverts);
    free(lrad);
    free(ldir);
    free(larea);
    free(lflags);
    free(luid);
    return st;
}

dtStatus fail(LogContext *ctx, char *why, size_t why_len, const char *step, dtStatus st) {
    snprintf(why, why_len, "%.20s failed%s%.90s", step, ctx->last[0] ? ": " : "", ctx->last);
    return st;
}

} /* namespace */

void obstacle_bounds(const NavBase *b, const AgentType *at, const pf_nav_obstacle *o, float bmin[3],
                     float bmax[3]) {
    float r = at->radius + b->cfg.cell_size;
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

dtStatus tile_mesh(const NavBase *b, const AgentType *at, int tx, int ty, rcCompactHeightfield &chf,
                   const TileState *vs, unsigned char **data, int *size, int *npolys, char *why,
                   size_t why_len) {
    *data = NULL;
    *size = 0;
    *npolys = 0;
    LogContext ctx;
    MeshScratch sc;
    const pf_nav_config *c = &b->cfg;
    mark_obstacles(b, at, vs, chf, &ctx);
    if (!partition(b, at, chf, &ctx)) return fail(&ctx, why, why_len, "regions", DT_FAILURE);
    sc.cset = rcAllocContourSet();
    if (!sc.cset) return DT_FAILURE | DT_OUT_OF_MEMORY;
    if (!rcBuildContours(&ctx, chf, c->edge_max_error, (int)(c->edge_max_len / c->cell_size),
                         *sc.cset))
        return fail(&ctx, why, why_len, "contours", DT_FAILURE);
    if (sc.cset->nconts == 0) return DT_SUCCESS;
    sc.pmesh = rcAllocPolyMesh();
    if (!sc.pmesh) return DT_FAILURE | DT_OUT_OF_MEMORY;
    if (!rcBuildPolyMesh(&ctx, *sc.cset, c->verts_per_poly, *sc.pmesh))
        return fail(&ctx, why, why_len, "polygons", DT_FAILURE | DT_BUFFER_TOO_SMALL);
    sc.dmesh = rcAllocPolyMeshDetail();
    if (!sc.dmesh) return DT_FAILURE | DT_OUT_OF_MEMORY;
    const float sample_dist =
        c->detail_sample_dist < 0.9f ? 0 : c->cell_size * c->detail_sample_dist;
    if (!rcBuildPolyMeshDetail(&ctx, *sc.pmesh, chf, sample_dist,
                               c->cell_height * c->detail_sample_max_error, *sc.dmesh))
        return fail(&ctx, why, why_len, "detail mesh", DT_FAILURE);
    if (sc.pmesh->npolys == 0) return DT_SUCCESS;
    if (sc.pmesh->nverts >= 0xffff) {
        snprintf(why, why_len, "the tile has %d vertices, more than Detour's 65534",
                 sc.pmesh->nverts);
        return DT_FAILURE | DT_BUFFER_TOO_SMALL;
    }
    dtStatus st = make_tile_data(b, at, tx, ty, &sc, vs, data, size);
    if (dtStatusFailed(st)) return st;
    *npolys = ((const dtMeshHeader *)*data)->polyCount; /* links included */
    return DT_SUCCESS;
}

} /* namespace pfnav */
