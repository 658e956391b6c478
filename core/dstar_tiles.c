/* dstar_tiles.c -- the slow half of the vertex store (dstar_tiles.h, which
 * describes the layout): allocating and widening tiles, growing the pool,
 * the blocks, the block hash and the wide g table, and freeing them. */
#include <stdlib.h>
#include <string.h>

#include "dstar_tiles.h"

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
 * tile, for a cell (x, y) on the map that slot_find does not find, and
 * returns the cell's slot. Room must have been reserved with store_reserve;
 * never fails. Slots of the widened tile's cells change (their heap items
 * are updated), and cached `near` tiles are stale afterwards. */
slot_t pf__dstar_slot_make(pf_dstar *d, int32_t x, int32_t y) {
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

static pf_status th_alloc(tent **out, uint32_t cap) {
    tent *t = malloc((size_t)cap * sizeof(*t));
    if (!t) return PF_ENOMEM;
    for (uint32_t i = 0; i < cap; i++) t[i].key = EMPTY_CELL;
    *out = t;
    return PF_OK;
}

/* Makes room for n runs of up to RUN_MAX words (see pool_chunks). */
static pf_status pool_reserve(pf_dstar *d, uint32_t n) {
    uint64_t chunks = pool_chunks(d, n);
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

/* store_reserve's slow path: grows the pool, the blocks, the block hash
 * and the wide table until n more slot_get calls and k more cell_store_g
 * calls fit (see store_reserve). PF_ENOMEM leaves every vertex as it was
 * (some tables may have grown), else PF_OK. */
pf_status pf__dstar_tiles_grow(pf_dstar *d, uint32_t n, uint32_t k) {
    d->bw = (d->w + (TILE_SIDE << BLOCK_SHIFT) - 1) / (TILE_SIDE << BLOCK_SHIFT);
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
    return wide_reserve(d, k);
}

/* Frees every tile and table of the store: every cell is untouched again
 * (g = rhs = infinity) and the store holds no memory until the next
 * store_reserve. The open list must be emptied with it (its items hold
 * slots). Never fails. */
void pf__dstar_tiles_free(pf_dstar *d) {
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

/* The bytes the store holds: pool chunks and their index, blocks, block
 * hash and wide table. */
size_t pf__dstar_tiles_memory(const pf_dstar *d) {
    return (size_t)d->npool * POOL_CHUNK * sizeof(uint32_t) +
           (size_t)d->pool_cap * sizeof(uint32_t *) + (size_t)d->thcap * sizeof(tent) +
           (size_t)d->blkcap * sizeof(tblock) + (size_t)d->wcap * sizeof(dist);
}
