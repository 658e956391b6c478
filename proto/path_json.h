/* path_json.h -- path requests in (JSON body, query string, batch) and path
 * answers out.
 *
 * Request fields (all but start and goal optional):
 *   start, goal    [x, y]
 *   algorithm      bfs dijkstra astar weighted greedy jps hpa (default: hpa on
 *                  maps with a hierarchy, else astar; the server decides)
 *   weight         >= 1, used by "weighted" only (default 1.5)
 *   heuristic      default octile manhattan chebyshev euclidean
 *   smooth         string-pull the path into waypoints with line of sight
 *   debug          add the expanded cells to the answer
 *   deadline_ms    1..3600000, the server's default when absent
 *   max_expanded   node budget, 0 = unlimited
 *   cache          false bypasses the per-map path cache (default true)
 * With limits (the *_lim parsers; the others accept none of these):
 *   goals          [[x, y], ...] instead of goal: the path to the nearest,
 *                  1..max_goals points (PF_ELIMIT past it)
 *   agent_size     n: an n x n agent anchored at its top-left cell
 *                  (clearance.h), 1..max_agent_size, default 1
 *   partial        answer an unreachable goal with the path to the
 *                  reachable cell closest to it (search.h), default false
 *   snap           move a blocked or off-map start or goal to the nearest
 *                  walkable cell (snap.h), default false
 *   snap_radius    0..max_snap_radius, with snap only; default
 *                  min(PF_PATH_DEFAULT_SNAP_RADIUS, max_snap_radius)
 * Unknown fields are rejected so that typos do not pass silently.
 *
 * Parsers fill a pf_proto_error naming the field. Writers use pf_jsonw and
 * build no tree. Thread-safe.
 */
#ifndef PF_PROTO_PATH_JSON_H
#define PF_PROTO_PATH_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "grid.h"
#include "jsonr.h"
#include "jsonw.h"
#include "search.h"

#define PF_PATH_MAX_DEADLINE_MS 3600000
#define PF_PATH_DEFAULT_WEIGHT 1.5
#define PF_PATH_DEFAULT_SNAP_RADIUS 8

/* The server's named limits on the fields above (--max-goals,
 * --max-agent-size, --max-snap-radius). */
typedef struct pf_path_limits {
    size_t max_goals;        /* >= 1 */
    int32_t max_agent_size;  /* 1..PF_AGENT_SIZE_MAX */
    int32_t max_snap_radius; /* 0..PF_SNAP_MAX_RADIUS */
} pf_path_limits;

typedef struct pf_path_request {
    pf_point start, goal;
    bool has_algorithm; /* false: the server picks the map's default */
    pf_algorithm algorithm;
    pf_heuristic heuristic;
    double weight;
    bool smooth;
    bool debug;
    bool use_cache;
    int64_t deadline_ms;   /* 0 = not given */
    uint64_t max_expanded; /* 0 = unlimited */
    pf_point *goals;       /* owned (pf_path_request_clear); NULL unless "goals" was given */
    size_t ngoals;
    int32_t agent_size; /* >= 1 */
    bool partial;
    bool snap;
    int32_t snap_radius;
} pf_path_request;

/* A request with every option at its default (start and goal (0,0)). */
pf_path_request pf_path_request_default(void);
/* Frees what the request owns (its goals); the request stays valid with
 * no goals. */
void pf_path_request_clear(pf_path_request *r);

/* Parses a single request body. Statuses: PF_EPARSE (malformed JSON, wrong
 * type, missing start/goal, unknown field), PF_EINVAL (a value out of its
 * range or an unknown algorithm), PF_ERANGE (a coordinate beyond int32). */
pf_status pf_path_request_parse(const char *buf, size_t len, pf_path_request *out,
                                pf_proto_error *e);

/* Reads one request from a JSON object. `prefix` ("" or "queries[3].") is
 * put in front of field names in errors. `allow_deadline` false rejects a
 * deadline_ms member (batch items share the batch's deadline). */
pf_status pf_path_request_from_json(const cJSON *obj, const char *prefix, bool allow_deadline,
                                    pf_path_request *out, pf_proto_error *e);

/* One query-string argument; value NULL for a bare key. */
typedef struct pf_kv {
    const char *key;
    const char *value;
} pf_kv;

/* Reads the GET form: start=x,y&goal=x,y&algorithm=..&weight=..&heuristic=..
 * &smooth=true&debug=1&deadline_ms=..&max_expanded=..&cache=false. Statuses as
 * pf_path_request_parse. */
pf_status pf_path_request_from_query(const pf_kv *kv, size_t n, pf_path_request *out,
                                     pf_proto_error *e);

/* Parses {"queries":[request, ...], "deadline_ms": N}. At most max_queries
 * queries (PF_ELIMIT naming "queries" past it), at least one. On success
 * *out (free with free()) holds *n requests and *deadline_ms the batch's
 * deadline (0 = not given). */
pf_status pf_path_batch_parse(const char *buf, size_t len, size_t max_queries,
                              pf_path_request **out, size_t *n, int64_t *deadline_ms,
                              pf_proto_error *e);

/* The same four parsers with the fields of `lim` accepted (see above).
 * Requests they return may own goals: free them with
 * pf_path_request_clear, a batch with pf_path_batch_free. PF_ENOMEM. */
pf_status pf_path_request_parse_lim(const char *buf, size_t len, const pf_path_limits *lim,
                                    pf_path_request *out, pf_proto_error *e);
pf_status pf_path_request_from_json_lim(const cJSON *obj, const char *prefix, bool allow_deadline,
                                        const pf_path_limits *lim, pf_path_request *out,
                                        pf_proto_error *e);
/* GET form: goals=x,y;x,y;...&agent_size=N&partial=true&snap=true&snap_radius=N */
pf_status pf_path_request_from_query_lim(const pf_kv *kv, size_t n, const pf_path_limits *lim,
                                         pf_path_request *out, pf_proto_error *e);
pf_status pf_path_batch_parse_lim(const char *buf, size_t len, size_t max_queries,
                                  const pf_path_limits *lim, pf_path_request **out, size_t *n,
                                  int64_t *deadline_ms, pf_proto_error *e);
/* Frees reqs[0..n) and what each owns. NULL is a no-op. */
void pf_path_batch_free(pf_path_request *reqs, size_t n);

/* What the server answers for one path query. */
typedef struct pf_path_answer {
    pf_status status;       /* PF_OK, PF_NO_PATH or PF_EBUDGET */
    pf_algorithm algorithm; /* the algorithm that ran */
    double cost;
    const pf_point *path; /* borrowed */
    size_t path_len;
    const int32_t *expanded_cells; /* borrowed; cell indices y*w+x, debug only */
    size_t expanded_cells_len;
    const pf_point *abstract_path; /* borrowed; hpa's abstract path, debug only */
    size_t abstract_path_len;
    int32_t map_width; /* to turn cell indices into [x, y] */
    uint64_t map_version;
    uint64_t expanded;
    uint64_t time_us;
    bool cached;
    bool debug; /* write "expanded_cells" */
    /* Partial answer (search.h): path ends at the cell closest to the goal;
     * why: PF_NO_PATH, PF_EBLOCKED or PF_EBUDGET. */
    bool partial;
    pf_status partial_reason;
    /* A request with goals: the goal reached (or, partial, the one closest
     * to the end) and its cell. */
    bool has_goals;
    int32_t goal_index;
    pf_point goal;
    int32_t agent_size; /* written when > 1 */
    /* snap: where a moved start or goal went (the goal reached, for goals). */
    bool start_snapped, goal_snapped;
    pf_point start_at, goal_at;
    const char *note; /* a sentence, e.g. why another algorithm ran; NULL = none */
} pf_path_answer;

/* Writes {"found":..,"cost":..,"path":[[x,y],..],"algorithm":..,"map_version":..,
 * "stats":{"expanded":..,"time_us":..,"cached":..}} (plus "reason" when not
 * found, and with debug "expanded_cells" and, when there is one,
 * "abstract_path") as a value. A partial answer has "found":false,
 * "partial":true, "reason", "cost", "path" and "end":[x,y]; goals add
 * "goal_index" and "goal", agent sizes > 1 "agent_size", a snap
 * "snapped":{"start":[x,y],"goal":[x,y]} (the members that moved), a note
 * "note". */
void pf_path_write_answer(pf_jsonw *w, const pf_path_answer *a);

/* The two halves of that object, for the path cache: the members that are
 * the same for every answer of one query on one map version (found, cost or
 * reason, path, algorithm, map_version), stored serialized so a cache hit is
 * a copy, and the rest (stats, expanded_cells). Call them between
 * pf_jsonw_obj_begin and pf_jsonw_obj_end. */
void pf_path_write_members(pf_jsonw *w, const pf_path_answer *a);
void pf_path_write_stats(pf_jsonw *w, const pf_path_answer *a);

#endif
