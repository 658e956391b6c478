/* http.h -- the HTTP front end: a libmicrohttpd daemon and the life of each
 * request on it. This is where a request enters the server.
 *
 * Connections: at most --max-connections, --max-per-ip from one address
 * (libmicrohttpd closes the others at once), and conns.h's absolute
 * deadlines (--conn-timeout to send a request line, --request-timeout for
 * the whole request), which libmicrohttpd's idle timeout is not. With
 * --health-port a second daemon with connections of its own serves the
 * probes (/healthz, /readyz, /metrics), so they are answered while slow
 * clients hold every connection of the API's port.
 *
 * For each request, on a libmicrohttpd I/O thread: RFC 9112's rules that
 * libmicrohttpd leaves out are checked (http_strict.h: 400, 501), then the
 * Host (guard.h: 421), CORS (an allowed Origin's headers, preflights
 * answered 204), the route (router.h; 404, 405 with Allow, 400 for a bad
 * map id), the bearer token against the route's scope (401 with
 * WWW-Authenticate, 403), readiness (503 not_ready while the stored maps
 * load), the Content-Type against the route's body types (415; text/plain
 * only with a token) and the body gathered within --max-body (413); then
 * the route's handler runs
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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "conns.h"
#include "guard.h"
#include "maps.h"
#include "memory.h"
#include "metrics.h"
#include "pool.h"
#include "routes.h"
#include "status.h"

typedef struct pf_http pf_http;

/* Borrowed for the front end's life. */
typedef struct pf_http_deps {
    const pf_config *cfg; /* bind, port, io_threads, max_connections, max_per_ip,
                           * conn_timeout_s, request_timeout_s, health_port,
                           * max_body_bytes, queue_limit, retry_after_s, tls_cert,
                           * tls_key */
    const pf_routes *routes;
    pf_conns *conns; /* watches every connection of both listeners */
    pf_mem *mem;     /* the process budget request bodies are charged to */
    pf_pool *pool;
    pf_metrics *metrics;
    _Atomic(const char *) *instance; /* the X-Pathd-Instance of every answer */
    pf_guard *guard;                 /* Host, CORS and tokens */
    pf_maps *maps;                   /* whether the stored maps are still loading */
} pf_http_deps;

/* Does not listen yet. PF_ENOMEM. */
pf_status pf_http_create(const pf_http_deps *d, pf_http **out);

/* Listens on cfg.bind:cfg.port, with TLS when cfg.tls_cert is set
 * (libmicrohttpd's GnuTLS support; TLS 1.2 and 1.3). PF_EINVAL when the
 * daemon cannot start (the port is taken, the address is wrong, the
 * certificate or key cannot be read or do not match); err gets a
 * sentence. */
pf_status pf_http_start(pf_http *h, char *err, size_t errlen);
/* Whether it speaks TLS. */
bool pf_http_is_tls(const pf_http *h);

/* The bound TCP port (useful with --port 0); 0 before start. */
uint16_t pf_http_port(const pf_http *h);
/* The probes' listener's port (--health-port), 0 when there is none. */
uint16_t pf_http_health_port(const pf_http *h);

/* The drain begins: every new request is answered 503 shutting_down and
 * its connection closed. A listener with one I/O thread (the probes') also
 * stops accepting; one with a pool keeps accepting until pf_http_stop
 * (libmicrohttpd 0.9.75 cannot quiesce a pool safely; http.c). */
void pf_http_quiesce(pf_http *h);

/* Requests received and not yet done (answered and sent, or dropped). */
uint64_t pf_http_in_flight(const pf_http *h);

/* Stops the daemon (its threads, every connection). Later calls are
 * no-ops. */
void pf_http_stop(pf_http *h);

/* Stops if needed and frees. NULL is a no-op. */
void pf_http_destroy(pf_http *h);

#endif
