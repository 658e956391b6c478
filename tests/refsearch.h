/* refsearch.h -- independent references for the many-units features: the
 * agent footprint rule restated from clearance.h's contract on the grid's
 * public API, and a plain multi-source Dijkstra over it. Nothing here uses
 * core's clearance, agent grids, bucket queue or search code, so the tests
 * can hold those against it. */
#ifndef PF_TESTS_REFSEARCH_H
#define PF_TESTS_REFSEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"

/* Whether an agent of side n fits with its top-left cell at p: every cell
 * of the n x n square on the map and walkable, no wall edge between two of
 * its cells. */
bool ref_agent_fits(const pf_grid *g, pf_point p, int32_t n);

/* Whether the agent of side n may step from a by (dx, dy): it fits at both
 * ends; orthogonally, every cell of its square at a may make the step under
 * the map's rule (tu_reference_can_step); diagonally, the map's corner rule
 * holds for the agent's own L routes (through a + (dx, 0) and a + (0, dy),
 * each two such orthogonal steps). *cost (may be NULL) gets the step's
 * cost: the highest entry cost in the square at the far end times 1 or
 * sqrt 2. For n = 1 this is the map's rule itself. */
bool ref_agent_step(const pf_grid *g, int32_t n, pf_point a, int dx, int dy, double *cost);

/* Dijkstra (binary heap) over ref_agent_step from every cell of
 * src[0..nsrc) at once: forward, dist[y w + x] = cost from the nearest
 * source to the cell; backward, the cost of walking from the cell to its
 * nearest source. INFINITY where none. n = 1 is the map's own rule. */
void ref_dists(const pf_grid *g, int32_t n, const pf_point *src, size_t nsrc, bool backward,
               double *dist);

/* The same with paths kept inside the box [x0, x0 + bw) x [y0, y0 + bh)
 * (the map's rules unchanged: a diagonal along the box's edge may pass an
 * outside corner it does not enter). dist is still w x h, INFINITY
 * outside the box. */
void ref_dists_box(const pf_grid *g, int32_t n, const pf_point *src, size_t nsrc, bool backward,
                   int32_t x0, int32_t y0, int32_t bw, int32_t bh, double *dist);

/* The independent footprint check of a path of an agent of side n: every
 * point fits and every step is allowed. Returns -1 and the path's cost in
 * *cost (may be NULL), or the index of the first bad point or step. */
long ref_agent_path_check(const pf_grid *g, int32_t n, const pf_point *path, size_t len,
                          double *cost);

/* Relative-and-absolute closeness of two costs (sums of sqrt 2 steps added
 * in different orders differ in the last bits). */
bool ref_close(double a, double b);

#endif
