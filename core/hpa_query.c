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

#include "landmarks.h"
#include "search_internal.h"

/* From an anchor, the improvement pass looks for lines to path cells at
 * most this many cells ahead (bounds the work per anchor: lines are checked
 * cell by cell). */
#define LOOK_MAX 160
/* It gives up after this many failed cells in a row, and sooner while the
 * anchor has not got far: after at most max(LOOK_PATIENCE_MIN, advance so
 * far) of them. Where lines only reach a few cells (mazes, dense clutter)
 * the cells behind the next corner almost never become reachable again,
 * and the failures there were most of the pass's work; in open country the
 * advance is large and the full patience applies. Measured over all 56805
 * shared scenarios: mean suboptimality 0.314% -> 0.315%, 99th percentile
 * 2.38% -> 2.42%; callgrind, 100 long queries: maze512-1-0 462M -> 259M
 * instructions, random512-40-0 300M -> 242M. A minimum of 2 instead of 3
 * changed the suboptimality by less than 0.001% and saved another 1-4%;
 * 1 (one failure ends an anchor that has not advanced past its next cell)
 * changed no scenario's cost outside brc202d and random512-10-0 (mean
 * 0.3533% either way, p99 3.726%) and saved 1% on random512-40-0. */
#define LOOK_PATIENCE 12
#define LOOK_PATIENCE_MIN 1

/* The abstract A* weighs its heuristic by this much (weighted A*, Pohl
 * 1970; the cost of the abstract path is then within the weight of the
 * best one). It was 1.1: abstract paths detour through transition points,
 * so the octile heuristic trails their cost and plain A* widens into an
 * ellipse; the weight narrowed it (random512-10-0's long queries took half
 * the instructions). But the weight's detours are visible: one in eight
 * queries over 5% above the optimum on random512-10-0, single ones of
 * 7-14% on open game maps (a route round the wrong side of a wall, which no
 * shortening undoes), 0.367% over optimal on average over every shared
 * scenario. Unweighted, with the denser transitions of hpa_build.c and the
 * repairs below, no scenario is more than 5% over (see the README); 1.05
 * still left random512-10-0 at 1.1% on average. */
#define H_WEIGHT 1.0

/* Queries whose ends are at most SHORT_CELLS apart (octile distance, in
 * cells) are first tried with plain A* on the grid, given at most
 * SHORT_BUDGET expansions: near the start the hierarchy only adds detours
 * (a query between neighbouring clusters must cross at a transition, 64%
 * over the optimum in the worst shared case), and A* there costs about what
 * the two insertion Dijkstras of HPA* would (two 16x16 clusters). Past the
 * budget (a short distance through a long detour, as in a maze) the query
 * goes on with HPA*, with the budget's expansions counted. */
#define SHORT_CELLS 48
#define SHORT_BUDGET 1024

/* Windowed repair: the shortened path is cut into windows of WINDOW cells;
 * a window costing more than (1 + WINDOW_SLACK) times the octile distance
 * between its ends, but less than WINDOW_MAX_RATIO times it (a winding
 * window is where the map winds, not a detour), is searched again with A*
 * between its ends (at most WINDOW_BUDGET x WINDOW^2 expansions) and
 * replaced when that finds it cheaper. Where the map has landmarks their
 * bound replaces the octile distance when larger, which keeps the windows
 * through doors and round walls out (their cost is that of the map, not of
 * a detour). It catches the detours at border crossings on cluttered open
 * ground that the line shortcuts cannot straighten: random512-10-0's mean
 * over the optimum 0.84% -> 0.43% for 30% more instructions (callgrind,
 * 300 queries); 32room_000 0.076% -> 0.055% (+17%), AR0011SR 0.057% ->
 * 0.026% (+4%). Windows of 48 cells left random512-10-0 at 0.48%, 80 took
 * it to 0.38% for 12% more. */
#define WINDOW 64
#define WINDOW_SLACK 0.01
#define WINDOW_MAX_RATIO 1.1
#define WINDOW_BUDGET 2

/* Per-thread scratch in ctx->ext[PF__EXT_HPA]. */
typedef struct hpa_scratch {
    int32_t cs;           /* the cluster side the buffers were sized for */
    pf__hpa_dij fwd, rev; /* start's and goal's in-cluster Dijkstras */
    /* Distances from the start to the nodes of its cluster and from the
     * nodes of the goal's cluster to the goal, [4 * cs] each (a cluster has
     * at most cs transitions a side). */
    double *sdist, *gdist;
    pf_point *tmp; /* improved path */
    double *pc;    /* prefix costs of the refined path */
    size_t tmp_cap;
    pf_point *tmp2; /* repaired path (windowed repair), 2 x tmp_cap */
    int32_t *apath; /* abstract path, virtual nodes included */
    size_t apath_cap;
    uint8_t *via; /* per abstract node: reached along an intra-cluster edge */
    size_t via_cap;
    pf_point *apts; /* the abstract path's cells, for pf_result.abstract_path */
    size_t apts_cap;
} hpa_scratch;

static void scratch_free(void *p) {
    hpa_scratch *s = p;
    if (!s) return;
    pf__hpa_dij_free(&s->fwd);
    pf__hpa_dij_free(&s->rev);
    free(s->sdist);
    free(s->tmp);
    free(s->pc);
    free(s->tmp2);
    free(s->apath);
    free(s->via);
    free(s->apts);
    free(s);
}

static size_t scratch_memory(const void *p) {
    const hpa_scratch *s = p;
    size_t cells = (size_t)s->cs * (size_t)s->cs;
    return sizeof(*s) + 2 * cells * (sizeof(double) + 4 + 3 * sizeof(int32_t)) +
           8 * (size_t)s->cs * sizeof(double) +
           s->tmp_cap * (3 * sizeof(pf_point) + sizeof(double)) + s->apath_cap * sizeof(int32_t) +
           s->via_cap + s->apts_cap * sizeof(pf_point);
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
    s->sdist = malloc(8 * (size_t)cs * sizeof(double));
    s->gdist = s->sdist ? s->sdist + 4 * cs : NULL;
    if (!s->sdist || pf__hpa_dij_init(&s->fwd, cs) || pf__hpa_dij_init(&s->rev, cs)) {
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
    t = realloc(s->tmp2, 2 * cap * sizeof(*t));
    if (!t) return PF_ENOMEM;
    s->tmp2 = t;
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

/* The abstract A*. Its open list is a 4-ary min-heap on (f, h, insertion
 * order), the order of the shared binary heap, kept in the context's heap
 * and node arrays; it is local so that its operations inline. */

#define NOT_QUEUED (-2) /* seen, not in the open list, not closed (pf__node.heap_pos) */

typedef struct astar {
    pf_search_ctx *ctx;
    pf__node *nodes;
    pf__heap_item *heap;
    size_t len;
    uint32_t seq, gen;
    uint8_t *via; /* per node: its g came along an intra-cluster edge */
    const pf_hpa *h;
    const double *gdist; /* hpa_scratch.gdist */
    pf_point goal;
    int conn;
    double minc;
    int32_t G, gfirst, glast, kg;
    int32_t sin, gin; /* region_span[].in of the start's and the goal's regions */
    uint64_t generated;
    const pf_landmarks *lm;           /* NULL: the octile distance alone */
    const uint16_t *lm_rows;          /* pf_hpa_lm.d, or NULL: lm's own tables */
    double lm_goal[PF_LANDMARKS_MAX]; /* the goal's landmark distances */
    int lm_n;                         /* active landmarks */
    int lm_idx[PF_LANDMARKS_MAX];
} astar;

/* Landmarks the abstract search evaluates per node: as jps's default
 * (jps.h, PF_JPS_DEFAULT_ACTIVE_LANDMARKS), the ones that bound the start's
 * distance to the goal best. */
#define ACTIVE_LANDMARKS 6

/* The heuristic of abstract node v: the octile (manhattan) distance times
 * the cheapest cost, or, where the map has landmarks, their differential
 * bound when larger: a lower bound of the grid distance, so of every
 * abstract path too, and consistent, as is the maximum. On room and game
 * maps, where walls make the octile distance far too low, it cut the
 * abstract search's instructions by about a third (callgrind, 300 queries,
 * clusters of 16: AR0011SR 256M -> 164M, 8room_000 322M -> 218M,
 * maze512-8-0 753M -> 534M; random512-10-0, where octile is nearly exact,
 * 2%). With the clusters of 64 of large maps it pays on random512-10-0 too
 * (its 420 queries of the longest quarter: abstract search 473M -> 330M;
 * the windows, whose filter the landmarks also tighten, 513M -> 82M). */
static inline double node_h(const astar *a, int32_t v) {
    pf_point p = a->h->node_pt[v];
    double hh = h_cost(a->conn, a->minc, p, a->goal);
    if (a->lm) {
        const uint16_t *d = a->lm_rows
                                ? a->lm_rows + (size_t)v * 2 * (size_t)a->lm->k
                                : a->lm->d + (size_t)(p.y * a->h->w + p.x) * 2 * (size_t)a->lm->k;
        double best = 0.0;
        for (int i = 0; i < a->lm_n; i++) {
            int j = a->lm_idx[i];
            double x = a->lm_goal[j] - ((double)d[2 * j] + (double)d[2 * j + 1] * PF_SQRT2);
            x = x < 0 ? -x : x;
            best = x > best ? x : best;
        }
        best *= (double)a->lm->cost * (1.0 - 1e-12);
        hh = best > hh ? best : hh;
    }
    return hh;
}

/* lm when it bounds distances on g, else NULL: landmarks of another size,
 * corner rule or cost, or of a map jps would not serve, were never measured
 * for g. */
static const pf_landmarks *lm_bound(const pf_landmarks *lm, const pf_grid *g) {
    if (!lm || lm->w != g->w || lm->h != g->h || lm->cut != g->corner_cutting ||
        g->connectivity != 8 || g->nwalls != 0 || (int64_t)g->cost_hist[lm->cost] != g->walkable)
        return NULL;
    return lm;
}

/* Sets up a's landmarks (NULL: none) for query q on g. */
static void landmarks_begin(astar *a, const pf_landmarks *lm, const pf_grid *g, const pf_query *q) {
    double sd[PF_LANDMARKS_MAX], val[PF_LANDMARKS_MAX];
    int want;
    a->lm = lm_bound(lm, g);
    if (!a->lm) return;
    want = ACTIVE_LANDMARKS < lm->k ? ACTIVE_LANDMARKS : lm->k;
    pf_landmarks_dist(lm, q->goal.y * g->w + q->goal.x, a->lm_goal);
    pf_landmarks_dist(lm, q->start.y * g->w + q->start.x, sd);
    for (int i = 0; i < lm->k; i++) val[i] = fabs(a->lm_goal[i] - sd[i]);
    a->lm_n = 0;
    while (a->lm_n < want) {
        int b = 0;
        for (int c = 1; c < lm->k; c++)
            if (val[c] > val[b]) b = c;
        a->lm_idx[a->lm_n++] = b;
        val[b] = -1.0;
    }
}

/* Whether the search may enter node v across a border: its region is in
 * the 2-core of the region graph, or its dead-end subtree holds the start's
 * or the goal's region (see pf_hpa.region_span; any other subtree is only
 * left through the node the search would come from). */
static inline bool may_enter(const astar *a, int32_t v) {
    pf__hpa_span sp = a->h->node_span[v];
    uint32_t width = (uint32_t)(sp.out - sp.in);
    return sp.in < 0 || (uint32_t)(a->sin - sp.in) < width || (uint32_t)(a->gin - sp.in) < width;
}

/* Costs are never NaN, so two ordered tests decide f (cheaper than != and
 * <, which also test for NaN). */
static inline bool item_less(const pf__heap_item *a, const pf__heap_item *b) {
    if (a->f < b->f) return true;
    if (b->f < a->f) return false;
    if (a->h != b->h) return a->h < b->h;
    return a->seq < b->seq;
}

static inline void heap_up(astar *a, size_t pos, pf__heap_item it) {
    while (pos > 0) {
        size_t parent = (pos - 1) / 4;
        if (!item_less(&it, &a->heap[parent])) break;
        a->heap[pos] = a->heap[parent];
        a->nodes[a->heap[pos].node].heap_pos = (int32_t)pos;
        pos = parent;
    }
    a->heap[pos] = it;
    a->nodes[it.node].heap_pos = (int32_t)pos;
}

static inline int32_t heap_pop(astar *a) {
    int32_t best = a->heap[0].node;
    a->nodes[best].heap_pos = PF__HEAP_CLOSED;
    if (--a->len > 0) {
        pf__heap_item it = a->heap[a->len];
        size_t pos = 0, n = a->len;
        for (;;) {
            size_t c = 4 * pos + 1, m;
            if (c + 4 <= n) { /* all four children: a tournament, no bounds tests */
                size_t m1 = item_less(&a->heap[c + 1], &a->heap[c]) ? c + 1 : c;
                size_t m2 = item_less(&a->heap[c + 3], &a->heap[c + 2]) ? c + 3 : c + 2;
                m = item_less(&a->heap[m2], &a->heap[m1]) ? m2 : m1;
            } else {
                if (c >= n) break;
                m = c;
                for (size_t i = c + 1; i < n; i++)
                    if (item_less(&a->heap[i], &a->heap[m])) m = i;
            }
            if (!item_less(&a->heap[m], &it)) break;
            a->heap[pos] = a->heap[m];
            a->nodes[a->heap[pos].node].heap_pos = (int32_t)pos;
            pos = m;
        }
        a->heap[pos] = it;
        a->nodes[it.node].heap_pos = (int32_t)pos;
    }
    return best;
}

/* Whether gv would not improve v's cost: v is closed or already has a
 * cost at most gv. Checked inline before the calls below, which most
 * offers on a dense abstract graph fail. */
static inline bool no_better(const astar *a, int32_t v, double gv) {
    const pf__node *nv = &a->nodes[v];
    return nv->gen == a->gen && (nv->heap_pos == PF__HEAP_CLOSED || !(gv < nv->g));
}

/* Offers v the cost gv from u, v to be expanded from the open list. */
static void relax_open(astar *a, int32_t u, int32_t v, double gv) {
    pf__node *nv = &a->nodes[v];
    pf__heap_item it;
    if (nv->gen == a->gen) {
        if (nv->heap_pos == PF__HEAP_CLOSED || !(gv < nv->g)) return;
        if (nv->heap_pos >= 0) { /* in the open list: the heuristic is f - g */
            size_t pos = (size_t)nv->heap_pos;
            it = a->heap[pos];
            it.f = gv + it.h;
            nv->g = gv;
            nv->parent = u;
            a->via[v] = 0;
            heap_up(a, pos, it);
            a->generated++;
            return;
        }
    }
    it.h = v == a->G ? 0.0 : H_WEIGHT * node_h(a, v);
    it.f = gv + it.h;
    it.seq = a->seq++;
    it.node = v;
    nv->gen = a->gen;
    nv->g = gv;
    nv->parent = u;
    a->via[v] = 0;
    heap_up(a, a->len++, it);
    a->generated++;
}

/* Offers v the cost gv from u along an intra-cluster edge (or from the
 * virtual start). Such a node needs no expansion of its own (see
 * abstract_search): its inter-cluster edges and its goal edge are relaxed at
 * once instead, and it stays out of the open list. */
static void reach_intra(astar *a, int32_t u, int32_t v, double gv) {
    pf__node *nv = &a->nodes[v];
    const pf_hpa *h = a->h;
    if (nv->gen == a->gen) {
        if (nv->heap_pos == PF__HEAP_CLOSED || !(gv < nv->g)) return;
    } else {
        nv->gen = a->gen;
        nv->heap_pos = NOT_QUEUED;
    }
    nv->g = gv;
    nv->parent = u;
    a->via[v] = 1;
    a->generated++;
    for (int32_t e = h->edge_inter[v]; e < h->edge_first[v + 1]; e++) {
        int32_t w = h->edge_to[e];
        double gw = gv + h->edge_cost[e];
        if (!no_better(a, w, gw) && may_enter(a, w)) relax_open(a, v, w, gw);
    }
    if (v >= a->gfirst && v < a->glast) {
        double d = a->gdist[v - a->gfirst];
        if (isfinite(d)) relax_open(a, v, a->G, gv + d);
    }
}

/* Whether a query end in cluster k, the other end in cluster other, is
 * inserted from the nodes' trees (walk_ends) rather than by a Dijkstra
 * (search_end). */
static inline bool walks(const pf_hpa *h, int32_t k, int32_t other) {
    return k != other && h->cl[k]->sym;
}

/* Node v's tree (v in cluster k). */
static inline const uint8_t *node_tree(const pf_hpa *h, int32_t k, int32_t v) {
    return h->cl[k]->trees + (size_t)(v - h->cl_node_first[k]) * (size_t)h->cs * (size_t)h->cs;
}

#define WALK_LANES 8

/* Insertion: the distances between an end of the query, p, and the nodes of
 * its cluster k. */

/* In a symmetric cluster (pf__hpa_cluster.sym), read off the nodes' trees:
 * each covers its node's region, and the path from the node to p, walked
 * backwards, is a shortest in-cluster path either way, of c per straight
 * and c * sqrt 2 per diagonal step. d[i] is node i's distance (INFINITY
 * outside p's region). Returns the cells walked. On random512-10-0 with
 * clusters of 64 the two insertion Dijkstras were half a long query's
 * instructions (callgrind, 100 queries of the longest quarter: 157M of
 * 300M); the walks are 5M of 137M, but their loads miss the caches: one
 * walk at a time took about a fifth of the query's time (perf), eight at a
 * time about half as much. */
static uint64_t walk_ends(const pf_hpa *h, const pf_grid *g, int32_t k, pf_point p, double *d) {
    const int32_t cs = h->cs, first = h->cl_node_first[k], n = h->cl_node_first[k + 1] - first;
    const int32_t from = local_index(h, k, p);
    const double c = (double)g->cost[p.y * g->w + p.x];
    uint64_t walked = 0;
    /* WALK_LANES walks at a time, a step of each in turn: each walk is a
     * chain of dependent loads spread over its node's tree, and the
     * independent chains overlap their cache misses. */
    for (int32_t base = 0; base < n; base += WALK_LANES) {
        const uint8_t *dir[WALK_LANES] = {0};
        int32_t li[WALK_LANES] = {0}, root[WALK_LANES] = {0}, ns[WALK_LANES] = {0};
        int32_t nd[WALK_LANES] = {0}, m = n - base < WALK_LANES ? n - base : WALK_LANES, live = m;
        bool done[WALK_LANES] = {0};
        for (int32_t j = 0; j < m; j++) {
            dir[j] = node_tree(h, k, first + base + j);
            li[j] = from;
            root[j] = local_index(h, k, h->node_pt[first + base + j]);
        }
        while (live > 0) {
            for (int32_t j = 0; j < m; j++) {
                uint8_t t;
                if (done[j]) continue;
                t = li[j] == root[j] ? PF__HPA_NO_DIR : dir[j][li[j]];
                if (t == PF__HPA_NO_DIR) {
                    done[j] = true;
                    live--;
                    continue;
                }
                if (t < 4) /* pf__dir_len */
                    ns[j]++;
                else
                    nd[j]++;
                li[j] += pf_dir_dx[t] + pf_dir_dy[t] * cs;
            }
        }
        for (int32_t j = 0; j < m; j++) {
            walked += (uint64_t)(ns[j] + nd[j]);
            d[base + j] =
                li[j] == root[j] ? c * ((double)ns[j] + PF_SQRT2 * (double)nd[j]) : INFINITY;
        }
    }
    return walked;
}

/* Otherwise by a Dijkstra inside the cluster into dij, forward from p
 * (start) or reverse towards it (goal). */
static void search_end(const pf_hpa *h, const pf_grid *g, int32_t k, pf_point p, bool reverse,
                       pf__hpa_dij *dij, double *d) {
    int32_t x0, y0, bw, bh;
    pf__hpa_box(h, k, &x0, &y0, &bw, &bh);
    pf__hpa_dij_load(dij, g, h->cs, x0, y0, bw, bh);
    pf__hpa_dijkstra(dij, local_index(h, k, p), reverse, NULL, 0);
    for (int32_t v = h->cl_node_first[k]; v < h->cl_node_first[k + 1]; v++)
        d[v - h->cl_node_first[k]] = dij->dist[local_index(h, k, h->node_pt[v])];
}

/* A* over the abstract graph from the virtual start S to the virtual goal G.
 * The octile (manhattan) distance times the cheapest cost is consistent:
 * every abstract edge is a real path at least that long (the search weighs
 * it by H_WEIGHT, 1: the abstract path is the best one).
 * A node reached along an intra-cluster edge (or from S) never needs its
 * own intra-cluster edges: the cluster's distances obey the triangle
 * inequality (they are exact shortest in-cluster paths, as are S's), so the
 * node it came from already offered every other node of the cluster a cost
 * at least as low. Its inter-cluster edges and goal edge are relaxed when it
 * is reached (so an intra edge and the inter edge after it act as one
 * compound edge), and only nodes reached across a border enter the open
 * list, which roughly halves its traffic. A reached node's cost can still
 * drop later, and then its edges are relaxed again; it never drops for a
 * node whose successor is already closed, as the heuristic is consistent. */
static pf_status abstract_search(pf_search_ctx *ctx, const pf_hpa *h, const pf_grid *g,
                                 const pf_landmarks *lm, const pf_hpa_lm *rows, const pf_query *q,
                                 const hpa_scratch *s, int32_t ks, int32_t kg, pf_result *out) {
    const int32_t S = h->nnodes;
    astar a;
    pf_status st = PF_NO_PATH;

    a.ctx = ctx;
    a.nodes = ctx->nodes;
    a.heap = ctx->heap;
    a.len = 0;
    a.seq = 0;
    a.gen = ctx->gen;
    a.via = s->via;
    a.h = h;
    a.gdist = s->gdist;
    a.goal = q->goal;
    a.conn = g->connectivity;
    a.minc = (double)pf_grid_min_cost(g);
    landmarks_begin(&a, lm, g, q);
    a.lm_rows = a.lm && rows && rows->h == h && rows->lm == a.lm ? rows->d : NULL;
    a.G = h->nnodes + 1;
    a.gfirst = h->cl_node_first[kg];
    a.glast = h->cl_node_first[kg + 1];
    a.kg = kg;
    a.sin =
        h->region_span[h->cl_region_first[ks] + pf__hpa_region_at(h, q->start.x, q->start.y)].in;
    a.gin = h->region_span[h->cl_region_first[kg] + pf__hpa_region_at(h, q->goal.x, q->goal.y)].in;
    a.generated = 0;

    a.nodes[S].gen = a.gen;
    a.nodes[S].g = 0.0;
    a.nodes[S].parent = -1;
    {
        pf__heap_item it = {0.0, 0.0, a.seq++, S};
        it.h = H_WEIGHT * h_cost(a.conn, a.minc, q->start, q->goal);
        if (a.lm) {
            double hl =
                H_WEIGHT * pf_landmarks_h_to(a.lm, q->start.y * g->w + q->start.x, a.lm_goal);
            it.h = hl > it.h ? hl : it.h;
        }
        it.f = it.h;
        heap_up(&a, a.len++, it);
        a.generated++;
    }
    while (a.len > 0) {
        int32_t u = heap_pop(&a);
        double gu = a.nodes[u].g;
        if (u == a.G) {
            st = PF_OK;
            break;
        }
        if (q->should_stop && (out->expanded & PF__STOP_POLL_MASK) == 0 &&
            q->should_stop(q->stop_ud)) {
            st = PF_ECANCELED;
            break;
        }
        if (q->max_expanded && out->expanded >= q->max_expanded) {
            st = PF_EBUDGET;
            break;
        }
        out->expanded++;
        if (q->record_expanded)
            ctx->expanded[ctx->expanded_len++] =
                u == S ? q->start.y * g->w + q->start.x : h->node_pt[u].y * g->w + h->node_pt[u].x;
        if (u == S) {
            for (int32_t v = h->cl_node_first[ks]; v < h->cl_node_first[ks + 1]; v++) {
                double d = s->sdist[v - h->cl_node_first[ks]];
                if (isfinite(d)) reach_intra(&a, S, v, d);
            }
            if (ks == kg) {
                double d = s->fwd.dist[local_index(h, ks, q->goal)];
                if (isfinite(d)) relax_open(&a, S, a.G, d);
            }
            continue;
        }
        /* A node whose cost came along an intra edge after it was queued
         * has had all its relaxations. */
        if (a.via[u]) continue;
        for (int32_t e = h->edge_first[u]; e < h->edge_inter[u]; e++) {
            int32_t v = h->edge_to[e];
            double gv = gu + h->edge_cost[e];
            if (!no_better(&a, v, gv)) reach_intra(&a, u, v, gv);
        }
        for (int32_t e = h->edge_inter[u]; e < h->edge_first[u + 1]; e++) {
            int32_t v = h->edge_to[e];
            double gv = gu + h->edge_cost[e];
            if (!no_better(&a, v, gv) && may_enter(&a, v)) relax_open(&a, u, v, gv);
        }
        if (u >= a.gfirst && u < a.glast) {
            double d = a.gdist[u - a.gfirst];
            if (isfinite(d)) relax_open(&a, u, a.G, gu + d);
        }
    }
    out->generated += a.generated;
    ctx->heap_len = 0;
    ctx->seq = a.seq;
    /* PF_NO_PATH when the open list ran dry although the components said
     * the goal is reachable: impossible by construction, reported rather
     * than trusted. */
    return st;
}

/* Follows dir (see pf__hpa_cluster.trees) from p to the tree's root, writing the
 * cells, p and root included, into out. Returns their number. */
static int32_t walk_tree(const pf_hpa *h, const uint8_t *dir, int32_t k, pf_point p,
                         pf_point *out) {
    const int32_t cs = h->cs, cap = cs * cs;
    int32_t n = 0, li = local_index(h, k, p);
    for (;;) {
        uint8_t d;
        out[n++] = p;
        d = dir[li];
        if (d == PF__HPA_NO_DIR || n == cap) break;
        p.x += pf_dir_dx[d];
        p.y += pf_dir_dy[d];
        li += pf_dir_dx[d] + pf_dir_dy[d] * cs;
    }
    return n;
}

/* Extends ctx->path[0..*len), whose last cell is an end of a tree path, by
 * the rest of that path, written in place: forward (the last cell is p,
 * the walk goes from it to dir's root) or backwards (the last cell is the
 * root and p the far end; the walk is written over the last cell and then
 * reversed, which puts the root back where it was). */
static pf_status append_tree(pf_search_ctx *ctx, size_t *len, const pf_hpa *h, const uint8_t *dir,
                             int32_t k, pf_point p, bool backwards) {
    pf_status st = pf__ctx_reserve_path(ctx, *len + (size_t)h->cs * (size_t)h->cs);
    pf_point *out;
    int32_t n;
    if (st) return st;
    out = ctx->path + *len - 1;
    n = walk_tree(h, dir, k, p, out);
    if (backwards) {
        for (int32_t i = 0, j = n - 1; i < j; i++, j--) {
            pf_point t = out[i];
            out[i] = out[j];
            out[j] = t;
        }
    }
    *len += (size_t)n - 1;
    return PF_OK;
}

/* Writes the cell path of the abstract path apath[0..na) into ctx->path. */
static pf_status refine(pf_search_ctx *ctx, const pf_hpa *h, const pf_query *q, hpa_scratch *s,
                        int32_t ks, int32_t kg, const int32_t *apath, int32_t na, size_t *len) {
    const int32_t G = h->nnodes + 1;
    const size_t cells = (size_t)h->cs * (size_t)h->cs;
    pf_status st = pf__ctx_reserve_path(ctx, 1);

    if (st) return st;
    ctx->path[0] = q->start;
    *len = 1;
    /* Start to the first node (or straight to the goal): the node's tree
     * walked from the start, or the start's Dijkstra tree walked backwards. */
    if (walks(h, ks, kg))
        st = append_tree(ctx, len, h, node_tree(h, ks, apath[1]), ks, q->start, false);
    else
        st = append_tree(ctx, len, h, s->fwd.dir, ks,
                         apath[1] == G ? q->goal : h->node_pt[apath[1]], true);
    if (st || apath[1] == G) return st;
    for (int32_t i = 1; i + 2 < na; i++) {
        int32_t u = apath[i], v = apath[i + 1];
        int32_t ku = pf__hpa_cluster_of(h, h->node_pt[u].x, h->node_pt[u].y);
        int32_t first = h->cl_node_first[ku];
        if (v >= first && v < h->cl_node_first[ku + 1]) {
            const pf__hpa_cluster *c = h->cl[ku];
            if (!c->sym || u < v) /* u's tree path from v, walked backwards */
                st = append_tree(ctx, len, h, c->trees + (size_t)(u - first) * cells, ku,
                                 h->node_pt[v], true);
            else /* v's tree path from u (see pf__hpa_cluster.sym) */
                st = append_tree(ctx, len, h, c->trees + (size_t)(v - first) * cells, ku,
                                 h->node_pt[u], false);
        } else {
            st = pf__ctx_reserve_path(ctx, *len + 1);
            if (!st) ctx->path[(*len)++] = h->node_pt[v];
        }
        if (st) return st;
    }
    /* Last node to the goal: the node's tree walked backwards from the
     * goal, or the goal's reverse tree. */
    if (walks(h, kg, ks))
        return append_tree(ctx, len, h, node_tree(h, kg, apath[na - 2]), kg, q->goal, true);
    return append_tree(ctx, len, h, s->rev.dir, kg, h->node_pt[apath[na - 2]], false);
}

/* Path improvement */

/* A line between two cells on an 8-connected map: n steps along the major
 * axis, `minor` of them also along the minor one (diagonal). */
typedef struct line8 {
    int64_t n, minor;
    int dmaj, ddia;     /* directions of a straight and a diagonal step */
    int32_t omaj, odia; /* their cell index offsets */
} line8;

static inline void line8_init(const pf_grid *g, pf_point a, pf_point b, line8 *l) {
    int64_t adx = b.x > a.x ? b.x - a.x : a.x - b.x, ady = b.y > a.y ? b.y - a.y : a.y - b.y;
    int sx = b.x > a.x ? 1 : (b.x < a.x ? -1 : 0), sy = b.y > a.y ? 1 : (b.y < a.y ? -1 : 0);
    bool xmajor = adx >= ady;
    l->n = xmajor ? adx : ady;
    l->minor = xmajor ? ady : adx;
    l->dmaj = xmajor ? pf__dir_of(sx, 0) : pf__dir_of(0, sy);
    l->ddia = pf__dir_of(sx, sy);
    l->omaj = xmajor ? sx : sy * g->w;
    l->odia = sx + sy * g->w;
}

/* Whether the first step of a shape (see walk_line) is diagonal; n > 0. */
static inline bool line8_first_diag(const line8 *l, int shape) {
    if (shape == 0) return 2 * l->minor >= l->n;
    if (shape == 1) return l->minor > 0;
    return l->minor == l->n;
}

/* The cells of a line shape from a to b (see walk_line) on an 8-connected
 * map, after a, written into buf without checks: for a line shortcut
 * already found allowed (walk8_back). Returns their number. Shape 0: the
 * minor coordinate after step i is floor((2 i minor + n) / 2n), kept as a
 * running numerator num against the next threshold (it grows by at most
 * one a step since minor <= n). Shape 1 moves diagonally for the first
 * `minor` steps, shape 2 for the last. */
static int32_t emit8(pf_point a, pf_point b, int shape, pf_point *buf) {
    int32_t sx = (b.x > a.x) - (b.x < a.x), sy = (b.y > a.y) - (b.y < a.y);
    int32_t adx = (b.x - a.x) * sx, ady = (b.y - a.y) * sy;
    bool xmajor = adx >= ady;
    int32_t n = xmajor ? adx : ady, minor = xmajor ? ady : adx;
    int32_t mx = xmajor ? sx : 0, my = xmajor ? 0 : sy; /* a straight step */
    int64_t num = n, thresh = 2 * (int64_t)n;
    pf_point q = a;
    for (int32_t i = 1; i <= n; i++) {
        bool diag;
        if (shape == 0) {
            num += 2 * (int64_t)minor;
            diag = num >= thresh;
            if (diag) thresh += 2 * (int64_t)n;
        } else if (shape == 1) {
            diag = i <= minor;
        } else {
            diag = i > n - minor;
        }
        q.x += diag ? sx : mx;
        q.y += diag ? sy : my;
        buf[i - 1] = q;
    }
    return n;
}

/* Whether a line shape from l's first cell to cend (see walk_line) is
 * allowed and costs at most budget, checked from the far end back: the
 * cells and steps of emit8 (shape 0's running remainder taken downwards: it leaves
 * [0, 2n) exactly at the diagonal steps), but a line that fails mostly
 * fails near its far end -- past the corner the stretch bends around, as
 * the cells just beyond the last reachable one are the ones tried -- so
 * walking back reaches the blocked step after a few cells instead of
 * nearly all. cend is the line's last cell. */
static bool walk8_back(const pf_grid *g, const line8 *l, int32_t cend, int shape, double budget) {
    const int64_t n = l->n, minor = l->minor;
    int64_t r = n;
    int32_t c = cend;
    double acc = 0.0;
    for (int64_t i = n; i >= 1; i--) {
        bool diag;
        if (shape == 0) {
            r -= 2 * minor;
            diag = r < 0;
            if (diag) r += 2 * n;
        } else if (shape == 1) {
            diag = i <= minor;
        } else {
            diag = i > n - minor;
        }
        acc += diag ? g->cost[c] * PF_SQRT2 : (double)g->cost[c];
        if (acc > budget) return false;
        c -= diag ? l->odia : l->omaj;
        if (!(g->moves[c] & (1u << (diag ? l->ddia : l->dmaj)))) return false;
    }
    return true;
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
 * cost of the walk. Walks 4-connected maps only: on 8-connected ones
 * walk8_back checks a shape and emit8 writes its cells. */
static int32_t walk_line(const pf_grid *g, pf_point a, pf_point b, int shape, double budget,
                         pf_point *buf, double *cost) {
    const int32_t w = g->w;
    int64_t adx = b.x > a.x ? b.x - a.x : a.x - b.x, ady = b.y > a.y ? b.y - a.y : a.y - b.y;
    int sx = b.x > a.x ? 1 : (b.x < a.x ? -1 : 0), sy = b.y > a.y ? 1 : (b.y < a.y ? -1 : 0);
    int32_t steps = 0, c = a.y * w + a.x;
    double acc = 0.0;
    pf_point p = a;
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
        d = pf__dir_of(dx, dy);
        if (!(g->moves[c] & (1u << d))) return -1;
        c += dx + dy * w;
        acc += g->cost[c];
        if (acc > budget) return -1;
        p.x += dx;
        p.y += dy;
        if (buf) buf[steps] = p;
        steps++;
    }
    *cost = acc;
    return steps;
}

/* The cost of the step from a to its 8-neighbour b. */
static inline double step_cost(const pf_grid *g, pf_point a, pf_point b) {
    double c = g->cost[b.y * g->w + b.x];
    return a.x != b.x && a.y != b.y ? c * PF_SQRT2 : c;
}

/* shortcut on an 8-connected map whose walkable cells all cost the same:
 * no cost to add up, as every shape costs the octile distance times that
 * cost, the least any path between its ends can cost, so it never passes
 * the budget of the stretch it would replace (the budget's 1e-9 slack
 * covers the rounding of both sums). Each shape is checked from its far
 * end back as walk8_back does; shapes 1 and 2 are two straight runs each.
 * Written apart, in 32-bit arithmetic, as the pass calls it about three
 * times per path cell and most calls end after a step or two. */
static int shortcut8_uniform(const uint8_t *moves, int32_t w, pf_point pa, pf_point pj) {
    static const uint8_t dia[3][3] = {{PF_DIR_NW, PF_DIR_N, PF_DIR_NE},
                                      {PF_DIR_W, 0, PF_DIR_E},
                                      {PF_DIR_SW, PF_DIR_S, PF_DIR_SE}};
    int32_t dx = pj.x - pa.x, dy = pj.y - pa.y;
    int32_t sx = (dx > 0) - (dx < 0), sy = (dy > 0) - (dy < 0);
    int32_t adx = dx * sx, ady = dy * sy;
    bool xmajor = adx >= ady;
    int32_t n = xmajor ? adx : ady, minor = xmajor ? ady : adx;
    unsigned bmaj = 1u << (xmajor ? dia[1][sx + 1] : dia[sy + 1][1]),
             bdia = 1u << dia[sy + 1][sx + 1];
    int32_t omaj = xmajor ? sx : sy * w, odia = sx + sy * w;
    unsigned m = moves[pa.y * w + pa.x];
    const int32_t cend = pj.y * w + pj.x;
    if (n == 0) return 0; /* the path came back to pa */
    /* Shape 0, the grid line (see walk8_back for the running remainder). */
    if (m & (2 * minor >= n ? bdia : bmaj)) {
        int32_t r = n, c = cend, i = n;
        for (; i >= 1; i--) {
            r -= 2 * minor;
            if (r < 0) {
                r += 2 * n;
                c -= odia;
                if (!(moves[c] & bdia)) break;
            } else {
                c -= omaj;
                if (!(moves[c] & bmaj)) break;
            }
        }
        if (i == 0) return 0;
    }
    /* Walked back from the far end: shape 1 ends with its straight run,
     * shape 2 with its diagonal one. */
    for (int shape = 1; shape < 3; shape++) {
        int32_t first = shape == 1 ? n - minor : minor, c = cend, i = 0;
        int32_t ofirst = shape == 1 ? omaj : odia, osecond = shape == 1 ? odia : omaj;
        unsigned bfirst = shape == 1 ? bmaj : bdia, bsecond = shape == 1 ? bdia : bmaj;
        /* The first step of the line: its last step walked back. */
        if (!(m & (first < n ? bsecond : bfirst))) continue;
        for (; i < first; i++) {
            c -= ofirst;
            if (!(moves[c] & bfirst)) break;
        }
        if (i < first) continue;
        for (; i < n; i++) {
            c -= osecond;
            if (!(moves[c] & bsecond)) break;
        }
        if (i == n) return shape;
    }
    return 3;
}

/* The first line shape (see walk_line) from p[a] to p[j] that the grid
 * allows and that costs no more than the stretch p[a..j], or 3 when none
 * does. On 8-connected maps the line's geometry is set up once for the
 * three shapes, and a shape whose first step is not allowed is rejected
 * without a walk (most lines that fail do so at once, as in mazes). */
static int shortcut(const pf_grid *g, bool uniform, const pf_point *p, const double *pc, size_t a,
                    size_t j) {
    double budget = pc[j] - pc[a] + 1e-9, lc;
    int shape = 0;
    if (g->connectivity == 8 && uniform) return shortcut8_uniform(g->moves, g->w, p[a], p[j]);
    if (g->connectivity == 8) {
        line8 l;
        unsigned m = g->moves[p[a].y * g->w + p[a].x];
        int32_t cend = p[j].y * g->w + p[j].x;
        line8_init(g, p[a], p[j], &l);
        if (l.n == 0) return 0; /* the path came back to p[a] */
        for (; shape < 3; shape++) {
            int d = line8_first_diag(&l, shape) ? l.ddia : l.dmaj;
            if (!(m & (1u << d))) continue;
            if (walk8_back(g, &l, cend, shape, budget)) break;
        }
        return shape;
    }
    while (shape < 3 && walk_line(g, p[a], p[j], shape, budget, NULL, &lc) < 0) shape++;
    return shape;
}

/* Line shortcuts over ctx->path[0..*len): from each anchor a, the furthest
 * later cell (at most LOOK_MAX ahead) whose stretch can be replaced (see
 * shortcut) such that no run of failed cells before it was longer than the
 * patience (see LOOK_PATIENCE). The
 * scan gallops over runs of successes (offsets double; an overshoot is
 * bisected back to the last success) and walks cell by cell only through
 * failures, so an anchor costs O(d log d + LOOK_PATIENCE * d) cell steps
 * for an advance of d cells instead of O(d^2). Never raises the cost. */
static pf_status improve(pf_search_ctx *ctx, const pf_grid *g, hpa_scratch *s, size_t *len) {
    const size_t n = *len;
    pf_point *p = ctx->path;
    size_t a = 0, k = 0;
    int ncosts = 0;
    bool uniform;
    pf_status st;

    if (n < 3) return PF_OK;
    for (int c = 1; c < 256 && ncosts < 2; c++) ncosts += g->cost_hist[c] > 0;
    uniform = ncosts == 1;
    st = reserve_tmp(s, n);
    if (st) return st;
    s->pc[0] = 0.0;
    for (size_t i = 1; i < n; i++) s->pc[i] = s->pc[i - 1] + step_cost(g, p[i - 1], p[i]);
    s->tmp[k++] = p[0];
    while (a + 1 < n) {
        size_t best = a + 1, j = a + 2, step = 1, fails = 0;
        size_t last = n - 1 < a + LOOK_MAX ? n - 1 : a + LOOK_MAX;
        int best_shape = -1;
        double lc;
        while (j <= last && fails < LOOK_PATIENCE &&
               (fails < LOOK_PATIENCE_MIN || fails < best - a)) {
            int sh = shortcut(g, uniform, p, s->pc, a, j);
            if (sh != 3) {
                best = j;
                best_shape = sh;
                fails = 0;
                step *= 2;
                j = best + step > last && best < last ? last : best + step;
                continue;
            }
            if (step > 1) { /* overshot a run of successes: bisect back */
                size_t fail = j;
                while (fail > best + 1) {
                    size_t mid = best + (fail - best) / 2;
                    sh = shortcut(g, uniform, p, s->pc, a, mid);
                    if (sh == 3) {
                        fail = mid;
                    } else {
                        best = mid;
                        best_shape = sh;
                    }
                }
                step = 1;
                j = fail;
            }
            fails++;
            j++;
        }
        if (best_shape < 0) {
            memcpy(s->tmp + k, p + a + 1, (best - a) * sizeof(*p));
            k += best - a;
        } else {
            /* A walk has no more steps than the stretch it replaces. */
            k += (size_t)(g->connectivity == 8
                              ? emit8(p[a], p[best], best_shape, s->tmp + k)
                              : walk_line(g, p[a], p[best], best_shape, INFINITY, s->tmp + k, &lc));
        }
        a = best;
    }
    memcpy(p, s->tmp, k * sizeof(*p));
    *len = k;
    return PF_OK;
}

/* Windowed repair of ctx->path[0..*len) (see WINDOW): A* searches of the
 * context overwrite ctx->path, so the path is kept in s->tmp meanwhile and
 * the repaired one assembled in s->tmp2 (a cheaper window has at most as
 * many cells as its cost over the cheapest step, so twice the old length
 * is room enough). Statuses of the window searches other than a path or an
 * exhausted budget (cancellation, memory) are returned. */
static pf_status repair_windows(pf_search_ctx *ctx, const pf_grid *g, const pf_landmarks *lm,
                                const pf_query *q, hpa_scratch *s, size_t *len,
                                uint64_t *expanded) {
    const size_t n = *len;
    const double minc = (double)pf_grid_min_cost(g);
    pf_point *old, *nw;
    size_t k = 0;
    pf_status st;

    if (n < 3) return PF_OK;
    st = reserve_tmp(s, n);
    if (st) return st;
    old = s->tmp;
    nw = s->tmp2;
    memcpy(old, ctx->path, n * sizeof(*old));
    s->pc[0] = 0.0;
    for (size_t i = 1; i < n; i++) s->pc[i] = s->pc[i - 1] + step_cost(g, old[i - 1], old[i]);
    nw[k++] = old[0];
    for (size_t a = 0, b; a + 1 < n; a = b) {
        double c, lb;
        b = a + WINDOW < n - 1 ? a + WINDOW : n - 1;
        c = s->pc[b] - s->pc[a];
        lb = h_cost(g->connectivity, minc, old[a], old[b]);
        if (lm) {
            double l = pf_landmarks_h(lm, old[a].y * g->w + old[a].x, old[b].y * g->w + old[b].x);
            lb = l > lb ? l : lb;
        }
        if (c > lb * (1.0 + WINDOW_SLACK) + 1e-9 && c < lb * WINDOW_MAX_RATIO) {
            pf_query qa = pf_query_make(old[a], old[b], PF_ALGO_ASTAR);
            pf_result ra;
            qa.max_expanded = (uint64_t)WINDOW_BUDGET * WINDOW * WINDOW;
            qa.should_stop = q->should_stop;
            qa.stop_ud = q->stop_ud;
            st = pf_search(ctx, g, &qa, &ra);
            *expanded += ra.expanded;
            if (st == PF_OK && ra.cost < c - 1e-9 && k + ra.path_len - 1 <= 2 * s->tmp_cap) {
                memcpy(nw + k, ra.path + 1, (ra.path_len - 1) * sizeof(*nw));
                k += ra.path_len - 1;
                continue;
            }
            if (st != PF_OK && st != PF_EBUDGET && st != PF_NO_PATH) return st;
        }
        memcpy(nw + k, old + a + 1, (b - a) * sizeof(*nw));
        k += b - a;
    }
    st = pf__ctx_reserve_path(ctx, k);
    if (st) return st;
    memcpy(ctx->path, nw, k * sizeof(*nw));
    *len = k;
    return PF_OK;
}

pf_status pf_hpa_search(pf_search_ctx *ctx, const pf_hpa *h, const pf_grid *g,
                        const pf_landmarks *lm, const pf_hpa_lm *rows, const pf_query *q,
                        pf_result *out) {
    hpa_scratch *s;
    int32_t ks, kg, na = 0;
    uint64_t walked = 0;
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
    if (h_cost(g->connectivity, 1.0, q->start, q->goal) <= (double)SHORT_CELLS) {
        pf_query qa = *q;
        uint64_t budget = SHORT_BUDGET, spent;
        qa.algorithm = PF_ALGO_ASTAR;
        qa.heuristic = PF_H_DEFAULT;
        qa.max_expanded = q->max_expanded && q->max_expanded < budget ? q->max_expanded : budget;
        st = pf_search(ctx, g, &qa, out);
        out->algorithm = PF_ALGO_HPA;
        if (st == PF_OK && q->record_expanded) {
            /* The abstract path of an answer that needed no transitions. */
            pf_status sst = get_scratch(ctx, h->cs, &s);
            if (!sst && s->apts_cap < 2) {
                pf_point *ap = realloc(s->apts, 2 * sizeof(*ap));
                if (!ap)
                    sst = PF_ENOMEM;
                else {
                    s->apts = ap;
                    s->apts_cap = 2;
                }
            }
            if (sst) return out->status = sst;
            s->apts[0] = q->start;
            s->apts[1] = q->goal;
            out->abstract_path = s->apts;
            out->abstract_path_len = 2;
        }
        /* Answered, or failed for a reason of its own (the caller's budget
         * or deadline, memory). */
        if (st != PF_EBUDGET || qa.max_expanded != budget) return st;
        spent = out->expanded;
        memset(out, 0, sizeof(*out));
        out->algorithm = PF_ALGO_HPA;
        out->expanded = spent;
    }

    st = get_scratch(ctx, h->cs, &s);
    if (st) return out->status = st;
    st = pf__ctx_begin(ctx, (size_t)h->nnodes + 2);
    if (st) return out->status = st;
    if (q->record_expanded) {
        st = pf__ctx_reserve_expanded(ctx, (size_t)h->nnodes + 2);
        if (st) return out->status = st;
    }

    if ((size_t)h->nnodes + 2 > s->via_cap) {
        uint8_t *v = realloc(s->via, (size_t)h->nnodes + 2);
        if (!v) return out->status = PF_ENOMEM;
        s->via = v;
        s->via_cap = (size_t)h->nnodes + 2;
    }
    ks = pf__hpa_cluster_of(h, q->start.x, q->start.y);
    kg = pf__hpa_cluster_of(h, q->goal.x, q->goal.y);
    /* Insertion. A query within one cluster searches it: the Dijkstra
     * also gives the direct in-cluster path. */
    s->fwd.expanded = s->rev.expanded = 0;
    if (walks(h, ks, kg))
        walked += walk_ends(h, g, ks, q->start, s->sdist);
    else
        search_end(h, g, ks, q->start, false, &s->fwd, s->sdist);
    if (walks(h, kg, ks))
        walked += walk_ends(h, g, kg, q->goal, s->gdist);
    else
        search_end(h, g, kg, q->goal, true, &s->rev, s->gdist);

    st = abstract_search(ctx, h, g, lm, rows, q, s, ks, kg, out);
    out->expanded += s->fwd.expanded + s->rev.expanded + walked;
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
    if (q->record_expanded) {
        /* The abstract path as cells: start, the transitions, goal. */
        if ((size_t)na > s->apts_cap) {
            pf_point *ap = realloc(s->apts, (size_t)na * 2 * sizeof(*ap));
            if (!ap) return out->status = PF_ENOMEM;
            s->apts = ap;
            s->apts_cap = (size_t)na * 2;
        }
        for (int32_t i = 0; i < na; i++) {
            int32_t v = s->apath[i];
            s->apts[i] = v == h->nnodes ? q->start : v == h->nnodes + 1 ? q->goal : h->node_pt[v];
        }
        out->abstract_path = s->apts;
        out->abstract_path_len = (size_t)na;
    }
    st = refine(ctx, h, q, s, ks, kg, s->apath, na, &len);
    if (!st) st = improve(ctx, g, s, &len);
    if (!st) st = repair_windows(ctx, g, lm_bound(lm, g), q, s, &len, &out->expanded);
    if (st) return out->status = st;

    out->path = ctx->path;
    out->path_len = len;
    out->cost = 0.0;
    for (size_t i = 1; i < len; i++) out->cost += step_cost(g, ctx->path[i - 1], ctx->path[i]);
    return out->status = PF_OK;
}
