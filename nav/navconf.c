/* navconf.c -- the navmesh defaults (navmesh.h), in C so the JSON readers
 * (proto/nav_json.c) and the fuzz target use them without the C++ shim. */
#include "navmesh.h"

pf_nav_config pf_nav_default_config(void) {
    pf_nav_config c;
    c.cell_size = 0.25f;
    c.cell_height = 0.2f;
    c.agent_radius = 0.25f;
    c.agent_height = 2.0f;
    c.agent_max_climb = 0.4f;
    c.agent_max_slope = 45.0f;
    c.tile_size = 64;
    c.edge_max_error = 1.3f;
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
    return l;
}
