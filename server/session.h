/* session.h -- the server's D* Lite sessions: one per moving agent, each on
 * one map, addressed as /v1/maps/{id}/sessions/{sid}.
 *
 * A session holds a reference to the map version (pf_mapver) whose grid its
 * pf_dstar borrows, its agent position and goal, and the record of the
 * changes sent to it alone (cells, doors: its "pins"), which always win over
 * the map's own state for this session.
 *
 * World changes. A map PATCH publishes the next version of the map; a
 * session sees it at its next read or update (pf_session_sync): it rebases
 * its D* Lite search onto the new grid with the cells every PATCH in between
 * changed (the map version's bounded change log, see registry.h), or, when
 * it is further behind than the log reaches, it is rebuilt on the current
 * version: a fresh search from its position to its goal with its pins
 * replayed. A replaced (PUT) or deleted map ends its sessions: 404 after.
 *
 * Navmesh maps. A session of a navmesh map (pf_sessions_add_nav) holds a
 * path corridor (dtPathCorridor, nav/navmesh.h) instead of a D* Lite
 * search: an update moves the agent along it (the corridor follows, its path
 * is kept and funnelled again) or sets a new goal (planned anew); a new map
 * version (obstacles or areas PATCHed), a position the corridor cannot
 * reach or a blocked one make it plan anew from where the agent is. The
 * same routes, NDJSON and WebSocket messages carry points [x,y,z].
 *
 * Concurrency. The table is thread-safe (one mutex). A session is used by
 * one request at a time: pf_sessions_acquire marks it busy and a second
 * acquire answers PF_SESSION_BUSY (the server's 409) until
 * pf_sessions_release. Only the holder may call the pf_session_* operations
 * below, on any one thread (the worker running its job).
 *
 * Expiry. A session idle (not held) for longer than its ttl_s is gone: an
 * acquire finds it no more, and pf_sessions_reap frees it (the server runs
 * the reaper every second).
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
#include "navq.h"
#include "registry.h"
#include "session_json.h"
#include "status.h"

#define PF_SESSION_ID_LEN 32 /* lowercase hex digits of 128 random bits */
/* A navmesh session's corridor holds at most this many polygons; a longer
 * path is answered partial, as far as the corridor reaches. */
#define PF_SESSION_NAV_MAX_POLYS 4096u
/* What the memory budget reserves for a new navmesh session: its record and
 * a corridor of PF_SESSION_NAV_MAX_POLYS polygons, with room to spare. */
#define PF_SESSION_NAV_RESERVE (64u * 1024u)

typedef struct pf_session pf_session;
typedef struct pf_sessions pf_sessions;

/* A table allowing max_total sessions, max_per_map on one map. NULL on
 * ENOMEM. */
pf_sessions *pf_sessions_create(size_t max_total, size_t max_per_map);
/* Frees every session, held or not (call once no request runs). NULL is a
 * no-op. */
void pf_sessions_destroy(pf_sessions *t);

/* Creates a session of mv (a reference is taken) from start to goal (both
 * walkable on mv's grid, checked by the caller) and registers it, held by
 * the caller (busy). PF_ELIMIT when the map has max_per_map sessions (*total
 * false) or the table max_total (*total true); PF_EBLOCKED / PF_ERANGE from
 * pf_dstar_create; PF_ENOMEM. Nothing is searched yet. */
pf_status pf_sessions_add(pf_sessions *t, pf_mapver *mv, pf_point start, pf_point goal,
                          int64_t ttl_s, uint64_t now_ns, pf_session **out, bool *total);

/* pf_sessions_add for an n x n agent (agent_size 1..PF_AGENT_SIZE_MAX,
 * else PF_EINVAL; positions are the square's top-left cells, clearance.h):
 * its search runs on the map version's agent grid of that size, made at
 * its first plan (on the worker). start and goal must fit the agent on
 * mv's grid (PF_ERANGE / PF_EBLOCKED otherwise, see
 * pf_sessions_check_agent). An agent session plans without the map's cut
 * vertices. */
pf_status pf_sessions_add_sized(pf_sessions *t, pf_mapver *mv, pf_point start, pf_point goal,
                                int32_t agent_size, int64_t ttl_s, uint64_t now_ns,
                                pf_session **out, bool *total);

/* Whether an n x n agent fits with its top-left cell at p on mv's grid:
 * PF_OK, PF_ERANGE (p off the map) or PF_EBLOCKED. O(n^2). */
pf_status pf_sessions_check_agent(const pf_mapver *mv, pf_point p, int32_t n);

typedef enum pf_session_lookup {
    PF_SESSION_OK = 0,
    PF_SESSION_NOT_FOUND, /* unknown, expired, deleted, or of another map */
    PF_SESSION_BUSY       /* another request holds it */
} pf_session_lookup;

/* The same for a navmesh map (mv->nav): a path corridor (nav/navmesh.h)
 * from start to goal for the map's agent type agent_type (its index),
 * planned at the first run. Whether the points are near the mesh is the
 * caller's check. PF_ELIMIT as above, PF_ENOMEM. */
pf_status pf_sessions_add_nav(pf_sessions *t, pf_mapver *mv, const float start[3],
                              const float goal[3], uint32_t agent_type, int64_t ttl_s,
                              uint64_t now_ns, pf_session **out, bool *total);

/* The query scratch navmesh sessions borrow while they run (borrowed for
 * the table's life; set before serving). */
void pf_sessions_set_navq(pf_sessions *t, pf_navq *q);

/* Finds session sid of map map_id and holds it (busy). */
pf_session_lookup pf_sessions_acquire(pf_sessions *t, const char *map_id, const char *sid,
                                      uint64_t now_ns, pf_session **out);
/* Lets go of a held session: it is idle from now_ns on. A session removed
 * while held is freed here. */
void pf_sessions_release(pf_sessions *t, pf_session *s, uint64_t now_ns);
/* Whether sid of map_id exists now (not expired); does not hold it. */
bool pf_sessions_exists(pf_sessions *t, const char *map_id, const char *sid, uint64_t now_ns);

/* Owners: a session remembers the token that created it (auth.h's name of
 * it), so a read token reaches only its own sessions (routes_sessions.c).
 * The owner is set once, by the creator, while it holds the new session. */
void pf_session_set_owner(pf_session *s, const pf_auth_id *owner);
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
    pf_point position, goal; /* unless busy */
    bool nav;                /* a navmesh session: position3 and goal3 instead */
    float position3[3], goal3[3];
    uint64_t map_version; /* the version it last planned on, unless busy */
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
pf_point pf_session_position(const pf_session *s);
pf_point pf_session_goal(const pf_session *s);
/* Whether it is a navmesh session (a corridor, points [x,y,z]). */
bool pf_session_is_nav(const pf_session *s);
int32_t pf_session_agent_size(const pf_session *s);
/* Bytes the session holds: its record, its pins and its D* Lite search
 * (pf_dstar_memory), not the shared map. */
size_t pf_session_memory(const pf_session *s);

/* Brings the session to the current version of its map; *how says "none",
 * "incremental" (rebased with the change log) or "rebuilt". PF_ECANCELED
 * when the map was deleted or replaced: the session is over. */
pf_status pf_session_sync(pf_session *s, pf_registry *reg, const char **how);

/* Checks every update of l against the session as it would be after the
 * updates before it (cells on the map, doors known, position and goal
 * walkable on the session's effective map) without changing anything. On
 * error e names the line and field: PF_ERANGE (off_map), PF_EBLOCKED
 * (blocked), PF_EINVAL (unknown door), PF_ENOMEM. */
pf_status pf_session_validate(const pf_session *s, const pf_update_list *l, pf_proto_error *e);

/* Applies l in order (validate first: the result of an invalid list is not
 * defined). Per update: cells, then doors, then goal, then position. A door
 * closed privately blocks its cells and wall edges for this session; opened,
 * its cells get the cost they had when the map declared the door. PF_OK, or
 * PF_ENOMEM: the updates applied so far stay and the session's search
 * starts anew at its next plan. */
pf_status pf_session_apply(pf_session *s, const pf_update_list *l);

/* The session job, run on a worker for a held session by both front ends
 * (POST/GET .../sessions routes and WebSocket stream messages): brings s to
 * its map's current version (pf_session_sync), validates and applies l
 * (NULL: a read), plans (counted in m), and writes the answer JSON
 * (session_json.h), or an error body, into w. Returns PF_ERR_NONE on an
 * answer, or the error whose body w holds: an invalid update
 * (INVALID_VALUE, OFF_MAP, BLOCKED; the session is unchanged),
 * SESSION_NOT_FOUND when the map was deleted or replaced (s is killed:
 * freed at its release), NO_MEMORY. The caller still releases s. */
/* Hands the session a charge of `reserved` bytes of PF_MEM_SESSIONS its
 * creator took from the budget mem (memory.h): from then on the charge
 * follows pf_session_memory after each pf_session_run, and is given back
 * when the session is freed. Call on a held session just added. */
void pf_session_take_charge(pf_session *s, pf_mem *mem, size_t reserved);

pf_error pf_session_run(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                        const pf_update_list *l, pf_jsonw *w);

/* Plans or repairs (pf_dstar_plan without a budget). out->path is borrowed
 * from the session until its next operation. Statuses: PF_OK, PF_NO_PATH,
 * PF_EBLOCKED (the agent's or the goal's cell is blocked), PF_ENOMEM. */
pf_status pf_session_plan(pf_session *s, pf_result *out);

#endif
