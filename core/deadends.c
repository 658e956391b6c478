/* deadends.c -- the block data of deadends.h, from cuts.c's DFS, and the
 * per-query walk. */
#include "deadends.h"

#include <stdlib.h>

#include "cuts.h"

pf_status pf_deadends_build(const pf_grid *g, double min_dead, pf_build_stop *stop,
                            pf_deadends **out) {
    pf_cuts *k = NULL;
    pf_deadends *d;
    int32_t w = pf_grid_width(g), n = w * pf_grid_height(g), walkable = 0, largest = 0;
    pf_status st;
    *out = NULL;
    for (int32_t v = 0; v < n; v++) {
        if ((v & 4095) == 0 && pf_build_tick(stop, 4096)) return PF_ECANCELED;
        if (pf_grid_is_walkable(g, (pf_point){v % w, v / w})) walkable++;
    }
    if (walkable < 2) return PF_OK;
    if ((st = pf_cuts_build(g, stop, &k)) != PF_OK) return st;
    d = calloc(1, sizeof(*d));
    st = PF_ENOMEM;
    if (!d || !(d->c = malloc((size_t)n * 3 * sizeof(uint32_t))) ||
        !(d->b = malloc((size_t)walkable * 3 * sizeof(uint32_t))) ||
        (st = pf__cuts_block_intervals(k, stop, d->b, d->c, &d->nb, &largest)) != PF_OK) {
        pf_cuts_destroy(k);
        pf_deadends_destroy(d);
        return st;
    }
    pf_cuts_destroy(k);
    d->n = n;
    d->dead = 1.0 - (double)largest / (double)walkable;
    if (d->dead < min_dead) {
        pf_deadends_destroy(d);
        return PF_OK;
    }
    *out = d;
    return PF_OK;
}

void pf_deadends_destroy(pf_deadends *d) {
    if (!d) return;
    free(d->c);
    free(d->b);
    free(d);
}

size_t pf_deadends_memory(const pf_deadends *d) {
    return sizeof(*d) + 3 * ((size_t)d->n + (size_t)d->nb) * sizeof(uint32_t);
}

bool pf_deadends_begin(const pf_deadends *d, int32_t s, int32_t g, pf_deadends_query *q) {
    uint32_t t;
    if (s < 0 || g < 0 || s >= d->n || g >= d->n) return false;
    q->ts = d->c[3 * (size_t)s + 2];
    q->tg = d->c[3 * (size_t)g + 2];
    if (q->ts == UINT32_MAX || q->tg == UINT32_MAX) return false;
    /* Up the blocks holding s to the first that holds g. */
    for (t = q->ts;;) {
        const uint32_t *e = d->b + 3 * (size_t)t;
        if (q->tg - e[0] <= e[1]) {
            q->lca_lo = e[0];
            q->lca_top = e[2];
            return true;
        }
        if (e[2] == UINT32_MAX) return false; /* the root's tree lacks g */
        t = e[2];
    }
}
