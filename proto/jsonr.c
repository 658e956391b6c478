/* jsonr.c -- see jsonr.h. */
#include "jsonr.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Where the string scan is: one frame per open object or array, for the
 * field name of an error. Deeper levels are checked all the same, only not
 * named. */
#define PATH_DEPTH 16

typedef struct frame {
    bool obj;
    size_t index;    /* arrays: the element */
    const char *key; /* objects: the member being read (raw, within the input) */
    size_t keylen;
} frame;

static bool simple_key(const char *k, size_t n) {
    if (n == 0 || n > 40) return false;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* "doors.gate.cells[2]" from the frames; the innermost key is left out
 * when the error is in that key. */
static void path_name(const frame *f, size_t depth, bool in_key, char *out, size_t cap) {
    size_t len = 0;
    out[0] = '\0';
    for (size_t d = 0; d < depth && d < PATH_DEPTH; d++) {
        int k;
        if (f[d].obj) {
            bool last = d + 1 == depth;
            if (!f[d].key || (last && in_key)) break;
            if (simple_key(f[d].key, f[d].keylen))
                k = snprintf(out + len, cap - len, "%s%.*s", len ? "." : "", (int)f[d].keylen,
                             f[d].key);
            else
                k = snprintf(out + len, cap - len, "%s?", len ? "." : "");
        } else {
            k = snprintf(out + len, cap - len, "[%zu]", f[d].index);
        }
        if (k < 0 || (size_t)k >= cap - len) break;
        len += (size_t)k;
    }
}

static pf_status string_error(pf_proto_error *e, pf_error code, const frame *f, size_t depth,
                              bool in_key, const char *what, size_t at) {
    char field[72];
    path_name(f, depth, in_key, field, sizeof(field));
    if (in_key)
        return pf_proto_error_set(e, PF_EPARSE, code, field[0] ? field : NULL,
                                  "A member name%s%s%s %s (byte %zu).", field[0] ? " in '" : "",
                                  field, field[0] ? "'" : "", what, at);
    if (!field[0])
        return pf_proto_error_set(e, PF_EPARSE, code, NULL, "The string %s (byte %zu).", what, at);
    return pf_proto_error_set(e, PF_EPARSE, code, field, "Field '%s' %s (byte %zu).", field, what,
                              at);
}

/* Every string of a JSON text cJSON accepted, member names included, must
 * be valid UTF-8 (RFC 8259 section 8.1) without raw control characters
 * (section 7) and must not hold \u0000: cJSON keeps strings NUL-terminated
 * and would cut one there without a word, so "gate\u0000x" would name door
 * "gate". cJSON itself copies string bytes as they come, valid or not. */
static pf_status check_strings(const char *buf, size_t len, pf_proto_error *e) {
    frame f[PATH_DEPTH];
    size_t depth = 0;
    bool want_key = false;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        frame *top = depth && depth <= PATH_DEPTH ? &f[depth - 1] : NULL;
        switch (c) {
        case '{':
        case '[':
            if (depth < PATH_DEPTH) {
                f[depth].obj = c == '{';
                f[depth].index = 0;
                f[depth].key = NULL;
                f[depth].keylen = 0;
            }
            depth++;
            want_key = c == '{';
            break;
        case '}':
        case ']':
            if (depth) depth--;
            want_key = false;
            break;
        case ',':
            if (top && !top->obj) top->index++;
            want_key = top && top->obj;
            break;
        case ':':
            want_key = false;
            break;
        case '"': {
            size_t start = ++i;
            bool key = want_key;
            while (i < len && buf[i] != '"') {
                unsigned char u = (unsigned char)buf[i];
                size_t k;
                if (u == '\\') {
                    if (i + 5 < len && buf[i + 1] == 'u' && memcmp(buf + i + 2, "0000", 4) == 0)
                        return string_error(e, PF_ERR_INVALID_REQUEST, f, depth, key,
                                            "holds \\u0000, which no string may", i);
                    i += 2;
                    continue;
                }
                if (u < 0x20)
                    return string_error(e, PF_ERR_MALFORMED_JSON, f, depth, key,
                                        "holds a raw control character (escape it as \\uXXXX)", i);
                if (u < 0x80) {
                    i++;
                    continue;
                }
                if (!(k = pf_utf8_seq_len((const unsigned char *)buf + i, len - i)))
                    return string_error(e, PF_ERR_MALFORMED_JSON, f, depth, key,
                                        "is not valid UTF-8", i);
                i += k;
            }
            if (key && top) {
                top->key = buf + start;
                top->keylen = i - start;
            }
            want_key = false;
            break;
        }
        default:
            break;
        }
    }
    return PF_OK;
}

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
    if (check_strings(buf, len, e) != PF_OK) {
        cJSON_Delete(root);
        return PF_EPARSE;
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

pf_status pf_jsonr_point3(const cJSON *it, const char *field, float out[3], pf_proto_error *e) {
    int k = 0;
    if (!it || !cJSON_IsArray(it) || cJSON_GetArraySize(it) != 3)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                  "Field '%s' must be a point [x, y, z] of three numbers.", field);
    for (const cJSON *c = it->child; c; c = c->next, k++) {
        double v;
        if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                                      "Field '%s' must be a point [x, y, z] of three numbers.",
                                      field);
        v = c->valuedouble;
        if (fabs(v) > PF_JSONR_MAX_COORD)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                      "Field '%s' has a coordinate outside +-1e7.", field);
        out[k] = (float)v;
    }
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
