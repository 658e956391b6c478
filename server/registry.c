/* registry.c -- see registry.h. A chained hash table under one mutex. */
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "clock.h"

typedef struct slot {
    pf_mapver *mv;
    struct slot *next;
} slot;

struct pf_registry {
    uv_mutex_t mu;
    slot **buckets;
    size_t nbuckets; /* a power of two */
    size_t count, max_maps;
    uint64_t lineages; /* the last lineage handed out */
};

pf_mapver *pf_mapver_create(const char *id, const pf_kind_ops *kind, const pf_kind_env *env,
                            void *world, size_t cache_entries, size_t cache_bytes,
                            uint64_t build_us, const uint8_t hash[32]) {
    pf_mapver *mv = calloc(1, sizeof(*mv));
    if (!mv) goto out_free_world;
    mv->cache = pf_cache_create(cache_entries, cache_bytes);
    if (!mv->cache) goto out_free_mv;
    atomic_init(&mv->refs, 1);
    snprintf(mv->id, sizeof(mv->id), "%s", id);
    mv->kind = kind;
    mv->env = env;
    mv->world = world;
    mv->build_us = build_us;
    if (hash) memcpy(mv->content_hash, hash, sizeof(mv->content_hash));
    atomic_init(&mv->used_ns, pf_clock_now_ns());
    return mv;

out_free_mv:
    free(mv);
out_free_world:
    kind->world_free(world);
    return NULL;
}

void pf_mapver_retain(pf_mapver *mv) {
    atomic_fetch_add_explicit(&mv->refs, 1, memory_order_relaxed);
}

static void diff_release(pf_mapdiff *d) {
    if (!d || atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1) return;
    pf_mem_uncharge(d->mem, PF_MEM_MAPS, d->n * sizeof(*d->cells));
    free(d->cells);
    free(d);
}

void pf_mapver_charge(pf_mapver *mv, pf_mem *mem, size_t world_bytes) {
    mv->mem = mem;
    atomic_store(&mv->charged, world_bytes);
    pf_mem_charge(mem, PF_MEM_MAPS, world_bytes);
    pf_cache_set_mem(mv->cache, mem);
    if (mv->fields) pf_cache_set_mem(mv->fields, mem);
}

void pf_mapver_recharge(pf_mapver *mv) {
    size_t now, old;
    if (!mv->mem) return;
    now = mv->kind->world_memory(mv->world);
    old = atomic_exchange(&mv->charged, now);
    if (now > old)
        pf_mem_charge(mv->mem, PF_MEM_MAPS, now - old);
    else if (now < old)
        pf_mem_uncharge(mv->mem, PF_MEM_MAPS, old - now);
}

void pf_mapver_release(pf_mapver *mv) {
    if (!mv) return;
    if (atomic_fetch_sub_explicit(&mv->refs, 1, memory_order_acq_rel) != 1) return;
    for (size_t i = 0; i < mv->nlog; i++) diff_release(mv->log[i]);
    pf_cache_destroy(mv->cache);
    pf_cache_destroy(mv->fields);
    mv->kind->world_free(mv->world);
    pf_mem_uncharge(mv->mem, PF_MEM_MAPS, atomic_load(&mv->charged));
    free(mv);
}

void pf_mapver_drop_caches(pf_mapver *mv) {
    pf_cache_clear(mv->cache);
    if (mv->fields) pf_cache_clear(mv->fields);
}

uint64_t pf_mapver_next_version(const pf_mapver *cur) { return cur ? cur->version + 1 : 1; }

pf_status pf_mapver_set_log(pf_mapver *next, const pf_mapver *prev, pf_point *changed, size_t n,
                            size_t max_cells) {
    pf_mapdiff *d;
    size_t keep = 0, cells = n;
    for (size_t i = 0; i < next->nlog; i++) diff_release(next->log[i]);
    next->nlog = 0;
    if (n > max_cells) {
        /* Too big to keep: next starts with an empty log, so a session
         * behind it is rebuilt from next itself. */
        free(changed);
        return PF_OK;
    }
    d = calloc(1, sizeof(*d));
    if (!d) {
        free(changed);
        return PF_ENOMEM;
    }
    atomic_init(&d->refs, 1);
    d->version = pf_mapver_next_version(prev);
    d->cells = changed;
    d->n = n;
    d->mem = next->mem;
    pf_mem_charge(d->mem, PF_MEM_MAPS, n * sizeof(*changed));
    /* Keep the newest diffs of prev that fit the bounds. */
    while (keep < prev->nlog && keep + 1 < PF_MAPVER_LOG_VERSIONS) {
        const pf_mapdiff *o = prev->log[prev->nlog - 1 - keep];
        if (cells + o->n > max_cells) break;
        cells += o->n;
        keep++;
    }
    for (size_t i = prev->nlog - keep; i < prev->nlog; i++) {
        atomic_fetch_add_explicit(&prev->log[i]->refs, 1, memory_order_relaxed);
        next->log[next->nlog++] = prev->log[i];
    }
    next->log[next->nlog++] = d;
    return PF_OK;
}

static int by_cell(const void *a, const void *b) {
    const pf_point *p = a, *q = b;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return p->x < q->x ? -1 : p->x > q->x;
}

pf_status pf_mapver_changes_since(const pf_mapver *cur, uint64_t since, pf_point **out, size_t *n) {
    size_t first, total = 0, k = 0;
    pf_point *list;
    *out = NULL;
    *n = 0;
    if (since >= cur->version) return PF_OK;
    /* The log must hold every version since + 1 .. cur->version. */
    if (cur->nlog == 0 || cur->log[0]->version > since + 1) return PF_ELIMIT;
    first = (size_t)(since + 1 - cur->log[0]->version);
    for (size_t i = first; i < cur->nlog; i++) total += cur->log[i]->n;
    if (total == 0) return PF_OK;
    list = malloc(total * sizeof(*list));
    if (!list) return PF_ENOMEM;
    for (size_t i = first; i < cur->nlog; i++) {
        if (cur->log[i]->n == 0) continue; /* a PATCH that changed nothing: cells is NULL */
        memcpy(list + k, cur->log[i]->cells, cur->log[i]->n * sizeof(*list));
        k += cur->log[i]->n;
    }
    if (first + 1 < cur->nlog) { /* several diffs: a cell changed twice is listed once */
        qsort(list, total, sizeof(*list), by_cell);
        k = 0;
        for (size_t i = 0; i < total; i++)
            if (i == 0 || list[i].x != list[k - 1].x || list[i].y != list[k - 1].y)
                list[k++] = list[i];
        total = k;
    }
    *out = list;
    *n = total;
    return PF_OK;
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

static pf_mapver *get(pf_registry *r, const char *id, bool use) {
    pf_mapver *mv = NULL;
    slot *s;
    uv_mutex_lock(&r->mu);
    s = *find(r, id);
    if (s) {
        mv = s->mv;
        pf_mapver_retain(mv);
        if (use) atomic_store_explicit(&mv->used_ns, pf_clock_now_ns(), memory_order_relaxed);
    }
    uv_mutex_unlock(&r->mu);
    return mv;
}

pf_mapver *pf_registry_get(pf_registry *r, const char *id) { return get(r, id, true); }

pf_mapver *pf_registry_peek(pf_registry *r, const char *id) { return get(r, id, false); }

static pf_status publish(pf_registry *r, pf_mapver *mv, uint64_t first, bool *created) {
    pf_mapver *old = NULL;
    slot **pp, *s;
    pf_status st = PF_OK;
    uv_mutex_lock(&r->mu);
    pp = find(r, mv->id);
    if (*pp) {
        old = (*pp)->mv;
        mv->version = pf_mapver_next_version(old);
        mv->lineage = ++r->lineages;
        (*pp)->mv = mv;
        *created = false;
    } else if (r->count >= r->max_maps) {
        st = PF_ELIMIT;
    } else if (!(s = calloc(1, sizeof(*s)))) {
        st = PF_ENOMEM;
    } else {
        mv->version = first;
        mv->lineage = ++r->lineages;
        s->mv = mv;
        *pp = s;
        r->count++;
        *created = true;
    }
    uv_mutex_unlock(&r->mu);
    pf_mapver_release(old); /* outside the lock: freeing a big map takes time */
    return st;
}

pf_status pf_registry_publish(pf_registry *r, pf_mapver *mv, bool *created) {
    return publish(r, mv, pf_mapver_next_version(NULL), created);
}

pf_status pf_registry_restore(pf_registry *r, pf_mapver *mv, uint64_t version, bool *created) {
    return publish(r, mv, version ? version : pf_mapver_next_version(NULL), created);
}

pf_status pf_registry_swap(pf_registry *r, pf_mapver *expected, pf_mapver *mv) {
    slot **pp;
    pf_status st = PF_ECANCELED;
    uv_mutex_lock(&r->mu);
    pp = find(r, mv->id);
    if (*pp && (*pp)->mv == expected) {
        mv->version = pf_mapver_next_version(expected);
        mv->lineage = expected->lineage;
        (*pp)->mv = mv;
        st = PF_OK;
    }
    uv_mutex_unlock(&r->mu);
    if (st == PF_OK) pf_mapver_release(expected); /* the registry's reference */
    return st;
}

pf_status pf_registry_install(pf_registry *r, pf_mapver *mv, bool *created) {
    pf_mapver *old = NULL;
    slot **pp, *s;
    pf_status st = PF_OK;
    uv_mutex_lock(&r->mu);
    pp = find(r, mv->id);
    *created = false;
    if (*pp) {
        const pf_mapver *cur = (*pp)->mv;
        if (cur->lineage > mv->lineage ||
            (cur->lineage == mv->lineage && cur->version >= mv->version)) {
            st = PF_ECANCELED;
        } else {
            old = (*pp)->mv;
            (*pp)->mv = mv;
        }
    } else if (r->count >= r->max_maps) {
        st = PF_ELIMIT;
    } else if (!(s = calloc(1, sizeof(*s)))) {
        st = PF_ENOMEM;
    } else {
        s->mv = mv;
        *pp = s;
        r->count++;
        *created = true;
    }
    uv_mutex_unlock(&r->mu);
    pf_mapver_release(old);
    return st;
}

/* Unlinks id's slot when its current version is mv (and, with cutoff_ns
 * non-zero, it was last used before it). */
static bool remove_if(pf_registry *r, const pf_mapver *mv, uint64_t cutoff_ns) {
    slot **pp, *s = NULL;
    uv_mutex_lock(&r->mu);
    pp = find(r, mv->id);
    if (*pp && (*pp)->mv == mv &&
        (!cutoff_ns || atomic_load_explicit(&mv->used_ns, memory_order_relaxed) < cutoff_ns)) {
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

bool pf_registry_remove_version(pf_registry *r, const pf_mapver *mv) { return remove_if(r, mv, 0); }

bool pf_registry_remove_idle(pf_registry *r, const pf_mapver *mv, uint64_t cutoff_ns) {
    return remove_if(r, mv, cutoff_ns ? cutoff_ns : 1);
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
