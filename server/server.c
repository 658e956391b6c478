/* server.c -- the server's life: making its parts and handing each the
 * parts it uses, listening, draining and stopping. See server.h. */
#include "server.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "clock.h"
#include "conns.h"
#include "crowd.h"
#include "demo.h"
#include "guard.h"
#include "http.h"
#include "kind_grid.h"
#include "kind_navmesh.h"
#include "maps.h"
#include "memory.h"
#include "metrics.h"
#include "navq.h"
#include "pool.h"
#include "registry.h"
#include "routes_crowds.h"
#include "routes_fields.h"
#include "routes_maps.h"
#include "routes_ops.h"
#include "routes_paths.h"
#include "routes_sessions.h"
#include "routes_tables.h"
#include "session.h"
#include "stream.h"

struct pf_server {
    pf_config cfg;
    pf_metrics metrics;
    pf_pool *pool;
    pf_kinds *kinds; /* every kind of map's environment (kind.h) */
    pf_navq *navq;   /* the navmesh's query scratch, which its crowds use too */
    pf_registry *registry;
    pf_sessions *sessions;
    pf_crowds *crowds;
    pf_maps *maps;   /* the registry and the store (memory, data directory, Redis) together */
    pf_hub *hub;     /* WebSocket streams and the session reaper */
    pf_conns *conns; /* the connections' absolute deadlines */
    pf_mem *mem;     /* the process memory budget (--max-memory) */
    pf_guard *guard; /* Host, CORS, tokens */
    pf_http *http;
    uv_thread_t loader; /* loads the stored (and demo) maps while the server listens */
    bool loader_started;
    /* The resource modules' contexts, and the table's view of them. */
    pf_ops_routes ops;
    pf_maps_routes maps_routes;
    pf_paths_routes paths;
    pf_fields_routes fields;
    pf_tables_routes tables;
    pf_sessions_routes sessions_routes;
    pf_crowds_routes crowds_routes;
    pf_routes routes;
    /* X-Pathd-Instance: --instance-id, else hostname:port once the port is
     * known (hostname alone before). */
    char instance_buf[2][160];
    _Atomic(const char *) instance;
};

pf_status pf_server_create(const pf_config *cfg, pf_server **out, char *err, size_t errlen) {
    pf_server *s = calloc(1, sizeof(*s));
    pf_status st = PF_ENOMEM;
    *out = NULL;
    snprintf(err, errlen, "out of memory");
    if (!s) return PF_ENOMEM;
    s->cfg = *cfg;
    pf_metrics_init(&s->metrics);
    if (!(s->mem = pf_mem_create((uint64_t)cfg->max_memory))) goto out_free_server;
    if ((st = pf_guard_create(&s->cfg, &s->guard, err, errlen))) goto out_free_mem;
    st = PF_ENOMEM;
    snprintf(err, errlen, "out of memory");
    if (!(s->registry = pf_registry_create((size_t)cfg->max_maps))) goto out_free_guard;
    s->sessions = pf_sessions_create((size_t)cfg->max_sessions, (size_t)cfg->max_sessions_per_map);
    if (!s->sessions) goto out_free_registry;
    if (!(s->crowds = pf_crowds_create((size_t)cfg->max_crowds, (size_t)cfg->max_crowds_per_map)))
        goto out_free_sessions;
    pf_crowds_set_mem(s->crowds, s->mem);
    if ((st = pf_pool_create((int)cfg->workers, (int)cfg->queue_limit, &s->pool)))
        goto out_free_crowds;
    {
        pf_kind_deps d = {&s->cfg, s->mem, &s->metrics, s->pool};
        if ((st = pf_kinds_create(&d, &s->kinds, err, errlen))) goto out_free_pool;
        s->navq = pf_navmesh_navq(pf_kinds_env(s->kinds, &pf_kind_navmesh));
    }
    {
        pf_maps_deps d = {.registry = s->registry,
                          .sessions = s->sessions,
                          .cfg = &s->cfg,
                          .mem = s->mem,
                          .kinds = s->kinds,
                          .crowds = s->crowds};
        if ((st = pf_maps_create(&d, &s->maps))) goto out_free_kinds;
    }
    {
        pf_hub_deps d = {.sessions = s->sessions,
                         .registry = s->registry,
                         .pool = s->pool,
                         .metrics = &s->metrics,
                         .ws_max_message = (size_t)cfg->ws_max_message,
                         .max_streams = (size_t)cfg->max_streams,
                         .ws_max_outbound = (size_t)cfg->ws_max_outbound,
                         .ws_idle_timeout_s = cfg->ws_idle_timeout_s,
                         .ws_close_timeout_ms = cfg->ws_close_timeout_ms,
                         .deadline_ms = cfg->deadline_ms,
                         .mem = s->mem,
                         .crowds = s->crowds,
                         .navq = s->navq,
                         .crowd_limits = pf_crowds_routes_limits(&s->cfg),
                         .cfg = &s->cfg,
                         .maps = s->maps,
                         .guard = s->guard};
        if ((st = pf_hub_create(&d, &s->hub))) goto out_free_maps;
    }
    if (cfg->instance_id[0]) {
        snprintf(s->instance_buf[0], sizeof(s->instance_buf[0]), "%s", cfg->instance_id);
    } else if (gethostname(s->instance_buf[0], sizeof(s->instance_buf[0]) - 1) != 0) {
        snprintf(s->instance_buf[0], sizeof(s->instance_buf[0]), "pathd");
    }
    atomic_init(&s->instance, s->instance_buf[0]);
    if ((st = pf_conns_create(cfg->request_timeout_s * 1000, cfg->conn_timeout_s * 1000,
                              cfg->max_answer_bytes_per_conn, cfg->max_answer_bytes, &s->conns)))
        goto out_free_hub;
    s->ops = (pf_ops_routes){.cfg = &s->cfg,
                             .metrics = &s->metrics,
                             .pool = s->pool,
                             .registry = s->registry,
                             .sessions = s->sessions,
                             .hub = s->hub,
                             .maps = s->maps,
                             .started_ns = pf_clock_now_ns(),
                             .instance = &s->instance,
                             .crowds = s->crowds,
                             .conns = s->conns,
                             .mem = s->mem,
                             .guard = s->guard};
    s->maps_routes = (pf_maps_routes){s->maps, s->registry, &s->cfg, &s->metrics};
    s->paths = (pf_paths_routes){s->registry, s->kinds, &s->cfg};
    s->fields = (pf_fields_routes){s->registry, s->kinds, &s->cfg, s->mem};
    s->tables = (pf_tables_routes){s->registry, s->kinds, &s->cfg, s->mem};
    s->sessions_routes =
        (pf_sessions_routes){s->registry, s->sessions, s->hub, &s->metrics, &s->cfg, s->mem};
    s->crowds_routes = (pf_crowds_routes){s->registry, s->crowds, s->hub, s->navq, &s->cfg};
    s->routes = (pf_routes){&s->ops,    &s->maps_routes,     &s->paths,         &s->fields,
                            &s->tables, &s->sessions_routes, &s->crowds_routes, s->maps};
    {
        pf_http_deps d = {&s->cfg,     &s->routes,   s->conns, s->mem, s->pool,
                          &s->metrics, &s->instance, s->guard, s->maps};
        if ((st = pf_http_create(&d, &s->http))) goto out_free_conns;
    }
    *out = s;
    return PF_OK;

out_free_conns:
    pf_conns_destroy(s->conns);
out_free_hub:
    pf_hub_destroy(s->hub);
out_free_maps:
    pf_maps_destroy(s->maps);
out_free_kinds:
    pf_kinds_destroy(s->kinds);
out_free_pool:
    pf_pool_destroy(s->pool);
out_free_crowds:
    pf_crowds_destroy(s->crowds);
out_free_sessions:
    pf_sessions_destroy(s->sessions);
out_free_registry:
    pf_registry_destroy(s->registry);
out_free_guard:
    pf_guard_destroy(s->guard);
out_free_mem:
    pf_mem_destroy(s->mem);
out_free_server:
    free(s);
    return st;
}

/* The demo maps, each unless a stored map has its name (a shared store
 * keeps the ones it has). */
static void load_demo(pf_server *s) {
    static const char *const names[] = {"room", "maze"};
    const pf_kind_env *grid = pf_kinds_env(s->kinds, &pf_kind_grid);
    for (int i = 0; i < 2; i++) {
        pf_grid *g = NULL;
        pf_mapver *mv = NULL;
        pf_status st = i == 0 ? pf_demo_room(&g) : pf_demo_maze(64, 64, 42, &g);
        bool added = false;
        if (!st) st = pf_grid_build(grid, names[i], g, NULL, pf_clock_now_ns(), 0, &mv, NULL);
        if (!st) st = pf_maps_add_if_absent(s->maps, mv, &added);
        if (st)
            fprintf(stderr, "pathd: demo map '%s': %s\n", names[i], pf_status_str(st));
        else if (!added)
            fprintf(stderr, "pathd: demo map '%s': a stored map has that name; keeping it\n",
                    names[i]);
    }
}

/* The loader thread: the data directory's maps first (at their versions),
 * then the demo maps that do not clash with them; then the server is
 * ready. */
static void loader_main(void *arg) {
    pf_server *s = arg;
    pf_maps_load_stored(s->maps);
    if (s->cfg.demo) load_demo(s);
    pf_maps_set_loading(s->maps, false);
}

pf_status pf_server_start(pf_server *s, char *err, size_t errlen) {
    pf_status st;
    /* Loading from before the first request: routes that use maps answer
     * 503 not_ready until the loader is done. */
    pf_maps_set_loading(s->maps, true);
    if ((st = pf_http_start(s->http, err, errlen))) return st;
    atomic_store(&s->ops.health_port, pf_http_health_port(s->http));
    if (!s->cfg.instance_id[0]) {
        snprintf(s->instance_buf[1], sizeof(s->instance_buf[1]), "%.120s:%u", s->instance_buf[0],
                 (unsigned)pf_http_port(s->http));
        atomic_store(&s->instance, s->instance_buf[1]);
    }
    if (uv_thread_create(&s->loader, loader_main, s)) {
        snprintf(err, errlen, "cannot start the map loader thread");
        return PF_ENOMEM;
    }
    s->loader_started = true;
    return PF_OK;
}

const char *pf_server_instance(pf_server *s) { return atomic_load(&s->instance); }

uint16_t pf_server_port(const pf_server *s) { return pf_http_port(s->http); }

uint16_t pf_server_health_port(const pf_server *s) { return pf_http_health_port(s->http); }

pf_status pf_server_open_store(pf_server *s, char *err, size_t errlen) {
    return pf_maps_open_store(s->maps, err, errlen);
}

pf_status pf_server_reload_tokens(pf_server *s, char *err, size_t errlen) {
    pf_status st = pf_guard_reload(s->guard, err, errlen);
    /* Open streams hold the rights their token had: those of a token
     * removed or cut down lose them now, not at their next message. */
    if (st == PF_OK) pf_hub_tokens_changed(s->hub);
    return st;
}

void pf_server_describe(pf_server *s, char *buf, size_t len) {
    size_t nr, nw;
    pf_guard_token_counts(s->guard, &nr, &nw);
    if (pf_guard_has_tokens(s->guard))
        snprintf(buf, len, "%s, tokens: %zu read + %zu write from %s, hosts: %s%s",
                 pf_http_is_tls(s->http) ? "https" : "http", nr, nw, s->cfg.auth_token_file,
                 pf_guard_host_rule(s->guard), pf_guard_cors_enabled(s->guard) ? ", cors" : "");
    else
        snprintf(buf, len, "%s, NO AUTH%s, hosts: %s%s", pf_http_is_tls(s->http) ? "https" : "http",
                 s->cfg.insecure_no_auth
                     ? " (--insecure-no-auth: anyone who reaches the port may do anything)"
                     : " (loopback only)",
                 pf_guard_host_rule(s->guard), pf_guard_cors_enabled(s->guard) ? ", cors" : "");
}

uint64_t pf_server_drain(pf_server *s, int64_t timeout_ms) {
    uint64_t end = pf_clock_now_ns() + (uint64_t)timeout_ms * 1000000ull, left;
    struct timespec nap = {0, 5 * 1000 * 1000};
    pf_http_quiesce(s->http);
    pf_hub_close_all(s->hub);
    while ((left = pf_http_in_flight(s->http)) > 0 && pf_clock_now_ns() < end)
        nanosleep(&nap, NULL);
    if (left == 0) pf_http_stop(s->http);
    return left;
}

void pf_server_destroy(pf_server *s) {
    if (!s) return;
    /* The loader publishes into the registry: it ends first. */
    if (s->loader_started) uv_thread_join(&s->loader);
    /* Jobs still queued resume their connections: run them before the
     * daemon goes. */
    pf_pool_shutdown(s->pool);
    /* Streams close through libmicrohttpd (MHD_upgrade_action): before the
     * daemon stops. */
    pf_hub_destroy(s->hub);
    pf_http_destroy(s->http);
    pf_conns_destroy(s->conns); /* after the daemons: every connection is closed */
    pf_pool_destroy(s->pool);
    /* The store's follower thread uses the sessions and the registry: it
     * stops here, before they go. */
    pf_maps_destroy(s->maps);
    pf_sessions_destroy(s->sessions);
    pf_registry_destroy(s->registry);
    /* After the maps: the follower ends crowds with their maps. */
    pf_crowds_destroy(s->crowds);
    /* After the pool (its jobs borrow navmesh queries) and every version
     * (they were built in these environments). */
    pf_kinds_destroy(s->kinds);
    pf_guard_destroy(s->guard);
    pf_mem_destroy(s->mem); /* last: everything above gave its charges back */
    free(s);
}
