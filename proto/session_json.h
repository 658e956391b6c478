/* session_json.h -- D* Lite session requests in (create, updates, map
 * PATCH) and session answers out.
 *
 * Create: {"start":[x,y], "goal":[x,y], "ttl_s":600, "agent_size":2}
 *         ttl_s and agent_size optional (an n x n agent, clearance.h)
 * On a navmesh map points are [x,y,z] (any finite numbers within +-1e7),
 * agent_size is rejected (the agent is the map's build agent) and an update
 * has only position and goal (obstacles and areas change with the map's
 * PATCH); which form a map takes is the server's business.
 *
 * An update (POST .../updates, one WebSocket text message, one NDJSON line):
 *   {"position":[x,y],                      the agent is here now
 *    "goal":[x,y],                          a new goal
 *    "cells":[{"x":3,"y":4,"cost":0}, {"x":5,"y":4,"blocked":true}],
 *    "doors":[{"id":"gate","open":false}]}
 * every member optional, unknown members rejected. A cell takes either
 * "cost" (0..255, 0 blocks) or "blocked" (true = cost 0, false = cost 1).
 *
 * Map PATCH: {"cells":[...], "doors":[...]} with the same item forms.
 *
 * Coordinates are only checked to fit int32 here; whether a cell is on the
 * map and a door exists is the server's business (it knows the map). Errors
 * name the field: "cells[2].cost", "doors[0].id", and for NDJSON the line
 * (0-based) first: "lines[3].position". Thread-safe.
 */
#ifndef PF_PROTO_SESSION_JSON_H
#define PF_PROTO_SESSION_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "grid.h"
#include "jsonw.h"
#include "planner.h"

typedef struct pf_session_request {
    pf_point start, goal;
    int64_t ttl_s;      /* 0 = not given */
    int32_t agent_size; /* 1..PF_AGENT_SIZE_MAX (the server checks its own limit) */
    /* Points of three numbers [x, y, z]: a navmesh session (a path
     * corridor, nav/navmesh.h); start and goal are then start3, goal3. */
    bool nav;
    float start3[3], goal3[3];
    char agent_type[64]; /* a navmesh session's agent type ("" = "default") */
} pf_session_request;

/* Parses a create body. ttl_s must be 1..max_ttl_s (PF_EINVAL naming
 * "ttl_s" otherwise). PF_EPARSE for malformed JSON, wrong types, a missing
 * start or goal, an unknown member. */
pf_status pf_session_request_parse(const char *buf, size_t len, int64_t max_ttl_s,
                                   pf_session_request *out, pf_proto_error *e);

/* A door switched by name. */
typedef struct pf_door_switch {
    char id[PF_DOOR_NAME_MAX];
    bool open;
} pf_door_switch;

typedef struct pf_update {
    bool has_position, has_goal;
    pf_point position, goal;
    /* A point of three numbers (a navmesh session's): in position3 / goal3,
     * its flag set; the session says which form it takes. */
    bool position_nav, goal_nav;
    float position3[3], goal3[3];
    pf_cell_change *cells; /* owned */
    size_t ncells;
    pf_door_switch *doors; /* owned */
    size_t ndoors;
    size_t line; /* NDJSON: the 0-based line of the body it came from */
} pf_update;

/* A list of updates, applied in order. */
typedef struct pf_update_list {
    pf_update *items; /* owned, with everything they own */
    size_t n;
    bool ndjson; /* field names carry "lines[i]." */
} pf_update_list;

/* Parses one JSON update (ndjson false) or NDJSON: one update object a
 * line, blank lines skipped, at most max_items updates (PF_ELIMIT past it).
 * An empty list is PF_EINVAL. On error nothing is returned and e names the
 * line and field at fault. Free with pf_update_list_free. */
pf_status pf_update_list_parse(const char *buf, size_t len, bool ndjson, size_t max_items,
                               pf_update_list *out, pf_proto_error *e);
void pf_update_list_free(pf_update_list *l);

/* Parses a map PATCH body into *out (position and goal are rejected). Free
 * with pf_update_free. */
pf_status pf_map_patch_parse(const char *buf, size_t len, pf_update *out, pf_proto_error *e);
void pf_update_free(pf_update *u);

/* The field prefix of update i of l: "" or "lines[N]." with N the update's
 * line in the body, blank lines counted (buf >= 32 bytes). */
const char *pf_update_prefix(const pf_update_list *l, size_t i, char *buf, size_t cap);

/* What a session request answers. */
typedef struct pf_session_answer {
    const char *session_id;
    const char *map_id;
    pf_status status; /* PF_OK, PF_NO_PATH, PF_EBLOCKED or PF_EBUDGET */
    double cost;
    const pf_point *path; /* borrowed */
    size_t path_len;
    pf_point position, goal;
    uint64_t map_version;
    int64_t ttl_s;
    uint64_t expanded; /* work of this request's repair */
    uint64_t time_us;
    size_t updates;      /* updates applied by this request */
    const char *rebase;  /* "none", "incremental" or "rebuilt" */
    size_t memory_bytes; /* what the session holds after this request */
    int32_t agent_size;  /* written when > 1 */
} pf_session_answer;

/* Writes {"session_id","map_id","found","cost"|"reason","path","position",
 * "goal","algorithm":"dstar","map_version","ttl_s","stats":{"expanded",
 * "time_us","updates","rebase","memory_bytes"}} as a value. reason is "unreachable",
 * "blocked" (the agent's or the goal's cell is blocked) or "node_budget". */
void pf_session_write_answer(pf_jsonw *w, const pf_session_answer *a);

/* A navmesh session's answer: {"session_id","map_id","found","partial",
 * "reason" (not found: "unreachable", "node_budget" or "blocked"),"length",
 * "cost","path":[[x,y,z],...],"position","goal","algorithm","polygons",
 * "map_version","ttl_s","stats":{"expanded","time_us","updates","rebase",
 * "memory_bytes"}}. path NULL with blocked: no path (the agent or the goal
 * is off the mesh). rebase: "none" (the corridor followed the agent) or
 * "rebuilt" (planned anew: a new goal, a new map version, a teleport). */
typedef struct pf_nav_session_answer {
    const char *session_id, *map_id;
    bool blocked;                   /* no polygon near the position or the goal */
    const struct pf_nav_path *path; /* NULL when blocked */
    const char *algorithm;
    const float *position, *goal;
    uint64_t map_version;
    int64_t ttl_s;
    uint64_t time_us;
    size_t updates;
    const char *rebase;
    size_t memory_bytes;
} pf_nav_session_answer;

void pf_session_write_nav_answer(pf_jsonw *w, const pf_nav_session_answer *a);
/* The multiplexed session stream (GET /v1/stream): one WebSocket carries
 * the messages of any number of sessions, each message naming its map and
 * session. A message is one JSON object (text frame):
 *   {"op":"update",              update (default), get, create or delete
 *    "map":"<map id>",           required
 *    "session":"<session id>",   required but for create
 *    "tag":"a1" | 17,            optional, echoed in the answer: a string
 *                                of at most 64 bytes or an integer
 *    "update":{...},             op update (required): one update, as POST
 *                                .../updates takes it
 *    "create":{...}}             op create (required): as POST .../sessions
 * Errors name the field: "update.cells[2].cost", "create.start". */
#define PF_MUX_ID_MAX 64
#define PF_MUX_TAG_MAX 64

typedef enum pf_mux_op { PF_MUX_UPDATE = 0, PF_MUX_GET, PF_MUX_CREATE, PF_MUX_DELETE } pf_mux_op;

typedef struct pf_mux_message {
    pf_mux_op op;
    char map_id[PF_MUX_ID_MAX + 1];
    char session_id[PF_MUX_ID_MAX + 1]; /* "" for create */
    int tag_kind;                       /* 0 none, 1 string, 2 integer */
    char tag[PF_MUX_TAG_MAX + 1];
    int64_t tag_int;
    pf_update_list update;     /* op update: one update (owned) */
    pf_session_request create; /* op create */
} pf_mux_message;

/* Parses one message. Statuses as pf_update_list_parse and
 * pf_session_request_parse (ttl_s up to max_ttl_s), plus PF_EPARSE for a
 * missing or malformed op, map, session or tag and for an update or create
 * member that does not go with the op. On error nothing is owned. Free
 * with pf_mux_message_free. */
pf_status pf_mux_message_parse(const char *buf, size_t len, int64_t max_ttl_s, pf_mux_message *out,
                               pf_proto_error *e);
void pf_mux_message_free(pf_mux_message *m);
const char *pf_mux_op_name(pf_mux_op op);

/* Writes the head of an answer's envelope into the object being written:
 * "op", "map", "session" (session_id, or m's when NULL) and "tag" when the
 * message had one. The caller adds "status" (the HTTP status the request
 * would have had) and "body" (its HTTP body, or null). */
void pf_mux_write_head(pf_jsonw *w, const pf_mux_message *m, const char *session_id);

#endif
