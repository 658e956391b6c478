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

/* The reader's state: what is read so far. */
typedef struct obj_reader {
    float *verts;
    size_t vcap, nverts; /* in vertices */
    uint32_t *tris;
    size_t tcap, ntris; /* in triangles */
    uint32_t *face;     /* the current face's vertex indices */
    size_t fcap;
    uint32_t max_vertices, max_triangles;
    /* Positive indices may name vertices read later (the format allows
     * it); they are checked against the final count. */
    int64_t max_forward;
    size_t max_forward_line;
    size_t line;
    pf_nav_error *err;
} obj_reader;

/* "v x y z [w] [r g b]" after the "v": the vertex appended. */
static pf_status read_vertex(obj_reader *r, const char *s, const char *le) {
    const char *tok;
    size_t n;
    double c[3];
    int k = 0;
    while (next_token(&s, le, &tok, &n)) {
        if (tok[0] == '#') break;
        double v;
        if (!parse_float(tok, n, &v))
            return fail(r->err, PF_EPARSE, "obj", r->line,
                        "vertex coordinate '%.*s' is not a number", (int)(n < 32 ? n : 32), tok);
        if (k < 3) {
            if (fabs(v) > PF_OBJ_MAX_COORD)
                return fail(r->err, PF_EINVAL, "obj", r->line,
                            "vertex coordinate %g is outside +-%g", v, PF_OBJ_MAX_COORD);
            c[k] = v;
        }
        if (++k > 7)
            return fail(r->err, PF_EPARSE, "obj", r->line, "a vertex has more than 7 numbers");
    }
    if (k < 3) return fail(r->err, PF_EPARSE, "obj", r->line, "a vertex needs x, y and z");
    if (r->nverts >= r->max_vertices)
        return fail(r->err, PF_ELIMIT, "limits.max_vertices", r->line,
                    "more than %u vertices (limits.max_vertices)", r->max_vertices);
    if (!grow((void **)&r->verts, &r->vcap, r->nverts + 1, 3 * sizeof(float)))
        return fail(r->err, PF_ENOMEM, "obj", r->line, "out of memory");
    for (int i = 0; i < 3; i++) r->verts[r->nverts * 3 + (size_t)i] = (float)c[i];
    r->nverts++;
    return PF_OK;
}

/* One face vertex "i", "i/t", "i//n" or "i/t/n": *v its 0-based vertex. */
static pf_status read_face_vertex(obj_reader *r, const char *tok, size_t n, int64_t *v) {
    const char *q = tok, *qe = tok + n;
    int64_t idx;
    if (!parse_index(&q, qe, &idx) || idx == 0)
        return fail(r->err, PF_EPARSE, "obj", r->line,
                    "face vertex '%.*s' is not a nonzero vertex index", (int)(n < 32 ? n : 32),
                    tok);
    /* Texture and normal indices: digits, '-' and '/' only. */
    for (const char *c = q; c < qe; c++)
        if (!((*c >= '0' && *c <= '9') || *c == '/' || *c == '-'))
            return fail(r->err, PF_EPARSE, "obj", r->line, "face vertex '%.*s' is malformed",
                        (int)(n < 32 ? n : 32), tok);
    if (q < qe && *q != '/')
        return fail(r->err, PF_EPARSE, "obj", r->line, "face vertex '%.*s' is malformed",
                    (int)(n < 32 ? n : 32), tok);
    if (idx < 0) {
        *v = (int64_t)r->nverts + idx;
        if (*v < 0)
            return fail(r->err, PF_EINVAL, "obj", r->line,
                        "face index %lld is before the first vertex", (long long)idx);
        return PF_OK;
    }
    *v = idx - 1;
    if (*v >= (int64_t)r->max_vertices)
        return fail(r->err, PF_EINVAL, "obj", r->line, "face index %lld is past the vertex limit",
                    (long long)idx);
    if (*v >= (int64_t)r->nverts && *v >= r->max_forward) {
        r->max_forward = *v + 1;
        r->max_forward_line = r->line;
    }
    return PF_OK;
}

/* "f v1 v2 v3 ..." after the "f": the face as a fan of triangles. */
static pf_status read_face(obj_reader *r, const char *s, const char *le) {
    const char *tok;
    size_t n, nf = 0;
    while (next_token(&s, le, &tok, &n)) {
        if (tok[0] == '#') break;
        int64_t v = 0;
        pf_status st = read_face_vertex(r, tok, n, &v);
        if (st) return st;
        if (!grow((void **)&r->face, &r->fcap, nf + 1, sizeof(uint32_t)))
            return fail(r->err, PF_ENOMEM, "obj", r->line, "out of memory");
        r->face[nf++] = (uint32_t)v;
    }
    if (nf < 3) return fail(r->err, PF_EPARSE, "obj", r->line, "a face needs at least 3 vertices");
    size_t add = nf - 2;
    if (r->ntris + add > r->max_triangles)
        return fail(r->err, PF_ELIMIT, "limits.max_triangles", r->line,
                    "more than %u triangles (limits.max_triangles)", r->max_triangles);
    if (!grow((void **)&r->tris, &r->tcap, r->ntris + add, 3 * sizeof(uint32_t)))
        return fail(r->err, PF_ENOMEM, "obj", r->line, "out of memory");
    for (size_t i = 1; i + 1 < nf; i++) {
        uint32_t *t = &r->tris[r->ntris * 3];
        t[0] = r->face[0];
        t[1] = r->face[i];
        t[2] = r->face[i + 1];
        r->ntris++;
    }
    return PF_OK;
}

/* Every line of [buf, buf + len). */
static pf_status read_lines(obj_reader *r, const char *buf, size_t len) {
    const char *p = buf, *end = buf + len;
    while (p < end) {
        r->line++;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end;
        if ((size_t)(le - p) > PF_OBJ_MAX_LINE)
            return fail(r->err, PF_ELIMIT, "obj", r->line, "line longer than %d bytes",
                        PF_OBJ_MAX_LINE);
        const char *s = p;
        p = eol ? eol + 1 : end;
        const char *tok;
        size_t n;
        if (!next_token(&s, le, &tok, &n) || tok[0] == '#') continue;
        pf_status st = PF_OK;
        if (token_is(tok, n, "v"))
            st = read_vertex(r, s, le);
        else if (token_is(tok, n, "f"))
            st = read_face(r, s, le);
        /* Anything else: a statement navigation does not need. */
        if (st) return st;
    }
    return PF_OK;
}

pf_status pf_obj_parse(const char *buf, size_t len, uint32_t max_vertices, uint32_t max_triangles,
                       pf_obj *out, pf_nav_error *err) {
    memset(out, 0, sizeof *out);
    obj_reader r;
    memset(&r, 0, sizeof r);
    r.max_vertices = max_vertices;
    r.max_triangles = max_triangles;
    r.err = err;
    pf_status st = read_lines(&r, buf, len);
    if (st) goto out_free;
    if (r.max_forward > (int64_t)r.nverts) {
        st = fail(err, PF_EINVAL, "obj", r.max_forward_line,
                  "face index %lld is past the last vertex (%zu vertices)",
                  (long long)r.max_forward, r.nverts);
        goto out_free;
    }
    if (r.ntris == 0) {
        st = fail(err, PF_EINVAL, "obj", 0, "the geometry has no faces");
        goto out_free;
    }
    free(r.face);
    out->verts = r.verts;
    out->nverts = (uint32_t)r.nverts;
    out->tris = r.tris;
    out->ntris = (uint32_t)r.ntris;
    return PF_OK;

out_free:
    free(r.face);
    free(r.tris);
    free(r.verts);
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
