/* nav_json.c -- see nav_json.h: the upload and PATCH readers and the
 * point codec (the map info and envelope writers, which read a navmesh
 * version, are in nav_info.c; path requests and answers in
 * nav_path_json.c). */
#include "nav_json.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"
#include "map_json.h"

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
    for (size_t i = 0; i < u->nagent_types; i++) free((char *)u->agent_types[i].name);
    free(u->agent_types);
    free(u->links);
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
               {"limits.max_area_boxes", "limits.nav_max_area_boxes"},
               {"limits.max_tile_spans", "limits.nav_max_tile_spans"},
               {"limits.max_column_spans", "limits.nav_max_column_spans"},
               {"limits.max_links", "limits.nav_max_links"}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(field, map[i].nav) == 0) return map[i].flag;
    return field;
}

pf_status pf_nav_error_to_proto(pf_proto_error *e, pf_status st, const pf_nav_error *ne) {
    if (strcmp(ne->field, "limits.max_bytes") == 0)
        /* The budget's room, handed to the build: as every budget refusal. */
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_INSUFFICIENT_STORAGE, NULL,
                                  "Building the navmesh stopped: %.150s. Delete maps or sessions, "
                                  "or raise --max-memory.",
                                  ne->message);
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

pf_status pf_nav_read_point(const cJSON *it, const char *field, float out[3], pf_proto_error *e) {
    return pf_jsonr_point3(it, field, out, e);
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

static const char *const partition_names[] = {"watershed", "monotone", "layers", NULL};

/* A partition name into its pf_nav_partition. */
static pf_status partition_from(const char *v, const char *field, int32_t *out, pf_proto_error *e) {
    for (int i = 0; partition_names[i]; i++)
        if (v && strcmp(v, partition_names[i]) == 0) {
            *out = i;
            return PF_OK;
        }
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                              "Field '%s' is \"watershed\", \"monotone\" or \"layers\".", field);
}

const char *pf_nav_partition_name(int32_t p) {
    return p >= 0 && p <= 2 ? partition_names[p] : "watershed";
}

/* A number of [lo, hi] into an int32. */
static pf_status read_i32(const cJSON *it, const char *field, int64_t lo, int64_t hi, int32_t *out,
                          pf_proto_error *e) {
    int64_t v;
    pf_status st = pf_jsonr_int(it, field, lo, hi, &v, e);
    if (!st) *out = (int32_t)v;
    return st;
}

static pf_status tile_size_error(const char *field, pf_proto_error *e) {
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                              "Field '%s' is 0 (one tile for the whole world: a solo build) or an "
                              "integer between 16 and 1024 voxels.",
                              field);
}

/* One agent's four settings from object it; field names prefix.member. */
static pf_status read_agent(const cJSON *it, const char *prefix, float *radius, float *height,
                            float *climb, float *slope, pf_proto_error *e) {
    char f[96];
    const cJSON *a;
    pf_status st = PF_OK;
    snprintf(f, sizeof f, "%s.", prefix);
    if ((st = pf_jsonr_object(it, prefix, e)) ||
        (st = pf_jsonr_check_members(it, agent_members, f, e)))
        return st;
    float *dst[4] = {radius, height, climb, slope};
    static const double lo[4] = {0, 0.01, 0, 0}, hi[4] = {50, 100, 100, 89};
    for (int k = 0; k < 4 && !st; k++)
        if ((a = cJSON_GetObjectItemCaseSensitive(it, agent_members[k]))) {
            snprintf(f, sizeof f, "%s.%s", prefix, agent_members[k]);
            st = read_float(a, f, lo[k], hi[k], dst[k], e);
        }
    return st;
}

/* The build settings of an envelope (ranges are the builder's: it names
 * the same fields). */
static pf_status read_settings(const cJSON *root, pf_nav_config *c, pf_proto_error *e) {
    static const struct {
        const char *name;
        double lo, hi;
        size_t off;
    } floats[] = {
        {"cell_size", 0.01, 10, offsetof(pf_nav_config, cell_size)},
        {"cell_height", 0.01, 10, offsetof(pf_nav_config, cell_height)},
        {"edge_max_error", 0.1, 3, offsetof(pf_nav_config, edge_max_error)},
        {"edge_max_len", 0, 1000, offsetof(pf_nav_config, edge_max_len)},
        {"detail_sample_dist", 0, 64, offsetof(pf_nav_config, detail_sample_dist)},
        {"detail_sample_max_error", 0, 64, offsetof(pf_nav_config, detail_sample_max_error)}};
    static const struct {
        const char *name;
        int64_t lo, hi;
        size_t off;
    } ints[] = {{"tile_size", 0, 1024, offsetof(pf_nav_config, tile_size)},
                {"region_min_size", 0, 150, offsetof(pf_nav_config, region_min_size)},
                {"region_merge_size", 0, 150, offsetof(pf_nav_config, region_merge_size)},
                {"verts_per_poly", 3, 6, offsetof(pf_nav_config, verts_per_poly)}};
    const cJSON *it;
    pf_status st = PF_OK;
    /* The settings are fields of c at their offsets: copied, not cast. */
    for (size_t i = 0; i < sizeof floats / sizeof floats[0] && !st; i++) {
        float x;
        if (!(it = cJSON_GetObjectItemCaseSensitive(root, floats[i].name))) continue;
        st = read_float(it, floats[i].name, floats[i].lo, floats[i].hi, &x, e);
        if (!st) memcpy((char *)c + floats[i].off, &x, sizeof x);
    }
    for (size_t i = 0; i < sizeof ints / sizeof ints[0] && !st; i++) {
        int32_t x;
        if (!(it = cJSON_GetObjectItemCaseSensitive(root, ints[i].name))) continue;
        st = read_i32(it, ints[i].name, ints[i].lo, ints[i].hi, &x, e);
        if (!st) memcpy((char *)c + ints[i].off, &x, sizeof x);
    }
    if (!st && c->tile_size > 0 && c->tile_size < 16) st = tile_size_error("tile_size", e);
    if (!st && (it = cJSON_GetObjectItemCaseSensitive(root, "partition"))) {
        const char *v;
        if (!(st = pf_jsonr_string(it, "partition", &v, e)))
            st = partition_from(v, "partition", &c->partition, e);
    }
    if (!st && (it = cJSON_GetObjectItemCaseSensitive(root, "agent")))
        st = read_agent(it, "agent", &c->agent_radius, &c->agent_height, &c->agent_max_climb,
                        &c->agent_max_slope, e);
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

bool pf_nav_name_valid(const char *s) { return valid_name(s); }

pf_status pf_nav_read_name(const cJSON *it, const char *field, const char **out,
                           pf_proto_error *e) {
    return read_name(it, field, out, e);
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

static const char *const agent_type_members[] = {"id",        "radius",    "height",
                                                 "max_climb", "max_slope", NULL};

/* "agent_types": more agent types, each the default agent's settings where
 * silent. */
static pf_status read_agent_types(const cJSON *arr, pf_nav_upload *u, pf_proto_error *e) {
    if (!cJSON_IsArray(arr))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "agent_types",
                                  "Field 'agent_types' must be an array of agent types.");
    const size_t cnt = (size_t)cJSON_GetArraySize(arr);
    if (cnt + 1 > PF_NAV_MAX_AGENT_TYPES)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "agent_types",
                                  "Field 'agent_types' has %zu types; a map has at most %u "
                                  "besides \"default\".",
                                  cnt, PF_NAV_MAX_AGENT_TYPES - 1);
    if (!(u->agent_types = calloc(cnt ? cnt : 1, sizeof *u->agent_types)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    size_t i = 0;
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char f[64], g[64];
        const char *id;
        pf_status st;
        pf_nav_agent_type *t = &u->agent_types[i];
        snprintf(f, sizeof f, "agent_types[%zu]", i);
        if ((st = pf_jsonr_object(c, f, e))) return st;
        snprintf(g, sizeof g, "agent_types[%zu].", i);
        if ((st = pf_jsonr_check_members(c, agent_type_members, g, e))) return st;
        snprintf(g, sizeof g, "agent_types[%zu].id", i);
        if ((st = read_name(cJSON_GetObjectItemCaseSensitive(c, "id"), g, &id, e))) return st;
        if (!(t->name = strdup(id)))
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        u->nagent_types = i + 1;
        t->radius = u->config.agent_radius;
        t->height = u->config.agent_height;
        t->max_climb = u->config.agent_max_climb;
        t->max_slope = u->config.agent_max_slope;
        /* Its members are an agent's; "id" was checked above. */
        cJSON *copy = cJSON_Duplicate(c, 1);
        if (!copy)
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "id");
        st = read_agent(copy, f, &t->radius, &t->height, &t->max_climb, &t->max_slope, e);
        cJSON_Delete(copy);
        if (st) return st;
    }
    return PF_OK;
}

static const char *const link_members[] = {"id",   "start", "end",     "radius", "bidirectional",
                                           "area", "cost",  "enabled", NULL};

/* One link {"id","start","end","radius","bidirectional","area","cost",
 * "enabled"}; radius defaults to def_radius. */
static pf_status read_link(const cJSON *c, const char *field, float def_radius, pf_nav_link *l,
                           pf_proto_error *e) {
    char f[96];
    const char *s;
    const cJSON *it;
    pf_status st;
    memset(l, 0, sizeof *l);
    l->radius = def_radius;
    l->bidir = true;
    l->cost = 1;
    l->enabled = true;
    if ((st = pf_jsonr_object(c, field, e))) return st;
    snprintf(f, sizeof f, "%s.", field);
    if ((st = pf_jsonr_check_members(c, link_members, f, e))) return st;
    snprintf(f, sizeof f, "%s.id", field);
    if ((st = read_name(cJSON_GetObjectItemCaseSensitive(c, "id"), f, &s, e))) return st;
    snprintf(l->id, sizeof l->id, "%s", s);
    snprintf(f, sizeof f, "%s.start", field);
    if ((st = pf_nav_read_point(cJSON_GetObjectItemCaseSensitive(c, "start"), f, l->start, e)))
        return st;
    snprintf(f, sizeof f, "%s.end", field);
    if ((st = pf_nav_read_point(cJSON_GetObjectItemCaseSensitive(c, "end"), f, l->end, e)))
        return st;
    snprintf(f, sizeof f, "%s.radius", field);
    if ((it = cJSON_GetObjectItemCaseSensitive(c, "radius")) &&
        (st = read_float(it, f, 1e-3, 1000, &l->radius, e)))
        return st;
    snprintf(f, sizeof f, "%s.bidirectional", field);
    if ((it = cJSON_GetObjectItemCaseSensitive(c, "bidirectional")) &&
        (st = pf_jsonr_bool(it, f, &l->bidir, e)))
        return st;
    snprintf(f, sizeof f, "%s.area", field);
    if ((it = cJSON_GetObjectItemCaseSensitive(c, "area"))) {
        if ((st = read_name(it, f, &s, e))) return st;
        snprintf(l->area, sizeof l->area, "%s", s);
    }
    snprintf(f, sizeof f, "%s.cost", field);
    if ((it = cJSON_GetObjectItemCaseSensitive(c, "cost")) &&
        (st = read_float(it, f, 0.01, 1000, &l->cost, e)))
        return st;
    snprintf(f, sizeof f, "%s.enabled", field);
    if ((it = cJSON_GetObjectItemCaseSensitive(c, "enabled")) &&
        (st = pf_jsonr_bool(it, f, &l->enabled, e)))
        return st;
    return PF_OK;
}

/* An array of links into *out (malloc'd), at most max. */
static pf_status read_links(const cJSON *arr, const char *field, size_t max, float def_radius,
                            pf_nav_link **out, size_t *n, pf_proto_error *e) {
    *out = NULL;
    *n = 0;
    if (!cJSON_IsArray(arr))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be an array of links.", field);
    const size_t cnt = (size_t)cJSON_GetArraySize(arr);
    if (cnt > max)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, field,
                                  "Field '%s' has %zu links, more than %zu (nav_max_links).", field,
                                  cnt, max);
    if (!(*out = calloc(cnt ? cnt : 1, sizeof **out)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    size_t i = 0;
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char f[64];
        snprintf(f, sizeof f, "%s[%zu]", field, i);
        pf_status st = read_link(c, f, def_radius, &(*out)[i], e);
        if (st) {
            free(*out);
            *out = NULL;
            return st;
        }
    }
    *n = cnt;
    return PF_OK;
}

static const char *const envelope_members[] = {"kind",
                                               "obj",
                                               "from_grid",
                                               "cell_size",
                                               "cell_height",
                                               "tile_size",
                                               "region_min_size",
                                               "region_merge_size",
                                               "edge_max_len",
                                               "edge_max_error",
                                               "verts_per_poly",
                                               "detail_sample_dist",
                                               "detail_sample_max_error",
                                               "partition",
                                               "agent",
                                               "agent_types",
                                               "areas",
                                               "links",
                                               "obstacles",
                                               "area_state",
                                               NULL};

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
    if (grid) out->config = pf_nav_default_grid_config();
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
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "agent_types")) &&
        (st = read_agent_types(it, out, e)))
        goto out_free;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "links")) &&
        (st = read_links(it, "links", nlim->max_links, out->config.agent_radius, &out->links,
                         &out->nlinks, e)))
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

/* A query-string setting: name, range, where in the config; an integer
 * when integer. */
typedef struct q_setting {
    const char *name;
    double lo, hi;
    size_t off;
    bool integer;
} q_setting;

static const q_setting q_settings[] = {
    {"cell_size", 0.01, 10, offsetof(pf_nav_config, cell_size), false},
    {"cell_height", 0.01, 10, offsetof(pf_nav_config, cell_height), false},
    {"tile_size", 0, 1024, offsetof(pf_nav_config, tile_size), true},
    {"region_min_size", 0, 150, offsetof(pf_nav_config, region_min_size), true},
    {"region_merge_size", 0, 150, offsetof(pf_nav_config, region_merge_size), true},
    {"edge_max_len", 0, 1000, offsetof(pf_nav_config, edge_max_len), false},
    {"edge_max_error", 0.1, 3, offsetof(pf_nav_config, edge_max_error), false},
    {"verts_per_poly", 3, 6, offsetof(pf_nav_config, verts_per_poly), true},
    {"detail_sample_dist", 0, 64, offsetof(pf_nav_config, detail_sample_dist), false},
    {"detail_sample_max_error", 0, 64, offsetof(pf_nav_config, detail_sample_max_error), false},
    {"agent_radius", 0, 50, offsetof(pf_nav_config, agent_radius), false},
    {"agent_height", 0.01, 100, offsetof(pf_nav_config, agent_height), false},
    {"agent_max_climb", 0, 100, offsetof(pf_nav_config, agent_max_climb), false},
    {"agent_max_slope", 0, 89, offsetof(pf_nav_config, agent_max_slope), false},
};

/* Numbers separated by ',' from *p (advanced past them): up to n, at
 * least need; *got how many. Past the first need, a word that is not a
 * number ends them (unread); false on a malformed or non-finite one
 * before. */
static bool q_numbers(const char **p, const char *end, double *out, int n, int need, int *got) {
    *got = 0;
    while (*got < n && *p < end) {
        char buf[48];
        const char *q = *p;
        while (q < end && *q != ',') q++;
        size_t len = (size_t)(q - *p);
        if (len == 0 || len >= sizeof buf) return false;
        memcpy(buf, *p, len);
        buf[len] = '\0';
        char *e;
        double v = strtod(buf, &e);
        if (*e || !isfinite(v) || fabs(v) > PF_JSONR_MAX_COORD) return *got >= need;
        out[(*got)++] = v;
        *p = q < end ? q + 1 : q;
        if (q == end) break;
    }
    return *got >= need;
}

/* agent_types=id:radius,height,max_climb,max_slope;id:... */
static pf_status q_agent_types(const char *v, pf_nav_upload *u, pf_proto_error *e) {
    const char *k = "agent_types";
    size_t cnt = 1;
    for (const char *c = v; *c; c++) cnt += *c == ';';
    if (cnt + 1 > PF_NAV_MAX_AGENT_TYPES)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, k,
                                  "Parameter 'agent_types' has %zu types; a map has at most %u "
                                  "besides \"default\".",
                                  cnt, PF_NAV_MAX_AGENT_TYPES - 1);
    if (!(u->agent_types = calloc(cnt, sizeof *u->agent_types)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    const char *p = v;
    for (size_t i = 0; i < cnt; i++) {
        const char *rec_end = strchr(p, ';');
        if (!rec_end) rec_end = p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(rec_end - p));
        double x[4];
        int got = 0;
        char id[PF_NAV_NAME_MAX];
        size_t idlen = colon ? (size_t)(colon - p) : 0;
        const char *q = colon ? colon + 1 : rec_end;
        if (!colon || idlen == 0 || idlen >= sizeof id || !q_numbers(&q, rec_end, x, 4, 4, &got) ||
            q != rec_end)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                      "Parameter 'agent_types' is id:radius,height,max_climb,"
                                      "max_slope, ';' between types (type %zu is not).",
                                      i);
        memcpy(id, p, idlen);
        id[idlen] = '\0';
        if (!(u->agent_types[i].name = strdup(id)))
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        u->nagent_types = i + 1;
        u->agent_types[i].radius = (float)x[0];
        u->agent_types[i].height = (float)x[1];
        u->agent_types[i].max_climb = (float)x[2];
        u->agent_types[i].max_slope = (float)x[3];
        p = *rec_end ? rec_end + 1 : rec_end;
    }
    return PF_OK;
}

/* links=id:sx,sy,sz,ex,ey,ez[,radius[,both|one_way[,area[,cost]]]];id:... */
static pf_status q_links(const char *v, size_t max, pf_nav_upload *u, pf_proto_error *e) {
    const char *k = "links";
    size_t cnt = 1;
    for (const char *c = v; *c; c++) cnt += *c == ';';
    if (cnt > max)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, k,
                                  "Parameter 'links' has %zu links, more than %zu (nav_max_links).",
                                  cnt, max);
    if (!(u->links = calloc(cnt, sizeof *u->links)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    const char *p = v;
    for (size_t i = 0; i < cnt; i++) {
        pf_nav_link *l = &u->links[i];
        const char *rec_end = strchr(p, ';');
        if (!rec_end) rec_end = p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(rec_end - p));
        double x[7];
        int got = 0;
        size_t idlen = colon ? (size_t)(colon - p) : 0;
        const char *q = colon ? colon + 1 : rec_end;
        bool ok =
            colon && idlen > 0 && idlen < sizeof l->id && q_numbers(&q, rec_end, x, 7, 6, &got);
        l->radius = u->config.agent_radius;
        l->bidir = true;
        l->cost = 1;
        l->enabled = true;
        if (ok) {
            memcpy(l->id, p, idlen);
            for (int c = 0; c < 3; c++) {
                l->start[c] = (float)x[c];
                l->end[c] = (float)x[3 + c];
            }
            if (got == 7) l->radius = (float)x[6];
            /* The words after the numbers: direction, area, cost. */
            const char *w = q;
            for (int field = 0; ok && w < rec_end && field < 3; field++) {
                const char *c = memchr(w, ',', (size_t)(rec_end - w));
                if (!c) c = rec_end;
                size_t n = (size_t)(c - w);
                if (field == 0 && n == 4 && memcmp(w, "both", 4) == 0)
                    l->bidir = true;
                else if (field == 0 && n == 7 && memcmp(w, "one_way", 7) == 0)
                    l->bidir = false;
                else if (field == 1 && n < sizeof l->area)
                    memcpy(l->area, w, n);
                else if (field == 2) {
                    const char *cp = w;
                    double cost;
                    int g2 = 0;
                    ok = q_numbers(&cp, c, &cost, 1, 1, &g2) && cost >= 0.01 && cost <= 1000;
                    l->cost = (float)cost;
                } else
                    ok = false;
                w = c < rec_end ? c + 1 : c;
            }
        }
        if (!ok)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                      "Parameter 'links' is id:sx,sy,sz,ex,ey,ez[,radius[,both|"
                                      "one_way[,area[,cost]]]], ';' between links (link %zu is "
                                      "not).",
                                      i);
        u->nlinks = i + 1;
        p = *rec_end ? rec_end + 1 : rec_end;
    }
    return PF_OK;
}

/* One query-string parameter of a model/obj upload. */
static pf_status q_upload_param(const char *k, const char *v, const pf_nav_limits *nlim,
                                pf_nav_upload *out, pf_proto_error *e) {
    pf_nav_config *c = &out->config;
    for (size_t s = 0; s < sizeof q_settings / sizeof q_settings[0]; s++) {
        const q_setting *qs = &q_settings[s];
        if (strcmp(k, qs->name) != 0) continue;
        float x = 0;
        pf_status st = q_float(v, k, qs->lo, qs->hi, &x, e);
        if (st) return st;
        if (!qs->integer) {
            memcpy((char *)c + qs->off, &x, sizeof x);
            return PF_OK;
        }
        if (x != floorf(x))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                      "Parameter '%s' must be an integer.", k);
        const int32_t n = (int32_t)x;
        memcpy((char *)c + qs->off, &n, sizeof n);
        if (qs->off == offsetof(pf_nav_config, tile_size) && x > 0 && x < 16)
            return tile_size_error(k, e);
        return PF_OK;
    }
    if (strcmp(k, "partition") == 0) return partition_from(v, k, &c->partition, e);
    if (strcmp(k, "agent_types") == 0 && v && *v) return q_agent_types(v, out, e);
    if (strcmp(k, "links") == 0 && v && *v) return q_links(v, nlim->max_links, out, e);
    return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                              "Unknown parameter '%.40s' (navmesh settings: cell_size, "
                              "cell_height, tile_size, region_min_size, region_merge_size, "
                              "edge_max_len, edge_max_error, verts_per_poly, detail_sample_dist, "
                              "detail_sample_max_error, partition, agent_radius, agent_height, "
                              "agent_max_climb, agent_max_slope, agent_types, links).",
                              k);
}

pf_status pf_nav_upload_from_obj(const char *buf, size_t len, const pf_kv *kv, size_t nkv,
                                 const pf_nav_limits *nlim, pf_nav_upload *out, pf_proto_error *e) {
    pf_status st = PF_OK;
    pf_nav_error ne;
    memset(out, 0, sizeof *out);
    out->config = pf_nav_default_config();
    /* Settings first: links and agent types default to the agent's. */
    for (int pass = 0; pass < 2 && !st; pass++)
        for (size_t i = 0; i < nkv && !st; i++) {
            const char *k = kv[i].key, *v = kv[i].value;
            const bool late = strcmp(k, "links") == 0 || strcmp(k, "agent_types") == 0;
            if (late != (pass == 1)) continue;
            for (size_t j = 0; j < i; j++)
                if (strcmp(kv[j].key, k) == 0) {
                    st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                            "Parameter '%.40s' appears twice.", k);
                    break;
                }
            if (!st) st = q_upload_param(k, v, nlim, out, e);
        }
    if (!st && !(out->obj_text = malloc(len + 1)))
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (st) {
        pf_nav_upload_free(out);
        return st;
    }
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
    in.agent_types = u->agent_types;
    in.nagent_types = u->nagent_types;
    in.links = u->links;
    in.nlinks = u->nlinks;
    return in;
}

/* PATCH */

static const char *const patch_members[] = {"obstacles",    "remove_obstacles", "areas", "links",
                                            "remove_links", "link_states",      NULL};

void pf_nav_patch_free(pf_nav_patch *p) {
    if (!p) return;
    free(p->put);
    for (size_t i = 0; i < p->nremove; i++) free(p->remove[i]);
    free(p->remove);
    for (size_t i = 0; i < p->nareas; i++) free((char *)p->areas[i].name);
    free(p->areas);
    free(p->put_links);
    for (size_t i = 0; i < p->nremove_links; i++) free(p->remove_links[i]);
    free(p->remove_links);
    for (size_t i = 0; i < p->nlink_states; i++) free((char *)p->link_states[i].id);
    free(p->link_states);
    memset(p, 0, sizeof *p);
}

/* An array of at most 65536 ids (names) into *out (strdup'd). */
static pf_status read_ids(const cJSON *it, const char *field, char ***out, size_t *nout,
                          pf_proto_error *e) {
    if (!cJSON_IsArray(it))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be an array of ids.", field);
    const size_t n = (size_t)cJSON_GetArraySize(it);
    if (n > 65536)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, field,
                                  "Field '%s' has more than 65536 ids.", field);
    if (!(*out = calloc(n ? n : 1, sizeof **out)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    size_t i = 0;
    for (const cJSON *c = it->child; c; c = c->next, i++) {
        char f[48];
        const char *id;
        pf_status st;
        snprintf(f, sizeof f, "%s[%zu]", field, i);
        if ((st = read_name(c, f, &id, e))) return st;
        if (!((*out)[i] = strdup(id)))
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        *nout = i + 1;
    }
    return PF_OK;
}

static const char *const link_state_members[] = {"id", "enabled", NULL};

/* "link_states": [{"id","enabled"}, ...]. */
static pf_status read_link_states(const cJSON *it, pf_nav_patch *out, pf_proto_error *e) {
    if (!cJSON_IsArray(it))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "link_states",
                                  "Field 'link_states' must be an array.");
    const size_t n = (size_t)cJSON_GetArraySize(it);
    if (n > 65536)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "link_states",
                                  "Field 'link_states' has more than 65536 entries.");
    if (!(out->link_states = calloc(n ? n : 1, sizeof *out->link_states)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    size_t i = 0;
    for (const cJSON *c = it->child; c; c = c->next, i++) {
        char f[48], g[48];
        const char *id;
        pf_status st;
        snprintf(f, sizeof f, "link_states[%zu]", i);
        snprintf(g, sizeof g, "link_states[%zu].", i);
        if ((st = pf_jsonr_object(c, f, e)) ||
            (st = pf_jsonr_check_members(c, link_state_members, g, e)))
            return st;
        snprintf(g, sizeof g, "link_states[%zu].id", i);
        if ((st = read_name(cJSON_GetObjectItemCaseSensitive(c, "id"), g, &id, e))) return st;
        if (!(out->link_states[i].id = strdup(id)))
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        out->nlink_states = i + 1;
        snprintf(g, sizeof g, "link_states[%zu].enabled", i);
        const cJSON *en = cJSON_GetObjectItemCaseSensitive(c, "enabled");
        if (!en)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, g,
                                      "Field '%s' is required (true or false).", g);
        if ((st = pf_jsonr_bool(en, g, &out->link_states[i].enabled, e))) return st;
    }
    return PF_OK;
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
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "remove_obstacles")) &&
        (st = read_ids(it, "remove_obstacles", &out->remove, &out->nremove, e)))
        goto out_free;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "links")) &&
        (st = read_links(it, "links", 65536, -1.0f, &out->put_links, &out->nput_links, e)))
        goto out_free;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "remove_links")) &&
        (st = read_ids(it, "remove_links", &out->remove_links, &out->nremove_links, e)))
        goto out_free;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "link_states")) &&
        (st = read_link_states(it, out, e)))
        goto out_free;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "areas")) &&
        (st = read_area_changes(it, "areas", &out->areas, &out->nareas, e)))
        goto out_free;
    if (!out->nput && !out->nremove && !out->nareas && !out->nput_links && !out->nremove_links &&
        !out->nlink_states) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, NULL,
                                "A navmesh PATCH changes at least one obstacle, area or link "
                                "('obstacles', 'remove_obstacles', 'areas', 'links', "
                                "'remove_links', 'link_states').");
        goto out_free;
    }
    cJSON_Delete(root);
    return PF_OK;
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
    c.put_links = p->put_links;
    c.nput_links = p->nput_links;
    c.remove_links = (const char *const *)p->remove_links;
    c.nremove_links = p->nremove_links;
    c.link_states = p->link_states;
    c.nlink_states = p->nlink_states;
    return c;
}

/* Paths */

void pf_nav_write_point(pf_jsonw *w, const float *p) { pf_jsonw_point3(w, p); }
