/* routes_maps.c -- the map routes; see routes_maps.h. */
#include "routes_maps.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "jsonr.h"
#include "map_json.h"
#include "nav_json.h"
#include "request.h"
#include "session_json.h"

/* A navmesh map's info: the fields every map has, then "navmesh". */
static void write_nav_map_info(pf_jsonw *w, const pf_mapver *mv, const pf_cache_stats *cs) {
    pf_nav_info ni;
    uint64_t lookups = cs->hits + cs->misses;
    pf_navmesh_info(mv->nav, &ni);
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "id", mv->id);
    pf_jsonw_kuint(w, "version", mv->version);
    pf_jsonw_kstr(w, "kind", "navmesh");
    pf_jsonw_kuint(w, "memory_bytes", ni.mesh_bytes + ni.layer_bytes + mv->navsrc->len);
    pf_jsonw_kuint(w, "build_us", mv->build_us);
    pf_jsonw_kstr(w, "default_algorithm", "polyanya");
    pf_jsonw_key(w, "cache");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "entries", cs->entries);
    pf_jsonw_kuint(w, "hits", cs->hits);
    pf_jsonw_kuint(w, "misses", cs->misses);
    pf_jsonw_kdouble(w, "hit_ratio", lookups ? (double)cs->hits / (double)lookups : 0.0);
    pf_jsonw_obj_end(w);
    pf_jsonw_key(w, "navmesh");
    pf_nav_write_info(w, mv->nav);
    pf_jsonw_obj_end(w);
}

static void write_map_info(pf_jsonw *w, const pf_mapver *mv) {
    pf_cache_stats cs;
    pf_map_info info;
    pf_cache_get_stats(mv->cache, &cs);
    if (mv->nav) {
        write_nav_map_info(w, mv, &cs);
        return;
    }
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

static void answer_no_map(pf_req *r, const char *id) {
    pf_req_answer_error(r, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.", id);
}

static void answer_storage(pf_req *r, const char *id, const char *err) {
    fprintf(stderr, "pathd: map '%s': %s\n", id, err);
    pf_req_answer_error(r, PF_ERR_STORAGE, NULL,
                        "The map could not be saved to the data directory (%s); nothing changed.",
                        err);
}

/* A version as the answer of a change: 201 with Location when it created
 * the map, else 200. Releases mv. */
static void answer_version(pf_req *r, pf_mapver *mv, bool created) {
    pf_jsonw w;
    char location[160];
    pf_jsonw_init(&w, 512);
    write_map_info(&w, mv);
    snprintf(location, sizeof(location), "/v1/maps/%s", mv->id);
    pf_mapver_release(mv);
    if (created)
        pf_req_answer_created(r, &w, location);
    else
        pf_req_answer_json(r, &w);
}

static void release_mapver(void *mv) { pf_mapver_release(mv); }

/* GET /v1/maps */

void pf__route_maps_list(pf_req *r, pf_maps_routes *m) {
    pf_mapver **list;
    size_t n;
    pf_jsonw w;
    if (pf_registry_list(m->registry, &list, &n)) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
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
    pf_req_answer_json(r, &w);
}

/* GET /v1/maps/{id} */

void pf__route_map_get(pf_req *r, pf_maps_routes *m) {
    pf_mapver *mv = pf_registry_get(m->registry, pf_req_map_id(r));
    pf_jsonw w;
    if (!mv) {
        answer_no_map(r, pf_req_map_id(r));
        return;
    }
    pf_jsonw_init(&w, 512);
    write_map_info(&w, mv);
    pf_mapver_release(mv);
    pf_req_answer_json(r, &w);
}

/* GET /v1/maps/{id}/cells */

/* Job: every cell of a map (megabytes on big maps: written on a worker).
 * The state is the version, referenced. */
static void run_cells(pf_req *r, pf_search_ctx *ctx) {
    const pf_mapver *mv = pf_req_state(r);
    const pf_grid *g = pf_planner_grid(mv->planner);
    pf_jsonw w;
    (void)ctx;
    pf_jsonw_init(&w, (size_t)pf_grid_width(g) * (size_t)pf_grid_height(g) * 2 + 512);
    pf_map_write_cells(&w, mv->id, mv->version, g);
    pf_req_answer_json(r, &w);
    pf_req_finish(r);
}

void pf__route_map_cells(pf_req *r, pf_maps_routes *m) {
    pf_mapver *mv = pf_registry_get(m->registry, pf_req_map_id(r));
    if (!mv) {
        answer_no_map(r, pf_req_map_id(r));
        return;
    }
    if (mv->nav) {
        pf_req_answer_error(r, PF_ERR_UNSUPPORTED, NULL,
                            "Map '%s' is a navmesh: it has no cells (GET /v1/maps/%s describes "
                            "the mesh).",
                            mv->id, mv->id);
        pf_mapver_release(mv);
        return;
    }
    pf_req_set_state(r, mv, release_mapver);
    pf_req_dispatch(r, PF_JOB_SEARCH, run_cells);
}

/* DELETE /v1/maps/{id} */

void pf__route_map_delete(pf_req *r, pf_maps_routes *m) {
    char err[256];
    pf_status st = pf_maps_remove(m->maps, pf_req_map_id(r), err, sizeof(err));
    if (st == PF_EIO)
        answer_storage(r, pf_req_map_id(r), err);
    else if (st)
        answer_no_map(r, pf_req_map_id(r));
    else
        pf_req_answer_no_content(r);
}

/* POST /v1/maps, PUT /v1/maps/{id} */

/* Query-string arguments an OBJ upload may have (its settings). */
#define MAX_OBJ_ARGS 16

typedef struct build_job {
    pf_maps_routes *m;
    bool create; /* POST: the id is the content's */
    /* A model/obj upload's settings, copied from the query string. */
    pf_kv args[MAX_OBJ_ARGS];
    size_t nargs;
    bool too_many_args;
} build_job;

static void free_build_job(void *p) {
    build_job *job = p;
    for (size_t i = 0; i < job->nargs; i++) {
        free((char *)job->args[i].key);
        free((char *)job->args[i].value);
    }
    free(job);
}

/* The kind of a map body: the declared one, else sniffed. */
static pf_body_kind map_body_kind(const pf_req *r) {
    size_t len;
    const char *body = pf_req_body(r, &len);
    if (pf_req_body_kind(r) != PF_BODY_ABSENT) return pf_req_body_kind(r);
    for (size_t i = 0; i < len; i++) {
        char c = body[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
        return c == '{' ? PF_BODY_JSON : PF_BODY_TEXT;
    }
    return PF_BODY_TEXT;
}

/* SHA-256 of the kind and the body: POST's map id, and how a POST of the
 * same map again is recognised. The kind byte is 1 for JSON, 2 for text:
 * the values ids have always been hashed with; 3 for OBJ, whose settings
 * (the query string's arguments, in order) are hashed too. */
static void content_hash(const pf_req *r, const build_job *job, pf_body_kind kind,
                         uint8_t out[32]) {
    struct sha256_ctx h;
    uint8_t k = kind == PF_BODY_JSON ? 1 : kind == PF_BODY_OBJ ? 3 : 2;
    size_t len;
    const char *body = pf_req_body(r, &len);
    sha256_init(&h);
    sha256_update(&h, 1, &k);
    sha256_update(&h, len, (const uint8_t *)body);
    if (kind == PF_BODY_OBJ)
        for (size_t i = 0; i < job->nargs; i++) {
            const char *v = job->args[i].value ? job->args[i].value : "";
            sha256_update(&h, strlen(job->args[i].key) + 1, (const uint8_t *)job->args[i].key);
            sha256_update(&h, strlen(v) + 1, (const uint8_t *)v);
        }
    sha256_digest(&h, SHA256_DIGEST_SIZE, out);
}

/* Parses a navmesh upload (kind OBJ, or JSON already parsed as root) and
 * builds it. Answers an error and returns false, or gives *mv. */
static bool build_nav(pf_req *r, build_job *job, pf_body_kind kind, const cJSON *root,
                      const char *id, const uint8_t hash[32], uint64_t t0, pf_mapver **mv) {
    pf_maps_routes *m = job->m;
    pf_nav_upload u;
    pf_proto_error e;
    pf_status st;
    size_t len;
    const char *body = pf_req_body(r, &len);
    if (kind == PF_BODY_OBJ) {
        if (job->too_many_args) {
            pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, NULL, "Too many parameters.");
            return false;
        }
        st = pf_nav_upload_from_obj(body, len, job->args, job->nargs, pf_maps_nav_limits(m->maps),
                                    &u, &e);
    } else {
        st = pf_nav_upload_from_json(root, pf_maps_limits(m->maps), pf_maps_nav_limits(m->maps), &u,
                                     &e);
    }
    pf_req_drop_body(r);
    if (st) {
        pf_req_answer_perror(r, &e);
        return false;
    }
    st = pf_maps_build_nav(m->maps, id, &u, hash, t0, mv, &e);
    pf_nav_upload_free(&u);
    if (st) {
        pf_req_answer_perror(r, &e);
        return false;
    }
    return true;
}

/* Job: parse an uploaded map, build its planner (HPA* hierarchy included),
 * publish it as the next version. Runs on a worker, never on an I/O
 * thread. */
static void run_build(pf_req *r, pf_search_ctx *ctx) {
    build_job *job = pf_req_state(r);
    pf_maps_routes *m = job->m;
    pf_body_kind kind = map_body_kind(r);
    uint64_t t0 = pf_clock_now_ns();
    uint8_t hash[32];
    char id[PF_MAP_ID_MAX + 1];
    pf_proto_error e;
    pf_grid *g = NULL;
    pf_mapver *mv;
    pf_status st;
    bool created = false;
    const char *body;
    size_t len;
    char err[256];
    (void)ctx;

    content_hash(r, job, kind, hash);
    snprintf(id, sizeof(id), "%s", pf_req_map_id(r));
    if (job->create) {
        /* POST: the id is the content hash, so uploading the same map again
         * finds it and changes nothing. */
        pf_mapver *old;
        snprintf(id, sizeof(id), "m-");
        for (int i = 0; i < 8; i++)
            snprintf(id + 2 + 2 * i, sizeof(id) - 2 - 2 * (size_t)i, "%02x", hash[i]);
        old = pf_registry_get(m->registry, id);
        if (old && memcmp(old->content_hash, hash, sizeof(hash)) == 0) {
            char location[160];
            snprintf(location, sizeof(location), "/v1/maps/%s", id);
            pf_req_add_header(r, "Location", location);
            answer_version(r, old, false);
            goto out_finish;
        }
        pf_mapver_release(old);
    }
    body = pf_req_body(r, &len);
    if (len == 0) {
        pf_req_answer_error(r, PF_ERR_MALFORMED_MAP, NULL,
                            "The body is empty; send a Moving AI map (text/plain), a JSON map, "
                            "or a navmesh (model/obj, or JSON with \"kind\":\"navmesh\").");
        goto out_finish;
    }
    if (kind == PF_BODY_OBJ) {
        if (!build_nav(r, job, kind, NULL, id, hash, t0, &mv)) goto out_finish;
    } else {
        cJSON *root = NULL;
        bool navmesh = false;
        if (kind == PF_BODY_JSON) {
            /* A JSON upload is a grid or, with "kind":"navmesh", a mesh. */
            if ((st = pf_jsonr_parse(body, len, &root, &e)) ||
                (st = pf_nav_json_kind(root, &navmesh, &e))) {
                cJSON_Delete(root);
                pf_req_answer_perror(r, &e);
                goto out_finish;
            }
            if (navmesh) {
                bool ok = build_nav(r, job, kind, root, id, hash, t0, &mv);
                cJSON_Delete(root);
                if (!ok) goto out_finish;
            } else {
                cJSON_Delete(root); /* the grid parser reads the body again */
            }
        }
        if (!navmesh) {
            if (kind == PF_BODY_JSON)
                st = pf_map_json_parse(body, len, pf_maps_limits(m->maps), &g, &e);
            else
                st = pf_map_text_parse(body, len, pf_maps_limits(m->maps), &g, &e);
            pf_req_drop_body(r); /* the biggest allocation of the request: drop it early */
            if (st) {
                pf_req_answer_perror(r, &e);
                goto out_finish;
            }
            if ((st = pf_maps_build(m->maps, id, g, hash, t0, &mv))) {
                pf_req_answer_error(r, pf_error_for_status(st), NULL,
                                    "Preparing the map failed: %s.", pf_status_str(st));
                goto out_finish;
            }
        }
    }
    /* Our own reference before mv becomes visible: once published, a DELETE
     * or another PUT may drop the registry's reference at any moment. */
    pf_mapver_retain(mv);
    if ((st = pf_maps_publish(m->maps, mv, &created, err, sizeof(err)))) {
        pf_mapver_release(mv);
        pf_mapver_release(mv);
        if (st == PF_EIO)
            answer_storage(r, id, err);
        else if (st == PF_ELIMIT)
            pf_req_answer_error(r, PF_ERR_LIMIT_EXCEEDED, NULL,
                                "The server holds %lld maps, its limit; delete one first.",
                                (long long)m->cfg->max_maps);
        else
            pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        goto out_finish;
    }
    /* mv is published: the registry holds the reference it was created with,
     * we still hold ours (answer_version drops it). */
    answer_version(r, mv, created);
out_finish:
    pf_req_finish(r);
}

static void dispatch_build(pf_req *r, pf_maps_routes *m, bool create) {
    build_job *job = calloc(1, sizeof(*job));
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->m = m;
    job->create = create;
    pf_req_set_state(r, job, free_build_job);
    if (pf_req_body_kind(r) == PF_BODY_OBJ) {
        /* The settings, read here: the query string is the I/O thread's. */
        pf_kv kv[MAX_OBJ_ARGS];
        size_t n = 0;
        if (!pf_req_query(r, kv, MAX_OBJ_ARGS, &n)) job->too_many_args = true;
        for (size_t i = 0; i < n; i++) {
            job->args[i].key = strdup(kv[i].key);
            job->args[i].value = kv[i].value ? strdup(kv[i].value) : NULL;
            job->nargs = i + 1;
            if (!job->args[i].key || (kv[i].value && !job->args[i].value)) {
                pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
                return;
            }
        }
    }
    pf_req_dispatch(r, PF_JOB_BUILD, run_build);
}

void pf__route_maps_create(pf_req *r, pf_maps_routes *m) { dispatch_build(r, m, true); }

void pf__route_map_put(pf_req *r, pf_maps_routes *m) { dispatch_build(r, m, false); }

/* PATCH /v1/maps/{id} */

typedef struct patch_job {
    pf_maps_routes *m;
    bool nav;            /* the map was a navmesh when the PATCH came */
    pf_update patch;     /* a grid map's cells and doors */
    pf_nav_patch npatch; /* a navmesh map's obstacles and areas */
} patch_job;

static void free_patch_job(void *p) {
    patch_job *job = p;
    pf_update_free(&job->patch);
    pf_nav_patch_free(&job->npatch);
    free(job);
}

/* The answer when a PUT changed the map's kind between the PATCH's parse
 * and its job. */
static void answer_kind_changed(pf_req *r, const char *id, bool was_nav) {
    pf_req_answer_error(r, PF_ERR_CONFLICT, NULL,
                        "Map '%s' was replaced by a %s map while this PATCH waited; nothing "
                        "changed.",
                        id, was_nav ? "grid" : "navmesh");
}

/* Job: the next version of a navmesh map with the PATCH's obstacles and
 * areas: the Detour mesh copied, the touched tiles rebuilt on the pool.
 * Starts over when another change publishes first, as run_patch does. */
static void run_nav_patch(pf_req *r, pf_search_ctx *ctx) {
    patch_job *job = pf_req_state(r);
    pf_maps_routes *m = job->m;
    const char *id = pf_req_map_id(r);
    pf_nav_change ch = pf_nav_patch_change(&job->npatch);
    char err[256];
    (void)ctx;
    for (int attempt = 0;; attempt++) {
        pf_mapver *cur = pf_registry_get(m->registry, id), *mv;
        pf_navmesh *next = NULL;
        pf_nav_error ne;
        pf_proto_error e;
        uint64_t t0 = pf_clock_now_ns();
        pf_status st;
        if (!cur) {
            answer_no_map(r, id);
            break;
        }
        if (!cur->nav) {
            pf_mapver_release(cur);
            answer_kind_changed(r, id, true);
            break;
        }
        st = pf_nav_apply(cur->nav, &ch, pf_maps_nav_limits(m->maps), pf_maps_nav_runner(m->maps),
                          &next, &ne);
        if (st) {
            /* The change's "remove[i]" is the request's "remove_obstacles[i]". */
            if (strncmp(ne.field, "remove[", 7) == 0) {
                char f[sizeof(ne.field)];
                snprintf(f, sizeof(f), "remove_obstacles%.70s", ne.field + 6);
                memcpy(ne.field, f, sizeof(f));
            }
            pf_mapver_release(cur);
            pf_maps_nav_error(&e, st, &ne);
            pf_req_answer_perror(r, &e);
            break;
        }
        pf_navsrc_retain(cur->navsrc);
        mv = pf_mapver_create_nav(id, next, cur->navsrc, (size_t)m->cfg->cache_entries,
                                  (size_t)m->cfg->cache_bytes, (pf_clock_now_ns() - t0) / 1000,
                                  cur->content_hash);
        if (!mv) {
            pf_mapver_release(cur);
            pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
            break;
        }
        pf_mapver_retain(mv); /* our own reference before mv becomes visible */
        st = pf_maps_swap(m->maps, cur, mv, err, sizeof(err));
        if (st != PF_OK) pf_mapver_release(mv); /* not published: the registry took none */
        if (st == PF_EIO) {
            pf_mapver_release(mv);
            pf_mapver_release(cur);
            answer_storage(r, id, err);
            break;
        }
        if (st == PF_OK) {
            pf_cache_clear(cur->cache); /* as run_patch: old paths are never served again */
            pf_mapver_release(cur);
            answer_version(r, mv, false);
            break;
        }
        pf_mapver_release(mv);
        pf_mapver_release(cur);
        if (attempt >= 16) {
            pf_req_answer_error(r, PF_ERR_CONFLICT, NULL,
                                "Map '%s' kept changing while this PATCH was applied; retry.", id);
            break;
        }
    }
    pf_req_finish(r);
}

/* Job: the next version of a map with the PATCH's cells and doors. Runs as
 * a build (it clones the grid and repairs the hierarchy). When another
 * PATCH or a PUT publishes first, it starts over on the new version, so
 * concurrent PATCHes apply one after the other and none is lost. */
static void run_patch(pf_req *r, pf_search_ctx *ctx) {
    patch_job *job = pf_req_state(r);
    pf_maps_routes *m = job->m;
    const pf_update *u = &job->patch;
    const char *id = pf_req_map_id(r);
    pf_door_change *doors = NULL;
    char err[256];
    (void)ctx;

    doors = calloc(u->ndoors ? u->ndoors : 1, sizeof(*doors));
    if (!doors) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        goto out_finish;
    }
    for (int attempt = 0;; attempt++) {
        pf_mapver *cur = pf_registry_get(m->registry, id), *mv;
        const pf_grid *g;
        pf_planner *planner = NULL;
        pf_point *changed = NULL;
        size_t nchanged = 0;
        uint64_t t0 = pf_clock_now_ns();
        pf_status st;
        if (!cur) {
            answer_no_map(r, id);
            goto out_finish;
        }
        if (cur->nav) {
            pf_mapver_release(cur);
            answer_kind_changed(r, id, false);
            goto out_finish;
        }
        g = pf_planner_grid(cur->planner);
        for (size_t i = 0; i < u->ncells; i++)
            if (!pf_grid_in_bounds(g, u->cells[i].p)) {
                char f[32];
                snprintf(f, sizeof(f), "cells[%zu]", i);
                pf_req_answer_error(r, PF_ERR_OFF_MAP, f, "%s (%d,%d) is outside the %dx%d map.", f,
                                    (int)u->cells[i].p.x, (int)u->cells[i].p.y,
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
                pf_req_answer_error(r, PF_ERR_INVALID_VALUE, f, "Map '%s' has no door '%s'.", id,
                                    u->doors[i].id);
                pf_mapver_release(cur);
                goto out_finish;
            }
        }
        st = pf_planner_apply(cur->planner, u->cells, u->ncells, doors, u->ndoors, &planner,
                              &changed, &nchanged);
        if (st) {
            pf_mapver_release(cur);
            pf_req_answer_error(r, pf_error_for_status(st), NULL,
                                "Applying the changes failed: %s.", pf_status_str(st));
            goto out_finish;
        }
        mv = pf_maps_wrap(m->maps, id, planner, (pf_clock_now_ns() - t0) / 1000, NULL);
        if (!mv || pf_mapver_set_log(mv, cur, changed, nchanged)) {
            if (!mv) free(changed);
            pf_mapver_release(mv);
            pf_mapver_release(cur);
            pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
            goto out_finish;
        }
        /* Our own reference before mv becomes visible (see run_build). */
        pf_mapver_retain(mv);
        st = pf_maps_swap(m->maps, cur, mv, err, sizeof(err));
        if (st != PF_OK) pf_mapver_release(mv); /* not published: the registry took none */
        if (st == PF_EIO) {
            pf_mapver_release(mv);
            pf_mapver_release(cur);
            answer_storage(r, id, err);
            goto out_finish;
        }
        if (st == PF_OK) {
            /* Paths cached for the old version must not be served again:
             * they are keyed by version, and dropping them frees the memory
             * while sessions still hold the old version. */
            pf_cache_clear(cur->cache);
            pf_mapver_release(cur);
            answer_version(r, mv, false);
            goto out_finish;
        }
        pf_mapver_release(mv);
        pf_mapver_release(cur);
        if (attempt >= 16) {
            pf_req_answer_error(r, PF_ERR_CONFLICT, NULL,
                                "Map '%s' kept changing while this PATCH was applied; retry.", id);
            goto out_finish;
        }
    }
out_finish:
    free(doors);
    pf_req_finish(r);
}

void pf__route_map_patch(pf_req *r, pf_maps_routes *m) {
    pf_proto_error e;
    size_t len;
    const char *body = pf_req_body(r, &len);
    patch_job *job = calloc(1, sizeof(*job));
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->m = m;
    pf_req_set_state(r, job, free_patch_job);
    {
        /* The body's shape depends on the map's kind; the job checks the
         * kind again (a PUT may replace the map meanwhile). */
        pf_mapver *cur = pf_registry_get(m->registry, pf_req_map_id(r));
        if (!cur) {
            answer_no_map(r, pf_req_map_id(r));
            return;
        }
        job->nav = cur->nav != NULL;
        pf_mapver_release(cur);
    }
    if (job->nav ? pf_nav_patch_parse(body, len, &job->npatch, &e)
                 : pf_map_patch_parse(body, len, &job->patch, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    pf_req_dispatch(r, PF_JOB_BUILD, job->nav ? run_nav_patch : run_patch);
}
