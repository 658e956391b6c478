/* jpsref.c -- see jpsref.h. */
#include "jpsref.h"

#include <stdbool.h>
#include <stdlib.h>

#include "jps_internal.h"
#include "testutil.h"

static bool open_at(const pf_grid *g, int32_t x, int32_t y) {
    return pf_grid_is_walkable(g, (pf_point){x, y});
}

/* Whether walkable cell (x, y), entered moving straight (sx, sy), has a
 * forced neighbour (Harabor & Grastien's rules, per corner rule): with
 * corner cutting, a blocked side cell whose diagonal ahead is open; without,
 * a blocked cell beside the one behind, with the side cell open. */
static bool forced(const pf_grid *g, int32_t x, int32_t y, int sx, int sy) {
    bool cc = pf_grid_corner_cutting(g);
    for (int q = -1; q <= 1; q += 2) {
        int32_t qx = sx ? 0 : q, qy = sx ? q : 0;
        if (cc) {
            if (!open_at(g, x + qx, y + qy) && open_at(g, x + sx + qx, y + sy + qy) &&
                open_at(g, x + sx, y + sy))
                return true;
        } else if (!open_at(g, x - sx + qx, y - sy + qy) && open_at(g, x + qx, y + qy)) {
            return true;
        }
    }
    return false;
}

uint16_t *ref_jump_tables(const pf_grid *g) {
    const int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    const bool cc = pf_grid_corner_cutting(g);
    uint16_t *t = calloc((size_t)w * (size_t)h * 8, sizeof(*t));
    if (!t) return NULL;
    /* Straight: step until a blocked cell or a jump point. */
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            if (!open_at(g, x, y)) continue;
            for (int d = 0; d < 4; d++) {
                int sx = pf_dir_dx[d], sy = pf_dir_dy[d];
                uint16_t k = 1;
                for (;; k++) {
                    int32_t nx = x + k * sx, ny = y + k * sy;
                    if (!open_at(g, nx, ny)) break;
                    if (forced(g, nx, ny, sx, sy)) {
                        k |= PF__JT_STOP;
                        break;
                    }
                }
                t[8 * ((size_t)y * w + x) + d] = k;
            }
        }
    /* Diagonal: step while the movement rule allows until a stop. */
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            if (!open_at(g, x, y)) continue;
            for (int d = 4; d < 8; d++) {
                int sx = pf_dir_dx[d], sy = pf_dir_dy[d];
                int dh = sx > 0 ? PF_DIR_E : PF_DIR_W, dv = sy > 0 ? PF_DIR_S : PF_DIR_N;
                pf_point p = {x, y};
                uint16_t k = 0;
                for (;;) {
                    pf_point n = {p.x + sx, p.y + sy};
                    size_t ni = (size_t)n.y * w + n.x;
                    bool stop;
                    if (!tu_reference_can_step(g, p, sx, sy)) break;
                    k++;
                    stop = (t[8 * ni + dh] & PF__JT_STOP) || (t[8 * ni + dv] & PF__JT_STOP);
                    if (cc && !stop)
                        stop =
                            (!open_at(g, n.x - sx, n.y) && tu_reference_can_step(g, n, -sx, sy)) ||
                            (!open_at(g, n.x, n.y - sy) && tu_reference_can_step(g, n, sx, -sy));
                    if (stop) {
                        k |= PF__JT_STOP;
                        break;
                    }
                    p = n;
                }
                t[8 * ((size_t)y * w + x) + d] = k;
            }
        }
    return t;
}
