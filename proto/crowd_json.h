/* crowd_json.h -- crowd requests in (create, commands), for navmesh maps'
 * crowds (server/crowd.h; DetourCrowd through nav/navmesh.h).
 *
 * Create (POST /v1/maps/{id}/crowds):
 *   {"max_agents":200,          1..--max-crowd-agents (default 100)
 *    "tick_hz":20,              0 (step on request only, the default) or
 *                               1..--crowd-max-tick-hz: the server steps it
 *    "ttl_s":600,               idle seconds before it goes (default: the
 *                               session ttl)
 *    "agents":[agent, ...]}     optional, at most max_agents
 * An agent: {"position":[x,y,z], "target":[x,y,z] (optional: it stands),
 *            "radius", "height", "max_speed", "max_accel", "separation"
 *            (optional numbers; defaults from the map, nav/navmesh.h)}.
 *
 * A command (POST .../crowds/{cid}/step, or one WebSocket message):
 *   {"add":[agent, ...],                      new agents (ids in the answer)
 *    "remove":[3, 7],                         agent ids
 *    "targets":[{"id":3,"target":[x,y,z]},    a new target; null stops it
 *               {"id":4,"target":null}],
 *    "tick_hz":0,                             change the tick rate
 *    "steps":1, "dt":0.05}                    then advance steps x dt seconds
 * every member optional; applied in that order. steps 0..--crowd-max-steps
 * (default 0 for a ticking crowd, 1 otherwise), dt (0, 1] seconds (default
 * 1/tick_hz when it ticks, else 0.05).
 *
 * Errors name the field ("agents[3].position", "targets[0].id"); unknown
 * members are refused. Thread-safe.
 */
#ifndef PF_PROTO_CROWD_JSON_H
#define PF_PROTO_CROWD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"

/* An agent to add. A parameter not given is NAN (the map's default). */
typedef struct pf_crowd_agent_spec {
    float position[3];
    bool has_target;
    float target[3];
    float radius, height, max_speed, max_accel, separation;
} pf_crowd_agent_spec;

typedef struct pf_crowd_target {
    int64_t id;
    bool has_target; /* false: stop */
    float target[3];
} pf_crowd_target;

/* What a crowd's limits are for the parsers. */
typedef struct pf_crowd_limits {
    int64_t max_agents; /* --max-crowd-agents */
    int64_t max_tick_hz;
    int64_t max_steps;
    int64_t max_ttl_s;
} pf_crowd_limits;

typedef struct pf_crowd_request {
    int64_t max_agents; /* 0 = not given */
    int64_t tick_hz;
    int64_t ttl_s;               /* 0 = not given */
    pf_crowd_agent_spec *agents; /* owned */
    size_t nagents;
    char agent_type[64]; /* the map's agent type its mesh is for ("" = "default") */
} pf_crowd_request;

pf_status pf_crowd_request_parse(const char *buf, size_t len, const pf_crowd_limits *lim,
                                 pf_crowd_request *out, pf_proto_error *e);
void pf_crowd_request_free(pf_crowd_request *r);

typedef struct pf_crowd_command {
    pf_crowd_agent_spec *add; /* owned */
    size_t nadd;
    int64_t *remove; /* owned */
    size_t nremove;
    pf_crowd_target *targets; /* owned */
    size_t ntargets;
    bool has_tick_hz;
    int64_t tick_hz;
    bool has_steps;
    int64_t steps;
    bool has_dt;
    double dt;
} pf_crowd_command;

pf_status pf_crowd_command_parse(const char *buf, size_t len, const pf_crowd_limits *lim,
                                 pf_crowd_command *out, pf_proto_error *e);
void pf_crowd_command_free(pf_crowd_command *c);

#endif
