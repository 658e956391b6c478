/* graph_labels.c -- hub labels built from a contraction hierarchy
 * (graph.h's pf_graph_ch_labels; Abraham, Delling, Goldberg and Werneck,
 * "A hub-based labeling algorithm for shortest paths in road networks"
 * 2011 and "Hierarchical hub labelings for shortest paths" 2012).
 *
 * Every node v has a forward label (hubs v reaches going up the
 * hierarchy, with the distance) and a backward one (hubs that reach v).
 * For any s and t with a path, the highest node of a shortest s-t path in
 * the hierarchy is a hub of both labels at its exact distances, so the
 * least d_f(s, h) + d_b(t, h) over the common hubs is the distance:
 * a query is a merge of two sorted lists, no search.
 *
 * Build, top-down (the reverse of the contraction order, so every up
 * neighbour's labels are done first): a node's label is itself at 0 and,
 * for each up arc v -> w of cost c, w's label with c added, each hub at
 * its least distance (the arc it came through kept as the entry's first
 * arc); then every hub h whose distance the labels already beat (some hub
 * x with d(v, x) + d(x, h) less, read from h's other label) is pruned: h
 * is then not the top of a shortest path from v, and another hub covers
 * it. Entries are sorted by hub.
 *
 * The path: from s, the entry of the meeting hub h names the up arc to
 * take; at its head w, w's own entry for h (w's label holds it: s's entry
 * was made from it) names the next, up to h; the same from t backwards.
 * The arcs' records are unpacked into edges as the hierarchy's query
 * does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_ch_internal.h"

struct pf__graph_labels {
    uint32_t n;
    uint32_t *start[2], *len[2]; /* each node's entries: [start, start + len) */
    uint32_t *hub[2], *first[2]; /* hub, up arc to take (NONE: v is the hub) */
    double *d[2];
    uint64_t entries[2];
    size_t bytes;
};

/* The build's scratch: candidates of one node, dense by hub. */
typedef struct lb_scratch {
    uint32_t *seen, stamp;
    double *d;
    uint32_t *first;
    uint32_t *touched, ntouched;
    uint64_t cap[2];
} lb_scratch;

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void candidate(lb_scratch *s, uint32_t h, double d, uint32_t first) {
    if (s->seen[h] != s->stamp) {
        s->seen[h] = s->stamp;
        s->touched[s->ntouched++] = h;
    } else if (s->d[h] <= d)
        return;
    s->d[h] = d;
    s->first[h] = first;
}

static pf_status grow_side(struct pf__graph_labels *hl, lb_scratch *s, int k, uint64_t need) {
    uint64_t cap = s->cap[k];
    void *p;
    if (need <= cap) return PF_OK;
    while (cap < need) cap = cap ? cap * 2 : 1024;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    if (cap < need) return PF_ELIMIT;
    if (!(p = realloc(hl->hub[k], cap * sizeof(uint32_t)))) return PF_ENOMEM;
    hl->hub[k] = p;
    if (!(p = realloc(hl->first[k], cap * sizeof(uint32_t)))) return PF_ENOMEM;
    hl->first[k] = p;
    if (!(p = realloc(hl->d[k], cap * sizeof(double)))) return PF_ENOMEM;
    hl->d[k] = p;
    s->cap[k] = cap;
    return PF_OK;
}

static size_t entry_bytes(uint64_t entries) {
    return (size_t)entries * (2 * sizeof(uint32_t) + sizeof(double));
}

/* v's label in direction k (0 forward over ch->fwd, 1 backward over
 * ch->bwd), from its up neighbours' labels, pruned against the hubs'
 * labels of the other direction, appended. */
static pf_status label_one(const struct pf__graph_ch *ch, struct pf__graph_labels *hl,
                           lb_scratch *s, int k, uint32_t v, size_t max_bytes,
                           pf_build_stop *stop) {
    const uint32_t *off = k ? ch->bwd_off : ch->fwd_off;
    const ch_arc *arcs = k ? ch->bwd : ch->fwd;
    const int o = k ^ 1;
    uint64_t work = 0, at = hl->entries[k];
    uint32_t kept = 0;
    pf_status st;
    s->stamp++;
    s->ntouched = 0;
    candidate(s, v, 0, PF_GRAPH_NONE);
    for (uint32_t a = off[v]; a < off[v + 1]; a++) {
        uint32_t w = arcs[a].v, b = hl->start[k][w], e = b + hl->len[k][w];
        for (uint32_t i = b; i < e; i++) candidate(s, hl->hub[k][i], arcs[a].cost + hl->d[k][i], a);
        work += e - b;
    }
    qsort(s->touched, s->ntouched, sizeof(uint32_t), cmp_u32);
    if ((st = grow_side(hl, s, k, at + s->ntouched))) return st;
    for (uint32_t i = 0; i < s->ntouched; i++) {
        uint32_t h = s->touched[i], b = hl->start[o][h], e = b + hl->len[o][h];
        double dh = s->d[h];
        bool beaten = false;
        /* h's other label: the hubs x with x -> h (k 0) or h -> x (k 1). */
        for (uint32_t j = b; j < e && h != v; j++) {
            uint32_t x = hl->hub[o][j];
            if (x != h && s->seen[x] == s->stamp && s->d[x] + hl->d[o][j] < dh) {
                beaten = true;
                break;
            }
        }
        work += e - b;
        if (beaten) continue;
        hl->hub[k][at + kept] = h;
        hl->d[k][at + kept] = dh;
        hl->first[k][at + kept] = s->first[h];
        kept++;
    }
    hl->start[k][v] = (uint32_t)at;
    hl->len[k][v] = kept;
    hl->entries[k] = at + kept;
    if (entry_bytes(hl->entries[0] + hl->entries[1]) > max_bytes) return PF_ELIMIT;
    if (pf_build_tick(stop, 1 + work)) return PF_ECANCELED;
    return PF_OK;
}

void pf__graph_labels_free(struct pf__graph_labels *hl) {
    if (!hl) return;
    for (int k = 0; k < 2; k++) {
        free(hl->start[k]);
        free(hl->len[k]);
        free(hl->hub[k]);
        free(hl->first[k]);
        free(hl->d[k]);
    }
    free(hl);
}

pf_status pf__graph_labels_build(const struct pf__graph_ch *ch, const uint32_t *order,
                                 size_t max_bytes, pf_build_stop *stop,
                                 struct pf__graph_labels **out) {
    const uint32_t n = ch->n;
    struct pf__graph_labels *hl = calloc(1, sizeof(*hl));
    lb_scratch s;
    pf_status st = PF_ENOMEM;
    memset(&s, 0, sizeof(s));
    *out = NULL;
    if (!hl) return PF_ENOMEM;
    hl->n = n;
    for (int k = 0; k < 2; k++) {
        hl->start[k] = calloc(n ? n : 1, sizeof(uint32_t));
        hl->len[k] = calloc(n ? n : 1, sizeof(uint32_t));
        if (!hl->start[k] || !hl->len[k]) goto out;
    }
    s.seen = calloc(n ? n : 1, sizeof(uint32_t));
    s.d = malloc((n ? n : 1) * sizeof(double));
    s.first = malloc((n ? n : 1) * sizeof(uint32_t));
    s.touched = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!s.seen || !s.d || !s.first || !s.touched) goto out;
    /* Every node of the hierarchy was contracted once; the last first. */
    for (uint32_t i = n; i-- > 0;)
        for (int k = 0; k < 2; k++)
            if ((st = label_one(ch, hl, &s, k, order[i], max_bytes, stop))) goto out;
    /* The lists at their size (they grew by doubling). */
    for (int k = 0; k < 2; k++) {
        size_t m = hl->entries[k] ? (size_t)hl->entries[k] : 1;
        void *p;
        if ((p = realloc(hl->hub[k], m * sizeof(uint32_t)))) hl->hub[k] = p;
        if ((p = realloc(hl->first[k], m * sizeof(uint32_t)))) hl->first[k] = p;
        if ((p = realloc(hl->d[k], m * sizeof(double)))) hl->d[k] = p;
    }
    hl->bytes = sizeof(*hl) + 4 * (size_t)n * sizeof(uint32_t) +
                entry_bytes(hl->entries[0] + hl->entries[1]);
    *out = hl;
    hl = NULL;
    st = PF_OK;
out:
    pf__graph_labels_free(hl);
    free(s.seen);
    free(s.d);
    free(s.first);
    free(s.touched);
    return st;
}

size_t pf__graph_labels_bytes(const struct pf__graph_labels *hl) { return hl->bytes; }

uint64_t pf__graph_labels_entries(const struct pf__graph_labels *hl) {
    return hl->entries[0] + hl->entries[1];
}

/* The index of hub h in v's label k (it is there: see the file's top). */
static uint32_t find(const struct pf__graph_labels *hl, int k, uint32_t v, uint32_t h) {
    uint32_t lo = hl->start[k][v], hi = lo + hl->len[k][v];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (hl->hub[k][mid] < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Appends the records from v up to hub h (v's entry for it at i) through
 * label k's first arcs. */
static pf_status climb(const struct pf__graph_ch *ch, struct pf__graph_ch_scratch *x, int k,
                       uint32_t v, uint32_t h, uint32_t i, size_t *nrec) {
    const struct pf__graph_labels *hl = ch->hl;
    const ch_arc *arcs = k ? ch->bwd : ch->fwd;
    pf_status st;
    while (hl->first[k][i] != PF_GRAPH_NONE) {
        const ch_arc *a = &arcs[hl->first[k][i]];
        if ((st = pf__graph_ch_grow(&x->recs, &x->recs_cap, *nrec + 1))) return st;
        x->recs[(*nrec)++] = a->rec;
        v = a->v;
        i = find(hl, k, v, h);
        if (i >= hl->start[k][v] + hl->len[k][v] || hl->hub[k][i] != h) return PF_EINVAL;
    }
    return PF_OK;
}

pf_status pf__graph_labels_search(const pf_graph *g, struct pf__graph_ch_scratch *x,
                                  const pf_graph_query *q, pf_graph_path *out) {
    const struct pf__graph_ch *ch = g->ch;
    const struct pf__graph_labels *hl = ch->hl;
    uint32_t i = hl->start[0][q->start], ie = i + hl->len[0][q->start];
    uint32_t j = hl->start[1][q->goal], je = j + hl->len[1][q->goal];
    uint32_t bi = 0, bj = 0, hub = PF_GRAPH_NONE;
    const uint32_t *hf = hl->hub[0], *hb = hl->hub[1];
    double best = INFINITY;
    size_t nrec = 0, down;
    pf_status st;
    out->expanded = (uint64_t)(ie - i) + (je - j);
    while (i < ie && j < je) {
        if (hf[i] < hb[j])
            i++;
        else if (hf[i] > hb[j])
            j++;
        else {
            double d = hl->d[0][i] + hl->d[1][j];
            if (d < best) {
                best = d;
                bi = i;
                bj = j;
                hub = hf[i];
            }
            i++;
            j++;
        }
    }
    if (hub == PF_GRAPH_NONE) return PF_NO_PATH;
    /* Up from the start to the hub, then up from the goal (backward arcs)
     * reversed: the hub down to the goal. */
    if ((st = climb(ch, x, 0, q->start, hub, bi, &nrec))) return st;
    down = nrec;
    if ((st = climb(ch, x, 1, q->goal, hub, bj, &nrec))) return st;
    for (size_t a = down, b = nrec; a + 1 < b; a++, b--) {
        uint32_t t = x->recs[a];
        x->recs[a] = x->recs[b - 1];
        x->recs[b - 1] = t;
    }
    return pf__graph_ch_write_recs(g, x, q->start, x->recs, nrec, out);
}
