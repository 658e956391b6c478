/* bench-graph.c -- waypoint graph figures (issue 28), in-process:
 *
 *   make bench-graph        (builds build/bench-graph and runs it)
 *   build/bench-graph [MOVINGAI_DIR]
 *
 * 1. A game-style graph: 5,000 nodes at random points of a 1000 x 1000
 *    level, each joined to its 6 nearest (two-way, cost = length x a
 *    random factor in [1, 1.5]): the JSON upload's parse + build time,
 *    p50/p99 per query between random nodes for Dijkstra and A*, and
 *    nearest-node snapping (kd-tree) against brute force, per call.
 * 2. A 1024 x 1024 open grid converted (1,048,576 nodes, 8-connected,
 *    diagonals sqrt 2): the DIMACS upload's parse + build time, memory per
 *    node, p50/p99 per algorithm over random pairs.
 * 3. Berlin_1_1024.map from the Moving AI set (PATHD_BENCH_DIR or argv[1])
 *    converted (passable cells, 8-connected without corner cutting) and
 *    its scenarios' optimal lengths checked against A*'s costs.
 *
 * ch reads hub labels up to BENCH_GRAPH_LABEL_BYTES (32 MiB, pathd's
 * --graph-labels-max-bytes; "ch-search" is the hierarchy's search on the
 * same pairs).
 * BENCH_GRAPH_QUERIES (5000) and BENCH_GRAPH_BIG_QUERIES (50; 0 skips the big
 * graphs) set how many
 * queries each algorithm runs on the small and the big graphs;
 * BENCH_GRAPH_JSON=FILE writes the game graph's upload to FILE (for
 * scripts/bench-graph-http.sh); BENCH_GRAPH_LANDMARKS (8, pathd's
 * --graph-landmarks) how many ALT
 * landmarks each graph gets (each graph is built without them first, for
 * the build times side by side).
 *
 * Times are this thread's CPU time (CLOCK_THREAD_CPUTIME_ID: the machine is
 * shared and loaded, and wall time would count the waits), so the figures are for comparing
 * side by side in one run, not absolute. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_graph_common.h"
#include "graph.h"
#include "graph_json.h"
#include "jsonr.h"

/* p50/p99 of n queries between random enabled nodes. */
static void run_queries(const char *name, const pf_graph *g, uint32_t nn, size_t n) {
    pf_graph_ctx *ctx = pf_graph_ctx_create();
    double *t = malloc(n * sizeof(double));
    /* a == PF_GRAPH_ALGORITHMS: ch again with a budget it never reaches,
     * so the hierarchy searches instead of reading hub labels. */
    for (int a = 0; a <= PF_GRAPH_ALGORITHMS; a++) {
        uint64_t expanded = 0, budget = a == PF_GRAPH_ALGORITHMS ? UINT64_MAX / 2 : 0;
        size_t found = 0;
        const pf_graph_algorithm algo = a == PF_GRAPH_ALGORITHMS ? PF_GRAPH_CH : (pf_graph_algorithm)a;
        rng = 42; /* the same pairs for each algorithm */
        for (size_t i = 0; i < n; i++) {
            pf_graph_query q = {below(nn), below(nn), algo, budget, false, NULL, NULL,
                                NULL,      0,         NULL, NULL,   0,     NULL, 0};
            pf_graph_path p;
            double t0 = now_us();
            pf_status st = pf_graph_search(g, ctx, &q, &p);
            t[i] = now_us() - t0;
            expanded += p.expanded;
            found += st == PF_OK;
        }
        printf("%s %-9s queries %zu found %zu  p50 %.2f us  p99 %.2f us  mean expanded %.0f\n",
               name, budget ? "ch-search" : pf_graph_algorithm_name(algo), n, found, pct(t, n, 0.5),
               pct(t, n, 0.99), (double)expanded / (double)n);
    }
    free(t);
    pf_graph_ctx_destroy(ctx);
}

static uint32_t landmarks(void) { return (uint32_t)env_count("BENCH_GRAPH_LANDMARKS", 8); }

/* The version's contraction hierarchy (pathd builds it at upload and at
 * each PATCH for graphs up to --graph-ch-max-nodes), timed; skipped with
 * BENCH_GRAPH_CH=0, or on graphs past BENCH_GRAPH_CH_MAX_NODES (65,536;
 * the 1M graphs: set it to 2000000 to measure them). */
static void attach_ch(const char *name, pf_graph *g) {
    pf_graph_info a, b;
    double t0;
    pf_status st;
    pf_graph_get_info(g, &a);
    if ((getenv("BENCH_GRAPH_CH") && strcmp(getenv("BENCH_GRAPH_CH"), "0") == 0) ||
        a.nodes > env_count("BENCH_GRAPH_CH_MAX_NODES", 65536)) {
        printf("%s ch: not built (BENCH_GRAPH_CH, BENCH_GRAPH_CH_MAX_NODES)\n", name);
        return;
    }
    pf_graph_ch_limits lim = {0, 0, NULL, env_count("BENCH_GRAPH_LABEL_BYTES", 32u << 20)};
    uint64_t entries;
    size_t lbytes;
    const char *absent;
    t0 = now_us();
    st = pf_graph_ch_attach(g, &lim);
    t0 = now_us() - t0;
    pf_graph_get_info(g, &b);
    absent = pf_graph_ch_labels(g, &entries, &lbytes);
    printf("%s ch build: %s, %.1f ms, %llu shortcuts (%.2f an arc), %.0f bytes a node; hub "
           "labels %s, %.1f entries a node each way, %zu bytes\n",
           name, st ? "FAILED" : "ok", t0 / 1e3, (unsigned long long)pf_graph_ch_shortcuts(g),
           (double)pf_graph_ch_shortcuts(g) / (double)(a.arcs ? a.arcs : 1),
           (double)(b.state_bytes - a.state_bytes) / (double)a.nodes, absent ? absent : "built",
           (double)entries / 2 / (double)a.nodes, lbytes);
}

/* d built without landmarks (timed, released), then with them into *g
 * (timed into *t_lm). Returns the first build's time. */
static double build_both(const pf_graph_doc *d, pf_graph **g, double *t_lm) {
    pf_graph_spec s = {d->n, d->dim, d->pos, d->m, d->from, d->to, d->cost, d->both, 0, NULL, NULL};
    double t0 = now_us(), t;
    if (pf_graph_build(&s, g, NULL)) exit(1);
    t = now_us() - t0;
    pf_graph_release(*g);
    s.landmarks = landmarks();
    t0 = now_us();
    if (pf_graph_build(&s, g, NULL)) exit(1);
    *t_lm = now_us() - t0;
    return t;
}

static void game_graph(void) {
    const uint32_t n = 5000, k = 6;
    double *pos = calloc(3 * n, sizeof(double));
    char *json;
    size_t len = 0, cap = (size_t)n * 200;
    cJSON *root = NULL;
    pf_graph_doc d;
    pf_proto_error e;
    pf_graph *g;
    pf_graph_limits lim = {1u << 21, 1u << 24, 1024, 1024, 1u << 16};
    double t0, t_parse, t_build, t_lm;
    uint32_t m = 0;
    json = malloc(cap);
    for (uint32_t i = 0; i < n; i++) {
        pos[3 * i] = unit() * 1000;
        pos[3 * i + 1] = unit() * 1000;
    }
    len += (size_t)snprintf(json + len, cap - len, "{\"kind\":\"graph\",\"nodes\":[");
    for (uint32_t i = 0; i < n; i++)
        len +=
            (size_t)snprintf(json + len, cap - len, "%s{\"id\":\"n%u\",\"position\":[%.3f,%.3f]}",
                             i ? "," : "", i, pos[3 * i], pos[3 * i + 1]);
    len += (size_t)snprintf(json + len, cap - len, "],\"edges\":[");
    /* Each node to its k nearest with a lower... any index (duplicates of
     * a pair are kept: a game graph may list both directions). */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t best[6];
        double bd[6];
        for (uint32_t j = 0; j < k; j++) bd[j] = INFINITY, best[j] = 0;
        for (uint32_t j = 0; j < n; j++) {
            double dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1];
            double dd = dx * dx + dy * dy;
            if (j == i || dd >= bd[k - 1]) continue;
            uint32_t s = k - 1;
            while (s > 0 && bd[s - 1] > dd) {
                bd[s] = bd[s - 1];
                best[s] = best[s - 1];
                s--;
            }
            bd[s] = dd;
            best[s] = j;
        }
        for (uint32_t j = 0; j < k; j++) {
            if (len + 128 > cap) {
                char *more = realloc(json, cap *= 2);
                if (!more) exit(1);
                json = more;
            }
            len += (size_t)snprintf(json + len, cap - len,
                                    "%s{\"from\":\"n%u\",\"to\":\"n%u\",\"factor\":%.3f}",
                                    m ? "," : "", i, best[j], 1 + 0.5 * unit());
            m++;
        }
    }
    len += (size_t)snprintf(json + len, cap - len, "]}");
    /* BENCH_GRAPH_JSON=FILE: the upload written out too, for the HTTP
     * figures (scripts/bench-graph-http.sh). */
    if (getenv("BENCH_GRAPH_JSON")) {
        FILE *out = fopen(getenv("BENCH_GRAPH_JSON"), "w");
        if (!out || fwrite(json, 1, len, out) != len || fclose(out)) exit(1);
    }
    t0 = now_us();
    if (pf_jsonr_parse(json, len, &root, &e) || pf_graph_doc_from_json(root, &lim, &d, &e)) {
        fprintf(stderr, "bench-graph: %s: %s\n", e.field, e.message);
        exit(1);
    }
    t_parse = now_us() - t0;
    cJSON_Delete(root);
    t_build = build_both(&d, &g, &t_lm);
    printf("game 5k: %u nodes %u edges, JSON %zu bytes: parse %.1f ms, build %.1f ms, with %u "
           "landmarks %.1f ms\n",
           d.n, d.m, len, t_parse / 1e3, t_build / 1e3, landmarks(), t_lm / 1e3);
    attach_ch("game 5k", g);
    run_queries("game 5k", g, n, env_count("BENCH_GRAPH_QUERIES", 5000));
    /* Snapping: kd-tree against brute force, per call over 100,000 points
     * (timed in blocks of 1000: a call is below the clock's resolution). */
    {
        const size_t np = 100000;
        double *pts = malloc(np * 2 * sizeof(double)), *blk = malloc(np / 1000 * sizeof(double));
        uint64_t visited = 0;
        size_t mism = 0;
        volatile uint32_t sink = 0;
        for (size_t i = 0; i < 2 * np; i++) pts[i] = unit() * 1000;
        for (size_t b = 0; b < np / 1000; b++) {
            double t1 = now_us();
            for (size_t i = b * 1000; i < (b + 1) * 1000; i++) {
                double p[3] = {pts[2 * i], pts[2 * i + 1], 0};
                uint32_t v;
                sink += pf_graph_nearest(g, p, NULL, &v);
                visited += v;
            }
            blk[b] = (now_us() - t1) / 1000;
        }
        printf("game 5k snapping kd-tree: p50 %.3f us a call (block medians), %.1f tree nodes "
               "visited a call\n",
               pct(blk, np / 1000, 0.5), (double)visited / (double)np);
        for (size_t b = 0; b < 5; b++) {
            double t1 = now_us();
            for (size_t i = b * 1000; i < (b + 1) * 1000; i++) {
                double p[3] = {pts[2 * i], pts[2 * i + 1], 0}, bd = INFINITY;
                uint32_t want = 0;
                for (uint32_t j = 0; j < n; j++) {
                    double dx = p[0] - pos[3 * j], dy = p[1] - pos[3 * j + 1];
                    if (dx * dx + dy * dy < bd) bd = dx * dx + dy * dy, want = j;
                }
                mism += pf_graph_nearest(g, p, NULL, NULL) != want;
                sink += want;
            }
            blk[b] = (now_us() - t1) / 1000;
        }
        printf("game 5k snapping brute force (+ one kd call): p50 %.3f us a call; kd-tree "
               "mismatches %zu of 5000\n",
               pct(blk, 5, 0.5), mism);
        /* snap "edge": the edge index against a scan of every edge, per
         * call, on the same points; the answers must agree. */
        for (size_t b = 0; b < 5; b++) {
            double t1 = now_us();
            for (size_t i = b * 200; i < (b + 1) * 200; i++) {
                double p[3] = {pts[2 * i], pts[2 * i + 1], 0}, at;
                sink += pf_graph_nearest_edge_scan(g, p, &at, NULL);
            }
            blk[b] = (now_us() - t1) / 200;
        }
        printf("game 5k snap edge, scan of %u edges: p50 %.3f us a call\n", d.m, pct(blk, 5, 0.5));
        mism = 0;
        for (size_t b = 0; b < 5; b++) {
            double t1 = now_us();
            for (size_t i = b * 1000; i < (b + 1) * 1000; i++) {
                double p[3] = {pts[2 * i], pts[2 * i + 1], 0}, at;
                sink += pf_graph_nearest_edge(g, p, &at, NULL);
            }
            blk[b] = (now_us() - t1) / 1000;
        }
        for (size_t i = 0; i < 1000; i++) {
            double p[3] = {pts[2 * i], pts[2 * i + 1], 0}, at;
            mism += pf_graph_nearest_edge(g, p, &at, NULL) !=
                    pf_graph_nearest_edge_scan(g, p, &at, NULL);
        }
        printf("game 5k snap edge, edge index: p50 %.3f us a call; mismatches against the "
               "scan %zu of 1000\n",
               pct(blk, 5, 0.5), mism);
        free(pts);
        free(blk);
    }
    pf_graph_release(g);
    pf_graph_doc_free(&d);
    free(json);
    free(pos);
}

/* DIMACS text of a w x h grid: passable(x, y) cells are nodes (ids in row
 * order from 1), 8-connected without corner cutting, costs in 1/1000
 * (DIMACS costs are integers): 1000 straight, 1414.2136 diagonal. */
typedef struct text {
    char *p;
    size_t len, cap;
} text;
static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    va_list ap;
    if (t->len + 96 > t->cap) {
        char *more = realloc(t->p, t->cap = t->cap ? 2 * t->cap : 1 << 20);
        if (!more) exit(1);
        t->p = more;
    }
    va_start(ap, fmt);
    t->len += (size_t)vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
}

static void grid_graph(const char *name, int w, int h, const char *cells, size_t nq) {
    uint32_t *id = calloc((size_t)w * h, sizeof(uint32_t)), n = 0;
    size_t arcs = 0;
    text gr = {0}, co = {0};
    pf_graph_doc d;
    pf_proto_error e;
    pf_graph *g;
    pf_graph_info gi;
    pf_graph_limits lim = {1u << 21, 1u << 24, 1024, 1024, 1u << 16};
    double t0, t_parse, t_build, t_lm;
#define OPEN(x, y) ((x) >= 0 && (y) >= 0 && (x) < w && (y) < h && cells[(size_t)(y)*w + (x)])
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (OPEN(x, y)) id[(size_t)y * w + x] = ++n;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (!OPEN(x, y)) continue;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    if ((dx || dy) && OPEN(x + dx, y + dy) &&
                        (!dx || !dy || (OPEN(x + dx, y) && OPEN(x, y + dy))))
                        arcs++;
        }
    put(&gr, "p sp %u %zu\n", n, arcs);
    put(&co, "p aux sp co %u\n", n);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (!OPEN(x, y)) continue;
            put(&co, "v %u %d %d\n", id[(size_t)y * w + x], x, y);
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    if ((dx || dy) && OPEN(x + dx, y + dy) &&
                        (!dx || !dy || (OPEN(x + dx, y) && OPEN(x, y + dy))))
                        put(&gr, "a %u %u %s\n", id[(size_t)y * w + x],
                            id[(size_t)(y + dy) * w + x + dx], dx && dy ? "1414.2135624" : "1000");
        }
    t0 = now_us();
    if (pf_graph_doc_from_dimacs(gr.p, gr.len, co.p, co.len, &lim, &d, &e)) {
        fprintf(stderr, "bench-graph: %s: %s\n", e.field, e.message);
        exit(1);
    }
    t_parse = now_us() - t0;
    t_build = build_both(&d, &g, &t_lm);
    pf_graph_get_info(g, &gi);
    pf_graph_doc_compact(&d);
    printf("%s: %u nodes %u arcs, DIMACS %.1f MB: parse %.0f ms, build %.0f ms, with %u landmarks "
           "%.0f ms; memory: graph %.1f bytes/node (topology+index+landmarks %zu, state %zu), "
           "upload document %.1f bytes/node\n",
           name, gi.nodes, gi.arcs, (double)(gr.len + co.len) / 1e6, t_parse / 1e3, t_build / 1e3,
           gi.landmarks, t_lm / 1e3, (double)(gi.topo_bytes + gi.state_bytes) / gi.nodes,
           gi.topo_bytes, gi.state_bytes, (double)d.bytes / gi.nodes);
    attach_ch(name, g);
    run_queries(name, g, n, nq);
    if (strcmp(name, "berlin") == 0) {
        /* The scenarios: optimal lengths (octile, no corner cutting). */
        char path[1024];
        FILE *f;
        const char *dir = getenv("PATHD_BENCH_DIR");
        snprintf(path, sizeof(path), "%s/Berlin_1_1024.map.scen", dir);
        if ((f = fopen(path, "r"))) {
            char line[512];
            size_t checked = 0, bad = 0, bad_alt = 0;
            pf_graph_ctx *ctx = pf_graph_ctx_create();
            while (fgets(line, sizeof(line), f) && checked < 500) {
                int b, mw, mh, sx, sy, gx, gy;
                char mapname[256];
                double opt;
                pf_graph_path p;
                if (sscanf(line, "%d %255s %d %d %d %d %d %d %lf", &b, mapname, &mw, &mh, &sx, &sy,
                           &gx, &gy, &opt) != 9)
                    continue;
                pf_graph_query q = {id[(size_t)sy * w + sx] - 1,
                                    id[(size_t)gy * w + gx] - 1,
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
                if (pf_graph_search(g, ctx, &q, &p) || fabs(p.cost / 1000 - opt) > 1e-3) bad++;
                q.algorithm = PF_GRAPH_ALT;
                if (pf_graph_search(g, ctx, &q, &p) || fabs(p.cost / 1000 - opt) > 1e-3) bad_alt++;
                checked++;
            }
            printf("berlin: %zu scenario costs against Moving AI's optimal lengths, %zu differ "
                   "(astar), %zu differ (alt)\n",
                   checked, bad, bad_alt);
            pf_graph_ctx_destroy(ctx);
            fclose(f);
        }
    }
#undef OPEN
    pf_graph_release(g);
    pf_graph_doc_free(&d);
    free(gr.p);
    free(co.p);
    free(id);
}

/* The contraction hierarchy's build on graphs of growing size
 * (BENCH_GRAPH_CH_SCALE=1: this and nothing else; =game or =grid: one
 * family), for pathd's
 * --graph-ch-max-nodes and --graph-ch-build-ms: game-style graphs (random
 * points of a square level, each joined two-way to its 6 nearest, cost =
 * length x [1, 1.5]) and 8-connected grid graphs (cost = length x [1,
 * 1.5]); each build's CPU and wall time, its work units (build_stop.h)
 * and shortcuts, at pathd's shortcut cap (2 x arcs + nodes). */
static double wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void ch_scale_one(const char *name, uint32_t n, double *pos, uint32_t m, uint32_t *from,
                         uint32_t *to, double *cost) {
    uint8_t *both = malloc(m);
    pf_graph_spec s = {n, 2, pos, m, from, to, cost, both, 0, NULL, NULL};
    pf_graph *g;
    pf_graph_info gi;
    pf_build_stop bs = pf_build_stop_make(NULL, NULL);
    pf_graph_ch_limits lim = {0, 0, &bs, env_count("BENCH_GRAPH_LABEL_BYTES", 32u << 20)};
    uint64_t entries;
    size_t lbytes;
    const char *absent;
    double c0, w0;
    pf_status st;
    memset(both, 1, m);
    if (pf_graph_build(&s, &g, NULL)) exit(1);
    pf_graph_get_info(g, &gi);
    lim.max_shortcuts = 2 * (uint64_t)gi.arcs + gi.nodes;
    c0 = now_us();
    w0 = wall_us();
    st = pf_graph_ch_attach(g, &lim);
    c0 = now_us() - c0;
    w0 = wall_us() - w0;
    absent = pf_graph_ch_labels(g, &entries, &lbytes);
    printf("ch scale %s: %u nodes %u arcs: %s, cpu %.0f ms, wall %.0f ms, %llu units (%.1f M/s "
           "cpu), %llu shortcuts; hub labels %s, %.1f entries a node each way, %zu bytes\n",
           name, gi.nodes, gi.arcs, st ? pf_status_str(st) : "ok", c0 / 1e3, w0 / 1e3,
           (unsigned long long)bs.work, (double)bs.work / c0,
           (unsigned long long)pf_graph_ch_shortcuts(g), absent ? absent : "built",
           (double)entries / 2 / (double)gi.nodes, lbytes);
    pf_graph_release(g);
    free(both);
}

static void ch_scale(const char *which) {
    static const uint32_t game_n[] = {8192, 16384, 32768, 65536, 131072};
    static const uint32_t grid_side[] = {64, 91, 128, 181};
    bool game = strcmp(which, "grid") != 0, grid = strcmp(which, "game") != 0;
    for (size_t k = 0; game && k < sizeof(game_n) / sizeof(game_n[0]); k++) {
        const uint32_t n = game_n[k], kk = 6;
        /* Buckets of about 2 points each: the 6 nearest searched ring by
         * ring until the ring is past the 6th. */
        const uint32_t side = (uint32_t)sqrt((double)n / 2) + 1;
        const double size = 1000, cell = size / side;
        double *pos = calloc(3 * (size_t)n, sizeof(double)), *cost;
        uint32_t *head = malloc((size_t)side * side * sizeof(uint32_t)), *nxt = malloc(n * 4);
        uint32_t *from = malloc((size_t)n * kk * 4), *to = malloc((size_t)n * kk * 4), m = 0;
        char name[64];
        cost = malloc((size_t)n * kk * sizeof(double));
        memset(head, 0xff, (size_t)side * side * sizeof(uint32_t));
        for (uint32_t i = 0; i < n; i++) {
            uint32_t cx, cy;
            pos[3 * i] = unit() * size;
            pos[3 * i + 1] = unit() * size;
            cx = (uint32_t)(pos[3 * i] / cell);
            cy = (uint32_t)(pos[3 * i + 1] / cell);
            if (cx >= side) cx = side - 1;
            if (cy >= side) cy = side - 1;
            nxt[i] = head[cy * side + cx];
            head[cy * side + cx] = i;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint32_t best[6];
            double bd[6];
            int cx = (int)(pos[3 * i] / cell), cy = (int)(pos[3 * i + 1] / cell);
            for (uint32_t j = 0; j < kk; j++) bd[j] = INFINITY, best[j] = i;
            for (int r = 0; r < (int)side; r++) {
                double ring = (r - 1) * cell;
                if (r > 1 && ring * ring > bd[kk - 1]) break;
                for (int y = cy - r; y <= cy + r; y++)
                    for (int x = cx - r; x <= cx + r; x++) {
                        if (x < 0 || y < 0 || x >= (int)side || y >= (int)side) continue;
                        if (abs(x - cx) != r && abs(y - cy) != r) continue;
                        for (uint32_t j = head[(uint32_t)y * side + (uint32_t)x]; j != UINT32_MAX;
                             j = nxt[j]) {
                            double dx = pos[3 * i] - pos[3 * j],
                                   dy = pos[3 * i + 1] - pos[3 * j + 1];
                            double dd = dx * dx + dy * dy;
                            uint32_t t = kk - 1;
                            if (j == i || dd >= bd[kk - 1]) continue;
                            while (t > 0 && bd[t - 1] > dd) {
                                bd[t] = bd[t - 1];
                                best[t] = best[t - 1];
                                t--;
                            }
                            bd[t] = dd;
                            best[t] = j;
                        }
                    }
            }
            for (uint32_t j = 0; j < kk; j++) {
                if (best[j] == i) continue;
                from[m] = i;
                to[m] = best[j];
                cost[m++] = sqrt(bd[j]) * (1 + 0.5 * unit());
            }
        }
        snprintf(name, sizeof(name), "game %u", n);
        ch_scale_one(name, n, pos, m, from, to, cost);
        free(pos);
        free(head);
        free(nxt);
        free(from);
        free(to);
        free(cost);
    }
    for (size_t k = 0; grid && k < sizeof(grid_side) / sizeof(grid_side[0]); k++) {
        const uint32_t w = grid_side[k], n = w * w;
        double *pos = calloc(3 * (size_t)n, sizeof(double)), *cost = malloc((size_t)n * 4 * 8);
        uint32_t *from = malloc((size_t)n * 4 * 4), *to = malloc((size_t)n * 4 * 4), m = 0;
        char name[64];
        for (uint32_t y = 0; y < w; y++)
            for (uint32_t x = 0; x < w; x++) {
                static const int d[4][2] = {{1, 0}, {0, 1}, {1, 1}, {-1, 1}};
                uint32_t v = y * w + x;
                pos[3 * v] = x;
                pos[3 * v + 1] = y;
                for (int j = 0; j < 4; j++) {
                    int nx = (int)x + d[j][0], ny = (int)y + d[j][1];
                    if (nx < 0 || ny < 0 || nx >= (int)w || ny >= (int)w) continue;
                    from[m] = v;
                    to[m] = (uint32_t)ny * w + (uint32_t)nx;
                    cost[m++] = (j < 2 ? 1 : sqrt(2)) * (1 + 0.5 * unit());
                }
            }
        snprintf(name, sizeof(name), "grid %ux%u", w, w);
        ch_scale_one(name, n, pos, m, from, to, cost);
        free(pos);
        free(from);
        free(to);
        free(cost);
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (getenv("BENCH_GRAPH_CH_SCALE")) {
        ch_scale(getenv("BENCH_GRAPH_CH_SCALE"));
        return 0;
    }
    const char *dir = argc > 1 ? argv[1] : getenv("PATHD_BENCH_DIR");
    game_graph();
    /* BENCH_GRAPH_BIG_QUERIES=0: the game graph only (the 1M-node graphs
     * take most of the run to build). */
    if (getenv("BENCH_GRAPH_BIG_QUERIES") && atol(getenv("BENCH_GRAPH_BIG_QUERIES")) == 0) return 0;
    char *open_grid = malloc(1024 * 1024);
    memset(open_grid, 1, 1024 * 1024);
    grid_graph("grid 1024x1024", 1024, 1024, open_grid, env_count("BENCH_GRAPH_BIG_QUERIES", 50));
    free(open_grid);
    if (dir) {
        char path[1024], line[2048];
        FILE *f;
        int w = 0, h = 0;
        snprintf(path, sizeof(path), "%s/Berlin_1_1024.map", dir);
        setenv("PATHD_BENCH_DIR", dir, 1);
        if ((f = fopen(path, "r"))) {
            char *cells;
            while (fgets(line, sizeof(line), f) && strncmp(line, "map", 3) != 0) {
                sscanf(line, "width %d", &w);
                sscanf(line, "height %d", &h);
            }
            cells = calloc((size_t)w * h, 1);
            for (int y = 0; y < h && fgets(line, sizeof(line), f); y++)
                for (int x = 0; x < w; x++)
                    cells[(size_t)y * w + x] = line[x] == '.' || line[x] == 'G' || line[x] == 'S';
            fclose(f);
            grid_graph("berlin", w, h, cells, env_count("BENCH_GRAPH_BIG_QUERIES", 50));
            free(cells);
        } else {
            fprintf(stderr, "bench-graph: %s: not found\n", path);
            return 1;
        }
    }
    return 0;
}
