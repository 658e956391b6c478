/* routes_ops.h -- the operations routes (routes.h's `ops` rows): /healthz,
 * /readyz, /v1/info, /metrics and the debug viewer page (GET /). All answer
 * on the I/O thread at once, without the pool. /readyz is 503 not_ready
 * while the stored maps load, and reports what the start found in the data
 * directory (quarantined and skipped files, with the reason of each).
 */
#ifndef PF_SERVER_ROUTES_OPS_H
#define PF_SERVER_ROUTES_OPS_H

#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "conns.h"
#include "crowd.h"
#include "guard.h"
#include "maps.h"
#include "memory.h"
#include "metrics.h"
#include "pool.h"
#include "registry.h"
#include "routes.h"
#include "session.h"
#include "stream.h"

/* What the operations routes read to report the server's state. Borrowed;
 * filled by server.c. */
struct pf_ops_routes {
    const pf_config *cfg;
    pf_metrics *metrics;
    pf_pool *pool;
    pf_registry *registry;
    pf_sessions *sessions;
    pf_hub *hub;
    pf_maps *maps;                   /* the store: memory, data directory or Redis */
    uint64_t started_ns;             /* clock.h */
    _Atomic(const char *) *instance; /* X-Pathd-Instance */
    pf_crowds *crowds;
    pf_conns *conns;         /* connections open and closed by their deadlines */
    atomic_uint health_port; /* the probes' listener, 0 when none; set once listening (the
                              * API may be serving by then: atomic) */
    pf_mem *mem;             /* the process memory budget, reported */
    pf_guard *guard;         /* tokens in force, TLS, CORS, Host rule (for info and metrics) */
};

#endif
