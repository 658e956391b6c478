/* live.h -- the table of the server's live objects: sessions (session.h)
 * and crowds (crowd.h), each on one map, addressed by a random id under
 * /v1/maps/{id}/..., owned by the token that made it, alive while used.
 *
 * An object embeds a pf_live_obj as its first member; the table links it,
 * names it (128 random bits in hex), counts it against max_total and
 * max_per_map, and ends it:
 *   - explicitly (pf_live_remove: DELETE), with its map (pf_live_drop_map:
 *     the map was deleted or replaced), or by its holder (pf_live_kill);
 *   - idle: not held, not watched (an open stream), not asked about for
 *     its ttl_s seconds. pf_live_reap (the hub's timer, once a second)
 *     unlinks those; a lookup only sees that one has expired (NOT_FOUND)
 *     and never frees it, so an object is never freed by a lookup on some
 *     I/O thread.
 * References: the table holds one while an object is linked, and each
 * pf_live_acquire gives one (pf_live_release takes it back). The last one
 * frees the object (its type's free), on whichever thread lets go last: a
 * holder's (a worker), the reaper's (the hub), a remover's.
 *
 * Holds: an exclusive acquire (a session: one request at a time) marks the
 * object busy until its release, and a second exclusive acquire answers
 * PF_LIVE_BUSY; a shared acquire (a crowd: its own lock orders its
 * commands and ticks) only takes a reference. Both count as a use: the
 * idle clock starts again at the release of an exclusive hold, at the
 * acquire of a shared one.
 *
 * Memory: the table keeps the sum of its objects' type->memory, as of each
 * one's insert and last exclusive release (pf_live_memory).
 *
 * Thread-safe: one mutex. pf_live_lock / pf_live_unlock give a type's own
 * module the table's lock for fields of its objects it guards with it (a
 * crowd's tick state).
 */
#ifndef PF_SERVER_LIVE_H
#define PF_SERVER_LIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "registry.h"
#include "status.h"

#define PF_LIVE_ID_LEN 32 /* lowercase hex digits of 128 random bits */

typedef struct pf_live pf_live;

/* The table's part of an object (its first member). Read-only to the
 * object's module but for what the functions below say. */
typedef struct pf_live_type pf_live_type;

typedef struct pf_live_obj {
    const pf_live_type *type; /* set by pf_live_insert */
    char id[PF_LIVE_ID_LEN + 1];
    char map_id[PF_MAP_ID_MAX + 1];
    uint64_t lineage; /* of the map version it was made on */
    pf_auth_id owner; /* the creating token's name; all zero without tokens */
    int64_t ttl_s;    /* idle expiry */
    atomic_int refs;  /* the table's while linked, and each acquire's */
    /* Under the table's lock. */
    uint64_t last_ns; /* its last use */
    bool busy;        /* held exclusively */
    bool gone;        /* unlinked: removed, expired, killed or its map gone */
    int watchers;     /* open streams keeping it alive */
    size_t accounted; /* its bytes in the table's total */
    struct pf_live_obj *next;
} pf_live_obj;

/* What kind of object a table holds. */
struct pf_live_type {
    /* Frees o (the last reference is gone). */
    void (*free)(pf_live_obj *o);
    /* Bytes o holds (NULL: none counted). Called without the table's lock
     * by the thread that holds or inserts o. */
    size_t (*memory)(const pf_live_obj *o);
};

/* NULL on ENOMEM. */
pf_live *pf_live_create(const pf_live_type *type, size_t max_total, size_t max_per_map);
/* Drops the table's references (objects still referenced live on until
 * released). NULL is a no-op. */
void pf_live_destroy(pf_live *t);
void pf_live_lock(pf_live *t);
void pf_live_unlock(pf_live *t);

/* Links o (its other fields the caller's: zero them first) as an object of
 * map version mv's map and lineage with ttl_s, owned by owner (NULL:
 * none), under a new id, the table taking one reference and the caller
 * keeping one (held exclusively with `hold`). PF_ELIMIT when the map has
 * max_per_map objects (*total false) or the table max_total (*total true),
 * PF_ENOMEM; o is not linked then and the caller still owns it. */
pf_status pf_live_insert(pf_live *t, pf_live_obj *o, const pf_mapver *mv, int64_t ttl_s,
                         const pf_auth_id *owner, bool hold, uint64_t now_ns, bool *total);

typedef enum pf_live_lookup {
    PF_LIVE_OK = 0,
    PF_LIVE_NOT_FOUND, /* unknown, expired, removed, or of another map */
    PF_LIVE_BUSY       /* held exclusively by another */
} pf_live_lookup;

/* Finds id of map map_id and gives a reference, held exclusively with
 * `exclusive`. An expired one is NOT_FOUND (left for pf_live_reap). */
pf_live_lookup pf_live_acquire(pf_live *t, const char *map_id, const char *id, bool exclusive,
                               uint64_t now_ns, pf_live_obj **out);
/* Gives back an exclusive hold pf_live_acquire (or pf_live_insert) gave:
 * the idle clock restarts at now_ns, the object's memory is counted again,
 * and its reference is dropped. NULL is a no-op. */
void pf_live_release(pf_live *t, pf_live_obj *o, uint64_t now_ns);
/* One more reference, and giving one back (a shared hold's, or one of
 * pf_live_retain): the last one frees o, even after the table is gone.
 * NULL is a no-op. */
void pf_live_retain(pf_live_obj *o);
void pf_live_unref(pf_live_obj *o);

/* Whether id of map_id exists now (not expired), and whether it does and
 * was made by who; neither holds it. */
bool pf_live_exists(pf_live *t, const char *map_id, const char *id, uint64_t now_ns);
bool pf_live_owner_is(pf_live *t, const char *map_id, const char *id, const pf_auth_id *who);
/* Whether o was unlinked. */
bool pf_live_is_gone(pf_live *t, const pf_live_obj *o);
/* An open stream keeps o from expiring (open), or no longer does; either
 * is a use at now_ns. */
void pf_live_watch(pf_live *t, pf_live_obj *o, bool open, uint64_t now_ns);

/* Unlinks id of map_id (DELETE); false when there is none. Freed when its
 * last holder lets go (now, when none holds it). */
bool pf_live_remove(pf_live *t, const char *map_id, const char *id);
/* Unlinks o, which its holder found dead (its map is gone). */
void pf_live_kill(pf_live *t, pf_live_obj *o);
/* Unlinks every object of map_id whose lineage is not keep_lineage (0:
 * every one), and every one idle past its ttl at now_ns (the reaper).
 * Return how many. */
size_t pf_live_drop_map(pf_live *t, const char *map_id, uint64_t keep_lineage);
size_t pf_live_reap(pf_live *t, uint64_t now_ns);

/* Objects linked, of map map_id, and their bytes. */
size_t pf_live_count(pf_live *t);
size_t pf_live_count_map(pf_live *t, const char *map_id);
size_t pf_live_memory(pf_live *t);

/* Calls fn for each linked object of map_id (NULL: every object) not
 * expired at now_ns (0: expired ones too), under the table's lock: fn must
 * be quick, take no other lock of the table's and keep no pointer. The
 * objects of one map come in no particular order. */
void pf_live_each(pf_live *t, const char *map_id, uint64_t now_ns,
                  void (*fn)(void *ud, pf_live_obj *o), void *ud);

#endif
