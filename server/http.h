/* http.h -- internals shared by http.c (libmicrohttpd glue) and handlers.c
 * (the routes). Not part of any other module's contract. */
#ifndef PF_SERVER_HTTP_H
#define PF_SERVER_HTTP_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "errors.h"
#include "jsonw.h"
#include "metrics.h"
#include "path_json.h"
#include "pool.h"
#include "registry.h"
#include "router.h"
#include "server.h"
#include "session.h"
#include "session_json.h"
#include "store.h"
#include "stream.h"
#include "ws.h"

#define PF_SERVER_VERSION "0.1.0"

struct pf_server {
    pf_config cfg;
    struct MHD_Daemon *daemon;
    MHD_socket quiesced; /* the listening socket after a drain, closed at destroy */
    pf_pool *pool;
    pf_registry *registry;
    pf_sessions *sessions;
    pf_hub *hub;         /* WebSocket streams and the session reaper */
    pf_store *store;     /* --data-dir, or NULL */
    uv_mutex_t store_mu; /* with a store: one map change (disk + registry) at a time */
    pf_metrics metrics;
    pf_grid_limits limits;
    uint16_t port;
    uint64_t started_ns;
    atomic_uint_fast64_t in_flight;
    atomic_uint_fast64_t cache_hits, cache_misses;
    atomic_bool draining;
};

typedef enum pf_body_kind {
    PF_BODY_NONE = 0,
    PF_BODY_JSON,
    PF_BODY_TEXT,
    PF_BODY_NDJSON /* application/x-ndjson: session updates, one a line */
} pf_body_kind;

/* One HTTP request, from its headers to its answer. Owned by the connection
 * (MHD's con_cls) and freed when libmicrohttpd reports it completed. While
 * the connection is suspended, only the worker running its job touches it;
 * the worker's last act is to resume the connection. */
typedef struct pf_req {
    pf_server *srv;
    struct MHD_Connection *conn;
    pf_route route;
    char map_id[PF_MAP_ID_MAX + 1];
    char session_id[PF_SESSION_ID_MAX + 1];
    uint64_t t0_ns;       /* arrival */
    uint64_t deadline_ns; /* arrival + deadline (path routes) */

    char *body;
    size_t body_len, body_cap;
    pf_body_kind body_kind;
    size_t discarded; /* body bytes dropped after an early answer */

    /* The answer, once decided. */
    bool answered;
    bool sent;
    int code;
    char *resp; /* malloc'd; handed to libmicrohttpd */
    size_t resp_len;
    const char *resp_type;
    const char *allow; /* 405 */
    bool retry_after;  /* 503 */
    bool close;        /* Connection: close */
    char location[160];
    bool upgrade; /* 101: hand the socket to the stream hub */
    char ws_accept[PF_WS_ACCEPT_LEN + 1];

    /* Work on the pool. */
    bool queued; /* a job was queued; written and read by the I/O thread only */
    pf_pool_job job;
    pf_mapver *mv; /* a reference, released when the request ends */
    pf_path_request *queries;
    size_t nqueries;
    bool batch;
    pf_session *session;    /* held (busy) while its job runs */
    bool session_created;   /* 201 for POST .../sessions */
    pf_update_list updates; /* POST .../updates */
    pf_update patch;        /* PATCH /v1/maps/{id} */
} pf_req;

uint64_t pf__now_ns(void);

/* Sets the answer; takes w's buffer. */
void pf__answer_json(pf_req *r, int code, pf_jsonw *w);
/* An error body. field may be NULL. */
void pf__answer_error(pf_req *r, int code, const char *errcode, const char *field, const char *fmt,
                      ...) __attribute__((format(printf, 5, 6)));
/* An error from a parser; the code comes from pf_http_status(e->status). */
void pf__answer_perror(pf_req *r, const pf_proto_error *e);

/* Handles a request whose body is complete (handlers.c): answers it, or
 * queues its job and suspends the connection. */
void pf__handle(pf_req *r);

/* Suspends r's connection and queues fn on the pool; answers 503 at once
 * when the queue is full. Returns whether the job was queued: then r
 * belongs to the job and the caller must not touch it any more. */
bool pf__dispatch(pf_req *r, pf_job_kind kind, pf_pool_fn fn);
/* Called by a job when its answer is set: resumes the connection. The job
 * must not touch r afterwards. */
void pf__finish(pf_req *r);

/* Runs on a worker for a held session (handlers.c): brings it to the map's
 * current version, validates and applies l (NULL: a read), plans, and
 * writes the answer (or the error body) into w. Returns the HTTP status: 200
 * (201 when created), 4xx for a rejected update (the session is unchanged),
 * 404 when the map is gone (the session is removed), 503 out of memory.
 * Shared by HTTP requests and WebSocket streams. */
int pf__session_run(pf_server *s, pf_session *sess, const pf_update_list *l, bool created,
                    pf_jsonw *w);

#endif
