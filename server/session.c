/* session.c -- see session.h. */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <uv.h>

#include "clearance.h"
#include "clock.h"
#include "dstar.h"
#include "nav_json.h"

/* Pins: the session's private changes, an open-addressing table keyed by
 * cell * 3 + kind (kind 0: the cell's cost; 1: the wall on its east side;
 * 2: the wall on its south side; west and north walls are stored as the
 * neighbour's east and south). Last write wins. */
typedef struct pin {
    int64_t key; /* -1 = empty */
    uint8_t val;
} pin;

typedef struct pins {
    pin *a;
    uint32_t cap, count; /* cap: 0 or a power of two */
} pins;

struct pf_session {
    char id[PF_SESSION_ID_LEN + 1];
    char map_id[PF_MAP_ID_MAX + 1];
    uint64_t lineage;
    pf_mapver *mv; /* the version whose grid d borrows (or whose mesh corr plans on) */
    pf_dstar *d;   /* NULL: rebuilt from pos, goal and pins at the next plan */
    /* A navmesh session: its path corridor (nav/navmesh.h), the agent's
     * position and goal, and whether the next plan starts anew (created, a
     * new goal) instead of following the agent along the corridor. */
    pf_nav_corridor *corr;
    uint32_t nav_type; /* the agent type's index in the map */
    float npos[3], ngoal[3];
    bool replan, nplanned; /* nplanned: the corridor's first plan (at create) succeeded */
    pf_point pos, goal;
    int32_t agent_size; /* n x n agent (clearance.h); 1 = one cell */
    pins pins;
    int64_t ttl_s;
    uint64_t last_ns;
    bool busy, dead;
    pf_mem *mem;             /* the process budget (pf_session_take_charge), or NULL */
    size_t charged;          /* PF_MEM_SESSIONS bytes charged for this session */
    pf_auth_id owner;        /* the creating token's name; all zero without tokens */
    bool planned;            /* d has planned once (the next plan repairs it) */
    size_t accounted;        /* bytes counted in the table's total (lock held) */
    struct pf_session *next; /* hash chain */
};

typedef struct mapcount {
    char map_id[PF_MAP_ID_MAX + 1];
    size_t n;
    struct mapcount *next;
} mapcount;

struct pf_sessions {
    uv_mutex_t mu;
    pf_session **buckets;
    size_t nbuckets; /* a power of two */
    mapcount *counts;
    size_t count, max_total, max_per_map;
    size_t memory; /* pf_session_memory of the linked sessions at their last release */
    pf_navq *navq; /* navmesh sessions' query scratch (pf_sessions_set_navq) */
};

/* Pins */

static inline uint32_t pin_slot(int64_t key, uint32_t cap) {
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static bool pins_get(const pins *p, int64_t key, uint8_t *val) {
    if (!p->count) return false;
    for (uint32_t i = pin_slot(key, p->cap);; i = (i + 1) & (p->cap - 1)) {
        if (p->a[i].key == key) {
            *val = p->a[i].val;
            return true;
        }
        if (p->a[i].key < 0) return false;
    }
}

/* Room for n more entries without a rehash. */
static pf_status pins_reserve(pins *p, size_t n) {
    uint32_t cap = p->cap ? p->cap : 16;
    pin *a;
    if (p->cap && ((uint64_t)p->count + n) * 2 <= p->cap) return PF_OK;
    while (((uint64_t)p->count + n) * 2 > cap) {
        if (cap >= (1u << 30)) return PF_ENOMEM;
        cap *= 2;
    }
    a = malloc((size_t)cap * sizeof(*a));
    if (!a) return PF_ENOMEM;
    for (uint32_t i = 0; i < cap; i++) a[i].key = -1;
    for (uint32_t i = 0; i < p->cap; i++) {
        uint32_t j;
        if (p->a[i].key < 0) continue;
        for (j = pin_slot(p->a[i].key, cap); a[j].key >= 0; j = (j + 1) & (cap - 1)) {
        }
        a[j] = p->a[i];
    }
    free(p->a);
    p->a = a;
    p->cap = cap;
    return PF_OK;
}

/* Room must have been reserved. */
static void pins_put(pins *p, int64_t key, uint8_t val) {
    uint32_t i;
    for (i = pin_slot(key, p->cap); p->a[i].key >= 0; i = (i + 1) & (p->cap - 1))
        if (p->a[i].key == key) {
            p->a[i].val = val;
            return;
        }
    p->a[i].key = key;
    p->a[i].val = val;
    p->count++;
}

static void pins_free(pins *p) {
    free(p->a);
    memset(p, 0, sizeof(*p));
}

/* The pin key of a wall edge: (p, dir) as the east or south side of a cell. */
static int64_t wall_key(const pf_grid *g, pf_point p, int dir) {
    if (dir == PF_DIR_W) p.x -= 1, dir = PF_DIR_E;
    if (dir == PF_DIR_N) p.y -= 1, dir = PF_DIR_S;
    return ((int64_t)p.y * pf_grid_width(g) + p.x) * 3 + (dir == PF_DIR_E ? 1 : 2);
}

static int64_t cost_key(const pf_grid *g, pf_point p) {
    return ((int64_t)p.y * pf_grid_width(g) + p.x) * 3;
}

/* Table */

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void session_free(pf_session *s) {
    if (!s) return;
    pf_mem_uncharge(s->mem, PF_MEM_SESSIONS, s->charged);
    pf_dstar_destroy(s->d);
    pf_nav_corridor_destroy(s->corr);
    pf_mapver_release(s->mv);
    pins_free(&s->pins);
    free(s);
}

void pf_sessions_set_navq(pf_sessions *t, pf_navq *q) { t->navq = q; }

pf_sessions *pf_sessions_create(size_t max_total, size_t max_per_map) {
    pf_sessions *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->max_total = max_total;
    t->max_per_map = max_per_map;
    t->nbuckets = 1024;
    while (t->nbuckets < max_total && t->nbuckets < (1u << 20)) t->nbuckets <<= 1;
    t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
    if (!t->buckets) goto out_free_table;
    if (uv_mutex_init(&t->mu)) goto out_free_buckets;
    return t;

out_free_buckets:
    free(t->buckets);
out_free_table:
    free(t);
    return NULL;
}

void pf_sessions_destroy(pf_sessions *t) {
    if (!t) return;
    for (size_t i = 0; i < t->nbuckets; i++) {
        pf_session *s = t->buckets[i], *n;
        for (; s; s = n) {
            n = s->next;
            session_free(s);
        }
    }
    while (t->counts) {
        mapcount *c = t->counts;
        t->counts = c->next;
        free(c);
    }
    uv_mutex_destroy(&t->mu);
    free(t->buckets);
    free(t);
}

static mapcount *count_of(pf_sessions *t, const char *map_id) {
    for (mapcount *c = t->counts; c; c = c->next)
        if (strcmp(c->map_id, map_id) == 0) return c;
    return NULL;
}

/* Unlinks s (lock held); the caller frees it unless it is held. */
static void unlink_locked(pf_sessions *t, pf_session *s) {
    pf_session **pp = &t->buckets[str_hash(s->id) & (t->nbuckets - 1)];
    mapcount *c, **cp;
    while (*pp && *pp != s) pp = &(*pp)->next;
    if (!*pp) return;
    *pp = s->next;
    s->next = NULL;
    s->dead = true;
    t->count--;
    t->memory -= s->accounted;
    s->accounted = 0;
    for (cp = &t->counts; (c = *cp) && strcmp(c->map_id, s->map_id) != 0; cp = &c->next) {
    }
    if (c && --c->n == 0) {
        *cp = c->next;
        free(c);
    }
}

static pf_session *find_locked(pf_sessions *t, const char *sid) {
    pf_session *s = t->buckets[str_hash(sid) & (t->nbuckets - 1)];
    while (s && strcmp(s->id, sid) != 0) s = s->next;
    return s;
}

static bool expired(const pf_session *s, uint64_t now_ns) {
    return !s->busy && now_ns > s->last_ns &&
           now_ns - s->last_ns > (uint64_t)s->ttl_s * 1000000000ull;
}

static void new_id(char out[PF_SESSION_ID_LEN + 1]) {
    static const char hex[] = "0123456789abcdef";
    uint8_t b[PF_SESSION_ID_LEN / 2];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t k = getrandom(b + got, sizeof(b) - got, 0);
        if (k <= 0) break;
        got += (size_t)k;
    }
    if (got < sizeof(b)) { /* no entropy source: still unique, not secret */
        static _Atomic uint64_t counter;
        uint64_t c = ++counter, addr = (uint64_t)(uintptr_t)out;
        memcpy(b, &c, 8);
        memcpy(b + 8, &addr, 8);
    }
    for (size_t i = 0; i < sizeof(b); i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[PF_SESSION_ID_LEN] = '\0';
}

/* Agent sizes. A session of an n x n agent (n > 1) searches the map
 * version's agent grid of size n (clearance.h; built on first use, on the
 * worker: its search is made at the first plan, not here). Its private
 * changes are kept in map cells, as a one-cell session's, and reach the
 * search as overlay entries of the anchors they touch, each recomputed from
 * the map grid with the session's pins on top (agent_refresh). */

/* The session's view of map cell p: the pending changes of a request
 * being validated, then the pins, then the map. p is on the map. */
static uint8_t view_cost(const pf_session *s, const pins *pending, pf_point p) {
    const pf_grid *g = pf_planner_grid(s->mv->planner);
    int64_t k = cost_key(g, p);
    uint8_t v;
    if (pending && pins_get(pending, k, &v)) return v;
    if (pins_get(&s->pins, k, &v)) return v;
    return pf_grid_cost(g, p);
}

static bool view_wall(const pf_session *s, pf_point p, int dir) {
    const pf_grid *g = pf_planner_grid(s->mv->planner);
    uint8_t v;
    if (pins_get(&s->pins, wall_key(g, p, dir), &v)) return v != 0;
    return pf_grid_is_wall(g, p, dir);
}

/* Whether the agent fits with its top-left cell at a in the session's view
 * (every cell of its square on the map and walkable, no wall inside). */
static bool view_fits(const pf_session *s, const pins *pending, pf_point a, int32_t n) {
    const pf_grid *g = pf_planner_grid(s->mv->planner);
    if (a.x < 0 || a.y < 0 || a.x > pf_grid_width(g) - n || a.y > pf_grid_height(g) - n)
        return false;
    for (int32_t dy = 0; dy < n; dy++)
        for (int32_t dx = 0; dx < n; dx++) {
            pf_point c = {a.x + dx, a.y + dy};
            if (!view_cost(s, pending, c)) return false;
            if (dx + 1 < n && view_wall(s, c, PF_DIR_E)) return false;
            if (dy + 1 < n && view_wall(s, c, PF_DIR_S)) return false;
        }
    return true;
}

/* Recomputes the search's overlay for the anchors whose cost a change at
 * map cell c can alter: the dearest cell under the anchor's square, 0
 * where the agent does not fit. A square reads [a, a + n - 1], so those
 * are the anchors [c - n + 1, c]. An agent grid needs no walls (between
 * two anchors where the agent fits every orthogonal step is open,
 * clearance.h), so the overlay holds costs only and D* Lite derives every
 * move from them. */
static pf_status agent_refresh(pf_session *s, pf_point c) {
    const pf_grid *g = pf_planner_grid(s->mv->planner);
    const int32_t n = s->agent_size, w = pf_grid_width(g), h = pf_grid_height(g);
    pf_status st = PF_OK;
    for (int32_t y = c.y - n + 1; y <= c.y && !st; y++)
        for (int32_t x = c.x - n + 1; x <= c.x && !st; x++) {
            pf_point a = {x, y};
            uint8_t cost = 0;
            if (x < 0 || y < 0 || x >= w || y >= h) continue;
            if (view_fits(s, NULL, a, n))
                for (int32_t dy = 0; dy < n; dy++)
                    for (int32_t dx = 0; dx < n; dx++) {
                        uint8_t v = view_cost(s, NULL, (pf_point){x + dx, y + dy});
                        if (v > cost) cost = v;
                    }
            st = pf_dstar_set_cost(s->d, a, cost);
        }
    return st;
}

/* The map cells every pin is about (both cells of a wall pin). */
static pf_status refresh_pins(pf_session *s) {
    const pf_grid *g = pf_planner_grid(s->mv->planner);
    int32_t w = pf_grid_width(g);
    pf_status st = PF_OK;
    for (uint32_t i = 0; i < s->pins.cap && !st; i++) {
        int64_t k = s->pins.a[i].key, cell;
        pf_point p;
        if (k < 0) continue;
        cell = k / 3;
        p.x = (int32_t)(cell % w);
        p.y = (int32_t)(cell / w);
        st = agent_refresh(s, p);
        if (!st && k % 3) /* a wall pin: the cell east or south of p too */
            st = agent_refresh(s, (pf_point){p.x + (k % 3 == 1), p.y + (k % 3 == 2)});
    }
    return st;
}

pf_status pf_sessions_check_agent(const pf_mapver *mv, pf_point p, int32_t n) {
    const pf_grid *g = pf_planner_grid(mv->planner);
    if (!pf_grid_in_bounds(g, p)) return PF_ERANGE;
    if (p.x > pf_grid_width(g) - n || p.y > pf_grid_height(g) - n) return PF_EBLOCKED;
    for (int32_t dy = 0; dy < n; dy++)
        for (int32_t dx = 0; dx < n; dx++) {
            pf_point c = {p.x + dx, p.y + dy};
            if (!pf_grid_is_walkable(g, c)) return PF_EBLOCKED;
            if (dx + 1 < n && pf_grid_is_wall(g, c, PF_DIR_E)) return PF_EBLOCKED;
            if (dy + 1 < n && pf_grid_is_wall(g, c, PF_DIR_S)) return PF_EBLOCKED;
        }
    return PF_OK;
}

/* Fills the parts every session has and registers s, held; frees it on
 * failure. */
static pf_status add_session(pf_sessions *t, pf_session *s, pf_mapver *mv, int64_t ttl_s,
                             uint64_t now_ns, pf_session **out, bool *total) {
    mapcount *c;
    pf_status st = PF_OK;
    pf_mapver_retain(mv);
    s->mv = mv;
    s->lineage = mv->lineage;
    snprintf(s->map_id, sizeof(s->map_id), "%s", mv->id);
    s->ttl_s = ttl_s;
    s->last_ns = now_ns;
    s->busy = true;

    uv_mutex_lock(&t->mu);
    c = count_of(t, s->map_id);
    if (t->count >= t->max_total) {
        *total = true;
        st = PF_ELIMIT;
    } else if (c && c->n >= t->max_per_map) {
        st = PF_ELIMIT;
    } else if (!c && !(c = calloc(1, sizeof(*c)))) {
        st = PF_ENOMEM;
    } else {
        if (c->n == 0) {
            snprintf(c->map_id, sizeof(c->map_id), "%s", s->map_id);
            c->next = t->counts;
            t->counts = c;
        }
        c->n++;
        do new_id(s->id);
        while (find_locked(t, s->id));
        s->next = t->buckets[str_hash(s->id) & (t->nbuckets - 1)];
        t->buckets[str_hash(s->id) & (t->nbuckets - 1)] = s;
        t->count++;
        s->accounted = pf_session_memory(s);
        t->memory += s->accounted;
    }
    uv_mutex_unlock(&t->mu);
    if (st) {
        session_free(s);
        return st;
    }
    *out = s;
    return PF_OK;
}

pf_status pf_sessions_add(pf_sessions *t, pf_mapver *mv, pf_point start, pf_point goal,
                          int64_t ttl_s, uint64_t now_ns, pf_session **out, bool *total) {
    return pf_sessions_add_sized(t, mv, start, goal, 1, ttl_s, now_ns, out, total);
}

pf_status pf_sessions_add_sized(pf_sessions *t, pf_mapver *mv, pf_point start, pf_point goal,
                                int32_t agent_size, int64_t ttl_s, uint64_t now_ns,
                                pf_session **out, bool *total) {
    pf_session *s;
    pf_status st;
    *out = NULL;
    *total = false;
    if (agent_size < 1 || agent_size > PF_AGENT_SIZE_MAX) return PF_EINVAL;
    s = calloc(1, sizeof(*s));
    if (!s) return PF_ENOMEM;
    s->agent_size = agent_size;
    if (agent_size == 1)
        st = pf_dstar_create(pf_planner_grid(mv->planner), start, goal, &s->d);
    else if ((st = pf_sessions_check_agent(mv, start, agent_size)) == PF_OK)
        st = pf_sessions_check_agent(mv, goal, agent_size);
    if (st) {
        free(s);
        return st;
    }
    s->pos = start;
    s->goal = goal;
    return add_session(t, s, mv, ttl_s, now_ns, out, total);
}

pf_status pf_sessions_add_nav(pf_sessions *t, pf_mapver *mv, const float start[3],
                              const float goal[3], uint32_t agent_type, int64_t ttl_s,
                              uint64_t now_ns, pf_session **out, bool *total) {
    pf_session *s;
    *out = NULL;
    *total = false;
    s = calloc(1, sizeof(*s));
    if (!s) return PF_ENOMEM;
    if (pf_nav_corridor_create(PF_SESSION_NAV_MAX_POLYS, &s->corr)) {
        free(s);
        return PF_ENOMEM;
    }
    s->nav_type = agent_type;
    memcpy(s->npos, start, sizeof(s->npos));
    memcpy(s->ngoal, goal, sizeof(s->ngoal));
    s->agent_size = 1;
    s->replan = true;
    return add_session(t, s, mv, ttl_s, now_ns, out, total);
}

pf_session_lookup pf_sessions_acquire(pf_sessions *t, const char *map_id, const char *sid,
                                      uint64_t now_ns, pf_session **out) {
    pf_session *s, *gone = NULL;
    pf_session_lookup res = PF_SESSION_NOT_FOUND;
    *out = NULL;
    uv_mutex_lock(&t->mu);
    s = find_locked(t, sid);
    if (s && strcmp(s->map_id, map_id) == 0) {
        if (expired(s, now_ns)) {
            unlink_locked(t, s);
            gone = s;
        } else if (s->busy) {
            res = PF_SESSION_BUSY;
        } else {
            s->busy = true;
            *out = s;
            res = PF_SESSION_OK;
        }
    }
    uv_mutex_unlock(&t->mu);
    session_free(gone); /* outside the lock */
    return res;
}

static int cmp_info(const void *a, const void *b) {
    return strcmp(((const pf_session_info *)a)->id, ((const pf_session_info *)b)->id);
}

pf_status pf_sessions_list(pf_sessions *t, const char *map_id, uint64_t now_ns,
                           pf_session_info **out, size_t *n) {
    pf_session_info *list = NULL;
    size_t k = 0, cap;
    mapcount *c;
    *out = NULL;
    *n = 0;
    uv_mutex_lock(&t->mu);
    c = count_of(t, map_id);
    cap = c ? c->n : 0;
    if (cap && !(list = malloc(cap * sizeof(*list)))) {
        uv_mutex_unlock(&t->mu);
        return PF_ENOMEM;
    }
    for (size_t b = 0; b < t->nbuckets && k < cap; b++)
        for (pf_session *s = t->buckets[b]; s && k < cap; s = s->next) {
            pf_session_info *i;
            if (strcmp(s->map_id, map_id) != 0 || expired(s, now_ns)) continue;
            i = &list[k++];
            memset(i, 0, sizeof(*i));
            memcpy(i->id, s->id, sizeof(i->id));
            i->owner = s->owner;
            i->busy = s->busy;
            i->ttl_s = s->ttl_s;
            if (s->busy) continue; /* its holder may be changing the rest */
            i->position = s->pos;
            i->goal = s->goal;
            if ((i->nav = s->corr != NULL)) {
                memcpy(i->position3, s->npos, sizeof(i->position3));
                memcpy(i->goal3, s->ngoal, sizeof(i->goal3));
            }
            i->map_version = s->mv->version;
            i->idle_ms = now_ns > s->last_ns ? (now_ns - s->last_ns) / 1000000u : 0;
        }
    uv_mutex_unlock(&t->mu);
    if (k > 1) qsort(list, k, sizeof(*list), cmp_info);
    if (k == 0) {
        free(list);
        list = NULL;
    }
    *out = list;
    *n = k;
    return PF_OK;
}

bool pf_sessions_exists(pf_sessions *t, const char *map_id, const char *sid, uint64_t now_ns) {
    pf_session *s;
    bool ok;
    uv_mutex_lock(&t->mu);
    s = find_locked(t, sid);
    ok = s && strcmp(s->map_id, map_id) == 0 && !expired(s, now_ns);
    uv_mutex_unlock(&t->mu);
    return ok;
}

void pf_sessions_release(pf_sessions *t, pf_session *s, uint64_t now_ns) {
    size_t bytes = pf_session_memory(s); /* the holder may read s without the lock */
    bool dead;
    uv_mutex_lock(&t->mu);
    s->busy = false;
    s->last_ns = now_ns;
    dead = s->dead;
    if (!dead) {
        t->memory = t->memory - s->accounted + bytes;
        s->accounted = bytes;
    }
    uv_mutex_unlock(&t->mu);
    if (dead) session_free(s);
}

bool pf_sessions_owner_is(pf_sessions *t, const char *map_id, const char *sid,
                          const pf_auth_id *who) {
    pf_session *s;
    bool ok;
    uv_mutex_lock(&t->mu);
    s = find_locked(t, sid);
    ok = s && strcmp(s->map_id, map_id) == 0 && pf_auth_id_equal(&s->owner, who);
    uv_mutex_unlock(&t->mu);
    return ok;
}

void pf_session_set_owner(pf_session *s, const pf_auth_id *owner) { s->owner = *owner; }

const pf_auth_id *pf_session_owner(const pf_session *s) { return &s->owner; }

bool pf_sessions_remove(pf_sessions *t, const char *map_id, const char *sid) {
    pf_session *s, *gone = NULL;
    bool found = false;
    uv_mutex_lock(&t->mu);
    s = find_locked(t, sid);
    if (s && strcmp(s->map_id, map_id) == 0) {
        found = true;
        unlink_locked(t, s);
        if (!s->busy) gone = s;
    }
    uv_mutex_unlock(&t->mu);
    session_free(gone);
    return found;
}

void pf_sessions_kill(pf_sessions *t, pf_session *s) {
    uv_mutex_lock(&t->mu);
    unlink_locked(t, s);
    uv_mutex_unlock(&t->mu);
}

/* Unlinks every session for which pred holds; frees the idle ones after
 * the lock is dropped. */
static size_t sweep(pf_sessions *t, bool (*pred)(const pf_session *, const void *),
                    const void *arg) {
    pf_session *gone = NULL;
    size_t n = 0;
    uv_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->nbuckets; i++) {
        pf_session *s = t->buckets[i], *next;
        for (; s; s = next) {
            next = s->next;
            if (!pred(s, arg)) continue;
            unlink_locked(t, s);
            n++;
            if (!s->busy) {
                s->next = gone;
                gone = s;
            }
        }
    }
    uv_mutex_unlock(&t->mu);
    while (gone) {
        pf_session *s = gone;
        gone = s->next;
        session_free(s);
    }
    return n;
}

typedef struct drop_arg {
    const char *map_id;
    uint64_t keep;
} drop_arg;

static bool of_map(const pf_session *s, const void *arg) {
    const drop_arg *a = arg;
    return strcmp(s->map_id, a->map_id) == 0 && (a->keep == 0 || s->lineage != a->keep);
}

static bool is_expired(const pf_session *s, const void *arg) {
    return expired(s, *(const uint64_t *)arg);
}

size_t pf_sessions_drop_map(pf_sessions *t, const char *map_id, uint64_t keep_lineage) {
    drop_arg a = {map_id, keep_lineage};
    return sweep(t, of_map, &a);
}

size_t pf_sessions_reap(pf_sessions *t, uint64_t now_ns) { return sweep(t, is_expired, &now_ns); }

size_t pf_sessions_count(pf_sessions *t) {
    size_t n;
    uv_mutex_lock(&t->mu);
    n = t->count;
    uv_mutex_unlock(&t->mu);
    return n;
}

size_t pf_sessions_memory(pf_sessions *t) {
    size_t n;
    uv_mutex_lock(&t->mu);
    n = t->memory;
    uv_mutex_unlock(&t->mu);
    return n;
}

size_t pf_sessions_count_map(pf_sessions *t, const char *map_id) {
    const mapcount *c;
    size_t n;
    uv_mutex_lock(&t->mu);
    c = count_of(t, map_id);
    n = c ? c->n : 0;
    uv_mutex_unlock(&t->mu);
    return n;
}

/* Operations */

const char *pf_session_id(const pf_session *s) { return s->id; }
const char *pf_session_map_id(const pf_session *s) { return s->map_id; }
uint64_t pf_session_map_version(const pf_session *s) { return s->mv->version; }
int64_t pf_session_ttl(const pf_session *s) { return s->ttl_s; }
pf_point pf_session_position(const pf_session *s) { return s->pos; }
pf_point pf_session_goal(const pf_session *s) { return s->goal; }
int32_t pf_session_agent_size(const pf_session *s) { return s->agent_size; }

size_t pf_session_memory(const pf_session *s) {
    return sizeof(*s) + (size_t)s->pins.cap * sizeof(pin) + (s->d ? pf_dstar_memory(s->d) : 0) +
           (s->corr ? pf_nav_corridor_memory(s->corr) : 0);
}

bool pf_session_is_nav(const pf_session *s) { return s->corr != NULL; }

static const pf_grid *grid_of(const pf_session *s) { return pf_planner_grid(s->mv->planner); }

/* The grid the session's search runs on in version mv: the map's, or its
 * agent grid (NULL when that cannot be built: out of memory). */
static const pf_grid *search_grid(const pf_session *s, const pf_mapver *mv) {
    const pf_grid *g = NULL;
    if (s->agent_size <= 1) return pf_planner_grid(mv->planner);
    return pf_planner_agent_grid(mv->planner, s->agent_size, NULL, &g) == PF_OK ? g : NULL;
}

/* The agent-grid cells a change at the map cells cells[0..n) can alter,
 * for an agent session's rebase, which wants every cell whose cost
 * differs (an agent grid has no walls): the anchors [c - n + 1, c] of
 * agent_refresh (duplicates are harmless to pf_dstar_rebase). NULL on
 * ENOMEM. */
static pf_point *agent_changes(const pf_session *s, const pf_point *cells, size_t n,
                               size_t *out_n) {
    const pf_grid *g = grid_of(s);
    const int32_t a = s->agent_size, side = a;
    pf_point *out = malloc((n ? n : 1) * (size_t)side * (size_t)side * sizeof(*out));
    size_t k = 0;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++)
        for (int32_t y = cells[i].y - a + 1; y <= cells[i].y; y++)
            for (int32_t x = cells[i].x - a + 1; x <= cells[i].x; x++)
                if (pf_grid_in_bounds(g, (pf_point){x, y})) out[k++] = (pf_point){x, y};
    *out_n = k;
    return out;
}

pf_status pf_session_sync(pf_session *s, pf_registry *reg, const char **how) {
    pf_mapver *cur = pf_registry_get(reg, s->map_id);
    pf_point *cells = NULL;
    size_t n = 0;
    pf_status st;
    *how = "none";
    if (!cur || cur->lineage != s->lineage) {
        pf_mapver_release(cur);
        return PF_ECANCELED;
    }
    if (cur->version == s->mv->version) {
        pf_mapver_release(cur);
        return PF_OK;
    }
    if (s->corr) {
        /* A navmesh session: the corridor sees the new version at its next
         * move and plans anew on it (its polygons may be gone). */
        pf_mapver_release(s->mv);
        s->mv = cur;
        return PF_OK;
    }
    st = s->d ? pf_mapver_changes_since(cur, s->mv->version, &cells, &n) : PF_ELIMIT;
    if (st == PF_OK && s->agent_size > 1) {
        /* Map cells to the anchors they reach on the agent grid. */
        pf_point *anchors = agent_changes(s, cells, n, &n);
        free(cells);
        cells = anchors;
        st = cells ? PF_OK : PF_ENOMEM;
    }
    if (st == PF_OK) {
        const pf_grid *g = search_grid(s, cur);
        /* PF_ENOMEM still switches the search to the new grid (it starts
         * anew at its next plan), so the old version may go either way. */
        st = g ? pf_dstar_rebase(s->d, g, cells, n) : PF_ELIMIT;
        free(cells);
        if (st == PF_OK || st == PF_ENOMEM) {
            pf_mapver_release(s->mv);
            s->mv = cur;
            /* An agent's pins were worked out against the old map: again,
             * against the new one (their overlay wins over any base). */
            if (st == PF_OK && s->agent_size > 1 && refresh_pins(s)) {
                pf_dstar_destroy(s->d);
                s->d = NULL;
            }
            *how = "incremental";
            return PF_OK;
        }
    }
    /* Too far behind the change log (or a session to rebuild anyway): a
     * fresh search on the current version at the next plan. */
    pf_dstar_destroy(s->d);
    s->d = NULL;
    pf_mapver_release(s->mv);
    s->mv = cur;
    *how = "rebuilt";
    return PF_OK;
}

/* A cost change of the request being validated: a small open-addressing
 * table like the pins, keyed by cell. */
static uint8_t effective_cost(const pf_session *s, const pins *pending, pf_point p) {
    uint8_t v;
    int64_t k = cost_key(grid_of(s), p);
    if (pins_get(pending, k, &v)) return v;
    if (pins_get(&s->pins, k, &v)) return v;
    return pf_grid_cost(grid_of(s), p);
}

static pf_status check_point(const pf_session *s, const pins *pending, pf_point p,
                             const char *field, pf_proto_error *e) {
    const pf_grid *g = grid_of(s);
    if (!pf_grid_in_bounds(g, p))
        return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, field,
                                  "%s (%d,%d) is outside the %dx%d map.", field, (int)p.x, (int)p.y,
                                  (int)pf_grid_width(g), (int)pf_grid_height(g));
    if (s->agent_size > 1) {
        if (!view_fits(s, pending, p, s->agent_size))
            return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, field,
                                      "%s (%d,%d): an agent of size %d does not fit there in this "
                                      "session's view.",
                                      field, (int)p.x, (int)p.y, (int)s->agent_size);
        return PF_OK;
    }
    if (effective_cost(s, pending, p) == 0)
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, field,
                                  "%s (%d,%d) is a blocked cell in this session's view.", field,
                                  (int)p.x, (int)p.y);
    return PF_OK;
}

pf_status pf_session_validate(const pf_session *s, const pf_update_list *l, pf_proto_error *e) {
    const pf_grid *g = grid_of(s);
    pins pending = {0};
    char pbuf[40], f[160];
    pf_status st = PF_OK;

    for (size_t i = 0; i < l->n && !st; i++) {
        const pf_update *u = &l->items[i];
        const char *prefix = pf_update_prefix(l, i, pbuf, sizeof(pbuf));
        if ((st = pins_reserve(&pending, u->ncells))) break;
        for (size_t k = 0; k < u->ncells && !st; k++) {
            pf_point p = u->cells[k].p;
            if (!pf_grid_in_bounds(g, p)) {
                snprintf(f, sizeof(f), "%scells[%zu]", prefix, k);
                st = pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                        "%s (%d,%d) is outside the %dx%d map.", f, (int)p.x,
                                        (int)p.y, (int)pf_grid_width(g), (int)pf_grid_height(g));
                break;
            }
            pins_put(&pending, cost_key(g, p), u->cells[k].cost);
        }
        for (size_t k = 0; k < u->ndoors && !st; k++) {
            int32_t door = pf_grid_door_find(g, u->doors[k].id);
            size_t nc;
            const pf_point *dc;
            if (door < 0) {
                snprintf(f, sizeof(f), "%sdoors[%zu].id", prefix, k);
                st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                        "Map '%s' has no door '%s'.", s->map_id, u->doors[k].id);
                break;
            }
            dc = pf_grid_door_cells(g, door, &nc);
            if ((st = pins_reserve(&pending, nc))) break;
            for (size_t c = 0; c < nc; c++)
                pins_put(&pending, cost_key(g, dc[c]),
                         u->doors[k].open ? pf_grid_door_open_cost(g, door, c) : 0);
        }
        for (int k = 0; k < 2 && !st; k++)
            if (k ? u->goal_nav : u->position_nav) {
                snprintf(f, sizeof(f), "%s%s", prefix, k ? "goal" : "position");
                st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                        "Field '%s' must be a point [x, y] of two integers: map "
                                        "'%s' is a grid.",
                                        f, s->map_id);
            }
        if (!st && u->has_goal) {
            snprintf(f, sizeof(f), "%sgoal", prefix);
            st = check_point(s, &pending, u->goal, f, e);
        }
        if (!st && u->has_position) {
            snprintf(f, sizeof(f), "%sposition", prefix);
            st = check_point(s, &pending, u->position, f, e);
        }
    }
    if (st == PF_ENOMEM) pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    pins_free(&pending);
    return st;
}

/* Sets one private cell cost in the search and the pins (an agent's
 * search: the anchors around it, from the pins). */
static pf_status set_cost(pf_session *s, pf_point p, uint8_t cost) {
    pf_status st = pins_reserve(&s->pins, 1);
    if (st) return st;
    if (s->agent_size > 1) {
        pins_put(&s->pins, cost_key(grid_of(s), p), cost);
        return s->d ? agent_refresh(s, p) : PF_OK;
    }
    if (s->d) st = pf_dstar_set_cost(s->d, p, cost);
    if (!st) pins_put(&s->pins, cost_key(grid_of(s), p), cost);
    return st;
}

static pf_status set_wall(pf_session *s, pf_point p, int dir, bool blocked) {
    pf_status st = pins_reserve(&s->pins, 1);
    if (st) return st;
    if (s->agent_size > 1) {
        pf_point q = {p.x + pf_dir_dx[dir], p.y + pf_dir_dy[dir]};
        pins_put(&s->pins, wall_key(grid_of(s), p, dir), blocked);
        if (s->d && !(st = agent_refresh(s, p))) st = agent_refresh(s, q);
        return st;
    }
    if (s->d) st = pf_dstar_set_wall(s->d, p, dir, blocked);
    if (!st) pins_put(&s->pins, wall_key(grid_of(s), p, dir), blocked);
    return st;
}

pf_status pf_session_apply(pf_session *s, const pf_update_list *l) {
    const pf_grid *g = grid_of(s);
    pf_status st = PF_OK;
    for (size_t i = 0; i < l->n && !st; i++) {
        const pf_update *u = &l->items[i];
        for (size_t k = 0; k < u->ncells && !st; k++)
            st = set_cost(s, u->cells[k].p, u->cells[k].cost);
        for (size_t k = 0; k < u->ndoors && !st; k++) {
            int32_t door = pf_grid_door_find(g, u->doors[k].id);
            bool open = u->doors[k].open;
            size_t nc, ne;
            const pf_point *dc = pf_grid_door_cells(g, door, &nc);
            const pf_edge *de = pf_grid_door_edges(g, door, &ne);
            for (size_t c = 0; c < nc && !st; c++)
                st = set_cost(s, dc[c], open ? pf_grid_door_open_cost(g, door, c) : 0);
            for (size_t c = 0; c < ne && !st; c++) st = set_wall(s, de[c].a, de[c].dir, !open);
        }
        if (!st && u->has_goal) {
            if (s->d) st = pf_dstar_set_goal(s->d, u->goal);
            if (!st) s->goal = u->goal;
        }
        if (!st && u->has_position) {
            if (s->d) st = pf_dstar_move(s->d, u->position);
            if (!st) s->pos = u->position;
        }
    }
    if (st) {
        /* Out of memory half way: keep what was applied (the pins, position
         * and goal say what) and search anew from them next time. */
        pf_dstar_destroy(s->d);
        s->d = NULL;
        st = PF_ENOMEM;
    }
    return st;
}

/* A fresh search on the current grid with the pins replayed. */
static pf_status rebuild(pf_session *s) {
    const pf_grid *g = grid_of(s), *sg = search_grid(s, s->mv);
    int32_t w = pf_grid_width(g);
    pf_status st;
    if (!sg) return PF_ENOMEM;
    if ((st = pf_dstar_create(sg, s->pos, s->goal, &s->d))) return st;
    if (s->agent_size > 1) {
        st = refresh_pins(s);
        if (st) {
            pf_dstar_destroy(s->d);
            s->d = NULL;
        }
        return st;
    }
    for (uint32_t i = 0; i < s->pins.cap && !st; i++) {
        int64_t k = s->pins.a[i].key, cell;
        pf_point p;
        if (k < 0) continue;
        cell = k / 3;
        p.x = (int32_t)(cell % w);
        p.y = (int32_t)(cell / w);
        switch (k % 3) {
        case 0:
            st = pf_dstar_set_cost(s->d, p, s->pins.a[i].val);
            break;
        case 1:
            st = pf_dstar_set_wall(s->d, p, PF_DIR_E, s->pins.a[i].val != 0);
            break;
        default:
            st = pf_dstar_set_wall(s->d, p, PF_DIR_S, s->pins.a[i].val != 0);
            break;
        }
    }
    if (st) {
        pf_dstar_destroy(s->d);
        s->d = NULL;
    }
    return st;
}

pf_status pf_session_plan(pf_session *s, pf_result *out) {
    pf_status st;
    memset(out, 0, sizeof(*out));
    out->algorithm = PF_ALGO_DSTAR;
    if (!s->d && (st = rebuild(s))) {
        /* pf_dstar_create checks the endpoints on the base grid: the agent
         * or the goal stands on a cell the map blocks now. */
        out->status = st == PF_ENOMEM ? PF_ENOMEM : PF_EBLOCKED;
        return out->status;
    }
    /* s->d plans on s->mv's grid (pf_session_sync moves both together).
     * The cut vertices are the map grid's: an agent's search goes without
     * them (it only costs a cut-off repair more). */
    pf_dstar_set_cuts(s->d, s->agent_size > 1 ? NULL : pf_planner_cuts(s->mv->planner, NULL));
    st = pf_dstar_plan(s->d, 0, out);
    if (st == PF_EINVAL) st = pf_dstar_plan(s->d, 0, out); /* it searches anew */
    if (st == PF_EINVAL) st = out->status = PF_NO_PATH;
    return st;
}

/* Navmesh sessions */

/* Checks the updates of l for a navmesh session on nm: position and goal
 * only, points [x,y,z] near the mesh (the default search box). */
static pf_status nav_validate(const pf_session *s, pf_nav_query *q, const pf_update_list *l,
                              pf_proto_error *e) {
    const pf_navmesh *nm = pf_navmesh_agent_type(s->mv->nav, s->nav_type);
    char pbuf[40], f[160];
    float ext[3], snapped[3];
    pf_navmesh_default_extents(nm, ext);
    for (size_t i = 0; i < l->n; i++) {
        const pf_update *u = &l->items[i];
        const char *prefix = pf_update_prefix(l, i, pbuf, sizeof(pbuf));
        if (u->ncells || u->ndoors) {
            snprintf(f, sizeof(f), "%s%s", prefix, u->ncells ? "cells" : "doors");
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_REQUEST, f,
                                      "A navmesh session's update has a position and a goal "
                                      "only; obstacles and areas change for everyone with "
                                      "PATCH /v1/maps/%s.",
                                      s->map_id);
        }
        for (int k = 0; k < 2; k++) {
            bool has = k ? u->has_goal : u->has_position, is3 = k ? u->goal_nav : u->position_nav;
            const float *pt = k ? u->goal3 : u->position3;
            if (!has) continue;
            snprintf(f, sizeof(f), "%s%s", prefix, k ? "goal" : "position");
            if (!is3)
                return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                          "Field '%s' must be a point [x, y, z]: map '%s' is a "
                                          "navmesh.",
                                          f, s->map_id);
            if (pf_nav_nearest(q, nm, pt, ext, snapped) != PF_OK)
                return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                          "No walkable polygon within +-(%g, %g, %g) of %s (%g, "
                                          "%g, %g).",
                                          (double)ext[0], (double)ext[1], (double)ext[2], f,
                                          (double)pt[0], (double)pt[1], (double)pt[2]);
        }
    }
    return PF_OK;
}

/* pf_session_run for a navmesh session (synced). */
static pf_error nav_run(pf_sessions *t, pf_metrics *m, pf_session *s, const pf_update_list *l,
                        pf_jsonw *w, uint64_t t0) {
    const pf_navmesh *nm = pf_navmesh_agent_type(s->mv->nav, s->nav_type);
    pf_nav_query *q = t->navq ? pf_navq_get(t->navq) : NULL;
    pf_nav_session_answer a;
    pf_proto_error e;
    pf_nav_path p;
    const char *which = NULL;
    bool replanned = true;
    float ext[3];
    pf_status st;
    if (!q) {
        pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
        return PF_ERR_NO_MEMORY;
    }
    if (l && nav_validate(s, q, l, &e)) {
        pf_navq_put(t->navq, q);
        pf_proto_write_perror(w, &e);
        return e.code;
    }
    for (size_t i = 0; l && i < l->n; i++) {
        const pf_update *u = &l->items[i];
        if (u->has_goal) {
            memcpy(s->ngoal, u->goal3, sizeof(s->ngoal));
            s->replan = true;
        }
        if (u->has_position) memcpy(s->npos, u->position3, sizeof(s->npos));
    }
    pf_navmesh_default_extents(nm, ext);
    if (s->replan) {
        st = pf_nav_corridor_plan(s->corr, q, nm, s->npos, s->ngoal, NULL, PF_NAV_POLYANYA, &p,
                                  &which);
    } else {
        /* Following the agent: a position further than the search box's
         * width from where the corridor can take it is a teleport. */
        st = pf_nav_corridor_move(s->corr, q, nm, s->npos, ext[0], &p, &replanned, &which);
    }
    pf_navq_put(t->navq, q);
    if (st == PF_ENOMEM) {
        pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
        return PF_ERR_NO_MEMORY;
    }
    if (st != PF_OK && !s->nplanned) {
        /* The create's plan: an agent or a goal off the mesh is the
         * request's error, as on a grid (the session goes). */
        char msg[200];
        const char *f = which && strcmp(which, "goal") == 0 ? "goal" : "start";
        const float *pt = f[0] == 'g' ? s->ngoal : s->npos;
        snprintf(msg, sizeof(msg), "No walkable polygon within +-(%g, %g, %g) of %s (%g, %g, %g).",
                 (double)ext[0], (double)ext[1], (double)ext[2], f, (double)pt[0], (double)pt[1],
                 (double)pt[2]);
        pf_proto_write_error(w, PF_ERR_BLOCKED, msg, f);
        return PF_ERR_BLOCKED;
    }
    if (st == PF_OK) s->nplanned = true;
    /* Blocked (the agent or the goal has no polygon near it any more: an
     * obstacle came): answered as "blocked", planned again next time. */
    s->replan = st != PF_OK;
    pf_metrics_count_nav_search(m, PF_NAV_POLYANYA,
                                st != PF_OK      ? PF_OUTCOME_ERROR
                                : p.out_of_nodes ? PF_OUTCOME_BUDGET
                                : p.partial      ? PF_OUTCOME_UNREACHABLE
                                                 : PF_OUTCOME_FOUND,
                                st == PF_OK ? p.expanded : 0, (pf_clock_now_ns() - t0) / 1000);
    memset(&a, 0, sizeof(a));
    a.session_id = s->id;
    a.map_id = s->map_id;
    a.blocked = st != PF_OK;
    a.path = &p;
    a.algorithm = pf_nav_algorithm_name(PF_NAV_POLYANYA);
    a.position = s->npos;
    a.goal = s->ngoal;
    a.map_version = s->mv->version;
    a.ttl_s = s->ttl_s;
    a.time_us = (pf_clock_now_ns() - t0) / 1000;
    a.updates = l ? l->n : 0;
    a.rebase = replanned ? "rebuilt" : "none";
    a.memory_bytes = pf_session_memory(s);
    pf_session_write_nav_answer(w, &a);
    return PF_ERR_NONE;
}

/* The session job */

void pf_session_take_charge(pf_session *s, pf_mem *mem, size_t reserved) {
    s->mem = mem;
    s->charged = reserved;
}

/* The charge follows what the session holds after a run (its search grew
 * or was rebuilt smaller), and so does its version's: the first session
 * plan on a version builds its cuts (planner.h). */
static void recharge(pf_session *s) {
    size_t now = pf_session_memory(s);
    if (!s->mem) return;
    if (now > s->charged)
        pf_mem_charge(s->mem, PF_MEM_SESSIONS, now - s->charged);
    else
        pf_mem_uncharge(s->mem, PF_MEM_SESSIONS, s->charged - now);
    s->charged = now;
    pf_mapver_recharge(s->mv);
}

static pf_error session_run(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                            const pf_update_list *l, pf_jsonw *w);

pf_error pf_session_run(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                        const pf_update_list *l, pf_jsonw *w) {
    pf_error err = session_run(t, reg, m, s, l, w);
    recharge(s);
    return err;
}

static pf_error session_run(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                            const pf_update_list *l, pf_jsonw *w) {
    pf_proto_error e;
    pf_session_answer a;
    pf_result res;
    const char *how = "none";
    uint64_t t0 = pf_clock_now_ns(), t1;
    pf_metrics_plan kind;
    pf_status st;

    if (pf_session_sync(s, reg, &how) == PF_ECANCELED) {
        pf_sessions_kill(t, s);
        pf_proto_write_error(w, PF_ERR_SESSION_NOT_FOUND,
                             "The session is gone: its map was deleted or replaced.", NULL);
        return PF_ERR_SESSION_NOT_FOUND;
    }
    if (s->corr) return nav_run(t, m, s, l, w, t0);
    if (l) {
        if (pf_session_validate(s, l, &e)) {
            pf_proto_write_perror(w, &e);
            return e.code;
        }
        if (pf_session_apply(s, l)) {
            pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
            return PF_ERR_NO_MEMORY;
        }
    }
    if (strcmp(how, "none") != 0) pf_metrics_count_rebase(m, strcmp(how, "incremental") == 0);
    kind = !s->d || !s->planned                          ? PF_PLAN_INITIAL
           : (l && l->n > 0) || strcmp(how, "none") != 0 ? PF_PLAN_REPAIR
                                                         : PF_PLAN_UNCHANGED;
    t1 = pf_clock_now_ns();
    st = pf_session_plan(s, &res);
    s->planned = s->d != NULL;
    pf_metrics_count_plan(m, kind, st, res.expanded, (pf_clock_now_ns() - t1) / 1000);
    if (st == PF_ENOMEM) {
        pf_proto_write_error(w, PF_ERR_NO_MEMORY, NULL, NULL);
        return PF_ERR_NO_MEMORY;
    }
    memset(&a, 0, sizeof(a));
    a.session_id = pf_session_id(s);
    a.map_id = pf_session_map_id(s);
    a.status = st;
    a.cost = res.cost;
    a.path = res.path;
    a.path_len = res.path_len;
    a.position = pf_session_position(s);
    a.goal = pf_session_goal(s);
    a.map_version = pf_session_map_version(s);
    a.ttl_s = pf_session_ttl(s);
    a.expanded = res.expanded;
    a.time_us = (pf_clock_now_ns() - t0) / 1000;
    a.updates = l ? l->n : 0;
    a.rebase = how;
    a.memory_bytes = pf_session_memory(s);
    a.agent_size = s->agent_size;
    pf_session_write_answer(w, &a);
    return PF_ERR_NONE;
}
