/* kind_grid_sight.c -- a grid's line of sight for other maps (kind.h's
 * line_of_sight): a 2D graph's auto_link on a grid map.
 *
 * Coordinates: a point [x, y] is in the cell (floor(x), floor(y)), column
 * and row, wherever it lies in that cell's square; a point off the map is
 * in no cell and sees nothing. Two points see each other when their cells
 * do by core's pf_path_line_of_sight (path.h): the straight segment from
 * one cell's centre to the other's passes only through walkable cells,
 * crosses no wall, and where it passes exactly through a cell corner the
 * diagonal step there obeys the map's corner rule (without corner cutting,
 * the default, both cells beside the corner must be walkable). Two points
 * in one walkable cell see each other. The grid is the version's own (its
 * doors as this version has them; agent size 1). */
#include <math.h>
#include <stdio.h>

#include "clock.h"
#include "kind_grid_internal.h"
#include "path.h"

/* The cell of a point, false when it is off g. */
static bool cell_of(const pf_grid *g, const double *p, pf_point *c) {
    double x = floor(p[0]), y = floor(p[1]);
    if (!(x >= 0 && y >= 0 && x < pf_grid_width(g) && y < pf_grid_height(g))) return false;
    c->x = (int32_t)x;
    c->y = (int32_t)y;
    return true;
}

pf_status pf__grid_line_of_sight(const pf_mapver *mv, const char *agent_type, int dim,
                                 const double *pos, const uint32_t *pairs, size_t n,
                                 uint8_t *visible, const uint64_t *deadline, const char *prefix,
                                 pf_proto_error *e) {
    const pf_grid *g = pf__grid_of(mv);
    char f[64];
    if (agent_type) {
        snprintf(f, sizeof(f), "%sagent_type", prefix);
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Map '%s' is a grid map: an agent type is a navmesh's; leave "
                                  "'%s' out.",
                                  mv->id, f);
    }
    if (dim != 2) {
        snprintf(f, sizeof(f), "%smap", prefix);
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Map '%s' is a grid map: it links 2D graphs (x the column, y "
                                  "the row), and this graph is %dD.",
                                  mv->id, dim);
    }
    for (size_t k = 0; k < n; k++) {
        pf_point a, b;
        if ((k & 1023) == 1023 && deadline && pf_clock_now_ns() >= *deadline) return PF_ECANCELED;
        visible[k] = cell_of(g, pos + 3 * (size_t)pairs[2 * k], &a) &&
                     cell_of(g, pos + 3 * (size_t)pairs[2 * k + 1], &b) &&
                     pf_path_line_of_sight(g, a, b);
    }
    return PF_OK;
}
