/* dstar.c -- D* Lite, the optimized version (Koenig & Likhachev, "D* Lite",
 * AAAI 2002, figure 4). See dstar.h for the contract.
 *
 * The search runs backwards, from the goal towards the agent: g(s) and rhs(s)
 * estimate the cost from s to the goal, and the agent's path follows the
 * argmin over successors s' of c(s, s') + g(s'). Edge costs follow the map
 * model: c(s, s') = cost(s') x step length, so when a vertex u is expanded
 * every predecessor s reaches it for cost(u) x len(dir).
 *
 * Memory. Nothing per session is W x H:
 * - vertices live in 8x8 tiles allocated on first touch and found through
 *   blocks of 8x8 tiles and a small hash table of blocks: 4 bytes a cell (its
 *   g relative to a tile base, or its open-list position), only for the
 *   walkable cells of tiles the search touched (see "Vertex storage" below);
 * - the open list U is a binary heap of items (key, g, rhs, cell) whose
 *   position is stored in the cell, so Update and Remove are O(log n);
 * - the session's private changes live in a second small hash table, the
 *   overlay. The base grid is borrowed and shared by every session.
 *
 * The effective map. A cell's effective cost is the overlay's when it has
 * one, else the base grid's; likewise for each of its four wall edges. The
 * moves out of a cell depend on the costs and walls of its 3x3 block (the
 * diagonal rule in grid.h), so every cell within Chebyshev distance 1 of an
 * overlay change gets an overlay entry too ("tainted") caching its effective
 * move mask. A cell without an overlay entry uses the base grid's masks and
 * costs directly: the hot loop reads plain arrays unless the session has
 * private changes nearby.
 *
 * Changes. Changing a cell's cost changes every edge into it, and the
 * allowed-ness of every edge whose move mask reads it: all edges leaving a
 * cell of its 3x3 block. rhs(s) is a function of s's outgoing edges only, so
 * recomputing rhs and calling UpdateVertex for the nine cells of the block
 * handles the change exactly (a wall edge: the blocks of both its cells).
 * This is the paper's edge loop, done per vertex instead of per edge.
 *
 * The heuristic is octile (8-connected) or manhattan (4-connected) times the
 * cheapest effective cost, which keeps it consistent and satisfying the
 * triangle inequality that km relies on. When a change lowers the cheapest
 * cost below the scale in use (a private cell or a rebase cheaper than every
 * cost seen so far) the old keys are no longer lower bounds under a smaller
 * scale, so the next plan searches anew. This is rare on game maps, where
 * base ground is already the cheapest cost.
 */
#include "dstar.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuts.h"
#include "search_internal.h"

#define NOT_QUEUED (-1)
#define EMPTY_CELL (-1)
#define OV_INITIAL_CAP 64u

/* Distances are fixed-point integers: an orthogonal step into a cell of
 * cost c costs c * UNIT_ORTH, a diagonal one c * UNIT_DIAG (sqrt 2 rounded
 * to 24 fractional bits). Exact arithmetic matters: D* Lite's termination
 * test and its path read-out rely on exact ties between keys (every vertex
 * of a shortest path has the same k1 as the agent when the heuristic is
 * tight), and rounded doubles break those ties, leaving stale g values on
 * the path. The rounding of sqrt 2 changes a path's cost by at most 2^-24
 * relative, so the path found is optimal for the exact costs within 1e-7;
 * the cost reported is the path's exact cost, summed in double. Worst case
 * (2^24 cells of cost 255, all diagonal) stays below 2^57. */
typedef int64_t dist;
#define DIST_INF INT64_MAX
#define UNIT_ORTH ((dist)1 << 24)
#define UNIT_DIAG ((dist)23726566) /* round(sqrt(2) * 2^24) */
_Static_assert(UNIT_ORTH % 2 == 0 && UNIT_DIAG % 2 == 0, "tiles store g / 2 (see Vertex storage)");
/* km grows with every move; past this the session searches anew rather than
 * risk an overflow of k1 = g + h + km (never reached in practice). */
#define KM_LIMIT ((dist)1 << 61)

/* Vertex storage: tiles of 8x8 cells, allocated when the search first
 * touches one of their cells, found through their block (see tblock). A
 * vertex on the open list (locally inconsistent) is described by
 * its heap item, which holds g and rhs; its cell holds the item's position.
 * A vertex off the list is consistent, so its rhs is its g, and its cell
 * holds g. Untouched cells of an allocated tile hold infinity (g = rhs =
 * inf). Tiles fit searched regions closely (they are contiguous).
 *
 * A cell is 4 bytes, a "raw" value read with one of the tile's two bases:
 * - below RAW_QUEUED: g = base[raw >> 30] + 2 (raw & (2^30 - 1)), exact:
 *   every g is even (a sum of costs times UNIT_ORTH and UNIT_DIAG, both
 *   even), so 30 bits cover a window of 2^31 (128 steps of cost 1) around
 *   the first g stored with each base. Neighbouring cells mostly have g
 *   values a few steps apart. The second base serves the other side of a
 *   wall: in a maze a tile often holds two corridors far apart along the
 *   path;
 * - RAW_QUEUED | pos: on the open list at heap position pos;
 * - RAW_WIDE | i: g = wide[i], for the few cells outside their tile's window
 *   (across a wall from cells much nearer the goal, common in mazes only);
 * - RAW_INF: g = inf.
 * g stays the exact 64-bit fixed-point distance. Measured with `pathd-bench
 * sessions` on the 512x512 maps, one base took 16-20% more memory on the
 * mazes than two, four bases (with half the window) 2-5% more everywhere;
 * halving the stored offset (g is even) saved 6% on maze512-1-0. A base
 * is a multiple of 2^26 (a 32nd of the window), stored in 32 bits: a tile's
 * first g then still lands 2^30 to 2^30 + 2^26 above it, and 32 bits reach
 * 2^58, above any g.
 *
 * Only the cells that can be vertices are stored. The search only ever
 * touches walkable cells (no move leads into a blocked one), and half the
 * cells of a maze are walls. A tile records the mask of the cells it
 * stores, those walkable on the effective map when it was allocated, and
 * keeps them in mask order: cell i sits at rank popcount(mask below i). A
 * cell outside the mask has never been touched (g = rhs = inf). When the
 * search first touches one (a change or rebase opened it since), the tile
 * is laid out anew with all 64 cells; the old copy stays unused in the
 * pool until the search restarts, so a tile moves at most once and holds
 * at most twice today's bytes. A tile is one run of 32-bit words in the
 * pool: the mask (2 words), the two bases (2 words), then its cells. A
 * tile of a maze costs 16 + 4 x (its open cells) bytes, about 140 instead
 * of 272 with every cell stored and 64-bit bases. */
#define TILE_SHIFT 3
#define TILE_SIDE (1 << TILE_SHIFT)
#define TILE_CELLS (TILE_SIDE * TILE_SIDE)
#define NO_SLOT (-1)
typedef int64_t slot_t; /* run index * TILE_CELLS + the cell's rank in its tile */

#define RUN_MASK 0 /* word offsets in a tile's run */
#define RUN_BASE 2
#define RUN_CELLS 4
#define RUN_MAX (RUN_CELLS + TILE_CELLS)
/* The pool: chunks of POOL_CHUNK words (8 KiB); a run never straddles two
 * chunks, which wastes at most RUN_MAX - 1 words a chunk. */
#define POOL_SHIFT 11
#define POOL_CHUNK (1u << POOL_SHIFT)
#define POOL_LIMIT 0xFFFF0000u /* run indices stay below NO_TILE */

#define RAW_QUEUED 0x80000000u
#define RAW_WIDE 0xC0000000u
#define RAW_INDEX 0x3FFFFFFFu /* position / wide index bits */
#define RAW_INF 0xFFFFFFFFu   /* RAW_WIDE | RAW_INDEX, so wide index RAW_INDEX is never used */
#define TILE_BASE_BITS 1      /* two bases a tile, see above */
#define TILE_BASES (1 << TILE_BASE_BITS)
#define OFF_BITS (31 - TILE_BASE_BITS)
#define OFF_MASK ((1u << OFF_BITS) - 1)
/* The window of g values a base covers. Fewer bits only serve to test the
 * wide side table (almost every g goes there then). */
#ifndef PF_DSTAR_WINDOW_BITS
#define PF_DSTAR_WINDOW_BITS (OFF_BITS + 1)
#endif
_Static_assert(PF_DSTAR_WINDOW_BITS >= 2 && PF_DSTAR_WINDOW_BITS <= OFF_BITS + 1,
               "raw g must stay below RAW_QUEUED");
#define WINDOW ((dist)1 << PF_DSTAR_WINDOW_BITS)
#define BASE_HALF (WINDOW / 2) /* a tile's base sits this far below its first g */
/* Bases are stored divided by 2^BASE_Q_BITS; NO_BASE until taken. */
#define BASE_Q_BITS (PF_DSTAR_WINDOW_BITS > 5 ? PF_DSTAR_WINDOW_BITS - 5 : 0)
#define NO_BASE UINT32_MAX

/* cell_load gives open-list position p as -(p + 1). */
static inline int64_t tag_pos(uint32_t pos) { return -(int64_t)pos - 1; }
static inline bool is_queued(int64_t v) { return v < 0; }
static inline uint32_t untag_pos(int64_t v) { return (uint32_t)(-(v + 1)); }

/* An open-list item: the key [k1; k2], the vertex's g and rhs, its cell
 * and its slot. */
typedef struct qitem {
    dist k1, k2;
    dist g, rhs;
    slot_t slot;
    int32_t cell;
} qitem;

/* Tiles are found in two steps: a block of 8x8 tiles (64x64 cells) through
 * a small hash table keyed by block index, then the tile's number in the
 * block. A block costs 4 bytes a tile of its area, 16 KiB for a whole
 * 512x512 map where a hash entry per tile cost 16-32 bytes a tile, and
 * only blocks the search touched exist. */
#define BLOCK_SHIFT 3
#define BLOCK_SIDE (1 << BLOCK_SHIFT)
#define NO_TILE UINT32_MAX
typedef struct tblock {
    uint32_t tile[BLOCK_SIDE * BLOCK_SIDE]; /* the run of each tile, NO_TILE when not allocated */
} tblock;

/* A block hash entry: block index -> block number. */
typedef struct tent {
    int32_t key; /* EMPTY_CELL for a free entry */
    uint32_t block;
} tent;

/* Overlay entry flags. */
enum { OV_COST = 1 };

/* A private change, or a cell next to one (whose moves it alters). */
typedef struct ov {
    int32_t cell;  /* EMPTY_CELL for a free slot */
    uint8_t flags; /* OV_COST: `cost` overrides the base cost */
    uint8_t cost;
    uint8_t wmask; /* bit d: this cell's wall in direction d is overridden */
    uint8_t wval;  /* bit d: ... and is blocked */
    uint8_t moves; /* effective move mask, kept current by every change */
} ov;

struct pf_dstar {
    const pf_grid *base;
    int32_t w, h;
    int conn;
    bool cut;
    int32_t off[PF_DIR_COUNT];
    dist unit[PF_DIR_COUNT]; /* UNIT_ORTH or UNIT_DIAG */

    int32_t start, goal; /* cell indices */
    int32_t last;        /* s_last: the agent's position when km was last raised */
    dist km;
    dist hscale;         /* heuristic scale: a lower bound of every effective cost */
    bool fresh;          /* the next plan initialises the search first */
    const pf_cuts *cuts; /* the base grid's cut vertices, or NULL (see cut_off) */

    uint32_t **pool; /* the tiles' runs; chunk c holds words c*POOL_CHUNK.. */
    uint32_t npool, pool_cap;
    uint32_t ptop;   /* the next free word */
    uint32_t ntiles; /* tiles allocated since the search started */
    int32_t bw;      /* blocks per row */
    tblock *blk;     /* the blocks, by number */
    uint32_t nblk, blkcap;
    tent *th; /* block hash, at most half full */
    uint32_t thcap;
    unsigned thbits;
    dist *wide;                   /* g of the cells outside their tile's window */
    uint32_t wcap, wfree, nwfree; /* free slots are linked through wide[] */

    qitem *q;
    uint32_t qlen, qcap;

    ov *o;
    uint32_t ocap, ocount;
    unsigned obits;
    uint8_t ov_min; /* cheapest nonzero overlay cost, 0 when none */

    pf_point *path;
    size_t path_cap;

    uint64_t expanded, generated; /* work of the current plan call */
};

/* Hashing: Fibonacci hashing of the cell index, linear probing. Nothing is
 * ever deleted, so probes stop at the first free slot. */
static inline uint32_t hash_slot(int32_t cell, unsigned bits) {
    return (uint32_t)((uint32_t)cell * 2654435769u) >> (32 - bits);
}

static inline bool key_less(dist a1, dist a2, dist b1, dist b2) {
    return a1 < b1 || (a1 == b1 && a2 < b2);
}

static inline int32_t cell_of(const pf_dstar *d, pf_point p) { return p.y * d->w + p.x; }

static inline bool in_bounds(const pf_dstar *d, int32_t x, int32_t y) {
    return x >= 0 && y >= 0 && x < d->w && y < d->h;
}

/* Overlay */

static inline ov *ov_find(const pf_dstar *d, int32_t cell) {
    uint32_t mask = d->ocap - 1, i;
    if (d->ocount == 0) return NULL;
    for (i = hash_slot(cell, d->obits);; i = (i + 1) & mask) {
        if (d->o[i].cell == cell) return &d->o[i];
        if (d->o[i].cell == EMPTY_CELL) return NULL;
    }
}

static pf_status ov_alloc(ov **out, uint32_t cap) {
    ov *o = malloc((size_t)cap * sizeof(*o));
    if (!o) return PF_ENOMEM;
    for (uint32_t i = 0; i < cap; i++) o[i].cell = EMPTY_CELL;
    *out = o;
    return PF_OK;
}

static unsigned log2u(uint32_t n) {
    unsigned b = 0;
    while ((1u << b) < n) b++;
    return b;
}

/* Makes room for n more overlay entries without a rehash in between. */
static pf_status ov_reserve(pf_dstar *d, uint32_t n) {
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

static inline uint8_t eff_cost(const pf_dstar *d, int32_t cell) {
    const ov *o = ov_find(d, cell);
    return o && (o->flags & OV_COST) ? o->cost : d->base->cost[cell];
}

static inline uint8_t eff_moves(const pf_dstar *d, int32_t cell) {
    const ov *o = ov_find(d, cell);
    return o ? o->moves : d->base->moves[cell];
}

static inline bool eff_wall(const pf_dstar *d, int32_t cell, int dir) {
    const ov *o = ov_find(d, cell);
    if (o && (o->wmask & (1u << dir))) return (o->wval >> dir) & 1u;
    return d->base->walls && (d->base->walls[cell] & (1u << dir));
}

/* grid.c's move rule restated over the effective costs and walls. */
static bool eff_route_open(const pf_dstar *d, int32_t a, int32_t c, int d1, int d2) {
    return eff_cost(d, c) != 0 && !eff_wall(d, a, d1) && !eff_wall(d, c, d2);
}

static uint8_t compute_moves(const pf_dstar *d, int32_t x, int32_t y) {
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

/* Recomputes the cached masks of the overlay cells in the 3x3 block of
 * (x, y). */
static void ov_refresh_block(pf_dstar *d, int32_t x, int32_t y) {
    for (int32_t yy = y - 1; yy <= y + 1; yy++)
        for (int32_t xx = x - 1; xx <= x + 1; xx++) {
            if (!in_bounds(d, xx, yy)) continue;
            ov *o = ov_find(d, yy * d->w + xx);
            if (o) o->moves = compute_moves(d, xx, yy);
        }
}

/* Gives every cell of the 3x3 block of (x, y) an overlay entry. Room for
 * nine entries must have been reserved. */
static void ov_taint_block(pf_dstar *d, int32_t x, int32_t y) {
    for (int32_t yy = y - 1; yy <= y + 1; yy++)
        for (int32_t xx = x - 1; xx <= x + 1; xx++)
            if (in_bounds(d, xx, yy)) ov_get(d, yy * d->w + xx);
}

/* Vertices */

/* The run at word i of the pool. */
static inline uint32_t *run_at(const pf_dstar *d, uint32_t i) {
    return d->pool[i >> POOL_SHIFT] + (i & (POOL_CHUNK - 1));
}

/* Runs are arrays of words, so the 64-bit mask goes through memcpy (one
 * unaligned load). */
static inline uint64_t run_mask(const uint32_t *t) {
    uint64_t m;
    memcpy(&m, t + RUN_MASK, sizeof(m));
    return m;
}

static inline dist run_base(const uint32_t *t, uint32_t k) {
    return (dist)t[RUN_BASE + k] << BASE_Q_BITS;
}

/* A tile cell's rank is a popcount, one per neighbour lookup, on the
 * search's critical path. x86-64's baseline lacks the instruction, so there
 * the functions that run the search are compiled twice, with and without
 * it, and the loader picks one for the CPU (GCC's target_clones, through
 * an ifunc): the search loop and the path read-out. Measured first-plan times with `pathd-bench
 * sessions`: the bit-parallel sum made plans 5-10% slower than the instruction on AR0011SR and
 * random512-10-0. Elsewhere __builtin_popcountll is the instruction or libgcc's table (the latter
 * only on the cold paths). */
#if defined(__x86_64__) && !defined(__POPCNT__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define SEARCH_CLONES __attribute__((target_clones("popcnt", "default")))
#endif
#endif
#ifndef SEARCH_CLONES
#define SEARCH_CLONES
#endif

static inline unsigned popcount64(uint64_t x) { return (unsigned)__builtin_popcountll(x); }

static inline uint32_t *cell_ptr(const pf_dstar *d, slot_t sl) {
    return run_at(d, (uint32_t)(sl >> TILE_SHIFT >> TILE_SHIFT)) + RUN_CELLS +
           (sl & (TILE_CELLS - 1));
}

static inline bool raw_is_wide(uint32_t r) { return r >= RAW_WIDE && r != RAW_INF; }

/* The cell's value as one int64: g (DIST_INF when untouched) when it is
 * off the open list, else its tagged heap position (negative). */
static inline int64_t cell_load(const pf_dstar *d, slot_t sl) {
    const uint32_t *t = run_at(d, (uint32_t)(sl >> TILE_SHIFT >> TILE_SHIFT));
    uint32_t r = t[RUN_CELLS + (sl & (TILE_CELLS - 1))];
    if (r < RAW_QUEUED) return run_base(t, r >> OFF_BITS) + ((dist)(r & OFF_MASK) << 1);
    if (r < RAW_WIDE) return tag_pos(r & RAW_INDEX);
    if (r == RAW_INF) return DIST_INF;
    return d->wide[r & RAW_INDEX];
}

static inline void wide_release(pf_dstar *d, uint32_t i) {
    d->wide[i] = (dist)d->wfree;
    d->wfree = i;
    d->nwfree++;
}

/* Makes room for n more wide cells, so cell_store_g never allocates. */
static pf_status wide_reserve(pf_dstar *d, uint32_t n) {
    if (d->nwfree >= n) return PF_OK;
    /* Grows by half: the table cannot shrink (live indices sit anywhere),
     * so its slack stays for the session's life. */
    uint32_t cap = d->wcap ? d->wcap : 64;
    while (cap - d->wcap + d->nwfree < n) cap += cap / 2;
    if (cap > RAW_INDEX) return PF_ENOMEM;
    dist *w = realloc(d->wide, (size_t)cap * sizeof(*w));
    if (!w) return PF_ENOMEM;
    d->wide = w;
    for (uint32_t i = cap; i-- > d->wcap;) wide_release(d, i);
    d->wcap = cap;
    return PF_OK;
}

static inline void cell_store_pos(pf_dstar *d, slot_t sl, uint32_t pos) {
    uint32_t *p = cell_ptr(d, sl);
    if (raw_is_wide(*p)) wide_release(d, *p & RAW_INDEX);
    *p = RAW_QUEUED | pos;
}

/* Stores g (the vertex is off the open list). A g outside the tile's window
 * takes a wide slot; room must have been reserved with wide_reserve. */
static inline void cell_store_g(pf_dstar *d, slot_t sl, dist g) {
    uint32_t *t = run_at(d, (uint32_t)(sl >> TILE_SHIFT >> TILE_SHIFT));
    uint32_t *p = t + RUN_CELLS + (sl & (TILE_CELLS - 1)), old = *p;
    if (g != DIST_INF)
        for (uint32_t k = 0; k < TILE_BASES; k++) {
            if (t[RUN_BASE + k] == NO_BASE) {
                dist q = (g > BASE_HALF ? g - BASE_HALF : 0) >> BASE_Q_BITS;
                if (q >= NO_BASE) continue; /* never with the default window */
                t[RUN_BASE + k] = (uint32_t)q;
            }
            dist b = run_base(t, k);
            if (g >= b && g - b < WINDOW && !(g & 1)) {
                if (raw_is_wide(old)) wide_release(d, old & RAW_INDEX);
                *p = (uint32_t)(k << OFF_BITS) | (uint32_t)((g - b) >> 1);
                return;
            }
        }
    if (g == DIST_INF) {
        if (raw_is_wide(old)) wide_release(d, old & RAW_INDEX);
        *p = RAW_INF;
    } else if (raw_is_wide(old)) {
        d->wide[old & RAW_INDEX] = g;
    } else {
        uint32_t i = d->wfree;
        d->wfree = (uint32_t)d->wide[i];
        d->nwfree--;
        d->wide[i] = g;
        *p = RAW_WIDE | i;
    }
}

static inline int32_t block_key(const pf_dstar *d, int32_t x, int32_t y) {
    return (y >> (TILE_SHIFT + BLOCK_SHIFT)) * d->bw + (x >> (TILE_SHIFT + BLOCK_SHIFT));
}

/* The tile's place in its block. */
static inline uint32_t block_pos(int32_t x, int32_t y) {
    return (uint32_t)((((y >> TILE_SHIFT) & (BLOCK_SIDE - 1)) << BLOCK_SHIFT) |
                      ((x >> TILE_SHIFT) & (BLOCK_SIDE - 1)));
}

/* The cell's bit in its tile's mask. */
static inline unsigned tile_bit(int32_t x, int32_t y) {
    return (unsigned)(((y & (TILE_SIDE - 1)) << TILE_SHIFT) + (x & (TILE_SIDE - 1)));
}

static inline slot_t run_slot(uint32_t run, uint64_t mask, unsigned bit) {
    return (slot_t)run * TILE_CELLS + popcount64(mask & ((UINT64_C(1) << bit) - 1));
}

/* The block entry of the tile of (x, y), or NULL when its block does not
 * exist. */
static inline uint32_t *tile_ref(const pf_dstar *d, int32_t x, int32_t y) {
    int32_t key = block_key(d, x, y);
    uint32_t mask = d->thcap - 1;
    for (uint32_t i = hash_slot(key, d->thbits);; i = (i + 1) & mask) {
        if (d->th[i].key == key) return &d->blk[d->th[i].block].tile[block_pos(x, y)];
        if (d->th[i].key == EMPTY_CELL) return NULL;
    }
}

/* The slot of cell (x, y) of the tile whose run is t, or NO_SLOT when the
 * cell was never touched: the tile does not exist or does not store it. */
static inline slot_t run_find(const pf_dstar *d, uint32_t t, int32_t x, int32_t y) {
    if (t == NO_TILE) return NO_SLOT;
    uint64_t m = run_mask(run_at(d, t));
    unsigned bit = tile_bit(x, y);
    return (m >> bit) & 1 ? run_slot(t, m, bit) : NO_SLOT;
}

/* The slot of cell (x, y), or NO_SLOT when it was never touched. */
static inline slot_t slot_find(const pf_dstar *d, int32_t x, int32_t y) {
    const uint32_t *ref = tile_ref(d, x, y);
    return ref ? run_find(d, *ref, x, y) : NO_SLOT;
}

/* A cell's tile (its run and mask), kept while its neighbours are looked
 * up: most of them share the tile and need neither the hash nor a load.
 * Valid until a tile is allocated or widened (slot_make). */
typedef struct near {
    uint32_t run; /* NO_TILE when the tile does not exist */
    uint64_t mask;
    int32_t x, y;
} near;

static inline near near_of(const pf_dstar *d, int32_t x, int32_t y) {
    const uint32_t *ref = tile_ref(d, x, y);
    near h = {ref ? *ref : NO_TILE, 0, x, y};
    if (h.run != NO_TILE) h.mask = run_mask(run_at(d, h.run));
    return h;
}

/* slot_find for a cell (x, y) on the map. */
static inline slot_t near_find(const pf_dstar *d, const near *h, int32_t x, int32_t y) {
    if (((x ^ h->x) | (y ^ h->y)) >> TILE_SHIFT) return slot_find(d, x, y);
    unsigned bit = tile_bit(x, y);
    return (h->mask >> bit) & 1 ? run_slot(h->run, h->mask, bit) : NO_SLOT;
}

/* A run of n words; room was reserved with pool_reserve. */
static uint32_t run_take(pf_dstar *d, uint32_t n) {
    if ((d->ptop & (POOL_CHUNK - 1)) + n > POOL_CHUNK) d->ptop = (d->ptop | (POOL_CHUNK - 1)) + 1;
    uint32_t r = d->ptop;
    d->ptop += n;
    return r;
}

/* A new tile run storing the cells of `mask`, all untouched. */
static uint32_t run_new(pf_dstar *d, uint64_t mask) {
    uint32_t n = popcount64(mask), r = run_take(d, RUN_CELLS + n);
    uint32_t *t = run_at(d, r);
    memcpy(t + RUN_MASK, &mask, sizeof(mask));
    for (uint32_t k = 0; k < TILE_BASES; k++) t[RUN_BASE + k] = NO_BASE;
    memset(t + RUN_CELLS, 0xff, n * sizeof(*t)); /* RAW_INF */
    return r;
}

/* The bits of the nonzero bytes of c[0..8), bit i for c[i]: each byte's
 * top bit gets set when it is nonzero, then one multiply gathers the eight
 * top bits into the last byte (no two partial products share a bit). */
static inline uint64_t nonzero8(const uint8_t *c) {
    uint64_t v;
    memcpy(&v, c, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v); /* byte i at bits 8i */
#endif
    const uint64_t lo7 = UINT64_C(0x7F7F7F7F7F7F7F7F);
    uint64_t top = (((v & lo7) + lo7) | v) & ~lo7;
    return ((top >> 7) * UINT64_C(0x0102040810204080)) >> 56;
}

/* The cells of the tile with corner (x0, y0) that are walkable on the
 * effective map: those the search can touch now. */
static uint64_t walkable_mask(const pf_dstar *d, int32_t x0, int32_t y0) {
    uint64_t m = 0;
    int32_t xe = x0 + TILE_SIDE < d->w ? x0 + TILE_SIDE : d->w;
    int32_t ye = y0 + TILE_SIDE < d->h ? y0 + TILE_SIDE : d->h;
    for (int32_t y = y0; y < ye; y++) {
        const uint8_t *c = d->base->cost + (size_t)y * d->w;
        uint64_t row = 0;
        if (xe - x0 == TILE_SIDE) {
            row = nonzero8(c + x0);
        } else {
            for (int32_t x = x0; x < xe; x++) row |= (uint64_t)(c[x] != 0) << (x - x0);
        }
        /* A base wall may be open in the overlay; an overlay wall on open
         * base ground is stored anyway (harmless, and rare). */
        for (int32_t x = x0; d->ocount && x < xe; x++)
            if (!((row >> (x - x0)) & 1) && eff_cost(d, y * d->w + x) != 0)
                row |= UINT64_C(1) << (x - x0);
        m |= row << ((y - y0) * TILE_SIDE);
    }
    return m;
}

/* Lays the tile of run *ref out anew with all 64 cells, for a cell its
 * mask lacks. Queued cells move along: their heap items learn the new
 * slots. */
static void tile_widen(pf_dstar *d, uint32_t *ref) {
    uint32_t old = *ref, r = run_new(d, ~UINT64_C(0));
    const uint32_t *o = run_at(d, old);
    uint32_t *t = run_at(d, r);
    uint64_t m = run_mask(o);
    for (uint32_t k = 0; k < TILE_BASES; k++) t[RUN_BASE + k] = o[RUN_BASE + k];
    for (unsigned rank = 0; m; m &= m - 1, rank++) {
        unsigned bit = (unsigned)__builtin_ctzll(m);
        uint32_t raw = o[RUN_CELLS + rank];
        t[RUN_CELLS + bit] = raw;
        if (raw >= RAW_QUEUED && raw < RAW_WIDE)
            d->q[raw & RAW_INDEX].slot = (slot_t)r * TILE_CELLS + bit;
    }
    *ref = r;
}

/* slot_get's slow path: allocates the block or the tile, or widens the
 * tile, for a cell that slot_find does not find. */
static __attribute__((noinline)) slot_t slot_make(pf_dstar *d, int32_t x, int32_t y) {
    int32_t key = block_key(d, x, y);
    uint32_t mask = d->thcap - 1, i;
    unsigned bit = tile_bit(x, y);
    for (i = hash_slot(key, d->thbits);; i = (i + 1) & mask)
        if (d->th[i].key == key || d->th[i].key == EMPTY_CELL) break;
    if (d->th[i].key == EMPTY_CELL) {
        d->th[i].key = key;
        d->th[i].block = d->nblk;
        memset(&d->blk[d->nblk++], 0xff, sizeof(tblock)); /* NO_TILE */
    }
    uint32_t *ref = &d->blk[d->th[i].block].tile[block_pos(x, y)];
    if (*ref == NO_TILE) {
        *ref = run_new(d, walkable_mask(d, x & ~(TILE_SIDE - 1), y & ~(TILE_SIDE - 1)) |
                              UINT64_C(1) << bit);
        d->ntiles++;
    }
    uint64_t m = run_mask(run_at(d, *ref));
    if (!((m >> bit) & 1)) {
        tile_widen(d, ref);
        m = ~UINT64_C(0);
    }
    return run_slot(*ref, m, bit);
}

/* The slot of cell (x, y), its tile allocated or widened when it does not
 * store the cell. Room must have been reserved with tiles_reserve. */
static inline slot_t slot_get(pf_dstar *d, int32_t x, int32_t y) {
    slot_t sl = slot_find(d, x, y);
    return sl != NO_SLOT ? sl : slot_make(d, x, y);
}

/* slot_get for a cell (x, y) on the map. */
static inline slot_t near_get(pf_dstar *d, near *h, int32_t x, int32_t y) {
    slot_t sl = near_find(d, h, x, y);
    if (sl != NO_SLOT) return sl;
    sl = slot_make(d, x, y);
    *h = near_of(d, h->x, h->y); /* the tile may have moved */
    return sl;
}

static pf_status th_alloc(tent **out, uint32_t cap) {
    tent *t = malloc((size_t)cap * sizeof(*t));
    if (!t) return PF_ENOMEM;
    for (uint32_t i = 0; i < cap; i++) t[i].key = EMPTY_CELL;
    *out = t;
    return PF_OK;
}

/* Makes room for n runs of up to RUN_MAX words. run_take takes a run from
 * ptop on, or from the next chunk when it would straddle, and the end of n
 * runs of RUN_MAX bounds that of any n shorter ones: those fill what is
 * left of ptop's chunk, then whole chunks of `per`. */
static pf_status pool_reserve(pf_dstar *d, uint32_t n) {
    const uint32_t per = POOL_CHUNK / RUN_MAX;
    uint32_t fit = (POOL_CHUNK - (d->ptop & (POOL_CHUNK - 1))) / RUN_MAX;
    uint64_t chunks = (uint64_t)(d->ptop >> POOL_SHIFT) + 1;
    if (fit < n) chunks += (n - fit + per - 1) / per;
    if (chunks <= d->npool) return PF_OK;
    if (chunks * POOL_CHUNK > POOL_LIMIT) return PF_ENOMEM;
    while (d->npool < chunks) {
        if (d->npool == d->pool_cap) {
            uint32_t cap = d->pool_cap ? 2 * d->pool_cap : 8;
            uint32_t **c = realloc(d->pool, (size_t)cap * sizeof(*c));
            if (!c) return PF_ENOMEM;
            d->pool = c;
            d->pool_cap = cap;
        }
        d->pool[d->npool] = malloc(POOL_CHUNK * sizeof(uint32_t));
        if (!d->pool[d->npool]) return PF_ENOMEM;
        d->npool++;
    }
    return PF_OK;
}

/* Makes room for n more slot_get calls: pool words, blocks and block hash
 * entries, so that slot_get cannot fail in between. Each call may allocate
 * a tile or widen one, so n tiles take 2n runs. */
static pf_status tiles_reserve(pf_dstar *d, uint32_t n) {
    if (pool_reserve(d, 2 * n)) return PF_ENOMEM;
    if (d->nblk + n > d->blkcap) {
        uint32_t cap = d->blkcap ? d->blkcap + d->blkcap / 2 : 4;
        if (cap < d->nblk + n) cap = d->nblk + n;
        tblock *b = realloc(d->blk, (size_t)cap * sizeof(*b));
        if (!b) return PF_ENOMEM;
        d->blk = b;
        d->blkcap = cap;
    }
    if ((uint64_t)(d->nblk + n) * 2 > d->thcap) {
        uint32_t cap = d->thcap ? d->thcap : 16;
        tent *t;
        while ((uint64_t)(d->nblk + n) * 2 > cap) cap *= 2;
        if (th_alloc(&t, cap)) return PF_ENOMEM;
        unsigned bits = log2u(cap);
        for (uint32_t i = 0; i < d->thcap; i++) {
            if (d->th[i].key == EMPTY_CELL) continue;
            uint32_t j = hash_slot(d->th[i].key, bits);
            while (t[j].key != EMPTY_CELL) j = (j + 1) & (cap - 1);
            t[j] = d->th[i];
        }
        free(d->th);
        d->th = t;
        d->thcap = cap;
        d->thbits = bits;
    }
    return PF_OK;
}

static void tiles_free(pf_dstar *d) {
    for (uint32_t i = 0; i < d->npool; i++) free(d->pool[i]);
    free(d->pool);
    free(d->th);
    free(d->blk);
    d->blk = NULL;
    d->nblk = d->blkcap = 0;
    d->pool = NULL;
    d->npool = d->pool_cap = d->ptop = d->ntiles = 0;
    d->th = NULL;
    d->thcap = 0;
    free(d->wide);
    d->wide = NULL;
    d->wcap = d->nwfree = 0;
}

static inline int32_t cell_x(const pf_dstar *d, int32_t cell) { return cell % d->w; }
static inline int32_t cell_y(const pf_dstar *d, int32_t cell) { return cell / d->w; }

static inline dist g_at(const pf_dstar *d, slot_t sl) {
    int64_t v = cell_load(d, sl);
    return is_queued(v) ? d->q[untag_pos(v)].g : v;
}

static inline dist rhs_at(const pf_dstar *d, slot_t sl) {
    int64_t v = cell_load(d, sl);
    return is_queued(v) ? d->q[untag_pos(v)].rhs : v;
}

/* g of a cell, infinity when untouched. */
static inline dist g_of(const pf_dstar *d, int32_t x, int32_t y) {
    slot_t sl = slot_find(d, x, y);
    return sl == NO_SLOT ? DIST_INF : g_at(d, sl);
}

/* Open list: binary min-heap on [k1; k2] compared lexicographically. A
 * queued cell stores its item's position, so Update and Remove are
 * O(log n). */

static inline bool q_less(const qitem *a, const qitem *b) {
    return key_less(a->k1, a->k2, b->k1, b->k2);
}

static inline void q_place(pf_dstar *d, uint32_t pos, const qitem *it) {
    d->q[pos] = *it;
    cell_store_pos(d, it->slot, pos);
}

static void q_sift_up(pf_dstar *d, uint32_t pos) {
    qitem it = d->q[pos];
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (!q_less(&it, &d->q[parent])) break;
        q_place(d, pos, &d->q[parent]);
        pos = parent;
    }
    q_place(d, pos, &it);
}

static void q_sift_down(pf_dstar *d, uint32_t pos) {
    qitem it = d->q[pos];
    for (;;) {
        uint32_t c = 2 * pos + 1;
        if (c >= d->qlen) break;
        if (c + 1 < d->qlen && q_less(&d->q[c + 1], &d->q[c])) c++;
        if (!q_less(&d->q[c], &it)) break;
        q_place(d, pos, &d->q[c]);
        pos = c;
    }
    q_place(d, pos, &it);
}

/* Room was reserved with q_reserve: an insert never allocates. */
static void q_insert(pf_dstar *d, const qitem *it) {
    uint32_t pos = d->qlen++;
    d->q[pos] = *it;
    q_sift_up(d, pos);
    d->generated++;
}

/* Re-sorts item pos after its key changed to [k1; k2]. */
static void q_rekey(pf_dstar *d, uint32_t pos, dist k1, dist k2) {
    bool up = key_less(k1, k2, d->q[pos].k1, d->q[pos].k2);
    d->q[pos].k1 = k1;
    d->q[pos].k2 = k2;
    if (up)
        q_sift_up(d, pos);
    else
        q_sift_down(d, pos);
    d->generated++;
}

/* Takes item pos off the list; its cell then holds g (now equal to rhs). */
static void q_remove(pf_dstar *d, uint32_t pos) {
    slot_t sl = d->q[pos].slot;
    dist g = d->q[pos].g;
    if (pos != --d->qlen) {
        q_place(d, pos, &d->q[d->qlen]);
        if (pos > 0 && q_less(&d->q[pos], &d->q[(pos - 1) / 2]))
            q_sift_up(d, pos);
        else
            q_sift_down(d, pos);
    }
    cell_store_g(d, sl, g);
}

/* Makes room for n more open-list items, so q_insert never allocates. The
 * open list holds only the inconsistent vertices (the search frontier). */
static pf_status q_reserve(pf_dstar *d, uint32_t n) {
    uint32_t cap = d->qcap ? d->qcap : 64;
    qitem *q;
    if (d->qcap >= d->qlen + n) return PF_OK;
    while (cap < d->qlen + n) cap *= 2;
    q = realloc(d->q, (size_t)cap * sizeof(*q));
    if (!q) return PF_ENOMEM;
    d->q = q;
    d->qcap = cap;
    return PF_OK;
}

/* Room for n more tiles and k more open-list items and wide cells: what
 * one expansion or one changed block may need, so nothing inside fails. */
static pf_status reserve(pf_dstar *d, uint32_t n, uint32_t k) {
    if (tiles_reserve(d, n) || q_reserve(d, k) || wide_reserve(d, k)) return PF_ENOMEM;
    return PF_OK;
}

/* The search */

/* h(a, b): octile or manhattan distance in the fixed-point units times the
 * cost scale. It is the exact distance on an open map of cost hscale, so it
 * is consistent and obeys the triangle inequality. */
static inline dist heur(const pf_dstar *d, int32_t a, int32_t b) {
    int32_t dx = a % d->w - b % d->w, dy = a / d->w - b / d->w;
    dx = dx < 0 ? -dx : dx;
    dy = dy < 0 ? -dy : dy;
    if (d->conn == 4) return d->hscale * (dist)(dx + dy) * UNIT_ORTH;
    int32_t mx = dx > dy ? dx : dy, mn = dx > dy ? dy : dx;
    return d->hscale * ((dist)(mx - mn) * UNIT_ORTH + (dist)mn * UNIT_DIAG);
}

static inline void calc_key(const pf_dstar *d, int32_t cell, dist g, dist rhs, dist *k1, dist *k2) {
    dist m = g < rhs ? g : rhs;
    *k1 = m == DIST_INF ? DIST_INF : m + heur(d, d->start, cell) + d->km;
    *k2 = m;
}

/* UpdateVertex: the vertex at sl (cell `cell`) now has g and rhs; it goes on,
 * stays on with a new key, or leaves the open list. */
static void update_vertex(pf_dstar *d, slot_t sl, int32_t cell, dist g, dist rhs) {
    int64_t v = cell_load(d, sl);
    if (g != rhs) {
        qitem it;
        calc_key(d, cell, g, rhs, &it.k1, &it.k2);
        if (is_queued(v)) {
            uint32_t pos = untag_pos(v);
            d->q[pos].g = g;
            d->q[pos].rhs = rhs;
            q_rekey(d, pos, it.k1, it.k2);
        } else {
            it.g = g;
            it.rhs = rhs;
            it.slot = sl;
            it.cell = cell;
            q_insert(d, &it);
        }
    } else if (is_queued(v)) {
        uint32_t pos = untag_pos(v);
        d->q[pos].g = g;
        q_remove(d, pos);
    } else {
        cell_store_g(d, sl, g);
    }
}

/* min over successors s' of c(s, s') + g(s'). */
SEARCH_CLONES static dist best_successor(const pf_dstar *d, int32_t s) {
    uint8_t m = eff_moves(d, s);
    int32_t x = cell_x(d, s), y = cell_y(d, s);
    near h = near_of(d, x, y);
    dist best = DIST_INF;
    for (int k = 0; k < d->conn; k++) {
        if (!(m & (1u << k))) continue;
        int32_t n = s + d->off[k];
        slot_t sl = near_find(d, &h, x + pf_dir_dx[k], y + pf_dir_dy[k]);
        dist gn = sl == NO_SLOT ? DIST_INF : g_at(d, sl);
        if (gn == DIST_INF) continue;
        dist c = (dist)eff_cost(d, n) * d->unit[k] + gn;
        if (c < best) best = c;
    }
    return best;
}

/* The edges leaving cell (x, y) changed: recompute its rhs and
 * UpdateVertex. Room for one tile and one heap item must be reserved. */
static void refresh_vertex(pf_dstar *d, int32_t x, int32_t y) {
    int32_t s = y * d->w + x;
    slot_t sl;
    if (s == d->goal) return; /* rhs(goal) = 0 whatever its edges */
    dist rhs = best_successor(d, s);
    sl = rhs == DIST_INF ? slot_find(d, x, y) : slot_get(d, x, y);
    if (sl == NO_SLOT) return; /* untouched and still unreachable */
    update_vertex(d, sl, s, g_at(d, sl), rhs);
}

/* Resets the search: no tiles, empty open list, km = 0, rhs(goal) = 0.
 * Memory goes back to almost nothing, so a session that searched a large
 * area before a goal change does not keep it. */
static pf_status initialise(pf_dstar *d) {
    uint8_t minc = pf_grid_min_cost(d->base);
    tiles_free(d);
    free(d->q);
    d->q = NULL;
    d->qcap = d->qlen = 0;
    d->km = 0;
    d->last = d->start;
    d->hscale = d->ov_min && d->ov_min < minc ? d->ov_min : minc;
    if (reserve(d, 1, 16)) return PF_ENOMEM;
    int32_t gx = cell_x(d, d->goal), gy = cell_y(d, d->goal);
    update_vertex(d, slot_get(d, gx, gy), d->goal, DIST_INF, 0);
    d->fresh = false;
    return PF_OK;
}

/* The agent moved since km was last raised: raise it by h(s_last, s_start),
 * which bounds how much any h(s_start, s) can have dropped. Called before
 * anything computes a key with the new position. */
static void sync_start(pf_dstar *d) {
    if (d->start == d->last) return;
    d->km += heur(d, d->last, d->start);
    d->last = d->start;
    if (d->km > KM_LIMIT) d->fresh = true;
}

/* The stop test of ComputeShortestPath(): nothing left to do for the
 * agent's vertex. The paper's optimized loop also stops while the agent's
 * vertex is overconsistent; going on until it is consistent (the basic
 * version's test) costs one expansion and gives the agent an exact g, from
 * which the whole path is read. */
static inline bool search_done(const pf_dstar *d) {
    if (d->qlen == 0) return true;
    slot_t ss = slot_find(d, cell_x(d, d->start), cell_y(d, d->start));
    dist sg = ss == NO_SLOT ? DIST_INF : g_at(d, ss);
    dist srhs = ss == NO_SLOT ? DIST_INF : rhs_at(d, ss);
    dist m = sg < srhs ? sg : srhs;
    dist ks1 = m == DIST_INF ? DIST_INF : m + d->km, ks2 = m; /* h(start, start) = 0 */
    return !(key_less(d->q[0].k1, d->q[0].k2, ks1, ks2) || srhs != sg);
}

/* ComputeShortestPath() of the optimized D* Lite. The loop invariant (every
 * locally inconsistent vertex is queued with a key that is a lower bound)
 * holds between iterations, so stopping on the budget leaves a state the
 * next call simply continues. */
SEARCH_CLONES static pf_status compute_shortest_path(pf_dstar *d, uint64_t max_expanded) {
    for (;;) {
        if (search_done(d)) break;
        if (max_expanded && d->expanded >= max_expanded) return PF_EBUDGET;
        /* The predecessors below span at most four tiles. */
        if (reserve(d, 4, 16)) return PF_ENOMEM;

        const qitem top = d->q[0];
        dist knew1, knew2;
        calc_key(d, top.cell, top.g, top.rhs, &knew1, &knew2);
        if (key_less(top.k1, top.k2, knew1, knew2)) {
            q_rekey(d, 0, knew1, knew2);
            continue;
        }
        d->expanded++;
        const int32_t c = top.cell, cx = cell_x(d, c), cy = cell_y(d, c);
        const uint8_t mv = eff_moves(d, c);
        const dist cu = (dist)eff_cost(d, c);
        near h = near_of(d, cx, cy);
        if (top.g > top.rhs) {
            /* Overconsistent: settle g and relax the predecessors. */
            const dist gu = top.rhs;
            d->q[0].g = gu;
            q_remove(d, 0);
            for (int k = 0; k < d->conn; k++) {
                if (!(mv & (1u << k))) continue;
                int32_t s = c + d->off[k];
                if (s == d->goal) continue;
                dist cand = cu * d->unit[k] + gu;
                slot_t sl = near_get(d, &h, cx + pf_dir_dx[k], cy + pf_dir_dy[k]);
                if (cand < rhs_at(d, sl)) update_vertex(d, sl, s, g_at(d, sl), cand);
            }
        } else {
            /* Underconsistent: raise g to infinity; predecessors whose rhs
             * came through u look for their next best successor. */
            const dist gold = top.g;
            update_vertex(d, top.slot, c, DIST_INF, top.rhs);
            for (int k = 0; k < d->conn; k++) {
                if (!(mv & (1u << k))) continue;
                int32_t s = c + d->off[k];
                if (s == d->goal) continue;
                slot_t sl = near_find(d, &h, cx + pf_dir_dx[k], cy + pf_dir_dy[k]);
                if (sl == NO_SLOT || rhs_at(d, sl) != cu * d->unit[k] + gold) continue;
                update_vertex(d, sl, s, g_at(d, sl), best_successor(d, s));
            }
        }
    }
    return PF_OK;
}

/* A finished plan keeps its open list (the frontier the next repair goes
 * on from), not the doubling slack the search left: over a thousand
 * sessions on a map the slack adds up. Only a capacity above twice the use
 * is trimmed, to 1.25 times it, so plans that alternate between sizes do
 * not reallocate every time; shrinking a block is done in place. */
static void trim_slack(pf_dstar *d) {
    if (d->qcap > 2 * d->qlen + 64) {
        uint32_t cap = d->qlen + d->qlen / 4 + 32;
        qitem *q = realloc(d->q, (size_t)cap * sizeof(*q));
        if (q) {
            d->q = q;
            d->qcap = cap;
        }
    }
}

static void trim_path(pf_dstar *d, size_t n) {
    if (d->path_cap > 2 * n + 64) {
        size_t cap = n + n / 4 + 32;
        pf_point *p = realloc(d->path, cap * sizeof(*p));
        if (p) {
            d->path = p;
            d->path_cap = cap;
        }
    }
}

static pf_status reserve_path(pf_dstar *d, size_t n) {
    if (n <= d->path_cap) return PF_OK;
    size_t cap = d->path_cap ? d->path_cap : 64;
    while (cap < n) cap *= 2;
    pf_point *p = realloc(d->path, cap * sizeof(*p));
    if (!p) return PF_ENOMEM;
    d->path = p;
    d->path_cap = cap;
    return PF_OK;
}

/* Follows argmin over successors s' of c(s, s') + g(s') from the agent to
 * the goal. Each step strictly lowers g (edge costs are >= 1), so the walk
 * ends; the bound on its length only guards against a broken invariant. */
SEARCH_CLONES static pf_status extract_path(pf_dstar *d, pf_result *out) {
    int32_t cur = d->start;
    size_t n = 0, limit = (size_t)d->ntiles * TILE_CELLS + 1;
    double cost = 0.0;
    for (;;) {
        int32_t x = cell_x(d, cur), y = cell_y(d, cur);
        if (reserve_path(d, n + 1)) return PF_ENOMEM;
        d->path[n].x = x;
        d->path[n].y = y;
        n++;
        if (cur == d->goal) break;
        if (n > limit) return PF_EINVAL;
        uint8_t m = eff_moves(d, cur);
        near h = near_of(d, x, y);
        dist best = DIST_INF;
        double step = 0.0;
        int32_t next = -1;
        for (int k = 0; k < d->conn; k++) {
            if (!(m & (1u << k))) continue;
            int32_t s = cur + d->off[k];
            slot_t sl = near_find(d, &h, x + pf_dir_dx[k], y + pf_dir_dy[k]);
            dist gs = sl == NO_SLOT ? DIST_INF : g_at(d, sl);
            if (gs == DIST_INF) continue;
            dist c = (dist)eff_cost(d, s) * d->unit[k];
            if (c + gs < best) {
                best = c + gs;
                step = (double)eff_cost(d, s) * pf__dir_len(k);
                next = s;
            }
        }
        if (next < 0) return PF_EINVAL;
        cost += step;
        cur = next;
    }
    trim_path(d, n);
    out->path = d->path;
    out->path_len = n;
    out->cost = cost;
    return PF_OK;
}

/* API */

static pf_status check_cell(const pf_dstar *d, pf_point p) {
    if (!in_bounds(d, p.x, p.y)) return PF_ERANGE;
    if (eff_cost(d, cell_of(d, p)) == 0) return PF_EBLOCKED;
    return PF_OK;
}

static void set_base(pf_dstar *d, const pf_grid *g) {
    d->base = g;
    d->w = g->w;
    d->h = g->h;
    d->conn = g->connectivity;
    d->cut = g->corner_cutting;
    for (int k = 0; k < PF_DIR_COUNT; k++) {
        d->off[k] = pf__grid_dir_offset(g, k);
        d->unit[k] = k < 4 ? UNIT_ORTH : UNIT_DIAG;
    }
}

pf_status pf_dstar_create(const pf_grid *g, pf_point start, pf_point goal, pf_dstar **out) {
    pf_dstar *d;
    pf_status st;
    *out = NULL;
    st = pf__check_endpoints(g, start, goal);
    if (st) return st;
    d = calloc(1, sizeof(*d));
    if (!d) return PF_ENOMEM;
    set_base(d, g);
    d->bw = (d->w + (TILE_SIDE << BLOCK_SHIFT) - 1) / (TILE_SIDE << BLOCK_SHIFT);
    d->start = d->last = cell_of(d, start);
    d->goal = cell_of(d, goal);
    d->fresh = true;
    *out = d;
    return PF_OK;
}

void pf_dstar_destroy(pf_dstar *d) {
    if (!d) return;
    tiles_free(d);
    free(d->q);
    free(d->o);
    free(d->path);
    free(d);
}

/* Whether the goal is certainly unreachable, known from the base grid's
 * components and cut vertices without searching: the agent and the goal
 * lie in different components of the base, or some cell the overlay blocks
 * separates them there on its own. Both only hold for the effective map
 * when the overlay adds nothing to the base: a private change that opens a
 * cell or a wall edge the base has closed could reconnect them, so any
 * such entry turns the test off (a cost change between nonzero costs
 * moves no edge). False means "search", not "reachable".
 *
 * Why: blocking a cell on the path of a perfect maze (a tree) always
 * disconnects, and D* Lite then raises every vertex it had reached behind
 * the cut, more work than a fresh A* exhausting the agent's side. Answered
 * here, the repair waits in the open list: the search state stays
 * consistent (a plan may always come later), and when a later change
 * reopens the cell most of that work cancels out. O(overlay entries). */
static bool cut_off(const pf_dstar *d) {
    const pf_grid *g = d->base;
    bool sep = !pf_cuts_connected(d->cuts, d->start, d->goal);
    for (uint32_t i = 0; d->ocount && i < d->ocap; i++) {
        const ov *o = &d->o[i];
        if (o->cell == EMPTY_CELL) continue;
        if (g->walls && (o->wmask & ~o->wval & g->walls[o->cell])) return false;
        if (!(o->flags & OV_COST)) continue;
        if (o->cost && !g->cost[o->cell]) return false;
        if (!o->cost && !sep) sep = pf_cuts_separates(d->cuts, o->cell, d->start, d->goal);
    }
    return sep;
}

void pf_dstar_set_cuts(pf_dstar *d, const pf_cuts *cuts) { d->cuts = cuts; }

pf_status pf_dstar_plan(pf_dstar *d, uint64_t max_expanded, pf_result *out) {
    pf_status st;
    memset(out, 0, sizeof(*out));
    out->algorithm = PF_ALGO_DSTAR;
    d->expanded = d->generated = 0;
    if (eff_cost(d, d->start) == 0 || eff_cost(d, d->goal) == 0) return out->status = PF_EBLOCKED;
    if (d->start == d->goal) {
        if (reserve_path(d, 1)) return out->status = PF_ENOMEM;
        d->path[0].x = d->start % d->w;
        d->path[0].y = d->start / d->w;
        out->path = d->path;
        out->path_len = 1;
        return out->status = PF_OK;
    }
    if (!d->fresh) sync_start(d);
    /* Only when a search would run: a settled plan answers from g anyway,
     * and cut_off scans the overlay. */
    if (d->cuts && (d->fresh || !search_done(d)) && cut_off(d)) return out->status = PF_NO_PATH;
    if (d->fresh) {
        st = initialise(d);
        if (st) return out->status = st;
    }
    st = compute_shortest_path(d, max_expanded);
    out->expanded = d->expanded;
    out->generated = d->generated;
    if (st) return out->status = st;
    trim_slack(d);
    if (g_of(d, cell_x(d, d->start), cell_y(d, d->start)) == DIST_INF)
        return out->status = PF_NO_PATH;
    st = extract_path(d, out);
    if (st == PF_EINVAL) d->fresh = true; /* a broken invariant: start over next time */
    if (st) {
        out->path = NULL;
        out->path_len = 0;
        out->cost = 0.0;
    }
    return out->status = st;
}

pf_status pf_dstar_move(pf_dstar *d, pf_point p) {
    pf_status st = check_cell(d, p);
    if (st) return st;
    d->start = cell_of(d, p);
    return PF_OK;
}

pf_status pf_dstar_set_goal(pf_dstar *d, pf_point goal) {
    pf_status st = check_cell(d, goal);
    if (st) return st;
    if (cell_of(d, goal) == d->goal) return PF_OK;
    d->goal = cell_of(d, goal);
    d->fresh = true;
    return PF_OK;
}

/* Recomputes rhs of every vertex in the 3x3 block of (x, y). */
static pf_status refresh_block(pf_dstar *d, int32_t x, int32_t y) {
    if (reserve(d, 4, 16)) return PF_ENOMEM;
    for (int32_t yy = y - 1; yy <= y + 1; yy++)
        for (int32_t xx = x - 1; xx <= x + 1; xx++)
            if (in_bounds(d, xx, yy)) refresh_vertex(d, xx, yy);
    return PF_OK;
}

/* A private cost lower than the heuristic's scale invalidates the keys. */
static void note_overlay_cost(pf_dstar *d, uint8_t cost) {
    if (cost == 0) return;
    if (!d->ov_min || cost < d->ov_min) d->ov_min = cost;
    if (cost < d->hscale) d->fresh = true;
}

pf_status pf_dstar_set_cost(pf_dstar *d, pf_point p, uint8_t cost) {
    pf_status st;
    if (!in_bounds(d, p.x, p.y)) return PF_ERANGE;
    int32_t cell = cell_of(d, p);
    st = ov_reserve(d, 9);
    if (st) return st;
    if (!d->fresh && (reserve(d, 4, 16))) return PF_ENOMEM;
    ov_taint_block(d, p.x, p.y);
    ov *o = ov_find(d, cell);
    bool same = (o->flags & OV_COST) && o->cost == cost;
    o->flags |= OV_COST;
    o->cost = cost;
    if (same) return PF_OK;
    ov_refresh_block(d, p.x, p.y);
    note_overlay_cost(d, cost);
    if (d->fresh) return PF_OK;
    sync_start(d);
    /* Room was reserved above, so this cannot fail. */
    return refresh_block(d, p.x, p.y);
}

pf_status pf_dstar_set_wall(pf_dstar *d, pf_point p, int dir, bool blocked) {
    pf_status st;
    static const int opposite[4] = {PF_DIR_W, PF_DIR_E, PF_DIR_N, PF_DIR_S};
    if (dir < 0 || dir > 3) return PF_EINVAL;
    pf_point q = {p.x + pf_dir_dx[dir], p.y + pf_dir_dy[dir]};
    if (!in_bounds(d, p.x, p.y) || !in_bounds(d, q.x, q.y)) return PF_ERANGE;
    st = ov_reserve(d, 18);
    if (st) return st;
    if (!d->fresh && (reserve(d, 8, 32))) return PF_ENOMEM;
    ov_taint_block(d, p.x, p.y);
    ov_taint_block(d, q.x, q.y);
    ov *a = ov_find(d, cell_of(d, p)), *b = ov_find(d, cell_of(d, q));
    uint8_t bit = (uint8_t)(1u << dir), obit = (uint8_t)(1u << opposite[dir]);
    a->wmask |= bit;
    b->wmask |= obit;
    if (blocked) {
        a->wval |= bit;
        b->wval |= obit;
    } else {
        a->wval &= (uint8_t)~bit;
        b->wval &= (uint8_t)~obit;
    }
    ov_refresh_block(d, p.x, p.y);
    ov_refresh_block(d, q.x, q.y);
    if (d->fresh) return PF_OK;
    sync_start(d);
    st = refresh_block(d, p.x, p.y);
    if (!st) st = refresh_block(d, q.x, q.y);
    if (st) d->fresh = true;
    return st;
}

pf_status pf_dstar_rebase(pf_dstar *d, const pf_grid *g, const pf_point *changed, size_t n) {
    pf_status st = PF_OK;
    if (g->w != d->w || g->h != d->h) return PF_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!in_bounds(d, changed[i].x, changed[i].y)) return PF_ERANGE;
    bool same_rules = g->connectivity == d->conn && g->corner_cutting == d->cut;
    if (!d->fresh) sync_start(d);
    set_base(d, g);
    d->cuts = NULL; /* they describe the old base */
    if (!same_rules) {
        /* Every cached mask and every key is stale: start over. */
        for (uint32_t i = 0; i < d->ocap; i++)
            if (d->o[i].cell != EMPTY_CELL)
                d->o[i].moves = compute_moves(d, d->o[i].cell % d->w, d->o[i].cell / d->w);
        d->fresh = true;
        return PF_OK;
    }
    /* First bring every cached mask in line with the new base, then touch
     * the vertices: a vertex's rhs reads the masks of its own block. */
    for (size_t i = 0; i < n; i++)
        if (d->ocount) ov_refresh_block(d, changed[i].x, changed[i].y);
    if (pf_grid_min_cost(g) < d->hscale) d->fresh = true;
    if (d->fresh) return PF_OK;
    for (size_t i = 0; i < n && !st; i++) st = refresh_block(d, changed[i].x, changed[i].y);
    if (st) d->fresh = true; /* out of memory half way: search anew next time */
    return st;
}

pf_point pf_dstar_position(const pf_dstar *d) {
    pf_point p = {d->start % d->w, d->start / d->w};
    return p;
}

pf_point pf_dstar_goal(const pf_dstar *d) {
    pf_point p = {d->goal % d->w, d->goal / d->w};
    return p;
}

const pf_grid *pf_dstar_grid(const pf_dstar *d) { return d->base; }

size_t pf_dstar_memory(const pf_dstar *d) {
    return sizeof(*d) + (size_t)d->npool * POOL_CHUNK * sizeof(uint32_t) +
           (size_t)d->pool_cap * sizeof(uint32_t *) + (size_t)d->thcap * sizeof(tent) +
           (size_t)d->blkcap * sizeof(tblock) + (size_t)d->wcap * sizeof(dist) +
           (size_t)d->qcap * sizeof(qitem) + (size_t)d->ocap * sizeof(ov) +
           d->path_cap * sizeof(pf_point);
}
