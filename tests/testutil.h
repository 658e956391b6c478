/* testutil.h -- helpers shared by the test suites: seeds, random maps, the
 * reference search, the benchmark folder. */
#ifndef PF_TESTUTIL_H
#define PF_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "grid.h"
#include "jsonw.h"
#include "map_io.h"
#include "registry.h"

/* Defines the suite of tests/test_<m>.c that run_tests.c collects:
 * TU_SUITE(grid) { Suite *s = suite_create("grid"); ...; return s; } */
#define TU_SUITE(m)                                                                                \
    Suite *m##_suite(void);                                                                        \
    Suite *m##_suite(void)

/* Skipping. A test that cannot run ends with TU_SKIP_UNLESS_CI("why",
 * ...): outside CI it says so on stderr ("SKIPPED: <test>: <why>") and the
 * runner counts it in its summary line ("Checks: 140, Failures: 0, Errors:
 * 0, Skipped: 2") and lists it; in CI (tu_in_ci) it fails instead, because
 * make test installs or builds everything a test needs (the Moving AI maps
 * are ../shared, the npm packages, redis-server, nginx, openssl, ...), so a
 * missing input there is a broken install. TU_SKIP skips even in CI: no
 * test uses it today. Both return from the test function.
 *
 * "In CI" has one definition, here and in docs/testing.md: the environment
 * variable CI is set, not empty, and neither "0" nor "false" (any case).
 * .ci/run sets CI=true. */
#define TU_SKIP(...)                                                                               \
    do {                                                                                           \
        char tu_why_[512];                                                                         \
        snprintf(tu_why_, sizeof(tu_why_), __VA_ARGS__);                                           \
        tu_skip(__func__, tu_why_);                                                                \
        return;                                                                                    \
    } while (0)
#define TU_SKIP_UNLESS_CI(...)                                                                     \
    do {                                                                                           \
        char tu_why_[512];                                                                         \
        snprintf(tu_why_, sizeof(tu_why_), __VA_ARGS__);                                           \
        if (tu_in_ci()) ck_abort_msg("cannot run, and CI must run it: %s", tu_why_);               \
        tu_skip(__func__, tu_why_);                                                                \
        return;                                                                                    \
    } while (0)
/* What the macros call: prints and records the skip of the test whose
 * function is fn (Check names it <test>_fn). */
void tu_skip(const char *fn, const char *why);
/* Whether this runs in CI: CI set, not empty, not "0", not "false". */
bool tu_in_ci(void);
/* The environment variable naming the file skips are recorded in, one
 * "<test>\t<why>" line each (set by the runner; without it a skip is only
 * printed). */
#define TU_SKIP_LOG_ENV "PATHD_SKIP_LOG"

/* Waiting without a clock (STYLE: time is not an assertion). A test that
 * waits for another thread or process to do something polls, calling
 * tu_waiting(&polls, "what") each round (polls starts at 0): only the
 * awaited event or the test's Check timeout (scaled by
 * CK_TIMEOUT_MULTIPLIER for the sanitizer builds) ends the wait. After
 * 4096, 8192, ... polls (seconds) it prints "still waiting (<n> polls):
 * <what>" so that a timeout says what it waited for. Yields the CPU, then
 * naps 2 ms a poll (pacing, so a poll loop does not hog a shared core). */
void tu_waiting(unsigned *polls, const char *what);

/* A loopback TCP port that is free now, for a component that must be told
 * its port before it starts (redis-server, nginx, a second listener). It
 * is drawn below the kernel's ephemeral range (ip_local_port_range), so a
 * server another suite starts with --port 0 at the same time cannot be
 * given it between this probe and its use; checked free by binding it. */
uint16_t tu_free_port(void);

/* The seed of a random test: PATHD_SEED from the environment, else `dflt`.
 * Printed to stderr with the test's name so a failure can be replayed with
 * PATHD_SEED=<seed>. */
uint64_t tu_seed(const char *test, uint64_t dflt);

/* splitmix64 */
uint64_t tu_rand(uint64_t *state);
/* Uniform in [0, n). */
uint32_t tu_below(uint64_t *state, uint32_t n);

/* Options of a random map. */
typedef struct tu_map_opts {
    int32_t min_side, max_side; /* inclusive */
    double max_blocked;         /* fraction of blocked cells, drawn in [0, max] */
    bool random_costs;          /* costs 1..9 instead of all 1 */
    bool walls;                 /* some wall edges */
    int connectivity;           /* 4 or 8; 0 = random */
    int corner_cutting;         /* 0 off, 1 on, -1 random */
} tu_map_opts;

/* A random grid; aborts the test on allocation failure. */
pf_grid *tu_random_grid(uint64_t *state, const tu_map_opts *o);
/* A random walkable cell; false when there is none. */
bool tu_random_walkable(uint64_t *state, const pf_grid *g, pf_point *p);

/* The movement rule of DESIGN.md restated on the grid's public API (cells,
 * walls, connectivity, corner rule), independently of grid.c's move masks:
 * whether the step from a by (dx, dy) (each -1..1, not both 0) is
 * allowed. The rule every reference search here uses. */
bool tu_reference_can_step(const pf_grid *g, pf_point a, int dx, int dy);

/* Breadth-first search by the same independent rule as tu_reference_cost,
 * never entering cell index `avoid` (-1: none): seen[y * w + x] (w x h
 * entries, cleared first) is set for every cell reachable from s. */
void tu_reference_reach(const pf_grid *g, pf_point s, int32_t avoid, bool *seen);

/* A perfect maze (a spanning tree of corridors, cost 1) of cw x ch rooms on
 * a (2 cw + 1) x (2 ch + 1) grid, drawn by a randomised depth-first search:
 * between two of its cells there is exactly one way. */
pf_grid *tu_perfect_maze(uint64_t *state, int32_t cw, int32_t ch, int connectivity,
                         bool corner_cutting);

/* Reference Dijkstra written independently of core's searches: the tests'
 * own binary heap (tu_heap_*) over the tests' own movement rule
 * (tu_reference_can_step), entry costs read with pf_grid_cost (a diagonal
 * step costs the entered cell's cost times sqrt 2); it uses neither
 * core/search.c nor grid.c's move masks or step costs. Stops when the goal
 * is settled. Returns the optimal cost, or -1 when the goal is
 * unreachable. */
double tu_reference_cost(const pf_grid *g, pf_point start, pf_point goal);

/* Builds a grid from rows with the legend '.'=1 '#'=0 'S'=1 'G'=1, digits
 * '1'..'9' their cost. */
pf_grid *tu_grid_from_ascii(const char *const *rows, int32_t h, int connectivity);

/* The Moving AI folder (PATHD_BENCH_DIR, else ../shared/benchmarks/movingai),
 * or NULL when it does not exist. */
const char *tu_bench_dir(void);
/* Skips the running test (TU_SKIP_UNLESS_CI: CI always has the maps) when
 * there is no Moving AI folder; else sets dir to it. */
#define TU_NEED_BENCH_DIR(dir)                                                                     \
    do {                                                                                           \
        if (!((dir) = tu_bench_dir()))                                                             \
            TU_SKIP_UNLESS_CI("Moving AI folder '%s' not found (set PATHD_BENCH_DIR to the "       \
                              "folder of the .map and .map.scen files)",                           \
                              tu_bench_dir_wanted());                                              \
    } while (0)
/* A binary min-heap on d for the reference searches (written apart from
 * core's queues on purpose): h has room for every push, *n counts what it
 * holds; tu_heap_pop needs *n > 0. */
typedef struct tu_heap_item {
    double d;
    int32_t i;
} tu_heap_item;
void tu_heap_push(tu_heap_item *h, size_t *n, tu_heap_item it);
tu_heap_item tu_heap_pop(tu_heap_item *h, size_t *n);

/* The folder tu_bench_dir looks for. */
const char *tu_bench_dir_wanted(void);

/* Reads a whole file; NULL on error. Free with free(). */
char *tu_read_file(const char *path, size_t *len);

/* Loads <dir>/<name> (.map) into a grid; NULL on error. */
pf_grid *tu_load_map(const char *dir, const char *name);

/* Loads the scenario file <dir>/<file> into *sc (free with pf_scen_free)
 * and returns its map, found by basename beside it (free with
 * pf_grid_destroy). Fails the test when either cannot be read. */
pf_grid *tu_load_scen(const char *dir, const char *file, pf_scen *sc);

/* The shared maps: names of the .scen files in the bench dir, sorted, NULL
 * terminated; free with tu_free_list. */
char **tu_list_scen(const char *dir);
void tu_free_list(char **list);

/* A published version of a small open map, for the table tests. */
pf_mapver *tu_small_mapver(pf_registry *reg, const char *id);

/* Takes w's buffer as a NUL-terminated string (free() it); fails the test
 * when the writer failed. */
char *tu_jsonw_text(pf_jsonw *w);

#endif
