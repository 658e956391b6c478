/* wsc.c -- see wsc.h. */
#define _GNU_SOURCE
#include "wsc.h"

#include "httpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* RFC 6455 section 1.3. */
#define SAMPLE_KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define SAMPLE_ACCEPT "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

/* The stream path of each open socket, for the spec log (httpc.h). */
#define STREAM_SLOTS 64
static struct {
    int fd;
    char path[512];
} streams[STREAM_SLOTS];
static int nstreams;
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;

static void stream_note(int fd, const char *path) {
    if (!getenv("PATHD_SPEC_LOG")) return;
    pthread_mutex_lock(&streams_lock);
    for (int i = 0; i < nstreams; i++)
        if (streams[i].fd == fd) streams[i--] = streams[--nstreams];
    if (path && nstreams < STREAM_SLOTS) {
        streams[nstreams].fd = fd;
        snprintf(streams[nstreams].path, sizeof(streams[0].path), "%s", path);
        nstreams++;
    }
    pthread_mutex_unlock(&streams_lock);
}

static void stream_log(int fd, const char *data, size_t len) {
    char path[512] = "?";
    if (!getenv("PATHD_SPEC_LOG")) return;
    pthread_mutex_lock(&streams_lock);
    for (int i = 0; i < nstreams; i++)
        if (streams[i].fd == fd) snprintf(path, sizeof(path), "%s", streams[i].path);
    pthread_mutex_unlock(&streams_lock);
    hc_log_answer("ws", "GET", path, 101, NULL, data, len);
}

static int send_all(int fd, const void *p, size_t n) {
    const char *b = p;
    while (n > 0) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int recv_all(int fd, void *p, size_t n) {
    char *b = p;
    while (n > 0) {
        ssize_t k = recv(fd, b, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

int wsc_connect(uint16_t port, const char *path, int *status, char *body, size_t cap) {
    return wsc_connect_auth(port, path, NULL, status, body, cap);
}

int wsc_connect_auth(uint16_t port, const char *path, const char *token, int *status, char *body,
                     size_t cap) {
    struct sockaddr_in sa;
    struct timeval tv = {20, 0};
    char req[1024], head[4096];
    size_t len = 0;
    int one = 1, fd;

    *status = 0;
    if (body && cap) body[0] = '\0';
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) goto fail;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    snprintf(req, sizeof(req),
             "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nUpgrade: websocket\r\n"
             "Connection: Upgrade\r\nSec-WebSocket-Key: " SAMPLE_KEY "\r\n"
             "Sec-WebSocket-Version: 13\r\n%s%s%s\r\n",
             path, (unsigned)port, token ? "Authorization: Bearer " : "", token ? token : "",
             token ? "\r\n" : "");
    if (send_all(fd, req, strlen(req))) goto fail;
    /* Read the head byte by byte so no frame byte is consumed. */
    while (len < sizeof(head) - 1) {
        if (recv_all(fd, head + len, 1)) break;
        len++;
        if (len >= 4 && memcmp(head + len - 4, "\r\n\r\n", 4) == 0) break;
    }
    head[len] = '\0';
    if (sscanf(head, "HTTP/1.1 %d", status) != 1) goto fail;
    if (*status != 101) {
        /* A refusal: read its body (Content-Length) for the caller. */
        const char *cl = strcasestr(head, "\r\nContent-Length:");
        size_t n = cl ? strtoul(cl + 17, NULL, 10) : 0;
        char *all = n ? malloc(n + 1) : NULL;
        if (n && all && recv_all(fd, all, n) == 0) {
            all[n] = '\0';
            if (body && cap) snprintf(body, cap, "%s", all);
            hc_log_answer("http", "GET", path, *status, head, all, n);
        } else if (!n) {
            hc_log_answer("http", "GET", path, *status, head, "", 0);
        }
        free(all);
        goto fail;
    }
    if (!strcasestr(head, "\r\nUpgrade: websocket") ||
        !strstr(head, "Sec-WebSocket-Accept: " SAMPLE_ACCEPT "\r\n"))
        goto fail;
    /* As strict as .NET's ClientWebSocket (and so Unity): one Connection
     * header whose value is exactly "Upgrade" ("Upgrade, Upgrade" is
     * refused there). */
    {
        const char *conn = strcasestr(head, "\r\nConnection:");
        const char *v = conn ? conn + 13 : NULL;
        while (v && *v == ' ') v++;
        if (!v || strncasecmp(v, "Upgrade\r\n", 9) != 0 || strcasestr(v, "\r\nConnection:")) {
            fprintf(stderr,
                    "wsc: the 101 answer's Connection header is not exactly 'Upgrade':\n%s\n",
                    head);
            goto fail;
        }
    }
    stream_note(fd, path);
    return fd;
fail:
    close(fd);
    return -1;
}

/* Builds one masked frame into a malloc'd buffer; *n its size. */
static uint8_t *frame(int op, const void *data, size_t len, size_t *n) {
    uint8_t hdr[14], mask[4] = {0x12, 0x34, 0x56, 0x78};
    size_t h = 2;
    uint8_t *buf;
    hdr[0] = (uint8_t)(0x80 | (op & 0x0f));
    if (len < 126) {
        hdr[1] = (uint8_t)(0x80 | len);
    } else if (len <= 0xffff) {
        hdr[1] = 0x80 | 126;
        hdr[2] = (uint8_t)(len >> 8);
        hdr[3] = (uint8_t)len;
        h = 4;
    } else {
        hdr[1] = 0x80 | 127;
        for (int i = 0; i < 8; i++) hdr[2 + i] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
        h = 10;
    }
    memcpy(hdr + h, mask, 4);
    h += 4;
    buf = malloc(h + len + 1);
    if (!buf) return NULL;
    memcpy(buf, hdr, h);
    for (size_t i = 0; i < len; i++) buf[h + i] = ((const uint8_t *)data)[i] ^ mask[i & 3];
    *n = h + len;
    return buf;
}

int wsc_send(int fd, int op, const void *data, size_t len) {
    size_t n;
    uint8_t *buf = frame(op, data, len, &n);
    int rc;
    if (!buf) return -1;
    rc = send_all(fd, buf, n);
    free(buf);
    return rc;
}

int wsc_send_texts(int fd, const char *const *texts, size_t count) {
    uint8_t *all = NULL;
    size_t total = 0;
    int rc;
    for (size_t i = 0; i < count; i++) {
        size_t n;
        uint8_t *f = frame(0x1, texts[i], strlen(texts[i]), &n), *grown;
        if (!f || !(grown = realloc(all, total + n))) {
            free(f);
            free(all);
            return -1;
        }
        all = grown;
        memcpy(all + total, f, n);
        total += n;
        free(f);
    }
    rc = send_all(fd, all, total);
    free(all);
    return rc;
}

int wsc_recv(int fd, int *op, char **data, size_t *len) {
    uint8_t h[2], ext[8];
    uint64_t n;
    *data = NULL;
    *len = 0;
    if (recv_all(fd, h, 2)) return -1;
    if (h[1] & 0x80) return -1; /* servers never mask */
    *op = h[0] & 0x0f;
    n = h[1] & 0x7f;
    if (n == 126) {
        if (recv_all(fd, ext, 2)) return -1;
        n = ((uint64_t)ext[0] << 8) | ext[1];
    } else if (n == 127) {
        if (recv_all(fd, ext, 8)) return -1;
        n = 0;
        for (int i = 0; i < 8; i++) n = (n << 8) | ext[i];
        if (n > (64u << 20)) return -1;
    }
    *data = malloc((size_t)n + 1);
    if (!*data) return -1;
    if (n && recv_all(fd, *data, (size_t)n)) {
        free(*data);
        *data = NULL;
        return -1;
    }
    (*data)[n] = '\0';
    *len = (size_t)n;
    if (*op == 1) stream_log(fd, *data, *len);
    return 0;
}

void wsc_close(int fd) {
    stream_note(fd, NULL);
    if (fd >= 0) close(fd);
}
