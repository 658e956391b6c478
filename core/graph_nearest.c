/* graph_nearest.c -- the nearest enabled node to a point (graph.h): an
 * implicit kd-tree over the node positions (Bentley 1975; Friedman, Bentley
 * and Finkel 1977), each subtree split at its median on the axis of its
 * largest spread, searched near side first and the far side only while
 * the splitting plane is no farther than the best node found. */
#include <math.h>
#include <stdlib.h>

#include "graph_internal.h"

static double coord(const pf__graph_topo *t, uint32_t v, int ax) {
    return t->pos[3 * (size_t)v + (size_t)ax];
}

static int widest_axis(const pf__graph_topo *t, const uint32_t *a, size_t lo, size_t hi) {
    double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    int best = 0;
    for (size_t i = lo; i < hi; i++)
        for (int k = 0; k < t->dim; k++) {
            double c = coord(t, a[i], k);
            if (c < mn[k]) mn[k] = c;
            if (c > mx[k]) mx[k] = c;
        }
    for (int k = 1; k < t->dim; k++)
        if (mx[k] - mn[k] > mx[best] - mn[best]) best = k;
    return best;
}

/* Iterative over an explicit stack of ranges (at most one pending range a
 * level: depth <= 32 for 2^30 nodes). */
pf_status pf__graph_kd_build(pf__graph_topo *t) {
    struct {
        size_t lo, hi;
    } stack[64];
    int sp = 0;
    t->kd = malloc((size_t)t->n * sizeof(uint32_t));
    t->kdaxis = malloc((size_t)t->n);
    if (!t->kd || !t->kdaxis) return PF_ENOMEM;
    for (uint32_t i = 0; i < t->n; i++) t->kd[i] = i;
    stack[sp].lo = 0;
    stack[sp++].hi = t->n;
    while (sp > 0) {
        size_t lo = stack[--sp].lo, hi = stack[sp].hi, mid;
        int ax;
        if (hi <= lo) continue;
        mid = lo + (hi - lo) / 2;
        ax = widest_axis(t, t->kd, lo, hi);
        pf__graph_select_k(t, t->kd, (ptrdiff_t)lo, (ptrdiff_t)hi - 1, (ptrdiff_t)mid, ax, coord);
        t->kdaxis[mid] = (uint8_t)ax;
        stack[sp].lo = lo;
        stack[sp++].hi = mid;
        stack[sp].lo = mid + 1;
        stack[sp++].hi = hi;
    }
    return PF_OK;
}

typedef struct nearest_state {
    const pf_graph *g;
    const double *p;
    uint32_t best;
    double best_d2;
    uint32_t visited;
} nearest_state;

/* Near side first, then the far side when its splitting plane is within
 * the best distance (<=, so an equally near node of lower index is found
 * too). Recursion depth is the tree's: <= 32 for 2^30 nodes. */
static void visit(nearest_state *s, size_t lo, size_t hi) {
    const pf__graph_topo *t = s->g->t;
    size_t mid;
    uint32_t v;
    int ax;
    double diff, d2 = 0;
    if (lo >= hi) return;
    mid = lo + (hi - lo) / 2;
    v = t->kd[mid];
    ax = t->kdaxis[mid];
    diff = s->p[ax] - coord(t, v, ax);
    s->visited++;
    if (pf__bit(s->g->non, v)) {
        for (int k = 0; k < t->dim; k++) {
            double d = s->p[k] - coord(t, v, k);
            d2 += d * d;
        }
        if (d2 < s->best_d2 || (d2 == s->best_d2 && v < s->best)) {
            s->best_d2 = d2;
            s->best = v;
        }
    }
    if (diff < 0) {
        visit(s, lo, mid);
        if (diff * diff <= s->best_d2) visit(s, mid + 1, hi);
    } else {
        visit(s, mid + 1, hi);
        if (diff * diff <= s->best_d2) visit(s, lo, mid);
    }
}

uint32_t pf_graph_nearest(const pf_graph *g, const double p[3], double *dist, uint32_t *visited) {
    nearest_state s = {g, p, PF_GRAPH_NONE, INFINITY, 0};
    visit(&s, 0, g->t->n);
    if (dist) *dist = s.best == PF_GRAPH_NONE ? INFINITY : sqrt(s.best_d2);
    if (visited) *visited = s.visited;
    return s.best;
}
