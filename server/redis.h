/* redis.h -- the connections to the shared map store (--store
 * redis://...), over hiredis's blocking API, every call bounded by a
 * deadline.
 *
 * A pf_redis is a small pool of connections shared by the worker threads:
 * pf_redis_get lends one (an idle one, else a new one: connect, AUTH,
 * SELECT, then the pool's connect hook), pf_redis_put takes it back. A
 * connection that saw an I/O error or a timeout is closed on its return, so
 * the next call reconnects; Redis going away and coming back needs no
 * restart.
 *
 * Deadlines. Every function that waits takes an absolute deadline on
 * pf_clock_now_ns's clock: the wait for a free connection, the connect and
 * each command's socket timeout are cut to the time left, so one caller's
 * several round trips (a change, its catch-up, its replica wait) together
 * never wait past the deadline. A command with no time left is not sent.
 *
 * Stalls. Once a call fails on I/O (a timeout, a reset, a refused
 * connect), pf_redis_get fails at once (store_unavailable, nothing sent)
 * until Redis is seen answering again: a connection given back whole, or
 * pf_redis_answered (the follower's, which keeps talking to Redis on a
 * connection of its own). So while Redis stalls, changes queued behind
 * the ones waiting on it are answered at once instead of each waiting out
 * the timeout in turn. Only a call made after the stall began ends it:
 * a connection lent before, or a follower's answer read late (its thread
 * held back by the scheduler), may carry an answer Redis gave before it
 * stalled. pf_redis_mark, taken before a call, says which.
 *
 * Errors come back as a pf_proto_error ready to answer with:
 *   store_unavailable (503, Retry-After): Redis cannot be reached, did not
 *     answer in time, or answers that it cannot serve now (LOADING, BUSY,
 *     OOM, MASTERDOWN, READONLY, a refused AUTH: the operator's to fix);
 *   storage_failed (500): any other error reply (a bug of ours, a key of
 *     the wrong type).
 * Its status is PF_EIO for both, PF_ENOMEM when hiredis ran out of memory.
 * Whether a command that failed had left whole (so Redis may have run it)
 * is pf_redis_sent's: a caller that changes data answers an I/O error
 * after that as "outcome unknown".
 *
 * Only worker threads and the store's follower thread call Redis: never
 * the libmicrohttpd I/O threads (routes hand map changes to the pool).
 *
 * Thread-safe: get and put from any thread; one connection is used by one
 * thread at a time (the one it was lent to).
 */
#ifndef PF_SERVER_REDIS_H
#define PF_SERVER_REDIS_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "status.h"

/* redis://[:PASSWORD@]HOST[:PORT][/DB]; PORT defaults to 6379, DB to 0. */
typedef struct pf_redis_url {
    char host[256];
    int port;
    int db;
    char password[256]; /* "" = no AUTH */
} pf_redis_url;

/* PF_EINVAL with a sentence in err when url does not have that form
 * (HOST empty, PORT not in 1..65535, DB not in 0..1000000). */
pf_status pf_redis_url_parse(const char *url, pf_redis_url *out, char *err, size_t errlen);
/* The URL with the password replaced by "***" (for logs and /v1/info). */
void pf_redis_url_print(const pf_redis_url *u, char *buf, size_t n);

typedef struct pf_redis pf_redis;

/* A Lua script, sent as EVALSHA (EVAL once Redis says NOSCRIPT, after a
 * restart or SCRIPT FLUSH). Initialise with pf_redis_script_init. */
typedef struct pf_redis_script {
    const char *src;
    char sha1[41];
} pf_redis_script;

void pf_redis_script_init(pf_redis_script *s, const char *src);

/* A pool of at most max_conns connections to u. Connects nothing yet.
 * NULL on ENOMEM. */
pf_redis *pf_redis_create(const pf_redis_url *u, int max_conns);
/* Closes every idle connection (call once none is lent). NULL is a no-op. */
void pf_redis_destroy(pf_redis *r);
const pf_redis_url *pf_redis_get_url(const pf_redis *r);

/* Runs on every new connection of the pool, after AUTH and SELECT, before
 * it is lent: false (with e set) closes it and fails the pf_redis_get that
 * made it. Set once, before the pool is used. */
typedef bool (*pf_redis_hook)(void *ud, redisContext *c, uint64_t deadline_ns, pf_proto_error *e);
void pf_redis_set_connect_hook(pf_redis *r, pf_redis_hook fn, void *ud);

/* One connection, lent to the caller until pf_redis_put. NULL with e set
 * (store_unavailable) when none can be had before deadline_ns. */
redisContext *pf_redis_get(pf_redis *r, uint64_t deadline_ns, pf_proto_error *e);
/* Returns c to the pool; a connection in error (c->err) is closed and
 * starts a stall, one without ends it. */
void pf_redis_put(pf_redis *r, redisContext *c);
/* The stall mark to take before a call made outside the pool; then
 * pf_redis_answered with it when Redis answered that call: a stall begun
 * before the mark was taken ends (one begun after it does not). */
uint64_t pf_redis_mark(pf_redis *r);
void pf_redis_answered(pf_redis *r, uint64_t mark);

/* A new connection of the pool's URL that belongs to the caller alone
 * (the follower's), connected before deadline_ns (no hook); free with
 * redisFree. NULL with e set. */
redisContext *pf_redis_connect(const pf_redis *r, uint64_t deadline_ns, pf_proto_error *e);

/* Runs one command (binary-safe arguments), waiting for its reply until
 * deadline_ns. Returns the reply (free it with freeReplyObject), or NULL
 * with e set: an I/O error or timeout (c is then in error: give it back
 * with pf_redis_put, which closes it), or an error reply. */
redisReply *pf_redis_call(redisContext *c, uint64_t deadline_ns, int argc, const char *const *argv,
                          const size_t *lens, pf_proto_error *e);
/* Runs script s with nkeys keys followed by its other arguments in
 * argv[0..argc), as pf_redis_call. */
redisReply *pf_redis_eval(redisContext *c, uint64_t deadline_ns, pf_redis_script *s, int nkeys,
                          int argc, const char *const *argv, const size_t *lens, pf_proto_error *e);
/* After a call on c that returned NULL: whether its command had been
 * written whole to the socket, so Redis may have run it (false: it was
 * never sent, or only part of it, which Redis does not run; also false
 * after an error reply, which says Redis did not run it). */
bool pf_redis_sent(const redisContext *c);

#endif
