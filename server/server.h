/* server.h -- the pathd server as one object: HTTP front end
 * (libmicrohttpd), worker pool, map registry and store, sessions, streams,
 * metrics. server.c makes the parts and hands each only the parts it uses.
 *
 * Where a request goes:
 *   http.c       where it enters: libmicrohttpd calls on_request; the route
 *                is found in the table (routes.h, matched by router.c: 404,
 *                405 with Allow, 400 for a bad map id), the Content-Type
 *                checked against the route's body types (415), the body
 *                gathered within --max-body (413);
 *   routes.h     the table of every route: method, path shape, body types,
 *                scope, metrics name, and the resource file whose handler
 *                runs it (routes.c calls it; with --store, routes_load.c
 *                first loads a map this instance does not hold);
 *   routes_*.c   one file per resource: routes_ops.c (health, readiness,
 *                info, metrics, the viewer), routes_maps.c (list, upload,
 *                PATCH, DELETE, cells; changes go through maps.c, which
 *                keeps the store (memory, data directory, shared Redis) and
 *                the registry in agreement),
 *                routes_paths.c (path queries and batches), routes_sessions.c
 *                (D* Lite sessions and the WebSocket handshake). A handler
 *                answers at once through request.h (answers, errors from
 *                proto/errors.h's one table, headers) or queues a job on the
 *                pool (pool.c);
 *   the job      runs on a worker with that worker's search context: a path
 *                search calls pf_planner_search (core's one dispatch), an
 *                upload builds the planner (maps.c), a session runs
 *                session.c's pf_session_run; it writes the JSON answer
 *                (proto/) and resumes the connection (pf_req_finish), which
 *                sends it;
 *   stream.c     WebSocket streams: after the 101 the hub thread (libuv)
 *                owns the socket (stream_conn.c: framing, buffers, close
 *                handshake), runs each message as its kind of stream says
 *                (stream_session.c, stream_crowd.c, stream_mux.c: the same
 *                session job on the pool), writes the answers, and reaps
 *                idle sessions.
 *
 * No file of this walk calls back into one before it: http.c -> routes.c ->
 * routes_*.c -> request.c, maps.c, session.c, registry.c -> core.
 *
 * Lifecycle: create, open the store, start (listens, then loads the stored
 * and demo maps in the background), reload tokens on SIGHUP, drain on
 * SIGTERM (stop accepting, finish requests in flight), destroy.
 */
#ifndef PF_SERVER_SERVER_H
#define PF_SERVER_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "grid.h"
#include "status.h"

typedef struct pf_server pf_server;

/* Copies cfg (checked by pf_config_check) and reads its token file.
 * Starts the worker pool; does not listen yet. PF_ENOMEM, or the token
 * file's status (PF_EINVAL, PF_EPARSE, PF_ELIMIT) with a sentence in err. */
pf_status pf_server_create(const pf_config *cfg, pf_server **out, char *err, size_t errlen);

/* Opens the store cfg names (maps.h's pf_maps_open_store): --data-dir (its
 * maps are loaded by pf_server_start) or --store (the shared Redis,
 * followed from now on). PF_EINVAL with a sentence in err when it cannot
 * be used. Before pf_server_start. */
pf_status pf_server_open_store(pf_server *s, char *err, size_t errlen);

/* Listens on cfg.bind:cfg.port at once, then loads the data directory's
 * maps (at their stored versions) and, with cfg.demo, the demo maps whose
 * names no stored map has, on a thread of its own: until that is done
 * /readyz is 503 and every route that uses maps 503 not_ready. PF_EINVAL
 * when the daemon cannot start (the port is taken, the address is wrong,
 * TLS files are bad); err gets a sentence. */
pf_status pf_server_start(pf_server *s, char *err, size_t errlen);

/* The bound TCP port (useful with --port 0). */
uint16_t pf_server_port(const pf_server *s);
/* The probes' listener's bound port (--health-port), 0 when there is none. */
uint16_t pf_server_health_port(const pf_server *s);

/* SIGHUP: rereads --auth-token-file. On failure (err says why) the tokens
 * in force stay. PF_EINVAL without a token file. Any thread. */
pf_status pf_server_reload_tokens(pf_server *s, char *err, size_t errlen);

/* How the server answers, for the start-up line: "https, tokens: 2 read +
 * 1 write from FILE, hosts: any" or "http, NO AUTH (loopback only), ...". */
void pf_server_describe(pf_server *s, char *buf, size_t len);

/* The name in every answer's X-Pathd-Instance header. */
const char *pf_server_instance(pf_server *s);

/* Stops accepting connections, answers new requests on open connections
 * with 503, waits up to timeout_ms for requests in flight, then stops the
 * daemon. Returns the number of requests still in flight at the end (0 on a
 * clean drain). */
uint64_t pf_server_drain(pf_server *s, int64_t timeout_ms);

/* Stops everything and frees. NULL is a no-op. */
void pf_server_destroy(pf_server *s);

#endif
