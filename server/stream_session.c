/* stream_session.c -- one session's stream (GET .../sessions/{sid}/stream,
 * stream.h): each text message is one update, run as the HTTP route runs
 * it, one at a time; the stream closes when its session ends. */
#include <stdlib.h>

#include "clock.h"
#include "jsonw.h"
#include "stream_conn.h"

typedef struct session_stream {
    pf_wsconn c; /* first: a pf_wsconn * is a session_stream * */
    char map_id[PF_MAP_ID_MAX + 1];
    char sid[PF_SESSION_ID_MAX + 1];
    pf_update_list upd; /* the update its job runs */
    pf_session *sess;   /* held while the job runs */
} session_stream;

/* Lets the session go and hands the answer back to the hub. */
static void answer(session_stream *s, pf_jsonw *w) {
    pf_wsconn *c = &s->c;
    pf_sessions_release(c->hub->d.sessions, s->sess, pf_clock_now_ns());
    s->sess = NULL;
    pf_update_list_free(&s->upd);
    c->answer = pf_jsonw_take(w, &c->answer_len);
    pf__hub_done(c->hub, &c->done);
}

/* Job: one update on the pool. */
static void run_update(void *arg, pf_search_ctx *ctx) {
    session_stream *s = arg;
    const pf_hub_deps *d = &s->c.hub->d;
    pf_jsonw w;
    (void)ctx;
    pf_jsonw_init(&w, 8192);
    pf_session_run(d->sessions, d->registry, d->metrics, s->sess, &s->upd, &w);
    answer(s, &w);
}

/* The pool's timer thread: the update waited past the default deadline
 * for a worker. Answered like a finished job, with an error body. */
static void expire_update(void *arg) {
    session_stream *s = arg;
    pf_jsonw w;
    pf_jsonw_init(&w, 256);
    pf_proto_write_error(&w, PF_ERR_DEADLINE,
                         "The deadline passed while the update waited for a worker.", NULL);
    answer(s, &w);
}

static void on_text(pf_wsconn *c, const uint8_t *data, size_t len) {
    session_stream *s = (session_stream *)c;
    const pf_hub_deps *d = &c->hub->d;
    pf_proto_error e;
    pf_status st = pf_update_list_parse((const char *)data, len, false, 1, &s->upd, &e);
    if (st) {
        pf__conn_send_perror(c, &e);
        return;
    }
    switch (pf_sessions_acquire(d->sessions, s->map_id, s->sid, pf_clock_now_ns(), &s->sess)) {
    case PF_SESSION_NOT_FOUND:
        pf_update_list_free(&s->upd);
        pf__conn_send_error(c, PF_ERR_SESSION_NOT_FOUND, NULL, NULL);
        return;
    case PF_SESSION_BUSY:
        pf_update_list_free(&s->upd);
        pf__conn_send_error(c, PF_ERR_SESSION_BUSY, NULL, NULL);
        return;
    case PF_SESSION_OK:
        break;
    }
    c->job.fn = run_update;
    c->job.arg = s;
    c->job.kind = PF_JOB_SEARCH;
    c->job.deadline_ns = pf_clock_now_ns() + (uint64_t)d->deadline_ms * 1000000ull;
    c->job.expire = expire_update;
    c->in_job = true;
    st = pf_pool_submit(d->pool, &c->job);
    if (st) {
        c->in_job = false;
        pf_sessions_release(d->sessions, s->sess, pf_clock_now_ns());
        s->sess = NULL;
        pf_update_list_free(&s->upd);
        pf__conn_send_error(c, st == PF_ELIMIT ? PF_ERR_OVERLOADED : PF_ERR_SHUTTING_DOWN, NULL,
                            NULL);
    }
}

/* The reaper: the session ended (expired, deleted, its map replaced or
 * deleted): the peer is told and the stream closed. */
static bool ended(pf_wsconn *c, uint64_t now) {
    session_stream *s = (session_stream *)c;
    if (pf_sessions_exists(c->hub->d.sessions, s->map_id, s->sid, now)) return false;
    pf__hub_count_close(c->hub, &c->hub->stats.closed_session_gone);
    pf__conn_send_error(c, PF_ERR_SESSION_NOT_FOUND, NULL,
                        "The session is gone (deleted, expired, or its map was replaced or "
                        "deleted); this stream closes.");
    pf__conn_close_with(c, PF_WS_CLOSE_NORMAL, "session ended");
    return true;
}

static void release(pf_wsconn *c) { pf_update_list_free(&((session_stream *)c)->upd); }

static const pf_stream_ops session_stream_ops = {
    .on_text = on_text,
    .ended = ended,
    .release = release,
};

void pf_hub_adopt(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                  const char *extra, size_t n, const char *map_id, const char *sid,
                  const pf_hub_token *tok) {
    session_stream *s = calloc(1, sizeof(*s));
    if (!s || !pf__conn_init(&s->c, h, &session_stream_ops, sock, urh, extra, n, tok)) {
        free(s);
        pf__conn_refuse(h, urh);
        return;
    }
    snprintf(s->map_id, sizeof(s->map_id), "%s", map_id);
    snprintf(s->sid, sizeof(s->sid), "%s", sid);
    pf__conn_adopt(&s->c);
}
