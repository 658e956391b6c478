/* registry.h -- the maps the server holds, by id, each an immutable,
 * reference-counted version.
 *
 * A pf_mapver is one version of one map: what kind of map it is (kind.h:
 * a grid, a navmesh, ...), the kind's world (its grid and planner, its
 * navmesh, ...) behind pf_mapver_world, its version number and its path
 * cache.
 * It never changes once published. Every request that uses a map takes a
 * reference (pf_registry_get) and drops it when done (pf_mapver_release), so
 * a DELETE or a replacing PUT never frees a map under a running search: the
 * old version lives until its last reader lets go.
 *
 * Versions count per id: 1 when created, +1 on every replace or PATCH.
 * Deleting a map forgets its count, so a map created again starts at 1.
 *
 * Lineage: an upload (create or replace) starts a new lineage; a PATCH
 * (pf_registry_swap) continues the lineage of the version it changes.
 * Sessions live on one lineage: a replaced or deleted map ends them. Along a
 * lineage every version keeps a bounded log of the cells each of the last
 * PF_MAPVER_LOG_VERSIONS PATCHes changed (each diff lists a cell once, at
 * most max_cells cells in all: --change-log-cells), so a session several
 * versions behind can rebase incrementally; one further behind, or behind a
 * PATCH too big for the log, is rebuilt from the current version.
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
#include "errors.h"
#include "grid.h"
#include "kind.h"
#include "memory.h"
#include "router.h"
#include "status.h"

#define PF_MAPVER_LOG_VERSIONS 64
/* The default of --change-log-cells: 8 MiB of cells per lineage. */
#define PF_MAPVER_LOG_CELLS (1u << 20)

/* The cells one PATCH changed (what pf_planner_apply reported): the diff from
 * version - 1 to version. Immutable and shared by the logs of later
 * versions (reference counted). */
typedef struct pf_mapdiff {
    atomic_int refs;
    uint64_t version;
    pf_point *cells; /* owned */
    size_t n;
    pf_mem *mem; /* charged n cells (PF_MEM_MAPS) while it lives, or NULL */
} pf_mapdiff;

typedef struct pf_mapver {
    atomic_int refs;
    char id[PF_MAP_ID_MAX + 1];
    uint64_t version;         /* 0 until published; the registry numbers it */
    const pf_kind_ops *kind;  /* what the map is: every operation on it goes through it */
    const pf_kind_env *env;   /* the server's environment it was built in, or NULL */
    void *world;              /* the kind's (pf_mapver_world); freed by kind->world_free */
    pf_cache *cache;          /* owned */
    pf_cache *fields;         /* owned: answered flow fields (PF_KIND_FLOWFIELDS); NULL = none */
    uint64_t build_us;        /* parse + preprocessing */
    uint8_t content_hash[32]; /* SHA-256 of the upload, for POST /v1/maps */
    uint64_t lineage;         /* set by publish (new) or swap (kept), then constant */
    pf_mapdiff *log[PF_MAPVER_LOG_VERSIONS]; /* oldest first, the newest is this version's */
    size_t nlog;
    _Atomic uint64_t used_ns; /* the last pf_registry_get (clock.h), for idle copies */
    pf_mem *mem;              /* the process budget, or NULL (pf_mapver_charge) */
    _Atomic size_t charged;   /* bytes of PF_MEM_MAPS charged for the world */
} pf_mapver;

/* Makes an unpublished version of map id, of kind `kind` built in env
 * (NULL: outside a server), holding one reference (the caller's). Takes
 * world (also on failure: kind->world_free). A path cache of cache_entries
 * / cache_bytes. NULL on ENOMEM. */
pf_mapver *pf_mapver_create(const char *id, const pf_kind_ops *kind, const pf_kind_env *env,
                            void *world, size_t cache_entries, size_t cache_bytes,
                            uint64_t build_us, const uint8_t hash[32]);
/* The kind's world of mv: only mv->kind's files read it. */
static inline void *pf_mapver_world(const pf_mapver *mv) { return mv->world; }
/* The environment mv was built in (NULL outside a server). */
static inline const pf_kind_env *pf_mapver_env(const pf_mapver *mv) { return mv->env; }
void pf_mapver_retain(pf_mapver *mv);
/* Charges mv to the process budget mem: `world_bytes` of its world now
 * (already reserved by the caller, or held), its caches' entries (paths
 * and flow fields) and its change log as they come; all given back when mv
 * is freed. Call once, before mv is published. */
void pf_mapver_charge(pf_mapver *mv, pf_mem *mem, size_t world_bytes);
/* The charge made what the world holds now (kind->world_memory: a grid's
 * planner builds its cuts and agent sizes on first use). Thread-safe. */
void pf_mapver_recharge(pf_mapver *mv);
/* Drops a reference; the last one frees the version. NULL is a no-op. */
void pf_mapver_release(pf_mapver *mv);
/* Empties mv's caches (answered paths and flow fields): a newer version
 * replaced it, so they must not be served again, and the memory goes back
 * while sessions still hold mv. Thread-safe (the caches lock). */
void pf_mapver_drop_caches(pf_mapver *mv);
/* Makes next's change log: the newest diffs of prev's log (shared) that fit
 * PF_MAPVER_LOG_VERSIONS - 1 versions and, with the new one, max_cells
 * cells, then the diff `changed[0..n)` (taken, also on failure; each cell
 * once, as pf_planner_apply lists them) numbered prev->version + 1, the
 * version pf_registry_swap(prev, next) gives next. A diff of more than
 * max_cells cells is not kept: next's log is empty then. PF_ENOMEM. Call
 * before next is published. */
pf_status pf_mapver_set_log(pf_mapver *next, const pf_mapver *prev, pf_point *changed, size_t n,
                            size_t max_cells);

/* The cells changed between version `since` and cur->version of cur's
 * lineage, each once, into *out (free() it; NULL when
 * *n is 0). PF_ELIMIT when cur's log does not reach back to since + 1 (the
 * caller rebuilds instead), PF_ENOMEM. */
pf_status pf_mapver_changes_since(const pf_mapver *cur, uint64_t since, pf_point **out, size_t *n);

typedef struct pf_registry pf_registry;

/* NULL on ENOMEM. */
pf_registry *pf_registry_create(size_t max_maps);
/* Drops the registry's references. NULL is a no-op. */
void pf_registry_destroy(pf_registry *r);

/* The current version of id with a reference for the caller, or NULL. */
pf_mapver *pf_registry_get(pf_registry *r, const char *id);

/* pf_registry_get without counting as a use (the store's follower, the
 * idle sweep). */
pf_mapver *pf_registry_peek(pf_registry *r, const char *id);

/* The number the registry gives the version that replaces or patches cur:
 * cur->version + 1, or 1 for a new id (cur NULL). */
uint64_t pf_mapver_next_version(const pf_mapver *cur);

/* Makes mv the current version of mv->id: numbers it (1, or the replaced
 * version + 1), takes over the caller's reference, releases the one on the
 * version it replaces. *created tells whether the id was new. PF_ELIMIT when
 * the id is new and the registry is full, PF_ENOMEM (mv is not taken
 * then). */
pf_status pf_registry_publish(pf_registry *r, pf_mapver *mv, bool *created);

/* pf_registry_publish for a map read back from the data directory: a new
 * id starts at `version` (the one it was stored with, >= 1) instead of 1,
 * so the numbers clients saw stay meaningful across a restart; an id
 * already held is replaced as usual (its version + 1). */
pf_status pf_registry_restore(pf_registry *r, pf_mapver *mv, uint64_t version, bool *created);

/* Publishes mv (a PATCH of `expected`) as the current version of its id,
 * only if `expected` is still the current one: mv gets version
 * expected->version + 1 and expected's lineage, the registry takes over the
 * caller's reference on mv and drops its own on expected. PF_ECANCELED when
 * the map was replaced, patched or deleted meanwhile (mv is not taken; the
 * caller starts over from the new current version). */
pf_status pf_registry_swap(pf_registry *r, pf_mapver *expected, pf_mapver *mv);

/* Installs mv, numbered by a shared store (its version and lineage are set
 * already), as the current version of its id when it is newer than the
 * current one: a greater lineage, or the same lineage and a greater
 * version. Takes over the caller's reference and releases the replaced
 * version's. PF_ECANCELED when it is not newer, PF_ELIMIT, PF_ENOMEM (mv
 * is not taken then). *created as pf_registry_publish. */
pf_status pf_registry_install(pf_registry *r, pf_mapver *mv, bool *created);

/* Removes mv's id if mv is still its current version; false otherwise. */
bool pf_registry_remove_version(pf_registry *r, const pf_mapver *mv);

/* Removes mv's id if mv is still its current version and was last used
 * (pf_registry_get) before cutoff_ns; false otherwise. Checked under the
 * table's lock, so a request that has just found the map keeps it. */
bool pf_registry_remove_idle(pf_registry *r, const pf_mapver *mv, uint64_t cutoff_ns);

/* Removes id; false when there was no such map. */
bool pf_registry_remove(pf_registry *r, const char *id);

size_t pf_registry_count(pf_registry *r);

/* References to every current version, sorted by id, in *out (free() the
 * array after releasing each). PF_ENOMEM. */
pf_status pf_registry_list(pf_registry *r, pf_mapver ***out, size_t *n);

#endif
