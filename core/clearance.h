/* clearance.h -- agents larger than one cell: clearance values and the
 * grid an agent of a given size moves on.
 *
 * An agent of size n occupies an n x n square of cells. Its position is the
 * square's top-left cell (its "anchor"), so the agent at p covers
 * [p.x, p.x + n) x [p.y, p.y + n). A path of such an agent is a list of
 * anchors, like the path of a one-cell agent.
 *
 * The footprint rule (one rule, used by every search and by the tests'
 * independent check):
 *   - the agent fits at p when every cell of its square is walkable and no
 *     wall edge separates two cells of the square (a wall is thin, but an
 *     agent cannot straddle it);
 *   - an orthogonal step from p in direction d is allowed when the agent
 *     fits at p and at p + d and every cell of the square at p may make
 *     the step d under the map's own rule (pf_grid_can_step: no wall is
 *     crossed);
 *   - a diagonal step (8-connected maps) obeys the map's corner rule with
 *     the agent as a whole: of its two L routes, through p + h and through
 *     p + v (its horizontal and vertical parts), a route is open when both
 *     of its orthogonal steps are allowed; without corner cutting both
 *     routes must be open, with corner cutting one. Without corner cutting
 *     this is exactly "every cell of the square may make the diagonal step
 *     under the map's rule"; with corner cutting it is stricter than that
 *     (the square slides along one L, it never squeezes through a gap
 *     that different cells of it would pass by different routes), and it
 *     keeps the property HPA*'s borders rely on: every diagonal step has
 *     an orthogonal detour between the same two anchors;
 *   - the step costs the highest entry cost among the cells of the square
 *     at p + d, times the step length (1 or sqrt 2): the agent moves at the
 *     pace of the worst ground under it. For n = 1 all of this is the map's
 *     own rule.
 *
 * Clearance (Harabor & Botea, "Hierarchical Path Planning for Multi-size
 * Agents in Heterogeneous Environments", 2008, HAA*: "true clearance"):
 * the clearance of cell p is the largest n such that an agent of size n
 * fits at p, capped at a maximum. It follows from one pass over the map,
 * bottom-right to top-left:
 *   cl(p) = 0 on a blocked cell, else 1 + min(cl(p+E), cl(p+S), cl(p+SE))
 *   when that minimum is > 0 and the 2x2 block at p has no inner wall,
 *   else 1 (capped).
 * An agent of size n fits at p exactly when cl(p) >= n: a k x k square is
 * wall-free inside iff every 2x2 block in it is, and for k >= 3 the blocks
 * not checked at p lie in the three (k-1)-squares the minimum looks at.
 *
 * The agent grid of size n is a pf_grid whose cell p is walkable when the
 * agent fits at p, costs what a step into p costs the agent, and whose move
 * masks are the footprint rule's. Every grid search (astar, dijkstra, bfs,
 * flow fields, tables, HPA* hierarchies) then runs on it unchanged and
 * answers for the agent. For n >= 2 an orthogonal step between two
 * anchors where the agent fits is always allowed (every edge a cell of the
 * square crosses lies inside one of the two squares, which are wall-free),
 * so an agent grid is described by its costs alone: the map's own move
 * rule applied to them (no walls) gives back exactly its move masks.
 * Searches that re-derive moves from costs and walls (D* Lite's private
 * overlay) therefore agree with the masks, and a D* Lite session runs on
 * an agent grid unchanged. Agent grids are built by this module and are
 * read-only: never pass one to a pf_grid mutator. They have no walls and
 * no doors.
 *
 * Thread safety: clearance tables and agent grids are immutable once
 * built; any number of threads may read them.
 */
#ifndef PF_CLEARANCE_H
#define PF_CLEARANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "build_stop.h"
#include "grid.h"
#include "status.h"

/* The largest cap and agent size core accepts. [Limits: 1 <= n <= 64] */
#define PF_AGENT_SIZE_MAX 64

typedef struct pf_clearance pf_clearance;

/* Computes the clearance of every cell of g, capped at `cap` (1..
 * PF_AGENT_SIZE_MAX, else PF_EINVAL). O(cells). PF_ENOMEM. On success *out
 * owns the table (pf_clearance_destroy); it does not keep g. stop
 * (build_stop.h; NULL: never) is polled a row at a time here and a slice
 * of cells at a time in the three functions below, which all answer
 * PF_ECANCELED, with nothing made, when it said stop. */
pf_status pf_clearance_build(const pf_grid *g, int32_t cap, pf_build_stop *stop,
                             pf_clearance **out);
void pf_clearance_destroy(pf_clearance *c); /* NULL is a no-op */

/* The table of `g`, the grid `old` described after the cells in
 * changed[0..n) changed (cost, or a wall edge beside them: both cells of an
 * edge, as pf_planner_apply lists them). Recomputes only the cells whose
 * squares of side cap can contain a changed cell; equal to
 * pf_clearance_build(g, cap of old). PF_EINVAL when g's size differs from
 * old's, PF_ERANGE for an off-map cell, PF_ENOMEM, PF_ECANCELED; old is
 * unchanged. */
pf_status pf_clearance_repair(const pf_clearance *old, const pf_grid *g, const pf_point *changed,
                              size_t n, pf_build_stop *stop, pf_clearance **out);

int32_t pf_clearance_cap(const pf_clearance *c);
/* min(true clearance, cap) of p; 0 for a blocked or off-map cell. */
int32_t pf_clearance_at(const pf_clearance *c, pf_point p);
/* Whether an agent of size n (1..cap) fits with its anchor at p. */
bool pf_clearance_fits(const pf_clearance *c, pf_point p, int32_t n);
size_t pf_clearance_memory(const pf_clearance *c);

/* The agent grid of size n (2..cap of c) over base g, c being g's table.
 * O(cells x log n). PF_EINVAL for a bad n or a table of another size,
 * PF_ENOMEM, PF_ECANCELED. *out is owned by the caller (pf_grid_destroy)
 * and read-only (see above). */
pf_status pf_agent_grid_build(const pf_grid *g, const pf_clearance *c, int32_t n,
                              pf_build_stop *stop, pf_grid **out);

/* The agent grid of size n for g after the cells changed[0..n) changed,
 * `old` being the agent grid of size n of the version before and c g's
 * (repaired) table: recomputes the anchors within n + 1 cells up-left and
 * 2 cells down-right of a change, copies the rest. Equal to
 * pf_agent_grid_build(g, c, n). When changed_out is not NULL, *changed_out
 * (free with free()) lists the *nchanged_out anchors whose cost or moves
 * differ from old's: exactly what pf_hpa_repair needs to repair the size's
 * hierarchy. Statuses as pf_agent_grid_build plus PF_ERANGE for an off-map
 * cell; on error nothing is returned. */
pf_status pf_agent_grid_repair(const pf_grid *old, const pf_grid *g, const pf_clearance *c,
                               int32_t n, const pf_point *changed, size_t nchanged,
                               pf_build_stop *stop, pf_grid **out, pf_point **changed_out,
                               size_t *nchanged_out);

#endif
