/* routes_mesh.c -- GET /v1/maps/{id}/mesh: a navmesh map's geometry, read
 * only, for the viewer (proto/mesh_json.h says what it holds).
 *
 *   ?triangles=true|false  the surface triangles and detail vertices
 *                          (default true)
 *   ?input=true|false      the input geometry, the OBJ the map was built
 *                          from (default false; null for a map made from a
 *                          grid)
 *   ?agent_type=NAME       whose mesh: one of the map's agent types
 *                          (default "default"); one it lacks is 422
 *                          naming agent_type
 *
 * The answer is sized before it is written (pf_mesh_size_bound, an upper
 * bound from the mesh's counts): past --max-mesh-bytes it is 413
 * limit_exceeded naming what to leave out, and nothing is written. The
 * writing runs on a worker; the version is referenced until it is done.
 * The answer carries the version's ETag, as the map info does. A grid map
 * is 422 unsupported.
 *
 * A feature of the kinds with PF_KIND_MESH (a navmesh: kind_navmesh_export.c
 * writes it; routes_feature.h refuses the others). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav_json.h"
#include "precond.h"
#include "request.h"
#include "routes_feature.h"
#include "routes_maps.h"

typedef struct mesh_job {
    pf_maps_routes *m;
    pf_mapver *mv; /* a reference */
    bool triangles, input;
    char agent_type[64]; /* "" the default */
} mesh_job;

static void free_mesh_job(void *p) {
    mesh_job *job = p;
    pf_mapver_release(job->mv);
    free(job);
}

/* Job: the kind writes the mesh (or says why not). */
static void run_mesh(pf_req *r, pf_search_ctx *ctx) {
    mesh_job *job = pf_req_state(r);
    const pf_mapver *mv = job->mv;
    pf_proto_error e;
    char tag[PF_ETAG_LEN];
    pf_jsonw w;
    (void)ctx;
    if (mv->kind->write_mesh(mv, job->agent_type, job->triangles, job->input, &w, &e)) {
        pf_req_answer_perror(r, &e);
    } else {
        pf_etag_format(mv->version, mv->lineage, tag, sizeof(tag));
        pf_req_add_header(r, "ETag", tag);
        pf_req_answer_json(r, &w);
    }
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

/* An agent type's name (1 to 63 of A-Z a-z 0-9 _ . -); whether the map
 * has it is the kind's to say, on the version it answers from. false when
 * answered (422). */
static bool read_agent_type(pf_req *r, const pf_kv *kv, const char **out) {
    const char *v = kv->value ? kv->value : "";
    if (!pf_nav_name_valid(v)) {
        pf_req_answer_error(r, PF_ERR_INVALID_VALUE, kv->key,
                            "Parameter '%s' must be an agent type's name: 1 to 63 of A-Z a-z 0-9 "
                            "_ . -.",
                            kv->key);
        return false;
    }
    *out = v;
    return true;
}

void pf__route_map_mesh(pf_req *r, pf_maps_routes *m) {
    pf_kv kv[4];
    size_t n;
    mesh_job *job;
    bool triangles = true, input = false;
    const char *agent_type = "";
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
        else if (strcmp(kv[i].key, "agent_type") == 0)
            ok = read_agent_type(r, &kv[i], &agent_type);
        else {
            pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, kv[i].key,
                                "Unknown parameter '%.40s'; the parameters are 'agent_type', "
                                "'triangles' and 'input'.",
                                kv[i].key);
            return;
        }
        if (!ok) return;
    }
    if (!(mv = pf__route_feature_map(r, m->registry, PF_KIND_MESH, NULL))) return;
    if (!(job = malloc(sizeof(*job)))) {
        pf_mapver_release(mv);
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    *job = (mesh_job){m, mv, triangles, input, ""};
    snprintf(job->agent_type, sizeof(job->agent_type), "%s", agent_type);
    pf_req_set_state(r, job, free_mesh_job);
    pf_req_dispatch(r, PF_JOB_SEARCH, run_mesh);
}
