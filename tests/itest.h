/* itest.h -- helpers for the integration suites that run the real server
 * (test_http.c, test_sessions.c): start/stop it, send a request, read fields
 * of a JSON answer. Each helper fails the current Check test on error. */
#ifndef PF_ITEST_H
#define PF_ITEST_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "httpc.h"

/* A NULL-terminated argument list for it_start. */
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Starts PATHD_BIN with args on an ephemeral port, ready to serve. */
hc_server it_start(const char *const *args);
/* SIGTERM, and the server must exit 0. */
void it_stop(hc_server *s);
/* One request on a fresh connection; body may be NULL. Free with hc_free. */
hc_resp it_req(const hc_server *s, const char *method, const char *path, const char *ctype,
               const char *body);

/* The value at a dotted path ("stats.expanded", "path.0.1": a number
 * indexes an array) of o, or NULL. */
const cJSON *it_get(const cJSON *o, const char *path);
double it_num(const cJSON *o, const char *path);
const char *it_str(const cJSON *o, const char *path);
bool it_truth(const cJSON *o, const char *path);

#endif
