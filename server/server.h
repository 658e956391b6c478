/* server.h -- the pathd server as one object: HTTP front end
 * (libmicrohttpd), worker pool, map registry, metrics.
 *
 * Where a request goes:
 *   http.c      libmicrohttpd calls pf__http_on_request: the body is
 *               gathered, limits and content type checked, the route found
 *               (router.c);
 *   handlers.c  the route's handler answers at once (health, info, map
 *               info, cache hits) or suspends the connection and queues a
 *               job on the pool (pool.c);
 *   handlers.c  the job (run_paths, run_build) runs on a worker with that
 *               worker's search context, calls pf_planner_search (core's one
 *               dispatch), writes the JSON answer (proto/) and resumes the
 *               connection, which sends it.
 *   session.c   D* Lite sessions: handlers.c holds one (busy) for a
 *               request and runs its sync / validate / apply / plan as a
 *               job (pf__session_run); PATCH builds the next map version.
 *   stream.c    WebSocket streams: libmicrohttpd upgrades the connection
 *               and the hub thread (libuv) reads messages, runs each as a
 *               session job on the pool and writes the answers; it also
 *               reaps idle sessions.
 *
 * Lifecycle: create, start (listens), [load demo maps], drain on SIGTERM
 * (stop accepting, finish requests in flight), destroy.
 */
#ifndef PF_SERVER_SERVER_H
#define PF_SERVER_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "grid.h"
#include "status.h"

typedef struct pf_server pf_server;

/* Copies cfg. Starts the worker pool; does not listen yet. PF_ENOMEM. */
pf_status pf_server_create(const pf_config *cfg, pf_server **out);

/* Listens on cfg.bind:cfg.port. PF_EINVAL when the daemon cannot start (the
 * port is taken, the address is wrong); err gets a sentence. */
pf_status pf_server_start(pf_server *s, char *err, size_t errlen);

/* The bound TCP port (useful with --port 0). */
uint16_t pf_server_port(const pf_server *s);

/* Builds and publishes a map directly (used for the demo maps at start).
 * Takes g. */
pf_status pf_server_add_map(pf_server *s, const char *id, pf_grid *g);

/* --data-dir: opens (creates) cfg.data_dir and publishes every map stored
 * there at its stored version; from then on every map change is written
 * there before it is answered. PF_EINVAL with a sentence in err when the
 * directory cannot be used. */
pf_status pf_server_open_store(pf_server *s, char *err, size_t errlen);

/* Stops accepting connections, answers new requests on open connections
 * with 503, waits up to timeout_ms for requests in flight, then stops the
 * daemon. Returns the number of requests still in flight at the end (0 on a
 * clean drain). */
uint64_t pf_server_drain(pf_server *s, int64_t timeout_ms);

/* Stops everything and frees. NULL is a no-op. */
void pf_server_destroy(pf_server *s);

#endif
