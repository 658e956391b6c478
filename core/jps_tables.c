/* jps_tables.c -- the per-map data of jump point search: bit grids, jump
 * bits, diagonal step bits and JPS+ jump tables; their build, their update
 * after cell changes.
 *
 * Jump bits. For the corner rule of the grid it was built or last updated
 * for, a pf_jps keeps one bit grid per direction: for a straight
 * direction, whether the scan from the cell ends at a jump point rather than
 * a wall; for a diagonal, whether the cell is a stop for a diagonal passing
 * through it (one of its two straight scans ends at a jump point, or with
 * corner cutting it has a forced neighbour). They answer in one bit test
 * what a scan would find, so dead-end scans are never run and a diagonal
 * costs a move-mask and a bit test per cell, at 1 bit a cell and direction,
 * which keeps the working set in cache.
 *
 * Jump tables (JPS+, Harabor & Grastien, "Improving Jump Point Search",
 * ICAPS 2014, section 4). Where the budget allows, a pf_jps also keeps, per
 * cell and direction, how far a jump from the cell goes, 16 bits an entry
 * (PF__JT_*), so a straight jump is one read instead of a block scan and a
 * diagonal jump one read per stop instead of a bit test per cell:
 *   straight d: the number of steps to the first cell that is blocked (a
 *     dead end, flag clear) or a jump point (flag set), the cell the block
 *     scan would return;
 *   diagonal d: the number of allowed steps to the first cell that is a
 *     stop for d (its jump bit, flag set), or, when no step on reaches one,
 *     the number of allowed steps (flag clear; 0 when the first step is not
 *     allowed).
 * Entries of blocked cells are 0. The goal is not in the tables: searches
 * test it against the distances (jps.c). The tables hold the same facts as
 * the jump bits and are built in the same passes; they take 16 bytes a cell
 * (4 MiB on a 512x512 map), so they are only built within
 * pf_jps_params.table_bytes, and only used where they pay (see judge_tables).
 *
 * Updates. A changed cell reaches the straight jump facts of the three rows
 * and three columns through it and its neighbours (forced neighbours look
 * one line to each side), and the move masks of the 3 x 3 cells around it;
 * those lines are recomputed in O(width + height). A diagonal entry depends
 * on the cell ahead of it on its diagonal only, so a changed stop or move
 * is carried backwards along each diagonal through it, entry by entry,
 * until an entry comes out unchanged: the rows, columns and diagonals the
 * change sees, no more. The result equals a fresh build, which the tests
 * check entry for entry, and both equal the tests' own cell-by-cell
 * reference (tests/jpsref.c).
 */
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "build_stop.h"
#include "jps_internal.h"

#define walkable(j, x, y) pf__jps_walkable(j, x, y)
#define bit_get pf__jps_bit_get
#define bit_put pf__jps_bit_put
#define dir_of pf__jps_dir_of

/* Words of the diagonal step bits: 2 (w + h - 1) lines of h cells. */
static size_t diag_words(const pf_jps *j) {
    return 2 * ((size_t)j->w + (size_t)j->h - 1) * j->cstride;
}

static void put_cell(pf_jps *j, int32_t x, int32_t y, bool on) {
    bit_put(j->rows + (size_t)(y + 1) * j->rstride, x, on);
    bit_put(j->cols + (size_t)(x + 1) * j->cstride, y, on);
}

/* Whether a straight scan moving (sx, sy) stops at walkable cell (x, y) for
 * a forced neighbour: the tests of the block scans, one cell at a time. */
static bool forced_straight(const pf_jps *j, int32_t x, int32_t y, int sx, int sy, bool cc) {
    for (int q = -1; q <= 1; q += 2) {
        int qx = sx ? 0 : q, qy = sx ? q : 0;
        if (cc ? (!walkable(j, x + qx, y + qy) && walkable(j, x + sx + qx, y + sy + qy) &&
                  walkable(j, x + sx, y + sy))
               : (!walkable(j, x - sx + qx, y - sy + qy) && walkable(j, x + qx, y + qy)))
            return true;
    }
    return false;
}

static inline uint64_t *plane_line(pf_jps *j, int d, int32_t y) {
    return j->bits + (size_t)d * j->plane + (size_t)(y + 1) * j->rstride;
}

static inline uint16_t *entry(pf_jps *j, int32_t x, int32_t y, int d) {
    return j->jt + 8 * ((size_t)y * (size_t)j->w + (size_t)x) + (size_t)d;
}

/* The straight facts of one line, cell by cell from the far end: the scan
 * from cell p (moving s) stops at the next cell when that one is blocked or
 * forced, else where the scan from that cell stops. at(p) is cell p of the
 * line as (x, y); the jump bit says the stop is a jump point, the table
 * entry (when j has tables) how far it is. */
static void build_line(pf_jps *j, int32_t n, bool cc, int d, bool row, int32_t fixed) {
    const int s = row ? pf_dir_dx[d] : pf_dir_dy[d];
    const int32_t first = s > 0 ? n - 1 : 0;
    int32_t stop = s > 0 ? n : -1; /* position of the next stop; off the line = blocked */
    bool jp = false;
    for (int32_t p = first; p >= 0 && p < n; p -= s) {
        int32_t x = row ? p : fixed, y = row ? fixed : p;
        int32_t nx = x + (row ? s : 0), ny = y + (row ? 0 : s);
        if (!walkable(j, nx, ny)) {
            stop = p + s;
            jp = false;
        } else if (forced_straight(j, nx, ny, row ? s : 0, row ? 0 : s, cc)) {
            stop = p + s;
            jp = true;
        }
        bit_put(plane_line(j, d, y), x, jp);
        if (j->jt)
            *entry(j, x, y, d) =
                walkable(j, x, y)
                    ? (uint16_t)((stop > p ? stop - p : p - stop) | (jp ? PF__JT_STOP : 0))
                    : 0;
    }
}

/* Straight jump bits (and entries) of row y (E, W) and column x (S, N). */
static void build_row(pf_jps *j, int32_t y, bool cc) {
    build_line(j, j->w, cc, PF_DIR_E, true, y);
    build_line(j, j->w, cc, PF_DIR_W, true, y);
}

static void build_col(pf_jps *j, int32_t x, bool cc) {
    build_line(j, j->h, cc, PF_DIR_S, false, x);
    build_line(j, j->h, cc, PF_DIR_N, false, x);
}

/* Diagonal stop bits of cell (x, y), from its straight bits. */
static void build_cell_stops(pf_jps *j, const pf_grid *g, int32_t x, int32_t y, bool cc) {
    int32_t i = y * g->w + x;
    for (int d = 4; d < PF_DIR_COUNT; d++) {
        const int sx = pf_dir_dx[d], sy = pf_dir_dy[d];
        bool stop = bit_get(plane_line(j, dir_of[1][sx + 1], y), x) ||
                    bit_get(plane_line(j, dir_of[sy + 1][1], y), x) ||
                    (cc && walkable(j, x, y) && pf__jps_forced_diag(j, g->moves, i, x, y, sx, sy));
        bit_put(plane_line(j, d, y), x, stop);
    }
}

/* The diagonal entry d of cell (x, y), from its move mask and the cell
 * ahead: that cell's stop bit and entry. */
static uint16_t diag_entry(pf_jps *j, const pf_grid *g, int32_t x, int32_t y, int d) {
    const int sx = pf_dir_dx[d], sy = pf_dir_dy[d];
    uint16_t e;
    if (!(g->moves[(size_t)y * g->w + x] & (1u << d))) return 0;
    if (bit_get(plane_line(j, d, y + sy), x + sx)) return 1 | PF__JT_STOP;
    e = *entry(j, x + sx, y + sy, d);
    return (uint16_t)(((e & PF__JT_DIST) + 1) | (e & PF__JT_STOP));
}

/* Every diagonal entry, each direction swept from its far end so that the
 * cell ahead is always done first. False when stop said stop. */
static bool build_diag_entries(pf_jps *j, const pf_grid *g, pf_build_stop *stop) {
    for (int d = 4; d < PF_DIR_COUNT; d++) {
        const int sx = pf_dir_dx[d], sy = pf_dir_dy[d];
        for (int32_t yy = 0; yy < j->h; yy++) {
            int32_t y = sy > 0 ? j->h - 1 - yy : yy;
            if (pf_build_tick(stop, (uint64_t)j->w)) return false;
            for (int32_t xx = 0; xx < j->w; xx++) {
                int32_t x = sx > 0 ? j->w - 1 - xx : xx;
                *entry(j, x, y, d) = diag_entry(j, g, x, y, d);
            }
        }
    }
    return true;
}

/* Carries a change backwards along diagonal d from cell (x, y) on: each
 * entry recomputed from the one ahead until one comes out unchanged.
 * Returns the entries it read. */
static uint64_t repair_diag(pf_jps *j, const pf_grid *g, int32_t x, int32_t y, int d) {
    const int sx = pf_dir_dx[d], sy = pf_dir_dy[d];
    uint64_t read = 0;
    while (x >= 0 && x < j->w && y >= 0 && y < j->h) {
        uint16_t *e = entry(j, x, y, d), v = diag_entry(j, g, x, y, d);
        read++;
        if (*e == v) break;
        *e = v;
        x -= sx;
        y -= sy;
    }
    return read;
}

/* Whether jump bits pay on this map. Where nearly every cell is a diagonal
 * stop (random obstacles, 1-wide mazes) they skip almost nothing and their
 * tests only add work: measured on the Moving AI maps, stop densities are
 * 0.08-0.36 on game, street and room maps, 0.63 on 8room (even), 0.91-0.98
 * on random and 1-wide maze maps (bits 30-40% slower). */
static void judge_bits(pf_jps *j, const pf_grid *g) {
    uint64_t stops = 0;
    for (size_t k = 0; k < 4 * j->plane; k++)
        stops += (uint64_t)__builtin_popcountll(j->bits[4 * j->plane + k]);
    j->stop_density = g->walkable ? (double)stops / (4.0 * (double)g->walkable) : 1.0;
    j->bits_pay = j->stop_density <= 0.75;
}

/* Whether the tables pay on this map (see jps.h, PF_JPS_LAYOUT_AUTO). They
 * replace scans and per-cell diagonal steps by reads of 16 bytes a cell,
 * which miss the cache where the bits (1 byte a cell) do not: they pay
 * where jumps are long, that is where stops are sparse. Measured on the
 * Moving AI maps (every scenario, best of three runs, landmarks on): p50
 * tables / bits 0.84-0.97 on orz900d, maze512-8-0, ost003d, den520d,
 * 32room_000 (stop densities 0.16-0.36), about 1.0 on the other game and
 * street maps, 1.05-1.16 on Cauldron, 8room_000 (0.63), maze512-1-0 and
 * random512-10-0 (0.98-1.7). */
static void judge_tables(pf_jps *j, const pf_grid *g) {
    (void)g;
    j->jt_pay = j->jt != NULL && j->stop_density <= 0.5;
}

static inline uint64_t *diag_line_se(const pf_jps *j, int32_t x, int32_t y) {
    return j->diag + (size_t)(x - y + j->h - 1) * j->cstride;
}

static inline uint64_t *diag_line_ne(const pf_jps *j, int32_t x, int32_t y) {
    return j->diag + (size_t)(j->w + j->h - 1 + x + y) * j->cstride;
}

/* Diagonal step bits of cell (x, y) from its move mask. */
static void build_cell_diag(pf_jps *j, const pf_grid *g, int32_t x, int32_t y) {
    uint8_t m = g->moves[(size_t)y * g->w + x];
    bit_put(diag_line_se(j, x, y), y, m & (1u << PF_DIR_SE));
    bit_put(diag_line_ne(j, x, y), y, m & (1u << PF_DIR_NE));
}

/* Every bit and entry of j from g, a row or column between polls of stop
 * (build_stop.h). False when it said stop: j is then half built, and must
 * be built again or destroyed. */
static bool build_all(pf_jps *j, const pf_grid *g, pf_build_stop *stop) {
    const bool cc = g->corner_cutting;
    j->bits_cc = cc;
    for (int32_t y = 0; y < j->h; y++) {
        if (pf_build_tick(stop, (uint64_t)j->w)) return false;
        for (int32_t x = 0; x < j->w; x++) build_cell_diag(j, g, x, y);
    }
    for (int32_t y = 0; y < j->h; y++) {
        if (pf_build_tick(stop, 2 * (uint64_t)j->w)) return false;
        build_row(j, y, cc);
    }
    for (int32_t x = 0; x < j->w; x++) {
        if (pf_build_tick(stop, 2 * (uint64_t)j->h)) return false;
        build_col(j, x, cc);
    }
    for (int32_t y = 0; y < j->h; y++) {
        if (pf_build_tick(stop, (uint64_t)j->w)) return false;
        for (int32_t x = 0; x < j->w; x++) build_cell_stops(j, g, x, y, cc);
    }
    if (j->jt && !build_diag_entries(j, g, stop)) return false;
    judge_bits(j, g);
    judge_tables(j, g);
    return true;
}

void pf_jps_set_landmarks(pf_jps *j, const pf_landmarks *lm) { j->lm = lm; }

bool pf_jps_supports(const pf_grid *g) { return g->connectivity == 8 && pf_grid_is_uniform(g); }

bool pf__jps_supports_fast(const pf_jps *j, const pf_grid *g, uint8_t *cost) {
    if (g->connectivity != 8 || g->nwalls > 0) return false;
    if ((int64_t)g->cost_hist[j->cost] == g->walkable) {
        *cost = j->cost;
        return true;
    }
    if (!pf_grid_is_uniform(g)) return false;
    *cost = pf_grid_min_cost(g);
    return true;
}

/* The tables' size for a w x h map, 0 when they do not fit the budget or
 * the map is too large for 15-bit distances. */
static size_t table_bytes(int32_t w, int32_t h, size_t budget) {
    size_t n;
    if (w > PF__JT_MAX_SIDE || h > PF__JT_MAX_SIDE) return 0;
    if (__builtin_mul_overflow((size_t)w * (size_t)h, 8 * sizeof(uint16_t), &n)) return 0;
    return pf__big_size(n) <= budget ? n : 0; /* as allocated, bigmem.h */
}

pf_status pf_jps_create(const pf_grid *g, const pf_jps_params *p, pf_build_stop *stop,
                        pf_jps **out) {
    pf_jps *j;
    size_t rn, cn, bn, tn;
    pf_status st = PF_ENOMEM;

    *out = NULL;
    j = calloc(1, sizeof(*j));
    if (!j) return PF_ENOMEM;
    j->w = g->w;
    j->h = g->h;
    j->cost = pf_grid_min_cost(g);
    j->step_cost[0] = (double)j->cost;
    j->step_cost[1] = (double)j->cost * PF_SQRT2;
    j->rstride = pf__jps_line_words(g->w);
    j->cstride = pf__jps_line_words(g->h);
    j->direct = true;
    j->jt_max_bytes = p ? p->table_bytes : PF_JPS_DEFAULT_TABLE_BYTES;
    j->active_landmarks =
        p && p->active_landmarks > 0 ? p->active_landmarks : PF_JPS_DEFAULT_ACTIVE_LANDMARKS;
    j->wmagic = (size_t)g->w * (size_t)g->h <= (1u << 24) && g->w < (1 << 16)
                    ? ((1ull << 40) + (uint64_t)g->w - 1) / (uint64_t)g->w
                    : 0;
    if (__builtin_mul_overflow(j->rstride, (size_t)g->h + 2, &rn) ||
        __builtin_mul_overflow(j->cstride, (size_t)g->w + 2, &cn))
        goto out_free_jps;
    j->rows = calloc(rn, sizeof(uint64_t));
    if (!j->rows) goto out_free_jps;
    j->cols = calloc(cn, sizeof(uint64_t));
    if (!j->cols) goto out_free_rows;
    for (int32_t y = 0; y < g->h; y++) {
        if (pf_build_tick(stop, (uint64_t)g->w)) {
            st = PF_ECANCELED;
            goto out_free_cols;
        }
        for (int32_t x = 0; x < g->w; x++)
            if (g->cost[(size_t)y * g->w + x]) put_cell(j, x, y, true);
    }
    if (__builtin_mul_overflow(rn, (size_t)PF_DIR_COUNT, &bn)) goto out_free_cols;
    j->plane = rn;
    j->bits = calloc(bn, sizeof(uint64_t));
    if (!j->bits) goto out_free_cols;
    if (__builtin_mul_overflow(2 * ((size_t)g->w + (size_t)g->h - 1), j->cstride, &bn))
        goto out_free_bits;
    j->diag = calloc(bn, sizeof(uint64_t));
    if (!j->diag) goto out_free_bits;
    tn = table_bytes(g->w, g->h, j->jt_max_bytes);
    /* The tables are a speed-up: without memory for them, searches use the
     * jump bits. */
    if (tn) j->jt = pf__big_alloc(tn);
    if (!build_all(j, g, stop)) {
        st = PF_ECANCELED;
        goto out_free_tables;
    }
    *out = j;
    return PF_OK;

out_free_tables:
    free(j->jt);
    free(j->diag);
out_free_bits:
    free(j->bits);
out_free_cols:
    free(j->cols);
out_free_rows:
    free(j->rows);
out_free_jps:
    free(j);
    return st;
}

/* A copy of n bytes of src, or NULL (also for src NULL). */
static void *dup_bytes(const void *src, size_t n) {
    void *d;
    if (!src) return NULL;
    d = malloc(n ? n : 1);
    if (d) memcpy(d, src, n);
    return d;
}

pf_jps *pf_jps_clone(const pf_jps *src) {
    pf_jps *j = malloc(sizeof(*j));
    if (!j) return NULL;
    *j = *src;
    j->rows = dup_bytes(src->rows, src->rstride * ((size_t)src->h + 2) * sizeof(uint64_t));
    j->cols = dup_bytes(src->cols, src->cstride * ((size_t)src->w + 2) * sizeof(uint64_t));
    j->bits = dup_bytes(src->bits, src->plane * PF_DIR_COUNT * sizeof(uint64_t));
    j->diag = dup_bytes(src->diag, diag_words(src) * sizeof(uint64_t));
    j->jt = NULL;
    if (src->jt) {
        size_t tn = (size_t)src->w * (size_t)src->h * 8 * sizeof(uint16_t);
        j->jt = pf__big_alloc(tn);
        if (j->jt) memcpy(j->jt, src->jt, tn);
    }
    if (!j->rows || !j->cols || !j->bits || !j->diag || (src->jt && !j->jt)) {
        pf_jps_destroy(j);
        return NULL;
    }
    return j;
}

void pf_jps_set_layout(pf_jps *j, pf_jps_layout l) { j->layout = l; }
void pf_jps_set_direct(pf_jps *j, bool on) { j->direct = on; }

pf_jps_layout pf__jps_layout_for(const pf_jps *j, const pf_grid *g) {
    if (j->bits_cc != g->corner_cutting) return PF_JPS_LAYOUT_SCAN; /* stale jump data */
    switch (j->layout) {
    case PF_JPS_LAYOUT_TABLES:
        return j->jt ? PF_JPS_LAYOUT_TABLES : PF_JPS_LAYOUT_BITS;
    case PF_JPS_LAYOUT_BITS:
    case PF_JPS_LAYOUT_SCAN:
        return j->layout;
    default:
        if (j->jt && j->jt_pay) return PF_JPS_LAYOUT_TABLES;
        return j->bits_pay ? PF_JPS_LAYOUT_BITS : PF_JPS_LAYOUT_SCAN;
    }
}

void pf_jps_destroy(pf_jps *j) {
    if (!j) return;
    free(j->rows);
    free(j->cols);
    free(j->bits);
    free(j->diag);
    free(j->jt);
    free(j);
}

size_t pf_jps_memory(const pf_jps *j) {
    pf_jps_stats st;
    pf_jps_get_stats(j, NULL, &st);
    return st.memory_bytes;
}

/* What pf_jps_create allocates for a w x h map with table_bytes(...) = tn:
 * the struct, rows, cols, the PF_DIR_COUNT planes of jump bits, the
 * diagonals and the tables (as allocated, bigmem.h). */
static size_t jps_bytes(int32_t w, int32_t h, size_t tn) {
    size_t rn = pf__jps_line_words(w) * ((size_t)h + 2);
    size_t cn = pf__jps_line_words(h) * ((size_t)w + 2);
    size_t dn = 2 * ((size_t)w + (size_t)h - 1) * pf__jps_line_words(h);
    return sizeof(pf_jps) + (rn + cn + rn * PF_DIR_COUNT + dn) * sizeof(uint64_t) +
           (tn ? pf__big_size(tn) : 0);
}

size_t pf_jps_size(const pf_grid *g, const pf_jps_params *p) {
    return jps_bytes(g->w, g->h,
                     table_bytes(g->w, g->h, p ? p->table_bytes : PF_JPS_DEFAULT_TABLE_BYTES));
}

void pf_jps_get_stats(const pf_jps *j, const pf_grid *g, pf_jps_stats *st) {
    memset(st, 0, sizeof(*st));
    st->table_bytes = j->jt ? pf__big_size((size_t)j->w * (size_t)j->h * 8 * sizeof(uint16_t)) : 0;
    st->memory_bytes = jps_bytes(j->w, j->h, j->jt ? st->table_bytes : 0);
    st->tables_pay = j->jt && j->jt_pay;
    st->stop_density = j->stop_density;
    st->layout = g ? pf__jps_layout_for(j, g) : PF_JPS_LAYOUT_AUTO;
}

pf_status pf_jps_update(pf_jps *j, const pf_grid *g, const pf_point *changed, size_t n,
                        pf_build_stop *stop) {
    const bool cc = g->corner_cutting;
    pf_status st = PF_ECANCELED;
    uint8_t *mark;
    if (j->w != g->w || j->h != g->h) return PF_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!pf_grid_in_bounds(g, changed[i])) return PF_ERANGE;
    /* Rows then columns touched: a cell's change reaches the straight bits
     * of the lines through it and its neighbours, and the stop bits of the
     * cells on those lines. */
    mark = calloc((size_t)g->h + (size_t)g->w, 1);
    if (!mark) return PF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        pf_point p = changed[i];
        if ((i & 1023) == 0 && pf_build_tick(stop, 1024)) goto out_free_mark;
        put_cell(j, p.x, p.y, g->cost[(size_t)p.y * g->w + p.x] != 0);
        for (int k = -1; k <= 1; k++) {
            if (p.y + k >= 0 && p.y + k < g->h) mark[p.y + k] = 1;
            if (p.x + k >= 0 && p.x + k < g->w) mark[(size_t)g->h + (size_t)(p.x + k)] = 1;
        }
    }
    j->cost = pf_grid_min_cost(g);
    j->step_cost[0] = (double)j->cost;
    j->step_cost[1] = (double)j->cost * PF_SQRT2;
    if (cc != j->bits_cc) {
        if (build_all(j, g, stop)) st = PF_OK;
        goto out_free_mark;
    }
    for (int32_t y = 0; y < g->h; y++)
        if (mark[y] && (pf_build_tick(stop, 3 * (uint64_t)g->w) || (build_row(j, y, cc), false)))
            goto out_free_mark;
    for (int32_t x = 0; x < g->w; x++)
        if (mark[(size_t)g->h + (size_t)x] &&
            (pf_build_tick(stop, 3 * (uint64_t)g->h) || (build_col(j, x, cc), false)))
            goto out_free_mark;
    for (int32_t y = 0; y < g->h; y++)
        if (mark[y])
            for (int32_t x = 0; x < g->w; x++) build_cell_stops(j, g, x, y, cc);
    for (int32_t x = 0; x < g->w; x++)
        if (mark[(size_t)g->h + (size_t)x])
            for (int32_t y = 0; y < g->h; y++) build_cell_stops(j, g, x, y, cc);
    /* A cell's change reaches the move masks of the 3 x 3 cells around it. */
    for (size_t i = 0; i < n; i++)
        for (int32_t y = changed[i].y - 1; y <= changed[i].y + 1; y++)
            for (int32_t x = changed[i].x - 1; x <= changed[i].x + 1; x++)
                if (x >= 0 && x < g->w && y >= 0 && y < g->h) build_cell_diag(j, g, x, y);
    /* Diagonal entries: every cell whose stop bits or moves may have changed
     * lies on a marked line; its own entries and those of the cell behind it
     * on each diagonal read them. */
    if (j->jt) {
        for (int32_t y = 0; y < g->h; y++) {
            bool row = mark[y];
            for (int32_t x = 0; x < g->w; x++) {
                uint64_t read = 1;
                if (!row && !mark[(size_t)g->h + (size_t)x]) continue;
                for (int d = 4; d < PF_DIR_COUNT; d++) {
                    read += repair_diag(j, g, x, y, d);
                    read += repair_diag(j, g, x - pf_dir_dx[d], y - pf_dir_dy[d], d);
                }
                if (pf_build_tick(stop, read)) goto out_free_mark;
            }
        }
    }
    judge_bits(j, g);
    judge_tables(j, g);
    st = PF_OK;

out_free_mark:
    free(mark);
    return st;
}
