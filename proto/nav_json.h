/* nav_json.h -- navmesh maps in the API: uploads, path requests, PATCHes,
 * answers and map info (nav/navmesh.h underneath).
 *
 * Upload, as JSON (Content-Type application/json, "kind":"navmesh"):
 *   {"kind":"navmesh",
 *    "obj":"v 0 0 0\n...",              Wavefront OBJ text, or
 *    "from_grid":{grid map JSON} | "<Moving AI text>",
 *    "cell_size":0.25, "cell_height":0.2, "tile_size":64, "edge_max_error":1.3,
 *    "agent":{"radius":0.25,"height":2,"max_climb":0.4,"max_slope":45},
 *    "areas":[{"id":"gate","boxes":[{"min":[x,y,z],"max":[x,y,z]}],
 *              "cost":1,"enabled":true}],
 *    "obstacles":[obstacle, ...],       initial obstacles and area states
 *    "area_state":[{"id":"gate","enabled":false,"cost":3}]}  (stored maps have them)
 * or as OBJ text (Content-Type model/obj) with the same settings in the
 * query string: cell_size, cell_height, tile_size, edge_max_error,
 * agent_radius, agent_height, agent_max_climb, agent_max_slope.
 * An obstacle is {"id":"crate","box":{"min":[x,y,z],"max":[x,y,z]}} or
 * {"id":"barrel","cylinder":{"base":[x,y,z],"radius":r,"height":h}}.
 *
 * PATCH: {"obstacles":[obstacle, ...],      put: added, or moved by id
 *         "remove_obstacles":["id", ...],
 *         "areas":[{"id":"gate","enabled":false,"cost":2}]}
 *
 * Path request: {"start":[x,y,z],"goal":[x,y,z],"algorithm":"polyanya"|"detour",
 *                "search_box":[hx,hy,hz],"deadline_ms":N,"cache":true,
 *                "corridor":false}  (true: the answer names the corridor's polygons)
 * (GET: start=x,y,z&goal=x,y,z&algorithm=..&search_box=hx,hy,hz&...).
 *
 * Every error names the field ("agent.radius", "obstacles[2].box.min",
 * "from_grid.rows[3]", "queries[1].start"); unknown members are refused.
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
} pf_nav_upload;

void pf_nav_upload_free(pf_nav_upload *u);

/* A navmesh library error (nav/navmesh.h) as the API's: its field, with a
 * limit named by its flag (limits.max_voxels -> limits.nav_max_voxels, as
 * /v1/info lists it), the phrase made a sentence, the code by status.
 * Returns st. */
pf_status pf_nav_error_to_proto(pf_proto_error *e, pf_status st, const pf_nav_error *ne);

/* Whether a parsed JSON upload is a navmesh one ("kind":"navmesh"); a
 * "kind" other than "grid" or "navmesh" is PF_EINVAL naming "kind". */
pf_status pf_nav_json_kind(const cJSON *root, bool *navmesh, pf_proto_error *e);

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
} pf_nav_patch;

pf_status pf_nav_patch_parse(const char *buf, size_t len, pf_nav_patch *out, pf_proto_error *e);
void pf_nav_patch_free(pf_nav_patch *p);
/* The change view of p (borrows p). */
pf_nav_change pf_nav_patch_change(const pf_nav_patch *p);

/* A path request. */
typedef struct pf_nav_path_request {
    float start[3], goal[3];
    bool has_box;
    float box[3]; /* half extents of the nearest-polygon search */
    pf_nav_algorithm algorithm;
    int64_t deadline_ms; /* 0 = not given */
    bool use_cache;
    bool corridor; /* answer the corridor's polygon references (never cached) */
} pf_nav_path_request;

pf_status pf_nav_path_request_from_json(const cJSON *obj, const char *prefix, bool allow_deadline,
                                        float max_extent, pf_nav_path_request *out,
                                        pf_proto_error *e);
pf_status pf_nav_path_request_parse(const char *buf, size_t len, float max_extent,
                                    pf_nav_path_request *out, pf_proto_error *e);
pf_status pf_nav_path_request_from_query(const pf_kv *kv, size_t n, float max_extent,
                                         pf_nav_path_request *out, pf_proto_error *e);
pf_status pf_nav_path_batch_parse(const char *buf, size_t len, size_t max_queries, float max_extent,
                                  pf_nav_path_request **out, size_t *n, int64_t *deadline_ms,
                                  pf_proto_error *e);

const char *pf_nav_algorithm_name(pf_nav_algorithm a);

/* The answer members that are the same for every answer of one query on
 * one version (cached): found, partial, reason (when partial: "unreachable"
 * or "node_budget"), length, cost, path, algorithm,
 * polygons, exact, map_version; then the stats (expanded, time_us,
 * cached). Between obj_begin and obj_end, as path_json.h's pair. */
void pf_nav_write_path_members(pf_jsonw *w, const pf_nav_path *p, pf_nav_algorithm algo,
                               uint64_t map_version);
void pf_nav_write_path_stats(pf_jsonw *w, uint64_t expanded, uint64_t time_us, bool cached);
/* The "corridor" member: the references of the corridor's polygons, start
 * to goal (GET /v1/maps/{id}/mesh: a tile's ref + polygon index). */
void pf_nav_write_corridor(pf_jsonw *w, const pf_nav_path *p);

/* A point [x, y, z] (floats, rounded to 1e-4). */
void pf_nav_write_point(pf_jsonw *w, const float *p);
/* Reads [x, y, z], three finite numbers within +-1e7. */
pf_status pf_nav_read_point(const cJSON *it, const char *field, float out[3], pf_proto_error *e);

/* The "navmesh" member of a navmesh map's info, as a value. */
void pf_nav_write_info(pf_jsonw *w, const pf_navmesh *nm);

#endif
