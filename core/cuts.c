/* cuts.c -- connected components and cut vertices (see cuts.h). */
#include "cuts.h"

#include <stdlib.h>

#include "clock_internal.h"
#include "grid_internal.h"

#define UNSEEN (-1)

struct pf_cuts {
    int32_t w, n;
    uint8_t *moves; /* a copy of the grid's move masks: the grid may go first */
    int32_t *tin;   /* preorder number, UNSEEN for a blocked cell */
    int32_t *end;   /* last preorder number of the cell's DFS subtree */
    int32_t *low;   /* smallest tin reachable from the subtree by one non-tree edge */
    int32_t *roots; /* tin of each DFS tree's root, ascending; a tree spans
                       tins roots[i] .. roots[i + 1] - 1 */
    int32_t nroots;
    int32_t off[PF_DIR_COUNT];
    uint64_t build_us;
};

void pf_cuts_destroy(pf_cuts *k) {
    if (!k) return;
    free(k->moves);
    free(k->tin);
    free(k->end);
    free(k->low);
    free(k->roots);
    free(k);
}

/* The iterative depth-first search from root r: stack[i] is a cell on the
 * current DFS path, next[i] the next direction it will try. False when stop
 * said stop. */
static bool dfs(pf_cuts *k, int32_t r, int32_t *counter, int32_t *stack, uint8_t *next,
                pf_build_stop *stop) {
    int32_t top = 0;
    stack[0] = r;
    next[0] = 0;
    k->tin[r] = k->low[r] = (*counter)++;
    while (top >= 0) {
        int32_t u = stack[top];
        int32_t parent = top > 0 ? stack[top - 1] : -1;
        uint8_t m = k->moves[u];
        int d = next[top];
        for (; d < PF_DIR_COUNT; d++) {
            if (!(m & (1u << d))) continue;
            int32_t v = u + k->off[d];
            if (k->tin[v] == UNSEEN) break;
            if (v != parent && k->tin[v] < k->low[u]) k->low[u] = k->tin[v];
        }
        if (d < PF_DIR_COUNT) {
            int32_t v = u + k->off[d];
            next[top] = (uint8_t)(d + 1);
            if (pf_build_tick(stop, 1)) return false;
            top++;
            stack[top] = v;
            next[top] = 0;
            k->tin[v] = k->low[v] = (*counter)++;
            continue;
        }
        k->end[u] = *counter - 1;
        top--;
        if (top >= 0 && k->low[u] < k->low[stack[top]]) k->low[stack[top]] = k->low[u];
    }
    return true;
}

pf_status pf_cuts_build(const pf_grid *g, pf_build_stop *stop, pf_cuts **out) {
    uint64_t t0 = pf__mono_us();
    int64_t n64 = (int64_t)g->w * g->h;
    pf_cuts *k = calloc(1, sizeof(*k));
    int32_t *stack = NULL;
    uint8_t *next = NULL;
    int32_t counter = 0, rcap = 16;
    pf_status st = PF_ENOMEM;
    *out = NULL;
    if (!k) return PF_ENOMEM;
    k->w = g->w;
    k->n = (int32_t)n64;
    for (int d = 0; d < PF_DIR_COUNT; d++) k->off[d] = pf__grid_dir_offset(g, d);
    k->moves = malloc((size_t)n64);
    k->tin = malloc((size_t)n64 * sizeof(int32_t));
    k->end = malloc((size_t)n64 * sizeof(int32_t));
    k->low = malloc((size_t)n64 * sizeof(int32_t));
    k->roots = malloc((size_t)rcap * sizeof(int32_t));
    stack = malloc((size_t)n64 * sizeof(int32_t));
    next = malloc((size_t)n64);
    if (!k->moves || !k->tin || !k->end || !k->low || !k->roots || !stack || !next) goto nomem;
    for (int32_t v = 0; v < k->n; v++) {
        if ((v & 4095) == 0 && pf_build_tick(stop, 4096)) goto stopped;
        k->moves[v] = g->cost[v] ? g->moves[v] : 0;
        k->tin[v] = k->end[v] = k->low[v] = UNSEEN;
    }
    for (int32_t v = 0; v < k->n; v++) {
        if ((v & 4095) == 0 && pf_build_tick(stop, 4096)) goto stopped;
        if (!g->cost[v] || k->tin[v] != UNSEEN) continue;
        if (k->nroots == rcap) {
            int32_t *r = realloc(k->roots, (size_t)rcap * 2 * sizeof(int32_t));
            if (!r) goto nomem;
            k->roots = r;
            rcap *= 2;
        }
        k->roots[k->nroots++] = counter;
        if (!dfs(k, v, &counter, stack, next, stop)) goto stopped;
    }
    free(stack);
    free(next);
    k->build_us = pf__mono_us() - t0;
    *out = k;
    return PF_OK;
stopped:
    st = PF_ECANCELED;
nomem:
    free(stack);
    free(next);
    pf_cuts_destroy(k);
    return st;
}

size_t pf_cuts_memory(const pf_cuts *k) {
    return sizeof(*k) + (size_t)k->n * (1 + 3 * sizeof(int32_t)) +
           (size_t)k->nroots * sizeof(int32_t);
}

uint64_t pf_cuts_build_us(const pf_cuts *k) { return k->build_us; }

/* The DFS tree (component) holding preorder number t. */
static int32_t tree_of(const pf_cuts *k, int32_t t) {
    int32_t lo = 0, hi = k->nroots - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (k->roots[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static bool valid(const pf_cuts *k, int32_t c) { return c >= 0 && c < k->n && k->tin[c] != UNSEEN; }

bool pf_cuts_connected(const pf_cuts *k, int32_t a, int32_t b) {
    if (!valid(k, a) || !valid(k, b)) return false;
    return tree_of(k, k->tin[a]) == tree_of(k, k->tin[b]);
}

/* Which side of c's removal x (in c's tree, x != c) falls on: the tin of
 * the child subtree it is cut off in, or -1 for the part that stays with
 * c's parent. */
static int32_t side(const pf_cuts *k, int32_t c, int32_t x) {
    int32_t tc = k->tin[c], tx = k->tin[x], child = -1;
    if (tx < tc || tx > k->end[c]) return -1;
    /* The child of c whose subtree holds x: a neighbour of c below it in
     * the tree holding x. Non-tree edges of an undirected DFS join an
     * ancestor to a descendant, so every other such neighbour lies inside
     * that child's subtree and has a larger tin. */
    uint8_t m = k->moves[c];
    for (int d = 0; d < PF_DIR_COUNT; d++) {
        if (!(m & (1u << d))) continue;
        int32_t s = c + k->off[d], ts = k->tin[s];
        if (ts > tc && ts <= tx && tx <= k->end[s] && (child < 0 || ts < k->tin[child])) child = s;
    }
    if (child < 0) return -1; /* not reached: x is in c's subtree */
    return k->low[child] >= tc ? k->tin[child] : -1;
}

bool pf_cuts_separates(const pf_cuts *k, int32_t c, int32_t a, int32_t b) {
    if (!valid(k, c) || c == a || c == b || !pf_cuts_connected(k, a, b)) return false;
    if (!pf_cuts_connected(k, a, c)) return false;
    return side(k, c, a) != side(k, c, b);
}

/* For pf_deadends_build (deadends.h), indexed by preorder number t (cells
 * in DFS order): b[3t ..] = {lo, len, up}, the preorder interval of the DFS
 * subtree of the block head of cell t (a DFS root: its whole tree) and the
 * preorder number of that block's top cut vertex (UINT32_MAX for a root's
 * cells); and c[3u ..] = {lo, len, t} for every cell u, t its preorder
 * number ({UINT32_MAX, 0, UINT32_MAX} when blocked). Returns the
 * walkable cells in *seen_out and the most cells one head's block holds
 * (its top cut not counted) in *largest. */
pf_status pf__cuts_block_intervals(const pf_cuts *k, pf_build_stop *stop, uint32_t *b, uint32_t *c,
                                   int32_t *seen_out, int32_t *largest) {
    pf_status st = PF_ECANCELED;
    int32_t n = k->n, *order = malloc((size_t)(n ? n : 1) * sizeof(int32_t)),
            *head = malloc((size_t)(n ? n : 1) * sizeof(int32_t)),
            *par = malloc((size_t)(n ? n : 1) * sizeof(int32_t)),
            *count = calloc((size_t)(n ? n : 1), sizeof(int32_t)), seen = 0;
    *largest = 0;
    if (!order || !head || !par || !count) {
        free(order);
        free(head);
        free(par);
        free(count);
        return PF_ENOMEM;
    }
    for (int32_t v = 0; v < n; v++) {
        uint32_t *cv = c + 3 * (size_t)v;
        if ((v & 4095) == 0 && pf_build_tick(stop, 4096)) goto out_free;
        cv[0] = UINT32_MAX;
        cv[1] = 0;
        cv[2] = UINT32_MAX;
        if (k->tin[v] == UNSEEN) continue;
        cv[2] = (uint32_t)k->tin[v];
        order[k->tin[v]] = v;
        seen++;
    }
    /* Preorder: a parent before its children. The parent of u is its
     * neighbour that is a DFS ancestor (non-tree edges of an undirected DFS
     * join ancestors and descendants) with the largest preorder number. */
    for (int32_t t = 0; t < seen; t++) {
        int32_t u = order[t], p = -1, x;
        uint32_t *e = b + 3 * (size_t)t;
        uint8_t m = k->moves[u];
        /* Cells in preorder: scattered reads of four arrays, about 16
         * units of work a cell. */
        if ((t & 255) == 0 && pf_build_tick(stop, 4096)) goto out_free;
        for (int d = 0; d < PF_DIR_COUNT; d++) {
            int32_t v;
            if (!(m & (1u << d))) continue;
            v = u + k->off[d];
            if (k->tin[v] < t && k->end[v] >= t && (p < 0 || k->tin[v] > k->tin[p])) p = v;
        }
        par[u] = p;
        if (p < 0)
            head[u] = -1; /* a root */
        else
            head[u] = k->low[u] >= k->tin[p] ? u : head[p];
        x = head[u] >= 0 ? head[u] : u;
        e[0] = (uint32_t)k->tin[x];
        e[1] = (uint32_t)(k->end[x] - k->tin[x]);
        e[2] = head[u] >= 0 ? (uint32_t)k->tin[par[x]] : UINT32_MAX;
        c[3 * (size_t)u] = e[0];
        c[3 * (size_t)u + 1] = e[1];
        if (head[u] >= 0 && ++count[x] > *largest) *largest = count[x];
    }
    *seen_out = seen;
    st = PF_OK;
out_free:
    free(order);
    free(head);
    free(par);
    free(count);
    return st;
}
