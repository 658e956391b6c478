/* graph.h -- waypoint graphs: nodes at 2D or 3D positions joined by edges
 * of a given cost, searched with Dijkstra or A*, and a nearest-node index.
 *
 * A graph is built once from its nodes and edges (pf_graph_build) into a
 * compact topology: CSR adjacency (each node's outgoing arcs contiguous),
 * node positions and a kd-tree over them. The topology never changes and is
 * shared, reference-counted, by every version made from it. A version's
 * state is what a PATCH may change: each edge's cost, which edges and nodes
 * are enabled (pf_graph_change makes the next version, the old one stays
 * valid for whoever holds it).
 *
 * An edge joins `from` to `to`; a two-way edge is also walked from `to` to
 * `from` at the same cost (one edge, two arcs, one enabled bit). A search
 * never walks a disabled edge nor enters a disabled node; a disabled start
 * or goal is refused (PF_EBLOCKED).
 *
 * A*'s heuristic is the straight-line distance to the goal times the
 * graph's ratio: the smallest cost / length over its edges of positive
 * length (measured when the version is made, so a PATCH that makes an edge
 * cheaper lowers it), 0 when an edge of positive length costs nothing. Any
 * path's cost is at least ratio times its length, which is at least ratio
 * times the straight line, so the heuristic never overestimates; it is also
 * consistent (h(u) <= cost(u,v) + h(v)), so A* closes each node once. The
 * ratio is scaled down by 1e-9 relative so rounding cannot make it
 * overestimate a path whose cost is exactly its length.
 *
 * Thread-safety: a graph is immutable; any number of threads may search it
 * at once, each with its own pf_graph_ctx. Nothing here allocates during a
 * search except the context's growth. No I/O, no globals.
 */
#ifndef PF_GRAPH_H
#define PF_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "build_stop.h"
#include "status.h"

/* Node and edge indices are uint32_t; PF_GRAPH_NONE is no node. */
#define PF_GRAPH_NONE UINT32_MAX
/* Hard ceilings of the representation (the server's limits are lower). */
#define PF_GRAPH_MAX_NODES (UINT32_C(1) << 30)
#define PF_GRAPH_MAX_EDGES (UINT32_C(1) << 30)

typedef struct pf_graph pf_graph;

/* What pf_graph_build reads (borrowed). pos holds 3 doubles a node (z 0
 * for a 2D graph; dim says which it was). Edge i joins from[i] to to[i] at
 * cost[i] (finite, >= 0), both ways when both[i] is non-zero (both NULL:
 * every edge one-way). */
typedef struct pf_graph_spec {
    uint32_t nnodes;
    int dim; /* 2 or 3 */
    const double *pos;
    uint32_t nedges;
    const uint32_t *from, *to;
    const double *cost;
    const uint8_t *both;
    /* ALT landmarks to choose (0: none; at most PF_GRAPH_MAX_LANDMARKS,
     * and no more than the nodes): see pf_graph_search's "alt". */
    uint32_t landmarks;
    /* Tags as bits (NULL: none): a query's exclude_tags keeps the search
     * off edges and nodes carrying any of its bits. */
    const uint64_t *node_tags, *edge_tags;
} pf_graph_spec;

/* The most landmarks a graph keeps. */
#define PF_GRAPH_MAX_LANDMARKS 64

/* Which element made pf_graph_build or pf_graph_change refuse. */
typedef struct pf_graph_fault {
    enum { PF_GRAPH_FAULT_NONE, PF_GRAPH_FAULT_NODE, PF_GRAPH_FAULT_EDGE } what;
    uint32_t index;
} pf_graph_fault;

/* Builds the graph of spec (1 reference). PF_EINVAL (fault names the node
 * or edge: a non-finite position, an endpoint out of range, a negative or
 * non-finite cost; no node at all), PF_ELIMIT past the ceilings above,
 * PF_ENOMEM. Every node and edge starts enabled. */
pf_status pf_graph_build(const pf_graph_spec *spec, pf_graph **out, pf_graph_fault *fault);
void pf_graph_retain(const pf_graph *g);
/* Drops a reference; the last frees it (and the topology when no other
 * version holds it). NULL is a no-op. */
void pf_graph_release(const pf_graph *g);

/* A PATCH: costs of edges, edges and nodes enabled or disabled. */
typedef struct pf_graph_cost_change {
    uint32_t edge;
    double cost;
} pf_graph_cost_change;
typedef struct pf_graph_toggle {
    uint32_t index;
    bool enabled;
} pf_graph_toggle;
typedef struct pf_graph_change {
    const pf_graph_cost_change *costs;
    size_t ncosts;
    const pf_graph_toggle *edges, *nodes;
    size_t nedges, nnodes;
} pf_graph_change;

/* The next version of g with ch applied in order (costs, then edges, then
 * nodes), sharing g's topology (1 reference). PF_EINVAL with fault (an
 * index out of range, a negative or non-finite cost), PF_ENOMEM; g is
 * unchanged either way. */
pf_status pf_graph_change_apply(const pf_graph *g, const pf_graph_change *ch, pf_graph **out,
                                pf_graph_fault *fault);

/* What a graph is. */
typedef struct pf_graph_info {
    uint32_t nodes, edges, arcs; /* arcs: two per two-way edge */
    uint32_t max_degree;         /* most arcs leaving one node */
    uint32_t disabled_nodes, disabled_edges;
    int dim;
    double ratio;        /* the heuristic's scale (above) */
    uint32_t landmarks;  /* ALT landmarks of the topology */
    double lm_scale;     /* this version's factor on their bounds (0: unused) */
    uint32_t components; /* weak components of the enabled graph */
    size_t topo_bytes;   /* the shared topology and index */
    size_t state_bytes;  /* this version's costs and bits */
} pf_graph_info;
void pf_graph_get_info(const pf_graph *g, pf_graph_info *info);
/* Node i's position (3 doubles) and whether it is enabled; edge i's
 * endpoints, cost, direction and state. i must be in range. */
const double *pf_graph_node_pos(const pf_graph *g, uint32_t i);
bool pf_graph_node_enabled(const pf_graph *g, uint32_t i);
void pf_graph_edge(const pf_graph *g, uint32_t i, uint32_t *from, uint32_t *to, double *cost,
                   bool *both, bool *enabled);

/* Edge i's tag bits (pf_graph_spec's edge_tags; 0 without). */
uint64_t pf_graph_edge_tags(const pf_graph *g, uint32_t i);

/* Node i's weak component in this version (edges taken both ways, only
 * enabled edges between enabled nodes; a disabled node is alone): nodes
 * of different components cannot reach each other. i must be in range. */
uint32_t pf_graph_component(const pf_graph *g, uint32_t i);

/* The enabled node nearest to p (3 doubles; Euclidean distance over the
 * graph's dimensions), the lower index among equals, through the kd-tree;
 * PF_GRAPH_NONE when every node is disabled. *dist gets its distance.
 * *visited (may be NULL) counts the tree nodes looked at. */
uint32_t pf_graph_nearest(const pf_graph *g, const double p[3], double *dist, uint32_t *visited);

/* The nearest point to p on an enabled edge between enabled nodes
 * (Euclidean over the graph's dimensions): its edge (PF_GRAPH_NONE when
 * there is none), *at the fraction along it from its `from` node (0..1),
 * *dist the distance; ties to the lower edge index. Through the edge
 * index (graph_edge_index.c: a bounding-box tree over the edges, built
 * with the topology, 10 to 16 bytes an edge): a few tree nodes when the
 * edges near p are enabled; disabled edges are looked at and skipped. */
uint32_t pf_graph_nearest_edge(const pf_graph *g, const double p[3], double *at, double *dist);
/* The same answer by a scan of every edge (for measuring the index). */
uint32_t pf_graph_nearest_edge_scan(const pf_graph *g, const double p[3], double *at, double *dist);

/* A search's scratch: distances, parents, the open list and the path.
 * One per thread; reused across graphs of any size. */
typedef struct pf_graph_ctx pf_graph_ctx;
pf_graph_ctx *pf_graph_ctx_create(void);
void pf_graph_ctx_destroy(pf_graph_ctx *ctx);
/* Bytes it holds now. */
size_t pf_graph_ctx_memory(const pf_graph_ctx *ctx);

/* ALT (Goldberg and Harrelson 2005: A*, landmarks, triangle inequality):
 * A* whose heuristic is also the landmarks' bound. pf_graph_build picks
 * spec->landmarks landmarks by farthest-point selection on the graph as
 * uploaded (every node and edge enabled, the upload's costs: the "base")
 * and keeps each node's shortest distance from and to every landmark, in
 * the topology, shared by every version. For a node v and the goal t the
 * bound is max over landmarks L of d(L,t) - d(L,v) and d(v,L) - d(t,L)
 * (a term with an infinite distance is skipped, or proves that v cannot
 * reach t: then v is not searched unless a partial answer was asked for).
 *
 * The PATCH rule. Disabling edges or nodes and raising costs only make
 * distances longer, so the base's bounds stay lower bounds. Enabling an
 * edge or node disabled since the upload never goes below the base
 * either (the base has every edge and node enabled). Only a cost below the
 * base's can: a version keeps lm_scale = the smallest cost / base cost
 * over the edges (1 when none is cheaper), and scales the bound by it: if
 * every cost is at least s times its base, every distance is at least s
 * times the base's, so s times the bound is a lower bound, and consistent
 * (s x a consistent heuristic of a cheaper metric). A version whose s is 0
 * (an edge made free) uses the straight line alone, as astar. No PATCH
 * recomputes landmarks: a PATCH costs O(edges), and a re-upload picks new
 * ones. The heuristic is the larger of this bound and astar's straight
 * line, so alt never closes more nodes than astar (up to ties). */
typedef enum pf_graph_algorithm {
    PF_GRAPH_DIJKSTRA = 0,
    PF_GRAPH_ASTAR = 1,
    PF_GRAPH_ALT = 2,
    PF_GRAPH_CH = 3 /* pf_graph_ch_attach: a contraction hierarchy */
} pf_graph_algorithm;
#define PF_GRAPH_ALGORITHMS 4
/* "dijkstra", "astar", "alt", "ch"; NULL past the last. */
const char *pf_graph_algorithm_name(pf_graph_algorithm a);

typedef struct pf_graph_query {
    uint32_t start, goal;
    pf_graph_algorithm algorithm;
    uint64_t max_expanded; /* nodes closed before PF_EBUDGET; 0: no limit */
    /* Partial answers: when the goal is not reached, the path to the
     * closed node nearest the goal (straight line; then the cheaper, then
     * the lower index) instead of PF_NO_PATH / PF_EBUDGET alone. */
    bool partial;
    /* Asked every 256 expansions; true stops the search (PF_ECANCELED).
     * NULL: never. */
    bool (*stop)(void *arg);
    void *stop_arg;
    /* Several goals (ngoals > 0: goal is ignored): the search stops at the
     * cheapest one reached; out->end names it. A* uses the least straight
     * line to the goals (their bounding box past 16 goals); alt runs as
     * astar. Goals disabled or in another weak component are skipped
     * without a search; duplicates are allowed. */
    const uint32_t *goals;
    size_t ngoals;
    /* Edge snapping: several starts, each at a cost (nstarts > 0: start
     * is ignored; disabled ones are skipped), and with goals a cost to pay
     * on arriving at each (NULL: 0). The answer's cost includes both; the
     * path begins at the start it came from. */
    const uint32_t *starts;
    const double *start_costs;
    size_t nstarts;
    const double *goal_costs;
    /* Tag filter: edges and nodes whose tags (pf_graph_spec) share a bit
     * with this are not walked or entered (a start is left even so; a
     * goal so tagged is unreachable). 0: none. */
    uint64_t exclude_tags;
} pf_graph_query;

/* A search's answer; nodes and edges point into the context (valid until
 * its next search). edges[i] joins nodes[i] to nodes[i + 1]. */
typedef struct pf_graph_path {
    bool reached; /* nodes ends at the goal */
    uint32_t end; /* the last node: the goal, or the partial answer's */
    double cost;  /* the sum of the path's edge costs */
    const uint32_t *nodes, *edges;
    size_t len;        /* nodes; edges has len - 1 */
    uint64_t expanded; /* nodes closed */
} pf_graph_path;

/* Searches g. PF_OK: reached (cost optimal); PF_NO_PATH (every reachable
 * node closed) or PF_EBUDGET (max_expanded nodes closed): out holds the
 * partial path when q->partial asked for it (reached false), else len 0;
 * PF_ECANCELED (stop), PF_ERANGE (start or goal out of range),
 * PF_EBLOCKED (start or goal disabled), PF_EINVAL (an unknown
 * algorithm), PF_ENOMEM. out->expanded is set in every case. */
pf_status pf_graph_search(const pf_graph *g, pf_graph_ctx *ctx, const pf_graph_query *q,
                          pf_graph_path *out);

/* One row of a distance table: Dijkstra from `source` to the targets,
 * stopped once every target it can reach is closed. Targets disabled or
 * in another weak component get INFINITY without a search (a source whose
 * targets are all such searches nothing). costs[j] is target j's optimal
 * cost or INFINITY. max_expanded (0: none) bounds the nodes closed
 * (PF_EBUDGET), stop as pf_graph_query's (PF_ECANCELED); *expanded is set
 * in every case. PF_ERANGE (an index out of range), PF_EBLOCKED (source
 * disabled), PF_ENOMEM. After PF_OK, pf_graph_row_path gives the path to
 * a target of finite cost until the context's next search. */
typedef struct pf_graph_row {
    uint32_t source;
    const uint32_t *targets;
    size_t ntargets;
    uint64_t max_expanded;
    bool (*stop)(void *arg);
    void *stop_arg;
    /* Tag filter, as pf_graph_query's (the source is left even so; a
     * target so tagged, the source apart, gets INFINITY). 0: none. */
    uint64_t exclude_tags;
} pf_graph_row;
pf_status pf_graph_row_run(const pf_graph *g, pf_graph_ctx *ctx, const pf_graph_row *q,
                           double *costs, uint64_t *expanded);
/* The last row's path to `target` (reached: cost finite). PF_NO_PATH when
 * the row did not reach it, PF_ENOMEM. */
pf_status pf_graph_row_path(pf_graph_ctx *ctx, uint32_t target, pf_graph_path *out);

/* Contraction hierarchies (Geisberger, Sanders, Schultes and Delling
 * 2008; core/graph_ch.c). pf_graph_ch_attach builds one for version g, on
 * its enabled edges between enabled nodes at its costs, and keeps it in g
 * (freed with g, its bytes in g's state_bytes). Call it before g is
 * shared (right after pf_graph_build or pf_graph_change_apply): a version
 * is immutable once other threads search it. A PATCH makes a version
 * without one: whoever makes versions builds it again (the server's rule
 * is in docs/graphs.md).
 *
 * A query with algorithm PF_GRAPH_CH on a version with a hierarchy runs
 * two upward Dijkstras (forward from the start, backward from the goal)
 * and unpacks the shortcuts of the meeting path into the version's edges:
 * its answer is optimal (the same cost as dijkstra's) and `expanded`
 * counts the nodes both searches settled. The hierarchy answers one start
 * to one goal: a query it cannot answer (pf_graph_ch_usable false: no
 * hierarchy, partial, several goals or starts, exclude_tags) runs as alt.
 *
 * Limits: witness searches settle at most witness_settle nodes (0:
 * PF_GRAPH_CH_WITNESS_SETTLE; a search cut short adds a shortcut that may
 * not be needed, never a wrong one); past max_shortcuts shortcuts (0:
 * 2^31) the build stops with PF_ELIMIT and g keeps none. PF_ENOMEM.
 *
 * stop (NULL: never stops): the build counts its work (build_stop.h: a
 * unit a node settled or an arc scanned by a witness search, an edge
 * loaded, an arc moved up) and polls every PF_BUILD_POLL_WORK units; when
 * it says stop, the build frees what it made and returns PF_ECANCELED, g
 * keeping none (its searches then run as without one). */
#define PF_GRAPH_CH_WITNESS_SETTLE 64
typedef struct pf_graph_ch_limits {
    uint64_t max_shortcuts;
    uint32_t witness_settle;
    pf_build_stop *stop;
    /* Hub labels (0: none): see pf_graph_ch_labels. */
    size_t max_label_bytes;
} pf_graph_ch_limits;
pf_status pf_graph_ch_attach(pf_graph *g, const pf_graph_ch_limits *lim);
bool pf_graph_ch_ready(const pf_graph *g);
/* Shortcuts of g's hierarchy (0 without). */
uint64_t pf_graph_ch_shortcuts(const pf_graph *g);
bool pf_graph_ch_usable(const pf_graph *g, const pf_graph_query *q);

/* Hub labels (Abraham, Delling, Goldberg and Werneck 2011-2012, built
 * from the hierarchy; core/graph_labels.c). With max_label_bytes, the
 * build goes on from the hierarchy to a forward and a backward label for
 * every node: each a list of (hub, distance, first up arc) sorted by hub,
 * made top-down in reverse contraction order (a node's label is itself
 * and its up neighbours' labels through the arcs to them, each hub at its
 * least distance), then pruned of every hub whose distance the labels
 * already beat (it is not on a shortest path to it). A "ch" query without
 * max_expanded then reads the start's forward and the goal's backward
 * label, takes the common hub of least total, and follows each label's
 * first arcs up to that hub, unpacking them into edges: no search, the
 * same optimal cost; `expanded` counts the label entries read. Labels past
 * max_label_bytes (PF_ELIMIT), a stop or no memory leave the hierarchy
 * without them (it searches as before). Returns NULL when g has labels,
 * else why not ("no_hierarchy", "disabled", "label_cap",
 * "build_deadline", "no_memory"); *entries and *bytes what they hold. */
const char *pf_graph_ch_labels(const pf_graph *g, uint64_t *entries, size_t *bytes);

#endif
