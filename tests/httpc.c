/* httpc.c -- see httpc.h. */
#define _GNU_SOURCE
#include "httpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
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

static int read_answer(int fd, hc_resp *out);

/* A hung server fails a test instead of hanging it: reads give up after
 * 30 s times CK_TIMEOUT_MULTIPLIER (the runner's factor for the sanitizer
 * builds, which Check's own timeouts use too). */
static int connect_to(uint16_t port) {
    struct sockaddr_in sa;
    const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
    struct timeval tv = {30 * (mult && atoi(mult) > 1 ? atoi(mult) : 1), 0};
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

/* ---- the spec log (see httpc.h) ---- */

/* The request line of each connection whose answer is still to be read. */
#define NOTE_SLOTS 256
static struct {
    int fd;
    char method[16];
    char target[1024];
} notes[NOTE_SLOTS];
static int notes_used;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void hc_log_note_request(int fd, const char *raw, size_t len) {
    const char *sp, *sp2, *end = raw + len;
    if (!getenv("PATHD_SPEC_LOG") || fd < 0) return;
    sp = memchr(raw, ' ', len);
    sp2 = sp ? memchr(sp + 1, ' ', (size_t)(end - sp - 1)) : NULL;
    pthread_mutex_lock(&log_lock);
    /* A number still noted belongs to a closed connection whose answer was
     * never read with hc_read: forget it. */
    for (int i = 0; i < notes_used; i++)
        if (notes[i].fd == fd) notes[i--] = notes[--notes_used];
    if (notes_used < NOTE_SLOTS) {
        size_t ml = sp ? (size_t)(sp - raw) : 0, tl = sp2 ? (size_t)(sp2 - sp - 1) : 0;
        if (ml >= sizeof(notes[0].method)) ml = sizeof(notes[0].method) - 1;
        if (tl >= sizeof(notes[0].target)) tl = sizeof(notes[0].target) - 1;
        notes[notes_used].fd = fd;
        memcpy(notes[notes_used].method, raw, ml);
        notes[notes_used].method[ml] = '\0';
        if (tl) memcpy(notes[notes_used].target, sp + 1, tl);
        notes[notes_used].target[tl] = '\0';
        notes_used++;
    }
    pthread_mutex_unlock(&log_lock);
}

/* Takes the note of fd into method/target ("?" when there is none). */
static void take_note(int fd, char *method, size_t mcap, char *target, size_t tcap) {
    snprintf(method, mcap, "?");
    snprintf(target, tcap, "?");
    pthread_mutex_lock(&log_lock);
    for (int i = notes_used - 1; i >= 0; i--) {
        if (notes[i].fd != fd) continue;
        snprintf(method, mcap, "%s", notes[i].method);
        snprintf(target, tcap, "%s", notes[i].target);
        notes[i] = notes[--notes_used];
        break;
    }
    pthread_mutex_unlock(&log_lock);
}

/* Appends s as a JSON string (bytes >= 0x80 as \u00XX: the log is ASCII). */
static size_t json_str(char *out, const char *s) {
    size_t n = 0;
    out[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*p;
        } else if (*p < 0x20 || *p >= 0x7f) {
            n += (size_t)sprintf(out + n, "\\u%04x", *p);
        } else {
            out[n++] = (char)*p;
        }
    }
    out[n++] = '"';
    return n;
}

void hc_log_answer(const char *kind, const char *method, const char *target, int status,
                   const char *head, const char *body, size_t body_len) {
    const char *file = getenv("PATHD_SPEC_LOG");
    size_t cap, n = 0;
    char *rec;
    int fd;
    if (!file || !*file) return;
    head = head ? head : "";
    cap = 6 * (strlen(kind) + strlen(method) + strlen(target) + strlen(head)) + body_len + 256;
    rec = malloc(cap);
    if (!rec) return;
    n += (size_t)sprintf(rec + n, "{\"kind\":");
    n += json_str(rec + n, kind);
    n += (size_t)sprintf(rec + n, ",\"method\":");
    n += json_str(rec + n, method);
    n += (size_t)sprintf(rec + n, ",\"target\":");
    n += json_str(rec + n, target);
    n += (size_t)sprintf(rec + n, ",\"status\":%d,\"head\":", status);
    n += json_str(rec + n, head);
    n += (size_t)sprintf(rec + n, ",\"body_len\":%zu}\n", body_len);
    if (body_len) memcpy(rec + n, body, body_len);
    n += body_len;
    rec[n++] = '\n';
    pthread_mutex_lock(&log_lock);
    fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        for (size_t off = 0; off < n;) {
            ssize_t k = write(fd, rec + off, n - off);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            off += (size_t)k;
        }
        close(fd);
    }
    pthread_mutex_unlock(&log_lock);
    free(rec);
}

int hc_read(int fd, hc_resp *out) {
    char method[16], target[1024];
    int rc;
    take_note(fd, method, sizeof(method), target, sizeof(target));
    rc = read_answer(fd, out);
    /* Connections closed without an answer (status 0) are not answers. */
    if (rc == 0 && out->status > 0)
        hc_log_answer("http", method, target, out->status, out->head, out->body, out->body_len);
    return rc;
}

static int read_answer(int fd, hc_resp *out) {
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
    hc_log_note_request(fd, raw, len);
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
    char small[2048], *head = small;
    int n, fd;
    if (body && body_len == 0) body_len = strlen(body);
    for (size_t cap = sizeof(small);;) {
        n = snprintf(head, cap,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s%s%s"
                     "Content-Length: %zu\r\n%s\r\n",
                     method, path, ctype ? "Content-Type: " : "", ctype ? ctype : "",
                     ctype ? "\r\n" : "", body ? body_len : 0, extra ? extra : "");
        if (n < 0 || (size_t)n < cap || head != small) break;
        /* A long target (a query string of many parameters): room for it. */
        cap = (size_t)n + 1;
        if (!(head = malloc(cap))) break;
    }
    fd = n < 0 || !head ? -1 : connect_to(port);
    if (fd < 0) {
        if (head != small) free(head);
        memset(out, 0, sizeof(*out));
        return -1;
    }
    hc_log_note_request(fd, head, (size_t)n);
    send_all(fd, head, (size_t)n);
    if (head != small) free(head);
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

int hc_server_start(hc_server *s, const char *const *args) {
    return hc_server_start_ex(s, args, NULL);
}

int hc_server_start_ex(hc_server *s, const char *const *args, const hc_start_opts *o) {
    const char *bin = getenv("PATHD_BIN");
    const char *argv[96];
    int pfd[2], n = 0;
    char line[512];
    size_t len = 0;
    pid_t parent = getpid();

    memset(s, 0, sizeof(s[0]));
    if (!bin || !*bin) bin = "build/pathd";
    argv[n++] = bin;
    argv[n++] = "--port";
    argv[n++] = "0";
    /* The wall-clock limits at their largest: a sanitizer build on a
     * loaded 2-core machine took ~58 s for one 512x512 grid under the 60 s
     * build default, a 1024x1024 flow field passed the 5 s request default,
     * and a query asking for 60 s got its 504 (three CI runs sharing the
     * cores). A test that does not test these limits must not meet them
     * (the Check timeout ends a hang). A test that does passes its own
     * value after these: the last one given wins. */
    argv[n++] = "--grid-build-ms";
    argv[n++] = "3600000";
    argv[n++] = "--nav-build-ms";
    argv[n++] = "3600000";
    argv[n++] = "--graph-ch-build-ms";
    argv[n++] = "3600000";
    /* The default deadline may not pass the largest one: a test that
     * lowers --max-deadline-ms gets its value as the default too. */
    argv[n++] = "--deadline-ms";
    argv[n++] = "3600000";
    for (const char *const *a = args; a && a[0] && a[1]; a++)
        if (strcmp(a[0], "--max-deadline-ms") == 0) argv[n - 1] = a[1];
    argv[n++] = "--max-deadline-ms";
    argv[n++] = "3600000";
    argv[n++] = "--request-timeout";
    argv[n++] = "3600";
    for (; args && *args && n < 94; args++) argv[n++] = *args;
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
    /* The "pathd listening on ADDR:PORT" line; a pathd that exits closes
     * the pipe (EOF). No clock: a sanitizer build on a loaded machine may
     * take long, and the test's Check timeout ends a hang. */
    while (len < sizeof(line) - 1 && !memchr(line, '\n', len)) {
        ssize_t k = read(pfd[0], line + len, sizeof(line) - 1 - len);
        if (k < 0 && errno == EINTR) continue;
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
    /* Ready when /readyz says so (polled, no sleeps), unless it exits. */
    for (;;) {
        hc_resp r;
        if (hc_request(s->port, "GET", "/readyz", NULL, NULL, 0, NULL, &r) == 0 &&
            r.status == 200) {
            hc_free(&r);
            return 0;
        }
        hc_free(&r);
        if (waitpid(s->pid, NULL, WNOHANG) != 0) break;
        sched_yield();
    }
    fprintf(stderr, "httpc: pathd exited before /readyz answered 200 (%s)\n", bin);
    s->pid = 0;
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
