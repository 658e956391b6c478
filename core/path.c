/* path.c -- path validation and string-pulling smoothing. */
#include "path.h"

#include <math.h>
#include <stdlib.h>

pf_status pf_path_validate(const pf_grid *g, const pf_point *path, size_t n, double *cost,
                           size_t *bad_index) {
    double c = 0.0;
    if (n == 0) {
        if (bad_index) *bad_index = 0;
        return PF_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!pf_grid_is_walkable(g, path[i])) {
            if (bad_index) *bad_index = i;
            return PF_EINVAL;
        }
        if (i > 0) {
            if (!pf_grid_can_step(g, path[i - 1], path[i])) {
                if (bad_index) *bad_index = i;
                return PF_EINVAL;
            }
            c += pf_grid_step_cost(g, path[i - 1], path[i]);
        }
    }
    if (cost) *cost = c;
    return PF_OK;
}

/* Walks the cells a segment between cell centres passes through, in order
 * (Amanatides & Woo, "A Fast Voxel Traversal Algorithm", 1987), calling
 * visit(prev, next) for every step. Exact corner crossings, where the segment
 * passes through a lattice point, come out as one diagonal step. Stops and
 * returns false as soon as visit does. Integer arithmetic only: with centres
 * at half-integers, the crossing tests compare (2k+1)*|dy| against |dx|-sized
 * products, so no rounding decides a corner. */
typedef bool (*visit_fn)(const pf_grid *g, pf_point from, pf_point to, void *ud);

static bool walk_segment(const pf_grid *g, pf_point a, pf_point b, visit_fn visit, void *ud) {
    int64_t dx = b.x - a.x, dy = b.y - a.y;
    int64_t adx = dx < 0 ? -dx : dx, ady = dy < 0 ? -dy : dy;
    int sx = dx > 0 ? 1 : (dx < 0 ? -1 : 0), sy = dy > 0 ? 1 : (dy < 0 ? -1 : 0);
    /* Parametrise by t in [0, 2*adx*ady]; the next vertical grid line is
     * crossed at t = (2i+1)*ady, the next horizontal one at (2j+1)*adx. */
    int64_t i = 0, j = 0;
    pf_point cur = a;
    while (cur.x != b.x || cur.y != b.y) {
        int64_t tx = adx ? (2 * i + 1) * ady : INT64_MAX;
        int64_t ty = ady ? (2 * j + 1) * adx : INT64_MAX;
        pf_point nx = cur;
        if (tx < ty) {
            nx.x += sx;
            i++;
        } else if (ty < tx) {
            nx.y += sy;
            j++;
        } else {
            nx.x += sx;
            nx.y += sy;
            i++;
            j++;
        }
        if (!visit(g, cur, nx, ud)) return false;
        cur = nx;
    }
    return true;
}

static bool visit_step_allowed(const pf_grid *g, pf_point from, pf_point to, void *ud) {
    (void)ud;
    if (from.x != to.x && from.y != to.y && pf_grid_connectivity(g) == 4) {
        /* A 4-connected agent goes round the corner: either L route will do,
         * but each must be a legal orthogonal step pair. */
        pf_point c1 = {to.x, from.y}, c2 = {from.x, to.y};
        return (pf_grid_can_step(g, from, c1) && pf_grid_can_step(g, c1, to)) ||
               (pf_grid_can_step(g, from, c2) && pf_grid_can_step(g, c2, to));
    }
    return pf_grid_can_step(g, from, to);
}

bool pf_path_line_of_sight(const pf_grid *g, pf_point a, pf_point b) {
    if (!pf_grid_is_walkable(g, a) || !pf_grid_is_walkable(g, b)) return false;
    return walk_segment(g, a, b, visit_step_allowed, NULL);
}

static bool visit_max_cost(const pf_grid *g, pf_point from, pf_point to, void *ud) {
    uint8_t *mx = ud;
    uint8_t c = pf_grid_cost(g, to);
    (void)from;
    if (c > *mx) *mx = c;
    return true;
}

double pf_path_segment_cost(const pf_grid *g, pf_point a, pf_point b) {
    uint8_t mx = 0;
    double dx = b.x - a.x, dy = b.y - a.y;
    if (a.x == b.x && a.y == b.y) return 0.0;
    walk_segment(g, a, b, visit_max_cost, &mx);
    /* A single step keeps the grid's exact step length. */
    return mx *
           ((fabs(dx) == 1 && fabs(dy) == 1) ? 1.41421356237309504880 : sqrt(dx * dx + dy * dy));
}

pf_status pf_path_smooth(const pf_grid *g, const pf_point *path, size_t n, pf_point *out,
                         size_t *nout, double *cost) {
    size_t anchor = 0, k = 0;
    double c = 0.0;
    if (n == 0) return PF_EINVAL;
    pf_point first = path[0];
    out[k++] = first;
    while (anchor + 1 < n) {
        size_t next = anchor + 1;
        /* Extend while the next cell is still in sight of the anchor. On
         * uniform maps a cell path's neighbours are always in sight. */
        while (next + 1 < n && pf_path_line_of_sight(g, path[anchor], path[next + 1])) next++;
        c += pf_path_segment_cost(g, path[anchor], path[next]);
        /* out may alias path: anchor <= k-1 < next, so path[next] is unread. */
        out[k++] = path[next];
        anchor = next;
    }
    *nout = k;
    if (cost) *cost = c;
    return PF_OK;
}
