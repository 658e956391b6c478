/* http.h -- the HTTP front end: a libmicrohttpd daemon and the life of each
 * request on it. This is where a request enters the server.
 *
 * For each request, on a libmicrohttpd I/O thread: the route is found in
 * the table (router.h; 404, 405 with Allow, 400 for a bad map id), the
 * Content-Type checked against the route's body types (415) and the body
 * gathered within --max-body (413); then the route's handler runs
 * (routes.h), which answers at once or queues a job on the pool
 * (request.h); the answer goes out when it is set, and the request is
 * counted in the metrics when libmicrohttpd reports it done. The I/O
 * threads never search or build.
 *
 * Thread-safety: create, start, quiesce, stop and destroy from one thread
 * (server.c); pf_http_in_flight and pf_http_port from any.
 */
#ifndef PF_SERVER_HTTP_H
#define PF_SERVER_HTTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "metrics.h"
#include "pool.h"
#include "routes.h"
#include "status.h"

typedef struct pf_http pf_http;

/* Borrowed for the front end's life. */
typedef struct pf_http_deps {
    const pf_config *cfg; /* bind, port, io_threads, max_connections, max_per_ip,
                           * conn_timeout_s, max_body_bytes, queue_limit, retry_after_s */
    const pf_routes *routes;
    pf_pool *pool;
    pf_metrics *metrics;
    _Atomic(const char *) *instance; /* the X-Pathd-Instance of every answer */
} pf_http_deps;

/* Does not listen yet. PF_ENOMEM. */
pf_status pf_http_create(const pf_http_deps *d, pf_http **out);

/* Listens on cfg.bind:cfg.port. PF_EINVAL when the daemon cannot start (the
 * port is taken, the address is wrong); err gets a sentence. */
pf_status pf_http_start(pf_http *h, char *err, size_t errlen);

/* The bound TCP port (useful with --port 0); 0 before start. */
uint16_t pf_http_port(const pf_http *h);

/* Stops accepting connections; requests that still arrive on open
 * connections are answered 503 shutting_down. */
void pf_http_quiesce(pf_http *h);

/* Requests received and not yet done (answered and sent, or dropped). */
uint64_t pf_http_in_flight(const pf_http *h);

/* Stops the daemon (its threads, every connection). Later calls are
 * no-ops. */
void pf_http_stop(pf_http *h);

/* Stops if needed and frees. NULL is a no-op. */
void pf_http_destroy(pf_http *h);

#endif
