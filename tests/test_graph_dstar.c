/* test_graph_dstar.c -- graph sessions' incremental search
 * (core/graph_dstar.h) against a reference Dijkstra written plainly here
 * (an O(n^2) scan over an edge list, no heap, no CSR, sharing no code with
 * core/): thousands of random graphs (directed, undirected and mixed,
 * disconnected, zero costs, duplicate edges and positions, self loops),
 * each through a random interleaving of PATCHed versions (costs, edges and
 * nodes enabled and disabled), agent moves (along the path, to a
 * neighbour, anywhere) and goal moves, in each orientation; after every
 * step the plan's cost equals the reference's and its path is a real path
 * of the current version. Also: plans cut by max_expanded go on to the
 * same answer, and the repair's counted expansions against a fresh
 * search's on the same steps. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "graph_dstar.h"
#include "graphref.h"
#include "testutil.h"

static double unit(uint64_t *st) { return (double)(tu_rand(st) >> 11) / 9007199254740992.0; }

static void ref_random(uint64_t *st, graphref *r, uint32_t maxn) {
    uint32_t shape = tu_below(st, 5);
    uint32_t n = 1 + tu_below(st, maxn);
    graphref_alloc(r, n, tu_below(st, 3 * n + 1));
    for (uint32_t i = 0; i < r->n; i++) {
        r->non[i] = 1;
        for (int k = 0; k < 2; k++)
            r->pos[3 * i + (uint32_t)k] = shape == 0 ? (double)tu_below(st, 3) : unit(st) * 50;
    }
    for (uint32_t e = 0; e < r->m; e++) {
        double dx, dy;
        r->from[e] = tu_below(st, r->n);
        r->to[e] = tu_below(st, 8) == 0 ? r->from[e] : tu_below(st, r->n);
        if (e > 0 && tu_below(st, 8) == 0) { /* a duplicate of the previous edge */
            r->from[e] = r->from[e - 1];
            r->to[e] = r->to[e - 1];
        }
        r->eon[e] = 1;
        r->both[e] = shape == 1 ? 0 : shape == 2 ? 1 : (uint8_t)tu_below(st, 2);
        dx = r->pos[3 * r->from[e]] - r->pos[3 * r->to[e]];
        dy = r->pos[3 * r->from[e] + 1] - r->pos[3 * r->to[e] + 1];
        switch (tu_below(st, 4)) {
        case 0:
            r->cost[e] = 0;
            break;
        case 1:
            r->cost[e] = (double)tu_below(st, 20);
            break;
        default:
            r->cost[e] = sqrt(dx * dx + dy * dy) * (1 + unit(st));
            break;
        }
    }
}

/* The reference: cheapest cost from s to t on the enabled edges and
 * nodes, INFINITY when none; -1 when s or t is disabled. */
static double ref_dijkstra(const graphref *r, uint32_t s, uint32_t t) {
    double *dist, out;
    if (!r->non[s] || !r->non[t]) return -1;
    dist = malloc(r->n * sizeof(double));
    ck_assert(dist);
    graphref_dijkstra(r, s, dist);
    out = dist[t];
    free(dist);
    return out;
}

/* Whether p is a real path from s to t on r (s enabled) whose edge costs
 * sum to p->cost. */
static bool ref_path_ok(const graphref *r, const pf_graph_path *p, uint32_t s, uint32_t t) {
    return p->len >= 1 && r->non[s] && p->nodes[p->len - 1] == t && graphref_walk_ok(r, s, p);
}

static pf_graph *ref_build(const graphref *r) {
    pf_graph_spec sp;
    pf_graph *g = NULL;
    memset(&sp, 0, sizeof(sp));
    sp.nnodes = r->n;
    sp.dim = 2;
    sp.pos = r->pos;
    sp.nedges = r->m;
    sp.from = r->from;
    sp.to = r->to;
    sp.cost = r->cost;
    sp.both = r->both;
    if (pf_graph_build(&sp, &g, NULL) != PF_OK) return NULL;
    return g;
}

/* A random PATCH, applied to r and to *g (replaced by the next version). */
static bool random_patch(uint64_t *st, graphref *r, pf_graph **g) {
    pf_graph_cost_change cc[4];
    pf_graph_toggle et[4], nt[3];
    pf_graph_change ch;
    pf_graph *next = NULL;
    memset(&ch, 0, sizeof(ch));
    if (r->m) {
        ch.ncosts = tu_below(st, 5);
        for (size_t i = 0; i < ch.ncosts; i++) {
            cc[i].edge = tu_below(st, r->m);
            cc[i].cost = tu_below(st, 3) == 0 ? 0 : unit(st) * 80;
        }
        ch.nedges = tu_below(st, 5);
        for (size_t i = 0; i < ch.nedges; i++) {
            et[i].index = tu_below(st, r->m);
            et[i].enabled = tu_below(st, 3) != 0;
        }
    }
    ch.nnodes = tu_below(st, 4);
    for (size_t i = 0; i < ch.nnodes; i++) {
        nt[i].index = tu_below(st, r->n);
        nt[i].enabled = tu_below(st, 3) != 0;
    }
    ch.costs = cc;
    ch.edges = et;
    ch.nodes = nt;
    if (pf_graph_change_apply(*g, &ch, &next, NULL) != PF_OK) return false;
    for (size_t i = 0; i < ch.ncosts; i++) r->cost[cc[i].edge] = cc[i].cost;
    for (size_t i = 0; i < ch.nedges; i++) r->eon[et[i].index] = et[i].enabled;
    for (size_t i = 0; i < ch.nnodes; i++) r->non[nt[i].index] = nt[i].enabled;
    pf_graph_release(*g);
    *g = next;
    return true;
}

/* Checks one plan against the reference; 0 when right, else a code. */
static int check_plan(const graphref *r, pf_graph_dstar *d, pf_status st, const pf_graph_path *p) {
    uint32_t a = pf_graph_dstar_agent(d), b = pf_graph_dstar_goal(d);
    double want = ref_dijkstra(r, a, b);
    if (want < 0) return st == PF_EBLOCKED ? 0 : 1;
    if (!isfinite(want)) return st == PF_NO_PATH ? 0 : 2;
    if (st != PF_OK) return 3;
    if (!graphref_near(p->cost, want)) return 4;
    if (!ref_path_ok(r, p, a, b)) return 5;
    return 0;
}

/* One random graph through `steps` random steps; returns the first
 * failing step's code (see check_plan), 0 when every plan was right. */
static int run_case(uint64_t *st, uint32_t maxn, int steps, int *where) {
    graphref r;
    pf_graph *g;
    pf_graph_dstar *d = NULL;
    pf_graph_path p;
    pf_status s;
    int bad = 0;
    ref_random(st, &r, maxn);
    g = ref_build(&r);
    if (!g) {
        graphref_free(&r);
        return 90;
    }
    if (pf_graph_dstar_create(g, tu_below(st, r.n), tu_below(st, r.n),
                              (pf_graph_dstar_root)tu_below(st, 3), &d) != PF_OK) {
        pf_graph_release(g);
        graphref_free(&r);
        return 91;
    }
    s = pf_graph_dstar_plan(d, NULL, &p);
    if ((bad = check_plan(&r, d, s, &p))) *where = 0;
    for (int i = 1; i <= steps && !bad; i++) {
        uint32_t what = tu_below(st, 10);
        if (what < 3) {
            if (!random_patch(st, &r, &g)) {
                bad = 92;
                break;
            }
            if (pf_graph_dstar_set_graph(d, g) != PF_OK) {
                bad = 93;
                break;
            }
        } else if (what < 6) {
            /* The agent: a step along its path mostly, else anywhere. */
            uint32_t v = tu_below(st, r.n);
            if (s == PF_OK && p.len > 1 && tu_below(st, 3)) v = p.nodes[1];
            pf_graph_dstar_set_agent(d, v);
        } else if (what < 9) {
            /* The goal: next to where it is mostly, else anywhere. */
            uint32_t v = tu_below(st, r.n), gl = pf_graph_dstar_goal(d);
            for (uint32_t e = 0; e < r.m && tu_below(st, 2); e++)
                if (r.from[e] == gl) v = r.to[e];
            pf_graph_dstar_set_goal(d, v);
        } else {
            /* Both, then a PATCH, before one plan. */
            pf_graph_dstar_set_agent(d, tu_below(st, r.n));
            pf_graph_dstar_set_goal(d, tu_below(st, r.n));
            if (!random_patch(st, &r, &g) || pf_graph_dstar_set_graph(d, g) != PF_OK) {
                bad = 94;
                break;
            }
        }
        s = pf_graph_dstar_plan(d, NULL, &p);
        if ((bad = check_plan(&r, d, s, &p))) *where = i;
    }
    pf_graph_dstar_destroy(d);
    pf_graph_release(g);
    graphref_free(&r);
    return bad;
}

START_TEST(graph_dstar_property_random) {
    uint64_t seed = tu_seed("graph_dstar_property_random", 2801), st = seed;
    int failures = 0, first_case = -1, first_code = 0, first_step = 0;
    for (int c = 0; c < 3000; c++) {
        int where = 0, code = run_case(&st, c < 2000 ? 12 : 60, 25, &where);
        if (code && !failures++) first_case = c, first_code = code, first_step = where;
    }
    ck_assert_msg(failures == 0, "%d failing cases; first: case %d step %d code %d (seed %llu)",
                  failures, first_case, first_step, first_code, (unsigned long long)seed);
}
END_TEST

/* A plan cut by max_expanded goes on from where it stopped: asked again
 * and again with a budget of 1, it ends at the reference's cost. */
START_TEST(graph_dstar_budget_resumes) {
    uint64_t st = tu_seed("graph_dstar_budget_resumes", 2802);
    int bad = 0;
    for (int c = 0; c < 500 && !bad; c++) {
        graphref r;
        pf_graph *g;
        pf_graph_dstar *d;
        pf_graph_path p;
        pf_plan_limits lim = {1, NULL, NULL, 0};
        pf_status s;
        int tries = 0;
        ref_random(&st, &r, 40);
        g = ref_build(&r);
        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(pf_graph_dstar_create(g, tu_below(&st, r.n), tu_below(&st, r.n),
                                               (pf_graph_dstar_root)tu_below(&st, 3), &d),
                         PF_OK);
        for (int step = 0; step < 6 && !bad; step++) {
            if (step % 2) {
                ck_assert(random_patch(&st, &r, &g));
                ck_assert_int_eq(pf_graph_dstar_set_graph(d, g), PF_OK);
            } else {
                pf_graph_dstar_set_goal(d, tu_below(&st, r.n));
            }
            while ((s = pf_graph_dstar_plan(d, &lim, &p)) == PF_EBUDGET && tries < 100000) {
                tries++;
                if (p.expanded > 1) bad = 10;
            }
            if (!bad) bad = check_plan(&r, d, s, &p);
        }
        pf_graph_dstar_destroy(d);
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_int_eq(bad, 0);
}
END_TEST

static bool stop_now(void *arg) {
    (*(int *)arg)++;
    return true;
}

START_TEST(graph_dstar_refusals) {
    graphref r;
    pf_graph *g, *other;
    pf_graph_dstar *d = NULL;
    pf_graph_path p;
    int asked = 0;
    pf_plan_limits lim = {0, stop_now, &asked, 0};
    /* A chain 0-1-...-599, long enough for the stop callback. */
    graphref_alloc(&r, 600, 599);
    for (uint32_t i = 0; i < r.n; i++) r.pos[3 * i] = i, r.non[i] = 1;
    for (uint32_t e = 0; e < r.m; e++)
        r.from[e] = e, r.to[e] = e + 1, r.cost[e] = 1, r.both[e] = 1, r.eon[e] = 1;
    g = ref_build(&r);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(pf_graph_dstar_create(g, 0, 600, PF_GRAPH_DSTAR_ROOT_AUTO, &d), PF_ERANGE);
    ck_assert_ptr_null(d);
    ck_assert_int_eq(pf_graph_dstar_create(g, 0, 1, (pf_graph_dstar_root)7, &d), PF_EINVAL);
    ck_assert_int_eq(pf_graph_dstar_create(g, 0, 599, PF_GRAPH_DSTAR_ROOT_AUTO, &d), PF_OK);
    ck_assert_uint_le(pf_graph_dstar_memory(d), pf_graph_dstar_bound(g));
    ck_assert_int_eq(pf_graph_dstar_set_agent(d, 600), PF_ERANGE);
    ck_assert_int_eq(pf_graph_dstar_set_goal(d, 600), PF_ERANGE);
    ck_assert_uint_eq(pf_graph_dstar_goal(d), 599);
    ck_assert_int_eq(pf_graph_dstar_plan(d, &lim, &p), PF_ECANCELED);
    ck_assert_int_eq(asked, 1);
    ck_assert_int_eq(pf_graph_dstar_plan(d, NULL, &p), PF_OK);
    ck_assert(graphref_near(p.cost, 599));
    ck_assert_uint_le(pf_graph_dstar_memory(d), pf_graph_dstar_bound(g));
    /* Another upload's graph (another topology) is refused. */
    other = ref_build(&r);
    ck_assert_int_eq(pf_graph_dstar_set_graph(d, other), PF_EINVAL);
    ck_assert_ptr_eq(pf_graph_dstar_graph(d), g);
    /* A disabled goal is blocked, enabled again it plans. */
    {
        pf_graph_toggle off = {599, false};
        pf_graph_change ch = {NULL, 0, NULL, &off, 0, 1};
        pf_graph *next;
        ck_assert_int_eq(pf_graph_change_apply(g, &ch, &next, NULL), PF_OK);
        ck_assert_int_eq(pf_graph_dstar_set_graph(d, next), PF_OK);
        ck_assert_int_eq(pf_graph_dstar_plan(d, NULL, &p), PF_EBLOCKED);
        pf_graph_release(next);
    }
    pf_graph_dstar_destroy(d);
    pf_graph_release(other);
    pf_graph_release(g);
    graphref_free(&r);
}
END_TEST

/* A game-style graph: a w x h lattice of two-way edges, costs the length
 * times 1..2, with a few holes. */
static pf_graph *lattice(uint64_t *st, uint32_t w, uint32_t hgt, graphref *r) {
    uint32_t n = w * hgt, m = 0;
    graphref_alloc(r, n, 4 * n);
    for (uint32_t y = 0; y < hgt; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t v = y * w + x;
            r->pos[3 * v] = x;
            r->pos[3 * v + 1] = y;
            r->non[v] = tu_below(st, 10) != 0;
            if (x + 1 < w) r->from[m] = v, r->to[m] = v + 1, r->cost[m] = 1 + unit(st), m++;
            if (y + 1 < hgt) r->from[m] = v, r->to[m] = v + w, r->cost[m] = 1 + unit(st), m++;
        }
    r->non[0] = r->non[n - 1] = 1;
    r->m = m;
    for (uint32_t e = 0; e < m; e++) r->both[e] = 1, r->eon[e] = 1;
    {
        pf_graph *g = ref_build(r);
        pf_graph_toggle *off = calloc(n, sizeof(*off));
        pf_graph_change ch;
        pf_graph *next = NULL;
        size_t k = 0;
        for (uint32_t v = 0; v < n; v++)
            if (!r->non[v]) off[k].index = v, off[k++].enabled = false;
        memset(&ch, 0, sizeof(ch));
        ch.nodes = off;
        ch.nnodes = k;
        if (g && pf_graph_change_apply(g, &ch, &next, NULL) == PF_OK) {
            pf_graph_release(g);
            g = next;
        }
        free(off);
        return g;
    }
}

/* The repair's expansions against a fresh session's on the same steps:
 * an agent stepping along its path with the goal moving next to it now
 * and then, and a PATCH every 10 steps. Every plan is checked against the
 * reference too. */
START_TEST(graph_dstar_repair_counts) {
    uint64_t st = tu_seed("graph_dstar_repair_counts", 2804);
    uint64_t repair = 0, fresh = 0;
    int bad = 0, plans = 0;
    for (int c = 0; c < 6 && !bad; c++) {
        graphref r;
        pf_graph *g = lattice(&st, 40, 40, &r);
        pf_graph_dstar *d;
        pf_graph_path p;
        uint32_t a = 0, b = r.n - 1;
        pf_status s;
        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(pf_graph_dstar_create(g, a, b, PF_GRAPH_DSTAR_ROOT_AUTO, &d), PF_OK);
        s = pf_graph_dstar_plan(d, NULL, &p);
        for (int i = 0; i < 60 && !bad; i++) {
            pf_graph_dstar *f;
            pf_graph_path fp;
            pf_status fs;
            if (s == PF_OK && p.len > 2) pf_graph_dstar_set_agent(d, p.nodes[1]);
            if (i % 4 == 3) {
                uint32_t gl = pf_graph_dstar_goal(d);
                for (uint32_t e = 0; e < r.m; e++)
                    if (r.to[e] == gl && r.non[r.from[e]] && tu_below(&st, 2)) {
                        pf_graph_dstar_set_goal(d, r.from[e]);
                        break;
                    }
            }
            if (i % 10 == 9) {
                ck_assert(random_patch(&st, &r, &g));
                ck_assert_int_eq(pf_graph_dstar_set_graph(d, g), PF_OK);
            }
            s = pf_graph_dstar_plan(d, NULL, &p);
            plans++;
            if ((bad = check_plan(&r, d, s, &p))) break;
            repair += p.expanded;
            ck_assert_int_eq(pf_graph_dstar_create(g, pf_graph_dstar_agent(d),
                                                   pf_graph_dstar_goal(d), PF_GRAPH_DSTAR_ROOT_GOAL,
                                                   &f),
                             PF_OK);
            fs = pf_graph_dstar_plan(f, NULL, &fp);
            ck_assert_int_eq(fs, s);
            fresh += fp.expanded;
            pf_graph_dstar_destroy(f);
        }
        pf_graph_dstar_destroy(d);
        pf_graph_release(g);
        graphref_free(&r);
    }
    ck_assert_int_eq(bad, 0);
    fprintf(stderr, "graph_dstar_repair_counts: %d plans, repair %llu vs fresh %llu expansions\n",
            plans, (unsigned long long)repair, (unsigned long long)fresh);
    /* Counted, not timed: the repairs together expand far fewer nodes. */
    ck_assert_uint_lt(repair * 3, fresh);
}
END_TEST

TU_SUITE(graph_dstar) {
    Suite *s = suite_create("graph_dstar");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, graph_dstar_refusals);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("property");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, graph_dstar_property_random);
    tcase_add_test(slow, graph_dstar_budget_resumes);
    tcase_add_test(slow, graph_dstar_repair_counts);
    suite_add_tcase(s, slow);
    return s;
}
