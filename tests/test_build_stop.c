/* test_build_stop.c -- every build and repair of a map's data stops at its
 * stop callback inside its long phases (core/build_stop.h), from a table of
 * the builds: jump tables and their update, landmarks, dead ends, cut
 * vertices, the hierarchy and its repair, clearance and agent grids and
 * their repairs, mazes, a whole planner and its PATCH repair, and the agent
 * data a query builds on first use.
 *
 * Nothing here reads a clock: a probe callback counts its polls and reads
 * the work the build counted, and says stop at a chosen poll. Each build
 * must (1) poll inside its work: at least twice, never more than one slice
 * (PF_BUILD_POLL_WORK, plus the largest single step of this fixture)
 * between two polls or after the last one, having counted at least the work
 * it must have done (a bound computed here from the fixture and the
 * result: the cells each pass reads, the cells each Dijkstra settles), so
 * work left uncounted cannot hide between polls; (2) when told to stop at poll k,
 * for k from the first to the very last poll of a full run, answer
 * PF_ECANCELED with no poll and no work after the k-th, and nothing made
 * (ASan checks the frees); (3) leave what it shares in a state where the
 * next full build gives the same result as if it had never stopped. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "build_stop.h"
#include "clearance.h"
#include "cuts.h"
#include "deadends.h"
#include "hpa.h"
#include "jps.h"
#include "landmarks.h"
#include "maze.h"
#include "planner.h"
#include "testutil.h"

#define SIDE 320
/* The largest single step a build counts on the fixture (a maze row of 4 x
 * SIDE units, a cluster's Dijkstra, a clearance repair's cap^2), well
 * above all of them. */
#define STEP_SLACK 8192
/* Room for 9 landmarks on the fixture (whole 2 MiB pages, bigmem.h). */
#define LANDMARK_BYTES ((size_t)4 << 20)

typedef struct fixture {
    pf_grid *g;        /* a maze with wide corridors, loops and clutter */
    pf_point *changed; /* cells that differ in g2 */
    size_t nchanged;
    pf_grid *g2;            /* g with those cells blocked or opened */
    pf_cell_change *cells;  /* the same as a PATCH */
    pf_planner *p;          /* g's planner, agent sizes 2 and 3 built with hierarchies */
    pf_hpa *hpa;            /* g's hierarchy */
    pf_clearance *cl, *cl2; /* g's and g2's clearance tables */
    pf_grid *ag;            /* g's agent grid of size 3 */
} fixture;

static fixture fx;

static void fixture_setup(void) {
    uint64_t st = tu_seed("build_stop", 0xb5709);
    pf_maze_params mp = pf_maze_params_make(SIDE, SIDE, 42, 4);
    pf_planner_opts po = {.build_hpa = true, .landmark_bytes = PF_PLANNER_DEFAULT_LANDMARK_BYTES};
    const pf_grid *ag;
    const pf_hpa *ah;
    pf_grid *pg;
    memset(&fx, 0, sizeof(fx));
    mp.loops = 0.1;
    ck_assert_int_eq(pf_maze_generate(&mp, NULL, NULL, &fx.g), PF_OK);
    for (int i = 0; i < SIDE * SIDE / 20; i++) {
        pf_point c = {(int32_t)tu_below(&st, SIDE), (int32_t)tu_below(&st, SIDE)};
        pf_grid_set_cost(fx.g, c, 0);
    }
    fx.g2 = pf_grid_clone(fx.g);
    fx.nchanged = 1500;
    fx.changed = calloc(fx.nchanged, sizeof(*fx.changed));
    fx.cells = calloc(fx.nchanged, sizeof(*fx.cells));
    ck_assert(fx.g2 && fx.changed && fx.cells);
    for (size_t i = 0; i < fx.nchanged; i++) {
        pf_point c = {(int32_t)tu_below(&st, SIDE), (int32_t)tu_below(&st, SIDE)};
        uint8_t cost = pf_grid_cost(fx.g, c) ? 0 : 1;
        /* Distinct cells, so the change lists agree in every form. */
        if (pf_grid_cost(fx.g2, c) != pf_grid_cost(fx.g, c)) {
            i--;
            continue;
        }
        pf_grid_set_cost(fx.g2, c, cost);
        fx.changed[i] = c;
        fx.cells[i] = (pf_cell_change){c, cost};
    }
    pg = pf_grid_clone(fx.g);
    ck_assert_ptr_nonnull(pg);
    ck_assert_int_eq(pf_planner_create(pg, &po, &fx.p), PF_OK);
    for (int32_t n = 2; n <= 3; n++) {
        ck_assert_int_eq(pf_planner_agent_grid(fx.p, n, NULL, &ag), PF_OK);
        ck_assert_int_eq(pf_agents_hpa(pf_planner_agents(fx.p), n, NULL, &ah), PF_OK);
    }
    ck_assert_int_eq(pf_hpa_build(fx.g, NULL, NULL, &fx.hpa), PF_OK);
    ck_assert_int_eq(pf_clearance_build(fx.g, 8, NULL, &fx.cl), PF_OK);
    ck_assert_int_eq(pf_clearance_build(fx.g2, 8, NULL, &fx.cl2), PF_OK);
    ck_assert_int_eq(pf_agent_grid_build(fx.g, fx.cl, 3, NULL, &fx.ag), PF_OK);
}

static void fixture_teardown(void) {
    pf_grid_destroy(fx.ag);
    pf_clearance_destroy(fx.cl2);
    pf_clearance_destroy(fx.cl);
    pf_hpa_destroy(fx.hpa);
    pf_planner_destroy(fx.p);
    free(fx.cells);
    free(fx.changed);
    pf_grid_destroy(fx.g2);
    pf_grid_destroy(fx.g);
}

/* The builds. Each runs once with stop, frees what it made, and returns the
 * build's status. */

static pf_status run_jps_create(pf_build_stop *b) {
    pf_jps_params jp = {PF_JPS_DEFAULT_TABLE_BYTES, 0};
    pf_jps *j = NULL;
    pf_status st = pf_jps_create(fx.g, &jp, b, &j);
    ck_assert(st == PF_OK ? j != NULL : j == NULL);
    pf_jps_destroy(j);
    return st;
}

static pf_status run_jps_update(pf_build_stop *b) {
    pf_jps_params jp = {PF_JPS_DEFAULT_TABLE_BYTES, 0};
    pf_jps *j = NULL;
    pf_status st;
    ck_assert_int_eq(pf_jps_create(fx.g, &jp, NULL, &j), PF_OK);
    st = pf_jps_update(j, fx.g2, fx.changed, fx.nchanged, b);
    pf_jps_destroy(j);
    return st;
}

static pf_status run_landmarks(pf_build_stop *b) {
    pf_landmarks *l = NULL;
    pf_status st = pf_landmarks_build(fx.g, LANDMARK_BYTES, b, &l);
    ck_assert(st == PF_OK ? l != NULL : l == NULL);
    pf_landmarks_release(l);
    return st;
}

static pf_status run_deadends(pf_build_stop *b) {
    pf_deadends *d = NULL;
    pf_status st = pf_deadends_build(fx.g, 0.0, b, &d);
    ck_assert(st == PF_OK ? d != NULL : d == NULL);
    pf_deadends_destroy(d);
    return st;
}

static pf_status run_cuts(pf_build_stop *b) {
    pf_cuts *k = NULL;
    pf_status st = pf_cuts_build(fx.g, b, &k);
    ck_assert(st == PF_OK ? k != NULL : k == NULL);
    pf_cuts_destroy(k);
    return st;
}

static pf_status run_hpa_build(pf_build_stop *b) {
    pf_hpa *h = NULL;
    pf_status st = pf_hpa_build(fx.g, NULL, b, &h);
    ck_assert(st == PF_OK ? h != NULL : h == NULL);
    pf_hpa_destroy(h);
    return st;
}

static pf_status run_hpa_repair(pf_build_stop *b) {
    pf_hpa *h = NULL;
    pf_status st = pf_hpa_repair(fx.hpa, fx.g2, fx.changed, fx.nchanged, b, &h);
    ck_assert(st == PF_OK ? h != NULL : h == NULL);
    pf_hpa_destroy(h);
    return st;
}

static pf_status run_clearance(pf_build_stop *b) {
    pf_clearance *c = NULL;
    pf_status st = pf_clearance_build(fx.g, 8, b, &c);
    ck_assert(st == PF_OK ? c != NULL : c == NULL);
    pf_clearance_destroy(c);
    return st;
}

static pf_status run_clearance_repair(pf_build_stop *b) {
    pf_clearance *c = NULL;
    pf_status st = pf_clearance_repair(fx.cl, fx.g2, fx.changed, fx.nchanged, b, &c);
    ck_assert(st == PF_OK ? c != NULL : c == NULL);
    pf_clearance_destroy(c);
    return st;
}

static pf_status run_agent_grid(pf_build_stop *b) {
    pf_grid *a = NULL;
    pf_status st = pf_agent_grid_build(fx.g, fx.cl, 5, b, &a);
    ck_assert(st == PF_OK ? a != NULL : a == NULL);
    pf_grid_destroy(a);
    return st;
}

static pf_status run_agent_grid_repair(pf_build_stop *b) {
    pf_grid *a = NULL;
    pf_point *list = NULL;
    size_t n = 0;
    pf_status st =
        pf_agent_grid_repair(fx.ag, fx.g2, fx.cl2, 3, fx.changed, fx.nchanged, b, &a, &list, &n);
    ck_assert(st == PF_OK ? a != NULL : a == NULL && list == NULL);
    free(list);
    pf_grid_destroy(a);
    return st;
}

static pf_status run_maze(pf_build_stop *b, pf_maze_walls walls) {
    pf_maze_params mp = pf_maze_params_make(SIDE, SIDE, 7, 2);
    pf_grid *g = NULL;
    pf_status st;
    mp.walls = walls;
    mp.loops = 0.05;
    st = pf_maze_generate(&mp, NULL, b, &g);
    ck_assert(st == PF_OK ? g != NULL : g == NULL);
    pf_grid_destroy(g);
    return st;
}

static pf_status run_maze_cells(pf_build_stop *b) { return run_maze(b, PF_MAZE_WALL_CELLS); }
static pf_status run_maze_edges(pf_build_stop *b) { return run_maze(b, PF_MAZE_WALL_EDGES); }

static pf_status run_planner_create(pf_build_stop *b) {
    pf_planner_opts po = {.build_hpa = true,
                          .landmark_bytes = PF_PLANNER_DEFAULT_LANDMARK_BYTES,
                          .jps_table_bytes = PF_JPS_DEFAULT_TABLE_BYTES,
                          .stop = b};
    pf_planner *p = NULL;
    pf_grid *g = pf_grid_clone(fx.g);
    pf_status st;
    ck_assert_ptr_nonnull(g);
    st = pf_planner_create(g, &po, &p);
    ck_assert(st == PF_OK ? p != NULL : p == NULL);
    if (p) {
        pf_planner_auto_info ai;
        pf_planner_auto_info_get(p, &ai);
        ck_assert(ai.calibrated); /* the measurement ran under the stop too */
    }
    pf_planner_destroy(p);
    return st;
}

static pf_status run_planner_apply(pf_build_stop *b) {
    pf_planner *p2 = NULL;
    pf_point *changed = NULL;
    size_t n = 0;
    /* fx.p has agent sizes 2 and 3 with hierarchies: the repair covers
     * them too. */
    pf_status st = pf_planner_apply(fx.p, fx.cells, fx.nchanged, NULL, 0, b, &p2, &changed, &n);
    ck_assert(st == PF_OK ? p2 != NULL : p2 == NULL && changed == NULL);
    if (p2) {
        ck_assert(!pf_planner_agent_pending(p2, 2, true));
        ck_assert(!pf_planner_agent_pending(p2, 3, true));
    }
    free(changed);
    pf_planner_destroy(p2);
    return st;
}

/* Lower bounds of the work each build must count, from the fixture alone
 * (cells, walkable cells, the largest region by the tests' own move rule)
 * and the hierarchy's size. */

#define CELLS ((uint64_t)SIDE * SIDE)

/* The cells of g's largest region (BFS by tu_reference_can_step). */
static uint64_t largest_region(const pf_grid *g) {
    int32_t *q = malloc(CELLS * sizeof(*q));
    uint8_t *seen = calloc(CELLS, 1);
    uint64_t best = 0;
    ck_assert(q && seen);
    for (int32_t v = 0; v < (int32_t)CELLS; v++) {
        int32_t head = 0, tail = 0;
        if (seen[v] || !pf_grid_is_walkable(g, (pf_point){v % SIDE, v / SIDE})) continue;
        seen[v] = 1;
        q[tail++] = v;
        while (head < tail) {
            pf_point a = {q[head] % SIDE, q[head] / SIDE};
            head++;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int32_t u = (a.y + dy) * SIDE + a.x + dx;
                    if ((dx || dy) && tu_reference_can_step(g, a, dx, dy) && !seen[u]) {
                        seen[u] = 1;
                        q[tail++] = u;
                    }
                }
        }
        if ((uint64_t)tail > best) best = (uint64_t)tail;
    }
    free(q);
    free(seen);
    return best;
}

/* Diagonal bits, rows, columns, stop bits, and the tables' four diagonal
 * sweeps. */
static uint64_t min_jps_create(void) { return 5 * CELLS + 4 * CELLS; }
/* Three lines of each direction through every changed cell, once per line. */
static uint64_t min_jps_update(void) {
    uint8_t rows[SIDE] = {0}, cols[SIDE] = {0};
    uint64_t n = 0;
    for (size_t i = 0; i < fx.nchanged; i++)
        for (int k = -1; k <= 1; k++) {
            int32_t y = fx.changed[i].y + k, x = fx.changed[i].x + k;
            if (y >= 0 && y < SIDE) rows[y] = 1;
            if (x >= 0 && x < SIDE) cols[x] = 1;
        }
    for (int i = 0; i < SIDE; i++) n += (uint64_t)(rows[i] + cols[i]) * SIDE;
    return n;
}
/* The move masks, the region search (every cell, every walkable cell
 * popped), and per Dijkstra (the first one's and each landmark's) its resets
 * (a quarter unit a cell) and the whole largest region settled, and per
 * landmark a scan of the map. */
static uint64_t min_landmarks(void) {
    uint64_t walkable = (uint64_t)pf_grid_walkable_count(fx.g), k;
    pf_landmarks *l = NULL;
    /* How many landmarks fit the budget (a size, not work). */
    ck_assert_int_eq(pf_landmarks_build(fx.g, LANDMARK_BYTES, NULL, &l), PF_OK);
    ck_assert_ptr_nonnull(l);
    k = (uint64_t)l->k;
    pf_landmarks_release(l);
    return 2 * CELLS + walkable + (k + 1) * (CELLS / 4 + largest_region(fx.g)) + k * CELLS;
}
/* The DFS enters every walkable cell of the map. */
static uint64_t min_cuts(void) { return (uint64_t)pf_grid_walkable_count(fx.g); }
/* Every cluster's regions, and one in-cluster Dijkstra (a cluster's cells
 * at least) from every node that has a later node in its region. */
static uint64_t min_hpa_build(void) {
    pf_hpa_stats hs;
    uint64_t cc;
    pf_hpa_get_stats(fx.hpa, &hs);
    cc = (uint64_t)hs.cluster_size * (uint64_t)hs.cluster_size;
    return (uint64_t)hs.clusters * cc + (uint64_t)(hs.abstract_nodes / 2) * cc;
}
/* The changed cells' clusters: their regions again. */
static uint64_t min_hpa_repair(void) {
    pf_hpa_stats hs;
    uint64_t n = 0;
    uint8_t *dirty;
    pf_hpa_get_stats(fx.hpa, &hs);
    dirty = calloc((size_t)hs.clusters, 1);
    ck_assert_ptr_nonnull(dirty);
    for (size_t i = 0; i < fx.nchanged; i++) {
        int32_t ncx = (SIDE + hs.cluster_size - 1) / hs.cluster_size;
        int32_t k = fx.changed[i].y / hs.cluster_size * ncx + fx.changed[i].x / hs.cluster_size;
        n += !dirty[k];
        dirty[k] = 1;
    }
    free(dirty);
    return n * (uint64_t)hs.cluster_size * (uint64_t)hs.cluster_size;
}
static uint64_t min_cells(void) { return CELLS; }
/* Four window passes (cost and moves, rows and columns) and two scans. */
static uint64_t min_agent_grid(void) { return 6 * CELLS; }
/* The three scans of the map. */
static uint64_t min_agent_grid_repair(void) { return 3 * CELLS; }
/* The histogram and the move masks, row by row. */
static uint64_t min_maze(void) { return 5 * CELLS; }
static uint64_t min_planner_create(void) {
    return min_jps_create() + min_landmarks() + min_hpa_build();
}

typedef struct build_case {
    const char *name;
    pf_status (*run)(pf_build_stop *b);
    uint64_t (*min_work)(void);
} build_case;

static const build_case cases[] = {
    {"jps_create", run_jps_create, min_jps_create},
    {"jps_update", run_jps_update, min_jps_update},
    {"landmarks", run_landmarks, min_landmarks},
    {"deadends", run_deadends, min_cuts},
    {"cuts", run_cuts, min_cuts},
    {"hpa_build", run_hpa_build, min_hpa_build},
    {"hpa_repair", run_hpa_repair, min_hpa_repair},
    {"clearance", run_clearance, min_cells},
    {"clearance_repair", run_clearance_repair, min_cells},
    {"agent_grid", run_agent_grid, min_agent_grid},
    {"agent_grid_repair", run_agent_grid_repair, min_agent_grid_repair},
    {"maze_cells", run_maze_cells, min_maze},
    {"maze_edges", run_maze_edges, min_maze},
    {"planner_create", run_planner_create, min_planner_create},
    {"planner_apply", run_planner_apply, min_hpa_repair},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

/* The stop callback of the tests: counts its polls, reads the work the
 * build counted at each, and says stop at poll stop_at (0: never). */
typedef struct probe {
    const pf_build_stop *b;
    uint64_t stop_at, polls, last_work, max_gap, work_at_stop;
} probe;

static bool probe_poll(void *ud) {
    probe *pr = ud;
    uint64_t w = pr->b ? pr->b->work : 0;
    pr->polls++;
    if (w - pr->last_work > pr->max_gap) pr->max_gap = w - pr->last_work;
    pr->last_work = w;
    if (pr->stop_at && pr->polls == pr->stop_at) {
        pr->work_at_stop = w;
        return true;
    }
    return false;
}

/* Runs case c with a probe stopping at poll stop_at; fills *pr and *b. */
static pf_status run_probed(const build_case *c, uint64_t stop_at, probe *pr, pf_build_stop *b) {
    memset(pr, 0, sizeof(*pr));
    pr->stop_at = stop_at;
    *b = pf_build_stop_make(probe_poll, pr);
    pr->b = b;
    return c->run(b);
}

START_TEST(build_stop_polls_inside_every_build) {
    const build_case *c = &cases[_i];
    probe pr;
    pf_build_stop b;
    ck_assert_int_eq(run_probed(c, 0, &pr, &b), PF_OK);
    ck_assert_msg(!b.stopped, "%s", c->name);
    ck_assert_uint_eq(b.polls, pr.polls);
    /* Polled inside the work, a slice apart at most, to the end. */
    ck_assert_msg(pr.polls >= 2, "%s: %llu polls", c->name, (unsigned long long)pr.polls);
    ck_assert_msg(pr.max_gap <= PF_BUILD_POLL_WORK + STEP_SLACK, "%s: %llu units between polls",
                  c->name, (unsigned long long)pr.max_gap);
    ck_assert_msg(b.work - pr.last_work <= PF_BUILD_POLL_WORK + STEP_SLACK,
                  "%s: %llu units after the last poll", c->name,
                  (unsigned long long)(b.work - pr.last_work));
    /* All its work was counted (so none ran between polls unseen). */
    ck_assert_msg(b.work >= c->min_work(), "%s: counted %llu units, did at least %llu", c->name,
                  (unsigned long long)b.work, (unsigned long long)c->min_work());
    /* The same build counts the same work: it is a count, not a time. */
    {
        probe pr2;
        pf_build_stop b2;
        ck_assert_int_eq(run_probed(c, 0, &pr2, &b2), PF_OK);
        ck_assert_uint_eq(b2.work, b.work);
        ck_assert_uint_eq(pr2.polls, pr.polls);
    }
}
END_TEST

START_TEST(build_stop_stops_at_every_poll) {
    const build_case *c = &cases[_i];
    probe full, pr;
    pf_build_stop b;
    uint64_t at[4];
    ck_assert_int_eq(run_probed(c, 0, &full, &b), PF_OK);
    /* The first poll, two inside, and the very last: the build is still
     * working at each, so each must stop it. */
    at[0] = 1;
    at[1] = 1 + full.polls / 3;
    at[2] = 1 + 2 * full.polls / 3;
    at[3] = full.polls;
    for (int k = 0; k < 4; k++) {
        pf_status st = run_probed(c, at[k], &pr, &b);
        ck_assert_msg(st == PF_ECANCELED, "%s: stop at poll %llu of %llu: %s", c->name,
                      (unsigned long long)at[k], (unsigned long long)full.polls, pf_status_str(st));
        ck_assert(b.stopped);
        /* Nothing polled and nothing counted after the stop. */
        ck_assert_uint_eq(pr.polls, at[k]);
        ck_assert_uint_eq(b.work, pr.work_at_stop);
        ck_assert(pf_build_tick(&b, 1)); /* a stopped stop stays stopped */
    }
    /* And a full run afterwards is what it was (shared data untouched). */
    ck_assert_int_eq(run_probed(c, 0, &pr, &b), PF_OK);
    ck_assert_uint_eq(pr.polls, full.polls);
}
END_TEST

/* The agent data a query builds on first use: built within the query's own
 * stop callback (the server's deadline), nothing published when it says
 * stop, and the next query builds it whole. */
START_TEST(build_stop_query_builds_agent_data_within_its_stop) {
    pf_planner_opts po = {.build_hpa = true};
    pf_grid *g = pf_grid_clone(fx.g);
    pf_planner *p = NULL;
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_point s, t;
    pf_result r0, r;
    uint64_t seed = 5, polls;
    probe pr;
    pf_query q;
    ck_assert(g && ctx);
    ck_assert_int_eq(pf_planner_create(g, &po, &p), PF_OK);
    /* Ends a 3x3 agent can travel between (fx.p has that size built: the
     * answer). */
    for (int tries = 0;; tries++) {
        ck_assert_int_lt(tries, 1000);
        do {
            ck_assert(tu_random_walkable(&seed, fx.g, &s));
        } while (pf_clearance_at(fx.cl, s) < 3);
        do {
            ck_assert(tu_random_walkable(&seed, fx.g, &t));
        } while (pf_clearance_at(fx.cl, t) < 3 || (s.x == t.x && s.y == t.y));
        q = pf_query_make(s, t, PF_ALGO_HPA);
        q.agent_size = 3;
        if (pf_planner_search(ctx, fx.p, &q, &r0) == PF_OK) break;
    }
    q.should_stop = probe_poll;
    q.stop_ud = &pr;
    /* The polls of a first query: the agent grid's and hierarchy's builds
     * and the search's. */
    ck_assert(pf_planner_agent_pending(p, 3, true));
    memset(&pr, 0, sizeof(pr));
    ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
    ck_assert(!pf_planner_agent_pending(p, 3, true));
    ck_assert_double_eq_tol(r.cost, r0.cost, 1e-9);
    polls = pr.polls;
    pf_planner_destroy(p);
    ck_assert_msg(polls >= 3, "%llu polls", (unsigned long long)polls);
    /* Stopped at each of its early polls, which fall in the builds: the
     * query is canceled and leaves nothing built. */
    for (uint64_t k = 1; k <= 2; k++) {
        g = pf_grid_clone(fx.g);
        ck_assert_int_eq(pf_planner_create(g, &po, &p), PF_OK);
        memset(&pr, 0, sizeof(pr));
        pr.stop_at = k;
        ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_ECANCELED);
        ck_assert_uint_eq(pr.polls, k);
        ck_assert(pf_planner_agent_pending(p, 3, true));
        /* The next query builds it all and answers as before. */
        memset(&pr, 0, sizeof(pr));
        ck_assert_int_eq(pf_planner_search(ctx, p, &q, &r), PF_OK);
        ck_assert_double_eq_tol(r.cost, r0.cost, 1e-9);
        ck_assert(!pf_planner_agent_pending(p, 3, true));
        pf_planner_destroy(p);
    }
    pf_search_ctx_destroy(ctx);
}
END_TEST

TU_SUITE(build_stop) {
    Suite *s = suite_create("build_stop");
    TCase *tc = tcase_create("core");
    tcase_add_unchecked_fixture(tc, fixture_setup, fixture_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, build_stop_polls_inside_every_build, 0, NCASES);
    tcase_add_loop_test(tc, build_stop_stops_at_every_poll, 0, NCASES);
    tcase_add_test(tc, build_stop_query_builds_agent_data_within_its_stop);
    suite_add_tcase(s, tc);
    return s;
}
