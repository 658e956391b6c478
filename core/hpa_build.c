/* hpa_build.c -- building and repairing the HPA* hierarchy (Botea, Mueller &
 * Schaeffer, "Near Optimal Hierarchical Path-Finding", 2004).
 *
 * A build has three stages:
 *   1. per cluster: its connected regions, its transition nodes (from the
 *      entrances on its four borders), one Dijkstra inside the cluster from
 *      each node (the exact intra-cluster distances and the cached paths);
 *   2. per border: its transition pairs and the region pairs its runs join;
 *   3. assembly: node numbering, the abstract graph in CSR form, and the
 *      connected components of the whole map (union-find over the regions
 *      joined by the runs).
 * Stages 1 and 2 produce immutable reference-counted blocks. A repair redoes
 * them only for the clusters a change can affect and the borders of those
 * clusters, shares every other block with the old version, and redoes stage
 * 3, which is linear in the abstract graph (no per-cell work, no copy of the
 * cached paths).
 */
#include "hpa_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An entrance (a maximal run of crossable cell pairs along a border) at
 * least this long gets a transition at each end, a shorter one a single
 * transition in its middle (Botea et al. 2004, section 3). */
#define LONG_ENTRANCE 6
/* ... and transitions in between, at most this many cells apart, so that a
 * path crossing an open border is never bent more than a couple of cells
 * out of its way to reach one (see scan_border). */
#define TRANSITION_SPACING 8
/* In clusters of PF_HPA_LARGE_CLUSTER or more, a run is long (two
 * transitions or more) from this many cells. A crossing bent to a run's
 * middle costs a path a few cells once per cluster side, a quarter as often
 * in clusters four times as wide, and the transitions saved are the
 * abstract search's work (a cluster's edges grow with the square of its
 * transitions). On random512-10-0, whose clutter cuts borders into runs of
 * about five cells (13 entrances a cluster side, 53 transitions a cluster),
 * 6 -> 12 took astar/hpa on the longest quarter from 16.2x to 19.9x (thread
 * CPU clock, seven interleaved runs, medians), its build from 412 to 341 ms
 * and the mean excess over all its scenarios from 0.161% to 0.174% (worst
 * 1.06% -> 1.26%). Over the 13 shared maps of 512x512 or more the largest
 * quality changes were maze512-8-0 (mean 0.003% -> 0.036%, worst 0.56% ->
 * 3.04%), AR0700SR (worst 2.34% -> 3.82%) and Cauldron (1.23% -> 2.68%);
 * room maps and maze512-1-0 stay exact. Two maps got slower, their paths
 * bent more where windows then repair them: AR0011SR 136x -> 85x,
 * maze512-8-0 66x -> 47x. 16 gave 20.8x on random512-10-0 but a worst query
 * of 5.5% on maze512-8-0 (its 8-wide corridors cross borders in runs of 8).
 * Smaller clusters keep LONG_ENTRANCE: at 12 brc202d (clusters of 16) went
 * to 0.21% mean, 6.2% worst. */
#define LONG_ENTRANCE_LARGE 12

static const uint8_t opposite8[PF_DIR_COUNT] = {PF_DIR_W,  PF_DIR_E,  PF_DIR_N,  PF_DIR_S,
                                                PF_DIR_NW, PF_DIR_NE, PF_DIR_SW, PF_DIR_SE};

/* In-cluster Dijkstra */

pf_status pf__hpa_dij_init(pf__hpa_dij *s, int32_t cs) {
    size_t cells = (size_t)cs * (size_t)cs;
    memset(s, 0, sizeof(*s));
    s->cap = s->cells = (int32_t)cells;
    s->cs = cs;
    s->dist = malloc(cells * sizeof(*s->dist));
    s->dir = malloc(cells);
    s->target = calloc(cells, 1);
    s->lcost = malloc(2 * cells);
    s->state = malloc(3 * cells * sizeof(*s->state));
    if (!s->dist || !s->dir || !s->state || !s->target || !s->lcost) {
        pf__hpa_dij_free(s);
        return PF_ENOMEM;
    }
    s->lmoves = s->lcost + cells;
    s->next = s->state + cells;
    s->prev = s->next + cells;
    return PF_OK;
}

void pf__hpa_dij_free(pf__hpa_dij *s) {
    free(s->dist);
    free(s->dir);
    free(s->state);
    free(s->target);
    free(s->lcost);
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
    if (p >= 0)
        s->next[p] = n;
    else
        s->head[-1 - p] = n;
    if (n >= 0) s->prev[n] = p;
}

void pf__hpa_dij_load(pf__hpa_dij *s, const pf_grid *g, int32_t cs, int32_t x0, int32_t y0,
                      int32_t bw, int32_t bh) {
    int lo = 255, hi = 1;
    s->cs = cs;
    s->cells = cs * cs;
    const unsigned west = (1u << PF_DIR_W) | (1u << PF_DIR_SW) | (1u << PF_DIR_NW);
    const unsigned east = (1u << PF_DIR_E) | (1u << PF_DIR_SE) | (1u << PF_DIR_NE);
    const unsigned north = (1u << PF_DIR_N) | (1u << PF_DIR_NE) | (1u << PF_DIR_NW);
    const unsigned south = (1u << PF_DIR_S) | (1u << PF_DIR_SE) | (1u << PF_DIR_SW);
    memset(s->lcost, 0, (size_t)s->cells);
    memset(s->lmoves, 0, (size_t)s->cells);
    /* Rows are copied whole and the moves leaving the box cleared on its
     * edges afterwards: this runs twice per query (the insertion
     * Dijkstras), so its inner loops stay free of tests. */
    for (int32_t ly = 0; ly < bh; ly++) {
        const uint8_t *crow = g->cost + (size_t)(y0 + ly) * g->w + x0;
        uint8_t *lm = s->lmoves + ly * cs;
        memcpy(s->lcost + ly * cs, crow, (size_t)bw);
        memcpy(lm, g->moves + (size_t)(y0 + ly) * g->w + x0, (size_t)bw);
        lm[0] &= (uint8_t)~west;
        lm[bw - 1] &= (uint8_t)~east;
        for (int32_t lx = 0; lx < bw; lx++) {
            int c = crow[lx], cl = c ? c : 255; /* blocked cells do not count */
            lo = cl < lo ? cl : lo;
            hi = c > hi ? c : hi;
        }
    }
    for (int32_t lx = 0; lx < bw; lx++) {
        s->lmoves[lx] &= (uint8_t)~north;
        s->lmoves[(bh - 1) * cs + lx] &= (uint8_t)~south;
    }
    s->cmin = lo;
    s->cmax = hi;
}

/* The search loop; `uniform` and `reverse` are constants at each call, so
 * each variant compiles to its own loop. A step into a cell pays the
 * entered cell's cost: forward that is the neighbour, reverse (towards the
 * source) the cell being expanded; on a uniform box every step of a
 * direction costs the same. */
static inline void dijkstra_loop(pf__hpa_dij *s, int32_t src, const bool uniform,
                                 const bool reverse, int32_t ntargets, int32_t waiting) {
    const uint8_t *lcost = s->lcost, *lmoves = s->lmoves;
    int32_t loff[PF_DIR_COUNT];
    double len[PF_DIR_COUNT], stepc[PF_DIR_COUNT];
    int32_t nb, mask, cur = 0, queued;
    double inv_width;

    for (int d = 0; d < PF_DIR_COUNT; d++) {
        loff[d] = pf_dir_dx[d] + pf_dir_dy[d] * s->cs;
        len[d] = pf__dir_len(d);
        stepc[d] = s->cmin * len[d];
    }
    /* Every step costs at least cmin and at most cmax * sqrt 2, so live
     * tentative distances span fewer than nb buckets of width cmin. */
    inv_width = 1.0 / (double)s->cmin;
    nb = (int32_t)(s->cmax * PF_SQRT2 / (double)s->cmin) + 2;
    for (mask = 1; mask < nb; mask *= 2) continue;
    nb = mask--;
    for (int32_t b = 0; b < nb; b++) s->head[b] = -1;
    s->dist[src] = 0.0;
    s->state[src] = 0;
    bucket_link(s, 0, src);
    queued = 1;
    while (queued > 0) {
        int32_t li;
        unsigned m;
        double du, cu;
        while (s->head[cur & mask] < 0) cur++;
        li = s->head[cur & mask];
        bucket_unlink(s, li);
        queued--;
        s->state[li] = -2;
        s->expanded++;
        if (s->target[li] && --waiting == 0 && ntargets > 0) break;
        m = lmoves[li];
        du = s->dist[li];
        cu = lcost[li];
        for (; m; m &= m - 1) {
            int d = __builtin_ctz(m);
            int32_t nli = li + loff[d], b;
            double nd = du + (uniform ? stepc[d] : (reverse ? cu : lcost[nli]) * len[d]);
            /* A settled cell fails this test too: it lies in an earlier
             * bucket or in this one, below du + cmin <= nd. */
            if (!(nd < s->dist[nli])) continue;
            s->dist[nli] = nd;
            s->dir[nli] = opposite8[d];
            b = (int32_t)(nd * inv_width);
            if (b < cur) b = cur; /* rounding at a bucket edge */
            if (s->state[nli] >= 0)
                bucket_unlink(s, nli);
            else
                queued++;
            s->state[nli] = b;
            bucket_link(s, b & mask, nli);
        }
    }
}

void pf__hpa_dijkstra(pf__hpa_dij *s, int32_t src, bool reverse, const int32_t *targets,
                      int32_t ntargets) {
    int32_t waiting = 0;
    for (int32_t i = 0; i < s->cells; i++) s->dist[i] = INFINITY;
    memset(s->dir, PF__HPA_NO_DIR, (size_t)s->cells);
    memset(s->state, 0xFF, (size_t)s->cells * sizeof(*s->state)); /* -1: unseen */
    for (int32_t i = 0; i < ntargets; i++) {
        waiting += !s->target[targets[i]];
        s->target[targets[i]] = 1;
    }
    if (s->cmin == s->cmax)
        dijkstra_loop(s, src, true, false, ntargets, waiting);
    else if (reverse)
        dijkstra_loop(s, src, false, true, ntargets, waiting);
    else
        dijkstra_loop(s, src, false, false, ntargets, waiting);
    for (int32_t i = 0; i < ntargets; i++) s->target[targets[i]] = 0;
}

static inline uint16_t region_of_cell(const pf_hpa *h, int32_t c) {
    return pf__hpa_region_at(h, c % h->w, c / h->w);
}

/* Entrances */

/* The transitions of one border: between cluster k and its east neighbour
 * (vertical border) or its south neighbour (horizontal border). Cells a lie
 * in k, cells b in the neighbour. */
typedef struct border_scan {
    int32_t n, cap;
    int32_t *a, *b; /* transition pairs */
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
 * cluster. Each run is an entrance. Transitions follow Botea et al. (2004,
 * section 3) -- a run shorter than LONG_ENTRANCE (LONG_ENTRANCE_LARGE in
 * large clusters) gets one in its middle, a
 * longer one one at each end -- plus, on a long run, evenly spaced ones
 * between the ends, at most TRANSITION_SPACING cells apart.
 *
 * Why so many: a path must cross a border at a transition, and one that
 * would cross a 16-cell open border in its middle detours to an end. The
 * line shortcuts of the query undo that detour only where the grid lets a
 * straight line through, and where the detour makes the abstract search
 * prefer another route (the other side of an obstacle) nothing undoes it.
 * Runs joining the same two regions used to share one entrance (first,
 * last, and the middle of the longest run), which on cluttered borders
 * forced crossings several runs away. Measured over all 56808 shared
 * scenarios with the query of hpa_query.c: ends only, 24 queries more than
 * 5% over the optimum on 8 maps (maze512-8-0 7, Berlin_0_256 4, ost003d 4);
 * a middle transition too (spacing 8: three on a 16-cell run), none; one
 * shared entrance for the runs of the same regions, random512-40-0's mean
 * 0.78% against 0.20%. Cost against the sparse transitions (pf_hpa_build,
 * best of three): abstract nodes +35-70% on open maps (AR0011SR 2644 ->
 * 4378, Berlin_1_1024 15392 -> 27198), memory +25-80% (random512-10-0
 * 5.7 -> 12.2 MiB), build +30-70% (Berlin_1_1024 46 -> 77 ms), repair of
 * one cell 1.5-3.4x (Boston_0_512 0.17 -> 0.56 ms; the reassembly is linear
 * in the abstract edges, which grow with the square of a cluster's
 * transitions); mazes and random512-40-0, whose runs are short, unchanged.
 * Diagonal steps across a border need no entrance of their own: each has an
 * open L route of two orthogonal steps, one of which crosses the same
 * border. Region labels of both clusters must be current. */
static void scan_border(const pf_hpa *h, const pf_grid *g, int32_t k, bool south, border_scan *o) {
    int32_t x0, y0, bw, bh, acell, step, boff, len;
    uint8_t cross, along;
    int32_t run = -1;
    const int32_t long_run = h->cs >= PF_HPA_LARGE_CLUSTER ? LONG_ENTRANCE_LARGE : LONG_ENTRANCE;
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
            int32_t r = o->nruns++, ca = acell + run * step, rl = i - run;
            o->ra[r] = ca;
            o->rb[r] = ca + boff;
            o->rs[r] = run;
            o->re[r] = i;
            o->grp[r] = o->ngroups++;
            if (rl < long_run) {
                emit_pair(o, acell, step, boff, run + rl / 2);
            } else {
                /* Ends at 0 and rl - 1, and gaps of at most TRANSITION_SPACING
                 * between: m gaps, transition q at q (rl - 1) / m. */
                int32_t m = (rl - 1 + TRANSITION_SPACING - 1) / TRANSITION_SPACING;
                for (int32_t q = 0; q <= m; q++)
                    emit_pair(o, acell, step, boff, run + q * (rl - 1) / m);
            }
            run = -1;
        }
        if (valid && run < 0) run = i;
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
    int32_t *tg;    /* the targets of one in-cluster Dijkstra */
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
    s->tg = malloc(4 * (size_t)s->bs.cap * sizeof(*s->tg));
    s->queue = malloc((size_t)cs * (size_t)cs * sizeof(*s->queue));
    if (!s->list || !s->local || !s->tg || !s->queue) {
        st = PF_ENOMEM;
        goto out_free_lists;
    }
    return PF_OK;

out_free_lists:
    free(s->list);
    free(s->local);
    free(s->tg);
    free(s->queue);
    border_free(&s->bs);
out_free_dij:
    pf__hpa_dij_free(&s->dij);
    return st;
}

static void scratch_free(build_scratch *s) {
    free(s->list);
    free(s->local);
    free(s->tg);
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

/* Sizes, shared by the builders and pf_hpa_size */

/* A cluster block of `cells` local cells with n nodes and m intra edges:
 * the block and its region table, then cluster_fill's two allocations. */
static size_t cluster_bytes(size_t cells, int32_t n, int32_t m) {
    return sizeof(pf__hpa_cluster) + cells * sizeof(uint16_t) +
           (size_t)n * (size_t)n * sizeof(double) + (2 * (size_t)n + 1) * sizeof(int32_t) +
           (size_t)n * cells + (size_t)m * (sizeof(double) + sizeof(int32_t));
}

/* A border block of n transition pairs and nruns runs. */
static size_t border_bytes(int32_t n, int32_t nruns) {
    return sizeof(pf__hpa_border) + 2 * (size_t)n * sizeof(int32_t) +
           2 * (size_t)nruns * sizeof(uint16_t);
}

/* The hierarchy's own arrays (hpa_alloc, assemble, peel_dead_ends) plus
 * `blocks`, the bytes of its cluster and border blocks. */
static size_t hpa_bytes(int32_t nclusters, int64_t nnodes, int64_t nedges, int64_t nreg,
                        size_t blocks) {
    return sizeof(pf_hpa) + (size_t)nclusters * 3 * sizeof(void *) +
           ((size_t)nclusters + 1) * 2 * sizeof(int32_t) +
           (size_t)nnodes * (sizeof(pf_point) + 2 * sizeof(int32_t)) +
           (size_t)nedges * (sizeof(int32_t) + sizeof(double)) + (size_t)nreg * sizeof(int32_t) +
           ((size_t)nreg + (size_t)nnodes) * sizeof(pf__hpa_span) + blocks;
}

/* Blocks */

static pf__hpa_cluster *cluster_ref(pf__hpa_cluster *c) {
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

static void cluster_release(pf__hpa_cluster *c) {
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) return;
    free(c->mat);
    free(c->intra_cost);
    free(c);
}

static pf__hpa_border *border_ref(pf__hpa_border *b) {
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

static void border_release(pf__hpa_border *b) {
    if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1) return;
    free(b);
}

/* A cluster block with its region table and nothing else yet. */
static pf__hpa_cluster *cluster_new(int32_t cs) {
    size_t cells = (size_t)cs * (size_t)cs;
    pf__hpa_cluster *c = malloc(sizeof(*c) + cells * sizeof(uint16_t));
    if (!c) return NULL;
    memset(c, 0, sizeof(*c));
    atomic_init(&c->refs, 1);
    c->region = (uint16_t *)(c + 1);
    return c;
}

/* Labels the connected regions of cluster k in its local table region[]
 * (4- or 8-connected by the grid's own move masks, restricted to the
 * cluster); returns their number. */
static int32_t label_regions(const pf_hpa *h, const pf_grid *g, int32_t k, uint16_t *region,
                             int32_t *queue) {
    const int32_t cs = h->cs, w = h->w;
    int32_t x0, y0, bw, bh, nreg = 0, loff[PF_DIR_COUNT];
    pf__hpa_box(h, k, &x0, &y0, &bw, &bh);
    for (int d = 0; d < PF_DIR_COUNT; d++) loff[d] = pf_dir_dx[d] + pf_dir_dy[d] * cs;
    for (int32_t i = 0; i < cs * cs; i++) region[i] = PF__HPA_NO_REGION;
    for (int32_t ly = 0; ly < bh; ly++)
        for (int32_t lx = 0; lx < bw; lx++) {
            int32_t li = ly * cs + lx, head = 0, tail = 0;
            if (g->cost[(y0 + ly) * w + x0 + lx] == 0 || region[li] != PF__HPA_NO_REGION) continue;
            region[li] = (uint16_t)nreg;
            queue[tail++] = li;
            while (head < tail) {
                int32_t u = queue[head++], ux = u % cs, uy = u / cs;
                unsigned m = g->moves[(y0 + uy) * w + x0 + ux];
                if (ux == 0) m &= ~((1u << PF_DIR_W) | (1u << PF_DIR_SW) | (1u << PF_DIR_NW));
                if (ux == bw - 1) m &= ~((1u << PF_DIR_E) | (1u << PF_DIR_SE) | (1u << PF_DIR_NE));
                if (uy == 0) m &= ~((1u << PF_DIR_N) | (1u << PF_DIR_NE) | (1u << PF_DIR_NW));
                if (uy == bh - 1) m &= ~((1u << PF_DIR_S) | (1u << PF_DIR_SE) | (1u << PF_DIR_SW));
                for (; m; m &= m - 1) {
                    int32_t v = u + loff[__builtin_ctz(m)];
                    if (region[v] != PF__HPA_NO_REGION) continue;
                    region[v] = (uint16_t)nreg;
                    queue[tail++] = v;
                }
            }
            nreg++;
        }
    return nreg;
}

/* A new block for cluster k with its regions labelled. */
static pf_status cluster_begin(const pf_hpa *h, const pf_grid *g, int32_t k, build_scratch *s,
                               pf__hpa_cluster **out) {
    pf__hpa_cluster *c = cluster_new(h->cs);
    *out = c;
    if (!c) return PF_ENOMEM;
    c->nreg = label_regions(h, g, k, c->region, s->queue);
    return PF_OK;
}

/* Fills block c of cluster k with its n node cells s->list[0..n): the
 * distance matrix, the intra edges and the path trees. PF_ECANCELED when
 * stop said stop (polled after each Dijkstra: its cells and settled
 * nodes). */
static pf_status cluster_fill(const pf_hpa *h, const pf_grid *g, int32_t k, int32_t n,
                              build_scratch *s, pf__hpa_cluster *c, pf_build_stop *stop) {
    const size_t cells = (size_t)h->cs * (size_t)h->cs, nn = (size_t)n * (size_t)n;
    int32_t x0, y0, bw, bh, m = 0;
    char *mem;

    pf__hpa_box(h, k, &x0, &y0, &bw, &bh);
    pf__hpa_dij_load(&s->dij, g, h->cs, x0, y0, bw, bh);
    c->n = n;
    c->sym = s->dij.cmin == s->dij.cmax;
    /* n <= 4 * cs and cells <= 64 * 64: no overflow. */
    mem =
        malloc(nn * sizeof(double) + (2 * (size_t)n + 1) * sizeof(int32_t) + (size_t)n * cells + 1);
    if (!mem) return PF_ENOMEM;
    /* One allocation carved into arrays, widest first (through void *: the
     * bytes are never read as another type). */
    c->mat = (void *)mem;
    c->intra_first = (void *)(c->mat + nn);
    c->cell = c->intra_first + n + 1;
    c->trees = (uint8_t *)(c->cell + n);
    if (n > 0) memcpy(c->cell, s->list, (size_t)n * sizeof(*c->cell));
    for (int32_t i = 0; i < n; i++) {
        int32_t cc = s->list[i];
        s->local[i] = (cc / h->w - y0) * h->cs + cc % h->w - x0;
    }
    for (int32_t i = 0; i < n; i++) {
        double *row = c->mat + (size_t)i * n;
        uint8_t *tree = c->trees + (size_t)i * cells;
        uint16_t reg = c->region[s->local[i]];
        int32_t ntg = 0;
        /* In a cluster of varying costs only the paths to the other nodes
         * of the node's own region are ever read (the others are
         * unreachable inside the cluster): stop when they are all settled.
         * Waiting for an unreachable node would search the whole region. A
         * symmetric cluster's trees cover the node's whole region: a query
         * reads the distances between its ends and the cluster's nodes off
         * them instead of searching (hpa_query.c, walk_ends). */
        if (!c->sym) {
            for (int32_t j = 0; j < n; j++)
                if (j != i && c->region[s->local[j]] == reg) s->tg[ntg++] = s->local[j];
            if (ntg == 0) {
                memset(tree, PF__HPA_NO_DIR, cells);
                for (int32_t j = 0; j < n; j++) row[j] = j == i ? 0.0 : INFINITY;
                continue;
            }
        }
        {
            uint64_t before = s->dij.expanded;
            pf__hpa_dijkstra(&s->dij, s->local[i], false, s->tg, ntg);
            if (pf_build_tick(stop, cells + (s->dij.expanded - before))) return PF_ECANCELED;
        }
        memcpy(tree, s->dij.dir, cells);
        for (int32_t j = 0; j < n; j++)
            row[j] = c->sym && j < i ? c->mat[(size_t)j * n + i] : s->dij.dist[s->local[j]];
    }
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++) m += i != j && isfinite(c->mat[(size_t)i * n + j]);
    c->nintra = m;
    c->intra_cost = malloc((size_t)m * (sizeof(double) + sizeof(int32_t)) + 1);
    if (!c->intra_cost) return PF_ENOMEM;
    c->intra_to = (void *)(c->intra_cost + m); /* after the doubles: aligned */
    m = 0;
    for (int32_t i = 0; i < n; i++) {
        c->intra_first[i] = m;
        for (int32_t j = 0; j < n; j++) {
            double d = c->mat[(size_t)i * n + j];
            if (i == j || !isfinite(d)) continue;
            c->intra_to[m] = j;
            c->intra_cost[m++] = d;
        }
    }
    c->intra_first[n] = m;
    c->memory = cluster_bytes(cells, n, m);
    return PF_OK;
}

/* The index of node cell cc in block c (which must hold it). */
static int32_t local_node(const pf__hpa_cluster *c, int32_t cc) {
    int32_t lo = 0, hi = c->n - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (c->cell[mid] < cc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The block of the east (south) border of cluster k; both clusters' blocks
 * must be complete. */
static pf_status border_make(const pf_hpa *h, const pf_grid *g, int32_t k, bool south,
                             build_scratch *s, pf__hpa_border **out) {
    const border_scan *o = &s->bs;
    const pf__hpa_cluster *ca = h->cl[k], *cb = h->cl[south ? k + h->ncx : k + 1];
    pf__hpa_border *b;
    size_t bytes;

    scan_border(h, g, k, south, &s->bs);
    bytes = border_bytes(o->n, o->nruns);
    *out = b = malloc(bytes);
    if (!b) return PF_ENOMEM;
    atomic_init(&b->refs, 1);
    b->npairs = o->n;
    b->nruns = o->nruns;
    b->ngroups = o->ngroups;
    b->pa = (int32_t *)(b + 1);
    b->pb = b->pa + o->n;
    b->ra = (uint16_t *)(b->pb + o->n);
    b->rb = b->ra + o->nruns;
    b->memory = bytes;
    for (int32_t i = 0; i < o->n; i++) {
        b->pa[i] = local_node(ca, o->a[i]);
        b->pb[i] = local_node(cb, o->b[i]);
    }
    for (int32_t r = 0; r < o->nruns; r++) {
        b->ra[r] = region_of_cell(h, o->ra[r]);
        b->rb[r] = region_of_cell(h, o->rb[r]);
    }
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
        if (a < b)
            parent[b] = a;
        else
            parent[a] = b;
    }
}

static pf_status alloc_array(void **p, size_t n, size_t elem) {
    size_t bytes;
    if (__builtin_mul_overflow(n, elem, &bytes)) return PF_ENOMEM;
    *p = malloc(bytes ? bytes : 1);
    return *p ? PF_OK : PF_ENOMEM;
}

/* The neighbour across border bi (see pf_hpa.br). */
static int32_t border_peer(const pf_hpa *h, int32_t bi) {
    return bi % 2 ? bi / 2 + h->ncx : bi / 2 + 1;
}

/* The dead-end forest of the region graph (see pf_hpa.region_span): its
 * leaves (regions with at most one transition pair left) are peeled again
 * and again, each peeled region's parent being the region its last pair
 * leads to; then each tree is numbered so that every subtree is one
 * interval. A subtree holding neither the start's nor the goal's region
 * is entered by an abstract path only through the single pair it hangs
 * by, and left only through that pair again, so a path through it visits
 * a node twice and is never the answer: the query skips it (hpa_query.c).
 * On a perfect maze the region graph is a tree and the query then only
 * looks at the regions between start and goal. Linear in regions plus
 * abstract edges; deterministic, so a repair numbers like a build.
 * PF_ECANCELED when stop said stop (polled per peeled region). */
static pf_status peel_dead_ends(pf_hpa *h, int32_t nreg, pf_build_stop *stop) {
    int32_t *mem = NULL, *node_reg, *deg, *rfirst, *rnodes, *order, *parent, *size, *cur;
    int32_t head = 0, tail = 0, next = 0;
    size_t n = (size_t)nreg, nn = (size_t)h->nnodes;
    pf_status st;

    st = alloc_array((void **)&h->region_span, n, sizeof(pf__hpa_span));
    if (!st) st = alloc_array((void **)&h->node_span, nn, sizeof(pf__hpa_span));
    /* node_reg, rnodes: nn each; deg, order, parent, size, cur: n each;
     * rfirst: n + 1. nn and n are below 2^31, so this cannot overflow. */
    if (!st) st = alloc_array((void **)&mem, 2 * nn + 6 * n + 1, sizeof(int32_t));
    if (st) return st;
    node_reg = mem;
    rnodes = node_reg + nn;
    deg = rnodes + nn;
    order = deg + n;
    parent = order + n;
    size = parent + n;
    cur = size + n;
    rfirst = cur + n;

    memset(rfirst, 0, (n + 1) * sizeof(int32_t));
    memset(deg, 0, n * sizeof(int32_t));
    for (int32_t k = 0; k < h->nclusters; k++) {
        const pf__hpa_cluster *c = h->cl[k];
        int32_t first = h->cl_node_first[k], x0 = (k % h->ncx) * h->cs, y0 = (k / h->ncx) * h->cs;
        if (pf_build_tick(stop, 1 + (uint64_t)c->n)) goto stopped;
        for (int32_t i = 0; i < c->n; i++) {
            int32_t v = first + i, x = c->cell[i] % h->w, y = c->cell[i] / h->w;
            int32_t r = h->cl_region_first[k] + c->region[(y - y0) * h->cs + x - x0];
            node_reg[v] = r;
            rfirst[r + 1]++;
            deg[r] += h->edge_first[v + 1] - h->edge_inter[v];
        }
    }
    for (int32_t r = 0; r < nreg; r++) rfirst[r + 1] += rfirst[r];
    memcpy(cur, rfirst, n * sizeof(int32_t));
    for (int32_t v = 0; v < h->nnodes; v++) {
        if (pf_build_tick_every(stop, v)) goto stopped;
        rnodes[cur[node_reg[v]]++] = v;
    }

    /* Peel. deg[r] counts r's pairs to regions not yet peeled; a region is
     * queued once, when it first has at most one. order[] is the queue. */
    for (int32_t r = 0; r < nreg; r++) {
        h->region_span[r].in = h->region_span[r].out = -1;
        parent[r] = -2; /* not peeled */
        if (deg[r] <= 1) order[tail++] = r;
    }
    while (head < tail) {
        int32_t r = order[head++];
        if (pf_build_tick(stop, 1 + (uint64_t)(rfirst[r + 1] - rfirst[r]))) goto stopped;
        parent[r] = -1;
        for (int32_t i = rfirst[r]; i < rfirst[r + 1]; i++) {
            int32_t v = rnodes[i];
            for (int32_t e = h->edge_inter[v]; e < h->edge_first[v + 1]; e++) {
                int32_t x = node_reg[h->edge_to[e]];
                if (parent[x] != -2) continue;
                parent[r] = x;
                if (--deg[x] == 1) order[tail++] = x;
            }
        }
    }
    /* Subtree sizes, children before parents (peel order), then intervals,
     * parents before children. A peeled region whose parent is in the
     * 2-core, or that has none, roots a tree. */
    for (int32_t i = 0; i < tail; i++) size[order[i]] = 1;
    for (int32_t i = 0; i < tail; i++) {
        int32_t r = order[i], p = parent[r];
        if (p >= 0 && parent[p] != -2) size[p] += size[r];
    }
    for (int32_t i = tail - 1; i >= 0; i--) {
        int32_t r = order[i], p = parent[r], in;
        if (p >= 0 && parent[p] != -2) {
            in = cur[p];
            cur[p] += size[r];
        } else {
            in = next;
            next += size[r];
        }
        h->region_span[r].in = in;
        h->region_span[r].out = in + size[r];
        cur[r] = in + 1;
    }
    for (int32_t v = 0; v < h->nnodes; v++) {
        if (pf_build_tick_every(stop, v)) goto stopped;
        h->node_span[v] = h->region_span[node_reg[v]];
    }
    free(mem);
    return PF_OK;

stopped:
    free(mem);
    return PF_ECANCELED;
}

/* Stage 3: the global arrays of h from its blocks. PF_ECANCELED when stop
 * said stop (polled per cluster and border: their nodes and edges). */
static pf_status assemble(pf_hpa *h, const pf_grid *g, pf_build_stop *stop) {
    int32_t *uf = NULL, *cursor = NULL, nreg = 0;
    size_t blocks = 0;
    pf_status st;

    st = alloc_array((void **)&h->cl_node_first, (size_t)h->nclusters + 1, sizeof(int32_t));
    if (!st)
        st = alloc_array((void **)&h->cl_region_first, (size_t)h->nclusters + 1, sizeof(int32_t));
    if (st) return st;
    h->nnodes = 0;
    for (int32_t k = 0; k < h->nclusters; k++) {
        const pf__hpa_cluster *c = h->cl[k];
        h->cl_node_first[k] = h->nnodes;
        h->cl_region_first[k] = nreg;
        if (c->n > INT32_MAX - 2 - h->nnodes || c->nreg > INT32_MAX - nreg) return PF_ELIMIT;
        h->nnodes += c->n;
        nreg += c->nreg;
        blocks += c->memory;
    }
    h->cl_node_first[h->nclusters] = h->nnodes;
    h->cl_region_first[h->nclusters] = nreg;

    st = alloc_array((void **)&h->node_pt, (size_t)h->nnodes, sizeof(pf_point));
    if (!st) st = alloc_array((void **)&h->edge_first, (size_t)h->nnodes + 1, sizeof(int32_t));
    if (!st) st = alloc_array((void **)&h->edge_inter, (size_t)h->nnodes, sizeof(int32_t));
    if (!st) st = alloc_array((void **)&h->region_comp, (size_t)nreg, sizeof(int32_t));
    if (!st) st = alloc_array((void **)&cursor, (size_t)h->nnodes + 1, sizeof(int32_t));
    if (!st) st = alloc_array((void **)&uf, (size_t)nreg, sizeof(int32_t));
    if (st) goto out_free;

    /* Degrees: intra edges from the blocks, inter edges from the borders. */
    for (int32_t k = 0; k < h->nclusters; k++) {
        const pf__hpa_cluster *c = h->cl[k];
        int32_t first = h->cl_node_first[k];
        if (pf_build_tick(stop, 1 + (uint64_t)c->n)) {
            st = PF_ECANCELED;
            goto out_free;
        }
        for (int32_t i = 0; i < c->n; i++) {
            h->node_pt[first + i].x = c->cell[i] % h->w;
            h->node_pt[first + i].y = c->cell[i] / h->w;
            cursor[first + i] = c->intra_first[i + 1] - c->intra_first[i];
        }
    }
    h->nentrances = 0;
    for (int32_t bi = 0; bi < 2 * h->nclusters; bi++) {
        const pf__hpa_border *b = h->br[bi];
        if (!b) continue;
        int32_t fa = h->cl_node_first[bi / 2], fb = h->cl_node_first[border_peer(h, bi)];
        for (int32_t p = 0; p < b->npairs; p++) {
            cursor[fa + b->pa[p]]++;
            cursor[fb + b->pb[p]]++;
        }
        h->nentrances += b->ngroups;
        blocks += b->memory;
    }
    h->nedges = 0;
    for (int32_t i = 0; i < h->nnodes; i++) {
        int32_t d = cursor[i];
        if (pf_build_tick_every(stop, i)) {
            st = PF_ECANCELED;
            goto out_free;
        }
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

    /* Intra edges in matrix order, then inter edges in border order, so
     * equal inputs give equal graphs. */
    for (int32_t k = 0; k < h->nclusters; k++) {
        const pf__hpa_cluster *c = h->cl[k];
        int32_t first = h->cl_node_first[k];
        if (pf_build_tick(stop, 1 + (uint64_t)c->n + (uint64_t)c->nintra)) {
            st = PF_ECANCELED;
            goto out_free;
        }
        for (int32_t i = 0; i < c->n; i++) {
            int32_t *cur = &cursor[first + i];
            for (int32_t e = c->intra_first[i]; e < c->intra_first[i + 1]; e++) {
                h->edge_to[*cur] = first + c->intra_to[e];
                h->edge_cost[(*cur)++] = c->intra_cost[e];
            }
            h->edge_inter[first + i] = *cur;
        }
    }
    for (int32_t i = 0; i < nreg; i++) uf[i] = i;
    for (int32_t bi = 0; bi < 2 * h->nclusters; bi++) {
        const pf__hpa_border *b = h->br[bi];
        if (!b) continue;
        if (pf_build_tick(stop, 1 + (uint64_t)b->npairs + (uint64_t)b->nruns)) {
            st = PF_ECANCELED;
            goto out_free;
        }
        int32_t ka = bi / 2, kb = border_peer(h, bi);
        int32_t fa = h->cl_node_first[ka], fb = h->cl_node_first[kb];
        for (int32_t p = 0; p < b->npairs; p++) {
            int32_t u = fa + b->pa[p], v = fb + b->pb[p];
            h->edge_to[cursor[u]] = v;
            h->edge_cost[cursor[u]++] = g->cost[h->cl[kb]->cell[b->pb[p]]];
            h->edge_to[cursor[v]] = u;
            h->edge_cost[cursor[v]++] = g->cost[h->cl[ka]->cell[b->pa[p]]];
        }
        for (int32_t r = 0; r < b->nruns; r++)
            uf_union(uf, h->cl_region_first[ka] + b->ra[r], h->cl_region_first[kb] + b->rb[r]);
    }

    /* Components, numbered in order of their smallest region. */
    h->ncomponents = 0;
    for (int32_t i = 0; i < nreg; i++) {
        int32_t r = uf_find(uf, i);
        h->region_comp[i] = r == i ? (int32_t)h->ncomponents++ : h->region_comp[r];
    }

    st = peel_dead_ends(h, nreg, stop);
    if (st) goto out_free;

    h->memory = hpa_bytes(h->nclusters, h->nnodes, h->nedges, nreg, blocks);

out_free:
    free(cursor);
    free(uf);
    return st;
}

/* Build and repair */

void pf_hpa_destroy(pf_hpa *h) {
    if (!h) return;
    if (h->cl)
        for (int32_t k = 0; k < h->nclusters; k++) cluster_release(h->cl[k]);
    if (h->br)
        for (int32_t i = 0; i < 2 * h->nclusters; i++) border_release(h->br[i]);
    free(h->cl);
    free(h->br);
    free(h->cl_node_first);
    free(h->node_pt);
    free(h->edge_first);
    free(h->edge_inter);
    free(h->edge_to);
    free(h->edge_cost);
    free(h->cl_region_first);
    free(h->region_comp);
    free(h->region_span);
    free(h->node_span);
    free(h);
}

/* Sets h's geometry for g and cluster side cs. */
static void hpa_geometry(pf_hpa *h, const pf_grid *g, int32_t cs) {
    h->w = g->w;
    h->h = g->h;
    h->cs = cs;
    h->ncx = (g->w + cs - 1) / cs;
    h->ncy = (g->h + cs - 1) / cs;
    h->nclusters = h->ncx * h->ncy;
    h->connectivity = g->connectivity;
    h->corner_cutting = g->corner_cutting;
}

/* A hierarchy with its geometry set, empty block tables and every other
 * array NULL. */
static pf_status hpa_alloc(const pf_grid *g, int32_t cs, pf_hpa **out) {
    pf_hpa *h = calloc(1, sizeof(*h));
    *out = NULL;
    if (!h) return PF_ENOMEM;
    hpa_geometry(h, g, cs);
    h->cl = calloc((size_t)h->nclusters, sizeof(*h->cl));
    h->br = calloc(2 * (size_t)h->nclusters, sizeof(*h->br));
    if (!h->cl || !h->br) {
        pf_hpa_destroy(h);
        return PF_ENOMEM;
    }
    *out = h;
    return PF_OK;
}

/* Stages 1 (nodes and trees) and 2 for the clusters marked in dirty (all
 * when old is NULL), whose blocks already hold their regions; every other
 * block is shared with old. Then stage 3. PF_ECANCELED when stop said stop
 * (polled per Dijkstra, border and assembled cluster). */
static pf_status build_rest(pf_hpa *h, const pf_grid *g, const pf_hpa *old, const uint8_t *dirty,
                            build_scratch *s, pf_build_stop *stop) {
    pf_status st;
    for (int32_t k = 0; k < h->nclusters; k++) {
        if (old && !dirty[k]) continue;
        if (pf_build_tick(stop, 4 * (uint64_t)h->cs)) return PF_ECANCELED;
        int32_t n = cluster_nodes(h, g, k, s);
        st = cluster_fill(h, g, k, n, s, h->cl[k], stop);
        if (st) return st;
    }
    for (int32_t bi = 0; bi < 2 * h->nclusters; bi++) {
        int32_t k = bi / 2, peer = border_peer(h, bi);
        if (bi % 2 ? k / h->ncx + 1 >= h->ncy : k % h->ncx + 1 >= h->ncx) continue;
        if (old && !dirty[k] && !dirty[peer]) {
            h->br[bi] = border_ref(old->br[bi]);
            continue;
        }
        if (pf_build_tick(stop, 2 * (uint64_t)h->cs)) return PF_ECANCELED;
        st = border_make(h, g, k, bi % 2, s, &h->br[bi]);
        if (st) return st;
    }
    return assemble(h, g, stop);
}

/* A hierarchy of g with cluster side cs whose blocks hold their regions
 * and nothing else yet; *nreg is the number of regions. PF_ECANCELED when
 * stop said stop (polled per cluster). */
static pf_status build_regions(const pf_grid *g, int32_t cs, build_scratch *s, pf_build_stop *stop,
                               pf_hpa **out, int64_t *nreg) {
    pf_hpa *h;
    pf_status st = hpa_alloc(g, cs, &h);
    if (st) return st;
    *nreg = 0;
    for (int32_t k = 0; k < h->nclusters && !st; k++) {
        if (pf_build_tick(stop, (uint64_t)cs * (uint64_t)cs)) {
            st = PF_ECANCELED;
            break;
        }
        st = cluster_begin(h, g, k, s, &h->cl[k]);
        if (!st) *nreg += h->cl[k]->nreg;
    }
    if (st) {
        pf_hpa_destroy(h);
        return st;
    }
    *out = h;
    return PF_OK;
}

pf_status pf_hpa_build(const pf_grid *g, const pf_hpa_params *p, pf_build_stop *stop,
                       pf_hpa **out) {
    bool large = (int64_t)g->w * g->h >= PF_HPA_LARGE_CELLS;
    int32_t cs = p && p->cluster_size ? p->cluster_size
                 : large              ? PF_HPA_LARGE_CLUSTER
                                      : PF_HPA_DEFAULT_CLUSTER;
    build_scratch s;
    pf_hpa *h;
    int64_t nreg;
    pf_status st;

    *out = NULL;
    if (cs < PF__HPA_MIN_CLUSTER || cs > PF__HPA_MAX_CLUSTER) return PF_EINVAL;
    st = scratch_init(&s, PF_HPA_FRAGMENTED_CLUSTER > cs ? PF_HPA_FRAGMENTED_CLUSTER : cs);
    if (st) return st;
    /* Regions first: the entrances of a border depend on the regions of
     * both its clusters. */
    st = build_regions(g, cs, &s, stop, &h, &nreg);
    if (st) goto out_free_scratch;
    if (!(p && p->cluster_size) && !large &&
        (double)nreg >= PF_HPA_FRAGMENTED_REGIONS * (double)h->nclusters) {
        /* A fragmented map (see PF_HPA_FRAGMENTED_CLUSTER): start again with
         * larger clusters. */
        pf_hpa_destroy(h);
        st = build_regions(g, PF_HPA_FRAGMENTED_CLUSTER, &s, stop, &h, &nreg);
        if (st) goto out_free_scratch;
    }
    st = build_rest(h, g, NULL, NULL, &s, stop);
    if (st) {
        pf_hpa_destroy(h);
        goto out_free_scratch;
    }
    *out = h;

out_free_scratch:
    scratch_free(&s);
    return st;
}

/* The regions of every cluster of h (its geometry only), labelled one
 * cluster at a time into s's scratch; -1 when stop said stop. */
static int64_t count_regions(const pf_hpa *h, const pf_grid *g, build_scratch *s, uint16_t *region,
                             pf_build_stop *stop) {
    int64_t nreg = 0;
    for (int32_t k = 0; k < h->nclusters; k++) {
        if (pf_build_tick(stop, (uint64_t)h->cs * (uint64_t)h->cs)) return -1;
        nreg += label_regions(h, g, k, region, s->queue);
    }
    return nreg;
}

pf_status pf_hpa_size(const pf_grid *g, const pf_hpa_params *p, pf_build_stop *stop,
                      pf_hpa_stats *st, size_t *allocations) {
    /* The cluster size pf_hpa_build settles on: the same rules. */
    bool large = (int64_t)g->w * g->h >= PF_HPA_LARGE_CELLS;
    int32_t cs = p && p->cluster_size ? p->cluster_size
                 : large              ? PF_HPA_LARGE_CLUSTER
                                      : PF_HPA_DEFAULT_CLUSTER;
    int64_t nreg, nnodes = 0, nedges = 0, nborders = 0;
    size_t blocks = 0, cells;
    uint16_t *region = NULL;
    int32_t *per_region = NULL;
    build_scratch s;
    pf_hpa h;
    pf_status rc;

    memset(st, 0, sizeof(*st));
    *allocations = 0;
    if (cs < PF__HPA_MIN_CLUSTER || cs > PF__HPA_MAX_CLUSTER) return PF_EINVAL;
    cells = (size_t)(PF_HPA_FRAGMENTED_CLUSTER > cs ? PF_HPA_FRAGMENTED_CLUSTER : cs);
    cells *= cells;
    rc = scratch_init(&s,
                      (int32_t)(PF_HPA_FRAGMENTED_CLUSTER > cs ? PF_HPA_FRAGMENTED_CLUSTER : cs));
    if (rc) return rc;
    region = malloc(cells * sizeof(*region));
    per_region = malloc(cells * sizeof(*per_region));
    rc = PF_ENOMEM;
    if (!region || !per_region) goto out_free;
    rc = PF_ECANCELED;
    /* The cluster size pf_hpa_build settles on. */
    memset(&h, 0, sizeof(h));
    hpa_geometry(&h, g, cs);
    if ((nreg = count_regions(&h, g, &s, region, stop)) < 0) goto out_free;
    if (!(p && p->cluster_size) && !large &&
        (double)nreg >= PF_HPA_FRAGMENTED_REGIONS * (double)h.nclusters) {
        hpa_geometry(&h, g, PF_HPA_FRAGMENTED_CLUSTER);
        if ((nreg = count_regions(&h, g, &s, region, stop)) < 0) goto out_free;
    }
    cells = (size_t)h.cs * (size_t)h.cs;
    /* Each cluster's block: its nodes as cluster_nodes lists them, and an
     * intra edge between every two nodes of one region (cluster_fill's
     * finite matrix entries: a region is what a Dijkstra inside the
     * cluster reaches). */
    for (int32_t k = 0; k < h.nclusters; k++) {
        int32_t x0, y0, bw, bh, n, m = 0, r = 0;
        if (pf_build_tick(stop, cells + 4 * (uint64_t)h.cs)) goto out_free;
        pf__hpa_box(&h, k, &x0, &y0, &bw, &bh);
        r = label_regions(&h, g, k, region, s.queue);
        n = cluster_nodes(&h, g, k, &s);
        memset(per_region, 0, (size_t)r * sizeof(*per_region));
        for (int32_t i = 0; i < n; i++)
            per_region[region[(s.list[i] / h.w - y0) * h.cs + s.list[i] % h.w - x0]]++;
        for (int32_t i = 0; i < r; i++) m += per_region[i] * (per_region[i] - 1);
        blocks += cluster_bytes(cells, n, m);
        nnodes += n;
        nedges += m;
    }
    /* Each border's block, and its pairs' inter edges, one each way. */
    for (int32_t bi = 0; bi < 2 * h.nclusters; bi++) {
        int32_t k = bi / 2;
        if (bi % 2 ? k / h.ncx + 1 >= h.ncy : k % h.ncx + 1 >= h.ncx) continue;
        if (pf_build_tick(stop, 2 * (uint64_t)h.cs)) goto out_free;
        scan_border(&h, g, k, bi % 2, &s.bs);
        blocks += border_bytes(s.bs.n, s.bs.nruns);
        nedges += 2 * (int64_t)s.bs.n;
        st->entrances += s.bs.ngroups;
        nborders++;
    }
    st->cluster_size = h.cs;
    st->clusters = h.nclusters;
    st->abstract_nodes = nnodes;
    st->abstract_edges = nedges;
    st->memory_bytes = hpa_bytes(h.nclusters, nnodes, nedges, nreg, blocks);
    /* hpa_alloc's 3, assemble's 8, peel_dead_ends' 2; 3 per cluster block
     * (cluster_new, cluster_fill's 2), 1 per border block. */
    *allocations = 13 + 3 * (size_t)h.nclusters + (size_t)nborders;
    rc = PF_OK;

out_free:
    free(region);
    free(per_region);
    scratch_free(&s);
    return rc;
}

/* Whether the node cells in list[0..n) are those of block c. */
static bool same_nodes(const pf__hpa_cluster *c, const int32_t *list, int32_t n) {
    if (c->n != n) return false;
    return n == 0 || memcmp(c->cell, list, (size_t)n * sizeof(*list)) == 0;
}

pf_status pf_hpa_repair(const pf_hpa *old, const pf_grid *g, const pf_point *changed, size_t n,
                        pf_build_stop *stop, pf_hpa **out) {
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

    /* A changed cell (its cost, or a wall edge beside it) alters the moves
     * inside its own cluster and the entrances on that cluster's borders:
     * a move between two cells of a cluster only involves cells of the
     * cluster (a diagonal's L routes stay in its 2x2 box), and a wall edge
     * across a border lists a changed cell on each side. Those clusters are
     * rebuilt (mark 1). A 4-neighbour shares a rebuilt border: it is rebuilt
     * too when its transitions on that border moved (mark 2). Its own
     * borders with other clusters cannot change (their cells and regions
     * did not), so nothing spreads further. */
    for (size_t i = 0; i < n; i++) dirty[pf__hpa_cluster_of(h, changed[i].x, changed[i].y)] = 1;
    for (int32_t k = 0; k < h->nclusters && !st; k++) {
        if (dirty[k] && pf_build_tick(stop, (uint64_t)h->cs * (uint64_t)h->cs))
            st = PF_ECANCELED;
        else if (dirty[k])
            st = cluster_begin(h, g, k, &s, &h->cl[k]);
        else
            h->cl[k] = cluster_ref(old->cl[k]);
    }
    for (int32_t k = 0; k < h->nclusters && !st; k++) {
        int32_t cx = k % h->ncx, cy = k / h->ncx;
        if (dirty[k] == 1) continue;
        if (!((cx > 0 && dirty[k - 1] == 1) || (cx + 1 < h->ncx && dirty[k + 1] == 1) ||
              (cy > 0 && dirty[k - h->ncx] == 1) || (cy + 1 < h->ncy && dirty[k + h->ncx] == 1)))
            continue;
        if (pf_build_tick(stop, 4 * (uint64_t)h->cs)) {
            st = PF_ECANCELED;
            break;
        }
        int32_t nn = cluster_nodes(h, g, k, &s);
        if (same_nodes(old->cl[k], s.list, nn)) continue;
        dirty[k] = 2;
        cluster_release(h->cl[k]);
        h->cl[k] = NULL;
        st = cluster_begin(h, g, k, &s, &h->cl[k]);
    }
    if (!st) st = build_rest(h, g, old, dirty, &s, stop);
    scratch_free(&s);
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
    uint16_t ra = pf__hpa_region_at(h, a.x, a.y), rb = pf__hpa_region_at(h, b.x, b.y);
    if (ra == PF__HPA_NO_REGION || rb == PF__HPA_NO_REGION) return false;
    return h->region_comp[h->cl_region_first[pf__hpa_cluster_of(h, a.x, a.y)] + ra] ==
           h->region_comp[h->cl_region_first[pf__hpa_cluster_of(h, b.x, b.y)] + rb];
}

pf_point pf_hpa_node_point(const pf_hpa *h, int32_t v) { return h->node_pt[v]; }

size_t pf_hpa_node_edges(const pf_hpa *h, int32_t v, const int32_t **to, const double **cost,
                         size_t *nintra) {
    int32_t a = h->edge_first[v], b = h->edge_first[v + 1];
    *to = h->edge_to + a;
    *cost = h->edge_cost + a;
    *nintra = (size_t)(h->edge_inter[v] - a);
    return (size_t)(b - a);
}
