/* session.c -- see session.h: the table of live sessions and what every
 * kind's sessions share; the kinds' own are kind_<kind>_session.c. */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <uv.h>

#include "clock.h"

struct pf_session {
    char id[PF_SESSION_ID_LEN + 1];
    char map_id[PF_MAP_ID_MAX + 1];
    uint64_t lineage;
    pf_mapver *mv; /* the version the session is on (its state may borrow from it) */
    void *state;   /* mv->kind's (kind.h): freed by its session_free */
    int64_t ttl_s;
    uint64_t last_ns;
    bool busy, dead;
    pf_mem *mem;             /* the process budget (pf_session_take_charge), or NULL */
    size_t charged;          /* PF_MEM_SESSIONS bytes charged for this session */
    pf_auth_id owner;        /* the creating token's name; all zero without tokens */
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
};

/* Table */

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void session_free(pf_session *s) {
    if (!s) return;
    pf_mem_uncharge(s->mem, PF_MEM_SESSIONS, s->charged);
    if (s->state) s->mv->kind->session_free(s->state);
    pf_mapver_release(s->mv);
    free(s);
}

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

pf_status pf_sessions_insert(pf_sessions *t, pf_mapver *mv, void *state, int64_t ttl_s,
                             uint64_t now_ns, pf_session **out, bool *total) {
    pf_session *s = calloc(1, sizeof(*s));
    mapcount *c;
    pf_status st = PF_OK;
    *out = NULL;
    *total = false;
    if (!s) {
        mv->kind->session_free(state);
        return PF_ENOMEM;
    }
    s->state = state;
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

/* Creation */

pf_status pf_sessions_new(pf_sessions *t, pf_mapver *mv, const pf_session_request *q,
                          const char *prefix, int64_t default_ttl_s, const pf_auth_id *owner,
                          pf_mem *mem, uint64_t now_ns, pf_session **out, pf_proto_error *e) {
    void *state = NULL;
    size_t reserve = 0;
    bool total = false;
    pf_status st;
    *out = NULL;
    if ((st = mv->kind->session_create(mv, q, prefix, &state, &reserve, e))) return st;
    /* Room in the budget for what it may hold (a grid's: a search over
     * the whole map, and a new agent size's grid), before it is added; its
     * charge follows what it holds from its first plan on. */
    if (!pf_mem_try_charge(mem, PF_MEM_SESSIONS, reserve)) {
        mv->kind->session_free(state);
        return pf_proto_error_set(
            e, PF_ENOMEM, PF_ERR_INSUFFICIENT_STORAGE, NULL,
            "A session on map '%s' needs up to %zu bytes; the memory budget (--max-memory) is "
            "%llu bytes and %llu are in use. Delete sessions or maps, or raise it.",
            mv->id, reserve, (unsigned long long)pf_mem_budget(mem),
            (unsigned long long)pf_mem_used(mem));
    }
    st = pf_sessions_insert(t, mv, state, q->ttl_s ? q->ttl_s : default_ttl_s, now_ns, out, &total);
    if (st) {
        pf_mem_uncharge(mem, PF_MEM_SESSIONS, reserve);
        if (st == PF_ELIMIT && !total)
            return pf_proto_error_set(e, st, PF_ERR_TOO_MANY_SESSIONS, NULL,
                                      "Map '%s' has %zu sessions, its limit; delete one or let "
                                      "one expire.",
                                      mv->id, t->max_per_map);
        if (st == PF_ELIMIT)
            return pf_proto_error_set(e, st, PF_ERR_OVERLOADED, NULL,
                                      "The server holds %zu sessions, its limit. Retry later.",
                                      t->max_total);
        return pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    pf_session_take_charge(*out, mem, reserve);
    if (owner) pf_session_set_owner(*out, owner);
    return PF_OK;
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
            s->mv->kind->session_where(s->state, &i->position, &i->goal);
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
const pf_mapver *pf_session_mapver(const pf_session *s) { return s->mv; }
void *pf_session_state(const pf_session *s) { return s->state; }

bool pf_session_builds(const pf_session *s) {
    return s->mv->kind->session_builds && s->mv->kind->session_builds(s->mv, s->state);
}

size_t pf_session_memory(const pf_session *s) {
    return sizeof(*s) + s->mv->kind->session_memory(s->state);
}

pf_status pf_session_sync(pf_session *s, pf_registry *reg, const char **how) {
    pf_mapver *cur = pf_registry_get(reg, s->map_id);
    *how = "none";
    if (!cur || cur->lineage != s->lineage) {
        pf_mapver_release(cur);
        return PF_ECANCELED;
    }
    if (cur->version == s->mv->version) {
        pf_mapver_release(cur);
        return PF_OK;
    }
    /* Same lineage, so the same kind: it moves its state onto cur. */
    *how = s->mv->kind->session_rebase(s->state, s->mv, cur);
    pf_mapver_release(s->mv);
    s->mv = cur;
    return PF_OK;
}

/* The session job */

void pf_session_take_charge(pf_session *s, pf_mem *mem, size_t reserved) {
    s->mem = mem;
    s->charged = reserved;
}

/* The charge follows what the session holds after a run (its search grew
 * or was rebuilt smaller), and so does its version's: the first session
 * plan on a version may build parts of it (a grid's cuts, planner.h). */
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

pf_error pf_session_run(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                        const pf_update_list *l, pf_jsonw *w) {
    pf_kind_session_run run;
    const char *how = "none";
    pf_error err;
    memset(&run, 0, sizeof(run));
    run.t0_ns = pf_clock_now_ns();
    if (pf_session_sync(s, reg, &how) == PF_ECANCELED) {
        pf_sessions_kill(t, s);
        pf_proto_write_error(w, PF_ERR_SESSION_NOT_FOUND,
                             "The session is gone: its map was deleted or replaced.", NULL);
        err = PF_ERR_SESSION_NOT_FOUND;
    } else {
        run.mv = s->mv;
        run.session_id = s->id;
        run.map_id = s->map_id;
        run.ttl_s = s->ttl_s;
        run.record_bytes = sizeof(*s);
        run.rebase = how;
        run.metrics = m;
        err = s->mv->kind->session_run(&run, s->state, l, w);
    }
    recharge(s);
    return err;
}
