/* jsonw.h -- a small, fast JSON writer that appends to a growable buffer.
 *
 * Every response of the server is written with it: no tree is built, so a
 * 300-cell path costs a few microseconds to write (one pass, integers
 * formatted by hand). Commas between members and elements are inserted by the
 * writer, which tracks nesting up to PF_JSONW_MAX_DEPTH levels.
 *
 * Errors are sticky: after an allocation failure or a nesting error every
 * later call is a no-op and pf_jsonw_failed() returns true, so callers check
 * once at the end. A writer is not thread-safe; use one per response.
 */
#ifndef PF_JSONW_H
#define PF_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"

#define PF_JSONW_MAX_DEPTH 32

typedef struct pf_jsonw {
    char *buf; /* owned; NUL-terminated while not failed */
    size_t len;
    size_t cap;
    bool failed;
    int depth;
    /* first[d]: no member or element written yet at depth d; after_key: a
     * key was just written, so the next value takes no comma. */
    bool first[PF_JSONW_MAX_DEPTH + 1];
    bool after_key;
} pf_jsonw;

/* Starts an empty writer with room for `cap_hint` bytes (0 = a default).
 * Allocation failures are reported through pf_jsonw_failed. */
void pf_jsonw_init(pf_jsonw *w, size_t cap_hint);
/* Frees the buffer (a no-op after pf_jsonw_take). */
void pf_jsonw_free(pf_jsonw *w);
/* Hands the buffer to the caller (free with free()) and resets the writer.
 * NULL when the writer failed. *len receives the length. */
char *pf_jsonw_take(pf_jsonw *w, size_t *len);
bool pf_jsonw_failed(const pf_jsonw *w);

/* Structure. A key is only valid directly inside an object; a value after a
 * key is that member's value. */
void pf_jsonw_obj_begin(pf_jsonw *w);
void pf_jsonw_obj_end(pf_jsonw *w);
void pf_jsonw_arr_begin(pf_jsonw *w);
void pf_jsonw_arr_end(pf_jsonw *w);
void pf_jsonw_key(pf_jsonw *w, const char *key);

/* Values. Strings are escaped (control characters as \u00XX), and every
 * byte that does not start a valid UTF-8 sequence is written as \ufffd:
 * strings always come out as valid JSON in valid UTF-8, whatever they
 * hold. Keys get the same treatment. */
void pf_jsonw_str(pf_jsonw *w, const char *s);
void pf_jsonw_strn(pf_jsonw *w, const char *s, size_t n);
void pf_jsonw_int(pf_jsonw *w, int64_t v);
void pf_jsonw_uint(pf_jsonw *w, uint64_t v);
/* The shortest decimal that reads back as the same double; NaN and
 * infinities, which JSON cannot carry, are written as null. */
void pf_jsonw_double(pf_jsonw *w, double v);
void pf_jsonw_bool(pf_jsonw *w, bool v);
void pf_jsonw_null(pf_jsonw *w);
/* A pre-formatted JSON value, copied verbatim. */
void pf_jsonw_raw(pf_jsonw *w, const char *json, size_t n);
/* Pre-formatted members ("k":v,"k2":v2, no braces) copied verbatim into the
 * object being written; n = 0 writes nothing. */
void pf_jsonw_raw_members(pf_jsonw *w, const char *members, size_t n);
/* Appends bytes as they are, outside the JSON structure: for writers of
 * other text formats (Prometheus metrics) that reuse the buffer. */
void pf_jsonw_append(pf_jsonw *w, const char *s, size_t n);
/* [x,y], the point form of the API. */
void pf_jsonw_point(pf_jsonw *w, int32_t x, int32_t y);
/* Points p[0..n) as [x,y] values, as n pf_jsonw_point calls would write
 * them, in one pass (a path answer's largest part: one reserve, two digits
 * a table lookup). */
void pf_jsonw_points(pf_jsonw *w, const pf_point *p, size_t n);
/* A point [x, y, z] of floats, each rounded to 1e-4. */
void pf_jsonw_point3(pf_jsonw *w, const float *p);
/* v rounded to 1e-4: the text pf_jsonw_double(round(v * 1e4) / 1e4)
 * writes, without snprintf. */
void pf_jsonw_fixed4(pf_jsonw *w, double v);
void pf_jsonw_kfixed4(pf_jsonw *w, const char *key, double v);

/* Bytes as a base64 string (RFC 4648 with '=' padding), the compact form
 * of per-cell answers (flow fields). Whole, or in pieces that need not be
 * multiples of three bytes: b64_begin opens the string, b64_part appends
 * (keeping in b the up to two bytes that do not fill a group yet),
 * b64_end pads and closes it. Nothing else may be written in between. */
typedef struct pf_jsonw_b64 {
    unsigned char held[2];
    int nheld;
} pf_jsonw_b64;
void pf_jsonw_base64(pf_jsonw *w, const void *data, size_t n);
void pf_jsonw_b64_begin(pf_jsonw *w, pf_jsonw_b64 *b);
void pf_jsonw_b64_part(pf_jsonw *w, pf_jsonw_b64 *b, const void *data, size_t n);
void pf_jsonw_b64_end(pf_jsonw *w, pf_jsonw_b64 *b);

/* key + value shorthands. */
void pf_jsonw_kstr(pf_jsonw *w, const char *key, const char *s);
void pf_jsonw_kint(pf_jsonw *w, const char *key, int64_t v);
void pf_jsonw_kuint(pf_jsonw *w, const char *key, uint64_t v);
void pf_jsonw_kdouble(pf_jsonw *w, const char *key, double v);
void pf_jsonw_kbool(pf_jsonw *w, const char *key, bool v);

/* Formats v as the shortest round-tripping decimal into out (>= 32 bytes);
 * returns the length. Non-finite values give "null". */
size_t pf_jsonw_fmt_double(double v, char *out);

#endif
