/* graph_internal.h -- the layout of a waypoint graph (graph.h), shared by
 * graph.c (build, versions), graph_nearest.c (the kd-tree) and
 * graph_search.c (Dijkstra and A*). */
#ifndef PF_GRAPH_INTERNAL_H
#define PF_GRAPH_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>

#include "graph.h"

/* The topology: what no PATCH changes, shared by every version. */
typedef struct pf__graph_topo {
    atomic_int refs;
    uint32_t n, m, narcs; /* nodes, edges, arcs */
    int dim;
    uint32_t max_degree;
    double *pos;        /* 3 a node */
    uint32_t *off;      /* n + 1: node v's arcs are [off[v], off[v + 1]) */
    uint32_t *arc_to;   /* narcs: the arc's head */
    uint32_t *arc_edge; /* narcs: the edge it walks */
    uint32_t *efrom, *eto;
    uint8_t *eboth;
    /* The kd-tree, implicit: the subtree of [lo, hi) has its root at
     * mid = lo + (hi - lo) / 2, node kd[mid] split on axis kdaxis[mid];
     * [lo, mid) holds coordinates <= the root's, (mid, hi) >= it. */
    uint32_t *kd;
    uint8_t *kdaxis;
    /* ALT landmarks (graph.h), chosen on the base: lm_k of them (0: none),
     * lm_node[i] the i-th; lm_from[v * lm_k + i] = d(L_i, v) and
     * lm_to[v * lm_k + i] = d(v, L_i) (INFINITY: no path; lm_to is
     * lm_from when every edge is two-way), lm_base the upload's costs,
     * lm_margin what a bound gives up so rounding never overestimates. */
    uint32_t lm_k;
    uint32_t *lm_node;
    double *lm_from, *lm_to, *lm_base;
    double lm_margin;
    uint64_t *ntags, *etags;       /* tags as bits, or NULL */
    struct pf__graph_eindex *eidx; /* graph_edge_index.c's tree over the edges */
    size_t bytes;
} pf__graph_topo;

/* One version: the topology and what a PATCH changes. */
struct pf_graph {
    atomic_int refs;
    pf__graph_topo *t;
    double *cost;  /* m */
    uint64_t *eon; /* m bits: edge enabled */
    uint64_t *non; /* n bits: node enabled */
    uint32_t disabled_nodes, disabled_edges;
    double ratio;
    double lm_scale; /* graph.h's PATCH rule: the landmarks' factor */
    uint32_t *comp;  /* n: weak component of each node (this version) */
    uint32_t ncomp;
    struct pf__graph_ch *ch; /* graph_ch.c's hierarchy of this version, or NULL */
    size_t bytes;
};

static inline bool pf__bit(const uint64_t *bits, uint32_t i) {
    return (bits[i >> 6] >> (i & 63)) & 1u;
}

/* Chooses k landmarks of t over the costs `cost` (every edge and node
 * enabled) and fills t->lm_*; k 0 or no node: none. PF_ENOMEM. */
pf_status pf__graph_landmarks_build(pf__graph_topo *t, const double *cost, uint32_t k);

/* graph_select.c: puts the k-th smallest of a[lo..hi] (inclusive) by
 * coord(t, a[i], ax) at a[k], smaller-or-equal before it and
 * greater-or-equal after it. The two spatial indexes split on it: the
 * kd-tree by node position, the edge index by edge midpoint. */
typedef double (*pf__graph_coord_fn)(const pf__graph_topo *t, uint32_t id, int ax);
void pf__graph_select_k(const pf__graph_topo *t, uint32_t *a, ptrdiff_t lo, ptrdiff_t hi,
                        ptrdiff_t k, int ax, pf__graph_coord_fn coord);

/* Builds t's kd-tree (t->kd, t->kdaxis allocated). PF_ENOMEM. */
pf_status pf__graph_kd_build(pf__graph_topo *t);

/* Builds t's edge index (t->eidx); its bytes, and its free (NULL: no-op).
 * PF_ENOMEM. */
pf_status pf__graph_eindex_build(pf__graph_topo *t);
size_t pf__graph_eindex_bytes(const pf__graph_topo *t);
void pf__graph_eindex_free(struct pf__graph_eindex *x);

/* graph_ch.c: a version's hierarchy freed; a context's CH scratch (made
 * on first use at *x), its bytes and free; the search (pf_graph_ch_usable
 * true of q). */
struct pf__graph_ch_scratch;
void pf__graph_ch_free(struct pf__graph_ch *ch);
void pf__graph_ch_scratch_free(struct pf__graph_ch_scratch *x);
size_t pf__graph_ch_scratch_memory(const struct pf__graph_ch_scratch *x);
pf_status pf__graph_ch_search(const pf_graph *g, struct pf__graph_ch_scratch **x,
                              const pf_graph_query *q, pf_graph_path *out);

#endif
