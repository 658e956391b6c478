/* snap.h -- moving a blocked or off-map start or goal to the nearest
 * walkable cell (Detour's findNearestPoly, on a grid).
 *
 * Nearest means the least Euclidean distance between cell centres, among
 * the walkable cells within Chebyshev distance `radius` of the point; ties
 * go to the lower y, then the lower x, so the answer is deterministic. On
 * an agent grid (clearance.h) "walkable" is "the agent fits there", so the
 * same call snaps a large agent. O(radius^2) cells looked at, whatever the
 * map. Thread-safe for concurrent readers of g.
 */
#ifndef PF_SNAP_H
#define PF_SNAP_H

#include <stdbool.h>
#include <stdint.h>

#include "grid.h"
#include "status.h"

/* The largest radius core accepts. [Limits: 0 <= radius <= 1024] */
#define PF_SNAP_MAX_RADIUS 1024

/* Writes to *out the walkable cell nearest to p (which may lie off the
 * map, any int32 coordinates) within `radius`; p itself when it is
 * walkable. PF_EINVAL for a radius outside 0..PF_SNAP_MAX_RADIUS; when no
 * walkable cell is that close, the status p alone would get: PF_ERANGE
 * when p is off the map, else PF_EBLOCKED. */
pf_status pf_snap(const pf_grid *g, pf_point p, int32_t radius, pf_point *out);

#endif
