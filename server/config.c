/* config.c -- see config.h. */
#include "config.h"

#include "planner.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef enum opt_kind { OPT_INT, OPT_STR, OPT_BOOL } opt_kind;

typedef struct opt {
    const char *flag; /* without the leading "--" */
    const char *env;
    const char *info; /* the name /v1/info reports */
    opt_kind kind;
    size_t offset;
    int64_t dflt, min, max;
    const char *help;
} opt;

#define OFF(f) offsetof(pf_config, f)

static const opt opts[] = {
    {"bind", "PATHD_BIND", "bind", OPT_STR, OFF(bind), 0, 0, sizeof(((pf_config *)0)->bind),
     "address to listen on (IPv4 dotted quad)"},
    {"data-dir", "PATHD_DATA_DIR", "data_dir", OPT_STR, OFF(data_dir), 0, 0,
     sizeof(((pf_config *)0)->data_dir),
     "keep maps on disk here (written before the 2xx answer, reloaded at start); "
     "unset = in memory only"},
    {"store", "PATHD_STORE", "store", OPT_STR, OFF(store), 0, 0, sizeof(((pf_config *)0)->store),
     "keep every map in a shared Redis, redis://[:PASSWORD@]HOST:PORT[/DB], so a fleet of "
     "instances serves every map (see deploy/README.md); unset = memory or --data-dir"},
    {"instance-id", "PATHD_INSTANCE_ID", "instance", OPT_STR, OFF(instance_id), 0, 0,
     sizeof(((pf_config *)0)->instance_id),
     "this instance's name in the X-Pathd-Instance header of every answer; unset = "
     "hostname:port"},
    {"port", "PATHD_PORT", "port", OPT_INT, OFF(port), 8080, 0, 65535,
     "TCP port; 0 picks a free port (printed at start)"},
    {"workers", "PATHD_WORKERS", "workers", OPT_INT, OFF(workers), 2, 1, 256,
     "search worker threads (each has its own search scratch memory)"},
    {"io-threads", "PATHD_IO_THREADS", "io_threads", OPT_INT, OFF(io_threads), 2, 1, 64,
     "HTTP I/O threads; they never search"},
    {"queue", "PATHD_QUEUE", "queue_limit", OPT_INT, OFF(queue_limit), 256, 1, 1000000,
     "jobs that may wait for a worker; one more is answered 503 at once"},
    {"max-body", "PATHD_MAX_BODY", "max_body_bytes", OPT_INT, OFF(max_body_bytes), 16 * 1024 * 1024,
     1024, INT64_C(1) << 32, "largest request body in bytes (413 past it)"},
    {"max-query-params", "PATHD_MAX_QUERY_PARAMS", "max_query_params", OPT_INT,
     OFF(max_query_params), 64, 1, 4096,
     "parameters in a request's query string, on every path (414 uri_too_long past it)"},
    {"max-answer-bytes-per-connection", "PATHD_MAX_ANSWER_BYTES_PER_CONNECTION",
     "max_answer_bytes_per_connection", OPT_INT, OFF(max_answer_bytes_per_conn), INT64_C(64) << 20,
     1024, INT64_C(1) << 40,
     "largest answer body one connection is given (held until its client reads it; 507 past "
     "it)"},
    {"max-answer-bytes", "PATHD_MAX_ANSWER_BYTES", "max_answer_bytes", OPT_INT,
     OFF(max_answer_bytes), INT64_C(256) << 20, 1024, INT64_C(1) << 40,
     "answer bodies all connections together may hold unread (also charged to --max-memory); "
     "a new answer past it is 503 with Retry-After"},
    {"max-map-cells", "PATHD_MAX_MAP_CELLS", "max_map_cells", OPT_INT, OFF(max_map_cells),
     4 * 1024 * 1024, 1, (INT64_C(256) * 1024 * 1024), "largest width x height of a map (413)"},
    {"max-map-side", "PATHD_MAX_MAP_SIDE", "max_map_side", OPT_INT, OFF(max_map_side), 8192, 1,
     16384, "largest width or height of a map (413)"},
    {"max-maps", "PATHD_MAX_MAPS", "max_maps", OPT_INT, OFF(max_maps), 1024, 1, 1000000,
     "maps held at once (413 for one more)"},
    {"max-batch", "PATHD_MAX_BATCH", "max_batch", OPT_INT, OFF(max_batch), 256, 1, 100000,
     "queries in one batch request (413 past it)"},
    {"max-connections", "PATHD_MAX_CONNECTIONS", "max_connections", OPT_INT, OFF(max_connections),
     1024, 1, 1000000, "open HTTP connections"},
    {"max-per-ip", "PATHD_MAX_PER_IP", "max_connections_per_ip", OPT_INT, OFF(max_per_ip), 128, 0,
     1000000,
     "open connections per client address (more are closed at once); 0 = no limit. Behind a "
     "proxy every client has the proxy's address: raise it or set 0"},
    {"conn-timeout", "PATHD_CONN_TIMEOUT", "connection_timeout_s", OPT_INT, OFF(conn_timeout_s), 30,
     1, 86400,
     "seconds a connection may wait for its next request line, from its accept or its last "
     "answer, whether bytes trickle in or not; then it is closed"},
    {"request-timeout", "PATHD_REQUEST_TIMEOUT", "request_timeout_s", OPT_INT,
     OFF(request_timeout_s), 10, 1, 3600,
     "seconds from a request's first line to the last byte of its body; a slower request's "
     "connection is closed"},
    {"health-port", "PATHD_HEALTH_PORT", "health_port", OPT_INT, OFF(health_port), -1, -1, 65535,
     "a second listener on --bind for /healthz, /readyz and /metrics only, with its own "
     "connections, so probes are answered while slow clients hold every connection of --port; "
     "-1 = none, 0 = a free port"},
    {"deadline-ms", "PATHD_DEADLINE_MS", "default_deadline_ms", OPT_INT, OFF(deadline_ms), 5000, 1,
     3600000,
     "default request deadline in ms, counted from the request's arrival (504 past it, also "
     "while it waits for a worker); a path request may set deadline_ms"},
    {"max-deadline-ms", "PATHD_MAX_DEADLINE_MS", "max_deadline_ms", OPT_INT, OFF(max_deadline_ms),
     60000, 1, 3600000, "largest deadline_ms a request may ask for (422 past it)"},
    {"slice-ms", "PATHD_SLICE_MS", "batch_slice_ms", OPT_INT, OFF(slice_ms), 10, 1, 60000,
     "ms a batch runs before it gives its worker to a waiting request (and queues again behind "
     "its client's fair share)"},
    {"cache-entries", "PATHD_CACHE_ENTRIES", "cache_entries_per_map", OPT_INT, OFF(cache_entries),
     4096, 0, 10000000, "answered paths cached per map (LRU); 0 = no cache"},
    {"cache-bytes", "PATHD_CACHE_BYTES", "cache_bytes_per_map", OPT_INT, OFF(cache_bytes),
     64 * 1024 * 1024, 0, INT64_C(1) << 40, "bytes of cached paths per map (LRU)"},
    {"cluster-size", "PATHD_CLUSTER_SIZE", "hpa_cluster_size", OPT_INT, OFF(cluster_size), 0, 0,
     1024, "HPA* cluster side; 0 = the library default"},
    {"landmark-bytes", "PATHD_LANDMARK_BYTES", "jps_landmark_bytes_per_map", OPT_INT,
     OFF(landmark_bytes), 16 * 1024 * 1024, 0, INT64_C(1) << 32,
     "bytes of landmark tables per map for jps's differential heuristic (4 per cell per "
     "landmark, up to 16 landmarks); 0 = octile only"},
    {"jps-table-bytes", "PATHD_JPS_TABLE_BYTES", "jps_table_bytes_per_map", OPT_INT,
     OFF(jps_table_bytes), 24 * 1024 * 1024, 0, INT64_C(1) << 34,
     "bytes of JPS+ jump tables per map (16 per cell); maps whose tables do not fit use the "
     "jump bits alone; 0 = none"},
    {"subgoal-work-per-cell", "PATHD_SUBGOAL_WORK_PER_CELL", "subgoal_work_per_cell", OPT_INT,
     OFF(subgoal_work), PF_PLANNER_DEFAULT_SUBGOAL_WORK_PER_CELL, 0, 1000000,
     "grid maps: the subgoal graph's contraction hierarchy (algorithm subgoal, auto's third "
     "choice) is built only where its contraction takes at most this many units of work a "
     "cell (deterministic; 64 is about 0.1 s on a 512x512 map: mazes with corridors 2 cells "
     "wide or more get it, dense maps do not); 0 = never"},
    {"retry-after", "PATHD_RETRY_AFTER", "retry_after_s", OPT_INT, OFF(retry_after_s), 1, 0, 3600,
     "Retry-After seconds of 503 answers"},
    {"drain-timeout", "PATHD_DRAIN_TIMEOUT", "drain_timeout_s", OPT_INT, OFF(drain_timeout_s), 30,
     0, 3600, "SIGTERM: longest wait for requests in flight"},
    {"max-sessions-per-map", "PATHD_MAX_SESSIONS_PER_MAP", "max_sessions_per_map", OPT_INT,
     OFF(max_sessions_per_map), 1024, 1, 1000000,
     "D* Lite sessions per map (429 too_many_sessions past it)"},
    {"max-sessions", "PATHD_MAX_SESSIONS", "max_sessions", OPT_INT, OFF(max_sessions), 65536, 1,
     10000000, "sessions on all maps together (503 overloaded past it)"},
    {"session-ttl", "PATHD_SESSION_TTL", "session_ttl_s", OPT_INT, OFF(session_ttl_s), 600, 1,
     604800, "seconds an idle session lives when it does not say ttl_s"},
    {"session-max-ttl", "PATHD_SESSION_MAX_TTL", "session_max_ttl_s", OPT_INT,
     OFF(session_max_ttl_s), 3600, 1, 604800, "largest ttl_s a session may ask for (422 past it)"},
    {"session-replan-interval-ms", "PATHD_SESSION_REPLAN_INTERVAL_MS", "session_replan_interval_ms",
     OPT_INT, OFF(session_replan_interval_ms), 0, 0, 3600000,
     "a session's replan.min_interval_ms when it does not say: no replan sooner than this after "
     "the last one, unless its route cannot be followed; 0 = none"},
    {"session-replan-updates", "PATHD_SESSION_REPLAN_UPDATES", "session_replan_updates", OPT_INT,
     OFF(session_replan_updates), 0, 0, 1000000,
     "a session's replan.min_updates when it does not say: at most one replan every n requests "
     "(a frame count), unless its route cannot be followed; 0 = none"},
    {"session-goal-threshold", "PATHD_SESSION_GOAL_THRESHOLD", "session_goal_threshold", OPT_INT,
     OFF(session_goal_threshold), 0, 0, 1000000,
     "a session's replan.goal_threshold when it does not say (map units): a goal move replans "
     "only once the goal is farther than this from where it was last planned to; 0 = any move"},
    {"session-hysteresis-pct", "PATHD_SESSION_HYSTERESIS_PCT", "session_hysteresis_pct", OPT_INT,
     OFF(session_hysteresis_pct), 0, 0, 90,
     "a session's replan.hysteresis when it does not say, in percent: a new route replaces the "
     "kept one only when cheaper by this fraction; 0 = off"},
    {"nav-target-slide-pct", "PATHD_NAV_TARGET_SLIDE_PCT", "nav_target_slide_pct", OPT_INT,
     OFF(nav_target_slide_pct), 100, 0, 10000,
     "how far a navmesh session's goal may slide along its corridor without a search, in percent "
     "of the agent type's search box half width (the goal's moves since the last plan added up); "
     "each move must stay in the corridor's last polygon or one next to it; 0 = every goal move "
     "plans anew"},
    {"session-min-replan-interval-ms", "PATHD_SESSION_MIN_REPLAN_INTERVAL_MS",
     "session_min_replan_interval_ms", OPT_INT, OFF(session_min_replan_interval_ms), 0, 0, 3600000,
     "the least replan.min_interval_ms any session gets (one asking less gets this): bounds the "
     "searches one session costs whatever its clients send; 0 = none"},
    {"max-patch-changes", "PATHD_MAX_PATCH_CHANGES", "max_patch_changes", OPT_INT,
     OFF(max_patch_changes), 65536, 1, 16777216,
     "cell and door changes in one map PATCH (422 too_many_changes past it)"},
    {"change-log-cells", "PATHD_CHANGE_LOG_CELLS", "change_log_cells", OPT_INT,
     OFF(change_log_cells), 1 << 20, 0, INT64_C(1) << 26,
     "cells a map's change log keeps (8 bytes each) so sessions behind rebase incrementally; "
     "a session further behind is rebuilt from the map"},
    {"max-updates", "PATHD_MAX_UPDATES", "max_updates", OPT_INT, OFF(max_updates), 1024, 1, 1000000,
     "updates (NDJSON lines) in one request (413 past it)"},
    {"max-streams", "PATHD_MAX_STREAMS", "max_streams", OPT_INT, OFF(max_streams), 512, 1, 1000000,
     "open WebSocket session streams (503 past it); each holds a connection, so it must be below "
     "--max-connections, the rest staying for plain HTTP"},
    {"ws-max-message", "PATHD_WS_MAX_MESSAGE", "ws_max_message_bytes", OPT_INT, OFF(ws_max_message),
     1024 * 1024, 125, 64 * 1024 * 1024, "largest WebSocket message accepted (close 1009 past it)"},
    {"ws-max-outbound", "PATHD_WS_MAX_OUTBOUND", "ws_max_outbound_bytes", OPT_INT,
     OFF(ws_max_outbound), 16 * 1024 * 1024, 4096, INT64_C(1) << 30,
     "bytes queued to one stream that its peer has not read; past it the stream is closed "
     "with 1008 (an answer larger than this on its own: 1009)"},
    {"ws-idle-timeout", "PATHD_WS_IDLE_TIMEOUT", "ws_idle_timeout_s", OPT_INT,
     OFF(ws_idle_timeout_s), 300, 1, 86400,
     "seconds a stream may go without a message from its peer (a ping counts); then close 1000"},
    {"ws-close-timeout", "PATHD_WS_CLOSE_TIMEOUT", "ws_close_timeout_ms", OPT_INT,
     OFF(ws_close_timeout_ms), 5000, 100, 600000,
     "ms the server waits for the peer's close frame (and for its last frames to be read) "
     "after closing a stream; then the TCP connection is dropped"},
    {"max-goals", "PATHD_MAX_GOALS", "max_goals", OPT_INT, OFF(max_goals), 64, 1, 65536,
     "goals of one path request, which answers the nearest (413 past it)"},
    {"max-agent-size", "PATHD_MAX_AGENT_SIZE", "max_agent_size", OPT_INT, OFF(max_agent_size), 8, 1,
     64,
     "largest agent_size: an n x n agent; each size used on a map costs 2 bytes a cell "
     "(plus a hierarchy for hpa) the first time (422 past it)"},
    {"max-snap-radius", "PATHD_MAX_SNAP_RADIUS", "max_snap_radius", OPT_INT, OFF(max_snap_radius),
     16, 0, 1024, "largest snap_radius, in cells (422 past it)"},
    {"max-flowfield-goals", "PATHD_MAX_FLOWFIELD_GOALS", "max_flowfield_goals", OPT_INT,
     OFF(max_flowfield_goals), 1024, 1, 1048576, "goals of one flow field (413 past it)"},
    {"max-flowfield-cells", "PATHD_MAX_FLOWFIELD_CELLS", "max_flowfield_cells", OPT_INT,
     OFF(max_flowfield_cells), 4 * 1024 * 1024, 1, INT64_C(256) * 1024 * 1024,
     "cells of one flow field, its region or else the whole map (413 past it); the answer "
     "holds about 7 bytes a cell"},
    {"flowfield-cache-entries", "PATHD_FLOWFIELD_CACHE_ENTRIES", "flowfield_cache_entries_per_map",
     OPT_INT, OFF(flowfield_cache_entries), 64, 0, 1000000,
     "flow fields cached per map version (LRU, dropped by PATCH); 0 = no cache"},
    {"flowfield-cache-bytes", "PATHD_FLOWFIELD_CACHE_BYTES", "flowfield_cache_bytes_per_map",
     OPT_INT, OFF(flowfield_cache_bytes), 64 * 1024 * 1024, 0, INT64_C(1) << 40,
     "bytes of cached flow fields per map version"},
    {"max-request-expanded", "PATHD_MAX_REQUEST_EXPANDED", "max_request_expanded", OPT_INT,
     OFF(max_request_expanded), INT64_C(1) << 28, 1, INT64_C(1) << 40,
     "cells all the searches of one distance table, or one flow field, may settle together (413 "
     "past it)"},
    {"max-table-entries", "PATHD_MAX_TABLE_ENTRIES", "max_table_entries", OPT_INT,
     OFF(max_table_entries), 10000, 1, 100000000,
     "sources x targets of one distance table (413 past it)"},
    {"max-table-paths", "PATHD_MAX_TABLE_PATHS", "max_table_paths", OPT_INT, OFF(max_table_paths),
     2500, 0, 100000000, "sources x targets of a table that asks for paths (413 past it)"},
    {"max-table-path-cells", "PATHD_MAX_TABLE_PATH_CELLS", "max_table_path_cells", OPT_INT,
     OFF(max_table_path_cells), 4 * 1024 * 1024, 1, INT64_C(1) << 32,
     "cells of all the paths of one table together (413 past it, about 10 bytes a cell)"},
    {"stream-max-inflight", "PATHD_STREAM_MAX_INFLIGHT", "stream_max_inflight", OPT_INT,
     OFF(stream_max_inflight), 4, 1, 1024,
     "multiplexed stream: jobs one connection runs on the pool at once"},
    {"stream-max-pending", "PATHD_STREAM_MAX_PENDING", "stream_max_pending", OPT_INT,
     OFF(stream_max_pending), 4096, 1, 1000000,
     "multiplexed stream: messages one connection may have queued or running; past it the "
     "server reads no more from it until answers are sent"},
    {"stream-max-sessions", "PATHD_STREAM_MAX_SESSIONS", "stream_max_sessions", OPT_INT,
     OFF(stream_max_sessions), 16384, 1, 10000000,
     "multiplexed stream: distinct sessions one connection may address (limit_exceeded past it)"},
    {"store-timeout-ms", "PATHD_STORE_TIMEOUT_MS", "store_timeout_ms", OPT_INT,
     OFF(store_timeout_ms), 2000, 10, 600000,
     "--store: longest time one change or load waits for Redis, all its round trips together "
     "(503 past it: store_unavailable when nothing was sent, store_outcome_unknown when a "
     "change was sent and not confirmed)"},
    {"store-accept-volatile", "PATHD_STORE_ACCEPT_VOLATILE", "store_accept_volatile", OPT_BOOL,
     OFF(store_accept_volatile), 0, 0, 1,
     "--store: acknowledge changes even when Redis neither persists (appendonly, RDB save "
     "points) nor replicates, so a restart of it loses them (without it: 503 "
     "store_not_durable); with CONFIG disabled (managed Redis), also when INFO shows neither "
     "appendonly nor a replica"},
    {"store-wait-replicas", "PATHD_STORE_WAIT_REPLICAS", "store_wait_replicas", OPT_INT,
     OFF(store_wait_replicas), 0, 0, 64,
     "--store: after each change, wait (Redis WAIT) until this many replicas have it; fewer "
     "within --store-wait-ms: 503 store_outcome_unknown; 0 = no wait"},
    {"store-wait-ms", "PATHD_STORE_WAIT_MS", "store_wait_ms", OPT_INT, OFF(store_wait_ms), 1000, 1,
     600000,
     "--store-wait-replicas: longest replica wait of one change (never past "
     "--store-timeout-ms)"},
    {"map-idle-ttl", "PATHD_MAP_IDLE_TTL", "map_idle_ttl_s", OPT_INT, OFF(map_idle_ttl_s), 600, 0,
     604800,
     "--store: seconds a map copy unused (no request, no session) stays loaded; 0 = forever"},
    {"nav-max-vertices", "PATHD_NAV_MAX_VERTICES", "nav_max_vertices", OPT_INT,
     OFF(nav_max_vertices), 1 << 20, 3, INT64_C(1) << 26,
     "navmesh uploads: OBJ vertices (413 limit_exceeded past it)"},
    {"nav-max-triangles", "PATHD_NAV_MAX_TRIANGLES", "nav_max_triangles", OPT_INT,
     OFF(nav_max_triangles), 1 << 21, 1, INT64_C(1) << 26,
     "navmesh uploads: triangles after fan triangulation (413)"},
    {"nav-max-voxels", "PATHD_NAV_MAX_VOXELS", "nav_max_voxels", OPT_INT, OFF(nav_max_voxels),
     INT64_C(1) << 26, 1, INT64_C(1) << 32,
     "navmesh uploads: voxel columns of the world's x/z extent at its cell_size (413)"},
    {"nav-max-tiles", "PATHD_NAV_MAX_TILES", "nav_max_tiles", OPT_INT, OFF(nav_max_tiles), 16384, 1,
     1 << 20, "navmesh uploads: tile layers (413)"},
    {"nav-build-ms", "PATHD_NAV_BUILD_MS", "nav_build_ms", OPT_INT, OFF(nav_build_ms), 60000, 1,
     3600000, "navmesh: longest build or obstacle change, ms (413 limit_exceeded past it)"},
    {"grid-build-ms", "PATHD_GRID_BUILD_MS", "grid_build_ms", OPT_INT, OFF(grid_build_ms), 60000, 1,
     3600000,
     "grid maps: longest build of an upload or generated maze, or repair of a PATCH, ms (413 "
     "limit_exceeded past it, within a millisecond or so)"},
    {"nav-max-obstacles", "PATHD_NAV_MAX_OBSTACLES", "nav_max_obstacles", OPT_INT,
     OFF(nav_max_obstacles), 4096, 0, 65536, "obstacles on one navmesh map (413)"},
    {"nav-max-areas", "PATHD_NAV_MAX_AREAS", "nav_max_areas", OPT_INT, OFF(nav_max_areas), 48, 0,
     48, "named areas (a grid's doors included) of one navmesh map (413)"},
    {"nav-max-area-boxes", "PATHD_NAV_MAX_AREA_BOXES", "nav_max_area_boxes", OPT_INT,
     OFF(nav_max_area_boxes), 65536, 0, 1 << 24,
     "boxes of all named areas of one navmesh map together (413)"},
    {"nav-max-nodes", "PATHD_NAV_MAX_NODES", "nav_max_nodes", OPT_INT, OFF(nav_max_nodes), 65535, 1,
     65535,
     "search nodes of one navmesh query (Detour's node pool); past it the answer is partial"},
    {"nav-max-tile-spans", "PATHD_NAV_MAX_TILE_SPANS", "nav_max_tile_spans", OPT_INT,
     OFF(nav_max_tile_spans), 1 << 20, 1024, 1 << 24,
     "navmesh builds: voxel spans of one tile, bounded from its triangles before voxelising "
     "(413)"},
    {"nav-max-column-spans", "PATHD_NAV_MAX_COLUMN_SPANS", "nav_max_column_spans", OPT_INT,
     OFF(nav_max_column_spans), 64, 4, 16383,
     "navmesh builds: spans stacked over one voxel column (stacked floors): 4 x this triangles "
     "over a column before voxelising, this many spans after (413)"},
    {"nav-max-links", "PATHD_NAV_MAX_LINKS", "nav_max_links", OPT_INT, OFF(nav_max_links), 4096, 0,
     65536, "off-mesh links on one navmesh map (413)"},
    {"graph-max-nodes", "PATHD_GRAPH_MAX_NODES", "graph_max_nodes", OPT_INT, OFF(graph_max_nodes),
     1 << 21, 1, 1 << 30, "waypoint graph uploads: nodes (413 limit_exceeded past it)"},
    {"graph-max-edges", "PATHD_GRAPH_MAX_EDGES", "graph_max_edges", OPT_INT, OFF(graph_max_edges),
     1 << 24, 0, 1 << 30, "waypoint graph uploads: edges, or DIMACS arcs (413)"},
    {"graph-max-degree", "PATHD_GRAPH_MAX_DEGREE", "graph_max_degree", OPT_INT,
     OFF(graph_max_degree), 1024, 1, 1 << 24,
     "waypoint graph uploads: edges leaving one node, a two-way edge leaving both ends (413)"},
    {"graph-max-doors", "PATHD_GRAPH_MAX_DOORS", "graph_max_doors", OPT_INT, OFF(graph_max_doors),
     1024, 0, 1 << 20, "waypoint graph uploads: door groups (\"doors\") one upload declares (413)"},
    {"graph-max-door-members", "PATHD_GRAPH_MAX_DOOR_MEMBERS", "graph_max_door_members", OPT_INT,
     OFF(graph_max_door_members), 1 << 16, 0, 1 << 26,
     "waypoint graph uploads: edges and nodes in all of one upload's doors together (413)"},
    {"graph-landmarks", "PATHD_GRAPH_LANDMARKS", "graph_landmarks", OPT_INT, OFF(graph_landmarks),
     8, 0, 64,
     "waypoint graphs: ALT landmarks chosen at upload (0: none, alt runs as astar); each costs "
     "8 bytes a node (16 when an edge is one-way) charged to the memory budget, and one or two "
     "Dijkstras over the graph at upload"},
    {"graph-landmark-max-nodes", "PATHD_GRAPH_LANDMARK_MAX_NODES", "graph_landmark_max_nodes",
     OPT_INT, OFF(graph_landmark_max_nodes), 1 << 18, 0, 1 << 30,
     "waypoint graphs with more nodes than this get no landmarks (their upload would run two "
     "Dijkstras a landmark over the whole graph)"},
    {"graph-ch-max-nodes", "PATHD_GRAPH_CH_MAX_NODES", "graph_ch_max_nodes", OPT_INT,
     OFF(graph_ch_max_nodes), 1 << 14, 0, 1 << 30,
     "waypoint graphs of at most this many nodes get a contraction hierarchy (algorithm ch) for "
     "every version, built at the upload and at each PATCH on the worker that makes the version "
     "within --graph-ch-build-ms (0: none)"},
    {"graph-labels-max-bytes", "PATHD_GRAPH_LABELS_MAX_BYTES", "graph_labels_max_bytes", OPT_INT,
     OFF(graph_labels_max_bytes), 32 << 20, 0, (int64_t)1 << 40,
     "waypoint graphs: each version's contraction hierarchy goes on to hub labels (ch queries "
     "read two labels instead of searching) when they fit in this many bytes, charged to the "
     "memory budget with the version (0: none)"},
    {"graph-max-auto-link-pairs", "PATHD_GRAPH_MAX_AUTO_LINK_PAIRS", "graph_max_auto_link_pairs",
     OPT_INT, OFF(graph_link_pairs), 4000000, 1, 1 << 30,
     "waypoint graph uploads: node pairs within auto_link's max_distance whose line of sight "
     "one upload checks (413 naming auto_link.max_distance)"},
    {"graph-ch-build-ms", "PATHD_GRAPH_CH_BUILD_MS", "graph_ch_build_ms", OPT_INT,
     OFF(graph_ch_build_ms), 5000, 1, 3600000,
     "waypoint graphs: longest build of one version's contraction hierarchy, ms, from its start "
     "(upload, PATCH, store replay); past it the version has none and auto and ch run alt"},
    {"nav-max-search-extent", "PATHD_NAV_MAX_SEARCH_EXTENT", "nav_max_search_extent", OPT_INT,
     OFF(nav_max_search_extent), 64, 1, 100000,
     "largest half extent of a navmesh query's search_box, world units (422)"},
    {"max-crowds-per-map", "PATHD_MAX_CROWDS_PER_MAP", "max_crowds_per_map", OPT_INT,
     OFF(max_crowds_per_map), 8, 1, 4096, "crowds on one navmesh map (429 too_many_sessions)"},
    {"max-crowds", "PATHD_MAX_CROWDS", "max_crowds", OPT_INT, OFF(max_crowds), 32, 1, 4096,
     "crowds on all maps together, each with its own copy of its mesh (503 overloaded past it)"},
    {"max-crowd-agents", "PATHD_MAX_CROWD_AGENTS", "max_crowd_agents", OPT_INT,
     OFF(max_crowd_agents), 1000, 1, 65535, "agents of one crowd, its max_agents (413)"},
    {"crowd-max-tick-hz", "PATHD_CROWD_MAX_TICK_HZ", "crowd_max_tick_hz", OPT_INT,
     OFF(crowd_max_tick_hz), 60, 1, 240, "fastest tick_hz a crowd may ask for (422)"},
    {"crowd-max-steps", "PATHD_CROWD_MAX_STEPS", "crowd_max_steps", OPT_INT, OFF(crowd_max_steps),
     600, 1, 100000, "steps one crowd step request may ask for (422)"},
    {"max-mesh-bytes", "PATHD_MAX_MESH_BYTES", "max_mesh_bytes", OPT_INT, OFF(max_mesh_bytes),
     64 * 1024 * 1024, 4096, INT64_C(1) << 32,
     "largest answer of GET /v1/maps/{id}/mesh (a navmesh's geometry for the viewer), bytes; "
     "sized before it is written (413 limit_exceeded past it)"},
    {"max-graph-bytes", "PATHD_MAX_GRAPH_BYTES", "max_graph_bytes", OPT_INT, OFF(max_graph_bytes),
     64 * 1024 * 1024, 4096, INT64_C(1) << 32,
     "largest answer of GET /v1/maps/{id}/graph (a waypoint graph's nodes and edges), bytes; "
     "sized before it is written (413 limit_exceeded past it)"},
    {"max-memory", "PATHD_MAX_MEMORY", "max_memory_bytes", OPT_INT, OFF(max_memory), 0, 0,
     INT64_C(1) << 50,
     "the process's memory budget in bytes: maps, hierarchies, landmarks, change logs, caches, "
     "sessions, stream buffers and bodies count against it, and what would pass it is refused "
     "(507 insufficient_storage, or 503 for bodies); 0 = 3/4 of the memory the process may use "
     "(its cgroup's memory.max, else the machine's RAM)"},
    {"demo", "PATHD_DEMO", "demo", OPT_BOOL, OFF(demo), 0, 0, 1,
     "load the demo maps 'room' and 'maze' at start"},
    {"auth-token-file", "PATHD_AUTH_TOKEN_FILE", NULL, OPT_STR, OFF(auth_token_file), 0, 0,
     sizeof(((pf_config *)0)->auth_token_file),
     "bearer tokens, one '<scope> <token>' a line (scope read or write); reread on SIGHUP"},
    {"insecure-no-auth", "PATHD_INSECURE_NO_AUTH", "insecure_no_auth", OPT_BOOL,
     OFF(insecure_no_auth), 0, 0, 1,
     "serve a non-loopback --bind without tokens: anyone who reaches the port may do anything"},
    {"open-metrics", "PATHD_OPEN_METRICS", "open_metrics", OPT_BOOL, OFF(open_metrics), 0, 0, 1,
     "serve /metrics and /v1/info without a token (they need read otherwise)"},
    {"tls-cert", "PATHD_TLS_CERT", NULL, OPT_STR, OFF(tls_cert), 0, 0,
     sizeof(((pf_config *)0)->tls_cert), "PEM certificate (chain): serve HTTPS (with --tls-key)"},
    {"tls-key", "PATHD_TLS_KEY", NULL, OPT_STR, OFF(tls_key), 0, 0,
     sizeof(((pf_config *)0)->tls_key), "PEM private key of --tls-cert"},
    {"cors-origin", "PATHD_CORS_ORIGIN", NULL, OPT_STR, OFF(cors_origin), 0, 0,
     sizeof(((pf_config *)0)->cors_origin),
     "origins (https://tool.example:8443, comma separated, or *) whose pages may call the API; "
     "unset = no CORS headers"},
    {"allowed-hosts", "PATHD_ALLOWED_HOSTS", NULL, OPT_STR, OFF(allowed_hosts), 0, 0,
     sizeof(((pf_config *)0)->allowed_hosts),
     "Host values answered (comma separated; .example.com takes subdomains); unset = any with "
     "tokens, loopback names without"},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

void pf_config_defaults(pf_config *c) {
    memset(c, 0, sizeof(*c));
    snprintf(c->bind, sizeof(c->bind), "127.0.0.1");
    for (size_t i = 0; i < NOPTS; i++) {
        char *base = (char *)c + opts[i].offset;
        if (opts[i].kind == OPT_INT) *(int64_t *)(void *)base = opts[i].dflt;
        if (opts[i].kind == OPT_BOOL) *(bool *)(void *)base = opts[i].dflt != 0;
    }
}

static pf_status set_opt(pf_config *c, const opt *o, const char *v, const char *from, char *err,
                         size_t errlen) {
    char *base = (char *)c + o->offset;
    if (o->kind == OPT_STR) {
        if (!v || !*v || strlen(v) >= (size_t)o->max) goto bad;
        snprintf(base, (size_t)o->max, "%s", v);
        return PF_OK;
    }
    if (o->kind == OPT_BOOL) {
        if (!v || strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0)
            *(bool *)(void *)base = true;
        else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || strcmp(v, "no") == 0)
            *(bool *)(void *)base = false;
        else
            goto bad;
        return PF_OK;
    }
    {
        char *end;
        long long x;
        if (!v || !*v) goto bad;
        errno = 0;
        x = strtoll(v, &end, 10);
        if (*end || errno || x < o->min || x > o->max) goto bad;
        *(int64_t *)(void *)base = x;
        return PF_OK;
    }
bad:
    if (o->kind == OPT_INT)
        snprintf(err, errlen, "%s: '%s' is not an integer in %lld..%lld", from, v ? v : "",
                 (long long)o->min, (long long)o->max);
    else
        snprintf(err, errlen, "%s: bad value '%s'", from, v ? v : "");
    return PF_EINVAL;
}

/* Settings that constrain each other. */
static pf_status check_together(const pf_config *c, char *err, size_t errlen) {
    /* An upgraded connection stays one of libmicrohttpd's connections until
     * the stream ends, so streams alone must never fill the limit. */
    if (c->max_streams >= c->max_connections) {
        snprintf(err, errlen,
                 "--max-streams (%lld) must be below --max-connections (%lld): every stream "
                 "holds a connection and plain HTTP needs some of its own",
                 (long long)c->max_streams, (long long)c->max_connections);
        return PF_EINVAL;
    }
    if (c->deadline_ms > c->max_deadline_ms) {
        snprintf(err, errlen, "--deadline-ms (%lld) must not exceed --max-deadline-ms (%lld)",
                 (long long)c->deadline_ms, (long long)c->max_deadline_ms);
        return PF_EINVAL;
    }
    return PF_OK;
}

pf_status pf_config_load(pf_config *c, int argc, char **argv, bool *help, char *err,
                         size_t errlen) {
    char from[64];
    *help = false;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            *help = true;
            return PF_OK;
        }
    for (size_t i = 0; i < NOPTS; i++) {
        const char *v = getenv(opts[i].env);
        if (v && *v && set_opt(c, &opts[i], v, opts[i].env, err, errlen)) return PF_EINVAL;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL, *eq;
        size_t nlen;
        const opt *o = NULL;
        if (strncmp(a, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s' (see --help)", a);
            return PF_EINVAL;
        }
        a += 2;
        eq = strchr(a, '=');
        nlen = eq ? (size_t)(eq - a) : strlen(a);
        for (size_t k = 0; k < NOPTS; k++)
            if (strlen(opts[k].flag) == nlen && strncmp(opts[k].flag, a, nlen) == 0) o = &opts[k];
        if (!o) {
            snprintf(err, errlen, "unknown flag '%s' (see --help)", argv[i]);
            return PF_EINVAL;
        }
        if (eq)
            val = eq + 1;
        else if (o->kind != OPT_BOOL) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "flag --%s needs a value", o->flag);
                return PF_EINVAL;
            }
            val = argv[++i];
        }
        snprintf(from, sizeof(from), "--%s", o->flag);
        if (set_opt(c, o, val, from, err, errlen)) return PF_EINVAL;
    }
    return pf_config_check(c, err, errlen);
}

bool pf_config_is_loopback(const char *addr) {
    /* A dotted quad, digits only (sscanf's %u would take blanks and signs). */
    unsigned part[4];
    const char *p = addr;
    for (int i = 0; i < 4; i++) {
        int digits = 0;
        part[i] = 0;
        while (*p >= '0' && *p <= '9' && digits < 4) {
            part[i] = part[i] * 10 + (unsigned)(*p++ - '0');
            digits++;
        }
        if (digits == 0 || digits > 3 || part[i] > 255) return false;
        if (i < 3 && *p++ != '.') return false;
    }
    return *p == '\0' && part[0] == 127;
}

/* Calls fn on each comma-separated item of list (blanks around items
 * trimmed, empty items skipped); stops at the first nonzero answer. */
static int each_item(const char *list, int (*fn)(const char *item, size_t n, void *ud), void *ud) {
    const char *p = list;
    while (*p) {
        const char *s, *e;
        int rc;
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        s = p;
        while (*p && *p != ',') p++;
        e = p;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (e > s && (rc = fn(s, (size_t)(e - s), ud))) return rc;
    }
    return 0;
}

static bool host_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.';
}

/* scheme://host[:port], scheme http or https, nothing after; or "*". */
static int bad_origin(const char *s, size_t n, void *ud) {
    size_t i;
    (void)ud;
    if (n == 1 && s[0] == '*') return 0;
    if (n > 7 && strncmp(s, "http://", 7) == 0)
        i = 7;
    else if (n > 8 && strncmp(s, "https://", 8) == 0)
        i = 8;
    else
        return 1;
    if (s[i] == '[') { /* an IPv6 literal */
        while (i < n && s[i] != ']') i++;
        if (i == n) return 1;
        i++;
    } else {
        size_t h = i;
        while (i < n && host_char(s[i])) i++;
        if (i == h) return 1;
    }
    if (i < n && s[i] == ':') {
        size_t p = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == p) return 1;
    }
    return i != n;
}

/* A host name, IPv4 address or [IPv6], optionally with a leading dot. */
static int bad_host(const char *s, size_t n, void *ud) {
    size_t i = s[0] == '.' ? 1 : 0;
    (void)ud;
    if (n > i && s[i] == '[') return s[n - 1] != ']';
    if (i == n) return 1;
    for (; i < n; i++)
        if (!host_char(s[i])) return 1;
    return 0;
}

pf_status pf_config_check_deadline(const pf_config *c, int64_t deadline_ms, const char *prefix,
                                   pf_proto_error *e) {
    char f[64];
    if (deadline_ms <= c->max_deadline_ms) return PF_OK;
    snprintf(f, sizeof(f), "%sdeadline_ms", prefix);
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                              "deadline_ms %lld is above this server's max_deadline_ms (%lld).",
                              (long long)deadline_ms, (long long)c->max_deadline_ms);
}

pf_status pf_config_check(const pf_config *c, char *err, size_t errlen) {
    bool tokens = c->auth_token_file[0] != '\0';
    if (tokens && c->insecure_no_auth) {
        snprintf(err, errlen,
                 "--auth-token-file and --insecure-no-auth contradict each other; drop one");
        return PF_EINVAL;
    }
    if (!tokens && !c->insecure_no_auth && !pf_config_is_loopback(c->bind)) {
        snprintf(err, errlen,
                 "--bind %s serves other machines, and without tokens anyone who reaches the "
                 "port could replace and delete every map: give --auth-token-file FILE (see "
                 "--help), or --insecure-no-auth to serve without tokens anyway",
                 c->bind);
        return PF_EINVAL;
    }
    if (!c->tls_cert[0] != !c->tls_key[0]) {
        snprintf(err, errlen, "--tls-cert and --tls-key come together");
        return PF_EINVAL;
    }
    if (each_item(c->cors_origin, bad_origin, NULL)) {
        snprintf(err, errlen,
                 "--cors-origin: each item is an origin such as https://tool.example:8443 "
                 "(scheme, host, optional port, no path) or *");
        return PF_EINVAL;
    }
    if (each_item(c->allowed_hosts, bad_host, NULL)) {
        snprintf(err, errlen,
                 "--allowed-hosts: each item is a host name or address without a port "
                 "(pathd.internal, 10.0.0.7, [::1]), or .example.com for its subdomains");
        return PF_EINVAL;
    }
    return check_together(c, err, errlen);
}

/* What a string flag takes, for --help. */
static const char *metavar(const char *flag) {
    if (strcmp(flag, "bind") == 0) return "ADDR";
    if (strcmp(flag, "data-dir") == 0) return "DIR";
    if (strcmp(flag, "store") == 0) return "URL";
    if (strcmp(flag, "instance-id") == 0) return "NAME";
    if (strcmp(flag, "cors-origin") == 0 || strcmp(flag, "allowed-hosts") == 0) return "LIST";
    return "FILE";
}

bool pf_config_option_at(size_t i, pf_config_option *out) {
    if (i >= NOPTS) return false;
    out->flag = opts[i].flag;
    out->env = opts[i].env;
    out->info = opts[i].info;
    out->is_switch = opts[i].kind == OPT_BOOL;
    if (opts[i].kind == OPT_STR) {
        pf_config d;
        const char *v;
        pf_config_defaults(&d);
        v = (const char *)&d + opts[i].offset;
        snprintf(out->dflt, sizeof(out->dflt), "%s", *v ? v : "unset");
    } else if (opts[i].kind == OPT_BOOL) {
        snprintf(out->dflt, sizeof(out->dflt), "off");
    } else {
        snprintf(out->dflt, sizeof(out->dflt), "%lld", (long long)opts[i].dflt);
    }
    return true;
}

void pf_config_print_help(FILE *f) {
    pf_config_option o;
    fprintf(f, "usage: pathd [flags]\n\n"
               "pathd: a pathfinding service for game servers (HTTP/JSON API v1).\n"
               "Every flag can also be set by its environment variable; a flag wins.\n"
               "Flags take a value as --flag VALUE or --flag=VALUE.\n\n");
    for (size_t i = 0; pf_config_option_at(i, &o); i++) {
        char name[64];
        if (opts[i].kind == OPT_STR)
            snprintf(name, sizeof(name), "--%s %s", o.flag, metavar(o.flag));
        else
            snprintf(name, sizeof(name), "--%s%s", o.flag, o.is_switch ? "" : " N");
        fprintf(f, "  %-22s %-22s default %-10s %s\n", name, o.env, o.dflt, opts[i].help);
    }
    fprintf(f, "  %-22s %-22s %-18s %s\n", "--help", "", "", "print this help and exit");
    fprintf(f, "\nSIGTERM or SIGINT: stop accepting, finish requests in flight, exit 0.\n"
               "SIGHUP: reread --auth-token-file (a broken file keeps the tokens in force).\n"
               "API: see proto/openapi.yaml; GET /v1/info reports every limit in effect.\n");
}

void pf_config_visit(const pf_config *c, pf_config_visit_fn fn, void *ud) {
    for (size_t i = 0; i < NOPTS; i++) {
        const char *base = (const char *)c + opts[i].offset;
        if (opts[i].kind == OPT_INT) fn(ud, opts[i].info, *(const int64_t *)(const void *)base);
        if (opts[i].kind == OPT_BOOL) fn(ud, opts[i].info, *(const bool *)(const void *)base);
    }
}
