/* jps.h -- jump point search (Harabor & Grastien, AAAI 2011; block-based
 * jumps and pruning after Harabor & Grastien, ICAPS 2014).
 *
 * Optimal on 8-connected uniform-cost maps without wall edges, under either
 * corner rule. A pf_jps holds per-map preprocessing, 10 bits a cell:
 * bit-packed rows and a transposed copy for vertical scans, and one "jump
 * bit" grid per direction for the grid's corner rule (does the straight scan
 * from this cell end at a jump point; is this cell a stop for a diagonal),
 * which lets searches skip dead-end scans and step diagonals with one bit
 * test a cell. It also keeps the allowed diagonal steps laid out along the
 * diagonals (5 more bits a cell on a 512x512 map), so that whether a
 * query's "diagonal first, then straight" path is free takes a few word
 * tests, and, within a memory budget, JPS+ jump tables (16 bytes a cell:
 * how far each jump from each cell goes). Once built it is read-only and
 * may be shared by any number of threads, each with its own pf_search_ctx.
 *
 * Files: jps_tables.c builds and updates the per-map data, jps.c searches,
 * jps_direct.c answers free canonical paths and is the entry point;
 * jps_internal.h is their shared layout.
 */
#ifndef PF_JPS_H
#define PF_JPS_H

#include <stddef.h>

#include "build_stop.h"
#include "grid.h"
#include "landmarks.h"
#include "search.h"

typedef struct pf_jps pf_jps;

/* Bytes of JPS+ jump tables (16 a cell) a pf_jps may hold when its
 * parameters do not say: 1024x1024 cells and a little more (the largest
 * shared Moving AI maps take 15.6 MiB). */
#define PF_JPS_DEFAULT_TABLE_BYTES ((size_t)24 << 20)

/* Landmarks (pf_jps_set_landmarks) a search evaluates: of all the map has,
 * the ones that bound the start's distance to the goal best. Every
 * generated jump point pays for each, and the few best do nearly all the
 * pruning: measured against all 16 on 512x512 maps (jump bits, best of
 * three runs of every scenario), p50 per query 32room_000 8.6 -> 6.7 us,
 * AR0700SR 7.7 -> 5.8, maze512-8-0 12.9 -> 10.5, 8room_000 39.7 -> 34.7,
 * maze512-1-0 83.6 -> 73.7; random512-40-0's mean rose 183 -> 206 us
 * (4: faster still on open maps, 8room_000's mean 7% worse). */
#define PF_JPS_DEFAULT_ACTIVE_LANDMARKS 6

typedef struct pf_jps_params {
    /* At most this many bytes of jump tables; 0 = none. Maps whose tables
     * do not fit, or with a side over 32767 cells, are searched with the
     * jump bits. */
    size_t table_bytes;
    /* Landmarks a search evaluates, 0 = PF_JPS_DEFAULT_ACTIVE_LANDMARKS. */
    int active_landmarks;
} pf_jps_params;

/* Builds the preprocessing for g (which it does not keep) with parameters
 * p (NULL = PF_JPS_DEFAULT_TABLE_BYTES). Always succeeds on any grid except
 * PF_ENOMEM; on maps JPS cannot serve (non-uniform costs, walls,
 * 4-connectivity) searches fall back to astar. Without memory for the jump
 * tables it builds none and still succeeds. stop (build_stop.h; NULL:
 * never) is polled a row or column at a time: PF_ECANCELED when it said
 * stop, nothing built. Free with pf_jps_destroy (NULL is a no-op). */
pf_status pf_jps_create(const pf_grid *g, const pf_jps_params *p, pf_build_stop *stop,
                        pf_jps **out);
void pf_jps_destroy(pf_jps *j);
/* A deep copy (tables, layout and landmarks setting included), for the next
 * version of a map: copy, then pf_jps_update. NULL when out of memory. */
pf_jps *pf_jps_clone(const pf_jps *j);
size_t pf_jps_memory(const pf_jps *j);
/* pf_jps_memory of what pf_jps_create(g, p) builds, counted without
 * building it (at most that: tables it cannot allocate are left out).
 * O(1). */
size_t pf_jps_size(const pf_grid *g, const pf_jps_params *p);

/* Brings j in step with g after the cells in changed[0..n) changed (cost,
 * blocked or not) or after g's corner rule changed (n may be 0). Each
 * changed cell costs O(width + height): the jump facts of the three rows
 * and three columns through it are recomputed, and the jump table entries
 * of the diagonals through those lines are carried backwards from the
 * change until they come out unchanged (jps_tables.c); a rule change
 * rebuilds everything in O(cells). Until it is called after a rule change,
 * searches on g run the plain block scans, which read the rule from g, and
 * stay optimal. PF_EINVAL when j was built for a grid of another size,
 * PF_ERANGE for a point off the map, PF_ENOMEM (j unchanged in all three).
 * stop (build_stop.h; NULL: never) is polled a line, a changed cell or a
 * repaired diagonal at a time; PF_ECANCELED when it said stop, and j is
 * then half updated: destroy it (the planner updates a copy). Needs
 * exclusive access to j. */
pf_status pf_jps_update(pf_jps *j, const pf_grid *g, const pf_point *changed, size_t n,
                        pf_build_stop *stop);

/* How searches find jump points. Every layout gives the same, optimal
 * answers. SCAN is the plain reference: block scans of the bit grids alone.
 * BITS adds the jump bits, which skip scans known to end at a wall and step
 * diagonals with a bit test a cell. TABLES reads the JPS+ jump tables: one
 * read per straight jump and per diagonal stop (BITS when j has none).
 * AUTO (the default) takes TABLES where they were built and pay, else BITS
 * where the bits pay (not on maps where nearly every cell is a diagonal
 * stop: random obstacles, 1-wide mazes), else SCAN, judged at create and
 * update. Whichever is asked for, jump data built for another corner rule
 * than g's (before pf_jps_update) is not used: SCAN runs. Not thread-safe
 * against searches on j. */
typedef enum pf_jps_layout {
    PF_JPS_LAYOUT_AUTO = 0,
    PF_JPS_LAYOUT_SCAN,
    PF_JPS_LAYOUT_BITS,
    PF_JPS_LAYOUT_TABLES
} pf_jps_layout;
void pf_jps_set_layout(pf_jps *j, pf_jps_layout l);

/* Whether a query whose canonical path (diagonal first, then straight) is
 * free is answered from it without search (on by default). Off, every
 * query searches: the reference for the direct answers. Not thread-safe
 * against searches on j. */
void pf_jps_set_direct(pf_jps *j, bool on);

typedef struct pf_jps_stats {
    size_t memory_bytes;  /* everything j holds, tables included */
    size_t table_bytes;   /* the jump tables alone; 0 without */
    bool tables_pay;      /* AUTO uses the tables */
    double stop_density;  /* share of (cell, diagonal) pairs that are stops */
    pf_jps_layout layout; /* what searches on g use (AUTO when g is NULL) */
} pf_jps_stats;
void pf_jps_get_stats(const pf_jps *j, const pf_grid *g, pf_jps_stats *st);

/* Whether pf_jps_search would answer a plain query from s to t on g from
 * its free canonical path, without search (JPS serves g, j's jump data is
 * for g's corner rule, both ends on the map and walkable, s != t, the path
 * free): a few word tests. The planner's auto choice asks it first. */
bool pf_jps_is_direct(const pf_jps *j, const pf_grid *g, pf_point s, pf_point t);

/* Whether JPS itself (not the astar fallback) serves searches on g. */
bool pf_jps_supports(const pf_grid *g);

/* Searches of j add the differential heuristic of lm (borrowed: it must
 * outlive j; NULL turns it off), from the active landmarks of each query
 * (PF_JPS_DEFAULT_ACTIVE_LANDMARKS). See landmarks.h. */
void pf_jps_set_landmarks(pf_jps *j, const pf_landmarks *lm);

/* Runs q (q->algorithm is ignored) on g with j built from g. The path is the
 * full cell-by-cell path (jump points expanded), interchangeable with
 * astar's. out->algorithm is PF_ALGO_JPS, or PF_ALGO_ASTAR when the map is
 * not supported and astar ran instead. out->jump_points counts jump points
 * found (each time a jump reaches one), out->expanded the jump points
 * expanded. The heuristic is always octile; q->heuristic is only checked as
 * astar checks it (manhattan is refused). PF_EINVAL when j was built for a
 * grid of another size. Other statuses as pf_search. A query whose
 * canonical path (diagonal first, then straight) is free is answered from
 * it without search: expanded 1 (the start), jump_points 1. */
pf_status pf_jps_search(pf_search_ctx *ctx, const pf_jps *j, const pf_grid *g, const pf_query *q,
                        pf_result *out);

#endif
