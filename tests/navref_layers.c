/* navref_layers.c -- see navref_layers.h. */
#include "navref_layers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VMAX 8
#define FAN_MAX 64

/* Distances in x/z under which two points, or a point and a line, are one
 * (tile-border copies of a vertex differ by float steps). */
static const double EPS = 1e-4;
/* How far from a glued stretch a walk's exit point may lie and still cross
 * it: the exit is where the segment is EPS outside the polygon, which at a
 * vertex and a slant is a few EPS from the neighbouring edge. Glued
 * stretches are real neighbours, and the polygon beyond must still hold
 * the segment's continuation, so a millimetre joins nothing else. */
static const double FAN_EPS = 1e-3;

typedef struct portion {
    int q;             /* the polygon glued there */
    double a[3], b[3]; /* the glued stretch of this edge */
} portion;

typedef struct rpoly {
    int n;
    double v[VMAX][3]; /* counter-clockwise on x/z */
    portion *por[VMAX];
    int npor[VMAX];
} rpoly;

typedef struct corner {
    double p[3];
    int poly; /* a polygon holding it */
} corner;

struct navref_layers {
    rpoly *polys;
    int npolys;
    double climb, layer;
    corner *c;
    int nc, ccap;
};

static double cross(const double *o, const double *a, const double *b) {
    return (a[0] - o[0]) * (b[2] - o[2]) - (a[2] - o[2]) * (b[0] - o[0]);
}

static double dist_xz(const double *a, const double *b) { return hypot(b[0] - a[0], b[2] - a[2]); }

/* Distance in x/z from p to segment a-b, and the parameter of its foot. */
static double seg_dist(const double *p, const double *a, const double *b, double *tf) {
    const double ex = b[0] - a[0], ez = b[2] - a[2], ee = ex * ex + ez * ez;
    double t = ee > 0 ? ((p[0] - a[0]) * ex + (p[2] - a[2]) * ez) / ee : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    if (tf) *tf = t;
    return hypot(a[0] + t * ex - p[0], a[2] + t * ez - p[2]);
}

/* Whether polygon P holds p in x/z (closed, EPS wide), and its height
 * there (its fan's triangle under p, or the nearest edge's point). */
static bool poly_holds(const rpoly *P, const double *p, double *y) {
    for (int j = 0; j < P->n; j++) {
        const double *a = P->v[j], *b = P->v[(j + 1) % P->n];
        const double len = dist_xz(a, b);
        if (len > 0 && cross(a, b, p) / len < -EPS) return false;
    }
    if (!y) return true;
    for (int j = 1; j + 1 < P->n; j++) {
        const double *a = P->v[0], *b = P->v[j], *c = P->v[j + 1];
        const double d = cross(a, b, c);
        if (fabs(d) < 1e-12) continue;
        const double u = cross(b, c, p) / d, v = cross(c, a, p) / d, w = 1 - u - v;
        if (u >= -1e-6 && v >= -1e-6 && w >= -1e-6) {
            *y = u * a[1] + v * b[1] + w * c[1];
            return true;
        }
    }
    double best = INFINITY;
    for (int j = 0; j < P->n; j++) {
        const double *a = P->v[j], *b = P->v[(j + 1) % P->n];
        double t, d = seg_dist(p, a, b, &t);
        if (d < best) {
            best = d;
            *y = a[1] + t * (b[1] - a[1]);
        }
    }
    return true;
}

/* Clips the segment A + t (B - A), t in [0, 1], to polygon P (EPS wide):
 * false when nothing is left. */
static bool clip(const rpoly *P, const double *A, const double *B, double *lo, double *hi) {
    double l = 0, h = 1;
    for (int j = 0; j < P->n; j++) {
        const double *a = P->v[j], *b = P->v[(j + 1) % P->n];
        const double len = dist_xz(a, b);
        if (len <= 0) continue;
        const double f0 = cross(a, b, A) / len, f1 = cross(a, b, B) / len, fd = f1 - f0;
        if (fabs(fd) < 1e-15) {
            if (f0 < -EPS) return false;
            continue;
        }
        const double t = (-EPS - f0) / fd;
        if (fd > 0) {
            if (t > l) l = t;
        } else if (t < h) {
            h = t;
        }
    }
    *lo = l;
    *hi = h;
    return l <= h;
}

static bool add_portion(rpoly *P, int e, int q, const double *a, const double *b) {
    portion *np = realloc(P->por[e], (size_t)(P->npor[e] + 1) * sizeof *np);
    if (!np) return false;
    P->por[e] = np;
    np[P->npor[e]].q = q;
    memcpy(np[P->npor[e]].a, a, sizeof np->a);
    memcpy(np[P->npor[e]].b, b, sizeof np->b);
    P->npor[e]++;
    return true;
}

/* Glues edge e of P to edge f of Q where they overlap (see the header). */
static bool glue(navref_layers *r, int pi, int e, int qi, int f) {
    rpoly *P = &r->polys[pi];
    const rpoly *Q = &r->polys[qi];
    const double *a = P->v[e], *b = P->v[(e + 1) % P->n];
    const double *c = Q->v[f], *d = Q->v[(f + 1) % Q->n];
    const double len = dist_xz(a, b);
    if (len <= 0) return true;
    if (fabs(cross(a, b, c)) / len > EPS || fabs(cross(a, b, d)) / len > EPS) return true;
    const double ux = (b[0] - a[0]) / len, uz = (b[2] - a[2]) / len;
    double tc = (c[0] - a[0]) * ux + (c[2] - a[2]) * uz,
           td = (d[0] - a[0]) * ux + (d[2] - a[2]) * uz;
    if (tc <= td) return true; /* the same way round: not glued */
    const double lo = fmax(0, td), hi = fmin(len, tc);
    if (hi - lo <= EPS) return true;
    double s[2][3];
    const double ts[2] = {lo, hi};
    for (int k = 0; k < 2; k++) {
        const double t = ts[k] / len;
        const double u = (tc - ts[k]) / (tc - td); /* along c -> d */
        s[k][0] = a[0] + t * (b[0] - a[0]);
        s[k][2] = a[2] + t * (b[2] - a[2]);
        s[k][1] = a[1] + t * (b[1] - a[1]);
        const double yq = c[1] + u * (d[1] - c[1]);
        if (fabs(yq - s[k][1]) > r->climb) return true;
    }
    return add_portion(P, e, qi, s[0], s[1]);
}

static bool add_corner(navref_layers *r, const double *p, int poly) {
    for (int i = 0; i < r->nc; i++) {
        const corner *c = &r->c[i];
        if (dist_xz(c->p, p) > EPS || fabs(c->p[1] - p[1]) > r->climb) continue;
        if (c->poly == poly) return true;
        const rpoly *P = &r->polys[poly];
        for (int e = 0; e < P->n; e++)
            for (int k = 0; k < P->npor[e]; k++)
                if (P->por[e][k].q == c->poly &&
                    seg_dist(p, P->por[e][k].a, P->por[e][k].b, NULL) <= EPS)
                    return true;
    }
    if (r->nc == r->ccap) {
        int ncap = r->ccap ? 2 * r->ccap : 256;
        corner *nc = realloc(r->c, (size_t)ncap * sizeof *nc);
        if (!nc) return false;
        r->c = nc;
        r->ccap = ncap;
    }
    memcpy(r->c[r->nc].p, p, sizeof r->c->p);
    r->c[r->nc].poly = poly;
    r->nc++;
    return true;
}

/* The ends of the uncovered stretches of every edge. */
static bool find_corners(navref_layers *r) {
    for (int pi = 0; pi < r->npolys; pi++) {
        const rpoly *P = &r->polys[pi];
        for (int e = 0; e < P->n; e++) {
            const double *a = P->v[e], *b = P->v[(e + 1) % P->n];
            const double len = dist_xz(a, b);
            const int np = P->npor[e];
            double *iv = malloc((size_t)(2 * np + 2) * sizeof *iv);
            if (!iv) return false;
            /* covered intervals as [start, end] pairs along the edge */
            for (int k = 0; k < np; k++) {
                double t0 = dist_xz(a, P->por[e][k].a), t1 = dist_xz(a, P->por[e][k].b);
                iv[2 * k] = fmin(t0, t1);
                iv[2 * k + 1] = fmax(t0, t1);
            }
            /* sort pairs by start (few: insertion) */
            for (int x = 1; x < np; x++)
                for (int y = x; y > 0 && iv[2 * y] < iv[2 * y - 2]; y--) {
                    double t0 = iv[2 * y], t1 = iv[2 * y + 1];
                    iv[2 * y] = iv[2 * y - 2];
                    iv[2 * y + 1] = iv[2 * y - 1];
                    iv[2 * y - 2] = t0;
                    iv[2 * y - 1] = t1;
                }
            double cur = 0;
            bool ok = true;
            for (int k = 0; k <= np && ok; k++) {
                const double s = k < np ? iv[2 * k] : len;
                if (s > cur + EPS) { /* wall from cur to s */
                    double p[3];
                    for (int w = 0; w < 2; w++) {
                        const double t = (w ? s : cur) / len;
                        for (int m = 0; m < 3; m++) p[m] = a[m] + t * (b[m] - a[m]);
                        ok = ok && add_corner(r, p, pi);
                    }
                }
                if (k < np && iv[2 * k + 1] > cur) cur = iv[2 * k + 1];
            }
            free(iv);
            if (!ok) return false;
        }
    }
    return true;
}

navref_layers *navref_layers_create(const float *verts, const int *first, const int *idx,
                                    int npolys, const uint8_t *walls, float climb, float layer) {
    navref_layers *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->climb = climb;
    r->layer = layer;
    r->polys = calloc((size_t)(npolys ? npolys : 1), sizeof *r->polys);
    if (!r->polys) goto out_fail;
    r->npolys = npolys;
    for (int i = 0; i < npolys; i++) {
        rpoly *P = &r->polys[i];
        const int n = first[i + 1] - first[i];
        if (n < 3 || n > VMAX) goto out_fail;
        P->n = n;
        double area = 0;
        for (int j = 0; j < n; j++)
            for (int m = 0; m < 3; m++) P->v[j][m] = verts[3 * idx[first[i] + j] + m];
        for (int j = 0; j < n; j++) {
            const double *a = P->v[j], *b = P->v[(j + 1) % n];
            area += a[0] * b[2] - b[0] * a[2];
        }
        uint8_t w = walls ? walls[i] : 0;
        if (area < 0) { /* reverse; edge j becomes old edge n - 2 - j */
            double t[VMAX][3];
            uint8_t nw = 0;
            for (int j = 0; j < n; j++) memcpy(t[j], P->v[n - 1 - j], sizeof t[j]);
            for (int j = 0; j < n; j++)
                if (w & (1u << ((2 * n - 2 - j) % n))) nw |= (uint8_t)(1u << j);
            memcpy(P->v, t, sizeof t);
            w = nw;
        }
        /* walls: edges never glued (a marker in npor: -1) */
        for (int j = 0; j < n; j++) P->npor[j] = (w & (1u << j)) ? -1 : 0;
    }
    for (int pi = 0; pi < npolys; pi++)
        for (int e = 0; e < r->polys[pi].n; e++) {
            if (r->polys[pi].npor[e] < 0) continue;
            for (int qi = 0; qi < npolys; qi++) {
                if (qi == pi) continue;
                for (int f = 0; f < r->polys[qi].n; f++)
                    if (r->polys[qi].npor[f] >= 0 && !glue(r, pi, e, qi, f)) goto out_fail;
            }
        }
    for (int pi = 0; pi < npolys; pi++)
        for (int e = 0; e < r->polys[pi].n; e++)
            if (r->polys[pi].npor[e] < 0) r->polys[pi].npor[e] = 0;
    if (!find_corners(r)) goto out_fail;
    return r;
out_fail:
    navref_layers_destroy(r);
    return NULL;
}

void navref_layers_destroy(navref_layers *r) {
    if (!r) return;
    for (int i = 0; r->polys && i < r->npolys; i++)
        for (int e = 0; e < VMAX; e++) free(r->polys[i].por[e]);
    free(r->polys);
    free(r->c);
    free(r);
}

int navref_layers_corners(const navref_layers *r) { return r->nc; }

/* Walks the segment A -> B from polygon start: the polygon it ends in,
 * -1 when it leaves the surface. */
static int walk(const navref_layers *r, int start, const double *A, const double *B) {
    const double len = dist_xz(A, B);
    if (len <= EPS) return start;
    const double teps = EPS / len;
    int cur = start;
    double t = 0;
    for (int steps = 0; steps < 4 * r->npolys + 16; steps++) {
        double lo, hi;
        if (clip(&r->polys[cur], A, B, &lo, &hi) && lo <= t + teps && hi > t) t = hi;
        if (t >= 1 - 1e-12) return cur;
        /* At Y: the polygons around it glued to cur (through stretches
         * holding Y), the one the segment goes on through furthest. */
        double Y[3];
        for (int m = 0; m < 3; m++) Y[m] = A[m] + t * (B[m] - A[m]);
        int fan[FAN_MAX], nf = 1, best = -1;
        double best_hi = t + 1e-12;
        fan[0] = cur;
        for (int i = 0; i < nf; i++) {
            const rpoly *P = &r->polys[fan[i]];
            for (int e = 0; e < P->n; e++)
                for (int k = 0; k < P->npor[e]; k++) {
                    const portion *po = &P->por[e][k];
                    if (seg_dist(Y, po->a, po->b, NULL) > FAN_EPS) continue;
                    bool seen = false;
                    for (int x = 0; x < nf && !seen; x++) seen = fan[x] == po->q;
                    if (seen || nf == FAN_MAX) continue;
                    fan[nf++] = po->q;
                    if (clip(&r->polys[po->q], A, B, &lo, &hi) && lo <= t + teps && hi > best_hi) {
                        best_hi = hi;
                        best = po->q;
                    }
                }
        }
        if (best < 0) return -1;
        cur = best;
    }
    return -1;
}

/* Whether polygon p holds point q at q's height. */
static bool holds_at(const navref_layers *r, int p, const double *q) {
    double y;
    return poly_holds(&r->polys[p], q, &y) && fabs(y - q[1]) <= r->layer;
}

/* The polygon holding p nearest its height, -1 none. */
static int locate(const navref_layers *r, const double *p) {
    int best = -1;
    double bd = INFINITY;
    for (int i = 0; i < r->npolys; i++) {
        double y;
        if (!poly_holds(&r->polys[i], p, &y)) continue;
        if (fabs(y - p[1]) < bd) {
            bd = fabs(y - p[1]);
            best = i;
        }
    }
    return bd <= r->layer ? best : -1;
}

/* Whether polygons p and q meet around point y: q is reached from p
 * across glued stretches holding y (one fan round a vertex, or two
 * polygons either side of an edge). Polygons that only touch at y (a
 * pinch) do not meet. */
static bool same_fan(const navref_layers *r, int p, int q, const double *y) {
    int fan[FAN_MAX], nf = 1;
    fan[0] = p;
    for (int i = 0; i < nf; i++) {
        if (fan[i] == q) return true;
        const rpoly *P = &r->polys[fan[i]];
        for (int e = 0; e < P->n; e++)
            for (int k = 0; k < P->npor[e]; k++) {
                const portion *po = &P->por[e][k];
                if (seg_dist(y, po->a, po->b, NULL) > FAN_EPS) continue;
                bool seen = false;
                for (int x = 0; x < nf && !seen; x++) seen = fan[x] == po->q;
                if (!seen && nf < FAN_MAX) fan[nf++] = po->q;
            }
    }
    return false;
}

/* Whether the segment from a (in polygon pa) reaches b in polygon pb's
 * fan round b. */
static bool sees(const navref_layers *r, int pa, const double *a, int pb, const double *b) {
    const int end = walk(r, pa, a, b);
    return end >= 0 && holds_at(r, end, b) && same_fan(r, end, pb, b);
}

bool navref_layers_sees(const navref_layers *r, const float a[3], const float b[3]) {
    const double A[3] = {a[0], a[1], a[2]}, B[3] = {b[0], b[1], b[2]};
    const int pa = locate(r, A);
    const int pb = locate(r, B);
    return pa >= 0 && pb >= 0 && sees(r, pa, A, pb, B);
}

double navref_layers_path(const navref_layers *r, const float s[3], const float t[3], float *pts,
                          int max, int *npts) {
    if (npts) *npts = 0;
    const double S[3] = {s[0], s[1], s[2]}, T[3] = {t[0], t[1], t[2]};
    const int ps = locate(r, S), pt = locate(r, T);
    if (ps < 0 || pt < 0) return -2;
    if (sees(r, ps, S, pt, T)) {
        if (npts && max >= 2) {
            memcpy(pts, s, 3 * sizeof(float));
            memcpy(pts + 3, t, 3 * sizeof(float));
            *npts = 2;
        }
        return dist_xz(S, T);
    }
    /* A* over the corners (0..nc-1) and the start (nc), the heuristic the
     * straight distance to the goal (consistent): a corner's edges are
     * walked when it is settled, only where they could improve a label;
     * the goal's label is best. */
    const int n = r->nc, all = n + 1;
    double *d = malloc((size_t)all * sizeof *d), *h = malloc((size_t)all * sizeof *h);
    int *from = malloc((size_t)all * sizeof *from), last = -1;
    double best = INFINITY;
    bool *done = calloc((size_t)all, sizeof *done);
    if (!d || !h || !done || !from) {
        free(d);
        free(h);
        free(from);
        free(done);
        return -1;
    }
    for (int i = 0; i < all; i++) {
        d[i] = INFINITY;
        h[i] = dist_xz(i < n ? r->c[i].p : S, T);
    }
    d[n] = 0;
    for (;;) {
        int u = -1;
        for (int i = 0; i < all; i++)
            if (!done[i] && d[i] < INFINITY && (u < 0 || d[i] + h[i] < d[u] + h[u])) u = i;
        if (u < 0 || d[u] + h[u] >= best) break;
        done[u] = true;
        const double *up = u < n ? r->c[u].p : S;
        const int upoly = u < n ? r->c[u].poly : ps;
        if (u < n && d[u] + h[u] < best && sees(r, upoly, up, pt, T)) {
            best = d[u] + h[u];
            last = u;
        }
        for (int v = 0; v < n; v++) {
            if (done[v]) continue;
            const double e = d[u] + dist_xz(up, r->c[v].p);
            if (e >= d[v] || e + h[v] >= best) continue;
            if (sees(r, upoly, up, r->c[v].poly, r->c[v].p)) {
                d[v] = e;
                from[v] = u;
            }
        }
    }
    if (npts && last >= 0) {
        int k = 0;
        for (int u = last; u != n; u = from[u]) k++;
        if (k + 2 <= max) {
            memcpy(pts + 3 * (k + 1), t, 3 * sizeof(float));
            for (int u = last, w = k; u != n; u = from[u], w--)
                for (int m = 0; m < 3; m++) pts[3 * w + m] = (float)r->c[u].p[m];
            memcpy(pts, s, 3 * sizeof(float));
            *npts = k + 2;
        }
    }
    free(d);
    free(h);
    free(from);
    free(done);
    return best < INFINITY ? best : -1;
}

double navref_layers_shortest(const navref_layers *r, const float s[3], const float t[3]) {
    return navref_layers_path(r, s, t, NULL, 0, NULL);
}
