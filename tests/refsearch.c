/* refsearch.c -- see refsearch.h. */
#include "refsearch.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

bool ref_agent_fits(const pf_grid *g, pf_point p, int32_t n) {
    for (int32_t dy = 0; dy < n; dy++)
        for (int32_t dx = 0; dx < n; dx++) {
            pf_point c = {p.x + dx, p.y + dy};
            if (!pf_grid_is_walkable(g, c)) return false;
            if (dx + 1 < n && pf_grid_is_wall(g, c, PF_DIR_E)) return false;
            if (dy + 1 < n && pf_grid_is_wall(g, c, PF_DIR_S)) return false;
        }
    return true;
}

/* An orthogonal step of the agent: every cell of its square steps. */
static bool ortho_step(const pf_grid *g, int32_t n, pf_point a, int dx, int dy) {
    pf_point b = {a.x + dx, a.y + dy};
    if (!ref_agent_fits(g, a, n) || !ref_agent_fits(g, b, n)) return false;
    for (int32_t oy = 0; oy < n; oy++)
        for (int32_t ox = 0; ox < n; ox++)
            if (!tu_reference_can_step(g, (pf_point){a.x + ox, a.y + oy}, dx, dy)) return false;
    return true;
}

bool ref_agent_step(const pf_grid *g, int32_t n, pf_point a, int dx, int dy, double *cost) {
    pf_point b = {a.x + dx, a.y + dy};
    uint8_t mx = 0;
    if (!ref_agent_fits(g, a, n) || !ref_agent_fits(g, b, n)) return false;
    if (dx && dy) {
        /* The map's corner rule for the agent as a whole: L routes through
         * the square beside it horizontally and vertically. */
        bool r1, r2;
        if (pf_grid_connectivity(g) != 8) return false;
        r1 = ortho_step(g, n, a, dx, 0) && ortho_step(g, n, (pf_point){a.x + dx, a.y}, 0, dy);
        r2 = ortho_step(g, n, a, 0, dy) && ortho_step(g, n, (pf_point){a.x, a.y + dy}, dx, 0);
        if (pf_grid_corner_cutting(g) ? !(r1 || r2) : !(r1 && r2)) return false;
    } else if (!ortho_step(g, n, a, dx, dy)) {
        return false;
    }
    for (int32_t oy = 0; oy < n; oy++)
        for (int32_t ox = 0; ox < n; ox++)
            if (pf_grid_cost(g, (pf_point){b.x + ox, b.y + oy}) > mx)
                mx = pf_grid_cost(g, (pf_point){b.x + ox, b.y + oy});
    if (cost) *cost = mx * (dx && dy ? sqrt(2.0) : 1.0);
    return true;
}

void ref_dists(const pf_grid *g, int32_t n, const pf_point *src, size_t nsrc, bool backward,
               double *dist) {
    ref_dists_box(g, n, src, nsrc, backward, 0, 0, pf_grid_width(g), pf_grid_height(g), dist);
}

void ref_dists_box(const pf_grid *g, int32_t n, const pf_point *src, size_t nsrc, bool backward,
                   int32_t x0, int32_t y0, int32_t bw, int32_t bh, double *dist) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    size_t cells = (size_t)w * h, hn = 0;
    tu_heap_item *heap = malloc((cells * 9 + nsrc + 1) * sizeof(*heap));
    ck_assert_ptr_nonnull(heap);
    for (size_t i = 0; i < cells; i++) dist[i] = INFINITY;
    for (size_t i = 0; i < nsrc; i++) {
        int32_t k = src[i].y * w + src[i].x;
        dist[k] = 0;
        tu_heap_push(heap, &hn, (tu_heap_item){0, k});
    }
    while (hn > 0) {
        tu_heap_item it = tu_heap_pop(heap, &hn);
        pf_point a = {it.i % w, it.i / w};
        if (it.d > dist[it.i]) continue;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                pf_point b = {a.x + dx, a.y + dy};
                double c;
                if (!dx && !dy) continue;
                if (b.x < x0 || b.y < y0 || b.x >= x0 + bw || b.y >= y0 + bh) continue;
                /* Backward: the step b -> a, into the settled cell. */
                if (backward ? !ref_agent_step(g, n, b, -dx, -dy, &c)
                             : !ref_agent_step(g, n, a, dx, dy, &c))
                    continue;
                int32_t j = b.y * w + b.x;
                if (it.d + c < dist[j]) {
                    dist[j] = it.d + c;
                    tu_heap_push(heap, &hn, (tu_heap_item){dist[j], j});
                }
            }
    }
    free(heap);
}

long ref_agent_path_check(const pf_grid *g, int32_t n, const pf_point *path, size_t len,
                          double *cost) {
    double c = 0.0;
    if (len == 0) return 0;
    if (!ref_agent_fits(g, path[0], n)) return 0;
    for (size_t i = 1; i < len; i++) {
        double s;
        int dx = path[i].x - path[i - 1].x, dy = path[i].y - path[i - 1].y;
        if (dx < -1 || dx > 1 || dy < -1 || dy > 1 || (!dx && !dy)) return (long)i;
        if (!ref_agent_step(g, n, path[i - 1], dx, dy, &s)) return (long)i;
        c += s;
    }
    if (cost) *cost = c;
    return -1;
}

bool ref_close(double a, double b) {
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= 1e-9 * (1.0 + fabs(a) + fabs(b));
}
