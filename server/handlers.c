/* handlers.c -- what each route does, and the jobs that run on the pool.
 *
 * Quick routes answer on the libmicrohttpd thread: health, readiness, info,
 * metrics, map info, listing, delete, and path requests found in the cache.
 * Everything that searches or builds is a job: run_paths and run_build run
 * on a worker, with that worker's pf_search_ctx.
 */
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "http.h"
#include "http_status.h"
#include "map_json.h"
#include "path.h"
#include "planner.h"

/* Shared bits */

static void write_map_info(pf_jsonw *w, const pf_mapver *mv) {
    pf_cache_stats cs;
    pf_map_info info;
    pf_cache_get_stats(mv->cache, &cs);
    memset(&info, 0, sizeof(info));
    info.id = mv->id;
    info.version = mv->version;
    info.planner = mv->planner;
    info.build_us = mv->build_us;
    info.default_algorithm = pf_algorithm_name(pf_mapver_default_algorithm(mv));
    info.cache_hits = cs.hits;
    info.cache_misses = cs.misses;
    info.cache_entries = cs.entries;
    pf_map_write_info(w, &info);
}

static void answer_no_map(pf_req *r) {
    pf__answer_error(r, 404, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.", r->map_id);
}

/* Operations */

static void handle_healthz(pf_req *r) {
    pf_jsonw w;
    pf_jsonw_init(&w, 32);
    pf_jsonw_raw(&w, "{\"status\":\"ok\"}", 15);
    pf__answer_json(r, 200, &w);
}

static void handle_readyz(pf_req *r) {
    pf_jsonw w;
    pf_jsonw_init(&w, 64);
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kstr(&w, "status", "ready");
    pf_jsonw_kuint(&w, "maps", pf_registry_count(r->srv->registry));
    pf_jsonw_obj_end(&w);
    pf__answer_json(r, 200, &w);
}

static void visit_limit(void *ud, const char *name, int64_t v) { pf_jsonw_kint(ud, name, v); }

static void handle_info(pf_req *r) {
    pf_server *s = r->srv;
    pf_pool_stats ps;
    pf_jsonw w;
    uint64_t hits = atomic_load(&s->cache_hits), misses = atomic_load(&s->cache_misses);
    pf_pool_get_stats(s->pool, &ps);
    pf_jsonw_init(&w, 1024);
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kstr(&w, "name", "pathd");
    pf_jsonw_kstr(&w, "version", PF_SERVER_VERSION);
    pf_jsonw_kstr(&w, "api", "v1");
    pf_jsonw_kuint(&w, "uptime_s", (pf__now_ns() - s->started_ns) / 1000000000ull);
    pf_jsonw_key(&w, "algorithms");
    pf_jsonw_arr_begin(&w);
    for (int a = PF_ALGO_BFS; a <= PF_ALGO_HPA; a++) pf_jsonw_str(&w, pf_algorithm_name(a));
    pf_jsonw_arr_end(&w);
    pf_jsonw_key(&w, "limits");
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kstr(&w, "bind", s->cfg.bind);
    pf_jsonw_key(&w, "data_dir");
    if (s->store)
        pf_jsonw_str(&w, pf_store_dir(s->store));
    else
        pf_jsonw_null(&w);
    pf_config_visit(&s->cfg, visit_limit, &w);
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
    pf_jsonw_obj_end(&w);
    pf_jsonw_key(&w, "cache");
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kuint(&w, "hits", hits);
    pf_jsonw_kuint(&w, "misses", misses);
    pf_jsonw_kdouble(&w, "hit_ratio", hits + misses ? (double)hits / (double)(hits + misses) : 0);
    pf_jsonw_obj_end(&w);
    pf_jsonw_kuint(&w, "maps", pf_registry_count(s->registry));
    pf_jsonw_kuint(&w, "sessions", pf_sessions_count(s->sessions));
    pf_jsonw_kuint(&w, "streams", pf_hub_count(s->hub));
    pf_jsonw_kuint(&w, "requests_in_flight", atomic_load(&s->in_flight));
    pf_jsonw_obj_end(&w);
    pf__answer_json(r, 200, &w);
}

static void handle_metrics(pf_req *r) {
    pf_server *s = r->srv;
    pf_pool_stats ps;
    pf_metrics_gauges g;
    pf_jsonw w;
    pf_pool_get_stats(s->pool, &ps);
    memset(&g, 0, sizeof(g));
    g.queue_depth = ps.queued;
    g.queue_limit = ps.queue_limit;
    g.running = ps.running;
    g.workers = ps.workers;
    g.rejected = ps.rejected;
    g.cache_hits = atomic_load(&s->cache_hits);
    g.cache_misses = atomic_load(&s->cache_misses);
    g.maps = pf_registry_count(s->registry);
    g.sessions = pf_sessions_count(s->sessions);
    g.streams = pf_hub_count(s->hub);
    g.in_flight = atomic_load(&s->in_flight);
    pf_jsonw_init(&w, 8192);
    pf_metrics_write(&s->metrics, &g, &w);
    pf__answer_json(r, 200, &w);
    r->resp_type = "text/plain; version=0.0.4";
}

/* The debug viewer (server/viewer.html, compiled in by the Makefile). */
extern const unsigned char pf_viewer_html[];
extern const size_t pf_viewer_html_len;

static void handle_viewer(pf_req *r) {
    pf_jsonw w;
    pf_jsonw_init(&w, pf_viewer_html_len + 1);
    pf_jsonw_append(&w, (const char *)pf_viewer_html, pf_viewer_html_len);
    pf__answer_json(r, 200, &w);
    r->resp_type = "text/html; charset=utf-8";
}

/* Maps */

static void handle_maps_list(pf_req *r) {
    pf_mapver **list;
    size_t n;
    pf_jsonw w;
    if (pf_registry_list(r->srv->registry, &list, &n)) {
        pf__answer_error(r, 503, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        return;
    }
    pf_jsonw_init(&w, 512 * (n + 1));
    pf_jsonw_obj_begin(&w);
    pf_jsonw_key(&w, "maps");
    pf_jsonw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        write_map_info(&w, list[i]);
        pf_mapver_release(list[i]);
    }
    free(list);
    pf_jsonw_arr_end(&w);
    pf_jsonw_obj_end(&w);
    pf__answer_json(r, 200, &w);
}

/* Job: every cell of a map (megabytes on big maps: written on a worker). */
static void run_cells(void *arg, pf_search_ctx *ctx) {
    pf_req *r = arg;
    const pf_grid *g = pf_planner_grid(r->mv->planner);
    pf_jsonw w;
    (void)ctx;
    pf_jsonw_init(&w, (size_t)pf_grid_width(g) * (size_t)pf_grid_height(g) * 2 + 512);
    pf_map_write_cells(&w, r->mv->id, r->mv->version, g);
    pf__answer_json(r, 200, &w);
    pf__finish(r);
}

static void handle_map_cells(pf_req *r) {
    r->mv = pf_registry_get(r->srv->registry, r->map_id);
    if (!r->mv) {
        answer_no_map(r);
        return;
    }
    pf__dispatch(r, PF_JOB_SEARCH, run_cells);
}

static void handle_map_get(pf_req *r) {
    pf_mapver *mv = pf_registry_get(r->srv->registry, r->map_id);
    pf_jsonw w;
    if (!mv) {
        answer_no_map(r);
        return;
    }
    pf_jsonw_init(&w, 512);
    write_map_info(&w, mv);
    pf_mapver_release(mv);
    pf__answer_json(r, 200, &w);
}

/* Map changes with --data-dir. The file is written before the registry
 * changes, under store_mu, so disk and memory agree and the version on disk
 * is the one published; without a store these are plain registry calls. */

static void answer_storage(pf_req *r, const char *err) {
    fprintf(stderr, "pathd: map '%s': %s\n", r->map_id, err);
    pf__answer_error(r, 500, PF_ERR_STORAGE, NULL,
                     "The map could not be saved to the data directory (%s); nothing changed.",
                     err);
}

/* pf_registry_publish, saving mv first. PF_EIO: err says why, nothing
 * changed. */
static pf_status publish_map(pf_server *s, pf_mapver *mv, bool *created, char *err, size_t errlen) {
    pf_mapver *cur;
    uint64_t version;
    pf_status st;
    if (!s->store) return pf_registry_publish(s->registry, mv, created);
    uv_mutex_lock(&s->store_mu);
    cur = pf_registry_get(s->registry, mv->id);
    version = cur ? cur->version + 1 : 1;
    if (!cur && pf_registry_count(s->registry) >= (size_t)s->cfg.max_maps) {
        st = PF_ELIMIT; /* checked before writing a file that would not be published */
    } else if (!(st = pf_store_write(s->store, mv->id, version, pf_planner_grid(mv->planner), err,
                                     errlen)) &&
               (st = pf_registry_publish(s->registry, mv, created))) {
        /* Out of memory after the write: put the disk back as it was. */
        char e2[256];
        if (cur)
            pf_store_write(s->store, cur->id, cur->version, pf_planner_grid(cur->planner), e2,
                           sizeof(e2));
        else
            pf_store_remove(s->store, mv->id, e2, sizeof(e2));
    }
    uv_mutex_unlock(&s->store_mu);
    pf_mapver_release(cur);
    return st;
}

/* pf_registry_swap (a PATCH), saving mv first. PF_ECANCELED when another
 * change came first; PF_EIO as above. */
static pf_status swap_map(pf_server *s, pf_mapver *expected, pf_mapver *mv, char *err,
                          size_t errlen) {
    pf_mapver *cur;
    pf_status st = PF_ECANCELED;
    if (!s->store) return pf_registry_swap(s->registry, expected, mv);
    uv_mutex_lock(&s->store_mu);
    cur = pf_registry_get(s->registry, mv->id);
    if (cur == expected && !(st = pf_store_write(s->store, mv->id, expected->version + 1,
                                                 pf_planner_grid(mv->planner), err, errlen)))
        st = pf_registry_swap(s->registry, expected, mv); /* cannot lose: we hold store_mu */
    uv_mutex_unlock(&s->store_mu);
    pf_mapver_release(cur);
    return st;
}

/* pf_registry_remove, removing the file first. */
static pf_status remove_map(pf_server *s, const char *id, char *err, size_t errlen) {
    pf_mapver *cur;
    pf_status st = PF_OK;
    if (!s->store) return pf_registry_remove(s->registry, id) ? PF_OK : PF_ERANGE;
    uv_mutex_lock(&s->store_mu);
    if (!(cur = pf_registry_get(s->registry, id)))
        st = PF_ERANGE;
    else if (!(st = pf_store_remove(s->store, id, err, errlen)))
        pf_registry_remove(s->registry, id);
    uv_mutex_unlock(&s->store_mu);
    pf_mapver_release(cur);
    return st;
}

static void handle_map_delete(pf_req *r) {
    pf_jsonw w;
    char err[256];
    pf_status st = remove_map(r->srv, r->map_id, err, sizeof(err));
    if (st == PF_EIO) {
        answer_storage(r, err);
        return;
    }
    if (st) {
        answer_no_map(r);
        return;
    }
    pf_sessions_drop_map(r->srv->sessions, r->map_id, 0);
    pf_jsonw_init(&w, 1);
    pf__answer_json(r, 204, &w);
    r->resp_type = NULL;
}

/* The kind of a map body: the declared one, else sniffed. */
static pf_body_kind map_body_kind(const pf_req *r) {
    if (r->body_kind != PF_BODY_NONE) return r->body_kind;
    for (size_t i = 0; i < r->body_len; i++) {
        char c = r->body[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
        return c == '{' ? PF_BODY_JSON : PF_BODY_TEXT;
    }
    return PF_BODY_TEXT;
}

static void content_hash(const pf_req *r, pf_body_kind kind, uint8_t out[32]) {
    struct sha256_ctx h;
    uint8_t k = (uint8_t)kind;
    sha256_init(&h);
    sha256_update(&h, 1, &k);
    sha256_update(&h, r->body_len, (const uint8_t *)r->body);
    sha256_digest(&h, SHA256_DIGEST_SIZE, out);
}

/* Job: parse an uploaded map, build its planner (HPA* hierarchy included),
 * publish it as the next version. Runs on a worker, never on an I/O thread. */
static void run_build(void *arg, pf_search_ctx *ctx) {
    pf_req *r = arg;
    pf_server *s = r->srv;
    pf_body_kind kind = map_body_kind(r);
    uint64_t t0 = pf__now_ns();
    uint8_t hash[32];
    pf_proto_error e;
    pf_grid *g = NULL;
    pf_planner *planner = NULL;
    pf_planner_opts po;
    pf_mapver *mv;
    pf_status st;
    bool created = false;
    pf_jsonw w;
    char err[256];
    (void)ctx;

    content_hash(r, kind, hash);
    if (r->route == PF_ROUTE_MAPS_CREATE) {
        /* POST: the id is the content hash, so uploading the same map again
         * finds it and changes nothing. */
        pf_mapver *old;
        snprintf(r->map_id, sizeof(r->map_id), "m-");
        for (int i = 0; i < 8; i++)
            snprintf(r->map_id + 2 + 2 * i, sizeof(r->map_id) - 2 - 2 * (size_t)i, "%02x", hash[i]);
        snprintf(r->location, sizeof(r->location), "/v1/maps/%s", r->map_id);
        old = pf_registry_get(s->registry, r->map_id);
        if (old && memcmp(old->content_hash, hash, sizeof(hash)) == 0) {
            pf_jsonw_init(&w, 512);
            write_map_info(&w, old);
            pf_mapver_release(old);
            pf__answer_json(r, 200, &w);
            goto out_finish;
        }
        pf_mapver_release(old);
    }
    if (r->body_len == 0) {
        pf__answer_error(r, 400, PF_ERR_MALFORMED_MAP, NULL,
                         "The body is empty; send a Moving AI map (text/plain) or a JSON map.");
        goto out_finish;
    }
    if (kind == PF_BODY_JSON)
        st = pf_map_json_parse(r->body, r->body_len, &s->limits, &g, &e);
    else
        st = pf_map_text_parse(r->body, r->body_len, &s->limits, &g, &e);
    free(r->body); /* the biggest allocation of the request: drop it early */
    r->body = NULL;
    r->body_len = r->body_cap = 0;
    if (st) {
        pf__answer_perror(r, &e);
        goto out_finish;
    }
    memset(&po, 0, sizeof(po));
    po.build_hpa = true;
    po.cluster_size = (int32_t)s->cfg.cluster_size;
    po.landmark_bytes = (size_t)s->cfg.landmark_bytes;
    po.landmark_min_cells = PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS;
    if ((st = pf_planner_create(g, &po, &planner))) {
        pf__answer_error(r, pf_http_status(st), pf_proto_code_for(st), NULL,
                         "Preparing the map failed: %s.", pf_status_str(st));
        goto out_finish;
    }
    mv = pf_mapver_create(r->map_id, planner, (size_t)s->cfg.cache_entries,
                          (size_t)s->cfg.cache_bytes, (pf__now_ns() - t0) / 1000, hash);
    if (!mv) {
        pf__answer_error(r, 503, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_finish;
    }
    /* Our own reference before mv becomes visible: once published, a DELETE
     * or another PUT may drop the registry's reference at any moment. */
    pf_mapver_retain(mv);
    if ((st = publish_map(s, mv, &created, err, sizeof(err)))) {
        pf_mapver_release(mv);
        pf_mapver_release(mv);
        if (st == PF_EIO)
            answer_storage(r, err);
        else if (st == PF_ELIMIT)
            pf__answer_error(r, 413, PF_ERR_LIMIT_EXCEEDED, NULL,
                             "The server holds %lld maps, its limit; delete one first.",
                             (long long)s->cfg.max_maps);
        else
            pf__answer_error(r, 503, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_finish;
    }
    /* mv is published: the registry holds the reference it was created with,
     * we still hold ours. */
    if (!created) pf_sessions_drop_map(s->sessions, r->map_id, mv->lineage);
    pf_jsonw_init(&w, 512);
    write_map_info(&w, mv);
    pf_mapver_release(mv);
    pf__answer_json(r, created ? 201 : 200, &w);
    if (created) snprintf(r->location, sizeof(r->location), "/v1/maps/%s", r->map_id);
out_finish:
    pf__finish(r);
}

/* Builds and publishes g as map `id`; version 0 publishes the next version
 * as usual, another number publishes a new map at that version. */
static pf_status add_map(pf_server *s, const char *id, pf_grid *g, uint64_t version) {
    pf_planner *planner = NULL;
    pf_planner_opts po;
    pf_mapver *mv;
    uint64_t t0 = pf__now_ns();
    bool created;
    pf_status st;
    memset(&po, 0, sizeof(po));
    po.build_hpa = true;
    po.cluster_size = (int32_t)s->cfg.cluster_size;
    po.landmark_bytes = (size_t)s->cfg.landmark_bytes;
    po.landmark_min_cells = PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS;
    if ((st = pf_planner_create(g, &po, &planner))) return st;
    mv = pf_mapver_create(id, planner, (size_t)s->cfg.cache_entries, (size_t)s->cfg.cache_bytes,
                          (pf__now_ns() - t0) / 1000, NULL);
    if (!mv) return PF_ENOMEM;
    mv->version = version;
    st = pf_registry_publish(s->registry, mv, &created);
    if (st) pf_mapver_release(mv);
    return st;
}

pf_status pf_server_add_map(pf_server *s, const char *id, pf_grid *g) {
    return add_map(s, id, g, 0);
}

/* A map read back from the data directory keeps its stored version, so the
 * version numbers clients saw stay meaningful across a restart. */
static void load_stored_map(void *ud, const char *id, uint64_t version, pf_grid *g) {
    pf_status st = add_map(ud, id, g, version);
    if (st) fprintf(stderr, "pathd: map '%s' from the data directory: %s\n", id, pf_status_str(st));
}

pf_status pf_server_open_store(pf_server *s, char *err, size_t errlen) {
    pf_status st;
    size_t n;
    if ((st = pf_store_open(s->cfg.data_dir, &s->store, err, errlen))) return st;
    n = pf_store_load_all(s->store, &s->limits, load_stored_map, s);
    fprintf(stderr, "pathd: %zu maps loaded from %s\n", n, s->cfg.data_dir);
    return PF_OK;
}

/* Paths */

static bool deadline_passed(void *ud) {
    const pf_req *r = ud;
    return pf__now_ns() >= r->deadline_ns;
}

static pf_algorithm resolve_algorithm(const pf_mapver *mv, const pf_path_request *q) {
    return q->has_algorithm ? q->algorithm : pf_mapver_default_algorithm(mv);
}

static pf_cache_key cache_key(const pf_mapver *mv, const pf_path_request *q) {
    return pf_cache_key_make(q->start, q->goal, resolve_algorithm(mv, q), q->heuristic, q->weight,
                             q->smooth, q->max_expanded, mv->version);
}

static bool cacheable(const pf_server *s, const pf_path_request *q) {
    return q->use_cache && !q->debug && s->cfg.cache_entries > 0;
}

/* Looks q up in the map's cache; on a hit writes the answer and returns
 * true. */
static bool answer_from_cache(pf_req *r, const pf_mapver *mv, const pf_path_request *q,
                              pf_jsonw *w) {
    pf_server *s = r->srv;
    pf_cache_key k;
    pf_cache_value v;
    pf_path_answer a;
    uint64_t t0 = pf__now_ns();
    if (!cacheable(s, q)) return false;
    k = cache_key(mv, q);
    if (!pf_cache_get(mv->cache, &k, &v)) {
        atomic_fetch_add_explicit(&s->cache_misses, 1, memory_order_relaxed);
        return false;
    }
    atomic_fetch_add_explicit(&s->cache_hits, 1, memory_order_relaxed);
    memset(&a, 0, sizeof(a)); /* nothing was searched for this answer: expanded 0 */
    a.time_us = (pf__now_ns() - t0) / 1000;
    a.cached = true;
    pf_jsonw_obj_begin(w);
    pf_jsonw_raw_members(w, v.json, v.len);
    pf_path_write_stats(w, &a);
    pf_jsonw_obj_end(w);
    free(v.json);
    return true;
}

/* Checks start and goal against the map, naming the field at fault. */
static pf_status check_endpoints(const pf_mapver *mv, const pf_path_request *q, const char *prefix,
                                 pf_proto_error *e) {
    const pf_grid *g = pf_planner_grid(mv->planner);
    const pf_point pts[2] = {q->start, q->goal};
    const char *names[2] = {"start", "goal"};
    char f[48];
    for (int i = 0; i < 2; i++) {
        if (pf_grid_is_walkable(g, pts[i])) continue;
        snprintf(f, sizeof(f), "%s%s", prefix, names[i]);
        if (!pf_grid_in_bounds(g, pts[i]))
            return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                      "%s (%d,%d) is outside the %dx%d map.", f, (int)pts[i].x,
                                      (int)pts[i].y, (int)pf_grid_width(g), (int)pf_grid_height(g));
        return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                  "%s (%d,%d) is a blocked cell.", f, (int)pts[i].x, (int)pts[i].y);
    }
    return PF_OK;
}

/* Runs one path query on a worker and writes its answer into w. Returns
 * PF_OK (answer written: found or not), PF_ECANCELED (deadline passed),
 * or an error described in e (nothing written). */
static pf_status run_one(pf_req *r, pf_search_ctx *ctx, const pf_path_request *pq,
                         const char *prefix, pf_jsonw *w, pf_proto_error *e) {
    pf_server *s = r->srv;
    const pf_mapver *mv = r->mv;
    const pf_grid *g = pf_planner_grid(mv->planner);
    pf_algorithm algo = resolve_algorithm(mv, pq);
    pf_query q;
    pf_result res;
    pf_path_answer a;
    pf_point *smoothed = NULL;
    char f[48];
    uint64_t t0;
    size_t m0;
    pf_status st;

    if ((st = check_endpoints(mv, pq, prefix, e))) return st;
    if (r->batch && answer_from_cache(r, mv, pq, w)) return PF_OK;
    q = pf_query_make(pq->start, pq->goal, algo);
    q.heuristic = pq->heuristic;
    q.weight = algo == PF_ALGO_WEIGHTED ? pq->weight : 1.0;
    q.max_expanded = pq->max_expanded;
    q.record_expanded = pq->debug;
    q.should_stop = deadline_passed;
    q.stop_ud = r;
    t0 = pf__now_ns();
    st = pf_planner_search(ctx, mv->planner, &q, &res);
    atomic_fetch_add_explicit(&s->metrics.searches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->metrics.expanded, res.expanded, memory_order_relaxed);
    switch (st) {
    case PF_OK:
    case PF_NO_PATH:
    case PF_EBUDGET:
        break;
    case PF_ECANCELED:
        return st;
    case PF_EUNSUPPORTED:
        snprintf(f, sizeof(f), "%salgorithm", prefix);
        return pf_proto_error_set(e, st, PF_ERR_UNSUPPORTED, f,
                                  "Algorithm '%s' is not available on map '%s'%s.",
                                  pf_algorithm_name(algo), mv->id,
                                  algo == PF_ALGO_HPA ? " (it has no HPA* hierarchy)" : "");
    case PF_EINVAL:
        snprintf(f, sizeof(f), "%sheuristic", prefix);
        return pf_proto_error_set(e, st, PF_ERR_INVALID_VALUE, f,
                                  "Heuristic '%s' overestimates on this map, so %s would not be "
                                  "optimal; pick another.",
                                  pf_heuristic_name(pq->heuristic), pf_algorithm_name(algo));
    case PF_ENOMEM:
        return pf_proto_error_set(e, st, NULL, NULL, "Out of memory.");
    default:
        return pf_proto_error_set(e, st, NULL, NULL, "The search failed: %s.", pf_status_str(st));
    }
    memset(&a, 0, sizeof(a));
    a.status = st;
    a.algorithm = res.algorithm;
    a.cost = res.cost;
    a.path = res.path;
    a.path_len = res.path_len;
    if (st == PF_OK && pq->smooth && res.path_len > 2) {
        size_t n = 0;
        double cost = res.cost;
        smoothed = malloc(res.path_len * sizeof(*smoothed));
        if (!smoothed) return pf_proto_error_set(e, PF_ENOMEM, NULL, NULL, "Out of memory.");
        /* String pulling can cut through expensive cells on maps with
         * varying costs; a smoothed path that costs more is not taken. */
        if (pf_path_smooth(g, res.path, res.path_len, smoothed, &n, &cost) == PF_OK &&
            cost <= res.cost + 1e-9 * (1.0 + res.cost)) {
            a.path = smoothed;
            a.path_len = n;
            a.cost = cost;
        }
    }
    a.expanded_cells = res.expanded_cells;
    a.expanded_cells_len = res.expanded_cells_len;
    a.map_width = pf_grid_width(g);
    a.map_version = mv->version;
    a.expanded = res.expanded;
    a.time_us = (pf__now_ns() - t0) / 1000;
    a.debug = pq->debug;
    pf_jsonw_obj_begin(w);
    m0 = w->len;
    pf_path_write_members(w, &a);
    if (cacheable(s, pq) && st != PF_EBUDGET && !pf_jsonw_failed(w)) {
        pf_cache_key k = cache_key(mv, pq);
        pf_cache_value v = {w->buf + m0, w->len - m0};
        pf_cache_put(mv->cache, &k, &v); /* a full cache or ENOMEM only loses the entry */
    }
    pf_path_write_stats(w, &a);
    pf_jsonw_obj_end(w);
    free(smoothed);
    return PF_OK;
}

static void answer_deadline(pf_req *r) {
    pf__answer_error(r, 504, PF_ERR_DEADLINE, NULL,
                     "The deadline of %llu ms passed before the answer was ready.",
                     (unsigned long long)((r->deadline_ns - r->t0_ns) / 1000000ull));
}

/* Job: one path query or a batch. */
static void run_paths(void *arg, pf_search_ctx *ctx) {
    pf_req *r = arg;
    pf_proto_error e;
    pf_jsonw w;
    pf_status st = PF_OK;

    if (pf__now_ns() >= r->deadline_ns) {
        answer_deadline(r); /* it waited in the queue too long: no search */
        goto out_finish;
    }
    if (!ctx) {
        pf__answer_error(r, 503, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_finish;
    }
    pf_jsonw_init(&w, r->batch ? 512 * r->nqueries : 4096);
    if (!r->batch) {
        st = run_one(r, ctx, &r->queries[0], "", &w, &e);
        if (st == PF_OK)
            pf__answer_json(r, 200, &w);
        else if (st == PF_ECANCELED)
            answer_deadline(r);
        else
            pf__answer_perror(r, &e);
        if (st != PF_OK) pf_jsonw_free(&w);
        goto out_finish;
    }
    pf_jsonw_obj_begin(&w);
    pf_jsonw_key(&w, "results");
    pf_jsonw_arr_begin(&w);
    for (size_t i = 0; i < r->nqueries; i++) {
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "queries[%zu].", i);
        st = run_one(r, ctx, &r->queries[i], prefix, &w, &e);
        if (st == PF_ECANCELED) break;
        if (st != PF_OK) {
            /* One bad query does not sink the batch: its slot holds the
             * error and the HTTP status it would have had alone. */
            pf_jsonw_obj_begin(&w);
            pf_jsonw_kint(&w, "status", pf_http_status(st));
            pf_jsonw_key(&w, "error");
            pf_proto_write_error_obj(&w, e.code, e.message, e.field);
            pf_jsonw_obj_end(&w);
        }
    }
    if (st == PF_ECANCELED) {
        pf_jsonw_free(&w);
        answer_deadline(r);
        goto out_finish;
    }
    pf_jsonw_arr_end(&w);
    pf_jsonw_kuint(&w, "map_version", r->mv->version);
    pf_jsonw_obj_end(&w);
    pf__answer_json(r, 200, &w);
out_finish:
    pf__finish(r);
}

/* GET query string -> pf_kv list. */
typedef struct kv_list {
    pf_kv kv[32];
    size_t n;
    bool overflow;
} kv_list;

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value) {
    kv_list *l = cls;
    (void)kind;
    if (l->n == sizeof(l->kv) / sizeof(l->kv[0])) {
        l->overflow = true;
        return MHD_NO;
    }
    l->kv[l->n].key = key;
    l->kv[l->n].value = value;
    l->n++;
    return MHD_YES;
}

static void handle_paths(pf_req *r) {
    pf_server *s = r->srv;
    pf_proto_error e;
    pf_status st;
    int64_t deadline_ms = 0;

    r->mv = pf_registry_get(s->registry, r->map_id);
    if (r->route == PF_ROUTE_PATH_GET) {
        kv_list l;
        memset(&l, 0, sizeof(l));
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, collect_arg, &l);
        if (l.overflow) {
            pf__answer_error(r, 400, PF_ERR_INVALID_REQUEST, NULL, "Too many parameters.");
            return;
        }
        r->queries = malloc(sizeof(*r->queries));
        if (!r->queries) goto oom;
        r->nqueries = 1;
        st = pf_path_request_from_query(l.kv, l.n, r->queries, &e);
        deadline_ms = r->queries[0].deadline_ms;
    } else if (r->route == PF_ROUTE_PATH_POST) {
        r->queries = malloc(sizeof(*r->queries));
        if (!r->queries) goto oom;
        r->nqueries = 1;
        st = pf_path_request_parse(r->body, r->body_len, r->queries, &e);
        deadline_ms = r->queries[0].deadline_ms;
    } else {
        r->batch = true;
        st = pf_path_batch_parse(r->body, r->body_len, (size_t)s->cfg.max_batch, &r->queries,
                                 &r->nqueries, &deadline_ms, &e);
    }
    if (st) {
        pf__answer_perror(r, &e);
        return;
    }
    if (!r->mv) {
        answer_no_map(r);
        return;
    }
    r->deadline_ns =
        r->t0_ns + (uint64_t)(deadline_ms ? deadline_ms : s->cfg.deadline_ms) * 1000000ull;
    if (!r->batch) {
        /* A cached answer needs no search: answer on this thread. */
        pf_jsonw w;
        pf_jsonw_init(&w, 4096);
        if (answer_from_cache(r, r->mv, &r->queries[0], &w)) {
            pf__answer_json(r, 200, &w);
            return;
        }
        pf_jsonw_free(&w);
    }
    pf__dispatch(r, PF_JOB_SEARCH, run_paths);
    return;
oom:
    pf__answer_error(r, 503, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
}

/* Map PATCH */

/* Job: the next version of a map with the PATCH's cells and doors. Runs as
 * a build (it clones the grid and repairs the hierarchy). When another
 * PATCH or a PUT publishes first, it starts over on the new version, so
 * concurrent PATCHes apply one after the other and none is lost. */
static void run_patch(void *arg, pf_search_ctx *ctx) {
    pf_req *r = arg;
    pf_server *s = r->srv;
    const pf_update *u = &r->patch;
    pf_door_change *doors = NULL;
    pf_jsonw w;
    char err[256];
    (void)ctx;

    doors = calloc(u->ndoors ? u->ndoors : 1, sizeof(*doors));
    if (!doors) {
        pf__answer_error(r, 503, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_finish;
    }
    for (int attempt = 0;; attempt++) {
        pf_mapver *cur = pf_registry_get(s->registry, r->map_id), *mv;
        const pf_grid *g;
        pf_planner *planner = NULL;
        pf_point *changed = NULL;
        size_t nchanged = 0;
        uint64_t t0 = pf__now_ns();
        pf_status st;
        if (!cur) {
            answer_no_map(r);
            goto out_finish;
        }
        g = pf_planner_grid(cur->planner);
        for (size_t i = 0; i < u->ncells; i++)
            if (!pf_grid_in_bounds(g, u->cells[i].p)) {
                char f[32];
                snprintf(f, sizeof(f), "cells[%zu]", i);
                pf__answer_error(r, 422, PF_ERR_OFF_MAP, f, "%s (%d,%d) is outside the %dx%d map.",
                                 f, (int)u->cells[i].p.x, (int)u->cells[i].p.y,
                                 (int)pf_grid_width(g), (int)pf_grid_height(g));
                pf_mapver_release(cur);
                goto out_finish;
            }
        for (size_t i = 0; i < u->ndoors; i++) {
            doors[i].door = pf_grid_door_find(g, u->doors[i].id);
            doors[i].open = u->doors[i].open;
            if (doors[i].door < 0) {
                char f[32];
                snprintf(f, sizeof(f), "doors[%zu].id", i);
                pf__answer_error(r, 422, PF_ERR_INVALID_VALUE, f, "Map '%s' has no door '%s'.",
                                 r->map_id, u->doors[i].id);
                pf_mapver_release(cur);
                goto out_finish;
            }
        }
        st = pf_planner_apply(cur->planner, u->cells, u->ncells, doors, u->ndoors, &planner,
                              &changed, &nchanged);
        if (st) {
            pf_mapver_release(cur);
            pf__answer_error(r, pf_http_status(st), pf_proto_code_for(st), NULL,
                             "Applying the changes failed: %s.", pf_status_str(st));
            goto out_finish;
        }
        mv = pf_mapver_create(r->map_id, planner, (size_t)s->cfg.cache_entries,
                              (size_t)s->cfg.cache_bytes, (pf__now_ns() - t0) / 1000, NULL);
        if (!mv || pf_mapver_set_log(mv, cur, changed, nchanged)) {
            if (!mv) free(changed);
            pf_mapver_release(mv);
            pf_mapver_release(cur);
            pf__answer_error(r, 503, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            goto out_finish;
        }
        /* Our own reference before mv becomes visible (see run_build). */
        pf_mapver_retain(mv);
        st = swap_map(s, cur, mv, err, sizeof(err));
        if (st != PF_OK) pf_mapver_release(mv); /* not published: the registry took none */
        if (st == PF_EIO) {
            pf_mapver_release(mv);
            pf_mapver_release(cur);
            answer_storage(r, err);
            goto out_finish;
        }
        if (st == PF_OK) {
            /* Paths cached for the old version must not be served again:
             * they are keyed by version, and dropping them frees the memory
             * while sessions still hold the old version. */
            pf_cache_clear(cur->cache);
            pf_mapver_release(cur);
            pf_jsonw_init(&w, 512);
            write_map_info(&w, mv);
            pf_mapver_release(mv);
            pf__answer_json(r, 200, &w);
            goto out_finish;
        }
        pf_mapver_release(mv);
        pf_mapver_release(cur);
        if (attempt >= 16) {
            pf__answer_error(r, 409, PF_ERR_CONFLICT, NULL,
                             "Map '%s' kept changing while this PATCH was applied; retry.",
                             r->map_id);
            goto out_finish;
        }
    }
out_finish:
    free(doors);
    pf__finish(r);
}

static void handle_map_patch(pf_req *r) {
    pf_proto_error e;
    if (pf_map_patch_parse(r->body, r->body_len, &r->patch, &e)) {
        pf__answer_perror(r, &e);
        return;
    }
    pf__dispatch(r, PF_JOB_BUILD, run_patch);
}

/* Sessions */

static void answer_no_session(pf_req *r) {
    pf__answer_error(r, 404, PF_ERR_SESSION_NOT_FOUND, NULL,
                     "No session '%s' on map '%s' (deleted, expired, or its map was replaced).",
                     r->session_id, r->map_id);
}

static void answer_busy(pf_req *r) {
    pf__answer_error(r, 409, PF_ERR_SESSION_BUSY, NULL,
                     "Another request is using session '%s'; retry when it is answered.",
                     r->session_id);
}

int pf__session_run(pf_server *s, pf_session *sess, const pf_update_list *l, bool created,
                    pf_jsonw *w) {
    pf_proto_error e;
    pf_session_answer a;
    pf_result res;
    const char *how = "none";
    uint64_t t0 = pf__now_ns();
    pf_status st;

    if (pf_session_sync(sess, s->registry, &how) == PF_ECANCELED) {
        pf_sessions_kill(s->sessions, sess);
        pf_proto_write_error(w, PF_ERR_SESSION_NOT_FOUND,
                             "The session is gone: its map was deleted or replaced.", NULL);
        return 404;
    }
    if (l) {
        if ((st = pf_session_validate(sess, l, &e))) {
            pf_proto_write_perror(w, &e);
            return pf_http_status(st);
        }
        if (pf_session_apply(sess, l)) {
            pf_proto_write_error(w, PF_ERR_NO_MEMORY, "Out of memory.", NULL);
            return 503;
        }
    }
    st = pf_session_plan(sess, &res);
    atomic_fetch_add_explicit(&s->metrics.searches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->metrics.expanded, res.expanded, memory_order_relaxed);
    if (st == PF_ENOMEM) {
        pf_proto_write_error(w, PF_ERR_NO_MEMORY, "Out of memory.", NULL);
        return 503;
    }
    memset(&a, 0, sizeof(a));
    a.session_id = pf_session_id(sess);
    a.map_id = pf_session_map_id(sess);
    a.status = st;
    a.cost = res.cost;
    a.path = res.path;
    a.path_len = res.path_len;
    a.position = pf_session_position(sess);
    a.goal = pf_session_goal(sess);
    a.map_version = pf_session_map_version(sess);
    a.ttl_s = pf_session_ttl(sess);
    a.expanded = res.expanded;
    a.time_us = (pf__now_ns() - t0) / 1000;
    a.updates = l ? l->n : 0;
    a.rebase = how;
    a.memory_bytes = pf_session_memory(sess);
    pf_session_write_answer(w, &a);
    return created ? 201 : 200;
}

/* Job: a session's create (first plan), read or updates. */
static void run_session(void *arg, pf_search_ctx *ctx) {
    pf_req *r = arg;
    pf_server *s = r->srv;
    pf_jsonw w;
    int code;
    (void)ctx;
    pf_jsonw_init(&w, 8192);
    code = pf__session_run(s, r->session, r->route == PF_ROUTE_SESSION_UPDATES ? &r->updates : NULL,
                           r->session_created, &w);
    if (r->session_created && code != 201) pf_sessions_kill(s->sessions, r->session);
    pf_sessions_release(s->sessions, r->session, pf__now_ns());
    r->session = NULL;
    pf__answer_json(r, code, &w);
    if (code == 503) r->retry_after = true;
    if (code == 201)
        snprintf(r->location, sizeof(r->location), "/v1/maps/%s/sessions/%s", r->map_id,
                 r->session_id);
    pf__finish(r);
}

/* Queues run_session; a refused job lets the session go. */
static void dispatch_session(pf_req *r) {
    if (pf__dispatch(r, PF_JOB_SEARCH, run_session)) return;
    if (r->session_created) pf_sessions_kill(r->srv->sessions, r->session);
    pf_sessions_release(r->srv->sessions, r->session, pf__now_ns());
    r->session = NULL;
}

static void handle_sessions_create(pf_req *r) {
    pf_server *s = r->srv;
    pf_session_request q;
    pf_proto_error e;
    pf_path_request pq;
    pf_status st;
    bool total;
    pf_mapver *mv;

    if (pf_session_request_parse(r->body, r->body_len, s->cfg.session_max_ttl_s, &q, &e)) {
        pf__answer_perror(r, &e);
        return;
    }
    mv = pf_registry_get(s->registry, r->map_id);
    if (!mv) {
        answer_no_map(r);
        return;
    }
    pq = pf_path_request_default();
    pq.start = q.start;
    pq.goal = q.goal;
    if ((st = check_endpoints(mv, &pq, "", &e))) {
        pf_mapver_release(mv);
        pf__answer_perror(r, &e);
        return;
    }
    st = pf_sessions_add(s->sessions, mv, q.start, q.goal, q.ttl_s ? q.ttl_s : s->cfg.session_ttl_s,
                         pf__now_ns(), &r->session, &total);
    pf_mapver_release(mv);
    if (st == PF_ELIMIT && !total) {
        pf__answer_error(r, 429, PF_ERR_TOO_MANY_SESSIONS, NULL,
                         "Map '%s' has %lld sessions, its limit; delete one or let one expire.",
                         r->map_id, (long long)s->cfg.max_sessions_per_map);
        r->retry_after = true;
        return;
    }
    if (st == PF_ELIMIT) {
        pf__answer_error(r, 503, PF_ERR_OVERLOADED, NULL,
                         "The server holds %lld sessions, its limit. Retry later.",
                         (long long)s->cfg.max_sessions);
        return;
    }
    if (st) {
        pf__answer_error(r, 503, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        return;
    }
    snprintf(r->session_id, sizeof(r->session_id), "%s", pf_session_id(r->session));
    r->session_created = true;
    dispatch_session(r);
}

/* Holds the route's session; answers 404 / 409 otherwise. */
static bool hold_session(pf_req *r) {
    switch (pf_sessions_acquire(r->srv->sessions, r->map_id, r->session_id, pf__now_ns(),
                                &r->session)) {
    case PF_SESSION_OK:
        return true;
    case PF_SESSION_BUSY:
        answer_busy(r);
        return false;
    default:
        answer_no_session(r);
        return false;
    }
}

static void handle_session_get(pf_req *r) {
    if (hold_session(r)) dispatch_session(r);
}

static void handle_session_updates(pf_req *r) {
    pf_proto_error e;
    if (pf_update_list_parse(r->body, r->body_len, r->body_kind == PF_BODY_NDJSON,
                             (size_t)r->srv->cfg.max_updates, &r->updates, &e)) {
        pf__answer_perror(r, &e);
        return;
    }
    if (hold_session(r)) dispatch_session(r);
}

static void handle_session_delete(pf_req *r) {
    pf_jsonw w;
    if (!pf_sessions_remove(r->srv->sessions, r->map_id, r->session_id)) {
        answer_no_session(r);
        return;
    }
    pf_jsonw_init(&w, 1);
    pf__answer_json(r, 204, &w);
    r->resp_type = NULL;
}

/* Whether header `name` lists `token` (comma separated, any case). */
static bool header_has(pf_req *r, const char *name, const char *token) {
    const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
    size_t n = strlen(token);
    while (v && *v) {
        while (*v == ' ' || *v == '\t' || *v == ',') v++;
        if (strncasecmp(v, token, n) == 0 && (v[n] == '\0' || v[n] == ',' || v[n] == ' '))
            return true;
        v = strchr(v, ',');
    }
    return false;
}

/* GET .../stream: the WebSocket opening handshake (RFC 6455 4.2). */
static void handle_session_stream(pf_req *r) {
    pf_server *s = r->srv;
    const char *key, *ver;
    if (!pf_sessions_exists(s->sessions, r->map_id, r->session_id, pf__now_ns())) {
        answer_no_session(r);
        return;
    }
    if (!header_has(r, MHD_HTTP_HEADER_UPGRADE, "websocket") ||
        !header_has(r, MHD_HTTP_HEADER_CONNECTION, "upgrade")) {
        pf__answer_error(r, 426, PF_ERR_UPGRADE_REQUIRED, NULL,
                         "This is a WebSocket endpoint: send the RFC 6455 handshake (Upgrade: "
                         "websocket, Connection: Upgrade, Sec-WebSocket-Version: 13).");
        return;
    }
    ver = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Sec-WebSocket-Version");
    if (!ver || strcmp(ver, "13") != 0) {
        pf__answer_error(r, 426, PF_ERR_UPGRADE_REQUIRED, "Sec-WebSocket-Version",
                         "Only WebSocket version 13 (RFC 6455) is spoken here.");
        return;
    }
    key = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Sec-WebSocket-Key");
    if (pf_ws_accept_key(key, r->ws_accept)) {
        pf__answer_error(r, 400, PF_ERR_INVALID_REQUEST, "Sec-WebSocket-Key",
                         "Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455 4.1).");
        return;
    }
    if (pf_hub_count(s->hub) >= (size_t)s->cfg.max_streams) {
        pf__answer_error(r, 503, PF_ERR_OVERLOADED, NULL,
                         "The server has %lld open streams, its limit. Retry later.",
                         (long long)s->cfg.max_streams);
        return;
    }
    r->upgrade = true;
    r->answered = true;
}

void pf__handle(pf_req *r) {
    switch (r->route) {
    case PF_ROUTE_HEALTHZ:
        handle_healthz(r);
        break;
    case PF_ROUTE_READYZ:
        handle_readyz(r);
        break;
    case PF_ROUTE_METRICS:
        handle_metrics(r);
        break;
    case PF_ROUTE_INFO:
        handle_info(r);
        break;
    case PF_ROUTE_MAPS_LIST:
        handle_maps_list(r);
        break;
    case PF_ROUTE_MAP_GET:
        handle_map_get(r);
        break;
    case PF_ROUTE_MAP_DELETE:
        handle_map_delete(r);
        break;
    case PF_ROUTE_MAPS_CREATE:
    case PF_ROUTE_MAP_PUT:
        pf__dispatch(r, PF_JOB_BUILD, run_build);
        break;
    case PF_ROUTE_PATH_GET:
    case PF_ROUTE_PATH_POST:
    case PF_ROUTE_PATHS_POST:
        handle_paths(r);
        break;
    case PF_ROUTE_MAP_PATCH:
        handle_map_patch(r);
        break;
    case PF_ROUTE_SESSIONS_CREATE:
        handle_sessions_create(r);
        break;
    case PF_ROUTE_SESSION_GET:
        handle_session_get(r);
        break;
    case PF_ROUTE_SESSION_DELETE:
        handle_session_delete(r);
        break;
    case PF_ROUTE_SESSION_UPDATES:
        handle_session_updates(r);
        break;
    case PF_ROUTE_SESSION_STREAM:
        handle_session_stream(r);
        break;
    case PF_ROUTE_MAP_CELLS:
        handle_map_cells(r);
        break;
    case PF_ROUTE_VIEWER:
        handle_viewer(r);
        break;
    default:
        pf__answer_error(r, 404, PF_ERR_NOT_FOUND, NULL, "No such route.");
        break;
    }
}

/* Lifecycle */

pf_status pf_server_create(const pf_config *cfg, pf_server **out) {
    pf_server *s = calloc(1, sizeof(*s));
    pf_status st;
    *out = NULL;
    if (!s) return PF_ENOMEM;
    s->cfg = *cfg;
    s->quiesced = MHD_INVALID_SOCKET;
    s->started_ns = pf__now_ns();
    s->limits = pf_grid_default_limits();
    s->limits.max_cells = cfg->max_map_cells;
    s->limits.max_side = (int32_t)cfg->max_map_side;
    pf_metrics_init(&s->metrics);
    atomic_init(&s->in_flight, 0);
    atomic_init(&s->cache_hits, 0);
    atomic_init(&s->cache_misses, 0);
    atomic_init(&s->draining, false);
    if (uv_mutex_init(&s->store_mu)) {
        free(s);
        return PF_ENOMEM;
    }
    s->registry = pf_registry_create((size_t)cfg->max_maps);
    if (!s->registry) {
        st = PF_ENOMEM;
        goto out_free_server;
    }
    s->sessions = pf_sessions_create((size_t)cfg->max_sessions, (size_t)cfg->max_sessions_per_map);
    if (!s->sessions) {
        st = PF_ENOMEM;
        goto out_free_registry;
    }
    if ((st = pf_pool_create((int)cfg->workers, (int)cfg->queue_limit, &s->pool)))
        goto out_free_sessions;
    if ((st = pf_hub_create(s, &s->hub))) goto out_free_pool;
    *out = s;
    return PF_OK;

out_free_pool:
    pf_pool_destroy(s->pool);
out_free_sessions:
    pf_sessions_destroy(s->sessions);
out_free_registry:
    pf_registry_destroy(s->registry);
out_free_server:
    uv_mutex_destroy(&s->store_mu);
    free(s);
    return st;
}

void pf_server_destroy(pf_server *s) {
    if (!s) return;
    /* Jobs still queued resume their connections: run them before the
     * daemon goes. */
    pf_pool_shutdown(s->pool);
    /* Streams close through libmicrohttpd (MHD_upgrade_action): before the
     * daemon stops. */
    pf_hub_destroy(s->hub);
    if (s->daemon) MHD_stop_daemon(s->daemon);
    if (s->quiesced != MHD_INVALID_SOCKET) close(s->quiesced);
    pf_pool_destroy(s->pool);
    pf_sessions_destroy(s->sessions);
    pf_registry_destroy(s->registry);
    pf_store_close(s->store);
    uv_mutex_destroy(&s->store_mu);
    free(s);
}
