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
    if (t->lm_to != t->lm_from) free(t->lm_to);
    free(t->lm_from);
    free(t->lm_node);
    free(t->lm_base);
    free(t->ntags);
    free(t->etags);
    pf__graph_eindex_free(t->eidx);
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

/* The PATCH rule's factor (graph.h): the smallest cost / base cost over
 * the enabled edges whose base cost is positive, at most 1, scaled down by
 * 1e-12 against rounding; 0 without landmarks. */
static double measure_lm_scale(const pf_graph *g) {
    const pf__graph_topo *t = g->t;
    double s = 1;
    if (!t->lm_k) return 0;
    for (uint32_t e = 0; e < t->m; e++)
        if (t->lm_base[e] > 0 && pf__bit(g->eon, e) && g->cost[e] < s * t->lm_base[e])
            s = g->cost[e] / t->lm_base[e];
    return s * (1 - 1e-12);
}

static uint32_t uf_find(uint32_t *p, uint32_t v) {
    while (p[v] != v) {
        p[v] = p[p[v]];
        v = p[v];
    }
    return v;
}

/* g->comp: the weak components of the enabled graph (union-find over the
 * enabled edges between enabled nodes), numbered 0.. by lowest node. */
static void measure_components(pf_graph *g) {
    const pf__graph_topo *t = g->t;
    uint32_t *p = g->comp;
    for (uint32_t v = 0; v < t->n; v++) p[v] = v;
    for (uint32_t e = 0; e < t->m; e++) {
        uint32_t a, b;
        if (!pf__bit(g->eon, e) || !pf__bit(g->non, t->efrom[e]) || !pf__bit(g->non, t->eto[e]))
            continue;
        a = uf_find(p, t->efrom[e]);
        b = uf_find(p, t->eto[e]);
        if (a < b)
            p[b] = a;
        else if (b < a)
            p[a] = b;
    }
    /* Every node to its root, each set's lowest node; then in order a
     * root gets the next number and every other node its root's (the
     * root, lower, is numbered by then). */
    for (uint32_t v = 0; v < t->n; v++) p[v] = uf_find(p, v);
    g->ncomp = 0;
    for (uint32_t v = 0; v < t->n; v++) p[v] = p[v] == v ? g->ncomp++ : p[p[v]];
}

/* The measures a version keeps of its state. */
static void measure(pf_graph *g) {
    g->ratio = measure_ratio(g);
    g->lm_scale = measure_lm_scale(g);
    measure_components(g);
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
    g->comp = alloc_n(t->n, sizeof(uint32_t));
    if (!g->cost || !g->eon || !g->non || !g->comp) {
        free(g->comp);
        free(g->cost);
        free(g->eon);
        free(g->non);
        free(g);
        return NULL;
    }
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    g->t = t;
    if (t->m) memcpy(g->cost, cost, (size_t)t->m * sizeof(double));
    g->bytes = sizeof(*g) + (size_t)t->m * sizeof(double) +
               (words(t->m) + words(t->n)) * sizeof(uint64_t) + (size_t)t->n * sizeof(uint32_t);
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
    if ((st = pf__graph_eindex_build(t))) goto out;
    /* Landmarks add their own bytes to t->bytes. */
    t->bytes = sizeof(*t) + (size_t)t->n * (3 * sizeof(double) + sizeof(uint32_t) * 2 + 1) +
               sizeof(uint32_t) + narcs * 2 * sizeof(uint32_t) +
               (size_t)t->m * (2 * sizeof(uint32_t) + 1) + pf__graph_eindex_bytes(t);
    st = PF_ENOMEM;
    if (s->node_tags) {
        if (!(t->ntags = alloc_n(t->n, sizeof(uint64_t)))) goto out;
        memcpy(t->ntags, s->node_tags, (size_t)t->n * sizeof(uint64_t));
        t->bytes += (size_t)t->n * sizeof(uint64_t);
    }
    if (s->edge_tags && t->m) {
        if (!(t->etags = alloc_n(t->m, sizeof(uint64_t)))) goto out;
        memcpy(t->etags, s->edge_tags, (size_t)t->m * sizeof(uint64_t));
        t->bytes += (size_t)t->m * sizeof(uint64_t);
    }
    if ((st = pf__graph_landmarks_build(t, s->cost, s->landmarks))) goto out;
    st = PF_ENOMEM;
    if (!(g = version_create(t, s->cost))) goto out;
    memset(g->eon, 0xff, words(t->m) * sizeof(uint64_t));
    memset(g->non, 0xff, words(t->n) * sizeof(uint64_t));
    measure(g);
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
    free(w->comp);
    pf__graph_ch_free(w->ch);
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
    measure(n);
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
    info->landmarks = t->lm_k;
    info->lm_scale = g->lm_scale;
    info->components = g->ncomp;
    info->topo_bytes = t->bytes;
    info->state_bytes = g->bytes;
}

const double *pf_graph_node_pos(const pf_graph *g, uint32_t i) { return g->t->pos + 3 * (size_t)i; }

bool pf_graph_node_enabled(const pf_graph *g, uint32_t i) { return pf__bit(g->non, i); }

uint64_t pf_graph_edge_tags(const pf_graph *g, uint32_t i) {
    return g->t->etags ? g->t->etags[i] : 0;
}

uint32_t pf_graph_component(const pf_graph *g, uint32_t i) { return g->comp[i]; }

void pf_graph_edge(const pf_graph *g, uint32_t i, uint32_t *from, uint32_t *to, double *cost,
                   bool *both, bool *enabled) {
    *from = g->t->efrom[i];
    *to = g->t->eto[i];
    *cost = g->cost[i];
    *both = g->t->eboth[i] != 0;
    *enabled = pf__bit(g->eon, i);
}
