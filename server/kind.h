/* kind.h -- a world kind is one module: the table of operations every kind
 * of map (grid, navmesh, ...) gives the server, and the registry of kinds.
 *
 * pathd serves several kinds of world. Everything the server does with a
 * map that depends on what the map is goes through the map's pf_kind_ops
 * (mv->kind): its upload is parsed and built, its PATCH applied, its info
 * written, its path queries parsed, cached and run, its sessions created
 * and run, and it is written to and read back from both stores (--data-dir
 * and --store). A feature only some kinds have (flow fields, distance
 * tables, the cell export, the HPA* hierarchy, crowds) is one bit of
 * `features`: the route tests the bit once and, without it, answers 422
 * unsupported with the sentence pf_kind_refuse builds from the kind's name.
 * Outside the kind modules (server/kind_<name>*.c over core/ or nav/, and
 * their codecs in proto/) nothing in server/ or proto/ asks which kind a
 * map is; docs/KINDS.md lists what adding a kind touches.
 *
 * This follows SQLite's sqlite3_io_methods and redis's moduleType: the rest
 * of the program calls one interface and each variant lives in its own
 * files; pathd's store backends (maps_internal.h) are built the same way.
 *
 * Ownership. A kind's upload, PATCH, path queries and session state are
 * opaque pointers (void *) the kind makes and frees through its own table;
 * the callers only carry them. A map version's world (pf_mapver_world) is
 * the kind's too, freed by world_free when the version's last reference
 * goes.
 *
 * Environments. Each server (pf_kinds_create) gives every registered kind
 * an environment: the server's parts the kind uses (pf_kind_deps) and the
 * kind's own state (env_create: e.g. a navmesh's query scratch and tile
 * runner). A version remembers the environment it was built in
 * (pf_mapver_env), so the operations on it reach the same parts. Versions
 * made outside a server (unit tests) have none (NULL): only the operations
 * that say so accept that.
 *
 * Threads. The tables are constant. Operations that take a map version run
 * on a worker unless their comment says otherwise; the `parse` operations
 * run on an I/O thread and must be quick (no search, no build). A version
 * is immutable: any number of threads may run operations on one at once.
 * A session's state is used by one thread at a time (its holder).
 */
#ifndef PF_SERVER_KIND_H
#define PF_SERVER_KIND_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "config.h"
#include "errors.h"
#include "jsonw.h"
#include "memory.h"
#include "path_json.h"
#include "pool.h"
#include "router.h"
#include "search.h"
#include "session_json.h"
#include "status.h"

struct pf_mapver;
struct pf_metrics;

/* Features: routes that only some kinds serve. */
#define PF_KIND_CELLS (1u << 0)     /* GET .../cells: the map as cells, an upload that reads back */
#define PF_KIND_HIERARCHY (1u << 1) /* GET .../hierarchy: the HPA* abstract graph */
#define PF_KIND_FLOWFIELDS (1u << 2)   /* POST .../flowfield */
#define PF_KIND_TABLES (1u << 3)       /* POST .../table: distance tables */
#define PF_KIND_CROWDS (1u << 4)       /* .../crowds: DetourCrowd agents */
#define PF_KIND_MESH (1u << 5)         /* GET .../mesh: the navigation mesh's geometry */
#define PF_KIND_GRAPH_EXPORT (1u << 6) /* GET .../graph: a waypoint graph's nodes and edges */

/* At most this many kinds, and algorithms of all kinds together (the
 * by-algorithm metrics). */
#define PF_KINDS_MAX 8
#define PF_KINDS_ALGORITHMS_MAX 32

typedef struct pf_kind_ops pf_kind_ops;

/* The server's parts a kind may use, borrowed for the server's life. */
typedef struct pf_kind_deps {
    const pf_config *cfg;
    pf_mem *mem;                /* the memory budget versions are charged to */
    struct pf_metrics *metrics; /* searches, cache hits and misses */
    pf_pool *pool;              /* work a build may spread over the workers; NULL: none */
} pf_kind_deps;

/* One kind in one server. */
typedef struct pf_kind_env {
    const pf_kind_ops *kind;
    pf_kind_deps d;
    void *state; /* the kind's own (env_create), or NULL */
} pf_kind_env;

/* The server's maps as an upload may name them (a graph's auto_link map):
 * get gives a reference to the current version of map id in *out (the
 * caller releases it), loading it from a shared store first, or NULL when
 * there is no such map; store errors in e. On a worker. */
typedef struct pf_kind_maps {
    void *ctx;
    pf_status (*get)(void *ctx, const char *id, struct pf_mapver **out, pf_proto_error *e);
} pf_kind_maps;

/* An upload as it came: the body and how it was declared. root is the
 * parsed JSON of a JSON body (NULL otherwise); the kind may take it
 * (set *root to NULL after freeing it) to parse the body another way with
 * less memory. args are the query string's (copied by the route; a JSON
 * body has them too, and most kinds ignore them); too_many_args when
 * there were more than the route keeps. */
typedef struct pf_kind_upload {
    pf_body_kind body_kind;
    const char *body;
    size_t len;
    cJSON **root;
    const pf_kv *args;
    size_t nargs;
    bool too_many_args;
    const pf_kind_maps *maps; /* the other maps; NULL: none (a store's replay, a unit test) */
} pf_kind_upload;

/* A map read back from a store: the image store_encode wrote and, with a
 * shared store, the PATCH bodies logged after it (as sent), to apply in
 * order. */
typedef struct pf_kind_stored {
    const char *id;
    const unsigned char *img;
    size_t img_len;
    const char *const *bodies;
    const size_t *lens;
    size_t nbodies;
    const uint8_t *hash; /* the upload's SHA-256, or NULL */
} pf_kind_stored;

/* Why a stored map did not load (store_load), and what e.message holds
 * for the stores' sentences. */
typedef enum pf_kind_store_fault {
    PF_KIND_STORE_DAMAGED = 1, /* not one of ours: digest or layout (e unused) */
    PF_KIND_STORE_LIMITS,      /* past this server's limits: e.message names the flags */
    PF_KIND_STORE_NO_BUILD,    /* it does not build here any more: e says why */
    PF_KIND_STORE_LOG,         /* logged PATCH bodies[at] does not apply: e.message says why */
    PF_KIND_STORE_LATER        /* out of memory, or out of time: may load next time; e says why */
} pf_kind_store_fault;

typedef struct pf_kind_store_error {
    pf_kind_store_fault fault;
    size_t at;
    pf_proto_error e;
} pf_kind_store_error;

/* What a path query runs with on a worker. */
typedef struct pf_kind_path_run {
    const struct pf_mapver *mv;
    void *scratch;            /* scratch_get's */
    const uint64_t *deadline; /* the request's, pf_clock_now_ns() time */
    bool batch;               /* one query of a batch: look in the cache first */
} pf_kind_path_run;

/* What a session's run sees beside its own state. */
typedef struct pf_kind_session_run {
    const struct pf_mapver *mv; /* the version the session is on now */
    const char *session_id, *map_id;
    int64_t ttl_s;
    size_t record_bytes; /* what the session's record holds beside the kind's state */
    const char *rebase;  /* "none", "incremental" or "rebuilt": session_rebase's */
    struct pf_metrics *metrics;
    uint64_t t0_ns; /* when the request's job started */
    /* This run's plan limits, the session's (session_json.h): expansions
     * (0: none) and the pf_clock_now_ns() time its plan stops at (0:
     * none). A plan they stop answers "node_budget" or "deadline" and the
     * next run goes on with it. */
    uint64_t max_expanded, deadline_ns;
    /* The stream the answer goes to (session.h's pf_session_run_on), 0 for
     * an HTTP answer (always full). A session remembers the stream it last
     * answered in full and what it sent: a run on the same stream whose
     * plan did not change answers short (pf_session_write_short). */
    uint64_t stream;
} pf_kind_session_run;

/* One part of a feature request's run on a worker (routes_feature.h). */
typedef struct pf_kind_slice {
    const uint64_t *deadline; /* the request's, pf_clock_now_ns() time */
    uint64_t slice_ns;        /* --slice-ms: how long a part runs before it may pause */
    uint64_t slice_end;       /* when the part the route started ends (monotonic ns) */
    /* Out: the run paused (nothing written, e untouched, its state kept
     * in req for the next part) holding `held` bytes meanwhile, which the
     * route charges to the memory budget while the job waits. */
    bool paused;
    size_t held;
} pf_kind_slice;

/* A request a feature route hands to the kind whole (routes_feature.h):
 * parse on the I/O thread (*req freed with free_req, also after an
 * error, a pause or a deadline: it frees the run's state too), cached
 * (NULL: never cached) writes a cached answer into w (initializing it)
 * on the I/O thread, run on a worker (ctx the worker's search context)
 * until *s->deadline (PF_ECANCELED, nothing written) initializes and
 * writes the answer into w, or an error into e (w not initialized), or
 * pauses (s->paused) past s->slice_end; it is called again (maybe on
 * another worker, with another ctx) to go on. */
typedef struct pf_kind_request_ops {
    pf_status (*parse)(const pf_kind_env *env, const char *body, size_t len, void **req,
                       int64_t *deadline_ms, pf_proto_error *e);
    bool (*cached)(const struct pf_mapver *mv, const void *req, pf_jsonw *w);
    pf_status (*run)(const struct pf_mapver *mv, pf_search_ctx *ctx, void *req, pf_kind_slice *s,
                     pf_jsonw *w, pf_proto_error *e);
    void (*free_req)(void *req);
    /* Whether it builds data first (as path_builds). NULL: never. */
    bool (*builds)(const struct pf_mapver *mv, const void *req);
} pf_kind_request_ops;

struct pf_kind_ops {
    /* "grid", "navmesh": the "kind" of JSON uploads, map info and the
     * shared store's index, and the subject of refusals. */
    const char *name;
    unsigned features; /* PF_KIND_* */
    /* The non-JSON uploads this kind reads (router.h's PF_BODY_* bits): a
     * Moving AI map, an OBJ model. A JSON upload names its kind in "kind"
     * (default_json: this kind when it names none). */
    unsigned upload_bodies;
    bool default_json;
    /* Its algorithms: how many, and algorithm i's name, the by-algorithm
     * metrics' label of slot pf_kind_slot(kind, i). */
    const char *(*algorithm_name)(size_t i);
    size_t nalgorithms;
    /* The data directory's file of a map of this kind: DIR/<id><suffix>. */
    const char *store_suffix;

    /* The kind in one server: its state (a sentence in err on failure),
     * its members of GET /v1/info. */
    pf_status (*env_create)(const pf_kind_deps *d, void **state, char *err, size_t errlen);
    void (*env_destroy)(void *state);
    void (*write_server_info)(const pf_kind_env *env, pf_jsonw *w);

    /* A version's world: freed with the version; the bytes it holds now
     * (its charge to the budget follows them, registry.h); GET
     * /v1/maps/{id} (a whole object); and the members the shared store
     * lists for it (store_redis.h's info). I/O thread allowed. */
    void (*world_free)(void *world);
    size_t (*world_memory)(const void *world);
    void (*write_info)(const struct pf_mapver *mv, pf_jsonw *w);
    void (*write_summary)(const struct pf_mapver *mv, pf_jsonw *w);

    /* Uploads (PUT /v1/maps/{id}, POST /v1/maps): parse (the slow part's
     * input: the route drops the body after it) and build an unpublished
     * version with one reference (t0_ns: when the upload's parse began,
     * for build_us; hash: the content hash, NULL for none). build takes
     * `up` whatever it returns. e names the field at fault. */
    pf_status (*upload_parse)(const pf_kind_env *env, const pf_kind_upload *in, void **up,
                              pf_proto_error *e);
    pf_status (*upload_build)(const pf_kind_env *env, void *up, const char *id,
                              const uint8_t hash[32], uint64_t t0_ns, struct pf_mapver **out,
                              pf_proto_error *e);

    /* PATCH /v1/maps/{id}: parse (I/O thread; at most max_changes
     * changes, 0: any number, as a logged PATCH replayed), apply to cur
     * making the next version (one reference, its change log set; bounded:
     * within the kind's limit on a build's time, as a request's change is;
     * a logged change replayed is not), free. */
    pf_status (*patch_parse)(const pf_kind_env *env, const char *body, size_t len,
                             size_t max_changes, void **patch, pf_proto_error *e);
    pf_status (*patch_apply)(const pf_kind_env *env, const struct pf_mapver *cur, const void *patch,
                             bool bounded, struct pf_mapver **out, pf_proto_error *e);
    void (*patch_free)(void *patch);

    /* Stores: the image of a version (its version number inside it), and
     * a version built back from an image and the PATCH bodies logged
     * after it. */
    pf_status (*store_encode)(const struct pf_mapver *mv, uint64_t version, unsigned char **img,
                              size_t *len);
    pf_status (*store_load)(const pf_kind_env *env, const pf_kind_stored *in,
                            struct pf_mapver **out, uint64_t *version, pf_kind_store_error *why);

    /* Paths (GET/POST .../path, POST .../paths). Parse on the I/O thread:
     * one query (a GET's query string kv when not NULL, else a JSON body),
     * or a batch (at most max queries); *q gets n queries (free with paths_free), *deadline_ms
     * the request's (0: none). cached: query i found in mv's cache is
     * written whole into w (true), counting the lookup. scratch_get and
     * scratch_put bracket a worker's run of queries (ctx: the worker's
     * search context; NULL on out of memory). run: query i into w, or
     * PF_ECANCELED (the deadline passed: nothing written), or an error
     * in e (nothing written), field names prefixed with `prefix`. */
    pf_status (*path_parse_one)(const pf_kind_env *env, const pf_kv *kv, size_t nkv,
                                const char *body, size_t len, void **q, int64_t *deadline_ms,
                                pf_proto_error *e);
    pf_status (*path_parse_batch)(const pf_kind_env *env, const char *body, size_t len, size_t max,
                                  void **q, size_t *n, int64_t *deadline_ms, pf_proto_error *e);
    void (*paths_free)(void *q, size_t n);
    bool (*path_cached)(const struct pf_mapver *mv, const void *q, size_t i, pf_jsonw *w);
    void *(*scratch_get)(const pf_kind_env *env, pf_search_ctx *ctx);
    void (*scratch_put)(const pf_kind_env *env, void *scratch);
    pf_status (*path_run)(const pf_kind_path_run *run, const void *q, size_t i, const char *prefix,
                          pf_jsonw *w, pf_proto_error *e);
    /* Whether query i builds data first (a grid's new agent size: as long
     * as a map build), so its job moves to the build queue before it runs
     * (request.h's pf_req_run_as_build). NULL: never. */
    bool (*path_builds)(const struct pf_mapver *mv, const void *q, size_t i);

    /* Sessions (session.h). create: checks q against mv (fields prefixed
     * with `prefix`) and makes the session's state; *reserve gets the
     * bytes the budget must hold for it before it is added. where: its
     * position and goal for GET .../sessions. rebase: the session's map
     * has a newer version `to` (same lineage): returns "incremental",
     * "rebuilt" or "none". run: validate and apply the updates l (NULL:
     * a read), plan, count it, and write the answer or an error body into
     * w; returns PF_ERR_NONE or the error w holds. */
    pf_status (*session_create)(const struct pf_mapver *mv, const pf_session_request *q,
                                const char *prefix, void **st, size_t *reserve, pf_proto_error *e);
    void (*session_free)(void *st);
    size_t (*session_memory)(const void *st);
    void (*session_where)(const void *st, pf_place *position, pf_place *goal);
    const char *(*session_rebase)(void *st, const struct pf_mapver *from,
                                  const struct pf_mapver *to);
    pf_error (*session_run)(const pf_kind_session_run *run, void *st, const pf_update_list *l,
                            pf_jsonw *w);
    /* Whether its next plan builds data first (as path_builds): its job is
     * queued as a build. NULL: never. */
    bool (*session_builds)(const struct pf_mapver *mv, const void *st);

    /* PF_KIND_CELLS: GET .../cells (a whole object). PF_KIND_HIERARCHY:
     * GET .../hierarchy (intra: the intra-cluster edges too); 422 in e
     * when this version has none. Both initialize w (sized for the
     * answer), the hierarchy only when it returns PF_OK. */
    void (*write_cells)(const struct pf_mapver *mv, pf_jsonw *w);
    pf_status (*write_hierarchy)(const struct pf_mapver *mv, bool intra, pf_jsonw *w,
                                 pf_proto_error *e);
    /* PF_KIND_MESH: GET .../mesh (agent_type: whose mesh, "" or NULL the
     * default, one the map lacks 422 naming "agent_type"; triangles: the
     * detail triangles; input: the geometry it was built from), sized
     * first against --max-mesh-bytes (413 in e naming what to leave out);
     * initializes w only when it returns PF_OK. On a worker. */
    pf_status (*write_mesh)(const struct pf_mapver *mv, const char *agent_type, bool triangles,
                            bool input, pf_jsonw *w, pf_proto_error *e);
    /* PF_KIND_GRAPH_EXPORT: GET .../graph (the version's nodes and edges
     * with their states), sized first against --max-graph-bytes (413 in
     * e); initializes w only when it returns PF_OK. On a worker. */
    pf_status (*write_graph)(const struct pf_mapver *mv, pf_jsonw *w, pf_proto_error *e);

    /* Line of sight between points on this map, for another map's use (a
     * graph upload's auto_link; NULL: the kind has none, and the caller
     * refuses 422 naming the map). For each of the n pairs (pairs[2k],
     * pairs[2k + 1], indices of the points pos[3 i .. 3 i + 2]) sets
     * visible[k] to 1 when mv's world sees from one to the other, else 0.
     * dim is the points' dimension (2: pos[3 i + 2] is 0); the kind refuses
     * one it does not read (422 naming `prefix`map) and checks agent_type
     * (NULL: not given; 422 naming `prefix`agent_type). What "sees" means
     * and the points' coordinates are the kind's (docs/graphs.md,
     * "Auto-linking"). PF_ECANCELED (nothing in e) once *deadline
     * (pf_clock_now_ns() time; NULL: none) has passed, checked every 1,024
     * pairs; PF_ENOMEM. On a worker; mv is any version of the kind. */
    pf_status (*line_of_sight)(const struct pf_mapver *mv, const char *agent_type, int dim,
                               const double *pos, const uint32_t *pairs, size_t n, uint8_t *visible,
                               const uint64_t *deadline, const char *prefix, pf_proto_error *e);

    /* PF_KIND_FLOWFIELDS (POST .../flowfield) and PF_KIND_TABLES (POST
     * .../table): their requests (NULL without the bit). */
    const struct pf_kind_request_ops *flowfield, *table;
};

/* The kinds this build serves, registered in server/kinds.c (one line a
 * kind), NULL-terminated; the first is the default of a request whose map
 * does not exist (its body is parsed as that kind's before the 404). */
extern const pf_kind_ops *const pf_kinds_registered[];

/* A registered kind by name, or NULL. */
const pf_kind_ops *pf_kind_by_name(const char *name);
/* Whether kind has every feature bit of `features`. */
bool pf_kind_has(const pf_kind_ops *kind, unsigned features);
/* 422 unsupported for a map of a kind without `feature` (one PF_KIND_*
 * bit): "Map 'x' is a navmesh map: it has no flow fields (grid maps have
 * them)." with `field` at fault (NULL: none). Returns PF_EUNSUPPORTED. */
pf_status pf_kind_refuse(pf_proto_error *e, const pf_kind_ops *kind, const char *map_id,
                         unsigned feature, const char *field);
/* Looks k up in cache (one of mv's caches), counting the hit or the miss
 * in the metrics of mv's environment (none without one). */
bool pf_kind_cache_get(const struct pf_mapver *mv, pf_cache *cache, const pf_cache_key *k,
                       pf_cache_value *v);
/* A stored map's logged PATCH bodies (in->bodies) applied in order
 * through kind's patch_parse and patch_apply, each making the next version
 * from *mv (released as it is replaced). On a body that does not apply:
 * *mv is released and NULL, why says PF_KIND_STORE_LOG at which body. For
 * the kinds whose PATCH makes a new version (a kind that changes its world
 * in place before one build replays on its own). */
pf_status pf_kind_replay_log(const pf_kind_ops *kind, const pf_kind_env *env,
                             const pf_kind_stored *in, struct pf_mapver **mv,
                             pf_kind_store_error *why);
/* The by-algorithm metrics: kind's algorithm i's slot (the registered
 * kinds' algorithms one after the other: a grid's are core's pf_algorithm),
 * how many slots the registered kinds use, and slot s's label. */
size_t pf_kind_slot(const pf_kind_ops *kind, size_t i);
size_t pf_kinds_algorithm_slots(void);
const char *pf_kinds_algorithm_label(size_t s);

/* Every kind's environment in one server. */
typedef struct pf_kinds pf_kinds;

/* Makes each registered kind's environment over d (copied). PF_ENOMEM or
 * a kind's error, with a sentence in err. */
pf_status pf_kinds_create(const pf_kind_deps *d, pf_kinds **out, char *err, size_t errlen);
/* NULL is a no-op. Call after every version built here is gone. */
void pf_kinds_destroy(pf_kinds *k);
/* kind's environment in k (kind must be registered). */
const pf_kind_env *pf_kinds_env(const pf_kinds *k, const pf_kind_ops *kind);
/* The default kind's environment (pf_kinds_registered[0]). */
const pf_kind_env *pf_kinds_default(const pf_kinds *k);
/* The kind an upload is: a JSON body by its "kind" member (a string
 * naming a registered kind; absent: the default_json kind), another body
 * by its declared type (upload_bodies). PF_EINVAL / PF_EPARSE naming
 * "kind" otherwise. */
pf_status pf_kinds_for_upload(const pf_kinds *k, pf_body_kind body_kind, const cJSON *root,
                              const pf_kind_env **out, pf_proto_error *e);
/* Writes every kind's members of GET /v1/info. */
void pf_kinds_write_server_info(const pf_kinds *k, pf_jsonw *w);

#endif
