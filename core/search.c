/* search.c -- the search context, the open list, and the grid-only searches:
 * bfs, dijkstra, astar, weighted A* and greedy best-first.
 *
 * Dijkstra, A*, weighted A* and greedy share one best-first loop that differs
 * only in the key: f = g (dijkstra), g + h (astar), g + w*h (weighted), h
 * (greedy). Ties go to the lower h, then to the earlier insertion.
 */
#include "search_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const algo_names[PF_ALGO_COUNT] = {
    "bfs", "dijkstra", "astar", "weighted", "greedy", "jps", "hpa", "dstar", "auto", "subgoal"};
static const char *const heuristic_names[PF_H_COUNT] = {"default", "octile", "manhattan",
                                                        "chebyshev", "euclidean"};

bool pf_algorithm_from_name(const char *name, pf_algorithm *out) {
    for (int i = 0; i < PF_ALGO_COUNT; i++)
        if (strcmp(name, algo_names[i]) == 0) {
            *out = (pf_algorithm)i;
            return true;
        }
    return false;
}

const char *pf_algorithm_name(pf_algorithm a) {
    return (unsigned)a < PF_ALGO_COUNT ? algo_names[a] : "unknown";
}

bool pf_algorithm_is_optimal(pf_algorithm a) {
    return a == PF_ALGO_DIJKSTRA || a == PF_ALGO_ASTAR || a == PF_ALGO_JPS || a == PF_ALGO_DSTAR ||
           a == PF_ALGO_SUBGOAL;
}

bool pf_heuristic_from_name(const char *name, pf_heuristic *out) {
    for (int i = 0; i < PF_H_COUNT; i++)
        if (strcmp(name, heuristic_names[i]) == 0) {
            *out = (pf_heuristic)i;
            return true;
        }
    return false;
}

const char *pf_heuristic_name(pf_heuristic h) {
    return (unsigned)h < PF_H_COUNT ? heuristic_names[h] : "unknown";
}

bool pf_heuristic_is_admissible(pf_heuristic h, int connectivity) {
    /* Manhattan counts a diagonal step as 2, more than its sqrt(2). Every
     * other heuristic is at most the octile distance, the exact 8-connected
     * distance on an empty map, which is itself at most the 4-connected one. */
    return !(h == PF_H_MANHATTAN && connectivity == 8);
}

static inline double h_eval(pf_heuristic h, int32_t dx, int32_t dy) {
    int32_t mx, mn;
    dx = dx < 0 ? -dx : dx;
    dy = dy < 0 ? -dy : dy;
    mx = dx > dy ? dx : dy;
    mn = dx > dy ? dy : dx;
    switch (h) {
    case PF_H_MANHATTAN:
        return (double)(dx + dy);
    case PF_H_CHEBYSHEV:
        return (double)mx;
    case PF_H_EUCLIDEAN:
        return sqrt((double)dx * dx + (double)dy * dy);
    default:
        return (double)mx + (PF_SQRT2 - 1.0) * (double)mn;
    }
}

double pf_heuristic_eval(pf_heuristic h, pf_point a, pf_point b) {
    return h_eval(h, b.x - a.x, b.y - a.y);
}

pf_query pf_query_make(pf_point start, pf_point goal, pf_algorithm algo) {
    pf_query q;
    memset(&q, 0, sizeof(q));
    q.start = start;
    q.goal = goal;
    q.algorithm = algo;
    q.heuristic = PF_H_DEFAULT;
    q.weight = 1.0;
    return q;
}

/* Context */

pf_search_ctx *pf_search_ctx_create(void) {
    pf_search_ctx *ctx = calloc(1, sizeof(*ctx));
    if (ctx) ctx->gen = 1;
    return ctx;
}

void pf_search_ctx_destroy(pf_search_ctx *ctx) {
    if (!ctx) return;
    for (int i = 0; i < PF__EXT_COUNT; i++)
        if (ctx->ext[i] && ctx->ext_free[i]) ctx->ext_free[i](ctx->ext[i]);
    free(ctx->nodes);
    free(ctx->heap);
    free(ctx->path);
    free(ctx->expanded);
    free(ctx->queue);
    free(ctx);
}

size_t pf_search_ctx_memory(const pf_search_ctx *ctx) {
    size_t n = sizeof(*ctx) + ctx->cap * sizeof(pf__node) + ctx->heap_cap * sizeof(pf__heap_item) +
               ctx->path_cap * sizeof(pf_point) + ctx->expanded_cap * sizeof(int32_t) +
               ctx->queue_cap * sizeof(int32_t);
    for (int i = 0; i < PF__EXT_COUNT; i++)
        if (ctx->ext[i] && ctx->ext_memory[i]) n += ctx->ext_memory[i](ctx->ext[i]);
    return n;
}

pf_status pf__ctx_begin(pf_search_ctx *ctx, size_t cells) {
    if (cells > ctx->cap) {
        pf__node *nodes = calloc(cells, sizeof(*nodes));
        if (!nodes) return PF_ENOMEM;
        free(ctx->nodes);
        ctx->nodes = nodes;
        ctx->cap = cells;
        ctx->gen = 0;
    }
    if (cells > ctx->heap_cap) {
        pf__heap_item *heap = malloc(cells * sizeof(*heap));
        if (!heap) return PF_ENOMEM;
        free(ctx->heap);
        ctx->heap = heap;
        ctx->heap_cap = cells;
    }
    ctx->heap_len = 0;
    ctx->seq = 0;
    ctx->expanded_len = 0;
    if (++ctx->gen == 0) {
        /* Wrapped after 2^32 queries: clear once and start again. */
        for (size_t i = 0; i < ctx->cap; i++) ctx->nodes[i].gen = 0;
        ctx->gen = 1;
    }
    return PF_OK;
}

pf_status pf__ctx_reserve_path(pf_search_ctx *ctx, size_t n) {
    if (n > ctx->path_cap) {
        size_t cap = ctx->path_cap ? ctx->path_cap : 256;
        pf_point *p;
        while (cap < n) cap *= 2;
        p = realloc(ctx->path, cap * sizeof(*p));
        if (!p) return PF_ENOMEM;
        ctx->path = p;
        ctx->path_cap = cap;
    }
    return PF_OK;
}

pf_status pf__ctx_reserve_expanded(pf_search_ctx *ctx, size_t n) {
    if (n > ctx->expanded_cap) {
        int32_t *p = realloc(ctx->expanded, n * sizeof(*p));
        if (!p) return PF_ENOMEM;
        ctx->expanded = p;
        ctx->expanded_cap = n;
    }
    return PF_OK;
}

/* Open list: a binary min-heap on (f, h, seq) with positions kept in the
 * node array, so a decrease-key is O(log n). */

static inline bool item_less(const pf__heap_item *a, const pf__heap_item *b) {
    if (a->f != b->f) return a->f < b->f;
    if (a->h != b->h) return a->h < b->h;
    return a->seq < b->seq;
}

static void sift_up(pf_search_ctx *ctx, size_t pos) {
    pf__heap_item it = ctx->heap[pos];
    while (pos > 0) {
        size_t parent = (pos - 1) / 2;
        if (!item_less(&it, &ctx->heap[parent])) break;
        ctx->heap[pos] = ctx->heap[parent];
        ctx->nodes[ctx->heap[pos].node].heap_pos = (int32_t)pos;
        pos = parent;
    }
    ctx->heap[pos] = it;
    ctx->nodes[it.node].heap_pos = (int32_t)pos;
}

static void sift_down(pf_search_ctx *ctx, size_t pos) {
    pf__heap_item it = ctx->heap[pos];
    size_t n = ctx->heap_len;
    for (;;) {
        size_t c = 2 * pos + 1;
        if (c >= n) break;
        if (c + 1 < n && item_less(&ctx->heap[c + 1], &ctx->heap[c])) c++;
        if (!item_less(&ctx->heap[c], &it)) break;
        ctx->heap[pos] = ctx->heap[c];
        ctx->nodes[ctx->heap[pos].node].heap_pos = (int32_t)pos;
        pos = c;
    }
    ctx->heap[pos] = it;
    ctx->nodes[it.node].heap_pos = (int32_t)pos;
}

void pf__heap_push(pf_search_ctx *ctx, int32_t node, double f, double h) {
    size_t pos = ctx->heap_len++;
    ctx->heap[pos].f = f;
    ctx->heap[pos].h = h;
    ctx->heap[pos].seq = ctx->seq++;
    ctx->heap[pos].node = node;
    sift_up(ctx, pos);
}

void pf__heap_decrease(pf_search_ctx *ctx, int32_t node, double f, double h) {
    size_t pos = (size_t)ctx->nodes[node].heap_pos;
    ctx->heap[pos].f = f;
    ctx->heap[pos].h = h;
    sift_up(ctx, pos);
}

int32_t pf__heap_pop(pf_search_ctx *ctx) {
    int32_t best = ctx->heap[0].node;
    ctx->nodes[best].heap_pos = PF__HEAP_CLOSED;
    if (--ctx->heap_len > 0) {
        ctx->heap[0] = ctx->heap[ctx->heap_len];
        sift_down(ctx, 0);
    }
    return best;
}

pf_status pf__ctx_build_path(pf_search_ctx *ctx, const pf_grid *g, int32_t goal, pf_result *out) {
    size_t n = 0;
    pf_status st;
    for (int32_t i = goal; i >= 0; i = ctx->nodes[i].parent) n++;
    st = pf__ctx_reserve_path(ctx, n);
    if (st) return st;
    size_t k = n;
    for (int32_t i = goal; i >= 0; i = ctx->nodes[i].parent) {
        ctx->path[--k].x = i % g->w;
        ctx->path[k].y = i / g->w;
    }
    out->path = ctx->path;
    out->path_len = n;
    return PF_OK;
}

pf_status pf__check_endpoints(const pf_grid *g, pf_point start, pf_point goal) {
    if (!pf_grid_in_bounds(g, start) || !pf_grid_in_bounds(g, goal)) return PF_ERANGE;
    if (!pf_grid_is_walkable(g, start) || !pf_grid_is_walkable(g, goal)) return PF_EBLOCKED;
    return PF_OK;
}

pf_status pf__answer_trivial(pf_search_ctx *ctx, pf_point start, pf_result *out) {
    pf_status st = pf__ctx_reserve_path(ctx, 1);
    if (st) return out->status = st;
    ctx->path[0] = start;
    out->path = ctx->path;
    out->path_len = 1;
    out->cost = 0.0;
    return out->status = PF_OK;
}

/* Partial answers */

int32_t pf__partial_best(const pf_search_ctx *ctx, double (*hdist)(void *ud, int32_t cell),
                         void *ud) {
    int32_t best = -1;
    double bh = 0.0, bg = 0.0;
    for (size_t i = 0; i < ctx->expanded_len; i++) {
        int32_t c = ctx->expanded[i];
        double hc = hdist(ud, c), gc = ctx->nodes[c].g;
        if (best < 0 || hc < bh || (hc == bh && (gc < bg || (gc == bg && c < best)))) {
            best = c;
            bh = hc;
            bg = gc;
        }
    }
    return best;
}

pf_status pf__answer_partial(pf_search_ctx *ctx, const pf_grid *g, int32_t best, pf_status why,
                             pf_result *out) {
    pf_status st;
    if (best < 0) return why;
    if ((st = pf__ctx_build_path(ctx, g, best, out))) return st;
    out->cost = ctx->nodes[best].g;
    out->partial = true;
    out->partial_reason = why;
    return PF_OK;
}

typedef struct partial_goal {
    pf_heuristic h;
    pf_point goal;
    int32_t w;
} partial_goal;

static double partial_h(void *ud, int32_t cell) {
    const partial_goal *p = ud;
    return h_eval(p->h, p->goal.x - cell % p->w, p->goal.y - cell / p->w);
}

/* Searches */

static bool polled_stop(const pf_query *q, uint64_t expanded) {
    return q->should_stop && (expanded & PF__STOP_POLL_MASK) == 0 && q->should_stop(q->stop_ud);
}

static pf_status record_expansion(pf_search_ctx *ctx, const pf_query *q, int32_t cell) {
    if (q->record_expanded | q->partial) ctx->expanded[ctx->expanded_len++] = cell;
    return PF_OK;
}

/* Breadth-first search: fewest steps, ignoring costs. The reported cost is
 * the returned path's real cost under the map's costs. */
static pf_status run_bfs(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q, pf_result *out) {
    const int32_t s = q->start.y * g->w + q->start.x, t = q->goal.y * g->w + q->goal.x;
    const int ndirs = g->connectivity;
    int32_t off[PF_DIR_COUNT];
    size_t head = 0, tail = 0, cells = (size_t)g->w * g->h;
    pf__node *nodes = ctx->nodes;
    const uint32_t gen = ctx->gen;

    if (cells > ctx->queue_cap) {
        int32_t *qq = realloc(ctx->queue, cells * sizeof(*qq));
        if (!qq) return PF_ENOMEM;
        ctx->queue = qq;
        ctx->queue_cap = cells;
    }
    for (int d = 0; d < PF_DIR_COUNT; d++) off[d] = pf__grid_dir_offset(g, d);
    nodes[s].gen = gen;
    nodes[s].parent = -1;
    nodes[s].g = 0;
    ctx->queue[tail++] = s;
    out->generated = 1;
    while (head < tail) {
        int32_t c = ctx->queue[head++];
        uint8_t m = g->moves[c];
        if (polled_stop(q, out->expanded)) return PF_ECANCELED;
        if (q->max_expanded && out->expanded >= q->max_expanded) return PF_EBUDGET;
        out->expanded++;
        record_expansion(ctx, q, c);
        if (c == t) break;
        for (int d = 0; d < ndirs; d++) {
            int32_t n;
            if (!(m & (1u << d))) continue;
            n = c + off[d];
            if (nodes[n].gen == gen) continue;
            nodes[n].gen = gen;
            nodes[n].parent = c;
            nodes[n].g = nodes[c].g + g->cost[n] * pf__dir_len(d);
            ctx->queue[tail++] = n;
            out->generated++;
        }
    }
    if (nodes[t].gen != gen) return PF_NO_PATH;
    out->cost = nodes[t].g;
    return pf__ctx_build_path(ctx, g, t, out);
}

/* Best-first search on f = g + hw * h (hw = 0 for dijkstra), or f = h for
 * greedy. Nodes are not reopened: with a consistent heuristic (dijkstra,
 * astar) no closed node can improve, and weighted A* without reopening keeps
 * its w x optimal bound (Likhachev, Gordon & Thrun, ARA*, 2003).
 *
 * `bypass` (astar only, whose heuristic is consistent): a successor whose f
 * equals the f of the node being expanded cannot be beaten by anything in
 * the open list, so it goes on a LIFO stack and is expanded next without
 * touching the heap. On open grids most successors towards the goal keep f,
 * so this skips most heap traffic. "Equals" allows a relative 1e-12 for the
 * rounding of sqrt(2) sums, measured from the f that started the chain, so
 * the answer is within that of the optimum. */
#define STACKED (-2)

static pf_status run_best_first(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q,
                                pf_heuristic h, double hscale, bool greedy, bool bypass,
                                pf_result *out) {
    const int32_t w = g->w;
    const int32_t s = q->start.y * w + q->start.x, t = q->goal.y * w + q->goal.x;
    const int32_t gx = q->goal.x, gy = q->goal.y;
    const int ndirs = g->connectivity;
    int32_t off[PF_DIR_COUNT];
    double len[PF_DIR_COUNT];
    pf__node *nodes = ctx->nodes;
    const uint32_t gen = ctx->gen;
    const uint8_t *cost = g->cost;
    const uint8_t *moves = g->moves;
    int32_t *stack = ctx->queue;
    size_t sp = 0;
    double fchain = 0.0;

    if (bypass) {
        size_t cells = (size_t)g->w * g->h;
        if (cells > ctx->queue_cap) {
            int32_t *qq = realloc(ctx->queue, cells * sizeof(*qq));
            if (!qq) return PF_ENOMEM;
            ctx->queue = qq;
            ctx->queue_cap = cells;
        }
        stack = ctx->queue;
    }
    for (int d = 0; d < PF_DIR_COUNT; d++) {
        off[d] = pf__grid_dir_offset(g, d);
        len[d] = pf__dir_len(d);
    }
    nodes[s].gen = gen;
    nodes[s].parent = -1;
    nodes[s].g = 0;
    {
        double hs = hscale * h_eval(h, gx - q->start.x, gy - q->start.y);
        pf__heap_push(ctx, s, hs, hs);
    }
    out->generated = 1;
    while (sp > 0 || ctx->heap_len > 0) {
        int32_t c;
        uint8_t m;
        double gc, flimit;
        if (sp > 0) {
            c = stack[--sp];
            nodes[c].heap_pos = PF__HEAP_CLOSED;
        } else {
            fchain = ctx->heap[0].f;
            c = pf__heap_pop(ctx);
        }
        if (c == t) {
            out->cost = nodes[t].g;
            return pf__ctx_build_path(ctx, g, t, out);
        }
        if (polled_stop(q, out->expanded)) return PF_ECANCELED;
        if (q->max_expanded && out->expanded >= q->max_expanded) return PF_EBUDGET;
        out->expanded++;
        record_expansion(ctx, q, c);
        m = moves[c];
        gc = nodes[c].g;
        flimit = bypass ? fchain + 1e-12 * (fchain + 1.0) : -1.0;
        /* One division per expansion; neighbours' coordinates follow. */
        const int32_t cx = c % w, cy = c / w;
        for (int d = 0; d < ndirs; d++) {
            int32_t n;
            double gn, hn;
            if (!(m & (1u << d))) continue;
            n = c + off[d];
            gn = gc + cost[n] * len[d];
            if (nodes[n].gen != gen) {
                const int32_t nx = cx + pf_dir_dx[d], ny = cy + pf_dir_dy[d];
                nodes[n].gen = gen;
                nodes[n].g = gn;
                nodes[n].parent = c;
                hn = hscale * h_eval(h, gx - nx, gy - ny);
                if (gn + hn <= flimit) {
                    nodes[n].heap_pos = STACKED;
                    stack[sp++] = n;
                } else {
                    pf__heap_push(ctx, n, greedy ? hn : gn + hn, hn);
                }
                out->generated++;
            } else if (!greedy && nodes[n].heap_pos != PF__HEAP_CLOSED && gn < nodes[n].g) {
                const int32_t nx = cx + pf_dir_dx[d], ny = cy + pf_dir_dy[d];
                nodes[n].g = gn;
                nodes[n].parent = c;
                if (nodes[n].heap_pos != STACKED) {
                    hn = hscale * h_eval(h, gx - nx, gy - ny);
                    pf__heap_decrease(ctx, n, gn + hn, hn);
                }
                out->generated++;
            }
        }
    }
    return PF_NO_PATH;
}

pf_status pf_search(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q, pf_result *out) {
    pf_heuristic h = q->heuristic;
    size_t cells = (size_t)g->w * (size_t)g->h;
    pf_status st;

    memset(out, 0, sizeof(*out));
    out->algorithm = q->algorithm;
    if ((unsigned)h >= PF_H_COUNT) return out->status = PF_EINVAL;
    if (h == PF_H_DEFAULT) h = g->connectivity == 8 ? PF_H_OCTILE : PF_H_MANHATTAN;
    switch (q->algorithm) {
    case PF_ALGO_BFS:
    case PF_ALGO_DIJKSTRA:
    case PF_ALGO_GREEDY:
        break;
    case PF_ALGO_ASTAR:
        if (!pf_heuristic_is_admissible(h, g->connectivity)) return out->status = PF_EINVAL;
        break;
    case PF_ALGO_WEIGHTED:
        if (!isfinite(q->weight) || q->weight < 1.0) return out->status = PF_EINVAL;
        break;
    default:
        return out->status = PF_EINVAL;
    }
    if (q->agent_size > 1) return out->status = PF_EUNSUPPORTED; /* pf_planner_search */
    st = pf__check_endpoints(g, q->start, q->goal);
    if (st == PF_EBLOCKED && q->partial && pf_grid_is_walkable(g, q->start)) st = PF_OK;
    if (st) return out->status = st;
    st = pf__ctx_begin(ctx, cells);
    if (st) return out->status = st;
    if (q->record_expanded || q->partial) {
        st = pf__ctx_reserve_expanded(ctx, cells);
        if (st) return out->status = st;
    }
    if (q->start.x == q->goal.x && q->start.y == q->goal.y) {
        out->generated = 1;
        return pf__answer_trivial(ctx, q->start, out);
    }

    double minc = (double)pf_grid_min_cost(g);
    switch (q->algorithm) {
    case PF_ALGO_BFS:
        st = run_bfs(ctx, g, q, out);
        break;
    case PF_ALGO_DIJKSTRA:
        st = run_best_first(ctx, g, q, h, 0.0, false, false, out);
        break;
    case PF_ALGO_ASTAR:
        st = run_best_first(ctx, g, q, h, minc, false, true, out);
        break;
    case PF_ALGO_WEIGHTED:
        st = run_best_first(ctx, g, q, h, minc * q->weight, false, false, out);
        break;
    default:
        st = run_best_first(ctx, g, q, h, minc, true, false, out);
        break;
    }
    if (q->partial && (st == PF_NO_PATH || st == PF_EBUDGET)) {
        partial_goal pg = {h, q->goal, g->w};
        pf_status why = pf_grid_is_walkable(g, q->goal) ? st : PF_EBLOCKED;
        st = pf__answer_partial(ctx, g, pf__partial_best(ctx, partial_h, &pg), why, out);
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
