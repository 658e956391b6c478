/* search.h -- single-query grid searches and the per-thread search context.
 *
 * Algorithms here need nothing but the grid: bfs, dijkstra, astar, weighted
 * A* and greedy best-first. Jump point search (jps.h), HPA* (hpa.h) and
 * D* Lite (dstar.h) have their own entry points because they need per-map
 * preprocessing or per-agent state, but fill the same pf_result; auto is
 * the planner's choice between them (planner.h).
 *
 * A pf_search_ctx holds the scratch memory of one thread: node arrays sized to
 * the largest grid seen, reset in O(1) per query by a generation counter, and
 * the binary heap. Nothing is allocated inside an expansion loop. A context is
 * not thread-safe; use one per worker thread. Grids are only read.
 */
#ifndef PF_SEARCH_H
#define PF_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "status.h"

typedef enum pf_algorithm {
    PF_ALGO_BFS = 0,  /* fewest steps; cost reported is the path's real cost */
    PF_ALGO_DIJKSTRA, /* optimal */
    PF_ALGO_ASTAR,    /* optimal with an admissible heuristic */
    PF_ALGO_WEIGHTED, /* g + w*h, cost <= w x optimal */
    PF_ALGO_GREEDY,   /* best-first on h alone, no guarantee */
    PF_ALGO_JPS,      /* jump point search, optimal, uniform-cost maps (jps.h) */
    PF_ALGO_HPA,      /* HPA*, near-optimal (hpa.h) */
    PF_ALGO_DSTAR,    /* D* Lite, sessions (dstar.h) */
    PF_ALGO_AUTO,     /* per query the cheapest of jps (or astar), subgoal and hpa (planner.h) */
    PF_ALGO_SUBGOAL,  /* subgoal graph and its contraction hierarchy, optimal (subgoal.h) */
    PF_ALGO_COUNT
} pf_algorithm;

typedef enum pf_heuristic {
    PF_H_DEFAULT = 0, /* octile on 8-connected maps, manhattan on 4-connected */
    PF_H_OCTILE,
    PF_H_MANHATTAN,
    PF_H_CHEBYSHEV,
    PF_H_EUCLIDEAN,
    PF_H_COUNT
} pf_heuristic;

/* "astar" -> PF_ALGO_ASTAR; returns false for an unknown name. */
bool pf_algorithm_from_name(const char *name, pf_algorithm *out);
const char *pf_algorithm_name(pf_algorithm a);
/* True for the algorithms whose cost is the optimum. */
bool pf_algorithm_is_optimal(pf_algorithm a);
bool pf_heuristic_from_name(const char *name, pf_heuristic *out);
const char *pf_heuristic_name(pf_heuristic h);

/* Heuristic distance between a and b (unit cost per step), exact formulas:
 * octile max + (sqrt2 - 1) min, manhattan dx + dy, chebyshev max, euclidean. */
double pf_heuristic_eval(pf_heuristic h, pf_point a, pf_point b);

/* Called every few hundred expansions; returning true stops the search with
 * PF_ECANCELED. Used by the server for deadlines and cancellation. */
typedef bool (*pf_stop_fn)(void *ud);

typedef struct pf_query {
    pf_point start, goal;
    pf_algorithm algorithm;
    pf_heuristic heuristic; /* PF_H_DEFAULT picks by connectivity */
    double weight;          /* PF_ALGO_WEIGHTED only; >= 1 */
    uint64_t max_expanded;  /* node budget; 0 = unlimited */
    bool record_expanded;   /* keep the expanded cells (debug viewer) */
    pf_stop_fn should_stop; /* may be NULL */
    void *stop_ud;
    /* Side of the agent's square (clearance.h); 0 and 1 mean one cell.
     * Only pf_planner_search serves sizes > 1 (it keeps the agent grids);
     * pf_search answers them PF_EUNSUPPORTED. */
    int32_t agent_size;
    /* Partial answers (Detour's DT_PARTIAL_RESULT): when the goal cannot
     * be reached -- unreachable, a blocked goal cell, or the node budget
     * spent -- answer PF_OK with the path to the expanded cell closest to
     * the goal (least heuristic distance, then least cost, then lowest
     * cell index) and set pf_result.partial. With the goal unreachable the
     * search has expanded the whole of the start's region, so that cell is
     * the closest reachable one. A blocked goal cell is accepted (an
     * off-map one still is PF_ERANGE). */
    bool partial;
} pf_query;

/* A query with every option at its default for `algo`. */
pf_query pf_query_make(pf_point start, pf_point goal, pf_algorithm algo);

typedef struct pf_result {
    pf_status status;              /* PF_OK, PF_NO_PATH, PF_EBUDGET, PF_ECANCELED, or an error */
    pf_algorithm algorithm;        /* the algorithm that actually ran */
    double cost;                   /* path cost under the map's costs; 0 without a path */
    const pf_point *path;          /* start..goal inclusive; borrowed from the context, */
    size_t path_len;               /* valid until its next search */
    const pf_point *abstract_path; /* hpa with record_expanded: start, the transitions */
    size_t abstract_path_len;      /* path was refined from, goal (borrowed like path) */
    uint64_t expanded;             /* nodes taken off the open list and expanded */
    uint64_t generated;            /* nodes pushed or improved on the open list */
    uint64_t jump_points;          /* jps: jump points found; 0 otherwise */
    const int32_t *expanded_cells; /* cell indices (y*w+x), when recorded */
    size_t expanded_cells_len;
    /* With pf_query.partial: true when path ends short of the goal, at the
     * closest cell (status is PF_OK, cost the partial path's); why the goal
     * was not reached: PF_NO_PATH, PF_EBLOCKED (goal cell blocked) or
     * PF_EBUDGET. */
    bool partial;
    pf_status partial_reason;
} pf_result;

typedef struct pf_search_ctx pf_search_ctx;

/* NULL on allocation failure. Scratch grows on demand with the grid size. */
pf_search_ctx *pf_search_ctx_create(void);
void pf_search_ctx_destroy(pf_search_ctx *ctx);
/* Bytes of scratch memory the context holds. */
size_t pf_search_ctx_memory(const pf_search_ctx *ctx);

/* Runs q on g. Validates start and goal (PF_ERANGE off the map, PF_EBLOCKED on
 * a blocked cell) and the options (PF_EINVAL: weight < 1 or not finite, or
 * for astar a heuristic that overestimates, see pf_heuristic_is_admissible).
 * start == goal answers [start], cost 0.
 * An unreachable goal is PF_NO_PATH (with q->partial: see pf_query). The
 * return value equals out->status.
 * Algorithms with their own entry point (jps, hpa, dstar, auto, subgoal) give
 * PF_EINVAL. */
pf_status pf_search(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q, pf_result *out);

/* Whether heuristic h never overestimates on grids of this connectivity. */
bool pf_heuristic_is_admissible(pf_heuristic h, int connectivity);

#endif
