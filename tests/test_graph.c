/* test_graph.c -- waypoint graphs (core/graph.h): Dijkstra and A* against
 * a reference Dijkstra written plainly here (an O(n^2) scan for the
 * cheapest open node over an edge list, no heap, no CSR, sharing no code
 * with core/), on thousands of random graphs: directed, undirected and
 * mixed, disconnected, zero-length and very long edges, duplicate
 * positions, zero costs, disabled nodes and edges; partial answers and
 * max_expanded; PATCHed versions against the reference on the changed
 * edge list; the kd-tree's nearest node against brute force. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "graphref.h"
#include "testutil.h"

static double rnd01(uint64_t *st) { return (double)(tu_rand(st) >> 11) / 9007199254740992.0; }

static void rg_random(uint64_t *st, graphref *r) {
    uint32_t shape = tu_below(st, 6);
    uint32_t n = 1 + tu_below(st, 60);
    int dim = tu_below(st, 2) ? 3 : 2; /* drawn before m, as the graphs always were */
    graphref_alloc(r, n, tu_below(st, 4 * n + 1));
    r->dim = dim;
    for (uint32_t i = 0; i < r->n; i++) {
        r->non[i] = 1;
        for (int k = 0; k < r->dim; k++) {
            double c = shape == 0   ? (double)tu_below(st, 3) /* many duplicate positions */
                       : shape == 1 ? rnd01(st) * 1e7         /* very long edges */
                                    : rnd01(st) * 100;
            r->pos[3 * i + (uint32_t)k] = c;
        }
    }
    for (uint32_t e = 0; e < r->m; e++) {
        uint32_t kind = tu_below(st, 10);
        r->from[e] = tu_below(st, r->n);
        r->to[e] = tu_below(st, 4) == 0 ? r->from[e] : tu_below(st, r->n);
        r->eon[e] = 1;
        r->both[e] = shape == 2 ? 0 : shape == 3 ? 1 : (uint8_t)tu_below(st, 2);
        if (kind == 0)
            r->cost[e] = 0;
        else if (kind == 1)
            r->cost[e] = 1e12 * (1 + rnd01(st)); /* very long */
        else if (kind < 6)
            r->cost[e] = graphref_euclid(r, r->from[e], r->to[e]) * (1 + 2 * rnd01(st));
        else
            r->cost[e] = (shape == 4 ? 0.01 : 1) * (double)tu_below(st, 100);
    }
    /* Within a shape, Euclidean costs only: the heuristic's ratio is >= 1. */
    if (shape == 5)
        for (uint32_t e = 0; e < r->m; e++) r->cost[e] = graphref_euclid(r, r->from[e], r->to[e]);
}

/* A contraction hierarchy on two graphs of three (ch runs as alt on the
 * others), its witness searches cut at 1 node on a quarter of them (many
 * needless shortcuts: still exact); one of those two has hub labels too
 * (ch then reads them; without them it searches). */
static void rg_attach_ch(const graphref *r, pf_graph *g) {
    const bool labels = (r->m + r->n) % 3 == 2;
    pf_graph_ch_limits lim = {0, r->n % 4 == 0 ? 1 : 0, NULL, labels ? (size_t)64 << 20 : 0};
    uint64_t entries;
    size_t bytes;
    if ((r->m + r->n) % 3 == 1) return;
    ck_assert_int_eq(pf_graph_ch_attach(g, &lim), PF_OK);
    ck_assert(pf_graph_ch_ready(g));
    ck_assert(labels == (pf_graph_ch_labels(g, &entries, &bytes) == NULL));
}

static pf_graph *rg_build(const graphref *r) {
    /* 0..8 ALT landmarks, varying with the graph (0: alt runs as astar). */
    pf_graph_spec s = {r->n,    r->dim,  r->pos,   r->m, r->from, r->to,
                       r->cost, r->both, r->m % 9, NULL, NULL};
    pf_graph *g = NULL;
    pf_graph_fault f;
    ck_assert_int_eq(pf_graph_build(&s, &g, &f), PF_OK);
    rg_attach_ch(r, g);
    return g;
}

/* One query of g (r's current state) checked against the reference;
 * returns a description of the mismatch, or NULL. */
static const char *check_query(const graphref *r, const pf_graph *g, pf_graph_ctx *ctx, uint32_t s,
                               uint32_t t, pf_graph_algorithm algo, bool partial) {
    double *dist = malloc(r->n * sizeof(double));
    pf_graph_query q = {s, t, algo, 0, partial, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0};
    pf_graph_path p;
    const char *bad = NULL;
    pf_status st = pf_graph_search(g, ctx, &q, &p);
    if (!r->non[s] || !r->non[t]) {
        bad = st == PF_EBLOCKED ? NULL : "disabled endpoint not refused";
        goto out;
    }
    graphref_dijkstra(r, s, dist);
    if (isfinite(dist[t])) {
        if (st != PF_OK || !p.reached || p.end != t)
            bad = "reachable goal not reached";
        else if (!graphref_walk_ok(r, s, &p))
            bad = "path is not a walk of the graph";
        else if (!graphref_near(p.cost, dist[t]))
            bad = "cost differs from the reference";
        else if (p.expanded == 0 || p.expanded > (algo == PF_GRAPH_CH ? 2 : 1) * r->n)
            bad = "expanded out of range";
        goto out;
    }
    if (st != PF_NO_PATH) {
        bad = "unreachable goal not PF_NO_PATH";
        goto out;
    }
    if (!partial) {
        if (p.len != 0) bad = "a path without partial";
        goto out;
    }
    /* The partial answer ends at a reachable node nearest the goal. */
    {
        double best = INFINITY;
        for (uint32_t v = 0; v < r->n; v++)
            if (isfinite(dist[v]) && graphref_euclid(r, v, t) < best)
                best = graphref_euclid(r, v, t);
        if (p.reached || !graphref_walk_ok(r, s, &p))
            bad = "partial path is not a walk";
        else if (graphref_euclid(r, p.end, t) != best)
            bad = "partial path does not end nearest the goal";
        else if (!graphref_near(p.cost, dist[p.end]))
            bad = "partial path is not the cheapest";
    }
out:
    free(dist);
    return bad;
}

START_TEST(graph_property_random_graphs) {
    uint64_t st = tu_seed("graph_property_random_graphs", 0x67a90001);
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    unsigned queries = 0, reachable = 0, unreachable = 0;
    const char *bad = NULL;
    for (int it = 0; it < 4000 && !bad; it++) {
        graphref r;
        pf_graph *g;
        rg_random(&st, &r);
        g = rg_build(&r);
        for (int k = 0; k < 6 && !bad; k++) {
            uint32_t s = tu_below(&st, r.n), t = tu_below(&st, r.n);
            double *d = malloc(r.n * sizeof(double));
            graphref_dijkstra(&r, s, d);
            if (isfinite(d[t]))
                reachable++;
            else
                unreachable++;
            free(d);
            for (int a = 0; a < PF_GRAPH_ALGORITHMS && !bad; a++) {
                bad = check_query(&r, g, ctx, s, t, (pf_graph_algorithm)a, k & 1);
                queries++;
                if (bad)
                    fprintf(stderr, "graph %d query %u->%u %s: %s\n", it, s, t,
                            pf_graph_algorithm_name((pf_graph_algorithm)a), bad);
            }
        }
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_msg(!bad, "%s", bad);
    ck_assert_uint_gt(reachable, 5000);
    ck_assert_uint_gt(unreachable, 2000);
    ck_assert_uint_gt(queries, 40000);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* PATCHes: costs, edges and nodes changed in random order, each version
 * held against the reference over the same changes; the older version
 * still answers as before. */
START_TEST(graph_patch_random_graphs) {
    uint64_t st = tu_seed("graph_patch_random_graphs", 0x67a90002);
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    const char *bad = NULL;
    unsigned versions = 0;
    for (int it = 0; it < 1500 && !bad; it++) {
        graphref r;
        pf_graph *g;
        rg_random(&st, &r);
        g = rg_build(&r);
        for (int v = 0; v < 4 && !bad; v++) {
            pf_graph_cost_change costs[4];
            pf_graph_toggle edges[4], nodes[4];
            pf_graph_change ch = {costs, 0, edges, nodes, 0, 0};
            pf_graph *next = NULL;
            pf_graph_fault f;
            graphref old = r;
            uint8_t *eon0 = malloc(r.m + 1), *non0 = malloc(r.n);
            double *cost0 = malloc((r.m + 1) * sizeof(double));
            uint32_t s = tu_below(&st, r.n), t = tu_below(&st, r.n);
            memcpy(eon0, r.eon, r.m + 1);
            memcpy(non0, r.non, r.n);
            memcpy(cost0, r.cost, (r.m + 1) * sizeof(double));
            for (int k = 0; k < 4 && r.m; k++) {
                uint32_t e = tu_below(&st, r.m);
                costs[ch.ncosts++] = (pf_graph_cost_change){e, (double)tu_below(&st, 50) * 0.5};
            }
            for (int k = 0; k < 4 && r.m; k++)
                edges[ch.nedges++] = (pf_graph_toggle){tu_below(&st, r.m), tu_below(&st, 3) != 0};
            for (int k = 0; k < 2; k++)
                nodes[ch.nnodes++] = (pf_graph_toggle){tu_below(&st, r.n), tu_below(&st, 3) != 0};
            ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, &f), PF_OK);
            for (size_t k = 0; k < ch.ncosts; k++) r.cost[costs[k].edge] = costs[k].cost;
            for (size_t k = 0; k < ch.nedges; k++) r.eon[edges[k].index] = edges[k].enabled;
            for (size_t k = 0; k < ch.nnodes; k++) r.non[nodes[k].index] = nodes[k].enabled;
            /* The version's own hierarchy, as the server builds it. */
            if (v != 2) rg_attach_ch(&r, next);
            for (int a = 0; a < PF_GRAPH_ALGORITHMS && !bad; a++)
                bad = check_query(&r, next, ctx, s, t, (pf_graph_algorithm)a, true);
            /* The old version is unchanged. */
            old.eon = eon0;
            old.non = non0;
            old.cost = cost0;
            if (!bad) bad = check_query(&old, g, ctx, s, t, PF_GRAPH_ASTAR, true);
            if (!bad) bad = check_query(&old, g, ctx, s, t, PF_GRAPH_CH, false);
            if (!bad) bad = check_query(&r, next, ctx, s, t, PF_GRAPH_CH, false);
            if (bad) fprintf(stderr, "patch graph %d version %d: %s\n", it, v, bad);
            free(eon0);
            free(non0);
            free(cost0);
            pf_graph_release(g);
            g = next;
            versions++;
        }
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_msg(!bad, "%s", bad);
    ck_assert_uint_eq(versions, 6000);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* max_expanded: a search that stops early closed exactly max nodes, and
 * one that answers closed at most max and is optimal. */
START_TEST(graph_max_expanded_random_graphs) {
    uint64_t st = tu_seed("graph_max_expanded_random_graphs", 0x67a90003);
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    unsigned stopped = 0, answered = 0, mismatches = 0;
    for (int it = 0; it < 2000; it++) {
        graphref r;
        pf_graph *g;
        double *d;
        rg_random(&st, &r);
        g = rg_build(&r);
        d = malloc(r.n * sizeof(double));
        for (int k = 0; k < 4; k++) {
            uint32_t s = tu_below(&st, r.n), t = tu_below(&st, r.n);
            pf_graph_query q = {s,
                                t,
                                (pf_graph_algorithm)tu_below(&st, 3),
                                1 + tu_below(&st, 8),
                                true,
                                NULL,
                                NULL,
                                NULL,
                                0,
                                NULL,
                                NULL,
                                0,
                                NULL,
                                0};
            pf_graph_path p;
            pf_status rs = pf_graph_search(g, ctx, &q, &p);
            graphref_dijkstra(&r, s, d);
            if (rs == PF_EBUDGET) {
                stopped++;
                if (p.expanded != q.max_expanded || p.reached || !graphref_walk_ok(&r, s, &p) ||
                    !graphref_near(p.cost, d[p.end]))
                    mismatches++;
            } else if (rs == PF_OK) {
                answered++;
                if (p.expanded > q.max_expanded || !graphref_near(p.cost, d[t])) mismatches++;
            } else if (rs != PF_NO_PATH || isfinite(d[t])) {
                mismatches++;
            }
        }
        free(d);
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_uint_eq(mismatches, 0);
    ck_assert_uint_gt(stopped, 500);
    ck_assert_uint_gt(answered, 500);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* The kd-tree against brute force: the nearest enabled node, the lower
 * index among equals, points inside and outside the graph's box. */
START_TEST(graph_nearest_random_graphs) {
    uint64_t st = tu_seed("graph_nearest_random_graphs", 0x67a90004);
    unsigned mismatches = 0, checked = 0;
    for (int it = 0; it < 3000; it++) {
        graphref r;
        pf_graph *g;
        rg_random(&st, &r);
        g = rg_build(&r);
        /* Some nodes disabled by a PATCH. */
        if (tu_below(&st, 2)) {
            pf_graph_toggle t[8];
            pf_graph_change ch = {NULL, 0, NULL, t, 0, 0};
            pf_graph *next;
            for (int k = 0; k < 8; k++) {
                t[k] = (pf_graph_toggle){tu_below(&st, r.n), false};
                r.non[t[k].index] = 0;
            }
            ch.nnodes = 8;
            ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
            pf_graph_release(g);
            g = next;
        }
        for (int k = 0; k < 20; k++) {
            double p[3] = {0, 0, 0}, best = INFINITY, got;
            uint32_t want = PF_GRAPH_NONE, have;
            for (int a = 0; a < r.dim; a++)
                p[a] = k % 3 == 0 ? r.pos[3 * tu_below(&st, r.n) + (uint32_t)a] /* on a node */
                                  : (rnd01(&st) - 0.25) * 150;
            for (uint32_t v = 0; v < r.n; v++) {
                double d2 = 0;
                if (!r.non[v]) continue;
                for (int a = 0; a < r.dim; a++) {
                    double dd = p[a] - r.pos[3 * v + (uint32_t)a];
                    d2 += dd * dd;
                }
                if (d2 < best) {
                    best = d2;
                    want = v;
                }
            }
            have = pf_graph_nearest(g, p, &got, NULL);
            checked++;
            if (have != want || (want != PF_GRAPH_NONE && got != sqrt(best))) mismatches++;
        }
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_uint_eq(mismatches, 0);
    ck_assert_uint_eq(checked, 60000);
}
END_TEST

/* A large uniform cloud: the kd-tree looks at few nodes (counted, not
 * timed) and agrees with brute force. */
START_TEST(graph_nearest_visits_few) {
    uint64_t st = tu_seed("graph_nearest_visits_few", 0x67a90005);
    const uint32_t n = 20000;
    double *pos = calloc(3 * n, sizeof(double));
    pf_graph_spec s = {n, 2, pos, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL};
    pf_graph *g;
    uint64_t visited_sum = 0;
    unsigned mismatches = 0;
    for (uint32_t i = 0; i < n; i++) {
        pos[3 * i] = rnd01(&st) * 1000;
        pos[3 * i + 1] = rnd01(&st) * 1000;
    }
    ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
    for (int k = 0; k < 200; k++) {
        double p[3] = {rnd01(&st) * 1000, rnd01(&st) * 1000, 0}, best = INFINITY;
        uint32_t want = 0, visited;
        for (uint32_t v = 0; v < n; v++) {
            double dx = p[0] - pos[3 * v], dy = p[1] - pos[3 * v + 1];
            if (dx * dx + dy * dy < best) {
                best = dx * dx + dy * dy;
                want = v;
            }
        }
        if (pf_graph_nearest(g, p, NULL, &visited) != want) mismatches++;
        visited_sum += visited;
    }
    ck_assert_uint_eq(mismatches, 0);
    /* A kd-tree looks at O(log n) nodes on uniform points: far below n. */
    ck_assert_uint_lt(visited_sum / 200, 200);
    pf_graph_release(g);
    free(pos);
}
END_TEST

START_TEST(graph_rejects_bad_input) {
    double pos[6] = {0, 0, 0, 1, 0, 0};
    uint32_t from[2] = {0, 1}, to[2] = {1, 2};
    double cost[2] = {1, 1};
    pf_graph_spec s = {2, 2, pos, 1, from, to, cost, NULL, 0, NULL, NULL};
    pf_graph *g = NULL, *next = NULL;
    pf_graph_fault f;
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    pf_graph_path p;
    pf_graph_query q = {0,    1, PF_GRAPH_ASTAR, 0,    false, NULL, NULL,
                        NULL, 0, NULL,           NULL, 0,     NULL, 0};
    pf_graph_cost_change cc = {0, -1};
    pf_graph_toggle tg = {5, false};
    pf_graph_change ch = {&cc, 1, NULL, NULL, 0, 0};
    s.nedges = 2;
    ck_assert_int_eq(pf_graph_build(&s, &g, &f), PF_EINVAL);
    ck_assert_int_eq(f.what, PF_GRAPH_FAULT_EDGE);
    ck_assert_uint_eq(f.index, 1);
    s.nedges = 1;
    cost[0] = NAN;
    ck_assert_int_eq(pf_graph_build(&s, &g, &f), PF_EINVAL);
    cost[0] = -0.5;
    ck_assert_int_eq(pf_graph_build(&s, &g, &f), PF_EINVAL);
    cost[0] = 1;
    pos[4] = INFINITY;
    ck_assert_int_eq(pf_graph_build(&s, &g, &f), PF_EINVAL);
    ck_assert_int_eq(f.what, PF_GRAPH_FAULT_NODE);
    ck_assert_uint_eq(f.index, 1);
    pos[4] = 0;
    s.nnodes = 0;
    ck_assert_int_eq(pf_graph_build(&s, &g, &f), PF_EINVAL);
    s.nnodes = 2;
    ck_assert_int_eq(pf_graph_build(&s, &g, &f), PF_OK);
    ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, &f), PF_EINVAL);
    ck_assert_int_eq(f.what, PF_GRAPH_FAULT_EDGE);
    ch.ncosts = 0;
    ch.nodes = &tg;
    ch.nnodes = 1;
    ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, &f), PF_EINVAL);
    ck_assert_int_eq(f.what, PF_GRAPH_FAULT_NODE);
    ck_assert_uint_eq(f.index, 5);
    q.goal = 2;
    ck_assert_int_eq(pf_graph_search(g, ctx, &q, &p), PF_ERANGE);
    q.goal = 1;
    q.algorithm = (pf_graph_algorithm)7;
    ck_assert_int_eq(pf_graph_search(g, ctx, &q, &p), PF_EINVAL);
    q.algorithm = PF_GRAPH_DIJKSTRA;
    ck_assert_int_eq(pf_graph_search(g, ctx, &q, &p), PF_OK);
    ck_assert_double_eq(p.cost, 1);
    ck_assert_uint_eq(p.len, 2);
    /* One-way: no way back. */
    q.start = 1;
    q.goal = 0;
    ck_assert_int_eq(pf_graph_search(g, ctx, &q, &p), PF_NO_PATH);
    ck_assert_uint_eq(p.len, 0);
    pf_graph_release(g);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* The heuristic's ratio: the smallest cost/length; 0 with a free edge of
 * positive length; a PATCH that makes an edge cheaper lowers it. */
START_TEST(graph_ratio_measured) {
    double pos[9] = {0, 0, 0, 10, 0, 0, 10, 10, 0};
    uint32_t from[2] = {0, 1}, to[2] = {1, 2};
    double cost[2] = {20, 30};
    pf_graph_spec s = {3, 2, pos, 2, from, to, cost, NULL, 0, NULL, NULL};
    pf_graph *g, *next;
    pf_graph_info info;
    pf_graph_cost_change cc = {1, 5};
    pf_graph_change ch = {&cc, 1, NULL, NULL, 0, 0};
    ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
    pf_graph_get_info(g, &info);
    ck_assert_double_eq_tol(info.ratio, 2.0, 1e-6);
    ck_assert_uint_eq(info.nodes, 3);
    ck_assert_uint_eq(info.arcs, 2);
    ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
    pf_graph_get_info(next, &info);
    ck_assert_double_eq_tol(info.ratio, 0.5, 1e-6);
    pf_graph_release(next);
    cc.cost = 0;
    ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
    pf_graph_get_info(next, &info);
    ck_assert_double_eq(info.ratio, 0);
    pf_graph_release(next);
    pf_graph_release(g);
}
END_TEST

static bool stop_now(void *arg) {
    (*(int *)arg)++;
    return true;
}

/* The stop callback ends a long search: counted calls, not time. */
START_TEST(graph_stop_callback) {
    const uint32_t n = 2000;
    double *pos = calloc(3 * n, sizeof(double));
    uint32_t *from = calloc(n, sizeof(uint32_t)), *to = calloc(n, sizeof(uint32_t));
    double *cost = calloc(n, sizeof(double));
    pf_graph_spec s = {n, 2, pos, n - 1, from, to, cost, NULL, 0, NULL, NULL};
    pf_graph *g;
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    pf_graph_path p;
    int calls = 0;
    pf_graph_query q = {
        0, n - 1, PF_GRAPH_DIJKSTRA, 0, false, stop_now, &calls, NULL, 0, NULL, NULL, 0, NULL, 0};
    for (uint32_t i = 0; i < n; i++) pos[3 * i] = i;
    for (uint32_t i = 0; i + 1 < n; i++) {
        from[i] = i;
        to[i] = i + 1;
        cost[i] = 1;
    }
    ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
    ck_assert_int_eq(pf_graph_search(g, ctx, &q, &p), PF_ECANCELED);
    ck_assert_int_eq(calls, 1);
    ck_assert_uint_eq(p.expanded, 255);
    q.stop = NULL;
    ck_assert_int_eq(pf_graph_search(g, ctx, &q, &p), PF_OK);
    ck_assert_double_eq(p.cost, n - 1);
    pf_graph_release(g);
    pf_graph_ctx_destroy(ctx);
    free(pos);
    free(from);
    free(to);
    free(cost);
}
END_TEST

/* ALT's PATCH rule (graph.h): the bound's factor is the smallest cost /
 * upload cost over the enabled edges, capped at 1; raising costs and
 * toggling edges or nodes leave it at 1, and answers stay the reference's. */
START_TEST(graph_alt_patch_rule) {
    double pos[12] = {0, 0, 0, 10, 0, 0, 10, 10, 0, 0, 10, 0};
    uint32_t from[4] = {0, 1, 2, 3}, to[4] = {1, 2, 3, 0};
    double cost[4] = {20, 30, 10, 40};
    uint8_t both[4] = {1, 1, 1, 1};
    pf_graph_spec s = {4, 2, pos, 4, from, to, cost, both, 2, NULL, NULL};
    pf_graph *g, *next;
    pf_graph_info info;
    pf_graph_cost_change cc = {1, 15};
    pf_graph_toggle tg = {0, false};
    pf_graph_change ch = {&cc, 1, NULL, NULL, 0, 0};
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    pf_graph_query q = {0, 2, PF_GRAPH_ALT, 0, false, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0};
    pf_graph_path p;
    ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
    pf_graph_get_info(g, &info);
    ck_assert_uint_eq(info.landmarks, 2);
    ck_assert_double_eq_tol(info.lm_scale, 1, 1e-9);
    ck_assert_uint_eq(info.components, 1);
    /* Halving edge 1: the factor is 0.5; the answer 20 + 15. */
    ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
    pf_graph_get_info(next, &info);
    ck_assert_double_eq_tol(info.lm_scale, 0.5, 1e-9);
    ck_assert_int_eq(pf_graph_search(next, ctx, &q, &p), PF_OK);
    ck_assert_double_eq_tol(p.cost, 35, 1e-9);
    pf_graph_release(next);
    /* Raising it, or disabling an edge: 1 (the base's bounds hold). */
    cc.cost = 300;
    ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
    pf_graph_get_info(next, &info);
    ck_assert_double_eq_tol(info.lm_scale, 1, 1e-9);
    ck_assert_int_eq(pf_graph_search(next, ctx, &q, &p), PF_OK);
    ck_assert_double_eq_tol(p.cost, 50, 1e-9); /* 0 -> 3 -> 2 */
    pf_graph_release(next);
    ch = (pf_graph_change){NULL, 0, &tg, NULL, 1, 0};
    ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
    pf_graph_get_info(next, &info);
    ck_assert_double_eq_tol(info.lm_scale, 1, 1e-9);
    ck_assert_uint_eq(info.components, 1);
    pf_graph_release(next);
    /* A free edge: 0, and alt is astar's straight line alone. */
    cc.cost = 0;
    ch = (pf_graph_change){&cc, 1, NULL, NULL, 0, 0};
    ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
    pf_graph_get_info(next, &info);
    ck_assert_double_eq(info.lm_scale, 0);
    ck_assert_int_eq(pf_graph_search(next, ctx, &q, &p), PF_OK);
    ck_assert_double_eq_tol(p.cost, 20, 1e-9);
    pf_graph_release(next);
    pf_graph_release(g);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* A w x h grid of two-way edges (cost = length x 1..3), node y * w + x. */
static void grid_graph(uint64_t *st, uint32_t w, uint32_t h, graphref *r) {
    graphref_alloc(r, w * h, 2 * w * h);
    r->m = 0; /* counted as the edges are made */
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t v = y * w + x;
            r->non[v] = 1;
            r->pos[3 * v] = x;
            r->pos[3 * v + 1] = y;
            for (int d = 0; d < 2; d++) {
                uint32_t nx = x + (d == 0), ny = y + (d == 1);
                if (nx >= w || ny >= h) continue;
                r->from[r->m] = v;
                r->to[r->m] = ny * w + nx;
                r->cost[r->m] = 1 + 2 * rnd01(st);
                r->both[r->m] = 1;
                r->eon[r->m++] = 1;
            }
        }
}

/* alt closes fewer nodes than astar on a grid whose costs are up to three
 * times the straight line (counted over 300 pairs, same costs), and its
 * landmarks prove a goal nothing reaches unreachable without a search. */
START_TEST(graph_alt_closes_fewer) {
    uint64_t st = tu_seed("graph_alt_closes_fewer", 0x67a90005);
    graphref r;
    pf_graph *g;
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    uint64_t sum[PF_GRAPH_ALGORITHMS] = {0};
    unsigned mismatches = 0;
    grid_graph(&st, 40, 40, &r);
    {
        pf_graph_spec s = {r.n, 2, r.pos, r.m, r.from, r.to, r.cost, r.both, 8, NULL, NULL};
        ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
    }
    for (int k = 0; k < 300; k++) {
        uint32_t a = tu_below(&st, r.n), b = tu_below(&st, r.n);
        double c[PF_GRAPH_ALGORITHMS];
        for (int al = 0; al < PF_GRAPH_ALGORITHMS; al++) {
            pf_graph_query q = {
                a,    b, (pf_graph_algorithm)al, 0, false, NULL, NULL, NULL, 0, NULL, NULL, 0,
                NULL, 0};
            pf_graph_path p;
            if (pf_graph_search(g, ctx, &q, &p) != PF_OK) mismatches++;
            c[al] = p.cost;
            sum[al] += p.expanded;
        }
        if (!graphref_near(c[0], c[1]) || !graphref_near(c[0], c[2]) || !graphref_near(c[0], c[3]))
            mismatches++;
    }
    ck_assert_uint_eq(mismatches, 0);
    fprintf(stderr, "graph_alt_closes_fewer: closed dijkstra %llu astar %llu alt %llu\n",
            (unsigned long long)sum[0], (unsigned long long)sum[1], (unsigned long long)sum[2]);
    ck_assert_uint_lt(sum[PF_GRAPH_ALT] * 2, sum[PF_GRAPH_ASTAR]);
    pf_graph_release(g);
    /* Node n: a goal with one edge out into the grid and none in. */
    {
        uint32_t n = r.n + 1;
        double *pos = calloc(3 * n, sizeof(double));
        pf_graph_query q = {5,    r.n, PF_GRAPH_ASTAR, 0,    false, NULL, NULL,
                            NULL, 0,   NULL,           NULL, 0,     NULL, 0};
        pf_graph_path p;
        memcpy(pos, r.pos, 3 * r.n * sizeof(double));
        r.from[r.m] = r.n;
        r.to[r.m] = 0;
        r.cost[r.m] = 1;
        r.both[r.m] = 0;
        {
            pf_graph_spec s = {n, 2, pos, r.m + 1, r.from, r.to, r.cost, r.both, 4, NULL, NULL};
            ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
        }
        ck_assert_int_eq(pf_graph_search(g, ctx, &q, &p), PF_NO_PATH);
        ck_assert_uint_eq(p.expanded, r.n);
        q.algorithm = PF_GRAPH_ALT;
        ck_assert_int_eq(pf_graph_search(g, ctx, &q, &p), PF_NO_PATH);
        ck_assert_uint_eq(p.expanded, 0);
        /* A partial answer still searches what the start reaches. */
        q.partial = true;
        ck_assert_int_eq(pf_graph_search(g, ctx, &q, &p), PF_NO_PATH);
        ck_assert_uint_eq(p.expanded, r.n);
        ck_assert_uint_eq(p.end, 0);
        pf_graph_release(g);
        free(pos);
    }
    graphref_free(&r);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* The contraction hierarchy settles far fewer nodes than dijkstra on a 40 x 40
 * grid with costs 1..3 times the length (counted over 300 pairs, costs
 * equal dijkstra's); a shortcut limit of 1 stops the build (PF_ELIMIT, no
 * hierarchy, ch runs as alt and stays exact); max_expanded stops it. */
START_TEST(graph_ch_settles_few) {
    uint64_t st = tu_seed("graph_ch_settles_few", 0x67a9000b);
    graphref r;
    pf_graph *g, *g2;
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    uint64_t sum[PF_GRAPH_ALGORITHMS] = {0};
    unsigned mismatches = 0;
    pf_graph_ch_limits one = {1, 0, NULL, 0};
    grid_graph(&st, 40, 40, &r);
    {
        pf_graph_spec s = {r.n, 2, r.pos, r.m, r.from, r.to, r.cost, r.both, 8, NULL, NULL};
        ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
        ck_assert_int_eq(pf_graph_build(&s, &g2, NULL), PF_OK);
    }
    ck_assert_int_eq(pf_graph_ch_attach(g, NULL), PF_OK);
    ck_assert_uint_gt(pf_graph_ch_shortcuts(g), 0);
    ck_assert_int_eq(pf_graph_ch_attach(g2, &one), PF_ELIMIT);
    ck_assert(!pf_graph_ch_ready(g2));
    for (int k = 0; k < 300; k++) {
        uint32_t a = tu_below(&st, r.n), b = tu_below(&st, r.n);
        double c[PF_GRAPH_ALGORITHMS];
        pf_graph_query q = {a,    b, PF_GRAPH_CH, 0,    false, NULL, NULL,
                            NULL, 0, NULL,        NULL, 0,     NULL, 0};
        pf_graph_path p;
        for (int al = 0; al < PF_GRAPH_ALGORITHMS; al++) {
            q.algorithm = (pf_graph_algorithm)al;
            if (pf_graph_search(g, ctx, &q, &p) != PF_OK || !graphref_walk_ok(&r, a, &p) ||
                p.end != b)
                mismatches++;
            c[al] = p.cost;
            sum[al] += p.expanded;
        }
        if (!graphref_near(c[0], c[1]) || !graphref_near(c[0], c[2]) || !graphref_near(c[0], c[3]))
            mismatches++;
        q.algorithm = PF_GRAPH_CH;
        if (pf_graph_search(g2, ctx, &q, &p) != PF_OK || !graphref_near(p.cost, c[0])) mismatches++;
        if (a != b) {
            q.max_expanded = 1;
            if (pf_graph_search(g, ctx, &q, &p) != PF_EBUDGET || p.expanded != 1) mismatches++;
        }
    }
    ck_assert_uint_eq(mismatches, 0);
    fprintf(stderr,
            "graph_ch_settles_few: settled dijkstra %llu alt %llu ch %llu, %llu shortcuts\n",
            (unsigned long long)sum[PF_GRAPH_DIJKSTRA], (unsigned long long)sum[PF_GRAPH_ALT],
            (unsigned long long)sum[PF_GRAPH_CH], (unsigned long long)pf_graph_ch_shortcuts(g));
    ck_assert_uint_lt(sum[PF_GRAPH_CH] * 3, sum[PF_GRAPH_DIJKSTRA]);
    pf_graph_release(g);
    pf_graph_release(g2);
    graphref_free(&r);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* A stop that says stop at its n-th poll (n 0: never). */
typedef struct nth_stop {
    uint64_t n, calls;
} nth_stop;
static bool stop_at_nth(void *ud) {
    nth_stop *s = ud;
    return s->n && ++s->calls >= s->n;
}

/* The hierarchy's build stops at its build_stop: told to stop at poll N,
 * it returns PF_ECANCELED having polled N times and done at most (N + 1)
 * slices of work, keeps no hierarchy and frees what it made (ASan); the
 * version then answers ch and auto as alt, exact against the reference
 * Dijkstra. The same build never stopped polls and finishes. */
START_TEST(graph_ch_build_stops) {
    uint64_t st = tu_seed("graph_ch_build_stops", 0x67a9001c);
    graphref r;
    pf_graph *g;
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    double *dist;
    nth_stop never = {0, 0};
    pf_build_stop full = pf_build_stop_make(stop_at_nth, &never);
    pf_graph_ch_limits lim = {0, 0, &full, 0};
    uint64_t stops[] = {1, 2, 3, 7};
    unsigned mismatches = 0;
    grid_graph(&st, 48, 48, &r);
    dist = malloc(r.n * sizeof(double));
    {
        pf_graph_spec s = {r.n, 2, r.pos, r.m, r.from, r.to, r.cost, r.both, 4, NULL, NULL};
        ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
    }
    ck_assert_int_eq(pf_graph_ch_attach(g, &lim), PF_OK);
    ck_assert(pf_graph_ch_ready(g));
    ck_assert(!full.stopped);
    fprintf(stderr, "graph_ch_build_stops: a 48 x 48 grid's build: %llu units, %llu polls\n",
            (unsigned long long)full.work, (unsigned long long)full.polls);
    /* Enough work that every stop below falls inside the build. */
    ck_assert_uint_gt(full.polls, 8);
    ck_assert_uint_eq(full.polls, full.work / PF_BUILD_POLL_WORK);
    pf_graph_release(g);
    for (size_t k = 0; k < sizeof(stops) / sizeof(stops[0]); k++) {
        nth_stop ns = {stops[k], 0};
        pf_build_stop b = pf_build_stop_make(stop_at_nth, &ns);
        pf_graph_ch_limits l = {0, 0, &b, 0};
        pf_graph_spec s = {r.n, 2, r.pos, r.m, r.from, r.to, r.cost, r.both, 4, NULL, NULL};
        ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
        ck_assert_int_eq(pf_graph_ch_attach(g, &l), PF_ECANCELED);
        ck_assert(b.stopped);
        ck_assert_uint_eq(b.polls, stops[k]);
        ck_assert_uint_le(b.work, (stops[k] + 1) * PF_BUILD_POLL_WORK);
        ck_assert(!pf_graph_ch_ready(g));
        ck_assert_uint_eq(pf_graph_ch_shortcuts(g), 0);
        for (int i = 0; i < 40; i++) {
            uint32_t a = tu_below(&st, r.n), t = tu_below(&st, r.n);
            pf_graph_query q = {a,    t, PF_GRAPH_CH, 0,    false, NULL, NULL,
                                NULL, 0, NULL,        NULL, 0,     NULL, 0};
            pf_graph_path p;
            graphref_dijkstra(&r, a, dist);
            if (pf_graph_search(g, ctx, &q, &p) != PF_OK || p.end != t ||
                !graphref_walk_ok(&r, a, &p) || !graphref_near(p.cost, dist[t]))
                mismatches++;
        }
        pf_graph_release(g);
    }
    ck_assert_uint_eq(mismatches, 0);
    free(dist);
    graphref_free(&r);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* Hub labels (pf_graph_ch_labels) on a 40 x 40 grid whose edges are
 * one-way at random (a third) and down across its middle, so many goals
 * are unreachable: 2,000 "ch"
 * queries read the labels and equal the reference Dijkstra (cost, a walk
 * of the graph, PF_NO_PATH when it finds none), counting the entries
 * read; with max_expanded the hierarchy searches instead, same costs.
 * Labels past the cap, or a build stopped after the hierarchy was made,
 * leave the hierarchy without labels, still exact. */
START_TEST(graph_ch_labels) {
    uint64_t st = tu_seed("graph_ch_labels", 0x67a9002d);
    graphref r;
    pf_graph *g[3];
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    double *dist;
    nth_stop never = {0, 0}, plain = {0, 0};
    pf_build_stop counted = pf_build_stop_make(stop_at_nth, &never);
    pf_build_stop counted_plain = pf_build_stop_make(stop_at_nth, &plain);
    pf_graph_ch_limits with = {0, 0, &counted, (size_t)64 << 20};
    pf_graph_ch_limits without = {0, 0, &counted_plain, 0};
    pf_graph_ch_limits tiny = {0, 0, NULL, 1000};
    uint64_t entries, read = 0, searched = 0;
    size_t bytes;
    unsigned mismatches = 0, reached = 0, unreachable = 0;
    grid_graph(&st, 40, 40, &r);
    /* One-way: a third at random, and every edge down across row 20, so
     * the bottom half never reaches the top. */
    for (uint32_t e = 0; e < r.m; e++)
        if (tu_below(&st, 3) == 0 || (r.from[e] / 40 == 19 && r.to[e] / 40 == 20)) r.both[e] = 0;
    dist = malloc(r.n * sizeof(double));
    for (int k = 0; k < 3; k++) {
        pf_graph_spec s = {r.n, 2, r.pos, r.m, r.from, r.to, r.cost, r.both, 0, NULL, NULL};
        ck_assert_int_eq(pf_graph_build(&s, &g[k], NULL), PF_OK);
    }
    ck_assert_int_eq(pf_graph_ch_attach(g[0], &with), PF_OK);
    ck_assert_ptr_null(pf_graph_ch_labels(g[0], &entries, &bytes));
    ck_assert_uint_gt(entries, 2 * r.n);
    ck_assert_uint_gt(bytes, entries * 16);
    ck_assert_int_eq(pf_graph_ch_attach(g[1], &tiny), PF_OK);
    ck_assert_str_eq(pf_graph_ch_labels(g[1], &entries, &bytes), "label_cap");
    ck_assert_uint_eq(entries, 0);
    /* The same build without labels polls fewer times: a stop just past
     * those polls falls inside the labels' build. */
    {
        pf_graph *h;
        pf_graph_spec s = {r.n, 2, r.pos, r.m, r.from, r.to, r.cost, r.both, 0, NULL, NULL};
        ck_assert_int_eq(pf_graph_build(&s, &h, NULL), PF_OK);
        ck_assert_int_eq(pf_graph_ch_attach(h, &without), PF_OK);
        pf_graph_release(h);
        ck_assert_uint_gt(counted.polls, counted_plain.polls + 1);
        nth_stop ns = {counted_plain.polls + 1, 0};
        pf_build_stop b = pf_build_stop_make(stop_at_nth, &ns);
        pf_graph_ch_limits l = {0, 0, &b, (size_t)64 << 20};
        ck_assert_int_eq(pf_graph_ch_attach(g[2], &l), PF_OK);
        ck_assert(pf_graph_ch_ready(g[2]) && b.stopped);
        ck_assert_str_eq(pf_graph_ch_labels(g[2], &entries, &bytes), "build_deadline");
    }
    for (int i = 0; i < 2000; i++) {
        uint32_t a = tu_below(&st, r.n), t = tu_below(&st, r.n);
        pf_graph_query q = {a,    t, PF_GRAPH_CH, 0,    false, NULL, NULL,
                            NULL, 0, NULL,        NULL, 0,     NULL, 0};
        pf_graph_path p;
        graphref_dijkstra(&r, a, dist);
        for (int k = 0; k < 4; k++) {
            pf_status want = isfinite(dist[t]) ? PF_OK : PF_NO_PATH;
            q.max_expanded = k == 3 ? 10 * (uint64_t)r.n : 0; /* k 3: the search on g[0] */
            pf_status got = pf_graph_search(g[k == 3 ? 0 : k], ctx, &q, &p);
            if (got != want || p.expanded == 0 || p.expanded > 2 * r.n)
                mismatches++;
            else if (want == PF_OK && (p.end != t || !graphref_walk_ok(&r, a, &p) ||
                                       !graphref_near(p.cost, dist[t])))
                mismatches++;
            if (k == 0) read += p.expanded;
            if (k == 3) searched += p.expanded;
        }
        if (isfinite(dist[t]))
            reached++;
        else
            unreachable++;
    }
    pf_graph_ch_labels(g[0], &entries, &bytes);
    fprintf(stderr,
            "graph_ch_labels: 40 x 40 grid, a third one-way and a one-way middle: %llu entries "
            "(%.1f a node each "
            "way, %zu bytes); %u reached, %u unreachable; label entries read %llu, the "
            "hierarchy's search settled %llu\n",
            (unsigned long long)entries, (double)entries / 2 / r.n, bytes, reached, unreachable,
            (unsigned long long)read, (unsigned long long)searched);
    ck_assert_uint_eq(mismatches, 0);
    ck_assert_uint_gt(reached, 300);
    ck_assert_uint_gt(unreachable, 300);
    for (int k = 0; k < 3; k++) pf_graph_release(g[k]);
    free(dist);
    graphref_free(&r);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* Several goals: the cheapest goal reached (the reference's least
 * distance over the enabled goals), a walk of that cost ending at a goal
 * at that distance; none reachable: PF_NO_PATH, or with partial the
 * reachable node nearest any goal. Every algorithm, PATCHed versions too. */
START_TEST(graph_goals_random_graphs) {
    uint64_t st = tu_seed("graph_goals_random_graphs", 0x67a90006);
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    unsigned mismatches = 0, found = 0, none = 0;
    for (int it = 0; it < 2000; it++) {
        graphref r;
        pf_graph *g, *next = NULL;
        double *d;
        rg_random(&st, &r);
        g = rg_build(&r);
        /* Half the graphs: a PATCH disabling a node and an edge. */
        if (it & 1) {
            pf_graph_toggle nt = {tu_below(&st, r.n), false}, et = {0, false};
            pf_graph_change ch = {NULL, 0, &et, &nt, r.m ? 1 : 0, 1};
            if (r.m) et.index = tu_below(&st, r.m);
            ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
            pf_graph_release(g);
            g = next;
            r.non[nt.index] = 0;
            if (r.m) r.eon[et.index] = 0;
        }
        d = malloc(r.n * sizeof(double));
        for (int k = 0; k < 4; k++) {
            uint32_t s = tu_below(&st, r.n), goals[40];
            size_t ng = 1 + tu_below(&st, k == 3 ? 40 : 6);
            double best = INFINITY;
            if (!r.non[s]) continue;
            for (size_t i = 0; i < ng; i++) goals[i] = tu_below(&st, r.n);
            graphref_dijkstra(&r, s, d);
            for (size_t i = 0; i < ng; i++)
                if (r.non[goals[i]] && d[goals[i]] < best) best = d[goals[i]];
            for (int al = 0; al < PF_GRAPH_ALGORITHMS; al++) {
                bool partial = tu_below(&st, 2);
                pf_graph_query q = {s,    0,       (pf_graph_algorithm)al,
                                    0,    partial, NULL,
                                    NULL, goals,   ng,
                                    NULL, NULL,    0,
                                    NULL, 0};
                pf_graph_path p;
                pf_status rs = pf_graph_search(g, ctx, &q, &p);
                if (isfinite(best)) {
                    bool is_goal = false;
                    for (size_t i = 0; i < ng; i++) is_goal |= goals[i] == p.end;
                    if (rs != PF_OK || !p.reached || !is_goal || !graphref_walk_ok(&r, s, &p) ||
                        !graphref_near(p.cost, best) || !graphref_near(d[p.end], best)) {
                        fprintf(stderr,
                                "goals: graph %d %s rs %d cost %g best %g goal %d walk %d d %g end "
                                "%u ng %zu\n",
                                it, pf_graph_algorithm_name((pf_graph_algorithm)al), (int)rs,
                                p.cost, best, is_goal, graphref_walk_ok(&r, s, &p), d[p.end], p.end,
                                ng);
                        mismatches++;
                    }
                    found++;
                } else {
                    none++;
                    if (rs != PF_NO_PATH) {
                        mismatches++;
                    } else if (partial) {
                        double near = INFINITY, got = INFINITY;
                        for (uint32_t v = 0; v < r.n; v++)
                            for (size_t i = 0; i < ng; i++) {
                                double e = graphref_euclid(&r, v, goals[i]);
                                if (!r.non[goals[i]]) continue;
                                if (isfinite(d[v]) && e < near) near = e;
                                if (v == p.end && e < got) got = e;
                            }
                        if (isfinite(near) &&
                            (p.len == 0 || !graphref_walk_ok(&r, s, &p) || got != near)) {
                            fprintf(stderr, "goals: graph %d partial %s len %zu got %g near %g\n",
                                    it, pf_graph_algorithm_name((pf_graph_algorithm)al), p.len, got,
                                    near);
                            mismatches++;
                        }
                    } else if (p.len != 0) {
                        mismatches++;
                    }
                }
            }
        }
        free(d);
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_uint_eq(mismatches, 0);
    ck_assert_uint_gt(found, 5000);
    ck_assert_uint_gt(none, 1000);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* Table rows: every (source, target) cost against the reference, each
 * finite one's path a walk of that cost; the searches close no more nodes
 * than there are, and none for a source whose targets are all in other
 * components; a budget stops a row (PF_EBUDGET). */
START_TEST(graph_rows_random_graphs) {
    uint64_t st = tu_seed("graph_rows_random_graphs", 0x67a90007);
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    unsigned mismatches = 0, finite = 0, infinite = 0, skipped = 0, budget = 0;
    for (int it = 0; it < 2000; it++) {
        graphref r;
        pf_graph *g;
        double *d, costs[12];
        uint32_t targets[12];
        size_t nt;
        rg_random(&st, &r);
        g = rg_build(&r);
        d = malloc(r.n * sizeof(double));
        nt = 1 + tu_below(&st, 12);
        for (size_t j = 0; j < nt; j++) targets[j] = tu_below(&st, r.n);
        for (int k = 0; k < 3; k++) {
            pf_graph_row q = {tu_below(&st, r.n), targets, nt, 0, NULL, NULL, 0};
            uint64_t expanded;
            bool any_same = false;
            pf_status rs = pf_graph_row_run(g, ctx, &q, costs, &expanded);
            graphref_dijkstra(&r, q.source, d);
            if (rs != PF_OK || expanded > r.n) {
                mismatches++;
                continue;
            }
            for (size_t j = 0; j < nt; j++) {
                pf_graph_path p;
                any_same |= pf_graph_component(g, targets[j]) == pf_graph_component(g, q.source);
                if (!graphref_near(costs[j], d[targets[j]]) &&
                    !(isinf(costs[j]) && isinf(d[targets[j]]))) {
                    mismatches++;
                    continue;
                }
                if (isinf(costs[j])) {
                    infinite++;
                    continue;
                }
                finite++;
                if (pf_graph_row_path(ctx, targets[j], &p) != PF_OK || p.end != targets[j] ||
                    !graphref_walk_ok(&r, q.source, &p) || !graphref_near(p.cost, costs[j]))
                    mismatches++;
            }
            if (!any_same) {
                skipped++;
                if (expanded != 0) mismatches++;
            }
            /* The row stops once its targets are closed: the source as
             * its only target closes one node. */
            if (r.non[q.source]) {
                pf_graph_row self = {q.source, &q.source, 1, 0, NULL, NULL, 0};
                double c0;
                if (pf_graph_row_run(g, ctx, &self, &c0, &expanded) != PF_OK || expanded != 1 ||
                    c0 != 0)
                    mismatches++;
            }
            /* A budget of 1: a row with a target other than the source
             * to reach stops. */
            q.max_expanded = 1;
            rs = pf_graph_row_run(g, ctx, &q, costs, &expanded);
            if (rs == PF_EBUDGET) {
                budget++;
                if (expanded != 1) mismatches++;
            } else if (rs != PF_OK) {
                mismatches++;
            }
        }
        free(d);
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_uint_eq(mismatches, 0);
    ck_assert_uint_gt(finite, 5000);
    ck_assert_uint_gt(infinite, 2000);
    ck_assert_uint_gt(skipped, 100);
    ck_assert_uint_gt(budget, 500);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* Distance from p to the segment ab, written apart from core's projection:
 * the nearer endpoint when the foot of the perpendicular falls outside,
 * else the height of the triangle (twice its area over |ab|, by Heron's
 * lengths). */
static double seg_dist(const double *p, const double *a, const double *b) {
    double ab = 0, ap = 0, bp = 0, s, area2;
    for (int k = 0; k < 3; k++) {
        ab += (b[k] - a[k]) * (b[k] - a[k]);
        ap += (p[k] - a[k]) * (p[k] - a[k]);
        bp += (p[k] - b[k]) * (p[k] - b[k]);
    }
    if (ab == 0 || bp >= ap + ab) return sqrt(ap); /* foot before a (or a point) */
    if (ap >= bp + ab) return sqrt(bp);            /* foot past b */
    ab = sqrt(ab);
    ap = sqrt(ap);
    bp = sqrt(bp);
    s = (ab + ap + bp) / 2;
    area2 = s * (s - ab) * (s - ap) * (s - bp);
    return area2 > 0 ? 2 * sqrt(area2) / ab : 0;
}

/* Edge snapping: the nearest enabled edge against a scan with the formula
 * above, and searches leaving from both ends of a start edge and arriving
 * by both ends of a goal edge (each at its part of the edge's cost)
 * against the reference's distances from each start node. */
START_TEST(graph_edge_snap_random_graphs) {
    uint64_t st = tu_seed("graph_edge_snap_random_graphs", 0x67a90008);
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    unsigned mismatches = 0, snaps = 0, found = 0, none = 0;
    for (int it = 0; it < 2000; it++) {
        graphref r;
        pf_graph *g, *next = NULL;
        double *d0 = NULL, *d1 = NULL;
        rg_random(&st, &r);
        g = rg_build(&r);
        if (r.m && (it & 1)) {
            pf_graph_toggle et = {tu_below(&st, r.m), false}, nt = {tu_below(&st, r.n), false};
            pf_graph_change ch = {NULL, 0, &et, &nt, 1, 1};
            ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
            pf_graph_release(g);
            g = next;
            r.eon[et.index] = 0;
            r.non[nt.index] = 0;
        }
        d0 = malloc(r.n * sizeof(double));
        d1 = malloc(r.n * sizeof(double));
        for (int k = 0; k < 4; k++) {
            double p[3] = {rnd01(&st) * 120 - 10, rnd01(&st) * 120 - 10, 0}, at, dist;
            double want = INFINITY;
            uint32_t e, se, ge;
            double sat, gat;
            if (r.dim == 3) p[2] = rnd01(&st) * 100;
            for (uint32_t x = 0; x < r.m; x++)
                if (r.eon[x] && r.non[r.from[x]] && r.non[r.to[x]]) {
                    double dd = seg_dist(p, r.pos + 3 * r.from[x], r.pos + 3 * r.to[x]);
                    if (dd < want) want = dd;
                }
            e = pf_graph_nearest_edge(g, p, &at, &dist);
            snaps++;
            if (!isfinite(want)) {
                mismatches += e != PF_GRAPH_NONE;
                continue;
            }
            if (e == PF_GRAPH_NONE || fabs(dist - want) > 1e-6 * fmax(1, want) ||
                fabs(seg_dist(p, r.pos + 3 * r.from[e], r.pos + 3 * r.to[e]) - want) >
                    1e-6 * fmax(1, want) ||
                at < 0 || at > 1) {
                mismatches++;
                continue;
            }
            /* A search from this edge's point to another random edge's. */
            se = e;
            sat = at;
            ge = tu_below(&st, r.m);
            gat = rnd01(&st);
            if (!r.eon[ge] || !r.non[r.from[ge]] || !r.non[r.to[ge]]) continue;
            {
                uint32_t sn[2], gn[2];
                double sc[2], gc[2], best = INFINITY;
                size_t ns = 0, ng = 0;
                double cs = r.cost[se], cg = r.cost[ge];
                sn[ns] = r.to[se];
                sc[ns++] = cs - sat * cs;
                if (r.both[se]) {
                    sn[ns] = r.from[se];
                    sc[ns++] = sat * cs;
                }
                gn[ng] = r.from[ge];
                gc[ng++] = gat * cg;
                if (r.both[ge]) {
                    gn[ng] = r.to[ge];
                    gc[ng++] = cg - gat * cg;
                }
                graphref_dijkstra(&r, sn[0], d0);
                if (ns > 1) graphref_dijkstra(&r, sn[1], d1);
                for (size_t a = 0; a < ns; a++)
                    for (size_t b = 0; b < ng; b++) {
                        double v = sc[a] + (a ? d1 : d0)[gn[b]] + gc[b];
                        if (v < best) best = v;
                    }
                for (int al = 0; al < PF_GRAPH_ALGORITHMS; al++) {
                    pf_graph_query q = {
                        0,  0, (pf_graph_algorithm)al, 0, false, NULL, NULL, gn, ng, sn, sc, ns,
                        gc, 0};
                    pf_graph_path pp;
                    pf_status rs = pf_graph_search(g, ctx, &q, &pp);
                    if (!isfinite(best)) {
                        none++;
                        mismatches += rs != PF_NO_PATH;
                        continue;
                    }
                    found++;
                    if (rs != PF_OK || !graphref_near(pp.cost, best)) {
                        fprintf(stderr, "edge snap: graph %d %s rs %d cost %g want %g\n", it,
                                pf_graph_algorithm_name((pf_graph_algorithm)al), (int)rs, pp.cost,
                                best);
                        mismatches++;
                        continue;
                    }
                    /* The path: a walk from one of the starts to one of the
                     * goals whose costs with theirs add up. */
                    {
                        double sum = 0, s0 = INFINITY, g0 = INFINITY;
                        bool walk = pp.len > 0;
                        for (size_t a = 0; a < ns; a++)
                            if (sn[a] == pp.nodes[0] && sc[a] < s0) s0 = sc[a];
                        for (size_t b = 0; b < ng; b++)
                            if (gn[b] == pp.end && gc[b] < g0) g0 = gc[b];
                        for (size_t x = 0; walk && x + 1 < pp.len; x++) {
                            uint32_t ed = pp.edges[x];
                            walk = r.eon[ed] &&
                                   ((r.from[ed] == pp.nodes[x] && r.to[ed] == pp.nodes[x + 1]) ||
                                    (r.both[ed] && r.to[ed] == pp.nodes[x] &&
                                     r.from[ed] == pp.nodes[x + 1]));
                            sum += walk ? r.cost[ed] : 0;
                        }
                        if (!walk || !graphref_near(s0 + sum + g0, pp.cost)) mismatches++;
                    }
                }
            }
        }
        free(d0);
        free(d1);
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_uint_eq(mismatches, 0);
    ck_assert_uint_gt(snaps, 7000);
    ck_assert_uint_gt(found, 3000);
    ck_assert_uint_gt(none, 300);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

/* Distance from p to the segment ab by the cross product (well
 * conditioned for points on the segment, where Heron's is not): the
 * nearer endpoint when the foot falls outside, else |ab x ap| / |ab|. */
static double seg_dist_cross(const double *p, const double *a, const double *b) {
    double ab[3], ap[3], bp[3], l2 = 0, dot = 0, dotb = 0, c[3], c2;
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ap[k] = p[k] - a[k];
        bp[k] = p[k] - b[k];
        l2 += ab[k] * ab[k];
        dot += ab[k] * ap[k];
        dotb += ab[k] * bp[k];
    }
    if (l2 == 0 || dot <= 0) return sqrt(ap[0] * ap[0] + ap[1] * ap[1] + ap[2] * ap[2]);
    if (dotb >= 0) return sqrt(bp[0] * bp[0] + bp[1] * bp[1] + bp[2] * bp[2]);
    c[0] = ab[1] * ap[2] - ab[2] * ap[1];
    c[1] = ab[2] * ap[0] - ab[0] * ap[2];
    c[2] = ab[0] * ap[1] - ab[1] * ap[0];
    c2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    return sqrt(c2 / l2);
}

/* The edge index (core/graph_edge_index.c) against a brute-force scan
 * with the cross-product formula above, on graphs big enough for a deep tree:
 * 200..3,000 segments scattered in 2D or 3D (short ones, long ones that
 * cross many boxes, some zero-length, some sharing nodes), a fifth of the
 * edges or nodes disabled by a PATCH in half of them; points random, on
 * nodes, on edge midpoints (ties between edges) and far outside. The
 * index's distance equals the scan's least distance, and its edge is at
 * that distance and enabled between enabled nodes. */
START_TEST(graph_edge_index_random_graphs) {
    uint64_t st = tu_seed("graph_edge_index_random_graphs", 0x67a9000a);
    unsigned mismatches = 0, checked = 0, nonefound = 0;
    for (int it = 0; it < 400; it++) {
        graphref r;
        pf_graph *g;
        uint32_t shape = tu_below(&st, 3);
        uint32_t n = 2 + tu_below(&st, 1500);
        graphref_alloc(&r, n, n / 2 + tu_below(&st, 2 * n));
        r.dim = tu_below(&st, 2) ? 3 : 2;
        for (uint32_t i = 0; i < r.n; i++) {
            r.non[i] = 1;
            for (int k = 0; k < r.dim; k++)
                r.pos[3 * i + (uint32_t)k] =
                    shape == 0 ? (double)tu_below(&st, 20) : rnd01(&st) * 1000 - 500;
        }
        for (uint32_t e = 0; e < r.m; e++) {
            r.from[e] = tu_below(&st, r.n);
            /* Short edges between index-near nodes, else anywhere (long). */
            r.to[e] = tu_below(&st, 8) == 0 ? r.from[e]
                      : shape == 2 || tu_below(&st, 4) == 0
                          ? tu_below(&st, r.n)
                          : (r.from[e] + 1 + tu_below(&st, 3)) % r.n;
            r.eon[e] = 1;
            r.both[e] = (uint8_t)tu_below(&st, 2);
            r.cost[e] = 1;
        }
        if (shape == 1) /* Short edges: each node near its index neighbours. */
            for (uint32_t i = 1; i < r.n; i++)
                for (int k = 0; k < r.dim; k++)
                    r.pos[3 * i + (uint32_t)k] =
                        r.pos[3 * (i - 1) + (uint32_t)k] + rnd01(&st) * 10 - 5;
        g = rg_build(&r);
        if (it & 1) {
            uint32_t ne = r.m / 5, nn = r.n / 5;
            pf_graph_toggle *et = calloc(ne + 1, sizeof(*et)), *nt = calloc(nn + 1, sizeof(*nt));
            pf_graph_change ch = {NULL, 0, et, nt, ne, nn};
            pf_graph *next;
            for (uint32_t k = 0; k < ne; k++) {
                et[k] = (pf_graph_toggle){tu_below(&st, r.m), false};
                r.eon[et[k].index] = 0;
            }
            for (uint32_t k = 0; k < nn; k++) {
                nt[k] = (pf_graph_toggle){tu_below(&st, r.n), false};
                r.non[nt[k].index] = 0;
            }
            ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
            pf_graph_release(g);
            g = next;
            free(et);
            free(nt);
        }
        for (int k = 0; k < 60; k++) {
            double p[3] = {0, 0, 0}, want = INFINITY, at, dist;
            uint32_t e, kind = tu_below(&st, 4);
            for (int a = 0; a < r.dim; a++) {
                uint32_t x = tu_below(&st, r.m), v = tu_below(&st, r.n);
                double c = rnd01(&st) * 1200 - 600;
                if (kind == 1) c = r.pos[3 * v + (uint32_t)a];
                if (kind == 2)
                    c = (r.pos[3 * r.from[x] + (uint32_t)a] + r.pos[3 * r.to[x] + (uint32_t)a]) / 2;
                if (kind == 3) c = rnd01(&st) * 1e6;
                p[a] = c;
            }
            for (uint32_t x = 0; x < r.m; x++)
                if (r.eon[x] && r.non[r.from[x]] && r.non[r.to[x]]) {
                    double dd = seg_dist_cross(p, r.pos + 3 * r.from[x], r.pos + 3 * r.to[x]);
                    if (dd < want) want = dd;
                }
            e = pf_graph_nearest_edge(g, p, &at, &dist);
            checked++;
            if (!isfinite(want)) {
                nonefound++;
                mismatches += e != PF_GRAPH_NONE;
                continue;
            }
            if (e == PF_GRAPH_NONE || e >= r.m || !r.eon[e] || !r.non[r.from[e]] ||
                !r.non[r.to[e]] ||
                fabs(dist - want) > 1e-9 * fmax(1, fabs(p[0]) + fabs(p[1]) + fabs(p[2])) ||
                fabs(seg_dist_cross(p, r.pos + 3 * r.from[e], r.pos + 3 * r.to[e]) - want) >
                    1e-9 * fmax(1, fabs(p[0]) + fabs(p[1]) + fabs(p[2])) ||
                at < 0 || at > 1) {
                if (mismatches < 5)
                    fprintf(stderr, "edge index: graph %d point %d edge %u dist %.17g want %.17g\n",
                            it, k, e, dist, want);
                mismatches++;
            }
        }
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_uint_eq(mismatches, 0);
    ck_assert_uint_eq(checked, 24000);
    ck_assert_uint_lt(nonefound, 100);
}
END_TEST

/* Tag filters: random tag bits on nodes and edges and a random mask; the
 * reference searches the graph with the tagged edges and nodes (but the
 * start) disabled. */
START_TEST(graph_tag_filter_random_graphs) {
    uint64_t st = tu_seed("graph_tag_filter_random_graphs", 0x67a90009);
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    unsigned mismatches = 0, reached = 0, cut = 0, row_mismatches = 0, row_checked = 0;
    for (int it = 0; it < 1500; it++) {
        graphref r, f;
        pf_graph *g;
        uint64_t *nt, *et;
        double *d = NULL;
        rg_random(&st, &r);
        nt = calloc(r.n, sizeof(uint64_t));
        et = calloc(r.m + 1, sizeof(uint64_t));
        for (uint32_t v = 0; v < r.n; v++)
            if (tu_below(&st, 5) == 0) nt[v] = UINT64_C(1) << tu_below(&st, 64);
        for (uint32_t e = 0; e < r.m; e++)
            if (tu_below(&st, 4) == 0) et[e] = UINT64_C(1) << tu_below(&st, 3);
        {
            pf_graph_spec sp = {r.n,    r.dim,  r.pos,   r.m, r.from, r.to,
                                r.cost, r.both, r.m % 5, nt,  et};
            ck_assert_int_eq(pf_graph_build(&sp, &g, NULL), PF_OK);
        }
        d = malloc(r.n * sizeof(double));
        for (int k = 0; k < 4; k++) {
            uint32_t s = tu_below(&st, r.n), t = tu_below(&st, r.n);
            uint64_t mask = (UINT64_C(1) << tu_below(&st, 3)) | (k == 3 ? nt[t] : 0);
            f = r;
            f.eon = malloc(r.m + 1);
            f.non = malloc(r.n);
            for (uint32_t e = 0; e < r.m; e++) f.eon[e] = r.eon[e] && !(et[e] & mask);
            for (uint32_t v = 0; v < r.n; v++) f.non[v] = r.non[v] && (v == s || !(nt[v] & mask));
            graphref_dijkstra(&f, s, d);
            for (int al = 0; al < PF_GRAPH_ALGORITHMS; al++) {
                pf_graph_query q = {
                    s,    t,   (pf_graph_algorithm)al, 0, false, NULL, NULL, NULL, 0, NULL, NULL, 0,
                    NULL, mask};
                pf_graph_path p;
                pf_status rs = pf_graph_search(g, ctx, &q, &p);
                if (isfinite(d[t]) && (t == s || !(nt[t] & mask))) {
                    reached++;
                    if (rs != PF_OK || !graphref_near(p.cost, d[t]) || !graphref_walk_ok(&f, s, &p))
                        mismatches++;
                } else {
                    cut++;
                    if (rs != PF_NO_PATH) mismatches++;
                }
            }
            /* A table row from s to every node under the same filter. */
            {
                uint32_t *all = malloc(r.n * sizeof(uint32_t));
                double *rc = malloc(r.n * sizeof(double));
                pf_graph_row row = {s, all, r.n, 0, NULL, NULL, mask};
                uint64_t ex;
                for (uint32_t v = 0; v < r.n; v++) all[v] = v;
                if (pf_graph_row_run(g, ctx, &row, rc, &ex) != (r.non[s] ? PF_OK : PF_EBLOCKED))
                    mismatches++;
                for (uint32_t v = 0; r.non[s] && v < r.n; v++) {
                    bool want = isfinite(d[v]) && (v == s || !(nt[v] & mask));
                    if (want != isfinite(rc[v]) || (want && !graphref_near(rc[v], d[v])))
                        row_mismatches++;
                    row_checked++;
                }
                free(all);
                free(rc);
            }
            free(f.eon);
            free(f.non);
        }
        free(d);
        free(nt);
        free(et);
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_uint_eq(mismatches, 0);
    ck_assert_uint_eq(row_mismatches, 0);
    ck_assert_uint_gt(row_checked, 20000);
    ck_assert_uint_gt(reached, 3000);
    ck_assert_uint_gt(cut, 3000);
    pf_graph_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(graph) {
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, graph_rejects_bad_input);
    tcase_add_test(tc, graph_ratio_measured);
    tcase_add_test(tc, graph_stop_callback);
    tcase_add_test(tc, graph_nearest_visits_few);
    tcase_add_test(tc, graph_alt_patch_rule);
    tcase_add_test(tc, graph_alt_closes_fewer);
    tcase_add_test(tc, graph_ch_settles_few);
    tcase_add_test(tc, graph_ch_build_stops);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("property");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, graph_property_random_graphs);
    tcase_add_test(slow, graph_ch_labels);
    tcase_add_test(slow, graph_patch_random_graphs);
    tcase_add_test(slow, graph_max_expanded_random_graphs);
    tcase_add_test(slow, graph_nearest_random_graphs);
    tcase_add_test(slow, graph_goals_random_graphs);
    tcase_add_test(slow, graph_rows_random_graphs);
    tcase_add_test(slow, graph_edge_snap_random_graphs);
    tcase_add_test(slow, graph_edge_index_random_graphs);
    tcase_add_test(slow, graph_tag_filter_random_graphs);
    suite_add_tcase(s, slow);
    return s;
}
