/* hpa_internal.h -- the layout of a pf_hpa, shared by hpa_build.c (build,
 * repair, components) and hpa_query.c (insertion, abstract search,
 * refinement, path improvement).
 *
 * Clusters are numbered row-major (k = cy * ncx + cx); cluster k covers the
 * cells [cx*cs, min(w, (cx+1)*cs)) x [cy*cs, min(h, (cy+1)*cs)). Inside a
 * cluster a cell has the local index (y - y0) * cs + (x - x0) whatever the
 * cluster's real width, so every per-cluster table has cs*cs entries.
 *
 * Abstract nodes are transition cells. The nodes of one cluster are
 * contiguous (cl_node_first[k] .. cl_node_first[k+1]) and sorted by cell
 * index, so a hierarchy built from scratch and one repaired from an older
 * version are identical array for array.
 */
#ifndef PF_HPA_INTERNAL_H
#define PF_HPA_INTERNAL_H

#include "grid_internal.h"
#include "hpa.h"

#define PF__HPA_NO_DIR 0xFFu        /* tree root, or a cell the tree does not reach */
#define PF__HPA_NO_REGION 0xFFFFu   /* blocked cell */
#define PF__HPA_MIN_CLUSTER 4
#define PF__HPA_MAX_CLUSTER 64      /* local indices and region labels fit in 16 bits */

struct pf_hpa {
    int32_t w, h, cs;
    int32_t ncx, ncy, nclusters;
    int connectivity;
    bool corner_cutting;

    /* Abstract nodes. */
    int32_t nnodes;
    int32_t *cl_node_first; /* [nclusters + 1] */
    int32_t *node_cell;     /* [nnodes] cell index y*w+x */
    pf_point *node_pt;      /* [nnodes] */
    /* Cached in-cluster shortest paths: for node v, trees[v*cs*cs + li] is
     * the direction from local cell li one step back towards v's cell along
     * a shortest in-cluster path from v (PF__HPA_NO_DIR at v and at cells v
     * does not reach). Refinement walks it from the target back to v. */
    uint8_t *trees;
    /* Exact in-cluster distances between the nodes of a cluster: an n x n
     * row-major matrix per cluster (row = from), INFINITY when unreachable
     * inside the cluster. */
    int64_t *cl_mat_first;  /* [nclusters + 1] */
    double *mat;

    /* The abstract graph in CSR form: intra-cluster edges (cost = matrix
     * entry) then inter-cluster edges (one orthogonal step across a border,
     * cost = entry cost of the cell entered). Directed: costs differ by
     * direction on maps with non-uniform costs. */
    int32_t *edge_first; /* [nnodes + 1] */
    int32_t *edge_inter; /* [nnodes] first inter-cluster edge of each node */
    int32_t *edge_to;
    double *edge_cost;
    int64_t nedges;
    int64_t nentrances;

    /* Connectivity. region[c] is the label of cell c's connected region
     * inside its cluster (PF__HPA_NO_REGION when blocked); the global region
     * id is cl_region_first[k] + label, and region_comp maps it to its
     * connected component of the whole map. */
    uint16_t *region;         /* [w * h] */
    int32_t *cl_region_first; /* [nclusters + 1] */
    int32_t *region_comp;     /* [regions] */
    int64_t ncomponents;

    size_t memory;
};

static inline int32_t pf__hpa_cluster_of(const pf_hpa *h, int32_t x, int32_t y) {
    return (y / h->cs) * h->ncx + x / h->cs;
}

/* The cluster's box: origin and real size. */
static inline void pf__hpa_box(const pf_hpa *h, int32_t k, int32_t *x0, int32_t *y0, int32_t *bw,
                               int32_t *bh) {
    *x0 = (k % h->ncx) * h->cs;
    *y0 = (k / h->ncx) * h->cs;
    *bw = h->w - *x0 < h->cs ? h->w - *x0 : h->cs;
    *bh = h->h - *y0 < h->cs ? h->h - *y0 : h->cs;
}

/* Dijkstra restricted to one cluster, on a bucket queue: with buckets as
 * wide as the cheapest step in the cluster, every cell in the lowest
 * non-empty bucket already has its final distance (Dinitz 1978; Dial 1969),
 * so each cell costs O(1) queue work. Buffers hold cs*cs cells. */
#define PF__HPA_BUCKETS 512 /* a power of two > 255 * sqrt(2) + 2, the widest live window */

typedef struct pf__hpa_dij {
    int32_t cells;     /* cs * cs */
    double *dist;      /* [cells] */
    uint8_t *dir;      /* [cells], see pf_hpa.trees */
    int32_t *state;    /* [cells] -1 unseen, -2 settled, else the absolute bucket */
    int32_t *next, *prev; /* [cells] bucket lists */
    uint8_t *target;      /* [cells] 1 at the cells an early-stopping run waits for */
    int32_t head[PF__HPA_BUCKETS];
    uint64_t expanded;
} pf__hpa_dij;

pf_status pf__hpa_dij_init(pf__hpa_dij *s, int32_t cs);
void pf__hpa_dij_free(pf__hpa_dij *s);

/* Shortest in-cluster paths from cell (sx, sy) of the box [x0, x0+bw) x
 * [y0, y0+bh) (local stride cs). Forward: dist[li] is the cost from the
 * source to li. Reverse: dist[li] is the cost from li to the source (moves
 * are symmetric, costs are not). In both, dir[li] is the direction of the
 * next cell towards the source. With ntargets > 0 the search stops once the
 * cells targets[0..ntargets) (local indices) are settled: their distances
 * and every tree path to them are final, the rest of the tables are partial
 * but still a deterministic function of the input. */
void pf__hpa_dijkstra(const pf_grid *g, int32_t x0, int32_t y0, int32_t bw, int32_t bh, int32_t cs,
                      int32_t sx, int32_t sy, bool reverse, const int32_t *targets,
                      int32_t ntargets, pf__hpa_dij *s);

#endif
