/* test_guard.c -- who may do what, on the real server: bearer tokens and
 * their scopes (401 with WWW-Authenticate, 403), sessions of one's own,
 * SIGHUP reloads, --open-metrics, the safe defaults (loopback only without
 * tokens, --insecure-no-auth), the Host rule, browser rules (CORS only with
 * --cors-origin, Content-Types a form cannot send), and TLS through curl
 * against a certificate made here. */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "certs.h"
#include "config.h"
#include "guard.h"
#include "httpc.h"
#include "itest.h"
#include "testutil.h"
#include "wsc.h"

#define TOK_R "reader-token-0123456789abcdefXYZ"
#define TOK_R2 "another-reader-9876543210zyxwvu"
#define TOK_W "writer-token+0123456789/abcdef=="

static const char room_json[] =
    "{\"width\":10,\"height\":7,\"rows\":[\"....#.....\",\"....#.....\",\"....#.....\","
    "\"....#.....\",\"....#.....\",\"....#.....\",\"..........\"]}";
static const char room_text[] = "type octile\nheight 3\nwidth 4\nmap\n....\n.@..\n....\n";

static char *temp_dir(void) {
    char *d = strdup("/tmp/pathd-guard-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

static void rm_rf(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Writes text to dir/name through a rename, as a secret mount swaps it. */
static void write_file(const char *dir, const char *name, const char *text, char *path,
                       size_t cap) {
    char tmp[600];
    FILE *f;
    snprintf(path, cap, "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    ck_assert_ptr_nonnull(f = fopen(tmp, "w"));
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(rename(tmp, path), 0);
}

/* One request with an optional bearer token and extra header lines. */
static hc_resp req(const hc_server *s, const char *method, const char *path, const char *ctype,
                   const char *body, const char *token, const char *extra) {
    char hdr[1024];
    hc_resp r;
    snprintf(hdr, sizeof(hdr), "%s%s%s%s", token ? "Authorization: Bearer " : "",
             token ? token : "", token ? "\r\n" : "", extra ? extra : "");
    ck_assert_int_eq(
        hc_request(s->port, method, path, ctype, body, body ? strlen(body) : 0, hdr, &r), 0);
    return r;
}

static int status_of(const hc_server *s, const char *method, const char *path, const char *ctype,
                     const char *body, const char *token) {
    hc_resp r = req(s, method, path, ctype, body, token, NULL);
    int st = r.status;
    hc_free(&r);
    return st;
}

static cJSON *json_of(const hc_resp *r) {
    cJSON *j = cJSON_ParseWithLength(r->body, r->body_len);
    ck_assert_msg(j != NULL, "not JSON: %s", r->body);
    return j;
}

static void expect_error(const hc_resp *r, int status, const char *code) {
    cJSON *j;
    ck_assert_msg(r->status == status, "expected %d, got %d: %.300s", status, r->status, r->body);
    j = json_of(r);
    ck_assert_str_eq(it_str(j, "error.code"), code);
    cJSON_Delete(j);
}

static bool file_has(const char *path, const char *needle) {
    size_t n;
    char *b = tu_read_file(path, &n);
    bool found = b && strstr(b, needle) != NULL;
    free(b);
    return found;
}

/* Runs pathd with args and returns its exit status; its stderr goes to
 * err (cap bytes). */
static int run_pathd(const char *const *args, char *err, size_t cap) {
    const char *bin = getenv("PATHD_BIN");
    char cmd[2048], log[] = "/tmp/pathd-guard-log-XXXXXX";
    size_t n = 0, len;
    int fd = mkstemp(log), rc;
    char *b;
    ck_assert_int_ge(fd, 0);
    close(fd);
    n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s --port 0",
                          bin && *bin ? bin : "build/pathd");
    for (; *args; args++) n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", *args);
    snprintf(cmd + n, sizeof(cmd) - n, " >/dev/null 2>'%s' </dev/null", log);
    rc = system(cmd);
    b = tu_read_file(log, &len);
    snprintf(err, cap, "%s", b ? b : "");
    free(b);
    unlink(log);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* The route-scope table of README.md, enforced: open probes, read for
 * every GET and the path queries, write for uploads, PATCH and DELETE; 401
 * without a known token (WWW-Authenticate: Bearer, error=invalid_token for a
 * bad one), 403 with a too small scope (error=insufficient_scope); a
 * bearer token makes text/plain acceptable; the tokens never reach the
 * server's log. */
START_TEST(guard_scopes_and_answers) {
    char *dir = temp_dir(), tokens[600], log[600], buf[256];
    hc_server s;
    hc_start_opts o = {log, false};
    hc_resp r;
    write_file(dir, "tokens", "# test\nread " TOK_R "\nread " TOK_R2 "\nwrite " TOK_W "\n", tokens,
               sizeof(tokens));
    snprintf(log, sizeof(log), "%s/stderr", dir);
    ck_assert_int_eq(hc_server_start_ex(&s, ARGS("--auth-token-file", tokens), &o), 0);
    ck_assert_msg(strstr(s.banner, "tokens: 2 read + 1 write"), "%s", s.banner);

    /* Probes are open, a bad token there is ignored. */
    ck_assert_int_eq(status_of(&s, "GET", "/healthz", NULL, NULL, NULL), 200);
    ck_assert_int_eq(status_of(&s, "GET", "/readyz", NULL, NULL, "nonsense-token-000000"), 200);
    ck_assert_int_eq(status_of(&s, "GET", "/", NULL, NULL, NULL), 200); /* the viewer page */

    /* No token: 401 and the challenge without an error attribute. */
    r = req(&s, "GET", "/v1/maps", NULL, NULL, NULL, NULL);
    expect_error(&r, 401, "unauthorized");
    ck_assert_str_eq(hc_header(&r, "WWW-Authenticate", buf, sizeof(buf)), "Bearer realm=\"pathd\"");
    hc_free(&r);
    /* An unknown or malformed one: error="invalid_token". */
    r = req(&s, "GET", "/v1/maps", NULL, NULL, "not-a-known-token-12345", NULL);
    expect_error(&r, 401, "unauthorized");
    ck_assert_str_eq(hc_header(&r, "WWW-Authenticate", buf, sizeof(buf)),
                     "Bearer realm=\"pathd\", error=\"invalid_token\"");
    hc_free(&r);
    r = req(&s, "GET", "/v1/maps", NULL, NULL, NULL, "Authorization: Basic dXNlcjpwYXNz\r\n");
    expect_error(&r, 401, "unauthorized");
    ck_assert(strstr(hc_header(&r, "WWW-Authenticate", buf, sizeof(buf)), "invalid_token"));
    hc_free(&r);
    /* Unknown paths need a token too, so probing tells nothing. */
    ck_assert_int_eq(status_of(&s, "GET", "/v1/secret", NULL, NULL, NULL), 401);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/secret", NULL, NULL, TOK_R), 404);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps/bad%20id", NULL, NULL, NULL), 401);
    /* Two Authorization lines: refused before any check. */
    r = req(&s, "GET", "/v1/maps", NULL, NULL, TOK_W, "Authorization: Bearer " TOK_R "\r\n");
    expect_error(&r, 400, "malformed_request");
    hc_free(&r);

    /* Metrics and info need read. */
    ck_assert_int_eq(status_of(&s, "GET", "/metrics", NULL, NULL, NULL), 401);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/info", NULL, NULL, NULL), 401);
    ck_assert_int_eq(status_of(&s, "GET", "/metrics", NULL, NULL, TOK_R), 200);
    r = req(&s, "GET", "/v1/info", NULL, NULL, TOK_R, NULL);
    {
        cJSON *j = json_of(&r);
        ck_assert(it_truth(j, "security.tokens"));
        ck_assert_int_eq((int)it_num(j, "security.read_tokens"), 2);
        ck_assert_int_eq((int)it_num(j, "security.write_tokens"), 1);
        cJSON_Delete(j);
    }
    hc_free(&r);

    /* Writes need write: 403 for read, with the scope in the challenge. */
    r = req(&s, "PUT", "/v1/maps/room", "application/json", room_json, TOK_R, NULL);
    expect_error(&r, 403, "insufficient_scope");
    ck_assert_str_eq(hc_header(&r, "WWW-Authenticate", buf, sizeof(buf)),
                     "Bearer realm=\"pathd\", error=\"insufficient_scope\", scope=\"write\"");
    hc_free(&r);
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/room", "application/json", room_json, NULL),
                     401);
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/room", "application/json", room_json, TOK_W),
                     201);
    /* text/plain with a token is a Moving AI map. */
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/small", "text/plain", room_text, TOK_W), 201);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps", "text/x-movingai-map", room_text, TOK_W),
                     201);
    /* The same map as text/plain: found by its content hash. */
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps", "text/plain", room_text, TOK_W), 200);
    ck_assert_int_eq(status_of(&s, "PATCH", "/v1/maps/room", "application/json",
                               "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":3}]}", TOK_R),
                     403);
    ck_assert_int_eq(status_of(&s, "PATCH", "/v1/maps/room", "application/json",
                               "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":3}]}", TOK_W),
                     200);
    ck_assert_int_eq(status_of(&s, "DELETE", "/v1/maps/small", NULL, NULL, TOK_R), 403);
    ck_assert_int_eq(status_of(&s, "DELETE", "/v1/maps/small", NULL, NULL, TOK_W), 204);

    /* Reads with read. */
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps/room", NULL, NULL, TOK_R), 200);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps/room/cells", NULL, NULL, TOK_R), 200);
    ck_assert_int_eq(
        status_of(&s, "GET", "/v1/maps/room/path?start=0,0&goal=9,0", NULL, NULL, TOK_R), 200);
    ck_assert_int_eq(
        status_of(&s, "GET", "/v1/maps/room/path?start=0,0&goal=9,0", NULL, NULL, NULL), 401);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/room/paths", "application/json",
                               "{\"queries\":[{\"start\":[0,0],\"goal\":[9,0]}]}", TOK_R),
                     200);
    /* Flow fields and tables are reads; generating a map is a write. */
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/room/flowfield", "application/json",
                               "{\"goal\":[9,0]}", NULL),
                     401);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/room/flowfield", "application/json",
                               "{\"goal\":[9,0]}", TOK_R),
                     200);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/room/table", "application/json",
                               "{\"sources\":[[0,0],[9,0]]}", NULL),
                     401);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/room/table", "application/json",
                               "{\"sources\":[[0,0],[9,0]]}", TOK_R),
                     200);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps/room/hierarchy", NULL, NULL, NULL), 401);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps/room/hierarchy", NULL, NULL, TOK_R), 200);
    r = req(&s, "POST", "/v1/maps/generate", "application/json",
            "{\"type\":\"maze\",\"width\":21,\"height\":21,\"seed\":1}", TOK_R, NULL);
    expect_error(&r, 403, "insufficient_scope");
    hc_free(&r);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/generate", "application/json",
                               "{\"type\":\"maze\",\"width\":21,\"height\":21,\"seed\":1}", NULL),
                     401);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/generate", "application/json",
                               "{\"type\":\"maze\",\"width\":21,\"height\":21,\"seed\":1}", TOK_W),
                     201);
    it_stop(&s);

    /* The log says what happened, never a token. */
    ck_assert(!file_has(log, TOK_R) && !file_has(log, TOK_R2) && !file_has(log, TOK_W));
    ck_assert(!file_has(log, "not-a-known-token"));
    rm_rf(dir);
    free(dir);
}
END_TEST

/* Creates a session on map m with token tok; its URL goes to url. */
static void create_session(const hc_server *s, const char *tok, char *url, size_t cap) {
    hc_resp r = req(s, "POST", "/v1/maps/room/sessions", "application/json",
                    "{\"start\":[0,0],\"goal\":[9,0]}", tok, NULL);
    char loc[200];
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    ck_assert_ptr_nonnull(hc_header(&r, "Location", loc, sizeof(loc)));
    snprintf(url, cap, "%s", loc);
    hc_free(&r);
}

/* A read token reaches only the sessions it created (another one's is 404,
 * as if it did not exist); a write token reaches every session. */
START_TEST(guard_sessions_of_ones_own) {
    char *dir = temp_dir(), tokens[600], url[200], path[260];
    hc_server s;
    write_file(dir, "tokens", "read " TOK_R "\nread " TOK_R2 "\nwrite " TOK_W "\n", tokens,
               sizeof(tokens));
    s = it_start(ARGS("--auth-token-file", tokens));
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/room", "application/json", room_json, TOK_W),
                     201);
    create_session(&s, TOK_R, url, sizeof(url));
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_R), 200);
    /* The listing shows a read token its own sessions, a write token all. */
    {
        static const struct {
            const char *tok;
            int count;
        } lists[] = {{TOK_R, 1}, {TOK_R2, 0}, {TOK_W, 1}};
        for (size_t i = 0; i < 3; i++) {
            hc_resp lr = req(&s, "GET", "/v1/maps/room/sessions", NULL, NULL, lists[i].tok, NULL);
            cJSON *j = json_of(&lr);
            ck_assert_int_eq(lr.status, 200);
            ck_assert_int_eq((int)it_num(j, "count"), lists[i].count);
            ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "sessions")), lists[i].count);
            cJSON_Delete(j);
            hc_free(&lr);
        }
    }
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_R2), 404);
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, NULL), 401);
    snprintf(path, sizeof(path), "%s/updates", url);
    ck_assert_int_eq(
        status_of(&s, "POST", path, "application/json", "{\"position\":[1,0]}", TOK_R2), 404);
    ck_assert_int_eq(status_of(&s, "POST", path, "application/json", "{\"position\":[1,0]}", TOK_R),
                     200);
    snprintf(path, sizeof(path), "%s/stream", url);
    {
        hc_resp r = req(&s, "GET", path, NULL, NULL, TOK_R2,
                        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: "
                        "13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n");
        expect_error(&r, 404, "session_not_found");
        hc_free(&r);
    }
    ck_assert_int_eq(status_of(&s, "DELETE", url, NULL, NULL, TOK_R2), 404);
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_W), 200);
    ck_assert_int_eq(status_of(&s, "DELETE", url, NULL, NULL, TOK_R), 204);
    /* The writer's own, and the writer may delete a reader's. */
    create_session(&s, TOK_R2, url, sizeof(url));
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_R), 404);
    ck_assert_int_eq(status_of(&s, "DELETE", url, NULL, NULL, TOK_W), 204);
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_R2), 404);
    it_stop(&s);
    rm_rf(dir);
    free(dir);
}
END_TEST

/* Crowds follow the sessions' rule: a read token reaches only the crowds
 * it created (another one's is 404 crowd_not_found, on every route), a
 * write token reaches every crowd. */
START_TEST(guard_crowds_of_ones_own) {
    char *dir = temp_dir(), tokens[600], url[200], path[260], loc[200];
    char *text = it_open_map_text(12, 6), *env = it_nav_envelope(text, NULL);
    hc_server s;
    hc_resp r;
    write_file(dir, "tokens", "read " TOK_R "\nread " TOK_R2 "\nwrite " TOK_W "\n", tokens,
               sizeof(tokens));
    s = it_start(ARGS("--auth-token-file", tokens));
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/nav", "application/json", env, TOK_W), 201);
    r = req(&s, "POST", "/v1/maps/nav/crowds", "application/json",
            "{\"agents\":[{\"position\":[1.5,0,1.5],\"target\":[10.5,0,4.5]}]}", TOK_R, NULL);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    ck_assert_ptr_nonnull(hc_header(&r, "Location", loc, sizeof(loc)));
    snprintf(url, sizeof(url), "%s", loc);
    hc_free(&r);
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_R), 200);
    r = req(&s, "GET", url, NULL, NULL, TOK_R2, NULL);
    expect_error(&r, 404, "crowd_not_found");
    hc_free(&r);
    snprintf(path, sizeof(path), "%s/step", url);
    ck_assert_int_eq(status_of(&s, "POST", path, "application/json", "{\"steps\":1}", TOK_R2), 404);
    ck_assert_int_eq(status_of(&s, "POST", path, "application/json", "{\"steps\":1}", TOK_R), 200);
    snprintf(path, sizeof(path), "%s/stream", url);
    r = req(&s, "GET", path, NULL, NULL, TOK_R2,
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: "
            "13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n");
    expect_error(&r, 404, "crowd_not_found");
    hc_free(&r);
    ck_assert_int_eq(status_of(&s, "DELETE", url, NULL, NULL, TOK_R2), 404);
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_W), 200);
    ck_assert_int_eq(status_of(&s, "DELETE", url, NULL, NULL, TOK_W), 204);
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_R), 404);
    it_stop(&s);
    free(text);
    free(env);
    rm_rf(dir);
    free(dir);
}
END_TEST

/* One mux message and its answer's status and session. */
static int mux_call(int fd, const char *msg, char *sid, size_t cap) {
    int op, st;
    char *data;
    size_t len;
    cJSON *j;
    ck_assert_int_eq(wsc_send(fd, 1, msg, strlen(msg)), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &data, &len), 0);
    ck_assert_int_eq(op, 1);
    j = cJSON_Parse(data);
    ck_assert_ptr_nonnull(j);
    st = (int)it_num(j, "status");
    if (sid && cJSON_IsString(it_get(j, "session"))) snprintf(sid, cap, "%s", it_str(j, "session"));
    cJSON_Delete(j);
    free(data);
    return st;
}

/* The multiplexed stream (GET /v1/stream) keeps the same rule: what a read
 * token creates there is its own, and it reaches no other token's
 * session; a write token reaches all. */
START_TEST(guard_mux_stream_owners) {
    char *dir = temp_dir(), tokens[600], sid[80], msg[400], url[200];
    hc_server s;
    int st, r1, r2, w;
    write_file(dir, "tokens", "read " TOK_R "\nread " TOK_R2 "\nwrite " TOK_W "\n", tokens,
               sizeof(tokens));
    s = it_start(ARGS("--auth-token-file", tokens));
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/room", "application/json", room_json, TOK_W),
                     201);
    ck_assert_int_lt(wsc_connect_auth(s.port, "/v1/stream", NULL, &st, NULL, 0), 0);
    ck_assert_int_eq(st, 401);
    ck_assert_int_ge(r1 = wsc_connect_auth(s.port, "/v1/stream", TOK_R, &st, NULL, 0), 0);
    ck_assert_int_ge(r2 = wsc_connect_auth(s.port, "/v1/stream", TOK_R2, &st, NULL, 0), 0);
    ck_assert_int_ge(w = wsc_connect_auth(s.port, "/v1/stream", TOK_W, &st, NULL, 0), 0);
    ck_assert_int_eq(mux_call(r1,
                              "{\"op\":\"create\",\"map\":\"room\",\"create\":{\"start\":[0,0],"
                              "\"goal\":[9,0]}}",
                              sid, sizeof(sid)),
                     201);
    snprintf(msg, sizeof(msg), "{\"op\":\"get\",\"map\":\"room\",\"session\":\"%s\"}", sid);
    ck_assert_int_eq(mux_call(r1, msg, NULL, 0), 200);
    ck_assert_int_eq(mux_call(r2, msg, NULL, 0), 404);
    ck_assert_int_eq(mux_call(w, msg, NULL, 0), 200);
    snprintf(msg, sizeof(msg),
             "{\"map\":\"room\",\"session\":\"%s\",\"update\":{\"position\":[1,0]}}", sid);
    ck_assert_int_eq(mux_call(r2, msg, NULL, 0), 404);
    ck_assert_int_eq(mux_call(r1, msg, NULL, 0), 200);
    snprintf(msg, sizeof(msg), "{\"op\":\"delete\",\"map\":\"room\",\"session\":\"%s\"}", sid);
    ck_assert_int_eq(mux_call(r2, msg, NULL, 0), 404);
    /* Over HTTP the session is r1's too. */
    snprintf(url, sizeof(url), "/v1/maps/room/sessions/%s", sid);
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_R2), 404);
    ck_assert_int_eq(status_of(&s, "GET", url, NULL, NULL, TOK_R), 200);
    ck_assert_int_eq(mux_call(r1, msg, NULL, 0), 204);
    wsc_close(r1);
    wsc_close(r2);
    wsc_close(w);
    it_stop(&s);
    rm_rf(dir);
    free(dir);
}
END_TEST

/* Polls until `token` gets `want` on /v1/maps (no clock: Check's timeout
 * ends a wait for what never comes). */
static bool wait_for(const hc_server *s, const char *token, int want) {
    unsigned polls = 0;
    while (status_of(s, "GET", "/v1/maps", NULL, NULL, token) != want)
        tu_waiting(&polls, "the reloaded tokens");
    return true;
}

/* SIGHUP rereads the file: new tokens work and old ones stop at once; a
 * broken file is reported (its line, not its tokens) and the tokens in
 * force stay. */
START_TEST(guard_sighup_reloads_tokens) {
    char *dir = temp_dir(), tokens[600], log[600];
    hc_server s;
    hc_start_opts o = {log, false};
    snprintf(log, sizeof(log), "%s/stderr", dir);
    write_file(dir, "tokens", "read " TOK_R "\n", tokens, sizeof(tokens));
    ck_assert_int_eq(hc_server_start_ex(&s, ARGS("--auth-token-file", tokens), &o), 0);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps", NULL, NULL, TOK_R), 200);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps", NULL, NULL, TOK_R2), 401);

    write_file(dir, "tokens", "read " TOK_R2 "\n", tokens, sizeof(tokens));
    kill(s.pid, SIGHUP);
    ck_assert(wait_for(&s, TOK_R2, 200));
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps", NULL, NULL, TOK_R), 401);

    write_file(dir, "tokens", "read " TOK_R "\nadmin " TOK_W "\n", tokens, sizeof(tokens));
    kill(s.pid, SIGHUP);
    /* The reload is refused: TOK_R does not come back, TOK_R2 stays. */
    {
        unsigned polls = 0;
        while (!file_has(log, "the tokens in force stay"))
            tu_waiting(&polls, "the refused reload logged");
    }
    ck_assert(file_has(log, "line 2"));
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps", NULL, NULL, TOK_R2), 200);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps", NULL, NULL, TOK_R), 401);
    it_stop(&s);
    ck_assert(!file_has(log, TOK_R) && !file_has(log, TOK_R2) && !file_has(log, TOK_W));
    rm_rf(dir);
    free(dir);
}
END_TEST

/* The unauthorized error and then the close frame (1008) a stream whose
 * token a reload took away gets, in that order, whatever it sends. */
static void expect_revoked(int fd) {
    int op;
    char *data;
    size_t len;
    cJSON *j;
    ck_assert_int_eq(wsc_recv(fd, &op, &data, &len), 0);
    ck_assert_int_eq(op, 1);
    j = cJSON_Parse(data);
    ck_assert_ptr_nonnull(j);
    ck_assert_msg(it_get(j, "error.code") && strcmp(it_str(j, "error.code"), "unauthorized") == 0,
                  "%s", data);
    cJSON_Delete(j);
    free(data);
    ck_assert_int_eq(wsc_recv(fd, &op, &data, &len), 0);
    ck_assert_int_eq(op, 8);
    ck_assert_int_eq(((unsigned char)data[0] << 8) | (unsigned char)data[1], 1008);
    free(data);
}

/* A reload that removes a token, or cuts it from write to read, takes
 * every right from the streams it opened: a multiplexed stream can no
 * longer read or create, a session stream no longer update; each gets
 * unauthorized and close 1008. A stream of a token that stays keeps
 * working. Before, HTTP calls got 401 at once but the open /v1/stream
 * still read its session (200) and created new ones (201). */
START_TEST(guard_sighup_revokes_streams) {
    char *dir = temp_dir(), tokens[600], sid[80], msg[400], path[200];
    hc_server s;
    int st, r1, r2, w, ss;
    write_file(dir, "tokens", "read " TOK_R "\nread " TOK_R2 "\nwrite " TOK_W "\n", tokens,
               sizeof(tokens));
    s = it_start(ARGS("--auth-token-file", tokens));
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/room", "application/json", room_json, TOK_W),
                     201);
    ck_assert_int_ge(r1 = wsc_connect_auth(s.port, "/v1/stream", TOK_R, &st, NULL, 0), 0);
    ck_assert_int_ge(r2 = wsc_connect_auth(s.port, "/v1/stream", TOK_R2, &st, NULL, 0), 0);
    ck_assert_int_ge(w = wsc_connect_auth(s.port, "/v1/stream", TOK_W, &st, NULL, 0), 0);
    ck_assert_int_eq(mux_call(r1,
                              "{\"op\":\"create\",\"map\":\"room\",\"create\":{\"start\":[0,0],"
                              "\"goal\":[9,0]}}",
                              sid, sizeof(sid)),
                     201);
    snprintf(path, sizeof(path), "/v1/maps/room/sessions/%s/stream", sid);
    ck_assert_int_ge(ss = wsc_connect_auth(s.port, path, TOK_R, &st, NULL, 0), 0);
    snprintf(msg, sizeof(msg), "{\"op\":\"get\",\"map\":\"room\",\"session\":\"%s\"}", sid);
    ck_assert_int_eq(mux_call(r1, msg, NULL, 0), 200);
    ck_assert_int_eq(mux_call(w, msg, NULL, 0), 200);

    /* TOK_R goes, TOK_W becomes a read token, TOK_R2 stays. */
    write_file(dir, "tokens", "read " TOK_R2 "\nread " TOK_W "\n", tokens, sizeof(tokens));
    kill(s.pid, SIGHUP);
    ck_assert(wait_for(&s, TOK_R, 401));
    ck_assert_int_eq(wsc_send(r1, 1, msg, strlen(msg)), 0);
    expect_revoked(r1);
    ck_assert_int_eq(wsc_send(w, 1, msg, strlen(msg)), 0);
    expect_revoked(w);
    ck_assert_int_eq(wsc_send(ss, 1, "{\"position\":[1,0]}", 18), 0);
    expect_revoked(ss);
    /* The stream of the token that stays: answered (the session is
     * TOK_R's: 404 to another read token). */
    ck_assert_int_eq(mux_call(r2, msg, NULL, 0), 404);
    ck_assert_int_eq(mux_call(r2,
                              "{\"op\":\"create\",\"map\":\"room\",\"create\":{\"start\":[0,0],"
                              "\"goal\":[9,0]}}",
                              NULL, 0),
                     201);
    {
        hc_resp r = req(&s, "GET", "/v1/info", NULL, NULL, TOK_R2, NULL);
        cJSON *j = json_of(&r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_int_eq((int)it_num(j, "stream_closes.token_revoked"), 3);
        cJSON_Delete(j);
        hc_free(&r);
    }
    wsc_close(r1);
    wsc_close(r2);
    wsc_close(w);
    wsc_close(ss);
    it_stop(&s);
    rm_rf(dir);
    free(dir);
}
END_TEST

START_TEST(guard_open_metrics_flag) {
    char *dir = temp_dir(), tokens[600];
    hc_server s;
    write_file(dir, "tokens", "read " TOK_R "\n", tokens, sizeof(tokens));
    s = it_start(ARGS("--auth-token-file", tokens, "--open-metrics"));
    ck_assert_int_eq(status_of(&s, "GET", "/metrics", NULL, NULL, NULL), 200);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/info", NULL, NULL, NULL), 200);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps", NULL, NULL, NULL), 401);
    {
        hc_resp r = req(&s, "GET", "/metrics", NULL, NULL, NULL, NULL);
        ck_assert(strstr(r.body, "pathd_auth_tokens{scope=\"read\"} 1"));
        ck_assert(strstr(r.body, "pathd_requests_total{route=\"maps_list\",status=\"401\"} 1"));
        hc_free(&r);
    }
    it_stop(&s);
    rm_rf(dir);
    free(dir);
}
END_TEST

/* Without tokens only loopback is served; another address needs
 * --insecure-no-auth (and the start-up line says so); tokens and
 * --insecure-no-auth contradict; a bad token file stops the start. */
START_TEST(guard_safe_defaults) {
    char *dir = temp_dir(), tokens[600], err[2048];
    hc_server s;
    ck_assert_int_eq(run_pathd(ARGS("--bind", "0.0.0.0"), err, sizeof(err)), 2);
    ck_assert_msg(strstr(err, "--insecure-no-auth") && strstr(err, "--auth-token-file"), "%s", err);
    ck_assert_int_eq(run_pathd(ARGS("--bind", "10.1.2.3"), err, sizeof(err)), 2);
    write_file(dir, "tokens", "write " TOK_W "\n", tokens, sizeof(tokens));
    ck_assert_int_eq(
        run_pathd(ARGS("--auth-token-file", tokens, "--insecure-no-auth"), err, sizeof(err)), 2);
    ck_assert(strstr(err, "contradict"));
    ck_assert_int_eq(run_pathd(ARGS("--tls-cert", tokens), err, sizeof(err)), 2);
    write_file(dir, "bad", "write short\n", tokens, sizeof(tokens));
    ck_assert_int_eq(run_pathd(ARGS("--auth-token-file", tokens), err, sizeof(err)), 1);
    ck_assert_msg(strstr(err, "line 1") && !strstr(err, "short\n"), "%s", err);
    snprintf(tokens, sizeof(tokens), "%s/missing", dir);
    ck_assert_int_eq(run_pathd(ARGS("--auth-token-file", tokens), err, sizeof(err)), 1);
    ck_assert(strstr(err, "No such file"));

    s = it_start(ARGS("--bind", "0.0.0.0", "--insecure-no-auth"));
    ck_assert_msg(strstr(s.banner, "NO AUTH (--insecure-no-auth"), "%s", s.banner);
    ck_assert_int_eq(status_of(&s, "GET", "/v1/maps", NULL, NULL, NULL), 200);
    it_stop(&s);
    s = it_start(ARGS("--workers", "1"));
    ck_assert_msg(strstr(s.banner, "NO AUTH (loopback only)"), "%s", s.banner);
    it_stop(&s);
    rm_rf(dir);
    free(dir);
}
END_TEST

static int status_with_host(const hc_server *s, const char *path, const char *host) {
    char raw[512];
    hc_resp r;
    int st;
    snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path,
             host);
    ck_assert_int_eq(hc_raw(s->port, raw, strlen(raw), &r), 0);
    st = r.status;
    if (st == 421) {
        cJSON *j = json_of(&r);
        ck_assert_str_eq(it_str(j, "error.code"), "host_not_allowed");
        cJSON_Delete(j);
    }
    hc_free(&r);
    return st;
}

/* DNS rebinding: without tokens only loopback Host names are answered;
 * --allowed-hosts replaces that with its list; the probes answer any. */
START_TEST(guard_host_rule) {
    hc_server s = it_start(ARGS("--workers", "1"));
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "localhost"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "LOCALHOST:8080"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "dev.localhost"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "127.0.0.1:9"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "127.1.2.3"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "[::1]:80"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "rebind.attacker.example"), 421);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "127.0.0.1.attacker.example"), 421);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "localhost.attacker.example"), 421);
    ck_assert_int_eq(status_with_host(&s, "/nowhere", "attacker.example"), 421);
    ck_assert_int_eq(status_with_host(&s, "/healthz", "attacker.example"), 200);
    ck_assert_int_eq(status_with_host(&s, "/readyz", "attacker.example"), 200);
    it_stop(&s);

    s = it_start(ARGS("--allowed-hosts", "pathd.internal, .fleet.example"));
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "pathd.internal:8080"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "PATHD.INTERNAL"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "fleet.example"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "eu1.fleet.example"), 200);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "notfleet.example"), 421);
    ck_assert_int_eq(status_with_host(&s, "/v1/maps", "localhost"), 421);
    it_stop(&s);
}
END_TEST

/* What a web page can do: nothing cross-site. Writes must declare a
 * Content-Type a form cannot send; text/plain needs a token; no CORS
 * headers without --cors-origin, and with it only for the origins named. */
START_TEST(guard_browser_rules) {
    hc_server s = it_start(ARGS("--workers", "1"));
    hc_resp r;
    char buf[256];
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/room", "application/json", room_json, NULL),
                     201);
    r = req(&s, "PUT", "/v1/maps/t", "text/plain", room_text, NULL, NULL);
    expect_error(&r, 415, "unsupported_media_type");
    ck_assert(strstr(r.body, "text/x-movingai-map"));
    hc_free(&r);
    ck_assert_int_eq(
        status_of(&s, "PUT", "/v1/maps/t", "text/plain; charset=utf-8", room_text, NULL), 415);
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/t", NULL, room_text, NULL), 415);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps", NULL, room_json, NULL), 415);
    ck_assert_int_eq(
        status_of(&s, "PUT", "/v1/maps/t", "application/x-www-form-urlencoded", "a=b", NULL), 415);
    ck_assert_int_eq(
        status_of(&s, "PUT", "/v1/maps/t", "multipart/form-data; boundary=x", "--x", NULL), 415);
    ck_assert_int_eq(status_of(&s, "PATCH", "/v1/maps/room", NULL,
                               "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":3}]}", NULL),
                     415);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/room/sessions", NULL,
                               "{\"start\":[0,0],\"goal\":[9,0]}", NULL),
                     415);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/room/sessions", "text/plain",
                               "{\"start\":[0,0],\"goal\":[9,0]}", NULL),
                     415);
    ck_assert_int_eq(status_of(&s, "PUT", "/v1/maps/t", "text/x-movingai-map", room_text, NULL),
                     201);
    /* A path query changes nothing: no Content-Type is fine. */
    ck_assert_int_eq(
        status_of(&s, "POST", "/v1/maps/room/path", NULL, "{\"start\":[0,0],\"goal\":[9,0]}", NULL),
        200);
    /* Generating a map is a write: JSON only. Flow fields and tables
     * (newer than the path queries' exception) declare JSON too. */
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/generate", NULL,
                               "{\"type\":\"maze\",\"width\":21,\"height\":21}", NULL),
                     415);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/generate", "text/plain",
                               "{\"type\":\"maze\",\"width\":21,\"height\":21}", NULL),
                     415);
    ck_assert_int_eq(status_of(&s, "POST", "/v1/maps/generate", "application/x-www-form-urlencoded",
                               "type=maze", NULL),
                     415);
    ck_assert_int_eq(
        status_of(&s, "POST", "/v1/maps/room/flowfield", NULL, "{\"goal\":[9,0]}", NULL), 415);
    ck_assert_int_eq(
        status_of(&s, "POST", "/v1/maps/room/table", "text/plain", "{\"sources\":[[0,0]]}", NULL),
        415);
    /* No CORS at all without --cors-origin. */
    r = req(&s, "GET", "/v1/maps", NULL, NULL, NULL, "Origin: https://tool.example\r\n");
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_null(hc_header(&r, "Access-Control-Allow-Origin", buf, sizeof(buf)));
    hc_free(&r);
    r = req(&s, "OPTIONS", "/v1/maps/room", NULL, NULL, NULL,
            "Origin: https://tool.example\r\nAccess-Control-Request-Method: PUT\r\n");
    ck_assert_int_eq(r.status, 405);
    ck_assert_ptr_null(hc_header(&r, "Access-Control-Allow-Origin", buf, sizeof(buf)));
    hc_free(&r);
    it_stop(&s);

    s = it_start(ARGS("--cors-origin", "https://tool.example, http://localhost:3000"));
    r = req(&s, "GET", "/v1/maps", NULL, NULL, NULL, "Origin: https://tool.example\r\n");
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(hc_header(&r, "Access-Control-Allow-Origin", buf, sizeof(buf)),
                     "https://tool.example");
    ck_assert_str_eq(hc_header(&r, "Vary", buf, sizeof(buf)), "Origin");
    hc_free(&r);
    r = req(&s, "GET", "/v1/maps/none", NULL, NULL, NULL, "Origin: http://localhost:3000\r\n");
    ck_assert_int_eq(r.status, 404); /* errors are readable too */
    ck_assert_str_eq(hc_header(&r, "Access-Control-Allow-Origin", buf, sizeof(buf)),
                     "http://localhost:3000");
    hc_free(&r);
    r = req(&s, "GET", "/v1/maps", NULL, NULL, NULL, "Origin: https://evil.example\r\n");
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_null(hc_header(&r, "Access-Control-Allow-Origin", buf, sizeof(buf)));
    hc_free(&r);
    r = req(&s, "OPTIONS", "/v1/maps/room", NULL, NULL, NULL,
            "Origin: https://tool.example\r\nAccess-Control-Request-Method: PUT\r\n"
            "Access-Control-Request-Headers: content-type, authorization\r\n");
    ck_assert_int_eq(r.status, 204);
    ck_assert_str_eq(hc_header(&r, "Access-Control-Allow-Origin", buf, sizeof(buf)),
                     "https://tool.example");
    ck_assert(strstr(hc_header(&r, "Access-Control-Allow-Methods", buf, sizeof(buf)), "PUT"));
    ck_assert(
        strstr(hc_header(&r, "Access-Control-Allow-Headers", buf, sizeof(buf)), "Authorization"));
    hc_free(&r);
    r = req(&s, "OPTIONS", "/v1/maps/room", NULL, NULL, NULL,
            "Origin: https://evil.example\r\nAccess-Control-Request-Method: PUT\r\n");
    ck_assert_int_eq(r.status, 405);
    ck_assert_ptr_null(hc_header(&r, "Access-Control-Allow-Origin", buf, sizeof(buf)));
    hc_free(&r);
    it_stop(&s);
}
END_TEST

/* Runs curl with args; returns its exit status, stdout in out. */
static int curl(const char *args, char *out, size_t cap) {
    char cmd[2048];
    FILE *p;
    size_t n;
    int rc;
    snprintf(cmd, sizeof(cmd), "curl -sS --max-time 10 %s 2>&1", args);
    ck_assert_ptr_nonnull(p = popen(cmd, "r"));
    n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    rc = pclose(p);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A session stream over the same TLS (wss://), with the npm ws client
 * trusting the test certificate; a stream without a token is refused. */
static void wss_stream(const hc_server *s, const char *cert) {
    char args[2048], out[8192], loc[200], cmd[4096];
    struct stat st;
    FILE *p;
    size_t n;
    int rc;
    if (system("node --version >/dev/null 2>&1") != 0 || stat("tests/js/node_modules/ws", &st) != 0)
        TU_SKIP_UNLESS_CI("node or tests/js/node_modules missing (make test installs them with "
                          "npm ci --prefix tests/js)");
    snprintf(args, sizeof(args),
             "--cacert '%s' -i -X POST -H 'Authorization: Bearer %s' -H 'Content-Type: "
             "application/json' -d '{\"start\":[0,0],\"goal\":[9,0]}' "
             "https://localhost:%u/v1/maps/room/sessions",
             cert, TOK_R, (unsigned)s->port);
    ck_assert_int_eq(curl(args, out, sizeof(out)), 0);
    {
        const char *l = strstr(out, "Location: ");
        ck_assert_msg(l, "%s", out);
        sscanf(l + 10, "%199s", loc);
    }
    /* 127.0.0.1, not localhost: on a stock Debian /etc/hosts names ::1
     * localhost too, Node 17+ tries the first address the resolver gives
     * (::1) without falling back, and pathd listens on 127.0.0.1 (the
     * certificate names both). */
    for (int with_token = 1; with_token >= 0; with_token--) {
        snprintf(cmd, sizeof(cmd),
                 "NODE_EXTRA_CA_CERTS='%s' %s%s node tests/js/ws_client.js "
                 "'wss://127.0.0.1:%u%s/stream' '{\"position\":[1,0]}' 2>&1",
                 cert, with_token ? "PATHD_TOKEN=" : "", with_token ? TOK_R : "", (unsigned)s->port,
                 loc);
        ck_assert_ptr_nonnull(p = popen(cmd, "r"));
        n = fread(out, 1, sizeof(out) - 1, p);
        out[n] = '\0';
        rc = pclose(p);
        if (with_token)
            ck_assert_msg(rc == 0 && strstr(out, "\"found\":true") && strstr(out, "closed 1000"),
                          "wss: %s", out);
        else
            ck_assert_msg(rc != 0 && strstr(out, "401"), "wss without a token: %s", out);
    }
}

/* HTTPS through libmicrohttpd's GnuTLS: curl trusts the test's certificate
 * and gets the same answers as over HTTP, tokens included; without the
 * certificate it refuses; plain HTTP to the port gets no HTTP answer. */
START_TEST(guard_tls_with_curl) {
    char *dir, cert[600], key[600], tokens[600], args[2048], out[8192];
    hc_server s;
    hc_start_opts o = {NULL, true};
    if (!tc_have_tool("openssl") || !tc_have_tool("curl"))
        TU_SKIP_UNLESS_CI("openssl or curl not found (make test installs them)");
    dir = temp_dir();
    ck_assert_int_eq(tc_make_cert(dir, "localhost", cert, key, sizeof(cert)), 0);
    write_file(dir, "tokens", "read " TOK_R "\nwrite " TOK_W "\n", tokens, sizeof(tokens));
    ck_assert_int_eq(
        hc_server_start_ex(
            &s, ARGS("--tls-cert", cert, "--tls-key", key, "--auth-token-file", tokens), &o),
        0);
    ck_assert_msg(strstr(s.banner, "(https,"), "%s", s.banner);
    /* Ready when /readyz says so over HTTPS. */
    for (unsigned polls = 0;;) {
        snprintf(args, sizeof(args), "--cacert '%s' https://localhost:%u/readyz", cert,
                 (unsigned)s.port);
        if (curl(args, out, sizeof(out)) == 0 && strstr(out, "\"ready\"")) break;
        tu_waiting(&polls, "HTTPS readiness");
    }
    snprintf(args, sizeof(args), "--cacert '%s' https://127.0.0.1:%u/healthz", cert,
             (unsigned)s.port);
    ck_assert_int_eq(curl(args, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "{\"status\":\"ok\"}");
    /* Not trusted without the certificate (curl: 60, peer certificate). */
    snprintf(args, sizeof(args), "https://localhost:%u/healthz", (unsigned)s.port);
    ck_assert_int_eq(curl(args, out, sizeof(out)), 60);
    /* TLS 1.1 is refused (curl: 35, handshake). */
    snprintf(args, sizeof(args),
             "--cacert '%s' --tlsv1.1 --tls-max 1.1 https://localhost:%u/healthz", cert,
             (unsigned)s.port);
    ck_assert_int_ne(curl(args, out, sizeof(out)), 0);
    /* Plain HTTP to a TLS port: no HTTP answer. */
    snprintf(args, sizeof(args), "http://127.0.0.1:%u/healthz", (unsigned)s.port);
    ck_assert_int_ne(curl(args, out, sizeof(out)), 0);
    /* Tokens over TLS: upload with write, read with read, 401 without. */
    snprintf(args, sizeof(args),
             "--cacert '%s' -o /dev/null -w '%%{http_code}' -X PUT -H 'Authorization: Bearer "
             "%s' -H 'Content-Type: application/json' --data-binary '%s' "
             "https://localhost:%u/v1/maps/room",
             cert, TOK_W, room_json, (unsigned)s.port);
    ck_assert_int_eq(curl(args, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "201");
    snprintf(args, sizeof(args),
             "--cacert '%s' -H 'Authorization: Bearer %s' "
             "'https://localhost:%u/v1/maps/room/path?start=0,0&goal=9,0'",
             cert, TOK_R, (unsigned)s.port);
    ck_assert_int_eq(curl(args, out, sizeof(out)), 0);
    ck_assert_msg(strstr(out, "\"found\":true"), "%s", out);
    snprintf(args, sizeof(args),
             "--cacert '%s' -o /dev/null -w '%%{http_code}' https://localhost:%u/v1/maps", cert,
             (unsigned)s.port);
    ck_assert_int_eq(curl(args, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "401");
    wss_stream(&s, cert);
    it_stop(&s);

    /* A key that is not the certificate's: pathd says so and exits 1. */
    {
        char err[2048], other[600], okey[600];
        snprintf(other, sizeof(other), "%s/other", dir);
        ck_assert_int_eq(mkdir(other, 0700), 0);
        ck_assert_int_eq(tc_make_cert(other, "localhost", args, okey, sizeof(okey)), 0);
        ck_assert_int_eq(run_pathd(ARGS("--tls-cert", cert, "--tls-key", okey), err, sizeof(err)),
                         1);
        ck_assert_msg(strstr(err, "TLS"), "%s", err);
        ck_assert_int_eq(run_pathd(ARGS("--tls-cert", cert, "--tls-key", tokens), err, sizeof(err)),
                         1);
    }
    rm_rf(dir);
    free(dir);
}
END_TEST

/* The settings' checks and the guard's matching, without a server. */
START_TEST(guard_settings_and_matching) {
    static const char *const loop[] = {"127.0.0.1", "127.255.0.9", "127.1.2.3"};
    static const char *const notloop[] = {"0.0.0.0",       "10.0.0.1", " 127.0.0.1",  "127.0.0.1 ",
                                          "+127.0.0.1",    "127.0.0",  "127.0.0.256", "127.0.0.1.5",
                                          "127.00001.0.1", "",         "localhost"};
    pf_config c;
    pf_guard *g;
    char err[512];
    for (size_t i = 0; i < sizeof(loop) / sizeof(loop[0]); i++)
        ck_assert_msg(pf_config_is_loopback(loop[i]), "%s", loop[i]);
    for (size_t i = 0; i < sizeof(notloop) / sizeof(notloop[0]); i++)
        ck_assert_msg(!pf_config_is_loopback(notloop[i]), "'%s'", notloop[i]);

    pf_config_defaults(&c);
    ck_assert_int_eq(pf_config_check(&c, err, sizeof(err)), PF_OK);
    snprintf(c.cors_origin, sizeof(c.cors_origin), "https://a.example:8443, http://[::1]:3000, *");
    snprintf(c.allowed_hosts, sizeof(c.allowed_hosts), "pathd.internal,.fleet.example,10.0.0.7");
    ck_assert_int_eq(pf_config_check(&c, err, sizeof(err)), PF_OK);
    snprintf(c.cors_origin, sizeof(c.cors_origin), "https://a.example/path");
    ck_assert_int_eq(pf_config_check(&c, err, sizeof(err)), PF_EINVAL);
    snprintf(c.cors_origin, sizeof(c.cors_origin), "a.example");
    ck_assert_int_eq(pf_config_check(&c, err, sizeof(err)), PF_EINVAL);
    c.cors_origin[0] = '\0';
    snprintf(c.allowed_hosts, sizeof(c.allowed_hosts), "pathd.internal:8080");
    ck_assert_int_eq(pf_config_check(&c, err, sizeof(err)), PF_EINVAL);
    ck_assert(strstr(err, "--allowed-hosts"));
    c.allowed_hosts[0] = '\0';
    snprintf(c.tls_key, sizeof(c.tls_key), "k.pem");
    ck_assert_int_eq(pf_config_check(&c, err, sizeof(err)), PF_EINVAL);

    pf_config_defaults(&c);
    ck_assert_int_eq(pf_guard_create(&c, &g, err, sizeof(err)), PF_OK);
    ck_assert(!pf_guard_has_tokens(g) && !pf_guard_cors_enabled(g));
    ck_assert_str_eq(pf_guard_host_rule(g), "loopback");
    ck_assert(pf_guard_host_allowed(g, NULL)); /* HTTP/1.0 without Host */
    ck_assert(pf_guard_host_allowed(g, "localhost."));
    ck_assert(!pf_guard_host_allowed(g, "\t127.0.0.1"));
    ck_assert(!pf_guard_host_allowed(g, "localhost:80@evil"));
    ck_assert_int_eq(pf_guard_need(g, PF_ROUTE_MAP_PUT), PF_SCOPE_OPEN); /* no tokens */
    pf_guard_destroy(g);
    snprintf(c.cors_origin, sizeof(c.cors_origin), "https://tool.example");
    c.insecure_no_auth = true;
    ck_assert_int_eq(pf_guard_create(&c, &g, err, sizeof(err)), PF_OK);
    ck_assert_str_eq(pf_guard_host_rule(g), "any");
    ck_assert(pf_guard_cors_allowed(g, "https://TOOL.example"));
    ck_assert(!pf_guard_cors_allowed(g, "https://tool.example.evil"));
    ck_assert(!pf_guard_cors_allowed(g, "null"));
    ck_assert(!pf_guard_cors_allowed(g, NULL));
    pf_guard_destroy(g);
}
END_TEST

TU_SUITE(guard) {
    Suite *s = suite_create("guard");
    TCase *tc = tcase_create("guard");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, guard_settings_and_matching);
    tcase_add_test(tc, guard_scopes_and_answers);
    tcase_add_test(tc, guard_sessions_of_ones_own);
    tcase_add_test(tc, guard_crowds_of_ones_own);
    tcase_add_test(tc, guard_mux_stream_owners);
    tcase_add_test(tc, guard_sighup_revokes_streams);
    tcase_add_test(tc, guard_sighup_reloads_tokens);
    tcase_add_test(tc, guard_open_metrics_flag);
    tcase_add_test(tc, guard_safe_defaults);
    tcase_add_test(tc, guard_host_rule);
    tcase_add_test(tc, guard_browser_rules);
    tcase_add_test(tc, guard_tls_with_curl);
    suite_add_tcase(s, tc);
    return s;
}
