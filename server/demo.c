/* demo.c -- see demo.h. */
#include "demo.h"

#include <stdlib.h>

pf_status pf_demo_room(pf_grid **out) {
    static const char *const rows[] = {
        "....#.....", "....#.....", "..55#.....", "..55#.....",
        "....#.....", "....#.....", "..........",
    };
    pf_grid *g = NULL;
    pf_status st = pf_grid_create(10, 7, NULL, &g);
    if (st) return st;
    for (int32_t y = 0; y < 7; y++)
        for (int32_t x = 0; x < 10; x++) {
            char c = rows[y][x];
            pf_point p = {x, y};
            pf_grid_set_cost(g, p, c == '#' ? 0 : c == '5' ? 5 : 1);
        }
    *out = g;
    return PF_OK;
}

static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

pf_status pf_demo_maze(int32_t cw, int32_t ch, uint64_t seed, pf_grid **out) {
    static const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
    int32_t w = 2 * cw + 1, h = 2 * ch + 1;
    size_t ncells = (size_t)cw * (size_t)ch;
    int32_t *stack = NULL;
    uint8_t *seen = NULL;
    size_t top = 0;
    pf_grid *g = NULL;
    pf_status st;

    *out = NULL;
    if (cw < 1 || ch < 1) return PF_ERANGE;
    if ((st = pf_grid_create(w, h, NULL, &g))) return st;
    stack = malloc(ncells * sizeof(*stack));
    seen = calloc(ncells, 1);
    if (!stack || !seen) {
        st = PF_ENOMEM;
        goto out_free;
    }
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++)
            pf_grid_set_cost(g, (pf_point){x, y}, (x % 2 && y % 2) ? 1 : 0);
    stack[top++] = 0;
    seen[0] = 1;
    while (top > 0) {
        int32_t c = stack[top - 1], cx = c % cw, cy = c / cw, opts[4], n = 0;
        for (int d = 0; d < 4; d++) {
            int32_t nx = cx + dx[d], ny = cy + dy[d];
            if (nx >= 0 && ny >= 0 && nx < cw && ny < ch && !seen[ny * cw + nx]) opts[n++] = d;
        }
        if (n == 0) {
            top--;
            continue;
        }
        {
            int d = opts[next_rand(&seed) % (uint64_t)n];
            int32_t nx = cx + dx[d], ny = cy + dy[d];
            pf_grid_set_cost(g, (pf_point){2 * cx + 1 + dx[d], 2 * cy + 1 + dy[d]}, 1);
            seen[ny * cw + nx] = 1;
            stack[top++] = ny * cw + nx;
        }
    }
    *out = g;
    g = NULL;
out_free:
    free(stack);
    free(seen);
    pf_grid_destroy(g);
    return st;
}
