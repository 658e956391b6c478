/* loadgen.c -- the HTTP load generator: setup over blocking sockets (upload the
 * maps, read /v1/info), then the load over libuv keep-alive connections, then
 * the report. */
#include "loadgen.h"

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <uv.h>

#include "hist.h"
#include "http_parse.h"
#include "path.h"
#include "report.h"
#include "scen.h"

#define EXIT_BAD 1   /* invalid answers, or errors */
#define EXIT_USAGE 2 /* bad arguments, unreachable server, setup failed */

#define BODY_MAX (8u << 20)
#define GRACE_NS (5ull * 1000000000ull) /* in-flight requests get this long after the end */
#define SESSION_UPDATES 20              /* updates before a session is replaced */
#define MAP_DOORS 64                    /* doors declared on each uploaded map */
#define MOVE_STEPS 4                    /* path steps the agent walks between updates */

/* URL */

int pf_bench_parse_url(const char *url, char *host, size_t hostcap, int *port, char *prefix,
                       size_t prefixcap) {
    const char *p, *hend, *slash;
    size_t hl, pl;
    if (strncmp(url, "http://", 7) != 0) return -1;
    p = url + 7;
    slash = strchr(p, '/');
    if (!slash) slash = p + strlen(p);
    if (*p == '[') { /* [v6]:port */
        hend = memchr(p, ']', (size_t)(slash - p));
        if (!hend) return -1;
        hl = (size_t)(hend - p - 1);
        if (hl == 0 || hl >= hostcap) return -1;
        memcpy(host, p + 1, hl);
        host[hl] = '\0';
        p = hend + 1;
    } else {
        const char *colon = memchr(p, ':', (size_t)(slash - p));
        hend = colon ? colon : slash;
        hl = (size_t)(hend - p);
        if (hl == 0 || hl >= hostcap) return -1;
        memcpy(host, p, hl);
        host[hl] = '\0';
        p = hend;
    }
    *port = 80;
    if (*p == ':') {
        char *end;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1 || end != slash || v < 1 || v > 65535) return -1;
        *port = (int)v;
    } else if (p != slash) {
        return -1;
    }
    pl = strlen(slash);
    while (pl > 0 && slash[pl - 1] == '/') pl--;
    if (pl >= prefixcap) return -1;
    memcpy(prefix, slash, pl);
    prefix[pl] = '\0';
    return 0;
}

/* The run */

enum req_kind {
    REQ_PATH,
    REQ_BATCH,
    REQ_SESSION_CREATE,
    REQ_SESSION_UPDATE,
    REQ_SESSION_DELETE,
    REQ_GET
};

/* A door the bench declares on the maps it uploads: 1 to 3 walkable cells
 * across the straight line between a query's start and goal. */
typedef struct bdoor {
    pf_point cell[3];
    int n;
} bdoor;

typedef struct target {
    pf_bench_scen *scen;
    const char *name;
    const pf_scen_entry *e;
    size_t n;
    bdoor doors[MAP_DOORS];
    int ndoors;       /* 0 when the server's copy of the map lacks them */
    uint8_t *door_at; /* per cell: door index + 1, 0 = none */
} target;

typedef struct bench bench;

typedef struct conn {
    bench *b;
    int id;
    uv_tcp_t tcp;
    uv_connect_t creq;
    uv_write_t wreq;
    uv_timer_t timer;
    uv_buf_t wbuf;
    pf_http_resp resp;
    char *out;
    size_t out_cap;
    bool tcp_open, connected, busy, closed_for_good, timer_open, connect_failed;
    uint64_t k;        /* requests this connection has been due to send */
    uint64_t intended; /* ns: when the request in flight was due */
    enum req_kind kind;
    bool check;
    const target *t;
    size_t first, count; /* the target entries the request carries */

    /* Session: one per connection, replaced after SESSION_UPDATES updates. */
    char sid[128];
    const target *st;
    pf_scen_entry se;
    int updates;
    pf_point toggled;
    bool toggled_blocked;
    pf_point pos;    /* where the agent is */
    pf_point *route; /* the path of the last answer, pos..goal */
    size_t nroute, route_cap;
    int closed_door; /* index of the door this session closed, -1 = none */

    char rbuf[65536];
} conn;

struct bench {
    uv_loop_t *loop;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char host[256];
    int port;
    char prefix[256];
    char hosthdr[300];
    char authhdr[600];   /* "Authorization: Bearer <token>\r\n" (--token-file), or "" */
    int setup_timeout_s; /* --setup-timeout: the blocking client's reads and writes */

    target *targets;
    size_t ntargets, total_entries;
    size_t cursor;

    int nconns;
    double duration, rate;
    uint64_t max_requests; /* --requests: the run ends once this many are sent (0: no cap) */
    uint64_t sent;
    const char *algo_name;
    bool no_cache; /* path requests ask for "cache": false */
    pf_algorithm algo;
    int w_paths, w_batch, w_sessions;
    int batch_size;
    int check_every;
    const char *get_path; /* raw mode: every request GETs this */
    bool quiet;
    uint64_t rng;

    uint64_t t_start, t_end, t_grace; /* uv_hrtime ns */
    bool stopping;
    conn *c;
    int open_handles;
    uv_timer_t progress, deadline;

    pf_hist hist;
    pf_hist kind_hist[6]; /* the same latencies, per enum req_kind */
    pf_report rep;
    uint64_t completed, answered_paths;
    uint64_t last_completed, last_tick;
    double subopt_sum;
    uint64_t subopt_n;
    uint64_t sampled, exp_sum, time_us_sum, exp_n;
    uint64_t upd_moves, upd_cells, upd_doors; /* session updates that carried each */
    uint64_t by_kind[6];
};

static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void count_error(bench *b, const char *kind) {
    b->rep.errors++;
    pf_report_add_error(&b->rep, kind, 1);
}

/* Blocking client for setup and the server's figures. */

static int open_socket(const bench *b) {
    int fd = socket(b->addr.ss_family, SOCK_STREAM, 0);
    struct timeval tv = {b->setup_timeout_s, 0};
    if (fd < 0) return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (const struct sockaddr *)&b->addr, b->addrlen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One request on a fresh connection. On success returns 0 with the status
 * in *status and the body (NUL-terminated, free()) in *body. */
static int http_simple(const bench *b, const char *method, const char *path, const char *ctype,
                       const char *data, size_t dlen, int *status, char **body) {
    char head[1024];
    int fd, n, rc = -1;
    pf_http_resp r;
    size_t off;

    fd = open_socket(b);
    if (fd < 0) return -1;
    n = snprintf(head, sizeof(head),
                 "%s %s%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n%s%s%s%sContent-Length: "
                 "%zu\r\n\r\n",
                 method, b->prefix, path, b->hosthdr, b->authhdr, ctype ? "Content-Type: " : "",
                 ctype ? ctype : "", ctype ? "\r\n" : "", dlen);
    pf_http_resp_init(&r, true, BODY_MAX);
    r.head_request = strcmp(method, "HEAD") == 0;
    if (send(fd, head, (size_t)n, MSG_NOSIGNAL) != n) goto out_close;
    for (off = 0; off < dlen;) {
        ssize_t w = send(fd, data + off, dlen - off, MSG_NOSIGNAL);
        if (w <= 0) goto out_close;
        off += (size_t)w;
    }
    for (;;) {
        char buf[16384];
        ssize_t got = recv(fd, buf, sizeof(buf), 0);
        size_t used;
        pf_http_feed f;
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) goto out_close;
        f = got == 0 ? pf_http_resp_eof(&r) : pf_http_resp_feed(&r, buf, (size_t)got, &used);
        if (f == PF_HTTP_ERROR) goto out_close;
        if (f == PF_HTTP_DONE) {
            if (r.status < 200) { /* interim answer: the real one follows */
                pf_http_resp_reset(&r);
                continue;
            }
            break;
        }
    }
    *status = r.status;
    *body = r.body ? r.body : calloc(1, 1);
    r.body = NULL;
    rc = *body ? 0 : -1;
out_close:
    pf_http_resp_free(&r);
    close(fd);
    return rc;
}

/* Declares up to MAP_DOORS doors on t, deterministically: for queries spread
 * evenly over the selection, the walkable cell halfway (else at 35 % or 65 %)
 * along the straight line from start to goal, plus its walkable neighbours
 * across the line. No door cell is a start or goal of any selected query,
 * and doors do not share cells. Returns -1 when out of memory. */
static int build_doors(target *t) {
    const pf_grid *g = pf_planner_grid(pf_bench_scen_planner(t->scen));
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    uint8_t *ends = calloc((size_t)w * (size_t)h, 1);
    static const double fracs[] = {0.5, 0.35, 0.65};
    t->door_at = calloc((size_t)w * (size_t)h, 1);
    t->ndoors = 0;
    if (!ends || !t->door_at) {
        free(ends);
        return -1;
    }
    for (size_t i = 0; i < t->n; i++) {
        ends[(size_t)t->e[i].start.y * (size_t)w + (size_t)t->e[i].start.x] = 1;
        ends[(size_t)t->e[i].goal.y * (size_t)w + (size_t)t->e[i].goal.x] = 1;
    }
    for (size_t k = 0; k < MAP_DOORS && k < t->n; k++) {
        const pf_scen_entry *q = &t->e[k * t->n / (t->n < MAP_DOORS ? t->n : MAP_DOORS)];
        int dx = q->goal.x - q->start.x, dy = q->goal.y - q->start.y;
        bdoor *d = &t->doors[t->ndoors];
        d->n = 0;
        for (size_t f = 0; f < sizeof(fracs) / sizeof(fracs[0]) && d->n == 0; f++) {
            pf_point p = {(int32_t)lround(q->start.x + fracs[f] * dx),
                          (int32_t)lround(q->start.y + fracs[f] * dy)};
            /* across the line: vertical neighbours of a mostly horizontal line */
            pf_point across = abs(dx) >= abs(dy) ? (pf_point){0, 1} : (pf_point){1, 0};
            pf_point cand[3] = {
                p, {p.x - across.x, p.y - across.y}, {p.x + across.x, p.y + across.y}};
            for (int c = 0; c < 3; c++) {
                size_t at;
                if (!pf_grid_in_bounds(g, cand[c]) || !pf_grid_is_walkable(g, cand[c])) {
                    if (c == 0) break; /* the centre must be a walkable cell */
                    continue;
                }
                at = (size_t)cand[c].y * (size_t)w + (size_t)cand[c].x;
                if (ends[at] || t->door_at[at]) {
                    if (c == 0) break;
                    continue;
                }
                d->cell[d->n++] = cand[c];
            }
        }
        if (d->n == 0) continue;
        for (int c = 0; c < d->n; c++)
            t->door_at[(size_t)d->cell[c].y * (size_t)w + (size_t)d->cell[c].x] =
                (uint8_t)(t->ndoors + 1);
        t->ndoors++;
    }
    (void)h;
    free(ends);
    return 0;
}

/* The map as a JSON upload: the Moving AI rows with their legend, and t's
 * doors, all open. Open doors keep their cells' costs, so every query has
 * the scenario's optimum. NULL when the text has no "map" line or out of
 * memory; free() the result. */
static char *map_json(const target *t) {
    size_t len, i = 0;
    const char *text = pf_bench_scen_map_text(t->scen, &len), *end = text + len, *p = text;
    cJSON *o = cJSON_CreateObject(), *lg, *rows, *doors;
    char *out = NULL;
    bool in_map = false;
    if (!o) return NULL;
    lg = cJSON_AddObjectToObject(o, "legend");
    rows = cJSON_AddArrayToObject(o, "rows");
    doors = cJSON_AddObjectToObject(o, "doors");
    if (!lg || !rows || !doors) goto out_free;
    {
        static const char walk[] = ".GS", block[] = "@OTW";
        char key[2] = {0, 0};
        for (const char *c = walk; *c; c++)
            if ((key[0] = *c), !cJSON_AddNumberToObject(lg, key, 1)) goto out_free;
        for (const char *c = block; *c; c++)
            if ((key[0] = *c), !cJSON_AddNumberToObject(lg, key, 0)) goto out_free;
    }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = (size_t)((nl ? nl : end) - p);
        if (l && p[l - 1] == '\r') l--;
        if (in_map) {
            char *row = malloc(l + 1);
            cJSON *str;
            if (!row) goto out_free;
            memcpy(row, p, l);
            row[l] = '\0';
            str = l ? cJSON_CreateString(row) : NULL;
            free(row);
            if (l && (!str || !cJSON_AddItemToArray(rows, str))) {
                cJSON_Delete(str);
                goto out_free;
            }
        } else if (l == 3 && memcmp(p, "map", 3) == 0) {
            in_map = true;
        }
        p = nl ? nl + 1 : end;
    }
    if (!in_map) goto out_free;
    for (i = 0; i < (size_t)t->ndoors; i++) {
        char name[32];
        cJSON *d, *cells;
        snprintf(name, sizeof(name), "d%zu", i);
        d = cJSON_AddObjectToObject(doors, name);
        cells = d ? cJSON_AddArrayToObject(d, "cells") : NULL;
        if (!cells || !cJSON_AddTrueToObject(d, "open")) goto out_free;
        for (int c = 0; c < t->doors[i].n; c++) {
            int xy[2] = {t->doors[i].cell[c].x, t->doors[i].cell[c].y};
            cJSON *pt = cJSON_CreateIntArray(xy, 2);
            if (!pt || !cJSON_AddItemToArray(cells, pt)) {
                cJSON_Delete(pt);
                goto out_free;
            }
        }
    }
    out = cJSON_PrintUnformatted(o);
out_free:
    cJSON_Delete(o);
    return out;
}

/* Uploads each target's map unless the server has it. A map the server
 * already holds keeps the bench's doors only when it declares as many
 * (a copy uploaded earlier by the bench); otherwise sessions toggle no
 * doors on it. */
static int upload_maps(bench *b) {
    for (size_t i = 0; i < b->ntargets; i++) {
        char path[512], *body = NULL, *json;
        int status;
        target *t = &b->targets[i];
        if (build_doors(t) != 0) return -1;
        snprintf(path, sizeof(path), "/v1/maps/%s", t->name);
        if (http_simple(b, "GET", path, NULL, NULL, 0, &status, &body) != 0) {
            fprintf(stderr, "pathd-bench http: GET %s%s: no answer from %s:%d\n", b->prefix, path,
                    b->host, b->port);
            return -1;
        }
        if (status == 200) {
            cJSON *info = cJSON_Parse(body);
            const cJSON *nd = info ? cJSON_GetObjectItemCaseSensitive(info, "doors") : NULL;
            if (!cJSON_IsNumber(nd) || (int)nd->valuedouble != t->ndoors) {
                if (t->ndoors && !b->quiet)
                    fprintf(stderr,
                            "pathd-bench http: the server's map %s lacks the bench's doors; "
                            "sessions toggle none on it (delete the map to get them)\n",
                            t->name);
                t->ndoors = 0;
            }
            cJSON_Delete(info);
            free(body);
            continue;
        }
        free(body);
        json = map_json(t);
        if (!json) {
            fprintf(stderr, "pathd-bench http: cannot convert map %s to JSON\n", t->name);
            return -1;
        }
        if (http_simple(b, "PUT", path, "application/json", json, strlen(json), &status, &body) !=
            0) {
            fprintf(stderr, "pathd-bench http: PUT %s%s: no answer\n", b->prefix, path);
            free(json);
            return -1;
        }
        free(json);
        if (status != 200 && status != 201) {
            fprintf(stderr, "pathd-bench http: PUT %s%s answered %d: %.300s\n", b->prefix, path,
                    status, body);
            free(body);
            return -1;
        }
        free(body);
        if (!b->quiet)
            fprintf(stderr, "pathd-bench http: uploaded map %s with %d doors\n", t->name,
                    t->ndoors);
    }
    return 0;
}

/* The server's own figures: /v1/info as JSON and the sample totals of
 * /metrics by metric name (labels summed), for the report. */
static char *server_figures(const bench *b) {
    cJSON *o = cJSON_CreateObject(), *m;
    char *body = NULL, *out = NULL;
    int status;
    if (!o) return NULL;
    if (http_simple(b, "GET", "/v1/info", NULL, NULL, 0, &status, &body) == 0) {
        cJSON *info = status == 200 ? cJSON_Parse(body) : NULL;
        if (info) cJSON_AddItemToObject(o, "info", info);
        free(body);
    }
    m = cJSON_AddObjectToObject(o, "metrics");
    if (m && http_simple(b, "GET", "/metrics", NULL, NULL, 0, &status, &body) == 0) {
        char *save = NULL;
        for (char *line = status == 200 ? strtok_r(body, "\n", &save) : NULL; line;
             line = strtok_r(NULL, "\n", &save)) {
            char name[128], *sp;
            size_t nl;
            double v;
            cJSON *have;
            if (line[0] == '#') continue;
            nl = strcspn(line, "{ ");
            if (nl == 0 || nl >= sizeof(name)) continue;
            memcpy(name, line, nl);
            name[nl] = '\0';
            /* Histogram buckets are per bound, summing them means nothing. */
            if (nl > 7 && strcmp(name + nl - 7, "_bucket") == 0) continue;
            sp = strrchr(line, '}');
            sp = sp ? sp + 1 : line + nl;
            v = strtod(sp, NULL);
            if (!isfinite(v)) continue;
            have = cJSON_GetObjectItemCaseSensitive(m, name);
            if (have)
                cJSON_SetNumberValue(have, have->valuedouble + v);
            else
                cJSON_AddNumberToObject(m, name, v);
        }
        free(body);
    }
    out = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return out;
}

/* Requests */

static bool out_reserve(conn *c, size_t n) {
    if (n > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        char *p;
        while (cap < n) cap *= 2;
        p = realloc(c->out, cap);
        if (!p) return false;
        c->out = p;
        c->out_cap = cap;
    }
    return true;
}

/* Writes "METHOD path HTTP/1.1" with headers and body into c->out. */
static bool build_request(conn *c, const char *method, const char *path, const char *json,
                          size_t jlen) {
    bench *b = c->b;
    int n;
    size_t need = 512 + strlen(path) + strlen(b->prefix) + strlen(b->authhdr) + jlen;
    if (!out_reserve(c, need)) return false;
    n = snprintf(c->out, c->out_cap,
                 "%s %s%s HTTP/1.1\r\nHost: %s\r\n%s%sContent-Length: %zu\r\n\r\n", method,
                 b->prefix, path, b->hosthdr, b->authhdr,
                 jlen ? "Content-Type: application/json\r\n" : "", jlen);
    if (n < 0 || (size_t)n + jlen >= c->out_cap) return false;
    if (jlen) memcpy(c->out + n, json, jlen);
    c->wbuf = uv_buf_init(c->out, (unsigned)((size_t)n + jlen));
    return true;
}

static const pf_scen_entry *next_entry(bench *b, const target **t, size_t *index) {
    /* Round robin over every file's selected queries, interleaving files. */
    size_t k = b->cursor++ % b->total_entries;
    for (size_t i = 0; i < b->ntargets; i++) {
        if (k < b->targets[i].n) {
            *t = &b->targets[i];
            *index = k;
            return &b->targets[i].e[k];
        }
        k -= b->targets[i].n;
    }
    *t = &b->targets[0];
    *index = 0;
    return &b->targets[0].e[0];
}

static enum req_kind pick_kind(conn *c) {
    bench *b = c->b;
    int total = b->w_paths + b->w_batch + b->w_sessions, r;
    if (b->get_path) return REQ_GET;
    r = (int)(rnd(&b->rng) % (uint64_t)total);
    if (r < b->w_paths) return REQ_PATH;
    if (r < b->w_paths + b->w_batch) return REQ_BATCH;
    if (!c->sid[0]) return REQ_SESSION_CREATE;
    return c->updates >= SESSION_UPDATES ? REQ_SESSION_DELETE : REQ_SESSION_UPDATE;
}

/* Session traffic */

/* The agent walks MOVE_STEPS steps along its route, stopping short of the
 * goal (a session whose agent arrived has nothing left to repair). */
static void session_walk(conn *c) {
    size_t k = MOVE_STEPS;
    if (c->nroute < 3) return;
    if (k > c->nroute - 2) k = c->nroute - 2;
    c->pos = c->route[k];
}

static bool is_agent_or_goal(const conn *c, pf_point p) {
    return (p.x == c->pos.x && p.y == c->pos.y) || (p.x == c->se.goal.x && p.y == c->se.goal.y);
}

/* A walkable cell on the route ahead (else on the straight line between
 * start and goal) that is neither the agent's nor the goal's cell, into
 * c->toggled; (-1, -1) when there is none. */
static void session_pick_cell(conn *c) {
    bench *b = c->b;
    const pf_grid *g = pf_planner_grid(pf_bench_scen_planner(c->st->scen));
    pf_point p;
    if (c->nroute > 4) {
        p = c->route[1 + rnd(&b->rng) % (c->nroute - 2)];
    } else {
        double f = 0.2 + 0.6 * (double)(rnd(&b->rng) % 1000) / 1000.0;
        p = (pf_point){(int32_t)lround(c->se.start.x + f * (c->se.goal.x - c->se.start.x)),
                       (int32_t)lround(c->se.start.y + f * (c->se.goal.y - c->se.start.y))};
    }
    if (is_agent_or_goal(c, p) || !pf_grid_is_walkable(g, p)) p = (pf_point){-1, -1};
    c->toggled = p;
}

static bool door_holds(const bdoor *d, const conn *c) {
    for (int i = 0; i < d->n; i++)
        if (is_agent_or_goal(c, d->cell[i])) return true;
    return false;
}

/* The first door the route crosses ahead, else the door nearest the route
 * (Chebyshev distance to every 4th route cell, or to the agent when there
 * is no route); never one holding the agent or the goal. -1 = none. */
static int session_pick_door(const conn *c) {
    const target *t = c->st;
    const pf_grid *g = pf_planner_grid(pf_bench_scen_planner(t->scen));
    int32_t w = pf_grid_width(g);
    int best = -1;
    long best_d = -1;
    for (size_t i = 1; i < c->nroute; i++) {
        uint8_t at = t->door_at[(size_t)c->route[i].y * (size_t)w + (size_t)c->route[i].x];
        if (at && !door_holds(&t->doors[at - 1], c)) return at - 1;
    }
    for (int k = 0; k < t->ndoors; k++) {
        const bdoor *d = &t->doors[k];
        long dk = -1;
        if (door_holds(d, c)) continue;
        for (size_t i = 0; i < (c->nroute ? c->nroute : 1); i += 4) {
            pf_point r = c->nroute ? c->route[i] : c->pos;
            long dx = labs((long)d->cell[0].x - r.x), dy = labs((long)d->cell[0].y - r.y);
            long dd = dx > dy ? dx : dy;
            if (dk < 0 || dd < dk) dk = dd;
        }
        if (best_d < 0 || dk < best_d) best_d = dk, best = k;
    }
    return best;
}

/* Keeps the route of a session answer (the "path" array, position..goal). */
static void session_keep_route(conn *c, const cJSON *o) {
    const cJSON *path = o ? cJSON_GetObjectItemCaseSensitive(o, "path") : NULL;
    size_t n = cJSON_IsArray(path) ? (size_t)cJSON_GetArraySize(path) : 0, i = 0;
    c->nroute = 0;
    if (n > c->route_cap) {
        pf_point *p = realloc(c->route, n * sizeof(*p));
        if (!p) return;
        c->route = p;
        c->route_cap = n;
    }
    for (const cJSON *pt = path ? path->child : NULL; pt && i < n; pt = pt->next) {
        const cJSON *x = cJSON_GetArrayItem(pt, 0), *y = cJSON_GetArrayItem(pt, 1);
        if (!cJSON_IsNumber(x) || !cJSON_IsNumber(y)) return;
        c->route[i++] = (pf_point){(int32_t)x->valueint, (int32_t)y->valueint};
    }
    c->nroute = i;
}

static bool make_request(conn *c) {
    bench *b = c->b;
    char json[4096], path[512];
    size_t jl = 0;
    const pf_scen_entry *e;

    c->kind = pick_kind(c);
    c->check = false;
    switch (c->kind) {
    case REQ_GET:
        return build_request(c, "GET", b->get_path, "", 0);
    case REQ_PATH:
        e = next_entry(b, &c->t, &c->first);
        c->count = 1;
        jl = (size_t)snprintf(json, sizeof(json),
                              "{\"start\":[%d,%d],\"goal\":[%d,%d],\"algorithm\":\"%s\"%s}",
                              (int)e->start.x, (int)e->start.y, (int)e->goal.x, (int)e->goal.y,
                              b->algo_name, b->no_cache ? ",\"cache\":false" : "");
        snprintf(path, sizeof(path), "/v1/maps/%s/path", c->t->name);
        break;
    case REQ_BATCH: {
        size_t n = 0;
        char *body;
        bool ok;
        /* A batch is batch_size consecutive queries of one file. */
        e = next_entry(b, &c->t, &c->first);
        (void)e;
        c->count = (size_t)b->batch_size;
        if (c->count > c->t->n) c->count = c->t->n;
        body = malloc(96 * c->count + 64);
        if (!body) return false;
        n += (size_t)sprintf(body + n, "{\"queries\":[");
        for (size_t i = 0; i < c->count; i++) {
            const pf_scen_entry *q = &c->t->e[(c->first + i) % c->t->n];
            n += (size_t)sprintf(
                body + n, "%s{\"start\":[%d,%d],\"goal\":[%d,%d],\"algorithm\":\"%s\"%s}",
                i ? "," : "", (int)q->start.x, (int)q->start.y, (int)q->goal.x, (int)q->goal.y,
                b->algo_name, b->no_cache ? ",\"cache\":false" : "");
        }
        n += (size_t)sprintf(body + n, "]}");
        snprintf(path, sizeof(path), "/v1/maps/%s/paths", c->t->name);
        ok = build_request(c, "POST", path, body, n);
        free(body);
        c->check = b->check_every > 0 && (b->by_kind[REQ_BATCH] % (uint64_t)b->check_every) == 0;
        return ok;
    }
    case REQ_SESSION_CREATE:
        e = next_entry(b, &c->st, &c->first);
        c->se = *e;
        c->updates = 0;
        c->toggled_blocked = false;
        c->pos = e->start;
        c->nroute = 0;
        c->closed_door = -1;
        jl = (size_t)snprintf(json, sizeof(json), "{\"start\":[%d,%d],\"goal\":[%d,%d]}",
                              (int)e->start.x, (int)e->start.y, (int)e->goal.x, (int)e->goal.y);
        snprintf(path, sizeof(path), "/v1/maps/%s/sessions", c->st->name);
        return build_request(c, "POST", path, json, jl);
    case REQ_SESSION_UPDATE: {
        int n = 0;
        /* As a game would, in a cycle of six updates: the agent walks along
         * its route (every update reports where it is), a cell near the
         * route closes and opens again, a door on or near the route closes
         * and opens again. */
        switch (c->updates % 6) {
        case 1:
            session_pick_cell(c);
            break;
        case 3:
            c->closed_door = c->st->ndoors ? session_pick_door(c) : -1;
            break;
        default:
            session_walk(c);
            b->upd_moves++;
            break;
        }
        n += snprintf(json + n, sizeof(json) - (size_t)n, "{\"position\":[%d,%d]", (int)c->pos.x,
                      (int)c->pos.y);
        if ((c->updates % 6 == 1 || c->updates % 6 == 2) && c->toggled.x >= 0) {
            /* closes at 1, opens again at 2 */
            c->toggled_blocked = c->updates % 6 == 1;
            n += snprintf(json + n, sizeof(json) - (size_t)n,
                          ",\"cells\":[{\"x\":%d,\"y\":%d,\"cost\":%d}]", (int)c->toggled.x,
                          (int)c->toggled.y, c->toggled_blocked ? 0 : 1);
            b->upd_cells++;
        }
        if ((c->updates % 6 == 3 || c->updates % 6 == 5) && c->closed_door >= 0) {
            n += snprintf(json + n, sizeof(json) - (size_t)n,
                          ",\"doors\":[{\"id\":\"d%d\",\"open\":%s}]", c->closed_door,
                          c->updates % 6 == 3 ? "false" : "true");
            if (c->updates % 6 == 5) c->closed_door = -1;
            b->upd_doors++;
        }
        n += snprintf(json + n, sizeof(json) - (size_t)n, "}");
        jl = (size_t)n;
        c->updates++;
        snprintf(path, sizeof(path), "/v1/maps/%s/sessions/%s/updates", c->st->name, c->sid);
        return build_request(c, "POST", path, json, jl);
    }
    case REQ_SESSION_DELETE:
        snprintf(path, sizeof(path), "/v1/maps/%s/sessions/%s", c->st->name, c->sid);
        c->sid[0] = '\0';
        return build_request(c, "DELETE", path, "", 0);
    }
    c->check = b->check_every > 0 && (b->by_kind[REQ_PATH] % (uint64_t)b->check_every) == 0;
    return build_request(c, "POST", path, json, jl);
}

/* Answer checks */

/* Checks one path result object against the map and the scenario entry. */
static void check_path_result(bench *b, const cJSON *res, const target *t, const pf_scen_entry *e) {
    const pf_grid *g = pf_planner_grid(pf_bench_scen_planner(t->scen));
    const cJSON *found = cJSON_GetObjectItemCaseSensitive(res, "found");
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(res, "path");
    const cJSON *cost = cJSON_GetObjectItemCaseSensitive(res, "cost");
    const cJSON *stats = cJSON_GetObjectItemCaseSensitive(res, "stats");
    pf_point *pts = NULL;
    size_t n = 0;
    double walked;
    bool ok = true;

    b->rep.checked++;
    if (!cJSON_IsTrue(found) || !cJSON_IsArray(path) || !cJSON_IsNumber(cost)) {
        b->rep.invalid++;
        b->rep.mismatches++;
        return;
    }
    n = (size_t)cJSON_GetArraySize(path);
    pts = n ? malloc(n * sizeof(*pts)) : NULL;
    if (!pts) {
        b->rep.invalid++;
        return;
    }
    n = 0;
    for (const cJSON *p = path->child; p; p = p->next) {
        const cJSON *x = cJSON_GetArrayItem(p, 0), *y = cJSON_GetArrayItem(p, 1);
        if (!cJSON_IsNumber(x) || !cJSON_IsNumber(y)) {
            ok = false;
            break;
        }
        pts[n].x = (int32_t)x->valuedouble;
        pts[n].y = (int32_t)y->valuedouble;
        n++;
    }
    /* The path is judged by its own cost, recomputed here; the cost the
     * server printed only has to agree with it to the 2 decimals a JSON
     * answer may be rounded to. */
    if (!ok || pf_path_validate(g, pts, n, &walked, NULL) != PF_OK || pts[0].x != e->start.x ||
        pts[0].y != e->start.y || pts[n - 1].x != e->goal.x || pts[n - 1].y != e->goal.y ||
        fabs(walked - cost->valuedouble) > 0.005 + 1e-6 * walked ||
        walked < e->optimal - fmax(1e-3, 1e-5 * e->optimal)) {
        b->rep.invalid++;
        b->rep.mismatches++; /* a wrong answer misses the optimum too */
        free(pts);
        return;
    }
    if (!pf_bench_cost_matches(walked, e->optimal)) {
        const cJSON *algo = cJSON_GetObjectItemCaseSensitive(res, "algorithm");
        pf_algorithm ran;
        b->rep.mismatches++;
        /* auto: an answer from an exact search must be exact. */
        if (cJSON_IsString(algo) && pf_algorithm_from_name(algo->valuestring, &ran) &&
            pf_algorithm_is_optimal(ran))
            b->rep.exact_mismatches++;
    }
    if (e->optimal > 0) {
        double sub = pf_bench_cost_matches(walked, e->optimal) ? 0.0 : walked / e->optimal - 1.0;
        b->subopt_sum += sub;
        b->subopt_n++;
        if (isnan(b->rep.max_subopt) || sub > b->rep.max_subopt) b->rep.max_subopt = sub;
    }
    if (cJSON_IsObject(stats)) {
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(stats, "expanded");
        const cJSON *us = cJSON_GetObjectItemCaseSensitive(stats, "time_us");
        const cJSON *cached = cJSON_GetObjectItemCaseSensitive(stats, "cached");
        if (cJSON_IsNumber(ex) && cJSON_IsNumber(us) && !cJSON_IsTrue(cached)) {
            b->exp_sum += (uint64_t)ex->valuedouble;
            b->time_us_sum += (uint64_t)us->valuedouble;
            b->exp_n++;
        }
    }
    free(pts);
}

static void on_answer(conn *c) {
    bench *b = c->b;
    pf_http_resp *r = &c->resp;
    cJSON *o = NULL;

    if (r->status < 200 || r->status > 299) {
        char kind[32];
        snprintf(kind, sizeof(kind), "%d", r->status);
        count_error(b, kind);
        if (c->kind == REQ_SESSION_UPDATE && r->status == 404) c->sid[0] = '\0'; /* expired */
        return;
    }
    if (c->kind == REQ_PATH || c->kind == REQ_BATCH) b->answered_paths += c->count;
    if (c->kind == REQ_SESSION_CREATE || c->kind == REQ_SESSION_UPDATE ||
        (c->check && (c->kind == REQ_PATH || c->kind == REQ_BATCH)))
        o = r->body ? cJSON_ParseWithLength(r->body, strlen(r->body)) : NULL;
    switch (c->kind) {
    case REQ_PATH:
        if (!c->check) break;
        if (!o)
            b->rep.invalid++, b->rep.mismatches++, b->rep.checked++;
        else
            check_path_result(b, o, c->t, &c->t->e[c->first]);
        break;
    case REQ_BATCH: {
        const cJSON *results = o ? cJSON_GetObjectItemCaseSensitive(o, "results") : NULL;
        size_t i = 0;
        if (!c->check) break;
        if (!cJSON_IsArray(results) || (size_t)cJSON_GetArraySize(results) != c->count) {
            b->rep.invalid++, b->rep.mismatches++, b->rep.checked++;
            break;
        }
        for (const cJSON *it = results->child; it; it = it->next, i++)
            check_path_result(b, it, c->t, &c->t->e[(c->first + i) % c->t->n]);
        break;
    }
    case REQ_SESSION_CREATE: {
        const cJSON *sid = o ? cJSON_GetObjectItemCaseSensitive(o, "session_id") : NULL;
        if (cJSON_IsString(sid) && strlen(sid->valuestring) < sizeof(c->sid))
            snprintf(c->sid, sizeof(c->sid), "%s", sid->valuestring);
        else
            count_error(b, "no session_id");
        session_keep_route(c, o);
        break;
    }
    case REQ_SESSION_UPDATE:
        session_keep_route(c, o);
        break;
    default:
        break;
    }
    cJSON_Delete(o);
}

/* Connections */

static void conn_next(conn *c);
static void conn_connect(conn *c);

static void on_reconnect(uv_timer_t *t) {
    conn *c = t->data;
    if (!c->closed_for_good && !c->b->stopping && !c->tcp_open) conn_connect(c);
}

static void on_conn_closed(uv_handle_t *h) {
    conn *c = h->data;
    bench *b = c->b;
    c->tcp_open = false;
    b->open_handles--;
    /* Reconnect at once after a closed keep-alive connection, after 100 ms
     * when connecting failed, so a refused port does not spin. */
    if (!c->closed_for_good && !b->stopping && c->timer_open)
        uv_timer_start(&c->timer, on_reconnect, c->connect_failed ? 100 : 0, 0);
}

static void on_timer_closed(uv_handle_t *h) {
    conn *c = h->data;
    c->b->open_handles--;
}

/* Closes the socket; it reconnects afterwards unless the run is over. */
static void conn_drop(conn *c) {
    c->connected = false;
    c->busy = false;
    if (c->tcp_open && !uv_is_closing((uv_handle_t *)&c->tcp))
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void conn_finish(conn *c) {
    c->closed_for_good = true;
    if (c->timer_open) {
        c->timer_open = false;
        uv_timer_stop(&c->timer);
        uv_close((uv_handle_t *)&c->timer, on_timer_closed);
    }
    conn_drop(c);
}

static void on_write(uv_write_t *w, int status) {
    conn *c = w->data;
    if (status < 0 && !c->closed_for_good) {
        count_error(c->b, "write");
        conn_drop(c);
    }
}

static void conn_send(conn *c) {
    bench *b = c->b;
    if (!make_request(c)) {
        count_error(b, "out of memory");
        conn_finish(c);
        return;
    }
    b->by_kind[c->kind]++;
    b->sent++;
    b->rep.requests++;
    c->busy = true;
    pf_http_resp_reset(&c->resp);
    c->wreq.data = c;
    if (uv_write(&c->wreq, (uv_stream_t *)&c->tcp, &c->wbuf, 1, on_write) != 0) {
        count_error(b, "write");
        conn_drop(c);
    }
}

static void on_due(uv_timer_t *t) {
    conn *c = t->data;
    if (c->connected && !c->busy && !c->b->stopping) conn_send(c);
}

/* Sends the next request now (closed loop, or open loop running late) or
 * when it is due. */
static void conn_next(conn *c) {
    bench *b = c->b;
    uint64_t now = uv_hrtime();
    if (b->stopping || now >= b->t_end || (b->max_requests && b->sent >= b->max_requests)) {
        conn_finish(c);
        return;
    }
    if (b->rate > 0) {
        /* Connection c's k-th request is due at start + (c + k x C) / R. */
        double at = (double)(c->id + (double)c->k * b->nconns) / b->rate * 1e9;
        c->intended = b->t_start + (uint64_t)at;
        c->k++;
        if (c->intended >= b->t_end) {
            conn_finish(c);
            return;
        }
        if (c->intended > now) {
            uint64_t ms = (c->intended - now + 999999) / 1000000;
            uv_timer_start(&c->timer, on_due, ms, 0);
            return;
        }
    } else {
        c->intended = now;
    }
    conn_send(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    conn *c = h->data;
    (void)suggested;
    *buf = uv_buf_init(c->rbuf, sizeof(c->rbuf));
}

static void on_response_done(conn *c) {
    bench *b = c->b;
    uint64_t now = uv_hrtime();
    pf_hist_record(&b->hist, now - c->intended);
    pf_hist_record(&b->kind_hist[c->kind], now - c->intended);
    b->completed++;
    c->busy = false;
    on_answer(c);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    conn *c = s->data;
    bench *b = c->b;
    size_t off = 0;

    if (nread < 0) {
        if (c->busy) {
            if (nread == UV_EOF && pf_http_resp_eof(&c->resp) == PF_HTTP_DONE)
                on_response_done(c);
            else
                count_error(b, nread == UV_EOF ? "closed" : "reset");
        }
        conn_drop(c);
        return;
    }
    while (off < (size_t)nread) {
        size_t used = 0;
        pf_http_feed f;
        if (!c->busy) { /* bytes nobody asked for */
            count_error(b, "unexpected bytes");
            conn_drop(c);
            return;
        }
        f = pf_http_resp_feed(&c->resp, buf->base + off, (size_t)nread - off, &used);
        off += used;
        if (f == PF_HTTP_ERROR) {
            count_error(b, "bad response");
            conn_drop(c);
            return;
        }
        if (f == PF_HTTP_MORE) break;
        if (c->resp.status < 200) { /* 100 Continue and friends */
            pf_http_resp_reset(&c->resp);
            continue;
        }
        on_response_done(c);
        if (!c->resp.keep_alive) {
            conn_drop(c); /* reconnects, then carries on */
            return;
        }
        conn_next(c);
    }
}

static void on_connect(uv_connect_t *req, int status) {
    conn *c = req->data;
    bench *b = c->b;
    if (status < 0) {
        if (c->closed_for_good || b->stopping) return; /* cancelled by the end of the run */
        count_error(b, "connect");
        c->connect_failed = true;
        conn_drop(c);
        return;
    }
    c->connect_failed = false;
    c->connected = true;
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    conn_next(c);
}

static void conn_connect(conn *c) {
    bench *b = c->b;
    if (uv_tcp_init(b->loop, &c->tcp) != 0) {
        count_error(b, "socket");
        c->closed_for_good = true;
        return;
    }
    c->tcp.data = c;
    c->tcp_open = true;
    b->open_handles++;
    uv_tcp_nodelay(&c->tcp, 1);
    c->creq.data = c;
    if (uv_tcp_connect(&c->creq, &c->tcp, (const struct sockaddr *)&b->addr, on_connect) != 0) {
        count_error(b, "connect");
        c->closed_for_good = true;
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    }
}

static double pct_us(const pf_hist *h, double p) {
    return h->total ? (double)pf_hist_percentile(h, p) / 1e3 : NAN;
}

static const char *const kind_names[6] = {"path",           "batch",          "session_create",
                                          "session_update", "session_delete", "get"};

/* Latency per request kind as a JSON object, e.g. {"session_update":
 * {"requests":..,"p50_ms":..,"p99_ms":..,"max_ms":..}}; owned, free(). */
static char *kinds_figures(const bench *b) {
    size_t cap = 1024, n = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    n += (size_t)snprintf(out + n, cap - n, "{");
    for (int k = 0; k < 6; k++) {
        const pf_hist *h = &b->kind_hist[k];
        if (!h->total) continue;
        n += (size_t)snprintf(out + n, cap - n,
                              "%s\"%s\":{\"requests\":%llu,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
                              "\"max_ms\":%.3f}",
                              n > 1 ? "," : "", kind_names[k], (unsigned long long)h->total,
                              pct_us(h, 50) / 1e3, pct_us(h, 99) / 1e3, (double)h->max / 1e6);
        if (n >= cap) break;
    }
    if (n + 2 > cap) {
        free(out);
        return NULL;
    }
    snprintf(out + n, cap - n, "}");
    return out;
}

static void print_kinds(FILE *f, const bench *b) {
    for (int k = 0; k < 6; k++) {
        const pf_hist *h = &b->kind_hist[k];
        if (!h->total) continue;
        fprintf(f, "  %-15s requests %-8llu p50 %.3f ms  p99 %.3f ms  max %.3f ms\n", kind_names[k],
                (unsigned long long)h->total, pct_us(h, 50) / 1e3, pct_us(h, 99) / 1e3,
                (double)h->max / 1e6);
    }
}

static void on_progress(uv_timer_t *t) {
    bench *b = t->data;
    uint64_t now = uv_hrtime();
    double secs = (double)(now - b->last_tick) / 1e9;
    if (!b->quiet)
        fprintf(stderr, "[%5.1fs] requests %llu  rps %.0f  p50 %.2f ms  p99 %.2f ms  errors %llu\n",
                (double)(now - b->t_start) / 1e9, (unsigned long long)b->completed,
                (double)(b->completed - b->last_completed) / secs, pct_us(&b->hist, 50) / 1e3,
                pct_us(&b->hist, 99) / 1e3, (unsigned long long)b->rep.errors);
    b->last_completed = b->completed;
    b->last_tick = now;
}

/* At the end of the duration: connections finish their request in flight;
 * after the grace period whatever is still open is cut. */
static void on_deadline(uv_timer_t *t) {
    bench *b = t->data;
    if (!b->stopping) {
        b->stopping = true;
        for (int i = 0; i < b->nconns; i++) {
            conn *c = &b->c[i];
            if (!c->busy) conn_finish(c);
        }
        uv_timer_start(t, on_deadline, GRACE_NS / 1000000, 0);
        return;
    }
    for (int i = 0; i < b->nconns; i++) {
        conn *c = &b->c[i];
        if (c->busy) count_error(b, "timeout");
        conn_finish(c);
    }
}

/* Command line */

static void http_usage(FILE *f) {
    fputs("usage: pathd-bench http --url URL --scen FILE.scen... [options]\n"
          "       pathd-bench http --url URL --get PATH [options]\n"
          "\n"
          "Uploads the scenario maps the server lacks (PUT /v1/maps/{name}, JSON with\n"
          "doors), then sends requests drawn from the scenarios over C keep-alive\n"
          "connections for S seconds\n"
          "and reports requests, errors by status and kind, requests per second,\n"
          "latency p50/p90/p99/p99.9/max (log-bucketed histogram, 1.6% resolution),\n"
          "whether sampled answers were valid (paths checked against the map, costs\n"
          "against the scenario optimum where the algorithm is optimal), and the\n"
          "server's own /v1/info and /metrics figures.\n"
          "\n"
          "  --url URL             http://host:port[/prefix]\n"
          "  --scen FILE.scen      a scenario file (repeat, or list files after the options)\n"
          "  --connections C       keep-alive connections (default 8)\n"
          "  --duration S          seconds of load (default 10; 86400 with --requests)\n"
          "  --requests N          end the run once N requests are sent (each answered or\n"
          "                        cut at the end); what a test asserts on, not the clock\n"
          "  --rate R              open loop at R requests/s; latency counts from when each\n"
          "                        request was due (coordinated omission); default closed loop\n"
          "  --algorithm A         the algorithm path requests ask for (default astar)\n"
          "  --no-cache            path requests ask for \"cache\": false (every one searches)\n"
          "  --mix paths=P,batch=B,sessions=S\n"
          "                        weights of single paths, batches and session traffic\n"
          "                        (create; updates that walk the agent, close and reopen\n"
          "                        a cell, close and reopen a door; delete);\n"
          "                        default paths=1\n"
          "  --batch-size N        queries per batch request (default 16)\n"
          "  --max-queries N, --min-bucket-frac F, --bucket-quarter\n"
          "                        choose the queries as `pathd-bench scen` does\n"
          "  --check-every N       check every N-th path answer (default 10, 0 = none)\n"
          "  --token-file FILE     send Authorization: Bearer <the token in FILE> (a server\n"
          "                        with --auth-token-file; uploads need a write token)\n"
          "  --setup-timeout S     seconds the setup requests (map uploads, the server's\n"
          "                        info and metrics) may take (default 600: an upload\n"
          "                        builds the map, up to the server's --grid-build-ms)\n"
          "  --get PATH            every request is GET PATH (no scenarios): for comparing\n"
          "                        with wrk on one endpoint\n"
          "  --seed N              request mix seed (default 1)\n"
          "  --quiet               no progress line each second\n"
          "  --json                one JSON object: requests, errors, rps, p50_ms, p90_ms,\n"
          "                        p99_ms, p999_ms, max_ms, invalid, and the scen fields\n"
          "Exit status: 0 fine; 1 invalid answers or errors; 2 bad arguments or setup.\n",
          f);
}

static int parse_mix(bench *b, const char *s) {
    char buf[256], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", s);
    b->w_paths = b->w_batch = b->w_sessions = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '='), *end;
        long v;
        if (!eq) return -1;
        *eq = '\0';
        v = strtol(eq + 1, &end, 10);
        if (*end || v < 0 || v > 1000000) return -1;
        if (strcmp(tok, "paths") == 0)
            b->w_paths = (int)v;
        else if (strcmp(tok, "batch") == 0)
            b->w_batch = (int)v;
        else if (strcmp(tok, "sessions") == 0)
            b->w_sessions = (int)v;
        else
            return -1;
    }
    return b->w_paths + b->w_batch + b->w_sessions > 0 ? 0 : -1;
}

static int resolve(bench *b) {
    struct addrinfo hints, *res = NULL;
    char port[16];
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%d", b->port);
    if (getaddrinfo(b->host, port, &hints, &res) != 0 || !res) return -1;
    memcpy(&b->addr, res->ai_addr, res->ai_addrlen);
    b->addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

/* The token in path (the whole file, surrounding blanks trimmed) as an
 * Authorization header line into out. 0, or -1 with a message. */
static int read_token(const char *path, char *out, size_t cap) {
    char buf[520];
    size_t n, i = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "pathd-bench http: --token-file %s: %s\n", path, strerror(errno));
        return -1;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) buf[--n] = 0;
    while (buf[i] == ' ' || buf[i] == '\t') i++;
    if (!buf[i] || strpbrk(buf + i, " \t\r\n")) {
        fprintf(stderr, "pathd-bench http: --token-file %s: the file must hold one token\n", path);
        return -1;
    }
    snprintf(out, cap, "Authorization: Bearer %s\r\n", buf + i);
    return 0;
}

int pf_bench_http_main(int argc, char **argv) {
    static const struct option longopts[] = {{"url", required_argument, NULL, 'u'},
                                             {"scen", required_argument, NULL, 's'},
                                             {"connections", required_argument, NULL, 'c'},
                                             {"duration", required_argument, NULL, 'd'},
                                             {"requests", required_argument, NULL, 'R'},
                                             {"rate", required_argument, NULL, 'r'},
                                             {"algorithm", required_argument, NULL, 'a'},
                                             {"mix", required_argument, NULL, 'm'},
                                             {"batch-size", required_argument, NULL, 'B'},
                                             {"max-queries", required_argument, NULL, 'n'},
                                             {"min-bucket-frac", required_argument, NULL, 'f'},
                                             {"bucket-quarter", no_argument, NULL, 'q'},
                                             {"check-every", required_argument, NULL, 'k'},
                                             {"get", required_argument, NULL, 'g'},
                                             {"token-file", required_argument, NULL, 't'},
                                             {"seed", required_argument, NULL, 'S'},
                                             {"setup-timeout", required_argument, NULL, 'T'},
                                             {"no-cache", no_argument, NULL, 'N'},
                                             {"quiet", no_argument, NULL, 'Q'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    bench *b;
    const char *url = NULL;
    const char **files;
    int nfiles = 0, opt, rc = EXIT_USAGE;
    bool json = false, duration_set = false;
    pf_bench_scen_opts so;
    char *server = NULL, *kinds = NULL, updates[160] = "";
    uv_loop_t loop;

    b = calloc(1, sizeof(*b));
    files = calloc((size_t)argc + 1, sizeof(*files));
    if (!b || !files) {
        free(b);
        free(files);
        return EXIT_USAGE;
    }
    memset(&so, 0, sizeof(so));
    b->nconns = 8;
    b->duration = 10;
    b->algo_name = "astar";
    b->algo = PF_ALGO_ASTAR;
    b->w_paths = 1;
    b->batch_size = 16;
    b->check_every = 10;
    b->setup_timeout_s = 600;
    b->rng = 1;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (opt) {
        case 'u':
            url = optarg;
            break;
        case 's':
            files[nfiles++] = optarg;
            break;
        case 'c': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 10000) goto bad_arg;
            b->nconns = (int)v;
            break;
        }
        case 'd':
            b->duration = strtod(optarg, &end);
            if (*end || !(b->duration > 0 && b->duration <= 86400)) goto bad_arg;
            duration_set = true;
            break;
        case 'R': {
            unsigned long long v = strtoull(optarg, &end, 10);
            if (*end || *optarg == '-' || v < 1 || v > 1000000000ull) goto bad_arg;
            b->max_requests = v;
            break;
        }
        case 'r':
            b->rate = strtod(optarg, &end);
            if (*end || !(b->rate > 0 && b->rate <= 1e7)) goto bad_arg;
            break;
        case 'a':
            if (!pf_algorithm_from_name(optarg, &b->algo)) goto bad_arg;
            b->algo_name = optarg;
            break;
        case 'N':
            b->no_cache = true;
            break;
        case 'm':
            if (parse_mix(b, optarg)) goto bad_arg;
            break;
        case 'B': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 10000) goto bad_arg;
            b->batch_size = (int)v;
            break;
        }
        case 'n': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1) goto bad_arg;
            so.max_queries = (size_t)v;
            break;
        }
        case 'f':
            so.min_bucket_frac = strtod(optarg, &end);
            if (*end || !(so.min_bucket_frac >= 0 && so.min_bucket_frac < 1)) goto bad_arg;
            break;
        case 'q':
            so.min_bucket_frac = 0.75;
            break;
        case 'k': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0) goto bad_arg;
            b->check_every = (int)v;
            break;
        }
        case 'g':
            b->get_path = optarg;
            break;
        case 't':
            if (read_token(optarg, b->authhdr, sizeof(b->authhdr))) goto out_free;
            break;
        case 'S':
            b->rng = strtoull(optarg, &end, 10);
            break;
        case 'T': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 86400) goto bad_arg;
            b->setup_timeout_s = (int)v;
            break;
        }
        case 'Q':
            b->quiet = true;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            http_usage(stdout);
            rc = 0;
            goto out_free;
        default:
            http_usage(stderr);
            goto out_free;
        }
    }
    while (optind < argc) files[nfiles++] = argv[optind++];
    if (b->max_requests && !duration_set) b->duration = 86400;
    if (!url || pf_bench_parse_url(url, b->host, sizeof(b->host), &b->port, b->prefix,
                                   sizeof(b->prefix)) != 0) {
        fprintf(stderr, "pathd-bench http: --url http://host:port[/prefix] is required\n");
        goto out_free;
    }
    if (!nfiles && !b->get_path) {
        fprintf(stderr, "pathd-bench http: give scenario files (--scen) or --get PATH\n");
        goto out_free;
    }
    if (b->get_path && b->get_path[0] != '/') goto bad_arg;
    snprintf(b->hosthdr, sizeof(b->hosthdr), strchr(b->host, ':') ? "[%s]:%d" : "%s:%d", b->host,
             b->port);
    if (resolve(b) != 0) {
        fprintf(stderr, "pathd-bench http: cannot resolve %s\n", b->host);
        goto out_free;
    }

    pf_report_init(&b->rep);
    pf_hist_init(&b->hist);
    for (int k = 0; k < 6; k++) pf_hist_init(&b->kind_hist[k]);
    snprintf(b->rep.algorithm, sizeof(b->rep.algorithm), "%s", b->get_path ? "-" : b->algo_name);
    if (nfiles && !b->get_path) {
        b->targets = calloc((size_t)nfiles, sizeof(*b->targets));
        if (!b->targets) goto out_free;
        for (int i = 0; i < nfiles; i++) {
            char err[512] = "";
            target *t = &b->targets[b->ntargets];
            if (pf_bench_scen_load(files[i], &so, &t->scen, err, sizeof(err)) != PF_OK) {
                fprintf(stderr, "pathd-bench http: %s\n", err);
                goto out_free;
            }
            t->name = pf_bench_scen_name(t->scen);
            t->e = pf_bench_scen_entries(t->scen, &t->n);
            if (!t->n) {
                pf_bench_scen_destroy(t->scen);
                continue;
            }
            b->total_entries += t->n;
            b->ntargets++;
            {
                size_t ml = strlen(b->rep.map);
                snprintf(b->rep.map + ml, sizeof(b->rep.map) - ml, "%s%s", ml ? "," : "", t->name);
            }
        }
        if (!b->total_entries) {
            fprintf(stderr, "pathd-bench http: no queries selected\n");
            goto out_free;
        }
        if (upload_maps(b) != 0) goto out_free;
    } else {
        snprintf(b->rep.map, sizeof(b->rep.map), "GET %s", b->get_path);
    }

    b->c = calloc((size_t)b->nconns, sizeof(*b->c));
    if (!b->c) goto out_free;
    if (uv_loop_init(&loop) != 0) goto out_free;
    b->loop = &loop;
    b->t_start = uv_hrtime();
    b->t_end = b->t_start + (uint64_t)(b->duration * 1e9);
    b->last_tick = b->t_start;
    for (int i = 0; i < b->nconns; i++) {
        conn *c = &b->c[i];
        c->b = b;
        c->id = i;
        pf_http_resp_init(&c->resp, true, BODY_MAX);
        uv_timer_init(&loop, &c->timer);
        c->timer.data = c;
        c->timer_open = true;
        b->open_handles++;
        conn_connect(c);
    }
    uv_timer_init(&loop, &b->progress);
    b->progress.data = b;
    if (b->duration >= 2) uv_timer_start(&b->progress, on_progress, 1000, 1000);
    uv_timer_init(&loop, &b->deadline);
    b->deadline.data = b;
    uv_timer_start(&b->deadline, on_deadline, (uint64_t)(b->duration * 1000) + 1, 0);
    /* Runs until every connection is done; then the two run timers go. */
    while (b->open_handles > 0 && uv_run(&loop, UV_RUN_ONCE)) {
    }
    uv_timer_stop(&b->progress);
    uv_timer_stop(&b->deadline);
    uv_close((uv_handle_t *)&b->progress, NULL);
    uv_close((uv_handle_t *)&b->deadline, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);

    {
        pf_report *r = &b->rep;
        double wall = (double)(uv_hrtime() - b->t_start) / 1e9;
        r->seconds = fmin(wall, b->duration);
        r->queries = b->answered_paths;
        r->rps = (double)b->completed / r->seconds;
        r->p50_us = pct_us(&b->hist, 50);
        r->p90_us = pct_us(&b->hist, 90);
        r->p99_us = pct_us(&b->hist, 99);
        r->p999_us = pct_us(&b->hist, 99.9);
        r->max_us = b->hist.total ? (double)b->hist.max / 1e3 : NAN;
        r->mean_us = pf_hist_mean(&b->hist) / 1e3;
        r->mean_subopt = b->subopt_n ? b->subopt_sum / (double)b->subopt_n : NAN;
        if (b->exp_n) {
            r->mean_expanded = (double)b->exp_sum / (double)b->exp_n;
            r->expanded_total = b->exp_sum;
            r->search_seconds = (double)b->time_us_sum / 1e6;
            if (b->exp_sum) r->ns_per_expansion = (double)b->time_us_sum * 1e3 / (double)b->exp_sum;
        }
    }
    server = server_figures(b);
    b->rep.server_json = server;
    kinds = kinds_figures(b);
    b->rep.kinds_json = kinds;
    if (b->w_sessions) {
        snprintf(updates, sizeof(updates), "{\"moves\":%llu,\"cells\":%llu,\"doors\":%llu}",
                 (unsigned long long)b->upd_moves, (unsigned long long)b->upd_cells,
                 (unsigned long long)b->upd_doors);
        b->rep.session_updates_json = updates;
    }
    if (json) {
        pf_report_print_json(stdout, &b->rep);
    } else {
        pf_report_print_header(stdout);
        pf_report_print_row(stdout, &b->rep);
        pf_report_print_latency(stdout, &b->rep);
        print_kinds(stdout, b);
        if (b->w_sessions) printf("session updates: %s\n", updates);
        if (server) printf("server: %s\n", server);
    }
    rc = (b->rep.invalid || b->rep.errors || b->rep.exact_mismatches ||
          (b->rep.mismatches && pf_algorithm_is_optimal(b->algo)))
             ? EXIT_BAD
             : 0;
    goto out_free;

bad_arg:
    fprintf(stderr, "pathd-bench http: bad value for an option: %s\n", argv[optind - 1]);
    http_usage(stderr);
out_free:
    if (b->c) {
        for (int i = 0; i < b->nconns; i++) {
            pf_http_resp_free(&b->c[i].resp);
            free(b->c[i].out);
            free(b->c[i].route);
        }
        free(b->c);
    }
    for (size_t i = 0; i < b->ntargets; i++) {
        pf_bench_scen_destroy(b->targets[i].scen);
        free(b->targets[i].door_at);
    }
    free(b->targets);
    free(server);
    free(kinds);
    free(files);
    free(b);
    return rc;
}
