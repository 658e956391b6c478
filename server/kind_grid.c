/* kind_grid.c -- the grid kind's table (kind_grid.h): its environment, its
 * world (the planner), uploads, PATCH and the stores. Paths, sessions,
 * features are in the other kind_grid_*.c files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "build_stop.h"
#include "clock.h"
#include "kind_grid_internal.h"
#include "map_json.h"
#include "memory.h"

/* The grid's slots of the by-algorithm metrics: core's algorithms, in
 * pf_algorithm's order. */
static const char *algorithm_name(size_t i) { return pf_algorithm_name((pf_algorithm)i); }

pf_planner *pf_grid_planner(const pf_mapver *mv) { return pf_mapver_world(mv); }

const pf_grid *pf__grid_of(const pf_mapver *mv) { return pf_planner_grid(pf_grid_planner(mv)); }

pf_algorithm pf__grid_default_algorithm(const pf_mapver *mv) {
    /* auto picks per query, with or without a hierarchy. */
    (void)mv;
    return PF_ALGO_AUTO;
}

const pf_grid_limits *pf_grid_limits_of(const pf_kind_env *env) {
    return &((const pf__grid_env *)env->state)->limits;
}

/* Environment */

static pf_status grid_env_create(const pf_kind_deps *d, void **state, char *err, size_t errlen) {
    pf__grid_env *ge = calloc(1, sizeof(*ge));
    if (!ge) {
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    ge->limits = pf_grid_default_limits();
    ge->limits.max_cells = d->cfg->max_map_cells;
    ge->limits.max_side = (int32_t)d->cfg->max_map_side;
    *state = ge;
    return PF_OK;
}

static void grid_env_destroy(void *state) { free(state); }

/* /v1/info: the algorithms a path request may name. */
static void grid_write_server_info(const pf_kind_env *env, pf_jsonw *w) {
    (void)env;
    pf_jsonw_key(w, "algorithms");
    pf_jsonw_arr_begin(w);
    for (int a = PF_ALGO_BFS; a <= PF_ALGO_HPA; a++) pf_jsonw_str(w, pf_algorithm_name(a));
    pf_jsonw_str(w, pf_algorithm_name(PF_ALGO_AUTO));
    pf_jsonw_str(w, pf_algorithm_name(PF_ALGO_SUBGOAL));
    pf_jsonw_arr_end(w);
}

void pf__grid_count_search(const pf_kind_env *env, pf_algorithm algo, pf_status st,
                           uint64_t expanded, uint64_t us) {
    if (!env || !env->d.metrics) return;
    if ((unsigned)algo >= PF_ALGO_COUNT) algo = PF_ALGO_ASTAR;
    pf_metrics_count_search(env->d.metrics, pf_kind_slot(&pf_kind_grid, (size_t)algo), st, expanded,
                            us);
}

/* World */

static void grid_world_free(void *world) { pf_planner_destroy(world); }

static size_t grid_world_memory(const void *world) { return pf_planner_memory(world); }

static void grid_write_info(const pf_mapver *mv, pf_jsonw *w) {
    pf_cache_stats cs, fs;
    pf_map_info info;
    pf_cache_get_stats(mv->cache, &cs);
    memset(&fs, 0, sizeof(fs));
    if (mv->fields) pf_cache_get_stats(mv->fields, &fs);
    memset(&info, 0, sizeof(info));
    info.field_cache_hits = fs.hits;
    info.field_cache_misses = fs.misses;
    info.field_cache_entries = fs.entries;
    info.id = mv->id;
    info.version = mv->version;
    info.planner = pf_grid_planner(mv);
    info.build_us = mv->build_us;
    info.default_algorithm = pf_algorithm_name(pf__grid_default_algorithm(mv));
    info.cache_hits = cs.hits;
    info.cache_misses = cs.misses;
    info.cache_entries = cs.entries;
    pf_map_write_info(w, &info);
}

static void grid_write_summary(const pf_mapver *mv, pf_jsonw *w) {
    pf_map_write_shape(w, pf__grid_of(mv));
}

/* Versions */

pf_mapver *pf_grid_mapver_create(const char *id, pf_planner *planner, size_t cache_entries,
                                 size_t cache_bytes, uint64_t build_us, const uint8_t hash[32]) {
    return pf_mapver_create(id, &pf_kind_grid, NULL, planner, cache_entries, cache_bytes, build_us,
                            hash);
}

/* A version of map id around planner (taken) with env's path and flow
 * field caches. NULL on ENOMEM. */
static pf_mapver *wrap(const pf_kind_env *env, const char *id, pf_planner *planner,
                       uint64_t build_us, const uint8_t hash[32]) {
    const pf_config *cfg = env->d.cfg;
    pf_mapver *mv = pf_mapver_create(id, &pf_kind_grid, env, planner, (size_t)cfg->cache_entries,
                                     (size_t)cfg->cache_bytes, build_us, hash);
    /* Flow fields get a cache of their own: one 512x512 field is about as
     * many bytes as a thousand paths. */
    if (mv && !(mv->fields = pf_cache_create((size_t)cfg->flowfield_cache_entries,
                                             (size_t)cfg->flowfield_cache_bytes))) {
        pf_mapver_release(mv);
        return NULL;
    }
    return mv;
}

/* The budget's refusal, as the answer says it. Returns PF_ENOMEM. */
static pf_status no_room(const pf_kind_env *env, pf_proto_error *e, const char *what, size_t need) {
    uint64_t budget = pf_mem_budget(env->d.mem), used = pf_mem_used(env->d.mem);
    if (!e) return PF_ENOMEM;
    return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_INSUFFICIENT_STORAGE, NULL,
                              "%s needs up to %zu bytes; the memory budget (--max-memory) is %llu "
                              "bytes and %llu are in use. Delete maps or sessions, or raise it.",
                              what, need, (unsigned long long)budget,
                              (unsigned long long)(used < budget ? used : budget));
}

uint64_t pf_grid_build_deadline(const pf_kind_env *env, uint64_t t0_ns) {
    return t0_ns + (uint64_t)env->d.cfg->grid_build_ms * 1000000ull;
}

pf_status pf_grid_build_too_long(const pf_kind_env *env, pf_proto_error *e, const char *what) {
    if (!e) return PF_ECANCELED;
    return pf_proto_error_set(e, PF_ECANCELED, PF_ERR_LIMIT_EXCEEDED, "limits.grid_build_ms",
                              "%s took longer than this server's grid_build_ms (%lld ms); it was "
                              "stopped and nothing changed.",
                              what, (long long)env->d.cfg->grid_build_ms);
}

pf_status pf_grid_build(const pf_kind_env *env, const char *id, pf_grid *g, const uint8_t hash[32],
                        uint64_t t0_ns, uint64_t deadline_ns, pf_mapver **out, pf_proto_error *e) {
    const pf_config *cfg = env->d.cfg;
    pf_planner *planner = NULL;
    pf_planner_opts po;
    pf_build_stop stop = pf_build_stop_make(pf_clock_deadline_passed, &deadline_ns);
    pf_status st;
    size_t est;
    *out = NULL;
    memset(&po, 0, sizeof(po));
    po.build_hpa = true;
    po.cluster_size = (int32_t)cfg->cluster_size;
    po.landmark_bytes = (size_t)cfg->landmark_bytes;
    po.landmark_min_cells = PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS;
    po.jps_table_bytes = (size_t)cfg->jps_table_bytes;
    po.subgoal_work_per_cell = cfg->subgoal_work;
    po.stop = deadline_ns ? &stop : NULL;
    /* Reserved before the build, which is where the memory goes: a map
     * the budget cannot hold is refused without being built. */
    st = pf_mem_map_estimate(g, &po, &est);
    if (!st && !pf_mem_try_charge(env->d.mem, PF_MEM_MAPS, est)) {
        pf_grid_destroy(g);
        return no_room(env, e, "The map", est);
    }
    if (st) {
        pf_grid_destroy(g);
    } else {
        st = pf_planner_create(g, &po, &planner);
        pf_mem_uncharge(env->d.mem, PF_MEM_MAPS, est);
    }
    if (st == PF_ECANCELED) return pf_grid_build_too_long(env, e, "Building the map");
    if (st) {
        if (e)
            pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                               "Preparing the map failed: %s.", pf_status_str(st));
        return st;
    }
    *out = wrap(env, id, planner, (pf_clock_now_ns() - t0_ns) / 1000, hash);
    if (!*out) {
        if (e) pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        return PF_ENOMEM;
    }
    pf_mapver_charge(*out, env->d.mem, pf_planner_memory(planner));
    return PF_OK;
}

/* Uploads: a JSON map, or a Moving AI map (the route's body set admits
 * nothing else). The upload is the parsed grid. */

static pf_status grid_upload_parse(const pf_kind_env *env, const pf_kind_upload *in, void **up,
                                   pf_proto_error *e) {
    pf_grid *g = NULL;
    pf_status st;
    if (in->body_kind == PF_BODY_JSON) {
        /* The grid parser reads the body again: the tree goes first. */
        cJSON_Delete(*in->root);
        *in->root = NULL;
        st = pf_map_json_parse(in->body, in->len, pf_grid_limits_of(env), &g, e);
    } else {
        st = pf_map_text_parse(in->body, in->len, pf_grid_limits_of(env), &g, e);
    }
    *up = g;
    return st;
}

/* An upload's build is bounded by --grid-build-ms from its parse. */
static pf_status grid_upload_build(const pf_kind_env *env, void *up, const char *id,
                                   const uint8_t hash[32], uint64_t t0_ns, pf_mapver **out,
                                   pf_proto_error *e) {
    return pf_grid_build(env, id, up, hash, t0_ns, pf_grid_build_deadline(env, t0_ns), out, e);
}

/* PATCH: cells and doors (session_json.h's pf_update). */

static pf_status grid_patch_parse(const pf_kind_env *env, const char *body, size_t len, size_t max,
                                  void **patch, pf_proto_error *e) {
    pf_update *u = calloc(1, sizeof(*u));
    pf_status st;
    (void)env;
    *patch = NULL;
    if (!u) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if ((st = pf_map_patch_parse(body, len, u, e))) {
        free(u);
        return st;
    }
    if (max && u->ncells + u->ndoors > max) {
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_TOO_MANY_CHANGES, NULL,
                                "The PATCH has %zu changes (cells and doors); this server applies "
                                "at most %lld in one PATCH.",
                                u->ncells + u->ndoors, (long long)max);
        pf_update_free(u);
        free(u);
        return st;
    }
    *patch = u;
    return PF_OK;
}

static void grid_patch_free(void *patch) {
    pf_update_free(patch);
    free(patch);
}

static pf_status grid_patch_apply(const pf_kind_env *env, const pf_mapver *cur, const void *patch,
                                  bool bounded, pf_mapver **out, pf_proto_error *e) {
    const pf_update *u = patch;
    const pf_grid *g = pf__grid_of(cur);
    pf_door_change *doors;
    pf_planner *planner = NULL;
    pf_point *changed = NULL;
    size_t nchanged = 0, reserve;
    uint64_t t0 = pf_clock_now_ns(), deadline_ns = bounded ? pf_grid_build_deadline(env, t0) : 0;
    pf_build_stop stop = pf_build_stop_make(pf_clock_deadline_passed, &deadline_ns);
    pf_mapver *mv;
    pf_status st;
    char f[32];

    *out = NULL;
    for (size_t i = 0; i < u->ncells; i++)
        if (!pf_grid_in_bounds(g, u->cells[i].p)) {
            snprintf(f, sizeof(f), "cells[%zu]", i);
            return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                      "%s (%d,%d) is outside the %dx%d map.", f,
                                      (int)u->cells[i].p.x, (int)u->cells[i].p.y,
                                      (int)pf_grid_width(g), (int)pf_grid_height(g));
        }
    if (!(doors = calloc(u->ndoors ? u->ndoors : 1, sizeof(*doors))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (size_t i = 0; i < u->ndoors; i++) {
        doors[i].door = pf_grid_door_find(g, u->doors[i].id);
        doors[i].open = u->doors[i].open;
        if (doors[i].door < 0) {
            snprintf(f, sizeof(f), "doors[%zu].id", i);
            free(doors);
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Map '%s' has no door '%s'.", cur->id, u->doors[i].id);
        }
    }
    /* The next version is a copy of cur, repaired: reserve cur's size. */
    reserve = pf_planner_memory(pf_grid_planner(cur));
    if (!pf_mem_try_charge(env->d.mem, PF_MEM_MAPS, reserve)) {
        free(doors);
        return no_room(env, e, "The PATCH (a new version of the map)", reserve);
    }
    st = pf_planner_apply(pf_grid_planner(cur), u->cells, u->ncells, doors, u->ndoors,
                          deadline_ns ? &stop : NULL, &planner, &changed, &nchanged);
    free(doors);
    pf_mem_uncharge(env->d.mem, PF_MEM_MAPS, reserve);
    if (st == PF_ECANCELED)
        return pf_grid_build_too_long(env, e, "Repairing the map for the PATCH");
    if (st)
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                                  "Applying the changes failed: %s.", pf_status_str(st));
    mv = wrap(env, cur->id, planner, (pf_clock_now_ns() - t0) / 1000, NULL);
    if (!mv) {
        free(changed);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    pf_mapver_charge(mv, env->d.mem, pf_planner_memory(planner));
    if (pf_mapver_set_log(mv, cur, changed, nchanged, (size_t)env->d.cfg->change_log_cells)) {
        pf_mapver_release(mv);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    *out = mv;
    return PF_OK;
}

/* Stores */

static pf_status grid_store_encode(const pf_mapver *mv, uint64_t version, unsigned char **img,
                                   size_t *len) {
    return pf_grid_image_encode(pf__grid_of(mv), version, img, len);
}

/* u applied to g in place, as pf_planner_apply applies it to its copy
 * (cells in order, then doors): replaying a stored log. PF_ERANGE,
 * PF_EINVAL for a cell or door g does not have. */
static pf_status apply_in_place(pf_grid *g, const pf_update *u) {
    for (size_t i = 0; i < u->ncells; i++)
        if (!pf_grid_in_bounds(g, u->cells[i].p)) return PF_ERANGE;
    for (size_t i = 0; i < u->ndoors; i++)
        if (pf_grid_door_find(g, u->doors[i].id) < 0) return PF_EINVAL;
    for (size_t i = 0; i < u->ncells; i++) pf_grid_set_cost(g, u->cells[i].p, u->cells[i].cost);
    for (size_t i = 0; i < u->ndoors; i++)
        pf_grid_set_door(g, pf_grid_door_find(g, u->doors[i].id), u->doors[i].open);
    return PF_OK;
}

/* The image decoded, the logged PATCHes applied to the grid in place (one
 * build at the end, not one a PATCH), then built as an upload. */
static pf_status grid_store_load(const pf_kind_env *env, const pf_kind_stored *in, pf_mapver **out,
                                 uint64_t *version, pf_kind_store_error *why) {
    uint64_t t0 = pf_clock_now_ns();
    pf_grid *g = NULL;
    pf_status st;
    *out = NULL;
    memset(why, 0, sizeof(*why));
    if ((st = pf_grid_image_decode(in->img, in->img_len, pf_grid_limits_of(env), &g, version))) {
        why->fault = st == PF_ELIMIT   ? PF_KIND_STORE_LIMITS
                     : st == PF_ENOMEM ? PF_KIND_STORE_LATER
                                       : PF_KIND_STORE_DAMAGED;
        if (st == PF_ELIMIT)
            pf_proto_error_set(&why->e, st, PF_ERR_LIMIT_EXCEEDED, NULL,
                               "--max-map-cells, --max-map-side");
        else
            pf_proto_error_set(&why->e, st, PF_ERR_NO_MEMORY, NULL,
                               "out of memory while loading it");
        return st;
    }
    for (size_t i = 0; i < in->nbodies; i++) {
        pf_update u;
        pf_proto_error pe;
        if ((st = pf_map_patch_parse(in->bodies[i], in->lens[i], &u, &pe)) == PF_OK) {
            st = apply_in_place(g, &u);
            pf_update_free(&u);
        }
        if (st) {
            why->fault = PF_KIND_STORE_LOG;
            why->at = i;
            pf_proto_error_set(&why->e, st, PF_ERR_STORAGE, NULL, "%s", pf_status_str(st));
            pf_grid_destroy(g);
            return st;
        }
    }
    /* Accepted once already (by this server or one of its fleet): built
     * whatever it takes. */
    if ((st = pf_grid_build(env, in->id, g, in->hash, t0, 0, out, &why->e))) {
        why->fault = st == PF_ENOMEM ? PF_KIND_STORE_LATER : PF_KIND_STORE_NO_BUILD;
        return st;
    }
    return PF_OK;
}

/* Agent sizes */

size_t pf__grid_agent_need(const pf_mapver *mv, int32_t n, bool hierarchy) {
    const pf_planner *p = pf_grid_planner(mv);
    const pf_agents *a = pf_planner_agents(p);
    pf_agents_class_stats st[PF_AGENT_SIZE_MAX];
    const pf_grid *g = pf_planner_grid(p);
    size_t k;
    if (n <= 1 || !a) return 0;
    hierarchy = hierarchy && pf_planner_has_hpa(p);
    k = pf_agents_stats(a, st, PF_AGENT_SIZE_MAX);
    for (size_t i = 0; i < k && i < PF_AGENT_SIZE_MAX; i++)
        if (st[i].size == n && (!hierarchy || st[i].has_hpa)) return 0;
    return pf_mem_agent_estimate((uint64_t)pf_grid_width(g) * (uint64_t)pf_grid_height(g),
                                 hierarchy);
}

pf_status pf__grid_reserve_agent(const pf_mapver *mv, int32_t n, bool hierarchy, size_t *reserved,
                                 const char *field, pf_proto_error *e) {
    uint64_t budget, used;
    *reserved = 0;
    if (!mv->mem) return PF_OK;
    *reserved = pf__grid_agent_need(mv, n, hierarchy);
    if (!*reserved || pf_mem_try_charge(mv->mem, PF_MEM_MAPS, *reserved)) return PF_OK;
    hierarchy = hierarchy && pf_planner_has_hpa(pf_grid_planner(mv));
    budget = pf_mem_budget(mv->mem);
    used = pf_mem_used(mv->mem);
    pf_proto_error_set(e, PF_ENOMEM, PF_ERR_INSUFFICIENT_STORAGE, field,
                       "Agent size %d's first use on map '%s' needs up to %zu bytes (its grid%s); "
                       "the memory budget (--max-memory) is %llu bytes, %llu in use. Delete maps "
                       "or sessions, or raise it.",
                       (int)n, mv->id, *reserved, hierarchy ? " and hierarchy" : "",
                       (unsigned long long)budget,
                       (unsigned long long)(used < budget ? used : budget));
    *reserved = 0;
    return PF_ENOMEM;
}

pf_status pf__grid_agent_grid(const pf_mapver *mv, int32_t n, const uint64_t *deadline,
                              const pf_grid **g, pf_proto_error *e) {
    pf_build_stop bs = pf_build_stop_make(pf_clock_deadline_passed, (void *)deadline);
    size_t reserved;
    pf_status st;
    if ((st = pf__grid_reserve_agent(mv, n, false, &reserved, "agent_size", e))) return st;
    st = pf_planner_agent_grid(pf_grid_planner(mv), n, &bs, g);
    pf__grid_settle(mv, reserved);
    if (st == PF_ECANCELED) return st;
    if (st)
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                                  "Preparing agent size %d failed: %s.", (int)n, pf_status_str(st));
    return PF_OK;
}

void pf__grid_settle(const pf_mapver *mv, size_t reserved) {
    /* Only the atomic charge changes: the version is otherwise immutable. */
    pf_mapver *w = (pf_mapver *)mv;
    if (!reserved) return;
    pf_mem_uncharge(w->mem, PF_MEM_MAPS, reserved);
    pf_mapver_recharge(w);
}

const pf_kind_ops pf_kind_grid = {
    .name = "grid",
    .line_of_sight = pf__grid_line_of_sight,
    .features = PF_KIND_CELLS | PF_KIND_HIERARCHY | PF_KIND_FLOWFIELDS | PF_KIND_TABLES,
    .upload_bodies = PF_BODY_MOVINGAI | PF_BODY_TEXT | PF_BODY_ABSENT,
    .default_json = true,
    .algorithm_name = algorithm_name,
    .nalgorithms = PF_ALGO_COUNT,
    .store_suffix = ".map.bin",
    .env_create = grid_env_create,
    .env_destroy = grid_env_destroy,
    .write_server_info = grid_write_server_info,
    .world_free = grid_world_free,
    .world_memory = grid_world_memory,
    .write_info = grid_write_info,
    .write_summary = grid_write_summary,
    .upload_parse = grid_upload_parse,
    .upload_build = grid_upload_build,
    .patch_parse = grid_patch_parse,
    .patch_apply = grid_patch_apply,
    .patch_free = grid_patch_free,
    .store_encode = grid_store_encode,
    .store_load = grid_store_load,
    .path_parse_one = pf__grid_path_parse_one,
    .path_parse_batch = pf__grid_path_parse_batch,
    .paths_free = pf__grid_paths_free,
    .path_cached = pf__grid_path_cached,
    .scratch_get = pf__grid_scratch_get,
    .scratch_put = pf__grid_scratch_put,
    .path_run = pf__grid_path_run,
    .path_builds = pf__grid_path_builds,
    .session_create = pf__grid_session_create,
    .session_free = pf__grid_session_free,
    .session_memory = pf__grid_session_memory,
    .session_where = pf__grid_session_where,
    .session_rebase = pf__grid_session_rebase,
    .session_run = pf__grid_session_run,
    .session_builds = pf__grid_session_builds,
    .write_cells = pf__grid_write_cells,
    .write_hierarchy = pf__grid_write_hierarchy,
    .flowfield = &pf__grid_flowfield,
    .table = &pf__grid_table,
};
