/* navref.h -- an independent reference for navmesh paths: the exact
 * Euclidean shortest path inside the region a grid's walkable cells cover,
 * written here without Detour or polyanya code.
 *
 * The region is the closed union of the unit squares of the walkable cells
 * (cell (x, y) is the square x..x+1 by y..y+1 of the plane, as in a mesh
 * converted from the grid, with the grid's y on the world's z). A mesh built
 * from such a grid with no erosion (agent radius 0) and no contour
 * simplification past half a voxel covers exactly this region, provided no
 * two walkable cells touch only at a corner (a pinch point: the mesh does
 * not link polygons that share only a vertex, the closed union does);
 * navref_unpinch removes those.
 *
 * The shortest path between two points of a polygonal region is a polyline
 * that bends only at reflex corners of the region's boundary (here: grid
 * points with exactly three of their four cells walkable). The reference
 * builds the visibility graph over those corners once (two corners see each
 * other when the segment between them lies in the region: tested cell by
 * cell along the segment) and answers a query by Dijkstra over the graph
 * with the two points added. */
#ifndef PF_TESTS_NAVREF_H
#define PF_TESTS_NAVREF_H

#include <stdbool.h>
#include <stddef.h>

#include "grid.h"

typedef struct navref navref;

/* Makes every 2x2 block of g whose walkable cells touch only at a corner
 * have a third walkable cell (the blocked cell chosen by *seed), until no
 * such block is left. Returns the cells it opened. */
size_t navref_unpinch(pf_grid *g, uint64_t *seed);

/* The visibility graph of g's walkable region (g borrowed: keep it alive
 * and unchanged). NULL when out of memory. */
navref *navref_create(const pf_grid *g);
void navref_destroy(navref *r);

/* Whether the segment a -> b (points of the plane, x and z) lies in the
 * closed walkable region. */
bool navref_segment_inside(const navref *r, const double a[2], const double b[2]);

/* The length of the shortest path from s to t inside the region (both
 * points in it), or -1 when none exists. */
double navref_shortest(const navref *r, const double s[2], const double t[2]);

/* Reflex corners of the region: the graph's fixed nodes. */
size_t navref_corners(const navref *r);

#endif
