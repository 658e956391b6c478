/* test_bench.c -- the benchmark harness: the built pathd-bench binary run on
 * a small scenario file written to a temporary folder (JSON fields, exit
 * codes), and the in-process runner's query selection and percentiles. */
#include <cJSON.h>
#include <check.h>
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hist.h"
#include "http_parse.h"
#include "itest.h"
#include "loadgen.h"
#include "map_io.h"
#include "map_json.h"
#include "planner.h"
#include "report.h"
#include "scen.h"
#include "testutil.h"

/* A 12x8 map with a wall that forces detours, and a pocket of trees. */
static const char *const tiny_rows[] = {"............", "..@@@@@@@...", "........@...",
                                        ".@@@....@...", ".@......@.TT", ".@..@@@@@.TT",
                                        ".@..........", "............"};
#define TINY_H 8
#define TINY_W 12

typedef struct fixture {
    char dir[64];
    char map_path[128];
    char scen_path[128];
    int nqueries;
} fixture;

/* The queries of the tiny scenario; optima come from the reference search. */
static const pf_point tiny_q[][2] = {{{0, 0}, {11, 0}}, {{0, 0}, {5, 2}}, {{0, 7}, {11, 7}},
                                     {{2, 4}, {9, 6}},  {{5, 4}, {0, 0}}, {{4, 3}, {4, 3}},
                                     {{11, 3}, {0, 6}}, {{9, 4}, {2, 2}}};
#define TINY_NQ ((int)(sizeof(tiny_q) / sizeof(tiny_q[0])))

/* Writes tiny.map and tiny.map.scen into a fresh temporary folder; the
 * optimum of query `wrong` (-1 for none) is written off by `delta`. */
static void fixture_make_off(fixture *fx, int wrong, double delta) {
    FILE *f;
    pf_grid *g;
    pf_parse_error err;
    char *text;
    size_t len;

    memset(fx, 0, sizeof(*fx));
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/pathd-test-bench-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(fx->dir));
    snprintf(fx->map_path, sizeof(fx->map_path), "%s/tiny.map", fx->dir);
    snprintf(fx->scen_path, sizeof(fx->scen_path), "%s/tiny.map.scen", fx->dir);
    f = fopen(fx->map_path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "type octile\nheight %d\nwidth %d\nmap\n", TINY_H, TINY_W);
    for (int y = 0; y < TINY_H; y++) fprintf(f, "%s\n", tiny_rows[y]);
    fclose(f);

    text = tu_read_file(fx->map_path, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(pf_map_parse_movingai(text, len, NULL, &g, &err), PF_OK);
    free(text);
    f = fopen(fx->scen_path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "version 1\n");
    for (int i = 0; i < TINY_NQ; i++) {
        double opt = tu_reference_cost(g, tiny_q[i][0], tiny_q[i][1]);
        ck_assert_double_ge(opt, 0);
        if (i == wrong) opt += delta;
        /* The map field as some shared files write it: a path whose basename
         * is the map beside the .scen file. */
        fprintf(f, "%d\tmaps/test/tiny.map\t%d\t%d\t%d\t%d\t%d\t%d\t%.8f\n", (int)(opt / 4), TINY_W,
                TINY_H, tiny_q[i][0].x, tiny_q[i][0].y, tiny_q[i][1].x, tiny_q[i][1].y, opt);
    }
    fclose(f);
    pf_grid_destroy(g);
    fx->nqueries = TINY_NQ;
}

static void fixture_make(fixture *fx) { fixture_make_off(fx, -1, 0.0); }

static void fixture_remove(fixture *fx) {
    unlink(fx->scen_path);
    unlink(fx->map_path);
    rmdir(fx->dir);
}

/* The built binary: PATHD_BENCH_BIN (set by `make test-run`), else
 * build/pathd-bench. NULL when neither exists. */
static const char *bench_bin(void) {
    const char *b = getenv("PATHD_BENCH_BIN");
    if (b && *b && access(b, X_OK) == 0) return b;
    if (access("build/pathd-bench", X_OK) == 0) return "build/pathd-bench";
    return NULL;
}

/* Skips the running test (a failure under CI) without the binary. */
#define NEED_BENCH_BIN(bin)                                                                        \
    do {                                                                                           \
        if (!(bin))                                                                                \
            TU_SKIP_UNLESS_CI("pathd-bench binary not found (set PATHD_BENCH_BIN, or make "        \
                              "build/pathd-bench)");                                               \
    } while (0)

/* Runs `bin args` and returns its exit status; stdout goes to out[0..cap). */
static int run_bench(const char *bin, const char *args, char *out, size_t cap) {
    char cmd[1024];
    FILE *p;
    size_t n = 0, got;
    int status;
    snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", bin, args);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    while (n + 1 < cap && (got = fread(out + n, 1, cap - 1 - n, p)) > 0) n += got;
    out[n] = '\0';
    status = pclose(p);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static const char *const required_keys[] = {
    "map",        "algorithm", "queries", "mismatches",    "mean_subopt",
    "max_subopt", "p50_us",    "p99_us",  "mean_expanded", "ns_per_expansion",
    "requests",   "errors",    "rps",     "p50_ms",        "p90_ms",
    "p99_ms",     "p999_ms",   "max_ms",  "invalid"};

static cJSON *parse_line(const char *line) {
    cJSON *o = cJSON_ParseWithLength(line, strlen(line));
    ck_assert_msg(o != NULL, "not JSON: %s", line);
    for (size_t i = 0; i < sizeof(required_keys) / sizeof(required_keys[0]); i++)
        ck_assert_msg(cJSON_HasObjectItem(o, required_keys[i]), "key %s missing in %s",
                      required_keys[i], line);
    return o;
}

static double num(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsNumber(v), "%s is not a number", key);
    return v->valuedouble;
}

START_TEST(bench_scen_json_fields_and_exit_zero) {
    const char *bin = bench_bin();
    fixture fx;
    char args[512], out[8192];
    cJSON *o;
    NEED_BENCH_BIN(bin);
    fixture_make(&fx);
    snprintf(args, sizeof(args), "scen --algorithm astar --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    /* One object, on one line. */
    ck_assert_ptr_nonnull(strchr(out, '\n'));
    ck_assert_str_eq(strchr(out, '\n'), "\n");
    o = parse_line(out);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "map")->valuestring, "tiny");
    ck_assert_str_eq(cJSON_GetObjectItem(o, "algorithm")->valuestring, "astar");
    ck_assert_int_eq((int)num(o, "queries"), fx.nqueries);
    ck_assert_int_eq((int)num(o, "requests"), fx.nqueries);
    ck_assert_int_eq((int)num(o, "mismatches"), 0);
    ck_assert_int_eq((int)num(o, "invalid"), 0);
    ck_assert_int_eq((int)num(o, "errors"), 0);
    ck_assert_double_eq_tol(num(o, "mean_subopt"), 0.0, 1e-12);
    ck_assert_double_eq_tol(num(o, "max_subopt"), 0.0, 1e-12);
    ck_assert_double_gt(num(o, "p50_us"), 0.0);
    ck_assert_double_ge(num(o, "p99_us"), num(o, "p50_us"));
    ck_assert_double_ge(num(o, "max_ms") * 1000.0, num(o, "p99_us") - 1e-9);
    ck_assert_double_gt(num(o, "mean_expanded"), 1.0);
    ck_assert_double_gt(num(o, "ns_per_expansion"), 0.0);
    cJSON_Delete(o);

    /* --max-queries keeps that many. */
    snprintf(args, sizeof(args), "scen --max-queries 3 --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    o = parse_line(out);
    ck_assert_int_eq((int)num(o, "queries"), 3);
    cJSON_Delete(o);
    fixture_remove(&fx);
}
END_TEST

START_TEST(bench_scen_wrong_optimum_exits_nonzero) {
    const char *bin = bench_bin();
    fixture fx;
    char args[512], out[8192];
    cJSON *o;
    NEED_BENCH_BIN(bin);

    /* Listed optimum too high: dijkstra "misses" it and its answer is below
     * the optimum, which no algorithm can do. */
    fixture_make_off(&fx, 3, 1.0);
    snprintf(args, sizeof(args), "scen --algorithm dijkstra --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 1);
    o = parse_line(out);
    ck_assert_int_eq((int)num(o, "mismatches"), 1);
    ck_assert_int_eq((int)num(o, "invalid"), 1);
    ck_assert_double_eq_tol(num(o, "max_subopt"), 0.0, 1e-12);
    cJSON_Delete(o);
    fixture_remove(&fx);

    /* Listed optimum too low: an optimal algorithm fails the run ... */
    fixture_make_off(&fx, 3, -1.0);
    snprintf(args, sizeof(args), "scen --algorithm astar --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 1);
    o = parse_line(out);
    ck_assert_int_eq((int)num(o, "mismatches"), 1);
    ck_assert_int_eq((int)num(o, "invalid"), 0);
    ck_assert_double_gt(num(o, "max_subopt"), 0.0);
    cJSON_Delete(o);
    /* ... greedy, which promises nothing, does not. */
    snprintf(args, sizeof(args), "scen --algorithm greedy --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    o = parse_line(out);
    ck_assert_int_ge((int)num(o, "mismatches"), 1);
    ck_assert_int_eq((int)num(o, "invalid"), 0);
    cJSON_Delete(o);
    fixture_remove(&fx);
}
END_TEST

START_TEST(bench_scen_bad_input_exits_two) {
    const char *bin = bench_bin();
    fixture fx;
    char args[512], out[8192];
    NEED_BENCH_BIN(bin);
    fixture_make(&fx);
    unlink(fx.map_path); /* the map beside the scenario is gone */
    snprintf(args, sizeof(args), "scen --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "scen --algorithm nosuch x.scen", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "frobnicate", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "--help", out, sizeof(out)), 0);
    ck_assert_ptr_nonnull(strstr(out, "--compare"));
    fixture_remove(&fx);
}
END_TEST

START_TEST(bench_scen_compare_prints_ratio) {
    const char *bin = bench_bin();
    fixture fx;
    char args[512], out[8192];
    NEED_BENCH_BIN(bin);
    fixture_make(&fx);
    snprintf(args, sizeof(args), "scen --compare dijkstra,astar --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"algorithm\":\"dijkstra\""));
    ck_assert_ptr_nonnull(strstr(out, "\"algorithm\":\"astar\""));
    ck_assert_ptr_nonnull(strstr(out, "\"p50_ratio\":"));
    fixture_remove(&fx);
}
END_TEST

/* --per-query FILE: a header, then one line per query and algorithm, each
 * naming its entry's index in the .scen file so an outside harness can line
 * the queries up: its bucket, ends and optimum are that entry's (checked
 * against the fixture's own list), its cost is the optimum (astar and jps
 * are exact here), its time and expansions are there. With --max-queries
 * the ids are the entries the selection rule keeps (floor(k n / N)). An
 * unwritable file is a usage error. */
START_TEST(bench_scen_per_query_lines_up) {
    const char *bin = bench_bin();
    fixture fx;
    char args[768], out[8192], path[160], line[512];
    int rows = 0, seen[2][TINY_NQ];
    FILE *f;
    NEED_BENCH_BIN(bin);
    fixture_make(&fx);
    memset(seen, 0, sizeof(seen));
    snprintf(path, sizeof(path), "%s/per-query.tsv", fx.dir);
    snprintf(args, sizeof(args), "scen --compare astar,jps --block 3 --per-query '%s' '%s'", path,
             fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    ck_assert_str_eq(line, "map\talgorithm\tid\tbucket\tstart_x\tstart_y\tgoal_x\tgoal_y\t"
                           "expanded\ttime_us\tcost\toptimal\tran\tstatus\n");
    while (fgets(line, sizeof(line), f)) {
        char map[32], algo[16], ran[16], status[32];
        int id, bucket, sx, sy, gx, gy, k;
        unsigned long long expanded;
        double us, cost, optimal;
        ck_assert_int_eq(sscanf(line, "%31s %15s %d %d %d %d %d %d %llu %lf %lf %lf %15s %31s", map,
                                algo, &id, &bucket, &sx, &sy, &gx, &gy, &expanded, &us, &cost,
                                &optimal, ran, status),
                         14);
        ck_assert_str_eq(map, "tiny");
        k = strcmp(algo, "astar") == 0 ? 0 : 1;
        ck_assert(k == 0 || strcmp(algo, "jps") == 0);
        ck_assert_int_ge(id, 0);
        ck_assert_int_lt(id, TINY_NQ);
        seen[k][id]++;
        ck_assert_int_eq(sx, tiny_q[id][0].x);
        ck_assert_int_eq(sy, tiny_q[id][0].y);
        ck_assert_int_eq(gx, tiny_q[id][1].x);
        ck_assert_int_eq(gy, tiny_q[id][1].y);
        ck_assert_int_eq(bucket, (int)(optimal / 4));
        ck_assert_double_eq_tol(cost, optimal, 1e-6);
        ck_assert_str_eq(status, "ok");
        ck_assert(us >= 0);
        ck_assert(expanded >= 1 || (sx == gx && sy == gy));
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(rows, 2 * TINY_NQ);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < TINY_NQ; i++) ck_assert_int_eq(seen[k][i], 1);
    /* The selection's ids. */
    snprintf(args, sizeof(args), "scen --max-queries 3 --per-query '%s' '%s'", path, fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    for (int k = 0; k < 3; k++) {
        int id;
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
        ck_assert_int_eq(sscanf(line, "%*s %*s %d", &id), 1);
        ck_assert_int_eq(id, k * TINY_NQ / 3);
    }
    ck_assert_ptr_null(fgets(line, sizeof(line), f));
    fclose(f);
    unlink(path);
    snprintf(args, sizeof(args), "scen --per-query /nonexistent-dir/x.tsv '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 2);
    fixture_remove(&fx);
}
END_TEST

/* A flat 20 x 20 floor cut by a wall 14 long (paths go round its end) and
 * a 6 x 6 island 6 away from it (goals there are unreachable), as OBJ text. */
static void write_island_obj(const char *path) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    /* floor 1-4, island 5-8: corners (x0,z0) (x0,z1) (x1,z1) (x1,z0), up */
    fputs("v 0 0 0\nv 0 0 20\nv 20 0 20\nv 20 0 0\n"
          "v 26 0 0\nv 26 0 6\nv 32 0 6\nv 32 0 0\n"
          "f 1 2 3 4\nf 5 6 7 8\n",
          f);
    /* the wall: x 9.5..10.5, z 0..14, y 0..3, vertices 9-16 */
    for (int i = 0; i < 8; i++)
        fprintf(f, "v %g %g %g\n", i & 1 ? 10.5 : 9.5, i & 4 ? 3.0 : 0.0, i & 2 ? 14.0 : 0.0);
    fputs("f 13 15 16 14\nf 9 13 14 10\nf 10 14 16 12\nf 12 16 15 11\nf 11 15 13 9\n", f);
    fclose(f);
}

/* One line of navmesh --per-query. */
typedef struct nq_line {
    char level[64], source[16], algo[16], status[16], dstatus[16];
    int pair;
    double length, us, dlength, dus;
    unsigned expanded, polygons, dexpanded, dpolygons;
} nq_line;

static bool nq_parse(const char *line, nq_line *q) {
    return sscanf(line,
                  "%63s %d %15s %*f %*f %*f %*f %*f %*f %15s %15s %lf %u %u %lf %15s %lf %u %u "
                  "%lf",
                  q->level, &q->pair, q->source, q->algo, q->status, &q->length, &q->expanded,
                  &q->polygons, &q->us, q->dstatus, &q->dlength, &q->dexpanded, &q->dpolygons,
                  &q->dus) == 14;
}

static int json_int(const char *out, const char *key) {
    char k[64];
    snprintf(k, sizeof(k), "\"%s\":", key);
    const char *p = strstr(out, k);
    ck_assert_msg(p != NULL, "%s missing", key);
    return atoi(p + strlen(k));
}

/* navmesh on an OBJ level: the JSON's pair counts and the --per-query
 * lines agree one by one. Every pair has a polyanya line and a detour line
 * with the same Detour-direct columns; pathd's status is Detour direct's on
 * every line (reached, partial); the reachable and unreachable counts are
 * the Detour-direct statuses counted; the --unreachable pairs are partial;
 * on this flat level polyanya is never longer than Detour's funnelled path
 * and pathd detour is Detour's path (same corridor search). Counts and
 * lengths only: no time is asserted. */
START_TEST(bench_navmesh_per_query_lines_up) {
    const char *bin = bench_bin();
    char dir[64], obj[128], pq[128], args[512], line[1024];
    static char out[65536];
    NEED_BENCH_BIN(bin);
    snprintf(dir, sizeof(dir), "/tmp/pathd-test-navbench-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(obj, sizeof(obj), "%s/island.obj", dir);
    snprintf(pq, sizeof(pq), "%s/pq.tsv", dir);
    write_island_obj(obj);
    snprintf(args, sizeof(args),
             "navmesh --json --max-queries 30 --unreachable 4 --seed 7 --per-query '%s' '%s'", pq,
             obj);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    int pairs = json_int(out, "pairs"), reachable = json_int(out, "reachable"),
        unreachable = json_int(out, "unreachable");
    ck_assert_int_eq(pairs, 34);
    ck_assert_int_eq(json_int(out, "blocked"), 0);
    ck_assert_int_eq(reachable + unreachable, pairs);
    ck_assert_int_ge(unreachable, 4);
    ck_assert_int_ge(reachable, 1);
    ck_assert_int_eq(json_int(out, "polyanya_disagree"), 0);
    ck_assert_int_eq(json_int(out, "detour_disagree"), 0);

    FILE *f = fopen(pq, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    ck_assert_str_eq(line, "level\tpair\tsource\tstart_x\tstart_y\tstart_z\tgoal_x\tgoal_y\t"
                           "goal_z\talgorithm\tstatus\tlength\texpanded\tpolygons\ttime_us\t"
                           "detour_direct_status\tdetour_direct_length\tdetour_direct_expanded\t"
                           "detour_direct_polygons\tdetour_direct_time_us\n");
    int rows = 0, seen[34][2], ok = 0, partial = 0, from_unreachable = 0, bad = 0;
    nq_line prev;
    memset(seen, 0, sizeof(seen));
    memset(&prev, 0, sizeof(prev));
    while (fgets(line, sizeof(line), f)) {
        nq_line q;
        ck_assert_msg(nq_parse(line, &q), "unparsed line: %s", line);
        ck_assert_str_eq(q.level, "island.obj");
        ck_assert_int_ge(q.pair, 0);
        ck_assert_int_lt(q.pair, pairs);
        int a = strcmp(q.algo, "polyanya") == 0 ? 0 : strcmp(q.algo, "detour") == 0 ? 1 : -1;
        ck_assert_int_ge(a, 0);
        seen[q.pair][a]++;
        /* pathd answers as Detour does */
        if (strcmp(q.status, q.dstatus) != 0) bad++;
        ck_assert_msg(strcmp(q.dstatus, "ok") == 0 || strcmp(q.dstatus, "partial") == 0,
                      "pair %d: %s", q.pair, q.dstatus);
        if (a == 0) {
            ok += strcmp(q.dstatus, "ok") == 0;
            partial += strcmp(q.dstatus, "partial") == 0;
            if (strcmp(q.source, "unreachable") == 0) {
                from_unreachable++;
                ck_assert_str_eq(q.dstatus, "partial");
            } else {
                ck_assert_str_eq(q.source, "random");
            }
            if (strcmp(q.status, "ok") == 0)
                ck_assert_msg(q.length <= q.dlength * 1.001 + 1e-3, "pair %d: polyanya %f > %f",
                              q.pair, q.length, q.dlength);
        } else {
            /* the line after its pair's polyanya line: the same Detour columns */
            ck_assert_int_eq(prev.pair, q.pair);
            ck_assert_str_eq(prev.dstatus, q.dstatus);
            ck_assert_double_eq(prev.dlength, q.dlength);
            ck_assert_double_eq(prev.dus, q.dus);
            ck_assert_int_eq(prev.dexpanded, q.dexpanded);
            if (strcmp(q.status, "ok") == 0) {
                ck_assert_double_eq_tol(q.length, q.dlength, 0.01 * q.dlength + 1e-3);
                ck_assert_int_eq(q.polygons, q.dpolygons);
            }
        }
        ck_assert_uint_ge(q.dexpanded, 1);
        ck_assert_uint_ge(q.dpolygons, 1);
        if (q.polygons > 1) ck_assert_uint_ge(q.expanded, 1); /* one polygon: no search */
        ck_assert(q.us >= 0 && q.dus >= 0);
        prev = q;
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(rows, 2 * pairs);
    for (int i = 0; i < pairs; i++) {
        ck_assert_int_eq(seen[i][0], 1);
        ck_assert_int_eq(seen[i][1], 1);
    }
    ck_assert_int_eq(ok, reachable);
    ck_assert_int_eq(partial, unreachable);
    ck_assert_int_eq(from_unreachable, 4);

    /* Bad levels and files: usage errors. */
    snprintf(args, sizeof(args), "navmesh --per-query /nonexistent-dir/x.tsv '%s'", obj);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "navmesh gen:nosuch", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "navmesh /nonexistent.obj", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "navmesh --max-nodes 0 gen:terrain", out, sizeof(out)), 2);
    unlink(pq);
    unlink(obj);
    rmdir(dir);
}
END_TEST

/* The generated levels and RecastDemo's nav_test.obj (PATHD_MESH_DIR, read
 * in place) run side by side with Detour direct and agree with it pair by
 * pair; nav_test.obj brings its 21 test cases (nav_mesh_test.txt) first. */
START_TEST(bench_navmesh_levels_agree_with_detour) {
    const char *bin = bench_bin();
    char args[2600], pq[64] = "/tmp/pathd-test-navlevels-XXXXXX", line[1024];
    static char out[65536];
    NEED_BENCH_BIN(bin);
    const char *mesh = getenv("PATHD_MESH_DIR");
    char dflt[1100];
    if (!mesh) {
        snprintf(dflt, sizeof(dflt), "%s/../meshes", tu_bench_dir_wanted());
        mesh = dflt;
    }
    char objpath[1200];
    snprintf(objpath, sizeof(objpath), "%s/nav_test.obj", mesh);
    if (access(objpath, R_OK) != 0)
        TU_SKIP_UNLESS_CI("no nav_test.obj in ../shared/benchmarks/meshes (PATHD_MESH_DIR)");
    int fd = mkstemp(pq);
    ck_assert_int_ge(fd, 0);
    close(fd);
    snprintf(args, sizeof(args),
             "navmesh --json --max-queries 6 --unreachable 2 --per-query '%s' gen:multifloor "
             "gen:terrain '%s'",
             pq, objpath);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    int levels = 0;
    for (const char *p = out; (p = strstr(p, "{\"mode\":\"navmesh\"")); p++) {
        ck_assert_int_eq(json_int(p, "polyanya_disagree"), 0);
        ck_assert_int_eq(json_int(p, "detour_disagree"), 0);
        ck_assert_int_eq(json_int(p, "reachable") + json_int(p, "unreachable"),
                         json_int(p, "pairs"));
        ck_assert_int_eq(json_int(p, "unreachable") >= 2, 1);
        levels++;
    }
    ck_assert_int_eq(levels, 3);
    FILE *f = fopen(pq, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    int demo = 0, lines[3] = {0, 0, 0};
    while (fgets(line, sizeof(line), f)) {
        nq_line q;
        ck_assert_msg(nq_parse(line, &q), "unparsed line: %s", line);
        int k = strcmp(q.level, "gen:multifloor") == 0 ? 0
                : strcmp(q.level, "gen:terrain") == 0  ? 1
                : strcmp(q.level, "nav_test.obj") == 0 ? 2
                                                       : -1;
        ck_assert_int_ge(k, 0);
        lines[k]++;
        demo += strcmp(q.source, "demo") == 0;
    }
    fclose(f);
    unlink(pq);
    ck_assert_int_eq(lines[0], 2 * 8);
    ck_assert_int_eq(lines[1], 2 * 8);
    ck_assert_int_eq(lines[2], 2 * (21 + 8));
    ck_assert_int_eq(demo, 2 * 21);
}
END_TEST

/* Runs pathd-bench gen FAMILY --side 40 --param PARAM --seed SEED
 * --per-bucket 2 DIR/NAME; its exit status. */
static int run_gen(const char *bin, const char *family, int param, int seed, const char *dir,
                   const char *name) {
    char args[512], out[8192];
    snprintf(args, sizeof(args), "gen %s --side 40 --param %d --seed %d --per-bucket 2 '%s/%s'",
             family, param, seed, dir, name);
    return run_bench(bin, args, out, sizeof(out));
}

/* pathd-bench gen: for each family a Moving AI map and scenario file that
 * pathd-bench scen reads, whose optima agree with the tests' own reference
 * Dijkstra (tu_reference_cost) and whose buckets are floor(optimum / 4);
 * the same seed gives the same files, another seed another map. */
START_TEST(bench_gen_maps_and_optima) {
    static const struct {
        const char *family;
        int param;
    } families[] = {{"maze", 2}, {"rooms", 6}, {"random", 25}};
    const char *bin = bench_bin();
    char dir[] = "/tmp/pathd-test-gen-XXXXXX", args[512], out[8192], path[256];
    NEED_BENCH_BIN(bin);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (int f = 0; f < 3; f++) {
        const char *fam = families[f].family;
        int param = families[f].param;
        pf_scen sc;
        pf_grid *g;
        char *a, *b;
        size_t la, lb;
        ck_assert_int_eq(run_gen(bin, fam, param, 3, dir, "m"), 0);
        g = tu_load_scen(dir, "m.map.scen", &sc);
        ck_assert_int_gt((int)sc.count, 10);
        for (size_t i = 0; i < sc.count; i++) {
            const pf_scen_entry *e = &sc.entries[i];
            double ref = tu_reference_cost(g, e->start, e->goal);
            ck_assert_msg(fabs(ref - e->optimal) < 1e-6, "%s entry %zu: %f against %f", fam, i,
                          e->optimal, ref);
            ck_assert_int_eq(e->bucket, (int)(e->optimal / 4));
            ck_assert(i == 0 || sc.entries[i - 1].bucket <= e->bucket);
        }
        pf_scen_free(&sc);
        pf_grid_destroy(g);
        /* pathd-bench scen reads it, every answer optimal. */
        snprintf(args, sizeof(args), "scen --algorithm jps '%s/m.map.scen'", dir);
        ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
        /* Deterministic per seed. */
        snprintf(path, sizeof(path), "%s/m.map", dir);
        a = tu_read_file(path, &la);
        ck_assert_int_eq(run_gen(bin, fam, param, 3, dir, "n"), 0);
        snprintf(path, sizeof(path), "%s/n.map", dir);
        b = tu_read_file(path, &lb);
        ck_assert(a && b && la == lb && memcmp(a, b, la) == 0);
        free(b);
        ck_assert_int_eq(run_gen(bin, fam, param, 4, dir, "n"), 0);
        b = tu_read_file(path, &lb);
        ck_assert(b && (la != lb || memcmp(a, b, la) != 0));
        free(a);
        free(b);
        for (int k = 0; k < 4; k++) {
            snprintf(path, sizeof(path), "%s/%s", dir,
                     (const char *const[]){"m.map", "m.map.scen", "n.map", "n.map.scen"}[k]);
            unlink(path);
        }
    }
    ck_assert_int_eq(run_bench(bin, "gen cave /tmp/x", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "gen maze --param 0 /tmp/x", out, sizeof(out)), 2);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* jps variants and auto: jps:LAYOUT[+nodirect] runs and names its rows
 * (the reference, scans without direct answers, optimal too), a variant of
 * another algorithm or an unknown layout is a usage error; auto says what
 * it ran in the note and fails the run only when an exact answer misses
 * the optimum; --compare with --block interleaves and still counts every
 * query once per side. */
START_TEST(bench_scen_variants_auto_and_blocks) {
    const char *bin = bench_bin();
    fixture fx;
    char args[512], out[8192];
    cJSON *o;
    NEED_BENCH_BIN(bin);
    fixture_make(&fx);
    snprintf(args, sizeof(args), "scen --algorithm jps:scan+nodirect --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    o = parse_line(out);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "algorithm")->valuestring, "jps:scan+nodirect");
    ck_assert_int_eq((int)num(o, "mismatches"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "jps_layout")->valuestring, "scan");
    cJSON_Delete(o);
    ck_assert_int_eq(run_bench(bin, "scen --algorithm astar:tables x.scen", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "scen --algorithm jps:fast x.scen", out, sizeof(out)), 2);
    snprintf(args, sizeof(args), "scen --algorithm auto --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    o = parse_line(out);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "algorithm")->valuestring, "auto");
    ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(o, "note")->valuestring, "ran "));
    cJSON_Delete(o);
    snprintf(args, sizeof(args), "scen --compare jps:bits,jps:tables --block 2 --json '%s'",
             fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"algorithm\":\"jps:bits\""));
    ck_assert_ptr_nonnull(strstr(out, "\"algorithm\":\"jps:tables\""));
    o = parse_line(out);
    ck_assert_int_eq((int)num(o, "queries"), fx.nqueries);
    cJSON_Delete(o);
    o = parse_line(strchr(out, '\n') + 1);
    ck_assert_int_eq((int)num(o, "queries"), fx.nqueries);
    cJSON_Delete(o);
    ck_assert_int_eq(run_bench(bin, "scen --block 0 x.scen", out, sizeof(out)), 2);
    fixture_remove(&fx);
}
END_TEST

/* In-process: the selection spreads over the file and the bucket filter
 * keeps only the longest buckets. */
START_TEST(bench_scen_selection_spread_and_buckets) {
    fixture fx;
    pf_bench_scen *s;
    pf_bench_scen_opts o;
    const pf_scen_entry *e;
    size_t n;
    char err[256];
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_report r;

    fixture_make(&fx);
    memset(&o, 0, sizeof(o));
    o.max_queries = 4;
    ck_assert_int_eq(pf_bench_scen_load(fx.scen_path, &o, &s, err, sizeof(err)), PF_OK);
    e = pf_bench_scen_entries(s, &n);
    ck_assert_uint_eq(n, 4);
    /* Entries 0, 2, 4, 6 of 8. */
    for (size_t k = 0; k < 4; k++) {
        ck_assert_int_eq(e[k].start.x, tiny_q[2 * k][0].x);
        ck_assert_int_eq(e[k].start.y, tiny_q[2 * k][0].y);
    }
    ck_assert_int_eq(pf_bench_scen_run(s, ctx, PF_ALGO_ASTAR, &r), PF_OK);
    ck_assert_uint_eq(r.queries, 4);
    ck_assert_uint_eq(r.mismatches, 0);
    ck_assert_uint_eq(r.checked, 4);
    pf_bench_scen_destroy(s);

    memset(&o, 0, sizeof(o));
    o.min_bucket_frac = 0.75;
    ck_assert_int_eq(pf_bench_scen_load(fx.scen_path, &o, &s, err, sizeof(err)), PF_OK);
    e = pf_bench_scen_entries(s, &n);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_lt(n, (size_t)fx.nqueries);
    {
        int32_t maxb = 0;
        for (size_t k = 0; k < n; k++)
            if (e[k].bucket > maxb) maxb = e[k].bucket;
        for (size_t k = 0; k < n; k++)
            ck_assert_int_ge(e[k].bucket, (int32_t)floor(0.75 * (maxb + 1)));
    }
    pf_bench_scen_destroy(s);
    fixture_remove(&fx);
    pf_search_ctx_destroy(ctx);
}
END_TEST

START_TEST(bench_report_percentile_nearest_rank) {
    const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    ck_assert(isnan(pf_report_percentile(v, 0, 50)));
    ck_assert_double_eq(pf_report_percentile(v, 10, 50), 5);
    ck_assert_double_eq(pf_report_percentile(v, 10, 99), 10);
    ck_assert_double_eq(pf_report_percentile(v, 10, 0), 1);
    ck_assert_double_eq(pf_report_percentile(v, 10, 100), 10);
    ck_assert_double_eq(pf_report_percentile(v, 1, 99.9), 1);
}
END_TEST

/* Every value lands in a bucket whose upper end is within 1/64 above it,
 * and bucket ends increase. */
START_TEST(bench_hist_bucket_bounds) {
    uint64_t seed = tu_seed("bench_hist_bucket_bounds", 7), st = seed;
    uint64_t prev = 0;
    for (uint32_t b = 1; b < PF_HIST_BUCKETS; b++) {
        uint64_t m = pf_hist_bucket_max(b);
        ck_assert_uint_gt(m, prev);
        ck_assert_uint_eq(pf_hist_bucket(m), b);
        ck_assert_uint_eq(pf_hist_bucket(prev + 1), b);
        prev = m;
    }
    ck_assert_uint_eq(prev, UINT64_MAX);
    for (int i = 0; i < 100000; i++) {
        uint64_t v = tu_rand(&st) >> tu_below(&st, 64);
        uint32_t b = pf_hist_bucket(v);
        uint64_t m = pf_hist_bucket_max(b);
        ck_assert_uint_ge(m, v);
        ck_assert_msg((double)(m - v) <= (double)v / 64.0 + 1.0, "v %llu bucket max %llu",
                      (unsigned long long)v, (unsigned long long)m);
    }
}
END_TEST

/* Percentiles of a known distribution (1..100000 ns, each once), within the
 * histogram's resolution, and merging equals recording into one. */
START_TEST(bench_hist_percentiles_and_merge) {
    pf_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *all = malloc(sizeof(*all));
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(all);
    pf_hist_init(a);
    pf_hist_init(b);
    pf_hist_init(all);
    ck_assert_uint_eq(pf_hist_percentile(a, 50), 0);
    for (uint64_t v = 1; v <= 100000; v++) {
        pf_hist_record(v % 2 ? a : b, v);
        pf_hist_record(all, v);
    }
    pf_hist_merge(a, b);
    ck_assert_uint_eq(a->total, 100000);
    ck_assert_uint_eq(a->min, 1);
    ck_assert_uint_eq(a->max, 100000);
    for (double p = 1; p <= 100; p += 0.7) {
        double exact = ceil(p / 100.0 * 100000.0);
        uint64_t got = pf_hist_percentile(a, p);
        ck_assert_uint_eq(got, pf_hist_percentile(all, p));
        ck_assert_msg(got >= exact && (double)got <= exact * (1 + 1.0 / 64) + 1,
                      "p%.1f: %llu vs %.0f", p, (unsigned long long)got, exact);
    }
    ck_assert_uint_eq(pf_hist_percentile(a, 100), 100000);
    ck_assert_double_eq_tol(pf_hist_mean(a), 50000.5, 1e-6);
    free(a);
    free(b);
    free(all);
}
END_TEST

/* Feeds `text` to the parser in pieces of `step` bytes; returns the bytes
 * used up to the end of the first response. */
static size_t feed_in_steps(pf_http_resp *r, const char *text, size_t step, pf_http_feed *last) {
    size_t len = strlen(text), off = 0;
    *last = PF_HTTP_MORE;
    while (off < len) {
        size_t n = len - off < step ? len - off : step, used = 0;
        *last = pf_http_resp_feed(r, text + off, n, &used);
        off += used;
        if (*last != PF_HTTP_MORE) break;
        ck_assert_uint_eq(used, n);
    }
    return off;
}

START_TEST(bench_http_parse_content_length_any_split) {
    const char *two = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      "content-length: 14\r\n\r\n{\"found\":true}"
                      "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\n"
                      "Content-Length: 0\r\nConnection: close\r\n\r\n";
    size_t first_len = strstr(two, "}HTTP") - two + 1;
    for (size_t step = 1; step <= strlen(two); step++) {
        pf_http_resp r;
        pf_http_feed f;
        size_t used;
        pf_http_resp_init(&r, true, 1024);
        used = feed_in_steps(&r, two, step, &f);
        ck_assert_int_eq(f, PF_HTTP_DONE);
        ck_assert_uint_eq(used, first_len);
        ck_assert_int_eq(r.status, 200);
        ck_assert(r.keep_alive);
        ck_assert_str_eq(r.body, "{\"found\":true}");
        pf_http_resp_reset(&r);
        used = feed_in_steps(&r, two + first_len, step, &f);
        ck_assert_int_eq(f, PF_HTTP_DONE);
        ck_assert_uint_eq(used, strlen(two) - first_len);
        ck_assert_int_eq(r.status, 503);
        ck_assert_int_eq(r.retry_after, 2);
        ck_assert(!r.keep_alive);
        ck_assert_uint_eq(r.body_len, 0);
        pf_http_resp_free(&r);
    }
}
END_TEST

START_TEST(bench_http_parse_chunked_and_eof) {
    const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n";
    pf_http_resp r;
    pf_http_feed f;
    for (size_t step = 1; step <= strlen(chunked); step++) {
        pf_http_resp_init(&r, true, 1024);
        ck_assert_uint_eq(feed_in_steps(&r, chunked, step, &f), strlen(chunked));
        ck_assert_int_eq(f, PF_HTTP_DONE);
        ck_assert_str_eq(r.body, "hello, world");
        pf_http_resp_free(&r);
    }
    /* HTTP/1.0 without a length: the body ends with the connection. */
    pf_http_resp_init(&r, true, 4);
    ck_assert_uint_eq(feed_in_steps(&r, "HTTP/1.0 200 OK\r\n\r\nabcdef", 3, &f), 25);
    ck_assert_int_eq(f, PF_HTTP_MORE);
    ck_assert_int_eq(pf_http_resp_eof(&r), PF_HTTP_DONE);
    ck_assert(!r.keep_alive);
    ck_assert_str_eq(r.body, "abcd"); /* kept up to the cap */
    ck_assert(r.body_truncated);
    ck_assert_uint_eq(r.body_len, 6);
    /* A response cut short is an error at EOF. */
    pf_http_resp_reset(&r);
    feed_in_steps(&r, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 100, &f);
    ck_assert_int_eq(f, PF_HTTP_MORE);
    ck_assert_int_eq(pf_http_resp_eof(&r), PF_HTTP_ERROR);
    /* 204 has no body even with a length. */
    pf_http_resp_reset(&r);
    feed_in_steps(&r, "HTTP/1.1 204 No Content\r\n\r\n", 100, &f);
    ck_assert_int_eq(f, PF_HTTP_DONE);
    pf_http_resp_free(&r);
}
END_TEST

START_TEST(bench_http_parse_rejects_garbage) {
    static const char *const bad[] = {
        "HTTX/1.1 200 OK\r\n\r\n",
        "HTTP/1.1 20 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        pf_http_resp r;
        pf_http_feed f;
        pf_http_resp_init(&r, false, 0);
        feed_in_steps(&r, bad[i], 1000, &f);
        ck_assert_msg(f == PF_HTTP_ERROR, "accepted: %s", bad[i]);
        pf_http_resp_free(&r);
    }
    {
        /* A header line longer than the line buffer. */
        char *big = malloc(PF_HTTP_LINE_MAX + 64);
        pf_http_resp r;
        pf_http_feed f;
        ck_assert_ptr_nonnull(big);
        strcpy(big, "HTTP/1.1 200 OK\r\nX: ");
        memset(big + strlen(big), 'a', PF_HTTP_LINE_MAX);
        big[PF_HTTP_LINE_MAX + 20] = '\0';
        pf_http_resp_init(&r, false, 0);
        feed_in_steps(&r, big, 1000, &f);
        ck_assert_int_eq(f, PF_HTTP_ERROR);
        free(big);
    }
}
END_TEST

START_TEST(bench_http_url_parse) {
    char host[64], prefix[64];
    int port;
    ck_assert_int_eq(pf_bench_parse_url("http://127.0.0.1:8080", host, sizeof(host), &port, prefix,
                                        sizeof(prefix)),
                     0);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_int_eq(port, 8080);
    ck_assert_str_eq(prefix, "");
    ck_assert_int_eq(pf_bench_parse_url("http://lb.local/pathd/", host, sizeof(host), &port, prefix,
                                        sizeof(prefix)),
                     0);
    ck_assert_str_eq(host, "lb.local");
    ck_assert_int_eq(port, 80);
    ck_assert_str_eq(prefix, "/pathd");
    ck_assert_int_eq(pf_bench_parse_url("http://[::1]:9000/x", host, sizeof(host), &port, prefix,
                                        sizeof(prefix)),
                     0);
    ck_assert_str_eq(host, "::1");
    ck_assert_int_eq(port, 9000);
    ck_assert_int_ne(
        pf_bench_parse_url("https://a:1", host, sizeof(host), &port, prefix, sizeof(prefix)), 0);
    ck_assert_int_ne(
        pf_bench_parse_url("http://a:0", host, sizeof(host), &port, prefix, sizeof(prefix)), 0);
    ck_assert_int_ne(
        pf_bench_parse_url("http://a:12x", host, sizeof(host), &port, prefix, sizeof(prefix)), 0);
    ck_assert_int_ne(
        pf_bench_parse_url("http://:80", host, sizeof(host), &port, prefix, sizeof(prefix)), 0);
}
END_TEST

/* A stub of the pathd HTTP API, enough for the load generator: map upload
 * and lookup, single path queries answered by the real planner, /healthz,
 * /v1/info and /metrics. With `lie` it adds 1 to every cost it reports. */
typedef struct stub {
    struct MHD_Daemon *d;
    int port;
    pthread_mutex_t mu;
    char map_id[64];
    pf_planner *planner;
    bool lie;
    int puts, paths;
} stub;

typedef struct stub_req {
    char *data;
    size_t len;
} stub_req;

static enum MHD_Result stub_reply(struct MHD_Connection *conn, unsigned code, const char *ctype,
                                  char *body) {
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result ret;
    MHD_add_response_header(r, "Content-Type", ctype);
    ret = MHD_queue_response(conn, code, r);
    MHD_destroy_response(r);
    return ret;
}

static char *stub_path_answer(stub *st, const char *data, size_t len, unsigned *code) {
    cJSON *q = cJSON_ParseWithLength(data, len), *out, *arr;
    const cJSON *s = q ? cJSON_GetObjectItem(q, "start") : NULL;
    const cJSON *g = q ? cJSON_GetObjectItem(q, "goal") : NULL;
    pf_search_ctx *ctx;
    pf_query query;
    pf_result res;
    char *text;
    if (!cJSON_IsArray(s) || !cJSON_IsArray(g)) {
        cJSON_Delete(q);
        *code = 400;
        return strdup("{\"error\":{\"code\":\"bad_request\",\"message\":\"start, goal\"}}");
    }
    query = pf_query_make((pf_point){(int32_t)cJSON_GetArrayItem(s, 0)->valuedouble,
                                     (int32_t)cJSON_GetArrayItem(s, 1)->valuedouble},
                          (pf_point){(int32_t)cJSON_GetArrayItem(g, 0)->valuedouble,
                                     (int32_t)cJSON_GetArrayItem(g, 1)->valuedouble},
                          PF_ALGO_ASTAR);
    cJSON_Delete(q);
    ctx = pf_search_ctx_create();
    pf_planner_search(ctx, st->planner, &query, &res);
    out = cJSON_CreateObject();
    cJSON_AddBoolToObject(out, "found", res.status == PF_OK);
    cJSON_AddNumberToObject(out, "cost", res.cost + (st->lie ? 1.0 : 0.0));
    arr = cJSON_AddArrayToObject(out, "path");
    for (size_t i = 0; i < res.path_len; i++) {
        cJSON *p = cJSON_CreateArray();
        cJSON_AddItemToArray(p, cJSON_CreateNumber(res.path[i].x));
        cJSON_AddItemToArray(p, cJSON_CreateNumber(res.path[i].y));
        cJSON_AddItemToArray(arr, p);
    }
    {
        cJSON *stats = cJSON_AddObjectToObject(out, "stats");
        cJSON_AddNumberToObject(stats, "expanded", (double)res.expanded);
        cJSON_AddNumberToObject(stats, "time_us", 1);
        cJSON_AddBoolToObject(stats, "cached", false);
    }
    text = cJSON_PrintUnformatted(out);
    cJSON_Delete(out);
    pf_search_ctx_destroy(ctx);
    *code = 200;
    return text;
}

static enum MHD_Result stub_handler(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version, const char *upload,
                                    size_t *upload_size, void **con_cls) {
    stub *st = cls;
    stub_req *rq = *con_cls;
    char mapurl[128], pathurl[160];
    (void)version;
    if (!rq) {
        *con_cls = calloc(1, sizeof(stub_req));
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*upload_size) {
        char *p = realloc(rq->data, rq->len + *upload_size + 1);
        if (!p) return MHD_NO;
        memcpy(p + rq->len, upload, *upload_size);
        rq->data = p;
        rq->len += *upload_size;
        rq->data[rq->len] = '\0';
        *upload_size = 0;
        return MHD_YES;
    }
    snprintf(mapurl, sizeof(mapurl), "/v1/maps/%s", "tiny");
    snprintf(pathurl, sizeof(pathurl), "/v1/maps/%s/path", "tiny");
    if (strcmp(url, "/healthz") == 0) return stub_reply(conn, 200, "text/plain", strdup("ok\n"));
    if (strcmp(url, "/v1/info") == 0)
        return stub_reply(conn, 200, "application/json", strdup("{\"version\":\"stub\"}"));
    if (strcmp(url, "/metrics") == 0)
        return stub_reply(conn, 200, "text/plain",
                          strdup("# TYPE stub_requests_total counter\n"
                                 "stub_requests_total{route=\"a\"} 2\n"
                                 "stub_requests_total{route=\"b\"} 3\n"));
    if (strcmp(url, mapurl) == 0 && strcmp(method, "GET") == 0) {
        bool have;
        pthread_mutex_lock(&st->mu);
        have = st->planner != NULL;
        pthread_mutex_unlock(&st->mu);
        return have ? stub_reply(conn, 200, "application/json", strdup("{\"id\":\"tiny\"}"))
                    : stub_reply(conn, 404, "application/json",
                                 strdup("{\"error\":{\"code\":\"not_found\",\"message\":\"no\"}}"));
    }
    if (strcmp(url, mapurl) == 0 && strcmp(method, "PUT") == 0) {
        pf_grid *g = NULL;
        pf_parse_error err;
        pf_planner *pl = NULL;
        pf_proto_error perr;
        /* The bench uploads JSON (rows, legend, doors); text stays accepted. */
        pf_status ps = !rq->data ? PF_EPARSE
                       : rq->data[0] == '{'
                           ? pf_map_json_parse(rq->data, rq->len, NULL, &g, &perr)
                           : pf_map_parse_movingai(rq->data, rq->len, NULL, &g, &err);
        if (ps != PF_OK || pf_planner_create(g, NULL, &pl) != PF_OK)
            return stub_reply(conn, 400, "application/json", strdup("{\"error\":{}}"));
        pthread_mutex_lock(&st->mu);
        pf_planner_destroy(st->planner);
        st->planner = pl;
        st->puts++;
        pthread_mutex_unlock(&st->mu);
        return stub_reply(conn, 201, "application/json", strdup("{\"id\":\"tiny\"}"));
    }
    if (strcmp(url, pathurl) == 0 && strcmp(method, "POST") == 0 && st->planner) {
        unsigned code;
        char *body = stub_path_answer(st, rq->data ? rq->data : "", rq->len, &code);
        pthread_mutex_lock(&st->mu);
        st->paths++;
        pthread_mutex_unlock(&st->mu);
        return stub_reply(conn, code, "application/json", body);
    }
    return stub_reply(conn, 404, "application/json", strdup("{\"error\":{\"code\":\"nf\"}}"));
}

static void stub_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe) {
    stub_req *rq = *con_cls;
    (void)cls, (void)conn, (void)toe;
    if (rq) free(rq->data);
    free(rq);
    *con_cls = NULL;
}

static void stub_start(stub *st, bool lie) {
    const union MHD_DaemonInfo *info;
    memset(st, 0, sizeof(*st));
    pthread_mutex_init(&st->mu, NULL);
    st->lie = lie;
    st->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
                             NULL, NULL, stub_handler, st, MHD_OPTION_NOTIFY_COMPLETED, stub_done,
                             st, MHD_OPTION_END);
    ck_assert_ptr_nonnull(st->d);
    info = MHD_get_daemon_info(st->d, MHD_DAEMON_INFO_BIND_PORT);
    ck_assert_ptr_nonnull(info);
    st->port = info->port;
    ck_assert_int_gt(st->port, 0);
}

/* The stub's counters, read under its lock (its connection threads write
 * them). */
static int stub_puts(stub *st) {
    int n;
    pthread_mutex_lock(&st->mu);
    n = st->puts;
    pthread_mutex_unlock(&st->mu);
    return n;
}

static int stub_paths(stub *st) {
    int n;
    pthread_mutex_lock(&st->mu);
    n = st->paths;
    pthread_mutex_unlock(&st->mu);
    return n;
}

static void stub_stop(stub *st) {
    MHD_stop_daemon(st->d);
    pf_planner_destroy(st->planner);
    pthread_mutex_destroy(&st->mu);
}

START_TEST(bench_http_closed_loop_against_stub) {
    const char *bin = bench_bin();
    fixture fx;
    stub st;
    char args[512], out[16384];
    cJSON *o, *srv;
    NEED_BENCH_BIN(bin);
    fixture_make(&fx);
    stub_start(&st, false);
    snprintf(args, sizeof(args),
             "http --url http://127.0.0.1:%d --scen '%s' --connections 3 --requests 40 "
             "--check-every 1 --quiet --json",
             st.port, fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    o = parse_line(out);
    ck_assert_int_eq(stub_puts(&st), 1); /* uploaded once, the server lacked it */
    ck_assert_int_eq((int)num(o, "requests"), 40);
    ck_assert_int_eq((int)num(o, "requests"), stub_paths(&st));
    ck_assert_int_eq((int)num(o, "errors"), 0);
    ck_assert_int_eq((int)num(o, "invalid"), 0);
    ck_assert_int_eq((int)num(o, "mismatches"), 0);
    ck_assert_int_eq((int)num(o, "checked"), (int)num(o, "queries"));
    ck_assert_double_gt(num(o, "rps"), 0);
    ck_assert_double_gt(num(o, "p50_ms"), 0);
    ck_assert_double_ge(num(o, "p99_ms"), num(o, "p50_ms"));
    ck_assert_double_ge(num(o, "max_ms"), num(o, "p999_ms"));
    {
        /* Only path requests were sent: one kind, every request in it. */
        const cJSON *kinds = cJSON_GetObjectItem(o, "latency_by_kind");
        const cJSON *path = cJSON_GetObjectItem(kinds, "path");
        ck_assert_ptr_nonnull(path);
        ck_assert_int_eq(cJSON_GetArraySize(kinds), 1);
        ck_assert_int_eq((int)num(path, "requests"), stub_paths(&st));
        ck_assert_double_ge(num(path, "p99_ms"), num(path, "p50_ms"));
    }
    srv = cJSON_GetObjectItem(o, "server");
    ck_assert_ptr_nonnull(srv);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(srv, "info"), "version")->valuestring,
                     "stub");
    ck_assert_double_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(srv, "metrics"), "stub_requests_total")
            ->valuedouble,
        5);
    cJSON_Delete(o);

    /* The map is there now: no second upload. */
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    ck_assert_int_eq(stub_puts(&st), 1);
    stub_stop(&st);
    fixture_remove(&fx);
}
END_TEST

START_TEST(bench_http_wrong_costs_are_invalid) {
    const char *bin = bench_bin();
    fixture fx;
    stub st;
    char args[512], out[16384];
    cJSON *o;
    NEED_BENCH_BIN(bin);
    fixture_make(&fx);
    stub_start(&st, true);
    snprintf(args, sizeof(args),
             "http --url http://127.0.0.1:%d --scen '%s' --connections 2 --requests 20 "
             "--check-every 1 --quiet --json",
             st.port, fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 1);
    o = parse_line(out);
    ck_assert_int_gt((int)num(o, "invalid"), 0);
    ck_assert_int_gt((int)num(o, "mismatches"), 0);
    cJSON_Delete(o);
    stub_stop(&st);
    fixture_remove(&fx);
}
END_TEST

/* Open loop: 1 s at 200 requests/s sends at most 200, whatever the server's
 * speed; an unknown route counts as 404 errors by kind. */
START_TEST(bench_http_open_loop_rate_and_errors) {
    const char *bin = bench_bin();
    stub st;
    char args[512], out[16384];
    cJSON *o, *kinds;
    int n;
    NEED_BENCH_BIN(bin);
    stub_start(&st, false);
    snprintf(args, sizeof(args),
             "http --url http://127.0.0.1:%d --get /nowhere --connections 4 --rate 200 "
             "--duration 1 --quiet --json",
             st.port);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 1);
    o = parse_line(out);
    n = (int)num(o, "requests");
    /* Never more than the schedule's 200 (a closed loop would send
     * thousands); at least half, with room for a loaded machine that stalls
     * the bench near the end, when due requests are no longer sent. */
    ck_assert_msg(n >= 100 && n <= 201, "requests %d", n);
    ck_assert_int_eq((int)num(o, "errors"), n);
    kinds = cJSON_GetObjectItem(o, "errors_by_kind");
    ck_assert_int_eq((int)num(kinds, "404"), n);
    cJSON_Delete(o);

    /* Nobody listening: connect errors, exit 1, no hang. */
    stub_stop(&st);
    snprintf(args, sizeof(args),
             "http --url http://127.0.0.1:%d --get /healthz --connections 2 --duration 0.3 "
             "--quiet --json",
             st.port);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 1);
    o = parse_line(out);
    ck_assert_int_gt((int)num(cJSON_GetObjectItem(o, "errors_by_kind"), "connect"), 0);
    cJSON_Delete(o);
}
END_TEST

/* Session mode against the real server: the map goes up as JSON with the
 * bench's doors, and the session stream walks the agent, changes cells and
 * opens and closes doors, every request answered. */
START_TEST(bench_http_sessions_stream_doors_to_server) {
    const char *bin = bench_bin(), *dir;
    char args[1024], out[32768], path[512];
    hc_server srv;
    hc_resp r;
    cJSON *o, *info;
    const cJSON *upd, *kinds;
    NEED_BENCH_BIN(bin);
    TU_NEED_BENCH_DIR(dir);
    srv = it_start(ARGS("--workers", "2"));
    snprintf(path, sizeof(path), "%s/AR0011SR.map.scen", dir);
    snprintf(args, sizeof(args),
             "http --url http://127.0.0.1:%d --scen '%s' --mix sessions=1 --connections 2 "
             "--requests 80 --quiet --json",
             (int)srv.port, path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    o = parse_line(out);
    ck_assert_int_eq((int)num(o, "errors"), 0);
    ck_assert_int_eq((int)num(o, "requests"), 80);
    kinds = cJSON_GetObjectItem(o, "latency_by_kind");
    ck_assert_int_gt((int)num(cJSON_GetObjectItem(kinds, "session_update"), "requests"), 6);
    upd = cJSON_GetObjectItem(o, "session_updates");
    ck_assert_ptr_nonnull(upd);
    ck_assert_int_gt((int)num(upd, "doors"), 0);
    ck_assert_int_gt((int)num(upd, "cells"), 0);
    ck_assert_int_gt((int)num(upd, "moves"), 0);
    cJSON_Delete(o);

    /* The upload declared the doors, and they change no cost: every path
     * query still has the scenario's optimum. */
    r = it_req(&srv, "GET", "/v1/maps/AR0011SR", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    info = cJSON_Parse(r.body);
    ck_assert_int_ge((int)it_num(info, "doors"), 16);
    ck_assert_int_le((int)it_num(info, "doors"), 64);
    cJSON_Delete(info);
    hc_free(&r);
    snprintf(args, sizeof(args),
             "http --url http://127.0.0.1:%d --scen '%s' --mix paths=1 --connections 2 "
             "--requests 40 --check-every 1 --quiet --json",
             (int)srv.port, path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    o = parse_line(out);
    ck_assert_int_eq((int)num(o, "errors"), 0);
    ck_assert_int_eq((int)num(o, "mismatches"), 0);
    ck_assert_int_gt((int)num(o, "checked"), 0);
    cJSON_Delete(o);
    it_stop(&srv);
}
END_TEST

/* pathd-bench chase on a 512x512 Moving AI map (seeded, so every count is
 * the same each run): the chapter's ordering of the policies' search work,
 * every frame >> timer > threshold; incremental goal moves (Moving Target
 * D* Lite) expanding at most a tenth of a fresh search's at the median, with
 * every answer the fresh search's cost (mismatches 0); hysteresis not adding
 * route flips; bad arguments exit 2. */
static cJSON *chase_row(const char *out, const char *policy, double h) {
    for (const char *line = out; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        cJSON *o = cJSON_ParseWithLength(line, len);
        ck_assert_msg(o != NULL, "not JSON: %.*s", (int)len, line);
        /* h NAN: rows without a hysteresis (navmesh levels). */
        if (strcmp(cJSON_GetObjectItem(o, "policy")->valuestring, policy) == 0 &&
            (isnan(h) || num(o, "hysteresis") == h))
            return o;
        cJSON_Delete(o);
        line += len + (end != NULL);
    }
    ck_abort_msg("no row for %s at hysteresis %g", policy, h);
    return NULL;
}

START_TEST(bench_chase_policies_and_incremental_moves) {
    const char *bin = bench_bin(), *dir;
    static char out[65536];
    char args[1024];
    NEED_BENCH_BIN(bin);
    TU_NEED_BENCH_DIR(dir);
    snprintf(args, sizeof(args),
             "chase --chasers 8 --frames 150 --hysteresis 0,0.2 --json '%s/Boston_0_512.map.scen'",
             dir);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    static const char *const pols[] = {"every-frame", "timer", "threshold", "incremental"};
    double expanded[4];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++) {
            cJSON *o = chase_row(out, pols[i], k ? 0.2 : 0);
            ck_assert_int_eq((int)num(o, "chasers"), 8);
            ck_assert_int_eq((int)num(o, "frames"), 150);
            ck_assert_int_eq((int)num(o, "failed"), 0);
            ck_assert_int_eq((int)num(o, "mismatches"), 0);
            ck_assert_double_le(num(o, "pushed"), num(o, "replans"));
            ck_assert_double_gt(num(o, "mean_distance"), 0);
            ck_assert_double_gt(num(o, "frame_us_p99"), 0);
            if (k == 0) expanded[i] = num(o, "expanded");
            if (i == 3) {
                /* Every frame with a goal move was compared. */
                ck_assert_int_gt((int)num(o, "goal_moves"), 8 * 150 / 4);
                ck_assert_double_le(num(o, "ratio_p50"), 0.10);
                ck_assert_double_lt(num(o, "incremental_expanded_p50"),
                                    num(o, "fresh_expanded_p50"));
            }
            cJSON_Delete(o);
        }
    ck_assert_double_gt(expanded[0], 3 * expanded[1]);
    ck_assert_double_gt(expanded[1], expanded[2]);
    ck_assert_double_lt(expanded[3], expanded[1]);
    cJSON *f0 = chase_row(out, "incremental", 0), *f2 = chase_row(out, "incremental", 0.2);
    ck_assert_double_le(num(f2, "flips"), num(f0, "flips"));
    ck_assert_int_gt((int)num(f2, "kept"), 0);
    cJSON_Delete(f0);
    cJSON_Delete(f2);

    ck_assert_int_eq(run_bench(bin, "chase --hysteresis 0.95 x.scen", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "chase --policies nosuch x.scen", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "chase --root sideways x.scen", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "chase --chasers 0 x.scen", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "chase", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "chase /nonexistent.scen", out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "chase --help", out, sizeof(out)), 0);
}
END_TEST

/* pathd-bench chase --url against a test server over /v1/stream: every
 * frame answered (whole or short) for every policy, no error answers, the
 * short answers the bench counted equal to the server's
 * pathd_stream_session_answers_total{kind="unchanged"}, and the timer and
 * threshold policies replanning less than every frame; an unreachable
 * server exits 2. Then the navmesh chase in-process on a generated level:
 * every-frame plans every chaser every frame, its paths the fresh query's
 * length; slide plans less, slides, and never answers a failed move. */
START_TEST(bench_chase_over_stream_and_navmesh) {
    const char *bin = bench_bin(), *dir;
    static char out[65536];
    char args[1024];
    NEED_BENCH_BIN(bin);
    TU_NEED_BENCH_DIR(dir);
    hc_server srv = it_start(ARGS("--workers", "2"));
    snprintf(args, sizeof(args),
             "chase --url http://127.0.0.1:%d --chasers 4 --frames 60 --hysteresis 0 --json "
             "'%s/Boston_0_512.map.scen'",
             (int)srv.port, dir);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    static const char *const pols[] = {"every-frame", "timer", "threshold"};
    double replans[3], shorts = 0;
    for (int i = 0; i < 3; i++) {
        cJSON *o = chase_row(out, pols[i], 0);
        ck_assert_int_eq((int)num(o, "errors"), 0);
        ck_assert_int_eq((int)(num(o, "replans") + num(o, "skipped")), 4 * 60);
        ck_assert_int_eq((int)(num(o, "pushed") + num(o, "unchanged")), 4 * 60);
        ck_assert_double_gt(num(o, "expanded"), 0);
        ck_assert_double_gt(num(o, "mean_distance"), 0);
        replans[i] = num(o, "replans");
        shorts += num(o, "unchanged");
        cJSON_Delete(o);
    }
    ck_assert_double_gt(replans[0], replans[1]);
    ck_assert_double_gt(replans[0], replans[2]);
    {
        hc_resp r = it_req(&srv, "GET", "/metrics", NULL, NULL);
        const char *m = strstr(r.body, "pathd_stream_session_answers_total{kind=\"unchanged\"} ");
        ck_assert_ptr_nonnull(m);
        ck_assert_double_eq(strtod(strchr(m, '}') + 2, NULL), shorts);
        hc_free(&r);
    }
    it_stop(&srv);
    snprintf(args, sizeof(args),
             "chase --url http://127.0.0.1:1 --chasers 1 --frames 1 '%s/Boston_0_512.map.scen'",
             dir);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 2);
    ck_assert_int_eq(run_bench(bin, "chase --url ftp://x x.scen", out, sizeof(out)), 2);

    ck_assert_int_eq(
        run_bench(bin, "chase --chasers 4 --frames 60 --json gen:multifloor", out, sizeof(out)), 0);
    cJSON *every = chase_row(out, "every-frame", NAN), *slide = chase_row(out, "slide", NAN);
    ck_assert_int_eq((int)num(every, "plans"), 4 * 60);
    ck_assert_int_eq((int)num(every, "failed"), 0);
    ck_assert_double_eq_tol(num(every, "length_ratio_max"), 1.0, 1e-3);
    ck_assert_int_eq((int)num(slide, "failed"), 0);
    ck_assert_double_lt(num(slide, "plans"), num(every, "plans"));
    ck_assert_int_gt((int)num(slide, "slides"), 0);
    ck_assert_double_ge(num(slide, "length_ratio_mean"), 1.0 - 1e-3);
    cJSON_Delete(every);
    cJSON_Delete(slide);
}
END_TEST

TU_SUITE(bench) {
    Suite *s = suite_create("bench");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bench_scen_json_fields_and_exit_zero);
    tcase_add_test(tc, bench_scen_wrong_optimum_exits_nonzero);
    tcase_add_test(tc, bench_scen_bad_input_exits_two);
    tcase_add_test(tc, bench_scen_compare_prints_ratio);
    tcase_add_test(tc, bench_scen_per_query_lines_up);
    tcase_add_test(tc, bench_navmesh_per_query_lines_up);
    tcase_add_test(tc, bench_navmesh_levels_agree_with_detour);
    tcase_add_test(tc, bench_gen_maps_and_optima);
    tcase_add_test(tc, bench_scen_variants_auto_and_blocks);
    tcase_add_test(tc, bench_scen_selection_spread_and_buckets);
    tcase_add_test(tc, bench_report_percentile_nearest_rank);
    tcase_add_test(tc, bench_hist_bucket_bounds);
    tcase_add_test(tc, bench_hist_percentiles_and_merge);
    tcase_add_test(tc, bench_http_parse_content_length_any_split);
    tcase_add_test(tc, bench_http_parse_chunked_and_eof);
    tcase_add_test(tc, bench_http_parse_rejects_garbage);
    tcase_add_test(tc, bench_http_url_parse);
    tcase_add_test(tc, bench_http_closed_loop_against_stub);
    tcase_add_test(tc, bench_http_wrong_costs_are_invalid);
    tcase_add_test(tc, bench_http_open_loop_rate_and_errors);
    tcase_add_test(tc, bench_http_sessions_stream_doors_to_server);
    tcase_add_test(tc, bench_chase_policies_and_incremental_moves);
    tcase_add_test(tc, bench_chase_over_stream_and_navmesh);
    suite_add_tcase(s, tc);
    return s;
}
