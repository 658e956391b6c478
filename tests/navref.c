/* navref.c -- see navref.h. */
#include "navref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

struct navref {
    const pf_grid *g;
    int32_t w, h;
    size_t n;        /* reflex corners */
    double (*pt)[2]; /* their positions */
    double *vis;     /* n x n: the distance when they see each other, else -1 */
};

static bool walk(const pf_grid *g, int32_t x, int32_t y) {
    return pf_grid_is_walkable(g, (pf_point){x, y}); /* false off the map */
}

size_t navref_unpinch(pf_grid *g, uint64_t *seed) {
    size_t opened = 0;
    bool again = true;
    while (again) {
        again = false;
        for (int32_t y = 0; y + 1 < pf_grid_height(g); y++)
            for (int32_t x = 0; x + 1 < pf_grid_width(g); x++) {
                bool a = walk(g, x, y), b = walk(g, x + 1, y), c = walk(g, x, y + 1),
                     d = walk(g, x + 1, y + 1);
                pf_point open;
                if (a && d && !b && !c)
                    open = tu_below(seed, 2) ? (pf_point){x + 1, y} : (pf_point){x, y + 1};
                else if (b && c && !a && !d)
                    open = tu_below(seed, 2) ? (pf_point){x, y} : (pf_point){x + 1, y + 1};
                else
                    continue;
                pf_grid_set_cost(g, open, 1);
                opened++;
                again = true;
            }
    }
    return opened;
}

/* Whether point (x, z) lies in the closed region: in some walkable cell's
 * closed square. eps widens the test onto grid lines. */
static bool point_inside(const navref *r, double x, double z, double eps) {
    int32_t x0 = (int32_t)floor(x - eps), x1 = (int32_t)floor(x + eps);
    int32_t z0 = (int32_t)floor(z - eps), z1 = (int32_t)floor(z + eps);
    for (int32_t cz = z0; cz <= z1; cz++)
        for (int32_t cx = x0; cx <= x1; cx++)
            if (walk(r->g, cx, cz)) return true;
    return false;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool navref_segment_inside(const navref *r, const double a[2], const double b[2]) {
    /* The parameters where the segment crosses a grid line split it into
     * pieces each inside one cell's closed square (or along a grid line);
     * a piece is in the region when its midpoint is (a point on a grid line
     * belongs to the cells on both sides). The crossing points themselves
     * lie in the closure of the pieces on either side. */
    const double eps = 1e-9;
    double dx = b[0] - a[0], dz = b[1] - a[1];
    int32_t gx0 = (int32_t)ceil(fmin(a[0], b[0])), gx1 = (int32_t)floor(fmax(a[0], b[0]));
    int32_t gz0 = (int32_t)ceil(fmin(a[1], b[1])), gz1 = (int32_t)floor(fmax(a[1], b[1]));
    size_t cap = (size_t)(gx1 - gx0 + 1) + (size_t)(gz1 - gz0 + 1) + 2, n = 0;
    double *t = malloc(cap * sizeof(*t));
    bool in = true;
    if (!t) return false;
    t[n++] = 0;
    t[n++] = 1;
    if (fabs(dx) > eps)
        for (int32_t k = gx0; k <= gx1; k++) {
            double s = (k - a[0]) / dx;
            if (s > 0 && s < 1) t[n++] = s;
        }
    if (fabs(dz) > eps)
        for (int32_t k = gz0; k <= gz1; k++) {
            double s = (k - a[1]) / dz;
            if (s > 0 && s < 1) t[n++] = s;
        }
    qsort(t, n, sizeof(*t), cmp_double);
    if (!point_inside(r, a[0], a[1], eps) || !point_inside(r, b[0], b[1], eps)) in = false;
    for (size_t i = 0; in && i + 1 < n; i++) {
        double m = (t[i] + t[i + 1]) / 2;
        if (t[i + 1] - t[i] < 1e-12) continue;
        if (!point_inside(r, a[0] + m * dx, a[1] + m * dz, eps)) in = false;
    }
    free(t);
    return in;
}

navref *navref_create(const pf_grid *g) {
    navref *r = calloc(1, sizeof(*r));
    size_t cap;
    if (!r) return NULL;
    r->g = g;
    r->w = pf_grid_width(g);
    r->h = pf_grid_height(g);
    cap = (size_t)(r->w + 1) * (size_t)(r->h + 1);
    r->pt = malloc(cap * sizeof(*r->pt));
    if (!r->pt) goto out_fail;
    /* A grid point is a reflex corner when exactly three of its four cells
     * are walkable: the corner of an obstacle the region wraps round. */
    for (int32_t z = 1; z < r->h; z++)
        for (int32_t x = 1; x < r->w; x++) {
            int k = walk(g, x - 1, z - 1) + walk(g, x, z - 1) + walk(g, x - 1, z) + walk(g, x, z);
            if (k != 3) continue;
            r->pt[r->n][0] = x;
            r->pt[r->n][1] = z;
            r->n++;
        }
    r->vis = malloc((r->n ? r->n * r->n : 1) * sizeof(*r->vis));
    if (!r->vis) goto out_fail;
    for (size_t i = 0; i < r->n; i++) {
        r->vis[i * r->n + i] = 0;
        for (size_t j = i + 1; j < r->n; j++) {
            double d = -1;
            if (navref_segment_inside(r, r->pt[i], r->pt[j]))
                d = hypot(r->pt[j][0] - r->pt[i][0], r->pt[j][1] - r->pt[i][1]);
            r->vis[i * r->n + j] = r->vis[j * r->n + i] = d;
        }
    }
    return r;

out_fail:
    navref_destroy(r);
    return NULL;
}

void navref_destroy(navref *r) {
    if (!r) return;
    free(r->pt);
    free(r->vis);
    free(r);
}

size_t navref_corners(const navref *r) { return r->n; }

double navref_shortest(const navref *r, const double s[2], const double t[2]) {
    /* Dijkstra, dense (the graph is small): nodes 0..n-1 the corners, n the
     * start, n + 1 the goal. */
    const size_t n = r->n, all = n + 2;
    double *d = malloc(all * sizeof(*d)), *from_s = malloc(all * sizeof(*from_s)),
           *to_t = malloc(all * sizeof(*to_t)), best = -1;
    bool *done = calloc(all, sizeof(*done));
    if (!d || !from_s || !to_t || !done) goto out;
    for (size_t i = 0; i < n; i++) {
        from_s[i] = navref_segment_inside(r, s, r->pt[i])
                        ? hypot(r->pt[i][0] - s[0], r->pt[i][1] - s[1])
                        : -1;
        to_t[i] = navref_segment_inside(r, r->pt[i], t)
                      ? hypot(t[0] - r->pt[i][0], t[1] - r->pt[i][1])
                      : -1;
    }
    if (navref_segment_inside(r, s, t)) {
        best = hypot(t[0] - s[0], t[1] - s[1]);
        goto out;
    }
    for (size_t i = 0; i < all; i++) d[i] = INFINITY;
    d[n] = 0;
    for (;;) {
        size_t u = all;
        for (size_t i = 0; i < all; i++)
            if (!done[i] && isfinite(d[i]) && (u == all || d[i] < d[u])) u = i;
        if (u == all) break;
        if (u == n + 1) {
            best = d[u];
            break;
        }
        done[u] = true;
        for (size_t v = 0; v < all; v++) {
            double e;
            if (done[v] || v == n) continue;
            if (u == n)
                e = v == n + 1 ? -1 : from_s[v];
            else
                e = v == n + 1 ? to_t[u] : r->vis[u * n + v];
            if (e >= 0 && d[u] + e < d[v]) d[v] = d[u] + e;
        }
    }
out:
    free(d);
    free(from_s);
    free(to_t);
    free(done);
    return best;
}
