/* maps.h -- every change to the server's maps and every read of its store,
 * whichever store it is, and the building of a map version.
 *
 * Three stores sit behind this one interface (maps_internal.h's backend
 * table); routes never know which:
 *   memory      (no flag) the registry is all there is;
 *   --data-dir  the registry is the truth and every change is written to
 *               the directory first, under one lock, so disk and memory
 *               agree (maps_local.c, store.h): a write that fails changes
 *               nothing, and when publishing fails after the write the disk
 *               is put back;
 *   --store     a shared Redis is the truth (maps_shared.c,
 *               store_redis.h): a change is acknowledged once Redis has it,
 *               with the version Redis assigned; the registry holds copies
 *               of the maps this instance served lately, loaded on first
 *               use, kept current by following the store's change log, and
 *               dropped after --map-idle-ttl seconds without use (never
 *               while a session lives on them).
 * A replaced or deleted map ends its sessions and crowds (a PATCHed map's
 * live on).
 *
 * Map kinds: a version is a grid (mv->planner) or a navmesh (mv->nav, with
 * the upload it came from in mv->navsrc). Every store keeps both: a grid
 * as store.h's image, a navmesh as its envelope (nav_json.h: the upload's
 * source members and the version's obstacles and area states), and a
 * shared store logs each kind's PATCH bodies as sent.
 *
 * Errors come back in a pf_proto_error ready to answer with
 * (pf_req_answer_perror): map_not_found, precondition_failed (412),
 * limit_exceeded, storage_failed, store_unavailable (503), out_of_memory,
 * and a PATCH's off_map / invalid_value naming the field.
 *
 * Threads: every call that may reach the store (publish, patch, remove,
 * list, load, add) runs on a worker, never on an I/O thread; the others
 * are quick. Thread-safe.
 */
#ifndef PF_SERVER_MAPS_H
#define PF_SERVER_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "crowd.h"
#include "errors.h"
#include "grid.h"
#include "memory.h"
#include "nav_json.h"
#include "navrun.h"
#include "planner.h"
#include "pool.h"
#include "precond.h"
#include "registry.h"
#include "session.h"
#include "session_json.h"
#include "status.h"
#include "store.h"

typedef struct pf_maps pf_maps;

/* Borrowed for the module's life. */
typedef struct pf_maps_deps {
    pf_registry *registry;
    pf_sessions *sessions;
    const pf_config *cfg; /* cluster_size, landmark_bytes, cache_entries, cache_bytes,
                           * flowfield_cache_entries, flowfield_cache_bytes, max_maps,
                           * max_map_cells, max_map_side, data_dir, store, store_timeout_ms,
                           * map_idle_ttl_s, workers, change_log_cells, nav_* */
    pf_mem *mem;          /* the process budget maps are charged to (memory.h) */
    pf_navrun *navrun;    /* navmesh tiles on the pool (NULL: on the caller) */
    pf_crowds *crowds;    /* ended with their map (NULL: none) */
} pf_maps_deps;

/* PF_ENOMEM. Maps live in memory until pf_maps_open_store. */
pf_status pf_maps_create(const pf_maps_deps *d, pf_maps **out);
/* Stops the store's follower and closes the store. NULL is a no-op. */
void pf_maps_destroy(pf_maps *m);

/* The grid limits of an upload (--max-map-cells, --max-map-side). */
const pf_grid_limits *pf_maps_limits(const pf_maps *m);
/* The navmesh limits (--nav-*), and the pool's tile runner. */
const pf_nav_limits *pf_maps_nav_limits(const pf_maps *m);
const pf_nav_runner *pf_maps_nav_runner(const pf_maps *m);

/* Opens the store the configuration names: --data-dir (creates the
 * directory; pf_maps_load_stored publishes its maps) or
 * --store (connects to Redis, starts following its change log; an
 * unreachable Redis is reported on stderr and retried: the server starts,
 * /readyz says 503 until it answers). Neither: memory, nothing to do.
 * PF_EINVAL with a sentence in err when the store cannot be used (both
 * given, a bad URL, a directory that is not writable). Call once, before
 * serving. */
pf_status pf_maps_open_store(pf_maps *m, char *err, size_t errlen);

/* Publishes every map of --data-dir at its stored version (a map of that
 * id already in the registry is replaced by it), moving damaged files
 * aside (store.h). Returns how many; 0 without a data directory (a shared
 * store loads maps on first use). Runs on the server's loader thread while
 * it already listens, marked loading around it. */
size_t pf_maps_load_stored(pf_maps *m);
/* What that load found (store.h); false without a data directory. */
bool pf_maps_store_report(const pf_maps *m, pf_store_report *out);
/* Loading: while true, http.c answers every route that reads or changes
 * maps 503 not_ready and /readyz says so. Any thread. */
void pf_maps_set_loading(pf_maps *m, bool loading);
bool pf_maps_loading(const pf_maps *m);

/* "memory", "data-dir" or "redis". */
const char *pf_maps_store_kind(const pf_maps *m);
/* The data directory, or NULL. */
const char *pf_maps_store_dir(const pf_maps *m);
/* The shared store's URL with its password hidden, or NULL. */
const char *pf_maps_store_url(const pf_maps *m);
/* Whether the store can be used now: always for memory and --data-dir;
 * for --store, whether Redis answered the follower within the last
 * PF_MAPS_STALE_MS (why gets a sentence when not). */
#define PF_MAPS_STALE_MS 3000
bool pf_maps_store_ready(const pf_maps *m, char *why, size_t n);
/* --store only (false otherwise): whether this instance acknowledges
 * changes to the store and why not, what it found of the store's
 * durability, the data losses it saw (store_guard.h), as a JSON object
 * value for /readyz and /v1/info; and the same as counts for /metrics. */
bool pf_maps_store_write_trust(const pf_maps *m, pf_jsonw *w);
struct pf_sguard_stats; /* store_guard.h */
bool pf_maps_store_trust(const pf_maps *m, struct pf_sguard_stats *out);

/* An unpublished version of map id around planner (taken, also on
 * failure), with this server's path and flow field cache sizes; build_us is what making
 * planner took, hash the upload's SHA-256 (NULL: none). The caller holds
 * the one reference. NULL on ENOMEM. */
pf_mapver *pf_maps_wrap(pf_maps *m, const char *id, pf_planner *planner, uint64_t build_us,
                        const uint8_t hash[32]);

/* Prepares g (taken, also on failure) for searches, HPA* hierarchy and jps
 * landmarks included (this is the slow part of an upload: run it on a
 * worker), and wraps it as pf_maps_wrap does; build_us counts from t0_ns
 * (clock.h), when the upload's parse began. The memory budget is charged
 * first with an upper bound for g's size (pf_mem_map_estimate), then with
 * what the planner holds. The build stops at deadline_ns (clock.h; 0:
 * never), polled inside its long phases (core/build_stop.h): PF_ECANCELED
 * then, with e saying 413 limit_exceeded on limits.grid_build_ms
 * (pf_maps_build_too_long). Requests pass their --grid-build-ms deadline
 * (pf_maps_build_deadline); a stored map being loaded passes none, since
 * refusing it would lose it. PF_ENOMEM (e, when not NULL, says
 * insufficient_storage when the budget cannot hold the map, out_of_memory
 * otherwise), or the status of pf_planner_create (e says so too). */
pf_status pf_maps_build(pf_maps *m, const char *id, pf_grid *g, const uint8_t hash[32],
                        uint64_t t0_ns, uint64_t deadline_ns, pf_mapver **out, pf_proto_error *e);

/* The deadline of a grid build (an upload, a generated maze, a PATCH's
 * repair) that began at t0_ns: t0_ns plus --grid-build-ms. */
uint64_t pf_maps_build_deadline(const pf_maps *m, uint64_t t0_ns);
/* Sets e to the 413 limit_exceeded of a grid build past its deadline,
 * field "limits.grid_build_ms", `what` naming the work ("Building the
 * map"); returns PF_ECANCELED. */
pf_status pf_maps_build_too_long(const pf_maps *m, pf_proto_error *e, const char *what);

/* Builds a navmesh map from u (borrowed) with its tiles on the pool, puts
 * u's initial obstacles and area states on it, and wraps the version (its
 * source for the store made from u). The slow part of a navmesh upload:
 * run it on a worker. On error e names the field (an upload setting, a
 * limit such as "limits.nav_max_voxels", an obstacle) and says why. */
pf_status pf_maps_build_nav(pf_maps *m, const char *id, const pf_nav_upload *u,
                            const uint8_t hash[32], uint64_t t0_ns, pf_mapver **out,
                            pf_proto_error *e);

/* The version a POST of the upload with SHA-256 `hash` finds already there
 * (a reference), so the upload need not be built again; NULL when there is
 * none, or when only the shared store can tell (it then says so at
 * publish). */
pf_mapver *pf_maps_find_upload(pf_maps *m, const char *id, const uint8_t hash[32]);

/* How a change was asked for. */
typedef struct pf_maps_change {
    const pf_precond *cond; /* If-Match / If-None-Match; NULL: none */
    bool post;              /* a POST: the map already there with the same hash is kept */
} pf_maps_change;

/* What a publication did. */
typedef struct pf_maps_outcome {
    pf_mapver *current; /* a reference for the caller: the version to answer with */
    bool created;       /* the id was new */
    bool unchanged;     /* a POST found its map already there (current is that one) */
} pf_maps_outcome;

/* Publishes mv (an upload: a new lineage, taken with its reference, also
 * on failure) as the next version of its id, once the store has it.
 * Errors: precondition_failed, limit_exceeded (the server, or the store,
 * holds max_maps), storage_failed, store_unavailable, out_of_memory;
 * nothing changed then. */
pf_status pf_maps_publish(pf_maps *m, pf_mapver *mv, const pf_maps_change *c, pf_maps_outcome *o,
                          pf_proto_error *e);

/* Makes the next version of map id with u's cells and doors (checked
 * against the current version: off_map and invalid_value name the field),
 * once the store has it (a shared store also logs `body`, the PATCH as
 * sent, for the other instances). When another change comes first, it
 * starts over on the newer version, so concurrent PATCHes apply one after
 * the other and none is lost (409 conflict after 16 tries). *out gets a
 * reference to the new version. Errors as pf_maps_publish, and
 * map_not_found. */
pf_status pf_maps_patch(pf_maps *m, const char *id, const pf_update *u, const char *body,
                        size_t body_len, const pf_maps_change *c, pf_mapver **out,
                        pf_proto_error *e);

/* pf_maps_patch for a navmesh map: p's obstacles and areas (checked
 * against the current version; errors name "obstacles[i]...",
 * "remove_obstacles[i]", "areas[i]..."), the touched tiles rebuilt on the
 * pool. conflict (409) also when the map is no longer a navmesh (a PUT of
 * a grid came first); a grid PATCH of a navmesh map is that too. */
pf_status pf_maps_patch_nav(pf_maps *m, const char *id, const pf_nav_patch *p, const char *body,
                            size_t body_len, const pf_maps_change *c, pf_mapver **out,
                            pf_proto_error *e);

/* Removes map id everywhere (its file, or the shared store and with it
 * every instance's copy) and ends its sessions. map_not_found,
 * precondition_failed, storage_failed, store_unavailable. */
pf_status pf_maps_remove(pf_maps *m, const char *id, const pf_precond *cond, pf_proto_error *e);

/* Every map of the store, sorted by id. */
typedef struct pf_maps_item {
    char id[PF_MAP_ID_MAX + 1];
    uint64_t version, lineage;
    pf_mapver *mv;    /* a reference when this instance holds that version, else NULL */
    const char *info; /* without mv: what the store lists (JSON members), owned by the listing */
} pf_maps_item;

typedef struct pf_maps_listing {
    pf_maps_item *items;
    size_t n;
    void *store_; /* what the strings point into, freed with store_free_ */
    void (*store_free_)(void *);
} pf_maps_listing;

/* out_of_memory, store_unavailable, storage_failed. */
pf_status pf_maps_list(pf_maps *m, pf_maps_listing *out, pf_proto_error *e);
void pf_maps_listing_free(pf_maps_listing *l);

/* Whether a request for map id must load it first: true only with a
 * shared store, for a map this instance does not hold. Counts as a use of
 * the map when it is held (the idle clock starts again). */
bool pf_maps_needs_load(pf_maps *m, const char *id);

/* Loads map id from the shared store into the registry (a worker's job:
 * it builds the map). PF_OK once held (also when it already was);
 * map_not_found when the store has no such map; store errors. Loads of one
 * id at once wait for the first. */
pf_status pf_maps_load(pf_maps *m, const char *id, pf_proto_error *e);

/* Builds g (taken) and makes it map id at start (the demo maps): in the
 * registry, or with a shared store, in the store unless it has that map
 * already. */
pf_status pf_maps_add(pf_maps *m, const char *id, pf_grid *g);
/* pf_maps_add unless the registry already holds map id (then g is freed
 * and *added is false): the demo maps after the stored ones, so a stored
 * map of that name keeps its contents and version. */
pf_status pf_maps_add_if_absent(pf_maps *m, const char *id, pf_grid *g, bool *added);

#endif
