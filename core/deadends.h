/* deadends.h -- which cells can lie on a shortest path between two cells:
 * pruning for jump point search on maps with dead ends (mazes, rooms with
 * one door).
 *
 * A shortest path (positive costs) is a simple path, and a simple path from
 * s to g only visits the biconnected blocks on the path between s and g in
 * the block-cut tree (Hopcroft & Tarjan 1973): any other block hangs off
 * that path behind a cut vertex the path would have to pass twice. On a
 * perfect maze (a tree) the blocks are single corridor steps, so what is
 * left is the path itself; jps with landmarks expanded twice as many jump
 * points on maze512-1-0 without this, most of them in side corridors.
 *
 * From one depth-first search (cuts.c), per walkable cell u: the preorder
 * interval I(u) of the DFS subtree of its block's head (the first vertex x
 * on u's tree path to the root whose tree edge to its parent starts a block:
 * low(x) >= tin(parent)), the top cut vertex up(u) of that block (the head's
 * parent), and u's own preorder number. Rooting the block-cut tree at the
 * DFS root, u's block is an ancestor of cell v's node exactly when tin(v)
 * lies in I(u). A DFS root's cells get the whole tree's interval.
 *
 * A query (pf_deadends_begin) walks from s up the chain of blocks holding
 * it (cell, up, up of up, ...) to the first block whose interval holds g:
 * the deepest block holding both, L. The blocks on the s-g path are those
 * holding exactly one of s and g, and L (or, when the path turns at a cut
 * vertex of L, not even L: allowing it is merely safe). So u is allowed
 * when I(u) holds exactly one of tin(s), tin(g), or I(u) is L's, or u is
 * L's top cut vertex (a cell of L that its interval does not name). The
 * walk is as long as the part of the block-cut path on s's side: on a
 * perfect maze half the path's cells, on room and cave maps a few blocks.
 *
 * Built from the map with every door open, like the landmarks (and kept
 * with them, landmarks.h): closing doors or blocking cells only removes
 * edges, and every simple path of the smaller graph is one of the larger,
 * so the test stays safe for later versions the landmarks are valid for.
 *
 * 24 bytes a walkable cell (12 in map order for the test, 12 in DFS order
 * for the walk), PF_DEADENDS_CELL_BYTES. Immutable once built.
 */
#ifndef PF_DEADENDS_H
#define PF_DEADENDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "build_stop.h"
#include "grid.h"
#include "status.h"

typedef struct pf_deadends {
    int32_t n;   /* cells */
    int32_t nb;  /* walkable cells: entries of b */
    uint32_t *c; /* cell u: c[3u] lo, c[3u + 1] len (I(u) = [lo, lo + len]), c[3u + 2]
                    its preorder number t; blocked: UINT32_MAX, 0, UINT32_MAX */
    uint32_t *b; /* by preorder number t: b[3t] lo, b[3t + 1] len, b[3t + 2] the
                    preorder number of up (UINT32_MAX: none). In DFS order, so
                    the walk up a corridor reads memory backwards in order. */
    double dead; /* walkable cells outside the largest block / walkable cells */
} pf_deadends;

#define PF_DEADENDS_CELL_BYTES 24 /* at most, per cell of the map */

/* Below this dead fraction the pruning does not pay for its per-jump-point
 * read: pf_deadends_build gives NULL (open and cave-like maps). */
#define PF_DEADENDS_MIN_DEAD 0.05

/* At or above this dead fraction a map is tree-like: jps drops the
 * landmark heuristic there (see jps.c). */
#define PF_DEADENDS_TREE 0.95

/* *out NULL (with PF_OK) when the map has fewer than two walkable cells or
 * a dead fraction below min_dead (PF_DEADENDS_MIN_DEAD for searches).
 * PF_ENOMEM; PF_ECANCELED when stop (build_stop.h; NULL: never), polled
 * every slice of cells, said stop. */
pf_status pf_deadends_build(const pf_grid *g, double min_dead, pf_build_stop *stop,
                            pf_deadends **out);
void pf_deadends_destroy(pf_deadends *d); /* NULL is a no-op */
size_t pf_deadends_memory(const pf_deadends *d);

/* One query's view: see pf_deadends_begin. */
typedef struct pf_deadends_query {
    uint32_t ts, tg;  /* preorder numbers of the start and the goal */
    uint32_t lca_lo;  /* lo of L, the deepest block holding both */
    uint32_t lca_top; /* preorder number of L's top cut vertex, UINT32_MAX for none */
} pf_deadends_query;

/* Prepares q for cells s and g (indices y w + x). False when either is
 * blocked on the map d was built from or they are not connected there: then
 * nothing may be pruned. */
bool pf_deadends_begin(const pf_deadends *d, int32_t s, int32_t g, pf_deadends_query *q);

/* Whether cell u may lie on a simple path between q's start and goal. False
 * only when it cannot. */
static inline __attribute__((always_inline)) bool
pf_deadends_allowed(const pf_deadends *d, const pf_deadends_query *q, int32_t u) {
    const uint32_t *e = d->c + 3 * (size_t)u;
    uint32_t lo = e[0], len = e[1];
    return (q->ts - lo <= len) != (q->tg - lo <= len) || lo == q->lca_lo || e[2] == q->lca_top;
}

#endif
