/* components.cpp -- the connected components of a version's mesh, per
 * agent type, computed when the version is made (pf_nav_build,
 * pf_nav_apply), so a query whose start and goal lie in different
 * components is answered unreachable without a search.
 *
 * Two polygons are in one component when a chain of Detour links joins
 * them through polygons the query filter lets in (FLAG_WALK: a disabled
 * area's or link's polygons are walls, obstacles are holes in their
 * tiles). Links are taken both ways, off-mesh links included: the
 * components are the weakly connected ones, so different components means
 * unreachable for certain; one component with a one-way link in it may
 * still be unreachable one way, which the search then finds.
 *
 * Union-find over the polygons by dense index (tile slot order, as
 * polyanya's view): O(polygons + links), 4 bytes a polygon kept.
 */
#include "nav_internal.h"

namespace pfnav {

namespace {

uint32_t find_root(uint32_t *parent, uint32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]]; /* path halving */
        x = parent[x];
    }
    return x;
}

bool walkable(const dtNavMesh *nav, dtPolyRef ref) {
    const dtMeshTile *t = NULL;
    const dtPoly *p = NULL;
    nav->getTileAndPolyByRefUnsafe(ref, &t, &p);
    return (p->flags & FLAG_WALK) != 0;
}

bool view_components(pf_navmesh *v) {
    const dtNavMesh *nav = v->nav;
    const int ntiles = nav->getMaxTiles();
    uint32_t npolys = 0;
    uint32_t *first = (uint32_t *)malloc((size_t)(ntiles > 0 ? ntiles : 1) * sizeof(uint32_t));
    if (!first) return false;
    for (int i = 0; i < ntiles; i++) {
        const dtMeshTile *t = tile_at(nav, i);
        first[i] = npolys;
        if (t->header) npolys += (uint32_t)t->header->polyCount;
    }
    uint32_t *comp = (uint32_t *)malloc((size_t)(npolys ? npolys : 1) * sizeof(uint32_t));
    if (!comp) {
        free(first);
        return false;
    }
    for (uint32_t d = 0; d < npolys; d++) comp[d] = d; /* parents, then ids */
    for (int i = 0; i < ntiles; i++) {
        const dtMeshTile *t = tile_at(nav, i);
        if (!t->header) continue;
        for (int k = 0; k < t->header->polyCount; k++) {
            const dtPoly *p = &t->polys[k];
            if (!(p->flags & FLAG_WALK)) continue;
            const uint32_t d = first[i] + (uint32_t)k;
            for (unsigned int li = p->firstLink; li != DT_NULL_LINK; li = t->links[li].next) {
                const dtPolyRef nb = t->links[li].ref;
                if (!nb || !walkable(nav, nb)) continue;
                const uint32_t e = first[nav->decodePolyIdTile(nb)] + nav->decodePolyIdPoly(nb);
                const uint32_t a = find_root(comp, d), b = find_root(comp, e);
                if (a != b) comp[a < b ? b : a] = a < b ? a : b;
            }
        }
    }
    /* Every polygon straight to its root (the smallest index of its set),
     * then ids in index order: a root is seen before the rest of its set,
     * so comp[root] already holds the set's id when they read it. */
    for (uint32_t d = 0; d < npolys; d++) comp[d] = find_root(comp, d);
    uint32_t n = 0;
    for (uint32_t d = 0; d < npolys; d++) comp[d] = comp[d] == d ? n++ : comp[comp[d]];
    /* Polygons the filter refuses belong to no component. */
    for (int i = 0; i < ntiles; i++) {
        const dtMeshTile *t = tile_at(nav, i);
        if (!t->header) continue;
        for (int k = 0; k < t->header->polyCount; k++)
            if (!(t->polys[k].flags & FLAG_WALK)) comp[first[i] + (uint32_t)k] = UINT32_MAX;
    }
    free(v->comp_first);
    free(v->comp);
    v->comp_first = first;
    v->comp = comp;
    v->ncomp = n;
    return true;
}

} /* namespace */

bool version_components(pf_navmesh *root) {
    for (uint32_t t = 0; t < root->base->nagents; t++)
        if (!view_components(root->types[t])) return false;
    return true;
}

void components_free(pf_navmesh *v) {
    free(v->comp_first);
    free(v->comp);
    v->comp_first = NULL;
    v->comp = NULL;
    v->ncomp = 0;
}

uint32_t component_of(const pf_navmesh *v, dtPolyRef ref) {
    if (!v->comp) return UINT32_MAX;
    return v->comp[v->comp_first[v->nav->decodePolyIdTile(ref)] + v->nav->decodePolyIdPoly(ref)];
}

} /* namespace pfnav */
