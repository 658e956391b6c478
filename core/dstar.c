/* dstar.c -- D* Lite sessions: the public API of dstar.h. It checks the
 * arguments, records the session's private changes in the overlay
 * (dstar_overlay.c) and hands every vertex whose edges changed to D* Lite
 * (dstar_lite.c); it never reads a vertex itself. dstar_internal.h lists
 * the module's files.
 */
#include "dstar.h"

#include <stdlib.h>
#include <string.h>

#include "cuts.h"
#include "dstar_internal.h"
#include "search_internal.h"

/* Whether p can hold the agent or the goal: PF_ERANGE off the map,
 * PF_EBLOCKED when blocked on the effective map, else PF_OK. */
static pf_status check_cell(const pf_dstar *d, pf_point p) {
    if (!in_bounds(d, p.x, p.y)) return PF_ERANGE;
    if (eff_cost(d, cell_of(d, p)) == 0) return PF_EBLOCKED;
    return PF_OK;
}

/* Takes g as the base grid: its size, rules, and the step offsets and
 * fixed-point step lengths derived from them. */
static void set_base(pf_dstar *d, const pf_grid *g) {
    d->base = g;
    d->w = g->w;
    d->h = g->h;
    d->conn = g->connectivity;
    d->cut = g->corner_cutting;
    for (int k = 0; k < PF_DIR_COUNT; k++) {
        d->off[k] = pf__grid_dir_offset(g, k);
        d->unit[k] = k < 4 ? UNIT_ORTH : UNIT_DIAG;
    }
}

/* Creates a session from start to goal on g (borrowed until a rebase
 * replaces it or the session is destroyed), its vertex store and root
 * chosen by opts (NULL: the tiles, rooted as PF_DSTAR_ROOT_AUTO says).
 * Nothing is allocated but the session itself, and nothing is searched:
 * the first plan searches anew. On error (PF_ERANGE, PF_EBLOCKED from the
 * endpoints on the base grid, PF_EINVAL for an unknown root, PF_ENOMEM)
 * *out is NULL and nothing is allocated. */
pf_status pf_dstar_create_with(const pf_grid *g, pf_point start, pf_point goal,
                               const pf_dstar_opts *opts, pf_dstar **out) {
    pf_dstar *d;
    pf_status st;
    *out = NULL;
    st = pf__check_endpoints(g, start, goal);
    if (st) return st;
    d = calloc(1, sizeof(*d));
    if (!d) return PF_ENOMEM;
    d->ops = opts && opts->plain_store ? &pf__dstar_plain_ops : &pf__dstar_tiles_ops;
    d->root_opt = opts ? opts->root : PF_DSTAR_ROOT_AUTO;
    d->reroot_always = opts && opts->reroot_always;
    if (d->root_opt < PF_DSTAR_ROOT_AUTO || d->root_opt > PF_DSTAR_ROOT_AGENT) {
        free(d);
        return PF_EINVAL;
    }
    set_base(d, g);
    d->start = d->last = cell_of(d, start);
    d->goal = d->plan_goal = d->root = cell_of(d, goal);
    d->fwd = d->root_opt == PF_DSTAR_ROOT_AGENT;
    d->fresh = true;
    *out = d;
    return PF_OK;
}

/* Creates a session with the default options (see pf_dstar_create_with). */
pf_status pf_dstar_create(const pf_grid *g, pf_point start, pf_point goal, pf_dstar **out) {
    return pf_dstar_create_with(g, start, goal, NULL, out);
}

/* Frees the session: its vertex store, open list, overlay and path buffer.
 * The base grid and the cuts it borrows are left alone. NULL is a no-op. */
void pf_dstar_destroy(pf_dstar *d) {
    if (!d) return;
    d->ops->free_store(d);
    free(d->q);
    free(d->o);
    free(d->path);
    free(d->gone);
    free(d);
}

/* Lends the session the base grid's cut vertices (NULL to stop), which
 * plans read before searching. Nothing is searched or checked here; the
 * caller keeps cuts alive and built from the current base. */
void pf_dstar_set_cuts(pf_dstar *d, const pf_cuts *cuts) { d->cuts = cuts; }

/* Plans or repairs over the session's vertex store (dstar_lite.c's plan)
 * within lim. Returns what it sets out->status to; the path it gives is
 * borrowed from the session until its next call. */
pf_status pf_dstar_plan_with(pf_dstar *d, const pf_plan_limits *lim, pf_result *out) {
    return d->ops->plan(d, lim, out);
}

/* pf_dstar_plan_with with a budget alone. */
pf_status pf_dstar_plan(pf_dstar *d, uint64_t max_expanded, pf_result *out) {
    const pf_plan_limits lim = {max_expanded, NULL, NULL, 0};
    return d->ops->plan(d, &lim, out);
}

/* Moves the agent to p. Only the position changes here: searching from
 * the goal, km grows (by sync_tip) before the next key is computed;
 * searching from the agent, the next plan re-roots. PF_ERANGE or
 * PF_EBLOCKED on the effective map leave the session unchanged. */
pf_status pf_dstar_move(pf_dstar *d, pf_point p) {
    pf_status st = check_cell(d, p);
    if (st) return st;
    d->start = cell_of(d, p);
    return PF_OK;
}

/* Sets a new goal, walkable on the effective map. Only the goal changes
 * here, as the agent's position does in pf_dstar_move: the next plan
 * re-roots (searching from the goal) or raises km (searching from the
 * agent). PF_ERANGE or PF_EBLOCKED leave the session unchanged. */
pf_status pf_dstar_set_goal(pf_dstar *d, pf_point goal) {
    pf_status st = check_cell(d, goal);
    if (st) return st;
    d->goal = cell_of(d, goal);
    return PF_OK;
}

/* A private cost lower than the heuristic's scale invalidates the keys. */
static void note_overlay_cost(pf_dstar *d, uint8_t cost) {
    if (cost == 0) return;
    if (!d->ov_min || cost < d->ov_min) d->ov_min = cost;
    if (cost < d->hscale) d->fresh = true;
}

/* Sets cell p's private cost (0 blocks it): the overlay entries of its 3x3
 * block are created and their masks recomputed, then every vertex of the
 * block gets its rhs again. All memory is reserved before anything
 * changes, so PF_ENOMEM (or PF_ERANGE off the map) leaves the session
 * unchanged. A cost cheaper than the heuristic's scale makes the next plan
 * search anew. */
pf_status pf_dstar_set_cost(pf_dstar *d, pf_point p, uint8_t cost) {
    pf_status st;
    if (!in_bounds(d, p.x, p.y)) return PF_ERANGE;
    int32_t cell = cell_of(d, p);
    st = pf__dstar_ov_reserve(d, 9);
    if (st) return st;
    if (!d->fresh && (d->ops->reserve(d, 4, 16))) return PF_ENOMEM;
    pf__dstar_ov_taint_block(d, p.x, p.y);
    ov *o = ov_find(d, cell);
    bool same = (o->flags & OV_COST) && o->cost == cost;
    o->flags |= OV_COST;
    o->cost = cost;
    if (same) return PF_OK;
    pf__dstar_ov_refresh_block(d, p.x, p.y);
    note_overlay_cost(d, cost);
    if (d->fresh) return PF_OK;
    sync_tip(d);
    /* Room was reserved above, so this cannot fail. */
    return d->ops->refresh_block(d, p.x, p.y);
}

/* Sets the private wall edge between p and its neighbour in dir (E, W, S
 * or N; else PF_EINVAL), on both cells' entries, and refreshes the 3x3
 * blocks of both cells. PF_ERANGE when either cell is off the map and
 * PF_ENOMEM before any change leave the session unchanged. */
pf_status pf_dstar_set_wall(pf_dstar *d, pf_point p, int dir, bool blocked) {
    pf_status st;
    static const int opposite[4] = {PF_DIR_W, PF_DIR_E, PF_DIR_N, PF_DIR_S};
    if (dir < 0 || dir > 3) return PF_EINVAL;
    pf_point q = {p.x + pf_dir_dx[dir], p.y + pf_dir_dy[dir]};
    if (!in_bounds(d, p.x, p.y) || !in_bounds(d, q.x, q.y)) return PF_ERANGE;
    st = pf__dstar_ov_reserve(d, 18);
    if (st) return st;
    if (!d->fresh && (d->ops->reserve(d, 8, 32))) return PF_ENOMEM;
    pf__dstar_ov_taint_block(d, p.x, p.y);
    pf__dstar_ov_taint_block(d, q.x, q.y);
    ov *a = ov_find(d, cell_of(d, p)), *b = ov_find(d, cell_of(d, q));
    uint8_t bit = (uint8_t)(1u << dir), obit = (uint8_t)(1u << opposite[dir]);
    a->wmask |= bit;
    b->wmask |= obit;
    if (blocked) {
        a->wval |= bit;
        b->wval |= obit;
    } else {
        a->wval &= (uint8_t)~bit;
        b->wval &= (uint8_t)~obit;
    }
    pf__dstar_ov_refresh_block(d, p.x, p.y);
    pf__dstar_ov_refresh_block(d, q.x, q.y);
    if (d->fresh) return PF_OK;
    sync_tip(d);
    st = d->ops->refresh_block(d, p.x, p.y);
    if (!st) st = d->ops->refresh_block(d, q.x, q.y);
    if (st) d->fresh = true;
    return st;
}

/* Switches the session to the base grid g (borrowed from now on) of the
 * same size, where exactly the cells changed[0..n) differ from the old
 * base. The cached masks of the overlay are brought in line first, then
 * the vertices around each changed cell get their rhs again; other rules,
 * or a cost cheaper than the heuristic's scale, make the next plan search
 * anew. The cuts are dropped. PF_EINVAL (other size) and PF_ERANGE (a cell
 * off the map) change nothing; on PF_ENOMEM the session is on g and its
 * next plan searches anew. */
pf_status pf_dstar_rebase(pf_dstar *d, const pf_grid *g, const pf_point *changed, size_t n) {
    pf_status st = PF_OK;
    if (g->w != d->w || g->h != d->h) return PF_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!in_bounds(d, changed[i].x, changed[i].y)) return PF_ERANGE;
    bool same_rules = g->connectivity == d->conn && g->corner_cutting == d->cut;
    if (!same_rules) return pf_dstar_rebase_all(d, g); /* every mask and key is stale */
    if (!d->fresh) sync_tip(d);
    set_base(d, g);
    d->cuts = NULL; /* they describe the old base */
    /* First bring every cached mask in line with the new base, then touch
     * the vertices: a vertex's rhs reads the masks of its own block. */
    for (size_t i = 0; i < n; i++)
        if (d->ocount) pf__dstar_ov_refresh_block(d, changed[i].x, changed[i].y);
    if (pf_grid_min_cost(g) < d->hscale) d->fresh = true;
    if (d->fresh) return PF_OK;
    for (size_t i = 0; i < n && !st; i++) st = d->ops->refresh_block(d, changed[i].x, changed[i].y);
    if (st) d->fresh = true; /* out of memory half way: search anew next time */
    return st;
}

/* Takes g as the base and works out every cached mask of the overlay
 * again; nothing else is known of what changed, so the next plan searches
 * anew. */
pf_status pf_dstar_rebase_all(pf_dstar *d, const pf_grid *g) {
    if (g->w != d->w || g->h != d->h) return PF_EINVAL;
    set_base(d, g);
    d->cuts = NULL; /* they describe the old base */
    for (uint32_t i = 0; i < d->ocap; i++)
        if (d->o[i].cell != EMPTY_CELL)
            d->o[i].moves = pf__dstar_ov_moves(d, d->o[i].cell % d->w, d->o[i].cell / d->w);
    d->fresh = true;
    return PF_OK;
}

void pf_dstar_restart(pf_dstar *d) { d->fresh = true; }

/* How the last plan went: dstar_lite.c's plan fills d->info. */
void pf_dstar_last_plan(const pf_dstar *d, pf_dstar_plan_info *out) { *out = d->info; }

/* The effective cost of p, 0 off the map. */
uint8_t pf_dstar_cost(const pf_dstar *d, pf_point p) {
    return in_bounds(d, p.x, p.y) ? eff_cost(d, cell_of(d, p)) : 0;
}

bool pf_dstar_is_wall(const pf_dstar *d, pf_point p, int dir) {
    if (dir < 0 || dir > 3 || !in_bounds(d, p.x, p.y)) return false;
    return eff_wall(d, cell_of(d, p), dir);
}

/* Whether the effective move mask of a has the step to b. */
bool pf_dstar_can_step(const pf_dstar *d, pf_point a, pf_point b) {
    if (!in_bounds(d, a.x, a.y) || !in_bounds(d, b.x, b.y)) return false;
    for (int k = 0; k < d->conn; k++)
        if (a.x + pf_dir_dx[k] == b.x && a.y + pf_dir_dy[k] == b.y)
            return (eff_moves(d, cell_of(d, a)) >> k) & 1u;
    return false;
}

/* The agent's cell. */
pf_point pf_dstar_position(const pf_dstar *d) {
    pf_point p = {d->start % d->w, d->start / d->w};
    return p;
}

/* The goal's cell. */
pf_point pf_dstar_goal(const pf_dstar *d) {
    pf_point p = {d->goal % d->w, d->goal / d->w};
    return p;
}

/* The base grid the session borrows now. */
const pf_grid *pf_dstar_grid(const pf_dstar *d) { return d->base; }

/* The bytes the session holds, the vertex store's as its table counts
 * them; the shared base grid and cuts are not counted. */
size_t pf_dstar_memory(const pf_dstar *d) {
    return sizeof(*d) + d->ops->store_memory(d) + (size_t)d->qcap * sizeof(qitem) +
           (size_t)d->ocap * sizeof(ov) + d->path_cap * sizeof(pf_point) +
           (size_t)d->gone_cap * sizeof(gone);
}
