/* dstar_plain.c -- the reference vertex store of D* Lite sessions, and D*
 * Lite compiled over it.
 *
 * The simple equivalent of the tiles (dstar_tiles.h): one array of W x H
 * int64 values, cell i's at index i, holding g of a vertex off the open
 * list and the tagged position of its heap item on it (tag_pos), DIST_INF
 * for a cell never touched. No tiles, no bases, no wide table, no cached
 * neighbour tile, no popcount: a slot is the cell's index, and every store
 * operation is one array access. The array is allocated when the search
 * starts (store_reserve) and freed when it starts over (store_free).
 *
 * dstar_lite.c is included below, so the search over this store is the very
 * same code as over the tiles, and a session created with
 * pf_dstar_opts.plain_store answers every call exactly as a tiled one
 * would. The property test in tests/test_dstar.c runs every random case on
 * both and requires the same statuses, paths, costs and expansion counts.
 */
#include <stdlib.h>

#include "dstar_internal.h"

/* No popcount to pick an instruction for. */
#define SEARCH_CLONES

static inline slot_t slot_find(const pf_dstar *d, int32_t x, int32_t y) {
    return (slot_t)y * d->w + x;
}

static inline slot_t slot_get(pf_dstar *d, int32_t x, int32_t y) { return slot_find(d, x, y); }

/* Nothing to cache about a cell's neighbourhood. */
typedef struct near {
    int32_t x, y;
} near;

static inline near near_of(const pf_dstar *d, int32_t x, int32_t y) {
    (void)d;
    near h = {x, y};
    return h;
}

static inline slot_t near_find(const pf_dstar *d, const near *h, int32_t x, int32_t y) {
    (void)h;
    return slot_find(d, x, y);
}

static inline slot_t near_get(pf_dstar *d, near *h, int32_t x, int32_t y) {
    (void)h;
    return slot_get(d, x, y);
}

static inline int64_t cell_load(const pf_dstar *d, slot_t sl) { return d->plain[sl]; }
static inline void cell_store_g(pf_dstar *d, slot_t sl, dist g) { d->plain[sl] = g; }

static inline void cell_store_pos(pf_dstar *d, slot_t sl, uint32_t pos) {
    d->plain[sl] = tag_pos(pos);
}

/* Every cell has its place once the array exists, so only the first call
 * after store_free allocates. */
static inline pf_status store_reserve(pf_dstar *d, uint32_t n, uint32_t k) {
    (void)n;
    (void)k;
    if (d->plain) return PF_OK;
    size_t cells = (size_t)d->w * (size_t)d->h, bytes;
    if (__builtin_mul_overflow(cells, sizeof(*d->plain), &bytes)) return PF_ENOMEM;
    d->plain = malloc(bytes);
    if (!d->plain) return PF_ENOMEM;
    for (size_t i = 0; i < cells; i++) d->plain[i] = DIST_INF;
    return PF_OK;
}

static void store_free(pf_dstar *d) {
    free(d->plain);
    d->plain = NULL;
}

static size_t store_memory(const pf_dstar *d) {
    return d->plain ? (size_t)d->w * (size_t)d->h * sizeof(*d->plain) : 0;
}

static inline size_t store_bound(const pf_dstar *d) { return (size_t)d->w * (size_t)d->h; }

#define PF__DSTAR_OPS pf__dstar_plain_ops
#include "dstar_lite.c"
