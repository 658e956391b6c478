/* kind_navmesh_export.c -- the navmesh's PF_KIND_MESH feature: GET
 * /v1/maps/{id}/mesh's answer (routes_mesh.c), a version's geometry for
 * the viewer (one agent type's mesh), sized before it is written
 * (proto/mesh_json.h). */
#include <string.h>

#include "kind_navmesh_internal.h"
#include "mesh_json.h"

pf_status pf__nav_write_mesh(const pf_mapver *mv, const char *agent_type, bool triangles,
                             bool input, pf_jsonw *w, pf_proto_error *e) {
    const pf_navmesh *nav = NULL;
    const pf_navsrc *src = pf_navmesh_source(mv);
    const pf_nav_limits *lim = &pf__nav_env_of(mv->env)->limits;
    uint64_t limit = (uint64_t)mv->env->d.cfg->max_mesh_bytes, bound;
    pf_mesh_options o = {triangles, NULL};
    pf_obj obj;
    bool found = false;
    pf_status st = PF_OK;

    memset(&obj, 0, sizeof(obj));
    /* The agent type's own mesh (its view of the version). */
    if ((st = pf_nav_agent_view(pf_navmesh_of(mv), agent_type, "agent_type", &nav, e))) goto out;
    if (input) {
        if ((st = pf_mesh_source_obj(src->members, src->len, lim->max_vertices, lim->max_triangles,
                                     &obj, &found, e)))
            goto out;
        if (found) o.input = &obj;
    }
    bound = pf_mesh_size_bound(nav, &o);
    if (bound > limit) {
        /* Name what to leave out when leaving it out would fit. */
        pf_mesh_options less = {o.triangles, NULL};
        const char *field = NULL, *hint = "raise --max-mesh-bytes";
        if (o.input && pf_mesh_size_bound(nav, &less) <= limit) {
            field = "input";
            hint = "ask without input=true";
        } else if (o.triangles &&
                   (less.triangles = false, pf_mesh_size_bound(nav, &less)) <= limit) {
            field = "triangles";
            hint = "ask with triangles=false";
        }
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, field,
                                "The mesh of map '%s' may take %llu bytes, past max_mesh_bytes "
                                "(%llu): %s.",
                                mv->id, (unsigned long long)bound, (unsigned long long)limit, hint);
        goto out;
    }
    pf_jsonw_init(w, (size_t)(bound < 65536 ? bound : 65536));
    pf_mesh_write(w, mv->id, mv->version, nav, &o);
out:
    pf_obj_free(&obj);
    return st;
}
