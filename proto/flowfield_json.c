/* flowfield_json.c -- see flowfield_json.h. */
#include "flowfield_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

static const char *const members[] = {"goal",  "goals",       "region", "agent_size",
                                      "costs", "deadline_ms", "cache",  NULL};
static const char *const region_members[] = {"x", "y", "width", "height", NULL};

void pf_flow_request_clear(pf_flow_request *r) {
    free(r->goals);
    r->goals = NULL;
    r->ngoals = 0;
}

/* Reads "goal" or "goals" of obj into *goals (owned), *n. Shared shape with
 * path requests; here one of the two is required. */
static pf_status read_goals(const cJSON *obj, size_t max_goals, pf_point **goals, size_t *n,
                            pf_proto_error *e) {
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(obj, "goal");
    const cJSON *many = cJSON_GetObjectItemCaseSensitive(obj, "goals");
    char f[32];
    size_t count = 0, i = 0;
    pf_status st;
    *goals = NULL;
    *n = 0;
    if (one && many)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "goals",
                                  "Give either 'goal' or 'goals', not both.");
    if (!one && !many)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "goal",
                                  "Field 'goal' (or 'goals') is required.");
    if (one) {
        pf_point p;
        if ((st = pf_jsonr_point(one, "goal", &p, e))) return st;
        *goals = malloc(sizeof(**goals));
        if (!*goals)
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        (*goals)[0] = p;
        *n = 1;
        return PF_OK;
    }
    if (!cJSON_IsArray(many))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "goals",
                                  "Field 'goals' must be an array of points [x, y].");
    for (const cJSON *g = many->child; g; g = g->next) count++;
    if (count == 0)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "goals",
                                  "Field 'goals' must hold at least one point.");
    if (count > max_goals)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "goals",
                                  "Field 'goals' holds at most %zu points (this server's "
                                  "max_flowfield_goals); this one has %zu.",
                                  max_goals, count);
    *goals = malloc(count * sizeof(**goals));
    if (!*goals) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (const cJSON *g = many->child; g; g = g->next, i++) {
        snprintf(f, sizeof(f), "goals[%zu]", i);
        if ((st = pf_jsonr_point(g, f, &(*goals)[i], e))) {
            free(*goals);
            *goals = NULL;
            return st;
        }
    }
    *n = count;
    return PF_OK;
}

static pf_status read_region(const cJSON *it, pf_box *b, pf_proto_error *e) {
    static const char *const names[4] = {"x", "y", "width", "height"};
    int64_t v[4];
    char f[32];
    pf_status st;
    if ((st = pf_jsonr_object(it, "region", e))) return st;
    if ((st = pf_jsonr_check_members(it, region_members, "region.", e))) return st;
    for (int k = 0; k < 4; k++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, names[k]);
        snprintf(f, sizeof(f), "region.%s", names[k]);
        if (!m)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                      "Field '%s' is required.", f);
        if ((st = pf_jsonr_int(m, f, k < 2 ? 0 : 1, INT32_MAX, &v[k], e))) return st;
    }
    b->x = (int32_t)v[0];
    b->y = (int32_t)v[1];
    b->w = (int32_t)v[2];
    b->h = (int32_t)v[3];
    return PF_OK;
}

pf_status pf_flow_request_parse(const char *buf, size_t len, const pf_flow_limits *lim,
                                pf_flow_request *out, pf_proto_error *e) {
    pf_flow_request r;
    cJSON *root;
    const cJSON *it;
    int64_t iv;
    pf_status st;

    memset(out, 0, sizeof(*out));
    memset(&r, 0, sizeof(r));
    r.agent_size = 1;
    r.costs = true;
    r.use_cache = true;
    if ((st = pf_jsonr_parse(buf, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, NULL, e))) goto out;
    if ((st = pf_jsonr_check_members(root, members, "", e))) goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "region"))) {
        if ((st = read_region(it, &r.region, e))) goto out;
        r.has_region = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "agent_size"))) {
        if ((st = pf_jsonr_int(it, "agent_size", 1, INT32_MAX, &iv, e))) goto out;
        if (iv > lim->max_agent_size) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "agent_size",
                                    "Field 'agent_size' must be between 1 and %d (this "
                                    "server's max_agent_size).",
                                    (int)lim->max_agent_size);
            goto out;
        }
        r.agent_size = (int32_t)iv;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "costs")) &&
        (st = pf_jsonr_bool(it, "costs", &r.costs, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "cache")) &&
        (st = pf_jsonr_bool(it, "cache", &r.use_cache, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "deadline_ms")) &&
        (st = pf_jsonr_int(it, "deadline_ms", 1, 3600000, &r.deadline_ms, e)))
        goto out;
    if ((st = read_goals(root, lim->max_goals, &r.goals, &r.ngoals, e))) goto out;
    r.goals_list = cJSON_GetObjectItemCaseSensitive(root, "goals") != NULL;
    *out = r;
out:
    cJSON_Delete(root);
    return st;
}

double pf_flow_cost_scale(double max_cost) {
    double scale = 1000.0;
    while (scale > 1e-3 && max_cost * scale > 4294967294.0) scale /= 10.0;
    return scale;
}

/* The costs of the field as uint32 little-endian, encoded in pieces. */
static void write_costs(pf_jsonw *w, const double *cost, size_t cells, double scale) {
    unsigned char chunk[3 * 1024];
    pf_jsonw_b64 b;
    size_t k = 0;
    pf_jsonw_b64_begin(w, &b);
    for (size_t i = 0; i < cells; i++) {
        uint32_t v = PF_FLOW_COST_NONE;
        if (isfinite(cost[i])) {
            double s = nearbyint(cost[i] * scale);
            v = s >= 4294967294.0 ? 4294967294u : (uint32_t)s;
        }
        chunk[k++] = (unsigned char)v;
        chunk[k++] = (unsigned char)(v >> 8);
        chunk[k++] = (unsigned char)(v >> 16);
        chunk[k++] = (unsigned char)(v >> 24);
        if (k + 4 > sizeof(chunk)) {
            pf_jsonw_b64_part(w, &b, chunk, k);
            k = 0;
        }
    }
    pf_jsonw_b64_part(w, &b, chunk, k);
    pf_jsonw_b64_end(w, &b);
}

void pf_flow_write_members(pf_jsonw *w, const pf_flowfield *f, const pf_point *goals, size_t ngoals,
                           int32_t agent_size, uint64_t map_version, bool costs) {
    pf_box b = pf_flowfield_region(f);
    pf_flow_stats st;
    size_t cells = (size_t)b.w * (size_t)b.h;
    double scale;
    pf_flowfield_get_stats(f, &st);
    scale = pf_flow_cost_scale(st.max_cost);
    pf_jsonw_kuint(w, "map_version", map_version);
    pf_jsonw_kint(w, "agent_size", agent_size);
    pf_jsonw_key(w, "region");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kint(w, "x", b.x);
    pf_jsonw_kint(w, "y", b.y);
    pf_jsonw_kint(w, "width", b.w);
    pf_jsonw_kint(w, "height", b.h);
    pf_jsonw_obj_end(w);
    pf_jsonw_key(w, "goals");
    pf_jsonw_arr_begin(w);
    for (size_t i = 0; i < ngoals; i++) pf_jsonw_point(w, goals[i].x, goals[i].y);
    pf_jsonw_arr_end(w);
    pf_jsonw_kstr(w, "encoding", PF_FLOW_ENCODING);
    pf_jsonw_key(w, "directions");
    pf_jsonw_base64(w, pf_flowfield_dirs(f), cells);
    if (costs) {
        pf_jsonw_key(w, "costs");
        write_costs(w, pf_flowfield_costs(f), cells, scale);
        pf_jsonw_kdouble(w, "cost_scale", scale);
    }
    pf_jsonw_kint(w, "reachable", st.reachable);
    pf_jsonw_kdouble(w, "max_cost", st.max_cost);
}

void pf_flow_write_stats(pf_jsonw *w, uint64_t expanded, uint64_t time_us, bool cached) {
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "expanded", expanded);
    pf_jsonw_kuint(w, "time_us", time_us);
    pf_jsonw_kbool(w, "cached", cached);
    pf_jsonw_obj_end(w);
}
