/* live.c -- see live.h. A chained hash table by id under one mutex, with a
 * count per map. */
#include "live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <uv.h>

typedef struct mapcount {
    char map_id[PF_MAP_ID_MAX + 1];
    size_t n;
    struct mapcount *next;
} mapcount;

struct pf_live {
    const pf_live_type *type;
    uv_mutex_t mu;
    pf_live_obj **buckets;
    size_t nbuckets; /* a power of two */
    mapcount *counts;
    size_t count, max_total, max_per_map;
    size_t memory; /* the accounted bytes of the linked objects */
};

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static pf_live_obj **bucket(pf_live *t, const char *id) {
    return &t->buckets[str_hash(id) & (t->nbuckets - 1)];
}

pf_live *pf_live_create(const pf_live_type *type, size_t max_total, size_t max_per_map) {
    pf_live *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->type = type;
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

void pf_live_retain(pf_live_obj *o) {
    atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
}

void pf_live_unref(pf_live_obj *o) {
    if (o && atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1) o->type->free(o);
}

void pf_live_destroy(pf_live *t) {
    if (!t) return;
    for (size_t i = 0; i < t->nbuckets; i++) {
        pf_live_obj *o = t->buckets[i], *n;
        for (; o; o = n) {
            n = o->next;
            o->gone = true;
            pf_live_unref(o);
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

void pf_live_lock(pf_live *t) { uv_mutex_lock(&t->mu); }

void pf_live_unlock(pf_live *t) { uv_mutex_unlock(&t->mu); }

static mapcount *count_of(pf_live *t, const char *map_id) {
    for (mapcount *c = t->counts; c; c = c->next)
        if (strcmp(c->map_id, map_id) == 0) return c;
    return NULL;
}

static pf_live_obj *find_locked(pf_live *t, const char *id) {
    pf_live_obj *o = *bucket(t, id);
    while (o && strcmp(o->id, id) != 0) o = o->next;
    return o;
}

static bool expired(const pf_live_obj *o, uint64_t now_ns) {
    return !o->busy && !o->watchers && now_ns > o->last_ns &&
           now_ns - o->last_ns > (uint64_t)o->ttl_s * 1000000000ull;
}

/* Unlinks o (lock held): the caller drops the table's reference after the
 * lock. false when it was not linked. */
static bool unlink_locked(pf_live *t, pf_live_obj *o) {
    pf_live_obj **pp = bucket(t, o->id);
    mapcount *c, **cp;
    while (*pp && *pp != o) pp = &(*pp)->next;
    if (!*pp) return false;
    *pp = o->next;
    o->next = NULL;
    o->gone = true;
    t->count--;
    t->memory -= o->accounted;
    o->accounted = 0;
    for (cp = &t->counts; (c = *cp) && strcmp(c->map_id, o->map_id) != 0; cp = &c->next) {
    }
    if (c && --c->n == 0) {
        *cp = c->next;
        free(c);
    }
    return true;
}

static void new_id(char out[PF_LIVE_ID_LEN + 1]) {
    static const char hex[] = "0123456789abcdef";
    uint8_t b[PF_LIVE_ID_LEN / 2];
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
    out[PF_LIVE_ID_LEN] = '\0';
}

pf_status pf_live_insert(pf_live *t, pf_live_obj *o, const pf_mapver *mv, int64_t ttl_s,
                         const pf_auth_id *owner, bool hold, uint64_t now_ns, bool *total) {
    size_t bytes = t->type->memory ? t->type->memory(o) : 0;
    mapcount *c;
    pf_status st = PF_OK;
    *total = false;
    o->type = t->type;
    snprintf(o->map_id, sizeof(o->map_id), "%s", mv->id);
    o->lineage = mv->lineage;
    if (owner) o->owner = *owner;
    o->ttl_s = ttl_s;
    o->last_ns = now_ns;
    o->busy = hold;
    atomic_init(&o->refs, 2); /* the table's and the caller's */
    uv_mutex_lock(&t->mu);
    c = count_of(t, o->map_id);
    if (t->count >= t->max_total) {
        *total = true;
        st = PF_ELIMIT;
    } else if (c && c->n >= t->max_per_map) {
        st = PF_ELIMIT;
    } else if (!c && !(c = calloc(1, sizeof(*c)))) {
        st = PF_ENOMEM;
    } else {
        if (c->n == 0) {
            snprintf(c->map_id, sizeof(c->map_id), "%s", o->map_id);
            c->next = t->counts;
            t->counts = c;
        }
        c->n++;
        do new_id(o->id);
        while (find_locked(t, o->id));
        o->next = *bucket(t, o->id);
        *bucket(t, o->id) = o;
        t->count++;
        o->accounted = bytes;
        t->memory += bytes;
    }
    uv_mutex_unlock(&t->mu);
    if (st) atomic_init(&o->refs, 0);
    return st;
}

pf_live_lookup pf_live_acquire(pf_live *t, const char *map_id, const char *id, bool exclusive,
                               uint64_t now_ns, pf_live_obj **out) {
    pf_live_obj *o;
    pf_live_lookup res = PF_LIVE_NOT_FOUND;
    *out = NULL;
    uv_mutex_lock(&t->mu);
    o = find_locked(t, id);
    if (o && strcmp(o->map_id, map_id) == 0 && !expired(o, now_ns)) {
        if (o->busy && exclusive) {
            res = PF_LIVE_BUSY;
        } else {
            if (exclusive)
                o->busy = true;
            else
                o->last_ns = now_ns;
            pf_live_retain(o);
            *out = o;
            res = PF_LIVE_OK;
        }
    }
    uv_mutex_unlock(&t->mu);
    return res;
}

void pf_live_release(pf_live *t, pf_live_obj *o, uint64_t now_ns) {
    size_t bytes;
    if (!o) return;
    /* The holder may read o without the lock: its size first. */
    bytes = t->type->memory ? t->type->memory(o) : 0;
    uv_mutex_lock(&t->mu);
    o->busy = false;
    o->last_ns = now_ns;
    if (!o->gone) {
        t->memory = t->memory - o->accounted + bytes;
        o->accounted = bytes;
    }
    uv_mutex_unlock(&t->mu);
    pf_live_unref(o);
}

bool pf_live_exists(pf_live *t, const char *map_id, const char *id, uint64_t now_ns) {
    pf_live_obj *o;
    bool ok;
    uv_mutex_lock(&t->mu);
    o = find_locked(t, id);
    ok = o && strcmp(o->map_id, map_id) == 0 && !expired(o, now_ns);
    uv_mutex_unlock(&t->mu);
    return ok;
}

bool pf_live_owner_is(pf_live *t, const char *map_id, const char *id, const pf_auth_id *who) {
    pf_live_obj *o;
    bool ok;
    uv_mutex_lock(&t->mu);
    o = find_locked(t, id);
    ok = o && strcmp(o->map_id, map_id) == 0 && pf_auth_id_equal(&o->owner, who);
    uv_mutex_unlock(&t->mu);
    return ok;
}

bool pf_live_is_gone(pf_live *t, const pf_live_obj *o) {
    bool g;
    uv_mutex_lock(&t->mu);
    g = o->gone;
    uv_mutex_unlock(&t->mu);
    return g;
}

void pf_live_watch(pf_live *t, pf_live_obj *o, bool open, uint64_t now_ns) {
    uv_mutex_lock(&t->mu);
    o->watchers += open ? 1 : -1;
    o->last_ns = now_ns;
    uv_mutex_unlock(&t->mu);
}

bool pf_live_remove(pf_live *t, const char *map_id, const char *id) {
    pf_live_obj *o;
    bool found = false;
    uv_mutex_lock(&t->mu);
    o = find_locked(t, id);
    if (o && strcmp(o->map_id, map_id) == 0) found = unlink_locked(t, o);
    uv_mutex_unlock(&t->mu);
    if (found) pf_live_unref(o); /* the table's */
    return found;
}

void pf_live_kill(pf_live *t, pf_live_obj *o) {
    bool was;
    uv_mutex_lock(&t->mu);
    was = unlink_locked(t, o);
    uv_mutex_unlock(&t->mu);
    if (was) pf_live_unref(o); /* the table's; the holder still has its own */
}

/* Unlinks every object pred picks; drops the table's references after the
 * lock. */
static size_t sweep(pf_live *t, bool (*pred)(const pf_live_obj *, const void *), const void *arg) {
    pf_live_obj *gone = NULL;
    size_t n = 0;
    uv_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->nbuckets; i++) {
        pf_live_obj *o = t->buckets[i], *next;
        for (; o; o = next) {
            next = o->next;
            if (!pred(o, arg)) continue;
            unlink_locked(t, o);
            o->next = gone;
            gone = o;
            n++;
        }
    }
    uv_mutex_unlock(&t->mu);
    while (gone) {
        pf_live_obj *o = gone;
        gone = o->next;
        o->next = NULL;
        pf_live_unref(o);
    }
    return n;
}

typedef struct drop_arg {
    const char *map_id;
    uint64_t keep;
} drop_arg;

static bool of_map(const pf_live_obj *o, const void *arg) {
    const drop_arg *a = arg;
    return strcmp(o->map_id, a->map_id) == 0 && (a->keep == 0 || o->lineage != a->keep);
}

static bool is_expired(const pf_live_obj *o, const void *arg) {
    return expired(o, *(const uint64_t *)arg);
}

size_t pf_live_drop_map(pf_live *t, const char *map_id, uint64_t keep_lineage) {
    drop_arg a = {map_id, keep_lineage};
    return sweep(t, of_map, &a);
}

size_t pf_live_reap(pf_live *t, uint64_t now_ns) { return sweep(t, is_expired, &now_ns); }

size_t pf_live_count(pf_live *t) {
    size_t n;
    uv_mutex_lock(&t->mu);
    n = t->count;
    uv_mutex_unlock(&t->mu);
    return n;
}

size_t pf_live_count_map(pf_live *t, const char *map_id) {
    const mapcount *c;
    size_t n;
    uv_mutex_lock(&t->mu);
    c = count_of(t, map_id);
    n = c ? c->n : 0;
    uv_mutex_unlock(&t->mu);
    return n;
}

size_t pf_live_memory(pf_live *t) {
    size_t n;
    uv_mutex_lock(&t->mu);
    n = t->memory;
    uv_mutex_unlock(&t->mu);
    return n;
}

void pf_live_each(pf_live *t, const char *map_id, uint64_t now_ns,
                  void (*fn)(void *ud, pf_live_obj *o), void *ud) {
    uv_mutex_lock(&t->mu);
    if (!map_id || count_of(t, map_id))
        for (size_t b = 0; b < t->nbuckets; b++)
            for (pf_live_obj *o = t->buckets[b]; o; o = o->next)
                if ((!map_id || strcmp(o->map_id, map_id) == 0) && !(now_ns && expired(o, now_ns)))
                    fn(ud, o);
    uv_mutex_unlock(&t->mu);
}
