/* dial.c -- the bucket-queue Dijkstra of dial_internal.h. */
#include "dial_internal.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t opposite8[PF_DIR_COUNT] = {PF_DIR_W,  PF_DIR_E,  PF_DIR_N,  PF_DIR_S,
                                                PF_DIR_NW, PF_DIR_NE, PF_DIR_SW, PF_DIR_SE};

static void dial_free_buffers(pf__dial *d) {
    free(d->own);
    free(d->cell);
    free(d->target);
    d->own = NULL;
    d->cell = NULL;
    d->target = NULL;
    d->cap = 0;
}

static void dial_free(void *p) {
    pf__dial *d = p;
    if (!d) return;
    dial_free_buffers(d);
    for (int b = 0; b < PF__DIAL_BUCKETS; b++) free(d->bucket[b].cells);
    free(d);
}

static size_t dial_memory(const void *p) {
    const pf__dial *d = p;
    size_t n = sizeof(*d) + d->cap * (2 + sizeof(pf__dial_cell) + 1);
    for (int b = 0; b < PF__DIAL_BUCKETS; b++) n += d->bucket[b].cap * sizeof(int32_t);
    return n;
}

pf_status pf__dial_get(pf_search_ctx *ctx, pf__dial **out) {
    pf__dial *d = ctx->ext[PF__EXT_DIAL];
    if (!d) {
        d = calloc(1, sizeof(*d));
        if (!d) return PF_ENOMEM;
        ctx->ext[PF__EXT_DIAL] = d;
        ctx->ext_free[PF__EXT_DIAL] = dial_free;
        ctx->ext_memory[PF__EXT_DIAL] = dial_memory;
    }
    *out = d;
    return PF_OK;
}

static pf_status dial_reserve(pf__dial *d, size_t cells) {
    if (cells <= d->cap) return PF_OK;
    dial_free_buffers(d);
    d->own = malloc(2 * cells);
    d->cell = calloc(cells, sizeof(*d->cell)); /* stamps 0: unseen */
    d->target = calloc(cells, 1);
    if (!d->own || !d->cell || !d->target) {
        dial_free_buffers(d);
        return PF_ENOMEM;
    }
    d->cap = cells;
    d->gen = 0;
    return PF_OK;
}

pf_status pf__dial_load(pf__dial *d, const pf_grid *g, int32_t x0, int32_t y0, int32_t w,
                        int32_t h) {
    pf_status st;
    bool whole = w == 0 || (x0 == 0 && y0 == 0 && w == g->w && h == g->h);
    if (whole) {
        x0 = y0 = 0;
        w = g->w;
        h = g->h;
    }
    d->cells = (size_t)w * (size_t)h;
    if ((st = dial_reserve(d, d->cells))) return st;
    d->x0 = x0;
    d->y0 = y0;
    d->w = w;
    d->h = h;
    if (whole) {
        int lo = 0, hi = 0;
        for (int c = 1; c < 256; c++)
            if (g->cost_hist[c]) {
                if (!lo) lo = c;
                hi = c;
            }
        d->cost = g->cost;
        d->moves = g->moves;
        d->cmin = lo ? lo : 1;
        d->cmax = hi ? hi : 1;
        return PF_OK;
    }
    {
        uint8_t *lc = d->own, *lm = d->own + d->cells;
        int lo = 255, hi = 1;
        bool any = false;
        for (int32_t y = 0; y < h; y++) {
            memcpy(lc + (size_t)y * w, g->cost + (size_t)(y0 + y) * g->w + x0, (size_t)w);
            memcpy(lm + (size_t)y * w, g->moves + (size_t)(y0 + y) * g->w + x0, (size_t)w);
        }
        for (size_t i = 0; i < d->cells; i++)
            if (lc[i]) {
                any = true;
                lo = lc[i] < lo ? lc[i] : lo;
                hi = lc[i] > hi ? lc[i] : hi;
            }
        /* Moves that leave the box: only the cells on its edge have any. */
        for (int32_t y = 0; y < h; y++)
            for (int32_t x = 0; x < w; x += (y == 0 || y == h - 1) ? 1 : (w > 1 ? w - 1 : 1)) {
                uint8_t *m = lm + (size_t)y * w + x;
                for (int dd = 0; dd < PF_DIR_COUNT; dd++) {
                    int32_t nx = x + pf_dir_dx[dd], ny = y + pf_dir_dy[dd];
                    if (nx < 0 || ny < 0 || nx >= w || ny >= h) *m &= (uint8_t) ~(1u << dd);
                }
            }
        d->cost = lc;
        d->moves = lm;
        d->cmin = any ? lo : 1;
        d->cmax = any ? hi : 1;
    }
    return PF_OK;
}

/* Appends cell li to bucket b. false when out of memory. */
static inline bool bucket_push(pf__dial *d, int32_t b, int32_t li) {
    pf__dial_bucket *k = &d->bucket[b];
    if (k->len == k->cap) {
        size_t nc = k->cap ? 2 * k->cap : 1024;
        int32_t *c = realloc(k->cells, nc * sizeof(*c));
        if (!c) return false;
        k->cells = c;
        k->cap = nc;
    }
    k->cells[k->len++] = li;
    return true;
}

/* The loop; `uniform` and `reverse` are constants at each call, so each
 * variant compiles to its own loop. It goes on from the state kept in d
 * (the current bucket, the entries queued, the targets still waited for),
 * and leaves it there when it pauses. */
static inline pf_status dial_loop(pf__dial *d, const bool uniform, const bool reverse,
                                  bool have_targets, pf_stop_fn stop, void *stop_ud,
                                  pf_stop_fn pause, void *pause_ud, uint64_t max_expanded) {
    const uint8_t *cost = d->cost, *moves = d->moves;
    const uint32_t gen = d->gen;
    pf__dial_cell *cell = d->cell;
    int32_t off[PF_DIR_COUNT], nb, mask;
    int64_t cur = d->cur; /* absolute bucket: distances reach 16M cells x 255 x sqrt 2 */
    size_t queued = d->queued, waiting = d->waiting;
    double len[PF_DIR_COUNT], stepc[PF_DIR_COUNT], inv_width;
    pf_status st = PF_OK;

    for (int k = 0; k < PF_DIR_COUNT; k++) {
        off[k] = pf_dir_dx[k] + pf_dir_dy[k] * d->w;
        len[k] = pf__dir_len(k);
        stepc[k] = d->cmin * len[k];
    }
    /* Every step costs at least cmin and at most cmax * sqrt 2, so live
     * tentative distances span fewer than nb buckets of width cmin. */
    inv_width = 1.0 / (double)d->cmin;
    nb = (int32_t)(d->cmax * PF_SQRT2 / (double)d->cmin) + 2;
    for (mask = 1; mask < nb; mask *= 2) continue;
    mask--;
    d->paused = false;
    /* queued counts entries, stale ones included. */
    while (queued > 0) {
        pf__dial_bucket *bk;
        int32_t li;
        unsigned m;
        double du, cu;
        while (d->bucket[cur & mask].len == 0) cur++;
        bk = &d->bucket[cur & mask];
        li = bk->cells[bk->len - 1];
        if (cell[li].settled) { /* a stale entry: settled from a lower one */
            bk->len--;
            queued--;
            continue;
        }
        if (max_expanded && d->expanded >= max_expanded) {
            st = PF_ELIMIT;
            break;
        }
        if (stop && (d->expanded & 255u) == 0 && stop(stop_ud)) {
            st = PF_ECANCELED;
            break;
        }
        bk->len--;
        queued--;
        cell[li].settled = 1;
        d->expanded++;
        if (have_targets && d->target[li] && --waiting == 0) break;
        m = moves[li];
        du = cell[li].dist;
        cu = cost[li];
        for (; m; m &= m - 1) {
            int k = __builtin_ctz(m);
            int32_t n = li + off[k];
            pf__dial_cell *c = &cell[n];
            int64_t b;
            double nd = du + (uniform ? stepc[k] : (reverse ? cu : cost[n]) * len[k]);
            if (c->stamp == gen) {
                /* Settled cells lie in an earlier bucket or in this one,
                 * below du + cmin <= nd, but rounding is not trusted. */
                if (c->settled || !(nd < c->dist)) continue;
            } else {
                c->stamp = gen;
                c->settled = 0;
            }
            c->dist = nd;
            c->dir = opposite8[k];
            b = (int64_t)(nd * inv_width);
            if (b < cur) b = cur; /* rounding at a bucket edge */
            if (!bucket_push(d, (int32_t)(b & mask), n)) {
                st = PF_ENOMEM;
                goto out;
            }
            queued++;
        }
        /* Between two cells, every 256: the caller may take its worker
         * back; the state is whole (this cell settled, its neighbours
         * relaxed). */
        if (pause && (d->expanded & 255u) == 0 && queued > 0 && pause(pause_ud)) {
            d->paused = true;
            break;
        }
    }
out:
    d->cur = cur;
    d->queued = queued;
    d->waiting = waiting;
    return st;
}

/* Resets the run state and queues the sources. */
static pf_status dial_start(pf__dial *d, const int32_t *src, size_t nsrc, bool reverse) {
    if (++d->gen == 0) {
        for (size_t i = 0; i < d->cap; i++) d->cell[i].stamp = 0;
        d->gen = 1;
    }
    d->expanded = 0;
    d->reverse = reverse;
    d->cur = 0;
    d->queued = 0;
    d->waiting = 0;
    d->paused = false;
    for (int32_t b = 0; b < PF__DIAL_BUCKETS; b++) d->bucket[b].len = 0;
    for (size_t i = 0; i < nsrc; i++) {
        pf__dial_cell *c = &d->cell[src[i]];
        if (c->stamp == d->gen) continue; /* listed twice */
        c->stamp = d->gen;
        c->dist = 0.0;
        c->dir = PF__DIAL_NO_DIR;
        c->settled = 0;
        if (!bucket_push(d, 0, src[i])) return PF_ENOMEM;
        d->queued++;
    }
    return PF_OK;
}

static pf_status dial_go(pf__dial *d, bool have_targets, pf_stop_fn stop, void *stop_ud,
                         pf_stop_fn pause, void *pause_ud, uint64_t max_expanded) {
    if (d->cmin == d->cmax)
        return dial_loop(d, true, false, have_targets, stop, stop_ud, pause, pause_ud,
                         max_expanded);
    if (d->reverse)
        return dial_loop(d, false, true, have_targets, stop, stop_ud, pause, pause_ud,
                         max_expanded);
    return dial_loop(d, false, false, have_targets, stop, stop_ud, pause, pause_ud, max_expanded);
}

pf_status pf__dial_run(pf__dial *d, const int32_t *src, size_t nsrc, bool reverse,
                       const int32_t *targets, size_t ntargets, pf_stop_fn stop, void *stop_ud,
                       uint64_t max_expanded) {
    pf_status st = dial_start(d, src, nsrc, reverse);
    if (st) return st;
    for (size_t i = 0; i < ntargets; i++) {
        d->waiting += !d->target[targets[i]];
        d->target[targets[i]] = 1;
    }
    st = dial_go(d, ntargets > 0, stop, stop_ud, NULL, NULL, max_expanded);
    for (size_t i = 0; i < ntargets; i++) d->target[targets[i]] = 0;
    return st;
}

pf_status pf__dial_start(pf__dial *d, const int32_t *src, size_t nsrc, bool reverse) {
    return dial_start(d, src, nsrc, reverse);
}

pf_status pf__dial_continue(pf__dial *d, pf_stop_fn stop, void *stop_ud, pf_stop_fn pause,
                            void *pause_ud, uint64_t max_expanded, bool *done) {
    pf_status st = dial_go(d, false, stop, stop_ud, pause, pause_ud, max_expanded);
    *done = st == PF_OK && !d->paused;
    return st;
}

pf__dial *pf__dial_detach(pf_search_ctx *ctx) {
    pf__dial *d = ctx->ext[PF__EXT_DIAL];
    ctx->ext[PF__EXT_DIAL] = NULL;
    return d;
}

void pf__dial_attach(pf_search_ctx *ctx, pf__dial *d) {
    if (!d) return;
    if (ctx->ext[PF__EXT_DIAL]) { /* the worker made another meanwhile: one is enough */
        dial_free(d);
        return;
    }
    ctx->ext[PF__EXT_DIAL] = d;
    ctx->ext_free[PF__EXT_DIAL] = dial_free;
    ctx->ext_memory[PF__EXT_DIAL] = dial_memory;
}

size_t pf__dial_memory(const pf__dial *d) { return d ? dial_memory(d) : 0; }

void pf__dial_free(pf__dial *d) { dial_free(d); }
