/* kind_grid_session.c -- D* Lite sessions on a grid (kind.h's session
 * operations; D* Lite: Koenig & Likhachev 2002, core/dstar.h).
 *
 * A session's state holds its D* Lite search on the version's grid (or its
 * agent grid), the agent's position and goal, and the changes sent to it
 * alone (cells, doors), which always win over the map's own state for this
 * session. A one-cell session keeps them in its search's overlay, the
 * effective map D* Lite plans on and reads back (pf_dstar_cost,
 * pf_dstar_is_wall): nothing else holds them. An n x n agent's search runs
 * on the agent grid, whose cells are squares of map cells, so its changes
 * are kept in map cells here (its "pins") and reach its search as the
 * anchors they touch (agent_refresh). A new map version is reached
 * incrementally with the version's change log, or by a fresh search with
 * the changes kept (session_rebase).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clearance.h"
#include "clock.h"
#include "config.h"
#include "course.h"
#include "dstar.h"
#include "kind_grid_internal.h"
#include "session.h"

/* Pins: the session's private changes, an open-addressing table keyed by
 * cell * 3 + kind (kind 0: the cell's cost; 1: the wall on its east side;
 * 2: the wall on its south side; west and north walls are stored as the
 * neighbour's east and south). Last write wins. */
typedef struct pin {
    int64_t key; /* -1 = empty */
    uint8_t val;
} pin;

typedef struct pins {
    pin *a;
    uint32_t cap, count; /* cap: 0 or a power of two */
} pins;

/* A grid session's state. */
typedef struct grid_session {
    const pf_mapver *mv; /* the version it is on (the session holds the reference) */
    pf_dstar *d; /* one cell: always; an agent's: NULL until its first plan, or to rebuild */
    pf_point pos, goal;
    int32_t agent_size; /* n x n agent (clearance.h); 1 = one cell */
    pins pins;          /* an agent's private changes in map cells (empty for one cell) */
    bool planned;       /* d has planned once (the next plan repairs it) */
    /* Replanning (core/replan.h, course.h): the policy and its state, the
     * route kept between replans (its cells are the search grid's: an
     * agent's anchors), and the goal of the last replan. route_gen counts
     * the kept route's changes; push_* are what the last full answer on a
     * stream sent: the stream, the route's generation and the cells ahead. */
    pf_replan rp;
    pf_course *course;
    uint64_t route_gen, push_stream, push_gen;
    size_t push_len;
    pf_point planned_goal;
} grid_session;

/* Pins */

static inline uint32_t pin_slot(int64_t key, uint32_t cap) {
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static bool pins_get(const pins *p, int64_t key, uint8_t *val) {
    if (!p->count) return false;
    for (uint32_t i = pin_slot(key, p->cap);; i = (i + 1) & (p->cap - 1)) {
        if (p->a[i].key == key) {
            *val = p->a[i].val;
            return true;
        }
        if (p->a[i].key < 0) return false;
    }
}

/* Room for n more entries without a rehash. */
static pf_status pins_reserve(pins *p, size_t n) {
    uint32_t cap = p->cap ? p->cap : 16;
    pin *a;
    if (p->cap && ((uint64_t)p->count + n) * 2 <= p->cap) return PF_OK;
    while (((uint64_t)p->count + n) * 2 > cap) {
        if (cap >= (1u << 30)) return PF_ENOMEM;
        cap *= 2;
    }
    a = malloc((size_t)cap * sizeof(*a));
    if (!a) return PF_ENOMEM;
    for (uint32_t i = 0; i < cap; i++) a[i].key = -1;
    for (uint32_t i = 0; i < p->cap; i++) {
        uint32_t j;
        if (p->a[i].key < 0) continue;
        for (j = pin_slot(p->a[i].key, cap); a[j].key >= 0; j = (j + 1) & (cap - 1)) {
        }
        a[j] = p->a[i];
    }
    free(p->a);
    p->a = a;
    p->cap = cap;
    return PF_OK;
}

/* Room must have been reserved. */
static void pins_put(pins *p, int64_t key, uint8_t val) {
    uint32_t i;
    for (i = pin_slot(key, p->cap); p->a[i].key >= 0; i = (i + 1) & (p->cap - 1))
        if (p->a[i].key == key) {
            p->a[i].val = val;
            return;
        }
    p->a[i].key = key;
    p->a[i].val = val;
    p->count++;
}

static void pins_free(pins *p) {
    free(p->a);
    memset(p, 0, sizeof(*p));
}

/* The pin key of a wall edge: (p, dir) as the east or south side of a cell. */
static int64_t wall_key(const pf_grid *g, pf_point p, int dir) {
    if (dir == PF_DIR_W) p.x -= 1, dir = PF_DIR_E;
    if (dir == PF_DIR_N) p.y -= 1, dir = PF_DIR_S;
    return ((int64_t)p.y * pf_grid_width(g) + p.x) * 3 + (dir == PF_DIR_E ? 1 : 2);
}

static int64_t cost_key(const pf_grid *g, pf_point p) {
    return ((int64_t)p.y * pf_grid_width(g) + p.x) * 3;
}

/* Agent sizes. A session of an n x n agent (n > 1) searches the map
 * version's agent grid of size n (clearance.h; built on first use, on the
 * worker: its search is made at the first plan, not here). Its private
 * changes are kept in map cells, as a one-cell session's, and reach the
 * search as overlay entries of the anchors they touch, each recomputed from
 * the map grid with the session's pins on top (agent_refresh). */

/* The session's view of map cell p: the pending changes of a request
 * being validated, then the pins, then the map. p is on the map. */
static uint8_t view_cost(const grid_session *s, const pins *pending, pf_point p) {
    const pf_grid *g = pf__grid_of(s->mv);
    int64_t k = cost_key(g, p);
    uint8_t v;
    if (pending && pins_get(pending, k, &v)) return v;
    if (pins_get(&s->pins, k, &v)) return v;
    return pf_grid_cost(g, p);
}

static bool view_wall(const grid_session *s, pf_point p, int dir) {
    const pf_grid *g = pf__grid_of(s->mv);
    uint8_t v;
    if (pins_get(&s->pins, wall_key(g, p, dir), &v)) return v != 0;
    return pf_grid_is_wall(g, p, dir);
}

/* Whether the agent fits with its top-left cell at a in the session's view
 * (every cell of its square on the map and walkable, no wall inside). */
static bool view_fits(const grid_session *s, const pins *pending, pf_point a, int32_t n) {
    const pf_grid *g = pf__grid_of(s->mv);
    if (a.x < 0 || a.y < 0 || a.x > pf_grid_width(g) - n || a.y > pf_grid_height(g) - n)
        return false;
    for (int32_t dy = 0; dy < n; dy++)
        for (int32_t dx = 0; dx < n; dx++) {
            pf_point c = {a.x + dx, a.y + dy};
            if (!view_cost(s, pending, c)) return false;
            if (dx + 1 < n && view_wall(s, c, PF_DIR_E)) return false;
            if (dy + 1 < n && view_wall(s, c, PF_DIR_S)) return false;
        }
    return true;
}

/* Recomputes the search's overlay for the anchors whose cost a change at
 * map cell c can alter: the dearest cell under the anchor's square, 0
 * where the agent does not fit. A square reads [a, a + n - 1], so those
 * are the anchors [c - n + 1, c]. An agent grid needs no walls (between
 * two anchors where the agent fits every orthogonal step is open,
 * clearance.h), so the overlay holds costs only and D* Lite derives every
 * move from them. */
static pf_status agent_refresh(grid_session *s, pf_point c) {
    const pf_grid *g = pf__grid_of(s->mv);
    const int32_t n = s->agent_size, w = pf_grid_width(g), h = pf_grid_height(g);
    pf_status st = PF_OK;
    for (int32_t y = c.y - n + 1; y <= c.y && !st; y++)
        for (int32_t x = c.x - n + 1; x <= c.x && !st; x++) {
            pf_point a = {x, y};
            uint8_t cost = 0;
            if (x < 0 || y < 0 || x >= w || y >= h) continue;
            if (view_fits(s, NULL, a, n))
                for (int32_t dy = 0; dy < n; dy++)
                    for (int32_t dx = 0; dx < n; dx++) {
                        uint8_t v = view_cost(s, NULL, (pf_point){x + dx, y + dy});
                        if (v > cost) cost = v;
                    }
            st = pf_dstar_set_cost(s->d, a, cost);
        }
    return st;
}

/* The map cells every pin is about (both cells of a wall pin). */
static pf_status refresh_pins(grid_session *s) {
    const pf_grid *g = pf__grid_of(s->mv);
    int32_t w = pf_grid_width(g);
    pf_status st = PF_OK;
    for (uint32_t i = 0; i < s->pins.cap && !st; i++) {
        int64_t k = s->pins.a[i].key, cell;
        pf_point p;
        if (k < 0) continue;
        cell = k / 3;
        p.x = (int32_t)(cell % w);
        p.y = (int32_t)(cell / w);
        st = agent_refresh(s, p);
        if (!st && k % 3) /* a wall pin: the cell east or south of p too */
            st = agent_refresh(s, (pf_point){p.x + (k % 3 == 1), p.y + (k % 3 == 2)});
    }
    return st;
}

/* Whether an n x n agent fits with its top-left cell at p on mv's grid:
 * PF_OK, PF_ERANGE (p off the map) or PF_EBLOCKED. O(n^2). */
static pf_status check_agent(const pf_mapver *mv, pf_point p, int32_t n) {
    const pf_grid *g = pf__grid_of(mv);
    if (!pf_grid_in_bounds(g, p)) return PF_ERANGE;
    if (p.x > pf_grid_width(g) - n || p.y > pf_grid_height(g) - n) return PF_EBLOCKED;
    for (int32_t dy = 0; dy < n; dy++)
        for (int32_t dx = 0; dx < n; dx++) {
            pf_point c = {p.x + dx, p.y + dy};
            if (!pf_grid_is_walkable(g, c)) return PF_EBLOCKED;
            if (dx + 1 < n && pf_grid_is_wall(g, c, PF_DIR_E)) return PF_EBLOCKED;
            if (dy + 1 < n && pf_grid_is_wall(g, c, PF_DIR_S)) return PF_EBLOCKED;
        }
    return PF_OK;
}

/* A state from start to goal for an n x n agent on mv: PF_EINVAL for a
 * size out of 1..PF_AGENT_SIZE_MAX, PF_ERANGE / PF_EBLOCKED where the agent
 * does not fit (pf_dstar_create's for one cell), PF_ENOMEM. */
static pf_status make(const pf_mapver *mv, pf_point start, pf_point goal, int32_t agent_size,
                      grid_session **out) {
    grid_session *s;
    pf_status st;
    *out = NULL;
    if (agent_size < 1 || agent_size > PF_AGENT_SIZE_MAX) return PF_EINVAL;
    s = calloc(1, sizeof(*s));
    if (!s) return PF_ENOMEM;
    if (!(s->course = pf_course_create())) {
        free(s);
        return PF_ENOMEM;
    }
    s->mv = mv;
    s->agent_size = agent_size;
    pf_session_policy(mv->env ? mv->env->d.cfg : NULL, NULL, NULL, &s->rp.policy);
    if (agent_size == 1)
        st = pf_dstar_create(pf__grid_of(mv), start, goal, &s->d);
    else if ((st = check_agent(mv, start, agent_size)) == PF_OK)
        st = check_agent(mv, goal, agent_size);
    if (st) {
        pf_course_destroy(s->course);
        free(s);
        return st;
    }
    s->pos = start;
    s->goal = goal;
    *out = s;
    return PF_OK;
}

pf_status pf_grid_sessions_add_sized(pf_sessions *t, pf_mapver *mv, pf_point start, pf_point goal,
                                     int32_t agent_size, int64_t ttl_s, uint64_t now_ns,
                                     pf_session **out, bool *total) {
    grid_session *s;
    pf_status st = make(mv, start, goal, agent_size, &s);
    *out = NULL;
    *total = false;
    if (st) return st;
    return pf_sessions_insert(t, mv, s, ttl_s, now_ns, out, total);
}

pf_status pf_grid_sessions_add(pf_sessions *t, pf_mapver *mv, pf_point start, pf_point goal,
                               int64_t ttl_s, uint64_t now_ns, pf_session **out, bool *total) {
    return pf_grid_sessions_add_sized(t, mv, start, goal, 1, ttl_s, now_ns, out, total);
}

/* The table's operations */

pf_status pf__grid_session_create(const pf_mapver *mv, const pf_session_request *q,
                                  const char *prefix, void **state, size_t *reserve,
                                  pf_proto_error *e) {
    const pf_grid *g = pf__grid_of(mv);
    const pf_config *cfg = mv->env ? mv->env->d.cfg : NULL;
    grid_session *s;
    char f[48];
    pf_status st;
    *state = NULL;
    *reserve = 0;
    if (q->start.dims != 2)
        return pf_proto_error_set(
            e, PF_EPARSE, PF_ERR_INVALID_REQUEST, (snprintf(f, sizeof(f), "%sstart", prefix), f),
            "Map '%s' is a grid: 'start' and 'goal' are points [x, y].", mv->id);
    if (q->has_agent_type)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE,
                                  (snprintf(f, sizeof(f), "%sagent_type", prefix), f),
                                  "Field '%s' is for navmesh sessions (a grid session's agent is "
                                  "agent_size).",
                                  f);
    if (cfg && q->agent_size > cfg->max_agent_size)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE,
                                  (snprintf(f, sizeof(f), "%sagent_size", prefix), f),
                                  "Field 'agent_size' must be between 1 and %lld (this server's "
                                  "max_agent_size).",
                                  (long long)cfg->max_agent_size);
    /* Both ends on the map and walkable, and where the agent fits. */
    for (int k = 0; k < 2; k++) {
        pf_point p = pf_place_point(k ? &q->goal : &q->start);
        snprintf(f, sizeof(f), "%s%s", prefix, k ? "goal" : "start");
        if (pf_grid_is_walkable(g, p)) continue;
        if (!pf_grid_in_bounds(g, p))
            return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                      "%s (%d,%d) is outside the %dx%d map.", f, (int)p.x, (int)p.y,
                                      (int)pf_grid_width(g), (int)pf_grid_height(g));
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                  "%s (%d,%d) is a blocked cell.", f, (int)p.x, (int)p.y);
    }
    for (int k = 0; k < 2 && q->agent_size > 1; k++) {
        pf_point p = pf_place_point(k ? &q->goal : &q->start);
        if (!check_agent(mv, p, q->agent_size)) continue;
        snprintf(f, sizeof(f), "%s%s", prefix, k ? "goal" : "start");
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                  "%s (%d,%d): an agent of size %d does not fit there.",
                                  k ? "goal" : "start", (int)p.x, (int)p.y, (int)q->agent_size);
    }
    if ((st = make(mv, pf_place_point(&q->start), pf_place_point(&q->goal), q->agent_size, &s)))
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                                  "The session cannot be made: %s.", pf_status_str(st));
    pf_session_policy(cfg, NULL, &q->replan, &s->rp.policy);
    /* Room for a search over the whole map, and the agent's grid when its
     * size is new on the map. */
    *reserve = pf_mem_session_estimate((uint64_t)pf_grid_width(g) * (uint64_t)pf_grid_height(g)) +
               pf__grid_agent_need(mv, q->agent_size, false);
    *state = s;
    return PF_OK;
}

/* Its first plan builds a new agent size's grid: a build's work. */
bool pf__grid_session_builds(const pf_mapver *mv, const void *state) {
    const grid_session *s = state;
    return !s->d && pf_planner_agent_pending(pf_grid_planner(mv), s->agent_size, false);
}

void pf__grid_session_free(void *state) {
    grid_session *s = state;
    if (!s) return;
    pf_dstar_destroy(s->d);
    pf_course_destroy(s->course);
    pins_free(&s->pins);
    free(s);
}

size_t pf__grid_session_memory(const void *state) {
    const grid_session *s = state;
    return sizeof(*s) + (size_t)s->pins.cap * sizeof(pin) + (s->d ? pf_dstar_memory(s->d) : 0) +
           pf_course_memory(s->course);
}

void pf__grid_session_where(const void *state, pf_place *position, pf_place *goal) {
    const grid_session *s = state;
    *position = pf_place_cell(s->pos);
    *goal = pf_place_cell(s->goal);
}

static const pf_grid *grid_of(const grid_session *s) { return pf__grid_of(s->mv); }

/* The grid the session's search runs on in version mv: the map's, or its
 * agent grid (NULL when that cannot be built: out of memory). */
static const pf_grid *search_grid(const grid_session *s, const pf_mapver *mv) {
    const pf_grid *g = NULL;
    if (s->agent_size <= 1) return pf__grid_of(mv);
    return pf_planner_agent_grid(pf_grid_planner(mv), s->agent_size, NULL, &g) == PF_OK ? g : NULL;
}

/* The agent-grid cells a change at the map cells cells[0..n) can alter,
 * for an agent session's rebase, which wants every cell whose cost
 * differs (an agent grid has no walls): the anchors [c - n + 1, c] of
 * agent_refresh (duplicates are harmless to pf_dstar_rebase). NULL on
 * ENOMEM. */
static pf_point *agent_changes(const grid_session *s, const pf_point *cells, size_t n,
                               size_t *out_n) {
    const pf_grid *g = grid_of(s);
    const int32_t a = s->agent_size, side = a;
    pf_point *out = malloc((n ? n : 1) * (size_t)side * (size_t)side * sizeof(*out));
    size_t k = 0;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++)
        for (int32_t y = cells[i].y - a + 1; y <= cells[i].y; y++)
            for (int32_t x = cells[i].x - a + 1; x <= cells[i].x; x++)
                if (pf_grid_in_bounds(g, (pf_point){x, y})) out[k++] = (pf_point){x, y};
    *out_n = k;
    return out;
}

/* The map moved on to version `to` of the same lineage: the search is
 * rebased onto its grid with the cells every PATCH in between changed
 * (the version's change log, registry.h), or, when it is further behind
 * than the log reaches, rebuilt at its next plan: a fresh search from its
 * position to its goal with its pins replayed. */
const char *pf__grid_session_rebase(void *st, const pf_mapver *from, const pf_mapver *to) {
    grid_session *s = st;
    pf_point *cells = NULL;
    size_t n = 0;
    pf_status rc;
    rc = s->d ? pf_mapver_changes_since(to, from->version, &cells, &n) : PF_ELIMIT;
    if (rc == PF_OK && s->agent_size > 1) {
        /* Map cells to the anchors they reach on the agent grid. */
        pf_point *anchors = agent_changes(s, cells, n, &n);
        free(cells);
        cells = anchors;
        rc = cells ? PF_OK : PF_ENOMEM;
    }
    if (rc == PF_OK) {
        const pf_grid *g = search_grid(s, to);
        /* PF_ENOMEM still switches the search to the new grid (it starts
         * anew at its next plan), so the old version may go either way. */
        rc = g ? pf_dstar_rebase(s->d, g, cells, n) : PF_ELIMIT;
        free(cells);
        if (rc == PF_OK || rc == PF_ENOMEM) {
            s->mv = to;
            /* An agent's pins were worked out against the old map: again,
             * against the new one (their overlay wins over any base). */
            if (rc == PF_OK && s->agent_size > 1 && refresh_pins(s)) {
                pf_dstar_destroy(s->d);
                s->d = NULL;
            }
            return "incremental";
        }
    }
    /* Too far behind the change log (or a session to rebuild anyway): a
     * fresh search on the current version at the next plan; a one-cell
     * session's keeps its overlay (its private changes). */
    s->mv = to;
    s->planned = false; /* its next plan is a fresh one */
    if (s->agent_size == 1) {
        pf_dstar_rebase_all(s->d, search_grid(s, to));
    } else {
        pf_dstar_destroy(s->d);
        s->d = NULL;
    }
    return "rebuilt";
}

/* A one-cell session's view of cell p: the pending changes of the
 * request being validated (a small open-addressing table like the pins,
 * keyed by cell), then the effective map of its D* Lite search (the map
 * with the session's changes on top, which that search keeps). */
static uint8_t effective_cost(const grid_session *s, const pins *pending, pf_point p) {
    uint8_t v;
    if (pins_get(pending, cost_key(grid_of(s), p), &v)) return v;
    return pf_dstar_cost(s->d, p);
}

static pf_status check_point(const grid_session *s, const pins *pending, pf_point p,
                             const char *field, pf_proto_error *e) {
    const pf_grid *g = grid_of(s);
    if (!pf_grid_in_bounds(g, p))
        return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, field,
                                  "%s (%d,%d) is outside the %dx%d map.", field, (int)p.x, (int)p.y,
                                  (int)pf_grid_width(g), (int)pf_grid_height(g));
    if (s->agent_size > 1) {
        if (!view_fits(s, pending, p, s->agent_size))
            return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, field,
                                      "%s (%d,%d): an agent of size %d does not fit there in this "
                                      "session's view.",
                                      field, (int)p.x, (int)p.y, (int)s->agent_size);
        return PF_OK;
    }
    if (effective_cost(s, pending, p) == 0)
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, field,
                                  "%s (%d,%d) is a blocked cell in this session's view.", field,
                                  (int)p.x, (int)p.y);
    return PF_OK;
}

static pf_status validate(const grid_session *s, const pf_update_list *l, pf_proto_error *e) {
    const pf_grid *g = grid_of(s);
    pins pending = {0};
    char pbuf[40], f[160];
    pf_status st = PF_OK;

    for (size_t i = 0; i < l->n && !st; i++) {
        const pf_update *u = &l->items[i];
        const char *prefix = pf_update_prefix(l, i, pbuf, sizeof(pbuf));
        if ((st = pins_reserve(&pending, u->ncells))) break;
        for (size_t k = 0; k < u->ncells && !st; k++) {
            pf_point p = u->cells[k].p;
            if (!pf_grid_in_bounds(g, p)) {
                snprintf(f, sizeof(f), "%scells[%zu]", prefix, k);
                st = pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                        "%s (%d,%d) is outside the %dx%d map.", f, (int)p.x,
                                        (int)p.y, (int)pf_grid_width(g), (int)pf_grid_height(g));
                break;
            }
            pins_put(&pending, cost_key(g, p), u->cells[k].cost);
        }
        for (size_t k = 0; k < u->ndoors && !st; k++) {
            int32_t door = pf_grid_door_find(g, u->doors[k].id);
            size_t nc;
            const pf_point *dc;
            if (door < 0) {
                snprintf(f, sizeof(f), "%sdoors[%zu].id", prefix, k);
                st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                        "Map '%s' has no door '%s'.", s->mv->id, u->doors[k].id);
                break;
            }
            dc = pf_grid_door_cells(g, door, &nc);
            if ((st = pins_reserve(&pending, nc))) break;
            for (size_t c = 0; c < nc; c++)
                pins_put(&pending, cost_key(g, dc[c]),
                         u->doors[k].open ? pf_grid_door_open_cost(g, door, c) : 0);
        }
        for (int k = 0; k < 2 && !st; k++)
            if ((k ? u->has_goal && u->goal.dims != 2 : u->has_position && u->position.dims != 2)) {
                snprintf(f, sizeof(f), "%s%s", prefix, k ? "goal" : "position");
                st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                        "Field '%s' must be a point [x, y] of two integers: map "
                                        "'%s' is a grid.",
                                        f, s->mv->id);
            }
        if (!st && u->has_goal) {
            snprintf(f, sizeof(f), "%sgoal", prefix);
            st = check_point(s, &pending, pf_place_point(&u->goal), f, e);
        }
        if (!st && u->has_position) {
            snprintf(f, sizeof(f), "%sposition", prefix);
            st = check_point(s, &pending, pf_place_point(&u->position), f, e);
        }
    }
    if (st == PF_ENOMEM) pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    pins_free(&pending);
    return st;
}

/* Sets one private cell cost: in the search's overlay (a one-cell
 * session), or in the pins and the search's anchors around it (an agent's
 * search, whose overlay is on the agent grid). */
static pf_status set_cost(grid_session *s, pf_point p, uint8_t cost) {
    pf_status st;
    if (s->agent_size == 1) return pf_dstar_set_cost(s->d, p, cost);
    if ((st = pins_reserve(&s->pins, 1))) return st;
    pins_put(&s->pins, cost_key(grid_of(s), p), cost);
    return s->d ? agent_refresh(s, p) : PF_OK;
}

static pf_status set_wall(grid_session *s, pf_point p, int dir, bool blocked) {
    pf_point q = {p.x + pf_dir_dx[dir], p.y + pf_dir_dy[dir]};
    pf_status st;
    if (s->agent_size == 1) return pf_dstar_set_wall(s->d, p, dir, blocked);
    if ((st = pins_reserve(&s->pins, 1))) return st;
    pins_put(&s->pins, wall_key(grid_of(s), p, dir), blocked);
    if (s->d && !(st = agent_refresh(s, p))) st = agent_refresh(s, q);
    return st;
}

static pf_status apply(grid_session *s, const pf_update_list *l) {
    const pf_grid *g = grid_of(s);
    pf_status st = PF_OK;
    for (size_t i = 0; i < l->n && !st; i++) {
        const pf_update *u = &l->items[i];
        for (size_t k = 0; k < u->ncells && !st; k++)
            st = set_cost(s, u->cells[k].p, u->cells[k].cost);
        for (size_t k = 0; k < u->ndoors && !st; k++) {
            int32_t door = pf_grid_door_find(g, u->doors[k].id);
            bool open = u->doors[k].open;
            size_t nc, ne;
            const pf_point *dc = pf_grid_door_cells(g, door, &nc);
            const pf_edge *de = pf_grid_door_edges(g, door, &ne);
            for (size_t c = 0; c < nc && !st; c++)
                st = set_cost(s, dc[c], open ? pf_grid_door_open_cost(g, door, c) : 0);
            for (size_t c = 0; c < ne && !st; c++) st = set_wall(s, de[c].a, de[c].dir, !open);
        }
        if (!st && u->has_goal) {
            pf_point p = pf_place_point(&u->goal);
            if (s->d) st = pf_dstar_set_goal(s->d, p);
            if (!st) s->goal = p;
        }
        if (!st && u->has_position) {
            pf_point p = pf_place_point(&u->position);
            if (s->d) st = pf_dstar_move(s->d, p);
            if (!st) s->pos = p;
        }
        if (!st)
            pf_session_policy(s->mv->env ? s->mv->env->d.cfg : NULL, &s->rp.policy, &u->replan,
                              &s->rp.policy);
    }
    if (st) {
        /* Out of memory half way: keep what was applied (the overlay or
         * the pins, position and goal say what) and search anew from it
         * next time. */
        s->planned = false; /* its next plan is a fresh one */
        if (s->agent_size == 1) {
            pf_dstar_restart(s->d);
        } else {
            pf_dstar_destroy(s->d);
            s->d = NULL;
        }
        st = PF_ENOMEM;
    }
    return st;
}

/* An agent's fresh search on the current version's agent grid, its pins
 * worked into its anchors. (A one-cell session keeps its search: it
 * restarts it instead, its overlay in place.) */
static pf_status rebuild(grid_session *s) {
    const pf_grid *sg = search_grid(s, s->mv);
    pf_status st;
    if (!sg) return PF_ENOMEM;
    if ((st = pf_dstar_create(sg, s->pos, s->goal, &s->d))) return st;
    if ((st = refresh_pins(s))) {
        pf_dstar_destroy(s->d);
        s->d = NULL;
    }
    return st;
}

/* A D* Lite plan within the run's limits (kind.h): its expansion budget,
 * and its deadline through the clock callback core polls (plan_limits.h).
 * A plan they stop keeps its state and goes on at the next run. */
static pf_status plan(grid_session *s, const pf_kind_session_run *run, pf_result *out) {
    uint64_t deadline = run->deadline_ns;
    const pf_plan_limits lim = {run->max_expanded, deadline ? pf_clock_deadline_passed : NULL,
                                &deadline, 0};
    pf_status st;
    memset(out, 0, sizeof(*out));
    out->algorithm = PF_ALGO_DSTAR;
    if (!s->d && (st = rebuild(s))) {
        /* pf_dstar_create checks the endpoints on the base grid: the agent
         * or the goal stands on a cell the map blocks now. */
        out->status = st == PF_ENOMEM ? PF_ENOMEM : PF_EBLOCKED;
        return out->status;
    }
    /* s->d plans on s->mv's grid (pf_session_sync moves both together).
     * The cut vertices are the map grid's: an agent's search goes without
     * them (it only costs a cut-off repair more). */
    pf_dstar_set_cuts(s->d,
                      s->agent_size > 1 ? NULL : pf_planner_cuts(pf_grid_planner(s->mv), NULL));
    st = pf_dstar_plan_with(s->d, &lim, out);
    if (st == PF_EINVAL) st = pf_dstar_plan_with(s->d, &lim, out); /* it searches anew */
    if (st == PF_EINVAL) st = out->status = PF_NO_PATH;
    return st;
}

/* Whether the updates of l change the session's map (cells, doors). */
static bool changes_map(const pf_update_list *l) {
    for (size_t i = 0; l && i < l->n; i++)
        if (l->items[i].ncells || l->items[i].ndoors) return true;
    return false;
}

/* The policy's decision for this request (replan.h): what the kept route
 * says of the agent now, the goal, whether the map changed. */
static pf_replan_reason decide(grid_session *s, bool map_changed) {
    pf_replan_input in;
    size_t n = 0;
    memset(&in, 0, sizeof(in));
    in.now_ms = pf_clock_now_ns() / 1000000u;
    in.goal[0] = s->goal.x;
    in.goal[1] = s->goal.y;
    in.map_changed = map_changed;
    /* A session to rebuild (no search, or its next plan a fresh one) has
     * no route to follow. */
    if (s->d && s->planned) pf_course_ahead(s->course, &n);
    in.has_route = n > 0;
    if (in.has_route) {
        pf_course_view v = pf_course_view_dstar(s->d);
        const pf_point *ahead;
        in.off_route = !pf_course_locate(s->course, s->pos);
        in.blocked = !in.off_route && pf_course_blocked(s->course, &v);
        ahead = pf_course_ahead(s->course, &n);
        in.at_end = !in.off_route && n == 1 && (ahead[0].x != s->goal.x || ahead[0].y != s->goal.y);
    }
    return pf_replan_decide(&s->rp, &in);
}

/* A replan: the search repairs (D* Lite: incrementally, a goal move
 * included), and the kept route adopts its path with the policy's
 * hysteresis. *ra says what became of the route. */
static pf_status replan(grid_session *s, const pf_kind_session_run *run, pf_metrics_plan kind,
                        pf_result *res, pf_replan_answer *ra) {
    pf_metrics *m = run->metrics;
    bool goal_moved =
        s->planned && (s->goal.x != s->planned_goal.x || s->goal.y != s->planned_goal.y);
    uint64_t t1 = pf_clock_now_ns();
    pf_course_adoption ad;
    pf_status st = plan(s, run, res);
    s->planned = s->d != NULL;
    pf_metrics_count_plan(m, kind, st, res->expanded, (pf_clock_now_ns() - t1) / 1000);
    if (st == PF_ENOMEM) return st;
    if (goal_moved && s->d) {
        pf_dstar_plan_info info;
        pf_dstar_last_plan(s->d, &info);
        pf_metrics_count_goal_move(m, !info.anew);
    }
    ra->replanned = true;
    if (st != PF_OK) {
        /* No route: the next request plans again (its reason "initial"). */
        pf_course_clear(s->course);
        s->route_gen++;
        ra->route = "lost";
        if (st == PF_NO_PATH) {
            double g[3] = {s->goal.x, s->goal.y, 0};
            pf_replan_done(&s->rp, pf_clock_now_ns() / 1000000u, g);
            s->planned_goal = s->goal;
        }
        return st;
    }
    pf_course_view v = pf_course_view_dstar(s->d);
    pf_course_locate(s->course, s->pos);
    if (pf_course_adopt(s->course, res->path, res->path_len, s->rp.policy.hysteresis, &v, &ad))
        return PF_ENOMEM;
    if (ad.changed) s->route_gen++;
    if (ad.flip) pf_metrics_count_route_flip(m);
    ra->route = pf_course_outcome_name(ad.outcome);
    ra->flip = ad.flip;
    {
        double g[3] = {s->goal.x, s->goal.y, 0};
        pf_replan_done(&s->rp, pf_clock_now_ns() / 1000000u, g);
    }
    s->planned_goal = s->goal;
    return PF_OK;
}

/* The session job's part for a grid session (synced): validate and apply
 * the updates, decide with the policy whether to replan (replan.h), replan
 * or follow the kept route, count, answer: in full, or short on a stream
 * whose last full answer still holds (run->stream). */
pf_error pf__grid_session_run(const pf_kind_session_run *run, void *state, const pf_update_list *l,
                              pf_jsonw *w) {
    grid_session *s = state;
    pf_metrics *m = run->metrics;
    const char *how = run->rebase;
    pf_proto_error e;
    pf_session_answer a;
    pf_replan_answer ra;
    pf_result res;
    pf_replan_reason why;
    pf_metrics_plan kind;
    const pf_point *ahead = NULL;
    size_t n = 0;
    double cost = 0;
    pf_status st;

    if (l) {
        if (validate(s, l, &e)) {
            pf_proto_write_perror(w, &e);
            return e.code;
        }
        if (apply(s, l)) {
            pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
            return PF_ERR_NO_MEMORY;
        }
    }
    if (strcmp(how, "none") != 0) pf_metrics_count_rebase(m, strcmp(how, "incremental") == 0);
    kind = !s->d || !s->planned                          ? PF_PLAN_INITIAL
           : (l && l->n > 0) || strcmp(how, "none") != 0 ? PF_PLAN_REPAIR
                                                         : PF_PLAN_UNCHANGED;
    why = decide(s, changes_map(l) || strcmp(how, "none") != 0);
    pf_metrics_count_replan(m, why);
    memset(&ra, 0, sizeof(ra));
    memset(&res, 0, sizeof(res));
    ra.reason = pf_replan_reason_name(why);
    ra.route = "none";
    if (pf_replan_reason_replans(why)) {
        st = replan(s, run, kind, &res, &ra);
        if (st == PF_ENOMEM) {
            pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
            return PF_ERR_NO_MEMORY;
        }
    } else {
        st = PF_OK; /* the kept route is followed: no search */
    }
    ra.policy = s->rp.policy;
    if (st == PF_OK) {
        pf_course_view v = pf_course_view_dstar(s->d);
        ahead = pf_course_ahead(s->course, &n);
        /* The search's own cost when its path is the route, else the
         * route's on the effective map. */
        cost =
            ra.replanned && strcmp(ra.route, "kept") != 0 ? res.cost : pf_course_cost(&v, ahead, n);
    }
    if (run->stream && run->stream == s->push_stream && st == PF_OK &&
        s->route_gen == s->push_gen && n <= s->push_len) {
        /* The route ahead is what this stream was last sent, from the
         * agent on: the short answer. */
        pf_session_short sa;
        memset(&sa, 0, sizeof(sa));
        sa.session_id = run->session_id;
        sa.map_id = run->map_id;
        sa.found = true;
        sa.cost = cost;
        sa.position = pf_place_cell(s->pos);
        sa.goal = pf_place_cell(s->goal);
        sa.map_version = run->mv->version;
        sa.ttl_s = run->ttl_s;
        sa.replan = &ra;
        sa.time_us = (pf_clock_now_ns() - run->t0_ns) / 1000;
        sa.updates = l ? l->n : 0;
        sa.rebase = how;
        sa.memory_bytes = run->record_bytes + pf__grid_session_memory(s);
        pf_session_write_short(w, &sa);
        pf_metrics_count_stream_answer(m, true);
        return PF_ERR_NONE;
    }
    if (run->stream) {
        s->push_stream = run->stream;
        s->push_gen = s->route_gen;
        s->push_len = st == PF_OK ? n : 0;
        pf_metrics_count_stream_answer(m, false);
    }
    memset(&a, 0, sizeof(a));
    a.session_id = run->session_id;
    a.map_id = run->map_id;
    a.status = st;
    a.cost = cost;
    a.path = ahead;
    a.path_len = n;
    a.position = s->pos;
    a.goal = s->goal;
    a.map_version = run->mv->version;
    a.ttl_s = run->ttl_s;
    a.expanded = res.expanded;
    a.time_us = (pf_clock_now_ns() - run->t0_ns) / 1000;
    a.updates = l ? l->n : 0;
    a.rebase = how;
    a.memory_bytes = run->record_bytes + pf__grid_session_memory(s);
    a.agent_size = s->agent_size;
    a.replan = &ra;
    pf_session_write_answer(w, &a);
    return PF_ERR_NONE;
}

/* What tests reach of a grid session (kind_grid.h). */

pf_status pf_grid_session_validate(const pf_session *s, const pf_update_list *l,
                                   pf_proto_error *e) {
    return validate(pf_session_state(s), l, e);
}

pf_status pf_grid_session_apply(pf_session *s, const pf_update_list *l) {
    return apply(pf_session_state(s), l);
}

pf_status pf_grid_session_plan(pf_session *s, pf_result *out) {
    grid_session *g = pf_session_state(s);
    pf_kind_session_run run; /* no limits */
    memset(&run, 0, sizeof(run));
    g->mv = pf_session_mapver(s);
    return plan(g, &run, out);
}

pf_point pf_grid_session_position(const pf_session *s) {
    return ((const grid_session *)pf_session_state(s))->pos;
}

pf_point pf_grid_session_goal(const pf_session *s) {
    return ((const grid_session *)pf_session_state(s))->goal;
}

int32_t pf_grid_session_agent_size(const pf_session *s) {
    return ((const grid_session *)pf_session_state(s))->agent_size;
}
