/* grid_internal.h -- the grid's layout, for core's own search modules only.
 *
 * Searches read these arrays directly in their expansion loops; everything
 * outside core/ goes through grid.h. Cells are numbered row-major:
 * index = y * w + x.
 */
#ifndef PF_GRID_INTERNAL_H
#define PF_GRID_INTERNAL_H

#include "grid.h"

typedef struct pf__door {
    char name[PF_DOOR_NAME_MAX];
    bool open;
    pf_point *cells;
    uint8_t *open_cost; /* cost each cell gets back when the door opens */
    size_t ncells;
    pf_edge *edges;
    size_t nedges;
} pf__door;

struct pf_grid {
    int32_t w, h;
    int connectivity;
    bool corner_cutting;
    uint8_t *cost;  /* entry cost per cell, 0 = blocked */
    uint8_t *walls; /* per cell, bit (1 << dir) for blocked E/W/S/N edges */
    uint8_t *moves; /* per cell, bit (1 << dir) for each allowed step */
    int64_t walkable;
    int64_t nwalls; /* blocked edges, each counted once */
    uint32_t cost_hist[256];
    pf__door *doors;
    int32_t ndoors;
    pf_grid_limits lim;
};

/* Index offset of a step in direction d on a grid of width w. */
static inline int32_t pf__grid_dir_offset(const pf_grid *g, int d) {
    return (int32_t)pf_dir_dx[d] + (int32_t)pf_dir_dy[d] * g->w;
}

/* The direction d (pf_dir_dx, pf_dir_dy) of a step by dx, dy in -1..1;
 * -1 for no step. */
static inline int pf__dir_of(int dx, int dy) {
    static const int8_t table[3][3] = {{PF_DIR_NW, PF_DIR_N, PF_DIR_NE},
                                       {PF_DIR_W, -1, PF_DIR_E},
                                       {PF_DIR_SW, PF_DIR_S, PF_DIR_SE}};
    return table[dy + 1][dx + 1];
}

/* Step length of direction d: 1 for E/W/S/N, sqrt(2) for diagonals. */
static inline double pf__dir_len(int d) { return d < 4 ? 1.0 : PF_SQRT2; }

/* Recomputes the move masks of rows [y0, y1) from costs, walls and rules:
 * what pf_grid_set_rules does for every row, for a builder that fills the
 * arrays itself and wants to poll its stop between rows (maze.c). */
void pf__grid_update_rows(pf_grid *g, int32_t y0, int32_t y1);

#endif
