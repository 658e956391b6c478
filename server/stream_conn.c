/* stream_conn.c -- see stream_conn.h: one WebSocket connection of the
 * hub, whatever it streams: framing, buffers and their charge, the
 * outbound cap, the close handshake, the token it was opened with. */
#include "stream_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "guard.h"
#include "jsonw.h"

/* Bytes read from the socket at once, and chunks read per poll event before
 * the loop serves the other streams. */
#define READ_CHUNK 16384
#define READS_PER_POLL 4
/* A server frame's header is at most 10 bytes (no mask). */
#define FRAME_HEADER_MAX 10

static void conn_free(pf_wsconn *c) {
    pf_hub *h = c->hub;
    pf_mem_uncharge(h->d.mem, PF_MEM_STREAMS, c->charged_out + c->charged_rest);
    if (c->urh) MHD_upgrade_action(c->urh, MHD_UPGRADE_ACTION_CLOSE);
    pf_ws_decoder_free(&c->dec);
    if (c->ops->release) c->ops->release(c);
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
static void finish(pf_wsconn *c) {
    pf_hub *h = c->hub;
    if (c->in_job || c->finished) return;              /* the job's end calls finish again */
    if (c->ops->running && c->ops->running(c)) return; /* so does the kind's last job's end */
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

size_t pf__conn_out_pending(const pf_wsconn *c) { return c->out_len - c->out_off; }

/* The peer is gone: nothing more is sent or read. */
void pf__conn_gone(pf_wsconn *c) {
    c->state = PF_CONN_GONE;
    c->out_off = c->out_len = 0;
}

/* Writes what it can of the output without blocking. */
static void flush(pf_wsconn *c) {
    while (c->out_off < c->out_len) {
        ssize_t k =
            send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (k <= 0) { /* the peer is gone */
            pf__conn_gone(c);
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
static void drop_unsent(pf_wsconn *c) {
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
static void over_budget(pf_wsconn *c) {
    uint8_t p[125];
    size_t n;
    drop_unsent(c);
    pf__hub_count_close(c->hub, &c->hub->stats.closed_memory);
    n = pf_ws_close_payload(PF_WS_CLOSE_TRY_AGAIN, "memory budget (--max-memory) spent", p);
    if (c->state != PF_CONN_OPEN || c->out_cap - c->out_len < n + FRAME_HEADER_MAX) {
        pf__conn_gone(c);
        return;
    }
    c->out_len += pf_ws_encode(PF_WS_OP_CLOSE, p, n, c->out + c->out_len, c->out_cap - c->out_len);
    pf_metrics_count_ws_message(c->hub->d.metrics, true, PF_WS_OP_CLOSE, n);
    c->state = PF_CONN_CLOSE_SENT;
    c->close_by_ns = pf_clock_now_ns() + (uint64_t)c->hub->d.ws_close_timeout_ms * 1000000ull;
}

/* Appends one frame to the output; false when out of memory or past the
 * memory budget (then the stream is closed or dropped). */
static bool queue_frame(pf_wsconn *c, int op, const void *data, size_t len) {
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
            pf__conn_gone(c);
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
void pf__conn_close_with(pf_wsconn *c, int code, const char *reason) {
    uint8_t p[125];
    if (c->state != PF_CONN_OPEN) return;
    if (!queue_frame(c, PF_WS_OP_CLOSE, p, pf_ws_close_payload(code, reason, p))) return;
    c->state = PF_CONN_CLOSE_SENT;
    c->close_by_ns = pf_clock_now_ns() + (uint64_t)c->hub->d.ws_close_timeout_ms * 1000000ull;
    flush(c);
}

/* Fails the connection (RFC 6455 7.1.7): the input cannot be trusted any
 * more, so a close frame (when none was sent yet) and LINGER. */
static void fail(pf_wsconn *c, int code, const char *reason) {
    uint8_t p[125];
    if (c->state == PF_CONN_GONE) return;
    if (c->state == PF_CONN_OPEN)
        queue_frame(c, PF_WS_OP_CLOSE, p, pf_ws_close_payload(code, reason, p));
    if (c->state == PF_CONN_GONE) return;
    c->state = PF_CONN_LINGER;
    c->close_by_ns = pf_clock_now_ns() + (uint64_t)c->hub->d.ws_close_timeout_ms * 1000000ull;
    flush(c);
}

/* Queues a text message or a pong under the outbound cap. A peer that lets
 * the queue pass ws_max_outbound is not reading: what it has not started
 * to receive is dropped and the stream closed with 1008. A message that
 * alone is larger than the cap can never be sent: 1009. */
void pf__conn_send_frame(pf_wsconn *c, int op, const void *data, size_t len) {
    size_t cap = c->hub->d.ws_max_outbound, flen = len + FRAME_HEADER_MAX;
    if (c->state != PF_CONN_OPEN) return; /* nothing but the close after a close */
    if (flen > cap) {
        pf__hub_count_close(c->hub, &c->hub->stats.closed_too_big);
        pf__conn_close_with(c, PF_WS_CLOSE_TOO_BIG, "answer larger than ws_max_outbound_bytes");
        return;
    }
    if (pf__conn_out_pending(c) + flen > cap) {
        drop_unsent(c);
        pf__hub_count_close(c->hub, &c->hub->stats.closed_slow_reader);
        pf__conn_close_with(c, PF_WS_CLOSE_POLICY,
                            "peer not reading: ws_max_outbound_bytes queued");
        return;
    }
    if (queue_frame(c, op, data, len)) flush(c);
}

void pf__conn_send_error(pf_wsconn *c, pf_error code, const char *field, const char *msg) {
    pf_jsonw w;
    size_t len;
    char *buf;
    pf_jsonw_init(&w, 256);
    pf_proto_write_error(&w, code, msg, field);
    buf = pf_jsonw_take(&w, &len);
    if (buf) pf__conn_send_frame(c, PF_WS_OP_TEXT, buf, len);
    free(buf);
}

void pf__conn_send_perror(pf_wsconn *c, const pf_proto_error *e) {
    pf__conn_send_error(c, e->code, e->field, e->message);
}

/* Whether c's token still holds the rights c was opened with. Asks the
 * token table only when a reload happened since it last did. */
static bool token_holds(pf_wsconn *c) {
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
static bool revoke_stream(pf_wsconn *c) {
    if (c->state != PF_CONN_OPEN) return false;
    pf__hub_count_close(c->hub, &c->hub->stats.closed_token_revoked);
    pf__conn_send_error(
        c, PF_ERR_UNAUTHORIZED, NULL,
        "The token this stream was opened with was removed or lost its scope (the token "
        "file was reloaded); this stream closes.");
    pf__conn_close_with(c, PF_WS_CLOSE_POLICY, "token revoked");
    pf__conn_update_poll(c);
    return false;
}

/* token_holds, revoking c when it does not. */
bool pf__conn_still_allowed(pf_wsconn *c) { return token_holds(c) || revoke_stream(c); }

/* The peer's close frame: echo its code (or fail on a bad one) and linger;
 * after our own close it completes the handshake. */
static void on_close(pf_wsconn *c, const pf_ws_message *m) {
    int code;
    if (pf_ws_close_check(m->data, m->len, &code)) {
        fail(c, code, code == PF_WS_CLOSE_BAD_DATA ? "close reason is not UTF-8" : "bad close");
        return;
    }
    if (c->state == PF_CONN_OPEN) {
        uint8_t p[2] = {(uint8_t)(code >> 8), (uint8_t)code};
        queue_frame(c, PF_WS_OP_CLOSE, p, code ? 2 : 0);
        if (c->state == PF_CONN_GONE) return;
    }
    c->state = PF_CONN_LINGER;
    c->close_by_ns = pf_clock_now_ns() + (uint64_t)c->hub->d.ws_close_timeout_ms * 1000000ull;
    flush(c);
}

static void on_message(pf_wsconn *c, const pf_ws_message *m) {
    pf_metrics_count_ws_message(c->hub->d.metrics, false, m->op, m->len);
    c->last_msg_ns = pf_clock_now_ns();
    if (m->op == PF_WS_OP_CLOSE) {
        on_close(c, m);
        return;
    }
    if (c->state != PF_CONN_OPEN) return; /* CLOSE_SENT: only the peer's close matters */
    switch (m->op) {
    case PF_WS_OP_TEXT:
        if (!pf__conn_still_allowed(c)) break;
        c->ops->on_text(c, m->data, m->len);
        break;
    case PF_WS_OP_BINARY:
        pf__conn_close_with(c, PF_WS_CLOSE_UNSUPPORTED, "binary messages are not accepted");
        break;
    case PF_WS_OP_PING:
        pf__conn_send_frame(c, PF_WS_OP_PONG, m->data, m->len);
        break;
    default: /* pong */
        break;
    }
}

/* Whether c decodes another message now: not while its job runs, nor
 * while a multiplexed stream has stream_max_pending messages outstanding
 * (then the hub reads no more: TCP backpressure). */
static bool may_decode(const pf_wsconn *c) {
    if (c->in_job || !(c->state == PF_CONN_OPEN || c->state == PF_CONN_CLOSE_SENT)) return false;
    return c->state != PF_CONN_OPEN || !c->ops->may_read || c->ops->may_read(c);
}

/* Whether c reads from its socket now: to decode, or, lingering, only to
 * see the peer hang up. */
static bool wants_input(const pf_wsconn *c) { return c->state == PF_CONN_LINGER || may_decode(c); }

/* Decodes and handles buffered input until a job starts, the state stops
 * asking for input, or it runs out. */
void pf__conn_process(pf_wsconn *c) {
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
    if (c->state == PF_CONN_LINGER || c->state == PF_CONN_GONE) c->in_off = c->in_len; /* dropped */
    if (c->in_off == c->in_len) c->in_off = c->in_len = 0;
    pf__conn_update_poll(c);
}

/* Reads at most one chunk; false on EOF, error or no data. */
static bool read_chunk(pf_wsconn *c) {
    ssize_t k;
    if (c->in_off > 0) { /* keep undecoded bytes at the front */
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    if (c->in_cap - c->in_len < READ_CHUNK) {
        uint8_t *b = realloc(c->in, c->in_len + READ_CHUNK);
        if (!b) {
            pf__conn_gone(c);
            return false;
        }
        c->in = b;
        c->in_cap = c->in_len + READ_CHUNK;
    }
    do k = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
    while (k < 0 && errno == EINTR);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (k <= 0) { /* EOF or error: the peer is gone */
        pf__conn_gone(c);
        return false;
    }
    c->in_len += (size_t)k;
    return true;
}

static void on_poll(uv_poll_t *hd, int status, int events) {
    pf_wsconn *c = hd->data;
    if (status < 0) {
        pf__conn_gone(c);
        pf__conn_update_poll(c);
        return;
    }
    if (events & UV_WRITABLE) {
        flush(c);
        if (c->ops->on_writable) c->ops->on_writable(c); /* room for more */
    }
    for (int i = 0; i < READS_PER_POLL && (events & UV_READABLE) && wants_input(c); i++) {
        if (!read_chunk(c)) break;
        if (c->state == PF_CONN_LINGER) {
            c->in_off = c->in_len = 0; /* read only to see the peer hang up */
            continue;
        }
        pf__conn_process(c);
        if (c->state == PF_CONN_GONE) return; /* finish may have freed c */
    }
    pf__conn_update_poll(c);
}

/* The input and message buffers' charge follows their sizes (each bounded
 * by READ_CHUNK and ws_max_message), and so does the kind's own state (a
 * multiplexed stream's sessions and outstanding messages, bounded by
 * stream_max_pending). */
static void account_rest(pf_wsconn *c) {
    size_t now = c->in_cap + c->dec.msg_cap + (c->ops->held ? c->ops->held(c) : 0);
    if (now > c->charged_rest)
        pf_mem_charge(c->hub->d.mem, PF_MEM_STREAMS, now - c->charged_rest);
    else
        pf_mem_uncharge(c->hub->d.mem, PF_MEM_STREAMS, c->charged_rest - now);
    c->charged_rest = now;
}

/* Watches what c waits for; frees c when it is done. */
void pf__conn_update_poll(pf_wsconn *c) {
    int ev = 0;
    account_rest(c);
    if (c->state == PF_CONN_GONE) {
        finish(c);
        return;
    }
    if (wants_input(c)) ev |= UV_READABLE;
    if (pf__conn_out_pending(c)) ev |= UV_WRITABLE;
    if (c->state == PF_CONN_LINGER && !pf__conn_out_pending(c) && !c->wr_shut) {
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

void pf__conn_start(pf_wsconn *c, bool closing) {
    pf_hub *h = c->hub;
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
        pf__conn_close_with(c, PF_WS_CLOSE_GOING_AWAY, "server shutting down");
        pf__conn_update_poll(c);
        return;
    }
    pf__conn_process(c); /* bytes libmicrohttpd read past the handshake */
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
static void set_token(pf_wsconn *c, const pf_hub_token *tok) {
    c->who = tok->who;
    c->scope = tok->scope;
    c->token_gen = UINT64_MAX;
}

bool pf__conn_init(pf_wsconn *c, pf_hub *h, const pf_stream_ops *ops, MHD_socket sock,
                   struct MHD_UpgradeResponseHandle *urh, const char *extra, size_t n,
                   const pf_hub_token *tok) {
    size_t cap = n > READ_CHUNK ? n : READ_CHUNK;
    if (!(c->in = malloc(cap))) return false;
    c->ops = ops;
    c->hub = h;
    c->fd = sock;
    c->urh = urh;
    c->job.client = peer_key(sock);
    c->done.answered = pf__conn_answered;
    set_token(c, tok);
    pf_ws_decoder_init(&c->dec, h->d.ws_max_message);
    if (n) memcpy(c->in, extra, n);
    c->in_len = n;
    c->in_cap = cap;
    return true;
}

void pf__conn_adopt(pf_wsconn *c) {
    pf_hub *h = c->hub;
    pf_metrics_count_ws_upgrade(h->d.metrics);
    uv_mutex_lock(&h->mu);
    c->next = h->incoming;
    h->incoming = c;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
}

void pf__conn_refuse(pf_hub *h, struct MHD_UpgradeResponseHandle *urh) {
    MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
    pf_hub_unreserve(h);
}

void pf__conn_answered(pf_stream_done *d) {
    pf_wsconn *c = (pf_wsconn *)(void *)((char *)d - offsetof(pf_wsconn, done));
    c->in_job = false;
    c->last_msg_ns = pf_clock_now_ns(); /* idle time counts from the answer */
    if (c->answer) {
        pf__conn_send_frame(c, PF_WS_OP_TEXT, c->answer, c->answer_len);
        if (c->end_after_answer) pf__conn_close_with(c, PF_WS_CLOSE_NORMAL, "crowd ended");
    }
    free(c->answer);
    c->answer = NULL;
    c->answer_len = 0;
    pf__conn_process(c);
}
