/* mesh_json.c -- see mesh_json.h. (Reads navmesh versions, the C++ shim:
 * not in the fuzz target, as nav_info.c.) */
#include "mesh_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"
#include "nav_json.h"

/* Bytes a written item takes at most (separators included): a number
 * rounded to 1e-4 within +-1e7 is at most 15 characters ("-9999999.9999",
 * or 15 significant digits), an index of a tile's vertex at most 10. */
#define NUM_BYTES 16u
#define INDEX_BYTES 11u
#define BOX_BYTES (6u * NUM_BYTES + 32u)
#define POLY_BYTES (2u + PF_NAV_POLY_VERTS_MAX * 6u + 3u * 4u + 8u) /* + area, walls, ... */
#define TILE_BYTES (512u + BOX_BYTES)
#define LINK_BYTES (6u * NUM_BYTES + 160u)
#define OBSTACLE_BYTES (PF_NAV_NAME_MAX * 6u + 9u * NUM_BYTES + 96u) /* an id escaped */
#define AREA_BYTES (PF_NAV_NAME_MAX * 6u + 160u)
#define FIXED_BYTES 8192u

static double r4(double v) { return round(v * 1e4) / 1e4; }

static void write_floats(pf_jsonw *w, const float *v, uint64_t n) {
    pf_jsonw_arr_begin(w);
    for (uint64_t i = 0; i < n; i++) pf_jsonw_double(w, r4(v[i]));
    pf_jsonw_arr_end(w);
}

static void write_box(pf_jsonw *w, const float *bmin, const float *bmax) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_key(w, "min");
    pf_nav_write_point(w, bmin);
    pf_jsonw_key(w, "max");
    pf_nav_write_point(w, bmax);
    pf_jsonw_obj_end(w);
}

uint64_t pf_mesh_size_bound(const pf_navmesh *nm, const pf_mesh_options *o) {
    pf_nav_export_counts c;
    uint64_t n = FIXED_BYTES;
    pf_navmesh_export_counts(nm, &c);
    n += (uint64_t)pf_navmesh_obstacle_count(nm) * OBSTACLE_BYTES;
    n += (uint64_t)pf_navmesh_area_count(nm) * 2u * AREA_BYTES + c.boxes * BOX_BYTES;
    n += (uint64_t)c.tiles * TILE_BYTES + c.verts * 3u * NUM_BYTES + c.polys * POLY_BYTES;
    n += c.links * LINK_BYTES;
    if (o->triangles) n += c.dverts * 3u * NUM_BYTES + c.tris * 3u * INDEX_BYTES;
    if (o->input)
        n += (uint64_t)o->input->nverts * 3u * NUM_BYTES +
             (uint64_t)o->input->ntris * 3u * INDEX_BYTES;
    return n;
}

static void write_tile(pf_jsonw *w, const pf_navmesh *nm, uint32_t slot, const pf_nav_tile_view *t,
                       bool triangles) {
    pf_nav_poly_view p;
    pf_jsonw_obj_begin(w);
    pf_jsonw_kint(w, "x", t->x);
    pf_jsonw_kint(w, "z", t->z);
    pf_jsonw_kint(w, "layer", t->layer);
    pf_jsonw_kuint(w, "ref", t->ref_base);
    pf_jsonw_key(w, "bounds");
    write_box(w, t->bmin, t->bmax);
    pf_jsonw_key(w, "vertices");
    write_floats(w, t->verts, (uint64_t)t->nverts * 3u);
    pf_jsonw_key(w, "polygons");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < t->npolys; i++) {
        pf_navmesh_poly_view(nm, slot, i, &p);
        pf_jsonw_arr_begin(w);
        for (uint8_t k = 0; k < p.nverts; k++) pf_jsonw_uint(w, p.verts[k]);
        pf_jsonw_arr_end(w);
    }
    pf_jsonw_arr_end(w);
    /* One pass a member: each is an array over the polygons. */
    for (int member = 0; member < 3; member++) {
        static const char *const names[] = {"areas", "walls", "disabled"};
        pf_jsonw_key(w, names[member]);
        pf_jsonw_arr_begin(w);
        for (uint32_t i = 0; i < t->npolys; i++) {
            pf_navmesh_poly_view(nm, slot, i, &p);
            if (member == 0) pf_jsonw_uint(w, p.area);
            if (member == 1) pf_jsonw_uint(w, p.walls);
            if (member == 2 && !p.enabled) pf_jsonw_uint(w, i);
        }
        pf_jsonw_arr_end(w);
    }
    if (triangles) {
        pf_jsonw_key(w, "detail_vertices");
        write_floats(w, t->dverts, (uint64_t)t->ndverts * 3u);
        pf_jsonw_key(w, "triangles");
        pf_jsonw_arr_begin(w);
        for (uint32_t i = 0; i < t->npolys; i++) {
            pf_navmesh_poly_view(nm, slot, i, &p);
            for (uint32_t k = 0; k < p.ntris; k++) {
                uint32_t c[3];
                if (!pf_navmesh_poly_triangle(nm, slot, i, k, c)) continue;
                for (int j = 0; j < 3; j++) pf_jsonw_uint(w, c[j]);
            }
        }
        pf_jsonw_arr_end(w);
        pf_jsonw_key(w, "polygon_triangles");
        pf_jsonw_arr_begin(w);
        for (uint32_t i = 0; i < t->npolys; i++) {
            pf_navmesh_poly_view(nm, slot, i, &p);
            pf_jsonw_uint(w, p.ntris);
        }
        pf_jsonw_arr_end(w);
    }
    pf_jsonw_obj_end(w);
}

static void write_links(pf_jsonw *w, const pf_navmesh *nm) {
    pf_jsonw_key(w, "off_mesh_links");
    pf_jsonw_arr_begin(w);
    for (uint32_t s = 0; s < pf_navmesh_tile_slots(nm); s++) {
        pf_nav_tile_view t;
        if (!pf_navmesh_tile_view(nm, s, &t)) continue;
        for (uint32_t k = 0; k < t.nlinks; k++) {
            pf_nav_link_view l;
            if (!pf_navmesh_link_view(nm, s, k, &l)) continue;
            pf_jsonw_obj_begin(w);
            pf_jsonw_key(w, "start");
            pf_nav_write_point(w, l.start);
            pf_jsonw_key(w, "end");
            pf_nav_write_point(w, l.end);
            pf_jsonw_kdouble(w, "radius", r4(l.radius));
            pf_jsonw_kbool(w, "bidirectional", l.bidirectional);
            pf_jsonw_kuint(w, "area", l.area);
            pf_jsonw_kbool(w, "enabled", l.enabled);
            pf_jsonw_kuint(w, "ref", l.ref);
            pf_jsonw_obj_end(w);
        }
    }
    pf_jsonw_arr_end(w);
}

void pf_mesh_write(pf_jsonw *w, const char *id, uint64_t version, const pf_navmesh *nm,
                   const pf_mesh_options *o) {
    pf_nav_export_counts c;
    pf_navmesh_export_counts(nm, &c);
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "id", id);
    pf_jsonw_kuint(w, "version", version);
    {
        pf_nav_agent_info ai;
        pf_navmesh_agent_info(nm, &ai);
        pf_jsonw_kstr(w, "agent_type", ai.name);
    }
    pf_jsonw_key(w, "navmesh");
    pf_nav_write_info(w, nm);
    pf_jsonw_key(w, "area_boxes");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < pf_navmesh_area_count(nm); i++) {
        pf_nav_box b;
        pf_jsonw_arr_begin(w);
        for (uint32_t k = 0; pf_navmesh_area_box(nm, i, k, &b); k++) write_box(w, b.bmin, b.bmax);
        pf_jsonw_arr_end(w);
    }
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "counts");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "tiles", c.tiles);
    pf_jsonw_kuint(w, "vertices", c.verts);
    pf_jsonw_kuint(w, "detail_vertices", c.dverts);
    pf_jsonw_kuint(w, "polygons", c.polys);
    pf_jsonw_kuint(w, "triangles", c.tris);
    pf_jsonw_kuint(w, "links", c.links);
    pf_jsonw_obj_end(w);
    pf_jsonw_key(w, "tiles");
    pf_jsonw_arr_begin(w);
    for (uint32_t s = 0; s < pf_navmesh_tile_slots(nm); s++) {
        pf_nav_tile_view t;
        if (pf_navmesh_tile_view(nm, s, &t)) write_tile(w, nm, s, &t, o->triangles);
    }
    pf_jsonw_arr_end(w);
    write_links(w, nm);
    pf_jsonw_key(w, "input");
    if (o->input) {
        pf_jsonw_obj_begin(w);
        pf_jsonw_key(w, "vertices");
        write_floats(w, o->input->verts, (uint64_t)o->input->nverts * 3u);
        pf_jsonw_key(w, "triangles");
        pf_jsonw_arr_begin(w);
        for (uint64_t i = 0; i < (uint64_t)o->input->ntris * 3u; i++)
            pf_jsonw_uint(w, o->input->tris[i]);
        pf_jsonw_arr_end(w);
        pf_jsonw_obj_end(w);
    } else {
        pf_jsonw_null(w);
    }
    pf_jsonw_obj_end(w);
}

pf_status pf_mesh_source_obj(const char *members, size_t len, uint32_t max_vertices,
                             uint32_t max_triangles, pf_obj *out, bool *found, pf_proto_error *e) {
    pf_status st = PF_OK;
    cJSON *root = NULL;
    const cJSON *obj;
    pf_nav_error ne;
    char *buf;
    memset(out, 0, sizeof(*out));
    *found = false;
    if (len > SIZE_MAX - 3 || !(buf = malloc(len + 3))) {
        pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NONE, NULL, NULL);
        return PF_ENOMEM;
    }
    buf[0] = '{';
    memcpy(buf + 1, members, len);
    buf[len + 1] = '}';
    buf[len + 2] = '\0';
    st = pf_jsonr_parse(buf, len + 2, &root, e);
    free(buf);
    if (st) goto out;
    obj = cJSON_GetObjectItemCaseSensitive(root, "obj");
    if (!obj) goto out; /* made from a grid */
    if (!cJSON_IsString(obj)) {
        st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INTERNAL, "obj",
                                "The stored source's obj is not a string.");
        goto out;
    }
    memset(&ne, 0, sizeof(ne));
    st = pf_obj_parse(obj->valuestring, strlen(obj->valuestring), max_vertices, max_triangles, out,
                      &ne);
    if (st) {
        pf_nav_error_to_proto(e, st, &ne);
        goto out;
    }
    *found = true;
out:
    cJSON_Delete(root);
    return st;
}
