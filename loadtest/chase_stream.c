/* chase_stream.c -- `pathd-bench chase --url`: the chase of chase.c against a
 * running pathd, over the multiplexed WebSocket (GET /v1/stream).
 *
 * Chaser i is a session on the server (created on the stream with the
 * run's replanning policy); every frame its target walks as in-process
 * (the same seeded walks), then every chaser sends one update (its
 * position and its target's) and the frame waits for all the answers.
 * Each answer is whole (a path: pushed) or short (`{"unchanged": true}`:
 * the route of the last whole answer from the agent on); the chaser steps
 * one cell along the route it holds. Counted from the answers: replans
 * (`replan.replanned`), skipped replans, expansions (`stats.expanded`),
 * paths pushed, route flips (`replan.flip`), mean distance to the target;
 * and CPU time per frame on both sides: this process's (building and
 * reading the messages, the socket calls) and the server's (its process
 * CPU time over the run: /proc/PID/stat with --server-pid, else
 * process_cpu_seconds_total from /metrics), each divided by the frames.
 *
 * Policies: every-frame (the session's default: a goal move replans, D*
 * Lite keeping its search), timer (`min_updates`: at most one replan every
 * --timer-frames updates) and threshold (`goal_threshold`); each with the
 * run's `hysteresis`. The server's sessions always keep their D* Lite
 * search across goal moves, so in-process "incremental" is every-frame
 * here.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chase.h"
#include "replan.h"
#include "report.h"
#include "wsclient.h"

#define EXIT_FAILED 1
#define EXIT_NO_SERVER 2

typedef struct schaser {
    pf_point pos, target;
    int dir;
    uint64_t rng;
    char sid[72];
    pf_point *route; /* the last whole answer's path */
    size_t nroute;
} schaser;

typedef struct sstats {
    uint64_t replans, skipped, expanded, pushed, shorts, flips, errors;
    uint64_t reasons[PF_REPLAN_REASON_COUNT];
    double dist_sum;
    uint64_t dist_n;
    double client_us, server_us;
} sstats;

/* The server's CPU seconds so far, or NAN. */
static double server_cpu_s(const pf_chase_stream_run *r) {
    if (r->server_pid > 0) {
        char path[64], buf[1024];
        unsigned long ut = 0, st = 0;
        snprintf(path, sizeof(path), "/proc/%d/stat", r->server_pid);
        FILE *f = fopen(path, "r");
        if (!f) return NAN;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *p = strrchr(buf, ')'); /* the name may hold spaces */
        if (!p ||
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
            return NAN;
        return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    }
    char path[256], *body = NULL, err[256];
    int status = 0;
    double v = NAN;
    snprintf(path, sizeof(path), "%s/metrics", r->prefix);
    if (pf_http_once(r->host, r->port, "GET", path, NULL, NULL, 0, &status, &body, err,
                     sizeof(err)) == 0 &&
        status == 200) {
        const char *m = strstr(body, "\nprocess_cpu_seconds_total ");
        if (m) v = strtod(m + strlen("\nprocess_cpu_seconds_total "), NULL);
    }
    free(body);
    return v;
}

int pf_bench_chase_stream_put(const pf_chase_stream_run *r, const char *map_text, size_t len) {
    char path[256], err[256], *body = NULL;
    int status = 0;
    snprintf(path, sizeof(path), "%s/v1/maps/%s", r->prefix, r->map_id);
    if (pf_http_once(r->host, r->port, "PUT", path, "text/x-movingai-map", map_text, len, &status,
                     &body, err, sizeof(err)) != 0) {
        fprintf(stderr, "pathd-bench chase: %s\n", err);
        return EXIT_NO_SERVER;
    }
    if (status != 200 && status != 201) {
        fprintf(stderr, "pathd-bench chase: PUT %s: %d %s\n", path, status, body ? body : "");
        free(body);
        return EXIT_NO_SERVER;
    }
    free(body);
    return 0;
}

/* The policy's "replan" member. */
static void policy_json(const pf_chase_stream_run *r, char *out, size_t cap) {
    if (strcmp(r->policy, "timer") == 0)
        snprintf(out, cap, "{\"min_updates\":%d,\"hysteresis\":%g}", r->timer_frames,
                 r->hysteresis);
    else if (strcmp(r->policy, "threshold") == 0)
        snprintf(out, cap, "{\"goal_threshold\":%g,\"hysteresis\":%g}", r->threshold,
                 r->hysteresis);
    else
        snprintf(out, cap, "{\"hysteresis\":%g}", r->hysteresis);
}

/* Reads one MuxAnswer into chaser cs[tag]; counts it. -1 when it is not
 * one (a broken stream or a message that is not an answer). */
static int take_answer(const char *msg, schaser *cs, size_t n, sstats *s, bool create) {
    cJSON *j = cJSON_Parse(msg);
    int rc = -1;
    if (!j) return -1;
    const cJSON *tag = cJSON_GetObjectItemCaseSensitive(j, "tag"),
                *status = cJSON_GetObjectItemCaseSensitive(j, "status"),
                *body = cJSON_GetObjectItemCaseSensitive(j, "body");
    if (!cJSON_IsNumber(tag) || tag->valuedouble < 0 || tag->valuedouble >= (double)n ||
        !cJSON_IsNumber(status))
        goto out;
    schaser *c = &cs[(size_t)tag->valuedouble];
    if (status->valueint != (create ? 201 : 200) || !cJSON_IsObject(body)) {
        char *t = cJSON_PrintUnformatted(j);
        fprintf(stderr, "pathd-bench chase: an error answer: %s\n", t ? t : "?");
        free(t);
        s->errors++;
        rc = 0;
        goto out;
    }
    if (create) {
        const cJSON *sid = cJSON_GetObjectItemCaseSensitive(j, "session");
        if (!cJSON_IsString(sid)) goto out;
        snprintf(c->sid, sizeof(c->sid), "%s", sid->valuestring);
    }
    const cJSON *stats = cJSON_GetObjectItemCaseSensitive(body, "stats"),
                *rp = cJSON_GetObjectItemCaseSensitive(body, "replan"),
                *path = cJSON_GetObjectItemCaseSensitive(body, "path");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(stats, "expanded"),
                *why = cJSON_GetObjectItemCaseSensitive(rp, "reason");
    if (cJSON_IsNumber(exp)) s->expanded += (uint64_t)exp->valuedouble;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rp, "replanned")))
        s->replans++;
    else
        s->skipped++;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rp, "flip"))) s->flips++;
    if (cJSON_IsString(why))
        for (int k = 0; k < PF_REPLAN_REASON_COUNT; k++)
            if (strcmp(why->valuestring, pf_replan_reason_name((pf_replan_reason)k)) == 0)
                s->reasons[k]++;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(body, "unchanged"))) {
        s->shorts++;
        rc = 0;
        goto out;
    }
    s->pushed++;
    {
        size_t m = cJSON_IsArray(path) ? (size_t)cJSON_GetArraySize(path) : 0;
        pf_point *p = m ? malloc(m * sizeof(*p)) : NULL;
        size_t k = 0;
        const cJSON *pt;
        if (m && !p) goto out;
        cJSON_ArrayForEach(pt, path) {
            const cJSON *x = cJSON_GetArrayItem(pt, 0), *y = cJSON_GetArrayItem(pt, 1);
            if (!cJSON_IsNumber(x) || !cJSON_IsNumber(y)) {
                free(p);
                goto out;
            }
            p[k].x = x->valueint;
            p[k].y = y->valueint;
            k++;
        }
        free(c->route);
        c->route = p;
        c->nroute = m;
    }
    rc = 0;
out:
    cJSON_Delete(j);
    return rc;
}

/* Sends what buf holds and waits for n answers. */
static int exchange(pf_wsc *w, char **msgs, size_t n, schaser *cs, sstats *s, bool create) {
    const char *m;
    size_t len;
    char err[256];
    for (size_t i = 0; i < n; i++)
        if (pf_wsc_send(w, msgs[i], strlen(msgs[i])) != 0) {
            fprintf(stderr, "pathd-bench chase: the stream broke off\n");
            return -1;
        }
    for (size_t i = 0; i < n; i++) {
        if (pf_wsc_recv(w, &m, &len, err, sizeof(err)) != 0) {
            fprintf(stderr, "pathd-bench chase: %s\n", err);
            return -1;
        }
        if (take_answer(m, cs, n, s, create) != 0) {
            fprintf(stderr, "pathd-bench chase: not an answer: %.200s\n", m);
            return -1;
        }
    }
    return 0;
}

int pf_bench_chase_stream(const pf_chase_stream_run *r, const char *map_name) {
    const size_t n = r->chasers;
    schaser *cs = calloc(n, sizeof(*cs));
    char **msgs = calloc(n, sizeof(*msgs));
    char path[256], err[256], pol[160];
    pf_wsc *w = NULL;
    sstats s;
    int rc = EXIT_NO_SERVER;
    double cpu0, cpu1, t0, t1;
    memset(&s, 0, sizeof(s));
    if (!cs || !msgs) goto out;
    for (size_t i = 0; i < n; i++)
        if (!(msgs[i] = malloc(512))) goto out;
    snprintf(path, sizeof(path), "%s/v1/stream", r->prefix);
    if (pf_wsc_open(r->host, r->port, path, &w, err, sizeof(err)) != 0) {
        fprintf(stderr, "pathd-bench chase: %s\n", err);
        goto out;
    }
    policy_json(r, pol, sizeof(pol));
    rc = EXIT_FAILED;
    for (size_t i = 0; i < n; i++) {
        const pf_scen_entry *q = &r->e[i % r->ne];
        cs[i].pos = q->start;
        cs[i].target = q->goal;
        pf_bench_chase_walk_init(r->seed, i, &cs[i].rng, &cs[i].dir);
        snprintf(msgs[i], 512,
                 "{\"op\":\"create\",\"map\":\"%s\",\"tag\":%zu,\"create\":{\"start\":[%d,%d],"
                 "\"goal\":[%d,%d],\"replan\":%s}}",
                 r->map_id, i, cs[i].pos.x, cs[i].pos.y, cs[i].target.x, cs[i].target.y, pol);
    }
    if (exchange(w, msgs, n, cs, &s, true) != 0) goto out;
    for (size_t i = 0; i < n; i++)
        if (!cs[i].sid[0]) goto out;
    memset(&s, 0, sizeof(s)); /* the creates are not frames */
    cpu0 = server_cpu_s(r);
    t0 = pf_report_now_us(CLOCK_PROCESS_CPUTIME_ID);
    for (int f = 0; f < r->frames; f++) {
        for (size_t i = 0; i < n; i++) {
            schaser *c = &cs[i];
            pf_bench_chase_walk(&c->target, &c->dir, &c->rng, r->g, r->speed, r->turn);
            snprintf(msgs[i], 512,
                     "{\"op\":\"update\",\"map\":\"%s\",\"session\":\"%s\",\"tag\":%zu,"
                     "\"update\":{\"position\":[%d,%d],\"goal\":[%d,%d]}}",
                     r->map_id, c->sid, i, c->pos.x, c->pos.y, c->target.x, c->target.y);
        }
        if (exchange(w, msgs, n, cs, &s, false) != 0) goto out;
        for (size_t i = 0; i < n; i++) {
            schaser *c = &cs[i];
            /* One cell along the route held: from where the agent is on it. */
            for (size_t k = 0; k + 1 < c->nroute; k++)
                if (c->route[k].x == c->pos.x && c->route[k].y == c->pos.y) {
                    c->pos = c->route[k + 1];
                    break;
                }
            double dx = c->pos.x - c->target.x, dy = c->pos.y - c->target.y;
            s.dist_sum += sqrt(dx * dx + dy * dy);
            s.dist_n++;
        }
    }
    t1 = pf_report_now_us(CLOCK_PROCESS_CPUTIME_ID);
    cpu1 = server_cpu_s(r);
    s.client_us = (t1 - t0) / r->frames;
    s.server_us = (cpu1 - cpu0) * 1e6 / r->frames;
    for (size_t i = 0; i < n; i++)
        snprintf(msgs[i], 512, "{\"op\":\"delete\",\"map\":\"%s\",\"session\":\"%s\",\"tag\":%zu}",
                 r->map_id, cs[i].sid, i);
    for (size_t i = 0; i < n; i++)
        if (pf_wsc_send(w, msgs[i], strlen(msgs[i])) != 0) break;
    for (size_t i = 0; i < n; i++) {
        const char *m;
        size_t len;
        if (pf_wsc_recv(w, &m, &len, err, sizeof(err)) != 0) break;
    }
    rc = s.errors ? EXIT_FAILED : 0;
    {
        const double dist = s.dist_n ? s.dist_sum / (double)s.dist_n : NAN;
        if (r->json) {
            printf("{\"mode\":\"stream\",\"map\":\"%s\",\"policy\":\"%s\",\"hysteresis\":%g,"
                   "\"chasers\":%zu,\"frames\":%d,\"replans\":%llu,\"skipped\":%llu,"
                   "\"expanded\":%llu,\"pushed\":%llu,\"unchanged\":%llu,\"flips\":%llu,"
                   "\"mean_distance\":%.2f,\"client_cpu_us_per_frame\":%.1f,"
                   "\"server_cpu_us_per_frame\":%.1f,\"errors\":%llu,\"reasons\":{",
                   map_name, r->policy, r->hysteresis, n, r->frames, (unsigned long long)s.replans,
                   (unsigned long long)s.skipped, (unsigned long long)s.expanded,
                   (unsigned long long)s.pushed, (unsigned long long)s.shorts,
                   (unsigned long long)s.flips, dist, s.client_us, s.server_us,
                   (unsigned long long)s.errors);
            for (int k = 0; k < PF_REPLAN_REASON_COUNT; k++)
                printf("%s\"%s\":%llu", k ? "," : "", pf_replan_reason_name((pf_replan_reason)k),
                       (unsigned long long)s.reasons[k]);
            printf("}}\n");
        } else {
            printf("%-14.14s %-12s %4.2f %4zu %7llu %7llu %10llu %7llu %7llu %6llu %7.2f %10.1f "
                   "%10.1f\n",
                   map_name, r->policy, r->hysteresis, n, (unsigned long long)s.replans,
                   (unsigned long long)s.skipped, (unsigned long long)s.expanded,
                   (unsigned long long)s.pushed, (unsigned long long)s.shorts,
                   (unsigned long long)s.flips, dist, s.client_us, s.server_us);
        }
        fflush(stdout);
    }
out:
    pf_wsc_close(w);
    for (size_t i = 0; cs && i < n; i++) free(cs[i].route);
    for (size_t i = 0; msgs && i < n; i++) free(msgs[i]);
    free(msgs);
    free(cs);
    return rc;
}
