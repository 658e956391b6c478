/* guard.c -- see guard.h. */
#include "guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "router.h"

typedef struct item {
    char s[128];
} item;

struct pf_guard {
    pf_auth *auth; /* NULL without --auth-token-file */
    bool open_metrics;
    bool any_host;      /* no Host check */
    bool loopback_only; /* no list: loopback names only */
    item hosts[PF_GUARD_LIST_MAX];
    size_t nhosts;
    bool cors_any; /* --cors-origin '*' */
    item origins[PF_GUARD_LIST_MAX];
    size_t norigins;
};

/* Splits a comma-separated list into items (blanks trimmed). false when
 * there are more than PF_GUARD_LIST_MAX or one is too long. */
static bool split(const char *list, item *out, size_t *n) {
    const char *p = list;
    *n = 0;
    while (*p) {
        const char *s, *e;
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        s = p;
        while (*p && *p != ',') p++;
        e = p;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (e == s) continue;
        if (*n == PF_GUARD_LIST_MAX || (size_t)(e - s) >= sizeof(out[0].s)) return false;
        memcpy(out[*n].s, s, (size_t)(e - s));
        out[*n].s[e - s] = '\0';
        (*n)++;
    }
    return true;
}

pf_status pf_guard_create(const pf_config *cfg, pf_guard **out, char *err, size_t errlen) {
    pf_guard *g = calloc(1, sizeof(*g));
    pf_status st;
    *out = NULL;
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    g->open_metrics = cfg->open_metrics;
    if (!split(cfg->allowed_hosts, g->hosts, &g->nhosts)) {
        snprintf(err, errlen, "--allowed-hosts: at most %d names of at most 127 characters",
                 PF_GUARD_LIST_MAX);
        st = PF_EINVAL;
        goto fail;
    }
    if (!split(cfg->cors_origin, g->origins, &g->norigins)) {
        snprintf(err, errlen, "--cors-origin: at most %d origins of at most 127 characters",
                 PF_GUARD_LIST_MAX);
        st = PF_EINVAL;
        goto fail;
    }
    for (size_t i = 0; i < g->norigins; i++)
        if (strcmp(g->origins[i].s, "*") == 0) g->cors_any = true;
    if (cfg->auth_token_file[0] && (st = pf_auth_open(cfg->auth_token_file, &g->auth, err, errlen)))
        goto fail;
    g->any_host = g->nhosts == 0 && (g->auth || cfg->insecure_no_auth);
    g->loopback_only = g->nhosts == 0 && !g->any_host;
    *out = g;
    return PF_OK;
fail:
    free(g);
    return st;
}

void pf_guard_destroy(pf_guard *g) {
    if (!g) return;
    pf_auth_close(g->auth);
    free(g);
}

bool pf_guard_has_tokens(const pf_guard *g) { return g->auth != NULL; }

pf_status pf_guard_reload(pf_guard *g, char *err, size_t errlen) {
    if (!g->auth) {
        snprintf(err, errlen, "no --auth-token-file to reload");
        return PF_EINVAL;
    }
    return pf_auth_reload(g->auth, err, errlen);
}

void pf_guard_token_counts(pf_guard *g, size_t *read, size_t *write) {
    *read = *write = 0;
    if (g->auth) pf_auth_counts(g->auth, read, write);
}

/* The name part of a Host value: "[::1]" of "[::1]:8080", "a.b" of
 * "a.b:80". Copied into buf (lowercase); false when it does not fit. */
static bool host_name(const char *host, char *buf, size_t cap) {
    size_t n;
    const char *end;
    if (host[0] == '[') {
        end = strchr(host, ']');
        n = end ? (size_t)(end - host) + 1 : strlen(host);
    } else {
        end = strchr(host, ':');
        n = end ? (size_t)(end - host) : strlen(host);
    }
    if (n >= cap) return false;
    /* After the name: nothing, or ":" and a port. */
    if (host[n] == ':') {
        for (const char *p = host + n + 1; *p; p++)
            if (*p < '0' || *p > '9') return false;
    } else if (host[n] != '\0') {
        return false;
    }
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)(host[i] >= 'A' && host[i] <= 'Z' ? host[i] + 32 : host[i]);
    buf[n] = '\0';
    if (n > 0 && buf[n - 1] == '.') buf[n - 1] = '\0'; /* "localhost." is "localhost" */
    return true;
}

static bool is_loopback_name(const char *h) {
    size_t n = strlen(h);
    if (strcmp(h, "localhost") == 0 || strcmp(h, "[::1]") == 0) return true;
    if (n > 10 && strcmp(h + n - 10, ".localhost") == 0) return true; /* RFC 6761 6.3 */
    return pf_config_is_loopback(h);
}

bool pf_guard_host_allowed(const pf_guard *g, const char *host) {
    char name[256];
    if (g->any_host || !host) return true;
    if (!host_name(host, name, sizeof(name))) return false;
    if (g->loopback_only) return is_loopback_name(name);
    for (size_t i = 0; i < g->nhosts; i++) {
        const char *h = g->hosts[i].s;
        if (h[0] == '.') {
            size_t n = strlen(name), k = strlen(h);
            if (strcasecmp(name, h + 1) == 0 || (n > k && strcasecmp(name + n - k, h) == 0))
                return true;
        } else if (strcasecmp(name, h) == 0) {
            return true;
        }
    }
    return false;
}

const char *pf_guard_host_rule(const pf_guard *g) {
    return g->any_host ? "any" : g->loopback_only ? "loopback" : "list";
}

bool pf_guard_cors_enabled(const pf_guard *g) { return g->norigins > 0; }

bool pf_guard_cors_allowed(const pf_guard *g, const char *origin) {
    if (!origin || !*origin || strcmp(origin, "null") == 0) return false;
    if (g->cors_any) return true;
    for (size_t i = 0; i < g->norigins; i++)
        if (strcasecmp(origin, g->origins[i].s) == 0) return true;
    return false;
}

pf_scope pf_guard_need(const pf_guard *g, pf_route route) {
    if (!g->auth) return PF_SCOPE_OPEN;
    if (g->open_metrics && (route == PF_ROUTE_METRICS || route == PF_ROUTE_INFO))
        return PF_SCOPE_OPEN;
    return pf_route_scope(route);
}

pf_auth_result pf_guard_check(pf_guard *g, const char *authorization, pf_scope *scope,
                              pf_auth_id *id) {
    if (!g->auth) return PF_AUTH_MISSING;
    return pf_auth_check(g->auth, authorization, scope, id);
}

bool pf_guard_token_holds(pf_guard *g, const pf_auth_id *id, pf_scope opened) {
    pf_scope now;
    if (opened == PF_SCOPE_OPEN || !g->auth) return true;
    return pf_auth_find(g->auth, id, &now) && pf_scope_allows(now, opened);
}

uint64_t pf_guard_token_generation(pf_guard *g) {
    return g->auth ? pf_auth_generation(g->auth) : 0;
}
