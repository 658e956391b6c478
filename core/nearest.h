/* nearest.h -- the nearest of several goals: one search from the start that
 * stops at the first goal it settles, so the path is optimal to the goal
 * that is cheapest to reach (a guard picking the nearest cover spot).
 *
 * Dijkstra settles cells in order of cost, so the first goal it takes off
 * the open list is the nearest. A* does the same with h(n) = the least
 * heuristic distance from n to any goal: a minimum of consistent
 * heuristics is consistent, so the first goal expanded is still the
 * nearest. With more than PF_NEAREST_EXACT_GOALS goals the heuristic is the
 * distance from n to the goals' bounding box instead (each heuristic is a
 * norm of (|dx|, |dy|) growing in both, so the distance to a box is that of
 * the clamped point: consistent, a lower bound, and O(1) per node; it
 * degrades to Dijkstra when the goals span the map).
 *
 * Thread safety: as pf_search (one context per thread, grids only read).
 */
#ifndef PF_NEAREST_H
#define PF_NEAREST_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "search.h"

/* Goals core accepts in one query. [Limits: 1 <= n <= 65536] */
#define PF_NEAREST_MAX_GOALS 65536
/* Up to this many goals astar's heuristic is the exact minimum over them. */
#define PF_NEAREST_EXACT_GOALS 16

/* Runs q towards goals[0..n) (q->goal is ignored): the optimal path to the
 * nearest goal, and in *which its index (the lowest index among goals on
 * that cell). q->algorithm is PF_ALGO_ASTAR or PF_ALGO_DIJKSTRA (else
 * PF_EUNSUPPORTED, as for agent_size > 1: pf_planner_search_nearest serves
 * those); heuristic, max_expanded, should_stop, record_expanded and partial
 * apply as in pf_search (a partial answer ends at the expanded cell
 * closest to any goal by the heuristic, and *which is the goal closest to
 * that cell; its reason is PF_EBLOCKED only when every goal is blocked). Statuses as
 * pf_search, plus PF_EINVAL for n == 0 or n > PF_NEAREST_MAX_GOALS; for an
 * off-map or blocked goal (a blocked one is accepted with partial) the
 * status is PF_ERANGE or PF_EBLOCKED with *which = its index, for such a
 * start *which = -1. A start that is a goal answers [start], cost 0.
 * out->path is borrowed from ctx as for pf_search. */
pf_status pf_search_nearest(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q,
                            const pf_point *goals, size_t n, pf_result *out, int32_t *which);

#endif
