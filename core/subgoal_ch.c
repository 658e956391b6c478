/* subgoal_ch.c -- a contraction hierarchy over a subgoal graph: build and
 * the meet-in-the-middle query (subgoal.h). */
#include <stdlib.h>
#include <string.h>

#include "landmarks.h"
#include "subgoal_internal.h"

struct pf_subgoal_ch {
    int32_t n;
    int32_t ncore; /* left uncontracted: the ranks n - ncore .. n - 1 */
    int32_t *rank;
    int64_t *up_off; /* per subgoal: its arcs to higher ranks */
    int32_t *up;
    int32_t *mid;      /* the contracted subgoal a shortcut bridges, or -1 */
    int32_t (*kid)[2]; /* a shortcut's halves: its arcs {owner, mid}, {mid, up} */
    double *cost;
    int64_t shortcuts;
    uint64_t work; /* the build's */
};

typedef struct ch_arc {
    int32_t v, mid;
    double c;
} ch_arc;

/* A subgoal's arcs: those to uncontracted subgoals first (a[0..live)),
 * the ones to contracted subgoals after them, so the witness searches
 * scan only the graph that is left. */
typedef struct ch_list {
    ch_arc *a;
    int32_t n, live, cap;
} ch_list;

/* The arc u -> v at cost c (through mid), v uncontracted: added, or lowered
 * when shorter. -1 out of memory, 1 added, 0 not. */
static int arc_put(ch_list *l, int32_t v, double c, int32_t mid) {
    for (int32_t i = 0; i < l->live; i++)
        if (l->a[i].v == v) {
            if (c < l->a[i].c) {
                l->a[i].c = c;
                l->a[i].mid = mid;
            }
            return 0;
        }
    if (l->n == l->cap) {
        int32_t nc = l->cap ? l->cap * 2 : 4;
        ch_arc *na = realloc(l->a, (size_t)nc * sizeof(*na));
        if (!na) return -1;
        l->a = na;
        l->cap = nc;
    }
    if (l->live < l->n) l->a[l->n] = l->a[l->live]; /* the first contracted one moves last */
    l->n++;
    l->a[l->live++] = (ch_arc){v, mid, c};
    return 1;
}

/* x is contracted: the arc from v to x moves out of v's live arcs. */
static void arc_retire(ch_list *l, int32_t x) {
    for (int32_t i = 0; i < l->live; i++)
        if (l->a[i].v == x) {
            ch_arc t = l->a[i];
            l->a[i] = l->a[--l->live];
            l->a[l->live] = t;
            return;
        }
}

typedef struct ch_build {
    int32_t n;
    ch_list *l;
    uint8_t *done;
    int32_t *cnbr;
    double *wd;
    uint32_t *wseen, *wtarget, wt;
    pf__sg_heap wh;
    int32_t *live, nlive; /* scratch: x's live neighbours */
    int32_t (*pend)[2];   /* the shortcuts contract found: pairs of indices into live */
    size_t npend, pend_cap;
    double *lc;
    int64_t arcs;
    uint64_t work; /* witness arcs scanned and neighbour pairs checked */
} ch_build;

/* Settles at most this many nodes a witness search. */
#define CH_WITNESS_SETTLE 256
#define PRIO_EDGES 2.0

/* The shortcuts contracting x needs, into b->pend (their number; -1 out
 * of memory). Each live neighbour but the last runs a witness search:
 * Dijkstra around x over the uncontracted subgoals, as far as the longest
 * way through x, at most CH_WITNESS_SETTLE settled, and done as soon as
 * every neighbour after it is settled. x's live neighbours are left in
 * b->live for commit. */
static int64_t contract(ch_build *b, int32_t x) {
    ch_list *lx = &b->l[x];
    int32_t nl = 0;
    double far = 0;
    b->npend = 0;
    for (int32_t i = 0; i < lx->live; i++) {
        b->live[nl] = lx->a[i].v;
        b->lc[nl] = lx->a[i].c;
        if (lx->a[i].c > far) far = lx->a[i].c;
        nl++;
    }
    b->nlive = nl;
    for (int32_t i = 0; i + 1 < nl; i++) {
        int32_t v0 = b->live[i], left = nl - 1 - i;
        double limit = b->lc[i] + far;
        if (++b->wt == 0) {
            memset(b->wseen, 0, (size_t)b->n * sizeof(*b->wseen));
            memset(b->wtarget, 0, (size_t)b->n * sizeof(*b->wtarget));
            b->wt = 1;
        }
        for (int32_t j = i + 1; j < nl; j++) b->wtarget[b->live[j]] = b->wt;
        b->wh.n = 0;
        b->wd[v0] = 0;
        b->wseen[v0] = b->wt;
        if (!pf__sg_heap_push(&b->wh, 0, v0)) return -1;
        int settled = 0;
        while (b->wh.n && settled < CH_WITNESS_SETTLE) {
            pf__sg_item it = pf__sg_heap_pop(&b->wh);
            if (it.f > b->wd[it.v]) continue;
            if (it.f > limit) break;
            if (b->wtarget[it.v] == b->wt && --left == 0) break;
            settled++;
            const ch_list *lu = &b->l[it.v];
            b->work += 1 + (uint64_t)lu->live;
            for (int32_t k = 0; k < lu->live; k++) {
                int32_t v = lu->a[k].v;
                double d = it.f + lu->a[k].c;
                if (v == x || d > limit) continue;
                if (b->wseen[v] == b->wt && b->wd[v] <= d) continue;
                b->wseen[v] = b->wt;
                b->wd[v] = d;
                if (!pf__sg_heap_push(&b->wh, d, v)) return -1;
            }
        }
        b->work += (uint64_t)(nl - i);
        for (int32_t j = i + 1; j < nl; j++) {
            int32_t w = b->live[j];
            if (b->wseen[w] == b->wt && b->wd[w] <= b->lc[i] + b->lc[j]) continue;
            if (b->npend == b->pend_cap) {
                size_t nc = b->pend_cap ? 2 * b->pend_cap : 64;
                int32_t(*np)[2] = realloc(b->pend, nc * sizeof(*np));
                if (!np) return -1;
                b->pend = np;
                b->pend_cap = nc;
            }
            b->pend[b->npend][0] = i;
            b->pend[b->npend++][1] = j;
        }
    }
    return (int64_t)b->npend;
}

/* Contracts x with the shortcuts contract(b, x) just found; -1 out of
 * memory. */
static int commit(ch_build *b, int32_t x) {
    for (size_t k = 0; k < b->npend; k++) {
        int32_t i = b->pend[k][0], j = b->pend[k][1];
        int32_t v0 = b->live[i], w = b->live[j];
        double d = b->lc[i] + b->lc[j];
        int r1 = arc_put(&b->l[v0], w, d, x), r2 = arc_put(&b->l[w], v0, d, x);
        if (r1 < 0 || r2 < 0) return -1;
        b->arcs += r1 + r2;
    }
    for (int32_t i = 0; i < b->nlive; i++) {
        b->cnbr[b->live[i]]++;
        arc_retire(&b->l[b->live[i]], x);
    }
    b->done[x] = 1;
    return 0;
}

/* Contraction order (Geisberger et al. 2008): the edge difference, weighed
 * PRIO_EDGES, plus the neighbours already contracted, which spreads the
 * contractions over the graph. */
static double priority(ch_build *b, int32_t x, int64_t *made) {
    *made = contract(b, x);
    return PRIO_EDGES * (double)(*made - b->l[x].live) + (double)b->cnbr[x];
}

void pf_subgoal_ch_destroy(pf_subgoal_ch *h) {
    if (!h) return;
    free(h->rank);
    free(h->up_off);
    free(h->up);
    free(h->mid);
    free(h->kid);
    free(h->cost);
    free(h);
}

/* Counts the work done since *seen into stop; true when the build must
 * end: stopped (*st PF_ECANCELED) or past max_work (*st PF_ELIMIT). */
static bool tick(ch_build *b, uint64_t *seen, uint64_t max_work, pf_build_stop *stop,
                 pf_status *st) {
    uint64_t d = b->work - *seen;
    *seen = b->work;
    if (pf_build_tick(stop, d)) {
        *st = PF_ECANCELED;
        return true;
    }
    if (max_work && b->work > max_work) {
        *st = PF_ELIMIT;
        return true;
    }
    return false;
}

/* The upward arc between a and b (stored with the lower ranked of the
 * two), -1 when there is none. */
static int64_t arc_find(const pf_subgoal_ch *h, int32_t a, int32_t b) {
    int32_t lo = h->rank[a] < h->rank[b] ? a : b, hi = lo == a ? b : a;
    for (int64_t k = h->up_off[lo]; k < h->up_off[lo + 1]; k++)
        if (h->up[k] == hi) return k;
    return -1;
}

/* The order old's hierarchy contracted s's subgoals in: those at cells
 * that were no subgoal of old first, then old's by rank. NULL out of
 * memory. */
static int32_t *order_of(const pf_subgoal *s, const pf_subgoal *old, const pf_subgoal_ch *oh,
                         int32_t *ncore) {
    int32_t *seq = malloc(((size_t)s->n + 1) * sizeof(*seq));
    int32_t *byrank = malloc(((size_t)oh->n + 1) * sizeof(*byrank));
    int32_t k = 0;
    if (!seq || !byrank) {
        free(seq);
        free(byrank);
        return NULL;
    }
    for (int32_t v = 0; v < s->n; v++)
        if (old->id[s->cell[v]] < 0) seq[k++] = v;
    for (int32_t v = 0; v < oh->n; v++) byrank[oh->rank[v]] = v;
    *ncore = 0;
    for (int32_t r = 0; r < oh->n; r++) {
        int32_t v = s->id[old->cell[byrank[r]]];
        if (v < 0) continue;
        seq[k++] = v;
        *ncore += r >= oh->n - oh->ncore;
    }
    free(byrank);
    return seq;
}

static pf_status build(const pf_subgoal *s, const int32_t *seq, int32_t seq_core, int64_t max_edges,
                       uint64_t max_work, pf_build_stop *stop, pf_subgoal_ch **out);

pf_status pf_subgoal_ch_build(const pf_subgoal *s, int64_t max_edges, uint64_t max_work,
                              pf_build_stop *stop, pf_subgoal_ch **out) {
    return build(s, NULL, 0, max_edges, max_work, stop, out);
}

pf_status pf_subgoal_ch_rebuild(const pf_subgoal *s, const pf_subgoal *old, const pf_subgoal_ch *oh,
                                int64_t max_edges, uint64_t max_work, pf_build_stop *stop,
                                pf_subgoal_ch **out) {
    pf_status st;
    int32_t *seq, ncore;
    *out = NULL;
    if (old->w != s->w || old->h != s->h || oh->n != old->n) return PF_EINVAL;
    if (!(seq = order_of(s, old, oh, &ncore))) return PF_ENOMEM;
    st = build(s, seq, ncore, max_edges, max_work, stop, out);
    free(seq);
    return st;
}

/* Whether a query follows the arc u -> v: up, or within the core. */
static inline bool up_arc(const ch_build *b, const pf_subgoal_ch *h, int32_t u, int32_t v) {
    return h->rank[v] > h->rank[u] || (!b->done[u] && !b->done[v]);
}

/* Contracts s's subgoals in the order seq (all but its last seq_core), or
 * (NULL) by priority with lazy updates: a popped subgoal whose priority has
 * grown past the next one's goes back. Past max_work it stops, and what is
 * left uncontracted is the core. */
static pf_status build(const pf_subgoal *s, const int32_t *seq, int32_t seq_core, int64_t max_edges,
                       uint64_t max_work, pf_build_stop *stop, pf_subgoal_ch **out) {
    const int32_t n = s->n;
    size_t nn = (size_t)n + 1;
    pf_status st = PF_ENOMEM;
    ch_build b = {0};
    pf__sg_heap pq = {0};
    pf_subgoal_ch *h = calloc(1, sizeof(*h));
    uint64_t seen = 0;
    *out = NULL;
    if (!max_edges) max_edges = 8 * pf_subgoal_edge_count(s) + 1024;
    b.n = n;
    b.l = calloc(nn, sizeof(*b.l));
    b.done = calloc(nn, 1);
    b.cnbr = calloc(nn, sizeof(*b.cnbr));
    b.wd = malloc(nn * sizeof(*b.wd));
    b.wseen = calloc(nn, sizeof(*b.wseen));
    b.wtarget = calloc(nn, sizeof(*b.wtarget));
    b.live = malloc(nn * sizeof(*b.live));
    b.lc = malloc(nn * sizeof(*b.lc));
    if (!h || !b.l || !b.done || !b.cnbr || !b.wd || !b.wseen || !b.wtarget || !b.live || !b.lc)
        goto out;
    h->n = n;
    h->rank = malloc(nn * sizeof(*h->rank));
    h->up_off = malloc(nn * sizeof(*h->up_off));
    if (!h->rank || !h->up_off) goto out;
    for (int32_t u = 0; u < n; u++)
        for (int64_t e = s->adj_off[u]; e < s->adj_off[u + 1]; e++) {
            int r = arc_put(&b.l[u], s->adj[e], s->adj_cost[e], -1);
            if (r < 0) goto out;
            b.arcs += r;
        }
    for (int32_t u = 0; u < n && !seq; u++) {
        int64_t made;
        double p = priority(&b, u, &made);
        b.work += 16;
        if (made < 0 || !pf__sg_heap_push(&pq, p, u)) goto out;
        if (tick(&b, &seen, max_work, stop, &st)) {
            if (st != PF_ELIMIT) goto out;
            pq.n = 0; /* the bound: all of it is the core */
            break;
        }
    }
    int32_t next = 0, iseq = 0;
    while (seq ? iseq < n - seq_core : pq.n > 0) {
        int32_t x;
        int64_t made;
        if (seq) {
            x = seq[iseq++];
            if (contract(&b, x) < 0) goto out;
        } else {
            pf__sg_item it = pf__sg_heap_pop(&pq);
            x = it.v;
            if (b.done[x]) continue;
            double p = priority(&b, x, &made);
            if (made < 0) goto out;
            if (pq.n && p > pq.a[0].f) {
                if (!pf__sg_heap_push(&pq, p, x)) goto out;
                continue;
            }
        }
        b.work += 16;
        if (tick(&b, &seen, max_work, stop, &st)) {
            if (st != PF_ELIMIT) goto out;
            break; /* the bound: x and the rest are the core */
        }
        if (commit(&b, x) < 0) goto out;
        h->rank[x] = next++;
        if (b.arcs > 2 * max_edges) {
            st = PF_ELIMIT;
            goto out;
        }
    }
    st = PF_ENOMEM;
    h->ncore = n - next;
    for (int32_t u = 0; u < n; u++)
        if (!b.done[u]) h->rank[u] = next++;
    /* The upward arcs, and the core's both ways. */
    int64_t m = 0;
    for (int32_t u = 0; u < n; u++) {
        h->up_off[u] = m;
        for (int32_t i = 0; i < b.l[u].n; i++) m += up_arc(&b, h, u, b.l[u].a[i].v);
    }
    h->up_off[n] = m;
    if (m >= INT32_MAX) {
        st = PF_ELIMIT; /* arcs are int32_t in a query's unpacking */
        goto out;
    }
    h->up = malloc(((size_t)m + 1) * sizeof(*h->up));
    h->mid = malloc(((size_t)m + 1) * sizeof(*h->mid));
    h->kid = malloc(((size_t)m + 1) * sizeof(*h->kid));
    h->cost = malloc(((size_t)m + 1) * sizeof(*h->cost));
    if (!h->up || !h->mid || !h->kid || !h->cost) goto out;
    for (int32_t u = 0; u < n; u++) {
        int64_t k = h->up_off[u];
        for (int32_t i = 0; i < b.l[u].n; i++) {
            const ch_arc *a = &b.l[u].a[i];
            if (!up_arc(&b, h, u, a->v)) continue;
            h->up[k] = a->v;
            h->mid[k] = a->mid;
            h->cost[k++] = a->c;
            h->shortcuts += a->mid >= 0;
        }
    }
    /* A shortcut's halves are arcs of its mid, ranked below both ends. */
    for (int32_t u = 0; u < n; u++)
        for (int64_t k = h->up_off[u]; k < h->up_off[u + 1]; k++) {
            int32_t md = h->mid[k];
            int64_t k0 = md >= 0 ? arc_find(h, u, md) : -1,
                    k1 = md >= 0 ? arc_find(h, md, h->up[k]) : -1;
            if (md >= 0 && (k0 < 0 || k1 < 0)) {
                st = PF_EINVAL; /* impossible: a shortcut replaced two arcs of its mid */
                goto out;
            }
            h->kid[k][0] = (int32_t)k0;
            h->kid[k][1] = (int32_t)k1;
        }
    h->work = b.work;
    *out = h;
    h = NULL;
    st = PF_OK;
out:
    if (b.l)
        for (int32_t u = 0; u < n; u++) free(b.l[u].a);
    free(b.l);
    free(b.done);
    free(b.cnbr);
    free(b.wd);
    free(b.wseen);
    free(b.wtarget);
    free(b.pend);
    free(b.live);
    free(b.lc);
    free(b.wh.a);
    free(pq.a);
    pf_subgoal_ch_destroy(h);
    return st;
}

size_t pf_subgoal_ch_memory(const pf_subgoal_ch *h) {
    if (!h) return 0;
    return sizeof(*h) + ((size_t)h->n + 1) * (sizeof(int32_t) + sizeof(int64_t)) +
           (size_t)h->up_off[h->n] * (4 * sizeof(int32_t) + sizeof(double));
}

int64_t pf_subgoal_ch_shortcuts(const pf_subgoal_ch *h) { return h->shortcuts; }
int32_t pf_subgoal_ch_core(const pf_subgoal_ch *h) { return h->ncore; }
uint64_t pf_subgoal_ch_work(const pf_subgoal_ch *h) { return h->work; }

static inline bool push_int(int32_t **a, size_t *n, size_t *cap, int32_t v) {
    if (*n >= *cap && !pf__sg_fit_cells(a, cap, *n + 1)) return false;
    (*a)[(*n)++] = v;
    return true;
}

/* Appends to the chain the cells of the subgoals after a up to b, every
 * shortcut unpacked through its halves (the stack holds from, to, arc). */
static pf_status unpack(const pf_subgoal *s, const pf_subgoal_ch *h, pf_subgoal_ctx *c,
                        size_t *nchain, int32_t a, int32_t b) {
    size_t ns = 0;
    int64_t e0 = arc_find(h, a, b);
    if (e0 < 0) return PF_EINVAL;
    if (!push_int(&c->stack, &ns, &c->stack_cap, a) ||
        !push_int(&c->stack, &ns, &c->stack_cap, b) ||
        !push_int(&c->stack, &ns, &c->stack_cap, (int32_t)e0))
        return PF_ENOMEM;
    while (ns) {
        int32_t e = c->stack[--ns], y = c->stack[--ns], x = c->stack[--ns];
        int32_t m = h->mid[e];
        if (m < 0) {
            if (!push_int(&c->chain, nchain, &c->chain_cap, s->cell[y])) return PF_ENOMEM;
            continue;
        }
        /* x..m first: pushed last. x is e's owner unless e points at x. */
        int32_t first = h->up[e] == x ? h->kid[e][1] : h->kid[e][0];
        int32_t second = h->up[e] == x ? h->kid[e][0] : h->kid[e][1];
        if (!push_int(&c->stack, &ns, &c->stack_cap, m) ||
            !push_int(&c->stack, &ns, &c->stack_cap, y) ||
            !push_int(&c->stack, &ns, &c->stack_cap, second) ||
            !push_int(&c->stack, &ns, &c->stack_cap, x) ||
            !push_int(&c->stack, &ns, &c->stack_cap, m) ||
            !push_int(&c->stack, &ns, &c->stack_cap, first))
            return PF_ENOMEM;
    }
    return PF_OK;
}

/* Side k's search starts at its end's subgoal, or at the subgoals its
 * sweep reached (parent -2: the end itself). */
static bool seed_side(const pf_subgoal *s, pf_subgoal_ctx *c, int k, pf_point end,
                      const int32_t *fan, size_t nfan) {
    const uint32_t t = c->stamp;
    int32_t ec = end.y * s->w + end.x;
    if (s->id[ec] >= 0) {
        int32_t v = s->id[ec];
        c->g[k][v] = 0;
        c->seen[k][v] = t;
        c->parent[k][v] = -1;
        return pf__sg_heap_push(&c->heap[k], 0, v);
    }
    for (size_t i = 0; i < nfan; i++) {
        int32_t v = s->id[fan[i]];
        double d = pf__sg_octile(end.x, end.y, fan[i] % s->w, fan[i] / s->w) * s->unit;
        c->g[k][v] = d;
        c->seen[k][v] = t;
        c->parent[k][v] = -2;
        if (!pf__sg_heap_push(&c->heap[k], d, v)) return false;
    }
    return true;
}

/* Stall on demand (Geisberger et al. 2008): u, settled by side k, is
 * reached more cheaply down an arc from a higher subgoal that side has
 * seen, so its cost is not its distance, no shortest up-then-down path
 * passes it, and its arcs need not be relaxed. The graph is undirected:
 * the arcs down into u are u's own upward arcs. Only a way shorter by more
 * than STALL_SLACK of u's cost stalls it: the start's side settles in
 * order of f, not of cost, and a way exactly as long whose sum rounds
 * shorter would otherwise stall a subgoal of the only shortest
 * up-then-down path. */
#define STALL_SLACK 1e-9
static bool stalled(const pf_subgoal_ch *h, const pf_subgoal_ctx *c, int k, int32_t u) {
    const uint32_t t = c->stamp;
    const double bar = c->g[k][u] * (1.0 - STALL_SLACK);
    for (int64_t e = h->up_off[u]; e < h->up_off[u + 1]; e++) {
        int32_t v = h->up[e];
        if (c->seen[k][v] == t && c->g[k][v] + h->cost[e] < bar) return true;
    }
    return false;
}

/* The bound on the cost from subgoal v to the goal: octile, or the
 * landmarks' when they say more. Both are consistent, so is the larger. */
static inline double to_goal(const pf_subgoal *s, const pf_landmarks *lm, const double *gd,
                             pf_point goal, int32_t v) {
    int32_t cell = s->cell[v];
    double o = pf__sg_octile(goal.x, goal.y, cell % s->w, cell / s->w) * s->unit;
    if (lm) {
        double l = pf_landmarks_h_to(lm, cell, gd);
        if (l > o) return l;
    }
    return o;
}

/* The meet in the middle of a hierarchy without a core: both sides
 * Dijkstra over upward arcs, taking turns by the lesser key, each done
 * when its least key reaches the best meeting. *best and *meet (-1: none)
 * say the meeting; *expanded counts. */
static pf_status meet_middle(const pf_subgoal_ch *h, pf_subgoal_ctx *c, double *bestp,
                             int32_t *meetp, uint64_t *expanded) {
    const uint32_t t = c->stamp;
    double best = 1e300;
    int32_t meet = -1;
    for (;;) {
        pf__sg_heap *h0 = &c->heap[0], *h1 = &c->heap[1];
        if (h0->n && h0->a[0].f >= best) h0->n = 0;
        if (h1->n && h1->a[0].f >= best) h1->n = 0;
        if (!h0->n && !h1->n) break;
        int k = !h0->n ? 1 : !h1->n ? 0 : h1->a[0].f < h0->a[0].f;
        pf__sg_item it = pf__sg_heap_pop(&c->heap[k]);
        int32_t u = it.v;
        if (c->closed[k][u] == t || it.f > c->g[k][u]) continue;
        c->closed[k][u] = t;
        (*expanded)++;
        if (c->seen[!k][u] == t && c->g[k][u] + c->g[!k][u] < best) {
            best = c->g[k][u] + c->g[!k][u];
            meet = u;
        }
        if (stalled(h, c, k, u)) continue;
        for (int64_t e = h->up_off[u]; e < h->up_off[u + 1]; e++) {
            int32_t v = h->up[e];
            double d = c->g[k][u] + h->cost[e];
            if (c->seen[k][v] == t && c->g[k][v] <= d) continue;
            c->seen[k][v] = t;
            c->g[k][v] = d;
            c->parent[k][v] = u;
            if (!pf__sg_heap_push(&c->heap[k], d, v)) return PF_ENOMEM;
        }
    }
    *bestp = best;
    *meetp = meet;
    return PF_OK;
}

/* The search of a hierarchy with a core (Bauer et al.'s core-ALT): the
 * goal's side first, whole, then the start's side by A* toward the goal
 * (as meet_middle for the results). Both sides Dijkstra in a core would
 * search it without direction: on rooms8 with 1,400 subgoals left there
 * the longest quarter took 710 us against 85 us this way. */
static pf_status core_astar(const pf_subgoal *s, const pf_subgoal_ch *h, const pf_landmarks *lm,
                            pf_subgoal_ctx *c, pf_point goal, double *bestp, int32_t *meetp,
                            uint64_t *expanded) {
    const uint32_t t = c->stamp;
    double best = 1e300;
    int32_t meet = -1;
    const int32_t core0 = h->n - h->ncore;
    /* The goal's side: Dijkstra over its whole upward space below the core
     * (a subgoal of the core is reached, not expanded). */
    pf__sg_heap *hb = &c->heap[1], *hf = &c->heap[0];
    while (hb->n) {
        pf__sg_item it = pf__sg_heap_pop(hb);
        int32_t u = it.v;
        if (c->closed[1][u] == t || it.f > c->g[1][u]) continue;
        c->closed[1][u] = t;
        (*expanded)++;
        if (h->rank[u] >= core0 || stalled(h, c, 1, u)) continue;
        for (int64_t e = h->up_off[u]; e < h->up_off[u + 1]; e++) {
            int32_t v = h->up[e];
            double d = c->g[1][u] + h->cost[e];
            if (c->seen[1][v] == t && c->g[1][v] <= d) continue;
            c->seen[1][v] = t;
            c->g[1][v] = d;
            c->parent[1][v] = u;
            if (!pf__sg_heap_push(hb, d, v)) return PF_ENOMEM;
        }
    }
    /* The start's side: A* over the upward arcs and the core's, toward the
     * goal, meeting the goal's side where it settles one of its subgoals;
     * done when no open subgoal's f is below the best meeting. */
    double gd[PF_LANDMARKS_MAX];
    size_t nseed = 0;
    if (lm) pf_landmarks_dist(lm, goal.y * s->w + goal.x, gd);
    for (size_t i = 0; i < hf->n; i++)
        if (!push_int(&c->nodes, &nseed, &c->nodes_cap, hf->a[i].v)) return PF_ENOMEM;
    hf->n = 0;
    for (size_t i = 0; i < nseed; i++) {
        int32_t v = c->nodes[i];
        if (!pf__sg_heap_push(hf, c->g[0][v] + to_goal(s, lm, gd, goal, v), v)) return PF_ENOMEM;
    }
    while (hf->n && hf->a[0].f < best) {
        pf__sg_item it = pf__sg_heap_pop(hf);
        int32_t u = it.v;
        if (c->closed[0][u] == t) continue;
        c->closed[0][u] = t;
        (*expanded)++;
        if (c->closed[1][u] == t && c->g[0][u] + c->g[1][u] < best) {
            best = c->g[0][u] + c->g[1][u];
            meet = u;
        }
        if (stalled(h, c, 0, u)) continue;
        for (int64_t e = h->up_off[u]; e < h->up_off[u + 1]; e++) {
            int32_t v = h->up[e];
            double d = c->g[0][u] + h->cost[e];
            if (c->closed[0][v] == t || (c->seen[0][v] == t && c->g[0][v] <= d)) continue;
            c->seen[0][v] = t;
            c->g[0][v] = d;
            c->parent[0][v] = u;
            if (!pf__sg_heap_push(hf, d + to_goal(s, lm, gd, goal, v), v)) return PF_ENOMEM;
        }
    }
    *bestp = best;
    *meetp = meet;
    return PF_OK;
}

pf_status pf_subgoal_ch_find(const pf_subgoal *s, const pf_subgoal_ch *h, const pf_grid *g,
                             const pf_landmarks *lm, pf_subgoal_ctx *c, pf_point start,
                             pf_point goal, pf_subgoal_answer *out) {
    pf_subgoal_answer r = {0};
    pf_status st;
    bool direct;
    *out = r;
    if (h->n != s->n) return PF_EINVAL;
    if ((st = pf__sg_begin(s, g, c, start, goal, &direct))) return st;
    if (direct) return pf__sg_answer_direct(s, g, c, start, goal, out);
    if (!seed_side(s, c, 0, start, c->sfan, c->sfan_n) ||
        !seed_side(s, c, 1, goal, c->gfan, c->gfan_n))
        return PF_ENOMEM;
    double best;
    int32_t meet;
    uint64_t expanded = 0;
    st = h->ncore ? core_astar(s, h, lm, c, goal, &best, &meet, &expanded)
                  : meet_middle(h, c, &best, &meet, &expanded);
    out->expanded = expanded;
    if (st) return st;
    if (meet < 0) return PF_NO_PATH;
    /* Goal first: the goal, the backward side from its root to the meeting
     * subgoal, the forward side back to its root, the start. */
    size_t nn = 0, nchain = 0;
    for (int32_t v = meet; v >= 0; v = c->parent[1][v])
        if (!push_int(&c->nodes, &nn, &c->nodes_cap, v)) return PF_ENOMEM;
    for (size_t i = 0, j = nn - 1; i < j; i++, j--) {
        int32_t x = c->nodes[i];
        c->nodes[i] = c->nodes[j];
        c->nodes[j] = x;
    }
    for (int32_t v = c->parent[0][meet]; v >= 0; v = c->parent[0][v])
        if (!push_int(&c->nodes, &nn, &c->nodes_cap, v)) return PF_ENOMEM;
    if (s->id[goal.y * s->w + goal.x] < 0 &&
        !push_int(&c->chain, &nchain, &c->chain_cap, goal.y * s->w + goal.x))
        return PF_ENOMEM;
    if (!push_int(&c->chain, &nchain, &c->chain_cap, s->cell[c->nodes[0]])) return PF_ENOMEM;
    for (size_t i = 0; i + 1 < nn; i++)
        if ((st = unpack(s, h, c, &nchain, c->nodes[i], c->nodes[i + 1]))) return st;
    if (s->id[start.y * s->w + start.x] < 0 &&
        !push_int(&c->chain, &nchain, &c->chain_cap, start.y * s->w + start.x))
        return PF_ENOMEM;
    return pf__sg_answer(s, g, c, start, nchain, best, out);
}
