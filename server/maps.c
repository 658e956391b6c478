/* maps.c -- see maps.h. */
#include "maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "clock.h"
#include "jsonr.h"
#include "store.h"

struct pf_maps {
    pf_maps_deps d;
    pf_grid_limits limits;
    pf_nav_limits nav_limits;
    pf_nav_runner runner;
    pf_store *store; /* --data-dir, or NULL */
    uv_mutex_t mu;   /* with a store: one map change (disk + registry) at a time */
};

pf_status pf_maps_create(const pf_maps_deps *d, pf_maps **out) {
    pf_maps *m = calloc(1, sizeof(*m));
    *out = NULL;
    if (!m) return PF_ENOMEM;
    m->d = *d;
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
    if (d->navrun) m->runner = pf_navrun_runner(d->navrun);
    if (uv_mutex_init(&m->mu)) {
        free(m);
        return PF_ENOMEM;
    }
    *out = m;
    return PF_OK;
}

void pf_maps_destroy(pf_maps *m) {
    if (!m) return;
    pf_store_close(m->store);
    uv_mutex_destroy(&m->mu);
    free(m);
}

const pf_grid_limits *pf_maps_limits(const pf_maps *m) { return &m->limits; }

const pf_nav_limits *pf_maps_nav_limits(const pf_maps *m) { return &m->nav_limits; }

const pf_nav_runner *pf_maps_nav_runner(const pf_maps *m) { return &m->runner; }

void pf_maps_nav_error(pf_proto_error *e, pf_status st, const pf_nav_error *ne) {
    pf_nav_error_to_proto(e, st, ne);
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
    if ((st = pf_nav_build(&in, &m->nav_limits, &m->runner, &nm, &ne))) {
        pf_maps_nav_error(e, st, &ne);
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
            pf_maps_nav_error(e, st, &ne);
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
    return PF_OK;
}

/* Writes mv (a grid or a navmesh version) to the store as `version`. */
static pf_status store_write(pf_maps *m, const pf_mapver *mv, uint64_t version, char *err,
                             size_t errlen) {
    pf_jsonw w;
    pf_status st;
    if (!mv->nav)
        return pf_store_write(m->store, mv->id, version, pf_planner_grid(mv->planner), err, errlen);
    pf_jsonw_init(&w, mv->navsrc->len + 4096);
    pf_jsonw_obj_begin(&w);
    pf_jsonw_raw_members(&w, mv->navsrc->members, mv->navsrc->len);
    pf_nav_write_state_members(&w, mv->nav);
    pf_jsonw_obj_end(&w);
    if (pf_jsonw_failed(&w)) {
        pf_jsonw_free(&w);
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    st = pf_store_write_nav(m->store, mv->id, version, w.buf, w.len, err, errlen);
    pf_jsonw_free(&w);
    return st;
}

const char *pf_maps_store_dir(const pf_maps *m) { return m->store ? pf_store_dir(m->store) : NULL; }

pf_mapver *pf_maps_wrap(pf_maps *m, const char *id, pf_planner *planner, uint64_t build_us,
                        const uint8_t hash[32]) {
    return pf_mapver_create(id, planner, (size_t)m->d.cfg->cache_entries,
                            (size_t)m->d.cfg->cache_bytes, build_us, hash);
}

pf_status pf_maps_build(pf_maps *m, const char *id, pf_grid *g, const uint8_t hash[32],
                        uint64_t t0_ns, pf_mapver **out) {
    pf_planner *planner = NULL;
    pf_planner_opts po;
    pf_status st;
    *out = NULL;
    memset(&po, 0, sizeof(po));
    po.build_hpa = true;
    po.cluster_size = (int32_t)m->d.cfg->cluster_size;
    po.landmark_bytes = (size_t)m->d.cfg->landmark_bytes;
    po.landmark_min_cells = PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS;
    if ((st = pf_planner_create(g, &po, &planner))) return st;
    *out = pf_maps_wrap(m, id, planner, (pf_clock_now_ns() - t0_ns) / 1000, hash);
    return *out ? PF_OK : PF_ENOMEM;
}

pf_status pf_maps_publish(pf_maps *m, pf_mapver *mv, bool *created, char *err, size_t errlen) {
    pf_registry *reg = m->d.registry;
    pf_mapver *cur = NULL;
    pf_status st;
    if (!m->store) {
        st = pf_registry_publish(reg, mv, created);
    } else {
        uv_mutex_lock(&m->mu);
        cur = pf_registry_get(reg, mv->id);
        if (!cur && pf_registry_count(reg) >= (size_t)m->d.cfg->max_maps) {
            st = PF_ELIMIT; /* checked before writing a file that would not be published */
        } else if (!(st = store_write(m, mv, pf_mapver_next_version(cur), err, errlen)) &&
                   (st = pf_registry_publish(reg, mv, created))) {
            /* Out of memory after the write: put the disk back as it was. */
            char e2[256];
            if (cur)
                store_write(m, cur, cur->version, e2, sizeof(e2));
            else
                pf_store_remove(m->store, mv->id, e2, sizeof(e2));
        }
        uv_mutex_unlock(&m->mu);
        pf_mapver_release(cur);
    }
    /* mv is safe to read: the caller holds a reference of its own. */
    if (!st && !*created) {
        pf_sessions_drop_map(m->d.sessions, mv->id, mv->lineage);
        if (m->d.crowds) pf_crowds_drop_map(m->d.crowds, mv->id, mv->lineage);
    }
    return st;
}

pf_status pf_maps_swap(pf_maps *m, pf_mapver *expected, pf_mapver *mv, char *err, size_t errlen) {
    pf_mapver *cur;
    pf_status st = PF_ECANCELED;
    if (!m->store) return pf_registry_swap(m->d.registry, expected, mv);
    uv_mutex_lock(&m->mu);
    cur = pf_registry_get(m->d.registry, mv->id);
    if (cur == expected &&
        !(st = store_write(m, mv, pf_mapver_next_version(expected), err, errlen)))
        st = pf_registry_swap(m->d.registry, expected, mv); /* cannot lose: we hold mu */
    uv_mutex_unlock(&m->mu);
    pf_mapver_release(cur);
    return st;
}

pf_status pf_maps_remove(pf_maps *m, const char *id, char *err, size_t errlen) {
    pf_mapver *cur;
    pf_status st = PF_OK;
    if (!m->store) {
        st = pf_registry_remove(m->d.registry, id) ? PF_OK : PF_ERANGE;
    } else {
        uv_mutex_lock(&m->mu);
        if (!(cur = pf_registry_get(m->d.registry, id)))
            st = PF_ERANGE;
        else if (!(st = pf_store_remove(m->store, id, err, errlen)))
            pf_registry_remove(m->d.registry, id);
        uv_mutex_unlock(&m->mu);
        pf_mapver_release(cur);
    }
    if (!st) {
        pf_sessions_drop_map(m->d.sessions, id, 0);
        if (m->d.crowds) pf_crowds_drop_map(m->d.crowds, id, 0);
    }
    return st;
}

/* Builds g and publishes it in the registry only; version 0 numbers it as
 * usual, another number is a stored map's. */
static pf_status add(pf_maps *m, const char *id, pf_grid *g, uint64_t version) {
    pf_mapver *mv;
    bool created;
    pf_status st = pf_maps_build(m, id, g, NULL, pf_clock_now_ns(), &mv);
    if (st) return st;
    st = pf_registry_restore(m->d.registry, mv, version, &created);
    if (st) pf_mapver_release(mv);
    return st;
}

pf_status pf_maps_add(pf_maps *m, const char *id, pf_grid *g) { return add(m, id, g, 0); }

static void load_stored_map(void *ud, const char *id, uint64_t version, pf_grid *g) {
    pf_status st = add(ud, id, g, version);
    if (st) fprintf(stderr, "pathd: map '%s' from the data directory: %s\n", id, pf_status_str(st));
}

/* A navmesh map's envelope: parsed and built as an upload would be. */
static void load_stored_nav(void *ud, const char *id, uint64_t version, const char *bytes,
                            size_t len) {
    pf_maps *m = ud;
    cJSON *root = NULL;
    pf_nav_upload u;
    pf_proto_error e;
    pf_mapver *mv = NULL;
    bool created;
    memset(&u, 0, sizeof(u));
    if (pf_jsonr_parse(bytes, len, &root, &e) ||
        pf_nav_upload_from_json(root, &m->limits, &m->nav_limits, &u, &e) ||
        pf_maps_build_nav(m, id, &u, NULL, pf_clock_now_ns(), &mv, &e)) {
        fprintf(stderr, "pathd: navmesh map '%s' from the data directory: %s%s%s\n", id,
                e.field[0] ? e.field : "", e.field[0] ? ": " : "", e.message);
    } else if (pf_registry_restore(m->d.registry, mv, version, &created)) {
        fprintf(stderr, "pathd: navmesh map '%s' from the data directory: out of memory\n", id);
        pf_mapver_release(mv);
    }
    cJSON_Delete(root);
    pf_nav_upload_free(&u);
}

pf_status pf_maps_open_store(pf_maps *m, const char *dir, char *err, size_t errlen) {
    pf_status st;
    size_t n;
    if ((st = pf_store_open(dir, &m->store, err, errlen))) return st;
    n = pf_store_load_all(m->store, &m->limits, load_stored_map, load_stored_nav, m);
    fprintf(stderr, "pathd: %zu maps loaded from %s\n", n, dir);
    return PF_OK;
}
