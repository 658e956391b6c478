/* cache.c -- see cache.h. A chained hash table whose entries also sit on a
 * doubly linked list in recency order (most recent at the head). */
#include "cache.h"

#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

typedef struct entry {
    pf_cache_key key;
    uint64_t hash;
    pf_cache_value val;
    struct entry *hnext;
    struct entry *prev, *next;
} entry;

struct pf_cache {
    uv_mutex_t mu;
    entry **buckets;
    size_t nbuckets; /* a power of two */
    entry *head, *tail;
    size_t entries, bytes;
    size_t max_entries, max_bytes;
    pf_mem *mem; /* the process budget its entries are charged to, or NULL */
    uint64_t hits, misses;
};

pf_cache_key pf_cache_key_make(pf_point start, pf_point goal, pf_algorithm algo, pf_heuristic h,
                               double weight, bool smooth, uint64_t max_expanded,
                               uint64_t version) {
    pf_cache_key k;
    memset(&k, 0, sizeof(k));
    k.start = start;
    k.goal = goal;
    k.algorithm = (int32_t)algo;
    k.heuristic = (int32_t)h;
    k.weight = algo == PF_ALGO_WEIGHTED ? weight : 0.0;
    k.smooth = smooth;
    k.max_expanded = max_expanded;
    k.version = version;
    return k;
}

void pf_cache_key_extra2(pf_cache_key *k, const void *a, size_t na, const void *b, size_t nb) {
    struct sha256_ctx h;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&h);
    sha256_update(&h, na, a);
    if (nb) sha256_update(&h, nb, b);
    sha256_digest(&h, sizeof(d), d);
    memcpy(k->extra, d, sizeof(k->extra));
}

void pf_cache_key_extra(pf_cache_key *k, const void *bytes, size_t n) {
    pf_cache_key_extra2(k, bytes, n, NULL, 0);
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static uint64_t key_hash(const pf_cache_key *k) {
    uint64_t h = 0x12345, w;
    memcpy(&w, &k->weight, sizeof(w));
    h = mix(h, ((uint64_t)(uint32_t)k->start.x << 32) | (uint32_t)k->start.y);
    h = mix(h, ((uint64_t)(uint32_t)k->goal.x << 32) | (uint32_t)k->goal.y);
    h = mix(h, ((uint64_t)(uint32_t)k->algorithm << 32) | (uint32_t)k->heuristic);
    h = mix(h, w);
    h = mix(h, k->max_expanded);
    h = mix(h, k->version);
    h = mix(h, k->smooth);
    {
        uint64_t e0, e1;
        memcpy(&e0, k->extra, 8);
        memcpy(&e1, k->extra + 8, 8);
        h = mix(h, e0);
        h = mix(h, e1);
    }
    return h ^ (h >> 29);
}

static bool key_eq(const pf_cache_key *a, const pf_cache_key *b) {
    return a->start.x == b->start.x && a->start.y == b->start.y && a->goal.x == b->goal.x &&
           a->goal.y == b->goal.y && a->algorithm == b->algorithm && a->heuristic == b->heuristic &&
           a->weight == b->weight && a->max_expanded == b->max_expanded &&
           a->version == b->version && a->smooth == b->smooth &&
           memcmp(a->extra, b->extra, sizeof(a->extra)) == 0;
}

static size_t entry_bytes(const entry *e) { return sizeof(*e) + e->val.len; }

pf_cache *pf_cache_create(size_t max_entries, size_t max_bytes) {
    pf_cache *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->max_entries = max_entries;
    c->max_bytes = max_bytes;
    c->nbuckets = 16;
    while (c->nbuckets < max_entries && c->nbuckets < ((size_t)1 << 24)) c->nbuckets <<= 1;
    c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
    if (!c->buckets) goto out_free_cache;
    if (uv_mutex_init(&c->mu)) goto out_free_buckets;
    return c;

out_free_buckets:
    free(c->buckets);
out_free_cache:
    free(c);
    return NULL;
}

void pf_cache_destroy(pf_cache *c) {
    entry *e, *n;
    if (!c) return;
    for (e = c->head; e; e = n) {
        n = e->next;
        free(e->val.json);
        free(e);
    }
    pf_mem_uncharge(c->mem, PF_MEM_CACHES, c->bytes);
    uv_mutex_destroy(&c->mu);
    free(c->buckets);
    free(c);
}

static void lru_unlink(pf_cache *c, entry *e) {
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push_front(pf_cache *c, entry *e) {
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    else
        c->tail = e;
    c->head = e;
}

static entry **find_slot(pf_cache *c, const pf_cache_key *k, uint64_t h) {
    entry **pp = &c->buckets[h & (c->nbuckets - 1)];
    while (*pp && !((*pp)->hash == h && key_eq(&(*pp)->key, k))) pp = &(*pp)->hnext;
    return pp;
}

static void remove_entry(pf_cache *c, entry *e) {
    entry **pp = find_slot(c, &e->key, e->hash);
    *pp = e->hnext;
    lru_unlink(c, e);
    c->entries--;
    c->bytes -= entry_bytes(e);
    pf_mem_uncharge(c->mem, PF_MEM_CACHES, entry_bytes(e));
    free(e->val.json);
    free(e);
}

bool pf_cache_get(pf_cache *c, const pf_cache_key *k, pf_cache_value *out) {
    uint64_t h = key_hash(k);
    entry *e;
    bool hit = false;
    uv_mutex_lock(&c->mu);
    e = c->max_entries ? *find_slot(c, k, h) : NULL;
    if (e) {
        out->len = e->val.len;
        out->json = malloc(e->val.len ? e->val.len : 1);
        if (out->json) {
            memcpy(out->json, e->val.json, e->val.len);
            lru_unlink(c, e);
            lru_push_front(c, e);
            hit = true;
        }
    }
    if (hit)
        c->hits++;
    else
        c->misses++;
    uv_mutex_unlock(&c->mu);
    return hit;
}

pf_status pf_cache_put(pf_cache *c, const pf_cache_key *k, const pf_cache_value *v) {
    uint64_t h = key_hash(k);
    entry *e, **slot;
    size_t bytes;
    if (c->max_entries == 0) return PF_OK;
    if (v->len > SIZE_MAX - sizeof(entry)) return PF_OK;
    bytes = sizeof(entry) + v->len;
    if (bytes > c->max_bytes) return PF_OK;
    e = calloc(1, sizeof(*e));
    if (!e) return PF_ENOMEM;
    e->key = *k;
    e->hash = h;
    e->val.len = v->len;
    e->val.json = malloc(v->len ? v->len : 1);
    if (!e->val.json) {
        free(e);
        return PF_ENOMEM;
    }
    memcpy(e->val.json, v->json, v->len);

    uv_mutex_lock(&c->mu);
    slot = find_slot(c, k, h);
    if (*slot) remove_entry(c, *slot);
    while (c->tail && (c->entries >= c->max_entries || c->bytes + bytes > c->max_bytes))
        remove_entry(c, c->tail);
    if (!pf_mem_try_charge(c->mem, PF_MEM_CACHES, bytes)) {
        /* The process budget is spent: the answer is not kept. */
        uv_mutex_unlock(&c->mu);
        free(e->val.json);
        free(e);
        return PF_OK;
    }
    slot = find_slot(c, k, h); /* removals may have changed the chain */
    e->hnext = NULL;
    *slot = e;
    lru_push_front(c, e);
    c->entries++;
    c->bytes += bytes;
    uv_mutex_unlock(&c->mu);
    return PF_OK;
}

void pf_cache_set_mem(pf_cache *c, pf_mem *mem) { c->mem = mem; }

void pf_cache_get_stats(pf_cache *c, pf_cache_stats *st) {
    uv_mutex_lock(&c->mu);
    st->hits = c->hits;
    st->misses = c->misses;
    st->entries = c->entries;
    st->bytes = c->bytes;
    uv_mutex_unlock(&c->mu);
}

void pf_cache_clear(pf_cache *c) {
    uv_mutex_lock(&c->mu);
    while (c->tail) remove_entry(c, c->tail);
    uv_mutex_unlock(&c->mu);
}
