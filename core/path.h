/* path.h -- what happens to a path after a search: validation, cost, and
 * smoothing by string pulling.
 */
#ifndef PF_PATH_H
#define PF_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "grid.h"

/* Checks that path[0..n) is a valid cell path on g: n >= 1, every cell
 * walkable, every step a move the map allows (adjacent, no wall, no cut
 * corner). Writes its cost to *cost (may be NULL). On failure returns
 * PF_EINVAL and, when bad_index is not NULL, the index of the first bad cell
 * or step. Thread-safe for concurrent readers of g. */
pf_status pf_path_validate(const pf_grid *g, const pf_point *path, size_t n, double *cost,
                           size_t *bad_index);

/* Whether an agent can walk the straight segment from the centre of a to the
 * centre of b: every cell the segment passes through is walkable, it crosses
 * no wall, and where it passes exactly through a cell corner the diagonal
 * step there obeys the map's corner rule. */
bool pf_path_line_of_sight(const pf_grid *g, pf_point a, pf_point b);

/* Cost of walking the straight segment a -> b: its Euclidean length times the
 * highest entry cost among the cells it enters (exact on uniform maps, an
 * upper bound otherwise). The segment must have line of sight. */
double pf_path_segment_cost(const pf_grid *g, pf_point a, pf_point b);

/* String pulling: replaces path[0..n) by waypoints out[0..*nout) such that
 * consecutive waypoints have line of sight, keeping the first and last cell.
 * Greedy: from each waypoint, the furthest later cell still in sight. `out`
 * holds at least n points and may equal `path`. *cost (may be NULL) is the
 * sum of pf_path_segment_cost over the segments; on uniform maps it is never
 * more than the input path's cost. Returns PF_EINVAL for n == 0. */
pf_status pf_path_smooth(const pf_grid *g, const pf_point *path, size_t n, pf_point *out,
                         size_t *nout, double *cost);

#endif
