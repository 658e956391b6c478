/* registry.h -- the maps the server holds, by id, each an immutable,
 * reference-counted version.
 *
 * A pf_mapver is one version of one map: its planner (grid + search
 * preprocessing + HPA* hierarchy), its version number, and its path cache.
 * It never changes once published. Every request that uses a map takes a
 * reference (pf_registry_get) and drops it when done (pf_mapver_release), so
 * a DELETE or a replacing PUT never frees a map under a running search: the
 * old version lives until its last reader lets go.
 *
 * Versions count per id: 1 when created, +1 on every replace. Deleting a map
 * forgets its count, so a map created again starts at 1.
 *
 * Thread-safe: one mutex guards the table; references are atomic.
 */
#ifndef PF_SERVER_REGISTRY_H
#define PF_SERVER_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "planner.h"
#include "router.h"
#include "status.h"

typedef struct pf_mapver {
    atomic_int refs;
    char id[PF_MAP_ID_MAX + 1];
    uint64_t version;        /* set by pf_registry_publish, then constant */
    pf_planner *planner;     /* owned */
    pf_cache *cache;         /* owned */
    uint64_t build_us;       /* parse + preprocessing */
    uint8_t content_hash[32]; /* SHA-256 of the upload, for POST /v1/maps */
} pf_mapver;

/* Makes an unpublished version holding one reference (the caller's). Takes
 * planner (also on failure). NULL on ENOMEM. */
pf_mapver *pf_mapver_create(const char *id, pf_planner *planner, size_t cache_entries,
                            size_t cache_bytes, uint64_t build_us, const uint8_t hash[32]);
void pf_mapver_retain(pf_mapver *mv);
/* Drops a reference; the last one frees the version. NULL is a no-op. */
void pf_mapver_release(pf_mapver *mv);
/* The algorithm a query without one runs: hpa where the map has a
 * hierarchy, astar otherwise. */
pf_algorithm pf_mapver_default_algorithm(const pf_mapver *mv);

typedef struct pf_registry pf_registry;

/* NULL on ENOMEM. */
pf_registry *pf_registry_create(size_t max_maps);
/* Drops the registry's references. NULL is a no-op. */
void pf_registry_destroy(pf_registry *r);

/* The current version of id with a reference for the caller, or NULL. */
pf_mapver *pf_registry_get(pf_registry *r, const char *id);

/* Makes mv the current version of mv->id: numbers it (1, or the replaced
 * version + 1), takes over the caller's reference, releases the one on the
 * version it replaces. *created tells whether the id was new. PF_ELIMIT when
 * the id is new and the registry is full (mv is not taken then). */
pf_status pf_registry_publish(pf_registry *r, pf_mapver *mv, bool *created);

/* Removes id; false when there was no such map. */
bool pf_registry_remove(pf_registry *r, const char *id);

size_t pf_registry_count(pf_registry *r);

/* References to every current version, sorted by id, in *out (free() the
 * array after releasing each). PF_ENOMEM. */
pf_status pf_registry_list(pf_registry *r, pf_mapver ***out, size_t *n);

#endif
