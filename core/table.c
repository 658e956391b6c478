/* table.c -- distance tables from early-stopping bucket Dijkstras. See
 * table.h. */
#include "table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuts.h"
#include "dial_internal.h"

static pf_status check_point(const pf_grid *g, pf_point p) {
    if (!pf_grid_in_bounds(g, p)) return PF_ERANGE;
    return pf_grid_is_walkable(g, p) ? PF_OK : PF_EBLOCKED;
}

/* pf_table_search with a cap on the cells it settles (0: none). */
static pf_status search(pf_search_ctx *ctx, const pf_grid *g, pf_point origin,
                        const pf_point *others, size_t n, bool backward, pf_stop_fn stop,
                        void *stop_ud, uint64_t max_expanded, double *costs, uint64_t *expanded) {
    pf__dial *d;
    int32_t *tg, src;
    pf_status st;

    if (expanded) *expanded = 0;
    if (n == 0 || n > PF_TABLE_MAX_SIDE) return PF_EINVAL;
    if ((st = check_point(g, origin))) return st;
    for (size_t k = 0; k < n; k++)
        if ((st = check_point(g, others[k]))) return st;
    if ((st = pf__dial_get(ctx, &d))) return st;
    if ((st = pf__dial_load(d, g, 0, 0, 0, 0))) return st;
    if (n > ctx->queue_cap) {
        int32_t *qq = realloc(ctx->queue, n * sizeof(*qq));
        if (!qq) return PF_ENOMEM;
        ctx->queue = qq;
        ctx->queue_cap = n;
    }
    tg = ctx->queue;
    for (size_t k = 0; k < n; k++) tg[k] = others[k].y * g->w + others[k].x;
    src = origin.y * g->w + origin.x;
    /* A backward search from the origin relaxes steps towards it: the
     * costs of others -> origin. */
    st = pf__dial_run(d, &src, 1, backward, tg, n, stop, stop_ud, max_expanded);
    if (expanded) *expanded = d->expanded;
    if (st) return st;
    for (size_t k = 0; k < n; k++)
        costs[k] = pf__dial_settled(d, (size_t)tg[k]) ? d->cell[tg[k]].dist : INFINITY;
    return PF_OK;
}

pf_status pf_table_search(pf_search_ctx *ctx, const pf_grid *g, pf_point origin,
                          const pf_point *others, size_t n, bool backward, pf_stop_fn stop,
                          void *stop_ud, double *costs, uint64_t *expanded) {
    return search(ctx, g, origin, others, n, backward, stop, stop_ud, 0, costs, expanded);
}

pf_status pf_table_path(pf_search_ctx *ctx, const pf_grid *g, pf_point other, const pf_point **path,
                        size_t *len) {
    pf__dial *d = ctx->ext[PF__EXT_DIAL];
    size_t n = 1, k;
    int32_t c;
    pf_status st;

    *path = NULL;
    *len = 0;
    if (!d || d->w != g->w || d->h != g->h || d->x0 != 0 || d->y0 != 0 || d->cap < d->cells ||
        !pf_grid_in_bounds(g, other))
        return PF_EINVAL;
    c = other.y * g->w + other.x;
    if (!pf__dial_settled(d, (size_t)c)) return PF_NO_PATH;
    /* The tree is acyclic (a cell's parent was settled before it); the
     * bound only guards against a context reused in between. */
    for (int32_t i = c; d->cell[i].dir != PF__DIAL_NO_DIR && n <= d->cells; n++)
        i += pf__grid_dir_offset(g, d->cell[i].dir);
    if (n > d->cells) return PF_EINVAL;
    if ((st = pf__ctx_reserve_path(ctx, n))) return st;
    /* Forward trees point back to the origin, so the walk from `other`
     * comes out reversed; backward trees point to it. */
    k = d->reverse ? 0 : n;
    for (int32_t i = c;; i += pf__grid_dir_offset(g, d->cell[i].dir)) {
        pf_point p = {i % g->w, i / g->w};
        if (d->reverse)
            ctx->path[k++] = p;
        else
            ctx->path[--k] = p;
        if (d->cell[i].dir == PF__DIAL_NO_DIR) break;
    }
    *path = ctx->path;
    *len = n;
    return PF_OK;
}

pf_status pf_table_run_init(pf_table_run *t) {
    pf_status rc = PF_OK;
    size_t n;
    t->next = 0;
    t->unreachable = 0;
    t->idx = NULL;
    t->pts = NULL;
    t->row = NULL;
    t->got = NULL;
    memset(&t->stats, 0, sizeof(t->stats));
    t->stats.bad_source = t->stats.bad_target = -1;
    t->backward = t->dir == PF_TABLE_BACKWARD || (t->dir == PF_TABLE_AUTO && t->nt < t->ns);
    t->stats.backward = t->backward;
    if (t->ns == 0 || t->nt == 0 || t->ns > PF_TABLE_MAX_SIDE || t->nt > PF_TABLE_MAX_SIDE)
        return PF_EINVAL;
    for (size_t i = 0; i < t->ns && !rc; i++)
        if ((rc = check_point(t->g, t->sources[i]))) t->stats.bad_source = (int32_t)i;
    for (size_t j = 0; j < t->nt && !rc; j++)
        if ((rc = check_point(t->g, t->targets[j]))) t->stats.bad_target = (int32_t)j;
    if (rc) return rc;
    n = t->backward ? t->ns : t->nt; /* the others of each search */
    t->idx = malloc(n * sizeof(*t->idx));
    t->pts = malloc(n * sizeof(*t->pts));
    t->row = malloc(n * sizeof(*t->row));
    t->got = malloc(n * sizeof(*t->got));
    if (!t->idx || !t->pts || !t->row || !t->got) {
        pf_table_run_clear(t);
        return PF_ENOMEM;
    }
    return PF_OK;
}

bool pf_table_run_done(const pf_table_run *t) { return t->next >= (t->backward ? t->nt : t->ns); }

pf_status pf_table_run_next(pf_search_ctx *ctx, pf_table_run *t) {
    size_t o = t->next, n = t->backward ? t->ns : t->nt, m = 0;
    const pf_point *others = t->backward ? t->sources : t->targets;
    pf_point origin = t->backward ? t->targets[o] : t->sources[o];
    int32_t w = pf_grid_width(t->g), oc = origin.y * w + origin.x;
    uint64_t ex = 0, cap = 0;
    pf_status rc = PF_OK;

    if (pf_table_run_done(t)) return PF_EINVAL;
    /* The others this search can reach; the rest are INFINITY as they
     * are, and not waited for. */
    for (size_t k = 0; k < n; k++) {
        t->row[k] = INFINITY;
        if (t->components && !pf_cuts_connected(t->components, oc, others[k].y * w + others[k].x)) {
            t->unreachable++;
            continue;
        }
        t->idx[m] = k;
        t->pts[m++] = others[k];
    }
    t->searched = m > 0;
    if (m) {
        double *got = t->got;
        if (t->max_expanded) {
            if (t->stats.expanded >= t->max_expanded) return PF_ELIMIT;
            cap = t->max_expanded - t->stats.expanded;
        }
        rc = search(ctx, t->g, origin, t->pts, m, t->backward, t->stop, t->stop_ud, cap, got, &ex);
        t->stats.searches++;
        t->stats.expanded += ex;
        if (rc) return rc;
        for (size_t i = 0; i < m; i++) t->row[t->idx[i]] = got[i];
    }
    if (t->backward) {
        for (size_t i = 0; i < t->ns; i++) t->costs[i * t->nt + o] = t->row[i];
    } else {
        memcpy(t->costs + o * t->nt, t->row, t->nt * sizeof(*t->row));
    }
    t->next++;
    return PF_OK;
}

bool pf_table_run_searched(const pf_table_run *t) { return t->searched; }

void pf_table_run_clear(pf_table_run *t) {
    free(t->idx);
    free(t->pts);
    free(t->row);
    free(t->got);
    t->idx = NULL;
    t->pts = NULL;
    t->row = NULL;
    t->got = NULL;
}

pf_status pf_table_compute(pf_search_ctx *ctx, const pf_grid *g, const pf_point *sources, size_t ns,
                           const pf_point *targets, size_t nt, pf_table_direction dir,
                           pf_stop_fn stop, void *stop_ud, double *costs, pf_table_stats *st) {
    pf_table_run t;
    pf_status rc;
    memset(&t, 0, sizeof(t));
    t.g = g;
    t.sources = sources;
    t.targets = targets;
    t.ns = ns;
    t.nt = nt;
    t.dir = dir;
    t.stop = stop;
    t.stop_ud = stop_ud;
    t.costs = costs;
    rc = pf_table_run_init(&t);
    while (!rc && !pf_table_run_done(&t)) rc = pf_table_run_next(ctx, &t);
    pf_table_run_clear(&t);
    if (st) *st = t.stats;
    return rc;
}
