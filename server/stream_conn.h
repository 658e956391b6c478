/* stream_conn.h -- the hub's WebSocket connection, and what the stream
 * files share (internal to them: stream.c, the hub; stream_conn.c, the
 * connection; stream_session.c, stream_crowd.c and stream_mux.c, one kind
 * of stream each). Everything here runs on the hub's loop thread unless
 * it says otherwise.
 *
 * A connection is one upgraded socket: its framing (ws.h), its input and
 * output buffers charged to the memory budget, the outbound cap, the close
 * handshake, the token it was opened with, and at most one job of its own
 * on the pool. What its text messages mean is its kind's: a
 * pf_stream_ops table, the kind's struct starting with the pf_wsconn it
 * extends (as libuv's handles do).
 *
 * A connection's life (RFC 6455 section 7):
 *
 *   OPEN       messages flow both ways.
 *   CLOSE_SENT the server sent a close frame (idle, session gone, outbound
 *              cap, drain): it sends nothing more and reads the peer's
 *              frames only to find its close frame, until ws_close_timeout.
 *   LINGER     the handshake is over (or failed on a protocol error): the
 *              last frames are flushed, the sending side shut down, and the
 *              input read and dropped until the peer hangs up or
 *              ws_close_timeout passes, so the peer reads the close frame
 *              instead of a reset.
 *   GONE       the peer hung up or the socket failed: freed as soon as no
 *              job runs for it.
 */
#ifndef PF_SERVER_STREAM_CONN_H
#define PF_SERVER_STREAM_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "errors.h"
#include "stream.h"
#include "ws.h"

typedef struct pf_wsconn pf_wsconn;
typedef struct pf_stream_done pf_stream_done;

/* Work the pool finished, handed back to the hub's thread (pf__hub_done):
 * answered there. discard frees an item the hub never answered (it
 * stopped first); NULL for items that cannot outlive the loop (a
 * connection's job: the loop does not end while one runs). */
struct pf_stream_done {
    pf_stream_done *next;
    void (*answered)(pf_stream_done *d);
    void (*discard)(pf_stream_done *d);
};

/* One kind of stream. NULL members: the kind has nothing to do there. */
typedef struct pf_stream_ops {
    /* A text message the token allows, on an OPEN connection. */
    void (*on_text)(pf_wsconn *c, const uint8_t *data, size_t len);
    /* Jobs of the kind's own still running: the connection is not freed. */
    bool (*running)(const pf_wsconn *c);
    /* Messages queued or running: the idle timeout does not count. */
    bool (*outstanding)(const pf_wsconn *c);
    /* Whether the connection decodes another message now (backpressure). */
    bool (*may_read)(const pf_wsconn *c);
    /* Output went out: room for more. */
    void (*on_writable)(pf_wsconn *c);
    /* Bytes of the kind's own state, charged with the buffers. */
    size_t (*held)(const pf_wsconn *c);
    /* The reaper, once a second on an OPEN idle-checked connection: closes
     * it (and returns true) when what it streams has ended. */
    bool (*ended)(pf_wsconn *c, uint64_t now);
    /* Releases what the kind holds; the connection is freed after. */
    void (*release)(pf_wsconn *c);
} pf_stream_ops;

typedef enum pf_conn_state {
    PF_CONN_OPEN = 0,
    PF_CONN_CLOSE_SENT,
    PF_CONN_LINGER,
    PF_CONN_GONE
} pf_conn_state;

struct pf_wsconn {
    const pf_stream_ops *ops;
    pf_hub *hub;
    uv_poll_t poll;
    int fd;
    struct MHD_UpgradeResponseHandle *urh;
    pf_ws_decoder dec;
    uint8_t *in; /* input not yet decoded: in[in_off..in_len) */
    size_t in_len, in_off, in_cap;
    uint8_t *out; /* frames not yet sent: out[out_off..out_len); frames start at 0 */
    size_t out_len, out_off, out_cap;
    pf_conn_state state;
    int events;           /* what the poll watches now */
    bool in_job;          /* its job runs on the pool: read nothing more */
    bool polling;         /* the poll handle is initialised */
    bool wr_shut;         /* LINGER: shutdown(SHUT_WR) done */
    bool finished;        /* unlinked; freed when its poll handle is closed */
    size_t charged_out;   /* PF_MEM_STREAMS charged: the output buffer */
    size_t charged_rest;  /* ... and the input and message buffers, the kind's state */
    uint64_t last_msg_ns; /* the peer's last message or control frame */
    uint64_t close_by_ns; /* CLOSE_SENT, LINGER: dropped at this time */
    /* Its job (pf__conn_answered answers it): the answer, and whether the
     * connection closes after it (set by the job). */
    pf_pool_job job; /* job.client: the peer address's fair share */
    pf_stream_done done;
    char *answer;
    size_t answer_len;
    bool end_after_answer;
    pf_wsconn *next; /* the hub's incoming list */
    pf_wsconn *all_prev, *all_next;
    pf_auth_id who;     /* the stream's token (set before the hub sees c) */
    pf_scope scope;     /* ... its scope then; PF_SCOPE_OPEN: none */
    uint64_t token_gen; /* the token file's reloads when the token last held */
};

struct pf_hub {
    pf_hub_deps d;
    uv_loop_t loop;
    uv_async_t async;
    uv_timer_t reaper;
    uv_timer_t ticker; /* the next crowd tick (stream_crowd.c) */
    uv_thread_t thread;
    uv_mutex_t mu; /* guards incoming, done, the flags, count and the stats */
    pf_wsconn *incoming;
    pf_stream_done *done;
    bool close_all, stop, rescan;
    uint64_t token_checks_asked, token_checks_done; /* pf_hub_tokens_changed */
    uv_cond_t token_cv;
    size_t count; /* streams adopted and not yet freed, and places reserved */
    pf_hub_stats stats;
    pf_wsconn *all; /* loop thread only */
};

/* The hub (stream.c). */

/* Hands d to the hub's thread (any thread). */
void pf__hub_done(pf_hub *h, pf_stream_done *d);
/* Counts a close the server started, by its cause (any thread). */
void pf__hub_count_close(pf_hub *h, uint64_t *counter);

/* The connection (stream_conn.c). */

/* Makes c (zeroed, the kind's struct) a connection of kind ops on a
 * place pf_hub_reserve took, with the bytes libmicrohttpd read past the
 * handshake; then the kind fills its part and calls pf__conn_adopt.
 * False when out of memory: the caller frees what it allocated and calls
 * pf__conn_refuse. */
bool pf__conn_init(pf_wsconn *c, pf_hub *h, const pf_stream_ops *ops, MHD_socket sock,
                   struct MHD_UpgradeResponseHandle *urh, const char *extra, size_t n,
                   const pf_hub_token *tok);
/* Hands c to the hub's thread, which starts watching it (any thread). */
void pf__conn_adopt(pf_wsconn *c);
/* An upgrade that could not be taken: the socket closed, the place freed. */
void pf__conn_refuse(pf_hub *h, struct MHD_UpgradeResponseHandle *urh);

/* The hub's thread takes c (from pf__conn_adopt); closing: the hub drains
 * or stops. */
void pf__conn_start(pf_wsconn *c, bool closing);

size_t pf__conn_out_pending(const pf_wsconn *c);
/* The peer is gone: nothing more is sent or read. */
void pf__conn_gone(pf_wsconn *c);
/* Starts the closing handshake from the server's side. */
void pf__conn_close_with(pf_wsconn *c, int code, const char *reason);
/* Queues a text message or a pong under the outbound cap (closing the
 * stream past it) and writes what it can. */
void pf__conn_send_frame(pf_wsconn *c, int op, const void *data, size_t len);
void pf__conn_send_error(pf_wsconn *c, pf_error code, const char *field, const char *msg);
void pf__conn_send_perror(pf_wsconn *c, const pf_proto_error *e);
/* Whether c's token still holds its rights; when not, the peer is told,
 * the stream closed, and false returned. */
bool pf__conn_still_allowed(pf_wsconn *c);
/* Decodes and handles buffered input until a job starts, the state stops
 * asking for input, or it runs out; then pf__conn_update_poll. */
void pf__conn_process(pf_wsconn *c);
/* Watches what c waits for; frees c when it is done. */
void pf__conn_update_poll(pf_wsconn *c);
/* c's own job is back (c->done's answered): its answer sent, then the
 * input read on. */
void pf__conn_answered(pf_stream_done *d);

/* Crowd streams' ticks (stream_crowd.c), on the hub's ticker. */
void pf__crowd_streams_tick(uv_timer_t *t);
/* A crowd's tick rate changed, or crowds went: ticks rescheduled, the
 * streams of crowds that are gone told so and closed. */
void pf__crowd_streams_rescan(pf_hub *h);

#endif
