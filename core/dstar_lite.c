/* dstar_lite.c -- D* Lite, the optimized version (Koenig & Likhachev, "D* Lite",
 * AAAI 2002, figure 4), over a vertex store: the tiles of dstar_tiles.h when
 * this file is compiled on its own, the plain array of dstar_plain.c when
 * that file includes it (see dstar_internal.h). See dstar.h for the
 * contract.
 *
 * The search runs backwards, from the goal towards the agent: g(s) and rhs(s)
 * estimate the cost from s to the goal, and the agent's path follows the
 * argmin over successors s' of c(s, s') + g(s'). Edge costs follow the map
 * model: c(s, s') = cost(s') x step length, so when a vertex u is expanded
 * every predecessor s reaches it for cost(u) x len(dir). Costs are the
 * effective map's (dstar_overlay.c), distances fixed-point integers
 * (dstar_internal.h).
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

/* Takes item pos off the list; its cell then holds g (now equal to rhs). */
static void q_remove(pf_dstar *d, uint32_t pos) {
    slot_t sl = d->q[pos].slot;
    dist g = d->q[pos].g;
    if (pos != --d->qlen) {
        q_place(d, pos, &d->q[d->qlen]);
        if (pos > 0 && q_less(&d->q[pos], &d->q[(pos - 1) / 2]))
            q_sift_up(d, pos);
        else
            q_sift_down(d, pos);
    }
    cell_store_g(d, sl, g);
}

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
    *k1 = m == DIST_INF ? DIST_INF : m + heur(d, d->start, cell) + d->km;
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

/* min over successors s' of c(s, s') + g(s'). */
SEARCH_CLONES static dist best_successor(const pf_dstar *d, int32_t s) {
    uint8_t m = eff_moves(d, s);
    int32_t x = cell_x(d, s), y = cell_y(d, s);
    near h = near_of(d, x, y);
    dist best = DIST_INF;
    for (int k = 0; k < d->conn; k++) {
        if (!(m & (1u << k))) continue;
        int32_t n = s + d->off[k];
        slot_t sl = near_find(d, &h, x + pf_dir_dx[k], y + pf_dir_dy[k]);
        dist gn = sl == NO_SLOT ? DIST_INF : g_at(d, sl);
        if (gn == DIST_INF) continue;
        dist c = (dist)eff_cost(d, n) * d->unit[k] + gn;
        if (c < best) best = c;
    }
    return best;
}

/* The edges leaving cell (x, y) changed: recompute its rhs and
 * UpdateVertex. Room for one tile and one heap item must be reserved. */
static void refresh_vertex(pf_dstar *d, int32_t x, int32_t y) {
    int32_t s = y * d->w + x;
    slot_t sl;
    if (s == d->goal) return; /* rhs(goal) = 0 whatever its edges */
    dist rhs = best_successor(d, s);
    sl = rhs == DIST_INF ? slot_find(d, x, y) : slot_get(d, x, y);
    if (sl == NO_SLOT) return; /* untouched and still unreachable */
    update_vertex(d, sl, s, g_at(d, sl), rhs);
}

/* Resets the search: no tiles, empty open list, km = 0, rhs(goal) = 0.
 * Memory goes back to almost nothing, so a session that searched a large
 * area before a goal change does not keep it. */
static pf_status initialise(pf_dstar *d) {
    uint8_t minc = pf_grid_min_cost(d->base);
    store_free(d);
    free(d->q);
    d->q = NULL;
    d->qcap = d->qlen = 0;
    d->km = 0;
    d->last = d->start;
    d->hscale = d->ov_min && d->ov_min < minc ? d->ov_min : minc;
    if (reserve(d, 1, 16)) return PF_ENOMEM;
    int32_t gx = cell_x(d, d->goal), gy = cell_y(d, d->goal);
    update_vertex(d, slot_get(d, gx, gy), d->goal, DIST_INF, 0);
    d->fresh = false;
    return PF_OK;
}

/* The stop test of ComputeShortestPath(): nothing left to do for the
 * agent's vertex. The paper's optimized loop also stops while the agent's
 * vertex is overconsistent; going on until it is consistent (the basic
 * version's test) costs one expansion and gives the agent an exact g, from
 * which the whole path is read. */
static inline bool search_done(const pf_dstar *d) {
    if (d->qlen == 0) return true;
    slot_t ss = slot_find(d, cell_x(d, d->start), cell_y(d, d->start));
    dist sg = ss == NO_SLOT ? DIST_INF : g_at(d, ss);
    dist srhs = ss == NO_SLOT ? DIST_INF : rhs_at(d, ss);
    dist m = sg < srhs ? sg : srhs;
    dist ks1 = m == DIST_INF ? DIST_INF : m + d->km, ks2 = m; /* h(start, start) = 0 */
    return !(key_less(d->q[0].k1, d->q[0].k2, ks1, ks2) || srhs != sg);
}

/* ComputeShortestPath() of the optimized D* Lite. The loop invariant (every
 * locally inconsistent vertex is queued with a key that is a lower bound)
 * holds between iterations, so stopping on the budget leaves a state the
 * next call simply continues. */
SEARCH_CLONES static pf_status compute_shortest_path(pf_dstar *d, uint64_t max_expanded) {
    for (;;) {
        if (search_done(d)) break;
        if (max_expanded && d->expanded >= max_expanded) return PF_EBUDGET;
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
            /* Overconsistent: settle g and relax the predecessors. */
            const dist gu = top.rhs;
            d->q[0].g = gu;
            q_remove(d, 0);
            for (int k = 0; k < d->conn; k++) {
                if (!(mv & (1u << k))) continue;
                int32_t s = c + d->off[k];
                if (s == d->goal) continue;
                dist cand = cu * d->unit[k] + gu;
                slot_t sl = near_get(d, &h, cx + pf_dir_dx[k], cy + pf_dir_dy[k]);
                if (cand < rhs_at(d, sl)) update_vertex(d, sl, s, g_at(d, sl), cand);
            }
        } else {
            /* Underconsistent: raise g to infinity; predecessors whose rhs
             * came through u look for their next best successor. */
            const dist gold = top.g;
            update_vertex(d, top.slot, c, DIST_INF, top.rhs);
            for (int k = 0; k < d->conn; k++) {
                if (!(mv & (1u << k))) continue;
                int32_t s = c + d->off[k];
                if (s == d->goal) continue;
                slot_t sl = near_find(d, &h, cx + pf_dir_dx[k], cy + pf_dir_dy[k]);
                if (sl == NO_SLOT || rhs_at(d, sl) != cu * d->unit[k] + gold) continue;
                update_vertex(d, sl, s, g_at(d, sl), best_successor(d, s));
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

/* Follows argmin over successors s' of c(s, s') + g(s') from the agent to
 * the goal. Each step strictly lowers g (edge costs are >= 1), so the walk
 * ends; the bound on its length only guards against a broken invariant. */
SEARCH_CLONES static pf_status extract_path(pf_dstar *d, pf_result *out) {
    int32_t cur = d->start;
    size_t n = 0, limit = store_bound(d) + 1;
    double cost = 0.0;
    for (;;) {
        int32_t x = cell_x(d, cur), y = cell_y(d, cur);
        if (reserve_path(d, n + 1)) return PF_ENOMEM;
        d->path[n].x = x;
        d->path[n].y = y;
        n++;
        if (cur == d->goal) break;
        if (n > limit) return PF_EINVAL;
        uint8_t m = eff_moves(d, cur);
        near h = near_of(d, x, y);
        dist best = DIST_INF;
        double step = 0.0;
        int32_t next = -1;
        for (int k = 0; k < d->conn; k++) {
            if (!(m & (1u << k))) continue;
            int32_t s = cur + d->off[k];
            slot_t sl = near_find(d, &h, x + pf_dir_dx[k], y + pf_dir_dy[k]);
            dist gs = sl == NO_SLOT ? DIST_INF : g_at(d, sl);
            if (gs == DIST_INF) continue;
            dist c = (dist)eff_cost(d, s) * d->unit[k];
            if (c + gs < best) {
                best = c + gs;
                step = (double)eff_cost(d, s) * pf__dir_len(k);
                next = s;
            }
        }
        if (next < 0) return PF_EINVAL;
        cost += step;
        cur = next;
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

/* pf_dstar_plan (dstar.h): plans or repairs and fills out. Returns what it
 * sets out->status to: PF_OK (out->path borrowed from the session until its
 * next call), PF_NO_PATH, PF_EBLOCKED, PF_EBUDGET (the repair goes on at the
 * next plan), PF_ENOMEM (the state before the failing expansion is kept) or
 * PF_EINVAL (a broken invariant: the next plan searches anew). */
static pf_status plan(pf_dstar *d, uint64_t max_expanded, pf_result *out) {
    pf_status st;
    memset(out, 0, sizeof(*out));
    out->algorithm = PF_ALGO_DSTAR;
    d->expanded = d->generated = 0;
    if (eff_cost(d, d->start) == 0 || eff_cost(d, d->goal) == 0) return out->status = PF_EBLOCKED;
    if (d->start == d->goal) {
        if (reserve_path(d, 1)) return out->status = PF_ENOMEM;
        d->path[0].x = d->start % d->w;
        d->path[0].y = d->start / d->w;
        out->path = d->path;
        out->path_len = 1;
        return out->status = PF_OK;
    }
    if (!d->fresh) sync_start(d);
    /* Only when a search would run: a settled plan answers from g anyway,
     * and cut_off scans the overlay. */
    if (d->cuts && (d->fresh || !search_done(d)) && cut_off(d)) return out->status = PF_NO_PATH;
    if (d->fresh) {
        st = initialise(d);
        if (st) return out->status = st;
    }
    st = compute_shortest_path(d, max_expanded);
    out->expanded = d->expanded;
    out->generated = d->generated;
    if (st) return out->status = st;
    trim_slack(d);
    if (g_of(d, cell_x(d, d->start), cell_y(d, d->start)) == DIST_INF)
        return out->status = PF_NO_PATH;
    st = extract_path(d, out);
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
 * initialised (not d->fresh) and km in sync (sync_start). */
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
