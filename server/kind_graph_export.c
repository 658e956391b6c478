/* kind_graph_export.c -- the graph's PF_KIND_GRAPH_EXPORT feature: GET
 * /v1/maps/{id}/graph's answer (routes_graph.c), a version's nodes and
 * edges with their costs and states, sized before it is written
 * (proto/graph_export_json.h). */
#include "graph_export_json.h"
#include "kind_graph_internal.h"

pf_status pf__graph_write_export(const pf_mapver *mv, pf_jsonw *w, pf_proto_error *e) {
    const pf__graph_world *gw = pf__graph_world_of(mv);
    uint64_t limit = (uint64_t)mv->env->d.cfg->max_graph_bytes;
    uint64_t bound = pf_graph_export_size_bound(&gw->doc->d, gw->g, mv->id);
    if (bound > limit)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, NULL,
                                  "The graph of map '%s' may take %llu bytes, past "
                                  "max_graph_bytes (%llu): raise --max-graph-bytes.",
                                  mv->id, (unsigned long long)bound, (unsigned long long)limit);
    pf_jsonw_init(w, (size_t)(bound < 65536 ? bound : 65536));
    pf_graph_export_write(w, &gw->doc->d, gw->g, mv->id, mv->version);
    return PF_OK;
}
