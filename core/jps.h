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
 * tests. Once built it is read-only and may be shared by any number
 * of threads, each with its own pf_search_ctx.
 */
#ifndef PF_JPS_H
#define PF_JPS_H

#include <stddef.h>

#include "grid.h"
#include "landmarks.h"
#include "search.h"

typedef struct pf_jps pf_jps;

/* Builds the preprocessing for g (which it does not keep). Always succeeds on
 * any grid except PF_ENOMEM; on maps JPS cannot serve (non-uniform costs,
 * walls, 4-connectivity) searches fall back to astar. Free with
 * pf_jps_destroy (NULL is a no-op). */
pf_status pf_jps_create(const pf_grid *g, pf_jps **out);
void pf_jps_destroy(pf_jps *j);
size_t pf_jps_memory(const pf_jps *j);

/* Brings j in step with g after the cells in changed[0..n) changed (cost,
 * blocked or not) or after g's corner rule changed (n may be 0). Each
 * changed cell costs O(width + height): the jump bits of the three rows and
 * three columns through it are recomputed; a rule change rebuilds all jump
 * bits in O(cells). Until it is called after a rule change, searches on g
 * run without jump bits (plain block scans, which read the rule from g) and
 * stay optimal. PF_EINVAL when j was built for a grid of another size,
 * PF_ERANGE for a point off the map, PF_ENOMEM (j unchanged in all three).
 * Needs exclusive access to j. */
pf_status pf_jps_update(pf_jps *j, const pf_grid *g, const pf_point *changed, size_t n);

/* Whether searches use the jump bits. AUTO (the default after create) uses
 * them where they pay: not on maps where nearly every cell is a diagonal
 * stop (random obstacles, 1-wide mazes), judged at create and update. The
 * other two force the choice, for benchmarks and tests; either way the
 * answers are the same and optimal. Not thread-safe against searches on j. */
typedef enum pf_jps_bits_mode {
    PF_JPS_BITS_AUTO = 0,
    PF_JPS_BITS_ALWAYS,
    PF_JPS_BITS_NEVER
} pf_jps_bits_mode;
void pf_jps_set_bits_mode(pf_jps *j, pf_jps_bits_mode m);

/* Whether JPS itself (not the astar fallback) serves searches on g. */
bool pf_jps_supports(const pf_grid *g);

/* Searches of j add the differential heuristic of lm (borrowed: it must
 * outlive j; NULL turns it off). See landmarks.h. */
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
