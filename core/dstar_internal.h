/* dstar_internal.h -- the layout of a pf_dstar, shared by the files of the
 * D* Lite module (dstar.h is its contract):
 *
 *   dstar.c           the public API: arguments, moves, goals, the session's
 *                     changes and rebases; it never reads a vertex
 *   dstar_lite.c      D* Lite itself (Koenig & Likhachev, "D* Lite", AAAI
 *                     2002, figure 4): keys, the open list, UpdateVertex,
 *                     ComputeShortestPath, the path read-out and the
 *                     cut-off test that answers without searching; and
 *                     the re-rooting of Moving Target D* Lite (Sun, Yeoh
 *                     & Koenig, AAMAS 2010) when the root's end moves
 *   dstar_tiles.h/.c  the vertex store: g or the open-list position of each
 *                     touched cell, in 8x8 tiles of a word pool
 *   dstar_plain.c     the reference vertex store, one plain array of W x H
 *                     vertices, with dstar_lite.c compiled over it again
 *   dstar_overlay.c   the overlay: the session's private changes, and the
 *                     effective map they make with the base grid
 *
 * D* Lite is written once, against the store interface that dstar_tiles.h
 * describes, and compiled once per store: dstar_lite.c on its own over the
 * tiles, and included by dstar_plain.c over the plain array. Each copy
 * exports one table of entry points (pf__dstar_ops), and a session calls
 * the one it was created with (pf_dstar_opts.plain_store), so the search
 * loop inlines its store and pays no dispatch. The plain store exists to be
 * the simple equivalent the tests hold the tiles against.
 *
 * Memory. Nothing per session is W x H (but on the plain store): vertices
 * live in tiles allocated on first touch (dstar_tiles.h), the open list
 * holds only the inconsistent vertices, and the overlay holds only the
 * private changes and their neighbours. The base grid is borrowed and
 * shared by every session.
 *
 * Two ends, a root and a tip. The search is rooted at one end of the path
 * (rhs(root) is fixed, every other rhs is the one-step lookahead) and
 * focused on the other, the tip: keys use h(tip, s), and a tip that moves
 * only raises km (D* Lite's agent moves). Classic D* Lite roots at the
 * goal and its tip is the agent. A chase moves the goal every frame, so a
 * session may instead root at the agent (Moving Target D* Lite's
 * orientation): the goal is then the tip and its moves only raise km,
 * while the agent, moving along its own path, re-roots the search, which
 * keeps the part of the tree still hanging from the new root (dstar_lite.c's
 * reroot). `fwd` says which: the search runs forward from the agent. The
 * root's end may move between plans; `root` is the cell the search data is
 * rooted at, and the next plan re-roots it to the end that moved.
 *
 * The static inline helpers below keep short names (ov_find, eff_cost,
 * heur): the search's inner loop calls them on every neighbour, and only
 * the dstar files include this header.
 */
#ifndef PF_DSTAR_INTERNAL_H
#define PF_DSTAR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dstar.h"
#include "grid_internal.h"

#define EMPTY_CELL (-1)

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
_Static_assert(UNIT_ORTH % 2 == 0 && UNIT_DIAG % 2 == 0, "tiles store g / 2 (see dstar_tiles.h)");
/* km grows with every move of the tip, and g values with every re-root (the
 * new root keeps its g, see dstar_lite.c's reroot); past this the session
 * searches anew rather than risk an overflow of k1 = g + h + km (never
 * reached in practice). */
#define KM_LIMIT ((dist)1 << 61)

/* A vertex's place in the vertex store (dstar_tiles.h), NO_SLOT for a cell
 * the store does not hold, which the search never touched (a store may
 * also hold untouched cells, with g = rhs = infinity). */
typedef int64_t slot_t;
#define NO_SLOT (-1)

/* A vertex off the open list keeps g in its slot, one on it the position of
 * its heap item; the store hands either back as one int64 (cell_load),
 * open-list position p as -(p + 1). */
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

/* The tile store's tables (dstar_tiles.h). */
typedef struct tblock tblock;
typedef struct tent tent;

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

/* A vertex the re-root reset (dstar_lite.c's reroot): its cell and the g it
 * had, which its children's rhs may have come from. */
typedef struct gone {
    int32_t cell;
    dist g;
} gone;

/* D* Lite over one vertex store (dstar_lite.c): what dstar.c calls. */
typedef struct pf__dstar_ops {
    /* pf_dstar_plan. */
    pf_status (*plan)(pf_dstar *d, const pf_plan_limits *lim, pf_result *out);
    /* Room for n more tiles and k more open-list items and stored g values,
     * taken before a change is recorded. */
    pf_status (*reserve)(pf_dstar *d, uint32_t n, uint32_t k);
    /* The edges leaving the cells of the 3x3 block of (x, y) changed. */
    pf_status (*refresh_block)(pf_dstar *d, int32_t x, int32_t y);
    /* Frees the vertex store (at pf_dstar_destroy). */
    void (*free_store)(pf_dstar *d);
    /* Bytes the vertex store holds. */
    size_t (*store_memory)(const pf_dstar *d);
} pf__dstar_ops;

extern const pf__dstar_ops pf__dstar_tiles_ops; /* dstar_lite.c over dstar_tiles.h */
extern const pf__dstar_ops pf__dstar_plain_ops; /* the same over dstar_plain.c */

struct pf_dstar {
    const pf__dstar_ops *ops; /* the search over this session's vertex store */
    const pf_grid *base;
    int32_t w, h;
    int conn;
    bool cut;
    int32_t off[PF_DIR_COUNT];
    dist unit[PF_DIR_COUNT]; /* UNIT_ORTH or UNIT_DIAG */

    int32_t start, goal; /* cell indices: the agent and its goal */
    int32_t root;        /* the cell the search data is rooted at (see above) */
    int32_t last;        /* s_last: the tip's position when km was last raised */
    bool fwd;            /* rooted at the agent (MT-D* Lite), else at the goal */
    int root_opt;        /* pf_dstar_opts.root: PF_DSTAR_ROOT_* */
    bool reroot_always;  /* pf_dstar_opts.reroot_always */
    uint32_t goal_hist;  /* bit i: the goal moved before the i-th plan back */
    int32_t plan_goal;   /* the goal at the last plan */
    dist km;
    dist hscale;                /* heuristic scale: a lower bound of every effective cost */
    bool fresh;                 /* the next plan initialises the search first */
    const struct pf_cuts *cuts; /* the base grid's cut vertices, or NULL (dstar_lite.c's cut_off) */

    /* The vertex store (dstar_tiles.h). */
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
    /* The plain store instead (dstar_plain.c): cell_load's value of every
     * cell, NULL until the first plan. */
    int64_t *plain;

    /* The open list U (dstar_lite.c). */
    qitem *q;
    uint32_t qlen, qcap;

    /* The overlay (dstar_overlay.c). */
    ov *o;
    uint32_t ocap, ocount;
    unsigned obits;
    uint8_t ov_min; /* cheapest nonzero overlay cost, 0 when none */

    pf_point *path;
    size_t path_cap;

    /* The vertices the last re-root reset (dstar_lite.c's reroot). */
    gone *gone;
    uint32_t ngone, gone_cap;

    uint64_t expanded, generated; /* work of the current plan call */
    uint64_t next_poll;           /* its expanded count at the next poll (plan_limits.h) */
    pf_dstar_plan_info info;      /* how the last plan went (pf_dstar_last_plan) */
};

/* Hashing: Fibonacci hashing of the cell index, linear probing. Nothing is
 * ever deleted, so probes stop at the first free slot. */
static inline uint32_t hash_slot(int32_t cell, unsigned bits) {
    return (uint32_t)((uint32_t)cell * 2654435769u) >> (32 - bits);
}

/* The smallest b with 2^b >= n. */
static inline unsigned log2u(uint32_t n) {
    unsigned b = 0;
    while ((1u << b) < n) b++;
    return b;
}

static inline bool key_less(dist a1, dist a2, dist b1, dist b2) {
    return a1 < b1 || (a1 == b1 && a2 < b2);
}

static inline int32_t cell_of(const pf_dstar *d, pf_point p) { return p.y * d->w + p.x; }
static inline int32_t cell_x(const pf_dstar *d, int32_t cell) { return cell % d->w; }
static inline int32_t cell_y(const pf_dstar *d, int32_t cell) { return cell / d->w; }

static inline bool in_bounds(const pf_dstar *d, int32_t x, int32_t y) {
    return x >= 0 && y >= 0 && x < d->w && y < d->h;
}

/* The effective map (dstar_overlay.c): the overlay's entry of a cell, and
 * its cost, move mask and walls, the overlay's where it has them, else the
 * base grid's. */

static inline ov *ov_find(const pf_dstar *d, int32_t cell) {
    uint32_t mask = d->ocap - 1, i;
    if (d->ocount == 0) return NULL;
    for (i = hash_slot(cell, d->obits);; i = (i + 1) & mask) {
        if (d->o[i].cell == cell) return &d->o[i];
        if (d->o[i].cell == EMPTY_CELL) return NULL;
    }
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

pf_status pf__dstar_ov_reserve(pf_dstar *d, uint32_t n);
void pf__dstar_ov_taint_block(pf_dstar *d, int32_t x, int32_t y);
void pf__dstar_ov_refresh_block(pf_dstar *d, int32_t x, int32_t y);
uint8_t pf__dstar_ov_moves(const pf_dstar *d, int32_t x, int32_t y);

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

/* The tip: the end of the path the search is focused on, the agent when
 * rooted at the goal and the goal when rooted at the agent. */
static inline int32_t tip_of(const pf_dstar *d) { return d->fwd ? d->goal : d->start; }

/* The end the search should be rooted at. */
static inline int32_t root_want(const pf_dstar *d) { return d->fwd ? d->start : d->goal; }

/* The tip moved since km was last raised: raise it by h(s_last, tip),
 * which bounds how much any h(tip, s) can have dropped. Called before
 * anything computes a key with the new position. */
static inline void sync_tip(pf_dstar *d) {
    int32_t t = tip_of(d);
    if (t == d->last) return;
    d->km += heur(d, d->last, t);
    d->last = t;
    if (d->km > KM_LIMIT) d->fresh = true;
}

#endif
