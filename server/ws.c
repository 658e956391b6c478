/* ws.c -- WebSocket handshake and framing (RFC 6455). */
#include "ws.h"

#include <nettle/base64.h>
#include <nettle/sha1.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

pf_status pf_ws_accept_key(const char *key, char *out) {
    struct sha1_ctx ctx;
    uint8_t digest[SHA1_DIGEST_SIZE];
    size_t n = key ? strlen(key) : 0;
    if (n != 24 || key[22] != '=' || key[23] != '=') return PF_EINVAL;
    for (size_t i = 0; i < 22; i++) {
        char c = key[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/'))
            return PF_EINVAL;
    }
    sha1_init(&ctx);
    sha1_update(&ctx, n, (const uint8_t *)key);
    sha1_update(&ctx, sizeof(ws_guid) - 1, (const uint8_t *)ws_guid);
    sha1_digest(&ctx, SHA1_DIGEST_SIZE, digest);
    base64_encode_raw(out, SHA1_DIGEST_SIZE, digest);
    out[PF_WS_ACCEPT_LEN] = '\0';
    return PF_OK;
}

void pf_ws_decoder_init(pf_ws_decoder *d, size_t max_message) {
    memset(d, 0, sizeof(*d));
    d->max_message = max_message;
}

void pf_ws_decoder_free(pf_ws_decoder *d) {
    free(d->msg);
    d->msg = NULL;
    d->msg_cap = d->msg_len = 0;
}

static pf_status violation(pf_ws_decoder *d, int code) {
    d->close_code = code;
    return code == PF_WS_CLOSE_TOO_BIG ? PF_ELIMIT : PF_EPARSE;
}

/* A close frame's payload (RFC 6455 5.5.1, 7.4): empty, or a status code
 * a peer may send followed by a UTF-8 reason. Sets the close code and
 * returns false otherwise. */
static bool close_payload_ok(pf_ws_decoder *d) {
    unsigned code;
    int bad = 0;
    if (d->ctl_len == 0) return true;
    code = d->ctl_len >= 2 ? (unsigned)d->ctl[0] << 8 | d->ctl[1] : 0;
    if (d->ctl_len == 1 || code < 1000 || code == 1004 || code == 1005 || code == 1006 ||
        (code > 1011 && code < 3000) || code > 4999)
        bad = PF_WS_CLOSE_PROTOCOL;
    else if (!pf_utf8_is_valid((const char *)d->ctl + 2, d->ctl_len - 2))
        bad = PF_WS_CLOSE_BAD_DATA;
    if (bad) violation(d, bad);
    return bad == 0;
}

/* Size of the frame header given its first two bytes. */
static size_t header_size(const uint8_t *h) {
    size_t n = 2 + 4; /* client frames carry a mask */
    uint8_t l = h[1] & 0x7f;
    if (l == 126)
        n += 2;
    else if (l == 127)
        n += 8;
    return n;
}

/* Parses a complete header in d->hdr. */
static pf_status start_frame(pf_ws_decoder *d) {
    const uint8_t *h = d->hdr;
    uint64_t len = h[1] & 0x7f;
    size_t p = 2;
    int op = h[0] & 0x0f;
    bool fin = (h[0] & 0x80) != 0;

    if (h[0] & 0x70) return violation(d, PF_WS_CLOSE_PROTOCOL);    /* reserved bits */
    if (!(h[1] & 0x80)) return violation(d, PF_WS_CLOSE_PROTOCOL); /* clients must mask */
    if (len == 126) {
        len = ((uint64_t)h[2] << 8) | h[3];
        p = 4;
    } else if (len == 127) {
        len = 0;
        for (int i = 0; i < 8; i++) len = (len << 8) | h[2 + i];
        p = 10;
        if (len >> 63) return violation(d, PF_WS_CLOSE_PROTOCOL);
    }
    memcpy(d->mask, h + p, 4);
    switch (op) {
    case PF_WS_OP_CLOSE:
    case PF_WS_OP_PING:
    case PF_WS_OP_PONG:
        if (!fin || len > 125) return violation(d, PF_WS_CLOSE_PROTOCOL);
        d->ctl_len = 0;
        break;
    case PF_WS_OP_TEXT:
    case PF_WS_OP_BINARY:
        if (d->msg_op) return violation(d, PF_WS_CLOSE_PROTOCOL); /* a message is open */
        d->msg_op = op;
        d->msg_len = 0;
        break;
    case PF_WS_OP_CONT:
        if (!d->msg_op) return violation(d, PF_WS_CLOSE_PROTOCOL);
        break;
    default:
        return violation(d, PF_WS_CLOSE_PROTOCOL);
    }
    if (op < 8 && len > d->max_message - d->msg_len) return violation(d, PF_WS_CLOSE_TOO_BIG);
    if (op < 8 && d->msg_len + len > d->msg_cap) {
        size_t cap = d->msg_cap ? d->msg_cap : 1024;
        uint8_t *m;
        while (cap < d->msg_len + len) cap *= 2;
        if (cap > d->max_message) cap = d->max_message;
        m = realloc(d->msg, cap ? cap : 1);
        if (!m) return violation(d, PF_WS_CLOSE_TOO_BIG);
        d->msg = m;
        d->msg_cap = cap;
    }
    d->frame_op = op;
    d->frame_fin = fin;
    d->payload_left = len;
    d->payload_pos = 0;
    d->in_payload = true;
    return PF_OK;
}

pf_status pf_ws_decode(pf_ws_decoder *d, const uint8_t *buf, size_t len, size_t *used,
                       pf_ws_message *msg, bool *got) {
    size_t i = 0;
    *got = false;
    while (i < len) {
        if (!d->in_payload) {
            size_t need = d->hdr_len < 2 ? 2 : header_size(d->hdr);
            while (d->hdr_len < need && i < len) {
                d->hdr[d->hdr_len++] = buf[i++];
                if (d->hdr_len == 2) {
                    if (!(d->hdr[1] & 0x80)) { /* clients must mask: fail at once */
                        *used = i;
                        return violation(d, PF_WS_CLOSE_PROTOCOL);
                    }
                    need = header_size(d->hdr);
                }
            }
            if (d->hdr_len < need) break;
            d->hdr_len = 0;
            pf_status st = start_frame(d);
            if (st) {
                *used = i;
                return st;
            }
        }
        /* Copy and unmask payload bytes. */
        size_t n = len - i;
        if (n > d->payload_left) n = (size_t)d->payload_left;
        if (n > 0) {
            uint8_t *dst = d->frame_op >= 8 ? d->ctl + d->ctl_len : d->msg + d->msg_len;
            for (size_t k = 0; k < n; k++) dst[k] = buf[i + k] ^ d->mask[(d->payload_pos + k) & 3];
        }
        if (d->frame_op >= 8)
            d->ctl_len += n;
        else
            d->msg_len += n;
        d->payload_pos += n;
        d->payload_left -= n;
        i += n;
        if (d->payload_left > 0) break;
        d->in_payload = false;
        if (d->frame_op == PF_WS_OP_CLOSE && !close_payload_ok(d)) {
            *used = i;
            return PF_EPARSE;
        }
        if (d->frame_op >= 8) {
            msg->op = d->frame_op;
            msg->data = d->ctl;
            msg->len = d->ctl_len;
            *got = true;
            break;
        }
        if (d->frame_fin) {
            /* RFC 6455 8.1: a text message that is not UTF-8 fails the
             * connection with 1007. Checked whole, once reassembled: a
             * character may straddle two fragments. */
            if (d->msg_op == PF_WS_OP_TEXT && !pf_utf8_is_valid((const char *)d->msg, d->msg_len)) {
                *used = i;
                return violation(d, PF_WS_CLOSE_BAD_DATA);
            }
            msg->op = d->msg_op;
            msg->data = d->msg;
            msg->len = d->msg_len;
            d->msg_op = 0;
            *got = true;
            break;
        }
    }
    *used = i;
    return PF_OK;
}

size_t pf_ws_encode(int op, const uint8_t *payload, size_t len, uint8_t *out, size_t cap) {
    size_t h = len < 126 ? 2 : (len <= 0xffff ? 4 : 10);
    if (cap < h + len) return 0;
    out[0] = (uint8_t)(0x80 | (op & 0x0f));
    if (len < 126) {
        out[1] = (uint8_t)len;
    } else if (len <= 0xffff) {
        out[1] = 126;
        out[2] = (uint8_t)(len >> 8);
        out[3] = (uint8_t)len;
    } else {
        out[1] = 127;
        for (int i = 0; i < 8; i++) out[2 + i] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
    }
    if (len) memcpy(out + h, payload, len);
    return h + len;
}

bool pf_ws_utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        size_t k;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xe0) == 0xc0)
            k = 1, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0)
            k = 2, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0)
            k = 3, cp = c & 0x07, min = 0x10000;
        else
            return false;
        if (n - i <= k) return false;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (s[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += k + 1;
    }
    return true;
}

pf_status pf_ws_close_check(const uint8_t *payload, size_t len, int *code) {
    int c;
    *code = 0;
    if (len == 0) return PF_OK;
    if (len == 1) {
        *code = PF_WS_CLOSE_PROTOCOL;
        return PF_EPARSE;
    }
    c = (payload[0] << 8) | payload[1];
    /* 1004 is reserved, 1005 and 1006 are for reporting only, 1015 (TLS)
     * likewise; 1016-2999 belong to future versions of the protocol. */
    if (c < 1000 || (c >= 1004 && c <= 1006) || (c >= 1015 && c <= 2999) || c >= 5000) {
        *code = PF_WS_CLOSE_PROTOCOL;
        return PF_EPARSE;
    }
    if (!pf_ws_utf8_valid(payload + 2, len - 2)) {
        *code = PF_WS_CLOSE_BAD_DATA;
        return PF_EPARSE;
    }
    *code = c;
    return PF_OK;
}

size_t pf_ws_close_payload(int code, const char *reason, uint8_t out[125]) {
    size_t n = reason ? strlen(reason) : 0;
    out[0] = (uint8_t)(code >> 8);
    out[1] = (uint8_t)code;
    if (n > 123) {
        n = 123;
        while (n > 0 && ((uint8_t)reason[n] & 0xc0) == 0x80) n--; /* not mid-character */
    }
    if (n) memcpy(out + 2, reason, n);
    return 2 + n;
}
