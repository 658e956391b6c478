/* build.cpp -- pf_nav_build: the input checked, the world's bounds and
 * tiles, triangles binned by tile, the tile tasks run (build_tile.cpp), and
 * their layers and Detour tiles assembled into the build's tile cache and
 * its first version.
 */
#include "nav_internal.h"

using namespace pfnav;

namespace {

pf_status check_config(const pf_nav_config *c, pf_nav_error *err) {
#define RANGE(v, lo, hi, name)                                                                     \
    if (!(isfinite(v) && (v) >= (lo) && (v) <= (hi))) {                                            \
        set_err(err, name, "%s must be a number in [%g, %g]", name, (double)(lo), (double)(hi));   \
        return PF_EINVAL;                                                                          \
    }
    RANGE(c->cell_size, 0.01f, 10.0f, "cell_size");
    RANGE(c->cell_height, 0.01f, 10.0f, "cell_height");
    RANGE(c->agent_radius, 0.0f, 50.0f, "agent.radius");
    RANGE(c->agent_height, c->cell_height, 100.0f, "agent.height");
    RANGE(c->agent_max_climb, 0.0f, 100.0f, "agent.max_climb");
    RANGE(c->agent_max_slope, 0.0f, 89.0f, "agent.max_slope");
    RANGE(c->edge_max_error, 0.1f, 3.0f, "edge_max_error");
#undef RANGE
    if (c->tile_size < 16 || c->tile_size > 240) {
        set_err(err, "tile_size", "tile_size must be an integer in [16, 240] voxels");
        return PF_EINVAL;
    }
    /* Layers are at most 255 voxels wide, border included. */
    int border = (int)ceilf(c->agent_radius / c->cell_size) + 3;
    if (c->tile_size + 2 * border > 255) {
        set_err(err, "tile_size",
                "tile_size + 2 x (agent.radius / cell_size + 3) must be at most 255 voxels");
        return PF_EINVAL;
    }
    if (c->agent_height / c->cell_height > 255.0f) {
        set_err(err, "agent.height", "agent.height / cell_height must be at most 255 voxels");
        return PF_EINVAL;
    }
    return PF_OK;
}

/* Recast walks the faces whose normal (v1 - v0) x (v2 - v0) points up:
 * counter-clockwise seen from above. A model with none of those but faces
 * pointing down is wound the other way round: say so rather than build an
 * empty mesh. */
pf_status check_winding(const pf_nav_geom *g, pf_nav_error *err) {
    uint32_t up = 0, down = 0;
    for (uint32_t t = 0; t < g->ntris; t++) {
        const uint32_t *tri = &g->tris[3 * (size_t)t];
        const float *a = &g->verts[3 * (size_t)tri[0]], *b1 = &g->verts[3 * (size_t)tri[1]],
                    *c = &g->verts[3 * (size_t)tri[2]];
        float e0[3] = {b1[0] - a[0], b1[1] - a[1], b1[2] - a[2]};
        float e1[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float ny = e0[2] * e1[0] - e0[0] * e1[2];
        if (ny > 0) up++;
        if (ny < 0) down++;
    }
    if (up == 0 && down == 0) {
        set_err(err, "obj", "every one of the %u triangles has zero area", g->ntris);
        return PF_EINVAL;
    }
    if (up == 0) {
        set_err(err, "obj",
                "no face points up (+y): %u of %u triangles point down. Walkable faces "
                "must wind counter-clockwise seen from above (y is up)",
                down, g->ntris);
        return PF_EINVAL;
    }
    return PF_OK;
}

/* The geometry checked against the limits, and its bounds with room above
 * the highest floor for the agent. */
pf_status geom_bounds(const pf_nav_geom *g, const pf_nav_config *cfg, const pf_nav_limits *lim,
                      float bmin[3], float bmax[3], pf_nav_error *err) {
    if (g->ntris == 0 || !g->verts || !g->tris) {
        set_err(err, "obj", "the geometry has no triangles");
        return PF_EINVAL;
    }
    if (g->nverts > lim->max_vertices) {
        set_err(err, "limits.max_vertices", "%u vertices, more than %u", g->nverts,
                lim->max_vertices);
        return PF_ELIMIT;
    }
    if (g->ntris > lim->max_triangles) {
        set_err(err, "limits.max_triangles", "%u triangles, more than %u", g->ntris,
                lim->max_triangles);
        return PF_ELIMIT;
    }
    for (int k = 0; k < 3; k++) {
        bmin[k] = FLT_MAX;
        bmax[k] = -FLT_MAX;
    }
    for (uint32_t i = 0; i < 3 * g->ntris; i++) {
        uint32_t vi = g->tris[i];
        if (vi >= g->nverts) {
            set_err(err, "obj", "triangle %u uses vertex %u of %u", i / 3, vi, g->nverts);
            return PF_EINVAL;
        }
        const float *v = &g->verts[3 * (size_t)vi];
        if (!finite3(v)) {
            set_err(err, "obj", "vertex %u is not finite", vi);
            return PF_EINVAL;
        }
        for (int k = 0; k < 3; k++) {
            if (v[k] < bmin[k]) bmin[k] = v[k];
            if (v[k] > bmax[k]) bmax[k] = v[k];
        }
    }
    pf_status st = check_winding(g, err);
    if (st) return st;
    bmax[1] += cfg->agent_height;
    const float ch = cfg->cell_height;
    if ((bmax[1] - bmin[1]) / ch > (float)RC_SPAN_MAX_HEIGHT) {
        set_err(err, "cell_height",
                "the geometry is %g high: more than %d voxels of cell_height %g",
                (double)(bmax[1] - bmin[1]), RC_SPAN_MAX_HEIGHT, (double)ch);
        return PF_EINVAL;
    }
    return PF_OK;
}

/* The input checked; the world's bounds. */
pf_status check_input(const pf_nav_build_input *in, const pf_nav_limits *lim, float bmin[3],
                      float bmax[3], pf_nav_error *err) {
    if (!in || (!in->geom) == (!in->grid)) {
        set_err(err, "kind", "a navmesh is built from geometry or from a grid, exactly one");
        return PF_EINVAL;
    }
    pf_status st = check_config(&in->config, err);
    if (st) return st;
    if (in->grid && pf_grid_has_walls(in->grid)) {
        set_err(err, "from_grid.walls",
                "grids with wall edges cannot be converted to a navmesh (walls have no width)");
        return PF_EUNSUPPORTED;
    }
    const pf_nav_config *cfg = &in->config;
    if (in->geom) return geom_bounds(in->geom, cfg, lim, bmin, bmax, err);
    bmin[0] = 0;
    bmin[1] = -cfg->cell_height;
    bmin[2] = 0;
    bmax[0] = (float)pf_grid_width(in->grid);
    bmax[1] = cfg->agent_height;
    bmax[2] = (float)pf_grid_height(in->grid);
    return PF_OK;
}

/* A new build over bounds bmin..bmax of gw x gh voxels: its constants. */
NavBase *base_create(const pf_nav_build_input *in, const float bmin[3], const float bmax[3], int gw,
                     int gh) {
    const pf_nav_config *cfg = &in->config;
    const float cs = cfg->cell_size, ch = cfg->cell_height;
    const int ts = cfg->tile_size;
    void *bmem = calloc(1, sizeof(NavBase));
    if (!bmem) return NULL;
    NavBase *b = new (bmem) NavBase();
    b->refs = 1;
    b->cfg = *cfg;
    b->walkable_height = (int)ceilf(cfg->agent_height / ch);
    b->walkable_climb = (int)floorf(cfg->agent_max_climb / ch);
    b->walkable_radius = (int)ceilf(cfg->agent_radius / cs);
    b->border = b->walkable_radius + 3;
    dtVcopy(b->bmin, bmin);
    dtVcopy(b->bmax, bmax);
    b->gw = gw;
    b->gh = gh;
    b->tw = (gw + ts - 1) / ts;
    b->th = (gh + ts - 1) / ts;
    b->tile_world = (float)ts * cs;
    b->from_grid = in->grid != NULL;
    b->grid_w = in->grid ? pf_grid_width(in->grid) : 0;
    b->grid_h = in->grid ? pf_grid_height(in->grid) : 0;
    b->exact = gw < (1 << 22) - 2 && gh < (1 << 22) - 2;
    return b;
}

/* Triangles by tile, each triangle in every tile (with its border) its x/z
 * bounds overlap. Counted first, so the total is checked before the lists
 * are allocated. */
pf_status bin_triangles(const NavBase *b, const pf_nav_geom *g, const pf_nav_limits *lim,
                        uint32_t **first_out, uint32_t **tris_out, pf_nav_error *err) {
    const uint32_t ntiles = (uint32_t)(b->tw * b->th);
    uint32_t *tile_first = (uint32_t *)calloc((size_t)ntiles + 1, sizeof(uint32_t));
    uint32_t *tile_tris = NULL;
    if (!tile_first) goto out_nomem;
    {
        const float bw = (float)b->border * b->cfg.cell_size;
        uint64_t total = 0;
        const uint64_t cap = 8ull * lim->max_triangles + ntiles;
        for (int pass = 0; pass < 2; pass++) {
            for (uint32_t t = 0; t < g->ntris; t++) {
                const uint32_t *tri = &g->tris[3 * (size_t)t];
                float x0 = FLT_MAX, x1 = -FLT_MAX, z0 = FLT_MAX, z1 = -FLT_MAX;
                for (int k = 0; k < 3; k++) {
                    const float *v = &g->verts[3 * (size_t)tri[k]];
                    x0 = fminf(x0, v[0]);
                    x1 = fmaxf(x1, v[0]);
                    z0 = fminf(z0, v[2]);
                    z1 = fmaxf(z1, v[2]);
                }
                int tx0 = (int)floorf((x0 - bw - b->bmin[0]) / b->tile_world);
                int tx1 = (int)floorf((x1 + bw - b->bmin[0]) / b->tile_world);
                int tz0 = (int)floorf((z0 - bw - b->bmin[2]) / b->tile_world);
                int tz1 = (int)floorf((z1 + bw - b->bmin[2]) / b->tile_world);
                if (tx0 < 0) tx0 = 0;
                if (tz0 < 0) tz0 = 0;
                if (tx1 >= b->tw) tx1 = b->tw - 1;
                if (tz1 >= b->th) tz1 = b->th - 1;
                for (int tz = tz0; tz <= tz1; tz++)
                    for (int tx = tx0; tx <= tx1; tx++) {
                        uint32_t ti = (uint32_t)(tx + tz * b->tw);
                        if (pass == 0) {
                            tile_first[ti + 1]++;
                            total++;
                        } else {
                            tile_tris[tile_first[ti]++] = t;
                        }
                    }
                if (pass == 0 && total > cap) {
                    set_err(err, "obj",
                            "the triangles overlap tiles %llu times in all, more than %llu (8 per "
                            "triangle allowed): use a larger tile_size or smaller triangles",
                            (unsigned long long)total, (unsigned long long)cap);
                    free(tile_first);
                    return PF_ELIMIT;
                }
            }
            if (pass == 0) {
                for (uint32_t i = 0; i < ntiles; i++) tile_first[i + 1] += tile_first[i];
                tile_tris = (uint32_t *)malloc((size_t)(total ? total : 1) * sizeof(uint32_t));
                if (!tile_tris) goto out_nomem;
            }
        }
    }
    /* The fill advanced each start to the next tile's; shift back. */
    for (uint32_t i = ntiles; i > 0; i--) tile_first[i] = tile_first[i - 1];
    tile_first[0] = 0;
    *first_out = tile_first;
    *tris_out = tile_tris;
    return PF_OK;
out_nomem:
    free(tile_first);
    set_err(err, "", "out of memory");
    return PF_ENOMEM;
}

/* The tile tasks' outcome: the first failure, or a build out of time. */
pf_status tiles_outcome(const pf_nav_build_input *in, const pf_nav_limits *lim, BuildJob *job,
                        uint32_t ntiles, pf_nav_error *err) {
    const TileOut *outs = job->out;
    for (uint32_t i = 0; i < ntiles; i++) {
        if (outs[i].st != PF_OK && outs[i].st != PF_ECANCELED) {
            pf_status st = outs[i].st;
            const char *field = st == PF_ELIMIT && strstr(outs[i].why, "build_ms")
                                    ? "limits.build_ms"
                                : strstr(outs[i].why, "tile_size") ? "tile_size"
                                : in->grid                         ? "from_grid"
                                                                   : "obj";
            set_err(err, field, "%s", outs[i].why);
            return st;
        }
    }
    if (__atomic_load_n(&job->aborted, __ATOMIC_RELAXED)) {
        set_err(err, "limits.build_ms", "the build took longer than limits.build_ms (%u ms)",
                lim->build_ms);
        return PF_ELIMIT;
    }
    return PF_OK;
}

/* The reference bit budget: as many tile bits as there are layers, the rest
 * for polygons, which every tile's count must fit. Sets the base's layer
 * count and its Detour mesh parameters. */
pf_status plan_refs(NavBase *b, const TileOut *outs, uint32_t ntiles, uint32_t max_tiles,
                    pf_nav_error *err) {
    uint32_t nlayers = 0, max_polys = 0;
    for (uint32_t i = 0; i < ntiles; i++) {
        nlayers += (uint32_t)outs[i].nlayers;
        for (int k = 0; k < outs[i].nlayers; k++)
            if ((uint32_t)outs[i].npolys[k] > max_polys) max_polys = (uint32_t)outs[i].npolys[k];
    }
    if (nlayers > max_tiles) {
        set_err(err, "limits.max_tiles", "%u tile layers, more than %u", nlayers, max_tiles);
        return PF_ELIMIT;
    }
    int tile_bits = ilog2(next_pow2(nlayers ? nlayers : 1));
    if (tile_bits < 1) tile_bits = 1;
    int poly_bits = REF_BITS - tile_bits;
    if (poly_bits < 1 || (1u << poly_bits) < max_polys) {
        set_err(err, "tile_size",
                "a tile has %u polygons; with %u tile layers a tile may hold %u (32-bit polygon "
                "references): use a smaller tile_size",
                max_polys, nlayers, poly_bits > 0 ? 1u << poly_bits : 0);
        return PF_ELIMIT;
    }
    b->nlayers = nlayers;
    b->max_tile_polys = 1u << poly_bits;
    memset(&b->nmp, 0, sizeof b->nmp);
    dtVcopy(b->nmp.orig, b->bmin);
    b->nmp.tileWidth = b->tile_world;
    b->nmp.tileHeight = b->tile_world;
    b->nmp.maxTiles = 1 << tile_bits;
    b->nmp.maxPolys = 1 << poly_bits;
    return PF_OK;
}

/* The build's tile cache from the tasks' compressed layers (taken). False
 * on ENOMEM. */
bool make_tile_cache(NavBase *b, TileOut *outs, uint32_t ntiles) {
    const pf_nav_config *cfg = &b->cfg;
    dtTileCacheParams tcp;
    memset(&tcp, 0, sizeof tcp);
    dtVcopy(tcp.orig, b->bmin);
    tcp.cs = cfg->cell_size;
    tcp.ch = cfg->cell_height;
    tcp.width = cfg->tile_size;
    tcp.height = cfg->tile_size;
    tcp.walkableHeight = cfg->agent_height;
    tcp.walkableRadius = cfg->agent_radius;
    tcp.walkableClimb = cfg->agent_max_climb;
    tcp.maxSimplificationError = cfg->edge_max_error;
    tcp.maxTiles = (int)(b->nlayers ? b->nlayers : 1);
    tcp.maxObstacles = 1; /* obstacles live in the versions, see the header */
    b->tc = dtAllocTileCache();
    if (!b->tc) return false;
    if (dtStatusFailed(b->tc->init(&tcp, &b->talloc, &b->comp, &b->tproc))) return false;
    for (uint32_t i = 0; i < ntiles; i++)
        for (int k = 0; k < outs[i].nlayers; k++) {
            if (dtStatusFailed(b->tc->addTile(outs[i].layer[k], outs[i].layer_size[k],
                                              DT_COMPRESSEDTILE_FREE_DATA, NULL)))
                return false;
            b->layer_bytes += (size_t)outs[i].layer_size[k];
            outs[i].layer[k] = NULL; /* the cache owns it */
        }
    return true;
}

/* The first version: the tasks' Detour tiles (taken), the areas' state at
 * build. NULL on ENOMEM. */
pf_navmesh *first_version(NavBase *b, TileOut *outs, uint32_t ntiles) {
    pf_navmesh *nm = version_alloc(b);
    if (!nm) return NULL;
    nm->nav = dtAllocNavMesh();
    if (!nm->nav || dtStatusFailed(nm->nav->init(&b->nmp))) goto out_free;
    for (uint32_t i = 0; i < ntiles; i++)
        for (int k = 0; k < outs[i].nlayers; k++) {
            if (!outs[i].nav[k]) continue;
            if (dtStatusFailed(
                    nm->nav->addTile(outs[i].nav[k], outs[i].nav_size[k], DT_TILE_FREE_DATA, 0, 0)))
                goto out_free;
            outs[i].nav[k] = NULL; /* the mesh owns it */
        }
    repair_links(nm->nav);
    for (uint32_t a = 0; a < b->nareas; a++) {
        nm->area_cost[b->areas[a].id] = b->areas[a].cost0;
        nm->area_enabled[b->areas[a].id] = b->areas[a].enabled0;
    }
    version_set_filter(nm);
    nm->generation = 0;
    nm->rebuilt = b->nlayers;
    version_count(nm);
    return nm;
out_free:
    version_free(nm);
    return NULL;
}

} /* namespace */

extern "C" {

pf_status pf_nav_build(const pf_nav_build_input *in, const pf_nav_limits *lim_in,
                       const pf_nav_runner *run, pf_navmesh **out, pf_nav_error *err) {
    *out = NULL;
    if (err) err->field[0] = err->message[0] = '\0';
    pf_nav_limits lim = lim_in ? *lim_in : pf_nav_default_limits();
    const uint64_t t0 = now_us();
    float bmin[3], bmax[3];
    pf_status st = check_input(in, &lim, bmin, bmax, err);
    if (st) return st;
    const float cs = in->config.cell_size;
    double gwd = ceil((double)(bmax[0] - bmin[0]) / cs),
           ghd = ceil((double)(bmax[2] - bmin[2]) / cs);
    if (gwd < 1) gwd = 1;
    if (ghd < 1) ghd = 1;
    if (gwd * ghd > (double)lim.max_voxels) {
        set_err(err, "limits.max_voxels",
                "the world is %.0f x %.0f voxels of cell_size %g, more than %llu voxel columns",
                gwd, ghd, (double)cs, (unsigned long long)lim.max_voxels);
        return PF_ELIMIT;
    }
    const int gw = (int)gwd, gh = (int)ghd, ts = in->config.tile_size;
    const int tw = (gw + ts - 1) / ts, th = (gh + ts - 1) / ts;
    uint32_t max_tiles = lim.max_tiles < PF_NAV_MAX_TILES ? lim.max_tiles : PF_NAV_MAX_TILES;
    if ((uint64_t)tw * (uint64_t)th > max_tiles) {
        set_err(err, "limits.max_tiles", "%d x %d tiles of %d voxels, more than %u", tw, th, ts,
                max_tiles);
        return PF_ELIMIT;
    }
    const uint32_t ntiles = (uint32_t)(tw * th);

    NavBase *b = base_create(in, bmin, bmax, gw, gh);
    if (!b) {
        set_err(err, "", "out of memory");
        return PF_ENOMEM;
    }
    unsigned char *cell_area = NULL;
    uint32_t *tile_first = NULL, *tile_tris = NULL;
    TileOut *outs = NULL;
    BuildJob job;

    st = setup_areas(b, in, &lim, &cell_area, err);
    if (st) goto out_free;
    if (in->geom) {
        st = bin_triangles(b, in->geom, &lim, &tile_first, &tile_tris, err);
        if (st) goto out_free;
    }
    outs = (TileOut *)calloc(ntiles, sizeof(TileOut));
    if (!outs) goto out_nomem;
    job.b = b;
    job.in = in;
    job.tile_first = tile_first;
    job.tile_tris = tile_tris;
    job.cell_area = cell_area;
    job.deadline_us = t0 + (uint64_t)lim.build_ms * 1000u;
    job.aborted = 0;
    job.out = outs;
    run_tasks(run, ntiles, build_tile_task, &job);
    st = tiles_outcome(in, &lim, &job, ntiles, err);
    if (st) goto out_free;
    st = plan_refs(b, outs, ntiles, max_tiles, err);
    if (st) goto out_free;
    if (!make_tile_cache(b, outs, ntiles)) goto out_nomem;
    *out = first_version(b, outs, ntiles);
    if (!*out) goto out_nomem;
    (*out)->build_us = now_us() - t0;
    st = PF_OK;
    goto out_free;

out_nomem:
    st = PF_ENOMEM;
    set_err(err, "", "out of memory");
out_free:
    if (outs)
        for (uint32_t i = 0; i < ntiles; i++) tile_out_free(&outs[i]);
    free(outs);
    free(tile_tris);
    free(tile_first);
    free(cell_area);
    base_release(b);
    return st;
}

} /* extern "C" */
