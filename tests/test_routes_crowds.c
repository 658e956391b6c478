/* test_routes_crowds.c -- server/routes_crowds.c (and server/crowd.c under it) over HTTP:
 * crowds on navmesh maps - create, read, commands (add, remove, targets, tick rate, steps),
 * delete, every refusal naming its field and changing nothing, the limits, ticking, and crowds
 * following their map's PATCHes and ending with the map. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fleet.h"
#include "itest.h"
#include "testutil.h"
#include "wsc.h"

/* Creates a crowd on map with body; returns its state and writes its URL. */
static cJSON *crowd_create(const hc_server *s, const char *map, const char *body, char *url,
                           size_t cap) {
    char path[128];
    hc_resp r;
    cJSON *j;
    snprintf(path, sizeof(path), "/v1/maps/%s/crowds", map);
    r = it_req(s, "POST", path, "application/json", body);
    ck_assert_msg(r.status == 201, "create: %d %s", r.status, r.body);
    ck_assert_ptr_nonnull(hc_header(&r, "Location", url, cap));
    j = it_json(&r);
    hc_free(&r);
    return j;
}

static cJSON *crowd_step(const hc_server *s, const char *url, const char *body, int expect) {
    char path[256];
    snprintf(path, sizeof(path), "%s/step", url);
    return it_call(s, "POST", path, "application/json", body, expect);
}

/* Agent id's member (position, velocity, target) coordinate k; NAN when it
 * is not there. */
static double agent_at(const cJSON *state, int id, const char *member, int k) {
    const cJSON *a;
    cJSON_ArrayForEach(a, it_get(state, "agents")) {
        if ((int)it_num(a, "id") != id) continue;
        if (cJSON_IsNull(it_get(a, member))) return NAN;
        return cJSON_GetArrayItem(it_get(a, member), k)->valuedouble;
    }
    return NAN;
}

/* The state without its stats (what a refused command must not change). */
static char *state_text(const hc_server *s, const char *url) {
    cJSON *j = it_call(s, "GET", url, NULL, NULL, 200);
    char *t;
    cJSON_DeleteItemFromObject(j, "stats");
    t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return t;
}

START_TEST(routes_crowds_commands) {
    hc_server s = it_start(ARGS("--max-crowd-agents", "8", "--crowd-max-steps", "200"));
    char url[200], other[240], *before, *after;
    cJSON *j;
    it_put_nav_open(&s, "n", 30, 10);
    it_put_map(&s, "g", "text/x-movingai-map", "type octile\nheight 1\nwidth 4\nmap\n....\n", 201);

    j = crowd_create(&s, "n",
                     "{\"max_agents\":4,\"agents\":[{\"position\":[2,0,5],\"target\":[28,0,5]},"
                     "{\"position\":[28,0,5],\"target\":[2,0,5],\"max_speed\":2}]}",
                     url, sizeof(url));
    ck_assert_int_eq(strlen(it_str(j, "crowd_id")), 32);
    ck_assert_str_eq(it_str(j, "map_id"), "n");
    ck_assert_int_eq((int)it_num(j, "max_agents"), 4);
    ck_assert_int_eq((int)it_num(j, "frame"), 0);
    ck_assert_int_eq((int)it_num(j, "tick_hz"), 0);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "agents")), 2);
    ck_assert_double_eq_tol(agent_at(j, 0, "position", 0), 2.0, 1e-3);
    ck_assert_double_eq_tol(agent_at(j, 1, "target", 0), 2.0, 1e-3);
    cJSON_Delete(j);

    /* 40 steps of 0.1 s: both head for their targets and pass each other. */
    j = crowd_step(&s, url, "{\"steps\":40,\"dt\":0.1}", 200);
    ck_assert_int_eq((int)it_num(j, "frame"), 40);
    ck_assert_double_eq_tol(it_num(j, "time_s"), 4.0, 1e-6);
    ck_assert_double_gt(agent_at(j, 0, "position", 0), 2.0 + 8.0);  /* ~3.5 units/s */
    ck_assert_double_lt(agent_at(j, 1, "position", 0), 28.0 - 4.0); /* its own 2 units/s */
    ck_assert_double_lt(agent_at(j, 1, "position", 0), 28.0 - 2.0 * 4.0 * 0.6);
    ck_assert_double_gt(agent_at(j, 1, "position", 0), 28.0 - 2.0 * 4.0 - 0.5);
    cJSON_Delete(j);
    /* The default step is one of 0.05 s; a read changes nothing. */
    j = crowd_step(&s, url, "{}", 200);
    ck_assert_int_eq((int)it_num(j, "frame"), 41);
    ck_assert_double_eq_tol(it_num(j, "time_s"), 4.05, 1e-6);
    cJSON_Delete(j);
    j = it_call(&s, "GET", url, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "frame"), 41);
    cJSON_Delete(j);

    /* Add, remove, retarget, stop, in one command. */
    j = crowd_step(&s, url,
                   "{\"add\":[{\"position\":[5,0,2],\"radius\":0.2},{\"position\":[6,0,8],"
                   "\"target\":[6,0,2]}],\"remove\":[1],\"targets\":[{\"id\":0,\"target\":null}],"
                   "\"steps\":0}",
                   200);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "added")), 2);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "agents")), 3);
    ck_assert(isnan(agent_at(j, 0, "target", 0)));
    ck_assert_int_eq((int)it_num(j, "frame"), 41);
    {
        int a = cJSON_GetArrayItem(it_get(j, "added"), 0)->valueint;
        const cJSON *ag;
        cJSON_ArrayForEach(ag, it_get(j, "agents")) if ((int)it_num(ag, "id") == a)
            ck_assert_double_eq_tol(it_num(ag, "radius"), 0.2, 1e-4);
    }
    cJSON_Delete(j);

    /* Refusals, each naming its field; the crowd is as it was. */
    before = state_text(&s, url);
    snprintf(other, sizeof(other), "%s/step", url);
    it_call_error(&s, "POST", other, "application/json", "{\"remove\":[3]}", 422, "invalid_value",
                  "remove[0]");
    it_call_error(&s, "POST", other, "application/json", "{\"remove\":[0,0]}", 422, "invalid_value",
                  "remove[1]");
    it_call_error(&s, "POST", other, "application/json",
                  "{\"remove\":[0],\"add\":[{\"position\":[2,0,2]},{\"position\":[99,0,2]}]}", 422,
                  "blocked", "add[1].position");
    it_call_error(&s, "POST", other, "application/json",
                  "{\"add\":[{\"position\":[2,0,2],\"target\":[2,0,-40]}]}", 422, "blocked",
                  "add[0].target");
    it_call_error(&s, "POST", other, "application/json",
                  "{\"add\":[{\"position\":[2,0,2],\"radius\":0.5}]}", 422, "invalid_value",
                  "add[0].radius");
    it_call_error(&s, "POST", other, "application/json",
                  "{\"add\":[{\"position\":[2,0,2],\"max_speed\":0}]}", 422, "invalid_value",
                  "add[0].max_speed");
    it_call_error(&s, "POST", other, "application/json",
                  "{\"add\":[{\"position\":[2,0,2]},{\"position\":[3,0,2]}]}", 413,
                  "limit_exceeded", "add");
    it_call_error(&s, "POST", other, "application/json",
                  "{\"targets\":[{\"id\":0,\"target\":[1,0,1]}],\"remove\":[0]}", 422,
                  "invalid_value", "targets[0].id");
    it_call_error(&s, "POST", other, "application/json", "{\"targets\":[{\"id\":0}]}", 400,
                  "invalid_request", "targets[0].target");
    it_call_error(&s, "POST", other, "application/json", "{\"steps\":201}", 422, "invalid_value",
                  "steps");
    it_call_error(&s, "POST", other, "application/json", "{\"dt\":0}", 422, "invalid_value", "dt");
    it_call_error(&s, "POST", other, "application/json", "{\"dt\":1.5}", 422, "invalid_value",
                  "dt");
    it_call_error(&s, "POST", other, "application/json", "{\"tick_hz\":61}", 422, "invalid_value",
                  "tick_hz");
    it_call_error(&s, "POST", other, "application/json", "{\"speed\":1}", 400, "invalid_request",
                  "speed");
    it_call_error(&s, "POST", other, "application/json", "[1]", 400, "invalid_request", NULL);
    after = state_text(&s, url);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);

    /* Creates that are refused. */
    it_call_error(&s, "POST", "/v1/maps/g/crowds", "application/json", "{}", 422, "unsupported",
                  NULL);
    it_call_error(&s, "POST", "/v1/maps/nomap/crowds", "application/json", "{}", 404,
                  "map_not_found", NULL);
    it_call_error(&s, "POST", "/v1/maps/n/crowds", "application/json", "{\"max_agents\":9}", 422,
                  "invalid_value", "max_agents");
    it_call_error(&s, "POST", "/v1/maps/n/crowds", "application/json",
                  "{\"max_agents\":1,\"agents\":[{\"position\":[2,0,2]},{\"position\":[3,0,2]}]}",
                  413, "limit_exceeded", "agents");
    it_call_error(&s, "POST", "/v1/maps/n/crowds", "application/json",
                  "{\"agents\":[{\"position\":[2,0]}]}", 400, "invalid_request",
                  "agents[0].position");
    it_call_error(&s, "POST", "/v1/maps/n/crowds", "application/json",
                  "{\"agents\":[{\"position\":[2,0,60]}]}", 422, "blocked", "agents[0].position");

    /* A crowd belongs to its map; unknown ids are 404; delete. */
    {
        char wrong[260];
        const char *cid = strrchr(url, '/') + 1;
        snprintf(wrong, sizeof(wrong), "/v1/maps/g/crowds/%s", cid);
        it_call_error(&s, "GET", wrong, NULL, NULL, 404, "crowd_not_found", NULL);
        it_call_error(&s, "GET", "/v1/maps/n/crowds/0123", NULL, NULL, 404, "crowd_not_found",
                      NULL);
        it_call_error(&s, "GET", "/v1/maps/n/crowds/a.b", NULL, NULL, 404, "not_found", NULL);
        it_call_error(&s, "PUT", url, "application/json", "{}", 405, "method_not_allowed", NULL);
    }
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "crowds"), 1);
    ck_assert_int_eq((int)it_num(j, "limits.max_crowd_agents"), 8);
    cJSON_Delete(j);
    ck_assert_ptr_null(it_call(&s, "DELETE", url, NULL, NULL, 204));
    it_call_error(&s, "GET", url, NULL, NULL, 404, "crowd_not_found", NULL);
    it_call_error(&s, "DELETE", url, NULL, NULL, 404, "crowd_not_found", NULL);
    it_stop(&s);
}
END_TEST

/* Crowds follow their map: a PATCHed obstacle reaches the crowd's mesh at
 * its next step (agents go round it), a replaced map ends the crowd. The
 * per-map and total limits. */
START_TEST(routes_crowds_follow_map_and_limits) {
    hc_server s = it_start(ARGS("--max-crowds-per-map", "2", "--max-crowds", "3"));
    char url[200], u2[200], u3[200];
    cJSON *j;
    it_put_nav_open(&s, "n", 30, 10);
    it_put_nav_open(&s, "m", 10, 10);
    cJSON_Delete(crowd_create(&s, "n", "{\"agents\":[{\"position\":[2,0,5],\"target\":[28,0,5]}]}",
                              url, sizeof(url)));
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/n", "application/json",
                         "{\"obstacles\":[{\"id\":\"pillar\",\"cylinder\":{\"base\":[15,0,5],"
                         "\"radius\":2,\"height\":2}}]}",
                         200));
    {
        double closest = 1e9;
        for (int i = 0; i < 80; i++) {
            double x, z;
            j = crowd_step(&s, url, "{\"steps\":2,\"dt\":0.1}", 200);
            ck_assert_int_eq((int)it_num(j, "map_version"), 2);
            x = agent_at(j, 0, "position", 0);
            z = agent_at(j, 0, "position", 2);
            closest = fmin(closest, hypot(x - 15.0, z - 5.0));
            cJSON_Delete(j);
        }
        /* Round the pillar (radius 2, agent 0.25), never through it. */
        ck_assert_double_ge(closest, 2.0);
        j = it_call(&s, "GET", url, NULL, NULL, 200);
        ck_assert_double_gt(agent_at(j, 0, "position", 0), 27.0);
        cJSON_Delete(j);
    }
    /* Limits: two on n (429 for a third), three in all (503 for a fourth). */
    cJSON_Delete(crowd_create(&s, "n", "{}", u2, sizeof(u2)));
    it_call_error(&s, "POST", "/v1/maps/n/crowds", "application/json", "{}", 429,
                  "too_many_sessions", NULL);
    cJSON_Delete(crowd_create(&s, "m", "{}", u3, sizeof(u3)));
    it_call_error(&s, "POST", "/v1/maps/m/crowds", "application/json", "{}", 503, "overloaded",
                  NULL);
    /* Replacing n ends its crowds; m's lives on. */
    it_put_nav_open(&s, "x", 8, 8);
    {
        char *text = it_open_map_text(12, 6), *env = it_nav_envelope(text, NULL);
        it_put_map(&s, "n", "application/json", env, 200);
        free(env);
        free(text);
    }
    it_call_error(&s, "GET", url, NULL, NULL, 404, "crowd_not_found", NULL);
    it_call_error(&s, "GET", u2, NULL, NULL, 404, "crowd_not_found", NULL);
    cJSON_Delete(it_call(&s, "GET", u3, NULL, NULL, 200));
    ck_assert_ptr_null(it_call(&s, "DELETE", "/v1/maps/m", NULL, NULL, 204));
    it_call_error(&s, "GET", u3, NULL, NULL, 404, "crowd_not_found", NULL);
    it_stop(&s);
}
END_TEST

/* Two groups of 20 cross an open floor through each other: every agent
 * arrives, and no two ever overlap by more than a quarter of a radius. */
START_TEST(routes_crowds_crossing) {
    hc_server s = it_start(NULL);
    char url[200], *body = malloc(16384);
    size_t n = 0;
    double worst = 0;
    int arrived = 0;
    cJSON *j = NULL;
    it_put_nav_open(&s, "n", 40, 24);
    n += (size_t)sprintf(body + n, "{\"max_agents\":40,\"agents\":[");
    for (int i = 0; i < 40; i++) {
        int side = i % 2, row = i / 2;
        double z = 2.0 + row * 1.0;
        n += (size_t)sprintf(body + n, "%s{\"position\":[%g,0,%g],\"target\":[%g,0,%g]}",
                             i ? "," : "", side ? 37.0 : 3.0, z, side ? 3.0 : 37.0, z);
    }
    sprintf(body + n, "]}");
    cJSON_Delete(crowd_create(&s, "n", body, url, sizeof(url)));
    free(body);
    for (int step = 0; step < 100; step++) {
        const cJSON *a, *b;
        cJSON_Delete(j);
        j = crowd_step(&s, url, "{\"steps\":2,\"dt\":0.1}", 200);
        cJSON_ArrayForEach(a, it_get(j, "agents")) {
            for (b = a->next; b; b = b->next) {
                double dx = cJSON_GetArrayItem(it_get(a, "position"), 0)->valuedouble -
                            cJSON_GetArrayItem(it_get(b, "position"), 0)->valuedouble;
                double dz = cJSON_GetArrayItem(it_get(a, "position"), 2)->valuedouble -
                            cJSON_GetArrayItem(it_get(b, "position"), 2)->valuedouble;
                double overlap = it_num(a, "radius") + it_num(b, "radius") - hypot(dx, dz);
                if (overlap > worst) worst = overlap;
            }
        }
    }
    {
        const cJSON *a;
        cJSON_ArrayForEach(a, it_get(j, "agents")) arrived +=
            strcmp(it_str(a, "state"), "arrived") == 0;
    }
    cJSON_Delete(j);
    fprintf(stderr, "routes_crowds_crossing: %d of 40 arrived, worst overlap %.4f\n", arrived,
            worst);
    ck_assert_int_eq(arrived, 40);
    ck_assert_double_le(worst, 0.25 * 0.25);
    it_stop(&s);
}
END_TEST

/* A crowd that ticks by itself: frames go on without requests, each one
 * 1/tick_hz of simulated time, never more than one a tick; steps asked of
 * it are refused; tick_hz 0 stops it. No lower bound on the frame rate (a
 * loaded machine ticks late; late ticks are counted as skipped): the test
 * waits for frames, without a clock. */
START_TEST(routes_crowds_ticking) {
    hc_server s = it_start(NULL);
    char url[200], step[220];
    struct timespec t0, nap = {0, 300 * 1000 * 1000};
    unsigned polls = 0;
    cJSON *j;
    int f0, f1;
    double secs;
    it_put_nav_open(&s, "n", 20, 10);
    /* t0 before the crowd exists: the test's window [t0, GET answered]
     * holds the server's [frame f0, frame f1], so at most secs * 20 + 1
     * ticks fit in it, however loaded the machine (a one-sided bound). */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    j = crowd_create(&s, "n",
                     "{\"tick_hz\":20,\"agents\":[{\"position\":[2,0,5],\"target\":[18,0,5]}]}",
                     url, sizeof(url));
    f0 = (int)it_num(j, "frame");
    cJSON_Delete(j);
    for (;;) {
        j = it_call(&s, "GET", url, NULL, NULL, 200);
        secs = it_since(&t0);
        f1 = (int)it_num(j, "frame");
        if (f1 - f0 >= 5) break;
        cJSON_Delete(j);
        tu_waiting(&polls, "five frames of a ticking crowd");
    }
    ck_assert_int_eq((int)it_num(j, "tick_hz"), 20);
    ck_assert_int_le(f1 - f0, (int)(secs * 20) + 1);
    /* Every frame since the crowd's first is 1/tick_hz of simulated time.
     * Against f1 from the same answer, not f1 - f0: the crowd may tick
     * before its creation is answered (f0 > 0 on a slow machine). */
    ck_assert_double_eq_tol(it_num(j, "time_s"), f1 * 0.05, 1e-6);
    cJSON_Delete(j);
    snprintf(step, sizeof(step), "%s/step", url);
    it_call_error(&s, "POST", step, "application/json", "{\"steps\":1}", 409, "conflict", "steps");
    j = it_call(&s, "POST", step, "application/json", "{\"tick_hz\":0}", 200);
    ck_assert_int_eq((int)it_num(j, "tick_hz"), 0);
    f0 = (int)it_num(j, "frame");
    cJSON_Delete(j);
    nanosleep(&nap, NULL);
    j = it_call(&s, "GET", url, NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "frame"), f0);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* An idle crowd expires after its ttl_s. */
START_TEST(routes_crowds_expiry) {
    hc_server s = it_start(NULL);
    char url[200];
    unsigned polls = 0;
    cJSON *j;
    bool gone = false;
    it_put_nav_open(&s, "n", 10, 10);
    cJSON_Delete(crowd_create(&s, "n", "{\"ttl_s\":1}", url, sizeof(url)));
    while (!gone) {
        j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
        gone = it_num(j, "crowds") == 0;
        cJSON_Delete(j);
        if (!gone) tu_waiting(&polls, "the idle crowd reaped");
    }
    it_call_error(&s, "GET", url, NULL, NULL, 404, "crowd_not_found", NULL);
    it_stop(&s);
}
END_TEST

/* Whether fd has nothing to read yet (no answer, not closed). */
static bool unanswered(int fd) {
    char c;
    ssize_t k = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* A crowd's steps give their worker back every --slice-ms: on one worker,
 * 600 steps of 400 agents are still unanswered when a path query sent
 * after them has its answer; the pool counts the slices given back and the
 * command ends at frame 600. Before, a 600-step request held its worker
 * 3.7 s. */
START_TEST(routes_crowds_steps_yield) {
    hc_server s = it_start(ARGS("--workers", "1", "--slice-ms", "1"));
    char url[200], path[260], *body = malloc(400 * 96 + 64);
    size_t n = (size_t)sprintf(body, "{\"max_agents\":400,\"agents\":[");
    int slow;
    cJSON *j;
    it_put_nav_open(&s, "n", 60, 60);
    it_put_map(&s, "room", "application/json", it_room_json, 201);
    for (int i = 0; i < 400; i++)
        n += (size_t)sprintf(body + n, "%s{\"position\":[%d.5,0,%d.5],\"target\":[%d.5,0,%d.5]}",
                             i ? "," : "", 2 + i % 20 * 2, 2 + i / 20 * 2, 57 - i % 20 * 2,
                             57 - i / 20 * 2);
    sprintf(body + n, "]}");
    j = crowd_create(&s, "n", body, url, sizeof(url));
    free(body);
    cJSON_Delete(j);
    snprintf(path, sizeof(path), "%s/step", url);
    it_wait_pool(&s, 0, 0);
    slow = it_send_json_post(s.port, path, "{\"steps\":600,\"dt\":0.05}");
    it_wait_pool(&s, 1, 0);
    j = it_call(&s, "POST", "/v1/maps/room/path", "application/json",
                "{\"start\":[0,0],\"goal\":[9,0],\"cache\":false}", 200);
    cJSON_Delete(j);
    ck_assert_msg(unanswered(slow), "the steps ended before the query was answered");
    {
        hc_resp r;
        ck_assert_int_eq(hc_read(slow, &r), 0);
        ck_assert_int_eq(r.status, 200);
        j = it_json(&r);
        ck_assert_int_eq((int)it_num(j, "frame"), 600);
        cJSON_Delete(j);
        hc_free(&r);
    }
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_ge((int)it_num(j, "pool.requeued"), 1);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* deploy/nginx.conf gives crowd streams the long timeout of the other
 * streams: through it, with the server's default timeouts cut to 2 s, a
 * crowd stream that stays idle for 5 s (a crowd that does not tick sends
 * nothing between commands) still answers its next command. */
START_TEST(routes_crowds_stream_idle_through_nginx) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[256], path[300], dir[] = "/tmp/pathd-crowd-nginx-XXXXXX", rm[64];
    int status, fd, op;
    char *data = NULL;
    size_t len = 0;
    cJSON *j;
    fl_proc ng;
    it_put_nav_open(&s, "n", 20, 12);
    cJSON_Delete(crowd_create(&s, "n", "{}", url, sizeof(url)));
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ng = fl_nginx_start_timeout(&s.port, 1, dir, "2s");
    snprintf(path, sizeof(path), "%s/stream", url);
    fd = wsc_connect(ng.port, path, &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake through nginx: %d", status);
    for (int round = 1; round <= 2; round++) {
        const char *cmd = "{\"add\":[{\"position\":[2,0,6]}]}";
        ck_assert_int_eq(wsc_send(fd, 1, cmd, strlen(cmd)), 0);
        /* The answer with this round's agent (frames before it skipped). */
        for (int k = 0;; k++) {
            int n;
            ck_assert_msg(wsc_recv(fd, &op, &data, &len) == 0,
                          "round %d: the stream was closed through nginx", round);
            j = it_json_text(data);
            n = cJSON_GetArraySize(it_get(j, "agents"));
            cJSON_Delete(j);
            free(data);
            data = NULL;
            if (n == round) break;
            ck_assert_int_lt(k, 20);
        }
        if (round == 1) sleep(5); /* idle past the 2 s of the other locations */
    }
    wsc_close(fd);
    fl_stop(&ng, SIGTERM);
    it_stop(&s);
    snprintf(rm, sizeof(rm), "rm -rf %s", dir); /* nginx's config, logs and temp dirs */
    ck_assert_int_eq(system(rm), 0);
}
END_TEST

TU_SUITE(routes_crowds) {
    Suite *s = suite_create("routes_crowds");
    TCase *tc = tcase_create("routes_crowds");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_crowds_commands);
    tcase_add_test(tc, routes_crowds_steps_yield);
    tcase_add_test(tc, routes_crowds_follow_map_and_limits);
    tcase_add_test(tc, routes_crowds_crossing);
    tcase_add_test(tc, routes_crowds_ticking);
    tcase_add_test(tc, routes_crowds_expiry);
    tcase_add_test(tc, routes_crowds_stream_idle_through_nginx);
    suite_add_tcase(s, tc);
    return s;
}
