/* jps.c -- jump point search (Harabor & Grastien, "Online Graph Pruning for
 * Pathfinding on Grid Maps", AAAI 2011), with the block-based jumps and the
 * pruning of intermediate jump points of Harabor & Grastien, "Improving Jump
 * Point Search", ICAPS 2014.
 *
 * Preprocessing is two bit grids of walkable cells: one row-major, one
 * transposed, so both horizontal and vertical jumps read a line as 64-bit
 * words and find the next obstacle or forced neighbour with one
 * count-trailing/leading-zeros per 62-63 cells. Each line has a zero word of
 * padding on its left and at least one on its right, and each grid a zero
 * line above and below, so the scans never test bounds: off the map reads as
 * blocked.
 *
 * Canonical paths go diagonal first, then straight. A diagonal jump steps
 * one cell at a time and, from cells where they can find something,
 * launches the two straight scans it covers; what those scans find becomes
 * a successor of the node the diagonal started from (the intermediate cell
 * is not generated, ICAPS 2014, "pruning intermediate nodes"). A successor
 * therefore lies "diagonal first, then straight" from its parent; the path
 * is rebuilt cell by cell from that rule, and the arrival direction used for
 * pruning is read from the parent's offset.
 *
 * Jump data (jps_tables.c) answers what a scan would find without running
 * it: the jump bits say whether a straight scan ends at a jump point and
 * whether a diagonal cell is a stop, so dead-end scans are skipped and a
 * diagonal costs a bit test a cell; the JPS+ jump tables say how far each
 * jump goes, so a straight jump is one read and a diagonal one read per
 * stop. The goal is in neither: a jump whose line meets the goal's row or
 * column is checked against it here. Each of the three layouts (scans,
 * bits, tables) is its own compiled variant of one expansion loop.
 *
 * Forced neighbours, moving straight east from p = (x-1, y) to n = (x, y),
 * by symmetry for the other directions:
 *   no corner cutting (diagonal needs both orthogonal cells): n is a jump
 *     point when (x-1, y-1) is blocked and (x, y-1) is open; it then adds N
 *     and NE (and likewise S, SE below). A diagonal arrival never has forced
 *     neighbours under this rule.
 *   corner cutting (diagonal needs one orthogonal cell): n is a jump point
 *     when (x, y-1) is blocked while (x+1, y-1) and (x+1, y) are open; it then
 *     adds NE. Moving diagonally NE, n is a jump point when W is blocked and
 *     the step to NW is allowed (adds NW), or S is blocked and the step to SE
 *     is allowed (adds SE).
 * The grid's move masks decide every single step, so the corner rule is only
 * in the forced-neighbour tests.
 *
 * The open list is the context's (f, h, seq) heap, except that a successor
 * whose f equals the least f in the heap when its parent was taken goes on
 * a stack and is expanded next (with a consistent heuristic any node of
 * least f may be expanded next, so A* stays optimal): on uniform maps most
 * jump points continue towards the goal at unchanged f.
 *
 * Before searching, a query whose canonical path (diagonal first, then
 * straight) is free is answered from it (jps_direct.c).
 *
 * On maps with dead ends (deadends.h, built with the landmarks), jump points
 * no simple path from the start to the goal can visit are dropped, and,
 * without corner cutting, the turns of one-cell corridors are passed
 * without nodes (relax).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deadends.h"
#include "jps_internal.h"

#define walkable(j, x, y) pf__jps_walkable(j, x, y)
#define bit_get pf__jps_bit_get
#define dir_of pf__jps_dir_of
#define dbit pf__jps_dbit
#define forced_diag pf__jps_forced_diag
#define row_line pf__jps_row
#define col_line pf__jps_col

/* Block-based straight scans.
 *
 * A scan runs along one line (a row, or a column of the transposed grid)
 * from cell x, exclusive, with the two neighbouring lines a and b on either
 * side. It returns the first cell that is blocked (*jump false: a dead end)
 * or a jump point (*jump true). */

/* Towards higher positions. Window bit 0 is x itself. */
static inline __attribute__((always_inline)) int32_t
scan_up(const uint64_t *l, const uint64_t *a, const uint64_t *b, int32_t x, bool cc, bool *jump) {
    for (;;) {
        uint32_t p = (uint32_t)x + 64;
        uint64_t r = pf__jps_window(l, p), ra = pf__jps_window(a, p), rb = pf__jps_window(b, p),
                 stop;
        if (cc) /* side cell blocked, the next one on that side and ahead open */
            stop = ((~ra & (ra >> 1)) | (~rb & (rb >> 1))) & (r >> 1);
        else /* side cell open, the one beside the predecessor blocked */
            stop = ((~ra << 1) & ra) | ((~rb << 1) & rb);
        /* Bits 1..63 are cells x+1..x+63 (1..62 with corner cutting, whose
         * test needs the next bit). */
        stop = (stop | ~r) & (cc ? 0x7ffffffffffffffeull : ~1ull);
        if (stop) {
            int i = __builtin_ctzll(stop);
            *jump = (r >> i) & 1u;
            return x + i;
        }
        x += cc ? 62 : 63;
    }
}

/* Towards lower positions. Window bit 63 is x itself. */
static inline __attribute__((always_inline)) int32_t
scan_down(const uint64_t *l, const uint64_t *a, const uint64_t *b, int32_t x, bool cc, bool *jump) {
    for (;;) {
        uint32_t p = (uint32_t)x + 1;
        uint64_t r = pf__jps_window(l, p), ra = pf__jps_window(a, p), rb = pf__jps_window(b, p),
                 stop;
        if (cc)
            stop = ((~ra & (ra << 1)) | (~rb & (rb << 1))) & (r << 1);
        else
            stop = ((~ra >> 1) & ra) | ((~rb >> 1) & rb);
        /* Bits 62..0 are cells x-1..x-63 (bits 62..1 with corner cutting). */
        stop = (stop | ~r) & (cc ? 0x7ffffffffffffffeull : 0x7fffffffffffffffull);
        if (stop) {
            int i = 63 - __builtin_clzll(stop);
            *jump = (r >> i) & 1u;
            return x - (63 - i);
        }
        x -= cc ? 62 : 63;
    }
}

/* A node of one search. Nodes get dense ids in the order they are first
 * reached, and a small hash index maps cells to ids: a search touches a few
 * hundred to a few thousand jump points, so its nodes and its index stay in
 * the first levels of cache, where a node array indexed by cell (24 bytes a
 * cell, 6 MiB on a 512x512 map) costs a cache miss per jump point. */
typedef struct jnode {
    double g;
    int32_t parent;   /* node id of the predecessor, -1 for the start */
    int32_t heap_pos; /* in the open list, JPS_STACKED or PF__HEAP_CLOSED */
    int32_t cell;     /* y * w + x */
    int32_t slot;     /* its entry in the index */
} jnode;

/* The corridor turns passed from a node's parent to it: the run's
 * via[via .. via + n), see relax. Kept beside the nodes (vias[id]), only by
 * the variants that take turns, so the others' nodes stay 24 bytes. */
typedef struct jvia {
    int32_t via, n;
} jvia;

/* An entry of the cell index: open addressing, linear probing; cell -1 is
 * empty. */
typedef struct jslot {
    int32_t cell, id;
} jslot;

/* Entries of the index a search starts with: it doubles while more than
 * half would be taken. */
#define JPS_SLOTS_MIN 4096u

/* One search. */
typedef struct jps_run {
    pf_search_ctx *ctx;
    const pf_jps *j;
    const uint8_t *moves;
    const uint16_t *jt; /* the jump tables (LAY_TABLES only) */
    int32_t w;
    uint64_t wmagic; /* row of cell i: (i * wmagic) >> 40, see row_of */
    int32_t gx, gy, goal;
    double c, cd;                     /* cost of a straight and of a diagonal step */
    double fref;                      /* successors with f <= fref skip the heap */
    const pf_landmarks *lm;           /* NULL: the octile distance alone */
    const pf_deadends *dead;          /* dead-end pruning (deadends.h), or NULL */
    pf_deadends_query dq;             /* ... this query's view of it */
    double lm_goal[PF_LANDMARKS_MAX]; /* the goal's landmark distances */
    int lm_n;                         /* active landmarks, see search_full */
    int lm_idx[PF_LANDMARKS_MAX];     /* ... their indices */
    /* With landmarks, the jump points of one expansion are offered after all
     * its jumps: each one's landmark line is prefetched when it is found,
     * and the later jumps hide the miss. */
    struct {
        int32_t x, y, parent, via, nvia;
        double g;
    } pend[32];
    int npend;
    jnode *nodes; /* nodes[0 .. nn) */
    int32_t nn;
    int32_t goal_id; /* the goal's node once found */
    jslot *slots;    /* the index: slots[0 .. smask] */
    uint32_t smask, sshift;
    size_t slots_cap;
    pf__heap_item *heap; /* the open list, a 4-ary min-heap on (f, h, seq) */
    size_t hlen;
    uint32_t seq;
    int32_t *stack; /* successors at the least f, expanded last in first out */
    size_t sp;
    /* Corridor turns (see relax): on for maps without corner cutting. */
    bool chain;
    bool via_full; /* a chain stopped for want of room: grow it next time */
    int32_t *via;  /* turn cells passed, appended per chain */
    uint32_t nvia, via_cap;
    jvia *vias; /* per node */
    uint64_t jump_points, generated;
} jps_run;

/* Nodes on the run's stack rather than in the heap. */
#define JPS_STACKED (-2)

/* Per-thread scratch in the context's PF__EXT_JPS slot: room for a search
 * that reaches every cell of the largest map seen (pages are only touched
 * as far as searches reach). */
typedef struct jps_scratch {
    jnode *nodes;
    pf__heap_item *heap;
    int32_t *stack;
    size_t cap; /* cells */
    jslot *slots;
    size_t slots_cap; /* a power of two >= 2 cap */
    int32_t *via;     /* the corridor turns of a search */
    size_t via_cap;   /* doubled after a search that ran out, up to cap */
    jvia *vias;       /* cap entries: each node's turns */
} jps_scratch;

/* Corridor turns a search starts with room for. */
#define JPS_VIA_MIN 4096u

static void scratch_free(void *p) {
    jps_scratch *s = p;
    free(s->nodes);
    free(s->heap);
    free(s->stack);
    free(s->slots);
    free(s->via);
    free(s->vias);
    free(s);
}

static size_t scratch_memory(const void *p) {
    const jps_scratch *s = p;
    return sizeof(*s) +
           s->cap * (sizeof(jnode) + sizeof(pf__heap_item) + sizeof(int32_t) + sizeof(jvia)) +
           s->slots_cap * sizeof(jslot) + s->via_cap * sizeof(int32_t);
}

/* The context's scratch with room for searches on maps of `cells` cells. */
static pf_status scratch_get(pf_search_ctx *ctx, size_t cells, jps_scratch **out) {
    jps_scratch *s = ctx->ext[PF__EXT_JPS];
    if (!s) {
        s = calloc(1, sizeof(*s));
        if (!s) return PF_ENOMEM;
        ctx->ext[PF__EXT_JPS] = s;
        ctx->ext_free[PF__EXT_JPS] = scratch_free;
        ctx->ext_memory[PF__EXT_JPS] = scratch_memory;
    }
    if (cells > s->cap) {
        size_t sc = JPS_SLOTS_MIN;
        jnode *nodes;
        pf__heap_item *heap;
        int32_t *st;
        jslot *slots;
        jvia *vias;
        while (sc < 2 * cells) sc *= 2;
        nodes = malloc(cells * sizeof(*nodes));
        vias = malloc(cells * sizeof(*vias));
        heap = malloc(cells * sizeof(*heap));
        st = malloc(cells * sizeof(*st));
        slots = malloc(sc * sizeof(*slots));
        if (!nodes || !heap || !st || !slots || !vias) {
            free(vias);
            free(nodes);
            free(heap);
            free(st);
            free(slots);
            return PF_ENOMEM;
        }
        /* Every entry of the index starts and, after each search, ends empty. */
        memset(slots, 0xff, JPS_SLOTS_MIN * sizeof(*slots));
        free(s->nodes);
        free(s->heap);
        free(s->stack);
        free(s->slots);
        free(s->vias);
        s->vias = vias;
        s->nodes = nodes;
        s->heap = heap;
        s->stack = st;
        s->slots = slots;
        s->cap = cells;
        s->slots_cap = sc;
    }
    if (!s->via) {
        s->via = malloc(JPS_VIA_MIN * sizeof(*s->via));
        if (!s->via) return PF_ENOMEM;
        s->via_cap = JPS_VIA_MIN;
    }
    *out = s;
    return PF_OK;
}

/* After a search whose chains ran out of room: more for the next one (at
 * most a cell's worth each; failure keeps what there is). */
static void scratch_grow_via(jps_scratch *s) {
    size_t nc = s->via_cap * 2;
    int32_t *v;
    if (nc > s->cap) nc = s->cap;
    if (nc <= s->via_cap || !(v = realloc(s->via, nc * sizeof(*v)))) return;
    s->via = v;
    s->via_cap = nc;
}

static inline uint32_t slot_of(const jps_run *r, int32_t cell) {
    return ((uint32_t)cell * 2654435761u) >> r->sshift;
}

/* Doubles the index and enters every node again. */
static void index_grow(jps_run *r) {
    uint32_t size = (r->smask + 1) * 2;
    memset(r->slots, 0xff, size * sizeof(*r->slots));
    r->smask = size - 1;
    r->sshift--;
    for (int32_t id = 0; id < r->nn; id++) {
        uint32_t h = slot_of(r, r->nodes[id].cell);
        while (r->slots[h].cell >= 0) h = (h + 1) & r->smask;
        r->slots[h].cell = r->nodes[id].cell;
        r->slots[h].id = id;
        r->nodes[id].slot = (int32_t)h;
    }
}

/* The node of `cell`, made (g and parent unset, heap_pos NOT queued) when
 * the search has none yet: then *fresh is true. */
static inline jnode *node_at(jps_run *r, int32_t cell, bool *fresh) {
    uint32_t h;
    jnode *n;
    if (__builtin_expect(2 * ((size_t)r->nn + 1) > (size_t)r->smask + 1, 0) &&
        (size_t)r->smask + 1 < r->slots_cap)
        index_grow(r);
    for (h = slot_of(r, cell);; h = (h + 1) & r->smask) {
        const jslot *e = &r->slots[h];
        if (e->cell == cell) {
            *fresh = false;
            return &r->nodes[e->id];
        }
        if (e->cell < 0) break;
    }
    n = &r->nodes[r->nn];
    r->slots[h].cell = cell;
    r->slots[h].id = r->nn++;
    n->cell = cell;
    n->slot = (int32_t)h;
    *fresh = true;
    return n;
}

/* Empties the index for the next search: every entry the nodes took (the
 * rest of the entries in use are empty since they were last cleared). */
static void index_clear(jps_run *r) {
    for (int32_t id = 0; id < r->nn; id++) r->slots[r->nodes[id].slot].cell = -1;
}

/* The open list: 4-ary heap, ordered as the context's shared binary heap
 * (f, then h, then insertion order), kept here so that it inlines and
 * moves the run's own nodes. */
static inline bool item_less(const pf__heap_item *a, const pf__heap_item *b) {
    if (a->f < b->f) return true;
    if (b->f < a->f) return false;
    if (a->h != b->h) return a->h < b->h;
    return a->seq < b->seq;
}

static inline void heap_up(jps_run *r, size_t pos, pf__heap_item it) {
    while (pos > 0) {
        size_t parent = (pos - 1) / 4;
        if (!item_less(&it, &r->heap[parent])) break;
        r->heap[pos] = r->heap[parent];
        r->nodes[r->heap[pos].node].heap_pos = (int32_t)pos;
        pos = parent;
    }
    r->heap[pos] = it;
    r->nodes[it.node].heap_pos = (int32_t)pos;
}

static inline void heap_push(jps_run *r, int32_t id, double f, double h) {
    pf__heap_item it = {f, h, r->seq++, id};
    heap_up(r, r->hlen++, it);
}

static inline void heap_decrease(jps_run *r, int32_t id, double f, double h) {
    size_t pos = (size_t)r->nodes[id].heap_pos;
    pf__heap_item it = r->heap[pos];
    it.f = f;
    it.h = h;
    heap_up(r, pos, it);
}

static inline int32_t heap_pop(jps_run *r) {
    int32_t best = r->heap[0].node;
    r->nodes[best].heap_pos = PF__HEAP_CLOSED;
    if (--r->hlen > 0) {
        pf__heap_item it = r->heap[r->hlen];
        size_t pos = 0, n = r->hlen;
        for (;;) {
            size_t c = 4 * pos + 1, m;
            if (c + 4 <= n) { /* all four children: a tournament, no bounds tests */
                size_t m1 = item_less(&r->heap[c + 1], &r->heap[c]) ? c + 1 : c;
                size_t m2 = item_less(&r->heap[c + 3], &r->heap[c + 2]) ? c + 3 : c + 2;
                m = item_less(&r->heap[m2], &r->heap[m1]) ? m2 : m1;
            } else {
                if (c >= n) break;
                m = c;
                for (size_t i = c + 1; i < n; i++)
                    if (item_less(&r->heap[i], &r->heap[m])) m = i;
            }
            if (!item_less(&r->heap[m], &it)) break;
            r->heap[pos] = r->heap[m];
            r->nodes[r->heap[pos].node].heap_pos = (int32_t)pos;
            pos = m;
        }
        r->heap[pos] = it;
        r->nodes[it.node].heap_pos = (int32_t)pos;
    }
    return best;
}

/* The heuristic: the octile distance, or the differential heuristic of the
 * active landmarks when that is larger. Both are consistent, so is their
 * maximum. */
static inline double octile(const jps_run *r, int32_t x, int32_t y) {
    int32_t dx = r->gx - x, dy = r->gy - y, mx, mn;
    double h;
    dx = dx < 0 ? -dx : dx;
    dy = dy < 0 ? -dy : dy;
    mx = dx > dy ? dx : dy;
    mn = dx > dy ? dy : dx;
    h = r->c * ((double)mx + (PF_SQRT2 - 1.0) * (double)mn);
    if (r->lm) {
        const uint16_t *p = r->lm->d + (size_t)(y * r->w + x) * 2 * (size_t)r->lm->k;
        double best = 0.0, d;
        for (int a = 0; a < r->lm_n; a++) {
            int jj = r->lm_idx[a];
            double v = r->lm_goal[jj] - ((double)p[2 * jj] + (double)p[2 * jj + 1] * PF_SQRT2);
            v = v < 0 ? -v : v;
            best = v > best ? v : best;
        }
        d = best * (double)r->lm->cost * (1.0 - 1e-12);
        h = d > h ? d : h;
    }
    return h;
}

/* The layouts (pf_jps_layout), as compile-time constants of the variants,
 * with LAY_CHAIN or'ed in for the variants that take corridor turns
 * (relax). */
enum { LAY_SCAN, LAY_BITS, LAY_TABLES, LAY_CHAIN = 4 };
#define LAYOUT(lay) ((lay)&3)

/* Offers jump point (x, y) at cost gn, reached from node `parent` through
 * the corridor turns via[vs .. vs + vn). */
static inline __attribute__((always_inline)) void relax_now(jps_run *r, int32_t x, int32_t y,
                                                            double gn, int32_t parent, int32_t vs,
                                                            int32_t vn, int lay) {
    bool fresh;
    jnode *nd = node_at(r, y * r->w + x, &fresh);
    r->jump_points++;
    if (fresh) {
        double h = octile(r, x, y);
        int32_t id = (int32_t)(nd - r->nodes);
        nd->g = gn;
        nd->parent = parent;
        if (lay & LAY_CHAIN) r->vias[id] = (jvia){vs, vn};
        if (gn + h <= r->fref) {
            nd->heap_pos = JPS_STACKED;
            r->stack[r->sp++] = id;
        } else {
            heap_push(r, id, gn + h, h);
        }
        r->generated++;
    } else if (nd->heap_pos != PF__HEAP_CLOSED && gn < nd->g) {
        nd->g = gn;
        nd->parent = parent;
        if (lay & LAY_CHAIN) r->vias[nd - r->nodes] = (jvia){vs, vn};
        if (nd->heap_pos != JPS_STACKED) {
            double h = octile(r, x, y);
            heap_decrease(r, (int32_t)(nd - r->nodes), gn + h, h);
        }
        r->generated++;
    }
}

/* Offers the deferred jump points, in the order they were found. Deferring
 * changes nothing: the nodes they touch are read only when the next node is
 * taken off the open list, after the expansion. */
static inline __attribute__((always_inline)) void relax_flush(jps_run *r, int lay) {
    for (int i = 0; i < r->npend; i++)
        relax_now(r, r->pend[i].x, r->pend[i].y, r->pend[i].g, r->pend[i].parent, r->pend[i].via,
                  r->pend[i].nvia, lay);
    r->npend = 0;
}

/* Offers a jump point now, or with landmarks after the expansion's jumps. */
static inline __attribute__((always_inline)) void offer(jps_run *r, int32_t x, int32_t y, double gn,
                                                        int32_t parent, int32_t vs, int32_t vn,
                                                        int lay) {
    if (!r->lm) {
        relax_now(r, x, y, gn, parent, vs, vn, lay);
        return;
    }
    if (r->npend == (int)(sizeof(r->pend) / sizeof(r->pend[0]))) relax_flush(r, lay);
    __builtin_prefetch(r->lm->d + (size_t)(y * r->w + x) * 2 * (size_t)r->lm->k);
    r->pend[r->npend].x = x;
    r->pend[r->npend].y = y;
    r->pend[r->npend].parent = parent;
    r->pend[r->npend].via = vs;
    r->pend[r->npend].nvia = vn;
    r->pend[r->npend].g = gn;
    r->npend++;
}

/* Jump bit d of (x, y). */
static inline bool jbit(const jps_run *r, int d, int32_t x, int32_t y) {
    const pf_jps *j = r->j;
    return bit_get(j->bits + (size_t)d * j->plane + (size_t)(y + 1) * j->rstride, x);
}

/* Straight scan along row y from x = cell i towards sx: true with *e the
 * column where it ends at a jump point (or at the goal), false at a dead
 * end. With jump bits, a scan known to end at a wall is skipped unless the
 * goal is on the row; with tables, the entry is where the scan would stop. */
static inline __attribute__((always_inline)) bool find_h(const jps_run *r, int32_t i, int32_t x,
                                                         int32_t y, int sx, bool cc, int lay,
                                                         int32_t *e_out) {
    const pf_jps *j = r->j;
    const uint64_t *l = row_line(j, y);
    const int d = sx > 0 ? PF_DIR_E : PF_DIR_W;
    bool jp;
    int32_t e;
    if (LAYOUT(lay) == LAY_TABLES) {
        uint16_t t = r->jt[8 * (size_t)i + (size_t)d];
        e = x + sx * (int32_t)(t & PF__JT_DIST);
        jp = (t & PF__JT_STOP) != 0;
        if (y == r->gy && (r->gx - x) * sx > 0 && (e - r->gx) * sx >= 0) e = r->gx, jp = true;
        *e_out = e;
        return jp;
    }
    if (LAYOUT(lay) == LAY_BITS && y != r->gy && !jbit(r, d, x, y)) return false;
    if (sx > 0) {
        e = scan_up(l, l - j->rstride, l + j->rstride, x, cc, &jp);
        if (y == r->gy && r->gx > x && r->gx <= e) e = r->gx, jp = true;
    } else {
        e = scan_down(l, l - j->rstride, l + j->rstride, x, cc, &jp);
        if (y == r->gy && r->gx < x && r->gx >= e) e = r->gx, jp = true;
    }
    *e_out = e;
    return jp;
}

/* Straight scan along column x from y = cell i towards sy, on the
 * transposed grid: *e the row where it ends. */
static inline __attribute__((always_inline)) bool find_v(const jps_run *r, int32_t i, int32_t x,
                                                         int32_t y, int sy, bool cc, int lay,
                                                         int32_t *e_out) {
    const pf_jps *j = r->j;
    const uint64_t *l = col_line(j, x);
    const int d = sy > 0 ? PF_DIR_S : PF_DIR_N;
    bool jp;
    int32_t e;
    if (LAYOUT(lay) == LAY_TABLES) {
        uint16_t t = r->jt[8 * (size_t)i + (size_t)d];
        e = y + sy * (int32_t)(t & PF__JT_DIST);
        jp = (t & PF__JT_STOP) != 0;
        if (x == r->gx && (r->gy - y) * sy > 0 && (e - r->gy) * sy >= 0) e = r->gy, jp = true;
        *e_out = e;
        return jp;
    }
    if (LAYOUT(lay) == LAY_BITS && x != r->gx && !jbit(r, d, x, y)) return false;
    if (sy > 0) {
        e = scan_up(l, l - j->cstride, l + j->cstride, y, cc, &jp);
        if (x == r->gx && r->gy > y && r->gy <= e) e = r->gy, jp = true;
    } else {
        e = scan_down(l, l - j->cstride, l + j->cstride, y, cc, &jp);
        if (x == r->gx && r->gy < y && r->gy >= e) e = r->gy, jp = true;
    }
    *e_out = e;
    return jp;
}

/* A corridor turn: a cell whose only moves are two orthogonal steps at a
 * right angle (move masks E|S, E|N, W|S, W|N). */
static inline bool is_turn(uint8_t m) { return m < 16 && ((0x660u >> m) & 1u); }

/* Offers jump point (x, y), reached at cost gn from node `parent` by a jump
 * whose last leg ran in direction adir (PF_DIR_E..N; -1 for a diagonal).
 *
 * Dead ends first: a jump point no simple path from the start to the goal
 * can visit is dropped (deadends.h).
 *
 * Corridor turns: without corner cutting, a jump point that is a turn of a
 * one-cell corridor has one successor, the straight jump out of its other
 * side, and only two ways in. Its node would be expanded for that one jump,
 * so the jump is taken here, and again from where it ends while that is a
 * turn too; the turns passed are kept with the node they lead to, for the
 * path. A perfect maze is mostly such turns (maze512-1-0: 825 -> 137
 * expansions). Optimality: a turn's node would have no other successor, and
 * the only other way into the corridor is from its far end, which leads
 * back to the node this chain started from, already expanded at its least
 * cost, so no path through a turn is lost; the goal stops a chain (the
 * scans find it on their lines), and so does coming back to the parent (a
 * ring corridor) or a full turn buffer (the node is then offered where the
 * chain stands, a jump point like any other). */
static inline __attribute__((always_inline)) void
relax(jps_run *r, int32_t x, int32_t y, double gn, int32_t parent, int adir, bool cc, int lay) {
    int32_t i = y * r->w + x, vs = (int32_t)r->nvia;
    /* Without corner cutting the chain variants are the ones with dead ends
     * (search_full); the others need no test. */
    if ((cc || (lay & LAY_CHAIN)) && r->dead && !pf_deadends_allowed(r->dead, &r->dq, i)) return;
    if ((lay & LAY_CHAIN) && !cc && adir >= 0 && i != r->goal && is_turn(r->moves[i])) {
        const int32_t pc = r->nodes[parent].cell;
        while (i != r->goal && i != pc && is_turn(r->moves[i])) {
            int d = __builtin_ctz((unsigned)r->moves[i] & ~(1u << (adir ^ 1)));
            int32_t e;
            if (r->nvia == r->via_cap) {
                r->via_full = true;
                break;
            }
            r->via[r->nvia++] = i;
            if (d <= PF_DIR_W) {
                if (!find_h(r, i, x, y, d == PF_DIR_E ? 1 : -1, cc, lay, &e)) goto drop;
                gn += r->c * (double)(e > x ? e - x : x - e);
                x = e;
            } else {
                if (!find_v(r, i, x, y, d == PF_DIR_S ? 1 : -1, cc, lay, &e)) goto drop;
                gn += r->c * (double)(e > y ? e - y : y - e);
                y = e;
            }
            adir = d;
            i = y * r->w + x;
        }
        /* The turns passed need no test of their own: the chain is a simple
         * path from its parent, whose cell passed, and a simple path between
         * two allowed cells only visits allowed blocks (deadends.h). Dead
         * side corridors fail at their first turn, above. */
        if (!pf_deadends_allowed(r->dead, &r->dq, i)) goto drop;
    }
    offer(r, x, y, gn, parent, vs, (int32_t)r->nvia - vs, lay);
    return;
drop:
    r->nvia = (uint32_t)vs;
}

static inline __attribute__((always_inline)) void jump_h(jps_run *r, int32_t i, int32_t x,
                                                         int32_t y, int sx, double gb,
                                                         int32_t parent, bool cc, int lay) {
    int32_t e;
    if (find_h(r, i, x, y, sx, cc, lay, &e))
        relax(r, e, y, gb + r->c * (double)(e > x ? e - x : x - e), parent,
              sx > 0 ? PF_DIR_E : PF_DIR_W, cc, lay);
}

static inline __attribute__((always_inline)) void jump_v(jps_run *r, int32_t i, int32_t x,
                                                         int32_t y, int sy, double gb,
                                                         int32_t parent, bool cc, int lay) {
    int32_t e;
    if (find_v(r, i, x, y, sy, cc, lay, &e))
        relax(r, x, e, gb + r->c * (double)(e > y ? e - y : y - e), parent,
              sy > 0 ? PF_DIR_S : PF_DIR_N, cc, lay);
}

/* Diagonal jump with the tables: from stop to stop, one entry each, and to
 * the one cell where the diagonal meets the goal's row or column while the
 * goal lies ahead of it in both axes (from any other diagonal cell the two
 * straight jumps lead away from the goal). */
static inline __attribute__((always_inline)) void jump_d_tables(jps_run *r, int32_t x, int32_t y,
                                                                int sx, int sy, double gb,
                                                                int32_t from, int32_t parent,
                                                                bool cc) {
    const int d = dir_of[sy + 1][sx + 1];
    const int32_t off = sx + sy * r->w;
    const int32_t gdx = (r->gx - x) * sx, gdy = (r->gy - y) * sy;
    const int32_t kg = gdx > 0 && gdy > 0 ? (gdx < gdy ? gdx : gdy) : 0;
    int32_t i = from, k = 0;
    for (;;) {
        const uint16_t t = r->jt[8 * (size_t)i + (size_t)d];
        int32_t n = (int32_t)(t & PF__JT_DIST);
        double gk;
        if (kg > k && kg <= k + n)
            n = kg - k;
        else if (!(t & PF__JT_STOP))
            return;
        i += n * off;
        x += n * sx;
        y += n * sy;
        k += n;
        gk = gb + r->cd * (double)k;
        if (i == r->goal || (cc && forced_diag(r->j, r->moves, i, x, y, sx, sy))) {
            relax(r, x, y, gk, parent, -1, cc, LAY_TABLES);
            return;
        }
        jump_h(r, i, x, y, sx, gk, parent, cc, LAY_TABLES);
        jump_v(r, i, x, y, sy, gk, parent, cc, LAY_TABLES);
    }
}

/* Diagonal jump from (x, y) = cell `from` (node `parent`) towards (sx, sy),
 * one diagonal cell at a time, launching both straight scans from each
 * cell where they may find something: with jump bits, the stops and the
 * cells on the goal's row or column; without, every cell. */
static inline __attribute__((always_inline)) void jump_d(jps_run *r, int32_t x, int32_t y, int sx,
                                                         int sy, double gb, int32_t from,
                                                         int32_t parent, bool cc, int lay) {
    const int d = dir_of[sy + 1][sx + 1];
    const uint32_t bit = 1u << d;
    const int32_t off = sx + sy * r->w;
    const uint64_t *stops = r->j->bits + (size_t)d * r->j->plane;
    const ptrdiff_t lstep = sy * (ptrdiff_t)r->j->rstride;
    const uint64_t *sl = stops + (size_t)(y + 1) * r->j->rstride;
    int32_t i = from, k = 0;
    if (LAYOUT(lay) == LAY_TABLES) {
        jump_d_tables(r, x, y, sx, sy, gb, from, parent, cc);
        return;
    }
    while (r->moves[i] & bit) {
        double gk;
        i += off;
        x += sx;
        y += sy;
        k++;
        sl += lstep;
        if (LAYOUT(lay) == LAY_BITS && !bit_get(sl, x) && x != r->gx && y != r->gy) continue;
        gk = gb + r->cd * (double)k;
        if (i == r->goal || (cc && forced_diag(r->j, r->moves, i, x, y, sx, sy))) {
            relax(r, x, y, gk, parent, -1, cc, lay);
            return;
        }
        jump_h(r, i, x, y, sx, gk, parent, cc, lay);
        jump_v(r, i, x, y, sy, gk, parent, cc, lay);
    }
}

static inline int sgn(int32_t v) { return (v > 0) - (v < 0); }

/* i / w without a division: with m = ceil(2^40 / w), i * m / 2^40 exceeds
 * i / w by less than i / 2^40 <= 2^-16 < 1 / w for i < 2^24 cells and
 * w < 2^16 (the default limits), too little to reach the next integer.
 * wmagic is 0 on grids past that, which divide. */
static inline int32_t row_of(const jps_run *r, int32_t i) {
    if (r->wmagic) return (int32_t)(((uint64_t)i * r->wmagic) >> 40);
    return i / r->w;
}

/* The directions worth trying from cell c = (x, y), by its arrival
 * direction (read from its parent's offset) and the forced neighbours. */
static inline __attribute__((always_inline)) uint32_t
successors(const jps_run *r, int32_t c, int32_t id, int32_t x, int32_t y, bool cc, int lay) {
    const pf_jps *j = r->j;
    const jnode *nd = &r->nodes[id];
    int32_t p, dx, dy;
    uint32_t m;
    int sx, sy;
    if (nd->parent < 0) return r->moves[c];
    /* The cell it was entered from: its parent, or the last corridor turn
     * passed on the way. */
    p = (lay & LAY_CHAIN) && r->vias[id].n ? r->via[r->vias[id].via + r->vias[id].n - 1]
                                           : r->nodes[nd->parent].cell;
    dy = row_of(r, p);
    dx = x - (p - dy * r->w);
    dy = y - dy;
    sx = sgn(dx);
    sy = sgn(dy);
    if (dx * sx == dy * sy) {
        m = dbit(sx, 0) | dbit(0, sy) | dbit(sx, sy);
        if (cc) {
            if (!walkable(j, x - sx, y)) m |= dbit(-sx, sy);
            if (!walkable(j, x, y - sy)) m |= dbit(sx, -sy);
        }
    } else {
        /* Arrived straight (possibly after a diagonal), along the longer
         * axis of the offset. */
        if (dx * sx > dy * sy)
            sy = 0;
        else
            sx = 0;
        m = dbit(sx, sy);
        for (int q = -1; q <= 1; q += 2) {
            int qx = sx ? 0 : q, qy = sx ? q : 0;
            if (cc) {
                if (!walkable(j, x + qx, y + qy)) m |= dbit(sx + qx, sy + qy);
            } else if (!walkable(j, x - sx + qx, y - sy + qy)) {
                m |= dbit(qx, qy) | dbit(sx + qx, sy + qy);
            }
        }
    }
    return m & r->moves[c];
}

static bool polled_stop(const pf_query *q, uint64_t expanded) {
    return q->should_stop && (expanded & PF__STOP_POLL_MASK) == 0 && q->should_stop(q->stop_ud);
}

static inline __attribute__((always_inline)) pf_status run_jps(jps_run *r, const pf_query *q,
                                                               pf_result *out, bool cc, int lay) {
    pf_search_ctx *ctx = r->ctx;
    const int32_t w = r->w;
    bool fresh;
    jnode *ns = node_at(r, q->start.y * w + q->start.x, &fresh);

    ns->parent = -1;
    ns->g = 0.0;
    if (lay & LAY_CHAIN) r->vias[0] = (jvia){0, 0};
    {
        double hs = octile(r, q->start.x, q->start.y);
        heap_push(r, 0, hs, hs);
    }
    r->generated = 1;
    for (;;) {
        int32_t id, c, x, y;
        uint32_t m;
        double gc;
        if (r->sp > 0) {
            id = r->stack[--r->sp];
            r->nodes[id].heap_pos = PF__HEAP_CLOSED;
        } else if (r->hlen > 0) {
            /* A successor whose f equals the least f in the open list may be
             * expanded next without a round trip through the heap: with a
             * consistent heuristic, expanding any node of least f keeps A*
             * optimal. The margin absorbs rounding in g + h only. */
            r->fref = r->heap[0].f + 1e-12 * (1.0 + r->heap[0].f);
            id = heap_pop(r);
        } else {
            break;
        }
        c = r->nodes[id].cell;
        if (c == r->goal) {
            r->goal_id = id;
            return PF_OK;
        }
        if (polled_stop(q, out->expanded)) return PF_ECANCELED;
        if (q->max_expanded && out->expanded >= q->max_expanded) return PF_EBUDGET;
        out->expanded++;
        if (q->record_expanded) ctx->expanded[ctx->expanded_len++] = c;
        y = row_of(r, c);
        x = c - y * w;
        gc = r->nodes[id].g;
        m = successors(r, c, id, x, y, cc, lay);
        if (m & (1u << PF_DIR_E)) jump_h(r, c, x, y, 1, gc, id, cc, lay);
        if (m & (1u << PF_DIR_W)) jump_h(r, c, x, y, -1, gc, id, cc, lay);
        if (m & (1u << PF_DIR_S)) jump_v(r, c, x, y, 1, gc, id, cc, lay);
        if (m & (1u << PF_DIR_N)) jump_v(r, c, x, y, -1, gc, id, cc, lay);
        if (m & (1u << PF_DIR_SE)) jump_d(r, x, y, 1, 1, gc, c, id, cc, lay);
        if (m & (1u << PF_DIR_SW)) jump_d(r, x, y, -1, 1, gc, c, id, cc, lay);
        if (m & (1u << PF_DIR_NE)) jump_d(r, x, y, 1, -1, gc, c, id, cc, lay);
        if (m & (1u << PF_DIR_NW)) jump_d(r, x, y, -1, -1, gc, c, id, cc, lay);
        if (r->npend) relax_flush(r, lay);
    }
    return PF_NO_PATH;
}

/* The variants, each compiled with its rule and layout fixed; without
 * corner cutting also with corridor turns (maps with dead ends). */
static pf_status run_scan_cc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, true, LAY_SCAN);
}

static pf_status run_scan_nocc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, false, LAY_SCAN);
}

static pf_status run_bits_cc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, true, LAY_BITS);
}

static pf_status run_bits_nocc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, false, LAY_BITS);
}

static pf_status run_tables_cc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, true, LAY_TABLES);
}

static pf_status run_tables_nocc(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, false, LAY_TABLES);
}

static pf_status run_scan_chain(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, false, LAY_SCAN | LAY_CHAIN);
}

static pf_status run_bits_chain(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, false, LAY_BITS | LAY_CHAIN);
}

static pf_status run_tables_chain(jps_run *r, const pf_query *q, pf_result *out) {
    return run_jps(r, q, out, false, LAY_TABLES | LAY_CHAIN);
}

/* Writes the cells of segment a -> b (diagonal first, then straight) from
 * pt[0] = a up to, not including, b. Returns the number of steps. */
static inline int32_t write_segment(pf_point *pt, pf_point a, pf_point b) {
    int32_t adx = abs(b.x - a.x), ady = abs(b.y - a.y);
    int32_t diag = adx > ady ? ady : adx, n = adx > ady ? adx : ady;
    int32_t sx = sgn(b.x - a.x), sy = sgn(b.y - a.y), x = a.x, y = a.y;
    for (int32_t t = 0; t < diag; t++, x += sx, y += sy) pt[t] = (pf_point){x, y};
    if (adx > ady)
        sy = 0;
    else
        sx = 0;
    for (int32_t t = diag; t < n; t++, x += sx, y += sy) pt[t] = (pf_point){x, y};
    return n;
}

/* The cost of segment a -> b: its diagonal steps, then its straight ones.
 * A product per kind rather than a sum per step: the sums are one dependent
 * floating-point add per cell (4 cycles each), which on short queries took
 * as long as finding the path; the two differ by a few ulps. */
static inline double segment_cost(const jps_run *r, pf_point a, pf_point b) {
    int32_t adx = abs(b.x - a.x), ady = abs(b.y - a.y);
    int32_t diag = adx > ady ? ady : adx, straight = (adx > ady ? adx : ady) - diag;
    return r->cd * (double)diag + r->c * (double)straight;
}

static inline pf_point cell_point(const jps_run *r, int32_t i) {
    int32_t y = row_of(r, i);
    return (pf_point){i - y * r->w, y};
}

/* Expands the jump points from the goal back to the start into the full cell
 * path. Each parent -> child segment is diagonal first, then straight. The
 * parent links are reversed first (they are spent), so the path is written
 * from the start on and its cost summed segment by segment in path order. */
static pf_status build_path(jps_run *r, pf_search_ctx *ctx, pf_result *out) {
    jnode *nodes = r->nodes;
    const int32_t w = r->w;
    size_t n = 1, k = 0;
    pf_status st;
    double cost = 0.0;

    for (int32_t i = r->goal_id, p, next = -1; i >= 0; next = i, i = p) {
        p = nodes[i].parent;
        if (p >= 0) {
            /* Its legs: parent, the corridor turns passed, the node. */
            int32_t cp = nodes[p].cell;
            jvia vi = r->chain ? r->vias[i] : (jvia){0, 0};
            for (int32_t v = 0; v <= vi.n; v++) {
                int32_t ci = v < vi.n ? r->via[vi.via + v] : nodes[i].cell;
                int32_t ay = row_of(r, cp), by = row_of(r, ci);
                int32_t dx = abs((ci - by * w) - (cp - ay * w)), dy = abs(by - ay);
                n += (size_t)(dx > dy ? dx : dy);
                cp = ci;
            }
        }
        nodes[i].parent = next; /* now the next jump point towards the goal */
    }
    (void)w;
    st = pf__ctx_reserve_path(ctx, n);
    if (st) return st;
    /* The start is node 0. A node's turns are on the leg that leads to it. */
    for (int32_t i = 0, nx; (nx = nodes[i].parent) >= 0; i = nx) {
        pf_point a = cell_point(r, nodes[i].cell);
        jvia vn = r->chain ? r->vias[nx] : (jvia){0, 0};
        for (int32_t v = 0; v <= vn.n; v++) {
            pf_point b = cell_point(r, v < vn.n ? r->via[vn.via + v] : nodes[nx].cell);
            k += (size_t)write_segment(ctx->path + k, a, b);
            cost += segment_cost(r, a, b);
            a = b;
        }
    }
    ctx->path[k] = cell_point(r, r->goal);
    out->path = ctx->path;
    out->path_len = n;
    out->cost = cost;
    return PF_OK;
}

/* Not marked cold: GCC then takes the expansion loops only it calls for
 * cold too and optimizes them for size (searches on 8room, den520d and
 * random512-40-0 were 20-27% slower). */
pf_status pf__jps_search_full(pf_search_ctx *ctx, const pf_jps *j, const pf_grid *g,
                              const pf_query *q, pf_result *out, bool direct_tested) {
    size_t cells = (size_t)g->w * (size_t)g->h;
    jps_run r;
    pf_status st;
    uint8_t ucost = 1;

    if (!j || !pf__jps_supports_fast(j, g, &ucost)) {
        pf_query qa = *q;
        qa.algorithm = PF_ALGO_ASTAR;
        st = pf_search(ctx, g, &qa, out);
        out->algorithm = PF_ALGO_ASTAR;
        return st;
    }
    memset(out, 0, sizeof(*out));
    out->algorithm = PF_ALGO_JPS;
    /* The heuristic is always octile; an inadmissible choice is refused as
     * astar refuses it, so both answer the same queries. */
    if ((unsigned)q->heuristic >= PF_H_COUNT ||
        (q->heuristic > PF_H_OCTILE && !pf_heuristic_is_admissible(q->heuristic, 8)))
        return out->status = PF_EINVAL;
    if (j->w != g->w || j->h != g->h) return out->status = PF_EINVAL;
    st = pf__check_endpoints(g, q->start, q->goal);
    if (st) return out->status = st;
    ctx->expanded_len = 0;
    if (q->record_expanded) {
        st = pf__ctx_reserve_expanded(ctx, cells);
        if (st) return out->status = st;
    }
    if (q->start.x == q->goal.x && q->start.y == q->goal.y) {
        out->generated = 1;
        return pf__answer_trivial(ctx, q->start, out);
    }
    if (!direct_tested && j->direct && pf__jps_try_direct(ctx, j, g, q, ucost, out, &st)) return st;

    r.ctx = ctx;
    r.j = j;
    r.moves = g->moves;
    r.jt = j->jt;
    r.w = g->w;
    r.wmagic = j->wmagic;
    r.gx = q->goal.x;
    r.gy = q->goal.y;
    r.goal = q->goal.y * g->w + q->goal.x;
    r.c = (double)ucost;
    r.cd = r.c * PF_SQRT2;
    /* Landmarks measured at another cost, under another corner rule, or for
     * another map, do not bound this one. */
    r.lm = j->lm && j->lm->cost == ucost && j->lm->w == g->w && j->lm->h == g->h &&
                   j->lm->cut == g->corner_cutting
               ? j->lm
               : NULL;
    r.dead = NULL;
    if (r.lm && r.lm->dead &&
        pf_deadends_begin(r.lm->dead, q->start.y * g->w + q->start.x, r.goal, &r.dq))
        r.dead = r.lm->dead;
    /* On a map that is nearly all dead ends (a perfect maze: a tree), what
     * the pruning leaves is the path itself, and the heuristic only costs
     * (maze512-1-0: p50 52 -> 41 us without it). */
    if (r.dead && r.dead->dead >= PF_DEADENDS_TREE) r.lm = NULL;
    /* Corridor turns (relax) are taken where corridors are: on maps with
     * dead ends. Elsewhere their test cost 3-5% (32room_000, den520d). */
    r.chain = r.dead && !g->corner_cutting;
    if (r.lm) {
        /* The active landmarks: the ones that bound the start's distance to
         * the goal best (ALT's per-query selection, Goldberg & Harrelson,
         * "Computing the shortest path: A* search meets graph theory", SODA
         * 2005). Each is a consistent bound, so is their maximum. */
        double sd[PF_LANDMARKS_MAX], val[PF_LANDMARKS_MAX];
        int want = j->active_landmarks < r.lm->k ? j->active_landmarks : r.lm->k;
        pf_landmarks_dist(r.lm, r.goal, r.lm_goal);
        pf_landmarks_dist(r.lm, q->start.y * g->w + q->start.x, sd);
        for (int a = 0; a < r.lm->k; a++) val[a] = fabs(r.lm_goal[a] - sd[a]);
        r.lm_n = 0;
        while (r.lm_n < want) {
            int best = 0;
            for (int c = 1; c < r.lm->k; c++)
                if (val[c] > val[best]) best = c;
            r.lm_idx[r.lm_n++] = best;
            val[best] = -1.0;
        }
    }
    r.jump_points = 0;
    r.generated = 0;
    r.fref = -1.0;
    r.sp = 0;
    r.npend = 0;
    r.nvia = 0;
    r.via_full = false;
    r.nn = 0;
    r.goal_id = -1;
    r.hlen = 0;
    r.seq = 0;
    {
        jps_scratch *sc;
        st = scratch_get(ctx, cells, &sc);
        if (st) return out->status = st;
        r.stack = sc->stack;
        r.nodes = sc->nodes;
        r.heap = sc->heap;
        r.slots = sc->slots;
        r.slots_cap = sc->slots_cap;
        r.via = sc->via;
        r.vias = sc->vias;
        r.via_cap = (uint32_t)sc->via_cap;
        r.smask = JPS_SLOTS_MIN - 1;
        r.sshift = 32 - (uint32_t)__builtin_ctz(JPS_SLOTS_MIN);
    }
    switch (pf__jps_layout_for(j, g)) {
    case PF_JPS_LAYOUT_TABLES:
        st = g->corner_cutting ? run_tables_cc(&r, q, out)
             : r.chain         ? run_tables_chain(&r, q, out)
                               : run_tables_nocc(&r, q, out);
        break;
    case PF_JPS_LAYOUT_BITS:
        st = g->corner_cutting ? run_bits_cc(&r, q, out)
             : r.chain         ? run_bits_chain(&r, q, out)
                               : run_bits_nocc(&r, q, out);
        break;
    default:
        st = g->corner_cutting ? run_scan_cc(&r, q, out)
             : r.chain         ? run_scan_chain(&r, q, out)
                               : run_scan_nocc(&r, q, out);
        break;
    }
    out->generated = r.generated;
    out->jump_points = r.jump_points;
    if (q->record_expanded) {
        out->expanded_cells = ctx->expanded;
        out->expanded_cells_len = ctx->expanded_len;
    }
    if (st == PF_OK) st = build_path(&r, ctx, out);
    index_clear(&r);
    if (r.via_full) scratch_grow_via(ctx->ext[PF__EXT_JPS]);
    if (st != PF_OK) {
        out->path = NULL;
        out->path_len = 0;
        out->cost = 0.0;
    }
    return out->status = st;
}
