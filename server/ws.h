/* ws.h -- WebSocket (RFC 6455) handshake and framing, without I/O.
 *
 * The opening handshake's Sec-WebSocket-Accept is SHA-1 + base64 from
 * nettle (Debian's libnettle), not hand-written code. The frame decoder is
 * incremental: feed it bytes as they arrive and it yields complete messages,
 * reassembling fragments and answering nothing by itself; the caller writes
 * what pf_ws_encode produces. Not thread-safe per decoder.
 */
#ifndef PF_WS_H
#define PF_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* Length of an accept key, without its NUL. */
#define PF_WS_ACCEPT_LEN 28

/* Computes Sec-WebSocket-Accept for the client's Sec-WebSocket-Key:
 * base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")). out holds
 * PF_WS_ACCEPT_LEN + 1 bytes. PF_EINVAL when the key is not 24 base64
 * characters (16 bytes encoded), as RFC 6455 section 4.2.1 requires. */
pf_status pf_ws_accept_key(const char *client_key, char *out);

enum {
    PF_WS_OP_CONT = 0x0,
    PF_WS_OP_TEXT = 0x1,
    PF_WS_OP_BINARY = 0x2,
    PF_WS_OP_CLOSE = 0x8,
    PF_WS_OP_PING = 0x9,
    PF_WS_OP_PONG = 0xA
};

/* Close codes (RFC 6455 section 7.4.1). */
enum {
    PF_WS_CLOSE_NORMAL = 1000,
    PF_WS_CLOSE_GOING_AWAY = 1001,
    PF_WS_CLOSE_PROTOCOL = 1002,
    PF_WS_CLOSE_UNSUPPORTED = 1003,
    PF_WS_CLOSE_BAD_DATA = 1007,
    PF_WS_CLOSE_POLICY = 1008,
    PF_WS_CLOSE_TOO_BIG = 1009,
    PF_WS_CLOSE_TRY_AGAIN = 1013 /* IANA's registry: "Try Again Later" */
};

typedef struct pf_ws_decoder {
    size_t max_message; /* largest reassembled message accepted */
    uint8_t *msg;       /* message being reassembled (owned) */
    size_t msg_len, msg_cap;
    int msg_op;      /* opcode of the fragmented message, 0 when none */
    uint8_t hdr[14]; /* partial frame header */
    size_t hdr_len;
    uint64_t payload_left;
    uint8_t mask[4];
    uint64_t payload_pos;
    int frame_op;
    bool frame_fin;
    bool in_payload;
    uint8_t ctl[125]; /* control frame payload */
    size_t ctl_len;
    int close_code; /* set when the peer broke the protocol */
} pf_ws_decoder;

/* A message decoded: opcode (TEXT, BINARY, CLOSE, PING, PONG) and payload,
 * borrowed from the decoder until the next call. */
typedef struct pf_ws_message {
    int op;
    const uint8_t *data;
    size_t len;
} pf_ws_message;

void pf_ws_decoder_init(pf_ws_decoder *d, size_t max_message);
void pf_ws_decoder_free(pf_ws_decoder *d);

/* Consumes bytes from buf[0..len) until one message is complete or the input
 * ends. Returns the bytes consumed in *used. *got is true when *msg holds a
 * message. Returns PF_EPARSE on a protocol violation (unmasked client frame,
 * reserved bits, fragmented or oversized control frame, bad continuation,
 * a close frame with a 1-byte payload or a status code no peer may send:
 * close code 1002), a text message or close reason that is not valid UTF-8
 * (1007), or PF_ELIMIT past max_message (1009); then d->close_code says
 * which close code to send, and the connection must be closed. */
pf_status pf_ws_decode(pf_ws_decoder *d, const uint8_t *buf, size_t len, size_t *used,
                       pf_ws_message *msg, bool *got);

/* Checks the payload of a close frame from the peer (RFC 6455 5.5.1 and
 * 7.4): empty, or a two-byte status code an endpoint may send followed by a
 * UTF-8 reason. PF_OK with the code to echo in *code (0: the peer sent none,
 * echo an empty close). PF_EPARSE with *code 1002 for a one-byte payload or a
 * code no endpoint may send (below 1000, 1004 to 1006, 1015 to 2999, 5000 and
 * above), or 1007 when the reason is not UTF-8. */
pf_status pf_ws_close_check(const uint8_t *payload, size_t len, int *code);

/* Writes a close frame's payload into out: code in network order, then as
 * much of reason (NULL: none) as fits the 125-byte control frame limit,
 * cut at a character boundary. Returns the payload's length. */
size_t pf_ws_close_payload(int code, const char *reason, uint8_t out[125]);

/* Whether s[0..n) is well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF). */
bool pf_ws_utf8_valid(const uint8_t *s, size_t n);

/* Writes one unmasked, unfragmented server frame to out (capacity cap).
 * Returns the frame's length, or 0 when cap is too small (needs len + 10). */
size_t pf_ws_encode(int op, const uint8_t *payload, size_t len, uint8_t *out, size_t cap);

#endif
