/* hpa_build.c -- building and repairing the HPA* hierarchy (Botea, Mueller &
 * Schaeffer, "Near Optimal Hierarchical Path-Finding", 2004).
 *
 * A build has two stages:
 *   1. per cluster: its transition nodes (from the entrances on its four
 *      borders), one Dijkstra inside the cluster from each node (the exact
 *      intra-cluster distances and the cached paths), and its connected
 *      regions;
 *   2. assembly: node numbering, the abstract graph in CSR form with the
 *      inter-cluster edges, and the connected components of the whole map
 *      (union-find over the regions joined by entrances).
 * A repair redoes stage 1 only for the clusters a change can affect and
 * copies everything else from the old version, then redoes stage 2, which is
 * linear in the size of the abstract graph (no per-cell work).
 */
#include "hpa_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An entrance (a maximal run of crossable cell pairs along a border) at
 * least this long gets a transition at each end, a shorter one a single
 * transition in its middle (Botea et al. 2004, section 3). */
#define LONG_ENTRANCE 6

static const uint8_t opposite8[PF_DIR_COUNT] = {PF_DIR_W,  PF_DIR_E,  PF_DIR_N,  PF_DIR_S,
                                                PF_DIR_NW, PF_DIR_NE, PF_DIR_SW, PF_DIR_SE};

/* In-cluster Dijkstra */

pf_status pf__hpa_dij_init(pf__hpa_dij *s, int32_t cs) {
    size_t cells = (size_t)cs * (size_t)cs;
    memset(s, 0, sizeof(*s));
    s->cells = (int32_t)cells;
    s->dist = malloc(cells * sizeof(*s->dist));
    s->dir = malloc(cells);
    s->target = calloc(cells, 1);
    s->state = malloc(3 * cells * sizeof(*s->state));
    if (!s->dist || !s->dir || !s->state || !s->target) {
        pf__hpa_dij_free(s);
        return PF_ENOMEM;
    }
    s->next = s->state + cells;
    s->prev = s->next + cells;
    return PF_OK;
}

void pf__hpa_dij_free(pf__hpa_dij *s) {
    free(s->dist);
    free(s->dir);
    free(s->state);
    free(s->target);
    memset(s, 0, sizeof(*s));
}

static inline void bucket_link(pf__hpa_dij *s, int32_t slot, int32_t li) {
    int32_t h = s->head[slot];
    s->prev[li] = -1 - slot; /* a negative prev names the bucket the cell heads */
    s->next[li] = h;
    if (h >= 0) s->prev[h] = li;
    s->head[slot] = li;
}

static inline void bucket_unlink(pf__hpa_dij *s, int32_t li) {
    int32_t p = s->prev[li], n = s->next[li];
    if (p >= 0) s->next[p] = n;
    else s->head[-1 - p] = n;
    if (n >= 0) s->prev[n] = p;
}

void pf__hpa_dijkstra(const pf_grid *g, int32_t x0, int32_t y0, int32_t bw, int32_t bh, int32_t cs,
                      int32_t sx, int32_t sy, bool reverse, const int32_t *targets,
                      int32_t ntargets, pf__hpa_dij *s) {
    const int32_t w = g->w;
    const uint8_t *cost = g->cost, *moves = g->moves;
    int32_t goff[PF_DIR_COUNT], loff[PF_DIR_COUNT];
    double len[PF_DIR_COUNT];
    int cmin = 255, cmax = 1;
    int32_t nb, mask, cur = 0, queued = 0, waiting = 0;
    double width, inv_width;

    for (int d = 0; d < PF_DIR_COUNT; d++) {
        goff[d] = pf_dir_dx[d] + pf_dir_dy[d] * w;
        loff[d] = pf_dir_dx[d] + pf_dir_dy[d] * cs;
        len[d] = pf__dir_len(d);
    }
    if (bw < cs || bh < cs) /* a cluster at the map's edge: keep its trees deterministic */
        memset(s->dir, PF__HPA_NO_DIR, (size_t)cs * (size_t)cs);
    for (int32_t ly = 0; ly < bh; ly++) {
        const uint8_t *row = cost + (size_t)(y0 + ly) * w + x0;
        for (int32_t lx = 0; lx < bw; lx++) {
            int32_t li = ly * cs + lx;
            s->dist[li] = INFINITY;
            s->dir[li] = PF__HPA_NO_DIR;
            s->state[li] = -1;
            if (row[lx]) {
                if (row[lx] < cmin) cmin = row[lx];
                if (row[lx] > cmax) cmax = row[lx];
            }
        }
    }
    /* Every step costs at least cmin and at most cmax * sqrt 2, so live
     * tentative distances span fewer than nb buckets of width cmin. */
    width = (double)cmin;
    inv_width = 1.0 / width;
    nb = (int32_t)(cmax * PF_SQRT2 / width) + 2;
    for (mask = 1; mask < nb; mask *= 2) continue;
    nb = mask--;
    for (int32_t b = 0; b < nb; b++) s->head[b] = -1;
    for (int32_t i = 0; i < ntargets; i++) {
        waiting += !s->target[targets[i]];
        s->target[targets[i]] = 1;
    }
    {
        int32_t li = (sy - y0) * cs + (sx - x0);
        s->dist[li] = 0.0;
        s->state[li] = 0;
        bucket_link(s, 0, li);
        queued = 1;
    }
    while (queued > 0) {
        int32_t li, lx, ly, c;
        uint8_t m;
        double du;
        while (s->head[cur & mask] < 0) cur++;
        li = s->head[cur & mask];
        bucket_unlink(s, li);
        queued--;
        s->state[li] = -2;
        s->expanded++;
        if (s->target[li] && --waiting == 0 && ntargets > 0) break;
        lx = li % cs;
        ly = li / cs;
        c = (y0 + ly) * w + x0 + lx;
        m = moves[c];
        du = s->dist[li];
        /* Drop the moves that leave the box. */
        if (lx == 0) m &= (uint8_t) ~((1u << PF_DIR_W) | (1u << PF_DIR_SW) | (1u << PF_DIR_NW));
        if (lx == bw - 1) m &= (uint8_t) ~((1u << PF_DIR_E) | (1u << PF_DIR_SE) | (1u << PF_DIR_NE));
        if (ly == 0) m &= (uint8_t) ~((1u << PF_DIR_N) | (1u << PF_DIR_NE) | (1u << PF_DIR_NW));
        if (ly == bh - 1) m &= (uint8_t) ~((1u << PF_DIR_S) | (1u << PF_DIR_SE) | (1u << PF_DIR_SW));
        for (unsigned mm = m; mm; mm &= mm - 1) {
            int d = __builtin_ctz(mm);
            int32_t nli, b;
            double nd;
            nli = li + loff[d];
            if (s->state[nli] == -2) continue;
            nd = du + (reverse ? cost[c] : cost[c + goff[d]]) * len[d];
            if (!(nd < s->dist[nli])) continue;
            s->dist[nli] = nd;
            s->dir[nli] = opposite8[d];
            b = (int32_t)(nd * inv_width);
            if (b < cur) b = cur; /* rounding at a bucket edge */
            if (s->state[nli] >= 0) bucket_unlink(s, nli);
            else queued++;
            s->state[nli] = b;
            bucket_link(s, b & mask, nli);
        }
    }
    for (int32_t i = 0; i < ntargets; i++) s->target[targets[i]] = 0;
}

/* Entrances */

/* The transitions of one border: between cluster k and its east neighbour
 * (vertical border) or its south neighbour (horizontal border). Cells a lie
 * in k, cells b in the neighbour. */
typedef struct border_scan {
    int32_t n, cap;
    int32_t *a, *b;   /* transition pairs */
    int32_t nruns;
    int32_t *ra, *rb; /* first pair of each run, for the region unions */
    int32_t *rs, *re; /* each run's first and one-past-last index along the border */
    int32_t *grp;     /* group of each run */
    int32_t ngroups;
} border_scan;

static void emit_pair(border_scan *o, int32_t acell, int32_t step, int32_t boff, int32_t i) {
    o->a[o->n] = acell + i * step;
    o->b[o->n++] = acell + i * step + boff;
}

/* A run is a maximal sequence of pairs (a_i, b_i) across the border where
 * the step a_i -> b_i is allowed and consecutive cells are joined along the
 * border on both sides (a_{i-1} -> a_i and b_{i-1} -> b_i allowed; this only
 * matters with wall edges). All cells of a run lie in one region of each
 * cluster. Runs whose two regions are the same are interchangeable -- a
 * crossing through one can be replaced by a crossing through another plus
 * moves inside the two regions -- so they form one entrance, which keeps
 * the graph complete (every reachable goal is found) with fewer nodes on
 * cluttered maps. Transitions follow Botea et al. (2004, section 3): an
 * entrance of one run shorter than LONG_ENTRANCE gets one in its middle,
 * any other entrance one at each end.
 * Diagonal steps across a border need no entrance of their own: each has an
 * open L route of two orthogonal steps, one of which crosses the same
 * border. Region labels of both clusters must be current. */
static void scan_border(const pf_hpa *h, const pf_grid *g, int32_t k, bool south, border_scan *o) {
    int32_t x0, y0, bw, bh, acell, step, boff, len;
    uint8_t cross, along;
    int32_t run = -1;
    pf__hpa_box(h, k, &x0, &y0, &bw, &bh);
    if (!south) {
        acell = y0 * h->w + x0 + bw - 1;
        step = h->w;
        boff = 1;
        len = bh;
        cross = 1u << PF_DIR_E;
        along = 1u << PF_DIR_S;
    } else {
        acell = (y0 + bh - 1) * h->w + x0;
        step = 1;
        boff = h->w;
        len = bw;
        cross = 1u << PF_DIR_S;
        along = 1u << PF_DIR_E;
    }
    o->n = 0;
    o->nruns = 0;
    o->ngroups = 0;
    for (int32_t i = 0; i <= len; i++) {
        int32_t a = acell + i * step;
        bool valid = i < len && (g->moves[a] & cross);
        bool cont = valid && run >= 0 && (g->moves[a - step] & along) &&
                    (g->moves[a - step + boff] & along);
        if (run >= 0 && !cont) {
            int32_t r = o->nruns++, ca = acell + run * step;
            o->ra[r] = ca;
            o->rb[r] = ca + boff;
            o->rs[r] = run;
            o->re[r] = i;
            o->grp[r] = -1;
            for (int32_t q = 0; q < r; q++)
                if (h->region[o->ra[q]] == h->region[ca] &&
                    h->region[o->rb[q]] == h->region[ca + boff]) {
                    o->grp[r] = o->grp[q];
                    break;
                }
            if (o->grp[r] < 0) o->grp[r] = o->ngroups++;
            run = -1;
        }
        if (valid && run < 0) run = i;
    }
    for (int32_t gi = 0; gi < o->ngroups; gi++) {
        int32_t first = -1, last = -1, nr = 0, longest = -1;
        for (int32_t r = 0; r < o->nruns; r++) {
            if (o->grp[r] != gi) continue;
            if (first < 0) first = r;
            last = r;
            nr++;
            if (longest < 0 || o->re[r] - o->rs[r] > o->re[longest] - o->rs[longest]) longest = r;
        }
        if (nr == 1 && o->re[first] - o->rs[first] < LONG_ENTRANCE) {
            emit_pair(o, acell, step, boff, o->rs[first] + (o->re[first] - o->rs[first]) / 2);
        } else {
            int32_t mid = o->rs[longest] + (o->re[longest] - o->rs[longest]) / 2;
            emit_pair(o, acell, step, boff, o->rs[first]);
            /* A grouped entrance also gets the middle of its longest run:
             * crossings of cluttered borders then detour less. */
            if (nr > 1 && mid != o->rs[first] && mid != o->re[last] - 1)
                emit_pair(o, acell, step, boff, mid);
            emit_pair(o, acell, step, boff, o->re[last] - 1);
        }
    }
}

static pf_status border_init(border_scan *o, int32_t cs) {
    memset(o, 0, sizeof(*o));
    o->cap = 2 * cs + 4;
    o->a = malloc(7 * (size_t)o->cap * sizeof(int32_t));
    if (!o->a) return PF_ENOMEM;
    o->b = o->a + o->cap;
    o->ra = o->b + o->cap;
    o->rb = o->ra + o->cap;
    o->rs = o->rb + o->cap;
    o->re = o->rs + o->cap;
    o->grp = o->re + o->cap;
    return PF_OK;
}

static void border_free(border_scan *o) { free(o->a); }

/* Per-cluster stage */

/* Scratch of the per-cluster stage. */
typedef struct build_scratch {
    pf__hpa_dij dij;
    border_scan bs;
    int32_t *list;  /* node cells of one cluster, up to 4 borders' worth */
    int32_t *local; /* their local indices */
    int32_t *queue; /* flood fill, cs*cs */
} build_scratch;

static pf_status scratch_init(build_scratch *s, int32_t cs) {
    pf_status st;
    memset(s, 0, sizeof(*s));
    st = pf__hpa_dij_init(&s->dij, cs);
    if (st) return st;
    st = border_init(&s->bs, cs);
    if (st) goto out_free_dij;
    s->list = malloc(4 * (size_t)s->bs.cap * sizeof(*s->list));
    s->local = malloc(4 * (size_t)s->bs.cap * sizeof(*s->local));
    s->queue = malloc((size_t)cs * (size_t)cs * sizeof(*s->queue));
    if (!s->list || !s->local || !s->queue) {
        st = PF_ENOMEM;
        goto out_free_lists;
    }
    return PF_OK;

out_free_lists:
    free(s->list);
    free(s->local);
    free(s->queue);
    border_free(&s->bs);
out_free_dij:
    pf__hpa_dij_free(&s->dij);
    return st;
}

static void scratch_free(build_scratch *s) {
    free(s->list);
    free(s->local);
    free(s->queue);
    border_free(&s->bs);
    pf__hpa_dij_free(&s->dij);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The transition cells of cluster k, sorted and without duplicates (a cell
 * at a cluster corner can be a transition of two borders). */
static int32_t cluster_nodes(const pf_hpa *h, const pf_grid *g, int32_t k, build_scratch *s) {
    int32_t cx = k % h->ncx, cy = k / h->ncx, n = 0, m = 0;
    if (cx + 1 < h->ncx) {
        scan_border(h, g, k, false, &s->bs);
        for (int32_t i = 0; i < s->bs.n; i++) s->list[n++] = s->bs.a[i];
    }
    if (cy + 1 < h->ncy) {
        scan_border(h, g, k, true, &s->bs);
        for (int32_t i = 0; i < s->bs.n; i++) s->list[n++] = s->bs.a[i];
    }
    if (cx > 0) {
        scan_border(h, g, k - 1, false, &s->bs);
        for (int32_t i = 0; i < s->bs.n; i++) s->list[n++] = s->bs.b[i];
    }
    if (cy > 0) {
        scan_border(h, g, k - h->ncx, true, &s->bs);
        for (int32_t i = 0; i < s->bs.n; i++) s->list[n++] = s->bs.b[i];
    }
    qsort(s->list, (size_t)n, sizeof(*s->list), cmp_i32);
    for (int32_t i = 0; i < n; i++)
        if (m == 0 || s->list[m - 1] != s->list[i]) s->list[m++] = s->list[i];
    return m;
}

/* Where the per-cluster data of cluster k lives while a hierarchy is being
 * assembled: in the old hierarchy (a clean cluster of a repair) or in the
 * fresh buffers (a cluster built in this run). */
typedef struct cl_ref {
    bool fresh;
    int32_t n, nreg;
    size_t cells_off, mat_off, trees_off;
} cl_ref;

typedef struct fresh_buf {
    int32_t *cells;
    size_t ncells, cap_cells;
    double *mat;
    size_t nmat, cap_mat;
    uint8_t *trees;
    size_t ntrees, cap_trees;
} fresh_buf;

static pf_status grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return PF_OK;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / elem) return PF_ENOMEM;
        nc *= 2;
    }
    void *q = realloc(*p, nc * elem);
    if (!q) return PF_ENOMEM;
    *p = q;
    *cap = nc;
    return PF_OK;
}

/* Labels the connected regions of cluster k in region[] (4- or
 * 8-connected by the grid's own move masks, restricted to the cluster);
 * returns their number. */
static int32_t label_regions(const pf_hpa *h, const pf_grid *g, int32_t k, uint16_t *region,
                             int32_t *queue) {
    int32_t x0, y0, bw, bh, nreg = 0;
    pf__hpa_box(h, k, &x0, &y0, &bw, &bh);
    for (int32_t y = y0; y < y0 + bh; y++)
        for (int32_t x = x0; x < x0 + bw; x++) region[y * h->w + x] = PF__HPA_NO_REGION;
    for (int32_t y = y0; y < y0 + bh; y++)
        for (int32_t x = x0; x < x0 + bw; x++) {
            int32_t c = y * h->w + x, head = 0, tail = 0;
            if (g->cost[c] == 0 || region[c] != PF__HPA_NO_REGION) continue;
            region[c] = (uint16_t)nreg;
            queue[tail++] = c;
            while (head < tail) {
                int32_t u = queue[head++], ux = u % h->w, uy = u / h->w;
                uint8_t m = g->moves[u];
                for (int d = 0; d < PF_DIR_COUNT; d++) {
                    int32_t vx = ux + pf_dir_dx[d], vy = uy + pf_dir_dy[d], v;
                    if (!(m & (1u << d))) continue;
                    if (vx < x0 || vy < y0 || vx >= x0 + bw || vy >= y0 + bh) continue;
                    v = vy * h->w + vx;
                    if (region[v] != PF__HPA_NO_REGION) continue;
                    region[v] = (uint16_t)nreg;
                    queue[tail++] = v;
                }
            }
            nreg++;
        }
    return nreg;
}

/* Stage 1 for cluster k with the n node cells in s->list: appends its node
 * cells, distance matrix and path trees to f. */
static pf_status build_cluster(const pf_hpa *h, const pf_grid *g, int32_t k, int32_t n,
                               build_scratch *s, fresh_buf *f, cl_ref *ref) {
    const size_t cells = (size_t)h->cs * (size_t)h->cs;
    int32_t x0, y0, bw, bh;
    pf_status st;

    pf__hpa_box(h, k, &x0, &y0, &bw, &bh);
    st = grow((void **)&f->cells, &f->cap_cells, f->ncells + (size_t)n, sizeof(*f->cells));
    if (!st) st = grow((void **)&f->mat, &f->cap_mat, f->nmat + (size_t)n * n, sizeof(*f->mat));
    if (!st) st = grow((void **)&f->trees, &f->cap_trees, f->ntrees + (size_t)n * cells, 1);
    if (st) return st;
    ref->fresh = true;
    ref->n = n;
    ref->cells_off = f->ncells;
    ref->mat_off = f->nmat;
    ref->trees_off = f->ntrees;
    if (n > 0) memcpy(f->cells + f->ncells, s->list, (size_t)n * sizeof(*s->list));
    for (int32_t i = 0; i < n; i++) {
        int32_t c = s->list[i];
        s->local[i] = (c / h->w - y0) * h->cs + c % h->w - x0;
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t c = s->list[i];
        double *row = f->mat + f->nmat + (size_t)i * n;
        /* Only the paths to the other nodes are ever read: stop when they
         * are all settled. */
        pf__hpa_dijkstra(g, x0, y0, bw, bh, h->cs, c % h->w, c / h->w, false, s->local, n,
                         &s->dij);
        memcpy(f->trees + f->ntrees + (size_t)i * cells, s->dij.dir, cells);
        for (int32_t j = 0; j < n; j++) {
            int32_t cj = s->list[j];
            row[j] = s->dij.dist[(cj / h->w - y0) * h->cs + cj % h->w - x0];
        }
    }
    f->ncells += (size_t)n;
    f->nmat += (size_t)n * n;
    f->ntrees += (size_t)n * cells;
    return PF_OK;
}

/* Assembly stage */

static int32_t uf_find(int32_t *parent, int32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void uf_union(int32_t *parent, int32_t a, int32_t b) {
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a != b) {
        if (a < b) parent[b] = a;
        else parent[a] = b;
    }
}

/* The node id of transition cell c (which must be one). */
static int32_t node_of(const pf_hpa *h, int32_t c) {
    int32_t k = pf__hpa_cluster_of(h, c % h->w, c / h->w);
    int32_t lo = h->cl_node_first[k], hi = h->cl_node_first[k + 1] - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (h->node_cell[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int32_t region_id(const pf_hpa *h, int32_t c) {
    int32_t k = pf__hpa_cluster_of(h, c % h->w, c / h->w);
    return h->cl_region_first[k] + h->region[c];
}

typedef struct inter_pair {
    int32_t a, b; /* node ids */
} inter_pair;

static pf_status alloc_array(void **p, size_t n, size_t elem) {
    size_t bytes;
    if (__builtin_mul_overflow(n, elem, &bytes)) return PF_ENOMEM;
    *p = malloc(bytes ? bytes : 1);
    return *p ? PF_OK : PF_ENOMEM;
}

/* Stage 2: fills every array of h but region[] (already labelled) from the
 * per-cluster data in refs (old hierarchy or fresh buffers). */
static pf_status assemble(pf_hpa *h, const pf_grid *g, const pf_hpa *old, const cl_ref *refs,
                          const fresh_buf *f, build_scratch *s) {
    const size_t cells = (size_t)h->cs * (size_t)h->cs;
    inter_pair *pairs = NULL;
    size_t npairs = 0, cap_pairs = 0;
    int32_t *uf = NULL, *cursor = NULL, nreg = 0;
    int64_t nmat = 0;
    pf_status st;

    st = alloc_array((void **)&h->cl_node_first, (size_t)h->nclusters + 1, sizeof(int32_t));
    if (!st)
        st = alloc_array((void **)&h->cl_mat_first, (size_t)h->nclusters + 1, sizeof(int64_t));
    if (!st)
        st = alloc_array((void **)&h->cl_region_first, (size_t)h->nclusters + 1, sizeof(int32_t));
    if (st) return st;
    h->nnodes = 0;
    for (int32_t k = 0; k < h->nclusters; k++) {
        h->cl_node_first[k] = h->nnodes;
        h->cl_mat_first[k] = nmat;
        h->cl_region_first[k] = nreg;
        if (refs[k].n > INT32_MAX - h->nnodes || refs[k].nreg > INT32_MAX - nreg) return PF_ELIMIT;
        h->nnodes += refs[k].n;
        nmat += (int64_t)refs[k].n * refs[k].n;
        nreg += refs[k].nreg;
    }
    h->cl_node_first[h->nclusters] = h->nnodes;
    h->cl_mat_first[h->nclusters] = nmat;
    h->cl_region_first[h->nclusters] = nreg;

    st = alloc_array((void **)&h->node_cell, (size_t)h->nnodes, sizeof(int32_t));
    if (!st) st = alloc_array((void **)&h->node_pt, (size_t)h->nnodes, sizeof(pf_point));
    if (!st) st = alloc_array((void **)&h->mat, (size_t)nmat, sizeof(double));
    if (!st) st = alloc_array((void **)&h->trees, (size_t)h->nnodes, cells);
    if (!st) st = alloc_array((void **)&h->edge_first, (size_t)h->nnodes + 1, sizeof(int32_t));
    if (!st) st = alloc_array((void **)&h->edge_inter, (size_t)h->nnodes, sizeof(int32_t));
    if (!st) st = alloc_array((void **)&h->region_comp, (size_t)nreg, sizeof(int32_t));
    if (st) return st;
    for (int32_t k = 0; k < h->nclusters; k++) {
        const cl_ref *r = &refs[k];
        if (r->n == 0) continue; /* fresh buffers may still be NULL */
        const int32_t *src_cells = r->fresh ? f->cells + r->cells_off : old->node_cell + r->cells_off;
        const double *src_mat = r->fresh ? f->mat + r->mat_off : old->mat + r->mat_off;
        const uint8_t *src_trees = r->fresh ? f->trees + r->trees_off : old->trees + r->trees_off;
        int32_t first = h->cl_node_first[k];
        memcpy(h->node_cell + first, src_cells, (size_t)r->n * sizeof(int32_t));
        memcpy(h->mat + h->cl_mat_first[k], src_mat, (size_t)r->n * r->n * sizeof(double));
        memcpy(h->trees + (size_t)first * cells, src_trees, (size_t)r->n * cells);
        for (int32_t i = first; i < first + r->n; i++) {
            h->node_pt[i].x = h->node_cell[i] % h->w;
            h->node_pt[i].y = h->node_cell[i] / h->w;
        }
    }

    /* Inter-cluster edges and region unions, border by border. */
    st = alloc_array((void **)&uf, (size_t)nreg, sizeof(int32_t));
    if (st) goto out_free;
    for (int32_t i = 0; i < nreg; i++) uf[i] = i;
    h->nentrances = 0;
    for (int32_t k = 0; k < h->nclusters; k++)
        for (int south = 0; south < 2; south++) {
            if (!south && k % h->ncx + 1 >= h->ncx) continue;
            if (south && k / h->ncx + 1 >= h->ncy) continue;
            scan_border(h, g, k, south, &s->bs);
            h->nentrances += s->bs.ngroups;
            for (int32_t i = 0; i < s->bs.nruns; i++)
                uf_union(uf, region_id(h, s->bs.ra[i]), region_id(h, s->bs.rb[i]));
            st = grow((void **)&pairs, &cap_pairs, npairs + (size_t)s->bs.n, sizeof(*pairs));
            if (st) goto out_free;
            for (int32_t i = 0; i < s->bs.n; i++) {
                pairs[npairs].a = node_of(h, s->bs.a[i]);
                pairs[npairs++].b = node_of(h, s->bs.b[i]);
            }
        }

    /* CSR: count, then fill intra edges (matrix order) and inter edges
     * (border order), so equal inputs give equal graphs. */
    st = alloc_array((void **)&cursor, (size_t)h->nnodes + 1, sizeof(int32_t));
    if (st) goto out_free;
    for (int32_t i = 0; i <= h->nnodes; i++) cursor[i] = 0;
    for (int32_t k = 0; k < h->nclusters; k++) {
        int32_t first = h->cl_node_first[k], n = h->cl_node_first[k + 1] - first;
        const double *m = h->mat + h->cl_mat_first[k];
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++)
                if (i != j && isfinite(m[(size_t)i * n + j])) cursor[first + i]++;
    }
    for (size_t p = 0; p < npairs; p++) {
        cursor[pairs[p].a]++;
        cursor[pairs[p].b]++;
    }
    h->nedges = 0;
    for (int32_t i = 0; i < h->nnodes; i++) {
        int32_t d = cursor[i];
        if (h->nedges > INT32_MAX - d) {
            st = PF_ELIMIT;
            goto out_free;
        }
        h->edge_first[i] = (int32_t)h->nedges;
        cursor[i] = (int32_t)h->nedges;
        h->nedges += d;
    }
    h->edge_first[h->nnodes] = (int32_t)h->nedges;
    st = alloc_array((void **)&h->edge_to, (size_t)h->nedges, sizeof(int32_t));
    if (!st) st = alloc_array((void **)&h->edge_cost, (size_t)h->nedges, sizeof(double));
    if (st) goto out_free;
    for (int32_t k = 0; k < h->nclusters; k++) {
        int32_t first = h->cl_node_first[k], n = h->cl_node_first[k + 1] - first;
        const double *m = h->mat + h->cl_mat_first[k];
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++) {
                double c = m[(size_t)i * n + j];
                if (i == j || !isfinite(c)) continue;
                h->edge_to[cursor[first + i]] = first + j;
                h->edge_cost[cursor[first + i]++] = c;
            }
    }
    for (int32_t i = 0; i < h->nnodes; i++) h->edge_inter[i] = cursor[i];
    for (size_t p = 0; p < npairs; p++) {
        int32_t a = pairs[p].a, b = pairs[p].b;
        h->edge_to[cursor[a]] = b;
        h->edge_cost[cursor[a]++] = g->cost[h->node_cell[b]];
        h->edge_to[cursor[b]] = a;
        h->edge_cost[cursor[b]++] = g->cost[h->node_cell[a]];
    }

    /* Components, numbered in order of their smallest region. */
    h->ncomponents = 0;
    for (int32_t i = 0; i < nreg; i++) {
        int32_t r = uf_find(uf, i);
        h->region_comp[i] = r == i ? (int32_t)h->ncomponents++ : h->region_comp[r];
    }

    h->memory = sizeof(*h) + (size_t)h->w * h->h * sizeof(uint16_t) +
                ((size_t)h->nclusters + 1) * (2 * sizeof(int32_t) + sizeof(int64_t)) +
                (size_t)h->nnodes * (sizeof(int32_t) * 3 + sizeof(pf_point) + cells) +
                (size_t)nmat * sizeof(double) +
                (size_t)h->nedges * (sizeof(int32_t) + sizeof(double)) +
                (size_t)nreg * sizeof(int32_t);

out_free:
    free(cursor);
    free(uf);
    free(pairs);
    return st;
}

/* Build and repair */

void pf_hpa_destroy(pf_hpa *h) {
    if (!h) return;
    free(h->cl_node_first);
    free(h->node_cell);
    free(h->node_pt);
    free(h->trees);
    free(h->cl_mat_first);
    free(h->mat);
    free(h->edge_first);
    free(h->edge_inter);
    free(h->edge_to);
    free(h->edge_cost);
    free(h->region);
    free(h->cl_region_first);
    free(h->region_comp);
    free(h);
}

/* A hierarchy with its geometry set and every array NULL. */
static pf_status hpa_alloc(const pf_grid *g, int32_t cs, pf_hpa **out) {
    pf_hpa *h = calloc(1, sizeof(*h));
    *out = NULL;
    if (!h) return PF_ENOMEM;
    h->w = g->w;
    h->h = g->h;
    h->cs = cs;
    h->ncx = (g->w + cs - 1) / cs;
    h->ncy = (g->h + cs - 1) / cs;
    h->nclusters = h->ncx * h->ncy;
    h->connectivity = g->connectivity;
    h->corner_cutting = g->corner_cutting;
    h->region = malloc((size_t)g->w * (size_t)g->h * sizeof(*h->region));
    if (!h->region) {
        free(h);
        return PF_ENOMEM;
    }
    *out = h;
    return PF_OK;
}

/* Builds h's per-cluster data for the clusters marked in dirty (all when
 * old is NULL) and assembles h. */
static pf_status build_from(pf_hpa *h, const pf_grid *g, const pf_hpa *old, const uint8_t *dirty) {
    build_scratch s;
    fresh_buf f;
    cl_ref *refs;
    pf_status st;

    memset(&f, 0, sizeof(f));
    refs = calloc((size_t)h->nclusters, sizeof(*refs));
    if (!refs) return PF_ENOMEM;
    st = scratch_init(&s, h->cs);
    if (st) goto out_free_refs;
    /* Regions first: the entrances of a border depend on the regions of
     * both its clusters. */
    for (int32_t k = 0; k < h->nclusters; k++)
        if (!old || dirty[k]) refs[k].nreg = label_regions(h, g, k, h->region, s.queue);
    for (int32_t k = 0; k < h->nclusters; k++) {
        if (old && !dirty[k]) {
            refs[k].fresh = false;
            refs[k].n = old->cl_node_first[k + 1] - old->cl_node_first[k];
            refs[k].nreg = old->cl_region_first[k + 1] - old->cl_region_first[k];
            refs[k].cells_off = (size_t)old->cl_node_first[k];
            refs[k].mat_off = (size_t)old->cl_mat_first[k];
            refs[k].trees_off = (size_t)old->cl_node_first[k] * (size_t)h->cs * (size_t)h->cs;
            continue;
        }
        int32_t n = cluster_nodes(h, g, k, &s);
        st = build_cluster(h, g, k, n, &s, &f, &refs[k]);
        if (st) goto out_free_scratch;
    }
    st = assemble(h, g, old, refs, &f, &s);

out_free_scratch:
    scratch_free(&s);
    free(f.cells);
    free(f.mat);
    free(f.trees);
out_free_refs:
    free(refs);
    return st;
}

pf_status pf_hpa_build(const pf_grid *g, const pf_hpa_params *p, pf_hpa **out) {
    int32_t cs = p && p->cluster_size ? p->cluster_size : PF_HPA_DEFAULT_CLUSTER;
    pf_hpa *h;
    pf_status st;

    *out = NULL;
    if (cs < PF__HPA_MIN_CLUSTER || cs > PF__HPA_MAX_CLUSTER) return PF_EINVAL;
    st = hpa_alloc(g, cs, &h);
    if (st) return st;
    st = build_from(h, g, NULL, NULL);
    if (st) {
        pf_hpa_destroy(h);
        return st;
    }
    *out = h;
    return PF_OK;
}

/* Whether the node cells in list[0..n) are those cluster k has in h. */
static bool same_nodes(const pf_hpa *h, int32_t k, const int32_t *list, int32_t n) {
    int32_t first = h->cl_node_first[k];
    if (h->cl_node_first[k + 1] - first != n) return false;
    return memcmp(h->node_cell + first, list, (size_t)n * sizeof(*list)) == 0;
}

pf_status pf_hpa_repair(const pf_hpa *old, const pf_grid *g, const pf_point *changed, size_t n,
                        pf_hpa **out) {
    uint8_t *dirty = NULL;
    pf_hpa *h = NULL;
    build_scratch s;
    pf_status st;

    *out = NULL;
    if (g->w != old->w || g->h != old->h || g->connectivity != old->connectivity ||
        g->corner_cutting != old->corner_cutting)
        return PF_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!pf_grid_in_bounds(g, changed[i])) return PF_ERANGE;
    st = hpa_alloc(g, old->cs, &h);
    if (st) return st;
    dirty = calloc((size_t)h->nclusters, 1);
    if (!dirty) {
        st = PF_ENOMEM;
        goto out_free_h;
    }
    st = scratch_init(&s, h->cs);
    if (st) goto out_free_dirty;
    memcpy(h->region, old->region, (size_t)h->w * (size_t)h->h * sizeof(*h->region));

    /* A changed cell (its cost, or a wall edge beside it) alters the moves
     * inside its own cluster and the entrances on that cluster's borders:
     * a move between two cells of a cluster only involves cells of the
     * cluster (a diagonal's L routes stay in its 2x2 box), and a wall edge
     * across a border lists a changed cell on each side. Those clusters are
     * rebuilt (mark 1). A 4-neighbour shares a rebuilt border: it is rebuilt
     * too when its transitions on that border moved (mark 2). */
    for (size_t i = 0; i < n; i++) dirty[pf__hpa_cluster_of(h, changed[i].x, changed[i].y)] = 1;
    for (int32_t k = 0; k < h->nclusters; k++)
        if (dirty[k]) label_regions(h, g, k, h->region, s.queue);
    for (int32_t k = 0; k < h->nclusters; k++) {
        int32_t cx = k % h->ncx, cy = k / h->ncx;
        bool near = false;
        if (dirty[k] == 1) continue;
        near = (cx > 0 && dirty[k - 1] == 1) || (cx + 1 < h->ncx && dirty[k + 1] == 1) ||
               (cy > 0 && dirty[k - h->ncx] == 1) || (cy + 1 < h->ncy && dirty[k + h->ncx] == 1);
        if (!near) continue;
        int32_t nn = cluster_nodes(h, g, k, &s);
        if (!same_nodes(old, k, s.list, nn)) dirty[k] = 2;
    }
    scratch_free(&s);
    st = build_from(h, g, old, dirty);
    if (st) goto out_free_dirty;
    free(dirty);
    *out = h;
    return PF_OK;

out_free_dirty:
    free(dirty);
out_free_h:
    pf_hpa_destroy(h);
    return st;
}

void pf_hpa_get_stats(const pf_hpa *h, pf_hpa_stats *st) {
    memset(st, 0, sizeof(*st));
    st->cluster_size = h->cs;
    st->clusters = h->nclusters;
    st->entrances = h->nentrances;
    st->abstract_nodes = h->nnodes;
    st->abstract_edges = h->nedges;
    st->components = h->ncomponents;
    st->memory_bytes = h->memory;
}

bool pf_hpa_connected(const pf_hpa *h, pf_point a, pf_point b) {
    if (a.x < 0 || a.y < 0 || a.x >= h->w || a.y >= h->h) return false;
    if (b.x < 0 || b.y < 0 || b.x >= h->w || b.y >= h->h) return false;
    int32_t ca = a.y * h->w + a.x, cb = b.y * h->w + b.x;
    if (h->region[ca] == PF__HPA_NO_REGION || h->region[cb] == PF__HPA_NO_REGION) return false;
    return h->region_comp[region_id(h, ca)] == h->region_comp[region_id(h, cb)];
}
