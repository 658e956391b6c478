/* session_json.c -- see session_json.h. */
#include "session_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clearance.h"
#include "jsonr.h"
#include "nav_json.h"

#define FIELD(name) (snprintf(f, sizeof(f), "%s%s", prefix, name), f)

static const char *const create_members[] = {"start", "goal", "ttl_s", "agent_size", NULL};

/* A create object; prefix "" or "create." names its fields. */
static pf_status read_create(const cJSON *root, const char *prefix, int64_t max_ttl_s,
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
        it = cJSON_GetObjectItemCaseSensitive(root, name);
        if (!it)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD(name),
                                      "Field '%s' is required.", f);
        if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 3) {
            if (i == 1 && !out->nav)
                return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD(name),
                                          "Fields 'start' and 'goal' must be points of one "
                                          "form: [x, y] (grid) or [x, y, z] (navmesh).");
            if ((st = pf_nav_read_point(it, FIELD(name), i ? out->goal3 : out->start3, e)))
                return st;
            out->nav = true;
            continue;
        }
        if (i == 1 && out->nav)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD(name),
                                      "Fields 'start' and 'goal' must be points of one form: "
                                      "[x, y] (grid) or [x, y, z] (navmesh).");
        if ((st = pf_jsonr_point(it, FIELD(name), i ? &out->goal : &out->start, e))) return st;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "ttl_s")) &&
        (st = pf_jsonr_int(it, FIELD("ttl_s"), 1, max_ttl_s, &out->ttl_s, e)))
        return st;
    out->agent_size = 1;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "agent_size"))) {
        int64_t v;
        if (out->nav)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, FIELD("agent_size"),
                                      "Field '%s' is for grid sessions: a navmesh session's "
                                      "agent is the one its map was built for (agent.radius, "
                                      "agent.height at upload).",
                                      f);
        if ((st = pf_jsonr_int(it, FIELD("agent_size"), 1, PF_AGENT_SIZE_MAX, &v, e))) return st;
        out->agent_size = (int32_t)v;
    }
    return PF_OK;
}

pf_status pf_session_request_parse(const char *buf, size_t len, int64_t max_ttl_s,
                                   pf_session_request *out, pf_proto_error *e) {
    cJSON *root;
    pf_status st = pf_jsonr_parse(buf, len, &root, e);
    memset(out, 0, sizeof(*out));
    if (st) return st;
    st = read_create(root, "", max_ttl_s, out, e);
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

static const char *const update_members[] = {"position", "goal", "cells", "doors", NULL};
static const char *const patch_members[] = {"cells", "doors", NULL};

/* Reads one update object; prefix is "" or "lines[i].". On error u may hold
 * allocations (the caller frees). */
static pf_status read_update(const cJSON *obj, const char *prefix, bool patch, pf_update *u,
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
        if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 3) {
            if ((st = pf_nav_read_point(it, FIELD("position"), u->position3, e))) return st;
            u->position_nav = true;
        } else if ((st = pf_jsonr_point(it, FIELD("position"), &u->position, e))) {
            return st;
        }
        u->has_position = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "goal"))) {
        if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 3) {
            if ((st = pf_nav_read_point(it, FIELD("goal"), u->goal3, e))) return st;
            u->goal_nav = true;
        } else if ((st = pf_jsonr_point(it, FIELD("goal"), &u->goal, e))) {
            return st;
        }
        u->has_goal = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "cells")) &&
        (st = read_cells(it, prefix, u, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "doors")) &&
        (st = read_doors(it, prefix, u, e)))
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
    st = read_update(root, prefix, patch, u, e);
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
                      a->status == PF_EBUDGET    ? "node_budget"
                      : a->status == PF_EBLOCKED ? "blocked"
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

/* The multiplexed stream */

static const char *const mux_members[] = {"op", "map", "session", "tag", "update", "create", NULL};
static const char *const mux_ops[] = {"update", "get", "create", "delete"};

const char *pf_mux_op_name(pf_mux_op op) {
    return (unsigned)op < sizeof(mux_ops) / sizeof(mux_ops[0]) ? mux_ops[op] : "update";
}

void pf_mux_message_free(pf_mux_message *m) {
    if (!m) return;
    pf_update_list_free(&m->update);
    memset(m, 0, sizeof(*m));
}

/* A required or optional id string of 1..PF_MUX_ID_MAX bytes. */
static pf_status read_id(const cJSON *root, const char *name, bool required, char *out,
                         pf_proto_error *e) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, name);
    const char *s;
    pf_status st;
    if (!it) {
        if (!required) return PF_OK;
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                  "Field '%s' is required.", name);
    }
    if ((st = pf_jsonr_string(it, name, &s, e))) return st;
    if (!*s || strlen(s) > PF_MUX_ID_MAX)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                  "Field '%s' must be an id of 1 to %d characters.", name,
                                  PF_MUX_ID_MAX);
    memcpy(out, s, strlen(s) + 1);
    return PF_OK;
}

pf_status pf_mux_message_parse(const char *buf, size_t len, int64_t max_ttl_s, pf_mux_message *out,
                               pf_proto_error *e) {
    pf_mux_message m;
    cJSON *root;
    const cJSON *it, *upd, *cre;
    const char *s;
    pf_status st;

    memset(out, 0, sizeof(*out));
    memset(&m, 0, sizeof(m));
    if ((st = pf_jsonr_parse(buf, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, NULL, e))) goto out;
    if ((st = pf_jsonr_check_members(root, mux_members, "", e))) goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "op"))) {
        size_t k = 0;
        if ((st = pf_jsonr_string(it, "op", &s, e))) goto out;
        while (k < sizeof(mux_ops) / sizeof(mux_ops[0]) && strcmp(s, mux_ops[k]) != 0) k++;
        if (k == sizeof(mux_ops) / sizeof(mux_ops[0])) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "op",
                                    "Unknown op '%.40s'; use update, get, create or delete.", s);
            goto out;
        }
        m.op = (pf_mux_op)k;
    }
    if ((st = read_id(root, "map", true, m.map_id, e))) goto out;
    if ((st = read_id(root, "session", m.op != PF_MUX_CREATE, m.session_id, e))) goto out;
    if (m.op == PF_MUX_CREATE && m.session_id[0]) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "session",
                                "A create names no session: the answer gives its id.");
        goto out;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "tag"))) {
        if (cJSON_IsString(it) && it->valuestring && strlen(it->valuestring) <= PF_MUX_TAG_MAX) {
            m.tag_kind = 1;
            memcpy(m.tag, it->valuestring, strlen(it->valuestring) + 1);
        } else if (cJSON_IsNumber(it) &&
                   pf_jsonr_int(it, "tag", -(INT64_C(1) << 53), INT64_C(1) << 53, &m.tag_int,
                                NULL) == PF_OK) {
            m.tag_kind = 2;
        } else {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "tag",
                                    "Field 'tag' must be a string of at most %d bytes or an "
                                    "integer.",
                                    PF_MUX_TAG_MAX);
            goto out;
        }
    }
    upd = cJSON_GetObjectItemCaseSensitive(root, "update");
    cre = cJSON_GetObjectItemCaseSensitive(root, "create");
    if ((upd && m.op != PF_MUX_UPDATE) || (cre && m.op != PF_MUX_CREATE)) {
        const char *f = upd && m.op != PF_MUX_UPDATE ? "update" : "create";
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                "Field '%s' does not go with op '%s'.", f, pf_mux_op_name(m.op));
        goto out;
    }
    if (m.op == PF_MUX_UPDATE) {
        if (!upd) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "update",
                                    "Field 'update' is required with op update.");
            goto out;
        }
        m.update.items = calloc(1, sizeof(*m.update.items));
        if (!m.update.items) {
            st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            goto out;
        }
        m.update.n = 1;
        if (!cJSON_IsObject(upd)) {
            st = pf_jsonr_object(upd, "update", e);
            goto out;
        }
        if ((st = read_update(upd, "update.", false, &m.update.items[0], e))) goto out;
    }
    if (m.op == PF_MUX_CREATE) {
        if (!cre) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "create",
                                    "Field 'create' is required with op create.");
            goto out;
        }
        if ((st = read_create(cre, "create.", max_ttl_s, &m.create, e))) goto out;
    }
    *out = m;
    cJSON_Delete(root);
    return PF_OK;
out:
    pf_mux_message_free(&m);
    cJSON_Delete(root);
    return st;
}

void pf_mux_write_head(pf_jsonw *w, const pf_mux_message *m, const char *session_id) {
    pf_jsonw_kstr(w, "op", pf_mux_op_name(m->op));
    pf_jsonw_kstr(w, "map", m->map_id);
    pf_jsonw_key(w, "session");
    if (session_id && *session_id)
        pf_jsonw_str(w, session_id);
    else if (m->session_id[0])
        pf_jsonw_str(w, m->session_id);
    else
        pf_jsonw_null(w);
    if (m->tag_kind == 1) pf_jsonw_kstr(w, "tag", m->tag);
    if (m->tag_kind == 2) pf_jsonw_kint(w, "tag", m->tag_int);
}
