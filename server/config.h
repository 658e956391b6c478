/* config.h -- every setting of pathd: a flag, a PATHD_* environment variable
 * and a default, in one table.
 *
 * Precedence: flag > environment > default. `pathd --help` prints the table,
 * /v1/info reports the values in effect. Integers are range-checked; an
 * unknown flag or a bad value is an error with a sentence saying which.
 */
#ifndef PF_SERVER_CONFIG_H
#define PF_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "errors.h"
#include "status.h"

typedef struct pf_config {
    char bind[64];                     /* --bind / PATHD_BIND */
    char data_dir[1024];               /* --data-dir: where maps persist; "" = memory only */
    char store[1024];                  /* --store redis://...: the shared map store; "" = none */
    char instance_id[128];             /* --instance-id: X-Pathd-Instance; "" = hostname:port */
    int64_t port;                      /* --port, 0 = an ephemeral port */
    int64_t workers;                   /* search worker threads */
    int64_t io_threads;                /* libmicrohttpd threads (I/O only) */
    int64_t queue_limit;               /* jobs waiting for a worker before 503 */
    int64_t max_body_bytes;            /* request body limit (413) */
    int64_t max_query_params;          /* query string parameters, every path (414) */
    int64_t max_answer_bytes_per_conn; /* an answer body one connection holds (507) */
    int64_t max_answer_bytes;          /* answer bodies all connections hold unsent (503) */
    int64_t max_request_expanded;      /* cells a table or flow field request settles (413) */
    int64_t max_map_cells;             /* width x height limit (413) */
    int64_t max_map_side;              /* width and height limit */
    int64_t max_maps;                  /* maps held at once */
    int64_t max_batch;                 /* queries per batch request */
    int64_t max_connections;           /* open connections */
    int64_t max_per_ip;                /* open connections per client address, 0 = no limit */
    int64_t conn_timeout_s;            /* wait for a request line, absolute */
    int64_t request_timeout_s;         /* request line to the end of the body, absolute */
    int64_t health_port;               /* the probes' own listener: -1 none, 0 a free port */
    int64_t deadline_ms;               /* default request deadline */
    int64_t max_deadline_ms;      /* the largest deadline_ms a request may ask for (422 past it) */
    int64_t slice_ms;             /* a batch gives its worker to a waiting request after this */
    int64_t cache_entries;        /* LRU path cache entries per map, 0 = off */
    int64_t cache_bytes;          /* bytes of cached paths per map */
    int64_t cluster_size;         /* HPA* cluster side, 0 = core's default */
    int64_t landmark_bytes;       /* jps landmark tables per map, 0 = none */
    int64_t jps_table_bytes;      /* jps jump tables per map, 0 = none */
    int64_t subgoal_work;         /* subgoal hierarchy's work bound per cell, 0 = none */
    int64_t retry_after_s;        /* Retry-After of 503 answers */
    int64_t drain_timeout_s;      /* SIGTERM: longest wait for requests in flight */
    int64_t max_sessions_per_map; /* D* Lite sessions per map (429 past it) */
    int64_t max_sessions;         /* sessions in all (503 past it) */
    int64_t session_ttl_s;        /* idle expiry of a session without ttl_s */
    int64_t session_max_ttl_s;    /* the largest ttl_s a session may ask for */
    int64_t max_updates;          /* updates in one NDJSON request */
    /* Sessions' replanning policy (core/replan.h) when a request does not
     * say, and the least interval any session gets. */
    int64_t session_replan_interval_ms, session_replan_updates, session_goal_threshold,
        session_hysteresis_pct, session_min_replan_interval_ms, nav_target_slide_pct;
    int64_t max_patch_changes;   /* cells + doors in one map PATCH (422 past it) */
    int64_t change_log_cells;    /* cells a map's change log keeps for sessions' rebases */
    int64_t max_streams;         /* open WebSocket streams (below max_connections) */
    int64_t ws_max_message;      /* largest WebSocket message in bytes (close 1009 past it) */
    int64_t ws_max_outbound;     /* bytes queued to one stream and unsent (close 1008 past it) */
    int64_t ws_idle_timeout_s;   /* a stream with no message for this long is closed */
    int64_t ws_close_timeout_ms; /* wait for the peer's close frame, then drop the TCP link */
    int64_t store_timeout_ms;    /* --store: longest wait for Redis (connect, command) */
    int64_t map_idle_ttl_s;      /* --store: drop a copy unused this long, 0 = never */
    bool store_accept_volatile;  /* --store: acknowledge changes on a store that loses them */
    int64_t store_wait_replicas; /* --store: replicas each change waits for (WAIT), 0 = none */
    int64_t store_wait_ms;       /* --store: longest such wait */
    int64_t max_memory;      /* the process memory budget in bytes, 0 = 3/4 of what it may use */
    int64_t max_goals;       /* goals of one path request (nearest target) */
    int64_t max_agent_size;  /* largest agent_size, an n x n agent */
    int64_t max_snap_radius; /* largest snap_radius */
    int64_t max_flowfield_goals;      /* goals of one flow field */
    int64_t max_flowfield_cells;      /* cells of one flow field (its region, else the map) */
    int64_t flowfield_cache_entries;  /* flow fields cached per map version, 0 = none */
    int64_t flowfield_cache_bytes;    /* ... and the bytes they may hold */
    int64_t max_table_entries;        /* sources x targets of one distance table */
    int64_t max_table_paths;          /* ... when it asks for paths */
    int64_t max_table_path_cells;     /* cells of all the paths of one table */
    int64_t stream_max_inflight;      /* multiplexed stream: jobs of one connection at once */
    int64_t stream_max_pending;       /* ... messages it may have queued or running */
    int64_t stream_max_sessions;      /* ... distinct sessions it may address */
    int64_t nav_max_vertices;         /* navmesh uploads: OBJ vertices */
    int64_t nav_max_triangles;        /* ... triangles */
    int64_t nav_max_voxels;           /* ... voxel columns of the world */
    int64_t nav_max_tiles;            /* ... tile layers */
    int64_t nav_build_ms;             /* ... wall time of a build or a change */
    int64_t grid_build_ms;            /* grid maps: wall time of a build, generation or PATCH */
    int64_t nav_max_obstacles;        /* obstacles on one navmesh map */
    int64_t nav_max_areas;            /* named areas of one navmesh map */
    int64_t nav_max_area_boxes;       /* boxes of all its areas */
    int64_t nav_max_nodes;            /* search nodes of one navmesh query */
    int64_t nav_max_search_extent;    /* largest search_box half extent, world units */
    int64_t nav_max_tile_spans;       /* voxel spans of one tile, bounded before voxelising */
    int64_t nav_max_column_spans;     /* spans stacked in one voxel column, likewise */
    int64_t nav_max_links;            /* off-mesh links of one navmesh map */
    int64_t graph_max_nodes;          /* graph uploads: nodes */
    int64_t graph_max_edges;          /* ... edges (DIMACS: arcs) */
    int64_t graph_max_degree;         /* ... arcs leaving one node */
    int64_t graph_max_doors;          /* ... door groups */
    int64_t graph_max_door_members;   /* ... edges and nodes in all its doors */
    int64_t graph_landmarks;          /* ALT landmarks chosen at a graph upload */
    int64_t graph_landmark_max_nodes; /* ... only for graphs of at most this many nodes */
    int64_t graph_ch_max_nodes;       /* contraction hierarchies up to this many nodes */
    int64_t graph_labels_max_bytes;   /* ... and their hub labels up to this many bytes */
    int64_t graph_ch_build_ms;        /* ... each built within this many ms, or none */
    int64_t graph_link_pairs;         /* pairs one graph upload's auto_link checks */
    int64_t max_crowds_per_map;       /* crowds on one navmesh map */
    int64_t max_crowds;               /* crowds in all */
    int64_t max_crowd_agents;         /* agents of one crowd */
    int64_t crowd_max_tick_hz;        /* fastest tick a crowd may ask for */
    int64_t crowd_max_steps;          /* steps one step request may ask for */
    int64_t max_mesh_bytes;           /* largest GET /v1/maps/{id}/mesh answer */
    int64_t max_graph_bytes;          /* largest GET /v1/maps/{id}/graph answer */
    bool demo;                        /* load the demo maps at start */
    /* Who may do what (docs/security.md). */
    char auth_token_file[1024]; /* --auth-token-file: "<scope> <token>" lines; "" = none */
    bool insecure_no_auth;      /* serve a non-loopback address without tokens */
    bool open_metrics;          /* /metrics and /v1/info without a token */
    char tls_cert[1024];        /* --tls-cert: PEM certificate (chain); "" = plain HTTP */
    char tls_key[1024];         /* --tls-key: its PEM private key */
    char cors_origin[1024];     /* --cors-origin: origins given CORS headers, comma separated */
    char allowed_hosts[1024];   /* --allowed-hosts: Host values answered, comma separated */
} pf_config;

/* The defaults. */
void pf_config_defaults(pf_config *c);

/* Applies PATHD_* variables, then argv, then checks the settings together
 * (pf_config_check: tokens and bind, TLS, origins and hosts; max_streams
 * below max_connections, so plain HTTP keeps connections of its own;
 * deadline_ms at most max_deadline_ms). Returns PF_OK, or PF_EINVAL with a
 * sentence in err. *help is set when --help was given (nothing else is
 * checked then). */
pf_status pf_config_load(pf_config *c, int argc, char **argv, bool *help, char *err, size_t errlen);

/* The checks between settings: without --auth-token-file only a loopback
 * --bind (127.0.0.0/8) is served unless --insecure-no-auth says otherwise,
 * and both at once are a contradiction; --tls-cert and --tls-key come
 * together; --cors-origin is a list of origins (scheme://host[:port]) or
 * "*", --allowed-hosts a list of host names (".example.com" takes its
 * subdomains too). PF_EINVAL with a sentence in err. */
pf_status pf_config_check(const pf_config *c, char *err, size_t errlen);

/* A request's deadline_ms (0: the server's deadline_ms) against c's
 * max_deadline_ms, for every route that takes one (paths, sessions of any
 * kind): PF_OK, or PF_EINVAL with e the 422 invalid_value refusal of field
 * "<prefix>deadline_ms" (prefix "" for none, not NULL), "deadline_ms N is
 * above this server's max_deadline_ms (M)." Thread-safe (c is read). */
pf_status pf_config_check_deadline(const pf_config *c, int64_t deadline_ms, const char *prefix,
                                   pf_proto_error *e);

/* Whether addr is an IPv4 loopback address (127.0.0.0/8). */
bool pf_config_is_loopback(const char *addr);

/* Prints usage with every flag, its variable, default and meaning. */
void pf_config_print_help(FILE *f);

/* The option table, one entry a flag, in --help's order (the tests hold
 * --help and the README and docs/ against it): the flag without "--", its
 * environment variable, the name /v1/info reports, whether it is a switch
 * (no value), and its default as --help prints it (a number; "unset" for
 * an empty string; "off" for a switch). false past the last. */
typedef struct pf_config_option {
    const char *flag, *env, *info;
    bool is_switch;
    char dflt[64];
} pf_config_option;
bool pf_config_option_at(size_t i, pf_config_option *out);

/* Visits every integer setting (for /v1/info and the startup line). */
typedef void (*pf_config_visit_fn)(void *ud, const char *name, int64_t value);
void pf_config_visit(const pf_config *c, pf_config_visit_fn fn, void *ud);

#endif
