/* grid.h -- the map model: a W x H grid of cells with entry costs.
 *
 * A cell's entry cost is 0 (blocked) or 1..255. Moving into a neighbour costs
 * the neighbour's entry cost times the step length (1 orthogonal, sqrt(2)
 * diagonal). Connectivity is 4 or 8. Wall edges may block the side between two
 * orthogonal neighbours. Doors are named sets of cells and wall edges that open
 * and close as a unit.
 *
 * Diagonal rule (one rule for cells and walls): a diagonal step a -> b has two
 * "L routes" through the orthogonal cells c1 and c2 it passes. A route is open
 * when its middle cell is walkable and neither of its two edges is a wall.
 * Without corner cutting (the default, and the Moving AI rule) a diagonal step
 * needs both routes open. With corner cutting it needs at least one, so an agent
 * never squeezes between two diagonally touching obstacles.
 *
 * The grid keeps, for every cell, the 8-bit mask of moves allowed out of it
 * (bit d set = step in direction d allowed). Moves are symmetric: a -> b is
 * allowed exactly when b -> a is. Every mutator updates the masks of the cells
 * around the change, so searches never re-derive the rule.
 *
 * Thread safety: a grid is not internally locked. Any number of threads may
 * read one grid concurrently; a mutation needs exclusive access (the server
 * mutates a private clone and publishes it as the next map version).
 */
#ifndef PF_GRID_H
#define PF_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct pf_point {
    int32_t x, y;
} pf_point;

/* Directions, in the order searches try neighbours: right, left, down, up,
 * then the diagonals. y grows downwards (y = 0 is the top row). */
enum {
    PF_DIR_E = 0,
    PF_DIR_W = 1,
    PF_DIR_S = 2,
    PF_DIR_N = 3,
    PF_DIR_SE = 4,
    PF_DIR_SW = 5,
    PF_DIR_NE = 6,
    PF_DIR_NW = 7
};
#define PF_DIR_COUNT 8

extern const int8_t pf_dir_dx[PF_DIR_COUNT];
extern const int8_t pf_dir_dy[PF_DIR_COUNT];

#define PF_SQRT2 1.41421356237309504880

/* Size limits checked before anything is allocated. */
typedef struct pf_grid_limits {
    int32_t max_side;  /* widest and tallest grid accepted */
    int64_t max_cells; /* width x height accepted */
    int32_t max_doors; /* doors per map */
} pf_grid_limits;

#define PF_GRID_DEFAULT_MAX_SIDE 16384
#define PF_GRID_DEFAULT_MAX_CELLS (16LL * 1024 * 1024)
#define PF_GRID_DEFAULT_MAX_DOORS 4096
#define PF_DOOR_NAME_MAX 64

/* The defaults above. */
pf_grid_limits pf_grid_default_limits(void);

typedef struct pf_grid pf_grid;

/* A wall edge: the side between cell `a` and its neighbour in direction
 * `dir` (PF_DIR_E, W, S or N). */
typedef struct pf_edge {
    pf_point a;
    int32_t dir;
} pf_edge;

/* Creates a w x h grid, every cell of cost 1, 8-connected, no corner cutting.
 * Returns PF_ERANGE for a side < 1, PF_ELIMIT past `lim` (NULL = defaults),
 * PF_ENOMEM. On success *out owns the grid, freed with pf_grid_destroy. */
pf_status pf_grid_create(int32_t w, int32_t h, const pf_grid_limits *lim, pf_grid **out);
void pf_grid_destroy(pf_grid *g);

/* A deep copy, doors and walls included. NULL on allocation failure. */
pf_grid *pf_grid_clone(const pf_grid *g);

int32_t pf_grid_width(const pf_grid *g);
int32_t pf_grid_height(const pf_grid *g);
int pf_grid_connectivity(const pf_grid *g);
bool pf_grid_corner_cutting(const pf_grid *g);

/* Connectivity must be 4 or 8 (else PF_EINVAL). Recomputes every move mask. */
pf_status pf_grid_set_rules(pf_grid *g, int connectivity, bool corner_cutting);

bool pf_grid_in_bounds(const pf_grid *g, pf_point p);
bool pf_grid_is_walkable(const pf_grid *g, pf_point p); /* false off the map */
uint8_t pf_grid_cost(const pf_grid *g, pf_point p);     /* 0 off the map */

/* Sets a cell's entry cost (0 blocks it). PF_ERANGE off the map. */
pf_status pf_grid_set_cost(pf_grid *g, pf_point p, uint8_t cost);

/* Blocks or opens the edge between p and its neighbour in orthogonal `dir`.
 * PF_ERANGE when either cell is off the map, PF_EINVAL for a diagonal dir. */
pf_status pf_grid_set_wall(pf_grid *g, pf_point p, int dir, bool blocked);
bool pf_grid_is_wall(const pf_grid *g, pf_point p, int dir);
bool pf_grid_has_walls(const pf_grid *g);

/* True when every walkable cell costs the same and there are no walls: the
 * maps jump point search accepts. */
bool pf_grid_is_uniform(const pf_grid *g);

/* The cheapest walkable entry cost (1..255), 1 on a fully blocked map. It
 * scales heuristics so they never overestimate. */
uint8_t pf_grid_min_cost(const pf_grid *g);

/* Number of walkable cells. */
int64_t pf_grid_walkable_count(const pf_grid *g);

/* The mask of moves allowed out of p (bit d = direction d); 0 off the map. */
uint8_t pf_grid_moves(const pf_grid *g, pf_point p);

/* Whether the single step a -> b (neighbours) is allowed under the map's
 * rules, and its cost: cost(b) * (1 or sqrt 2). */
bool pf_grid_can_step(const pf_grid *g, pf_point a, pf_point b);
double pf_grid_step_cost(const pf_grid *g, pf_point a, pf_point b);

/* Doors.
 * pf_grid_add_door declares a door over `cells` and `edges` (copied) in state
 * `open`. A door cell remembers its cost at declaration (cells of cost 0 are
 * opened with cost 1); closing blocks it, opening restores that cost. Names
 * are 1..PF_DOOR_NAME_MAX-1 bytes and unique (PF_EINVAL otherwise). Returns
 * the door's index in *index. On error the grid is unchanged. */
pf_status pf_grid_add_door(pf_grid *g, const char *name, const pf_point *cells, size_t ncells,
                           const pf_edge *edges, size_t nedges, bool open, int32_t *index);
int32_t pf_grid_door_count(const pf_grid *g);
/* -1 when no door has that name. */
int32_t pf_grid_door_find(const pf_grid *g, const char *name);
const char *pf_grid_door_name(const pf_grid *g, int32_t index);
bool pf_grid_door_is_open(const pf_grid *g, int32_t index);
/* The door's cells and edges, borrowed from the grid. */
const pf_point *pf_grid_door_cells(const pf_grid *g, int32_t index, size_t *n);
const pf_edge *pf_grid_door_edges(const pf_grid *g, int32_t index, size_t *n);
/* The cost the door's k-th cell (as listed by pf_grid_door_cells) gets when
 * the door opens: its cost at declaration, 1 if it was blocked then. 0 for a
 * bad index or k. Sessions use it to open a door in their private view. */
uint8_t pf_grid_door_open_cost(const pf_grid *g, int32_t index, size_t k);
/* Opens or closes a door. PF_ERANGE for a bad index. */
pf_status pf_grid_set_door(pf_grid *g, int32_t index, bool open);

/* Memory held by the grid, in bytes. */
size_t pf_grid_memory(const pf_grid *g);

#endif
