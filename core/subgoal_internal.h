/* subgoal_internal.h -- the subgoal graph's layout and the pieces its two
 * searches share: subgoal.c (the graph, A* over it) and subgoal_ch.c (its
 * contraction hierarchy). */
#ifndef PF_SUBGOAL_INTERNAL_H
#define PF_SUBGOAL_INTERNAL_H

#include "grid_internal.h"
#include "subgoal.h"

struct pf_subgoal {
    int32_t w, h;
    double unit;      /* the cost of a straight step */
    int32_t *id;      /* per cell: subgoal number, or -1 */
    int32_t n;        /* subgoals */
    int32_t *cell;    /* per subgoal: its cell */
    int64_t *fan_off; /* per subgoal: [fan_off[u], fan_off[u+1]) of fan */
    int32_t *fan;     /* cells each subgoal's own sweep reaches */
    int64_t *adj_off; /* the undirected graph, per subgoal */
    int32_t *adj;     /* neighbour subgoals */
    double *adj_cost; /* and the octile cost to each */
    int32_t recomputed;
};

typedef struct pf__sg_item {
    double f;
    int32_t v;
} pf__sg_item;

typedef struct pf__sg_heap {
    pf__sg_item *a;
    size_t n, cap;
} pf__sg_heap;

/* A query's scratch; the searches index nodes 0..n-1 (subgoals), n (a
 * start that is not one) and n + 1 (such a goal). Side 0 searches from
 * the start, side 1 (the hierarchy's backward search) from the goal. */
struct pf_subgoal_ctx {
    int32_t cap; /* nodes the arrays hold */
    double *g[2];
    int32_t *parent[2];
    uint32_t *seen[2], *closed[2], *gmark; /* stamps */
    double *gcost;                         /* cost to the goal from a subgoal it reaches */
    uint32_t stamp;
    pf__sg_heap heap[2];
    int32_t *sfan, *gfan; /* the start's and the goal's sweeps, cells */
    size_t sfan_n, gfan_n, sfan_cap, gfan_cap;
    pf_point *path;
    size_t path_cap;
    int32_t *chain; /* cells, goal first */
    size_t chain_cap;
    int32_t *nodes, *stack; /* the hierarchy's meeting path and its unpacking */
    size_t nodes_cap, stack_cap;
};

double pf__sg_octile(int32_t ax, int32_t ay, int32_t bx, int32_t by);
bool pf__sg_heap_push(pf__sg_heap *h, double f, int32_t v);
pf__sg_item pf__sg_heap_pop(pf__sg_heap *h);
bool pf__sg_fit_cells(int32_t **a, size_t *cap, size_t need);

/* The start of a query: checks, sizes c for s, takes a new stamp, sweeps
 * from start and goal (each seeing the other as a subgoal). *direct when
 * either sweep reached the other end (or they are the same cell): the
 * answer is then their octile distance. */
pf_status pf__sg_begin(const pf_subgoal *s, const pf_grid *g, pf_subgoal_ctx *c, pf_point start,
                       pf_point goal, bool *direct);

/* The start and the goal joined directly (pf__sg_begin's *direct): the
 * answer at their octile distance. */
pf_status pf__sg_answer_direct(const pf_subgoal *s, const pf_grid *g, pf_subgoal_ctx *c,
                               pf_point start, pf_point goal, pf_subgoal_answer *out);

/* The answer from c->chain[0..nchain) (cells, goal first, consecutive ones
 * joined by "diagonal, then straight" moves one way or the other). */
pf_status pf__sg_answer(const pf_subgoal *s, const pf_grid *g, pf_subgoal_ctx *c, pf_point start,
                        size_t nchain, double cost, pf_subgoal_answer *out);

#endif
