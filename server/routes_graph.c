/* routes_graph.c -- GET /v1/maps/{id}/graph: a waypoint graph map's nodes
 * and edges as this version has them (costs, enabled states), read only,
 * for the viewer (proto/graph_export_json.h says what it holds).
 *
 * It takes no parameters (any is 400 naming it). The answer is sized
 * before it is written (pf_graph_export_size_bound, an upper bound): past
 * --max-graph-bytes it is 413 limit_exceeded and nothing is written. The
 * writing runs on a worker; the version is referenced until it is done.
 * The answer carries the version's ETag, as the map info does. A map of a
 * kind without PF_KIND_GRAPH_EXPORT (grids, navmeshes) is 422 unsupported
 * (kind_graph_export.c writes it). */
#include "precond.h"
#include "request.h"
#include "routes_feature.h"
#include "routes_maps.h"

static void release_mapver(void *p) { pf_mapver_release(p); }

/* Job: the kind writes the graph (or says why not). */
static void run_graph(pf_req *r, pf_search_ctx *ctx) {
    const pf_mapver *mv = pf_req_state(r);
    pf_proto_error e;
    char tag[PF_ETAG_LEN];
    pf_jsonw w;
    (void)ctx;
    if (mv->kind->write_graph(mv, &w, &e)) {
        pf_req_answer_perror(r, &e);
    } else {
        pf_etag_format(mv->version, mv->lineage, tag, sizeof(tag));
        pf_req_add_header(r, "ETag", tag);
        pf_req_answer_json(r, &w);
    }
    pf_req_finish(r);
}

void pf__route_map_graph(pf_req *r, pf_maps_routes *m) {
    pf_kv kv[4];
    size_t n;
    pf_mapver *mv;
    if (!pf_req_query(r, kv, 4, &n)) {
        pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, NULL, "Too many parameters.");
        return;
    }
    if (n > 0) {
        pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, kv[0].key,
                            "Unknown parameter '%.40s'; this route takes none.", kv[0].key);
        return;
    }
    if (!(mv = pf__route_feature_map(r, m->registry, PF_KIND_GRAPH_EXPORT, NULL))) return;
    pf_req_set_state(r, mv, release_mapver);
    pf_req_dispatch(r, PF_JOB_SEARCH, run_graph);
}
