/* maps_internal.h -- the one interface behind maps.h: a backend per kind
 * of store, and what maps.c shares with them. Included by maps.c,
 * maps_local.c (memory, --data-dir) and maps_shared.c (--store) only. */
#ifndef PF_SERVER_MAPS_INTERNAL_H
#define PF_SERVER_MAPS_INTERNAL_H

#include <stdatomic.h>
#include <uv.h>

#include "maps.h"
#include "store.h"
#include "store_guard.h"

typedef struct pf_fleet pf_fleet; /* maps_shared.c's state */

/* A store. Each entry does what the maps.h function of the same name says
 * for its store; maps.c calls them and never looks at the store itself. */
typedef struct pf_maps_backend {
    const char *kind; /* "memory", "data-dir", "redis" */
    pf_status (*publish)(pf_maps *m, pf_mapver *mv, const pf_maps_change *c, pf_maps_outcome *o,
                         pf_proto_error *e);
    /* Makes mv (cur with a PATCH, `body` as sent) the next version of its
     * id once the store has it. Takes mv's reference (the caller keeps one
     * of its own for the answer; mv->version is the new version on
     * success). PF_ECANCELED: another change came first, start over from
     * the current version. */
    pf_status (*swap)(pf_maps *m, pf_mapver *cur, pf_mapver *mv, const char *body, size_t len,
                      const pf_maps_change *c, pf_proto_error *e);
    pf_status (*remove)(pf_maps *m, const char *id, const pf_precond *cond, pf_proto_error *e);
    pf_status (*list)(pf_maps *m, pf_maps_listing *out, pf_proto_error *e);
    /* NULL when the registry holds every map there is. */
    pf_status (*load)(pf_maps *m, const char *id, pf_proto_error *e);
    pf_status (*add)(pf_maps *m, const char *id, pf_grid *g);
    void (*close)(pf_maps *m);
} pf_maps_backend;

struct pf_maps {
    pf_maps_deps d;
    pf_grid_limits limits;
    pf_nav_limits nav_limits;
    pf_nav_runner runner; /* the pool's (navrun.h), or none: tiles on the caller */
    const pf_maps_backend *be;
    uv_mutex_t mu;       /* memory, --data-dir: one change (disk + registry) at a time */
    pf_store *dir;       /* --data-dir, or NULL */
    pf_fleet *fleet;     /* --store, or NULL */
    atomic_bool loading; /* the stored maps are still loading (pf_maps_set_loading) */
};

extern const pf_maps_backend pf__maps_memory;
extern const pf_maps_backend pf__maps_dir;
extern const pf_maps_backend pf__maps_redis;

/* maps_local.c: --data-dir's directory, opened (its maps are loaded by
 * pf__maps_load_dir, on the server's loader thread). */
pf_status pf__maps_open_dir(pf_maps *m, const char *dir, char *err, size_t errlen);
/* maps_local.c: every map of the directory published at its stored
 * version; returns how many. */
size_t pf__maps_load_dir(pf_maps *m);

/* maps_shared.c: --store's Redis (the follower starts). */
pf_status pf__maps_open_redis(pf_maps *m, const char *url, char *err, size_t errlen);
bool pf__maps_redis_ready(const pf_maps *m, char *why, size_t n);
const char *pf__maps_redis_url(const pf_maps *m);
void pf__maps_redis_write_json(const pf_maps *m, pf_jsonw *w);
void pf__maps_redis_stats(const pf_maps *m, pf_sguard_stats *out);
/* maps_shared.c: the calling thread starts (begin) and ends (end) one
 * change: every store round trip between them shares one deadline,
 * --store-timeout-ms after begin. No-ops without --store; a begin inside
 * a change keeps its deadline. */
void pf__maps_write_begin(pf_maps *m);
void pf__maps_write_end(pf_maps *m);

/* maps.c, for the backends. */

/* The next version of cur with u's cells and doors: checked against cur
 * (off_map naming cells[i], invalid_value naming doors[i].id), applied
 * (pf_planner_apply) within deadline_ns (clock.h; 0: never, as for a stored
 * change replayed; past it PF_ECANCELED and pf_maps_build_too_long's
 * error), wrapped with its change log. *out has one reference. */
pf_status pf__maps_apply(pf_maps *m, const pf_mapver *cur, const pf_update *u, uint64_t deadline_ns,
                         pf_mapver **out, pf_proto_error *e);
/* The next version of navmesh version cur with p's obstacles and areas
 * (errors name the fields as pf_maps_patch_nav says). *out has one
 * reference. */
pf_status pf__maps_apply_nav(pf_maps *m, const pf_mapver *cur, const pf_nav_patch *p,
                             pf_mapver **out, pf_proto_error *e);
/* A stored PATCH body (as sent) applied to cur, whichever its kind: the
 * log entries a shared store replays. */
pf_status pf__maps_apply_body(pf_maps *m, const pf_mapver *cur, const char *body, size_t len,
                              pf_mapver **out, pf_proto_error *e);
/* What the stores keep of a navmesh version: its envelope (the upload's
 * source members, then the version's obstacles and area states), malloc'd
 * (free()). NULL on ENOMEM. */
char *pf__maps_nav_envelope(const pf_mapver *mv, size_t *len);
/* Builds a navmesh version from a stored envelope (as an upload of it);
 * hash NULL: none. */
pf_status pf__maps_build_envelope(pf_maps *m, const char *id, const char *bytes, size_t len,
                                  const uint8_t hash[32], pf_mapver **out, pf_proto_error *e);
/* Ends the sessions and crowds of map id (all when keep_lineage is 0, else
 * those of another lineage). */
void pf__maps_end_users(pf_maps *m, const char *id, uint64_t keep_lineage);

/* u applied to g in place, as pf_planner_apply applies it to its copy
 * (cells in order, then doors): replaying a stored log. PF_ERANGE,
 * PF_EINVAL for a cell or door g does not have. */
pf_status pf__maps_apply_grid(pf_grid *g, const pf_update *u);
/* map_not_found for id; returns PF_ERANGE. */
pf_status pf__maps_no_map(pf_proto_error *e, const char *id);
/* precondition_failed for id at version/lineage (exists false: none);
 * returns PF_EINVAL. */
pf_status pf__maps_precondition(pf_proto_error *e, const char *id, bool exists, uint64_t version,
                                uint64_t lineage);

#endif
