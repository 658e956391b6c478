/* navq.c -- see navq.h. */
#include "navq.h"

#include <stdlib.h>
#include <uv.h>

struct pf_navq {
    uv_mutex_t mu;
    uint32_t max_nodes;
    size_t keep, n; /* idle: idle[0..n) */
    pf_nav_query **idle;
    pf_mem *mem;
};

void pf_navq_set_mem(pf_navq *qs, pf_mem *mem) { qs->mem = mem; }

pf_status pf_navq_create(uint32_t max_nodes, size_t keep, pf_navq **out) {
    pf_navq *qs = calloc(1, sizeof(*qs));
    *out = NULL;
    if (!qs) return PF_ENOMEM;
    qs->max_nodes = max_nodes;
    qs->keep = keep ? keep : 1;
    if (!(qs->idle = calloc(qs->keep, sizeof(*qs->idle))) || uv_mutex_init(&qs->mu)) {
        free(qs->idle);
        free(qs);
        return PF_ENOMEM;
    }
    *out = qs;
    return PF_OK;
}

void pf_navq_destroy(pf_navq *qs) {
    if (!qs) return;
    for (size_t i = 0; i < qs->n; i++) {
        pf_mem_uncharge(qs->mem, PF_MEM_MAPS, pf_nav_query_memory(qs->idle[i]));
        pf_nav_query_destroy(qs->idle[i]);
    }
    uv_mutex_destroy(&qs->mu);
    free(qs->idle);
    free(qs);
}

pf_nav_query *pf_navq_get(pf_navq *qs) {
    pf_nav_query *q = NULL;
    uv_mutex_lock(&qs->mu);
    if (qs->n) q = qs->idle[--qs->n];
    uv_mutex_unlock(&qs->mu);
    if (!q) {
        if (pf_nav_query_create(qs->max_nodes, &q)) return NULL;
        /* Scratch a search cannot do without: charged, not refused. */
        pf_mem_charge(qs->mem, PF_MEM_MAPS, pf_nav_query_memory(q));
    }
    return q;
}

void pf_navq_put(pf_navq *qs, pf_nav_query *q) {
    if (!q) return;
    uv_mutex_lock(&qs->mu);
    if (qs->n < qs->keep) {
        qs->idle[qs->n++] = q;
        q = NULL;
    }
    uv_mutex_unlock(&qs->mu);
    if (q) pf_mem_uncharge(qs->mem, PF_MEM_MAPS, pf_nav_query_memory(q));
    pf_nav_query_destroy(q); /* NULL: kept */
}
