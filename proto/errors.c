/* errors.c -- see errors.h. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

pf_status pf_proto_error_set(pf_proto_error *e, pf_status st, const char *code, const char *field,
                             const char *fmt, ...) {
    va_list ap;
    if (!e) return st;
    e->status = st;
    snprintf(e->code, sizeof(e->code), "%s", code ? code : pf_proto_code_for(st));
    snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
    /* Parts of a message may be cut (%.40s) in the middle of a character. */
    pf_utf8_sanitize(e->message);
    pf_utf8_sanitize(e->field);
    return st;
}

const char *pf_proto_code_for(pf_status st) {
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

void pf_proto_write_error_obj(pf_jsonw *w, const char *code, const char *message,
                              const char *field) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "code", code);
    pf_jsonw_kstr(w, "message", message);
    if (field && *field) pf_jsonw_kstr(w, "field", field);
    pf_jsonw_obj_end(w);
}

void pf_proto_write_error(pf_jsonw *w, const char *code, const char *message, const char *field) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_key(w, "error");
    pf_proto_write_error_obj(w, code, message, field);
    pf_jsonw_obj_end(w);
}

void pf_proto_write_perror(pf_jsonw *w, const pf_proto_error *e) {
    pf_proto_write_error(w, e->code, e->message, e->field);
}
