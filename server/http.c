/* http.c -- libmicrohttpd glue: the daemon, the life of one request (body,
 * limits, content type, suspend/resume), and sending answers.
 *
 * libmicrohttpd's threads only do I/O and quick answers; anything that
 * searches or builds runs on the pool (handlers.c).
 */
#include "http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_status.h"

/* Bytes of an over-long streamed body read and dropped before hanging up. */
#define PF_DISCARD_MAX (64u * 1024 * 1024)

uint64_t pf__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void pf__answer_json(pf_req *r, int code, pf_jsonw *w) {
    size_t len;
    char *buf = pf_jsonw_take(w, &len);
    free(r->resp);
    if (!buf) {
        static const char oom[] =
            "{\"error\":{\"code\":\"out_of_memory\",\"message\":\"Out of memory.\"}}";
        buf = malloc(sizeof(oom));
        len = buf ? sizeof(oom) - 1 : 0;
        if (buf) memcpy(buf, oom, sizeof(oom));
        code = 503;
    }
    r->resp = buf;
    r->resp_len = len;
    r->resp_type = "application/json";
    r->code = code;
    r->answered = true;
}

static void answer_errorv(pf_req *r, int code, const char *errcode, const char *field,
                          const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void answer_errorv(pf_req *r, int code, const char *errcode, const char *field,
                          const char *fmt, va_list ap) {
    char msg[320];
    pf_jsonw w;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    pf_jsonw_init(&w, 256);
    pf_proto_write_error(&w, errcode, msg, field);
    pf__answer_json(r, code, &w);
    if (code == 503) r->retry_after = true;
}

void pf__answer_error(pf_req *r, int code, const char *errcode, const char *field, const char *fmt,
                      ...) {
    va_list ap;
    va_start(ap, fmt);
    answer_errorv(r, code, errcode, field, fmt, ap);
    va_end(ap);
}

void pf__answer_perror(pf_req *r, const pf_proto_error *e) {
    pf_jsonw w;
    int code = pf_http_status(e->status);
    pf_jsonw_init(&w, 256);
    pf_proto_write_perror(&w, e);
    pf__answer_json(r, code, &w);
    if (code == 503) r->retry_after = true;
}

static void suspend_conn(void *ud) { MHD_suspend_connection(ud); }

bool pf__dispatch(pf_req *r, pf_job_kind kind, pf_pool_fn fn) {
    pf_status st;
    r->job.fn = fn;
    r->job.arg = r;
    r->job.kind = kind;
    /* The connection is suspended before the job becomes visible to the
     * workers, so its resume always finds it suspended. */
    /* Set before the job is visible and read only by this (the I/O) thread:
     * once queued, r belongs to the worker until it resumes the connection,
     * so on_request must not read anything the worker writes. */
    r->queued = true;
    st = pf_pool_submit_with(r->srv->pool, &r->job, suspend_conn, r->conn);
    if (st) r->queued = false;
    if (st == PF_ELIMIT) {
        pf__answer_error(r, 503, PF_ERR_OVERLOADED, NULL,
                         "The server is busy: %lld jobs are already waiting. Retry later.",
                         (long long)r->srv->cfg.queue_limit);
    } else if (st) {
        pf__answer_error(r, 503, PF_ERR_SHUTTING_DOWN, NULL, "The server is shutting down.");
        r->close = true;
    }
    return st == PF_OK;
}

void pf__finish(pf_req *r) { MHD_resume_connection(r->conn); }

/* libmicrohttpd sent the 101: the socket is the stream hub's now. */
static void on_upgrade(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra,
                       size_t extra_len, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh) {
    pf_server *s = cls;
    pf_req *r = con_cls;
    (void)c;
    pf_hub_adopt(s->hub, sock, urh, extra, extra_len, r->map_id, r->session_id);
}

static enum MHD_Result send_upgrade(pf_req *r) {
    struct MHD_Response *resp = MHD_create_response_for_upgrade(on_upgrade, r->srv);
    enum MHD_Result ret;
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, "websocket");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "Upgrade");
    MHD_add_response_header(resp, "Sec-WebSocket-Accept", r->ws_accept);
    ret = MHD_queue_response(r->conn, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
    MHD_destroy_response(resp);
    if (ret == MHD_YES) {
        r->sent = true;
        r->code = 101;
    }
    return ret;
}

static enum MHD_Result send_answer(pf_req *r) {
    struct MHD_Response *resp;
    enum MHD_Result ret;
    char num[32];
    if (r->upgrade) return send_upgrade(r);
    resp = MHD_create_response_from_buffer(r->resp_len, r->resp, MHD_RESPMEM_MUST_FREE);
    if (!resp) return MHD_NO;
    r->resp = NULL; /* libmicrohttpd frees it now */
    if (r->resp_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->resp_type);
    if (r->allow) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->code == 426) MHD_add_response_header(resp, "Sec-WebSocket-Version", "13");
    if (r->retry_after) {
        snprintf(num, sizeof(num), "%lld", (long long)r->srv->cfg.retry_after_s);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, num);
    }
    if (r->location[0]) MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
    if (r->close) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    ret = MHD_queue_response(r->conn, (unsigned)r->code, resp);
    MHD_destroy_response(resp);
    if (ret == MHD_YES) r->sent = true;
    return ret;
}

/* The media type of Content-Type without parameters, compared
 * case-insensitively. */
static bool media_is(const char *ct, const char *type) {
    size_t n = strlen(type);
    while (*ct == ' ') ct++;
    return strncasecmp(ct, type, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

static bool route_has_body(pf_route r) {
    return r == PF_ROUTE_MAPS_CREATE || r == PF_ROUTE_MAP_PUT || r == PF_ROUTE_PATH_POST ||
           r == PF_ROUTE_PATHS_POST || r == PF_ROUTE_MAP_PATCH || r == PF_ROUTE_SESSIONS_CREATE ||
           r == PF_ROUTE_SESSION_UPDATES;
}

/* The first call of a request: route, content type, announced length. */
static void begin(pf_req *r, const char *method, const char *url) {
    pf_server *s = r->srv;
    pf_route_result rr;
    const char *ct, *cl;

    if (atomic_load(&s->draining)) {
        pf__answer_error(r, 503, PF_ERR_SHUTTING_DOWN, NULL, "The server is shutting down.");
        r->close = true;
        return;
    }
    switch (pf_route_find(method, url, &rr)) {
    case PF_MATCH_NOT_FOUND:
        pf__answer_error(r, 404, PF_ERR_NOT_FOUND, NULL, "No route %.16s %.200s.", method, url);
        return;
    case PF_MATCH_BAD_METHOD:
        pf__answer_error(r, 405, PF_ERR_METHOD_NOT_ALLOWED, NULL,
                         "Method %.16s is not allowed on %.200s; allowed: %s.", method, url,
                         rr.allow);
        r->allow = rr.allow;
        return;
    case PF_MATCH_BAD_ID:
        pf__answer_error(r, 400, PF_ERR_INVALID_MAP_ID, "id",
                         "A map id is 1 to %d characters of A-Z a-z 0-9 _ . -", PF_MAP_ID_MAX);
        return;
    case PF_MATCH_OK:
        break;
    }
    r->route = rr.route;
    memcpy(r->map_id, rr.map_id, sizeof(r->map_id));
    memcpy(r->session_id, rr.session_id, sizeof(r->session_id));
    if (!route_has_body(r->route)) return;

    ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!ct || !*ct) {
        r->body_kind = PF_BODY_NONE; /* maps: sniffed; paths: JSON */
    } else if (media_is(ct, "application/json")) {
        r->body_kind = PF_BODY_JSON;
    } else if (media_is(ct, "text/plain") &&
               (r->route == PF_ROUTE_MAP_PUT || r->route == PF_ROUTE_MAPS_CREATE)) {
        r->body_kind = PF_BODY_TEXT;
    } else if (media_is(ct, "application/x-ndjson") && r->route == PF_ROUTE_SESSION_UPDATES) {
        r->body_kind = PF_BODY_NDJSON;
    } else {
        pf__answer_error(r, 415, PF_ERR_UNSUPPORTED_MEDIA, "Content-Type",
                         "Content-Type '%.80s' is not accepted here; send %s.", ct,
                         r->route == PF_ROUTE_MAP_PUT || r->route == PF_ROUTE_MAPS_CREATE
                             ? "application/json or text/plain (Moving AI map)"
                         : r->route == PF_ROUTE_SESSION_UPDATES
                             ? "application/json (one update) or application/x-ndjson (one "
                               "update a line)"
                             : "application/json");
        r->close = true;
        return;
    }
    cl = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        if (*end == '\0' && n > (unsigned long long)s->cfg.max_body_bytes) {
            /* Answered before reading a byte of the body. */
            pf__answer_error(r, 413, PF_ERR_BODY_TOO_LARGE, NULL,
                             "The body has %llu bytes; this server accepts at most %lld.", n,
                             (long long)s->cfg.max_body_bytes);
            r->close = true;
        }
    }
}

/* Appends a piece of the body; answers 413 past the limit. */
static void take_body(pf_req *r, const char *data, size_t n) {
    size_t need, cap;
    if (r->answered || !route_has_body(r->route)) return;
    if (__builtin_add_overflow(r->body_len, n, &need) ||
        need > (size_t)r->srv->cfg.max_body_bytes) {
        free(r->body);
        r->body = NULL;
        r->body_len = r->body_cap = 0;
        pf__answer_error(r, 413, PF_ERR_BODY_TOO_LARGE, NULL,
                         "The body is larger than the %lld bytes this server accepts.",
                         (long long)r->srv->cfg.max_body_bytes);
        r->close = true;
        return;
    }
    if (need > r->body_cap) {
        char *b;
        cap = r->body_cap ? r->body_cap : 4096;
        while (cap < need) cap *= 2;
        if (cap > (size_t)r->srv->cfg.max_body_bytes) cap = (size_t)r->srv->cfg.max_body_bytes;
        b = realloc(r->body, cap);
        if (!b) {
            pf__answer_error(r, 503, PF_ERR_NO_MEMORY, NULL, "Out of memory for the body.");
            r->close = true;
            return;
        }
        r->body = b;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len = need;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    pf_server *s = cls;
    pf_req *r = *con_cls;
    (void)version;

    if (!r) {
        r = calloc(1, sizeof(*r));
        if (!r) return MHD_NO;
        r->srv = s;
        r->conn = c;
        r->t0_ns = pf__now_ns();
        atomic_fetch_add(&s->in_flight, 1);
        *con_cls = r;
        begin(r, method, url);
        /* An early answer (404, 405, 413 by Content-Length, 415) goes out
         * now; libmicrohttpd then skips the body and closes. */
        if (r->answered) return send_answer(r);
        return MHD_YES;
    }
    if (*upload_data_size) {
        /* libmicrohttpd cannot send an answer in the middle of a body, so
         * a body found too large while it streams in (chunked, no
         * Content-Length) is read and dropped, then answered 413. Past
         * PF_DISCARD_MAX dropped bytes the connection is closed instead. */
        if (r->answered) {
            r->discarded += *upload_data_size;
            if (r->discarded > PF_DISCARD_MAX) return MHD_NO;
        }
        take_body(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->sent) return MHD_YES;
    if (!r->answered && !r->queued) {
        pf__handle(r);
        if (r->queued) return MHD_YES; /* suspended: the worker resumes the connection */
    }
    /* Not queued, or resumed by the worker: its answer is set. */
    if (r->answered) return send_answer(r);
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    pf_server *s = cls;
    pf_req *r = *con_cls;
    (void)c;
    (void)toe;
    if (!r) return;
    pf_metrics_observe(&s->metrics, r->route, r->sent ? r->code : 0,
                       (pf__now_ns() - r->t0_ns) / 1000);
    pf_mapver_release(r->mv);
    pf_update_list_free(&r->updates);
    pf_update_free(&r->patch);
    free(r->queries);
    free(r->body);
    free(r->resp);
    free(r);
    *con_cls = NULL;
    atomic_fetch_sub(&s->in_flight, 1);
}

pf_status pf_server_start(pf_server *s, char *err, size_t errlen) {
    struct sockaddr_in sa;
    const union MHD_DaemonInfo *info;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)s->cfg.port);
    if (inet_pton(AF_INET, s->cfg.bind, &sa.sin_addr) != 1) {
        snprintf(err, errlen, "--bind '%s' is not an IPv4 address", s->cfg.bind);
        return PF_EINVAL;
    }
    s->daemon = MHD_start_daemon(
        flags, (uint16_t)s->cfg.port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->cfg.io_threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->cfg.max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)s->cfg.max_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->cfg.conn_timeout_s, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, errlen, "cannot listen on %s:%lld (address in use or not available)",
                 s->cfg.bind, (long long)s->cfg.port);
        return PF_EINVAL;
    }
    info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : (uint16_t)s->cfg.port;
    return PF_OK;
}

uint16_t pf_server_port(const pf_server *s) { return s->port; }

uint64_t pf_server_drain(pf_server *s, int64_t timeout_ms) {
    uint64_t end = pf__now_ns() + (uint64_t)timeout_ms * 1000000ull, left;
    struct timespec nap = {0, 5 * 1000 * 1000};
    if (!s->daemon) return 0;
    atomic_store(&s->draining, true);
    /* libmicrohttpd's threads may still hold the quiesced listening socket
     * (MHD_quiesce_daemon: close it only after MHD_stop_daemon): shut it
     * down now, so the kernel refuses new connections, and close it in
     * pf_server_destroy. */
    s->quiesced = MHD_quiesce_daemon(s->daemon);
    if (s->quiesced != MHD_INVALID_SOCKET) shutdown(s->quiesced, SHUT_RDWR);
    pf_hub_close_all(s->hub);
    while ((left = atomic_load(&s->in_flight)) > 0 && pf__now_ns() < end) nanosleep(&nap, NULL);
    if (left == 0) {
        MHD_stop_daemon(s->daemon);
        s->daemon = NULL;
    }
    return left;
}
