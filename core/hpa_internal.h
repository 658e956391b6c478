/* hpa_internal.h -- the layout of a pf_hpa, shared by hpa_build.c (build,
 * repair, components) and hpa_query.c (insertion, abstract search,
 * refinement, path improvement).
 *
 * Clusters are numbered row-major (k = cy * ncx + cx); cluster k covers the
 * cells [cx*cs, min(w, (cx+1)*cs)) x [cy*cs, min(h, (cy+1)*cs)). Inside a
 * cluster a cell has the local index (y - y0) * cs + (x - x0) whatever the
 * cluster's real width, so every per-cluster table has cs*cs entries.
 *
 * A hierarchy is a set of per-cluster and per-border blocks plus the global
 * abstract graph assembled from them. Blocks are immutable once built and
 * reference-counted: a repair rebuilds the blocks of the clusters (and their
 * borders) a change touches and shares every other block with the version
 * it came from, so its cost is the rebuilt clusters plus a linear pass over
 * the abstract graph, never a copy of the cached paths.
 *
 * Abstract nodes are transition cells. The nodes of one cluster are
 * contiguous (cl_node_first[k] .. cl_node_first[k+1]) and sorted by cell
 * index, so a hierarchy built from scratch and one repaired from an older
 * version are identical block for block and array for array.
 */
#ifndef PF_HPA_INTERNAL_H
#define PF_HPA_INTERNAL_H

#include <stdatomic.h>

#include "grid_internal.h"
#include "hpa.h"

#define PF__HPA_NO_DIR 0xFFu      /* tree root, or a cell the tree does not reach */
#define PF__HPA_NO_REGION 0xFFFFu /* blocked cell, or outside the map */
#define PF__HPA_MIN_CLUSTER 4
#define PF__HPA_MAX_CLUSTER 64 /* local indices and region labels fit in 16 bits */

/* One cluster's data. */
typedef struct pf__hpa_cluster {
    atomic_int refs;
    int32_t n;    /* transition nodes */
    int32_t nreg; /* connected regions */
    /* Every walkable cell of the cluster has the same cost, so in-cluster
     * distances are symmetric: every node's tree covers its whole region,
     * the path from any cell to node i is i's tree path walked backwards,
     * and a query reads the distances from its start to the nodes and from
     * them to its goal off the trees. Otherwise a node's tree is grown
     * until the other nodes of its region are reached, and a query
     * searches the cluster. */
    bool sym;
    int32_t nintra;   /* intra-cluster edges */
    uint16_t *region; /* [cs*cs] region label of each local cell */
    int32_t *cell;    /* [n] node cells (y*w+x), ascending */
    /* Exact in-cluster distances between the nodes, n x n row-major (row =
     * from), INFINITY when unreachable inside the cluster. */
    double *mat;
    /* The intra-cluster edges (the finite off-diagonal matrix entries) in
     * CSR form over local node indices, in matrix order. */
    int32_t *intra_first; /* [n + 1] */
    int32_t *intra_to;    /* [nintra] */
    double *intra_cost;   /* [nintra] */
    /* Cached in-cluster shortest paths: trees[i*cs*cs + li] is the direction
     * from local cell li one step back towards node i's cell along a
     * shortest in-cluster path from node i (PF__HPA_NO_DIR at the node and at
     * cells its tree does not reach). Refinement walks it from the target
     * back to node i. */
    uint8_t *trees;
    size_t memory;
} pf__hpa_cluster;

/* One border: between cluster k and its east (vertical border) or south
 * neighbour (horizontal border); side a lies in k, side b in the
 * neighbour. */
typedef struct pf__hpa_border {
    atomic_int refs;
    int32_t npairs;    /* transition pairs: one inter-cluster edge each way */
    int32_t nruns;     /* runs of crossable cell pairs */
    int32_t ngroups;   /* entrances */
    int32_t *pa, *pb;  /* [npairs] local node indices of the pair in a's and b's clusters */
    uint16_t *ra, *rb; /* [nruns] region labels the run joins in a's and b's clusters */
    size_t memory;
} pf__hpa_border;

/* A peeled region's interval in the depth-first numbering of its tree. */
typedef struct pf__hpa_span {
    int32_t in, out;
} pf__hpa_span;

struct pf_hpa {
    int32_t w, h, cs;
    int32_t ncx, ncy, nclusters;
    int connectivity;
    bool corner_cutting;

    pf__hpa_cluster **cl; /* [nclusters] */
    pf__hpa_border *
        *br; /* [2 * nclusters]: east border of k at 2k, south at 2k+1; NULL at the map's edge */

    /* Abstract nodes. */
    int32_t nnodes;
    int32_t *cl_node_first; /* [nclusters + 1] */
    pf_point *node_pt;      /* [nnodes] */

    /* The abstract graph in CSR form: intra-cluster edges (cost = matrix
     * entry) then, from edge_inter[v] on, inter-cluster edges (one
     * orthogonal step across a border, cost = entry cost of the cell
     * entered). Directed: costs differ by direction on maps with non-uniform
     * costs. */
    int32_t *edge_first; /* [nnodes + 1] */
    int32_t *edge_inter; /* [nnodes] first inter-cluster edge of each node */
    int32_t *edge_to;
    double *edge_cost;
    int64_t nedges;
    int64_t nentrances;

    /* Connectivity: the global id of region r of cluster k is
     * cl_region_first[k] + r, and region_comp maps it to its connected
     * component of the whole map. */
    int32_t *cl_region_first; /* [nclusters + 1] */
    int32_t *region_comp;     /* [regions] */
    int64_t ncomponents;

    /* Dead ends. The region graph has the regions as vertices and one edge
     * per transition pair (parallel edges kept). Peeling its leaves again
     * and again leaves its 2-core and a forest of peeled regions, each tree
     * hanging from the rest by a single edge. region_span numbers the
     * forest in depth-first order: peeled region X lies in R's subtree iff
     * region_span[R].in <= region_span[X].in < region_span[R].out; a region
     * of the 2-core has in = out = -1. node_span copies each node's region
     * span (see hpa_query.c for its use). */
    pf__hpa_span *region_span; /* [regions] */
    pf__hpa_span *node_span;   /* [nnodes] */

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
 * so each cell costs O(1) queue work. The cluster's cells are first copied
 * into local tables (costs, and move masks without the moves that leave the
 * cluster), which every search from the cluster's nodes then reads without
 * any index arithmetic. Buffers hold cs*cs cells. */
#define PF__HPA_BUCKETS 512 /* a power of two > 255 * sqrt(2) + 2, the widest live window */

typedef struct pf__hpa_dij {
    int32_t cap;          /* cells the buffers hold */
    int32_t cs, cells;    /* side of the loaded box's cluster, cs * cs <= cap */
    int cmin, cmax;       /* cheapest and dearest cell cost of the loaded box */
    uint8_t *lcost;       /* [cells] the loaded box's costs, 0 outside it */
    uint8_t *lmoves;      /* [cells] its move masks, moves leaving the box removed */
    double *dist;         /* [cells] */
    uint8_t *dir;         /* [cells], see pf__hpa_cluster.trees */
    int32_t *state;       /* [cells] -1 unseen, -2 settled, else the absolute bucket */
    int32_t *next, *prev; /* [cells] bucket lists */
    uint8_t *target;      /* [cells] 1 at the cells an early-stopping run waits for */
    int32_t head[PF__HPA_BUCKETS];
    uint64_t expanded;
} pf__hpa_dij;

pf_status pf__hpa_dij_init(pf__hpa_dij *s, int32_t cs);
void pf__hpa_dij_free(pf__hpa_dij *s);

/* Loads the box [x0, x0+bw) x [y0, y0+bh) of g, a cluster of side cs (the
 * local stride; cs * cs <= s->cap), into s's local tables. */
void pf__hpa_dij_load(pf__hpa_dij *s, const pf_grid *g, int32_t cs, int32_t x0, int32_t y0,
                      int32_t bw, int32_t bh);

/* Shortest paths inside the loaded box from local cell src. Forward:
 * dist[li] is the cost from the source to li. Reverse: dist[li] is the cost
 * from li to the source (moves are symmetric, costs are not). In both,
 * dir[li] is the direction of the next cell towards the source. With
 * ntargets > 0 the search stops once the cells targets[0..ntargets) (local
 * indices) are settled: their distances and every tree path to them are
 * final, the rest of the tables are partial but still a deterministic
 * function of the input. */
void pf__hpa_dijkstra(pf__hpa_dij *s, int32_t src, bool reverse, const int32_t *targets,
                      int32_t ntargets);

/* See hpa.h. Row v holds node v's landmark distances as the map's tables
 * hold a cell's: landmark j's s at d[2 (v k + j)], its t after it. */
struct pf_hpa_lm {
    const pf_hpa *h;        /* the hierarchy it was built for */
    const pf_landmarks *lm; /* and the landmarks */
    int k;                  /* lm->k */
    int32_t nnodes;         /* h->nnodes */
    uint16_t *d;            /* [nnodes * 2k] */
};

/* The region label of cell (x, y) (PF__HPA_NO_REGION when blocked). */
static inline uint16_t pf__hpa_region_at(const pf_hpa *h, int32_t x, int32_t y) {
    int32_t k = pf__hpa_cluster_of(h, x, y);
    return h->cl[k]->region[(y % h->cs) * h->cs + x % h->cs];
}

#endif
