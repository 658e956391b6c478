/* kind_navmesh_internal.h -- what the navmesh kind's files share
 * (kind_navmesh.h lists them). Included by server/kind_navmesh*.c only. */
#ifndef PF_SERVER_KIND_NAVMESH_INTERNAL_H
#define PF_SERVER_KIND_NAVMESH_INTERNAL_H

#include "kind_navmesh.h"
#include "metrics.h"
#include "nav_json.h"
#include "nav_path_json.h"
#include "navrun.h"
#include "path_json.h"
#include "session_json.h"

/* The navmesh's state in one server. */
typedef struct pf__nav_env {
    pf_nav_limits limits;   /* --nav-* */
    pf_grid_limits glimits; /* from_grid uploads: --max-map-cells, --max-map-side */
    pf_navrun navrun;       /* the pool as the tile runner (none without a pool) */
    pf_nav_runner runner;
    pf_navq *navq;    /* query scratch: --nav-max-nodes, one a worker kept */
    float max_extent; /* --nav-max-search-extent */
} pf__nav_env;

/* A navmesh version's world. */
typedef struct pf__nav_world {
    const pf_navmesh *nav; /* one reference */
    pf_navsrc *src;        /* one reference */
    size_t bytes;          /* mesh + compressed layers + upload: the budget's charge */
} pf__nav_world;

static inline const pf__nav_env *pf__nav_env_of(const pf_kind_env *env) { return env->state; }

/* A navmesh search counted in m (NULL: none), its outcome as metrics.h
 * says, under its algorithm's slot (kind.h). */
void pf__nav_count_search(pf_metrics *m, pf_nav_algorithm algo, pf_metrics_outcome outcome,
                          uint64_t expanded, uint64_t us);

/* kind_navmesh_path.c: the path operations of the table. */
pf_status pf__nav_path_parse_one(const pf_kind_env *env, const pf_kv *kv, size_t nkv,
                                 const char *body, size_t len, void **q, int64_t *deadline_ms,
                                 pf_proto_error *e);
pf_status pf__nav_path_parse_batch(const pf_kind_env *env, const char *body, size_t len, size_t max,
                                   void **q, size_t *n, int64_t *deadline_ms, pf_proto_error *e);
void pf__nav_paths_free(void *q, size_t n);
bool pf__nav_path_cached(const pf_mapver *mv, const void *q, size_t i, pf_jsonw *w);
void *pf__nav_scratch_get(const pf_kind_env *env, pf_search_ctx *ctx);
void pf__nav_scratch_put(const pf_kind_env *env, void *scratch);
pf_status pf__nav_path_run(const pf_kind_path_run *run, const void *q, size_t i, const char *prefix,
                           pf_jsonw *w, pf_proto_error *e);

/* kind_navmesh_sight.c: line of sight for other maps (kind.h's
 * line_of_sight; the coordinates are in that file's comment). */
pf_status pf__nav_line_of_sight(const pf_mapver *mv, const char *agent_type, int dim,
                                const double *pos, const uint32_t *pairs, size_t n,
                                uint8_t *visible, const uint64_t *deadline, const char *prefix,
                                pf_proto_error *e);

/* kind_navmesh_export.c: GET .../mesh (kind.h's write_mesh). */
pf_status pf__nav_write_mesh(const pf_mapver *mv, const char *agent_type, bool triangles,
                             bool input, pf_jsonw *w, pf_proto_error *e);

/* kind_navmesh_session.c: the session operations. */
pf_status pf__nav_session_create(const pf_mapver *mv, const pf_session_request *q,
                                 const char *prefix, void **st, size_t *reserve, pf_proto_error *e);
void pf__nav_session_free(void *st);
size_t pf__nav_session_memory(const void *st);
void pf__nav_session_where(const void *st, pf_place *position, pf_place *goal);
const char *pf__nav_session_rebase(void *st, const pf_mapver *from, const pf_mapver *to);
pf_error pf__nav_session_run(const pf_kind_session_run *run, void *st, const pf_update_list *l,
                             pf_jsonw *w);

#endif
