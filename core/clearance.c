/* clearance.c -- clearance values and agent grids. See clearance.h for the
 * footprint rule and the recurrence. */
#include "clearance.h"

#include <stdlib.h>
#include <string.h>

#include "grid_internal.h"

struct pf_clearance {
    int32_t w, h, cap;
    uint8_t *cl; /* [w * h] min(clearance, cap) */
};

/* Whether the 2x2 block with top-left cell i (not on the last row or
 * column) has no wall between two of its cells. */
static inline bool block_open(const pf_grid *g, int32_t i) {
    const uint8_t *wl = g->walls;
    if (!wl) return true;
    return !(wl[i] & ((1u << PF_DIR_E) | (1u << PF_DIR_S))) && !(wl[i + 1] & (1u << PF_DIR_S)) &&
           !(wl[i + g->w] & (1u << PF_DIR_E));
}

/* The recurrence at cell (x, y), reading the already final values of the
 * cells to its right and below. */
static inline uint8_t clearance_of(const pf_grid *g, const uint8_t *cl, int32_t cap, int32_t x,
                                   int32_t y) {
    const int32_t w = g->w, i = y * w + x;
    uint8_t m;
    if (!g->cost[i]) return 0;
    if (cap == 1 || x + 1 >= w || y + 1 >= g->h) return 1;
    m = cl[i + 1];
    if (cl[i + w] < m) m = cl[i + w];
    if (cl[i + w + 1] < m) m = cl[i + w + 1];
    if (m == 0 || !block_open(g, i)) return 1;
    return m + 1 > cap ? (uint8_t)cap : (uint8_t)(m + 1);
}

pf_status pf_clearance_build(const pf_grid *g, int32_t cap, pf_build_stop *stop,
                             pf_clearance **out) {
    size_t cells = (size_t)g->w * (size_t)g->h;
    pf_clearance *c;
    *out = NULL;
    if (cap < 1 || cap > PF_AGENT_SIZE_MAX) return PF_EINVAL;
    c = malloc(sizeof(*c));
    if (!c) return PF_ENOMEM;
    c->cl = malloc(cells);
    if (!c->cl) {
        free(c);
        return PF_ENOMEM;
    }
    c->w = g->w;
    c->h = g->h;
    c->cap = cap;
    for (int32_t y = g->h - 1; y >= 0; y--) {
        if (pf_build_tick(stop, (uint64_t)g->w)) {
            pf_clearance_destroy(c);
            return PF_ECANCELED;
        }
        for (int32_t x = g->w - 1; x >= 0; x--)
            c->cl[y * g->w + x] = clearance_of(g, c->cl, cap, x, y);
    }
    *out = c;
    return PF_OK;
}

void pf_clearance_destroy(pf_clearance *c) {
    if (!c) return;
    free(c->cl);
    free(c);
}

/* Marks in mark[] (w x h) the cells of the box [x0, x1] x [y0, y1] that lie
 * on the map. */
static void mark_box(uint8_t *mark, int32_t w, int32_t h, int32_t x0, int32_t y0, int32_t x1,
                     int32_t y1) {
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 >= w) x1 = w - 1;
    if (y1 >= h) y1 = h - 1;
    for (int32_t y = y0; y <= y1; y++)
        if (x0 <= x1) memset(mark + (size_t)y * w + x0, 1, (size_t)(x1 - x0 + 1));
}

pf_status pf_clearance_repair(const pf_clearance *old, const pf_grid *g, const pf_point *changed,
                              size_t n, pf_build_stop *stop, pf_clearance **out) {
    size_t cells = (size_t)g->w * (size_t)g->h;
    pf_clearance *c;
    uint8_t *mark;
    *out = NULL;
    if (old->w != g->w || old->h != g->h) return PF_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!pf_grid_in_bounds(g, changed[i])) return PF_ERANGE;
    c = malloc(sizeof(*c));
    if (!c) return PF_ENOMEM;
    *c = *old;
    c->cl = malloc(cells);
    mark = calloc(cells, 1);
    if (!c->cl || !mark) {
        free(mark);
        pf_clearance_destroy(c);
        return PF_ENOMEM;
    }
    memcpy(c->cl, old->cl, cells);
    /* A cell's capped clearance depends only on the cells of its cap x cap
     * square (and the walls between them), so a change at p reaches the
     * cells up to cap - 1 to its left and above. */
    for (size_t i = 0; i < n; i++) {
        if (pf_build_tick(stop, (uint64_t)c->cap * (uint64_t)c->cap)) goto stopped;
        mark_box(mark, g->w, g->h, changed[i].x - c->cap + 1, changed[i].y - c->cap + 1,
                 changed[i].x, changed[i].y);
    }
    /* Bottom-right to top-left, as the build: every cell the recurrence
     * reads is final when it is read. */
    for (size_t k = cells; k-- > 0;) {
        if ((k & 4095) == 0 && pf_build_tick(stop, 4096)) goto stopped;
        if (mark[k])
            c->cl[k] = clearance_of(g, c->cl, c->cap, (int32_t)(k % (size_t)g->w),
                                    (int32_t)(k / (size_t)g->w));
    }
    free(mark);
    *out = c;
    return PF_OK;

stopped:
    free(mark);
    pf_clearance_destroy(c);
    return PF_ECANCELED;
}

int32_t pf_clearance_cap(const pf_clearance *c) { return c->cap; }

int32_t pf_clearance_at(const pf_clearance *c, pf_point p) {
    if (p.x < 0 || p.y < 0 || p.x >= c->w || p.y >= c->h) return 0;
    return c->cl[(size_t)p.y * c->w + p.x];
}

bool pf_clearance_fits(const pf_clearance *c, pf_point p, int32_t n) {
    return n >= 1 && n <= c->cap && pf_clearance_at(c, p) >= n;
}

size_t pf_clearance_memory(const pf_clearance *c) {
    return sizeof(*c) + (size_t)c->w * (size_t)c->h;
}

/* Agent grids */

/* An empty grid of g's size and rules with cost and move arrays and
 * nothing else (no walls, no doors). */
static pf_grid *agent_grid_alloc(const pf_grid *g) {
    size_t cells = (size_t)g->w * (size_t)g->h;
    pf_grid *a = calloc(1, sizeof(*a));
    if (!a) return NULL;
    a->w = g->w;
    a->h = g->h;
    a->connectivity = g->connectivity;
    a->corner_cutting = g->corner_cutting;
    a->lim = g->lim;
    a->cost = malloc(cells);
    a->moves = malloc(cells);
    if (!a->cost || !a->moves) {
        pf_grid_destroy(a);
        return NULL;
    }
    return a;
}

#define ORTHO_MASK 0x0Fu /* the bits of E, W, S, N */

/* The orthogonal moves out of anchor i allowed to an agent of size n whose
 * square at i has move mask `and` (the AND of the base masks of its
 * cells): those whose target anchor also fits. */
static inline uint8_t fitting_moves(const pf_grid *g, const uint8_t *cl, int32_t n, int32_t i,
                                    unsigned and) {
    uint8_t m = 0;
    for (and &= ORTHO_MASK; and; and &= and-1) {
        int d = __builtin_ctz(and);
        if (cl[i + pf__grid_dir_offset(g, d)] >= n) m |= (uint8_t)(1u << d);
    }
    return m;
}

/* The diagonal moves of anchor i from the orthogonal moves (low bits) of i
 * and its neighbours in `moves`, by the map's corner rule applied to the
 * agent (clearance.h). */
static inline uint8_t diagonal_moves(const pf_grid *g, const uint8_t *moves, int32_t i) {
    uint8_t m = 0, o = moves[i];
    if (g->connectivity != 8 || !(o & ORTHO_MASK)) return 0;
    for (int d = 4; d < 8; d++) {
        int dh = pf_dir_dx[d] > 0 ? PF_DIR_E : PF_DIR_W;
        int dv = pf_dir_dy[d] > 0 ? PF_DIR_S : PF_DIR_N;
        bool r1 = (o & (1u << dh)) && (moves[i + pf__grid_dir_offset(g, dh)] & (1u << dv));
        bool r2 = (o & (1u << dv)) && (moves[i + pf__grid_dir_offset(g, dv)] & (1u << dh));
        if (g->corner_cutting ? (r1 || r2) : (r1 && r2)) m |= (uint8_t)(1u << d);
    }
    return m;
}

/* In place over a w x h array of bytes, along rows (horizontal) or
 * columns: after the call, a[p] holds op over the n cells starting at p in
 * that direction, for every p whose window lies on the map (others are
 * left meaningless). op is max (is_max) or bitwise and, both idempotent, so
 * windows of 1, 2, 4, ... k cells are doubled up and the last window of n
 * (k <= n < 2k) is two overlapping ones: O(w h log n). False when stop
 * said stop (polled per line of a pass). */
static bool window_reduce(uint8_t *a, int32_t w, int32_t h, int32_t n, bool horizontal, bool is_max,
                          pf_build_stop *stop) {
    const int32_t len = horizontal ? w : h; /* cells along the direction */
    const size_t stride = horizontal ? 1 : (size_t)w;
    const int32_t lines = horizontal ? h : 1; /* vertical passes work on whole rows */
    const size_t span = horizontal ? 1 : (size_t)w;
    int32_t k = 1;
    for (; 2 * k <= n; k *= 2) {
        for (int32_t l = 0; l < lines; l++) {
            uint8_t *row = a + (size_t)l * (size_t)w;
            if (horizontal && pf_build_tick(stop, (uint64_t)len)) return false;
            for (int32_t p = 0; p + 2 * k <= len; p++) {
                uint8_t *x = row + (size_t)p * stride, *y = x + (size_t)k * stride;
                if (!horizontal && pf_build_tick(stop, span)) return false;
                for (size_t s = 0; s < span; s++)
                    x[s] = is_max ? (x[s] > y[s] ? x[s] : y[s]) : (uint8_t)(x[s] & y[s]);
            }
        }
    }
    if (n == k) return true;
    for (int32_t l = 0; l < lines; l++) {
        uint8_t *row = a + (size_t)l * (size_t)w;
        if (horizontal && pf_build_tick(stop, (uint64_t)len)) return false;
        for (int32_t p = 0; p + n <= len; p++) {
            uint8_t *x = row + (size_t)p * stride, *y = x + (size_t)(n - k) * stride;
            if (!horizontal && pf_build_tick(stop, span)) return false;
            for (size_t s = 0; s < span; s++)
                x[s] = is_max ? (x[s] > y[s] ? x[s] : y[s]) : (uint8_t)(x[s] & y[s]);
        }
    }
    return true;
}

static void count_cells(pf_grid *a) {
    size_t cells = (size_t)a->w * (size_t)a->h;
    memset(a->cost_hist, 0, sizeof(a->cost_hist));
    for (size_t i = 0; i < cells; i++) a->cost_hist[a->cost[i]]++;
    a->walkable = (int64_t)(cells - a->cost_hist[0]);
}

pf_status pf_agent_grid_build(const pf_grid *g, const pf_clearance *c, int32_t n,
                              pf_build_stop *stop, pf_grid **out) {
    size_t cells = (size_t)g->w * (size_t)g->h;
    pf_grid *a;
    *out = NULL;
    if (n < 2 || n > c->cap || c->w != g->w || c->h != g->h) return PF_EINVAL;
    a = agent_grid_alloc(g);
    if (!a) return PF_ENOMEM;
    /* Highest cost and common moves over every square, in the grid's own
     * arrays, then kept only where the agent fits. */
    memcpy(a->cost, g->cost, cells);
    memcpy(a->moves, g->moves, cells);
    if (!window_reduce(a->cost, g->w, g->h, n, true, true, stop) ||
        !window_reduce(a->cost, g->w, g->h, n, false, true, stop) ||
        !window_reduce(a->moves, g->w, g->h, n, true, false, stop) ||
        !window_reduce(a->moves, g->w, g->h, n, false, false, stop))
        goto stopped;
    for (size_t i = 0; i < cells; i++) {
        if ((i & 4095) == 0 && pf_build_tick(stop, 4096)) goto stopped;
        if (c->cl[i] < n) {
            a->cost[i] = 0;
            a->moves[i] = 0;
        } else {
            a->moves[i] = fitting_moves(g, c->cl, n, (int32_t)i, a->moves[i]);
        }
    }
    /* Diagonals read only the orthogonal bits of the neighbours, which the
     * pass above finished. */
    for (size_t i = 0; i < cells; i++) {
        if ((i & 4095) == 0 && pf_build_tick(stop, 4096)) goto stopped;
        a->moves[i] |= diagonal_moves(a, a->moves, (int32_t)i);
    }
    count_cells(a);
    *out = a;
    return PF_OK;

stopped:
    pf_grid_destroy(a);
    return PF_ECANCELED;
}

/* Cost and orthogonal moves of anchor (x, y) for size n, from the
 * footprint's cells. */
static void anchor_of(const pf_grid *g, const pf_clearance *c, int32_t n, int32_t x, int32_t y,
                      uint8_t *cost, uint8_t *moves) {
    const int32_t i = y * g->w + x;
    uint8_t mx = 0;
    unsigned and = 0xFFu;
    if (c->cl[i] < n) {
        *cost = 0;
        *moves = 0;
        return;
    }
    for (int32_t dy = 0; dy < n; dy++)
        for (int32_t dx = 0; dx < n; dx++) {
            int32_t j = i + dy * g->w + dx;
            if (g->cost[j] > mx) mx = g->cost[j];
            and &= g->moves[j];
        }
    *cost = mx;
    *moves = fitting_moves(g, c->cl, n, i, and);
}

pf_status pf_agent_grid_repair(const pf_grid *old, const pf_grid *g, const pf_clearance *c,
                               int32_t n, const pf_point *changed, size_t nchanged,
                               pf_build_stop *stop, pf_grid **out, pf_point **changed_out,
                               size_t *nchanged_out) {
    size_t cells = (size_t)g->w * (size_t)g->h, nlist = 0, cap = 0;
    pf_point *list = NULL;
    uint8_t *mark;
    pf_grid *a;
    pf_status st = PF_OK;

    *out = NULL;
    if (changed_out) {
        *changed_out = NULL;
        *nchanged_out = 0;
    }
    if (n < 2 || n > c->cap || c->w != g->w || c->h != g->h || old->w != g->w || old->h != g->h)
        return PF_EINVAL;
    for (size_t i = 0; i < nchanged; i++)
        if (!pf_grid_in_bounds(g, changed[i])) return PF_ERANGE;
    a = pf_grid_clone(old);
    mark = calloc(cells, 1);
    if (!a || !mark) {
        st = PF_ENOMEM;
        goto out_free;
    }
    /* A change at p alters the moves of the cells around p and the
     * clearance of the cells up-left of it: the orthogonal moves of the
     * anchors whose squares touch the 3x3 box around p or whose
     * neighbours' squares contain p ([p - n, p + 1]), and the diagonals of
     * those and their neighbours. */
    for (size_t i = 0; i < nchanged; i++) {
        if (pf_build_tick(stop, (uint64_t)(n + 4) * (uint64_t)(n + 4))) goto stopped;
        mark_box(mark, g->w, g->h, changed[i].x - n - 1, changed[i].y - n - 1, changed[i].x + 2,
                 changed[i].y + 2);
    }
    for (size_t k = 0; k < cells; k++) {
        uint8_t cost, moves;
        if ((k & 4095) == 0 && pf_build_tick(stop, 4096)) goto stopped;
        if (!mark[k]) continue;
        /* n x n cells read below: counted apart from the scan. */
        if (pf_build_tick(stop, (uint64_t)n * (uint64_t)n)) goto stopped;
        anchor_of(g, c, n, (int32_t)(k % (size_t)g->w), (int32_t)(k / (size_t)g->w), &cost, &moves);
        a->cost[k] = cost;
        a->moves[k] = moves; /* diagonals below, once every orthogonal bit is final */
    }
    for (size_t k = 0; k < cells; k++) {
        if ((k & 4095) == 0 && pf_build_tick(stop, 4096)) goto stopped;
        if (mark[k]) a->moves[k] |= diagonal_moves(a, a->moves, (int32_t)k);
    }
    for (size_t k = 0; k < cells; k++) {
        if ((k & 4095) == 0 && pf_build_tick(stop, 4096)) goto stopped;
        if (!mark[k]) continue;
        if (a->cost[k] == old->cost[k] && a->moves[k] == old->moves[k]) continue;
        if (!changed_out) continue;
        if (nlist == cap) {
            size_t nc = cap ? 2 * cap : 64;
            pf_point *l = realloc(list, nc * sizeof(*l));
            if (!l) {
                st = PF_ENOMEM;
                goto out_free;
            }
            list = l;
            cap = nc;
        }
        list[nlist].x = (int32_t)(k % (size_t)g->w);
        list[nlist].y = (int32_t)(k / (size_t)g->w);
        nlist++;
    }
    count_cells(a);
    free(mark);
    *out = a;
    if (changed_out) {
        *changed_out = list;
        *nchanged_out = nlist;
    }
    return PF_OK;

stopped:
    st = PF_ECANCELED;
out_free:
    free(list);
    free(mark);
    pf_grid_destroy(a);
    return st;
}
