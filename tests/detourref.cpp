/* detourref.cpp -- see detourref.h. RecastDemo's two sample pipelines and its
 * tester tool's path query, step by step as the samples make them
 * (RecastDemo/Source/Sample_SoloMesh.cpp handleBuild,
 * Sample_TileMesh.cpp handleSettings, handleBuild and buildTileMesh,
 * NavMeshTesterTool.cpp recalc), on Debian's Recast/Detour. Nothing here
 * comes from nav/.
 */
#include "detourref.h"

#include <float.h>
#include <math.h>
#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <DetourCommon.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshBuilder.h>
#include <DetourNavMeshQuery.h>
#include <Recast.h>

namespace {

char last_error[256];

void fail(const char *what) { snprintf(last_error, sizeof last_error, "%s", what); }

/* Sample_TileMesh's helpers. */
unsigned int next_pow2(unsigned int v) {
    v--;
    v |= v >> 1;
    v |= v >> 2;
    v |= v >> 4;
    v |= v >> 8;
    v |= v >> 16;
    return v + 1;
}

unsigned int ilog2(unsigned int v) {
    unsigned int r = (v > 0xffff) << 4;
    v >>= r;
    unsigned int shift = (v > 0xff) << 3;
    v >>= shift;
    r |= shift;
    shift = (v > 0xf) << 2;
    v >>= shift;
    r |= shift;
    shift = (v > 0x3) << 1;
    v >>= shift;
    r |= shift;
    r |= (v >> 1);
    return r;
}

/* What one tile build allocates. */
struct Scratch {
    rcHeightfield *solid = nullptr;
    rcCompactHeightfield *chf = nullptr;
    rcContourSet *cset = nullptr;
    rcPolyMesh *pmesh = nullptr;
    rcPolyMeshDetail *dmesh = nullptr;
    unsigned char *triareas = nullptr;
    int *tris = nullptr;
    ~Scratch() {
        rcFreeHeightField(solid);
        rcFreeCompactHeightfield(chf);
        rcFreeContourSet(cset);
        rcFreePolyMesh(pmesh);
        rcFreePolyMeshDetail(dmesh);
        delete[] triareas;
        delete[] tris;
    }
};

struct Geom {
    const float *verts;
    int nverts;
    const int *tris;
    int ntris;
    const detourref_link *links;
    int nlinks;
};

/* Regions by the sample's partition setting. */
bool partition(rcContext *ctx, const detourref_settings *s, rcCompactHeightfield &chf, int border,
               int min_area, int merge_area) {
    if (s->partition == 1) return rcBuildRegionsMonotone(ctx, chf, border, min_area, merge_area);
    if (s->partition == 2) return rcBuildLayerRegions(ctx, chf, border, min_area);
    return rcBuildDistanceField(ctx, chf) && rcBuildRegions(ctx, chf, border, min_area, merge_area);
}

/* The triangles whose x/z bounds overlap [bmin, bmax] (what the samples'
 * chunky mesh hands a tile), in input order. */
int tile_tris(const Geom *g, const float *bmin, const float *bmax, int *out) {
    int n = 0;
    for (int t = 0; t < g->ntris; t++) {
        float lo[3], hi[3];
        const float *v0 = &g->verts[g->tris[3 * t] * 3];
        dtVcopy(lo, v0);
        dtVcopy(hi, v0);
        for (int k = 1; k < 3; k++) {
            dtVmin(lo, &g->verts[g->tris[3 * t + k] * 3]);
            dtVmax(hi, &g->verts[g->tris[3 * t + k] * 3]);
        }
        if (hi[0] < bmin[0] || lo[0] > bmax[0] || hi[2] < bmin[2] || lo[2] > bmax[2]) continue;
        memcpy(&out[3 * n], &g->tris[3 * t], 3 * sizeof(int));
        n++;
    }
    return n;
}

/* buildTileMesh (border > 0) or handleBuild's body (border 0) over
 * heightfield bounds bmin..bmax of w x h cells. NULL when nothing is
 * walkable or a step fails (then *failed). */
unsigned char *build_tile(const Geom *g, const detourref_settings *s, const float *bmin,
                          const float *bmax, int w, int h, int border, int tx, int ty, int *size,
                          int *npolys, bool *failed) {
    rcContext ctx(false);
    rcConfig cfg;
    Scratch sc;
    *failed = false;
    *npolys = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.cs = s->cell_size;
    cfg.ch = s->cell_height;
    cfg.walkableSlopeAngle = s->agent_max_slope;
    cfg.walkableHeight = (int)ceilf(s->agent_height / cfg.ch);
    cfg.walkableClimb = (int)floorf(s->agent_max_climb / cfg.ch);
    cfg.walkableRadius = (int)ceilf(s->agent_radius / cfg.cs);
    cfg.maxEdgeLen = (int)(s->edge_max_len / s->cell_size);
    cfg.maxSimplificationError = s->edge_max_error;
    cfg.minRegionArea = (int)rcSqr(s->region_min_size);
    cfg.mergeRegionArea = (int)rcSqr(s->region_merge_size);
    cfg.maxVertsPerPoly = s->verts_per_poly;
    cfg.detailSampleDist = s->detail_sample_dist < 0.9f ? 0 : s->cell_size * s->detail_sample_dist;
    cfg.detailSampleMaxError = s->cell_height * s->detail_sample_max_error;
    sc.solid = rcAllocHeightfield();
    if (!sc.solid || !rcCreateHeightfield(&ctx, *sc.solid, w, h, bmin, bmax, cfg.cs, cfg.ch))
        goto out_fail;
    sc.tris = new (std::nothrow) int[3 * (size_t)g->ntris + 3];
    sc.triareas = new (std::nothrow) unsigned char[(size_t)g->ntris + 1];
    if (!sc.tris || !sc.triareas) goto out_fail;
    {
        const int nt = tile_tris(g, bmin, bmax, sc.tris);
        if (nt == 0) return NULL;
        memset(sc.triareas, 0, (size_t)nt);
        rcMarkWalkableTriangles(&ctx, cfg.walkableSlopeAngle, g->verts, g->nverts, sc.tris, nt,
                                sc.triareas);
        if (!rcRasterizeTriangles(&ctx, g->verts, g->nverts, sc.tris, sc.triareas, nt, *sc.solid,
                                  cfg.walkableClimb))
            goto out_fail;
    }
    rcFilterLowHangingWalkableObstacles(&ctx, cfg.walkableClimb, *sc.solid);
    rcFilterLedgeSpans(&ctx, cfg.walkableHeight, cfg.walkableClimb, *sc.solid);
    rcFilterWalkableLowHeightSpans(&ctx, cfg.walkableHeight, *sc.solid);
    sc.chf = rcAllocCompactHeightfield();
    if (!sc.chf ||
        !rcBuildCompactHeightfield(&ctx, cfg.walkableHeight, cfg.walkableClimb, *sc.solid,
                                   *sc.chf) ||
        !rcErodeWalkableArea(&ctx, cfg.walkableRadius, *sc.chf) ||
        !partition(&ctx, s, *sc.chf, border, cfg.minRegionArea, cfg.mergeRegionArea))
        goto out_fail;
    sc.cset = rcAllocContourSet();
    if (!sc.cset ||
        !rcBuildContours(&ctx, *sc.chf, cfg.maxSimplificationError, cfg.maxEdgeLen, *sc.cset))
        goto out_fail;
    if (sc.cset->nconts == 0) return NULL;
    sc.pmesh = rcAllocPolyMesh();
    sc.dmesh = rcAllocPolyMeshDetail();
    if (!sc.pmesh || !sc.dmesh ||
        !rcBuildPolyMesh(&ctx, *sc.cset, cfg.maxVertsPerPoly, *sc.pmesh) ||
        !rcBuildPolyMeshDetail(&ctx, *sc.pmesh, *sc.chf, cfg.detailSampleDist,
                               cfg.detailSampleMaxError, *sc.dmesh))
        goto out_fail;
    if (sc.pmesh->npolys == 0) return NULL;
    {
        for (int i = 0; i < sc.pmesh->npolys; i++) sc.pmesh->flags[i] = 1;
        float *lv = new (std::nothrow) float[6 * (size_t)g->nlinks + 6];
        float *lr = new (std::nothrow) float[(size_t)g->nlinks + 1];
        unsigned char *ld = new (std::nothrow) unsigned char[(size_t)g->nlinks + 1];
        unsigned char *la = new (std::nothrow) unsigned char[(size_t)g->nlinks + 1];
        unsigned short *lf = new (std::nothrow) unsigned short[(size_t)g->nlinks + 1];
        unsigned int *lu = new (std::nothrow) unsigned int[(size_t)g->nlinks + 1];
        for (int i = 0; lv && lr && ld && la && lf && lu && i < g->nlinks; i++) {
            dtVcopy(&lv[6 * i], g->links[i].start);
            dtVcopy(&lv[6 * i + 3], g->links[i].end);
            lr[i] = g->links[i].radius;
            ld[i] = g->links[i].bidir ? DT_OFFMESH_CON_BIDIR : 0;
            la[i] = RC_WALKABLE_AREA;
            lf[i] = 1;
            lu[i] = 1000 + (unsigned)i;
        }
        dtNavMeshCreateParams p;
        memset(&p, 0, sizeof p);
        p.verts = sc.pmesh->verts;
        p.vertCount = sc.pmesh->nverts;
        p.polys = sc.pmesh->polys;
        p.polyAreas = sc.pmesh->areas;
        p.polyFlags = sc.pmesh->flags;
        p.polyCount = sc.pmesh->npolys;
        p.nvp = sc.pmesh->nvp;
        p.detailMeshes = sc.dmesh->meshes;
        p.detailVerts = sc.dmesh->verts;
        p.detailVertsCount = sc.dmesh->nverts;
        p.detailTris = sc.dmesh->tris;
        p.detailTriCount = sc.dmesh->ntris;
        p.offMeshConVerts = lv;
        p.offMeshConRad = lr;
        p.offMeshConDir = ld;
        p.offMeshConAreas = la;
        p.offMeshConFlags = lf;
        p.offMeshConUserID = lu;
        p.offMeshConCount = g->nlinks;
        p.walkableHeight = s->agent_height;
        p.walkableRadius = s->agent_radius;
        p.walkableClimb = s->agent_max_climb;
        p.tileX = tx;
        p.tileY = ty;
        dtVcopy(p.bmin, sc.pmesh->bmin);
        dtVcopy(p.bmax, sc.pmesh->bmax);
        p.cs = cfg.cs;
        p.ch = cfg.ch;
        p.buildBvTree = true;
        unsigned char *data = NULL;
        const bool ok = lv && lr && ld && la && lf && lu && dtCreateNavMeshData(&p, &data, size);
        delete[] lv;
        delete[] lr;
        delete[] ld;
        delete[] la;
        delete[] lf;
        delete[] lu;
        if (!ok) goto out_fail;
        *npolys = sc.pmesh->npolys;
        return data;
    }
out_fail:
    fail("a Recast step failed");
    *failed = true;
    return NULL;
}

} /* namespace */

struct detourref {
    dtNavMesh *nav = nullptr;
    dtNavMeshQuery *q = nullptr;
    dtQueryFilter filter;
    int polys = 0, tiles = 0;
    ~detourref() {
        dtFreeNavMeshQuery(q);
        dtFreeNavMesh(nav);
    }
};

namespace {

/* Sample_SoloMesh: one tile of the whole bounds. */
bool build_solo(detourref *r, const Geom *g, const detourref_settings *s, const float *bmin,
                const float *bmax) {
    int w, h, size = 0, np = 0;
    bool failed;
    rcCalcGridSize(bmin, bmax, s->cell_size, &w, &h);
    unsigned char *data = build_tile(g, s, bmin, bmax, w, h, 0, 0, 0, &size, &np, &failed);
    if (!data) {
        if (!failed) fail("nothing walkable");
        return false;
    }
    r->nav = dtAllocNavMesh();
    if (!r->nav || dtStatusFailed(r->nav->init(data, size, DT_TILE_FREE_DATA))) {
        dtFree(data);
        fail("dtNavMesh::init");
        return false;
    }
    r->polys = np;
    r->tiles = 1;
    return true;
}

/* Sample_TileMesh: handleSettings' bits, buildAllTiles' loop. */
bool build_tiled(detourref *r, const Geom *g, const detourref_settings *s, const float *bmin,
                 const float *bmax) {
    int gw, gh;
    rcCalcGridSize(bmin, bmax, s->cell_size, &gw, &gh);
    const int ts = s->tile_size, tw = (gw + ts - 1) / ts, th = (gh + ts - 1) / ts;
    int tile_bits = (int)ilog2(next_pow2((unsigned)(tw * th)));
    if (tile_bits > 14) tile_bits = 14;
    const int poly_bits = 22 - tile_bits;
    dtNavMeshParams params;
    memset(&params, 0, sizeof params);
    dtVcopy(params.orig, bmin);
    params.tileWidth = (float)ts * s->cell_size;
    params.tileHeight = (float)ts * s->cell_size;
    params.maxTiles = 1 << tile_bits;
    params.maxPolys = 1 << poly_bits;
    r->nav = dtAllocNavMesh();
    if (!r->nav || dtStatusFailed(r->nav->init(&params))) {
        fail("dtNavMesh::init");
        return false;
    }
    const float tcs = (float)ts * s->cell_size;
    const int border = (int)ceilf(s->agent_radius / s->cell_size) + 3;
    for (int y = 0; y < th; y++)
        for (int x = 0; x < tw; x++) {
            float tbmin[3], tbmax[3];
            tbmin[0] = bmin[0] + (float)x * tcs;
            tbmin[1] = bmin[1];
            tbmin[2] = bmin[2] + (float)y * tcs;
            tbmax[0] = bmin[0] + (float)(x + 1) * tcs;
            tbmax[1] = bmax[1];
            tbmax[2] = bmin[2] + (float)(y + 1) * tcs;
            tbmin[0] -= (float)border * s->cell_size;
            tbmin[2] -= (float)border * s->cell_size;
            tbmax[0] += (float)border * s->cell_size;
            tbmax[2] += (float)border * s->cell_size;
            const int w = ts + border * 2;
            int size = 0, np = 0;
            bool failed;
            unsigned char *data =
                build_tile(g, s, tbmin, tbmax, w, w, border, x, y, &size, &np, &failed);
            if (failed) return false;
            if (!data) continue;
            if (dtStatusFailed(r->nav->addTile(data, size, DT_TILE_FREE_DATA, 0, 0))) {
                dtFree(data);
                fail("dtNavMesh::addTile");
                return false;
            }
            r->polys += np;
            r->tiles++;
        }
    return true;
}

uint64_t *rand_state;

float frand() {
    uint64_t x = *rand_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *rand_state = x;
    return (float)((x >> 40) & 0xffffff) / 16777216.0f;
}

} /* namespace */

extern "C" {

detourref_settings detourref_demo_settings(void) {
    detourref_settings s;
    s.cell_size = 0.3f;
    s.cell_height = 0.2f;
    s.agent_height = 2.0f;
    s.agent_radius = 0.6f;
    s.agent_max_climb = 0.9f;
    s.agent_max_slope = 45.0f;
    s.region_min_size = 8;
    s.region_merge_size = 20;
    s.edge_max_len = 12.0f;
    s.edge_max_error = 1.3f;
    s.verts_per_poly = 6;
    s.detail_sample_dist = 6.0f;
    s.detail_sample_max_error = 1.0f;
    s.partition = 0;
    s.tile_size = 0;
    return s;
}

const char *detourref_error(void) { return last_error; }

detourref *detourref_build(const float *verts, int nverts, const int *tris, int ntris,
                           const detourref_settings *s, const detourref_link *links, int nlinks) {
    Geom g = {verts, nverts, tris, ntris, links, nlinks};
    float bmin[3], bmax[3];
    detourref *r = new (std::nothrow) detourref();
    if (!r) return NULL;
    rcCalcBounds(verts, nverts, bmin, bmax);
    bool ok = s->tile_size ? build_tiled(r, &g, s, bmin, bmax) : build_solo(r, &g, s, bmin, bmax);
    if (ok) {
        r->q = dtAllocNavMeshQuery();
        ok = r->q && dtStatusSucceed(r->q->init(r->nav, 65535));
        if (!ok) fail("dtNavMeshQuery::init");
    }
    if (!ok) {
        delete r;
        return NULL;
    }
    r->filter.setIncludeFlags(0xffff);
    r->filter.setExcludeFlags(0);
    return r;
}

void detourref_free(detourref *r) { delete r; }

int detourref_polygons(const detourref *r) { return r->polys; }
int detourref_tiles(const detourref *r) { return r->tiles; }

bool detourref_path(detourref *r, const float s[3], const float e[3], const float ext[3],
                    bool *reached, float *pts, int max, int *n, double *len, int *links) {
    dtPolyRef sref = 0, eref = 0;
    float sp[3], ep[3];
    static const int MAX_POLYS = 4096;
    dtPolyRef *polys = new (std::nothrow) dtPolyRef[MAX_POLYS];
    unsigned char *flags = new (std::nothrow) unsigned char[max];
    dtPolyRef *refs = new (std::nothrow) dtPolyRef[max];
    bool ok = polys && flags && refs;
    *reached = false;
    *n = 0;
    *len = 0;
    *links = 0;
    ok = ok && dtStatusSucceed(r->q->findNearestPoly(s, ext, &r->filter, &sref, sp)) && sref &&
         dtStatusSucceed(r->q->findNearestPoly(e, ext, &r->filter, &eref, ep)) && eref;
    int np = 0;
    if (ok) {
        r->q->findPath(sref, eref, sp, ep, &r->filter, polys, &np, MAX_POLYS);
        ok = np > 0;
    }
    if (ok) {
        *reached = polys[np - 1] == eref;
        float epos[3];
        dtVcopy(epos, ep);
        if (!*reached) r->q->closestPointOnPoly(polys[np - 1], ep, epos, 0);
        r->q->findStraightPath(sp, epos, polys, np, pts, flags, refs, n, max, 0);
        for (int i = 0; i + 1 < *n; i++) *len += dtVdist(&pts[3 * i], &pts[3 * i + 3]);
        for (int i = 0; i < *n; i++) *links += (flags[i] & DT_STRAIGHTPATH_OFFMESH_CONNECTION) != 0;
    }
    delete[] polys;
    delete[] flags;
    delete[] refs;
    return ok;
}

/* A polygon's place in the flood's arrays: its tile's slot times the
 * largest polygon count plus its index. */
static int flood_index(const dtNavMesh *nav, dtPolyRef ref, int per_tile) {
    return (int)nav->decodePolyIdTile(ref) * per_tile + (int)nav->decodePolyIdPoly(ref);
}

/* Breadth-first from `from` over adjacency adj (CSR first/to), marking
 * seen. */
static void flood_from(int from, const int *first, const int *to, unsigned char *seen, int *queue) {
    int head = 0, tail = 0;
    seen[from] = 1;
    queue[tail++] = from;
    while (head < tail) {
        const int a = queue[head++];
        for (int k = first[a]; k < first[a + 1]; k++)
            if (!seen[to[k]]) {
                seen[to[k]] = 1;
                queue[tail++] = to[k];
            }
    }
}

/* The filter's flag test (dtQueryFilter::passFilter without its areas). */
static bool passes(const dtQueryFilter *f, const dtPoly *p) {
    return (p->flags & f->getIncludeFlags()) != 0 && (p->flags & f->getExcludeFlags()) == 0;
}

bool detourref_sight(detourref *r, const float a[3], const float b[3], const float ext[3],
                     bool *visible) {
    dtPolyRef aref = 0, bref = 0, polys[4096];
    float p[3], t = 0, normal[3];
    int n = 0;
    *visible = false;
    float q[3];
    if (dtStatusFailed(r->q->findNearestPoly(a, ext, &r->filter, &aref, p)) || !aref ||
        dtStatusFailed(r->q->findNearestPoly(b, ext, &r->filter, &bref, q)) || !bref)
        return false;
    /* The nearest point must itself be in the box (findNearestPoly takes
     * any polygon whose bounds overlap it). */
    for (int k = 0; k < 3; k++)
        if (fabsf(p[k] - a[k]) > ext[k] || fabsf(q[k] - b[k]) > ext[k]) return false;
    if (aref == bref) {
        *visible = true;
        return true;
    }
    if (dtStatusFailed(r->q->raycast(aref, a, b, &r->filter, &t, normal, polys, &n, 4096)))
        return false;
    *visible = t == FLT_MAX && n > 0 && polys[n - 1] == bref;
    return true;
}

bool detourref_flood(detourref *r, const float s[3], const float e[3], const float ext[3],
                     bool *reach, bool *joined) {
    dtPolyRef sref = 0, eref = 0;
    float p[3];
    *reach = *joined = false;
    if (dtStatusFailed(r->q->findNearestPoly(s, ext, &r->filter, &sref, p)) || !sref ||
        dtStatusFailed(r->q->findNearestPoly(e, ext, &r->filter, &eref, p)) || !eref)
        return false;
    const dtNavMesh *nav = r->nav;
    int per_tile = 1;
    for (int i = 0; i < nav->getMaxTiles(); i++) {
        const dtMeshTile *t = nav->getTile(i);
        if (t && t->header && t->header->polyCount > per_tile) per_tile = t->header->polyCount;
    }
    const int n = nav->getMaxTiles() * per_tile;
    /* Every link between polygons the filter lets in as an edge (a, b):
     * counted, then stored; then CSR adjacency one way and both. */
    int nedges = 0;
    int *ea = nullptr, *eb = nullptr;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            ea = (int *)malloc((size_t)(nedges + 1) * sizeof(int));
            eb = (int *)malloc((size_t)(nedges + 1) * sizeof(int));
            if (!ea || !eb) break;
            nedges = 0;
        }
        for (int i = 0; i < nav->getMaxTiles(); i++) {
            const dtMeshTile *t = nav->getTile(i);
            if (!t || !t->header) continue;
            const dtPolyRef base = nav->getPolyRefBase(t);
            for (int k = 0; k < t->header->polyCount; k++) {
                const dtPolyRef ref = base | (dtPolyRef)k;
                if (!passes(&r->filter, &t->polys[k])) continue;
                for (unsigned int l = t->polys[k].firstLink; l != DT_NULL_LINK;
                     l = t->links[l].next) {
                    const dtPolyRef nb = t->links[l].ref;
                    const dtMeshTile *nt = nullptr;
                    const dtPoly *np = nullptr;
                    if (!nb || dtStatusFailed(nav->getTileAndPolyByRef(nb, &nt, &np)) ||
                        !passes(&r->filter, np))
                        continue;
                    if (pass == 1) {
                        ea[nedges] = flood_index(nav, ref, per_tile);
                        eb[nedges] = flood_index(nav, nb, per_tile);
                    }
                    nedges++;
                }
            }
        }
    }
    int *first = (int *)calloc((size_t)n + 1, sizeof(int));
    int *to = (int *)malloc((size_t)(2 * nedges + 1) * sizeof(int));
    int *fill = (int *)calloc((size_t)n + 1, sizeof(int));
    int *queue = (int *)malloc((size_t)n * sizeof(int));
    unsigned char *seen = (unsigned char *)calloc((size_t)n, 1);
    bool ok = ea && eb && first && to && fill && queue && seen;
    const int si = flood_index(nav, sref, per_tile), ei = flood_index(nav, eref, per_tile);
    for (int both = 0; ok && both < 2; both++) {
        memset(first, 0, ((size_t)n + 1) * sizeof(int));
        for (int k = 0; k < nedges; k++) {
            first[ea[k] + 1]++;
            if (both) first[eb[k] + 1]++;
        }
        for (int a = 0; a < n; a++) first[a + 1] += first[a];
        memcpy(fill, first, ((size_t)n + 1) * sizeof(int));
        for (int k = 0; k < nedges; k++) {
            to[fill[ea[k]]++] = eb[k];
            if (both) to[fill[eb[k]]++] = ea[k];
        }
        memset(seen, 0, (size_t)n);
        flood_from(si, first, to, seen, queue);
        *(both ? joined : reach) = seen[ei] != 0;
    }
    free(ea);
    free(eb);
    free(first);
    free(to);
    free(fill);
    free(queue);
    free(seen);
    return ok;
}

bool detourref_random_point(detourref *r, uint64_t *rng, float out[3]) {
    dtPolyRef ref = 0;
    rand_state = rng;
    return dtStatusSucceed(r->q->findRandomPoint(&r->filter, frand, &ref, out)) && ref;
}

} /* extern "C" */
