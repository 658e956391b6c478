/* subgoal.c -- simple subgoal graphs: build, local repair and queries
 * (subgoal.h). */
#include "subgoal.h"

#include <stdlib.h>
#include <string.h>

#include "subgoal_internal.h"

static const int8_t card[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
static const int8_t diag[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

static inline bool sg_free(const pf_grid *g, int32_t x, int32_t y) {
    return (uint32_t)x < (uint32_t)g->w && (uint32_t)y < (uint32_t)g->h &&
           g->cost[(size_t)y * (size_t)g->w + (size_t)x] != 0;
}

/* A legal step from (x, y) by (dx, dy) under the no-corner-cutting rule. */
static inline bool sg_step(const pf_grid *g, int32_t x, int32_t y, int dx, int dy) {
    if (!sg_free(g, x + dx, y + dy)) return false;
    if (dx && dy) return sg_free(g, x + dx, y) && sg_free(g, x, y + dy);
    return true;
}

static bool sg_is_corner(const pf_grid *g, int32_t x, int32_t y) {
    if (!sg_free(g, x, y)) return false;
    for (int k = 0; k < 4; k++) {
        int dx = diag[k][0], dy = diag[k][1];
        if (!sg_free(g, x + dx, y + dy) && sg_free(g, x + dx, y) && sg_free(g, x, y + dy))
            return true;
    }
    return false;
}

bool pf_subgoal_supports(const pf_grid *g) {
    return g && g->connectivity == 8 && !g->corner_cutting && pf_grid_is_uniform(g) &&
           !pf_grid_has_walls(g);
}

double pf__sg_octile(int32_t ax, int32_t ay, int32_t bx, int32_t by) {
    int32_t dx = ax > bx ? ax - bx : bx - ax, dy = ay > by ? ay - by : by - ay;
    int32_t lo = dx < dy ? dx : dy, hi = dx < dy ? dy : dx;
    return (double)(hi - lo) + (double)lo * PF_SQRT2;
}

/* The sweep's view of the subgoals: the graph's, plus one extra cell. */
typedef struct sg_view {
    const pf_grid *g;
    const int32_t *id;
    int32_t extra; /* -1: none */
} sg_view;

static inline bool sg_sub(const sg_view *v, int32_t x, int32_t y) {
    int32_t i = y * v->g->w + x;
    return v->id[i] >= 0 || i == v->extra;
}

/* Moves from (x, y) by (dx, dy), at most cap + 1 of them, before a blocked
 * or illegal step or a subgoal; *hit when a legal step entered a subgoal. */
static int32_t clearance(const sg_view *v, int32_t x, int32_t y, int dx, int dy, int32_t cap,
                         bool *hit) {
    int32_t k = 0;
    *hit = false;
    while (k <= cap) {
        if (!sg_step(v->g, x, y, dx, dy)) return k;
        x += dx;
        y += dy;
        if (sg_sub(v, x, y)) {
            *hit = true;
            return k;
        }
        k++;
    }
    return k;
}

typedef struct sg_buf {
    int32_t *a;
    size_t n, cap;
} sg_buf;

static bool buf_push(sg_buf *b, int32_t x) {
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 64;
        int32_t *na = realloc(b->a, nc * sizeof(*na));
        if (!na) return false;
        b->a = na;
        b->cap = nc;
    }
    b->a[b->n++] = x;
    return true;
}

/* The subgoals (and v's extra cell) direct-h-reachable from (sx, sy):
 * Uras and Koenig's sweep. Appends their cells to out. */
static bool sweep(const sg_view *v, int32_t sx, int32_t sy, sg_buf *out) {
    const int32_t w = v->g->w, inf = v->g->w + v->g->h;
    bool hit;
    for (int k = 0; k < 4; k++) {
        int dx = card[k][0], dy = card[k][1];
        int32_t j = clearance(v, sx, sy, dx, dy, inf, &hit);
        if (hit && !buf_push(out, (sy + (j + 1) * dy) * w + sx + (j + 1) * dx)) return false;
    }
    for (int k = 0; k < 4; k++) {
        int dx = diag[k][0], dy = diag[k][1];
        int32_t maxh = clearance(v, sx, sy, dx, 0, inf, &hit);
        int32_t maxv = clearance(v, sx, sy, 0, dy, inf, &hit);
        int32_t nd = clearance(v, sx, sy, dx, dy, inf, &hit);
        if (hit && !buf_push(out, (sy + (nd + 1) * dy) * w + sx + (nd + 1) * dx)) return false;
        for (int32_t i = 1; i <= nd; i++) {
            int32_t px = sx + i * dx, py = sy + i * dy;
            int32_t j = clearance(v, px, py, dx, 0, maxh, &hit);
            if (j <= maxh && hit) {
                if (!buf_push(out, py * w + px + (j + 1) * dx)) return false;
                j--;
            }
            if (j < maxh) maxh = j;
            j = clearance(v, px, py, 0, dy, maxv, &hit);
            if (j <= maxv && hit) {
                if (!buf_push(out, (py + (j + 1) * dy) * w + px)) return false;
                j--;
            }
            if (j < maxv) maxv = j;
        }
    }
    return true;
}

void pf_subgoal_destroy(pf_subgoal *s) {
    if (!s) return;
    free(s->id);
    free(s->cell);
    free(s->fan_off);
    free(s->fan);
    free(s->adj_off);
    free(s->adj);
    free(s->adj_cost);
    free(s);
}

/* Whether u's own sweep reached the cell of v. */
static bool fan_has(const pf_subgoal *s, int32_t u, int32_t cell) {
    for (int64_t e = s->fan_off[u]; e < s->fan_off[u + 1]; e++)
        if (s->fan[e] == cell) return true;
    return false;
}

/* The undirected graph from the sweeps: u - v when either reached the other. */
static pf_status make_adjacency(pf_subgoal *s) {
    int64_t *deg = calloc((size_t)s->n + 1, sizeof(*deg));
    pf_status st = PF_ENOMEM;
    if (!deg) return PF_ENOMEM;
    for (int32_t u = 0; u < s->n; u++)
        for (int64_t e = s->fan_off[u]; e < s->fan_off[u + 1]; e++) {
            int32_t v = s->id[s->fan[e]];
            deg[u]++;
            if (!fan_has(s, v, s->cell[u])) deg[v]++;
        }
    s->adj_off = malloc(((size_t)s->n + 1) * sizeof(*s->adj_off));
    if (!s->adj_off) goto out;
    s->adj_off[0] = 0;
    for (int32_t u = 0; u < s->n; u++) s->adj_off[u + 1] = s->adj_off[u] + deg[u];
    size_t m = (size_t)s->adj_off[s->n];
    s->adj = malloc((m ? m : 1) * sizeof(*s->adj));
    s->adj_cost = malloc((m ? m : 1) * sizeof(*s->adj_cost));
    if (!s->adj || !s->adj_cost) goto out;
    for (int32_t u = 0; u < s->n; u++) deg[u] = s->adj_off[u];
    for (int32_t u = 0; u < s->n; u++) {
        int32_t ux = s->cell[u] % s->w, uy = s->cell[u] / s->w;
        for (int64_t e = s->fan_off[u]; e < s->fan_off[u + 1]; e++) {
            int32_t v = s->id[s->fan[e]];
            double c = pf__sg_octile(ux, uy, s->fan[e] % s->w, s->fan[e] / s->w) * s->unit;
            s->adj[deg[u]] = v;
            s->adj_cost[deg[u]++] = c;
            if (!fan_has(s, v, s->cell[u])) {
                s->adj[deg[v]] = u;
                s->adj_cost[deg[v]++] = c;
            }
        }
    }
    st = PF_OK;
out:
    free(deg);
    return st;
}

/* Marks (bit 0) every cell from which a "diagonal, then straight" move can
 * touch the 3x3 neighbourhood of a changed cell (bit 1) in g or in the
 * version before it: those moves walked backwards, through cells walkable
 * in either version. */
static void mark_reach(const pf_grid *g, uint8_t *mark, const pf_point *changed, size_t n) {
    const int32_t w = g->w, h = g->h;
#define PASS(x, y)                                                                                 \
    ((uint32_t)(x) < (uint32_t)w && (uint32_t)(y) < (uint32_t)h &&                                 \
     (g->cost[(y)*w + (x)] || (mark[(y)*w + (x)] & 2)))
    for (size_t c = 0; c < n; c++)
        for (int32_t oy = -1; oy <= 1; oy++)
            for (int32_t ox = -1; ox <= 1; ox++) {
                int32_t x0 = changed[c].x + ox, y0 = changed[c].y + oy;
                if ((uint32_t)x0 >= (uint32_t)w || (uint32_t)y0 >= (uint32_t)h) continue;
                for (int k = 0; k < 4; k++) {
                    int dx = card[k][0], dy = card[k][1];
                    for (int32_t y1 = y0, x1 = x0; (y1 == y0 && x1 == x0) || PASS(x1, y1);
                         x1 -= dx, y1 -= dy) {
                        for (int s = -1; s <= 1; s += 2) {
                            int ddx = dx ? dx : s, ddy = dy ? dy : s;
                            for (int32_t x2 = x1, y2 = y1; (x2 == x1 && y2 == y1) || PASS(x2, y2);
                                 x2 -= ddx, y2 -= ddy) {
                                if ((uint32_t)x2 >= (uint32_t)w || (uint32_t)y2 >= (uint32_t)h)
                                    break;
                                mark[y2 * w + x2] |= 1;
                            }
                        }
                    }
                }
            }
#undef PASS
}

/* The graph of g; with old, the sweeps of old's subgoals that mark (bit 0)
 * does not flag are kept. */
static pf_status assemble(const pf_grid *g, const pf_subgoal *old, const uint8_t *mark,
                          const pf_point *changed, size_t nchanged, pf_build_stop *stop,
                          pf_subgoal **out) {
    const int32_t w = g->w, h = g->h;
    size_t cells = (size_t)w * (size_t)h;
    pf_subgoal *s = calloc(1, sizeof(*s));
    sg_buf fan = {0};
    pf_status st = PF_ENOMEM;
    *out = NULL;
    if (!s) return PF_ENOMEM;
    s->w = w;
    s->h = h;
    s->unit = pf_grid_min_cost(g);
    s->id = malloc(cells * sizeof(*s->id));
    if (!s->id) goto fail;
    if (old) {
        memcpy(s->id, old->id, cells * sizeof(*s->id));
        for (size_t c = 0; c < nchanged; c++)
            for (int32_t y = changed[c].y - 1; y <= changed[c].y + 1; y++)
                for (int32_t x = changed[c].x - 1; x <= changed[c].x + 1; x++)
                    if ((uint32_t)x < (uint32_t)w && (uint32_t)y < (uint32_t)h)
                        s->id[y * w + x] = sg_is_corner(g, x, y) ? 0 : -1;
        for (size_t i = 0; i < cells; i++)
            if (s->id[i] >= 0) s->id[i] = s->n++;
    } else {
        for (int32_t y = 0; y < h; y++) {
            if (pf_build_tick(stop, (uint64_t)w)) goto cancel;
            for (int32_t x = 0; x < w; x++) s->id[y * w + x] = sg_is_corner(g, x, y) ? s->n++ : -1;
        }
    }
    s->cell = malloc(((size_t)s->n + 1) * sizeof(*s->cell));
    s->fan_off = malloc(((size_t)s->n + 1) * sizeof(*s->fan_off));
    if (!s->cell || !s->fan_off) goto fail;
    for (size_t i = 0; i < cells; i++)
        if (s->id[i] >= 0) s->cell[s->id[i]] = (int32_t)i;
    sg_view v = {g, s->id, -1};
    for (int32_t u = 0; u < s->n; u++) {
        int32_t c = s->cell[u];
        s->fan_off[u] = (int64_t)fan.n;
        int32_t ou = old ? old->id[c] : -1;
        if (ou >= 0 && !(mark[c] & 1)) {
            /* Every cell it reached is still a subgoal (the marking makes
             * sure; checked, so that a sweep is redone rather than an edge
             * kept to a cell that is no longer one). */
            int64_t e = old->fan_off[ou];
            while (e < old->fan_off[ou + 1] && s->id[old->fan[e]] >= 0) e++;
            if (e == old->fan_off[ou + 1]) {
                for (e = old->fan_off[ou]; e < old->fan_off[ou + 1]; e++)
                    if (!buf_push(&fan, old->fan[e])) goto fail;
                continue;
            }
        }
        if (old) s->recomputed++;
        if (pf_build_tick(stop, 64)) goto cancel;
        if (!sweep(&v, c % w, c / w, &fan)) goto fail;
    }
    s->fan_off[s->n] = (int64_t)fan.n;
    s->fan = fan.a;
    fan.a = NULL;
    if ((st = make_adjacency(s)) != PF_OK) goto fail;
    *out = s;
    return PF_OK;
cancel:
    st = PF_ECANCELED;
fail:
    free(fan.a);
    pf_subgoal_destroy(s);
    return st;
}

pf_status pf_subgoal_build(const pf_grid *g, pf_build_stop *stop, pf_subgoal **out) {
    *out = NULL;
    if (!pf_subgoal_supports(g)) return PF_EUNSUPPORTED;
    return assemble(g, NULL, NULL, NULL, 0, stop, out);
}

pf_status pf_subgoal_repair(const pf_subgoal *old, const pf_grid *g, const pf_point *changed,
                            size_t n, pf_build_stop *stop, pf_subgoal **out) {
    *out = NULL;
    if (!pf_subgoal_supports(g)) return PF_EUNSUPPORTED;
    if (!old || old->w != g->w || old->h != g->h || old->unit != (double)pf_grid_min_cost(g))
        return pf_subgoal_build(g, stop, out);
    for (size_t c = 0; c < n; c++)
        if (!pf_grid_in_bounds(g, changed[c])) return PF_ERANGE;
    uint8_t *mark = calloc((size_t)g->w * (size_t)g->h, 1);
    if (!mark) return PF_ENOMEM;
    for (size_t c = 0; c < n; c++) mark[changed[c].y * g->w + changed[c].x] |= 2;
    mark_reach(g, mark, changed, n);
    pf_status st = assemble(g, old, mark, changed, n, stop, out);
    free(mark);
    return st;
}

size_t pf_subgoal_memory(const pf_subgoal *s) {
    if (!s) return 0;
    size_t m = (size_t)(s->adj_off[s->n]), f = (size_t)s->fan_off[s->n];
    return sizeof(*s) + (size_t)s->w * (size_t)s->h * sizeof(int32_t) +
           ((size_t)s->n + 1) * (sizeof(int32_t) + 2 * sizeof(int64_t)) + f * sizeof(int32_t) +
           m * (sizeof(int32_t) + sizeof(double));
}

int32_t pf_subgoal_count(const pf_subgoal *s) { return s->n; }
int64_t pf_subgoal_edge_count(const pf_subgoal *s) { return s->adj_off[s->n] / 2; }
int32_t pf_subgoal_recomputed(const pf_subgoal *s) { return s->recomputed; }

pf_subgoal_ctx *pf_subgoal_ctx_create(void) { return calloc(1, sizeof(pf_subgoal_ctx)); }

void pf_subgoal_ctx_destroy(pf_subgoal_ctx *c) {
    if (!c) return;
    for (int k = 0; k < 2; k++) {
        free(c->g[k]);
        free(c->parent[k]);
        free(c->seen[k]);
        free(c->closed[k]);
        free(c->heap[k].a);
    }
    free(c->gmark);
    free(c->gcost);
    free(c->sfan);
    free(c->gfan);
    free(c->path);
    free(c->chain);
    free(c->nodes);
    free(c->stack);
    free(c);
}

size_t pf_subgoal_ctx_memory(const pf_subgoal_ctx *c) {
    if (!c) return 0;
    size_t per_node = 2 * (sizeof(double) + sizeof(int32_t) + 2 * sizeof(uint32_t)) +
                      sizeof(uint32_t) + sizeof(double);
    return sizeof(*c) + (size_t)c->cap * per_node +
           (c->heap[0].cap + c->heap[1].cap) * sizeof(pf__sg_item) +
           (c->sfan_cap + c->gfan_cap + c->chain_cap) * sizeof(int32_t) +
           c->path_cap * sizeof(pf_point) + (c->nodes_cap + c->stack_cap) * sizeof(int32_t);
}

static bool ctx_fit(pf_subgoal_ctx *c, int32_t nodes) {
    if (nodes <= c->cap) return true;
    size_t n = (size_t)nodes;
    bool ok = true;
    for (int k = 0; k < 2; k++) {
        double *g = realloc(c->g[k], n * sizeof(*g));
        if (g) c->g[k] = g;
        int32_t *p = realloc(c->parent[k], n * sizeof(*p));
        if (p) c->parent[k] = p;
        free(c->seen[k]);
        free(c->closed[k]);
        c->seen[k] = calloc(n, sizeof(uint32_t));
        c->closed[k] = calloc(n, sizeof(uint32_t));
        ok = ok && g && p && c->seen[k] && c->closed[k];
    }
    double *gc = realloc(c->gcost, n * sizeof(*gc));
    if (gc) c->gcost = gc;
    free(c->gmark);
    c->gmark = calloc(n, sizeof(uint32_t));
    c->stamp = 0;
    if (!ok || !gc || !c->gmark) {
        c->cap = 0; /* what was kept is freed or sized again next time */
        return false;
    }
    c->cap = nodes;
    return true;
}

bool pf__sg_heap_push(pf__sg_heap *h, double f, int32_t v) {
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 256;
        pf__sg_item *nh = realloc(h->a, nc * sizeof(*nh));
        if (!nh) return false;
        h->a = nh;
        h->cap = nc;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (h->a[up].f <= f) break;
        h->a[i] = h->a[up];
        i = up;
    }
    h->a[i].f = f;
    h->a[i].v = v;
    return true;
}

pf__sg_item pf__sg_heap_pop(pf__sg_heap *h) {
    pf__sg_item top = h->a[0], last = h->a[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        double fm = last.f;
        if (l < n && h->a[l].f < fm) m = l, fm = h->a[l].f;
        if (l + 1 < n && h->a[l + 1].f < fm) m = l + 1;
        if (m == i) break;
        h->a[i] = h->a[m];
        i = m;
    }
    if (n) h->a[i] = last;
    return top;
}

/* Appends the cells after a on a "diagonal first, then straight" (or, when
 * that is not free, "straight first") route to b. False when neither is. */
static bool unroll(const pf_grid *g, pf_point a, pf_point b, pf_point *path, size_t *len) {
    int32_t ax = a.x > b.x ? a.x - b.x : b.x - a.x, ay = a.y > b.y ? a.y - b.y : b.y - a.y;
    int dx = b.x > a.x ? 1 : b.x < a.x ? -1 : 0, dy = b.y > a.y ? 1 : b.y < a.y ? -1 : 0;
    int32_t nd = ax < ay ? ax : ay, ns = (ax < ay ? ay : ax) - nd;
    int sx = ax > ay ? dx : 0, sy = ax > ay ? 0 : dy;
    /* The grid's move masks hold sg_step's rule on the grids this graph
     * is built for (pf_subgoal_supports): one load a step. */
    const int ddiag = nd ? pf__dir_of(dx, dy) : -1, dstraight = ns ? pf__dir_of(sx, sy) : -1;
    for (int order = 0; order < 2; order++) {
        size_t n = *len;
        int32_t x = a.x, y = a.y;
        bool ok = true;
        for (int part = 0; part < 2 && ok; part++) {
            bool diagonal = (part == 0) == (order == 0);
            int mx = diagonal ? dx : sx, my = diagonal ? dy : sy, d = diagonal ? ddiag : dstraight;
            int32_t k = diagonal ? nd : ns;
            if (k == 0) continue;
            const int32_t off = mx + my * g->w;
            int32_t i = y * g->w + x;
            const uint8_t bit = (uint8_t)(1u << d);
            for (; k > 0; k--) {
                if (!(g->moves[i] & bit)) {
                    ok = false;
                    break;
                }
                i += off;
                x += mx;
                y += my;
                path[n++] = (pf_point){x, y};
            }
        }
        if (ok) {
            *len = n;
            return true;
        }
    }
    return false;
}

bool pf__sg_fit_cells(int32_t **a, size_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    int32_t *na = realloc(*a, nc * sizeof(*na));
    if (!na) return false;
    *a = na;
    *cap = nc;
    return true;
}

static pf_status sweep_into(const sg_view *v, pf_point p, int32_t **a, size_t *n, size_t *cap) {
    sg_buf b = {*a, 0, *cap};
    bool ok = sweep(v, p.x, p.y, &b);
    *a = b.a;
    *cap = b.cap;
    *n = b.n;
    return ok ? PF_OK : PF_ENOMEM;
}

pf_status pf__sg_begin(const pf_subgoal *s, const pf_grid *g, pf_subgoal_ctx *c, pf_point start,
                       pf_point goal, bool *direct) {
    pf_status st;
    const int32_t w = s->w;
    *direct = false;
    if (g->w != s->w || g->h != s->h) return PF_EINVAL;
    if (!pf_grid_in_bounds(g, start) || !pf_grid_in_bounds(g, goal)) return PF_ERANGE;
    if (!pf_grid_is_walkable(g, start) || !pf_grid_is_walkable(g, goal)) return PF_EBLOCKED;
    if (!ctx_fit(c, s->n + 2)) return PF_ENOMEM;
    if (++c->stamp == 0) {
        for (int k = 0; k < 2; k++) {
            memset(c->seen[k], 0, (size_t)c->cap * sizeof(uint32_t));
            memset(c->closed[k], 0, (size_t)c->cap * sizeof(uint32_t));
        }
        memset(c->gmark, 0, (size_t)c->cap * sizeof(uint32_t));
        c->stamp = 1;
    }
    c->heap[0].n = c->heap[1].n = 0;
    c->sfan_n = c->gfan_n = 0;
    int32_t sc = start.y * w + start.x, gc = goal.y * w + goal.x;
    if (sc == gc) {
        *direct = true;
        return PF_OK;
    }
    sg_view sv = {g, s->id, gc}, gv = {g, s->id, sc};
    if (s->id[sc] < 0 && (st = sweep_into(&sv, start, &c->sfan, &c->sfan_n, &c->sfan_cap)))
        return st;
    if (s->id[gc] < 0 && (st = sweep_into(&gv, goal, &c->gfan, &c->gfan_n, &c->gfan_cap)))
        return st;
    for (size_t i = 0; i < c->sfan_n; i++)
        if (c->sfan[i] == gc) *direct = true;
    for (size_t i = 0; i < c->gfan_n; i++)
        if (c->gfan[i] == sc) *direct = true;
    return PF_OK;
}

pf_status pf__sg_answer(const pf_subgoal *s, const pf_grid *g, pf_subgoal_ctx *c, pf_point start,
                        size_t nchain, double cost, pf_subgoal_answer *out) {
    const int32_t w = s->w;
    size_t cells = 1;
    pf_point *pts;
    /* The chain's cells as points first (one division each), counting the
     * path's cells; then moved to the tail of c->path, past the cells. */
    if (nchain > c->path_cap) {
        pf_point *np = realloc(c->path, nchain * sizeof(*np));
        if (!np) return PF_ENOMEM;
        c->path = np;
        c->path_cap = nchain;
    }
    for (size_t i = 0; i < nchain; i++) {
        pf_point p = {c->chain[i] % w, c->chain[i] / w};
        c->path[i] = p;
        if (i > 0) {
            int32_t dx = p.x > c->path[i - 1].x ? p.x - c->path[i - 1].x : c->path[i - 1].x - p.x;
            int32_t dy = p.y > c->path[i - 1].y ? p.y - c->path[i - 1].y : c->path[i - 1].y - p.y;
            cells += (size_t)(dx > dy ? dx : dy);
        }
    }
    if (cells + nchain > c->path_cap) {
        pf_point *np = realloc(c->path, (cells + nchain) * sizeof(*np));
        if (!np) return PF_ENOMEM;
        c->path = np;
        c->path_cap = cells + nchain;
    }
    pts = c->path + cells;
    memmove(pts, c->path, nchain * sizeof(*pts));
    size_t len = 0;
    c->path[len++] = start;
    for (size_t i = nchain - 1; i > 0; i--)
        if (!unroll(g, pts[i], pts[i - 1], c->path, &len))
            return PF_EINVAL; /* s is not g's graph */
    out->cost = cost;
    out->path = c->path;
    out->path_len = len;
    out->start_edges = (int32_t)c->sfan_n;
    return PF_OK;
}

pf_status pf__sg_answer_direct(const pf_subgoal *s, const pf_grid *g, pf_subgoal_ctx *c,
                               pf_point start, pf_point goal, pf_subgoal_answer *out) {
    size_t n = 0;
    if (!pf__sg_fit_cells(&c->chain, &c->chain_cap, 2)) return PF_ENOMEM;
    c->chain[n++] = goal.y * s->w + goal.x;
    if (start.x != goal.x || start.y != goal.y) c->chain[n++] = start.y * s->w + start.x;
    return pf__sg_answer(s, g, c, start, n,
                         pf__sg_octile(start.x, start.y, goal.x, goal.y) * s->unit, out);
}

pf_status pf_subgoal_find(const pf_subgoal *s, const pf_grid *g, const pf_landmarks *lm,
                          pf_subgoal_ctx *c, pf_point start, pf_point goal,
                          pf_subgoal_answer *out) {
    pf_subgoal_answer r = {0};
    pf_status st;
    bool direct;
    const int32_t w = s->w;
    double ld[PF_LANDMARKS_MAX];
    *out = r;
    if ((st = pf__sg_begin(s, g, c, start, goal, &direct))) return st;
    if (direct) return pf__sg_answer_direct(s, g, c, start, goal, out);
    int32_t sc = start.y * w + start.x, gc = goal.y * w + goal.x;
    int32_t vs = s->id[sc] >= 0 ? s->id[sc] : s->n, vg = s->id[gc] >= 0 ? s->id[gc] : s->n + 1;
    const uint32_t t = c->stamp;
    double *gd = c->g[0];
    int32_t *parent = c->parent[0];
    uint32_t *seen = c->seen[0], *closed = c->closed[0];
    pf__sg_heap *hp = &c->heap[0];
    for (size_t i = 0; i < c->gfan_n; i++) {
        int32_t u = s->id[c->gfan[i]];
        c->gmark[u] = t;
        c->gcost[u] = pf__sg_octile(goal.x, goal.y, c->gfan[i] % w, c->gfan[i] / w) * s->unit;
    }
    if (lm) pf_landmarks_dist(lm, gc, ld);
    gd[vs] = 0.0;
    seen[vs] = t;
    parent[vs] = -1;
    if (!pf__sg_heap_push(hp, 0.0, vs)) return PF_ENOMEM;
    while (hp->n) {
        int32_t u = pf__sg_heap_pop(hp).v;
        if (closed[u] == t) continue;
        closed[u] = t;
        r.expanded++;
        if (u == vg) break;
        const int32_t *nb;
        const double *nc = NULL;
        size_t deg;
        if (u == s->n) {
            nb = c->sfan;
            deg = c->sfan_n;
        } else {
            nb = s->adj + s->adj_off[u];
            nc = s->adj_cost + s->adj_off[u];
            deg = (size_t)(s->adj_off[u + 1] - s->adj_off[u]);
        }
        for (size_t e = 0; e <= deg; e++) {
            int32_t v, vcell;
            double cost;
            if (e == deg) { /* the goal, when the goal's sweep reached u */
                if (vg != s->n + 1 || u == s->n || c->gmark[u] != t) break;
                v = vg;
                vcell = gc;
                cost = c->gcost[u];
            } else if (!nc) {
                vcell = nb[e];
                v = s->id[vcell];
                cost = pf__sg_octile(start.x, start.y, vcell % w, vcell / w) * s->unit;
            } else {
                v = nb[e];
                vcell = s->cell[v];
                cost = nc[e];
            }
            double gv2 = gd[u] + cost;
            if (closed[v] == t || (seen[v] == t && gd[v] <= gv2)) continue;
            seen[v] = t;
            gd[v] = gv2;
            parent[v] = u;
            double hh = pf__sg_octile(vcell % w, vcell / w, goal.x, goal.y) * s->unit;
            if (lm) {
                double hl = pf_landmarks_h_to(lm, vcell, ld);
                if (hl > hh) hh = hl;
            }
            if (!pf__sg_heap_push(hp, gv2 + hh, v)) return PF_ENOMEM;
        }
    }
    if (closed[vg] != t) {
        out->expanded = r.expanded;
        return PF_NO_PATH;
    }
    size_t nchain = 0;
    for (int32_t v = vg; v >= 0; v = parent[v]) {
        if (!pf__sg_fit_cells(&c->chain, &c->chain_cap, nchain + 1)) return PF_ENOMEM;
        c->chain[nchain++] = v == s->n ? sc : v == s->n + 1 ? gc : s->cell[v];
    }
    out->expanded = r.expanded;
    return pf__sg_answer(s, g, c, start, nchain, gd[vg], out);
}
