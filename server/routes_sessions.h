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
 *
 * Owners: a session remembers the token that created it. With tokens, a
 * read token reads, updates, streams and deletes only its own sessions
 * (another's is 404 session_not_found, as if it did not exist); a write
 * token reaches every session.
 */
#ifndef PF_SERVER_ROUTES_SESSIONS_H
#define PF_SERVER_ROUTES_SESSIONS_H

#include "config.h"
#include "metrics.h"
#include "registry.h"
#include "routes.h"
#include "session.h"
#include "stream.h"
#include "ws.h"

/* Borrowed; filled by server.c. */
struct pf_sessions_routes {
    pf_registry *registry;
    pf_sessions *sessions;
    pf_hub *hub;
    pf_metrics *metrics;  /* searches */
    const pf_config *cfg; /* session ttls and limits, max_updates, max_streams */
    pf_mem *mem;          /* the process budget a new session reserves its search in */
};

/* Checks a WebSocket opening handshake (RFC 6455 4.2: Upgrade,
 * Connection, version 13, the key); fills accept and returns true, or
 * answers the error (426, 400) and returns false. The session and crowd
 * streams' handshake; the caller then takes a place (pf_hub_reserve). */
bool pf_routes_ws_handshake(pf_req *r, char accept[PF_WS_ACCEPT_LEN + 1]);

#endif
