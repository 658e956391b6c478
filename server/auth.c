/* auth.c -- see auth.h. */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

typedef struct entry {
    uint8_t digest[SHA256_DIGEST_SIZE];
    pf_scope scope;
    size_t line; /* in the file, for the duplicate check's message */
} entry;

struct pf_auth_table {
    entry *e;
    size_t n;
    size_t nread, nwrite;
};

struct pf_auth {
    char *path;
    uv_rwlock_t lock; /* guards t and gen: read by checks, written by reload */
    pf_auth_table *t;
    uint64_t gen; /* reloads done */
};

const char *pf_scope_name(pf_scope s) {
    switch (s) {
    case PF_SCOPE_READ:
        return "read";
    case PF_SCOPE_WRITE:
        return "write";
    default:
        return "open";
    }
}

bool pf_scope_allows(pf_scope have, pf_scope need) {
    if (need == PF_SCOPE_OPEN) return true;
    if (need == PF_SCOPE_READ) return have == PF_SCOPE_READ || have == PF_SCOPE_WRITE;
    return have == PF_SCOPE_WRITE;
}

bool pf_auth_id_equal(const pf_auth_id *a, const pf_auth_id *b) {
    return memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

static bool is_b64char(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

/* Length of the b64token at s[0..n) (RFC 6750 2.1: 1*b64char *"="), or 0
 * when s does not start with one. */
static size_t b64token_len(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && is_b64char((unsigned char)s[i])) i++;
    if (i == 0) return 0;
    while (i < n && s[i] == '=') i++;
    return i;
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

const char *pf_auth_bearer(const char *v, size_t *len) {
    size_t n, k;
    if (!v || strncasecmp(v, "Bearer", 6) != 0 || v[6] != ' ') return NULL;
    v += 6;
    while (*v == ' ') v++;
    n = strlen(v);
    k = b64token_len(v, n);
    if (k == 0) return NULL;
    for (size_t i = k; i < n; i++)
        if (!is_blank(v[i])) return NULL;
    *len = k;
    return v;
}

static void digest_of(const char *tok, size_t n, uint8_t out[SHA256_DIGEST_SIZE]) {
    struct sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, n, (const uint8_t *)tok);
    sha256_digest(&h, SHA256_DIGEST_SIZE, out);
}

void pf_auth_table_free(pf_auth_table *t) {
    if (!t) return;
    /* The digests are not secrets, but there is no reason to leave them. */
    if (t->e) memset(t->e, 0, t->n * sizeof(*t->e));
    free(t->e);
    free(t);
}

void pf_auth_table_counts(const pf_auth_table *t, size_t *read, size_t *write) {
    *read = t ? t->nread : 0;
    *write = t ? t->nwrite : 0;
}

/* Reads one line's scope and token; "" as why when the line is empty or a
 * comment (nothing to add). */
static pf_status parse_line(const char *s, size_t n, pf_scope *scope, const char **tok,
                            size_t *toklen, const char **why) {
    size_t i = 0, w;
    *why = "";
    while (i < n && is_blank(s[i])) i++;
    if (i == n || s[i] == '#') return PF_OK;
    w = i;
    while (i < n && !is_blank(s[i])) i++;
    if (i - w == 4 && memcmp(s + w, "read", 4) == 0) {
        *scope = PF_SCOPE_READ;
    } else if (i - w == 5 && memcmp(s + w, "write", 5) == 0) {
        *scope = PF_SCOPE_WRITE;
    } else {
        *why = "the scope must be 'read' or 'write' (a line is \"<scope> <token>\")";
        return PF_EPARSE;
    }
    while (i < n && is_blank(s[i])) i++;
    if (i == n) {
        *why = "the token is missing (a line is \"<scope> <token>\")";
        return PF_EPARSE;
    }
    *tok = s + i;
    *toklen = b64token_len(s + i, n - i);
    i += *toklen;
    if (*toklen == 0 || (i < n && !is_blank(s[i]))) {
        *why = "the token holds a character outside A-Z a-z 0-9 - . _ ~ + / (then '=' padding)";
        return PF_EPARSE;
    }
    while (i < n && is_blank(s[i])) i++;
    if (i != n) {
        *why = "unexpected text after the token";
        return PF_EPARSE;
    }
    if (*toklen < PF_AUTH_TOKEN_MIN) {
        *why = "the token is shorter than 16 characters; use a long random one, e.g. "
               "`openssl rand -base64 32`";
        return PF_EPARSE;
    }
    if (*toklen > PF_AUTH_TOKEN_MAX) {
        *why = "the token is longer than 512 characters";
        return PF_EPARSE;
    }
    return PF_OK;
}

static int by_digest(const void *a, const void *b) {
    return memcmp(((const entry *)a)->digest, ((const entry *)b)->digest, SHA256_DIGEST_SIZE);
}

pf_status pf_auth_table_parse(const char *buf, size_t len, pf_auth_table **out, char *err,
                              size_t errlen) {
    pf_auth_table *t;
    size_t cap = 0, line = 0;
    const char *p = buf, *end = buf + len;
    pf_status st = PF_OK;

    *out = NULL;
    if (!(t = calloc(1, sizeof(*t)))) {
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p), toklen = 0;
        const char *tok = NULL, *why;
        pf_scope scope = PF_SCOPE_OPEN;
        line++;
        if (n > 0 && p[n - 1] == '\r') n--; /* CRLF files */
        if (memchr(p, '\0', n)) {
            st = PF_EPARSE;
            why = "a NUL byte";
        } else {
            st = parse_line(p, n, &scope, &tok, &toklen, &why);
        }
        if (st) {
            snprintf(err, errlen, "line %zu: %s", line, why);
            goto fail;
        }
        p += (nl ? (size_t)(nl - p) + 1 : (size_t)(end - p));
        if (!tok) continue;
        if (t->n == PF_AUTH_TOKENS_MAX) {
            snprintf(err, errlen, "line %zu: more than %d tokens", line, PF_AUTH_TOKENS_MAX);
            st = PF_ELIMIT;
            goto fail;
        }
        if (t->n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            entry *g = realloc(t->e, nc * sizeof(*g));
            if (!g) {
                snprintf(err, errlen, "out of memory");
                st = PF_ENOMEM;
                goto fail;
            }
            t->e = g;
            cap = nc;
        }
        digest_of(tok, toklen, t->e[t->n].digest);
        t->e[t->n].scope = scope;
        t->e[t->n].line = line;
        if (scope == PF_SCOPE_READ)
            t->nread++;
        else
            t->nwrite++;
        t->n++;
    }
    if (t->n == 0) {
        snprintf(err, errlen, "no token: a line is \"read <token>\" or \"write <token>\"");
        st = PF_EPARSE;
        goto fail;
    }
    /* A token listed twice (perhaps with two scopes) is a mistake: sorted by
     * digest, copies sit side by side. The later line is named. */
    qsort(t->e, t->n, sizeof(*t->e), by_digest);
    for (size_t k = 1; k < t->n; k++)
        if (memcmp(t->e[k - 1].digest, t->e[k].digest, SHA256_DIGEST_SIZE) == 0) {
            size_t a = t->e[k - 1].line, b = t->e[k].line;
            snprintf(err, errlen, "line %zu: this token is listed twice (also on line %zu)",
                     a > b ? a : b, a > b ? b : a);
            st = PF_EPARSE;
            goto fail;
        }
    *out = t;
    return PF_OK;
fail:
    pf_auth_table_free(t);
    return st;
}

/* Whether two digests are equal, in time that does not depend on where
 * they differ: eight bytes at a time, no branch until the end. (nettle's
 * memeql_sec does the same byte by byte, 30 ns a digest; a table of 1024
 * tokens made that 36 us a request.) */
static int digest_eq(const uint8_t *a, const uint8_t *b) {
    uint64_t x = 0, u, v;
    for (int i = 0; i < SHA256_DIGEST_SIZE; i += 8) {
        memcpy(&u, a + i, 8);
        memcpy(&v, b + i, 8);
        x |= u ^ v;
    }
    return x == 0;
}

pf_auth_result pf_auth_table_check(const pf_auth_table *t, const char *authorization,
                                   pf_scope *scope, pf_auth_id *id) {
    uint8_t d[SHA256_DIGEST_SIZE];
    const char *tok;
    size_t n;
    int found = 0;
    pf_scope sc = PF_SCOPE_OPEN;
    if (!authorization) return PF_AUTH_MISSING;
    if (!(tok = pf_auth_bearer(authorization, &n)) || n > PF_AUTH_TOKEN_MAX)
        return PF_AUTH_MALFORMED;
    digest_of(tok, n, d);
    /* Every entry is compared, in constant time each: the time depends on
     * the size of the table only. */
    for (size_t i = 0; t && i < t->n; i++) {
        unsigned eq = (unsigned)digest_eq(d, t->e[i].digest), m = 0u - eq;
        found |= (int)eq;
        sc = (pf_scope)(((unsigned)sc & ~m) | ((unsigned)t->e[i].scope & m));
    }
    if (!found) return PF_AUTH_UNKNOWN;
    if (scope) *scope = sc;
    if (id) memcpy(id->b, d, sizeof(id->b));
    return PF_AUTH_OK;
}

/* Reads the whole file into a malloc'd buffer. */
static pf_status read_file(const char *path, char **out, size_t *len, char *err, size_t errlen) {
    struct stat sb;
    char *b = NULL;
    size_t off = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "--auth-token-file %s: %s", path, strerror(errno));
        return PF_EINVAL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "--auth-token-file %s: not a regular file", path);
        goto fail;
    }
    if (sb.st_size > PF_AUTH_FILE_MAX) {
        snprintf(err, errlen, "--auth-token-file %s: larger than %d bytes", path, PF_AUTH_FILE_MAX);
        goto fail;
    }
    if (!(b = malloc((size_t)sb.st_size + 1))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    while (off < (size_t)sb.st_size) {
        ssize_t k = read(fd, b + off, (size_t)sb.st_size - off);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            snprintf(err, errlen, "--auth-token-file %s: %s", path, strerror(errno));
            goto fail;
        }
        if (k == 0) break; /* shrank meanwhile: parse what there is */
        off += (size_t)k;
    }
    close(fd);
    *out = b;
    *len = off;
    return PF_OK;
fail:
    free(b);
    close(fd);
    return PF_EINVAL;
}

/* Reads and parses path; err gets "--auth-token-file PATH: line N: ...". */
static pf_status load(const char *path, pf_auth_table **out, char *err, size_t errlen) {
    char *buf, why[200];
    size_t len;
    pf_status st = read_file(path, &buf, &len, err, errlen);
    if (st) return st;
    st = pf_auth_table_parse(buf, len, out, why, sizeof(why));
    memset(buf, 0, len); /* the secrets, in plain text */
    free(buf);
    if (st) snprintf(err, errlen, "--auth-token-file %s: %s", path, why);
    return st;
}

pf_status pf_auth_open(const char *path, pf_auth **out, char *err, size_t errlen) {
    pf_auth *a;
    pf_status st;
    *out = NULL;
    if (!(a = calloc(1, sizeof(*a))) || !(a->path = strdup(path))) {
        free(a);
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    if ((st = load(path, &a->t, err, errlen))) goto out_free;
    if (uv_rwlock_init(&a->lock)) {
        snprintf(err, errlen, "out of memory");
        st = PF_ENOMEM;
        goto out_free_table;
    }
    *out = a;
    return PF_OK;
out_free_table:
    pf_auth_table_free(a->t);
out_free:
    free(a->path);
    free(a);
    return st;
}

pf_status pf_auth_reload(pf_auth *a, char *err, size_t errlen) {
    pf_auth_table *t, *old;
    pf_status st = load(a->path, &t, err, errlen);
    if (st) return st;
    uv_rwlock_wrlock(&a->lock);
    old = a->t;
    a->t = t;
    a->gen++;
    uv_rwlock_wrunlock(&a->lock);
    pf_auth_table_free(old);
    return PF_OK;
}

void pf_auth_close(pf_auth *a) {
    if (!a) return;
    uv_rwlock_destroy(&a->lock);
    pf_auth_table_free(a->t);
    free(a->path);
    free(a);
}

const char *pf_auth_path(const pf_auth *a) { return a->path; }

pf_auth_result pf_auth_check(pf_auth *a, const char *authorization, pf_scope *scope,
                             pf_auth_id *id) {
    pf_auth_result r;
    uv_rwlock_rdlock(&a->lock);
    r = pf_auth_table_check(a->t, authorization, scope, id);
    uv_rwlock_rdunlock(&a->lock);
    return r;
}

void pf_auth_counts(pf_auth *a, size_t *read, size_t *write) {
    uv_rwlock_rdlock(&a->lock);
    pf_auth_table_counts(a->t, read, write);
    uv_rwlock_rdunlock(&a->lock);
}

bool pf_auth_find(pf_auth *a, const pf_auth_id *id, pf_scope *scope) {
    bool found = false;
    uv_rwlock_rdlock(&a->lock);
    /* A name is not a secret (sessions keep it): no constant time needed. */
    for (size_t i = 0; i < a->t->n && !found; i++)
        if (memcmp(a->t->e[i].digest, id->b, sizeof(id->b)) == 0) {
            found = true;
            if (scope) *scope = a->t->e[i].scope;
        }
    uv_rwlock_rdunlock(&a->lock);
    return found;
}

uint64_t pf_auth_generation(pf_auth *a) {
    uint64_t g;
    uv_rwlock_rdlock(&a->lock);
    g = a->gen;
    uv_rwlock_rdunlock(&a->lock);
    return g;
}
