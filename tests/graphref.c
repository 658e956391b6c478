/* graphref.c -- the graph tests' reference (graphref.h). */
#include "graphref.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void graphref_alloc(graphref *r, uint32_t n, uint32_t m) {
    memset(r, 0, sizeof(*r));
    r->n = n;
    r->m = m;
    r->dim = 2;
    r->pos = calloc(3 * (size_t)n + 1, sizeof(double));
    r->from = calloc((size_t)m + 1, sizeof(uint32_t));
    r->to = calloc((size_t)m + 1, sizeof(uint32_t));
    r->cost = calloc((size_t)m + 1, sizeof(double));
    r->both = calloc((size_t)m + 1, 1);
    r->eon = calloc((size_t)m + 1, 1);
    r->non = calloc((size_t)n + 1, 1);
    ck_assert(r->pos && r->from && r->to && r->cost && r->both && r->eon && r->non);
    memset(r->non, 1, n);
    memset(r->eon, 1, m);
}

void graphref_free(graphref *r) {
    free(r->pos);
    free(r->from);
    free(r->to);
    free(r->cost);
    free(r->both);
    free(r->eon);
    free(r->non);
}

double graphref_euclid(const graphref *r, uint32_t a, uint32_t b) {
    double s = 0;
    for (int k = 0; k < 3; k++) {
        double d = r->pos[3 * a + (uint32_t)k] - r->pos[3 * b + (uint32_t)k];
        s += d * d;
    }
    return sqrt(s);
}

void graphref_dijkstra(const graphref *r, uint32_t s, double *dist) {
    uint8_t *done = calloc((size_t)r->n + 1, 1);
    ck_assert(done);
    for (uint32_t v = 0; v < r->n; v++) dist[v] = INFINITY;
    dist[s] = 0;
    for (;;) {
        uint32_t u = UINT32_MAX;
        for (uint32_t v = 0; v < r->n; v++)
            if (!done[v] && isfinite(dist[v]) && (u == UINT32_MAX || dist[v] < dist[u])) u = v;
        if (u == UINT32_MAX) break;
        done[u] = 1;
        for (uint32_t e = 0; e < r->m; e++) {
            uint32_t w;
            if (!r->eon[e]) continue;
            if (r->from[e] == u)
                w = r->to[e];
            else if (r->both[e] && r->to[e] == u)
                w = r->from[e];
            else
                continue;
            if (r->non[w] && dist[u] + r->cost[e] < dist[w]) dist[w] = dist[u] + r->cost[e];
        }
    }
    free(done);
}

bool graphref_near(double a, double b) {
    return a == b || fabs(a - b) <= 1e-9 * fmax(1, fmax(fabs(a), fabs(b)));
}

bool graphref_walk_ok(const graphref *r, uint32_t start, const pf_graph_path *p) {
    double sum = 0;
    if (p->len == 0 || p->nodes[0] != start || p->end != p->nodes[p->len - 1]) return false;
    for (size_t i = 0; i + 1 < p->len; i++) {
        uint32_t e = p->edges[i], a = p->nodes[i], b = p->nodes[i + 1];
        if (e >= r->m || !r->eon[e] || !r->non[b]) return false;
        if (!((r->from[e] == a && r->to[e] == b) ||
              (r->both[e] && r->to[e] == a && r->from[e] == b)))
            return false;
        sum += r->cost[e];
    }
    return graphref_near(sum, p->cost);
}
