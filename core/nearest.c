/* nearest.c -- one best-first search towards the nearest of several goals.
 * See nearest.h. */
#include "nearest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

/* The heuristic distance for offsets dx, dy (exact formulas as search.c). */
static inline double h_dist(pf_heuristic h, int32_t dx, int32_t dy) {
    double mx, mn;
    dx = dx < 0 ? -dx : dx;
    dy = dy < 0 ? -dy : dy;
    mx = dx > dy ? dx : dy;
    mn = dx > dy ? dy : dx;
    switch (h) {
    case PF_H_MANHATTAN:
        return (double)dx + (double)dy;
    case PF_H_CHEBYSHEV:
        return mx;
    case PF_H_EUCLIDEAN:
        return sqrt((double)dx * dx + (double)dy * dy);
    default:
        return mx + (PF_SQRT2 - 1.0) * mn;
    }
}

/* A goal cell and its index in the caller's list; sorted by (cell, idx). */
typedef struct goal_ref {
    int32_t cell, idx;
} goal_ref;

typedef struct goal_set {
    pf_heuristic h;
    const pf_point *goals;
    size_t n;
    bool exact;
    int32_t x0, y0, x1, y1; /* bounding box */
    int32_t w;
    const goal_ref *refs;
} goal_set;

static int cmp_ref(const void *a, const void *b) {
    const goal_ref *x = a, *y = b;
    if (x->cell != y->cell) return x->cell < y->cell ? -1 : 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* The least heuristic distance from (x, y) to the goals (or to their box). */
static inline double goals_h(const goal_set *s, int32_t x, int32_t y) {
    if (s->exact) {
        double best = INFINITY;
        for (size_t i = 0; i < s->n; i++) {
            double v = h_dist(s->h, s->goals[i].x - x, s->goals[i].y - y);
            if (v < best) best = v;
        }
        return best;
    }
    int32_t dx = x < s->x0 ? s->x0 - x : (x > s->x1 ? x - s->x1 : 0);
    int32_t dy = y < s->y0 ? s->y0 - y : (y > s->y1 ? y - s->y1 : 0);
    return h_dist(s->h, dx, dy);
}

/* The index of the first goal on cell c, or -1. */
static int32_t goal_at(const goal_set *s, int32_t c) {
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->refs[mid].cell < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->refs[lo].cell == c ? s->refs[lo].idx : -1;
}

/* Partial answers measure against every goal, exactly. */
static double partial_h(void *ud, int32_t cell) {
    const goal_set *s = ud;
    goal_set e = *s;
    e.exact = true;
    return goals_h(&e, cell % s->w, cell / s->w);
}

/* The goal nearest to cell c by the heuristic (lowest index on ties). */
static int32_t nearest_goal_to(const goal_set *s, int32_t c) {
    int32_t best = 0, x = c % s->w, y = c / s->w;
    double bh = INFINITY;
    for (size_t i = 0; i < s->n; i++) {
        double v = h_dist(s->h, s->goals[i].x - x, s->goals[i].y - y);
        if (v < bh) {
            bh = v;
            best = (int32_t)i;
        }
    }
    return best;
}

static pf_status run(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q, const goal_set *s,
                     double hscale, pf_result *out, int32_t *which) {
    const int32_t w = g->w, src = q->start.y * w + q->start.x;
    const int ndirs = g->connectivity;
    int32_t off[PF_DIR_COUNT];
    double len[PF_DIR_COUNT];
    pf__node *nodes = ctx->nodes;
    const uint32_t gen = ctx->gen;
    const bool record = q->record_expanded || q->partial;

    for (int d = 0; d < PF_DIR_COUNT; d++) {
        off[d] = pf__grid_dir_offset(g, d);
        len[d] = pf__dir_len(d);
    }
    nodes[src].gen = gen;
    nodes[src].parent = -1;
    nodes[src].g = 0;
    {
        double hs = hscale * goals_h(s, q->start.x, q->start.y);
        pf__heap_push(ctx, src, hs, hs);
    }
    out->generated = 1;
    while (ctx->heap_len > 0) {
        int32_t c = pf__heap_pop(ctx), k;
        unsigned m;
        double gc;
        if ((k = goal_at(s, c)) >= 0) {
            *which = k;
            out->cost = nodes[c].g;
            return pf__ctx_build_path(ctx, g, c, out);
        }
        if (q->should_stop && (out->expanded & PF__STOP_POLL_MASK) == 0 &&
            q->should_stop(q->stop_ud))
            return PF_ECANCELED;
        if (q->max_expanded && out->expanded >= q->max_expanded) return PF_EBUDGET;
        out->expanded++;
        if (record) ctx->expanded[ctx->expanded_len++] = c;
        m = g->moves[c];
        gc = nodes[c].g;
        const int32_t cx = c % w, cy = c / w;
        for (int d = 0; d < ndirs; d++) {
            int32_t nb;
            double gn, hn;
            if (!(m & (1u << d))) continue;
            nb = c + off[d];
            gn = gc + g->cost[nb] * len[d];
            if (nodes[nb].gen != gen) {
                nodes[nb].gen = gen;
                nodes[nb].g = gn;
                nodes[nb].parent = c;
                hn = hscale * goals_h(s, cx + pf_dir_dx[d], cy + pf_dir_dy[d]);
                pf__heap_push(ctx, nb, gn + hn, hn);
                out->generated++;
            } else if (nodes[nb].heap_pos != PF__HEAP_CLOSED && gn < nodes[nb].g) {
                nodes[nb].g = gn;
                nodes[nb].parent = c;
                hn = hscale * goals_h(s, cx + pf_dir_dx[d], cy + pf_dir_dy[d]);
                pf__heap_decrease(ctx, nb, gn + hn, hn);
                out->generated++;
            }
        }
    }
    return PF_NO_PATH;
}

pf_status pf_search_nearest(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q,
                            const pf_point *goals, size_t n, pf_result *out, int32_t *which) {
    size_t cells = (size_t)g->w * (size_t)g->h;
    pf_heuristic h = q->heuristic;
    goal_set s;
    goal_ref *refs;
    bool any_walkable = false;
    pf_status st;
    int32_t k;

    memset(out, 0, sizeof(*out));
    out->algorithm = q->algorithm;
    *which = -1;
    if (q->algorithm != PF_ALGO_ASTAR && q->algorithm != PF_ALGO_DIJKSTRA)
        return out->status = PF_EUNSUPPORTED;
    if (q->agent_size > 1) return out->status = PF_EUNSUPPORTED;
    if ((unsigned)h >= PF_H_COUNT) return out->status = PF_EINVAL;
    if (h == PF_H_DEFAULT) h = g->connectivity == 8 ? PF_H_OCTILE : PF_H_MANHATTAN;
    if (q->algorithm == PF_ALGO_ASTAR && !pf_heuristic_is_admissible(h, g->connectivity))
        return out->status = PF_EINVAL;
    if (n == 0 || n > PF_NEAREST_MAX_GOALS) return out->status = PF_EINVAL;
    if (!pf_grid_in_bounds(g, q->start)) return out->status = PF_ERANGE;
    if (!pf_grid_is_walkable(g, q->start)) return out->status = PF_EBLOCKED;
    for (size_t i = 0; i < n; i++) {
        if (!pf_grid_in_bounds(g, goals[i])) {
            *which = (int32_t)i;
            return out->status = PF_ERANGE;
        }
        if (pf_grid_is_walkable(g, goals[i])) {
            any_walkable = true;
        } else if (!q->partial) {
            *which = (int32_t)i;
            return out->status = PF_EBLOCKED;
        }
    }
    if ((st = pf__ctx_begin(ctx, cells))) return out->status = st;
    if ((q->record_expanded || q->partial) && (st = pf__ctx_reserve_expanded(ctx, cells)))
        return out->status = st;
    /* The goal list lives in the context's queue (unused by this search):
     * (cell, index) pairs sorted for a binary search at each expansion. */
    if (2 * n > ctx->queue_cap) {
        int32_t *qq = realloc(ctx->queue, 2 * n * sizeof(*qq));
        if (!qq) return out->status = PF_ENOMEM;
        ctx->queue = qq;
        ctx->queue_cap = 2 * n;
    }
    refs = (goal_ref *)(void *)ctx->queue;
    memset(&s, 0, sizeof(s));
    s.h = h;
    s.goals = goals;
    s.n = n;
    s.w = g->w;
    s.exact = n <= PF_NEAREST_EXACT_GOALS;
    s.x0 = s.x1 = goals[0].x;
    s.y0 = s.y1 = goals[0].y;
    for (size_t i = 0; i < n; i++) {
        refs[i].cell = goals[i].y * g->w + goals[i].x;
        refs[i].idx = (int32_t)i;
        if (goals[i].x < s.x0) s.x0 = goals[i].x;
        if (goals[i].x > s.x1) s.x1 = goals[i].x;
        if (goals[i].y < s.y0) s.y0 = goals[i].y;
        if (goals[i].y > s.y1) s.y1 = goals[i].y;
    }
    qsort(refs, n, sizeof(*refs), cmp_ref);
    s.refs = refs;
    if ((k = goal_at(&s, q->start.y * g->w + q->start.x)) >= 0) {
        *which = k;
        out->generated = 1;
        return pf__answer_trivial(ctx, q->start, out);
    }
    /* Blocked goals (partial only) are never reached; with no walkable
     * goal at all the search still runs, to find the closest cell. */
    st = run(ctx, g, q, &s, q->algorithm == PF_ALGO_ASTAR ? (double)pf_grid_min_cost(g) : 0.0, out,
             which);
    if (q->partial && (st == PF_NO_PATH || st == PF_EBUDGET)) {
        int32_t best = pf__partial_best(ctx, partial_h, &s);
        pf_status why = any_walkable ? st : PF_EBLOCKED;
        st = pf__answer_partial(ctx, g, best, why, out);
        if (st == PF_OK) *which = nearest_goal_to(&s, best);
    }
    if (q->record_expanded) {
        out->expanded_cells = ctx->expanded;
        out->expanded_cells_len = ctx->expanded_len;
    }
    if (st != PF_OK) {
        out->path = NULL;
        out->path_len = 0;
        out->cost = 0.0;
    }
    return out->status = st;
}
