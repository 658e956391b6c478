/* http.c -- see http.h: libmicrohttpd's callbacks, the checks every request
 * passes before its handler, and sending answers. It names no handler: the
 * route table (routes.h) does.
 */
#include "http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "request_internal.h"
#include "router.h"

/* Bytes of an over-long streamed body read and dropped before hanging up. */
#define PF_DISCARD_MAX (64u * 1024 * 1024)

struct pf_http {
    pf_http_deps d;
    pf_req_env env;
    struct MHD_Daemon *daemon;
    uint16_t port;
    atomic_bool draining;
};

/* libmicrohttpd sent the 101: the socket is the route's now. */
static void on_upgrade(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra,
                       size_t extra_len, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh) {
    pf_req *r = con_cls;
    (void)cls;
    (void)c;
    r->upgrade_fn(r->upgrade_ud, sock, urh, extra, extra_len);
}

static enum MHD_Result send_answer(pf_req *r) {
    struct MHD_Response *resp;
    enum MHD_Result ret;
    if (r->upgrade) {
        resp = MHD_create_response_for_upgrade(on_upgrade, NULL);
        if (!resp) return MHD_NO;
        /* libmicrohttpd writes "Connection: Upgrade" itself: adding it here
         * made "Connection: Upgrade, Upgrade", which .NET's ClientWebSocket
         * (and so Unity) refuses. */
        MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, "websocket");
    } else {
        resp = MHD_create_response_from_buffer(r->resp_len, r->resp,
                                               pf__req_resp_is_static(r) ? MHD_RESPMEM_PERSISTENT
                                                                         : MHD_RESPMEM_MUST_FREE);
        if (!resp) return MHD_NO;
        r->resp = NULL; /* libmicrohttpd frees it now */
        if (r->resp_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->resp_type);
    }
    for (size_t i = 0; i < r->nheaders; i++)
        MHD_add_response_header(resp, r->headers_buf + r->headers[i].name,
                                r->headers_buf + r->headers[i].value);
    MHD_add_response_header(resp, "X-Pathd-Instance", atomic_load(r->env->instance));
    ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    if (ret == MHD_YES) r->sent = true;
    return ret;
}

/* The first call of a request: route, content type, announced length. An
 * answer set here goes out at once. */
static void begin(pf_http *h, pf_req *r, const char *method, const char *url) {
    const char *ct, *cl;

    if (atomic_load(&h->draining)) {
        pf_req_answer_error(r, PF_ERR_SHUTTING_DOWN, NULL, NULL);
        pf_req_close_after(r);
        return;
    }
    switch (pf_route_find(method, url, &r->rr)) {
    case PF_MATCH_NOT_FOUND:
        pf_req_answer_error(r, PF_ERR_NOT_FOUND, NULL, "No route %.16s %.200s.", method, url);
        return;
    case PF_MATCH_BAD_METHOD:
        pf_req_answer_error(r, PF_ERR_METHOD_NOT_ALLOWED, NULL,
                            "Method %.16s is not allowed on %.200s; allowed: %s.", method, url,
                            r->rr.allow);
        pf_req_add_header(r, MHD_HTTP_HEADER_ALLOW, r->rr.allow);
        return;
    case PF_MATCH_BAD_ID:
        pf_req_answer_error(r, PF_ERR_INVALID_MAP_ID, "id",
                            "A map id is 1 to %d characters of A-Z a-z 0-9 _ . -", PF_MAP_ID_MAX);
        return;
    case PF_MATCH_OK:
        break;
    }
    if (!pf_route_has_body(r->rr.route)) return;

    ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    r->body_kind = pf_route_body_kind(r->rr.route, ct);
    if (!r->body_kind) {
        /* curl -d / --data-binary sends a form type unless told otherwise,
         * so the answer names the header to add: text/plain where a Moving
         * AI map is accepted, else application/json. Form types stay
         * refused: a browser may send them cross-site without asking. */
        char types[160];
        const char *hint =
            pf_route_body_kind(r->rr.route, "text/plain") ? "text/plain" : "application/json";
        pf_route_describe_bodies(r->rr.route, types, sizeof(types));
        pf_req_answer_error(r, PF_ERR_UNSUPPORTED_MEDIA, "Content-Type",
                            "Content-Type '%.80s' is not accepted here; send %s (with curl: -H "
                            "'Content-Type: %s').",
                            ct, types, hint);
        pf_req_close_after(r);
        return;
    }
    cl = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        if (*end == '\0' && n > (unsigned long long)h->d.cfg->max_body_bytes) {
            /* Answered before reading a byte of the body. */
            pf_req_answer_error(r, PF_ERR_BODY_TOO_LARGE, NULL,
                                "The body has %llu bytes; this server accepts at most %lld.", n,
                                (long long)h->d.cfg->max_body_bytes);
            pf_req_close_after(r);
        }
    }
}

/* Appends a piece of the body; answers 413 past the limit. */
static void take_body(pf_http *h, pf_req *r, const char *data, size_t n) {
    size_t need, cap, max = (size_t)h->d.cfg->max_body_bytes;
    if (r->answered || !pf_route_has_body(r->rr.route)) return;
    if (__builtin_add_overflow(r->body_len, n, &need) || need > max) {
        pf_req_drop_body(r);
        pf_req_answer_error(r, PF_ERR_BODY_TOO_LARGE, NULL,
                            "The body is larger than the %lld bytes this server accepts.",
                            (long long)max);
        pf_req_close_after(r);
        return;
    }
    if (need > r->body_cap) {
        char *b;
        cap = r->body_cap ? r->body_cap : 4096;
        while (cap < need) cap *= 2;
        if (cap > max) cap = max;
        b = realloc(r->body, cap);
        if (!b) {
            pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, "Out of memory for the body.");
            pf_req_close_after(r);
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
    pf_http *h = cls;
    pf_req *r = *con_cls;
    (void)version;

    if (!r) {
        r = pf__req_create(&h->env, c, pf_clock_now_ns());
        if (!r) return MHD_NO;
        pf_metrics_request_begin(h->d.metrics);
        *con_cls = r;
        begin(h, r, method, url);
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
        take_body(h, r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->sent) return MHD_YES;
    if (r->again) {
        /* Resumed by pf_req_finish_again: the handler runs once more. */
        r->again = false;
        r->queued = false;
        r->reruns++;
    }
    if (!r->answered && !r->queued) {
        pf_routes_call(h->d.routes, r->rr.route, r);
        if (r->queued) return MHD_YES; /* suspended: the worker resumes the connection */
        if (!r->answered) pf_req_answer_error(r, PF_ERR_INTERNAL, NULL, NULL);
    }
    /* Not queued, or resumed by the worker: its answer is set. */
    if (r->answered) return send_answer(r);
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    pf_http *h = cls;
    pf_req *r = *con_cls;
    (void)c;
    (void)toe;
    if (!r) return;
    pf_metrics_request_end(h->d.metrics, r->rr.route, r->sent ? r->status : 0,
                           (pf_clock_now_ns() - r->t0_ns) / 1000);
    pf__req_destroy(r);
    *con_cls = NULL;
}

pf_status pf_http_create(const pf_http_deps *d, pf_http **out) {
    pf_http *h = calloc(1, sizeof(*h));
    *out = NULL;
    if (!h) return PF_ENOMEM;
    h->d = *d;
    h->env.pool = d->pool;
    h->env.queue_limit = d->cfg->queue_limit;
    h->env.retry_after_s = d->cfg->retry_after_s;
    h->env.metrics = d->metrics;
    h->env.instance = d->instance;
    atomic_init(&h->draining, false);
    *out = h;
    return PF_OK;
}

pf_status pf_http_start(pf_http *h, char *err, size_t errlen) {
    const pf_config *cfg = h->d.cfg;
    struct sockaddr_in sa;
    const union MHD_DaemonInfo *info;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)cfg->port);
    if (inet_pton(AF_INET, cfg->bind, &sa.sin_addr) != 1) {
        snprintf(err, errlen, "--bind '%s' is not an IPv4 address", cfg->bind);
        return PF_EINVAL;
    }
    h->daemon = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->io_threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->max_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->conn_timeout_s, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, h, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
    if (!h->daemon) {
        snprintf(err, errlen, "cannot listen on %s:%lld (address in use or not available)",
                 cfg->bind, (long long)cfg->port);
        return PF_EINVAL;
    }
    info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : (uint16_t)cfg->port;
    return PF_OK;
}

uint16_t pf_http_port(const pf_http *h) { return h->port; }

void pf_http_quiesce(pf_http *h) {
    MHD_socket lsock;
    if (!h->daemon) return;
    atomic_store(&h->draining, true);
    lsock = MHD_quiesce_daemon(h->daemon);
    if (lsock != MHD_INVALID_SOCKET) close(lsock);
}

uint64_t pf_http_in_flight(const pf_http *h) { return pf_metrics_in_flight(h->d.metrics); }

void pf_http_stop(pf_http *h) {
    if (!h->daemon) return;
    MHD_stop_daemon(h->daemon);
    h->daemon = NULL;
}

void pf_http_destroy(pf_http *h) {
    if (!h) return;
    pf_http_stop(h);
    free(h);
}
