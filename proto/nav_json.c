/* nav_json.c -- see nav_json.h: the readers and the path answer writers
 * (the map info and envelope writers, which read a navmesh version, are in
 * nav_info.c). */
#include "nav_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"
#include "map_json.h"

#define MAX_COORD 1e7

void pf_nav_upload_free(pf_nav_upload *u) {
    if (!u) return;
    pf_obj_free(&u->obj);
    free(u->obj_text);
    pf_grid_destroy(u->grid);
    for (size_t i = 0; i < u->nareas; i++) {
        free((char *)u->areas[i].name);
        free((pf_nav_box *)u->areas[i].boxes);
    }
    free(u->areas);
    free(u->obstacles);
    for (size_t i = 0; i < u->narea_state; i++) free((char *)u->area_state[i].name);
    free(u->area_state);
    memset(u, 0, sizeof *u);
}

/* The flag a navmesh limit is set with, for error fields. */
static const char *nav_limit_flag(const char *field) {
    static const struct {
        const char *nav, *flag;
    } map[] = {{"limits.max_vertices", "limits.nav_max_vertices"},
               {"limits.max_triangles", "limits.nav_max_triangles"},
               {"limits.max_voxels", "limits.nav_max_voxels"},
               {"limits.max_tiles", "limits.nav_max_tiles"},
               {"limits.build_ms", "limits.nav_build_ms"},
               {"limits.max_obstacles", "limits.nav_max_obstacles"},
               {"limits.max_areas", "limits.nav_max_areas"},
               {"limits.max_area_boxes", "limits.nav_max_area_boxes"}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(field, map[i].nav) == 0) return map[i].flag;
    return field;
}

pf_status pf_nav_error_to_proto(pf_proto_error *e, pf_status st, const pf_nav_error *ne) {
    pf_error code = st == PF_ELIMIT         ? PF_ERR_LIMIT_EXCEEDED
                    : st == PF_ENOMEM       ? PF_ERR_NO_MEMORY
                    : st == PF_EUNSUPPORTED ? PF_ERR_UNSUPPORTED
                    : st == PF_EPARSE       ? PF_ERR_MALFORMED_MAP
                                            : PF_ERR_INVALID_VALUE;
    /* The library's reasons are phrases ("no obstacle 'x' on this map"):
     * the API's messages are sentences. */
    size_t n = strnlen(ne->message, sizeof(ne->message));
    char first = ne->message[0] >= 'a' && ne->message[0] <= 'z' ? (char)(ne->message[0] - 32)
                                                                : ne->message[0];
    return pf_proto_error_set(e, st, code, nav_limit_flag(ne->field), "%c%.198s%s",
                              first ? first : ' ', n ? ne->message + 1 : "",
                              n && ne->message[n - 1] == '.' ? "" : ".");
}

pf_status pf_nav_json_kind(const cJSON *root, bool *navmesh, pf_proto_error *e) {
    const cJSON *k = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "kind") : NULL;
    const char *s;
    *navmesh = false;
    if (!k) return PF_OK;
    if (pf_jsonr_string(k, "kind", &s, e)) return PF_EPARSE;
    if (strcmp(s, "navmesh") == 0) {
        *navmesh = true;
        return PF_OK;
    }
    if (strcmp(s, "grid") == 0) return PF_OK;
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "kind",
                              "Field 'kind' is \"grid\" or \"navmesh\".");
}

pf_status pf_nav_read_point(const cJSON *it, const char *field, float out[3], pf_proto_error *e) {
    if (!it || !cJSON_IsArray(it) || cJSON_GetArraySize(it) != 3)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be a point [x, y, z] of three numbers.", field);
    int k = 0;
    for (const cJSON *c = it->child; c; c = c->next, k++) {
        double v;
        if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                      "Field '%s' must be a point [x, y, z] of three numbers.",
                                      field);
        v = c->valuedouble;
        if (fabs(v) > MAX_COORD)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                      "Field '%s' has a coordinate outside +-1e7.", field);
        out[k] = (float)v;
    }
    return PF_OK;
}

/* A number of [lo, hi] into a float. */
static pf_status read_float(const cJSON *it, const char *field, double lo, double hi, float *out,
                            pf_proto_error *e) {
    double v;
    pf_status st = pf_jsonr_number(it, field, lo, hi, &v, e);
    if (!st) *out = (float)v;
    return st;
}

static const char *const agent_members[] = {"radius", "height", "max_climb", "max_slope", NULL};

/* The build settings of an envelope (ranges are the builder's: it names
 * the same fields). */
static pf_status read_settings(const cJSON *root, pf_nav_config *c, pf_proto_error *e) {
    const cJSON *it;
    pf_status st = PF_OK;
    int64_t ts;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "cell_size")))
        st = read_float(it, "cell_size", 0.01, 10, &c->cell_size, e);
    if (!st && (it = cJSON_GetObjectItemCaseSensitive(root, "cell_height")))
        st = read_float(it, "cell_height", 0.01, 10, &c->cell_height, e);
    if (!st && (it = cJSON_GetObjectItemCaseSensitive(root, "edge_max_error")))
        st = read_float(it, "edge_max_error", 0.1, 3, &c->edge_max_error, e);
    if (!st && (it = cJSON_GetObjectItemCaseSensitive(root, "tile_size"))) {
        st = pf_jsonr_int(it, "tile_size", 16, 240, &ts, e);
        if (!st) c->tile_size = (int32_t)ts;
    }
    if (st) return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "agent"))) {
        const cJSON *a;
        if ((st = pf_jsonr_object(it, "agent", e)) ||
            (st = pf_jsonr_check_members(it, agent_members, "agent.", e)))
            return st;
        if ((a = cJSON_GetObjectItemCaseSensitive(it, "radius")))
            st = read_float(a, "agent.radius", 0, 50, &c->agent_radius, e);
        if (!st && (a = cJSON_GetObjectItemCaseSensitive(it, "height")))
            st = read_float(a, "agent.height", 0.01, 100, &c->agent_height, e);
        if (!st && (a = cJSON_GetObjectItemCaseSensitive(it, "max_climb")))
            st = read_float(a, "agent.max_climb", 0, 100, &c->agent_max_climb, e);
        if (!st && (a = cJSON_GetObjectItemCaseSensitive(it, "max_slope")))
            st = read_float(a, "agent.max_slope", 0, 89, &c->agent_max_slope, e);
    }
    return st;
}

static const char *const box_members[] = {"min", "max", NULL};

static pf_status read_box(const cJSON *it, const char *field, float bmin[3], float bmax[3],
                          pf_proto_error *e) {
    char f[96];
    pf_status st;
    if ((st = pf_jsonr_object(it, field, e))) return st;
    snprintf(f, sizeof f, "%s.", field);
    if ((st = pf_jsonr_check_members(it, box_members, f, e))) return st;
    snprintf(f, sizeof f, "%s.min", field);
    if ((st = pf_nav_read_point(cJSON_GetObjectItemCaseSensitive(it, "min"), f, bmin, e)))
        return st;
    snprintf(f, sizeof f, "%s.max", field);
    if ((st = pf_nav_read_point(cJSON_GetObjectItemCaseSensitive(it, "max"), f, bmax, e)))
        return st;
    for (int k = 0; k < 3; k++)
        if (!(bmin[k] < bmax[k]))
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                      "Field '%s' must have min below max on every axis.", field);
    return PF_OK;
}

static bool valid_name(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n >= PF_NAV_NAME_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

static pf_status read_name(const cJSON *it, const char *field, const char **out,
                           pf_proto_error *e) {
    if (pf_jsonr_string(it, field, out, e)) return PF_EPARSE;
    if (!valid_name(*out))
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "Field '%s' is 1 to 63 characters of A-Z a-z 0-9 _ . -", field);
    return PF_OK;
}

static const char *const obstacle_members[] = {"id", "box", "cylinder", NULL};
static const char *const cylinder_members[] = {"base", "radius", "height", NULL};

static pf_status read_obstacle(const cJSON *it, const char *field, pf_nav_obstacle *o,
                               pf_proto_error *e) {
    char f[96];
    const char *id;
    const cJSON *box, *cyl;
    pf_status st;
    memset(o, 0, sizeof *o);
    if ((st = pf_jsonr_object(it, field, e))) return st;
    snprintf(f, sizeof f, "%s.", field);
    if ((st = pf_jsonr_check_members(it, obstacle_members, f, e))) return st;
    snprintf(f, sizeof f, "%s.id", field);
    if ((st = read_name(cJSON_GetObjectItemCaseSensitive(it, "id"), f, &id, e))) return st;
    snprintf(o->id, sizeof o->id, "%s", id);
    box = cJSON_GetObjectItemCaseSensitive(it, "box");
    cyl = cJSON_GetObjectItemCaseSensitive(it, "cylinder");
    if ((box != NULL) == (cyl != NULL))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Obstacle '%s' needs exactly one of 'box' and 'cylinder'.",
                                  field);
    if (box) {
        o->shape = PF_NAV_BOX;
        snprintf(f, sizeof f, "%s.box", field);
        return read_box(box, f, o->bmin, o->bmax, e);
    }
    o->shape = PF_NAV_CYLINDER;
    snprintf(f, sizeof f, "%s.cylinder", field);
    if ((st = pf_jsonr_object(cyl, f, e))) return st;
    snprintf(f, sizeof f, "%s.cylinder.", field);
    if ((st = pf_jsonr_check_members(cyl, cylinder_members, f, e))) return st;
    snprintf(f, sizeof f, "%s.cylinder.base", field);
    if ((st = pf_nav_read_point(cJSON_GetObjectItemCaseSensitive(cyl, "base"), f, o->pos, e)))
        return st;
    snprintf(f, sizeof f, "%s.cylinder.radius", field);
    if ((st = read_float(cJSON_GetObjectItemCaseSensitive(cyl, "radius"), f, 1e-3, 1e5, &o->radius,
                         e)))
        return st;
    snprintf(f, sizeof f, "%s.cylinder.height", field);
    return read_float(cJSON_GetObjectItemCaseSensitive(cyl, "height"), f, 1e-3, 1e5, &o->height, e);
}

/* An array of obstacles into *out (malloc'd), at most max. */
static pf_status read_obstacles(const cJSON *arr, const char *field, size_t max,
                                pf_nav_obstacle **out, size_t *n, pf_proto_error *e) {
    size_t cnt;
    *out = NULL;
    *n = 0;
    if (!cJSON_IsArray(arr))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be an array of obstacles.", field);
    cnt = (size_t)cJSON_GetArraySize(arr);
    if (cnt > max)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, field,
                                  "Field '%s' has %zu obstacles, more than %zu.", field, cnt, max);
    if (!(*out = calloc(cnt ? cnt : 1, sizeof **out)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    size_t i = 0;
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char f[64];
        snprintf(f, sizeof f, "%s[%zu]", field, i);
        pf_status st = read_obstacle(c, f, &(*out)[i], e);
        if (st) {
            free(*out);
            *out = NULL;
            return st;
        }
    }
    *n = cnt;
    return PF_OK;
}

static const char *const area_members[] = {"id", "boxes", "cost", "enabled", NULL};

static pf_status read_areas(const cJSON *arr, pf_nav_upload *u, pf_proto_error *e) {
    size_t cnt;
    if (!cJSON_IsArray(arr))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "areas",
                                  "Field 'areas' must be an array.");
    cnt = (size_t)cJSON_GetArraySize(arr);
    if (cnt > PF_NAV_MAX_AREAS)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "areas",
                                  "Field 'areas' has %zu areas, more than %u.", cnt,
                                  PF_NAV_MAX_AREAS);
    if (!(u->areas = calloc(cnt ? cnt : 1, sizeof *u->areas)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    size_t i = 0;
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char f[96];
        const char *id;
        const cJSON *boxes, *it;
        pf_status st;
        pf_nav_area *a = &u->areas[i];
        snprintf(f, sizeof f, "areas[%zu]", i);
        if ((st = pf_jsonr_object(c, f, e))) return st;
        snprintf(f, sizeof f, "areas[%zu].", i);
        if ((st = pf_jsonr_check_members(c, area_members, f, e))) return st;
        snprintf(f, sizeof f, "areas[%zu].id", i);
        if ((st = read_name(cJSON_GetObjectItemCaseSensitive(c, "id"), f, &id, e))) return st;
        if (!(a->name = strdup(id)))
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        u->nareas = i + 1;
        a->cost = 1;
        a->enabled = true;
        snprintf(f, sizeof f, "areas[%zu].cost", i);
        if ((it = cJSON_GetObjectItemCaseSensitive(c, "cost")) &&
            (st = read_float(it, f, 0.01, 1000, &a->cost, e)))
            return st;
        snprintf(f, sizeof f, "areas[%zu].enabled", i);
        if ((it = cJSON_GetObjectItemCaseSensitive(c, "enabled")) &&
            (st = pf_jsonr_bool(it, f, &a->enabled, e)))
            return st;
        snprintf(f, sizeof f, "areas[%zu].boxes", i);
        boxes = cJSON_GetObjectItemCaseSensitive(c, "boxes");
        if (!cJSON_IsArray(boxes) || cJSON_GetArraySize(boxes) < 1)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                      "Field '%s' must be an array of at least one box.", f);
        size_t nb = (size_t)cJSON_GetArraySize(boxes), k = 0;
        if (nb > 65536)
            return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, f,
                                      "Field '%s' has more than 65536 boxes.", f);
        pf_nav_box *bx = calloc(nb, sizeof *bx);
        if (!bx) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        a->boxes = bx;
        a->nboxes = nb;
        for (const cJSON *b = boxes->child; b; b = b->next, k++) {
            char bf[96];
            snprintf(bf, sizeof bf, "areas[%zu].boxes[%zu]", i, k);
            if ((st = read_box(b, bf, bx[k].bmin, bx[k].bmax, e))) return st;
        }
    }
    return PF_OK;
}

static const char *const area_change_members[] = {"id", "enabled", "cost", NULL};

/* An array of area changes {"id","enabled","cost"} (field "areas" of a
 * PATCH, "area_state" of an upload). */
static pf_status read_area_changes(const cJSON *it, const char *field, pf_nav_area_change **out,
                                   size_t *nout, pf_proto_error *e) {
    size_t n;
    pf_status st;
    *out = NULL;
    *nout = 0;
    if (!cJSON_IsArray(it))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be an array.", field);
    n = (size_t)cJSON_GetArraySize(it);
    if (n > PF_NAV_MAX_AREAS)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, field,
                                  "Field '%s' has more than %u entries.", field, PF_NAV_MAX_AREAS);
    if (!(*out = calloc(n ? n : 1, sizeof **out)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    size_t i = 0;
    for (const cJSON *c = it->child; c; c = c->next, i++) {
        char f[64];
        const char *id;
        const cJSON *v;
        pf_nav_area_change *ac = &(*out)[i];
        snprintf(f, sizeof f, "%s[%zu]", field, i);
        if ((st = pf_jsonr_object(c, f, e))) return st;
        snprintf(f, sizeof f, "%s[%zu].", field, i);
        if ((st = pf_jsonr_check_members(c, area_change_members, f, e))) return st;
        snprintf(f, sizeof f, "%s[%zu].id", field, i);
        if ((st = read_name(cJSON_GetObjectItemCaseSensitive(c, "id"), f, &id, e))) return st;
        if (!(ac->name = strdup(id)))
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        *nout = i + 1;
        if ((v = cJSON_GetObjectItemCaseSensitive(c, "enabled"))) {
            snprintf(f, sizeof f, "%s[%zu].enabled", field, i);
            if ((st = pf_jsonr_bool(v, f, &ac->enabled, e))) return st;
            ac->set_enabled = true;
        }
        if ((v = cJSON_GetObjectItemCaseSensitive(c, "cost"))) {
            snprintf(f, sizeof f, "%s[%zu].cost", field, i);
            if ((st = read_float(v, f, 0.01, 1000, &ac->cost, e))) return st;
            ac->set_cost = true;
        }
        if (!ac->set_enabled && !ac->set_cost) {
            snprintf(f, sizeof f, "%s[%zu]", field, i);
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                      "An area change sets 'enabled', 'cost' or both.");
        }
    }
    return PF_OK;
}

static const char *const envelope_members[] = {
    "kind",           "obj",   "from_grid", "cell_size", "cell_height", "tile_size",
    "edge_max_error", "agent", "areas",     "obstacles", "area_state",  NULL};

pf_status pf_nav_upload_from_json(const cJSON *root, const pf_grid_limits *glim,
                                  const pf_nav_limits *nlim, pf_nav_upload *out,
                                  pf_proto_error *e) {
    const cJSON *obj, *grid, *it;
    pf_status st;
    memset(out, 0, sizeof *out);
    out->config = pf_nav_default_config();
    if ((st = pf_jsonr_object(root, "", e)) ||
        (st = pf_jsonr_check_members(root, envelope_members, "", e)))
        return st;
    obj = cJSON_GetObjectItemCaseSensitive(root, "obj");
    grid = cJSON_GetObjectItemCaseSensitive(root, "from_grid");
    if ((obj != NULL) == (grid != NULL))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, obj ? "from_grid" : "obj",
                                  "A navmesh upload has exactly one of 'obj' (Wavefront OBJ "
                                  "text) and 'from_grid' (a grid map).");
    if ((st = read_settings(root, &out->config, e))) goto out_free;
    if (obj) {
        const char *text;
        pf_nav_error ne;
        if ((st = pf_jsonr_string(obj, "obj", &text, e))) goto out_free;
        out->obj_len = strlen(text);
        if (!(out->obj_text = strdup(text))) goto out_nomem;
        st = pf_obj_parse(text, out->obj_len, nlim->max_vertices, nlim->max_triangles, &out->obj,
                          &ne);
        if (st) {
            pf_nav_error_to_proto(e, st, &ne);
            goto out_free;
        }
    } else if (cJSON_IsString(grid)) {
        st = pf_map_text_parse(grid->valuestring, strlen(grid->valuestring), glim, &out->grid, e);
        if (st) {
            pf_proto_error_nest(e, "from_grid");
            goto out_free;
        }
    } else if (cJSON_IsObject(grid)) {
        char *text = cJSON_PrintUnformatted(grid);
        if (!text) goto out_nomem;
        st = pf_map_json_parse(text, strlen(text), glim, &out->grid, e);
        free(text);
        if (st) {
            pf_proto_error_nest(e, "from_grid");
            goto out_free;
        }
    } else {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "from_grid",
                                "Field 'from_grid' is a grid map: a JSON map object or Moving AI "
                                "text.");
        goto out_free;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "areas")) && (st = read_areas(it, out, e)))
        goto out_free;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "obstacles")) &&
        (st = read_obstacles(it, "obstacles", nlim->max_obstacles, &out->obstacles,
                             &out->nobstacles, e)))
        goto out_free;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "area_state")) &&
        (st = read_area_changes(it, "area_state", &out->area_state, &out->narea_state, e)))
        goto out_free;
    return PF_OK;
out_nomem:
    st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
out_free:
    pf_nav_upload_free(out);
    return st;
}

/* A query-string number. */
static pf_status q_float(const char *v, const char *k, double lo, double hi, float *out,
                         pf_proto_error *e) {
    char *end;
    double x = v && *v ? strtod(v, &end) : NAN;
    if (!v || !*v || *end || !isfinite(x))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                  "Parameter '%s' must be a number.", k);
    if (x < lo || x > hi)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, k,
                                  "Parameter '%s' must be between %g and %g.", k, lo, hi);
    *out = (float)x;
    return PF_OK;
}

pf_status pf_nav_upload_from_obj(const char *buf, size_t len, const pf_kv *kv, size_t nkv,
                                 const pf_nav_limits *nlim, pf_nav_upload *out, pf_proto_error *e) {
    pf_status st = PF_OK;
    pf_nav_error ne;
    memset(out, 0, sizeof *out);
    out->config = pf_nav_default_config();
    pf_nav_config *c = &out->config;
    for (size_t i = 0; i < nkv && !st; i++) {
        const char *k = kv[i].key, *v = kv[i].value;
        for (size_t j = 0; j < i; j++)
            if (strcmp(kv[j].key, k) == 0)
                return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                          "Parameter '%.40s' appears twice.", k);
        if (strcmp(k, "cell_size") == 0)
            st = q_float(v, k, 0.01, 10, &c->cell_size, e);
        else if (strcmp(k, "cell_height") == 0)
            st = q_float(v, k, 0.01, 10, &c->cell_height, e);
        else if (strcmp(k, "edge_max_error") == 0)
            st = q_float(v, k, 0.1, 3, &c->edge_max_error, e);
        else if (strcmp(k, "agent_radius") == 0)
            st = q_float(v, k, 0, 50, &c->agent_radius, e);
        else if (strcmp(k, "agent_height") == 0)
            st = q_float(v, k, 0.01, 100, &c->agent_height, e);
        else if (strcmp(k, "agent_max_climb") == 0)
            st = q_float(v, k, 0, 100, &c->agent_max_climb, e);
        else if (strcmp(k, "agent_max_slope") == 0)
            st = q_float(v, k, 0, 89, &c->agent_max_slope, e);
        else if (strcmp(k, "tile_size") == 0) {
            float ts;
            st = q_float(v, k, 16, 240, &ts, e);
            if (!st && ts != floorf(ts))
                st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                        "Parameter 'tile_size' must be an integer.");
            c->tile_size = (int32_t)ts;
        } else
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                    "Unknown parameter '%.40s' (navmesh settings: cell_size, "
                                    "cell_height, tile_size, edge_max_error, agent_radius, "
                                    "agent_height, agent_max_climb, agent_max_slope).",
                                    k);
    }
    if (st) return st;
    if (!(out->obj_text = malloc(len + 1)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    memcpy(out->obj_text, buf, len);
    out->obj_text[len] = '\0';
    out->obj_len = len;
    st = pf_obj_parse(buf, len, nlim->max_vertices, nlim->max_triangles, &out->obj, &ne);
    if (st) {
        pf_nav_error_to_proto(e, st, &ne);
        pf_nav_upload_free(out);
    }
    return st;
}

pf_nav_build_input pf_nav_upload_input(const pf_nav_upload *u, pf_nav_geom *geom) {
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.config = u->config;
    if (u->grid) {
        in.grid = u->grid;
    } else {
        *geom = pf_obj_geom(&u->obj);
        in.geom = geom;
    }
    in.areas = u->areas;
    in.nareas = u->nareas;
    return in;
}

/* PATCH */

static const char *const patch_members[] = {"obstacles", "remove_obstacles", "areas", NULL};

void pf_nav_patch_free(pf_nav_patch *p) {
    if (!p) return;
    free(p->put);
    for (size_t i = 0; i < p->nremove; i++) free(p->remove[i]);
    free(p->remove);
    for (size_t i = 0; i < p->nareas; i++) free((char *)p->areas[i].name);
    free(p->areas);
    memset(p, 0, sizeof *p);
}

pf_status pf_nav_patch_parse(const char *buf, size_t len, pf_nav_patch *out, pf_proto_error *e) {
    cJSON *root = NULL;
    const cJSON *it;
    pf_status st;
    memset(out, 0, sizeof *out);
    if ((st = pf_jsonr_parse(buf, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, "", e)) ||
        (st = pf_jsonr_check_members(root, patch_members, "", e)))
        goto out_free;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "obstacles")) &&
        (st = read_obstacles(it, "obstacles", 65536, &out->put, &out->nput, e)))
        goto out_free;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "remove_obstacles"))) {
        size_t n;
        if (!cJSON_IsArray(it)) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "remove_obstacles",
                                    "Field 'remove_obstacles' must be an array of ids.");
            goto out_free;
        }
        n = (size_t)cJSON_GetArraySize(it);
        if (n > 65536) {
            st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "remove_obstacles",
                                    "Field 'remove_obstacles' has more than 65536 ids.");
            goto out_free;
        }
        if (!(out->remove = calloc(n ? n : 1, sizeof *out->remove))) goto out_nomem;
        size_t i = 0;
        for (const cJSON *c = it->child; c; c = c->next, i++) {
            char f[48];
            const char *id;
            snprintf(f, sizeof f, "remove_obstacles[%zu]", i);
            if ((st = read_name(c, f, &id, e))) goto out_free;
            if (!(out->remove[i] = strdup(id))) goto out_nomem;
            out->nremove = i + 1;
        }
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "areas")) &&
        (st = read_area_changes(it, "areas", &out->areas, &out->nareas, e)))
        goto out_free;
    if (!out->nput && !out->nremove && !out->nareas) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, NULL,
                                "A navmesh PATCH changes at least one obstacle or area "
                                "('obstacles', 'remove_obstacles', 'areas').");
        goto out_free;
    }
    cJSON_Delete(root);
    return PF_OK;
out_nomem:
    st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
out_free:
    cJSON_Delete(root);
    pf_nav_patch_free(out);
    return st;
}

pf_nav_change pf_nav_patch_change(const pf_nav_patch *p) {
    pf_nav_change c;
    memset(&c, 0, sizeof c);
    c.put = p->put;
    c.nput = p->nput;
    c.remove = (const char *const *)p->remove;
    c.nremove = p->nremove;
    c.areas = p->areas;
    c.nareas = p->nareas;
    return c;
}

/* Paths */

const char *pf_nav_algorithm_name(pf_nav_algorithm a) {
    return a == PF_NAV_DETOUR ? "detour" : "polyanya";
}

static pf_status algo_from(const char *s, const char *field, pf_nav_algorithm *out,
                           pf_proto_error *e) {
    if (strcmp(s, "polyanya") == 0)
        *out = PF_NAV_POLYANYA;
    else if (strcmp(s, "detour") == 0)
        *out = PF_NAV_DETOUR;
    else
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "Algorithm '%.40s' is not one of a navmesh map's: polyanya, "
                                  "detour.",
                                  s);
    return PF_OK;
}

static pf_status check_box(const float *b, const char *field, float max_extent, pf_proto_error *e) {
    for (int k = 0; k < 3; k++)
        if (!(b[k] > 0 && b[k] <= max_extent))
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                      "Field '%s' holds half extents in (0, %g] "
                                      "(nav_max_search_extent).",
                                      field, (double)max_extent);
    return PF_OK;
}

static const char *const path_members[] = {"start",       "goal",  "algorithm", "search_box",
                                           "deadline_ms", "cache", "corridor",  NULL};

/* The grid path request's many-unit fields a navmesh query does not take,
 * each with why: 422 unsupported naming the field (field is the name as
 * written, prefixed). NULL when name is not one of them. */
static const char *grid_only_reason(const char *name) {
    if (strcmp(name, "agent_size") == 0)
        return "a navmesh map is built for one agent (agent.radius and agent.height at upload; "
               "build another map for another size)";
    if (strcmp(name, "goals") == 0)
        return "a navmesh query has one goal (send a batch to POST .../paths for several)";
    if (strcmp(name, "partial") == 0)
        return "a navmesh answer is always partial when the goal cannot be reached (partial: "
               "true, the path to the closest reachable point)";
    if (strcmp(name, "snap") == 0 || strcmp(name, "snap_radius") == 0)
        return "a navmesh query always snaps its points to the nearest polygon within its "
               "search_box";
    return NULL;
}

static pf_status grid_only_error(const char *field, const char *why, pf_proto_error *e) {
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_UNSUPPORTED, field,
                              "Field '%s' is for grid maps: %s.", field, why);
}

static pf_nav_path_request nav_request_default(void) {
    pf_nav_path_request r;
    memset(&r, 0, sizeof r);
    r.algorithm = PF_NAV_POLYANYA;
    r.use_cache = true;
    return r;
}

pf_status pf_nav_path_request_from_json(const cJSON *obj, const char *prefix, bool allow_deadline,
                                        float max_extent, pf_nav_path_request *out,
                                        pf_proto_error *e) {
    pf_nav_path_request r = nav_request_default();
    char f[96];
    const cJSON *it;
    pf_status st;
    snprintf(f, sizeof f, "%.60s", prefix);
    if ((st = pf_jsonr_object(obj, prefix[0] ? f : "", e))) return st;
    for (const cJSON *c = obj->child; c; c = c->next) {
        const char *why = c->string ? grid_only_reason(c->string) : NULL;
        if (!why) continue;
        snprintf(f, sizeof f, "%.60s%.30s", prefix, c->string);
        return grid_only_error(f, why, e);
    }
    if ((st = pf_jsonr_check_members(obj, path_members, prefix, e))) return st;
    snprintf(f, sizeof f, "%sstart", prefix);
    if ((st = pf_nav_read_point(cJSON_GetObjectItemCaseSensitive(obj, "start"), f, r.start, e)))
        return st;
    snprintf(f, sizeof f, "%sgoal", prefix);
    if ((st = pf_nav_read_point(cJSON_GetObjectItemCaseSensitive(obj, "goal"), f, r.goal, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "algorithm"))) {
        const char *s;
        snprintf(f, sizeof f, "%salgorithm", prefix);
        if ((st = pf_jsonr_string(it, f, &s, e)) || (st = algo_from(s, f, &r.algorithm, e)))
            return st;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "search_box"))) {
        snprintf(f, sizeof f, "%ssearch_box", prefix);
        if ((st = pf_nav_read_point(it, f, r.box, e)) || (st = check_box(r.box, f, max_extent, e)))
            return st;
        r.has_box = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "deadline_ms"))) {
        snprintf(f, sizeof f, "%sdeadline_ms", prefix);
        if (!allow_deadline)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                      "A batch's queries share its deadline_ms.");
        if ((st = pf_jsonr_int(it, f, 1, PF_PATH_MAX_DEADLINE_MS, &r.deadline_ms, e))) return st;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "cache"))) {
        snprintf(f, sizeof f, "%scache", prefix);
        if ((st = pf_jsonr_bool(it, f, &r.use_cache, e))) return st;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "corridor"))) {
        snprintf(f, sizeof f, "%scorridor", prefix);
        if ((st = pf_jsonr_bool(it, f, &r.corridor, e))) return st;
    }
    *out = r;
    return PF_OK;
}

pf_status pf_nav_path_request_parse(const char *buf, size_t len, float max_extent,
                                    pf_nav_path_request *out, pf_proto_error *e) {
    cJSON *root = NULL;
    pf_status st = pf_jsonr_parse(buf, len, &root, e);
    if (st) return st;
    st = pf_nav_path_request_from_json(root, "", true, max_extent, out, e);
    cJSON_Delete(root);
    return st;
}

/* "x,y,z" */
static pf_status q_point3(const char *v, const char *k, float out[3], pf_proto_error *e) {
    const char *p = v;
    for (int i = 0; i < 3; i++) {
        char *end;
        double x = p && *p ? strtod(p, &end) : NAN;
        if (!p || !*p || end == p || !isfinite(x) || fabs(x) > MAX_COORD ||
            (i < 2 ? *end != ',' : *end != '\0'))
            return pf_proto_error_set(
                e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                "Parameter '%s' must be written x,y,z (finite, within +-1e7).", k);
        out[i] = (float)x;
        p = end + 1;
    }
    return PF_OK;
}

pf_status pf_nav_path_request_from_query(const pf_kv *kv, size_t n, float max_extent,
                                         pf_nav_path_request *out, pf_proto_error *e) {
    pf_nav_path_request r = nav_request_default();
    bool have_start = false, have_goal = false;
    pf_status st = PF_OK;
    for (size_t i = 0; i < n && !st; i++) {
        const char *k = kv[i].key, *v = kv[i].value;
        for (size_t j = 0; j < i; j++)
            if (strcmp(kv[j].key, k) == 0)
                return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                          "Parameter '%.40s' appears twice.", k);
        if (strcmp(k, "start") == 0) {
            st = q_point3(v, k, r.start, e);
            have_start = true;
        } else if (strcmp(k, "goal") == 0) {
            st = q_point3(v, k, r.goal, e);
            have_goal = true;
        } else if (strcmp(k, "algorithm") == 0) {
            st = algo_from(v ? v : "", k, &r.algorithm, e);
        } else if (strcmp(k, "search_box") == 0) {
            st = q_point3(v, k, r.box, e);
            if (!st) st = check_box(r.box, k, max_extent, e);
            r.has_box = true;
        } else if (strcmp(k, "cache") == 0 || strcmp(k, "corridor") == 0) {
            bool *flag = strcmp(k, "cache") == 0 ? &r.use_cache : &r.corridor;
            if (v && (strcmp(v, "false") == 0 || strcmp(v, "0") == 0))
                *flag = false;
            else if (v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0))
                *flag = true;
            else
                st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                        "Parameter '%s' is true or false.", k);
        } else if (strcmp(k, "deadline_ms") == 0) {
            char *end;
            long long d = v && *v ? strtoll(v, &end, 10) : 0;
            if (!v || !*v || *end)
                st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                        "Parameter 'deadline_ms' must be an integer.");
            else if (d < 1 || d > PF_PATH_MAX_DEADLINE_MS)
                st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, k,
                                        "Parameter 'deadline_ms' must be between 1 and %d.",
                                        PF_PATH_MAX_DEADLINE_MS);
            else
                r.deadline_ms = d;
        } else if (grid_only_reason(k)) {
            st = grid_only_error(k, grid_only_reason(k), e);
        } else {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                    "Unknown parameter '%.40s'.", k);
        }
    }
    if (st) return st;
    if (!have_start || !have_goal)
        return pf_proto_error_set(
            e, PF_EPARSE, PF_ERR_INVALID_REQUEST, have_start ? "goal" : "start",
            "Parameter '%s' is required (written x,y,z).", have_start ? "goal" : "start");
    *out = r;
    return PF_OK;
}

static const char *const batch_members[] = {"queries", "deadline_ms", NULL};

pf_status pf_nav_path_batch_parse(const char *buf, size_t len, size_t max_queries, float max_extent,
                                  pf_nav_path_request **out, size_t *n, int64_t *deadline_ms,
                                  pf_proto_error *e) {
    cJSON *root = NULL;
    const cJSON *qs, *it;
    pf_status st;
    *out = NULL;
    *n = 0;
    *deadline_ms = 0;
    if ((st = pf_jsonr_parse(buf, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, "", e)) ||
        (st = pf_jsonr_check_members(root, batch_members, "", e)))
        goto out_free;
    qs = cJSON_GetObjectItemCaseSensitive(root, "queries");
    if (!cJSON_IsArray(qs) || cJSON_GetArraySize(qs) < 1) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "queries",
                                "Field 'queries' must be an array of at least one query.");
        goto out_free;
    }
    if ((size_t)cJSON_GetArraySize(qs) > max_queries) {
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "queries",
                                "The batch has %d queries, more than %zu (max_batch).",
                                cJSON_GetArraySize(qs), max_queries);
        goto out_free;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "deadline_ms")) &&
        (st = pf_jsonr_int(it, "deadline_ms", 1, PF_PATH_MAX_DEADLINE_MS, deadline_ms, e)))
        goto out_free;
    size_t cnt = (size_t)cJSON_GetArraySize(qs), i = 0;
    pf_nav_path_request *q = calloc(cnt, sizeof *q);
    if (!q) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_free;
    }
    for (const cJSON *c = qs->child; c; c = c->next, i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "queries[%zu].", i);
        if ((st = pf_nav_path_request_from_json(c, prefix, false, max_extent, &q[i], e))) {
            free(q);
            goto out_free;
        }
    }
    *out = q;
    *n = cnt;
out_free:
    cJSON_Delete(root);
    return st;
}

void pf_nav_write_point(pf_jsonw *w, const float *p) {
    pf_jsonw_arr_begin(w);
    for (int k = 0; k < 3; k++) pf_jsonw_double(w, round((double)p[k] * 1e4) / 1e4);
    pf_jsonw_arr_end(w);
}

void pf_nav_write_path_members(pf_jsonw *w, const pf_nav_path *p, pf_nav_algorithm algo,
                               uint64_t map_version) {
    pf_jsonw_kbool(w, "found", !p->partial);
    pf_jsonw_kbool(w, "partial", p->partial);
    if (p->partial) pf_jsonw_kstr(w, "reason", p->out_of_nodes ? "node_budget" : "unreachable");
    pf_jsonw_kdouble(w, "length", round(p->length * 1e4) / 1e4);
    pf_jsonw_kdouble(w, "cost", round(p->cost * 1e4) / 1e4);
    pf_jsonw_key(w, "path");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < p->npoints; i++) pf_nav_write_point(w, &p->points[3 * i]);
    pf_jsonw_arr_end(w);
    pf_jsonw_kstr(w, "algorithm", pf_nav_algorithm_name(algo));
    pf_jsonw_kuint(w, "polygons", p->polygons);
    pf_jsonw_kbool(w, "exact", p->exact);
    pf_jsonw_kuint(w, "map_version", map_version);
}

void pf_nav_write_corridor(pf_jsonw *w, const pf_nav_path *p) {
    pf_jsonw_key(w, "corridor");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; p->corridor && i < p->polygons; i++) pf_jsonw_uint(w, p->corridor[i]);
    pf_jsonw_arr_end(w);
}

void pf_nav_write_path_stats(pf_jsonw *w, uint64_t expanded, uint64_t time_us, bool cached) {
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "expanded", expanded);
    pf_jsonw_kuint(w, "time_us", time_us);
    pf_jsonw_kbool(w, "cached", cached);
    pf_jsonw_obj_end(w);
}
