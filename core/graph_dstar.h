/* graph_dstar.h -- an incremental search on a waypoint graph (graph.h) for
 * sessions: D* Lite (Koenig & Likhachev 2002) with Moving Target D* Lite's
 * re-rooting (Sun, Yeoh & Koenig 2010), on the graph's CSR arcs.
 *
 * A session holds an agent node and a goal node and keeps the search
 * between plans. Each plan answers the cheapest path from the agent to the
 * goal on the session's current version of the graph (optimal: the same
 * cost as a fresh Dijkstra), repairing only what changed since the last:
 *
 * - a new version (pf_graph_dstar_set_graph: PATCHed costs, edges or nodes
 *   enabled or disabled; same topology): the arcs whose cost or state
 *   differ between the two versions are found by comparing them and their
 *   ends' lookaheads are recomputed (LPA*'s edge-cost change);
 * - the search has a *root* (the end whose value is fixed) and a *tip*
 *   (the end the keys aim at). A move of the tip only raises the key
 *   modifier km (D* Lite); a move of the root re-roots the search: every
 *   node whose shortest way to the old root runs through the new root
 *   keeps its value (they are all off by the new root's value, which the
 *   new root keeps), every other node is reset, and the reset nodes next
 *   to the kept ones get their lookahead back on the open list
 *   (docs/moving-targets.md says the same for grids);
 * - which end is the root (pf_graph_dstar_root): the goal (classic D*
 *   Lite: agent moves are free), the agent (MT-D* Lite: goal moves are
 *   free, and an agent that steps along its own path keeps the part of the
 *   search ahead of it), or auto: the goal, turning to the agent at a goal
 *   move within 16 plans of the one before and back after 32 plans without
 *   one (a turn is one search anew). A root's end that moved along the tip's
 *   path (no farther from the old root than from the tip) needs no
 *   re-rooting: the search stays where it was and the plan answers the part
 *   of its path from the moved end (docs/moving-targets.md).
 *
 * Values are pairs (cost, hops) compared lexicographically: among paths of
 * equal cost the fewest edges win. LPA*'s repair needs every arc to weigh
 * more than nothing; with plain costs a cycle of zero-cost edges would keep
 * a removed way's value alive. Costs are the graph's (finite, >= 0); an arc
 * of a disabled edge, or into or out of a disabled node, does not exist.
 * The heuristic is the graph's (straight line x the version's ratio,
 * graph.h): admissible and consistent; a version with a lower ratio makes
 * the open list's keys be recomputed.
 *
 * Memory is bounded and allocated at create (pf_graph_dstar_bound): 32
 * bytes a node of the graph, a touched list and a queue of 4 bytes a node,
 * and, for a graph with one-way edges, the reversed arcs (8 bytes an arc
 * and 4 a node); the open list grows to at most 24 bytes a node.
 *
 * Thread-safety: a session is used by one thread at a time; the graphs it
 * holds are immutable and may be searched by others meanwhile. No globals,
 * no I/O, never aborts.
 */
#ifndef PF_GRAPH_DSTAR_H
#define PF_GRAPH_DSTAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "plan_limits.h"
#include "status.h"

typedef struct pf_graph_dstar pf_graph_dstar;

typedef enum pf_graph_dstar_root {
    PF_GRAPH_DSTAR_ROOT_AUTO = 0, /* the goal; the agent while the goal keeps moving */
    PF_GRAPH_DSTAR_ROOT_GOAL,     /* always the goal: classic D* Lite */
    PF_GRAPH_DSTAR_ROOT_AGENT     /* always the agent: MT-D* Lite's orientation */
} pf_graph_dstar_root;

/* The most bytes a session on g can hold (what a server reserves). */
size_t pf_graph_dstar_bound(const pf_graph *g);

/* A session on g (retained) from agent to goal. PF_ERANGE for a node out
 * of range, PF_EINVAL for an unknown root, PF_ENOMEM. A disabled agent or
 * goal is the plan's answer (PF_EBLOCKED), not create's. */
pf_status pf_graph_dstar_create(const pf_graph *g, uint32_t agent, uint32_t goal,
                                pf_graph_dstar_root root, pf_graph_dstar **out);
/* NULL is a no-op. Releases its graph. */
void pf_graph_dstar_destroy(pf_graph_dstar *d);
/* Bytes it holds now (<= pf_graph_dstar_bound). */
size_t pf_graph_dstar_memory(const pf_graph_dstar *d);

/* The agent or the goal moved to node v (PF_ERANGE leaves the session as
 * it was). The same node again is a no-op. The next plan repairs. */
pf_status pf_graph_dstar_set_agent(pf_graph_dstar *d, uint32_t v);
pf_status pf_graph_dstar_set_goal(pf_graph_dstar *d, uint32_t v);
uint32_t pf_graph_dstar_agent(const pf_graph_dstar *d);
uint32_t pf_graph_dstar_goal(const pf_graph_dstar *d);
/* The session's graph is now g (retained; the old one released), a
 * version of the same upload (the same topology: PF_EINVAL otherwise,
 * nothing changed). The differences are applied now; the repair happens
 * at the next plan. */
pf_status pf_graph_dstar_set_graph(pf_graph_dstar *d, const pf_graph *g);
const pf_graph *pf_graph_dstar_graph(const pf_graph_dstar *d);

/* Plans within lim (plan_limits.h, borrowed for the call; NULL: no
 * limits): PF_OK with out holding the path from the agent to the goal
 * (reached true, nodes and edges valid until the next call on d, cost the
 * sum of its edges' costs); PF_NO_PATH (the goal is not reachable);
 * PF_EBLOCKED (the agent or the goal is disabled); PF_EBUDGET /
 * PF_ECANCELED (the limits stopped it: the session stays valid and the
 * next plan goes on); PF_ENOMEM. out->expanded counts this plan's
 * expansions in every case. */
pf_status pf_graph_dstar_plan(pf_graph_dstar *d, const pf_plan_limits *lim, pf_graph_path *out);

/* What the session has done. */
typedef struct pf_graph_dstar_stats {
    uint64_t plans, expanded; /* every plan's expansions together */
    uint64_t kept_roots;      /* root moves answered without re-rooting (on the way) */
    uint64_t reroots;         /* root moves that kept part of the search */
    uint64_t resets;          /* searches started anew (create, turns, lost roots) */
    uint64_t kept;            /* nodes the re-roots kept, together */
    uint64_t changed_arcs;    /* arcs set_graph found changed, together */
    bool rooted_at_agent;     /* now */
} pf_graph_dstar_stats;
void pf_graph_dstar_get_stats(const pf_graph_dstar *d, pf_graph_dstar_stats *s);

#endif
