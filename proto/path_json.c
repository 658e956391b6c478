/* path_json.c -- see path_json.h. */
#include "path_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pf_path_request pf_path_request_default(void) {
    pf_path_request r;
    memset(&r, 0, sizeof(r));
    r.algorithm = PF_ALGO_ASTAR;
    r.heuristic = PF_H_DEFAULT;
    r.weight = PF_PATH_DEFAULT_WEIGHT;
    r.use_cache = true;
    return r;
}

static pf_status algo_from(const char *name, const char *field, pf_path_request *r,
                           pf_proto_error *e) {
    pf_algorithm a;
    if (!pf_algorithm_from_name(name, &a) || a == PF_ALGO_DSTAR)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "Unknown algorithm '%.40s'; use bfs, dijkstra, astar, weighted, "
                                  "greedy, jps or hpa.",
                                  name);
    r->algorithm = a;
    r->has_algorithm = true;
    return PF_OK;
}

static pf_status heuristic_from(const char *name, const char *field, pf_path_request *r,
                                pf_proto_error *e) {
    if (!pf_heuristic_from_name(name, &r->heuristic))
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "Unknown heuristic '%.40s'; use default, octile, manhattan, "
                                  "chebyshev or euclidean.",
                                  name);
    return PF_OK;
}

static const char *const request_members[] = {"start",        "goal",   "algorithm", "weight",
                                              "heuristic",    "smooth", "debug",     "deadline_ms",
                                              "max_expanded", "cache",  NULL};

pf_status pf_path_request_from_json(const cJSON *obj, const char *prefix, bool allow_deadline,
                                    pf_path_request *out, pf_proto_error *e) {
    pf_path_request r = pf_path_request_default();
    char f[96];
    const cJSON *it;
    const char *s;
    int64_t iv;
    pf_status st;

    if (!prefix) prefix = "";
    if (!obj || !cJSON_IsObject(obj)) {
        if (*prefix) {
            snprintf(f, sizeof(f), "%.*s", (int)(strlen(prefix) - 1), prefix);
            return pf_jsonr_object(obj, f, e);
        }
        return pf_jsonr_object(obj, NULL, e);
    }
    if ((st = pf_jsonr_check_members(obj, request_members, prefix, e))) return st;
#define FIELD(name) (snprintf(f, sizeof(f), "%s%s", prefix, name), f)
    it = cJSON_GetObjectItemCaseSensitive(obj, "start");
    if (!it)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD("start"),
                                  "Field '%s' is required.", f);
    if ((st = pf_jsonr_point(it, FIELD("start"), &r.start, e))) return st;
    it = cJSON_GetObjectItemCaseSensitive(obj, "goal");
    if (!it)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD("goal"),
                                  "Field '%s' is required.", f);
    if ((st = pf_jsonr_point(it, FIELD("goal"), &r.goal, e))) return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "algorithm"))) {
        if ((st = pf_jsonr_string(it, FIELD("algorithm"), &s, e))) return st;
        if ((st = algo_from(s, f, &r, e))) return st;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "weight")) &&
        (st = pf_jsonr_number(it, FIELD("weight"), 1.0, 1e6, &r.weight, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "heuristic"))) {
        if ((st = pf_jsonr_string(it, FIELD("heuristic"), &s, e))) return st;
        if ((st = heuristic_from(s, f, &r, e))) return st;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "smooth")) &&
        (st = pf_jsonr_bool(it, FIELD("smooth"), &r.smooth, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "debug")) &&
        (st = pf_jsonr_bool(it, FIELD("debug"), &r.debug, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "cache")) &&
        (st = pf_jsonr_bool(it, FIELD("cache"), &r.use_cache, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "deadline_ms"))) {
        if (!allow_deadline)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD("deadline_ms"),
                                      "Field '%s' is not allowed here: a batch has one deadline, "
                                      "set it next to \"queries\".",
                                      f);
        if ((st = pf_jsonr_int(it, FIELD("deadline_ms"), 1, PF_PATH_MAX_DEADLINE_MS, &r.deadline_ms,
                               e)))
            return st;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "max_expanded"))) {
        if ((st = pf_jsonr_int(it, FIELD("max_expanded"), 0, INT64_C(1) << 53, &iv, e))) return st;
        r.max_expanded = (uint64_t)iv;
    }
#undef FIELD
    *out = r;
    return PF_OK;
}

pf_status pf_path_request_parse(const char *buf, size_t len, pf_path_request *out,
                                pf_proto_error *e) {
    cJSON *root;
    pf_status st = pf_jsonr_parse(buf, len, &root, e);
    if (st) return st;
    st = pf_path_request_from_json(root, "", true, out, e);
    cJSON_Delete(root);
    return st;
}

/* Query-string values. */

static pf_status q_int(const char *v, const char *field, int64_t min, int64_t max, int64_t *out,
                       pf_proto_error *e) {
    char *end;
    long long x;
    if (!v || !*v) goto bad;
    errno = 0;
    x = strtoll(v, &end, 10);
    if (*end || errno == ERANGE) goto bad;
    if (x < min || x > max)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "Parameter '%s' must be between %lld and %lld.", field,
                                  (long long)min, (long long)max);
    *out = x;
    return PF_OK;
bad:
    return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                              "Parameter '%s' must be an integer.", field);
}

static pf_status q_bool(const char *v, const char *field, bool *out, pf_proto_error *e) {
    if (!v || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
        *out = true;
    else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
        *out = false;
    else
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Parameter '%s' must be true or false.", field);
    return PF_OK;
}

static pf_status q_point(const char *v, const char *field, pf_point *out, pf_proto_error *e) {
    char *end;
    long long x, y;
    if (!v || !*v) goto bad;
    errno = 0;
    x = strtoll(v, &end, 10);
    if (end == v || *end != ',' || errno) goto bad;
    v = end + 1;
    y = strtoll(v, &end, 10);
    if (end == v || *end || errno) goto bad;
    if (x < INT32_MIN || x > INT32_MAX || y < INT32_MIN || y > INT32_MAX)
        return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, field,
                                  "Parameter '%s' is far outside any map.", field);
    out->x = (int32_t)x;
    out->y = (int32_t)y;
    return PF_OK;
bad:
    return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                              "Parameter '%s' must be a point written x,y.", field);
}

pf_status pf_path_request_from_query(const pf_kv *kv, size_t n, pf_path_request *out,
                                     pf_proto_error *e) {
    pf_path_request r = pf_path_request_default();
    bool have_start = false, have_goal = false;
    pf_status st = PF_OK;
    int64_t iv;

    for (size_t i = 0; i < n && !st; i++) {
        const char *k = kv[i].key, *v = kv[i].value;
        for (size_t j = 0; j < i; j++)
            if (strcmp(kv[j].key, k) == 0)
                return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                          "Parameter '%.40s' appears twice.", k);
        if (strcmp(k, "start") == 0) {
            st = q_point(v, k, &r.start, e);
            have_start = true;
        } else if (strcmp(k, "goal") == 0) {
            st = q_point(v, k, &r.goal, e);
            have_goal = true;
        } else if (strcmp(k, "algorithm") == 0) {
            st = algo_from(v ? v : "", k, &r, e);
        } else if (strcmp(k, "heuristic") == 0) {
            st = heuristic_from(v ? v : "", k, &r, e);
        } else if (strcmp(k, "weight") == 0) {
            char *end;
            double w = v && *v ? strtod(v, &end) : NAN;
            if (!v || !*v || *end || !isfinite(w))
                st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                        "Parameter 'weight' must be a number.");
            else if (w < 1.0 || w > 1e6)
                st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, k,
                                        "Parameter 'weight' must be between 1 and 1e+06.");
            else
                r.weight = w;
        } else if (strcmp(k, "smooth") == 0) {
            st = q_bool(v, k, &r.smooth, e);
        } else if (strcmp(k, "debug") == 0) {
            st = q_bool(v, k, &r.debug, e);
        } else if (strcmp(k, "cache") == 0) {
            st = q_bool(v, k, &r.use_cache, e);
        } else if (strcmp(k, "deadline_ms") == 0) {
            st = q_int(v, k, 1, PF_PATH_MAX_DEADLINE_MS, &r.deadline_ms, e);
        } else if (strcmp(k, "max_expanded") == 0) {
            st = q_int(v, k, 0, INT64_C(1) << 53, &iv, e);
            if (!st) r.max_expanded = (uint64_t)iv;
        } else {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                    "Unknown parameter '%.40s'.", k);
        }
    }
    if (st) return st;
    if (!have_start || !have_goal)
        return pf_proto_error_set(
            e, PF_EPARSE, PF_ERR_INVALID_REQUEST, have_start ? "goal" : "start",
            "Parameter '%s' is required (written x,y).", have_start ? "goal" : "start");
    *out = r;
    return PF_OK;
}

static const char *const batch_members[] = {"queries", "deadline_ms", NULL};

pf_status pf_path_batch_parse(const char *buf, size_t len, size_t max_queries,
                              pf_path_request **out, size_t *n, int64_t *deadline_ms,
                              pf_proto_error *e) {
    cJSON *root, *qs, *it;
    pf_path_request *reqs = NULL;
    size_t count = 0, i = 0;
    char prefix[32];
    pf_status st = pf_jsonr_parse(buf, len, &root, e);

    *out = NULL;
    *n = 0;
    *deadline_ms = 0;
    if (st) return st;
    if ((st = pf_jsonr_object(root, NULL, e))) goto out_free_root;
    if ((st = pf_jsonr_check_members(root, batch_members, "", e))) goto out_free_root;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "deadline_ms")) &&
        (st = pf_jsonr_int(it, "deadline_ms", 1, PF_PATH_MAX_DEADLINE_MS, deadline_ms, e)))
        goto out_free_root;
    qs = cJSON_GetObjectItemCaseSensitive(root, "queries");
    if (!qs || !cJSON_IsArray(qs)) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "queries",
                                "Field 'queries' must be an array of path requests.");
        goto out_free_root;
    }
    for (it = qs->child; it; it = it->next) count++;
    if (count == 0) {
        st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "queries",
                                "Field 'queries' must hold at least one request.");
        goto out_free_root;
    }
    if (count > max_queries) {
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "queries",
                                "A batch holds at most %zu queries; this one has %zu.", max_queries,
                                count);
        goto out_free_root;
    }
    reqs = calloc(count, sizeof(*reqs));
    if (!reqs) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_free_root;
    }
    for (it = qs->child; it; it = it->next, i++) {
        snprintf(prefix, sizeof(prefix), "queries[%zu].", i);
        if ((st = pf_path_request_from_json(it, prefix, false, &reqs[i], e))) goto out_free_reqs;
    }
    *out = reqs;
    *n = count;
    cJSON_Delete(root);
    return PF_OK;

out_free_reqs:
    free(reqs);
out_free_root:
    cJSON_Delete(root);
    return st;
}

void pf_path_write_answer(pf_jsonw *w, const pf_path_answer *a) {
    pf_jsonw_obj_begin(w);
    pf_path_write_members(w, a);
    pf_path_write_stats(w, a);
    pf_jsonw_obj_end(w);
}

void pf_path_write_members(pf_jsonw *w, const pf_path_answer *a) {
    bool found = a->status == PF_OK;
    pf_jsonw_kbool(w, "found", found);
    if (found)
        pf_jsonw_kdouble(w, "cost", a->cost);
    else
        pf_jsonw_kstr(w, "reason", a->status == PF_EBUDGET ? "node_budget" : "unreachable");
    pf_jsonw_key(w, "path");
    pf_jsonw_arr_begin(w);
    if (found)
        for (size_t i = 0; i < a->path_len; i++) pf_jsonw_point(w, a->path[i].x, a->path[i].y);
    pf_jsonw_arr_end(w);
    pf_jsonw_kstr(w, "algorithm", pf_algorithm_name(a->algorithm));
    pf_jsonw_kuint(w, "map_version", a->map_version);
}

void pf_path_write_stats(pf_jsonw *w, const pf_path_answer *a) {
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "expanded", a->expanded);
    pf_jsonw_kuint(w, "time_us", a->time_us);
    pf_jsonw_kbool(w, "cached", a->cached);
    pf_jsonw_obj_end(w);
    if (a->debug) {
        int32_t mw = a->map_width > 0 ? a->map_width : 1;
        pf_jsonw_key(w, "expanded_cells");
        pf_jsonw_arr_begin(w);
        for (size_t i = 0; i < a->expanded_cells_len; i++)
            pf_jsonw_point(w, a->expanded_cells[i] % mw, a->expanded_cells[i] / mw);
        pf_jsonw_arr_end(w);
        if (a->abstract_path_len) {
            pf_jsonw_key(w, "abstract_path");
            pf_jsonw_arr_begin(w);
            for (size_t i = 0; i < a->abstract_path_len; i++)
                pf_jsonw_point(w, a->abstract_path[i].x, a->abstract_path[i].y);
            pf_jsonw_arr_end(w);
        }
    }
}
