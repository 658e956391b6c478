/* table.c -- distance tables from early-stopping bucket Dijkstras. See
 * table.h. */
#include "table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dial_internal.h"

static pf_status check_point(const pf_grid *g, pf_point p) {
    if (!pf_grid_in_bounds(g, p)) return PF_ERANGE;
    return pf_grid_is_walkable(g, p) ? PF_OK : PF_EBLOCKED;
}

pf_status pf_table_search(pf_search_ctx *ctx, const pf_grid *g, pf_point origin,
                          const pf_point *others, size_t n, bool backward, pf_stop_fn stop,
                          void *stop_ud, double *costs, uint64_t *expanded) {
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
    if ((st = pf__dial_run(d, &src, 1, backward, tg, n, stop, stop_ud))) return st;
    for (size_t k = 0; k < n; k++)
        costs[k] = pf__dial_settled(d, (size_t)tg[k]) ? d->cell[tg[k]].dist : INFINITY;
    if (expanded) *expanded = d->expanded;
    return PF_OK;
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

pf_status pf_table_compute(pf_search_ctx *ctx, const pf_grid *g, const pf_point *sources, size_t ns,
                           const pf_point *targets, size_t nt, pf_table_direction dir,
                           pf_stop_fn stop, void *stop_ud, double *costs, pf_table_stats *st) {
    pf_table_stats s;
    bool backward = dir == PF_TABLE_BACKWARD || (dir == PF_TABLE_AUTO && nt < ns);
    double *row = NULL;
    pf_status rc = PF_OK;

    memset(&s, 0, sizeof(s));
    s.bad_source = s.bad_target = -1;
    s.backward = backward;
    if (ns == 0 || nt == 0 || ns > PF_TABLE_MAX_SIDE || nt > PF_TABLE_MAX_SIDE) {
        rc = PF_EINVAL;
        goto out;
    }
    for (size_t i = 0; i < ns && !rc; i++)
        if ((rc = check_point(g, sources[i]))) s.bad_source = (int32_t)i;
    for (size_t j = 0; j < nt && !rc; j++)
        if ((rc = check_point(g, targets[j]))) s.bad_target = (int32_t)j;
    if (rc) goto out;
    if (backward && !(row = malloc(ns * sizeof(*row)))) {
        rc = PF_ENOMEM;
        goto out;
    }
    for (size_t o = 0; o < (backward ? nt : ns) && !rc; o++) {
        uint64_t ex = 0;
        if (backward) {
            rc = pf_table_search(ctx, g, targets[o], sources, ns, true, stop, stop_ud, row, &ex);
            for (size_t i = 0; i < ns && !rc; i++) costs[i * nt + o] = row[i];
        } else {
            rc = pf_table_search(ctx, g, sources[o], targets, nt, false, stop, stop_ud,
                                 costs + o * nt, &ex);
        }
        s.searches++;
        s.expanded += ex;
    }
    free(row);
out:
    if (st) *st = s;
    return rc;
}
