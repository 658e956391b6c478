/* itest.c -- see itest.h. */
#include "itest.h"

#include <check.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

hc_server it_start(const char *const *args) {
    hc_server s;
    ck_assert_msg(hc_server_start(&s, args) == 0, "pathd did not start (PATHD_BIN=%s)",
                  getenv("PATHD_BIN") ? getenv("PATHD_BIN") : "unset");
    return s;
}

void it_stop(hc_server *s) { ck_assert_int_eq(hc_server_stop(s), 0); }

hc_resp it_req(const hc_server *s, const char *method, const char *path, const char *ctype,
               const char *body) {
    hc_resp r;
    ck_assert_int_eq(
        hc_request(s->port, method, path, ctype, body, body ? strlen(body) : 0, NULL, &r), 0);
    return r;
}

const cJSON *it_get(const cJSON *o, const char *path) {
    char buf[128], *tok, *save;
    snprintf(buf, sizeof(buf), "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save)) {
        char *end;
        long k = strtol(tok, &end, 10);
        if (cJSON_IsArray(o) && *tok && !*end) /* "path.0.1": array items by index */
            o = k >= 0 ? cJSON_GetArrayItem(o, (int)k) : NULL;
        else
            o = cJSON_GetObjectItemCaseSensitive(o, tok);
    }
    return o;
}

double it_num(const cJSON *o, const char *path) {
    const cJSON *it = it_get(o, path);
    ck_assert_msg(it && cJSON_IsNumber(it), "no number at %s", path);
    return it->valuedouble;
}

const char *it_str(const cJSON *o, const char *path) {
    const cJSON *it = it_get(o, path);
    ck_assert_msg(it && cJSON_IsString(it), "no string at %s", path);
    return it->valuestring;
}

bool it_truth(const cJSON *o, const char *path) {
    const cJSON *it = it_get(o, path);
    ck_assert_msg(it && cJSON_IsBool(it), "no bool at %s", path);
    return cJSON_IsTrue(it);
}

cJSON *it_json(const hc_resp *r) {
    cJSON *j = cJSON_ParseWithLength(r->body, r->body_len);
    ck_assert_msg(j != NULL, "response is not JSON: %s", r->body);
    return j;
}

/* Checks an error answer: status, code and (when given) field. */
void it_expect_error(const hc_resp *r, int status, const char *code, const char *field) {
    cJSON *j;
    ck_assert_msg(r->status == status, "expected %d, got %d: %.300s", status, r->status, r->body);
    j = it_json(r);
    ck_assert_str_eq(it_str(j, "error.code"), code);
    ck_assert(strlen(it_str(j, "error.message")) > 0);
    if (field) ck_assert_str_eq(it_str(j, "error.field"), field);
    cJSON_Delete(j);
}

/* The 10x7 test room: wall in column 4 from the top, gap in the bottom row. */
const char it_room_json[] =
    "{\"width\":10,\"height\":7,\"rows\":[\"....#.....\",\"....#.....\",\"....#.....\","
    "\"....#.....\",\"....#.....\",\"....#.....\",\"..........\"]}";

/* An 8x5 map whose right part is walled off. */
const char it_island_json[] =
    "{\"rows\":[\"...#....\",\"...#....\",\"...#....\",\"...#....\",\"...#....\"],"
    "\"connectivity\":4}";

/* The 12x8 map with a one-cell gap in a wall and a closed room. */
const char it_gap_map[] =
    "{\"rows\":[\"............\",\"............\",\"............\",\"#####.######\","
    "\"............\",\"........####\",\"........#..#\",\"........####\"]}";

/* An open w x h Moving AI map with a wall across the middle row, gap at the
 * right end. Free with free(). */
char *it_open_map_text(int w, int h) {
    size_t cap = (size_t)(w + 1) * (size_t)h + 64, len;
    char *b = malloc(cap);
    len = (size_t)sprintf(b, "type octile\nheight %d\nwidth %d\nmap\n", h, w);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) b[len++] = (y == h / 2 && x < w - 2) ? '@' : '.';
        b[len++] = '\n';
    }
    b[len] = '\0';
    return b;
}

void it_put_map(const hc_server *s, const char *id, const char *ctype, const char *body,
                int expect) {
    char path[128];
    hc_resp r;
    snprintf(path, sizeof(path), "/v1/maps/%s", id);
    r = it_req(s, "PUT", path, ctype, body);
    ck_assert_msg(r.status == expect, "PUT %s: %d %s", id, r.status, r.body);
    hc_free(&r);
}

/* A batch of Dijkstra searches across a 512 x 512 open map: seconds of
 * work, which keeps a worker busy until the batch's deadline. */
char *it_slow_batch(int n, int deadline_ms) {
    size_t cap = (size_t)n * 80 + 64, len = 0;
    char *b = malloc(cap);
    len += (size_t)sprintf(b, "{\"deadline_ms\":%d,\"queries\":[", deadline_ms);
    for (int i = 0; i < n; i++)
        len += (size_t)sprintf(b + len,
                               "%s{\"start\":[0,%d],\"goal\":[511,%d],\"algorithm\":\"dijkstra\","
                               "\"cache\":false}",
                               i ? "," : "", i % 100, 511 - i % 100);
    sprintf(b + len, "]}");
    return b;
}

int it_send_json_post(uint16_t port, const char *path, const char *body) {
    char *raw = malloc(strlen(body) + 512);
    int fd, n = sprintf(raw,
                        "POST %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: "
                        "application/json\r\nContent-Length: %zu\r\n\r\n%s",
                        path, strlen(body), body);
    fd = hc_send_only(port, raw, (size_t)n);
    free(raw);
    ck_assert_int_ge(fd, 0);
    return fd;
}

it_pool it_pool_now(const hc_server *s) {
    hc_resp r = it_req(s, "GET", "/v1/info", NULL, NULL);
    cJSON *j = it_json(&r);
    it_pool p;
    p.running = (int)it_num(j, "pool.running");
    p.queued = (int)it_num(j, "pool.queued");
    p.completed = it_num(j, "pool.completed");
    p.expired = it_num(j, "pool.expired");
    p.requeued = it_num(j, "pool.requeued");
    p.rejected = it_num(j, "pool.rejected");
    cJSON_Delete(j);
    hc_free(&r);
    return p;
}

void it_wait_pool(const hc_server *s, int running, int queued) {
    unsigned polls = 0;
    for (;;) {
        it_pool p = it_pool_now(s);
        if (p.running == running && p.queued == queued) return;
        tu_waiting(&polls, "the pool's running and queued jobs");
    }
}

double it_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

cJSON *it_json_text(const char *body) {
    cJSON *j = cJSON_Parse(body);
    ck_assert_msg(j != NULL, "not JSON: %s", body);
    return j;
}

/* Sends a request, checks its status, returns the body as JSON (NULL for
 * 204). */
cJSON *it_call(const hc_server *s, const char *method, const char *path, const char *ctype,
               const char *body, int expect) {
    hc_resp r = it_req(s, method, path, ctype, body);
    cJSON *j = NULL;
    ck_assert_msg(r.status == expect, "%s %s: expected %d, got %d: %.400s", method, path, expect,
                  r.status, r.body);
    if (r.body_len) j = it_json_text(r.body);
    hc_free(&r);
    return j;
}

void it_call_error(const hc_server *s, const char *method, const char *path, const char *ctype,
                   const char *body, int status, const char *code, const char *field) {
    cJSON *j = it_call(s, method, path, ctype, body, status);
    ck_assert_str_eq(it_str(j, "error.code"), code);
    if (field) ck_assert_str_eq(it_str(j, "error.field"), field);
    cJSON_Delete(j);
}

/* A 10x7 room split by a wall in column 4 with two doors in it: "gate" at
 * (4,3), open, and "hatch" at (4,0), closed. */
const char it_door_map[] =
    "{\"rows\":[\"....#.....\",\"....#.....\",\"....#.....\",\"....#.....\",\"....#.....\","
    "\"....#.....\",\"....#.....\"],"
    "\"doors\":{\"gate\":{\"cells\":[[4,3]],\"open\":true},"
    "\"hatch\":{\"cells\":[[4,0]],\"open\":false}}}";

void it_put_door_map(const hc_server *s, const char *id) {
    char path[64];
    cJSON *j;
    snprintf(path, sizeof(path), "/v1/maps/%s", id);
    j = it_call(s, "PUT", path, "application/json", it_door_map, 201);
    ck_assert_int_eq((int)it_num(j, "doors"), 2);
    cJSON_Delete(j);
}

/* A chain of n nodes 0-1-...-(n-1), two-way, as an upload. */
char *it_graph_chain_json(int n) {
    size_t cap = (size_t)n * 64 + 64, len = 0;
    char *b = malloc(cap);
    ck_assert_ptr_nonnull(b);
    len += (size_t)snprintf(b + len, cap - len, "{\"kind\":\"graph\",\"nodes\":[");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(b + len, cap - len, "%s{\"id\":%d,\"position\":[%d,0]}",
                                i ? "," : "", i, i);
    len += (size_t)snprintf(b + len, cap - len, "],\"edges\":[");
    for (int i = 0; i + 1 < n; i++)
        len += (size_t)snprintf(b + len, cap - len, "%s{\"from\":%d,\"to\":%d}", i ? "," : "", i,
                                i + 1);
    snprintf(b + len, cap - len, "]}");
    return b;
}

/* Creates a session; returns its answer and writes its URL into url. */
cJSON *it_session_create(const hc_server *s, const char *map, int sx, int sy, int gx, int gy,
                         const char *extra, char *url, size_t cap) {
    char path[96], body[160];
    hc_resp r;
    cJSON *j;
    char loc[160];
    snprintf(path, sizeof(path), "/v1/maps/%s/sessions", map);
    snprintf(body, sizeof(body), "{\"start\":[%d,%d],\"goal\":[%d,%d]%s}", sx, sy, gx, gy,
             extra ? extra : "");
    r = it_req(s, "POST", path, "application/json", body);
    ck_assert_msg(r.status == 201, "create: %d %s", r.status, r.body);
    j = it_json_text(r.body);
    ck_assert_ptr_nonnull(hc_header(&r, "Location", loc, sizeof(loc)));
    snprintf(url, cap, "/v1/maps/%s/sessions/%s", map, it_str(j, "session_id"));
    ck_assert_str_eq(loc, url);
    hc_free(&r);
    return j;
}

cJSON *it_session_update(const hc_server *s, const char *url, const char *ctype, const char *body,
                         int expect) {
    char path[200];
    snprintf(path, sizeof(path), "%s/updates", url);
    return it_call(s, "POST", path, ctype, body, expect);
}

/* Reads a limited session until found (each GET is a plan within its
 * limits, which goes on with the repair the one before left). */
cJSON *it_session_read_until_found(const hc_server *s, cJSON *a, const char *url,
                                   const char *reason, uint64_t cap, int *reads,
                                   uint64_t *expanded) {
    *reads = 1;
    *expanded = (uint64_t)it_num(a, "stats.expanded");
    while (!it_truth(a, "found")) {
        ck_assert_str_eq(it_str(a, "reason"), reason);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "path")), 0);
        if (cap) ck_assert_uint_le((uint64_t)it_num(a, "stats.expanded"), cap);
        ck_assert_uint_gt((uint64_t)it_num(a, "stats.expanded"), 0);
        ck_assert_int_lt(*reads, 5000);
        cJSON_Delete(a);
        a = it_call(s, "GET", url, NULL, NULL, 200);
        *expanded += (uint64_t)it_num(a, "stats.expanded");
        ++*reads;
    }
    return a;
}

/* The path's first and last points. */
void it_path_ends(const cJSON *j, int sx, int sy, int gx, int gy) {
    const cJSON *p = it_get(j, "path");
    int n = cJSON_GetArraySize(p);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(p, 0), 0)->valueint, sx);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(p, 0), 1)->valueint, sy);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(p, n - 1), 0)->valueint, gx);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(p, n - 1), 1)->valueint, gy);
}

/* Whether the path passes cell (x, y). */
bool it_path_has(const cJSON *j, int x, int y) {
    const cJSON *pt;
    cJSON_ArrayForEach(pt, it_get(j, "path")) {
        if (cJSON_GetArrayItem(pt, 0)->valueint == x && cJSON_GetArrayItem(pt, 1)->valueint == y)
            return true;
    }
    return false;
}

char *it_nav_envelope(const char *grid_text, const char *extra) {
    cJSON *o = cJSON_CreateObject();
    char *j, *out;
    size_t n;
    cJSON_AddStringToObject(o, "kind", "navmesh");
    cJSON_AddStringToObject(o, "from_grid", grid_text);
    j = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    n = strlen(j) + (extra ? strlen(extra) : 0) + 1;
    out = malloc(n);
    /* Drop the closing brace, add the extra members, close again. */
    j[strlen(j) - 1] = '\0';
    snprintf(out, n, "%s%s}", j, extra ? extra : "");
    free(j);
    return out;
}

void it_put_nav_open(const hc_server *s, const char *id, int w, int h) {
    char *text = malloc((size_t)(w + 1) * (size_t)h + 64), *env;
    size_t len = (size_t)sprintf(text, "type octile\nheight %d\nwidth %d\nmap\n", h, w);
    for (int y = 0; y < h; y++) {
        memset(text + len, '.', (size_t)w);
        len += (size_t)w;
        text[len++] = '\n';
    }
    text[len] = '\0';
    env = it_nav_envelope(text, NULL);
    it_put_map(s, id, "application/json", env, 201);
    free(env);
    free(text);
}

cJSON *it_nav_path(const hc_server *s, const char *map, const float start[3], const float goal[3],
                   const char *extra) {
    char path[128], body[512];
    snprintf(path, sizeof(path), "/v1/maps/%s/path", map);
    snprintf(body, sizeof(body), "{\"start\":[%g,%g,%g],\"goal\":[%g,%g,%g]%s}", (double)start[0],
             (double)start[1], (double)start[2], (double)goal[0], (double)goal[1], (double)goal[2],
             extra ? extra : "");
    return it_call(s, "POST", path, "application/json", body, 200);
}

int it_nav_npoints(const cJSON *j) { return cJSON_GetArraySize(it_get(j, "path")); }

void it_nav_point(const cJSON *j, int i, float out[3]) {
    const cJSON *p = cJSON_GetArrayItem(it_get(j, "path"), i);
    ck_assert_ptr_nonnull(p);
    for (int k = 0; k < 3; k++) out[k] = (float)cJSON_GetArrayItem(p, k)->valuedouble;
}

long it_rss_kib(pid_t pid) {
    char path[64], line[256];
    long kib = -1;
    FILE *f;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    if (!f) return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}
