/* wsclient.h -- a blocking WebSocket client (RFC 6455) and one-shot HTTP
 * requests over plain TCP, for pathd-bench's runs against a server
 * (`pathd-bench chase --url`). Text frames only; pings are answered
 * inside; a close from the server ends the connection.
 */
#ifndef PF_BENCH_WSCLIENT_H
#define PF_BENCH_WSCLIENT_H

#include <stddef.h>

typedef struct pf_wsc pf_wsc;

/* Connects to host:port and upgrades GET path. 0, or -1 with err. */
int pf_wsc_open(const char *host, int port, const char *path, pf_wsc **out, char *err,
                size_t errlen);
/* Sends one text message (masked, as a client must). 0 or -1. */
int pf_wsc_send(pf_wsc *w, const char *msg, size_t len);
/* The next text message (fragments joined), NUL-terminated, valid until
 * the next call. 0, or -1 with err (the connection closed or broke). */
int pf_wsc_recv(pf_wsc *w, const char **msg, size_t *len, char *err, size_t errlen);
/* Sends a close frame and frees. NULL is a no-op. */
void pf_wsc_close(pf_wsc *w);

/* One HTTP/1.1 request with Connection: close: *status and the body
 * (malloc'd, NUL-terminated; free it). 0, or -1 with err. */
int pf_http_once(const char *host, int port, const char *method, const char *path,
                 const char *ctype, const char *body, size_t len, int *status, char **resp,
                 char *err, size_t errlen);

#endif
