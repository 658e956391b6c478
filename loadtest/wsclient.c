/* wsclient.c -- see wsclient.h. */
#include "wsclient.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define WS_MESSAGE_MAX (64u << 20) /* a longer message from the server is refused */

struct pf_wsc {
    int fd;
    char rbuf[65536]; /* bytes read, not yet taken */
    size_t rlen, rpos;
    char *msg; /* the message being assembled */
    size_t mlen, mcap;
    uint32_t mask; /* the next frame's masking key */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    if (!err || !errlen) return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int dial(const char *host, int port, char *err, size_t errlen) {
    struct addrinfo hints, *res = NULL, *ai;
    char ps[16];
    int fd = -1, rc;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof(ps), "%d", port);
    if ((rc = getaddrinfo(host, ps, &hints, &res)) != 0) {
        set_err(err, errlen, "%s: %s", host, gai_strerror(rc));
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) set_err(err, errlen, "connect %s:%d: %s", host, port, strerror(errno));
    return fd;
}

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* n bytes from the connection into out. */
static int read_n(pf_wsc *w, void *out, size_t n) {
    char *o = out;
    while (n) {
        if (w->rpos == w->rlen) {
            ssize_t k = recv(w->fd, w->rbuf, sizeof(w->rbuf), 0);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) return -1;
            w->rlen = (size_t)k;
            w->rpos = 0;
        }
        size_t t = w->rlen - w->rpos < n ? w->rlen - w->rpos : n;
        memcpy(o, w->rbuf + w->rpos, t);
        w->rpos += t;
        o += t;
        n -= t;
    }
    return 0;
}

static int send_frame(pf_wsc *w, int opcode, const char *p, size_t len) {
    unsigned char h[14];
    size_t hl = 2;
    h[0] = (unsigned char)(0x80 | opcode);
    if (len < 126) {
        h[1] = (unsigned char)(0x80 | len);
    } else if (len < 65536) {
        h[1] = 0x80 | 126;
        h[2] = (unsigned char)(len >> 8);
        h[3] = (unsigned char)len;
        hl = 4;
    } else {
        h[1] = 0x80 | 127;
        for (int i = 0; i < 8; i++) h[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
        hl = 10;
    }
    w->mask = w->mask * 1664525u + 1013904223u;
    unsigned char key[4] = {(unsigned char)(w->mask >> 24), (unsigned char)(w->mask >> 16),
                            (unsigned char)(w->mask >> 8), (unsigned char)w->mask};
    memcpy(h + hl, key, 4);
    hl += 4;
    unsigned char *m = malloc(hl + len + 1);
    if (!m) return -1;
    memcpy(m, h, hl);
    for (size_t i = 0; i < len; i++) m[hl + i] = (unsigned char)p[i] ^ key[i & 3];
    int rc = write_all(w->fd, m, hl + len);
    free(m);
    return rc;
}

int pf_wsc_open(const char *host, int port, const char *path, pf_wsc **out, char *err,
                size_t errlen) {
    char req[1024], head[4096];
    size_t hl = 0;
    pf_wsc *w;
    *out = NULL;
    int fd = dial(host, port, err, errlen);
    if (fd < 0) return -1;
    if (!(w = calloc(1, sizeof(*w)))) {
        close(fd);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    w->fd = fd;
    w->mask = 0x9e3779b9u;
    int n = snprintf(req, sizeof(req),
                     "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n",
                     path, host, port);
    if (write_all(fd, req, (size_t)n) != 0) {
        set_err(err, errlen, "sending the handshake: %s", strerror(errno));
        goto fail;
    }
    /* The answer's head, byte by byte up to the blank line (what follows
     * stays in rbuf for the frames). */
    while (hl + 1 < sizeof(head)) {
        if (read_n(w, &head[hl], 1) != 0) {
            set_err(err, errlen, "the handshake's answer broke off");
            goto fail;
        }
        hl++;
        if (hl >= 4 && memcmp(&head[hl - 4], "\r\n\r\n", 4) == 0) break;
    }
    head[hl] = '\0';
    if (strncmp(head, "HTTP/1.1 101", 12) != 0) {
        char *eol = strchr(head, '\r');
        if (eol) *eol = '\0';
        set_err(err, errlen, "handshake refused: %s", head);
        goto fail;
    }
    *out = w;
    return 0;
fail:
    pf_wsc_close(w);
    return -1;
}

int pf_wsc_send(pf_wsc *w, const char *msg, size_t len) { return send_frame(w, 1, msg, len); }

int pf_wsc_recv(pf_wsc *w, const char **msg, size_t *len, char *err, size_t errlen) {
    w->mlen = 0;
    for (;;) {
        unsigned char h[2], ext[8];
        uint64_t n;
        if (read_n(w, h, 2) != 0) goto broke;
        const int opcode = h[0] & 0x0f, fin = h[0] & 0x80;
        n = h[1] & 0x7f;
        if (n == 126) {
            if (read_n(w, ext, 2) != 0) goto broke;
            n = (uint64_t)ext[0] << 8 | ext[1];
        } else if (n == 127) {
            if (read_n(w, ext, 8) != 0) goto broke;
            n = 0;
            for (int i = 0; i < 8; i++) n = n << 8 | ext[i];
        }
        if (h[1] & 0x80 || n > WS_MESSAGE_MAX || w->mlen + n > WS_MESSAGE_MAX) {
            set_err(err, errlen, "a masked or oversized frame from the server");
            return -1;
        }
        if (opcode >= 8) { /* control: ping, pong, close */
            char c[125];
            if (n > sizeof(c) || read_n(w, c, (size_t)n) != 0) goto broke;
            if (opcode == 9 && send_frame(w, 10, c, (size_t)n) != 0) goto broke;
            if (opcode == 8) {
                set_err(err, errlen, "the server closed the stream (%d)",
                        n >= 2 ? ((unsigned char)c[0] << 8 | (unsigned char)c[1]) : 1005);
                return -1;
            }
            continue;
        }
        if (w->mlen + n + 1 > w->mcap) {
            size_t cap = w->mcap ? w->mcap : 4096;
            while (cap < w->mlen + n + 1) cap *= 2;
            char *m = realloc(w->msg, cap);
            if (!m) {
                set_err(err, errlen, "out of memory");
                return -1;
            }
            w->msg = m;
            w->mcap = cap;
        }
        if (read_n(w, w->msg + w->mlen, (size_t)n) != 0) goto broke;
        w->mlen += (size_t)n;
        if (fin) {
            w->msg[w->mlen] = '\0';
            *msg = w->msg;
            *len = w->mlen;
            return 0;
        }
    }
broke:
    set_err(err, errlen, "the stream broke off");
    return -1;
}

void pf_wsc_close(pf_wsc *w) {
    if (!w) return;
    if (w->fd >= 0) {
        const char code[2] = {0x03, (char)0xe8}; /* 1000 */
        (void)send_frame(w, 8, code, 2);
        close(w->fd);
    }
    free(w->msg);
    free(w);
}

int pf_http_once(const char *host, int port, const char *method, const char *path,
                 const char *ctype, const char *body, size_t len, int *status, char **resp,
                 char *err, size_t errlen) {
    char head[1024];
    char *buf = NULL;
    size_t blen = 0, bcap = 0;
    int rc = -1;
    *resp = NULL;
    int fd = dial(host, port, err, errlen);
    if (fd < 0) return -1;
    int n = snprintf(head, sizeof(head),
                     "%s %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n%s%s%s"
                     "Content-Length: %zu\r\n\r\n",
                     method, path, host, port, ctype ? "Content-Type: " : "", ctype ? ctype : "",
                     ctype ? "\r\n" : "", body ? len : 0);
    if (write_all(fd, head, (size_t)n) != 0 || (body && len && write_all(fd, body, len) != 0)) {
        set_err(err, errlen, "sending %s %s: %s", method, path, strerror(errno));
        goto out;
    }
    for (;;) {
        if (blen + 65536 + 1 > bcap) {
            bcap = bcap ? 2 * bcap : 131072;
            char *b = realloc(buf, bcap);
            if (!b) {
                set_err(err, errlen, "out of memory");
                goto out;
            }
            buf = b;
        }
        ssize_t k = recv(fd, buf + blen, 65536, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            set_err(err, errlen, "reading %s %s: %s", method, path, strerror(errno));
            goto out;
        }
        if (k == 0) break;
        blen += (size_t)k;
    }
    if (!buf || blen < 12 || sscanf(buf, "HTTP/1.%*d %d", status) != 1) {
        set_err(err, errlen, "%s %s: no HTTP answer", method, path);
        goto out;
    }
    buf[blen] = '\0';
    {
        char *b = strstr(buf, "\r\n\r\n");
        b = b ? b + 4 : buf + blen;
        /* Chunked bodies are not expected here (pathd sends lengths). */
        *resp = strdup(b);
        if (!*resp) {
            set_err(err, errlen, "out of memory");
            goto out;
        }
    }
    rc = 0;
out:
    free(buf);
    close(fd);
    return rc;
}
