/* redis.c -- see redis.h. */
#include "redis.h"

#include <errno.h>
#include <hiredis/sds.h>
#include <nettle/sha1.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <uv.h>

#include "clock.h"

typedef struct idle_conn {
    redisContext *c;
    struct idle_conn *next;
} idle_conn;

struct pf_redis {
    pf_redis_url url;
    char printable[600];
    int max_conns;
    pf_redis_hook hook;
    void *hook_ud;
    uv_mutex_t mu;
    uv_cond_t cv;
    idle_conn *idle;
    int lent; /* connections out with callers */
    /* The stall mark each lent connection had when it was lent (at most
     * max_conns). */
    struct lent_mark {
        redisContext *c;
        uint64_t mark;
    } * marks;
    /* When a call last failed on I/O (a timeout, a reset, a refused
     * connect) with no answer from Redis since; 0: none. */
    uint64_t stalled_ns;
    char stalled_why[128];
    /* Stalls begun so far: an answer ends a stall only if its call was
     * made after the stall began (the mark taken before the call is the
     * current one). An answer Redis gave before it stalled, read late by
     * a thread the scheduler held back, says nothing of Redis now. */
    uint64_t stalls;
};

pf_status pf_redis_url_parse(const char *url, pf_redis_url *out, char *err, size_t errlen) {
    const char *p = url, *at, *end, *colon, *slash;
    size_t hl;
    memset(out, 0, sizeof(*out));
    out->port = 6379;
    if (strncmp(p, "redis://", 8) != 0) {
        snprintf(err, errlen, "--store '%.200s': expected redis://HOST:PORT[/DB]", url);
        return PF_EINVAL;
    }
    p += 8;
    slash = strchr(p, '/');
    end = slash ? slash : p + strlen(p);
    at = memchr(p, '@', (size_t)(end - p));
    if (at) {
        /* [user]:password@ -- only the password is used (AUTH password). */
        const char *c = memchr(p, ':', (size_t)(at - p));
        size_t pl = c ? (size_t)(at - c - 1) : 0;
        if (!c || pl == 0 || pl >= sizeof(out->password)) {
            snprintf(err, errlen, "--store: the credentials part must be :PASSWORD@");
            return PF_EINVAL;
        }
        memcpy(out->password, c + 1, pl);
        p = at + 1;
    }
    colon = memchr(p, ':', (size_t)(end - p));
    hl = (size_t)((colon ? colon : end) - p);
    if (hl == 0 || hl >= sizeof(out->host)) {
        snprintf(err, errlen, "--store '%.200s': no host", url);
        return PF_EINVAL;
    }
    memcpy(out->host, p, hl);
    if (colon) {
        char *e2;
        long v;
        errno = 0;
        v = strtol(colon + 1, &e2, 10);
        if (e2 != end || colon + 1 == end || errno || v < 1 || v > 65535) {
            snprintf(err, errlen, "--store '%.200s': the port must be 1..65535", url);
            return PF_EINVAL;
        }
        out->port = (int)v;
    }
    if (slash && slash[1]) {
        char *e2;
        long v;
        errno = 0;
        v = strtol(slash + 1, &e2, 10);
        if (*e2 || errno || v < 0 || v > 1000000) {
            snprintf(err, errlen, "--store '%.200s': the database must be a number", url);
            return PF_EINVAL;
        }
        out->db = (int)v;
    }
    return PF_OK;
}

void pf_redis_url_print(const pf_redis_url *u, char *buf, size_t n) {
    snprintf(buf, n, "redis://%s%s:%d/%d", u->password[0] ? ":***@" : "", u->host, u->port, u->db);
}

void pf_redis_script_init(pf_redis_script *s, const char *src) {
    struct sha1_ctx h;
    uint8_t d[SHA1_DIGEST_SIZE];
    s->src = src;
    sha1_init(&h);
    sha1_update(&h, strlen(src), (const uint8_t *)src);
    sha1_digest(&h, sizeof(d), d);
    for (int i = 0; i < SHA1_DIGEST_SIZE; i++) snprintf(s->sha1 + 2 * i, 3, "%02x", d[i]);
}

pf_redis *pf_redis_create(const pf_redis_url *u, int max_conns) {
    pf_redis *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->url = *u;
    pf_redis_url_print(u, r->printable, sizeof(r->printable));
    r->max_conns = max_conns < 1 ? 1 : max_conns;
    r->marks = calloc((size_t)r->max_conns, sizeof(r->marks[0]));
    if (!r->marks) goto out_free;
    if (uv_mutex_init(&r->mu)) goto out_free;
    if (uv_cond_init(&r->cv)) goto out_free_mu;
    return r;

out_free_mu:
    uv_mutex_destroy(&r->mu);
out_free:
    free(r->marks);
    free(r);
    return NULL;
}

void pf_redis_destroy(pf_redis *r) {
    if (!r) return;
    while (r->idle) {
        idle_conn *i = r->idle;
        r->idle = i->next;
        redisFree(i->c);
        free(i);
    }
    uv_cond_destroy(&r->cv);
    uv_mutex_destroy(&r->mu);
    free(r->marks);
    free(r);
}

const pf_redis_url *pf_redis_get_url(const pf_redis *r) { return &r->url; }

void pf_redis_set_connect_hook(pf_redis *r, pf_redis_hook fn, void *ud) {
    r->hook = fn;
    r->hook_ud = ud;
}

/* The time left before deadline_ns as a socket timeout; false when none
 * is left. */
static bool time_left(uint64_t deadline_ns, struct timeval *tv) {
    uint64_t now = pf_clock_now_ns(), us;
    if (now >= deadline_ns) return false;
    us = (deadline_ns - now + 999) / 1000;
    tv->tv_sec = (time_t)(us / 1000000);
    tv->tv_usec = (suseconds_t)(us % 1000000);
    return true;
}

/* Whether an error reply means "not now" (503) rather than "never" (500). */
static bool transient(const char *msg) {
    static const char *const codes[] = {"LOADING",    "BUSY",     "OOM",
                                        "MASTERDOWN", "READONLY", "NOAUTH",
                                        "WRONGPASS",  "TRYAGAIN", "CLUSTERDOWN"};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        size_t n = strlen(codes[i]);
        if (strncmp(msg, codes[i], n) == 0 && (msg[n] == ' ' || msg[n] == '\0')) return true;
    }
    return false;
}

static void io_error(const redisContext *c, const char *where, pf_proto_error *e) {
    const char *why = c ? c->errstr : "out of memory";
    if (c && c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)) why = "timed out";
    if (c && c->err == REDIS_ERR_OOM) {
        pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory talking to Redis.");
        return;
    }
    pf_proto_error_set(e, PF_EIO, PF_ERR_STORE_UNAVAILABLE, NULL,
                       "The map store did not answer (%s: %s); retry.", where, why);
}

/* rep as the caller gets it: NULL with e set for an I/O error (rep NULL)
 * or an error reply (freed). */
static redisReply *checked(redisContext *c, redisReply *rep, const char *what, pf_proto_error *e) {
    bool t;
    if (!rep) {
        io_error(c, what, e);
        return NULL;
    }
    if (rep->type != REDIS_REPLY_ERROR) return rep;
    t = transient(rep->str);
    pf_proto_error_set(e, PF_EIO, t ? PF_ERR_STORE_UNAVAILABLE : PF_ERR_STORAGE, NULL,
                       t ? "The map store cannot serve now (%.160s); retry."
                         : "The map store refused the request (%.160s); nothing changed.",
                       rep->str);
    freeReplyObject(rep);
    return NULL;
}

/* Sets c's socket timeouts to the time left; false with e set (and
 * nothing sent) when there is none. */
static bool arm(redisContext *c, uint64_t deadline_ns, const char *what, pf_proto_error *e) {
    struct timeval tv;
    if (!time_left(deadline_ns, &tv)) {
        pf_proto_error_set(e, PF_EIO, PF_ERR_STORE_UNAVAILABLE, NULL,
                           "The map store's time (--store-timeout-ms) ran out before %s was "
                           "sent; nothing changed; retry.",
                           what);
        return false;
    }
    if (redisSetTimeout(c, tv) != REDIS_OK) {
        io_error(c, what, e);
        return false;
    }
    return true;
}

static redisReply *call(redisContext *c, uint64_t deadline_ns, int argc, const char *const *argv,
                        const size_t *lens, pf_proto_error *e) {
    if (!arm(c, deadline_ns, argv[0], e)) return NULL;
    return checked(c, redisCommandArgv(c, argc, (const char **)argv, lens), argv[0], e);
}

redisReply *pf_redis_call(redisContext *c, uint64_t deadline_ns, int argc, const char *const *argv,
                          const size_t *lens, pf_proto_error *e) {
    return call(c, deadline_ns, argc, argv, lens, e);
}

bool pf_redis_sent(const redisContext *c) {
    /* hiredis empties its output buffer once the command is written whole
     * and keeps it as it was when a write fails. */
    return c && c->err && (!c->obuf || sdslen(c->obuf) == 0);
}

static redisContext *connect_to(const pf_redis_url *u, uint64_t deadline_ns, pf_proto_error *e) {
    struct timeval tv;
    redisContext *c;
    redisReply *rep;
    char db[16];
    if (!time_left(deadline_ns, &tv)) {
        pf_proto_error_set(e, PF_EIO, PF_ERR_STORE_UNAVAILABLE, NULL,
                           "The map store's time (--store-timeout-ms) ran out before a "
                           "connection to %.200s:%d was made; nothing changed; retry.",
                           u->host, u->port);
        return NULL;
    }
    c = redisConnectWithTimeout(u->host, u->port, tv);
    if (!c || c->err) {
        pf_proto_error_set(e, PF_EIO, PF_ERR_STORE_UNAVAILABLE, NULL,
                           "The map store at %.200s:%d cannot be reached (%s); retry.", u->host,
                           u->port, c ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    if (redisEnableKeepAlive(c) != REDIS_OK) {
        io_error(c, "setup", e);
        redisFree(c);
        return NULL;
    }
    if (u->password[0]) {
        const char *argv[2] = {"AUTH", u->password};
        size_t lens[2] = {4, strlen(u->password)};
        if (!(rep = call(c, deadline_ns, 2, argv, lens, e))) goto fail;
        freeReplyObject(rep);
    }
    if (u->db) {
        const char *argv[2] = {"SELECT", db};
        size_t lens[2] = {6, 0};
        lens[1] = (size_t)snprintf(db, sizeof(db), "%d", u->db);
        if (!(rep = call(c, deadline_ns, 2, argv, lens, e))) goto fail;
        freeReplyObject(rep);
    }
    return c;
fail:
    redisFree(c);
    return NULL;
}

redisContext *pf_redis_connect(const pf_redis *r, uint64_t deadline_ns, pf_proto_error *e) {
    return connect_to(&r->url, deadline_ns, e);
}

/* Whether an idle connection is still open: nothing to read (Redis sends
 * nothing unasked), not an end of file or a reset. */
static bool still_open(const redisContext *c) {
    char b;
    ssize_t n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* Under r->mu: fails the caller at once while Redis has not answered
 * since a call failed on I/O (the follower's next answer ends that). */
static bool stalled(pf_redis *r, pf_proto_error *e) {
    if (!r->stalled_ns) return false;
    pf_proto_error_set(e, PF_EIO, PF_ERR_STORE_UNAVAILABLE, NULL,
                       "The map store has not answered since a call failed %llu ms ago (%.60s); "
                       "nothing changed; retry.",
                       (unsigned long long)((pf_clock_now_ns() - r->stalled_ns) / 1000000ull),
                       r->stalled_why);
    return true;
}

/* Under r->mu. */
static void note_stall(pf_redis *r, const char *why) {
    if (r->stalled_ns) return;
    r->stalled_ns = pf_clock_now_ns();
    r->stalls++;
    snprintf(r->stalled_why, sizeof(r->stalled_why), "%.120s", why);
    uv_cond_broadcast(&r->cv); /* callers waiting for a connection fail now */
}

uint64_t pf_redis_mark(pf_redis *r) {
    uint64_t m;
    uv_mutex_lock(&r->mu);
    m = r->stalls;
    uv_mutex_unlock(&r->mu);
    return m;
}

/* Under r->mu: a call made at mark was answered. */
static void answered(pf_redis *r, uint64_t mark) {
    if (mark == r->stalls) r->stalled_ns = 0;
}

void pf_redis_answered(pf_redis *r, uint64_t mark) {
    uv_mutex_lock(&r->mu);
    answered(r, mark);
    uv_mutex_unlock(&r->mu);
}

/* Under r->mu: c is lent with the mark taken when it was asked for. */
static void mark_lent(pf_redis *r, redisContext *c, uint64_t mark) {
    for (int i = 0; i < r->max_conns; i++)
        if (!r->marks[i].c) {
            r->marks[i].c = c;
            r->marks[i].mark = mark;
            return;
        }
}

/* Under r->mu: c comes back; the mark it was lent with (one that ends no
 * stall if c was not lent by the pool). */
static uint64_t unmark_lent(pf_redis *r, redisContext *c) {
    for (int i = 0; i < r->max_conns; i++)
        if (r->marks[i].c == c) {
            r->marks[i].c = NULL;
            return r->marks[i].mark;
        }
    return r->stalls + 1;
}

redisContext *pf_redis_get(pf_redis *r, uint64_t deadline_ns, pf_proto_error *e) {
    uint64_t deadline = deadline_ns, mark;
    redisContext *c = NULL;
    uv_mutex_lock(&r->mu);
    for (;;) {
        uint64_t now = pf_clock_now_ns();
        if (stalled(r, e)) {
            uv_mutex_unlock(&r->mu);
            return NULL;
        }
        if (r->idle || r->lent < r->max_conns) break;
        if (now >= deadline || uv_cond_timedwait(&r->cv, &r->mu, deadline - now) == UV_ETIMEDOUT) {
            if (!r->idle && r->lent >= r->max_conns) {
                uv_mutex_unlock(&r->mu);
                pf_proto_error_set(e, PF_EIO, PF_ERR_STORE_UNAVAILABLE, NULL,
                                   "All %d connections to the map store are busy; retry.",
                                   r->max_conns);
                return NULL;
            }
        }
    }
    if (r->idle) {
        idle_conn *i = r->idle;
        r->idle = i->next;
        c = i->c;
        free(i);
    }
    r->lent++;
    mark = r->stalls;
    uv_mutex_unlock(&r->mu);
    if (c && !still_open(c)) {
        /* Redis closed it while it was idle (it restarted, or timed the
         * client out): a command written to it would only fail, after
         * being sent, as "outcome unknown". */
        redisFree(c);
        c = NULL;
    }
    if (!c) {
        bool io;
        c = connect_to(&r->url, deadline, e);
        io = !c;
        if (c && r->hook && !r->hook(r->hook_ud, c, deadline, e)) {
            io = c->err != 0;
            redisFree(c);
            c = NULL;
        }
        if (!c) {
            uv_mutex_lock(&r->mu);
            if (io) note_stall(r, e->message);
            r->lent--;
            uv_cond_signal(&r->cv);
            uv_mutex_unlock(&r->mu);
            return NULL;
        }
    }
    uv_mutex_lock(&r->mu);
    mark_lent(r, c, mark);
    uv_mutex_unlock(&r->mu);
    return c;
}

void pf_redis_put(pf_redis *r, redisContext *c) {
    idle_conn *i = NULL;
    char broken_why[128] = "";
    uint64_t mark;
    if (!c) return;
    uv_mutex_lock(&r->mu);
    mark = unmark_lent(r, c);
    uv_mutex_unlock(&r->mu);
    if (c->err) snprintf(broken_why, sizeof(broken_why), "%s", c->errstr);
    if (!c->err) i = malloc(sizeof(*i));
    if (!i) {
        redisFree(c); /* broken, or no memory to keep it */
        c = NULL;
    }
    uv_mutex_lock(&r->mu);
    if (i) {
        i->c = c;
        i->next = r->idle;
        r->idle = i;
        answered(r, mark); /* it answered (a stall begun after it was lent: maybe before) */
    } else if (broken_why[0]) {
        note_stall(r, broken_why);
    }
    r->lent--;
    uv_cond_signal(&r->cv);
    uv_mutex_unlock(&r->mu);
}

redisReply *pf_redis_eval(redisContext *c, uint64_t deadline_ns, pf_redis_script *s, int nkeys,
                          int argc, const char *const *argv, const size_t *lens,
                          pf_proto_error *e) {
    const char *av[40];
    size_t al[40];
    char nk[16];
    redisReply *rep;
    if (argc + 3 > (int)(sizeof(av) / sizeof(av[0]))) {
        pf_proto_error_set(e, PF_EINVAL, PF_ERR_INTERNAL, NULL, "Too many script arguments.");
        return NULL;
    }
    av[0] = "EVALSHA";
    al[0] = 7;
    av[1] = s->sha1;
    al[1] = 40;
    av[2] = nk;
    al[2] = (size_t)snprintf(nk, sizeof(nk), "%d", nkeys);
    memcpy(av + 3, argv, (size_t)argc * sizeof(*av));
    memcpy(al + 3, lens, (size_t)argc * sizeof(*al));
    if (!arm(c, deadline_ns, "EVALSHA", e)) return NULL;
    rep = redisCommandArgv(c, argc + 3, av, al);
    if (rep && rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "NOSCRIPT", 8) == 0) {
        /* Redis restarted or flushed its scripts: send the source once. */
        freeReplyObject(rep);
        av[0] = "EVAL";
        al[0] = 4;
        av[1] = s->src;
        al[1] = strlen(s->src);
        if (!arm(c, deadline_ns, "EVAL", e)) return NULL;
        rep = redisCommandArgv(c, argc + 3, av, al);
    }
    return checked(c, rep, "EVALSHA", e);
}
