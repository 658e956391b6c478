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

#include "build_stop.h"
#include "grid.h"
#include "jps.h"
#include "search.h"

typedef struct pf_planner pf_planner;

typedef struct pf_planner_opts {
    bool build_hpa;                /* build the HPA* hierarchy */
    int32_t cluster_size;          /* HPA* cluster side; 0 = default */
    size_t landmark_bytes;         /* jps's differential heuristic: at most this many
                                      bytes of landmark tables (landmarks.h); 0 = none */
    int64_t landmark_min_cells;    /* ... only on maps of at least this many cells */
    size_t jps_table_bytes;        /* jps's JPS+ jump tables: at most this many bytes
                                      (jps.h, PF_JPS_DEFAULT_TABLE_BYTES); 0 = none */
    int auto_samples;              /* auto's measurement: sample queries per distance
                                      bin (at most PF_PLANNER_MAX_AUTO_SAMPLES),
                                      0 = PF_PLANNER_DEFAULT_AUTO_SAMPLES, -1 = none
                                      (auto then runs the exact search) */
    int64_t subgoal_work_per_cell; /* the subgoal hierarchy's contraction work
                                   bound, per cell of the map (subgoal.h,
                                   pf_subgoal_ch_build's max_work); 0 = no
                                   subgoal hierarchy */
    pf_build_stop *stop;           /* polled by pf_planner_create's builds
                                      (build_stop.h); NULL: never stops. Not
                                      kept by the planner. */
} pf_planner_opts;

/* auto (PF_ALGO_AUTO): per query, the cheapest of the exact search (jps where
 * JPS serves the map, else astar), the subgoal hierarchy where the version
 * has one (planner_subgoal.c: picked where it was PF_PLANNER_AUTO_MARGIN
 * times faster than the exact search, and dropped where no bin picks it)
 * and HPA*, as the build measured them.
 * After the hierarchy is built, the planner times them on sample queries in
 * PF_PLANNER_AUTO_BINS bins of a lower bound of the path length (the larger
 * of the octile distance and jps's landmarks' bound, when the planner has
 * landmarks), in cluster sides, half an octave each: [0, 1/2), [1/2, 1/sqrt 2), [1/sqrt 2, 1),
 * [1, sqrt 2), ... , [32, inf). A
 * query runs what was faster in its bin, HPA* only where it was more than
 * PF_PLANNER_AUTO_MARGIN times faster (so where the exact search is the
 * faster, every answer is optimal), and jps wherever it answers directly
 * (a free straight line, a few word tests). The answer's algorithm says which ran. Later versions
 * of the map (pf_planner_apply) keep the measurement. Maps without a hierarchy, or under
 * PF_PLANNER_AUTO_MIN_CELLS cells, run the exact search. The measurement takes time proportional to
 * the searches: on 512x512 and 1024x1024 maps 16 samples a bin cost 40-140 ms with the warm-up
 * and subgoal's samples (8room_000, Berlin_1_1024, maze512-8-0, AR0011SR, random512-10-0 on a
 * busy machine; 50-140 ms with the octave-wide bins before: planner_auto.c). */
#define PF_PLANNER_AUTO_BINS 14
#define PF_PLANNER_DEFAULT_AUTO_SAMPLES 16
#define PF_PLANNER_MAX_AUTO_SAMPLES 64
#define PF_PLANNER_AUTO_MARGIN 1.1
#define PF_PLANNER_AUTO_MIN_CELLS ((int64_t)64 * 64)

typedef struct pf_planner_auto_info {
    bool calibrated;    /* measured (at this version's build or an older one's) */
    pf_algorithm exact; /* PF_ALGO_JPS or PF_ALGO_ASTAR */
    bool exact_faster;  /* no bin picks HPA*: auto always runs the exact search */
    uint64_t calibrate_us;
    struct {
        double max_distance;     /* the bin's upper end, in cells (INFINITY for the last) */
        int samples;             /* 0: the bin takes its neighbour's choice */
        double exact_us, hpa_us; /* mean thread CPU time of a sample query */
        double subgoal_us;       /* the same for subgoal; 0 without its hierarchy */
        pf_algorithm pick;       /* what auto runs there (but jps on direct paths) */
    } bins[PF_PLANNER_AUTO_BINS];
} pf_planner_auto_info;

/* What the build measured for auto. */
void pf_planner_auto_info_get(const pf_planner *p, pf_planner_auto_info *out);
/* The search auto runs for a query from s to t: PF_ALGO_JPS, PF_ALGO_ASTAR, PF_ALGO_SUBGOAL
 * or PF_ALGO_HPA. O(1) plus, where the bin is not settled by the octile
 * distance, one read of the landmarks of s and t, and jps's direct test. */
pf_algorithm pf_planner_auto_pick(const pf_planner *p, pf_point s, pf_point t);

/* The subgoal hierarchy's work bound per cell the server and pathd-bench
 * use unless told otherwise (planner_subgoal.c): at most 0.4-0.7 s of
 * contraction on a 512x512 map; 8room_000 takes 66 units a cell. */
#define PF_PLANNER_DEFAULT_SUBGOAL_WORK_PER_CELL 128

/* What the server and pathd-bench use unless told otherwise: 16 landmarks
 * on a 512x512 map, 4 on a 1024x1024 one. */
#define PF_PLANNER_DEFAULT_LANDMARK_BYTES ((size_t)16 << 20)
/* Below 128x128 cells astar and plain jps take microseconds and the
 * landmarks' per-node cost outweighs what they save (arena, 49x49: mean
 * astar/jps ratio 10.7x without, 5.5x with). */
#define PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS ((int64_t)128 * 128)

/* Takes ownership of g (also on failure) and builds the per-map data:
 * jump tables, landmarks and dead ends, the hierarchy, auto's measurement,
 * each polling o->stop inside its long phases. PF_ENOMEM, PF_EINVAL and
 * PF_ELIMIT as pf_hpa_build, PF_ECANCELED when o->stop said stop (nothing
 * is kept). */
pf_status pf_planner_create(pf_grid *g, const pf_planner_opts *o, pf_planner **out);
void pf_planner_destroy(pf_planner *p);

const pf_grid *pf_planner_grid(const pf_planner *p);
/* Whether the planner has an HPA* hierarchy. */
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
/* The dead-end share jps's pruning uses on this version, rounded to 0.001
 * (deadends.h; 0 without). */
double pf_planner_dead_ends(const pf_planner *p);
/* Microseconds the hierarchy took to build (or repair), 0 without one. */
uint64_t pf_planner_hpa_build_us(const pf_planner *p);

/* The subgoal graph and its contraction hierarchy (planner_subgoal.c):
 * whether this version has them (then `subgoal` runs and auto may pick
 * it), and their figures. */
typedef struct pf_planner_subgoal_info {
    bool built;
    int32_t subgoals;
    int64_t edges, shortcuts;
    int32_t core;  /* subgoals the bound left uncontracted */
    uint64_t work; /* the contraction's, against the bound */
    size_t memory_bytes;
    uint64_t build_us; /* graph (or its repair) and contraction */
} pf_planner_subgoal_info;
bool pf_planner_has_subgoal(const pf_planner *p);
void pf_planner_subgoal_stats(const pf_planner *p, pf_planner_subgoal_info *out);
/* The grid's components and cut vertices (cuts.h) for D* Lite sessions on
 * this version, built on the first call (O(W x H): 3-5 ms on a 512x512
 * map), so only versions that sessions plan on pay for them; safe from any
 * thread. NULL when out of memory or when stop (build_stop.h; NULL: never)
 * said stop before they were built (sessions then simply search). */
const struct pf_cuts *pf_planner_cuts(const pf_planner *p, pf_build_stop *stop);

/* Sets how jps searches on p (pf_jps_set_layout, pf_jps_set_direct): for
 * benchmarks and tests that hold the layouts side by side. Not thread-safe
 * against searches on p. */
void pf_planner_tune_jps(pf_planner *p, pf_jps_layout layout, bool direct);
/* The jump tables' bytes and what jps searches use on p (pf_jps_get_stats). */
void pf_planner_jps_stats(const pf_planner *p, pf_jps_stats *st);

/* The agent data of this version (agents.h): clearance, and per agent size
 * the agent grid and its hierarchy, each built on first use and repaired
 * by pf_planner_apply. Shared read-only like the planner. */
const struct pf_agents *pf_planner_agents(const pf_planner *p);

/* The grid an agent of size n moves on (the planner's grid for n = 1),
 * built on first use within stop (build_stop.h; NULL: never). PF_ELIMIT
 * for n outside 1..PF_AGENT_SIZE_MAX (the server's own, lower limit is
 * checked before), PF_ENOMEM, PF_ECANCELED (stop said stop: nothing kept,
 * the next call builds again). Borrowed from p, read-only. */
pf_status pf_planner_agent_grid(const pf_planner *p, int32_t n, pf_build_stop *stop,
                                const pf_grid **out);

/* Whether a query of agent size n (with `hpa`: one that may run HPA*)
 * would first build that size's agent data (pf_agents_built): work as long
 * as a build, which the server runs in its build lane. */
bool pf_planner_agent_pending(const pf_planner *p, int32_t n, bool hpa);

/* Runs q with the algorithm it names (jps falls back to astar where JPS does
 * not apply; auto picks as above; out->algorithm says which ran). Statuses
 * as pf_search (auto refuses an inadmissible heuristic as astar does,
 * whatever it picks); PF_EUNSUPPORTED for hpa on a planner without a
 * hierarchy and for dstar, which only sessions run.
 * Agent sizes: with q->agent_size > 1 (PF_ELIMIT past PF_AGENT_SIZE_MAX) the
 * search runs on that size's agent grid, hpa on that size's own hierarchy
 * (both built on first use); jps, whose jumps assume the one-cell rule,
 * runs astar instead and out->algorithm says so; auto makes the one-cell
 * grid's choice (pf_planner_auto_pick) with astar for jps. A start or goal where the
 * agent does not fit is PF_EBLOCKED (PF_ERANGE off the map). What a size
 * builds on first use is built within q->should_stop (PF_ECANCELED when it
 * says stop first; pf_planner_agent_pending tells beforehand).
 * Partial answers (q->partial): jps and hpa answer as usual when they
 * reach the goal; when they do not (or the goal cell is blocked), astar
 * computes the partial answer, and out->algorithm is astar. */
pf_status pf_planner_search(pf_search_ctx *ctx, const pf_planner *p, const pf_query *q,
                            pf_result *out);

/* The nearest of goals[0..n) (nearest.h), with agent sizes as above:
 * dijkstra runs Dijkstra, astar, jps and hpa run A* over the goals (jps and
 * hpa have no multi-goal form, nor has auto; out->algorithm says astar), other
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
 * a copy of the JPS data updated locally (pf_jps_update; rebuilt instead
 * when the changes are so many that their lines cover the map), auto's
 * measurement kept, and the agent data p had built (clearance, agent
 * grids, their hierarchies) repaired locally. The result is that of applying the requests one
 * by one (a door request that finds its door so already does nothing), but
 * the work is not: cell changes cost O(1) each, and each door the list
 * switches is rewritten once (twice when it ends as it began) however often
 * the list toggles it, so a PATCH toggling a big door a thousand times
 * costs one rewrite of it, or nothing. On success *out owns the new planner
 * and, when changed_out is not NULL, *changed_out (freed with free(); NULL
 * when *nchanged is 0) lists each cell whose cost or adjacent walls differ
 * from p's grid, once. PF_ERANGE for an off-map cell, PF_EINVAL for a bad
 * door index; PF_ECANCELED when stop (build_stop.h; NULL: never), polled
 * by every repair and rebuild, said stop; on error p is unchanged and
 * nothing is returned. */
pf_status pf_planner_apply(const pf_planner *p, const pf_cell_change *cells, size_t ncells,
                           const pf_door_change *doors, size_t ndoors, pf_build_stop *stop,
                           pf_planner **out, pf_point **changed_out, size_t *nchanged);

#endif
