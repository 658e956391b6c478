/* errors.h -- the API's one error space, its error body, and the error a
 * parser reports.
 *
 * Every error the server sends looks like
 *   {"error":{"code":"<snake_case>","message":"<sentence>","field":"<name>"}}
 * with "field" present only when one field of the request is at fault.
 *
 * PF_ERRORS below is the only place an error is declared (libuv's
 * UV_ERRNO_MAP is the model): its name (PF_ERR_<NAME>), its API code (the
 * "code" member), the HTTP status it is answered with, and a default
 * sentence for answers that have nothing more precise to say. The enum, the
 * strings and the statuses are all derived from it, so no other file of the
 * tree writes an error's HTTP status; to add an error, add a row (and
 * describe it in proto/openapi.yaml).
 *
 * Parsers in proto/ fill a pf_proto_error: the core status they return,
 * the error, the field and a sentence. Thread-safe: no shared state.
 */
#ifndef PF_PROTO_ERRORS_H
#define PF_PROTO_ERRORS_H

#include "jsonw.h"
#include "status.h"

/* XX(name, API code, HTTP status, default sentence) */
/* clang-format off */
#define PF_ERRORS(XX)                                                                              \
    XX(MALFORMED_JSON,     "malformed_json",         400,                                          \
           "The body is not JSON, or has bytes after it.")                                         \
    XX(INVALID_REQUEST,    "invalid_request",        400,                                          \
           "A field has the wrong type or is missing.")                                            \
    XX(MALFORMED_MAP,      "malformed_map",          400,                                          \
           "The Moving AI map does not follow the format.")                                        \
    XX(INVALID_MAP_ID,     "invalid_map_id",         400,                                          \
           "A map id is 1 to 64 characters of A-Z a-z 0-9 _ . -")                                  \
    XX(MALFORMED_REQUEST,  "malformed_request",      400,                                          \
           "The request's framing, Host or target breaks HTTP/1.1 (RFC 9112).")                    \
    XX(UNAUTHORIZED,       "unauthorized",           401,                                          \
           "A bearer token is required: send Authorization: Bearer <token>.")                      \
    XX(INSUFFICIENT_SCOPE, "insufficient_scope",     403,                                          \
           "The token's scope does not allow this request.")                                       \
    XX(NOT_FOUND,          "not_found",              404, "No such route.")                        \
    XX(MAP_NOT_FOUND,      "map_not_found",          404, "No such map.")                          \
    XX(SESSION_NOT_FOUND,  "session_not_found",      404,                                          \
           "The session is gone (deleted, expired, or its map was replaced).")                     \
    XX(CROWD_NOT_FOUND,    "crowd_not_found",        404,                                          \
           "The crowd is gone (deleted, expired, or its map was replaced).")                       \
    XX(METHOD_NOT_ALLOWED, "method_not_allowed",     405,                                          \
           "The method is not allowed on this path.")                                              \
    XX(SESSION_BUSY,       "session_busy",           409,                                          \
           "Another request is using this session; retry when it is answered.")                    \
    XX(CONFLICT,           "conflict",               409,                                          \
           "The map kept changing under this PATCH; retry.")                                       \
    XX(PRECONDITION,       "precondition_failed",    412,                                          \
           "The map is not at the version If-Match names (or If-None-Match found it); "            \
           "nothing changed.")                                                                     \
    XX(BODY_TOO_LARGE,     "body_too_large",         413,                                          \
           "The body is larger than this server accepts.")                                         \
    XX(LIMIT_EXCEEDED,     "limit_exceeded",         413, "A limit of this server was exceeded.")  \
    XX(URI_TOO_LONG,       "uri_too_long",           414,                                          \
           "The request target has more query parameters than this server accepts.")               \
    XX(UNSUPPORTED_MEDIA,  "unsupported_media_type", 415,                                          \
           "The Content-Type is not accepted here.")                                               \
    XX(HOST_NOT_ALLOWED,   "host_not_allowed",       421,                                          \
           "This server does not answer for that Host.")                                           \
    XX(INVALID_VALUE,      "invalid_value",          422,                                          \
           "A field has a value this server cannot use.")                                          \
    XX(OFF_MAP,            "off_map",                422, "A cell is outside the map.")            \
    XX(BLOCKED,            "blocked",                422, "A cell is blocked.")                    \
    XX(UNSUPPORTED,        "unsupported",            422,                                          \
           "The algorithm is not available on this map.")                                          \
    XX(TOO_MANY_CHANGES,   "too_many_changes",       422,                                          \
           "The PATCH has more changes than this server applies at once.")                         \
    XX(UPGRADE_REQUIRED,   "upgrade_required",       426,                                          \
           "This is a WebSocket endpoint: send the RFC 6455 handshake.")                           \
    XX(TOO_MANY_SESSIONS,  "too_many_sessions",      429, "The map's session quota is used up.")   \
    XX(INTERNAL,           "internal",               500, "Internal error.")                       \
    XX(STORAGE,            "storage_failed",         500,                                          \
           "The data directory could not be written; nothing changed.")                            \
    XX(NOT_IMPLEMENTED,    "not_implemented",        501,                                          \
           "The request uses an HTTP feature this server does not implement.")                     \
    XX(INSUFFICIENT_STORAGE, "insufficient_storage", 507,                                          \
           "The server's memory budget (--max-memory) cannot hold this; nothing changed.")         \
    XX(OVERLOADED,         "overloaded",             503, "The server is busy. Retry later.")      \
    XX(SHUTTING_DOWN,      "shutting_down",          503, "The server is shutting down.")          \
    XX(STORE_UNAVAILABLE,  "store_unavailable",      503,                                          \
           "The shared map store did not answer in time; retry.")                                  \
    XX(STORE_OUTCOME_UNKNOWN, "store_outcome_unknown", 503,                                        \
           "The change was sent to the shared map store, which did not confirm it in time: it "    \
           "may or may not have been made. Read the map, or retry with If-Match.")                 \
    XX(STORE_NOT_DURABLE,  "store_not_durable",      503,                                          \
           "The shared map store neither persists nor replicates, so changes are refused; "        \
           "nothing changed.")                                                                     \
    XX(NO_MEMORY,          "out_of_memory",          503, "Out of memory.")                        \
    XX(NOT_READY,          "not_ready",              503,                                          \
           "The server is still loading its stored maps. Retry later.")                            \
    XX(DEADLINE,           "deadline_exceeded",      504,                                          \
           "The deadline passed before the answer was ready.")
/* clang-format on */

typedef enum pf_error {
    PF_ERR_NONE = 0, /* no error: success, or "the status's default" for pf_proto_error_set */
#define PF_ERROR_ENUM(name, code, http, sentence) PF_ERR_##name,
    PF_ERRORS(PF_ERROR_ENUM)
#undef PF_ERROR_ENUM
        PF_ERR_COUNT
} pf_error;

/* The API code ("map_not_found"). PF_ERR_NONE and values outside the table
 * give "internal". */
const char *pf_error_code(pf_error e);
/* The HTTP status the error is answered with (404). PF_ERR_NONE and values
 * outside the table give INTERNAL's. */
int pf_error_http_status(pf_error e);
/* The default sentence ("No such map."). */
const char *pf_error_sentence(pf_error e);

/* The error a core status stands for when nothing more precise is known:
 * PF_EPARSE -> INVALID_REQUEST, PF_EINVAL -> INVALID_VALUE, PF_ERANGE ->
 * OFF_MAP, PF_EBLOCKED -> BLOCKED, PF_ELIMIT -> LIMIT_EXCEEDED,
 * PF_EUNSUPPORTED -> UNSUPPORTED, PF_ECANCELED -> DEADLINE, PF_ENOMEM ->
 * NO_MEMORY, PF_EIO -> STORAGE, anything else -> INTERNAL. */
pf_error pf_error_for_status(pf_status st);

typedef struct pf_proto_error {
    pf_status status; /* what the parser returned */
    pf_error code;
    char field[80]; /* "" when no single field is at fault */
    char message[256];
} pf_proto_error;

/* Fills e; code PF_ERR_NONE takes pf_error_for_status(st); field may be
 * NULL. Returns st so a parser can `return pf_proto_error_set(...)`. The
 * message and field are made valid UTF-8 (pf_utf8_sanitize): a character
 * cut by a precision (%.40s) becomes '?'. A field or message longer than
 * its buffer is cut before the character that does not fit whole
 * (pf_utf8_cut), never inside it. */
pf_status pf_proto_error_set(pf_proto_error *e, pf_status st, pf_error code, const char *field,
                             const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Puts e's field under parent: "parent.field", or "parent" when e names
 * no field ("lines[3]" and "cells[0].x" give "lines[3].cells[0].x"). Cut
 * at a whole character to fit e->field, parent kept first; the result is
 * valid UTF-8. */
void pf_proto_error_nest(pf_proto_error *e, const char *parent);

/* Writes the error object {"code":..,"message":..,"field":..} as a value.
 * message NULL writes the error's default sentence; field NULL or "" omits
 * it. */
void pf_proto_write_error_obj(pf_jsonw *w, pf_error code, const char *message, const char *field);
/* Writes the whole body {"error":{...}}, as pf_proto_write_error_obj. */
void pf_proto_write_error(pf_jsonw *w, pf_error code, const char *message, const char *field);
/* Same from a filled pf_proto_error. */
void pf_proto_write_perror(pf_jsonw *w, const pf_proto_error *e);

#endif
