/* version.cpp -- versions of a build (navmesh.h "Versions") and their agent
 * type views: references, the copies of a Detour mesh one version makes of
 * another's, the state every view shares, and what a version tells the map
 * info.
 */
#include "nav_internal.h"

namespace pfnav {

namespace {

pf_navmesh *view_new(NavBase *base, uint32_t t) {
    void *mem = calloc(1, sizeof(pf_navmesh));
    if (!mem) return NULL;
    pf_navmesh *nm = new (mem) pf_navmesh();
    nm->base = base;
    nm->type = t;
    nm->at = &base->agents[t];
    for (int i = 0; i < 64; i++) {
        nm->area_cost[i] = 1.0f;
        nm->area_enabled[i] = true;
    }
    // The placement new value-initialised every member (cppcheck reads
    // them as unset).
    // cppcheck-suppress uninitStructMember
    return nm;
}

void view_delete(pf_navmesh *v) {
    dtFreeNavMesh(v->nav);
    view_free(v->view);
    components_free(v);
    v->~pf_navmesh();
    free(v);
}

} /* namespace */

void version_free(pf_navmesh *nm) {
    if (!nm) return;
    NavBase *b = nm->base;
    if (nm->types)
        for (uint32_t t = 1; t < b->nagents; t++)
            if (nm->types[t]) view_delete(nm->types[t]);
    free(nm->types);
    free(nm->obs);
    free(nm->links);
    free(nm->link_area);
    free(nm->lclass);
    view_delete(nm);
    base_release(b);
}

pf_navmesh *version_alloc(NavBase *base) {
    pf_navmesh *nm = view_new(base, 0);
    if (!nm) return NULL;
    nm->refs = 1;
    nm->root = nm;
    __atomic_add_fetch(&base->refs, 1, __ATOMIC_RELAXED);
    nm->types = (pf_navmesh **)calloc(base->nagents, sizeof(pf_navmesh *));
    if (!nm->types) goto out_free;
    nm->types[0] = nm;
    for (uint32_t t = 1; t < base->nagents; t++) {
        if (!(nm->types[t] = view_new(base, t))) goto out_free;
        nm->types[t]->root = nm;
    }
    return nm;
out_free:
    version_free(nm);
    return NULL;
}

void version_set_filter(pf_navmesh *nm) {
    /* Link cost classes: their area's state, its cost times theirs. */
    for (uint32_t k = 0; k < nm->nlclass; k++) {
        const LinkClass *c = &nm->lclass[k];
        nm->area_cost[c->id] = nm->area_cost[c->base] * c->factor;
        nm->area_enabled[c->id] = nm->area_enabled[c->base];
    }
    nm->costly = false;
    for (int i = 0; i < 64; i++)
        if (nm->area_cost[i] != 1.0f) nm->costly = true;
    for (uint32_t t = 0; t < nm->base->nagents; t++) {
        pf_navmesh *v = nm->types[t];
        if (v != nm) {
            memcpy(v->area_cost, nm->area_cost, sizeof v->area_cost);
            memcpy(v->area_enabled, nm->area_enabled, sizeof v->area_enabled);
            v->costly = nm->costly;
        }
        v->filter.setIncludeFlags(FLAG_WALK);
        v->filter.setExcludeFlags(0);
        for (int i = 0; i < 64; i++) v->filter.setAreaCost(i, nm->area_cost[i]);
    }
}

TileState version_tile_state(const pf_navmesh *root) {
    TileState s;
    s.obs = root->obs;
    s.nobs = root->nobs;
    s.area_enabled = root->area_enabled;
    s.links = root->links;
    s.link_area = root->link_area;
    s.nlinks = root->nlinks;
    return s;
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
    if (nm) __atomic_add_fetch(&nm->root->refs, 1, __ATOMIC_RELAXED);
}

void pf_navmesh_release(const pf_navmesh *nm) {
    if (!nm) return;
    if (__atomic_sub_fetch(&nm->root->refs, 1, __ATOMIC_ACQ_REL) == 0) version_free(nm->root);
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
            /* Off-mesh links are one-way by design when asked to be. */
            if (p->getType() == DT_POLYTYPE_OFFMESH_CONNECTION) continue;
            for (unsigned int li = p->firstLink; li != DT_NULL_LINK; li = t->links[li].next) {
                const dtMeshTile *nt = NULL;
                const dtPoly *np = NULL;
                nav->getTileAndPolyByRefUnsafe(t->links[li].ref, &nt, &np);
                if (np->getType() == DT_POLYTYPE_OFFMESH_CONNECTION) continue;
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
    const pf_navmesh *root = nm->root;
    memset(o, 0, sizeof *o);
    dtVcopy(o->bmin, b->bmin);
    dtVcopy(o->bmax, b->bmax);
    if (b->from_grid) o->bmin[1] = 0;
    o->config = b->cfg;
    o->tiles_x = b->tw;
    o->tiles_z = b->th;
    o->tile_layers = nm->tiles;
    o->tiles = nm->tiles;
    o->polygons = nm->polys;
    o->vertices = nm->verts;
    o->max_tile_polygons = nm->at->max_tile_polys;
    o->mesh_bytes = nm->mesh_bytes;
    for (uint32_t t = 0; t < b->nagents; t++) o->kept_bytes += b->agents[t].kept_bytes;
    o->layer_bytes = o->kept_bytes;
    o->ground_bytes = b->ground.bytes;
    o->total_bytes = root->total_bytes;
    o->shared_bytes = b->shared_bytes;
    o->build_us = root->build_us;
    o->rebuilt_tiles = root->rebuilt;
    o->obstacles = root->nobs;
    o->areas = b->nareas;
    o->links = root->nlinks;
    o->agent_types = b->nagents;
    o->from_grid = b->from_grid;
    o->grid_w = b->grid_w;
    o->grid_h = b->grid_h;
}

uint32_t pf_navmesh_agent_type_count(const pf_navmesh *nm) { return nm->base->nagents; }

const pf_navmesh *pf_navmesh_agent_type(const pf_navmesh *nm, uint32_t i) {
    return i < nm->base->nagents ? nm->root->types[i] : NULL;
}

const pf_navmesh *pf_navmesh_agent_type_named(const pf_navmesh *nm, const char *name) {
    if (!name) return NULL;
    for (uint32_t t = 0; t < nm->base->nagents; t++)
        if (strcmp(nm->base->agents[t].name, name) == 0) return nm->root->types[t];
    return NULL;
}

void pf_navmesh_agent_info(const pf_navmesh *view, pf_nav_agent_info *o) {
    const AgentType *at = view->at;
    o->name = at->name;
    o->radius = at->radius;
    o->height = at->height;
    o->max_climb = at->climb;
    o->max_slope = at->slope;
    o->polygons = view->polys;
    o->mesh_bytes = view->mesh_bytes;
    o->kept_bytes = at->kept_bytes;
    o->build_us = at->build_us;
}

uint32_t pf_navmesh_obstacle_count(const pf_navmesh *nm) { return nm->root->nobs; }

const pf_nav_obstacle *pf_navmesh_obstacle(const pf_navmesh *nm, uint32_t i) {
    return i < nm->root->nobs ? &nm->root->obs[i] : NULL;
}

uint32_t pf_navmesh_link_count(const pf_navmesh *nm) { return nm->root->nlinks; }

const pf_nav_link *pf_navmesh_link(const pf_navmesh *nm, uint32_t i) {
    return i < nm->root->nlinks ? &nm->root->links[i] : NULL;
}

uint32_t pf_navmesh_area_count(const pf_navmesh *nm) { return nm->base->nareas; }

bool pf_navmesh_area(const pf_navmesh *nm, uint32_t i, pf_nav_area_state *out) {
    if (i >= nm->base->nareas) return false;
    const AreaDef *ad = &nm->base->areas[i];
    out->name = ad->name;
    out->area_id = ad->id;
    out->cost = nm->root->area_cost[ad->id];
    out->enabled = nm->root->area_enabled[ad->id];
    out->nboxes = ad->nboxes;
    return true;
}

const void *pf_navmesh_lineage(const pf_navmesh *nm) { return nm->base; }
uint64_t pf_navmesh_generation(const pf_navmesh *nm) { return nm->root->generation; }

} /* extern "C" */
