/* snap.c -- the nearest walkable cell. See snap.h. */
#include "snap.h"

pf_status pf_snap(const pf_grid *g, pf_point p, int32_t radius, pf_point *out) {
    const int64_t w = pf_grid_width(g), h = pf_grid_height(g);
    int64_t x0, x1, y0, y1, best = -1;
    pf_point bp = p;
    *out = p;
    if (radius < 0 || radius > PF_SNAP_MAX_RADIUS) return PF_EINVAL;
    if (pf_grid_is_walkable(g, p)) return PF_OK;
    /* The box of candidates, clipped to the map, in 64 bits: p may be
     * anywhere in int32. */
    x0 = (int64_t)p.x - radius;
    x1 = (int64_t)p.x + radius;
    y0 = (int64_t)p.y - radius;
    y1 = (int64_t)p.y + radius;
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > w - 1) x1 = w - 1;
    if (y1 > h - 1) y1 = h - 1;
    for (int64_t y = y0; y <= y1; y++)
        for (int64_t x = x0; x <= x1; x++) {
            int64_t dx = x - p.x, dy = y - p.y, d2 = dx * dx + dy * dy;
            pf_point c = {(int32_t)x, (int32_t)y};
            /* Row-major order makes the first of equal distances the one
             * with the lower y, then the lower x. */
            if ((best < 0 || d2 < best) && pf_grid_is_walkable(g, c)) {
                best = d2;
                bp = c;
            }
        }
    if (best < 0) return pf_grid_in_bounds(g, p) ? PF_EBLOCKED : PF_ERANGE;
    *out = bp;
    return PF_OK;
}
