/* pathd.c -- see pathd.h.
 *
 * Inside, top to bottom: a growable buffer, a small strict JSON reader (a
 * tree in one arena) and writer, errors, the HTTP call with its retry loop
 * (libcurl easy interface, one kept-alive handle per client), the API
 * operations, and the WebSocket stream.
 *
 * WebSocket: libcurl's own WebSocket API (curl_ws_send/recv) is
 * experimental and is not built into Debian 12's libcurl 7.88 (its protocol
 * list has no "ws"), so this file speaks RFC 6455 itself over a connection
 * libcurl opens with CURLOPT_CONNECT_ONLY (curl_easy_send/recv): libcurl
 * still resolves, connects, and does TLS for https base URLs (wss).
 *
 * The file compiles as C99 and as C++ (Unreal builds .c files as C++).
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "pathd.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _WIN32
#include <windows.h>
#include <winsock2.h>
#else
#include <poll.h>
#include <unistd.h>
#endif

#define MAX_JSON_DEPTH 128
#define MAX_WS_MESSAGE (64u << 20)

/* ---- growable buffer ---- */

typedef struct buf {
    char *p;
    size_t len, cap;
    bool failed; /* an allocation failed; everything after is dropped */
} buf;

#define BUF_INIT                                                                                   \
    { NULL, 0, 0, false }

static bool buf_reserve(buf *b, size_t more) {
    size_t need, cap;
    char *np;
    if (b->failed) return false;
    if (more > SIZE_MAX - b->len - 1) goto fail;
    need = b->len + more + 1;
    if (need <= b->cap) return true;
    cap = b->cap ? b->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    np = (char *)realloc(b->p, cap);
    if (!np) goto fail;
    b->p = np;
    b->cap = cap;
    return true;
fail:
    b->failed = true;
    return false;
}

static void buf_add(buf *b, const char *s, size_t n) {
    if (!buf_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_str(buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_printf(buf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void buf_free(buf *b) {
    free(b->p);
    memset(b, 0, sizeof(*b));
}

/* ---- JSON reader: a tree of nodes in one arena ---- */

typedef enum jtype { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jnode {
    jtype t;
    double num;
    const char *str; /* J_STR: decoded UTF-8, NUL-terminated */
    size_t len;
    const char *key; /* the member name, inside an object */
    struct jnode *child, *next;
} jnode;

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    /* data follows */
} arena_block;

typedef struct jdoc {
    arena_block *blocks;
    jnode *root;
} jdoc;

static void *arena_alloc(jdoc *d, size_t n) {
    arena_block *b = d->blocks;
    n = (n + 15) & ~(size_t)15;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = (arena_block *)malloc(sizeof(arena_block) + 16 + cap);
        if (!b) return NULL;
        b->cap = cap;
        b->used = 0;
        b->next = d->blocks;
        d->blocks = b;
    }
    {
        char *base = (char *)(b + 1);
        char *p = base + ((16 - ((uintptr_t)base & 15)) & 15) + b->used;
        b->used += n;
        return p;
    }
}

static void jdoc_free(jdoc *d) {
    arena_block *b = d->blocks;
    while (b) {
        arena_block *n = b->next;
        free(b);
        b = n;
    }
    d->blocks = NULL;
    d->root = NULL;
}

typedef struct jparser {
    const char *p, *end;
    jdoc *doc;
    bool nomem;
} jparser;

static void skip_ws(jparser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

static size_t put_utf8(char *o, unsigned long cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string at ps->p (the opening quote). Decoded UTF-8 never grows past the
 * escaped text, so the input's length bounds the output. */
static bool parse_string(jparser *ps, const char **out, size_t *outlen) {
    const char *s = ++ps->p;
    char *o, *start;
    while (ps->p < ps->end && *ps->p != '"') {
        if ((unsigned char)*ps->p < 0x20) return false;
        ps->p += *ps->p == '\\' ? 2 : 1;
    }
    if (ps->p >= ps->end) return false;
    start = o = (char *)arena_alloc(ps->doc, (size_t)(ps->p - s) + 1);
    if (!o) {
        ps->nomem = true;
        return false;
    }
    for (const char *q = s; q < ps->p;) {
        if (*q != '\\') {
            *o++ = *q++;
            continue;
        }
        q++;
        switch (*q) {
        case '"':
        case '\\':
        case '/':
            *o++ = *q++;
            break;
        case 'b':
            *o++ = '\b';
            q++;
            break;
        case 'f':
            *o++ = '\f';
            q++;
            break;
        case 'n':
            *o++ = '\n';
            q++;
            break;
        case 'r':
            *o++ = '\r';
            q++;
            break;
        case 't':
            *o++ = '\t';
            q++;
            break;
        case 'u': {
            long cp;
            if (ps->p - q < 5 || (cp = hex4(q + 1)) < 0) return false;
            q += 5;
            if (cp >= 0xd800 && cp < 0xdc00) {
                long lo;
                if (ps->p - q < 6 || q[0] != '\\' || q[1] != 'u' || (lo = hex4(q + 2)) < 0xdc00 ||
                    lo > 0xdfff)
                    return false;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                q += 6;
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                return false;
            }
            o += put_utf8(o, (unsigned long)cp);
            break;
        }
        default:
            return false;
        }
    }
    *o = '\0';
    *out = start;
    *outlen = (size_t)(o - start);
    ps->p++;
    return true;
}

/* strtod reads the C locale's decimal point only when the program left the
 * C locale alone; a game may not have, so the '.' is swapped for it. */
static bool parse_number(jparser *ps, double *out) {
    const char *s = ps->p;
    char tmp[64], *end;
    size_t n;
    const char *dp = localeconv()->decimal_point;
    if (ps->p < ps->end && *ps->p == '-') ps->p++;
    if (ps->p >= ps->end) return false;
    if (*ps->p == '0') {
        ps->p++;
    } else if (*ps->p >= '1' && *ps->p <= '9') {
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    } else {
        return false;
    }
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return false;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return false;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    n = (size_t)(ps->p - s);
    if (n >= sizeof(tmp)) return false;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    if (dp && dp[0] && dp[0] != '.' && !dp[1]) {
        char *dot = strchr(tmp, '.');
        if (dot) *dot = dp[0];
    }
    *out = strtod(tmp, &end);
    return *end == '\0' && isfinite(*out);
}

static jnode *parse_value(jparser *ps, int depth) {
    jnode *n;
    if (depth > MAX_JSON_DEPTH) return NULL;
    skip_ws(ps);
    if (ps->p >= ps->end) return NULL;
    n = (jnode *)arena_alloc(ps->doc, sizeof(*n));
    if (!n) {
        ps->nomem = true;
        return NULL;
    }
    memset(n, 0, sizeof(*n));
    switch (*ps->p) {
    case '{':
    case '[': {
        bool obj = *ps->p == '{';
        char close = obj ? '}' : ']';
        jnode **tail = &n->child;
        n->t = obj ? J_OBJ : J_ARR;
        ps->p++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return n;
        }
        for (;;) {
            const char *key = NULL;
            size_t klen;
            jnode *kid;
            skip_ws(ps);
            if (obj) {
                if (ps->p >= ps->end || *ps->p != '"' || !parse_string(ps, &key, &klen))
                    return NULL;
                skip_ws(ps);
                if (ps->p >= ps->end || *ps->p != ':') return NULL;
                ps->p++;
            }
            if (!(kid = parse_value(ps, depth + 1))) return NULL;
            kid->key = key;
            *tail = kid;
            tail = &kid->next;
            skip_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == close) {
                ps->p++;
                return n;
            }
            return NULL;
        }
    }
    case '"':
        n->t = J_STR;
        return parse_string(ps, &n->str, &n->len) ? n : NULL;
    case 't':
        if (ps->end - ps->p < 4 || memcmp(ps->p, "true", 4) != 0) return NULL;
        ps->p += 4;
        n->t = J_TRUE;
        return n;
    case 'f':
        if (ps->end - ps->p < 5 || memcmp(ps->p, "false", 5) != 0) return NULL;
        ps->p += 5;
        n->t = J_FALSE;
        return n;
    case 'n':
        if (ps->end - ps->p < 4 || memcmp(ps->p, "null", 4) != 0) return NULL;
        ps->p += 4;
        n->t = J_NULL;
        return n;
    default:
        n->t = J_NUM;
        return parse_number(ps, &n->num) ? n : NULL;
    }
}

/* PATHD_OK, PATHD_ERR_PROTOCOL (not exactly one JSON value) or
 * PATHD_ERR_NOMEM. Free with jdoc_free either way. */
static pathd_status jparse(const char *s, size_t len, jdoc *d) {
    jparser ps;
    memset(d, 0, sizeof(*d)); /* before ps holds d: cppcheck reads that as a use */
    ps = (jparser){s, s + len, d, false};
    d->root = parse_value(&ps, 0);
    skip_ws(&ps);
    if (ps.nomem) return PATHD_ERR_NOMEM;
    return d->root && ps.p == ps.end ? PATHD_OK : PATHD_ERR_PROTOCOL;
}

static const jnode *jget(const jnode *o, const char *key) {
    if (!o || o->t != J_OBJ) return NULL;
    for (const jnode *k = o->child; k; k = k->next)
        if (strcmp(k->key, key) == 0) return k;
    return NULL;
}

static bool jnum(const jnode *o, const char *key, double *v) {
    const jnode *n = jget(o, key);
    if (!n || n->t != J_NUM) return false;
    *v = n->num;
    return true;
}

/* An integer member that fits [min, max]. */
static bool jint(const jnode *o, const char *key, double min, double max, int64_t *v) {
    double d;
    if (!jnum(o, key, &d) || d != floor(d) || d < min || d > max) return false;
    *v = (int64_t)d;
    return true;
}

static bool jbool(const jnode *o, const char *key, bool *v) {
    const jnode *n = jget(o, key);
    if (!n || (n->t != J_TRUE && n->t != J_FALSE)) return false;
    *v = n->t == J_TRUE;
    return true;
}

/* Copies a string member into out[cap]; false when missing or too long. */
static bool jstr(const jnode *o, const char *key, char *out, size_t cap) {
    const jnode *n = jget(o, key);
    if (!n || n->t != J_STR || n->len >= cap) return false;
    memcpy(out, n->str, n->len + 1);
    return true;
}

static bool jpoint(const jnode *n, pathd_point *p) {
    const jnode *x, *y;
    if (!n || n->t != J_ARR || !(x = n->child) || !(y = x->next) || y->next || x->t != J_NUM ||
        y->t != J_NUM || x->num != floor(x->num) || y->num != floor(y->num) ||
        fabs(x->num) > INT32_MAX || fabs(y->num) > INT32_MAX)
        return false;
    p->x = (int32_t)x->num;
    p->y = (int32_t)y->num;
    return true;
}

/* An array of points into a malloc'd array (NULL for an empty one). */
static pathd_status jpoints(const jnode *a, pathd_point **out, size_t *n) {
    size_t k = 0;
    *out = NULL;
    *n = 0;
    if (!a || a->t != J_ARR) return PATHD_ERR_PROTOCOL;
    for (const jnode *e = a->child; e; e = e->next) k++;
    if (k == 0) return PATHD_OK;
    if (!(*out = (pathd_point *)malloc(k * sizeof(**out)))) return PATHD_ERR_NOMEM;
    k = 0;
    for (const jnode *e = a->child; e; e = e->next, k++) {
        if (!jpoint(e, &(*out)[k])) {
            free(*out);
            *out = NULL;
            return PATHD_ERR_PROTOCOL;
        }
    }
    *n = k;
    return PATHD_OK;
}

/* ---- JSON writer ---- */

static void jw_str(buf *b, const char *s) {
    buf_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            buf_add(b, e, 2);
        } else if (*p < 0x20) {
            buf_printf(b, "\\u%04x", *p);
        } else {
            buf_add(b, (const char *)p, 1);
        }
    }
    buf_add(b, "\"", 1);
}

/* A double with '.' whatever the locale (see parse_number). */
static void jw_double(buf *b, double v) {
    char tmp[40];
    const char *dp = localeconv()->decimal_point;
    snprintf(tmp, sizeof(tmp), "%.17g", v);
    if (dp && dp[0] && dp[0] != '.' && !dp[1]) {
        char *c = strchr(tmp, dp[0]);
        if (c) *c = '.';
    }
    buf_str(b, tmp);
}

static void jw_point(buf *b, pathd_point p) { buf_printf(b, "[%ld,%ld]", (long)p.x, (long)p.y); }

/* ---- errors ---- */

static const char *const code_names[] = {
    "",
    "",
    "malformed_json",
    "invalid_request",
    "malformed_map",
    "invalid_map_id",
    "map_not_found",
    "not_found",
    "method_not_allowed",
    "body_too_large",
    "limit_exceeded",
    "unsupported_media_type",
    "invalid_value",
    "off_map",
    "blocked",
    "unsupported",
    "overloaded",
    "shutting_down",
    "deadline_exceeded",
    "out_of_memory",
    "internal",
    "session_not_found",
    "session_busy",
    "too_many_sessions",
    "upgrade_required",
    "conflict",
    "storage_failed",
    "precondition_failed",
    "store_unavailable",
    "store_outcome_unknown",
    "store_not_durable",
    "not_ready",
};

const char *pathd_code_str(pathd_code code) {
    if ((unsigned)code >= sizeof(code_names) / sizeof(code_names[0])) return "";
    return code == PATHD_CODE_UNKNOWN ? "unknown" : code_names[code];
}

static pathd_code code_from(const char *s) {
    for (size_t i = 2; i < sizeof(code_names) / sizeof(code_names[0]); i++)
        if (strcmp(code_names[i], s) == 0) return (pathd_code)i;
    return PATHD_CODE_UNKNOWN;
}

const char *pathd_status_str(pathd_status st) {
    switch (st) {
    case PATHD_OK:
        return "PATHD_OK";
    case PATHD_ERR_API:
        return "PATHD_ERR_API";
    case PATHD_ERR_TIMEOUT:
        return "PATHD_ERR_TIMEOUT";
    case PATHD_ERR_TRANSPORT:
        return "PATHD_ERR_TRANSPORT";
    case PATHD_ERR_PROTOCOL:
        return "PATHD_ERR_PROTOCOL";
    case PATHD_ERR_ARGUMENT:
        return "PATHD_ERR_ARGUMENT";
    case PATHD_ERR_NOMEM:
        return "PATHD_ERR_NOMEM";
    case PATHD_ERR_CLOSED:
        return "PATHD_ERR_CLOSED";
    }
    return "PATHD_ERR_UNKNOWN";
}

static void err_reset(pathd_error *err) {
    if (!err) return;
    memset(err, 0, sizeof(*err));
    err->retry_after_s = -1;
}

/* Fills err (when not NULL) and returns st. */
static pathd_status fail(pathd_error *err, pathd_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        err->status = st;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
    }
    return st;
}

/* An error body {"error":{"code","message","field"?}} into err. */
static pathd_status api_error(pathd_error *err, int http_status, const jnode *root) {
    const jnode *e = jget(root, "error");
    char code[48] = "";
    if (!e || !jstr(e, "code", code, sizeof(code)))
        return fail(err, PATHD_ERR_PROTOCOL, "HTTP %d without an API error body", http_status);
    if (err) {
        err->status = PATHD_ERR_API;
        err->http_status = http_status;
        err->code = code_from(code);
        snprintf(err->code_text, sizeof(err->code_text), "%s", code);
        if (!jstr(e, "message", err->message, sizeof(err->message))) err->message[0] = '\0';
        if (!jstr(e, "field", err->field, sizeof(err->field))) err->field[0] = '\0';
    }
    return PATHD_ERR_API;
}

/* ---- the client and its HTTP call ---- */

struct pathd_client {
    CURL *curl;
    char *base;      /* without a trailing '/' */
    char auth[1100]; /* "Authorization: Bearer ..." or "" */
    long timeout_ms, connect_timeout_ms, max_retry_wait_ms;
    int max_retries;
    char curl_err[CURL_ERROR_SIZE];
    long retry_after; /* of the answer being read, -1 without one */
    char etag[48];    /* the ETag of the answer being read, "" without one */
    CURLcode last_rc; /* of the last attempt */
    /* The last ETag seen for a few maps: the base of a change's retry
     * when its outcome is unknown (pathd.h). Replaced round robin. */
    struct {
        char id[65];
        char etag[48];
    } tags[64];
    unsigned next_tag;
};

static const char *tag_of(const pathd_client *c, const char *id) {
    for (size_t i = 0; i < sizeof(c->tags) / sizeof(c->tags[0]); i++)
        if (c->tags[i].id[0] && strcmp(c->tags[i].id, id) == 0) return c->tags[i].etag;
    return NULL;
}

/* Remembers etag for id ("" forgets it). */
static void tag_set(pathd_client *c, const char *id, const char *etag) {
    size_t n = sizeof(c->tags) / sizeof(c->tags[0]), at = n;
    for (size_t i = 0; i < n && at == n; i++)
        if (c->tags[i].id[0] && strcmp(c->tags[i].id, id) == 0) at = i;
    if (!etag[0]) {
        if (at < n) c->tags[at].id[0] = '\0';
        return;
    }
    if (at == n) at = c->next_tag++ % n;
    snprintf(c->tags[at].id, sizeof(c->tags[at].id), "%s", id);
    snprintf(c->tags[at].etag, sizeof(c->tags[at].etag), "%s", etag);
}

static bool id_ok(const char *id, bool dots) {
    size_t n = id ? strlen(id) : 0;
    if (n < 1 || n > 64) return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || (dots && c == '.')))
            return false;
    }
    return true;
}

static bool curl_ready;

pathd_status pathd_client_create(const pathd_options *opts, pathd_client **out, pathd_error *err) {
    pathd_client *c;
    size_t n;
    err_reset(err);
    *out = NULL;
    if (!opts || !opts->base_url || !*opts->base_url)
        return fail(err, PATHD_ERR_ARGUMENT, "options.base_url is required");
    if (opts->token && strlen(opts->token) > 1024)
        return fail(err, PATHD_ERR_ARGUMENT, "options.token is longer than 1024 bytes");
    if (!curl_ready) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            return fail(err, PATHD_ERR_TRANSPORT, "curl_global_init failed");
        curl_ready = true;
    }
    if (!(c = (pathd_client *)calloc(1, sizeof(*c))))
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    n = strlen(opts->base_url);
    while (n > 0 && opts->base_url[n - 1] == '/') n--;
    c->base = (char *)malloc(n + 1);
    c->curl = curl_easy_init();
    if (!c->base || !c->curl) {
        pathd_client_destroy(c);
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    }
    memcpy(c->base, opts->base_url, n);
    c->base[n] = '\0';
    if (opts->token && *opts->token)
        snprintf(c->auth, sizeof(c->auth), "Authorization: Bearer %s", opts->token);
    c->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 10000;
    c->connect_timeout_ms = opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 3000;
    c->max_retries = opts->max_retries < 0 ? 0 : opts->max_retries == 0 ? 2 : opts->max_retries;
    c->max_retry_wait_ms = opts->max_retry_wait_ms > 0 ? opts->max_retry_wait_ms : 10000;
    *out = c;
    return PATHD_OK;
}

void pathd_client_destroy(pathd_client *c) {
    if (!c) return;
    if (c->curl) curl_easy_cleanup(c->curl);
    free(c->base);
    free(c);
}

void pathd_free(void *p) { free(p); }

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud) {
    buf *b = (buf *)ud;
    size_t n = size * nmemb;
    buf_add(b, data, n);
    return b->failed ? 0 : n;
}

/* Retry-After in seconds (the delta form; pathd never sends a date). */
static long parse_retry_after(const char *v, size_t n) {
    long s = 0;
    size_t i = 0;
    while (i < n && (v[i] == ' ' || v[i] == '\t')) i++;
    if (i == n || v[i] < '0' || v[i] > '9') return -1;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++)
        if ((s = s * 10 + (v[i] - '0')) > 86400) return 86400;
    return s;
}

/* Whether header line data (n bytes) is `name` ("retry-after:"). */
static bool header_is(const char *data, size_t n, const char *name) {
    size_t k = strlen(name);
    if (n <= k) return false;
    for (size_t i = 0; i < k; i++) {
        char ch = data[i];
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        if (ch != name[i]) return false;
    }
    return true;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud) {
    pathd_client *c = (pathd_client *)ud;
    size_t n = size * nmemb;
    if (header_is(data, n, "retry-after:")) c->retry_after = parse_retry_after(data + 12, n - 12);
    if (header_is(data, n, "etag:")) {
        size_t i = 5, e = n;
        while (i < n && (data[i] == ' ' || data[i] == '\t')) i++;
        while (e > i && (data[e - 1] == '\r' || data[e - 1] == '\n' || data[e - 1] == ' ')) e--;
        if (e - i < sizeof(c->etag)) {
            memcpy(c->etag, data + i, e - i);
            c->etag[e - i] = '\0';
        }
    }
    /* A status line starts the head of a (new) answer. */
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        c->retry_after = -1;
        c->etag[0] = '\0';
    }
    return n;
}

static void sleep_ms(long ms) {
#ifdef _WIN32
    Sleep((DWORD)ms);
#else
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
#endif
}

/* The API error code of an answer body, "" when it is not an API error. */
static void body_code(const buf *resp, char *code, size_t cap) {
    jdoc d;
    memset(&d, 0, sizeof(d));
    code[0] = '\0';
    if (resp->p && jparse(resp->p, resp->len, &d) == PATHD_OK) {
        const jnode *e = jget(d.root, "error");
        if (e && !jstr(e, "code", code, cap)) code[0] = '\0';
    }
    jdoc_free(&d);
}

/* Whether a 503 of a change may be retried as it is: its code says the
 * server did nothing and may take it later. */
static bool nothing_done(const buf *resp) {
    static const char *const codes[] = {"overloaded", "shutting_down", "out_of_memory", "not_ready",
                                        "store_unavailable"};
    char code[48];
    body_code(resp, code, sizeof(code));
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (strcmp(code, codes[i]) == 0) return true;
    return false;
}

/* One request with the extra header lines hdrs_in (NULL-terminated, may
 * be NULL), retried on 503 (a change only when nothing_done). On PATHD_OK
 * *status and resp hold the last answer, whatever its status. */
static pathd_status http_call_h(pathd_client *c, const char *method, const char *path,
                                const char *ctype, const char *body, size_t len,
                                const char *const *hdrs_in, bool change, int *status, buf *resp,
                                pathd_error *err) {
    buf url = BUF_INIT;
    struct curl_slist *hdrs = NULL;
    pathd_status st = PATHD_OK;
    char ct[128];
    CURL *h = c->curl;

    buf_str(&url, c->base);
    buf_str(&url, path);
    if (url.failed) return fail(err, PATHD_ERR_NOMEM, "out of memory");
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:"); /* no 100-continue round trip */
    if (ctype) {
        snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
        hdrs = curl_slist_append(hdrs, ct);
    }
    if (c->auth[0]) hdrs = curl_slist_append(hdrs, c->auth);
    for (; hdrs_in && *hdrs_in && hdrs; hdrs_in++) hdrs = curl_slist_append(hdrs, *hdrs_in);
    if (!hdrs) {
        buf_free(&url);
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    }
    for (int attempt = 0;; attempt++) {
        CURLcode rc;
        long code = 0;
        buf_free(resp);
        curl_easy_reset(h);
        c->retry_after = -1;
        c->curl_err[0] = '\0';
        curl_easy_setopt(h, CURLOPT_URL, url.p);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->curl_err);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "pathd-c/" PATHD_CLIENT_VERSION);
        if (strcmp(method, "HEAD") == 0) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
        if (body) {
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        }
        rc = curl_easy_perform(h);
        c->last_rc = rc;
        if (err) err->attempts = attempt + 1;
        if (rc != CURLE_OK) {
            if (resp->failed)
                st = fail(err, PATHD_ERR_NOMEM, "out of memory reading the answer");
            else
                st = fail(err,
                          rc == CURLE_OPERATION_TIMEDOUT ? PATHD_ERR_TIMEOUT : PATHD_ERR_TRANSPORT,
                          "%s %s: %s", method, path,
                          c->curl_err[0] ? c->curl_err : curl_easy_strerror(rc));
            break;
        }
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        *status = (int)code;
        if (err) err->retry_after_s = c->retry_after;
        if (code == 503 && attempt < c->max_retries && (!change || nothing_done(resp))) {
            long wait = c->retry_after >= 0 ? c->retry_after * 1000 : 1000;
            sleep_ms(wait < c->max_retry_wait_ms ? wait : c->max_retry_wait_ms);
            continue;
        }
        if (!resp->p) buf_add(resp, "", 0);
        if (resp->failed) st = fail(err, PATHD_ERR_NOMEM, "out of memory");
        break;
    }
    curl_slist_free_all(hdrs);
    buf_free(&url);
    return st;
}

static pathd_status http_call(pathd_client *c, const char *method, const char *path,
                              const char *ctype, const char *body, size_t len, int *status,
                              buf *resp, pathd_error *err) {
    return http_call_h(c, method, path, ctype, body, len, NULL, false, status, resp, err);
}

/* A call whose success is `ok1` or `ok2` (0 = none) with a JSON body, parsed
 * into doc. Any other status is the API error it carries. hdrs and change
 * as http_call_h. */
static pathd_status call_json_h(pathd_client *c, const char *method, const char *path,
                                const char *ctype, const buf *body, int ok1, int ok2,
                                const char *const *hdrs, bool change, jdoc *doc, int *status_out,
                                pathd_error *err) {
    buf resp = BUF_INIT;
    int status = 0;
    pathd_status st;
    memset(doc, 0, sizeof(*doc));
    if (status_out) *status_out = 0;
    if (body && body->failed) return fail(err, PATHD_ERR_NOMEM, "out of memory");
    st = http_call_h(c, method, path, ctype, body ? body->p : NULL, body ? body->len : 0, hdrs,
                     change, &status, &resp, err);
    if (st) goto out;
    if (status_out) *status_out = status;
    if ((status != ok1 && status != ok2) || resp.len) {
        st = jparse(resp.p, resp.len, doc);
        if (st == PATHD_ERR_NOMEM) {
            fail(err, st, "out of memory");
            goto out;
        }
        if (st) {
            if (err) err->http_status = status;
            st = fail(err, PATHD_ERR_PROTOCOL, "%s %s: HTTP %d with a body that is not JSON",
                      method, path, status);
            goto out;
        }
    }
    if (status != ok1 && status != ok2) {
        st = api_error(err, status, doc->root);
        if (err) err->retry_after_s = c->retry_after;
        jdoc_free(doc);
    }
out:
    if (st) jdoc_free(doc);
    buf_free(&resp);
    return st;
}

static pathd_status call_json(pathd_client *c, const char *method, const char *path,
                              const char *ctype, const buf *body, int ok1, int ok2, jdoc *doc,
                              int *status_out, pathd_error *err) {
    return call_json_h(c, method, path, ctype, body, ok1, ok2, NULL, false, doc, status_out, err);
}

/* Whether a change that ended with st (HTTP status, err) may have been
 * made without this client knowing (pathd.h). */
static bool outcome_unknown(const pathd_client *c, pathd_status st, int status,
                            const pathd_error *err) {
    if (st == PATHD_ERR_TIMEOUT) return true;
    if (st == PATHD_ERR_TRANSPORT) /* unknown unless it was never sent */
        return c->last_rc != CURLE_COULDNT_CONNECT && c->last_rc != CURLE_COULDNT_RESOLVE_HOST &&
               c->last_rc != CURLE_COULDNT_RESOLVE_PROXY;
    if (status == 502 || status == 504) return true;
    if (status == 503)
        return st == PATHD_ERR_PROTOCOL || (err && err->code == PATHD_CODE_STORE_OUTCOME_UNKNOWN);
    return false;
}

/* A change (PUT, POST, PATCH, DELETE of map id; id NULL for POST) with the
 * caller's preconditions pre, retried when its outcome is unknown as
 * pathd.h says. Success is ok1 or ok2 with a JSON body in doc (none for
 * 204); the answer's ETag is remembered for id. */
static pathd_status change_call(pathd_client *c, const char *method, const char *path,
                                const char *id, const char *ctype, const buf *body, int ok1,
                                int ok2, const pathd_precondition *pre, jdoc *doc, int *status_out,
                                pathd_error *err) {
    char im[96] = "";
    const char *hdrs[2] = {NULL, NULL};
    bool retried = false, conditional = false;
    int status = 0, attempts = 0;
    pathd_status st;
    if (pre && pre->if_match && pre->if_match[0]) {
        snprintf(im, sizeof(im), "If-Match: %s", pre->if_match);
        conditional = true;
    } else if (pre && pre->if_none_match_any) {
        snprintf(im, sizeof(im), "If-None-Match: *");
        conditional = true;
    }
    if (im[0]) hdrs[0] = im;
    for (int attempt = 0;; attempt++) {
        st = call_json_h(c, method, path, ctype, body, ok1, ok2, hdrs, true, doc, &status, err);
        attempts += err ? err->attempts : 1;
        if (err) err->attempts = attempts;
        if (st == PATHD_OK) {
            if (id) tag_set(c, id, strcmp(method, "DELETE") == 0 ? "" : c->etag);
            break;
        }
        if (retried && st == PATHD_ERR_API && status == 404 && strcmp(method, "DELETE") == 0) {
            /* Gone: by the first attempt, or by another DELETE. Done. */
            if (id) tag_set(c, id, "");
            memset(doc, 0, sizeof(*doc));
            if (status_out) *status_out = 204;
            err_reset(err);
            if (err) err->attempts = attempts;
            return PATHD_OK;
        }
        if (retried && st == PATHD_ERR_API && status == 412) {
            if (err) {
                err->code = PATHD_CODE_STORE_OUTCOME_UNKNOWN;
                snprintf(err->code_text, sizeof(err->code_text), "store_outcome_unknown");
                snprintf(err->message, sizeof(err->message),
                         "%s %s: the first attempt's outcome was unknown and its retry (%s) found "
                         "the map changed: this change, or another, was made; read the map",
                         method, path, im);
            }
            break;
        }
        if (!outcome_unknown(c, st, status, err)) break;
        /* No retry left, or none safe: an answer says store_outcome_unknown;
         * a timeout or a lost connection stays what it is (which says as
         * much). */
        if (attempt >= c->max_retries) {
            if (st != PATHD_ERR_API && st != PATHD_ERR_PROTOCOL) break;
            if (err) {
                err->status = PATHD_ERR_API;
                err->http_status = status;
                err->code = PATHD_CODE_STORE_OUTCOME_UNKNOWN;
                snprintf(err->code_text, sizeof(err->code_text), "store_outcome_unknown");
            }
            st = PATHD_ERR_API;
            break;
        }
        if (!retried && !conditional && id) {
            /* The base of the retry: the version this change applied to. */
            const char *t = tag_of(c, id);
            if (t) {
                snprintf(im, sizeof(im), "If-Match: %s", t);
                hdrs[0] = im;
            } else if (strcmp(method, "PUT") == 0) {
                snprintf(im, sizeof(im), "If-None-Match: *");
                hdrs[0] = im;
            } else if (strcmp(method, "PATCH") == 0) {
                if (st != PATHD_ERR_API && st != PATHD_ERR_PROTOCOL) break;
                if (err) {
                    err->status = PATHD_ERR_API;
                    err->http_status = status;
                    err->code = PATHD_CODE_STORE_OUTCOME_UNKNOWN;
                    snprintf(err->code_text, sizeof(err->code_text), "store_outcome_unknown");
                    snprintf(err->message, sizeof(err->message),
                             "%s %s: the outcome is unknown, and no ETag of the map is known to "
                             "retry it safely (pass pathd_precondition.if_match): read the map",
                             method, path);
                }
                st = PATHD_ERR_API;
                break;
            }
        }
        retried = true;
        {
            long ra = err ? err->retry_after_s : -1;
            long wait = ra >= 0 ? ra * 1000 : 1000;
            sleep_ms(wait < c->max_retry_wait_ms ? wait : c->max_retry_wait_ms);
        }
    }
    if (status_out) *status_out = status;
    return st;
}

pathd_status pathd_request(pathd_client *c, const char *method, const char *path, const char *ctype,
                           const char *body, size_t len, int *status, char **resp, size_t *resp_len,
                           pathd_error *err) {
    buf r = BUF_INIT;
    pathd_status st;
    err_reset(err);
    *resp = NULL;
    if (resp_len) *resp_len = 0;
    if (!path || path[0] != '/') return fail(err, PATHD_ERR_ARGUMENT, "path must start with /");
    st = http_call(c, method, path, ctype, body, len, status, &r, err);
    if (st) {
        buf_free(&r);
        return st;
    }
    *resp = r.p;
    if (resp_len) *resp_len = r.len;
    return PATHD_OK;
}

/* ---- answers into structs ---- */

static void copy_str(char *dst, size_t cap, const jnode *o, const char *key) {
    if (!jstr(o, key, dst, cap)) dst[0] = '\0';
}

static pathd_status read_map_info(const jnode *o, pathd_map_info *m, pathd_error *err) {
    int64_t v;
    double d;
    bool b;
    const jnode *h;
    memset(m, 0, sizeof(*m));
    if (!o || o->t != J_OBJ || !jstr(o, "id", m->id, sizeof(m->id)) ||
        !jint(o, "version", 0, 9007199254740992.0, &v))
        return fail(err, PATHD_ERR_PROTOCOL, "a map info without id or version");
    m->version = (uint64_t)v;
    if (jint(o, "width", 0, INT32_MAX, &v)) m->width = (int32_t)v;
    if (jint(o, "height", 0, INT32_MAX, &v)) m->height = (int32_t)v;
    if (jint(o, "connectivity", 4, 8, &v)) m->connectivity = (int)v;
    if (jbool(o, "corner_cutting", &b)) m->corner_cutting = b;
    if (jint(o, "walkable_cells", 0, 9007199254740992.0, &v)) m->walkable_cells = v;
    if (jbool(o, "uniform_cost", &b)) m->uniform_cost = b;
    if (jint(o, "doors", 0, INT32_MAX, &v)) m->doors = (int32_t)v;
    if (jnum(o, "memory_bytes", &d) && d >= 0) m->memory_bytes = (uint64_t)d;
    if (jint(o, "jps_landmarks", 0, INT32_MAX, &v)) m->jps_landmarks = (int32_t)v;
    if (jnum(o, "build_us", &d) && d >= 0) m->build_us = (uint64_t)d;
    copy_str(m->default_algorithm, sizeof(m->default_algorithm), o, "default_algorithm");
    h = jget(o, "hierarchy");
    m->has_hierarchy = h && h->t == J_OBJ;
    if (!jstr(o, "kind", m->kind, sizeof(m->kind))) snprintf(m->kind, sizeof(m->kind), "grid");
    if ((h = jget(o, "graph")) && h->t == J_OBJ) {
        if (jint(h, "nodes", 0, 9007199254740992.0, &v)) m->graph.nodes = v;
        if (jint(h, "edges", 0, 9007199254740992.0, &v)) m->graph.edges = v;
        if (jint(h, "arcs", 0, 9007199254740992.0, &v)) m->graph.arcs = v;
        if (jint(h, "disabled_nodes", 0, 9007199254740992.0, &v)) m->graph.disabled_nodes = v;
        if (jint(h, "disabled_edges", 0, 9007199254740992.0, &v)) m->graph.disabled_edges = v;
        if (jint(h, "components", 0, 9007199254740992.0, &v)) m->graph.components = v;
        if (jint(h, "dimensions", 2, 3, &v)) m->graph.dimensions = (int)v;
        if (jint(h, "max_degree", 0, INT32_MAX, &v)) m->graph.max_degree = (int)v;
        if (jint(h, "landmarks", 0, INT32_MAX, &v)) m->graph.landmarks = (int)v;
        jnum(h, "heuristic_ratio", &m->graph.heuristic_ratio);
        jnum(h, "landmark_scale", &m->graph.landmark_scale);
        if ((h = jget(h, "doors")) && h->t == J_ARR) {
            for (const jnode *dr = h->child; dr; dr = dr->next) {
                bool open = false;
                m->graph.doors++;
                if (jbool(dr, "open", &open) && open) m->graph.doors_open++;
            }
        }
    }
    return PATHD_OK;
}

static uint64_t stat_u(const jnode *stats, const char *key) {
    double d;
    return jnum(stats, key, &d) && d >= 0 ? (uint64_t)d : 0;
}

static pathd_status read_path(const jnode *o, pathd_path *p, pathd_error *err) {
    const jnode *stats;
    int64_t v;
    pathd_status st;
    memset(p, 0, sizeof(*p));
    if (!o || !jbool(o, "found", &p->found))
        return fail(err, PATHD_ERR_PROTOCOL, "a path answer without 'found'");
    if (p->found && !jnum(o, "cost", &p->cost))
        return fail(err, PATHD_ERR_PROTOCOL, "a found path without 'cost'");
    copy_str(p->reason, sizeof(p->reason), o, "reason");
    copy_str(p->algorithm, sizeof(p->algorithm), o, "algorithm");
    if (jint(o, "map_version", 0, 9007199254740992.0, &v)) p->map_version = (uint64_t)v;
    stats = jget(o, "stats");
    p->expanded = stat_u(stats, "expanded");
    p->time_us = stat_u(stats, "time_us");
    {
        bool cached = false;
        jbool(stats, "cached", &cached);
        p->cached = cached;
    }
    st = jpoints(jget(o, "path"), &p->points, &p->npoints);
    if (st == PATHD_ERR_NOMEM) return fail(err, st, "out of memory");
    if (st) return fail(err, st, "a path answer whose 'path' is not a list of points");
    return PATHD_OK;
}

static pathd_status read_session(const jnode *o, pathd_session *s, pathd_error *err) {
    const jnode *stats;
    int64_t v;
    pathd_status st;
    memset(s, 0, sizeof(*s));
    if (!o || !jstr(o, "session_id", s->session_id, sizeof(s->session_id)) ||
        !jbool(o, "found", &s->found) || !jpoint(jget(o, "position"), &s->position) ||
        !jpoint(jget(o, "goal"), &s->goal))
        return fail(err, PATHD_ERR_PROTOCOL, "a session answer without its fields");
    copy_str(s->map_id, sizeof(s->map_id), o, "map_id");
    if (s->found && !jnum(o, "cost", &s->cost))
        return fail(err, PATHD_ERR_PROTOCOL, "a found session path without 'cost'");
    copy_str(s->reason, sizeof(s->reason), o, "reason");
    if (jint(o, "map_version", 0, 9007199254740992.0, &v)) s->map_version = (uint64_t)v;
    if (jint(o, "ttl_s", 0, 1e12, &v)) s->ttl_s = (long)v;
    stats = jget(o, "stats");
    s->expanded = stat_u(stats, "expanded");
    s->time_us = stat_u(stats, "time_us");
    s->updates = stat_u(stats, "updates");
    s->memory_bytes = stat_u(stats, "memory_bytes");
    copy_str(s->rebase, sizeof(s->rebase), stats, "rebase");
    {
        const jnode *rp = jget(o, "replan");
        bool b = false;
        if (rp) {
            const jnode *pol = jget(rp, "policy");
            int64_t iv;
            copy_str(s->replan_reason, sizeof(s->replan_reason), rp, "reason");
            copy_str(s->replan_route, sizeof(s->replan_route), rp, "route");
            if (jbool(rp, "replanned", &b)) s->replanned = b;
            if (jbool(rp, "flip", &b)) s->flip = b;
            pathd_replan_policy_init(&s->policy);
            if (pol) {
                if (jint(pol, "min_interval_ms", 0, 1e12, &iv))
                    s->policy.min_interval_ms = (long)iv;
                if (jint(pol, "min_updates", 0, 1e12, &iv)) s->policy.min_updates = (long)iv;
                if (!jnum(pol, "goal_threshold", &s->policy.goal_threshold))
                    s->policy.goal_threshold = -1;
                if (!jnum(pol, "hysteresis", &s->policy.hysteresis)) s->policy.hysteresis = -1;
            }
        }
        if (jbool(o, "unchanged", &b) && b) {
            s->unchanged = true; /* a stream's short answer: no path */
            return PATHD_OK;
        }
    }
    st = jpoints(jget(o, "path"), &s->points, &s->npoints);
    if (st == PATHD_ERR_NOMEM) return fail(err, st, "out of memory");
    if (st) return fail(err, st, "a session answer whose 'path' is not a list of points");
    return PATHD_OK;
}

void pathd_path_free(pathd_path *p) {
    if (!p) return;
    free(p->points);
    p->points = NULL;
    p->npoints = 0;
}

void pathd_session_free(pathd_session *s) {
    if (!s) return;
    free(s->points);
    s->points = NULL;
    s->npoints = 0;
}

void pathd_map_list_free(pathd_map_list *l) {
    if (!l) return;
    free(l->maps);
    l->maps = NULL;
    l->n = 0;
}

void pathd_batch_free(pathd_batch *b) {
    if (!b) return;
    for (size_t i = 0; i < b->n; i++) pathd_path_free(&b->slots[i].path);
    free(b->slots);
    b->slots = NULL;
    b->n = 0;
}

/* ---- maps ---- */

static pathd_status check_map_id(const char *id, pathd_error *err) {
    return id_ok(id, true) ? PATHD_OK
                           : fail(err, PATHD_ERR_ARGUMENT,
                                  "a map id is 1 to 64 characters of A-Z a-z 0-9 _ . -");
}

static pathd_status check_sid(const char *sid, pathd_error *err) {
    return id_ok(sid, false) ? PATHD_OK
                             : fail(err, PATHD_ERR_ARGUMENT,
                                    "a session id is 1 to 64 characters of A-Z a-z 0-9 _ -");
}

/* The answer's ETag into out, and remembered for its map. */
static void keep_etag(pathd_client *c, pathd_map_info *out) {
    snprintf(out->etag, sizeof(out->etag), "%s", c->etag);
    if (c->etag[0] && out->id[0]) tag_set(c, out->id, c->etag);
}

static pathd_status upload(pathd_client *c, const char *method, const char *path, const char *id,
                           const char *body, size_t len, pathd_map_format fmt,
                           const pathd_precondition *pre, pathd_map_info *out, pathd_error *err) {
    buf b = BUF_INIT;
    jdoc doc;
    int status = 0;
    pathd_status st;
    if (!body) return fail(err, PATHD_ERR_ARGUMENT, "no map body");
    buf_add(&b, body, len);
    st = change_call(c, method, path, id,
                     fmt == PATHD_MAP_JSON ? "application/json" : "text/x-movingai-map", &b, 200,
                     201, pre, &doc, &status, err);
    buf_free(&b);
    if (st) return st;
    st = read_map_info(doc.root, out, err);
    if (!st) {
        out->created = status == 201;
        keep_etag(c, out);
    }
    jdoc_free(&doc);
    return st;
}

pathd_status pathd_map_put(pathd_client *c, const char *id, const char *body, size_t len,
                           pathd_map_format fmt, pathd_map_info *out, pathd_error *err) {
    return pathd_map_put_cond(c, id, body, len, fmt, NULL, out, err);
}

pathd_status pathd_map_put_cond(pathd_client *c, const char *id, const char *body, size_t len,
                                pathd_map_format fmt, const pathd_precondition *pre,
                                pathd_map_info *out, pathd_error *err) {
    char path[128];
    err_reset(err);
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    snprintf(path, sizeof(path), "/v1/maps/%s", id);
    return upload(c, "PUT", path, id, body, len, fmt, pre, out, err);
}

pathd_status pathd_map_create(pathd_client *c, const char *body, size_t len, pathd_map_format fmt,
                              pathd_map_info *out, pathd_error *err) {
    err_reset(err);
    return upload(c, "POST", "/v1/maps", NULL, body, len, fmt, NULL, out, err);
}

pathd_status pathd_map_get(pathd_client *c, const char *id, pathd_map_info *out, pathd_error *err) {
    char path[128];
    jdoc doc;
    pathd_status st;
    err_reset(err);
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    snprintf(path, sizeof(path), "/v1/maps/%s", id);
    if ((st = call_json(c, "GET", path, NULL, NULL, 200, 0, &doc, NULL, err))) return st;
    st = read_map_info(doc.root, out, err);
    if (!st) keep_etag(c, out);
    jdoc_free(&doc);
    return st;
}

pathd_status pathd_map_delete(pathd_client *c, const char *id, pathd_error *err) {
    return pathd_map_delete_cond(c, id, NULL, err);
}

pathd_status pathd_map_delete_cond(pathd_client *c, const char *id, const pathd_precondition *pre,
                                   pathd_error *err) {
    char path[128];
    jdoc doc;
    pathd_status st;
    err_reset(err);
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    snprintf(path, sizeof(path), "/v1/maps/%s", id);
    st = change_call(c, "DELETE", path, id, NULL, NULL, 204, 0, pre, &doc, NULL, err);
    jdoc_free(&doc);
    return st;
}

pathd_status pathd_maps_list(pathd_client *c, pathd_map_list *out, pathd_error *err) {
    jdoc doc;
    const jnode *maps;
    size_t n = 0;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if ((st = call_json(c, "GET", "/v1/maps", NULL, NULL, 200, 0, &doc, NULL, err))) return st;
    maps = jget(doc.root, "maps");
    if (!maps || maps->t != J_ARR) {
        st = fail(err, PATHD_ERR_PROTOCOL, "GET /v1/maps: no 'maps' list");
        goto out;
    }
    for (const jnode *m = maps->child; m; m = m->next) n++;
    if (n && !(out->maps = (pathd_map_info *)calloc(n, sizeof(*out->maps)))) {
        st = fail(err, PATHD_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (const jnode *m = maps->child; m; m = m->next) {
        if ((st = read_map_info(m, &out->maps[out->n], err))) {
            pathd_map_list_free(out);
            goto out;
        }
        out->n++;
    }
out:
    jdoc_free(&doc);
    return st;
}

static void jw_cells(buf *b, const pathd_cell_change *cells, size_t n) {
    buf_str(b, "[");
    for (size_t i = 0; i < n; i++)
        buf_printf(b, "%s{\"x\":%ld,\"y\":%ld,\"cost\":%d}", i ? "," : "", (long)cells[i].x,
                   (long)cells[i].y, cells[i].cost);
    buf_str(b, "]");
}

static void jw_doors(buf *b, const pathd_door_switch *doors, size_t n) {
    buf_str(b, "[");
    for (size_t i = 0; i < n; i++) {
        buf_str(b, i ? ",{\"id\":" : "{\"id\":");
        jw_str(b, doors[i].id ? doors[i].id : "");
        buf_str(b, doors[i].open ? ",\"open\":true}" : ",\"open\":false}");
    }
    buf_str(b, "]");
}

pathd_status pathd_map_patch(pathd_client *c, const char *id, const pathd_cell_change *cells,
                             size_t ncells, const pathd_door_switch *doors, size_t ndoors,
                             pathd_map_info *out, pathd_error *err) {
    return pathd_map_patch_cond(c, id, cells, ncells, doors, ndoors, NULL, out, err);
}

pathd_status pathd_map_patch_cond(pathd_client *c, const char *id, const pathd_cell_change *cells,
                                  size_t ncells, const pathd_door_switch *doors, size_t ndoors,
                                  const pathd_precondition *pre, pathd_map_info *out,
                                  pathd_error *err) {
    char path[128];
    buf b = BUF_INIT;
    jdoc doc;
    pathd_status st;
    err_reset(err);
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    snprintf(path, sizeof(path), "/v1/maps/%s", id);
    buf_str(&b, "{");
    if (ncells) {
        buf_str(&b, "\"cells\":");
        jw_cells(&b, cells, ncells);
    }
    if (ndoors) {
        buf_str(&b, ncells ? ",\"doors\":" : "\"doors\":");
        jw_doors(&b, doors, ndoors);
    }
    buf_str(&b, "}");
    st = change_call(c, "PATCH", path, id, "application/json", &b, 200, 0, pre, &doc, NULL, err);
    buf_free(&b);
    if (st) return st;
    st = read_map_info(doc.root, out, err);
    if (!st) keep_etag(c, out);
    jdoc_free(&doc);
    return st;
}

pathd_status pathd_map_cells(pathd_client *c, const char *id, char **json, size_t *len,
                             pathd_error *err) {
    char path[128];
    int status = 0;
    pathd_status st;
    *json = NULL;
    err_reset(err);
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    snprintf(path, sizeof(path), "/v1/maps/%s/cells", id);
    {
        buf r = BUF_INIT;
        if ((st = http_call(c, "GET", path, NULL, NULL, 0, &status, &r, err))) return st;
        if (status != 200) {
            jdoc doc;
            if (jparse(r.p, r.len, &doc) == PATHD_OK) {
                st = api_error(err, status, doc.root);
            } else {
                if (err) err->http_status = status;
                st = fail(err, PATHD_ERR_PROTOCOL, "HTTP %d with a body that is not JSON", status);
            }
            jdoc_free(&doc);
            buf_free(&r);
            return st;
        }
        *json = r.p;
        if (len) *len = r.len;
    }
    return PATHD_OK;
}

/* ---- paths ---- */

pathd_path_options pathd_path_options_default(void) {
    pathd_path_options o;
    memset(&o, 0, sizeof(o));
    o.cache = -1;
    return o;
}

/* The members of a PathRequest after start and goal. */
static void jw_path_opts(buf *b, const pathd_path_options *o, bool deadline) {
    if (!o) return;
    if (o->algorithm) {
        buf_str(b, ",\"algorithm\":");
        jw_str(b, o->algorithm);
    }
    if (o->weight > 0) {
        buf_str(b, ",\"weight\":");
        jw_double(b, o->weight);
    }
    if (o->heuristic) {
        buf_str(b, ",\"heuristic\":");
        jw_str(b, o->heuristic);
    }
    if (o->smooth) buf_str(b, ",\"smooth\":true");
    if (o->debug) buf_str(b, ",\"debug\":true");
    if (o->cache == 0) buf_str(b, ",\"cache\":false");
    if (deadline && o->deadline_ms > 0) buf_printf(b, ",\"deadline_ms\":%ld", o->deadline_ms);
    if (o->max_expanded > 0) buf_printf(b, ",\"max_expanded\":%ld", o->max_expanded);
}

pathd_status pathd_find_path(pathd_client *c, const char *id, pathd_point start, pathd_point goal,
                             const pathd_path_options *opts, pathd_path *out, pathd_error *err) {
    char path[128];
    buf b = BUF_INIT;
    jdoc doc;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    snprintf(path, sizeof(path), "/v1/maps/%s/path", id);
    buf_str(&b, "{\"start\":");
    jw_point(&b, start);
    buf_str(&b, ",\"goal\":");
    jw_point(&b, goal);
    jw_path_opts(&b, opts, true);
    buf_str(&b, "}");
    st = call_json(c, "POST", path, "application/json", &b, 200, 0, &doc, NULL, err);
    buf_free(&b);
    if (st) return st;
    st = read_path(doc.root, out, err);
    jdoc_free(&doc);
    return st;
}

/* A batch answer's results, n of them, and its map_version. */
static pathd_status batch_results(const jnode *root, size_t n, const jnode **results,
                                  uint64_t *map_version, pathd_error *err) {
    size_t k = 0;
    int64_t v;
    *results = jget(root, "results");
    if (!*results || (*results)->t != J_ARR)
        return fail(err, PATHD_ERR_PROTOCOL, "a batch answer without 'results'");
    for (const jnode *r = (*results)->child; r; r = r->next) k++;
    if (k != n)
        return fail(err, PATHD_ERR_PROTOCOL, "a batch of %zu queries got %zu results", n, k);
    if (jint(root, "map_version", 0, 9007199254740992.0, &v)) *map_version = (uint64_t)v;
    return PATHD_OK;
}

/* Batch slot k's own error into slot_err (slot_st PATHD_ERR_API). */
static pathd_status batch_slot_error(const jnode *r, size_t k, pathd_status *slot_st,
                                     pathd_error *slot_err, pathd_error *err) {
    int64_t http;
    if (!jint(r, "status", 400, 599, &http)) http = 0;
    *slot_st = api_error(slot_err, (int)http, r);
    if (*slot_st != PATHD_ERR_API)
        return fail(err, PATHD_ERR_PROTOCOL, "batch slot %zu: a malformed error", k);
    return PATHD_OK;
}

pathd_status pathd_find_paths(pathd_client *c, const char *id, const pathd_query *queries, size_t n,
                              long deadline_ms, pathd_batch *out, pathd_error *err) {
    char path[128];
    buf b = BUF_INIT;
    jdoc doc;
    const jnode *results, *r;
    size_t k = 0;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    if (n == 0 || !queries) return fail(err, PATHD_ERR_ARGUMENT, "a batch needs a query");
    snprintf(path, sizeof(path), "/v1/maps/%s/paths", id);
    buf_str(&b, "{\"queries\":[");
    for (size_t i = 0; i < n; i++) {
        buf_str(&b, i ? ",{\"start\":" : "{\"start\":");
        jw_point(&b, queries[i].start);
        buf_str(&b, ",\"goal\":");
        jw_point(&b, queries[i].goal);
        jw_path_opts(&b, queries[i].opts, false);
        buf_str(&b, "}");
    }
    buf_str(&b, "]");
    if (deadline_ms > 0) buf_printf(&b, ",\"deadline_ms\":%ld", deadline_ms);
    buf_str(&b, "}");
    st = call_json(c, "POST", path, "application/json", &b, 200, 0, &doc, NULL, err);
    buf_free(&b);
    if (st) return st;
    if ((st = batch_results(doc.root, n, &results, &out->map_version, err))) goto out;
    if (!(out->slots = (pathd_batch_slot *)calloc(n, sizeof(*out->slots)))) {
        st = fail(err, PATHD_ERR_NOMEM, "out of memory");
        goto out;
    }
    out->n = n;
    for (r = results->child; r; r = r->next, k++) {
        pathd_batch_slot *slot = &out->slots[k];
        err_reset(&slot->error);
        if (jget(r, "error"))
            st = batch_slot_error(r, k, &slot->status, &slot->error, err);
        else
            st = read_path(r, &slot->path, err);
        if (st) {
            pathd_batch_free(out);
            goto out;
        }
    }
out:
    jdoc_free(&doc);
    return st;
}

/* ---- sessions ---- */

void pathd_replan_policy_init(pathd_replan_policy *p) {
    p->min_interval_ms = -1;
    p->min_updates = -1;
    p->goal_threshold = -1;
    p->hysteresis = -1;
}

/* Whether p's members are numbers (a negative one is "not sent"). */
static bool replan_ok(const pathd_replan_policy *p) {
    return !p || (isfinite(p->goal_threshold) && isfinite(p->hysteresis));
}

/* ,"replan":{...} with p's members that are sent; nothing for NULL. */
/* A session's limits as members of its create body (the members 0 not
 * sent). */
static void jw_limits(buf *b, const pathd_session_limits *l) {
    if (!l) return;
    if (l->max_expanded) buf_printf(b, ",\"max_expanded\":%ld", l->max_expanded);
    if (l->deadline_ms) buf_printf(b, ",\"deadline_ms\":%ld", l->deadline_ms);
}

static void jw_replan(buf *b, const pathd_replan_policy *p, bool first) {
    const char *sep = "";
    if (!p) return;
    buf_str(b, first ? "\"replan\":{" : ",\"replan\":{");
    if (p->min_interval_ms >= 0) {
        buf_printf(b, "\"min_interval_ms\":%ld", p->min_interval_ms);
        sep = ",";
    }
    if (p->min_updates >= 0) {
        buf_printf(b, "%s\"min_updates\":%ld", sep, p->min_updates);
        sep = ",";
    }
    if (p->goal_threshold >= 0) {
        buf_printf(b, "%s\"goal_threshold\":", sep);
        jw_double(b, p->goal_threshold);
        sep = ",";
    }
    if (p->hysteresis >= 0) {
        buf_printf(b, "%s\"hysteresis\":", sep);
        jw_double(b, p->hysteresis);
    }
    buf_str(b, "}");
}

static void jw_update(buf *b, const pathd_update *u) {
    bool first = true;
    buf_str(b, "{");
    if (u->position) {
        buf_str(b, "\"position\":");
        jw_point(b, *u->position);
        first = false;
    }
    if (u->goal) {
        buf_str(b, first ? "\"goal\":" : ",\"goal\":");
        jw_point(b, *u->goal);
        first = false;
    }
    if (u->ncells) {
        buf_str(b, first ? "\"cells\":" : ",\"cells\":");
        jw_cells(b, u->cells, u->ncells);
        first = false;
    }
    if (u->ndoors) {
        buf_str(b, first ? "\"doors\":" : ",\"doors\":");
        jw_doors(b, u->doors, u->ndoors);
        first = false;
    }
    jw_replan(b, u->replan, first);
    buf_str(b, "}");
}

static pathd_status session_call(pathd_client *c, const char *method, const char *path,
                                 const char *ctype, const buf *body, int ok, pathd_session *out,
                                 pathd_error *err) {
    jdoc doc;
    pathd_status st = call_json(c, method, path, ctype, body, ok, 0, &doc, NULL, err);
    if (st) return st;
    st = read_session(doc.root, out, err);
    jdoc_free(&doc);
    return st;
}

pathd_status pathd_session_create(pathd_client *c, const char *map_id, pathd_point start,
                                  pathd_point goal, long ttl_s, pathd_session *out,
                                  pathd_error *err) {
    return pathd_session_create_with(c, map_id, start, goal, ttl_s, NULL, out, err);
}

pathd_status pathd_session_create_with(pathd_client *c, const char *map_id, pathd_point start,
                                       pathd_point goal, long ttl_s,
                                       const pathd_replan_policy *replan, pathd_session *out,
                                       pathd_error *err) {
    return pathd_session_create_limited(c, map_id, start, goal, ttl_s, replan, NULL, out, err);
}

pathd_status pathd_session_create_limited(pathd_client *c, const char *map_id, pathd_point start,
                                          pathd_point goal, long ttl_s,
                                          const pathd_replan_policy *replan,
                                          const pathd_session_limits *limits, pathd_session *out,
                                          pathd_error *err) {
    char path[160];
    buf b = BUF_INIT;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (check_map_id(map_id, err)) return PATHD_ERR_ARGUMENT;
    if (!replan_ok(replan)) return fail(err, PATHD_ERR_ARGUMENT, "a replan member is not a number");
    snprintf(path, sizeof(path), "/v1/maps/%s/sessions", map_id);
    buf_str(&b, "{\"start\":");
    jw_point(&b, start);
    buf_str(&b, ",\"goal\":");
    jw_point(&b, goal);
    if (ttl_s > 0) buf_printf(&b, ",\"ttl_s\":%ld", ttl_s);
    jw_replan(&b, replan, false);
    jw_limits(&b, limits);
    buf_str(&b, "}");
    st = session_call(c, "POST", path, "application/json", &b, 201, out, err);
    buf_free(&b);
    return st;
}

static pathd_status session_path(const char *map_id, const char *sid, const char *tail, char *path,
                                 size_t cap, pathd_error *err) {
    if (check_map_id(map_id, err) || check_sid(sid, err)) return PATHD_ERR_ARGUMENT;
    snprintf(path, cap, "/v1/maps/%s/sessions/%s%s", map_id, sid, tail);
    return PATHD_OK;
}

pathd_status pathd_session_get(pathd_client *c, const char *map_id, const char *sid,
                               pathd_session *out, pathd_error *err) {
    char path[200];
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (session_path(map_id, sid, "", path, sizeof(path), err)) return PATHD_ERR_ARGUMENT;
    return session_call(c, "GET", path, NULL, NULL, 200, out, err);
}

pathd_status pathd_session_delete(pathd_client *c, const char *map_id, const char *sid,
                                  pathd_error *err) {
    char path[200];
    jdoc doc;
    pathd_status st;
    err_reset(err);
    if (session_path(map_id, sid, "", path, sizeof(path), err)) return PATHD_ERR_ARGUMENT;
    st = call_json(c, "DELETE", path, NULL, NULL, 204, 0, &doc, NULL, err);
    jdoc_free(&doc);
    return st;
}

pathd_status pathd_session_update(pathd_client *c, const char *map_id, const char *sid,
                                  const pathd_update *ups, size_t n, pathd_session *out,
                                  pathd_error *err) {
    char path[200];
    buf b = BUF_INIT;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (session_path(map_id, sid, "/updates", path, sizeof(path), err)) return PATHD_ERR_ARGUMENT;
    if (!ups || n == 0) return fail(err, PATHD_ERR_ARGUMENT, "no update");
    for (size_t i = 0; i < n; i++)
        if (!replan_ok(ups[i].replan))
            return fail(err, PATHD_ERR_ARGUMENT, "update %zu: a replan member is not a number", i);
    for (size_t i = 0; i < n; i++) {
        jw_update(&b, &ups[i]);
        if (n > 1) buf_str(&b, "\n");
    }
    st = session_call(c, "POST", path, n > 1 ? "application/x-ndjson" : "application/json", &b, 200,
                      out, err);
    buf_free(&b);
    return st;
}

/* ---- WebSocket stream (RFC 6455) ---- */

/* SHA-1 (FIPS 180-4), for Sec-WebSocket-Accept only. */
static uint32_t rol(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

static void sha1(const unsigned char *msg, size_t len, unsigned char out[20]) {
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    size_t total = ((len + 8) / 64 + 1) * 64;
    unsigned char block[64];
    for (size_t off = 0; off < total; off += 64) {
        uint32_t w[80], a, b, c, d, e;
        for (size_t i = 0; i < 64; i++) {
            size_t k = off + i;
            block[i] = k < len ? msg[k] : k == len ? 0x80 : 0;
        }
        if (off + 64 == total)
            for (int i = 0; i < 8; i++)
                block[56 + i] = (unsigned char)((uint64_t)len * 8 >> (56 - 8 * i));
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
                   (uint32_t)block[4 * i + 2] << 8 | block[4 * i + 3];
        for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
            uint32_t f, k, t;
            if (i < 20)
                f = (b & c) | (~b & d), k = 0x5A827999;
            else if (i < 40)
                f = b ^ c ^ d, k = 0x6ED9EBA1;
            else if (i < 60)
                f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
            else
                f = b ^ c ^ d, k = 0xCA62C1D6;
            t = rol(a, 5) + f + e + k + w[i];
            e = d, d = c, c = rol(b, 30), b = a, a = t;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
    }
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (unsigned char)(h[i] >> (24 - 8 * j));
}

static void base64(const unsigned char *in, size_t n, char *out) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[o++] = t[v >> 18 & 63];
        out[o++] = t[v >> 12 & 63];
        out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = '\0';
}

/* Unpredictable bytes for the handshake key and the frame masks (RFC 6455
 * 5.3 asks for a strong source). */
static void random_bytes(unsigned char *p, size_t n) {
    size_t got = 0;
#ifdef _WIN32
    while (got < n) {
        unsigned int v;
        if (rand_s(&v) != 0) break;
        p[got++] = (unsigned char)v;
    }
#else
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        got = fread(p, 1, n, f);
        fclose(f);
    }
#endif
    if (got < n) { /* last resort, never expected */
        static unsigned long x = 0x9e3779b9UL;
        x ^= (unsigned long)time(NULL) ^ (unsigned long)(uintptr_t)p;
        for (; got < n; got++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            p[got] = (unsigned char)(x >> 33);
        }
    }
}

struct pathd_stream {
    pathd_client *client;
    CURL *curl;
    curl_socket_t sock;
    buf in;        /* received bytes not yet consumed */
    size_t in_off; /* consumed prefix of `in` */
    bool closed;
};

static long now_ms(void) {
#ifdef _WIN32
    return (long)GetTickCount();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
#endif
}

/* Waits until the socket is readable (or writable); false on timeout. */
static bool wait_sock(curl_socket_t s, bool for_write, long timeout_ms) {
#ifdef _WIN32
    fd_set fs;
    struct timeval tv;
    FD_ZERO(&fs);
    FD_SET(s, &fs);
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    return select(0, for_write ? NULL : &fs, for_write ? &fs : NULL, NULL, &tv) > 0;
#else
    struct pollfd p;
    p.fd = s;
    p.events = for_write ? POLLOUT : POLLIN;
    p.revents = 0;
    for (;;) {
        int rc = poll(&p, 1, (int)(timeout_ms > INT_MAX ? INT_MAX : timeout_ms));
        if (rc < 0 && errno == EINTR) continue;
        return rc > 0;
    }
#endif
}

static pathd_status ws_send_raw(pathd_stream *s, const unsigned char *p, size_t n,
                                pathd_error *err) {
    long deadline = now_ms() + s->client->timeout_ms;
    while (n > 0) {
        size_t sent = 0;
        CURLcode rc = curl_easy_send(s->curl, p, n, &sent);
        if (rc == CURLE_AGAIN) {
            long left = deadline - now_ms();
            if (left <= 0 || !wait_sock(s->sock, true, left))
                return fail(err, PATHD_ERR_TIMEOUT, "WebSocket send timed out");
            continue;
        }
        if (rc != CURLE_OK)
            return fail(err, PATHD_ERR_TRANSPORT, "WebSocket send: %s", curl_easy_strerror(rc));
        p += sent;
        n -= sent;
    }
    return PATHD_OK;
}

/* Makes at least `need` unconsumed bytes available, reading until deadline. */
static pathd_status ws_fill(pathd_stream *s, size_t need, long deadline, pathd_error *err) {
    unsigned char tmp[16384];
    while (s->in.len - s->in_off < need) {
        size_t got = 0;
        CURLcode rc = curl_easy_recv(s->curl, tmp, sizeof(tmp), &got);
        if (rc == CURLE_AGAIN) {
            long left = deadline - now_ms();
            if (left <= 0 || !wait_sock(s->sock, false, left))
                return fail(err, PATHD_ERR_TIMEOUT, "no WebSocket answer within the timeout");
            continue;
        }
        if (rc != CURLE_OK)
            return fail(err, PATHD_ERR_TRANSPORT, "WebSocket receive: %s", curl_easy_strerror(rc));
        if (got == 0) {
            s->closed = true;
            if (err) err->close_code = 1006;
            return fail(err, PATHD_ERR_CLOSED, "the server closed the connection");
        }
        if (s->in_off > 0 && s->in_off == s->in.len) {
            s->in.len = 0;
            s->in_off = 0;
        }
        buf_add(&s->in, (const char *)tmp, got);
        if (s->in.failed) return fail(err, PATHD_ERR_NOMEM, "out of memory");
    }
    return PATHD_OK;
}

static pathd_status ws_frame(pathd_stream *s, int op, const unsigned char *data, size_t n,
                             pathd_error *err) {
    unsigned char hdr[14], mask[4];
    size_t h = 2;
    buf f = BUF_INIT;
    pathd_status st;
    random_bytes(mask, 4);
    hdr[0] = (unsigned char)(0x80 | op);
    if (n < 126) {
        hdr[1] = (unsigned char)(0x80 | n);
    } else if (n <= 0xffff) {
        hdr[1] = 0x80 | 126;
        hdr[2] = (unsigned char)(n >> 8);
        hdr[3] = (unsigned char)n;
        h = 4;
    } else {
        hdr[1] = 0x80 | 127;
        for (int i = 0; i < 8; i++) hdr[2 + i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
        h = 10;
    }
    memcpy(hdr + h, mask, 4);
    h += 4;
    buf_add(&f, (const char *)hdr, h);
    if (!buf_reserve(&f, n)) {
        buf_free(&f);
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) f.p[h + i] = (char)(data[i] ^ mask[i & 3]);
    f.len = h + n;
    st = ws_send_raw(s, (const unsigned char *)f.p, f.len, err);
    buf_free(&f);
    return st;
}

/* Reads the handshake answer's head into `head`; the bytes after it stay in
 * s->in for the frames. */
static pathd_status ws_read_head(pathd_stream *s, buf *head, long deadline, pathd_error *err) {
    for (;;) {
        const char *p = s->in.p ? s->in.p + s->in_off : NULL;
        size_t avail = s->in.len - s->in_off;
        for (size_t i = 3; p && i < avail; i++) {
            if (p[i - 3] == '\r' && p[i - 2] == '\n' && p[i - 1] == '\r' && p[i] == '\n') {
                buf_add(head, p, i + 1);
                s->in_off += i + 1;
                return head->failed ? fail(err, PATHD_ERR_NOMEM, "out of memory") : PATHD_OK;
            }
        }
        if (avail > 65536)
            return fail(err, PATHD_ERR_PROTOCOL, "a handshake answer head over 64 KiB");
        {
            pathd_status st = ws_fill(s, avail + 1, deadline, err);
            if (st)
                return st == PATHD_ERR_CLOSED ? fail(err, PATHD_ERR_TRANSPORT,
                                                     "the connection closed in the handshake")
                                              : st;
        }
    }
}

/* The value of header `name` in a head ("Name: value\r\n"), or NULL. */
static const char *head_value(const char *head, const char *name, size_t *vlen) {
    size_t nl = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p; p = strstr(p, "\r\n")) {
        p += 2;
        if (strlen(p) > nl && p[nl] == ':') {
            bool same = true;
            for (size_t i = 0; i < nl && same; i++) {
                char a = p[i], b = name[i];
                if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
                if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
                same = a == b;
            }
            if (same) {
                const char *v = p + nl + 1, *e;
                while (*v == ' ' || *v == '\t') v++;
                e = strstr(v, "\r\n");
                *vlen = e ? (size_t)(e - v) : strlen(v);
                while (*vlen && (v[*vlen - 1] == ' ' || v[*vlen - 1] == '\t')) (*vlen)--;
                return v;
            }
        }
    }
    return NULL;
}

static bool same_token(const char *v, size_t n, const char *want) {
    if (n != strlen(want)) return false;
    for (size_t i = 0; i < n; i++) {
        char a = v[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (a != want[i]) return false;
    }
    return true;
}

void pathd_stream_close(pathd_stream *s) {
    if (!s) return;
    if (s->curl && !s->closed) {
        static const unsigned char normal[2] = {0x03, 0xe8}; /* 1000 */
        pathd_error e;
        long deadline = now_ms() + 1000;
        if (ws_frame(s, 8, normal, 2, &e) == PATHD_OK) {
            /* Wait briefly for the echo; anything else is dropped. */
            while (ws_fill(s, s->in.len - s->in_off + 1, deadline, &e) == PATHD_OK) {
            }
        }
    }
    if (s->curl) curl_easy_cleanup(s->curl);
    buf_free(&s->in);
    free(s);
}

/* One handshake attempt. On a refusal, *status is its HTTP status and err
 * says why; *retry_after its Retry-After. */
static pathd_status ws_connect(pathd_client *c, const char *path, pathd_stream **out, int *status,
                               long *retry_after, pathd_error *err) {
    pathd_stream *s;
    CURLU *u = NULL;
    char *host = NULL, *port = NULL, *prefix = NULL;
    unsigned char key_raw[16], digest[20];
    char key[32], accept[32], keyguid[80];
    buf url = BUF_INIT, req = BUF_INIT, head = BUF_INIT;
    pathd_status st = PATHD_OK;
    long deadline = now_ms() + c->timeout_ms;
    CURLcode rc;

    *out = NULL;
    *status = 0;
    *retry_after = -1;
    if (!(s = (pathd_stream *)calloc(1, sizeof(*s))))
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    s->client = c;
    if (!(s->curl = curl_easy_init()) || !(u = curl_url())) {
        st = fail(err, PATHD_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (curl_url_set(u, CURLUPART_URL, c->base, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        st = fail(err, PATHD_ERR_ARGUMENT, "base_url '%s' is not a URL", c->base);
        goto out;
    }
    curl_url_get(u, CURLUPART_PORT, &port, 0); /* only when the URL names one */
    if (curl_url_get(u, CURLUPART_PATH, &prefix, 0) != CURLUE_OK) prefix = NULL;
    buf_str(&url, c->base);
    buf_str(&url, path);
    curl_easy_setopt(s->curl, CURLOPT_URL, url.p);
    curl_easy_setopt(s->curl, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(s->curl, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    curl_easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
    if ((rc = curl_easy_perform(s->curl)) != CURLE_OK) {
        st = fail(err, rc == CURLE_OPERATION_TIMEDOUT ? PATHD_ERR_TIMEOUT : PATHD_ERR_TRANSPORT,
                  "WebSocket connect: %s", curl_easy_strerror(rc));
        goto out;
    }
    if (curl_easy_getinfo(s->curl, CURLINFO_ACTIVESOCKET, &s->sock) != CURLE_OK ||
        s->sock == CURL_SOCKET_BAD) {
        st = fail(err, PATHD_ERR_TRANSPORT, "WebSocket connect: no socket");
        goto out;
    }
    random_bytes(key_raw, sizeof(key_raw));
    base64(key_raw, sizeof(key_raw), key);
    snprintf(keyguid, sizeof(keyguid), "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    sha1((const unsigned char *)keyguid, strlen(keyguid), digest);
    base64(digest, sizeof(digest), accept);
    buf_str(&req, "GET ");
    if (prefix && strcmp(prefix, "/") != 0) {
        size_t pl = strlen(prefix);
        buf_add(&req, prefix, prefix[pl - 1] == '/' ? pl - 1 : pl);
    }
    buf_str(&req, path);
    buf_str(&req, " HTTP/1.1\r\nHost: ");
    buf_str(&req, host);
    if (port) {
        buf_str(&req, ":");
        buf_str(&req, port);
    }
    buf_str(&req, "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: "
                  "13\r\nSec-WebSocket-Key: ");
    buf_str(&req, key);
    buf_str(&req, "\r\nUser-Agent: pathd-c/" PATHD_CLIENT_VERSION "\r\n");
    if (c->auth[0]) {
        buf_str(&req, c->auth);
        buf_str(&req, "\r\n");
    }
    buf_str(&req, "\r\n");
    if (req.failed || url.failed) {
        st = fail(err, PATHD_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((st = ws_send_raw(s, (const unsigned char *)req.p, req.len, err))) goto out;
    if ((st = ws_read_head(s, &head, deadline, err))) goto out;
    if (sscanf(head.p, "HTTP/1.%*d %d", status) != 1) {
        st = fail(err, PATHD_ERR_PROTOCOL, "WebSocket handshake: no status line");
        goto out;
    }
    if (*status != 101) {
        /* A refusal with an error body (Content-Length). */
        size_t vl = 0, n = 0;
        const char *v = head_value(head.p, "Retry-After", &vl);
        jdoc doc;
        if (v) *retry_after = parse_retry_after(v, vl);
        v = head_value(head.p, "Content-Length", &vl);
        for (size_t i = 0; v && i < vl && v[i] >= '0' && v[i] <= '9' && n < (1u << 20); i++)
            n = n * 10 + (size_t)(v[i] - '0');
        if ((st = ws_fill(s, n, deadline, err)) && st != PATHD_ERR_CLOSED) goto out;
        if (n > s->in.len - s->in_off) n = s->in.len - s->in_off;
        if (jparse(s->in.p ? s->in.p + s->in_off : "", n, &doc) == PATHD_OK)
            st = api_error(err, *status, doc.root);
        else
            st = fail(err, PATHD_ERR_PROTOCOL, "WebSocket handshake refused with HTTP %d", *status);
        jdoc_free(&doc);
        if (err) {
            err->http_status = *status;
            err->retry_after_s = *retry_after;
        }
        goto out;
    }
    {
        size_t vl;
        const char *v = head_value(head.p, "Upgrade", &vl);
        if (!v || !same_token(v, vl, "websocket")) {
            st = fail(err, PATHD_ERR_PROTOCOL, "WebSocket handshake: no Upgrade: websocket");
            goto out;
        }
        v = head_value(head.p, "Sec-WebSocket-Accept", &vl);
        if (!v || vl != strlen(accept) || memcmp(v, accept, vl) != 0) {
            st = fail(err, PATHD_ERR_PROTOCOL, "WebSocket handshake: wrong Sec-WebSocket-Accept");
            goto out;
        }
    }
    *out = s;
    s = NULL;
out:
    if (s) {
        s->closed = true;
        pathd_stream_close(s);
    }
    curl_free(host);
    curl_free(port);
    curl_free(prefix);
    curl_url_cleanup(u);
    buf_free(&url);
    buf_free(&req);
    buf_free(&head);
    return st;
}

pathd_status pathd_stream_open(pathd_client *c, const char *map_id, const char *sid,
                               pathd_stream **out, pathd_error *err) {
    char path[200];
    err_reset(err);
    *out = NULL;
    if (session_path(map_id, sid, "/stream", path, sizeof(path), err)) return PATHD_ERR_ARGUMENT;
    for (int attempt = 0;; attempt++) {
        int status;
        long retry_after;
        pathd_status st = ws_connect(c, path, out, &status, &retry_after, err);
        if (err) err->attempts = attempt + 1;
        if (st == PATHD_ERR_API && status == 503 && attempt < c->max_retries) {
            long wait = retry_after >= 0 ? retry_after * 1000 : 1000;
            sleep_ms(wait < c->max_retry_wait_ms ? wait : c->max_retry_wait_ms);
            err_reset(err);
            continue;
        }
        return st;
    }
}

pathd_status pathd_stream_send(pathd_stream *s, const pathd_update *up, pathd_error *err) {
    buf b = BUF_INIT;
    pathd_status st;
    err_reset(err);
    if (!s || !up) return fail(err, PATHD_ERR_ARGUMENT, "no stream or no update");
    if (!replan_ok(up->replan))
        return fail(err, PATHD_ERR_ARGUMENT, "a replan member is not a number");
    if (s->closed) return fail(err, PATHD_ERR_CLOSED, "the stream is closed");
    jw_update(&b, up);
    if (b.failed) {
        buf_free(&b);
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    }
    st = ws_frame(s, 1, (const unsigned char *)b.p, b.len, err);
    buf_free(&b);
    return st;
}

/* The next text message of the stream, parsed into doc (an error the
 * server sent is PATHD_ERR_API, doc then empty). */
static pathd_status ws_recv_doc(pathd_stream *s, jdoc *doc, pathd_error *err) {
    long deadline;
    buf msg = BUF_INIT;
    pathd_status st;
    memset(doc, 0, sizeof(*doc));
    if (!s) return fail(err, PATHD_ERR_ARGUMENT, "no stream");
    if (s->closed) return fail(err, PATHD_ERR_CLOSED, "the stream is closed");
    deadline = now_ms() + s->client->timeout_ms;
    for (;;) {
        const unsigned char *h;
        size_t hl = 2, n;
        int op;
        bool fin;
        if ((st = ws_fill(s, 2, deadline, err))) goto out;
        h = (const unsigned char *)s->in.p + s->in_off;
        n = h[1] & 0x7f;
        if (h[1] & 0x80) {
            st = fail(err, PATHD_ERR_PROTOCOL, "a masked frame from the server");
            goto out;
        }
        if (n >= 126) {
            hl = n == 126 ? 4 : 10;
            if ((st = ws_fill(s, hl, deadline, err))) goto out;
            h = (const unsigned char *)s->in.p + s->in_off;
            n = 0;
            for (size_t i = 2; i < hl; i++) n = (n << 8) | h[i];
        }
        if (n > MAX_WS_MESSAGE || msg.len + n > MAX_WS_MESSAGE) {
            st = fail(err, PATHD_ERR_PROTOCOL, "a WebSocket message over %u bytes", MAX_WS_MESSAGE);
            goto out;
        }
        if ((st = ws_fill(s, hl + n, deadline, err))) goto out;
        h = (const unsigned char *)s->in.p + s->in_off;
        op = h[0] & 0x0f;
        fin = (h[0] & 0x80) != 0;
        s->in_off += hl + n;
        h += hl;
        if (op == 9) { /* ping: answer with the same payload */
            if ((st = ws_frame(s, 10, h, n, err))) goto out;
            continue;
        }
        if (op == 10) continue; /* pong */
        if (op == 8) {
            int code = n >= 2 ? (h[0] << 8 | h[1]) : 1005;
            unsigned char echo[2] = {(unsigned char)(code >> 8), (unsigned char)code};
            if (code != 1005) ws_frame(s, 8, echo, 2, NULL);
            s->closed = true;
            st = fail(err, PATHD_ERR_CLOSED, "the server closed the stream (%d)", code);
            if (err) err->close_code = code;
            goto out;
        }
        if (op == 2 || (op != 0 && op != 1)) {
            st = fail(err, PATHD_ERR_PROTOCOL, "an unexpected WebSocket frame (opcode %d)", op);
            goto out;
        }
        buf_add(&msg, (const char *)h, n);
        if (msg.failed) {
            st = fail(err, PATHD_ERR_NOMEM, "out of memory");
            goto out;
        }
        if (fin) break;
    }
    st = jparse(msg.p ? msg.p : "", msg.len, doc);
    if (st == PATHD_OK && jget(doc->root, "error"))
        st = api_error(err, 0, doc->root);
    else if (st)
        st = fail(err, st, "a stream message that is not JSON");
    if (st) jdoc_free(doc);
out:
    buf_free(&msg);
    return st;
}

pathd_status pathd_stream_recv(pathd_stream *s, pathd_session *out, pathd_error *err) {
    jdoc doc;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if ((st = ws_recv_doc(s, &doc, err))) return st;
    st = read_session(doc.root, out, err);
    jdoc_free(&doc);
    return st;
}

/* ---- waypoint graphs ---- */

pathd_node_id pathd_node_str(const char *s) {
    pathd_node_id id;
    memset(&id, 0, sizeof(id));
    /* NULL or past 64 bytes stays empty: refused when sent */
    if (s && strlen(s) < sizeof(id.str)) memcpy(id.str, s, strlen(s) + 1);
    return id;
}

pathd_node_id pathd_node_int(int64_t n) {
    pathd_node_id id;
    memset(&id, 0, sizeof(id));
    id.is_int = true;
    id.num = n;
    return id;
}

/* The id's text: one namespace for strings and integers. */
static const char *node_text(const pathd_node_id *id, char tmp[32]) {
    if (!id->is_int) return id->str;
    snprintf(tmp, 32, "%lld", (long long)id->num);
    return tmp;
}

bool pathd_node_eq(const pathd_node_id *a, const pathd_node_id *b) {
    char ta[32], tb[32];
    return strcmp(node_text(a, ta), node_text(b, tb)) == 0;
}

pathd_graph_place pathd_place_node(pathd_node_id id) {
    pathd_graph_place p;
    memset(&p, 0, sizeof(p));
    p.node = id;
    return p;
}

pathd_graph_place pathd_place_point(double x, double y) {
    pathd_graph_place p;
    memset(&p, 0, sizeof(p));
    p.is_point = true;
    p.point.x = x;
    p.point.y = y;
    p.dims = 2;
    return p;
}

pathd_graph_place pathd_place_point3(double x, double y, double z) {
    pathd_graph_place p = pathd_place_point(x, y);
    p.point.z = z;
    p.dims = 3;
    return p;
}

pathd_graph_options pathd_graph_options_default(void) {
    pathd_graph_options o;
    memset(&o, 0, sizeof(o));
    o.cache = -1;
    return o;
}

/* An id as JSON; false for an empty string id (none, or one past 64 bytes). */
static bool jw_node_id(buf *b, const pathd_node_id *id) {
    if (id->is_int) {
        if (id->num > 9007199254740992LL || id->num < -9007199254740992LL) return false;
        buf_printf(b, "%lld", (long long)id->num);
        return true;
    }
    if (!id->str[0]) return false;
    jw_str(b, id->str);
    return true;
}

static bool jw_coords(buf *b, const pathd_graph_point *p, int dims) {
    if (dims != 2 && dims != 3) return false;
    if (!isfinite(p->x) || !isfinite(p->y) || (dims == 3 && !isfinite(p->z))) return false;
    buf_str(b, "[");
    jw_double(b, p->x);
    buf_str(b, ",");
    jw_double(b, p->y);
    if (dims == 3) {
        buf_str(b, ",");
        jw_double(b, p->z);
    }
    buf_str(b, "]");
    return true;
}

static void jw_strings(buf *b, const char *name, const char *const *v, size_t n) {
    if (!n) return;
    buf_printf(b, ",\"%s\":[", name);
    for (size_t i = 0; i < n; i++) {
        if (i) buf_str(b, ",");
        jw_str(b, v[i] ? v[i] : "");
    }
    buf_str(b, "]");
}

/* A place: an id, or a point ({"point":[...]} in queries; a bare array in
 * sessions, where a 2D point goes as [x, y, 0]). */
static bool jw_place(buf *b, const pathd_graph_place *p, bool session) {
    bool ok;
    if (!p->is_point) return jw_node_id(b, &p->node);
    if (session) {
        pathd_graph_point q = p->point;
        if (p->dims == 2) q.z = 0;
        return jw_coords(b, &q, 3);
    }
    buf_str(b, "{\"point\":");
    ok = jw_coords(b, &p->point, p->dims);
    buf_str(b, "}");
    return ok;
}

static bool jw_places(buf *b, const pathd_graph_place *p, size_t n, bool session) {
    bool ok = true;
    buf_str(b, "[");
    for (size_t i = 0; i < n; i++) {
        if (i) buf_str(b, ",");
        ok = jw_place(b, &p[i], session) && ok;
    }
    buf_str(b, "]");
    return ok;
}

/* ,"doors":[...] of an upload; false when a door has no name or a node no id. */
static bool jw_graph_doors(buf *b, const pathd_graph_door *doors, size_t n) {
    if (!n) return true;
    buf_str(b, ",\"doors\":[");
    for (size_t i = 0; i < n; i++) {
        const pathd_graph_door *d = &doors[i];
        const char *sep = "";
        if (!d->name) return false;
        buf_str(b, i ? ",{\"name\":" : "{\"name\":");
        jw_str(b, d->name);
        buf_str(b, ",\"edges\":[");
        for (size_t k = 0; k < d->nedge_indices; k++, sep = ",")
            buf_printf(b, "%s%ld", sep, d->edge_indices[k]);
        for (size_t k = 0; k < d->nedge_ids; k++, sep = ",") {
            buf_str(b, sep);
            jw_str(b, d->edge_ids[k] ? d->edge_ids[k] : "");
        }
        buf_str(b, "],\"nodes\":[");
        for (size_t k = 0; k < d->nnodes; k++) {
            if (k) buf_str(b, ",");
            if (!jw_node_id(b, &d->nodes[k])) return false;
        }
        buf_str(b, d->closed ? "],\"open\":false}" : "]}");
    }
    buf_str(b, "]");
    return true;
}

pathd_status pathd_graph_put(pathd_client *c, const char *id, const pathd_graph_node *nodes,
                             size_t nnodes, const pathd_graph_edge *edges, size_t nedges,
                             const pathd_graph_door *doors, size_t ndoors, double cost_factor,
                             pathd_map_info *out, pathd_error *err) {
    buf b = BUF_INIT;
    pathd_status st;
    err_reset(err);
    if (!nodes || !nnodes) return fail(err, PATHD_ERR_ARGUMENT, "a graph needs a node");
    buf_str(&b, "{\"kind\":\"graph\",\"nodes\":[");
    for (size_t i = 0; i < nnodes; i++) {
        buf_str(&b, i ? ",{\"id\":" : "{\"id\":");
        if (!jw_node_id(&b, &nodes[i].id)) {
            buf_free(&b);
            return fail(err, PATHD_ERR_ARGUMENT, "nodes[%zu].id: no id, or not 1..64 bytes", i);
        }
        buf_str(&b, ",\"position\":");
        if (!jw_coords(&b, &nodes[i].pos, nodes[i].dims)) {
            buf_free(&b);
            return fail(err, PATHD_ERR_ARGUMENT, "nodes[%zu].position: 2 or 3 finite numbers", i);
        }
        jw_strings(&b, "tags", nodes[i].tags, nodes[i].ntags);
        if (nodes[i].disabled) buf_str(&b, ",\"enabled\":false");
        buf_str(&b, "}");
    }
    buf_str(&b, "],\"edges\":[");
    for (size_t i = 0; i < nedges; i++) {
        const pathd_graph_edge *e = &edges[i];
        bool ok;
        buf_str(&b, i ? ",{\"from\":" : "{\"from\":");
        ok = jw_node_id(&b, &e->from);
        buf_str(&b, ",\"to\":");
        ok = jw_node_id(&b, &e->to) && ok && isfinite(e->cost) && isfinite(e->factor);
        if (!ok) {
            buf_free(&b);
            return fail(err, PATHD_ERR_ARGUMENT,
                        "edges[%zu]: an end without an id, or a cost that is not finite", i);
        }
        if (e->cost >= 0) {
            buf_str(&b, ",\"cost\":");
            jw_double(&b, e->cost);
        } else if (e->factor > 0) {
            buf_str(&b, ",\"factor\":");
            jw_double(&b, e->factor);
        }
        if (e->oneway) buf_str(&b, ",\"oneway\":true");
        if (e->id) {
            buf_str(&b, ",\"id\":");
            jw_str(&b, e->id);
        }
        jw_strings(&b, "tags", e->tags, e->ntags);
        if (e->disabled) buf_str(&b, ",\"enabled\":false");
        buf_str(&b, "}");
    }
    buf_str(&b, "]");
    if (cost_factor > 0 && isfinite(cost_factor)) {
        buf_str(&b, ",\"cost_factor\":");
        jw_double(&b, cost_factor);
    }
    if (!jw_graph_doors(&b, doors, ndoors)) {
        buf_free(&b);
        return fail(err, PATHD_ERR_ARGUMENT,
                    "a door without a name, or a member node without an id");
    }
    buf_str(&b, "}");
    if (b.failed) {
        buf_free(&b);
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    }
    st = pathd_map_put(c, id, b.p, b.len, PATHD_MAP_JSON, out, err);
    buf_free(&b);
    return st;
}

pathd_status pathd_graph_put_dimacs(pathd_client *c, const char *id, const char *gr, const char *co,
                                    pathd_map_info *out, pathd_error *err) {
    buf b = BUF_INIT;
    pathd_status st;
    err_reset(err);
    if (!gr || !co) return fail(err, PATHD_ERR_ARGUMENT, "DIMACS needs the .gr and the .co text");
    buf_str(&b, "{\"kind\":\"graph\",\"dimacs\":{\"gr\":");
    jw_str(&b, gr);
    buf_str(&b, ",\"co\":");
    jw_str(&b, co);
    buf_str(&b, "}}");
    if (b.failed) {
        buf_free(&b);
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    }
    st = pathd_map_put(c, id, b.p, b.len, PATHD_MAP_JSON, out, err);
    buf_free(&b);
    return st;
}

pathd_status pathd_graph_patch(pathd_client *c, const char *id, const pathd_door_switch *doors,
                               size_t ndoors, const pathd_node_switch *nodes, size_t nnodes,
                               const pathd_edge_change *edges, size_t nedges,
                               const pathd_precondition *pre, pathd_map_info *out,
                               pathd_error *err) {
    char path[128];
    buf b = BUF_INIT;
    jdoc doc;
    pathd_status st;
    err_reset(err);
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    snprintf(path, sizeof(path), "/v1/maps/%s", id);
    buf_str(&b, "{");
    if (ndoors) {
        for (size_t i = 0; i < ndoors; i++)
            if (!doors[i].id) {
                buf_free(&b);
                return fail(err, PATHD_ERR_ARGUMENT, "doors[%zu]: no name", i);
            }
        buf_str(&b, "\"doors\":[");
        for (size_t i = 0; i < ndoors; i++) {
            buf_str(&b, i ? ",{\"name\":" : "{\"name\":");
            jw_str(&b, doors[i].id);
            buf_str(&b, doors[i].open ? ",\"open\":true}" : ",\"open\":false}");
        }
        buf_str(&b, "],");
    }
    buf_str(&b, "\"nodes\":[");
    for (size_t i = 0; i < nnodes; i++) {
        buf_str(&b, i ? ",{\"id\":" : "{\"id\":");
        if (!jw_node_id(&b, &nodes[i].id)) {
            buf_free(&b);
            return fail(err, PATHD_ERR_ARGUMENT, "nodes[%zu].id: no id", i);
        }
        buf_str(&b, nodes[i].enabled ? ",\"enabled\":true}" : ",\"enabled\":false}");
    }
    buf_str(&b, "],\"edges\":[");
    for (size_t i = 0; i < nedges; i++) {
        const pathd_edge_change *e = &edges[i];
        if (i) buf_str(&b, ",");
        if (e->index >= 0) {
            buf_printf(&b, "{\"index\":%ld", e->index);
        } else if (e->id) {
            buf_str(&b, "{\"id\":");
            jw_str(&b, e->id);
        } else {
            buf_free(&b);
            return fail(err, PATHD_ERR_ARGUMENT, "edges[%zu]: neither an index nor an id", i);
        }
        if (e->enabled >= 0) buf_str(&b, e->enabled ? ",\"enabled\":true" : ",\"enabled\":false");
        if (!isfinite(e->cost)) {
            buf_free(&b);
            return fail(err, PATHD_ERR_ARGUMENT, "edges[%zu].cost is not finite", i);
        }
        if (e->cost >= 0) {
            buf_str(&b, ",\"cost\":");
            jw_double(&b, e->cost);
        }
        buf_str(&b, "}");
    }
    buf_str(&b, "]}");
    st = change_call(c, "PATCH", path, id, "application/json", &b, 200, 0, pre, &doc, NULL, err);
    buf_free(&b);
    if (st) return st;
    st = read_map_info(doc.root, out, err);
    if (!st) keep_etag(c, out);
    jdoc_free(&doc);
    return st;
}

pathd_status pathd_graph_export(pathd_client *c, const char *id, char **json, size_t *len,
                                pathd_error *err) {
    char path[128];
    jdoc doc;
    pathd_status st;
    int status = 0;
    buf r = BUF_INIT;
    *json = NULL;
    err_reset(err);
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    snprintf(path, sizeof(path), "/v1/maps/%s/graph", id);
    if ((st = http_call(c, "GET", path, NULL, NULL, 0, &status, &r, err))) return st;
    if (status == 200) {
        *json = r.p;
        if (len) *len = r.len;
        return PATHD_OK;
    }
    if (jparse(r.p, r.len, &doc) == PATHD_OK) {
        st = api_error(err, status, doc.root);
    } else {
        if (err) err->http_status = status;
        st = fail(err, PATHD_ERR_PROTOCOL, "HTTP %d with a body that is not JSON", status);
    }
    jdoc_free(&doc);
    buf_free(&r);
    return st;
}

/* ---- graph answers into structs ---- */

static bool jnode_id(const jnode *n, pathd_node_id *id) {
    memset(id, 0, sizeof(*id));
    if (n && n->t == J_NUM && n->num == floor(n->num) && fabs(n->num) <= 9007199254740992.0) {
        id->is_int = true;
        id->num = (int64_t)n->num;
        return true;
    }
    if (!n || n->t != J_STR || n->len == 0 || n->len >= sizeof(id->str)) return false;
    memcpy(id->str, n->str, n->len + 1);
    return true;
}

static bool jcoords(const jnode *a, pathd_graph_point *p) {
    double v[3] = {0, 0, 0};
    int k = 0;
    if (!a || a->t != J_ARR) return false;
    for (const jnode *e = a->child; e; e = e->next) {
        if (e->t != J_NUM || k == 3) return false;
        v[k++] = e->num;
    }
    if (k < 2) return false;
    p->x = v[0];
    p->y = v[1];
    p->z = v[2];
    return true;
}

static size_t jcount(const jnode *a) {
    size_t n = 0;
    if (a && a->t == J_ARR)
        for (const jnode *e = a->child; e; e = e->next) n++;
    return n;
}

/* path (ids), points and edges into malloc'd arrays. */
static pathd_status read_route(const jnode *o, pathd_node_id **nodes, pathd_graph_point **points,
                               long **edges, size_t *n, pathd_error *err) {
    const jnode *path = jget(o, "path"), *pts = jget(o, "points"), *eds = jget(o, "edges");
    size_t k = jcount(path), i = 0;
    *nodes = NULL;
    *points = NULL;
    *edges = NULL;
    *n = 0;
    if (!path || path->t != J_ARR || jcount(pts) != k || jcount(eds) != (k ? k - 1 : 0))
        return fail(err, PATHD_ERR_PROTOCOL,
                    "a graph answer whose path, points and edges disagree");
    if (!k) return PATHD_OK;
    *nodes = (pathd_node_id *)calloc(k, sizeof(**nodes));
    *points = (pathd_graph_point *)calloc(k, sizeof(**points));
    *edges = (long *)calloc(k, sizeof(**edges));
    if (!*nodes || !*points || !*edges) goto nomem;
    for (const jnode *e = path->child; e; e = e->next, i++)
        if (!jnode_id(e, &(*nodes)[i])) goto bad;
    i = 0;
    for (const jnode *e = pts->child; e; e = e->next, i++)
        if (!jcoords(e, &(*points)[i])) goto bad;
    i = 0;
    for (const jnode *e = eds->child; e; e = e->next, i++) {
        if (e->t != J_NUM || e->num < 0 || e->num != floor(e->num) || e->num > 4294967295.0)
            goto bad;
        (*edges)[i] = (long)e->num;
    }
    *n = k;
    return PATHD_OK;
nomem:
    free(*nodes), free(*points), free(*edges);
    *nodes = NULL, *points = NULL, *edges = NULL;
    return fail(err, PATHD_ERR_NOMEM, "out of memory");
bad:
    free(*nodes), free(*points), free(*edges);
    *nodes = NULL, *points = NULL, *edges = NULL;
    return fail(err, PATHD_ERR_PROTOCOL, "a graph answer with a malformed path");
}

static void read_end(const jnode *o, pathd_graph_end *e) {
    int64_t v;
    memset(e, 0, sizeof(*e));
    e->edge = -1;
    if (!o || o->t != J_OBJ) return;
    e->has_node = jnode_id(jget(o, "node"), &e->node);
    jbool(o, "snapped", &e->snapped);
    jnum(o, "distance", &e->distance);
    if (jint(o, "edge", 0, 4294967295.0, &v)) e->edge = (long)v;
    jnum(o, "at", &e->at);
    jcoords(jget(o, "point"), &e->point);
}

static pathd_status read_graph_path(const jnode *o, pathd_graph_path *p, pathd_error *err) {
    const jnode *stats;
    int64_t v;
    memset(p, 0, sizeof(*p));
    p->goal_index = -1;
    if (!o || !jbool(o, "found", &p->found))
        return fail(err, PATHD_ERR_PROTOCOL, "a graph path answer without 'found'");
    if (p->found && !jnum(o, "cost", &p->cost))
        return fail(err, PATHD_ERR_PROTOCOL, "a found path without 'cost'");
    if (!p->found) jnum(o, "cost", &p->cost); /* a partial path's */
    jbool(o, "partial", &p->partial);
    if (jint(o, "goal_index", 0, 1e9, &v)) p->goal_index = (long)v;
    copy_str(p->reason, sizeof(p->reason), o, "reason");
    copy_str(p->algorithm, sizeof(p->algorithm), o, "algorithm");
    if (jint(o, "map_version", 0, 9007199254740992.0, &v)) p->map_version = (uint64_t)v;
    stats = jget(o, "stats");
    p->expanded = stat_u(stats, "expanded");
    p->time_us = stat_u(stats, "time_us");
    jbool(stats, "cached", &p->cached);
    read_end(jget(o, "start"), &p->start);
    p->has_goal = jget(o, "goal") != NULL;
    read_end(jget(o, "goal"), &p->goal);
    return read_route(o, &p->nodes, &p->points, &p->edges, &p->nnodes, err);
}

void pathd_graph_path_free(pathd_graph_path *p) {
    if (!p) return;
    free(p->nodes);
    free(p->points);
    free(p->edges);
    p->nodes = NULL;
    p->points = NULL;
    p->edges = NULL;
    p->nnodes = 0;
}

void pathd_graph_batch_free(pathd_graph_batch *b) {
    if (!b) return;
    for (size_t i = 0; i < b->n; i++) pathd_graph_path_free(&b->slots[i].path);
    free(b->slots);
    b->slots = NULL;
    b->n = 0;
}

/* A GraphPathRequest: start, goal or goals, the options. */
static bool jw_graph_query(buf *b, const pathd_graph_query *q, bool deadline) {
    const pathd_graph_options *o = q->opts;
    bool ok;
    buf_str(b, "{\"start\":");
    ok = jw_place(b, &q->start, false);
    if (q->goals) {
        buf_str(b, ",\"goals\":");
        ok = jw_places(b, q->goals, q->ngoals, false) && ok;
    } else {
        buf_str(b, ",\"goal\":");
        ok = jw_place(b, &q->goal, false) && ok;
    }
    if (o) {
        if (o->algorithm) {
            buf_str(b, ",\"algorithm\":");
            jw_str(b, o->algorithm);
        }
        if (o->max_expanded > 0) buf_printf(b, ",\"max_expanded\":%ld", o->max_expanded);
        if (o->partial) buf_str(b, ",\"partial\":true");
        if (o->cache == 0) buf_str(b, ",\"cache\":false");
        if (deadline && o->deadline_ms > 0) buf_printf(b, ",\"deadline_ms\":%ld", o->deadline_ms);
        if (o->nexclude) jw_strings(b, "exclude_tags", o->exclude_tags, o->nexclude);
        if (o->snap_edge) buf_str(b, ",\"snap\":\"edge\"");
    }
    buf_str(b, "}");
    return ok;
}

static pathd_status graph_path_call(pathd_client *c, const char *id, const pathd_graph_query *q,
                                    pathd_graph_path *out, pathd_error *err) {
    char path[128];
    buf b = BUF_INIT;
    jdoc doc;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    if (!jw_graph_query(&b, q, true)) {
        buf_free(&b);
        return fail(err, PATHD_ERR_ARGUMENT,
                    "a place without an id, or a point that is not finite");
    }
    snprintf(path, sizeof(path), "/v1/maps/%s/path", id);
    st = call_json(c, "POST", path, "application/json", &b, 200, 0, &doc, NULL, err);
    buf_free(&b);
    if (st) return st;
    st = read_graph_path(doc.root, out, err);
    jdoc_free(&doc);
    return st;
}

pathd_status pathd_graph_find_path(pathd_client *c, const char *id, pathd_graph_place start,
                                   pathd_graph_place goal, const pathd_graph_options *opts,
                                   pathd_graph_path *out, pathd_error *err) {
    pathd_graph_query q;
    memset(&q, 0, sizeof(q));
    q.start = start;
    q.goal = goal;
    q.opts = opts;
    return graph_path_call(c, id, &q, out, err);
}

pathd_status pathd_graph_find_nearest(pathd_client *c, const char *id, pathd_graph_place start,
                                      const pathd_graph_place *goals, size_t ngoals,
                                      const pathd_graph_options *opts, pathd_graph_path *out,
                                      pathd_error *err) {
    pathd_graph_query q;
    memset(&q, 0, sizeof(q));
    memset(out, 0, sizeof(*out));
    if (!goals || !ngoals) return fail(err, PATHD_ERR_ARGUMENT, "no goal");
    q.start = start;
    q.goals = goals;
    q.ngoals = ngoals;
    q.opts = opts;
    return graph_path_call(c, id, &q, out, err);
}

pathd_status pathd_graph_find_paths(pathd_client *c, const char *id,
                                    const pathd_graph_query *queries, size_t n, long deadline_ms,
                                    pathd_graph_batch *out, pathd_error *err) {
    char path[128];
    buf b = BUF_INIT;
    jdoc doc;
    const jnode *results, *r;
    size_t k = 0;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    if (n == 0 || !queries) return fail(err, PATHD_ERR_ARGUMENT, "a batch needs a query");
    buf_str(&b, "{\"queries\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) buf_str(&b, ",");
        if (!jw_graph_query(&b, &queries[i], false)) {
            buf_free(&b);
            return fail(err, PATHD_ERR_ARGUMENT,
                        "queries[%zu]: a place without an id, or a point that is not finite", i);
        }
    }
    buf_str(&b, "]");
    if (deadline_ms > 0) buf_printf(&b, ",\"deadline_ms\":%ld", deadline_ms);
    buf_str(&b, "}");
    snprintf(path, sizeof(path), "/v1/maps/%s/paths", id);
    st = call_json(c, "POST", path, "application/json", &b, 200, 0, &doc, NULL, err);
    buf_free(&b);
    if (st) return st;
    if ((st = batch_results(doc.root, n, &results, &out->map_version, err))) goto out;
    if (!(out->slots = (pathd_graph_batch_slot *)calloc(n, sizeof(*out->slots)))) {
        st = fail(err, PATHD_ERR_NOMEM, "out of memory");
        goto out;
    }
    out->n = n;
    for (r = results->child; r; r = r->next, k++) {
        pathd_graph_batch_slot *slot = &out->slots[k];
        err_reset(&slot->error);
        if (jget(r, "error"))
            st = batch_slot_error(r, k, &slot->status, &slot->error, err);
        else
            st = read_graph_path(r, &slot->path, err);
        if (st) {
            pathd_graph_batch_free(out);
            goto out;
        }
    }
out:
    jdoc_free(&doc);
    return st;
}

void pathd_graph_table_free(pathd_graph_table *t) {
    if (!t) return;
    if (t->paths)
        for (size_t i = 0; i < t->nsources * t->ntargets; i++) free(t->paths[i].nodes);
    free(t->paths);
    free(t->costs);
    free(t->reached);
    free(t->sources);
    free(t->targets);
    memset(t, 0, sizeof(*t));
}

static pathd_status read_graph_table(const jnode *o, size_t ns, size_t nt, bool paths,
                                     pathd_graph_table *t, pathd_error *err) {
    const jnode *costs = jget(o, "costs"), *ps = jget(o, "paths"), *row, *prow, *e, *pe;
    const jnode *stats = jget(o, "stats");
    size_t i = 0;
    int64_t v;
    t->nsources = ns;
    t->ntargets = nt;
    if (jcount(costs) != ns || jcount(jget(o, "sources")) != ns ||
        jcount(jget(o, "targets")) != nt || (paths && jcount(ps) != ns))
        return fail(err, PATHD_ERR_PROTOCOL, "a table answer of the wrong size");
    t->costs = (double *)calloc(ns * nt, sizeof(double));
    t->reached = (bool *)calloc(ns * nt, sizeof(bool));
    t->sources = (pathd_graph_end *)calloc(ns, sizeof(pathd_graph_end));
    t->targets = (pathd_graph_end *)calloc(nt, sizeof(pathd_graph_end));
    if (paths) t->paths = (pathd_graph_route *)calloc(ns * nt, sizeof(pathd_graph_route));
    if (!t->costs || !t->reached || !t->sources || !t->targets || (paths && !t->paths))
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    for (e = jget(o, "sources")->child; e; e = e->next, i++) read_end(e, &t->sources[i]);
    i = 0;
    for (e = jget(o, "targets")->child; e; e = e->next, i++) read_end(e, &t->targets[i]);
    i = 0;
    prow = paths ? ps->child : NULL;
    for (row = costs->child; row; row = row->next, i++) {
        size_t j = 0;
        if (jcount(row) != nt || (paths && jcount(prow) != nt))
            return fail(err, PATHD_ERR_PROTOCOL, "a table row of the wrong size");
        pe = paths ? prow->child : NULL;
        for (e = row->child; e; e = e->next, j++) {
            size_t at = i * nt + j;
            if (e->t == J_NUM) {
                t->costs[at] = e->num;
                t->reached[at] = true;
            } else if (e->t != J_NULL) {
                return fail(err, PATHD_ERR_PROTOCOL, "costs[%zu][%zu] is not a number", i, j);
            }
            if (paths) {
                size_t k = jcount(pe), m = 0;
                if (pe->t == J_ARR && k) {
                    if (!(t->paths[at].nodes = (pathd_node_id *)calloc(k, sizeof(pathd_node_id))))
                        return fail(err, PATHD_ERR_NOMEM, "out of memory");
                    t->paths[at].n = k;
                    for (const jnode *x = pe->child; x; x = x->next, m++)
                        if (!jnode_id(x, &t->paths[at].nodes[m]))
                            return fail(err, PATHD_ERR_PROTOCOL, "paths[%zu][%zu]: not node ids", i,
                                        j);
                }
                pe = pe->next;
            }
        }
        if (paths) prow = prow->next;
    }
    if (jint(o, "map_version", 0, 9007199254740992.0, &v)) t->map_version = (uint64_t)v;
    t->searches = stat_u(stats, "searches");
    t->expanded = stat_u(stats, "expanded");
    t->unreachable = stat_u(stats, "unreachable");
    t->time_us = stat_u(stats, "time_us");
    return PATHD_OK;
}

pathd_status pathd_graph_table_get(pathd_client *c, const char *id,
                                   const pathd_graph_place *sources, size_t nsources,
                                   const pathd_graph_place *targets, size_t ntargets, bool paths,
                                   long deadline_ms, pathd_graph_table *out, pathd_error *err) {
    char path[128];
    buf b = BUF_INIT;
    jdoc doc;
    bool ok;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (check_map_id(id, err)) return PATHD_ERR_ARGUMENT;
    if (!sources || !nsources) return fail(err, PATHD_ERR_ARGUMENT, "a table needs a source");
    buf_str(&b, "{\"sources\":");
    ok = jw_places(&b, sources, nsources, false);
    if (targets) {
        buf_str(&b, ",\"targets\":");
        ok = jw_places(&b, targets, ntargets, false) && ok;
    }
    if (paths) buf_str(&b, ",\"paths\":true");
    if (deadline_ms > 0) buf_printf(&b, ",\"deadline_ms\":%ld", deadline_ms);
    buf_str(&b, "}");
    if (!ok) {
        buf_free(&b);
        return fail(err, PATHD_ERR_ARGUMENT,
                    "a place without an id, or a point that is not finite");
    }
    snprintf(path, sizeof(path), "/v1/maps/%s/table", id);
    st = call_json(c, "POST", path, "application/json", &b, 200, 0, &doc, NULL, err);
    buf_free(&b);
    if (st) return st;
    st = read_graph_table(doc.root, nsources, targets ? ntargets : nsources, paths, out, err);
    if (st) pathd_graph_table_free(out);
    jdoc_free(&doc);
    return st;
}

/* ---- graph sessions ---- */

static pathd_status read_graph_session(const jnode *o, pathd_graph_session *s, pathd_error *err) {
    const jnode *stats, *rp;
    int64_t v;
    bool b = false;
    memset(s, 0, sizeof(*s));
    pathd_replan_policy_init(&s->policy);
    if (!o || !jstr(o, "session_id", s->session_id, sizeof(s->session_id)) ||
        !jbool(o, "found", &s->found) || !jnode_id(jget(o, "position"), &s->position) ||
        !jnode_id(jget(o, "goal"), &s->goal))
        return fail(err, PATHD_ERR_PROTOCOL, "a graph session answer without its fields");
    copy_str(s->map_id, sizeof(s->map_id), o, "map_id");
    jnum(o, "cost", &s->cost);
    copy_str(s->reason, sizeof(s->reason), o, "reason");
    copy_str(s->algorithm, sizeof(s->algorithm), o, "algorithm");
    if (jint(o, "map_version", 0, 9007199254740992.0, &v)) s->map_version = (uint64_t)v;
    if (jint(o, "ttl_s", 0, 1e12, &v)) s->ttl_s = (long)v;
    stats = jget(o, "stats");
    s->expanded = stat_u(stats, "expanded");
    s->time_us = stat_u(stats, "time_us");
    s->updates = stat_u(stats, "updates");
    s->memory_bytes = stat_u(stats, "memory_bytes");
    copy_str(s->rebase, sizeof(s->rebase), stats, "rebase");
    if ((rp = jget(o, "replan"))) {
        const jnode *pol = jget(rp, "policy");
        copy_str(s->replan_reason, sizeof(s->replan_reason), rp, "reason");
        copy_str(s->replan_route, sizeof(s->replan_route), rp, "route");
        if (jbool(rp, "replanned", &b)) s->replanned = b;
        if (jbool(rp, "flip", &b)) s->flip = b;
        if (pol) {
            if (jint(pol, "min_interval_ms", 0, 1e12, &v)) s->policy.min_interval_ms = (long)v;
            if (jint(pol, "min_updates", 0, 1e12, &v)) s->policy.min_updates = (long)v;
            if (!jnum(pol, "goal_threshold", &s->policy.goal_threshold))
                s->policy.goal_threshold = -1;
            if (!jnum(pol, "hysteresis", &s->policy.hysteresis)) s->policy.hysteresis = -1;
        }
    }
    if (jbool(o, "unchanged", &b) && b) {
        s->unchanged = true;
        return PATHD_OK;
    }
    return read_route(o, &s->nodes, &s->points, &s->edges, &s->nnodes, err);
}

void pathd_graph_session_free(pathd_graph_session *s) {
    if (!s) return;
    free(s->nodes);
    free(s->points);
    free(s->edges);
    s->nodes = NULL;
    s->points = NULL;
    s->edges = NULL;
    s->nnodes = 0;
}

static bool jw_graph_update(buf *b, const pathd_graph_update *u) {
    bool ok = true, first = true;
    buf_str(b, "{");
    if (u->position) {
        buf_str(b, "\"position\":");
        ok = jw_place(b, u->position, true);
        first = false;
    }
    if (u->goal) {
        buf_str(b, first ? "\"goal\":" : ",\"goal\":");
        ok = jw_place(b, u->goal, true) && ok;
        first = false;
    }
    jw_replan(b, u->replan, first);
    buf_str(b, "}");
    return ok && replan_ok(u->replan);
}

static pathd_status graph_session_call(pathd_client *c, const char *method, const char *path,
                                       const char *ctype, const buf *body, int ok,
                                       pathd_graph_session *out, pathd_error *err) {
    jdoc doc;
    pathd_status st = call_json(c, method, path, ctype, body, ok, 0, &doc, NULL, err);
    if (st) return st;
    st = read_graph_session(doc.root, out, err);
    jdoc_free(&doc);
    return st;
}

pathd_status pathd_graph_session_create(pathd_client *c, const char *map_id,
                                        pathd_graph_place start, pathd_graph_place goal, long ttl_s,
                                        const pathd_replan_policy *replan, pathd_graph_session *out,
                                        pathd_error *err) {
    return pathd_graph_session_create_limited(c, map_id, start, goal, ttl_s, replan, NULL, out,
                                              err);
}

pathd_status pathd_graph_session_create_limited(pathd_client *c, const char *map_id,
                                                pathd_graph_place start, pathd_graph_place goal,
                                                long ttl_s, const pathd_replan_policy *replan,
                                                const pathd_session_limits *limits,
                                                pathd_graph_session *out, pathd_error *err) {
    char path[160];
    buf b = BUF_INIT;
    bool ok;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (check_map_id(map_id, err)) return PATHD_ERR_ARGUMENT;
    if (!replan_ok(replan)) return fail(err, PATHD_ERR_ARGUMENT, "a replan member is not a number");
    buf_str(&b, "{\"start\":");
    ok = jw_place(&b, &start, true);
    buf_str(&b, ",\"goal\":");
    ok = jw_place(&b, &goal, true) && ok;
    if (ttl_s > 0) buf_printf(&b, ",\"ttl_s\":%ld", ttl_s);
    jw_replan(&b, replan, false);
    jw_limits(&b, limits);
    buf_str(&b, "}");
    if (!ok) {
        buf_free(&b);
        return fail(err, PATHD_ERR_ARGUMENT,
                    "a place without an id, or a point that is not finite");
    }
    snprintf(path, sizeof(path), "/v1/maps/%s/sessions", map_id);
    st = graph_session_call(c, "POST", path, "application/json", &b, 201, out, err);
    buf_free(&b);
    return st;
}

pathd_status pathd_graph_session_get(pathd_client *c, const char *map_id, const char *sid,
                                     pathd_graph_session *out, pathd_error *err) {
    char path[200];
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (session_path(map_id, sid, "", path, sizeof(path), err)) return PATHD_ERR_ARGUMENT;
    return graph_session_call(c, "GET", path, NULL, NULL, 200, out, err);
}

pathd_status pathd_graph_session_update(pathd_client *c, const char *map_id, const char *sid,
                                        const pathd_graph_update *ups, size_t n,
                                        pathd_graph_session *out, pathd_error *err) {
    char path[200];
    buf b = BUF_INIT;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if (session_path(map_id, sid, "/updates", path, sizeof(path), err)) return PATHD_ERR_ARGUMENT;
    if (!ups || n == 0) return fail(err, PATHD_ERR_ARGUMENT, "no update");
    for (size_t i = 0; i < n; i++) {
        if (!jw_graph_update(&b, &ups[i])) {
            buf_free(&b);
            return fail(err, PATHD_ERR_ARGUMENT, "update %zu: a bad place or replan member", i);
        }
        if (n > 1) buf_str(&b, "\n");
    }
    st = graph_session_call(c, "POST", path, n > 1 ? "application/x-ndjson" : "application/json",
                            &b, 200, out, err);
    buf_free(&b);
    return st;
}

pathd_status pathd_graph_stream_send(pathd_stream *s, const pathd_graph_update *up,
                                     pathd_error *err) {
    buf b = BUF_INIT;
    pathd_status st;
    err_reset(err);
    if (!s || !up) return fail(err, PATHD_ERR_ARGUMENT, "no stream or no update");
    if (s->closed) return fail(err, PATHD_ERR_CLOSED, "the stream is closed");
    if (!jw_graph_update(&b, up)) {
        buf_free(&b);
        return fail(err, PATHD_ERR_ARGUMENT, "a bad place or replan member");
    }
    if (b.failed) {
        buf_free(&b);
        return fail(err, PATHD_ERR_NOMEM, "out of memory");
    }
    st = ws_frame(s, 1, (const unsigned char *)b.p, b.len, err);
    buf_free(&b);
    return st;
}

pathd_status pathd_graph_stream_recv(pathd_stream *s, pathd_graph_session *out, pathd_error *err) {
    jdoc doc;
    pathd_status st;
    err_reset(err);
    memset(out, 0, sizeof(*out));
    if ((st = ws_recv_doc(s, &doc, err))) return st;
    st = read_graph_session(doc.root, out, err);
    jdoc_free(&doc);
    return st;
}
