/* dstar_lite.c -- D* Lite, the optimized version (Koenig & Likhachev, "D* Lite",
 * AAAI 2002, figure 4), with the re-rooting of Moving Target D* Lite (Sun,
 * Yeoh & Koenig, AAMAS 2010), over a vertex store: the tiles of
 * dstar_tiles.h when this file is compiled on its own, the plain array of
 * dstar_plain.c when that file includes it (see dstar_internal.h). See
 * dstar.h for the contract.
 *
 * The search runs from its root towards its tip (dstar_internal.h): rooted
 * at the goal (classic D* Lite), g(s) and rhs(s) estimate the cost from s
 * to the goal, and the agent's path follows the argmin over successors s'
 * of c(s, s') + g(s'); rooted at the agent (MT-D* Lite), they estimate the
 * cost from the agent to s, and the path is read back from the goal along
 * the argmin over predecessors s' of g(s') + c(s', s). Edge costs follow
 * the map model: c(s, s') = cost(s') x step length, so an edge between u
 * (nearer the root) and its neighbour s in direction k weighs cost(u) x
 * len(k) rooted at the goal (the move s -> u enters u) and cost(s) x len(k)
 * rooted at the agent (u -> s enters s): `weight` below. Moves are
 * symmetric (grid.h), so both orientations read a cell's own move mask for
 * its neighbours either way. Costs are the effective map's
 * (dstar_overlay.c), distances fixed-point integers (dstar_internal.h).
 *
 * The open list U is a binary heap of items (key, g, rhs, cell) whose
 * position is stored in the cell, so Update and Remove are O(log n).
 *
 * Changes. Changing a cell's cost changes every edge into it, and the
 * allowed-ness of every edge whose move mask reads it: all edges leaving a
 * cell of its 3x3 block. rhs(s) is a function of s's outgoing edges only, so
 * recomputing rhs and calling UpdateVertex for the nine cells of the block
 * handles the change exactly (a wall edge: the blocks of both its cells).
 * This is the paper's edge loop, done per vertex instead of per edge
 * (refresh_block, called by dstar.c for each changed block).
 *
 * The heuristic is octile (8-connected) or manhattan (4-connected) times the
 * cheapest effective cost, which keeps it consistent and satisfying the
 * triangle inequality that km relies on. When a change lowers the cheapest
 * cost below the scale in use (a private cell or a rebase cheaper than every
 * cost seen so far) the old keys are no longer lower bounds under a smaller
 * scale, so the next plan searches anew. This is rare on game maps, where
 * base ground is already the cheapest cost.
 */
#include <stdlib.h>
#include <string.h>

#include "cuts.h"
#include "dstar_internal.h"

/* The store: the tiles unless an including file has defined one and named
 * the table of entry points this copy exports. */
#ifndef PF__DSTAR_OPS
#include "dstar_tiles.h"
#define PF__DSTAR_OPS pf__dstar_tiles_ops
#endif

static inline dist g_at(const pf_dstar *d, slot_t sl) {
    int64_t v = cell_load(d, sl);
    return is_queued(v) ? d->q[untag_pos(v)].g : v;
}

static inline dist rhs_at(const pf_dstar *d, slot_t sl) {
    int64_t v = cell_load(d, sl);
    return is_queued(v) ? d->q[untag_pos(v)].rhs : v;
}

/* The weight of the edge between u (nearer the root, entry cost cu) and
 * its neighbour s = u + off[k], in the search's orientation (see above). */
static inline dist weight(const pf_dstar *d, dist cu, int32_t s, int k) {
    return (d->fwd ? (dist)eff_cost(d, s) : cu) * d->unit[k];
}

/* g of a cell, infinity when untouched. */
static inline dist g_of(const pf_dstar *d, int32_t x, int32_t y) {
    slot_t sl = slot_find(d, x, y);
    return sl == NO_SLOT ? DIST_INF : g_at(d, sl);
}

/* Open list: binary min-heap on [k1; k2] compared lexicographically. A
 * queued cell stores its item's position, so Update and Remove are
 * O(log n). */

static inline bool q_less(const qitem *a, const qitem *b) {
    return key_less(a->k1, a->k2, b->k1, b->k2);
}

static inline void q_place(pf_dstar *d, uint32_t pos, const qitem *it) {
    d->q[pos] = *it;
    cell_store_pos(d, it->slot, pos);
}

static void q_sift_up(pf_dstar *d, uint32_t pos) {
    qitem it = d->q[pos];
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (!q_less(&it, &d->q[parent])) break;
        q_place(d, pos, &d->q[parent]);
        pos = parent;
    }
    q_place(d, pos, &it);
}

static void q_sift_down(pf_dstar *d, uint32_t pos) {
    qitem it = d->q[pos];
    for (;;) {
        uint32_t c = 2 * pos + 1;
        if (c >= d->qlen) break;
        if (c + 1 < d->qlen && q_less(&d->q[c + 1], &d->q[c])) c++;
        if (!q_less(&d->q[c], &it)) break;
        q_place(d, pos, &d->q[c]);
        pos = c;
    }
    q_place(d, pos, &it);
}

/* Room was reserved with q_reserve: an insert never allocates. */
static void q_insert(pf_dstar *d, const qitem *it) {
    uint32_t pos = d->qlen++;
    d->q[pos] = *it;
    q_sift_up(d, pos);
    d->generated++;
}

/* Re-sorts item pos after its key changed to [k1; k2]. */
static void q_rekey(pf_dstar *d, uint32_t pos, dist k1, dist k2) {
    bool up = key_less(k1, k2, d->q[pos].k1, d->q[pos].k2);
    d->q[pos].k1 = k1;
    d->q[pos].k2 = k2;
    if (up)
        q_sift_up(d, pos);
    else
        q_sift_down(d, pos);
    d->generated++;
}

/* Takes item pos off the list; its cell then holds `g`. */
static void q_take(pf_dstar *d, uint32_t pos, dist g) {
    slot_t sl = d->q[pos].slot;
    if (pos != --d->qlen) {
        q_place(d, pos, &d->q[d->qlen]);
        if (pos > 0 && q_less(&d->q[pos], &d->q[(pos - 1) / 2]))
            q_sift_up(d, pos);
        else
            q_sift_down(d, pos);
    }
    cell_store_g(d, sl, g);
}

/* Takes item pos off the list; its cell then holds g (now equal to rhs). */
static void q_remove(pf_dstar *d, uint32_t pos) { q_take(d, pos, d->q[pos].g); }

/* Makes room for n more open-list items, so q_insert never allocates. The
 * open list holds only the inconsistent vertices (the search frontier). */
static pf_status q_reserve(pf_dstar *d, uint32_t n) {
    uint32_t cap = d->qcap ? d->qcap : 64;
    qitem *q;
    if (d->qcap >= d->qlen + n) return PF_OK;
    while (cap < d->qlen + n) cap *= 2;
    q = realloc(d->q, (size_t)cap * sizeof(*q));
    if (!q) return PF_ENOMEM;
    d->q = q;
    d->qcap = cap;
    return PF_OK;
}

/* Room for n more tiles and k more open-list items and wide cells: what
 * one expansion or one changed block may need, so nothing inside fails. */
static inline pf_status reserve(pf_dstar *d, uint32_t n, uint32_t k) {
    if (store_reserve(d, n, k) || q_reserve(d, k)) return PF_ENOMEM;
    return PF_OK;
}

/* The search */

static inline void calc_key(const pf_dstar *d, int32_t cell, dist g, dist rhs, dist *k1, dist *k2) {
    dist m = g < rhs ? g : rhs;
    *k1 = m == DIST_INF ? DIST_INF : m + heur(d, tip_of(d), cell) + d->km;
    *k2 = m;
}

/* UpdateVertex: the vertex at sl (cell `cell`) now has g and rhs; it goes on,
 * stays on with a new key, or leaves the open list. */
static void update_vertex(pf_dstar *d, slot_t sl, int32_t cell, dist g, dist rhs) {
    int64_t v = cell_load(d, sl);
    if (g != rhs) {
        qitem it;
        calc_key(d, cell, g, rhs, &it.k1, &it.k2);
        if (is_queued(v)) {
            uint32_t pos = untag_pos(v);
            d->q[pos].g = g;
            d->q[pos].rhs = rhs;
            q_rekey(d, pos, it.k1, it.k2);
        } else {
            it.g = g;
            it.rhs = rhs;
            it.slot = sl;
            it.cell = cell;
            q_insert(d, &it);
        }
    } else if (is_queued(v)) {
        uint32_t pos = untag_pos(v);
        d->q[pos].g = g;
        q_remove(d, pos);
    } else {
        cell_store_g(d, sl, g);
    }
}

/* rhs(s) by the one-step lookahead, s not the root: rooted at the goal,
 * min over successors s' of c(s, s') + g(s'); rooted at the agent, min over
 * predecessors s' of g(s') + c(s', s). */
SEARCH_CLONES static dist best_support(const pf_dstar *d, int32_t s) {
    uint8_t m = eff_moves(d, s);
    int32_t x = cell_x(d, s), y = cell_y(d, s);
    near h = near_of(d, x, y);
    const dist cs = d->fwd ? (dist)eff_cost(d, s) : 0;
    dist best = DIST_INF;
    for (int k = 0; k < d->conn; k++) {
        if (!(m & (1u << k))) continue;
        int32_t n = s + d->off[k];
        slot_t sl = near_find(d, &h, x + pf_dir_dx[k], y + pf_dir_dy[k]);
        dist gn = sl == NO_SLOT ? DIST_INF : g_at(d, sl);
        if (gn == DIST_INF) continue;
        dist c = (d->fwd ? cs : (dist)eff_cost(d, n)) * d->unit[k] + gn;
        if (c < best) best = c;
    }
    return best;
}

/* The edges leaving cell (x, y) changed: recompute its rhs and
 * UpdateVertex. Room for one tile and one heap item must be reserved. */
static void refresh_vertex(pf_dstar *d, int32_t x, int32_t y) {
    int32_t s = y * d->w + x;
    slot_t sl;
    if (s == d->root) return; /* rhs(root) is fixed whatever its edges */
    dist rhs = best_support(d, s);
    sl = rhs == DIST_INF ? slot_find(d, x, y) : slot_get(d, x, y);
    if (sl == NO_SLOT) return; /* untouched and still unreachable */
    update_vertex(d, sl, s, g_at(d, sl), rhs);
}

/* Resets the search: no tiles, empty open list, km = 0, rooted at the end
 * the orientation wants with rhs(root) = 0. Memory goes back to almost
 * nothing, so a session that searched a large area before does not keep
 * it. */
static pf_status initialise(pf_dstar *d) {
    uint8_t minc = pf_grid_min_cost(d->base);
    store_free(d);
    free(d->q);
    d->q = NULL;
    d->qcap = d->qlen = 0;
    free(d->gone);
    d->gone = NULL;
    d->gone_cap = d->ngone = 0;
    d->km = 0;
    d->root = root_want(d);
    d->last = tip_of(d);
    d->hscale = d->ov_min && d->ov_min < minc ? d->ov_min : minc;
    if (reserve(d, 1, 16)) return PF_ENOMEM;
    int32_t rx = cell_x(d, d->root), ry = cell_y(d, d->root);
    update_vertex(d, slot_get(d, rx, ry), d->root, DIST_INF, 0);
    d->fresh = false;
    return PF_OK;
}

/* The stop test of ComputeShortestPath(): nothing left to do for the
 * tip's vertex. The paper's optimized loop also stops while the tip's
 * vertex is overconsistent; going on until it is consistent (the basic
 * version's test) costs one expansion and gives the tip an exact g, from
 * which the whole path is read. */
static inline bool search_done(const pf_dstar *d) {
    if (d->qlen == 0) return true;
    const int32_t t = tip_of(d);
    slot_t ss = slot_find(d, cell_x(d, t), cell_y(d, t));
    dist sg = ss == NO_SLOT ? DIST_INF : g_at(d, ss);
    dist srhs = ss == NO_SLOT ? DIST_INF : rhs_at(d, ss);
    dist m = sg < srhs ? sg : srhs;
    dist ks1 = m == DIST_INF ? DIST_INF : m + d->km, ks2 = m; /* h(tip, tip) = 0 */
    return !(key_less(d->q[0].k1, d->q[0].k2, ks1, ks2) || srhs != sg);
}

/* ComputeShortestPath() of the optimized D* Lite. The loop invariant (every
 * locally inconsistent vertex is queued with a key that is a lower bound)
 * holds between iterations, so stopping on the limits (the budget or the
 * stop callback, plan_limits.h) leaves a state the next call simply
 * continues. The limits are checked only while there is work left, once
 * per iteration; d->next_poll carries the poll counter across the calls of
 * one plan. */
SEARCH_CLONES static pf_status compute_shortest_path(pf_dstar *d, const pf_plan_limits *lim) {
    for (;;) {
        if (search_done(d)) break;
        pf_status st = pf_plan_limits_check(lim, d->expanded, &d->next_poll);
        if (st) return st;
        /* The predecessors below span at most four tiles. */
        if (reserve(d, 4, 16)) return PF_ENOMEM;

        const qitem top = d->q[0];
        dist knew1, knew2;
        calc_key(d, top.cell, top.g, top.rhs, &knew1, &knew2);
        if (key_less(top.k1, top.k2, knew1, knew2)) {
            q_rekey(d, 0, knew1, knew2);
            continue;
        }
        d->expanded++;
        const int32_t c = top.cell, cx = cell_x(d, c), cy = cell_y(d, c);
        const uint8_t mv = eff_moves(d, c);
        const dist cu = (dist)eff_cost(d, c);
        near h = near_of(d, cx, cy);
        if (top.g > top.rhs) {
            /* Overconsistent: settle g and relax the neighbours away from
             * the root. */
            const dist gu = top.rhs;
            d->q[0].g = gu;
            q_remove(d, 0);
            for (int k = 0; k < d->conn; k++) {
                if (!(mv & (1u << k))) continue;
                int32_t s = c + d->off[k];
                if (s == d->root) continue;
                dist cand = weight(d, cu, s, k) + gu;
                slot_t sl = near_get(d, &h, cx + pf_dir_dx[k], cy + pf_dir_dy[k]);
                if (cand < rhs_at(d, sl)) update_vertex(d, sl, s, g_at(d, sl), cand);
            }
        } else {
            /* Underconsistent: raise g to infinity; neighbours whose rhs
             * came through u look for their next best support. */
            const dist gold = top.g;
            update_vertex(d, top.slot, c, DIST_INF, top.rhs);
            for (int k = 0; k < d->conn; k++) {
                if (!(mv & (1u << k))) continue;
                int32_t s = c + d->off[k];
                if (s == d->root) continue;
                slot_t sl = near_find(d, &h, cx + pf_dir_dx[k], cy + pf_dir_dy[k]);
                if (sl == NO_SLOT || rhs_at(d, sl) != weight(d, cu, s, k) + gold) continue;
                update_vertex(d, sl, s, g_at(d, sl), best_support(d, s));
            }
        }
    }
    return PF_OK;
}

/* A finished plan keeps its open list (the frontier the next repair goes
 * on from), not the doubling slack the search left: over a thousand
 * sessions on a map the slack adds up. Only a capacity above twice the use
 * is trimmed, to 1.25 times it, so plans that alternate between sizes do
 * not reallocate every time; shrinking a block is done in place. */
static void trim_slack(pf_dstar *d) {
    if (d->qcap > 2 * d->qlen + 64) {
        uint32_t cap = d->qlen + d->qlen / 4 + 32;
        qitem *q = realloc(d->q, (size_t)cap * sizeof(*q));
        if (q) {
            d->q = q;
            d->qcap = cap;
        }
    }
}

static void trim_path(pf_dstar *d, size_t n) {
    if (d->path_cap > 2 * n + 64) {
        size_t cap = n + n / 4 + 32;
        pf_point *p = realloc(d->path, cap * sizeof(*p));
        if (p) {
            d->path = p;
            d->path_cap = cap;
        }
    }
}

static pf_status reserve_path(pf_dstar *d, size_t n) {
    if (n <= d->path_cap) return PF_OK;
    size_t cap = d->path_cap ? d->path_cap : 64;
    while (cap < n) cap *= 2;
    pf_point *p = realloc(d->path, cap * sizeof(*p));
    if (!p) return PF_ENOMEM;
    d->path = p;
    d->path_cap = cap;
    return PF_OK;
}

/* The path, read from the tip along the argmin of the one-step lookahead
 * (best_support's) down to cell `to`: the root, or (dstar.h's lazy
 * re-root) the cell the root's end moved to. Each step strictly lowers g
 * (edge costs are >= 1), so the walk ends; the bound on its length only
 * guards against a broken invariant. Rooted at the goal the walk runs from
 * the agent towards the goal; rooted at the agent it runs from the goal
 * back towards the agent, and the points are turned round. The cost is
 * summed in walking order, the cost of each step the cost of the cell it
 * enters.
 *
 * Walking to the root, ties go to the first direction. Walking to another
 * cell, ties go to the neighbour nearest it (octile), and the walk gives
 * up (PF_NO_PATH) once g is down to g(to) anywhere else: the argmin path
 * then does not pass through `to`, although another shortest one might. */
SEARCH_CLONES static pf_status extract_path(pf_dstar *d, int32_t to, bool biased, pf_result *out) {
    int32_t cur = tip_of(d);
    size_t n = 0, limit = store_bound(d) + 1;
    double cost = 0.0;
    const dist gto = to != d->root ? g_of(d, cell_x(d, to), cell_y(d, to)) : 0;
    for (;;) {
        int32_t x = cell_x(d, cur), y = cell_y(d, cur);
        if (reserve_path(d, n + 1)) return PF_ENOMEM;
        d->path[n].x = x;
        d->path[n].y = y;
        n++;
        if (cur == to) break;
        if (cur == d->root) return PF_NO_PATH; /* walked past `to` */
        if (n > limit) return PF_EINVAL;
        uint8_t m = eff_moves(d, cur);
        near h = near_of(d, x, y);
        const dist ccur = d->fwd ? (dist)eff_cost(d, cur) : 0;
        dist best = DIST_INF, bestg = DIST_INF, besth = DIST_INF;
        double step = 0.0;
        int32_t next = -1;
        for (int k = 0; k < d->conn; k++) {
            if (!(m & (1u << k))) continue;
            int32_t s = cur + d->off[k];
            slot_t sl = near_find(d, &h, x + pf_dir_dx[k], y + pf_dir_dy[k]);
            dist gs = sl == NO_SLOT ? DIST_INF : g_at(d, sl);
            if (gs == DIST_INF) continue;
            dist ce = d->fwd ? ccur : (dist)eff_cost(d, s), c = ce * d->unit[k] + gs;
            if (c > best) continue;
            dist hs = biased ? heur(d, s, to) : 0;
            if (c == best && hs >= besth) continue;
            best = c;
            bestg = gs;
            besth = hs;
            step = (double)ce * pf__dir_len(k);
            next = s;
        }
        if (next < 0) return PF_EINVAL;
        if (to != d->root && next != to && bestg <= gto) return PF_NO_PATH;
        cost += step;
        cur = next;
    }
    if (d->fwd)
        for (size_t i = 0, j = n - 1; i < j; i++, j--) {
            pf_point t = d->path[i];
            d->path[i] = d->path[j];
            d->path[j] = t;
        }
    trim_path(d, n);
    out->path = d->path;
    out->path_len = n;
    out->cost = cost;
    return PF_OK;
}

/* Whether the goal is certainly unreachable, known from the base grid's
 * components and cut vertices without searching: the agent and the goal
 * lie in different components of the base, or some cell the overlay blocks
 * separates them there on its own. Both only hold for the effective map
 * when the overlay adds nothing to the base: a private change that opens a
 * cell or a wall edge the base has closed could reconnect them, so any
 * such entry turns the test off (a cost change between nonzero costs
 * moves no edge). False means "search", not "reachable".
 *
 * Why: blocking a cell on the path of a perfect maze (a tree) always
 * disconnects, and D* Lite then raises every vertex it had reached behind
 * the cut, more work than a fresh A* exhausting the agent's side. Answered
 * here, the repair waits in the open list: the search state stays
 * consistent (a plan may always come later), and when a later change
 * reopens the cell most of that work cancels out. O(overlay entries). */
static bool cut_off(const pf_dstar *d) {
    const pf_grid *g = d->base;
    bool sep = !pf_cuts_connected(d->cuts, d->start, d->goal);
    for (uint32_t i = 0; d->ocount && i < d->ocap; i++) {
        const ov *o = &d->o[i];
        if (o->cell == EMPTY_CELL) continue;
        if (g->walls && (o->wmask & ~o->wval & g->walls[o->cell])) return false;
        if (!(o->flags & OV_COST)) continue;
        if (o->cost && !g->cost[o->cell]) return false;
        if (!o->cost && !sep) sep = pf_cuts_separates(d->cuts, o->cell, d->start, d->goal);
    }
    return sep;
}

/* Re-rooting (Moving Target D* Lite's OptimizedDeletion, Sun, Yeoh &
 * Koenig, AAMAS 2010, in either orientation). The end the search is rooted
 * at moved to cell nr. The paper's insight: every vertex whose shortest way
 * to the old root runs through nr has, in g, its distance to nr plus the
 * constant g(nr). So nr becomes the root keeping rhs(nr) = g(nr) (no value
 * under it changes, and D* Lite never needed rhs(root) = 0), and only the
 * other vertices are reset to "not reached" (g = rhs = inf), then given
 * their one-step lookahead again; ComputeShortestPath does the rest.
 *
 * Which vertices hang from nr is read from the values, without the paper's
 * parent pointers: s is a child of u when rhs(s) = g(u) + c(u, s), and it
 * must go when no neighbour supports its rhs any more (best_support(s) >
 * rhs(s)). Starting from the old root, each reset vertex tests its
 * children; a child that another vertex still supports stays, and is tested
 * again when that one goes. Every edge weighs at least 1, so supports
 * cannot form a cycle, and what stays is exactly what still hangs from nr
 * (through any of its shortest ways, not one tree's). This keeps both of
 * LPA*'s invariants: every rhs but the root's is the one-step lookahead,
 * and the open list holds exactly the inconsistent vertices. The work is
 * the vertices that go, times their neighbours: a chaser's step along its
 * own path resets the thin slice of the tree behind and beside it.
 *
 * nr must be settled: on the store, off the open list, g finite. Else the
 * tree holds nothing under it worth keeping, and the caller searches anew
 * (PF_NO_PATH, nothing changed). PF_ENOMEM leaves a broken state: the
 * caller searches anew. */

/* Room for n more reset vertices. */
static pf_status gone_reserve(pf_dstar *d, uint32_t n) {
    uint32_t cap = d->gone_cap ? d->gone_cap : 64;
    gone *g;
    if (d->ngone + n <= d->gone_cap) return PF_OK;
    while (cap < d->ngone + n) {
        if (cap > UINT32_MAX / 2) return PF_ENOMEM;
        cap *= 2;
    }
    g = realloc(d->gone, (size_t)cap * sizeof(*g));
    if (!g) return PF_ENOMEM;
    d->gone = g;
    d->gone_cap = cap;
    return PF_OK;
}

/* Resets the vertex of cell c at sl to "not reached" (off the open list,
 * g = rhs = inf) and records it with the g it had. Room must have been
 * reserved with gone_reserve. Slots and cached tiles stay valid. */
static void forget(pf_dstar *d, slot_t sl, int32_t c) {
    int64_t v = cell_load(d, sl);
    dist g = v;
    if (is_queued(v)) {
        g = d->q[untag_pos(v)].g;
        q_take(d, untag_pos(v), DIST_INF);
    } else {
        cell_store_g(d, sl, DIST_INF);
    }
    d->gone[d->ngone].cell = c;
    d->gone[d->ngone].g = g;
    d->ngone++;
}

/* Gives back a re-root's record when it holds far more than it used. */
static void trim_gone(pf_dstar *d) {
    if (d->gone_cap > 2 * d->ngone + 64) {
        free(d->gone);
        d->gone = NULL;
        d->gone_cap = 0;
    }
}

SEARCH_CLONES static pf_status reroot(pf_dstar *d, int32_t nr) {
    const int32_t nx = cell_x(d, nr), ny = cell_y(d, nr);
    slot_t sl = slot_find(d, nx, ny);
    if (sl == NO_SLOT) return PF_NO_PATH;
    int64_t v = cell_load(d, sl);
    if (is_queued(v) || v == DIST_INF || v > KM_LIMIT) return PF_NO_PATH;
    const int32_t old = d->root;
    d->root = nr;
    d->ngone = 0;
    if (gone_reserve(d, 1)) return PF_ENOMEM;
    forget(d, slot_find(d, cell_x(d, old), cell_y(d, old)), old);
    for (uint32_t i = 0; i < d->ngone; i++) {
        const int32_t u = d->gone[i].cell;
        const dist gu = d->gone[i].g;
        if (gu == DIST_INF) continue; /* nothing came through it */
        const int32_t ux = cell_x(d, u), uy = cell_y(d, u);
        const uint8_t mv = eff_moves(d, u);
        const dist cu = (dist)eff_cost(d, u);
        near h = near_of(d, ux, uy);
        for (int k = 0; k < d->conn; k++) {
            if (!(mv & (1u << k))) continue;
            int32_t s = u + d->off[k];
            if (s == d->root) continue;
            slot_t ss = near_find(d, &h, ux + pf_dir_dx[k], uy + pf_dir_dy[k]);
            if (ss == NO_SLOT) continue;
            dist rs = rhs_at(d, ss);
            if (rs == DIST_INF || rs != weight(d, cu, s, k) + gu) continue; /* not u's child */
            if (best_support(d, s) == rs) continue; /* still hangs from a kept vertex */
            if (gone_reserve(d, 1)) return PF_ENOMEM;
            forget(d, ss, s);
        }
    }
    /* The reset vertices next to what stayed get their lookahead and go
     * on the open list (g = inf, rhs finite). */
    if (q_reserve(d, d->ngone)) return PF_ENOMEM;
    for (uint32_t i = 0; i < d->ngone; i++) {
        const int32_t t = d->gone[i].cell;
        dist rhs = best_support(d, t);
        if (rhs != DIST_INF)
            update_vertex(d, slot_find(d, cell_x(d, t), cell_y(d, t)), t, DIST_INF, rhs);
    }
    d->info.deleted = d->ngone;
    trim_gone(d);
    return PF_OK;
}

/* Whether cell c is on the store, off the open list, with a finite g. */
static bool settled(const pf_dstar *d, int32_t c) {
    slot_t sl = slot_find(d, cell_x(d, c), cell_y(d, c));
    if (sl == NO_SLOT) return false;
    int64_t v = cell_load(d, sl);
    return !is_queued(v) && v != DIST_INF;
}

/* The root's end moved to cell `want` (plan's part for it). Re-rooting is
 * often not even needed: when the tip's shortest path to the old root runs
 * through `want`, its part between the tip and `want` is a shortest path
 * between them (a part of a shortest path is one). A chaser walking its own
 * path (rooted at the agent), or a goal stepping along the path towards the
 * agent (rooted at the goal), is on it, unless the other end moved so that
 * the way now goes elsewhere. So the search first goes on from the old root
 * (km covers the tip's move) and the path is read from the tip towards
 * `want` (extract_path, ties broken towards it). Only when it does not pass
 * there is the search re-rooted (reroot), and also once `want` is farther
 * from the old root than from the tip: the search stays about the part of
 * the way still to go, and a re-root then resets what is behind once, not
 * a slice at every step. Returns true when it answered (*st is the
 * status, out the answer), false when plan must go on searching,
 * re-rooted or (d->fresh) anew. */
static bool move_root(pf_dstar *d, const pf_plan_limits *lim, pf_result *out, pf_status *res) {
    const int32_t want = root_want(d), t = tip_of(d);
    pf_status st;
    if (!d->reroot_always && settled(d, want)) {
        st = compute_shortest_path(d, lim);
        out->expanded = d->expanded;
        out->generated = d->generated;
        if (st) {
            *res = st;
            return true;
        }
        dist gt = g_of(d, cell_x(d, t), cell_y(d, t));
        dist gw = g_of(d, cell_x(d, want), cell_y(d, want));
        dist gr = g_of(d, cell_x(d, d->root), cell_y(d, d->root));
        if (gt != DIST_INF && gw != DIST_INF && gw - gr <= gt - gw) {
            st = extract_path(d, want, false, out);
            if (st == PF_NO_PATH) st = extract_path(d, want, true, out);
            if (st == PF_OK || st == PF_ENOMEM) {
                if (st == PF_OK) trim_slack(d);
                d->info.deferred = st == PF_OK;
                *res = st;
                return true;
            }
            out->path = NULL;
            out->path_len = 0;
            out->cost = 0.0;
        }
    }
    st = reroot(d, want);
    d->info.rerooted = st == PF_OK;
    if (st) d->fresh = true;
    return false;
}

/* Which end the search should be rooted at now (pf_dstar_opts.root). The
 * automatic rule: a session rooted at the goal turns to the agent when the
 * goal moved before this plan and the one before (a chase); rooted at the
 * agent, it turns back once the goal has stayed put for 16 plans. */
static bool want_forward(const pf_dstar *d) {
    if (d->root_opt == PF_DSTAR_ROOT_GOAL) return false;
    if (d->root_opt == PF_DSTAR_ROOT_AGENT) return true;
    return d->fwd ? (d->goal_hist & 0xFFFFu) != 0 : (d->goal_hist & 3u) == 3u;
}

/* pf_dstar_plan (dstar.h): plans or repairs and fills out. Returns what it
 * sets out->status to: PF_OK (out->path borrowed from the session until its
 * next call), PF_NO_PATH, PF_EBLOCKED, PF_EBUDGET or PF_ECANCELED (the
 * limits stopped it: the repair goes on at the next plan), PF_ENOMEM (the
 * state before the failing expansion is kept, or the next plan searches
 * anew) or PF_EINVAL (a broken invariant: the next plan searches anew).
 * d->info says how it went. */
static pf_status plan(pf_dstar *d, const pf_plan_limits *lim, pf_result *out) {
    pf_status st;
    memset(out, 0, sizeof(*out));
    memset(&d->info, 0, sizeof(d->info));
    out->algorithm = PF_ALGO_DSTAR;
    d->expanded = d->generated = 0;
    d->next_poll = pf_plan_limits_first_poll(lim);
    d->goal_hist = d->goal_hist << 1 | (d->goal != d->plan_goal);
    d->plan_goal = d->goal;
    if (want_forward(d) != d->fwd) {
        d->fwd = !d->fwd;
        d->fresh = true;
    }
    d->info.from_agent = d->fwd;
    if (eff_cost(d, d->start) == 0 || eff_cost(d, d->goal) == 0) return out->status = PF_EBLOCKED;
    if (d->start == d->goal) {
        if (reserve_path(d, 1)) return out->status = PF_ENOMEM;
        d->path[0].x = d->start % d->w;
        d->path[0].y = d->start / d->w;
        out->path = d->path;
        out->path_len = 1;
        return out->status = PF_OK;
    }
    if (!d->fresh) sync_tip(d);
    /* Only when a search would run: a settled plan answers from g anyway,
     * and cut_off scans the overlay. */
    if (d->cuts && (d->fresh || d->root != root_want(d) || !search_done(d)) && cut_off(d))
        return out->status = PF_NO_PATH;
    if (!d->fresh && d->root != root_want(d) && move_root(d, lim, out, &st)) {
        if (st) {
            out->path = NULL;
            out->path_len = 0;
            out->cost = 0.0;
        }
        return out->status = st;
    }
    if (d->fresh) {
        st = initialise(d);
        d->info.anew = true;
        if (st) return out->status = st;
    }
    st = compute_shortest_path(d, lim);
    out->expanded = d->expanded;
    out->generated = d->generated;
    if (st) return out->status = st;
    trim_slack(d);
    const int32_t t = tip_of(d);
    if (g_of(d, cell_x(d, t), cell_y(d, t)) == DIST_INF) return out->status = PF_NO_PATH;
    st = extract_path(d, d->root, false, out);
    if (st == PF_EINVAL) d->fresh = true; /* a broken invariant: start over next time */
    if (st) {
        out->path = NULL;
        out->path_len = 0;
        out->cost = 0.0;
    }
    return out->status = st;
}

/* Recomputes rhs of every vertex in the 3x3 block of (x, y) and updates
 * those that became inconsistent (the paper's edge loop, for every edge
 * leaving a cell of the block). PF_ENOMEM changes nothing; after room was
 * reserved with reserve(d, 4, 16) it cannot fail. The search state must be
 * initialised (not d->fresh) and km in sync (sync_tip). */
static pf_status refresh_block(pf_dstar *d, int32_t x, int32_t y) {
    if (reserve(d, 4, 16)) return PF_ENOMEM;
    for (int32_t yy = y - 1; yy <= y + 1; yy++)
        for (int32_t xx = x - 1; xx <= x + 1; xx++)
            if (in_bounds(d, xx, yy)) refresh_vertex(d, xx, yy);
    return PF_OK;
}

/* This copy's entry points (dstar_internal.h). reserve takes room for n
 * more tiles and k more open-list items and stored g values: what one
 * changed block (n = 4, k = 16) may need, taken before a change is
 * recorded so that the change cannot fail half way; PF_ENOMEM leaves the
 * search state as it was. */
const pf__dstar_ops PF__DSTAR_OPS = {plan, reserve, refresh_block, store_free, store_memory};
