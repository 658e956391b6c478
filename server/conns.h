/* conns.h -- the absolute deadlines of HTTP connections, which
 * libmicrohttpd does not have.
 *
 * libmicrohttpd 0.9.75's MHD_OPTION_CONNECTION_TIMEOUT counts idle time
 * only: every byte received restarts it, so a client that sends a header
 * byte every few seconds (slowloris) holds its connection for as long as it
 * likes. This module tracks every connection of a daemon (through
 * MHD_OPTION_NOTIFY_CONNECTION, MHD_OPTION_URI_LOG_CALLBACK and the request
 * callbacks, see http.c) in one of four states, and a watchdog thread
 * closes those past an absolute deadline:
 *
 *   WAITING   accepted, or its last answer sent, and no request line yet:
 *             at most idle_ms (--conn-timeout) in this state, bytes or not;
 *   RECEIVING its request line came: the headers and the whole body must
 *             follow within request_ms (--request-timeout);
 *   HANDLING  the request is complete and being answered (or its job
 *             waits for a worker, whose own deadline applies): no limit;
 *   UPGRADED  a WebSocket stream: the hub (stream.c) owns its limits.
 *
 * Closing is shutdown(SHUT_RDWR) on the socket: libmicrohttpd's next read
 * sees the end and closes the connection itself. The watchdog holds the
 * table's lock while it does so, and pf_conns_close (called by
 * libmicrohttpd's NOTIFY_CLOSED, before it closes the socket) takes the
 * same lock, so the descriptor shut down is always still this connection's.
 * A connection closed this way gets no answer: it never finished asking.
 *
 * Thread-safe: every function from any thread; the state updates are
 * atomic and take no lock.
 */
#ifndef PF_SERVER_CONNS_H
#define PF_SERVER_CONNS_H

#include <stdint.h>

#include "status.h"

typedef struct pf_conns pf_conns;
typedef struct pf_conn pf_conn;

/* Starts the watchdog. request_ms and idle_ms as above (> 0). PF_ENOMEM. */
pf_status pf_conns_create(int64_t request_ms, int64_t idle_ms, pf_conns **out);
/* Stops the watchdog and frees the table (call after the daemons stopped:
 * every connection is closed then). NULL is a no-op. */
void pf_conns_destroy(pf_conns *t);

/* A connection of socket fd was accepted: WAITING. NULL on ENOMEM (the
 * connection is then simply not watched). */
pf_conn *pf_conns_open(pf_conns *t, int fd);
/* libmicrohttpd is about to close it. NULL is a no-op. */
void pf_conns_close(pf_conns *t, pf_conn *c);

/* State changes; NULL is a no-op. */
void pf_conn_request_line(pf_conn *c);     /* -> RECEIVING */
void pf_conn_request_received(pf_conn *c); /* -> HANDLING */
void pf_conn_request_done(pf_conn *c);     /* -> WAITING (not once UPGRADED) */
void pf_conn_upgraded(pf_conn *c);         /* -> UPGRADED, for good */

/* Connections closed by a deadline since the start: of a request too slow
 * to arrive, and of a connection waiting too long for one. */
typedef struct pf_conns_stats {
    uint64_t open;
    uint64_t closed_slow_request;
    uint64_t closed_idle;
} pf_conns_stats;

void pf_conns_get_stats(pf_conns *t, pf_conns_stats *out);

#endif
