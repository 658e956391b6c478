/* flowfield_json.h -- flow field requests in (POST /v1/maps/{id}/flowfield)
 * and flow fields out.
 *
 * Request (every field but the goal optional):
 *   goal | goals   [x, y] or [[x, y], ...] (1..max_goals points): the field
 *                  leads every cell to its nearest goal
 *   region         {"x":X, "y":Y, "width":W, "height":H}: only these cells
 *                  (paths stay inside); whether it lies on the map is the
 *                  server's business (it knows the map)
 *   agent_size     1..max_agent_size (default 1): the field of that agent
 *                  (anchors, clearance.h)
 *   costs          false leaves the costs out of the answer (default true)
 *   deadline_ms    1..3600000
 *   cache          false bypasses the per-map field cache (default true)
 * Unknown fields are rejected; errors name the field ("goals[3]",
 * "region.width").
 *
 * Answer (members, then stats):
 *   "map_version", "agent_size", "region":{"x","y","width","height"},
 *   "goals":[[x,y],...],
 *   "encoding":"dir8-u8/cost-u32le",
 *   "directions": base64 of one byte a cell of the region, row by row
 *       (y = region.y first): 0..7 the first step (0 E, 1 W, 2 S, 3 N,
 *       4 SE, 5 SW, 6 NE, 7 NW; y grows downwards), 8 the cell is a goal,
 *       255 no goal can be reached (or the cell is blocked),
 *   "costs": base64 of a little-endian uint32 a cell, same order:
 *       round(cost to go x cost_scale), 4294967295 where there is no route,
 *   "cost_scale": 1000, or the largest power of ten below it under which
 *       the largest cost fits (pf_flow_cost_scale),
 *   "reachable": cells with a route, "max_cost": the largest cost to go,
 *   "stats":{"expanded","time_us","cached"}.
 * Thread-safe.
 */
#ifndef PF_PROTO_FLOWFIELD_JSON_H
#define PF_PROTO_FLOWFIELD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "flowfield.h"
#include "jsonw.h"

#define PF_FLOW_COST_NONE 4294967295u /* the "costs" value of a cell without a route */
#define PF_FLOW_ENCODING "dir8-u8/cost-u32le"

/* The server's named limits (--max-flowfield-goals, --max-agent-size). */
typedef struct pf_flow_limits {
    size_t max_goals;
    int32_t max_agent_size;
} pf_flow_limits;

typedef struct pf_flow_request {
    pf_point *goals; /* owned, freed by pf_flow_request_clear */
    size_t ngoals;
    bool goals_list; /* given as "goals" (errors name "goals[i]"), not "goal" */
    bool has_region;
    pf_box region;
    int32_t agent_size;
    bool costs;
    bool use_cache;
    int64_t deadline_ms; /* 0 = not given */
} pf_flow_request;

/* Parses a request body. PF_EPARSE (malformed JSON, wrong types, a missing
 * goal, unknown fields, both goal and goals), PF_EINVAL (a value out of
 * range: region side < 1, agent_size), PF_ERANGE (a coordinate beyond
 * int32), PF_ELIMIT (more goals than max_goals), PF_ENOMEM. On error
 * nothing is owned. */
pf_status pf_flow_request_parse(const char *buf, size_t len, const pf_flow_limits *lim,
                                pf_flow_request *out, pf_proto_error *e);
void pf_flow_request_clear(pf_flow_request *r);

/* 1000, or the largest power of ten below it (down to 1e-3) with
 * max_cost x scale <= 4294967294. */
double pf_flow_cost_scale(double max_cost);

/* The members that are the same for every answer of one request on one map
 * version (everything but "stats"), for the cache. Call between
 * pf_jsonw_obj_begin and pf_jsonw_obj_end. goals are the request's. */
void pf_flow_write_members(pf_jsonw *w, const pf_flowfield *f, const pf_point *goals, size_t ngoals,
                           int32_t agent_size, uint64_t map_version, bool costs);
void pf_flow_write_stats(pf_jsonw *w, uint64_t expanded, uint64_t time_us, bool cached);

#endif
