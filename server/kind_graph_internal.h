/* kind_graph_internal.h -- what the graph kind's files (kind_graph.c: the
 * table, uploads, PATCH, stores; kind_graph_path.c: path queries) share. */
#ifndef PF_SERVER_KIND_GRAPH_INTERNAL_H
#define PF_SERVER_KIND_GRAPH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "graph.h"
#include "graph_json.h"
#include "kind_graph.h"
#include "metrics.h"
#include "registry.h"

/* A search context and the bytes of it charged to the memory budget
 * (PF_MEM_SCRATCH): what it held when it was last given back. */
typedef struct pf__graph_scratch {
    pf_graph_ctx *ctx;
    size_t charged;
} pf__graph_scratch;

/* The kind in one server: its limits and a pool of search contexts (one
 * a worker running graph queries; a context grows to the largest graph
 * it searched). */
typedef struct pf__graph_env {
    pf_graph_limits limits;
    uint32_t landmarks, landmark_max_nodes; /* --graph-landmarks, --graph-landmark-max-nodes */
    uint32_t ch_max_nodes;                  /* --graph-ch-max-nodes (kind_graph_ch.c) */
    uint32_t ch_build_ms;                   /* --graph-ch-build-ms (kind_graph_ch.c) */
    size_t labels_max_bytes;                /* --graph-labels-max-bytes (kind_graph_ch.c) */
    uint64_t max_link_pairs;                /* --graph-max-auto-link-pairs (kind_graph_link.c) */
    pthread_mutex_t lock;
    pf__graph_scratch **free_ctx;
    size_t nfree, max_free;
} pf__graph_env;

/* An uploaded document (ids, tags, positions), shared by every version of
 * one upload: a PATCH changes only the graph's state. */
typedef struct pf__graph_docref {
    atomic_int refs;
    pf_graph_doc d;
    pf_graph_tag_names tags; /* the tags queries may exclude (set by the build) */
    /* auto_link: asked (al.present) with the named map's version it runs
     * on (a reference, held from the parse to the build), and what it did
     * (the info's graph.auto_link; the stores keep it). */
    pf_graph_auto_link al;
    pf_mapver *link_map;
    struct {
        bool done;
        char map[PF_GRAPH_ID_MAX + 1];
        uint64_t map_version, candidates, linked;
    } linked;
} pf__graph_docref;

/* A version's world. */
typedef struct pf__graph_world {
    pf__graph_docref *doc;
    const pf_graph *g;
    size_t bytes;
    const char *ch_absent; /* why g has no hierarchy (a static string), NULL: it has one */
} pf__graph_world;

static inline const pf__graph_env *pf__graph_env_of(const pf_kind_env *env) {
    return (const pf__graph_env *)env->state;
}
static inline const pf__graph_world *pf__graph_world_of(const pf_mapver *mv) {
    return (const pf__graph_world *)pf_mapver_world(mv);
}

/* The algorithm a request's runs on mv: "auto" (PF_GRAPH_AUTO) and "ch"
 * are ch where the version has a contraction hierarchy; else they and
 * "alt" are alt where the version has landmarks it may use (a positive
 * PATCH factor), else astar (what the answer then names). */
pf_graph_algorithm pf__graph_algorithm(const pf_mapver *mv, pf_graph_algorithm asked);

/* kind_graph_ch.c: gives g (a version no one searches yet) its contraction
 * hierarchy when the graph is small enough, the budget holds the build and
 * it ends within --graph-ch-build-ms; else g stays without one. Returns
 * NULL (built) or why not, a static string: "disabled" (the flag is 0),
 * "too_many_nodes", "memory_budget", "build_deadline", "shortcut_cap",
 * "no_memory". */
const char *pf__graph_ch_prepare(const pf_kind_env *env, pf_graph *g);

void pf__graph_count_search(pf_metrics *m, pf_graph_algorithm a, pf_metrics_outcome outcome,
                            uint64_t expanded, uint64_t us);

/* kind_graph_path.c: the path operations of the table. */
pf_status pf__graph_path_parse_one(const pf_kind_env *env, const pf_kv *kv, size_t nkv,
                                   const char *body, size_t len, void **q, int64_t *deadline_ms,
                                   pf_proto_error *e);
pf_status pf__graph_path_parse_batch(const pf_kind_env *env, const char *body, size_t len,
                                     size_t max, void **q, size_t *n, int64_t *deadline_ms,
                                     pf_proto_error *e);
void pf__graph_paths_free(void *q, size_t n);
bool pf__graph_path_cached(const pf_mapver *mv, const void *q, size_t i, pf_jsonw *w);
/* A context from the pool (a new one when it is empty), NULL when out of
 * memory; put gives it back, charging what it grew by (a search cannot do
 * without it: charged, not refused), or frees it and its charge when the
 * pool is full. */
void *pf__graph_scratch_get(const pf_kind_env *env, pf_search_ctx *ctx);
void pf__graph_scratch_put(const pf_kind_env *env, void *scratch);
void pf__graph_scratch_free(const pf_kind_env *env, pf__graph_scratch *s);
pf_status pf__graph_path_run(const pf_kind_path_run *run, const void *q, size_t i,
                             const char *prefix, pf_jsonw *w, pf_proto_error *e);

/* kind_graph_session.c: the session operations of the table. The search's
 * by-algorithm metrics slot is the kind's last (kind_graph.c). */
pf_status pf__graph_session_create(const pf_mapver *mv, const pf_session_request *q,
                                   const char *prefix, void **st, size_t *reserve,
                                   pf_proto_error *e);
void pf__graph_session_free(void *st);
size_t pf__graph_session_memory(const void *st);
void pf__graph_session_where(const void *st, pf_place *position, pf_place *goal);
const char *pf__graph_session_rebase(void *st, const pf_mapver *from, const pf_mapver *to);
pf_error pf__graph_session_run(const pf_kind_session_run *run, void *st, const pf_update_list *l,
                               pf_jsonw *w);

/* kind_graph_link.c: doc's auto_link on doc->link_map (before the build):
 * the candidate pairs (at most --graph-max-auto-link-pairs: 413 naming
 * auto_link.max_distance), their line of sight, the made edges appended
 * to doc->d and doc->linked set. Errors name auto_link's fields. */
pf_status pf__graph_auto_link(const pf_kind_env *env, pf__graph_docref *doc, pf_proto_error *e);

/* kind_graph_export.c: PF_KIND_GRAPH_EXPORT's write_graph. */
pf_status pf__graph_write_export(const pf_mapver *mv, pf_jsonw *w, pf_proto_error *e);

/* The one resolver of places (paths, tables, goals, sessions): a place
 * as a node, its id looked up (enabled or not), or its point snapped to
 * the nearest enabled node (*dist how far). 422 naming `f` for an
 * unknown id, a point of the wrong dimension, no enabled node (blocked).
 * pf__graph_resolve also refuses a disabled node named by id (422
 * blocked): queries need an enabled end, a session answers it blocked. */
pf_status pf__graph_locate(const pf_mapver *mv, const pf_graph_place *p, const char *f, uint32_t *v,
                           double *dist, pf_proto_error *e);
pf_status pf__graph_resolve(const pf_mapver *mv, const pf_graph_place *p, const char *f,
                            uint32_t *v, double *dist, pf_proto_error *e);

/* A request's exclude_tags as the map's tag bits: 422 naming
 * `prefix`exclude_tags[i] for a tag no node or edge has. */
pf_status pf__graph_exclude_mask(const pf_mapver *mv, const pf_graph_exclude *x, const char *prefix,
                                 uint64_t *mask, pf_proto_error *e);

/* kind_graph_table.c: distance tables (PF_KIND_TABLES). */
extern const pf_kind_request_ops pf__graph_table;

#endif
