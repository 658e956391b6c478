/* routes_fields.h -- the flow field route (routes.h's `fields` row): POST
 * /v1/maps/{id}/flowfield, one field for every unit heading to the same
 * goals (flowfield.h; the answer's encoding in proto/flowfield_json.h).
 *
 * The request is parsed and its map referenced on the I/O thread; a field
 * already in the version's flow field cache is answered there at once.
 * The cache is keyed by the goals, the region, the agent size, whether
 * costs were asked for and the map version; a PATCH makes a new version
 * (with an empty cache) and clears the old one's. Otherwise the field is
 * built as a job on the pool with the worker's search context, under the
 * request's deadline (deadline_ms, else --deadline-ms, polled every 256
 * cells: 504 past it), then cached.
 *
 * Limits: --max-flowfield-goals, --max-flowfield-cells (the region, or the
 * whole map, 413 naming "region" past it), --max-agent-size.
 */
#ifndef PF_SERVER_ROUTES_FIELDS_H
#define PF_SERVER_ROUTES_FIELDS_H

#include "config.h"
#include "memory.h"
#include "metrics.h"
#include "registry.h"
#include "routes.h"

/* Borrowed; filled by server.c. */
struct pf_fields_routes {
    pf_registry *registry;
    pf_metrics *metrics;  /* searches, cache hits and misses */
    const pf_config *cfg; /* deadline_ms and the limits above */
    pf_mem *mem;          /* a paused field's engine is charged to it (PF_MEM_SCRATCH) */
};

#endif
