/* routes_crowds.h -- the crowd routes (routes.h's `crowds` rows), navmesh
 * maps only: create (POST /v1/maps/{id}/crowds), read, delete, step
 * (POST .../crowds/{cid}/step: a command, crowd_json.h) and the WebSocket
 * stream's opening handshake (GET .../crowds/{cid}/stream).
 *
 * Create, read and step run on the pool (a crowd's mesh copy and its steps
 * are work); delete and the handshake answer on the I/O thread; after the
 * 101 the stream hub (stream.h) owns the socket and ticks the crowd.
 */
#ifndef PF_SERVER_ROUTES_CROWDS_H
#define PF_SERVER_ROUTES_CROWDS_H

#include "config.h"
#include "crowd.h"
#include "navq.h"
#include "registry.h"
#include "routes.h"
#include "stream.h"

/* Borrowed; filled by server.c. */
struct pf_crowds_routes {
    pf_registry *registry;
    pf_crowds *crowds;
    pf_hub *hub;
    pf_navq *navq;
    const pf_config *cfg; /* crowd limits, session_ttl_s, max_streams */
};

/* The crowd limits of cfg, for the parsers. */
pf_crowd_limits pf_crowds_routes_limits(const pf_config *cfg);

#endif
