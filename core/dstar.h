/* dstar.h -- D* Lite incremental replanning for one moving agent (Koenig &
 * Likhachev, "D* Lite", AAAI 2002, the optimized version).
 *
 * A session plans from the agent's position to its goal on a base grid plus a
 * private overlay of changes sent to this session alone. After any change the
 * next plan repairs the previous search instead of starting over, and its
 * cost equals a fresh Dijkstra on the updated grid. Memory grows with the
 * cells the search has touched, never with W x H per session.
 *
 * Not thread-safe: one thread at a time per session. The base grid is
 * borrowed and must stay alive and unmodified until it is replaced with
 * pf_dstar_rebase or the session is destroyed.
 */
#ifndef PF_DSTAR_H
#define PF_DSTAR_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "search.h"

typedef struct pf_dstar pf_dstar;

/* Creates a session on `g` from start to goal. PF_ERANGE / PF_EBLOCKED for a
 * bad start or goal, PF_ENOMEM. Nothing is searched until pf_dstar_plan. */
pf_status pf_dstar_create(const pf_grid *g, pf_point start, pf_point goal, pf_dstar **out);
void pf_dstar_destroy(pf_dstar *d);

/* Plans or repairs. out->path (borrowed from the session, valid until its
 * next call) runs from the agent's position to the goal; out->expanded counts
 * the work of this repair only. PF_OK, PF_NO_PATH, PF_EBUDGET (max_expanded,
 * 0 = unlimited), PF_ENOMEM. */
pf_status pf_dstar_plan(pf_dstar *d, uint64_t max_expanded, pf_result *out);

/* The agent moved to p (any walkable cell; the key modifier km grows by the
 * heuristic distance). PF_ERANGE / PF_EBLOCKED leave the session unchanged. */
pf_status pf_dstar_move(pf_dstar *d, pf_point p);
/* A new goal; the next plan searches anew. */
pf_status pf_dstar_set_goal(pf_dstar *d, pf_point goal);

/* Session-private changes: a cell's cost (0 blocks) or a wall edge. */
pf_status pf_dstar_set_cost(pf_dstar *d, pf_point p, uint8_t cost);
pf_status pf_dstar_set_wall(pf_dstar *d, pf_point p, int dir, bool blocked);

/* The world changed: g is the new base grid (same size), and changed[0..n)
 * the cells whose cost, door or adjacent walls differ from the old base.
 * Private overlay entries stay in force. PF_EINVAL for a different size. */
pf_status pf_dstar_rebase(pf_dstar *d, const pf_grid *g, const pf_point *changed, size_t n);

pf_point pf_dstar_position(const pf_dstar *d);
pf_point pf_dstar_goal(const pf_dstar *d);
/* Bytes the session holds. */
size_t pf_dstar_memory(const pf_dstar *d);

#endif
