/* nav_path_json.h -- navmesh path requests and answers in the API
 * (nav/navmesh.h's pf_nav_path underneath), as path_json.h is the grid's.
 *
 * Path request: {"start":[x,y,z],"goal":[x,y,z],"algorithm":"polyanya"|"detour",
 *                "agent_type":"troll","search_box":[hx,hy,hz],"deadline_ms":N,
 *                "cache":true,"corridor":false}  (true: the answer names the corridor's polygons)
 * (GET: start=x,y,z&goal=x,y,z&algorithm=..&agent_type=..&search_box=hx,hy,hz&...); a
 * batch is {"queries":[request, ...],"deadline_ms":N}.
 *
 * Every error names the field ("start", "queries[1].start"); unknown
 * members are refused, and a grid-only member is refused saying why.
 * Statuses as path_json.h. Thread-safe.
 */
#ifndef PF_PROTO_NAV_PATH_JSON_H
#define PF_PROTO_NAV_PATH_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "jsonw.h"
#include "nav_json.h"
#include "navmesh.h"
#include "path_json.h"

/* A path request. */
typedef struct pf_nav_path_request {
    float start[3], goal[3];
    bool has_box;
    float box[3]; /* half extents of the nearest-polygon search */
    pf_nav_algorithm algorithm;
    int64_t deadline_ms; /* 0 = not given */
    bool use_cache;
    char agent_type[PF_NAV_NAME_MAX]; /* "" = "default" */
    bool corridor;                    /* answer the corridor's polygon references (never cached) */
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
 * or "node_budget"), length, cost, path, algorithm, agent_type, polygons,
 * exact (and inexact, why not, when polyanya was asked), links (off-mesh
 * links taken), snapped (how far start and goal moved to the mesh),
 * map_version; then the stats (expanded, time_us, cached). Between
 * obj_begin and obj_end, as path_json.h's pair. */
void pf_nav_write_path_members(pf_jsonw *w, const pf_nav_path *p, pf_nav_algorithm algo,
                               const char *agent_type, uint64_t map_version);
void pf_nav_write_path_stats(pf_jsonw *w, uint64_t expanded, uint64_t time_us, bool cached);
/* The "corridor" member: the references of the corridor's polygons, start
 * to goal (GET /v1/maps/{id}/mesh: a tile's ref + polygon index). */
void pf_nav_write_corridor(pf_jsonw *w, const pf_nav_path *p);

#endif
