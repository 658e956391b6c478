/* demo.h -- the demo maps `make run` serves: a small textbook room and a
 * generated maze. Deterministic: the same maps every start. */
#ifndef PF_SERVER_DEMO_H
#define PF_SERVER_DEMO_H

#include <stdint.h>

#include "grid.h"

/* The 10 x 7 room: a wall down column 5 with a gap at the bottom row, and a
 * patch of mud (cost 5) in the left half. 8-connected. */
pf_status pf_demo_room(pf_grid **out);

/* A perfect maze of cw x ch corridor cells (grid (2cw+1) x (2ch+1), walls
 * as blocked cells), carved by a depth-first backtracker from `seed`.
 * 8-connected without corner cutting, so it walks like a 4-connected maze. */
pf_status pf_demo_maze(int32_t cw, int32_t ch, uint64_t seed, pf_grid **out);

#endif
