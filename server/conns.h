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
 * Answers held for slow readers. An answer's body stays in memory from
 * the moment it is queued until its last byte is sent (libmicrohttpd frees
 * it then, or when the connection closes), so a client that asks for a big
 * answer and never reads holds it: 120 such connections held 830 MB of
 * flow fields. Every body is counted here while it is held, against two
 * caps: answer_conn_max, the most one connection may hold (an HTTP/1.1
 * connection holds one answer at a time: libmicrohttpd reads no next
 * request before the answer is sent, so this is the largest answer a
 * connection is given), and answer_total_max, the most all connections
 * together may hold. http.c answers in their place, with a short error
 * body: 507 when one answer alone is past answer_conn_max, 503 with
 * Retry-After while the total is full (bytes are freed as readers read, or
 * as --conn-timeout closes the connections that stopped reading). The
 * bytes are also charged to the memory budget (PF_MEM_ANSWERS, by http.c).
 *
 * Thread-safe: every function from any thread; the state updates are
 * atomic and take no lock.
 */
#ifndef PF_SERVER_CONNS_H
#define PF_SERVER_CONNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct pf_conns pf_conns;
typedef struct pf_conn pf_conn;

/* Starts the watchdog. request_ms and idle_ms as above (> 0); the caps on
 * answers held (bytes, > 0). PF_ENOMEM. */
pf_status pf_conns_create(int64_t request_ms, int64_t idle_ms, int64_t answer_conn_max,
                          int64_t answer_total_max, pf_conns **out);
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

/* An answer body of n bytes is about to be queued: PF_OK (counted until
 * pf_conns_answer_sent), PF_ELIMIT when it alone is past answer_conn_max,
 * PF_ENOMEM when the total would pass answer_total_max (nothing counted
 * then). force counts it whatever the caps (the short refusals). */
pf_status pf_conns_answer_hold(pf_conns *t, size_t n, bool force);
/* The body of n bytes was sent, or dropped with its connection. */
void pf_conns_answer_sent(pf_conns *t, size_t n);

/* Connections closed by a deadline since the start: of a request too slow
 * to arrive, and of a connection waiting too long for one; answers held
 * now and refused since the start. */
typedef struct pf_conns_stats {
    uint64_t open;
    uint64_t closed_slow_request;
    uint64_t closed_idle;
    uint64_t answers_held, answers_bytes; /* bodies queued and not yet sent, and their bytes */
    uint64_t answers_too_big;             /* 507: one answer past answer_conn_max */
    uint64_t answers_refused;             /* 503: answer_total_max (or the budget) was full */
} pf_conns_stats;

/* Counts an answer refused for the memory budget (http.c's 503). */
void pf_conns_answer_refused(pf_conns *t);

void pf_conns_get_stats(pf_conns *t, pf_conns_stats *out);

#endif
