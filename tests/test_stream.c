/* test_stream.c -- server/stream*.c: WebSocket session streams, spoken to by a raw C client
 * (tests/wsc.c) and the npm `ws` package (tests/js/ws_client.js), and their limits: the
 * outbound cap for a peer that does not read, the idle timeout, streams closed when their
 * session ends, the close handshake of RFC 6455 section 7, and the stream limit that leaves
 * plain HTTP its connections. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "testutil.h"
#include "wsc.h"

/* Runs `node tests/js/ws_client.js url msgs...`, returns its stdout. */
static char *run_node(const char *url, const char *const *msgs, int *exit_status) {
    char cmd[4096];
    size_t n = 0, cap = 65536;
    char *out = malloc(cap);
    FILE *p;
    n = (size_t)snprintf(cmd, sizeof(cmd), "node tests/js/ws_client.js '%s'", url);
    for (; *msgs; msgs++) n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", *msgs);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    *exit_status = pclose(p);
    return out;
}

START_TEST(stream_raw_client) {
    hc_server s = it_start(ARGS("--workers", "2", "--ws-max-message", "4096"));
    char url[160], path[200], body[512];
    int fd, status, op;
    char *msg;
    size_t len;
    cJSON *j;
    it_put_door_map(&s, "d");
    cJSON_Delete(it_session_create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url)));
    snprintf(path, sizeof(path), "%s/stream", url);

    /* Not a handshake: 426; unknown session: 404. */
    it_call_error(&s, "GET", path, NULL, NULL, 426, "upgrade_required", NULL);
    ck_assert_int_eq(
        wsc_connect(s.port, "/v1/maps/d/sessions/nosuch/stream", &status, body, sizeof(body)), -1);
    ck_assert_int_eq(status, 404);
    ck_assert_ptr_nonnull(strstr(body, "session_not_found"));

    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake failed: %d", status);
    /* An update: the answer is the HTTP answer's JSON. */
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[1,3]}", 18), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 1);
    j = it_json_text(msg);
    ck_assert(it_truth(j, "found"));
    it_path_ends(j, 1, 3, 9, 3);
    ck_assert_int_eq((int)it_num(j, "stats.updates"), 1);
    cJSON_Delete(j);
    free(msg);
    /* Two messages in one write: two answers, in order. */
    {
        const char *m1 = "{\"doors\":[{\"id\":\"gate\",\"open\":false}]}";
        const char *m2 = "{\"doors\":[{\"id\":\"hatch\",\"open\":true}]}";
        ck_assert_int_eq(wsc_send(fd, 1, m1, strlen(m1)), 0);
        ck_assert_int_eq(wsc_send(fd, 1, m2, strlen(m2)), 0);
        ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
        j = it_json_text(msg);
        ck_assert(!it_truth(j, "found"));
        cJSON_Delete(j);
        free(msg);
        ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
        j = it_json_text(msg);
        ck_assert(it_truth(j, "found") && it_path_has(j, 4, 0));
        cJSON_Delete(j);
        free(msg);
    }
    /* A bad update: the error body, and the stream goes on. */
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[4,1]}", 18), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    j = it_json_text(msg);
    ck_assert_str_eq(it_str(j, "error.code"), "blocked");
    ck_assert_str_eq(it_str(j, "error.field"), "position");
    cJSON_Delete(j);
    free(msg);
    ck_assert_int_eq(wsc_send(fd, 1, "not json", 8), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_ptr_nonnull(strstr(msg, "malformed_json"));
    free(msg);
    /* Ping -> pong with the same payload. */
    ck_assert_int_eq(wsc_send(fd, 9, "abc", 3), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 10);
    ck_assert_str_eq(msg, "abc");
    free(msg);
    /* The HTTP side sees what the stream did. */
    j = it_call(&s, "GET", url, NULL, NULL, 200);
    ck_assert(it_truth(j, "found") && it_path_has(j, 4, 0));
    cJSON_Delete(j);
    /* Close handshake: the code comes back. */
    ck_assert_int_eq(wsc_send(fd, 8, "\x03\xe8", 2), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 8);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(((unsigned char)msg[0] << 8) | (unsigned char)msg[1], 1000);
    free(msg);
    wsc_close(fd);

    /* A message past ws_max_message: close 1009. */
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert(fd >= 0);
    {
        char *big = malloc(8192);
        memset(big, ' ', 8192);
        ck_assert_int_eq(wsc_send(fd, 1, big, 8192), 0);
        free(big);
    }
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 8);
    ck_assert_int_eq(((unsigned char)msg[0] << 8) | (unsigned char)msg[1], 1009);
    free(msg);
    wsc_close(fd);

    /* A text message that is not UTF-8: close 1007 (RFC 6455 8.1); a new
     * stream works. */
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert(fd >= 0);
    {
        const char *bad = "{\"doors\":[{\"id\":\"g\xc3\x28te\",\"open\":false}]}";
        ck_assert_int_eq(wsc_send(fd, 1, bad, strlen(bad)), 0);
        ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
        ck_assert_int_eq(op, 8);
        ck_assert_int_eq(((unsigned char)msg[0] << 8) | (unsigned char)msg[1], 1007);
        free(msg);
        wsc_close(fd);
    }
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert(fd >= 0);
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[1,3]}", 18), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 1);
    free(msg);
    wsc_close(fd);

    /* A stream open at SIGTERM is closed with 1001 and the server exits 0. */
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert(fd >= 0);
    kill(s.pid, SIGTERM);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 8);
    ck_assert_int_eq(((unsigned char)msg[0] << 8) | (unsigned char)msg[1], 1001);
    free(msg);
    wsc_close(fd);
    it_stop(&s);
}
END_TEST

START_TEST(stream_npm_ws_client) {
    hc_server s;
    struct stat st;
    char url[160], wsurl[256], *out, *line, *save;
    int rc, lines = 0;
    static const char *const msgs[] = {"{\"position\":[1,3]}",
                                       "{\"cells\":[{\"x\":99,\"y\":0,\"cost\":0}]}",
                                       "{\"doors\":[{\"id\":\"gate\",\"open\":false}]}", NULL};
    if (system("node --version >/dev/null 2>&1") != 0 ||
        stat("tests/js/node_modules/ws", &st) != 0) {
        TU_SKIP_UNLESS_CI("node or tests/js/node_modules missing (make test installs them with "
                          "npm ci --prefix tests/js)");
    }
    s = it_start(ARGS("--workers", "2"));
    it_put_door_map(&s, "d");
    cJSON_Delete(it_session_create(&s, "d", 0, 3, 9, 3, NULL, url, sizeof(url)));
    snprintf(wsurl, sizeof(wsurl), "ws://127.0.0.1:%u%s/stream", (unsigned)s.port, url);
    out = run_node(wsurl, msgs, &rc);
    ck_assert_msg(rc == 0, "ws_client.js failed (%d): %s", rc, out);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++) {
        cJSON *j;
        switch (lines) {
        case 0:
            j = it_json_text(line);
            ck_assert(it_truth(j, "found"));
            it_path_ends(j, 1, 3, 9, 3);
            cJSON_Delete(j);
            break;
        case 1:
            j = it_json_text(line);
            ck_assert_str_eq(it_str(j, "error.code"), "off_map");
            cJSON_Delete(j);
            break;
        case 2:
            j = it_json_text(line);
            ck_assert(!it_truth(j, "found"));
            cJSON_Delete(j);
            break;
        case 3:
            ck_assert_str_eq(line, "pong hello");
            break;
        case 4:
            ck_assert_str_eq(line, "closed 1000");
            break;
        default:
            ck_abort_msg("unexpected line %s", line);
        }
    }
    ck_assert_int_eq(lines, 5);
    free(out);
    it_stop(&s);
}
END_TEST

/* Reads text messages until one satisfies pred (at most 200); returns it
 * parsed, NULL on EOF. Frames in between are counted in *skipped. */
static cJSON *recv_until(int fd, bool (*pred)(const cJSON *j), int *skipped) {
    for (int i = 0; i < 200; i++) {
        int op;
        char *msg;
        size_t len;
        cJSON *j;
        if (wsc_recv(fd, &op, &msg, &len)) return NULL;
        if (op != 1) {
            free(msg);
            continue;
        }
        j = it_json_text(msg);
        free(msg);
        if (pred(j)) return j;
        cJSON_Delete(j);
        if (skipped) (*skipped)++;
    }
    return NULL;
}

static bool has_added(const cJSON *j) { return it_get(j, "added") != NULL; }
static bool is_error(const cJSON *j) { return it_get(j, "error") != NULL; }
static bool any(const cJSON *j) {
    (void)j;
    return true;
}

/* A navmesh session over a stream: updates with [x,y,z] points. */
START_TEST(stream_navmesh_session) {
    hc_server s = it_start(NULL);
    char url[200], path[240];
    int fd, status;
    cJSON *j;
    it_put_nav_open(&s, "n", 20, 8);
    {
        hc_resp r = it_req(&s, "POST", "/v1/maps/n/sessions", "application/json",
                           "{\"start\":[1.5,0,1.5],\"goal\":[18.5,0,6.5]}");
        ck_assert_int_eq(r.status, 201);
        ck_assert_ptr_nonnull(hc_header(&r, "Location", url, sizeof(url)));
        hc_free(&r);
    }
    snprintf(path, sizeof(path), "%s/stream", url);
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake: %d", status);
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[3.5,0,2.1]}", 24), 0);
    j = recv_until(fd, any, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert(it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "stats.rebase"), "none");
    cJSON_Delete(j);
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[3,1]}", 18), 0);
    j = recv_until(fd, any, NULL);
    ck_assert_str_eq(it_str(j, "error.field"), "position");
    cJSON_Delete(j);
    wsc_close(fd);
    it_stop(&s);
}
END_TEST

/* Reads answers until one with the given tag and returns it; others read
 * on the way are dropped, so use it only with nothing else outstanding. */
static cJSON *recv_tag(int fd, const char *tag) {
    for (int k = 0; k < 64; k++) {
        int op;
        char *data;
        size_t len;
        cJSON *j;
        ck_assert_msg(wsc_recv(fd, &op, &data, &len) == 0, "no answer tagged %s (%d read)", tag, k);
        ck_assert_int_eq(op, 1);
        j = cJSON_ParseWithLength(data, len);
        ck_assert_msg(j != NULL, "not JSON: %s", data);
        free(data);
        if (it_get(j, "tag") && cJSON_IsString(it_get(j, "tag")) &&
            strcmp(it_str(j, "tag"), tag) == 0)
            return j;
        cJSON_Delete(j);
    }
    ck_abort_msg("no answer tagged %s", tag);
    return NULL;
}

static cJSON *recv_one(int fd) {
    int op;
    char *data;
    size_t len;
    cJSON *j;
    ck_assert_int_eq(wsc_recv(fd, &op, &data, &len), 0);
    ck_assert_int_eq(op, 1);
    j = cJSON_ParseWithLength(data, len);
    ck_assert_msg(j != NULL, "not JSON: %s", data);
    free(data);
    return j;
}

static void send_text(int fd, const char *s) { ck_assert_int_eq(wsc_send(fd, 1, s, strlen(s)), 0); }

START_TEST(stream_mux) {
    hc_server s = it_start(
        ARGS("--workers", "2", "--stream-max-sessions", "3", "--stream-max-inflight", "2"));
    int status, fd;
    char *sid[3], msg[512], body[256];
    cJSON *j;
    it_put_map(&s, "u", "application/json", it_gap_map, 201);
    fd = wsc_connect(s.port, "/v1/stream", &status, body, sizeof(body));
    ck_assert_msg(fd >= 0 && status == 101, "status %d %s", status, body);
    /* Three creates in one write: answered 201 with their tags. */
    {
        const char *creates[3] = {
            "{\"op\":\"create\",\"map\":\"u\",\"tag\":\"c0\",\"create\":{\"start\":[0,0],"
            "\"goal\":[11,0]}}",
            "{\"op\":\"create\",\"map\":\"u\",\"tag\":\"c1\",\"create\":{\"start\":[0,4],"
            "\"goal\":[7,7]}}",
            "{\"op\":\"create\",\"map\":\"u\",\"tag\":\"c2\",\"create\":{\"start\":[1,1],"
            "\"goal\":[1,6]}}"};
        ck_assert_int_eq(wsc_send_texts(fd, creates, 3), 0);
        /* Different sessions: the answers may come in any order. */
        memset(sid, 0, sizeof(sid));
        for (int k = 0; k < 3; k++) {
            int i;
            j = recv_one(fd);
            ck_assert(strlen(it_str(j, "tag")) == 2 && it_str(j, "tag")[0] == 'c');
            i = it_str(j, "tag")[1] - '0';
            ck_assert(i >= 0 && i < 3 && !sid[i]);
            ck_assert_int_eq((int)it_num(j, "status"), 201);
            ck_assert_str_eq(it_str(j, "op"), "create");
            ck_assert(it_truth(j, "body.found"));
            sid[i] = strdup(it_str(j, "session"));
            ck_assert_str_eq(it_str(j, "body.session_id"), sid[i]);
            cJSON_Delete(j);
        }
    }
    /* Updates of one session come back in order; integer tags echo. */
    {
        const char *batch[4];
        char b[4][256];
        for (int k = 0; k < 4; k++) {
            snprintf(
                b[k], sizeof(b[k]),
                "{\"map\":\"u\",\"session\":\"%s\",\"tag\":%d,\"update\":{\"position\":[%d,0]}}",
                sid[0], k, k + 1);
            batch[k] = b[k];
        }
        ck_assert_int_eq(wsc_send_texts(fd, batch, 4), 0);
        for (int k = 0; k < 4; k++) {
            j = recv_one(fd);
            ck_assert_int_eq((int)it_num(j, "tag"), k);
            ck_assert_int_eq((int)it_num(j, "status"), 200);
            ck_assert_int_eq((int)it_num(j, "body.position.0"), k + 1);
            cJSON_Delete(j);
        }
    }
    /* Get and delete; then the session is gone. */
    snprintf(msg, sizeof(msg), "{\"op\":\"get\",\"map\":\"u\",\"session\":\"%s\",\"tag\":\"g\"}",
             sid[1]);
    send_text(fd, msg);
    j = recv_tag(fd, "g");
    ck_assert_int_eq((int)it_num(j, "status"), 200);
    ck_assert_int_eq((int)it_num(j, "body.goal.0"), 7);
    cJSON_Delete(j);
    snprintf(msg, sizeof(msg), "{\"op\":\"delete\",\"map\":\"u\",\"session\":\"%s\",\"tag\":\"d\"}",
             sid[1]);
    send_text(fd, msg);
    j = recv_tag(fd, "d");
    ck_assert_int_eq((int)it_num(j, "status"), 204);
    ck_assert_ptr_null(it_get(j, "body")); /* no body, as HTTP 204 */
    cJSON_Delete(j);
    snprintf(msg, sizeof(msg), "{\"op\":\"get\",\"map\":\"u\",\"session\":\"%s\",\"tag\":\"g2\"}",
             sid[1]);
    send_text(fd, msg);
    j = recv_tag(fd, "g2");
    ck_assert_int_eq((int)it_num(j, "status"), 404);
    ck_assert_str_eq(it_str(j, "body.error.code"), "session_not_found");
    cJSON_Delete(j);
    /* Errors: bad update (the session's own validation), malformed message,
     * unknown map, a bad id. */
    snprintf(msg, sizeof(msg),
             "{\"map\":\"u\",\"session\":\"%s\",\"tag\":\"e1\",\"update\":{\"position\":[0,3]}}",
             sid[2]);
    send_text(fd, msg);
    j = recv_tag(fd, "e1");
    ck_assert_int_eq((int)it_num(j, "status"), 422);
    ck_assert_str_eq(it_str(j, "body.error.code"), "blocked");
    cJSON_Delete(j);
    send_text(fd, "{\"map\":\"u\",\"update\":{}}");
    j = recv_one(fd);
    ck_assert_int_eq((int)it_num(j, "status"), 400);
    ck_assert_str_eq(it_str(j, "body.error.field"), "session");
    cJSON_Delete(j);
    send_text(fd, "{\"op\":\"create\",\"map\":\"nope\",\"tag\":\"e2\",\"create\":{\"start\":[0,0],"
                  "\"goal\":[1,1]}}");
    j = recv_tag(fd, "e2");
    ck_assert_int_eq((int)it_num(j, "status"), 404);
    cJSON_Delete(j);
    send_text(fd, "{\"op\":\"get\",\"map\":\"b/d\",\"session\":\"x\",\"tag\":\"e3\"}");
    j = recv_tag(fd, "e3");
    ck_assert_int_eq((int)it_num(j, "status"), 400);
    ck_assert_str_eq(it_str(j, "body.error.code"), "invalid_map_id");
    cJSON_Delete(j);
    send_text(fd, "{\"op\":\"fly\",\"map\":\"u\"}");
    j = recv_one(fd);
    ck_assert_str_eq(it_str(j, "body.error.field"), "op");
    cJSON_Delete(j);
    /* stream_max_sessions 3: a fourth session with messages outstanding at
     * once is refused (the frames arrive in one read, before any answer). */
    {
        const char *four[4];
        char b[4][200];
        int refused = 0, ok = 0;
        for (int k = 0; k < 4; k++) {
            snprintf(b[k], sizeof(b[k]),
                     "{\"op\":\"get\",\"map\":\"u\",\"session\":\"%s\",\"tag\":%d}",
                     k < 2 ? sid[k == 0 ? 0 : 2] : (k == 2 ? "aaaa" : "bbbb"), k);
            four[k] = b[k];
        }
        ck_assert_int_eq(wsc_send_texts(fd, four, 4), 0);
        for (int k = 0; k < 4; k++) {
            j = recv_one(fd);
            if ((int)it_num(j, "status") == 413) {
                refused++;
                ck_assert_int_eq((int)it_num(j, "tag"), 3);
            } else {
                ok++;
            }
            cJSON_Delete(j);
        }
        ck_assert_int_eq(refused, 1);
        ck_assert_int_eq(ok, 3);
    }
    /* Clean input, as on HTTP: \u0000 in a string is 400 (the stream
     * stays), a text message that is not UTF-8 closes it with 1007. */
    send_text(fd, "{\"op\":\"get\",\"map\":\"u\",\"session\":\"a\\u0000b\"}");
    j = recv_one(fd);
    ck_assert_int_eq((int)it_num(j, "status"), 400);
    ck_assert_str_eq(it_str(j, "body.error.code"), "invalid_request");
    cJSON_Delete(j);
    {
        int op;
        char *cm;
        size_t cl;
        send_text(fd, "{\"op\":\"get\",\"map\":\"u\",\"session\":\"g\xc3\x28te\"}");
        ck_assert_int_eq(wsc_recv(fd, &op, &cm, &cl), 0);
        ck_assert_int_eq(op, 8);
        ck_assert_uint_ge(cl, 2);
        ck_assert_int_eq(((unsigned char)cm[0] << 8) | (unsigned char)cm[1], 1007);
        free(cm);
    }
    wsc_close(fd);
    for (int i = 0; i < 3; i++) free(sid[i]);
    it_stop(&s);
}
END_TEST

/* A crowd stream: tick frames come by themselves, in order; a command is
 * answered (its answer has "added"); the map's deletion ends the stream
 * with crowd_not_found. */
START_TEST(stream_crowd) {
    hc_server s = it_start(NULL);
    char url[200], path[240];
    int fd, status, skipped = 0;
    double last_frame = -1;
    cJSON *j;
    it_put_nav_open(&s, "n", 20, 8);
    {
        hc_resp r =
            it_req(&s, "POST", "/v1/maps/n/crowds", "application/json",
                   "{\"tick_hz\":30,\"agents\":[{\"position\":[2,0,4],\"target\":[18,0,4]}]}");
        ck_assert_int_eq(r.status, 201);
        ck_assert_ptr_nonnull(hc_header(&r, "Location", url, sizeof(url)));
        hc_free(&r);
    }
    snprintf(path, sizeof(path), "%s/stream", url);
    it_call_error(&s, "GET", path, NULL, NULL, 426, "upgrade_required", NULL);
    ck_assert_int_eq(wsc_connect(s.port, "/v1/maps/n/crowds/nosuch/stream", &status, NULL, 0), -1);
    ck_assert_int_eq(status, 404);
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake: %d", status);
    for (int i = 0; i < 5; i++) {
        j = recv_until(fd, any, NULL);
        ck_assert_ptr_nonnull(j);
        ck_assert_double_gt(it_num(j, "frame"), last_frame);
        last_frame = it_num(j, "frame");
        cJSON_Delete(j);
    }
    {
        const char *cmd = "{\"add\":[{\"position\":[2,0,6],\"target\":[18,0,6]}]}";
        ck_assert_int_eq(wsc_send(fd, 1, cmd, strlen(cmd)), 0);
        j = recv_until(fd, has_added, &skipped);
        ck_assert_ptr_nonnull(j);
        ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "agents")), 2);
        cJSON_Delete(j);
        ck_assert_int_eq(wsc_send(fd, 1, "{\"remove\":[7]}", 14), 0);
        j = recv_until(fd, is_error, &skipped);
        ck_assert_str_eq(it_str(j, "error.field"), "remove[0]");
        cJSON_Delete(j);
    }
    ck_assert_ptr_null(it_call(&s, "DELETE", "/v1/maps/n", NULL, NULL, 204));
    j = recv_until(fd, is_error, &skipped);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(it_str(j, "error.code"), "crowd_not_found");
    cJSON_Delete(j);
    {
        int op;
        char *msg;
        size_t len;
        ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
        ck_assert_int_eq(op, 8); /* close */
        ck_assert_int_eq(((unsigned char)msg[0] << 8) | (unsigned char)msg[1], 1000);
        free(msg);
    }
    wsc_close(fd);
    it_stop(&s);
}
END_TEST

/* A crowd stream lives as long as its crowd: after two passes of the
 * once-a-second check (counted in /v1/info), a command on it is still
 * answered with the crowd's state, and no stream was closed as a gone
 * session. Before, the check looked the crowd up in the session table:
 * session_not_found and close 1000 within a second, while the crowd
 * answered 200 over HTTP. */
START_TEST(stream_crowd_outlives_reaper) {
    hc_server s = it_start(NULL);
    char url[200], path[240];
    int fd, status, skipped = 0;
    cJSON *j;
    double runs0;
    it_put_nav_open(&s, "n", 20, 8);
    {
        hc_resp r = it_req(&s, "POST", "/v1/maps/n/crowds", "application/json",
                           "{\"agents\":[{\"position\":[2,0,4],\"target\":[18,0,4]}]}");
        ck_assert_int_eq(r.status, 201);
        ck_assert_ptr_nonnull(hc_header(&r, "Location", url, sizeof(url)));
        hc_free(&r);
    }
    snprintf(path, sizeof(path), "%s/stream", url);
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake: %d", status);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    runs0 = it_num(j, "stream_reaper_runs");
    cJSON_Delete(j);
    for (;;) { /* two whole passes with the stream open */
        j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
        double runs = it_num(j, "stream_reaper_runs");
        cJSON_Delete(j);
        if (runs >= runs0 + 2) break;
        sched_yield();
    }
    ck_assert_int_eq(wsc_send(fd, 1, "{\"steps\":1}", 11), 0);
    j = recv_until(fd, any, &skipped);
    ck_assert_ptr_nonnull(j);
    ck_assert_msg(!it_get(j, "error"), "%s", it_str(j, "error.code"));
    ck_assert_str_eq(it_str(j, "crowd_id"), strrchr(url, '/') + 1);
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "stream_closes.session_gone"), 0);
    ck_assert_int_eq((int)it_num(j, "streams"), 1);
    cJSON_Delete(j);
    wsc_close(fd);
    it_stop(&s);
}
END_TEST

/* Many messages of a few sessions on one connection, side by side on the
 * pool: all answered, each session's in order. Regression: a job read its
 * message after handing it to the loop thread, which may already have
 * answered and freed it (a race ThreadSanitizer saw; ASan sees it when it
 * happens). */
START_TEST(stream_mux_many) {
    hc_server s = it_start(ARGS("--workers", "2", "--stream-max-inflight", "4"));
    enum { NS = 4, ROUNDS = 50 };
    int status, fd, last[NS];
    char *sid[NS], msg[256];
    it_put_map(&s, "u", "application/json", it_gap_map, 201);
    fd = wsc_connect(s.port, "/v1/stream", &status, NULL, 0);
    ck_assert(fd >= 0);
    for (int i = 0; i < NS; i++) {
        cJSON *j;
        snprintf(msg, sizeof(msg),
                 "{\"op\":\"create\",\"map\":\"u\",\"create\":{\"start\":[%d,0],\"goal\":"
                 "[0,7]}}",
                 i);
        send_text(fd, msg);
        j = recv_one(fd);
        ck_assert_int_eq((int)it_num(j, "status"), 201);
        sid[i] = strdup(it_str(j, "session"));
        last[i] = -1;
        cJSON_Delete(j);
    }
    for (int r = 0; r < ROUNDS; r++) {
        char b[NS][256];
        const char *batch[NS];
        for (int i = 0; i < NS; i++) {
            snprintf(b[i], sizeof(b[i]),
                     "{\"op\":\"get\",\"map\":\"u\",\"session\":\"%s\",\"tag\":%d}", sid[i],
                     r * NS + i);
            batch[i] = b[i];
        }
        ck_assert_int_eq(wsc_send_texts(fd, batch, NS), 0);
    }
    for (int k = 0; k < NS * ROUNDS; k++) {
        cJSON *j = recv_one(fd);
        int tag = (int)it_num(j, "tag"), i = tag % NS;
        ck_assert_int_eq((int)it_num(j, "status"), 200);
        ck_assert_str_eq(it_str(j, "session"), sid[i]);
        ck_assert_int_gt(tag, last[i]); /* one session's answers in order */
        last[i] = tag;
        cJSON_Delete(j);
    }
    wsc_close(fd);
    for (int i = 0; i < NS; i++) free(sid[i]);
    it_stop(&s);
}
END_TEST

/* Navmesh sessions on the multiplexed stream: create with [x,y,z], update,
 * get, list (GET .../sessions shows [x,y,z]), the wrong point form, delete. */
START_TEST(stream_mux_navmesh) {
    hc_server s = it_start(NULL);
    int status, fd;
    char msg[512], *sid;
    cJSON *j;
    it_put_nav_open(&s, "n", 20, 8);
    fd = wsc_connect(s.port, "/v1/stream", &status, NULL, 0);
    ck_assert(fd >= 0);
    send_text(fd, "{\"op\":\"create\",\"map\":\"n\",\"tag\":\"c\",\"create\":{\"start\":[1.5,0,"
                  "1.5],\"goal\":[18.5,0,6.5]}}");
    j = recv_tag(fd, "c");
    ck_assert_int_eq((int)it_num(j, "status"), 201);
    ck_assert(it_truth(j, "body.found"));
    ck_assert_str_eq(it_str(j, "body.algorithm"), "polyanya");
    sid = strdup(it_str(j, "session"));
    cJSON_Delete(j);
    snprintf(msg, sizeof(msg),
             "{\"map\":\"n\",\"session\":\"%s\",\"tag\":\"u\",\"update\":{\"position\":[3.5,0,"
             "2.1]}}",
             sid);
    send_text(fd, msg);
    j = recv_tag(fd, "u");
    ck_assert_int_eq((int)it_num(j, "status"), 200);
    ck_assert_double_eq_tol(it_num(j, "body.position.0"), 3.5, 1e-4);
    ck_assert_str_eq(it_str(j, "body.stats.rebase"), "none");
    cJSON_Delete(j);
    snprintf(msg, sizeof(msg),
             "{\"map\":\"n\",\"session\":\"%s\",\"tag\":\"b\",\"update\":{\"position\":[3,1]}}",
             sid);
    send_text(fd, msg);
    j = recv_tag(fd, "b");
    ck_assert_int_eq((int)it_num(j, "status"), 400);
    ck_assert_str_eq(it_str(j, "body.error.field"), "position");
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/n/sessions", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "count"), 1);
    ck_assert_double_eq_tol(it_num(j, "sessions.0.position.2"), 2.1, 1e-4);
    ck_assert_double_eq_tol(it_num(j, "sessions.0.goal.0"), 18.5, 1e-4);
    cJSON_Delete(j);
    send_text(fd, "{\"op\":\"create\",\"map\":\"n\",\"tag\":\"g\",\"create\":{\"start\":[1,1],"
                  "\"goal\":[5,5]}}");
    j = recv_tag(fd, "g");
    ck_assert_int_eq((int)it_num(j, "status"), 400);
    ck_assert_str_eq(it_str(j, "body.error.field"), "create.start");
    cJSON_Delete(j);
    snprintf(msg, sizeof(msg), "{\"op\":\"delete\",\"map\":\"n\",\"session\":\"%s\",\"tag\":\"d\"}",
             sid);
    send_text(fd, msg);
    j = recv_tag(fd, "d");
    ck_assert_int_eq((int)it_num(j, "status"), 204);
    cJSON_Delete(j);
    wsc_close(fd);
    free(sid);
    it_stop(&s);
}
END_TEST

static const char door_map[] = "{\"rows\":[\"..........\",\"..........\",\"..........\"],"
                               "\"doors\":{\"gate\":{\"cells\":[[4,0],[4,1],[4,2]]}}}";

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Uploads the map "m" and creates a session on it (body: the session
 * request); its URL goes to url. */
static void new_session(const hc_server *s, const char *body, char *url, size_t cap) {
    hc_resp r = it_req(s, "PUT", "/v1/maps/m", "application/json", door_map);
    ck_assert_msg(r.status == 201 || r.status == 200, "PUT: %d", r.status);
    hc_free(&r);
    r = it_req(s, "POST", "/v1/maps/m/sessions", "application/json", body);
    ck_assert_msg(r.status == 201, "session: %d %s", r.status, r.body);
    ck_assert_ptr_nonnull(hc_header(&r, "Location", url, cap));
    hc_free(&r);
}

static int open_stream(const hc_server *s, const char *url) {
    char path[200];
    int status, fd;
    snprintf(path, sizeof(path), "%s/stream", url);
    fd = wsc_connect(s->port, path, &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake failed: %d", status);
    return fd;
}

/* Reads frames until a close frame; returns its code (0: none in it), the
 * reason in reason. Fails the test on EOF or a timeout first. Counts the
 * data frames skipped on the way. */
static int read_close(int fd, char *reason, size_t cap, size_t *skipped) {
    int op;
    char *msg;
    size_t len, n = 0;
    for (;;) {
        ck_assert_msg(wsc_recv(fd, &op, &msg, &len) == 0, "no close frame (after %zu frames)", n);
        if (op == 8) break;
        free(msg);
        n++;
    }
    if (skipped) *skipped = n;
    if (reason && cap) snprintf(reason, cap, "%s", len > 2 ? msg + 2 : "");
    {
        int code = len >= 2 ? ((unsigned char)msg[0] << 8) | (unsigned char)msg[1] : 0;
        ck_assert_uint_ne(len, 1);
        free(msg);
        return code;
    }
}

/* Reads until the server closes the TCP connection (EOF or reset),
 * dropping what comes; a server that never does ends the test at its Check
 * timeout. */
static void wait_eof(int fd) {
    char buf[4096];
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t k;
        if (poll(&p, 1, -1) <= 0) continue;
        k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (k == 0) return;
        if (k < 0 && errno != EAGAIN && errno != EINTR) return; /* reset: closed too */
    }
}

/* GET /v1/info's stream_closes.<cause>: the closes the server started. */
static int stream_closes(const hc_server *s, const char *cause) {
    char key[64];
    cJSON *j = it_call(s, "GET", "/v1/info", NULL, NULL, 200);
    int n;
    snprintf(key, sizeof(key), "stream_closes.%s", cause);
    n = (int)it_num(j, key);
    cJSON_Delete(j);
    return n;
}

/* A peer that pings and never reads: the server queues its pongs only up
 * to ws_max_outbound, then closes with 1008, and its memory stays bounded.
 * Before the cap, the pongs piled up without limit (about 1 GB in 5 s). */
START_TEST(stream_slow_reader_closed_1008) {
    hc_server s = it_start(ARGS("--ws-max-outbound", "65536", "--ws-close-timeout", "60000"));
    char url[160], reason[128], *megs = getenv("PATHD_PING_MB");
    size_t mb = megs ? strtoul(megs, NULL, 10) : 32, sent = 0, skipped;
    uint8_t frame[131], *buf;
    enum { PER_BUF = 512 };
    int fd;
    long before, after;
    double t0;

    new_session(&s, "{\"start\":[0,0],\"goal\":[9,2]}", url, sizeof(url));
    fd = open_stream(&s, url);
    /* PER_BUF masked pings of 125 bytes each (mask 0: payload as is). */
    frame[0] = 0x89;
    frame[1] = 0x80 | 125;
    memset(frame + 2, 0, 4);
    memset(frame + 6, 'p', 125);
    buf = malloc(sizeof(frame) * PER_BUF);
    for (int i = 0; i < PER_BUF; i++) memcpy(buf + i * sizeof(frame), frame, sizeof(frame));
    before = it_rss_kib(s.pid);
    t0 = now_s();
    while (sent < mb << 20) {
        size_t n = sizeof(frame) * PER_BUF, off = 0;
        while (off < n) {
            ssize_t k = send(fd, buf + off, n - off, MSG_NOSIGNAL);
            ck_assert_msg(k > 0, "send failed after %zu bytes: %s", sent + off, strerror(errno));
            off += (size_t)k;
        }
        sent += n;
    }
    after = it_rss_kib(s.pid);
    fprintf(stderr,
            "stream_slow_reader_closed_1008: %zu MB of pings in %.2f s without reading; server "
            "RSS %ld -> %ld KiB (+%ld KiB), cap 64 KiB\n",
            sent >> 20, now_s() - t0, before, after, after - before);
    /* The pongs the socket buffers held (a few MB: more than 32 MB of pongs
     * cannot fit them), then 1008. */
    ck_assert_int_eq(read_close(fd, reason, sizeof(reason), &skipped), 1008);
    ck_assert_ptr_nonnull(strstr(reason, "not reading"));
    ck_assert_msg(after - before < 16 * 1024, "RSS grew by %ld KiB", after - before);
    /* The server waits for the close handshake: our close, then its EOF. */
    ck_assert_int_eq(wsc_send(fd, 8, "\x03\xe8", 2), 0);
    wait_eof(fd);
    wsc_close(fd);
    free(buf);
    it_stop(&s);
}
END_TEST

/* One answer larger than the cap on its own can never be sent: close
 * 1009 with a reason, not a stall. A 700-cell corridor makes the session's
 * path (its answer) about 6 KB; the cap is 4 KiB. */
START_TEST(stream_answer_larger_than_cap_1009) {
    hc_server s = it_start(ARGS("--ws-max-outbound", "4096"));
    char url[160], reason[128], *map = malloc(1024);
    int fd, op;
    char *msg;
    size_t len;
    hc_resp r;
    snprintf(map, 1024, "{\"rows\":[\"%0700d\"]}", 0);
    for (char *p = strstr(map, "\"0") + 1; *p == '0'; p++) *p = '.';
    r = it_req(&s, "PUT", "/v1/maps/long", "application/json", map);
    ck_assert_msg(r.status == 201, "PUT: %d %s", r.status, r.body);
    hc_free(&r);
    r = it_req(&s, "POST", "/v1/maps/long/sessions", "application/json",
               "{\"start\":[0,0],\"goal\":[699,0]}");
    ck_assert_int_eq(r.status, 201);
    ck_assert_uint_gt(r.body_len, 4096); /* HTTP answers are not capped */
    ck_assert_ptr_nonnull(hc_header(&r, "Location", url, sizeof(url)));
    hc_free(&r);
    fd = open_stream(&s, url);
    /* A pong fits... */
    ck_assert_int_eq(wsc_send(fd, 9, "x", 1), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 10);
    free(msg);
    /* ...the path does not. */
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[1,0]}", 18), 0);
    ck_assert_int_eq(read_close(fd, reason, sizeof(reason), NULL), 1009);
    ck_assert_ptr_nonnull(strstr(reason, "ws_max_outbound"));
    wsc_close(fd);
    free(map);
    it_stop(&s);
}
END_TEST

/* A stream with no message for ws_idle_timeout_s is closed with 1000 (the
 * server counts it as idle); the server then waits for the peer's close
 * and hangs up. */
START_TEST(stream_idle_timeout) {
    hc_server s = it_start(ARGS("--ws-idle-timeout", "1"));
    char url[160], reason[128];
    int fd;
    new_session(&s, "{\"start\":[0,0],\"goal\":[9,2]}", url, sizeof(url));
    fd = open_stream(&s, url);
    ck_assert_int_eq(read_close(fd, reason, sizeof(reason), NULL), 1000);
    ck_assert_ptr_nonnull(strstr(reason, "idle"));
    ck_assert_int_eq(stream_closes(&s, "idle"), 1);
    ck_assert_int_eq(stream_closes(&s, "session_gone"), 0);
    /* After its close the server answers nothing more... */
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[1,0]}", 18), 0);
    ck_assert_int_eq(wsc_send(fd, 8, "\x03\xe8", 2), 0);
    /* ...and hangs up once our close came. */
    wait_eof(fd);
    wsc_close(fd);
    it_stop(&s);
}
END_TEST

/* A multiplexed stream's own state (its session table and outstanding
 * messages) counts against the memory budget as streams, with its
 * buffers, while it is open, and is given back when it closes. */
START_TEST(stream_mux_state_counts_as_streams) {
    hc_server s = it_start(ARGS("--max-memory", "100000000"));
    int status, fd;
    char body[256];
    double bytes = 0;
    cJSON *j;
    fd = wsc_connect(s.port, "/v1/stream", &status, body, sizeof(body));
    ck_assert_msg(fd >= 0 && status == 101, "status %d %s", status, body);
    /* The hub adopts the connection on its own thread: poll. */
    for (unsigned polls = 0; bytes == 0;) {
        j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
        bytes = it_num(j, "memory.streams_bytes");
        cJSON_Delete(j);
        if (bytes == 0) tu_waiting(&polls, "the stream's memory counted");
    }
    /* The input buffer (16 KiB) and the 4096 chains of the session table. */
    ck_assert_msg(bytes >= 16384 + 4096 * sizeof(void *), "streams_bytes %.0f", bytes);
    wsc_close(fd);
    for (unsigned polls = 0; bytes != 0;) {
        j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
        bytes = it_num(j, "memory.streams_bytes");
        cJSON_Delete(j);
        if (bytes != 0) tu_waiting(&polls, "the stream's memory given back");
    }
    it_stop(&s);
}
END_TEST

/* The session of a stream deleted over HTTP, or expired: the stream gets a
 * session_not_found message and close 1000. */
START_TEST(stream_closed_when_session_ends) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160], reason[128];
    int fd, op;
    char *msg;
    size_t len;
    hc_resp r;

    new_session(&s, "{\"start\":[0,0],\"goal\":[9,2]}", url, sizeof(url));
    fd = open_stream(&s, url);
    r = it_req(&s, "DELETE", url, NULL, NULL);
    ck_assert_int_eq(r.status, 204);
    hc_free(&r);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 1);
    ck_assert_ptr_nonnull(strstr(msg, "session_not_found"));
    free(msg);
    ck_assert_int_eq(read_close(fd, reason, sizeof(reason), NULL), 1000);
    ck_assert_ptr_nonnull(strstr(reason, "session"));
    wsc_close(fd);

    /* ttl_s 1: idle for a second, the session expires and so does its
     * stream. */
    new_session(&s, "{\"start\":[0,0],\"goal\":[9,2],\"ttl_s\":1}", url, sizeof(url));
    fd = open_stream(&s, url);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_ptr_nonnull(strstr(msg, "session_not_found"));
    free(msg);
    ck_assert_int_eq(read_close(fd, NULL, 0, NULL), 1000);
    ck_assert_int_eq(stream_closes(&s, "session_gone"), 2);
    ck_assert_int_eq(stream_closes(&s, "idle"), 0);
    wsc_close(fd);

    /* A replaced map ends its sessions: their streams close too. */
    new_session(&s, "{\"start\":[0,0],\"goal\":[9,2]}", url, sizeof(url));
    fd = open_stream(&s, url);
    r = it_req(&s, "PUT", "/v1/maps/m", "application/json", door_map);
    ck_assert_int_eq(r.status, 200);
    hc_free(&r);
    ck_assert_int_eq(read_close(fd, NULL, 0, NULL), 1000);
    wsc_close(fd);
    it_stop(&s);
}
END_TEST

/* RFC 6455 5.5.1 and 7.4: the peer's close frame is checked before it is
 * echoed. */
START_TEST(stream_close_handshake) {
    hc_server s = it_start(ARGS("--ws-close-timeout", "1000"));
    static const struct {
        const char *payload;
        size_t len;
        int reply;
    } cases[] = {
        {"\x03\xe8", 2, 1000}, /* normal: echoed */
        {"\x0f\xa0"
         "bye",
         5, 4000},                    /* a private code with a reason: echoed */
        {"", 0, 0},                   /* no code: an empty close back */
        {"\x03", 1, 1002},            /* one byte: protocol error */
        {"\x03\xed", 2, 1002},        /* 1005 may not be sent */
        {"\x03\xe7", 2, 1002},        /* 999 */
        {"\x0b\xb7", 2, 1002},        /* 2999: reserved for the protocol */
        {"\x03\xe8\xc3\x28", 4, 1007} /* a reason that is not UTF-8 */
    };
    char url[160];
    new_session(&s, "{\"start\":[0,0],\"goal\":[9,2]}", url, sizeof(url));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int fd = open_stream(&s, url);
        ck_assert_int_eq(wsc_send(fd, 8, cases[i].payload, cases[i].len), 0);
        ck_assert_msg(read_close(fd, NULL, 0, NULL) == cases[i].reply, "case %zu", i);
        /* The server hangs up after its reply, without waiting for the
         * close timeout (it counts no drop). */
        wait_eof(fd);
        ck_assert_msg(stream_closes(&s, "dropped_after_close") == 0, "case %zu dropped", i);
        wsc_close(fd);
    }
    /* A server close the peer never answers: the connection is dropped
     * at ws_close_timeout_ms, and counted so. */
    {
        int fd = open_stream(&s, url);
        hc_resp r = it_req(&s, "DELETE", url, NULL, NULL);
        ck_assert_int_eq(r.status, 204);
        hc_free(&r);
        ck_assert_int_eq(read_close(fd, NULL, 0, NULL), 1000);
        wait_eof(fd);
        ck_assert_int_eq(stream_closes(&s, "dropped_after_close"), 1);
        wsc_close(fd);
    }
    it_stop(&s);
}
END_TEST

/* Streams may never take every connection: with 6 connections and 4
 * streams, the fifth stream is refused and plain HTTP is still served. */
START_TEST(stream_limit_leaves_http_room) {
    hc_server s = it_start(ARGS("--max-connections", "6", "--max-streams", "4"));
    char url[160], path[200], body[512];
    int fds[4], status;
    hc_resp r;
    new_session(&s, "{\"start\":[0,0],\"goal\":[9,2]}", url, sizeof(url));
    for (int i = 0; i < 4; i++) fds[i] = open_stream(&s, url);
    snprintf(path, sizeof(path), "%s/stream", url);
    /* The count is taken when the hub adopts a stream: poll until it has
     * all four. */
    for (unsigned polls = 0;;) {
        cJSON *j;
        r = it_req(&s, "GET", "/v1/info", NULL, NULL);
        j = cJSON_ParseWithLength(r.body, r.body_len);
        hc_free(&r);
        if (it_num(j, "streams") == 4) {
            cJSON_Delete(j);
            break;
        }
        cJSON_Delete(j);
        tu_waiting(&polls, "four streams adopted");
    }
    ck_assert_int_eq(wsc_connect(s.port, path, &status, body, sizeof(body)), -1);
    ck_assert_int_eq(status, 503);
    ck_assert_ptr_nonnull(strstr(body, "overloaded"));
    r = it_req(&s, "GET", "/healthz", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    hc_free(&r);
    for (int i = 0; i < 4; i++) wsc_close(fds[i]);
    it_stop(&s);
}
END_TEST

/* pathd refuses settings where streams could fill every connection. */
START_TEST(stream_limit_below_connections_at_start) {
    const char *bin = getenv("PATHD_BIN");
    char cmd[1024];
    int rc;
    ck_assert_ptr_nonnull(bin);
    snprintf(cmd, sizeof(cmd),
             "timeout 10 '%s' --port 0 --max-connections 64 --max-streams 64 >/dev/null 2>&1 "
             "</dev/null",
             bin);
    rc = system(cmd);
    ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "pathd started: %d", rc);
}
END_TEST

/* An upgraded connection is the hub's: the HTTP deadlines (conns.h) never
 * close a stream, however long it lives. */
START_TEST(stream_outlives_connection_deadlines) {
    hc_server s = it_start(ARGS("--conn-timeout", "1", "--request-timeout", "1"));
    char url[160];
    struct timespec pause = {2, 500000000};
    int fd, op;
    char *msg;
    size_t len;
    new_session(&s, "{\"start\":[0,0],\"goal\":[9,2]}", url, sizeof(url));
    fd = open_stream(&s, url);
    nanosleep(&pause, NULL); /* longer than both deadlines */
    ck_assert_int_eq(wsc_send(fd, 9, "still", 5), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 10);
    free(msg);
    wsc_close(fd);
    it_stop(&s);
}
END_TEST

TU_SUITE(stream) {
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("stream");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, stream_raw_client);
    tcase_add_test(tc, stream_npm_ws_client);
    tcase_add_test(tc, stream_navmesh_session);
    tcase_add_test(tc, stream_crowd);
    tcase_add_test(tc, stream_crowd_outlives_reaper);
    tcase_add_test(tc, stream_mux);
    tcase_add_test(tc, stream_mux_many);
    tcase_add_test(tc, stream_mux_navmesh);
    tcase_add_test(tc, stream_slow_reader_closed_1008);
    tcase_add_test(tc, stream_answer_larger_than_cap_1009);
    tcase_add_test(tc, stream_idle_timeout);
    tcase_add_test(tc, stream_closed_when_session_ends);
    tcase_add_test(tc, stream_close_handshake);
    tcase_add_test(tc, stream_limit_leaves_http_room);
    tcase_add_test(tc, stream_limit_below_connections_at_start);
    tcase_add_test(tc, stream_outlives_connection_deadlines);
    tcase_add_test(tc, stream_mux_state_counts_as_streams);
    suite_add_tcase(s, tc);
    return s;
}
