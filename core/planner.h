/* planner.h -- one immutable map version and the per-map data its searches
 * use: the grid, the jump point search tables and the HPA* hierarchy.
 *
 * This is the one place that picks the search for a query, so the server,
 * the benchmark harness and the tests all dispatch the same way. A planner is
 * read-only once created: any number of threads may search it at once, each
 * with its own pf_search_ctx. A change to the world makes a new planner with
 * pf_planner_apply (copy on write); the old one stays valid for searches
 * still running on it.
 */
#ifndef PF_PLANNER_H
#define PF_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "search.h"

typedef struct pf_planner pf_planner;

typedef struct pf_planner_opts {
    bool build_hpa;             /* build the HPA* hierarchy */
    int32_t cluster_size;       /* HPA* cluster side; 0 = default */
    size_t landmark_bytes;      /* jps's differential heuristic: at most this many
                                   bytes of landmark tables (landmarks.h); 0 = none */
    int64_t landmark_min_cells; /* ... only on maps of at least this many cells */
} pf_planner_opts;

/* What the server and pathd-bench use unless told otherwise: 16 landmarks
 * on a 512x512 map, 4 on a 1024x1024 one. */
#define PF_PLANNER_DEFAULT_LANDMARK_BYTES ((size_t)16 << 20)
/* Below 128x128 cells astar and plain jps take microseconds and the
 * landmarks' per-node cost outweighs what they save (arena, 49x49: mean
 * astar/jps ratio 10.7x without, 5.5x with). */
#define PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS ((int64_t)128 * 128)

/* Takes ownership of g (also on failure) and builds the per-map data. */
pf_status pf_planner_create(pf_grid *g, const pf_planner_opts *o, pf_planner **out);
void pf_planner_destroy(pf_planner *p);

const pf_grid *pf_planner_grid(const pf_planner *p);
/* Whether the planner has an HPA* hierarchy (then "hpa" is the default). */
bool pf_planner_has_hpa(const pf_planner *p);
/* The HPA* hierarchy, or NULL. */
const struct pf_hpa *pf_planner_hpa(const pf_planner *p);
/* Bytes held: grid, jps tables, landmarks, hierarchy. */
size_t pf_planner_memory(const pf_planner *p);
/* jps's landmarks (shared between versions), or NULL. */
const struct pf_landmarks *pf_planner_landmarks(const pf_planner *p);
/* How many landmarks jps's differential heuristic uses (0: none, octile
 * only). */
int pf_planner_landmark_count(const pf_planner *p);
/* Microseconds the hierarchy took to build (or repair), 0 without one. */
uint64_t pf_planner_hpa_build_us(const pf_planner *p);
/* The grid's components and cut vertices (cuts.h) for D* Lite sessions on
 * this version, built on the first call (O(W x H): 3-5 ms on a 512x512
 * map), so only versions that sessions plan on pay for them; safe from any
 * thread. NULL when out of memory (sessions then simply search). */
const struct pf_cuts *pf_planner_cuts(const pf_planner *p);

/* The agent data of this version (agents.h): clearance, and per agent size
 * the agent grid and its hierarchy, each built on first use and repaired
 * by pf_planner_apply. Shared read-only like the planner. */
const struct pf_agents *pf_planner_agents(const pf_planner *p);

/* The grid an agent of size n moves on (the planner's grid for n = 1),
 * built on first use. PF_ELIMIT for n outside 1..PF_AGENT_SIZE_MAX (the
 * server's own, lower limit is checked before), PF_ENOMEM. Borrowed from
 * p, read-only. */
pf_status pf_planner_agent_grid(const pf_planner *p, int32_t n, const pf_grid **out);

/* Runs q with the algorithm it names (jps falls back to astar where JPS does
 * not apply; out->algorithm says which ran). Statuses as pf_search;
 * PF_EUNSUPPORTED for hpa on a planner without a hierarchy and for dstar,
 * which only sessions run.
 * Agent sizes: with q->agent_size > 1 (PF_ELIMIT past PF_AGENT_SIZE_MAX) the
 * search runs on that size's agent grid, hpa on that size's own hierarchy
 * (both built on first use); jps, whose jumps assume the one-cell rule,
 * runs astar instead and out->algorithm says so. A start or goal where the
 * agent does not fit is PF_EBLOCKED (PF_ERANGE off the map).
 * Partial answers (q->partial): jps and hpa answer as usual when they
 * reach the goal; when they do not (or the goal cell is blocked), astar
 * computes the partial answer, and out->algorithm is astar. */
pf_status pf_planner_search(pf_search_ctx *ctx, const pf_planner *p, const pf_query *q,
                            pf_result *out);

/* The nearest of goals[0..n) (nearest.h), with agent sizes as above:
 * dijkstra runs Dijkstra, astar, jps and hpa run A* over the goals (jps and
 * hpa have no multi-goal form; out->algorithm says astar), other
 * algorithms are PF_EUNSUPPORTED. *which as pf_search_nearest. */
pf_status pf_planner_search_nearest(pf_search_ctx *ctx, const pf_planner *p, const pf_query *q,
                                    const pf_point *goals, size_t n, pf_result *out,
                                    int32_t *which);

/* A change to the world. */
typedef struct pf_cell_change {
    pf_point p;
    uint8_t cost; /* 0 blocks */
} pf_cell_change;

typedef struct pf_door_change {
    int32_t door; /* index, see pf_grid_door_find */
    bool open;
} pf_door_change;

/* Makes the next version: a copy of p's grid with the cell changes applied
 * in order, then the door changes in order, the hierarchy repaired locally,
 * the JPS tables updated, and the agent data p had built (clearance, agent
 * grids, their hierarchies) repaired locally. The result is that of applying the requests one
 * by one (a door request that finds its door so already does nothing), but
 * the work is not: cell changes cost O(1) each, and each door the list
 * switches is rewritten once (twice when it ends as it began) however often
 * the list toggles it, so a PATCH toggling a big door a thousand times
 * costs one rewrite of it, or nothing. On success *out owns the new planner
 * and, when changed_out is not NULL, *changed_out (freed with free(); NULL
 * when *nchanged is 0) lists each cell whose cost or adjacent walls differ
 * from p's grid, once. PF_ERANGE for an off-map cell, PF_EINVAL for a bad
 * door index; on error p is unchanged and nothing is returned. */
pf_status pf_planner_apply(const pf_planner *p, const pf_cell_change *cells, size_t ncells,
                           const pf_door_change *doors, size_t ndoors, pf_planner **out,
                           pf_point **changed_out, size_t *nchanged);

#endif
