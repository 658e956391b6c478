/* test_metrics.c -- server/metrics.c alone (counts, buckets, labels and
 * the text they are written as), then GET /metrics against a real server:
 * every family moves when its event happens and by the right amount
 * (WebSocket upgrades and messages, queue waits apart from search times,
 * searches by algorithm and outcome, map builds and repairs, session plans,
 * repairs and rebases, memory by kind, process figures, build info), and
 * the exposition is well formed (every sample in a family declared once
 * with its TYPE; counters only, no derived ratio).
 *
 * With PATHD_METRICS_OUT set, the last scrape (every family with samples)
 * is written there: `make test` runs `promtool check metrics` on it and
 * holds deploy/grafana/pathd-dashboard.json's queries against it
 * (tests/dashboard/check.js).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itest.h"
#include "metrics.h"
#include "testutil.h"
#include "wsc.h"

/* 12x8, 8-connected: a wall down column 6 with a door in it at (6,1) and
 * the open row 0 above it; a walled pocket around (9,4) nothing reaches. */
static const char map_json[] = "{\"rows\":[\"............\",\"............\",\"......#.....\","
                               "\"......#.###.\",\"......#.#.#.\",\"......#.###.\","
                               "\"......#.....\",\"......#.....\"],"
                               "\"doors\":{\"gate\":{\"cells\":[[6,1]],\"open\":true}}}";

static char *scrape(const hc_server *s) {
    hc_resp r = it_req(s, "GET", "/metrics", NULL, NULL);
    char ct[64], *body;
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(hc_header(&r, "Content-Type", ct, sizeof(ct)));
    ck_assert_ptr_nonnull(strstr(ct, "text/plain"));
    ck_assert_ptr_nonnull(strstr(ct, "version=0.0.4"));
    body = strdup(r.body);
    ck_assert_ptr_nonnull(body);
    hc_free(&r);
    return body;
}

/* The value of the sample `series` (name and labels exactly as written),
 * or NAN when there is none. */
static double sample(const char *text, const char *series) {
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ') return strtod(p + n + 1, NULL);
    return NAN;
}

/* Scrapes until `series` reaches at least want (the hub counts on its own
 * thread, the end of an upgraded request comes when its socket closes).
 * Returns the value. No clock: Check's timeout ends a wait for a value
 * that never comes. */
static double await(const hc_server *s, const char *series, double want) {
    unsigned polls = 0;
    for (;;) {
        char *t = scrape(s);
        double v = sample(t, series);
        free(t);
        if (v >= want) return v;
        tu_waiting(&polls, series);
    }
}

/* The same, waiting for the value to fall to at most want. */
static void await_at_most(const hc_server *s, const char *series, double want) {
    unsigned polls = 0;
    for (;;) {
        char *t = scrape(s);
        double v = sample(t, series);
        free(t);
        if (v <= want) return;
        tu_waiting(&polls, series);
    }
}

static void request(const hc_server *s, const char *method, const char *path, const char *body,
                    int expect) {
    hc_resp r = it_req(s, method, path, body ? "application/json" : NULL, body);
    ck_assert_msg(r.status == expect, "%s %s: %d %.300s", method, path, r.status, r.body);
    hc_free(&r);
}

static void path_query(const hc_server *s, const char *map, const char *body, int expect) {
    char p[64];
    snprintf(p, sizeof(p), "/v1/maps/%s/path", map);
    request(s, "POST", p, body, expect);
}

/* Each sample line names a family declared before it by exactly one TYPE
 * line (a histogram's _bucket, _sum and _count belong to it), with a HELP
 * line; no family is declared twice; values parse. */
static void check_exposition(const char *text) {
    char declared[256][96], type[256][16];
    int nd = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        char ln[600], name[96];
        size_t len;
        ck_assert_msg(eol != NULL, "the exposition must end with a newline");
        len = (size_t)(eol - p);
        ck_assert_uint_lt(len, sizeof(ln));
        memcpy(ln, p, len);
        ln[len] = '\0';
        p = eol + 1;
        if (strncmp(ln, "# HELP ", 7) == 0) continue;
        if (strncmp(ln, "# TYPE ", 7) == 0) {
            char t[16];
            ck_assert_int_eq(sscanf(ln + 7, "%95s %15s", name, t), 2);
            for (int i = 0; i < nd; i++) ck_assert_msg(strcmp(declared[i], name) != 0, "%s", name);
            ck_assert_int_lt(nd, 256);
            snprintf(declared[nd], sizeof(declared[nd]), "%s", name);
            snprintf(type[nd], sizeof(type[nd]), "%s", t);
            nd++;
            continue;
        }
        ck_assert_msg(ln[0] != '#' && ln[0] != '\0', "stray line '%s'", ln);
        {
            size_t k = strcspn(ln, "{ ");
            const char *val = strrchr(ln, ' ');
            char *end;
            bool ok = false;
            ck_assert_uint_lt(k, sizeof(name));
            memcpy(name, ln, k);
            name[k] = '\0';
            ck_assert_ptr_nonnull(val);
            strtod(val + 1, &end);
            ck_assert_msg(*end == '\0', "value of '%s'", ln);
            for (int i = nd - 1; i >= 0 && !ok; i--) {
                size_t dl = strlen(declared[i]);
                if (strcmp(name, declared[i]) == 0)
                    ok = strcmp(type[i], "histogram") != 0;
                else if (strcmp(type[i], "histogram") == 0 && strncmp(name, declared[i], dl) == 0)
                    ok = !strcmp(name + dl, "_bucket") || !strcmp(name + dl, "_sum") ||
                         !strcmp(name + dl, "_count");
            }
            ck_assert_msg(ok, "sample '%s' has no family declared before it", ln);
        }
    }
    ck_assert_int_gt(nd, 30);
}

/* The module alone: counts and the text they are written as. */

static char *write_all(pf_metrics *m) {
    pf_metrics_gauges g;
    pf_jsonw w;
    memset(&g, 0, sizeof(g));
    g.workers = 3;
    g.maps = 2;
    g.memory[PF_MEM_SESSIONS] = 4096;
    g.memory_budget = 1 << 20;
    pf_jsonw_init(&w, 0);
    pf_metrics_write(m, &g, &w);
    return tu_jsonw_text(&w);
}

START_TEST(metrics_counts_and_text) {
    pf_metrics m;
    char *t;
    pf_metrics_init(&m);
    for (int i = 0; i < 4; i++) pf_metrics_request_begin(&m);
    ck_assert_uint_eq(pf_metrics_in_flight(&m), 4);
    pf_metrics_request_end(&m, PF_ROUTE_PATH_POST, 200, 40);     /* first bucket */
    pf_metrics_request_end(&m, PF_ROUTE_PATH_POST, 422, 3000);   /* le 0.005 */
    pf_metrics_request_end(&m, PF_ROUTE_SESSION_STREAM, 101, 7); /* an upgrade: its own status */
    pf_metrics_request_end(&m, PF_ROUTE_HEALTHZ, 418, 7);        /* not a listed status */
    ck_assert_uint_eq(pf_metrics_in_flight(&m), 0);
    pf_metrics_count_search(&m, PF_ALGO_ASTAR, PF_OK, 10, 40);
    pf_metrics_count_search(&m, PF_ALGO_ASTAR, PF_NO_PATH, 5, 70000);
    pf_metrics_count_search(&m, PF_ALGO_JPS, PF_EBUDGET, 1, 1);
    pf_metrics_count_search(&m, PF_ALGO_HPA, PF_ECANCELED, 1, 1);
    pf_metrics_count_search(&m, PF_ALGO_HPA, PF_EUNSUPPORTED, 0, 1);
    pf_metrics_count_cache(&m, true);
    pf_metrics_count_cache(&m, false);
    pf_metrics_count_cache(&m, false);
    pf_metrics_observe_queue_wait(&m, PF_JOB_SEARCH, 30);
    pf_metrics_observe_queue_wait(&m, PF_JOB_BUILD, 2000000);
    pf_metrics_observe_map_build(&m, 61000000); /* past the last bound: +Inf only */
    pf_metrics_observe_map_repair(&m, 900);
    pf_metrics_count_plan(&m, PF_PLAN_INITIAL, PF_OK, 7, 100);
    pf_metrics_count_plan(&m, PF_PLAN_REPAIR, PF_EBLOCKED, 3, 100);
    pf_metrics_count_plan(&m, PF_PLAN_UNCHANGED, PF_ENOMEM, 0, 100);
    pf_metrics_count_rebase(&m, true);
    pf_metrics_count_rebase(&m, false);
    pf_metrics_count_rebase(&m, false);
    pf_metrics_count_ws_upgrade(&m);
    pf_metrics_count_ws_message(&m, false, 0x1, 18);
    pf_metrics_count_ws_message(&m, false, 0x9, 2);
    pf_metrics_count_ws_message(&m, true, 0xA, 2);
    pf_metrics_count_ws_message(&m, true, 0x8, 2);
    t = write_all(&m);
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_requests_total{route=\"path_post\",status=\"200\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_requests_total{route=\"path_post\",status=\"422\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_requests_total{route=\"session_stream\",status=\"101\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_requests_total{route=\"healthz\",status=\"other\"} 1\n"));
    ck_assert_ptr_null(strstr(t, "route=\"readyz\"")); /* no request, no line */
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_bucket{route=\"path_post\",le=\"5e-05\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_bucket{route=\"path_post\",le=\"0.0025\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_bucket{route=\"path_post\",le=\"0.005\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_bucket{route=\"path_post\",le=\"+Inf\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_request_duration_seconds_count{route=\"path_post\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_searches_total{algorithm=\"astar\",outcome=\"found\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_searches_total{algorithm=\"astar\",outcome=\"unreachable\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_searches_total{algorithm=\"jps\",outcome=\"budget\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_searches_total{algorithm=\"hpa\",outcome=\"deadline\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_searches_total{algorithm=\"hpa\",outcome=\"error\"} 1\n"));
    ck_assert_ptr_null(strstr(t, "pathd_searches_total{algorithm=\"dstar\"")); /* plans */
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_search_duration_seconds_bucket{algorithm=\"astar\",le=\"5e-05\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_search_duration_seconds_bucket{algorithm=\"astar\",le=\"0.1\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_search_duration_seconds_sum{algorithm=\"astar\"} 0.070040\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_expanded_total{algorithm=\"astar\"} 15\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_expanded_total{algorithm=\"dstar\"} 10\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_cache_hits_total 1\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_cache_misses_total 2\n"));
    ck_assert_ptr_null(strstr(t, "_ratio")); /* no derived ratio */
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_queue_wait_seconds_bucket{kind=\"search\",le=\"5e-05\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_queue_wait_seconds_bucket{kind=\"build\",le=\"1\"} 0\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_queue_wait_seconds_bucket{kind=\"build\",le=\"2.5\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_map_build_duration_seconds_bucket{le=\"60\"} 0\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_map_build_duration_seconds_bucket{le=\"+Inf\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_map_repair_duration_seconds_count 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_session_plans_total{kind=\"initial\",outcome=\"found\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_session_plans_total{kind=\"repair\",outcome=\"unreachable\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_session_plans_total{kind=\"unchanged\",outcome=\"error\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_session_rebases_total{how=\"incremental\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_session_rebases_total{how=\"rebuilt\"} 2\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_ws_upgrades_total 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_ws_messages_total{direction=\"received\",type=\"text\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_ws_messages_total{direction=\"received\",type=\"ping\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_ws_messages_total{direction=\"sent\",type=\"pong\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "pathd_ws_messages_total{direction=\"sent\",type=\"close\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_ws_message_bytes_total{direction=\"received\"} 20\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_ws_message_bytes_total{direction=\"sent\"} 4\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_memory_bytes{kind=\"sessions\"} 4096\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_memory_bytes{kind=\"streams\"} 0\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_memory_budget_bytes 1048576\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_workers 3\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_maps 2\n"));
    ck_assert_ptr_nonnull(strstr(t, "\npathd_requests_in_flight 0\n"));
    ck_assert_ptr_nonnull(strstr(t, "# TYPE pathd_requests_total counter\n"));
    ck_assert_ptr_nonnull(strstr(t, "# TYPE pathd_queue_wait_seconds histogram\n"));
    ck_assert_ptr_nonnull(strstr(t, "pathd_build_info{version=\""));
    ck_assert_ptr_nonnull(strstr(t, "\nprocess_open_fds "));
    check_exposition(t);
    free(t);
    /* A route outside the table counts as none. */
    pf_metrics_request_begin(&m);
    pf_metrics_request_end(&m, PF_ROUTE_COUNT, 404, 1);
    t = write_all(&m);
    ck_assert_ptr_nonnull(strstr(t, "pathd_requests_total{route=\"none\",status=\"404\"} 1\n"));
    free(t);
}
END_TEST

/* The live server. */

START_TEST(metrics_tell_the_story) {
    time_t test_began = time(NULL);
    hc_server s = it_start(ARGS("--workers", "2"));
    char url[160], path[200], *t, series[200];
    int fd, status, op;
    char *msg;
    size_t len;
    double v;

    /* A fresh server: every family is there before its first event. */
    t = scrape(&s);
    check_exposition(t);
    ck_assert(sample(t, "pathd_searches_total{algorithm=\"astar\",outcome=\"found\"}") == 0);
    ck_assert(sample(t, "pathd_queue_wait_seconds_count{kind=\"search\"}") == 0);
    ck_assert(sample(t, "pathd_map_build_duration_seconds_count") == 0);
    ck_assert(sample(t, "pathd_memory_budget_bytes") > 0); /* 3/4 of what pathd may use */
    ck_assert(sample(t, "pathd_memory_bytes{kind=\"maps\"}") == 0);
    ck_assert(strstr(t, "_ratio") == NULL); /* ratios are PromQL's */
    ck_assert_ptr_nonnull(strstr(t, "pathd_build_info{version=\"0.1.0\",api=\"v1\",commit=\""));
    ck_assert(sample(t, "process_open_fds") > 3);
    ck_assert(sample(t, "process_max_fds") >= sample(t, "process_open_fds"));
    ck_assert(sample(t, "process_resident_memory_bytes") > 1e6);
    ck_assert(sample(t, "process_virtual_memory_bytes") >=
              sample(t, "process_resident_memory_bytes"));
    ck_assert(sample(t, "process_threads") >= 2 + 2 + 1); /* workers, I/O threads, hub */
    {
        /* The server started after this test did, and before now (whole
         * seconds: /proc's start time is in clock ticks). */
        double start = sample(t, "process_start_time_seconds");
        ck_assert(start >= (double)test_began - 1 && start <= (double)time(NULL) + 1);
    }
    ck_assert(sample(t, "process_cpu_seconds_total") >= 0);
    free(t);

    /* A build and the map's memory. */
    request(&s, "PUT", "/v1/maps/m", map_json, 201);
    t = scrape(&s);
    ck_assert(sample(t, "pathd_map_build_duration_seconds_count") == 1);
    ck_assert(sample(t, "pathd_map_build_duration_seconds_bucket{le=\"+Inf\"}") == 1);
    ck_assert(sample(t, "pathd_queue_wait_seconds_count{kind=\"build\"}") == 1);
    ck_assert(sample(t, "pathd_memory_bytes{kind=\"maps\"}") > 12 * 8);
    ck_assert(sample(t, "pathd_maps") == 1);
    free(t);

    /* Searches by algorithm and outcome: found, unreachable, budget, error
     * (an inadmissible heuristic); a cache hit is not a search. */
    path_query(&s, "m", "{\"start\":[0,7],\"goal\":[11,7],\"algorithm\":\"astar\"}", 200);
    path_query(&s, "m", "{\"start\":[0,7],\"goal\":[11,7],\"algorithm\":\"astar\"}", 200);
    path_query(&s, "m", "{\"start\":[0,7],\"goal\":[9,4],\"algorithm\":\"astar\"}", 200);
    path_query(&s, "m", "{\"start\":[0,7],\"goal\":[9,4]}", 200); /* auto, the default */
    path_query(&s, "m", "{\"start\":[0,7],\"goal\":[11,7],\"algorithm\":\"jps\"}", 200);
    path_query(&s, "m",
               "{\"start\":[0,7],\"goal\":[11,7],\"algorithm\":\"dijkstra\",\"max_expanded\":3}",
               200);
    path_query(&s, "m",
               "{\"start\":[0,7],\"goal\":[11,7],\"algorithm\":\"astar\",\"heuristic\":"
               "\"manhattan\"}",
               422);
    t = scrape(&s);
    ck_assert(sample(t, "pathd_searches_total{algorithm=\"astar\",outcome=\"found\"}") == 1);
    ck_assert(sample(t, "pathd_searches_total{algorithm=\"astar\",outcome=\"unreachable\"}") == 1);
    ck_assert(sample(t, "pathd_searches_total{algorithm=\"astar\",outcome=\"error\"}") == 1);
    ck_assert(sample(t, "pathd_searches_total{algorithm=\"auto\",outcome=\"unreachable\"}") == 1);
    ck_assert(sample(t, "pathd_searches_total{algorithm=\"jps\",outcome=\"found\"}") == 1);
    ck_assert(sample(t, "pathd_searches_total{algorithm=\"dijkstra\",outcome=\"budget\"}") == 1);
    ck_assert(sample(t, "pathd_search_duration_seconds_count{algorithm=\"astar\"}") == 3);
    ck_assert(sample(t, "pathd_search_duration_seconds_count{algorithm=\"dijkstra\"}") == 1);
    ck_assert(sample(t, "pathd_expanded_total{algorithm=\"dijkstra\"}") == 3);
    ck_assert(sample(t, "pathd_expanded_total{algorithm=\"astar\"}") > 0);
    ck_assert(sample(t, "pathd_cache_hits_total") == 1);
    ck_assert(sample(t, "pathd_cache_misses_total") >= 4);
    ck_assert(sample(t, "pathd_memory_bytes{kind=\"caches\"}") > 0);
    /* Six went through the queue (the hit answered on the I/O thread):
     * their waits are apart from their search times. */
    ck_assert(sample(t, "pathd_queue_wait_seconds_count{kind=\"search\"}") == 6);
    ck_assert(sample(t, "pathd_queue_wait_seconds_bucket{kind=\"search\",le=\"+Inf\"}") == 6);
    ck_assert(sample(t, "pathd_requests_total{route=\"path_post\",status=\"200\"}") == 6);
    ck_assert(sample(t, "pathd_requests_total{route=\"path_post\",status=\"422\"}") == 1);
    ck_assert(sample(t, "pathd_request_duration_seconds_count{route=\"path_post\"}") == 7);
    free(t);

    /* Deadline: dijkstra across an open 512x512 map cannot finish in 2 ms.
     * A request whose deadline passed while it waited for a worker is
     * answered without a search, so a few tries may be needed. */
    {
        char *text = malloc(600 * 512 + 64), *q = text;
        hc_resp r;
        q += sprintf(q, "type octile\nheight 512\nwidth 512\nmap\n");
        for (int y = 0; y < 512; y++) {
            memset(q, '.', 512);
            q[512] = '\n';
            q += 513;
        }
        *q = '\0';
        r = it_req(&s, "PUT", "/v1/maps/big", "text/x-movingai-map", text);
        ck_assert_int_eq(r.status, 201);
        hc_free(&r);
        free(text);
        for (int i = 0; i < 50; i++) {
            path_query(&s, "big",
                       "{\"start\":[0,0],\"goal\":[511,511],\"algorithm\":\"dijkstra\","
                       "\"deadline_ms\":2}",
                       504);
            t = scrape(&s);
            v = sample(t, "pathd_searches_total{algorithm=\"dijkstra\",outcome=\"deadline\"}");
            free(t);
            if (v >= 1) break;
        }
        ck_assert_msg(v >= 1, "no search was stopped by its deadline in 50 tries");
        request(&s, "DELETE", "/v1/maps/big", NULL, 204);
    }

    /* Sessions: the first plan, a read (nothing changed: answered from the
     * kept route, no plan), a repair after an update, an incremental
     * rebase after a PATCH, a rebuild past the change log. */
    {
        hc_resp r = it_req(&s, "POST", "/v1/maps/m/sessions", "application/json",
                           "{\"start\":[0,7],\"goal\":[11,7]}");
        cJSON *j;
        ck_assert_int_eq(r.status, 201);
        j = cJSON_ParseWithLength(r.body, r.body_len);
        ck_assert_ptr_nonnull(j);
        snprintf(url, sizeof(url), "/v1/maps/m/sessions/%s", it_str(j, "session_id"));
        cJSON_Delete(j);
        hc_free(&r);
    }
    request(&s, "GET", url, NULL, 200);
    snprintf(path, sizeof(path), "%s/updates", url);
    request(&s, "POST", path, "{\"cells\":[{\"x\":7,\"y\":1,\"cost\":0}]}", 200);
    request(&s, "PATCH", "/v1/maps/m", "{\"doors\":[{\"id\":\"gate\",\"open\":false}]}", 200);
    request(&s, "GET", url, NULL, 200);
    t = scrape(&s);
    ck_assert(sample(t, "pathd_session_plans_total{kind=\"initial\",outcome=\"found\"}") == 1);
    ck_assert(sample(t, "pathd_session_plans_total{kind=\"unchanged\",outcome=\"found\"}") == 0);
    ck_assert(sample(t, "pathd_session_replans_total{reason=\"initial\"}") == 1);
    /* The private wall and the closed gate each replanned: the route ran
     * through the cell, or the map under it changed. */
    ck_assert(sample(t, "pathd_session_replans_total{reason=\"map_changed\"}") +
                  sample(t, "pathd_session_replans_total{reason=\"blocked\"}") ==
              2);
    ck_assert(sample(t, "pathd_session_replans_skipped_total{reason=\"unchanged\"}") == 1);
    ck_assert(sample(t, "pathd_session_goal_moves_total{how=\"incremental\"}") == 0);
    ck_assert(sample(t, "pathd_stream_session_answers_total{kind=\"full\"}") == 0);
    ck_assert(sample(t, "pathd_session_plans_total{kind=\"repair\",outcome=\"found\"}") == 2);
    ck_assert(sample(t, "pathd_session_plan_duration_seconds_count{kind=\"repair\"}") == 2);
    ck_assert(sample(t, "pathd_session_rebases_total{how=\"incremental\"}") == 1);
    ck_assert(sample(t, "pathd_session_rebases_total{how=\"rebuilt\"}") == 0);
    ck_assert(sample(t, "pathd_expanded_total{algorithm=\"dstar\"}") > 0);
    ck_assert(sample(t, "pathd_map_repair_duration_seconds_count") == 1);
    ck_assert(sample(t, "pathd_sessions") == 1);
    ck_assert(sample(t, "pathd_memory_bytes{kind=\"sessions\"}") > 0);
    free(t);
    /* Further behind than the change log reaches: rebuilt. */
    for (int i = 0; i <= 64; i++) {
        char body[80];
        snprintf(body, sizeof(body), "{\"cells\":[{\"x\":0,\"y\":0,\"cost\":%d}]}", 1 + i % 2);
        request(&s, "PATCH", "/v1/maps/m", body, 200);
    }
    request(&s, "GET", url, NULL, 200);
    t = scrape(&s);
    ck_assert(sample(t, "pathd_session_rebases_total{how=\"rebuilt\"}") == 1);
    ck_assert(sample(t, "pathd_session_plans_total{kind=\"initial\",outcome=\"found\"}") == 2);
    ck_assert(sample(t, "pathd_map_repair_duration_seconds_count") == 66);
    free(t);

    /* A WebSocket stream: the 101 is its own status, the upgrade and every
     * message in both directions are counted, and its memory shows while
     * it is open. */
    snprintf(path, sizeof(path), "%s/stream", url);
    fd = wsc_connect(s.port, path, &status, NULL, 0);
    ck_assert_msg(fd >= 0, "handshake failed: %d", status);
    ck_assert_int_eq(wsc_send(fd, 1, "{\"position\":[1,7]}", 18), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 1);
    free(msg);
    ck_assert_int_eq(wsc_send(fd, 9, "hi", 2), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 10);
    free(msg);
    t = scrape(&s);
    ck_assert(sample(t, "pathd_ws_upgrades_total") == 1);
    /* The upgrade's request ends with its stream (libmicrohttpd): no 101
     * yet while it is open. */
    ck_assert(isnan(sample(t, "pathd_requests_total{route=\"session_stream\",status=\"101\"}")));
    ck_assert(sample(t, "pathd_streams") == 1);
    ck_assert(sample(t, "pathd_memory_bytes{kind=\"streams\"}") > 0);
    ck_assert(sample(t, "pathd_ws_messages_total{direction=\"received\",type=\"text\"}") == 1);
    ck_assert(sample(t, "pathd_ws_messages_total{direction=\"received\",type=\"ping\"}") == 1);
    ck_assert(sample(t, "pathd_ws_messages_total{direction=\"sent\",type=\"text\"}") == 1);
    ck_assert(sample(t, "pathd_ws_messages_total{direction=\"sent\",type=\"pong\"}") == 1);
    ck_assert(sample(t, "pathd_ws_message_bytes_total{direction=\"received\"}") == 18 + 2);
    ck_assert(sample(t, "pathd_ws_message_bytes_total{direction=\"sent\"}") > 2);
    ck_assert(sample(t, "pathd_session_plans_total{kind=\"repair\",outcome=\"found\"}") == 3);
    free(t);
    ck_assert_int_eq(wsc_send(fd, 8, "\x03\xe8", 2), 0);
    ck_assert_int_eq(wsc_recv(fd, &op, &msg, &len), 0);
    ck_assert_int_eq(op, 8);
    free(msg);
    wsc_close(fd);
    await(&s, "pathd_ws_messages_total{direction=\"sent\",type=\"close\"}", 1);
    await(&s, "pathd_requests_total{route=\"session_stream\",status=\"101\"}", 1);
    await_at_most(&s, "pathd_streams", 0);
    await_at_most(&s, "pathd_memory_bytes{kind=\"streams\"}", 0);
    t = scrape(&s);
    ck_assert(sample(t, "pathd_ws_messages_total{direction=\"received\",type=\"close\"}") == 1);
    ck_assert(isnan(sample(t, "pathd_requests_total{route=\"session_stream\",status=\"other\"}")));
    free(t);

    /* The session's memory goes with it. */
    request(&s, "DELETE", url, NULL, 204);
    t = scrape(&s);
    ck_assert(sample(t, "pathd_memory_bytes{kind=\"sessions\"}") == 0);
    ck_assert(sample(t, "pathd_sessions") == 0);
    free(t);

    /* The final scrape, for promtool and the dashboard check. */
    t = scrape(&s);
    check_exposition(t);
    snprintf(series, sizeof(series), "%s",
             "pathd_requests_total{route=\"metrics\",status=\"200\"}");
    ck_assert(sample(t, series) >= 10);
    {
        const char *out = getenv("PATHD_METRICS_OUT");
        if (out && *out) {
            FILE *f = fopen(out, "w");
            ck_assert_msg(f != NULL, "cannot write %s", out);
            fputs(t, f);
            ck_assert_int_eq(fclose(f), 0);
        }
    }
    free(t);
    it_stop(&s);
}
END_TEST

TU_SUITE(metrics) {
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("metrics");
    TCase *live = tcase_create("metrics_live");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, metrics_counts_and_text);
    suite_add_tcase(s, tc);
    tcase_set_timeout(live, 120);
    tcase_add_test(live, metrics_tell_the_story);
    suite_add_tcase(s, live);
    return s;
}
