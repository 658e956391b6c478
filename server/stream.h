/* stream.h -- WebSocket session streams (GET .../sessions/{sid}/stream) and
 * the session reaper, on one libuv loop thread (the "hub").
 *
 * libmicrohttpd answers the opening handshake (101, Sec-WebSocket-Accept
 * from server/ws.c) and hands the upgraded socket over in its upgrade
 * callback; pf_hub_adopt passes it to the hub, which watches it with
 * uv_poll, so no libmicrohttpd thread ever waits on a stream. Each text
 * message is one update (the JSON of POST .../updates); the hub holds the
 * session (busy, like an HTTP request) and runs the update as a job on the
 * worker pool (session.h's pf_session_run, the job the HTTP routes run
 * too); the answer goes back as one text message with the same JSON
 * as the HTTP answer, or an error body {"error":{...}}. A stream handles one
 * message at a time: it reads no further while its job runs, so a client
 * that pipelines messages gets the answers in order. Ping is answered with
 * pong; a close frame is echoed and the socket closed. Protocol errors close
 * with 1002, binary messages with 1003, messages past ws_max_message with
 * 1009. A stream does not keep its session alive by itself: messages do.
 *
 * Crowd streams (GET .../crowds/{cid}/stream) live on the same hub: their
 * messages are crowd commands, and the hub's ticker queues each ticking
 * crowd's steps on the pool at its tick_hz and sends the frames (below).
 *
 * Multiplexed streams (GET /v1/stream, pf_hub_adopt_mux): one connection
 * for any number of sessions, e.g. one per game server. Each text message
 * names its map and session and an op (update, get, create, delete; the
 * message format is session_json.h's pf_mux_message); each answer is one
 * text message {"op","map","session","tag","status","body"} where status
 * and body are what the HTTP route would have answered (no "body" for a
 * 204). Messages of one session run one at a time in the order they came;
 * messages of different sessions run side by side, at most
 * stream_max_inflight of one connection on the pool at once, so answers of
 * different sessions may come back in another order (the tag tells them
 * apart). A message that cannot be taken (malformed, a bad id, past
 * stream_max_sessions sessions with messages outstanding) is answered at
 * once. Per-connection bounds: stream_max_pending messages queued or
 * running, past which the hub reads no more from the socket until answers
 * go out (TCP backpressure); and while more than PF_MUX_OUT_HIGH bytes of
 * answers wait to be sent, no new job starts. Sessions on navmesh maps
 * (path corridors) take the same ops with [x,y,z] points.
 *
 * The hub also frees idle sessions and crowds past their ttl once a
 * second.
 *
 * Thread-safe: adopt, close_all and count from any thread.
 */
#ifndef PF_SERVER_STREAM_H
#define PF_SERVER_STREAM_H

#include <microhttpd.h>
#include <stddef.h>

#include "config.h"
#include "crowd.h"
#include "metrics.h"
#include "navq.h"
#include "pool.h"
#include "registry.h"
#include "session.h"
#include "status.h"

/* Unsent answer bytes of a multiplexed stream past which no job starts. */
#define PF_MUX_OUT_HIGH (4u << 20)

typedef struct pf_hub pf_hub;

/* What the hub uses, borrowed for its life. */
typedef struct pf_hub_deps {
    pf_sessions *sessions; /* held per message; reaped every second */
    pf_registry *registry; /* for the session job */
    pf_pool *pool;         /* runs the session job */
    pf_metrics *metrics;   /* session plans, upgrades, messages */
    size_t ws_max_message; /* largest message in bytes (close 1009 past it) */
    pf_crowds *crowds;     /* ticked and reaped here (NULL: no crowds) */
    pf_navq *navq;         /* for crowd commands */
    pf_crowd_limits crowd_limits;
    /* Multiplexed streams: stream_max_inflight, stream_max_pending,
     * stream_max_sessions, session_ttl_s, session_max_ttl_s,
     * max_sessions_per_map, max_sessions. */
    const pf_config *cfg;
    /* A multiplexed create for a map this instance does not hold loads it
     * first (--store; as routes_load.c does for HTTP), on a build worker.
     * NULL: never. */
    struct pf_maps *maps;
} pf_hub_deps;

/* Starts the hub's thread. PF_ENOMEM. */
pf_status pf_hub_create(const pf_hub_deps *d, pf_hub **out);

/* Takes an upgraded connection of session sid on map map_id: extra[0..n)
 * are bytes libmicrohttpd read past the handshake. Never blocks. */
void pf_hub_adopt(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                  const char *extra, size_t n, const char *map_id, const char *sid);

/* Takes an upgraded connection watching crowd (its reference is taken):
 * each text message is a crowd command (crowd_json.h) answered with the
 * crowd's state; when the crowd ticks, every tick's state is sent to each
 * of its streams (frames are dropped for a stream with more than
 * CROWD_BACKLOG_BYTES unsent). An open stream keeps its crowd from
 * expiring. When the crowd's map goes, the error is sent and the stream
 * closed (1000). */
void pf_hub_adopt_crowd(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                        const char *extra, size_t n, pf_crowd *crowd);
/* Takes an upgraded connection of a multiplexed stream (GET /v1/stream),
 * opened with the token named `who` (auth.h; all zero without one). With
 * own_only (a read token), its messages reach only the sessions that token
 * created (another's is 404 session_not_found), and the sessions it
 * creates are that token's. Never blocks. */
void pf_hub_adopt_mux(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                      const char *extra, size_t n, const pf_auth_id *who, bool own_only);

/* Sends close 1001 (going away) on every stream and closes them once their
 * job, if any, is done (used by the SIGTERM drain). */
void pf_hub_close_all(pf_hub *h);

/* Open streams. */
size_t pf_hub_count(pf_hub *h);
/* Bytes the open streams hold: connection state, input and output buffers,
 * the decoder's message buffer (as of each stream's last input). */
size_t pf_hub_memory(pf_hub *h);

/* Closes every stream and stops the thread. Run it after the pool's last
 * job and before libmicrohttpd stops. NULL is a no-op. */
void pf_hub_destroy(pf_hub *h);

#endif
