/* jsonr.c -- see jsonr.h. */
#include "jsonr.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

pf_status pf_jsonr_parse(const char *buf, size_t len, cJSON **out, pf_proto_error *e) {
    const char *end = NULL;
    cJSON *root;
    *out = NULL;
    if (len == 0)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_JSON, NULL,
                                  "The request body is empty; a JSON value is required.");
    root = cJSON_ParseWithLengthOpts(buf, len, &end, false);
    if (!root) {
        size_t off = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : 0;
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_JSON, NULL,
                                  "The body is not valid JSON (error near byte %zu).", off);
    }
    while (end < buf + len && is_ws(*end)) end++;
    if (end != buf + len) {
        size_t off = (size_t)(end - buf);
        cJSON_Delete(root);
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_JSON, NULL,
                                  "Unexpected bytes after the JSON value at byte %zu.", off);
    }
    *out = root;
    return PF_OK;
}

pf_status pf_jsonr_number(const cJSON *it, const char *field, double min, double max, double *out,
                          pf_proto_error *e) {
    double v;
    if (!it || !cJSON_IsNumber(it))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be a number.", field);
    v = it->valuedouble;
    if (!isfinite(v))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be a finite number.", field);
    if (v < min || v > max)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "Field '%s' must be between %g and %g.", field, min, max);
    *out = v;
    return PF_OK;
}

pf_status pf_jsonr_int(const cJSON *it, const char *field, int64_t min, int64_t max, int64_t *out,
                       pf_proto_error *e) {
    double v;
    if (!it || !cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
        floor(it->valuedouble) != it->valuedouble)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be an integer.", field);
    v = it->valuedouble;
    /* Compare as doubles first: an int64 cast of a huge double is undefined. */
    if (v < (double)min || v > (double)max || (int64_t)v < min || (int64_t)v > max)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "Field '%s' must be between %lld and %lld.", field,
                                  (long long)min, (long long)max);
    *out = (int64_t)v;
    return PF_OK;
}

pf_status pf_jsonr_bool(const cJSON *it, const char *field, bool *out, pf_proto_error *e) {
    if (!it || !cJSON_IsBool(it))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be true or false.", field);
    *out = cJSON_IsTrue(it);
    return PF_OK;
}

pf_status pf_jsonr_string(const cJSON *it, const char *field, const char **out, pf_proto_error *e) {
    if (!it || !cJSON_IsString(it) || !it->valuestring)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be a string.", field);
    *out = it->valuestring;
    return PF_OK;
}

pf_status pf_jsonr_point(const cJSON *it, const char *field, pf_point *out, pf_proto_error *e) {
    const cJSON *x, *y;
    int64_t vx, vy;
    if (!it || !cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be a point [x, y] of two integers.", field);
    x = it->child;
    y = x->next;
    if (!cJSON_IsNumber(x) || !cJSON_IsNumber(y) || !isfinite(x->valuedouble) ||
        !isfinite(y->valuedouble) || floor(x->valuedouble) != x->valuedouble ||
        floor(y->valuedouble) != y->valuedouble)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be a point [x, y] of two integers.", field);
    if (pf_jsonr_int(x, field, INT32_MIN, INT32_MAX, &vx, e) ||
        pf_jsonr_int(y, field, INT32_MIN, INT32_MAX, &vy, e))
        return pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, field,
                                  "Field '%s' is far outside any map.", field);
    out->x = (int32_t)vx;
    out->y = (int32_t)vy;
    return PF_OK;
}

pf_status pf_jsonr_object(const cJSON *it, const char *field, pf_proto_error *e) {
    if (it && cJSON_IsObject(it)) return PF_OK;
    if (field && *field)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be a JSON object.", field);
    return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, NULL,
                              "The body must be a JSON object.");
}

pf_status pf_jsonr_check_members(const cJSON *obj, const char *const *allowed, const char *prefix,
                                 pf_proto_error *e) {
    char name[80];
    for (const cJSON *m = obj->child; m; m = m->next) {
        bool known = false;
        snprintf(name, sizeof(name), "%s%s", prefix ? prefix : "", m->string ? m->string : "");
        for (const char *const *a = allowed; *a; a++)
            if (m->string && strcmp(m->string, *a) == 0) known = true;
        if (!known)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                      "Unknown field '%s'.", name);
        for (const cJSON *o = obj->child; o != m; o = o->next)
            if (o->string && m->string && strcmp(o->string, m->string) == 0)
                return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                          "Field '%s' appears twice.", name);
    }
    return PF_OK;
}
