/* routes_mesh.c -- GET /v1/maps/{id}/mesh: a navmesh map's geometry, read
 * only, for the viewer (proto/mesh_json.h says what it holds).
 *
 *   ?triangles=true|false  the surface triangles and detail vertices
 *                          (default true)
 *   ?input=true|false      the input geometry, the OBJ the map was built
 *                          from (default false; null for a map made from a
 *                          grid)
 *
 * The answer is sized before it is written (pf_mesh_size_bound, an upper
 * bound from the mesh's counts): past --max-mesh-bytes it is 413
 * limit_exceeded naming what to leave out, and nothing is written. The
 * writing runs on a worker; the version is referenced until it is done.
 * The answer carries the version's ETag, as the map info does. A grid map
 * is 422 unsupported.
 *
 * A thin handler in its own file: the world-kind modules (server/kind.h,
 * issue 26) make it the navmesh kind's feature. */
#include <stdlib.h>
#include <string.h>

#include "maps.h"
#include "mesh_json.h"
#include "precond.h"
#include "request.h"
#include "routes_maps.h"

typedef struct mesh_job {
    pf_maps_routes *m;
    pf_mapver *mv; /* a reference */
    bool triangles, input;
} mesh_job;

static void free_mesh_job(void *p) {
    mesh_job *job = p;
    pf_mapver_release(job->mv);
    free(job);
}

/* Job: the input geometry when asked, the size check, the answer. */
static void run_mesh(pf_req *r, pf_search_ctx *ctx) {
    mesh_job *job = pf_req_state(r);
    const pf_mapver *mv = job->mv;
    const pf_nav_limits *lim = pf_maps_nav_limits(job->m->maps);
    uint64_t limit = (uint64_t)job->m->cfg->max_mesh_bytes, bound, without;
    pf_mesh_options o = {job->triangles, NULL};
    pf_obj input;
    bool found = false;
    pf_proto_error e;
    char tag[PF_ETAG_LEN];
    pf_jsonw w;
    (void)ctx;
    memset(&input, 0, sizeof(input));
    if (job->input) {
        if (pf_mesh_source_obj(mv->navsrc->members, mv->navsrc->len, lim->max_vertices,
                               lim->max_triangles, &input, &found, &e)) {
            pf_req_answer_perror(r, &e);
            goto out;
        }
        if (found) o.input = &input;
    }
    bound = pf_mesh_size_bound(mv->nav, &o);
    if (bound > limit) {
        /* Name what to leave out when leaving it out would fit. */
        pf_mesh_options less = {o.triangles, NULL};
        const char *field = NULL, *hint = "raise --max-mesh-bytes";
        if (o.input && (without = pf_mesh_size_bound(mv->nav, &less)) <= limit) {
            field = "input";
            hint = "ask without input=true";
        } else if (o.triangles &&
                   (less.triangles = false, pf_mesh_size_bound(mv->nav, &less)) <= limit) {
            field = "triangles";
            hint = "ask with triangles=false";
        }
        pf_req_answer_error(r, PF_ERR_LIMIT_EXCEEDED, field,
                            "The mesh of map '%s' may take %llu bytes, past max_mesh_bytes (%llu): "
                            "%s.",
                            mv->id, (unsigned long long)bound, (unsigned long long)limit, hint);
        goto out;
    }
    pf_jsonw_init(&w, (size_t)(bound < 65536 ? bound : 65536));
    pf_mesh_write(&w, mv->id, mv->version, mv->nav, &o);
    pf_etag_format(mv->version, mv->lineage, tag, sizeof(tag));
    pf_req_add_header(r, "ETag", tag);
    pf_req_answer_json(r, &w);
out:
    pf_obj_free(&input);
    pf_req_finish(r);
}

/* A true|false parameter; false when answered (400/422). */
static bool read_flag(pf_req *r, const pf_kv *kv, bool *out) {
    const char *v = kv->value ? kv->value : "";
    if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0) {
        pf_req_answer_error(r, PF_ERR_INVALID_VALUE, kv->key,
                            "Parameter '%s' must be true or false.", kv->key);
        return false;
    }
    *out = strcmp(v, "true") == 0;
    return true;
}

void pf__route_map_mesh(pf_req *r, pf_maps_routes *m) {
    pf_kv kv[4];
    size_t n;
    mesh_job *job;
    bool triangles = true, input = false;
    pf_mapver *mv;
    if (!pf_req_query(r, kv, 4, &n)) {
        pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, NULL, "Too many parameters.");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        bool ok;
        if (strcmp(kv[i].key, "triangles") == 0)
            ok = read_flag(r, &kv[i], &triangles);
        else if (strcmp(kv[i].key, "input") == 0)
            ok = read_flag(r, &kv[i], &input);
        else {
            pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, kv[i].key,
                                "Unknown parameter '%.40s'; the parameters are 'triangles' and "
                                "'input'.",
                                kv[i].key);
            return;
        }
        if (!ok) return;
    }
    if (!(mv = pf_registry_get(m->registry, pf_req_map_id(r)))) {
        pf_req_answer_error(r, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.",
                            pf_req_map_id(r));
        return;
    }
    if (!mv->nav) {
        pf_req_answer_error(r, PF_ERR_UNSUPPORTED, NULL,
                            "Map '%s' is a grid map: it has no mesh (GET /v1/maps/%s/cells "
                            "exports its cells).",
                            mv->id, mv->id);
        pf_mapver_release(mv);
        return;
    }
    if (!(job = malloc(sizeof(*job)))) {
        pf_mapver_release(mv);
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    *job = (mesh_job){m, mv, triangles, input};
    pf_req_set_state(r, job, free_mesh_job);
    pf_req_dispatch(r, PF_JOB_SEARCH, run_mesh);
}
