/* memory.cpp -- what a version, a query, a corridor and a crowd hold, in
 * bytes: the figures the server charges against its memory budget. Each is
 * what was allocated for it (Detour's tile data at its real size, its tile
 * and lookup arrays, the lists, the polyanya view a first search builds),
 * so the charge follows what the process holds.
 */
#include "nav_internal.h"

namespace pfnav {

namespace {

/* One view's Detour mesh: the tiles' data, the tile array and its lookup
 * table; and an upper bound of the polyanya view built on its first
 * search (per polygon its ring, one point per vertex and link, and its
 * indexes). */
void count_view(pf_navmesh *v) {
    const dtNavMesh *nav = v->nav;
    v->tiles = v->polys = v->verts = 0;
    size_t bytes = (size_t)nav->getMaxTiles() * sizeof(dtMeshTile);
    bytes += next_pow2((unsigned)nav->getMaxTiles() / 4) * sizeof(dtMeshTile *);
    bytes += sizeof(dtNavMesh);
    size_t ring = 0;
    for (int i = 0; i < nav->getMaxTiles(); i++) {
        const dtMeshTile *t = nav->getTile(i);
        if (!t || !t->header) continue;
        v->tiles++;
        v->polys += (uint32_t)t->header->polyCount;
        v->verts += (uint32_t)t->header->vertCount;
        bytes += (size_t)t->dataSize;
        ring += (size_t)t->header->polyCount * 13 + (size_t)t->header->maxLinkCount;
        for (int k = 0; k < t->header->polyCount; k++) ring += t->polys[k].vertCount;
    }
    /* A ring point: 12 bytes of position, 4 of neighbour, 1 of corner
     * flag, 8 of root key; a polygon: its ref, first and only (12) plus a tile start. */
    /* + the connected components: 4 bytes a polygon and a tile slot, and
     * each component's polygon list (a ref and a box of 6 floats a polygon,
     * a start a component: at most a polygon each). */
    v->mesh_bytes = bytes + ring * 25 + (size_t)nav->getMaxTiles() * 4 + sizeof(pf_navmesh) +
                    ((size_t)v->polys + (size_t)nav->getMaxTiles()) * sizeof(uint32_t) +
                    (size_t)v->polys * (sizeof(dtPolyRef) + 6 * sizeof(float) + sizeof(uint32_t)) +
                    sizeof(uint32_t);
}

} /* namespace */

void version_count(pf_navmesh *root) {
    const NavBase *b = root->base;
    size_t total = b->shared_bytes + b->nagents * sizeof(pf_navmesh *) +
                   root->nobs * sizeof(pf_nav_obstacle) + root->nlinks * (sizeof(pf_nav_link) + 1) +
                   root->nlclass * sizeof(LinkClass);
    for (uint32_t t = 0; t < b->nagents; t++) {
        count_view(root->types[t]);
        total += root->types[t]->mesh_bytes;
    }
    root->total_bytes = total;
}

/* A crowd of max_agents on (a copy of) nav: the mesh copy, its agents
 * with their corridors (256 polygons each), boundaries, neighbour lists
 * and animations, the proximity grid, the path queue and its query (4096
 * nodes), the crowd's own query (512 nodes), the avoidance query. */
size_t crowd_bytes(uint32_t max_agents, const dtNavMesh *nav) {
    size_t bytes = sizeof(pf_nav_crowd) + (size_t)max_agents * (3 * sizeof(float) + sizeof(bool));
    bytes += sizeof(dtCrowd) +
             (size_t)max_agents * (sizeof(dtCrowdAgent) + 256 * sizeof(dtPolyRef) +
                                   sizeof(dtCrowdAgentAnimation) + sizeof(dtCrowdAgent *) + 4 * 16);
    bytes += (4096 + 512) * (sizeof(dtNode) + 2 * sizeof(dtNodeIndex)) + 2 * sizeof(dtNavMeshQuery);
    bytes += 8 * 256 * sizeof(dtPolyRef) + 4096;
    for (int i = 0; i < nav->getMaxTiles(); i++) {
        const dtMeshTile *t = tile_at(nav, i);
        if (t->header) bytes += (size_t)t->dataSize;
    }
    return bytes + (size_t)nav->getMaxTiles() * sizeof(dtMeshTile) + sizeof(dtNavMesh) +
           next_pow2((unsigned)nav->getMaxTiles() / 4) * sizeof(dtMeshTile *);
}

} /* namespace pfnav */

using namespace pfnav;

extern "C" {

size_t pf_nav_query_memory(const pf_nav_query *q) {
    const size_t n = q->max_nodes;
    /* dtNavMeshQuery: its node pool (nodes, hash of next_pow2(n / 4)
     * buckets, chain), a tiny pool for raycasts and its open list. */
    size_t bytes = sizeof(*q) + sizeof(dtNavMeshQuery) + n * sizeof(dtNode) +
                   next_pow2((unsigned)(n / 4 ? n / 4 : 1)) * sizeof(dtNodeIndex) +
                   n * sizeof(dtNodeIndex) + 64 * (sizeof(dtNode) + 2 * sizeof(dtNodeIndex)) +
                   n * sizeof(dtNode *);
    bytes += 2 * n * sizeof(dtPolyRef) +
             (size_t)q->max_points * (3 * sizeof(float) + 1 + sizeof(dtPolyRef));
    return bytes + poly_scratch_memory(q->poly);
}

size_t pf_nav_corridor_memory(const pf_nav_corridor *c) {
    return sizeof(*c) + (size_t)c->max_polys * sizeof(dtPolyRef);
}

size_t pf_nav_crowd_memory(const pf_nav_crowd *c) { return crowd_bytes(c->max_agents, c->nav); }

size_t pf_nav_crowd_estimate(const pf_navmesh *nm, uint32_t max_agents) {
    return crowd_bytes(max_agents, nm->nav);
}

} /* extern "C" */
