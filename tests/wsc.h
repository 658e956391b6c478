/* wsc.h -- a minimal WebSocket client (RFC 6455) for the integration
 * tests, written independently of server/ws.c: its own handshake check
 * (the RFC's sample key and its known accept value) and its own framing.
 *
 * Blocking sockets with a receive timeout, so a hung server fails the test.
 */
#ifndef PF_TESTS_WSC_H
#define PF_TESTS_WSC_H

#include <stddef.h>
#include <stdint.h>

/* Opens ws://127.0.0.1:port<path>. Returns the socket, or -1 when the
 * connection or the handshake failed; *status gets the HTTP status read (101
 * on success) and, when body is not NULL, the response body of a refusal is
 * copied there (cap bytes, NUL-terminated). */
int wsc_connect(uint16_t port, const char *path, int *status, char *body, size_t cap);
/* The same with Authorization: Bearer token (NULL: none). */
int wsc_connect_auth(uint16_t port, const char *path, const char *token, int *status, char *body,
                     size_t cap);

/* Sends one masked frame, FIN set. 0, or -1 on a socket error. */
int wsc_send(int fd, int op, const void *data, size_t len);

/* Sends count text frames in one write, so the server finds them all in
 * one read. 0, or -1 on a socket error. */
int wsc_send_texts(int fd, const char *const *texts, size_t count);

/* Reads one server frame: its opcode and payload (malloc'd, NUL-terminated,
 * free() it). 0, or -1 on EOF, timeout or a malformed frame. */
int wsc_recv(int fd, int *op, char **data, size_t *len);

void wsc_close(int fd);

#endif
