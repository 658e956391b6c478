/* routes_tables.h -- the distance table route (routes.h's `tables` row):
 * POST /v1/maps/{id}/table, the optimal cost between every source and
 * every target (table.h; the answer in proto/table_json.h), like OSRM's
 * table service.
 *
 * A feature of the kinds with PF_KIND_TABLES (a grid: kind_grid_table.c
 * computes it; routes_feature.h refuses the others). Parsed on the I/O
 * thread; computed as one job on the pool with the
 * worker's search context: one early-stopping Dijkstra per source, or per
 * target backwards when there are fewer targets (paths: always per
 * source), under the request's deadline (504 past it), one search at a
 * time in slices of --slice-ms (routes_feature.h). Limits:
 * --max-table-entries, --max-table-paths (sources x targets), and
 * --max-agent-size.
 */
#ifndef PF_SERVER_ROUTES_TABLES_H
#define PF_SERVER_ROUTES_TABLES_H

#include "config.h"
#include "kind.h"
#include "memory.h"
#include "registry.h"
#include "routes.h"

/* Borrowed; filled by server.c. */
struct pf_tables_routes {
    pf_registry *registry;
    const pf_kinds *kinds; /* the map's kind takes the request (its metrics included) */
    const pf_config *cfg;  /* deadline_ms, slice_ms; the limits above are the kind's */
    pf_mem *mem;           /* what a paused table holds is charged to it (PF_MEM_SCRATCH) */
};

#endif
