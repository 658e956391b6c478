/* path_json.c -- see path_json.h. */
#include "path_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

pf_path_request pf_path_request_default(void) {
    pf_path_request r;
    memset(&r, 0, sizeof(r));
    r.algorithm = PF_ALGO_ASTAR;
    r.heuristic = PF_H_DEFAULT;
    r.weight = PF_PATH_DEFAULT_WEIGHT;
    r.use_cache = true;
    r.agent_size = 1;
    r.snap_radius = PF_PATH_DEFAULT_SNAP_RADIUS;
    return r;
}

void pf_path_request_clear(pf_path_request *r) {
    free(r->goals);
    r->goals = NULL;
    r->ngoals = 0;
}

void pf_path_batch_free(pf_path_request *reqs, size_t n) {
    if (!reqs) return;
    for (size_t i = 0; i < n; i++) pf_path_request_clear(&reqs[i]);
    free(reqs);
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
static const char *const request_members_lim[] = {
    "start",   "goal",        "algorithm",    "weight", "heuristic", "smooth",
    "debug",   "deadline_ms", "max_expanded", "cache",  "goals",     "agent_size",
    "partial", "snap",        "snap_radius",  NULL};

/* The fields that come with limits, already checked to be allowed. */
static pf_status read_lim_fields(const cJSON *obj, const char *prefix, const pf_path_limits *lim,
                                 pf_path_request *r, pf_proto_error *e) {
    char f[96];
    const cJSON *it;
    int64_t iv;
    pf_status st;
#define FIELD(name) (snprintf(f, sizeof(f), "%s%s", prefix, name), f)
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "agent_size"))) {
        if ((st = pf_jsonr_int(it, FIELD("agent_size"), 1, INT32_MAX, &iv, e))) return st;
        if (iv > lim->max_agent_size)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Field '%s' must be between 1 and %d (this server's "
                                      "max_agent_size).",
                                      f, (int)lim->max_agent_size);
        r->agent_size = (int32_t)iv;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "partial")) &&
        (st = pf_jsonr_bool(it, FIELD("partial"), &r->partial, e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "snap")) &&
        (st = pf_jsonr_bool(it, FIELD("snap"), &r->snap, e)))
        return st;
    r->snap_radius = PF_PATH_DEFAULT_SNAP_RADIUS < lim->max_snap_radius
                         ? PF_PATH_DEFAULT_SNAP_RADIUS
                         : lim->max_snap_radius;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "snap_radius"))) {
        if ((st = pf_jsonr_int(it, FIELD("snap_radius"), 0, INT32_MAX, &iv, e))) return st;
        if (iv > lim->max_snap_radius)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Field '%s' must be between 0 and %d (this server's "
                                      "max_snap_radius).",
                                      f, (int)lim->max_snap_radius);
        if (!r->snap)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Field '%s' only applies with \"snap\": true.", f);
        r->snap_radius = (int32_t)iv;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "goals"))) {
        size_t n = 0, i = 0;
        if (cJSON_GetObjectItemCaseSensitive(obj, "goal"))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD("goals"),
                                      "Give either '%sgoal' or '%sgoals', not both.", prefix,
                                      prefix);
        if (!cJSON_IsArray(it))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD("goals"),
                                      "Field '%s' must be an array of points [x, y].", f);
        for (const cJSON *g = it->child; g; g = g->next) n++;
        if (n == 0)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, FIELD("goals"),
                                      "Field '%s' must hold at least one point.", f);
        if (n > lim->max_goals)
            return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, FIELD("goals"),
                                      "Field '%s' holds at most %zu points (this server's "
                                      "max_goals); this one has %zu.",
                                      f, lim->max_goals, n);
        r->goals = malloc(n * sizeof(*r->goals));
        if (!r->goals)
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        r->ngoals = n;
        for (const cJSON *g = it->child; g; g = g->next, i++) {
            snprintf(f, sizeof(f), "%sgoals[%zu]", prefix, i);
            if ((st = pf_jsonr_point(g, f, &r->goals[i], e))) {
                pf_path_request_clear(r);
                return st;
            }
        }
    }
#undef FIELD
    return PF_OK;
}

static pf_status read_request(const cJSON *obj, const char *prefix, bool allow_deadline,
                              const pf_path_limits *lim, pf_path_request *out, pf_proto_error *e) {
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
    if ((st = pf_jsonr_check_members(obj, lim ? request_members_lim : request_members, prefix, e)))
        return st;
#define FIELD(name) (snprintf(f, sizeof(f), "%s%s", prefix, name), f)
    it = cJSON_GetObjectItemCaseSensitive(obj, "start");
    if (!it)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD("start"),
                                  "Field '%s' is required.", f);
    if ((st = pf_jsonr_point(it, FIELD("start"), &r.start, e))) return st;
    it = cJSON_GetObjectItemCaseSensitive(obj, "goal");
    if (!it && !(lim && cJSON_GetObjectItemCaseSensitive(obj, "goals")))
        return pf_proto_error_set(
            e, PF_EPARSE, PF_ERR_INVALID_REQUEST, FIELD("goal"),
            lim ? "Field '%s' (or '%ss') is required." : "Field '%s' is required.", f, f);
    if (it && (st = pf_jsonr_point(it, FIELD("goal"), &r.goal, e))) return st;
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
    /* Last: the one part that allocates. */
    if (lim && (st = read_lim_fields(obj, prefix, lim, &r, e))) return st;
    if (r.ngoals) r.goal = r.goals[0];
    *out = r;
    return PF_OK;
}

pf_status pf_path_request_from_json(const cJSON *obj, const char *prefix, bool allow_deadline,
                                    pf_path_request *out, pf_proto_error *e) {
    return read_request(obj, prefix, allow_deadline, NULL, out, e);
}

pf_status pf_path_request_from_json_lim(const cJSON *obj, const char *prefix, bool allow_deadline,
                                        const pf_path_limits *lim, pf_path_request *out,
                                        pf_proto_error *e) {
    return read_request(obj, prefix, allow_deadline, lim, out, e);
}

static pf_status parse_one(const char *buf, size_t len, const pf_path_limits *lim,
                           pf_path_request *out, pf_proto_error *e) {
    cJSON *root;
    pf_status st = pf_jsonr_parse(buf, len, &root, e);
    if (st) return st;
    st = read_request(root, "", true, lim, out, e);
    cJSON_Delete(root);
    return st;
}

pf_status pf_path_request_parse(const char *buf, size_t len, pf_path_request *out,
                                pf_proto_error *e) {
    return parse_one(buf, len, NULL, out, e);
}

pf_status pf_path_request_parse_lim(const char *buf, size_t len, const pf_path_limits *lim,
                                    pf_path_request *out, pf_proto_error *e) {
    return parse_one(buf, len, lim, out, e);
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

/* Valid UTF-8 without control characters. */
static bool clean_text(const char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return false;
    return pf_utf8_is_valid(s, n);
}

static bool kv_has(const pf_kv *kv, size_t n, const char *key) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0) return true;
    return false;
}

/* goals=x,y;x,y;... : at most lim->max_goals points into r (owned). */
static pf_status q_goals(const char *v, const pf_path_limits *lim, pf_path_request *r,
                         pf_proto_error *e) {
    size_t n = 1, i = 0;
    char f[32];
    if (!v || !*v)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "goals",
                                  "Parameter 'goals' must be points written x,y;x,y.");
    for (const char *c = v; *c; c++) n += *c == ';';
    if (n > lim->max_goals)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "goals",
                                  "Parameter 'goals' holds at most %zu points (this server's "
                                  "max_goals); this one has %zu.",
                                  lim->max_goals, n);
    r->goals = malloc(n * sizeof(*r->goals));
    if (!r->goals)
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    r->ngoals = n;
    for (const char *c = v;; i++) {
        const char *end = strchr(c, ';');
        char one[48];
        size_t len = end ? (size_t)(end - c) : strlen(c);
        pf_status st;
        snprintf(f, sizeof(f), "goals[%zu]", i);
        if (len >= sizeof(one)) len = sizeof(one) - 1; /* too long to be a point: fails below */
        memcpy(one, c, len);
        one[len] = '\0';
        if ((st = q_point(one, f, &r->goals[i], e))) {
            pf_path_request_clear(r);
            return st;
        }
        if (!end) break;
        c = end + 1;
    }
    return PF_OK;
}

static pf_status read_query(const pf_kv *kv, size_t n, const pf_path_limits *lim,
                            pf_path_request *out, pf_proto_error *e) {
    pf_path_request r = pf_path_request_default();
    bool have_start = false, have_goal = false, have_radius = false;
    pf_status st = PF_OK;
    int64_t iv;

    for (size_t i = 0; i < n && !st; i++) {
        const char *k = kv[i].key, *v = kv[i].value;
        /* Decoded by libmicrohttpd: %FF or %01 arrive as those bytes. */
        if (!clean_text(k))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, NULL,
                                      "A parameter name is not valid UTF-8 or holds a control "
                                      "character.");
        if (v && !clean_text(v))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                      "Parameter '%.40s' is not valid UTF-8 or holds a control "
                                      "character.",
                                      k);
        for (size_t j = 0; j < i; j++)
            if (strcmp(kv[j].key, k) == 0) {
                pf_path_request_clear(&r);
                return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                          "Parameter '%.40s' appears twice.", k);
            }
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
        } else if (lim && strcmp(k, "goals") == 0) {
            st = q_goals(v, lim, &r, e);
            have_goal = true;
        } else if (lim && strcmp(k, "agent_size") == 0) {
            st = q_int(v, k, 1, lim->max_agent_size, &iv, e);
            if (!st) r.agent_size = (int32_t)iv;
        } else if (lim && strcmp(k, "partial") == 0) {
            st = q_bool(v, k, &r.partial, e);
        } else if (lim && strcmp(k, "snap") == 0) {
            st = q_bool(v, k, &r.snap, e);
        } else if (lim && strcmp(k, "snap_radius") == 0) {
            st = q_int(v, k, 0, lim->max_snap_radius, &iv, e);
            if (!st) r.snap_radius = (int32_t)iv;
            have_radius = true;
        } else {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                    "Unknown parameter '%.40s'.", k);
        }
    }
    if (!st && lim && !have_radius)
        r.snap_radius = PF_PATH_DEFAULT_SNAP_RADIUS < lim->max_snap_radius
                            ? PF_PATH_DEFAULT_SNAP_RADIUS
                            : lim->max_snap_radius;
    if (!st && have_radius && !r.snap)
        st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "snap_radius",
                                "Parameter 'snap_radius' only applies with snap=true.");
    if (!st && r.ngoals && kv_has(kv, n, "goal"))
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "goals",
                                "Give either 'goal' or 'goals', not both.");
    if (!st && (!have_start || !have_goal))
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, have_start ? "goal" : "start",
                                "Parameter '%s' is required (written x,y).",
                                have_start ? "goal" : "start");
    if (st) {
        pf_path_request_clear(&r);
        return st;
    }
    if (r.ngoals) r.goal = r.goals[0];
    *out = r;
    return PF_OK;
}

pf_status pf_path_request_from_query(const pf_kv *kv, size_t n, pf_path_request *out,
                                     pf_proto_error *e) {
    return read_query(kv, n, NULL, out, e);
}

pf_status pf_path_request_from_query_lim(const pf_kv *kv, size_t n, const pf_path_limits *lim,
                                         pf_path_request *out, pf_proto_error *e) {
    return read_query(kv, n, lim, out, e);
}

static const char *const batch_members[] = {"queries", "deadline_ms", NULL};

static pf_status parse_batch(const char *buf, size_t len, size_t max_queries,
                             const pf_path_limits *lim, pf_path_request **out, size_t *n,
                             int64_t *deadline_ms, pf_proto_error *e) {
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
        if ((st = read_request(it, prefix, false, lim, &reqs[i], e))) goto out_free_reqs;
    }
    *out = reqs;
    *n = count;
    cJSON_Delete(root);
    return PF_OK;

out_free_reqs:
    pf_path_batch_free(reqs, i); /* request i failed and owns nothing */
out_free_root:
    cJSON_Delete(root);
    return st;
}

pf_status pf_path_batch_parse(const char *buf, size_t len, size_t max_queries,
                              pf_path_request **out, size_t *n, int64_t *deadline_ms,
                              pf_proto_error *e) {
    return parse_batch(buf, len, max_queries, NULL, out, n, deadline_ms, e);
}

pf_status pf_path_batch_parse_lim(const char *buf, size_t len, size_t max_queries,
                                  const pf_path_limits *lim, pf_path_request **out, size_t *n,
                                  int64_t *deadline_ms, pf_proto_error *e) {
    return parse_batch(buf, len, max_queries, lim, out, n, deadline_ms, e);
}

void pf_path_write_answer(pf_jsonw *w, const pf_path_answer *a) {
    pf_jsonw_obj_begin(w);
    pf_path_write_members(w, a);
    pf_path_write_stats(w, a);
    pf_jsonw_obj_end(w);
}

static const char *reason_name(pf_status st) {
    return st == PF_EBUDGET ? "node_budget" : st == PF_EBLOCKED ? "blocked" : "unreachable";
}

void pf_path_write_members(pf_jsonw *w, const pf_path_answer *a) {
    bool partial = a->status == PF_OK && a->partial && a->path_len > 0;
    bool found = a->status == PF_OK && !partial, path = found || partial;
    pf_jsonw_kbool(w, "found", found);
    if (partial) {
        pf_jsonw_kbool(w, "partial", true);
        pf_jsonw_kstr(w, "reason", reason_name(a->partial_reason));
    }
    if (path)
        pf_jsonw_kdouble(w, "cost", a->cost);
    else
        pf_jsonw_kstr(w, "reason", reason_name(a->status));
    pf_jsonw_key(w, "path");
    pf_jsonw_arr_begin(w);
    if (path)
        for (size_t i = 0; i < a->path_len; i++) pf_jsonw_point(w, a->path[i].x, a->path[i].y);
    pf_jsonw_arr_end(w);
    if (partial) {
        pf_jsonw_key(w, "end");
        pf_jsonw_point(w, a->path[a->path_len - 1].x, a->path[a->path_len - 1].y);
    }
    if (a->has_goals && path) {
        pf_jsonw_kint(w, "goal_index", a->goal_index);
        pf_jsonw_key(w, "goal");
        pf_jsonw_point(w, a->goal.x, a->goal.y);
    }
    if (a->agent_size > 1) pf_jsonw_kint(w, "agent_size", a->agent_size);
    if (a->start_snapped || a->goal_snapped) {
        pf_jsonw_key(w, "snapped");
        pf_jsonw_obj_begin(w);
        if (a->start_snapped) {
            pf_jsonw_key(w, "start");
            pf_jsonw_point(w, a->start_at.x, a->start_at.y);
        }
        if (a->goal_snapped) {
            pf_jsonw_key(w, "goal");
            pf_jsonw_point(w, a->goal_at.x, a->goal_at.y);
        }
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_kstr(w, "algorithm", pf_algorithm_name(a->algorithm));
    pf_jsonw_kuint(w, "map_version", a->map_version);
    if (a->note) pf_jsonw_kstr(w, "note", a->note);
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
