/* jpsref.h -- the jump tables (JPS+) of a grid, computed cell by cell from
 * the definition of a jump point, for the tests to hold core/jps's tables
 * against after builds and updates. It shares no code with core/jps*: cells
 * are read through the grid's public accessors and steps through the
 * tests' own movement rule (tu_reference_can_step); only the table's
 * format (8 entries a cell in PF_DIR order, PF__JT_STOP) is core's, since
 * that format is what is checked. */
#ifndef PF_TESTS_JPSREF_H
#define PF_TESTS_JPSREF_H

#include <stdint.h>

#include "grid.h"

/* The tables of g under its corner rule (8-connected, uniform costs): 8 w h
 * entries, entry 8 (y w + x) + d for cell (x, y) and direction d:
 *   straight d: the number of steps to the first cell that is blocked
 *     (PF__JT_STOP clear) or a jump point, a cell with a forced neighbour
 *     when entered moving d (PF__JT_STOP set);
 *   diagonal d: the number of allowed steps to the first cell that is a
 *     stop (a straight entry of one of d's two components ends at a jump
 *     point there, or, with corner cutting, the cell has a forced
 *     neighbour), PF__JT_STOP set; or all the allowed steps, flag clear.
 * Blocked cells' entries are 0. Owned by the caller (free()); NULL when out
 * of memory. */
uint16_t *ref_jump_tables(const pf_grid *g);

#endif
