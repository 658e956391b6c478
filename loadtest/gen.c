/* gen.c -- `pathd-bench gen` (gen.h): generated maps with scenario files.
 *
 * The optima come from a plain Dijkstra here (binary heap, the Moving AI
 * rule: 8 neighbours, a diagonal only when both of its orthogonal cells are
 * open, steps of 1 and sqrt 2), written apart from core's searches, so a
 * wrong answer of either shows as a mismatch in `pathd-bench scen`. */
#include "gen.h"

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maze.h"

#define EXIT_USAGE 2
#define MAX_BUCKETS 8192

static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint32_t below(uint64_t *s, uint32_t n) { return (uint32_t)(next_rand(s) % n); }

/* The families: open[y * side + x] = 1 for a walkable cell. */

static bool gen_maze(int32_t side, int32_t corridor, double loops, uint64_t seed, uint8_t *open) {
    pf_maze_params mp = pf_maze_params_make(side, side, seed, corridor);
    mp.loops = loops;
    pf_grid_limits lim = pf_grid_default_limits();
    pf_grid *g = NULL;
    lim.max_cells = (int64_t)side * side;
    lim.max_side = side;
    if (pf_maze_generate(&mp, &lim, NULL, &g)) return false;
    for (int32_t y = 0; y < side; y++)
        for (int32_t x = 0; x < side; x++)
            open[(size_t)y * side + x] = pf_grid_is_walkable(g, (pf_point){x, y});
    pf_grid_destroy(g);
    return true;
}

static void gen_rooms(int32_t side, int32_t r, uint64_t *rs, uint8_t *open) {
    int32_t n = (side - 1) / r; /* rooms across */
    for (int32_t y = 0; y < side; y++)
        for (int32_t x = 0; x < side; x++)
            open[(size_t)y * side + x] = x % r != 0 && y % r != 0 && x < n * r && y < n * r;
    /* The wall between room (i, j) and its east and south neighbours. */
    for (int32_t j = 0; j < n; j++)
        for (int32_t i = 0; i < n; i++)
            for (int k = 0; k < 2; k++) {
                bool east = k == 0;
                int32_t wx = east ? (i + 1) * r : i * r + 1, wy = east ? j * r + 1 : (j + 1) * r;
                if (east ? i + 1 >= n : j + 1 >= n) continue;
                if (below(rs, 8) == 0) {
                    for (int32_t t = 0; t < r - 1; t++)
                        open[(size_t)(wy + (east ? t : 0)) * side + wx + (east ? 0 : t)] = 1;
                } else {
                    int32_t t = (int32_t)below(rs, (uint32_t)(r - 1));
                    open[(size_t)(wy + (east ? t : 0)) * side + wx + (east ? 0 : t)] = 1;
                }
            }
}

static void gen_random(int32_t side, int32_t percent, uint64_t *rs, uint8_t *open) {
    for (size_t i = 0; i < (size_t)side * (size_t)side; i++)
        open[i] = below(rs, 100) >= (uint32_t)percent;
}

/* Dijkstra */

typedef struct item {
    double d;
    int32_t v;
} item;

static void heap_push(item *h, size_t *n, item it) {
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].d <= it.d) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = it;
}

static item heap_pop(item *h, size_t *n) {
    item top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1].d < h[c].d) c++;
        if (h[c].d >= last.d) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = last;
    return top;
}

/* dist[v] from s (INFINITY where s does not reach); h has room for 8
 * pushes a cell. */
static void dijkstra(const uint8_t *open, int32_t side, int32_t s, double *dist, item *h) {
    static const int dx[8] = {1, -1, 0, 0, 1, 1, -1, -1}, dy[8] = {0, 0, 1, -1, 1, -1, 1, -1};
    size_t n = 0;
    for (size_t i = 0; i < (size_t)side * (size_t)side; i++) dist[i] = INFINITY;
    dist[s] = 0;
    heap_push(h, &n, (item){0, s});
    while (n) {
        item it = heap_pop(h, &n);
        int32_t x = it.v % side, y = it.v / side;
        if (it.d > dist[it.v]) continue;
        for (int k = 0; k < 8; k++) {
            int32_t nx = x + dx[k], ny = y + dy[k], u = ny * side + nx;
            double nd;
            if (nx < 0 || ny < 0 || nx >= side || ny >= side || !open[u]) continue;
            if (k >= 4 && (!open[y * side + nx] || !open[ny * side + x])) continue;
            nd = it.d + (k < 4 ? 1.0 : sqrt(2.0));
            if (nd < dist[u]) {
                dist[u] = nd;
                heap_push(h, &n, (item){nd, u});
            }
        }
    }
}

typedef struct query {
    int32_t s, g;
    double d;
} query;

static int by_bucket(const void *a, const void *b) {
    const query *p = a, *q = b;
    int bp = (int)(p->d / 4), bq = (int)(q->d / 4);
    if (bp != bq) return bp < bq ? -1 : 1;
    return p->d < q->d ? -1 : p->d > q->d;
}

int pf_bench_gen_main(int argc, char **argv) {
    static const struct option longopts[] = {{"side", required_argument, NULL, 's'},
                                             {"param", required_argument, NULL, 'p'},
                                             {"seed", required_argument, NULL, 'r'},
                                             {"per-bucket", required_argument, NULL, 'k'},
                                             {"loops", required_argument, NULL, 'l'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int32_t side = 512, param = -1, per_bucket = 10, opt;
    int rc = EXIT_USAGE;
    uint64_t seed = 1, rs;
    double loops = 0;
    const char *family, *out;
    char path[1024];
    uint8_t *open;
    double *dist;
    item *heap;
    query *qs;
    int32_t *fill, *cells = NULL, ncells = 0;
    size_t nq = 0, cap;
    FILE *f;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 's':
            side = atoi(optarg);
            break;
        case 'p':
            param = atoi(optarg);
            break;
        case 'r':
            seed = strtoull(optarg, NULL, 10);
            break;
        case 'k':
            per_bucket = atoi(optarg);
            break;
        case 'l':
            loops = atof(optarg);
            break;
        default:
            fprintf(stderr, "usage: pathd-bench gen maze|rooms|random [--side N] [--param P] "
                            "[--seed S] [--per-bucket K] OUT\n");
            return opt == 'h' ? 0 : EXIT_USAGE;
        }
    }
    if (argc - optind != 2 || side < 8 || side > 4096 || per_bucket < 1) {
        fprintf(stderr, "pathd-bench gen: want a family and OUT; --side 8..4096\n");
        return EXIT_USAGE;
    }
    family = argv[optind];
    out = argv[optind + 1];
    rs = seed;
    open = calloc((size_t)side * side, 1);
    dist = malloc((size_t)side * side * sizeof(*dist));
    heap = malloc((size_t)side * side * 8 * sizeof(*heap));
    fill = calloc(MAX_BUCKETS, sizeof(*fill));
    cap = (size_t)MAX_BUCKETS * (size_t)per_bucket;
    qs = malloc(cap * sizeof(*qs));
    if (!open || !dist || !heap || !fill || !qs) {
        fprintf(stderr, "pathd-bench gen: out of memory\n");
        goto out_free;
    }
    if (strcmp(family, "maze") == 0) {
        if (param < 0) param = 4;
        if (param < 1 || param > PF_MAZE_MAX_CORRIDOR ||
            !gen_maze(side, param, loops, seed, open)) {
            fprintf(stderr, "pathd-bench gen: maze corridor 1..%d fitting the side\n",
                    PF_MAZE_MAX_CORRIDOR);
            goto out_free;
        }
    } else if (strcmp(family, "rooms") == 0) {
        if (param < 0) param = 8;
        if (param < 3 || param > side / 2) {
            fprintf(stderr, "pathd-bench gen: rooms of side 3..side/2\n");
            goto out_free;
        }
        gen_rooms(side, param, &rs, open);
    } else if (strcmp(family, "random") == 0) {
        if (param < 0) param = 20;
        if (param > 90) {
            fprintf(stderr, "pathd-bench gen: random 0..90 percent blocked\n");
            goto out_free;
        }
        gen_random(side, param, &rs, open);
    } else {
        fprintf(stderr, "pathd-bench gen: unknown family '%s'\n", family);
        goto out_free;
    }
    /* Queries: from random starts, at most two goals of each bucket per
     * start, until each bucket seen has per_bucket or the starts run out. */
    cells = malloc((size_t)side * side * sizeof(*cells));
    if (!cells) goto out_free;
    for (int32_t v = 0; v < side * side; v++)
        if (open[v]) cells[ncells++] = v;
    for (int start = 0; start < 1500 && ncells > 1; start++) {
        int32_t s = cells[below(&rs, (uint32_t)ncells)], maxb = -1, got[MAX_BUCKETS];
        bool open_bucket = false;
        dijkstra(open, side, s, dist, heap);
        memset(got, 0, sizeof(got));
        /* Visit the cells in a random rotation, so goals spread. */
        for (int32_t k = 0, off = (int32_t)below(&rs, (uint32_t)ncells); k < ncells; k++) {
            int32_t g = cells[(k + off) % ncells], b;
            if (g == s || !isfinite(dist[g])) continue;
            b = (int32_t)(dist[g] / 4);
            if (b >= MAX_BUCKETS) continue;
            if (b > maxb) maxb = b;
            if (fill[b] >= per_bucket || got[b] >= 2 || below(&rs, 64) != 0) continue;
            got[b]++;
            fill[b]++;
            qs[nq++] = (query){s, g, dist[g]};
        }
        for (int32_t b = 0; b <= maxb; b++) open_bucket |= fill[b] < per_bucket;
        if (!open_bucket) break;
    }
    qsort(qs, nq, sizeof(*qs), by_bucket);
    snprintf(path, sizeof(path), "%s.map", out);
    if (!(f = fopen(path, "w"))) goto out_write;
    fprintf(f, "type octile\nheight %d\nwidth %d\nmap\n", side, side);
    for (int32_t y = 0; y < side; y++) {
        for (int32_t x = 0; x < side; x++) fputc(open[(size_t)y * side + x] ? '.' : '@', f);
        fputc('\n', f);
    }
    if (fclose(f)) goto out_write;
    snprintf(path, sizeof(path), "%s.map.scen", out);
    if (!(f = fopen(path, "w"))) goto out_write;
    {
        const char *base = strrchr(out, '/');
        base = base ? base + 1 : out;
        fprintf(f, "version 1\n");
        for (size_t i = 0; i < nq; i++)
            fprintf(f, "%d\t%s.map\t%d\t%d\t%d\t%d\t%d\t%d\t%.8f\n", (int)(qs[i].d / 4), base, side,
                    side, qs[i].s % side, qs[i].s / side, qs[i].g % side, qs[i].g / side, qs[i].d);
    }
    if (fclose(f)) goto out_write;
    fprintf(stderr, "pathd-bench gen: %s.map (%s %d), %zu queries\n", out, family, param, nq);
    rc = 0;
    goto out_free;
out_write:
    perror(path);
out_free:
    free(cells);
    free(open);
    free(dist);
    free(heap);
    free(fill);
    free(qs);
    return rc;
}
