/* request.h -- one HTTP request as a route's handler and its job see it:
 * what came (the route's captures, headers, query, body), how to answer
 * (a body, an error from the error table, extra headers), and how to hand
 * the work to the worker pool.
 *
 * Life of a request. http.c makes a pf_req when its headers arrive, routes
 * it, gathers its body, calls the route's handler (routes.h) on the
 * libmicrohttpd thread, sends the answer once it is set, and frees the
 * request (and the state a handler attached) when libmicrohttpd is done
 * with the connection's request.
 *
 * Threads and ownership. A handler runs on an I/O thread and ends having
 * either answered (a pf_req_answer_* call) or queued a job
 * (pf_req_dispatch). Once a job is queued, r belongs to it: only the worker
 * running it touches r, and its last act is pf_req_finish(r), after which
 * it must not touch r or its state again. Nothing here is thread-safe
 * beyond that hand-over.
 *
 * Answers. Each pf_req_answer_* call replaces any answer set before it;
 * headers added with pf_req_add_header stay. Out of memory while building
 * a body turns the answer into 503 out_of_memory. Error answers take their
 * HTTP status from the error table (errors.h); 503 ones carry Retry-After.
 */
#ifndef PF_SERVER_REQUEST_H
#define PF_SERVER_REQUEST_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "errors.h"
#include "jsonw.h"
#include "path_json.h"
#include "pool.h"
#include "router.h"

typedef struct pf_req pf_req;

/* A job: runs on a worker with that worker's search context (NULL when the
 * worker could not allocate one). It must end with pf_req_finish(r). */
typedef void (*pf_req_job_fn)(pf_req *r, pf_search_ctx *ctx);

/* Called once libmicrohttpd has sent the 101 of a WebSocket upgrade: the
 * socket is the callee's from then on (see libmicrohttpd's
 * MHD_UpgradeHandler); extra[0..n) are bytes read past the handshake. */
typedef void (*pf_req_upgrade_fn)(void *ud, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                                  const char *extra, size_t n);

/* What came. Strings are borrowed from r. */

pf_route pf_req_route(const pf_req *r);
/* The path's {id} ("" when the route has none), {sid} and {cid}. */
const char *pf_req_map_id(const pf_req *r);
const char *pf_req_session_id(const pf_req *r);
const char *pf_req_crowd_id(const pf_req *r);
/* When the request's headers arrived (clock.h's monotonic ns). */
uint64_t pf_req_arrival_ns(const pf_req *r);
/* Who sent it: the scope of its bearer token (PF_SCOPE_OPEN on a server
 * without tokens, or on an open route called without one) and the
 * token's name (all zero then). http.c checked the route's scope before
 * the handler ran; handlers use these for what a scope alone cannot say
 * (a read token reaches only the sessions it created). */
pf_scope pf_req_scope(const pf_req *r);
const pf_auth_id *pf_req_principal(const pf_req *r);
/* A request header's value, or NULL. I/O thread only (handlers). */
const char *pf_req_header(const pf_req *r, const char *name);
/* Whether header `name` lists `token` (comma separated, any case). */
bool pf_req_header_has(const pf_req *r, const char *name, const char *token);
/* The query string's arguments into kv[0..cap), borrowed from r; *n gets
 * how many. false when there are more than cap. I/O thread only. */
bool pf_req_query(const pf_req *r, pf_kv *kv, size_t cap, size_t *n);
/* The body (NULL, 0 for none) and how it was declared: PF_BODY_ABSENT
 * without a Content-Type, else the accepted kind. */
const char *pf_req_body(const pf_req *r, size_t *len);
pf_body_kind pf_req_body_kind(const pf_req *r);
/* Frees the body early (a map upload's largest allocation, once parsed). */
void pf_req_drop_body(pf_req *r);

/* Route state: what a handler and its job keep for one request. r takes
 * state and calls free_fn(state) when the request ends (free_fn may be
 * NULL). One state per request; setting another frees the previous one. */
void pf_req_set_state(pf_req *r, void *state, void (*free_fn)(void *));
void *pf_req_state(const pf_req *r);

/* Answers. */

/* 200 with w's JSON (takes w's buffer). */
void pf_req_answer_json(pf_req *r, pf_jsonw *w);
/* 201 with w's JSON and Location: location. */
void pf_req_answer_created(pf_req *r, pf_jsonw *w, const char *location);
/* 200 with w's bytes as content_type (a static string: "text/html"). */
void pf_req_answer_typed(pf_req *r, const char *content_type, pf_jsonw *w);
/* 204 without a body. */
void pf_req_answer_no_content(pf_req *r);
/* err's status and error body; fmt NULL uses err's default sentence, field
 * may be NULL. */
void pf_req_answer_error(pf_req *r, pf_error err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The error a parser reported. */
void pf_req_answer_perror(pf_req *r, const pf_proto_error *e);
/* err's status with an error body already written into w
 * (pf_proto_write_error). */
void pf_req_answer_error_body(pf_req *r, pf_error err, pf_jsonw *w);
/* 101 Switching Protocols for a WebSocket handshake whose
 * Sec-WebSocket-Accept is `accept` (PF_WS_ACCEPT_LEN characters, copied);
 * fn(ud, ...) then takes the socket. ud must live until the request ends
 * (route state does). */
void pf_req_answer_upgrade(pf_req *r, const char *accept, pf_req_upgrade_fn fn, void *ud);

/* Response headers: every answer (errors included) carries the headers
 * added, in order. name and value are copied. Room for
 * PF_REQ_HEADERS_MAX headers of PF_REQ_HEADER_BYTES in all; PF_ELIMIT past
 * it (the header is not added). This is the one way to add a header:
 * Location, Allow, Retry-After, ETag, CORS or WWW-Authenticate alike. */
#define PF_REQ_HEADERS_MAX 8
#define PF_REQ_HEADER_BYTES 768
pf_status pf_req_add_header(pf_req *r, const char *name, const char *value);
/* Retry-After with the configured seconds (--retry-after). */
void pf_req_add_retry_after(pf_req *r);
/* Connection: close after this answer. */
void pf_req_close_after(pf_req *r);

/* Work on the pool. */

/* A deadline for the job pf_req_dispatch queues next (clock.h's ns, from
 * the request's arrival): if the job still waits for a worker then, it is
 * taken off the queue and r is answered 504 deadline_exceeded at that
 * moment, without running (the route state is freed with r as usual). 0:
 * none (the default; map builds wait). The job itself sees the same
 * deadline through its state. */
void pf_req_set_deadline(pf_req *r, uint64_t deadline_ns);

/* Suspends r's connection and queues fn on the pool as a job of `kind`.
 * Searches share the workers fairly between client addresses (pool.h).
 * Returns true when it is queued: r belongs to the job from then on and
 * the handler must not touch it. false when the pool refused it (queue
 * full: 503 overloaded; shutting down: 503 shutting_down): r is answered,
 * the handler may still release what it holds. */
bool pf_req_dispatch(pf_req *r, pf_job_kind kind, pf_req_job_fn fn);
/* A job's last act once its answer is set: resumes the connection, which
 * sends the answer. */
void pf_req_finish(pf_req *r);
/* A job's last act instead of pf_req_finish, without an answer: the
 * route's handler runs again on the I/O thread (the map it needs is held
 * now: routes_load.c). pf_req_reruns counts how often that happened. */
void pf_req_finish_again(pf_req *r);
int pf_req_reruns(const pf_req *r);

/* From a search job between slices of long work (a batch between two
 * queries): when another search waits for a worker, queues r's job again
 * behind its client's share and returns true; the job must then return at
 * once, without pf_req_finish, and its fn runs again later on some worker
 * with r and its state as they were (the deadline still applies). false:
 * nothing waits, carry on. */
bool pf_req_yield(pf_req *r);

/* From a search job about to build something a query needs on first use
 * (an agent size's grid and hierarchy: work as long as a map build): moves
 * the job to the build queue, whose own limit keeps such builds from
 * holding every worker (pool.h), and returns true; the job must then
 * return at once, without pf_req_finish, and its fn runs again later as a
 * build (the deadline still applies). false when it runs as a build
 * already: carry on and build. A build job that yields (pf_req_yield)
 * goes back as a search. */
bool pf_req_run_as_build(pf_req *r);

#endif
