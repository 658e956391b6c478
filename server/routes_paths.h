/* routes_paths.h -- the path routes (routes.h's `paths` rows): GET and
 * POST /v1/maps/{id}/path, POST /v1/maps/{id}/paths (a batch).
 *
 * A request's map is referenced and its queries parsed by the map's kind
 * (kind.h: a grid's [x,y] cells and algorithms, a navmesh's [x,y,z]
 * points) on the I/O thread; a single query found in the map version's
 * path cache is answered there at once. Every search runs as a job on the
 * pool, each query by the kind with the scratch it borrows for the run,
 * bounded by the request's deadline (deadline_ms, else --deadline-ms):
 * past it the answer is 504.
 */
#ifndef PF_SERVER_ROUTES_PATHS_H
#define PF_SERVER_ROUTES_PATHS_H

#include "config.h"
#include "kind.h"
#include "registry.h"
#include "routes.h"

/* Borrowed; filled by server.c. */
struct pf_paths_routes {
    pf_registry *registry;
    const pf_kinds *kinds; /* what each map's queries are (their metrics included) */
    const pf_config *cfg;  /* deadline_ms, max_deadline_ms, max_batch, slice_ms */
};

#endif
