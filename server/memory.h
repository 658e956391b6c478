/* memory.h -- the process-wide memory budget (--max-memory).
 *
 * Every limit of a request is per request; nothing else bounded the whole
 * process (max_maps x max_map_cells allows hundreds of GB). This module
 * keeps one budget for the server and a count, by kind, of what the
 * server holds: maps (planners: grid, jps tables, landmarks, HPA* hierarchy,
 * per agent size grids and hierarchies, and their change logs), path and
 * flow field caches, D* Lite sessions, WebSocket stream
 * buffers and request bodies being received.
 *
 * What a client asks the server to keep is charged before it is built: an
 * upload by an estimate from its size (pf_mem_map_estimate, an upper bound
 * of what pf_planner_create holds), then the actual size once built; a
 * PATCH by the size of the version it copies; a session by its search's
 * size for the map; the agent data a query for a new agent size builds on
 * a version by pf_mem_agent_estimate (registry.h: pf_mapver_reserve_agent). A charge that would
 * pass the budget is refused, and the request is answered 507 insufficient_storage with a sentence
 * saying how much is left; transient holdings (a body, a stream's buffers) are refused with 503 +
 * Retry-After or close 1013; a cache entry that does not fit is simply not cached. So the process
 * stays within its budget (plus what libraries and allocator slack hold) instead of meeting the
 * kernel's OOM killer.
 *
 * The budget: --max-memory bytes, or 0 for three quarters of the memory
 * the process may use (its cgroup's memory.max when set, else the
 * machine's RAM).
 *
 * Thread-safe: every function from any thread; charges are atomic adds, a
 * refused charge changes nothing.
 */
#ifndef PF_SERVER_MEMORY_H
#define PF_SERVER_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "planner.h"
#include "status.h"

typedef enum pf_mem_kind {
    PF_MEM_MAPS = 0, /* planners and their change logs */
    PF_MEM_CACHES,   /* path and flow field cache entries */
    PF_MEM_SESSIONS, /* D* Lite sessions */
    PF_MEM_STREAMS,  /* WebSocket stream buffers */
    PF_MEM_BODIES,   /* request bodies being received */
    PF_MEM_CROWDS,   /* crowds: their mesh copies and agents */
    PF_MEM_SCRATCH,  /* search engines requests hold between slices (a paused flow field),
                        the graph kind's pooled search contexts */
    PF_MEM_ANSWERS,  /* answer bodies queued for HTTP clients that have not read them yet */
    PF_MEM_COUNT
} pf_mem_kind;

typedef struct pf_mem pf_mem;

/* budget_bytes 0: the default above. NULL on ENOMEM. */
pf_mem *pf_mem_create(uint64_t budget_bytes);
/* NULL is a no-op. */
void pf_mem_destroy(pf_mem *m);

/* The budget in effect. */
uint64_t pf_mem_budget(const pf_mem *m);
/* What is charged now: in all, and of one kind. */
uint64_t pf_mem_used(const pf_mem *m);
uint64_t pf_mem_used_by(const pf_mem *m, pf_mem_kind k);
/* Requests refused since the start, in all. */
uint64_t pf_mem_refused(const pf_mem *m);

/* Charges n bytes of kind k if the total stays within the budget; false
 * (nothing charged, the refusal counted) otherwise. m NULL: always true. */
bool pf_mem_try_charge(pf_mem *m, pf_mem_kind k, size_t n);
/* Charges n bytes whatever the total (memory already held, or growth the
 * holder cannot refuse: a search's). m NULL: a no-op. */
void pf_mem_charge(pf_mem *m, pf_mem_kind k, size_t n);
/* Gives n bytes of kind k back. m NULL: a no-op. */
void pf_mem_uncharge(pf_mem *m, pf_mem_kind k, size_t n);

/* An upper bound of what pf_planner_create(g, po) holds, as the allocator
 * holds it: the grid (pf_grid_memory), jps (pf_jps_size: its jump bits and
 * the tables when they fit po->jps_table_bytes), the landmarks when po
 * asks for them (po->landmark_bytes, their open-cell bits and their
 * dead-end data, PF_DEADENDS_CELL_BYTES a cell), the HPA* hierarchy
 * (pf_hpa_size: counted on g from its region labels and border scans,
 * exact to the byte), fixed-size structs (64 KiB), and the allocator's
 * overhead on those blocks (31 bytes a block, a 4 KiB page per mapped
 * 128 KiB, 2 MiB of alignment for a table of 2 MiB or more). O(cells)
 * time (po->stop polled: PF_ECANCELED), scratch of one cluster
 * (PF_ENOMEM). A 2048x2048 maze of corridor 1: 557 MB for the 419 MB it
 * holds (the landmarks it is allowed but does not build: 117 MB). */
pf_status pf_mem_map_estimate(const pf_grid *g, const pf_planner_opts *po, size_t *out);

/* What a new D* Lite session may hold after its first plan on a map of
 * `cells` cells: 8 bytes a cell (a search over a whole 2047x2047 maze holds
 * 4 a cell; the version's cuts, built by the first session plan, about 13
 * a cell more, are charged to the map when built). */
size_t pf_mem_session_estimate(uint64_t cells);

/* What agent data (core/agents.h) built on first use for one agent size
 * on a map of `cells` cells may hold: its clearance table and agent grid
 * (at most 4 bytes a cell) and, with `hierarchy`, the grid's HPA*
 * hierarchy (64 bytes a cell: measured on mazes, not a bound, as the agent
 * grid is not built yet). */
size_t pf_mem_agent_estimate(uint64_t cells, bool hierarchy);

/* The name of a kind, for /v1/info and /metrics ("maps", ...). */
const char *pf_mem_kind_name(pf_mem_kind k);

#endif
