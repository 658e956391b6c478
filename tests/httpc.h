/* httpc.h -- a tiny HTTP/1.1 client and a server launcher for the
 * integration tests (libcurl is not a dependency).
 *
 * Every request opens a connection, sends "Connection: close" and reads to
 * EOF. Responses with Content-Length are cut at it. Blocking sockets with a
 * receive timeout so a hung server fails the test instead of hanging it.
 */
#ifndef PF_TESTS_HTTPC_H
#define PF_TESTS_HTTPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct hc_resp {
    int status; /* 0 when no status line was read */
    char *head; /* status line and headers, NUL-terminated */
    char *body; /* NUL-terminated */
    size_t body_len;
} hc_resp;

/* Sends one request. ctype and body may be NULL; extra is more header lines
 * ("Name: value\r\n...") or NULL. Returns 0, or -1 on a socket error. */
int hc_request(uint16_t port, const char *method, const char *path, const char *ctype,
               const char *body, size_t body_len, const char *extra, hc_resp *out);

/* Sends raw bytes (a hand-written request) and reads the response. Send
 * errors after the server answered early are ignored. */
int hc_raw(uint16_t port, const char *raw, size_t len, hc_resp *out);

/* Opens a connection and sends raw bytes without reading: the caller reads
 * later with hc_read. Returns the socket or -1. */
int hc_send_only(uint16_t port, const char *raw, size_t len);
/* Reads a whole response from fd and closes it. */
int hc_read(int fd, hc_resp *out);

/* Value of a response header (case-insensitive name) copied into buf, or
 * NULL. */
const char *hc_header(const hc_resp *r, const char *name, char *buf, size_t n);
void hc_free(hc_resp *r);

/* A pathd child process. */
typedef struct hc_server {
    pid_t pid;
    uint16_t port;
    char banner[512]; /* its "pathd listening on ..." line */
} hc_server;

/* How hc_server_start_ex starts it. */
typedef struct hc_start_opts {
    const char *stderr_path; /* the child's stderr goes to this file (NULL: inherited) */
    bool no_wait;            /* return once it listens, without waiting for /readyz (TLS) */
} hc_start_opts;
int hc_server_start_ex(hc_server *s, const char *const *args, const hc_start_opts *o);

/* Starts $PATHD_BIN --port 0 with extra args (NULL terminated), reads the
 * port from its "listening" line and polls /readyz until it answers 200
 * (no clock: -1 when pathd exits first; the test's Check timeout ends a
 * hang). 0 on success. The child is killed if the test dies. */
int hc_server_start(hc_server *s, const char *const *args);
/* SIGTERM, then waits; returns the exit status (or 128+signal). */
int hc_server_stop(hc_server *s);

/* The spec log. When the environment variable PATHD_SPEC_LOG names a file,
 * every answer hc_request, hc_raw and hc_read receive is appended to it, and
 * wsc.c appends the handshake refusals and text messages of WebSocket
 * streams. tests/spec/check-answers.js (run by `make test` after the suites)
 * matches each to its operation in proto/openapi.yaml and validates it.
 *
 * A record is one JSON line, {"kind":"http"|"ws","method","target",
 * "status","head","body_len"}, then body_len bytes of body, then "\n".
 * Each record goes out in one write(2) to a file opened O_APPEND, so the
 * threads of one test and the forked tests never interleave records.
 * Thread-safe. Without PATHD_SPEC_LOG these do nothing. */
void hc_log_answer(const char *kind, const char *method, const char *target, int status,
                   const char *head, const char *body, size_t body_len);
/* Remembers the request line sent on fd ("GET /x HTTP/1.1..."), so that
 * the answer read from fd later is logged with its method and target. */
void hc_log_note_request(int fd, const char *raw, size_t len);

/* A JSON request body for a path query: {"start":[sx,sy],"goal":[gx,gy]<extra>}. */
char *hc_path_body(int sx, int sy, int gx, int gy, const char *extra);

#endif
