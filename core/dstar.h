/* dstar.h -- D* Lite incremental replanning for one moving agent (Koenig &
 * Likhachev, "D* Lite", AAAI 2002, the optimized version).
 *
 * A session plans from the agent's position to its goal on a base grid plus a
 * private overlay of changes sent to this session alone. After any change the
 * next plan repairs the previous search instead of starting over, and its
 * cost equals a fresh Dijkstra on the updated grid (to 1e-7 relative: the
 * search runs on fixed-point costs, see dstar_internal.h). Memory grows
 * with the cells the search has touched (4 bytes a walkable cell of each
 * touched 8x8 tile, plus the open list and the overlay), never with W x H
 * per session (but on the reference store, pf_dstar_opts.plain_store).
 *
 * The effective map is the base grid with the overlay on top: a cell's cost
 * and each of its wall edges come from the overlay when the session has set
 * them, else from the base grid. The map's rules (connectivity, corner rule
 * of grid.h) apply to the effective costs and walls. Overlay entries stay in
 * force across rebases: the overlay always wins over the base.
 *
 * Moving targets. A new goal does not throw the search away. The search is
 * rooted at one end of the path and focused on the other (dstar_internal.h):
 * classic D* Lite roots at the goal, so its agent moves for free and a goal
 * move re-roots the search at the new goal, keeping the vertices whose
 * shortest way to the old goal passed through the new one (Moving Target
 * D* Lite's deletion, Sun, Yeoh & Koenig, AAMAS 2010). For a chase the
 * session roots at the agent instead, as MT-D* Lite does: goal moves are
 * then free (km) and the agent's step along its own path re-roots, keeping
 * almost all of the tree. pf_dstar_opts.root picks the orientation; by
 * default a session roots at the goal and switches to the agent after two
 * plans in a row with a goal move, and back after 16 plans without one
 * (each switch is one search anew). Every plan is optimal whichever way.
 *
 * Searches anew instead of repairing (documented, rare): the first plan, a
 * re-root whose new root the search has not settled (a jump, or a goal
 * moving away from an agent searched towards), a switch of orientation, a
 * rebase onto a grid with other rules, and any change that makes some
 * effective cost cheaper than every cost the heuristic was scaled by (the
 * heuristic must stay a lower bound, see dstar_lite.c).
 *
 * Not thread-safe: one thread at a time per session. The base grid is
 * borrowed and must stay alive and unmodified until it is replaced with
 * pf_dstar_rebase or the session is destroyed. Sessions never write to the
 * base grid, so any number of sessions (on any threads) may share it.
 *
 * dstar_internal.h says which file holds what.
 */
#ifndef PF_DSTAR_H
#define PF_DSTAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "plan_limits.h"
#include "search.h"

typedef struct pf_dstar pf_dstar;

/* Options of a session, fixed at creation. All zero (or NULL) is the
 * default, what pf_dstar_create gives. */
typedef struct pf_dstar_opts {
    /* Keeps the vertices in one plain array of W x H cells (8 bytes a cell,
     * allocated at the first plan and again at each search anew) instead
     * of the default tiles, which hold only the walkable cells of the 8x8
     * tiles the search touched. The search is the same code over a simple
     * store: every call answers exactly as with the tiles (status, path,
     * cost, expanded and generated counts); only pf_dstar_memory differs.
     * It is the reference the property tests hold the tiles against, and a
     * way to rule the tiles out when a session misbehaves; not meant for
     * production sessions. */
    bool plain_store;
    /* Where the search is rooted (see the top of this file): one of
     * PF_DSTAR_ROOT_*. Every orientation answers every call optimally; they
     * differ in the work a move costs. */
    int root;
    /* Re-roots at every move of the root's end, as MT-D* Lite does, where
     * by default a move the path still runs through is answered without
     * re-rooting (dstar_lite.c's move_root). Answers every call as
     * optimally; for measuring the two side by side (`pathd-bench chase
     * --reroot always`). */
    bool reroot_always;
} pf_dstar_opts;

enum {
    PF_DSTAR_ROOT_AUTO = 0, /* the goal; the agent while the goal keeps moving */
    PF_DSTAR_ROOT_GOAL,     /* always the goal: classic D* Lite */
    PF_DSTAR_ROOT_AGENT     /* always the agent: Moving Target D* Lite */
};

/* How the last pf_dstar_plan went, beside its pf_result. */
typedef struct pf_dstar_plan_info {
    bool anew;        /* it initialised the search (see "Searches anew") */
    bool rerooted;    /* it moved the search's root to the end that moved */
    bool deferred;    /* that end moved, but the path still ran through it:
                       * answered without re-rooting (dstar_lite.c) */
    bool from_agent;  /* the search is rooted at the agent */
    uint64_t deleted; /* vertices the re-root reset to "not reached" */
} pf_dstar_plan_info;

/* Creates a session on `g` (borrowed) from start to goal, with the options
 * `opts` (borrowed for the call only; NULL for the defaults). PF_ERANGE
 * off the map, PF_EBLOCKED for a blocked start or goal, PF_ENOMEM; *out is
 * NULL on error. Nothing is searched until pf_dstar_plan. Free with
 * pf_dstar_destroy. */
pf_status pf_dstar_create_with(const pf_grid *g, pf_point start, pf_point goal,
                               const pf_dstar_opts *opts, pf_dstar **out);
/* pf_dstar_create_with with the default options. */
pf_status pf_dstar_create(const pf_grid *g, pf_point start, pf_point goal, pf_dstar **out);
/* NULL is a no-op. */
void pf_dstar_destroy(pf_dstar *d);

/* Plans or repairs. Returns (and sets out->status to):
 * - PF_OK: out->path (borrowed from the session, valid until its next call)
 *   runs from the agent's position to the goal, every step a move of the
 *   effective map, and out->cost is its cost, the optimum;
 * - PF_NO_PATH: the goal is unreachable on the effective map;
 * - PF_EBLOCKED: the agent's or the goal's cell is blocked on the effective
 *   map (a change or a rebase blocked it); nothing is searched;
 * - PF_EBUDGET: max_expanded expansions (0 = unlimited) were done before the
 *   repair finished. The session stays consistent: the next plan continues
 *   the repair where this one stopped (changes and moves may come between);
 * - PF_ECANCELED (pf_dstar_plan_with only): the stop callback said stop
 *   (plan_limits.h: polled every poll_every expansions, the Nth poll after
 *   exactly N x poll_every); the session stays consistent as for
 *   PF_EBUDGET and the next plan goes on;
 * - PF_ENOMEM: an allocation failed; the search state is kept as it was
 *   before the failing expansion, so a later plan may continue;
 * - PF_EINVAL: the path read-out found no way down from the agent, which
 *   means a broken internal invariant (a bug, never seen in the property
 *   test); the session searches anew at its next plan.
 * out->expanded counts the vertices this call expanded (over- and
 * underconsistent expansions alike), out->generated the open-list inserts and
 * key updates. Agent == goal answers [agent], cost 0, without searching. */
pf_status pf_dstar_plan(pf_dstar *d, uint64_t max_expanded, pf_result *out);
/* pf_dstar_plan within lim (plan_limits.h, borrowed for the call; NULL: no
 * limits): an expansion budget and a stop callback, through which a caller
 * brings a deadline (core reads no clock). pf_dstar_plan(d, n, out) is this
 * with {n, NULL}. */
pf_status pf_dstar_plan_with(pf_dstar *d, const pf_plan_limits *lim, pf_result *out);

/* The agent moved to p, any walkable cell of the effective map, not only a
 * neighbour (the key modifier km grows by h(old, new) before the next change
 * or plan). PF_ERANGE / PF_EBLOCKED leave the session unchanged. */
pf_status pf_dstar_move(pf_dstar *d, pf_point p);
/* A new goal, walkable on the effective map (PF_ERANGE / PF_EBLOCKED leave
 * the session unchanged), any cell, not only a neighbour of the old one.
 * The next plan re-roots or raises km (see the top of this file); it
 * searches anew only as said there. The same goal again is a no-op. */
pf_status pf_dstar_set_goal(pf_dstar *d, pf_point goal);

/* Session-private changes: a cell's cost (0 blocks), or a wall edge between
 * p and its orthogonal neighbour in `dir` (PF_DIR_E/W/S/N; PF_EINVAL for
 * another dir). Setting a value equal to the base's still pins it in the
 * overlay (a later rebase does not change it). The affected vertices (the
 * 3x3 block around the cell, or around both cells of the edge) are updated
 * at once; the search work happens in the next plan. PF_ERANGE off the map,
 * PF_ENOMEM with the session unchanged. */
pf_status pf_dstar_set_cost(pf_dstar *d, pf_point p, uint8_t cost);
pf_status pf_dstar_set_wall(pf_dstar *d, pf_point p, int dir, bool blocked);

/* The world changed: g (borrowed, replacing the old base) is the new base
 * grid, same size, and changed[0..n) lists every cell whose cost differs
 * from the old base and both cells of every wall edge that differs (what
 * pf_planner_apply reports). Duplicates are harmless. Private overlay entries
 * stay in force. PF_EINVAL for a different size, PF_ERANGE for an off-map
 * cell; the session is unchanged then. On PF_ENOMEM the session has switched
 * to g and its next plan searches anew. A grid with other rules
 * (connectivity, corner cutting) is accepted and searched anew. */
pf_status pf_dstar_rebase(pf_dstar *d, const pf_grid *g, const pf_point *changed, size_t n);

/* The world changed and which cells differ is not known (the session is
 * further behind than a change log reaches): g (borrowed, the new base, the
 * same size) replaces the base, every overlay entry's cached moves are
 * worked out again, and the next plan searches anew. The overlay stays in
 * force, as with pf_dstar_rebase. PF_EINVAL for a different size (nothing
 * changes then). Never allocates. */
pf_status pf_dstar_rebase_all(pf_dstar *d, const pf_grid *g);

/* The next plan searches anew instead of repairing, on the same base and
 * overlay: after an update failed half way (what it applied stays). */
void pf_dstar_restart(pf_dstar *d);

/* The effective map, read: cell p's cost (the overlay's when the session
 * set it, else the base's; 0 off the map), and whether the wall edge
 * between p and its neighbour in dir (PF_DIR_E/W/S/N) is closed (false off
 * the map or for another dir, as pf_grid_is_wall). What every plan
 * searches on; O(1). */
uint8_t pf_dstar_cost(const pf_dstar *d, pf_point p);
bool pf_dstar_is_wall(const pf_dstar *d, pf_point p, int dir);

/* Lets plans answer PF_NO_PATH without searching when the goal is cut off
 * (cuts.h): the agent and the goal are in different components of the base
 * grid, or a cell the session blocked separates them on it. `cuts`
 * (borrowed, NULL to stop) must have been built from the current base grid
 * and outlive its use; pf_dstar_rebase drops it, so set it again after a
 * rebase. The pending repair is kept for a later plan. Without it a session
 * works the same, only a cut-off repair can cost more than a fresh A* (a
 * perfect maze: see dstar_lite.c's cut_off). */
struct pf_cuts;
void pf_dstar_set_cuts(pf_dstar *d, const struct pf_cuts *cuts);

/* How the last plan went (all false and 0 before the first). */
void pf_dstar_last_plan(const pf_dstar *d, pf_dstar_plan_info *out);

/* The effective map the session plans on (the base grid under its
 * overlay), as grid.h's pf_grid_can_step reads a grid: whether the single
 * step from a to b (a neighbour of a) is allowed by the map's rules over
 * the effective costs and walls (false for anything else); the cost of a
 * cell is pf_dstar_cost above. O(1) (an overlay lookup); read-only. */
bool pf_dstar_can_step(const pf_dstar *d, pf_point a, pf_point b);

pf_point pf_dstar_position(const pf_dstar *d);
pf_point pf_dstar_goal(const pf_dstar *d);
/* The base grid the session currently borrows. */
const pf_grid *pf_dstar_grid(const pf_dstar *d);
/* Bytes the session holds (its struct, vertex tiles and their index, the
 * wide g table, open list, overlay, path buffer and the last re-root's
 * record), not counting the shared base grid. Vertices cost 4 bytes a walkable cell of every 8x8
 * tile the search touched, plus 16 a tile (plus 8 for the few g values a tile cannot hold in place,
 * see dstar_tiles.h); on the plain store 8 bytes a cell of the map. `pathd-bench sessions
 * --all-buckets` after one plan on the 512x512 Moving AI maps: mean 0.16-0.28 MB a session, 0.36 MB
 * on maze512-1-0 (half walls) and 0.54 MB on maze512-8-0, whose searches touch most of the map. */
size_t pf_dstar_memory(const pf_dstar *d);

#endif
