/* session_json.c -- see session_json.h. */
#include "session_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clearance.h"
#include "jsonr.h"
#include "nav_json.h"

#define FIELD(name) (snprintf(f, sizeof(f), "%s%s", prefix, name), f)

pf_status pf_place_read(const cJSON *it, const char *field, pf_place *out, pf_proto_error *e) {
    pf_point p;
    pf_status st;
    memset(out, 0, sizeof(*out));
    if (cJSON_IsString(it)) {
        size_t n = strlen(it->valuestring);
        if (n == 0 || n >= sizeof(out->node))
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                      "Field '%s' is a node id of 1 to %zu bytes, or a point.",
                                      field, sizeof(out->node) - 1);
        memcpy(out->node, it->valuestring, n + 1);
        out->dims = 1;
        return PF_OK;
    }
    if (cJSON_IsNumber(it)) {
        int64_t v;
        if ((st = pf_jsonr_int(it, field, -(INT64_C(1) << 53), INT64_C(1) << 53, &v, e))) return st;
        snprintf(out->node, sizeof(out->node), "%" PRId64, v);
        out->node_int = true;
        out->dims = 1;
        return PF_OK;
    }
    if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 3) {
        if ((st = pf_jsonr_point3(it, field, out->xyz, e))) return st;
        out->dims = 3;
        return PF_OK;
    }
    if ((st = pf_jsonr_point(it, field, &p, e))) return st;
    *out = pf_place_cell(p);
    return PF_OK;
}

void pf_place_write(pf_jsonw *w, const pf_place *p) {
    if (p->dims == 1 && p->node_int)
        pf_jsonw_int(w, strtoll(p->node, NULL, 10));
    else if (p->dims == 1)
        pf_jsonw_str(w, p->node);
    else if (p->dims == 3)
        pf_jsonw_point3(w, p->xyz);
    else
        pf_jsonw_point(w, p->x, p->y);
}

static const char *const create_members[] = {"start",        "goal",        "ttl_s",
                                             "agent_size",   "agent_type",  "replan",
                                             "max_expanded", "deadline_ms", NULL};
static const char *const replan_members[] = {"min_interval_ms", "min_updates", "goal_threshold",
                                             "hysteresis", NULL};

void pf_replan_fields_apply(const pf_replan_fields *f, pf_replan_policy *p) {
    if (f->has_min_interval_ms) p->min_interval_ms = f->v.min_interval_ms;
    if (f->has_min_updates) p->min_steps = f->v.min_steps;
    if (f->has_goal_threshold) p->goal_threshold = f->v.goal_threshold;
    if (f->has_hysteresis) p->hysteresis = f->v.hysteresis;
}

pf_status pf_replan_fields_read(const cJSON *it, const char *prefix, pf_replan_fields *out,
                                pf_proto_error *e) {
    char f[128], p[112];
    const cJSON *m;
    int64_t v;
    pf_status st;
    memset(out, 0, sizeof(*out));
    snprintf(p, sizeof(p), "%sreplan", prefix);
    if ((st = pf_jsonr_object(it, p, e))) return st;
    snprintf(p, sizeof(p), "%sreplan.", prefix);
    if ((st = pf_jsonr_check_members(it, replan_members, p, e))) return st;
#define RF(name) (snprintf(f, sizeof(f), "%s%s", p, name), f)
    if ((m = cJSON_GetObjectItemCaseSensitive(it, "min_interval_ms"))) {
        if ((st = pf_jsonr_int(m, RF("min_interval_ms"), 0, PF_REPLAN_INTERVAL_MAX_MS, &v, e)))
            return st;
        out->v.min_interval_ms = (uint32_t)v;
        out->has_min_interval_ms = true;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(it, "min_updates"))) {
        if ((st = pf_jsonr_int(m, RF("min_updates"), 0, PF_REPLAN_STEPS_MAX, &v, e))) return st;
        out->v.min_steps = (uint32_t)v;
        out->has_min_updates = true;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(it, "goal_threshold"))) {
        if ((st = pf_jsonr_number(m, RF("goal_threshold"), 0, PF_REPLAN_THRESHOLD_MAX,
                                  &out->v.goal_threshold, e)))
            return st;
        out->has_goal_threshold = true;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(it, "hysteresis"))) {
        if ((st = pf_jsonr_number(m, RF("hysteresis"), 0, PF_REPLAN_HYSTERESIS_MAX,
                                  &out->v.hysteresis, e)))
            return st;
        out->has_hysteresis = true;
    }
#undef RF
    return PF_OK;
}

static void write_policy(pf_jsonw *w, const pf_replan_policy *p) {
    pf_jsonw_key(w, "policy");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "min_interval_ms", p->min_interval_ms);
    pf_jsonw_kuint(w, "min_updates", p->min_steps);
    pf_jsonw_kdouble(w, "goal_threshold", p->goal_threshold);
    pf_jsonw_kdouble(w, "hysteresis", p->hysteresis);
    pf_jsonw_obj_end(w);
}

void pf_replan_answer_write(pf_jsonw *w, const pf_replan_answer *r) {
    pf_jsonw_key(w, "replan");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "reason", r->reason);
    pf_jsonw_kbool(w, "replanned", r->replanned);
    pf_jsonw_kstr(w, "route", r->route ? r->route : "none");
    pf_jsonw_kbool(w, "flip", r->flip);
    write_policy(w, &r->policy);
    pf_jsonw_obj_end(w);
}

void pf_session_write_short(pf_jsonw *w, const pf_session_short *a) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "session_id", a->session_id);
    pf_jsonw_kstr(w, "map_id", a->map_id);
    pf_jsonw_kbool(w, "unchanged", true);
    pf_jsonw_kbool(w, "found", a->found);
    pf_jsonw_kdouble(w, "cost", a->found ? a->cost : 0.0);
    pf_jsonw_key(w, "position");
    pf_place_write(w, &a->position);
    pf_jsonw_key(w, "goal");
    pf_place_write(w, &a->goal);
    pf_jsonw_kuint(w, "map_version", a->map_version);
    pf_jsonw_kint(w, "ttl_s", a->ttl_s);
    if (a->replan) pf_replan_answer_write(w, a->replan);
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "expanded", 0);
    pf_jsonw_kuint(w, "time_us", a->time_us);
    pf_jsonw_kuint(w, "updates", a->updates);
    pf_jsonw_kstr(w, "rebase", a->rebase ? a->rebase : "none");
    pf_jsonw_kuint(w, "memory_bytes", a->memory_bytes);
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
}

pf_status pf_session_request_read(const cJSON *root, const char *prefix, int64_t max_ttl_s,
                                  pf_session_request *out, pf_proto_error *e) {
    char f[64];
    const cJSON *it;
    pf_status st;
    memset(out, 0, sizeof(*out));
    if (*prefix) {
        if ((st = pf_jsonr_object(root, "create", e))) return st;
    } else if ((st = pf_jsonr_object(root, NULL, e))) {
        return st;
    }
    if ((st = pf_jsonr_check_members(root, create_members, prefix, e))) return st;
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "goal" : "start";
        pf_place *pt = i ? &out->goal : &out->start;
        it = cJSON_GetObjectItemCaseSensitive(root, name);
        if (!it)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD(name),
                                      "Field '%s' is required.", f);
        if (i == 1 &&
            ((cJSON_IsArray(it) && cJSON_GetArraySize(it) == 3) != (out->start.dims == 3) ||
             (cJSON_IsString(it) || cJSON_IsNumber(it)) != (out->start.dims == 1)))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD(name),
                                      "Fields 'start' and 'goal' must be of one form: points "
                                      "[x, y] (grid) or [x, y, z] (navmesh), or node ids (graph).");
        if ((st = pf_place_read(it, FIELD(name), pt, e))) return st;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "ttl_s")) &&
        (st = pf_jsonr_int(it, FIELD("ttl_s"), 1, max_ttl_s, &out->ttl_s, e)))
        return st;
    out->agent_size = 1;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "agent_size"))) {
        int64_t v;
        if ((st = pf_jsonr_int(it, FIELD("agent_size"), 1, PF_AGENT_SIZE_MAX, &v, e))) return st;
        out->agent_size = (int32_t)v;
        out->has_agent_size = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "agent_type"))) {
        const char *s;
        if ((st = pf_jsonr_string(it, FIELD("agent_type"), &s, e))) return st;
        if (strlen(s) >= sizeof(out->agent_type))
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, FIELD("agent_type"),
                                      "Field '%s' is an agent type id (at most 63 bytes).", f);
        snprintf(out->agent_type, sizeof(out->agent_type), "%s", s);
        out->has_agent_type = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "replan")) &&
        (st = pf_replan_fields_read(it, prefix, &out->replan, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "max_expanded"))) {
        int64_t v;
        if ((st = pf_jsonr_int(it, FIELD("max_expanded"), 0, INT64_C(1) << 53, &v, e))) return st;
        out->max_expanded = (uint64_t)v;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "deadline_ms")) &&
        (st = pf_jsonr_int(it, FIELD("deadline_ms"), 1, PF_PATH_MAX_DEADLINE_MS, &out->deadline_ms,
                           e)))
        return st;
    return PF_OK;
}

pf_status pf_session_request_parse(const char *buf, size_t len, int64_t max_ttl_s,
                                   pf_session_request *out, pf_proto_error *e) {
    cJSON *root;
    pf_status st = pf_jsonr_parse(buf, len, &root, e);
    memset(out, 0, sizeof(*out));
    if (st) return st;
    st = pf_session_request_read(root, "", max_ttl_s, out, e);
    cJSON_Delete(root);
    return st;
}

void pf_update_free(pf_update *u) {
    if (!u) return;
    free(u->cells);
    free(u->doors);
    memset(u, 0, sizeof(*u));
}

void pf_update_list_free(pf_update_list *l) {
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) pf_update_free(&l->items[i]);
    free(l->items);
    memset(l, 0, sizeof(*l));
}

const char *pf_update_prefix(const pf_update_list *l, size_t i, char *buf, size_t cap) {
    if (!l->ndjson) return "";
    snprintf(buf, cap, "lines[%zu].", l->items[i].line);
    return buf;
}

static const char *const cell_members[] = {"x", "y", "cost", "blocked", NULL};
static const char *const door_members[] = {"id", "open", NULL};

static pf_status read_cells(const cJSON *arr, const char *prefix, pf_update *u, pf_proto_error *e) {
    char f[128], p[112];
    size_t n = 0, i = 0;
    pf_status st;
    if (!cJSON_IsArray(arr))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD("cells"),
                                  "Field '%s' must be an array of {\"x\",\"y\",\"cost\"}.", f);
    for (const cJSON *c = arr->child; c; c = c->next) n++;
    if (n == 0) return PF_OK;
    u->cells = calloc(n, sizeof(*u->cells));
    if (!u->cells)
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        const cJSON *cost, *blocked;
        int64_t v;
        snprintf(p, sizeof(p), "%scells[%zu].", prefix, i);
        if (!cJSON_IsObject(c))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST,
                                      (snprintf(f, sizeof(f), "%scells[%zu]", prefix, i), f),
                                      "Field '%s' must be an object {\"x\",\"y\",\"cost\"}.", f);
        if ((st = pf_jsonr_check_members(c, cell_members, p, e))) return st;
#define CF(name) (snprintf(f, sizeof(f), "%s%s", p, name), f)
        if ((st = pf_jsonr_int(cJSON_GetObjectItemCaseSensitive(c, "x"), CF("x"), INT32_MIN,
                               INT32_MAX, &v, e)))
            return st;
        u->cells[i].p.x = (int32_t)v;
        if ((st = pf_jsonr_int(cJSON_GetObjectItemCaseSensitive(c, "y"), CF("y"), INT32_MIN,
                               INT32_MAX, &v, e)))
            return st;
        u->cells[i].p.y = (int32_t)v;
        cost = cJSON_GetObjectItemCaseSensitive(c, "cost");
        blocked = cJSON_GetObjectItemCaseSensitive(c, "blocked");
        if ((cost != NULL) == (blocked != NULL))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, CF("cost"),
                                      "A cell takes exactly one of 'cost' (0..255) or "
                                      "'blocked' (true/false): see '%s'.",
                                      f);
        if (cost) {
            if ((st = pf_jsonr_int(cost, CF("cost"), 0, 255, &v, e))) return st;
            u->cells[i].cost = (uint8_t)v;
        } else {
            bool b;
            if ((st = pf_jsonr_bool(blocked, CF("blocked"), &b, e))) return st;
            u->cells[i].cost = b ? 0 : 1;
        }
#undef CF
    }
    u->ncells = n;
    return PF_OK;
}

static pf_status read_doors(const cJSON *arr, const char *prefix, pf_update *u, pf_proto_error *e) {
    char f[128], p[112];
    size_t n = 0, i = 0;
    pf_status st;
    if (!cJSON_IsArray(arr))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD("doors"),
                                  "Field '%s' must be an array of {\"id\",\"open\"}.", f);
    for (const cJSON *c = arr->child; c; c = c->next) n++;
    if (n == 0) return PF_OK;
    u->doors = calloc(n, sizeof(*u->doors));
    if (!u->doors)
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        const cJSON *id, *open;
        const char *s;
        snprintf(p, sizeof(p), "%sdoors[%zu].", prefix, i);
        if (!cJSON_IsObject(c))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST,
                                      (snprintf(f, sizeof(f), "%sdoors[%zu]", prefix, i), f),
                                      "Field '%s' must be an object {\"id\",\"open\"}.", f);
        if ((st = pf_jsonr_check_members(c, door_members, p, e))) return st;
#define CF(name) (snprintf(f, sizeof(f), "%s%s", p, name), f)
        id = cJSON_GetObjectItemCaseSensitive(c, "id");
        open = cJSON_GetObjectItemCaseSensitive(c, "open");
        if (!id || !open)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, CF(id ? "open" : "id"),
                                      "Field '%s' is required.", f);
        if ((st = pf_jsonr_string(id, CF("id"), &s, e))) return st;
        if (strlen(s) == 0 || strlen(s) >= PF_DOOR_NAME_MAX)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Field '%s' must be a door name of 1 to %d bytes.", f,
                                      PF_DOOR_NAME_MAX - 1);
        memcpy(u->doors[i].id, s, strlen(s) + 1);
        if ((st = pf_jsonr_bool(open, CF("open"), &u->doors[i].open, e))) return st;
#undef CF
    }
    u->ndoors = n;
    return PF_OK;
}

static const char *const update_members[] = {"position", "goal", "cells", "doors", "replan", NULL};
static const char *const patch_members[] = {"cells", "doors", NULL};

pf_status pf_update_read(const cJSON *obj, const char *prefix, bool patch, pf_update *u,
                         pf_proto_error *e) {
    char f[128];
    const cJSON *it;
    pf_status st;
    if (!cJSON_IsObject(obj)) {
        if (*prefix) {
            snprintf(f, sizeof(f), "%.*s", (int)(strlen(prefix) - 1), prefix);
            return pf_jsonr_object(obj, f, e);
        }
        return pf_jsonr_object(obj, NULL, e);
    }
    if ((st = pf_jsonr_check_members(obj, patch ? patch_members : update_members, prefix, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "position"))) {
        if ((st = pf_place_read(it, FIELD("position"), &u->position, e))) return st;
        u->has_position = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "goal"))) {
        if ((st = pf_place_read(it, FIELD("goal"), &u->goal, e))) return st;
        u->has_goal = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "cells")) &&
        (st = read_cells(it, prefix, u, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "doors")) &&
        (st = read_doors(it, prefix, u, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "replan")) &&
        (st = pf_replan_fields_read(it, prefix, &u->replan, e)))
        return st;
    return PF_OK;
}

/* Parses buf[0..len) as one update into *u; prefix names it in errors. */
static pf_status parse_one(const char *buf, size_t len, const char *prefix, bool patch,
                           pf_update *u, pf_proto_error *e) {
    cJSON *root;
    pf_status st = pf_jsonr_parse(buf, len, &root, e);
    memset(u, 0, sizeof(*u));
    if (st) {
        if (*prefix) {
            /* Name the line: the byte offset is within it. A field found by
             * the parser (a string that is not valid UTF-8) goes under it. */
            char msg[sizeof(e->message)], line[40], field[sizeof(e->field)];
            snprintf(line, sizeof(line), "%.*s", (int)(strlen(prefix) - 1), prefix);
            memcpy(msg, e->message, sizeof(msg));
            pf_proto_error_nest(e, line);
            memcpy(field, e->field, sizeof(field));
            pf_proto_error_set(e, e->status, e->code, field, "%s: %s", line, msg);
        }
        return st;
    }
    st = pf_update_read(root, prefix, patch, u, e);
    cJSON_Delete(root);
    if (st) pf_update_free(u);
    return st;
}

static bool blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return false;
    return true;
}

pf_status pf_update_list_parse(const char *buf, size_t len, bool ndjson, size_t max_items,
                               pf_update_list *out, pf_proto_error *e) {
    size_t count = 0, cap, line = 0;
    const char *p = buf, *end = buf + len;
    char prefix[40];
    pf_status st = PF_OK;

    memset(out, 0, sizeof(*out));
    out->ndjson = ndjson;
    if (!ndjson) {
        out->items = calloc(1, sizeof(*out->items));
        if (!out->items)
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        if ((st = parse_one(buf, len, "", false, &out->items[0], e))) {
            pf_update_list_free(out);
            return st;
        }
        out->n = 1;
        return PF_OK;
    }
    /* Count the non-blank lines first: one allocation, and the limit is
     * checked before any parsing. */
    for (const char *q = buf; q < end;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        size_t n = nl ? (size_t)(nl - q) : (size_t)(end - q);
        if (!blank(q, n)) count++;
        q += n + (nl ? 1 : 0);
    }
    if (count == 0)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, NULL,
                                  "The NDJSON body holds no update: send one JSON object a line.");
    if (count > max_items)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, NULL,
                                  "The body holds %zu updates; at most %zu are accepted.", count,
                                  max_items);
    cap = count;
    out->items = calloc(cap, sizeof(*out->items));
    if (!out->items)
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (!blank(p, n)) {
            snprintf(prefix, sizeof(prefix), "lines[%zu].", line);
            if ((st = parse_one(p, n, prefix, false, &out->items[out->n], e))) {
                pf_update_list_free(out);
                return st;
            }
            out->items[out->n].line = line;
            out->n++;
        }
        p += n + (nl ? 1 : 0);
    }
    return PF_OK;
}

pf_status pf_map_patch_parse(const char *buf, size_t len, pf_update *out, pf_proto_error *e) {
    pf_status st = parse_one(buf, len, "", true, out, e);
    if (st) return st;
    if (out->ncells + out->ndoors == 0) {
        pf_update_free(out);
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, NULL,
                                  "A PATCH changes at least one cell or door.");
    }
    return PF_OK;
}

void pf_session_write_answer(pf_jsonw *w, const pf_session_answer *a) {
    bool found = a->status == PF_OK;
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "session_id", a->session_id);
    pf_jsonw_kstr(w, "map_id", a->map_id);
    pf_jsonw_kbool(w, "found", found);
    if (found)
        pf_jsonw_kdouble(w, "cost", a->cost);
    else
        pf_jsonw_kstr(w, "reason",
                      a->status == PF_EBUDGET     ? "node_budget"
                      : a->status == PF_ECANCELED ? "deadline"
                      : a->status == PF_EBLOCKED  ? "blocked"
                                                  : "unreachable");
    pf_jsonw_key(w, "path");
    pf_jsonw_arr_begin(w);
    if (found)
        for (size_t i = 0; i < a->path_len; i++) pf_jsonw_point(w, a->path[i].x, a->path[i].y);
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "position");
    pf_jsonw_point(w, a->position.x, a->position.y);
    pf_jsonw_key(w, "goal");
    pf_jsonw_point(w, a->goal.x, a->goal.y);
    pf_jsonw_kstr(w, "algorithm", "dstar");
    if (a->agent_size > 1) pf_jsonw_kint(w, "agent_size", a->agent_size);
    pf_jsonw_kuint(w, "map_version", a->map_version);
    pf_jsonw_kint(w, "ttl_s", a->ttl_s);
    if (a->replan) pf_replan_answer_write(w, a->replan);
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "expanded", a->expanded);
    pf_jsonw_kuint(w, "time_us", a->time_us);
    pf_jsonw_kuint(w, "updates", a->updates);
    pf_jsonw_kstr(w, "rebase", a->rebase ? a->rebase : "none");
    pf_jsonw_kuint(w, "memory_bytes", a->memory_bytes);
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
}

void pf_session_write_nav_answer(pf_jsonw *w, const pf_nav_session_answer *a) {
    const pf_nav_path *p = a->blocked ? NULL : a->path;
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "session_id", a->session_id);
    pf_jsonw_kstr(w, "map_id", a->map_id);
    pf_jsonw_kbool(w, "found", p && !p->partial);
    pf_jsonw_kbool(w, "partial", p && p->partial);
    if (!p || p->partial)
        pf_jsonw_kstr(w, "reason",
                      !p                ? "blocked"
                      : p->out_of_nodes ? "node_budget"
                                        : "unreachable");
    pf_jsonw_kdouble(w, "length", p ? round(p->length * 1e4) / 1e4 : 0.0);
    pf_jsonw_kdouble(w, "cost", p ? round(p->cost * 1e4) / 1e4 : 0.0);
    pf_jsonw_key(w, "path");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; p && i < p->npoints; i++) pf_nav_write_point(w, &p->points[3 * i]);
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "position");
    pf_nav_write_point(w, a->position);
    pf_jsonw_key(w, "goal");
    pf_nav_write_point(w, a->goal);
    pf_jsonw_kstr(w, "algorithm", a->algorithm);
    pf_jsonw_kuint(w, "polygons", p ? p->polygons : 0);
    pf_jsonw_kuint(w, "map_version", a->map_version);
    pf_jsonw_kint(w, "ttl_s", a->ttl_s);
    if (a->replan) pf_replan_answer_write(w, a->replan);
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "expanded", p ? p->expanded : 0);
    pf_jsonw_kuint(w, "time_us", a->time_us);
    pf_jsonw_kuint(w, "updates", a->updates);
    pf_jsonw_kstr(w, "rebase", a->rebase ? a->rebase : "none");
    pf_jsonw_kuint(w, "memory_bytes", a->memory_bytes);
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
}
