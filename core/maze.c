/* maze.c -- the iterative recursive backtracker. See maze.h.
 *
 * The grid is filled through its internal arrays (costs, then wall bits)
 * and its move masks computed once at the end by pf_grid_set_rules: the
 * public setters recompute the masks around every cell they touch, nine
 * times the work on a map that is all change. */
#include "maze.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "build_stop.h"
#include "grid_internal.h"

#define CARVED_E 1u
#define CARVED_S 2u

pf_maze_params pf_maze_params_make(int32_t width, int32_t height, uint64_t seed, int32_t corridor) {
    pf_maze_params p;
    memset(&p, 0, sizeof(p));
    p.width = width;
    p.height = height;
    p.seed = seed;
    p.corridor = corridor;
    p.walls = PF_MAZE_WALL_CELLS;
    p.connectivity = 8;
    return p;
}

pf_status pf_maze_rooms(const pf_maze_params *p, int32_t *cols, int32_t *rows) {
    *cols = *rows = 0;
    if (p->corridor < 1 || p->corridor > PF_MAZE_MAX_CORRIDOR) return PF_EINVAL;
    if (p->walls == PF_MAZE_WALL_CELLS) {
        if (p->width < p->corridor + 2 || p->height < p->corridor + 2) return PF_ERANGE;
        *cols = (p->width - 1) / (p->corridor + 1);
        *rows = (p->height - 1) / (p->corridor + 1);
    } else if (p->walls == PF_MAZE_WALL_EDGES) {
        if (p->width < p->corridor || p->height < p->corridor) return PF_ERANGE;
        *cols = p->width / p->corridor;
        *rows = p->height / p->corridor;
    } else {
        return PF_EINVAL;
    }
    return PF_OK;
}

pf_point pf_maze_room_origin(const pf_maze_params *p, int32_t i, int32_t j) {
    pf_point o;
    if (p->walls == PF_MAZE_WALL_CELLS) {
        o.x = 1 + i * (p->corridor + 1);
        o.y = 1 + j * (p->corridor + 1);
    } else {
        o.x = i * p->corridor;
        o.y = j * p->corridor;
    }
    return o;
}

static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The depth-first carve over cols x rows rooms from room 0: carved[r] gets
 * CARVED_E / CARVED_S for the passages to its east and south neighbours.
 * PF_ECANCELED when stop said stop (polled per step). */
static pf_status carve(int32_t cols, int32_t rows, uint64_t *rng, uint8_t *carved,
                       pf_build_stop *stop) {
    size_t n = (size_t)cols * (size_t)rows, sp = 0;
    uint8_t *seen = calloc(n, 1);
    int32_t *stack = malloc(n * sizeof(*stack));
    if (!seen || !stack) {
        free(seen);
        free(stack);
        return PF_ENOMEM;
    }
    seen[0] = 1;
    stack[sp++] = 0;
    while (sp > 0) {
        /* Candidates by direction (E, W, S, N): with one column r + 1 and
         * r + cols are the same room, so indices alone would not say. */
        int32_t r = stack[sp - 1], x = r % cols, y = r / cols, k = 0, nx;
        int cand[4];
        if (pf_build_tick(stop, 1)) {
            free(seen);
            free(stack);
            return PF_ECANCELED;
        }
        if (x + 1 < cols && !seen[r + 1]) cand[k++] = PF_DIR_E;
        if (x > 0 && !seen[r - 1]) cand[k++] = PF_DIR_W;
        if (y + 1 < rows && !seen[r + cols]) cand[k++] = PF_DIR_S;
        if (y > 0 && !seen[r - cols]) cand[k++] = PF_DIR_N;
        if (k == 0) {
            sp--; /* a dead end: back up */
            continue;
        }
        switch (cand[next_rand(rng) % (uint64_t)k]) {
        case PF_DIR_E:
            nx = r + 1;
            carved[r] |= CARVED_E;
            break;
        case PF_DIR_W:
            nx = r - 1;
            carved[nx] |= CARVED_E;
            break;
        case PF_DIR_S:
            nx = r + cols;
            carved[r] |= CARVED_S;
            break;
        default:
            nx = r - cols;
            carved[nx] |= CARVED_S;
            break;
        }
        seen[nx] = 1;
        stack[sp++] = nx;
    }
    free(seen);
    free(stack);
    return PF_OK;
}

/* Removes each remaining inner wall with probability `loops`. */
static void add_loops(int32_t cols, int32_t rows, double loops, uint64_t *rng, uint8_t *carved) {
    if (!(loops > 0.0)) return;
    for (int32_t y = 0; y < rows; y++)
        for (int32_t x = 0; x < cols; x++) {
            uint8_t *c = &carved[(size_t)y * cols + x];
            if (x + 1 < cols && !(*c & CARVED_E) &&
                (double)(next_rand(rng) >> 11) * 0x1p-53 < loops)
                *c |= CARVED_E;
            if (y + 1 < rows && !(*c & CARVED_S) &&
                (double)(next_rand(rng) >> 11) * 0x1p-53 < loops)
                *c |= CARVED_S;
        }
}

static void set_cost_box(pf_grid *g, int32_t x0, int32_t y0, int32_t w, int32_t h, uint8_t c) {
    for (int32_t y = y0; y < y0 + h; y++) memset(g->cost + (size_t)y * g->w + x0, c, (size_t)w);
}

/* Blocks the edge between cell i and its neighbour in direction d (E or S). */
static void wall_edge(pf_grid *g, int32_t i, int d) {
    int32_t j = i + pf__grid_dir_offset(g, d);
    g->walls[i] |= (uint8_t)(1u << d);
    g->walls[j] |= (uint8_t)(1u << (d == PF_DIR_E ? PF_DIR_W : PF_DIR_N));
    g->nwalls++;
}

pf_status pf_maze_generate(const pf_maze_params *p, const pf_grid_limits *lim, pf_build_stop *stop,
                           pf_grid **out) {
    const int32_t c = p->corridor;
    int32_t cols, rows;
    uint64_t rng = p->seed;
    uint8_t *carved = NULL;
    pf_grid *g = NULL;
    pf_status st;

    *out = NULL;
    if ((st = pf_maze_rooms(p, &cols, &rows))) return st;
    if (!(p->loops >= 0.0 && p->loops <= 1.0)) return PF_EINVAL;
    if (p->connectivity != 4 && p->connectivity != 8) return PF_EINVAL;
    if ((st = pf_grid_create(p->width, p->height, lim, &g))) return st;
    carved = calloc((size_t)cols * (size_t)rows, 1);
    if (!carved) {
        st = PF_ENOMEM;
        goto out_free;
    }
    if ((st = carve(cols, rows, &rng, carved, stop))) goto out_free;
    add_loops(cols, rows, p->loops, &rng, carved);

    if (p->walls == PF_MAZE_WALL_CELLS) {
        memset(g->cost, 0, (size_t)g->w * (size_t)g->h);
        for (int32_t j = 0; j < rows; j++)
            for (int32_t i = 0; i < cols; i++) {
                if (pf_build_tick(stop, (uint64_t)(c + 1) * (uint64_t)(c + 1))) goto stopped;
                pf_point o = pf_maze_room_origin(p, i, j);
                uint8_t k = carved[(size_t)j * cols + i];
                set_cost_box(g, o.x, o.y, c, c, 1);
                if (k & CARVED_E) set_cost_box(g, o.x + c, o.y, 1, c, 1);
                if (k & CARVED_S) set_cost_box(g, o.x, o.y + c, c, 1, 1);
            }
    } else {
        g->walls = calloc((size_t)g->w * (size_t)g->h, 1);
        if (!g->walls) {
            st = PF_ENOMEM;
            goto out_free;
        }
        /* Beyond the last whole room: blocked. */
        if (cols * c < g->w) set_cost_box(g, cols * c, 0, g->w - cols * c, g->h, 0);
        if (rows * c < g->h) set_cost_box(g, 0, rows * c, g->w, g->h - rows * c, 0);
        for (int32_t j = 0; j < rows; j++)
            for (int32_t i = 0; i < cols; i++) {
                pf_point o = pf_maze_room_origin(p, i, j);
                uint8_t k = carved[(size_t)j * cols + i];
                if (pf_build_tick(stop, 2 * (uint64_t)c)) goto stopped;
                if (i + 1 < cols && !(k & CARVED_E))
                    for (int32_t y = o.y; y < o.y + c; y++)
                        wall_edge(g, y * g->w + o.x + c - 1, PF_DIR_E);
                if (j + 1 < rows && !(k & CARVED_S))
                    for (int32_t x = o.x; x < o.x + c; x++)
                        wall_edge(g, (o.y + c - 1) * g->w + x, PF_DIR_S);
            }
    }
    memset(g->cost_hist, 0, sizeof(g->cost_hist));
    for (int32_t y = 0; y < g->h; y++) {
        const uint8_t *row = g->cost + (size_t)y * g->w;
        if (pf_build_tick(stop, (uint64_t)g->w)) goto stopped;
        for (int32_t x = 0; x < g->w; x++) g->cost_hist[row[x]]++;
    }
    g->walkable = (int64_t)g->cost_hist[1];
    /* Every move mask (pf_grid_set_rules), a row between polls. */
    g->connectivity = p->connectivity;
    g->corner_cutting = p->corner_cutting;
    for (int32_t y = 0; y < g->h; y++) {
        if (pf_build_tick(stop, 4 * (uint64_t)g->w)) goto stopped;
        pf__grid_update_rows(g, y, y + 1);
    }
    free(carved);
    *out = g;
    return PF_OK;

stopped:
    st = PF_ECANCELED;
out_free:
    free(carved);
    pf_grid_destroy(g);
    return st;
}
