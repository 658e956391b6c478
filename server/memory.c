/* memory.c -- see memory.h. */
#include "memory.h"

#include "deadends.h"
#include "hpa.h"
#include "jps.h"
#include "landmarks.h"
#include "subgoal.h"

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

/* glibc's malloc: a block is its size plus an 8-byte header rounded up to
 * 16 bytes, 32 at least, so at most 31 bytes more; a block it maps instead
 * (M_MMAP_THRESHOLD, 128 KiB at least) is rounded up to a 4 KiB page, so at
 * most one page more per 128 KiB held. */
#define BLOCK_SLACK 32u
#define MAPPED_MIN (128u << 10)
#define PAGE_SLACK 4096u
/* A table of 2 MiB or more (jps's jump tables, the landmark distances) is
 * aligned to 2 MiB (core/bigmem.h), which the allocator may hold as padding
 * in front of it; a smaller one to 64 bytes. */
#define BIG_TABLE (2u << 20)
static uint64_t align_slack(uint64_t table) { return table >= BIG_TABLE ? BIG_TABLE : 64; }

/* The planner, agent and landmark structs and the auto model: fixed size,
 * well under this. */
#define FIXED_BYTES (64u << 10)
#define SUBGOAL_CELL_BYTES 48u
#define SUBGOAL_BLOCKED_BYTES 512u

pf_status pf_mem_map_estimate(const pf_grid *g, const pf_planner_opts *po, size_t *out) {
    uint64_t cells = (uint64_t)pf_grid_width(g) * (uint64_t)pf_grid_height(g);
    pf_jps_params jp = {po->jps_table_bytes, 0}, bits_only = {0, 0};
    /* The grid's blocks (struct, costs, moves, walls, doors; three a door)
     * and jps's six. */
    uint64_t blocks = 5 + 3 * (uint64_t)pf_grid_door_count(g) + 6, n, lmk = 0;
    pf_status st;
    n = FIXED_BYTES + (uint64_t)pf_grid_memory(g) + (uint64_t)pf_jps_size(g, &jp) +
        align_slack((uint64_t)(pf_jps_size(g, &jp) - pf_jps_size(g, &bits_only)));
    if (po->landmark_bytes && cells >= (uint64_t)po->landmark_min_cells) {
        /* Distances within landmark_bytes (landmarks.h), the open-cell bits
         * and the dead-end data (deadends.h). */
        n += (uint64_t)po->landmark_bytes + align_slack(po->landmark_bytes) +
             (cells + 63) / 64 * 8 + cells * PF_DEADENDS_CELL_BYTES;
        blocks += 8;
        /* At most this many of them (landmarks.c). */
        lmk = po->landmark_bytes / (4 * (cells ? cells : 1));
        if (lmk > PF_LANDMARKS_MAX) lmk = PF_LANDMARKS_MAX;
    }
    if (po->build_hpa) {
        pf_hpa_params hp = {po->cluster_size};
        pf_hpa_stats hs;
        size_t hblocks;
        if ((st = pf_hpa_size(g, &hp, po->stop, &hs, &hblocks))) return st;
        n += hs.memory_bytes;
        blocks += hblocks;
        /* The landmarks at its nodes (pf_hpa_lm). */
        if (lmk >= 2) {
            n += pf_hpa_lm_size(hs.abstract_nodes, (int)lmk);
            blocks += 2;
        }
    }
    if (po->subgoal_work_per_cell > 0 && (int64_t)cells >= PF_PLANNER_AUTO_MIN_CELLS &&
        pf_subgoal_supports(g)) {
        /* The subgoal graph while it is built (kept only when its
         * hierarchy is): a subgoal index a cell, and the subgoals, which
         * sit at the corners of blocked cells, with their sweeps and
         * edges. Measured, not a bound, like the agents' below: 413 bytes
         * a blocked cell on random512-10-0, the densest graph of the
         * shared maps (41 a cell), 25 on a 2-wide maze; its hierarchy
         * 2-6 bytes a cell more (4.7 on a 2-wide maze, 5.6 on 8room_000,
         * 9.1 on rooms8 with the bound raised to 512). */
        uint64_t blocked = cells - (uint64_t)pf_grid_walkable_count(g);
        uint64_t graph = blocked * SUBGOAL_BLOCKED_BYTES;
        n += cells * sizeof(int32_t) +
             (graph < cells * SUBGOAL_CELL_BYTES ? graph : cells * SUBGOAL_CELL_BYTES);
        blocks += 16;
    }
    n += blocks * BLOCK_SLACK + (n / MAPPED_MIN + 1) * PAGE_SLACK;
    *out = n > SIZE_MAX ? SIZE_MAX : (size_t)n;
    return PF_OK;
}

size_t pf_mem_session_estimate(uint64_t cells) {
    uint64_t n = cells * 8 + (64u << 10);
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

size_t pf_mem_agent_estimate(uint64_t cells, bool hierarchy) {
    uint64_t n = cells * 4 + (64u << 10);
    /* Measured, not a bound (the agent grid does not exist yet): a
     * 2047x2047 maze's hierarchy holds 45 bytes a cell. */
    if (hierarchy) n += cells * 64 + (1u << 20);
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

const char *pf_mem_kind_name(pf_mem_kind k) {
    static const char *const names[PF_MEM_COUNT] = {"maps",   "caches", "sessions", "streams",
                                                    "bodies", "crowds", "scratch",  "answers"};
    return k >= 0 && k < PF_MEM_COUNT ? names[k] : "other";
}
