/* subgoal.h -- simple subgoal graphs (Uras, Felner and Koenig, "Identifying
 * hierarchies for fast optimal search", AAAI 2013), repairable in place of a
 * rebuild.
 *
 * Optimal on 8-connected uniform-cost maps without wall edges or corner
 * cutting (the Moving AI rule). The subgoals are the walkable cells with a
 * blocked diagonal neighbour whose two sides are walkable (the corners a
 * taut path bends around); two subgoals are joined when one reaches the
 * other by a "diagonal first, then straight" move that passes no other
 * subgoal (direct-h-reachable), at the octile distance between them. A
 * query joins its start and goal to the subgoals they reach the same way,
 * runs A* over that graph (octile, or landmark bounds when given) and
 * unrolls each edge into its cells. Every edge is a real path of its
 * octile cost, and the subgoal graph keeps every shortest distance, so the
 * answer is optimal.
 *
 * Once built a pf_subgoal is read-only and may be shared by threads, each
 * with its own pf_subgoal_ctx. A changed cell changes only the subgoals
 * that reach its 3x3 neighbourhood by "diagonal, then straight" moves:
 * pf_subgoal_repair finds them by walking those moves backwards from the
 * change and recomputes only their edges.
 */
#ifndef PF_SUBGOAL_H
#define PF_SUBGOAL_H

#include <stddef.h>
#include <stdint.h>

#include "build_stop.h"
#include "grid.h"
#include "landmarks.h"

typedef struct pf_subgoal pf_subgoal;
typedef struct pf_subgoal_ctx pf_subgoal_ctx;

/* Whether g is a map subgoal graphs serve: 8-connected, no corner cutting,
 * one cost on every walkable cell, no wall edges. */
bool pf_subgoal_supports(const pf_grid *g);

/* Builds the subgoal graph of g (which it does not keep: queries and
 * repairs are given the grid it describes). PF_EUNSUPPORTED on a map
 * pf_subgoal_supports refuses, PF_ENOMEM, or PF_ECANCELED when stop
 * (build_stop.h; NULL: never), polled every row and every subgoal, said
 * stop; nothing is kept on an error. */
pf_status pf_subgoal_build(const pf_grid *g, pf_build_stop *stop, pf_subgoal **out);

/* The graph of g, a new version of old's map in which the cells
 * changed[0..n) changed (blocked or opened; same size): old's edges are
 * kept for every subgoal the change cannot reach, the rest recomputed.
 * Errors as pf_subgoal_build; old is unchanged. */
pf_status pf_subgoal_repair(const pf_subgoal *old, const pf_grid *g, const pf_point *changed,
                            size_t n, pf_build_stop *stop, pf_subgoal **out);

void pf_subgoal_destroy(pf_subgoal *s); /* NULL is a no-op */
size_t pf_subgoal_memory(const pf_subgoal *s);
int32_t pf_subgoal_count(const pf_subgoal *s);
int64_t pf_subgoal_edge_count(const pf_subgoal *s); /* undirected */
/* Subgoals whose edges the repair that made s recomputed (0 after a build). */
int32_t pf_subgoal_recomputed(const pf_subgoal *s);

pf_subgoal_ctx *pf_subgoal_ctx_create(void);
void pf_subgoal_ctx_destroy(pf_subgoal_ctx *c);
size_t pf_subgoal_ctx_memory(const pf_subgoal_ctx *c); /* bytes of scratch held */

typedef struct pf_subgoal_answer {
    double cost;          /* 0 without a path */
    const pf_point *path; /* start..goal, every cell; borrowed from the ctx */
    size_t path_len;      /* until its next query */
    uint64_t expanded;    /* graph nodes expanded */
    int32_t start_edges;  /* subgoals the start was joined to */
} pf_subgoal_answer;

/* The shortest path from start to goal on g (the grid s describes), with
 * the bounds of lm (NULL: octile; lm must be g's). PF_OK, PF_NO_PATH,
 * PF_ERANGE (a point off the map), PF_EBLOCKED, PF_ENOMEM. */
pf_status pf_subgoal_find(const pf_subgoal *s, const pf_grid *g, const pf_landmarks *lm,
                          pf_subgoal_ctx *c, pf_point start, pf_point goal, pf_subgoal_answer *out);

/* A contraction hierarchy over a subgoal graph (subgoal_ch.c; Geisberger
 * et al. 2008, as in Uras and Koenig's SGCH): the subgoals contracted one
 * by one in an order of edge difference, shortcuts added where a local
 * witness search finds no path as short, until the work reaches its bound;
 * the subgoals left then are the core, whose arcs are followed both ways
 * (Bauer et al.'s core-ALT, 2010). A query joins the start and goal to
 * their subgoals, searches the goal's whole upward space below the core,
 * then runs A* from the start over upward and core arcs toward the goal
 * (with the map's landmarks when given), meeting it, and unpacks the
 * shortcuts. Built from the graph in O(graph), not from the
 * cells, so after a PATCH the subgoal graph is repaired locally and its
 * hierarchy rebuilt. Read-only once built, like the graph. */
typedef struct pf_subgoal_ch pf_subgoal_ch;

/* Builds s's hierarchy. PF_ELIMIT when the shortcuts would pass
 * max_edges (0: 8 times the graph's edges plus 1024). When the
 * contraction's work passes max_work (0: unbounded) it stops there, and
 * the subgoals not yet contracted are the core (pf_subgoal_ch_core). The work is counted in the
 * units of build_stop.h: an arc to an uncontracted subgoal scanned or a
 * node settled by a witness search, a pair of neighbours checked, 16 a
 * contraction. It is what bounds the time: on dense graphs (open random
 * and game maps) the witness searches grow with the square of the degree
 * and an unbounded contraction takes minutes, while on mazes and room maps
 * it stays within a few hundred units a subgoal (maze512-8-0 0.37 M units,
 * a 2-wide 512x512 maze 1.8 M, 8room_000 17 M; see docs/grids.md). The
 * same graph always takes the same work, so the bound leaves the same core
 * on every machine. PF_ENOMEM, PF_ECANCELED (stop, polled as the work
 * is counted). */
pf_status pf_subgoal_ch_build(const pf_subgoal *s, int64_t max_edges, uint64_t max_work,
                              pf_build_stop *stop, pf_subgoal_ch **out);
/* As pf_subgoal_ch_build, for s repaired from old (pf_subgoal_repair):
 * contracts in oh's order (old's hierarchy), the subgoals at cells that
 * were none of old's first, with no priorities and no lazy updates: a
 * quarter to two fifths of the work (2-wide maze 0.57 M units against 1.8 M,
 * 8room_000 7.0 M against 17 M), as many shortcuts give or take a few;
 * oh's core stays the core, and the bound may add to it.
 * PF_EINVAL when old is not of s's map or oh not old's. */
pf_status pf_subgoal_ch_rebuild(const pf_subgoal *s, const pf_subgoal *old, const pf_subgoal_ch *oh,
                                int64_t max_edges, uint64_t max_work, pf_build_stop *stop,
                                pf_subgoal_ch **out);
void pf_subgoal_ch_destroy(pf_subgoal_ch *h); /* NULL is a no-op */
size_t pf_subgoal_ch_memory(const pf_subgoal_ch *h);
int64_t pf_subgoal_ch_shortcuts(const pf_subgoal_ch *h);
uint64_t pf_subgoal_ch_work(const pf_subgoal_ch *h); /* the build's work */
/* Subgoals left uncontracted when the work reached max_work: the core,
 * whose arcs a query follows both ways. */
int32_t pf_subgoal_ch_core(const pf_subgoal_ch *h);

/* As pf_subgoal_find, over h (s's hierarchy); lm (NULL: octile bounds
 * only) must be g's. */
pf_status pf_subgoal_ch_find(const pf_subgoal *s, const pf_subgoal_ch *h, const pf_grid *g,
                             const pf_landmarks *lm, pf_subgoal_ctx *c, pf_point start,
                             pf_point goal, pf_subgoal_answer *out);

#endif
