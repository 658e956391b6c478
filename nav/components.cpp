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
 *
 * For a goal in another component the answer is Detour's partial one, the
 * path to the point of the start's component closest to the goal, found
 * without searching the mesh: each component keeps its polygons (a
 * contiguous run, ordered by component) with their boxes (polygon and
 * detail vertices), and closest_in_component scans the start's component's
 * boxes, measuring the exact closest point (closestPointOnPoly) only on a
 * polygon whose box is nearer the goal than the best point so far. 4 + 24
 * bytes a polygon more. The path to that point is then searched in the
 * start's component alone.
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

/* Each component's polygons (refs, in component order) and their boxes. */
bool component_lists(pf_navmesh *v, const uint32_t *first, const uint32_t *comp, uint32_t npolys,
                     uint32_t ncomp) {
    const dtNavMesh *nav = v->nav;
    const int ntiles = nav->getMaxTiles();
    uint32_t *start = (uint32_t *)calloc((size_t)ncomp + 1, sizeof(uint32_t));
    dtPolyRef *list = (dtPolyRef *)malloc((size_t)(npolys ? npolys : 1) * sizeof(dtPolyRef));
    float *box = (float *)malloc((size_t)(npolys ? npolys : 1) * 6 * sizeof(float));
    if (!start || !list || !box) {
        free(start);
        free(list);
        free(box);
        return false;
    }
    for (uint32_t d = 0; d < npolys; d++)
        if (comp[d] != UINT32_MAX) start[comp[d] + 1]++;
    for (uint32_t c = 0; c < ncomp; c++) start[c + 1] += start[c];
    for (int i = 0; i < ntiles; i++) {
        const dtMeshTile *t = tile_at(nav, i);
        if (!t->header) continue;
        const dtPolyRef base = nav->getPolyRefBase(t);
        for (int k = 0; k < t->header->polyCount; k++) {
            const uint32_t c = comp[first[i] + (uint32_t)k];
            if (c == UINT32_MAX) continue;
            const dtPoly *p = &t->polys[k];
            const uint32_t at = start[c]++;
            list[at] = base | (dtPolyRef)k;
            float *b = &box[6 * (size_t)at];
            dtVcopy(b, &t->verts[p->verts[0] * 3]);
            dtVcopy(b + 3, b);
            for (int j = 1; j < p->vertCount; j++) {
                dtVmin(b, &t->verts[p->verts[j] * 3]);
                dtVmax(b + 3, &t->verts[p->verts[j] * 3]);
            }
            if (p->getType() == DT_POLYTYPE_GROUND && t->detailMeshes && t->detailVerts) {
                const dtPolyDetail *pd = &t->detailMeshes[k];
                for (unsigned int j = 0; j < pd->vertCount; j++) {
                    dtVmin(b, &t->detailVerts[(pd->vertBase + j) * 3]);
                    dtVmax(b + 3, &t->detailVerts[(pd->vertBase + j) * 3]);
                }
            }
        }
    }
    /* start[c] now ends component c: shift back to starts. */
    for (uint32_t c = ncomp; c > 0; c--) start[c] = start[c - 1];
    start[0] = 0;
    v->comp_start = start;
    v->comp_list = list;
    v->comp_box = box;
    return true;
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
    components_free(v);
    if (!component_lists(v, first, comp, npolys, n)) {
        free(first);
        free(comp);
        return false;
    }
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
    free(v->comp_start);
    free(v->comp_list);
    free(v->comp_box);
    v->comp_first = NULL;
    v->comp = NULL;
    v->comp_start = NULL;
    v->comp_list = NULL;
    v->comp_box = NULL;
    v->ncomp = 0;
}

uint32_t component_of(const pf_navmesh *v, dtPolyRef ref) {
    if (!v->comp) return UINT32_MAX;
    return v->comp[v->comp_first[v->nav->decodePolyIdTile(ref)] + v->nav->decodePolyIdPoly(ref)];
}

bool closest_in_component(pf_nav_query *q, const pf_navmesh *v, uint32_t c, const float p[3],
                          dtPolyRef *ref, float out[3]) {
    if (!v->comp_start || c >= v->ncomp) return false;
    double best = HUGE_VAL;
    *ref = 0;
    for (uint32_t i = v->comp_start[c]; i < v->comp_start[c + 1]; i++) {
        const float *b = &v->comp_box[6 * (size_t)i];
        double lb = 0;
        for (int k = 0; k < 3; k++) {
            const double d = (p[k] < b[k]) ? b[k] - p[k] : (p[k] > b[3 + k]) ? p[k] - b[3 + k] : 0;
            lb += d * d;
        }
        if (lb >= best) continue;
        float cp[3];
        if (dtStatusFailed(q->q->closestPointOnPoly(v->comp_list[i], p, cp, NULL))) continue;
        const double d2 = dtVdistSqr(cp, p);
        if (d2 < best) {
            best = d2;
            *ref = v->comp_list[i];
            dtVcopy(out, cp);
        }
    }
    return *ref != 0;
}

} /* namespace pfnav */
