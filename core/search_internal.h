/* search_internal.h -- the search context's layout and the open list, shared
 * by core's search modules (search.c, jps.c, hpa.c, dstar.c).
 *
 * Node state is reset per query by bumping `gen`: a node whose gen differs
 * from the context's is unseen, so no W x H array is cleared per query.
 */
#ifndef PF_SEARCH_INTERNAL_H
#define PF_SEARCH_INTERNAL_H

#include "grid_internal.h"
#include "search.h"

#define PF__HEAP_CLOSED (-1)

typedef struct pf__node {
    double g;
    int32_t parent;   /* cell index of the predecessor, -1 for the start */
    uint32_t gen;     /* == ctx->gen when this node was seen this query */
    int32_t heap_pos; /* position in the heap, PF__HEAP_CLOSED once expanded */
} pf__node;

typedef struct pf__heap_item {
    double f;
    double h;     /* tie-break: lower h first */
    uint32_t seq; /* then earlier insertion first */
    int32_t node;
} pf__heap_item;

/* Extension slots: modules with scratch of their own (jps, hpa, dstar) hang
 * it here, so one per-thread context serves every algorithm. */
enum { PF__EXT_JPS = 0, PF__EXT_HPA, PF__EXT_DSTAR, PF__EXT_DIAL, PF__EXT_SUBGOAL, PF__EXT_COUNT };

struct pf_search_ctx {
    pf__node *nodes;
    size_t cap; /* cells the node array holds */
    uint32_t gen;

    pf__heap_item *heap;
    size_t heap_len, heap_cap;
    uint32_t seq;

    pf_point *path;
    size_t path_cap;
    int32_t *expanded; /* recorded expanded cells (debug) */
    size_t expanded_len, expanded_cap;
    int32_t *queue; /* bfs FIFO */
    size_t queue_cap;

    void *ext[PF__EXT_COUNT];
    void (*ext_free[PF__EXT_COUNT])(void *);
    size_t (*ext_memory[PF__EXT_COUNT])(const void *);
};

/* Makes room for `cells` nodes and a heap of that many items and starts a new
 * generation: every node is unseen afterwards. */
pf_status pf__ctx_begin(pf_search_ctx *ctx, size_t cells);
/* Grows the path buffer to hold n points. */
pf_status pf__ctx_reserve_path(pf_search_ctx *ctx, size_t n);
/* Grows the expanded-cell record to hold n cells. */
pf_status pf__ctx_reserve_expanded(pf_search_ctx *ctx, size_t n);

static inline bool pf__node_seen(const pf_search_ctx *ctx, int32_t i) {
    return ctx->nodes[i].gen == ctx->gen;
}

void pf__heap_push(pf_search_ctx *ctx, int32_t node, double f, double h);
/* Lowers the key of a node already in the heap. */
void pf__heap_decrease(pf_search_ctx *ctx, int32_t node, double f, double h);
/* Removes the best item and marks its node closed. The heap is not empty. */
int32_t pf__heap_pop(pf_search_ctx *ctx);

/* Writes the path ending at `goal` (following parents) into ctx->path and
 * sets out->path and out->path_len. */
pf_status pf__ctx_build_path(pf_search_ctx *ctx, const pf_grid *g, int32_t goal, pf_result *out);

/* Checks start and goal are on the map and walkable. */
pf_status pf__check_endpoints(const pf_grid *g, pf_point start, pf_point goal);

/* Fills out for start == goal: path [start], cost 0. */
pf_status pf__answer_trivial(pf_search_ctx *ctx, pf_point start, pf_result *out);

/* Partial answers (pf_query.partial): among the cells the search recorded
 * in ctx->expanded, the one with the least hdist(ud, cell), then the least
 * g, then the lowest index; -1 when none was recorded. */
int32_t pf__partial_best(const pf_search_ctx *ctx, double (*hdist)(void *ud, int32_t cell),
                         void *ud);
/* Answers the path to cell `best` as a partial result with reason `why`;
 * returns why itself when best < 0. */
pf_status pf__answer_partial(pf_search_ctx *ctx, const pf_grid *g, int32_t best, pf_status why,
                             pf_result *out);

/* Every this many expansions a search polls its stop callback. */
#define PF__STOP_POLL_MASK 255u

#endif
