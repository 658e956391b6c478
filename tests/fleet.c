/* fleet.c -- see fleet.h. */
#include "fleet.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

uint64_t fl_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint16_t fl_free_port(void) { return tu_free_port(); }

static bool on_path(const char *tool) {
    const char *path = getenv("PATH");
    char buf[4096], *save, *dir;
    if (!path) path = "/usr/bin:/bin";
    snprintf(buf, sizeof(buf), "%s:/usr/sbin:/sbin", path);
    for (dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char full[4200];
        snprintf(full, sizeof(full), "%s/%s", dir, tool);
        if (access(full, X_OK) == 0) return true;
    }
    return false;
}

bool fl_have(const char *tool) { return on_path(tool); }

/* fork + exec argv with stdout and stderr to log (NULL: /dev/null). */
static pid_t spawn(const char *const *argv, const char *log) {
    pid_t parent = getpid(), pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Starts redis-server as p says (port, dir, opts set) and waits for PING. */
static void redis_spawn(fl_proc *p) {
    char port[16], master[16];
    const char *argv[40];
    int n = 0;
    unsigned polls = 0;
    snprintf(port, sizeof(port), "%u", (unsigned)p->port);
    argv[n++] = "redis-server";
    argv[n++] = "--port";
    argv[n++] = port;
    argv[n++] = "--bind";
    argv[n++] = "127.0.0.1";
    argv[n++] = "--dir";
    argv[n++] = p->dir;
    argv[n++] = "--loglevel";
    argv[n++] = "warning";
    argv[n++] = "--daemonize";
    argv[n++] = "no";
    argv[n++] = "--repl-diskless-sync-delay"; /* a replica online at once */
    argv[n++] = "0";
    argv[n++] = "--enable-debug-command";
    argv[n++] = "local";
    argv[n++] = "--appendonly";
    argv[n++] = p->opts.persist == FL_AOF ? "yes" : "no";
    argv[n++] = "--save";
    argv[n++] = p->opts.persist == FL_RDB ? "3600 1000000" : "";
    if (p->opts.replica_of) {
        snprintf(master, sizeof(master), "%u", (unsigned)p->opts.replica_of);
        argv[n++] = "--replicaof";
        argv[n++] = "127.0.0.1";
        argv[n++] = master;
    }
    if (p->opts.no_config) {
        argv[n++] = "--rename-command";
        argv[n++] = "CONFIG";
        argv[n++] = "";
    }
    for (const char *const *x = p->opts.extra; x && *x && n < 38; x++) argv[n++] = *x;
    argv[n] = NULL;
    p->pid = spawn(argv, NULL);
    for (;;) {
        struct timeval tv = {1, 0};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", p->port, tv);
        redisReply *r = c && !c->err ? redisCommand(c, "PING") : NULL;
        bool ok = r && r->type == REDIS_REPLY_STATUS;
        if (r) freeReplyObject(r);
        redisFree(c);
        if (ok) return;
        ck_assert_msg(waitpid(p->pid, NULL, WNOHANG) == 0, "redis-server exited (port %u)",
                      (unsigned)p->port);
        tu_waiting(&polls, "redis-server to answer PING");
        usleep(20000); /* polling a child that starts: no event to wait on */
    }
}

/* The redis-servers' folders, removed when the test's process exits (a
 * failed check ends it before fl_stop). */
static char made_dirs[16][64];
static int nmade;

static void remove_made_dirs(void) {
    for (int i = 0; i < nmade; i++) {
        char cmd[128];
        if (!made_dirs[i][0]) continue;
        snprintf(cmd, sizeof(cmd), "rm -rf %.63s", made_dirs[i]);
        if (system(cmd) != 0) fprintf(stderr, "fleet: %s not removed\n", made_dirs[i]);
    }
    nmade = 0;
}

fl_proc fl_redis_start(void) { return fl_redis_start_with(NULL); }

fl_proc fl_redis_start_with(const fl_redis_opts *o) {
    fl_proc p;
    memset(&p, 0, sizeof(p));
    if (o) p.opts = *o;
    p.port = fl_free_port();
    snprintf(p.dir, sizeof(p.dir), "/tmp/pathd-redis-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(p.dir));
    if (nmade == 0) atexit(remove_made_dirs);
    if (nmade < (int)(sizeof(made_dirs) / sizeof(made_dirs[0])))
        snprintf(made_dirs[nmade++], sizeof(made_dirs[0]), "%s", p.dir);
    redis_spawn(&p);
    return p;
}

void fl_redis_restart(fl_proc *p) {
    ck_assert_int_eq(p->pid, 0);
    redis_spawn(p);
}

long long fl_redis_cmd(uint16_t port, const char *fmt, ...) {
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    redisReply *r;
    long long v = -1;
    va_list ap;
    ck_assert_msg(c && !c->err, "redis on port %u: cannot connect", (unsigned)port);
    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    ck_assert_msg(r && r->type != REDIS_REPLY_ERROR, "redis on port %u: %s: %s", (unsigned)port,
                  fmt, r ? r->str : c->errstr);
    if (r->type == REDIS_REPLY_INTEGER) v = r->integer;
    freeReplyObject(r);
    redisFree(c);
    return v;
}

hc_server fl_pathd_start(uint16_t port, uint16_t redis_port, const char *name,
                         const char *const *extra) {
    char p[16], store[64];
    const char *args[40];
    int n = 0;
    hc_server s;
    snprintf(p, sizeof(p), "%u", (unsigned)port);
    snprintf(store, sizeof(store), "redis://127.0.0.1:%u", (unsigned)redis_port);
    args[n++] = "--port";
    args[n++] = p;
    args[n++] = "--store";
    args[n++] = store;
    args[n++] = "--instance-id";
    args[n++] = name;
    for (; extra && *extra && n < 38; extra++) args[n++] = *extra;
    args[n] = NULL;
    ck_assert_msg(hc_server_start(&s, args) == 0, "pathd %s did not start on port %u", name,
                  (unsigned)port);
    return s;
}

/* deploy/nginx.conf with the test's servers, listen port and paths; the
 * server's default 120 s proxy timeouts become `timeout` when not NULL
 * (the longer ones of the stream locations stay). */
static void write_nginx_conf(const char *out, const uint16_t *ports, size_t n, uint16_t listen,
                             const char *dir, const char *timeout) {
    FILE *in = fopen("deploy/nginx.conf", "r"), *o;
    char line[1024];
    bool in_servers = false, listened = false, servers = false;
    ck_assert_msg(in != NULL, "deploy/nginx.conf: %s", strerror(errno));
    o = fopen(out, "w");
    ck_assert_ptr_nonnull(o);
    while (fgets(line, sizeof(line), in)) {
        char *t = line;
        while (*t == ' ') t++;
        if (strncmp(t, "# pathd-servers-begin", 21) == 0) {
            in_servers = true;
            continue;
        }
        if (strncmp(t, "# pathd-servers-end", 19) == 0) {
            in_servers = false;
            continue;
        }
        if (in_servers) {
            /* The first server line's parameters go on every test server. */
            const char *params;
            if (servers || strncmp(t, "server ", 7) != 0) continue;
            params = strchr(t + 7, ' ');
            for (size_t i = 0; i < n; i++)
                fprintf(o, "        server 127.0.0.1:%u%s", (unsigned)ports[i],
                        params ? params : ";\n");
            servers = true;
            continue;
        }
        if (strncmp(t, "listen ", 7) == 0) {
            fprintf(o, "        listen 127.0.0.1:%u;\n", (unsigned)listen);
            listened = true;
            continue;
        }
        if (timeout && (strncmp(t, "proxy_read_timeout 120s;", 24) == 0 ||
                        strncmp(t, "proxy_send_timeout 120s;", 24) == 0)) {
            fprintf(o, "        %.18s %s;\n", t, timeout);
            continue;
        }
        fputs(line, o);
        if (strncmp(t, "http {", 6) == 0)
            fprintf(o,
                    "    access_log off;\n    client_body_temp_path %s/body;\n"
                    "    proxy_temp_path %s/proxy;\n    fastcgi_temp_path %s/fastcgi;\n"
                    "    uwsgi_temp_path %s/uwsgi;\n    scgi_temp_path %s/scgi;\n",
                    dir, dir, dir, dir, dir);
    }
    fclose(in);
    fclose(o);
    ck_assert_msg(servers && listened, "deploy/nginx.conf lacks its server lines or listen");
}

fl_proc fl_nginx_start(const uint16_t *ports, size_t n, const char *dir) {
    return fl_nginx_start_timeout(ports, n, dir, NULL);
}

fl_proc fl_nginx_start_timeout(const uint16_t *ports, size_t n, const char *dir,
                               const char *timeout) {
    fl_proc p;
    char conf[512], log[512], glob[1024];
    unsigned polls = 0;
    memset(&p, 0, sizeof(p)); /* no redis folder: fl_stop removes nothing */
    mkdir(dir, 0755);
    p.port = fl_free_port();
    snprintf(conf, sizeof(conf), "%s/nginx.conf", dir);
    snprintf(log, sizeof(log), "%s/error.log", dir);
    write_nginx_conf(conf, ports, n, p.port, dir, timeout);
    snprintf(glob, sizeof(glob),
             "daemon off; master_process on; worker_processes 2; pid %s/nginx.pid;%s", dir,
             geteuid() == 0 ? " user root;" : "");
    {
        const char *argv[] = {"nginx", "-p", dir, "-e", log, "-c", conf, "-g", glob, NULL};
        p.pid = spawn(argv, log);
    }
    for (;;) {
        hc_resp r;
        int rc;
        memset(&r, 0, sizeof(r));
        rc = hc_request(p.port, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
        int status = r.status;
        hc_free(&r);
        if (rc == 0 && status == 200) return p;
        ck_assert_msg(waitpid(p.pid, NULL, WNOHANG) == 0, "nginx exited (see %s)", log);
        tu_waiting(&polls, "nginx to answer /healthz");
        usleep(20000);
    }
}

fl_proc fl_haproxy_start(const uint16_t *ports, size_t n, const char *dir) {
    FILE *in = fopen("deploy/haproxy.cfg", "r"), *o;
    char line[1024], conf[512], log[512];
    bool in_servers = false, bound = false, servers = false;
    unsigned polls = 0;
    fl_proc p;
    ck_assert_msg(in != NULL, "deploy/haproxy.cfg: %s", strerror(errno));
    memset(&p, 0, sizeof(p)); /* no redis folder: fl_stop removes nothing */
    mkdir(dir, 0755);
    p.port = fl_free_port();
    snprintf(conf, sizeof(conf), "%s/haproxy.cfg", dir);
    snprintf(log, sizeof(log), "%s/haproxy.log", dir);
    o = fopen(conf, "w");
    ck_assert_ptr_nonnull(o);
    while (fgets(line, sizeof(line), in)) {
        char *t = line;
        while (*t == ' ') t++;
        if (strncmp(t, "# pathd-servers-begin", 21) == 0) {
            in_servers = true;
            for (size_t i = 0; i < n; i++)
                fprintf(o, "    server s%zu 127.0.0.1:%u\n", i, (unsigned)ports[i]);
            servers = true;
            continue;
        }
        if (strncmp(t, "# pathd-servers-end", 19) == 0) {
            in_servers = false;
            continue;
        }
        if (in_servers) continue;
        if (strncmp(t, "bind ", 5) == 0) {
            fprintf(o, "    bind 127.0.0.1:%u\n", (unsigned)p.port);
            bound = true;
            continue;
        }
        fputs(line, o);
    }
    fclose(in);
    fclose(o);
    ck_assert_msg(servers && bound, "deploy/haproxy.cfg lacks its server lines or bind");
    {
        const char *argv[] = {"haproxy", "-db", "-f", conf, NULL};
        p.pid = spawn(argv, log);
    }
    for (;;) {
        hc_resp r;
        int rc, status;
        memset(&r, 0, sizeof(r));
        rc = hc_request(p.port, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
        status = r.status;
        hc_free(&r);
        if (rc == 0 && status == 200) return p;
        ck_assert_msg(waitpid(p.pid, NULL, WNOHANG) == 0, "haproxy exited (see %s)", log);
        tu_waiting(&polls, "haproxy to answer /healthz");
        usleep(20000);
    }
}

void fl_kill9(fl_proc *p) {
    ck_assert_int_gt(p->pid, 0);
    kill(p->pid, SIGKILL);
    while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    p->pid = 0;
}

int fl_stop(fl_proc *p, int sig) {
    int status = 0;
    if (p->dir[0] && p->pid <= 0) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", p->dir);
        if (system(cmd) != 0) fprintf(stderr, "fleet: %s not removed\n", p->dir);
        p->dir[0] = '\0';
    }
    if (p->pid <= 0) return -1;
    kill(p->pid, sig);
    while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR) {
    }
    p->pid = 0;
    if (p->dir[0]) fl_stop(p, sig); /* its folder */
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

hc_resp fl_req(uint16_t port, const char *method, const char *path, const char *ctype,
               const char *body, const char *extra) {
    hc_resp r;
    ck_assert_msg(hc_request(port, method, path, ctype, body, body ? strlen(body) : 0, extra, &r) ==
                      0,
                  "%s %s on port %u: no answer", method, path, (unsigned)port);
    return r;
}

const char *fl_instance(const hc_resp *r, char *buf, size_t n) {
    if (!hc_header(r, "X-Pathd-Instance", buf, n)) buf[0] = '\0';
    return buf;
}
