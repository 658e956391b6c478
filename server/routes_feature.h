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
 * runs it
 * with the worker's search context under the request's deadline
 * (deadline_ms, else --deadline-ms: 504 past it).
 */
#ifndef PF_SERVER_ROUTES_FEATURE_H
#define PF_SERVER_ROUTES_FEATURE_H

#include "config.h"
#include "kind.h"
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
 * deadline_ms; all borrowed for the request's life). */
void pf__route_feature(pf_req *r, pf_registry *registry, const pf_kinds *kinds,
                       const pf_config *cfg, const pf_feature_route *f);

#endif
