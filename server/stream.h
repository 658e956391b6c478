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
 * pong.
 *
 * Limits, each closing the stream with a close frame and a reason:
 *   - protocol errors 1002, binary messages 1003, a close reason that is not
 *     UTF-8 1007, messages past ws_max_message 1009;
 *   - ws_max_outbound: bytes queued to the peer and not yet sent. A peer
 *     that lets the queue pass it is not reading (pings it never reads the
 *     pongs of, answers it never collects): the frames it has not started
 *     to receive are dropped and the stream closed with 1008. An answer
 *     larger than the cap on its own: 1009;
 *   - ws_idle_timeout_s without a message from the peer (a ping counts, the
 *     time an update runs does not): 1000;
 *   - the stream's session ended (expired, deleted, its map replaced or
 *     deleted): an error message session_not_found, then 1000; found within
 *     a second;
 *   - the token it was opened with removed, or cut from write to read, by
 *     a reload of the token file: an error message unauthorized, then
 *     1008, at the reload (pf_hub_tokens_changed);
 *   - the drain at SIGTERM: 1001;
 *   - the process memory budget (memory.h) cannot hold its output: 1013.
 * A stream does not keep its session alive by itself: messages do.
 *
 * The close handshake (RFC 6455 7.1): the peer's close frame is checked
 * (its code must be one an endpoint may send, its reason UTF-8) and echoed;
 * a close the server starts waits for the peer's close frame. Either way the
 * server then shuts down its sending side and reads until the peer hangs
 * up, so the peer reads the close frame rather than a reset; after
 * ws_close_timeout_ms the TCP connection is dropped regardless.
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
 * The limits above apply to multiplexed streams as well, but for the end of
 * a session (they have none of their own); their idle timeout counts only
 * while no message is outstanding.
 *
 * The hub also frees idle sessions and crowds past their ttl once a
 * second.
 *
 * Thread-safe: adopt, close_all and count from any thread.
 */
#ifndef PF_SERVER_STREAM_H
#define PF_SERVER_STREAM_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "crowd.h"
#include "memory.h"
#include "metrics.h"
#include "navq.h"
#include "pool.h"
#include "registry.h"
#include "session.h"
#include "status.h"

/* Unsent answer bytes of a multiplexed stream past which no job starts. */
#define PF_MUX_OUT_HIGH (4u << 20)

typedef struct pf_hub pf_hub;

/* The bearer token a stream was opened with (auth.h): its name and the
 * scope it had then; PF_SCOPE_OPEN (name all zero) when none was needed.
 * A stream keeps its rights only while its token holds them: when a
 * reload (SIGHUP) removes the token or cuts its scope, the stream is sent
 * an unauthorized error and closed with 1008 at once (pf_hub_tokens_changed),
 * and no message of it starts after the reload. */
typedef struct pf_hub_token {
    pf_auth_id who;
    pf_scope scope;
} pf_hub_token;

/* What the hub uses, borrowed for its life. */
typedef struct pf_hub_deps {
    pf_sessions *sessions;       /* held per message; reaped every second */
    pf_registry *registry;       /* for the session job */
    pf_pool *pool;               /* runs the session job */
    pf_metrics *metrics;         /* searches */
    size_t ws_max_message;       /* largest message in bytes (close 1009 past it) */
    size_t max_streams;          /* places for streams (pf_hub_reserve) */
    size_t ws_max_outbound;      /* bytes queued to a peer (close 1008 past it) */
    int64_t ws_idle_timeout_s;   /* without a message from the peer: close 1000 */
    int64_t ws_close_timeout_ms; /* wait for the peer's close, then drop the link */
    int64_t deadline_ms;         /* an update waiting longer for a worker: deadline_exceeded */
    pf_mem *mem;                 /* the process budget the buffers are charged to */
    pf_crowds *crowds;           /* ticked and reaped here (NULL: no crowds) */
    pf_navq *navq;               /* for crowd commands */
    pf_crowd_limits crowd_limits;
    /* Multiplexed streams: stream_max_inflight, stream_max_pending,
     * stream_max_sessions, session_ttl_s, session_max_ttl_s,
     * max_sessions_per_map, max_sessions, max_agent_size. */
    const pf_config *cfg;
    /* A multiplexed create for a map this instance does not hold loads it
     * first (--store; as routes_load.c does for HTTP), on a build worker.
     * NULL: never. */
    struct pf_maps *maps;
    /* The tokens in force (guard.h), asked whether a stream's token still
     * holds after a reload. NULL: streams keep their rights. */
    struct pf_guard *guard;
} pf_hub_deps;

/* Starts the hub's thread. PF_ENOMEM. */
pf_status pf_hub_create(const pf_hub_deps *d, pf_hub **out);

/* Takes one of max_streams places for a stream about to be upgraded; false
 * when they are all taken (the handshake is refused, 503). Every reserve is
 * followed by exactly one pf_hub_adopt (which keeps the place until the
 * stream ends) or pf_hub_unreserve (the upgrade did not happen). */
bool pf_hub_reserve(pf_hub *h);
void pf_hub_unreserve(pf_hub *h);

/* Takes an upgraded connection of session sid on map map_id, on a place
 * pf_hub_reserve took: extra[0..n) are bytes libmicrohttpd read past the
 * handshake. Never blocks. */
void pf_hub_adopt(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                  const char *extra, size_t n, const char *map_id, const char *sid,
                  const pf_hub_token *tok);

/* Takes an upgraded connection watching crowd (its reference is taken) on
 * a place pf_hub_reserve took: each text message is a crowd command
 * (crowd_json.h) answered with the crowd's state; when the crowd ticks,
 * every tick's state is sent to each of its streams (frames are dropped
 * for a stream with more than CROWD_BACKLOG_BYTES unsent). An open stream
 * keeps its crowd from expiring. When the crowd's map goes, the error is
 * sent and the stream closed (1000). */
void pf_hub_adopt_crowd(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                        const char *extra, size_t n, pf_crowd *crowd, const pf_hub_token *tok);
/* Takes an upgraded connection of a multiplexed stream (GET /v1/stream) on
 * a place pf_hub_reserve took, opened with the token tok. With own_only (a
 * read token), its messages reach only the sessions that token created
 * (another's is 404 session_not_found), and the sessions it creates are
 * that token's. Never blocks. */
void pf_hub_adopt_mux(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                      const char *extra, size_t n, const pf_hub_token *tok, bool own_only);
/* The token file was reloaded (any thread): every open stream whose token
 * no longer holds its scope is sent an unauthorized error and closed
 * (1008) on the hub's thread; this returns once that is done. */
void pf_hub_tokens_changed(pf_hub *h);

/* Sends close 1001 (going away) on every stream and closes them once their
 * job, if any, is done (used by the SIGTERM drain). */
void pf_hub_close_all(pf_hub *h);

/* Open streams. */
size_t pf_hub_count(pf_hub *h);

/* Streams open now, and the closes the server started, by cause, since the
 * start. */
typedef struct pf_hub_stats {
    uint64_t open;
    uint64_t closed_slow_reader;   /* 1008: ws_max_outbound queued */
    uint64_t closed_too_big;       /* 1009: one answer larger than ws_max_outbound */
    uint64_t closed_idle;          /* 1000: ws_idle_timeout_s */
    uint64_t closed_session_gone;  /* 1000: the session ended */
    uint64_t dropped_after_close;  /* no close frame from the peer within ws_close_timeout_ms */
    uint64_t closed_memory;        /* 1013: the memory budget could not hold its output */
    uint64_t closed_token_revoked; /* 1008: its token was removed or cut down by a reload */
    uint64_t reaper_runs;          /* once-a-second passes over the streams (on_tick) */
} pf_hub_stats;

void pf_hub_get_stats(pf_hub *h, pf_hub_stats *out);

/* Closes every stream and stops the thread. Run it after the pool's last
 * job and before libmicrohttpd stops. NULL is a no-op. */
void pf_hub_destroy(pf_hub *h);

#endif
