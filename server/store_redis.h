/* store_redis.h -- the shared map store in Redis (--store redis://...):
 * every map, its versions and its change log, laid out as below, changed
 * only by the Lua scripts of store_redis.c so that each change is atomic
 * and its version is assigned exactly once, whichever instance makes it.
 *
 * Keys (P is the prefix, "pathd:" for the server):
 *   P map:<id>   hash: kind ("grid"), version, lineage, snap (the encoded
 *                map at snap_version: store.h's pf_store_encode for a
 *                grid), snap_version, hash (hex SHA-256 of the upload, ""
 *                once PATCHed: POST /v1/maps recognises its own upload),
 *                info (the JSON members GET /v1/maps lists);
 *   P log:<id>   stream of the map's PATCHes since its upload, entry id
 *                0-<version> (so the log is in version order by
 *                construction), field body: the PATCH as sent. Trimmed when
 *                a snapshot is written (PF_RSTORE_SNAP_EVERY versions) to
 *                the PF_RSTORE_LOG_KEEP entries before it;
 *   P index      set of every map id (listing, counting for --max-maps);
 *   P events     stream, one entry per change of any map: id, op (put,
 *                patch, del), v (the version it made or removed), l (its
 *                lineage); capped near PF_RSTORE_EVENTS_MAX entries. Every
 *                instance follows it to keep its copies current;
 *   P lineage    counter: the lineage of each upload (an upload starts one,
 *                a PATCH continues it), so (lineage, version) orders all the
 *                states an id goes through, across deletes and re-creates;
 *   P epoch      32 hex digits, random: who this store is. Set when the
 *                store is first used and replaced when an instance finds
 *                that the store lost data (pf_rstore_epoch); each time it is
 *                set, the lineage counter is raised to at least Redis's
 *                clock in milliseconds times 1024, above every lineage any
 *                instance may still hold from before (unless more than 1024
 *                uploads a millisecond went by since the previous epoch), so
 *                a lineage is never given twice.
 *
 * The guard. Every change carries the epoch its instance knows and the
 * largest lineage it has seen (pf_rstore_guard), and the scripts refuse it
 * (PF_RSTORE_EPOCH, PF_RSTORE_ROLLBACK, nothing changed) when the store's
 * epoch is another (it was emptied or replaced) or its lineage counter is
 * below that (it went back to an older state: a restart from an old RDB
 * file, an append-only file that lost its last second, a replica promoted
 * before it had everything). A PATCH whose base is newer than the store's
 * version is refused the same way. The catch-up (the follower's) checks
 * the same and says so instead of "gone", so an instance never drops a copy
 * because the store forgot it.
 *
 * One Redis (with replicas and Sentinel for availability if wanted), not
 * Redis Cluster: the scripts touch a map's keys and the shared ones
 * together.
 *
 * Every function runs its commands on a connection of the pf_redis pool
 * and is bounded by its timeout; errors as redis.h says. Thread-safe.
 */
#ifndef PF_SERVER_STORE_REDIS_H
#define PF_SERVER_STORE_REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "precond.h"
#include "redis.h"

/* A snapshot every this many versions; the log keeps this many entries
 * before the newest snapshot, so a copy up to that far behind catches up
 * from the log, one further behind reloads. */
#define PF_RSTORE_SNAP_EVERY 64
#define PF_RSTORE_LOG_KEEP 64
/* The events stream's approximate cap (MAXLEN ~). */
#define PF_RSTORE_EVENTS_MAX 100000
/* Longest map kind name. */
#define PF_RSTORE_KIND_MAX 15
/* An epoch's length in hex digits. */
#define PF_RSTORE_EPOCH_LEN 32
/* Most replicas a change may wait for (--store-wait-replicas). */
#define PF_RSTORE_WAIT_MAX 64

typedef struct pf_rstore pf_rstore;

/* Over redis (borrowed), keys under prefix (copied; "pathd:"). NULL on
 * ENOMEM. */
pf_rstore *pf_rstore_create(pf_redis *redis, const char *prefix);
void pf_rstore_destroy(pf_rstore *s);
pf_redis *pf_rstore_redis(const pf_rstore *s);
/* After each change that succeeds, wait (Redis WAIT) until `replicas`
 * replicas have it, for at most wait_ms (and never past the change's
 * deadline); 0 replicas: no wait (the default). Set before use. */
void pf_rstore_set_wait(pf_rstore *s, int replicas, int wait_ms);

/* What a change checks the store against (see the guard above). */
typedef struct pf_rstore_guard {
    char epoch[PF_RSTORE_EPOCH_LEN + 1]; /* the store's epoch as the instance knows it */
    uint64_t min_lineage;                /* the largest lineage the instance has seen */
} pf_rstore_guard;

/* What a change did. */
typedef enum pf_rstore_result {
    PF_RSTORE_OK = 0,       /* done: version, lineage say what it made (or removed) */
    PF_RSTORE_UNCHANGED,    /* a POST of the map already there: its version, lineage */
    PF_RSTORE_PRECONDITION, /* If-Match / If-None-Match failed: the current version */
    PF_RSTORE_LIMIT,        /* a new map, and the store holds max_maps */
    PF_RSTORE_CONFLICT,     /* a PATCH of a version that is not the current one */
    PF_RSTORE_GONE,         /* no such map */
    PF_RSTORE_EPOCH,        /* the guard's epoch is not the store's: version, lineage 0 */
    PF_RSTORE_ROLLBACK,     /* the store is behind the guard or the PATCH's base */
    PF_RSTORE_NEWER         /* a restore: the store's copy is as new or newer */
} pf_rstore_result;

typedef struct pf_rstore_ack {
    pf_rstore_result result;
    uint64_t version, lineage; /* 0, 0 when the map does not exist */
    bool created;              /* a put made a new id */
    /* With pf_rstore_set_wait and result OK: how many replicas confirmed
     * the change in time (Redis WAIT's answer; 0 when the wait failed). */
    int replicas;
    bool unconfirmed; /* fewer than the replicas waited for */
} pf_rstore_ack;

/* An upload: a new lineage of map id at its current version + 1 (1 for a
 * new id). */
typedef struct pf_rstore_put {
    const char *id;
    const pf_precond *cond;
    const pf_rstore_guard *guard; /* NULL: no guard (tests of the scripts) */
    bool post;                    /* when the map's hash is hash_hex already: UNCHANGED */
    const char *kind;             /* "grid" */
    const void *img;              /* the encoded map */
    size_t img_len;
    const char *hash_hex; /* 64 hex digits, or "" */
    const char *info;     /* listing members */
    int64_t max_maps;
} pf_rstore_upload;

/* A PATCH of version base_version/base_lineage: logged as version + 1 if
 * that is still the current one (else CONFLICT with the current one). img
 * (NULL: none) is the new version encoded, sent when the new version is a
 * multiple of PF_RSTORE_SNAP_EVERY. */
typedef struct pf_rstore_patch {
    const char *id;
    const pf_precond *cond;
    const pf_rstore_guard *guard; /* NULL: no guard */
    uint64_t base_version, base_lineage;
    const char *body;
    size_t body_len;
    const void *img;
    size_t img_len;
    const char *info;
} pf_rstore_edit;

/* PF_OK with the outcome in ack (PF_RSTORE_*), or the error: store_
 * unavailable when the change was not made (it could not be sent before
 * deadline_ns, or Redis refused it unrun), store_outcome_unknown when it
 * was sent and no answer came before deadline_ns (it may have been made;
 * the events stream tells). */
pf_status pf_rstore_put(pf_rstore *s, uint64_t deadline_ns, const pf_rstore_upload *p,
                        pf_rstore_ack *ack, pf_proto_error *e);
pf_status pf_rstore_patch(pf_rstore *s, uint64_t deadline_ns, const pf_rstore_edit *p,
                          pf_rstore_ack *ack, pf_proto_error *e);
/* Removes map id with its log, if cond holds: OK (ack names what was
 * removed), GONE, PRECONDITION, EPOCH, ROLLBACK. guard NULL: none. */
pf_status pf_rstore_remove(pf_rstore *s, uint64_t deadline_ns, const char *id,
                           const pf_precond *cond, const pf_rstore_guard *guard, pf_rstore_ack *ack,
                           pf_proto_error *e);

/* Puts back a map the store lost, as an instance holds it: kind, img
 * (the encoded map), hash_hex and info as an upload's, at its own
 * version and lineage, with an empty log; only when the store has no
 * such map or an older one (by lineage, then version): OK, else NEWER
 * with the store's (the newest copy any instance restores wins). The
 * lineage counter is raised to lineage if below. guard: EPOCH as a
 * change; no ROLLBACK check (restoring is what follows one). */
typedef struct pf_rstore_restore {
    const char *id, *kind;
    const void *img;
    size_t img_len;
    const char *hash_hex, *info;
    uint64_t version, lineage;
    const pf_rstore_guard *guard;
} pf_rstore_restore;

pf_status pf_rstore_put_back(pf_rstore *s, uint64_t deadline_ns, const pf_rstore_restore *p,
                             pf_rstore_ack *ack, pf_proto_error *e);

/* A map as read in one atomic step: the snapshot and every log entry after
 * it up to the current version. Strings point into the reply it keeps. */
typedef struct pf_rstore_map {
    char kind[PF_RSTORE_KIND_MAX + 1];
    uint64_t version, lineage, snap_version;
    const unsigned char *img;
    size_t img_len;
    char hash_hex[65];
    size_t nentries; /* version - snap_version */
    const char **bodies;
    size_t *lens;
    void *reply_; /* owns the strings */
} pf_rstore_map;

/* PF_OK with *found false when there is no such map. Free with
 * pf_rstore_map_free. PF_EIO with storage_failed when the stored map is
 * inconsistent (a log entry missing). */
pf_status pf_rstore_load(pf_rstore *s, uint64_t deadline_ns, const char *id, pf_rstore_map *out,
                         bool *found, pf_proto_error *e);
void pf_rstore_map_free(pf_rstore_map *m);

/* How a copy at lineage/version catches up. */
typedef enum pf_rstore_sync_kind {
    PF_RSTORE_SYNC_SAME = 0, /* it is current (or newer) */
    PF_RSTORE_SYNC_ENTRIES,  /* apply bodies[0..n) as versions version+1.. */
    PF_RSTORE_SYNC_RELOAD,   /* another lineage, or the log no longer reaches: load */
    PF_RSTORE_SYNC_GONE,     /* deleted */
    PF_RSTORE_SYNC_EPOCH,    /* the guard's epoch is not the store's: it lost its data */
    PF_RSTORE_SYNC_ROLLBACK, /* the store is behind the guard's lineage */
    PF_RSTORE_SYNC_BEHIND    /* the store's map is older than the copy */
} pf_rstore_sync_kind;

typedef struct pf_rstore_sync {
    pf_rstore_sync_kind kind;
    uint64_t version, lineage; /* the store's current */
    size_t nentries;
    const char **bodies;
    size_t *lens;
    void *reply_;
} pf_rstore_sync;

/* guard NULL: none (EPOCH, ROLLBACK never come). */
pf_status pf_rstore_catch_up(pf_rstore *s, uint64_t deadline_ns, const char *id, uint64_t lineage,
                             uint64_t version, const pf_rstore_guard *guard, pf_rstore_sync *out,
                             pf_proto_error *e);
void pf_rstore_sync_free(pf_rstore_sync *y);

/* Every map of the store, in no order. */
typedef struct pf_rstore_entry {
    const char *id;
    uint64_t version, lineage;
    const char *info; /* listing members, may be "" */
} pf_rstore_entry;

typedef struct pf_rstore_list {
    pf_rstore_entry *items;
    size_t n;
    void *reply_;
} pf_rstore_list;

pf_status pf_rstore_list_all(pf_rstore *s, uint64_t deadline_ns, pf_rstore_list *out,
                             pf_proto_error *e);
void pf_rstore_list_free(pf_rstore_list *l);

/* The events stream, read by the follower on a connection of its own. */
typedef struct pf_rstore_event {
    char id[65];
    char op; /* 'p'ut, 'P'atch, 'd'el */
    uint64_t version, lineage;
} pf_rstore_event;

/* An events stream position, "<ms>-<seq>". */
typedef struct pf_rstore_pos {
    uint64_t ms, seq;
} pf_rstore_pos;

/* Whether a is after b. */
bool pf_rstore_pos_after(pf_rstore_pos a, pf_rstore_pos b);

/* The position of the newest event (0-0 for none): where a follower that
 * starts now begins. */
pf_status pf_rstore_events_tail(pf_rstore *s, redisContext *c, uint64_t deadline_ns,
                                pf_rstore_pos *out, pf_proto_error *e);
/* Waits up to block_ms for events after *pos and reads up to cap of them
 * into ev, advancing *pos (the deadline must leave block_ms). *gap is set
 * when events after the old *pos were trimmed before they were read (the
 * follower then checks every copy it holds). */
pf_status pf_rstore_events_read(pf_rstore *s, redisContext *c, uint64_t deadline_ns,
                                pf_rstore_pos *pos, int block_ms, pf_rstore_event *ev, size_t cap,
                                size_t *n, bool *gap, pf_proto_error *e);

/* Who the store is and how far it got, read in one step. */
typedef struct pf_rstore_state {
    char epoch[PF_RSTORE_EPOCH_LEN + 1]; /* "" when the store has none */
    uint64_t lineage;                    /* the lineage counter (0: none) */
    pf_rstore_pos tail;                  /* the newest event (0-0: none) */
    uint64_t maps;                       /* ids in the index */
} pf_rstore_state;

pf_status pf_rstore_probe(pf_rstore *s, redisContext *c, uint64_t deadline_ns, pf_rstore_state *out,
                          pf_proto_error *e);

/* Sets the store's epoch to fresh (32 hex digits) when it has none or
 * still has known (known "" for an instance that never saw one: then only
 * when the store has none), and raises the lineage counter to at least
 * min_lineage and, when it set the epoch, to Redis's clock in ms x 1024.
 * *renewed says whether this call set it; out gets the store's epoch and
 * counter afterwards. */
pf_status pf_rstore_epoch(pf_rstore *s, redisContext *c, uint64_t deadline_ns, const char *known,
                          const char *fresh, uint64_t min_lineage, bool *renewed,
                          pf_rstore_state *out, pf_proto_error *e);

#endif
