/* jsonr.h -- reading requests with cJSON, strictly.
 *
 * Parsing always takes an explicit length and requires the value to be the
 * whole input (trailing whitespace allowed); cJSON_GetErrorPtr is never used
 * (it is process-global). Numbers are read as doubles and accepted only when
 * finite, integral (where an integer is expected) and inside the range the
 * caller gives. Every error names the field at fault. Thread-safe.
 */
#ifndef PF_PROTO_JSONR_H
#define PF_PROTO_JSONR_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "grid.h"

/* Parses buf[0..len) into *out (free with cJSON_Delete). PF_EPARSE with code
 * malformed_json and the byte offset in the message when the input is not
 * exactly one JSON value, or when a string (a member name included) is not
 * valid UTF-8 or holds a raw control character; PF_EPARSE with code
 * invalid_request when a string holds \u0000. Those two name the field
 * ("doors[0].id") and never copy the offending bytes into the message.
 * PF_ENOMEM. */
pf_status pf_jsonr_parse(const char *buf, size_t len, cJSON **out, pf_proto_error *e);

/* Reads an integer in [min, max]. PF_EPARSE when not a number or not
 * integral (or not finite), PF_EINVAL when out of range. */
pf_status pf_jsonr_int(const cJSON *it, const char *field, int64_t min, int64_t max, int64_t *out,
                       pf_proto_error *e);
/* Reads a finite number in [min, max]: PF_EPARSE / PF_EINVAL as above. */
pf_status pf_jsonr_number(const cJSON *it, const char *field, double min, double max, double *out,
                          pf_proto_error *e);
/* Reads true/false (PF_EPARSE otherwise). */
pf_status pf_jsonr_bool(const cJSON *it, const char *field, bool *out, pf_proto_error *e);
/* Reads a string (borrowed from it). PF_EPARSE otherwise. */
pf_status pf_jsonr_string(const cJSON *it, const char *field, const char **out, pf_proto_error *e);
/* Reads [x, y], two integers within int32 range (range against a map is
 * the search's business: off-map is PF_ERANGE there). PF_EPARSE otherwise. */
pf_status pf_jsonr_point(const cJSON *it, const char *field, pf_point *out, pf_proto_error *e);
/* A point [x, y, z] of three finite numbers within +-1e7 (PF_EPARSE, or
 * PF_EINVAL past the range), as floats. */
#define PF_JSONR_MAX_COORD 1e7
pf_status pf_jsonr_point3(const cJSON *it, const char *field, float out[3], pf_proto_error *e);
/* PF_EPARSE unless it is an object. */
pf_status pf_jsonr_object(const cJSON *it, const char *field, pf_proto_error *e);

/* Checks that every member of object `obj` is named in `allowed` (NULL
 * terminated) and that no name repeats. PF_EPARSE naming the member
 * (prefixed by `prefix`) otherwise. */
pf_status pf_jsonr_check_members(const cJSON *obj, const char *const *allowed, const char *prefix,
                                 pf_proto_error *e);

#endif
