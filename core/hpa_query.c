/* hpa_query.c -- an HPA* query: insertion of start and goal, the abstract
 * search, refinement from the cached paths, and path improvement.
 *
 * Insertion (Botea et al. 2004, section 4) runs one Dijkstra inside the
 * start's cluster and one reverse Dijkstra inside the goal's cluster, so the
 * start reaches every transition of its cluster at its exact in-cluster cost
 * (and the goal directly when both share a cluster), and every transition of
 * the goal's cluster reaches the goal at its exact cost. They are not added
 * to the shared graph: the abstract A* treats start and goal as two virtual
 * nodes (ids nnodes and nnodes + 1) whose edges come from those Dijkstras.
 *
 * Refinement needs no search: each abstract edge is either one step across a
 * border or a path read from the source node's cached in-cluster tree.
 *
 * Improvement replaces stretches of the refined path by straight grid lines
 * (8-connected Bresenham lines, or 4-connected staircases) whenever every
 * step of the line is allowed and it costs no more than the stretch. On a
 * uniform map a line costs the octile (manhattan) distance, the least any
 * path between its ends can cost, so the pass mostly removes the detours
 * through transition points that plain HPA* makes.
 */
#include "hpa_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

/* From an anchor, the improvement pass tries lines to later path cells
 * until this many in a row failed, and never further than LOOK_MAX cells
 * ahead (bounds the work per anchor: lines are checked cell by cell). */
#define LOOK_PATIENCE 12
#define LOOK_MAX 160

/* Per-thread scratch in ctx->ext[PF__EXT_HPA]. */
typedef struct hpa_scratch {
    int32_t cs;           /* the cluster side the buffers were sized for */
    pf__hpa_dij fwd, rev; /* start's and goal's in-cluster Dijkstras */
    pf_point *seg;        /* one cached path, cs*cs cells */
    pf_point *tmp;        /* improved path */
    double *pc;           /* prefix costs of the refined path */
    size_t tmp_cap;
    int32_t *apath; /* abstract path, virtual nodes included */
    size_t apath_cap;
} hpa_scratch;

static void scratch_free(void *p) {
    hpa_scratch *s = p;
    if (!s) return;
    pf__hpa_dij_free(&s->fwd);
    pf__hpa_dij_free(&s->rev);
    free(s->seg);
    free(s->tmp);
    free(s->pc);
    free(s->apath);
    free(s);
}

static size_t scratch_memory(const void *p) {
    const hpa_scratch *s = p;
    size_t cells = (size_t)s->cs * (size_t)s->cs;
    return sizeof(*s) + 2 * cells * (sizeof(double) + 2 + 3 * sizeof(int32_t)) +
           cells * sizeof(pf_point) + s->tmp_cap * (sizeof(pf_point) + sizeof(double)) +
           s->apath_cap * sizeof(int32_t);
}

static pf_status get_scratch(pf_search_ctx *ctx, int32_t cs, hpa_scratch **out) {
    hpa_scratch *s = ctx->ext[PF__EXT_HPA];
    if (s && s->cs >= cs) {
        *out = s;
        return PF_OK;
    }
    scratch_free(s);
    ctx->ext[PF__EXT_HPA] = NULL;
    s = calloc(1, sizeof(*s));
    if (!s) return PF_ENOMEM;
    s->cs = cs;
    if (pf__hpa_dij_init(&s->fwd, cs) || pf__hpa_dij_init(&s->rev, cs) ||
        !(s->seg = malloc((size_t)cs * (size_t)cs * sizeof(*s->seg)))) {
        scratch_free(s);
        return PF_ENOMEM;
    }
    ctx->ext[PF__EXT_HPA] = s;
    ctx->ext_free[PF__EXT_HPA] = scratch_free;
    ctx->ext_memory[PF__EXT_HPA] = scratch_memory;
    *out = s;
    return PF_OK;
}

static pf_status reserve_tmp(hpa_scratch *s, size_t n) {
    if (n <= s->tmp_cap) return PF_OK;
    size_t cap = s->tmp_cap ? s->tmp_cap : 1024;
    while (cap < n) cap *= 2;
    pf_point *t = realloc(s->tmp, cap * sizeof(*t));
    if (!t) return PF_ENOMEM;
    s->tmp = t;
    double *pc = realloc(s->pc, cap * sizeof(*pc));
    if (!pc) return PF_ENOMEM;
    s->pc = pc;
    s->tmp_cap = cap;
    return PF_OK;
}

static inline double h_cost(int conn, double minc, pf_point a, pf_point b) {
    int32_t dx = a.x > b.x ? a.x - b.x : b.x - a.x, dy = a.y > b.y ? a.y - b.y : b.y - a.y;
    if (conn == 4) return minc * (double)(dx + dy);
    return minc * ((dx > dy ? dx : dy) + (PF_SQRT2 - 1.0) * (dx > dy ? dy : dx));
}

static inline int32_t local_index(const pf_hpa *h, int32_t k, pf_point p) {
    return (p.y - (k / h->ncx) * h->cs) * h->cs + p.x - (k % h->ncx) * h->cs;
}

/* Relaxes node v reached at cost gv from u. */
static inline void relax(pf_search_ctx *ctx, int32_t u, int32_t v, double gv, double hv,
                         pf_result *out) {
    pf__node *nv = &ctx->nodes[v];
    if (nv->gen != ctx->gen) {
        nv->gen = ctx->gen;
        nv->g = gv;
        nv->parent = u;
        pf__heap_push(ctx, v, gv + hv, hv);
        out->generated++;
    } else if (nv->heap_pos != PF__HEAP_CLOSED && gv < nv->g) {
        nv->g = gv;
        nv->parent = u;
        pf__heap_decrease(ctx, v, gv + hv, hv);
        out->generated++;
    }
}

/* A* over the abstract graph from the virtual start S to the virtual goal G.
 * The octile (manhattan) distance times the cheapest cost is consistent:
 * every abstract edge is a real path at least that long. */
static pf_status abstract_search(pf_search_ctx *ctx, const pf_hpa *h, const pf_grid *g,
                                 const pf_query *q, const hpa_scratch *s, int32_t ks, int32_t kg,
                                 pf_result *out) {
    const int32_t S = h->nnodes, G = h->nnodes + 1;
    const int conn = g->connectivity;
    const double minc = (double)pf_grid_min_cost(g);
    const int32_t gfirst = h->cl_node_first[kg], glast = h->cl_node_first[kg + 1];
    pf__node *nodes = ctx->nodes;

    nodes[S].gen = ctx->gen;
    nodes[S].g = 0.0;
    nodes[S].parent = -1;
    {
        double hs = h_cost(conn, minc, q->start, q->goal);
        pf__heap_push(ctx, S, hs, hs);
    }
    out->generated++;
    while (ctx->heap_len > 0) {
        int32_t u = pf__heap_pop(ctx);
        double gu = nodes[u].g;
        if (u == G) return PF_OK;
        if (q->should_stop && (out->expanded & PF__STOP_POLL_MASK) == 0 &&
            q->should_stop(q->stop_ud))
            return PF_ECANCELED;
        if (q->max_expanded && out->expanded >= q->max_expanded) return PF_EBUDGET;
        out->expanded++;
        if (q->record_expanded)
            ctx->expanded[ctx->expanded_len++] =
                u == S ? q->start.y * g->w + q->start.x : h->node_cell[u];
        if (u == S) {
            for (int32_t v = h->cl_node_first[ks]; v < h->cl_node_first[ks + 1]; v++) {
                double d = s->fwd.dist[local_index(h, ks, h->node_pt[v])];
                if (isfinite(d)) relax(ctx, S, v, d, h_cost(conn, minc, h->node_pt[v], q->goal), out);
            }
            if (ks == kg) {
                double d = s->fwd.dist[local_index(h, ks, q->goal)];
                if (isfinite(d)) relax(ctx, S, G, d, 0.0, out);
            }
            continue;
        }
        for (int32_t e = h->edge_first[u]; e < h->edge_first[u + 1]; e++) {
            int32_t v = h->edge_to[e];
            relax(ctx, u, v, gu + h->edge_cost[e], h_cost(conn, minc, h->node_pt[v], q->goal), out);
        }
        if (u >= gfirst && u < glast) {
            double d = s->rev.dist[local_index(h, kg, h->node_pt[u])];
            if (isfinite(d)) relax(ctx, u, G, gu + d, 0.0, out);
        }
    }
    /* Unreachable in the abstract graph although the components said
     * otherwise: impossible by construction, reported rather than trusted. */
    return PF_NO_PATH;
}

/* Follows dir (see pf_hpa.trees) from p to the tree's root, writing the
 * cells, p and root included, into seg. Returns their number. */
static int32_t walk_tree(const pf_hpa *h, const uint8_t *dir, int32_t k, pf_point p,
                         pf_point *seg) {
    int32_t n = 0, cap = h->cs * h->cs;
    for (;;) {
        uint8_t d;
        seg[n++] = p;
        d = dir[local_index(h, k, p)];
        if (d == PF__HPA_NO_DIR || n == cap) break;
        p.x += pf_dir_dx[d];
        p.y += pf_dir_dy[d];
    }
    return n;
}

/* Appends seg[from..to) (step +1) or seg[from..to) walked backwards. */
static pf_status append_cells(pf_search_ctx *ctx, size_t *len, const pf_point *seg, int32_t n,
                              bool backwards) {
    pf_status st = pf__ctx_reserve_path(ctx, *len + (size_t)n);
    if (st) return st;
    for (int32_t i = 0; i < n; i++) ctx->path[(*len)++] = backwards ? seg[n - 1 - i] : seg[i];
    return PF_OK;
}

/* Writes the cell path of the abstract path apath[0..na) into ctx->path. */
static pf_status refine(pf_search_ctx *ctx, const pf_hpa *h, const pf_query *q, hpa_scratch *s,
                        int32_t ks, int32_t kg, const int32_t *apath, int32_t na, size_t *len) {
    const int32_t G = h->nnodes + 1;
    const size_t cells = (size_t)h->cs * (size_t)h->cs;
    pf_status st;
    int32_t n;

    *len = 0;
    st = append_cells(ctx, len, &q->start, 1, false);
    if (st) return st;
    /* Start to the first node (or straight to the goal), from the start's
     * Dijkstra tree walked backwards; the start itself is already there. */
    n = walk_tree(h, s->fwd.dir, ks, apath[1] == G ? q->goal : h->node_pt[apath[1]], s->seg);
    st = append_cells(ctx, len, s->seg, n - 1, true);
    if (st || apath[1] == G) return st;
    for (int32_t i = 1; i + 2 < na; i++) {
        int32_t u = apath[i], v = apath[i + 1];
        int32_t ku = pf__hpa_cluster_of(h, h->node_pt[u].x, h->node_pt[u].y);
        if (v >= h->cl_node_first[ku] && v < h->cl_node_first[ku + 1]) {
            n = walk_tree(h, h->trees + (size_t)u * cells, ku, h->node_pt[v], s->seg);
            st = append_cells(ctx, len, s->seg, n - 1, true);
        } else {
            st = append_cells(ctx, len, &h->node_pt[v], 1, false);
        }
        if (st) return st;
    }
    /* Last node to the goal along the goal's reverse tree. */
    n = walk_tree(h, s->rev.dir, kg, h->node_pt[apath[na - 2]], s->seg);
    return append_cells(ctx, len, s->seg + 1, n - 1, false);
}

/* Path improvement */

static inline int dir_of(int dx, int dy) {
    static const int8_t table[3][3] = {{PF_DIR_NW, PF_DIR_N, PF_DIR_NE},
                                       {PF_DIR_W, -1, PF_DIR_E},
                                       {PF_DIR_SW, PF_DIR_S, PF_DIR_SE}};
    return table[dy + 1][dx + 1];
}

/* Walks a shortest-on-an-empty-map grid path from a to b of one of three
 * shapes: 0 the grid line (8-connected Bresenham: every step advances the
 * major axis, the minor one when the exact line is nearer the next row; on
 * 4-connected maps the staircase of the cells the segment between centres
 * passes, corners resolved horizontally first), 1 diagonal (4-connected:
 * horizontal) steps first, 2 straight (vertical) steps first. All three
 * cost the octile (manhattan) distance on a uniform map. Writes the cells
 * after a into buf when buf is not NULL. Returns the number of steps, or -1
 * when a step is not allowed or the cost passes `budget`; *cost is the
 * cost of the walk. */
static int32_t walk_line(const pf_grid *g, pf_point a, pf_point b, int shape, double budget,
                         pf_point *buf, double *cost) {
    const int32_t w = g->w;
    int64_t adx = b.x > a.x ? b.x - a.x : a.x - b.x, ady = b.y > a.y ? b.y - a.y : a.y - b.y;
    int sx = b.x > a.x ? 1 : (b.x < a.x ? -1 : 0), sy = b.y > a.y ? 1 : (b.y < a.y ? -1 : 0);
    int32_t steps = 0, c = a.y * w + a.x;
    double acc = 0.0;
    pf_point p = a;

    if (g->connectivity == 8) {
        bool xmajor = adx >= ady;
        int64_t n = xmajor ? adx : ady, minor = xmajor ? ady : adx, prev = 0;
        for (int64_t i = 1; i <= n; i++) {
            int64_t m;
            if (shape == 0) /* rounded half up: floor((2 i minor + n) / 2n) */
                m = (2 * i * minor + n) / (2 * n);
            else if (shape == 1)
                m = i < minor ? i : minor;
            else
                m = i - (n - minor) > 0 ? i - (n - minor) : 0;
            int dx = xmajor ? sx : (m != prev ? sx : 0);
            int dy = xmajor ? (m != prev ? sy : 0) : sy;
            int d = dir_of(dx, dy);
            prev = m;
            if (!(g->moves[c] & (1u << d))) return -1;
            c += dx + dy * w;
            acc += g->cost[c] * pf__dir_len(d);
            if (acc > budget) return -1;
            p.x += dx;
            p.y += dy;
            if (buf) buf[steps] = p;
            steps++;
        }
    } else {
        int64_t i = 0, j = 0;
        while (p.x != b.x || p.y != b.y) {
            int64_t tx = adx && i < adx ? (2 * i + 1) * ady : INT64_MAX;
            int64_t ty = ady && j < ady ? (2 * j + 1) * adx : INT64_MAX;
            int dx = 0, dy = 0, d;
            bool xstep = shape == 0 ? tx <= ty : (shape == 1 ? i < adx : j >= ady);
            if (xstep) {
                dx = sx;
                i++;
            } else {
                dy = sy;
                j++;
            }
            d = dir_of(dx, dy);
            if (!(g->moves[c] & (1u << d))) return -1;
            c += dx + dy * w;
            acc += g->cost[c];
            if (acc > budget) return -1;
            p.x += dx;
            p.y += dy;
            if (buf) buf[steps] = p;
            steps++;
        }
    }
    *cost = acc;
    return steps;
}

/* Greedy line shortcuts over ctx->path[0..*len): from each anchor, the
 * furthest later cell (within the look-ahead) whose line is allowed and
 * costs no more than the stretch it replaces. Never raises the cost. */
static pf_status improve(pf_search_ctx *ctx, const pf_grid *g, hpa_scratch *s, size_t *len) {
    const size_t n = *len;
    pf_point *p = ctx->path;
    size_t a = 0, k = 0;
    pf_status st;

    if (n < 3) return PF_OK;
    st = reserve_tmp(s, n);
    if (st) return st;
    s->pc[0] = 0.0;
    for (size_t i = 1; i < n; i++)
        s->pc[i] = s->pc[i - 1] + pf_grid_step_cost(g, p[i - 1], p[i]);
    s->tmp[k++] = p[0];
    while (a + 1 < n) {
        size_t best = a + 1, fails = 0;
        int best_shape = 0;
        double lc;
        for (size_t j = a + 2; j < n && fails < LOOK_PATIENCE && j - a <= LOOK_MAX; j++) {
            double budget = s->pc[j] - s->pc[a] + 1e-9;
            int shape = 0;
            while (shape < 3 && walk_line(g, p[a], p[j], shape, budget, NULL, &lc) < 0) shape++;
            if (shape < 3) {
                best = j;
                best_shape = shape;
                fails = 0;
            } else {
                fails++;
            }
        }
        if (best == a + 1) {
            s->tmp[k++] = p[a + 1];
        } else {
            /* A walk has no more steps than the stretch it replaces. */
            k += (size_t)walk_line(g, p[a], p[best], best_shape, INFINITY, s->tmp + k, &lc);
        }
        a = best;
    }
    memcpy(p, s->tmp, k * sizeof(*p));
    *len = k;
    return PF_OK;
}

pf_status pf_hpa_search(pf_search_ctx *ctx, const pf_hpa *h, const pf_grid *g, const pf_query *q,
                        pf_result *out) {
    hpa_scratch *s;
    int32_t ks, kg, x0, y0, bw, bh, na = 0;
    size_t len = 0;
    pf_status st;

    memset(out, 0, sizeof(*out));
    out->algorithm = PF_ALGO_HPA;
    if (g->w != h->w || g->h != h->h || g->connectivity != h->connectivity ||
        g->corner_cutting != h->corner_cutting)
        return out->status = PF_EINVAL;
    st = pf__check_endpoints(g, q->start, q->goal);
    if (st) return out->status = st;
    if (q->start.x == q->goal.x && q->start.y == q->goal.y) {
        out->generated = 1;
        return pf__answer_trivial(ctx, q->start, out);
    }
    /* Different components: no path, and no search. */
    if (!pf_hpa_connected(h, q->start, q->goal)) return out->status = PF_NO_PATH;

    st = get_scratch(ctx, h->cs, &s);
    if (st) return out->status = st;
    st = pf__ctx_begin(ctx, (size_t)h->nnodes + 2);
    if (st) return out->status = st;
    if (q->record_expanded) {
        st = pf__ctx_reserve_expanded(ctx, (size_t)h->nnodes + 2);
        if (st) return out->status = st;
    }

    ks = pf__hpa_cluster_of(h, q->start.x, q->start.y);
    kg = pf__hpa_cluster_of(h, q->goal.x, q->goal.y);
    s->fwd.expanded = s->rev.expanded = 0;
    pf__hpa_box(h, ks, &x0, &y0, &bw, &bh);
    pf__hpa_dijkstra(g, x0, y0, bw, bh, h->cs, q->start.x, q->start.y, false, NULL, 0,
                     &s->fwd);
    pf__hpa_box(h, kg, &x0, &y0, &bw, &bh);
    pf__hpa_dijkstra(g, x0, y0, bw, bh, h->cs, q->goal.x, q->goal.y, true, NULL, 0, &s->rev);

    st = abstract_search(ctx, h, g, q, s, ks, kg, out);
    out->expanded += s->fwd.expanded + s->rev.expanded;
    if (q->record_expanded) {
        out->expanded_cells = ctx->expanded;
        out->expanded_cells_len = ctx->expanded_len;
    }
    if (st) return out->status = st;

    for (int32_t v = h->nnodes + 1; v >= 0; v = ctx->nodes[v].parent) na++;
    if ((size_t)na > s->apath_cap) {
        int32_t *ap = realloc(s->apath, (size_t)na * 2 * sizeof(*ap));
        if (!ap) return out->status = PF_ENOMEM;
        s->apath = ap;
        s->apath_cap = (size_t)na * 2;
    }
    {
        int32_t i = na;
        for (int32_t v = h->nnodes + 1; v >= 0; v = ctx->nodes[v].parent) s->apath[--i] = v;
    }
    st = refine(ctx, h, q, s, ks, kg, s->apath, na, &len);
    if (!st) st = improve(ctx, g, s, &len);
    if (st) return out->status = st;

    out->path = ctx->path;
    out->path_len = len;
    out->cost = 0.0;
    for (size_t i = 1; i < len; i++) out->cost += pf_grid_step_cost(g, ctx->path[i - 1], ctx->path[i]);
    return out->status = PF_OK;
}
