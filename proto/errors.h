/* errors.h -- the API's error body and the error a parser reports.
 *
 * Every error the server sends looks like
 *   {"error":{"code":"<snake_case>","message":"<sentence>","field":"<name>"}}
 * with "field" present only when one field of the request is at fault.
 * Parsers in proto/ fill a pf_proto_error: the status (which the server maps
 * to an HTTP code in server/http_status.c, the one place that does), the
 * code, the field and a sentence. Thread-safe: no shared state.
 */
#ifndef PF_PROTO_ERRORS_H
#define PF_PROTO_ERRORS_H

#include "jsonw.h"
#include "status.h"

/* Error codes of the API (the "code" member). */
#define PF_ERR_MALFORMED_JSON "malformed_json" /* 400: not JSON, or trailing bytes */
#define PF_ERR_INVALID_REQUEST                                                                     \
    "invalid_request"                          /* 400: a field has the wrong type or is missing    \
                                                */
#define PF_ERR_MALFORMED_MAP "malformed_map"   /* 400: Moving AI text does not follow the format */
#define PF_ERR_INVALID_MAP_ID "invalid_map_id" /* 400 */
#define PF_ERR_MAP_NOT_FOUND "map_not_found"   /* 404 */
#define PF_ERR_NOT_FOUND "not_found"           /* 404: no such route */
#define PF_ERR_SESSION_NOT_FOUND                                                                   \
    "session_not_found"                              /* 404: unknown, expired or deleted session   \
                                                      */
#define PF_ERR_SESSION_BUSY "session_busy"           /* 409: another request is using the session */
#define PF_ERR_TOO_MANY_SESSIONS "too_many_sessions" /* 429: the map's session quota is used up */
#define PF_ERR_CONFLICT "conflict"                   /* 409: the map kept changing under a PATCH */
#define PF_ERR_UPGRADE_REQUIRED                                                                    \
    "upgrade_required" /* 426: .../stream without a WebSocket handshake */
#define PF_ERR_METHOD_NOT_ALLOWED "method_not_allowed"    /* 405 */
#define PF_ERR_BODY_TOO_LARGE "body_too_large"            /* 413 */
#define PF_ERR_LIMIT_EXCEEDED "limit_exceeded"            /* 413: map cells, batch size, maps */
#define PF_ERR_UNSUPPORTED_MEDIA "unsupported_media_type" /* 415 */
#define PF_ERR_INVALID_VALUE "invalid_value"              /* 422 */
#define PF_ERR_OFF_MAP "off_map"                          /* 422: start or goal outside the map */
#define PF_ERR_BLOCKED "blocked"                          /* 422: start or goal on a blocked cell */
#define PF_ERR_UNSUPPORTED "unsupported"     /* 422: algorithm not available on this map */
#define PF_ERR_OVERLOADED "overloaded"       /* 503 + Retry-After */
#define PF_ERR_SHUTTING_DOWN "shutting_down" /* 503 */
#define PF_ERR_DEADLINE "deadline_exceeded"  /* 504 */
#define PF_ERR_INTERNAL "internal"           /* 500 */
#define PF_ERR_STORAGE "storage_failed"      /* 500: --data-dir could not be written */
#define PF_ERR_NO_MEMORY "out_of_memory"     /* 503 */

typedef struct pf_proto_error {
    pf_status status;
    char code[40];
    char field[80]; /* "" when no single field is at fault */
    char message[256];
} pf_proto_error;

/* Fills e; field may be NULL. Returns st so a parser can
 * `return pf_proto_error_set(...)`. The message and field are made valid
 * UTF-8 (pf_utf8_sanitize): a cut character becomes '?'. */
pf_status pf_proto_error_set(pf_proto_error *e, pf_status st, const char *code, const char *field,
                             const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The default code for a status (PF_EPARSE -> "invalid_request", PF_ERANGE ->
 * "off_map", ...). */
const char *pf_proto_code_for(pf_status st);

/* Writes the error object {"code":..,"message":..,"field":..} as a value. */
void pf_proto_write_error_obj(pf_jsonw *w, const char *code, const char *message,
                              const char *field);
/* Writes the whole body {"error":{...}}. field NULL or "" omits it. */
void pf_proto_write_error(pf_jsonw *w, const char *code, const char *message, const char *field);
/* Same from a filled pf_proto_error. */
void pf_proto_write_perror(pf_jsonw *w, const pf_proto_error *e);

#endif
