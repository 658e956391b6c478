/* kind_grid_export.c -- what a grid shows of itself (kind_grid.h): every
 * cell (GET .../cells, an export that uploads back) and the HPA*
 * hierarchy (GET .../hierarchy, for the viewer). */
#include "hpa.h"
#include "kind_grid_internal.h"
#include "map_json.h"

void pf__grid_write_cells(const pf_mapver *mv, pf_jsonw *w) {
    const pf_grid *g = pf__grid_of(mv);
    pf_jsonw_init(w, (size_t)pf_grid_width(g) * (size_t)pf_grid_height(g) * 2 + 512);
    pf_map_write_cells(w, mv->id, mv->version, g);
}

/* Its clusters, its transition nodes and their edges. */
pf_status pf__grid_write_hierarchy(const pf_mapver *mv, bool intra, pf_jsonw *o,
                                   pf_proto_error *e) {
    const pf_grid *g = pf__grid_of(mv);
    const pf_hpa *h = pf_planner_hpa(pf_grid_planner(mv));
    int32_t w = pf_grid_width(g), hh = pf_grid_height(g);
    pf_hpa_stats st;
    if (!h)
        return pf_proto_error_set(e, PF_EUNSUPPORTED, PF_ERR_UNSUPPORTED, NULL,
                                  "Map '%s' has no HPA* hierarchy.", mv->id);
    pf_hpa_get_stats(h, &st);
    pf_jsonw_init(o, (size_t)st.abstract_nodes * (intra ? 160 : 40) + 512);
    pf_jsonw_obj_begin(o);
    pf_jsonw_kstr(o, "id", mv->id);
    pf_jsonw_kuint(o, "version", mv->version);
    pf_jsonw_kint(o, "width", w);
    pf_jsonw_kint(o, "height", hh);
    pf_jsonw_kint(o, "cluster_size", st.cluster_size);
    pf_jsonw_kint(o, "clusters_x", (w + st.cluster_size - 1) / st.cluster_size);
    pf_jsonw_kint(o, "clusters_y", (hh + st.cluster_size - 1) / st.cluster_size);
    pf_jsonw_key(o, "stats");
    pf_jsonw_obj_begin(o);
    pf_jsonw_kint(o, "clusters", st.clusters);
    pf_jsonw_kint(o, "entrances", st.entrances);
    pf_jsonw_kint(o, "abstract_nodes", st.abstract_nodes);
    pf_jsonw_kint(o, "abstract_edges", st.abstract_edges);
    pf_jsonw_kint(o, "components", st.components);
    pf_jsonw_kuint(o, "memory_bytes", st.memory_bytes);
    pf_jsonw_obj_end(o);
    pf_jsonw_key(o, "nodes");
    pf_jsonw_arr_begin(o);
    for (int32_t v = 0; v < (int32_t)st.abstract_nodes; v++) {
        pf_point p = pf_hpa_node_point(h, v);
        pf_jsonw_point(o, p.x, p.y);
    }
    pf_jsonw_arr_end(o);
    /* Each node pair once (a < b): a border crossing is one entrance's
     * transition pair; an intra-cluster edge carries the cost from a to b. */
    for (int pass = 0; pass < (intra ? 2 : 1); pass++) {
        pf_jsonw_key(o, pass ? "intra_edges" : "inter_edges");
        pf_jsonw_arr_begin(o);
        for (int32_t v = 0; v < (int32_t)st.abstract_nodes; v++) {
            const int32_t *to;
            const double *cost;
            size_t nintra, n = pf_hpa_node_edges(h, v, &to, &cost, &nintra);
            for (size_t k = pass ? 0 : nintra; k < (pass ? nintra : n); k++) {
                if (to[k] <= v) continue;
                pf_jsonw_arr_begin(o);
                pf_jsonw_int(o, v);
                pf_jsonw_int(o, to[k]);
                if (pass) pf_jsonw_double(o, cost[k]);
                pf_jsonw_arr_end(o);
            }
        }
        pf_jsonw_arr_end(o);
    }
    pf_jsonw_obj_end(o);
    return PF_OK;
}
