/* maps.c -- see maps.h: what every store shares (building a version,
 * applying a PATCH, the PATCH's retry loop), and the call of the store's
 * backend (maps_internal.h). */
#include "maps_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "jsonr.h"

pf_status pf_maps_create(const pf_maps_deps *d, pf_maps **out) {
    pf_maps *m = calloc(1, sizeof(*m));
    *out = NULL;
    if (!m) return PF_ENOMEM;
    m->d = *d;
    m->be = &pf__maps_memory;
    m->limits = pf_grid_default_limits();
    m->limits.max_cells = d->cfg->max_map_cells;
    m->limits.max_side = (int32_t)d->cfg->max_map_side;
    m->nav_limits = pf_nav_default_limits();
    m->nav_limits.max_vertices = (uint32_t)d->cfg->nav_max_vertices;
    m->nav_limits.max_triangles = (uint32_t)d->cfg->nav_max_triangles;
    m->nav_limits.max_voxels = (uint64_t)d->cfg->nav_max_voxels;
    m->nav_limits.max_tiles = (uint32_t)d->cfg->nav_max_tiles;
    m->nav_limits.build_ms = (uint32_t)d->cfg->nav_build_ms;
    m->nav_limits.max_obstacles = (uint32_t)d->cfg->nav_max_obstacles;
    m->nav_limits.max_areas = (uint32_t)d->cfg->nav_max_areas;
    m->nav_limits.max_area_boxes = (uint32_t)d->cfg->nav_max_area_boxes;
    m->nav_limits.max_search_extent = (float)d->cfg->nav_max_search_extent;
    m->nav_limits.max_tile_spans = (uint32_t)d->cfg->nav_max_tile_spans;
    m->nav_limits.max_column_spans = (uint32_t)d->cfg->nav_max_column_spans;
    m->nav_limits.max_links = (uint32_t)d->cfg->nav_max_links;
    if (d->navrun) m->runner = pf_navrun_runner(d->navrun);
    atomic_init(&m->loading, false);
    if (uv_mutex_init(&m->mu)) {
        free(m);
        return PF_ENOMEM;
    }
    *out = m;
    return PF_OK;
}

void pf_maps_destroy(pf_maps *m) {
    if (!m) return;
    m->be->close(m);
    uv_mutex_destroy(&m->mu);
    free(m);
}

const pf_grid_limits *pf_maps_limits(const pf_maps *m) { return &m->limits; }

const pf_nav_limits *pf_maps_nav_limits(const pf_maps *m) { return &m->nav_limits; }

const pf_nav_runner *pf_maps_nav_runner(const pf_maps *m) { return &m->runner; }

pf_status pf_maps_open_store(pf_maps *m, char *err, size_t errlen) {
    const pf_config *cfg = m->d.cfg;
    if (cfg->store[0] && cfg->data_dir[0]) {
        snprintf(err, errlen,
                 "--store and --data-dir exclude each other: a fleet keeps its maps "
                 "in the shared store");
        return PF_EINVAL;
    }
    if (cfg->store[0]) return pf__maps_open_redis(m, cfg->store, err, errlen);
    if (cfg->data_dir[0]) return pf__maps_open_dir(m, cfg->data_dir, err, errlen);
    return PF_OK;
}

const char *pf_maps_store_kind(const pf_maps *m) { return m->be->kind; }

const char *pf_maps_store_dir(const pf_maps *m) { return m->dir ? pf_store_dir(m->dir) : NULL; }

const char *pf_maps_store_url(const pf_maps *m) { return m->fleet ? pf__maps_redis_url(m) : NULL; }

bool pf_maps_store_ready(const pf_maps *m, char *why, size_t n) {
    if (n) why[0] = '\0';
    return m->fleet ? pf__maps_redis_ready(m, why, n) : true;
}

bool pf_maps_store_write_trust(const pf_maps *m, pf_jsonw *w) {
    if (!m->fleet) return false;
    pf__maps_redis_write_json(m, w);
    return true;
}

bool pf_maps_store_trust(const pf_maps *m, struct pf_sguard_stats *out) {
    if (!m->fleet) return false;
    pf__maps_redis_stats(m, out);
    return true;
}

pf_mapver *pf_maps_wrap(pf_maps *m, const char *id, pf_planner *planner, uint64_t build_us,
                        const uint8_t hash[32]) {
    pf_mapver *mv = pf_mapver_create(id, planner, (size_t)m->d.cfg->cache_entries,
                                     (size_t)m->d.cfg->cache_bytes, build_us, hash);
    /* Flow fields get a cache of their own: one 512x512 field is about as
     * many bytes as a thousand paths. */
    if (mv && !(mv->fields = pf_cache_create((size_t)m->d.cfg->flowfield_cache_entries,
                                             (size_t)m->d.cfg->flowfield_cache_bytes))) {
        pf_mapver_release(mv);
        return NULL;
    }
    return mv;
}

/* The budget's refusal, as the answer says it. Returns PF_ENOMEM. */
static pf_status no_room(pf_maps *m, pf_proto_error *e, const char *what, size_t need) {
    uint64_t budget = pf_mem_budget(m->d.mem), used = pf_mem_used(m->d.mem);
    if (!e) return PF_ENOMEM;
    return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_INSUFFICIENT_STORAGE, NULL,
                              "%s needs up to %zu bytes; the memory budget (--max-memory) is %llu "
                              "bytes and %llu are in use. Delete maps or sessions, or raise it.",
                              what, need, (unsigned long long)budget,
                              (unsigned long long)(used < budget ? used : budget));
}

uint64_t pf_maps_build_deadline(const pf_maps *m, uint64_t t0_ns) {
    return t0_ns + (uint64_t)m->d.cfg->grid_build_ms * 1000000ull;
}

pf_status pf_maps_build_too_long(const pf_maps *m, pf_proto_error *e, const char *what) {
    if (!e) return PF_ECANCELED;
    return pf_proto_error_set(e, PF_ECANCELED, PF_ERR_LIMIT_EXCEEDED, "limits.grid_build_ms",
                              "%s took longer than this server's grid_build_ms (%lld ms); it was "
                              "stopped and nothing changed.",
                              what, (long long)m->d.cfg->grid_build_ms);
}

pf_status pf_maps_build(pf_maps *m, const char *id, pf_grid *g, const uint8_t hash[32],
                        uint64_t t0_ns, uint64_t deadline_ns, pf_mapver **out, pf_proto_error *e) {
    pf_planner *planner = NULL;
    pf_planner_opts po;
    pf_build_stop stop = pf_build_stop_make(pf_clock_deadline_passed, &deadline_ns);
    pf_status st;
    size_t est;
    *out = NULL;
    memset(&po, 0, sizeof(po));
    po.build_hpa = true;
    po.cluster_size = (int32_t)m->d.cfg->cluster_size;
    po.landmark_bytes = (size_t)m->d.cfg->landmark_bytes;
    po.landmark_min_cells = PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS;
    po.jps_table_bytes = (size_t)m->d.cfg->jps_table_bytes;
    po.stop = deadline_ns ? &stop : NULL;
    /* Reserved before the build, which is where the memory goes: a map
     * the budget cannot hold is refused without being built. */
    st = pf_mem_map_estimate(g, &po, &est);
    if (!st && !pf_mem_try_charge(m->d.mem, PF_MEM_MAPS, est)) {
        pf_grid_destroy(g);
        return no_room(m, e, "The map", est);
    }
    if (st) {
        pf_grid_destroy(g);
    } else {
        st = pf_planner_create(g, &po, &planner);
        pf_mem_uncharge(m->d.mem, PF_MEM_MAPS, est);
    }
    if (st == PF_ECANCELED) return pf_maps_build_too_long(m, e, "Building the map");
    if (st) {
        if (e)
            pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                               "Preparing the map failed: %s.", pf_status_str(st));
        return st;
    }
    *out = pf_maps_wrap(m, id, planner, (pf_clock_now_ns() - t0_ns) / 1000, hash);
    if (!*out) {
        if (e) pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        return PF_ENOMEM;
    }
    pf_mapver_charge(*out, m->d.mem, pf_planner_memory(planner));
    return PF_OK;
}

/* A navmesh version is charged to the budget by what it holds: every agent
 * type's mesh at its tiles' real size, the kept voxels, the ground index and
 * the lists (nav/navmesh.h's total_bytes; the shared build data once for
 * each version that holds it), and its upload. The build itself stops when
 * what it keeps passes the budget's room (limits.max_bytes). */
static void charge_nav(pf_maps *m, pf_mapver *mv) {
    pf_nav_info ni;
    pf_navmesh_info(mv->nav, &ni);
    pf_mapver_charge(mv, m->d.mem, ni.total_bytes + mv->navsrc->len);
}

/* The navmesh limits of a build or change now: the budget's room. */
static pf_nav_limits nav_limits_now(const pf_maps *m) {
    pf_nav_limits lim = m->nav_limits;
    if (m->d.mem) {
        const uint64_t budget = pf_mem_budget(m->d.mem), used = pf_mem_used(m->d.mem);
        lim.max_bytes = used < budget ? budget - used : 1;
    }
    return lim;
}

pf_status pf_maps_build_nav(pf_maps *m, const char *id, const pf_nav_upload *u,
                            const uint8_t hash[32], uint64_t t0_ns, pf_mapver **out,
                            pf_proto_error *e) {
    pf_nav_geom geom;
    pf_nav_build_input in = pf_nav_upload_input(u, &geom);
    pf_navmesh *nm = NULL;
    pf_nav_error ne;
    pf_jsonw w;
    pf_navsrc *src;
    pf_status st;
    *out = NULL;
    const pf_nav_limits lim = nav_limits_now(m);
    if ((st = pf_nav_build(&in, &lim, &m->runner, &nm, &ne))) {
        pf_nav_error_to_proto(e, st, &ne);
        return st;
    }
    if (u->nobstacles || u->narea_state) {
        pf_nav_change ch;
        pf_navmesh *next = NULL;
        memset(&ch, 0, sizeof(ch));
        ch.put = u->obstacles;
        ch.nput = u->nobstacles;
        ch.areas = u->area_state;
        ch.nareas = u->narea_state;
        st = pf_nav_apply(nm, &ch, &m->nav_limits, &m->runner, &next, &ne);
        pf_navmesh_release(nm);
        if (st) {
            /* The fields of the change are the upload's: obstacles[i] and
             * areas[i] of area_state. */
            if (strncmp(ne.field, "areas[", 6) == 0) {
                char f[sizeof(ne.field)];
                snprintf(f, sizeof(f), "area_state%.80s", ne.field + 5);
                memcpy(ne.field, f, sizeof(f));
            }
            pf_nav_error_to_proto(e, st, &ne);
            return st;
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
    *out = pf_mapver_create_nav(id, nm, src, (size_t)m->d.cfg->cache_entries,
                                (size_t)m->d.cfg->cache_bytes, (pf_clock_now_ns() - t0_ns) / 1000,
                                hash);
    if (!*out) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    charge_nav(m, *out);
    return PF_OK;
}

char *pf__maps_nav_envelope(const pf_mapver *mv, size_t *len) {
    pf_jsonw w;
    pf_jsonw_init(&w, mv->navsrc->len + 4096);
    pf_jsonw_obj_begin(&w);
    pf_jsonw_raw_members(&w, mv->navsrc->members, mv->navsrc->len);
    pf_nav_write_state_members(&w, mv->nav);
    pf_jsonw_obj_end(&w);
    return pf_jsonw_take(&w, len); /* NULL when it failed */
}

pf_status pf__maps_build_envelope(pf_maps *m, const char *id, const char *bytes, size_t len,
                                  const uint8_t hash[32], pf_mapver **out, pf_proto_error *e) {
    cJSON *root = NULL;
    pf_nav_upload u;
    pf_status st;
    memset(&u, 0, sizeof(u));
    *out = NULL;
    if (!(st = pf_jsonr_parse(bytes, len, &root, e)) &&
        !(st = pf_nav_upload_from_json(root, &m->limits, &m->nav_limits, &u, e)))
        st = pf_maps_build_nav(m, id, &u, hash, pf_clock_now_ns(), out, e);
    cJSON_Delete(root);
    pf_nav_upload_free(&u);
    return st;
}

void pf__maps_end_users(pf_maps *m, const char *id, uint64_t keep_lineage) {
    pf_sessions_drop_map(m->d.sessions, id, keep_lineage);
    if (m->d.crowds) pf_crowds_drop_map(m->d.crowds, id, keep_lineage);
}

pf_status pf__maps_apply_nav(pf_maps *m, const pf_mapver *cur, const pf_nav_patch *p,
                             pf_mapver **out, pf_proto_error *e) {
    pf_nav_change ch = pf_nav_patch_change(p);
    pf_navmesh *next = NULL;
    pf_nav_error ne;
    uint64_t t0 = pf_clock_now_ns();
    pf_status st;
    *out = NULL;
    if (!cur->nav)
        return pf_proto_error_set(e, PF_ECANCELED, PF_ERR_CONFLICT, NULL,
                                  "Map '%s' is a grid now (it was replaced): a navmesh PATCH does "
                                  "not apply; nothing changed.",
                                  cur->id);
    if ((st = pf_nav_apply(cur->nav, &ch, &m->nav_limits, &m->runner, &next, &ne))) {
        /* The change's "remove[i]" is the request's "remove_obstacles[i]". */
        if (strncmp(ne.field, "remove[", 7) == 0) {
            char f[sizeof(ne.field)];
            snprintf(f, sizeof(f), "remove_obstacles%.70s", ne.field + 6);
            memcpy(ne.field, f, sizeof(f));
        }
        return pf_nav_error_to_proto(e, st, &ne);
    }
    pf_navsrc_retain(cur->navsrc);
    *out =
        pf_mapver_create_nav(cur->id, next, cur->navsrc, (size_t)m->d.cfg->cache_entries,
                             (size_t)m->d.cfg->cache_bytes, (pf_clock_now_ns() - t0) / 1000, NULL);
    if (!*out) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    charge_nav(m, *out);
    return PF_OK;
}

pf_status pf__maps_apply_body(pf_maps *m, const pf_mapver *cur, const char *body, size_t len,
                              pf_mapver **out, pf_proto_error *e) {
    pf_status st;
    *out = NULL;
    if (cur->nav) {
        pf_nav_patch p;
        if ((st = pf_nav_patch_parse(body, len, &p, e))) return st;
        st = pf__maps_apply_nav(m, cur, &p, out, e);
        pf_nav_patch_free(&p);
    } else {
        pf_update u;
        if ((st = pf_map_patch_parse(body, len, &u, e))) return st;
        st = pf__maps_apply(m, cur, &u, 0, out, e); /* a stored change: never refused */
        pf_update_free(&u);
    }
    return st;
}

static bool has_hash(const uint8_t h[32]) {
    for (int i = 0; i < 32; i++)
        if (h[i]) return true;
    return false;
}

pf_mapver *pf_maps_find_upload(pf_maps *m, const char *id, const uint8_t hash[32]) {
    pf_mapver *cur;
    if (m->fleet) return NULL; /* the store decides, atomically with the upload */
    cur = pf_registry_get(m->d.registry, id);
    if (cur && has_hash(hash) && memcmp(cur->content_hash, hash, 32) == 0) return cur;
    pf_mapver_release(cur);
    return NULL;
}

pf_status pf__maps_no_map(pf_proto_error *e, const char *id) {
    return pf_proto_error_set(e, PF_ERANGE, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.", id);
}

pf_status pf__maps_precondition(pf_proto_error *e, const char *id, bool exists, uint64_t version,
                                uint64_t lineage) {
    char tag[PF_ETAG_LEN];
    if (!exists)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_PRECONDITION, NULL,
                                  "Map '%s' does not exist, so If-Match does not hold; nothing "
                                  "changed.",
                                  id);
    pf_etag_format(version, lineage, tag, sizeof(tag));
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_PRECONDITION, NULL,
                              "Map '%s' is at version %llu (ETag %s), so the precondition does "
                              "not hold; nothing changed.",
                              id, (unsigned long long)version, tag);
}

pf_status pf_maps_publish(pf_maps *m, pf_mapver *mv, const pf_maps_change *c, pf_maps_outcome *o,
                          pf_proto_error *e) {
    pf_status st;
    memset(o, 0, sizeof(*o));
    pf__maps_write_begin(m);
    st = m->be->publish(m, mv, c, o, e);
    pf__maps_write_end(m);
    return st;
}

pf_status pf__maps_apply(pf_maps *m, const pf_mapver *cur, const pf_update *u, uint64_t deadline_ns,
                         pf_mapver **out, pf_proto_error *e) {
    const pf_grid *g;
    pf_door_change *doors;
    pf_planner *planner = NULL;
    pf_point *changed = NULL;
    size_t nchanged = 0, reserve;
    uint64_t t0 = pf_clock_now_ns();
    pf_build_stop stop = pf_build_stop_make(pf_clock_deadline_passed, &deadline_ns);
    pf_mapver *mv;
    pf_status st;
    char f[32];

    *out = NULL;
    if (cur->nav)
        return pf_proto_error_set(e, PF_ECANCELED, PF_ERR_CONFLICT, NULL,
                                  "Map '%s' is a navmesh now (it was replaced): a grid PATCH does "
                                  "not apply; nothing changed.",
                                  cur->id);
    g = pf_planner_grid(cur->planner);
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
    reserve = pf_planner_memory(cur->planner);
    if (!pf_mem_try_charge(m->d.mem, PF_MEM_MAPS, reserve)) {
        free(doors);
        return no_room(m, e, "The PATCH (a new version of the map)", reserve);
    }
    st = pf_planner_apply(cur->planner, u->cells, u->ncells, doors, u->ndoors,
                          deadline_ns ? &stop : NULL, &planner, &changed, &nchanged);
    free(doors);
    pf_mem_uncharge(m->d.mem, PF_MEM_MAPS, reserve);
    if (st == PF_ECANCELED) return pf_maps_build_too_long(m, e, "Repairing the map for the PATCH");
    if (st)
        return pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                                  "Applying the changes failed: %s.", pf_status_str(st));
    mv = pf_maps_wrap(m, cur->id, planner, (pf_clock_now_ns() - t0) / 1000, NULL);
    if (!mv) {
        free(changed);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    pf_mapver_charge(mv, m->d.mem, pf_planner_memory(planner));
    if (pf_mapver_set_log(mv, cur, changed, nchanged, (size_t)m->d.cfg->change_log_cells)) {
        pf_mapver_release(mv);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    *out = mv;
    return PF_OK;
}

pf_status pf__maps_apply_grid(pf_grid *g, const pf_update *u) {
    for (size_t i = 0; i < u->ncells; i++)
        if (!pf_grid_in_bounds(g, u->cells[i].p)) return PF_ERANGE;
    for (size_t i = 0; i < u->ndoors; i++)
        if (pf_grid_door_find(g, u->doors[i].id) < 0) return PF_EINVAL;
    for (size_t i = 0; i < u->ncells; i++) pf_grid_set_cost(g, u->cells[i].p, u->cells[i].cost);
    for (size_t i = 0; i < u->ndoors; i++)
        pf_grid_set_door(g, pf_grid_door_find(g, u->doors[i].id), u->doors[i].open);
    return PF_OK;
}

/* The next version of cur (a grid PATCH's u, or a navmesh PATCH's p). */
typedef pf_status (*apply_fn)(pf_maps *m, const pf_mapver *cur, const void *arg, pf_mapver **out,
                              pf_proto_error *e);

static pf_status apply_grid(pf_maps *m, const pf_mapver *cur, const void *arg, pf_mapver **out,
                            pf_proto_error *e) {
    return pf__maps_apply(m, cur, arg, pf_maps_build_deadline(m, pf_clock_now_ns()), out, e);
}

static pf_status apply_nav(pf_maps *m, const pf_mapver *cur, const void *arg, pf_mapver **out,
                           pf_proto_error *e) {
    return pf__maps_apply_nav(m, cur, arg, out, e);
}

/* The PATCH's tries: load, apply, swap, and again when another change came
 * first. */
static pf_status patch_tries(pf_maps *m, const char *id, apply_fn apply, const void *arg,
                             const char *body, size_t body_len, const pf_maps_change *c,
                             pf_mapver **out, pf_proto_error *e) {
    pf_status st;
    *out = NULL;
    for (int attempt = 0; attempt <= 16; attempt++) {
        pf_mapver *cur = pf_registry_get(m->d.registry, id), *mv;
        if (!cur && m->be->load) {
            if ((st = m->be->load(m, id, e))) return st;
            cur = pf_registry_get(m->d.registry, id);
        }
        if (!cur) return pf__maps_no_map(e, id);
        if ((st = apply(m, cur, arg, &mv, e))) {
            pf_mapver_release(cur);
            return st;
        }
        pf_mapver_retain(mv); /* ours, for the answer; the backend takes the other */
        st = m->be->swap(m, cur, mv, body, body_len, c, e);
        pf_mapver_release(cur);
        if (st == PF_OK) {
            *out = mv;
            return PF_OK;
        }
        pf_mapver_release(mv);
        if (st != PF_ECANCELED) return st;
    }
    return pf_proto_error_set(e, PF_ECANCELED, PF_ERR_CONFLICT, NULL,
                              "Map '%s' kept changing while this PATCH was applied; retry.", id);
}

static pf_status patch_loop(pf_maps *m, const char *id, apply_fn apply, const void *arg,
                            const char *body, size_t body_len, const pf_maps_change *c,
                            pf_mapver **out, pf_proto_error *e) {
    pf_status st;
    pf__maps_write_begin(m);
    st = patch_tries(m, id, apply, arg, body, body_len, c, out, e);
    pf__maps_write_end(m);
    return st;
}

pf_status pf_maps_patch(pf_maps *m, const char *id, const pf_update *u, const char *body,
                        size_t body_len, const pf_maps_change *c, pf_mapver **out,
                        pf_proto_error *e) {
    return patch_loop(m, id, apply_grid, u, body, body_len, c, out, e);
}

pf_status pf_maps_patch_nav(pf_maps *m, const char *id, const pf_nav_patch *p, const char *body,
                            size_t body_len, const pf_maps_change *c, pf_mapver **out,
                            pf_proto_error *e) {
    return patch_loop(m, id, apply_nav, p, body, body_len, c, out, e);
}

pf_status pf_maps_remove(pf_maps *m, const char *id, const pf_precond *cond, pf_proto_error *e) {
    static const pf_precond none;
    pf_status st;
    pf__maps_write_begin(m);
    st = m->be->remove(m, id, cond ? cond : &none, e);
    pf__maps_write_end(m);
    return st;
}

static int cmp_item(const void *a, const void *b) {
    return strcmp(((const pf_maps_item *)a)->id, ((const pf_maps_item *)b)->id);
}

pf_status pf_maps_list(pf_maps *m, pf_maps_listing *out, pf_proto_error *e) {
    pf_status st;
    memset(out, 0, sizeof(*out));
    if ((st = m->be->list(m, out, e))) return st;
    qsort(out->items, out->n, sizeof(*out->items), cmp_item);
    return PF_OK;
}

void pf_maps_listing_free(pf_maps_listing *l) {
    for (size_t i = 0; i < l->n; i++) pf_mapver_release(l->items[i].mv);
    free(l->items);
    if (l->store_free_) l->store_free_(l->store_);
    memset(l, 0, sizeof(*l));
}

bool pf_maps_needs_load(pf_maps *m, const char *id) {
    pf_mapver *mv;
    if (!m->be->load) return false;
    mv = pf_registry_get(m->d.registry, id); /* a use: the idle clock starts again */
    pf_mapver_release(mv);
    return mv == NULL;
}

pf_status pf_maps_load(pf_maps *m, const char *id, pf_proto_error *e) {
    pf_mapver *mv;
    if (m->be->load) return m->be->load(m, id, e);
    mv = pf_registry_peek(m->d.registry, id);
    pf_mapver_release(mv);
    return mv ? PF_OK : pf__maps_no_map(e, id);
}

pf_status pf_maps_add(pf_maps *m, const char *id, pf_grid *g) { return m->be->add(m, id, g); }

pf_status pf_maps_add_if_absent(pf_maps *m, const char *id, pf_grid *g, bool *added) {
    pf_mapver *cur;
    *added = true;
    /* A shared store's add already keeps a map the store has. */
    if (m->fleet) return m->be->add(m, id, g);
    if ((cur = pf_registry_get(m->d.registry, id))) {
        pf_mapver_release(cur);
        pf_grid_destroy(g);
        *added = false;
        return PF_OK;
    }
    return m->be->add(m, id, g);
}

size_t pf_maps_load_stored(pf_maps *m) { return m->dir ? pf__maps_load_dir(m) : 0; }

bool pf_maps_store_report(const pf_maps *m, pf_store_report *out) {
    if (!m->dir) return false;
    pf_store_get_report(m->dir, out);
    return true;
}

void pf_maps_set_loading(pf_maps *m, bool loading) { atomic_store(&m->loading, loading); }

bool pf_maps_loading(const pf_maps *m) {
    return atomic_load(&((pf_maps *)m)->loading); /* C11 atomics want a non-const object */
}
