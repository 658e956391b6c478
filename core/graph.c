/* graph.c -- waypoint graphs (graph.h): the build into CSR adjacency, the
 * versions a PATCH makes, the heuristic's ratio and the graph's info. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

static void topo_free(pf__graph_topo *t) {
    if (!t) return;
    free(t->pos);
    free(t->off);
    free(t->arc_to);
    free(t->arc_edge);
    free(t->efrom);
    free(t->eto);
    free(t->eboth);
    free(t->kd);
    free(t->kdaxis);
    free(t);
}

static void topo_release(pf__graph_topo *t) {
    if (t && atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) topo_free(t);
}

/* calloc of n things of size s, NULL on overflow too (n may be 0). */
static void *alloc_n(size_t n, size_t s) { return calloc(n ? n : 1, s); }

static size_t words(uint32_t n) { return ((size_t)n + 63) / 64; }

static double edge_length(const pf__graph_topo *t, uint32_t a, uint32_t b) {
    const double *p = t->pos + 3 * (size_t)a, *q = t->pos + 3 * (size_t)b;
    double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The smallest cost / length over edges of positive length (graph.h),
 * scaled down by 1e-9; 0 without such an edge. */
static double measure_ratio(const pf_graph *g) {
    const pf__graph_topo *t = g->t;
    double r = INFINITY;
    for (uint32_t e = 0; e < t->m; e++) {
        double len = edge_length(t, t->efrom[e], t->eto[e]);
        if (len > 0 && g->cost[e] / len < r) r = g->cost[e] / len;
    }
    if (!isfinite(r)) return 0;
    return r * (1 - 1e-9);
}

static void set_fault(pf_graph_fault *f, int what, uint32_t i) {
    if (!f) return;
    f->what = what;
    f->index = i;
}

static pf_status check_spec(const pf_graph_spec *s, pf_graph_fault *f) {
    if (s->nnodes == 0 || (s->dim != 2 && s->dim != 3)) return PF_EINVAL;
    if (s->nnodes > PF_GRAPH_MAX_NODES || s->nedges > PF_GRAPH_MAX_EDGES) return PF_ELIMIT;
    for (uint32_t i = 0; i < s->nnodes; i++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(s->pos[3 * (size_t)i + (size_t)k])) {
                set_fault(f, PF_GRAPH_FAULT_NODE, i);
                return PF_EINVAL;
            }
    for (uint32_t e = 0; e < s->nedges; e++)
        if (s->from[e] >= s->nnodes || s->to[e] >= s->nnodes || !isfinite(s->cost[e]) ||
            s->cost[e] < 0) {
            set_fault(f, PF_GRAPH_FAULT_EDGE, e);
            return PF_EINVAL;
        }
    return PF_OK;
}

/* A version of t (taking a reference on t) with every edge and node
 * enabled and costs `cost` (copied). */
static pf_graph *version_create(pf__graph_topo *t, const double *cost) {
    pf_graph *g = calloc(1, sizeof(*g));
    if (!g) return NULL;
    atomic_init(&g->refs, 1);
    g->cost = alloc_n(t->m, sizeof(double));
    g->eon = alloc_n(words(t->m), sizeof(uint64_t));
    g->non = alloc_n(words(t->n), sizeof(uint64_t));
    if (!g->cost || !g->eon || !g->non) {
        free(g->cost);
        free(g->eon);
        free(g->non);
        free(g);
        return NULL;
    }
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    g->t = t;
    if (t->m) memcpy(g->cost, cost, (size_t)t->m * sizeof(double));
    g->bytes =
        sizeof(*g) + (size_t)t->m * sizeof(double) + (words(t->m) + words(t->n)) * sizeof(uint64_t);
    return g;
}

pf_status pf_graph_build(const pf_graph_spec *s, pf_graph **out, pf_graph_fault *fault) {
    pf__graph_topo *t = NULL;
    pf_graph *g = NULL;
    uint32_t *fill = NULL;
    size_t narcs = 0;
    pf_status st;
    *out = NULL;
    set_fault(fault, PF_GRAPH_FAULT_NONE, 0);
    if ((st = check_spec(s, fault))) return st;
    for (uint32_t e = 0; e < s->nedges; e++) narcs += s->both && s->both[e] ? 2 : 1;
    if (narcs > UINT32_MAX - 1) return PF_ELIMIT;
    if (!(t = calloc(1, sizeof(*t)))) return PF_ENOMEM;
    atomic_init(&t->refs, 1);
    t->n = s->nnodes;
    t->m = s->nedges;
    t->narcs = (uint32_t)narcs;
    t->dim = s->dim;
    t->pos = alloc_n(3 * (size_t)t->n, sizeof(double));
    t->off = alloc_n((size_t)t->n + 1, sizeof(uint32_t));
    t->arc_to = alloc_n(narcs, sizeof(uint32_t));
    t->arc_edge = alloc_n(narcs, sizeof(uint32_t));
    t->efrom = alloc_n(t->m, sizeof(uint32_t));
    t->eto = alloc_n(t->m, sizeof(uint32_t));
    t->eboth = alloc_n(t->m, 1);
    fill = alloc_n(t->n, sizeof(uint32_t));
    st = PF_ENOMEM;
    if (!t->pos || !t->off || !t->arc_to || !t->arc_edge || !t->efrom || !t->eto || !t->eboth ||
        !fill)
        goto out;
    memcpy(t->pos, s->pos, 3 * (size_t)t->n * sizeof(double));
    if (t->dim == 2)
        for (uint32_t i = 0; i < t->n; i++) t->pos[3 * (size_t)i + 2] = 0;
    /* CSR by counting: each node's arcs in the order of the edges. */
    for (uint32_t e = 0; e < t->m; e++) {
        t->efrom[e] = s->from[e];
        t->eto[e] = s->to[e];
        t->eboth[e] = s->both && s->both[e] ? 1 : 0;
        t->off[s->from[e] + 1]++;
        if (t->eboth[e]) t->off[s->to[e] + 1]++;
    }
    for (uint32_t v = 0; v < t->n; v++) {
        if (t->off[v + 1] > t->max_degree) t->max_degree = t->off[v + 1];
        t->off[v + 1] += t->off[v];
    }
    for (uint32_t e = 0; e < t->m; e++) {
        uint32_t a = t->off[t->efrom[e]] + fill[t->efrom[e]]++;
        t->arc_to[a] = t->eto[e];
        t->arc_edge[a] = e;
        if (t->eboth[e]) {
            a = t->off[t->eto[e]] + fill[t->eto[e]]++;
            t->arc_to[a] = t->efrom[e];
            t->arc_edge[a] = e;
        }
    }
    if ((st = pf__graph_kd_build(t))) goto out;
    t->bytes = sizeof(*t) + (size_t)t->n * (3 * sizeof(double) + sizeof(uint32_t) * 2 + 1) +
               sizeof(uint32_t) + narcs * 2 * sizeof(uint32_t) +
               (size_t)t->m * (2 * sizeof(uint32_t) + 1);
    st = PF_ENOMEM;
    if (!(g = version_create(t, s->cost))) goto out;
    memset(g->eon, 0xff, words(t->m) * sizeof(uint64_t));
    memset(g->non, 0xff, words(t->n) * sizeof(uint64_t));
    g->ratio = measure_ratio(g);
    *out = g;
    st = PF_OK;
out:
    free(fill);
    topo_release(t);
    return st;
}

void pf_graph_retain(const pf_graph *g) {
    pf_graph *w = (pf_graph *)g;
    atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
}

void pf_graph_release(const pf_graph *g) {
    pf_graph *w = (pf_graph *)g;
    if (!w || atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1) return;
    topo_release(w->t);
    free(w->cost);
    free(w->eon);
    free(w->non);
    free(w);
}

static void set_bit(uint64_t *bits, uint32_t i, bool on) {
    if (on)
        bits[i >> 6] |= UINT64_C(1) << (i & 63);
    else
        bits[i >> 6] &= ~(UINT64_C(1) << (i & 63));
}

pf_status pf_graph_change_apply(const pf_graph *g, const pf_graph_change *ch, pf_graph **out,
                                pf_graph_fault *fault) {
    const pf__graph_topo *t = g->t;
    pf_graph *n;
    *out = NULL;
    set_fault(fault, PF_GRAPH_FAULT_NONE, 0);
    for (size_t i = 0; i < ch->ncosts; i++)
        if (ch->costs[i].edge >= t->m || !isfinite(ch->costs[i].cost) || ch->costs[i].cost < 0) {
            set_fault(fault, PF_GRAPH_FAULT_EDGE, ch->costs[i].edge);
            return PF_EINVAL;
        }
    for (size_t i = 0; i < ch->nedges; i++)
        if (ch->edges[i].index >= t->m) {
            set_fault(fault, PF_GRAPH_FAULT_EDGE, ch->edges[i].index);
            return PF_EINVAL;
        }
    for (size_t i = 0; i < ch->nnodes; i++)
        if (ch->nodes[i].index >= t->n) {
            set_fault(fault, PF_GRAPH_FAULT_NODE, ch->nodes[i].index);
            return PF_EINVAL;
        }
    if (!(n = version_create(g->t, g->cost))) return PF_ENOMEM;
    memcpy(n->eon, g->eon, words(t->m) * sizeof(uint64_t));
    memcpy(n->non, g->non, words(t->n) * sizeof(uint64_t));
    for (size_t i = 0; i < ch->ncosts; i++) n->cost[ch->costs[i].edge] = ch->costs[i].cost;
    for (size_t i = 0; i < ch->nedges; i++)
        set_bit(n->eon, ch->edges[i].index, ch->edges[i].enabled);
    for (size_t i = 0; i < ch->nnodes; i++)
        set_bit(n->non, ch->nodes[i].index, ch->nodes[i].enabled);
    for (uint32_t e = 0; e < t->m; e++) n->disabled_edges += !pf__bit(n->eon, e);
    for (uint32_t v = 0; v < t->n; v++) n->disabled_nodes += !pf__bit(n->non, v);
    n->ratio = measure_ratio(n);
    *out = n;
    return PF_OK;
}

void pf_graph_get_info(const pf_graph *g, pf_graph_info *info) {
    const pf__graph_topo *t = g->t;
    memset(info, 0, sizeof(*info));
    info->nodes = t->n;
    info->edges = t->m;
    info->arcs = t->narcs;
    info->max_degree = t->max_degree;
    info->disabled_nodes = g->disabled_nodes;
    info->disabled_edges = g->disabled_edges;
    info->dim = t->dim;
    info->ratio = g->ratio;
    info->topo_bytes = t->bytes;
    info->state_bytes = g->bytes;
}

const double *pf_graph_node_pos(const pf_graph *g, uint32_t i) { return g->t->pos + 3 * (size_t)i; }

bool pf_graph_node_enabled(const pf_graph *g, uint32_t i) { return pf__bit(g->non, i); }

void pf_graph_edge(const pf_graph *g, uint32_t i, uint32_t *from, uint32_t *to, double *cost,
                   bool *both, bool *enabled) {
    *from = g->t->efrom[i];
    *to = g->t->eto[i];
    *cost = g->cost[i];
    *both = g->t->eboth[i] != 0;
    *enabled = pf__bit(g->eon, i);
}
