/* grid.c -- the map model. See grid.h for the rules. */
#include "grid_internal.h"

#include <stdlib.h>
#include <string.h>

const int8_t pf_dir_dx[PF_DIR_COUNT] = {1, -1, 0, 0, 1, -1, 1, -1};
const int8_t pf_dir_dy[PF_DIR_COUNT] = {0, 0, 1, -1, 1, 1, -1, -1};

static const int opposite_dir[4] = {PF_DIR_W, PF_DIR_E, PF_DIR_N, PF_DIR_S};

pf_grid_limits pf_grid_default_limits(void) {
    pf_grid_limits l = {PF_GRID_DEFAULT_MAX_SIDE, PF_GRID_DEFAULT_MAX_CELLS,
                        PF_GRID_DEFAULT_MAX_DOORS};
    return l;
}

static inline bool in_bounds(const pf_grid *g, int32_t x, int32_t y) {
    return x >= 0 && y >= 0 && x < g->w && y < g->h;
}

/* Whether the orthogonal edge from cell i in direction d is a wall. */
static inline bool edge_blocked(const pf_grid *g, int32_t i, int d) {
    return g->walls && (g->walls[i] & (1u << d));
}

/* An L route of a diagonal step from a to b through the orthogonal cell c,
 * entered from a in direction d1 and left towards b in direction d2. */
static bool route_open(const pf_grid *g, int32_t a, int32_t c, int d1, int d2) {
    return g->cost[c] != 0 && !edge_blocked(g, a, d1) && !edge_blocked(g, c, d2);
}

/* Recomputes the move mask of cell (x, y) from the rules. */
static void update_moves(pf_grid *g, int32_t x, int32_t y) {
    int32_t i = y * g->w + x;
    uint8_t m = 0;
    if (g->cost[i] != 0) {
        for (int d = 0; d < 4; d++) {
            int32_t nx = x + pf_dir_dx[d], ny = y + pf_dir_dy[d];
            if (!in_bounds(g, nx, ny)) continue;
            int32_t j = ny * g->w + nx;
            if (g->cost[j] != 0 && !edge_blocked(g, i, d)) m |= (uint8_t)(1u << d);
        }
        if (g->connectivity == 8) {
            for (int d = 4; d < 8; d++) {
                int dx = pf_dir_dx[d], dy = pf_dir_dy[d];
                int32_t nx = x + dx, ny = y + dy;
                if (!in_bounds(g, nx, ny)) continue;
                int32_t j = ny * g->w + nx;
                if (g->cost[j] == 0) continue;
                int dh = dx > 0 ? PF_DIR_E : PF_DIR_W; /* horizontal part */
                int dv = dy > 0 ? PF_DIR_S : PF_DIR_N; /* vertical part */
                int32_t ch = y * g->w + nx;            /* cell beside a horizontally */
                int32_t cv = ny * g->w + x;            /* cell beside a vertically */
                bool r1 = route_open(g, i, ch, dh, dv);
                bool r2 = route_open(g, i, cv, dv, dh);
                if (g->corner_cutting ? (r1 || r2) : (r1 && r2)) m |= (uint8_t)(1u << d);
            }
        }
    }
    g->moves[i] = m;
}

/* Recomputes the masks of every cell within Chebyshev distance 1 of (x, y):
 * exactly the cells whose moves can depend on that cell or its edges. */
static void update_around(pf_grid *g, int32_t x, int32_t y) {
    for (int32_t yy = y - 1; yy <= y + 1; yy++)
        for (int32_t xx = x - 1; xx <= x + 1; xx++)
            if (in_bounds(g, xx, yy)) update_moves(g, xx, yy);
}

void pf__grid_update_rows(pf_grid *g, int32_t y0, int32_t y1) {
    for (int32_t y = y0; y < y1; y++)
        for (int32_t x = 0; x < g->w; x++) update_moves(g, x, y);
}

static void update_all(pf_grid *g) { pf__grid_update_rows(g, 0, g->h); }

pf_status pf_grid_create(int32_t w, int32_t h, const pf_grid_limits *lim, pf_grid **out) {
    pf_grid_limits l = lim ? *lim : pf_grid_default_limits();
    int64_t cells;
    pf_grid *g;

    *out = NULL;
    if (w < 1 || h < 1) return PF_ERANGE;
    if (w > l.max_side || h > l.max_side) return PF_ELIMIT;
    if (__builtin_mul_overflow((int64_t)w, (int64_t)h, &cells) || cells > l.max_cells ||
        cells > INT32_MAX / 2)
        return PF_ELIMIT;

    g = calloc(1, sizeof(*g));
    if (!g) return PF_ENOMEM;
    g->cost = malloc((size_t)cells);
    if (!g->cost) goto out_free_grid;
    g->moves = malloc((size_t)cells);
    if (!g->moves) goto out_free_cost;

    g->w = w;
    g->h = h;
    g->lim = l;
    g->connectivity = 8;
    memset(g->cost, 1, (size_t)cells);
    g->walkable = cells;
    g->cost_hist[1] = (uint32_t)cells;
    update_all(g);
    *out = g;
    return PF_OK;

out_free_cost:
    free(g->cost);
out_free_grid:
    free(g);
    return PF_ENOMEM;
}

static void free_door(pf__door *d) {
    free(d->cells);
    free(d->open_cost);
    free(d->edges);
}

void pf_grid_destroy(pf_grid *g) {
    if (!g) return;
    for (int32_t i = 0; i < g->ndoors; i++) free_door(&g->doors[i]);
    free(g->doors);
    free(g->walls);
    free(g->moves);
    free(g->cost);
    free(g);
}

static void *dup_mem(const void *p, size_t n) {
    void *q;
    if (!p || n == 0) return NULL;
    q = malloc(n);
    if (q) memcpy(q, p, n);
    return q;
}

pf_grid *pf_grid_clone(const pf_grid *src) {
    size_t cells = (size_t)src->w * (size_t)src->h;
    pf_grid *g = calloc(1, sizeof(*g));
    if (!g) return NULL;
    *g = *src;
    g->cost = NULL;
    g->moves = NULL;
    g->walls = NULL;
    g->doors = NULL;
    g->ndoors = 0;
    g->cost = dup_mem(src->cost, cells);
    g->moves = dup_mem(src->moves, cells);
    if (!g->cost || !g->moves) goto fail;
    if (src->walls) {
        g->walls = dup_mem(src->walls, cells);
        if (!g->walls) goto fail;
    }
    if (src->ndoors > 0) {
        g->doors = calloc((size_t)src->ndoors, sizeof(*g->doors));
        if (!g->doors) goto fail;
        for (int32_t i = 0; i < src->ndoors; i++) {
            const pf__door *s = &src->doors[i];
            pf__door *d = &g->doors[i];
            *d = *s;
            d->cells = dup_mem(s->cells, s->ncells * sizeof(*s->cells));
            d->open_cost = dup_mem(s->open_cost, s->ncells);
            d->edges = dup_mem(s->edges, s->nedges * sizeof(*s->edges));
            g->ndoors = i + 1;
            if ((s->ncells && (!d->cells || !d->open_cost)) || (s->nedges && !d->edges)) goto fail;
        }
    }
    return g;
fail:
    pf_grid_destroy(g);
    return NULL;
}

int32_t pf_grid_width(const pf_grid *g) { return g->w; }
int32_t pf_grid_height(const pf_grid *g) { return g->h; }
int pf_grid_connectivity(const pf_grid *g) { return g->connectivity; }
bool pf_grid_corner_cutting(const pf_grid *g) { return g->corner_cutting; }

pf_status pf_grid_set_rules(pf_grid *g, int connectivity, bool corner_cutting) {
    if (connectivity != 4 && connectivity != 8) return PF_EINVAL;
    g->connectivity = connectivity;
    g->corner_cutting = corner_cutting;
    update_all(g);
    return PF_OK;
}

bool pf_grid_in_bounds(const pf_grid *g, pf_point p) { return in_bounds(g, p.x, p.y); }

bool pf_grid_is_walkable(const pf_grid *g, pf_point p) {
    return in_bounds(g, p.x, p.y) && g->cost[p.y * g->w + p.x] != 0;
}

uint8_t pf_grid_cost(const pf_grid *g, pf_point p) {
    return in_bounds(g, p.x, p.y) ? g->cost[p.y * g->w + p.x] : 0;
}

pf_status pf_grid_set_cost(pf_grid *g, pf_point p, uint8_t cost) {
    int32_t i;
    uint8_t old;
    if (!in_bounds(g, p.x, p.y)) return PF_ERANGE;
    i = p.y * g->w + p.x;
    old = g->cost[i];
    if (old == cost) return PF_OK;
    g->cost_hist[old]--;
    g->cost_hist[cost]++;
    g->walkable += (cost != 0) - (old != 0);
    g->cost[i] = cost;
    update_around(g, p.x, p.y);
    return PF_OK;
}

pf_status pf_grid_set_wall(pf_grid *g, pf_point p, int dir, bool blocked) {
    int32_t nx, ny, i, j;
    bool was;
    if (dir < 0 || dir > 3) return PF_EINVAL;
    nx = p.x + pf_dir_dx[dir];
    ny = p.y + pf_dir_dy[dir];
    if (!in_bounds(g, p.x, p.y) || !in_bounds(g, nx, ny)) return PF_ERANGE;
    if (!g->walls) {
        if (!blocked) return PF_OK;
        g->walls = calloc((size_t)g->w * (size_t)g->h, 1);
        if (!g->walls) return PF_ENOMEM;
    }
    i = p.y * g->w + p.x;
    j = ny * g->w + nx;
    was = (g->walls[i] >> dir) & 1u;
    if (was == blocked) return PF_OK;
    if (blocked) {
        g->walls[i] |= (uint8_t)(1u << dir);
        g->walls[j] |= (uint8_t)(1u << opposite_dir[dir]);
        g->nwalls++;
    } else {
        g->walls[i] &= (uint8_t) ~(1u << dir);
        g->walls[j] &= (uint8_t) ~(1u << opposite_dir[dir]);
        g->nwalls--;
    }
    update_around(g, p.x, p.y);
    update_around(g, nx, ny);
    return PF_OK;
}

bool pf_grid_is_wall(const pf_grid *g, pf_point p, int dir) {
    if (dir < 0 || dir > 3 || !in_bounds(g, p.x, p.y)) return false;
    return edge_blocked(g, p.y * g->w + p.x, dir);
}

bool pf_grid_has_walls(const pf_grid *g) { return g->nwalls > 0; }

bool pf_grid_is_uniform(const pf_grid *g) {
    int kinds = 0;
    if (g->nwalls > 0) return false;
    for (int c = 1; c < 256; c++) kinds += g->cost_hist[c] != 0;
    return kinds <= 1;
}

uint8_t pf_grid_min_cost(const pf_grid *g) {
    for (int c = 1; c < 256; c++)
        if (g->cost_hist[c]) return (uint8_t)c;
    return 1;
}

int64_t pf_grid_walkable_count(const pf_grid *g) { return g->walkable; }

uint8_t pf_grid_moves(const pf_grid *g, pf_point p) {
    return in_bounds(g, p.x, p.y) ? g->moves[p.y * g->w + p.x] : 0;
}

/* Direction of the step a -> b, or -1 when they are not neighbours. */
static int step_dir(pf_point a, pf_point b) {
    int dx = b.x - a.x, dy = b.y - a.y;
    for (int d = 0; d < PF_DIR_COUNT; d++)
        if (pf_dir_dx[d] == dx && pf_dir_dy[d] == dy) return d;
    return -1;
}

bool pf_grid_can_step(const pf_grid *g, pf_point a, pf_point b) {
    int d;
    if (!in_bounds(g, a.x, a.y)) return false;
    d = step_dir(a, b);
    return d >= 0 && (g->moves[a.y * g->w + a.x] & (1u << d));
}

double pf_grid_step_cost(const pf_grid *g, pf_point a, pf_point b) {
    int d = step_dir(a, b);
    if (d < 0 || !in_bounds(g, b.x, b.y)) return 0.0;
    return g->cost[b.y * g->w + b.x] * pf__dir_len(d);
}

/* Doors */

pf_status pf_grid_add_door(pf_grid *g, const char *name, const pf_point *cells, size_t ncells,
                           const pf_edge *edges, size_t nedges, bool open, int32_t *index) {
    size_t nlen = name ? strlen(name) : 0;
    pf__door d;
    pf__door *grown;

    if (nlen == 0 || nlen >= PF_DOOR_NAME_MAX) return PF_EINVAL;
    if (pf_grid_door_find(g, name) >= 0) return PF_EINVAL;
    if (g->ndoors >= g->lim.max_doors) return PF_ELIMIT;
    if (ncells > (size_t)g->w * (size_t)g->h || nedges > 4 * (size_t)g->w * (size_t)g->h)
        return PF_ELIMIT;
    for (size_t i = 0; i < ncells; i++)
        if (!in_bounds(g, cells[i].x, cells[i].y)) return PF_ERANGE;
    for (size_t i = 0; i < nedges; i++) {
        int dir = edges[i].dir;
        if (dir < 0 || dir > 3) return PF_EINVAL;
        if (!in_bounds(g, edges[i].a.x, edges[i].a.y) ||
            !in_bounds(g, edges[i].a.x + pf_dir_dx[dir], edges[i].a.y + pf_dir_dy[dir]))
            return PF_ERANGE;
    }

    memset(&d, 0, sizeof(d));
    memcpy(d.name, name, nlen + 1);
    d.open = open;
    d.ncells = ncells;
    d.nedges = nedges;
    if (ncells) {
        d.cells = dup_mem(cells, ncells * sizeof(*cells));
        d.open_cost = malloc(ncells);
        if (!d.cells || !d.open_cost) goto out_free_door;
        for (size_t i = 0; i < ncells; i++) {
            uint8_t c = g->cost[cells[i].y * g->w + cells[i].x];
            d.open_cost[i] = c ? c : 1;
        }
    }
    if (nedges) {
        d.edges = dup_mem(edges, nedges * sizeof(*edges));
        if (!d.edges) goto out_free_door;
    }
    /* Make sure the wall array exists before changing anything, so a closed
     * door cannot fail half-applied. */
    if (nedges && !g->walls) {
        g->walls = calloc((size_t)g->w * (size_t)g->h, 1);
        if (!g->walls) goto out_free_door;
    }
    grown = realloc(g->doors, ((size_t)g->ndoors + 1) * sizeof(*g->doors));
    if (!grown) goto out_free_door;
    g->doors = grown;
    g->doors[g->ndoors] = d;
    *index = g->ndoors++;
    /* Apply the declared state: mark it as the opposite, then switch. */
    g->doors[*index].open = !open;
    return pf_grid_set_door(g, *index, open);

out_free_door:
    free_door(&d);
    return PF_ENOMEM;
}

int32_t pf_grid_door_count(const pf_grid *g) { return g->ndoors; }

int32_t pf_grid_door_find(const pf_grid *g, const char *name) {
    for (int32_t i = 0; i < g->ndoors; i++)
        if (strcmp(g->doors[i].name, name) == 0) return i;
    return -1;
}

const char *pf_grid_door_name(const pf_grid *g, int32_t index) {
    return index >= 0 && index < g->ndoors ? g->doors[index].name : NULL;
}

bool pf_grid_door_is_open(const pf_grid *g, int32_t index) {
    return index >= 0 && index < g->ndoors && g->doors[index].open;
}

const pf_point *pf_grid_door_cells(const pf_grid *g, int32_t index, size_t *n) {
    *n = 0;
    if (index < 0 || index >= g->ndoors) return NULL;
    *n = g->doors[index].ncells;
    return g->doors[index].cells;
}

const pf_edge *pf_grid_door_edges(const pf_grid *g, int32_t index, size_t *n) {
    *n = 0;
    if (index < 0 || index >= g->ndoors) return NULL;
    *n = g->doors[index].nedges;
    return g->doors[index].edges;
}

uint8_t pf_grid_door_open_cost(const pf_grid *g, int32_t index, size_t k) {
    if (index < 0 || index >= g->ndoors || k >= g->doors[index].ncells) return 0;
    return g->doors[index].open_cost[k];
}

pf_status pf_grid_set_door(pf_grid *g, int32_t index, bool open) {
    pf__door *d;
    if (index < 0 || index >= g->ndoors) return PF_ERANGE;
    d = &g->doors[index];
    if (d->open == open) return PF_OK;
    d->open = open;
    for (size_t i = 0; i < d->ncells; i++)
        pf_grid_set_cost(g, d->cells[i], open ? d->open_cost[i] : 0);
    /* The wall array exists whenever a door has edges, so this cannot fail. */
    for (size_t i = 0; i < d->nedges; i++)
        pf_grid_set_wall(g, d->edges[i].a, d->edges[i].dir, !open);
    return PF_OK;
}

size_t pf_grid_memory(const pf_grid *g) {
    size_t cells = (size_t)g->w * (size_t)g->h;
    size_t n = sizeof(*g) + 2 * cells + (g->walls ? cells : 0);
    for (int32_t i = 0; i < g->ndoors; i++)
        n += sizeof(pf__door) + g->doors[i].ncells * (sizeof(pf_point) + 1) +
             g->doors[i].nedges * sizeof(pf_edge);
    return n;
}
