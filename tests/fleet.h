/* fleet.h -- a pathd fleet on loopback for the integration tests: a real
 * redis-server, pathd instances on chosen ports, and nginx running
 * deploy/nginx.conf in front, all started and stopped by the test (children
 * that die with it: PR_SET_PDEATHSIG). Each helper fails the current Check
 * test on error, except the *_available ones. */
#ifndef PF_TESTS_FLEET_H
#define PF_TESTS_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "httpc.h"

/* How a test's redis-server keeps its data. */
typedef enum fl_persist {
    FL_AOF = 0,  /* appendonly yes (appendfsync everysec), no RDB save points */
    FL_VOLATILE, /* neither: a restart empties it */
    FL_RDB       /* RDB save points that never trigger by themselves ("3600 1000000"): only
                    an explicit SAVE writes the file, so a test controls what a restart loads */
} fl_persist;

typedef struct fl_redis_opts {
    fl_persist persist;
    uint16_t replica_of;      /* 0: a primary; else --replicaof 127.0.0.1 replica_of */
    bool no_config;           /* CONFIG renamed away, as managed Redis services do */
    const char *const *extra; /* more arguments (NULL-terminated), or NULL */
} fl_redis_opts;

/* A child process and the loopback port it serves; a redis-server also
 * its folder (removed by fl_stop) and options (for fl_redis_restart). */
typedef struct fl_proc {
    pid_t pid;
    uint16_t port;
    char dir[64];
    fl_redis_opts opts;
} fl_proc;

/* A loopback port nothing listens on now. */
uint16_t fl_free_port(void);

/* Whether the tool is installed (on PATH, /usr/sbin, /sbin). */
bool fl_have(const char *tool);

/* redis-server on a free port with an append-only file in a new folder
 * under /tmp, answering PING (DEBUG allowed from loopback). */
fl_proc fl_redis_start(void);
/* The same with options (NULL: the defaults). */
fl_proc fl_redis_start_with(const fl_redis_opts *o);
/* Starts p's redis-server again on its port and folder with its options
 * (after a kill): it loads what its persistence kept. */
void fl_redis_restart(fl_proc *p);
/* A command on a new connection to the redis-server on port (hiredis
 * format); fails the test on an error. The reply as an integer (-1 when
 * it is not one). */
long long fl_redis_cmd(uint16_t port, const char *fmt, ...);
/* pathd --port port --store redis://127.0.0.1:redis_port --instance-id
 * name, then extra (NULL terminated, may be NULL), ready (/readyz 200). */
hc_server fl_pathd_start(uint16_t port, uint16_t redis_port, const char *name,
                         const char *const *extra);
/* nginx with deploy/nginx.conf, its upstream servers replaced by
 * 127.0.0.1:ports[0..n) (keeping the file's server parameters), listening
 * on a free loopback port, files under dir (created). */
fl_proc fl_nginx_start(const uint16_t *ports, size_t n, const char *dir);
/* The same with the server's default proxy timeouts (120 s) set to
 * `timeout` ("2s"); the stream locations keep their own. */
fl_proc fl_nginx_start_timeout(const uint16_t *ports, size_t n, const char *dir,
                               const char *timeout);
/* haproxy with deploy/haproxy.cfg, its servers replaced by
 * 127.0.0.1:ports[0..n), bound to a free loopback port, files under dir. */
fl_proc fl_haproxy_start(const uint16_t *ports, size_t n, const char *dir);
/* SIGKILL and wait; a redis-server's folder stays (fl_redis_restart). */
void fl_kill9(fl_proc *p);
/* Sends sig and waits for the process; returns its exit status or
 * 128 + signal. A redis-server's folder is removed. */
int fl_stop(fl_proc *p, int sig);

/* One request with extra header lines (may be NULL); fails the test on a
 * socket error. Free with hc_free. */
hc_resp fl_req(uint16_t port, const char *method, const char *path, const char *ctype,
               const char *body, const char *extra);
/* The X-Pathd-Instance of r ("" when absent), copied into buf. */
const char *fl_instance(const hc_resp *r, char *buf, size_t n);

/* Milliseconds on the monotonic clock. */
uint64_t fl_now_ms(void);

#endif
