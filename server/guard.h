/* guard.h -- what a request must show before its route runs, from the
 * settings of config.h: a Host this server answers for (DNS rebinding), a
 * bearer token whose scope covers the route (auth.h), and for a page on
 * another origin, an Origin --cors-origin names (CORS headers).
 *
 * Host. With --allowed-hosts, the Host header's name (its port aside,
 * compared without case) must be one of the list; ".example.com" also takes
 * every subdomain. Without the list: a server without tokens (loopback
 * only, see config.h) answers only loopback names (localhost and
 * *.localhost, 127.0.0.0/8, [::1]), so a public name that a rebinding
 * attacker points at 127.0.0.1 is refused; a server with tokens, or one
 * started with --insecure-no-auth, answers any Host. A request without Host
 * (HTTP/1.0) passes.
 *
 * Scopes. A route needs the scope of its row in routes.h; /metrics and
 * /v1/info need none with --open-metrics; without a token file nothing
 * needs one.
 *
 * Thread-safe: everything but the token table is fixed at creation, and
 * the table is auth.h's (checks and reloads may overlap).
 */
#ifndef PF_SERVER_GUARD_H
#define PF_SERVER_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "auth.h"
#include "config.h"
#include "routes.h"
#include "status.h"

/* Origins and hosts kept from the lists. */
#define PF_GUARD_LIST_MAX 32

typedef struct pf_guard pf_guard;

/* Reads cfg's lists and opens its token file (PF_EINVAL or PF_EPARSE with a
 * sentence in err when it cannot be used). cfg was checked by
 * pf_config_check. */
pf_status pf_guard_create(const pf_config *cfg, pf_guard **out, char *err, size_t errlen);
/* NULL is a no-op. */
void pf_guard_destroy(pf_guard *g);

/* Whether a token file is in force. */
bool pf_guard_has_tokens(const pf_guard *g);
/* Rereads the token file (SIGHUP): see pf_auth_reload. PF_EINVAL without a
 * token file. */
pf_status pf_guard_reload(pf_guard *g, char *err, size_t errlen);
/* Whether the token named id is in force now, with a scope that allows
 * `opened` (what it had when a stream was opened with it): a token
 * removed by a reload, or cut down from write to read, does not. true for
 * PF_SCOPE_OPEN (no token) and without a token file. */
bool pf_guard_token_holds(pf_guard *g, const pf_auth_id *id, pf_scope opened);
/* Reloads of the token file so far (0 without one): pf_guard_token_holds
 * can only change when this does. */
uint64_t pf_guard_token_generation(pf_guard *g);
/* Tokens of each scope in force (0, 0 without a file). */
void pf_guard_token_counts(pf_guard *g, size_t *read, size_t *write);

/* Whether this server answers for host (the Host header's value, NULL when
 * there is none). */
bool pf_guard_host_allowed(const pf_guard *g, const char *host);
/* The Host rule in force, for the start-up line and /v1/info:
 * "any", "loopback" (names) or "list" (--allowed-hosts). */
const char *pf_guard_host_rule(const pf_guard *g);

/* With --cors-origin: whether origin (the Origin header's value) may call
 * the API from a page, so its answers carry CORS headers. */
bool pf_guard_cors_allowed(const pf_guard *g, const char *origin);
bool pf_guard_cors_enabled(const pf_guard *g);

/* The scope route needs on this server. */
pf_scope pf_guard_need(const pf_guard *g, pf_route route);
/* Checks an Authorization value (see pf_auth_check); PF_AUTH_MISSING
 * without a token file. */
pf_auth_result pf_guard_check(pf_guard *g, const char *authorization, pf_scope *scope,
                              pf_auth_id *id);

#endif
