/* routes_paths.h -- the path routes (routes.h's `paths` rows): GET and
 * POST /v1/maps/{id}/path, POST /v1/maps/{id}/paths (a batch).
 *
 * A request is parsed and its map referenced on the I/O thread; a single
 * query found in the map version's path cache is answered there at once.
 * Every search runs as a job on the pool with the worker's search context
 * (pf_planner_search, core's one dispatch), bounded by the request's
 * deadline (deadline_ms, else --deadline-ms): past it the answer is 504.
 *
 * On a navmesh map (mv->nav) the same routes take points [x,y,z]
 * (nav_json.h) and run pf_nav_find_path with a query borrowed from navq;
 * a navmesh search is bounded by --nav-max-nodes and the deadline is
 * checked before it starts and between a batch's queries.
 */
#ifndef PF_SERVER_ROUTES_PATHS_H
#define PF_SERVER_ROUTES_PATHS_H

#include "config.h"
#include "errors.h"
#include "metrics.h"
#include "navq.h"
#include "path_json.h"
#include "registry.h"
#include "routes.h"

/* Borrowed; filled by server.c. */
struct pf_paths_routes {
    pf_registry *registry;
    pf_metrics *metrics;  /* searches, cache hits and misses */
    const pf_config *cfg; /* deadline_ms, max_batch, cache_entries, nav_max_search_extent */
    pf_navq *navq;        /* navmesh query scratch */
};

/* Checks a query's start and goal against mv's grid: PF_ERANGE (off_map)
 * or PF_EBLOCKED (blocked) with e naming the field, prefix + "start" or
 * "goal". Also used by session creation. */
pf_status pf_paths_check_endpoints(const pf_mapver *mv, pf_point start, pf_point goal,
                                   const char *prefix, pf_proto_error *e);

#endif
