/* planner.c -- a map version and the dispatch of queries to searches. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "build_stop.h"
#include "clock_internal.h"
#include "deadends.h"
#include "grid_internal.h"
#include "nearest.h"
#include "planner_internal.h"

/* The agent data of a new planner around g: empty, or repaired from the
 * previous version's (`old`, after the cells changed[0..n) changed). */
static pf_status planner_agents(pf_planner *p, const pf_agents *old, const pf_point *changed,
                                size_t n, pf_build_stop *stop) {
    pf_hpa_params hp = {p->opts.cluster_size};
    if (old) return pf_agents_repair(old, p->grid, changed, n, stop, &p->agents);
    return pf_agents_create(p->grid, PF_AGENT_SIZE_MAX, p->opts.build_hpa ? &hp : NULL, &p->agents);
}

/* Builds a planner around g (taken) with jps and hpa given or built: a
 * non-NULL `jps` (taken) and `hpa` are g's. Landmarks: `lm` (taken) when
 * `have_lm`, else built as the options say. The auto model: `autom`'s (an
 * older version's) when given, else measured. Agent data: repaired from
 * `agents` (old version's, borrowed) when not NULL, else empty. Every
 * build polls stop (build_stop.h): PF_ECANCELED, nothing kept, when it
 * said stop. The planner keeps no stop (its opts.stop is NULL). */
static pf_status planner_assemble(pf_grid *g, const pf_planner_opts *o, pf_jps *jps, pf_hpa *hpa,
                                  uint64_t hpa_us, bool have_lm, pf_landmarks *lm,
                                  const pf__auto_model *autom, const pf_planner *old,
                                  const pf_point *changed, size_t nchanged, pf_build_stop *stop,
                                  pf_planner **out) {
    const pf_agents *agents = old ? old->agents : NULL;
    pf_planner *p = calloc(1, sizeof(*p));
    pf_status st;
    *out = NULL;
    if (!p) {
        st = PF_ENOMEM;
        goto out_free_inputs;
    }
    p->grid = g;
    if (o) p->opts = *o;
    p->opts.stop = NULL;
    st = planner_agents(p, agents, changed, nchanged, stop);
    if (st) goto out_free_planner;
    if (jps) {
        p->jps = jps;
        jps = NULL;
    } else {
        pf_jps_params jp = {p->opts.jps_table_bytes, 0};
        st = pf_jps_create(g, &jp, stop, &p->jps);
        if (st) goto out_free_agents;
    }
    if (have_lm) {
        p->lm = lm;
        lm = NULL;
    } else if (p->opts.landmark_bytes &&
               (int64_t)pf_grid_width(g) * pf_grid_height(g) >= p->opts.landmark_min_cells &&
               (st = pf_landmarks_build(g, p->opts.landmark_bytes, stop, &p->lm)) != PF_OK) {
        p->lm = NULL; /* only a speed-up: without memory for it, jps uses octile */
        if (st == PF_ECANCELED) goto out_free_jps;
        st = PF_OK;
    }
    pf_jps_set_landmarks(p->jps, p->lm);
    if (hpa) {
        p->hpa = hpa;
        p->hpa_build_us = hpa_us;
    } else if (p->opts.build_hpa) {
        pf_hpa_params hp = {p->opts.cluster_size};
        uint64_t t0 = pf__mono_us();
        st = pf_hpa_build(g, &hp, stop, &p->hpa);
        if (st) goto out_free_jps;
        p->hpa_build_us = pf__mono_us() - t0;
    }
    /* Only a speed-up, as the landmarks: without memory for it the
     * abstract search reads the landmarks' own tables. */
    if (p->hpa && p->lm && pf_hpa_lm_build(p->hpa, p->lm, &p->hpa_lm) != PF_OK) p->hpa_lm = NULL;
    if ((st = pf__planner_subgoal(p, old, changed, nchanged, stop))) goto out_free_hpa;
    if (autom)
        p->autom = *autom;
    else if ((st = pf__auto_calibrate(p, stop)))
        goto out_free_subgoal;
    else
        pf__planner_subgoal_keep(p);
    *out = p;
    return PF_OK;

out_free_subgoal:
    pf_subgoal_ch_destroy(p->sgh);
    pf_subgoal_destroy(p->sg);
out_free_hpa:
    pf_hpa_lm_destroy(p->hpa_lm);
    pf_hpa_destroy(p->hpa);
out_free_jps:
    pf_landmarks_release(p->lm);
    pf_jps_destroy(p->jps);
out_free_agents:
    pf_agents_destroy(p->agents);
out_free_planner:
    free(p);
out_free_inputs:
    pf_jps_destroy(jps);
    pf_landmarks_release(lm);
    pf_hpa_destroy(hpa);
    pf_grid_destroy(g);
    return st;
}

pf_status pf_planner_create(pf_grid *g, const pf_planner_opts *o, pf_planner **out) {
    return planner_assemble(g, o, NULL, NULL, 0, false, NULL, NULL, NULL, NULL, 0,
                            o ? o->stop : NULL, out);
}

void pf_planner_destroy(pf_planner *p) {
    if (!p) return;
    pf_hpa_lm_destroy(p->hpa_lm);
    pf_hpa_destroy(p->hpa);
    pf_subgoal_ch_destroy(p->sgh);
    pf_subgoal_destroy(p->sg);
    pf_jps_destroy(p->jps);
    pf_landmarks_release(p->lm);
    pf_cuts_destroy(atomic_load(&p->cuts));
    pf_agents_destroy(p->agents);
    pf_grid_destroy(p->grid);
    free(p);
}

const pf_grid *pf_planner_grid(const pf_planner *p) { return p->grid; }
bool pf_planner_has_hpa(const pf_planner *p) { return p->hpa != NULL; }
const struct pf_hpa *pf_planner_hpa(const pf_planner *p) { return p->hpa; }
const struct pf_landmarks *pf_planner_landmarks(const pf_planner *p) { return p->lm; }

int pf_planner_landmark_count(const pf_planner *p) { return p->lm ? p->lm->k : 0; }

double pf_planner_dead_ends(const pf_planner *p) {
    return p->lm && p->lm->dead ? round(p->lm->dead->dead * 1000.0) / 1000.0 : 0.0;
}
uint64_t pf_planner_hpa_build_us(const pf_planner *p) { return p->hpa_build_us; }

const struct pf_cuts *pf_planner_cuts(const pf_planner *cp, pf_build_stop *stop) {
    /* The planner is shared read-only between threads; this one field is
     * filled once, atomically. Two threads may both build: one result is
     * kept, the other freed. The planner itself was never defined const. */
    pf_planner *p = (pf_planner *)cp;
    pf_cuts *k = atomic_load_explicit(&p->cuts, memory_order_acquire), *none = NULL;
    if (k) return k;
    if (pf_cuts_build(p->grid, stop, &k)) return NULL; /* only a speed-up */
    if (atomic_compare_exchange_strong_explicit(&p->cuts, &none, k, memory_order_acq_rel,
                                                memory_order_acquire))
        return k;
    pf_cuts_destroy(k);
    return none;
}

void pf_planner_tune_jps(pf_planner *p, pf_jps_layout layout, bool direct) {
    pf_jps_set_layout(p->jps, layout);
    pf_jps_set_direct(p->jps, direct);
}

void pf_planner_jps_stats(const pf_planner *p, pf_jps_stats *st) {
    pf_jps_get_stats(p->jps, p->grid, st);
}

size_t pf_planner_memory(const pf_planner *p) {
    const pf_cuts *k = atomic_load_explicit(&((pf_planner *)p)->cuts, memory_order_acquire);
    size_t n = sizeof(*p) + pf_grid_memory(p->grid) + pf_jps_memory(p->jps) +
               (p->lm ? pf_landmarks_memory(p->lm) : 0) + (k ? pf_cuts_memory(k) : 0) +
               pf_agents_memory(p->agents) + pf_subgoal_memory(p->sg) +
               pf_subgoal_ch_memory(p->sgh) + pf_hpa_lm_memory(p->hpa_lm);
    if (p->hpa) {
        pf_hpa_stats st;
        pf_hpa_get_stats(p->hpa, &st);
        n += st.memory_bytes;
    }
    return n;
}

const struct pf_agents *pf_planner_agents(const pf_planner *p) { return p->agents; }

pf_status pf_planner_agent_grid(const pf_planner *p, int32_t n, pf_build_stop *stop,
                                const pf_grid **out) {
    if (n < 1 || n > pf_agents_max_size(p->agents)) {
        *out = NULL;
        return PF_ELIMIT;
    }
    return pf_agents_grid(p->agents, n, stop, out);
}

bool pf_planner_agent_pending(const pf_planner *p, int32_t n, bool hpa) {
    if (n <= 1 || n > pf_agents_max_size(p->agents)) return false;
    return !pf_agents_built(p->agents, n, hpa && p->hpa != NULL);
}

static pf_status answer_status(pf_result *out, pf_algorithm a, pf_status st) {
    pf_result r = {0};
    r.status = st;
    r.algorithm = a;
    *out = r;
    return st;
}

/* jps and hpa have no partial form: when they do not reach the goal, an
 * astar with q's options answers. */
static bool needs_partial_rerun(const pf_grid *g, const pf_query *q, pf_status st) {
    if (!q->partial) return false;
    return st == PF_NO_PATH || st == PF_EBUDGET ||
           (st == PF_EBLOCKED && pf_grid_in_bounds(g, q->goal) && pf_grid_is_walkable(g, q->start));
}

/* After jps or hpa, which have no partial form and (jps's direct answer)
 * do not clear the whole result: the partial fields, or an astar rerun. */
static pf_status after_jps_hpa(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q,
                               pf_status st, pf_result *out);

static pf_status astar_partial(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q,
                               pf_result *out) {
    pf_query qa = *q;
    qa.algorithm = PF_ALGO_ASTAR;
    qa.agent_size = 1;
    return pf_search(ctx, g, &qa, out);
}

static pf_status after_jps_hpa(pf_search_ctx *ctx, const pf_grid *g, const pf_query *q,
                               pf_status st, pf_result *out) {
    if (out->algorithm != PF_ALGO_ASTAR) { /* jps's astar fallback did answer partially */
        out->partial = false;
        out->partial_reason = PF_OK;
    }
    return needs_partial_rerun(g, q, st) ? astar_partial(ctx, g, q, out) : st;
}

pf_status pf_planner_search(pf_search_ctx *ctx, const pf_planner *p, const pf_query *q,
                            pf_result *out) {
    const pf_grid *g = p->grid;
    pf_query qa;
    pf_status st;

    if (q->algorithm == PF_ALGO_AUTO) {
        /* The heuristic is checked as astar checks it, whatever runs, so a
         * request is refused or served the same on every query. */
        if ((unsigned)q->heuristic >= PF_H_COUNT ||
            (q->heuristic != PF_H_DEFAULT &&
             !pf_heuristic_is_admissible(q->heuristic, pf_grid_connectivity(p->grid))))
            return answer_status(out, PF_ALGO_AUTO, PF_EINVAL);
        /* Agent sizes: the same choice, measured on the one-cell grid; jps
         * runs astar there (below), hpa that size's hierarchy. */
        qa = *q;
        qa.algorithm = pf_planner_auto_pick(p, q->start, q->goal);
        return pf_planner_search(ctx, p, &qa, out);
    }
    if (q->agent_size > 1) {
        const pf_hpa *h = NULL;
        /* The agent data this size needs is built on first use, within
         * the query's own stop callback (its deadline). */
        pf_build_stop bs = pf_build_stop_make(q->should_stop, q->stop_ud);
        if ((st = pf_planner_agent_grid(p, q->agent_size, &bs, &g)))
            return answer_status(out, q->algorithm, st);
        qa = *q;
        qa.agent_size = 1;
        switch (q->algorithm) {
        case PF_ALGO_JPS:
        case PF_ALGO_SUBGOAL:
            qa.algorithm = PF_ALGO_ASTAR; /* jumps and subgoals assume the one-cell rule */
            return pf_search(ctx, g, &qa, out);
        case PF_ALGO_HPA:
            if (!p->hpa) return answer_status(out, q->algorithm, PF_EUNSUPPORTED);
            if ((st = pf_agents_hpa(p->agents, q->agent_size, &bs, &h)))
                return answer_status(out, q->algorithm, st);
            st = pf_hpa_search(ctx, h, g, NULL, NULL, &qa, out);
            return after_jps_hpa(ctx, g, &qa, st, out);
        case PF_ALGO_DSTAR:
            return answer_status(out, q->algorithm, PF_EUNSUPPORTED);
        default:
            return pf_search(ctx, g, &qa, out);
        }
    }
    switch (q->algorithm) {
    case PF_ALGO_JPS:
        st = pf_jps_search(ctx, p->jps, g, q, out);
        return after_jps_hpa(ctx, g, q, st, out);
    case PF_ALGO_SUBGOAL:
        if (!p->sgh) return answer_status(out, q->algorithm, PF_EUNSUPPORTED);
        st = pf__planner_subgoal_search(ctx, p, q, out);
        return after_jps_hpa(ctx, g, q, st, out);
    case PF_ALGO_HPA:
        if (p->hpa) {
            st = pf_hpa_search(ctx, p->hpa, g, p->lm, p->hpa_lm, q, out);
            return after_jps_hpa(ctx, g, q, st, out);
        }
        /* fall through */
    case PF_ALGO_DSTAR:
        return answer_status(out, q->algorithm, PF_EUNSUPPORTED);
    default:
        return pf_search(ctx, g, q, out);
    }
}

pf_status pf_planner_search_nearest(pf_search_ctx *ctx, const pf_planner *p, const pf_query *q,
                                    const pf_point *goals, size_t n, pf_result *out,
                                    int32_t *which) {
    const pf_grid *g = p->grid;
    pf_query qa = *q;
    pf_status st;
    *which = -1;
    switch (q->algorithm) {
    case PF_ALGO_DIJKSTRA:
        break;
    case PF_ALGO_ASTAR:
    case PF_ALGO_JPS:
    case PF_ALGO_HPA:
    case PF_ALGO_SUBGOAL:
    case PF_ALGO_AUTO:
        qa.algorithm = PF_ALGO_ASTAR;
        break;
    default:
        return answer_status(out, q->algorithm, PF_EUNSUPPORTED);
    }
    if (q->agent_size > 1) {
        pf_build_stop bs = pf_build_stop_make(q->should_stop, q->stop_ud);
        if ((st = pf_planner_agent_grid(p, q->agent_size, &bs, &g)))
            return answer_status(out, qa.algorithm, st);
    }
    qa.agent_size = 1;
    return pf_search_nearest(ctx, g, &qa, goals, n, out, which);
}

/* Adds p to the changed list (duplicates are dropped at the end). */
static pf_status note_change(pf_point **list, size_t *n, size_t *cap, pf_point p) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        pf_point *l = realloc(*list, nc * sizeof(*l));
        if (!l) return PF_ENOMEM;
        *list = l;
        *cap = nc;
    }
    (*list)[(*n)++] = p;
    return PF_OK;
}

/* Notes every cell a switch of door d touches: its cells and both sides of
 * its edges. */
static pf_status note_door(const pf_grid *g, int32_t d, pf_point **list, size_t *n, size_t *cap) {
    size_t nc, ne;
    const pf_point *dc = pf_grid_door_cells(g, d, &nc);
    const pf_edge *de = pf_grid_door_edges(g, d, &ne);
    pf_status st = PF_OK;
    for (size_t k = 0; k < nc && !st; k++) st = note_change(list, n, cap, dc[k]);
    for (size_t k = 0; k < ne && !st; k++) {
        pf_point b = {de[k].a.x + pf_dir_dx[de[k].dir], de[k].a.y + pf_dir_dy[de[k].dir]};
        st = note_change(list, n, cap, de[k].a);
        if (!st) st = note_change(list, n, cap, b);
    }
    return st;
}

/* A door the list switched: its state at the end, and 1 + the index of its
 * last switch. */
typedef struct door_switch {
    int32_t door;
    bool open;
    size_t last;
} door_switch;

static int by_last(const void *a, const void *b) {
    size_t x = ((const door_switch *)a)->last, y = ((const door_switch *)b)->last;
    return x < y ? -1 : x > y;
}

static int by_cell(const void *a, const void *b) {
    const pf_point *p = a, *q = b;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return p->x < q->x ? -1 : p->x > q->x;
}

/* Whether cell c differs between grids a and b: its cost or one of its
 * four walls. */
static bool cell_differs(const pf_grid *a, const pf_grid *b, pf_point c) {
    if (pf_grid_cost(a, c) != pf_grid_cost(b, c)) return true;
    for (int dir = PF_DIR_E; dir <= PF_DIR_N; dir++)
        if (pf_grid_is_wall(a, c, dir) != pf_grid_is_wall(b, c, dir)) return true;
    return false;
}

/* The door changes coalesced. Applied one by one, a request switches its
 * door when it differs from the state it finds (one that finds it so
 * already does nothing), and a switch rewrites the door's cells and edges.
 * So the list leaves each door it switched at least once in its last
 * requested state, rewritten by its last switch: *out (free() it) gets
 * those doors, *n of them, in the order of their last switches, so that
 * where doors share cells the last switch still wins. */
static pf_status coalesce_doors(const pf_grid *g, const pf_door_change *doors, size_t ndoors,
                                door_switch **out, size_t *n) {
    size_t count = (size_t)pf_grid_door_count(g), k = 0;
    int8_t *state; /* per door: -1 not requested yet, else its state so far */
    size_t *last;  /* per door: 1 + the index of its last switch, 0 none */
    door_switch *sw;
    *out = NULL;
    *n = 0;
    if (ndoors == 0 || count == 0) return PF_OK;
    state = malloc(count);
    last = calloc(count, sizeof(*last));
    sw = malloc((ndoors < count ? ndoors : count) * sizeof(*sw));
    if (!state || !last || !sw) {
        free(state);
        free(last);
        free(sw);
        return PF_ENOMEM;
    }
    memset(state, -1, count);
    for (size_t i = 0; i < ndoors; i++) {
        int32_t d = doors[i].door;
        if (state[d] < 0) state[d] = pf_grid_door_is_open(g, d);
        if ((state[d] != 0) == doors[i].open) continue;
        state[d] = doors[i].open;
        last[d] = i + 1;
    }
    for (size_t d = 0; d < count; d++)
        if (last[d]) sw[k++] = (door_switch){(int32_t)d, state[d] != 0, last[d]};
    qsort(sw, k, sizeof(*sw), by_last);
    free(state);
    free(last);
    *out = sw;
    *n = k;
    return PF_OK;
}

pf_status pf_planner_apply(const pf_planner *p, const pf_cell_change *cells, size_t ncells,
                           const pf_door_change *doors, size_t ndoors, pf_build_stop *stop,
                           pf_planner **out, pf_point **changed_out, size_t *nchanged) {
    pf_grid *g;
    pf_point *changed = NULL;
    door_switch *sw = NULL;
    size_t n = 0, cap = 0, nsw = 0;
    pf_status st = PF_OK;

    *out = NULL;
    for (size_t i = 0; i < ncells; i++)
        if (!pf_grid_in_bounds(p->grid, cells[i].p)) return PF_ERANGE;
    for (size_t i = 0; i < ndoors; i++)
        if (doors[i].door < 0 || doors[i].door >= pf_grid_door_count(p->grid)) return PF_EINVAL;
    g = pf_grid_clone(p->grid);
    if (!g) return PF_ENOMEM;
    /* Cells in order: the last write to a cell wins. O(1) each. */
    for (size_t i = 0; i < ncells && !st; i++) {
        if (pf_grid_cost(g, cells[i].p) == cells[i].cost) continue;
        pf_grid_set_cost(g, cells[i].p, cells[i].cost);
        st = note_change(&changed, &n, &cap, cells[i].p);
    }
    /* Then the doors, each switched once however often the list toggles
     * it; a door that ends as it began is switched away and back (its
     * switches rewrote its cells over the cell changes above). */
    if (!st) st = coalesce_doors(g, doors, ndoors, &sw, &nsw);
    for (size_t i = 0; i < nsw && !st; i++) {
        if (pf_grid_door_is_open(g, sw[i].door) == sw[i].open)
            pf_grid_set_door(g, sw[i].door, !sw[i].open);
        pf_grid_set_door(g, sw[i].door, sw[i].open);
        st = note_door(g, sw[i].door, &changed, &n, &cap);
    }
    free(sw);
    if (!st && n > 0) {
        /* Each cell once, and only those that differ from p's grid now: a
         * change undone later in the same list changes nothing. */
        size_t k = 0;
        qsort(changed, n, sizeof(*changed), by_cell);
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && changed[i].x == changed[i - 1].x && changed[i].y == changed[i - 1].y)
                continue;
            if (cell_differs(p->grid, g, changed[i])) changed[k++] = changed[i];
        }
        n = k;
        if (n == 0) {
            free(changed);
            changed = NULL;
        }
    }
    if (st) goto out_free_grid;
    {
        /* Repair the hierarchy locally; the old one stays with p. */
        pf_hpa *hpa = NULL;
        uint64_t t0 = pf__mono_us(), us;
        if (p->hpa) {
            st = pf_hpa_repair(p->hpa, g, changed, n, stop, &hpa);
            if (st) goto out_free_grid;
        }
        us = pf__mono_us() - t0;
        /* Closed doors and blocked cells keep the landmarks' bound; a cell
         * opened beyond the all-open map, or a new cost, drops them (a new
         * upload builds them again). */
        pf_landmarks *keep = p->lm && pf_landmarks_valid_for(p->lm, g, changed, n) ? p->lm : NULL;
        pf_jps *jps = NULL;
        /* The JPS data: p's, copied and updated line by line (pf_jps_update),
         * unless the changed lines would cover the map, where a build is as
         * cheap; NULL (planner_assemble builds it) also when out of memory. */
        if ((uint64_t)n * 3 * ((uint64_t)pf_grid_width(g) + (uint64_t)pf_grid_height(g)) <
                (uint64_t)pf_grid_width(g) * (uint64_t)pf_grid_height(g) &&
            (jps = pf_jps_clone(p->jps)) && (st = pf_jps_update(jps, g, changed, n, stop))) {
            pf_jps_destroy(jps);
            jps = NULL;
            if (st == PF_ECANCELED) {
                pf_hpa_destroy(hpa);
                goto out_free_grid;
            }
            st = PF_OK;
        }
        if (keep) pf_landmarks_retain(keep);
        /* The old version's auto model: the map changed locally, and a
         * repair should not pay for a new measurement. */
        st = planner_assemble(g, &p->opts, jps, hpa, us, true, keep, &p->autom, p, changed, n, stop,
                              out);
        if (st) {
            free(changed);
            return st;
        }
    }
    if (changed_out) {
        *changed_out = changed;
        *nchanged = n;
    } else {
        free(changed);
    }
    return PF_OK;

out_free_grid:
    free(changed);
    pf_grid_destroy(g);
    return st;
}
