/* graph_edge_index.c -- the nearest point on an enabled edge (graph.h's
 * pf_graph_nearest_edge) through a bounding-volume hierarchy over the
 * edges: the edges sorted into a balanced binary tree by median splits of
 * their midpoints on the widest axis, each tree node keeping the bounding
 * box of its edges (floats rounded outwards), the leaves at most
 * PF__EIDX_LEAF edges. A query goes down the nearer child first and skips
 * a subtree whose box is farther than the best edge found (plus a slack
 * that covers rounding), so the answer is the scan's: the least distance,
 * the lower edge index among equals. Built once with the topology (edge
 * positions never change); disabled edges are skipped at query time. */
#include <math.h>
#include <stdlib.h>

#include "graph_internal.h"

#define PF__EIDX_LEAF 8

struct pf__graph_eindex {
    uint32_t depth;  /* leaves are at this depth (root 0) */
    uint32_t *order; /* m: the edges, each tree node's a range of it */
    float *box;      /* 6 a tree node (min xyz, max xyz), heap numbered from 1 */
    double slack;    /* rounding allowance on a box's distance */
};

static double mid_coord(const pf__graph_topo *t, uint32_t e, int ax) {
    return t->pos[3 * (size_t)t->efrom[e] + (size_t)ax] +
           t->pos[3 * (size_t)t->eto[e] + (size_t)ax];
}

static float down(double x) {
    float f = (float)x;
    return (double)f > x ? nextafterf(f, -INFINITY) : f;
}

static float up(double x) {
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}

/* Fills node's box from the edges in [lo, hi) and returns the widest axis
 * of their midpoints. */
static int fill_box(const pf__graph_topo *t, struct pf__graph_eindex *x, size_t node, size_t lo,
                    size_t hi) {
    double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    double cmn[3] = {INFINITY, INFINITY, INFINITY}, cmx[3] = {-INFINITY, -INFINITY, -INFINITY};
    float *b = x->box + 6 * node;
    int best = 0;
    for (size_t i = lo; i < hi; i++) {
        uint32_t e = x->order[i];
        for (int k = 0; k < 3; k++) {
            double p = t->pos[3 * (size_t)t->efrom[e] + (size_t)k];
            double q = t->pos[3 * (size_t)t->eto[e] + (size_t)k], c = p + q;
            if (p < mn[k]) mn[k] = p;
            if (q < mn[k]) mn[k] = q;
            if (p > mx[k]) mx[k] = p;
            if (q > mx[k]) mx[k] = q;
            if (c < cmn[k]) cmn[k] = c;
            if (c > cmx[k]) cmx[k] = c;
        }
    }
    for (int k = 0; k < 3; k++) {
        b[k] = hi > lo ? down(mn[k]) : INFINITY;
        b[3 + k] = hi > lo ? up(mx[k]) : -INFINITY;
    }
    for (int k = 1; k < t->dim; k++)
        if (cmx[k] - cmn[k] > cmx[best] - cmn[best]) best = k;
    return best;
}

size_t pf__graph_eindex_bytes(const pf__graph_topo *t) {
    const struct pf__graph_eindex *x = t->eidx;
    if (!x) return 0;
    return sizeof(*x) + (size_t)t->m * sizeof(uint32_t) +
           ((size_t)2 << x->depth) * 6 * sizeof(float);
}

void pf__graph_eindex_free(struct pf__graph_eindex *x) {
    if (!x) return;
    free(x->order);
    free(x->box);
    free(x);
}

pf_status pf__graph_eindex_build(pf__graph_topo *t) {
    struct pf__graph_eindex *x = calloc(1, sizeof(*x));
    struct {
        size_t node, lo, hi;
        uint32_t depth;
    } stack[80];
    int sp = 0;
    double extent = 0;
    if (!x) return PF_ENOMEM;
    /* Leaves at the depth where halving leaves <= PF__EIDX_LEAF edges. */
    while (((size_t)t->m >> x->depth) > PF__EIDX_LEAF) x->depth++;
    x->order = malloc(((size_t)t->m ? t->m : 1) * sizeof(uint32_t));
    x->box = calloc((size_t)2 << x->depth, 6 * sizeof(float));
    if (!x->order || !x->box) {
        pf__graph_eindex_free(x);
        return PF_ENOMEM;
    }
    for (uint32_t e = 0; e < t->m; e++) x->order[e] = e;
    for (size_t i = 0; i < 3 * (size_t)t->n; i++)
        if (fabs(t->pos[i]) > extent) extent = fabs(t->pos[i]);
    /* A computed distance may be off by a few ulps of the coordinates. */
    x->slack = extent * 1e-9;
    stack[sp].node = 1;
    stack[sp].lo = 0;
    stack[sp].hi = t->m;
    stack[sp++].depth = 0;
    while (sp > 0) {
        size_t node = stack[--sp].node, lo = stack[sp].lo, hi = stack[sp].hi, mid;
        uint32_t depth = stack[sp].depth;
        int ax = fill_box(t, x, node, lo, hi);
        if (depth == x->depth) continue;
        mid = lo + (hi - lo) / 2;
        if (hi - lo > 1)
            pf__graph_select_k(t, x->order, (ptrdiff_t)lo, (ptrdiff_t)hi - 1, (ptrdiff_t)mid, ax,
                               mid_coord);
        stack[sp].node = 2 * node;
        stack[sp].lo = lo;
        stack[sp].hi = mid;
        stack[sp++].depth = depth + 1;
        stack[sp].node = 2 * node + 1;
        stack[sp].lo = mid;
        stack[sp].hi = hi;
        stack[sp++].depth = depth + 1;
    }
    t->eidx = x;
    return PF_OK;
}

/* p's squared distance to the point of edge e nearest it, *at its
 * fraction from e's from node. The one formula of both the index and
 * the scan it replaces. */
static double edge_d2(const pf__graph_topo *t, uint32_t e, const double *p, double *at) {
    const double *a = t->pos + 3 * (size_t)t->efrom[e], *b = t->pos + 3 * (size_t)t->eto[e];
    double ab[3], ap[3], l2 = 0, f = 0, d2 = 0;
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ap[k] = p[k] - a[k];
        l2 += ab[k] * ab[k];
        f += ab[k] * ap[k];
    }
    f = l2 > 0 ? f / l2 : 0;
    if (f < 0) f = 0;
    if (f > 1) f = 1;
    for (int k = 0; k < t->dim; k++) {
        double d = p[k] - (a[k] + f * ab[k]);
        d2 += d * d;
    }
    *at = f;
    return d2;
}

typedef struct edge_state {
    const pf_graph *g;
    const double *p;
    uint32_t best;
    double best_d2, best_d, best_at;
} edge_state;

static double box_dist(const pf__graph_topo *t, const float *b, const double *p) {
    double d2 = 0;
    for (int k = 0; k < t->dim; k++) {
        double d = p[k] < b[k] ? b[k] - p[k] : p[k] > b[3 + k] ? p[k] - b[3 + k] : 0;
        d2 += d * d;
    }
    return sqrt(d2);
}

static void consider(edge_state *s, uint32_t e) {
    const pf_graph *g = s->g;
    const pf__graph_topo *t = g->t;
    double at, d2;
    if (!pf__bit(g->eon, e) || !pf__bit(g->non, t->efrom[e]) || !pf__bit(g->non, t->eto[e])) return;
    d2 = edge_d2(t, e, s->p, &at);
    if (d2 < s->best_d2 || (d2 == s->best_d2 && e < s->best)) {
        s->best_d2 = d2;
        s->best_d = sqrt(d2);
        s->best = e;
        s->best_at = at;
    }
}

/* Recursion depth is the tree's: <= 28 for 2^30 edges. */
static void visit(edge_state *s, size_t node, size_t lo, size_t hi, uint32_t depth) {
    const pf__graph_topo *t = s->g->t;
    const struct pf__graph_eindex *x = t->eidx;
    size_t mid;
    double dl, dr;
    if (lo >= hi) return;
    if (depth == x->depth) {
        for (size_t i = lo; i < hi; i++) consider(s, x->order[i]);
        return;
    }
    mid = lo + (hi - lo) / 2;
    dl = box_dist(t, x->box + 6 * (2 * node), s->p);
    dr = box_dist(t, x->box + 6 * (2 * node + 1), s->p);
    if (dl <= dr) {
        if (dl <= s->best_d + x->slack) visit(s, 2 * node, lo, mid, depth + 1);
        if (dr <= s->best_d + x->slack) visit(s, 2 * node + 1, mid, hi, depth + 1);
    } else {
        if (dr <= s->best_d + x->slack) visit(s, 2 * node + 1, mid, hi, depth + 1);
        if (dl <= s->best_d + x->slack) visit(s, 2 * node, lo, mid, depth + 1);
    }
}

uint32_t pf_graph_nearest_edge(const pf_graph *g, const double p[3], double *at, double *dist) {
    const pf__graph_topo *t = g->t;
    edge_state s = {g, p, PF_GRAPH_NONE, INFINITY, INFINITY, 0};
    visit(&s, 1, 0, t->m, 0);
    if (at) *at = s.best_at;
    if (dist) *dist = s.best == PF_GRAPH_NONE ? INFINITY : s.best_d;
    return s.best;
}

uint32_t pf_graph_nearest_edge_scan(const pf_graph *g, const double p[3], double *at,
                                    double *dist) {
    edge_state s = {g, p, PF_GRAPH_NONE, INFINITY, INFINITY, 0};
    for (uint32_t e = 0; e < g->t->m; e++) consider(&s, e);
    if (at) *at = s.best_at;
    if (dist) *dist = s.best == PF_GRAPH_NONE ? INFINITY : s.best_d;
    return s.best;
}
