/* obj.c -- see obj.h. */
#include "obj.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pf_status fail(pf_nav_error *err, pf_status st, const char *field, size_t line,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static pf_status fail(pf_nav_error *err, pf_status st, const char *field, size_t line,
                      const char *fmt, ...) {
    if (!err) return st;
    snprintf(err->field, sizeof err->field, "%s", field);
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (line)
        snprintf(err->message, sizeof err->message, "OBJ line %zu: %s", line, why);
    else
        snprintf(err->message, sizeof err->message, "OBJ: %s", why);
    return st;
}

/* Grows *p (elements of `size` bytes, capacity *cap) to hold at least `need`
 * elements, doubling. false on overflow or ENOMEM (*p unchanged). */
static bool grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap : 256;
    while (ncap < need) {
        if (__builtin_mul_overflow(ncap, (size_t)2, &ncap)) return false;
    }
    size_t bytes;
    if (__builtin_mul_overflow(ncap, size, &bytes)) return false;
    void *q = realloc(*p, bytes);
    if (!q) return false;
    *p = q;
    *cap = ncap;
    return true;
}

static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* The next whitespace-separated token of [*s, end): false at the end. */
static bool next_token(const char **s, const char *end, const char **tok, size_t *n) {
    const char *p = *s;
    while (p < end && is_space(*p)) p++;
    if (p >= end) {
        *s = p;
        return false;
    }
    const char *q = p;
    while (q < end && !is_space(*q)) q++;
    *tok = p;
    *n = (size_t)(q - p);
    *s = q;
    return true;
}

static bool token_is(const char *tok, size_t n, const char *word) {
    return n == strlen(word) && memcmp(tok, word, n) == 0;
}

/* A finite decimal number, the whole token. */
static bool parse_float(const char *tok, size_t n, double *out) {
    char buf[64];
    if (n == 0 || n >= sizeof buf) return false;
    for (size_t i = 0; i < n; i++) {
        char c = tok[i];
        /* strtod also reads hex floats, "inf" and "nan": refuse them. */
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
            return false;
    }
    memcpy(buf, tok, n);
    buf[n] = '\0';
    char *e = NULL;
    double v = strtod(buf, &e);
    if (e != buf + n || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* A decimal integer (optional '-') in [*s, end) up to '/' or the end. */
static bool parse_index(const char **s, const char *end, int64_t *out) {
    const char *p = *s;
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    }
    if (p >= end || *p < '0' || *p > '9') return false;
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > (int64_t)1 << 40) return false;
        p++;
    }
    *s = p;
    *out = neg ? -v : v;
    return true;
}

pf_status pf_obj_parse(const char *buf, size_t len, uint32_t max_vertices, uint32_t max_triangles,
                       pf_obj *out, pf_nav_error *err) {
    memset(out, 0, sizeof *out);
    float *verts = NULL;
    size_t vcap = 0, nverts = 0; /* in vertices */
    uint32_t *tris = NULL;
    size_t tcap = 0, ntris = 0; /* in triangles */
    uint32_t *face = NULL;      /* the current face's vertex indices */
    size_t fcap = 0;
    /* Positive indices may name vertices read later (the format allows
     * it); they are checked against the final count. */
    int64_t max_forward = 0;
    size_t max_forward_line = 0;
    pf_status st = PF_OK;
    size_t line = 0;
    const char *p = buf, *end = buf + len;

    while (p < end) {
        line++;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end;
        if ((size_t)(le - p) > PF_OBJ_MAX_LINE) {
            st = fail(err, PF_ELIMIT, "obj", line, "line longer than %d bytes", PF_OBJ_MAX_LINE);
            goto out_free;
        }
        const char *s = p;
        p = eol ? eol + 1 : end;
        const char *tok;
        size_t n;
        if (!next_token(&s, le, &tok, &n) || tok[0] == '#') continue;
        if (token_is(tok, n, "v")) {
            double c[3];
            int k = 0;
            while (next_token(&s, le, &tok, &n)) {
                if (tok[0] == '#') break;
                double v;
                if (!parse_float(tok, n, &v)) {
                    st = fail(err, PF_EPARSE, "obj", line,
                              "vertex coordinate '%.*s' is not a number", (int)(n < 32 ? n : 32),
                              tok);
                    goto out_free;
                }
                if (k < 3) {
                    if (fabs(v) > PF_OBJ_MAX_COORD) {
                        st = fail(err, PF_EINVAL, "obj", line,
                                  "vertex coordinate %g is outside +-%g", v, PF_OBJ_MAX_COORD);
                        goto out_free;
                    }
                    c[k] = v;
                }
                if (++k > 7) {
                    st = fail(err, PF_EPARSE, "obj", line, "a vertex has more than 7 numbers");
                    goto out_free;
                }
            }
            if (k < 3) {
                st = fail(err, PF_EPARSE, "obj", line, "a vertex needs x, y and z");
                goto out_free;
            }
            if (nverts >= max_vertices) {
                st = fail(err, PF_ELIMIT, "limits.max_vertices", line,
                          "more than %u vertices (limits.max_vertices)", max_vertices);
                goto out_free;
            }
            if (!grow((void **)&verts, &vcap, nverts + 1, 3 * sizeof(float))) {
                st = fail(err, PF_ENOMEM, "obj", line, "out of memory");
                goto out_free;
            }
            for (int i = 0; i < 3; i++) verts[nverts * 3 + (size_t)i] = (float)c[i];
            nverts++;
        } else if (token_is(tok, n, "f")) {
            size_t nf = 0;
            while (next_token(&s, le, &tok, &n)) {
                if (tok[0] == '#') break;
                const char *q = tok, *qe = tok + n;
                int64_t idx;
                if (!parse_index(&q, qe, &idx) || idx == 0) {
                    st = fail(err, PF_EPARSE, "obj", line,
                              "face vertex '%.*s' is not a nonzero vertex index",
                              (int)(n < 32 ? n : 32), tok);
                    goto out_free;
                }
                /* Texture and normal indices: digits, '-' and '/' only. */
                for (const char *r = q; r < qe; r++) {
                    if (!((*r >= '0' && *r <= '9') || *r == '/' || *r == '-')) {
                        st = fail(err, PF_EPARSE, "obj", line, "face vertex '%.*s' is malformed",
                                  (int)(n < 32 ? n : 32), tok);
                        goto out_free;
                    }
                }
                if (q < qe && *q != '/') {
                    st = fail(err, PF_EPARSE, "obj", line, "face vertex '%.*s' is malformed",
                              (int)(n < 32 ? n : 32), tok);
                    goto out_free;
                }
                int64_t v;
                if (idx < 0) {
                    v = (int64_t)nverts + idx;
                    if (v < 0) {
                        st = fail(err, PF_EINVAL, "obj", line,
                                  "face index %lld is before the first vertex", (long long)idx);
                        goto out_free;
                    }
                } else {
                    v = idx - 1;
                    if (v >= (int64_t)max_vertices) {
                        st = fail(err, PF_EINVAL, "obj", line,
                                  "face index %lld is past the vertex limit", (long long)idx);
                        goto out_free;
                    }
                    if (v >= (int64_t)nverts && v >= max_forward) {
                        max_forward = v + 1;
                        max_forward_line = line;
                    }
                }
                if (!grow((void **)&face, &fcap, nf + 1, sizeof(uint32_t))) {
                    st = fail(err, PF_ENOMEM, "obj", line, "out of memory");
                    goto out_free;
                }
                face[nf++] = (uint32_t)v;
            }
            if (nf < 3) {
                st = fail(err, PF_EPARSE, "obj", line, "a face needs at least 3 vertices");
                goto out_free;
            }
            size_t add = nf - 2;
            if (ntris + add > max_triangles) {
                st = fail(err, PF_ELIMIT, "limits.max_triangles", line,
                          "more than %u triangles (limits.max_triangles)", max_triangles);
                goto out_free;
            }
            if (!grow((void **)&tris, &tcap, ntris + add, 3 * sizeof(uint32_t))) {
                st = fail(err, PF_ENOMEM, "obj", line, "out of memory");
                goto out_free;
            }
            for (size_t i = 1; i + 1 < nf; i++) {
                uint32_t *t = &tris[ntris * 3];
                t[0] = face[0];
                t[1] = face[i];
                t[2] = face[i + 1];
                ntris++;
            }
        }
        /* Anything else: a statement navigation does not need. */
    }
    if (max_forward > (int64_t)nverts) {
        st = fail(err, PF_EINVAL, "obj", max_forward_line,
                  "face index %lld is past the last vertex (%zu vertices)", (long long)max_forward,
                  nverts);
        goto out_free;
    }
    if (ntris == 0) {
        st = fail(err, PF_EINVAL, "obj", 0, "the geometry has no faces");
        goto out_free;
    }
    free(face);
    out->verts = verts;
    out->nverts = (uint32_t)nverts;
    out->tris = tris;
    out->ntris = (uint32_t)ntris;
    return PF_OK;

out_free:
    free(face);
    free(tris);
    free(verts);
    return st;
}

void pf_obj_free(pf_obj *o) {
    if (!o) return;
    free(o->verts);
    free(o->tris);
    memset(o, 0, sizeof *o);
}

pf_nav_geom pf_obj_geom(const pf_obj *o) {
    pf_nav_geom g = {o->verts, o->nverts, o->tris, o->ntris};
    return g;
}
