/* stream_mux.c -- multiplexed streams (GET /v1/stream, stream.h): one
 * connection for any number of sessions. Each message names its map,
 * session and op; messages of one session run one at a time in order,
 * messages of different sessions side by side (at most
 * stream_max_inflight of the connection on the pool), each answered with
 * what the HTTP route would have answered. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "jsonw.h"
#include "maps.h"
#include "mux_json.h"
#include "router.h"
#include "stream_conn.h"

#define MUX_BUCKETS 4096 /* hash chains of a connection's sessions */

typedef struct mux_entry mux_entry;

/* One message of a multiplexed stream, from its parse to its answer. */
typedef struct mux_msg {
    struct mux_msg *next; /* in its entry's queue */
    pf_stream_done done;  /* its answer back to the hub */
    pf_wsconn *c;
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

typedef struct mux_stream {
    pf_wsconn c; /* first: a pf_wsconn * is a mux_stream * */
    mux_state x;
    bool own_only; /* a read token's: only its own sessions */
} mux_stream;

static mux_state *state_of(pf_wsconn *c) { return &((mux_stream *)c)->x; }
static bool own_only(const pf_wsconn *c) { return ((const mux_stream *)c)->own_only; }

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
    for (size_t b = 0; b < MUX_BUCKETS; b++)
        for (mux_entry *e = x->buckets[b], *n; e; e = n) {
            n = e->hnext;
            for (mux_msg *q = e->head, *qn; q; q = qn) {
                qn = q->next;
                msg_free(q);
            }
            free(e);
        }
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
static void mux_send_error(pf_wsconn *c, const pf_mux_message *m, pf_error err, const char *field,
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
    if (env) pf__conn_send_frame(c, PF_WS_OP_TEXT, env, len);
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
        if (own_only(q->c) &&
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
            err = pf_session_run(d->sessions, d->registry, d->metrics, s,
                                 m->op == PF_MUX_UPDATE ? &m->update : NULL, &body);
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
            err = pf_session_run(d->sessions, d->registry, d->metrics, s, NULL, &body);
            if (err) pf_sessions_kill(d->sessions, s); /* not answered 201: gone */
            pf_sessions_release(d->sessions, s, pf_clock_now_ns());
        }
        pf_mapver_release(mv);
        break;
    }
    case PF_MUX_DELETE:
        if ((!own_only(q->c) ||
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
        pf__hub_done(h, &q->done);
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
static void mux_pump(pf_wsconn *c) {
    mux_state *x = state_of(c);
    const pf_hub_deps *d = &c->hub->d;
    while (c->state == PF_CONN_OPEN && x->ready_head &&
           x->running < (size_t)d->cfg->stream_max_inflight &&
           c->out_len - c->out_off <= PF_MUX_OUT_HIGH && pf__conn_still_allowed(c)) {
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
static void mux_answered(pf_stream_done *d) {
    mux_msg *q = (mux_msg *)(void *)((char *)d - offsetof(mux_msg, done));
    pf_wsconn *c = q->c;
    mux_state *x = state_of(c);
    mux_entry *e = q->entry;
    if (q->answer) pf__conn_send_frame(c, PF_WS_OP_TEXT, q->answer, q->answer_len);
    e->running = false;
    x->running--;
    x->pending--;
    x->held -= q->held;
    msg_free(q);
    ready_push(x, e);
    entry_gc(x, e);
    mux_pump(c);
    pf__conn_process(c); /* reads again if it had stopped, and closes when done */
}

static void mux_on_text(pf_wsconn *c, const uint8_t *data, size_t len) {
    mux_state *x = state_of(c);
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
    q->done.answered = mux_answered;
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

static bool running(const pf_wsconn *c) { return ((const mux_stream *)c)->x.running > 0; }

static bool outstanding(const pf_wsconn *c) { return ((const mux_stream *)c)->x.pending > 0; }

/* Reads no more while stream_max_pending messages are outstanding (TCP
 * backpressure). */
static bool may_read(const pf_wsconn *c) {
    return ((const mux_stream *)c)->x.pending < (size_t)c->hub->d.cfg->stream_max_pending;
}

static size_t held(const pf_wsconn *c) {
    return sizeof(mux_state) + ((const mux_stream *)c)->x.held;
}

static void release(pf_wsconn *c) { mux_free(state_of(c)); }

/* A multiplexed stream has no end of its own (the sessions it names end,
 * it does not). */
static const pf_stream_ops mux_stream_ops = {
    .on_text = mux_on_text,
    .running = running,
    .outstanding = outstanding,
    .may_read = may_read,
    .on_writable = mux_pump,
    .held = held,
    .release = release,
};

void pf_hub_adopt_mux(pf_hub *h, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                      const char *extra, size_t n, const pf_hub_token *tok, bool own_only_) {
    mux_stream *s = calloc(1, sizeof(*s));
    if (!s || !pf__conn_init(&s->c, h, &mux_stream_ops, sock, urh, extra, n, tok)) {
        free(s);
        pf__conn_refuse(h, urh);
        return;
    }
    s->own_only = own_only_;
    pf__conn_adopt(&s->c);
}
