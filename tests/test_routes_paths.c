/* test_routes_paths.c -- server/routes_paths.c over HTTP: path queries, batches, deadlines, a
 * sample of the Moving AI scenarios. */
#include <check.h>
#include <math.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "testutil.h"

START_TEST(routes_paths_post_get_batch) {
    hc_server s = it_start(NULL);
    hc_resp r, r2;
    cJSON *j, *j2, *first;
    const cJSON *path;
    char *b;

    it_put_map(&s, "room", "application/json", it_room_json, 201);
    it_put_map(&s, "island", "application/json", it_island_json, 201);

    /* Around the wall through the gap in the bottom row. */
    b = hc_path_body(0, 0, 9, 0, ",\"algorithm\":\"dijkstra\"");
    r = it_req(&s, "POST", "/v1/maps/room/path", "application/json", b);
    free(b);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert(it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "algorithm"), "dijkstra");
    ck_assert_int_eq((int)it_num(j, "map_version"), 1);
    ck_assert(it_get(j, "stats.expanded") && it_get(j, "stats.time_us"));
    ck_assert(!it_truth(j, "stats.cached"));
    path = it_get(j, "path");
    ck_assert_int_ge(cJSON_GetArraySize(path), 2);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(path, 0), 0)->valueint, 0);
    {
        /* The cost the independent reference search finds on the same map. */
        static const char *const rows[] = {"....#.....", "....#.....", "....#.....", "....#.....",
                                           "....#.....", "....#.....", ".........."};
        pf_grid *g = tu_grid_from_ascii(rows, 7, 8);
        double want = tu_reference_cost(g, (pf_point){0, 0}, (pf_point){9, 0});
        pf_grid_destroy(g);
        ck_assert_double_eq_tol(it_num(j, "cost"), want, 1e-9);
    }

    /* The GET form answers the same path. */
    r2 = it_req(&s, "GET", "/v1/maps/room/path?start=0,0&goal=9,0&algorithm=astar", NULL, NULL);
    ck_assert_int_eq(r2.status, 200);
    j2 = it_json(&r2);
    ck_assert_double_eq_tol(it_num(j2, "cost"), it_num(j, "cost"), 1e-9);
    ck_assert_str_eq(it_str(j2, "algorithm"), "astar");
    ck_assert(!it_truth(j2, "stats.cached"));
    first = j2;
    hc_free(&r2);
    /* Asked again: from the cache. */
    r2 = it_req(&s, "GET", "/v1/maps/room/path?start=0,0&goal=9,0&algorithm=astar", NULL, NULL);
    j2 = it_json(&r2);
    ck_assert(it_truth(j2, "stats.cached"));
    ck_assert_int_eq((int)it_num(j2, "stats.expanded"), 0);
    /* The cache holds the serialized answer: the same bytes, cell by cell. */
    ck_assert(cJSON_Compare(it_get(j2, "cost"), it_get(first, "cost"), true));
    ck_assert(cJSON_Compare(it_get(j2, "path"), it_get(first, "path"), true));
    ck_assert_str_eq(it_str(j2, "algorithm"), "astar");
    ck_assert_int_eq((int)it_num(j2, "map_version"), (int)it_num(first, "map_version"));
    cJSON_Delete(first);
    cJSON_Delete(j2);
    hc_free(&r2);
    /* ... and the hit shows in /v1/info. */
    r2 = it_req(&s, "GET", "/v1/info", NULL, NULL);
    j2 = it_json(&r2);
    ck_assert(it_num(j2, "cache.hits") >= 1);
    ck_assert(it_num(j2, "cache.hit_ratio") > 0);
    cJSON_Delete(j2);
    hc_free(&r2);
    /* cache:false bypasses it. */
    r2 = it_req(&s, "GET", "/v1/maps/room/path?start=0,0&goal=9,0&algorithm=astar&cache=false",
                NULL, NULL);
    j2 = it_json(&r2);
    ck_assert(!it_truth(j2, "stats.cached"));
    cJSON_Delete(j2);
    hc_free(&r2);
    cJSON_Delete(j);
    hc_free(&r);

    /* Every algorithm answers; debug adds the expanded cells; smooth gives
     * fewer waypoints. */
    {
        static const char *const algos[] = {"bfs", "dijkstra", "astar", "weighted", "greedy"};
        for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
            char extra[96];
            snprintf(extra, sizeof(extra), ",\"algorithm\":\"%s\",\"debug\":true", algos[i]);
            b = hc_path_body(0, 0, 9, 6, extra);
            r = it_req(&s, "POST", "/v1/maps/room/path", NULL, b);
            free(b);
            ck_assert_msg(r.status == 200, "%s: %d %s", algos[i], r.status, r.body);
            j = it_json(&r);
            ck_assert(it_truth(j, "found"));
            ck_assert_str_eq(it_str(j, "algorithm"), algos[i]);
            ck_assert_int_gt(cJSON_GetArraySize(it_get(j, "expanded_cells")), 0);
            ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "expanded_cells")),
                             (int)it_num(j, "stats.expanded"));
            cJSON_Delete(j);
            hc_free(&r);
        }
    }
    b = hc_path_body(0, 0, 9, 6, ",\"smooth\":true,\"weight\":2");
    r = it_req(&s, "POST", "/v1/maps/room/path", "application/json", b);
    free(b);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert_int_le(cJSON_GetArraySize(it_get(j, "path")), 4);
    cJSON_Delete(j);
    hc_free(&r);

    /* Without an algorithm the map's default runs: auto, and the answer
     * says which search it picked. */
    r = it_req(&s, "GET", "/v1/maps/room", NULL, NULL);
    j = it_json(&r);
    {
        const char *ran;
        ck_assert_str_eq(it_str(j, "default_algorithm"), "auto");
        hc_free(&r);
        r = it_req(&s, "GET", "/v1/maps/room/path?start=0,0&goal=9,6", NULL, NULL);
        ck_assert_int_eq(r.status, 200);
        j2 = it_json(&r);
        ran = it_str(j2, "algorithm");
        ck_assert_msg(strcmp(ran, "jps") == 0 || strcmp(ran, "astar") == 0 ||
                          strcmp(ran, "hpa") == 0,
                      "auto ran '%s'", ran);
        cJSON_Delete(j2);
    }
    cJSON_Delete(j);
    hc_free(&r);

    /* Unreachable: 200 with found:false. */
    b = hc_path_body(0, 0, 7, 4, NULL);
    r = it_req(&s, "POST", "/v1/maps/island/path", "application/json", b);
    free(b);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert(!it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "reason"), "unreachable");
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "path")), 0);
    cJSON_Delete(j);
    hc_free(&r);

    /* A node budget that runs out: found:false, reason node_budget. */
    b = hc_path_body(0, 0, 9, 0, ",\"algorithm\":\"dijkstra\",\"max_expanded\":3");
    r = it_req(&s, "POST", "/v1/maps/room/path", "application/json", b);
    free(b);
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    ck_assert(!it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "reason"), "node_budget");
    cJSON_Delete(j);
    hc_free(&r);

    /* Batch: answers in order; a bad query gets its own error slot. */
    r = it_req(&s, "POST", "/v1/maps/room/paths", "application/json",
               "{\"queries\":[{\"start\":[0,0],\"goal\":[9,0]},"
               "{\"start\":[0,0],\"goal\":[4,0],\"algorithm\":\"bfs\"},"
               "{\"start\":[0,0],\"goal\":[50,0]},"
               "{\"start\":[1,1],\"goal\":[1,1]}],\"deadline_ms\":5000}");
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    {
        const cJSON *res = it_get(j, "results");
        ck_assert_int_eq(cJSON_GetArraySize(res), 4);
        ck_assert(it_truth(cJSON_GetArrayItem(res, 0), "found"));
        ck_assert_int_eq((int)it_num(cJSON_GetArrayItem(res, 1), "status"), 422);
        ck_assert_str_eq(it_str(cJSON_GetArrayItem(res, 1), "error.field"), "queries[1].goal");
        ck_assert_str_eq(it_str(cJSON_GetArrayItem(res, 1), "error.code"), "blocked");
        ck_assert_str_eq(it_str(cJSON_GetArrayItem(res, 2), "error.code"), "off_map");
        ck_assert_double_eq_tol(it_num(cJSON_GetArrayItem(res, 3), "cost"), 0, 1e-12);
        ck_assert_int_eq((int)it_num(j, "map_version"), 1);
    }
    cJSON_Delete(j);
    hc_free(&r);

    /* A batch that asks the same query twice: the second answer comes from
     * the cache inside the batch and is the same answer, well-formed. */
    r = it_req(&s, "POST", "/v1/maps/room/paths", "application/json",
               "{\"queries\":[{\"start\":[0,1],\"goal\":[9,2],\"algorithm\":\"astar\"},"
               "{\"start\":[0,1],\"goal\":[9,2],\"algorithm\":\"astar\"}]}");
    ck_assert_int_eq(r.status, 200);
    j = it_json(&r);
    {
        const cJSON *res = it_get(j, "results");
        const cJSON *a = cJSON_GetArrayItem(res, 0), *c = cJSON_GetArrayItem(res, 1);
        ck_assert_int_eq(cJSON_GetArraySize(res), 2);
        ck_assert(!it_truth(a, "stats.cached"));
        ck_assert(it_truth(c, "stats.cached"));
        ck_assert(it_truth(c, "found"));
        ck_assert(cJSON_Compare(it_get(a, "path"), it_get(c, "path"), true));
        ck_assert(cJSON_Compare(it_get(a, "cost"), it_get(c, "cost"), true));
    }
    cJSON_Delete(j);
    hc_free(&r);
    it_stop(&s);
}
END_TEST

START_TEST(routes_paths_deadline_stops_search) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-batch", "1000"));
    char *map = it_open_map_text(512, 512), *batch = it_slow_batch(1000, 300), *b;
    hc_resp r;

    it_put_map(&s, "open", "text/x-movingai-map", map, 201);
    /* Dijkstra across the map with debug takes far more than 1 ms. */
    b = hc_path_body(0, 0, 255, 255,
                     ",\"algorithm\":\"dijkstra\",\"debug\":true,\"deadline_ms\":1");
    r = it_req(&s, "POST", "/v1/maps/open/path", "application/json", b);
    free(b);
    it_expect_error(&r, 504, "deadline_exceeded", NULL);
    hc_free(&r);
    /* 1000 searches take many seconds (each expands the whole map); the
     * 300 ms deadline ends them: the answer is the deadline's 504, not the
     * 200 a batch that ran to its end would have. */
    r = it_req(&s, "POST", "/v1/maps/open/paths", "application/json", batch);
    it_expect_error(&r, 504, "deadline_exceeded", NULL);
    hc_free(&r);
    /* The server default deadline applies when the request sets none. */
    free(map);
    free(batch);
    it_stop(&s);
}
END_TEST

/* Moving AI: a sample of every shared map's scenarios over HTTP. Sample size
 * from PATHD_HTTP_SCEN_SAMPLE (default 6 per map). */
START_TEST(routes_paths_movingai_sampled_optimal) {
    const char *dir;
    const char *algos[] = {"astar", "jps", "hpa", "auto", "subgoal"};
    double worst_hpa = 1.0;
    int with_subgoal = 0;
    const char *env = getenv("PATHD_HTTP_SCEN_SAMPLE");
    int per_map = env && *env ? atoi(env) : 6;
    char **list;
    hc_server s;
    uint64_t seed;
    int checked = 0, expected = 0;
    TU_NEED_BENCH_DIR(dir);
    seed = tu_seed("routes_paths_movingai_sampled_optimal", 5);
    list = tu_list_scen(dir);
    ck_assert_ptr_nonnull(list);
    s = it_start(ARGS("--workers", "2", "--max-map-cells", "16777216"));
    for (char **f = list; *f; f++) {
        char path[4096], mapname[256], id[64], url[128];
        size_t len, mlen;
        char *scentext, *maptext;
        bool has_subgoal;
        pf_scen sc;
        pf_parse_error perr;
        hc_resp r;
        snprintf(path, sizeof(path), "%s/%s", dir, *f);
        scentext = tu_read_file(path, &len);
        ck_assert_ptr_nonnull(scentext);
        ck_assert_int_eq(pf_scen_parse(scentext, len, 0, &sc, &perr), PF_OK);
        free(scentext);
        snprintf(mapname, sizeof(mapname), "%.*s", (int)(strlen(*f) - 5), *f);
        snprintf(path, sizeof(path), "%s/%s", dir, mapname);
        maptext = tu_read_file(path, &mlen);
        ck_assert_ptr_nonnull(maptext);
        snprintf(id, sizeof(id), "scen%d", (int)(f - list));
        snprintf(url, sizeof(url), "/v1/maps/%s", id);
        ck_assert_int_eq(
            hc_request(s.port, "PUT", url, "text/x-movingai-map", maptext, mlen, NULL, &r), 0);
        ck_assert_msg(r.status == 201, "%s: %d %s", mapname, r.status, r.body);
        hc_free(&r);
        free(maptext);
        {
            /* subgoal runs where the map got its hierarchy (the map info
             * says), and is refused, naming the field, where not. */
            cJSON *info = it_call(&s, "GET", url, NULL, NULL, 200);
            has_subgoal = it_truth(info, "subgoal.built");
            with_subgoal += has_subgoal;
            /* the core: none without a hierarchy, at most all its subgoals */
            ck_assert(it_num(info, "subgoal.core") >= 0 &&
                      it_num(info, "subgoal.core") <= it_num(info, "subgoal.subgoals"));
            if (!has_subgoal) ck_assert(it_num(info, "subgoal.core") == 0);
            cJSON_Delete(info);
        }
        if (sc.count > 0) expected += per_map * (int)(sizeof(algos) / sizeof(algos[0]));
        for (int k = 0; k < per_map && sc.count > 0; k++) {
            const pf_scen_entry *e = &sc.entries[tu_below(&seed, (uint32_t)sc.count)];
            for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
                char body[256];
                cJSON *j;
                snprintf(body, sizeof(body),
                         "{\"start\":[%d,%d],\"goal\":[%d,%d],\"algorithm\":\"%s\","
                         "\"cache\":false,\"deadline_ms\":3600000}",
                         (int)e->start.x, (int)e->start.y, (int)e->goal.x, (int)e->goal.y,
                         algos[a]);
                snprintf(url, sizeof(url), "/v1/maps/%s/path", id);
                r = it_req(&s, "POST", url, "application/json", body);
                if (strcmp(algos[a], "subgoal") == 0 && !has_subgoal) {
                    ck_assert_msg(r.status == 422 && strstr(r.body, "\"unsupported\"") &&
                                      strstr(r.body, "\"algorithm\""),
                                  "%s subgoal without its hierarchy: %d %s", mapname, r.status,
                                  r.body);
                    hc_free(&r);
                    checked++;
                    continue;
                }
                ck_assert_msg(r.status == 200, "%s %s: %d %s", mapname, algos[a], r.status, r.body);
                if (strcmp(algos[a], "subgoal") == 0)
                    ck_assert_msg(strstr(r.body, "\"algorithm\":\"subgoal\""), "%s: %s", mapname,
                                  r.body);
                j = it_json(&r);
                ck_assert_msg(it_truth(j, "found"), "%s: no path", mapname);
                /* auto answers exactly when it ran an exact search, and
                 * within hpa's bound when it ran hpa. */
                if (strcmp(algos[a], "hpa") == 0 ||
                    (strcmp(algos[a], "auto") == 0 && strcmp(it_str(j, "algorithm"), "hpa") == 0)) {
                    /* Near-optimal: never below the optimum, within 5%. */
                    double c = it_num(j, "cost");
                    ck_assert_msg(c >= e->optimal - fmax(1e-3, 1e-5 * e->optimal) &&
                                      c <= 1.05 * e->optimal + 1e-3,
                                  "%s hpa: cost %.6f, optimum %.6f", mapname, c, e->optimal);
                    if (e->optimal > 0 && c / e->optimal > worst_hpa) worst_hpa = c / e->optimal;
                    cJSON_Delete(j);
                    hc_free(&r);
                    checked++;
                    continue;
                }
                ck_assert_msg(fabs(it_num(j, "cost") - e->optimal) <= fmax(1e-3, 1e-5 * e->optimal),
                              "%s %s (%d,%d)->(%d,%d): cost %.6f, optimum %.6f", mapname, algos[a],
                              (int)e->start.x, (int)e->start.y, (int)e->goal.x, (int)e->goal.y,
                              it_num(j, "cost"), e->optimal);
                cJSON_Delete(j);
                hc_free(&r);
                checked++;
            }
        }
        pf_scen_free(&sc);
        r = it_req(&s, "DELETE", url, NULL, NULL); /* url is .../path: 405; delete the map */
        hc_free(&r);
        snprintf(url, sizeof(url), "/v1/maps/%s", id);
        r = it_req(&s, "DELETE", url, NULL, NULL);
        ck_assert_int_eq(r.status, 204);
        hc_free(&r);
    }
    fprintf(stderr,
            "http_movingai_sampled_optimal: %d answers checked (astar/jps/subgoal optimal, hpa "
            "worst %.4f x optimum; %d maps with a subgoal hierarchy)\n",
            checked, worst_hpa, with_subgoal);
    /* How many maps keep one depends on auto's timings at upload (it is
     * dropped where no distance bin picks it): test_planner_subgoal.c
     * holds the build and the bound to fixed answers. */
    /* Every algorithm answered every sampled scenario of every map. */
    ck_assert_int_gt(expected, 0);
    ck_assert_int_eq(checked, expected);
    tu_free_list(list);
    it_stop(&s);
}
END_TEST

/* Navmesh paths over HTTP: POST, GET, batches with an error slot, both
 * algorithms, the cache, search boxes, and the point forms of the two map
 * kinds. */
START_TEST(routes_paths_navmesh) {
    hc_server s = it_start(ARGS("--nav-max-search-extent", "10"));
    const float a[3] = {1.5f, 0, 1.5f}, b[3] = {22.5f, 0, 1.5f};
    char *text = it_open_map_text(24, 9), *env = it_nav_envelope(text, NULL);
    cJSON *j, *k;
    float p[3];
    it_put_map(&s, "n", "application/json", env, 201);
    it_put_map(&s, "g", "text/x-movingai-map", text, 201);
    free(env);
    free(text);

    /* The wall across row 4 has its gap at the right end: round it. */
    j = it_nav_path(&s, "n", a, (const float[3]){1.5f, 0, 7.5f}, NULL);
    ck_assert(it_truth(j, "found") && !it_truth(j, "partial") && it_truth(j, "exact"));
    ck_assert_str_eq(it_str(j, "algorithm"), "polyanya");
    ck_assert_int_ge(it_nav_npoints(j), 4);
    it_nav_point(j, 0, p);
    ck_assert_float_eq_tol(p[0], 1.5f, 1e-3f);
    ck_assert_float_eq_tol(p[2], 1.5f, 1e-3f);
    for (int i = 0; i < it_nav_npoints(j); i++) {
        it_nav_point(j, i, p);
        ck_assert_float_le(p[1], 0.5f); /* on the floor */
    }
    ck_assert_double_gt(it_num(j, "length"), 2 * 21.0);
    ck_assert_double_eq_tol(it_num(j, "cost"), it_num(j, "length"), 1e-6);
    ck_assert(!it_truth(j, "stats.cached"));
    k = it_nav_path(&s, "n", a, (const float[3]){1.5f, 0, 7.5f}, NULL);
    ck_assert(it_truth(k, "stats.cached"));
    ck_assert_double_eq(it_num(k, "length"), it_num(j, "length"));
    cJSON_Delete(k);
    /* Detour's A* over edge midpoints: never shorter than the optimum. */
    k = it_nav_path(&s, "n", a, (const float[3]){1.5f, 0, 7.5f},
                    ",\"algorithm\":\"detour\",\"cache\":false");
    ck_assert_str_eq(it_str(k, "algorithm"), "detour");
    ck_assert(it_truth(k, "found") && !it_truth(k, "exact"));
    ck_assert_double_ge(it_num(k, "length"), it_num(j, "length") - 1e-4);
    cJSON_Delete(k);
    /* The query-string form. */
    k = it_call(&s, "GET", "/v1/maps/n/path?start=1.5,0,1.5&goal=1.5,0,7.5&cache=false", NULL, NULL,
                200);
    ck_assert_double_eq_tol(it_num(k, "length"), it_num(j, "length"), 1e-4);
    cJSON_Delete(k);
    cJSON_Delete(j);

    /* A batch: one answer a query, a slot for the one that fails. */
    j = it_call(&s, "POST", "/v1/maps/n/paths", "application/json",
                "{\"queries\":[{\"start\":[1.5,0,1.5],\"goal\":[22.5,0,1.5]},"
                "{\"start\":[99,0,1],\"goal\":[1,0,1]},"
                "{\"start\":[1.5,0,1.5],\"goal\":[1.5,0,7.5],\"algorithm\":\"detour\"}]}",
                200);
    k = cJSON_GetObjectItemCaseSensitive(j, "results");
    ck_assert_int_eq(cJSON_GetArraySize(k), 3);
    ck_assert_double_eq_tol(it_num(cJSON_GetArrayItem(k, 0), "length"), 21.0, 1e-3);
    ck_assert_int_eq((int)it_num(cJSON_GetArrayItem(k, 1), "status"), 422);
    ck_assert_str_eq(it_str(cJSON_GetArrayItem(k, 1), "error.code"), "blocked");
    ck_assert_str_eq(it_str(cJSON_GetArrayItem(k, 1), "error.field"), "queries[1].start");
    ck_assert(it_truth(cJSON_GetArrayItem(k, 2), "found"));
    ck_assert_int_eq((int)it_num(j, "map_version"), 1);
    cJSON_Delete(j);

    /* A point off the mesh, then inside a bigger search box. */
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goal\":[27,0,1.5]}", 422, "blocked", "goal");
    j = it_nav_path(&s, "n", a, (const float[3]){27, 0, 1.5f}, ",\"search_box\":[5,2,1]");
    ck_assert(it_truth(j, "found"));
    it_nav_point(j, it_nav_npoints(j) - 1, p);
    ck_assert_float_lt(p[0], 24.0f);
    cJSON_Delete(j);
    (void)b;
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goal\":[2,0,1],\"search_box\":[11,1,1]}", 422,
                  "invalid_value", "search_box");
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goal\":[2,0,1],\"search_box\":[0,1,1]}", 422,
                  "invalid_value", "search_box");
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goal\":[2,0,1],\"algorithm\":\"jps\"}", 422,
                  "invalid_value", "algorithm");
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1,1],\"goal\":[2,0,1]}", 400, "invalid_request", "start");
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1,0,1],\"goal\":[2,0,1e9]}", 422, "invalid_value", "goal");
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1,0,1],\"goal\":[2,0,1],\"smooth\":true}", 400, "invalid_request",
                  "smooth");
    it_call_error(&s, "GET", "/v1/maps/n/path?start=1,0&goal=2,0,1", NULL, NULL, 400,
                  "invalid_request", "start");
    it_call_error(&s, "POST", "/v1/maps/n/paths", "application/json",
                  "{\"queries\":[{\"start\":[1,0,1],\"goal\":[2,0,1],\"deadline_ms\":5}]}", 400,
                  "invalid_request", "queries[0].deadline_ms");
    /* A grid map takes [x, y] only. */
    it_call_error(&s, "POST", "/v1/maps/g/path", "application/json",
                  "{\"start\":[1,0,1],\"goal\":[2,0,1]}", 400, "invalid_request", "start");
    it_stop(&s);
}
END_TEST

/* Navmeshes converted from Moving AI maps answer every sampled scenario,
 * no shorter than the straight line and at most 2% longer than the grid's
 * optimum (the any-angle path on the mesh is shorter than an octile one,
 * bar the agent radius kept from corners). */
START_TEST(routes_paths_navmesh_movingai) {
    const char *dir, *maps[] = {"arena.map", "Berlin_0_256.map"};
    hc_server s;
    uint64_t seed;
    int checked = 0;
    double worst = 0;
    TU_NEED_BENCH_DIR(dir);
    seed = tu_seed("routes_paths_navmesh_movingai", 11);
    s = it_start(ARGS("--workers", "2"));
    for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]); m++) {
        char path[4096], id[16];
        size_t len;
        char *text, *env;
        pf_scen sc;
        pf_parse_error perr;
        snprintf(path, sizeof(path), "%s/%s", dir, maps[m]);
        text = tu_read_file(path, &len);
        ck_assert_ptr_nonnull(text);
        env = it_nav_envelope(text, NULL);
        free(text);
        snprintf(id, sizeof(id), "mai%zu", m);
        it_put_map(&s, id, "application/json", env, 201);
        free(env);
        snprintf(path, sizeof(path), "%s/%s.scen", dir, maps[m]);
        text = tu_read_file(path, &len);
        ck_assert_ptr_nonnull(text);
        ck_assert_int_eq(pf_scen_parse(text, len, 0, &sc, &perr), PF_OK);
        free(text);
        for (int k = 0; k < 12 && sc.count > 0; k++) {
            const pf_scen_entry *e = &sc.entries[tu_below(&seed, (uint32_t)sc.count)];
            const float a[3] = {(float)e->start.x + 0.5f, 0, (float)e->start.y + 0.5f};
            const float b[3] = {(float)e->goal.x + 0.5f, 0, (float)e->goal.y + 0.5f};
            double straight = hypot(a[0] - b[0], a[2] - b[2]), l;
            cJSON *j = it_nav_path(&s, id, a, b, ",\"cache\":false");
            ck_assert_msg(it_truth(j, "found"), "%s (%d,%d)->(%d,%d): not found", maps[m],
                          (int)e->start.x, (int)e->start.y, (int)e->goal.x, (int)e->goal.y);
            l = it_num(j, "length");
            ck_assert_msg(l >= straight - 1e-3 && l <= 1.02 * e->optimal + 1e-3,
                          "%s (%d,%d)->(%d,%d): length %.4f, straight %.4f, optimum %.4f", maps[m],
                          (int)e->start.x, (int)e->start.y, (int)e->goal.x, (int)e->goal.y, l,
                          straight, e->optimal);
            if (e->optimal > 0 && l / e->optimal > worst) worst = l / e->optimal;
            cJSON_Delete(j);
            checked++;
        }
        pf_scen_free(&sc);
    }
    fprintf(stderr, "routes_paths_navmesh_movingai: %d answers, worst length/optimum %.4f\n",
            checked, worst);
    it_stop(&s);
}
END_TEST

/* The grid routes and fields a navmesh map has no use for: each a precise
 * error naming the field and why, and the map still answers after. */
START_TEST(routes_paths_navmesh_grid_only) {
    hc_server s = it_start(NULL);
    cJSON *j;
    it_put_nav_open(&s, "n", 12, 6);
    it_call_error(&s, "POST", "/v1/maps/n/flowfield", "application/json", "{\"goal\":[3,3]}", 422,
                  "unsupported", "id");
    it_call_error(&s, "POST", "/v1/maps/n/flowfield", "application/json", "{\"goal\":[3,0,3]}", 422,
                  "unsupported", "id");
    it_call_error(&s, "POST", "/v1/maps/n/table", "application/json", "{\"sources\":[[1,1]]}", 422,
                  "unsupported", "id");
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goal\":[9.5,0,4.5],\"agent_size\":2}", 422,
                  "unsupported", "agent_size");
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goals\":[[9.5,0,4.5]]}", 422, "unsupported", "goals");
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goal\":[9.5,0,4.5],\"partial\":true}", 422,
                  "unsupported", "partial");
    it_call_error(&s, "POST", "/v1/maps/n/path", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goal\":[9.5,0,4.5],\"snap\":true}", 422, "unsupported",
                  "snap");
    it_call_error(&s, "POST", "/v1/maps/n/paths", "application/json",
                  "{\"queries\":[{\"start\":[1.5,0,1.5],\"goal\":[9.5,0,4.5],"
                  "\"snap_radius\":2}]}",
                  422, "unsupported", "queries[0].snap_radius");
    it_call_error(&s, "GET", "/v1/maps/n/path?start=1.5,0,1.5&goal=9.5,0,4.5&agent_size=2", NULL,
                  NULL, 422, "unsupported", "agent_size");
    it_call_error(&s, "POST", "/v1/maps/n/sessions", "application/json",
                  "{\"start\":[1.5,0,1.5],\"goal\":[9.5,0,4.5],\"agent_size\":2}", 422,
                  "invalid_value", "agent_size");
    j = it_nav_path(&s, "n", (const float[3]){1.5f, 0, 1.5f}, (const float[3]){9.5f, 0, 4.5f},
                    NULL);
    ck_assert(it_truth(j, "found"));
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

START_TEST(routes_paths_goals_agents_partial_snap) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-goals", "3", "--max-agent-size", "3"));
    cJSON *j;
    it_put_map(&s, "u", "application/json", it_gap_map, 201);
    /* Nearest of several goals: auto (the default) has no such form;
     * astar answers. */
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[0,0],\"goals\":[[11,4],[3,0],[0,2]]}", 200);
    ck_assert(it_truth(j, "found"));
    ck_assert_int_eq((int)it_num(j, "goal_index"), 2);
    ck_assert_int_eq((int)it_num(j, "goal.1"), 2);
    ck_assert_double_eq_tol(it_num(j, "cost"), 2.0, 1e-9);
    ck_assert_str_eq(it_str(j, "algorithm"), "astar");
    ck_assert_ptr_nonnull(strstr(it_str(j, "note"), "nearest-goal"));
    cJSON_Delete(j);
    /* The same with dijkstra, and by GET. */
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[0,0],\"goals\":[[11,4],[3,0]],\"algorithm\":\"dijkstra\"}", 200);
    ck_assert_int_eq((int)it_num(j, "goal_index"), 1);
    ck_assert_str_eq(it_str(j, "algorithm"), "dijkstra");
    ck_assert_ptr_null(it_get(j, "note"));
    cJSON_Delete(j);
    {
        hc_resp r = it_req(&s, "GET", "/v1/maps/u/path?start=0,0&goals=11,4;3,0", NULL, NULL);
        ck_assert_int_eq(r.status, 200);
        j = it_json(&r);
        ck_assert_int_eq((int)it_num(j, "goal_index"), 1);
        cJSON_Delete(j);
        hc_free(&r);
    }
    /* A 2x2 agent cannot take the one-cell door: no path below the wall;
     * jps falls back to astar on the agent's grid and says so. */
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[0,0],\"goal\":[0,4],\"agent_size\":2}", 200);
    ck_assert(!it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "reason"), "unreachable");
    ck_assert_int_eq((int)it_num(j, "agent_size"), 2);
    cJSON_Delete(j);
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[0,0],\"goal\":[6,1],\"agent_size\":2,\"algorithm\":\"jps\"}", 200);
    ck_assert(it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "algorithm"), "astar");
    ck_assert_ptr_nonnull(strstr(it_str(j, "note"), "one-cell agents"));
    cJSON_Delete(j);
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[0,0],\"goal\":[0,4]}", 200);
    ck_assert(it_truth(j, "found")); /* one cell fits the door */
    cJSON_Delete(j);
    /* Partial: the closed room; blocked goals too. */
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[0,4],\"goal\":[9,6],\"partial\":true}", 200);
    ck_assert(!it_truth(j, "found"));
    ck_assert(it_truth(j, "partial"));
    ck_assert_str_eq(it_str(j, "reason"), "unreachable");
    ck_assert(it_num(j, "cost") > 0);
    /* (7,6) and (9,4) are both 2 from the goal; (7,6) is the cheaper. */
    ck_assert_int_eq((int)it_num(j, "end.0"), 7);
    ck_assert_int_eq((int)it_num(j, "end.1"), 6);
    cJSON_Delete(j);
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[0,4],\"goal\":[0,3],\"partial\":true}", 200);
    ck_assert(it_truth(j, "partial"));
    ck_assert_str_eq(it_str(j, "reason"), "blocked");
    cJSON_Delete(j);
    /* Snap: an off-map and a blocked endpoint move to the nearest walkable. */
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[-2,0],\"goal\":[0,3],\"snap\":true,\"snap_radius\":3}", 200);
    ck_assert(it_truth(j, "found"));
    ck_assert_int_eq((int)it_num(j, "snapped.start.0"), 0);
    ck_assert_int_eq((int)it_num(j, "snapped.goal.1"), 2);
    ck_assert_int_eq((int)it_num(j, "path.0.0"), 0);
    cJSON_Delete(j);
    /* Cached answers are told apart by their goals. */
    for (int k = 0; k < 2; k++) {
        j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                    k ? "{\"start\":[0,0],\"goals\":[[3,0],[0,2]],\"algorithm\":\"astar\"}"
                      : "{\"start\":[0,0],\"goals\":[[3,0]],\"algorithm\":\"astar\"}",
                    200);
        ck_assert_double_eq_tol(it_num(j, "cost"), k ? 2.0 : 3.0, 1e-9);
        cJSON_Delete(j);
    }
    j = it_call(&s, "POST", "/v1/maps/u/path", "application/json",
                "{\"start\":[0,0],\"goals\":[[3,0]],\"algorithm\":\"astar\"}", 200);
    ck_assert(it_truth(j, "stats.cached"));
    cJSON_Delete(j);
    /* Batches take the new fields per query. */
    j = it_call(&s, "POST", "/v1/maps/u/paths", "application/json",
                "{\"queries\":[{\"start\":[0,0],\"goals\":[[3,0],[0,1]]},"
                "{\"start\":[0,0],\"goal\":[4,0],\"agent_size\":3},"
                "{\"start\":[10,6],\"goal\":[0,0],\"agent_size\":2}]}",
                200);
    ck_assert_int_eq((int)it_num(j, "results.0.goal_index"), 1);
    ck_assert(it_truth(j, "results.1.found"));
    ck_assert_int_eq((int)it_num(j, "results.2.status"), 422);
    ck_assert_str_eq(it_str(j, "results.2.error.field"), "queries[2].start");
    cJSON_Delete(j);
    /* Errors name the field. */
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[0,0],\"goal\":[1,1],\"agent_size\":4}", 422, "invalid_value",
                  "agent_size");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[0,0],\"goals\":[[1,1],[1,2],[1,0],[2,2]]}", 413, "limit_exceeded",
                  "goals");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[0,0],\"goals\":[[1,1],[40,2]]}", 422, "off_map", "goals[1]");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[0,0],\"goals\":[[1,1],[0,3]]}", 422, "blocked", "goals[1]");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[10,6],\"goal\":[1,1],\"agent_size\":2}", 422, "blocked", "start");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[0,0],\"goal\":[1,1],\"goals\":[[1,1]]}", 400, "invalid_request",
                  "goals");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[0,0],\"goal\":[1,1],\"snap_radius\":2}", 422, "invalid_value",
                  "snap_radius");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[0,0],\"goal\":[1,1],\"snap\":true,\"snap_radius\":99}", 422,
                  "invalid_value", "snap_radius");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[-9,0],\"goal\":[1,1],\"snap\":true}", 422, "off_map", "start");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[0,0],\"goals\":[[1,1]],\"algorithm\":\"bfs\"}", 422, "unsupported",
                  "algorithm");
    it_call_error(&s, "POST", "/v1/maps/u/path", "application/json",
                  "{\"start\":[0,0],\"goal\":[1,1],\"partial\":1}", 400, "invalid_request",
                  "partial");
    it_stop(&s);
}
END_TEST

/* Whether fd has bytes to read now (no wait). */
static bool readable_now(int fd) {
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
}

/* The starvation tests' proof, on the pool's counters and the order of the
 * answers, never on the clock. Two long batches (POSTed to `path`, body
 * from batch(deadline_ms)) run on both workers; then one query (query(s),
 * which checks its own 200). The query overtook them when, once its job is
 * counted, the pool completed exactly that one job since both batches ran,
 * expired none, requeued a slice (a batch gave its worker back), and
 * neither batch has answered. A server that keeps the query behind the
 * batches completes a batch (at its deadline) before it and fails that.
 * So does a machine slow enough that a batch ended before the query came
 * in: then the batches' deadline doubles and it is tried again (2 s to
 * 16 s), so a fair server passes on any machine that parses the bodies
 * within seconds, and an unfair one fails all four tries. The batches end
 * at their deadline (504) or, when their work is done first, 200. */
static void expect_query_overtakes_batches(const hc_server *s, const char *name, const char *path,
                                           char *(*batch)(int deadline_ms),
                                           void (*query)(const hc_server *s)) {
    for (int ms = 2000; ms <= 16000; ms *= 2) {
        char *b = batch(ms);
        it_pool c0, c1, c2;
        bool both_ran, overtook = false;
        int slow[2];
        hc_resp r;

        it_wait_pool(s, 0, 0);
        c0 = it_pool_now(s);
        slow[0] = it_send_json_post(s->port, path, b);
        slow[1] = it_send_json_post(s->port, path, b);
        free(b);
        /* Both batches on the workers, unless one already ended. */
        do c1 = it_pool_now(s);
        while (!(c1.running == 2 && c1.queued == 0) && c1.completed == c0.completed &&
               c1.expired == c0.expired);
        both_ran = c1.completed == c0.completed && c1.expired == c0.expired;
        if (both_ran) {
            query(s);
            do /* the query's worker counts it a moment after its answer */
                c2 = it_pool_now(s);
            while (c2.completed == c1.completed && c2.expired == c1.expired);
            overtook = c2.completed == c1.completed + 1 && c2.expired == c1.expired &&
                       c2.requeued > c1.requeued && !readable_now(slow[0]) &&
                       !readable_now(slow[1]);
            fprintf(stderr,
                    "%s starvation: batch deadline %d ms: query %s (completed +%g, expired "
                    "+%g, requeued +%g)\n",
                    name, ms, overtook ? "overtook both batches" : "did not overtake",
                    c2.completed - c1.completed, c2.expired - c1.expired,
                    c2.requeued - c1.requeued);
        } else {
            fprintf(stderr, "%s starvation: batch deadline %d ms: a batch ended before both ran\n",
                    name, ms);
        }
        for (int i = 0; i < 2; i++) {
            ck_assert_int_eq(hc_read(slow[i], &r), 0);
            if (r.status != 200) it_expect_error(&r, 504, "deadline_exceeded", NULL);
            hc_free(&r);
        }
        if (overtook) return;
    }
    ck_abort_msg("%s: in four tries the query never overtook two running batches", name);
}

/* Dijkstra across a 512 x 512 open map, 3000 times: minutes of work. */
static char *grid_batch(int deadline_ms) { return it_slow_batch(3000, deadline_ms); }

static void grid_query(const hc_server *s) {
    char *b = hc_path_body(0, 0, 300, 300,
                           ",\"algorithm\":\"astar\",\"cache\":false,\"deadline_ms\":3600000");
    hc_resp r = it_req(s, "POST", "/v1/maps/open/path", "application/json", b);
    free(b);
    ck_assert_msg(r.status == 200, "%d %.200s", r.status, r.body);
    hc_free(&r);
}

/* Two long grid batches hold both workers; a single query that arrives
 * behind them is answered before either ends: the batches give their
 * workers back between slices. Before, it waited for a batch to end (the
 * issue: 504 after 58 s behind hour-long ones). */
START_TEST(routes_paths_long_batches_do_not_starve_queries) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-batch", "100000"));
    char *map = it_open_map_text(512, 512);
    it_put_map(&s, "open", "text/x-movingai-map", map, 201);
    free(map);
    expect_query_overtakes_batches(&s, "grid", "/v1/maps/open/paths", grid_batch, grid_query);
    it_stop(&s);
}
END_TEST

/* The serpentine navmesh below: 6000 queries from its left edge to its
 * right, each crossing all 60 walls (about 1.5 ms each, released). */
enum { SERP_SIDE = 240, SERP_QUERIES = 6000 };

static char *nav_batch(int deadline_ms) {
    char *b = malloc((size_t)SERP_QUERIES * 80 + 64);
    size_t n = (size_t)sprintf(b, "{\"deadline_ms\":%d,\"queries\":[", deadline_ms);
    for (int i = 0; i < SERP_QUERIES; i++)
        n += (size_t)sprintf(b + n,
                             "%s{\"start\":[1.5,0,%d.5],\"goal\":[%d.5,0,%d.5],\"cache\":false}",
                             i ? "," : "", 1 + i % 100, SERP_SIDE - 2, SERP_SIDE - 2 - i % 100);
    sprintf(b + n, "]}");
    return b;
}

static void nav_query(const hc_server *s) {
    cJSON *j = it_nav_path(s, "n", (const float[3]){1.5f, 0, 1.5f},
                           (const float[3]){SERP_SIDE - 1.5f, 0, SERP_SIDE - 1.5f},
                           ",\"cache\":false,\"deadline_ms\":3600000");
    ck_assert(it_truth(j, "found"));
    cJSON_Delete(j);
}

/* The navmesh twin of the test above, on a serpentine map. Before, a
 * navmesh batch ran to its end or its deadline. */
START_TEST(routes_paths_long_nav_batches_do_not_starve_queries) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-batch", "100000"));
    const int w = SERP_SIDE, h = SERP_SIDE;
    char *text = malloc((size_t)(w + 1) * h + 64), *env;
    size_t len = (size_t)sprintf(text, "type octile\nheight %d\nwidth %d\nmap\n", h, w);

    /* Walls down every fourth column, their gaps at the bottom and the top
     * in turn: the way from one side to the other crosses every one. */
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            bool wall = x % 4 == 3 && ((x / 4) % 2 ? y > 2 : y < h - 3);
            text[len++] = wall ? '@' : '.';
        }
        text[len++] = '\n';
    }
    text[len] = '\0';
    env = it_nav_envelope(text, NULL);
    it_put_map(&s, "n", "application/json", env, 201);
    free(env);
    free(text);
    expect_query_overtakes_batches(&s, "navmesh", "/v1/maps/n/paths", nav_batch, nav_query);
    it_stop(&s);
}
END_TEST

/* A client may not ask for more than max_deadline_ms. */
/* The pool's state, read from /v1/info. */
static void pool_builds(const hc_server *s, int *running, int *queued) {
    hc_resp r = it_req(s, "GET", "/v1/info", NULL, NULL);
    cJSON *j = it_json(&r);
    *running = (int)it_num(j, "pool.running_builds");
    *queued = (int)it_num(j, "pool.queued_builds");
    cJSON_Delete(j);
    hc_free(&r);
}

/* A query whose agent size is new on the map builds that size's grid and
 * hierarchy first: a map build's work, so it runs in the pool's build
 * queue, whose limit (one of two workers) keeps two such queries from
 * holding both workers. Two of them on a 1536x1536 map: one builds, the
 * other waits in the build queue (ends above the map's wall, where both
 * sizes fit), and a query to another map is answered
 * meanwhile by the other worker. Before, both ran as searches and held
 * both workers until they were done. */
START_TEST(routes_paths_agent_builds_run_as_builds) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-map-side", "2048"));
    char *map = it_open_map_text(1536, 1536);
    int fd[2], rb = -1, qb = -1;
    struct timespec t0;
    hc_resp r;
    cJSON *j;
    it_put_map(&s, "big", "text/x-movingai-map", map, 201);
    free(map);
    it_put_map(&s, "room", "application/json", it_room_json, 201);
    it_wait_pool(&s, 0, 0);
    for (int k = 0; k < 2; k++) {
        char body[160];
        snprintf(body, sizeof(body),
                 "{\"start\":[1,1],\"goal\":[1500,700],\"agent_size\":%d,\"algorithm\":"
                 "\"hpa\",\"deadline_ms\":3600000}",
                 2 + k);
        fd[k] = it_send_json_post(s.port, "/v1/maps/big/path", body);
    }
    /* One builds, the other waits for the build slot. */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!(rb == 1 && qb == 1)) {
        ck_assert_msg(it_since(&t0) < 30,
                      "the builds never ran one at a time (%d running, %d "
                      "queued)",
                      rb, qb);
        pool_builds(&s, &rb, &qb);
    }
    /* The other worker answers a query meanwhile. */
    j = it_call(&s, "POST", "/v1/maps/room/path", "application/json",
                "{\"start\":[0,0],\"goal\":[9,0]}", 200);
    ck_assert(it_truth(j, "found"));
    cJSON_Delete(j);
    pool_builds(&s, &rb, &qb);
    ck_assert_int_eq(rb, 1); /* answered while a build held the first worker */
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(hc_read(fd[k], &r), 0);
        ck_assert_msg(r.status == 200, "%d %.200s", r.status, r.body);
        j = it_json(&r);
        ck_assert(it_truth(j, "found"));
        ck_assert_str_eq(it_str(j, "algorithm"), "hpa");
        cJSON_Delete(j);
        hc_free(&r);
        close(fd[k]);
    }
    /* Built now: the same sizes run as searches. */
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    {
        double requeued = it_num(j, "pool.requeued");
        cJSON_Delete(j);
        cJSON_Delete(it_call(&s, "POST", "/v1/maps/big/path", "application/json",
                             "{\"start\":[2,2],\"goal\":[1400,700],\"agent_size\":3,"
                             "\"algorithm\":\"hpa\"}",
                             200));
        j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
        ck_assert_double_eq(it_num(j, "pool.requeued"), requeued);
        cJSON_Delete(j);
    }
    it_stop(&s);
}
END_TEST

START_TEST(routes_paths_max_deadline_ms) {
    hc_server s = it_start(ARGS("--max-deadline-ms", "10000"));
    char *b;
    hc_resp r;
    it_put_map(&s, "room", "application/json", it_room_json, 201);
    b = hc_path_body(0, 0, 9, 6, ",\"deadline_ms\":10001");
    r = it_req(&s, "POST", "/v1/maps/room/path", "application/json", b);
    free(b);
    it_expect_error(&r, 422, "invalid_value", "deadline_ms");
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/room/path?start=0,0&goal=9,6&deadline_ms=3600000", NULL, NULL);
    it_expect_error(&r, 422, "invalid_value", "deadline_ms");
    hc_free(&r);
    r = it_req(&s, "POST", "/v1/maps/room/paths", "application/json",
               "{\"deadline_ms\":20000,\"queries\":[{\"start\":[0,0],\"goal\":[9,6]}]}");
    it_expect_error(&r, 422, "invalid_value", "deadline_ms");
    hc_free(&r);
    b = hc_path_body(0, 0, 9, 6, ",\"deadline_ms\":10000");
    r = it_req(&s, "POST", "/v1/maps/room/path", "application/json", b);
    free(b);
    ck_assert_int_eq(r.status, 200);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/info", NULL, NULL);
    {
        cJSON *j = it_json(&r);
        ck_assert_int_eq((int)it_num(j, "limits.max_deadline_ms"), 10000);
        cJSON_Delete(j);
    }
    hc_free(&r);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_paths) {
    Suite *s = suite_create("routes_paths");
    TCase *tc = tcase_create("routes_paths");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_paths_post_get_batch);
    tcase_add_test(tc, routes_paths_deadline_stops_search);
    tcase_add_test(tc, routes_paths_movingai_sampled_optimal);
    tcase_add_test(tc, routes_paths_navmesh);
    tcase_add_test(tc, routes_paths_navmesh_movingai);
    tcase_add_test(tc, routes_paths_navmesh_grid_only);
    tcase_add_test(tc, routes_paths_goals_agents_partial_snap);
    tcase_add_test(tc, routes_paths_long_batches_do_not_starve_queries);
    tcase_add_test(tc, routes_paths_long_nav_batches_do_not_starve_queries);
    tcase_add_test(tc, routes_paths_max_deadline_ms);
    tcase_add_test(tc, routes_paths_agent_builds_run_as_builds);
    suite_add_tcase(s, tc);
    return s;
}
