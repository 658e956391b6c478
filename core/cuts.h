/* cuts.h -- connected components and cut vertices of a grid's move graph.
 *
 * Answers two questions in O(1) (a binary search over components and a
 * look at one cell's at most eight neighbours):
 * - are cells a and b connected on the grid?
 * - does removing cell c alone disconnect a from b?
 *
 * D* Lite sessions ask them before a repair (dstar.h). When a private
 * change blocks a cell that separates the agent from its goal, D* Lite
 * would raise every vertex it had reached behind the cut before finding
 * that no path is left; on a perfect maze (a tree: every crossing of the
 * path disconnects) that is more work than a fresh A*. The answer is known
 * here at once, and the repair waits until a later change reconnects.
 *
 * How: one depth-first search numbers the walkable cells in preorder (tin)
 * and keeps, for each, the last number of its subtree (end) and the
 * smallest number reachable from its subtree through one non-tree edge
 * (low; Hopcroft & Tarjan, "Efficient algorithms for graph manipulation",
 * CACM 1973). Removing c cuts off exactly those child subtrees s of c with
 * low(s) >= tin(c); every other cell of c's component stays with c's
 * parent. So a and b are separated by c when they fall on different sides.
 *
 * The graph is the grid's moves (grid.h: costs, walls, connectivity, the
 * corner rule), which are symmetric, so "connected" is both ways. Removing
 * a cell here removes it and its edges only; blocking it on the grid may
 * remove more (diagonals past its corner), which can only disconnect more:
 * "separated" stays true for the blocked grid.
 *
 * 13 bytes a cell (3.4 MB on a 512x512 map), O(W x H) time to build, no
 * recursion. Immutable once built.
 */
#ifndef PF_CUTS_H
#define PF_CUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "build_stop.h"
#include "grid.h"
#include "status.h"

typedef struct pf_cuts pf_cuts;

/* PF_ENOMEM, or PF_OK with *out set. stop (build_stop.h; NULL: never) is
 * polled every slice of cells visited: PF_ECANCELED when it said stop. */
pf_status pf_cuts_build(const pf_grid *g, pf_build_stop *stop, pf_cuts **out);
void pf_cuts_destroy(pf_cuts *k); /* NULL is a no-op */
size_t pf_cuts_memory(const pf_cuts *k);
uint64_t pf_cuts_build_us(const pf_cuts *k);

/* Cells are indices y * w + x of the grid the cuts were built from. */

/* Both walkable and in one component. */
bool pf_cuts_connected(const pf_cuts *k, int32_t a, int32_t b);
/* a and b walkable, connected, and every path between them passes through
 * c (c != a, c != b; false when c is a or b, or blocked). */
bool pf_cuts_separates(const pf_cuts *k, int32_t c, int32_t a, int32_t b);

/* For deadends.c: the block data of deadends.h from the DFS (3 words per
 * walkable cell by preorder number into b, 3 words a cell into c), the
 * walkable cells and the cells of the largest block. PF_ENOMEM,
 * PF_ECANCELED (stop, as pf_cuts_build) or PF_OK. */
pf_status pf__cuts_block_intervals(const pf_cuts *k, pf_build_stop *stop, uint32_t *b, uint32_t *c,
                                   int32_t *seen, int32_t *largest);

#endif
