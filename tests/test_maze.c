/* test_maze.c -- generated mazes: without loops perfect (the rooms form a
 * spanning tree, and with one-cell corridors the walkable cells themselves
 * do: exactly one path between two cells), identical for one seed, loops
 * add cycles, both wall modes, large mazes without recursion, bad input. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maze.h"
#include "testutil.h"

/* Whether rooms r and its east (east) or south neighbour are joined. */
static bool joined(const pf_grid *g, const pf_maze_params *p, int32_t i, int32_t j, bool east) {
    pf_point o = pf_maze_room_origin(p, i, j);
    int32_t c = p->corridor;
    if (p->walls == PF_MAZE_WALL_CELLS)
        return pf_grid_is_walkable(g, east ? (pf_point){o.x + c, o.y} : (pf_point){o.x, o.y + c});
    return east ? !pf_grid_is_wall(g, (pf_point){o.x + c - 1, o.y}, PF_DIR_E)
                : !pf_grid_is_wall(g, (pf_point){o.x, o.y + c - 1}, PF_DIR_S);
}

/* Joined room pairs and whether every room is reached from room 0. */
static long room_edges(const pf_grid *g, const pf_maze_params *p, bool *connected) {
    int32_t cols, rows;
    long e = 0;
    ck_assert_int_eq(pf_maze_rooms(p, &cols, &rows), PF_OK);
    size_t n = (size_t)cols * rows, head = 0, tail = 0;
    bool *seen = calloc(n, 1);
    int32_t *q = malloc(n * sizeof(*q));
    for (int32_t j = 0; j < rows; j++)
        for (int32_t i = 0; i < cols; i++) {
            e += i + 1 < cols && joined(g, p, i, j, true);
            e += j + 1 < rows && joined(g, p, i, j, false);
        }
    seen[0] = true;
    q[tail++] = 0;
    while (head < tail) {
        int32_t r = q[head++], i = r % cols, j = r / cols, nb[4], k = 0;
        if (i + 1 < cols && joined(g, p, i, j, true)) nb[k++] = r + 1;
        if (i > 0 && joined(g, p, i - 1, j, true)) nb[k++] = r - 1;
        if (j + 1 < rows && joined(g, p, i, j, false)) nb[k++] = r + cols;
        if (j > 0 && joined(g, p, i, j - 1, false)) nb[k++] = r - cols;
        for (int t = 0; t < k; t++)
            if (!seen[nb[t]]) {
                seen[nb[t]] = true;
                q[tail++] = nb[t];
            }
    }
    *connected = tail == n;
    free(seen);
    free(q);
    return e;
}

/* Cell-level: walkable cells, the undirected steps between them by the
 * reference rule, and whether one reaches them all. */
static void cell_graph(const pf_grid *g, long *v, long *e, bool *connected) {
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    bool *seen = malloc((size_t)w * h * sizeof(*seen));
    pf_point first = {-1, -1};
    *v = *e = 0;
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point a = {x, y};
            if (!pf_grid_is_walkable(g, a)) continue;
            if (first.x < 0) first = a;
            (*v)++;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    if ((dx || dy) && tu_reference_can_step(g, a, dx, dy)) (*e)++;
        }
    *e /= 2;
    tu_reference_reach(g, first, -1, seen);
    long r = 0;
    for (size_t i = 0; i < (size_t)w * h; i++) r += seen[i];
    *connected = r == *v;
    free(seen);
}

static pf_maze_params random_params(uint64_t *st) {
    pf_maze_params p = pf_maze_params_make(0, 0, tu_rand(st), 1 + (int32_t)tu_below(st, 3));
    p.walls = tu_below(st, 2) ? PF_MAZE_WALL_EDGES : PF_MAZE_WALL_CELLS;
    p.width = p.corridor + 2 + (int32_t)tu_below(st, 40);
    p.height = p.corridor + 2 + (int32_t)tu_below(st, 40);
    p.connectivity = tu_below(st, 2) ? 8 : 4;
    return p;
}

START_TEST(maze_perfect_random_params) {
    uint64_t st = tu_seed("maze_perfect_random_params", 0x3a2e0001);
    for (int m = 0; m < 300; m++) {
        pf_maze_params p = random_params(&st);
        pf_grid *g = NULL;
        int32_t cols, rows;
        bool conn;
        ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_OK);
        ck_assert_int_eq(pf_grid_width(g), p.width);
        ck_assert_int_eq(pf_maze_rooms(&p, &cols, &rows), PF_OK);
        long e = room_edges(g, &p, &conn);
        ck_assert_msg(conn && e == (long)cols * rows - 1,
                      "maze %d (%dx%d corridor %d walls %d): %ld joins, %d rooms, conn %d", m,
                      p.width, p.height, p.corridor, p.walls, e, cols * rows, conn);
        long v, ce;
        cell_graph(g, &v, &ce, &conn);
        ck_assert(conn);
        if (p.corridor == 1)
            ck_assert_msg(ce == v - 1, "maze %d: %ld cells, %ld steps: not a tree", m, v, ce);
        long want = (long)cols * rows * p.corridor * p.corridor +
                    (p.walls == PF_MAZE_WALL_CELLS ? e * p.corridor : 0);
        ck_assert_int_eq(v, want);
        pf_grid_destroy(g);
    }
}
END_TEST

static bool same_map(const pf_grid *a, const pf_grid *b) {
    int32_t w = pf_grid_width(a), h = pf_grid_height(a);
    if (w != pf_grid_width(b) || h != pf_grid_height(b)) return false;
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point c = {x, y};
            if (pf_grid_cost(a, c) != pf_grid_cost(b, c) ||
                pf_grid_moves(a, c) != pf_grid_moves(b, c))
                return false;
            for (int d = 0; d < 4; d++)
                if (pf_grid_is_wall(a, c, d) != pf_grid_is_wall(b, c, d)) return false;
        }
    return true;
}

START_TEST(maze_deterministic_per_seed) {
    uint64_t st = tu_seed("maze_deterministic_per_seed", 0x3a2e0002);
    int differ = 0;
    for (int m = 0; m < 60; m++) {
        pf_maze_params p = random_params(&st), q;
        p.width += 20;
        p.height += 20;
        p.loops = tu_below(&st, 2) ? 0.2 : 0.0;
        pf_grid *a = NULL, *b = NULL, *c = NULL;
        ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &a), PF_OK);
        ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &b), PF_OK);
        ck_assert(same_map(a, b));
        q = p;
        q.seed = p.seed + 1;
        ck_assert_int_eq(pf_maze_generate(&q, NULL, NULL, &c), PF_OK);
        differ += !same_map(a, c);
        pf_grid_destroy(a);
        pf_grid_destroy(b);
        pf_grid_destroy(c);
    }
    ck_assert_int_ge(differ, 58);
}
END_TEST

START_TEST(maze_loops_add_cycles) {
    uint64_t st = tu_seed("maze_loops_add_cycles", 0x3a2e0003);
    for (int m = 0; m < 40; m++) {
        pf_maze_params p = random_params(&st);
        int32_t cols, rows;
        bool conn;
        p.width += 30;
        p.height += 30;
        p.loops = 1.0;
        pf_grid *g = NULL;
        ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_OK);
        ck_assert_int_eq(pf_maze_rooms(&p, &cols, &rows), PF_OK);
        /* Every wall between rooms is gone. */
        ck_assert_int_eq(room_edges(g, &p, &conn),
                         (long)(cols - 1) * rows + (long)cols * (rows - 1));
        pf_grid_destroy(g);
        p.loops = 0.25;
        ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_OK);
        long e = room_edges(g, &p, &conn);
        ck_assert(conn);
        ck_assert_int_gt(e, (long)cols * rows - 1);
        pf_grid_destroy(g);
    }
}
END_TEST

START_TEST(maze_rejects_bad_params) {
    pf_grid *g = NULL;
    pf_grid_limits lim = pf_grid_default_limits();
    pf_maze_params p = pf_maze_params_make(10, 10, 1, 0);
    ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_EINVAL);
    p.corridor = PF_MAZE_MAX_CORRIDOR + 1;
    ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_EINVAL);
    p.corridor = 9; /* cells mode needs a side of corridor + 2 */
    ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_ERANGE);
    p.walls = PF_MAZE_WALL_EDGES;
    ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_OK);
    pf_grid_destroy(g);
    g = NULL;
    p.corridor = 2;
    p.loops = 1.5;
    ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_EINVAL);
    p.loops = 0.0 / 0.0;
    ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_EINVAL);
    p.loops = 0;
    p.connectivity = 6;
    ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_EINVAL);
    p.connectivity = 4;
    p.walls = (pf_maze_walls)7;
    ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_EINVAL);
    p.walls = PF_MAZE_WALL_CELLS;
    lim.max_cells = 50;
    ck_assert_int_eq(pf_maze_generate(&p, &lim, NULL, &g), PF_ELIMIT);
    ck_assert_ptr_null(g);
}
END_TEST

/* A 2047x2047 maze (over a million rooms) needs no recursion and is whole. */
START_TEST(maze_large_iterative) {
    pf_maze_params p = pf_maze_params_make(2047, 2047, 7, 1);
    pf_grid *g = NULL;
    long v, e;
    bool conn;
    ck_assert_int_eq(pf_maze_generate(&p, NULL, NULL, &g), PF_OK);
    cell_graph(g, &v, &e, &conn);
    ck_assert(conn);
    ck_assert_int_eq(e, v - 1);
    ck_assert_int_eq(v, 2L * 1023 * 1023 - 1);
    pf_grid_destroy(g);
}
END_TEST

TU_SUITE(maze) {
    Suite *s = suite_create("maze");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, maze_rejects_bad_params);
    tcase_add_test(tc, maze_deterministic_per_seed);
    tcase_add_test(tc, maze_loops_add_cycles);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("property");
    tcase_set_timeout(slow, 600);
    tcase_add_test(slow, maze_perfect_random_params);
    tcase_add_test(slow, maze_large_iterative);
    suite_add_tcase(s, slow);
    return s;
}
