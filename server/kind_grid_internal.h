/* kind_grid_internal.h -- what the grid kind's files share (kind_grid.h
 * lists them). Included by server/kind_grid*.c only. */
#ifndef PF_SERVER_KIND_GRID_INTERNAL_H
#define PF_SERVER_KIND_GRID_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kind_grid.h"
#include "metrics.h"
#include "path_json.h"
#include "session_json.h"

/* The grid's state in one server. */
typedef struct pf__grid_env {
    pf_grid_limits limits; /* --max-map-cells, --max-map-side */
} pf__grid_env;

/* The grid of version mv. */
const pf_grid *pf__grid_of(const pf_mapver *mv);

/* The algorithm a query without one runs: auto (planner.h), which picks
 * jps (or astar) or hpa per query. */
pf_algorithm pf__grid_default_algorithm(const pf_mapver *mv);

/* Agent sizes. Room in the memory budget for what a query for agent size
 * n builds on mv the first time it is used (core/agents.h: the clearance
 * table and the size's grid; with `hierarchy` also the size's HPA*
 * hierarchy, which hpa queries build): when a piece is not built yet, an
 * upper bound (pf_mem_agent_estimate) is charged and *reserved set to it,
 * else *reserved is 0. PF_ENOMEM (nothing charged, e set to
 * insufficient_storage on `field`, answered 507) when the budget cannot
 * hold it. After the query, pf__grid_settle(mv, *reserved) gives the
 * reservation back and charges what the planner holds then. n <= 1 or mv
 * not charged (pf_mapver_charge): PF_OK, 0 reserved. Thread-safe. */
pf_status pf__grid_reserve_agent(const pf_mapver *mv, int32_t n, bool hierarchy, size_t *reserved,
                                 const char *field, pf_proto_error *e);
void pf__grid_settle(const pf_mapver *mv, size_t reserved);
/* The grid agent size n moves on in mv (the map's for n 1), built within
 * the memory budget on first use (pf__grid_reserve_agent, errors naming
 * "agent_size"; a failed build says so) and by *deadline (PF_ECANCELED,
 * nothing in e, past it). */
pf_status pf__grid_agent_grid(const pf_mapver *mv, int32_t n, const uint64_t *deadline,
                              const pf_grid **g, pf_proto_error *e);
/* What pf__grid_reserve_agent would reserve: 0 when agent size n's data
 * (with `hierarchy`, its hierarchy too) is built already or n <= 1. */
size_t pf__grid_agent_need(const pf_mapver *mv, int32_t n, bool hierarchy);

/* A search of a grid algorithm counted in env's metrics (none outside a
 * server). */
void pf__grid_count_search(const pf_kind_env *env, pf_algorithm algo, pf_status st,
                           uint64_t expanded, uint64_t us);

/* kind_grid_path.c: the path operations of the table. */
pf_status pf__grid_path_parse_one(const pf_kind_env *env, const pf_kv *kv, size_t nkv,
                                  const char *body, size_t len, void **q, int64_t *deadline_ms,
                                  pf_proto_error *e);
pf_status pf__grid_path_parse_batch(const pf_kind_env *env, const char *body, size_t len,
                                    size_t max, void **q, size_t *n, int64_t *deadline_ms,
                                    pf_proto_error *e);
void pf__grid_paths_free(void *q, size_t n);
bool pf__grid_path_cached(const pf_mapver *mv, const void *q, size_t i, pf_jsonw *w);
void *pf__grid_scratch_get(const pf_kind_env *env, pf_search_ctx *ctx);
void pf__grid_scratch_put(const pf_kind_env *env, void *scratch);
pf_status pf__grid_path_run(const pf_kind_path_run *run, const void *q, size_t i,
                            const char *prefix, pf_jsonw *w, pf_proto_error *e);
bool pf__grid_path_builds(const pf_mapver *mv, const void *q, size_t i);

/* kind_grid_session.c: the session operations. */
pf_status pf__grid_session_create(const pf_mapver *mv, const pf_session_request *q,
                                  const char *prefix, void **st, size_t *reserve,
                                  pf_proto_error *e);
void pf__grid_session_free(void *st);
size_t pf__grid_session_memory(const void *st);
void pf__grid_session_where(const void *st, pf_place *position, pf_place *goal);
const char *pf__grid_session_rebase(void *st, const pf_mapver *from, const pf_mapver *to);
pf_error pf__grid_session_run(const pf_kind_session_run *run, void *st, const pf_update_list *l,
                              pf_jsonw *w);
bool pf__grid_session_builds(const pf_mapver *mv, const void *st);

/* kind_grid_export.c: GET .../cells and .../hierarchy. */
void pf__grid_write_cells(const pf_mapver *mv, pf_jsonw *w);
pf_status pf__grid_write_hierarchy(const pf_mapver *mv, bool intra, pf_jsonw *w, pf_proto_error *e);

/* kind_grid_sight.c: line of sight for other maps (kind.h's
 * line_of_sight; the coordinates are in that file's comment). */
pf_status pf__grid_line_of_sight(const pf_mapver *mv, const char *agent_type, int dim,
                                 const double *pos, const uint32_t *pairs, size_t n,
                                 uint8_t *visible, const uint64_t *deadline, const char *prefix,
                                 pf_proto_error *e);

/* kind_grid_field.c and kind_grid_table.c: flow fields, distance tables. */
extern const pf_kind_request_ops pf__grid_flowfield;
extern const pf_kind_request_ops pf__grid_table;

#endif
