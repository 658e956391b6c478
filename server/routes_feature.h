/* routes_feature.h -- the routes of a feature only some kinds of map have
 * whose request the kind takes whole (kind.h's pf_kind_request_ops): flow
 * fields (routes_fields.c), distance tables (routes_tables.c).
 *
 * On the I/O thread: the map is referenced; a map of a kind without the
 * feature is refused before its body is read (422 unsupported naming
 * "id": its points would be another kind's); the body is parsed by the
 * map's kind (without a map by the first kind that has the feature, so a
 * malformed body is 400 before the 404; the request's limits are its
 * kind's); a cached answer is sent at once. Otherwise one job on the pool
 * runs it with the worker's search context under the request's deadline
 * (deadline_ms, else --deadline-ms: 504 past it, also while it waits for
 * a worker; above --max-deadline-ms: 400 naming deadline_ms), in parts of
 * --slice-ms: past one, when another request waits for a worker, the job
 * queues itself again with the kind's run paused (pf_req_yield; what the
 * run holds meanwhile is charged to the memory budget as PF_MEM_SCRATCH,
 * and when the budget cannot take it the run simply goes on).
 */
#ifndef PF_SERVER_ROUTES_FEATURE_H
#define PF_SERVER_ROUTES_FEATURE_H

#include "config.h"
#include "kind.h"
#include "memory.h"
#include "registry.h"
#include "request.h"

typedef struct pf_feature_route {
    unsigned feature; /* its PF_KIND_* bit */
    /* Its operations in a kind's table (NULL without the bit). */
    const pf_kind_request_ops *(*ops)(const pf_kind_ops *kind);
    const char *what; /* "flow field": "... passed before the flow field was ready." */
} pf_feature_route;

/* The route's map with a reference, when its kind has `feature` (a
 * PF_KIND_* bit); answers 404 map_not_found or 422 unsupported (naming
 * `field`, NULL: none) and returns NULL otherwise. For the routes of a
 * feature that take no request of the kind's (cells, hierarchy, crowds). */
pf_mapver *pf__route_feature_map(pf_req *r, pf_registry *registry, unsigned feature,
                                 const char *field);

/* Handles r as f's route over the maps of registry (kinds, cfg:
 * deadline_ms, max_deadline_ms, slice_ms; mem: the budget a paused run is
 * charged to; all borrowed for the request's life). */
void pf__route_feature(pf_req *r, pf_registry *registry, const pf_kinds *kinds,
                       const pf_config *cfg, pf_mem *mem, const pf_feature_route *f);

#endif
