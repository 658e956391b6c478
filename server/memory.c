/* memory.c -- see memory.h. */
#include "memory.h"

#include "deadends.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct pf_mem {
    uint64_t budget;
    atomic_uint_fast64_t total;
    atomic_uint_fast64_t used[PF_MEM_COUNT];
    atomic_uint_fast64_t refused;
};

/* The cgroup v2 limit of this process, 0 when there is none ("max") or it
 * cannot be read. */
static uint64_t cgroup_limit(void) {
    char path[640], line[512], val[64];
    unsigned long long v = 0;
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return 0;
    path[0] = '\0';
    while (fgets(line, sizeof(line), f))
        if (line[0] == '0' && line[1] == ':' && line[2] == ':') { /* "0::/path" (v2) */
            size_t n = 0;
            while (line[3 + n] && line[3 + n] != '\n') n++;
            line[3 + n] = '\0';
            snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", line + 3);
            break;
        }
    fclose(f);
    if (!path[0] || !(f = fopen(path, "r"))) return 0;
    if (fscanf(f, "%63s", val) == 1 && sscanf(val, "%llu", &v) != 1) v = 0; /* "max" */
    fclose(f);
    return v;
}

static uint64_t default_budget(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t ram = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    uint64_t cg = cgroup_limit(), avail = ram;
    if (cg && (!avail || cg < avail)) avail = cg;
    if (!avail) avail = UINT64_C(4) << 30; /* nothing to go by: 4 GiB */
    return avail / 4 * 3;
}

pf_mem *pf_mem_create(uint64_t budget_bytes) {
    pf_mem *m = calloc(1, sizeof(*m));
    if (!m) return NULL;
    m->budget = budget_bytes ? budget_bytes : default_budget();
    atomic_init(&m->total, 0);
    atomic_init(&m->refused, 0);
    for (int k = 0; k < PF_MEM_COUNT; k++) atomic_init(&m->used[k], 0);
    return m;
}

void pf_mem_destroy(pf_mem *m) { free(m); }

uint64_t pf_mem_budget(const pf_mem *m) { return m->budget; }

uint64_t pf_mem_used(const pf_mem *m) {
    return atomic_load_explicit(&((pf_mem *)m)->total, memory_order_relaxed);
}

uint64_t pf_mem_used_by(const pf_mem *m, pf_mem_kind k) {
    return atomic_load_explicit(&((pf_mem *)m)->used[k], memory_order_relaxed);
}

uint64_t pf_mem_refused(const pf_mem *m) {
    return atomic_load_explicit(&((pf_mem *)m)->refused, memory_order_relaxed);
}

bool pf_mem_try_charge(pf_mem *m, pf_mem_kind k, size_t n) {
    uint_fast64_t cur;
    if (!m) return true;
    cur = atomic_load_explicit(&m->total, memory_order_relaxed);
    do {
        if (cur > m->budget || n > m->budget - cur) {
            atomic_fetch_add_explicit(&m->refused, 1, memory_order_relaxed);
            return false;
        }
    } while (!atomic_compare_exchange_weak_explicit(&m->total, &cur, cur + n, memory_order_relaxed,
                                                    memory_order_relaxed));
    atomic_fetch_add_explicit(&m->used[k], n, memory_order_relaxed);
    return true;
}

void pf_mem_charge(pf_mem *m, pf_mem_kind k, size_t n) {
    if (!m) return;
    atomic_fetch_add_explicit(&m->total, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->used[k], n, memory_order_relaxed);
}

void pf_mem_uncharge(pf_mem *m, pf_mem_kind k, size_t n) {
    if (!m) return;
    atomic_fetch_sub_explicit(&m->total, n, memory_order_relaxed);
    atomic_fetch_sub_explicit(&m->used[k], n, memory_order_relaxed);
}

size_t pf_mem_map_estimate(uint64_t cells, size_t landmark_bytes) {
    /* Landmarks come with their dead-end data (deadends.h). */
    uint64_t n = cells * 64 + (uint64_t)landmark_bytes +
                 (landmark_bytes ? cells * PF_DEADENDS_CELL_BYTES : 0) + (1u << 20);
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

size_t pf_mem_session_estimate(uint64_t cells) {
    uint64_t n = cells * 8 + (64u << 10);
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

size_t pf_mem_agent_estimate(uint64_t cells, bool hierarchy) {
    uint64_t n = cells * 4 + (64u << 10);
    if (hierarchy) n += pf_mem_map_estimate(cells, 0);
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

const char *pf_mem_kind_name(pf_mem_kind k) {
    static const char *const names[PF_MEM_COUNT] = {"maps",   "caches", "sessions", "streams",
                                                    "bodies", "crowds", "scratch",  "answers"};
    return k >= 0 && k < PF_MEM_COUNT ? names[k] : "other";
}
