/* routes_ops.c -- the operations routes; see routes_ops.h. */
#include "routes_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "nav_json.h"
#include "request.h"
#include "store_guard.h"
#include "version.h"

void pf__route_healthz(pf_req *r, pf_ops_routes *m) {
    pf_jsonw w;
    (void)m;
    pf_jsonw_init(&w, 32);
    pf_jsonw_raw(&w, "{\"status\":\"ok\"}", 15);
    pf_req_answer_json(r, &w);
}

/* What the start found in the data directory: counts, and each file it
 * could not use with where it went and why. */
static void write_store(pf_jsonw *w, const pf_store_report *rep) {
    pf_jsonw_key(w, "store");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "loaded", rep->loaded);
    pf_jsonw_kuint(w, "quarantined", rep->quarantined);
    pf_jsonw_kuint(w, "skipped", rep->skipped);
    pf_jsonw_kuint(w, "temp_removed", rep->temp_removed);
    pf_jsonw_key(w, "issues");
    pf_jsonw_arr_begin(w);
    for (size_t i = 0; i < rep->nissues; i++) {
        const pf_store_issue *is = &rep->issues[i];
        pf_jsonw_obj_begin(w);
        pf_jsonw_kstr(w, "file", is->file);
        pf_jsonw_key(w, "moved_to");
        if (is->moved_to[0])
            pf_jsonw_str(w, is->moved_to);
        else
            pf_jsonw_null(w);
        pf_jsonw_kstr(w, "reason", is->reason);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
    pf_jsonw_obj_end(w);
}

void pf__route_readyz(pf_req *r, pf_ops_routes *m) {
    pf_store_report rep;
    bool loading = pf_maps_loading(m->maps), store = pf_maps_store_report(m->maps, &rep);
    pf_jsonw w;
    char why[400];
    if (!pf_maps_store_ready(m->maps, why, sizeof(why))) {
        /* Out of the balancer's rotation while the shared store is out of
         * reach: its copies may be going stale. */
        pf_req_answer_error(r, PF_ERR_STORE_UNAVAILABLE, NULL, "Not ready: %s.", why);
        return;
    }
    pf_jsonw_init(&w, 256);
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kstr(&w, "status", loading ? "loading" : "ready");
    pf_jsonw_kuint(&w, "maps", pf_registry_count(m->registry));
    if (store) write_store(&w, &rep);
    /* --store: whether changes are acknowledged, and why not (still ready:
     * held maps answer, and every instance shares the one store). */
    pf_jsonw_key(&w, "shared_store");
    if (!pf_maps_store_write_trust(m->maps, &w)) pf_jsonw_null(&w);
    pf_jsonw_obj_end(&w);
    if (!loading) {
        pf_req_answer_json(r, &w);
        return;
    }
    /* 503 until every stored map is in: a balancer keeps traffic away, and
     * the body says how far the load got. */
    pf_req_answer_error_body(r, PF_ERR_NOT_READY, &w); /* with Retry-After */
}

static void visit_limit(void *ud, const char *name, int64_t v) { pf_jsonw_kint(ud, name, v); }

void pf__route_info(pf_req *r, pf_ops_routes *m) {
    const char *dir = pf_maps_store_dir(m->maps);
    uint64_t hits = atomic_load(&m->metrics->cache_hits);
    uint64_t misses = atomic_load(&m->metrics->cache_misses);
    pf_pool_stats ps;
    pf_jsonw w;
    pf_pool_get_stats(m->pool, &ps);
    pf_jsonw_init(&w, 1024);
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kstr(&w, "name", "pathd");
    pf_jsonw_kstr(&w, "version", PF_SERVER_VERSION);
    pf_jsonw_kstr(&w, "api", "v1");
    pf_jsonw_kstr(&w, "instance", atomic_load(m->instance));
    pf_jsonw_kstr(&w, "store", pf_maps_store_kind(m->maps));
    pf_jsonw_key(&w, "shared_store");
    if (!pf_maps_store_write_trust(m->maps, &w)) pf_jsonw_null(&w);
    pf_jsonw_kuint(&w, "uptime_s", (pf_clock_now_ns() - m->started_ns) / 1000000000ull);
    pf_jsonw_key(&w, "algorithms");
    pf_jsonw_arr_begin(&w);
    for (int a = PF_ALGO_BFS; a <= PF_ALGO_HPA; a++) pf_jsonw_str(&w, pf_algorithm_name(a));
    pf_jsonw_str(&w, pf_algorithm_name(PF_ALGO_AUTO));
    pf_jsonw_arr_end(&w);
    pf_jsonw_key(&w, "navmesh_algorithms");
    pf_jsonw_arr_begin(&w);
    pf_jsonw_str(&w, pf_nav_algorithm_name(PF_NAV_POLYANYA));
    pf_jsonw_str(&w, pf_nav_algorithm_name(PF_NAV_DETOUR));
    pf_jsonw_arr_end(&w);
    pf_jsonw_key(&w, "limits");
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kstr(&w, "bind", m->cfg->bind);
    pf_jsonw_key(&w, "data_dir");
    if (dir)
        pf_jsonw_str(&w, dir);
    else
        pf_jsonw_null(&w);
    pf_jsonw_key(&w, "store");
    if (pf_maps_store_url(m->maps))
        pf_jsonw_str(&w, pf_maps_store_url(m->maps));
    else
        pf_jsonw_null(&w);
    pf_jsonw_kstr(&w, "instance", atomic_load(m->instance));
    pf_config_visit(m->cfg, visit_limit, &w);
    pf_jsonw_obj_end(&w);
    pf_jsonw_key(&w, "pool");
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kint(&w, "workers", ps.workers);
    pf_jsonw_kint(&w, "queue_limit", ps.queue_limit);
    pf_jsonw_kint(&w, "queued", ps.queued);
    pf_jsonw_kint(&w, "queued_builds", ps.queued_builds);
    pf_jsonw_kint(&w, "running", ps.running);
    pf_jsonw_kint(&w, "running_builds", ps.running_builds);
    pf_jsonw_kuint(&w, "completed", ps.completed);
    pf_jsonw_kuint(&w, "rejected", ps.rejected);
    pf_jsonw_kuint(&w, "expired", ps.expired);
    pf_jsonw_kuint(&w, "requeued", ps.requeued);
    pf_jsonw_kuint(&w, "completed_builds", ps.completed_builds);
    pf_jsonw_kuint(&w, "writes_ahead", ps.writes_ahead);
    pf_jsonw_obj_end(&w);
    pf_jsonw_key(&w, "cache");
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kuint(&w, "hits", hits);
    pf_jsonw_kuint(&w, "misses", misses);
    pf_jsonw_kdouble(&w, "hit_ratio", (hits + misses) ? (double)hits / (double)(hits + misses) : 0);
    pf_jsonw_obj_end(&w);
    pf_jsonw_kuint(&w, "maps", pf_registry_count(m->registry));
    pf_jsonw_kuint(&w, "sessions", pf_sessions_count(m->sessions));
    pf_jsonw_kuint(&w, "crowds", m->crowds ? pf_crowds_count(m->crowds) : 0);
    pf_jsonw_kuint(&w, "streams", pf_hub_count(m->hub));
    pf_jsonw_kuint(&w, "requests_in_flight", pf_metrics_in_flight(m->metrics));
    pf_jsonw_kuint(&w, "health_port", atomic_load(&m->health_port));
    {
        pf_conns_stats cs;
        pf_hub_stats hs;
        pf_conns_get_stats(m->conns, &cs);
        pf_hub_get_stats(m->hub, &hs);
        pf_jsonw_key(&w, "connections");
        pf_jsonw_obj_begin(&w);
        pf_jsonw_kuint(&w, "open", cs.open);
        pf_jsonw_kuint(&w, "closed_slow_request", cs.closed_slow_request);
        pf_jsonw_kuint(&w, "closed_idle", cs.closed_idle);
        pf_jsonw_kuint(&w, "answers_held", cs.answers_held);
        pf_jsonw_kuint(&w, "answers_bytes", cs.answers_bytes);
        pf_jsonw_kuint(&w, "answers_too_big", cs.answers_too_big);
        pf_jsonw_kuint(&w, "answers_refused", cs.answers_refused);
        pf_jsonw_obj_end(&w);
        pf_jsonw_key(&w, "stream_closes");
        pf_jsonw_obj_begin(&w);
        pf_jsonw_kuint(&w, "slow_reader", hs.closed_slow_reader);
        pf_jsonw_kuint(&w, "answer_too_big", hs.closed_too_big);
        pf_jsonw_kuint(&w, "idle", hs.closed_idle);
        pf_jsonw_kuint(&w, "session_gone", hs.closed_session_gone);
        pf_jsonw_kuint(&w, "dropped_after_close", hs.dropped_after_close);
        pf_jsonw_kuint(&w, "memory", hs.closed_memory);
        pf_jsonw_kuint(&w, "token_revoked", hs.closed_token_revoked);
        pf_jsonw_obj_end(&w);
        pf_jsonw_kuint(&w, "stream_reaper_runs", hs.reaper_runs);
    }
    pf_jsonw_key(&w, "memory");
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kuint(&w, "budget_bytes", pf_mem_budget(m->mem));
    pf_jsonw_kuint(&w, "used_bytes", pf_mem_used(m->mem));
    for (int k = 0; k < PF_MEM_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof(name), "%s_bytes", pf_mem_kind_name((pf_mem_kind)k));
        pf_jsonw_kuint(&w, name, pf_mem_used_by(m->mem, (pf_mem_kind)k));
    }
    pf_jsonw_kuint(&w, "refused", pf_mem_refused(m->mem));
    pf_jsonw_obj_end(&w);
    {
        size_t nr, nw;
        pf_guard_token_counts(m->guard, &nr, &nw);
        pf_jsonw_key(&w, "security");
        pf_jsonw_obj_begin(&w);
        pf_jsonw_kbool(&w, "tokens", pf_guard_has_tokens(m->guard));
        pf_jsonw_kuint(&w, "read_tokens", nr);
        pf_jsonw_kuint(&w, "write_tokens", nw);
        pf_jsonw_kbool(&w, "tls", m->cfg->tls_cert[0] != '\0');
        pf_jsonw_kbool(&w, "cors", pf_guard_cors_enabled(m->guard));
        pf_jsonw_kstr(&w, "hosts", pf_guard_host_rule(m->guard));
        pf_jsonw_obj_end(&w);
    }
    pf_jsonw_obj_end(&w);
    pf_req_answer_json(r, &w);
}

/* What the budget counts (memory.h), by kind: each holder charges what it
 * holds (versions and their caches, agent data and change logs; navmesh
 * versions; sessions; streams; bodies), so /metrics reads the counts the
 * budget refuses by. Crowds are reported as they last measured themselves
 * (pf_crowds_memory), not charged. */
static void memory_usage(pf_ops_routes *m, pf_metrics_gauges *g) {
    for (int k = 0; k < PF_MEM_COUNT; k++) g->memory[k] = pf_mem_used_by(m->mem, (pf_mem_kind)k);
    if (m->crowds) g->memory[PF_MEM_CROWDS] = pf_crowds_memory(m->crowds);
    g->memory_budget = pf_mem_budget(m->mem);
    g->memory_refused = pf_mem_refused(m->mem);
}

void pf__route_metrics(pf_req *r, pf_ops_routes *m) {
    pf_pool_stats ps;
    pf_metrics_gauges g;
    pf_jsonw w;
    pf_pool_get_stats(m->pool, &ps);
    memset(&g, 0, sizeof(g));
    g.queue_depth = ps.queued;
    g.queue_limit = ps.queue_limit;
    g.running = ps.running;
    g.workers = ps.workers;
    g.rejected = ps.rejected;
    g.expired = ps.expired;
    g.requeued = ps.requeued;
    g.maps = pf_registry_count(m->registry);
    g.sessions = pf_sessions_count(m->sessions);
    g.streams = pf_hub_count(m->hub);
    g.crowds = m->crowds ? pf_crowds_count(m->crowds) : 0;
    g.crowd_steps = m->crowds ? pf_crowds_steps(m->crowds) : 0;
    {
        pf_conns_stats cs;
        pf_hub_stats hs;
        pf_conns_get_stats(m->conns, &cs);
        pf_hub_get_stats(m->hub, &hs);
        g.connections = cs.open;
        g.closed_slow_request = cs.closed_slow_request;
        g.closed_idle = cs.closed_idle;
        g.stream_closes_slow_reader = hs.closed_slow_reader;
        g.stream_closes_idle = hs.closed_idle;
        g.stream_closes_session_gone = hs.closed_session_gone;
    }
    g.loading = pf_maps_loading(m->maps);
    {
        pf_store_report rep;
        size_t nr, nw;
        pf_sguard_stats ss;
        if (pf_maps_store_trust(m->maps, &ss)) {
            g.shared = true;
            g.shared_writes_ok = ss.writes_ok;
            g.shared_durable = ss.durable;
            g.shared_losses = ss.losses;
            g.shared_restored = ss.restored;
            g.shared_refused_not_durable = ss.refused_not_durable;
            g.shared_refused_unavailable = ss.refused_unavailable;
            g.shared_unknown = ss.unknown;
            g.shared_unconfirmed = ss.unconfirmed;
        }
        if (pf_maps_store_report(m->maps, &rep)) {
            g.store_quarantined = rep.quarantined;
            g.store_skipped = rep.skipped;
            g.store_temp_removed = rep.temp_removed;
        }
        pf_guard_token_counts(m->guard, &nr, &nw);
        g.tokens_read = nr;
        g.tokens_write = nw;
    }
    memory_usage(m, &g);
    pf_jsonw_init(&w, 32768);
    pf_metrics_write(m->metrics, &g, &w);
    pf_req_answer_typed(r, "text/plain; version=0.0.4; charset=utf-8", &w);
}

/* The debug viewer (server/viewer.html, compiled in by the Makefile). */
extern const unsigned char pf_viewer_html[];
extern const size_t pf_viewer_html_len;

void pf__route_viewer(pf_req *r, pf_ops_routes *m) {
    pf_jsonw w;
    (void)m;
    pf_jsonw_init(&w, pf_viewer_html_len + 1);
    pf_jsonw_append(&w, (const char *)pf_viewer_html, pf_viewer_html_len);
    pf_req_answer_typed(r, "text/html; charset=utf-8", &w);
}
