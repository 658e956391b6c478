/* map_io.c -- Moving AI .map/.scen and ASCII-with-legend parsers. */
#include "map_io.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid_internal.h"

static pf_status fail(pf_parse_error *err, int32_t line, pf_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static pf_status fail(pf_parse_error *err, int32_t line, pf_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        err->line = line;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    return st;
}

/* A line reader over a buffer: returns the next line without its "\n" or
 * "\r\n", or false at the end. */
typedef struct line_reader {
    const char *p, *end;
    int32_t lineno;
} line_reader;

static bool next_line(line_reader *r, const char **line, size_t *len) {
    const char *nl;
    if (r->p >= r->end) return false;
    nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    *line = r->p;
    *len = (size_t)((nl ? nl : r->end) - r->p);
    r->p = nl ? nl + 1 : r->end;
    if (*len > 0 && (*line)[*len - 1] == '\r') (*len)--;
    r->lineno++;
    return true;
}

static bool is_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return false;
    return true;
}

void pf_legend_movingai(pf_legend legend) {
    for (int i = 0; i < 256; i++) legend[i] = -1;
    legend['.'] = legend['G'] = legend['S'] = 1;
    legend['@'] = legend['O'] = legend['T'] = legend['W'] = 0;
}

/* Checks w x h against the limits before anything is allocated. */
static pf_status check_size(int64_t w, int64_t h, const pf_grid_limits *lim, int32_t line,
                            pf_parse_error *err) {
    pf_grid_limits l = lim ? *lim : pf_grid_default_limits();
    if (w < 1 || h < 1)
        return fail(err, line, PF_EPARSE, "map is empty (%lldx%lld)", (long long)w, (long long)h);
    if (w > l.max_side || h > l.max_side)
        return fail(err, line, PF_ELIMIT, "map side %lld exceeds the limit of %d cells",
                    (long long)(w > h ? w : h), l.max_side);
    if (w * h > l.max_cells)
        return fail(err, line, PF_ELIMIT, "map of %lldx%lld cells exceeds the limit of %lld cells",
                    (long long)w, (long long)h, (long long)l.max_cells);
    return PF_OK;
}

/* Fills row y of g from a text row, mapping characters through the legend. */
static pf_status fill_row(pf_grid *g, int32_t y, const char *row, size_t len,
                          const pf_legend legend, int32_t line, pf_parse_error *err) {
    if (len != (size_t)g->w)
        return fail(err, line, PF_EPARSE, "row %d has %zu characters, expected %d", y, len, g->w);
    for (int32_t x = 0; x < g->w; x++) {
        unsigned char c = (unsigned char)row[x];
        int16_t cost = legend[c];
        if (cost < 0) {
            if (c >= 32 && c < 127)
                return fail(err, line, PF_EPARSE, "unknown map character '%c' at column %d", c,
                            x + 1);
            return fail(err, line, PF_EPARSE, "unknown map byte 0x%02x at column %d", c, x + 1);
        }
        g->cost[y * g->w + x] = (uint8_t)cost;
    }
    return PF_OK;
}

/* After filling cost[] directly, bring the counters and move masks in step. */
static void finish_grid(pf_grid *g) {
    size_t cells = (size_t)g->w * g->h;
    memset(g->cost_hist, 0, sizeof(g->cost_hist));
    g->walkable = 0;
    for (size_t i = 0; i < cells; i++) {
        g->cost_hist[g->cost[i]]++;
        g->walkable += g->cost[i] != 0;
    }
    pf_grid_set_rules(g, g->connectivity, g->corner_cutting);
}

/* Parses a decimal integer field "key N" of a header line. */
static bool header_int(const char *line, size_t len, const char *key, int64_t *v) {
    size_t kl = strlen(key), i;
    int64_t n = 0;
    if (len <= kl || memcmp(line, key, kl) != 0 || (line[kl] != ' ' && line[kl] != '\t'))
        return false;
    i = kl;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    if (i == len) return false;
    for (; i < len; i++) {
        if (line[i] == ' ' || line[i] == '\t') {
            if (!is_blank(line + i, len - i)) return false;
            break;
        }
        if (line[i] < '0' || line[i] > '9') return false;
        n = n * 10 + (line[i] - '0');
        if (n > INT32_MAX) return false;
    }
    *v = n;
    return true;
}

pf_status pf_map_parse_movingai(const char *buf, size_t len, const pf_grid_limits *lim,
                                pf_grid **out, pf_parse_error *err) {
    line_reader r = {buf, buf + len, 0};
    const char *line;
    size_t ll;
    int64_t w = -1, h = -1;
    bool have_type = false;
    pf_legend legend;
    pf_grid *g = NULL;
    pf_status st;

    *out = NULL;
    /* Header: type, height, width in any order, then "map". */
    for (;;) {
        int64_t v;
        if (!next_line(&r, &line, &ll))
            return fail(err, r.lineno, PF_EPARSE, "unexpected end of input in the header");
        if (ll >= 4 && memcmp(line, "type", 4) == 0 && (ll == 4 || line[4] == ' ')) {
            have_type = true;
        } else if (header_int(line, ll, "height", &v)) {
            h = v;
        } else if (header_int(line, ll, "width", &v)) {
            w = v;
        } else if (ll == 3 && memcmp(line, "map", 3) == 0) {
            break;
        } else {
            return fail(err, r.lineno, PF_EPARSE,
                        "expected 'type', 'height N', 'width N' or 'map' in the header");
        }
    }
    if (!have_type) return fail(err, r.lineno, PF_EPARSE, "header has no 'type' line");
    if (w < 0 || h < 0)
        return fail(err, r.lineno, PF_EPARSE, "header must give both 'height' and 'width'");
    st = check_size(w, h, lim, r.lineno, err);
    if (st) return st;
    st = pf_grid_create((int32_t)w, (int32_t)h, lim, &g);
    if (st)
        return fail(err, r.lineno, st, "cannot allocate a %lldx%lld map", (long long)w,
                    (long long)h);

    pf_legend_movingai(legend);
    for (int32_t y = 0; y < h; y++) {
        if (!next_line(&r, &line, &ll)) {
            st = fail(err, r.lineno, PF_EPARSE, "map has %d rows, header says %lld", y,
                      (long long)h);
            goto out_free_grid;
        }
        st = fill_row(g, y, line, ll, legend, r.lineno, err);
        if (st) goto out_free_grid;
    }
    while (next_line(&r, &line, &ll)) {
        if (!is_blank(line, ll)) {
            st = fail(err, r.lineno, PF_EPARSE, "unexpected text after the %lld map rows",
                      (long long)h);
            goto out_free_grid;
        }
    }
    finish_grid(g);
    *out = g;
    return PF_OK;

out_free_grid:
    pf_grid_destroy(g);
    return st;
}

pf_status pf_map_from_rows(const char *const *rows, const size_t *lens, int32_t h,
                           const pf_legend legend, const pf_grid_limits *lim, pf_grid **out,
                           pf_parse_error *err) {
    pf_grid *g = NULL;
    pf_status st;

    *out = NULL;
    if (h < 1) return fail(err, 0, PF_EPARSE, "map has no rows");
    st = check_size((int64_t)lens[0], h, lim, 1, err);
    if (st) return st;
    st = pf_grid_create((int32_t)lens[0], h, lim, &g);
    if (st) return fail(err, 1, st, "cannot allocate the map");
    for (int32_t y = 0; y < h; y++) {
        st = fill_row(g, y, rows[y], lens[y], legend, y + 1, err);
        if (st) goto out_free_grid;
    }
    finish_grid(g);
    *out = g;
    return PF_OK;

out_free_grid:
    pf_grid_destroy(g);
    return st;
}

pf_status pf_map_parse_ascii(const char *buf, size_t len, const pf_legend legend,
                             const pf_grid_limits *lim, pf_grid **out, pf_parse_error *err) {
    line_reader r = {buf, buf + len, 0};
    const char *line;
    size_t ll, n = 0, cap = 0;
    const char **rows = NULL;
    size_t *lens = NULL;
    pf_grid_limits l = lim ? *lim : pf_grid_default_limits();
    pf_status st;

    *out = NULL;
    while (next_line(&r, &line, &ll)) {
        if (ll == 0 && r.p >= r.end) break; /* trailing newline */
        if (n >= (size_t)l.max_side)
            return free(rows), free(lens),
                   fail(err, r.lineno, PF_ELIMIT, "more than %d rows", l.max_side);
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            const char **nr = realloc(rows, nc * sizeof(*nr));
            size_t *nl;
            if (!nr) goto out_nomem;
            rows = nr;
            nl = realloc(lens, nc * sizeof(*nl));
            if (!nl) goto out_nomem;
            lens = nl;
            cap = nc;
        }
        rows[n] = line;
        lens[n++] = ll;
    }
    if (n == 0) {
        st = fail(err, 0, PF_EPARSE, "map has no rows");
    } else {
        st = pf_map_from_rows(rows, lens, (int32_t)n, legend, lim, out, err);
    }
    free(rows);
    free(lens);
    return st;

out_nomem:
    free(rows);
    free(lens);
    return fail(err, r.lineno, PF_ENOMEM, "out of memory");
}

/* Scenarios */

/* Splits a line into at most `max` whitespace-separated fields (NUL-ended
 * copies in buf). Returns the number of fields, or max + 1 if there are more. */
static int split_fields(const char *line, size_t len, char *buf, size_t bufsz, char **fields,
                        int max) {
    int n = 0;
    size_t i = 0, o = 0;
    while (i < len) {
        while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
        if (i == len) break;
        if (n == max) return max + 1;
        fields[n++] = buf + o;
        while (i < len && line[i] != ' ' && line[i] != '\t') {
            if (o + 1 >= bufsz) return max + 1;
            buf[o++] = line[i++];
        }
        buf[o++] = '\0';
    }
    return n;
}

static bool parse_i32(const char *s, int32_t *v) {
    char *end;
    long n = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || n < INT32_MIN || n > INT32_MAX) return false;
    *v = (int32_t)n;
    return true;
}

pf_status pf_scen_parse(const char *buf, size_t len, size_t max_entries, pf_scen *out,
                        pf_parse_error *err) {
    line_reader r = {buf, buf + len, 0};
    const char *line;
    size_t ll, cap = 0;
    char fbuf[1024];
    char *f[9];
    pf_status st = PF_OK;
    static const char *const names[9] = {"bucket",     "map",     "map width",
                                         "map height", "start x", "start y",
                                         "goal x",     "goal y",  "optimal length"};

    memset(out, 0, sizeof(*out));
    if (!next_line(&r, &line, &ll) || ll < 9 || memcmp(line, "version 1", 9) != 0)
        return fail(err, 1, PF_EPARSE, "scenario file must start with 'version 1'");
    while (next_line(&r, &line, &ll)) {
        pf_scen_entry e;
        char *end;
        int nf;
        if (is_blank(line, ll)) continue;
        nf = split_fields(line, ll, fbuf, sizeof(fbuf), f, 9);
        if (nf != 9) {
            st = fail(err, r.lineno, PF_EPARSE, "expected 9 fields, found %s",
                      nf > 9 ? "more" : (nf == 0 ? "none" : "fewer"));
            goto out_free;
        }
        int32_t *ints[7] = {&e.bucket,  &e.map_w,  &e.map_h, &e.start.x,
                            &e.start.y, &e.goal.x, &e.goal.y};
        int fi[7] = {0, 2, 3, 4, 5, 6, 7};
        for (int k = 0; k < 7; k++)
            if (!parse_i32(f[fi[k]], ints[k])) {
                st = fail(err, r.lineno, PF_EPARSE, "field %d (%s) is not an integer: '%s'",
                          fi[k] + 1, names[fi[k]], f[fi[k]]);
                goto out_free;
            }
        e.optimal = strtod(f[8], &end);
        if (*end != '\0' || !isfinite(e.optimal) || e.optimal < 0) {
            st = fail(err, r.lineno, PF_EPARSE, "field 9 (optimal length) is not a length: '%s'",
                      f[8]);
            goto out_free;
        }
        if (max_entries && out->count >= max_entries) {
            st = fail(err, r.lineno, PF_ELIMIT, "more than %zu scenario entries", max_entries);
            goto out_free;
        }
        if (out->count == 0) snprintf(out->map, sizeof(out->map), "%s", f[1]);
        if (out->count == cap) {
            size_t nc = cap ? cap * 2 : 256;
            pf_scen_entry *ne = realloc(out->entries, nc * sizeof(*ne));
            if (!ne) {
                st = fail(err, r.lineno, PF_ENOMEM, "out of memory");
                goto out_free;
            }
            out->entries = ne;
            cap = nc;
        }
        out->entries[out->count++] = e;
    }
    return PF_OK;

out_free:
    pf_scen_free(out);
    return st;
}

void pf_scen_free(pf_scen *s) {
    if (!s) return;
    free(s->entries);
    s->entries = NULL;
    s->count = 0;
}

const char *pf_scen_map_basename(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}
