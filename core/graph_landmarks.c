/* graph_landmarks.c -- ALT's landmarks (graph.h; Goldberg and Harrelson
 * 2005): chosen by farthest-point selection on the base graph (every edge
 * and node enabled, the upload's costs) and each node's distance from and
 * to each of them, by a full Dijkstra a landmark and direction (the
 * backward ones over a reversed CSR made for the build and dropped). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

typedef struct lm_heap {
    double *key;
    uint32_t *v;
    size_t len;
} lm_heap;

static void lm_push(lm_heap *h, double k, uint32_t v) {
    size_t i = h->len++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (h->key[up] <= k) break;
        h->key[i] = h->key[up];
        h->v[i] = h->v[up];
        i = up;
    }
    h->key[i] = k;
    h->v[i] = v;
}

static void lm_pop(lm_heap *h, double *k, uint32_t *v) {
    double lk = h->key[--h->len];
    uint32_t lv = h->v[h->len];
    size_t i = 0, n = h->len;
    *k = h->key[0];
    *v = h->v[0];
    for (;;) {
        size_t l = 2 * i + 1, b = l;
        if (l >= n) break;
        if (l + 1 < n && h->key[l + 1] < h->key[l]) b = l + 1;
        if (lk <= h->key[b]) break;
        h->key[i] = h->key[b];
        h->v[i] = h->v[b];
        i = b;
    }
    if (n) {
        h->key[i] = lk;
        h->v[i] = lv;
    }
}

/* Dijkstra from src over the CSR (off, to, edge) at `cost`: d[v] (n), the
 * heap holds at most one entry an arc plus one (lazy deletion). */
static void sssp(uint32_t n, const uint32_t *off, const uint32_t *to, const uint32_t *edge,
                 const double *cost, uint32_t src, double *d, lm_heap *h) {
    for (uint32_t v = 0; v < n; v++) d[v] = INFINITY;
    h->len = 0;
    d[src] = 0;
    lm_push(h, 0, src);
    while (h->len) {
        double k;
        uint32_t v;
        lm_pop(h, &k, &v);
        if (k > d[v]) continue;
        for (uint32_t a = off[v]; a < off[v + 1]; a++) {
            double nd = k + cost[edge[a]];
            if (nd < d[to[a]]) {
                d[to[a]] = nd;
                lm_push(h, nd, to[a]);
            }
        }
    }
}

/* The reversed arcs of t: rev_to[a] is the arc's tail, listed by head. */
static pf_status reverse_csr(const pf__graph_topo *t, uint32_t **roff, uint32_t **rto,
                             uint32_t **redge) {
    uint32_t *fill = calloc((size_t)t->n + 1, sizeof(uint32_t));
    *roff = calloc((size_t)t->n + 1, sizeof(uint32_t));
    *rto = malloc(((size_t)t->narcs + 1) * sizeof(uint32_t));
    *redge = malloc(((size_t)t->narcs + 1) * sizeof(uint32_t));
    if (!fill || !*roff || !*rto || !*redge) {
        free(fill);
        return PF_ENOMEM;
    }
    for (uint32_t a = 0; a < t->narcs; a++) (*roff)[t->arc_to[a] + 1]++;
    for (uint32_t v = 0; v < t->n; v++) (*roff)[v + 1] += (*roff)[v];
    for (uint32_t v = 0; v < t->n; v++)
        for (uint32_t a = t->off[v]; a < t->off[v + 1]; a++) {
            uint32_t w = t->arc_to[a], r = (*roff)[w] + fill[w]++;
            (*rto)[r] = v;
            (*redge)[r] = t->arc_edge[a];
        }
    free(fill);
    return PF_OK;
}

pf_status pf__graph_landmarks_build(pf__graph_topo *t, const double *cost, uint32_t k) {
    const uint32_t n = t->n;
    double *d = NULL, *mind = NULL, maxd = 0;
    uint32_t *roff = NULL, *rto = NULL, *redge = NULL;
    lm_heap h = {NULL, NULL, 0};
    bool sym = true;
    pf_status st = PF_ENOMEM;
    if (k > PF_GRAPH_MAX_LANDMARKS) k = PF_GRAPH_MAX_LANDMARKS;
    if (k > n) k = n;
    if (k == 0) return PF_OK;
    for (uint32_t e = 0; e < t->m && sym; e++) sym = t->eboth[e] != 0;
    t->lm_node = malloc((size_t)k * sizeof(uint32_t));
    t->lm_from = malloc((size_t)n * k * sizeof(double));
    t->lm_to = sym ? t->lm_from : malloc((size_t)n * k * sizeof(double));
    t->lm_base = malloc(((size_t)t->m + 1) * sizeof(double));
    d = malloc((size_t)n * sizeof(double));
    mind = malloc((size_t)n * sizeof(double));
    h.key = malloc(((size_t)t->narcs + 1) * sizeof(double));
    h.v = malloc(((size_t)t->narcs + 1) * sizeof(uint32_t));
    if (!t->lm_node || !t->lm_from || !t->lm_to || !t->lm_base || !d || !mind || !h.key || !h.v)
        goto out;
    if (!sym && reverse_csr(t, &roff, &rto, &redge)) goto out;
    if (t->m) memcpy(t->lm_base, cost, (size_t)t->m * sizeof(double));
    /* The first landmark: the node farthest from node 0 (the first
     * unreachable one when some are); then each next one the node
     * farthest from the landmarks so far (a node none reaches first: a
     * component without a landmark yet). Ties: the lower index. */
    sssp(n, t->off, t->arc_to, t->arc_edge, cost, 0, mind, &h);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t best = 0;
        for (uint32_t v = 1; v < n; v++)
            if (mind[v] > mind[best]) best = v;
        t->lm_node[i] = best;
        sssp(n, t->off, t->arc_to, t->arc_edge, cost, best, d, &h);
        for (uint32_t v = 0; v < n; v++) {
            t->lm_from[(size_t)v * k + i] = d[v];
            if (isfinite(d[v]) && d[v] > maxd) maxd = d[v];
            /* A landmark is never chosen twice: its own distance is 0,
             * and -1 keeps it below every other node. */
            if (i == 0 || d[v] < mind[v]) mind[v] = d[v];
        }
        mind[best] = -1;
        if (!sym) {
            sssp(n, roff, rto, redge, cost, best, d, &h);
            for (uint32_t v = 0; v < n; v++) {
                t->lm_to[(size_t)v * k + i] = d[v];
                if (isfinite(d[v]) && d[v] > maxd) maxd = d[v];
            }
        }
    }
    t->lm_k = k;
    /* Dijkstra's sums round at each arc: what a bound gives up covers the
     * rounding of paths of up to ~10^4 arcs at these magnitudes. */
    t->lm_margin = maxd * 1e-11;
    t->bytes += (size_t)k * sizeof(uint32_t) + (size_t)n * k * sizeof(double) * (sym ? 1 : 2) +
                (size_t)t->m * sizeof(double);
    st = PF_OK;
out:
    if (st) {
        if (t->lm_to != t->lm_from) free(t->lm_to);
        free(t->lm_from);
        free(t->lm_node);
        free(t->lm_base);
        t->lm_to = t->lm_from = t->lm_base = NULL;
        t->lm_node = NULL;
    }
    free(d);
    free(mind);
    free(h.key);
    free(h.v);
    free(roff);
    free(rto);
    free(redge);
    return st;
}
