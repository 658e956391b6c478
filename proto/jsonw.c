/* jsonw.c -- see jsonw.h. */
#include "jsonw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

#define JSONW_DEFAULT_CAP 256

void pf_jsonw_init(pf_jsonw *w, size_t cap_hint) {
    memset(w, 0, sizeof(*w));
    w->cap = cap_hint ? cap_hint : JSONW_DEFAULT_CAP;
    w->buf = malloc(w->cap);
    if (!w->buf) {
        w->failed = true;
        w->cap = 0;
        return;
    }
    w->buf[0] = '\0';
    w->first[0] = true;
}

void pf_jsonw_free(pf_jsonw *w) {
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

char *pf_jsonw_take(pf_jsonw *w, size_t *len) {
    char *b = w->failed ? NULL : w->buf;
    if (w->failed) free(w->buf);
    *len = w->failed ? 0 : w->len;
    w->buf = NULL;
    w->len = w->cap = 0;
    return b;
}

bool pf_jsonw_failed(const pf_jsonw *w) { return w->failed; }

/* Makes room for n more bytes plus the terminating NUL. */
static bool reserve(pf_jsonw *w, size_t n) {
    size_t need, nc;
    char *b;
    if (w->failed) return false;
    if (__builtin_add_overflow(w->len, n + 1, &need)) goto fail;
    if (need <= w->cap) return true;
    nc = w->cap ? w->cap : JSONW_DEFAULT_CAP;
    while (nc < need) {
        if (__builtin_mul_overflow(nc, 2, &nc)) goto fail;
    }
    b = realloc(w->buf, nc);
    if (!b) goto fail;
    w->buf = b;
    w->cap = nc;
    return true;
fail:
    w->failed = true;
    return false;
}

static inline void put(pf_jsonw *w, const char *s, size_t n) {
    if (!reserve(w, n)) return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static inline void putc1(pf_jsonw *w, char c) {
    if (!reserve(w, 1)) return;
    w->buf[w->len++] = c;
    w->buf[w->len] = '\0';
}

/* Writes the separator a new value at the current depth needs. */
static inline void sep(pf_jsonw *w) {
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->first[w->depth]) putc1(w, ',');
    w->first[w->depth] = false;
}

static void open_(pf_jsonw *w, char c) {
    sep(w);
    if (w->depth >= PF_JSONW_MAX_DEPTH) {
        w->failed = true;
        return;
    }
    putc1(w, c);
    w->depth++;
    w->first[w->depth] = true;
}

static void close_(pf_jsonw *w, char c) {
    if (w->depth == 0) {
        w->failed = true;
        return;
    }
    w->depth--;
    putc1(w, c);
}

void pf_jsonw_obj_begin(pf_jsonw *w) { open_(w, '{'); }
void pf_jsonw_obj_end(pf_jsonw *w) { close_(w, '}'); }
void pf_jsonw_arr_begin(pf_jsonw *w) { open_(w, '['); }
void pf_jsonw_arr_end(pf_jsonw *w) { close_(w, ']'); }

/* Writes s as a JSON string. A byte that does not start a valid UTF-8
 * sequence (a client's bytes echoed in a message, a sentence cut by
 * snprintf in the middle of a character) becomes U+FFFD, so whatever a
 * string holds, the answer is valid JSON in valid UTF-8. */
static void write_escaped(pf_jsonw *w, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t i, run = 0;
    putc1(w, '"');
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') continue;
        if (c >= 0x80) {
            size_t k = pf_utf8_seq_len((const unsigned char *)s + i, n - i);
            if (k) {
                i += k - 1;
                continue;
            }
            put(w, s + run, i - run);
            run = i + 1;
            put(w, "\\ufffd", 6);
            continue;
        }
        put(w, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            put(w, "\\\"", 2);
            break;
        case '\\':
            put(w, "\\\\", 2);
            break;
        case '\n':
            put(w, "\\n", 2);
            break;
        case '\r':
            put(w, "\\r", 2);
            break;
        case '\t':
            put(w, "\\t", 2);
            break;
        default: {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(w, e, 6);
        }
        }
    }
    put(w, s + run, n - run);
    putc1(w, '"');
}

void pf_jsonw_key(pf_jsonw *w, const char *key) {
    sep(w);
    write_escaped(w, key, strlen(key));
    putc1(w, ':');
    w->after_key = true;
}

void pf_jsonw_str(pf_jsonw *w, const char *s) { pf_jsonw_strn(w, s, strlen(s)); }

void pf_jsonw_strn(pf_jsonw *w, const char *s, size_t n) {
    sep(w);
    write_escaped(w, s, n);
}

/* Digits of v, written backwards into the end of tmp; returns the start. */
static char *fmt_u64(uint64_t v, char *end) {
    char *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

void pf_jsonw_uint(pf_jsonw *w, uint64_t v) {
    char tmp[24], *p = fmt_u64(v, tmp + sizeof(tmp));
    sep(w);
    put(w, p, (size_t)(tmp + sizeof(tmp) - p));
}

void pf_jsonw_int(pf_jsonw *w, int64_t v) {
    char tmp[24], *p;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    p = fmt_u64(u, tmp + sizeof(tmp));
    if (v < 0) *--p = '-';
    sep(w);
    put(w, p, (size_t)(tmp + sizeof(tmp) - p));
}

size_t pf_jsonw_fmt_double(double v, char *out) {
    int n;
    if (!isfinite(v)) {
        memcpy(out, "null", 5);
        return 4;
    }
    if (v == 0) {
        out[0] = '0';
        out[1] = '\0';
        return 1;
    }
    /* Integral values that fit exactly: the integer form. */
    if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) {
        char tmp[24], *p;
        int64_t iv = (int64_t)v;
        uint64_t u = iv < 0 ? (uint64_t)0 - (uint64_t)iv : (uint64_t)iv;
        p = fmt_u64(u, tmp + sizeof(tmp));
        if (iv < 0) *--p = '-';
        n = (int)(tmp + sizeof(tmp) - p);
        memcpy(out, p, (size_t)n);
        out[n] = '\0';
        return (size_t)n;
    }
    /* The shortest of %.15g, %.16g, %.17g that reads back exactly: 17
     * significant digits always round-trip an IEEE double. */
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(out, 32, "%.*g", prec, v);
        if (prec == 17 || strtod(out, NULL) == v) break;
    }
    return (size_t)n;
}

void pf_jsonw_double(pf_jsonw *w, double v) {
    char tmp[32];
    size_t n = pf_jsonw_fmt_double(v, tmp);
    sep(w);
    put(w, tmp, n);
}

void pf_jsonw_bool(pf_jsonw *w, bool v) {
    sep(w);
    if (v)
        put(w, "true", 4);
    else
        put(w, "false", 5);
}

void pf_jsonw_null(pf_jsonw *w) {
    sep(w);
    put(w, "null", 4);
}

void pf_jsonw_raw(pf_jsonw *w, const char *json, size_t n) {
    sep(w);
    put(w, json, n);
}

void pf_jsonw_raw_members(pf_jsonw *w, const char *members, size_t n) {
    if (n == 0) return;
    sep(w); /* the members count as one: the next member takes a comma */
    put(w, members, n);
}

void pf_jsonw_append(pf_jsonw *w, const char *s, size_t n) { put(w, s, n); }

static const char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Encodes the whole groups of three of p[0..n) straight into the buffer. */
static void b64_groups(pf_jsonw *w, const unsigned char *p, size_t n) {
    size_t groups = n / 3;
    char *o;
    if (groups == 0 || !reserve(w, 4 * groups)) return;
    o = w->buf + w->len;
    for (size_t i = 0; i < groups; i++, p += 3, o += 4) {
        uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
        o[0] = b64_digits[v >> 18];
        o[1] = b64_digits[(v >> 12) & 63];
        o[2] = b64_digits[(v >> 6) & 63];
        o[3] = b64_digits[v & 63];
    }
    w->len += 4 * groups;
    w->buf[w->len] = '\0';
}

void pf_jsonw_b64_begin(pf_jsonw *w, pf_jsonw_b64 *b) {
    sep(w);
    putc1(w, '"');
    b->nheld = 0;
}

void pf_jsonw_b64_part(pf_jsonw *w, pf_jsonw_b64 *b, const void *data, size_t n) {
    const unsigned char *p = data;
    /* Complete a held group first. */
    while (b->nheld > 0 && n > 0) {
        unsigned char g[3];
        if (b->nheld + (int)n < 3) {
            while (n--) b->held[b->nheld++] = *p++;
            return;
        }
        memcpy(g, b->held, (size_t)b->nheld);
        memcpy(g + b->nheld, p, (size_t)(3 - b->nheld));
        p += 3 - b->nheld;
        n -= (size_t)(3 - b->nheld);
        b->nheld = 0;
        b64_groups(w, g, 3);
    }
    b64_groups(w, p, n);
    p += n - n % 3;
    for (size_t i = 0; i < n % 3; i++) b->held[b->nheld++] = p[i];
}

void pf_jsonw_b64_end(pf_jsonw *w, pf_jsonw_b64 *b) {
    if (b->nheld > 0) {
        uint32_t v = (uint32_t)b->held[0] << 16 | (b->nheld > 1 ? (uint32_t)b->held[1] << 8 : 0);
        char o[4] = {b64_digits[v >> 18], b64_digits[(v >> 12) & 63],
                     b->nheld > 1 ? b64_digits[(v >> 6) & 63] : '=', '='};
        put(w, o, 4);
        b->nheld = 0;
    }
    putc1(w, '"');
}

void pf_jsonw_base64(pf_jsonw *w, const void *data, size_t n) {
    pf_jsonw_b64 b;
    pf_jsonw_b64_begin(w, &b);
    pf_jsonw_b64_part(w, &b, data, n);
    pf_jsonw_b64_end(w, &b);
}

/* v rounded to 4 decimals, as pf_jsonw_fmt_double writes that value, but
 * by integer arithmetic: the value is q / 10^4 with q = round(v x 10^4),
 * and below 10^11 it has at most 15 significant digits, so %.15g (the
 * first of fmt_double's forms) prints exactly those digits, without
 * trailing zeros and never in exponent form (|v| >= 10^-4 when q != 0).
 * Other values go through fmt_double. Batches of navmesh paths spent a
 * quarter of the server's time in snprintf and strtod here. */
static size_t fmt_fixed4(double v, char *out) {
    const double r = round(v * 1e4);
    if (!(fabs(r) < 1e15)) return pf_jsonw_fmt_double(r / 1e4, out);
    const int64_t q = (int64_t)r;
    if (q == 0) {
        out[0] = '0';
        out[1] = '\0';
        return 1;
    }
    uint64_t u = q < 0 ? (uint64_t)0 - (uint64_t)q : (uint64_t)q;
    char tmp[32], *end = tmp + sizeof(tmp), *p = end;
    unsigned frac = (unsigned)(u % 10000);
    int nd = 4;
    while (nd > 0 && frac % 10 == 0) {
        frac /= 10;
        nd--;
    }
    for (int i = 0; i < nd; i++) {
        *--p = (char)('0' + frac % 10);
        frac /= 10;
    }
    if (nd > 0) *--p = '.';
    p = fmt_u64(u / 10000, p);
    if (q < 0) *--p = '-';
    const size_t n = (size_t)(end - p);
    memcpy(out, p, n);
    out[n] = '\0';
    return n;
}

void pf_jsonw_fixed4(pf_jsonw *w, double v) {
    char tmp[32];
    const size_t n = fmt_fixed4(v, tmp);
    sep(w);
    put(w, tmp, n);
}

void pf_jsonw_kfixed4(pf_jsonw *w, const char *key, double v) {
    pf_jsonw_key(w, key);
    pf_jsonw_fixed4(w, v);
}

void pf_jsonw_point3(pf_jsonw *w, const float *p) {
    pf_jsonw_arr_begin(w);
    for (int k = 0; k < 3; k++) pf_jsonw_fixed4(w, (double)p[k]);
    pf_jsonw_arr_end(w);
}

void pf_jsonw_point(pf_jsonw *w, int32_t x, int32_t y) {
    char tmp[32], *end = tmp + sizeof(tmp), *p = end;
    uint32_t ux = x < 0 ? (uint32_t)0 - (uint32_t)x : (uint32_t)x;
    uint32_t uy = y < 0 ? (uint32_t)0 - (uint32_t)y : (uint32_t)y;
    *--p = ']';
    do {
        *--p = (char)('0' + uy % 10);
        uy /= 10;
    } while (uy);
    if (y < 0) *--p = '-';
    *--p = ',';
    do {
        *--p = (char)('0' + ux % 10);
        ux /= 10;
    } while (ux);
    if (x < 0) *--p = '-';
    *--p = '[';
    sep(w);
    put(w, p, (size_t)(end - p));
}

/* "00" .. "99". */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* Writes v's decimal digits ending just before end; returns where they
 * start. */
static inline char *fmt_u32(uint32_t v, char *end) {
    while (v >= 100) {
        uint32_t r = v % 100; /* one division: the compiler pairs % and / */
        v /= 100;
        end -= 2;
        memcpy(end, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * v, 2);
    } else {
        *--end = (char)('0' + v);
    }
    return end;
}

/* Writes v (a signed 32-bit value) at o; returns the end. The digits are
 * written in place from their last one back, so no copy follows. */
static inline char *put_i32(char *o, int32_t v) {
    uint32_t u = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
    int d = u < 10           ? 1
            : u < 100        ? 2
            : u < 1000       ? 3
            : u < 10000      ? 4
            : u < 100000     ? 5
            : u < 1000000    ? 6
            : u < 10000000   ? 7
            : u < 100000000  ? 8
            : u < 1000000000 ? 9
                             : 10;
    if (v < 0) *o++ = '-';
    fmt_u32(u, o + d);
    return o + d;
}

void pf_jsonw_points(pf_jsonw *w, const pf_point *pts, size_t n) {
    /* A point takes at most 1 + 11 + 1 + 11 + 1 bytes, and one separator. */
    size_t room;
    char *o;
    if (n == 0) return;
    if (__builtin_mul_overflow(n, (size_t)26, &room) || !reserve(w, room)) {
        w->failed = true;
        return;
    }
    sep(w);
    o = w->buf + w->len;
    for (size_t i = 0; i < n; i++) {
        if (i) *o++ = ',';
        *o++ = '[';
        o = put_i32(o, pts[i].x);
        *o++ = ',';
        o = put_i32(o, pts[i].y);
        *o++ = ']';
    }
    w->len = (size_t)(o - w->buf);
    w->buf[w->len] = '\0';
}

void pf_jsonw_kstr(pf_jsonw *w, const char *key, const char *s) {
    pf_jsonw_key(w, key);
    pf_jsonw_str(w, s);
}

void pf_jsonw_kint(pf_jsonw *w, const char *key, int64_t v) {
    pf_jsonw_key(w, key);
    pf_jsonw_int(w, v);
}

void pf_jsonw_kuint(pf_jsonw *w, const char *key, uint64_t v) {
    pf_jsonw_key(w, key);
    pf_jsonw_uint(w, v);
}

void pf_jsonw_kdouble(pf_jsonw *w, const char *key, double v) {
    pf_jsonw_key(w, key);
    pf_jsonw_double(w, v);
}

void pf_jsonw_kbool(pf_jsonw *w, const char *key, bool v) {
    pf_jsonw_key(w, key);
    pf_jsonw_bool(w, v);
}
