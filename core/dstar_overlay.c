/* dstar_overlay.c -- a D* Lite session's private changes: the overlay, and
 * the effective map it makes with the base grid (see dstar.h).
 *
 * A cell's effective cost is the overlay's when it has one, else the base
 * grid's; likewise for each of its four wall edges. The moves out of a cell
 * depend on the costs and walls of its 3x3 block (the diagonal rule in
 * grid.h), so every cell within Chebyshev distance 1 of an overlay change
 * gets an overlay entry too ("tainted") caching its effective move mask. A
 * cell without an overlay entry uses the base grid's masks and costs
 * directly: the hot loop reads plain arrays unless the session has private
 * changes nearby (eff_cost, eff_moves and eff_wall in dstar_internal.h).
 *
 * The entries live in a hash table keyed by cell (Fibonacci hashing, linear
 * probing, at most three quarters full). Entries are never deleted: a
 * change back to the base's value still pins it (dstar.h).
 */
#include <stdlib.h>
#include <string.h>

#include "dstar_internal.h"

#define OV_INITIAL_CAP 64u

static pf_status ov_alloc(ov **out, uint32_t cap) {
    ov *o = malloc((size_t)cap * sizeof(*o));
    if (!o) return PF_ENOMEM;
    for (uint32_t i = 0; i < cap; i++) o[i].cell = EMPTY_CELL;
    *out = o;
    return PF_OK;
}

/* Makes room for n more overlay entries, so that the next n entries
 * pf__dstar_ov_taint_block creates need no rehash in between. PF_ENOMEM
 * (the table is unchanged then) or PF_OK. */
pf_status pf__dstar_ov_reserve(pf_dstar *d, uint32_t n) {
    uint32_t cap = d->ocap ? d->ocap : OV_INITIAL_CAP;
    ov *o;
    if (d->ocap && (uint64_t)(d->ocount + n) * 4 <= (uint64_t)d->ocap * 3) return PF_OK;
    while ((uint64_t)(d->ocount + n) * 4 > (uint64_t)cap * 3) {
        if (cap > (1u << 30)) return PF_ENOMEM;
        cap *= 2;
    }
    if (ov_alloc(&o, cap)) return PF_ENOMEM;
    unsigned bits = log2u(cap);
    for (uint32_t i = 0; i < d->ocap; i++) {
        if (d->o[i].cell == EMPTY_CELL) continue;
        uint32_t j = hash_slot(d->o[i].cell, bits);
        while (o[j].cell != EMPTY_CELL) j = (j + 1) & (cap - 1);
        o[j] = d->o[i];
    }
    free(d->o);
    d->o = o;
    d->ocap = cap;
    d->obits = bits;
    return PF_OK;
}

/* The entry of cell, created (taking the base mask) when missing. Room must
 * have been reserved. */
static ov *ov_get(pf_dstar *d, int32_t cell) {
    uint32_t mask = d->ocap - 1, i;
    for (i = hash_slot(cell, d->obits);; i = (i + 1) & mask) {
        if (d->o[i].cell == cell) return &d->o[i];
        if (d->o[i].cell == EMPTY_CELL) break;
    }
    memset(&d->o[i], 0, sizeof(d->o[i]));
    d->o[i].cell = cell;
    d->o[i].moves = d->base->moves[cell];
    d->ocount++;
    return &d->o[i];
}

/* grid.c's move rule restated over the effective costs and walls. */
static bool eff_route_open(const pf_dstar *d, int32_t a, int32_t c, int d1, int d2) {
    return eff_cost(d, c) != 0 && !eff_wall(d, a, d1) && !eff_wall(d, c, d2);
}

/* The move mask of cell (x, y), on the map, computed from the effective
 * costs and walls of its 3x3 block by the map's rules (connectivity and
 * corner rule of grid.h): bit k for each allowed step in direction k.
 * Reads the overlay and the base grid, changes nothing. */
uint8_t pf__dstar_ov_moves(const pf_dstar *d, int32_t x, int32_t y) {
    int32_t i = y * d->w + x;
    uint8_t m = 0;
    if (eff_cost(d, i) == 0) return 0;
    for (int k = 0; k < 4; k++) {
        int32_t nx = x + pf_dir_dx[k], ny = y + pf_dir_dy[k];
        if (!in_bounds(d, nx, ny)) continue;
        if (eff_cost(d, ny * d->w + nx) != 0 && !eff_wall(d, i, k)) m |= (uint8_t)(1u << k);
    }
    if (d->conn == 8) {
        for (int k = 4; k < 8; k++) {
            int dx = pf_dir_dx[k], dy = pf_dir_dy[k];
            int32_t nx = x + dx, ny = y + dy;
            if (!in_bounds(d, nx, ny) || eff_cost(d, ny * d->w + nx) == 0) continue;
            int dh = dx > 0 ? PF_DIR_E : PF_DIR_W;
            int dv = dy > 0 ? PF_DIR_S : PF_DIR_N;
            bool r1 = eff_route_open(d, i, y * d->w + nx, dh, dv);
            bool r2 = eff_route_open(d, i, ny * d->w + x, dv, dh);
            if (d->cut ? (r1 || r2) : (r1 && r2)) m |= (uint8_t)(1u << k);
        }
    }
    return m;
}

/* Recomputes the cached move masks of the overlay entries in the 3x3 block
 * of (x, y), after a change to a cost or a wall of that block (private, or
 * of the base grid). Cells without an entry are left alone: they read the
 * base grid's masks. Never fails. */
void pf__dstar_ov_refresh_block(pf_dstar *d, int32_t x, int32_t y) {
    for (int32_t yy = y - 1; yy <= y + 1; yy++)
        for (int32_t xx = x - 1; xx <= x + 1; xx++) {
            if (!in_bounds(d, xx, yy)) continue;
            ov *o = ov_find(d, yy * d->w + xx);
            if (o) o->moves = pf__dstar_ov_moves(d, xx, yy);
        }
}

/* Gives every cell of the 3x3 block of (x, y) an overlay entry (a new one
 * takes the base's move mask and overrides nothing yet), before a private
 * change in that block. Room for nine entries must have been reserved with
 * pf__dstar_ov_reserve; never fails. */
void pf__dstar_ov_taint_block(pf_dstar *d, int32_t x, int32_t y) {
    for (int32_t yy = y - 1; yy <= y + 1; yy++)
        for (int32_t xx = x - 1; xx <= x + 1; xx++)
            if (in_bounds(d, xx, yy)) ov_get(d, yy * d->w + xx);
}
