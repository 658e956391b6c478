/* http_strict.h -- the request checks RFC 9112 asks for and libmicrohttpd
 * 0.9.75 does not make, as one pure function over what it parsed.
 *
 * libmicrohttpd accepts, and this refuses (answered before a byte of the
 * body is read, and the connection is closed after the answer):
 *   - two Content-Length lines with different values (it takes the first:
 *     a smuggling vector behind a proxy that takes the last);
 *   - Content-Length together with Transfer-Encoding (it silently takes
 *     the chunked body; RFC 9112 6.3 calls this a smuggling attempt);
 *   - a Transfer-Encoding other than exactly "chunked" (it would read the
 *     body until the client closes): PF_STRICT_NOT_IMPLEMENTED (501) for a
 *     coding it does not know, PF_STRICT_BAD (400) for a malformed list or
 *     chunked applied twice; and Transfer-Encoding on HTTP/1.0 (6.1);
 *   - HTTP/1.1 without Host, two Host lines, or a Host that is not
 *     uri-host[:port] (RFC 9112 3.2);
 *   - two Content-Type or two Authorization lines (it reads the first
 *     only, so what was checked and what is used could differ);
 *   - a request target with a NUL byte (it cuts the URL there), "%00"
 *     anywhere in it (it decodes the path and arguments to C strings, so
 *     "/v1/maps/a%00b" would reach the router as "/v1/maps/a"), a space or
 *     another control character.
 * What libmicrohttpd refuses itself (no space in the request line, no
 * target, a bad version, a malformed Content-Length, broken chunks) never
 * reaches this; docs/operations.md (Limits) lists those answers.
 *
 * Thread-safe, no allocation.
 */
#ifndef PF_SERVER_HTTP_STRICT_H
#define PF_SERVER_HTTP_STRICT_H

#include <stdbool.h>
#include <stddef.h>

/* One header line as libmicrohttpd stored it (name and value without the
 * surrounding blanks). */
typedef struct pf_http_header {
    const char *name;
    const char *value;
} pf_http_header;

/* What the request line said. */
typedef struct pf_http_reqline {
    const char *version;    /* "HTTP/1.1" */
    const char *raw_target; /* the target before decoding, as the URI log callback saw it */
    bool target_has_nul;    /* a NUL byte cut raw_target short */
} pf_http_reqline;

typedef enum pf_strict_verdict {
    PF_STRICT_OK = 0,
    PF_STRICT_BAD,            /* 400 */
    PF_STRICT_NOT_IMPLEMENTED /* 501: a transfer coding other than chunked */
} pf_strict_verdict;

/* Why a request was refused: the header at fault (or "" for the target)
 * and a sentence that never copies more than a short, sanitized piece of
 * the request. */
typedef struct pf_strict_reason {
    const char *field; /* "Content-Length", "Host", ... or NULL */
    char message[200];
} pf_strict_reason;

/* Checks the request line and its n headers. PF_STRICT_OK, or the verdict
 * with *why filled. */
pf_strict_verdict pf_http_strict_check(const pf_http_reqline *rl, const pf_http_header *h, size_t n,
                                       pf_strict_reason *why);

#endif
