/* graph_ch.c -- a contraction hierarchy of one graph version (graph.h's
 * "ch"; Geisberger, Sanders, Schultes and Delling 2008).
 *
 * Build: the nodes are contracted one by one in the order of a priority,
 * the edge difference (shortcuts the contraction adds less the arcs it
 * removes) plus the neighbours already contracted, kept lazily (a node
 * popped is measured again and goes back when it is no longer the least)
 * (the neighbours of a contracted node count it, and are measured again
 * when popped).
 * Contracting v: for each arc u->v and v->w between nodes not yet
 * contracted, a witness search (Dijkstra from u avoiding v, at most
 * witness_settle nodes settled, never past the shortcut's cost) looks for
 * a way from u to w at most as cheap; without one a shortcut u->w of cost
 * c(u,v) + c(v,w) is added (a parallel arc keeps the cheaper). A witness
 * search cut short only adds a shortcut that was not needed, never loses
 * a distance. Each arc left at v when v is contracted goes up (to a node
 * contracted later): v->w to v's forward arcs, u->v to v's backward arcs.
 *
 * Query: Dijkstra forward from s over the forward arcs and backward from
 * t over the backward arcs, each direction stopped once its least open key
 * is no less than the best meeting cost. The path is unpacked through each
 * shortcut's middle into the version's edges, and its cost summed over
 * them in order.
 *
 * The hierarchy is built on the version's enabled edges between enabled
 * nodes at their costs: each version has its own (graph.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_ch_internal.h"

/* ---- a min-heap of (key, node) ---- */

static pf_status hpush(heap *h, double k, uint32_t v, uint32_t tag) {
    size_t i;
    if (h->len == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        hent *a = cap > SIZE_MAX / sizeof(*a) ? NULL : realloc(h->a, cap * sizeof(*a));
        if (!a) return PF_ENOMEM;
        h->a = a;
        h->cap = cap;
    }
    i = h->len++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (h->a[up].k < k || (h->a[up].k == k && h->a[up].v <= v)) break;
        h->a[i] = h->a[up];
        i = up;
    }
    h->a[i] = (hent){k, v, tag};
    return PF_OK;
}

static hent hpop(heap *h) {
    hent top = h->a[0], last = h->a[--h->len];
    size_t i = 0, n = h->len;
    for (;;) {
        size_t l = 2 * i + 1, b = l;
        if (l >= n) break;
        if (l + 1 < n && (h->a[l + 1].k < h->a[l].k ||
                          (h->a[l + 1].k == h->a[l].k && h->a[l + 1].v < h->a[l].v)))
            b = l + 1;
        if (last.k < h->a[b].k || (last.k == h->a[b].k && last.v <= h->a[b].v)) break;
        h->a[i] = h->a[b];
        i = b;
    }
    if (n) h->a[i] = last;
    return top;
}

/* ---- the build ---- */

typedef struct darc {
    uint32_t v, rec;
    double cost;
} darc;

typedef struct dlist {
    darc *a;
    uint32_t len, cap;
} dlist;

typedef struct builder {
    const pf_graph *g;
    uint32_t n;
    dlist *out, *in;
    uint8_t *done;
    uint32_t *deleted; /* contracted neighbours */
    ch_rec *rec;
    uint32_t nrec, reccap;
    uint64_t shortcuts, max_shortcuts;
    uint32_t settle;
    /* witness search scratch */
    double *dist;
    uint32_t *seen, stamp;
    heap wh;
    /* final arcs before CSR: per node */
    dlist *up_f, *up_b;
    uint32_t *order, norder; /* the nodes in the order contracted */
    pf_build_stop *stop;     /* NULL: never stops */
} builder;

static pf_status dl_add(dlist *l, uint32_t v, uint32_t rec, double cost) {
    if (l->len == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 4;
        darc *a = cap < l->cap ? NULL : realloc(l->a, (size_t)cap * sizeof(*a));
        if (!a) return PF_ENOMEM;
        l->a = a;
        l->cap = cap;
    }
    l->a[l->len++] = (darc){v, rec, cost};
    return PF_OK;
}

static void dl_remove(dlist *l, uint32_t v) {
    for (uint32_t i = 0; i < l->len; i++)
        if (l->a[i].v == v) {
            l->a[i] = l->a[--l->len];
            return;
        }
}

static darc *dl_find(dlist *l, uint32_t v) {
    for (uint32_t i = 0; i < l->len; i++)
        if (l->a[i].v == v) return &l->a[i];
    return NULL;
}

static pf_status new_rec(builder *b, uint32_t a, uint32_t bb, uint32_t mid, uint32_t *id) {
    if (b->nrec == b->reccap) {
        uint32_t cap = b->reccap ? b->reccap * 2 : 64;
        ch_rec *r = cap < b->reccap ? NULL : realloc(b->rec, (size_t)cap * sizeof(*r));
        if (!r) return PF_ENOMEM;
        b->rec = r;
        b->reccap = cap;
    }
    b->rec[b->nrec] = (ch_rec){a, bb, mid};
    *id = b->nrec++;
    return PF_OK;
}

/* An arc u->w of cost c and record rec, or a cheaper one replacing a
 * parallel arc (a dearer one changes nothing). */
static pf_status add_arc(builder *b, uint32_t u, uint32_t w, double c, uint32_t rec) {
    darc *o = dl_find(&b->out[u], w);
    pf_status st;
    if (o) {
        darc *i = dl_find(&b->in[w], u);
        if (o->cost <= c) return PF_OK;
        o->cost = c;
        o->rec = rec;
        i->cost = c;
        i->rec = rec;
        return PF_OK;
    }
    if ((st = dl_add(&b->out[u], w, rec, c))) return st;
    return dl_add(&b->in[w], u, rec, c);
}

/* Dijkstra from u over nodes not contracted, avoiding `skip`, until
 * `limit` is passed or b->settle nodes are settled; b->dist[x] (seen ==
 * stamp) is then an upper bound of u's distance to x avoiding skip. */
static pf_status witness(builder *b, uint32_t u, uint32_t skip, double limit) {
    uint32_t settled = 0;
    pf_status st;
    if (++b->stamp == 0) {
        memset(b->seen, 0, (size_t)b->n * sizeof(uint32_t));
        b->stamp = 1;
    }
    b->wh.len = 0;
    b->seen[u] = b->stamp;
    b->dist[u] = 0;
    if ((st = hpush(&b->wh, 0, u, 0))) return st;
    while (b->wh.len) {
        hent e = hpop(&b->wh);
        const dlist *l;
        if (e.k > b->dist[e.v]) continue;
        if (e.k > limit || ++settled > b->settle) break;
        l = &b->out[e.v];
        /* A node settled and its arcs scanned. */
        if (pf_build_tick(b->stop, 1 + (uint64_t)l->len)) return PF_ECANCELED;
        for (uint32_t i = 0; i < l->len; i++) {
            uint32_t x = l->a[i].v;
            double d = e.k + l->a[i].cost;
            if (x == skip || d > limit) continue;
            if (b->seen[x] == b->stamp && b->dist[x] <= d) continue;
            b->seen[x] = b->stamp;
            b->dist[x] = d;
            if ((st = hpush(&b->wh, d, x, 0))) return st;
        }
    }
    return PF_OK;
}

/* Contracts v (apply) or counts the shortcuts it would add (*count). */
static pf_status contract(builder *b, uint32_t v, bool apply, int64_t *count) {
    dlist *in = &b->in[v], *out = &b->out[v];
    double maxout = 0;
    pf_status st;
    *count = 0;
    for (uint32_t j = 0; j < out->len; j++)
        if (out->a[j].cost > maxout) maxout = out->a[j].cost;
    for (uint32_t i = 0; i < in->len; i++) {
        uint32_t u = in->a[i].v;
        double cu = in->a[i].cost;
        if ((st = witness(b, u, v, cu + maxout))) return st;
        for (uint32_t j = 0; j < out->len; j++) {
            uint32_t w = out->a[j].v, rec;
            double c = cu + out->a[j].cost;
            if (w == u) continue;
            if (b->seen[w] == b->stamp && b->dist[w] <= c) continue;
            (*count)++;
            if (!apply) continue;
            if (b->shortcuts >= b->max_shortcuts) return PF_ELIMIT;
            if ((st = new_rec(b, in->a[i].rec, out->a[j].rec, v, &rec))) return st;
            /* in/out may move: add_arc never touches v's lists (u, w != v). */
            if ((st = add_arc(b, u, w, c, rec))) return st;
            b->shortcuts++;
        }
    }
    return PF_OK;
}

static pf_status priority(builder *b, uint32_t v, double *prio) {
    int64_t sc;
    pf_status st = contract(b, v, false, &sc);
    *prio = (double)sc - (double)b->in[v].len - (double)b->out[v].len + (double)b->deleted[v];
    return st;
}

static void builder_free(builder *b) {
    for (uint32_t v = 0; b->out && v < b->n; v++) free(b->out[v].a);
    for (uint32_t v = 0; b->in && v < b->n; v++) free(b->in[v].a);
    for (uint32_t v = 0; b->up_f && v < b->n; v++) free(b->up_f[v].a);
    for (uint32_t v = 0; b->up_b && v < b->n; v++) free(b->up_b[v].a);
    free(b->out);
    free(b->in);
    free(b->up_f);
    free(b->up_b);
    free(b->done);
    free(b->deleted);
    free(b->rec);
    free(b->dist);
    free(b->seen);
    free(b->wh.a);
    free(b->order);
}

/* The version's enabled arcs between enabled nodes, without self loops,
 * parallel arcs the cheapest. */
static pf_status load(builder *b) {
    const pf_graph *g = b->g;
    const pf__graph_topo *t = g->t;
    pf_status st;
    for (uint32_t e = 0; e < t->m; e++) {
        uint32_t u = t->efrom[e], w = t->eto[e], rec;
        if (pf_build_tick_every(b->stop, e)) return PF_ECANCELED;
        if (u == w || !pf__bit(g->eon, e) || !pf__bit(g->non, u) || !pf__bit(g->non, w)) continue;
        if ((st = new_rec(b, e, PF_GRAPH_NONE, PF_GRAPH_NONE, &rec))) return st;
        if ((st = add_arc(b, u, w, g->cost[e], rec))) return st;
        if (t->eboth[e] && (st = add_arc(b, w, u, g->cost[e], rec))) return st;
    }
    return PF_OK;
}

static pf_status to_csr(const builder *b, const dlist *l, uint32_t **off_out, ch_arc **arcs_out) {
    size_t total = 0;
    uint32_t *off = malloc(((size_t)b->n + 1) * sizeof(uint32_t));
    ch_arc *a;
    for (uint32_t v = 0; v < b->n; v++) total += l[v].len;
    a = malloc((total ? total : 1) * sizeof(ch_arc));
    if (!off || !a || total > UINT32_MAX) {
        free(off);
        free(a);
        return PF_ENOMEM;
    }
    total = 0;
    for (uint32_t v = 0; v < b->n; v++) {
        off[v] = (uint32_t)total;
        for (uint32_t i = 0; i < l[v].len; i++)
            a[total++] = (ch_arc){l[v].a[i].v, l[v].a[i].rec, l[v].a[i].cost};
    }
    off[b->n] = (uint32_t)total;
    *off_out = off;
    *arcs_out = a;
    return PF_OK;
}

void pf__graph_ch_free(struct pf__graph_ch *ch) {
    if (!ch) return;
    free(ch->fwd_off);
    free(ch->bwd_off);
    free(ch->fwd);
    free(ch->bwd);
    free(ch->rec);
    pf__graph_labels_free(ch->hl);
    free(ch);
}

pf_status pf_graph_ch_attach(pf_graph *g, const pf_graph_ch_limits *lim) {
    builder b;
    heap pq = {NULL, 0, 0};
    uint32_t *ver = NULL;
    struct pf__graph_ch *ch = NULL;
    uint32_t n = g->t->n;
    pf_status st = PF_ENOMEM;
    if (g->ch) return PF_OK;
    memset(&b, 0, sizeof(b));
    b.g = g;
    b.n = n;
    b.settle = lim && lim->witness_settle ? lim->witness_settle : PF_GRAPH_CH_WITNESS_SETTLE;
    b.max_shortcuts = lim && lim->max_shortcuts ? lim->max_shortcuts : UINT32_MAX / 2;
    b.stop = lim ? lim->stop : NULL;
    b.out = calloc(n, sizeof(dlist));
    b.in = calloc(n, sizeof(dlist));
    b.up_f = calloc(n, sizeof(dlist));
    b.up_b = calloc(n, sizeof(dlist));
    b.done = calloc(n, 1);
    b.deleted = calloc(n, sizeof(uint32_t));
    b.dist = calloc(n, sizeof(double));
    b.seen = calloc(n, sizeof(uint32_t));
    b.order = calloc(n ? n : 1, sizeof(uint32_t));
    ver = calloc(n, sizeof(uint32_t));
    if (!b.out || !b.in || !b.up_f || !b.up_b || !b.done || !b.deleted || !b.dist || !b.seen ||
        !b.order || !ver)
        goto out;
    if ((st = load(&b))) goto out;
    for (uint32_t v = 0; v < n; v++) {
        double p;
        if ((st = priority(&b, v, &p)) || (st = hpush(&pq, p, v, 0))) goto out;
    }
    while (pq.len) {
        hent e = hpop(&pq);
        uint32_t v = e.v;
        double p;
        int64_t sc;
        if (b.done[v] || e.tag != ver[v]) continue;
        /* Lazy update: measured again; back in when no longer the least. */
        if ((st = priority(&b, v, &p))) goto out;
        if (pq.len && p > pq.a[0].k) {
            if ((st = hpush(&pq, p, v, ++ver[v]))) goto out;
            continue;
        }
        if ((st = contract(&b, v, true, &sc))) goto out;
        b.done[v] = 1;
        b.order[b.norder++] = v;
        /* Its arcs moved up, its neighbours' lists searched. */
        if (pf_build_tick(b.stop, 1 + (uint64_t)b.out[v].len + b.in[v].len)) {
            st = PF_ECANCELED;
            goto out;
        }
        /* v's arcs go up; its neighbours lose them and are measured anew. */
        for (uint32_t i = 0; i < b.out[v].len; i++) {
            darc a = b.out[v].a[i];
            if ((st = dl_add(&b.up_f[v], a.v, a.rec, a.cost))) goto out;
            dl_remove(&b.in[a.v], v);
        }
        for (uint32_t i = 0; i < b.in[v].len; i++) {
            darc a = b.in[v].a[i];
            if ((st = dl_add(&b.up_b[v], a.v, a.rec, a.cost))) goto out;
            dl_remove(&b.out[a.v], v);
        }
        /* Neighbours count it; their priorities are measured again when
         * they are popped (lazy), not now (a witness search each). */
        for (int k = 0; k < 2; k++) {
            const dlist *l = k ? &b.in[v] : &b.out[v];
            for (uint32_t i = 0; i < l->len; i++) b.deleted[l->a[i].v]++;
        }
        b.out[v].len = b.in[v].len = 0;
    }
    if (!(ch = calloc(1, sizeof(*ch)))) goto out;
    ch->n = n;
    ch->shortcuts = b.shortcuts;
    if ((st = to_csr(&b, b.up_f, &ch->fwd_off, &ch->fwd)) ||
        (st = to_csr(&b, b.up_b, &ch->bwd_off, &ch->bwd)))
        goto out;
    ch->rec = b.rec;
    ch->nrec = b.nrec;
    b.rec = NULL;
    ch->bytes = sizeof(*ch) + 2 * ((size_t)n + 1) * sizeof(uint32_t) +
                ((size_t)ch->fwd_off[n] + ch->bwd_off[n]) * sizeof(ch_arc) +
                (size_t)ch->nrec * sizeof(ch_rec);
    /* Hub labels when asked for and they fit: the hierarchy stays
     * without them otherwise (its queries search). */
    ch->hl_absent = "disabled";
    if (lim && lim->max_label_bytes) {
        switch (pf__graph_labels_build(ch, b.order, lim->max_label_bytes, b.stop, &ch->hl)) {
        case PF_OK:
            ch->hl_absent = NULL;
            ch->bytes += pf__graph_labels_bytes(ch->hl);
            break;
        case PF_ELIMIT:
            ch->hl_absent = "label_cap";
            break;
        case PF_ECANCELED:
            ch->hl_absent = "build_deadline";
            break;
        default:
            ch->hl_absent = "no_memory";
            break;
        }
    }
    g->ch = ch;
    g->bytes += ch->bytes;
    ch = NULL;
    st = PF_OK;
out:
    pf__graph_ch_free(ch);
    builder_free(&b);
    free(pq.a);
    free(ver);
    return st;
}

bool pf_graph_ch_ready(const pf_graph *g) { return g->ch != NULL; }

uint64_t pf_graph_ch_shortcuts(const pf_graph *g) { return g->ch ? g->ch->shortcuts : 0; }

const char *pf_graph_ch_labels(const pf_graph *g, uint64_t *entries, size_t *bytes) {
    *entries = g->ch && g->ch->hl ? pf__graph_labels_entries(g->ch->hl) : 0;
    *bytes = g->ch && g->ch->hl ? pf__graph_labels_bytes(g->ch->hl) : 0;
    return !g->ch ? "no_hierarchy" : g->ch->hl_absent;
}

bool pf_graph_ch_usable(const pf_graph *g, const pf_graph_query *q) {
    return g->ch && !q->partial && !q->ngoals && !q->nstarts && !q->exclude_tags;
}

/* ---- the query ---- */

static void side_free(side *s) {
    free(s->d);
    free(s->seen);
    free(s->prec);
    free(s->prev);
    free(s->closed);
    free(s->h.a);
}

void pf__graph_ch_scratch_free(struct pf__graph_ch_scratch *x) {
    if (!x) return;
    side_free(&x->s[0]);
    side_free(&x->s[1]);
    free(x->path_nodes);
    free(x->path_edges);
    free(x->stack);
    free(x->recs);
    free(x);
}

size_t pf__graph_ch_scratch_memory(const struct pf__graph_ch_scratch *x) {
    if (!x) return 0;
    return sizeof(*x) + (size_t)x->cap * 2 * (sizeof(double) + 3 * sizeof(uint32_t) + 1) +
           (x->s[0].h.cap + x->s[1].h.cap) * sizeof(hent) +
           (x->nodes_cap + x->edges_cap + x->stack_cap + x->recs_cap) * sizeof(uint32_t);
}

pf_status pf__graph_ch_scratch_ready(struct pf__graph_ch_scratch **xp, uint32_t n) {
    struct pf__graph_ch_scratch *x = *xp;
    if (!x && !(x = *xp = calloc(1, sizeof(*x)))) return PF_ENOMEM;
    if (n > x->cap) {
        for (int k = 0; k < 2; k++) {
            side *s = &x->s[k];
            void *p;
            if (!(p = realloc(s->d, (size_t)n * sizeof(double)))) return PF_ENOMEM;
            s->d = p;
            if (!(p = realloc(s->prec, (size_t)n * sizeof(uint32_t)))) return PF_ENOMEM;
            s->prec = p;
            if (!(p = realloc(s->prev, (size_t)n * sizeof(uint32_t)))) return PF_ENOMEM;
            s->prev = p;
            if (!(p = realloc(s->closed, n))) return PF_ENOMEM;
            s->closed = p;
            if (!(p = realloc(s->seen, (size_t)n * sizeof(uint32_t)))) return PF_ENOMEM;
            s->seen = p;
            memset(s->seen, 0, (size_t)n * sizeof(uint32_t));
        }
        x->cap = n;
        x->stamp = 0;
    }
    if (++x->stamp == 0) {
        for (int k = 0; k < 2; k++) memset(x->s[k].seen, 0, (size_t)x->cap * sizeof(uint32_t));
        x->stamp = 1;
    }
    x->s[0].h.len = x->s[1].h.len = 0;
    return PF_OK;
}

pf_status pf__graph_ch_grow(uint32_t **a, size_t *cap, size_t need) {
    uint32_t *p;
    if (need <= *cap) return PF_OK;
    if (!(p = realloc(*a, need * sizeof(uint32_t)))) return PF_ENOMEM;
    *a = p;
    *cap = need;
    return PF_OK;
}

/* Appends record r's original edges, in order, to the path's edges. */
static pf_status unpack(struct pf__graph_ch_scratch *x, const struct pf__graph_ch *ch, uint32_t r,
                        size_t *len) {
    size_t sp = 0;
    pf_status st;
    if ((st = pf__graph_ch_grow(&x->stack, &x->stack_cap, 16))) return st;
    x->stack[sp++] = r;
    while (sp) {
        const ch_rec *c = &ch->rec[x->stack[--sp]];
        if (c->mid == PF_GRAPH_NONE) {
            if ((st = pf__graph_ch_grow(&x->path_edges, &x->edges_cap, *len + 1))) return st;
            x->path_edges[(*len)++] = c->a;
            continue;
        }
        if ((st = pf__graph_ch_grow(&x->stack, &x->stack_cap, sp + 2))) return st;
        x->stack[sp++] = c->b;
        x->stack[sp++] = c->a;
    }
    return PF_OK;
}

pf_status pf__graph_ch_write_recs(const pf_graph *g, struct pf__graph_ch_scratch *x, uint32_t s,
                                  const uint32_t *recs, size_t nrec, pf_graph_path *out) {
    const pf__graph_topo *t = g->t;
    size_t ne = 0;
    uint32_t cur;
    double cost = 0;
    pf_status st;
    for (size_t i = 0; i < nrec; i++)
        if ((st = unpack(x, g->ch, recs[i], &ne))) return st;
    if ((st = pf__graph_ch_grow(&x->path_edges, &x->edges_cap, ne + 1)) ||
        (st = pf__graph_ch_grow(&x->path_nodes, &x->nodes_cap, ne + 1)))
        return st;
    cur = s;
    x->path_nodes[0] = s;
    for (size_t i = 0; i < ne; i++) {
        uint32_t e = x->path_edges[i];
        cur = t->efrom[e] == cur ? t->eto[e] : t->efrom[e];
        x->path_nodes[i + 1] = cur;
        cost += g->cost[e];
    }
    out->nodes = x->path_nodes;
    out->edges = x->path_edges;
    out->len = ne + 1;
    out->end = cur;
    out->cost = cost;
    out->reached = true;
    return PF_OK;
}

/* The records from s up to meet (forward), then from meet down to the
 * goal (backward), as the two searches left them. */
static pf_status write_path(const pf_graph *g, struct pf__graph_ch_scratch *x, uint32_t s,
                            uint32_t meet, pf_graph_path *out) {
    size_t nrec = 0;
    pf_status st;
    for (uint32_t v = meet; v != s; v = x->s[0].prev[v]) {
        if ((st = pf__graph_ch_grow(&x->recs, &x->recs_cap, nrec + 1))) return st;
        x->recs[nrec++] = x->s[0].prec[v];
    }
    for (size_t i = 0; i < nrec / 2; i++) {
        uint32_t tmp = x->recs[i];
        x->recs[i] = x->recs[nrec - 1 - i];
        x->recs[nrec - 1 - i] = tmp;
    }
    for (uint32_t v = meet; x->s[1].prev[v] != PF_GRAPH_NONE; v = x->s[1].prev[v]) {
        if ((st = pf__graph_ch_grow(&x->recs, &x->recs_cap, nrec + 1))) return st;
        x->recs[nrec++] = x->s[1].prec[v];
    }
    return pf__graph_ch_write_recs(g, x, s, x->recs, nrec, out);
}

/* Stall-on-demand (Geisberger et al.): v reached at d by this side is
 * not on a shortest up-path when a higher node this side has seen reaches
 * it cheaper by the arc between them (the other direction's up arcs of v,
 * read backwards); its arcs are then not relaxed. Only ever skips work a
 * shortest path does not need: answers stay exact. */
static bool stalled(const struct pf__graph_ch *ch, const side *sd, uint32_t stamp, int turn,
                    uint32_t v, double d) {
    const uint32_t *off = turn ? ch->fwd_off : ch->bwd_off;
    const ch_arc *arcs = turn ? ch->fwd : ch->bwd;
    for (uint32_t a = off[v]; a < off[v + 1]; a++) {
        uint32_t u = arcs[a].v;
        if (sd->seen[u] == stamp && sd->d[u] + arcs[a].cost < d) return true;
    }
    return false;
}

pf_status pf__graph_ch_search(const pf_graph *g, struct pf__graph_ch_scratch **xp,
                              const pf_graph_query *q, pf_graph_path *out) {
    const struct pf__graph_ch *ch = g->ch;
    struct pf__graph_ch_scratch *x;
    double best = INFINITY;
    uint32_t meet = PF_GRAPH_NONE;
    bool stopped[2] = {false, false};
    pf_status st;
    if ((st = pf__graph_ch_scratch_ready(xp, ch->n))) return st;
    x = *xp;
    /* Hub labels answer without a search, unless a budget smaller than
     * the labels asks for the search's own count. */
    if (ch->hl && !q->max_expanded) return pf__graph_labels_search(g, x, q, out);
    for (int k = 0; k < 2; k++) {
        side *sd = &x->s[k];
        uint32_t v = k ? q->goal : q->start;
        sd->seen[v] = x->stamp;
        sd->d[v] = 0;
        sd->prev[v] = PF_GRAPH_NONE;
        sd->prec[v] = PF_GRAPH_NONE;
        sd->closed[v] = 0;
        if ((st = hpush(&sd->h, 0, v, 0))) return st;
    }
    for (int turn = 0; !stopped[0] || !stopped[1]; turn ^= 1) {
        side *sd = &x->s[turn], *other = &x->s[turn ^ 1];
        const uint32_t *off = turn ? ch->bwd_off : ch->fwd_off;
        const ch_arc *arcs = turn ? ch->bwd : ch->fwd;
        hent e;
        if (stopped[turn]) continue;
        if (!sd->h.len || sd->h.a[0].k >= best) {
            stopped[turn] = true;
            continue;
        }
        e = hpop(&sd->h);
        if (sd->closed[e.v] || e.k > sd->d[e.v]) continue;
        if (q->max_expanded && out->expanded >= q->max_expanded) return PF_EBUDGET;
        if (q->stop && (out->expanded & 255) == 255 && q->stop(q->stop_arg)) return PF_ECANCELED;
        sd->closed[e.v] = 1;
        out->expanded++;
        if (other->seen[e.v] == x->stamp && e.k + other->d[e.v] < best) {
            best = e.k + other->d[e.v];
            meet = e.v;
        }
        if (stalled(ch, sd, x->stamp, turn, e.v, e.k)) continue;
        for (uint32_t a = off[e.v]; a < off[e.v + 1]; a++) {
            uint32_t w = arcs[a].v;
            double d = e.k + arcs[a].cost;
            if (sd->seen[w] == x->stamp && sd->d[w] <= d) continue;
            sd->seen[w] = x->stamp;
            sd->closed[w] = 0;
            sd->d[w] = d;
            sd->prev[w] = e.v;
            sd->prec[w] = arcs[a].rec;
            if (other->seen[w] == x->stamp && d + other->d[w] < best) {
                best = d + other->d[w];
                meet = w;
            }
            if ((st = hpush(&sd->h, d, w, 0))) return st;
        }
    }
    if (meet == PF_GRAPH_NONE) return PF_NO_PATH;
    return write_path(g, x, q->start, meet, out);
}
