/* navmesh.cpp -- see navmesh.h. The only C++ in pathd: a shim over
 * Recast/Detour. C in style (no exceptions, no RTTI, no STL): every
 * allocation is checked, every library status looked at.
 *
 * References: RecastDemo's Sample_TempObstacles.cpp (the layered tile cache
 * build: rasterizeTileLayers, MeshProcess) and Sample_TileMesh.cpp (tile
 * and polygon bits), NavMeshTesterTool.cpp (findPath / findStraightPath and
 * the partial end point) and CrowdTool.cpp (agent and avoidance settings),
 * at the version Debian packages (1.5.1+git20210215).
 */
#include "nav_internal.h"

#include <DetourAssert.h>
#include <pthread.h>

using namespace pfnav;

namespace pfnav {

uint64_t now_us() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void set_err(pf_nav_error *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void set_err(pf_nav_error *err, const char *field, const char *fmt, ...) {
    if (!err) return;
    snprintf(err->field, sizeof err->field, "%s", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

bool finite3(const float *v) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

bool valid_name(const char *s) {
    if (!s) return false;
    size_t n = strlen(s);
    if (n == 0 || n >= PF_NAV_NAME_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

unsigned int next_pow2(unsigned int v) {
    if (v <= 1) return 1;
    v--;
    v |= v >> 1;
    v |= v >> 2;
    v |= v >> 4;
    v |= v >> 8;
    v |= v >> 16;
    return v + 1;
}

int ilog2(unsigned int v) {
    int r = 0;
    while ((1u << r) < v) r++;
    return r;
}

void base_release(NavBase *b) {
    if (!b) return;
    if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    dtFreeTileCache(b->tc);
    for (uint32_t i = 0; i < b->nareas; i++) free(b->areas[i].boxes);
    free(b->areas);
    b->~NavBase();
    free(b);
}

/* A tile slot of a mesh (dtNavMesh's non-const getTile is private). */
const dtMeshTile *tile_at(const dtNavMesh *nav, int i) { return nav->getTile(i); }

} /* namespace pfnav */

namespace {

void version_free(pf_navmesh *nm) {
    if (!nm) return;
    dtFreeNavMesh(nm->nav);
    free(nm->obs);
    view_free(nm->view);
    base_release(nm->base);
    nm->~pf_navmesh();
    free(nm);
}

pf_navmesh *version_alloc(NavBase *base) {
    void *mem = calloc(1, sizeof(pf_navmesh));
    if (!mem) return NULL;
    pf_navmesh *nm = new (mem) pf_navmesh();
    nm->refs = 1;
    nm->base = base;
    __atomic_add_fetch(&base->refs, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 64; i++) {
        nm->area_cost[i] = 1.0f;
        nm->area_enabled[i] = true;
    }
    return nm;
}

void version_set_filter(pf_navmesh *nm) {
    nm->filter.setIncludeFlags(FLAG_WALK);
    nm->filter.setExcludeFlags(0);
    nm->costly = false;
    for (int i = 0; i < 64; i++) {
        nm->filter.setAreaCost(i, nm->area_cost[i]);
        if (nm->area_cost[i] != 1.0f) nm->costly = true;
    }
}

/* Counts tiles, polygons, vertices and bytes of the version's mesh. */
void version_count(pf_navmesh *nm) {
    const dtNavMesh *nav = nm->nav;
    nm->tiles = nm->polys = nm->verts = 0;
    size_t bytes = (size_t)nav->getMaxTiles() * sizeof(dtMeshTile);
    bytes += next_pow2((unsigned)nav->getMaxTiles() / 4) * sizeof(dtMeshTile *);
    for (int i = 0; i < nav->getMaxTiles(); i++) {
        const dtMeshTile *t = nav->getTile(i);
        if (!t || !t->header) continue;
        nm->tiles++;
        nm->polys += (uint32_t)t->header->polyCount;
        nm->verts += (uint32_t)t->header->vertCount;
        bytes += (size_t)t->dataSize;
    }
    nm->mesh_bytes = bytes + sizeof(pf_navmesh) + nm->nobs * sizeof(pf_nav_obstacle);
}

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

/* Rewrites Detour tile data with room for more links. dtCreateNavMeshData
 * sizes a tile's link pool at one link per edge plus two more per
 * tile-border edge, but a long border edge meets as many polygons of the
 * neighbouring tile as there are polygon ends along it; when the pool runs
 * out dtNavMesh::connectExtLinks drops links silently, and the border
 * becomes passable one way only. A border edge L voxels long meets at most
 * L + 1 polygons (their ends lie on voxel corners), so that is what each
 * one is given. The layout is addTile's: header, vertices, polygons, links,
 * detail meshes, detail vertices, detail triangles, BV tree, off-mesh
 * connections, each 4-aligned; only the link section grows (addTile
 * initialises links itself). Takes data (freed); NULL on ENOMEM. */
unsigned char *widen_links(unsigned char *data, int *size, float cs) {
    dtMeshHeader *h = (dtMeshHeader *)data;
    const int headerSize = dtAlign4(sizeof(dtMeshHeader));
    const int vertsSize = dtAlign4(sizeof(float) * 3 * h->vertCount);
    const int polysSize = dtAlign4(sizeof(dtPoly) * h->polyCount);
    const int linksSize = dtAlign4(sizeof(dtLink) * h->maxLinkCount);
    const float *verts = (const float *)(data + headerSize);
    const dtPoly *polys = (const dtPoly *)(data + headerSize + vertsSize);
    int extra = 0;
    for (int i = 0; i < h->polyCount; i++) {
        const dtPoly *p = &polys[i];
        for (int j = 0; j < p->vertCount; j++) {
            if (!(p->neis[j] & DT_EXT_LINK)) continue;
            const float *a = &verts[3 * p->verts[j]];
            const float *b = &verts[3 * p->verts[(j + 1) % p->vertCount]];
            const float len = fabsf(a[0] - b[0]) + fabsf(a[2] - b[2]);
            const int need = (int)ceilf(len / cs) + 1;
            if (need > 3) extra += need - 3;
        }
    }
    if (extra == 0) return data;
    const int newLinks = h->maxLinkCount + extra;
    const int newLinksSize = dtAlign4(sizeof(dtLink) * newLinks);
    const int before = headerSize + vertsSize + polysSize;
    const int after = *size - before - linksSize;
    const int nsize = before + newLinksSize + after;
    unsigned char *nd = (unsigned char *)dtAlloc(nsize, DT_ALLOC_PERM);
    if (!nd) {
        dtFree(data);
        return NULL;
    }
    memcpy(nd, data, (size_t)before);
    memset(nd + before, 0, (size_t)newLinksSize);
    memcpy(nd + before + newLinksSize, data + before + linksSize, (size_t)after);
    ((dtMeshHeader *)nd)->maxLinkCount = newLinks;
    dtFree(data);
    *size = nsize;
    return nd;
}

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

/* Detour's overlap test of two tile-border edges (DetourNavMesh.cpp's
 * overlapSlabs on calcSlabEndPoints, which are internal): the same line,
 * x (or z) ranges overlapping by more than 2 x 0.01, heights within climb.
 * On overlap, [*lo, *hi] is the shared range on the edge's axis. */
bool border_overlap(const float *va, const float *vb, const float *vc, const float *vd, int side,
                    float climb, float *lo, float *hi) {
    const int ax = (side == 0 || side == 4) ? 2 : 0, line = ax == 2 ? 0 : 2;
    if (fabsf(va[line] - vc[line]) > 0.01f) return false;
    float amin[2] = {va[ax], va[1]}, amax[2] = {vb[ax], vb[1]};
    if (va[ax] > vb[ax]) {
        amin[0] = vb[ax];
        amin[1] = vb[1];
        amax[0] = va[ax];
        amax[1] = va[1];
    }
    float bmin[2] = {vc[ax], vc[1]}, bmax[2] = {vd[ax], vd[1]};
    if (vc[ax] > vd[ax]) {
        bmin[0] = vd[ax];
        bmin[1] = vd[1];
        bmax[0] = vc[ax];
        bmax[1] = vc[1];
    }
    const float px = 0.01f;
    const float minx = fmaxf(amin[0] + px, bmin[0] + px), maxx = fminf(amax[0] - px, bmax[0] - px);
    if (minx > maxx) return false;
    const float ad = (amax[1] - amin[1]) / (amax[0] - amin[0]), ak = amin[1] - ad * amin[0];
    const float bd = (bmax[1] - bmin[1]) / (bmax[0] - bmin[0]), bk = bmin[1] - bd * bmin[0];
    const float dmin = (bd * minx + bk) - (ad * minx + ak),
                dmax = (bd * maxx + bk) - (ad * maxx + ak);
    const float thr = (climb * 2) * (climb * 2);
    if (!(dmin * dmax < 0 || dmin * dmin <= thr || dmax * dmax <= thr)) return false;
    *lo = fmaxf(amin[0], bmin[0]);
    *hi = fminf(amax[0], bmax[0]);
    return true;
}

/* Adds the tile-border links Detour dropped. dtNavMesh::connectExtLinks
 * links an edge to at most 4 polygons of the neighbouring tile
 * (findConnectingPolys' maxcon); a long border edge facing a finely cut
 * neighbour loses the rest, and that border becomes one-way (the
 * neighbours still link to it). This adds every missing link the same way
 * connectExtLinks makes them, from the tile's free links (widen_links left
 * room). The mesh must be one nobody reads yet. */
void repair_links(dtNavMesh *nav) {
    const int n = nav->getMaxTiles();
    for (int ti = 0; ti < n; ti++) {
        dtMeshTile *tile = const_cast<dtMeshTile *>(tile_at(nav, ti));
        if (!tile->header) continue;
        for (int pi = 0; pi < tile->header->polyCount; pi++) {
            dtPoly *poly = &tile->polys[pi];
            const int nv = poly->vertCount;
            for (int j = 0; j < nv; j++) {
                if (!(poly->neis[j] & DT_EXT_LINK)) continue;
                const int dir = poly->neis[j] & 0xff;
                if (dir != 0 && dir != 2 && dir != 4 && dir != 6) continue;
                int nx = tile->header->x, ny = tile->header->y;
                if (dir == 0) nx++;
                if (dir == 2) ny++;
                if (dir == 4) nx--;
                if (dir == 6) ny--;
                const dtMeshTile *nb[32];
                const int nnb = nav->getTilesAt(nx, ny, nb, 32);
                const float *va = &tile->verts[poly->verts[j] * 3];
                const float *vb = &tile->verts[poly->verts[(j + 1) % nv] * 3];
                const unsigned short opp = DT_EXT_LINK | (unsigned short)((dir + 4) & 7);
                for (int k = 0; k < nnb; k++) {
                    const dtMeshTile *t = nb[k];
                    const dtPolyRef base = nav->getPolyRefBase(t);
                    for (int qi = 0; qi < t->header->polyCount; qi++) {
                        const dtPoly *q = &t->polys[qi];
                        for (int e = 0; e < q->vertCount; e++) {
                            if (q->neis[e] != opp) continue;
                            const float *vc = &t->verts[q->verts[e] * 3];
                            const float *vd = &t->verts[q->verts[(e + 1) % q->vertCount] * 3];
                            float lo, hi;
                            if (!border_overlap(va, vb, vc, vd, dir, t->header->walkableClimb, &lo,
                                                &hi))
                                continue;
                            const dtPolyRef qref = base | (dtPolyRef)qi;
                            bool have = false;
                            for (unsigned int li = poly->firstLink; li != DT_NULL_LINK && !have;
                                 li = tile->links[li].next)
                                have = tile->links[li].ref == qref;
                            if (have) break;
                            const unsigned int idx = tile->linksFreeList;
                            if (idx == DT_NULL_LINK) break; /* cannot happen: widen_links */
                            tile->linksFreeList = tile->links[idx].next;
                            dtLink *link = &tile->links[idx];
                            link->ref = qref;
                            link->edge = (unsigned char)j;
                            link->side = (unsigned char)dir;
                            const int ax = (dir == 0 || dir == 4) ? 2 : 0;
                            float tmin = (lo - va[ax]) / (vb[ax] - va[ax]);
                            float tmax = (hi - va[ax]) / (vb[ax] - va[ax]);
                            if (tmin > tmax) {
                                float tt = tmin;
                                tmin = tmax;
                                tmax = tt;
                            }
                            link->bmin = (unsigned char)(fminf(fmaxf(tmin, 0.0f), 1.0f) * 255.0f);
                            link->bmax = (unsigned char)(fminf(fmaxf(tmax, 0.0f), 1.0f) * 255.0f);
                            link->next = poly->firstLink;
                            poly->firstLink = idx;
                            break;
                        }
                    }
                }
            }
        }
    }
}

/* A copy of src: every tile's data copied and re-added at its own
 * reference (dtNavMesh::addTile's lastRef), and the salts of empty slots
 * carried over, so a reference that was stale in src stays stale. */
dtNavMesh *clone_nav(const dtNavMesh *src) {
    dtNavMesh *dst = dtAllocNavMesh();
    if (!dst) return NULL;
    if (dtStatusFailed(dst->init(src->getParams()))) goto out_free;
    for (int i = 0; i < src->getMaxTiles(); i++) {
        const dtMeshTile *t = src->getTile(i);
        if (!t->header) continue;
        unsigned char *d = (unsigned char *)dtAlloc(t->dataSize, DT_ALLOC_PERM);
        if (!d) goto out_free;
        memcpy(d, t->data, (size_t)t->dataSize);
        if (dtStatusFailed(
                dst->addTile(d, t->dataSize, DT_TILE_FREE_DATA, src->getTileRef(t), 0))) {
            dtFree(d);
            goto out_free;
        }
    }
    for (int i = 0; i < src->getMaxTiles(); i++) {
        const dtMeshTile *t = src->getTile(i);
        /* The mesh is ours; getTile is only offered const. */
        if (!t->header) const_cast<dtMeshTile *>(tile_at(dst, i))->salt = t->salt;
    }
    repair_links(dst);
    return dst;
out_free:
    dtFreeNavMesh(dst);
    return NULL;
}

/* Brings dst (a clone of some version of src's build) to src, copying only
 * the tile slots that differ. */
dtStatus sync_nav(dtNavMesh *dst, const dtNavMesh *src) {
    const int n = src->getMaxTiles();
    if (dst->getMaxTiles() != n) return DT_FAILURE | DT_INVALID_PARAM;
    for (int i = 0; i < n; i++) {
        const dtMeshTile *s = tile_at(src, i), *d = tile_at(dst, i);
        bool same = (s->header != NULL) == (d->header != NULL) && s->salt == d->salt;
        if (!same && d->header) {
            dtStatus st = dst->removeTile(dst->getTileRef(d), NULL, NULL);
            if (dtStatusFailed(st)) return st;
        }
    }
    for (int i = 0; i < n; i++) {
        const dtMeshTile *s = tile_at(src, i), *d = tile_at(dst, i);
        if (!s->header || d->header) continue;
        unsigned char *data = (unsigned char *)dtAlloc(s->dataSize, DT_ALLOC_PERM);
        if (!data) return DT_FAILURE | DT_OUT_OF_MEMORY;
        memcpy(data, s->data, (size_t)s->dataSize);
        dtStatus st = dst->addTile(data, s->dataSize, DT_TILE_FREE_DATA, src->getTileRef(s), 0);
        if (dtStatusFailed(st)) {
            dtFree(data);
            return st;
        }
    }
    for (int i = 0; i < n; i++) {
        const dtMeshTile *s = src->getTile(i);
        if (!s->header) const_cast<dtMeshTile *>(tile_at(dst, i))->salt = s->salt;
    }
    repair_links(dst);
    return DT_SUCCESS;
}

void run_tasks(const pf_nav_runner *run, uint32_t n, pf_nav_task_fn fn, void *arg) {
    if (n == 0) return;
    if (run && run->run) {
        run->run(run->ctx, n, fn, arg);
        return;
    }
    for (uint32_t i = 0; i < n; i++) fn(arg, i);
}

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
    struct TileOut *out;
};

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

void tile_out_free(TileOut *t) {
    for (int i = 0; i < t->nlayers; i++) {
        dtFree(t->layer[i]);
        dtFree(t->nav[i]);
        t->layer[i] = t->nav[i] = NULL;
    }
    t->nlayers = 0;
}

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
        /* A walkable cell is a floor square at height 0; a voxel column is
         * floor when its centre is in a walkable cell. The span [0, 1) ends
         * at y = bmin.y + ch = 0. */
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
                if (!rcAddSpan(&ctx, *sc.hf, vx, vz, 0, 1, a, 1)) {
                    tile_fail(j, o, PF_ENOMEM, "out of memory (spans)");
                    return;
                }
            }
        }
    } else {
        const pf_nav_geom *geom = j->in->geom;
        uint32_t first = j->tile_first[ti], n = j->tile_first[ti + 1] - first;
        if (n == 0) return; /* nothing here */
        sc.triareas = (unsigned char *)malloc(n);
        if (!sc.triareas) {
            tile_fail(j, o, PF_ENOMEM, "out of memory (triangles)");
            return;
        }
        /* Triangles one by one: the tile's list indexes the whole soup. */
        const float *v = geom->verts;
        for (uint32_t k = 0; k < n; k++) {
            const uint32_t *t = &geom->tris[3 * (size_t)j->tile_tris[first + k]];
            int tri[3] = {(int)t[0], (int)t[1], (int)t[2]};
            unsigned char area = 0;
            rcMarkWalkableTriangles(&ctx, cfg->agent_max_slope, v, (int)geom->nverts, tri, 1,
                                    &area);
            if (!rcRasterizeTriangle(&ctx, &v[3 * (size_t)t[0]], &v[3 * (size_t)t[1]],
                                     &v[3 * (size_t)t[2]], area, *sc.hf, b->walkable_climb)) {
                tile_fail(j, o, PF_ENOMEM, "out of memory (rasterising)");
                return;
            }
            if ((k & 1023) == 1023 && job_abort_check(j, o)) return;
        }
        /* Overhangs, ledges and low ceilings (the sample's three filters). */
        rcFilterLowHangingWalkableObstacles(&ctx, b->walkable_climb, *sc.hf);
        rcFilterLedgeSpans(&ctx, b->walkable_height, b->walkable_climb, *sc.hf);
        rcFilterWalkableLowHeightSpans(&ctx, b->walkable_height, *sc.hf);
    }
    if (job_abort_check(j, o)) return;
    sc.chf = rcAllocCompactHeightfield();
    if (!sc.chf ||
        !rcBuildCompactHeightfield(&ctx, b->walkable_height, b->walkable_climb, *sc.hf, *sc.chf)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (compact heightfield)");
        return;
    }
    rcFreeHeightField(sc.hf);
    sc.hf = nullptr;
    if (b->walkable_radius > 0 && !rcErodeWalkableArea(&ctx, b->walkable_radius, *sc.chf)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (erosion)");
        return;
    }
    mark_area_boxes(b, *sc.chf);
    sc.lset = rcAllocHeightfieldLayerSet();
    if (!sc.lset ||
        !rcBuildHeightfieldLayers(&ctx, *sc.chf, border, b->walkable_height, *sc.lset)) {
        tile_fail(j, o, PF_ENOMEM, "out of memory (height layers)");
        return;
    }
    if (sc.lset->nlayers > MAX_LAYERS) {
        char why[120];
        snprintf(why, sizeof why, "tile (%d, %d) has %d height layers, more than %d", tx, ty,
                 sc.lset->nlayers, MAX_LAYERS);
        tile_fail(j, o, PF_ELIMIT, why);
        return;
    }
    for (int i = 0; i < sc.lset->nlayers; i++) {
        const rcHeightfieldLayer *layer = &sc.lset->layers[i];
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
            return;
        }
        o->layer[o->nlayers] = data;
        o->layer_size[o->nlayers] = size;
        o->nav[o->nlayers] = NULL;
        o->nav_size[o->nlayers] = 0;
        o->npolys[o->nlayers] = 0;
        o->nlayers++;
    }
    rcFreeCompactHeightfield(sc.chf);
    sc.chf = nullptr;
    rcFreeHeightfieldLayerSet(sc.lset);
    sc.lset = nullptr;

    /* Detour tiles from the compressed layers: the code path every later
     * rebuild takes, so a rebuild without obstacles gives the same tile. */
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

pf_status check_box(const pf_nav_box *bx, pf_nav_error *err, const char *field) {
    if (!finite3(bx->bmin) || !finite3(bx->bmax) || fabsf(bx->bmin[0]) > 1e7f ||
        fabsf(bx->bmin[1]) > 1e7f || fabsf(bx->bmin[2]) > 1e7f || fabsf(bx->bmax[0]) > 1e7f ||
        fabsf(bx->bmax[1]) > 1e7f || fabsf(bx->bmax[2]) > 1e7f) {
        set_err(err, field, "a box needs finite min and max within +-1e7");
        return PF_EINVAL;
    }
    for (int k = 0; k < 3; k++)
        if (!(bx->bmin[k] < bx->bmax[k])) {
            set_err(err, field, "a box's min must be below its max on every axis");
            return PF_EINVAL;
        }
    return PF_OK;
}

int cmp_obstacle(const void *a, const void *b) {
    return strcmp(((const pf_nav_obstacle *)a)->id, ((const pf_nav_obstacle *)b)->id);
}

const pf_nav_obstacle *find_obstacle(const pf_nav_obstacle *obs, uint32_t n, const char *id) {
    if (n == 0) return NULL;
    pf_nav_obstacle key;
    snprintf(key.id, sizeof key.id, "%s", id);
    return (const pf_nav_obstacle *)bsearch(&key, obs, n, sizeof *obs, cmp_obstacle);
}

} /* namespace */

extern "C" {

void pf_navmesh_retain(const pf_navmesh *nm) {
    if (nm) __atomic_add_fetch(&nm->refs, 1, __ATOMIC_RELAXED);
}

void pf_navmesh_release(const pf_navmesh *nm) {
    if (!nm) return;
    if (__atomic_sub_fetch(&nm->refs, 1, __ATOMIC_ACQ_REL) == 0)
        version_free(const_cast<pf_navmesh *>(nm));
}

/* Sets up areas on the base: named areas (from the input and a grid's
 * doors) then cost classes; fills cell_area for a grid. */
static pf_status setup_areas(NavBase *b, const pf_nav_build_input *in, const pf_nav_limits *lim,
                             unsigned char **cell_area_out, pf_nav_error *err) {
    const pf_grid *g = in->grid;
    uint32_t ndoors = g ? (uint32_t)pf_grid_door_count(g) : 0;
    uint64_t nnamed = (uint64_t)in->nareas + ndoors;
    uint32_t max_areas = lim->max_areas < PF_NAV_MAX_AREAS ? lim->max_areas : PF_NAV_MAX_AREAS;
    if (nnamed > max_areas) {
        set_err(err, "limits.max_areas", "%llu named areas (with the grid's doors), more than %u",
                (unsigned long long)nnamed, max_areas);
        return PF_ELIMIT;
    }
    uint64_t nboxes = 0;
    for (size_t i = 0; i < in->nareas; i++) {
        const pf_nav_area *a = &in->areas[i];
        char field[64];
        snprintf(field, sizeof field, "areas[%zu].id", i);
        if (!valid_name(a->name)) {
            set_err(err, field, "an area id is 1..63 characters of [A-Za-z0-9_.-]");
            return PF_EINVAL;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(in->areas[k].name, a->name) == 0) {
                set_err(err, field, "area '%s' is declared twice", a->name);
                return PF_EINVAL;
            }
        for (uint32_t d = 0; d < ndoors; d++)
            if (strcmp(pf_grid_door_name(g, (int32_t)d), a->name) == 0) {
                set_err(err, field, "area '%s' has the name of a door of the grid", a->name);
                return PF_EINVAL;
            }
        snprintf(field, sizeof field, "areas[%zu].cost", i);
        if (!(isfinite(a->cost) && a->cost >= 0.01f && a->cost <= 1000.0f)) {
            set_err(err, field, "an area's cost is a number in [0.01, 1000]");
            return PF_EINVAL;
        }
        snprintf(field, sizeof field, "areas[%zu].boxes", i);
        if (a->nboxes == 0) {
            set_err(err, field, "an area needs at least one box");
            return PF_EINVAL;
        }
        for (size_t k = 0; k < a->nboxes; k++) {
            snprintf(field, sizeof field, "areas[%zu].boxes[%zu]", i, k);
            pf_status st = check_box(&a->boxes[k], err, field);
            if (st) return st;
        }
        nboxes += a->nboxes;
    }
    for (uint32_t d = 0; d < ndoors; d++) {
        size_t nc = 0, ne = 0;
        pf_grid_door_cells(g, (int32_t)d, &nc);
        pf_grid_door_edges(g, (int32_t)d, &ne);
        if (ne) {
            set_err(err, "from_grid.doors",
                    "door '%s' has wall edges; navmesh conversion supports doors of cells only",
                    pf_grid_door_name(g, (int32_t)d));
            return PF_EUNSUPPORTED;
        }
        nboxes += nc;
    }
    if (nboxes > lim->max_area_boxes) {
        set_err(err, "limits.max_area_boxes", "%llu area boxes (door cells included), more than %u",
                (unsigned long long)nboxes, lim->max_area_boxes);
        return PF_ELIMIT;
    }

    /* Cost classes of a grid: one per distinct cost > 1. */
    int cost_class[256];
    for (int c = 0; c < 256; c++) cost_class[c] = -1;
    uint32_t nclasses = 0;
    unsigned char *cell_area = NULL;
    if (g) {
        const int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        size_t ncells = (size_t)w * (size_t)h;
        cell_area = (unsigned char *)malloc(ncells);
        if (!cell_area) {
            set_err(err, "from_grid", "out of memory");
            return PF_ENOMEM;
        }
        for (int32_t y = 0; y < h; y++)
            for (int32_t x = 0; x < w; x++) {
                pf_point p = {x, y};
                uint8_t c = pf_grid_cost(g, p);
                if (c > 1 && cost_class[c] < 0) cost_class[c] = (int)nclasses++;
            }
        /* Doors' cells: the cost they have when open. */
        for (uint32_t d = 0; d < ndoors; d++) {
            size_t nc = 0;
            pf_grid_door_cells(g, (int32_t)d, &nc);
            for (size_t k = 0; k < nc; k++) {
                uint8_t c = pf_grid_door_open_cost(g, (int32_t)d, k);
                if (c > 1 && cost_class[c] < 0) cost_class[c] = (int)nclasses++;
            }
        }
        if (nnamed + nclasses > (uint64_t)MAX_AREA_IDS) {
            free(cell_area);
            set_err(err, "from_grid",
                    "%u distinct cell costs and %llu named areas need more than %d area ids",
                    nclasses, (unsigned long long)nnamed, MAX_AREA_IDS);
            return PF_ELIMIT;
        }
    }
    b->nnamed = (uint32_t)nnamed;
    b->nareas = (uint32_t)nnamed + nclasses;
    b->areas = (AreaDef *)calloc(b->nareas ? b->nareas : 1, sizeof(AreaDef));
    if (!b->areas) {
        free(cell_area);
        set_err(err, "areas", "out of memory");
        return PF_ENOMEM;
    }
    uint32_t k = 0;
    for (size_t i = 0; i < in->nareas; i++, k++) {
        const pf_nav_area *a = &in->areas[i];
        AreaDef *ad = &b->areas[k];
        snprintf(ad->name, sizeof ad->name, "%s", a->name);
        ad->id = (unsigned char)(k + 1);
        ad->cost0 = a->cost;
        ad->enabled0 = a->enabled;
        ad->boxes = (pf_nav_box *)malloc(a->nboxes * sizeof(pf_nav_box));
        if (!ad->boxes) goto out_nomem;
        memcpy(ad->boxes, a->boxes, a->nboxes * sizeof(pf_nav_box));
        ad->nboxes = a->nboxes;
    }
    for (uint32_t d = 0; d < ndoors; d++, k++) {
        AreaDef *ad = &b->areas[k];
        size_t nc = 0;
        const pf_point *cells = pf_grid_door_cells(g, (int32_t)d, &nc);
        snprintf(ad->name, sizeof ad->name, "%s", pf_grid_door_name(g, (int32_t)d));
        ad->id = (unsigned char)(k + 1);
        ad->enabled0 = pf_grid_door_is_open(g, (int32_t)d);
        /* The door's cost: its cells' open cost (the largest, when they
         * differ: a door slows an agent at least as much as its worst
         * cell). */
        uint8_t c = 1;
        for (size_t q = 0; q < nc; q++) {
            uint8_t cq = pf_grid_door_open_cost(g, (int32_t)d, q);
            if (cq > c) c = cq;
        }
        ad->cost0 = (float)c;
        ad->boxes = (pf_nav_box *)malloc((nc ? nc : 1) * sizeof(pf_nav_box));
        if (!ad->boxes) goto out_nomem;
        for (size_t q = 0; q < nc; q++) {
            pf_nav_box *bx = &ad->boxes[q];
            bx->bmin[0] = (float)cells[q].x;
            bx->bmin[1] = -1.0f;
            bx->bmin[2] = (float)cells[q].y;
            bx->bmax[0] = (float)cells[q].x + 1.0f;
            bx->bmax[1] = 1.0f;
            bx->bmax[2] = (float)cells[q].y + 1.0f;
        }
        ad->nboxes = nc;
    }
    for (int c = 2; c < 256; c++) {
        if (cost_class[c] < 0) continue;
        AreaDef *ad = &b->areas[nnamed + (uint32_t)cost_class[c]];
        ad->name[0] = '\0';
        ad->id = (unsigned char)(nnamed + (uint32_t)cost_class[c] + 1);
        ad->cost0 = (float)c;
        ad->enabled0 = true;
    }
    if (g) {
        const int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        for (int32_t y = 0; y < h; y++)
            for (int32_t x = 0; x < w; x++) {
                pf_point p = {x, y};
                uint8_t c = pf_grid_cost(g, p);
                cell_area[(size_t)y * (size_t)w + (size_t)x] =
                    c == 0   ? 0
                    : c == 1 ? AREA_GROUND
                             : b->areas[nnamed + (uint32_t)cost_class[c]].id;
            }
        for (uint32_t d = 0; d < ndoors; d++) {
            size_t nc = 0;
            const pf_point *cells = pf_grid_door_cells(g, (int32_t)d, &nc);
            for (size_t q = 0; q < nc; q++)
                cell_area[(size_t)cells[q].y * (size_t)w + (size_t)cells[q].x] =
                    b->areas[in->nareas + d].id;
        }
    }
    *cell_area_out = cell_area;
    return PF_OK;
out_nomem:
    free(cell_area);
    set_err(err, "areas", "out of memory");
    return PF_ENOMEM;
}

pf_status pf_nav_build(const pf_nav_build_input *in, const pf_nav_limits *lim_in,
                       const pf_nav_runner *run, pf_navmesh **out, pf_nav_error *err) {
    *out = NULL;
    if (err) err->field[0] = err->message[0] = '\0';
    pf_nav_limits lim = lim_in ? *lim_in : pf_nav_default_limits();
    const uint64_t t0 = now_us();
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
    const float cs = cfg->cell_size, ch = cfg->cell_height;

    /* World bounds. */
    float bmin[3], bmax[3];
    if (in->grid) {
        bmin[0] = 0;
        bmin[1] = -ch;
        bmin[2] = 0;
        bmax[0] = (float)pf_grid_width(in->grid);
        bmax[1] = cfg->agent_height;
        bmax[2] = (float)pf_grid_height(in->grid);
    } else {
        const pf_nav_geom *g = in->geom;
        if (g->ntris == 0 || !g->verts || !g->tris) {
            set_err(err, "obj", "the geometry has no triangles");
            return PF_EINVAL;
        }
        if (g->nverts > lim.max_vertices) {
            set_err(err, "limits.max_vertices", "%u vertices, more than %u", g->nverts,
                    lim.max_vertices);
            return PF_ELIMIT;
        }
        if (g->ntris > lim.max_triangles) {
            set_err(err, "limits.max_triangles", "%u triangles, more than %u", g->ntris,
                    lim.max_triangles);
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
        {
            /* Recast walks the faces whose normal (v1 - v0) x (v2 - v0)
             * points up: counter-clockwise seen from above. A model with
             * none of those but faces pointing down is wound the other way
             * round: say so rather than build an empty mesh. */
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
        }
        /* Room above the highest floor for the agent. */
        bmax[1] += cfg->agent_height;
        if ((bmax[1] - bmin[1]) / ch > (float)RC_SPAN_MAX_HEIGHT) {
            set_err(err, "cell_height",
                    "the geometry is %g high: more than %d voxels of cell_height %g",
                    (double)(bmax[1] - bmin[1]), RC_SPAN_MAX_HEIGHT, (double)ch);
            return PF_EINVAL;
        }
    }
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
    const int gw = (int)gwd, gh = (int)ghd, ts = cfg->tile_size;
    const int tw = (gw + ts - 1) / ts, th = (gh + ts - 1) / ts;
    uint32_t max_tiles = lim.max_tiles < PF_NAV_MAX_TILES ? lim.max_tiles : PF_NAV_MAX_TILES;
    if ((uint64_t)tw * (uint64_t)th > max_tiles) {
        set_err(err, "limits.max_tiles", "%d x %d tiles of %d voxels, more than %u", tw, th, ts,
                max_tiles);
        return PF_ELIMIT;
    }
    const uint32_t ntiles = (uint32_t)(tw * th);

    void *bmem = calloc(1, sizeof(NavBase));
    if (!bmem) {
        set_err(err, "", "out of memory");
        return PF_ENOMEM;
    }
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
    b->tw = tw;
    b->th = th;
    b->tile_world = (float)ts * cs;
    b->from_grid = in->grid != NULL;
    b->grid_w = in->grid ? pf_grid_width(in->grid) : 0;
    b->grid_h = in->grid ? pf_grid_height(in->grid) : 0;
    b->exact = gw < (1 << 22) - 2 && gh < (1 << 22) - 2;

    unsigned char *cell_area = NULL;
    uint32_t *tile_first = NULL, *tile_tris = NULL;
    TileOut *outs = NULL;
    pf_navmesh *nm = NULL;
    BuildJob job;
    uint32_t nlayers = 0, max_polys = 0;
    int tile_bits, poly_bits;

    st = setup_areas(b, in, &lim, &cell_area, err);
    if (st) goto out_free;

    if (in->geom) {
        /* Triangles by tile, each triangle in every tile (with its border)
         * its x/z bounds overlap. Counted first, so the total is checked
         * before the lists are allocated. */
        const pf_nav_geom *g = in->geom;
        tile_first = (uint32_t *)calloc((size_t)ntiles + 1, sizeof(uint32_t));
        if (!tile_first) goto out_nomem;
        const float bw = (float)b->border * cs;
        uint64_t total = 0;
        const uint64_t cap = 8ull * lim.max_triangles + ntiles;
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
                int tx0 = (int)floorf((x0 - bw - bmin[0]) / b->tile_world);
                int tx1 = (int)floorf((x1 + bw - bmin[0]) / b->tile_world);
                int tz0 = (int)floorf((z0 - bw - bmin[2]) / b->tile_world);
                int tz1 = (int)floorf((z1 + bw - bmin[2]) / b->tile_world);
                if (tx0 < 0) tx0 = 0;
                if (tz0 < 0) tz0 = 0;
                if (tx1 >= tw) tx1 = tw - 1;
                if (tz1 >= th) tz1 = th - 1;
                for (int tz = tz0; tz <= tz1; tz++)
                    for (int tx = tx0; tx <= tx1; tx++) {
                        uint32_t ti = (uint32_t)(tx + tz * tw);
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
                    st = PF_ELIMIT;
                    goto out_free;
                }
            }
            if (pass == 0) {
                for (uint32_t i = 0; i < ntiles; i++) tile_first[i + 1] += tile_first[i];
                tile_tris = (uint32_t *)malloc((size_t)(total ? total : 1) * sizeof(uint32_t));
                if (!tile_tris) goto out_nomem;
            }
        }
        /* The fill advanced each start to the next tile's; shift back. */
        for (uint32_t i = ntiles; i > 0; i--) tile_first[i] = tile_first[i - 1];
        tile_first[0] = 0;
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

    for (uint32_t i = 0; i < ntiles; i++) {
        if (outs[i].st != PF_OK && outs[i].st != PF_ECANCELED) {
            st = outs[i].st;
            const char *field = st == PF_ELIMIT && strstr(outs[i].why, "build_ms")
                                    ? "limits.build_ms"
                                : strstr(outs[i].why, "tile_size") ? "tile_size"
                                : in->grid                         ? "from_grid"
                                                                   : "obj";
            set_err(err, field, "%s", outs[i].why);
            goto out_free;
        }
    }
    if (__atomic_load_n(&job.aborted, __ATOMIC_RELAXED)) {
        st = PF_ELIMIT;
        set_err(err, "limits.build_ms", "the build took longer than limits.build_ms (%u ms)",
                lim.build_ms);
        goto out_free;
    }
    for (uint32_t i = 0; i < ntiles; i++) {
        nlayers += (uint32_t)outs[i].nlayers;
        for (int k = 0; k < outs[i].nlayers; k++)
            if ((uint32_t)outs[i].npolys[k] > max_polys) max_polys = (uint32_t)outs[i].npolys[k];
    }
    if (nlayers > max_tiles) {
        set_err(err, "limits.max_tiles", "%u tile layers, more than %u", nlayers, max_tiles);
        st = PF_ELIMIT;
        goto out_free;
    }
    tile_bits = ilog2(next_pow2(nlayers ? nlayers : 1));
    if (tile_bits < 1) tile_bits = 1;
    poly_bits = REF_BITS - tile_bits;
    if (poly_bits < 1 || (1u << poly_bits) < max_polys) {
        set_err(err, "tile_size",
                "a tile has %u polygons; with %u tile layers a tile may hold %u (32-bit polygon "
                "references): use a smaller tile_size",
                max_polys, nlayers, poly_bits > 0 ? 1u << poly_bits : 0);
        st = PF_ELIMIT;
        goto out_free;
    }
    b->nlayers = nlayers;
    b->max_tile_polys = 1u << poly_bits;

    {
        dtTileCacheParams tcp;
        memset(&tcp, 0, sizeof tcp);
        dtVcopy(tcp.orig, bmin);
        tcp.cs = cs;
        tcp.ch = ch;
        tcp.width = ts;
        tcp.height = ts;
        tcp.walkableHeight = cfg->agent_height;
        tcp.walkableRadius = cfg->agent_radius;
        tcp.walkableClimb = cfg->agent_max_climb;
        tcp.maxSimplificationError = cfg->edge_max_error;
        tcp.maxTiles = (int)(nlayers ? nlayers : 1);
        tcp.maxObstacles = 1; /* obstacles live in the versions, see the header */
        b->tc = dtAllocTileCache();
        if (!b->tc) goto out_nomem;
        if (dtStatusFailed(b->tc->init(&tcp, &b->talloc, &b->comp, &b->tproc))) goto out_nomem;
        for (uint32_t i = 0; i < ntiles; i++)
            for (int k = 0; k < outs[i].nlayers; k++) {
                if (dtStatusFailed(b->tc->addTile(outs[i].layer[k], outs[i].layer_size[k],
                                                  DT_COMPRESSEDTILE_FREE_DATA, NULL)))
                    goto out_nomem;
                b->layer_bytes += (size_t)outs[i].layer_size[k];
                outs[i].layer[k] = NULL; /* the cache owns it */
            }
    }

    memset(&b->nmp, 0, sizeof b->nmp);
    dtVcopy(b->nmp.orig, bmin);
    b->nmp.tileWidth = b->tile_world;
    b->nmp.tileHeight = b->tile_world;
    b->nmp.maxTiles = 1 << tile_bits;
    b->nmp.maxPolys = 1 << poly_bits;

    nm = version_alloc(b);
    if (!nm) goto out_nomem;
    nm->nav = dtAllocNavMesh();
    if (!nm->nav || dtStatusFailed(nm->nav->init(&b->nmp))) goto out_nomem;
    for (uint32_t i = 0; i < ntiles; i++)
        for (int k = 0; k < outs[i].nlayers; k++) {
            if (!outs[i].nav[k]) continue;
            if (dtStatusFailed(
                    nm->nav->addTile(outs[i].nav[k], outs[i].nav_size[k], DT_TILE_FREE_DATA, 0, 0)))
                goto out_nomem;
            outs[i].nav[k] = NULL; /* the mesh owns it */
        }
    repair_links(nm->nav);
    for (uint32_t a = 0; a < b->nareas; a++) {
        nm->area_cost[b->areas[a].id] = b->areas[a].cost0;
        nm->area_enabled[b->areas[a].id] = b->areas[a].enabled0;
    }
    version_set_filter(nm);
    nm->generation = 0;
    nm->rebuilt = nlayers;
    version_count(nm);
    nm->build_us = now_us() - t0;
    *out = nm;
    nm = NULL;
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
    version_free(nm);
    base_release(b);
    return st;
}

uint32_t pf_navmesh_one_way_links(const pf_navmesh *nm) {
    const dtNavMesh *nav = nm->nav;
    uint32_t n = 0;
    for (int i = 0; i < nav->getMaxTiles(); i++) {
        const dtMeshTile *t = tile_at(nav, i);
        if (!t->header) continue;
        const dtPolyRef base = nav->getPolyRefBase(t);
        for (int k = 0; k < t->header->polyCount; k++) {
            const dtPoly *p = &t->polys[k];
            for (unsigned int li = p->firstLink; li != DT_NULL_LINK; li = t->links[li].next) {
                const dtMeshTile *nt = NULL;
                const dtPoly *np = NULL;
                nav->getTileAndPolyByRefUnsafe(t->links[li].ref, &nt, &np);
                bool back = false;
                for (unsigned int m = np->firstLink; m != DT_NULL_LINK && !back;
                     m = nt->links[m].next)
                    back = nt->links[m].ref == (base | (dtPolyRef)k);
                if (!back) n++;
            }
        }
    }
    return n;
}

void pf_navmesh_info(const pf_navmesh *nm, pf_nav_info *o) {
    const NavBase *b = nm->base;
    memset(o, 0, sizeof *o);
    dtVcopy(o->bmin, b->bmin);
    dtVcopy(o->bmax, b->bmax);
    if (b->from_grid) o->bmin[1] = 0;
    o->config = b->cfg;
    o->tiles_x = b->tw;
    o->tiles_z = b->th;
    o->tile_layers = b->nlayers;
    o->tiles = nm->tiles;
    o->polygons = nm->polys;
    o->vertices = nm->verts;
    o->max_tile_polygons = b->max_tile_polys;
    o->mesh_bytes = nm->mesh_bytes;
    o->layer_bytes = b->layer_bytes;
    o->build_us = nm->build_us;
    o->rebuilt_tiles = nm->rebuilt;
    o->obstacles = nm->nobs;
    o->areas = b->nareas;
    o->from_grid = b->from_grid;
    o->grid_w = b->grid_w;
    o->grid_h = b->grid_h;
}

uint32_t pf_navmesh_obstacle_count(const pf_navmesh *nm) { return nm->nobs; }

const pf_nav_obstacle *pf_navmesh_obstacle(const pf_navmesh *nm, uint32_t i) {
    return i < nm->nobs ? &nm->obs[i] : NULL;
}

uint32_t pf_navmesh_area_count(const pf_navmesh *nm) { return nm->base->nareas; }

bool pf_navmesh_area(const pf_navmesh *nm, uint32_t i, pf_nav_area_state *out) {
    if (i >= nm->base->nareas) return false;
    const AreaDef *ad = &nm->base->areas[i];
    out->name = ad->name;
    out->area_id = ad->id;
    out->cost = nm->area_cost[ad->id];
    out->enabled = nm->area_enabled[ad->id];
    out->nboxes = ad->nboxes;
    return true;
}

const void *pf_navmesh_lineage(const pf_navmesh *nm) { return nm->base; }
uint64_t pf_navmesh_generation(const pf_navmesh *nm) { return nm->generation; }

/* Apply: rebuild tasks. */
struct ApplyJob {
    NavBase *b;
    const pf_navmesh *next; /* obstacles and area state of the new version */
    const dtCompressedTileRef *refs;
    unsigned char **data;
    int *size;
    int *npolys;
    dtStatus *st;
    uint64_t deadline_us;
    int aborted;
};

static void apply_task(void *arg, uint32_t i) {
    ApplyJob *j = (ApplyJob *)arg;
    if (__atomic_load_n(&j->aborted, __ATOMIC_RELAXED) || now_us() > j->deadline_us) {
        __atomic_store_n(&j->aborted, 1, __ATOMIC_RELAXED);
        j->st[i] = DT_FAILURE | DT_IN_PROGRESS; /* stands for "timed out" */
        return;
    }
    const dtCompressedTile *ct = j->b->tc->getTileByRef(j->refs[i]);
    j->st[i] = tile_from_layer(j->b, ct, j->next->obs, j->next->nobs, j->next->area_enabled,
                               &j->data[i], &j->size[i], &j->npolys[i]);
    if (dtStatusFailed(j->st[i])) __atomic_store_n(&j->aborted, 1, __ATOMIC_RELAXED);
}

static pf_status check_obstacle(const pf_nav_obstacle *o, size_t i, pf_nav_error *err) {
    char field[64];
    snprintf(field, sizeof field, "obstacles[%zu].id", i);
    if (!valid_name(o->id)) {
        set_err(err, field, "an obstacle id is 1..63 characters of [A-Za-z0-9_.-]");
        return PF_EINVAL;
    }
    if (o->shape == PF_NAV_CYLINDER) {
        snprintf(field, sizeof field, "obstacles[%zu].pos", i);
        if (!finite3(o->pos) || fabsf(o->pos[0]) > 1e7f || fabsf(o->pos[1]) > 1e7f ||
            fabsf(o->pos[2]) > 1e7f) {
            set_err(err, field, "a cylinder's position is 3 finite numbers within +-1e7");
            return PF_EINVAL;
        }
        snprintf(field, sizeof field, "obstacles[%zu].radius", i);
        if (!(isfinite(o->radius) && o->radius > 0 && o->radius <= 1e5f)) {
            set_err(err, field, "a cylinder's radius is a number in (0, 1e5]");
            return PF_EINVAL;
        }
        snprintf(field, sizeof field, "obstacles[%zu].height", i);
        if (!(isfinite(o->height) && o->height > 0 && o->height <= 1e5f)) {
            set_err(err, field, "a cylinder's height is a number in (0, 1e5]");
            return PF_EINVAL;
        }
        return PF_OK;
    }
    if (o->shape == PF_NAV_BOX) {
        snprintf(field, sizeof field, "obstacles[%zu].box", i);
        pf_nav_box bx;
        memcpy(bx.bmin, o->bmin, sizeof bx.bmin);
        memcpy(bx.bmax, o->bmax, sizeof bx.bmax);
        return check_box(&bx, err, field);
    }
    snprintf(field, sizeof field, "obstacles[%zu]", i);
    set_err(err, field, "an obstacle is a cylinder or a box");
    return PF_EINVAL;
}

pf_status pf_nav_apply(const pf_navmesh *prev, const pf_nav_change *ch, const pf_nav_limits *lim_in,
                       const pf_nav_runner *run, pf_navmesh **out, pf_nav_error *err) {
    *out = NULL;
    if (err) err->field[0] = err->message[0] = '\0';
    const uint64_t t0 = now_us();
    pf_nav_limits lim = lim_in ? *lim_in : pf_nav_default_limits();
    NavBase *b = prev->base;
    pf_status st = PF_OK;

    /* Validate everything first: an error changes nothing. */
    for (size_t i = 0; i < ch->nput; i++) {
        st = check_obstacle(&ch->put[i], i, err);
        if (st) return st;
        for (size_t k = 0; k < i; k++)
            if (strcmp(ch->put[k].id, ch->put[i].id) == 0) {
                char field[64];
                snprintf(field, sizeof field, "obstacles[%zu].id", i);
                set_err(err, field, "obstacle '%s' appears twice in one change", ch->put[i].id);
                return PF_EINVAL;
            }
    }
    for (size_t i = 0; i < ch->nremove; i++) {
        char field[64];
        snprintf(field, sizeof field, "remove[%zu]", i);
        const char *id = ch->remove[i];
        if (!valid_name(id) || !find_obstacle(prev->obs, prev->nobs, id)) {
            set_err(err, field, "no obstacle '%.63s' on this map", id ? id : "");
            return PF_EINVAL;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(ch->remove[k], id) == 0) {
                set_err(err, field, "obstacle '%s' is removed twice", id);
                return PF_EINVAL;
            }
        for (size_t k = 0; k < ch->nput; k++)
            if (strcmp(ch->put[k].id, id) == 0) {
                set_err(err, field, "obstacle '%s' is both put and removed", id);
                return PF_EINVAL;
            }
    }
    int area_index[PF_NAV_MAX_AREAS];
    for (size_t i = 0; i < ch->nareas; i++) {
        char field[64];
        const pf_nav_area_change *ac = &ch->areas[i];
        snprintf(field, sizeof field, "areas[%zu].id", i);
        int found = -1;
        for (uint32_t a = 0; a < b->nnamed; a++)
            if (ac->name && strcmp(b->areas[a].name, ac->name) == 0) found = (int)a;
        if (found < 0) {
            set_err(err, field, "no area '%.63s' on this map", ac->name ? ac->name : "");
            return PF_EINVAL;
        }
        for (size_t k = 0; k < i; k++)
            if (area_index[k] == found) {
                set_err(err, field, "area '%s' appears twice in one change", ac->name);
                return PF_EINVAL;
            }
        area_index[i] = found;
        if (ac->set_cost && !(isfinite(ac->cost) && ac->cost >= 0.01f && ac->cost <= 1000.0f)) {
            snprintf(field, sizeof field, "areas[%zu].cost", i);
            set_err(err, field, "an area's cost is a number in [0.01, 1000]");
            return PF_EINVAL;
        }
        if (i + 1 >= PF_NAV_MAX_AREAS && i + 1 < ch->nareas) {
            set_err(err, "areas", "more than %u area changes", PF_NAV_MAX_AREAS);
            return PF_EINVAL;
        }
    }

    /* The new obstacle list: prev minus removed and moved, plus put. */
    size_t nnew = 0;
    for (uint32_t i = 0; i < prev->nobs; i++) {
        bool gone = false;
        for (size_t k = 0; k < ch->nremove && !gone; k++)
            gone = strcmp(prev->obs[i].id, ch->remove[k]) == 0;
        if (!gone) nnew++;
    }
    for (size_t i = 0; i < ch->nput; i++)
        if (!find_obstacle(prev->obs, prev->nobs, ch->put[i].id)) nnew++;
    if (nnew > lim.max_obstacles) {
        set_err(err, "limits.max_obstacles", "%zu obstacles, more than %u", nnew,
                lim.max_obstacles);
        return PF_ELIMIT;
    }

    pf_navmesh *nm = version_alloc(b);
    unsigned char *touched = NULL;
    dtCompressedTileRef *refs = NULL;
    unsigned char **data = NULL;
    int *size = NULL, *npolys = NULL;
    dtStatus *tst = NULL;
    uint32_t nrefs = 0;
    ApplyJob job;
    if (!nm) goto out_nomem;
    nm->obs = (pf_nav_obstacle *)malloc((nnew ? nnew : 1) * sizeof(pf_nav_obstacle));
    touched = (unsigned char *)calloc((size_t)b->tw * (size_t)b->th, 1);
    if (!nm->obs || !touched) goto out_nomem;
    for (uint32_t i = 0; i < prev->nobs; i++) {
        const pf_nav_obstacle *o = &prev->obs[i];
        bool gone = false, moved = false;
        for (size_t k = 0; k < ch->nremove && !gone; k++) gone = strcmp(o->id, ch->remove[k]) == 0;
        for (size_t k = 0; k < ch->nput && !moved; k++) moved = strcmp(o->id, ch->put[k].id) == 0;
        if (gone || moved) {
            float omin[3], omax[3];
            obstacle_bounds(b, o, omin, omax);
            mark_tiles(b, omin, omax, touched);
        }
        if (!gone && !moved) nm->obs[nm->nobs++] = *o;
    }
    for (size_t i = 0; i < ch->nput; i++) {
        pf_nav_obstacle o = ch->put[i];
        o.id[PF_NAV_NAME_MAX - 1] = '\0';
        float omin[3], omax[3];
        obstacle_bounds(b, &o, omin, omax);
        mark_tiles(b, omin, omax, touched);
        nm->obs[nm->nobs++] = o;
    }
    qsort(nm->obs, nm->nobs, sizeof *nm->obs, cmp_obstacle);

    memcpy(nm->area_cost, prev->area_cost, sizeof nm->area_cost);
    memcpy(nm->area_enabled, prev->area_enabled, sizeof nm->area_enabled);
    for (size_t i = 0; i < ch->nareas; i++) {
        const pf_nav_area_change *ac = &ch->areas[i];
        const AreaDef *ad = &b->areas[area_index[i]];
        if (ac->set_cost) nm->area_cost[ad->id] = ac->cost;
        if (ac->set_enabled && ac->enabled != prev->area_enabled[ad->id]) {
            nm->area_enabled[ad->id] = ac->enabled;
            /* Flags are baked into the tiles: rebuild the area's tiles. */
            for (size_t k = 0; k < ad->nboxes; k++)
                mark_tiles(b, ad->boxes[k].bmin, ad->boxes[k].bmax, touched);
        }
    }
    version_set_filter(nm);

    /* The touched tiles' layers. */
    {
        uint32_t cap = 0;
        for (int i = 0; i < b->tw * b->th; i++) cap += touched[i] ? MAX_LAYERS : 0;
        refs = (dtCompressedTileRef *)malloc((cap ? cap : 1) * sizeof *refs);
        if (!refs) goto out_nomem;
        for (int tz = 0; tz < b->th; tz++)
            for (int tx = 0; tx < b->tw; tx++)
                if (touched[tx + tz * b->tw])
                    nrefs += (uint32_t)b->tc->getTilesAt(tx, tz, refs + nrefs, MAX_LAYERS);
    }
    data = (unsigned char **)calloc(nrefs ? nrefs : 1, sizeof *data);
    size = (int *)calloc(nrefs ? nrefs : 1, sizeof *size);
    npolys = (int *)calloc(nrefs ? nrefs : 1, sizeof *npolys);
    tst = (dtStatus *)calloc(nrefs ? nrefs : 1, sizeof *tst);
    if (!data || !size || !npolys || !tst) goto out_nomem;
    job.b = b;
    job.next = nm;
    job.refs = refs;
    job.data = data;
    job.size = size;
    job.npolys = npolys;
    job.st = tst;
    job.deadline_us = t0 + (uint64_t)lim.build_ms * 1000u;
    job.aborted = 0;
    run_tasks(run, nrefs, apply_task, &job);
    for (uint32_t i = 0; i < nrefs; i++) {
        if (!dtStatusFailed(tst[i])) {
            if ((uint32_t)npolys[i] > b->max_tile_polys) {
                set_err(err, "obstacles",
                        "the change leaves a tile with %d polygons, more than the %u a tile of "
                        "this mesh may hold",
                        npolys[i], b->max_tile_polys);
                st = PF_ELIMIT;
                goto out_free;
            }
            continue;
        }
        if (dtStatusDetail(tst[i], DT_IN_PROGRESS)) {
            set_err(err, "limits.build_ms", "rebuilding %u tiles took longer than %u ms", nrefs,
                    lim.build_ms);
            st = PF_ELIMIT;
        } else if (dtStatusDetail(tst[i], DT_BUFFER_TOO_SMALL)) {
            set_err(err, "obstacles",
                    "the change makes a tile too intricate for Detour's tile builder (more than "
                    "255 regions or a polygon hole too large)");
            st = PF_ELIMIT;
        } else {
            set_err(err, "", "out of memory");
            st = PF_ENOMEM;
        }
        goto out_free;
    }

    nm->nav = clone_nav(prev->nav);
    if (!nm->nav) goto out_nomem;
    for (uint32_t i = 0; i < nrefs; i++) {
        const dtCompressedTile *ct = b->tc->getTileByRef(refs[i]);
        dtTileRef old = nm->nav->getTileRefAt(ct->header->tx, ct->header->ty, ct->header->tlayer);
        if (old && dtStatusFailed(nm->nav->removeTile(old, NULL, NULL))) goto out_nomem;
    }
    for (uint32_t i = 0; i < nrefs; i++) {
        if (!data[i]) continue;
        if (dtStatusFailed(nm->nav->addTile(data[i], size[i], DT_TILE_FREE_DATA, 0, 0)))
            goto out_nomem;
        data[i] = NULL;
    }
    repair_links(nm->nav);
    nm->generation = prev->generation + 1;
    nm->rebuilt = nrefs;
    version_count(nm);
    nm->build_us = now_us() - t0;
    *out = nm;
    nm = NULL;
    st = PF_OK;
    goto out_free;

out_nomem:
    st = PF_ENOMEM;
    set_err(err, "", "out of memory");
out_free:
    if (data)
        for (uint32_t i = 0; i < nrefs; i++) dtFree(data[i]);
    free(tst);
    free(npolys);
    free(size);
    free(data);
    free(refs);
    free(touched);
    version_free(nm);
    return st;
}

/* Queries. */

pf_status pf_nav_query_create(uint32_t max_nodes, pf_nav_query **out) {
    *out = NULL;
    if (max_nodes < 1 || max_nodes > 65535) return PF_ERANGE;
    pf_nav_query *q = (pf_nav_query *)calloc(1, sizeof *q);
    if (!q) return PF_ENOMEM;
    q->max_nodes = max_nodes;
    q->max_points = 2 * max_nodes + 2;
    q->q = dtAllocNavMeshQuery();
    q->poly = poly_scratch_create(max_nodes);
    q->polys = (dtPolyRef *)malloc(max_nodes * sizeof(dtPolyRef));
    q->points = (float *)malloc((size_t)q->max_points * 3 * sizeof(float));
    q->flags = (unsigned char *)malloc(q->max_points);
    q->point_refs = (dtPolyRef *)malloc(q->max_points * sizeof(dtPolyRef));
    if (!q->q || !q->poly || !q->polys || !q->points || !q->flags || !q->point_refs) {
        pf_nav_query_destroy(q);
        return PF_ENOMEM;
    }
    *out = q;
    return PF_OK;
}

void pf_nav_query_destroy(pf_nav_query *q) {
    if (!q) return;
    dtFreeNavMeshQuery(q->q);
    poly_scratch_destroy(q->poly);
    free(q->polys);
    free(q->points);
    free(q->flags);
    free(q->point_refs);
    free(q);
}

static pf_status bind(pf_nav_query *q, const pf_navmesh *nm) {
    if (q->bound == nm->nav) return PF_OK;
    if (dtStatusFailed(q->q->init(nm->nav, (int)q->max_nodes))) return PF_ENOMEM;
    q->bound = nm->nav;
    return PF_OK;
}

void pf_navmesh_default_extents(const pf_navmesh *nm, float e[3]) {
    const pf_nav_config *c = &nm->base->cfg;
    float xz = fmaxf(2.0f * c->agent_radius, 4.0f * c->cell_size);
    e[0] = xz;
    e[1] = c->agent_height;
    e[2] = xz;
}

static pf_status nearest(pf_nav_query *q, const pf_navmesh *nm, const float p[3],
                         const float extents[3], dtPolyRef *ref, float snapped[3]) {
    float e[3];
    if (extents) {
        if (!finite3(extents) || extents[0] <= 0 || extents[1] <= 0 || extents[2] <= 0)
            return PF_ERANGE;
        dtVcopy(e, extents);
    } else {
        pf_navmesh_default_extents(nm, e);
    }
    if (!finite3(p)) return PF_ERANGE;
    pf_status st = bind(q, nm);
    if (st) return st;
    *ref = 0;
    dtStatus ds = q->q->findNearestPoly(p, e, &nm->filter, ref, snapped);
    if (dtStatusFailed(ds)) return PF_ERANGE;
    if (!*ref) return PF_EBLOCKED;
    /* findNearestPoly picks among polygons whose bounds overlap the box;
     * the point found must itself be in the box. */
    for (int k = 0; k < 3; k++)
        if (fabsf(snapped[k] - p[k]) > e[k]) return PF_EBLOCKED;
    return PF_OK;
}

pf_status pf_nav_nearest(pf_nav_query *q, const pf_navmesh *nm, const float p[3],
                         const float extents[3], float snapped[3]) {
    dtPolyRef ref;
    return nearest(q, nm, p, extents, &ref, snapped);
}

/* The straight path along polys[0..npolys) from spos to epos into out. */
static pf_status straight(pf_nav_query *q, const pf_navmesh *nm, const float spos[3],
                          const float epos[3], const dtPolyRef *polys, int npolys,
                          pf_nav_path *out) {
    int n = 0;
    int opts = nm->costly ? DT_STRAIGHTPATH_AREA_CROSSINGS : 0;
    dtStatus ds = q->q->findStraightPath(spos, epos, polys, npolys, q->points, q->flags,
                                         q->point_refs, &n, (int)q->max_points, opts);
    if (dtStatusFailed(ds)) return PF_ENOMEM;
    out->points = q->points;
    out->npoints = (uint32_t)n;
    out->length = 0;
    out->cost = 0;
    for (int i = 0; i + 1 < n; i++) {
        double len = dtVdist(&q->points[3 * i], &q->points[3 * (i + 1)]);
        out->length += len;
        float c = 1.0f;
        const dtMeshTile *tile = NULL;
        const dtPoly *poly = NULL;
        if (nm->costly && q->point_refs[i] &&
            dtStatusSucceed(nm->nav->getTileAndPolyByRef(q->point_refs[i], &tile, &poly)))
            c = nm->area_cost[poly->getArea()];
        out->cost += len * c;
    }
    return PF_OK;
}

static pf_status find_polys(pf_nav_query *q, const pf_navmesh *nm, const float start[3],
                            const float goal[3], const float extents[3], pf_nav_algorithm algo,
                            pf_nav_path *out, const char **which, int *npolys) {
    memset(out, 0, sizeof *out);
    if (which) *which = NULL;
    dtPolyRef sref, gref;
    pf_status st = nearest(q, nm, start, extents, &sref, out->start);
    if (st) {
        if (which) *which = "start";
        return st;
    }
    st = nearest(q, nm, goal, extents, &gref, out->goal);
    if (st) {
        if (which) *which = "goal";
        return st;
    }
    int n = 0;
    dtStatus ds = DT_FAILURE;
    if (algo == PF_NAV_POLYANYA) {
        uint32_t ex = 0;
        ds = polyanya(q, nm, sref, gref, out->start, out->goal, q->polys, &n, (int)q->max_nodes,
                      &ex);
        out->expanded = ex;
        /* Unreachable, out of nodes or a world too large for it: Detour
         * finds the closest reachable polygon (and is bounded by the same
         * node budget). */
        if (dtStatusSucceed(ds)) {
            out->exact = true;
            out->polygons = (uint32_t)n;
            *npolys = n;
            return PF_OK;
        }
        out->out_of_nodes = dtStatusDetail(ds, DT_OUT_OF_NODES);
    }
    ds = q->q->findPath(sref, gref, out->start, out->goal, &nm->filter, q->polys, &n,
                        (int)q->max_nodes);
    if (dtStatusFailed(ds) || n == 0) return PF_ENOMEM;
    out->expanded += (uint32_t)q->q->getNodePool()->getNodeCount();
    out->out_of_nodes = out->out_of_nodes || dtStatusDetail(ds, DT_OUT_OF_NODES);
    out->partial = q->polys[n - 1] != gref || dtStatusDetail(ds, DT_PARTIAL_RESULT);
    if (q->polys[n - 1] != gref) {
        /* The corridor ends short of the goal: end at the point of its last
         * polygon closest to the goal (NavMeshTesterTool). */
        float c[3];
        if (dtStatusSucceed(q->q->closestPointOnPoly(q->polys[n - 1], goal, c, NULL)))
            dtVcopy(out->goal, c);
        /* That point is reachable: the exact corridor to it. */
        if (algo == PF_NAV_POLYANYA && !out->out_of_nodes) {
            const dtPolyRef last = q->polys[n - 1];
            int n2 = 0;
            uint32_t ex = 0;
            ds = polyanya(q, nm, sref, last, out->start, out->goal, q->polys, &n2,
                          (int)q->max_nodes, &ex);
            out->expanded += ex;
            if (dtStatusSucceed(ds)) {
                out->exact = true;
                n = n2;
            } else {
                /* polyanya used q->polys: plan Detour's corridor again. */
                ds = q->q->findPath(sref, last, out->start, out->goal, &nm->filter, q->polys, &n,
                                    (int)q->max_nodes);
                if (dtStatusFailed(ds) || n == 0) return PF_ENOMEM;
            }
        }
    }
    out->polygons = (uint32_t)n;
    *npolys = n;
    return PF_OK;
}

pf_status pf_nav_find_path(pf_nav_query *q, const pf_navmesh *nm, const float start[3],
                           const float goal[3], const float extents[3], pf_nav_algorithm algo,
                           pf_nav_path *out, const char **which) {
    int n = 0;
    pf_status st = find_polys(q, nm, start, goal, extents, algo, out, which, &n);
    if (st) return st;
    return straight(q, nm, out->start, out->goal, q->polys, n, out);
}

pf_status pf_nav_raycast(pf_nav_query *q, const pf_navmesh *nm, const float from[3],
                         const float to[3], float *t, uint32_t *visited) {
    dtPolyRef ref;
    float s[3], probe[3];
    if (!finite3(to) || !finite3(from)) return PF_ERANGE;
    /* A waypoint is often a polygon corner, on the boundary of several
     * polygons: start in the one the ray enters, found a hair along it. */
    const float len = dtVdist(from, to);
    dtVlerp(probe, from, to, len > 0 ? fminf(1e-3f / len, 0.5f) : 0.0f);
    pf_status st = nearest(q, nm, probe, NULL, &ref, s);
    if (st) return st;
    float normal[3];
    int n = 0;
    dtStatus ds =
        q->q->raycast(ref, from, to, &nm->filter, t, normal, q->polys, &n, (int)q->max_nodes);
    if (dtStatusFailed(ds)) return PF_ERANGE;
    if (*t == FLT_MAX) *t = 1.0f;
    if (visited) *visited = (uint32_t)n;
    return PF_OK;
}

float pf_nav_distance_to_mesh(pf_nav_query *q, const pf_navmesh *nm, const float p[3]) {
    dtPolyRef ref;
    float s[3];
    if (nearest(q, nm, p, NULL, &ref, s) != PF_OK) return -1.0f;
    return dtVdist(p, s);
}

/* Debian builds Detour with its assertions on. dtPathCorridor::setCorridor
 * asserts npath < maxPath, one short of what it can hold, and DetourCrowd
 * hands it paths of exactly its 256-polygon limit (a long path through a
 * finely cut mesh): the default assert() would abort the server. That one
 * assertion is known to be harmless (the copy fits) and is counted; any
 * other failed Detour assertion still aborts, as it would have. The hook
 * is process-wide library state, installed once. */
static unsigned long assert_tolerated; /* atomic */

static void detour_assert(const char *expr, const char *file, int line) {
    if (strcmp(expr, "npath < m_maxPath") == 0) {
        __atomic_add_fetch(&assert_tolerated, 1, __ATOMIC_RELAXED);
        return;
    }
    fprintf(stderr, "Detour assertion failed: %s (%s:%d)\n", expr, file, line);
    abort();
}

static pthread_once_t assert_once = PTHREAD_ONCE_INIT;

static void install_assert_hook_once(void) { dtAssertFailSetCustom(detour_assert); }

static void install_assert_hook(void) { pthread_once(&assert_once, install_assert_hook_once); }

unsigned long pf_nav_tolerated_asserts(void) {
    return __atomic_load_n(&assert_tolerated, __ATOMIC_RELAXED);
}

/* Corridors. */
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

pf_status pf_nav_corridor_create(uint32_t max_polys, pf_nav_corridor **out) {
    *out = NULL;
    if (max_polys < 16 || max_polys > 65535) return PF_ERANGE;
    void *mem = calloc(1, sizeof(pf_nav_corridor));
    if (!mem) return PF_ENOMEM;
    install_assert_hook();
    pf_nav_corridor *c = new (mem) pf_nav_corridor();
    c->max_polys = max_polys;
    if (!c->corr.init((int)max_polys)) {
        pf_nav_corridor_destroy(c);
        return PF_ENOMEM;
    }
    *out = c;
    return PF_OK;
}

void pf_nav_corridor_destroy(pf_nav_corridor *c) {
    if (!c) return;
    pf_navmesh_release(c->nm);
    c->~pf_nav_corridor();
    free(c);
}

static pf_status corridor_plan(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                               const float start[3], pf_nav_path *out, const char **which) {
    int n = 0;
    const float *ext = c->has_extents ? c->extents : NULL;
    pf_status st = find_polys(q, nm, start, c->goal, ext, c->algo, out, which, &n);
    if (st) return st;
    /* setCorridor takes one fewer than the corridor holds (see above). */
    if ((uint32_t)n >= c->max_polys) {
        n = (int)c->max_polys - 1;
        out->partial = true;
        out->polygons = (uint32_t)n;
        float e[3];
        if (dtStatusSucceed(q->q->closestPointOnPoly(q->polys[n - 1], c->goal, e, NULL)))
            dtVcopy(out->goal, e);
    }
    c->corr.reset(q->polys[0], out->start);
    c->corr.setCorridor(out->goal, q->polys, n);
    if (c->nm != nm) {
        pf_navmesh_retain(nm);
        pf_navmesh_release(c->nm);
        c->nm = nm;
    }
    c->planned = true;
    c->partial = out->partial;
    c->out_of_nodes = out->out_of_nodes;
    c->exact = out->exact;
    return straight(q, nm, out->start, out->goal, q->polys, n, out);
}

pf_status pf_nav_corridor_plan(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                               const float start[3], const float goal[3], const float extents[3],
                               pf_nav_algorithm algo, pf_nav_path *out, const char **which) {
    c->algo = algo;
    if (!finite3(goal)) {
        if (which) *which = "goal";
        return PF_ERANGE;
    }
    if (extents) {
        if (!finite3(extents) || extents[0] <= 0 || extents[1] <= 0 || extents[2] <= 0) {
            if (which) *which = "extents";
            return PF_ERANGE;
        }
        dtVcopy(c->extents, extents);
        c->has_extents = true;
    } else {
        c->has_extents = false;
    }
    float saved[3];
    dtVcopy(saved, c->goal);
    dtVcopy(c->goal, goal);
    pf_status st = corridor_plan(c, q, nm, start, out, which);
    if (st) dtVcopy(c->goal, saved);
    return st;
}

pf_status pf_nav_corridor_move(pf_nav_corridor *c, pf_nav_query *q, const pf_navmesh *nm,
                               const float pos[3], float slack, pf_nav_path *out, bool *replanned,
                               const char **which) {
    *replanned = false;
    if (which) *which = NULL;
    if (!finite3(pos)) {
        if (which) *which = "position";
        return PF_ERANGE;
    }
    if (!c->planned) return PF_EINVAL;
    if (c->nm == nm) {
        pf_status st = bind(q, nm);
        if (st) return st;
        if (c->corr.movePosition(pos, q->q, &nm->filter) &&
            dtVdist(c->corr.getPos(), pos) <= slack &&
            c->corr.isValid(c->corr.getPathCount(), q->q, &nm->filter)) {
            memset(out, 0, sizeof *out);
            dtVcopy(out->start, c->corr.getPos());
            dtVcopy(out->goal, c->corr.getTarget());
            out->polygons = (uint32_t)c->corr.getPathCount();
            out->partial = c->partial;
            out->out_of_nodes = c->out_of_nodes;
            out->exact = c->exact;
            return straight(q, nm, c->corr.getPos(), c->corr.getTarget(), c->corr.getPath(),
                            c->corr.getPathCount(), out);
        }
    }
    *replanned = true;
    return corridor_plan(c, q, nm, pos, out, which);
}

size_t pf_nav_corridor_memory(const pf_nav_corridor *c) {
    return sizeof(*c) + (size_t)c->max_polys * sizeof(dtPolyRef);
}

void pf_nav_corridor_position(const pf_nav_corridor *c, float pos[3], float goal[3]) {
    dtVcopy(pos, c->corr.getPos());
    dtVcopy(goal, c->goal);
}

/* Crowds. */
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

pf_nav_agent_params pf_nav_default_agent(const pf_navmesh *nm) {
    pf_nav_agent_params p;
    p.radius = nm->base->cfg.agent_radius;
    p.height = nm->base->cfg.agent_height;
    p.max_speed = 3.5f;
    p.max_accel = 8.0f;
    p.separation = 2.0f;
    return p;
}

static void crowd_set_filter(pf_nav_crowd *c) {
    dtQueryFilter *f = c->crowd->getEditableFilter(0);
    f->setIncludeFlags(FLAG_WALK);
    f->setExcludeFlags(0);
    for (int i = 0; i < 64; i++) f->setAreaCost(i, c->ver->area_cost[i]);
}

pf_status pf_nav_crowd_create(const pf_navmesh *nm, uint32_t max_agents, pf_nav_crowd **out) {
    *out = NULL;
    if (max_agents < 1 || max_agents > 65535) return PF_ERANGE;
    if (!(nm->base->cfg.agent_radius > 0)) return PF_EUNSUPPORTED;
    install_assert_hook();
    pf_nav_crowd *c = (pf_nav_crowd *)calloc(1, sizeof *c);
    if (!c) return PF_ENOMEM;
    c->max_agents = max_agents;
    c->target = (float *)calloc(max_agents, 3 * sizeof(float));
    c->has_target = (bool *)calloc(max_agents, sizeof(bool));
    c->nav = clone_nav(nm->nav);
    c->crowd = dtAllocCrowd();
    if (!c->target || !c->has_target || !c->nav || !c->crowd ||
        !c->crowd->init((int)max_agents, nm->base->cfg.agent_radius, c->nav)) {
        pf_nav_crowd_destroy(c);
        return PF_ENOMEM;
    }
    pf_navmesh_retain(nm);
    c->ver = nm;
    crowd_set_filter(c);
    /* CrowdTool's "good" quality (45 samples): adaptive sampling, 7
     * divisions, 2 rings, depth 3. */
    dtObstacleAvoidanceParams ap;
    memcpy(&ap, c->crowd->getObstacleAvoidanceParams(0), sizeof ap);
    ap.velBias = 0.5f;
    ap.adaptiveDivs = 7;
    ap.adaptiveRings = 2;
    ap.adaptiveDepth = 3;
    c->crowd->setObstacleAvoidanceParams(0, &ap);
    *out = c;
    return PF_OK;
}

void pf_nav_crowd_destroy(pf_nav_crowd *c) {
    if (!c) return;
    dtFreeCrowd(c->crowd);
    dtFreeNavMesh(c->nav);
    pf_navmesh_release(c->ver);
    free(c->target);
    free(c->has_target);
    free(c);
}

static bool crowd_nearest(pf_nav_crowd *c, const float p[3], dtPolyRef *ref, float s[3]) {
    if (!finite3(p)) return false;
    const dtNavMeshQuery *nq = c->crowd->getNavMeshQuery();
    *ref = 0;
    dtStatus ds =
        nq->findNearestPoly(p, c->crowd->getQueryHalfExtents(), c->crowd->getFilter(0), ref, s);
    return dtStatusSucceed(ds) && *ref != 0;
}

static bool valid_agent(const pf_nav_crowd *c, const pf_nav_agent_params *p, float mesh_radius,
                        const char **which) {
#define CHECK(cond, name)                                                                          \
    if (!(cond)) {                                                                                 \
        if (which) *which = name;                                                                  \
        return false;                                                                              \
    }
    (void)c;
    CHECK(isfinite(p->radius) && p->radius > 0 && p->radius <= mesh_radius, "radius");
    CHECK(isfinite(p->height) && p->height > 0 && p->height <= 100, "height");
    CHECK(isfinite(p->max_speed) && p->max_speed > 0 && p->max_speed <= 1000, "max_speed");
    CHECK(isfinite(p->max_accel) && p->max_accel > 0 && p->max_accel <= 10000, "max_accel");
    CHECK(isfinite(p->separation) && p->separation >= 0 && p->separation <= 100, "separation");
#undef CHECK
    return true;
}

pf_status pf_nav_crowd_add(pf_nav_crowd *c, const float pos[3], const float *target,
                           const pf_nav_agent_params *p, int32_t *id, const char **which) {
    *id = -1;
    if (which) *which = NULL;
    if (!valid_agent(c, p, c->ver->base->cfg.agent_radius, which)) return PF_EINVAL;
    if (c->count >= c->max_agents) return PF_ELIMIT;
    dtPolyRef ref, tref = 0;
    float s[3], ts[3];
    if (!crowd_nearest(c, pos, &ref, s)) {
        if (which) *which = "position";
        return finite3(pos) ? PF_EBLOCKED : PF_ERANGE;
    }
    if (target && !crowd_nearest(c, target, &tref, ts)) {
        if (which) *which = "target";
        return finite3(target) ? PF_EBLOCKED : PF_ERANGE;
    }
    dtCrowdAgentParams ap;
    memset(&ap, 0, sizeof ap);
    ap.radius = p->radius;
    ap.height = p->height;
    ap.maxSpeed = p->max_speed;
    ap.maxAcceleration = p->max_accel;
    /* DetourCrowd takes at most 32 agents from its proximity grid in the
     * query box and keeps the 6 nearest: CrowdTool's 12 radii miss the
     * nearest neighbours in a dense crowd (agents then walk through each
     * other); 8 radii keep them in. */
    ap.collisionQueryRange = p->radius * 8.0f;
    ap.pathOptimizationRange = p->radius * 30.0f;
    ap.separationWeight = p->separation;
    ap.updateFlags = DT_CROWD_ANTICIPATE_TURNS | DT_CROWD_OPTIMIZE_VIS | DT_CROWD_OPTIMIZE_TOPO |
                     DT_CROWD_OBSTACLE_AVOIDANCE | (p->separation > 0 ? DT_CROWD_SEPARATION : 0);
    ap.obstacleAvoidanceType = 0;
    ap.queryFilterType = 0;
    int idx = c->crowd->addAgent(s, &ap);
    if (idx < 0) return PF_ELIMIT;
    c->count++;
    c->has_target[idx] = false;
    if (target) {
        if (!c->crowd->requestMoveTarget(idx, tref, ts)) {
            c->crowd->removeAgent(idx);
            c->count--;
            return PF_ENOMEM;
        }
        dtVcopy(&c->target[3 * idx], target);
        c->has_target[idx] = true;
    }
    *id = idx;
    return PF_OK;
}

static bool is_agent(pf_nav_crowd *c, int32_t id) {
    return id >= 0 && (uint32_t)id < c->max_agents && c->crowd->getAgent(id)->active;
}

pf_status pf_nav_crowd_remove(pf_nav_crowd *c, int32_t id) {
    if (!is_agent(c, id)) return PF_ERANGE;
    c->crowd->removeAgent(id);
    c->has_target[id] = false;
    c->count--;
    return PF_OK;
}

pf_status pf_nav_crowd_set_target(pf_nav_crowd *c, int32_t id, const float *target) {
    if (!is_agent(c, id)) return PF_ERANGE;
    if (!target) {
        c->crowd->resetMoveTarget(id);
        c->has_target[id] = false;
        return PF_OK;
    }
    dtPolyRef ref;
    float s[3];
    if (!crowd_nearest(c, target, &ref, s)) return finite3(target) ? PF_EBLOCKED : PF_ERANGE;
    if (!c->crowd->requestMoveTarget(id, ref, s)) return PF_ENOMEM;
    dtVcopy(&c->target[3 * id], target);
    c->has_target[id] = true;
    return PF_OK;
}

pf_status pf_nav_crowd_sync(pf_nav_crowd *c, const pf_navmesh *latest) {
    if (!latest || latest == c->ver) return PF_OK;
    if (latest->base != c->ver->base) return PF_EINVAL;
    if (latest->generation > c->ver->generation) {
        if (dtStatusFailed(sync_nav(c->nav, latest->nav))) return PF_ENOMEM;
        pf_navmesh_retain(latest);
        pf_navmesh_release(c->ver);
        c->ver = latest;
        crowd_set_filter(c);
    }
    return PF_OK;
}

pf_status pf_nav_crowd_step(pf_nav_crowd *c, float dt, const pf_navmesh *latest) {
    if (!(isfinite(dt) && dt > 0 && dt <= 1)) return PF_ERANGE;
    pf_status st = pf_nav_crowd_sync(c, latest);
    if (st) return st;
    c->crowd->update(dt, NULL);
    c->time += dt;
    return PF_OK;
}

const char *pf_nav_agent_state_str(pf_nav_agent_state s) {
    switch (s) {
    case PF_NAV_AGENT_IDLE:
        return "idle";
    case PF_NAV_AGENT_MOVING:
        return "moving";
    case PF_NAV_AGENT_PLANNING:
        return "planning";
    case PF_NAV_AGENT_ARRIVED:
        return "arrived";
    case PF_NAV_AGENT_PARTIAL:
        return "partial";
    case PF_NAV_AGENT_FAILED:
        return "failed";
    case PF_NAV_AGENT_OFF_MESH:
        return "off_mesh";
    }
    return "unknown";
}

bool pf_nav_crowd_agent(const pf_nav_crowd *c, int32_t id, pf_nav_agent *out) {
    if (id < 0 || (uint32_t)id >= c->max_agents) return false;
    const dtCrowdAgent *ag = c->crowd->getAgent(id);
    if (!ag->active) return false;
    dtVcopy(out->pos, ag->npos);
    dtVcopy(out->vel, ag->vel);
    dtVcopy(out->target, &c->target[3 * id]);
    out->radius = ag->params.radius;
    out->has_target = c->has_target[id];
    if (ag->state == DT_CROWDAGENT_STATE_INVALID) {
        out->state = PF_NAV_AGENT_OFF_MESH;
        return true;
    }
    switch (ag->targetState) {
    case DT_CROWDAGENT_TARGET_NONE:
    case DT_CROWDAGENT_TARGET_VELOCITY:
        out->state = c->has_target[id] ? PF_NAV_AGENT_MOVING : PF_NAV_AGENT_IDLE;
        break;
    case DT_CROWDAGENT_TARGET_FAILED:
        out->state = PF_NAV_AGENT_FAILED;
        break;
    case DT_CROWDAGENT_TARGET_VALID: {
        if (ag->partial) {
            out->state = PF_NAV_AGENT_PARTIAL;
            break;
        }
        float d = dtVdist2D(ag->npos, ag->targetPos);
        out->state = d <= ag->params.radius ? PF_NAV_AGENT_ARRIVED : PF_NAV_AGENT_MOVING;
        break;
    }
    default:
        out->state = PF_NAV_AGENT_PLANNING;
        break;
    }
    return true;
}

uint32_t pf_nav_crowd_capacity(const pf_nav_crowd *c) { return c->max_agents; }
uint32_t pf_nav_crowd_count(const pf_nav_crowd *c) { return c->count; }
double pf_nav_crowd_time(const pf_nav_crowd *c) { return c->time; }
const pf_navmesh *pf_nav_crowd_version(const pf_nav_crowd *c) { return c->ver; }

size_t pf_nav_crowd_memory(const pf_nav_crowd *c) {
    size_t bytes = sizeof *c + (size_t)c->max_agents * (3 * sizeof(float) + sizeof(bool));
    bytes += (size_t)c->max_agents * sizeof(dtCrowdAgent);
    for (int i = 0; i < c->nav->getMaxTiles(); i++) {
        const dtMeshTile *t = tile_at(c->nav, i);
        if (t->header) bytes += (size_t)t->dataSize;
    }
    return bytes + (size_t)c->nav->getMaxTiles() * sizeof(dtMeshTile);
}

} /* extern "C" */
