/* hpa.h -- HPA*: hierarchical path-finding over precomputed clusters
 * (Botea, Mueller & Schaeffer, "Near Optimal Hierarchical Path-Finding",
 * 2004; enhancements after Jansen & Buro, "HPA* Enhancements", 2007).
 *
 * A pf_hpa is built once per map version and is read-only afterwards: any
 * number of threads may search it concurrently, each with its own
 * pf_search_ctx. A change to the map produces a new hierarchy with
 * pf_hpa_repair, leaving the old one untouched for searches still using it.
 */
#ifndef PF_HPA_H
#define PF_HPA_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "search.h"

typedef struct pf_hpa pf_hpa;

/* Cluster side used when pf_hpa_params.cluster_size is 0. */
#define PF_HPA_DEFAULT_CLUSTER 16

typedef struct pf_hpa_params {
    int32_t cluster_size; /* cells per cluster side; 0 = PF_HPA_DEFAULT_CLUSTER */
} pf_hpa_params;

typedef struct pf_hpa_stats {
    int32_t cluster_size;
    int32_t clusters;
    int64_t entrances;
    int64_t abstract_nodes;
    int64_t abstract_edges;
    int64_t components;  /* connected components of the whole map */
    size_t memory_bytes;
} pf_hpa_stats;

/* Builds the hierarchy of g. The hierarchy does not keep g; every search and
 * repair is handed the grid version the hierarchy describes. PF_EINVAL for
 * a bad cluster size, PF_ENOMEM. Free with pf_hpa_destroy. */
pf_status pf_hpa_build(const pf_grid *g, const pf_hpa_params *p, pf_hpa **out);
void pf_hpa_destroy(pf_hpa *h);
void pf_hpa_get_stats(const pf_hpa *h, pf_hpa_stats *st);

/* Builds the hierarchy of `g`, the grid `old` described after the cells in
 * changed[0..n) changed (cost, door, or a wall edge beside them), rebuilding
 * only the clusters they touch and the entrances on those clusters' borders.
 * `old` is not modified. On success *out owns the new hierarchy. */
pf_status pf_hpa_repair(const pf_hpa *old, const pf_grid *g, const pf_point *changed, size_t n,
                        pf_hpa **out);

/* Runs q on g (the grid h was built for): inserts start and goal, searches
 * the abstract graph, refines to a full cell-by-cell path that obeys the
 * map's rules, and shortens it. out->algorithm is PF_ALGO_HPA. An unreachable
 * goal is answered from the component labels without searching. Statuses as
 * pf_search. */
pf_status pf_hpa_search(pf_search_ctx *ctx, const pf_hpa *h, const pf_grid *g, const pf_query *q,
                        pf_result *out);

/* Whether a and b are in the same connected component. */
bool pf_hpa_connected(const pf_hpa *h, pf_point a, pf_point b);

#endif
