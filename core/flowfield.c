/* flowfield.c -- flow fields from one backward Dijkstra. See flowfield.h. */
#include "flowfield.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock_internal.h"
#include "dial_internal.h"

struct pf_flowfield {
    pf_box box;
    uint8_t *dir;
    double *cost;
    int64_t reachable;
    double max_cost;
    uint64_t expanded, build_us;
};

static bool box_inside(const pf_box *b, pf_point p) {
    return p.x >= b->x && p.y >= b->y && p.x - b->x < b->w && p.y - b->y < b->h;
}

pf_status pf_flowfield_build(pf_search_ctx *ctx, const pf_grid *g, const pf_flow_query *q,
                             pf_flowfield **out, int32_t *bad_goal) {
    uint64_t t0 = pf__mono_us();
    pf_box box = {0, 0, g->w, g->h};
    pf_flowfield *f = NULL;
    pf__dial *d;
    int32_t *src;
    size_t cells;
    pf_status st;

    *out = NULL;
    if (bad_goal) *bad_goal = -1;
    if (q->ngoals == 0 || q->ngoals > PF_FLOW_MAX_GOALS) return PF_EINVAL;
    if (q->has_region) {
        box = q->region;
        if (box.w < 1 || box.h < 1) return PF_EINVAL;
        if (box.x < 0 || box.y < 0 || box.x > g->w - box.w || box.y > g->h - box.h)
            return PF_ERANGE;
    }
    for (size_t i = 0; i < q->ngoals; i++) {
        st = PF_OK;
        if (!box_inside(&box, q->goals[i]))
            st = PF_ERANGE;
        else if (!pf_grid_is_walkable(g, q->goals[i]))
            st = PF_EBLOCKED;
        if (st) {
            if (bad_goal) *bad_goal = (int32_t)i;
            return st;
        }
    }
    if ((st = pf__dial_get(ctx, &d))) return st;
    if ((st = pf__dial_load(d, g, box.x, box.y, box.w, box.h))) return st;
    cells = d->cells;
    /* The goals' local indices go into the context's queue. */
    if (q->ngoals > ctx->queue_cap) {
        int32_t *qq = realloc(ctx->queue, q->ngoals * sizeof(*qq));
        if (!qq) return PF_ENOMEM;
        ctx->queue = qq;
        ctx->queue_cap = q->ngoals;
    }
    src = ctx->queue;
    for (size_t i = 0; i < q->ngoals; i++)
        src[i] = (q->goals[i].y - box.y) * box.w + (q->goals[i].x - box.x);

    f = calloc(1, sizeof(*f));
    if (!f) return PF_ENOMEM;
    f->box = box;
    f->dir = malloc(cells);
    f->cost = malloc(cells * sizeof(*f->cost));
    if (!f->dir || !f->cost) {
        st = PF_ENOMEM;
        goto out_free_field;
    }
    if ((st = pf__dial_run(d, src, q->ngoals, true, NULL, 0, q->should_stop, q->stop_ud)))
        goto out_free_field;
    for (size_t i = 0; i < cells; i++) {
        if (!pf__dial_reached(d, i)) {
            f->dir[i] = PF_FLOW_NONE;
            f->cost[i] = INFINITY;
            continue;
        }
        f->dir[i] = d->cell[i].dir == PF__DIAL_NO_DIR ? PF_FLOW_GOAL : d->cell[i].dir;
        f->cost[i] = d->cell[i].dist;
        if (d->cell[i].dist > f->max_cost) f->max_cost = d->cell[i].dist;
        f->reachable++;
    }
    f->expanded = d->expanded;
    f->build_us = pf__mono_us() - t0;
    *out = f;
    return PF_OK;

out_free_field:
    pf_flowfield_destroy(f);
    return st;
}

void pf_flowfield_destroy(pf_flowfield *f) {
    if (!f) return;
    free(f->dir);
    free(f->cost);
    free(f);
}

pf_box pf_flowfield_region(const pf_flowfield *f) { return f->box; }
const uint8_t *pf_flowfield_dirs(const pf_flowfield *f) { return f->dir; }
const double *pf_flowfield_costs(const pf_flowfield *f) { return f->cost; }

uint8_t pf_flowfield_dir_at(const pf_flowfield *f, pf_point p) {
    if (!box_inside(&f->box, p)) return PF_FLOW_NONE;
    return f->dir[(size_t)(p.y - f->box.y) * f->box.w + (p.x - f->box.x)];
}

double pf_flowfield_cost_at(const pf_flowfield *f, pf_point p) {
    if (!box_inside(&f->box, p)) return INFINITY;
    return f->cost[(size_t)(p.y - f->box.y) * f->box.w + (p.x - f->box.x)];
}

void pf_flowfield_get_stats(const pf_flowfield *f, pf_flow_stats *st) {
    size_t cells = (size_t)f->box.w * (size_t)f->box.h;
    st->reachable = f->reachable;
    st->max_cost = f->max_cost;
    st->expanded = f->expanded;
    st->build_us = f->build_us;
    st->memory_bytes = sizeof(*f) + cells * (1 + sizeof(double));
}
