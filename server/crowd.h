/* crowd.h -- the server's crowds: many agents steered together on one
 * navmesh map (DetourCrowd through nav/navmesh.h), addressed as
 * /v1/maps/{id}/crowds/{cid}.
 *
 * A crowd has its own copy of the map's mesh (pf_nav_crowd) and follows the
 * map's versions: every step first brings it to the map's current version
 * (obstacles and areas PATCHed in: changed tiles only; agents whose path
 * crosses them replan). A replaced (PUT) or deleted map ends its crowds.
 *
 * Stepping: on request (a command with steps, pf_crowd_run), or by the
 * server at the crowd's tick_hz: the stream hub (stream.h) asks
 * pf_crowds_due which crowds are due, runs pf_crowd_tick for each on the
 * pool and sends the state to the crowd's WebSocket streams. A tick that
 * comes while the crowd's previous one still runs is skipped (counted in
 * ticks_skipped) rather than queued: a crowd never falls behind by more
 * than one tick.
 *
 * Expiry. A crowd neither asked about (request, stream message) nor watched
 * (an open stream) for ttl_s seconds is gone; pf_crowds_reap frees it.
 *
 * Concurrency. The table is thread-safe (one mutex). A crowd is reference
 * counted (pf_crowds_get gives one); its simulation has its own mutex, so
 * a command, a read and a tick of one crowd run one after the other, on any
 * threads.
 */
#ifndef PF_SERVER_CROWD_H
#define PF_SERVER_CROWD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "crowd_json.h"
#include "errors.h"
#include "jsonw.h"
#include "memory.h"
#include "navq.h"
#include "registry.h"
#include "status.h"

#define PF_CROWD_ID_LEN 32 /* lowercase hex digits of 128 random bits */

typedef struct pf_crowd pf_crowd;
typedef struct pf_crowds pf_crowds;

/* A table of at most max_total crowds, max_per_map on one map. NULL on
 * ENOMEM. */
pf_crowds *pf_crowds_create(size_t max_total, size_t max_per_map);
/* Drops the table's references (crowds still referenced live on until
 * released). NULL is a no-op. */
void pf_crowds_destroy(pf_crowds *t);

/* Called (from any thread, with no lock held) when a crowd's tick rate
 * changes, a ticking crowd is created or crowds are removed, so the ticker
 * and the streams look again. */
void pf_crowds_set_notify(pf_crowds *t, void (*fn)(void *ud), void *ud);

/* The memory budget crowds are charged to (PF_MEM_CROWDS): a crowd's
 * estimate (its mesh copy, agents, DetourCrowd's pools) before it is made,
 * a create past it answered 507; then what it holds after each run.
 * Borrowed for the table's life; set before serving. */
void pf_crowds_set_mem(pf_crowds *t, pf_mem *mem);

/* Makes a crowd on navmesh version mv with rq's agents (their errors name
 * "agents[i].<field>": e filled, PF_EINVAL / PF_EBLOCKED), owned by the
 * token `owner` (NULL or all zero: none; set before the crowd is
 * registered, never changed), registers it and gives a reference. PF_ELIMIT when the map (*total
 * false) or the server
 * (*total true) holds its limit of crowds; PF_EUNSUPPORTED for a mesh built
 * for agent radius 0; PF_ENOMEM. */
pf_status pf_crowds_add(pf_crowds *t, pf_mapver *mv, const pf_crowd_request *rq,
                        const pf_auth_id *owner, int64_t ttl_s, uint64_t now_ns, pf_crowd **out,
                        bool *total, pf_proto_error *e);

/* Crowd cid of map map_id with a reference, its idle clock restarted; NULL
 * when there is none (unknown, expired, removed). */
pf_crowd *pf_crowds_get(pf_crowds *t, const char *map_id, const char *cid, uint64_t now_ns);
/* Removes it (DELETE); false when there is none. */
bool pf_crowds_remove(pf_crowds *t, const char *map_id, const char *cid);
/* Removes the crowds of map_id (all when keep_lineage is 0, else those of
 * another lineage). Returns how many. */
size_t pf_crowds_drop_map(pf_crowds *t, const char *map_id, uint64_t keep_lineage);
/* Frees crowds idle past their ttl and not watched. Returns how many. */
size_t pf_crowds_reap(pf_crowds *t, uint64_t now_ns);
size_t pf_crowds_count(pf_crowds *t);
/* Steps every crowd took since the start (removed ones included), and the
 * bytes the crowds held at their last run (their mesh copies and agents). */
uint64_t pf_crowds_steps(pf_crowds *t);
size_t pf_crowds_memory(pf_crowds *t);
/* Crowds of map map_id (any lineage). */
size_t pf_crowds_count_map(pf_crowds *t, const char *map_id);

void pf_crowd_retain(pf_crowd *c);
void pf_crowd_release(pf_crowd *c);
const char *pf_crowd_id(const pf_crowd *c);
const char *pf_crowd_map_id(const pf_crowd *c);
/* Whether the token who made the crowd (auth.h; immutable, any thread). */
bool pf_crowd_owned_by(const pf_crowd *c, const pf_auth_id *who);
/* Whether it was removed (deleted, expired, its map gone). */
bool pf_crowd_is_gone(pf_crowd *c);
/* A stream watching it opens or closes (keeps it from expiring). */
void pf_crowd_watch(pf_crowd *c, bool open);

/* Runs cmd (NULL: a read) on the crowd and writes its state (below), or an
 * error body, into w: brings the crowd to its map's current version,
 * removes, adds, retargets, sets the tick rate, steps.
 * navq lends the query scratch the checks of new points use. Returns PF_ERR_NONE,
 * or the error w holds: INVALID_VALUE / BLOCKED naming the field (nothing
 * changed: the command is checked whole first), LIMIT_EXCEEDED (full),
 * CONFLICT (steps on a crowd that ticks), CROWD_NOT_FOUND (removed
 * meanwhile, or its map was deleted or replaced: the crowd is removed),
 * NO_MEMORY. */
pf_error pf_crowd_run(pf_crowd *c, pf_registry *reg, pf_navq *navq, const pf_crowd_command *cmd,
                      pf_jsonw *w);

/* pf_crowd_run in parts, so a server can give its worker back between
 * them: the first call (s zeroed) checks and applies the command as
 * pf_crowd_run does and runs its steps until pause(pause_ud), polled after
 * each step, asks for the worker back; with steps left *done is false and
 * nothing is written to w: call again (any thread) with the same s and
 * cmd to run the rest, which ends with the state written as
 * pf_crowd_run's (its "added" ids those of the first part). Between parts
 * the crowd is free: a read or another command may come in between, and a
 * crowd deleted, expired or whose map went meanwhile ends the command with
 * CROWD_NOT_FOUND. pf_crowd_run_clear frees what s holds. The steps are
 * bounded by --crowd-max-steps (crowd_json.h). */
typedef struct pf_crowd_run_state {
    bool begun;     /* the command was applied */
    int64_t left;   /* steps still to run */
    double dt;      /* their length in seconds */
    int32_t *added; /* the ids of the agents the command added */
    size_t nadded;
} pf_crowd_run_state;
pf_error pf_crowd_run_part(pf_crowd *c, pf_registry *reg, pf_navq *navq,
                           const pf_crowd_command *cmd, pf_crowd_run_state *s, pf_stop_fn pause,
                           void *pause_ud, pf_jsonw *w, bool *done);
void pf_crowd_run_clear(pf_crowd_run_state *s);
/* One tick of 1 / tick_hz seconds, its state into w (as pf_crowd_run;
 * CROWD_NOT_FOUND when its map is gone). */
pf_error pf_crowd_tick(pf_crowd *c, pf_registry *reg, pf_jsonw *w);

/* The crowds due for a tick at now_ns, each with a reference and marked as
 * ticking (at most cap; the rest stay due); *next_ns is when the next one
 * is due (0: none ticks). */
size_t pf_crowds_due(pf_crowds *t, uint64_t now_ns, pf_crowd **out, size_t cap, uint64_t *next_ns);
/* The tick of a crowd pf_crowds_due gave is done (or was not run). */
void pf_crowd_tick_done(pf_crowd *c);

/* The state: {"crowd_id","map_id","map_version","tick_hz","frame","time_s",
 * "max_agents","agents":[{"id","state","position","velocity","target",
 * "radius"}],"added":[ids] (a command that added),"stats":{"step_us",
 * "steps","ticks_skipped","memory_bytes"}}. */

#endif
