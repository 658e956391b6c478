/* landmarks.h -- a differential heuristic for jump point search.
 *
 * For a few landmark cells L, the exact distance d(L, v) to every cell v.
 * By the triangle inequality |d(L, g) - d(L, n)| <= d(n, g), so the largest
 * of these over the landmarks is a lower bound of the distance from n to
 * the goal g, and a consistent one; jps takes the larger of it and the
 * octile distance. On room and Dragon Age maps, where walls make octile
 * distances far too low, it cuts jump point search's expansions several
 * times over (Goldenberg et al., "The compressed differential heuristic",
 * and Sturtevant et al., "Memory-based heuristics for explicit state
 * spaces", IJCAI 2009).
 *
 * Exactness: every distance on a uniform-cost 8-connected map is
 * c (s + t sqrt 2) for s straight and t diagonal steps, so a landmark
 * stores the pair (s, t) of a shortest path per cell (2 x 16 bits) and the
 * heuristic is computed from exact integer differences. Landmarks are kept
 * interleaved per cell, so one heuristic reads one or two cache lines.
 *
 * Which maps: those jps serves (8-connected, one cost for every walkable
 * cell, no walls), measured with every door open. Closing doors and
 * blocking cells only lengthen distances, which keeps the bound valid, so
 * later versions of the map share the landmarks; a version where a cell
 * that was blocked in that all-open map becomes walkable, or whose cost
 * changes, cannot use them (pf_landmarks_valid_for).
 *
 * Immutable once built; reference counted so map versions share them.
 */
#ifndef PF_LANDMARKS_H
#define PF_LANDMARKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "build_stop.h"
#include "grid.h"
#include "status.h"

#define PF_LANDMARKS_MAX 16
#define PF_LANDMARK_NONE 0xFFFFu /* s of a cell the landmark does not reach (t is 0) */

typedef struct pf_landmarks {
    atomic_int refs;
    int k; /* landmarks */
    int32_t w, h;
    uint8_t cost;   /* the one cost of a walkable cell */
    bool cut;       /* the corner rule the distances were measured under */
    uint16_t *d;    /* cell v, landmark j: s at d[2 (v k + j)], t after it */
    uint64_t *open; /* bit v: walkable with every door open */
    /* Dead-end pruning from the same all-open map, or NULL (deadends.h). */
    struct pf_deadends *dead;
    uint64_t build_us;
} pf_landmarks;

/* Builds up to PF_LANDMARKS_MAX landmarks in at most max_bytes of tables
 * (4 bytes a cell a landmark). *out is NULL, with PF_OK, when the map is
 * not one jps serves, when fewer than 2 landmarks fit, or when a distance
 * has more than 65534 steps of one kind. PF_ENOMEM; PF_ECANCELED when stop
 * (build_stop.h; NULL: never), polled every slice of cells settled or
 * scanned (dead ends included), said stop. */
pf_status pf_landmarks_build(const pf_grid *g, size_t max_bytes, pf_build_stop *stop,
                             pf_landmarks **out);
void pf_landmarks_retain(pf_landmarks *l);
void pf_landmarks_release(pf_landmarks *l); /* NULL is a no-op */
size_t pf_landmarks_memory(const pf_landmarks *l);

/* Whether a version g of the map may use l: same size and cost, and every
 * cell in `changed` (what made g from a version that could) that is
 * walkable in g was walkable in l's all-open map. */
bool pf_landmarks_valid_for(const pf_landmarks *l, const pf_grid *g, const pf_point *changed,
                            size_t n);

/* The distances of cell v from the landmarks, in steps of cost 1, into
 * out[0..k). A cell a landmark does not reach gets 65535: any value is a
 * valid bound there, because such a cell and the goal are then in
 * different regions (or both unreached, and get the same value), and a
 * constant keeps the bound consistent inside a region. */
static inline void pf_landmarks_dist(const pf_landmarks *l, int32_t v, double *out) {
    const uint16_t *p = l->d + (size_t)v * 2 * (size_t)l->k;
    for (int j = 0; j < l->k; j++) out[j] = (double)p[2 * j] + (double)p[2 * j + 1] * PF_SQRT2;
}

/* The bound for cell a given the goal's distances (pf_landmarks_dist). */
static inline double pf_landmarks_h_to(const pf_landmarks *l, int32_t a, const double *goal) {
    const uint16_t *p = l->d + (size_t)a * 2 * (size_t)l->k;
    double best = 0.0;
    for (int j = 0; j < l->k; j++) {
        double v = goal[j] - ((double)p[2 * j] + (double)p[2 * j + 1] * PF_SQRT2);
        v = v < 0 ? -v : v;
        best = v > best ? v : best;
    }
    /* Sums with sqrt 2 round; a relative 1e-12 below keeps the bound at or
     * under the exact distance. */
    return best * (double)l->cost * (1.0 - 1e-12);
}

/* A lower bound of the distance between cells a and b (indices y w + x). */
static inline double pf_landmarks_h(const pf_landmarks *l, int32_t a, int32_t b) {
    double goal[PF_LANDMARKS_MAX];
    pf_landmarks_dist(l, b, goal);
    return pf_landmarks_h_to(l, a, goal);
}

#endif
