/* itest.h -- helpers for the integration suites that run the real server
 * (test_http.c, test_routes_*.c, test_stream.c, ...): start/stop it, send a
 * request, read fields of a JSON answer, the maps and sessions several
 * suites use. Each helper fails the current Check test on error. */
#ifndef PF_ITEST_H
#define PF_ITEST_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "httpc.h"

/* A NULL-terminated argument list for it_start. */
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Starts PATHD_BIN with args on an ephemeral port, ready to serve, with
 * --grid-build-ms and --nav-build-ms at their largest unless args set them
 * (httpc.c: sanitizer builds on a loaded machine are slow). */
hc_server it_start(const char *const *args);
/* SIGTERM, and the server must exit 0. */
void it_stop(hc_server *s);
/* One request on a fresh connection; body may be NULL. Free with hc_free. */
hc_resp it_req(const hc_server *s, const char *method, const char *path, const char *ctype,
               const char *body);

/* The value at a dotted path ("stats.expanded", "path.0.1": a number
 * indexes an array) of o, or NULL. */
const cJSON *it_get(const cJSON *o, const char *path);
double it_num(const cJSON *o, const char *path);
const char *it_str(const cJSON *o, const char *path);
bool it_truth(const cJSON *o, const char *path);

/* The answer's body as JSON; fails the test when it is not JSON. */
cJSON *it_json(const hc_resp *r);

/* Checks an error answer: status, code and (when given) field. */
void it_expect_error(const hc_resp *r, int status, const char *code, const char *field);

/* The 10x7 test room: wall in column 4 from the top, gap in the bottom row. */
extern const char it_room_json[];

/* An 8x5 map whose right part is walled off. */
extern const char it_island_json[];

/* A 12x8 map: a wall across row 3 with a one-cell gap at x = 5 (too narrow
 * for a 2x2 agent), and a room in the bottom right, (9,6)-(10,6), closed on
 * every side. */
extern const char it_gap_map[];

/* An open w x h Moving AI map with a wall across the middle row, gap at the
 * right end. Free with free(). */
char *it_open_map_text(int w, int h);

/* PUT /v1/maps/{id} with body, which must be answered `expect`. */
void it_put_map(const hc_server *s, const char *id, const char *ctype, const char *body,
                int expect);

/* A batch of Dijkstra searches across a 512 x 512 open map: seconds of
 * work, which keeps a worker busy until the batch's deadline. */
char *it_slow_batch(int n, int deadline_ms);

/* Sends a JSON POST on a new connection without waiting for the answer;
 * returns the socket (close it to hang up). */
int it_send_json_post(uint16_t port, const char *path, const char *body);

/* The pool's figures in GET /v1/info (pool.*). */
typedef struct it_pool {
    int running, queued;
    double completed; /* jobs that ran to their end (a requeued slice is not one) */
    double expired;   /* taken off the queue at their deadline */
    double requeued;  /* slices long jobs gave back */
    double rejected;  /* refused: the queue was full */
} it_pool;
it_pool it_pool_now(const hc_server *s);

/* Polls /v1/info until the pool runs `running` jobs with `queued` waiting.
 * A job's HTTP answer goes out a moment before its worker counts it done,
 * so both numbers are checked. No clock: a state never reached ends the
 * test at its Check timeout. */
void it_wait_pool(const hc_server *s, int running, int queued);

/* Seconds since t0 (CLOCK_MONOTONIC). */
double it_since(const struct timespec *t0);

/* Resident memory of process pid in KiB (/proc/pid/status VmRSS), -1 when
 * it cannot be read. */
long it_rss_kib(pid_t pid);

/* A body as JSON; fails the test when it is not JSON. */
cJSON *it_json_text(const char *body);

/* Sends a request, checks its status, returns the body as JSON (NULL for
 * 204). */
cJSON *it_call(const hc_server *s, const char *method, const char *path, const char *ctype,
               const char *body, int expect);

/* Sends a request that must fail with status, code and (when given)
 * field. */
void it_call_error(const hc_server *s, const char *method, const char *path, const char *ctype,
                   const char *body, int status, const char *code, const char *field);

/* A 10x7 room split by a wall in column 4 with two doors in it: "gate" at
 * (4,3), open, and "hatch" at (4,0), closed. */
extern const char it_door_map[];

/* PUTs it_door_map as map id (201, two doors). */
void it_put_door_map(const hc_server *s, const char *id);

/* A waypoint graph upload: a chain of n nodes 0-1-...-(n-1) one apart,
 * two-way edges. Free with free(). */
char *it_graph_chain_json(int n);

/* Creates a session; returns its answer and writes its URL into url. */
cJSON *it_session_create(const hc_server *s, const char *map, int sx, int sy, int gx, int gy,
                         const char *extra, char *url, size_t cap);

/* POSTs body to the session's .../updates, which must be answered
 * `expect`; returns the body as it_call does. */
cJSON *it_session_update(const hc_server *s, const char *url, const char *ctype, const char *body,
                         int expect);

/* A session whose plans its max_expanded or deadline_ms stop (grid or
 * graph): given its answer a (taken: freed here), GETs url until an answer
 * says found, and returns that one. Every answer before it must say found
 * false with reason `reason` ("node_budget", "deadline"), no path, and
 * stats.expanded above 0 and at most cap (0: not checked); at most 5,000
 * reads. *reads counts the answers, a included; *expanded adds up their
 * stats.expanded. */
cJSON *it_session_read_until_found(const hc_server *s, cJSON *a, const char *url,
                                   const char *reason, uint64_t cap, int *reads,
                                   uint64_t *expanded);

/* The path's first and last points. */
void it_path_ends(const cJSON *j, int sx, int sy, int gx, int gy);

/* Whether the path passes cell (x, y). */
bool it_path_has(const cJSON *j, int x, int y);

/* Navmesh maps. */

/* A JSON navmesh envelope converting grid text (Moving AI) with extra
 * members (",\"agent\":{...}" or ""). Free with free(). */
char *it_nav_envelope(const char *grid_text, const char *extra);

/* PUTs a navmesh map id converted from an open w x h grid (201). */
void it_put_nav_open(const hc_server *s, const char *id, int w, int h);

/* POSTs a navmesh path query {"start":[sx,sy,sz],"goal":[...]<extra>}
 * which must be answered 200; returns the answer. */
cJSON *it_nav_path(const hc_server *s, const char *map, const float start[3], const float goal[3],
                   const char *extra);

/* The answer's path point i (x, y, z) and count. */
int it_nav_npoints(const cJSON *j);
void it_nav_point(const cJSON *j, int i, float out[3]);

#endif
