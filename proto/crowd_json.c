/* crowd_json.c -- see crowd_json.h. */
#include "crowd_json.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"
#include "nav_json.h"

static const char *const agent_members[] = {"position",  "target",    "radius",     "height",
                                            "max_speed", "max_accel", "separation", NULL};
static const char *const create_members[] = {"max_agents", "tick_hz",    "ttl_s",
                                             "agents",     "agent_type", NULL};
static const char *const command_members[] = {"add",   "remove", "targets", "tick_hz",
                                              "steps", "dt",     NULL};
static const char *const target_members[] = {"id", "target", NULL};

/* The agent parameters' ranges: the one place they are written, so a
 * value is refused with the same range whether it is far out or just out.
 * The radius's upper bound is the map's (the agent radius its mesh was
 * built for): the crowd checks it (server/crowd.c); here it must only be
 * more than 0 and a float. */
static const struct {
    const char *name;
    size_t at; /* offsetof the float in pf_crowd_agent_spec */
    double lo, hi;
    bool lo_open; /* more than lo (else at least lo) */
    const char *range;
} params[] = {
    {"radius", offsetof(pf_crowd_agent_spec, radius), 0, 3.4e38, true,
     "more than 0 and at most the agent radius the map's mesh was built for"},
    {"height", offsetof(pf_crowd_agent_spec, height), 0, 100, true, "more than 0 and at most 100"},
    {"max_speed", offsetof(pf_crowd_agent_spec, max_speed), 0, 1000, true,
     "more than 0 and at most 1000"},
    {"max_accel", offsetof(pf_crowd_agent_spec, max_accel), 0, 10000, true,
     "more than 0 and at most 10000"},
    {"separation", offsetof(pf_crowd_agent_spec, separation), 0, 100, false, "between 0 and 100"},
};

/* An agent, prefix "agents[i]." or "add[i].". */
static pf_status read_agent(const cJSON *obj, const char *prefix, pf_crowd_agent_spec *a,
                            pf_proto_error *e) {
    char f[96];
    const cJSON *it;
    pf_status st;
    snprintf(f, sizeof f, "%.*s", (int)strlen(prefix) - 1, prefix);
    if ((st = pf_jsonr_object(obj, f, e)) ||
        (st = pf_jsonr_check_members(obj, agent_members, prefix, e)))
        return st;
    snprintf(f, sizeof f, "%sposition", prefix);
    if ((st = pf_nav_read_point(cJSON_GetObjectItemCaseSensitive(obj, "position"), f, a->position,
                                e)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(obj, "target")) && !cJSON_IsNull(it)) {
        snprintf(f, sizeof f, "%starget", prefix);
        if ((st = pf_nav_read_point(it, f, a->target, e))) return st;
        a->has_target = true;
    }
    for (size_t k = 0; k < sizeof params / sizeof params[0]; k++) {
        float *dst = (float *)(void *)((char *)a + params[k].at);
        double v;
        *dst = NAN;
        if (!(it = cJSON_GetObjectItemCaseSensitive(obj, params[k].name))) continue;
        snprintf(f, sizeof f, "%s%s", prefix, params[k].name);
        if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                      "Field '%s' must be a number %s.", f, params[k].range);
        v = it->valuedouble;
        if (v < params[k].lo || (params[k].lo_open && v == params[k].lo) || v > params[k].hi)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Field '%s' must be %s.", f, params[k].range);
        *dst = (float)v;
    }
    return PF_OK;
}

static pf_status read_agents(const cJSON *arr, const char *name, int64_t max,
                             pf_crowd_agent_spec **out, size_t *n, pf_proto_error *e) {
    size_t cnt, i = 0;
    if (!cJSON_IsArray(arr))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                  "Field '%s' must be an array of agents "
                                  "{\"position\":[x,y,z], ...}.",
                                  name);
    cnt = (size_t)cJSON_GetArraySize(arr);
    if ((int64_t)cnt > max)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, name,
                                  "Field '%s' has %zu agents, more than %lld (max_agents).", name,
                                  cnt, (long long)max);
    if (!cnt) return PF_OK;
    if (!(*out = calloc(cnt, sizeof **out)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char prefix[48];
        pf_status st;
        snprintf(prefix, sizeof prefix, "%s[%zu].", name, i);
        if ((st = read_agent(c, prefix, &(*out)[i], e))) return st;
        *n = i + 1;
    }
    return PF_OK;
}

void pf_crowd_request_free(pf_crowd_request *r) {
    if (!r) return;
    free(r->agents);
    memset(r, 0, sizeof *r);
}

pf_status pf_crowd_request_parse(const char *buf, size_t len, const pf_crowd_limits *lim,
                                 pf_crowd_request *out, pf_proto_error *e) {
    cJSON *root = NULL;
    const cJSON *it;
    pf_status st;
    memset(out, 0, sizeof *out);
    if ((st = pf_jsonr_parse(buf, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, NULL, e)) ||
        (st = pf_jsonr_check_members(root, create_members, "", e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "max_agents")) &&
        (st = pf_jsonr_int(it, "max_agents", 1, lim->max_agents, &out->max_agents, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "tick_hz")) &&
        (st = pf_jsonr_int(it, "tick_hz", 0, lim->max_tick_hz, &out->tick_hz, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "ttl_s")) &&
        (st = pf_jsonr_int(it, "ttl_s", 1, lim->max_ttl_s, &out->ttl_s, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "agent_type"))) {
        const char *s;
        if ((st = pf_jsonr_string(it, "agent_type", &s, e))) goto out;
        if (strlen(s) >= sizeof(out->agent_type)) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "agent_type",
                                    "Field 'agent_type' is an agent type id (at most 63 bytes).");
            goto out;
        }
        snprintf(out->agent_type, sizeof(out->agent_type), "%s", s);
    }
    if (!out->max_agents) out->max_agents = lim->max_agents < 100 ? lim->max_agents : 100;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "agents")) &&
        (st = read_agents(it, "agents", out->max_agents, &out->agents, &out->nagents, e)))
        goto out;
out:
    cJSON_Delete(root);
    if (st) pf_crowd_request_free(out);
    return st;
}

void pf_crowd_command_free(pf_crowd_command *c) {
    if (!c) return;
    free(c->add);
    free(c->remove);
    free(c->targets);
    memset(c, 0, sizeof *c);
}

static pf_status read_ids(const cJSON *arr, int64_t max, int64_t **out, size_t *n,
                          pf_proto_error *e) {
    size_t cnt, i = 0;
    if (!cJSON_IsArray(arr))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "remove",
                                  "Field 'remove' must be an array of agent ids.");
    cnt = (size_t)cJSON_GetArraySize(arr);
    if ((int64_t)cnt > max)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "remove",
                                  "Field 'remove' has %zu ids, more than %lld.", cnt,
                                  (long long)max);
    if (!cnt) return PF_OK;
    if (!(*out = calloc(cnt, sizeof **out)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char f[32];
        pf_status st;
        snprintf(f, sizeof f, "remove[%zu]", i);
        if ((st = pf_jsonr_int(c, f, 0, 65535, &(*out)[i], e))) return st;
        *n = i + 1;
    }
    return PF_OK;
}

static pf_status read_targets(const cJSON *arr, int64_t max, pf_crowd_target **out, size_t *n,
                              pf_proto_error *e) {
    size_t cnt, i = 0;
    if (!cJSON_IsArray(arr))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "targets",
                                  "Field 'targets' must be an array of {\"id\",\"target\"}.");
    cnt = (size_t)cJSON_GetArraySize(arr);
    if ((int64_t)cnt > max)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "targets",
                                  "Field 'targets' has %zu entries, more than %lld.", cnt,
                                  (long long)max);
    if (!cnt) return PF_OK;
    if (!(*out = calloc(cnt, sizeof **out)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char p[32], f[48];
        const cJSON *t;
        pf_status st;
        snprintf(p, sizeof p, "targets[%zu]", i);
        if ((st = pf_jsonr_object(c, p, e))) return st;
        snprintf(p, sizeof p, "targets[%zu].", i);
        if ((st = pf_jsonr_check_members(c, target_members, p, e))) return st;
        snprintf(f, sizeof f, "%sid", p);
        if ((st = pf_jsonr_int(cJSON_GetObjectItemCaseSensitive(c, "id"), f, 0, 65535,
                               &(*out)[i].id, e)))
            return st;
        snprintf(f, sizeof f, "%starget", p);
        t = cJSON_GetObjectItemCaseSensitive(c, "target");
        if (!t)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                      "Field '%s' is required: a point [x, y, z], or null to "
                                      "stop.",
                                      f);
        if (!cJSON_IsNull(t)) {
            if ((st = pf_nav_read_point(t, f, (*out)[i].target, e))) return st;
            (*out)[i].has_target = true;
        }
        *n = i + 1;
    }
    return PF_OK;
}

pf_status pf_crowd_command_parse(const char *buf, size_t len, const pf_crowd_limits *lim,
                                 pf_crowd_command *out, pf_proto_error *e) {
    cJSON *root = NULL;
    const cJSON *it;
    pf_status st;
    memset(out, 0, sizeof *out);
    if ((st = pf_jsonr_parse(buf, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, NULL, e)) ||
        (st = pf_jsonr_check_members(root, command_members, "", e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "add")) &&
        (st = read_agents(it, "add", lim->max_agents, &out->add, &out->nadd, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "remove")) &&
        (st = read_ids(it, lim->max_agents, &out->remove, &out->nremove, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "targets")) &&
        (st = read_targets(it, lim->max_agents, &out->targets, &out->ntargets, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "tick_hz"))) {
        if ((st = pf_jsonr_int(it, "tick_hz", 0, lim->max_tick_hz, &out->tick_hz, e))) goto out;
        out->has_tick_hz = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "steps"))) {
        if ((st = pf_jsonr_int(it, "steps", 0, lim->max_steps, &out->steps, e))) goto out;
        out->has_steps = true;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "dt"))) {
        if ((st = pf_jsonr_number(it, "dt", 0, 1, &out->dt, e))) goto out;
        if (out->dt <= 0) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "dt",
                                    "Field 'dt' must be more than 0 and at most 1 (seconds).");
            goto out;
        }
        out->has_dt = true;
    }
out:
    cJSON_Delete(root);
    if (st) pf_crowd_command_free(out);
    return st;
}
