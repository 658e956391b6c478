/* flowfield.h -- flow fields: for every cell of a map (or of a box of it),
 * the first step of an optimal path to the nearest of some goals and the
 * cost of that path, from one Dijkstra that starts at every goal at once.
 *
 * Hundreds of units heading for one rally point then need no search each:
 * a unit at p steps in direction dir(p), and so on until a cell marked
 * PF_FLOW_GOAL. Following the directions from any cell walks an optimal
 * path (cost(p) = step cost + cost(next)); with several goals every cell
 * leads to its nearest one. Costs are "to go": a step into a cell pays that
 * cell's entry cost, as every search of pathd. The search runs backwards
 * from the goals on the bucket queue of dial_internal.h: O(cells), a few
 * milliseconds for a 512x512 map.
 *
 * A box restricts the field to its cells: paths never leave it, and the
 * answer is the optimum among paths inside the box.
 *
 * A field is immutable once built and may be read from any thread.
 */
#ifndef PF_FLOWFIELD_H
#define PF_FLOWFIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "search.h"

/* An axis-aligned box of cells: [x, x + w) x [y, y + h). */
typedef struct pf_box {
    int32_t x, y, w, h;
} pf_box;

/* Direction bytes besides PF_DIR_E..PF_DIR_NW (0..7, the first step). */
#define PF_FLOW_GOAL 8   /* the cell is a goal */
#define PF_FLOW_NONE 255 /* blocked, or no goal can be reached from it */
#define PF_FLOW_MAX_GOALS (1u << 20)

typedef struct pf_flowfield pf_flowfield;

typedef struct pf_flow_query {
    const pf_point *goals; /* borrowed for the call; duplicates are allowed */
    size_t ngoals;         /* 1..PF_FLOW_MAX_GOALS */
    bool has_region;       /* false: the whole map */
    pf_box region;
    pf_stop_fn should_stop; /* polled every 256 cells; may be NULL */
    void *stop_ud;
    uint64_t max_expanded; /* cells the search may settle; 0 = no limit (PF_ELIMIT past it) */
} pf_flow_query;

/* Builds the field of q on g with ctx's scratch. Statuses: PF_EINVAL (no
 * goals, too many, a region of side < 1), PF_ERANGE (a region not inside
 * the map, a goal outside the region or map), PF_EBLOCKED (a blocked goal),
 * PF_ECANCELED, PF_ENOMEM. For a bad goal *bad_goal (may be NULL) is its
 * index, else -1. On success *out owns the field (pf_flowfield_destroy). */
pf_status pf_flowfield_build(pf_search_ctx *ctx, const pf_grid *g, const pf_flow_query *q,
                             pf_flowfield **out, int32_t *bad_goal);
void pf_flowfield_destroy(pf_flowfield *f); /* NULL is a no-op */

/* The same build in slices, so a server can give its worker back between
 * them (as a batch of paths does between queries):
 * pf_flowfield_start checks q and queues the goals (statuses as
 * pf_flowfield_build; q is not used afterwards); pf_flowfield_resume runs
 * the search on until it is done (*out set: the field; b is spent, free
 * it) or until pause(pause_ud), polled every 256 settled cells, asks for
 * the worker back (PF_OK, *out NULL: call it again, from any thread and
 * with any context). A build holds the search engine it started with (the
 * context's, taken from it; a context without one makes a new one when it
 * needs it) and gives it back to the context it ends on. Errors as
 * pf_flowfield_build; b is spent after any error too. */
typedef struct pf_flow_build pf_flow_build;
pf_status pf_flowfield_start(pf_search_ctx *ctx, const pf_grid *g, const pf_flow_query *q,
                             pf_flow_build **out, int32_t *bad_goal);
pf_status pf_flowfield_resume(pf_search_ctx *ctx, pf_flow_build *b, pf_stop_fn pause,
                              void *pause_ud, pf_flowfield **out);
/* Bytes a build holds between slices: its engine and the field it fills. */
size_t pf_flow_build_memory(const pf_flow_build *b);
/* Cells settled so far. */
uint64_t pf_flow_build_expanded(const pf_flow_build *b);
void pf_flow_build_free(pf_flow_build *b); /* NULL is a no-op */

/* The field's box (the whole map's when no region was given). */
pf_box pf_flowfield_region(const pf_flowfield *f);
/* Per cell of the box, row by row (index (y - box.y) * box.w + x - box.x):
 * the direction byte, and the cost to go (INFINITY where PF_FLOW_NONE).
 * Borrowed from f. */
const uint8_t *pf_flowfield_dirs(const pf_flowfield *f);
const double *pf_flowfield_costs(const pf_flowfield *f);
/* The direction byte and cost at map cell p; PF_FLOW_NONE / INFINITY
 * outside the box. */
uint8_t pf_flowfield_dir_at(const pf_flowfield *f, pf_point p);
double pf_flowfield_cost_at(const pf_flowfield *f, pf_point p);

typedef struct pf_flow_stats {
    int64_t reachable; /* cells with a route, goals included */
    double max_cost;   /* largest finite cost to go; 0 when only goals */
    uint64_t expanded; /* cells settled */
    uint64_t build_us;
    size_t memory_bytes;
} pf_flow_stats;
void pf_flowfield_get_stats(const pf_flowfield *f, pf_flow_stats *st);

#endif
