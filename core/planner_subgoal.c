/* planner_subgoal.c -- a planner's subgoal graph and its contraction
 * hierarchy (subgoal.h): which maps get one, how a PATCHed version gets
 * its own, and the `subgoal` search.
 *
 * Where it pays: on mazes with corridors 2 cells wide or more and on room
 * maps the hierarchy answers in about 0.5-0.7x jps's time (docs/grids.md),
 * where GPPC's SGCH-JPD was faster than jps. On open, random and game maps
 * the subgoal graph is dense (more than SUBGOAL_MAX_DEGREE edges a
 * subgoal: den520d 7, Berlin_1_1024 17, random512-10-0 4), its contraction
 * takes seconds to minutes, and jps is faster there anyway. So a planner
 * builds the graph, keeps it only when it is sparse, and contracts it
 * within opts.subgoal_work_per_cell units of work per cell of the map
 * (pf_subgoal_ch_build's max_work); what is left uncontracted at the
 * bound is the hierarchy's core, searched by A* with the map's landmarks
 * (rooms8 leaves about a fifth of its subgoals there at the default,
 * docs/grids.md). The bound is counted work, not time, so a map gets the
 * same hierarchy on every machine.
 *
 * auto then times it beside jps (planner_auto.c), and where no distance
 * bin picks it (jps was as fast everywhere: 1-wide mazes, small rooms) it
 * is dropped too, so no memory and no PATCH pays for it. A map built
 * without auto's measurement (pf_planner_opts.auto_samples -1) keeps it.
 *
 * A PATCHed version repairs the graph locally (pf_subgoal_repair, 1-2.5 ms
 * on a 512x512 map) and contracts the repaired graph again in the old
 * hierarchy's order (pf_subgoal_ch_rebuild: no priorities, a quarter to
 * two fifths of the work) under the same bound, so a one-cell PATCH costs
 * 3-9 ms on mazes and 75 ms on 8room_000 (docs/grids.md), against about 1 ms
 * without. A version whose upload had no hierarchy does not try again.
 */
#include <stdlib.h>

#include "clock_internal.h"
#include "grid_internal.h"
#include "planner_internal.h"
#include "search_internal.h"

/* Edges a subgoal above which the graph is left uncontracted. */
#define SUBGOAL_MAX_DEGREE 3.0

pf_status pf__planner_subgoal(pf_planner *p, const pf_planner *old, const pf_point *changed,
                              size_t n, pf_build_stop *stop) {
    const pf_grid *g = p->grid;
    const uint64_t cells = (uint64_t)g->w * (uint64_t)g->h, t0 = pf__mono_us();
    pf_subgoal *sg = NULL;
    pf_subgoal_ch *h = NULL;
    pf_status st;
    p->sg = NULL;
    p->sgh = NULL;
    if (p->opts.subgoal_work_per_cell <= 0 || (int64_t)cells < PF_PLANNER_AUTO_MIN_CELLS ||
        !pf_subgoal_supports(g))
        return PF_OK;
    if (old && (!old->sg || !old->sgh)) return PF_OK;
    st =
        old ? pf_subgoal_repair(old->sg, g, changed, n, stop, &sg) : pf_subgoal_build(g, stop, &sg);
    if (st) return st == PF_ECANCELED ? st : PF_OK; /* only a speed-up */
    if ((double)pf_subgoal_edge_count(sg) > SUBGOAL_MAX_DEGREE * (double)pf_subgoal_count(sg)) {
        pf_subgoal_destroy(sg);
        return PF_OK;
    }
    st =
        old ? pf_subgoal_ch_rebuild(sg, old->sg, old->sgh, 0,
                                    (uint64_t)p->opts.subgoal_work_per_cell * cells, stop, &h)
            : pf_subgoal_ch_build(sg, 0, (uint64_t)p->opts.subgoal_work_per_cell * cells, stop, &h);
    if (st) {
        pf_subgoal_destroy(sg);
        return st == PF_ECANCELED ? st : PF_OK; /* too many shortcuts, or no memory */
    }
    p->sg = sg;
    p->sgh = h;
    p->sg_build_us = pf__mono_us() - t0;
    return PF_OK;
}

void pf__planner_subgoal_keep(pf_planner *p) {
    const pf__auto_model *m = &p->autom;
    bool picked = false;
    if (!p->sgh || !m->calibrated) return;
    for (int b = 0; b < PF_PLANNER_AUTO_BINS; b++) picked |= m->pick[b] == PF_ALGO_SUBGOAL;
    if (picked) return;
    pf_subgoal_ch_destroy(p->sgh);
    pf_subgoal_destroy(p->sg);
    p->sgh = NULL;
    p->sg = NULL;
    p->sg_build_us = 0;
}

static void scratch_free(void *c) { pf_subgoal_ctx_destroy(c); }

static size_t scratch_memory(const void *c) { return pf_subgoal_ctx_memory(c); }

pf_status pf__planner_subgoal_search(pf_search_ctx *ctx, const pf_planner *p, const pf_query *q,
                                     pf_result *out) {
    pf_subgoal_ctx *c = ctx->ext[PF__EXT_SUBGOAL];
    pf_subgoal_answer an = {0};
    pf_result r = {0};
    r.algorithm = PF_ALGO_SUBGOAL;
    if (!p->sgh) {
        r.status = PF_EUNSUPPORTED;
    } else if (p->hpa && pf_grid_is_walkable(p->grid, q->start) &&
               pf_grid_is_walkable(p->grid, q->goal) &&
               !pf_hpa_connected(p->hpa, q->start, q->goal)) {
        /* From the component labels: a hierarchy with a core would
         * otherwise search the whole of the start's side of it. */
        r.status = PF_NO_PATH;
    } else if (!c && !(c = pf_subgoal_ctx_create())) {
        r.status = PF_ENOMEM;
    } else {
        ctx->ext[PF__EXT_SUBGOAL] = c;
        ctx->ext_free[PF__EXT_SUBGOAL] = scratch_free;
        ctx->ext_memory[PF__EXT_SUBGOAL] = scratch_memory;
        r.status = pf_subgoal_ch_find(p->sg, p->sgh, p->grid, p->lm, c, q->start, q->goal, &an);
        r.expanded = an.expanded;
        r.generated = an.expanded;
        if (r.status == PF_OK && q->max_expanded && an.expanded > q->max_expanded) {
            /* The search is over a graph of at most a few tens of
             * thousands of subgoals and is not cut short; its answer
             * beyond the budget is refused as the other searches would. */
            r.status = PF_EBUDGET;
        } else if (r.status == PF_OK) {
            r.cost = an.cost;
            r.path = an.path;
            r.path_len = an.path_len;
        }
    }
    *out = r;
    return r.status;
}

bool pf_planner_has_subgoal(const pf_planner *p) { return p->sgh != NULL; }

void pf_planner_subgoal_stats(const pf_planner *p, pf_planner_subgoal_info *out) {
    out->built = p->sgh != NULL;
    out->subgoals = p->sg ? pf_subgoal_count(p->sg) : 0;
    out->edges = p->sg ? pf_subgoal_edge_count(p->sg) : 0;
    out->shortcuts = p->sgh ? pf_subgoal_ch_shortcuts(p->sgh) : 0;
    out->core = p->sgh ? pf_subgoal_ch_core(p->sgh) : 0;
    out->work = p->sgh ? pf_subgoal_ch_work(p->sgh) : 0;
    out->memory_bytes = pf_subgoal_memory(p->sg) + pf_subgoal_ch_memory(p->sgh);
    out->build_us = p->sgh ? p->sg_build_us : 0;
}
