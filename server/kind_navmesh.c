/* kind_navmesh.c -- the navmesh kind's table (kind_navmesh.h): its
 * environment (limits, tile runner, query scratch), its world (a mesh
 * version and its upload), uploads, PATCH and the stores. Paths and
 * sessions are in the other kind_navmesh_*.c files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "jsonr.h"
#include "jsonw.h"
#include "kind_navmesh_internal.h"

static const char *const algorithm_names[] = {"polyanya", "detour"};

static const char *algorithm_name(size_t i) { return algorithm_names[i]; }

/* Sources */

pf_navsrc *pf_navsrc_create(const char *members, size_t len) {
    pf_navsrc *s = malloc(sizeof(*s) + (len ? len : 1));
    if (!s) return NULL;
    atomic_init(&s->refs, 1);
    s->len = len;
    memcpy(s->members, members, len);
    return s;
}

void pf_navsrc_retain(pf_navsrc *s) {
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void pf_navsrc_release(pf_navsrc *s) {
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) free(s);
}

/* Environment */

static pf_status nav_env_create(const pf_kind_deps *d, void **state, char *err, size_t errlen) {
    const pf_config *cfg = d->cfg;
    pf__nav_env *ne = calloc(1, sizeof(*ne));
    pf_status st;
    if (!ne) {
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    ne->glimits = pf_grid_default_limits();
    ne->glimits.max_cells = cfg->max_map_cells;
    ne->glimits.max_side = (int32_t)cfg->max_map_side;
    ne->limits = pf_nav_default_limits();
    ne->limits.max_vertices = (uint32_t)cfg->nav_max_vertices;
    ne->limits.max_triangles = (uint32_t)cfg->nav_max_triangles;
    ne->limits.max_voxels = (uint64_t)cfg->nav_max_voxels;
    ne->limits.max_tiles = (uint32_t)cfg->nav_max_tiles;
    ne->limits.build_ms = (uint32_t)cfg->nav_build_ms;
    ne->limits.max_obstacles = (uint32_t)cfg->nav_max_obstacles;
    ne->limits.max_areas = (uint32_t)cfg->nav_max_areas;
    ne->limits.max_area_boxes = (uint32_t)cfg->nav_max_area_boxes;
    ne->limits.max_search_extent = (float)cfg->nav_max_search_extent;
    ne->limits.max_tile_spans = (uint32_t)cfg->nav_max_tile_spans;
    ne->limits.max_column_spans = (uint32_t)cfg->nav_max_column_spans;
    ne->limits.max_links = (uint32_t)cfg->nav_max_links;
    ne->max_extent = (float)cfg->nav_max_search_extent;
    /* Tiles run on the pool, the caller's worker and workers - 1 helpers;
     * without a pool (tests) on the caller. */
    if (d->pool) {
        ne->navrun = (pf_navrun){d->pool, (int)cfg->workers - 1};
        ne->runner = pf_navrun_runner(&ne->navrun);
    }
    if ((st = pf_navq_create((uint32_t)cfg->nav_max_nodes, (size_t)cfg->workers + 2, &ne->navq))) {
        free(ne);
        snprintf(err, errlen, "out of memory");
        return st;
    }
    pf_navq_set_mem(ne->navq, d->mem);
    *state = ne;
    return PF_OK;
}

static void nav_env_destroy(void *state) {
    pf__nav_env *ne = state;
    if (!ne) return;
    pf_navq_destroy(ne->navq);
    free(ne);
}

pf_navq *pf_navmesh_navq(const pf_kind_env *env) { return pf__nav_env_of(env)->navq; }

/* /v1/info: the algorithms a navmesh path request may name. */
static void nav_write_server_info(const pf_kind_env *env, pf_jsonw *w) {
    (void)env;
    pf_jsonw_key(w, "navmesh_algorithms");
    pf_jsonw_arr_begin(w);
    pf_jsonw_str(w, pf_nav_algorithm_name(PF_NAV_POLYANYA));
    pf_jsonw_str(w, pf_nav_algorithm_name(PF_NAV_DETOUR));
    pf_jsonw_arr_end(w);
}

void pf__nav_count_search(pf_metrics *m, pf_nav_algorithm algo, pf_metrics_outcome outcome,
                          uint64_t expanded, uint64_t us) {
    size_t a =
        (size_t)algo < sizeof(algorithm_names) / sizeof(algorithm_names[0]) ? (size_t)algo : 0;
    if (!m) return;
    pf_metrics_count_search_outcome(m, (int)pf_kind_slot(&pf_kind_navmesh, a), outcome, expanded,
                                    us);
}

/* World */

const pf_navmesh *pf_navmesh_of(const pf_mapver *mv) {
    return ((const pf__nav_world *)pf_mapver_world(mv))->nav;
}

pf_navsrc *pf_navmesh_source(const pf_mapver *mv) {
    return ((const pf__nav_world *)pf_mapver_world(mv))->src;
}

static void nav_world_free(void *world) {
    pf__nav_world *nw = world;
    if (!nw) return;
    pf_navmesh_release(nw->nav);
    pf_navsrc_release(nw->src);
    free(nw);
}

/* A navmesh version never grows: its charge is what it held when built. */
static size_t nav_world_memory(const void *world) { return ((const pf__nav_world *)world)->bytes; }

/* A world around nav and src (both taken, also on failure). NULL on
 * ENOMEM. */
static pf__nav_world *world_create(const pf_navmesh *nav, pf_navsrc *src) {
    pf__nav_world *nw = calloc(1, sizeof(*nw));
    pf_nav_info ni;
    if (!nw) {
        pf_navmesh_release(nav);
        pf_navsrc_release(src);
        return NULL;
    }
    nw->nav = nav;
    nw->src = src;
    pf_navmesh_info(nav, &ni);
    nw->bytes = ni.total_bytes + src->len;
    return nw;
}

static pf_mapver *version_create(const pf_kind_env *env, const char *id, const pf_navmesh *nav,
                                 pf_navsrc *src, size_t cache_entries, size_t cache_bytes,
                                 uint64_t build_us, const uint8_t hash[32]) {
    pf__nav_world *nw = world_create(nav, src);
    if (!nw) return NULL;
    return pf_mapver_create(id, &pf_kind_navmesh, env, nw, cache_entries, cache_bytes, build_us,
                            hash);
}

pf_mapver *pf_navmesh_mapver_create(const char *id, const pf_navmesh *nav, pf_navsrc *src,
                                    size_t cache_entries, size_t cache_bytes, uint64_t build_us,
                                    const uint8_t hash[32]) {
    return version_create(NULL, id, nav, src, cache_entries, cache_bytes, build_us, hash);
}

/* A version built in env, charged to its budget by what it holds: every
 * agent type's mesh at its tiles' real size, the kept voxels, the ground
 * index and the lists (nav/navmesh.h's total_bytes; the shared build data
 * once for each version that holds it), and its upload. The build itself
 * stops when what it keeps passes the budget's room (build's limits). */
static pf_status wrap(const pf_kind_env *env, const char *id, const pf_navmesh *nav, pf_navsrc *src,
                      uint64_t build_us, const uint8_t hash[32], pf_mapver **out,
                      pf_proto_error *e) {
    const pf_config *cfg = env->d.cfg;
    *out = version_create(env, id, nav, src, (size_t)cfg->cache_entries, (size_t)cfg->cache_bytes,
                          build_us, hash);
    if (!*out) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    pf_mapver_charge(*out, env->d.mem, nav_world_memory(pf_mapver_world(*out)));
    return PF_OK;
}

static void nav_write_info(const pf_mapver *mv, pf_jsonw *w) {
    pf_cache_stats cs;
    uint64_t lookups;
    pf_cache_get_stats(mv->cache, &cs);
    lookups = cs.hits + cs.misses;
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "id", mv->id);
    pf_jsonw_kuint(w, "version", mv->version);
    pf_jsonw_kstr(w, "kind", "navmesh");
    pf_jsonw_kuint(w, "memory_bytes", nav_world_memory(pf_mapver_world(mv)));
    pf_jsonw_kuint(w, "build_us", mv->build_us);
    pf_jsonw_kstr(w, "default_algorithm", "polyanya");
    pf_jsonw_key(w, "cache");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "entries", cs.entries);
    pf_jsonw_kuint(w, "hits", cs.hits);
    pf_jsonw_kuint(w, "misses", cs.misses);
    pf_jsonw_kdouble(w, "hit_ratio", lookups ? (double)cs.hits / (double)lookups : 0.0);
    pf_jsonw_obj_end(w);
    pf_jsonw_key(w, "navmesh");
    pf_nav_write_info(w, pf_navmesh_of(mv));
    pf_jsonw_obj_end(w);
}

static void nav_write_summary(const pf_mapver *mv, pf_jsonw *w) {
    pf_nav_info ni;
    pf_navmesh_info(pf_navmesh_of(mv), &ni);
    pf_jsonw_key(w, "navmesh");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "polygons", ni.polygons);
    pf_jsonw_kuint(w, "vertices", ni.vertices);
    pf_jsonw_kuint(w, "mesh_bytes", ni.mesh_bytes);
    pf_jsonw_obj_end(w);
}

/* Uploads: OBJ geometry with its settings in the query string, or the
 * JSON envelope ("kind":"navmesh"). The upload is a pf_nav_upload. */

static pf_status nav_upload_parse(const pf_kind_env *env, const pf_kind_upload *in, void **up,
                                  pf_proto_error *e) {
    const pf__nav_env *ne = pf__nav_env_of(env);
    pf_nav_upload *u = calloc(1, sizeof(*u));
    pf_status st;
    *up = NULL;
    if (!u) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (in->body_kind == PF_BODY_OBJ && in->too_many_args)
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, NULL, "Too many parameters.");
    else if (in->body_kind == PF_BODY_OBJ)
        st = pf_nav_upload_from_obj(in->body, in->len, in->args, in->nargs, &ne->limits, u, e);
    else
        st = pf_nav_upload_from_json(*in->root, &ne->glimits, &ne->limits, u, e);
    if (st) {
        pf_nav_upload_free(u);
        free(u);
        return st;
    }
    *up = u;
    return PF_OK;
}

/* The navmesh limits of a build now: max_bytes is the budget's room. */
static pf_nav_limits limits_now(const pf_kind_env *env) {
    pf_nav_limits lim = pf__nav_env_of(env)->limits;
    if (env->d.mem) {
        const uint64_t budget = pf_mem_budget(env->d.mem), used = pf_mem_used(env->d.mem);
        lim.max_bytes = used < budget ? budget - used : 1;
    }
    return lim;
}

/* Builds u (borrowed) with its tiles on the pool and puts u's initial
 * obstacles and area states on it. */
static pf_status build(const pf_kind_env *env, const pf_nav_upload *u, const char *id,
                       const uint8_t hash[32], uint64_t t0_ns, pf_mapver **out, pf_proto_error *e) {
    const pf__nav_env *ne = pf__nav_env_of(env);
    pf_nav_geom geom;
    pf_nav_build_input in = pf_nav_upload_input(u, &geom);
    pf_navmesh *nm = NULL;
    pf_nav_error err;
    pf_jsonw w;
    pf_navsrc *src;
    pf_status st;
    *out = NULL;
    const pf_nav_limits lim = limits_now(env);
    if ((st = pf_nav_build(&in, &lim, &ne->runner, &nm, &err)))
        return pf_nav_error_to_proto(e, st, &err);
    if (u->nobstacles || u->narea_state) {
        pf_nav_change ch;
        pf_navmesh *next = NULL;
        memset(&ch, 0, sizeof(ch));
        ch.put = u->obstacles;
        ch.nput = u->nobstacles;
        ch.areas = u->area_state;
        ch.nareas = u->narea_state;
        st = pf_nav_apply(nm, &ch, &ne->limits, &ne->runner, &next, &err);
        pf_navmesh_release(nm);
        if (st) {
            /* The fields of the change are the upload's: obstacles[i] and
             * areas[i] of area_state. */
            if (strncmp(err.field, "areas[", 6) == 0) {
                char f[sizeof(err.field)];
                snprintf(f, sizeof(f), "area_state%.80s", err.field + 5);
                memcpy(err.field, f, sizeof(f));
            }
            return pf_nav_error_to_proto(e, st, &err);
        }
        nm = next;
    }
    pf_jsonw_init(&w, u->obj_len + 4096);
    pf_nav_write_source_members(&w, u);
    if (pf_jsonw_failed(&w) || !(src = pf_navsrc_create(w.buf, w.len))) {
        pf_jsonw_free(&w);
        pf_navmesh_release(nm);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    pf_jsonw_free(&w);
    return wrap(env, id, nm, src, (pf_clock_now_ns() - t0_ns) / 1000, hash, out, e);
}

static pf_status nav_upload_build(const pf_kind_env *env, void *up, const char *id,
                                  const uint8_t hash[32], uint64_t t0_ns, pf_mapver **out,
                                  pf_proto_error *e) {
    pf_status st = build(env, up, id, hash, t0_ns, out, e);
    pf_nav_upload_free(up);
    free(up);
    return st;
}

/* PATCH: obstacles and areas (pf_nav_patch). */

static pf_status nav_patch_parse(const pf_kind_env *env, const char *body, size_t len, size_t max,
                                 void **patch, pf_proto_error *e) {
    pf_nav_patch *p = calloc(1, sizeof(*p));
    pf_status st;
    (void)env;
    (void)max; /* the obstacles and areas have limits of their own (--nav-max-*) */
    *patch = NULL;
    if (!p) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if ((st = pf_nav_patch_parse(body, len, p, e))) {
        free(p);
        return st;
    }
    *patch = p;
    return PF_OK;
}

static void nav_patch_free(void *patch) {
    pf_nav_patch_free(patch);
    free(patch);
}

static pf_status nav_patch_apply(const pf_kind_env *env, const pf_mapver *cur, const void *patch,
                                 bool bounded, pf_mapver **out, pf_proto_error *e) {
    const pf__nav_env *ne = pf__nav_env_of(env);
    pf_nav_change ch = pf_nav_patch_change(patch);
    pf_navmesh *next = NULL;
    pf_nav_error err;
    uint64_t t0 = pf_clock_now_ns();
    pf_status st;
    (void)bounded; /* --nav-build-ms bounds every change (its limits) */
    *out = NULL;
    if ((st = pf_nav_apply(pf_navmesh_of(cur), &ch, &ne->limits, &ne->runner, &next, &err))) {
        /* The change's "remove[i]" is the request's "remove_obstacles[i]". */
        if (strncmp(err.field, "remove[", 7) == 0) {
            char f[sizeof(err.field)];
            snprintf(f, sizeof(f), "remove_obstacles%.70s", err.field + 6);
            memcpy(err.field, f, sizeof(f));
        }
        return pf_nav_error_to_proto(e, st, &err);
    }
    pf_navsrc_retain(pf_navmesh_source(cur));
    return wrap(env, cur->id, next, pf_navmesh_source(cur), (pf_clock_now_ns() - t0) / 1000, NULL,
                out, e);
}

/* Stores: the envelope (the upload's source members, then the version's
 * obstacles and area states), which parses back into the same map. */

static pf_status nav_store_encode(const pf_mapver *mv, uint64_t version, unsigned char **img,
                                  size_t *len) {
    const pf_navsrc *src = pf_navmesh_source(mv);
    pf_jsonw w;
    pf_status st;
    pf_jsonw_init(&w, src->len + 4096);
    pf_jsonw_obj_begin(&w);
    pf_jsonw_raw_members(&w, src->members, src->len);
    pf_nav_write_state_members(&w, pf_navmesh_of(mv));
    pf_jsonw_obj_end(&w);
    if (pf_jsonw_failed(&w)) {
        pf_jsonw_free(&w);
        return PF_ENOMEM;
    }
    st = pf_navmesh_image_encode(w.buf, w.len, version, img, len);
    pf_jsonw_free(&w);
    return st;
}

/* The envelope built as an upload of it, then the PATCHes logged after it
 * applied in order, each a version. */
static pf_status nav_store_load(const pf_kind_env *env, const pf_kind_stored *in, pf_mapver **out,
                                uint64_t *version, pf_kind_store_error *why) {
    const pf__nav_env *ne = pf__nav_env_of(env);
    const char *bytes;
    size_t n;
    cJSON *root = NULL;
    pf_nav_upload u;
    pf_mapver *mv = NULL;
    pf_status st;
    *out = NULL;
    memset(why, 0, sizeof(why[0]));
    memset(&u, 0, sizeof(u));
    if (pf_navmesh_image_decode(in->img, in->img_len, &bytes, &n, version)) {
        why->fault = PF_KIND_STORE_DAMAGED;
        return pf_proto_error_set(&why->e, PF_EPARSE, PF_ERR_STORAGE, NULL,
                                  "damaged (its digest or layout does not match)");
    }
    if (!(st = pf_jsonr_parse(bytes, n, &root, &why->e)) &&
        !(st = pf_nav_upload_from_json(root, &ne->glimits, &ne->limits, &u, &why->e)))
        st = build(env, &u, in->id, in->hash, pf_clock_now_ns(), &mv, &why->e);
    cJSON_Delete(root);
    pf_nav_upload_free(&u);
    if (st) {
        /* Out of memory, or the build ran past --nav-build-ms (a busy
         * start): it may well load next time. */
        why->fault = st == PF_ENOMEM || strcmp(why->e.field, "limits.nav_build_ms") == 0
                         ? PF_KIND_STORE_LATER
                         : PF_KIND_STORE_NO_BUILD;
        return st;
    }
    if ((st = pf_kind_replay_log(&pf_kind_navmesh, env, in, &mv, why))) return st;
    *out = mv;
    return PF_OK;
}

const pf_kind_ops pf_kind_navmesh = {
    .name = "navmesh",
    .line_of_sight = pf__nav_line_of_sight,
    .features = PF_KIND_CROWDS | PF_KIND_MESH,
    .upload_bodies = PF_BODY_OBJ,
    .default_json = false,
    .algorithm_name = algorithm_name,
    .nalgorithms = sizeof(algorithm_names) / sizeof(algorithm_names[0]),
    .store_suffix = ".nav.bin",
    .env_create = nav_env_create,
    .env_destroy = nav_env_destroy,
    .write_server_info = nav_write_server_info,
    .world_free = nav_world_free,
    .world_memory = nav_world_memory,
    .write_info = nav_write_info,
    .write_summary = nav_write_summary,
    .upload_parse = nav_upload_parse,
    .upload_build = nav_upload_build,
    .patch_parse = nav_patch_parse,
    .patch_apply = nav_patch_apply,
    .patch_free = nav_patch_free,
    .store_encode = nav_store_encode,
    .store_load = nav_store_load,
    .path_parse_one = pf__nav_path_parse_one,
    .path_parse_batch = pf__nav_path_parse_batch,
    .paths_free = pf__nav_paths_free,
    .path_cached = pf__nav_path_cached,
    .scratch_get = pf__nav_scratch_get,
    .scratch_put = pf__nav_scratch_put,
    .path_run = pf__nav_path_run,
    .session_create = pf__nav_session_create,
    .session_free = pf__nav_session_free,
    .session_memory = pf__nav_session_memory,
    .session_where = pf__nav_session_where,
    .session_rebase = pf__nav_session_rebase,
    .session_run = pf__nav_session_run,
    .write_mesh = pf__nav_write_mesh,
};
