/* agents.c -- lazily built, locally repaired agent data. See agents.h. */
#include "agents.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "build_stop.h"
#include "clock_internal.h"

/* A hierarchy and its build time, published together. */
typedef struct hpa_box {
    pf_hpa *hpa;
    uint64_t us;
} hpa_box;

typedef struct agent_class {
    pf_grid *grid;
    uint64_t grid_us;
    _Atomic(hpa_box *) hpa;
} agent_class;

struct pf_agents {
    const pf_grid *base;
    int32_t max_size;
    bool have_hpa;
    pf_hpa_params hp;
    _Atomic(pf_clearance *) clearance;
    _Atomic(agent_class *) cls[PF_AGENT_SIZE_MAX + 1];
};

pf_status pf_agents_create(const pf_grid *base, int32_t max_size, const pf_hpa_params *hpa,
                           pf_agents **out) {
    pf_agents *a;
    *out = NULL;
    if (max_size < 1 || max_size > PF_AGENT_SIZE_MAX) return PF_EINVAL;
    a = calloc(1, sizeof(*a));
    if (!a) return PF_ENOMEM;
    a->base = base;
    a->max_size = max_size;
    a->have_hpa = hpa != NULL;
    if (hpa) a->hp = *hpa;
    atomic_init(&a->clearance, NULL);
    for (int i = 0; i <= PF_AGENT_SIZE_MAX; i++) atomic_init(&a->cls[i], NULL);
    *out = a;
    return PF_OK;
}

static void box_destroy(hpa_box *b) {
    if (!b) return;
    pf_hpa_destroy(b->hpa);
    free(b);
}

static void class_destroy(agent_class *c) {
    if (!c) return;
    box_destroy(atomic_load(&c->hpa));
    pf_grid_destroy(c->grid);
    free(c);
}

void pf_agents_destroy(pf_agents *a) {
    if (!a) return;
    for (int i = 0; i <= PF_AGENT_SIZE_MAX; i++) class_destroy(atomic_load(&a->cls[i]));
    pf_clearance_destroy(atomic_load(&a->clearance));
    free(a);
}

int32_t pf_agents_max_size(const pf_agents *a) { return a->max_size; }

/* The agent data is shared read-only between threads; only its atomic
 * slots are filled, once each (see agents.h). The object itself was never
 * defined const. */
static pf_agents *mut(const pf_agents *a) { return (pf_agents *)a; }

pf_status pf_agents_clearance(const pf_agents *ca, pf_build_stop *stop, const pf_clearance **out) {
    pf_agents *a = mut(ca);
    pf_clearance *c = atomic_load_explicit(&a->clearance, memory_order_acquire), *none = NULL;
    pf_status st;
    if (!c) {
        if ((st = pf_clearance_build(a->base, a->max_size, stop, &c))) return st;
        if (!atomic_compare_exchange_strong_explicit(&a->clearance, &none, c, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            pf_clearance_destroy(c);
            c = none;
        }
    }
    *out = c;
    return PF_OK;
}

/* The class of size n, built when missing. */
static pf_status get_class(const pf_agents *ca, int32_t n, pf_build_stop *stop, agent_class **out) {
    pf_agents *a = mut(ca);
    agent_class *k = atomic_load_explicit(&a->cls[n], memory_order_acquire), *none = NULL;
    const pf_clearance *c;
    uint64_t t0;
    pf_status st;
    if (k) {
        *out = k;
        return PF_OK;
    }
    if ((st = pf_agents_clearance(a, stop, &c))) return st;
    k = calloc(1, sizeof(*k));
    if (!k) return PF_ENOMEM;
    atomic_init(&k->hpa, NULL);
    t0 = pf__mono_us();
    if ((st = pf_agent_grid_build(a->base, c, n, stop, &k->grid))) {
        free(k);
        return st;
    }
    k->grid_us = pf__mono_us() - t0;
    if (!atomic_compare_exchange_strong_explicit(&a->cls[n], &none, k, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        class_destroy(k);
        k = none;
    }
    *out = k;
    return PF_OK;
}

pf_status pf_agents_grid(const pf_agents *a, int32_t n, pf_build_stop *stop, const pf_grid **out) {
    agent_class *k;
    pf_status st;
    *out = NULL;
    if (n < 1 || n > a->max_size) return PF_ERANGE;
    if (n == 1) {
        *out = a->base;
        return PF_OK;
    }
    if ((st = get_class(a, n, stop, &k))) return st;
    *out = k->grid;
    return PF_OK;
}

pf_status pf_agents_hpa(const pf_agents *a, int32_t n, pf_build_stop *stop, const pf_hpa **out) {
    agent_class *k;
    hpa_box *b, *none = NULL;
    uint64_t t0;
    pf_status st;
    *out = NULL;
    if (n < 2 || n > a->max_size) return PF_ERANGE;
    if (!a->have_hpa) return PF_EUNSUPPORTED;
    if ((st = get_class(a, n, stop, &k))) return st;
    b = atomic_load_explicit(&k->hpa, memory_order_acquire);
    if (!b) {
        b = calloc(1, sizeof(*b));
        if (!b) return PF_ENOMEM;
        t0 = pf__mono_us();
        if ((st = pf_hpa_build(k->grid, &a->hp, stop, &b->hpa))) {
            free(b);
            return st;
        }
        b->us = pf__mono_us() - t0;
        if (!atomic_compare_exchange_strong_explicit(&k->hpa, &none, b, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            box_destroy(b);
            b = none;
        }
    }
    *out = b->hpa;
    return PF_OK;
}

bool pf_agents_built(const pf_agents *ca, int32_t n, bool hpa) {
    agent_class *k;
    if (n == 1) return true;
    if (n < 2 || n > ca->max_size) return false;
    k = atomic_load_explicit(&mut(ca)->cls[n], memory_order_acquire);
    if (!k) return false;
    return !hpa || !ca->have_hpa || atomic_load_explicit(&k->hpa, memory_order_acquire) != NULL;
}

/* Class n of the new version from old class `ok`: its agent grid repaired
 * and, when old had one, its hierarchy, into *out. PF_ECANCELED when stop
 * said stop; *out NULL otherwise only when out of memory (the class is
 * then built again on first use), and its hierarchy likewise. */
static pf_status repair_class(const agent_class *ok, const pf_grid *base, const pf_clearance *c,
                              int32_t n, const pf_point *changed, size_t nchanged,
                              pf_build_stop *stop, agent_class **out) {
    agent_class *k = calloc(1, sizeof(*k));
    hpa_box *ob = atomic_load_explicit(&((agent_class *)ok)->hpa, memory_order_acquire), *b;
    pf_point *list = NULL;
    size_t nlist = 0;
    uint64_t t0 = pf__mono_us();
    pf_status st;
    *out = NULL;
    if (!k) return PF_OK;
    atomic_init(&k->hpa, NULL);
    st = pf_agent_grid_repair(ok->grid, base, c, n, changed, nchanged, stop, &k->grid,
                              ob ? &list : NULL, &nlist);
    if (st) {
        free(k);
        return st == PF_ECANCELED ? st : PF_OK;
    }
    k->grid_us = pf__mono_us() - t0;
    if (ob && (b = calloc(1, sizeof(*b)))) {
        t0 = pf__mono_us();
        st = pf_hpa_repair(ob->hpa, k->grid, list, nlist, stop, &b->hpa);
        if (st == PF_OK) {
            b->us = pf__mono_us() - t0;
            atomic_store(&k->hpa, b);
        } else {
            free(b); /* built again on first use */
        }
    }
    free(list);
    if (st == PF_ECANCELED) {
        class_destroy(k);
        return st;
    }
    *out = k;
    return PF_OK;
}

pf_status pf_agents_repair(const pf_agents *old, const pf_grid *base, const pf_point *changed,
                           size_t n, pf_build_stop *stop, pf_agents **out) {
    pf_clearance *oc = atomic_load_explicit(&mut(old)->clearance, memory_order_acquire), *c = NULL;
    pf_agents *a;
    pf_status st = pf_agents_create(base, old->max_size, old->have_hpa ? &old->hp : NULL, &a);
    *out = NULL;
    if (st) return st;
    if (oc) {
        st = pf_clearance_repair(oc, base, changed, n, stop, &c);
        if (st == PF_OK) atomic_store(&a->clearance, c);
    }
    for (int32_t s = 2; c && s <= old->max_size; s++) {
        agent_class *ok = atomic_load_explicit(&mut(old)->cls[s], memory_order_acquire), *k;
        if (!ok) continue;
        if ((st = repair_class(ok, base, c, s, changed, n, stop, &k))) break;
        atomic_store(&a->cls[s], k);
    }
    if (st == PF_ECANCELED) {
        pf_agents_destroy(a);
        return st;
    }
    *out = a;
    return PF_OK;
}

size_t pf_agents_stats(const pf_agents *a, pf_agents_class_stats *out, size_t cap) {
    size_t k = 0;
    for (int32_t s = 2; s <= a->max_size; s++) {
        agent_class *c = atomic_load_explicit(&mut(a)->cls[s], memory_order_acquire);
        hpa_box *b;
        if (!c) continue;
        if (k < cap) {
            pf_agents_class_stats *o = &out[k];
            b = atomic_load_explicit(&c->hpa, memory_order_acquire);
            o->size = s;
            o->has_hpa = b != NULL;
            o->grid_us = c->grid_us;
            o->hpa_us = b ? b->us : 0;
            o->memory_bytes = pf_grid_memory(c->grid);
            if (b) {
                pf_hpa_stats hs;
                pf_hpa_get_stats(b->hpa, &hs);
                o->memory_bytes += hs.memory_bytes;
            }
        }
        k++;
    }
    return k;
}

size_t pf_agents_memory(const pf_agents *a) {
    pf_agents_class_stats st[PF_AGENT_SIZE_MAX];
    pf_clearance *c = atomic_load_explicit(&mut(a)->clearance, memory_order_acquire);
    size_t n = pf_agents_stats(a, st, PF_AGENT_SIZE_MAX), m = sizeof(*a);
    if (c) m += pf_clearance_memory(c);
    for (size_t i = 0; i < n; i++) m += st[i].memory_bytes;
    return m;
}
