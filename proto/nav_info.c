/* nav_info.c -- the writers of nav_json.h that read a navmesh version: map
 * info and the store's envelope. (Apart from nav_json.c so the fuzz target,
 * which links no C++, can take the readers alone.) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "map_json.h"
#include "nav_json.h"

static double r4(double v) { return round(v * 1e4) / 1e4; }

static void write_config(pf_jsonw *w, const pf_nav_config *c) {
    pf_jsonw_kdouble(w, "cell_size", r4(c->cell_size));
    pf_jsonw_kdouble(w, "cell_height", r4(c->cell_height));
    pf_jsonw_kint(w, "tile_size", c->tile_size);
    pf_jsonw_kint(w, "region_min_size", c->region_min_size);
    pf_jsonw_kint(w, "region_merge_size", c->region_merge_size);
    pf_jsonw_kdouble(w, "edge_max_len", r4(c->edge_max_len));
    pf_jsonw_kdouble(w, "edge_max_error", r4(c->edge_max_error));
    pf_jsonw_kint(w, "verts_per_poly", c->verts_per_poly);
    pf_jsonw_kdouble(w, "detail_sample_dist", r4(c->detail_sample_dist));
    pf_jsonw_kdouble(w, "detail_sample_max_error", r4(c->detail_sample_max_error));
    pf_jsonw_kstr(w, "partition", pf_nav_partition_name(c->partition));
    pf_jsonw_key(w, "agent");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kdouble(w, "radius", r4(c->agent_radius));
    pf_jsonw_kdouble(w, "height", r4(c->agent_height));
    pf_jsonw_kdouble(w, "max_climb", r4(c->agent_max_climb));
    pf_jsonw_kdouble(w, "max_slope", r4(c->agent_max_slope));
    pf_jsonw_obj_end(w);
}

static void write_box(pf_jsonw *w, const float *bmin, const float *bmax) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_key(w, "min");
    pf_nav_write_point(w, bmin);
    pf_jsonw_key(w, "max");
    pf_nav_write_point(w, bmax);
    pf_jsonw_obj_end(w);
}

static void write_link(pf_jsonw *w, const pf_nav_link *l) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "id", l->id);
    pf_jsonw_key(w, "start");
    pf_nav_write_point(w, l->start);
    pf_jsonw_key(w, "end");
    pf_nav_write_point(w, l->end);
    pf_jsonw_kdouble(w, "radius", r4(l->radius));
    pf_jsonw_kbool(w, "bidirectional", l->bidir);
    if (l->area[0]) pf_jsonw_kstr(w, "area", l->area);
    pf_jsonw_kdouble(w, "cost", r4(l->cost));
    pf_jsonw_kbool(w, "enabled", l->enabled);
    pf_jsonw_obj_end(w);
}

static void write_links(pf_jsonw *w, const pf_navmesh *nm) {
    pf_jsonw_key(w, "links");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < pf_navmesh_link_count(nm); i++) write_link(w, pf_navmesh_link(nm, i));
    pf_jsonw_arr_end(w);
}

static void write_obstacle(pf_jsonw *w, const pf_nav_obstacle *o) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "id", o->id);
    if (o->shape == PF_NAV_BOX) {
        pf_jsonw_key(w, "box");
        write_box(w, o->bmin, o->bmax);
    } else {
        pf_jsonw_key(w, "cylinder");
        pf_jsonw_obj_begin(w);
        pf_jsonw_key(w, "base");
        pf_nav_write_point(w, o->pos);
        pf_jsonw_kdouble(w, "radius", r4(o->radius));
        pf_jsonw_kdouble(w, "height", r4(o->height));
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_obj_end(w);
}

void pf_nav_write_source_members(pf_jsonw *w, const pf_nav_upload *u) {
    pf_jsonw_kstr(w, "kind", "navmesh");
    if (u->grid) {
        pf_jsonw_key(w, "from_grid");
        /* The export form: it uploads back as the same grid. */
        pf_map_write_cells(w, "", 0, u->grid);
    } else {
        pf_jsonw_key(w, "obj");
        pf_jsonw_strn(w, u->obj_text, u->obj_len);
    }
    write_config(w, &u->config);
    if (u->nareas) {
        pf_jsonw_key(w, "areas");
        pf_jsonw_arr_begin(w);
        for (size_t i = 0; i < u->nareas; i++) {
            const pf_nav_area *a = &u->areas[i];
            pf_jsonw_obj_begin(w);
            pf_jsonw_kstr(w, "id", a->name);
            pf_jsonw_key(w, "boxes");
            pf_jsonw_arr_begin(w);
            for (size_t k = 0; k < a->nboxes; k++) write_box(w, a->boxes[k].bmin, a->boxes[k].bmax);
            pf_jsonw_arr_end(w);
            pf_jsonw_kdouble(w, "cost", r4(a->cost));
            pf_jsonw_kbool(w, "enabled", a->enabled);
            pf_jsonw_obj_end(w);
        }
        pf_jsonw_arr_end(w);
    }
    if (u->nagent_types) {
        pf_jsonw_key(w, "agent_types");
        pf_jsonw_arr_begin(w);
        for (size_t i = 0; i < u->nagent_types; i++) {
            const pf_nav_agent_type *t = &u->agent_types[i];
            pf_jsonw_obj_begin(w);
            pf_jsonw_kstr(w, "id", t->name);
            pf_jsonw_kdouble(w, "radius", r4(t->radius));
            pf_jsonw_kdouble(w, "height", r4(t->height));
            pf_jsonw_kdouble(w, "max_climb", r4(t->max_climb));
            pf_jsonw_kdouble(w, "max_slope", r4(t->max_slope));
            pf_jsonw_obj_end(w);
        }
        pf_jsonw_arr_end(w);
    }
}

void pf_nav_write_state_members(pf_jsonw *w, const pf_navmesh *nm) {
    if (pf_navmesh_link_count(nm)) write_links(w, nm);
    pf_jsonw_key(w, "obstacles");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < pf_navmesh_obstacle_count(nm); i++)
        write_obstacle(w, pf_navmesh_obstacle(nm, i));
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "area_state");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < pf_navmesh_area_count(nm); i++) {
        pf_nav_area_state a;
        if (!pf_navmesh_area(nm, i, &a) || !a.name[0]) continue; /* cost classes: the grid's */
        pf_jsonw_obj_begin(w);
        pf_jsonw_kstr(w, "id", a.name);
        pf_jsonw_kbool(w, "enabled", a.enabled);
        pf_jsonw_kdouble(w, "cost", r4(a.cost));
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
}

void pf_nav_write_info(pf_jsonw *w, const pf_navmesh *nm) {
    pf_nav_info in;
    pf_navmesh_info(nm, &in);
    pf_jsonw_obj_begin(w);
    pf_jsonw_key(w, "bounds");
    write_box(w, in.bmin, in.bmax);
    pf_jsonw_key(w, "settings");
    pf_jsonw_obj_begin(w);
    write_config(w, &in.config);
    pf_jsonw_obj_end(w);
    pf_jsonw_key(w, "tiles");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kint(w, "x", in.tiles_x);
    pf_jsonw_kint(w, "z", in.tiles_z);
    pf_jsonw_kuint(w, "layers", in.tile_layers);
    pf_jsonw_kuint(w, "with_polygons", in.tiles);
    pf_jsonw_kuint(w, "max_polygons", in.max_tile_polygons);
    pf_jsonw_kuint(w, "rebuilt", in.rebuilt_tiles);
    pf_jsonw_obj_end(w);
    pf_jsonw_kuint(w, "polygons", in.polygons);
    pf_jsonw_kuint(w, "vertices", in.vertices);
    pf_jsonw_kuint(w, "mesh_bytes", in.mesh_bytes);
    pf_jsonw_kuint(w, "layer_bytes", in.layer_bytes);
    pf_jsonw_key(w, "memory");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "total_bytes", in.total_bytes);
    pf_jsonw_kuint(w, "kept_voxel_bytes", in.kept_bytes);
    pf_jsonw_kuint(w, "ground_bytes", in.ground_bytes);
    pf_jsonw_kuint(w, "shared_bytes", in.shared_bytes);
    pf_jsonw_obj_end(w);
    pf_jsonw_key(w, "agent_types");
    pf_jsonw_arr_begin(w);
    for (uint32_t t = 0; t < pf_navmesh_agent_type_count(nm); t++) {
        pf_nav_agent_info ai;
        pf_navmesh_agent_info(pf_navmesh_agent_type(nm, t), &ai);
        pf_jsonw_obj_begin(w);
        pf_jsonw_kstr(w, "id", ai.name);
        pf_jsonw_kdouble(w, "radius", r4(ai.radius));
        pf_jsonw_kdouble(w, "height", r4(ai.height));
        pf_jsonw_kdouble(w, "max_climb", r4(ai.max_climb));
        pf_jsonw_kdouble(w, "max_slope", r4(ai.max_slope));
        pf_jsonw_kuint(w, "polygons", ai.polygons);
        pf_jsonw_kuint(w, "mesh_bytes", ai.mesh_bytes);
        pf_jsonw_kuint(w, "kept_voxel_bytes", ai.kept_bytes);
        pf_jsonw_kuint(w, "build_cpu_us", ai.build_us);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
    write_links(w, nm);
    pf_jsonw_key(w, "from_grid");
    if (in.from_grid) {
        pf_jsonw_obj_begin(w);
        pf_jsonw_kint(w, "width", in.grid_w);
        pf_jsonw_kint(w, "height", in.grid_h);
        pf_jsonw_obj_end(w);
    } else {
        pf_jsonw_null(w);
    }
    pf_jsonw_key(w, "obstacles");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < pf_navmesh_obstacle_count(nm); i++)
        write_obstacle(w, pf_navmesh_obstacle(nm, i));
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "areas");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < pf_navmesh_area_count(nm); i++) {
        pf_nav_area_state a;
        if (!pf_navmesh_area(nm, i, &a)) continue;
        pf_jsonw_obj_begin(w);
        pf_jsonw_key(w, "id");
        if (a.name[0])
            pf_jsonw_str(w, a.name);
        else
            pf_jsonw_null(w); /* a grid's cost class */
        pf_jsonw_kint(w, "area", a.area_id);
        pf_jsonw_kdouble(w, "cost", r4(a.cost));
        pf_jsonw_kbool(w, "enabled", a.enabled);
        pf_jsonw_kuint(w, "boxes", a.nboxes);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
    pf_jsonw_obj_end(w);
}

pf_status pf_nav_agent_view(const pf_navmesh *nm, const char *name, const char *field,
                            const pf_navmesh **view, pf_proto_error *e) {
    if (!name || !name[0]) name = "default";
    *view = pf_navmesh_agent_type_named(nm, name);
    if (*view) return PF_OK;
    char known[256];
    size_t k = 0;
    known[0] = '\0';
    for (uint32_t t = 0; t < pf_navmesh_agent_type_count(nm) && k < sizeof known; t++) {
        pf_nav_agent_info ai;
        pf_navmesh_agent_info(pf_navmesh_agent_type(nm, t), &ai);
        int n = snprintf(known + k, sizeof known - k, "%s%s", t ? ", " : "", ai.name);
        if (n > 0) k += (size_t)n;
    }
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                              "The map has no agent type '%.63s' (it has: %.180s).", name, known);
}

uint32_t pf_nav_agent_index(const pf_navmesh *view) {
    for (uint32_t t = 0; t < pf_navmesh_agent_type_count(view); t++)
        if (pf_navmesh_agent_type(view, t) == view) return t;
    return 0;
}
