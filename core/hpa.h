/* hpa.h -- HPA*: hierarchical path-finding over precomputed clusters
 * (Botea, Mueller & Schaeffer, "Near Optimal Hierarchical Path-Finding",
 * 2004; enhancements after Jansen & Buro, "HPA* Enhancements", 2007).
 *
 * The map is cut into square clusters. Each run of cell pairs that can be
 * crossed along a cluster border is an entrance; it gets transition points
 * (one in the middle of a run shorter than 6 cells, otherwise one at each
 * end and evenly spaced ones between, at most 8 cells apart, see
 * hpa_build.c). Transitions are the abstract nodes; intra-cluster edges carry exact in-cluster
 * shortest-path costs, and each node keeps its in-cluster shortest-path tree (one byte a cell), so
 * refinement reads paths instead of searching. Connected regions per cluster joined by entrances
 * give the components of the whole map. Works on every map pathd accepts: costs 1..255, 4/8
 * connectivity, either corner rule, wall edges, doors.
 *
 * Queries (hpa_query.c) are unweighted A* over the abstract graph, then
 * repairs of the refined path: line shortcuts and windowed A*; a short
 * query tries plain A* first. On the shared Moving AI maps no answer is
 * more than 5% over the optimum and no map's mean more than 0.5%.
 *
 * Thread safety: a pf_hpa is built once per map version and is read-only
 * afterwards: any number of threads may search it concurrently, each with its
 * own pf_search_ctx (per-thread scratch lives in the context's HPA slot). A
 * change to the map produces a new hierarchy with pf_hpa_repair, leaving the
 * old one untouched for searches still using it.
 */
#ifndef PF_HPA_H
#define PF_HPA_H

#include <stddef.h>
#include <stdint.h>

#include "build_stop.h"
#include "grid.h"
#include "landmarks.h"
#include "search.h"

typedef struct pf_hpa pf_hpa;

/* Cluster side used when pf_hpa_params.cluster_size is 0 (accepted sides:
 * 4..64), unless the map is fragmented or large (below). Chosen by measurement over the 18 shared
 * Moving AI maps (every second scenario, astar side by side): 16 gives the best paths (mean
 * suboptimality 0.31%, 99th percentile 2.3% over 28402 scenarios) with the lowest build times on
 * cluttered maps. 32 halves the abstract nodes and answers long queries up to about 2x faster on
 * mazes and random maps, but its paths are worse (8room_000: 99th percentile 21%, worst 218%, when
 * grouped entrances on long room walls force crossings far from the door), and its builds are
 * slower on most maps. 8 doubles the nodes and made long queries 2-4x slower. */
#define PF_HPA_DEFAULT_CLUSTER 16

/* ... except on fragmented maps: when the clusters of side
 * PF_HPA_DEFAULT_CLUSTER hold at least PF_HPA_FRAGMENTED_REGIONS connected
 * regions each on average, the build uses PF_HPA_FRAGMENTED_CLUSTER. Every
 * region needs transitions of its own on each border it touches, and the
 * intra-cluster edges grow with the square of the transitions a cluster
 * has, so the abstract graph of a map cut into many small regions is large
 * and slow to search; larger clusters join many of those pieces. Of the 18
 * shared maps three pass the threshold (regions per 16x16 cluster:
 * maze512-1-0 7.8, random512-40-0 3.9, maze512-8-0 2.5; every other map
 * 1.5 or less). callgrind, 100 long queries each, 16 -> 24:
 * random512-40-0 233M -> 184M instructions, maze512-8-0 410M -> 294M,
 * maze512-1-0 unchanged; suboptimality random512-40-0 mean 0.55% -> 0.76%,
 * 99th percentile 2.8% -> 4.4%, maze512-8-0 mean 0.82% -> 0.55%, p99 2.9% ->
 * 2.5%, maze512-1-0 optimal either way. 24 on every map would hurt rooms
 * (8room_000: 99th percentile 0% -> 8.8%). 24 -> 28 (all their scenarios,
 * astar/hpa p50 ratio on the longest quarter of buckets, 100 queries, two
 * runs): random512-40-0 21x -> 23-24x, maze512-8-0 41-42x -> 43-44x,
 * maze512-1-0 31x -> 31-32x; suboptimality random512-40-0 mean 0.76% ->
 * 0.78%, p99 4.4% -> 3.7% (23 -> 14 scenarios over 5%), maze512-8-0 mean
 * 0.55% -> 0.42%, p99 2.5% -> 2.5% (12 -> 14 over 5%). 32 was faster still
 * but its paths worse (over 5%: random512-40-0 32, maze512-8-0 26). */
#define PF_HPA_FRAGMENTED_CLUSTER 28
#define PF_HPA_FRAGMENTED_REGIONS 2.0

/* ... and on maps of at least PF_HPA_LARGE_CELLS cells (512x512), fragmented
 * or not, PF_HPA_LARGE_CLUSTER. Larger clusters mean fewer of them on a
 * path and more of the path read from the exact in-cluster trees, so
 * faster queries and better paths; what held them back was the insertion,
 * a Dijkstra over each end's whole cluster. Since a query reads the ends'
 * distances off the trees instead (hpa_query.c, walk_ends), 32 -> 64 on the
 * 13 shared maps of 512x512 or more (thread CPU clock, pathd-bench scen
 * --compare astar,hpa --bucket-quarter --max-queries 100, and --algorithm
 * hpa over every scenario for the excess), astar/hpa on the longest
 * quarter: 32room_000 108x -> 221x, 8room_000 62x -> 95x, AR0011SR 68x ->
 * 125x, AR0700SR 43x -> 76x, AcrosstheCape 59x -> 107x, Berlin_1_1024 63x
 * -> 112x, Boston_0_512 37x -> 62x, Cauldron 69x -> 136x, maze512-1-0 36x
 * -> 44x, maze512-8-0 40x -> 68x, orz900d 25x -> 74x, random512-10-0 7.7x
 * -> 15.0x, random512-40-0 38x -> 51x; mean excess equal or lower on every
 * map (random512-10-0 0.29% -> 0.16%), worst query under 5% everywhere
 * (Boston_0_512 1.3% -> 3.7%). The price is the build and the repair,
 * which grow with the cluster's area and the trees that now cover it:
 * pf_hpa_build 1.4-2.4x (random512-10-0 176 -> 357 ms, Berlin_1_1024 171 ->
 * 369 ms), one blocked cell repaired 1.3-7.6x slower at the median
 * (random512-10-0 1.3 -> 6.9 ms, 8room_000 0.4 -> 1.9 ms; Cauldron 5.5 ->
 * 1.9 ms), memory 1.3-1.6x (random512-10-0 14.6 -> 19.4 MiB; pf_hpa_build
 * best of 3 and pf_hpa_repair of 40 random cells, thread CPU clock). The
 * server's --cluster-size 32 takes the old trade back. (Before the dense
 * transitions and the window repair, 16 -> 32 had been measured the same
 * way: random512-10-0 4.4x -> 7.1x, orz900d 16x -> 31x.) Smaller maps stay
 * with 16: den520d, ost003d and Berlin_0_256 were 10-20% slower at 32
 * (measured while the insertion still searched). */
#define PF_HPA_LARGE_CELLS ((int64_t)512 * 512)
#define PF_HPA_LARGE_CLUSTER 64

typedef struct pf_hpa_params {
    int32_t cluster_size; /* cells per cluster side; 0 = chosen by the map (see above) */
} pf_hpa_params;

typedef struct pf_hpa_stats {
    int32_t cluster_size;
    int32_t clusters;
    int64_t entrances;
    int64_t abstract_nodes;
    int64_t abstract_edges;
    int64_t components; /* connected components of the whole map */
    size_t memory_bytes;
} pf_hpa_stats;

/* Builds the hierarchy of g. The hierarchy does not keep g; every search and
 * repair is handed the grid version the hierarchy describes. PF_EINVAL for
 * a bad cluster size, PF_ELIMIT when the abstract graph outgrows 32-bit
 * indices, PF_ENOMEM. On success *out owns the hierarchy, freed with
 * pf_hpa_destroy (NULL is a no-op); on error *out is NULL. Memory is about
 * cs*cs + 48 bytes per abstract node (plus 8 per node of its cluster), 2
 * bytes per cell and 12 per region (see stats; blocks shared with other
 * versions count in each). stop (build_stop.h; NULL: never) is polled per
 * cluster labelled, in-cluster Dijkstra, border and assembled cluster:
 * PF_ECANCELED when it said stop. */
pf_status pf_hpa_build(const pf_grid *g, const pf_hpa_params *p, pf_build_stop *stop, pf_hpa **out);
void pf_hpa_destroy(pf_hpa *h);
void pf_hpa_get_stats(const pf_hpa *h, pf_hpa_stats *st);

/* What pf_hpa_build(g, p) would hold, counted without building it (no
 * Dijkstra: region labels and border scans, O(cells) time, scratch of one
 * cluster): *st as pf_hpa_get_stats would fill it on the result (cluster
 * size, clusters, entrances, abstract nodes and edges, memory_bytes to the
 * byte; components 0: not counted) and *allocations, the number of heap
 * blocks those bytes are held in (for the allocator's overhead). The
 * memory budget reserves a map's size with it before building (server
 * memory.h). PF_EINVAL for a bad cluster size, PF_ENOMEM, PF_ECANCELED when
 * stop (NULL: never) said stop; on error *st is zeroed. */
pf_status pf_hpa_size(const pf_grid *g, const pf_hpa_params *p, pf_build_stop *stop,
                      pf_hpa_stats *st, size_t *allocations);

/* Builds the hierarchy of `g`, the grid `old` described after the cells in
 * changed[0..n) changed (cost, door, or a wall edge beside them: list both
 * cells of a changed edge, as pf_planner_apply does), rebuilding only the
 * clusters they touch and the entrances on those clusters' borders; a
 * neighbouring cluster is rebuilt too when its transitions on a shared border
 * moved. Every other cluster's and border's data (cached paths included) is
 * shared with `old` by reference, not copied, and the abstract graph and the
 * component labels are reassembled, which is linear in the abstract graph
 * (component labels are recomputed globally by union-find over in-cluster
 * regions, not by a flood fill of the map), so a split or merged component
 * is always right. The result is identical to pf_hpa_build(g) with old's
 * cluster size. `old` is not modified, may be searched concurrently, and may
 * be destroyed before or after the new version (on any thread: the shared
 * data is reference-counted atomically). PF_EINVAL when g's
 * size or movement rules differ from old's, PF_ERANGE for an off-map cell,
 * PF_ENOMEM, PF_ECANCELED (stop, as pf_hpa_build). On success *out owns the
 * new hierarchy. */
pf_status pf_hpa_repair(const pf_hpa *old, const pf_grid *g, const pf_point *changed, size_t n,
                        pf_build_stop *stop, pf_hpa **out);

/* The map's landmark distances (landmarks.h) at h's abstract nodes, copied
 * into one array in node order. The abstract search reads them for every
 * node it queues; read off the map's tables, where a node's row is a cache
 * line of its own somewhere in megabytes, those reads missed the caches.
 * On random512-10-0 (16 landmarks, 3,388 nodes: 217 KB against 16 MiB)
 * astar/hpa on the longest quarter went from 16.2x to 18.3x, and with the
 * large clusters' entrances (hpa_build.c, LONG_ENTRANCE_LARGE) from 19.9x
 * to 21.1-21.5x (thread CPU clock, interleaved runs, medians). The same
 * values in another place: the search's answers do not change. A row set
 * is built for one hierarchy and one set of landmarks, borrows neither, and
 * is used by pf_hpa_search only with those two (otherwise it reads the
 * map's tables). Building is a copy of nodes x 4k bytes. PF_EINVAL when lm
 * is for another map size, PF_ENOMEM; on error *out is NULL. */
typedef struct pf_hpa_lm pf_hpa_lm;
pf_status pf_hpa_lm_build(const pf_hpa *h, const pf_landmarks *lm, pf_hpa_lm **out);
void pf_hpa_lm_destroy(pf_hpa_lm *r);
size_t pf_hpa_lm_memory(const pf_hpa_lm *r); /* 0 for NULL */
/* The bytes pf_hpa_lm_build holds for a hierarchy of `nodes` abstract
 * nodes and k landmarks (the memory budget's estimate). */
size_t pf_hpa_lm_size(int64_t nodes, int k);

/* Runs q on g (the grid h was built for). A query whose ends are at most
 * 48 cells apart (octile distance) is first tried with A* on the grid within
 * 1024 expansions; otherwise, or past that budget: inserts start and goal
 * (in a cluster whose cells all cost the same, by reading their distances
 * to its nodes off the nodes' trees; otherwise, and when both lie in one
 * cluster, by one Dijkstra inside each of their clusters, so a same-cluster
 * query also considers routes that leave the cluster), A* over the abstract graph,
 * refines to a full cell-by-cell path from the cached trees, shortens it by
 * replacing stretches with octile-shaped straight walks that the grid
 * allows and that cost no more, and searches windows of the result that
 * still cost more than their octile length again with A* (hpa_query.c).
 * lm (borrowed, may be NULL) are the map's landmarks (landmarks.h): where
 * they bound g (the planner keeps them only while they do; otherwise they
 * are ignored) the abstract search takes their differential heuristic when
 * it beats the octile distance, read from rows (may be NULL) when they were
 * built for h and lm (pf_hpa_lm_build). The path is valid under every map rule and
 * out->cost is its exact cost (near-optimal, never below optimal).
 * out->algorithm is PF_ALGO_HPA; out->expanded counts abstract nodes, the
 * cells of the insertion Dijkstras or tree walks and the grid A* expansions. An
 * unreachable goal is answered from the component labels without searching
 * (expanded 0). max_expanded applies to the short A* and to the abstract
 * search, should_stop to every search. Statuses as pf_search, plus
 * PF_EINVAL when g's size or rules are not those h was built for. */
pf_status pf_hpa_search(pf_search_ctx *ctx, const pf_hpa *h, const pf_grid *g,
                        const pf_landmarks *lm, const pf_hpa_lm *rows, const pf_query *q,
                        pf_result *out);

/* Whether a and b are walkable cells of the same connected component. O(1). */
bool pf_hpa_connected(const pf_hpa *h, pf_point a, pf_point b);

/* The abstract graph, for inspection (the debug viewer). Clusters are
 * squares of stats.cluster_size cells from (0,0), row by row; nodes are
 * numbered 0 .. stats.abstract_nodes - 1, cluster by cluster. */
pf_point pf_hpa_node_point(const pf_hpa *h, int32_t v);
/* Node v's out-edges: (*to)[i] the target and (*cost)[i] the cost of edge
 * i < returned count, borrowed from h. The first *nintra stay inside v's
 * cluster (exact in-cluster shortest paths); the others are one step
 * across a border into a neighbouring cluster's node (an entrance's
 * transition pair). */
size_t pf_hpa_node_edges(const pf_hpa *h, int32_t v, const int32_t **to, const double **cost,
                         size_t *nintra);

#endif
