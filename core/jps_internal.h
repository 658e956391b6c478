/* jps_internal.h -- the layout of a pf_jps, shared by jps_tables.c (the
 * per-map tables: build, update, memory), jps.c (the search) and
 * jps_direct.c (direct answers and the entry point's fast path).
 *
 * Cells are (x, y) with x < w, y < h; cell index i = y * w + x as in the
 * grid. Bit lines: a row (or, in the transposed grid, a column) of n cells
 * is line_words(n) 64-bit words, one word of zero padding on the left, so
 * cell p is bit p + 64 of its line; each grid has a zero line above and
 * below. Reads off the map therefore see blocked cells and need no bounds
 * tests.
 *
 * What a pf_jps keeps, for the corner rule `bits_cc` (the grid's rule when
 * it was built or last updated):
 *   rows, cols  walkable cells, row-major and transposed (block scans);
 *   bits        one "jump bit" plane per direction (does the straight scan
 *               from the cell end at a jump point; is the cell a stop for a
 *               diagonal through it), laid out like rows;
 *   diag        the allowed diagonal steps laid out along the diagonals (the
 *               direct test, jps_direct.c);
 *   jt          optional JPS+ jump tables, 8 entries of 16 bits a cell (see
 *               "Jump tables" in jps_tables.c).
 * Every layout answers the same: the search picks one per query (the
 * layout mode, pf_jps_set_layout), and the plain block scans, which read
 * nothing but rows and cols, are the reference the others are tested
 * against.
 */
#ifndef PF_JPS_INTERNAL_H
#define PF_JPS_INTERNAL_H

#include <string.h>

#include "jps.h"
#include "search_internal.h"

struct pf_jps {
    int32_t w, h;
    size_t rstride; /* words per row line */
    size_t cstride; /* words per column line */
    uint64_t *rows; /* h + 2 lines: row y is line y + 1, bit x + 64 */
    uint64_t *cols; /* w + 2 lines: column x is line x + 1, bit y + 64 */
    /* Jump bits: plane d (PF_DIR_*) at bits + d * plane, laid out like rows.
     * Valid for corner rule bits_cc. */
    uint64_t *bits;
    size_t plane;
    bool bits_cc;
    bool bits_pay;       /* few enough stops for the bits to save work */
    double stop_density; /* diagonal stop bits set / (4 x walkable cells) */
    /* JPS+ jump tables for rule bits_cc, or NULL: entry d of cell i at
     * jt[8 i + d], see PF__JT_*. */
    uint16_t *jt;
    bool jt_pay;          /* the tables are worth their reads on this map */
    size_t jt_max_bytes;  /* the budget they were built under (pf_jps_params) */
    pf_jps_layout layout; /* asked for (pf_jps_set_layout) */
    bool direct;          /* direct answers on (pf_jps_set_direct) */
    int active_landmarks; /* landmarks a search evaluates (pf_jps_params) */
    /* Diagonal step bits, see jps_direct.c: for corner rule bits_cc,
     * diag + k * cstride is diagonal line k, bit y + 64 set when the step
     * from its cell at row y is allowed. Lines 0..w+h-2 run SE (cell
     * (x, y) on line x - y + h - 1, bit: step SE allowed), lines w+h-1 on
     * run NE (cell (x, y) on line w + h - 1 + x + y, bit: step NE). */
    uint64_t *diag;
    uint64_t wmagic;        /* for row_of in searches, see jps.c */
    uint8_t cost;           /* a walkable cell's cost when built or last updated */
    double step_cost[2];    /* cost, cost * sqrt(2): direct answers' step costs */
    const pf_landmarks *lm; /* differential heuristic, or NULL (borrowed) */
};

/* A jump table entry: bits 0..14 a number of steps, bit 15 set when they end
 * at a jump point (straight) or a stop (diagonal), clear at a dead end. */
#define PF__JT_STOP 0x8000u
#define PF__JT_DIST 0x7fffu
/* Longest line the 15-bit distances describe: larger maps get no tables. */
#define PF__JT_MAX_SIDE 0x7fff

/* Words in a line of n cells: one word of left padding, the cells, and one
 * word past them, which a 64-bit window starting at the last cell reads. */
static inline size_t pf__jps_line_words(int32_t n) { return ((size_t)n + 63) / 64 + 2; }

static inline void pf__jps_bit_put(uint64_t *line, int32_t pos, bool on) {
    size_t b = (size_t)pos + 64;
    uint64_t m = 1ull << (b & 63);
    if (on)
        line[b >> 6] |= m;
    else
        line[b >> 6] &= ~m;
}

static inline bool pf__jps_bit_get(const uint64_t *line, int32_t pos) {
    size_t b = (size_t)(pos + 64);
    return (line[b >> 6] >> (b & 63)) & 1u;
}

static inline const uint64_t *pf__jps_row(const pf_jps *j, int32_t y) {
    return j->rows + (size_t)(y + 1) * j->rstride;
}

static inline const uint64_t *pf__jps_col(const pf_jps *j, int32_t x) {
    return j->cols + (size_t)(x + 1) * j->cstride;
}

/* Whether (x, y) is walkable; false for the padding around the map. */
static inline bool pf__jps_walkable(const pf_jps *j, int32_t x, int32_t y) {
    return pf__jps_bit_get(pf__jps_row(j, y), x);
}

/* Direction index of the unit step (dx, dy), indexed [dy + 1][dx + 1]. */
static const int8_t pf__jps_dir_of[3][3] = {
    {PF_DIR_NW, PF_DIR_N, PF_DIR_NE}, {PF_DIR_W, -1, PF_DIR_E}, {PF_DIR_SW, PF_DIR_S, PF_DIR_SE}};

static inline uint32_t pf__jps_dbit(int dx, int dy) { return 1u << pf__jps_dir_of[dy + 1][dx + 1]; }

/* With corner cutting: whether diagonal arrival at cell i = (x, y) moving
 * (sx, sy) has a forced neighbour (a blocked side cell with the step past
 * it allowed). */
static inline bool pf__jps_forced_diag(const pf_jps *j, const uint8_t *moves, int32_t i, int32_t x,
                                       int32_t y, int sx, int sy) {
    return (!pf__jps_walkable(j, x - sx, y) && (moves[i] & pf__jps_dbit(-sx, sy))) ||
           (!pf__jps_walkable(j, x, y - sy) && (moves[i] & pf__jps_dbit(sx, -sy)));
}

/* 64 bits of a line from padded bit position p on: bit i is cell p - 64 + i. */
static inline __attribute__((always_inline)) uint64_t pf__jps_window(const uint64_t *l,
                                                                     uint32_t p) {
    uint32_t k = p >> 6, s = p & 63;
    /* (hi << 1) << (63 - s) is hi << (64 - s), and 0 for s == 0. */
    return (l[k] >> s) | ((l[k + 1] << 1) << (63 - s));
}

/* pf_jps_supports in O(1) when every walkable cell still costs j->cost (the
 * histogram says so exactly), else the full test. Sets *cost. */
bool pf__jps_supports_fast(const pf_jps *j, const pf_grid *g, uint8_t *cost);

/* The layout searches of j use on g: what pf_jps_set_layout asked for where
 * it is available, AUTO resolved by what the build judged (never AUTO; the
 * plain scans when the jump data was built for another corner rule). */
pf_jps_layout pf__jps_layout_for(const pf_jps *j, const pf_grid *g);

/* pf_jps_search for every query the entry point's fast path does not
 * finish (jps.c): falls back to astar where JPS does not apply, checks q,
 * answers it directly when its canonical path is free (unless the fast path
 * found it is not: `direct_tested`), else searches. */
pf_status pf__jps_search_full(pf_search_ctx *ctx, const pf_jps *j, const pf_grid *g,
                              const pf_query *q, pf_result *out, bool direct_tested);

/* The direct answer of a checked query (jps_direct.c): when the canonical
 * path from q->start to q->goal is free on g, fills out with it (step cost
 * ucost) and returns true, with *st its status (PF_OK, or PF_ECANCELED /
 * PF_ENOMEM with out untouched but for the status). False when the path is
 * not free. */
bool pf__jps_try_direct(pf_search_ctx *ctx, const pf_jps *j, const pf_grid *g, const pf_query *q,
                        uint8_t ucost, pf_result *out, pf_status *st);

#endif
