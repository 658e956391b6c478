/* router.c -- see router.h. The table is routes.h's PF_ROUTES; this file
 * only reads it.
 *
 * A path shape is a list of segments: literals, and placeholders that
 * capture the segment into a field of pf_route_result. To add a
 * placeholder ({cid} for crowds, say): a row in `placeholders` below with
 * its character check, and the field it fills in router.h's
 * pf_route_result.
 */
#include "router.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The methods, in the order of an Allow header. */
static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};
enum { M_GET, M_HEAD, M_POST, M_PUT, M_PATCH, M_DELETE, M_COUNT };

typedef struct route_row {
    const char *name;
    int method; /* M_* */
    const char *path;
    size_t path_len;
    unsigned bodies;
    pf_scope scope;
} route_row;

/* Indexed by pf_route; row 0 is PF_ROUTE_NONE. */
static const route_row rows[PF_ROUTE_COUNT] = {
    [PF_ROUTE_NONE] = {"none", -1, "", 0, PF_BODIES_NONE, PF_SCOPE_OPEN},
#define PF_ROUTE_ROW(route, name, method, path, bodies, scope, module)                             \
    [PF_ROUTE_##route] = {#name,           M_##method, path, sizeof(path) - 1, PF_BODIES_##bodies, \
                          PF_SCOPE_##scope},
    PF_ROUTES(PF_ROUTE_ROW)
#undef PF_ROUTE_ROW
};

/* The media types a body may declare, and how a 415 names them. */
static const struct media {
    pf_body_kind kind;
    const char *type;
    const char *phrase;
} media[] = {
    {PF_BODY_JSON, "application/json", "application/json"},
    {PF_BODY_MOVINGAI, "text/x-movingai-map", "text/x-movingai-map (a Moving AI map)"},
    {PF_BODY_TEXT, "text/plain", "text/plain (a Moving AI map, with a bearer token)"},
    {PF_BODY_NDJSON, "application/x-ndjson", "application/x-ndjson (one update a line)"},
    {PF_BODY_OBJ, "model/obj", "model/obj (Wavefront OBJ geometry of a navmesh map)"},
};

#define NMEDIA (sizeof(media) / sizeof(media[0]))

static bool session_id_ok(const char *s, size_t n) {
    if (n < 1 || n > PF_SESSION_ID_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

bool pf_map_id_is_valid(const char *id, size_t len) {
    if (len < 1 || len > PF_MAP_ID_MAX) return false;
    /* POST /v1/maps/generate is a route: a map of that name could not be
     * reached at /v1/maps/generate, so the name is not a map id. */
    if (len == 8 && memcmp(id, "generate", 8) == 0) return false;
    for (size_t i = 0; i < len; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

/* A placeholder: its name in a shape, its check (which bounds the length to
 * what its field holds), where it is captured, and whether a segment failing
 * the check is a bad id (400) rather than no match (404). */
static const struct placeholder {
    const char *name;
    bool (*ok)(const char *s, size_t n);
    size_t offset;
    bool bad_is_400;
} placeholders[] = {
    {"{id}", pf_map_id_is_valid, offsetof(pf_route_result, map_id), true},
    {"{sid}", session_id_ok, offsetof(pf_route_result, session_id), false},
    {"{cid}", session_id_ok, offsetof(pf_route_result, crowd_id), false},
};

#define NPLACEHOLDERS (sizeof(placeholders) / sizeof(placeholders[0]))

typedef enum fit { FIT_NO = 0, FIT_BAD_ID, FIT_YES } fit;

/* Paths and shapes as lists of segments: the text between slashes after
 * the leading one ("/" is one empty segment, "/v1/maps/" three, the last
 * empty). No shape has more than PF_ROUTE_MAX_SEGS; a longer path matches
 * none. */
#define PF_ROUTE_MAX_SEGS 8

typedef struct seg {
    const char *p;
    uint16_t len;
    int8_t ph; /* the placeholder's index, -1 for a literal */
} seg;

typedef struct shape {
    seg s[PF_ROUTE_MAX_SEGS];
    int n;
    bool slash;    /* "/?": one trailing slash accepted */
    uint32_t spec; /* bit 31 - i set when segment i is literal */
    bool ok;       /* parsed (a shape the table cannot have is never matched) */
} shape;

/* A path split once, with its placeholder checks done at most once each. */
typedef struct split {
    seg s[PF_ROUTE_MAX_SEGS + 1];
    int n;
    bool too_long;
    int8_t valid[PF_ROUTE_MAX_SEGS + 1][NPLACEHOLDERS]; /* 0 unknown, 1 yes, -1 no */
} split;

static int placeholder_index(const char *p, size_t n) {
    if (n < 2 || p[0] != '{') return -1;
    for (size_t i = 0; i < NPLACEHOLDERS; i++)
        if (strncmp(placeholders[i].name, p, n) == 0 && placeholders[i].name[n] == '\0')
            return (int)i;
    return -1;
}

/* Splits path; false when it does not start with '/'. */
static bool split_path(const char *path, size_t len, split *out) {
    const char *p = path + 1, *end = path + len;
    out->n = 0;
    out->too_long = false;
    if (len == 0 || path[0] != '/') return false;
    for (;;) {
        const char *q = p;
        while (q < end && *q != '/') q++;
        if (out->n == PF_ROUTE_MAX_SEGS + 1 || q - p > UINT16_MAX) {
            out->too_long = true;
            return true;
        }
        out->s[out->n].p = p;
        out->s[out->n].len = (uint16_t)(q - p);
        out->s[out->n].ph = -1;
        out->n++;
        if (q == end) break;
        p = q + 1;
    }
    memset(out->valid, 0, sizeof(out->valid));
    return true;
}

static void parse_shape(const char *text, shape *sh) {
    size_t len = strlen(text);
    split sp;
    memset(sh, 0, sizeof(*sh));
    if (len >= 2 && text[len - 2] == '/' && text[len - 1] == '?') {
        sh->slash = true;
        len -= 2;
    }
    if (!split_path(text, len, &sp) || sp.too_long || sp.n > PF_ROUTE_MAX_SEGS) return;
    for (int i = 0; i < sp.n; i++) {
        sh->s[i] = sp.s[i];
        sh->s[i].ph = (int8_t)placeholder_index(sp.s[i].p, sp.s[i].len);
        if (sh->s[i].ph < 0) sh->spec |= 1u << (31 - i);
    }
    sh->n = sp.n;
    sh->ok = true;
}

/* The table's shapes, parsed once. */
static shape shapes[PF_ROUTE_COUNT];
static pthread_once_t shapes_once = PTHREAD_ONCE_INIT;

static void parse_shapes(void) {
    for (int r = 1; r < PF_ROUTE_COUNT; r++) parse_shape(rows[r].path, &shapes[r]);
}

/* Matches a split path against a shape. FIT_YES fills the captures in *out
 * when out is not NULL; FIT_BAD_ID when only a 400-kind placeholder
 * failed. */
static fit fits(const shape *sh, split *sp, pf_route_result *out) {
    fit result = FIT_YES;
    int n = sp->n;
    if (!sh->ok || sp->too_long) return FIT_NO;
    if (sh->slash && n == sh->n + 1 && sp->s[n - 1].len == 0) n--;
    if (n != sh->n) return FIT_NO;
    for (int i = 0; i < n; i++) {
        const seg *a = &sh->s[i], *b = &sp->s[i];
        if (a->ph < 0) {
            if (a->len != b->len || memcmp(a->p, b->p, a->len) != 0) return FIT_NO;
            continue;
        }
        if (!sp->valid[i][a->ph])
            sp->valid[i][a->ph] = placeholders[a->ph].ok(b->p, b->len) ? 1 : -1;
        if (sp->valid[i][a->ph] < 0) {
            if (!placeholders[a->ph].bad_is_400) return FIT_NO;
            result = FIT_BAD_ID;
        } else if (out) {
            char *dst = (char *)out + placeholders[a->ph].offset;
            memcpy(dst, b->p, b->len);
            dst[b->len] = '\0';
        }
    }
    return result;
}

pf_route_match pf_route_find(const char *method, const char *path, pf_route_result *out) {
    split sp;
    uint32_t best = 0;
    unsigned have = 0; /* bit m: methods[m] has a row on the best shape */
    bool any = false, bad_id = false;
    int chosen = 0, want = -1;
    size_t len = 0;

    memset(out, 0, sizeof(*out));
    pthread_once(&shapes_once, parse_shapes);
    if (!split_path(path, strlen(path), &sp)) return PF_MATCH_NOT_FOUND;
    for (int m = 0; m < M_COUNT; m++)
        if (strcmp(method, methods[m]) == 0) want = m == M_HEAD ? M_GET : m;
    /* One pass: the most specific shape that fits the path, its methods, and
     * its row of this method. */
    for (int r = 1; r < PF_ROUTE_COUNT; r++) {
        fit f;
        if (any && shapes[r].spec < best) continue;
        f = fits(&shapes[r], &sp, NULL);
        if (f == FIT_BAD_ID) bad_id = true;
        if (f != FIT_YES) continue;
        if (!any || shapes[r].spec > best) {
            best = shapes[r].spec;
            have = 0;
            chosen = 0;
            any = true;
        }
        have |= 1u << rows[r].method;
        if (!chosen && rows[r].method == want) chosen = r;
    }
    if (!any) return bad_id ? PF_MATCH_BAD_ID : PF_MATCH_NOT_FOUND;
    if (chosen) {
        fits(&shapes[chosen], &sp, out); /* the captures */
        out->route = (pf_route)chosen;
        return PF_MATCH_OK;
    }
    if (have & (1u << M_GET)) have |= 1u << M_HEAD; /* HEAD wherever GET */
    for (int m = 0; m < M_COUNT; m++) {
        if (!(have & (1u << m))) continue;
        len += (size_t)snprintf(out->allow + len, sizeof(out->allow) - len, "%s%s", len ? ", " : "",
                                methods[m]);
    }
    return PF_MATCH_BAD_METHOD;
}

int pf__route_shape_fits(const char *text, const char *path, pf_route_result *out, uint32_t *spec) {
    shape sh;
    split sp;
    parse_shape(text, &sh);
    *spec = sh.spec;
    if (!split_path(path, strlen(path), &sp)) return FIT_NO;
    return (int)fits(&sh, &sp, out);
}

const char *pf_route_name(pf_route r) {
    return (unsigned)r < PF_ROUTE_COUNT ? rows[r].name : rows[PF_ROUTE_NONE].name;
}

const char *pf_route_method(pf_route r) {
    return r > PF_ROUTE_NONE && r < PF_ROUTE_COUNT ? methods[rows[r].method] : "";
}

const char *pf_route_shape(pf_route r) {
    return (unsigned)r < PF_ROUTE_COUNT ? rows[r].path : rows[PF_ROUTE_NONE].path;
}

pf_scope pf_route_scope(pf_route r) {
    return (unsigned)r < PF_ROUTE_COUNT ? rows[r].scope : PF_SCOPE_OPEN;
}

static unsigned bodies_of(pf_route r) {
    return (unsigned)r < PF_ROUTE_COUNT ? rows[r].bodies : PF_BODIES_NONE;
}

bool pf_route_has_body(pf_route r) { return bodies_of(r) != PF_BODIES_NONE; }

/* The media type of Content-Type without parameters, compared
 * case-insensitively. */
static bool media_is(const char *ct, const char *type) {
    size_t n = strlen(type);
    while (*ct == ' ') ct++;
    return strncasecmp(ct, type, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

pf_body_kind pf_route_body_kind(pf_route r, const char *ct) {
    unsigned ok = bodies_of(r);
    if (!ct || !*ct) return (ok & PF_BODY_ABSENT) ? PF_BODY_ABSENT : 0;
    for (size_t i = 0; i < NMEDIA; i++)
        if (media_is(ct, media[i].type)) return (ok & media[i].kind) ? media[i].kind : 0;
    return 0;
}

void pf_route_describe_bodies(pf_route r, char *buf, size_t len) {
    unsigned ok = bodies_of(r);
    size_t n = 0, k = 0, total = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; i < NMEDIA; i++) total += (ok & media[i].kind) != 0;
    for (size_t i = 0; i < NMEDIA && n < len; i++) {
        if (!(ok & media[i].kind)) continue;
        n += (size_t)snprintf(buf + n, len - n, "%s%s",
                              k == 0           ? ""
                              : k + 1 == total ? " or "
                                               : ", ",
                              media[i].phrase);
        k++;
    }
}
