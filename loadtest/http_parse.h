/* http_parse.h -- an incremental HTTP/1.1 response parser for the load
 * generator's keep-alive connections.
 *
 * Bytes are fed as they arrive, in pieces of any size; the parser says when
 * one whole response has been read and how many of the bytes it used, so the
 * rest belongs to the next response on the connection. Bodies are framed by
 * Content-Length, chunked transfer encoding, or the end of the connection;
 * 1xx, 204 and 304 answers and answers to HEAD have none. The body is kept
 * (up to a cap) when asked, for the answers the generator checks.
 *
 * One parser per connection; not thread-safe.
 */
#ifndef PF_HTTP_PARSE_H
#define PF_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PF_HTTP_LINE_MAX 8192

typedef struct pf_http_resp {
    /* Results, valid once a response is complete. */
    int status;             /* 100..599 */
    int minor;              /* HTTP/1.<minor> */
    bool keep_alive;        /* whether the connection may carry another request */
    int64_t content_length; /* -1 when absent */
    bool chunked;
    int32_t retry_after; /* seconds from Retry-After, -1 when absent */
    char *body;          /* NUL-terminated when keep_body, owned by the parser */
    size_t body_len;     /* bytes of body seen (kept or not) */
    bool body_truncated; /* more than body_max bytes arrived; body holds the first */

    /* Settings. */
    bool keep_body;
    size_t body_max;
    bool head_request; /* the request was HEAD: no body follows */

    /* Internal state. */
    int state;
    char line[PF_HTTP_LINE_MAX];
    size_t line_len;
    size_t body_cap;
    uint64_t remaining; /* body or chunk bytes still to read */
} pf_http_resp;

/* Starts a parser; keep_body keeps at most body_max bytes of each body. */
void pf_http_resp_init(pf_http_resp *r, bool keep_body, size_t body_max);
/* Gets ready for the next response on the same connection (keeps the body
 * buffer). */
void pf_http_resp_reset(pf_http_resp *r);
void pf_http_resp_free(pf_http_resp *r);

typedef enum pf_http_feed {
    PF_HTTP_MORE = 0, /* every byte used, the response is not complete yet */
    PF_HTTP_DONE,     /* a response is complete; *used says how many bytes it took */
    PF_HTTP_ERROR     /* not a valid HTTP/1.x response */
} pf_http_feed;

/* Feeds buf[0..len). Writes the bytes used to *used. */
pf_http_feed pf_http_resp_feed(pf_http_resp *r, const char *buf, size_t len, size_t *used);

/* The peer closed the connection: completes a body framed by the end of the
 * connection (PF_HTTP_DONE), else PF_HTTP_ERROR (a response cut short, or
 * none started). */
pf_http_feed pf_http_resp_eof(pf_http_resp *r);

#endif
