/* graph_select.c -- the median split shared by the graph's two spatial
 * indexes: graph_nearest.c's kd-tree over node positions and
 * graph_edge_index.c's bounding-volume hierarchy over edge midpoints. */
#include "graph_internal.h"

/* Hoare's FIND, as Wirth writes it. */
void pf__graph_select_k(const pf__graph_topo *t, uint32_t *a, ptrdiff_t lo, ptrdiff_t hi,
                        ptrdiff_t k, int ax, pf__graph_coord_fn coord) {
    while (lo < hi) {
        double x = coord(t, a[k], ax);
        ptrdiff_t i = lo, j = hi;
        do {
            while (coord(t, a[i], ax) < x) i++;
            while (x < coord(t, a[j], ax)) j--;
            if (i <= j) {
                uint32_t tmp = a[i];
                a[i] = a[j];
                a[j] = tmp;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < k) lo = i;
        if (k < i) hi = j;
    }
}
