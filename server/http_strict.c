/* http_strict.c -- see http_strict.h. References: RFC 9112 (message
 * syntax: 3.2 Host, 6.1 Transfer-Encoding, 6.3 message body length), RFC
 * 9110 (5.3 field order, 7.2 Host), RFC 3986 (3.2.2 host). */
#include "http_strict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static pf_strict_verdict refuse(pf_strict_reason *why, pf_strict_verdict v, const char *field,
                                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static pf_strict_verdict refuse(pf_strict_reason *why, pf_strict_verdict v, const char *field,
                                const char *fmt, ...) {
    va_list ap;
    why->field = field;
    va_start(ap, fmt);
    vsnprintf(why->message, sizeof(why->message), fmt, ap);
    va_end(ap);
    return v;
}

/* A short printable copy of s for a message: at most 24 bytes of
 * [!-~], anything else shown as '?'. */
static const char *shown(const char *s, char *buf, size_t cap) {
    size_t i;
    for (i = 0; s[i] && i + 1 < cap && i < 24; i++)
        buf[i] = s[i] > ' ' && s[i] < 0x7f && s[i] != '\'' ? s[i] : '?';
    buf[i] = '\0';
    return buf;
}

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

/* RFC 3986 3.2.2 host [":" port]: a reg-name or IPv4 (unreserved,
 * pct-encoded, sub-delims) or an IP-literal in brackets. Empty is allowed
 * (RFC 9110 7.2: a target without authority sends an empty Host). */
static bool host_is_valid(const char *v) {
    const char *p = v;
    if (*p == '[') {
        for (p++; *p && *p != ']'; p++)
            if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
                  (*p >= 'A' && *p <= 'F') || *p == ':' || *p == '.'))
                return false;
        if (*p != ']') return false;
        p++;
    } else {
        for (; *p && *p != ':'; p++) {
            char c = *p;
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("-._~%!$&'()*+,;=", c)))
                return false;
        }
    }
    if (*p == ':')
        for (p++; *p; p++)
            if (*p < '0' || *p > '9') return false;
    return *p == '\0';
}

/* The Transfer-Encoding lines, as one comma-separated list. */
static pf_strict_verdict check_te(const pf_http_reqline *rl, const pf_http_header *te[], size_t nte,
                                  pf_strict_reason *why) {
    size_t chunked = 0, tokens = 0;
    bool last_chunked = false;
    char buf[32];
    if (strcmp(rl->version, "HTTP/1.0") == 0)
        return refuse(why, PF_STRICT_BAD, "Transfer-Encoding",
                      "Transfer-Encoding is not allowed on HTTP/1.0 (RFC 9112 section 6.1).");
    for (size_t i = 0; i < nte; i++) {
        const char *p = te[i]->value;
        for (;;) {
            const char *start, *end;
            while (is_ows(*p)) p++;
            start = p;
            while (*p && *p != ',') p++;
            end = p;
            while (end > start && is_ows(end[-1])) end--;
            if (end > start) {
                size_t n = (size_t)(end - start);
                tokens++;
                last_chunked = n == 7 && strncasecmp(start, "chunked", 7) == 0;
                if (last_chunked) {
                    chunked++;
                } else {
                    char tok[32];
                    snprintf(tok, sizeof(tok), "%.*s", (int)(n < 24 ? n : 24), start);
                    return refuse(why, PF_STRICT_NOT_IMPLEMENTED, "Transfer-Encoding",
                                  "Transfer-Encoding '%s' is not implemented; only chunked is.",
                                  shown(tok, buf, sizeof(buf)));
                }
            }
            if (!*p) break;
            p++;
        }
    }
    if (tokens == 0)
        return refuse(why, PF_STRICT_BAD, "Transfer-Encoding",
                      "Transfer-Encoding is empty; it must name the codings (only chunked is "
                      "implemented).");
    if (chunked > 1 || !last_chunked)
        return refuse(why, PF_STRICT_BAD, "Transfer-Encoding",
                      "chunked may be applied once, as the last coding (RFC 9112 section 6.1).");
    /* libmicrohttpd decodes chunks only for one line that is exactly
     * "chunked"; anything else it reads until the connection closes. */
    if (nte != 1 || strcasecmp(te[0]->value, "chunked") != 0)
        return refuse(why, PF_STRICT_BAD, "Transfer-Encoding",
                      "Send Transfer-Encoding: chunked as one header line.");
    return PF_STRICT_OK;
}

static pf_strict_verdict check_target(const pf_http_reqline *rl, pf_strict_reason *why) {
    const char *t = rl->raw_target ? rl->raw_target : "";
    if (rl->target_has_nul)
        return refuse(why, PF_STRICT_BAD, NULL, "The request target holds a NUL byte.");
    for (const char *p = t; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c <= ' ' || c == 0x7f)
            return refuse(why, PF_STRICT_BAD, NULL,
                          "The request target holds a space or a control character at byte "
                          "%zu; encode it.",
                          (size_t)(p - t));
        if (c == '%' && p[1] == '0' && p[2] == '0')
            return refuse(why, PF_STRICT_BAD, NULL,
                          "The request target holds %%00 (an encoded NUL) at byte %zu.",
                          (size_t)(p - t));
    }
    return PF_STRICT_OK;
}

#define MAX_TE 8

pf_strict_verdict pf_http_strict_check(const pf_http_reqline *rl, const pf_http_header *h, size_t n,
                                       pf_strict_reason *why) {
    const pf_http_header *cl = NULL, *host = NULL, *te[MAX_TE];
    size_t nhost = 0, nte = 0, nctype = 0, nauth = 0;
    bool http11 = strncmp(rl->version, "HTTP/1.", 7) == 0 && strcmp(rl->version, "HTTP/1.0") != 0;
    pf_strict_verdict v;
    char buf[32];

    why->field = NULL;
    why->message[0] = '\0';
    if ((v = check_target(rl, why))) return v;
    for (size_t i = 0; i < n; i++) {
        const char *name = h[i].name, *value = h[i].value ? h[i].value : "";
        if (strcasecmp(name, "Content-Length") == 0) {
            if (cl && strcmp(cl->value, value) != 0)
                return refuse(why, PF_STRICT_BAD, "Content-Length",
                              "Two different Content-Length values ('%s' and another); send "
                              "one.",
                              shown(cl->value, buf, sizeof(buf)));
            cl = &h[i];
        } else if (strcasecmp(name, "Transfer-Encoding") == 0) {
            if (nte == MAX_TE)
                return refuse(why, PF_STRICT_BAD, "Transfer-Encoding",
                              "More than %d Transfer-Encoding lines.", MAX_TE);
            te[nte++] = &h[i];
        } else if (strcasecmp(name, "Host") == 0) {
            host = &h[i];
            nhost++;
        } else if (strcasecmp(name, "Content-Type") == 0) {
            nctype++;
        } else if (strcasecmp(name, "Authorization") == 0) {
            nauth++;
        }
    }
    if (nte && cl)
        return refuse(why, PF_STRICT_BAD, "Transfer-Encoding",
                      "Content-Length together with Transfer-Encoding: send one of them (RFC "
                      "9112 section 6.3).");
    if (nte && (v = check_te(rl, te, nte, why))) return v;
    if (nhost > 1) return refuse(why, PF_STRICT_BAD, "Host", "Two Host header lines; send one.");
    if (!host && http11)
        return refuse(why, PF_STRICT_BAD, "Host",
                      "An HTTP/1.1 request needs a Host header (RFC 9112 section 3.2).");
    if (host && !host_is_valid(host->value ? host->value : ""))
        return refuse(why, PF_STRICT_BAD, "Host", "Host '%s' is not a host[:port].",
                      shown(host->value ? host->value : "", buf, sizeof(buf)));
    if (nctype > 1)
        return refuse(why, PF_STRICT_BAD, "Content-Type", "Two Content-Type header lines.");
    if (nauth > 1)
        return refuse(why, PF_STRICT_BAD, "Authorization", "Two Authorization header lines.");
    return PF_STRICT_OK;
}
