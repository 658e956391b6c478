/* registry.c -- see registry.h. A chained hash table under one mutex. */
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

typedef struct slot {
    pf_mapver *mv;
    struct slot *next;
} slot;

struct pf_registry {
    uv_mutex_t mu;
    slot **buckets;
    size_t nbuckets; /* a power of two */
    size_t count, max_maps;
};

pf_mapver *pf_mapver_create(const char *id, pf_planner *planner, size_t cache_entries,
                            size_t cache_bytes, uint64_t build_us, const uint8_t hash[32]) {
    pf_mapver *mv = calloc(1, sizeof(*mv));
    if (!mv) goto out_free_planner;
    mv->cache = pf_cache_create(cache_entries, cache_bytes);
    if (!mv->cache) goto out_free_mv;
    atomic_init(&mv->refs, 1);
    snprintf(mv->id, sizeof(mv->id), "%s", id);
    mv->planner = planner;
    mv->build_us = build_us;
    if (hash) memcpy(mv->content_hash, hash, sizeof(mv->content_hash));
    return mv;

out_free_mv:
    free(mv);
out_free_planner:
    pf_planner_destroy(planner);
    return NULL;
}

void pf_mapver_retain(pf_mapver *mv) { atomic_fetch_add_explicit(&mv->refs, 1, memory_order_relaxed); }

void pf_mapver_release(pf_mapver *mv) {
    if (!mv) return;
    if (atomic_fetch_sub_explicit(&mv->refs, 1, memory_order_acq_rel) != 1) return;
    pf_cache_destroy(mv->cache);
    pf_planner_destroy(mv->planner);
    free(mv);
}

pf_algorithm pf_mapver_default_algorithm(const pf_mapver *mv) {
    return pf_planner_has_hpa(mv->planner) ? PF_ALGO_HPA : PF_ALGO_ASTAR;
}

static uint64_t id_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

pf_registry *pf_registry_create(size_t max_maps) {
    pf_registry *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->max_maps = max_maps;
    r->nbuckets = 64;
    while (r->nbuckets < max_maps && r->nbuckets < 65536) r->nbuckets <<= 1;
    r->buckets = calloc(r->nbuckets, sizeof(*r->buckets));
    if (!r->buckets) goto out_free_registry;
    if (uv_mutex_init(&r->mu)) goto out_free_buckets;
    return r;

out_free_buckets:
    free(r->buckets);
out_free_registry:
    free(r);
    return NULL;
}

void pf_registry_destroy(pf_registry *r) {
    if (!r) return;
    for (size_t i = 0; i < r->nbuckets; i++) {
        slot *s = r->buckets[i], *n;
        for (; s; s = n) {
            n = s->next;
            pf_mapver_release(s->mv);
            free(s);
        }
    }
    uv_mutex_destroy(&r->mu);
    free(r->buckets);
    free(r);
}

static slot **find(pf_registry *r, const char *id) {
    slot **pp = &r->buckets[id_hash(id) & (r->nbuckets - 1)];
    while (*pp && strcmp((*pp)->mv->id, id) != 0) pp = &(*pp)->next;
    return pp;
}

pf_mapver *pf_registry_get(pf_registry *r, const char *id) {
    pf_mapver *mv = NULL;
    slot *s;
    uv_mutex_lock(&r->mu);
    s = *find(r, id);
    if (s) {
        mv = s->mv;
        pf_mapver_retain(mv);
    }
    uv_mutex_unlock(&r->mu);
    return mv;
}

pf_status pf_registry_publish(pf_registry *r, pf_mapver *mv, bool *created) {
    pf_mapver *old = NULL;
    slot **pp, *s;
    pf_status st = PF_OK;
    uv_mutex_lock(&r->mu);
    pp = find(r, mv->id);
    if (*pp) {
        old = (*pp)->mv;
        mv->version = old->version + 1;
        (*pp)->mv = mv;
        *created = false;
    } else if (r->count >= r->max_maps) {
        st = PF_ELIMIT;
    } else if (!(s = calloc(1, sizeof(*s)))) {
        st = PF_ENOMEM;
    } else {
        mv->version = 1;
        s->mv = mv;
        *pp = s;
        r->count++;
        *created = true;
    }
    uv_mutex_unlock(&r->mu);
    pf_mapver_release(old); /* outside the lock: freeing a big map takes time */
    return st;
}

bool pf_registry_remove(pf_registry *r, const char *id) {
    slot **pp, *s = NULL;
    uv_mutex_lock(&r->mu);
    pp = find(r, id);
    if (*pp) {
        s = *pp;
        *pp = s->next;
        r->count--;
    }
    uv_mutex_unlock(&r->mu);
    if (!s) return false;
    pf_mapver_release(s->mv);
    free(s);
    return true;
}

size_t pf_registry_count(pf_registry *r) {
    size_t n;
    uv_mutex_lock(&r->mu);
    n = r->count;
    uv_mutex_unlock(&r->mu);
    return n;
}

static int cmp_mv(const void *a, const void *b) {
    return strcmp((*(pf_mapver *const *)a)->id, (*(pf_mapver *const *)b)->id);
}

pf_status pf_registry_list(pf_registry *r, pf_mapver ***out, size_t *n) {
    pf_mapver **list;
    size_t k = 0;
    uv_mutex_lock(&r->mu);
    list = malloc((r->count ? r->count : 1) * sizeof(*list));
    if (!list) {
        uv_mutex_unlock(&r->mu);
        return PF_ENOMEM;
    }
    for (size_t i = 0; i < r->nbuckets; i++)
        for (slot *s = r->buckets[i]; s; s = s->next) {
            pf_mapver_retain(s->mv);
            list[k++] = s->mv;
        }
    uv_mutex_unlock(&r->mu);
    qsort(list, k, sizeof(*list), cmp_mv);
    *out = list;
    *n = k;
    return PF_OK;
}
