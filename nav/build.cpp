/* build.cpp -- pf_nav_build: the input checked (settings, agent types,
 * geometry, links), the world's bounds and tiles as RecastDemo computes
 * them, triangles classed by slope and binned by tile with the work each
 * tile will do bounded, the tile tasks run (build_tile.cpp), and their kept
 * voxels and Detour tiles assembled into the build and its first version.
 */
#include "nav_internal.h"

using namespace pfnav;

namespace {

#define RANGE(v, lo, hi, name)                                                                     \
    if (!(isfinite(v) && (v) >= (lo) && (v) <= (hi))) {                                            \
        set_err(err, name, "%s must be a number in [%g, %g]", name, (double)(lo), (double)(hi));   \
        return PF_EINVAL;                                                                          \
    }
#define IRANGE(v, lo, hi, name)                                                                    \
    if ((v) < (lo) || (v) > (hi)) {                                                                \
        set_err(err, name, "%s must be an integer in [%d, %d]", name, (int)(lo), (int)(hi));       \
        return PF_EINVAL;                                                                          \
    }

/* An agent's four settings (the config's ranges); field names prefix.x. */
pf_status check_agent(float cell_height, float radius, float height, float climb, float slope,
                      const char *prefix, pf_nav_error *err) {
    char f[4][96];
    snprintf(f[0], sizeof f[0], "%s.radius", prefix);
    snprintf(f[1], sizeof f[1], "%s.height", prefix);
    snprintf(f[2], sizeof f[2], "%s.max_climb", prefix);
    snprintf(f[3], sizeof f[3], "%s.max_slope", prefix);
    RANGE(radius, 0.0f, 50.0f, f[0]);
    RANGE(height, cell_height, 100.0f, f[1]);
    RANGE(climb, 0.0f, 100.0f, f[2]);
    RANGE(slope, 0.0f, 89.0f, f[3]);
    if (height / cell_height > 255.0f) {
        set_err(err, f[1], "%s / cell_height must be at most 255 voxels", f[1]);
        return PF_EINVAL;
    }
    return PF_OK;
}

pf_status check_config(const pf_nav_config *c, pf_nav_error *err) {
    RANGE(c->cell_size, 0.01f, 10.0f, "cell_size");
    RANGE(c->cell_height, 0.01f, 10.0f, "cell_height");
    pf_status st = check_agent(c->cell_height, c->agent_radius, c->agent_height, c->agent_max_climb,
                               c->agent_max_slope, "agent", err);
    if (st) return st;
    RANGE(c->edge_max_error, 0.1f, 3.0f, "edge_max_error");
    RANGE(c->edge_max_len, 0.0f, 1000.0f, "edge_max_len");
    RANGE(c->detail_sample_dist, 0.0f, 64.0f, "detail_sample_dist");
    RANGE(c->detail_sample_max_error, 0.0f, 64.0f, "detail_sample_max_error");
    IRANGE(c->region_min_size, 0, 150, "region_min_size");
    IRANGE(c->region_merge_size, 0, 150, "region_merge_size");
    IRANGE(c->verts_per_poly, 3, DT_VERTS_PER_POLYGON, "verts_per_poly");
    IRANGE(c->partition, PF_NAV_WATERSHED, PF_NAV_LAYERS, "partition");
    if (c->tile_size != 0 && (c->tile_size < 16 || c->tile_size > 1024)) {
        set_err(err, "tile_size",
                "tile_size must be 0 (one tile: a solo build) or an integer in [16, 1024] voxels");
        return PF_EINVAL;
    }
    return PF_OK;
}

/* The input's agent types: names and settings. */
pf_status check_agent_types(const pf_nav_build_input *in, pf_nav_error *err) {
    if (in->nagent_types + 1 > PF_NAV_MAX_AGENT_TYPES) {
        set_err(err, "agent_types", "%zu agent types besides \"default\", more than %u",
                in->nagent_types, PF_NAV_MAX_AGENT_TYPES - 1);
        return PF_ELIMIT;
    }
    for (size_t i = 0; i < in->nagent_types; i++) {
        const pf_nav_agent_type *t = &in->agent_types[i];
        char f[64];
        snprintf(f, sizeof f, "agent_types[%zu].id", i);
        if (!valid_name(t->name) || strcmp(t->name, "default") == 0) {
            set_err(err, f,
                    "an agent type id is 1..63 characters of [A-Za-z0-9_.-], not "
                    "\"default\" (the map's own agent)");
            return PF_EINVAL;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(in->agent_types[k].name, t->name) == 0) {
                set_err(err, f, "agent type '%s' is declared twice", t->name);
                return PF_EINVAL;
            }
        snprintf(f, sizeof f, "agent_types[%zu]", i);
        pf_status st = check_agent(in->config.cell_height, t->radius, t->height, t->max_climb,
                                   t->max_slope, f, err);
        if (st) return st;
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

/* The geometry checked against the limits, and its bounds: every vertex's,
 * as RecastDemo's InputGeom takes them (rcCalcBounds). */
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
    for (uint32_t i = 0; i < 3 * g->ntris; i++)
        if (g->tris[i] >= g->nverts) {
            set_err(err, "obj", "triangle %u uses vertex %u of %u", i / 3, g->tris[i], g->nverts);
            return PF_EINVAL;
        }
    for (uint32_t vi = 0; vi < g->nverts; vi++)
        if (!finite3(&g->verts[3 * (size_t)vi])) {
            set_err(err, "obj", "vertex %u is not finite", vi);
            return PF_EINVAL;
        }
    rcCalcBounds(g->verts, (int)g->nverts, bmin, bmax);
    pf_status st = check_winding(g, err);
    if (st) return st;
    const float ch = cfg->cell_height;
    if ((bmax[1] + cfg->agent_height - bmin[1]) / ch > (float)RC_SPAN_MAX_HEIGHT) {
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
    if (!st) st = check_agent_types(in, err);
    if (st) return st;
    if (in->nlinks > lim->max_links) {
        set_err(err, "limits.max_links", "%zu links, more than %u", in->nlinks, lim->max_links);
        return PF_ELIMIT;
    }
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

/* Agent type t of the build from settings. */
void agent_init(AgentType *at, const char *name, const pf_nav_config *c, float radius, float height,
                float climb, float slope) {
    snprintf(at->name, sizeof at->name, "%s", name);
    at->radius = radius;
    at->height = height;
    at->climb = climb;
    at->slope = slope;
    at->walkable_height = (int)ceilf(height / c->cell_height);
    at->walkable_climb = (int)floorf(climb / c->cell_height);
    at->walkable_radius = (int)ceilf(radius / c->cell_size);
}

/* A new build over bounds bmin..bmax of gw x gh voxels: its constants and
 * agent types. NULL on ENOMEM. */
NavBase *base_create(const pf_nav_build_input *in, const float bmin[3], const float bmax[3], int gw,
                     int gh) {
    const pf_nav_config *cfg = &in->config;
    const uint32_t n = (uint32_t)in->nagent_types + 1;
    void *bmem = calloc(1, sizeof(NavBase));
    AgentType *agents = (AgentType *)calloc(n, sizeof(AgentType));
    if (!bmem || !agents) {
        free(bmem);
        free(agents);
        return NULL;
    }
    NavBase *b = new (bmem) NavBase();
    b->refs = 1;
    b->cfg = *cfg;
    b->agents = agents;
    b->nagents = n;
    agent_init(&agents[0], "default", cfg, cfg->agent_radius, cfg->agent_height,
               cfg->agent_max_climb, cfg->agent_max_slope);
    int border = agents[0].walkable_radius;
    for (uint32_t t = 1; t < n; t++) {
        const pf_nav_agent_type *a = &in->agent_types[t - 1];
        agent_init(&agents[t], a->name, cfg, a->radius, a->height, a->max_climb, a->max_slope);
        if (agents[t].walkable_radius > border) border = agents[t].walkable_radius;
    }
    /* The slope class a type needs: the types at least as steep as it. */
    for (uint32_t t = 0; t < n; t++) {
        uint32_t k = 0;
        for (uint32_t u = 0; u < n; u++) k += agents[u].slope >= agents[t].slope;
        agents[t].min_class = (unsigned char)k;
    }
    b->solo = cfg->tile_size == 0;
    b->ts = b->solo ? (gw > gh ? gw : gh) : cfg->tile_size;
    b->border = b->solo ? 0 : border + 3;
    for (uint32_t t = 0; t < n; t++) agents[t].border = b->solo ? 0 : agents[t].walkable_radius + 3;
    dtVcopy(b->bmin, bmin);
    dtVcopy(b->bmax, bmax);
    b->gw = gw;
    b->gh = gh;
    b->tw = b->solo ? 1 : (gw + b->ts - 1) / b->ts;
    b->th = b->solo ? 1 : (gh + b->ts - 1) / b->ts;
    b->tile_world = b->solo ? fmaxf(bmax[0] - bmin[0], bmax[2] - bmin[2]) + 1.0f
                            : (float)b->ts * cfg->cell_size;
    b->from_grid = in->grid != NULL;
    b->grid_w = in->grid ? pf_grid_width(in->grid) : 0;
    b->grid_h = in->grid ? pf_grid_height(in->grid) : 0;
    b->exact = gw < (1 << 22) - 2 && gh < (1 << 22) - 2;
    return b;
}

/* Each triangle's slope class: how many agent types it is flat enough for
 * (RecastDemo's rcMarkWalkableTriangles for each type's slope). */
unsigned char *slope_classes(const NavBase *b, const pf_nav_geom *g) {
    unsigned char *cls = (unsigned char *)calloc(g->ntris ? g->ntris : 1, 1);
    if (!cls) return NULL;
    rcContext ctx(false);
    for (uint32_t t = 0; t < g->ntris; t++) {
        const int tri[3] = {(int)g->tris[3 * (size_t)t], (int)g->tris[3 * (size_t)t + 1],
                            (int)g->tris[3 * (size_t)t + 2]};
        for (uint32_t k = 0; k < b->nagents; k++) {
            unsigned char area = 0;
            rcMarkWalkableTriangles(&ctx, b->agents[k].slope, g->verts, (int)g->nverts, tri, 1,
                                    &area);
            cls[t] += area != 0;
        }
    }
    return cls;
}

/* The voxel columns of tile (tx, ty), border included, that [x0, x1] x
 * [z0, z1] (voxels of the world) covers. */
uint64_t tile_cover(const NavBase *b, int tx, int ty, int x0, int x1, int z0, int z1) {
    const int lx = b->solo ? 0 : tx * b->ts - b->border,
              hx = b->solo ? b->gw - 1 : (tx + 1) * b->ts + b->border - 1;
    const int lz = b->solo ? 0 : ty * b->ts - b->border,
              hz = b->solo ? b->gh - 1 : (ty + 1) * b->ts + b->border - 1;
    if (x0 < lx) x0 = lx;
    if (x1 > hx) x1 = hx;
    if (z0 < lz) z0 = lz;
    if (z1 > hz) z1 = hz;
    if (x1 < x0 || z1 < z0) return 0;
    return (uint64_t)(x1 - x0 + 1) * (uint64_t)(z1 - z0 + 1);
}

/* Triangles by tile, each triangle in every tile (with its border) its x/z
 * bounds overlap, in input order. Counted first, so the total and each
 * tile's span bound are checked before the lists are allocated. */
pf_status bin_triangles(const NavBase *b, const pf_nav_geom *g, const pf_nav_limits *lim,
                        uint32_t **first_out, uint32_t **tris_out, pf_nav_error *err) {
    const uint32_t ntiles = (uint32_t)(b->tw * b->th);
    const float cs = b->cfg.cell_size;
    uint32_t *tile_first = (uint32_t *)calloc((size_t)ntiles + 1, sizeof(uint32_t));
    uint64_t *spans = (uint64_t *)calloc(ntiles, sizeof(uint64_t));
    uint32_t *tile_tris = NULL;
    uint64_t total = 0;
    const uint64_t cap = 8ull * lim->max_triangles + ntiles;
    if (!tile_first || !spans) goto out_nomem;
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
            const int vx0 = (int)floorf((x0 - b->bmin[0]) / cs),
                      vx1 = (int)floorf((x1 - b->bmin[0]) / cs);
            const int vz0 = (int)floorf((z0 - b->bmin[2]) / cs),
                      vz1 = (int)floorf((z1 - b->bmin[2]) / cs);
            /* A voxel more each side: rasterising clips what is outside. */
            int tx0 = b->solo ? 0 : (int)floorf((float)(vx0 - 1 - b->border) / (float)b->ts);
            int tx1 = b->solo ? 0 : (int)floorf((float)(vx1 + 1 + b->border) / (float)b->ts);
            int tz0 = b->solo ? 0 : (int)floorf((float)(vz0 - 1 - b->border) / (float)b->ts);
            int tz1 = b->solo ? 0 : (int)floorf((float)(vz1 + 1 + b->border) / (float)b->ts);
            if (tx0 < 0) tx0 = 0;
            if (tz0 < 0) tz0 = 0;
            if (tx1 >= b->tw) tx1 = b->tw - 1;
            if (tz1 >= b->th) tz1 = b->th - 1;
            for (int tz = tz0; tz <= tz1; tz++)
                for (int tx = tx0; tx <= tx1; tx++) {
                    uint32_t ti = (uint32_t)(tx + tz * b->tw);
                    if (pass == 1) {
                        tile_tris[tile_first[ti]++] = t;
                        continue;
                    }
                    tile_first[ti + 1]++;
                    total++;
                    spans[ti] += tile_cover(b, tx, tz, vx0, vx1, vz0, vz1);
                }
            if (pass == 0 && total > cap) {
                set_err(err, "obj",
                        "the triangles overlap tiles %llu times in all, more than %llu (8 per "
                        "triangle allowed): use a larger tile_size or smaller triangles",
                        (unsigned long long)total, (unsigned long long)cap);
                free(tile_first);
                free(spans);
                return PF_ELIMIT;
            }
        }
        if (pass == 1) break;
        for (uint32_t i = 0; i < ntiles; i++)
            if (spans[i] > lim->max_tile_spans) {
                set_err(err, "limits.max_tile_spans",
                        "tile (%u, %u) would hold up to %llu voxel spans (its triangles cover "
                        "that many voxel columns), more than %u: use a smaller tile_size, a "
                        "larger cell_size or raise the limit",
                        i % (uint32_t)b->tw, i / (uint32_t)b->tw, (unsigned long long)spans[i],
                        lim->max_tile_spans);
                free(tile_first);
                free(spans);
                return PF_ELIMIT;
            }
        for (uint32_t i = 0; i < ntiles; i++) tile_first[i + 1] += tile_first[i];
        tile_tris = (uint32_t *)malloc((size_t)(total ? total : 1) * sizeof(uint32_t));
        if (!tile_tris) goto out_nomem;
    }
    /* The fill advanced each start to the next tile's; shift back. */
    for (uint32_t i = ntiles; i > 0; i--) tile_first[i] = tile_first[i - 1];
    tile_first[0] = 0;
    free(spans);
    *first_out = tile_first;
    *tris_out = tile_tris;
    return PF_OK;
out_nomem:
    free(tile_first);
    free(spans);
    set_err(err, "", "out of memory");
    return PF_ENOMEM;
}

/* The tile tasks' outcome: the first failure, or a build out of time. */
pf_status tiles_outcome(const pf_nav_build_input *in, const pf_nav_limits *lim, BuildJob *job,
                        uint32_t ntiles, pf_nav_error *err) {
    const TileOut *outs = job->out;
    for (uint32_t i = 0; i < ntiles; i++) {
        if (outs[i].st == PF_OK || outs[i].st == PF_ECANCELED) continue;
        const pf_status st = outs[i].st;
        const char *why = outs[i].why;
        const char *field = strstr(why, "limits.build_ms")           ? "limits.build_ms"
                            : strstr(why, "limits.max_column_spans") ? "limits.max_column_spans"
                            : strstr(why, "limits.max_bytes")        ? "limits.max_bytes"
                            : st == PF_ELIMIT                        ? "tile_size"
                            : in->grid                               ? "from_grid"
                                                                     : "obj";
        set_err(err, field, "%s", why);
        return st;
    }
    if (__atomic_load_n(&job->aborted, __ATOMIC_RELAXED)) {
        set_err(err, "limits.build_ms", "the build took longer than limits.build_ms (%u ms)",
                lim->build_ms);
        return PF_ELIMIT;
    }
    return PF_OK;
}

/* Type t's reference bit budget: as many tile bits as it has tiles, the
 * rest for polygons, which every tile's count must fit. */
pf_status plan_refs(NavBase *b, uint32_t t, const TileOut *outs, uint32_t ntiles,
                    uint32_t max_tiles, pf_nav_error *err) {
    AgentType *at = &b->agents[t];
    uint32_t nt = 0, max_polys = 0;
    for (uint32_t i = 0; i < ntiles; i++) {
        if (!outs[i].nav || !outs[i].nav[t]) continue;
        nt++;
        if ((uint32_t)outs[i].npolys[t] > max_polys) max_polys = (uint32_t)outs[i].npolys[t];
    }
    if (nt > max_tiles) {
        set_err(err, "limits.max_tiles", "%u tiles with polygons, more than %u", nt, max_tiles);
        return PF_ELIMIT;
    }
    int tile_bits = ilog2(next_pow2(nt ? nt : 1));
    if (tile_bits < 1) tile_bits = 1;
    int poly_bits = REF_BITS - tile_bits;
    if (poly_bits < 1 || (1u << poly_bits) < max_polys) {
        set_err(err, "tile_size",
                "a tile has %u polygons; with %u tiles a tile may hold %u (32-bit polygon "
                "references): use a smaller tile_size",
                max_polys, nt, poly_bits > 0 ? 1u << poly_bits : 0);
        return PF_ELIMIT;
    }
    at->max_tile_polys = 1u << poly_bits;
    memset(&at->nmp, 0, sizeof at->nmp);
    dtVcopy(at->nmp.orig, b->bmin);
    at->nmp.tileWidth = b->tile_world;
    at->nmp.tileHeight = b->tile_world;
    at->nmp.maxTiles = 1 << tile_bits;
    at->nmp.maxPolys = 1 << poly_bits;
    return PF_OK;
}

/* The tasks' kept voxels into the build (taken), and its CPU times. */
void take_kept(NavBase *b, TileOut *outs, uint32_t ntiles) {
    for (uint32_t t = 0; t < b->nagents; t++) {
        AgentType *at = &b->agents[t];
        for (uint32_t i = 0; i < ntiles; i++) {
            at->kept[i] = outs[i].kept[t];
            outs[i].kept[t].data = NULL;
            at->kept_bytes += at->kept[i].size;
            at->build_us += outs[i].cpu_us[t];
        }
        b->shared_bytes += at->kept_bytes + (size_t)ntiles * sizeof(KeptTile);
    }
}

/* The first version: the tasks' Detour tiles (taken), the areas' and
 * links' state at build. NULL on ENOMEM. */
pf_navmesh *first_version(NavBase *b, TileOut *outs, uint32_t ntiles, const TileState *vs,
                          pf_nav_link *links, unsigned char *link_area, LinkClass *lclass,
                          uint32_t nlclass) {
    pf_navmesh *nm = version_alloc(b);
    if (!nm) return NULL;
    nm->links = links;
    nm->link_area = link_area;
    nm->nlinks = vs->nlinks;
    nm->lclass = lclass;
    nm->nlclass = nlclass;
    for (uint32_t i = 0; i < vs->nlinks; i++) nm->nlinks_on += links[i].enabled;
    for (uint32_t t = 0; t < b->nagents; t++) {
        pf_navmesh *v = nm->types[t];
        v->nav = dtAllocNavMesh();
        if (!v->nav || dtStatusFailed(v->nav->init(&b->agents[t].nmp))) goto out_free;
        for (uint32_t i = 0; i < ntiles; i++) {
            if (!outs[i].nav[t]) continue;
            if (dtStatusFailed(
                    v->nav->addTile(outs[i].nav[t], outs[i].nav_size[t], DT_TILE_FREE_DATA, 0, 0)))
                goto out_free;
            outs[i].nav[t] = NULL; /* the mesh owns it */
        }
        repair_links(v->nav);
    }
    for (uint32_t a = 0; a < b->nareas; a++) {
        nm->area_cost[b->areas[a].id] = b->areas[a].cost0;
        nm->area_enabled[b->areas[a].id] = b->areas[a].enabled0;
    }
    version_set_filter(nm);
    nm->generation = 0;
    nm->rebuilt = ntiles;
    if (!version_components(nm) || !version_views(nm)) goto out_free;
    version_count(nm);
    return nm;
out_free:
    /* The caller still owns the links. */
    nm->links = NULL;
    nm->link_area = NULL;
    nm->lclass = NULL;
    version_free(nm);
    return NULL;
}

/* The build's links: checked, sorted, their cost classes; the first
 * version's tile state (no obstacles, areas as built). */
pf_status setup_links(NavBase *b, const pf_nav_build_input *in, pf_nav_link **links,
                      unsigned char **link_area, LinkClass **lclass, uint32_t *nlclass,
                      pf_nav_error *err) {
    pf_status st = check_links(b, in->links, in->nlinks, "links", err);
    if (st) return st;
    const char **ids = (const char **)malloc((in->nlinks ? in->nlinks : 1) * sizeof(char *));
    *links = (pf_nav_link *)malloc((in->nlinks ? in->nlinks : 1) * sizeof(pf_nav_link));
    if (!ids || !*links) {
        free(ids);
        set_err(err, "", "out of memory");
        return PF_ENOMEM;
    }
    for (size_t i = 0; i < in->nlinks; i++) ids[i] = in->links[i].id;
    size_t a = 0, d = 0;
    bool oom = false;
    const bool dup = find_duplicate(ids, in->nlinks, &a, &d, &oom);
    free(ids);
    if (dup || oom) {
        char f[48];
        snprintf(f, sizeof f, "links[%zu].id", d);
        if (oom)
            set_err(err, "", "out of memory");
        else
            set_err(err, f, "link '%s' is declared twice (first at links[%zu])", in->links[d].id,
                    a);
        return oom ? PF_ENOMEM : PF_EINVAL;
    }
    if (in->nlinks) memcpy(*links, in->links, in->nlinks * sizeof(pf_nav_link));
    for (size_t i = 0; i < in->nlinks; i++)
        if (!((*links)[i].radius > 0)) (*links)[i].radius = b->agents[0].radius;
    qsort(*links, in->nlinks, sizeof(pf_nav_link), cmp_link);
    return link_classes(b, *links, (uint32_t)in->nlinks, NULL, 0, lclass, nlclass, link_area, err);
}

/* Everything a build allocates on its way, freed at its end. */
struct BuildParts {
    unsigned char *cell_area = nullptr, *tri_class = nullptr, *link_area = nullptr;
    uint32_t *tile_first = nullptr, *tile_tris = nullptr;
    TileOut *outs = nullptr;
    unsigned char **nav = nullptr;
    int *nav_size = nullptr, *npolys = nullptr;
    KeptTile *kept = nullptr;
    uint64_t *cpu = nullptr;
    pf_nav_link *links = nullptr;
    LinkClass *lclass = nullptr;
    uint32_t nlclass = 0, ntiles = 0, nagents = 0;
    ~BuildParts() {
        if (outs)
            for (uint32_t i = 0; i < ntiles; i++) tile_out_free(&outs[i], nagents);
        free(outs);
        free(nav);
        free(nav_size);
        free(npolys);
        free(kept);
        free(cpu);
        free(cell_area);
        free(tri_class);
        free(tile_first);
        free(tile_tris);
        free(links);
        free(link_area);
        free(lclass);
    }
};

/* The tile outputs: per tile, per type slots, in blocks. */
bool alloc_outs(BuildParts *p) {
    const size_t n = (size_t)p->ntiles, k = p->nagents;
    p->outs = (TileOut *)calloc(n ? n : 1, sizeof(TileOut));
    p->nav = (unsigned char **)calloc(n * k + 1, sizeof(unsigned char *));
    p->nav_size = (int *)calloc(n * k + 1, sizeof(int));
    p->npolys = (int *)calloc(n * k + 1, sizeof(int));
    p->kept = (KeptTile *)calloc(n * k + 1, sizeof(KeptTile));
    p->cpu = (uint64_t *)calloc(n * (k + 1) + 1, sizeof(uint64_t));
    if (!p->outs || !p->nav || !p->nav_size || !p->npolys || !p->kept || !p->cpu) return false;
    for (size_t i = 0; i < n; i++) {
        p->outs[i].nav = p->nav + i * k;
        p->outs[i].nav_size = p->nav_size + i * k;
        p->outs[i].npolys = p->npolys + i * k;
        p->outs[i].kept = p->kept + i * k;
        p->outs[i].cpu_us = p->cpu + i * (k + 1);
    }
    return true;
}

/* The world's voxels and tiles within the limits. */
pf_status check_grid_size(const pf_nav_build_input *in, const pf_nav_limits *lim,
                          const float bmin[3], const float bmax[3], int *gw, int *gh,
                          pf_nav_error *err) {
    const float cs = in->config.cell_size;
    const double gwd = floor((double)(bmax[0] - bmin[0]) / cs + 0.5),
                 ghd = floor((double)(bmax[2] - bmin[2]) / cs + 0.5);
    if (gwd * ghd > (double)lim->max_voxels || gwd > INT32_MAX / 2 || ghd > INT32_MAX / 2) {
        set_err(err, "limits.max_voxels",
                "the world is %.0f x %.0f voxels of cell_size %g, more than %llu voxel columns",
                gwd, ghd, (double)cs, (unsigned long long)lim->max_voxels);
        return PF_ELIMIT;
    }
    rcCalcGridSize(bmin, bmax, cs, gw, gh);
    if (*gw < 1) *gw = 1;
    if (*gh < 1) *gh = 1;
    const int ts = in->config.tile_size;
    const uint64_t tw = ts ? (uint64_t)((*gw + ts - 1) / ts) : 1,
                   th = ts ? (uint64_t)((*gh + ts - 1) / ts) : 1;
    uint32_t max_tiles = lim->max_tiles < PF_NAV_MAX_TILES ? lim->max_tiles : PF_NAV_MAX_TILES;
    if (tw * th > max_tiles) {
        set_err(err, "limits.max_tiles", "%llu x %llu tiles of %d voxels, more than %u",
                (unsigned long long)tw, (unsigned long long)th, ts, max_tiles);
        return PF_ELIMIT;
    }
    return PF_OK;
}

/* Areas, links, slope classes, triangle bins, the ground index: what the
 * tile tasks read. */
pf_status prepare(NavBase *b, const pf_nav_build_input *in, const pf_nav_limits *lim, BuildParts *p,
                  pf_nav_error *err) {
    pf_status st = setup_areas(b, in, lim, &p->cell_area, err);
    if (st) return st;
    if (b->nareas && b->cfg.partition == PF_NAV_LAYERS) {
        set_err(err, "partition",
                "layer regions in this Recast (1.5.1) merge regions of different areas, so the "
                "map's %u areas (named areas, doors, cost classes) would be lost: use watershed "
                "or monotone",
                b->nareas);
        return PF_EUNSUPPORTED;
    }
    b->shared_bytes +=
        sizeof(NavBase) + b->nagents * sizeof(AgentType) + b->nareas * sizeof(AreaDef);
    for (uint32_t a = 0; a < b->nareas; a++)
        b->shared_bytes += b->areas[a].nboxes * sizeof(pf_nav_box);
    const uint64_t cover = area_box_columns(b),
                   bound = 16ull * (uint64_t)b->gw * (uint64_t)b->gh + (1u << 20);
    if (cover > bound) {
        set_err(err, "limits.max_area_boxes",
                "the area boxes cover %llu voxel columns in all (a column under several boxes "
                "counts for each), more than %llu (16 per voxel column of the world)",
                (unsigned long long)cover, (unsigned long long)bound);
        return PF_ELIMIT;
    }
    st = setup_links(b, in, &p->links, &p->link_area, &p->lclass, &p->nlclass, err);
    if (st) return st;
    if (!in->geom) return PF_OK;
    p->tri_class = slope_classes(b, in->geom);
    if (!p->tri_class) {
        set_err(err, "", "out of memory");
        return PF_ENOMEM;
    }
    st = bin_triangles(b, in->geom, lim, &p->tile_first, &p->tile_tris, err);
    if (st) return st;
    if (!ground_build(b, in->geom)) {
        set_err(err, "", "out of memory");
        return PF_ENOMEM;
    }
    b->shared_bytes += b->ground.bytes;
    return PF_OK;
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
    int gw = 0, gh = 0;
    pf_status st = check_input(in, &lim, bmin, bmax, err);
    if (!st) st = check_grid_size(in, &lim, bmin, bmax, &gw, &gh, err);
    if (st) return st;
    const uint32_t max_tiles = lim.max_tiles < PF_NAV_MAX_TILES ? lim.max_tiles : PF_NAV_MAX_TILES;
    NavBase *b = base_create(in, bmin, bmax, gw, gh);
    if (!b) {
        set_err(err, "", "out of memory");
        return PF_ENOMEM;
    }
    BuildParts p;
    p.ntiles = (uint32_t)(b->tw * b->th);
    p.nagents = b->nagents;
    BuildJob job;
    TileState vs;
    bool enabled[64];
    st = prepare(b, in, &lim, &p, err);
    if (st) goto out_free;
    for (uint32_t t = 0; t < b->nagents; t++)
        if (!(b->agents[t].kept = (KeptTile *)calloc(p.ntiles, sizeof(KeptTile)))) goto out_nomem;
    if (!alloc_outs(&p)) goto out_nomem;
    for (int a = 0; a < 64; a++) enabled[a] = true;
    for (uint32_t a = 0; a < b->nareas; a++) enabled[b->areas[a].id] = b->areas[a].enabled0;
    memset(&vs, 0, sizeof vs);
    vs.area_enabled = enabled;
    vs.links = p.links;
    vs.link_area = p.link_area;
    vs.nlinks = (uint32_t)in->nlinks;
    memset(&job, 0, sizeof job);
    job.b = b;
    job.in = in;
    job.tile_first = p.tile_first;
    job.tile_tris = p.tile_tris;
    job.tri_class = p.tri_class;
    job.cell_area = p.cell_area;
    job.lim = &lim;
    job.vs = &vs;
    job.deadline_us = t0 + (uint64_t)lim.build_ms * 1000u;
    job.bytes = b->shared_bytes;
    job.out = p.outs;
    run_tasks(run, p.ntiles, build_tile_task, &job);
    st = tiles_outcome(in, &lim, &job, p.ntiles, err);
    for (uint32_t t = 0; !st && t < b->nagents; t++)
        st = plan_refs(b, t, p.outs, p.ntiles, max_tiles, err);
    if (st) goto out_free;
    take_kept(b, p.outs, p.ntiles);
    *out = first_version(b, p.outs, p.ntiles, &vs, p.links, p.link_area, p.lclass, p.nlclass);
    if (!*out) goto out_nomem;
    p.links = NULL; /* the version owns them */
    p.link_area = NULL;
    p.lclass = NULL;
    (*out)->build_us = now_us() - t0;
    st = PF_OK;
    goto out_free;

out_nomem:
    st = PF_ENOMEM;
    set_err(err, "", "out of memory");
out_free:
    base_release(b);
    return st;
}

} /* extern "C" */
