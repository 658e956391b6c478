/* errors.c -- see errors.h. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

typedef struct error_row {
    const char *code;
    int http_status;
    const char *sentence;
} error_row;

/* Indexed by pf_error; PF_ERR_NONE's row stays empty (row() reads INTERNAL's). */
static const error_row rows[PF_ERR_COUNT] = {
#define PF_ERROR_ROW(name, code, http, sentence) [PF_ERR_##name] = {code, http, sentence},
    PF_ERRORS(PF_ERROR_ROW)
#undef PF_ERROR_ROW
};

static const error_row *row(pf_error e) {
    return (unsigned)e < PF_ERR_COUNT && e != PF_ERR_NONE ? &rows[e] : &rows[PF_ERR_INTERNAL];
}

const char *pf_error_code(pf_error e) { return row(e)->code; }

int pf_error_http_status(pf_error e) { return row(e)->http_status; }

const char *pf_error_sentence(pf_error e) { return row(e)->sentence; }

pf_error pf_error_for_status(pf_status st) {
    switch (st) {
    case PF_EPARSE:
        return PF_ERR_INVALID_REQUEST;
    case PF_EINVAL:
        return PF_ERR_INVALID_VALUE;
    case PF_ERANGE:
        return PF_ERR_OFF_MAP;
    case PF_EBLOCKED:
        return PF_ERR_BLOCKED;
    case PF_ELIMIT:
        return PF_ERR_LIMIT_EXCEEDED;
    case PF_EUNSUPPORTED:
        return PF_ERR_UNSUPPORTED;
    case PF_ECANCELED:
        return PF_ERR_DEADLINE;
    case PF_ENOMEM:
        return PF_ERR_NO_MEMORY;
    case PF_EIO:
        return PF_ERR_STORAGE;
    default:
        return PF_ERR_INTERNAL;
    }
}

/* s[0..n) into dst (cap > 0 bytes, NUL-terminated), cut at a whole
 * character when it does not fit. */
static void copy_cut(char *dst, size_t cap, const char *s, size_t n) {
    size_t len = pf_utf8_cut(s, n, cap - 1);
    memcpy(dst, s, len);
    dst[len] = '\0';
}

pf_status pf_proto_error_set(pf_proto_error *e, pf_status st, pf_error code, const char *field,
                             const char *fmt, ...) {
    va_list ap;
    int n;
    if (!e) return st;
    e->status = st;
    e->code = code != PF_ERR_NONE ? code : pf_error_for_status(st);
    copy_cut(e->field, sizeof(e->field), field ? field : "", field ? strlen(field) : 0);
    va_start(ap, fmt);
    n = vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
    /* A sentence longer than the buffer ends at a whole character. */
    if (n >= (int)sizeof(e->message)) {
        size_t len = sizeof(e->message) - 1;
        e->message[pf_utf8_cut(e->message, len, len)] = '\0';
    }
    /* Parts of a message may be cut (%.40s) in the middle of a character. */
    pf_utf8_sanitize(e->message);
    pf_utf8_sanitize(e->field);
    return st;
}

void pf_proto_error_nest(pf_proto_error *e, const char *parent) {
    char f[sizeof e->field];
    size_t n = strlen(parent), k = strlen(e->field);
    if (k) {
        char *joined = f;
        size_t room = sizeof f - 1, take;
        /* parent + '.' + field, whole characters only, parent first. */
        take = pf_utf8_cut(parent, n, room);
        memcpy(joined, parent, take);
        joined += take;
        room -= take;
        if (room > 1) {
            *joined++ = '.';
            room--;
            take = pf_utf8_cut(e->field, k, room);
            memcpy(joined, e->field, take);
            joined += take;
        }
        *joined = '\0';
    } else {
        copy_cut(f, sizeof f, parent, n);
    }
    memcpy(e->field, f, sizeof f);
    pf_utf8_sanitize(e->field);
}

void pf_proto_write_error_obj(pf_jsonw *w, pf_error code, const char *message, const char *field) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "code", pf_error_code(code));
    pf_jsonw_kstr(w, "message", message ? message : pf_error_sentence(code));
    if (field && *field) pf_jsonw_kstr(w, "field", field);
    pf_jsonw_obj_end(w);
}

void pf_proto_write_error(pf_jsonw *w, pf_error code, const char *message, const char *field) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_key(w, "error");
    pf_proto_write_error_obj(w, code, message, field);
    pf_jsonw_obj_end(w);
}

void pf_proto_write_perror(pf_jsonw *w, const pf_proto_error *e) {
    pf_proto_write_error(w, e->code, e->message, e->field);
}
