/* routes_maps.c -- the map routes; see routes_maps.h. */
#include "routes_maps.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_stop.h"
#include "clock.h"
#include "jsonr.h"
#include "kind_grid.h"
#include "maze.h"
#include "maze_json.h"
#include "precond.h"
#include "request.h"
#include "routes_feature.h"

/* The info of any map: its kind writes it. */
static void write_map_info(pf_jsonw *w, const pf_mapver *mv) { mv->kind->write_info(mv, w); }

static void add_etag(pf_req *r, const pf_mapver *mv) {
    char tag[PF_ETAG_LEN];
    pf_etag_format(mv->version, mv->lineage, tag, sizeof(tag));
    pf_req_add_header(r, "ETag", tag);
}

/* A version as the answer of a change: 201 with Location when it created
 * the map, else 200; its ETag either way. Releases mv. */
static void answer_version(pf_req *r, pf_mapver *mv, bool created) {
    pf_jsonw w;
    char location[160];
    pf_jsonw_init(&w, 512);
    write_map_info(&w, mv);
    add_etag(r, mv);
    snprintf(location, sizeof(location), "/v1/maps/%s", mv->id);
    pf_mapver_release(mv);
    if (created)
        pf_req_answer_created(r, &w, location);
    else
        pf_req_answer_json(r, &w);
}

/* Reads If-Match / If-None-Match (I/O thread); answers 400 and returns
 * false when they are malformed. */
static bool read_precond(pf_req *r, pf_precond *c) {
    pf_proto_error e;
    if (pf_precond_parse(pf_req_header(r, "If-Match"), pf_req_header(r, "If-None-Match"), c, &e) ==
        PF_OK)
        return true;
    pf_req_answer_perror(r, &e);
    return false;
}

static void release_mapver(void *mv) { pf_mapver_release(mv); }

/* GET /v1/maps */

/* Job: the store's maps (a round trip to a shared store: on a worker). A
 * map this instance holds is described in full, another by what the store
 * knows of it. */
static void run_list(pf_req *r, pf_search_ctx *ctx) {
    pf_maps_routes *m = pf_req_state(r);
    pf_maps_listing l;
    pf_proto_error e;
    pf_jsonw w;
    (void)ctx;
    if (pf_maps_list(m->maps, &l, &e)) {
        pf_req_answer_perror(r, &e);
        pf_req_finish(r);
        return;
    }
    pf_jsonw_init(&w, 512 * (l.n + 1));
    pf_jsonw_obj_begin(&w);
    pf_jsonw_key(&w, "maps");
    pf_jsonw_arr_begin(&w);
    for (size_t i = 0; i < l.n; i++) {
        const pf_maps_item *it = &l.items[i];
        if (it->mv) {
            write_map_info(&w, it->mv);
            continue;
        }
        pf_jsonw_obj_begin(&w);
        pf_jsonw_kstr(&w, "id", it->id);
        pf_jsonw_kuint(&w, "version", it->version);
        if (it->info && it->info[0]) pf_jsonw_raw_members(&w, it->info, strlen(it->info));
        pf_jsonw_obj_end(&w);
    }
    pf_jsonw_arr_end(&w);
    pf_jsonw_obj_end(&w);
    pf_maps_listing_free(&l);
    pf_req_answer_json(r, &w);
    pf_req_finish(r);
}

void pf__route_maps_list(pf_req *r, pf_maps_routes *m) {
    pf_req_set_state(r, m, NULL);
    pf_req_dispatch(r, PF_JOB_SEARCH, run_list);
}

/* GET /v1/maps/{id} */

void pf__route_map_get(pf_req *r, pf_maps_routes *m) {
    pf_mapver *mv = pf_registry_get(m->registry, pf_req_map_id(r));
    pf_jsonw w;
    if (!mv) {
        pf_req_answer_no_map(r);
        return;
    }
    pf_jsonw_init(&w, 512);
    write_map_info(&w, mv);
    add_etag(r, mv);
    pf_mapver_release(mv);
    pf_req_answer_json(r, &w);
}

/* GET /v1/maps/{id}/cells, /hierarchy: the features only some kinds have. */

/* Job: every cell of a map (megabytes on big maps: written on a worker).
 * The state is the version, referenced. */
static void run_cells(pf_req *r, pf_search_ctx *ctx) {
    const pf_mapver *mv = pf_req_state(r);
    pf_jsonw w;
    (void)ctx;
    mv->kind->write_cells(mv, &w);
    pf_req_answer_json(r, &w);
    pf_req_finish(r);
}

void pf__route_map_cells(pf_req *r, pf_maps_routes *m) {
    pf_mapver *mv = pf__route_feature_map(r, m->registry, PF_KIND_CELLS, NULL);
    if (!mv) return;
    pf_req_set_state(r, mv, release_mapver);
    pf_req_dispatch(r, PF_JOB_SEARCH, run_cells);
}

/* What a hierarchy request keeps for its job. */
typedef struct hierarchy_job {
    pf_mapver *mv; /* a reference */
    bool intra;    /* ?intra=true: the intra-cluster edges too */
} hierarchy_job;

static void free_hierarchy_job(void *p) {
    hierarchy_job *job = p;
    pf_mapver_release(job->mv);
    free(job);
}

/* Job: the hierarchy of a map version (the debug viewer draws it); tens
 * of thousands of nodes on big maps: written on a worker. */
static void run_hierarchy(pf_req *r, pf_search_ctx *ctx) {
    const hierarchy_job *job = pf_req_state(r);
    pf_proto_error e;
    pf_jsonw w;
    (void)ctx;
    if (job->mv->kind->write_hierarchy(job->mv, job->intra, &w, &e))
        pf_req_answer_perror(r, &e);
    else
        pf_req_answer_json(r, &w);
    pf_req_finish(r);
}

void pf__route_map_hierarchy(pf_req *r, pf_maps_routes *m) {
    pf_kv kv[4];
    size_t n;
    bool intra = false;
    hierarchy_job *job;
    pf_mapver *mv;
    if (!pf_req_query(r, kv, 4, &n)) {
        pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, NULL, "Too many parameters.");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *v = kv[i].value ? kv[i].value : "";
        if (strcmp(kv[i].key, "intra") != 0) {
            pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, kv[i].key,
                                "Unknown parameter '%.40s'; the one parameter is 'intra'.",
                                kv[i].key);
            return;
        }
        if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0) {
            pf_req_answer_error(r, PF_ERR_INVALID_VALUE, "intra",
                                "Parameter 'intra' must be true or false.");
            return;
        }
        intra = strcmp(v, "true") == 0;
    }
    if (!(mv = pf__route_feature_map(r, m->registry, PF_KIND_HIERARCHY, NULL))) return;
    if (!(job = malloc(sizeof(*job)))) {
        pf_mapver_release(mv);
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->mv = mv;
    job->intra = intra;
    pf_req_set_state(r, job, free_hierarchy_job);
    pf_req_dispatch(r, PF_JOB_SEARCH, run_hierarchy);
}

/* DELETE /v1/maps/{id} */

/* Query-string arguments an upload may have (an OBJ model's settings). */
#define MAX_OBJ_ARGS 16

typedef struct change_job {
    pf_maps_routes *m;
    pf_precond cond;
    bool create; /* POST: the id is the content's */
    /* A PATCH: parsed by the kind the map had when it came (kind.h). */
    const pf_kind_ops *kind;
    void *patch;
    /* An upload's query string (an OBJ model's settings), copied. */
    pf_kv args[MAX_OBJ_ARGS];
    size_t nargs;
    bool too_many_args;
} change_job;

static void free_change_job(void *p) {
    change_job *job = p;
    if (job->patch) job->kind->patch_free(job->patch);
    for (size_t i = 0; i < job->nargs; i++) {
        free((char *)job->args[i].key);
        free((char *)job->args[i].value);
    }
    free(job);
}

/* The state of a map change, its preconditions read; NULL when it was
 * answered (400, 503). */
static change_job *new_change(pf_req *r, pf_maps_routes *m) {
    change_job *job = calloc(1, sizeof(*job));
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return NULL;
    }
    job->m = m;
    pf_req_set_state(r, job, free_change_job);
    return read_precond(r, &job->cond) ? job : NULL;
}

/* Job: the removal (a file, or the shared store: on a worker). */
static void run_delete(pf_req *r, pf_search_ctx *ctx) {
    change_job *job = pf_req_state(r);
    pf_proto_error e;
    (void)ctx;
    if (pf_maps_remove(job->m->maps, pf_req_map_id(r), &job->cond, &e))
        pf_req_answer_perror(r, &e);
    else
        pf_req_answer_no_content(r);
    pf_req_finish(r);
}

void pf__route_map_delete(pf_req *r, pf_maps_routes *m) {
    if (new_change(r, m)) pf_req_dispatch(r, PF_JOB_BUILD, run_delete);
}

/* POST /v1/maps, PUT /v1/maps/{id} */

/* SHA-256 of the kind and the body: POST's map id, and how a POST of the
 * same map again is recognised. The kind byte is 1 for JSON, 2 for a
 * Moving AI map (either media type): the values ids have always been
 * hashed with; 3 for OBJ, whose settings (the query string's arguments,
 * in order) are hashed too. */
static void content_hash(const pf_req *r, const change_job *job, pf_body_kind kind,
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

/* kind.h's pf_kind_maps over this server's maps (a graph's auto_link):
 * the current version of map id, loaded from a shared store first; NULL
 * when no store has it. */
static pf_status lookup_map(void *ctx, const char *id, pf_mapver **out, pf_proto_error *e) {
    pf_maps_routes *m = ctx;
    pf_proto_error le;
    *out = NULL;
    if (pf_maps_needs_load(m->maps, id) && pf_maps_load(m->maps, id, &le)) {
        if (le.code == PF_ERR_MAP_NOT_FOUND) return PF_OK;
        *e = le;
        return le.status;
    }
    *out = pf_registry_get(m->registry, id);
    return PF_OK;
}

/* Parses the upload as its kind says (a JSON body's "kind", else its
 * Content-Type) and builds it. Answers an error and returns false, or
 * gives *mv. */
static bool build_upload(pf_req *r, change_job *job, const char *id, const uint8_t hash[32],
                         uint64_t t0, pf_mapver **mv) {
    pf_kind_upload in;
    pf_kind_maps maps = {job->m, lookup_map};
    const pf_kind_env *env;
    cJSON *root = NULL;
    pf_proto_error e;
    void *up = NULL;
    pf_status st;
    memset(&in, 0, sizeof(in));
    in.body_kind = pf_req_body_kind(r);
    in.body = pf_req_body(r, &in.len);
    in.root = &root;
    in.args = job->args;
    in.nargs = job->nargs;
    in.too_many_args = job->too_many_args;
    in.maps = &maps;
    if ((in.body_kind == PF_BODY_JSON && (st = pf_jsonr_parse(in.body, in.len, &root, &e))) ||
        (st = pf_kinds_for_upload(pf_maps_kinds(job->m->maps), in.body_kind, root, &env, &e)) ||
        (st = env->kind->upload_parse(env, &in, &up, &e))) {
        cJSON_Delete(root);
        pf_req_answer_perror(r, &e);
        return false;
    }
    cJSON_Delete(root);
    pf_req_drop_body(r); /* the biggest allocation of the request: drop it early */
    if ((st = env->kind->upload_build(env, up, id, hash, t0, mv, &e))) {
        pf_req_answer_perror(r, &e);
        return false;
    }
    return true;
}

/* Job: parse an uploaded map, build it (a grid's planner and HPA*
 * hierarchy, a navmesh's tiles), publish it as the next version. Runs on a
 * worker, never on an I/O thread. */
static void run_build(pf_req *r, pf_search_ctx *ctx) {
    change_job *job = pf_req_state(r);
    pf_maps_routes *m = job->m;
    /* JSON, a Moving AI map (text/x-movingai-map, or text/plain with a
     * token) or OBJ geometry: the route's body set admits nothing else. */
    pf_body_kind kind = pf_req_body_kind(r);
    uint64_t t0 = pf_clock_now_ns();
    uint8_t hash[32];
    char id[PF_MAP_ID_MAX + 1];
    pf_proto_error e;
    pf_mapver *mv;
    pf_maps_change c = {&job->cond, job->create};
    pf_maps_outcome o;
    size_t len;
    (void)ctx;

    content_hash(r, job, kind, hash);
    snprintf(id, sizeof(id), "%s", pf_req_map_id(r));
    if (job->create) {
        /* POST: the id is the content hash, so uploading the same map again
         * finds it and changes nothing. */
        snprintf(id, sizeof(id), "m-");
        for (int i = 0; i < 8; i++)
            snprintf(id + 2 + 2 * i, sizeof(id) - 2 - 2 * (size_t)i, "%02x", hash[i]);
        if ((mv = pf_maps_find_upload(m->maps, id, hash))) {
            o.current = mv;
            goto out_unchanged;
        }
    }
    pf_req_body(r, &len);
    if (len == 0) {
        pf_req_answer_error(r, PF_ERR_MALFORMED_MAP, NULL,
                            "The body is empty; send a Moving AI map (text/x-movingai-map), a "
                            "JSON map, or a navmesh (model/obj, or JSON with "
                            "\"kind\":\"navmesh\").");
        goto out_finish;
    }
    if (!build_upload(r, job, id, hash, t0, &mv)) goto out_finish;
    pf_metrics_observe_map_build(m->metrics, mv->build_us);
    if (pf_maps_publish(m->maps, mv, &c, &o, &e)) { /* takes mv */
        pf_req_answer_perror(r, &e);
        goto out_finish;
    }
    if (!o.unchanged) {
        answer_version(r, o.current, o.created);
        goto out_finish;
    }
out_unchanged : {
    char location[160];
    snprintf(location, sizeof(location), "/v1/maps/%s", id);
    pf_req_add_header(r, "Location", location);
    answer_version(r, o.current, false);
}
out_finish:
    pf_req_finish(r);
}

static void dispatch_build(pf_req *r, pf_maps_routes *m, bool create) {
    change_job *job = new_change(r, m);
    if (!job) return;
    job->create = create;
    if (pf_req_body_kind(r) == PF_BODY_OBJ) {
        /* An OBJ model's settings, read here: the query string is the I/O
         * thread's. */
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

/* POST /v1/maps/generate: a maze, which is a grid. */

static const pf_kind_env *grid_env(const pf_maps_routes *m) {
    return pf_kinds_env(pf_maps_kinds(m->maps), &pf_kind_grid);
}

static const pf_grid_limits *grid_limits(const pf_maps_routes *m) {
    return pf_grid_limits_of(grid_env(m));
}

typedef struct generate_job {
    pf_maps_routes *m;
    pf_generate_request q;
} generate_job;

/* Job: generate the maze, build and publish it like an upload. Without an
 * id the map's id comes from the parameters ("maze-" and 16 hex digits of
 * their SHA-256), so the same request finds the same map again. */
static void run_generate(pf_req *r, pf_search_ctx *ctx) {
    generate_job *job = pf_req_state(r);
    pf_maps_routes *m = job->m;
    char canon[256], id[PF_MAP_ID_MAX + 1];
    uint8_t hash[32];
    struct sha256_ctx h;
    uint64_t t0 = pf_clock_now_ns(), deadline = pf_grid_build_deadline(grid_env(m), t0);
    pf_build_stop stop = pf_build_stop_make(pf_clock_deadline_passed, &deadline);
    size_t n = pf_generate_canonical(&job->q, canon, sizeof(canon));
    pf_grid *g = NULL;
    pf_mapver *mv;
    /* As a POST: the map already there with the same hash is kept. */
    pf_maps_change c = {NULL, true};
    pf_maps_outcome o;
    pf_proto_error e;
    pf_status st;
    (void)ctx;

    sha256_init(&h);
    sha256_update(&h, n, (const uint8_t *)canon);
    sha256_digest(&h, SHA256_DIGEST_SIZE, hash);
    if (job->q.has_id) {
        snprintf(id, sizeof(id), "%s", job->q.id);
    } else {
        snprintf(id, sizeof(id), "maze-");
        for (int i = 0; i < 8; i++)
            snprintf(id + 5 + 2 * i, sizeof(id) - 5 - 2 * (size_t)i, "%02x", hash[i]);
    }
    /* The same parameters again under the same id: nothing to build. */
    if ((mv = pf_maps_find_upload(m->maps, id, hash))) {
        o.current = mv;
        goto out_unchanged;
    }
    if ((st = pf_maze_generate(&job->q.maze, grid_limits(m), &stop, &g))) {
        if (st == PF_ECANCELED) {
            pf_grid_build_too_long(grid_env(m), &e, "Generating the maze");
            pf_req_answer_perror(r, &e);
        } else {
            pf_req_answer_error(r, pf_error_for_status(st), NULL, "Generating the maze failed: %s.",
                                pf_status_str(st));
        }
        goto out_finish;
    }
    if ((st = pf_grid_build(grid_env(m), id, g, hash, t0, deadline, &mv, &e))) {
        pf_req_answer_perror(r, &e);
        goto out_finish;
    }
    if (pf_maps_publish(m->maps, mv, &c, &o, &e)) { /* takes mv */
        pf_req_answer_perror(r, &e);
        goto out_finish;
    }
    if (!o.unchanged) {
        answer_version(r, o.current, o.created);
        goto out_finish;
    }
out_unchanged : {
    char location[160];
    snprintf(location, sizeof(location), "/v1/maps/%s", id);
    pf_req_add_header(r, "Location", location);
    answer_version(r, o.current, false);
}
out_finish:
    pf_req_finish(r);
}

void pf__route_maps_generate(pf_req *r, pf_maps_routes *m) {
    generate_job *job = calloc(1, sizeof(*job));
    pf_proto_error e;
    size_t len;
    const char *body = pf_req_body(r, &len);
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->m = m;
    pf_req_set_state(r, job, free);
    if (pf_generate_request_parse(body, len, grid_limits(m), &job->q, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    if (job->q.has_id && !pf_map_id_is_valid(job->q.id, strlen(job->q.id))) {
        pf_req_answer_error(r, PF_ERR_INVALID_MAP_ID, "id", NULL);
        return;
    }
    pf_req_dispatch(r, PF_JOB_BUILD, run_generate);
}

/* PATCH /v1/maps/{id} */

/* Job: the next version of a map with the PATCH (cells and doors of a
 * grid, obstacles and areas of a navmesh, ...). Runs as a build (it copies
 * the world and repairs what changed); maps.c starts over on the newer
 * version when another change comes first. */
static void run_patch(pf_req *r, pf_search_ctx *ctx) {
    change_job *job = pf_req_state(r);
    pf_maps_change c = {&job->cond, false};
    pf_proto_error e;
    pf_mapver *mv;
    size_t len;
    const char *body = pf_req_body(r, &len);
    (void)ctx;
    if (pf_maps_patch(job->m->maps, pf_req_map_id(r), job->kind, job->patch, body, len, &c, &mv,
                      &e)) {
        pf_req_answer_perror(r, &e);
    } else {
        pf_metrics_observe_map_repair(job->m->metrics, mv->build_us);
        answer_version(r, mv, false);
    }
    pf_req_finish(r);
}

void pf__route_map_patch(pf_req *r, pf_maps_routes *m) {
    const pf_kinds *kinds = pf_maps_kinds(m->maps);
    const pf_kind_env *env = pf_kinds_default(kinds);
    pf_proto_error e;
    size_t len;
    const char *body = pf_req_body(r, &len);
    change_job *job = new_change(r, m);
    pf_mapver *cur;
    if (!job) return;
    /* The body's shape is the map's kind's (held here: a shared store's
     * map was loaded before the handler); maps.c checks the kind again
     * with the change (409 when a PUT of another kind came first). */
    if ((cur = pf_registry_get(m->registry, pf_req_map_id(r)))) {
        env = pf_kinds_env(kinds, cur->kind);
        pf_mapver_release(cur);
    }
    job->kind = env->kind;
    if (env->kind->patch_parse(env, body, len, (size_t)m->cfg->max_patch_changes, &job->patch,
                               &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    pf_req_dispatch(r, PF_JOB_BUILD, run_patch);
}
