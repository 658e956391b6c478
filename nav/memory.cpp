/* memory.cpp -- what a version, a corridor and a crowd hold, in bytes: the
 * figures the server charges against its memory budget.
 */
#include "nav_internal.h"

namespace pfnav {

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

} /* namespace pfnav */

using namespace pfnav;

extern "C" {

size_t pf_nav_corridor_memory(const pf_nav_corridor *c) {
    return sizeof(*c) + (size_t)c->max_polys * sizeof(dtPolyRef);
}

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
