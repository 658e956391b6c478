/* landmarks.c -- see landmarks.h.
 *
 * Landmarks are placed by farthest-point selection in the largest connected
 * region: the first is the cell farthest from an arbitrary cell of it (a
 * corner of the region, in practice), each next one the cell whose distance
 * to the nearest landmark so far is largest. Each landmark costs one
 * Dijkstra over the region.
 */
#include "landmarks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "build_stop.h"
#include "clock_internal.h"
#include "deadends.h"

/* A growable list of cells: one bucket of the queue below. */
typedef struct bucket {
    int32_t *v;
    size_t n, cap;
} bucket;

static bool bucket_push(bucket *b, int32_t v) {
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 1024;
        int32_t *a = realloc(b->v, nc * sizeof(*a));
        if (!a) return false;
        b->v = a;
        b->cap = nc;
    }
    b->v[b->n++] = v;
    return true;
}

/* Scratch of one build. */
typedef struct build {
    int32_t w, n;
    pf_build_stop *stop;
    const uint8_t *moves; /* allowed moves of each cell in the all-open map */
    uint32_t *s, *t;      /* steps of the current Dijkstra; s = UINT32_MAX unreached */
    uint8_t *done;        /* settled by the current Dijkstra */
    bucket q[3];
} build;

static inline double dist_of(const build *b, int32_t v) {
    return (double)b->s[v] + (double)b->t[v] * PF_SQRT2;
}

/* Dijkstra from src over the moves, as Dial's bucket queue: a cell of
 * distance d waits in bucket floor(d). Every step is at least 1 long, so a
 * cell taken from bucket k can only reach buckets k + 1 and k + 2: the
 * cells of bucket k are final, in any order, once it is reached, and three
 * buckets in a ring hold the whole frontier. PF_ENOMEM, or PF_ECANCELED
 * when the build's stop said stop (polled every slice of settled cells). */
static pf_status dijkstra(build *b, int32_t src) {
    /* The resets, a quarter unit a cell (a store each). */
    for (int32_t v = 0; v < b->n; v += 4096) {
        int32_t e = b->n - v < 4096 ? b->n : v + 4096;
        if (pf_build_tick(b->stop, 1024)) return PF_ECANCELED;
        for (int32_t u = v; u < e; u++) b->s[u] = UINT32_MAX;
        memset(b->done + v, 0, (size_t)(e - v));
    }
    for (int i = 0; i < 3; i++) b->q[i].n = 0;
    b->s[src] = 0;
    b->t[src] = 0;
    if (!bucket_push(&b->q[0], src)) return PF_ENOMEM;
    for (uint64_t k = 0; b->q[0].n + b->q[1].n + b->q[2].n; k++) {
        bucket *cur = &b->q[k % 3];
        /* Cells are appended to the other two buckets only, so cur stays put. */
        for (size_t i = 0; i < cur->n; i++) {
            int32_t v = cur->v[i], x = v % b->w, y = v / b->w;
            uint8_t m = b->moves[v];
            if (b->done[v] || (uint64_t)dist_of(b, v) != k) continue; /* stale */
            if (pf_build_tick(b->stop, 1)) return PF_ECANCELED;
            b->done[v] = 1;
            for (int d = 0; d < 8; d++) {
                int32_t u;
                uint32_t ns, nt;
                double key;
                if (!(m & (1u << d))) continue;
                u = (y + pf_dir_dy[d]) * b->w + (x + pf_dir_dx[d]);
                if (b->done[u]) continue;
                ns = b->s[v] + (d < 4);
                nt = b->t[v] + (d >= 4);
                key = (double)ns + (double)nt * PF_SQRT2;
                if (b->s[u] != UINT32_MAX && key >= dist_of(b, u) - 1e-9) continue;
                b->s[u] = ns;
                b->t[u] = nt;
                if (!bucket_push(&b->q[(uint64_t)key % 3], u)) return PF_ENOMEM;
            }
        }
        cur->n = 0;
    }
    return PF_OK;
}

/* A cell of the largest region of walkable cells (by moves), -1 if none,
 * -2 when the build's stop said stop. */
static int32_t largest_region(const build *b, const uint64_t *open, int32_t *queue, uint8_t *seen) {
    int32_t best = -1, best_size = 0;
    memset(seen, 0, (size_t)b->n);
    for (int32_t v0 = 0; v0 < b->n; v0++) {
        int32_t head = 0, tail = 0;
        if ((v0 & 4095) == 0 && pf_build_tick(b->stop, 4096)) return -2;
        if (seen[v0] || !(open[v0 >> 6] >> (v0 & 63) & 1)) continue;
        seen[v0] = 1;
        queue[tail++] = v0;
        while (head < tail) {
            int32_t v = queue[head++], x = v % b->w, y = v / b->w;
            if (pf_build_tick(b->stop, 1)) return -2;
            for (int d = 0; d < 8; d++) {
                int32_t u;
                if (!(b->moves[v] & (1u << d))) continue;
                u = (y + pf_dir_dy[d]) * b->w + (x + pf_dir_dx[d]);
                if (!seen[u]) {
                    seen[u] = 1;
                    queue[tail++] = u;
                }
            }
        }
        if (tail > best_size) {
            best_size = tail;
            best = v0;
        }
    }
    return best;
}

pf_status pf_landmarks_build(const pf_grid *g, size_t max_bytes, pf_build_stop *stop,
                             pf_landmarks **out) {
    int32_t w = pf_grid_width(g), hgt = pf_grid_height(g), n = w * hgt;
    uint64_t t0 = pf__mono_us();
    pf_grid *m0 = NULL;
    pf_landmarks *l = NULL;
    uint8_t *moves = NULL, *seen = NULL;
    int32_t *queue = NULL;
    double *mind = NULL;
    build b;
    pf_status st = PF_ENOMEM;
    int k;
    int32_t lm;

    *out = NULL;
    memset(&b, 0, sizeof(b));
    if (max_bytes == 0 || n <= 0) return PF_OK;
    k = (int)(max_bytes / (4u * (size_t)n) < PF_LANDMARKS_MAX ? max_bytes / (4u * (size_t)n)
                                                              : PF_LANDMARKS_MAX);
    /* Within the budget as allocated (rounded up to whole huge pages). */
    while (k >= 2 && pf__big_size(4u * (size_t)n * (size_t)k) > max_bytes) k--;
    if (k < 2) return PF_OK;
    /* The all-open map: every door open. */
    if (!(m0 = pf_grid_clone(g))) return PF_ENOMEM;
    for (int32_t d = 0; d < pf_grid_door_count(m0); d++) pf_grid_set_door(m0, d, true);
    if (pf_grid_connectivity(m0) != 8 || !pf_grid_is_uniform(m0)) {
        pf_grid_destroy(m0);
        return PF_OK;
    }
    l = calloc(1, sizeof(*l));
    if (l) atomic_init(&l->refs, 1); /* so that every exit below can release it */
    moves = malloc((size_t)n);
    seen = malloc((size_t)n);
    queue = malloc((size_t)n * sizeof(*queue));
    mind = malloc((size_t)n * sizeof(*mind));
    b.s = malloc((size_t)n * sizeof(*b.s));
    b.t = malloc((size_t)n * sizeof(*b.t));
    b.done = malloc((size_t)n);
    if (!l || !moves || !seen || !queue || !mind || !b.s || !b.t || !b.done) goto out;
    l->k = k;
    l->w = w;
    l->h = hgt;
    l->cost = pf_grid_min_cost(m0);
    l->cut = pf_grid_corner_cutting(m0);
    /* Cache-line aligned (with 16 landmarks a cell's 64 bytes are one line,
     * read with one miss), on huge pages where it is large (bigmem.h). */
    l->d = pf__big_alloc((size_t)n * 2 * (size_t)k * sizeof(*l->d));
    l->open = calloc(((size_t)n + 63) / 64, sizeof(*l->open));
    if (!l->d || !l->open) goto out;
    for (int32_t v = 0; v < n; v++) {
        pf_point p = {v % w, v / w};
        if ((v & 4095) == 0 && pf_build_tick(stop, 4096)) {
            st = PF_ECANCELED;
            goto out;
        }
        moves[v] = pf_grid_moves(m0, p);
        if (pf_grid_cost(m0, p)) l->open[v >> 6] |= (uint64_t)1 << (v & 63);
    }
    b.w = w;
    b.n = n;
    b.moves = moves;
    b.stop = stop;
    lm = largest_region(&b, l->open, queue, seen);
    if (lm == -2) {
        st = PF_ECANCELED;
        goto out;
    }
    if (lm < 0) {
        st = PF_OK; /* nothing walkable */
        goto out_drop;
    }
    /* The first landmark: the cell farthest from an arbitrary one. */
    if ((st = dijkstra(&b, lm))) goto out;
    {
        double far = -1;
        for (int32_t v = 0; v < n; v++) {
            double dv;
            if ((v & 4095) == 0 && pf_build_tick(stop, 4096)) {
                st = PF_ECANCELED;
                goto out;
            }
            if (b.s[v] == UINT32_MAX) continue;
            dv = (double)b.s[v] + (double)b.t[v] * PF_SQRT2;
            if (dv > far) {
                far = dv;
                lm = v;
            }
        }
    }
    for (int32_t v = 0; v < n; v++) {
        if ((v & 4095) == 0 && pf_build_tick(stop, 4096)) {
            st = PF_ECANCELED;
            goto out;
        }
        mind[v] = INFINITY;
    }
    for (int j = 0; j < k; j++) {
        double far = -1;
        int32_t next = -1;
        if ((st = dijkstra(&b, lm))) goto out;
        for (int32_t v = 0; v < n; v++) {
            uint16_t *e = l->d + ((size_t)v * (size_t)k + (size_t)j) * 2;
            double dv;
            if ((v & 4095) == 0 && pf_build_tick(stop, 4096)) {
                st = PF_ECANCELED;
                goto out;
            }
            if (b.s[v] == UINT32_MAX) {
                e[0] = PF_LANDMARK_NONE;
                e[1] = 0;
                continue;
            }
            if (b.s[v] >= PF_LANDMARK_NONE || b.t[v] >= PF_LANDMARK_NONE) {
                st = PF_OK; /* too long to store exactly: no landmarks */
                goto out_drop;
            }
            e[0] = (uint16_t)b.s[v];
            e[1] = (uint16_t)b.t[v];
            dv = (double)b.s[v] + (double)b.t[v] * PF_SQRT2;
            if (dv < mind[v]) mind[v] = dv;
            if (mind[v] > far) {
                far = mind[v];
                next = v;
            }
        }
        if (next < 0 || far <= 0) { /* the region is one cell: k = j + 1 would do */
            st = PF_OK;
            goto out_drop;
        }
        lm = next;
    }
    if ((st = pf_deadends_build(m0, PF_DEADENDS_MIN_DEAD, stop, &l->dead)) != PF_OK) goto out;
    l->build_us = pf__mono_us() - t0;
    *out = l;
    l = NULL;
    st = PF_OK;
    goto out;
out_drop:
    /* Not applicable: no landmarks, no error. */
    pf_landmarks_release(l);
    l = NULL;
out:
    if (l) pf_landmarks_release(l);
    free(b.s);
    free(b.t);
    free(b.done);
    for (int i = 0; i < 3; i++) free(b.q[i].v);
    free(mind);
    free(queue);
    free(seen);
    free(moves);
    pf_grid_destroy(m0);
    return st;
}

void pf_landmarks_retain(pf_landmarks *l) { atomic_fetch_add(&l->refs, 1); }

void pf_landmarks_release(pf_landmarks *l) {
    if (!l || atomic_fetch_sub(&l->refs, 1) != 1) return;
    free(l->d);
    free(l->open);
    pf_deadends_destroy(l->dead);
    free(l);
}

size_t pf_landmarks_memory(const pf_landmarks *l) {
    size_t n = (size_t)l->w * (size_t)l->h;
    return sizeof(*l) + pf__big_size(n * 2 * (size_t)l->k * sizeof(*l->d)) +
           (n + 63) / 64 * sizeof(*l->open) + (l->dead ? pf_deadends_memory(l->dead) : 0);
}

bool pf_landmarks_valid_for(const pf_landmarks *l, const pf_grid *g, const pf_point *changed,
                            size_t n) {
    if (pf_grid_width(g) != l->w || pf_grid_height(g) != l->h ||
        pf_grid_corner_cutting(g) != l->cut)
        return false;
    for (size_t i = 0; i < n; i++) {
        int32_t v = changed[i].y * l->w + changed[i].x;
        uint8_t c = pf_grid_cost(g, changed[i]);
        if (c == 0) continue; /* blocked: distances only grow */
        if (c != l->cost || !(l->open[v >> 6] >> (v & 63) & 1)) return false;
    }
    return true;
}
