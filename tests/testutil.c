/* testutil.c -- see testutil.h. */
#define _GNU_SOURCE
#include "testutil.h"

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t tu_seed(const char *test, uint64_t dflt) {
    const char *e = getenv("PATHD_SEED");
    uint64_t s = e && *e ? strtoull(e, NULL, 0) : dflt;
    fprintf(stderr, "%s: seed %llu (replay with PATHD_SEED=%llu)\n", test, (unsigned long long)s,
            (unsigned long long)s);
    return s;
}

uint64_t tu_rand(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint32_t tu_below(uint64_t *state, uint32_t n) { return (uint32_t)(tu_rand(state) % n); }

static double tu_unit(uint64_t *state) {
    return (double)(tu_rand(state) >> 11) / 9007199254740992.0;
}

pf_grid *tu_random_grid(uint64_t *st, const tu_map_opts *o) {
    int32_t w = o->min_side + (int32_t)tu_below(st, (uint32_t)(o->max_side - o->min_side + 1));
    int32_t h = o->min_side + (int32_t)tu_below(st, (uint32_t)(o->max_side - o->min_side + 1));
    double p = o->max_blocked * tu_unit(st);
    int conn = o->connectivity ? o->connectivity : (tu_below(st, 2) ? 8 : 4);
    bool cut = o->corner_cutting < 0 ? tu_below(st, 2) : o->corner_cutting == 1;
    pf_grid *g = NULL;
    ck_assert_int_eq(pf_grid_create(w, h, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_grid_set_rules(g, conn, cut), PF_OK);
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point c = {x, y};
            uint8_t cost = o->random_costs ? (uint8_t)(1 + tu_below(st, 9)) : 1;
            if (tu_unit(st) < p) cost = 0;
            pf_grid_set_cost(g, c, cost);
        }
    if (o->walls) {
        int64_t n = (int64_t)w * h / 8;
        for (int64_t i = 0; i < n; i++) {
            pf_point c = {(int32_t)tu_below(st, (uint32_t)w), (int32_t)tu_below(st, (uint32_t)h)};
            pf_grid_set_wall(g, c, (int)tu_below(st, 4), true); /* off-map sides are refused */
        }
    }
    return g;
}

bool tu_random_walkable(uint64_t *st, const pf_grid *g, pf_point *p) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    if (pf_grid_walkable_count(g) == 0) return false;
    for (;;) {
        p->x = (int32_t)tu_below(st, (uint32_t)w);
        p->y = (int32_t)tu_below(st, (uint32_t)h);
        if (pf_grid_is_walkable(g, *p)) return true;
    }
}

/* The movement rule restated from DESIGN.md, independently of grid.c's move
 * masks: used by the reference search so the two can disagree. */
static bool ref_route_open(const pf_grid *g, pf_point a, pf_point c, int d1, int d2) {
    return pf_grid_is_walkable(g, c) && !pf_grid_is_wall(g, a, d1) && !pf_grid_is_wall(g, c, d2);
}

static bool ref_can_step(const pf_grid *g, pf_point a, int dx, int dy) {
    pf_point b = {a.x + dx, a.y + dy};
    if (!pf_grid_is_walkable(g, a) || !pf_grid_is_walkable(g, b)) return false;
    if (dx == 0 || dy == 0) {
        int d = dx == 1 ? PF_DIR_E : dx == -1 ? PF_DIR_W : dy == 1 ? PF_DIR_S : PF_DIR_N;
        return !pf_grid_is_wall(g, a, d);
    }
    if (pf_grid_connectivity(g) == 4) return false;
    int dh = dx > 0 ? PF_DIR_E : PF_DIR_W, dv = dy > 0 ? PF_DIR_S : PF_DIR_N;
    pf_point ch = {b.x, a.y}, cv = {a.x, b.y};
    bool r1 = ref_route_open(g, a, ch, dh, dv), r2 = ref_route_open(g, a, cv, dv, dh);
    return pf_grid_corner_cutting(g) ? (r1 || r2) : (r1 && r2);
}

bool tu_reference_can_step(const pf_grid *g, pf_point a, int dx, int dy) {
    return ref_can_step(g, a, dx, dy);
}

/* Breadth-first search over the reference rule, never entering `avoid`
 * (-1 for none): seen[i] is set for every cell reachable from s. */
void tu_reference_reach(const pf_grid *g, pf_point s, int32_t avoid, bool *seen) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    int32_t *queue = malloc((size_t)w * h * sizeof(*queue));
    size_t head = 0, tail = 0;
    ck_assert_ptr_nonnull(queue);
    memset(seen, 0, (size_t)w * h * sizeof(*seen));
    if (pf_grid_is_walkable(g, s) && s.y * w + s.x != avoid) {
        seen[s.y * w + s.x] = true;
        queue[tail++] = s.y * w + s.x;
    }
    while (head < tail) {
        pf_point a = {queue[head] % w, queue[head] / w};
        head++;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if ((!dx && !dy) || !ref_can_step(g, a, dx, dy)) continue;
                int32_t b = (a.y + dy) * w + a.x + dx;
                if (b == avoid || seen[b]) continue;
                seen[b] = true;
                queue[tail++] = b;
            }
    }
    free(queue);
}

pf_grid *tu_perfect_maze(uint64_t *st, int32_t cw, int32_t ch, int connectivity,
                         bool corner_cutting) {
    int32_t w = 2 * cw + 1, h = 2 * ch + 1;
    pf_grid *g = NULL;
    int32_t *stack = malloc((size_t)cw * ch * sizeof(*stack));
    bool *done = calloc((size_t)cw * ch, sizeof(*done));
    size_t top = 0;
    ck_assert(stack && done);
    ck_assert_int_eq(pf_grid_create(w, h, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_grid_set_rules(g, connectivity, corner_cutting), PF_OK);
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) pf_grid_set_cost(g, (pf_point){x, y}, 0);
    /* Recursive backtracker over the cells (2x+1, 2y+1), with an explicit stack. */
    stack[top++] = 0;
    done[0] = true;
    pf_grid_set_cost(g, (pf_point){1, 1}, 1);
    while (top) {
        int32_t c = stack[top - 1], cx = c % cw, cy = c / cw, opts[4], n = 0;
        static const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
        for (int k = 0; k < 4; k++) {
            int32_t nx = cx + dx[k], ny = cy + dy[k];
            if (nx >= 0 && ny >= 0 && nx < cw && ny < ch && !done[ny * cw + nx]) opts[n++] = k;
        }
        if (!n) {
            top--;
            continue;
        }
        int k = opts[tu_below(st, (uint32_t)n)];
        int32_t nx = cx + dx[k], ny = cy + dy[k];
        done[ny * cw + nx] = true;
        pf_grid_set_cost(g, (pf_point){2 * cx + 1 + dx[k], 2 * cy + 1 + dy[k]}, 1);
        pf_grid_set_cost(g, (pf_point){2 * nx + 1, 2 * ny + 1}, 1);
        stack[top++] = ny * cw + nx;
    }
    free(stack);
    free(done);
    return g;
}

/* The references' binary min-heap on d (see testutil.h). */
void tu_heap_push(tu_heap_item *h, size_t *n, tu_heap_item it) {
    size_t k = (*n)++;
    while (k > 0 && h[(k - 1) / 2].d > it.d) {
        h[k] = h[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    h[k] = it;
}

tu_heap_item tu_heap_pop(tu_heap_item *h, size_t *n) {
    tu_heap_item top = h[0], last = h[--(*n)];
    size_t k = 0;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1].d < h[c].d) c++;
        if (h[c].d >= last.d) break;
        h[k] = h[c];
        k = c;
    }
    if (*n > 0) h[k] = last;
    return top;
}

double tu_reference_cost(const pf_grid *g, pf_point s, pf_point t) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    size_t cells = (size_t)w * h, n = 0;
    double *dist = malloc(cells * sizeof(*dist));
    tu_heap_item *heap = malloc(cells * 8 * sizeof(*heap) + sizeof(*heap));
    double ans = -1;
    ck_assert(dist && heap);
    for (size_t i = 0; i < cells; i++) dist[i] = INFINITY;
    dist[s.y * w + s.x] = 0;
    tu_heap_push(heap, &n, (tu_heap_item){0, s.y * w + s.x});
    while (n > 0) {
        tu_heap_item it = tu_heap_pop(heap, &n);
        if (it.d > dist[it.i]) continue;
        pf_point a = {it.i % w, it.i / w};
        if (a.x == t.x && a.y == t.y) {
            ans = it.d;
            break;
        }
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if (!dx && !dy) continue;
                if (!ref_can_step(g, a, dx, dy)) continue;
                pf_point b = {a.x + dx, a.y + dy};
                double nd = it.d + pf_grid_cost(g, b) * (dx && dy ? sqrt(2.0) : 1.0);
                int32_t j = b.y * w + b.x;
                if (nd < dist[j]) {
                    dist[j] = nd;
                    tu_heap_push(heap, &n, (tu_heap_item){nd, j});
                }
            }
    }
    free(dist);
    free(heap);
    return ans;
}

pf_grid *tu_grid_from_ascii(const char *const *rows, int32_t h, int connectivity) {
    pf_legend legend;
    size_t lens[256];
    pf_grid *g = NULL;
    pf_parse_error err;
    ck_assert_int_le(h, 256);
    for (int i = 0; i < 256; i++) legend[i] = -1;
    legend['.'] = legend['S'] = legend['G'] = 1;
    legend['#'] = 0;
    for (int c = '1'; c <= '9'; c++) legend[c] = (int16_t)(c - '0');
    for (int32_t y = 0; y < h; y++) lens[y] = strlen(rows[y]);
    ck_assert_int_eq(pf_map_from_rows(rows, lens, h, legend, NULL, &g, &err), PF_OK);
    ck_assert_int_eq(pf_grid_set_rules(g, connectivity, false), PF_OK);
    return g;
}

const char *tu_bench_dir_wanted(void) {
    const char *d = getenv("PATHD_BENCH_DIR");
    return d && *d ? d : "../shared/benchmarks/movingai";
}

const char *tu_bench_dir(void) {
    const char *d = tu_bench_dir_wanted();
    struct stat sb;
    return stat(d, &sb) == 0 && S_ISDIR(sb.st_mode) ? d : NULL;
}

bool tu_in_ci(void) {
    const char *ci = getenv("CI");
    return ci && *ci && strcmp(ci, "0") != 0 && strcasecmp(ci, "false") != 0;
}

void tu_waiting(unsigned *polls, const char *what) {
    unsigned n = ++*polls;
    if (n >= 4096 && (n & (n - 1)) == 0) fprintf(stderr, "still waiting (%u polls): %s\n", n, what);
    if (n <= 16) {
        sched_yield();
    } else {
        struct timespec nap = {0, 2 * 1000 * 1000}; /* pacing, not synchronisation */
        nanosleep(&nap, NULL);
    }
}

uint16_t tu_free_port(void) {
    static uint64_t state;
    unsigned lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    struct timespec now;
    if (f) {
        if (fscanf(f, "%u %u", &lo, &hi) != 2) lo = 32768;
        fclose(f);
    }
    if (lo < 10000 + 1024) lo = 32768; /* an unusual range: stay in the default's gap */
    clock_gettime(CLOCK_MONOTONIC, &now);
    state ^= (uint64_t)getpid() << 32 ^ (uint64_t)now.tv_nsec;
    for (int tries = 0; tries < 1000; tries++) {
        uint16_t port = (uint16_t)(10000 + tu_below(&state, lo - 10000));
        struct sockaddr_in a;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;
        ck_assert_int_ge(fd, 0);
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
        close(fd);
        if (ok) return port;
    }
    ck_abort_msg("no free loopback port below the ephemeral range");
    return 0;
}

void tu_skip(const char *fn, const char *why) {
    char name[128], line[700];
    const char *log = getenv(TU_SKIP_LOG_ENV);
    size_t n = strlen(fn);
    int fd, len;
    /* Check's START_TEST(t) defines t_fn. */
    if (n > 3 && strcmp(fn + n - 3, "_fn") == 0) n -= 3;
    snprintf(name, sizeof(name), "%.*s", (int)n, fn);
    fprintf(stderr, "SKIPPED: %s: %s\n", name, why);
    if (!log || !*log) return;
    len = snprintf(line, sizeof(line), "%s\t%s\n", name, why);
    if (len < 0) return;
    if (len >= (int)sizeof(line)) len = (int)sizeof(line) - 1;
    /* One write of one line with O_APPEND: lines of tests running in
     * parallel processes never interleave. */
    fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd < 0) return;
    if (write(fd, line, (size_t)len) != len) fprintf(stderr, "tu_skip: short write to %s\n", log);
    close(fd);
}

char *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        if (buf) {
            buf[n] = '\0';
            *len = (size_t)n;
        }
    }
    fclose(f);
    return buf;
}

pf_grid *tu_load_map(const char *dir, const char *name) {
    char path[4096];
    size_t len;
    char *buf;
    pf_grid *g = NULL;
    pf_parse_error err;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    buf = tu_read_file(path, &len);
    if (!buf) return NULL;
    if (pf_map_parse_movingai(buf, len, NULL, &g, &err) != PF_OK) g = NULL;
    free(buf);
    return g;
}

pf_grid *tu_load_scen(const char *dir, const char *file, pf_scen *sc) {
    char path[4096];
    size_t len;
    pf_parse_error err;
    pf_grid *g;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    char *buf = tu_read_file(path, &len);
    ck_assert_msg(buf != NULL, "cannot read %s", path);
    ck_assert_msg(pf_scen_parse(buf, len, 0, sc, &err) == PF_OK, "%s line %d: %s", path, err.line,
                  err.msg);
    free(buf);
    g = tu_load_map(dir, pf_scen_map_basename(sc->map));
    ck_assert_msg(g != NULL, "cannot load the map of %s", path);
    return g;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tu_list_scen(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char **list = NULL;
    size_t n = 0;
    if (!d) return NULL;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".scen") == 0) {
            char **grown = realloc(list, (n + 2) * sizeof(*list));
            ck_assert_ptr_nonnull(grown);
            list = grown;
            list[n++] = strdup(e->d_name);
        }
    }
    closedir(d);
    if (list) {
        qsort(list, n, sizeof(*list), cmp_str);
        list[n] = NULL;
    }
    return list;
}

void tu_free_list(char **list) {
    if (!list) return;
    for (char **p = list; *p; p++) free(*p);
    free(list);
}

/* A published version of a small open map, for the table tests. */
pf_mapver *tu_small_mapver(pf_registry *reg, const char *id) {
    pf_grid *g = NULL;
    pf_planner *p = NULL;
    pf_mapver *mv;
    bool created;
    ck_assert_int_eq(pf_grid_create(8, 8, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_planner_create(g, NULL, &p), PF_OK);
    mv = pf_mapver_create(id, p, 16, 1 << 20, 0, NULL);
    ck_assert_ptr_nonnull(mv);
    ck_assert_int_eq(pf_registry_publish(reg, mv, &created), PF_OK);
    pf_mapver_retain(mv);
    return mv;
}

char *tu_jsonw_text(pf_jsonw *w) {
    size_t n;
    char *s = pf_jsonw_take(w, &n);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(strlen(s), n);
    return s;
}
