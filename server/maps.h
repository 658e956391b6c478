/* maps.h -- every change to the server's maps, made on disk and in the
 * registry together, and the building of a map version.
 *
 * With a store (--data-dir), a change is written to disk before the
 * registry changes, under one lock, so disk and memory agree and the
 * version on disk is the one published: a write that fails changes
 * nothing, and when publishing fails after the write the disk is put back.
 * Without a store these are plain registry calls. A replaced or deleted map
 * ends its sessions and crowds (those of a PATCHed map live on).
 *
 * Thread-safe.
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
#include "nav_json.h"
#include "navrun.h"
#include "planner.h"
#include "registry.h"
#include "session.h"
#include "status.h"

typedef struct pf_maps pf_maps;

/* Borrowed for the module's life. */
typedef struct pf_maps_deps {
    pf_registry *registry;
    pf_sessions *sessions;
    const pf_config *cfg; /* cluster_size, landmark_bytes, cache_entries, cache_bytes,
                           * max_maps, max_map_cells, max_map_side, nav_* */
    pf_navrun *navrun;    /* navmesh tiles on the pool */
    pf_crowds *crowds;    /* ended with their map (NULL: none) */
} pf_maps_deps;

/* PF_ENOMEM. */
pf_status pf_maps_create(const pf_maps_deps *d, pf_maps **out);
/* Closes the store. NULL is a no-op. */
void pf_maps_destroy(pf_maps *m);

/* The grid limits of an upload (--max-map-cells, --max-map-side). */
const pf_grid_limits *pf_maps_limits(const pf_maps *m);
/* The navmesh limits (--nav-*), and the pool's tile runner. */
const pf_nav_limits *pf_maps_nav_limits(const pf_maps *m);
const pf_nav_runner *pf_maps_nav_runner(const pf_maps *m);

/* Builds a navmesh map from u (borrowed) with its tiles on the pool, puts
 * u's initial obstacles and area states on it, and wraps the version (its
 * store source made from u). The slow part of a navmesh upload: run it on a
 * worker. On error e names the field (an upload setting, a limit such as
 * "limits.nav_max_voxels", an obstacle) and says why. */
pf_status pf_maps_build_nav(pf_maps *m, const char *id, const pf_nav_upload *u,
                            const uint8_t hash[32], uint64_t t0_ns, pf_mapver **out,
                            pf_proto_error *e);

/* The error a navmesh build or change reported (nav/navmesh.h), as the
 * API's: the field with limits.<flag> for a limit, the sentence. */
void pf_maps_nav_error(pf_proto_error *e, pf_status st, const pf_nav_error *ne);

/* Opens (creates) the store in dir and publishes every map stored there at
 * its stored version; from then on every change is written there before
 * it is published. PF_EINVAL with a sentence in err when the directory
 * cannot be used. Call once, before serving. */
pf_status pf_maps_open_store(pf_maps *m, const char *dir, char *err, size_t errlen);
/* The store's directory, or NULL without one. */
const char *pf_maps_store_dir(const pf_maps *m);

/* An unpublished version of map id around planner (taken, also on
 * failure), with this server's path cache sizes; build_us is what making
 * planner took, hash the upload's SHA-256 (NULL: none). The caller holds
 * the one reference. NULL on ENOMEM. */
pf_mapver *pf_maps_wrap(pf_maps *m, const char *id, pf_planner *planner, uint64_t build_us,
                        const uint8_t hash[32]);

/* Prepares g (taken, also on failure) for searches, HPA* hierarchy and jps
 * landmarks included (this is the slow part of an upload: run it on a
 * worker), and wraps it as pf_maps_wrap does; build_us counts from t0_ns
 * (clock.h), when the upload's parse began. PF_ENOMEM, or the status of
 * pf_planner_create. */
pf_status pf_maps_build(pf_maps *m, const char *id, pf_grid *g, const uint8_t hash[32],
                        uint64_t t0_ns, pf_mapver **out);

/* Publishes mv as the current version of its id (pf_registry_publish),
 * saving it first. The registry takes over one reference of the caller's;
 * the caller must hold another across the call (a DELETE may drop the
 * registry's as soon as mv is visible). A replaced map's sessions end.
 * PF_ELIMIT when the id is new and max_maps are held, PF_EIO (err says
 * why), PF_ENOMEM; mv is not taken then and nothing changed. */
pf_status pf_maps_publish(pf_maps *m, pf_mapver *mv, bool *created, char *err, size_t errlen);

/* Publishes mv, a PATCH of `expected`, if expected is still the current
 * version (pf_registry_swap), saving it first; takes a reference as
 * pf_maps_publish does. PF_ECANCELED when another change came first (the
 * caller starts over), PF_EIO as above. */
pf_status pf_maps_swap(pf_maps *m, pf_mapver *expected, pf_mapver *mv, char *err, size_t errlen);

/* Removes map id, its file first, and ends its sessions. PF_ERANGE when
 * there is no such map, PF_EIO as above. */
pf_status pf_maps_remove(pf_maps *m, const char *id, char *err, size_t errlen);

/* Builds g (taken) and publishes it as map id in the registry only (the
 * demo maps at start). */
pf_status pf_maps_add(pf_maps *m, const char *id, pf_grid *g);

#endif
