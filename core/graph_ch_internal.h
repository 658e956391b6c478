/* graph_ch_internal.h -- what graph_ch.c (the contraction hierarchy and
 * its query) and graph_labels.c (hub labels built from it) share. Not an
 * API: core/graph.h is. */
#ifndef PF_GRAPH_CH_INTERNAL_H
#define PF_GRAPH_CH_INTERNAL_H

#include "build_stop.h"
#include "graph_internal.h"

/* A record: an original edge (mid NONE, a the edge) or a shortcut through
 * mid made of records a (from -> mid) and b (mid -> to). */
typedef struct ch_rec {
    uint32_t a, b, mid;
} ch_rec;

/* An up arc of the final hierarchy: to v (a node contracted later), its
 * record and cost. A backward arc v of node x stands for v -> x. */
typedef struct ch_arc {
    uint32_t v, rec;
    double cost;
} ch_arc;

struct pf__graph_labels; /* graph_labels.c */

struct pf__graph_ch {
    uint32_t n;
    uint32_t *fwd_off, *bwd_off; /* n + 1 */
    ch_arc *fwd, *bwd;
    ch_rec *rec;
    uint32_t nrec;
    uint64_t shortcuts;
    size_t bytes;                /* all of the above, and hl's */
    struct pf__graph_labels *hl; /* hub labels, or NULL */
    const char *hl_absent;       /* why hl is NULL (graph.h's reasons) */
};

/* ---- a min-heap of (key, node) ---- */

typedef struct hent {
    double k;
    uint32_t v, tag;
} hent;

typedef struct heap {
    hent *a;
    size_t len, cap;
} heap;

typedef struct side {
    double *d;
    uint32_t *seen, *prec, *prev; /* record and node it came from */
    uint8_t *closed;
    heap h;
} side;

/* A context's scratch for hierarchy queries (made on first use). */
struct pf__graph_ch_scratch {
    uint32_t cap, stamp;
    side s[2];
    uint32_t *path_nodes, *path_edges, *stack, *recs;
    size_t nodes_cap, edges_cap, stack_cap, recs_cap;
};

/* x's arrays for n nodes, a new stamp and empty heaps. PF_ENOMEM. */
pf_status pf__graph_ch_scratch_ready(struct pf__graph_ch_scratch **xp, uint32_t n);

/* Grows *a (of *cap) to hold need. PF_ENOMEM. */
pf_status pf__graph_ch_grow(uint32_t **a, size_t *cap, size_t need);

/* The path from s made of records recs[0..nrec) in order, unpacked into
 * the version's edges, written to out (its arrays in x). PF_ENOMEM. */
pf_status pf__graph_ch_write_recs(const pf_graph *g, struct pf__graph_ch_scratch *x, uint32_t s,
                                  const uint32_t *recs, size_t nrec, pf_graph_path *out);

/* graph_labels.c: hub labels of ch (order: the nodes in the order they
 * were contracted), at most max_bytes (PF_ELIMIT past it), polling stop
 * (PF_ECANCELED); PF_ENOMEM. Then the query (pf__graph_ch_search hands
 * it one start and one goal), the bytes and the free. */
pf_status pf__graph_labels_build(const struct pf__graph_ch *ch, const uint32_t *order,
                                 size_t max_bytes, pf_build_stop *stop,
                                 struct pf__graph_labels **out);
pf_status pf__graph_labels_search(const pf_graph *g, struct pf__graph_ch_scratch *x,
                                  const pf_graph_query *q, pf_graph_path *out);
size_t pf__graph_labels_bytes(const struct pf__graph_labels *hl);
uint64_t pf__graph_labels_entries(const struct pf__graph_labels *hl);
void pf__graph_labels_free(struct pf__graph_labels *hl);

#endif
