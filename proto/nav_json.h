/* nav_json.h -- navmesh maps in the API: uploads, PATCHes, map info and
 * the [x, y, z] points every navmesh codec reads and writes (nav/navmesh.h
 * underneath). Path requests and answers: nav_path_json.h.
 *
 * Upload, as JSON (Content-Type application/json, "kind":"navmesh"):
 *   {"kind":"navmesh",
 *    "obj":"v 0 0 0\n...",              Wavefront OBJ text, or
 *    "from_grid":{grid map JSON} | "<Moving AI text>",
 *    every Recast setting RecastDemo exposes, its defaults when silent
 *    (nav/navmesh.h: pf_nav_default_config; a grid's own defaults):
 *    "cell_size":0.3, "cell_height":0.2, "tile_size":32 (0: one tile),
 *    "region_min_size":8, "region_merge_size":20, "edge_max_len":12,
 *    "edge_max_error":1.3, "verts_per_poly":6, "detail_sample_dist":6,
 *    "detail_sample_max_error":1, "partition":"watershed"|"monotone"|"layers",
 *    "agent":{"radius":0.6,"height":2,"max_climb":0.9,"max_slope":45},
 *    "agent_types":[{"id":"troll","radius":1,"height":3,"max_climb":0.9,
 *                    "max_slope":40}],    more agent types besides "default"
 *    "areas":[{"id":"gate","boxes":[{"min":[x,y,z],"max":[x,y,z]}],
 *              "cost":1,"enabled":true}],
 *    "links":[link, ...],                off-mesh links
 *    "obstacles":[obstacle, ...],       initial obstacles and area states
 *    "area_state":[{"id":"gate","enabled":false,"cost":3}]}  (stored maps have them)
 * or as OBJ text (Content-Type model/obj) with the same settings in the
 * query string: cell_size, cell_height, tile_size, region_min_size,
 * region_merge_size, edge_max_len, edge_max_error, verts_per_poly,
 * detail_sample_dist, detail_sample_max_error, partition, agent_radius,
 * agent_height, agent_max_climb, agent_max_slope; agent types as
 * agent_types=id:radius,height,max_climb,max_slope;id:... and links as
 * links=id:sx,sy,sz,ex,ey,ez[,radius[,both|one_way[,area[,cost]]]];id:...
 * An obstacle is {"id":"crate","box":{"min":[x,y,z],"max":[x,y,z]}} or
 * {"id":"barrel","cylinder":{"base":[x,y,z],"radius":r,"height":h}}.
 * A link is {"id":"jump","start":[x,y,z],"end":[x,y,z],"radius":r (the
 * agent's), "bidirectional":true, "area":"ladder" (a named area; none:
 * plain ground), "cost":1 (times its length and its area's cost),
 * "enabled":true}.
 *
 * PATCH: {"obstacles":[obstacle, ...],      put: added, or moved by id
 *         "remove_obstacles":["id", ...],
 *         "areas":[{"id":"gate","enabled":false,"cost":2}],
 *         "links":[link, ...],               put: added, or replaced by id
 *         "remove_links":["id", ...],
 *         "link_states":[{"id":"jump","enabled":false}]}
 *
 * Every error names the field ("agent.radius", "obstacles[2].box.min",
 * "from_grid.rows[3]"); unknown members are refused.
 * Statuses as path_json.h. Thread-safe.
 */
#ifndef PF_PROTO_NAV_JSON_H
#define PF_PROTO_NAV_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "grid.h"
#include "jsonw.h"
#include "navmesh.h"
#include "obj.h"
#include "path_json.h"

/* A parsed upload: the build input and what the store keeps of it. */
typedef struct pf_nav_upload {
    pf_nav_config config;
    pf_obj obj;     /* the geometry, when obj_text */
    char *obj_text; /* the OBJ source (owned), or NULL */
    size_t obj_len;
    pf_grid *grid;      /* the grid to convert (owned), or NULL */
    pf_nav_area *areas; /* owned, names and boxes included */
    size_t nareas;
    pf_nav_obstacle *obstacles; /* initial obstacles (owned) */
    size_t nobstacles;
    pf_nav_area_change *area_state; /* initial area states (names owned) */
    size_t narea_state;
    pf_nav_agent_type *agent_types; /* beyond "default" (names owned) */
    size_t nagent_types;
    pf_nav_link *links;
    size_t nlinks;
} pf_nav_upload;

void pf_nav_upload_free(pf_nav_upload *u);

/* A navmesh library error (nav/navmesh.h) as the API's: its field, with a
 * limit named by its flag (limits.max_voxels -> limits.nav_max_voxels, as
 * /v1/info lists it), the phrase made a sentence, the code by status.
 * Returns st. */
pf_status pf_nav_error_to_proto(pf_proto_error *e, pf_status st, const pf_nav_error *ne);

/* The JSON envelope (root is the parsed body). glim bounds from_grid, nlim
 * the OBJ reader. */
pf_status pf_nav_upload_from_json(const cJSON *root, const pf_grid_limits *glim,
                                  const pf_nav_limits *nlim, pf_nav_upload *out, pf_proto_error *e);

/* A model/obj body with its settings from the query string. */
pf_status pf_nav_upload_from_obj(const char *buf, size_t len, const pf_kv *kv, size_t nkv,
                                 const pf_nav_limits *nlim, pf_nav_upload *out, pf_proto_error *e);

/* The build input of u (borrows u; geom must outlive the build). */
pf_nav_build_input pf_nav_upload_input(const pf_nav_upload *u, pf_nav_geom *geom);

/* What the store keeps of a navmesh map is an envelope: the upload's source
 * members (kind, obj or from_grid, settings, areas as uploaded), written
 * once at upload, then the state members of the version being stored
 * ("obstacles", "area_state"). Both write members, for an object the caller
 * opens and closes; pf_nav_upload_from_json reads the whole back. */
void pf_nav_write_source_members(pf_jsonw *w, const pf_nav_upload *u);
void pf_nav_write_state_members(pf_jsonw *w, const pf_navmesh *nm);

/* A PATCH. */
typedef struct pf_nav_patch {
    pf_nav_obstacle *put;
    size_t nput;
    char **remove;
    size_t nremove;
    pf_nav_area_change *areas; /* names owned */
    size_t nareas;
    pf_nav_link *put_links;
    size_t nput_links;
    char **remove_links;
    size_t nremove_links;
    pf_nav_link_change *link_states; /* ids owned */
    size_t nlink_states;
} pf_nav_patch;

pf_status pf_nav_patch_parse(const char *buf, size_t len, pf_nav_patch *out, pf_proto_error *e);
void pf_nav_patch_free(pf_nav_patch *p);
/* The change view of p (borrows p). */
pf_nav_change pf_nav_patch_change(const pf_nav_patch *p);

/* "watershed", "monotone" or "layers". */
const char *pf_nav_partition_name(int32_t partition);

/* The view of nm (nav/navmesh.h) for agent type name ("" or NULL:
 * "default"); 422 naming field when the map has no such type. */
pf_status pf_nav_agent_view(const pf_navmesh *nm, const char *name, const char *field,
                            const pf_navmesh **view, pf_proto_error *e);
/* The agent type's index in nm (0 for "default"), for cache keys. */
uint32_t pf_nav_agent_index(const pf_navmesh *view);

/* Whether s is a name the API takes for an id (areas, obstacles, links,
 * agent types): 1 to 63 characters of A-Z a-z 0-9 _ . - */
bool pf_nav_name_valid(const char *s);
/* Reads such a name (borrowed from it); 422 naming field otherwise. */
pf_status pf_nav_read_name(const cJSON *it, const char *field, const char **out, pf_proto_error *e);

/* A point [x, y, z] (floats, rounded to 1e-4). */
void pf_nav_write_point(pf_jsonw *w, const float *p);
/* Reads [x, y, z], three finite numbers within +-1e7. */
pf_status pf_nav_read_point(const cJSON *it, const char *field, float out[3], pf_proto_error *e);

/* The "navmesh" member of a navmesh map's info, as a value. */
void pf_nav_write_info(pf_jsonw *w, const pf_navmesh *nm);

#endif
