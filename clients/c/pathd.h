/* pathd.h -- a C99 client for the pathd v1 HTTP API (libcurl).
 *
 * For C and C++ game servers (Unreal dedicated servers included): drop
 * pathd.h and pathd.c into the build and link libcurl (Debian:
 * libcurl4-openssl-dev; `-lcurl`). No other dependency: the JSON reader and
 * writer and the WebSocket framing (RFC 6455) are in pathd.c.
 *
 * A thin wrapper: each function is one API operation of proto/openapi.yaml
 * (its operationId is named), takes plain C values, and fills plain C
 * structs. Anything not wrapped is reachable through pathd_request.
 *
 * Errors are values. Every call returns a pathd_status and, when it is not
 * PATHD_OK, fills the caller's pathd_error (which may be NULL): the HTTP
 * status, the API's error code as an enum and as text, the field at fault
 * and the message, and Retry-After. An unreachable goal is not an error: it
 * is a pathd_path with found == false, as in the API.
 *
 * Timeouts and retries. Each attempt is bounded by options.timeout_ms
 * (PATHD_ERR_TIMEOUT past it). A 503 answer whose code says the server did
 * nothing (queue full, session or stream limits, shutting down, the shared
 * store out of reach) is retried up to options.max_retries times, after the
 * Retry-After seconds the answer gave (capped by options.max_retry_wait_ms);
 * a read is also retried on any other 503; other answers are never retried.
 *
 * Changes whose outcome is unknown. A change (PUT, POST, PATCH, DELETE of a
 * map) answered 503 store_outcome_unknown (a fleet's Redis did not confirm
 * it in time), 502 or 504 (a proxy lost the answer), a 503 that is not the
 * server's, or sent and never answered (a timeout, a lost connection), may
 * have been made. The client retries it (up to max_retries) only where a
 * retry cannot make it twice: with If-Match set to the ETag the change was
 * based on - the caller's pathd_precondition, else the last ETag this client
 * saw for the map (its uploads, GETs and PATCHes; 64 maps are remembered),
 * else for a PUT If-None-Match: * (the map did not exist), for a DELETE none
 * (deleting twice is harmless: 404 then counts as done), for a POST none
 * (the same bytes find the same map). A 2xx then means the change is made,
 * once. A 412 on a retry, a PATCH with no ETag known, or retries used up
 * is PATHD_ERR_API with code PATHD_CODE_STORE_OUTCOME_UNKNOWN: the change
 * may or may not have been made, read the map (http_status is the last
 * answer's); when the last attempt got no answer at all it stays
 * PATHD_ERR_TIMEOUT or PATHD_ERR_TRANSPORT, which on a change says the
 * same.
 *
 * Memory. Results that hold arrays (paths, batches, lists, raw bodies) own
 * them; free each with the function its type names. On error nothing is
 * left to free. A pathd_client is not thread-safe: use one per thread (each
 * keeps its own connection alive). A pathd_stream belongs to one thread too.
 *
 * Tokens: options.token, when set, is sent as `Authorization: Bearer`
 * (issue 13's read/write scopes; this server build does not check them yet).
 */
#ifndef PATHD_CLIENT_H
#define PATHD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PATHD_CLIENT_VERSION "0.1.0"

typedef enum pathd_status {
    PATHD_OK = 0,
    PATHD_ERR_API,       /* the server answered an error body: see pathd_error.code */
    PATHD_ERR_TIMEOUT,   /* no answer within timeout_ms */
    PATHD_ERR_TRANSPORT, /* could not connect, connection lost, TLS, ... */
    PATHD_ERR_PROTOCOL,  /* the answer is not what the API promises (bad JSON, ...) */
    PATHD_ERR_ARGUMENT,  /* a bad argument (NULL id, an id outside [A-Za-z0-9_.-]{1,64}) */
    PATHD_ERR_NOMEM,
    PATHD_ERR_CLOSED /* the WebSocket stream was closed (see pathd_error.close_code) */
} pathd_status;

/* The API's error codes (ErrorObject.code in proto/openapi.yaml). */
typedef enum pathd_code {
    PATHD_CODE_NONE = 0, /* not an API error */
    PATHD_CODE_UNKNOWN,  /* a code this client does not know yet (see code_text) */
    PATHD_CODE_MALFORMED_JSON,
    PATHD_CODE_INVALID_REQUEST,
    PATHD_CODE_MALFORMED_MAP,
    PATHD_CODE_INVALID_MAP_ID,
    PATHD_CODE_MAP_NOT_FOUND,
    PATHD_CODE_NOT_FOUND,
    PATHD_CODE_METHOD_NOT_ALLOWED,
    PATHD_CODE_BODY_TOO_LARGE,
    PATHD_CODE_LIMIT_EXCEEDED,
    PATHD_CODE_UNSUPPORTED_MEDIA_TYPE,
    PATHD_CODE_INVALID_VALUE,
    PATHD_CODE_OFF_MAP,
    PATHD_CODE_BLOCKED,
    PATHD_CODE_UNSUPPORTED,
    PATHD_CODE_OVERLOADED,
    PATHD_CODE_SHUTTING_DOWN,
    PATHD_CODE_DEADLINE_EXCEEDED,
    PATHD_CODE_OUT_OF_MEMORY,
    PATHD_CODE_INTERNAL,
    PATHD_CODE_SESSION_NOT_FOUND,
    PATHD_CODE_SESSION_BUSY,
    PATHD_CODE_TOO_MANY_SESSIONS,
    PATHD_CODE_UPGRADE_REQUIRED,
    PATHD_CODE_CONFLICT,
    PATHD_CODE_STORAGE_FAILED,
    PATHD_CODE_PRECONDITION_FAILED,
    PATHD_CODE_STORE_UNAVAILABLE,
    PATHD_CODE_STORE_OUTCOME_UNKNOWN, /* see "Changes whose outcome is unknown" */
    PATHD_CODE_STORE_NOT_DURABLE,
    PATHD_CODE_NOT_READY
} pathd_code;

typedef struct pathd_error {
    pathd_status status;
    int http_status;    /* the answer's status, 0 without one */
    pathd_code code;    /* PATHD_CODE_NONE unless status is PATHD_ERR_API */
    char code_text[48]; /* "off_map"; "" without one */
    char field[96];     /* the request field at fault ("start", "queries[3].goal"), or "" */
    char message[384];  /* the server's sentence, or this client's */
    long retry_after_s; /* Retry-After of the last answer, -1 without one */
    int attempts;       /* HTTP attempts made (retries + 1) */
    int close_code;     /* PATHD_ERR_CLOSED: the WebSocket close code, 0 if none */
} pathd_error;

/* "PATHD_ERR_API", ... and "off_map", ... (static strings). */
const char *pathd_status_str(pathd_status st);
const char *pathd_code_str(pathd_code code);

typedef struct pathd_options {
    const char *base_url;    /* "http://127.0.0.1:8080" (a path prefix is kept: ".../pathd") */
    const char *token;       /* bearer token, or NULL */
    long timeout_ms;         /* per attempt, connect included; 0 = 10000 */
    long connect_timeout_ms; /* 0 = 3000 */
    int max_retries;         /* retries of a 503; -1 = none, 0 = the default 2 */
    long max_retry_wait_ms;  /* cap on one Retry-After wait; 0 = 10000 */
} pathd_options;

typedef struct pathd_client pathd_client;

/* Creates a client (no connection is made yet). base_url is copied. Call
 * curl_global_init once in the program before the first client (libcurl's
 * rule; pathd_client_create calls it when it has not been called, which is
 * not thread-safe). */
pathd_status pathd_client_create(const pathd_options *opts, pathd_client **out, pathd_error *err);
void pathd_client_destroy(pathd_client *c); /* NULL is a no-op */

typedef struct pathd_point {
    int32_t x, y;
} pathd_point;

/* ---- maps ---- */

typedef enum pathd_map_format {
    PATHD_MAP_MOVINGAI = 0, /* a Moving AI .map text: sent as text/x-movingai-map */
    PATHD_MAP_JSON          /* a MapJson document (rows, or GET .../cells output) */
} pathd_map_format;

typedef struct pathd_map_info {
    char id[65];
    uint64_t version;
    int32_t width, height;
    int connectivity;
    bool corner_cutting;
    int64_t walkable_cells;
    bool uniform_cost;
    int32_t doors;
    uint64_t memory_bytes;
    int32_t jps_landmarks;
    uint64_t build_us;
    char default_algorithm[16];
    bool has_hierarchy;
    char kind[12]; /* "grid", "navmesh" or "graph" */
    /* kind "graph" (GraphInfo in the spec); zero otherwise. */
    struct {
        int64_t nodes, edges, arcs, disabled_nodes, disabled_edges, components;
        int dimensions, max_degree, landmarks;
        double heuristic_ratio, landmark_scale;
        int doors, doors_open; /* door groups declared at upload, and open in this version */
    } graph;
    bool created;  /* the answer was 201 (a new map) rather than 200 */
    char etag[48]; /* the answer's ETag ("\"3-7\""), "" without one */
} pathd_map_info;

/* A change's preconditions (RFC 9110): NULL or all empty = none. */
typedef struct pathd_precondition {
    const char *if_match;   /* an ETag as answered ("\"3-7\""), or "*": the map exists */
    bool if_none_match_any; /* If-None-Match: * (a PUT that only creates) */
} pathd_precondition;

/* putMap: PUT /v1/maps/{id}. Creates (created = true, version 1) or
 * replaces (version + 1) the map. body is not copied past the call. */
pathd_status pathd_map_put(pathd_client *c, const char *id, const char *body, size_t len,
                           pathd_map_format fmt, pathd_map_info *out, pathd_error *err);
/* createMap: POST /v1/maps; the server picks the id from the content
 * (out->id). The same bytes again find the same map (created = false). */
pathd_status pathd_map_create(pathd_client *c, const char *body, size_t len, pathd_map_format fmt,
                              pathd_map_info *out, pathd_error *err);
/* getMap: GET /v1/maps/{id}. */
pathd_status pathd_map_get(pathd_client *c, const char *id, pathd_map_info *out, pathd_error *err);
/* deleteMap: DELETE /v1/maps/{id} (ends its sessions). */
pathd_status pathd_map_delete(pathd_client *c, const char *id, pathd_error *err);
/* The same with preconditions (pre may be NULL): 412 precondition_failed
 * when they do not hold, and nothing changed. */
pathd_status pathd_map_put_cond(pathd_client *c, const char *id, const char *body, size_t len,
                                pathd_map_format fmt, const pathd_precondition *pre,
                                pathd_map_info *out, pathd_error *err);
pathd_status pathd_map_delete_cond(pathd_client *c, const char *id, const pathd_precondition *pre,
                                   pathd_error *err);

typedef struct pathd_map_list {
    pathd_map_info *maps; /* sorted by id */
    size_t n;
} pathd_map_list;
/* listMaps: GET /v1/maps. Free with pathd_map_list_free. */
pathd_status pathd_maps_list(pathd_client *c, pathd_map_list *out, pathd_error *err);
void pathd_map_list_free(pathd_map_list *l);

typedef struct pathd_cell_change {
    int32_t x, y;
    int cost; /* 0 blocks, 1..255 */
} pathd_cell_change;

typedef struct pathd_door_switch {
    const char *id; /* a door the map declared */
    bool open;
} pathd_door_switch;

/* patchMap: PATCH /v1/maps/{id}: cells then doors, applied in order, as the
 * next version of the world. At least one change. */
pathd_status pathd_map_patch(pathd_client *c, const char *id, const pathd_cell_change *cells,
                             size_t ncells, const pathd_door_switch *doors, size_t ndoors,
                             pathd_map_info *out, pathd_error *err);
pathd_status pathd_map_patch_cond(pathd_client *c, const char *id, const pathd_cell_change *cells,
                                  size_t ncells, const pathd_door_switch *doors, size_t ndoors,
                                  const pathd_precondition *pre, pathd_map_info *out,
                                  pathd_error *err);

/* getMapCells: GET /v1/maps/{id}/cells: the map's export as JSON text
 * (*json, NUL-terminated, *len bytes; free with pathd_free). It uploads
 * back as it is with pathd_map_put(..., PATHD_MAP_JSON, ...). */
pathd_status pathd_map_cells(pathd_client *c, const char *id, char **json, size_t *len,
                             pathd_error *err);

/* ---- paths ---- */

typedef struct pathd_path_options {
    const char *algorithm; /* "astar", "jps", "hpa", ... or NULL: the map's default */
    double weight;         /* "weighted" only; 0 = the server's default */
    const char *heuristic; /* NULL = default */
    bool smooth;           /* string-pulled waypoints */
    bool debug;            /* asks for expanded_cells (not kept by this client) */
    int cache;             /* -1 or 1 = use the path cache (default), 0 = bypass */
    long deadline_ms;      /* 0 = the server's default */
    long max_expanded;     /* node budget; 0 = unlimited (the default) */
} pathd_path_options;

/* The defaults above (cache -1, everything else 0/NULL). */
pathd_path_options pathd_path_options_default(void);

typedef struct pathd_path {
    bool found;
    double cost;         /* when found */
    char reason[24];     /* when not found: "unreachable" or "node_budget" */
    pathd_point *points; /* start..goal inclusive; NULL when not found */
    size_t npoints;
    char algorithm[16]; /* what ran ("astar" when jps fell back) */
    uint64_t map_version;
    uint64_t expanded;
    uint64_t time_us;
    bool cached;
} pathd_path;
void pathd_path_free(pathd_path *p); /* frees points; the struct may be reused */

/* findPath: POST /v1/maps/{id}/path. opts may be NULL. */
pathd_status pathd_find_path(pathd_client *c, const char *id, pathd_point start, pathd_point goal,
                             const pathd_path_options *opts, pathd_path *out, pathd_error *err);

typedef struct pathd_query {
    pathd_point start, goal;
    const pathd_path_options *opts; /* NULL = defaults; its deadline_ms must be 0 */
} pathd_query;

typedef struct pathd_batch_slot {
    pathd_status status; /* PATHD_OK: path is set; PATHD_ERR_API: error is set */
    pathd_path path;
    pathd_error error; /* the slot's own error: http_status 422, code off_map, ... */
} pathd_batch_slot;

typedef struct pathd_batch {
    pathd_batch_slot *slots; /* one per query, in order */
    size_t n;
    uint64_t map_version;
} pathd_batch;
void pathd_batch_free(pathd_batch *b);

/* findPaths: POST /v1/maps/{id}/paths, one deadline for the whole batch
 * (0 = the server's default). A query that fails alone gets an error slot;
 * the call itself fails only when the whole batch does. */
pathd_status pathd_find_paths(pathd_client *c, const char *id, const pathd_query *queries, size_t n,
                              long deadline_ms, pathd_batch *out, pathd_error *err);

/* ---- sessions (D* Lite, one per moving agent) ---- */

/* A session's replanning policy (ReplanPolicy in the spec): when to plan
 * again as the goal moves. A member < 0 is not sent: the session keeps its
 * value (at create: the server's default, GET /v1/info). Set every member
 * with pathd_replan_policy_init first. The server refuses a value out of
 * its range naming the field ("replan.hysteresis"). */
typedef struct pathd_replan_policy {
    long min_interval_ms;  /* no replan sooner after the last one (ms), 0 none */
    long min_updates;      /* at most one replan every n requests (frames), 0 none */
    double goal_threshold; /* a goal move replans once it is farther than this, 0 any */
    double hysteresis;     /* keep the route unless a new one is cheaper by this fraction */
} pathd_replan_policy;
void pathd_replan_policy_init(pathd_replan_policy *p); /* every member not sent (-1) */

typedef struct pathd_update {
    const pathd_point *position;    /* NULL = unchanged */
    const pathd_point *goal;        /* NULL = unchanged */
    const pathd_cell_change *cells; /* this session's view only */
    size_t ncells;
    const pathd_door_switch *doors;
    size_t ndoors;
    const pathd_replan_policy *replan; /* NULL = the policy unchanged */
} pathd_update;

typedef struct pathd_session {
    char session_id[65];
    char map_id[65];
    bool found;
    double cost;
    char reason[24];     /* when not found: "unreachable", "blocked", or "node_budget" /
                          * "deadline" (the session's limits stopped the plan) */
    pathd_point *points; /* position..goal; NULL when not found */
    size_t npoints;
    pathd_point position, goal;
    uint64_t map_version;
    long ttl_s;
    uint64_t expanded, time_us, updates, memory_bytes;
    char rebase[16]; /* "none", "incremental", "rebuilt" */
    /* A stream's short answer: the session's route did not change since
     * the last whole answer on this stream, so no path was sent (points
     * NULL): it is that answer's from `position` on. Never on HTTP. */
    bool unchanged;
    char replan_reason[16];     /* why it replanned or did not: "goal_moved", "threshold", ... */
    bool replanned;             /* a search ran (false: the kept route, expanded 0) */
    char replan_route[12];      /* what became of the route: "none", "new", "kept", ... */
    bool flip;                  /* the new route turned the agent away from its kept one */
    pathd_replan_policy policy; /* the policy in force (every member set) */
} pathd_session;
void pathd_session_free(pathd_session *s); /* frees points; the struct may be reused */

/* createSession: POST /v1/maps/{id}/sessions. ttl_s 0 = the server's
 * default. out->session_id addresses it afterwards. */
pathd_status pathd_session_create(pathd_client *c, const char *map_id, pathd_point start,
                                  pathd_point goal, long ttl_s, pathd_session *out,
                                  pathd_error *err);
/* The same with a replanning policy (NULL: the server's defaults). A
 * non-finite member is PATHD_ERR_ARGUMENT, nothing sent. */
pathd_status pathd_session_create_with(pathd_client *c, const char *map_id, pathd_point start,
                                       pathd_point goal, long ttl_s,
                                       const pathd_replan_policy *replan, pathd_session *out,
                                       pathd_error *err);
/* A session's limits on each of its plans, the first and every repair
 * (SessionRequest's max_expanded and deadline_ms), for grid and graph
 * sessions. A plan that reaches one answers found false with reason
 * "node_budget" or "deadline" and keeps its search: the next request (a
 * get is enough) goes on with the same repair, so reading until found
 * ends at the unlimited session's path and cost. A member 0 is not sent
 * (no limit). The server refuses a value out of range naming the field
 * (422 invalid_value; deadline_ms past its max_deadline_ms too); a
 * navmesh session refuses both. */
typedef struct pathd_session_limits {
    long max_expanded; /* expansions one plan may do; 0 = unlimited */
    long deadline_ms;  /* ms one plan may run, from when its worker starts it; 0 = none */
} pathd_session_limits;
/* pathd_session_create_with with limits (NULL: none). */
pathd_status pathd_session_create_limited(pathd_client *c, const char *map_id, pathd_point start,
                                          pathd_point goal, long ttl_s,
                                          const pathd_replan_policy *replan,
                                          const pathd_session_limits *limits, pathd_session *out,
                                          pathd_error *err);
/* getSession: GET .../sessions/{sid} (brought to the map's current version). */
pathd_status pathd_session_get(pathd_client *c, const char *map_id, const char *sid,
                               pathd_session *out, pathd_error *err);
/* deleteSession: DELETE .../sessions/{sid}. */
pathd_status pathd_session_delete(pathd_client *c, const char *map_id, const char *sid,
                                  pathd_error *err);
/* updateSession: POST .../sessions/{sid}/updates. n == 1 sends one JSON
 * Update; n > 1 sends them as NDJSON, one a line, applied in order as one
 * request (all validated first: one bad line rejects all, error.field names
 * it, "lines[2].cells[0]"). The answer is the path after the last. */
pathd_status pathd_session_update(pathd_client *c, const char *map_id, const char *sid,
                                  const pathd_update *ups, size_t n, pathd_session *out,
                                  pathd_error *err);

/* streamSession: a WebSocket on .../sessions/{sid}/stream. Each send is one
 * Update, each receive its answer, in order. A refusal of the handshake is
 * PATHD_ERR_API (404 session_not_found, 503 overloaded with Retry-After,
 * retried like any 503). */
typedef struct pathd_stream pathd_stream;
pathd_status pathd_stream_open(pathd_client *c, const char *map_id, const char *sid,
                               pathd_stream **out, pathd_error *err);
pathd_status pathd_stream_send(pathd_stream *s, const pathd_update *up, pathd_error *err);
/* Waits up to the client's timeout_ms for the next answer. An error the
 * server sends on the stream (off_map, session_busy, ...) is PATHD_ERR_API
 * and the stream goes on; a close from the server is PATHD_ERR_CLOSED with
 * its code (1001 when the server shuts down). Pings are answered inside. */
pathd_status pathd_stream_recv(pathd_stream *s, pathd_session *out, pathd_error *err);
/* Sends a close (1000), waits briefly for the echo, frees. NULL is a no-op. */
void pathd_stream_close(pathd_stream *s);

/* ---- waypoint graphs (kind "graph"; docs/graphs.md) ----
 *
 * A graph map is nodes at 2D or 3D positions joined by edges. Nodes are
 * named by ids as uploaded (strings or integers: 17 and "17" are one id),
 * edges by their index in the upload (or an optional string id). Answers
 * give ids back as uploaded. */

typedef struct pathd_node_id {
    bool is_int;
    int64_t num;  /* is_int */
    char str[65]; /* otherwise: 1..64 bytes */
} pathd_node_id;
/* An id from a string (more than 64 bytes is refused when sent) or an integer. */
pathd_node_id pathd_node_str(const char *s);
pathd_node_id pathd_node_int(int64_t n);
/* Whether two ids are one (by their text, as the server compares them). */
bool pathd_node_eq(const pathd_node_id *a, const pathd_node_id *b);

typedef struct pathd_graph_point {
    double x, y, z; /* z 0 on a 2D graph */
} pathd_graph_point;

/* Where a graph query starts or ends: a node, or a point snapped to the
 * nearest enabled node (or edge, with pathd_graph_options.snap_edge). */
typedef struct pathd_graph_place {
    bool is_point;
    pathd_node_id node;
    pathd_graph_point point;
    int dims; /* a point's coordinates: 2 or 3 */
} pathd_graph_place;
pathd_graph_place pathd_place_node(pathd_node_id id);
pathd_graph_place pathd_place_point(double x, double y);
pathd_graph_place pathd_place_point3(double x, double y, double z);

typedef struct pathd_graph_node {
    pathd_node_id id;
    pathd_graph_point pos;
    int dims; /* 2 or 3, the same for every node of a graph */
    const char *const *tags;
    size_t ntags;
    bool disabled; /* uploaded disabled (a PATCH enables it) */
} pathd_graph_node;

typedef struct pathd_graph_edge {
    pathd_node_id from, to;
    double cost;    /* < 0: the straight-line length times factor */
    double factor;  /* > 0: cost = length x factor (with cost < 0); 0: the upload's */
    bool oneway;    /* only from -> to */
    const char *id; /* NULL: none (a PATCH then names the edge by its index) */
    const char *const *tags;
    size_t ntags;
    bool disabled;
} pathd_graph_edge;

/* A door group: edges (by index or id) and nodes a PATCH switches together
 * by name (graphops28's server; main's refuses an upload with doors). */
typedef struct pathd_graph_door {
    const char *name;
    const long *edge_indices;
    size_t nedge_indices;
    const char *const *edge_ids;
    size_t nedge_ids;
    const pathd_node_id *nodes;
    size_t nnodes;
    bool closed; /* uploaded closed (its members disabled) */
} pathd_graph_door;

/* putMap of a graph: nodes, edges and door groups (doors may be NULL;
 * cost_factor <= 0: the default 1). A non-finite position or cost is
 * PATHD_ERR_ARGUMENT, nothing sent. */
pathd_status pathd_graph_put(pathd_client *c, const char *id, const pathd_graph_node *nodes,
                             size_t nnodes, const pathd_graph_edge *edges, size_t nedges,
                             const pathd_graph_door *doors, size_t ndoors, double cost_factor,
                             pathd_map_info *out, pathd_error *err);
/* putMap of a graph in the 9th DIMACS challenge's text form: the .gr arcs
 * (one-way, ids 1..N) and the .co coordinates as they are (the server's
 * "dimacs" envelope; a malformed file is 422 naming dimacs.gr or dimacs.co). */
pathd_status pathd_graph_put_dimacs(pathd_client *c, const char *id, const char *gr, const char *co,
                                    pathd_map_info *out, pathd_error *err);

typedef struct pathd_node_switch {
    pathd_node_id id;
    bool enabled;
} pathd_node_switch;

typedef struct pathd_edge_change {
    long index;     /* the edge's index, or -1: named by id */
    const char *id; /* with index -1 */
    int enabled;    /* -1 unchanged, 0 disable, 1 enable */
    double cost;    /* < 0: unchanged */
} pathd_edge_change;

/* patchMap of a graph: door groups opened or closed by name (doors may be
 * NULL; graphops28's server), nodes and edges enabled or disabled, edge
 * costs set, together as the next version. pre may be NULL. */
pathd_status pathd_graph_patch(pathd_client *c, const char *id, const pathd_door_switch *doors,
                               size_t ndoors, const pathd_node_switch *nodes, size_t nnodes,
                               const pathd_edge_change *edges, size_t nedges,
                               const pathd_precondition *pre, pathd_map_info *out,
                               pathd_error *err);

/* getMapGraph: GET /v1/maps/{id}/graph, the version's nodes and edges as
 * JSON text (node i and edge i at index i; free with pathd_free). */
pathd_status pathd_graph_export(pathd_client *c, const char *id, char **json, size_t *len,
                                pathd_error *err);

typedef struct pathd_graph_options {
    const char *algorithm;           /* "auto", "astar", "alt", "dijkstra", or NULL: auto */
    long max_expanded;               /* 0 = unlimited */
    bool partial;                    /* not reached: the path to the closed node nearest the goal */
    int cache;                       /* -1 or 1 = cached per version (default), 0 = bypass */
    long deadline_ms;                /* 0 = the server's default; a batch has one deadline */
    const char *const *exclude_tags; /* edges and nodes carrying any are not walked */
    size_t nexclude;
    bool snap_edge; /* points go to the nearest point on an edge */
} pathd_graph_options;
pathd_graph_options pathd_graph_options_default(void); /* cache -1, the rest 0/NULL */

/* Where a path starts or ends: the node, and for a point how it snapped. */
typedef struct pathd_graph_end {
    bool has_node;
    pathd_node_id node;
    bool snapped;
    double distance; /* snapped: from the point to its node or edge */
    long edge;       /* snap_edge: the edge the point went to, else -1 */
    double at;       /* snap_edge: the fraction along it from its from node */
    pathd_graph_point point;
} pathd_graph_end;

typedef struct pathd_graph_path {
    bool found;
    bool partial;    /* the path to the node nearest the goal (options.partial) */
    long goal_index; /* with goals: the goal reached, else -1 */
    double cost;
    char reason[24];      /* when not found: "unreachable" or "budget" */
    pathd_node_id *nodes; /* from the start, as uploaded */
    pathd_graph_point *points;
    size_t nnodes;
    long *edges; /* nnodes - 1 edge indices: edges[i] joins nodes[i] and nodes[i + 1] */
    pathd_graph_end start, goal;
    bool has_goal;
    char algorithm[16];
    uint64_t map_version, expanded, time_us;
    bool cached;
} pathd_graph_path;
void pathd_graph_path_free(pathd_graph_path *p);

/* findPath on a graph map, between ids or points. opts may be NULL. */
pathd_status pathd_graph_find_path(pathd_client *c, const char *id, pathd_graph_place start,
                                   pathd_graph_place goal, const pathd_graph_options *opts,
                                   pathd_graph_path *out, pathd_error *err);
/* findPath to the cheapest of ngoals goals (out->goal_index names it). */
pathd_status pathd_graph_find_nearest(pathd_client *c, const char *id, pathd_graph_place start,
                                      const pathd_graph_place *goals, size_t ngoals,
                                      const pathd_graph_options *opts, pathd_graph_path *out,
                                      pathd_error *err);

typedef struct pathd_graph_query {
    pathd_graph_place start, goal;
    const pathd_graph_place *goals; /* non-NULL: the nearest of ngoals instead of goal */
    size_t ngoals;
    const pathd_graph_options *opts; /* NULL = defaults; its deadline_ms is not sent */
} pathd_graph_query;

typedef struct pathd_graph_batch_slot {
    pathd_status status; /* PATHD_OK: path is set; PATHD_ERR_API: error is set */
    pathd_graph_path path;
    pathd_error error;
} pathd_graph_batch_slot;

typedef struct pathd_graph_batch {
    pathd_graph_batch_slot *slots;
    size_t n;
    uint64_t map_version;
} pathd_graph_batch;
void pathd_graph_batch_free(pathd_graph_batch *b);

/* findPaths on a graph map: one deadline (0 = the server's default). */
pathd_status pathd_graph_find_paths(pathd_client *c, const char *id,
                                    const pathd_graph_query *queries, size_t n, long deadline_ms,
                                    pathd_graph_batch *out, pathd_error *err);

typedef struct pathd_graph_route {
    pathd_node_id *nodes; /* NULL without a path */
    size_t n;
} pathd_graph_route;

typedef struct pathd_graph_table {
    size_t nsources, ntargets;
    double *costs;            /* costs[i * ntargets + j], source i to target j */
    bool *reached;            /* reached[i * ntargets + j]: false = no path (costs 0) */
    pathd_graph_route *paths; /* with paths: one per pair, else NULL */
    pathd_graph_end *sources, *targets;
    uint64_t map_version, searches, expanded, unreachable, time_us;
} pathd_graph_table;
void pathd_graph_table_free(pathd_graph_table *t);

/* getDistanceTable on a graph map: targets NULL = the sources. */
pathd_status pathd_graph_table_get(pathd_client *c, const char *id,
                                   const pathd_graph_place *sources, size_t nsources,
                                   const pathd_graph_place *targets, size_t ntargets, bool paths,
                                   long deadline_ms, pathd_graph_table *out, pathd_error *err);

/* A graph session: one agent between nodes, repaired after its moves and
 * after PATCHes (D* Lite on the graph). Places are ids or points snapped to
 * nodes (start and goal of one form). */
typedef struct pathd_graph_update {
    const pathd_graph_place *position; /* NULL = unchanged */
    const pathd_graph_place *goal;
    const pathd_replan_policy *replan;
} pathd_graph_update;

typedef struct pathd_graph_session {
    char session_id[65];
    char map_id[65];
    bool found;
    double cost;
    char reason[24];      /* "unreachable", "node_budget", "deadline", "blocked" when not found */
    pathd_node_id *nodes; /* from the agent's node; NULL in a short answer */
    pathd_graph_point *points;
    size_t nnodes;
    long *edges;
    pathd_node_id position, goal;
    char algorithm[16]; /* "dstar_lite" */
    uint64_t map_version;
    long ttl_s;
    uint64_t expanded, time_us, updates, memory_bytes;
    char rebase[16]; /* "none", "incremental" */
    bool unchanged;  /* a stream's short answer: the route did not change */
    char replan_reason[16];
    bool replanned;
    char replan_route[12];
    bool flip;
    pathd_replan_policy policy;
} pathd_graph_session;
void pathd_graph_session_free(pathd_graph_session *s);

pathd_status pathd_graph_session_create(pathd_client *c, const char *map_id,
                                        pathd_graph_place start, pathd_graph_place goal, long ttl_s,
                                        const pathd_replan_policy *replan, pathd_graph_session *out,
                                        pathd_error *err);
/* pathd_graph_session_create with limits (pathd_session_limits; NULL:
 * none). */
pathd_status pathd_graph_session_create_limited(pathd_client *c, const char *map_id,
                                                pathd_graph_place start, pathd_graph_place goal,
                                                long ttl_s, const pathd_replan_policy *replan,
                                                const pathd_session_limits *limits,
                                                pathd_graph_session *out, pathd_error *err);
pathd_status pathd_graph_session_get(pathd_client *c, const char *map_id, const char *sid,
                                     pathd_graph_session *out, pathd_error *err);
/* One update as JSON, several as NDJSON (as pathd_session_update). */
pathd_status pathd_graph_session_update(pathd_client *c, const char *map_id, const char *sid,
                                        const pathd_graph_update *ups, size_t n,
                                        pathd_graph_session *out, pathd_error *err);
/* A graph session's stream (opened with pathd_stream_open): one update,
 * one answer, as pathd_stream_send and pathd_stream_recv. */
pathd_status pathd_graph_stream_send(pathd_stream *s, const pathd_graph_update *up,
                                     pathd_error *err);
pathd_status pathd_graph_stream_recv(pathd_stream *s, pathd_graph_session *out, pathd_error *err);

/* ---- anything else ---- */

/* One request to `path` ("/v1/info"), retried on 503 like the rest.
 * ctype and body may be NULL. *status gets the HTTP status and *resp the
 * body (NUL-terminated, *resp_len bytes; free with pathd_free), whatever the
 * status: this call fails only when no answer came. */
pathd_status pathd_request(pathd_client *c, const char *method, const char *path, const char *ctype,
                           const char *body, size_t len, int *status, char **resp, size_t *resp_len,
                           pathd_error *err);
void pathd_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
