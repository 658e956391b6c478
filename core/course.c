/* course.c -- the course a grid agent keeps: its route, and hysteresis (see
 * course.h).
 *
 * Junctions and flips look cells up in a small open-addressing table of
 * one path's cells (cell -> index), rebuilt per call in the route's
 * scratch: O(n + m) a call, no allocation once the scratch has grown.
 */
#include "course.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dstar.h"

#define NONE SIZE_MAX
#define EMPTY_KEY UINT64_MAX

struct pf_course {
    pf_point *p; /* the kept path */
    size_t n, cap;
    size_t at; /* the agent's index on it */
    /* Scratch: the cell table, and a spliced path being built. */
    uint64_t *key;
    size_t *val;
    size_t hcap;
    unsigned hbits;
    pf_point *tmp;
    size_t tcap;
};

/* Views */

static uint8_t grid_cost(const void *ctx, pf_point p) { return pf_grid_cost(ctx, p); }
static bool grid_step(const void *ctx, pf_point a, pf_point b) {
    return pf_grid_can_step(ctx, a, b);
}
static uint8_t dstar_cost(const void *ctx, pf_point p) { return pf_dstar_cost(ctx, p); }
static bool dstar_step(const void *ctx, pf_point a, pf_point b) {
    return pf_dstar_can_step(ctx, a, b);
}

pf_course_view pf_course_view_grid(const pf_grid *g) {
    pf_course_view v = {g, grid_cost, grid_step};
    return v;
}

pf_course_view pf_course_view_dstar(const pf_dstar *d) {
    pf_course_view v = {d, dstar_cost, dstar_step};
    return v;
}

/* Life */

pf_course *pf_course_create(void) { return calloc(1, sizeof(pf_course)); }

void pf_course_destroy(pf_course *r) {
    if (!r) return;
    free(r->p);
    free(r->key);
    free(r->val);
    free(r->tmp);
    free(r);
}

size_t pf_course_memory(const pf_course *r) {
    return sizeof(*r) + (r->cap + r->tcap) * sizeof(pf_point) +
           r->hcap * (sizeof(*r->key) + sizeof(*r->val));
}

void pf_course_clear(pf_course *r) { r->n = r->at = 0; }

/* Room for n points in *buf (capacity *cap), kept on failure. */
static pf_status points_reserve(pf_point **buf, size_t *cap, size_t n) {
    size_t c = *cap ? *cap : 64;
    pf_point *p;
    if (n <= *cap) return PF_OK;
    if (n > PF_COURSE_MAX_POINTS) return PF_ELIMIT;
    while (c < n) c *= 2;
    p = realloc(*buf, c * sizeof(*p));
    if (!p) return PF_ENOMEM;
    *buf = p;
    *cap = c;
    return PF_OK;
}

pf_status pf_course_set(pf_course *r, const pf_point *path, size_t n) {
    pf_status st = points_reserve(&r->p, &r->cap, n);
    if (st) return st;
    if (n) memmove(r->p, path, n * sizeof(*path));
    r->n = n;
    r->at = 0;
    return PF_OK;
}

static bool same_point(pf_point a, pf_point b) { return a.x == b.x && a.y == b.y; }

static bool same_points(const pf_point *a, const pf_point *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!same_point(a[i], b[i])) return false;
    return true;
}

bool pf_course_locate(pf_course *r, pf_point agent) {
    for (size_t i = r->at; i < r->n; i++)
        if (same_point(r->p[i], agent)) {
            r->at = i;
            return true;
        }
    for (size_t i = 0; i < r->at && i < r->n; i++)
        if (same_point(r->p[i], agent)) {
            r->at = i;
            return true;
        }
    return false;
}

const pf_point *pf_course_ahead(const pf_course *r, size_t *n) {
    *n = r->at < r->n ? r->n - r->at : 0;
    return *n ? r->p + r->at : NULL;
}

/* Whether p[0..n) can be walked on v: every cell open, every step allowed. */
static bool walkable(const pf_course_view *v, const pf_point *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (v->cost(v->ctx, p[i]) == 0) return false;
        if (i && !v->can_step(v->ctx, p[i - 1], p[i])) return false;
    }
    return true;
}

bool pf_course_blocked(const pf_course *r, const pf_course_view *v) {
    size_t n;
    const pf_point *p = pf_course_ahead(r, &n);
    return !walkable(v, p, n);
}

double pf_course_cost(const pf_course_view *v, const pf_point *p, size_t n) {
    double c = 0.0;
    for (size_t i = 1; i < n; i++) {
        bool diag = p[i].x != p[i - 1].x && p[i].y != p[i - 1].y;
        c += (double)v->cost(v->ctx, p[i]) * (diag ? sqrt(2.0) : 1.0);
    }
    return c;
}

/* The cell table */

static uint64_t cell_key(pf_point p) {
    return (uint64_t)(uint32_t)p.x | (uint64_t)(uint32_t)p.y << 32;
}

static size_t slot_of(uint64_t key, unsigned bits) {
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
}

/* Fills the table with p[0..n) (cell -> first index). PF_ENOMEM leaves it
 * empty. */
static pf_status table_fill(pf_course *r, const pf_point *p, size_t n) {
    size_t cap = 16;
    unsigned bits = 4;
    while (cap < 2 * n) {
        cap *= 2;
        bits++;
    }
    /* A table more than four times too big is made again, so one long
     * route does not make every later fill clear a large table. */
    if (cap > r->hcap || 4 * cap < r->hcap) {
        uint64_t *k = malloc(cap * sizeof(*k));
        size_t *v = malloc(cap * sizeof(*v));
        if (!k || !v) {
            free(k);
            free(v);
            return PF_ENOMEM;
        }
        free(r->key);
        free(r->val);
        r->key = k;
        r->val = v;
        r->hcap = cap;
        r->hbits = bits;
    }
    cap = r->hcap;
    for (size_t i = 0; i < cap; i++) r->key[i] = EMPTY_KEY;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = cell_key(p[i]);
        size_t s = slot_of(key, r->hbits);
        while (r->key[s] != EMPTY_KEY && r->key[s] != key) s = (s + 1) & (cap - 1);
        if (r->key[s] == EMPTY_KEY) {
            r->key[s] = key;
            r->val[s] = i;
        }
    }
    return PF_OK;
}

/* The index of p in the table, NONE when absent. */
static size_t table_find(const pf_course *r, pf_point p) {
    uint64_t key = cell_key(p);
    for (size_t s = slot_of(key, r->hbits);; s = (s + 1) & (r->hcap - 1)) {
        if (r->key[s] == key) return r->val[s];
        if (r->key[s] == EMPTY_KEY) return NONE;
    }
}

/* Whether some cell of p[0..n) with Chebyshev distance above `skip` from
 * p[n - 1] (skip < 0: every cell) lies farther than PF_COURSE_FLIP_CELLS
 * from every cell in the table. */
static bool strays(const pf_course *r, const pf_point *p, size_t n, int64_t skip) {
    const int R = PF_COURSE_FLIP_CELLS;
    for (size_t i = 0; i < n; i++) {
        int64_t dx = llabs((int64_t)p[i].x - p[n - 1].x), dy = llabs((int64_t)p[i].y - p[n - 1].y);
        if (skip >= 0 && (dx > dy ? dx : dy) <= skip) continue;
        bool near = false;
        for (int oy = -R; oy <= R && !near; oy++)
            for (int ox = -R; ox <= R && !near; ox++)
                near = table_find(r, (pf_point){p[i].x + ox, p[i].y + oy}) != NONE;
        if (!near) return true;
    }
    return false;
}

/* Adoption */

pf_status pf_course_adopt(pf_course *r, const pf_point *path, size_t n, double h,
                          const pf_course_view *v, pf_course_adoption *out) {
    size_t m, bj = 0, bk = 0;
    pf_status st;
    memset(out, 0, sizeof(*out));
    if (n == 0 || !(h >= 0.0 && h < 1.0)) return PF_EINVAL;
    if (n > PF_COURSE_MAX_POINTS) return PF_ELIMIT;
    const pf_point *K = pf_course_ahead(r, &m);
    if (m == 0 || !same_point(K[0], path[0])) {
        st = pf_course_set(r, path, n);
        out->outcome = PF_COURSE_NEW;
        out->changed = st == PF_OK;
        return st;
    }
    if (m == n && same_points(K, path, n)) {
        out->outcome = PF_COURSE_SAME;
        return PF_OK;
    }
    /* The junction: the kept route's cell furthest along the new path. */
    if ((st = table_fill(r, path, n))) return st;
    for (size_t j = 1; j < m; j++) {
        size_t k = table_find(r, K[j]);
        if (k != NONE && k > bk) {
            bk = k;
            bj = j;
        }
    }
    if (bk == 0) {
        /* No junction: the new path, a flip when it strays away from the
         * goals. */
        const pf_point ke = K[m - 1], ne = path[n - 1];
        int64_t dx = llabs((int64_t)ke.x - ne.x), dy = llabs((int64_t)ke.y - ne.y);
        if ((st = table_fill(r, K, m))) return st;
        out->flip = strays(r, path, n, (dx > dy ? dx : dy) + PF_COURSE_FLIP_CELLS);
        out->outcome = PF_COURSE_SWITCHED;
        goto take_new;
    }
    if (bj == bk && same_points(K, path, bk + 1)) {
        out->outcome = PF_COURSE_UPDATED;
        goto take_new;
    }
    out->kept_cost = pf_course_cost(v, K, bj + 1);
    out->new_cost = pf_course_cost(v, path, bk + 1);
    if (h > 0.0 && walkable(v, K, bj + 1) && !(out->new_cost < (1.0 - h) * out->kept_cost)) {
        /* Keep K up to the junction, then the new path. */
        size_t len = bj + 1 + (n - bk - 1);
        if ((st = points_reserve(&r->tmp, &r->tcap, len))) return st;
        memcpy(r->tmp, K, (bj + 1) * sizeof(*K));
        memcpy(r->tmp + bj + 1, path + bk + 1, (n - bk - 1) * sizeof(*path));
        out->outcome = PF_COURSE_KEPT;
        out->changed = !(len == m && same_points(r->tmp, K, m));
        pf_point *p = r->p;
        size_t cap = r->cap;
        r->p = r->tmp;
        r->cap = r->tcap;
        r->tmp = p;
        r->tcap = cap;
        r->n = len;
        r->at = 0;
        return PF_OK;
    }
    if ((st = table_fill(r, K, bj + 1))) return st;
    out->flip = strays(r, path, bk + 1, -1);
    out->outcome = PF_COURSE_SWITCHED;
take_new:
    st = pf_course_set(r, path, n);
    out->changed = st == PF_OK;
    if (st) out->flip = false;
    return st;
}

const char *pf_course_outcome_name(pf_course_outcome o) {
    static const char *const names[] = {"new", "same", "updated", "switched", "kept"};
    return (unsigned)o < sizeof(names) / sizeof(names[0]) ? names[o] : "unknown";
}
