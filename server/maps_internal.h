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
    pf_status (*add)(pf_maps *m, pf_mapver *mv);
    void (*close)(pf_maps *m);
} pf_maps_backend;

struct pf_maps {
    pf_maps_deps d;
    const pf_kinds *kinds;                  /* d.kinds, or own_kinds */
    pf_kinds *own_kinds;                    /* made here when d.kinds is NULL */
    const char *suffixes[PF_KINDS_MAX + 1]; /* the kinds' data directory files */
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

/* A stored PATCH body (as sent) applied to cur by its kind: the log
 * entries a shared store replays. *out has one reference. */
pf_status pf__maps_apply_body(pf_maps *m, const pf_mapver *cur, const char *body, size_t len,
                              pf_mapver **out, pf_proto_error *e);
/* Ends the sessions and crowds of map id (all when keep_lineage is 0, else
 * those of another lineage). */
void pf__maps_end_users(pf_maps *m, const char *id, uint64_t keep_lineage);

/* map_not_found for id; returns PF_ERANGE. */
pf_status pf__maps_no_map(pf_proto_error *e, const char *id);
/* precondition_failed for id at version/lineage (exists false: none);
 * returns PF_EINVAL. */
pf_status pf__maps_precondition(pf_proto_error *e, const char *id, bool exists, uint64_t version,
                                uint64_t lineage);

#endif
