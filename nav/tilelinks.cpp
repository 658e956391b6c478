/* tilelinks.cpp -- the tile-border links Detour leaves out: room for them
 * in a tile's data (widen_links) and the links themselves (repair_links).
 */
#include "nav_internal.h"

namespace pfnav {

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
    // Detour's tile layout: the vertices follow the header.
    // cppcheck-suppress invalidPointerCast
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

} /* namespace pfnav */
