/* nav_path_json.c -- see nav_path_json.h: navmesh path requests (one, a
 * GET's query string, a batch) and the answer writers. */
#include "nav_path_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

#define MAX_COORD PF_JSONR_MAX_COORD

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

static const char *const path_members[] = {"start",      "goal",        "algorithm",
                                           "search_box", "deadline_ms", "cache",
                                           "agent_type", "corridor",    NULL};

/* The grid path request's many-unit fields a navmesh query does not take,
 * each with why: 422 unsupported naming the field (field is the name as
 * written, prefixed). NULL when name is not one of them. */
static const char *grid_only_reason(const char *name) {
    if (strcmp(name, "agent_size") == 0)
        return "a navmesh map has named agent types (agent and agent_types at upload): ask for "
               "one by its id in agent_type";
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
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "agent_type"))) {
        const char *id;
        snprintf(f, sizeof f, "%sagent_type", prefix);
        if ((st = pf_nav_read_name(it, f, &id, e))) return st;
        snprintf(r.agent_type, sizeof r.agent_type, "%s", id);
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
        } else if (strcmp(k, "agent_type") == 0) {
            if (!v || !pf_nav_name_valid(v))
                st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, k,
                                        "Parameter 'agent_type' is 1 to 63 characters of A-Z a-z "
                                        "0-9 _ . -");
            else
                snprintf(r.agent_type, sizeof r.agent_type, "%s", v);
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

void pf_nav_write_path_members(pf_jsonw *w, const pf_nav_path *p, pf_nav_algorithm algo,
                               const char *agent_type, uint64_t map_version) {
    pf_jsonw_kbool(w, "found", !p->partial);
    pf_jsonw_kbool(w, "partial", p->partial);
    if (p->partial) pf_jsonw_kstr(w, "reason", p->out_of_nodes ? "node_budget" : "unreachable");
    pf_jsonw_kfixed4(w, "length", p->length);
    pf_jsonw_kfixed4(w, "ground_length", p->ground_length);
    pf_jsonw_kfixed4(w, "cost", p->cost);
    pf_jsonw_key(w, "path");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < p->npoints; i++) pf_nav_write_point(w, &p->points[3 * i]);
    pf_jsonw_arr_end(w);
    pf_jsonw_kstr(w, "algorithm", pf_nav_algorithm_name(algo));
    pf_jsonw_kstr(w, "agent_type", agent_type && agent_type[0] ? agent_type : "default");
    pf_jsonw_kuint(w, "polygons", p->polygons);
    pf_jsonw_kbool(w, "exact", p->exact);
    if (p->exact) pf_jsonw_kstr(w, "exact_in", "ground_length");
    if (!p->exact && p->inexact) pf_jsonw_kstr(w, "inexact", p->inexact);
    pf_jsonw_kuint(w, "links", p->links);
    pf_jsonw_key(w, "snapped");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kfixed4(w, "start", (double)p->start_moved);
    pf_jsonw_kfixed4(w, "goal", (double)p->goal_moved);
    pf_jsonw_obj_end(w);
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
