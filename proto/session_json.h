/* session_json.h -- D* Lite session requests in (create, updates, map
 * PATCH) and session answers out.
 *
 * Create: {"start":[x,y], "goal":[x,y], "ttl_s":600, "agent_size":2,
 *          "replan":{...}}
 *         ttl_s, agent_size and replan (pf_replan_fields) optional (an n x n
 *         agent, clearance.h);
 *         "agent_type":"troll" (at most 63 bytes) for a navmesh map
 * Points are places (pf_place): [x,y] cells or [x,y,z] points (any finite
 * numbers within +-1e7), start and goal of one form. Which form a map
 * takes, and what else its sessions accept (a navmesh's: agent_type, one of
 * its map's agent types, instead of agent_size; an update with only
 * position and goal), is its kind's business
 * (server/kind.h).
 *
 * An update (POST .../updates, one WebSocket text message, one NDJSON line):
 *   {"position":[x,y],                      the agent is here now
 *    "goal":[x,y],                          a new goal
 *    "cells":[{"x":3,"y":4,"cost":0}, {"x":5,"y":4,"blocked":true}],
 *    "doors":[{"id":"gate","open":false}],
 *    "replan":{"goal_threshold":3}}        the policy from this update on
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

#include <cjson/cJSON.h>

#include "errors.h"
#include "grid.h"
#include "jsonw.h"
#include "planner.h"
#include "replan.h"

/* A point as a request sent it: [x, y], two integers (a grid cell), or
 * [x, y, z], three finite numbers within +-1e7 (a navmesh point). The wire
 * has one shape of point; which form a map takes is its kind's business
 * (server/kind.h). */
typedef struct pf_place {
    uint8_t dims; /* 2: [x, y] in x and y; 3: [x, y, z] in xyz; 1: a node id; 0: none */
    union {
        struct {
            int32_t x, y;
        };
        float xyz[3];
    };
    /* dims 1: a waypoint graph's node id as sent, a string of 1..64 bytes
     * or an integer (node_int, its decimal text here). Only graph maps
     * take it (their kind refuses the others' forms and theirs refuse it). */
    bool node_int;
    char node[65];
} pf_place;

/* A cell as a place, and a place of two coordinates as a cell. */
static inline pf_place pf_place_cell(pf_point p) {
    pf_place q;
    q.dims = 2;
    q.x = p.x;
    q.y = p.y;
    return q;
}
static inline pf_point pf_place_point(const pf_place *p) {
    pf_point q = {p->x, p->y};
    return q;
}

/* Reads a place: three numbers as [x, y, z], a string or an integer as a
 * node id (dims 1), anything else as [x, y] (whose errors it then has). */
pf_status pf_place_read(const cJSON *it, const char *field, pf_place *out, pf_proto_error *e);
/* Writes a place as it came: [x, y] or [x, y, z] (rounded to 1e-4), or the
 * node id (a string, or an integer as sent). */
void pf_place_write(pf_jsonw *w, const pf_place *p);

/* A replanning policy as a request sent it (create or update):
 *   "replan": {"min_interval_ms": 0, "min_updates": 10,
 *              "goal_threshold": 3, "hysteresis": 0.2}
 * every member optional; a member not sent keeps the session's value (at
 * create: the server's default, --session-replan-*). Ranges are core's
 * (replan.h): min_interval_ms 0..PF_REPLAN_INTERVAL_MAX_MS, min_updates
 * 0..PF_REPLAN_STEPS_MAX (core's min_steps: a session's steps are its
 * requests), goal_threshold 0..PF_REPLAN_THRESHOLD_MAX map units,
 * hysteresis 0..PF_REPLAN_HYSTERESIS_MAX. Errors name "replan.<member>"
 * under the request's prefix. */
typedef struct pf_replan_fields {
    bool has_min_interval_ms, has_min_updates, has_goal_threshold, has_hysteresis;
    pf_replan_policy v; /* the members sent */
} pf_replan_fields;

/* Overwrites the members of *p that f sent. */
void pf_replan_fields_apply(const pf_replan_fields *f, pf_replan_policy *p);
/* Reads a "replan" object (it: the member's value) into *out. */
pf_status pf_replan_fields_read(const cJSON *it, const char *prefix, pf_replan_fields *out,
                                pf_proto_error *e);

typedef struct pf_session_request {
    pf_place start, goal; /* of one form */
    int64_t ttl_s;        /* 0 = not given */
    int32_t agent_size;   /* 1..PF_AGENT_SIZE_MAX (the server checks its own limit) */
    bool has_agent_size;  /* it was given */
    /* A navmesh session's agent type ("" = "default"); whether a kind
     * takes agent_size or agent_type is its business (server/kind.h). */
    char agent_type[64];
    bool has_agent_type;     /* it was given */
    pf_replan_fields replan; /* its replanning policy's members sent */
    /* Every plan's limits (0: not given, no limit): expansions before a
     * plan stops with "node_budget", and ms of a plan's own run before it
     * stops with "deadline"; a stopped plan goes on at the next request.
     * The server checks deadline_ms against its max_deadline_ms. */
    uint64_t max_expanded;
    int64_t deadline_ms;
} pf_session_request;

/* Parses a create body. ttl_s must be 1..max_ttl_s (PF_EINVAL naming
 * "ttl_s" otherwise). PF_EPARSE for malformed JSON, wrong types, a missing
 * start or goal, an unknown member. */
pf_status pf_session_request_parse(const char *buf, size_t len, int64_t max_ttl_s,
                                   pf_session_request *out, pf_proto_error *e);
/* The same for a parsed object; prefix ("" or "create.") names its fields
 * (the multiplexed stream's create, mux_json.h). */
pf_status pf_session_request_read(const cJSON *root, const char *prefix, int64_t max_ttl_s,
                                  pf_session_request *out, pf_proto_error *e);

/* A door switched by name. */
typedef struct pf_door_switch {
    char id[PF_DOOR_NAME_MAX];
    bool open;
} pf_door_switch;

typedef struct pf_update {
    bool has_position, has_goal;
    pf_place position, goal; /* the session's kind says which form it takes */
    pf_cell_change *cells;   /* owned */
    size_t ncells;
    pf_door_switch *doors; /* owned */
    size_t ndoors;
    pf_replan_fields replan; /* a new policy's members (from this update on) */
    size_t line;             /* NDJSON: the 0-based line of the body it came from */
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
/* Reads one parsed update object (a map PATCH's with patch); prefix ("",
 * "lines[i]." or "update.") names its fields. On error u may hold
 * allocations: free it with pf_update_free. */
pf_status pf_update_read(const cJSON *obj, const char *prefix, bool patch, pf_update *u,
                         pf_proto_error *e);
void pf_update_free(pf_update *u);

/* The field prefix of update i of l: "" or "lines[N]." with N the update's
 * line in the body, blank lines counted (buf >= 32 bytes). */
const char *pf_update_prefix(const pf_update_list *l, size_t i, char *buf, size_t cap);

/* What an answer says of the policy: why this request replanned or did not
 * (replan.h's reason names), what became of the kept route (course.h's
 * outcome names: "new", "same", "updated", "switched", "kept"; "none"
 * without a replan, "lost" when the replan found no path), whether that
 * was a route flip, and the policy in force. */
typedef struct pf_replan_answer {
    const char *reason;
    bool replanned;
    const char *route;
    bool flip;
    pf_replan_policy policy;
} pf_replan_answer;

/* Writes "replan":{"reason","replanned","route","flip","policy":{...}}
 * as a member of the object being written. */
void pf_replan_answer_write(pf_jsonw *w, const pf_replan_answer *r);

/* A stream's short answer: the session's plan did not change since the
 * last answer this stream was sent, so the path is not sent again. It is
 * {"session_id","map_id","unchanged":true,"found","cost","position",
 * "goal","map_version","ttl_s","replan":{...},"stats":{...}}: the path is
 * the last full answer's from "position" on (a grid's: its cells from the
 * one equal to position; a navmesh's: its corners after the first, with
 * position before them). */
typedef struct pf_session_short {
    const char *session_id, *map_id;
    bool found;
    double cost;
    pf_place position, goal;
    uint64_t map_version;
    int64_t ttl_s;
    const pf_replan_answer *replan;
    uint64_t time_us;
    size_t updates;
    const char *rebase;
    size_t memory_bytes;
} pf_session_short;

void pf_session_write_short(pf_jsonw *w, const pf_session_short *a);

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
    size_t updates;                 /* updates applied by this request */
    const char *rebase;             /* "none", "incremental" or "rebuilt" */
    size_t memory_bytes;            /* what the session holds after this request */
    int32_t agent_size;             /* written when > 1 */
    const pf_replan_answer *replan; /* NULL: not written */
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
    const pf_replan_answer *replan; /* NULL: not written */
} pf_nav_session_answer;

void pf_session_write_nav_answer(pf_jsonw *w, const pf_nav_session_answer *a);

#endif
