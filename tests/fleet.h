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

/* A child process and the loopback port it serves. */
typedef struct fl_proc {
    pid_t pid;
    uint16_t port;
} fl_proc;

/* A loopback port nothing listens on now. */
uint16_t fl_free_port(void);

/* Whether the tool is installed (on PATH, /usr/sbin, /sbin). */
bool fl_have(const char *tool);

/* redis-server on a free port (or on port), without persistence,
 * answering PING. */
fl_proc fl_redis_start(void);
fl_proc fl_redis_start_on(uint16_t port);
/* pathd --port port --store redis://127.0.0.1:redis_port --instance-id
 * name, then extra (NULL terminated, may be NULL), ready (/readyz 200). */
hc_server fl_pathd_start(uint16_t port, uint16_t redis_port, const char *name,
                         const char *const *extra);
/* nginx with deploy/nginx.conf, its upstream servers replaced by
 * 127.0.0.1:ports[0..n) (keeping the file's server parameters), listening
 * on a free loopback port, files under dir (created). */
fl_proc fl_nginx_start(const uint16_t *ports, size_t n, const char *dir);
/* haproxy with deploy/haproxy.cfg, its servers replaced by
 * 127.0.0.1:ports[0..n), bound to a free loopback port, files under dir. */
fl_proc fl_haproxy_start(const uint16_t *ports, size_t n, const char *dir);
/* Sends sig and waits for the process; returns its exit status or
 * 128 + signal. */
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
