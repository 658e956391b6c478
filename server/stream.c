/* stream.c -- see stream.h.
 *
 * A stream's life (RFC 6455 section 7):
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
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <uv.h>

#include "clock.h"
#include "crowd_json.h"
#include "errors.h"
#include "guard.h"
#include "maps.h"
#include "mux_json.h"
#include "router.h"
#include "ws.h"

/* Bytes read from the socket at once, and chunks read per poll event before
 * the loop serves the other streams. */
#define READ_CHUNK 16384
#define READS_PER_POLL 4
#define REAP_EVERY_MS 1000
/* Crowd frames are not queued past this much unsent output on a stream: a
 * slow reader misses frames (counted) rather than growing a backlog. */
#define CROWD_BACKLOG_BYTES (4u << 20)
#define MAX_DUE 64
/* A server frame's header is at most 10 bytes (no mask). */
#define FRAME_HEADER_MAX 10
#define MUX_BUCKETS 4096 /* hash chains of a multiplexed connection's sessions */

typedef struct wsconn wsconn;
typedef struct mux_entry mux_entry;

/* One message of a multiplexed stream, from its parse to its answer. */
typedef struct mux_msg {
    struct mux_msg *next; /* in its entry's queue, or the hub's done list */
    wsconn *c;
    mux_entry *entry;
    pf_mux_message m;
    pf_pool_job job;
    char *answer;
    size_t answer_len;
    size_t held; /* counted in its connection's mux_state.held */
} mux_msg;

/* The messages of one session on one connection: run one at a time. */
struct mux_entry {
    char key[2 * PF_MUX_ID_MAX + 24]; /* map '/' session, or "#create <n>" */
    uint64_t hash;
    mux_msg *head, *tail; /* queued, not started */
    bool running, in_ready;
    mux_entry *ready_next; /* the connection's FIFO of entries that may start */
    mux_entry *hnext;
};

typedef struct mux_state {
    mux_entry *buckets[MUX_BUCKETS];
    size_t nentries;
    mux_entry *ready_head, *ready_tail;
    size_t pending; /* messages queued or running */
    size_t running;
    uint64_t creates;
    size_t held; /* bytes of the entries and queued or running messages */
} mux_state;

typedef enum ws_state { WS_OPEN = 0, WS_CLOSE_SENT, WS_LINGER, WS_GONE } ws_state;

struct wsconn {
    pf_hub *hub;
    uv_poll_t poll;
    int fd;
    struct MHD_UpgradeResponseHandle *urh;
    char map_id[PF_MAP_ID_MAX + 1];
    char sid[PF_SESSION_ID_MAX + 1];
    pf_ws_decoder dec;
    uint8_t *in; /* input not yet decoded: in[in_off..in_len) */
    size_t in_len, in_off, in_cap;
    uint8_t *out; /* frames not yet sent: out[out_off..out_len); frames start at 0 */
    size_t out_len, out_off, out_cap;
    ws_state state;
    int events;           /* what the poll watches now */
    bool in_job;          /* an update runs on the pool: read nothing more */
    bool polling;         /* the poll handle is initialised */
    bool wr_shut;         /* LINGER: shutdown(SHUT_WR) done */
    bool finished;        /* unlinked; freed when its poll handle is closed */
    size_t charged_out;   /* PF_MEM_STREAMS charged: the output buffer */
    size_t charged_rest;  /* ... and the input and message buffers */
    uint64_t last_msg_ns; /* the peer's last message or control frame */
    uint64_t close_by_ns; /* CLOSE_SENT, LINGER: dropped at this time */
    /* A crowd stream's crowd (a reference), or NULL for a session's. */
    pf_crowd *crowd;
    uint64_t frames_dropped;
    bool end_after_answer; /* set by the job: close after its answer */
    /* The job. */
    pf_pool_job job;
    pf_update_list upd;
    pf_crowd_command cmd;
    pf_session *sess;
    char *answer;
    size_t answer_len;
    struct wsconn *next; /* incoming / done list */
    struct wsconn *all_prev, *all_next;
    mux_state *mux;     /* a multiplexed stream; NULL for one session's */
    pf_auth_id who;     /* the stream's token (set before the hub sees c) */
    pf_scope scope;     /* ... its scope then; PF_SCOPE_OPEN: none */
    uint64_t token_gen; /* the token file's reloads when the token last held */
    bool own_only;      /* a multiplexed stream of a read token: only its own sessions */
    /* Its id for the sessions it answers (session.h's pf_session_run_on:
     * an answer whose plan did not change since the last one this stream
     * was sent is short). Set before the hub sees c, read only after. */
    uint64_t stream_id;
};

/* One crowd tick on the pool, and its frame back to the hub. */
typedef struct tick_job {
    pf_pool_job job; /* first: the pool hands back &job */
    pf_hub *hub;
    pf_crowd *crowd; /* a reference */
    char *frame;
    size_t len;
    bool gone; /* the crowd's map is gone: frame is the error */
    struct tick_job *next;
} tick_job;

struct pf_hub {
    pf_hub_deps d;
    uv_loop_t loop;
    uv_async_t async;
    uv_timer_t reaper;
    uv_timer_t ticker; /* the next crowd tick */
    uv_thread_t thread;
    uv_mutex_t mu; /* guards incoming, done, frames, mux_done, the flags, count and the stats */
    wsconn *incoming, *done;
    tick_job *frames;
    mux_msg *mux_done;
    bool close_all, stop, rescan;
    uint64_t token_checks_asked, token_checks_done; /* pf_hub_tokens_changed */
    uv_cond_t token_cv;
    size_t count; /* streams adopted and not yet freed, and places reserved */
    pf_hub_stats stats;
    wsconn *all; /* loop thread only */
};

static void update_poll(wsconn *c);
static void process(wsconn *c);
static void mux_free(mux_state *x);
static void mux_on_text(wsconn *c, const uint8_t *data, size_t len);
static void mux_pump(wsconn *c);

static void push(pf_hub *h, wsconn **list, wsconn *c) {
    uv_mutex_lock(&h->mu);
    c->next = *list;
    *list = c;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
}

/* Counts a close the server started, by its cause. */
static void count_close(pf_hub *h, uint64_t *counter) {
    uv_mutex_lock(&h->mu);
    (*counter)++;
    uv_mutex_unlock(&h->mu);
}

static void conn_free(wsconn *c) {
    pf_hub *h = c->hub;
    pf_mem_uncharge(h->d.mem, PF_MEM_STREAMS, c->charged_out + c->charged_rest);
    if (c->urh) MHD_upgrade_action(c->urh, MHD_UPGRADE_ACTION_CLOSE);
    pf_ws_decoder_free(&c->dec);
    pf_update_list_free(&c->upd);
    pf_crowd_command_free(&c->cmd);
    if (c->crowd) {
        pf_crowd_watch(c->crowd, false);
        pf_crowd_release(c->crowd);
    }
    mux_free(c->mux);
    free(c->in);
    free(c->out);
    free(c->answer);
    free(c);
    uv_mutex_lock(&h->mu);
    h->count--;
    uv_mutex_unlock(&h->mu);
}

static void on_poll_closed(uv_handle_t *hd) { conn_free(hd->data); }

/* Unlinks c and frees it once its poll handle is closed. Never while a job
 * runs. */
static void finish(wsconn *c) {
    pf_hub *h = c->hub;
    if (c->in_job || c->finished) return;  /* the job's end calls finish again */
    if (c->mux && c->mux->running) return; /* so does the last job's end */
    c->finished = true;
    if (c->all_prev)
        c->all_prev->all_next = c->all_next;
    else if (h->all == c)
        h->all = c->all_next;
    if (c->all_next) c->all_next->all_prev = c->all_prev;
    c->all_prev = c->all_next = NULL;
    if (c->polling) {
        c->polling = false;
        uv_poll_stop(&c->poll);
        uv_close((uv_handle_t *)&c->poll, on_poll_closed);
    } else {
        conn_free(c);
    }
}

static size_t out_pending(const wsconn *c) { return c->out_len - c->out_off; }

/* The peer is gone: nothing more is sent or read. */
static void gone(wsconn *c) {
    c->state = WS_GONE;
    c->out_off = c->out_len = 0;
}

/* Writes what it can of the output without blocking. */
static void flush(wsconn *c) {
    while (c->out_off < c->out_len) {
        ssize_t k =
            send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (k <= 0) { /* the peer is gone */
            gone(c);
            break;
        }
        c->out_off += (size_t)k;
    }
    if (c->out_off == c->out_len) c->out_off = c->out_len = 0;
}

/* The length of the server frame starting at p (complete in the buffer). */
static size_t frame_len(const uint8_t *p) {
    uint8_t l = p[1] & 0x7f;
    uint64_t n = l;
    size_t h = 2;
    if (l == 126) {
        n = ((uint64_t)p[2] << 8) | p[3];
        h = 4;
    } else if (l == 127) {
        n = 0;
        for (int i = 0; i < 8; i++) n = (n << 8) | p[2 + i];
        h = 10;
    }
    return h + (size_t)n;
}

/* Drops the queued frames the peer has not started to receive; the frame
 * being sent is kept whole, so the close frame that follows is read as one. */
static void drop_unsent(wsconn *c) {
    size_t at = 0;
    while (at < c->out_len && at + frame_len(c->out + at) <= c->out_off)
        at += frame_len(c->out + at);
    if (at < c->out_len && at < c->out_off) at += frame_len(c->out + at); /* partly sent */
    c->out_len = at;
    if (c->out_off == c->out_len) c->out_off = c->out_len = 0;
}

/* The process budget cannot hold the stream's output: what the peer has
 * not started to receive is dropped and the stream closed with 1013 (try
 * again later) when the close frame still fits the buffer, else dropped. */
static void over_budget(wsconn *c) {
    uint8_t p[125];
    size_t n;
    drop_unsent(c);
    count_close(c->hub, &c->hub->stats.closed_memory);
    n = pf_ws_close_payload(PF_WS_CLOSE_TRY_AGAIN, "memory budget (--max-memory) spent", p);
    if (c->state != WS_OPEN || c->out_cap - c->out_len < n + FRAME_HEADER_MAX) {
        gone(c);
        return;
    }
    c->out_len += pf_ws_encode(PF_WS_OP_CLOSE, p, n, c->out + c->out_len, c->out_cap - c->out_len);
    pf_metrics_count_ws_message(c->hub->d.metrics, true, PF_WS_OP_CLOSE, n);
    c->state = WS_CLOSE_SENT;
    c->close_by_ns = pf_clock_now_ns() + (uint64_t)c->hub->d.ws_close_timeout_ms * 1000000ull;
}

/* Appends one frame to the output; false when out of memory or past the
 * memory budget (then the stream is closed or dropped). */
static bool queue_frame(wsconn *c, int op, const void *data, size_t len) {
    size_t need = len + FRAME_HEADER_MAX;
    if (c->out_off > 0 && c->out_off >= c->out_len / 2) {
        /* Most of the buffer is sent: move the rest to the front (frames
         * then start at 0 again, which drop_unsent relies on, as the first
         * one left may be partly sent). */
        size_t at = 0;
        while (at + frame_len(c->out + at) <= c->out_off) at += frame_len(c->out + at);
        memmove(c->out, c->out + at, c->out_len - at);
        c->out_off -= at;
        c->out_len -= at;
    }
    if (c->out_len + need > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        uint8_t *b;
        while (cap < c->out_len + need) cap *= 2;
        if (!pf_mem_try_charge(c->hub->d.mem, PF_MEM_STREAMS, cap - c->out_cap)) {
            over_budget(c);
            return false;
        }
        b = realloc(c->out, cap);
        if (!b) {
            pf_mem_uncharge(c->hub->d.mem, PF_MEM_STREAMS, cap - c->out_cap);
            gone(c);
            return false;
        }
        c->charged_out += cap - c->out_cap;
        c->out = b;
        c->out_cap = cap;
    }
    c->out_len += pf_ws_encode(op, data, len, c->out + c->out_len, c->out_cap - c->out_len);
    pf_metrics_count_ws_message(c->hub->d.metrics, true, op, len);
    return true;
}

/* Starts the closing handshake from the server's side: a close frame with
 * code and reason, then CLOSE_SENT. */
static void close_with(wsconn *c, int code, const char *reason) {
    uint8_t p[125];
    if (c->state != WS_OPEN) return;
    if (!queue_frame(c, PF_WS_OP_CLOSE, p, pf_ws_close_payload(code, reason, p))) return;
    c->state = WS_CLOSE_SENT;
    c->close_by_ns = pf_clock_now_ns() + (uint64_t)c->hub->d.ws_close_timeout_ms * 1000000ull;
    flush(c);
}

/* Fails the connection (RFC 6455 7.1.7): the input cannot be trusted any
 * more, so a close frame (when none was sent yet) and LINGER. */
static void fail(wsconn *c, int code, const char *reason) {
    uint8_t p[125];
    if (c->state == WS_GONE) return;
    if (c->state == WS_OPEN)
        queue_frame(c, PF_WS_OP_CLOSE, p, pf_ws_close_payload(code, reason, p));
    if (c->state == WS_GONE) return;
    c->state = WS_LINGER;
    c->close_by_ns = pf_clock_now_ns() + (uint64_t)c->hub->d.ws_close_timeout_ms * 1000000ull;
    flush(c);
}

/* Queues a text message or a pong under the outbound cap. A peer that lets
 * the queue pass ws_max_outbound is not reading: what it has not started
 * to receive is dropped and the stream closed with 1008. A message that
 * alone is larger than the cap can never be sent: 1009. */
static void send_frame(wsconn *c, int op, const void *data, size_t len) {
    size_t cap = c->hub->d.ws_max_outbound, flen = len + FRAME_HEADER_MAX;
    if (c->state != WS_OPEN) return; /* nothing but the close after a close */
    if (flen > cap) {
        count_close(c->hub, &c->hub->stats.closed_too_big);
        close_with(c, PF_WS_CLOSE_TOO_BIG, "answer larger than ws_max_outbound_bytes");
        return;
    }
    if (out_pending(c) + flen > cap) {
        drop_unsent(c);
        count_close(c->hub, &c->hub->stats.closed_slow_reader);
        close_with(c, PF_WS_CLOSE_POLICY, "peer not reading: ws_max_outbound_bytes queued");
        return;
    }
    if (queue_frame(c, op, data, len)) flush(c);
}

static void send_error(wsconn *c, pf_error code, const char *field, const char *msg) {
    pf_jsonw w;
    size_t len;
    char *buf;
    pf_jsonw_init(&w, 256);
    pf_proto_write_error(&w, code, msg, field);
    buf = pf_jsonw_take(&w, &len);
    if (buf) send_frame(c, PF_WS_OP_TEXT, buf, len);
    free(buf);
}

static void send_perror(wsconn *c, const pf_proto_error *e) {
    send_error(c, e->code, e->field, e->message);
}

/* Job: one update on the pool. */
/* Whether c's token still holds the rights c was opened with. Asks the
 * token table only when a reload happened since it last did. */
static bool token_holds(wsconn *c) {
    pf_guard *g = c->hub->d.guard;
    uint64_t gen;
    if (c->scope == PF_SCOPE_OPEN || !g) return true;
    gen = pf_guard_token_generation(g);
    if (gen == c->token_gen) return true;
    if (!pf_guard_token_holds(g, &c->who, c->scope)) return false;
    c->token_gen = gen;
    return true;
}

/* c's token was removed or cut down: nothing more of c runs, the peer is
 * told why and the stream closed. Returns false (for the callers' checks). */
static bool revoke_stream(wsconn *c) {
    if (c->state != WS_OPEN) return false;
    count_close(c->hub, &c->hub->stats.closed_token_revoked);
    send_error(c, PF_ERR_UNAUTHORIZED, NULL,
               "The token this stream was opened with was removed or lost its scope (the token "
               "file was reloaded); this stream closes.");
    close_with(c, PF_WS_CLOSE_POLICY, "token revoked");
    update_poll(c);
    return false;
}

/* token_holds, revoking c when it does not. */
static bool still_allowed(wsconn *c) { return token_holds(c) || revoke_stream(c); }

static void run_update(void *arg, pf_search_ctx *ctx) {
    wsconn *c = arg;
    const pf_hub_deps *d = &c->hub->d;
    pf_jsonw w;
    (void)ctx;
    pf_jsonw_init(&w, 8192);
    pf_session_run_on(d->sessions, d->registry, d->metrics, c->sess, &c->upd, c->stream_id, &w);
    pf_sessions_release(d->sessions, c->sess, pf_clock_now_ns());
    c->sess = NULL;
    pf_update_list_free(&c->upd);
    c->answer = pf_jsonw_take(&w, &c->answer_len);
    push(c->hub, &c->hub->done, c);
}

/* Job: one crowd command on the pool. */
static void run_crowd_command(void *arg, pf_search_ctx *ctx) {
    wsconn *c = arg;
    const pf_hub_deps *d = &c->hub->d;
    pf_jsonw w;
    pf_error err;
    (void)ctx;
    pf_jsonw_init(&w, 8192);
    err = pf_crowd_run(c->crowd, d->registry, d->navq, &c->cmd, &w);
    pf_crowd_command_free(&c->cmd);
    c->answer = pf_jsonw_take(&w, &c->answer_len);
    c->end_after_answer = err == PF_ERR_CROWD_NOT_FOUND; /* read by the hub after the push */
    push(c->hub, &c->hub->done, c);
}

static void on_crowd_text(wsconn *c, const uint8_t *data, size_t len) {
    const pf_hub_deps *d = &c->hub->d;
    pf_proto_error e;
    pf_status st;
    if (pf_crowd_is_gone(c->crowd)) {
        send_error(c, PF_ERR_CROWD_NOT_FOUND, NULL, NULL);
        close_with(c, PF_WS_CLOSE_NORMAL, "crowd ended");
        return;
    }
    if ((st = pf_crowd_command_parse((const char *)data, len, &d->crowd_limits, &c->cmd, &e))) {
        send_perror(c, &e);
        return;
    }
    c->job.fn = run_crowd_command;
    c->job.arg = c;
    c->job.kind = PF_JOB_SEARCH;
    c->in_job = true;
    if ((st = pf_pool_submit(d->pool, &c->job))) {
        c->in_job = false;
        pf_crowd_command_free(&c->cmd);
        send_error(c, st == PF_ELIMIT ? PF_ERR_OVERLOADED : PF_ERR_SHUTTING_DOWN, NULL, NULL);
    }
}

/* The pool's timer thread: the update waited past the default deadline
 * for a worker. Answered like a finished job, with an error body. */
static void expire_update(void *arg) {
    wsconn *c = arg;
    const pf_hub_deps *d = &c->hub->d;
    pf_jsonw w;
    pf_jsonw_init(&w, 256);
    pf_proto_write_error(&w, PF_ERR_DEADLINE,
                         "The deadline passed while the update waited for a worker.", NULL);
    pf_sessions_release(d->sessions, c->sess, pf_clock_now_ns());
    c->sess = NULL;
    pf_update_list_free(&c->upd);
    c->answer = pf_jsonw_take(&w, &c->answer_len);
    push(c->hub, &c->hub->done, c);
}

static void on_text(wsconn *c, const uint8_t *data, size_t len) {
    const pf_hub_deps *d = &c->hub->d;
    pf_proto_error e;
    pf_status st;
    if (c->crowd) {
        on_crowd_text(c, data, len);
        return;
    }
    st = pf_update_list_parse((const char *)data, len, false, 1, &c->upd, &e);
    if (st) {
        send_perror(c, &e);
        return;
    }
    switch (pf_sessions_acquire(d->sessions, c->map_id, c->sid, pf_clock_now_ns(), &c->sess)) {
    case PF_SESSION_NOT_FOUND:
        pf_update_list_free(&c->upd);
        send_error(c, PF_ERR_SESSION_NOT_FOUND, NULL, NULL);
        return;
    case PF_SESSION_BUSY:
        pf_update_list_free(&c->upd);
        send_error(c, PF_ERR_SESSION_BUSY, NULL, NULL);
        return;
    case PF_SESSION_OK:
        break;
    }
    c->job.fn = run_update;
    c->job.arg = c;
    c->job.kind = PF_JOB_SEARCH;
    c->job.deadline_ns = pf_clock_now_ns() + (uint64_t)d->deadline_ms * 1000000ull;
    c->job.expire = expire_update;
    c->in_job = true;
    st = pf_pool_submit(d->pool, &c->job);
    if (st) {
        c->in_job = false;
        pf_sessions_release(d->sessions, c->sess, pf_clock_now_ns());
        c->sess = NULL;
        pf_update_list_free(&c->upd);
        send_error(c, st == PF_ELIMIT ? PF_ERR_OVERLOADED : PF_ERR_SHUTTING_DOWN, NULL, NULL);
    }
}

/* The peer's close frame: echo its code (or fail on a bad one) and linger;
 * after our own close it completes the handshake. */
static void on_close(wsconn *c, const pf_ws_message *m) {
    int code;
    if (pf_ws_close_check(m->data, m->len, &code)) {
        fail(c, code, code == PF_WS_CLOSE_BAD_DATA ? "close reason is not UTF-8" : "bad close");
        return;
    }
    if (c->state == WS_OPEN) {
        uint8_t p[2] = {(uint8_t)(code >> 8), (uint8_t)code};
        queue_frame(c, PF_WS_OP_CLOSE, p, code ? 2 : 0);
        if (c->state == WS_GONE) return;
    }
    c->state = WS_LINGER;
    c->close_by_ns = pf_clock_now_ns() + (uint64_t)c->hub->d.ws_close_timeout_ms * 1000000ull;
    flush(c);
}

/* Multiplexed streams */

static uint64_t key_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void msg_free(mux_msg *q) {
    if (!q) return;
    pf_mux_message_free(&q->m);
    free(q->answer);
    free(q);
}

static void mux_free(mux_state *x) {
    if (!x) return;
    for (size_t b = 0; b < MUX_BUCKETS; b++)
        for (mux_entry *e = x->buckets[b], *n; e; e = n) {
            n = e->hnext;
            for (mux_msg *q = e->head, *qn; q; q = qn) {
                qn = q->next;
                msg_free(q);
            }
            free(e);
        }
    free(x);
}

/* Writes an answer envelope {head, "status", "body"} into a fresh buffer;
 * body NULL (with blen 0, a 204) leaves "body" out, as HTTP sends none. */
static char *envelope(const pf_mux_message *m, const char *sid, int status, const char *body,
                      size_t blen, size_t *len) {
    pf_jsonw w;
    pf_jsonw_init(&w, blen + 256);
    pf_jsonw_obj_begin(&w);
    pf_mux_write_head(&w, m, sid);
    pf_jsonw_kint(&w, "status", status);
    if (body) {
        pf_jsonw_key(&w, "body");
        pf_jsonw_raw(&w, body, blen);
    }
    pf_jsonw_obj_end(&w);
    return pf_jsonw_take(&w, len);
}

/* Answers m at once with an error (on the loop thread). */
static void mux_send_error(wsconn *c, const pf_mux_message *m, pf_error err, const char *field,
                           const char *msg) {
    pf_jsonw b;
    size_t blen, len;
    char *body, *env;
    pf_mux_message none;
    pf_jsonw_init(&b, 256);
    pf_proto_write_error(&b, err, msg, field);
    body = pf_jsonw_take(&b, &blen);
    if (!m) {
        memset(&none, 0, sizeof(none));
        m = &none;
    }
    env = body ? envelope(m, NULL, pf_error_http_status(err), body, blen, &len) : NULL;
    if (env) send_frame(c, PF_WS_OP_TEXT, env, len);
    free(env);
    free(body);
}

static bool session_id_chars(const char *s) {
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-'))
            return false;
    return true;
}

/* Job: one message of a multiplexed stream, on the pool. Does what the
 * HTTP route would and puts the envelope in q->answer. */
static void run_mux(void *arg, pf_search_ctx *ctx) {
    mux_msg *q = arg;
    const pf_hub_deps *d = &q->c->hub->d;
    const pf_mux_message *m = &q->m;
    char sid[PF_SESSION_ID_MAX + 1] = "";
    pf_session *s = NULL;
    pf_jsonw body;
    pf_error err = PF_ERR_NONE;
    int status = 200;
    bool null_body = false;
    (void)ctx;
    pf_jsonw_init(&body, 8192);
    switch (m->op) {
    case PF_MUX_UPDATE:
    case PF_MUX_GET:
        if (q->c->own_only &&
            !pf_sessions_owner_is(d->sessions, m->map_id, m->session_id, &q->c->who)) {
            err = PF_ERR_SESSION_NOT_FOUND; /* another token's: as if it did not exist */
            pf_proto_write_error(&body, err, NULL, NULL);
            break;
        }
        switch (pf_sessions_acquire(d->sessions, m->map_id, m->session_id, pf_clock_now_ns(), &s)) {
        case PF_SESSION_NOT_FOUND:
            err = PF_ERR_SESSION_NOT_FOUND;
            pf_proto_write_error(&body, err, NULL, NULL);
            break;
        case PF_SESSION_BUSY:
            err = PF_ERR_SESSION_BUSY;
            pf_proto_write_error(&body, err, NULL, NULL);
            break;
        case PF_SESSION_OK:
            err = pf_session_run_on(d->sessions, d->registry, d->metrics, s,
                                    m->op == PF_MUX_UPDATE ? &m->update : NULL, q->c->stream_id,
                                    &body);
            pf_sessions_release(d->sessions, s, pf_clock_now_ns());
            break;
        }
        break;
    case PF_MUX_CREATE: {
        /* As POST .../sessions does, loading the map first (--store) as
         * routes_load.c does; the job was submitted as a build then. */
        pf_mapver *mv = NULL;
        pf_proto_error pe;
        status = 201;
        if (d->maps && pf_maps_needs_load(d->maps, m->map_id) &&
            pf_maps_load(d->maps, m->map_id, &pe)) {
            err = pe.code;
            if (err == PF_ERR_MAP_NOT_FOUND)
                pf_proto_write_error(&body, err, "No such map.", "map");
            else
                pf_proto_write_perror(&body, &pe);
            break;
        }
        mv = pf_registry_get(d->registry, m->map_id);
        if (!mv) {
            err = PF_ERR_MAP_NOT_FOUND;
            pf_proto_write_error(&body, err, "No such map.", "map");
            break;
        }
        if (pf_sessions_new(d->sessions, mv, &m->create, "create.", d->cfg->session_ttl_s,
                            &q->c->who, d->mem, pf_clock_now_ns(), &s, &pe)) {
            err = pe.code;
            pf_proto_write_perror(&body, &pe);
        } else {
            snprintf(sid, sizeof(sid), "%s", pf_session_id(s));
            err = pf_session_run_on(d->sessions, d->registry, d->metrics, s, NULL, q->c->stream_id,
                                    &body);
            if (err) pf_sessions_kill(d->sessions, s); /* not answered 201: gone */
            pf_sessions_release(d->sessions, s, pf_clock_now_ns());
        }
        pf_mapver_release(mv);
        break;
    }
    case PF_MUX_DELETE:
        if ((!q->c->own_only ||
             pf_sessions_owner_is(d->sessions, m->map_id, m->session_id, &q->c->who)) &&
            pf_sessions_remove(d->sessions, m->map_id, m->session_id)) {
            status = 204;
            null_body = true;
        } else {
            err = PF_ERR_SESSION_NOT_FOUND;
            pf_proto_write_error(&body, err, NULL, NULL);
        }
        break;
    }
    if (err) status = pf_error_http_status(err);
    if (pf_jsonw_failed(&body)) {
        pf_jsonw_free(&body);
        pf_jsonw_init(&body, 128);
        status = pf_error_http_status(PF_ERR_NO_MEMORY);
        pf_proto_write_error(&body, PF_ERR_NO_MEMORY, NULL, NULL);
    }
    q->answer = envelope(m, sid, status, null_body ? NULL : body.buf, null_body ? 0 : body.len,
                         &q->answer_len);
    pf_jsonw_free(&body);
    /* Once q is on the list the loop thread may answer and free it (and its
     * connection): nothing of q is read after the unlock. */
    {
        pf_hub *h = q->c->hub;
        uv_mutex_lock(&h->mu);
        q->next = h->mux_done;
        h->mux_done = q;
        uv_mutex_unlock(&h->mu);
        uv_async_send(&h->async);
    }
}

static void ready_push(mux_state *x, mux_entry *e) {
    if (e->in_ready || e->running || !e->head) return;
    e->in_ready = true;
    e->ready_next = NULL;
    if (x->ready_tail)
        x->ready_tail->ready_next = e;
    else
        x->ready_head = e;
    x->ready_tail = e;
}

/* Drops e from the table once it has nothing queued or running. */
static void entry_gc(mux_state *x, mux_entry *e) {
    mux_entry **pp;
    if (e->running || e->head || e->in_ready) return;
    for (pp = &x->buckets[e->hash & (MUX_BUCKETS - 1)]; *pp && *pp != e; pp = &(*pp)->hnext) {
    }
    if (*pp) *pp = e->hnext;
    x->nentries--;
    x->held -= sizeof(*e);
    free(e);
}

/* Starts queued messages while the connection has room on the pool. */
static void mux_pump(wsconn *c) {
    mux_state *x = c->mux;
    const pf_hub_deps *d = &c->hub->d;
    while (c->state == WS_OPEN && x->ready_head &&
           x->running < (size_t)d->cfg->stream_max_inflight &&
           c->out_len - c->out_off <= PF_MUX_OUT_HIGH && still_allowed(c)) {
        mux_entry *e = x->ready_head;
        mux_msg *q = e->head;
        x->ready_head = e->ready_next;
        if (!x->ready_head) x->ready_tail = NULL;
        e->in_ready = false;
        e->head = q->next;
        if (!e->head) e->tail = NULL;
        q->next = NULL;
        e->running = true;
        x->running++;
        q->job.fn = run_mux;
        q->job.arg = q;
        q->job.client = c->job.client; /* the connection's address: its fair share */
        /* A create is a write (pool.h's write lane), as over HTTP; one
         * whose map must be loaded builds it. */
        q->job.kind = q->m.op == PF_MUX_CREATE ? PF_JOB_BUILD : PF_JOB_SEARCH;
        if (pf_pool_submit(d->pool, &q->job) != PF_OK) {
            /* Refused (the pool's queue is full, or it stops): answered as
             * the HTTP route would be. */
            e->running = false;
            x->running--;
            x->pending--;
            mux_send_error(c, &q->m, PF_ERR_OVERLOADED, NULL, NULL);
            msg_free(q);
            ready_push(x, e);
            entry_gc(x, e);
        }
    }
}

/* A job's answer is back (loop thread). */
static void mux_answered(mux_msg *q) {
    wsconn *c = q->c;
    mux_state *x = c->mux;
    mux_entry *e = q->entry;
    if (q->answer) send_frame(c, PF_WS_OP_TEXT, q->answer, q->answer_len);
    e->running = false;
    x->running--;
    x->pending--;
    x->held -= q->held;
    msg_free(q);
    ready_push(x, e);
    entry_gc(x, e);
    mux_pump(c);
    process(c); /* reads again if it had stopped, and closes when done */
}

static void mux_on_text(wsconn *c, const uint8_t *data, size_t len) {
    mux_state *x = c->mux;
    const pf_hub_deps *d = &c->hub->d;
    pf_proto_error e;
    mux_msg *q = calloc(1, sizeof(*q));
    mux_entry *en;
    uint64_t h;
    char key[sizeof(en->key)];
    if (!q) {
        mux_send_error(c, NULL, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    if (pf_mux_message_parse((const char *)data, len, d->cfg->session_max_ttl_s, &q->m, &e)) {
        mux_send_error(c, NULL, e.code, e.field, e.message);
        free(q);
        return;
    }
    if (!pf_map_id_is_valid(q->m.map_id, strlen(q->m.map_id))) {
        mux_send_error(c, &q->m, PF_ERR_INVALID_MAP_ID, "map", NULL);
        msg_free(q);
        return;
    }
    if (q->m.op != PF_MUX_CREATE && !session_id_chars(q->m.session_id)) {
        mux_send_error(c, &q->m, PF_ERR_SESSION_NOT_FOUND, "session", NULL);
        msg_free(q);
        return;
    }
    if (q->m.op == PF_MUX_CREATE)
        snprintf(key, sizeof(key), "#create %llu", (unsigned long long)++x->creates);
    else
        snprintf(key, sizeof(key), "%s/%s", q->m.map_id, q->m.session_id);
    h = key_hash(key);
    for (en = x->buckets[h & (MUX_BUCKETS - 1)]; en && strcmp(en->key, key) != 0; en = en->hnext) {
    }
    if (!en) {
        if (x->nentries >= (size_t)d->cfg->stream_max_sessions) {
            char msg[200];
            snprintf(msg, sizeof(msg),
                     "This connection has messages outstanding for %lld sessions, its limit "
                     "(stream_max_sessions); wait for answers.",
                     (long long)d->cfg->stream_max_sessions);
            mux_send_error(c, &q->m, PF_ERR_LIMIT_EXCEEDED, "session", msg);
            msg_free(q);
            return;
        }
        if (!(en = calloc(1, sizeof(*en)))) {
            mux_send_error(c, &q->m, PF_ERR_NO_MEMORY, NULL, NULL);
            msg_free(q);
            return;
        }
        memcpy(en->key, key, sizeof(key));
        en->hash = h;
        en->hnext = x->buckets[h & (MUX_BUCKETS - 1)];
        x->buckets[h & (MUX_BUCKETS - 1)] = en;
        x->nentries++;
        x->held += sizeof(*en);
    }
    q->c = c;
    q->entry = en;
    if (en->tail)
        en->tail->next = q;
    else
        en->head = q;
    en->tail = q;
    x->pending++;
    /* The parsed message holds about what its text did (cells, ids). */
    q->held = sizeof(*q) + len;
    x->held += q->held;
    ready_push(x, en);
    mux_pump(c);
}

static void on_message(wsconn *c, const pf_ws_message *m) {
    pf_metrics_count_ws_message(c->hub->d.metrics, false, m->op, m->len);
    c->last_msg_ns = pf_clock_now_ns();
    if (m->op == PF_WS_OP_CLOSE) {
        on_close(c, m);
        return;
    }
    if (c->state != WS_OPEN) return; /* CLOSE_SENT: only the peer's close matters */
    switch (m->op) {
    case PF_WS_OP_TEXT:
        if (!still_allowed(c)) break;
        if (c->mux)
            mux_on_text(c, m->data, m->len);
        else
            on_text(c, m->data, m->len);
        break;
    case PF_WS_OP_BINARY:
        close_with(c, PF_WS_CLOSE_UNSUPPORTED, "binary messages are not accepted");
        break;
    case PF_WS_OP_PING:
        send_frame(c, PF_WS_OP_PONG, m->data, m->len);
        break;
    default: /* pong */
        break;
    }
}

/* Whether c decodes another message now: not while its job runs, nor
 * while a multiplexed stream has stream_max_pending messages outstanding
 * (then the hub reads no more: TCP backpressure). */
static bool may_decode(const wsconn *c) {
    if (c->in_job || !(c->state == WS_OPEN || c->state == WS_CLOSE_SENT)) return false;
    return !c->mux || c->state != WS_OPEN ||
           c->mux->pending < (size_t)c->hub->d.cfg->stream_max_pending;
}

/* Whether c reads from its socket now: to decode, or, lingering, only to
 * see the peer hang up. */
static bool wants_input(const wsconn *c) { return c->state == WS_LINGER || may_decode(c); }

/* Decodes and handles buffered input until a job starts, the state stops
 * asking for input, or it runs out. */
static void process(wsconn *c) {
    while (may_decode(c) && c->in_off < c->in_len) {
        pf_ws_message m;
        size_t used = 0;
        bool got = false;
        pf_status st =
            pf_ws_decode(&c->dec, c->in + c->in_off, c->in_len - c->in_off, &used, &m, &got);
        c->in_off += used;
        if (st) {
            fail(c, c->dec.close_code,
                 c->dec.close_code == PF_WS_CLOSE_TOO_BIG ? "message larger than "
                                                            "ws_max_message_bytes"
                                                          : "protocol error");
            break;
        }
        if (got) on_message(c, &m);
    }
    if (c->state == WS_LINGER || c->state == WS_GONE) c->in_off = c->in_len; /* dropped */
    if (c->in_off == c->in_len) c->in_off = c->in_len = 0;
    update_poll(c);
}

/* Reads at most one chunk; false on EOF, error or no data. */
static bool read_chunk(wsconn *c) {
    ssize_t k;
    if (c->in_off > 0) { /* keep undecoded bytes at the front */
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    if (c->in_cap - c->in_len < READ_CHUNK) {
        uint8_t *b = realloc(c->in, c->in_len + READ_CHUNK);
        if (!b) {
            gone(c);
            return false;
        }
        c->in = b;
        c->in_cap = c->in_len + READ_CHUNK;
    }
    do k = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
    while (k < 0 && errno == EINTR);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (k <= 0) { /* EOF or error: the peer is gone */
        gone(c);
        return false;
    }
    c->in_len += (size_t)k;
    return true;
}

static void on_poll(uv_poll_t *hd, int status, int events) {
    wsconn *c = hd->data;
    if (status < 0) {
        gone(c);
        update_poll(c);
        return;
    }
    if (events & UV_WRITABLE) {
        flush(c);
        if (c->mux) mux_pump(c); /* answers went out: room for more jobs */
    }
    for (int i = 0; i < READS_PER_POLL && (events & UV_READABLE) && wants_input(c); i++) {
        if (!read_chunk(c)) break;
        if (c->state == WS_LINGER) {
            c->in_off = c->in_len = 0; /* read only to see the peer hang up */
            continue;
        }
        process(c);
        if (c->state == WS_GONE) return; /* finish may have freed c */
    }
    update_poll(c);
}

/* The input and message buffers' charge follows their sizes (each bounded
 * by READ_CHUNK and ws_max_message), and so does a multiplexed stream's
 * state: its session table, entries and outstanding messages (bounded by
 * stream_max_pending). */
static void account_rest(wsconn *c) {
    size_t now = c->in_cap + c->dec.msg_cap + (c->mux ? sizeof(*c->mux) + c->mux->held : 0);
    if (now > c->charged_rest)
        pf_mem_charge(c->hub->d.mem, PF_MEM_STREAMS, now - c->charged_rest);
    else
        pf_mem_uncharge(c->hub->d.mem, PF_MEM_STREAMS, c->charged_rest - now);
    c->charged_rest = now;
}

/* Watches what c waits for; frees c when it is done. */
static void update_poll(wsconn *c) {
    int ev = 0;
    account_rest(c);
    if (c->state == WS_GONE) {
        finish(c);
        return;
    }
    if (wants_input(c)) ev |= UV_READABLE;
    if (out_pending(c)) ev |= UV_WRITABLE;
    if (c->state == WS_LINGER && !out_pending(c) && !c->wr_shut) {
        /* Everything, the close frame last, is sent: a FIN after it. */
        shutdown(c->fd, SHUT_WR);
        c->wr_shut = true;
    }
    if (ev == c->events) return;
    c->events = ev;
    if (ev)
        uv_poll_start(&c->poll, ev, on_poll);
    else
        uv_poll_stop(&c->poll);
}

/* closing: the hub is draining or stopping (read under h->mu by the
 * caller). */
static void adopt(pf_hub *h, wsconn *c, bool closing) {
    int fl = fcntl(c->fd, F_GETFL);
    if (fl >= 0) fcntl(c->fd, F_SETFL, fl | O_NONBLOCK);
    c->all_next = h->all;
    if (h->all) h->all->all_prev = c;
    h->all = c;
    c->last_msg_ns = pf_clock_now_ns();
    if (uv_poll_init_socket(&h->loop, &c->poll, c->fd)) {
        finish(c);
        return;
    }
    c->poll.data = c;
    c->polling = true;
    if (closing) {
        close_with(c, PF_WS_CLOSE_GOING_AWAY, "server shutting down");
        update_poll(c);
        return;
    }
    process(c); /* bytes libmicrohttpd read past the handshake */
}

/* Sends a tick's frame to every stream of its crowd (the error and a
 * close when the crowd is gone), then lets the tick go. */
static void deliver_frame(pf_hub *h, tick_job *tj) {
    for (wsconn *c = h->all, *n; c; c = n) {
        n = c->all_next;
        if (c->crowd != tj->crowd || c->state != WS_OPEN) continue;
        if (!tj->frame) continue;
        if (!tj->gone && out_pending(c) > CROWD_BACKLOG_BYTES) {
            c->frames_dropped++;
            continue;
        }
        send_frame(c, PF_WS_OP_TEXT, tj->frame, tj->len);
        if (tj->gone) close_with(c, PF_WS_CLOSE_NORMAL, "crowd ended");
        update_poll(c);
    }
    free(tj->frame);
    pf_crowd_release(tj->crowd);
    free(tj);
}

/* The streams of crowds that are gone (deleted, expired, their map
 * replaced or deleted) get crowd_not_found and a close. One whose command
 * runs hears it from the command's answer. */
static void end_gone_crowd_streams(pf_hub *h) {
    for (wsconn *c = h->all, *n; c; c = n) {
        n = c->all_next;
        if (!c->crowd || c->state != WS_OPEN || c->in_job || !pf_crowd_is_gone(c->crowd)) continue;
        send_error(c, PF_ERR_CROWD_NOT_FOUND, NULL, NULL);
        close_with(c, PF_WS_CLOSE_NORMAL, "crowd ended");
        update_poll(c);
    }
}

/* Job: one crowd tick on the pool. */
static void run_tick(void *arg, pf_search_ctx *ctx) {
    tick_job *tj = arg;
    pf_hub *h = tj->hub; /* tj is the hub's once pushed: not read after */
    pf_jsonw w;
    (void)ctx;
    pf_jsonw_init(&w, 16384);
    tj->gone = pf_crowd_tick(tj->crowd, h->d.registry, &w) == PF_ERR_CROWD_NOT_FOUND;
    tj->frame = pf_jsonw_take(&w, &tj->len);
    pf_crowd_tick_done(tj->crowd);
    uv_mutex_lock(&h->mu);
    tj->next = h->frames;
    h->frames = tj;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
}

/* Queues the ticks that are due and sets the timer for the next one. */
static void on_crowd_tick(uv_timer_t *t) {
    pf_hub *h = t->data;
    pf_crowd *due[MAX_DUE];
    uint64_t now = pf_clock_now_ns(), next = 0;
    size_t n;
    if (!h->d.crowds) return;
    n = pf_crowds_due(h->d.crowds, now, due, MAX_DUE, &next);
    for (size_t i = 0; i < n; i++) {
        tick_job *tj = calloc(1, sizeof(*tj));
        if (tj) {
            tj->job.fn = run_tick;
            tj->job.arg = tj;
            tj->job.kind = PF_JOB_SEARCH;
            tj->hub = h;
            tj->crowd = due[i];
            if (pf_pool_submit(h->d.pool, &tj->job) == PF_OK) continue;
            free(tj);
        }
        /* No memory or a full queue: this tick is skipped. */
        pf_crowd_tick_done(due[i]);
        pf_crowd_release(due[i]);
    }
    if (next) {
        uint64_t ms = next > now ? (next - now + 999999) / 1000000 : 0;
        uv_timer_start(&h->ticker, on_crowd_tick, n == MAX_DUE ? 0 : ms, 0);
    } else {
        uv_timer_stop(&h->ticker);
    }
}

/* Once a second: drops streams past their close timeout, closes idle ones
 * and those whose session or crowd ended (expired, deleted, its map
 * replaced or deleted), and reaps expired sessions and crowds. A crowd
 * stream is checked against its crowd (end_gone_crowd_streams), never the
 * session table: it lives as long as its crowd. */
static void on_tick(uv_timer_t *t) {
    pf_hub *h = t->data;
    uint64_t now = pf_clock_now_ns(), idle = (uint64_t)h->d.ws_idle_timeout_s * 1000000000ull;
    wsconn *c, *n;
    count_close(h, &h->stats.reaper_runs); /* a count, under the same lock */
    pf_sessions_reap(h->d.sessions, now);
    if (h->d.crowds) pf_crowds_reap(h->d.crowds, now);
    for (c = h->all; c; c = n) {
        n = c->all_next;
        if (c->state == WS_CLOSE_SENT || c->state == WS_LINGER) {
            if (now >= c->close_by_ns) {
                count_close(h, &h->stats.dropped_after_close);
                gone(c);
                update_poll(c);
            }
            continue;
        }
        if (c->state != WS_OPEN || c->in_job || (c->mux && c->mux->pending)) continue;
        if (now - c->last_msg_ns > idle) {
            count_close(h, &h->stats.closed_idle);
            close_with(c, PF_WS_CLOSE_NORMAL, "idle: no message within ws_idle_timeout_s");
        } else if (!c->mux && !c->crowd &&
                   !pf_sessions_exists(h->d.sessions, c->map_id, c->sid, now)) {
            count_close(h, &h->stats.closed_session_gone);
            send_error(c, PF_ERR_SESSION_NOT_FOUND, NULL,
                       "The session is gone (deleted, expired, or its map was replaced or "
                       "deleted); this stream closes.");
            close_with(c, PF_WS_CLOSE_NORMAL, "session ended");
        } else {
            continue;
        }
        update_poll(c);
    }
}

static void on_async(uv_async_t *a) {
    pf_hub *h = a->data;
    wsconn *in, *done;
    tick_job *frames;
    bool close_all, stop, rescan;
    uint64_t token_checks;
    mux_msg *mdone;
    uv_mutex_lock(&h->mu);
    in = h->incoming;
    done = h->done;
    frames = h->frames;
    mdone = h->mux_done;
    h->incoming = h->done = NULL;
    h->frames = NULL;
    h->mux_done = NULL;
    close_all = h->close_all;
    stop = h->stop;
    rescan = h->rescan && !stop;
    h->rescan = false;
    token_checks = h->token_checks_asked;
    uv_mutex_unlock(&h->mu);
    if (token_checks != h->token_checks_done) {
        /* The token file was reloaded: streams whose token went lose it
         * now, before anything else of theirs runs. */
        for (wsconn *c = h->all; c; c = c->all_next)
            if (c->state == WS_OPEN) (void)still_allowed(c);
        uv_mutex_lock(&h->mu);
        h->token_checks_done = token_checks;
        uv_cond_broadcast(&h->token_cv);
        uv_mutex_unlock(&h->mu);
    }
    while (mdone) {
        mux_msg *q = mdone;
        mdone = q->next;
        mux_answered(q);
    }
    while (done) {
        wsconn *c = done;
        done = c->next;
        c->in_job = false;
        c->last_msg_ns = pf_clock_now_ns(); /* idle time counts from the answer */
        if (c->answer) {
            send_frame(c, PF_WS_OP_TEXT, c->answer, c->answer_len);
            if (c->end_after_answer) close_with(c, PF_WS_CLOSE_NORMAL, "crowd ended");
        }
        free(c->answer);
        c->answer = NULL;
        c->answer_len = 0;
        process(c);
    }
    while (frames) {
        tick_job *tj = frames;
        frames = tj->next;
        deliver_frame(h, tj);
    }
    if (rescan) {
        on_crowd_tick(&h->ticker);
        end_gone_crowd_streams(h);
    }
    while (in) {
        wsconn *c = in;
        in = c->next;
        adopt(h, c, close_all || stop);
    }
    if (close_all || stop) {
        wsconn *c = h->all, *n;
        for (; c; c = n) {
            n = c->all_next;
            close_with(c, PF_WS_CLOSE_GOING_AWAY, "server shutting down");
            if (stop) gone(c); /* do not wait for slow readers */
            update_poll(c);
        }
    }
    if (stop && !h->all) {
        uv_close((uv_handle_t *)&h->reaper, NULL);
        uv_close((uv_handle_t *)&h->ticker, NULL);
        uv_close((uv_handle_t *)&h->async, NULL);
    }
}

/* The crowds' notify: a tick rate changed (any thread). */
static void crowds_changed(void *ud) {
    pf_hub *h = ud;
    uv_mutex_lock(&h->mu);
    h->rescan = true;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
}

static void hub_main(void *arg) {
    pf_hub *h = arg;
    uv_run(&h->loop, UV_RUN_DEFAULT);
}

bool pf_hub_reserve(pf_hub *h) {
    bool ok;
    uv_mutex_lock(&h->mu);
    ok = h->count < h->d.max_streams;
    if (ok) h->count++;
    uv_mutex_unlock(&h->mu);
    return ok;
}

void pf_hub_unreserve(pf_hub *h) {
    uv_mutex_lock(&h->mu);
    h->count--;
    uv_mutex_unlock(&h->mu);
}

pf_status pf_hub_create(const pf_hub_deps *d, pf_hub **out) {
    pf_hub *h = calloc(1, sizeof(*h));
    *out = NULL;
    if (!h) return PF_ENOMEM;
    h->d = *d;
    if (uv_loop_init(&h->loop)) goto out_free_hub;
    if (uv_mutex_init(&h->mu)) goto out_close_loop;
    if (uv_cond_init(&h->token_cv)) goto out_destroy_mutex;
    if (uv_async_init(&h->loop, &h->async, on_async)) goto out_destroy_cond;
    h->async.data = h;
    uv_timer_init(&h->loop, &h->reaper);
    h->reaper.data = h;
    uv_timer_start(&h->reaper, on_tick, REAP_EVERY_MS, REAP_EVERY_MS);
    uv_unref((uv_handle_t *)&h->reaper);
    uv_timer_init(&h->loop, &h->ticker);
    h->ticker.data = h;
    uv_unref((uv_handle_t *)&h->ticker);
    if (uv_thread_create(&h->thread, hub_main, h)) goto out_close_handles;
    if (h->d.crowds) pf_crowds_set_notify(h->d.crowds, crowds_changed, h);
    *out = h;
    return PF_OK;

out_close_handles:
    uv_close((uv_handle_t *)&h->async, NULL);
    uv_close((uv_handle_t *)&h->reaper, NULL);
    uv_close((uv_handle_t *)&h->ticker, NULL);
    uv_run(&h->loop, UV_RUN_DEFAULT);
out_destroy_cond:
    uv_cond_destroy(&h->token_cv);
out_destroy_mutex:
    uv_mutex_destroy(&h->mu);
out_close_loop:
    uv_loop_close(&h->loop);
out_free_hub:
    free(h);
    return PF_ENOMEM;
}

/* The pool's fair share key of the peer's address (as request.c makes it
 * for HTTP requests, so a client's streams and requests share one share). */
static uint64_t peer_key(int fd) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    const uint8_t *b = NULL;
    size_t n = 0;
    uint64_t h = 1469598103934665603ULL;
    if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET) {
            b = (const uint8_t *)&((const struct sockaddr_in *)(const void *)&ss)->sin_addr;
            n = 4;
        } else if (ss.ss_family == AF_INET6) {
            b = (const uint8_t *)&((const struct sockaddr_in6 *)(const void *)&ss)->sin6_addr;
            n = 16;
        }
    }
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* Records the stream's token (before the hub sees c). A reload may have
 * come between the handshake's check and now: the first message looks the
 * token up again (UINT64_MAX is no generation). */
static void set_token(wsconn *c, const pf_hub_token *tok) {
    c->who = tok->who;
    c->scope = tok->scope;
    c->token_gen = UINT64_MAX;
}

static void adopt_any(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                      const char *extra, size_t n, const char *map_id, const char *sid,
                      pf_crowd *crowd, const pf_hub_token *tok) {
    wsconn *c = calloc(1, sizeof(*c));
    if (!c || !(c->in = malloc(n > READ_CHUNK ? n : READ_CHUNK))) {
        free(c);
        if (crowd) pf_crowd_release(crowd);
        MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
        pf_hub_unreserve(h);
        return;
    }
    if (crowd) pf_crowd_watch(crowd, true);
    c->crowd = crowd;
    c->hub = h;
    c->fd = sock;
    c->urh = urh;
    c->job.client = peer_key(sock);
    c->stream_id = pf_session_stream_id();
    set_token(c, tok);
    snprintf(c->map_id, sizeof(c->map_id), "%s", map_id);
    snprintf(c->sid, sizeof(c->sid), "%s", sid);
    pf_ws_decoder_init(&c->dec, h->d.ws_max_message);
    if (n) memcpy(c->in, extra, n);
    c->in_len = n;
    c->in_cap = n > READ_CHUNK ? n : READ_CHUNK;
    pf_metrics_count_ws_upgrade(h->d.metrics);
    push(h, &h->incoming, c);
}

void pf_hub_adopt(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                  const char *extra, size_t n, const char *map_id, const char *sid,
                  const pf_hub_token *tok) {
    adopt_any(h, sock, urh, extra, n, map_id, sid, NULL, tok);
}

void pf_hub_adopt_crowd(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                        const char *extra, size_t n, pf_crowd *crowd, const pf_hub_token *tok) {
    adopt_any(h, sock, urh, extra, n, pf_crowd_map_id(crowd), pf_crowd_id(crowd), crowd, tok);
}

void pf_hub_adopt_mux(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                      const char *extra, size_t n, const pf_hub_token *tok, bool own_only) {
    wsconn *c = calloc(1, sizeof(*c));
    if (!c || !(c->mux = calloc(1, sizeof(*c->mux))) ||
        !(c->in = malloc(n > READ_CHUNK ? n : READ_CHUNK))) {
        if (c) free(c->mux);
        free(c);
        MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
        pf_hub_unreserve(h);
        return;
    }
    c->hub = h;
    c->fd = sock;
    c->urh = urh;
    c->job.client = peer_key(sock);
    c->stream_id = pf_session_stream_id();
    set_token(c, tok);
    c->own_only = own_only;
    pf_ws_decoder_init(&c->dec, h->d.ws_max_message);
    if (n) memcpy(c->in, extra, n);
    c->in_len = n;
    c->in_cap = n > READ_CHUNK ? n : READ_CHUNK;
    pf_metrics_count_ws_upgrade(h->d.metrics);
    push(h, &h->incoming, c);
}

void pf_hub_tokens_changed(pf_hub *h) {
    uint64_t want;
    uv_mutex_lock(&h->mu);
    want = ++h->token_checks_asked;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
    uv_mutex_lock(&h->mu);
    while (h->token_checks_done < want && !h->stop) uv_cond_wait(&h->token_cv, &h->mu);
    uv_mutex_unlock(&h->mu);
}

void pf_hub_close_all(pf_hub *h) {
    uv_mutex_lock(&h->mu);
    h->close_all = true;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
}

size_t pf_hub_count(pf_hub *h) {
    size_t n;
    uv_mutex_lock(&h->mu);
    n = h->count;
    uv_mutex_unlock(&h->mu);
    return n;
}

void pf_hub_get_stats(pf_hub *h, pf_hub_stats *out) {
    uv_mutex_lock(&h->mu);
    *out = h->stats;
    out->open = h->count;
    uv_mutex_unlock(&h->mu);
}

void pf_hub_destroy(pf_hub *h) {
    if (!h) return;
    if (h->d.crowds) pf_crowds_set_notify(h->d.crowds, NULL, NULL);
    uv_mutex_lock(&h->mu);
    h->stop = true;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
    uv_thread_join(&h->thread);
    while (h->frames) { /* ticks that ended after the loop did */
        tick_job *tj = h->frames;
        h->frames = tj->next;
        free(tj->frame);
        pf_crowd_release(tj->crowd);
        free(tj);
    }
    uv_loop_close(&h->loop);
    uv_cond_destroy(&h->token_cv);
    uv_mutex_destroy(&h->mu);
    free(h);
}
