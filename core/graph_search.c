/* graph_search.c -- Dijkstra (1959) and A* (Hart, Nilsson and Raphael 1968)
 * on a waypoint graph (graph.h), over a binary heap with lazy deletion: a
 * node is pushed again when its cost drops and stale entries are skipped
 * when popped, so the heap holds at most one entry an arc plus the start.
 * The context's arrays are stamped with a search number, so a search
 * touches only the nodes it reaches. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

typedef struct heap_entry {
    double f, g;
    uint32_t v;
} heap_entry;

/* A node's search state in one record (one cache line touched a node on
 * big graphs rather than one an array). */
typedef struct node_rec {
    double g;
    uint32_t parent, pedge;
    uint32_t seen;   /* == the context's stamp: the rest is this search's */
    uint32_t closed; /* valid when seen */
} node_rec;

struct pf_graph_ctx {
    uint32_t cap; /* nodes the records hold */
    uint32_t stamp;
    node_rec *n;
    heap_entry *heap;
    size_t hlen, hcap;
    uint32_t *path_nodes, *path_edges;
    size_t path_cap;
};

static const char *const algorithm_names[PF_GRAPH_ALGORITHMS] = {"dijkstra", "astar"};

const char *pf_graph_algorithm_name(pf_graph_algorithm a) {
    return (unsigned)a < PF_GRAPH_ALGORITHMS ? algorithm_names[a] : NULL;
}

pf_graph_ctx *pf_graph_ctx_create(void) { return calloc(1, sizeof(pf_graph_ctx)); }

void pf_graph_ctx_destroy(pf_graph_ctx *c) {
    if (!c) return;
    free(c->n);
    free(c->heap);
    free(c->path_nodes);
    free(c->path_edges);
    free(c);
}

size_t pf_graph_ctx_memory(const pf_graph_ctx *c) {
    return sizeof(*c) + (size_t)c->cap * sizeof(node_rec) + c->hcap * sizeof(heap_entry) +
           c->path_cap * 2 * sizeof(uint32_t);
}

/* Room for n nodes, every stamp cleared when the arrays are new. */
static pf_status ensure(pf_graph_ctx *c, uint32_t n) {
    void *p;
    if (n <= c->cap) return PF_OK;
    if (!(p = realloc(c->n, (size_t)n * sizeof(*c->n)))) return PF_ENOMEM;
    c->n = p;
    for (uint32_t i = 0; i < n; i++) c->n[i].seen = 0;
    c->cap = n;
    c->stamp = 0;
    return PF_OK;
}

static pf_status heap_push(pf_graph_ctx *c, double f, double g, uint32_t v) {
    size_t i;
    if (c->hlen == c->hcap) {
        size_t cap = c->hcap ? c->hcap * 2 : 256;
        heap_entry *h = cap > SIZE_MAX / sizeof(*h) ? NULL : realloc(c->heap, cap * sizeof(*h));
        if (!h) return PF_ENOMEM;
        c->heap = h;
        c->hcap = cap;
    }
    i = c->hlen++;
    /* Lower f first; among equal f the larger g (deeper), as A* usually
     * breaks ties. */
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (c->heap[up].f < f || (c->heap[up].f == f && c->heap[up].g >= g)) break;
        c->heap[i] = c->heap[up];
        i = up;
    }
    c->heap[i] = (heap_entry){f, g, v};
    return PF_OK;
}

static heap_entry heap_pop(pf_graph_ctx *c) {
    heap_entry top = c->heap[0], last = c->heap[--c->hlen];
    size_t i = 0, n = c->hlen;
    for (;;) {
        size_t l = 2 * i + 1, best = l;
        if (l >= n) break;
        if (l + 1 < n && (c->heap[l + 1].f < c->heap[l].f ||
                          (c->heap[l + 1].f == c->heap[l].f && c->heap[l + 1].g > c->heap[l].g)))
            best = l + 1;
        if (last.f < c->heap[best].f || (last.f == c->heap[best].f && last.g >= c->heap[best].g))
            break;
        c->heap[i] = c->heap[best];
        i = best;
    }
    if (n) c->heap[i] = last;
    return top;
}

static double dist(const pf__graph_topo *t, uint32_t a, uint32_t b) {
    const double *p = t->pos + 3 * (size_t)a, *q = t->pos + 3 * (size_t)b;
    double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The path from the start to `end` by the parents, into the context. */
static pf_status write_path(pf_graph_ctx *c, uint32_t end, pf_graph_path *out) {
    size_t len = 1;
    for (uint32_t v = end; c->n[v].parent != PF_GRAPH_NONE; v = c->n[v].parent) len++;
    if (len > c->path_cap) {
        uint32_t *a = realloc(c->path_nodes, len * sizeof(uint32_t)), *b;
        if (!a) return PF_ENOMEM;
        c->path_nodes = a;
        if (!(b = realloc(c->path_edges, len * sizeof(uint32_t)))) return PF_ENOMEM;
        c->path_edges = b;
        c->path_cap = len;
    }
    for (size_t i = len; i-- > 0;) {
        c->path_nodes[i] = end;
        if (i > 0) {
            c->path_edges[i - 1] = c->n[end].pedge;
            end = c->n[end].parent;
        }
    }
    out->nodes = c->path_nodes;
    out->edges = c->path_edges;
    out->len = len;
    out->end = c->path_nodes[len - 1];
    out->cost = c->n[out->end].g;
    return PF_OK;
}

pf_status pf_graph_search(const pf_graph *gr, pf_graph_ctx *c, const pf_graph_query *q,
                          pf_graph_path *out) {
    const pf__graph_topo *t = gr->t;
    const double ratio = q->algorithm == PF_GRAPH_ASTAR ? gr->ratio : 0;
    uint32_t closest = PF_GRAPH_NONE;
    double closest_d = INFINITY;
    pf_status st;
    memset(out, 0, sizeof(*out));
    out->end = PF_GRAPH_NONE;
    if ((unsigned)q->algorithm >= PF_GRAPH_ALGORITHMS) return PF_EINVAL;
    if (q->start >= t->n || q->goal >= t->n) return PF_ERANGE;
    if (!pf__bit(gr->non, q->start) || !pf__bit(gr->non, q->goal)) return PF_EBLOCKED;
    if ((st = ensure(c, t->n))) return st;
    if (++c->stamp == 0) {
        for (uint32_t i = 0; i < c->cap; i++) c->n[i].seen = 0;
        c->stamp = 1;
    }
    c->hlen = 0;
    c->n[q->start].seen = c->stamp;
    c->n[q->start].closed = 0;
    c->n[q->start].g = 0;
    c->n[q->start].parent = PF_GRAPH_NONE;
    if ((st = heap_push(c, ratio * dist(t, q->start, q->goal), 0, q->start))) return st;
    st = PF_NO_PATH;
    while (c->hlen > 0) {
        heap_entry top = heap_pop(c);
        uint32_t v = top.v;
        if (c->n[v].closed || top.g > c->n[v].g) continue;
        if (q->max_expanded && out->expanded >= q->max_expanded) {
            st = PF_EBUDGET;
            break;
        }
        if (q->stop && (out->expanded & 255) == 255 && q->stop(q->stop_arg)) return PF_ECANCELED;
        c->n[v].closed = 1;
        out->expanded++;
        if (v == q->goal) {
            if ((st = write_path(c, v, out))) return st;
            out->reached = true;
            return PF_OK;
        }
        /* The partial answer's node: only looked for when asked. */
        if (q->partial) {
            double d = dist(t, v, q->goal);
            if (d < closest_d) {
                closest_d = d;
                closest = v;
            } else if (d == closest_d) {
                /* Equally near: the cheaper, then the lower index. */
                const double gv = c->n[v].g, gc = c->n[closest].g;
                if (gv < gc || (gv == gc && v < closest)) closest = v;
            }
        }
        for (uint32_t a = t->off[v]; a < t->off[v + 1]; a++) {
            uint32_t w = t->arc_to[a], e = t->arc_edge[a];
            double ng;
            if (!pf__bit(gr->eon, e) || !pf__bit(gr->non, w)) continue;
            ng = c->n[v].g + gr->cost[e];
            if (c->n[w].seen == c->stamp && (c->n[w].closed || ng >= c->n[w].g)) continue;
            c->n[w].seen = c->stamp;
            c->n[w].closed = 0;
            c->n[w].g = ng;
            c->n[w].parent = v;
            c->n[w].pedge = e;
            if (heap_push(c, ratio > 0 ? ng + ratio * dist(t, w, q->goal) : ng, ng, w))
                return PF_ENOMEM;
        }
    }
    if (q->partial && closest != PF_GRAPH_NONE) {
        pf_status ws = write_path(c, closest, out);
        if (ws) return ws;
    }
    return st;
}
