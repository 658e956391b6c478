/* dstar_tiles.h -- the vertex store of a D* Lite session: g, or the
 * open-list position, of every cell the search touched, in 8x8 tiles of a
 * word pool, found through blocks of tiles and a small hash table of
 * blocks. The fast half (lookups, loads and stores, the room test) is
 * inlined into dstar_lite.c's search loop from here; allocation, widening
 * and growth are in dstar_tiles.c.
 *
 * What dstar_lite.c uses of a store:
 * - slot_find(d, x, y): the slot of a cell, NO_SLOT when the search never
 *   touched it; slot_get: the same, storing the cell when it is missing;
 * - near_of / near_find / near_get: the same for the neighbours of one cell,
 *   through a cache of that cell's tile;
 * - cell_load(d, sl): g, or the tagged open-list position (tag_pos);
 *   cell_store_g and cell_store_pos write them;
 * - store_reserve(d, n, k): room for n slot_get and k cell_store_g calls,
 *   which then cannot fail; store_free(d): every vertex untouched again,
 *   memory returned; store_memory(d): bytes held; store_bound(d): more than
 *   the vertices the store holds (a bound on a path's length);
 * - SEARCH_CLONES: the attribute of the functions that run the search.
 * Slots stay valid until slot_get or near_get allocates or widens a tile;
 * the open list's items hold slots, and the store keeps them current.
 */
#ifndef PF_DSTAR_TILES_H
#define PF_DSTAR_TILES_H

#include <string.h>

#include "dstar_internal.h"

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
/* A slot (slot_t) is the run index * TILE_CELLS + the cell's rank in its
 * tile. */

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

/* Tiles are found in two steps: a block of 8x8 tiles (64x64 cells) through
 * a small hash table keyed by block index, then the tile's number in the
 * block. A block costs 4 bytes a tile of its area, 16 KiB for a whole
 * 512x512 map where a hash entry per tile cost 16-32 bytes a tile, and
 * only blocks the search touched exist. */
#define BLOCK_SHIFT 3
#define BLOCK_SIDE (1 << BLOCK_SHIFT)
#define NO_TILE UINT32_MAX
struct tblock {
    uint32_t tile[BLOCK_SIDE * BLOCK_SIDE]; /* the run of each tile, NO_TILE when not allocated */
};

/* A block hash entry: block index -> block number. */
struct tent {
    int32_t key; /* EMPTY_CELL for a free entry */
    uint32_t block;
};

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

static inline void cell_store_pos(pf_dstar *d, slot_t sl, uint32_t pos) {
    uint32_t *p = cell_ptr(d, sl);
    if (raw_is_wide(*p)) wide_release(d, *p & RAW_INDEX);
    *p = RAW_QUEUED | pos;
}

/* Stores g (the vertex is off the open list). A g outside the tile's window
 * takes a wide slot; room must have been reserved with store_reserve. */
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
 * Valid until a tile is allocated or widened (pf__dstar_slot_make). */
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

/* The slow half (dstar_tiles.c). */
slot_t pf__dstar_slot_make(pf_dstar *d, int32_t x, int32_t y);
pf_status pf__dstar_tiles_grow(pf_dstar *d, uint32_t n, uint32_t k);
void pf__dstar_tiles_free(pf_dstar *d);
size_t pf__dstar_tiles_memory(const pf_dstar *d);

/* The slot of cell (x, y), its tile allocated or widened when it does not
 * store the cell. Room must have been reserved with store_reserve. */
static inline slot_t slot_get(pf_dstar *d, int32_t x, int32_t y) {
    slot_t sl = slot_find(d, x, y);
    return sl != NO_SLOT ? sl : pf__dstar_slot_make(d, x, y);
}

/* slot_get for a cell (x, y) on the map. */
static inline slot_t near_get(pf_dstar *d, near *h, int32_t x, int32_t y) {
    slot_t sl = near_find(d, h, x, y);
    if (sl != NO_SLOT) return sl;
    sl = pf__dstar_slot_make(d, x, y);
    *h = near_of(d, h->x, h->y); /* the tile may have moved */
    return sl;
}

/* The chunks the pool needs to take n more runs of up to RUN_MAX words:
 * run_take takes a run from ptop on, or from the next chunk when it would
 * straddle, and the end of n runs of RUN_MAX bounds that of any n shorter
 * ones: those fill what is left of ptop's chunk, then whole chunks of
 * `per`. */
static inline uint64_t pool_chunks(const pf_dstar *d, uint32_t n) {
    const uint32_t per = POOL_CHUNK / RUN_MAX;
    uint32_t fit = (POOL_CHUNK - (d->ptop & (POOL_CHUNK - 1))) / RUN_MAX;
    uint64_t chunks = (uint64_t)(d->ptop >> POOL_SHIFT) + 1;
    if (fit < n) chunks += (n - fit + per - 1) / per;
    return chunks;
}

/* Makes room for n more slot_get calls (pool words, blocks and block hash
 * entries: each call may allocate a tile or widen one, so n tiles take 2n
 * runs) and k more cell_store_g calls (wide cells), so that none of them
 * can fail in between. The test is inlined; the growth is not. */
static inline pf_status store_reserve(pf_dstar *d, uint32_t n, uint32_t k) {
    if (pool_chunks(d, 2 * n) <= d->npool && d->nblk + n <= d->blkcap &&
        (uint64_t)(d->nblk + n) * 2 <= d->thcap && d->nwfree >= k)
        return PF_OK;
    return pf__dstar_tiles_grow(d, n, k);
}

static inline void store_free(pf_dstar *d) { pf__dstar_tiles_free(d); }
static inline size_t store_memory(const pf_dstar *d) { return pf__dstar_tiles_memory(d); }
static inline size_t store_bound(const pf_dstar *d) { return (size_t)d->ntiles * TILE_CELLS; }

#endif
