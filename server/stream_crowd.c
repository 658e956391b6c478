/* stream_crowd.c -- crowd streams (GET .../crowds/{cid}/stream, stream.h):
 * each text message is a crowd command answered with the crowd's state,
 * and every tick of a ticking crowd, run on the pool at its tick_hz from
 * the hub's ticker, is sent to each of its streams. */
#include <stdlib.h>

#include "clock.h"
#include "crowd_json.h"
#include "jsonw.h"
#include "stream_conn.h"

/* Crowd frames are not queued past this much unsent output on a stream: a
 * slow reader misses frames (counted) rather than growing a backlog. */
#define CROWD_BACKLOG_BYTES (4u << 20)
/* Ticks queued per timer run; the rest at once on the next. */
#define MAX_DUE 64

typedef struct crowd_stream {
    pf_wsconn c;     /* first: a pf_wsconn * is a crowd_stream * */
    pf_crowd *crowd; /* a reference */
    pf_crowd_command cmd;
    uint64_t frames_dropped;
} crowd_stream;

/* One crowd tick on the pool, and its frame back to the hub. */
typedef struct tick_job {
    pf_pool_job job; /* first: the pool hands back &job */
    pf_stream_done done;
    pf_hub *hub;
    pf_crowd *crowd; /* a reference */
    char *frame;
    size_t len;
    bool gone; /* the crowd's map is gone: frame is the error */
} tick_job;

static const pf_stream_ops crowd_stream_ops;

static crowd_stream *as_crowd(pf_wsconn *c) {
    return c->ops == &crowd_stream_ops ? (crowd_stream *)c : NULL;
}

/* Job: one crowd command on the pool. */
static void run_crowd_command(void *arg, pf_search_ctx *ctx) {
    crowd_stream *s = arg;
    pf_wsconn *c = &s->c;
    const pf_hub_deps *d = &c->hub->d;
    pf_jsonw w;
    pf_error err;
    (void)ctx;
    pf_jsonw_init(&w, 8192);
    err = pf_crowd_run(s->crowd, d->registry, d->navq, &s->cmd, &w);
    pf_crowd_command_free(&s->cmd);
    c->answer = pf_jsonw_take(&w, &c->answer_len);
    c->end_after_answer = err == PF_ERR_CROWD_NOT_FOUND; /* read by the hub after the push */
    pf__hub_done(c->hub, &c->done);
}

static void on_text(pf_wsconn *c, const uint8_t *data, size_t len) {
    crowd_stream *s = (crowd_stream *)c;
    const pf_hub_deps *d = &c->hub->d;
    pf_proto_error e;
    pf_status st;
    if (pf_crowd_is_gone(s->crowd)) {
        pf__conn_send_error(c, PF_ERR_CROWD_NOT_FOUND, NULL, NULL);
        pf__conn_close_with(c, PF_WS_CLOSE_NORMAL, "crowd ended");
        return;
    }
    if ((st = pf_crowd_command_parse((const char *)data, len, &d->crowd_limits, &s->cmd, &e))) {
        pf__conn_send_perror(c, &e);
        return;
    }
    c->job.fn = run_crowd_command;
    c->job.arg = s;
    c->job.kind = PF_JOB_SEARCH;
    c->in_job = true;
    if ((st = pf_pool_submit(d->pool, &c->job))) {
        c->in_job = false;
        pf_crowd_command_free(&s->cmd);
        pf__conn_send_error(c, st == PF_ELIMIT ? PF_ERR_OVERLOADED : PF_ERR_SHUTTING_DOWN, NULL,
                            NULL);
    }
}

static void release(pf_wsconn *c) {
    crowd_stream *s = (crowd_stream *)c;
    pf_crowd_command_free(&s->cmd);
    pf_crowd_watch(s->crowd, false);
    pf_crowd_release(s->crowd);
}

/* A crowd stream lives as long as its crowd (pf__crowd_streams_rescan),
 * never checked against the session table. */
static const pf_stream_ops crowd_stream_ops = {
    .on_text = on_text,
    .release = release,
};

static void tick_free(tick_job *tj) {
    free(tj->frame);
    pf_crowd_release(tj->crowd);
    free(tj);
}

/* A tick's frame is back: sent to every stream of its crowd (the error and
 * a close when the crowd is gone), then the tick let go. */
static void deliver_frame(pf_stream_done *d) {
    tick_job *tj = (tick_job *)(void *)((char *)d - offsetof(tick_job, done));
    for (pf_wsconn *c = tj->hub->all, *n; c; c = n) {
        crowd_stream *s = as_crowd(c);
        n = c->all_next;
        if (!s || s->crowd != tj->crowd || c->state != PF_CONN_OPEN || !tj->frame) continue;
        if (!tj->gone && pf__conn_out_pending(c) > CROWD_BACKLOG_BYTES) {
            s->frames_dropped++;
            continue;
        }
        pf__conn_send_frame(c, PF_WS_OP_TEXT, tj->frame, tj->len);
        if (tj->gone) pf__conn_close_with(c, PF_WS_CLOSE_NORMAL, "crowd ended");
        pf__conn_update_poll(c);
    }
    tick_free(tj);
}

/* A tick that ended after the hub's loop did. */
static void discard_frame(pf_stream_done *d) {
    tick_free((tick_job *)(void *)((char *)d - offsetof(tick_job, done)));
}

/* Job: one crowd tick on the pool. */
static void run_tick(void *arg, pf_search_ctx *ctx) {
    tick_job *tj = arg;
    pf_jsonw w;
    (void)ctx;
    pf_jsonw_init(&w, 16384);
    tj->gone = pf_crowd_tick(tj->crowd, tj->hub->d.registry, &w) == PF_ERR_CROWD_NOT_FOUND;
    tj->frame = pf_jsonw_take(&w, &tj->len);
    pf_crowd_tick_done(tj->crowd);
    pf__hub_done(tj->hub, &tj->done); /* tj is the hub's now: not read after */
}

void pf__crowd_streams_tick(uv_timer_t *t) {
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
            tj->done.answered = deliver_frame;
            tj->done.discard = discard_frame;
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
        uv_timer_start(&h->ticker, pf__crowd_streams_tick, n == MAX_DUE ? 0 : ms, 0);
    } else {
        uv_timer_stop(&h->ticker);
    }
}

/* The streams of crowds that are gone (deleted, expired, their map
 * replaced or deleted) get crowd_not_found and a close. One whose command
 * runs hears it from the command's answer. */
void pf__crowd_streams_rescan(pf_hub *h) {
    pf__crowd_streams_tick(&h->ticker);
    for (pf_wsconn *c = h->all, *n; c; c = n) {
        crowd_stream *s = as_crowd(c);
        n = c->all_next;
        if (!s || c->state != PF_CONN_OPEN || c->in_job || !pf_crowd_is_gone(s->crowd)) continue;
        pf__conn_send_error(c, PF_ERR_CROWD_NOT_FOUND, NULL, NULL);
        pf__conn_close_with(c, PF_WS_CLOSE_NORMAL, "crowd ended");
        pf__conn_update_poll(c);
    }
}

void pf_hub_adopt_crowd(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                        const char *extra, size_t n, pf_crowd *crowd, const pf_hub_token *tok) {
    crowd_stream *s = calloc(1, sizeof(*s));
    if (!s || !pf__conn_init(&s->c, h, &crowd_stream_ops, sock, urh, extra, n, tok)) {
        free(s);
        pf_crowd_release(crowd);
        pf__conn_refuse(h, urh);
        return;
    }
    pf_crowd_watch(crowd, true);
    s->crowd = crowd;
    pf__conn_adopt(&s->c);
}
