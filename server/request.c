/* request.c -- see request.h. */
#include "request_internal.h"

#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"

/* The answer when even the answer could not be allocated. */
static const char oom_body[] =
    "{\"error\":{\"code\":\"out_of_memory\",\"message\":\"Out of memory.\"}}";

/* FNV-1a of the client's address (not its port): the pool's fair share
 * key, so one address's requests share one share. */
static uint64_t client_key(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS) : NULL;
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    const uint8_t *b = NULL;
    size_t n = 0;
    uint64_t h = 1469598103934665603ULL;
    if (sa && sa->sa_family == AF_INET) {
        b = (const uint8_t *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
        n = 4;
    } else if (sa && sa->sa_family == AF_INET6) {
        b = (const uint8_t *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        n = 16;
    }
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

pf_req *pf__req_create(const pf_req_env *env, struct MHD_Connection *conn, uint64_t now_ns) {
    pf_req *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->env = env;
    r->conn = conn;
    r->t0_ns = now_ns;
    r->job.client = client_key(conn);
    return r;
}

bool pf__req_resp_is_static(const pf_req *r) { return r->resp == oom_body; }

void pf__req_destroy(pf_req *r) {
    if (!r) return;
    if (r->state_free) r->state_free(r->state);
    pf_mem_uncharge(r->env->mem, PF_MEM_BODIES, r->body_cap);
    free(r->raw_target);
    free(r->query_buf);
    free(r->query_kv);
    free(r->body);
    if (r->resp != oom_body) free(r->resp);
    free(r);
}

/* What came */

pf_route pf_req_route(const pf_req *r) { return r->rr.route; }

const char *pf_req_map_id(const pf_req *r) { return r->rr.map_id; }

const char *pf_req_session_id(const pf_req *r) { return r->rr.session_id; }
const char *pf_req_crowd_id(const pf_req *r) { return r->rr.crowd_id; }

uint64_t pf_req_arrival_ns(const pf_req *r) { return r->t0_ns; }

pf_scope pf_req_scope(const pf_req *r) { return r->scope; }

const pf_auth_id *pf_req_principal(const pf_req *r) { return &r->who; }

const char *pf_req_header(const pf_req *r, const char *name) {
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

bool pf_req_header_has(const pf_req *r, const char *name, const char *token) {
    const char *v = pf_req_header(r, name);
    size_t n = strlen(token);
    while (v && *v) {
        while (*v == ' ' || *v == '\t' || *v == ',') v++;
        if (strncasecmp(v, token, n) == 0 && (v[n] == '\0' || v[n] == ',' || v[n] == ' '))
            return true;
        v = strchr(v, ',');
    }
    return false;
}

/* The query string: the part of the raw target after its first '?'. */
static const char *query_of(const char *target) {
    const char *q = target ? strchr(target, '?') : NULL;
    return q ? q + 1 : NULL;
}

size_t pf__req_count_params(const char *target) {
    const char *q = query_of(target);
    size_t n = 0;
    while (q && *q) {
        const char *amp = strchr(q, '&');
        n++;
        q = amp ? amp + 1 : NULL;
    }
    return n;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes s in place as a form value: '+' is a space, %HH a byte (a '%'
 * without two hex digits stays as it is), as libmicrohttpd decodes
 * arguments. */
static void unescape(char *s) {
    char *w = s;
    for (const char *p = s; *p; p++) {
        int hi, lo;
        if (*p == '+') {
            *w++ = ' ';
        } else if (*p == '%' && (hi = hex_digit(p[1])) >= 0 && (lo = hex_digit(p[2])) >= 0) {
            *w++ = (char)(hi * 16 + lo);
            p += 2;
        } else {
            *w++ = *p;
        }
    }
    *w = '\0';
}

bool pf__req_parse_query(pf_req *r) {
    const char *q = query_of(r->raw_target);
    size_t i = 0;
    char *p;
    if (!q || !r->nparams) return true;
    r->query_buf = strdup(q);
    r->query_kv = calloc(r->nparams, sizeof(*r->query_kv));
    if (!r->query_buf || !r->query_kv) {
        free(r->query_buf);
        free(r->query_kv);
        r->query_buf = NULL;
        r->query_kv = NULL;
        return false;
    }
    p = r->query_buf;
    while (p && *p && i < r->nparams) {
        char *amp = strchr(p, '&'), *eq;
        if (amp) *amp = '\0';
        eq = strchr(p, '=');
        if (eq) *eq = '\0';
        unescape(p);
        if (eq) unescape(eq + 1);
        r->query_kv[i].key = p;
        r->query_kv[i].value = eq ? eq + 1 : NULL;
        i++;
        p = amp ? amp + 1 : NULL;
    }
    r->nparams = i;
    return true;
}

bool pf_req_query(const pf_req *r, pf_kv *kv, size_t cap, size_t *n) {
    *n = r->nparams < cap ? r->nparams : cap;
    if (*n) memcpy(kv, r->query_kv, *n * sizeof(*kv)); /* no parameters: query_kv is NULL */
    return r->nparams <= cap;
}

const char *pf_req_body(const pf_req *r, size_t *len) {
    *len = r->body_len;
    return r->body;
}

pf_body_kind pf_req_body_kind(const pf_req *r) { return r->body_kind; }

void pf_req_drop_body(pf_req *r) {
    pf_mem_uncharge(r->env->mem, PF_MEM_BODIES, r->body_cap);
    free(r->body);
    r->body = NULL;
    r->body_len = r->body_cap = 0;
}

void pf_req_set_state(pf_req *r, void *state, void (*free_fn)(void *)) {
    if (r->state_free) r->state_free(r->state);
    r->state = state;
    r->state_free = free_fn;
}

void *pf_req_state(const pf_req *r) { return r->state; }

/* Answers */

static void set_answer(pf_req *r, int status, const char *type, pf_jsonw *w) {
    size_t len = 0;
    char *buf = w ? pf_jsonw_take(w, &len) : NULL;
    if (r->resp != oom_body) free(r->resp);
    r->resp = buf;
    r->resp_len = len;
    r->resp_type = type;
    r->status = status;
    r->answered = true;
    r->upgrade = false;
    if (w && !buf) { /* the body could not be built */
        r->resp = (char *)oom_body;
        r->resp_len = sizeof(oom_body) - 1;
        r->resp_type = "application/json";
        r->status = pf_error_http_status(PF_ERR_NO_MEMORY);
        pf_req_add_retry_after(r);
    }
}

void pf_req_answer_json(pf_req *r, pf_jsonw *w) {
    set_answer(r, MHD_HTTP_OK, "application/json", w);
}

void pf_req_answer_created(pf_req *r, pf_jsonw *w, const char *location) {
    set_answer(r, MHD_HTTP_CREATED, "application/json", w);
    if (r->status == MHD_HTTP_CREATED) pf_req_add_header(r, MHD_HTTP_HEADER_LOCATION, location);
}

void pf_req_answer_typed(pf_req *r, const char *content_type, pf_jsonw *w) {
    set_answer(r, MHD_HTTP_OK, content_type, w);
}

void pf_req_answer_no_content(pf_req *r) { set_answer(r, MHD_HTTP_NO_CONTENT, NULL, NULL); }

void pf_req_answer_error_body(pf_req *r, pf_error err, pf_jsonw *w) {
    int status = pf_error_http_status(err);
    set_answer(r, status, "application/json", w);
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE) pf_req_add_retry_after(r);
}

void pf_req_answer_error(pf_req *r, pf_error err, const char *field, const char *fmt, ...) {
    char msg[320];
    pf_jsonw w;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
    }
    pf_jsonw_init(&w, 256);
    pf_proto_write_error(&w, err, fmt ? msg : NULL, field);
    pf_req_answer_error_body(r, err, &w);
}

void pf_req_answer_perror(pf_req *r, const pf_proto_error *e) {
    pf_jsonw w;
    pf_jsonw_init(&w, 256);
    pf_proto_write_perror(&w, e);
    pf_req_answer_error_body(r, e->code, &w);
}

void pf_req_answer_upgrade(pf_req *r, const char *accept, pf_req_upgrade_fn fn, void *ud) {
    set_answer(r, MHD_HTTP_SWITCHING_PROTOCOLS, NULL, NULL);
    pf_req_add_header(r, "Sec-WebSocket-Accept", accept);
    r->upgrade = true;
    r->upgrade_fn = fn;
    r->upgrade_ud = ud;
}

pf_status pf_req_add_header(pf_req *r, const char *name, const char *value) {
    size_t nl = strlen(name) + 1, vl = strlen(value) + 1;
    if (r->nheaders == PF_REQ_HEADERS_MAX || nl + vl > sizeof(r->headers_buf) - r->headers_len)
        return PF_ELIMIT;
    r->headers[r->nheaders].name = (uint16_t)r->headers_len;
    memcpy(r->headers_buf + r->headers_len, name, nl);
    r->headers_len += nl;
    r->headers[r->nheaders].value = (uint16_t)r->headers_len;
    memcpy(r->headers_buf + r->headers_len, value, vl);
    r->headers_len += vl;
    r->nheaders++;
    return PF_OK;
}

void pf_req_add_retry_after(pf_req *r) {
    char num[24];
    for (size_t i = 0; i < r->nheaders; i++)
        if (strcasecmp(r->headers_buf + r->headers[i].name, MHD_HTTP_HEADER_RETRY_AFTER) == 0)
            return;
    snprintf(num, sizeof(num), "%lld", (long long)r->env->retry_after_s);
    pf_req_add_header(r, MHD_HTTP_HEADER_RETRY_AFTER, num);
}

void pf_req_close_after(pf_req *r) {
    for (size_t i = 0; i < r->nheaders; i++)
        if (strcasecmp(r->headers_buf + r->headers[i].name, MHD_HTTP_HEADER_CONNECTION) == 0)
            return;
    pf_req_add_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
}

/* Work on the pool */

static void suspend_conn(void *ud) { MHD_suspend_connection(ud); }

static void run_job(void *arg, pf_search_ctx *ctx) {
    pf_req *r = arg;
    pf_metrics_observe_queue_wait(r->env->metrics, r->job.kind,
                                  (pf_clock_now_ns() - r->queued_ns) / 1000);
    r->job_fn(r, ctx);
}

/* The pool's timer thread: the job's deadline passed while it waited. */
static void expire_job(void *arg) {
    pf_req *r = arg;
    pf_req_answer_error(r, PF_ERR_DEADLINE, NULL,
                        "The deadline of %llu ms passed while the request waited for a worker%s.",
                        (unsigned long long)((r->job.deadline_ns - r->t0_ns) / 1000000ull),
                        r->job.kind == PF_JOB_BUILD ? "; nothing changed" : "");
    pf_req_finish(r);
}

void pf_req_set_deadline(pf_req *r, uint64_t deadline_ns) {
    r->job.deadline_ns = deadline_ns;
    r->job.expire = deadline_ns ? expire_job : NULL;
}

bool pf_req_yield(pf_req *r) {
    if (!pf_pool_has_waiting(r->env->pool)) return false;
    r->job.kind = PF_JOB_SEARCH; /* whatever it built is built */
    pf_pool_requeue(r->env->pool, &r->job);
    return true;
}

bool pf_req_run_as_build(pf_req *r) {
    if (r->job.kind == PF_JOB_BUILD) return false;
    r->job.kind = PF_JOB_BUILD;
    pf_pool_requeue(r->env->pool, &r->job);
    return true;
}

bool pf_req_dispatch(pf_req *r, pf_job_kind kind, pf_req_job_fn fn) {
    pf_status st;
    r->job.fn = run_job;
    r->job.arg = r;
    r->job.kind = kind;
    r->job_fn = fn;
    /* A write without a deadline of its own waits at most --max-deadline-ms
     * for a worker (the write lane, pool.h); once it runs, it runs to its
     * end (builds have their own limits). */
    if (kind == PF_JOB_BUILD && !r->job.deadline_ns)
        pf_req_set_deadline(r, r->t0_ns + (uint64_t)r->env->write_wait_ms * 1000000ull);
    /* Set before the job is visible and read only by this (the I/O) thread:
     * once queued, r belongs to the worker until it resumes the connection,
     * so http.c must not read anything the worker writes. The connection is
     * suspended (suspend_conn, under the pool's lock) before any worker can
     * see the job, so its resume always finds it suspended. */
    r->queued = true;
    r->queued_ns = pf_clock_now_ns();
    st = pf_pool_submit_with(r->env->pool, &r->job, suspend_conn, r->conn);
    if (st) r->queued = false;
    if (st == PF_ELIMIT) {
        pf_req_answer_error(r, PF_ERR_OVERLOADED, NULL,
                            "The server is busy: %lld jobs are already waiting. Retry later.",
                            (long long)r->env->queue_limit);
    } else if (st) {
        pf_req_answer_error(r, PF_ERR_SHUTTING_DOWN, NULL, NULL);
        pf_req_close_after(r);
    }
    return st == PF_OK;
}

void pf_req_finish(pf_req *r) { MHD_resume_connection(r->conn); }

void pf_req_finish_again(pf_req *r) {
    r->again = true; /* the resume orders it before the I/O thread reads it */
    MHD_resume_connection(r->conn);
}

int pf_req_reruns(const pf_req *r) { return r->reruns; }
