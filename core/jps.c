/* jps.c -- jump point search (Harabor & Grastien, "Online Graph Pruning for
 * Pathfinding on Grid Maps", AAAI 2011), with the block-based jumps and the
 * pruning of intermediate jump points of Harabor & Grastien, "Improving Jump
 * Point Search", ICAPS 2014.
 *
 * Preprocessing is two bit grids of walkable cells: one row-major, one
 * transposed, so both horizontal and vertical jumps read a line as 64-bit
 * words and find the next obstacle or forced neighbour with one
 * count-trailing/leading-zeros per 62-63 cells. Each line has a zero word of
 * padding on its left and at least one on its right, and each grid a zero
 * line above and below, so the scans never test bounds: off the map reads as
 * blocked.
 *
 * Canonical paths go diagonal first, then straight. A diagonal jump steps
 * one cell at a time and, from cells where they can find something,
 * launches the two straight scans it covers; what those scans find becomes
 * a successor of the node the diagonal started from (the intermediate cell
 * is not generated, ICAPS 2014, "pruning intermediate nodes"). A successor
 * therefore lies "diagonal first, then straight" from its parent; the path
 * is rebuilt cell by cell from that rule, and the arrival direction used for
 * pruning is read from the parent's offset.
 *
 * Jump bits. For the corner rule of the grid it was built or last updated
 * for, a pf_jps also keeps one bit grid per direction: for a straight
 * direction, whether the scan from the cell ends at a jump point rather than
 * a wall; for a diagonal, whether the cell is a stop for a diagonal passing
 * through it (one of its two straight scans ends at a jump point, or with
 * corner cutting it has a forced neighbour). They answer in one bit test
 * what a scan would find, so dead-end scans are never run and a diagonal
 * costs a move-mask and a bit test per cell: the online counterpart of the
 * JPS+ jump tables of ICAPS 2014 at 1 bit instead of 16 per cell and
 * direction, which keeps the working set in cache. Every result still comes
 * from the block scans.
 *
 * Forced neighbours, moving straight east from p = (x-1, y) to n = (x, y),
 * by symmetry for the other directions:
 *   no corner cutting (diagonal needs both orthogonal cells): n is a jump
 *     point when (x-1, y-1) is blocked and (x, y-1) is open; it then adds N
 *     and NE (and likewise S, SE below). A diagonal arrival never has forced
 *     neighbours under this rule.
 *   corner cutting (diagonal needs one orthogonal cell): n is a jump point
 *     when (x, y-1) is blocked while (x+1, y-1) and (x+1, y) are open; it then
 *     adds NE. Moving diagonally NE, n is a jump point when W is blocked and
 *     the step to NW is allowed (adds NW), or S is blocked and the step to SE
 *     is allowed (adds SE).
 * The grid's move masks decide every single step, so the corner rule is only
 * in the forced-neighbour tests.
 *
 * The open list is the context's (f, h, seq) heap, except that a successor
 * whose f equals the least f in the heap when its parent was taken goes on
 * a stack and is expanded next (with a consistent heuristic any node of
 * least f may be expanded next, so A* stays optimal): on uniform maps most
 * jump points continue towards the goal at unchanged f.
 *
 * Before searching, a query whose canonical path (diagonal first, then
 * straight) is free is answered from it: its cost is the octile distance, a
 * lower bound, so it is optimal. On open maps most short queries end there.
 * The test reads one range of a row or column and one range of a line of
 * diagonal step bits (see "Direct paths"), so a query that is not direct
 * pays a few word tests for it, whatever its length.
 */
#include "jps.h"

#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

struct pf_jps {
    int32_t w, h;
    size_t rstride; /* words per row line */
    size_t cstride; /* words per column line */
    uint64_t *rows; /* h + 2 lines: row y is line y + 1, bit x + 64 */
    uint64_t *cols; /* w + 2 lines: column x is line x + 1, bit y + 64 */
    /* Jump bits, see above: plane d (PF_DIR_*) at bits + d * plane, laid out
     * like rows. Valid for corner rule bits_cc. */
    uint64_t *bits;
    size_t plane;
    bool bits_cc;
    bool bits_pay; /* few enough stops for the bits to save work */
    pf_jps_bits_mode mode;
    /* Diagonal step bits, see "Direct paths" below: for corner rule bits_cc,
     * diag + k * cstride is diagonal line k, bit y + 64 set when the step
     * from its cell at row y is allowed. Lines 0..w+h-2 run SE (cell
     * (x, y) on line x - y + h - 1, bit: step SE allowed), lines w+h-1 on
     * run NE (cell (x, y) on line w + h - 1 + x + y, bit: step NE). */
    uint64_t *diag;
    uint64_t wmagic;        /* for row_of in searches, see there */
    uint8_t cost;           /* a walkable cell's cost when built or last updated */
    double step_cost[2];    /* cost, cost * sqrt(2): direct answers' step costs */
    const pf_landmarks *lm; /* differential heuristic, or NULL (borrowed) */
};

/* Words in a line of n cells: one word of left padding, the cells, and one
 * word past them, which a 64-bit window starting at the last cell reads. */
static size_t line_words(int32_t n) { return ((size_t)n + 63) / 64 + 2; }

/* Words of the diagonal step bits: 2 (w + h - 1) lines of h cells. */
static size_t diag_words(const pf_jps *j) {
    return 2 * ((size_t)j->w + (size_t)j->h - 1) * j->cstride;
}

static inline void bit_put(uint64_t *line, int32_t pos, bool on) {
    size_t b = (size_t)pos + 64;
    uint64_t m = 1ull << (b & 63);
    if (on)
        line[b >> 6] |= m;
    else
        line[b >> 6] &= ~m;
}

static inline bool bit_get(const uint64_t *line, int32_t pos) {
    size_t b = (size_t)(pos + 64);
    return (line[b >> 6] >> (b & 63)) & 1u;
}

static inline const uint64_t *row_line(const pf_jps *j, int32_t y) {
    return j->rows + (size_t)(y + 1) * j->rstride;
}

static inline const uint64_t *col_line(const pf_jps *j, int32_t x) {
    return j->cols + (size_t)(x + 1) * j->cstride;
}

/* Whether (x, y) is walkable; false for the padding around the map. */
static inline bool walkable(const pf_jps *j, int32_t x, int32_t y) {
    return bit_get(row_line(j, y), x);
}

static void put_cell(pf_jps *j, int32_t x, int32_t y, bool on) {
    bit_put(j->rows + (size_t)(y + 1) * j->rstride, x, on);
    bit_put(j->cols + (size_t)(x + 1) * j->cstride, y, on);
}

/* Direction index of the unit step (dx, dy), indexed [dy + 1][dx + 1]. */
static const int8_t dir_of[3][3] = {
    {PF_DIR_NW, PF_DIR_N, PF_DIR_NE}, {PF_DIR_W, -1, PF_DIR_E}, {PF_DIR_SW, PF_DIR_S, PF_DIR_SE}};

static inline uint32_t dbit(int dx, int dy) { return 1u << dir_of[dy + 1][dx + 1]; }

/* Whether a straight scan moving (sx, sy) stops at walkable cell (x, y) for
 * a forced neighbour: the tests of scan_up/scan_down, one cell at a time. */
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

/* With corner cutting: whether diagonal arrival at cell i = (x, y) moving
 * (sx, sy) has a forced neighbour (a blocked side cell with the step past
 * it allowed). */
static inline bool forced_diag(const pf_jps *j, const uint8_t *moves, int32_t i, int32_t x,
                               int32_t y, int sx, int sy) {
    return (!walkable(j, x - sx, y) && (moves[i] & dbit(-sx, sy))) ||
           (!walkable(j, x, y - sy) && (moves[i] & dbit(sx, -sy)));
}

static inline uint64_t *plane_line(pf_jps *j, int d, int32_t y) {
    return j->bits + (size_t)d * j->plane + (size_t)(y + 1) * j->rstride;
}

/* Straight jump bits of row y (E, W) from the cells' walkability. A scan
 * from x finds a jump point when the next cell is open and either forced or
 * itself finds one. */
static void build_row_bits(pf_jps *j, int32_t y, bool cc) {
    uint64_t *le = plane_line(j, PF_DIR_E, y), *lw = plane_line(j, PF_DIR_W, y);
    bool jp = false;
    for (int32_t x = j->w - 1; x >= 0; x--) {
        jp = walkable(j, x + 1, y) && (forced_straight(j, x + 1, y, 1, 0, cc) || jp);
        bit_put(le, x, jp);
    }
    jp = false;
    for (int32_t x = 0; x < j->w; x++) {
        jp = walkable(j, x - 1, y) && (forced_straight(j, x - 1, y, -1, 0, cc) || jp);
        bit_put(lw, x, jp);
    }
}

/* Straight jump bits of column x (S, N). */
static void build_col_bits(pf_jps *j, int32_t x, bool cc) {
    bool jp = false;
    for (int32_t y = j->h - 1; y >= 0; y--) {
        jp = walkable(j, x, y + 1) && (forced_straight(j, x, y + 1, 0, 1, cc) || jp);
        bit_put(plane_line(j, PF_DIR_S, y), x, jp);
    }
    jp = false;
    for (int32_t y = 0; y < j->h; y++) {
        jp = walkable(j, x, y - 1) && (forced_straight(j, x, y - 1, 0, -1, cc) || jp);
        bit_put(plane_line(j, PF_DIR_N, y), x, jp);
    }
}

/* Diagonal stop bits of cell (x, y), from its straight bits. */
static void build_cell_stops(pf_jps *j, const pf_grid *g, int32_t x, int32_t y, bool cc) {
    int32_t i = y * g->w + x;
    for (int d = 4; d < PF_DIR_COUNT; d++) {
        const int sx = pf_dir_dx[d], sy = pf_dir_dy[d];
        bool stop = bit_get(plane_line(j, dir_of[1][sx + 1], y), x) ||
                    bit_get(plane_line(j, dir_of[sy + 1][1], y), x) ||
                    (cc && walkable(j, x, y) && forced_diag(j, g->moves, i, x, y, sx, sy));
        bit_put(plane_line(j, d, y), x, stop);
    }
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
    j->bits_pay = (double)stops <= 0.75 * 4.0 * (double)g->walkable;
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

static void build_bits(pf_jps *j, const pf_grid *g) {
    const bool cc = g->corner_cutting;
    j->bits_cc = cc;
    for (int32_t y = 0; y < j->h; y++)
        for (int32_t x = 0; x < j->w; x++) build_cell_diag(j, g, x, y);
    for (int32_t y = 0; y < j->h; y++) build_row_bits(j, y, cc);
    for (int32_t x = 0; x < j->w; x++) build_col_bits(j, x, cc);
    for (int32_t y = 0; y < j->h; y++)
        for (int32_t x = 0; x < j->w; x++) build_cell_stops(j, g, x, y, cc);
    judge_bits(j, g);
}

void pf_jps_set_landmarks(pf_jps *j, const pf_landmarks *lm) { j->lm = lm; }

bool pf_jps_supports(const pf_grid *g) { return g->connectivity == 8 && pf_grid_is_uniform(g); }

/* pf_jps_supports in O(1) when every walkable cell still costs j->cost (the
 * histogram says so exactly), else the full test. Sets *cost. */
static bool supports_fast(const pf_jps *j, const pf_grid *g, uint8_t *cost) {
    if (g->connectivity != 8 || g->nwalls > 0) return false;
    if ((int64_t)g->cost_hist[j->cost] == g->walkable) {
        *cost = j->cost;
        return true;
    }
    if (!pf_grid_is_uniform(g)) return false;
    *cost = pf_grid_min_cost(g);
    return true;
}

pf_status pf_jps_create(const pf_grid *g, pf_jps **out) {
    pf_jps *j;
    size_t rn, cn, bn;
    pf_status st = PF_ENOMEM;

    *out = NULL;
    j = calloc(1, sizeof(*j));
    if (!j) return PF_ENOMEM;
    j->w = g->w;
    j->h = g->h;
    j->cost = pf_grid_min_cost(g);
    j->step_cost[0] = (double)j->cost;
    j->step_cost[1] = (double)j->cost * PF_SQRT2;
    j->rstride = line_words(g->w);
    j->cstride = line_words(g->h);
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
    for (int32_t y = 0; y < g->h; y++)
        for (int32_t x = 0; x < g->w; x++)
            if (g->cost[(size_t)y * g->w + x]) put_cell(j, x, y, true);
    if (__builtin_mul_overflow(rn, (size_t)PF_DIR_COUNT, &bn)) goto out_free_cols;
    j->plane = rn;
    j->bits = calloc(bn, sizeof(uint64_t));
    if (!j->bits) goto out_free_cols;
    if (__builtin_mul_overflow(2 * ((size_t)g->w + (size_t)g->h - 1), j->cstride, &bn))
        goto out_free_bits;
    j->diag = calloc(bn, sizeof(uint64_t));
    if (!j->diag) goto out_free_bits;
    build_bits(j, g);
    *out = j;
    return PF_OK;

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

void pf_jps_set_bits_mode(pf_jps *j, pf_jps_bits_mode m) { j->mode = m; }

void pf_jps_destroy(pf_jps *j) {
    if (!j) return;
    free(j->rows);
    free(j->cols);
    free(j->bits);
    free(j->diag);
    free(j);
}

size_t pf_jps_memory(const pf_jps *j) {
    size_t n = sizeof(*j) + (j->rstride * ((size_t)j->h + 2) + j->cstride * ((size_t)j->w + 2)) *
                                sizeof(uint64_t);
    n += j->plane * PF_DIR_COUNT * sizeof(uint64_t);
    n += diag_words(j) * sizeof(uint64_t);
    return n;
}

pf_status pf_jps_update(pf_jps *j, const pf_grid *g, const pf_point *changed, size_t n) {
    const bool cc = g->corner_cutting;
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
        build_bits(j, g);
    } else {
        for (int32_t y = 0; y < g->h; y++)
            if (mark[y]) build_row_bits(j, y, cc);
        for (int32_t x = 0; x < g->w; x++)
            if (mark[(size_t)g->h + (size_t)x]) build_col_bits(j, x, cc);
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
        judge_bits(j, g);
    }
    free(mark);
    return PF_OK;
}

/* Block-based straight scans.
 *
 * A scan runs along one line (a row, or a column of the transposed grid)
 * from cell x, exclusive, with the two neighbouring lines a and b on either
 * side. It returns the first cell that is blocked (*jump false: a dead end)
 * or a jump point (*jump true). */

/* 64 bits of a line from padded bit position p on: bit i is cell p - 64 + i. */
static inline uint64_t window(const uint64_t *l, uint32_t p) {
    uint32_t k = p >> 6, s = p & 63;
    /* (hi << 1) << (63 - s) is hi << (64 - s), and 0 for s == 0. */
    return (l[k] >> s) | ((l[k + 1] << 1) << (63 - s));
}

/* Towards higher positions. Window bit 0 is x itself. */
static inline __attribute__((always_inline)) int32_t
scan_up(const uint64_t *l, const uint64_t *a, const uint64_t *b, int32_t x, bool cc, bool *jump) {
    for (;;) {
        uint32_t p = (uint32_t)x + 64;
        uint64_t r = window(l, p), ra = window(a, p), rb = window(b, p), stop;
        if (cc) /* side cell blocked, the next one on that side and ahead open */
            stop = ((~ra & (ra >> 1)) | (~rb & (rb >> 1))) & (r >> 1);
        else /* side cell open, the one beside the predecessor blocked */
            stop = ((~ra << 1) & ra) | ((~rb << 1) & rb);
        /* Bits 1..63 are cells x+1..x+63 (1..62 with corner cutting, whose
         * test needs the next bit). */
        stop = (stop | ~r) & (cc ? 0x7ffffffffffffffeull : ~1ull);
        if (stop) {
            int i = __builtin_ctzll(stop);
            *jump = (r >> i) & 1u;
            return x + i;
        }
        x += cc ? 62 : 63;
    }
}

/* Towards lower positions. Window bit 63 is x itself. */
static inline __attribute__((always_inline)) int32_t
scan_down(const uint64_t *l, const uint64_t *a, const uint64_t *b, int32_t x, bool cc, bool *jump) {
    for (;;) {
        uint32_t p = (uint32_t)x + 1;
        uint64_t r = window(l, p), ra = window(a, p), rb = window(b, p), stop;
        if (cc)
            stop = ((~ra & (ra << 1)) | (~rb & (rb << 1))) & (r << 1);
        else
            stop = ((~ra >> 1) & ra) | ((~rb >> 1) & rb);
        /* Bits 62..0 are cells x-1..x-63 (bits 62..1 with corner cutting). */
        stop = (stop | ~r) & (cc ? 0x7ffffffffffffffeull : 0x7fffffffffffffffull);
        if (stop) {
            int i = 63 - __builtin_clzll(stop);
            *jump = (r >> i) & 1u;
            return x - (63 - i);
        }
        x -= cc ? 62 : 63;
    }
}

/* One search. */
typedef struct jps_run {
    pf_search_ctx *ctx;
    const pf_jps *j;
    const uint8_t *moves;
    int32_t w;
    uint64_t wmagic; /* row of cell i: (i * wmagic) >> 40, see row_of */
    int32_t gx, gy, goal;
    double c, cd; /* cost of a straight and of a diagonal step */
    uint32_t gen;
    double fref;                      /* successors with f <= fref skip the heap */
    const pf_landmarks *lm;           /* NULL: the octile distance alone */
    double lm_goal[PF_LANDMARKS_MAX]; /* the goal's landmark distances */
    /* With landmarks, the jump points of one expansion are offered after all
     * its jumps: each one's landmark line is prefetched when it is found,
     * and the later jumps hide the miss. */
    struct {
        int32_t x, y, parent;
        double g;
    } pend[32];
    int npend;
    int32_t *stack; /* those successors, expanded last in first out */
    size_t sp;
    uint64_t jump_points, generated;
} jps_run;

/* Nodes on the run's stack rather than in the heap. */
#define JPS_STACKED (-2)

/* Per-thread scratch in the context's PF__EXT_JPS slot. */
typedef struct jps_scratch {
    int32_t *stack;
    size_t cap;
} jps_scratch;

static void scratch_free(void *p) {
    jps_scratch *s = p;
    free(s->stack);
    free(s);
}

static size_t scratch_memory(const void *p) {
    const jps_scratch *s = p;
    return sizeof(*s) + s->cap * sizeof(int32_t);
}

/* The context's scratch with room for a stack of `cells` nodes. */
static pf_status scratch_get(pf_search_ctx *ctx, size_t cells, jps_scratch **out) {
    jps_scratch *s = ctx->ext[PF__EXT_JPS];
    if (!s) {
        s = calloc(1, sizeof(*s));
        if (!s) return PF_ENOMEM;
        ctx->ext[PF__EXT_JPS] = s;
        ctx->ext_free[PF__EXT_JPS] = scratch_free;
        ctx->ext_memory[PF__EXT_JPS] = scratch_memory;
    }
    if (cells > s->cap) {
        int32_t *st = malloc(cells * sizeof(*st));
        if (!st) return PF_ENOMEM;
        free(s->stack);
        s->stack = st;
        s->cap = cells;
    }
    *out = s;
    return PF_OK;
}

/* The heuristic: the octile distance, or the differential heuristic of the
 * landmarks when that is larger. Both are consistent, so is their maximum. */
static inline double octile(const jps_run *r, int32_t x, int32_t y) {
    int32_t dx = r->gx - x, dy = r->gy - y, mx, mn;
    double h;
    dx = dx < 0 ? -dx : dx;
    dy = dy < 0 ? -dy : dy;
    mx = dx > dy ? dx : dy;
    mn = dx > dy ? dy : dx;
    h = r->c * ((double)mx + (PF_SQRT2 - 1.0) * (double)mn);
    if (r->lm) {
        double d = pf_landmarks_h_to(r->lm, y * r->w + x, r->lm_goal);
        h = d > h ? d : h;
    }
    return h;
}

/* Offers jump point (x, y) at cost gn, reached from `parent`. */
static inline void relax_now(jps_run *r, int32_t x, int32_t y, double gn, int32_t parent) {
    int32_t n = y * r->w + x;
    pf__node *nd = &r->ctx->nodes[n];
    r->jump_points++;
    if (nd->gen != r->gen) {
        double h = octile(r, x, y);
        nd->gen = r->gen;
        nd->g = gn;
        nd->parent = parent;
        if (gn + h <= r->fref) {
            nd->heap_pos = JPS_STACKED;
            r->stack[r->sp++] = n;
        } else {
            pf__heap_push(r->ctx, n, gn + h, h);
        }
        r->generated++;
    } else if (nd->heap_pos != PF__HEAP_CLOSED && gn < nd->g) {
        nd->g = gn;
        nd->parent = parent;
        if (nd->heap_pos != JPS_STACKED) {
            double h = octile(r, x, y);
            pf__heap_decrease(r->ctx, n, gn + h, h);
        }
        r->generated++;
    }
}

/* Offers the deferred jump points, in the order they were found. Deferring
 * changes nothing: the nodes they touch are read only when the next node is
 * taken off the open list, after the expansion. */
static inline void relax_flush(jps_run *r) {
    for (int i = 0; i < r->npend; i++)
        relax_now(r, r->pend[i].x, r->pend[i].y, r->pend[i].g, r->pend[i].parent);
    r->npend = 0;
}

static inline void relax(jps_run *r, int32_t x, int32_t y, double gn, int32_t parent) {
    if (!r->lm) {
        relax_now(r, x, y, gn, parent);
        return;
    }
    if (r->npend == (int)(sizeof(r->pend) / sizeof(r->pend[0]))) relax_flush(r);
    __builtin_prefetch(r->lm->d + (size_t)(y * r->w + x) * 2 * (size_t)r->lm->k);
    r->pend[r->npend].x = x;
    r->pend[r->npend].y = y;
    r->pend[r->npend].parent = parent;
    r->pend[r->npend].g = gn;
    r->npend++;
}

/* Jump bit d of (x, y). */
static inline bool jbit(const jps_run *r, int d, int32_t x, int32_t y) {
    const pf_jps *j = r->j;
    return bit_get(j->bits + (size_t)d * j->plane + (size_t)(y + 1) * j->rstride, x);
}

/* Straight jump along row y from x towards sx; gb is the cost at (x, y).
 * With jump bits (jb), a scan known to end at a wall is skipped unless the
 * goal is on the row. */
static inline __attribute__((always_inline)) void
jump_h(jps_run *r, int32_t x, int32_t y, int sx, double gb, int32_t parent, bool cc, bool jb) {
    const pf_jps *j = r->j;
    const uint64_t *l = row_line(j, y);
    bool jp;
    int32_t e;
    if (jb && y != r->gy && !jbit(r, sx > 0 ? PF_DIR_E : PF_DIR_W, x, y)) return;
    if (sx > 0) {
        e = scan_up(l, l - j->rstride, l + j->rstride, x, cc, &jp);
        if (y == r->gy && r->gx > x && r->gx <= e) e = r->gx, jp = true;
    } else {
        e = scan_down(l, l - j->rstride, l + j->rstride, x, cc, &jp);
        if (y == r->gy && r->gx < x && r->gx >= e) e = r->gx, jp = true;
    }
    if (jp) relax(r, e, y, gb + r->c * (double)(e > x ? e - x : x - e), parent);
}

/* Straight jump along column x from y towards sy, on the transposed grid. */
static inline __attribute__((always_inline)) void
jump_v(jps_run *r, int32_t x, int32_t y, int sy, double gb, int32_t parent, bool cc, bool jb) {
    const pf_jps *j = r->j;
    const uint64_t *l = col_line(j, x);
    bool jp;
    int32_t e;
    if (jb && x != r->gx && !jbit(r, sy > 0 ? PF_DIR_S : PF_DIR_N, x, y)) return;
    if (sy > 0) {
        e = scan_up(l, l - j->cstride, l + j->cstride, y, cc, &jp);
        if (x == r->gx && r->gy > y && r->gy <= e) e = r->gy, jp = true;
    } else {
        e = scan_down(l, l - j->cstride, l + j->cstride, y, cc, &jp);
        if (x == r->gx && r->gy < y && r->gy >= e) e = r->gy, jp = true;
    }
    if (jp) relax(r, x, e, gb + r->c * (double)(e > y ? e - y : y - e), parent);
}

/* Diagonal jump from (x, y) = cell `from` towards (sx, sy), one diagonal
 * cell at a time, launching both straight scans from each cell where they
 * may find something: with jump bits, the stops and the cells on the goal's
 * row or column; without, every cell. */
static inline __attribute__((always_inline)) void jump_d(jps_run *r, int32_t x, int32_t y, int sx,
                                                         int sy, double gb, int32_t from, bool cc,
                                                         bool jb) {
    const int d = dir_of[sy + 1][sx + 1];
    const uint32_t bit = 1u << d;
    const int32_t off = sx + sy * r->w;
    const uint64_t *stops = r->j->bits + (size_t)d * r->j->plane;
    const ptrdiff_t lstep = sy * (ptrdiff_t)r->j->rstride;
    const uint64_t *sl = stops + (size_t)(y + 1) * r->j->rstride;
    int32_t i = from, k = 0;
    while (r->moves[i] & bit) {
        double gk;
        i += off;
        x += sx;
        y += sy;
        k++;
        sl += lstep;
        if (jb && !bit_get(sl, x) && x != r->gx && y != r->gy) continue;
        gk = gb + r->cd * (double)k;
        if (i == r->goal || (cc && forced_diag(r->j, r->moves, i, x, y, sx, sy))) {
            relax(r, x, y, gk, from);
            return;
        }
        jump_h(r, x, y, sx, gk, from, cc, jb);
        jump_v(r, x, y, sy, gk, from, cc, jb);
    }
}

static inline int sgn(int32_t v) { return (v > 0) - (v < 0); }

/* i / w without a division: with m = ceil(2^40 / w), i * m / 2^40 exceeds
 * i / w by less than i / 2^40 <= 2^-16 < 1 / w for i < 2^24 cells and
 * w < 2^16 (the default limits), too little to reach the next integer.
 * wmagic is 0 on grids past that, which divide. */
static inline int32_t row_of(const jps_run *r, int32_t i) {
    if (r->wmagic) return (int32_t)(((uint64_t)i * r->wmagic) >> 40);
    return i / r->w;
}

/* The directions worth trying from cell c = (x, y), by its arrival
 * direction (read from its parent's offset) and the forced neighbours. */
static inline __attribute__((always_inline)) uint32_t successors(const jps_run *r, int32_t c,
                                                                 int32_t x, int32_t y, bool cc) {
    const pf_jps *j = r->j;
    int32_t p = r->ctx->nodes[c].parent, dx, dy;
    uint32_t m;
    int sx, sy;
    if (p < 0) return r->moves[c];
    dy = row_of(r, p);
    dx = x - (p - dy * r->w);
    dy = y - dy;
    sx = sgn(dx);
    sy = sgn(dy);
    if (dx * sx == dy * sy) {
        m = dbit(sx, 0) | dbit(0, sy) | dbit(sx, sy);
        if (cc) {
            if (!walkable(j, x - sx, y)) m |= dbit(-sx, sy);
            if (!walkable(j, x, y - sy)) m |= dbit(sx, -sy);
        }
    } else {
        /* Arrived straight (possibly after a diagonal), along the longer
         * axis of the offset. */
        if (dx * sx > dy * sy)
            sy = 0;
        else
            sx = 0;
        m = dbit(sx, sy);
        for (int q = -1; q <= 1; q += 2) {
            int qx = sx ? 0 : q, qy = sx ? q : 0;
            if (cc) {
                if (!walkable(j, x + qx, y + qy)) m |= dbit(sx + qx, sy + qy);
            } else if (!walkable(j, x - sx + qx, y - sy + qy)) {
                m |= dbit(qx, qy) | dbit(sx + qx, sy + qy);
            }
        }
    }
    return m & r->moves[c];
}

static bool polled_stop(const pf_query *q, uint64_t expanded) {
    return q->should_stop && (expanded & PF__STOP_POLL_MASK) == 0 && q->should_stop(q->stop_ud);
}

static inline __attribute__((always_inline)) pf_status run_jps(jps_run *r, const pf_query *q,
                                                               pf_result *out, bool cc, bool jb) {
    pf_search_ctx *ctx = r->ctx;
    const int32_t w = r->w;
    const int32_t s = q->start.y * w + q->start.x;
    pf__node *nodes = ctx->nodes;

    nodes[s].gen = r->gen;
    nodes[s].parent = -1;
    nodes[s].g = 0.0;
    {
        double hs = octile(r, q->start.x, q->start.y);
        pf__heap_push(ctx, s, hs, hs);
    }
    r->generated = 1;
    for (;;) {
        int32_t c, x, y;
        uint32_t m;
        double gc;
        if (r->sp > 0) {
            c = r->stack[--r->sp];
            nodes[c].heap_pos = PF__HEAP_CLOSED;
        } else if (ctx->heap_len > 0) {
            /* A successor whose f equals the least f in the open list may be
             * expanded next without a round trip through the heap: with a
             * consistent heuristic, expanding any node of least f keeps A*
             * optimal. The margin absorbs rounding in g + h only. */
            r->fref = ctx->heap[0].f + 1e-12 * (1.0 + ctx->heap[0].f);
            c = pf__heap_pop(ctx);
        } else {
            break;
        }
        if (c == r->goal) return PF_OK;
        if (polled_stop(q, out->expanded)) return PF_ECANCELED;
        if (q->max_expanded && out->expanded >= q->max_expanded) return PF_EBUDGET;
        out->expanded++;
        if (q->record_expanded) ctx->expanded[ctx->expanded_len++] = c;
        y = row_of(r, c);
        x = c - y * w;
        gc = nodes[c].g;
        m = successors(r, c, x, y, cc);
        if (m & (1u << PF_DIR_E)) jump_h(r, x, y, 1, gc, c, cc, jb);
        if (m & (1u << PF_DIR_W)) jump_h(r, x, y, -1, gc, c, cc, jb);
        if (m & (1u << PF_DIR_S)) jump_v(r, x, y, 1, gc, c, cc, jb);
        if (m & (1u << PF_DIR_N)) jump_v(r, x, y, -1, gc, c, cc, jb);
        if (m & (1u << PF_DIR_SE)) jump_d(r, x, y, 1, 1, gc, c, cc, jb);
        if (m & (1u << PF_DIR_SW)) jump_d(r, x, y, -1, 1, gc, c, cc, jb);
        if (m & (1u << PF_DIR_NE)) jump_d(r, x, y, 1, -1, gc, c, cc, jb);
        if (m & (1u << PF_DIR_NW)) jump_d(r, x, y, -1, -1, gc, c, cc, jb);
        if (r->npend) relax_flush(r);
    }
    return PF_NO_PATH;
}

/* The four variants, each compiled with its rule and the use of jump bits
 * fixed. */
static pf_status run_scan_cc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, true, false);
}

static pf_status run_scan_nocc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, false, false);
}

static pf_status run_bits_cc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, true, true);
}

static pf_status run_bits_nocc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, false, true);
}

/* Writes the cells of segment a -> b (diagonal first, then straight) from
 * pt[0] = a up to, not including, b. Returns the number of steps. */
static inline int32_t write_segment(pf_point *pt, pf_point a, pf_point b) {
    int32_t adx = abs(b.x - a.x), ady = abs(b.y - a.y);
    int32_t diag = adx > ady ? ady : adx, n = adx > ady ? adx : ady;
    int32_t sx = sgn(b.x - a.x), sy = sgn(b.y - a.y), x = a.x, y = a.y;
    for (int32_t t = 0; t < diag; t++, x += sx, y += sy) pt[t] = (pf_point){x, y};
    if (adx > ady)
        sy = 0;
    else
        sx = 0;
    for (int32_t t = diag; t < n; t++, x += sx, y += sy) pt[t] = (pf_point){x, y};
    return n;
}

/* The cost of segment a -> b: its diagonal steps, then its straight ones.
 * A product per kind rather than a sum per step: the sums are one dependent
 * floating-point add per cell (4 cycles each), which on short queries took
 * as long as finding the path; the two differ by a few ulps. */
static inline double segment_cost(const jps_run *r, pf_point a, pf_point b) {
    int32_t adx = abs(b.x - a.x), ady = abs(b.y - a.y);
    int32_t diag = adx > ady ? ady : adx, straight = (adx > ady ? adx : ady) - diag;
    return r->cd * (double)diag + r->c * (double)straight;
}

static inline pf_point cell_point(const jps_run *r, int32_t i) {
    int32_t y = row_of(r, i);
    return (pf_point){i - y * r->w, y};
}

/* Expands the jump points from the goal back to the start into the full cell
 * path. Each parent -> child segment is diagonal first, then straight. The
 * parent links are reversed first (they are spent), so the path is written
 * from the start on and its cost summed segment by segment in path order. */
static pf_status build_path(const jps_run *r, pf_search_ctx *ctx, int32_t start, int32_t goal,
                            pf_result *out) {
    pf__node *nodes = ctx->nodes;
    const int32_t w = r->w;
    size_t n = 1, k = 0;
    pf_status st;
    double cost = 0.0;

    for (int32_t i = goal, p, next = -1; i >= 0; next = i, i = p) {
        p = nodes[i].parent;
        if (p >= 0) {
            int32_t ay = row_of(r, p), by = row_of(r, i);
            int32_t dx = abs((i - by * w) - (p - ay * w)), dy = abs(by - ay);
            n += (size_t)(dx > dy ? dx : dy);
        }
        nodes[i].parent = next; /* now the next jump point towards the goal */
    }
    st = pf__ctx_reserve_path(ctx, n);
    if (st) return st;
    for (int32_t i = start, nx; (nx = nodes[i].parent) >= 0; i = nx) {
        pf_point a = cell_point(r, i), b = cell_point(r, nx);
        k += (size_t)write_segment(ctx->path + k, a, b);
        cost += segment_cost(r, a, b);
    }
    ctx->path[k] = cell_point(r, goal);
    out->path = ctx->path;
    out->path_len = n;
    out->cost = cost;
    return PF_OK;
}

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
static inline uint64_t window_short(const uint64_t *l, uint32_t p) { return window(l, p); }
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

/* pf_jps_search for every query the fast path below does not finish: falls
 * back to astar where JPS does not apply, checks q, answers it from its
 * canonical path when that is free (unless the fast path found it is not:
 * `direct_tested`), else searches. Not marked cold: GCC then takes the
 * expansion loops only it calls for cold too and optimizes them for size
 * (searches on 8room, den520d and random512-40-0 were 20-27% slower). */
static __attribute__((noinline)) pf_status search_full(pf_search_ctx *ctx, const pf_jps *j,
                                                       const pf_grid *g, const pf_query *q,
                                                       pf_result *out, bool direct_tested) {
    size_t cells = (size_t)g->w * (size_t)g->h;
    jps_run r;
    pf_status st;
    uint8_t ucost = 1;

    if (!j || !supports_fast(j, g, &ucost)) {
        pf_query qa = *q;
        qa.algorithm = PF_ALGO_ASTAR;
        st = pf_search(ctx, g, &qa, out);
        out->algorithm = PF_ALGO_ASTAR;
        return st;
    }
    memset(out, 0, sizeof(*out));
    out->algorithm = PF_ALGO_JPS;
    /* The heuristic is always octile; an inadmissible choice is refused as
     * astar refuses it, so both answer the same queries. */
    if ((unsigned)q->heuristic >= PF_H_COUNT ||
        (q->heuristic > PF_H_OCTILE && !pf_heuristic_is_admissible(q->heuristic, 8)))
        return out->status = PF_EINVAL;
    if (j->w != g->w || j->h != g->h) return out->status = PF_EINVAL;
    st = pf__check_endpoints(g, q->start, q->goal);
    if (st) return out->status = st;
    ctx->expanded_len = 0;
    if (q->record_expanded) {
        st = pf__ctx_reserve_expanded(ctx, cells);
        if (st) return out->status = st;
    }
    if (q->start.x == q->goal.x && q->start.y == q->goal.y) {
        out->generated = 1;
        return pf__answer_trivial(ctx, q->start, out);
    }
    if (!direct_tested) {
        const canon c = canon_of(q->start, q->goal);
        if (!straight_missing(j, q->goal, &c) &&
            (j->bits_cc == g->corner_cutting ? !diag_missing(j, q->start, &c)
                                             : diag_free_moves(g, q->start, &c))) {
            if (polled_stop(q, 0)) return out->status = PF_ECANCELED;
            st = pf__ctx_reserve_path(ctx, direct_room(c.nd + c.ns));
            if (st) return out->status = st;
            answer_direct(&c, (const double[2]){(double)ucost, (double)ucost * PF_SQRT2},
                          direct_write(ctx->path, q->start, &c), out);
            if (q->record_expanded) {
                ctx->expanded[ctx->expanded_len++] = q->start.y * g->w + q->start.x;
                out->expanded_cells = ctx->expanded;
                out->expanded_cells_len = ctx->expanded_len;
            }
            return PF_OK;
        }
    }

    r.ctx = ctx;
    r.j = j;
    r.moves = g->moves;
    r.w = g->w;
    r.wmagic = j->wmagic;
    r.gx = q->goal.x;
    r.gy = q->goal.y;
    r.goal = q->goal.y * g->w + q->goal.x;
    r.c = (double)ucost;
    r.cd = r.c * PF_SQRT2;
    /* Landmarks measured at another cost, under another corner rule, or for
     * another map, do not bound this one. */
    r.lm = j->lm && j->lm->cost == ucost && j->lm->w == g->w && j->lm->h == g->h &&
                   j->lm->cut == g->corner_cutting
               ? j->lm
               : NULL;
    st = pf__ctx_begin(ctx, cells);
    if (st) return out->status = st;
    if (r.lm) pf_landmarks_dist(r.lm, r.goal, r.lm_goal);
    r.gen = ctx->gen;
    r.jump_points = 0;
    r.generated = 0;
    r.fref = -1.0;
    r.sp = 0;
    r.npend = 0;
    {
        jps_scratch *sc;
        st = scratch_get(ctx, cells, &sc);
        if (st) return out->status = st;
        r.stack = sc->stack;
    }
    if (j->bits_cc == g->corner_cutting && j->mode != PF_JPS_BITS_NEVER &&
        (j->bits_pay || j->mode == PF_JPS_BITS_ALWAYS))
        st = g->corner_cutting ? run_bits_cc(&r, q, out) : run_bits_nocc(&r, q, out);
    else
        st = g->corner_cutting ? run_scan_cc(&r, q, out) : run_scan_nocc(&r, q, out);
    out->generated = r.generated;
    out->jump_points = r.jump_points;
    if (q->record_expanded) {
        out->expanded_cells = ctx->expanded;
        out->expanded_cells_len = ctx->expanded_len;
    }
    if (st == PF_OK) st = build_path(&r, ctx, q->start.y * g->w + q->start.x, r.goal, out);
    if (st != PF_OK) {
        out->path = NULL;
        out->path_len = 0;
        out->cost = 0.0;
    }
    return out->status = st;
}

/* Whether q is plain on a map j serves with its step bits: JPS applies with
 * every walkable cell at j->cost, octile heuristic, endpoints on the map,
 * nothing recorded, no stop callback. One branch: the tests are combined
 * with `|`, as they all pass on a served query. That the endpoints are
 * walkable and apart is left to the direct test. */
static inline bool query_plain(const pf_jps *j, const pf_grid *g, const pf_query *q) {
    const pf_point s = q->start, t = q->goal;
    return !((g->connectivity != 8) | (g->nwalls != 0) |
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
 * by tail calls. */
pf_status pf_jps_search(pf_search_ctx *ctx, const pf_jps *j, const pf_grid *g, const pf_query *q,
                        pf_result *out) {
    canon c;

    if (__builtin_expect(!j || !query_plain(j, g, q), 0))
        return search_full(ctx, j, g, q, out, false);
    c = canon_of(q->start, q->goal);
    /* Not direct: a blocked cell or step, or start == goal. */
    if (straight_missing(j, q->goal, &c) | diag_missing(j, q->start, &c) |
        (uint64_t)((c.nd | c.ns) == 0))
        return search_full(ctx, j, g, q, out, true);
    if (__builtin_expect(direct_room(c.nd + c.ns) > ctx->path_cap, 0))
        return search_full(ctx, j, g, q, out, false);
    answer_direct(&c, j->step_cost, direct_write(ctx->path, q->start, &c), out);
    ctx->expanded_len = 0;
    return PF_OK;
}
