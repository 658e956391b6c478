/* redis_info.c -- see redis_info.h. */
#include "redis_info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pf_redis_info_value(const char *text, size_t len, const char *key, char *out, size_t n) {
    size_t kl = strlen(key);
    const char *p = text, *end = text + len;
    if (n) out[0] = '\0';
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end;
        size_t ll = (size_t)(le - p);
        if (ll > 0 && p[ll - 1] == '\r') ll--;
        if (ll > kl && memcmp(p, key, kl) == 0 && p[kl] == ':') {
            size_t vl = ll - kl - 1;
            if (n) {
                if (vl >= n) vl = n - 1;
                memcpy(out, p + kl + 1, vl);
                out[vl] = '\0';
            }
            return;
        }
        p = eol ? eol + 1 : end;
    }
}

/* CONFIG GET name's value into out; false (with the refusal in why) when
 * CONFIG is not allowed. An I/O error is returned in *st. */
static bool config_get(redisContext *c, uint64_t deadline_ns, const char *name, char *out, size_t n,
                       char *why, size_t whylen, pf_status *st, pf_proto_error *e) {
    const char *argv[3] = {"CONFIG", "GET", name};
    size_t lens[3] = {6, 3, strlen(name)};
    redisReply *rep = pf_redis_call(c, deadline_ns, 3, argv, lens, e);
    bool ok;
    *st = PF_OK;
    out[0] = '\0';
    if (!rep) {
        if (c->err) {
            *st = e->status;
            return false;
        }
        /* An error reply: CONFIG is renamed, disabled or not allowed to us. */
        snprintf(why, whylen, "%.120s", e->message);
        return false;
    }
    ok = rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
         rep->element[1]->type == REDIS_REPLY_STRING;
    if (ok)
        snprintf(out, n, "%.*s", (int)rep->element[1]->len, rep->element[1]->str);
    else
        snprintf(why, whylen, "CONFIG GET %s answered no value", name);
    freeReplyObject(rep);
    return ok;
}

pf_status pf_redis_run_id(redisContext *c, uint64_t deadline_ns, char out[41], pf_proto_error *e) {
    const char *argv[2] = {"INFO", "server"};
    size_t lens[2] = {4, 6};
    redisReply *rep = pf_redis_call(c, deadline_ns, 2, argv, lens, e);
    out[0] = '\0';
    if (!rep) return e->status;
    if (rep->type == REDIS_REPLY_STRING) pf_redis_info_value(rep->str, rep->len, "run_id", out, 41);
    freeReplyObject(rep);
    if (!out[0])
        return pf_proto_error_set(e, PF_EIO, PF_ERR_STORAGE, NULL,
                                  "The map store's INFO has no run_id: it is not a Redis this "
                                  "server knows.");
    return PF_OK;
}

pf_status pf_redis_inspect(redisContext *c, uint64_t deadline_ns, pf_redis_facts *out,
                           pf_proto_error *e) {
    const char *argv[1] = {"INFO"};
    size_t lens[1] = {4};
    redisReply *rep = pf_redis_call(c, deadline_ns, 1, argv, lens, e);
    char v[64];
    pf_status st;
    memset(out, 0, sizeof(*out));
    if (!rep) return e->status;
    if (rep->type != REDIS_REPLY_STRING) {
        freeReplyObject(rep);
        return pf_proto_error_set(e, PF_EIO, PF_ERR_STORAGE, NULL,
                                  "The map store answered INFO in a form this server does not "
                                  "know.");
    }
    pf_redis_info_value(rep->str, rep->len, "run_id", out->run_id, sizeof(out->run_id));
    pf_redis_info_value(rep->str, rep->len, "role", out->role, sizeof(out->role));
    pf_redis_info_value(rep->str, rep->len, "redis_version", out->version, sizeof(out->version));
    pf_redis_info_value(rep->str, rep->len, "aof_enabled", v, sizeof(v));
    out->aof = strcmp(v, "1") == 0;
    pf_redis_info_value(rep->str, rep->len, "loading", v, sizeof(v));
    out->loading = strcmp(v, "1") == 0;
    pf_redis_info_value(rep->str, rep->len, "connected_slaves", v, sizeof(v));
    out->connected = atoi(v);
    /* A replica counts once it is online: one still taking its first
     * full copy has nothing yet. */
    for (int i = 0; i < out->connected && i < 1000; i++) {
        char key[24], line[256];
        snprintf(key, sizeof(key), "slave%d", i);
        pf_redis_info_value(rep->str, rep->len, key, line, sizeof(line));
        if (strstr(line, "state=online")) out->replicas++;
    }
    freeReplyObject(rep);
    if (!out->run_id[0])
        return pf_proto_error_set(e, PF_EIO, PF_ERR_STORAGE, NULL,
                                  "The map store's INFO has no run_id: it is not a Redis this "
                                  "server knows.");
    out->config_readable = config_get(c, deadline_ns, "save", out->save, sizeof(out->save),
                                      out->config_error, sizeof(out->config_error), &st, e);
    return st;
}

bool pf_redis_facts_durable(const pf_redis_facts *f, char *why, size_t n) {
    char parts[3][160];
    int k = 0;
    if (f->aof) snprintf(parts[k++], sizeof(parts[0]), "appendonly yes");
    if (f->config_readable && f->save[0])
        snprintf(parts[k++], sizeof(parts[0]), "RDB save points \"%.100s\"", f->save);
    if (f->replicas > 0)
        snprintf(parts[k++], sizeof(parts[0]), "%d replica%s online", f->replicas,
                 f->replicas == 1 ? "" : "s");
    if (k == 3)
        snprintf(why, n, "%s; %s; %s", parts[0], parts[1], parts[2]);
    else if (k == 2)
        snprintf(why, n, "%s; %s", parts[0], parts[1]);
    else if (k == 1)
        snprintf(why, n, "%s", parts[0]);
    else if (f->config_readable)
        snprintf(why, n, "appendonly no, no RDB save points, no replica online");
    else
        snprintf(why, n,
                 "CONFIG GET refused, so RDB save points unknown; INFO: appendonly no, no "
                 "replica online");
    return k > 0;
}
