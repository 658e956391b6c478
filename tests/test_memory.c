/* test_memory.c -- server/memory.c: the process memory budget. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "maze.h"
#include "memory.h"
#include "planner.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* The sanitizers' allocator interface (sanitizer/allocator_interface.h,
 * which Debian ships without): the bytes of this process's live blocks. */
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t held_bytes(void) { return __sanitizer_get_current_allocated_bytes(); }
#else
#include <malloc.h>
static size_t held_bytes(void) {
    struct mallinfo2 mi = mallinfo2(); /* every arena: in-use chunks and mapped blocks */
    return mi.uordblks + mi.hblkhd;
}
#endif

START_TEST(memory_charges_within_budget) {
    pf_mem *m = pf_mem_create(1000);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(pf_mem_budget(m), 1000);
    ck_assert(pf_mem_try_charge(m, PF_MEM_MAPS, 600));
    ck_assert(pf_mem_try_charge(m, PF_MEM_SESSIONS, 400)); /* exactly the budget */
    ck_assert(!pf_mem_try_charge(m, PF_MEM_CACHES, 1));    /* one byte too many */
    ck_assert_uint_eq(pf_mem_refused(m), 1);
    ck_assert_uint_eq(pf_mem_used(m), 1000);
    ck_assert_uint_eq(pf_mem_used_by(m, PF_MEM_MAPS), 600);
    ck_assert_uint_eq(pf_mem_used_by(m, PF_MEM_CACHES), 0);
    /* What is held anyway may pass it; then nothing more fits. */
    pf_mem_charge(m, PF_MEM_STREAMS, 50);
    ck_assert_uint_eq(pf_mem_used(m), 1050);
    ck_assert(!pf_mem_try_charge(m, PF_MEM_BODIES, 1));
    pf_mem_uncharge(m, PF_MEM_MAPS, 600);
    pf_mem_uncharge(m, PF_MEM_STREAMS, 50);
    ck_assert_uint_eq(pf_mem_used(m), 400);
    ck_assert(pf_mem_try_charge(m, PF_MEM_BODIES, 600));
    ck_assert(!pf_mem_try_charge(m, PF_MEM_BODIES, (size_t)-1)); /* no wrap-around */
    pf_mem_destroy(m);
    /* No budget object: everything fits, nothing is counted. */
    ck_assert(pf_mem_try_charge(NULL, PF_MEM_MAPS, (size_t)-1));
    pf_mem_charge(NULL, PF_MEM_MAPS, 1);
    pf_mem_uncharge(NULL, PF_MEM_MAPS, 1);
}
END_TEST

START_TEST(memory_default_budget_and_estimates) {
    pf_mem *m = pf_mem_create(0);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_gt(pf_mem_budget(m), 0); /* 3/4 of RAM or of the cgroup's limit */
    pf_mem_destroy(m);
    ck_assert_uint_gt(pf_mem_session_estimate(2047ull * 2047), 16598176);
    ck_assert_str_eq(pf_mem_kind_name(PF_MEM_SESSIONS), "sessions");
}
END_TEST

/* The reservation made before a map is built (pf_mem_map_estimate) bounds
 * what the built map then holds, counted by the allocator (every byte of
 * every live block: the grid, jps, landmarks, the HPA* hierarchy, agent
 * data, with the allocator's headers, rounding and alignment padding), on
 * generated mazes of every corridor width from 1 (a transition at every
 * other border cell: the hierarchy's worst case) to wide rooms, both wall
 * modes, loops, sizes from one cluster to several hundred, with and without
 * jump tables and landmarks -- and does not overshoot it by half when no
 * landmarks are allowed (they are reserved whether or not the map's auto
 * model then builds them) on a map that holds 1 MiB or more. It bounds
 * pf_planner_memory too, the charge that replaces it once built. The estimate of a 2048x2048
 * corridor-1 maze was 64 bytes a cell, 387 MB for the 419 MB it holds. */
START_TEST(memory_map_estimate_bounds_what_is_held) {
    static const struct {
        int32_t side, corridor;
        pf_maze_walls walls;
        double loops;
    } mazes[] = {
        {24, 1, PF_MAZE_WALL_EDGES, 0},   {61, 1, PF_MAZE_WALL_CELLS, 0},
        {130, 1, PF_MAZE_WALL_EDGES, 0},  {257, 1, PF_MAZE_WALL_EDGES, 0},
        {257, 1, PF_MAZE_WALL_CELLS, .3}, {400, 1, PF_MAZE_WALL_EDGES, 0},
        {100, 2, PF_MAZE_WALL_EDGES, 0},  {257, 2, PF_MAZE_WALL_CELLS, 0},
        {300, 2, PF_MAZE_WALL_EDGES, .1}, {77, 3, PF_MAZE_WALL_CELLS, 0},
        {257, 3, PF_MAZE_WALL_EDGES, 0},  {200, 4, PF_MAZE_WALL_EDGES, .5},
        {300, 5, PF_MAZE_WALL_CELLS, 0},  {256, 7, PF_MAZE_WALL_EDGES, 0},
        {300, 12, PF_MAZE_WALL_CELLS, 0}, {320, 30, PF_MAZE_WALL_EDGES, 0},
    };
    static const struct {
        size_t landmark_bytes, jps_table_bytes;
        int32_t cluster_size;
    } opts[] = {
        {0, 0, 0}, {0, 24u << 20, 0}, {4u << 20, 0, 0}, {0, 0, 8}, {16u << 20, 24u << 20, 0}};
    double ratio_min = 1e9, ratio_max = 0;
    for (size_t i = 0; i < sizeof(mazes) / sizeof(mazes[0]); i++)
        for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
            pf_maze_params mp =
                pf_maze_params_make(mazes[i].side, mazes[i].side, 25 + i, mazes[i].corridor);
            pf_planner_opts po;
            pf_planner *p = NULL;
            pf_grid *g = NULL;
            size_t before = held_bytes(), held, est = 0;
            double ratio;
            if (k > 2 && (i + k) % 3) continue; /* the last two settings on a third */
            mp.walls = mazes[i].walls;
            mp.loops = mazes[i].loops;
            memset(&po, 0, sizeof(po));
            po.build_hpa = true;
            po.cluster_size = opts[k].cluster_size;
            po.landmark_bytes = opts[k].landmark_bytes;
            po.landmark_min_cells = 1; /* landmarks on every map they are allowed on */
            po.jps_table_bytes = opts[k].jps_table_bytes;
            ck_assert_int_eq(pf_maze_generate(&mp, NULL, NULL, &g), PF_OK);
            ck_assert_int_eq(pf_mem_map_estimate(g, &po, &est), PF_OK);
            ck_assert_int_eq(pf_planner_create(g, &po, &p), PF_OK);
            held = held_bytes() - before;
            ck_assert_msg(est >= held && est >= pf_planner_memory(p),
                          "maze %zu (%dx%d corridor %d), settings %zu: estimate %zu < %zu held "
                          "(pf_planner_memory %zu)",
                          i, mazes[i].side, mazes[i].side, mazes[i].corridor, k, est, held,
                          pf_planner_memory(p));
            ratio = (double)est / (double)held;
            ratio_min = ratio < ratio_min ? ratio : ratio_min;
            /* 64 KiB of fixed-size structs dominate a smaller map's. */
            if (!opts[k].landmark_bytes && held >= (1u << 20)) {
                ratio_max = ratio > ratio_max ? ratio : ratio_max;
                ck_assert_msg(est <= held + held / 2,
                              "maze %zu (%dx%d corridor %d), settings %zu: estimate %zu > 1.5 x "
                              "%zu held",
                              i, mazes[i].side, mazes[i].side, mazes[i].corridor, k, est, held);
            }
            pf_planner_destroy(p);
        }
    fprintf(stderr,
            "memory_map_estimate_bounds_what_is_held: estimate / held %.3f at least, %.3f at "
            "most without landmarks\n",
            ratio_min, ratio_max);
}
END_TEST

TU_SUITE(memory) {
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("memory");
    tcase_add_test(tc, memory_charges_within_budget);
    tcase_add_test(tc, memory_default_budget_and_estimates);
    suite_add_tcase(s, tc);
    tc = tcase_create("estimates"); /* builds some 60 mazes up to 400x400 */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, memory_map_estimate_bounds_what_is_held);
    suite_add_tcase(s, tc);
    return s;
}
