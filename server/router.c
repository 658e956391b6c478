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

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct route_row {
    const char *name;
    const char *method;
    const char *path;
    unsigned bodies;
    pf_scope scope;
} route_row;

/* Indexed by pf_route; row 0 is PF_ROUTE_NONE. */
static const route_row rows[PF_ROUTE_COUNT] = {
    [PF_ROUTE_NONE] = {"none", "", "", PF_BODIES_NONE, PF_SCOPE_OPEN},
#define PF_ROUTE_ROW(route, name, method, path, bodies, scope, module)                             \
    [PF_ROUTE_##route] = {#name, #method, path, PF_BODIES_##bodies, PF_SCOPE_##scope},
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
    {PF_BODY_TEXT, "text/plain", "text/plain (a Moving AI map)"},
    {PF_BODY_NDJSON, "application/x-ndjson", "application/x-ndjson (one update a line)"},
};

#define NMEDIA (sizeof(media) / sizeof(media[0]))

/* The order of an Allow header. */
static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};

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
    for (size_t i = 0; i < len; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

/* A placeholder: its name in a shape, its check, where it is captured, and
 * whether a segment failing the check is a bad id (400) rather than no
 * match (404). */
static const struct placeholder {
    const char *name;
    bool (*ok)(const char *s, size_t n);
    size_t offset, cap;
    bool bad_is_400;
} placeholders[] = {
    {"{id}", pf_map_id_is_valid, offsetof(pf_route_result, map_id), PF_MAP_ID_MAX + 1, true},
    {"{sid}", session_id_ok, offsetof(pf_route_result, session_id), PF_SESSION_ID_MAX + 1, false},
};

#define NPLACEHOLDERS (sizeof(placeholders) / sizeof(placeholders[0]))

typedef enum fit { FIT_NO = 0, FIT_BAD_ID, FIT_YES } fit;

static const struct placeholder *placeholder_of(const char *seg, size_t n) {
    for (size_t i = 0; i < NPLACEHOLDERS; i++)
        if (strlen(placeholders[i].name) == n && memcmp(placeholders[i].name, seg, n) == 0)
            return &placeholders[i];
    return NULL;
}

/* Matches path against shape. FIT_YES fills the captures in *out and the
 * specificity in *spec (bit 31 - i set when segment i is literal, so the
 * greater wins); FIT_BAD_ID when only a 400-kind placeholder failed. */
static fit match(const char *shape, const char *path, pf_route_result *out, uint32_t *spec) {
    size_t slen = strlen(shape), plen = strlen(path);
    const char *s, *p, *send, *pend;
    fit result = FIT_YES;
    uint32_t bits = 0;
    int seg = 0;

    /* "/?": one trailing slash of the path is dropped. */
    if (slen >= 2 && strcmp(shape + slen - 2, "/?") == 0) {
        slen -= 2;
        if (plen > 1 && path[plen - 1] == '/') plen--;
    }
    if (slen == 1 && shape[0] == '/') /* the root, "/" */
        return plen == 1 && path[0] == '/' ? (*spec = 1u << 31, FIT_YES) : FIT_NO;
    send = shape + slen;
    pend = path + plen;
    s = shape;
    p = path;
    while (s < send) {
        const char *se, *pe;
        const struct placeholder *ph;
        if (*s != '/' || p >= pend || *p != '/') return FIT_NO;
        s++;
        p++;
        for (se = s; se < send && *se != '/'; se++) {
        }
        for (pe = p; pe < pend && *pe != '/'; pe++) {
        }
        ph = placeholder_of(s, (size_t)(se - s));
        if (!ph) {
            if ((size_t)(se - s) != (size_t)(pe - p) || memcmp(s, p, (size_t)(se - s)) != 0)
                return FIT_NO;
            if (seg < 32) bits |= 1u << (31 - seg);
        } else if (ph->ok(p, (size_t)(pe - p))) {
            char *dst = (char *)out + ph->offset;
            memcpy(dst, p, (size_t)(pe - p));
            dst[pe - p] = '\0';
        } else if (ph->bad_is_400) {
            result = FIT_BAD_ID;
        } else {
            return FIT_NO;
        }
        s = se;
        p = pe;
        seg++;
    }
    if (p != pend) return FIT_NO;
    *spec = bits;
    return result;
}

pf_route_match pf_route_find(const char *method, const char *path, pf_route_result *out) {
    pf_route_result tmp;
    uint32_t best = 0, spec;
    bool any = false, bad_id = false, have[sizeof(methods) / sizeof(methods[0])] = {false};
    size_t len = 0;

    memset(out, 0, sizeof(*out));
    if (strcmp(method, "HEAD") == 0) method = "GET";
    /* The most specific shape that fits the path... */
    for (int r = 1; r < PF_ROUTE_COUNT; r++) {
        memset(&tmp, 0, sizeof(tmp));
        switch (match(rows[r].path, path, &tmp, &spec)) {
        case FIT_YES:
            if (!any || spec > best) best = spec;
            any = true;
            break;
        case FIT_BAD_ID:
            bad_id = true;
            break;
        case FIT_NO:
            break;
        }
    }
    if (!any) return bad_id ? PF_MATCH_BAD_ID : PF_MATCH_NOT_FOUND;
    /* ...and among its rows, the one of this method. */
    for (int r = 1; r < PF_ROUTE_COUNT; r++) {
        memset(&tmp, 0, sizeof(tmp));
        if (match(rows[r].path, path, &tmp, &spec) != FIT_YES || spec != best) continue;
        if (strcmp(rows[r].method, method) == 0) {
            *out = tmp;
            out->route = (pf_route)r;
            return PF_MATCH_OK;
        }
        for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++)
            if (strcmp(rows[r].method, methods[m]) == 0) have[m] = true;
    }
    have[1] = have[0]; /* HEAD wherever GET */
    for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
        if (!have[m]) continue;
        len += (size_t)snprintf(out->allow + len, sizeof(out->allow) - len, "%s%s", len ? ", " : "",
                                methods[m]);
    }
    return PF_MATCH_BAD_METHOD;
}

const char *pf_route_name(pf_route r) {
    return (unsigned)r < PF_ROUTE_COUNT ? rows[r].name : rows[PF_ROUTE_NONE].name;
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
