/* graph_dstar.c -- D* Lite with MT-D* Lite's re-rooting on a waypoint
 * graph's CSR (graph_dstar.h). The search runs from its root towards its
 * tip: a node's value g is its (cost, hops) to the root, rhs its one-step
 * lookahead over its "look" arcs (out-arcs when rooted at the goal, in-arcs
 * when rooted at the agent), and a change of g is spread to the nodes
 * whose look arcs reach it (the other direction). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_dstar.h"
#include "graph_internal.h"

/* A value: cost, then hops (graph_dstar.h says why). */
typedef struct pv {
    double c;
    uint32_t h;
} pv;

#define F_TOUCHED 1u
#define F_KEEP 2u

/* A node's state; g and rhs are "not reached" unless F_TOUCHED. */
typedef struct nrec {
    double gc, rc;
    uint32_t gh, rh;
    uint32_t hidx; /* its open-list slot + 1, 0: not on it */
    uint32_t flags;
} nrec;

typedef struct hent {
    double k1, kc; /* min(g, rhs).c + h + km, then min(g, rhs) */
    uint32_t kh, v;
} hent;

struct pf_graph_dstar {
    const pf_graph *g;
    const pf__graph_topo *t;
    uint32_t n;
    uint32_t agent, goal;
    pf_graph_dstar_root mode;
    bool at_agent;   /* rooted at the agent now */
    bool need_reset; /* the next plan starts anew */
    uint32_t root;   /* the node whose rhs is fixed */
    uint32_t ktip;   /* the tip the keys aim at */
    double km, ratio;
    nrec *nr;
    hent *heap;
    size_t hlen, hcap;
    uint32_t *touched, ntouched;
    uint32_t *queue;
    /* Reversed arcs: node v's in-arcs are [roff[v], roff[v + 1]) from
     * rfrom over redge; the forward arrays when every edge is two-way. */
    const uint32_t *roff, *rfrom, *redge;
    uint32_t *rown;
    uint32_t *pn, *pe;
    size_t pcap;
    bool goal_moved;
    uint64_t last_goal_move; /* the plan number of the last goal move, 0: none */
    pf_graph_dstar_stats st;
};

static const pv INF_PV = {INFINITY, UINT32_MAX};

static bool pv_less(pv a, pv b) { return a.c < b.c || (a.c == b.c && a.h < b.h); }
static bool pv_eq(pv a, pv b) { return a.c == b.c && a.h == b.h; }
static bool pv_inf(pv a) { return isinf(a.c); }
static pv pv_add(double c, pv b) {
    pv r;
    if (pv_inf(b)) return INF_PV;
    r.c = c + b.c;
    r.h = b.h + 1;
    return r;
}

static pv get_g(const pf_graph_dstar *d, uint32_t v) {
    const nrec *r = &d->nr[v];
    pv p = INF_PV;
    if (r->flags & F_TOUCHED) {
        p.c = r->gc;
        p.h = r->gh;
    }
    return p;
}
static pv get_rhs(const pf_graph_dstar *d, uint32_t v) {
    const nrec *r = &d->nr[v];
    pv p = INF_PV;
    if (r->flags & F_TOUCHED) {
        p.c = r->rc;
        p.h = r->rh;
    }
    return p;
}
static void touch(pf_graph_dstar *d, uint32_t v) {
    nrec *r = &d->nr[v];
    if (r->flags & F_TOUCHED) return;
    r->flags = F_TOUCHED;
    r->gc = r->rc = INFINITY;
    r->gh = r->rh = UINT32_MAX;
    r->hidx = 0;
    d->touched[d->ntouched++] = v;
}
static void set_g(pf_graph_dstar *d, uint32_t v, pv p) {
    d->nr[v].gc = p.c;
    d->nr[v].gh = p.h;
}
static void set_rhs(pf_graph_dstar *d, uint32_t v, pv p) {
    d->nr[v].rc = p.c;
    d->nr[v].rh = p.h;
}

static bool node_on(const pf_graph *g, uint32_t v) { return pf__bit(g->non, v); }

/* Arc e from a to b exists on the current version. */
static bool arc_on(const pf_graph_dstar *d, uint32_t e, uint32_t a, uint32_t b) {
    return pf__bit(d->g->eon, e) && node_on(d->g, a) && node_on(d->g, b);
}

static double h(const pf_graph_dstar *d, uint32_t a, uint32_t b) {
    const double *p = d->t->pos + 3 * (size_t)a, *q = d->t->pos + 3 * (size_t)b;
    double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    if (d->ratio <= 0) return 0;
    return d->ratio * sqrt(dx * dx + dy * dy + dz * dz);
}

static uint32_t tip_of(const pf_graph_dstar *d) { return d->at_agent ? d->goal : d->agent; }

/* Look arcs of v: [*lo, *hi) over (*to, *edge). */
static void look_arcs(const pf_graph_dstar *d, uint32_t v, uint32_t *lo, uint32_t *hi,
                      const uint32_t **to, const uint32_t **edge) {
    if (!d->at_agent) {
        *lo = d->t->off[v], *hi = d->t->off[v + 1], *to = d->t->arc_to, *edge = d->t->arc_edge;
    } else {
        *lo = d->roff[v], *hi = d->roff[v + 1], *to = d->rfrom, *edge = d->redge;
    }
}
static void spread_arcs(const pf_graph_dstar *d, uint32_t v, uint32_t *lo, uint32_t *hi,
                        const uint32_t **to, const uint32_t **edge) {
    if (d->at_agent) {
        *lo = d->t->off[v], *hi = d->t->off[v + 1], *to = d->t->arc_to, *edge = d->t->arc_edge;
    } else {
        *lo = d->roff[v], *hi = d->roff[v + 1], *to = d->rfrom, *edge = d->redge;
    }
}

/* ---- the open list: a binary heap with positions in the nodes ---- */

static bool key_less(const hent *a, const hent *b) {
    if (a->k1 != b->k1) return a->k1 < b->k1;
    if (a->kh != b->kh) return a->kh < b->kh;
    return a->kc < b->kc;
}

static hent key_of(const pf_graph_dstar *d, uint32_t v) {
    pv g = get_g(d, v), r = get_rhs(d, v), m = pv_less(r, g) ? r : g;
    hent k;
    k.v = v;
    k.kc = m.c;
    k.kh = m.h;
    k.k1 = pv_inf(m) ? INFINITY : m.c + h(d, d->ktip, v) + d->km;
    return k;
}

static void heap_place(pf_graph_dstar *d, size_t i, hent e) {
    d->heap[i] = e;
    d->nr[e.v].hidx = (uint32_t)(i + 1);
}
static void sift_up(pf_graph_dstar *d, size_t i) {
    hent e = d->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!key_less(&e, &d->heap[p])) break;
        heap_place(d, i, d->heap[p]);
        i = p;
    }
    heap_place(d, i, e);
}
static void sift_down(pf_graph_dstar *d, size_t i) {
    hent e = d->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= d->hlen) break;
        if (c + 1 < d->hlen && key_less(&d->heap[c + 1], &d->heap[c])) c++;
        if (!key_less(&d->heap[c], &e)) break;
        heap_place(d, i, d->heap[c]);
        i = c;
    }
    heap_place(d, i, e);
}
static pf_status heap_set(pf_graph_dstar *d, hent k) {
    uint32_t hi = d->nr[k.v].hidx;
    if (hi) {
        size_t i = hi - 1;
        bool up = key_less(&k, &d->heap[i]);
        d->heap[i] = k;
        if (up)
            sift_up(d, i);
        else
            sift_down(d, i);
        return PF_OK;
    }
    if (d->hlen == d->hcap) {
        /* At most one entry a node: the capacity never passes n. */
        size_t cap = d->hcap ? d->hcap * 2 : 64;
        hent *nh;
        if (cap > d->n) cap = d->n;
        if (cap <= d->hlen || !(nh = realloc(d->heap, cap * sizeof(*nh)))) return PF_ENOMEM;
        d->heap = nh;
        d->hcap = cap;
    }
    d->heap[d->hlen] = k;
    sift_up(d, d->hlen++);
    return PF_OK;
}
static void heap_remove(pf_graph_dstar *d, uint32_t v) {
    uint32_t hi = d->nr[v].hidx;
    size_t i;
    if (!hi) return;
    i = hi - 1;
    d->nr[v].hidx = 0;
    if (i == --d->hlen) return;
    d->heap[i] = d->heap[d->hlen];
    d->nr[d->heap[i].v].hidx = (uint32_t)(i + 1);
    if (i > 0 && key_less(&d->heap[i], &d->heap[(i - 1) / 2]))
        sift_up(d, i);
    else
        sift_down(d, i);
}
static void heapify(pf_graph_dstar *d) {
    for (size_t i = 0; i < d->hlen; i++) d->nr[d->heap[i].v].hidx = (uint32_t)(i + 1);
    for (size_t i = d->hlen / 2; i-- > 0;) sift_down(d, i);
}

/* ---- LPA* ---- */

/* rhs(u) from its look arcs; the root's stays. Puts u on the open list
 * when it is inconsistent, off it when not. */
static pf_status update_vertex(pf_graph_dstar *d, uint32_t u) {
    uint32_t lo, hi;
    const uint32_t *to, *edge;
    pv best = INF_PV, g;
    if (u == d->root) return PF_OK;
    if (node_on(d->g, u)) {
        look_arcs(d, u, &lo, &hi, &to, &edge);
        for (uint32_t a = lo; a < hi; a++) {
            uint32_t w = to[a], e = edge[a];
            pv c;
            if (!arc_on(d, e, u, w)) continue;
            c = pv_add(d->g->cost[e], get_g(d, w));
            if (pv_less(c, best)) best = c;
        }
    }
    if (!(d->nr[u].flags & F_TOUCHED)) {
        if (pv_inf(best)) return PF_OK;
        touch(d, u);
    }
    set_rhs(d, u, best);
    g = get_g(d, u);
    if (!pv_eq(g, best)) return heap_set(d, key_of(d, u));
    heap_remove(d, u);
    return PF_OK;
}

static pf_status update_spread(pf_graph_dstar *d, uint32_t v) {
    uint32_t lo, hi;
    const uint32_t *to, *edge;
    pf_status s;
    spread_arcs(d, v, &lo, &hi, &to, &edge);
    for (uint32_t a = lo; a < hi; a++)
        if ((s = update_vertex(d, to[a]))) return s;
    return PF_OK;
}

/* Starts anew rooted at r: every touched node forgotten. */
static pf_status reset_all(pf_graph_dstar *d, uint32_t r) {
    pv zero = {0, 0};
    for (uint32_t i = 0; i < d->ntouched; i++) {
        d->nr[d->touched[i]].flags = 0;
        d->nr[d->touched[i]].hidx = 0;
    }
    d->ntouched = 0;
    d->hlen = 0;
    d->km = 0;
    d->ktip = tip_of(d);
    d->root = r;
    d->need_reset = false;
    d->st.resets++;
    touch(d, r);
    set_rhs(d, r, zero);
    return heap_set(d, key_of(d, r));
}

/* Re-roots at x (MT-D* Lite's deletion, read from the values): keeps the
 * nodes whose shortest way to the old root runs through x, resets the
 * others and puts the reset ones next to the kept ones back on the open
 * list with their lookahead. */
static pf_status reroot(pf_graph_dstar *d, uint32_t x) {
    uint32_t nkeep = 0;
    pv gx = get_g(d, x);
    pf_status s = PF_OK;
    if (pv_inf(gx) || !pv_eq(gx, get_rhs(d, x))) return reset_all(d, x);
    d->queue[nkeep++] = x;
    d->nr[x].flags |= F_KEEP;
    for (uint32_t i = 0; i < nkeep; i++) {
        uint32_t w = d->queue[i], lo, hi;
        const uint32_t *to, *edge;
        pv gw = get_g(d, w);
        spread_arcs(d, w, &lo, &hi, &to, &edge);
        for (uint32_t a = lo; a < hi; a++) {
            uint32_t u = to[a], e = edge[a];
            pv gu;
            if ((d->nr[u].flags & (F_TOUCHED | F_KEEP)) != F_TOUCHED) continue;
            gu = get_g(d, u);
            if (pv_inf(gu) || !pv_eq(gu, get_rhs(d, u)) || !arc_on(d, e, u, w)) continue;
            if (!pv_eq(gu, pv_add(d->g->cost[e], gw))) continue;
            d->nr[u].flags |= F_KEEP;
            d->queue[nkeep++] = u;
        }
    }
    for (uint32_t i = 0; i < d->ntouched; i++) {
        nrec *r = &d->nr[d->touched[i]];
        if (!(r->flags & F_KEEP)) r->flags = 0;
        r->hidx = 0;
    }
    memcpy(d->touched, d->queue, (size_t)nkeep * sizeof(uint32_t));
    d->ntouched = nkeep;
    d->hlen = 0;
    d->km = 0;
    d->ktip = tip_of(d);
    d->root = x;
    for (uint32_t i = 0; i < nkeep && !s; i++) {
        uint32_t w = d->queue[i], lo, hi;
        const uint32_t *to, *edge;
        spread_arcs(d, w, &lo, &hi, &to, &edge);
        for (uint32_t a = lo; a < hi && !s; a++)
            if (!(d->nr[to[a]].flags & F_KEEP)) s = update_vertex(d, to[a]);
    }
    for (uint32_t i = 0; i < nkeep; i++) d->nr[d->queue[i]].flags &= ~F_KEEP;
    d->st.reroots++;
    d->st.kept += nkeep;
    if (s) d->need_reset = true;
    return s;
}

/* Recomputes every open key for the tip ktip with km 0. */
static void rekey(pf_graph_dstar *d) {
    d->km = 0;
    for (size_t i = 0; i < d->hlen; i++) d->heap[i] = key_of(d, d->heap[i].v);
    heapify(d);
}

/* D* Lite's ComputeShortestPath() within lim; *expanded and *next_poll
 * are the plan's counters (plan_limits.h), kept across its calls. */
static pf_status compute(pf_graph_dstar *d, const pf_plan_limits *lim, uint64_t *expanded,
                         uint64_t *next_poll) {
    uint32_t tip = d->ktip;
    pf_status s;
    while (d->hlen > 0) {
        hent top = d->heap[0], kt = key_of(d, tip), knew;
        uint32_t u = top.v;
        pv g, r;
        if (!key_less(&top, &kt) && pv_eq(get_g(d, tip), get_rhs(d, tip))) break;
        if ((s = pf_plan_limits_check(lim, *expanded, next_poll))) return s;
        knew = key_of(d, u);
        if (key_less(&top, &knew)) {
            d->heap[0] = knew;
            sift_down(d, 0);
            continue;
        }
        (*expanded)++;
        g = get_g(d, u);
        r = get_rhs(d, u);
        if (pv_less(r, g)) {
            set_g(d, u, r);
            heap_remove(d, u);
            if ((s = update_spread(d, u))) return s;
        } else {
            set_g(d, u, INF_PV);
            if ((s = update_vertex(d, u))) return s;
            if ((s = update_spread(d, u))) return s;
        }
    }
    return PF_OK;
}

/* ---- the session ---- */

static bool all_two_way(const pf__graph_topo *t) {
    for (uint32_t e = 0; e < t->m; e++)
        if (!t->eboth[e]) return false;
    return true;
}

size_t pf_graph_dstar_bound(const pf_graph *g) {
    const pf__graph_topo *t = g->t;
    size_t n = t->n, b = sizeof(pf_graph_dstar);
    b += n * (sizeof(nrec) + sizeof(hent) + 2 * sizeof(uint32_t));
    b += (n + 1) * 2 * sizeof(uint32_t);                                         /* path */
    if (!all_two_way(t)) b += (n + 1 + (size_t)t->narcs * 2) * sizeof(uint32_t); /* reversed */
    return b;
}

static pf_status build_reversed(pf_graph_dstar *d) {
    const pf__graph_topo *t = d->t;
    uint32_t *roff, *fill;
    if (all_two_way(t)) {
        d->roff = t->off, d->rfrom = t->arc_to, d->redge = t->arc_edge;
        return PF_OK;
    }
    if (!(d->rown = malloc(((size_t)t->n + 1 + 2 * (size_t)t->narcs) * sizeof(uint32_t))))
        return PF_ENOMEM;
    roff = d->rown;
    fill = roff + t->n + 1;
    memset(roff, 0, ((size_t)t->n + 1) * sizeof(uint32_t));
    for (uint32_t a = 0; a < t->narcs; a++) roff[t->arc_to[a] + 1]++;
    for (uint32_t v = 0; v < t->n; v++) roff[v + 1] += roff[v];
    {
        uint32_t *rfrom = fill, *redge = fill + t->narcs;
        uint32_t *pos = malloc(((size_t)t->n + 1) * sizeof(uint32_t));
        if (!pos) {
            free(d->rown);
            d->rown = NULL;
            return PF_ENOMEM;
        }
        memcpy(pos, roff, ((size_t)t->n + 1) * sizeof(uint32_t));
        for (uint32_t v = 0; v < t->n; v++)
            for (uint32_t a = t->off[v]; a < t->off[v + 1]; a++) {
                uint32_t k = pos[t->arc_to[a]]++;
                rfrom[k] = v;
                redge[k] = t->arc_edge[a];
            }
        free(pos);
        d->roff = roff, d->rfrom = rfrom, d->redge = redge;
    }
    return PF_OK;
}

pf_status pf_graph_dstar_create(const pf_graph *g, uint32_t agent, uint32_t goal,
                                pf_graph_dstar_root root, pf_graph_dstar **out) {
    pf_graph_dstar *d;
    uint32_t n = g->t->n;
    *out = NULL;
    if (agent >= n || goal >= n) return PF_ERANGE;
    if ((unsigned)root > PF_GRAPH_DSTAR_ROOT_AGENT) return PF_EINVAL;
    if (!(d = calloc(1, sizeof(*d)))) return PF_ENOMEM;
    d->g = g;
    d->t = g->t;
    d->n = n;
    d->agent = agent;
    d->goal = goal;
    d->mode = root;
    d->at_agent = root == PF_GRAPH_DSTAR_ROOT_AGENT;
    d->ratio = g->ratio;
    d->need_reset = true;
    d->nr = calloc(n, sizeof(nrec));
    d->touched = malloc((size_t)n * sizeof(uint32_t));
    d->queue = malloc((size_t)n * sizeof(uint32_t));
    if (!d->nr || !d->touched || !d->queue || build_reversed(d)) {
        free(d->nr);
        free(d->touched);
        free(d->queue);
        free(d);
        return PF_ENOMEM;
    }
    d->st.resets = 0;
    pf_graph_retain(g);
    *out = d;
    return PF_OK;
}

void pf_graph_dstar_destroy(pf_graph_dstar *d) {
    if (!d) return;
    pf_graph_release(d->g);
    free(d->nr);
    free(d->heap);
    free(d->touched);
    free(d->queue);
    free(d->rown);
    free(d->pn);
    free(d->pe);
    free(d);
}

size_t pf_graph_dstar_memory(const pf_graph_dstar *d) {
    size_t b = sizeof(*d) + (size_t)d->n * (sizeof(nrec) + 2 * sizeof(uint32_t));
    b += d->hcap * sizeof(hent) + d->pcap * 2 * sizeof(uint32_t);
    if (d->rown) b += ((size_t)d->n + 1 + 2 * (size_t)d->t->narcs) * sizeof(uint32_t);
    return b;
}

pf_status pf_graph_dstar_set_agent(pf_graph_dstar *d, uint32_t v) {
    if (v >= d->n) return PF_ERANGE;
    d->agent = v;
    return PF_OK;
}

pf_status pf_graph_dstar_set_goal(pf_graph_dstar *d, uint32_t v) {
    if (v >= d->n) return PF_ERANGE;
    if (v != d->goal) d->goal_moved = true;
    d->goal = v;
    return PF_OK;
}

uint32_t pf_graph_dstar_agent(const pf_graph_dstar *d) { return d->agent; }
uint32_t pf_graph_dstar_goal(const pf_graph_dstar *d) { return d->goal; }
const pf_graph *pf_graph_dstar_graph(const pf_graph_dstar *d) { return d->g; }

static pf_status update_node_and_around(pf_graph_dstar *d, uint32_t v) {
    pf_status s;
    if ((s = update_vertex(d, v))) return s;
    for (uint32_t a = d->t->off[v]; a < d->t->off[v + 1]; a++)
        if ((s = update_vertex(d, d->t->arc_to[a]))) return s;
    for (uint32_t a = d->roff[v]; a < d->roff[v + 1]; a++)
        if ((s = update_vertex(d, d->rfrom[a]))) return s;
    return PF_OK;
}

pf_status pf_graph_dstar_set_graph(pf_graph_dstar *d, const pf_graph *g) {
    const pf_graph *old = d->g;
    const pf__graph_topo *t = d->t;
    size_t nw;
    pf_status s = PF_OK;
    if (g->t != t) return PF_EINVAL;
    if (g == old) return PF_OK;
    pf_graph_retain(g);
    d->g = g;
    if (g->ratio < d->ratio) {
        d->ratio = g->ratio;
        rekey(d);
    }
    if (d->need_reset) goto out;
    for (uint32_t e = 0; e < t->m && !s; e++) {
        if (old->cost[e] == g->cost[e] && pf__bit(old->eon, e) == pf__bit(g->eon, e)) continue;
        d->st.changed_arcs += t->eboth[e] ? 2 : 1;
        if (!(s = update_vertex(d, t->efrom[e]))) s = update_vertex(d, t->eto[e]);
    }
    nw = ((size_t)t->n + 63) / 64;
    for (size_t w = 0; w < nw && !s; w++) {
        uint64_t x = old->non[w] ^ g->non[w];
        while (x && !s) {
            uint32_t v = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
            x &= x - 1;
            s = update_node_and_around(d, v);
        }
    }
out:
    pf_graph_release(old);
    if (s) d->need_reset = true; /* out of memory mid-way: the next plan starts anew */
    return PF_OK;
}

static pf_status path_room(pf_graph_dstar *d, size_t len) {
    uint32_t *pn, *pe;
    if (len <= d->pcap) return PF_OK;
    if (!(pn = realloc(d->pn, len * sizeof(uint32_t)))) return PF_ENOMEM;
    d->pn = pn;
    if (!(pe = realloc(d->pe, len * sizeof(uint32_t)))) return PF_ENOMEM;
    d->pe = pe;
    d->pcap = len;
    return PF_OK;
}

/* The path from the tip to the root along the look arcs, each step to the
 * neighbour whose value through the arc is least; PF_NO_PATH when it
 * cannot (the values do not lead to the root: never after a full repair). */
static pf_status extract(pf_graph_dstar *d, pf_graph_path *out) {
    uint32_t v = d->ktip, len = 0;
    double cost = 0;
    if (path_room(d, (size_t)d->n + 1)) return PF_ENOMEM;
    d->pn[len] = v;
    while (v != d->root) {
        uint32_t lo, hi, best = PF_GRAPH_NONE, be = 0;
        const uint32_t *to, *edge;
        pv bv = INF_PV;
        if (len >= d->n) return PF_NO_PATH;
        look_arcs(d, v, &lo, &hi, &to, &edge);
        for (uint32_t a = lo; a < hi; a++) {
            uint32_t w = to[a], e = edge[a];
            pv c;
            if (!arc_on(d, e, v, w)) continue;
            c = pv_add(d->g->cost[e], get_g(d, w));
            if (pv_less(c, bv)) bv = c, best = w, be = e;
        }
        if (best == PF_GRAPH_NONE) return PF_NO_PATH;
        cost += d->g->cost[be];
        d->pe[len] = be;
        d->pn[++len] = best;
        v = best;
    }
    if (d->at_agent) { /* tip = goal: the walk went backwards */
        for (uint32_t i = 0, j = len; i < j; i++, j--) {
            uint32_t x = d->pn[i];
            d->pn[i] = d->pn[j];
            d->pn[j] = x;
        }
        for (uint32_t i = 0, j = len ? len - 1 : 0; len && i < j; i++, j--) {
            uint32_t x = d->pe[i];
            d->pe[i] = d->pe[j];
            d->pe[j] = x;
        }
    }
    out->reached = true;
    out->end = d->goal;
    out->cost = cost;
    out->nodes = d->pn;
    out->edges = d->pe;
    out->len = (size_t)len + 1;
    return PF_OK;
}

/* Whether x (the root's end, moved) is on p, the path between the tip and
 * the old root, no farther from the old root than from the tip: then the
 * part between x and the tip is a shortest path between them (a part of a
 * shortest path is one) and p becomes that part; the search stays rooted
 * where it was (docs/moving-targets.md's "re-rooting is usually not
 * needed"). Farther, the search re-roots so that it stays about the way
 * still to go. */
static bool on_the_way(pf_graph_dstar *d, pf_graph_path *p, uint32_t x) {
    size_t i, n = p->len;
    double before = 0, after = 0;
    for (i = 0; i < n && p->nodes[i] != x; i++) {
    }
    if (i == n) return false;
    for (size_t k = 0; k + 1 < n; k++) {
        double c = d->g->cost[p->edges[k]];
        if (k < i)
            before += c;
        else
            after += c;
    }
    if (d->at_agent) { /* p runs old root ... x ... goal */
        if (before > after) return false;
        p->nodes += i;
        p->edges += i;
        p->len -= i;
        p->cost = after;
    } else { /* p runs agent ... x ... old root */
        if (after > before) return false;
        p->len = i + 1;
        p->cost = before;
    }
    return true;
}

/* The orientation for this plan (auto: graph_dstar.h): rooted at the goal,
 * turning to the agent at a goal move that comes within AUTO_TURN_WITHIN
 * plans of the one before, back after AUTO_TURN_BACK plans without one. */
#define AUTO_TURN_WITHIN 16
#define AUTO_TURN_BACK 32
static void orient(pf_graph_dstar *d) {
    bool want = d->at_agent;
    uint64_t now = d->st.plans, since = d->last_goal_move ? now - d->last_goal_move : UINT64_MAX;
    if (d->mode == PF_GRAPH_DSTAR_ROOT_GOAL) want = false;
    if (d->mode == PF_GRAPH_DSTAR_ROOT_AGENT) want = true;
    if (d->mode == PF_GRAPH_DSTAR_ROOT_AUTO) {
        if (!want && d->goal_moved && since <= AUTO_TURN_WITHIN) want = true;
        if (want && !d->goal_moved && since >= AUTO_TURN_BACK) want = false;
    }
    if (d->goal_moved) d->last_goal_move = now;
    d->goal_moved = false;
    if (want != d->at_agent) {
        d->at_agent = want;
        d->need_reset = true;
    }
}

pf_status pf_graph_dstar_plan(pf_graph_dstar *d, const pf_plan_limits *lim, pf_graph_path *out) {
    uint32_t root, tip;
    uint64_t expanded = 0, next_poll = pf_plan_limits_first_poll(lim);
    bool lazy;
    pf_status s;
    memset(out, 0, sizeof(*out));
    out->end = PF_GRAPH_NONE;
    d->st.plans++;
    orient(d);
    root = d->at_agent ? d->agent : d->goal;
    tip = tip_of(d);
    /* The root's end moved: first see whether the search from the old root
     * still leads through it (below); re-root only when it does not. */
    lazy = !d->need_reset && root != d->root;
    if (d->need_reset)
        s = reset_all(d, root);
    else
        s = PF_OK;
    if (s) goto fail;
    if (tip != d->ktip) {
        /* The tip moved: keys already open stay lower bounds (D* Lite's km),
         * raised a hair so rounding cannot make one exceed its true key. */
        d->km += h(d, d->ktip, tip) * (1 + 1e-9);
        d->ktip = tip;
    }
    if (!node_on(d->g, d->agent) || !node_on(d->g, d->goal)) return PF_EBLOCKED;
    if (d->agent == d->goal) {
        if (path_room(d, 1)) return PF_ENOMEM;
        d->pn[0] = d->agent;
        out->reached = true;
        out->end = d->goal;
        out->nodes = d->pn;
        out->edges = d->pe;
        out->len = 1;
        return PF_OK;
    }
    s = compute(d, lim, &expanded, &next_poll);
    if (!s && lazy) {
        if (!pv_inf(get_g(d, tip)) && extract(d, out) == PF_OK && on_the_way(d, out, root)) {
            out->expanded = expanded;
            d->st.expanded += expanded;
            d->st.kept_roots++;
            return PF_OK;
        }
        memset(out, 0, sizeof(*out));
        out->end = PF_GRAPH_NONE;
        if (!(s = reroot(d, root))) s = compute(d, lim, &expanded, &next_poll);
    }
    out->expanded = expanded;
    d->st.expanded += expanded;
    if (s) goto fail;
    if (pv_inf(get_g(d, tip))) return PF_NO_PATH;
    s = extract(d, out);
    out->expanded = expanded;
    if (s == PF_NO_PATH) {
        /* Values that do not lead home would be a bug; start anew next time
         * rather than answer a wrong path. */
        d->need_reset = true;
        return PF_NO_PATH;
    }
    return s;
fail:
    if (s == PF_ENOMEM) d->need_reset = true;
    return s;
}

void pf_graph_dstar_get_stats(const pf_graph_dstar *d, pf_graph_dstar_stats *s) {
    *s = d->st;
    s->rooted_at_agent = d->at_agent;
}
