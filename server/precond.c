/* precond.c -- see precond.h. */
#include "precond.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pf_etag_format(uint64_t version, uint64_t lineage, char *buf, size_t n) {
    snprintf(buf, n, "\"%llu-%llu\"", (unsigned long long)version, (unsigned long long)lineage);
}

static bool parse_u64(const char *s, size_t len, uint64_t *out) {
    uint64_t v = 0;
    if (len == 0 || len > 19) return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* The inside of a quoted tag: ours when it is "<digits>-<digits>". */
static pf_etag read_tag(const char *s, size_t len) {
    pf_etag t = {0, 0, false};
    const char *dash = memchr(s, '-', len);
    if (dash && parse_u64(s, (size_t)(dash - s), &t.version) &&
        parse_u64(dash + 1, len - (size_t)(dash - s) - 1, &t.lineage) && t.version > 0)
        t.ours = true;
    return t;
}

static pf_status parse_list(const char *v, const char *name, pf_precond_list *l,
                            pf_proto_error *e) {
    memset(l, 0, sizeof(*l));
    if (!v) return PF_OK;
    while (*v == ' ' || *v == '\t') v++;
    if (v[0] == '*') {
        const char *p = v + 1;
        while (*p == ' ' || *p == '\t') p++;
        if (*p) goto bad;
        l->kind = PF_PRECOND_ANY;
        return PF_OK;
    }
    l->kind = PF_PRECOND_LIST;
    for (;;) {
        const char *q;
        bool weak = false;
        while (*v == ' ' || *v == '\t') v++;
        if (v[0] == 'W' && v[1] == '/') {
            weak = true;
            v += 2;
        }
        if (*v != '"' || !(q = strchr(v + 1, '"'))) goto bad;
        if (l->n == PF_PRECOND_TAGS) {
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                      "%s lists more than %d entity tags.", name, PF_PRECOND_TAGS);
        }
        l->tags[l->n] = read_tag(v + 1, (size_t)(q - v - 1));
        if (weak) l->tags[l->n].ours = false; /* strong comparison: weak never matches */
        l->n++;
        v = q + 1;
        while (*v == ' ' || *v == '\t') v++;
        if (*v == '\0') break;
        if (*v != ',') goto bad;
        v++;
    }
    return PF_OK;
bad:
    return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                              "%s must be * or a list of quoted entity tags (\"3-1\"), as the "
                              "ETag header gives them.",
                              name);
}

pf_status pf_precond_parse(const char *if_match, const char *if_none_match, pf_precond *out,
                           pf_proto_error *e) {
    pf_status st = parse_list(if_match, "If-Match", &out->match, e);
    if (!st) st = parse_list(if_none_match, "If-None-Match", &out->none_match, e);
    return st;
}

static bool list_has(const pf_precond_list *l, uint64_t version, uint64_t lineage) {
    for (size_t i = 0; i < l->n; i++)
        if (l->tags[i].ours && l->tags[i].version == version && l->tags[i].lineage == lineage)
            return true;
    return false;
}

bool pf_precond_holds(const pf_precond *c, bool exists, uint64_t version, uint64_t lineage) {
    if (c->match.kind == PF_PRECOND_ANY && !exists) return false;
    if (c->match.kind == PF_PRECOND_LIST && (!exists || !list_has(&c->match, version, lineage)))
        return false;
    if (c->none_match.kind == PF_PRECOND_ANY && exists) return false;
    if (c->none_match.kind == PF_PRECOND_LIST && exists &&
        list_has(&c->none_match, version, lineage))
        return false;
    return true;
}

void pf_precond_list_arg(const pf_precond_list *l, char *buf, size_t n) {
    size_t len = 0;
    buf[0] = '\0';
    if (l->kind == PF_PRECOND_ABSENT) return;
    if (l->kind == PF_PRECOND_ANY) {
        snprintf(buf, n, "*");
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        int k;
        if (!l->tags[i].ours) continue;
        k = snprintf(buf + len, n - len, "%s%llu-%llu", len ? "," : "",
                     (unsigned long long)l->tags[i].version,
                     (unsigned long long)l->tags[i].lineage);
        if (k < 0 || (size_t)k >= n - len) break;
        len += (size_t)k;
    }
    if (len == 0) snprintf(buf, n, "!");
}
