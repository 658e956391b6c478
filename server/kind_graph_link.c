/* kind_graph_link.c -- a graph upload's auto_link (docs/graphs.md,
 * "Auto-linking"): every two nodes within max_distance not already joined
 * by an uploaded edge are candidates; each is kept when the named map's
 * version sees from one to the other (its kind's line_of_sight); the kept
 * pairs (nearest first, at most max_links_per_node a node when asked)
 * become two-way edges appended to the upload's document, so the version,
 * its export and both stores hold them as ordinary edges. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind_graph_internal.h"

/* A node's bucket: its cell of side max_distance on each axis. */
typedef struct bucket {
    int64_t c[3];
    uint32_t node;
} bucket;

static int cmp_bucket(const void *pa, const void *pb) {
    const bucket *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->c[k] != b->c[k]) return a->c[k] < b->c[k] ? -1 : 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

/* The first bucket of cell c in b[0..n), or n. */
static size_t first_of(const bucket *b, size_t n, const int64_t c[3]) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = 0;
        for (int k = 0; k < 3 && !r; k++)
            if (b[mid].c[k] != c[k]) r = b[mid].c[k] < c[k] ? -1 : 1;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static double dist(const pf_graph_doc *d, uint32_t a, uint32_t b) {
    const double *p = d->pos + 3 * (size_t)a, *q = d->pos + 3 * (size_t)b;
    double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The uploaded edges' node pairs (lower index first) in an open
 * addressing set. */
typedef struct pairset {
    uint64_t *slot; /* key + 1; 0 empty */
    size_t cap;
} pairset;

static uint64_t pair_key(uint32_t a, uint32_t b) {
    return a < b ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
}

static size_t pair_hash(uint64_t k, size_t cap) {
    return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static bool pairset_make(pairset *s, const pf_graph_doc *d) {
    s->cap = 16;
    while (s->cap < 2 * (size_t)d->m) s->cap *= 2;
    if (!(s->slot = calloc(s->cap, sizeof(uint64_t)))) return false;
    for (uint32_t i = 0; i < d->m; i++) {
        uint64_t k = pair_key(d->from[i], d->to[i]);
        size_t h = pair_hash(k, s->cap);
        while (s->slot[h] && s->slot[h] != k + 1) h = (h + 1) & (s->cap - 1);
        s->slot[h] = k + 1;
    }
    return true;
}

static bool pairset_has(const pairset *s, uint32_t a, uint32_t b) {
    uint64_t k = pair_key(a, b);
    for (size_t h = pair_hash(k, s->cap); s->slot[h]; h = (h + 1) & (s->cap - 1))
        if (s->slot[h] == k + 1) return true;
    return false;
}

/* A kept pair and its length, for the nearest-first degree cap. */
typedef struct kept {
    double len;
    uint32_t a, b;
} kept;

static int cmp_kept(const void *pa, const void *pb) {
    const kept *x = pa, *y = pb;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

static int cmp_ends(const void *pa, const void *pb) {
    const kept *x = pa, *y = pb;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

static pf_status nomem(pf_proto_error *e) {
    return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
}

/* The candidate pairs (i < j) into *out, at most max of them (413 naming
 * auto_link.max_distance past it). */
static pf_status candidates(const pf_graph_doc *d, double r, uint64_t max, uint32_t **out,
                            size_t *n, pf_proto_error *e) {
    bucket *b = malloc((size_t)d->n * sizeof(*b));
    uint32_t *pairs = NULL;
    size_t np = 0, cap = 0;
    pairset joined = {NULL, 0};
    pf_status st = PF_OK;
    *out = NULL;
    *n = 0;
    if (!b || !pairset_make(&joined, d)) {
        free(b);
        free(joined.slot);
        return nomem(e);
    }
    for (uint32_t i = 0; i < d->n; i++) {
        for (int k = 0; k < 3; k++) {
            /* Positions are within +-1e9; a max_distance below about 2.5e-10
             * would take a cell index past +-4e18, where it is clamped:
             * clamping keeps cells of points within reach at most one
             * apart, so it stays exact (only slower). Dimensions the graph
             * does not have are 0. */
            double c = floor(d->pos[3 * (size_t)i + k] / r);
            b[i].c[k] = c > 4e18 ? (int64_t)4e18 : c < -4e18 ? (int64_t)-4e18 : (int64_t)c;
        }
        b[i].node = i;
    }
    qsort(b, d->n, sizeof(*b), cmp_bucket);
    for (size_t x = 0; x < d->n && !st; x++) {
        const uint32_t i = b[x].node;
        int64_t nb[3];
        for (int o = 0; o < 27 && !st; o++) {
            int off[3] = {o % 3 - 1, (o / 3) % 3 - 1, o / 9 - 1};
            if (d->dim == 2 && off[2]) continue;
            for (int k = 0; k < 3; k++) nb[k] = b[x].c[k] + off[k];
            for (size_t y = first_of(b, d->n, nb); y < d->n && !st; y++) {
                const uint32_t j = b[y].node;
                if (b[y].c[0] != nb[0] || b[y].c[1] != nb[1] || b[y].c[2] != nb[2]) break;
                if (j <= i || !(dist(d, i, j) <= r) || pairset_has(&joined, i, j)) continue;
                if (np >= max) {
                    st = pf_proto_error_set(
                        e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "auto_link.max_distance",
                        "auto_link would check more than %llu pairs of nodes, this server's limit "
                        "(--graph-max-auto-link-pairs); lower auto_link.max_distance.",
                        (unsigned long long)max);
                    break;
                }
                if (np == cap) {
                    size_t nc = cap ? 2 * cap : 1024;
                    uint32_t *g = realloc(pairs, 2 * nc * sizeof(uint32_t));
                    if (!g) {
                        st = nomem(e);
                        break;
                    }
                    pairs = g;
                    cap = nc;
                }
                pairs[2 * np] = i;
                pairs[2 * np + 1] = j;
                np++;
            }
        }
    }
    free(b);
    free(joined.slot);
    if (st) {
        free(pairs);
        return st;
    }
    *out = pairs;
    *n = np;
    return PF_OK;
}

pf_status pf__graph_auto_link(const pf_kind_env *env, pf__graph_docref *doc, pf_proto_error *e) {
    const pf__graph_env *ge = pf__graph_env_of(env);
    const pf_graph_auto_link *al = &doc->al;
    pf_graph_doc *d = &doc->d;
    const pf_mapver *mv = doc->link_map;
    uint32_t *pairs = NULL, *made = NULL, *deg = NULL;
    uint8_t *visible = NULL;
    kept *keep = NULL;
    double *cost = NULL;
    size_t np = 0, nk = 0, charge = 0;
    pf_status st;
    if (al->max_links_per_node > ge->limits.max_degree)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE,
                                  "auto_link.max_links_per_node",
                                  "Field 'auto_link.max_links_per_node' is at most %u, this "
                                  "server's limit on edges leaving a node (--graph-max-degree).",
                                  (unsigned)ge->limits.max_degree);
    if ((st = candidates(d, al->max_distance, ge->max_link_pairs, &pairs, &np, e))) return st;
    /* The checks' arrays, charged while they live. */
    charge = np * (2 * sizeof(uint32_t) + 1 + sizeof(kept) + 2 * sizeof(uint32_t) + sizeof(double));
    if (!pf_mem_try_charge(env->d.mem, PF_MEM_MAPS, charge)) {
        free(pairs);
        return pf_proto_error_set(
            e, PF_ENOMEM, PF_ERR_INSUFFICIENT_STORAGE, "auto_link",
            "auto_link's %zu pairs need %zu bytes, past the memory budget (--max-memory).", np,
            charge);
    }
    if (!(visible = malloc(np ? np : 1)) || !(keep = malloc((np ? np : 1) * sizeof(*keep)))) {
        st = nomem(e);
        goto out;
    }
    if ((st = mv->kind->line_of_sight(mv, al->agent_type, d->dim, d->pos, pairs, np, visible, NULL,
                                      "auto_link.", e)))
        goto out;
    for (size_t k = 0; k < np; k++)
        if (visible[k])
            keep[nk++] =
                (kept){dist(d, pairs[2 * k], pairs[2 * k + 1]), pairs[2 * k], pairs[2 * k + 1]};
    if (al->max_links_per_node) {
        /* Nearest first (then the lower indices): a pair is made while
         * both its nodes have fewer than the cap's links made. */
        size_t w = 0;
        if (!(deg = calloc(d->n, sizeof(uint32_t)))) {
            st = nomem(e);
            goto out;
        }
        qsort(keep, nk, sizeof(*keep), cmp_kept);
        for (size_t k = 0; k < nk; k++)
            if (deg[keep[k].a] < al->max_links_per_node &&
                deg[keep[k].b] < al->max_links_per_node) {
                deg[keep[k].a]++;
                deg[keep[k].b]++;
                keep[w++] = keep[k];
            }
        nk = w;
    }
    qsort(keep, nk, sizeof(*keep), cmp_ends);
    if (!(made = malloc((nk ? nk : 1) * 2 * sizeof(uint32_t))) ||
        !(cost = malloc((nk ? nk : 1) * sizeof(double)))) {
        st = nomem(e);
        goto out;
    }
    for (size_t k = 0; k < nk; k++) {
        made[2 * k] = keep[k].a;
        made[2 * k + 1] = keep[k].b;
        cost[k] = keep[k].len * al->cost_factor;
    }
    if ((st = pf_graph_doc_append_edges(d, made, cost, (uint32_t)nk, al->tag, &ge->limits,
                                        "auto_link", e)))
        goto out;
    doc->linked.done = true;
    snprintf(doc->linked.map, sizeof(doc->linked.map), "%s", mv->id);
    doc->linked.map_version = mv->version;
    doc->linked.candidates = np;
    doc->linked.linked = nk;
out:
    pf_mem_uncharge(env->d.mem, PF_MEM_MAPS, charge);
    free(pairs);
    free(visible);
    free(keep);
    free(deg);
    free(made);
    free(cost);
    return st;
}
