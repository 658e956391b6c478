/* maze.h -- generated maze maps: the recursive backtracker (a depth-first
 * search over a grid of rooms that carves a passage to a random unvisited
 * neighbour and backs up at dead ends), run iteratively with an explicit
 * stack so that a 4096x4096 maze needs no deep recursion, deterministic per
 * seed, with optional loops.
 *
 * A maze is a grid of rooms, each a corridor x corridor square of walkable
 * cells (cost 1). Wall modes:
 *   PF_MAZE_WALL_CELLS  rooms are separated by one-cell-thick walls of
 *       blocked cells; the map's outer ring is blocked. Room (i, j) has its
 *       top-left cell at (1 + i (corridor + 1), 1 + j (corridor + 1)), so
 *       a width x height map holds (width - 1) / (corridor + 1) rooms
 *       across; a carved passage opens the corridor-wide stretch of wall
 *       between two rooms.
 *   PF_MAZE_WALL_EDGES  no wall cells: rooms touch, and wall edges close
 *       the sides between rooms that are not joined. Room (i, j) has its
 *       top-left cell at (i corridor, j corridor): width / corridor rooms
 *       across.
 * Cells beyond the last whole room (right and bottom) are blocked.
 *
 * Without loops the maze is perfect: the passages form a spanning tree of
 * the rooms, so between any two cells there is exactly one way that does
 * not go back on itself (diagonal moves never add one: without corner
 * cutting a diagonal needs both L routes, which in a tree of rooms are
 * never both open). With loops > 0 each wall between two rooms that
 * remains is then removed with that probability, in row-major order.
 *
 * The random stream is splitmix64 from the seed, and every draw is an
 * integer operation or an exact IEEE comparison, so a seed gives the same
 * maze on every platform. Pure: no globals, thread-safe.
 */
#ifndef PF_MAZE_H
#define PF_MAZE_H

#include <stdbool.h>
#include <stdint.h>

#include "build_stop.h"
#include "grid.h"
#include "status.h"

#define PF_MAZE_MAX_CORRIDOR 64

typedef enum pf_maze_walls { PF_MAZE_WALL_CELLS = 0, PF_MAZE_WALL_EDGES } pf_maze_walls;

typedef struct pf_maze_params {
    int32_t width, height; /* of the map, in cells */
    uint64_t seed;
    int32_t corridor; /* room side in cells: 1..PF_MAZE_MAX_CORRIDOR */
    pf_maze_walls walls;
    double loops;        /* probability in [0, 1]; 0 = a perfect maze */
    int connectivity;    /* 4 or 8 */
    bool corner_cutting; /* the map's corner rule */
} pf_maze_params;

/* width, height, seed and corridor as given, cells mode, no loops,
 * 8-connected without corner cutting. */
pf_maze_params pf_maze_params_make(int32_t width, int32_t height, uint64_t seed, int32_t corridor);

/* The rooms across and down for p, or PF_EINVAL (corridor out of range, an
 * unknown wall mode) / PF_ERANGE (the map is too small for one room: cells
 * mode needs a side >= corridor + 2, edges mode >= corridor). */
pf_status pf_maze_rooms(const pf_maze_params *p, int32_t *cols, int32_t *rows);

/* The top-left cell of room (i, j) of p. */
pf_point pf_maze_room_origin(const pf_maze_params *p, int32_t i, int32_t j);

/* Generates the maze. Statuses as pf_maze_rooms, plus PF_EINVAL for loops
 * outside [0, 1] (or NaN) or a connectivity other than 4 or 8, PF_ELIMIT
 * past `lim` (NULL = defaults, checked before allocating), PF_ENOMEM;
 * PF_ECANCELED when stop (build_stop.h; NULL: never), polled per carved
 * room and per row, said stop. On success *out owns the grid
 * (pf_grid_destroy). O(cells). */
pf_status pf_maze_generate(const pf_maze_params *p, const pf_grid_limits *lim, pf_build_stop *stop,
                           pf_grid **out);

#endif
