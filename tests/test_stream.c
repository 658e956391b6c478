/* test_stream.c -- server/stream.c: WebSocket session streams, spoken to by a raw C client
 * (tests/wsc.c) and the npm `ws` package (tests/js/ws_client.js). */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

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
        TU_SKIP("node or tests/js/node_modules missing (make test installs them with npm ci "
                "--prefix tests/js when the npm registry is reachable)");
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

TU_SUITE(stream) {
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("stream");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, stream_raw_client);
    tcase_add_test(tc, stream_npm_ws_client);
    tcase_add_test(tc, stream_navmesh_session);
    tcase_add_test(tc, stream_crowd);
    suite_add_tcase(s, tc);
    return s;
}
