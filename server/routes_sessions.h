/* routes_sessions.h -- the D* Lite session routes (routes.h's `sessions`
 * rows): create (POST /v1/maps/{id}/sessions), read, delete, updates
 * (POST .../updates, JSON or NDJSON) and the WebSocket stream's opening
 * handshake (GET .../stream).
 *
 * Create, read and updates hold the session (busy: a second request gets
 * 409) and run the session job (session.h's pf_session_run, the same the
 * stream hub runs for each WebSocket message) on the pool. Delete and the
 * handshake answer on the I/O thread; after the 101 the stream hub
 * (stream.h) owns the socket.
 */
#ifndef PF_SERVER_ROUTES_SESSIONS_H
#define PF_SERVER_ROUTES_SESSIONS_H

#include "config.h"
#include "metrics.h"
#include "registry.h"
#include "routes.h"
#include "session.h"
#include "stream.h"

/* Borrowed; filled by server.c. */
struct pf_sessions_routes {
    pf_registry *registry;
    pf_sessions *sessions;
    pf_hub *hub;
    pf_metrics *metrics;  /* searches */
    const pf_config *cfg; /* session ttls and limits, max_updates, max_streams */
};

#endif
