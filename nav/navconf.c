/* navconf.c -- the navmesh defaults (navmesh.h), in C so the JSON readers
 * (proto/nav_json.c) and the fuzz target use them without the C++ shim. */
#include "navmesh.h"

pf_nav_config pf_nav_default_config(void) {
    /* RecastDemo's Sample::resetCommonSettings, and Sample_TileMesh's tile
     * size. */
    pf_nav_config c;
    c.cell_size = 0.3f;
    c.cell_height = 0.2f;
    c.agent_radius = 0.6f;
    c.agent_height = 2.0f;
    c.agent_max_climb = 0.9f;
    c.agent_max_slope = 45.0f;
    c.tile_size = 32;
    c.edge_max_error = 1.3f;
    c.region_min_size = 8;
    c.region_merge_size = 20;
    c.edge_max_len = 12.0f;
    c.verts_per_poly = 6;
    c.detail_sample_dist = 6.0f;
    c.detail_sample_max_error = 1.0f;
    c.partition = PF_NAV_WATERSHED;
    return c;
}

pf_nav_config pf_nav_default_grid_config(void) {
    pf_nav_config c = pf_nav_default_config();
    c.cell_size = 0.25f;
    c.cell_height = 0.2f;
    c.agent_radius = 0.25f;
    c.agent_max_climb = 0.4f;
    c.tile_size = 64;
    c.region_min_size = 0;
    c.edge_max_len = 0.0f;
    /* Watershed regions need a span two voxels from the edge to seed: a
     * one-cell pocket (2 voxels wide after erosion) would get none. Layer
     * regions in this Recast merge areas (doors, costs) into their
     * neighbours. Monotone keeps both, as DetourTileCache's regions did. */
    c.partition = PF_NAV_MONOTONE;
    return c;
}

pf_nav_limits pf_nav_default_limits(void) {
    pf_nav_limits l;
    l.max_vertices = PF_NAV_DEFAULT_MAX_VERTICES;
    l.max_triangles = PF_NAV_DEFAULT_MAX_TRIANGLES;
    l.max_voxels = PF_NAV_DEFAULT_MAX_VOXELS;
    l.max_tiles = PF_NAV_DEFAULT_MAX_TILES;
    l.build_ms = PF_NAV_DEFAULT_BUILD_MS;
    l.max_obstacles = PF_NAV_DEFAULT_MAX_OBSTACLES;
    l.max_areas = PF_NAV_DEFAULT_MAX_AREAS;
    l.max_area_boxes = PF_NAV_DEFAULT_MAX_AREA_BOXES;
    l.max_search_extent = PF_NAV_DEFAULT_MAX_SEARCH_EXTENT;
    l.max_tile_spans = PF_NAV_DEFAULT_MAX_TILE_SPANS;
    l.max_column_spans = PF_NAV_DEFAULT_MAX_COLUMN_SPANS;
    l.max_links = PF_NAV_DEFAULT_MAX_LINKS;
    l.max_bytes = 0;
    return l;
}
