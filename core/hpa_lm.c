/* hpa_lm.c -- the map's landmark distances at the abstract nodes, in node
 * order, for the abstract search's heuristic (hpa.h, pf_hpa_lm). */
#include <stdlib.h>
#include <string.h>

#include "hpa_internal.h"
#include "landmarks.h"

size_t pf_hpa_lm_size(int64_t nodes, int k) {
    return sizeof(pf_hpa_lm) + (size_t)nodes * 2 * (size_t)k * sizeof(uint16_t);
}

pf_status pf_hpa_lm_build(const pf_hpa *h, const pf_landmarks *lm, pf_hpa_lm **out) {
    const size_t row = 2 * (size_t)lm->k;
    pf_hpa_lm *r;

    *out = NULL;
    if (lm->w != h->w || lm->h != h->h) return PF_EINVAL;
    r = malloc(sizeof(*r));
    if (!r) return PF_ENOMEM;
    /* No nodes (one cluster): no rows, and nothing held but the struct. */
    r->d = h->nnodes > 0 ? malloc((size_t)h->nnodes * row * sizeof(*r->d)) : NULL;
    if (h->nnodes > 0 && !r->d) {
        free(r);
        return PF_ENOMEM;
    }
    r->h = h;
    r->lm = lm;
    r->k = lm->k;
    r->nnodes = h->nnodes;
    for (int32_t v = 0; v < h->nnodes; v++) {
        pf_point p = h->node_pt[v];
        memcpy(r->d + (size_t)v * row, lm->d + ((size_t)p.y * (size_t)h->w + (size_t)p.x) * row,
               row * sizeof(*r->d));
    }
    *out = r;
    return PF_OK;
}

void pf_hpa_lm_destroy(pf_hpa_lm *r) {
    if (!r) return;
    free(r->d);
    free(r);
}

size_t pf_hpa_lm_memory(const pf_hpa_lm *r) { return r ? pf_hpa_lm_size(r->nnodes, r->k) : 0; }
