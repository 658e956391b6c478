/* session.h -- the server's sessions: one per moving agent, each on one
 * map, addressed as /v1/maps/{id}/sessions/{sid}.
 *
 * A session holds a reference to the map version it plans on and its
 * kind's state (kind.h: a grid's D* Lite search with the changes sent to
 * it alone, a navmesh's path corridor). This module is what every kind's
 * sessions share: the table (ids, owners, limits, idle expiry, the busy
 * flag, memory), creation from a request, and the sync with the map's
 * versions; the kind validates, applies and plans.
 *
 * World changes. A map PATCH publishes the next version of the map; a
 * session sees it at its next read or update (pf_session_sync): its kind
 * moves it onto the new version (a grid rebases its D* Lite search with
 * the map's change log, or rebuilds it; a navmesh plans anew at its next
 * move). A replaced (PUT) or deleted map ends its sessions: 404 after.
 *
 * Concurrency. The table (live.h, which crowds share) is thread-safe. A
 * session is used by one request at a time: pf_sessions_acquire holds it
 * exclusively (busy) and a second acquire answers PF_SESSION_BUSY (the
 * server's 409) until pf_sessions_release. Only the holder may call the
 * pf_session_* operations below, on any one thread (the worker running its
 * job).
 *
 * Expiry. A session idle (not held) for longer than its ttl_s is gone: an
 * acquire finds it no more, and pf_sessions_reap unlinks and frees it (the
 * stream hub runs the reaper every second); a lookup never frees one.
 */
#ifndef PF_SERVER_SESSION_H
#define PF_SERVER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "errors.h"
#include "jsonw.h"
#include "memory.h"
#include "metrics.h"
#include "registry.h"
#include "session_json.h"
#include "status.h"

#define PF_SESSION_ID_LEN 32 /* lowercase hex digits of 128 random bits */

typedef struct pf_session pf_session;
typedef struct pf_sessions pf_sessions;

/* A table allowing max_total sessions, max_per_map on one map. NULL on
 * ENOMEM. */
pf_sessions *pf_sessions_create(size_t max_total, size_t max_per_map);
/* Frees every session, held or not (call once no request runs). NULL is a
 * no-op. */
void pf_sessions_destroy(pf_sessions *t);

/* A session from request q on map version mv (a reference is taken):
 * mv's kind checks q (errors name the field, prefix + "start" ...), the
 * memory budget mem (NULL: none) is charged what it may hold, then it is
 * registered, held by the caller (busy), owned by `owner` (NULL: none).
 * ttl_s 0 takes default_ttl_s. Nothing is searched yet: the caller runs
 * it (pf_session_run) and kills it unless that answers. On error e says
 * why: the kind's (invalid_request, invalid_value, off_map, blocked),
 * insufficient_storage (507), too_many_sessions (the map's limit: 429),
 * overloaded (the table's), out_of_memory. */
pf_status pf_sessions_new(pf_sessions *t, pf_mapver *mv, const pf_session_request *q,
                          const char *prefix, int64_t default_ttl_s, const pf_auth_id *owner,
                          pf_mem *mem, uint64_t now_ns, pf_session **out, pf_proto_error *e);

/* Registers a session of mv (a reference is taken) with its kind's state
 * (taken, also on failure: mv->kind->session_free), held by the caller
 * (busy): what pf_sessions_new does after its checks, for a kind's own
 * constructors. PF_ELIMIT when the map has max_per_map sessions (*total
 * false) or the table max_total (*total true); PF_ENOMEM. */
pf_status pf_sessions_insert(pf_sessions *t, pf_mapver *mv, void *state, int64_t ttl_s,
                             uint64_t now_ns, pf_session **out, bool *total);

typedef enum pf_session_lookup {
    PF_SESSION_OK = 0,
    PF_SESSION_NOT_FOUND, /* unknown, expired, deleted, or of another map */
    PF_SESSION_BUSY       /* another request holds it */
} pf_session_lookup;

/* Finds session sid of map map_id and holds it (busy). */
pf_session_lookup pf_sessions_acquire(pf_sessions *t, const char *map_id, const char *sid,
                                      uint64_t now_ns, pf_session **out);
/* Lets go of a held session: it is idle from now_ns on. A session removed
 * while held is freed here. */
void pf_sessions_release(pf_sessions *t, pf_session *s, uint64_t now_ns);
/* Whether sid of map_id exists now (not expired); does not hold it. */
bool pf_sessions_exists(pf_sessions *t, const char *map_id, const char *sid, uint64_t now_ns);

/* Owners: a session remembers the token that created it (auth.h's name of
 * it, given to pf_sessions_new), so a read token reaches only its own
 * sessions (routes_sessions.c). */
const pf_auth_id *pf_session_owner(const pf_session *s);
/* Whether sid of map_id exists and was created by who. */
bool pf_sessions_owner_is(pf_sessions *t, const char *map_id, const char *sid,
                          const pf_auth_id *who);

/* Removes a session (DELETE). A held one is freed when its holder releases
 * it. false when there is no such session. */
bool pf_sessions_remove(pf_sessions *t, const char *map_id, const char *sid);
/* Removes a session its holder found dead (its map is gone); it is freed at
 * pf_sessions_release. */
void pf_sessions_kill(pf_sessions *t, pf_session *s);
/* Removes every session of map_id whose lineage is not keep_lineage (0:
 * every session of the map). Returns how many. */
size_t pf_sessions_drop_map(pf_sessions *t, const char *map_id, uint64_t keep_lineage);
/* What GET /v1/maps/{id}/sessions lists of one session. A session held by
 * a request at the moment is only named (busy): its position and goal are
 * its holder's to change. */
typedef struct pf_session_info {
    char id[PF_SESSION_ID_LEN + 1];
    bool busy;
    pf_place position, goal; /* unless busy: as its kind says (session_where) */
    uint64_t map_version;    /* the version it last planned on, unless busy */
    int64_t ttl_s;
    uint64_t idle_ms; /* since its last request; 0 when busy */
    pf_auth_id owner; /* the token that created it */
} pf_session_info;

/* The live sessions of map_id, sorted by id, into *out (free() it; NULL
 * when *n is 0). O(sessions) under the table's lock. PF_ENOMEM. */
pf_status pf_sessions_list(pf_sessions *t, const char *map_id, uint64_t now_ns,
                           pf_session_info **out, size_t *n);

/* Frees the sessions idle past their ttl. Returns how many. */
size_t pf_sessions_reap(pf_sessions *t, uint64_t now_ns);
size_t pf_sessions_count(pf_sessions *t);
/* Bytes the sessions hold (pf_session_memory of each), as of each one's
 * last release: a session in use counts what it held when its holder last
 * let go. */
size_t pf_sessions_memory(pf_sessions *t);
/* Sessions of map map_id (a map with sessions is never dropped as idle). */
size_t pf_sessions_count_map(pf_sessions *t, const char *map_id);

/* Operations on a held session. */

const char *pf_session_id(const pf_session *s);
const char *pf_session_map_id(const pf_session *s);
uint64_t pf_session_map_version(const pf_session *s);
int64_t pf_session_ttl(const pf_session *s);
/* The version it is on (the holder's until its next sync), and its kind's
 * state (for the kind's own modules). */
const pf_mapver *pf_session_mapver(const pf_session *s);
void *pf_session_state(const pf_session *s);
/* Whether its next plan builds data first (kind.h's session_builds): its
 * job runs as a build. */
bool pf_session_builds(const pf_session *s);
/* Bytes the session holds: its record and its kind's state (a grid's
 * private changes and D* Lite search, a navmesh's corridor), not the
 * shared map. */
size_t pf_session_memory(const pf_session *s);

/* Brings the session to the current version of its map; *how says "none",
 * "incremental" or "rebuilt" (its kind's session_rebase). PF_ECANCELED
 * when the map was deleted or replaced: the session is over. */
pf_status pf_session_sync(pf_session *s, pf_registry *reg, const char **how);

/* Hands the session a charge of `reserved` bytes of PF_MEM_SESSIONS its
 * creator took from the budget mem (memory.h): from then on the charge
 * follows pf_session_memory after each pf_session_run, and is given back
 * when the session is freed. Call on a held session just added
 * (pf_sessions_new does). */
void pf_session_take_charge(pf_session *s, pf_mem *mem, size_t reserved);

/* The session job, run on a worker for a held session by every front end
 * (POST/GET .../sessions routes and WebSocket stream messages): brings s to
 * its map's current version (pf_session_sync), then its kind validates
 * and applies l (NULL: a read), plans (counted in m), and writes the
 * answer JSON (session_json.h), or an error body, into w. Returns
 * PF_ERR_NONE on an answer, or the error whose body w holds: an invalid
 * update (INVALID_REQUEST, INVALID_VALUE, OFF_MAP, BLOCKED; the session is
 * unchanged), SESSION_NOT_FOUND when the map was deleted or replaced (s is
 * killed: freed at its release), NO_MEMORY. The caller still releases s. */
pf_error pf_session_run(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                        const pf_update_list *l, pf_jsonw *w);

/* pf_session_run for an answer sent on stream `stream` (an id its stream
 * keeps for its life, never 0, pf_session_stream_id): when this stream was
 * the last sent the session's plan in full and the plan did not change
 * since (no new route: only the agent moved along it), the answer is the
 * short one (session_json.h's pf_session_write_short, "unchanged": true,
 * no path). Counted in m (pathd_stream_session_answers_total). 0 is
 * pf_session_run. */
pf_error pf_session_run_on(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                           const pf_update_list *l, uint64_t stream, pf_jsonw *w);

struct pf_config;

/* A session's replanning policy (core/replan.h) from cur (NULL: the
 * server's defaults, cfg's --session-replan-interval-ms,
 * --session-replan-updates, --session-goal-threshold,
 * --session-hysteresis-pct; cfg NULL: all 0) with the members f sent (NULL:
 * none), its interval raised to cfg's --session-min-replan-interval-ms. */
void pf_session_policy(const struct pf_config *cfg, const pf_replan_policy *cur,
                       const pf_replan_fields *f, pf_replan_policy *out);

/* A new stream id, never 0, unique in the process (thread-safe). */
uint64_t pf_session_stream_id(void);

#endif
