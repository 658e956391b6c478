/* navref_layers.h -- an independent reference for navmesh paths on 3D
 * levels: the exact shortest path over a set of convex polygons in space
 * (floors, slopes, ramps, overlapping layers), measured on the ground
 * plane (x and z), the metric polyanya's "exact" is in. Written here
 * plainly, without Detour or nav/ code; it reads only the polygons.
 *
 * The surface is the polygons glued along their shared edges: two edges
 * are glued where they lie on one line in x/z, overlap with positive
 * length, run opposite ways, and are within `climb` of each other in
 * height there (Detour's rule across tile borders), and neither is marked
 * a wall by the caller. A point of the surface is a point of a polygon; its
 * layer is the polygon's. The shortest path on such a surface is a
 * polyline that bends only at the ends of wall segments (the uncovered
 * parts of polygon edges), so the reference is the visibility graph over
 * those corners, searched by Dijkstra with start and goal added. Two points
 * see each other when the straight segment between them (in x/z) can be
 * walked polygon to polygon across glued edges from the first point's
 * polygon and ends in a polygon holding the second at its height; a walk
 * that reaches a vertex or an edge continues into whichever polygon around
 * that point (glued to the current one) holds the segment's next stretch.
 * Visibility is computed lazily, from the corners Dijkstra settles. */
#ifndef PF_TESTS_NAVREF_LAYERS_H
#define PF_TESTS_NAVREF_LAYERS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct navref_layers navref_layers;

/* The polygons: polygon i has the vertices idx[first[i]..first[i+1]) of
 * verts (3 floats each, x y z), 3 to 8 of them, convex in x/z, either
 * winding; bit j of walls[i] marks its edge j (vertex j to j + 1) a wall
 * (walls may be NULL). climb: the height two glued edges may differ by.
 * layer: how far a point may lie above or below its polygon's surface (the
 * fan of its vertices; the ground, a detail mesh, may differ from it on
 * slopes) and still be on it; of the polygons holding a point in x/z, the
 * one nearest its height is its. NULL when out of memory or a polygon is
 * malformed. */
navref_layers *navref_layers_create(const float *verts, const int *first, const int *idx,
                                    int npolys, const uint8_t *walls, float climb, float layer);
void navref_layers_destroy(navref_layers *r);

/* The ground-plane length of the shortest path on the surface from s to
 * t: -1 when there is none, -2 when s or t lies on no polygon (within
 * `layer` of its height). */
double navref_layers_shortest(const navref_layers *r, const float s[3], const float t[3]);

/* The same, and the path's points (s, the corners, t: 3 floats each, at
 * most max) into pts, their number in *npts (0 when none or more than max). */
double navref_layers_path(const navref_layers *r, const float s[3], const float t[3], float *pts,
                          int max, int *npts);

/* Whether the straight segment a -> b lies on the surface (a on the
 * polygon nearest its height, b reached at its height). */
bool navref_layers_sees(const navref_layers *r, const float a[3], const float b[3]);

/* Corners of the surface: the graph's fixed nodes. */
int navref_layers_corners(const navref_layers *r);

#endif
