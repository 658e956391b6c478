/* bench-graph-sessions.c -- graph sessions' repair against a fresh search
 * (issues 28 and 29), in-process:
 *
 *   make bench-graph-sessions     (builds build/bench-graph-sessions, runs it)
 *
 * Two graphs: the 5,000-node game graph of scripts/bench-graph.c (random
 * points of a 1000 x 1000 level, each joined two-way to its 6 nearest,
 * cost = length x [1, 1.5]) and a 1024 x 1024 open grid converted
 * (1,048,576 nodes, 8-connected, diagonals sqrt 2). On each, chases: a
 * session (core/graph_dstar.h, auto orientation) between random nodes; at
 * every tick the agent takes the first step of its path, every 4th tick
 * the goal moves to a neighbour, every 10th tick a PATCH changes the cost
 * of 8 random edges and disables 2 (a new version). Each tick's plan is
 * the repair; the fresh search is A* (core/graph.h, what a path query
 * runs) from the same agent to the same goal on the same version, whose
 * cost must be the same. Per tick kind: expansions p50/p99 and CPU time
 * p50/p99 of both, and the ratio of their sums.
 *
 * BENCH_GS_TICKS_SMALL (4000) and BENCH_GS_TICKS_BIG (300) set the ticks;
 * BENCH_GS_ROOT (auto, goal, agent) the sessions' orientation.
 * Times are this thread's CPU time (CLOCK_THREAD_CPUTIME_ID: the machine is
 * shared and loaded), for comparing side by side in one run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_graph_common.h"
#include "graph.h"
#include "graph_dstar.h"

/* Samples of one tick kind. */
typedef struct series {
    double *rexp, *rus, *fexp, *fus;
    size_t n, cap;
} series;

static void add(series *s, double rexp, double rus, double fexp, double fus) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->rexp = realloc(s->rexp, s->cap * sizeof(double));
        s->rus = realloc(s->rus, s->cap * sizeof(double));
        s->fexp = realloc(s->fexp, s->cap * sizeof(double));
        s->fus = realloc(s->fus, s->cap * sizeof(double));
        if (!s->rexp || !s->rus || !s->fexp || !s->fus) exit(1);
    }
    s->rexp[s->n] = rexp, s->rus[s->n] = rus, s->fexp[s->n] = fexp, s->fus[s->n] = fus;
    s->n++;
}

static void report(const char *graph, const char *kind, series *s) {
    double sr = 0, sf = 0, tr = 0, tf = 0;
    for (size_t i = 0; i < s->n; i++)
        sr += s->rexp[i], sf += s->fexp[i], tr += s->rus[i], tf += s->fus[i];
    printf("%-16s %-12s %6zu plans | repair expanded p50 %8.0f p99 %8.0f, cpu p50 %8.1f us p99 "
           "%9.1f us | fresh A* expanded p50 %8.0f p99 %8.0f, cpu p50 %8.1f us p99 %9.1f us | "
           "sum ratio fresh/repair: expanded %.1fx, cpu %.1fx\n",
           graph, kind, s->n, pct(s->rexp, s->n, 0.5), pct(s->rexp, s->n, 0.99),
           pct(s->rus, s->n, 0.5), pct(s->rus, s->n, 0.99), pct(s->fexp, s->n, 0.5),
           pct(s->fexp, s->n, 0.99), pct(s->fus, s->n, 0.5), pct(s->fus, s->n, 0.99),
           sr > 0 ? sf / sr : INFINITY, tr > 0 ? tf / tr : INFINITY);
}

/* A neighbour of v over its enabled edges (by scanning the edges of a
 * small index built once), or v. */
typedef struct adj {
    uint32_t *off, *to;
} adj;

static adj adj_build(const pf_graph *g) {
    pf_graph_info gi;
    adj a;
    uint32_t *fill;
    pf_graph_get_info(g, &gi);
    a.off = calloc((size_t)gi.nodes + 1, sizeof(uint32_t));
    a.to = malloc(((size_t)gi.edges * 2 + 1) * sizeof(uint32_t));
    fill = calloc((size_t)gi.nodes + 1, sizeof(uint32_t));
    for (uint32_t e = 0; e < gi.edges; e++) {
        uint32_t f, t;
        double c;
        bool both, on;
        pf_graph_edge(g, e, &f, &t, &c, &both, &on);
        a.off[f + 1]++, a.off[t + 1]++;
    }
    for (uint32_t v = 0; v < gi.nodes; v++) a.off[v + 1] += a.off[v];
    for (uint32_t e = 0; e < gi.edges; e++) {
        uint32_t f, t;
        double c;
        bool both, on;
        pf_graph_edge(g, e, &f, &t, &c, &both, &on);
        a.to[a.off[f] + fill[f]++] = t;
        a.to[a.off[t] + fill[t]++] = f;
    }
    free(fill);
    return a;
}

static uint32_t neighbour(const adj *a, uint32_t v) {
    uint32_t d = a->off[v + 1] - a->off[v];
    return d ? a->to[a->off[v] + below(d)] : v;
}

/* BENCH_GS_ROOT: auto (default), goal or agent (graph_dstar.h). */
static pf_graph_dstar_root root_mode(void) {
    const char *v = getenv("BENCH_GS_ROOT");
    if (v && strcmp(v, "goal") == 0) return PF_GRAPH_DSTAR_ROOT_GOAL;
    if (v && strcmp(v, "agent") == 0) return PF_GRAPH_DSTAR_ROOT_AGENT;
    return PF_GRAPH_DSTAR_ROOT_AUTO;
}

/* Chases on g: `chases` sessions of `ticks` ticks together. */
static void chase(const char *name, pf_graph *g, size_t ticks, size_t chases) {
    pf_graph_info gi;
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    series agent = {0}, goal = {0}, patch = {0}, first = {0};
    adj a = adj_build(g);
    size_t mismatches = 0, plans = 0;
    pf_graph_get_info(g, &gi);
    pf_graph_retain(g);
    for (size_t c = 0; c < chases; c++) {
        pf_graph_dstar *d;
        pf_graph *cur = g;
        pf_graph_path p, fp;
        pf_graph_retain(cur);
        if (pf_graph_dstar_create(cur, below(gi.nodes), below(gi.nodes), root_mode(), &d)) exit(1);
        for (size_t t = 0; t <= ticks / chases; t++) {
            series *s = &first;
            double t0, rus, fus;
            pf_status rs, fs;
            if (t > 0) {
                s = &agent;
                if (t % 4 == 0) {
                    pf_graph_dstar_set_goal(d, neighbour(&a, pf_graph_dstar_goal(d)));
                    s = &goal;
                }
                if (t % 10 == 0) {
                    pf_graph_cost_change cc[8];
                    pf_graph_toggle off[2];
                    pf_graph_change ch = {cc, 8, off, NULL, 2, 0};
                    pf_graph *next;
                    for (int i = 0; i < 8; i++)
                        cc[i].edge = below(gi.edges), cc[i].cost = 1000 * (1 + 3 * unit());
                    for (int i = 0; i < 2; i++)
                        off[i].index = below(gi.edges), off[i].enabled = false;
                    if (pf_graph_change_apply(cur, &ch, &next, NULL)) exit(1);
                    pf_graph_release(cur);
                    cur = next;
                    pf_graph_dstar_set_graph(d, cur);
                    s = &patch;
                }
            }
            t0 = now_us();
            rs = pf_graph_dstar_plan(d, NULL, &p);
            rus = now_us() - t0;
            {
                pf_graph_query q = {pf_graph_dstar_agent(d),
                                    pf_graph_dstar_goal(d),
                                    PF_GRAPH_ASTAR,
                                    0,
                                    false,
                                    NULL,
                                    NULL,
                                    NULL,
                                    0,
                                    NULL,
                                    NULL,
                                    0,
                                    NULL,
                                    0};
                t0 = now_us();
                fs = pf_graph_search(cur, ctx, &q, &fp);
                fus = now_us() - t0;
            }
            plans++;
            if (rs != fs || (rs == PF_OK && fabs(p.cost - fp.cost) > 1e-6 * fmax(1, fp.cost)))
                mismatches++;
            add(s, (double)p.expanded, rus, (double)fp.expanded, fus);
            /* The agent takes its first step (a new chase when it arrived). */
            if (rs == PF_OK && p.len > 1)
                pf_graph_dstar_set_agent(d, p.nodes[1]);
            else
                pf_graph_dstar_set_goal(d, below(gi.nodes));
        }
        pf_graph_dstar_destroy(d);
        pf_graph_release(cur);
    }
    report(name, "first plan", &first);
    report(name, "agent step", &agent);
    report(name, "+goal move", &goal);
    report(name, "+PATCH", &patch);
    printf("%-16s root %s: %zu plans, %zu whose cost or status differ from the fresh A*'s; session "
           "bound %.1f bytes/node\n",
           name, getenv("BENCH_GS_ROOT") ? getenv("BENCH_GS_ROOT") : "auto", plans, mismatches,
           (double)pf_graph_dstar_bound(g) / gi.nodes);
    pf_graph_release(g);
    pf_graph_ctx_destroy(ctx);
    free(a.off);
    free(a.to);
}

static pf_graph *game_graph(void) {
    const uint32_t n = 5000, k = 6;
    double *pos = calloc(3 * n, sizeof(double)), *cost = malloc(n * k * sizeof(double));
    uint32_t *from = malloc(n * k * sizeof(uint32_t)), *to = malloc(n * k * sizeof(uint32_t));
    uint8_t *both = malloc(n * k);
    uint32_t m = 0;
    pf_graph *g;
    for (uint32_t i = 0; i < n; i++) pos[3 * i] = unit() * 1000, pos[3 * i + 1] = unit() * 1000;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t best[6];
        double bd[6];
        for (uint32_t j = 0; j < k; j++) bd[j] = INFINITY, best[j] = 0;
        for (uint32_t j = 0; j < n; j++) {
            double dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1];
            double dd = dx * dx + dy * dy;
            uint32_t s = k - 1;
            if (j == i || dd >= bd[k - 1]) continue;
            while (s > 0 && bd[s - 1] > dd) bd[s] = bd[s - 1], best[s] = best[s - 1], s--;
            bd[s] = dd, best[s] = j;
        }
        for (uint32_t j = 0; j < k; j++)
            from[m] = i, to[m] = best[j], cost[m] = sqrt(bd[j]) * (1 + 0.5 * unit()), both[m] = 1,
            m++;
    }
    {
        pf_graph_spec s = {n, 2, pos, m, from, to, cost, both, 0, NULL, NULL};
        if (pf_graph_build(&s, &g, NULL)) exit(1);
    }
    free(pos), free(cost), free(from), free(to), free(both);
    return g;
}

static pf_graph *grid_graph(int w, int h) {
    uint32_t n = (uint32_t)(w * h), m = 0, cap = n * 4;
    double *pos = calloc(3 * (size_t)n, sizeof(double)), *cost = malloc(cap * sizeof(double));
    uint32_t *from = malloc(cap * sizeof(uint32_t)), *to = malloc(cap * sizeof(uint32_t));
    uint8_t *both = malloc(cap);
    pf_graph *g;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t v = (uint32_t)(y * w + x);
            static const int dx[4] = {1, 0, 1, -1}, dy[4] = {0, 1, 1, 1};
            pos[3 * v] = x, pos[3 * v + 1] = y;
            for (int k = 0; k < 4; k++) {
                int nx = x + dx[k], ny = y + dy[k];
                if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
                from[m] = v, to[m] = (uint32_t)(ny * w + nx), both[m] = 1;
                cost[m++] = dx[k] && dy[k] ? 1414.2135624 : 1000;
            }
        }
    {
        pf_graph_spec s = {n, 2, pos, m, from, to, cost, both, 0, NULL, NULL};
        if (pf_graph_build(&s, &g, NULL)) exit(1);
    }
    free(pos), free(cost), free(from), free(to), free(both);
    return g;
}

int main(void) {
    pf_graph *g;
    setvbuf(stdout, NULL, _IOLBF, 0);
    g = game_graph();
    chase("game 5000", g, env_count("BENCH_GS_TICKS_SMALL", 4000), 40);
    pf_graph_release(g);
    g = grid_graph(1024, 1024);
    chase("grid 1024x1024", g, env_count("BENCH_GS_TICKS_BIG", 300), 3);
    pf_graph_release(g);
    return 0;
}
