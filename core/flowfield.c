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

struct pf_flow_build {
    pf__dial *d; /* the engine, taken from the starting context */
    pf_flowfield *f;
    pf_stop_fn should_stop;
    void *stop_ud;
    uint64_t max_expanded;
    uint64_t run_us; /* time spent in start and the slices so far */
};

pf_status pf_flowfield_start(pf_search_ctx *ctx, const pf_grid *g, const pf_flow_query *q,
                             pf_flow_build **out, int32_t *bad_goal) {
    uint64_t t0 = pf__mono_us();
    pf_box box = {0, 0, g->w, g->h};
    pf_flow_build *b = NULL;
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
    if (!(b = calloc(1, sizeof(*b))) || !(b->f = calloc(1, sizeof(*b->f)))) {
        free(b);
        return PF_ENOMEM;
    }
    b->f->box = box;
    b->f->dir = malloc(cells);
    b->f->cost = malloc(cells * sizeof(*b->f->cost));
    if (!b->f->dir || !b->f->cost || (st = pf__dial_start(d, src, q->ngoals, true))) {
        pf_flow_build_free(b);
        return st ? st : PF_ENOMEM;
    }
    b->d = pf__dial_detach(ctx); /* the run's own now, until it ends */
    b->should_stop = q->should_stop;
    b->stop_ud = q->stop_ud;
    b->max_expanded = q->max_expanded;
    b->run_us = pf__mono_us() - t0;
    *out = b;
    return PF_OK;
}

pf_status pf_flowfield_resume(pf_search_ctx *ctx, pf_flow_build *b, pf_stop_fn pause,
                              void *pause_ud, pf_flowfield **out) {
    uint64_t t0 = pf__mono_us();
    pf__dial *d = b->d;
    pf_flowfield *f = b->f;
    bool done = false;
    pf_status st;

    *out = NULL;
    if (!d || !f) return PF_EINVAL; /* spent */
    st = pf__dial_continue(d, b->should_stop, b->stop_ud, pause, pause_ud, b->max_expanded, &done);
    if (st == PF_OK && !done) { /* paused */
        b->run_us += pf__mono_us() - t0;
        return PF_OK;
    }
    if (st == PF_OK) {
        for (size_t i = 0; i < d->cells; i++) {
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
        f->build_us = b->run_us + (pf__mono_us() - t0);
        *out = f;
        b->f = NULL;
    }
    pf__dial_attach(ctx, d); /* done or failed: the engine goes back */
    b->d = NULL;
    return st;
}

pf_status pf_flowfield_build(pf_search_ctx *ctx, const pf_grid *g, const pf_flow_query *q,
                             pf_flowfield **out, int32_t *bad_goal) {
    pf_flow_build *b;
    pf_status st = pf_flowfield_start(ctx, g, q, &b, bad_goal);
    *out = NULL;
    if (st) return st;
    st = pf_flowfield_resume(ctx, b, NULL, NULL, out);
    pf_flow_build_free(b);
    return st;
}

size_t pf_flow_build_memory(const pf_flow_build *b) {
    size_t n;
    if (!b) return 0;
    n = sizeof(*b) + pf__dial_memory(b->d);
    if (b->f) n += sizeof(*b->f) + (size_t)b->f->box.w * (size_t)b->f->box.h * (1 + sizeof(double));
    return n;
}

uint64_t pf_flow_build_expanded(const pf_flow_build *b) { return b && b->d ? b->d->expanded : 0; }

void pf_flow_build_free(pf_flow_build *b) {
    if (!b) return;
    pf__dial_free(b->d);
    pf_flowfield_destroy(b->f);
    free(b);
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
