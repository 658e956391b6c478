/* polyanya.cpp -- the exact corridor search of navmesh paths.
 *
 * Detour's findPath is A* over polygons with each search node pinned to the
 * midpoint of the edge it entered by, so the corridor it returns is not the
 * one the shortest path runs through: on the shared Moving AI maps its
 * funnelled paths run up to 9% longer than the grid's optimum (8-connected,
 * octile), where the true shortest path on the mesh is shorter than that
 * optimum. pathd therefore finds the corridor with Polyanya (M. Cui, D.
 * Harabor, A. Grastien, "Compromise-free Pathfinding on a Navigation Mesh",
 * IJCAI 2017): A* whose nodes are (interval of a polygon edge, root), the
 * root being the last corner of the shortest path to the interval; g is the
 * exact length to the root, h the exact length from the root through the
 * interval to the goal (the goal reflected across the interval when it lies
 * on the root's side). Its first goal node is an optimal path, so the
 * polygons its nodes cross are an optimal corridor; pathd's funnel over
 * the same exact portals (funnel.cpp) then gives the waypoints.
 *
 * Distances are measured on x/z (the mesh projected on the floor), exact
 * on flat worlds such as converted grids; on slopes the path is the
 * shortest in projection.
 *
 * Adapting it to Detour's tiled meshes:
 *   - A polygon's boundary ("ring") is built from its Detour edges and
 *     links: an edge on a tile border is split where the neighbouring
 *     tile's polygons begin and end (their vertices, not Detour's 1/255
 *     link quantisation), so every ring segment is either a wall or a
 *     portal to exactly one polygon. Rings are made counter-clockwise.
 *   - Polygons the filter refuses (disabled areas) are walls.
 *   - A point can be a root (the path may bend there) only if it is an
 *     obstacle corner: the end of some wall segment. The corners of a
 *     version are collected once, on the first query that needs them.
 *   - Roots are identified by their voxel coordinates; a root reached again
 *     with a larger g is pruned (the paper's root-level pruning).
 *   - Dead ends (a polygon whose only open neighbour is the one we come
 *     from, without the goal) are not pushed.
 */
#include "nav_internal.h"

using namespace pfnav;

namespace {

const double EPS = 1e-7;

/* How much longer a path to a root may be and still not be pruned by a
 * shorter one to the same root. One vertex has a copy in each tile that
 * holds it, the copies a float step or a few apart (each tile computes its
 * vertices from its own origin), so two routes of equal length to one
 * corner measure 1e-5 or so apart: a tolerance at that scale (the old
 * 1e-6) pruned the route that was truly shortest, and polyanya answered a
 * longer path as exact (found on nav_test with obstacles, at a corner on a
 * tile border). A millimetre keeps every route within noise of the best;
 * routes genuinely longer than that are still pruned. */
const double ROOT_TOL = 1e-3;
const int RING_MAX = 96;

struct Ring {
    int n;
    float p[RING_MAX][3];
    dtPolyRef nb[RING_MAX]; /* segment i: p[i] -> p[i+1]; 0 = wall */
};

inline double orient(const float *a, const float *b, const float *c) {
    return ((double)b[0] - a[0]) * ((double)c[2] - a[2]) -
           ((double)b[2] - a[2]) * ((double)c[0] - a[0]);
}

inline double dist2(const float *a, const float *b) {
    double dx = (double)a[0] - b[0], dz = (double)a[2] - b[2];
    return sqrt(dx * dx + dz * dz);
}

/* Two ring points are the same point. Distinct ring points are vertices
 * on the voxel grid (cell_size >= 0.01 apart), so 1e-4 tells them apart
 * while absorbing float round-off (a float near 1e4 has a step of 1e-3:
 * worlds are kept smaller than that by max_voxels). */
const double SAME = 1e-4;

inline bool same(const float *a, const float *b) {
    return fabs((double)a[0] - b[0]) < SAME && fabs((double)a[2] - b[2]) < SAME;
}

/* Key of a point: its voxel coordinates (x, z, y), with bit 63 set so 0 is
 * never a key. Requires the world to be under 2^22 voxels a side. */
inline uint64_t point_key(const NavBase *b, const float *p) {
    long qx = lround(((double)p[0] - b->bmin[0]) / b->cfg.cell_size) + 1;
    long qz = lround(((double)p[2] - b->bmin[2]) / b->cfg.cell_size) + 1;
    long qy = lround(((double)p[1] - b->bmin[1]) / b->cfg.cell_height) + 1;
    if (qx < 0) qx = 0;
    if (qz < 0) qz = 0;
    if (qy < 0) qy = 0;
    return (1ull << 63) | ((uint64_t)(qx & 0x3fffff) << 41) | ((uint64_t)(qz & 0x3fffff) << 19) |
           (uint64_t)(qy & 0x7ffff);
}

inline uint64_t mix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

/* The polygon's neighbour through one of its links, if the filter lets it
 * in. */
inline bool passable(const dtNavMesh *nav, dtPolyRef ref) {
    const dtMeshTile *t = NULL;
    const dtPoly *p = NULL;
    nav->getTileAndPolyByRefUnsafe(ref, &t, &p);
    return (p->flags & FLAG_WALK) != 0;
}

struct Portion {
    float t0, t1;
    dtPolyRef ref;
    float a[3], b[3];
};

/* Builds the ring of polygon ref. false when it does not fit RING_MAX. */
bool ring_build(const dtNavMesh *nav, dtPolyRef ref, Ring *r) {
    const dtMeshTile *tile = NULL;
    const dtPoly *poly = NULL;
    nav->getTileAndPolyByRefUnsafe(ref, &tile, &poly);
    const int nv = poly->vertCount;
    r->n = 0;
    for (int j = 0; j < nv; j++) {
        const float *v0 = &tile->verts[poly->verts[j] * 3];
        const float *v1 = &tile->verts[poly->verts[(j + 1) % nv] * 3];
        Portion por[RING_MAX];
        int np = 0;
        for (unsigned int li = poly->firstLink; li != DT_NULL_LINK; li = tile->links[li].next) {
            const dtLink *l = &tile->links[li];
            if (l->edge != j || !l->ref || !passable(nav, l->ref)) continue;
            if (np >= RING_MAX) return false;
            Portion *q = &por[np];
            q->ref = l->ref;
            if (l->side == 0xff) {
                q->t0 = 0;
                q->t1 = 1;
                dtVcopy(q->a, v0);
                dtVcopy(q->b, v1);
                np++;
                continue;
            }
            /* Across a tile border: the overlap with the neighbour's edge
             * that links back to us, on the edge's long axis. */
            const dtMeshTile *nt = NULL;
            const dtPoly *npoly = NULL;
            nav->getTileAndPolyByRefUnsafe(l->ref, &nt, &npoly);
            int ne = -1;
            for (unsigned int k = npoly->firstLink; k != DT_NULL_LINK; k = nt->links[k].next)
                if (nt->links[k].ref == ref) {
                    ne = nt->links[k].edge;
                    break;
                }
            if (ne < 0) {
                /* No link back (cannot happen since widen_links; kept as
                 * Detour's own quantised portion rather than a wall). */
                q->t0 = l->bmin / 255.0f;
                q->t1 = l->bmax / 255.0f;
                dtVlerp(q->a, v0, v1, q->t0);
                dtVlerp(q->b, v0, v1, q->t1);
                if (q->t1 - q->t0 > 1e-6f) np++;
                continue;
            }
            const float *w0 = &nt->verts[npoly->verts[ne] * 3];
            const float *w1 = &nt->verts[npoly->verts[(ne + 1) % npoly->vertCount] * 3];
            const int ax = fabsf(v1[0] - v0[0]) >= fabsf(v1[2] - v0[2]) ? 0 : 2;
            const float len = v1[ax] - v0[ax];
            if (len == 0) continue;
            float ta = (w0[ax] - v0[ax]) / len, tb = (w1[ax] - v0[ax]) / len;
            const float *pa = w0, *pb = w1;
            if (ta > tb) {
                float t = ta;
                ta = tb;
                tb = t;
                pa = w1;
                pb = w0;
            }
            if (ta <= 0) {
                ta = 0;
                pa = v0;
            }
            if (tb >= 1) {
                tb = 1;
                pb = v1;
            }
            if (tb - ta < 1e-6f) continue;
            q->t0 = ta;
            q->t1 = tb;
            /* x/z from the defining vertex, y along our edge. */
            dtVlerp(q->a, v0, v1, ta);
            dtVlerp(q->b, v0, v1, tb);
            q->a[0] = pa[0];
            q->a[2] = pa[2];
            q->b[0] = pb[0];
            q->b[2] = pb[2];
            np++;
        }
        /* Sort the portions along the edge (few: insertion sort). */
        for (int a = 1; a < np; a++)
            for (int b = a; b > 0 && por[b].t0 < por[b - 1].t0; b--) {
                Portion t = por[b];
                por[b] = por[b - 1];
                por[b - 1] = t;
            }
        float cur[3];
        float curt = 0;
        dtVcopy(cur, v0);
        for (int k = 0; k < np; k++) {
            if (por[k].t0 > curt + 1e-6f) { /* a wall before the portion */
                if (r->n >= RING_MAX) return false;
                dtVcopy(r->p[r->n], cur);
                r->nb[r->n++] = 0;
                dtVcopy(cur, por[k].a);
            }
            if (por[k].t1 <= curt + 1e-6f) continue; /* overlapping links */
            if (r->n >= RING_MAX) return false;
            dtVcopy(r->p[r->n], cur);
            r->nb[r->n++] = por[k].ref;
            dtVcopy(cur, por[k].b);
            curt = por[k].t1;
        }
        if (curt < 1 - 1e-6f) {
            if (r->n >= RING_MAX) return false;
            dtVcopy(r->p[r->n], cur);
            r->nb[r->n++] = 0;
        }
    }
    /* Counter-clockwise on x/z (orient > 0 for a left turn). */
    double area = 0;
    for (int i = 0; i < r->n; i++) {
        const float *a = r->p[i], *b = r->p[(i + 1) % r->n];
        area += (double)a[0] * b[2] - (double)b[0] * a[2];
    }
    if (area < 0) {
        Ring t;
        t.n = r->n;
        for (int i = 0; i < r->n; i++) {
            dtVcopy(t.p[i], r->p[r->n - 1 - i]);
            /* Reversed segment i runs p[n-1-i] -> p[n-2-i], the old
             * segment n-2-i. */
            t.nb[i] = r->nb[(2 * r->n - 2 - i) % r->n];
        }
        *r = t;
    }
    return true;
}

/* A hash set of point keys (open addressing, 0 = empty). */
struct KeySet {
    uint64_t *keys;
    size_t mask;
};

bool keyset_has(const KeySet *c, uint64_t k) {
    for (size_t i = mix(k) & c->mask;; i = (i + 1) & c->mask) {
        if (c->keys[i] == k) return true;
        if (c->keys[i] == 0) return false;
    }
}

void keyset_add(KeySet *c, uint64_t k) {
    for (size_t i = mix(k) & c->mask;; i = (i + 1) & c->mask) {
        if (c->keys[i] == k) return;
        if (c->keys[i] == 0) {
            c->keys[i] = k;
            return;
        }
    }
}

/* Whether p is an obstacle corner. A vertex's height may differ by a voxel
 * between the tiles that share it: one voxel up and down count too. */
bool keyset_near(const KeySet *c, uint64_t k) {
    if (keyset_has(c, k)) return true;
    if ((k & 0x7ffff) > 0 && keyset_has(c, k - 1)) return true;
    return keyset_has(c, k + 1);
}

} /* namespace */

namespace pfnav {

/* What polyanya reads of a version, laid out for it: polygons by dense
 * index (tile slot order), each with its ring's points, the neighbour
 * (dense index, -1 a wall) of the segment each point starts, and whether
 * the point is an obstacle corner. Built on the first search of the
 * version, made with it (version_views, on the build pool), or by the
 * first search when that failed; immutable after. */
struct View {
    uint32_t npolys;
    uint32_t *tile_first; /* per tile slot, the dense index of its polygon 0 */
    dtPolyRef *refs;      /* dense -> reference */
    uint32_t *first;      /* npolys + 1 offsets into the point arrays */
    float *pts;           /* 3 per point */
    int32_t *nb;
    uint8_t *corner;
    uint64_t *key; /* per point: its root key (point_key) when a corner, else 0 */
    int32_t *only; /* the one polygon all open segments lead to; -1 several, -2 none */
    size_t rcap;   /* the root table a search needs: a power of two >= 2 x corner points */
};

void view_free(void *v) {
    View *w = (View *)v;
    if (!w) return;
    free(w->tile_first);
    free(w->refs);
    free(w->first);
    free(w->pts);
    free(w->nb);
    free(w->corner);
    free(w->key);
    free(w->only);
    free(w);
}

} /* namespace pfnav */

namespace {

inline uint32_t dense(const View *v, const dtNavMesh *nav, dtPolyRef ref) {
    return v->tile_first[nav->decodePolyIdTile(ref)] + nav->decodePolyIdPoly(ref);
}

View *view_build(const pf_navmesh *nm) {
    const dtNavMesh *nav = nm->nav;
    const int ntiles = nav->getMaxTiles();
    View *v = (View *)calloc(1, sizeof *v);
    if (!v) return NULL;
    v->tile_first = (uint32_t *)malloc((size_t)ntiles * sizeof(uint32_t));
    if (!v->tile_first) goto out_free;
    for (int i = 0; i < ntiles; i++) {
        const dtMeshTile *t = tile_at(nav, i);
        v->tile_first[i] = v->npolys;
        if (t->header) v->npolys += (uint32_t)t->header->polyCount;
    }
    {
        const size_t np = v->npolys ? v->npolys : 1;
        v->refs = (dtPolyRef *)malloc(np * sizeof(dtPolyRef));
        v->first = (uint32_t *)malloc((np + 1) * sizeof(uint32_t));
        v->only = (int32_t *)malloc(np * sizeof(int32_t));
        if (!v->refs || !v->first || !v->only) goto out_free;
    }
    {
        size_t cap = 0, n = 0, nwall = 0;
        Ring r;
        for (int i = 0; i < ntiles; i++) {
            const dtMeshTile *t = tile_at(nav, i);
            if (!t->header) continue;
            const dtPolyRef base = nav->getPolyRefBase(t);
            for (int k = 0; k < t->header->polyCount; k++) {
                const uint32_t d = v->tile_first[i] + (uint32_t)k;
                const dtPolyRef ref = base | (dtPolyRef)k;
                v->refs[d] = ref;
                v->first[d] = (uint32_t)n;
                v->only[d] = -2;
                /* Filtered polygons are never entered, nor are off-mesh
                 * links' (polyanya leaves maps with enabled links to
                 * Detour; their links back name no edge): no ring. */
                if (!(t->polys[k].flags & FLAG_WALK) ||
                    t->polys[k].getType() == DT_POLYTYPE_OFFMESH_CONNECTION ||
                    !ring_build(nav, ref, &r))
                    continue;
                if (n + (size_t)r.n > cap) {
                    size_t ncap = cap ? 2 * cap : 4096;
                    while (ncap < n + (size_t)r.n) ncap *= 2;
                    float *pts = (float *)realloc(v->pts, ncap * 3 * sizeof(float));
                    if (!pts) goto out_free;
                    v->pts = pts;
                    int32_t *nb = (int32_t *)realloc(v->nb, ncap * sizeof(int32_t));
                    if (!nb) goto out_free;
                    v->nb = nb;
                    cap = ncap;
                }
                for (int q = 0; q < r.n; q++) {
                    dtVcopy(&v->pts[3 * (n + (size_t)q)], r.p[q]);
                    v->nb[n + (size_t)q] = r.nb[q] ? (int32_t)dense(v, nav, r.nb[q]) : -1;
                    if (!r.nb[q]) nwall++;
                    const int32_t o = v->nb[n + (size_t)q];
                    if (o >= 0) v->only[d] = v->only[d] == -2 || v->only[d] == o ? o : -1;
                }
                n += (size_t)r.n;
            }
        }
        v->first[v->npolys] = (uint32_t)n;
        v->corner = (uint8_t *)calloc(n ? n : 1, 1);
        v->key = (uint64_t *)calloc(n ? n : 1, sizeof(uint64_t));
        if (!v->corner || !v->key) goto out_free;
        /* Corners: the ends of wall segments, found in any polygon's ring. */
        KeySet ks;
        size_t kcap = 64;
        while (kcap < 4 * nwall + 64) kcap *= 2;
        ks.keys = (uint64_t *)calloc(kcap, sizeof(uint64_t));
        ks.mask = kcap - 1;
        if (!ks.keys) goto out_free;
        for (uint32_t d = 0; d < v->npolys; d++) {
            const uint32_t f = v->first[d], m = v->first[d + 1] - f;
            for (uint32_t q = 0; q < m; q++) {
                if (v->nb[f + q] >= 0) continue;
                keyset_add(&ks, point_key(nm->base, &v->pts[3 * (f + q)]));
                keyset_add(&ks, point_key(nm->base, &v->pts[3 * (f + (q + 1) % m)]));
            }
        }
        size_t ncorner = 0;
        for (size_t q = 0; q < n; q++) {
            const uint64_t k = point_key(nm->base, &v->pts[3 * q]);
            v->corner[q] = keyset_near(&ks, k);
            v->key[q] = v->corner[q] ? k : 0;
            ncorner += v->corner[q];
        }
        free(ks.keys);
        /* Roots are corners only, each once: a table twice their number
         * (ring points, so each distinct point at least once) holds them. */
        v->rcap = 64;
        while (v->rcap < 2 * ncorner) v->rcap *= 2;
    }
    return v;
out_free:
    view_free(v);
    return NULL;
}

/* h: the length of the shortest path from root through [l, r] to goal
 * (Polyanya's heuristic; exact when the goal is beyond the interval). */
double h_value(const float *root, const float *goal_in, const float *l, const float *r) {
    if (same(root, l) || same(root, r)) return dist2(root, goal_in);
    float goal[3];
    dtVcopy(goal, goal_in);
    const double ol = orient(l, r, root), og = orient(l, r, goal);
    if ((ol > 0) == (og > 0) && fabs(og) > EPS) {
        /* Same side as the root: reflect the goal across the line l-r. */
        const double ex = (double)r[0] - l[0], ez = (double)r[2] - l[2];
        const double ee = ex * ex + ez * ez;
        if (ee > 0) {
            const double t = (((double)goal[0] - l[0]) * ex + ((double)goal[2] - l[2]) * ez) / ee;
            const double fx = l[0] + t * ex, fz = l[2] + t * ez;
            goal[0] = (float)(2 * fx - goal[0]);
            goal[2] = (float)(2 * fz - goal[2]);
        }
    }
    /* Where the line root -> goal crosses the line l -> r, as t on l -> r. */
    const double dx = (double)goal[0] - root[0], dz = (double)goal[2] - root[2];
    const double ex = (double)r[0] - l[0], ez = (double)r[2] - l[2];
    const double den = ex * dz - ez * dx;
    if (fabs(den) < EPS) {
        const double dl = dist2(root, l), dr = dist2(root, r);
        return dl < dr ? dl + dist2(l, goal) : dr + dist2(r, goal);
    }
    const double t = (((double)root[0] - l[0]) * dz - ((double)root[2] - l[2]) * dx) / den;
    if (t < 0) return dist2(root, l) + dist2(l, goal);
    if (t > 1) return dist2(root, r) + dist2(r, goal);
    return dist2(root, goal);
}

/* The point of segment a -> b on the line through p and q. */
void line_cross(const float *a, const float *b, const float *p, const float *q, float *out) {
    const double dx = (double)q[0] - p[0], dz = (double)q[2] - p[2];
    const double ex = (double)b[0] - a[0], ez = (double)b[2] - a[2];
    const double den = ex * dz - ez * dx;
    double t = 0;
    if (fabs(den) > 1e-12) t = (((double)p[0] - a[0]) * dz - ((double)p[2] - a[2]) * dx) / den;
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    dtVlerp(out, a, b, (float)t);
    /* A ray through a vertex meets it exactly: keep the vertex, so the
     * interval's end is recognised as one (turning is allowed there). */
    if (same(out, a)) dtVcopy(out, a);
    if (same(out, b)) dtVcopy(out, b);
}

} /* namespace */

namespace pfnav {

struct PNode {
    float L[3], R[3];
    int root; /* index into roots, -1 = the start */
    int parent;
    int32_t next; /* the polygon beyond the interval (dense index) */
    int32_t from; /* the polygon whose ring holds the interval */
    double g, f;
};

struct PRoot {
    float p[3];
    double g;
    uint64_t key;
    uint32_t stamp;
};

/* An open list entry: the keys beside the node's index, so sifting reads
 * the heap only. */
struct HeapEntry {
    double f, g;
    int node;
};

struct PolyScratch {
    uint32_t cap;
    PNode *nodes;
    uint32_t nnodes;
    HeapEntry *heap;
    uint32_t nheap;
    /* Open-addressed by key. rcap (2 x cap entries) is the most a mesh
     * can need and what poly_scratch_memory charges; only ralloc entries
     * are allocated: ROOTS_FIRST when the scratch is made, grown to a
     * mesh that needs more (a View's rcap) on its first search. */
    PRoot *roots;
    size_t rcap;
    size_t ralloc;
    size_t rmask; /* the part of it the current search uses, minus one */
    uint32_t stamp;
};

/* The root table made with a scratch: enough for a mesh of 8,192 corner
 * points (levels of a few thousand polygons), 320 KiB instead of the
 * 5 MiB the node budget allows. Written when made, so its pages are
 * mapped then: a new worker's first searches probed fresh pages at random
 * and paid their faults (a first search 8-50x its warm time). */
const size_t ROOTS_FIRST = 8192;

/* A zeroed root table of n entries, every page touched now. */
static PRoot *roots_alloc(size_t n) {
    PRoot *r = (PRoot *)malloc(n * sizeof(PRoot));
    if (r) memset(r, 0, n * sizeof(PRoot));
    return r;
}

PolyScratch *poly_scratch_create(uint32_t cap) {
    PolyScratch *s = (PolyScratch *)calloc(1, sizeof *s);
    if (!s) return NULL;
    s->cap = cap;
    size_t rcap = 64;
    while (rcap < 2 * (size_t)cap) rcap *= 2;
    s->nodes = (PNode *)malloc(cap * sizeof(PNode));
    s->heap = (HeapEntry *)malloc(cap * sizeof(HeapEntry));
    s->rcap = rcap;
    s->ralloc = rcap < ROOTS_FIRST ? rcap : ROOTS_FIRST;
    s->roots = roots_alloc(s->ralloc);
    if (!s->nodes || !s->heap || !s->roots) {
        poly_scratch_destroy(s);
        return NULL;
    }
    /* The nodes and open list a typical search uses, mapped now for the
     * same reason (the rest is mapped by the searches that reach it). */
    const size_t warm = cap < ROOTS_FIRST ? cap : ROOTS_FIRST;
    memset(s->nodes, 0, warm * sizeof(PNode));
    memset(s->heap, 0, warm * sizeof(HeapEntry));
    return s;
}

void poly_scratch_destroy(PolyScratch *s) {
    if (!s) return;
    free(s->nodes);
    free(s->heap);
    free(s->roots);
    free(s);
}

size_t poly_scratch_memory(const PolyScratch *s) {
    return sizeof *s + s->cap * (sizeof(PNode) + sizeof(HeapEntry)) + s->rcap * sizeof(PRoot);
}

} /* namespace pfnav */

namespace {

inline bool heap_less(const HeapEntry &x, const HeapEntry &y) {
    if (x.f != y.f) return x.f < y.f;
    return x.g > y.g;
}

void heap_push(PolyScratch *s, int n) {
    HeapEntry e = {s->nodes[n].f, s->nodes[n].g, n};
    uint32_t i = s->nheap++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!heap_less(e, s->heap[p])) break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = e;
}

int heap_pop(PolyScratch *s) {
    int top = s->heap[0].node;
    HeapEntry e = s->heap[--s->nheap];
    const uint32_t n = s->nheap;
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, m = l;
        if (l >= n) break;
        if (l + 1 < n && heap_less(s->heap[l + 1], s->heap[l])) m = l + 1;
        if (!heap_less(s->heap[m], e)) break;
        s->heap[i] = s->heap[m];
        i = m;
    }
    if (n) s->heap[i] = e;
    return top;
}

/* The root entry for point p of key k (created with g = +inf), or NULL
 * when the table is full. */
PRoot *root_get(PolyScratch *s, uint64_t k, const float *p) {
    for (size_t i = mix(k) & s->rmask, n = 0; n <= s->rmask; i = (i + 1) & s->rmask, n++) {
        PRoot *r = &s->roots[i];
        if (r->stamp != s->stamp) {
            r->stamp = s->stamp;
            r->key = k;
            r->g = HUGE_VAL;
            dtVcopy(r->p, p);
            return r;
        }
        if (r->key == k) return r;
    }
    return NULL;
}

struct Ctx {
    PolyScratch *s;
    const pf_navmesh *nm;
    const View *v;
    const float *start, *goal;
    int32_t goal_poly;
    bool out_of_nodes;
};

const float *root_point(const Ctx *c, int root) {
    return root < 0 ? c->start : c->s->roots[root].p;
}

/* Pushes the successor interval [L, R] (L to the left seen from the root)
 * into polygon next, from polygon from, with root/g. */
void push(Ctx *c, int parent, const float *L, const float *R, int32_t next, int32_t from, int root,
          double g) {
    if (next < 0) return;
    const double lx = (double)L[0] - R[0], lz = (double)L[2] - R[2];
    if (lx * lx + lz * lz < 1e-12) return; /* under 1e-6 long */
    /* Dead end: every open segment of next leads back to from. */
    if (next != c->goal_poly && c->v->only[next] == from) return;
    PolyScratch *s = c->s;
    if (s->nnodes >= s->cap) {
        c->out_of_nodes = true;
        return;
    }
    if (root >= 0) {
        PRoot *r = &s->roots[root];
        if (r->g + ROOT_TOL < g) return; /* reached more cheaply already */
        if (g < r->g) r->g = g;
    }
    PNode *n = &s->nodes[s->nnodes++];
    dtVcopy(n->L, L);
    dtVcopy(n->R, R);
    n->root = root;
    n->parent = parent;
    n->next = next;
    n->from = from;
    n->g = g;
    /* f and the open list: open_from, once the expansion's successors are
     * made. */
}

/* Puts nodes [first, nnodes) on the open list, with their f. */
void open_from(Ctx *c, uint32_t first) {
    PolyScratch *s = c->s;
    for (uint32_t i = first; i < s->nnodes; i++) {
        PNode *n = &s->nodes[i];
        n->f = n->g + h_value(root_point(c, n->root), c->goal, n->L, n->R);
        heap_push(s, (int)i);
    }
}

/* A root for point p (key k: the ring point's, View::key) reached with g;
 * -2 when pruned or the table is full. */
int make_root(Ctx *c, const float *p, uint64_t k, double g) {
    PRoot *r = root_get(c->s, k, p);
    if (!r) {
        c->out_of_nodes = true;
        return -2;
    }
    if (r->g + ROOT_TOL < g) return -2; /* pruned */
    return (int)(r - c->s->roots);
}

/* Successors of node ni (Polyanya's get_successors, on a ring). */
void expand(Ctx *c, int ni) {
    PolyScratch *s = c->s;
    const PNode node = s->nodes[ni];
    const View *v = c->v;
    const uint32_t f0 = v->first[node.next];
    const int m = (int)(v->first[node.next + 1] - f0);
    const float *pts = &v->pts[3 * (size_t)f0];
    const int32_t *nbs = &v->nb[f0];
    const uint8_t *corner = &v->corner[f0];
    const uint64_t *keys = &v->key[f0];
    /* Ring indices used below (IDX) lie in [right_ind, left_ind] =
     * [k + 1, k + m] or one step outside ([1, 2m - 1] at most, m >= 3): one
     * subtraction wraps them (two integer divisions a point did before). */
    int k = -1;
    for (int i = 0; i < m; i++)
        if (nbs[i] == node.from) {
            k = i;
            break;
        }
    if (k < 0) return;
#define IDX(i) ((i) < m ? (i) : (i)-m)
#define P(i) (&pts[3 * IDX(i)])
#define NB(i) nbs[IDX(i)]
    const float *root = root_point(c, node.root);
    const float *L = node.L, *R = node.R;
    const int right_ind = k + 1, left_ind = k + m; /* P(left_ind) == ring.p[k] */
    const bool right_is_vertex = same(R, P(right_ind));
    const bool left_is_vertex = same(L, P(left_ind));

    /* Root on the interval's line: the path must turn at the nearer end. */
    if (same(root, L) || same(root, R) || fabs(orient(root, R, L)) < EPS) {
        const bool at_left = same(root, L) || (!same(root, R) && dist2(root, L) < dist2(root, R));
        const float *turn = at_left ? L : R;
        if (!(at_left ? left_is_vertex : right_is_vertex)) return;
        if (!corner[IDX(at_left ? left_ind : right_ind)]) return;
        /* The root itself (a copy of it): no step, the same root. */
        const bool stay = same(root, turn);
        const double g = stay ? node.g : node.g + dist2(root, turn);
        int nr =
            stay ? node.root : make_root(c, turn, keys[IDX(at_left ? left_ind : right_ind)], g);
        if (nr < -1) return;
        for (int i = right_ind; i < left_ind; i++)
            push(c, ni, P(i + 1), P(i), NB(i), node.next, nr, g);
        return;
    }

    /* A: the first far vertex strictly left of the ray root -> R; the ray
     * leaves through segment (A-1, A). */
    int A = -1;
    if (right_is_vertex && orient(root, R, P(right_ind + 1)) > -EPS) {
        A = right_ind + 1;
    } else {
        for (int i = right_ind + 1; i <= left_ind; i++)
            if (orient(root, R, P(i)) > EPS) {
                A = i;
                break;
            }
    }
    if (A < 0) return;
    float RI[3];
    if (right_is_vertex && A == right_ind + 1)
        dtVcopy(RI, R);
    else
        line_cross(P(A - 1), P(A), root, R, RI);

    /* B: the last far vertex strictly right of the ray root -> L; the ray
     * leaves through segment (B, B+1). */
    int B = -1;
    if (left_is_vertex && orient(root, L, P(left_ind - 1)) < EPS) {
        B = left_ind - 1;
    } else {
        for (int i = left_ind - 1; i >= A - 1; i--)
            if (orient(root, L, P(i)) < -EPS) {
                B = i;
                break;
            }
    }
    if (B < 0) return;
    float LI[3];
    if (left_is_vertex && B == left_ind - 1)
        dtVcopy(LI, L);
    else
        line_cross(P(B), P(B + 1), root, L, LI);

    /* Right of the ray root -> R: reachable only by turning at R. */
    if (right_is_vertex && corner[IDX(right_ind)]) {
        const double g = node.g + dist2(root, R);
        int nr = make_root(c, R, keys[IDX(right_ind)], g);
        if (nr >= -1) {
            for (int i = right_ind; i < A - 1; i++)
                push(c, ni, P(i + 1), P(i), NB(i), node.next, nr, g);
            if (!same(RI, P(A - 1))) push(c, ni, RI, P(A - 1), NB(A - 1), node.next, nr, g);
        }
    }
    /* Between the rays: seen from the root. */
    if (A == B + 1) {
        push(c, ni, LI, RI, NB(A - 1), node.next, node.root, node.g);
    } else if (A <= B) {
        push(c, ni, P(A), RI, NB(A - 1), node.next, node.root, node.g);
        for (int i = A; i < B; i++)
            push(c, ni, P(i + 1), P(i), NB(i), node.next, node.root, node.g);
        push(c, ni, LI, P(B), NB(B), node.next, node.root, node.g);
    }
    /* Left of the ray root -> L: reachable only by turning at L. */
    if (left_is_vertex && corner[IDX(left_ind)]) {
        const double g = node.g + dist2(root, L);
        int nr = make_root(c, L, keys[IDX(left_ind)], g);
        if (nr >= -1) {
            if (!same(LI, P(B + 1))) push(c, ni, P(B + 1), LI, NB(B), node.next, nr, g);
            for (int i = B + 1; i < left_ind; i++)
                push(c, ni, P(i + 1), P(i), NB(i), node.next, nr, g);
        }
    }
#undef P
#undef NB
#undef IDX
}

const View *version_view(const pf_navmesh *nm) {
    View *v = (View *)__atomic_load_n(&nm->view, __ATOMIC_ACQUIRE);
    if (v) return v;
    v = view_build(nm);
    if (!v) return NULL;
    void *expected = NULL;
    if (!__atomic_compare_exchange_n(&nm->view, &expected, (void *)v, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        view_free(v); /* another thread built it first */
        return (const View *)expected;
    }
    return v;
}

} /* namespace */

namespace pfnav {

bool version_views(pf_navmesh *root) {
    if (!root->base->exact) return true;
    for (uint32_t t = 0; t < root->base->nagents; t++)
        if (!version_view(root->types[t])) return false;
    return true;
}

dtStatus polyanya(pf_nav_query *q, const pf_navmesh *nm, dtPolyRef sref, dtPolyRef gref,
                  const float *spos, const float *gpos, dtPolyRef *path, int *npath, int max_path,
                  uint32_t *expanded, double *best) {
    *npath = 0;
    *expanded = 0;
    *best = 0;
    q->passes = 0;
    if (!nm->base->exact) return DT_FAILURE | DT_INVALID_PARAM;
    if (sref == gref) {
        path[0] = sref;
        *npath = 1;
        *best = dtVdist2D(spos, gpos);
        return DT_SUCCESS;
    }
    const View *v = version_view(nm);
    if (!v) return DT_FAILURE | DT_OUT_OF_MEMORY;
    PolyScratch *s = q->poly;
    s->nnodes = 0;
    s->nheap = 0;
    /* The root table's part this mesh needs (its corner points, twice):
     * a search touches a few kilobytes, not the whole table sized to the
     * node budget (a new worker's first searches faulted and missed over
     * megabytes), and only that much is allocated and zeroed. Entries of
     * earlier searches carry older stamps. */
    const size_t need = v->rcap < s->rcap ? v->rcap : s->rcap;
    if (need > s->ralloc) {
        PRoot *roots = roots_alloc(need);
        if (!roots) return DT_FAILURE | DT_OUT_OF_MEMORY;
        free(s->roots);
        s->roots = roots;
        s->ralloc = need;
        s->stamp = 0;
    }
    if (++s->stamp == 0) {
        memset(s->roots, 0, s->ralloc * sizeof(PRoot));
        s->stamp = 1;
    }
    s->rmask = need - 1;
    const int32_t sd = (int32_t)dense(v, nm->nav, sref);
    Ctx c;
    c.s = s;
    c.nm = nm;
    c.v = v;
    c.goal = gpos;
    c.goal_poly = (int32_t)dense(v, nm->nav, gref);
    c.out_of_nodes = false;
    /* The start, nudged off the start polygon's boundary, so every ring
     * segment of the start polygon is seen from it (not collinear). */
    const uint32_t f0 = v->first[sd];
    const int m = (int)(v->first[sd + 1] - f0);
    if (m < 3) return DT_FAILURE | DT_INVALID_PARAM;
    const float *pts = &v->pts[3 * (size_t)f0];
    float start[3], centre[3] = {0, 0, 0};
    for (int i = 0; i < m; i++) dtVadd(centre, centre, &pts[3 * i]);
    dtVscale(centre, centre, 1.0f / (float)m);
    dtVlerp(start, spos, centre, 1e-3f);
    c.start = start;

    /* Intermediate pruning (Cui, Harabor, Grastien 2017): a node with
     * exactly one successor outside the goal's polygon has that successor
     * expanded at once, off the open list (its f is at least the node's,
     * so the first goal node popped is still an optimal one; the node
     * stays in the table, the corridor runs through its parent links).
     * Corridors of polygons one after another (stairs, ramps, floors
     * joined by narrow passages) then cost no h and no heap traffic.
     * Only the first pass prunes: a chain may run on past the optimum's f
     * and make nodes the open list's order never would, and on
     * random512-40-0 such chains spent the node budget (65,535 nodes)
     * where the plain order answers. A pruned search out of nodes is run
     * again without pruning, with the same budget: also when it reached
     * the goal, since a full table drops successors (push, make_root) and
     * the goal popped after that need not be the nearest. A pass without
     * pruning that ran out of nodes and still reached the goal answers
     * DT_SUCCESS | DT_OUT_OF_NODES: a path, perhaps not the shortest. */
    int found = -1;
    for (int pass = 0; pass < 2; pass++) {
        const bool prune = pass == 0;
        if (pass > 0) {
            if (!c.out_of_nodes) break;
            found = -1;
            c.out_of_nodes = false;
            s->nnodes = 0;
            s->nheap = 0;
            if (++s->stamp == 0) {
                memset(s->roots, 0, s->ralloc * sizeof(PRoot));
                s->stamp = 1;
            }
        }
        q->passes++;
        for (int i = 0; i < m; i++)
            push(&c, -1, &pts[3 * ((i + 1) % m)], &pts[3 * i], v->nb[f0 + (uint32_t)i], sd, -1,
                 0.0);
        open_from(&c, 0);
        while (s->nheap) {
            int ni = heap_pop(s);
            const PNode *n = &s->nodes[ni];
            (*expanded)++;
            if (n->root >= 0 && s->roots[n->root].g + ROOT_TOL < n->g) continue;
            if (n->next == c.goal_poly) {
                found = ni;
                break;
            }
            for (;;) {
                const uint32_t first = s->nnodes;
                expand(&c, ni);
                if (prune && s->nnodes - first == 1 && s->nodes[first].next != c.goal_poly) {
                    ni = (int)first;
                    (*expanded)++;
                    continue;
                }
                open_from(&c, first);
                break;
            }
        }
    }
    if (found < 0) return DT_FAILURE | (c.out_of_nodes ? DT_OUT_OF_NODES : DT_PARTIAL_RESULT);

    /* The corridor: the start polygon, then each node's next polygon. */
    int len = 1;
    for (int i = found; i >= 0; i = s->nodes[i].parent) len++;
    if (len > max_path) return DT_FAILURE | DT_BUFFER_TOO_SMALL;
    /* Measured from the nudged start: the real start is at most that far
     * from it. */
    *best = s->nodes[found].f + dist2(spos, start);
    path[0] = sref;
    int w = len - 1;
    for (int i = found; i >= 0; i = s->nodes[i].parent) path[w--] = v->refs[s->nodes[i].next];
    *npath = len;
    return c.out_of_nodes ? DT_SUCCESS | DT_OUT_OF_NODES : DT_SUCCESS;
}

} /* namespace pfnav */
