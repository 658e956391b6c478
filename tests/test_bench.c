/* test_bench.c -- the benchmark harness: the built pathd-bench binary run on
 * a small scenario file written to a temporary folder (JSON fields, exit
 * codes), and the in-process runner's query selection and percentiles. */
#include <check.h>
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "map_io.h"
#include "report.h"
#include "scen.h"
#include "testutil.h"

/* A 12x8 map with a wall that forces detours, and a pocket of trees. */
static const char *const tiny_rows[] = {
    "............", "..@@@@@@@...", "........@...", ".@@@....@...",
    ".@......@.TT", ".@..@@@@@.TT", ".@..........", "............"};
#define TINY_H 8
#define TINY_W 12

typedef struct fixture {
    char dir[64];
    char map_path[128];
    char scen_path[128];
    int nqueries;
} fixture;

/* The queries of the tiny scenario; optima come from the reference search. */
static const pf_point tiny_q[][2] = {
    {{0, 0}, {11, 0}}, {{0, 0}, {5, 2}}, {{0, 7}, {11, 7}}, {{2, 4}, {9, 6}},
    {{5, 4}, {0, 0}},  {{4, 3}, {4, 3}}, {{11, 3}, {0, 6}}, {{9, 4}, {2, 2}}};
#define TINY_NQ ((int)(sizeof(tiny_q) / sizeof(tiny_q[0])))

/* Writes tiny.map and tiny.map.scen into a fresh temporary folder; the
 * optimum of query `wrong` (-1 for none) is written off by `delta`. */
static void fixture_make_off(fixture *fx, int wrong, double delta) {
    FILE *f;
    pf_grid *g;
    pf_parse_error err;
    char *text;
    size_t len;

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
        fprintf(f, "%d\tmaps/test/tiny.map\t%d\t%d\t%d\t%d\t%d\t%d\t%.8f\n", (int)(opt / 4),
                TINY_W, TINY_H, tiny_q[i][0].x, tiny_q[i][0].y, tiny_q[i][1].x, tiny_q[i][1].y,
                opt);
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
 * build/pathd-bench. NULL, after saying why, when neither exists. */
static const char *bench_bin(void) {
    const char *b = getenv("PATHD_BENCH_BIN");
    if (b && *b && access(b, X_OK) == 0) return b;
    if (access("build/pathd-bench", X_OK) == 0) return "build/pathd-bench";
    fprintf(stderr, "SKIPPED: pathd-bench binary not found (set PATHD_BENCH_BIN)\n");
    return NULL;
}

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
    "map",     "algorithm", "queries",       "mismatches", "mean_subopt", "max_subopt",
    "p50_us",  "p99_us",    "mean_expanded", "ns_per_expansion", "requests", "errors",
    "rps",     "p50_ms",    "p90_ms",        "p99_ms",     "p999_ms",     "max_ms",
    "invalid"};

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
    if (!bin) return;
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
    if (!bin) return;

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
    if (!bin) return;
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
    if (!bin) return;
    fixture_make(&fx);
    snprintf(args, sizeof(args), "scen --compare dijkstra,astar --json '%s'", fx.scen_path);
    ck_assert_int_eq(run_bench(bin, args, out, sizeof(out)), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"algorithm\":\"dijkstra\""));
    ck_assert_ptr_nonnull(strstr(out, "\"algorithm\":\"astar\""));
    ck_assert_ptr_nonnull(strstr(out, "\"p50_ratio\":"));
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

TU_SUITE(bench) {
    Suite *s = suite_create("bench");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bench_scen_json_fields_and_exit_zero);
    tcase_add_test(tc, bench_scen_wrong_optimum_exits_nonzero);
    tcase_add_test(tc, bench_scen_bad_input_exits_two);
    tcase_add_test(tc, bench_scen_compare_prints_ratio);
    tcase_add_test(tc, bench_scen_selection_spread_and_buckets);
    tcase_add_test(tc, bench_report_percentile_nearest_rank);
    suite_add_tcase(s, tc);
    return s;
}
