/* version.cpp -- versions of a build (navmesh.h "Versions"): their
 * references, the copies of a Detour mesh one version makes of another's,
 * and what a version tells the map info.
 */
#include "nav_internal.h"

namespace pfnav {

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

} /* namespace pfnav */

using namespace pfnav;

extern "C" {

void pf_navmesh_retain(const pf_navmesh *nm) {
    if (nm) __atomic_add_fetch(&nm->refs, 1, __ATOMIC_RELAXED);
}

void pf_navmesh_release(const pf_navmesh *nm) {
    if (!nm) return;
    if (__atomic_sub_fetch(&nm->refs, 1, __ATOMIC_ACQ_REL) == 0)
        version_free(const_cast<pf_navmesh *>(nm));
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

} /* extern "C" */
