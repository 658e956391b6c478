/* graph_search.c -- Dijkstra (1959), A* (Hart, Nilsson and Raphael 1968)
 * and ALT (Goldberg and Harrelson 2005) on a waypoint graph (graph.h), to
 * one goal, the nearest of several, or every target of a table's row,
 * over a binary heap with lazy deletion: a
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
    /* The goal's landmark distances (alt): d(L_i, t) and d(t, L_i). */
    double gf[PF_GRAPH_MAX_LANDMARKS], gt[PF_GRAPH_MAX_LANDMARKS];
    /* A row's targets still open (pf_graph_row_run), by node: mark[v] ==
     * stamp. */
    uint32_t *mark;
    uint32_t mark_cap;
    struct pf__graph_ch_scratch *ch; /* graph_ch.c's, made on first use */
};

static const char *const algorithm_names[PF_GRAPH_ALGORITHMS] = {"dijkstra", "astar", "alt", "ch"};

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
    free(c->mark);
    pf__graph_ch_scratch_free(c->ch);
    free(c);
}

size_t pf_graph_ctx_memory(const pf_graph_ctx *c) {
    return sizeof(*c) + (size_t)c->cap * sizeof(node_rec) + c->hcap * sizeof(heap_entry) +
           c->path_cap * 2 * sizeof(uint32_t) + (size_t)c->mark_cap * sizeof(uint32_t) +
           pf__graph_ch_scratch_memory(c->ch);
}

/* Room for n nodes, every stamp cleared when the arrays are new. */
static pf_status ensure(pf_graph_ctx *c, uint32_t n) {
    void *p;
    if (n <= c->cap) return PF_OK;
    if (!(p = realloc(c->n, (size_t)n * sizeof(*c->n)))) return PF_ENOMEM;
    c->n = p;
    for (uint32_t i = 0; i < n; i++) c->n[i].seen = 0;
    /* Stamps start again: the marks of older stamps go too. */
    if (c->mark) memset(c->mark, 0, (size_t)c->mark_cap * sizeof(uint32_t));
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

/* Past this many goals, A* aims at their bounding box. */
#define GOALS_EACH 16

/* The heuristic of one search: what it needs, set up once. */
typedef struct heur {
    enum { H_ZERO, H_LINE, H_ALT, H_GOALS, H_BOX } kind;
    double ratio;
    uint32_t goal;
    const double *goal_p;
    /* alt */
    const pf_graph_ctx *c;
    const double *from, *to;
    uint32_t k;
    double scale, margin;
    bool prune; /* a node that cannot reach the goal is not searched */
    /* goals */
    const uint32_t *goals;
    size_t ngoals;
    double lo[3], hi[3];
} heur;

static double line(const pf__graph_topo *t, uint32_t v, const double *q) {
    const double *p = t->pos + 3 * (size_t)v;
    double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The landmarks' bound on d(v, goal) (graph.h's alt), INFINITY when one
 * proves v cannot reach the goal (and h->prune). */
static double alt_bound(const heur *h, uint32_t v) {
    const double *f = h->from + (size_t)v * h->k, *b = h->to + (size_t)v * h->k;
    double best = 0;
    for (uint32_t i = 0; i < h->k; i++) {
        double lt = h->c->gf[i], lv = f[i], vl = b[i], tl = h->c->gt[i];
        if (isfinite(lv)) {
            /* L reaches v but not the goal: v does not reach it either. */
            if (!isfinite(lt)) {
                if (h->prune) return INFINITY;
            } else if (lt - lv > best) {
                best = lt - lv;
            }
        }
        if (isfinite(tl)) {
            /* The goal reaches L but v does not: v does not reach it. */
            if (!isfinite(vl)) {
                if (h->prune) return INFINITY;
            } else if (vl - tl > best) {
                best = vl - tl;
            }
        }
    }
    best -= h->margin;
    return best > 0 ? best * h->scale : 0;
}

static double heuristic(const heur *h, const pf__graph_topo *t, uint32_t v) {
    switch (h->kind) {
    case H_ZERO:
        return 0;
    case H_LINE:
        return h->ratio * line(t, v, h->goal_p);
    case H_ALT: {
        double a = alt_bound(h, v), l = h->ratio * line(t, v, h->goal_p);
        return a > l ? a : l;
    }
    case H_GOALS: {
        double m = INFINITY;
        for (size_t i = 0; i < h->ngoals; i++) {
            double d = line(t, v, t->pos + 3 * (size_t)h->goals[i]);
            if (d < m) m = d;
        }
        return h->ratio * m;
    }
    case H_BOX: {
        const double *p = t->pos + 3 * (size_t)v;
        double s = 0;
        for (int k = 0; k < 3; k++) {
            double d = p[k] < h->lo[k] ? h->lo[k] - p[k] : p[k] > h->hi[k] ? p[k] - h->hi[k] : 0;
            s += d * d;
        }
        return h->ratio * sqrt(s);
    }
    }
    return 0;
}

/* How near v is to the goal (or the nearest goal), for partial answers. */
static double nearness(const heur *h, const pf__graph_topo *t, uint32_t v) {
    double m = INFINITY;
    if (!h->goals) return line(t, v, h->goal_p);
    for (size_t i = 0; i < h->ngoals; i++) {
        double d = line(t, v, t->pos + 3 * (size_t)h->goals[i]);
        if (d < m) m = d;
    }
    return m;
}

/* A new search: room, a fresh stamp, an empty heap. */
static pf_status begin(pf_graph_ctx *c, uint32_t n) {
    pf_status st;
    if ((st = ensure(c, n))) return st;
    if (++c->stamp == 0) {
        for (uint32_t i = 0; i < c->cap; i++) c->n[i].seen = 0;
        if (c->mark)
            for (uint32_t i = 0; i < c->mark_cap; i++) c->mark[i] = 0;
        c->stamp = 1;
    }
    c->hlen = 0;
    return PF_OK;
}

/* Room for n marks, the new ones cleared. */
static pf_status ensure_marks(pf_graph_ctx *c, uint32_t n) {
    uint32_t *m;
    if (n <= c->mark_cap) return PF_OK;
    if (!(m = realloc(c->mark, (size_t)n * sizeof(uint32_t)))) return PF_ENOMEM;
    memset(m + c->mark_cap, 0, (size_t)(n - c->mark_cap) * sizeof(uint32_t));
    c->mark = m;
    c->mark_cap = n;
    return PF_OK;
}

/* Sets v open at cost g from parent p by edge e, and pushes it. */
static pf_status open_node(pf_graph_ctx *c, uint32_t v, double g, uint32_t p, uint32_t e,
                           double f) {
    c->n[v].seen = c->stamp;
    c->n[v].closed = 0;
    c->n[v].g = g;
    c->n[v].parent = p;
    c->n[v].pedge = e;
    return heap_push(c, f, g, v);
}

/* The goals a several-goal search aims at: enabled, in range, in the
 * start's component (or any, for a partial answer), into the context's
 * path buffer (free until the path is written). PF_ERANGE, PF_ENOMEM. */
static pf_status keep_goals(const pf_graph *gr, pf_graph_ctx *c, const pf_graph_query *q,
                            size_t *kept) {
    *kept = 0;
    for (size_t i = 0; i < q->ngoals; i++)
        if (q->goals[i] >= gr->t->n) return PF_ERANGE;
    if (q->ngoals > c->path_cap) {
        uint32_t *a = realloc(c->path_nodes, q->ngoals * sizeof(uint32_t)), *b;
        if (!a) return PF_ENOMEM;
        c->path_nodes = a;
        if (!(b = realloc(c->path_edges, q->ngoals * sizeof(uint32_t)))) return PF_ENOMEM;
        c->path_edges = b;
        c->path_cap = q->ngoals;
    }
    for (size_t i = 0; i < q->ngoals; i++) {
        uint32_t v = q->goals[i];
        if (!pf__bit(gr->non, v)) continue;
        if (!q->partial && !q->nstarts && gr->comp[v] != gr->comp[q->start]) continue;
        c->path_nodes[(*kept)++] = v;
    }
    return PF_OK;
}

static pf_status setup_heuristic(const pf_graph *gr, pf_graph_ctx *c, const pf_graph_query *q,
                                 size_t ngoals, heur *h) {
    const pf__graph_topo *t = gr->t;
    memset(h, 0, sizeof(*h));
    h->kind = H_ZERO;
    h->ratio = gr->ratio;
    h->goal = q->goal;
    if (q->ngoals) {
        h->goals = c->path_nodes;
        h->ngoals = ngoals;
        if (q->algorithm == PF_GRAPH_DIJKSTRA || gr->ratio <= 0 || ngoals == 0) return PF_OK;
        if (ngoals <= GOALS_EACH) {
            h->kind = H_GOALS;
            return PF_OK;
        }
        h->kind = H_BOX;
        for (int k = 0; k < 3; k++) {
            h->lo[k] = INFINITY;
            h->hi[k] = -INFINITY;
        }
        for (size_t i = 0; i < ngoals; i++)
            for (int k = 0; k < 3; k++) {
                double x = t->pos[3 * (size_t)h->goals[i] + (size_t)k];
                if (x < h->lo[k]) h->lo[k] = x;
                if (x > h->hi[k]) h->hi[k] = x;
            }
        return PF_OK;
    }
    h->goal_p = t->pos + 3 * (size_t)q->goal;
    if (q->algorithm == PF_GRAPH_DIJKSTRA) return PF_OK;
    h->kind = H_LINE;
    if (q->algorithm != PF_GRAPH_ALT || !t->lm_k || gr->lm_scale <= 0) return PF_OK;
    h->kind = H_ALT;
    h->c = c;
    h->from = t->lm_from;
    h->to = t->lm_to;
    h->k = t->lm_k;
    h->scale = gr->lm_scale;
    h->margin = t->lm_margin;
    h->prune = !q->partial;
    for (uint32_t i = 0; i < t->lm_k; i++) {
        c->gf[i] = t->lm_from[(size_t)q->goal * t->lm_k + i];
        c->gt[i] = t->lm_to[(size_t)q->goal * t->lm_k + i];
    }
    return PF_OK;
}

pf_status pf_graph_search(const pf_graph *gr, pf_graph_ctx *c, const pf_graph_query *q,
                          pf_graph_path *out) {
    const pf__graph_topo *t = gr->t;
    uint32_t closest = PF_GRAPH_NONE, best_goal = PF_GRAPH_NONE;
    double closest_d = INFINITY, h0, best_arrival = INFINITY;
    size_t ngoals = 0;
    heur h;
    pf_graph_query as_alt;
    pf_status st;
    memset(out, 0, sizeof(*out));
    out->end = PF_GRAPH_NONE;
    if ((unsigned)q->algorithm >= PF_GRAPH_ALGORITHMS) return PF_EINVAL;
    if (q->algorithm == PF_GRAPH_CH) {
        /* What the hierarchy cannot answer runs as alt (graph.h). */
        as_alt = *q;
        as_alt.algorithm = PF_GRAPH_ALT;
        q = &as_alt;
    }
    if ((!q->nstarts && q->start >= t->n) || (!q->ngoals && q->goal >= t->n)) return PF_ERANGE;
    for (size_t i = 0; i < q->nstarts; i++)
        if (q->starts[i] >= t->n || !(q->start_costs[i] >= 0)) return PF_ERANGE;
    if ((!q->nstarts && !pf__bit(gr->non, q->start)) || (!q->ngoals && !pf__bit(gr->non, q->goal)))
        return PF_EBLOCKED;
    if ((st = begin(c, t->n))) return st;
    if (q->ngoals && (st = keep_goals(gr, c, q, &ngoals))) return st;
    if (q->ngoals && ngoals == 0) return PF_NO_PATH;
    /* Apart in the weak components: no path, without a search (a partial
     * answer searches the start's component for the nearest node). */
    if (!q->nstarts && !q->ngoals && !q->partial && gr->comp[q->start] != gr->comp[q->goal])
        return PF_NO_PATH;
    if (q == &as_alt && pf_graph_ch_usable(gr, q)) return pf__graph_ch_search(gr, &c->ch, q, out);
    setup_heuristic(gr, c, q, ngoals, &h);
    if (q->ngoals) {
        /* Marks the goals: mark[v] == stamp. */
        if ((st = ensure_marks(c, t->n))) return st;
        for (size_t i = 0; i < ngoals; i++) c->mark[h.goals[i]] = c->stamp;
    }
    if (!q->nstarts) {
        h0 = heuristic(&h, t, q->start);
        if (!isfinite(h0)) return PF_NO_PATH; /* alt: the landmarks prove it */
        if ((st = open_node(c, q->start, 0, PF_GRAPH_NONE, PF_GRAPH_NONE, h0))) return st;
    }
    for (size_t i = 0; i < q->nstarts; i++) {
        uint32_t v = q->starts[i];
        double g0 = q->start_costs[i];
        if (!pf__bit(gr->non, v)) continue;
        if (c->n[v].seen == c->stamp && c->n[v].g <= g0) continue;
        h0 = heuristic(&h, t, v);
        if (isfinite(h0) && (st = open_node(c, v, g0, PF_GRAPH_NONE, PF_GRAPH_NONE, g0 + h0)))
            return st;
    }
    st = PF_NO_PATH;
    while (c->hlen > 0) {
        heap_entry top = heap_pop(c);
        uint32_t v = top.v;
        if (c->n[v].closed || top.g > c->n[v].g) continue;
        /* Goals with arrival costs: the best arrival so far is the answer
         * once nothing open can lead to a cheaper one. */
        if (best_goal != PF_GRAPH_NONE && top.f >= best_arrival) break;
        if (q->max_expanded && out->expanded >= q->max_expanded) {
            st = PF_EBUDGET;
            break;
        }
        if (q->stop && (out->expanded & 255) == 255 && q->stop(q->stop_arg)) return PF_ECANCELED;
        c->n[v].closed = 1;
        out->expanded++;
        if (q->ngoals ? c->mark[v] == c->stamp : v == q->goal) {
            if (q->goal_costs) {
                double arrive = INFINITY;
                for (size_t i = 0; i < q->ngoals; i++)
                    if (q->goals[i] == v && c->n[v].g + q->goal_costs[i] < arrive)
                        arrive = c->n[v].g + q->goal_costs[i];
                if (arrive < best_arrival) {
                    best_arrival = arrive;
                    best_goal = v;
                }
            } else {
                if ((st = write_path(c, v, out))) return st;
                out->reached = true;
                return PF_OK;
            }
        }
        /* The partial answer's node: only looked for when asked. */
        if (q->partial) {
            double d = nearness(&h, t, v);
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
            double ng, hw;
            if (!pf__bit(gr->eon, e) || !pf__bit(gr->non, w)) continue;
            if (q->exclude_tags && ((t->etags && (t->etags[e] & q->exclude_tags)) ||
                                    (t->ntags && (t->ntags[w] & q->exclude_tags))))
                continue;
            ng = c->n[v].g + gr->cost[e];
            if (c->n[w].seen == c->stamp) {
                if (ng >= c->n[w].g) continue;
                /* A closed node reached cheaper: only alt's bounds, which
                 * give up a margin against rounding, may do that (it is
                 * opened again, so answers stay optimal). */
                if (c->n[w].closed && h.kind != H_ALT) continue;
            }
            hw = heuristic(&h, t, w);
            if (!isfinite(hw)) continue; /* alt: w cannot reach the goal */
            if (open_node(c, w, ng, v, e, ng + hw)) return PF_ENOMEM;
        }
    }
    if (best_goal != PF_GRAPH_NONE) {
        if ((st = write_path(c, best_goal, out))) return st;
        out->cost = best_arrival;
        out->reached = true;
        return PF_OK;
    }
    if (q->partial && closest != PF_GRAPH_NONE) {
        pf_status ws = write_path(c, closest, out);
        if (ws) return ws;
    }
    return st;
}

pf_status pf_graph_row_run(const pf_graph *gr, pf_graph_ctx *c, const pf_graph_row *q,
                           double *costs, uint64_t *expanded) {
    const pf__graph_topo *t = gr->t;
    size_t left = 0;
    pf_status st;
    *expanded = 0;
    if (q->source >= t->n) return PF_ERANGE;
    for (size_t j = 0; j < q->ntargets; j++) {
        if (q->targets[j] >= t->n) return PF_ERANGE;
        costs[j] = INFINITY;
    }
    if (!pf__bit(gr->non, q->source)) return PF_EBLOCKED;
    if ((st = begin(c, t->n)) || (st = ensure_marks(c, t->n))) return st;
    /* The targets this search may reach, each counted once. */
    for (size_t j = 0; j < q->ntargets; j++) {
        uint32_t v = q->targets[j];
        if (!pf__bit(gr->non, v) || gr->comp[v] != gr->comp[q->source]) continue;
        if (v != q->source && q->exclude_tags && t->ntags && (t->ntags[v] & q->exclude_tags))
            continue; /* never entered */
        if (c->mark[v] != c->stamp) left++;
        c->mark[v] = c->stamp;
    }
    if (!left) return PF_OK;
    if ((st = open_node(c, q->source, 0, PF_GRAPH_NONE, PF_GRAPH_NONE, 0))) return st;
    while (c->hlen > 0 && left > 0) {
        heap_entry top = heap_pop(c);
        uint32_t v = top.v;
        if (c->n[v].closed || top.g > c->n[v].g) continue;
        if (q->max_expanded && *expanded >= q->max_expanded) return PF_EBUDGET;
        if (q->stop && (*expanded & 255) == 255 && q->stop(q->stop_arg)) return PF_ECANCELED;
        c->n[v].closed = 1;
        ++*expanded;
        if (c->mark[v] == c->stamp) left--;
        for (uint32_t a = t->off[v]; a < t->off[v + 1]; a++) {
            uint32_t w = t->arc_to[a], e = t->arc_edge[a];
            double ng;
            if (!pf__bit(gr->eon, e) || !pf__bit(gr->non, w)) continue;
            if (q->exclude_tags && ((t->etags && (t->etags[e] & q->exclude_tags)) ||
                                    (t->ntags && (t->ntags[w] & q->exclude_tags))))
                continue;
            ng = c->n[v].g + gr->cost[e];
            if (c->n[w].seen == c->stamp && (c->n[w].closed || ng >= c->n[w].g)) continue;
            if ((st = open_node(c, w, ng, v, e, ng))) return st;
        }
    }
    for (size_t j = 0; j < q->ntargets; j++) {
        uint32_t v = q->targets[j];
        if (c->n[v].seen == c->stamp && c->n[v].closed) costs[j] = c->n[v].g;
    }
    return PF_OK;
}

pf_status pf_graph_row_path(pf_graph_ctx *c, uint32_t target, pf_graph_path *out) {
    memset(out, 0, sizeof(*out));
    out->end = PF_GRAPH_NONE;
    if (target >= c->cap || c->n[target].seen != c->stamp || !c->n[target].closed)
        return PF_NO_PATH;
    out->reached = true;
    return write_path(c, target, out);
}
