/* graphref.h -- the graph tests' reference (tests/test_graph.c,
 * tests/test_graph_dstar.c): a graph as plain arrays (an edge list, no
 * CSR), Dijkstra over it as an O(n^2) scan for the cheapest open node (no
 * heap), and the check that an answer is a walk of it. Written apart from
 * core/ and sharing no code with it: what the graph code is held to. */
#ifndef PF_TESTS_GRAPHREF_H
#define PF_TESTS_GRAPHREF_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"

typedef struct graphref {
    uint32_t n, m;
    int dim;     /* 2 or 3 (z 0 in 2D) */
    double *pos; /* 3 a node */
    uint32_t *from, *to;
    double *cost;
    uint8_t *both, *eon, *non; /* two-way; edge and node enabled */
} graphref;

/* n nodes and m edges, zeroed, every node and edge enabled, dim 2; the
 * edge arrays hold m + 1 (room for one more). Aborts the test on no
 * memory. */
void graphref_alloc(graphref *r, uint32_t n, uint32_t m);
void graphref_free(graphref *r);

/* Euclidean distance between nodes a and b (3 coordinates). */
double graphref_euclid(const graphref *r, uint32_t a, uint32_t b);

/* dist[v] = the cheapest cost from s to v over enabled edges into enabled
 * nodes (INFINITY when none reaches v); dist holds n. */
void graphref_dijkstra(const graphref *r, uint32_t s, double *dist);

/* a and b equal within 1e-9 relative (1e-9 absolute below 1). */
bool graphref_near(double a, double b);

/* Whether p is a walk of r from start: each edge enabled, joining its two
 * nodes in an allowed direction into enabled nodes, its end the last
 * node, its costs summing to p->cost. */
bool graphref_walk_ok(const graphref *r, uint32_t start, const pf_graph_path *p);

#endif
