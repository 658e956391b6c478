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

pf_status pf_proto_error_set(pf_proto_error *e, pf_status st, pf_error code, const char *field,
                             const char *fmt, ...) {
    va_list ap;
    if (!e) return st;
    e->status = st;
    e->code = code != PF_ERR_NONE ? code : pf_error_for_status(st);
    snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
    /* Parts of a message may be cut (%.40s) in the middle of a character. */
    pf_utf8_sanitize(e->message);
    pf_utf8_sanitize(e->field);
    return st;
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
