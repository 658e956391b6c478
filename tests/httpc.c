/* httpc.c -- see httpc.h. */
#define _GNU_SOURCE
#include "httpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int connect_to(uint16_t port) {
    struct sockaddr_in sa;
    struct timeval tv = {30, 0};
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static void send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) {
            if (k < 0 && errno == EINTR) continue;
            return; /* the server may have answered and closed early */
        }
        p += k;
        n -= (size_t)k;
    }
}

int hc_read(int fd, hc_resp *out) {
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap), *sep;
    memset(out, 0, sizeof(*out));
    if (!buf) {
        close(fd);
        return -1;
    }
    for (;;) {
        ssize_t k;
        if (len + 4096 > cap) {
            char *b = realloc(buf, cap * 2);
            if (!b) break;
            buf = b;
            cap *= 2;
        }
        k = recv(fd, buf + len, cap - len - 1, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        len += (size_t)k;
    }
    close(fd);
    buf[len] = '\0';
    sep = strstr(buf, "\r\n\r\n");
    if (!sep || sscanf(buf, "HTTP/1.%*d %d", &out->status) != 1) {
        out->head = buf;
        out->body = strdup("");
        return len ? 0 : -1;
    }
    *sep = '\0';
    out->head = buf;
    out->body_len = len - (size_t)(sep + 4 - buf);
    {
        char cl[32];
        if (hc_header(out, "Content-Length", cl, sizeof(cl))) {
            size_t n = strtoull(cl, NULL, 10);
            if (n < out->body_len) out->body_len = n;
        }
    }
    out->body = malloc(out->body_len + 1);
    memcpy(out->body, sep + 4, out->body_len);
    out->body[out->body_len] = '\0';
    return 0;
}

int hc_send_only(uint16_t port, const char *raw, size_t len) {
    int fd = connect_to(port);
    if (fd < 0) return -1;
    send_all(fd, raw, len);
    return fd;
}

int hc_raw(uint16_t port, const char *raw, size_t len, hc_resp *out) {
    int fd = hc_send_only(port, raw, len);
    if (fd < 0) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    return hc_read(fd, out);
}

int hc_request(uint16_t port, const char *method, const char *path, const char *ctype,
               const char *body, size_t body_len, const char *extra, hc_resp *out) {
    char head[2048];
    int n, fd;
    if (body && body_len == 0) body_len = strlen(body);
    n = snprintf(head, sizeof(head),
                 "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s%s%s"
                 "Content-Length: %zu\r\n%s\r\n",
                 method, path, ctype ? "Content-Type: " : "", ctype ? ctype : "",
                 ctype ? "\r\n" : "", body ? body_len : 0, extra ? extra : "");
    fd = connect_to(port);
    if (fd < 0) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    send_all(fd, head, (size_t)n);
    if (body) send_all(fd, body, body_len);
    return hc_read(fd, out);
}

const char *hc_header(const hc_resp *r, const char *name, char *buf, size_t n) {
    size_t nl = strlen(name);
    const char *p = r->head ? strstr(r->head, "\r\n") : NULL;
    while (p) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1, *e = strstr(v, "\r\n");
            size_t len;
            while (*v == ' ') v++;
            len = e ? (size_t)(e - v) : strlen(v);
            if (len >= n) len = n - 1;
            memcpy(buf, v, len);
            buf[len] = '\0';
            return buf;
        }
        p = strstr(p, "\r\n");
    }
    return NULL;
}

void hc_free(hc_resp *r) {
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int hc_server_start(hc_server *s, const char *const *args) {
    return hc_server_start_ex(s, args, NULL);
}

int hc_server_start_ex(hc_server *s, const char *const *args, const hc_start_opts *o) {
    const char *bin = getenv("PATHD_BIN");
    const char *argv[64];
    int pfd[2], n = 0;
    char line[512];
    size_t len = 0;
    uint64_t deadline = now_ms() + 20000;
    pid_t parent = getpid();

    memset(s, 0, sizeof(s[0]));
    if (!bin || !*bin) bin = "build/pathd";
    argv[n++] = bin;
    argv[n++] = "--port";
    argv[n++] = "0";
    for (; args && *args && n < 62; args++) argv[n++] = *args;
    argv[n] = NULL;
    if (pipe2(pfd, O_CLOEXEC) != 0) return -1;
    s->pid = fork();
    if (s->pid < 0) return -1;
    if (s->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        dup2(pfd[1], 1);
        if (o && o->stderr_path) {
            int fd = open(o->stderr_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
            if (fd >= 0) dup2(fd, 2);
        }
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    /* The "pathd listening on ADDR:PORT" line. */
    while (len < sizeof(line) - 1 && !memchr(line, '\n', len)) {
        struct pollfd p = {pfd[0], POLLIN, 0};
        ssize_t k;
        int left = (int)(deadline - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0) break;
        k = read(pfd[0], line + len, sizeof(line) - 1 - len);
        if (k <= 0) break;
        len += (size_t)k;
    }
    close(pfd[0]);
    line[len] = '\0';
    {
        const char *c = strstr(line, "listening on ");
        const char *colon = c ? strchr(c + 13, ':') : NULL;
        if (!colon) {
            fprintf(stderr, "httpc: pathd did not start (%s): '%s'\n", bin, line);
            hc_server_stop(s);
            return -1;
        }
        s->port = (uint16_t)atoi(colon + 1);
        snprintf(s->banner, sizeof(s->banner), "%s", line);
    }
    if (o && o->no_wait) return 0;
    /* Ready when /readyz says so: poll with a deadline, no sleeps. */
    while (now_ms() < deadline) {
        hc_resp r;
        if (hc_request(s->port, "GET", "/readyz", NULL, NULL, 0, NULL, &r) == 0 &&
            r.status == 200) {
            hc_free(&r);
            return 0;
        }
        hc_free(&r);
        sched_yield();
    }
    hc_server_stop(s);
    return -1;
}

int hc_server_stop(hc_server *s) {
    int status = 0;
    if (s->pid <= 0) return -1;
    kill(s->pid, SIGTERM);
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
    }
    s->pid = 0;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

char *hc_path_body(int sx, int sy, int gx, int gy, const char *extra) {
    char *b = malloc(256 + (extra ? strlen(extra) : 0));
    sprintf(b, "{\"start\":[%d,%d],\"goal\":[%d,%d]%s}", sx, sy, gx, gy, extra ? extra : "");
    return b;
}
