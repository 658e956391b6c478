/* dial_internal.h -- whole-map Dijkstra on a bucket queue, for flow fields
 * (flowfield.c) and distance tables (table.c).
 *
 * With buckets as wide as the cheapest step, every cell in the lowest
 * non-empty bucket already has its final distance (Dinitz 1978; Dial
 * 1969), so a cell costs O(1) queue work instead of a heap's O(log n): on a
 * 512x512 map one run settles every cell in a few milliseconds. The same
 * idea as HPA*'s in-cluster search (hpa_internal.h), over a whole map or a
 * box of it, with several sources at once and per-run reset by generation
 * stamps (no W x H clear per run, which matters for tables: one run per
 * row, most of them stopped early).
 *
 * Forward runs give dist[v] = the cost from the sources to v and dir[v] =
 * the direction from v one step back towards a source along a shortest
 * path; reverse runs give dist[v] = the cost from v to the nearest source
 * (steps pay the entered cell's cost, so the two differ on maps with
 * costs) and dir[v] = the first step from v towards it. The engine lives
 * in the search context's PF__EXT_DIAL slot: one per worker thread.
 */
#ifndef PF_DIAL_INTERNAL_H
#define PF_DIAL_INTERNAL_H

#include "search_internal.h"

#define PF__DIAL_BUCKETS 512 /* a power of two > 255 * sqrt(2) + 2, the widest live window */

/* One cell's state, 16 bytes, so that a relaxation touches one cache line. */
typedef struct pf__dial_cell {
    double dist;     /* valid where stamped */
    uint32_t stamp;  /* == gen: reached in this run */
    uint8_t dir;     /* valid where stamped; PF__DIAL_NO_DIR at the sources */
    uint8_t settled; /* 1 once final */
} pf__dial_cell;

/* One bucket: the cells pushed into it, with lazy deletion. A cell whose
 * distance drops is pushed again into its new bucket and its old entry
 * stays; an entry is skipped when its cell is settled already (its lowest
 * entry settled it first). Appending is sequential, where unlinking from
 * a list would touch two more cells' records per decrease. */
typedef struct pf__dial_bucket {
    int32_t *cells;
    size_t len, cap;
} pf__dial_bucket;

typedef struct pf__dial {
    size_t cap; /* cells every buffer holds */
    /* The loaded area: the box [x0, x0 + w) x [y0, y0 + h) of the map;
     * local index (y - y0) * w + (x - x0). */
    int32_t x0, y0, w, h;
    size_t cells;
    const uint8_t *cost, *moves; /* the map's own arrays for the whole map, else `own` */
    uint8_t *own;                /* [2 * cap] costs then moves of a box, moves out of it cleared */
    int cmin, cmax;              /* cheapest and dearest walkable cost in the area */
    uint32_t gen;
    pf__dial_cell *cell;                      /* [cap] */
    uint8_t *target;                          /* [cap] 1 at the cells a run waits for, else 0 */
    bool reverse;                             /* of the last run */
    pf__dial_bucket bucket[PF__DIAL_BUCKETS]; /* kept across runs */
    uint64_t expanded;                        /* cells settled by the last run */
    /* A run's loop state, kept while it is paused (pf__dial_continue). */
    int64_t cur;
    size_t queued, waiting;
    bool paused;
} pf__dial;

#define PF__DIAL_NO_DIR 0xFFu

/* The context's engine, made on first use. PF_ENOMEM. */
pf_status pf__dial_get(pf_search_ctx *ctx, pf__dial **out);

/* Loads the box (whole map when w == 0) of g: sizes the buffers, copies a
 * box's costs and moves (moves leaving the box removed). The box must lie
 * on the map. PF_ENOMEM. */
pf_status pf__dial_load(pf__dial *d, const pf_grid *g, int32_t x0, int32_t y0, int32_t w,
                        int32_t h);

/* Runs from the local cells src[0..nsrc) (distance 0 each), forward or
 * reverse. With ntargets > 0 it stops once the local cells
 * targets[0..ntargets) are all settled (their distances and tree paths are
 * final; other cells may be tentative). Polls stop every 256 settled cells:
 * PF_ECANCELED. With max_expanded > 0, PF_ELIMIT rather than settle a cell
 * past that many. Otherwise PF_OK, whether or not every target was
 * reached. */
pf_status pf__dial_run(pf__dial *d, const int32_t *src, size_t nsrc, bool reverse,
                       const int32_t *targets, size_t ntargets, pf_stop_fn stop, void *stop_ud,
                       uint64_t max_expanded);

/* A run that may pause, without targets (flow fields): pf__dial_start
 * queues the sources, pf__dial_continue runs until every reachable cell
 * is settled (*done), or pause(pause_ud) asks for the worker back (polled
 * every 256 settled cells; *done false, PF_OK: call it again to go on), or
 * stop / max_expanded end it as in pf__dial_run. */
pf_status pf__dial_start(pf__dial *d, const int32_t *src, size_t nsrc, bool reverse);
pf_status pf__dial_continue(pf__dial *d, pf_stop_fn stop, void *stop_ud, pf_stop_fn pause,
                            void *pause_ud, uint64_t max_expanded, bool *done);

/* A paused run goes on on whichever worker takes it up next, so its
 * engine travels with it: pf__dial_detach takes ctx's engine (NULL when it
 * has none; ctx makes a new one when it needs one), pf__dial_attach gives
 * one back to ctx (freed when ctx has one already; NULL is a no-op),
 * pf__dial_free frees one that belongs to no context. */
pf__dial *pf__dial_detach(pf_search_ctx *ctx);
void pf__dial_attach(pf_search_ctx *ctx, pf__dial *d);
void pf__dial_free(pf__dial *d);
/* Bytes the engine holds (0 for NULL). */
size_t pf__dial_memory(const pf__dial *d);

static inline bool pf__dial_reached(const pf__dial *d, size_t li) {
    return d->cell[li].stamp == d->gen;
}
static inline bool pf__dial_settled(const pf__dial *d, size_t li) {
    return d->cell[li].stamp == d->gen && d->cell[li].settled;
}

#endif
