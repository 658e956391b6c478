/* map_json.h -- map uploads (JSON or Moving AI text) into a pf_grid, and the
 * map info object.
 *
 * JSON map:
 *   {"width":W, "height":H,            optional, checked against rows
 *    "rows":["..#.", ...],             required, one string per row, y = 0 first
 *    "legend":{"#":0, "~":5},          optional, adds to / overrides the default
 *                                      legend ('.','G','S' = 1; '@','O','T','W','#' = 0)
 *    "connectivity":8,                 4 or 8 (default 8)
 *    "corner_cutting":false,           default false
 *    "walls":[[x,y,"E"], ...],         blocked edges: cell and side (E, W, S, N)
 *    "doors":{"gate":{"cells":[[x,y],...], "walls":[[x,y,"E"],...], "open":true,
 *                     "costs":[c,...]}}}  a door cell's cost when open (1..255);
 *                                      default its cost in the map, 1 if blocked
 * or, instead of rows and legend, the form GET /v1/maps/{id}/cells writes
 * (pf_map_write_cells), so an export uploads back as it is:
 *   {"width":W, "height":H,            required
 *    "costs":"0101..00",               two hex digits a cell, row by row
 *    "id":"m", "version":3,            the export's; checked, then ignored
 *    ...}                              connectivity, walls, doors as above; after
 *                                      the doors are declared, their cells and
 *                                      edges get the state costs and walls say
 * Both forms may say "kind":"grid" (a JSON upload with "kind":"navmesh" is
 * a navmesh, nav_json.h). Unknown members are rejected. Errors name the field ("rows[3]",
 * "legend.~", "walls[2]", "doors.gate.cells[0]", "costs").
 *
 * Statuses: PF_EPARSE (malformed JSON or text, wrong types), PF_EINVAL (a
 * value is not allowed: a character missing from the legend, rows of
 * different widths, connectivity 5), PF_ERANGE (a wall or door cell off the
 * map), PF_ELIMIT (more cells than `lim` allows, checked before allocating),
 * PF_ENOMEM. On success *out owns the grid (pf_grid_destroy). Thread-safe.
 */
#ifndef PF_PROTO_MAP_JSON_H
#define PF_PROTO_MAP_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "grid.h"
#include "jsonw.h"
#include "planner.h"

pf_status pf_map_json_parse(const char *buf, size_t len, const pf_grid_limits *lim, pf_grid **out,
                            pf_proto_error *e);

/* The Moving AI .map text, with errors reported as a pf_proto_error
 * (PF_EPARSE -> code malformed_map with the line number). */
pf_status pf_map_text_parse(const char *buf, size_t len, const pf_grid_limits *lim, pf_grid **out,
                            pf_proto_error *e);

/* What GET /v1/maps/{id} reports. */
typedef struct pf_map_info {
    const char *id;
    uint64_t version;
    const pf_planner *planner;
    uint64_t build_us; /* parse + preprocessing time of this version */
    const char *default_algorithm;
    uint64_t cache_hits, cache_misses;
    size_t cache_entries;
    uint64_t field_cache_hits, field_cache_misses; /* the flow field cache */
    size_t field_cache_entries;
} pf_map_info;

/* Writes {"id","version","width","height","connectivity","corner_cutting",
 * "walkable_cells","doors","memory_bytes","jps_landmarks","jps_dead_ends","build_us","default_algorithm",
 * "hierarchy":{...}|null,"agent_sizes":[{"size","hierarchy","grid_build_us",
 * "hierarchy_build_us","memory_bytes"},...],"cache":{...},"flowfield_cache":{...}}
 * as a value. */
void pf_map_write_info(pf_jsonw *w, const pf_map_info *info);
/* The members of g's shape in that info: "width", "height",
 * "connectivity", "corner_cutting", "walkable_cells", "uniform_cost",
 * "doors" (what the shared store lists of a grid). */
void pf_map_write_shape(pf_jsonw *w, const pf_grid *g);

/* Writes what GET /v1/maps/{id}/cells answers, as a value:
 * {"id","version","width","height","connectivity","corner_cutting",
 *  "costs":"<2 lowercase hex digits a cell, row by row, y = 0 first>",
 *  "walls":[[x,y,"E"|"S"],...],
 *  "doors":{"name":{"open":bool,"cells":[[x,y],...],"walls":[[x,y,"E"],...],
 *                   "costs":[<open cost of each cell>]},...}}
 * Costs are the current ones (a closed door's cells are 00); every wall
 * edge is listed once, from its west or north cell. pf_map_json_parse reads
 * it back into the same grid. */
void pf_map_write_cells(pf_jsonw *w, const char *id, uint64_t version, const pf_grid *g);

#endif
