/* agents.h -- the per-version data for agents larger than one cell: one
 * clearance table and, per size class, the agent grid and its own HPA*
 * hierarchy (the "hierarchy per size class" variant of HAA*: Harabor &
 * Botea, "Hierarchical Path Planning for Multi-size Agents in
 * Heterogeneous Environments", 2008). clearance.h has the footprint rule.
 *
 * Everything is built on first use, so a map that only ever serves
 * one-cell agents pays nothing: the clearance table (one byte a cell,
 * O(cells)) when the first size > 1 is asked for, the agent grid of a size
 * (two bytes a cell, O(cells log n)) when that size is, and its hierarchy
 * when hpa runs for it (as long as pf_hpa_build on the map). A map change
 * (pf_agents_repair) repairs whatever the old version had built, locally:
 * the clearance table and the agent grids around the changed cells, the
 * hierarchies with pf_hpa_repair on exactly the agent-grid cells that
 * changed.
 *
 * Thread safety: a pf_agents belongs to one planner and is shared
 * read-only like it. The lazy builds are published with atomic
 * compare-and-swap: two threads asking for the same new piece at once may
 * both build it, one copy is kept, and every pointer handed out stays valid
 * until pf_agents_destroy. No locks, no waiting.
 */
#ifndef PF_AGENTS_H
#define PF_AGENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "build_stop.h"
#include "clearance.h"
#include "grid.h"
#include "hpa.h"
#include "status.h"

typedef struct pf_agents pf_agents;

/* Creates the (empty) agent data of `base` (borrowed: it must outlive the
 * pf_agents, as a planner's grid does) for sizes 2..max_size (1..
 * PF_AGENT_SIZE_MAX, else PF_EINVAL); hierarchies use `hpa` params (NULL:
 * no hierarchies, pf_agents_hpa answers PF_EUNSUPPORTED). PF_ENOMEM. */
pf_status pf_agents_create(const pf_grid *base, int32_t max_size, const pf_hpa_params *hpa,
                           pf_agents **out);
void pf_agents_destroy(pf_agents *a); /* NULL is a no-op */

int32_t pf_agents_max_size(const pf_agents *a);

/* Builds on first use below take a stop (build_stop.h; NULL: never): the
 * caller's, e.g. the deadline of the query that needs the piece. When it
 * says stop the build answers PF_ECANCELED and publishes nothing, so the
 * next caller builds the piece again from the start. */

/* The clearance table, built on first use. PF_ENOMEM, PF_ECANCELED. */
pf_status pf_agents_clearance(const pf_agents *a, pf_build_stop *stop, const pf_clearance **out);

/* The grid an agent of size n moves on (clearance.h), built on first use;
 * for n == 1 the base grid itself. PF_ERANGE for n outside 1..max_size,
 * PF_ENOMEM, PF_ECANCELED. The grid is borrowed from a and read-only. */
pf_status pf_agents_grid(const pf_agents *a, int32_t n, pf_build_stop *stop, const pf_grid **out);

/* The HPA* hierarchy of size n's agent grid (n >= 2), built on first use
 * (pf_hpa_build: tens to hundreds of milliseconds on a 512x512 map).
 * PF_EUNSUPPORTED when a was created without hierarchy params, PF_ERANGE,
 * PF_ELIMIT, PF_ENOMEM, PF_ECANCELED as pf_hpa_build. */
pf_status pf_agents_hpa(const pf_agents *a, int32_t n, pf_build_stop *stop, const pf_hpa **out);

/* Whether size n's agent grid (and with `hpa`, its hierarchy) is built
 * already, so asking for it builds nothing. True for n == 1; false for a
 * size out of range. Any thread. */
bool pf_agents_built(const pf_agents *a, int32_t n, bool hpa);

/* The agent data of `base` (the next version, borrowed as above) made from
 * old's after the cells in changed[0..n) changed (as pf_planner_apply lists
 * them): every piece old had built is repaired locally (see the file
 * comment); a piece whose repair runs out of memory is dropped and built
 * again on first use. PF_ENOMEM only when the new pf_agents itself cannot
 * be made; PF_ECANCELED when stop (build_stop.h; NULL: never) said stop,
 * nothing made. */
pf_status pf_agents_repair(const pf_agents *old, const pf_grid *base, const pf_point *changed,
                           size_t n, pf_build_stop *stop, pf_agents **out);

/* What has been built, for map info and benchmarks. */
typedef struct pf_agents_class_stats {
    int32_t size;
    bool has_hpa;
    uint64_t grid_us, hpa_us; /* build or repair time of the grid and the hierarchy */
    size_t memory_bytes;      /* agent grid plus hierarchy */
} pf_agents_class_stats;

/* Fills out[0..cap) with the classes built so far, smallest size first,
 * and returns how many there are (may exceed cap). */
size_t pf_agents_stats(const pf_agents *a, pf_agents_class_stats *out, size_t cap);

/* Bytes held: clearance, agent grids, hierarchies. */
size_t pf_agents_memory(const pf_agents *a);

#endif
