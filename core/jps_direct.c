/* jps_direct.c -- direct answers of jump point search, and its entry point.
 *
 * A query whose canonical path (diagonal first, then straight) is free is
 * answered from it: its cost is the octile distance, a lower bound, so it
 * is optimal. On open maps most short queries end there. The test reads
 * one range of a row or column and one range of a line of diagonal step
 * bits (see "Direct paths"), so a query that is not direct pays a few word
 * tests for it, whatever its length. pf_jps_set_direct(j, false) turns
 * direct answers off: every query then searches, which the tests use as the
 * reference for this file.
 */
#include <stdlib.h>
#include <string.h>

#include "jps_internal.h"

#define dbit pf__jps_dbit
#define row_line pf__jps_row
#define col_line pf__jps_col

/* Direct paths. A query whose canonical path (diagonal first, then
 * straight) is free is answered from it without search: its cost is the
 * octile distance, a lower bound on every path, so it is optimal. The test
 * reads no cell by cell: the straight part is a range of one row or column
 * of the bit grids (every step needs only its target walkable, there are no
 * walls), and the diagonal part a range of one line of the diagonal step
 * bits, which a pf_jps keeps for its corner rule, lines running SE and NE
 * so that both halves of each diagonal are one line. That is one 64-bit
 * window per 56 cells, with no loop exit to mispredict on short queries.
 * Under a corner rule the step bits were not built for (g changed it and
 * pf_jps_update has not run) the diagonal falls back to the move masks.
 *
 * On small open maps such answers take tens of nanoseconds, and what
 * surrounds them counts as much as the test: pf_jps_search serves them on
 * a fast path (one combined branch for every check, no search state, no
 * branch on the query's direction, the path written two points a store),
 * and leaves everything else to search_full. */

/* The canonical path from s to t: nd diagonal steps (sx, sy) to the corner,
 * then ns straight steps (tx, ty), one of tx, ty 0; horiz is all ones when
 * they run along the row, up when towards higher positions, same when the
 * diagonal runs SE or NW (sx == sy). */
typedef struct canon {
    int32_t sx, sy, tx, ty;
    int32_t nd, ns;
    int32_t horiz, up, same;
} canon;

/* a when m is all ones, b when it is 0. The direct test and the path
 * writer compute with masks rather than branches: the directions of
 * queries served one after the other are random, and each mispredicted
 * branch cost about as much as the rest of the test (GCC turns some ?: into
 * jumps). */
static inline int32_t pick(int32_t m, int32_t a, int32_t b) { return (a & m) | (b & ~m); }

static inline canon canon_of(pf_point s, pf_point t) {
    const int32_t dx = t.x - s.x, dy = t.y - s.y;
    const int32_t adx = dx < 0 ? -dx : dx, ady = dy < 0 ? -dy : dy;
    canon c;
    c.horiz = (ady - adx) >> 31; /* adx > ady */
    c.sx = (dx > 0) - (dx < 0);
    c.sy = (dy > 0) - (dy < 0);
    c.nd = pick(c.horiz, ady, adx);
    c.ns = pick(c.horiz, adx, ady) - c.nd;
    c.tx = c.sx & c.horiz;
    c.ty = c.sy & ~c.horiz;
    c.up = -pick(c.horiz, dx, dy) >> 31;
    c.same = ~(dx ^ dy) >> 31; /* only read when nd > 0: dx, dy nonzero */
    return c;
}

/* Up to LINE_WIN cells of a line from padded bit position p on, as bits
 * from bit 0. One unaligned 8-byte load and a shift where the bytes of a
 * word are in little-endian order (bit b of a line is then bit b % 8 of
 * byte b / 8): shorter than window()'s two loads and three shifts, on the
 * chain of dependent instructions that decides a direct answer. The bytes
 * read stay within the line: its last word holds no cells. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LINE_WIN 56
static inline uint64_t window_short(const uint64_t *l, uint32_t p) {
    uint64_t w;
    memcpy(&w, (const unsigned char *)l + (p >> 3), sizeof(w));
    return w >> (p & 7);
}
#else
#define LINE_WIN 64
static inline uint64_t window_short(const uint64_t *l, uint32_t p) { return pf__jps_window(l, p); }
#endif

/* The cells of lo .. lo + len - 1 of line l that are not set, as bits (0
 * when all are, or len <= 0). lo must be a cell of the line even when len
 * <= 0: the first window is read whatever len is, so ranges up to LINE_WIN
 * cells take no branch. */
static inline uint64_t line_missing(const uint64_t *l, int32_t lo, int32_t len) {
    const uint64_t full = ~0ull >> (64 - LINE_WIN);
    uint64_t miss;
    miss =
        ~window_short(l, (uint32_t)lo + 64) & (len >= LINE_WIN ? full : (1ull << (len & 63)) - 1);
    for (lo += LINE_WIN, len -= LINE_WIN; len > 0; lo += LINE_WIN, len -= LINE_WIN)
        miss |= ~window_short(l, (uint32_t)lo + 64) & (len >= LINE_WIN ? full : (1ull << len) - 1);
    return miss;
}

/* The cells of the straight part of canonical path c to t that are blocked,
 * as bits (0: free): t back to the corner, inclusive, a range of row t.y or
 * column t.x (every step needs only its target walkable, there are no
 * walls). The corner is the start when there is no diagonal part, so a free
 * path's endpoints are both walkable (a diagonal step bit implies both its
 * cells are). Towards higher positions the range ends at t, else it starts
 * there. */
static inline uint64_t straight_missing(const pf_jps *j, pf_point t, const canon *c) {
    const intptr_t horiz = c->horiz;
    const uintptr_t row = (uintptr_t)row_line(j, t.y), col = (uintptr_t)col_line(j, t.x);
    const uint64_t *l = (const uint64_t *)((row & (uintptr_t)horiz) | (col & ~(uintptr_t)horiz));
    return line_missing(l, pick(c->horiz, t.x, t.y) - (c->ns & c->up), c->ns + 1);
}

/* The diagonal steps of canonical path c from s that are not allowed, as
 * bits (0: free), from the diagonal step bits (valid while j->bits_cc is
 * g's corner rule). SE/NW steps are on SE line x - y + h - 1, NE/SW steps
 * on NE line w + h - 1 + x + y; a step towards W or N is the step from the
 * cell one further, in the opposite direction. Without a diagonal part the
 * range is empty and starts at 0. */
static inline uint64_t diag_missing(const pf_jps *j, pf_point s, const canon *c) {
    const size_t k = (size_t)(s.x + j->h - 1 + pick(c->same, -s.y, j->w + s.y));
    const int32_t lo = s.y - (c->nd & (c->sy >> 31)) + (1 + c->same);
    return line_missing(j->diag + k * j->cstride, lo & -(int32_t)(c->nd > 0), c->nd);
}

/* The same from the grid's move masks, one cell at a time: for a corner rule
 * the step bits were not built for (g changed it and pf_jps_update has not
 * run). */
static bool diag_free_moves(const pf_grid *g, pf_point s, const canon *c) {
    const uint8_t bit = (uint8_t)dbit(c->sx, c->sy);
    int32_t i = s.y * g->w + s.x;
    bool ok = true;
    for (int32_t t = 0; t < c->nd; t++, i += c->sx + c->sy * g->w) ok &= (g->moves[i] & bit) != 0;
    return ok;
}

/* Two points, x0 y0 x1 y1: one 16-byte store (GCC/Clang vector extension,
 * plain scalar code where the target has no vector registers). */
typedef int32_t point_pair __attribute__((vector_size(16)));
typedef int64_t point_pair64 __attribute__((vector_size(16)));

/* A point as one 64-bit lane of a point_pair. */
static inline int64_t pack(int32_t x, int32_t y) {
    pf_point p = {x, y};
    int64_t v;
    memcpy(&v, &p, sizeof(v));
    return v;
}

/* Points a direct answer of n + 1 cells may write: see direct_write. */
static inline size_t direct_room(int32_t n) { return 2 * (size_t)n + 8; }

/* Writes the n + 1 = nd + ns + 1 cells of canonical path c from s into
 * buf, which holds direct_room(n) points, and returns where the path
 * starts. Two points a store, and one loop for both parts, each an
 * arithmetic progression from the corner: the diagonal part backwards, the
 * straight part forwards, two pairs of each an iteration, until the longer
 * is done; the shorter one runs on into the room before the path or after
 * it. One store a point cost about 2 cycles a cell, the largest part of a
 * direct answer on paths of 20-40 cells, and a loop for each part added a
 * mispredicted loop exit. */
static inline pf_point *direct_write(pf_point *buf, pf_point s, const canon *c) {
    const int32_t nd = c->nd, ns = c->ns;
    /* Pair k of the diagonal covers cells nd - 1 - 2k and nd - 2k of the
     * path, pair k of the straight part nd + 2k and nd + 2k + 1; the longer
     * part needs floor(max(nd, ns) / 2) + 1 pairs, rounded up to an even
     * number, 2 quads. The path starts at buf + lead, and the writes cover
     * buf[0 .. 8 quads - 2], within direct_room(n) as 8 quads <= 2n + 8. */
    const int32_t quads = ((nd > ns ? nd : ns) / 2 + 2) / 2, lead = 4 * quads - 1 - nd;
    pf_point *pt = buf + lead + nd;
    const int64_t corner = pack(s.x + c->sx * nd, s.y + c->sy * nd);
    const int64_t d = pack(c->sx, c->sy), t = pack(c->tx, c->ty);
    const point_pair dd = (point_pair)(point_pair64){d, d}, tt = (point_pair)(point_pair64){t, t};
    const point_pair cc = (point_pair)(point_pair64){corner, corner};
    const point_pair d2 = dd + dd, t2 = tt + tt, d4 = d2 + d2, t4 = t2 + t2;
    point_pair va = cc - (point_pair)(point_pair64){d, 0},
               vb = cc + (point_pair)(point_pair64){0, t};
    for (int32_t k = 0; k < quads; k++) {
        point_pair va2 = va - d2, vb2 = vb + t2;
        memcpy(pt - 1 - 4 * k, &va, sizeof(va));
        memcpy(pt - 3 - 4 * k, &va2, sizeof(va2));
        memcpy(pt + 4 * k, &vb, sizeof(vb));
        memcpy(pt + 2 + 4 * k, &vb2, sizeof(vb2));
        va -= d4;
        vb += t4;
    }
    return pt - nd;
}

/* Fills out for a query answered from its free canonical path c, written at
 * path, on a map whose straight and diagonal steps cost step_cost[0] and
 * [1]: a search that expands the start and finds the goal straight away.
 * The cost is a product per kind of step, as segment_cost. */
static inline void answer_direct(const canon *c, const double step_cost[2], const pf_point *path,
                                 pf_result *out) {
    out->status = PF_OK;
    out->algorithm = PF_ALGO_JPS;
    out->cost = step_cost[1] * (double)c->nd + step_cost[0] * (double)c->ns;
    out->path = path;
    out->path_len = (size_t)(c->nd + c->ns) + 1;
    out->expanded = 1;
    out->generated = 2;
    out->jump_points = 1;
    out->expanded_cells = NULL;
    out->expanded_cells_len = 0;
}

bool pf__jps_try_direct(pf_search_ctx *ctx, const pf_jps *j, const pf_grid *g, const pf_query *q,
                        uint8_t ucost, pf_result *out, pf_status *st) {
    const canon c = canon_of(q->start, q->goal);
    if (straight_missing(j, q->goal, &c) ||
        !(j->bits_cc == g->corner_cutting ? !diag_missing(j, q->start, &c)
                                          : diag_free_moves(g, q->start, &c)))
        return false;
    if (q->should_stop && q->should_stop(q->stop_ud)) {
        *st = out->status = PF_ECANCELED;
        return true;
    }
    *st = pf__ctx_reserve_path(ctx, direct_room(c.nd + c.ns));
    if (*st) {
        out->status = *st;
        return true;
    }
    answer_direct(&c, (const double[2]){(double)ucost, (double)ucost * PF_SQRT2},
                  direct_write(ctx->path, q->start, &c), out);
    if (q->record_expanded) {
        ctx->expanded[ctx->expanded_len++] = q->start.y * g->w + q->start.x;
        out->expanded_cells = ctx->expanded;
        out->expanded_cells_len = ctx->expanded_len;
    }
    return true;
}

/* Whether q is plain on a map j serves with its step bits: direct answers
 * on, JPS applies with every walkable cell at j->cost, octile heuristic,
 * endpoints on the map, nothing recorded, no stop callback. One branch: the tests are combined
 * with `|`, as they all pass on a served query. That the endpoints are
 * walkable and apart is left to the direct test. */
static inline bool query_plain(const pf_jps *j, const pf_grid *g, const pf_query *q) {
    const pf_point s = q->start, t = q->goal;
    return !((!j->direct) | (g->connectivity != 8) | (g->nwalls != 0) |
             ((int64_t)g->cost_hist[j->cost] != g->walkable) | (j->w != g->w) | (j->h != g->h) |
             (j->bits_cc != g->corner_cutting) | ((unsigned)q->heuristic > PF_H_OCTILE) |
             q->record_expanded | (q->should_stop != NULL) | ((uint32_t)s.x >= (uint32_t)g->w) |
             ((uint32_t)s.y >= (uint32_t)g->h) | ((uint32_t)t.x >= (uint32_t)g->w) |
             ((uint32_t)t.y >= (uint32_t)g->h));
}

/* The fast path: a plain query whose canonical path is free is answered
 * here, without the context's node array, heap or search state. On open
 * maps that is most short queries, and there the checks and set-up of a
 * search cost as much as the answer. Everything else goes to search_full,
 * by tail calls (jps.c). */
pf_status pf_jps_search(pf_search_ctx *ctx, const pf_jps *j, const pf_grid *g, const pf_query *q,
                        pf_result *out) {
    canon c;

    if (__builtin_expect(!j || !query_plain(j, g, q), 0))
        return pf__jps_search_full(ctx, j, g, q, out, false);
    c = canon_of(q->start, q->goal);
    /* Not direct: a blocked cell or step, or start == goal. */
    if (straight_missing(j, q->goal, &c) | diag_missing(j, q->start, &c) |
        (uint64_t)((c.nd | c.ns) == 0))
        return pf__jps_search_full(ctx, j, g, q, out, true);
    if (__builtin_expect(direct_room(c.nd + c.ns) > ctx->path_cap, 0))
        return pf__jps_search_full(ctx, j, g, q, out, false);
    answer_direct(&c, j->step_cost, direct_write(ctx->path, q->start, &c), out);
    ctx->expanded_len = 0;
    return PF_OK;
}

bool pf_jps_is_direct(const pf_jps *j, const pf_grid *g, pf_point s, pf_point t) {
    pf_query q = pf_query_make(s, t, PF_ALGO_JPS);
    canon c;
    if (!j || !query_plain(j, g, &q) || (s.x == t.x && s.y == t.y)) return false;
    c = canon_of(s, t);
    return !straight_missing(j, t, &c) && !diag_missing(j, s, &c);
}
