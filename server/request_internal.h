/* request_internal.h -- the request struct, shared by request.c (what
 * handlers call) and http.c (which makes, routes, fills and sends
 * requests). No other file includes it: handlers see pf_req through
 * request.h only. */
#ifndef PF_SERVER_REQUEST_INTERNAL_H
#define PF_SERVER_REQUEST_INTERNAL_H

#include <stdatomic.h>

#include "memory.h"
#include "metrics.h"
#include "request.h"

/* What every request of one server shares; owned by http.c. */
typedef struct pf_req_env {
    pf_pool *pool;
    int64_t queue_limit;             /* for the 503 message */
    int64_t write_wait_ms;           /* a write's deadline for its wait in the queue */
    int64_t retry_after_s;           /* Retry-After of 503 answers */
    _Atomic(const char *) *instance; /* X-Pathd-Instance of every answer */
    pf_mem *mem;                     /* the process budget bodies are charged to */
    pf_metrics *metrics;             /* queue waits */
} pf_req_env;

typedef struct pf_req_header_ref {
    uint16_t name, value; /* offsets into headers_buf */
} pf_req_header_ref;

struct pf_req {
    const pf_req_env *env;
    struct MHD_Connection *conn;
    pf_route_result rr; /* the route and its captures */
    uint64_t t0_ns;     /* arrival */

    /* The request line before libmicrohttpd decoded it (http.c's URI
     * callback): a copy, and where it was in libmicrohttpd's buffer with
     * the length strlen saw there, to tell a NUL in the target. */
    char *raw_target;
    uintptr_t raw_at;
    size_t raw_len;
    /* The query string's parameters: pathd splits and decodes them itself,
     * from raw_target (see http.c's on_request_line). How many there are,
     * and the decoded copy query_kv[0..nparams) points into. */
    size_t nparams;
    char *query_buf;
    pf_kv *query_kv;
    bool begun; /* the checks before the handler ran */
    /* The bearer token, once checked: its scope (OPEN: none was needed or
     * none was sent) and its name. */
    pf_scope scope;
    pf_auth_id who;

    /* The body (http.c gathers it). */
    char *body;
    size_t body_len, body_cap; /* body_cap is charged to env->mem (PF_MEM_BODIES) */
    pf_body_kind body_kind;
    size_t discarded; /* body bytes dropped after an answer written mid-body */
    bool lingering;   /* answered mid-body (http.c's answer_mid_body): dropping the rest */
    uint64_t linger_until_ns;

    /* The answer, once set. */
    bool answered;
    bool sent;
    int status;
    char *resp; /* malloc'd; handed to libmicrohttpd */
    size_t resp_len;
    const char *resp_type;
    pf_req_header_ref headers[PF_REQ_HEADERS_MAX];
    size_t nheaders, headers_len;
    char headers_buf[PF_REQ_HEADER_BYTES];
    bool upgrade; /* 101: hand the socket to upgrade_fn */
    pf_req_upgrade_fn upgrade_fn;
    void *upgrade_ud;

    /* Work on the pool. */
    bool queued;     /* a job was queued; written and read by the I/O thread only */
    pf_pool_job job; /* job.client: the client address's hash; job.deadline_ns */
    pf_req_job_fn job_fn;
    uint64_t queued_ns; /* when the job was submitted */
    bool again;         /* pf_req_finish_again: run the handler again (read after the resume) */
    int reruns;

    /* The route's state. */
    void *state;
    void (*state_free)(void *);
};

/* A request of conn arrived at now_ns. NULL on ENOMEM. */
pf_req *pf__req_create(const pf_req_env *env, struct MHD_Connection *conn, uint64_t now_ns);
/* The parameters of target's query string, counted as they are split
 * (pf_req_query): the pieces between '&' after the first '?', an empty
 * last piece not counted. */
size_t pf__req_count_params(const char *target);
/* Splits and decodes r->raw_target's query string into
 * r->query_kv[0..r->nparams) (r->nparams counted by
 * pf__req_count_params): each piece is key[=value], '+' a space and %HH a
 * byte as libmicrohttpd decodes arguments; a piece without '=' has a NULL
 * value. false on ENOMEM. */
bool pf__req_parse_query(pf_req *r);
/* Whether r->resp is the static out-of-memory body (not to be freed). */
bool pf__req_resp_is_static(const pf_req *r);
/* Frees r, its body, its unsent answer and its state. NULL is a no-op. */
void pf__req_destroy(pf_req *r);

#endif
