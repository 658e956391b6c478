/* table.h -- distance tables: the optimal cost from each of some sources to
 * each of some targets (OSRM's table service, on a grid), and on request
 * the paths.
 *
 * One search per source (or, when there are fewer targets, one backward
 * search per target): a Dijkstra on the bucket queue of dial_internal.h
 * that stops as soon as every cell it waits for is settled, so a row costs
 * the area within reach of its farthest target, not the map. Costs are
 * exact optima under the map's costs (a step pays the entered cell's cost,
 * so cost(a, b) and cost(b, a) differ on maps with costs; backward searches
 * account for that).
 *
 * Thread safety: as pf_search (one context per thread, grids only read).
 */
#ifndef PF_TABLE_H
#define PF_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "search.h"

/* Cells one side of a table may list in core. [Limits: 1..65536] */
#define PF_TABLE_MAX_SIDE 65536

/* One search from `origin` over the cells others[0..n): forward, costs[k] =
 * cost from origin to others[k]; backward, costs[k] = cost from others[k]
 * to origin. INFINITY where there is no path. Points must be walkable
 * cells of g (PF_ERANGE off the map, PF_EBLOCKED blocked; the caller names
 * the field). PF_EINVAL for n == 0 or n > PF_TABLE_MAX_SIDE, PF_ECANCELED
 * when stop asked, PF_ENOMEM. *expanded (may be NULL) counts settled cells.
 * Afterwards the paths of this search can be read with pf_table_path until
 * ctx's next table search, flow field or search. */
pf_status pf_table_search(pf_search_ctx *ctx, const pf_grid *g, pf_point origin,
                          const pf_point *others, size_t n, bool backward, pf_stop_fn stop,
                          void *stop_ud, double *costs, uint64_t *expanded);

/* The path of the last pf_table_search on ctx (over the same g) between its
 * origin and `other` (one of its others), in travel order: origin ..
 * other forward, other .. origin backward. *path is borrowed from ctx
 * (valid until its next search), *len its cells. PF_NO_PATH when the
 * search did not settle `other` (no path, or not one of its cells),
 * PF_EINVAL when ctx's last table search was not on a grid of g's size or
 * other is off the map, PF_ENOMEM. */
pf_status pf_table_path(pf_search_ctx *ctx, const pf_grid *g, pf_point other, const pf_point **path,
                        size_t *len);

typedef enum pf_table_direction {
    PF_TABLE_AUTO = 0, /* one search per source, or per target when there are fewer */
    PF_TABLE_FORWARD,
    PF_TABLE_BACKWARD
} pf_table_direction;

typedef struct pf_table_stats {
    uint64_t searches, expanded;
    bool backward;      /* which way the searches ran */
    int32_t bad_source; /* with PF_ERANGE / PF_EBLOCKED: the point at fault, else -1 */
    int32_t bad_target;
} pf_table_stats;

/* The whole matrix: costs[i * nt + j] = cost from sources[i] to targets[j]
 * (INFINITY without a path). Statuses as pf_table_search; st (may be NULL)
 * names a bad point. */
pf_status pf_table_compute(pf_search_ctx *ctx, const pf_grid *g, const pf_point *sources, size_t ns,
                           const pf_point *targets, size_t nt, pf_table_direction dir,
                           pf_stop_fn stop, void *stop_ud, double *costs, pf_table_stats *st);

/* The matrix one search at a time, so a server can give its worker back
 * between searches (as a batch of paths does between queries), with two
 * savings and a limit:
 *   - components: with the connected components of g's cells (cuts.h; of
 *     g, or of a grid whose moves include g's, as an agent grid's are
 *     included in its base grid's), a pair in two components is answered
 *     INFINITY without being searched for, and a search whose others are
 *     all in other components is not run at all;
 *   - each search stops once the others it can reach are settled (the
 *     others of other components are not waited for);
 *   - max_expanded: the cells all searches together may settle (0: no
 *     limit); past it the run ends with PF_ELIMIT.
 * Fill the input fields, pf_table_run_init (checks the points as
 * pf_table_compute: PF_ERANGE / PF_EBLOCKED naming the point in stats,
 * PF_EINVAL, PF_ENOMEM), then pf_table_run_next until pf_table_run_done;
 * each call runs one row's (forward) or one column's (backward) search
 * with any context, and after a forward one pf_table_path reads its paths
 * from that context. pf_table_run_clear frees what the run holds. */
typedef struct pf_table_run {
    /* In. */
    const pf_grid *g;
    const pf_point *sources, *targets; /* borrowed */
    size_t ns, nt;
    pf_table_direction dir;
    const struct pf_cuts *components; /* may be NULL */
    uint64_t max_expanded;
    pf_stop_fn stop; /* polled every 256 settled cells: PF_ECANCELED */
    void *stop_ud;
    double *costs; /* [ns * nt], the caller's */
    /* Out. */
    size_t next;          /* searches (rows or columns) done */
    pf_table_stats stats; /* searches run, cells settled, direction, bad point */
    uint64_t unreachable; /* pairs answered from the components, unsearched */
    /* The run's own. */
    bool backward, searched;
    size_t *idx;   /* the others a search waits for: their indices */
    pf_point *pts; /* ... and points */
    double *row;   /* one row or column of costs */
    double *got;   /* the search's costs of pts */
} pf_table_run;

pf_status pf_table_run_init(pf_table_run *t);
pf_status pf_table_run_next(pf_search_ctx *ctx, pf_table_run *t);
bool pf_table_run_done(const pf_table_run *t);
/* Whether the last pf_table_run_next searched (false: every pair of its
 * row or column was answered from the components). */
bool pf_table_run_searched(const pf_table_run *t);
void pf_table_run_clear(pf_table_run *t);

#endif
