/* kind_grid.h -- grid maps as a world kind (kind.h): the Moving AI and JSON
 * grids of core/ (planner.h: the grid, its search preprocessing and HPA*
 * hierarchy), their paths, D* Lite sessions, flow fields, distance tables,
 * cell export and hierarchy.
 *
 * The kind is the table pf_kind_grid; the rest of the server reaches a
 * grid through it. What this header adds is for the grid-only parts that
 * are not a map's operation (the maze generator and the demo maps build
 * grids; tests make versions without a server) and for the grid's own
 * files (kind_grid_*.c).
 *
 * Files: kind_grid.c (the table, the environment, the world, uploads,
 * PATCH, stores), kind_grid_image.c (the stores' image), kind_grid_path.c
 * (path queries), kind_grid_session.c (D* Lite sessions),
 * kind_grid_export.c (cells and hierarchy), kind_grid_field.c (flow
 * fields), kind_grid_table.c (distance tables); kind_grid_internal.h is
 * what they share.
 */
#ifndef PF_SERVER_KIND_GRID_H
#define PF_SERVER_KIND_GRID_H

#include <stdint.h>

#include "grid.h"
#include "kind.h"
#include "planner.h"
#include "registry.h"
#include "session.h"

extern const pf_kind_ops pf_kind_grid;

/* The planner of grid version mv (its world). mv must be a grid's. The
 * planner builds some parts on first use (agent sizes, cuts), which is
 * why it is not const; the version is otherwise immutable. */
pf_planner *pf_grid_planner(const pf_mapver *mv);

/* A grid version around planner (taken, also on failure) outside any
 * server (env NULL: the operations that need one are not run on it), with
 * a path cache of cache_entries / cache_bytes and no flow field cache.
 * NULL on ENOMEM. */
pf_mapver *pf_grid_mapver_create(const char *id, pf_planner *planner, size_t cache_entries,
                                 size_t cache_bytes, uint64_t build_us, const uint8_t hash[32]);

/* The grid limits of an upload in env (--max-map-cells, --max-map-side). */
const pf_grid_limits *pf_grid_limits_of(const pf_kind_env *env);

/* Prepares g (taken, also on failure) for searches, HPA* hierarchy and jps
 * landmarks included (the slow part of an upload: run it on a worker), as
 * an unpublished version of map id with env's caches; build_us counts from
 * t0_ns (clock.h), when the upload's parse began. The memory budget is
 * charged first with an upper bound for g's size (pf_mem_map_estimate),
 * then with what the planner holds. The build stops at deadline_ns
 * (clock.h; 0: never), polled inside its long phases (core/build_stop.h):
 * PF_ECANCELED then, with e saying 413 limit_exceeded on
 * limits.grid_build_ms (pf_grid_build_too_long). Requests pass their
 * --grid-build-ms deadline (pf_grid_build_deadline); a stored map being
 * loaded passes none, since refusing it would lose it. PF_ENOMEM (e, when
 * not NULL, says insufficient_storage when the budget cannot hold the map,
 * out_of_memory otherwise), or the status of pf_planner_create (e says so
 * too). */
pf_status pf_grid_build(const pf_kind_env *env, const char *id, pf_grid *g, const uint8_t hash[32],
                        uint64_t t0_ns, uint64_t deadline_ns, pf_mapver **out, pf_proto_error *e);
/* The deadline of a grid build (an upload, a generated maze, a PATCH's
 * repair) that began at t0_ns: t0_ns plus --grid-build-ms. */
uint64_t pf_grid_build_deadline(const pf_kind_env *env, uint64_t t0_ns);
/* Sets e (when not NULL) to the 413 limit_exceeded of a grid build past
 * its deadline, field "limits.grid_build_ms", `what` naming the work
 * ("Building the map"); returns PF_ECANCELED. */
pf_status pf_grid_build_too_long(const pf_kind_env *env, pf_proto_error *e, const char *what);

/* Grid sessions outside the routes (tests): a session of mv from start to
 * goal (walkable cells, checked by the caller) for an n x n agent
 * (agent_size 1..PF_AGENT_SIZE_MAX, else PF_EINVAL; positions are the
 * square's top-left cells, clearance.h, and must fit the agent: PF_ERANGE
 * / PF_EBLOCKED), registered in t and held by the caller, as
 * pf_sessions_insert. Its search runs on the version's agent grid of that
 * size, made at its first plan; an agent session plans without the map's
 * cut vertices. Nothing is searched yet. */
pf_status pf_grid_sessions_add(pf_sessions *t, pf_mapver *mv, pf_point start, pf_point goal,
                               int64_t ttl_s, uint64_t now_ns, pf_session **out, bool *total);
pf_status pf_grid_sessions_add_sized(pf_sessions *t, pf_mapver *mv, pf_point start, pf_point goal,
                                     int32_t agent_size, int64_t ttl_s, uint64_t now_ns,
                                     pf_session **out, bool *total);

/* A held grid session's parts of its run (pf_session_run calls them in
 * this order):
 * validate: checks every update of l against the session as it would be
 * after the updates before it (cells on the map, doors known, position and
 * goal walkable on the session's effective map) without changing anything;
 * on error e names the line and field: PF_ERANGE (off_map), PF_EBLOCKED
 * (blocked), PF_EINVAL (unknown door), PF_EPARSE (a point of another form),
 * PF_ENOMEM.
 * apply: l in order (validate first: the result of an invalid list is not
 * defined). Per update: cells, then doors, then goal, then position. A door
 * closed privately blocks its cells and wall edges for this session;
 * opened, its cells get the cost they had when the map declared the door.
 * PF_OK, or PF_ENOMEM: the updates applied so far stay and the session's
 * search starts anew at its next plan.
 * plan: plans or repairs (pf_dstar_plan without a budget); out->path is
 * borrowed from the session until its next operation. PF_OK, PF_NO_PATH,
 * PF_EBLOCKED (the agent's or the goal's cell is blocked), PF_ENOMEM. */
pf_status pf_grid_session_validate(const pf_session *s, const pf_update_list *l, pf_proto_error *e);
pf_status pf_grid_session_apply(pf_session *s, const pf_update_list *l);
pf_status pf_grid_session_plan(pf_session *s, pf_result *out);
pf_point pf_grid_session_position(const pf_session *s);
pf_point pf_grid_session_goal(const pf_session *s);
int32_t pf_grid_session_agent_size(const pf_session *s);

/* The stores' image of a grid (both stores keep it; stores.h's files are
 * DIR/<id>.map.bin): a malloc'd image of g at `version` (free()), and its
 * inverse. Layout in kind_grid_image.c. PF_EPARSE for a damaged image,
 * PF_ELIMIT for one past lim, PF_ENOMEM. */
pf_status pf_grid_image_encode(const pf_grid *g, uint64_t version, unsigned char **out,
                               size_t *len);
pf_status pf_grid_image_decode(const unsigned char *buf, size_t len, const pf_grid_limits *lim,
                               pf_grid **out, uint64_t *version);

#endif
