/* navexport.cpp -- navexport.h: a version's Detour tiles read in place. */
#include "navexport.h"

#include "nav_internal.h"

using namespace pfnav;

namespace {

/* The tile in slot, or NULL when empty or out of range. */
const dtMeshTile *tile_in(const pf_navmesh *nm, uint32_t slot) {
    if (slot >= (uint32_t)nm->nav->getMaxTiles()) return NULL;
    const dtMeshTile *t = tile_at(nm->nav, (int)slot);
    return t->header ? t : NULL;
}

/* Whether edge j of polygon p (index pi of tile t) has a neighbour: an
 * inner edge names it in neis, a tile border edge has a link across. */
bool edge_connected(const dtMeshTile *t, const dtPoly *p, int j) {
    if (p->neis[j] == 0) return false;
    if (!(p->neis[j] & DT_EXT_LINK)) return true;
    for (unsigned int li = p->firstLink; li != DT_NULL_LINK; li = t->links[li].next)
        if (t->links[li].edge == j) return true;
    return false;
}

uint32_t poly_tris(const dtMeshTile *t, uint32_t p) {
    if (t->polys[p].getType() == DT_POLYTYPE_OFFMESH_CONNECTION) return 0;
    if ((int)p >= t->header->detailMeshCount) return 0;
    return t->detailMeshes[p].triCount;
}

} /* namespace */

uint32_t pf_navmesh_tile_slots(const pf_navmesh *nm) { return (uint32_t)nm->nav->getMaxTiles(); }

bool pf_navmesh_tile_view(const pf_navmesh *nm, uint32_t slot, pf_nav_tile_view *out) {
    const dtMeshTile *t = tile_in(nm, slot);
    if (!t) return false;
    const dtMeshHeader *h = t->header;
    memset(out, 0, sizeof *out);
    out->x = h->x;
    out->z = h->y;
    out->layer = h->layer;
    out->ref_base = (uint32_t)nm->nav->getPolyRefBase(t);
    out->verts = t->verts;
    out->nverts = (uint32_t)h->vertCount;
    out->dverts = t->detailVerts;
    out->ndverts = (uint32_t)h->detailVertCount;
    out->npolys = (uint32_t)h->polyCount;
    out->ntris = 0;
    for (uint32_t p = 0; p < out->npolys; p++) out->ntris += poly_tris(t, p);
    out->nlinks = (uint32_t)h->offMeshConCount;
    dtVcopy(out->bmin, h->bmin);
    dtVcopy(out->bmax, h->bmax);
    return true;
}

bool pf_navmesh_poly_view(const pf_navmesh *nm, uint32_t slot, uint32_t p, pf_nav_poly_view *out) {
    const dtMeshTile *t = tile_in(nm, slot);
    if (!t || p >= (uint32_t)t->header->polyCount) return false;
    const dtPoly *poly = &t->polys[p];
    memset(out, 0, sizeof *out);
    out->nverts = poly->vertCount;
    for (int j = 0; j < poly->vertCount && j < PF_NAV_POLY_VERTS_MAX; j++) {
        out->verts[j] = poly->verts[j];
        if (!edge_connected(t, poly, j)) out->walls |= (uint8_t)(1u << j);
    }
    out->area = poly->getArea();
    out->enabled = (poly->flags & FLAG_WALK) != 0;
    out->link = poly->getType() == DT_POLYTYPE_OFFMESH_CONNECTION;
    if (out->link) out->walls = 0;
    out->ntris = poly_tris(t, p);
    return true;
}

bool pf_navmesh_poly_triangle(const pf_navmesh *nm, uint32_t slot, uint32_t p, uint32_t tri,
                              uint32_t out[3]) {
    const dtMeshTile *t = tile_in(nm, slot);
    if (!t || p >= (uint32_t)t->header->polyCount || tri >= poly_tris(t, p)) return false;
    const dtPoly *poly = &t->polys[p];
    const dtPolyDetail *d = &t->detailMeshes[p];
    const unsigned char *c = &t->detailTris[(d->triBase + tri) * 4];
    for (int k = 0; k < 3; k++) {
        if (c[k] < poly->vertCount)
            out[k] = poly->verts[c[k]];
        else
            out[k] = (uint32_t)t->header->vertCount + d->vertBase + (c[k] - poly->vertCount);
    }
    return true;
}

bool pf_navmesh_link_view(const pf_navmesh *nm, uint32_t slot, uint32_t k, pf_nav_link_view *out) {
    const dtMeshTile *t = tile_in(nm, slot);
    if (!t || k >= (uint32_t)t->header->offMeshConCount) return false;
    const dtOffMeshConnection *c = &t->offMeshCons[k];
    memset(out, 0, sizeof *out);
    dtVcopy(out->start, &c->pos[0]);
    dtVcopy(out->end, &c->pos[3]);
    out->radius = c->rad;
    out->bidirectional = (c->flags & DT_OFFMESH_CON_BIDIR) != 0;
    if (c->poly < t->header->polyCount) {
        const dtPoly *poly = &t->polys[c->poly];
        out->area = poly->getArea();
        out->enabled = (poly->flags & FLAG_WALK) != 0;
    }
    out->ref = (uint32_t)(nm->nav->getPolyRefBase(t) | (dtPolyRef)c->poly);
    return true;
}

bool pf_navmesh_area_box(const pf_navmesh *nm, uint32_t i, uint32_t k, pf_nav_box *out) {
    if (i >= nm->base->nareas || k >= nm->base->areas[i].nboxes) return false;
    *out = nm->base->areas[i].boxes[k];
    return true;
}

void pf_navmesh_export_counts(const pf_navmesh *nm, pf_nav_export_counts *out) {
    memset(out, 0, sizeof *out);
    for (uint32_t s = 0; s < pf_navmesh_tile_slots(nm); s++) {
        pf_nav_tile_view v;
        if (!pf_navmesh_tile_view(nm, s, &v)) continue;
        out->tiles++;
        out->verts += v.nverts;
        out->dverts += v.ndverts;
        out->polys += v.npolys;
        out->tris += v.ntris;
        out->links += v.nlinks;
    }
    for (uint32_t i = 0; i < nm->base->nareas; i++) out->boxes += nm->base->areas[i].nboxes;
}

const void *pf_navmesh_detour_mesh(const pf_navmesh *nm) { return nm->nav; }

const void *pf_navmesh_detour_filter(const pf_navmesh *nm) { return &nm->filter; }
