/* http.c -- see http.h: libmicrohttpd's callbacks, the checks every request
 * passes before its handler, and sending answers. It names no handler: the
 * route table (routes.h) does.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "conns.h"
#include "http_strict.h"
#include "request_internal.h"
#include "router.h"

/* After an answer written in the middle of a body (see answer_mid_body):
 * how long, and how many more body bytes, are read and dropped before the
 * connection is closed. */
#define PF_LINGER_NS (2000ull * 1000000ull)
#define PF_LINGER_BYTES (1u << 20)
/* Connections of the probes' listener (--health-port). */
#define PF_HEALTH_CONNECTIONS 64u
/* Header lines collected for the strict checks (a request with more copies
 * of Host, Content-Length, Transfer-Encoding, Content-Type and
 * Authorization than this is refused). */
#define PF_HTTP_CHECKED_MAX 16
/* Largest --tls-cert / --tls-key file read. */
#define PF_TLS_FILE_MAX (1024 * 1024)

/* One libmicrohttpd daemon: the API's, or the probes'. */
typedef struct listener {
    pf_http *h;
    bool health; /* serves /healthz, /readyz and /metrics only */
    struct MHD_Daemon *daemon;
    MHD_socket quiesced; /* the listening socket after quiesce, closed at stop */
    uint16_t port;
} listener;

struct pf_http {
    pf_http_deps d;
    pf_req_env env;
    listener api, health;
    pf_conns *conns; /* the absolute deadlines of both listeners' connections (borrowed) */
    atomic_bool draining;
    char *tls_cert, *tls_key; /* PEM, read at start; the key is wiped when freed */
    size_t tls_key_len;
};

/* Our record of c (conns.h), or NULL. */
static pf_conn *conn_of(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* MHD_OPTION_NOTIFY_CONNECTION: every connection is watched from its
 * accept to its close (conns.h; CLOSED comes before libmicrohttpd closes
 * the socket). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    listener *l = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = fd ? pf_conns_open(l->h->conns, fd->connect_fd) : NULL;
    } else {
        pf_conns_close(l->h->conns, *socket_context);
        *socket_context = NULL;
    }
}

/* MHD_OPTION_URI_LOG_CALLBACK: a request line was read, before its
 * headers: the request's receive deadline starts, and the request is made
 * with the target as it came, before libmicrohttpd splits and decodes it
 * (the strict checks look at it); what this returns is the request's
 * con_cls. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *c) {
    listener *l = cls;
    pf_http *h = l->h;
    pf_req *r;
    char *qmark;
    pf_conn_request_line(conn_of(c));
    if ((r = pf__req_create(&h->env, c, pf_clock_now_ns()))) {
        r->raw_len = strlen(uri);
        r->raw_at = (uintptr_t)uri;
        r->raw_target = strdup(uri); /* NULL (out of memory): answered 503 (begin) */
        r->nparams = pf__req_count_params(r->raw_target);
    }
    /* libmicrohttpd 0.9.75 parses the query string right after this
     * callback, into records in the connection's memory pool (32 KiB), and
     * never answers a request whose records do not fit: about 470
     * parameters, or 64 in a 31 KB target, and it drops its read buffer to
     * answer 431, then waits for headers that cannot come until
     * --request-timeout closes the connection. pathd splits the query
     * itself from its copy (request.c) and answers 414 past
     * --max-query-params (begin), so the arguments libmicrohttpd would
     * parse, those after the '?', are cut off here in its buffer, which
     * it hands over "before we modify URI *or* args" (connection.c). A
     * raw NUL byte before the '?' hides the query from this callback (its
     * length past the NUL is libmicrohttpd's alone): such a target is
     * refused 400 by the strict checks, or, with more parameters than the
     * pool holds, closed at --request-timeout as before. */
    qmark = strchr((char *)(uintptr_t)uri, '?');
    if (qmark && qmark[1]) qmark[1] = '\0';
    return r;
}

/* libmicrohttpd sent the 101: the socket is the route's now. */
static void on_upgrade(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra,
                       size_t extra_len, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh) {
    pf_req *r = con_cls;
    (void)cls;
    pf_conn_upgraded(conn_of(c));
    r->upgrade_fn(r->upgrade_ud, sock, urh, extra, extra_len);
}

/* An answer body libmicrohttpd holds until it is sent: counted in conns.h
 * and charged to the memory budget until then. */
typedef struct held_answer {
    pf_http *h;
    char *buf;
    size_t n;
} held_answer;

/* libmicrohttpd is done with the body (sent, or its connection closed). */
static void answer_released(void *cls) {
    held_answer *a = cls;
    pf_conns_answer_sent(a->h->conns, a->n);
    pf_mem_uncharge(a->h->d.mem, PF_MEM_ANSWERS, a->n);
    free(a->buf);
    free(a);
}

/* Counts r's body as held (conns.h), or answers in its place: 507 when it
 * alone is past --max-answer-bytes-per-connection, 503 while the answers
 * held fill --max-answer-bytes or the memory budget. The short refusal is
 * counted whatever the caps (it is a few hundred bytes). NULL when even
 * that cannot be allocated (the caller closes the connection). */
static held_answer *hold_answer(pf_http *h, pf_req *r) {
    held_answer *a = malloc(sizeof(*a));
    pf_status st;
    if (!a) return NULL;
    a->h = h;
    st = pf_conns_answer_hold(h->conns, r->resp_len, false);
    if (st == PF_OK && !pf_mem_try_charge(h->d.mem, PF_MEM_ANSWERS, r->resp_len)) {
        pf_conns_answer_sent(h->conns, r->resp_len);
        pf_conns_answer_refused(h->conns);
        st = PF_ENOMEM;
    }
    if (st == PF_ELIMIT)
        pf_req_answer_error(r, PF_ERR_INSUFFICIENT_STORAGE, NULL,
                            "The answer has %zu bytes; this server gives one connection at most "
                            "%lld (--max-answer-bytes-per-connection). Ask for less (a region, "
                            "fewer entries).",
                            r->resp_len, (long long)h->d.cfg->max_answer_bytes_per_conn);
    else if (st)
        pf_req_answer_error(r, PF_ERR_OVERLOADED, NULL,
                            "The answers waiting for their clients to read them fill what this "
                            "server holds (--max-answer-bytes, %lld bytes, or --max-memory). "
                            "Retry later.",
                            (long long)h->d.cfg->max_answer_bytes);
    if (st) {
        if (pf__req_resp_is_static(r)) {
            free(a);
            return NULL;
        }
        pf_conns_answer_hold(h->conns, r->resp_len, true);
        pf_mem_charge(h->d.mem, PF_MEM_ANSWERS, r->resp_len);
    }
    a->buf = r->resp;
    a->n = r->resp_len;
    return a;
}

static enum MHD_Result send_answer(pf_http *h, pf_req *r) {
    struct MHD_Response *resp;
    enum MHD_Result ret;
    if (r->upgrade) {
        resp = MHD_create_response_for_upgrade(on_upgrade, NULL);
        if (!resp) return MHD_NO;
        /* libmicrohttpd writes "Connection: Upgrade" itself: adding it here
         * made "Connection: Upgrade, Upgrade", which .NET's ClientWebSocket
         * (and so Unity) refuses. */
        MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, "websocket");
    } else if (pf__req_resp_is_static(r)) {
        resp = MHD_create_response_from_buffer(r->resp_len, r->resp, MHD_RESPMEM_PERSISTENT);
        if (!resp) return MHD_NO;
        if (r->resp_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->resp_type);
    } else {
        held_answer *a = hold_answer(h, r);
        if (!a) return MHD_NO;
        resp = MHD_create_response_from_buffer_with_free_callback_cls(a->n, a->buf, answer_released,
                                                                      a);
        if (!resp) {
            answer_released(a); /* r->resp is a->buf: it is freed there */
            r->resp = NULL;
            return MHD_NO;
        }
        r->resp = NULL; /* the held answer's now, freed by answer_released */
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

/* libmicrohttpd cannot queue an answer in the middle of a body
 * (MHD_queue_response refuses outside the states HEADERS_PROCESSED and
 * FULL_REQ_RECEIVED), and a chunked body that never ends would never get
 * one. So r's answer (the 413 decided while the body streamed in) is
 * written to the socket here, on the connection's own I/O thread while
 * libmicrohttpd is reading (it writes nothing then); the sending side is
 * shut down, and the rest of the body is read and dropped for a while (a
 * lingering close: closing with unread input would reset the connection
 * and could lose the answer at the client). With TLS the bytes cannot go
 * past libmicrohttpd: false, and the connection is closed without an
 * answer. */
static bool answer_mid_body(pf_req *r) {
    const union MHD_ConnectionInfo *tls =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    const union MHD_ConnectionInfo *fdi =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const char *reason = MHD_get_reason_phrase_for((unsigned)r->status);
    char head[1024];
    size_t n;
    int fd;
    if ((tls && tls->tls_session) || !fdi) return false;
    fd = fdi->connect_fd;
    n = (size_t)snprintf(head, sizeof(head),
                         "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n",
                         r->status, reason ? reason : "Error",
                         r->resp_type ? r->resp_type : "application/json", r->resp_len);
    for (size_t i = 0; i < r->nheaders && n < sizeof(head); i++) {
        const char *name = r->headers_buf + r->headers[i].name;
        if (strcasecmp(name, MHD_HTTP_HEADER_CONNECTION) == 0) continue;
        n += (size_t)snprintf(head + n, sizeof(head) - n, "%s: %s\r\n", name,
                              r->headers_buf + r->headers[i].value);
    }
    if (n + 2 >= sizeof(head)) return false;
    memcpy(head + n, "\r\n", 2);
    n += 2;
    /* A few hundred bytes on a connection that sent nothing back yet: the
     * socket's buffer takes them at once, or the peer is gone. */
    if (send(fd, head, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)n ||
        send(fd, r->resp, r->resp_len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)r->resp_len)
        return false;
    shutdown(fd, SHUT_WR);
    r->sent = true;
    r->lingering = true;
    r->linger_until_ns = pf_clock_now_ns() + PF_LINGER_NS;
    return true;
}

/* The header lines the strict checks look at, every copy of each. */
typedef struct header_list {
    pf_http_header h[PF_HTTP_CHECKED_MAX];
    size_t n;
    bool overflow;
} header_list;

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value) {
    static const char *const names[] = {"Host", "Content-Length", "Transfer-Encoding",
                                        "Content-Type", "Authorization"};
    header_list *l = cls;
    (void)kind;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcasecmp(key, names[i]) == 0) {
            if (l->n == PF_HTTP_CHECKED_MAX) {
                l->overflow = true;
                return MHD_NO;
            }
            l->h[l->n].name = key;
            l->h[l->n].value = value;
            l->n++;
        }
    return MHD_YES;
}

/* RFC 9112's rules libmicrohttpd leaves to us (http_strict.h). version
 * points into libmicrohttpd's copy of the request line, just after the
 * target: a target that ends before it held a NUL. */
static bool strict_ok(pf_req *r, const char *version) {
    header_list l;
    pf_http_reqline rl;
    pf_strict_reason why;
    pf_strict_verdict v;
    uintptr_t ver = (uintptr_t)version;
    memset(&l, 0, sizeof(l));
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, collect_header, &l);
    rl.version = version ? version : "";
    rl.raw_target = r->raw_target ? r->raw_target : "";
    rl.target_has_nul =
        r->raw_target && ver > r->raw_at + r->raw_len + 1 && ver - (r->raw_at + r->raw_len) < 65536;
    if (l.overflow) {
        pf_req_answer_error(r, PF_ERR_MALFORMED_REQUEST, NULL,
                            "More than %d Host, Content-Length, Transfer-Encoding, Content-Type "
                            "and Authorization lines.",
                            PF_HTTP_CHECKED_MAX);
        pf_req_close_after(r);
        return false;
    }
    v = pf_http_strict_check(&rl, l.h, l.n, &why);
    if (v == PF_STRICT_OK) return true;
    pf_req_answer_error(
        r, v == PF_STRICT_NOT_IMPLEMENTED ? PF_ERR_NOT_IMPLEMENTED : PF_ERR_MALFORMED_REQUEST,
        why.field, "%s", why.message);
    /* The framing cannot be trusted: nothing more is read from this
     * connection. */
    pf_req_close_after(r);
    return false;
}

/* CORS (https://fetch.spec.whatwg.org/#http-cors-protocol): an allowed
 * Origin gets its answers readable, errors included. Returns true when
 * this was a preflight, now answered. */
static bool cors(pf_http *h, pf_req *r, const char *method, pf_route_match match) {
    const char *origin = pf_req_header(r, "Origin");
    const char *ask = pf_req_header(r, "Access-Control-Request-Method");
    if (!pf_guard_cors_enabled(h->d.guard)) return false;
    pf_req_add_header(r, "Vary", "Origin");
    if (!pf_guard_cors_allowed(h->d.guard, origin)) return false;
    pf_req_add_header(r, "Access-Control-Allow-Origin", origin);
    pf_req_add_header(r, "Access-Control-Expose-Headers",
                      "Location, Retry-After, WWW-Authenticate");
    if (strcmp(method, "OPTIONS") != 0 || !ask || match != PF_MATCH_BAD_METHOD) return false;
    /* A preflight asks for the path's methods; it carries no token. */
    pf_req_add_header(r, "Access-Control-Allow-Methods", r->rr.allow);
    pf_req_add_header(r, "Access-Control-Allow-Headers", "Authorization, Content-Type");
    pf_req_add_header(r, "Access-Control-Max-Age", "600");
    pf_req_answer_no_content(r);
    return true;
}

/* The bearer token, when the route (or an unknown path, so that probing
 * without a token tells nothing) needs one. Answers 401 / 403 and returns
 * false when it does not do. */
static bool token_ok(pf_http *h, pf_req *r, pf_scope need) {
    const char *authz = pf_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
    pf_scope have = PF_SCOPE_OPEN;
    pf_auth_result res;
    char www[160];
    if (!pf_guard_has_tokens(h->d.guard)) return true;
    res = pf_guard_check(h->d.guard, authz, &have, &r->who);
    if (res == PF_AUTH_OK) r->scope = have;
    if (need == PF_SCOPE_OPEN) return true; /* a bad token on an open route is ignored */
    if (res != PF_AUTH_OK) {
        /* RFC 6750 3: no error attribute when no credentials came. */
        snprintf(www, sizeof(www), "Bearer realm=\"pathd\"%s",
                 res == PF_AUTH_MISSING ? "" : ", error=\"invalid_token\"");
        pf_req_add_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, www);
        pf_req_answer_error(r, PF_ERR_UNAUTHORIZED, NULL,
                            res == PF_AUTH_MISSING
                                ? "This route needs a bearer token of scope %s: send "
                                  "Authorization: Bearer <token>."
                            : res == PF_AUTH_MALFORMED
                                ? "The Authorization header is not 'Bearer <token>' (scope %s "
                                  "needed)."
                                : "The bearer token is not known to this server (scope %s "
                                  "needed).",
                            pf_scope_name(need));
        return false;
    }
    if (!pf_scope_allows(have, need)) {
        snprintf(www, sizeof(www),
                 "Bearer realm=\"pathd\", error=\"insufficient_scope\", scope=\"%s\"",
                 pf_scope_name(need));
        pf_req_add_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, www);
        pf_req_answer_error(r, PF_ERR_INSUFFICIENT_SCOPE, NULL,
                            "This route needs a token of scope %s; this one has scope %s.",
                            pf_scope_name(need), pf_scope_name(have));
        return false;
    }
    return true;
}

/* Whether each route reads or changes maps (its module is not ops): those
 * wait until the stored maps are loaded. */
#define PF_MOD_ops false
#define PF_MOD_maps true
#define PF_MOD_paths true
#define PF_MOD_sessions true
#define PF_MOD_fields true
#define PF_MOD_tables true
#define PF_MOD_crowds true
static const bool uses_maps[PF_ROUTE_COUNT] = {
#define PF_ROUTE_USES_MAPS(route, name, method, path, bodies, scope, module)                       \
    [PF_ROUTE_##route] = PF_MOD_##module,
    PF_ROUTES(PF_ROUTE_USES_MAPS)
#undef PF_ROUTE_USES_MAPS
};

/* The routes the probes' listener serves. */
static bool is_probe(pf_route route) {
    return route == PF_ROUTE_HEALTHZ || route == PF_ROUTE_READYZ || route == PF_ROUTE_METRICS;
}

/* The first call of a request, once its headers are in: strict HTTP, Host,
 * CORS, route, token, the probes' listener serving probes only, readiness,
 * Content-Type, announced length, in that order. An answer set here goes out at once (libmicrohttpd
 * then reads no body and closes the connection after it). */
static void begin(listener *l, pf_req *r, const char *method, const char *url,
                  const char *version) {
    pf_http *h = l->h;
    const char *ct, *cl;
    pf_route_match match;

    if (atomic_load(&h->draining)) {
        pf_req_answer_error(r, PF_ERR_SHUTTING_DOWN, NULL, NULL);
        pf_req_close_after(r);
        return;
    }
    if (!strict_ok(r, version)) return;
    if (!r->raw_target || !pf__req_parse_query(r)) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, "Out of memory for the request target.");
        pf_req_close_after(r);
        return;
    }
    if (r->nparams > (size_t)h->d.cfg->max_query_params) {
        /* On every path, the probes' included: the parameters were
         * counted, not stored. */
        pf_req_answer_error(r, PF_ERR_URI_TOO_LONG, "query",
                            "The query string has %zu parameters; this server accepts at most "
                            "%lld (--max-query-params).",
                            r->nparams, (long long)h->d.cfg->max_query_params);
        return;
    }
    match = pf_route_find(method, url, &r->rr);
    /* The probes answer any Host: a balancer's health check may name the
     * address it dialled, and they tell nothing. */
    if (!(match == PF_MATCH_OK &&
          (r->rr.route == PF_ROUTE_HEALTHZ || r->rr.route == PF_ROUTE_READYZ)) &&
        !pf_guard_host_allowed(h->d.guard, pf_req_header(r, MHD_HTTP_HEADER_HOST))) {
        pf_req_answer_error(r, PF_ERR_HOST_NOT_ALLOWED, "Host",
                            "This server does not answer for that Host (%s).",
                            pf_guard_has_tokens(h->d.guard) ? "see --allowed-hosts"
                                                            : "without tokens it answers only "
                                                              "loopback names; see "
                                                              "--allowed-hosts");
        return;
    }
    if (cors(h, r, method, match)) return;
    if (!token_ok(h, r,
                  match == PF_MATCH_OK ? pf_guard_need(h->d.guard, r->rr.route) : PF_SCOPE_READ))
        return;
    switch (match) {
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
    if (l->health && !is_probe(r->rr.route)) {
        pf_req_answer_error(r, PF_ERR_NOT_FOUND, NULL,
                            "This listener (--health-port) serves GET /healthz, /readyz and "
                            "/metrics only; the API is on port %u.",
                            (unsigned)h->api.port);
        return;
    }
    if (uses_maps[r->rr.route] && pf_maps_loading(h->d.maps)) {
        pf_req_answer_error(r, PF_ERR_NOT_READY, NULL, NULL); /* with Retry-After */
        return;
    }
    if (!pf_route_has_body(r->rr.route)) return;

    ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    r->body_kind = pf_route_body_kind(r->rr.route, ct);
    if (r->body_kind == PF_BODY_TEXT && r->scope == PF_SCOPE_OPEN) {
        /* A web page's form may send text/plain to any address without
         * asking; only a bearer token, which a form cannot add, makes it
         * safe. */
        pf_req_answer_error(r, PF_ERR_UNSUPPORTED_MEDIA, "Content-Type",
                            "text/plain is accepted only with a bearer token (a browser form can "
                            "send it cross-site); send a Moving AI map as text/x-movingai-map, "
                            "or a JSON map as application/json.");
        pf_req_close_after(r);
        return;
    }
    if (!r->body_kind) {
        /* curl -d / --data-binary sends a form type unless told otherwise,
         * so the answer names the header to add: text/x-movingai-map where
         * a Moving AI map is accepted, else application/json. Form types
         * stay refused: a browser may send them cross-site without asking. */
        char types[200];
        const char *hint = pf_route_body_kind(r->rr.route, "text/x-movingai-map")
                               ? "text/x-movingai-map"
                               : "application/json";
        pf_route_describe_bodies(r->rr.route, types, sizeof(types));
        if (ct)
            pf_req_answer_error(r, PF_ERR_UNSUPPORTED_MEDIA, "Content-Type",
                                "Content-Type '%.80s' is not accepted here; send %s (with curl: -H "
                                "'Content-Type: %s').",
                                ct, types, hint);
        else
            pf_req_answer_error(r, PF_ERR_UNSUPPORTED_MEDIA, "Content-Type",
                                "A Content-Type is required here; send %s (with curl: -H "
                                "'Content-Type: %s').",
                                types, hint);
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
        if (!pf_mem_try_charge(h->d.mem, PF_MEM_BODIES, cap - r->body_cap)) {
            /* Transient: bodies end. 503 with Retry-After. */
            pf_req_drop_body(r);
            pf_req_answer_error(r, PF_ERR_OVERLOADED, NULL,
                                "The server's memory budget (--max-memory) cannot take this body "
                                "now. Retry later.");
            pf_req_close_after(r);
            return;
        }
        b = realloc(r->body, cap);
        if (!b) {
            pf_mem_uncharge(h->d.mem, PF_MEM_BODIES, cap - r->body_cap);
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
    listener *l = cls;
    pf_http *h = l->h;
    pf_req *r = *con_cls;

    if (!r) { /* on_request_line found no memory */
        r = pf__req_create(&h->env, c, pf_clock_now_ns());
        if (!r) return MHD_NO;
        *con_cls = r;
    }
    if (!r->begun) {
        r->begun = true;
        /* In flight (counted, and waited for by a drain) once its headers
         * are in: a request line whose headers never come is not a request
         * to finish but a slow client, for the watchdog (conns.h). */
        pf_metrics_request_begin(h->d.metrics);
        begin(l, r, method, url, version);
        /* An early answer (404, 405, 413 by Content-Length, 415) goes out
         * now; libmicrohttpd then skips the body and closes. */
        if (r->answered) return send_answer(h, r);
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (r->lingering) {
            /* Answered mid-body: the rest is dropped, for a while. */
            r->discarded += *upload_data_size;
            *upload_data_size = 0;
            if (r->discarded > PF_LINGER_BYTES || pf_clock_now_ns() > r->linger_until_ns)
                return MHD_NO;
            return MHD_YES;
        }
        take_body(h, r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        /* Too large (a chunked body has no Content-Length to refuse it by):
         * answered now, not at an end that may never come. */
        if (r->answered && !answer_mid_body(r)) return MHD_NO;
        return MHD_YES;
    }
    if (r->lingering) return MHD_NO; /* the body ended after its answer: close */
    pf_conn_request_received(conn_of(c));
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
    if (r->answered) return send_answer(h, r);
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    listener *l = cls;
    pf_http *h = l->h;
    pf_req *r = *con_cls;
    (void)toe;
    pf_conn_request_done(conn_of(c)); /* waiting for its next request line */
    if (!r) return;
    if (r->begun)
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
    h->api = (listener){h, false, NULL, MHD_INVALID_SOCKET, 0};
    h->health = (listener){h, true, NULL, MHD_INVALID_SOCKET, 0};
    h->env.pool = d->pool;
    h->env.queue_limit = d->cfg->queue_limit;
    h->env.write_wait_ms = d->cfg->max_deadline_ms;
    h->env.retry_after_s = d->cfg->retry_after_s;
    h->env.mem = d->mem;
    h->conns = d->conns;
    h->env.metrics = d->metrics;
    h->env.instance = d->instance;
    atomic_init(&h->draining, false);
    *out = h;
    return PF_OK;
}

/* Reads a PEM file whole (NUL-terminated, as libmicrohttpd wants it). */
static char *read_pem(const char *flag, const char *path, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    long n;
    if (!f) {
        snprintf(err, errlen, "%s %s: %s", flag, path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || n > PF_TLS_FILE_MAX ||
        fseek(f, 0, SEEK_SET) != 0 || !(b = malloc((size_t)n + 1)) ||
        fread(b, 1, (size_t)n, f) != (size_t)n) {
        snprintf(err, errlen, "%s %s: cannot read it (at most %d bytes)", flag, path,
                 PF_TLS_FILE_MAX);
        free(b);
        fclose(f);
        return NULL;
    }
    fclose(f);
    b[n] = '\0';
    *len = (size_t)n;
    return b;
}

/* TLS 1.2 and 1.3 only (GnuTLS priority string), whatever the system's
 * defaults allow. */
#define PF_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* Starts l's daemon on bind:port; with TLS (the API's listener, --tls-cert)
 * when tls is not NULL. */
static pf_status start_listener(listener *l, const struct sockaddr_in *bind_sa, int64_t port,
                                struct MHD_OptionItem *tls, char *err, size_t errlen) {
    const pf_config *cfg = l->h->d.cfg;
    struct sockaddr_in sa = *bind_sa;
    const union MHD_DaemonInfo *info;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG | (l->health ? 0 : MHD_ALLOW_UPGRADE) |
                     (tls ? MHD_USE_TLS : 0);
    struct MHD_OptionItem none[1] = {{MHD_OPTION_END, 0, NULL}};
    sa.sin_port = htons((uint16_t)port);
    l->daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, on_request, l, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE,
        l->health ? 1u : (unsigned)cfg->io_threads, MHD_OPTION_CONNECTION_LIMIT,
        l->health ? PF_HEALTH_CONNECTIONS : (unsigned)cfg->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, l->health ? 0u : (unsigned)cfg->max_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->conn_timeout_s, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, l, MHD_OPTION_NOTIFY_CONNECTION, on_connection, l,
        MHD_OPTION_URI_LOG_CALLBACK, on_request_line, l, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
        MHD_OPTION_ARRAY, tls ? tls : none, MHD_OPTION_END);
    if (!l->daemon) {
        if (tls)
            snprintf(err, errlen,
                     "cannot listen on %s:%lld with TLS (address in use or not available, or "
                     "--tls-cert / --tls-key not a matching PEM certificate and key: see the "
                     "message above)",
                     cfg->bind, (long long)port);
        else
            snprintf(err, errlen, "cannot listen on %s:%lld%s (address in use or not available)",
                     cfg->bind, (long long)port, l->health ? " (--health-port)" : "");
        return PF_EINVAL;
    }
    info = MHD_get_daemon_info(l->daemon, MHD_DAEMON_INFO_BIND_PORT);
    l->port = info ? info->port : (uint16_t)port;
    return PF_OK;
}

pf_status pf_http_start(pf_http *h, char *err, size_t errlen) {
    const pf_config *cfg = h->d.cfg;
    struct sockaddr_in sa;
    struct MHD_OptionItem tls[4] = {{MHD_OPTION_END, 0, NULL}};
    size_t len;
    pf_status st;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    if (inet_pton(AF_INET, cfg->bind, &sa.sin_addr) != 1) {
        snprintf(err, errlen, "--bind '%s' is not an IPv4 address", cfg->bind);
        return PF_EINVAL;
    }
    if (cfg->tls_cert[0]) {
        /* libmicrohttpd's GnuTLS support (Debian builds it in). */
        if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
            snprintf(err, errlen, "--tls-cert: this libmicrohttpd was built without TLS");
            return PF_EINVAL;
        }
        if (!(h->tls_cert = read_pem("--tls-cert", cfg->tls_cert, &len, err, errlen)) ||
            !(h->tls_key = read_pem("--tls-key", cfg->tls_key, &h->tls_key_len, err, errlen)))
            return PF_EINVAL;
        tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, h->tls_cert};
        tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, h->tls_key};
        tls[2] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, PF_TLS_PRIORITIES};
    }
    /* The probes' listener speaks plain HTTP (a kubelet's httpGet probe). */
    if ((st = start_listener(&h->api, &sa, cfg->port, cfg->tls_cert[0] ? tls : NULL, err, errlen)))
        return st;
    if (cfg->health_port >= 0 &&
        (st = start_listener(&h->health, &sa, cfg->health_port, NULL, err, errlen))) {
        pf_http_stop(h);
        return st;
    }
    return PF_OK;
}

uint16_t pf_http_port(const pf_http *h) { return h->api.port; }

uint16_t pf_http_health_port(const pf_http *h) { return h->health.daemon ? h->health.port : 0; }

static void quiesce_listener(listener *l, int64_t threads) {
    if (!l->daemon) return;
    /* libmicrohttpd 0.9.75's MHD_quiesce_daemon races the threads of a
     * pool: it takes the listening socket out of each worker's epoll set
     * while the worker may be taking it out itself (having seen the quiesce
     * flag, or at its connection limit), and aborts on the ENOENT
     * (daemon.c:5531 "Failed to remove listen FD from epoll set", seen in
     * make test with clients closing during a drain). A listener with a
     * pool of I/O threads is therefore not quiesced: it keeps accepting
     * until pf_http_stop, and every new request is answered 503
     * shutting_down with its connection closed (begin). With one thread
     * the library tolerates the race. */
    if (threads > 1) return;
    /* libmicrohttpd's threads may still hold the quiesced listening socket
     * (MHD_quiesce_daemon: close it only after MHD_stop_daemon; TSan saw
     * close race with their epoll_ctl): shut it down now, so the kernel
     * refuses new connections, and close it in pf_http_stop. */
    l->quiesced = MHD_quiesce_daemon(l->daemon);
    if (l->quiesced != MHD_INVALID_SOCKET) shutdown(l->quiesced, SHUT_RDWR);
}

void pf_http_quiesce(pf_http *h) {
    atomic_store(&h->draining, true);
    quiesce_listener(&h->api, h->d.cfg->io_threads);
    quiesce_listener(&h->health, 1);
}

uint64_t pf_http_in_flight(const pf_http *h) { return pf_metrics_in_flight(h->d.metrics); }

static void stop_listener(listener *l) {
    if (!l->daemon) return;
    MHD_stop_daemon(l->daemon);
    l->daemon = NULL;
    if (l->quiesced != MHD_INVALID_SOCKET) close(l->quiesced);
    l->quiesced = MHD_INVALID_SOCKET;
}

void pf_http_stop(pf_http *h) {
    stop_listener(&h->api);
    stop_listener(&h->health);
}

void pf_http_destroy(pf_http *h) {
    if (!h) return;
    pf_http_stop(h);
    free(h->tls_cert);
    if (h->tls_key) memset(h->tls_key, 0, h->tls_key_len);
    free(h->tls_key);
    free(h);
}

bool pf_http_is_tls(const pf_http *h) { return h->tls_cert != NULL; }
