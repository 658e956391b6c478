/* test_units.c -- integration tests of the many-units routes on the real
 * server: path requests with goals, agent sizes, partial answers and
 * snapping; flow fields (decoded and walked, cached, dropped by PATCH);
 * distance tables (against single path requests); generated mazes; the
 * session list; the multiplexed session stream; every new limit and field
 * error. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64dec.h"
#include "httpc.h"
#include "itest.h"
#include "testutil.h"
#include "wsc.h"

static cJSON *json_of(const hc_resp *r) {
    cJSON *j = cJSON_ParseWithLength(r->body, r->body_len);
    ck_assert_msg(j != NULL, "response is not JSON: %.300s", r->body);
    return j;
}

static void expect_error(const hc_resp *r, int status, const char *code, const char *field) {
    cJSON *j;
    ck_assert_msg(r->status == status, "expected %d, got %d: %.400s", status, r->status, r->body);
    j = json_of(r);
    ck_assert_str_eq(it_str(j, "error.code"), code);
    if (field) {
        ck_assert_msg(it_get(j, "error.field") != NULL, "no field in %.300s", r->body);
        ck_assert_str_eq(it_str(j, "error.field"), field);
    }
    cJSON_Delete(j);
}

/* POST body to path; 200 (or `expect`) required; the answer as JSON. */
static cJSON *post_ok(const hc_server *s, const char *path, const char *body, int expect) {
    hc_resp r = it_req(s, "POST", path, "application/json", body);
    cJSON *j;
    ck_assert_msg(r.status == expect, "POST %s %s: %d %.400s", path, body, r.status, r.body);
    j = json_of(&r);
    hc_free(&r);
    return j;
}

static void post_err(const hc_server *s, const char *path, const char *body, int status,
                     const char *code, const char *field) {
    hc_resp r = it_req(s, "POST", path, "application/json", body);
    expect_error(&r, status, code, field);
    hc_free(&r);
}

/* A 12x8 map: a wall across row 3 with a one-cell door at x = 5, and a
 * room in the bottom right closed on every side. */
static const char units_map[] =
    "{\"rows\":[\"............\",\"............\",\"............\",\"#####.######\","
    "\"............\",\"........####\",\"........#..#\",\"........####\"]}";

static void put(const hc_server *s, const char *id, const char *body) {
    char path[96];
    hc_resp r;
    snprintf(path, sizeof(path), "/v1/maps/%s", id);
    r = it_req(s, "PUT", path, "application/json", body);
    ck_assert_msg(r.status == 201 || r.status == 200, "PUT %s: %d %s", id, r.status, r.body);
    hc_free(&r);
}

START_TEST(units_path_goals_agents_partial_snap) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-goals", "3", "--max-agent-size", "3"));
    cJSON *j;
    put(&s, "u", units_map);
    /* Nearest of several goals: hpa (the default) has no such form. */
    j = post_ok(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goals\":[[11,4],[3,0],[0,2]]}", 200);
    ck_assert(it_truth(j, "found"));
    ck_assert_int_eq((int)it_num(j, "goal_index"), 2);
    ck_assert_int_eq((int)it_num(j, "goal.1"), 2);
    ck_assert_double_eq_tol(it_num(j, "cost"), 2.0, 1e-9);
    ck_assert_str_eq(it_str(j, "algorithm"), "astar");
    ck_assert_ptr_nonnull(strstr(it_str(j, "note"), "nearest-goal"));
    cJSON_Delete(j);
    /* The same with dijkstra, and by GET. */
    j = post_ok(&s, "/v1/maps/u/path",
                "{\"start\":[0,0],\"goals\":[[11,4],[3,0]],\"algorithm\":\"dijkstra\"}", 200);
    ck_assert_int_eq((int)it_num(j, "goal_index"), 1);
    ck_assert_str_eq(it_str(j, "algorithm"), "dijkstra");
    ck_assert_ptr_null(it_get(j, "note"));
    cJSON_Delete(j);
    {
        hc_resp r = it_req(&s, "GET", "/v1/maps/u/path?start=0,0&goals=11,4;3,0", NULL, NULL);
        ck_assert_int_eq(r.status, 200);
        j = json_of(&r);
        ck_assert_int_eq((int)it_num(j, "goal_index"), 1);
        cJSON_Delete(j);
        hc_free(&r);
    }
    /* A 2x2 agent cannot take the one-cell door: no path below the wall;
     * jps falls back to astar on the agent's grid and says so. */
    j = post_ok(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goal\":[0,4],\"agent_size\":2}", 200);
    ck_assert(!it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "reason"), "unreachable");
    ck_assert_int_eq((int)it_num(j, "agent_size"), 2);
    cJSON_Delete(j);
    j = post_ok(&s, "/v1/maps/u/path",
                "{\"start\":[0,0],\"goal\":[6,1],\"agent_size\":2,\"algorithm\":\"jps\"}", 200);
    ck_assert(it_truth(j, "found"));
    ck_assert_str_eq(it_str(j, "algorithm"), "astar");
    ck_assert_ptr_nonnull(strstr(it_str(j, "note"), "one-cell agents"));
    cJSON_Delete(j);
    j = post_ok(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goal\":[0,4]}", 200);
    ck_assert(it_truth(j, "found")); /* one cell fits the door */
    cJSON_Delete(j);
    /* Partial: the closed room; blocked goals too. */
    j = post_ok(&s, "/v1/maps/u/path", "{\"start\":[0,4],\"goal\":[9,6],\"partial\":true}", 200);
    ck_assert(!it_truth(j, "found"));
    ck_assert(it_truth(j, "partial"));
    ck_assert_str_eq(it_str(j, "reason"), "unreachable");
    ck_assert(it_num(j, "cost") > 0);
    /* (7,6) and (9,4) are both 2 from the goal; (7,6) is the cheaper. */
    ck_assert_int_eq((int)it_num(j, "end.0"), 7);
    ck_assert_int_eq((int)it_num(j, "end.1"), 6);
    cJSON_Delete(j);
    j = post_ok(&s, "/v1/maps/u/path", "{\"start\":[0,4],\"goal\":[0,3],\"partial\":true}", 200);
    ck_assert(it_truth(j, "partial"));
    ck_assert_str_eq(it_str(j, "reason"), "blocked");
    cJSON_Delete(j);
    /* Snap: an off-map and a blocked endpoint move to the nearest walkable. */
    j = post_ok(&s, "/v1/maps/u/path",
                "{\"start\":[-2,0],\"goal\":[0,3],\"snap\":true,\"snap_radius\":3}", 200);
    ck_assert(it_truth(j, "found"));
    ck_assert_int_eq((int)it_num(j, "snapped.start.0"), 0);
    ck_assert_int_eq((int)it_num(j, "snapped.goal.1"), 2);
    ck_assert_int_eq((int)it_num(j, "path.0.0"), 0);
    cJSON_Delete(j);
    /* Cached answers are told apart by their goals. */
    for (int k = 0; k < 2; k++) {
        j = post_ok(&s, "/v1/maps/u/path",
                    k ? "{\"start\":[0,0],\"goals\":[[3,0],[0,2]],\"algorithm\":\"astar\"}"
                      : "{\"start\":[0,0],\"goals\":[[3,0]],\"algorithm\":\"astar\"}",
                    200);
        ck_assert_double_eq_tol(it_num(j, "cost"), k ? 2.0 : 3.0, 1e-9);
        cJSON_Delete(j);
    }
    j = post_ok(&s, "/v1/maps/u/path",
                "{\"start\":[0,0],\"goals\":[[3,0]],\"algorithm\":\"astar\"}", 200);
    ck_assert(it_truth(j, "stats.cached"));
    cJSON_Delete(j);
    /* Batches take the new fields per query. */
    j = post_ok(&s, "/v1/maps/u/paths",
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
    post_err(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goal\":[1,1],\"agent_size\":4}", 422,
             "invalid_value", "agent_size");
    post_err(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goals\":[[1,1],[1,2],[1,0],[2,2]]}", 413,
             "limit_exceeded", "goals");
    post_err(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goals\":[[1,1],[40,2]]}", 422, "off_map",
             "goals[1]");
    post_err(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goals\":[[1,1],[0,3]]}", 422, "blocked",
             "goals[1]");
    post_err(&s, "/v1/maps/u/path", "{\"start\":[10,6],\"goal\":[1,1],\"agent_size\":2}", 422,
             "blocked", "start");
    post_err(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goal\":[1,1],\"goals\":[[1,1]]}", 400,
             "invalid_request", "goals");
    post_err(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goal\":[1,1],\"snap_radius\":2}", 422,
             "invalid_value", "snap_radius");
    post_err(&s, "/v1/maps/u/path",
             "{\"start\":[0,0],\"goal\":[1,1],\"snap\":true,\"snap_radius\":99}", 422,
             "invalid_value", "snap_radius");
    post_err(&s, "/v1/maps/u/path", "{\"start\":[-9,0],\"goal\":[1,1],\"snap\":true}", 422,
             "off_map", "start");
    post_err(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goals\":[[1,1]],\"algorithm\":\"bfs\"}",
             422, "unsupported", "algorithm");
    post_err(&s, "/v1/maps/u/path", "{\"start\":[0,0],\"goal\":[1,1],\"partial\":1}", 400,
             "invalid_request", "partial");
    it_stop(&s);
}
END_TEST

/* Walks the directions of a decoded flow field from (x, y) to a goal;
 * returns the steps, -1 when a step leaves the region or loops. */
static int walk(const unsigned char *dirs, int w, int h, int x, int y) {
    static const int dx[8] = {1, -1, 0, 0, 1, -1, 1, -1}, dy[8] = {0, 0, 1, -1, 1, 1, -1, -1};
    int steps = 0;
    while (dirs[y * w + x] != 8) {
        int d = dirs[y * w + x];
        if (d > 7 || steps > w * h) return -1;
        x += dx[d];
        y += dy[d];
        if (x < 0 || y < 0 || x >= w || y >= h) return -1;
        steps++;
    }
    return steps;
}

START_TEST(units_flowfield_cache_patch_limits) {
    hc_server s = it_start(
        ARGS("--workers", "2", "--max-flowfield-cells", "200", "--max-flowfield-goals", "2"));
    cJSON *j;
    unsigned char *dirs, *costs;
    size_t nd, nc;
    put(&s, "u", units_map);
    j = post_ok(&s, "/v1/maps/u/flowfield", "{\"goal\":[0,0]}", 200);
    ck_assert_int_eq((int)it_num(j, "region.width"), 12);
    ck_assert_str_eq(it_str(j, "encoding"), "dir8-u8/cost-u32le");
    ck_assert(!it_truth(j, "stats.cached"));
    ck_assert(tu_b64_decode(it_str(j, "directions"), strlen(it_str(j, "directions")), &dirs, &nd));
    ck_assert(tu_b64_decode(it_str(j, "costs"), strlen(it_str(j, "costs")), &costs, &nc));
    ck_assert_uint_eq(nd, 96);
    ck_assert_uint_eq(nc, 4 * 96);
    /* Every cell with a route walks to the goal; its cost is the path's. */
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 12; x++) {
            int i = y * 12 + x;
            uint32_t v = (uint32_t)costs[4 * i] | (uint32_t)costs[4 * i + 1] << 8 |
                         (uint32_t)costs[4 * i + 2] << 16 | (uint32_t)costs[4 * i + 3] << 24;
            if (dirs[i] == 255) {
                ck_assert_uint_eq(v, 4294967295u);
                continue;
            }
            ck_assert_int_ge(walk(dirs, 12, 8, x, y), 0);
            if ((x + y) % 5 == 0) {
                char body[96];
                cJSON *p;
                snprintf(body, sizeof(body),
                         "{\"start\":[%d,%d],\"goal\":[0,0],\"algorithm\":"
                         "\"astar\"}",
                         x, y);
                p = post_ok(&s, "/v1/maps/u/path", body, 200);
                ck_assert_msg(fabs(it_num(p, "cost") - v / it_num(j, "cost_scale")) < 1e-3,
                              "(%d,%d): path %.4f field %u", x, y, it_num(p, "cost"), v);
                cJSON_Delete(p);
            }
        }
    ck_assert_int_eq(dirs[6 * 12 + 9], 255); /* the closed room */
    free(dirs);
    free(costs);
    cJSON_Delete(j);
    /* Cached; a PATCH drops it: the next field is built on the new version. */
    j = post_ok(&s, "/v1/maps/u/flowfield", "{\"goal\":[0,0]}", 200);
    ck_assert(it_truth(j, "stats.cached"));
    ck_assert_int_eq((int)it_num(j, "map_version"), 1);
    cJSON_Delete(j);
    {
        hc_resp r = it_req(&s, "PATCH", "/v1/maps/u", "application/json",
                           "{\"cells\":[{\"x\":5,\"y\":3,\"blocked\":true}]}");
        ck_assert_int_eq(r.status, 200);
        hc_free(&r);
    }
    j = post_ok(&s, "/v1/maps/u/flowfield", "{\"goal\":[0,0],\"costs\":false}", 200);
    ck_assert(!it_truth(j, "stats.cached"));
    ck_assert_int_eq((int)it_num(j, "map_version"), 2);
    ck_assert_ptr_null(it_get(j, "costs"));
    ck_assert(tu_b64_decode(it_str(j, "directions"), strlen(it_str(j, "directions")), &dirs, &nd));
    ck_assert_int_eq(dirs[4 * 12 + 0], 255); /* the door is shut */
    free(dirs);
    cJSON_Delete(j);
    /* Regions and agent sizes. */
    j = post_ok(&s, "/v1/maps/u/flowfield",
                "{\"goals\":[[1,1],[10,1]],\"region\":{\"x\":0,\"y\":0,\"width\":12,"
                "\"height\":3},\"agent_size\":2}",
                200);
    ck_assert_int_eq((int)it_num(j, "region.height"), 3);
    ck_assert_int_eq((int)it_num(j, "agent_size"), 2);
    cJSON_Delete(j);
    post_err(&s, "/v1/maps/u/flowfield",
             "{\"goal\":[1,1],\"region\":{\"x\":5,\"y\":0,\"width\":12,\"height\":3}}", 422,
             "off_map", "region");
    post_err(&s, "/v1/maps/u/flowfield",
             "{\"goal\":[9,1],\"region\":{\"x\":0,\"y\":0,\"width\":8,\"height\":3}}", 422,
             "off_map", "goal");
    post_err(&s, "/v1/maps/u/flowfield", "{\"goals\":[[1,1],[0,3]]}", 422, "blocked", "goals[1]");
    post_err(&s, "/v1/maps/u/flowfield", "{\"goals\":[[1,1],[1,2],[2,2]]}", 413, "limit_exceeded",
             "goals");
    post_err(&s, "/v1/maps/u/flowfield", "{\"goal\":[1,1],\"agent_size\":9}", 422, "invalid_value",
             "agent_size");
    post_err(&s, "/v1/maps/u/flowfield", "{\"goal\":[1,1],\"colour\":2}", 400, "invalid_request",
             "colour");
    post_err(&s, "/v1/maps/nope/flowfield", "{\"goal\":[1,1]}", 404, "map_not_found", NULL);
    /* 16x16 = 256 cells: past --max-flowfield-cells 200 without a region. */
    put(&s, "big",
        "{\"rows\":[\"................\",\"................\",\"................\","
        "\"................\",\"................\",\"................\","
        "\"................\",\"................\",\"................\","
        "\"................\",\"................\",\"................\","
        "\"................\",\"................\",\"................\","
        "\"................\"]}");
    post_err(&s, "/v1/maps/big/flowfield", "{\"goal\":[1,1]}", 413, "limit_exceeded", "region");
    j = post_ok(&s, "/v1/maps/big/flowfield",
                "{\"goal\":[1,1],\"region\":{\"x\":0,\"y\":0,\"width\":10,\"height\":10}}", 200);
    ck_assert_int_eq((int)it_num(j, "reachable"), 100);
    cJSON_Delete(j);
    {
        hc_resp r = it_req(&s, "GET", "/v1/maps/u", NULL, NULL);
        j = json_of(&r);
        ck_assert_int_eq((int)it_num(j, "agent_sizes.0.size"), 2);
        ck_assert(it_get(j, "flowfield_cache.entries") != NULL);
        cJSON_Delete(j);
        hc_free(&r);
        r = it_req(&s, "GET", "/v1/info", NULL, NULL);
        j = json_of(&r);
        ck_assert_int_eq((int)it_num(j, "limits.max_flowfield_cells"), 200);
        ck_assert_int_eq((int)it_num(j, "limits.max_table_entries"), 10000);
        ck_assert_int_eq((int)it_num(j, "limits.stream_max_inflight"), 4);
        cJSON_Delete(j);
        hc_free(&r);
    }
    it_stop(&s);
}
END_TEST

START_TEST(units_table_against_paths) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-table-entries", "12", "--max-table-paths",
                                "6", "--max-table-path-cells", "20"));
    const int src[3][2] = {{0, 0}, {11, 0}, {2, 6}}, tgt[4][2] = {{0, 7}, {6, 1}, {8, 6}, {5, 4}};
    char body[512];
    cJSON *j;
    put(&s, "u", units_map);
    snprintf(
        body, sizeof(body),
        "{\"sources\":[[%d,%d],[%d,%d],[%d,%d]],\"targets\":[[%d,%d],[%d,%d],[%d,%d],[%d,%d]]}",
        src[0][0], src[0][1], src[1][0], src[1][1], src[2][0], src[2][1], tgt[0][0], tgt[0][1],
        tgt[1][0], tgt[1][1], tgt[2][0], tgt[2][1], tgt[3][0], tgt[3][1]);
    post_err(&s, "/v1/maps/u/table", body, 422, "blocked", "targets[2]"); /* the room's wall */
    snprintf(body, sizeof(body),
             "{\"sources\":[[0,0],[11,0],[2,6]],\"targets\":[[0,7],[6,1],[5,4]]}");
    j = post_ok(&s, "/v1/maps/u/table", body, 200);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            int tb = b < 2 ? b : 3;
            char pb[128], key[32];
            cJSON *p;
            snprintf(pb, sizeof(pb), "{\"start\":[%d,%d],\"goal\":[%d,%d],\"algorithm\":\"astar\"}",
                     src[a][0], src[a][1], tgt[tb][0], tgt[tb][1]);
            p = post_ok(&s, "/v1/maps/u/path", pb, 200);
            snprintf(key, sizeof(key), "costs.%d.%d", a, b);
            ck_assert_msg(fabs(it_num(j, key) - it_num(p, "cost")) < 1e-9, "%s: %.6f vs %.6f", key,
                          it_num(j, key), it_num(p, "cost"));
            cJSON_Delete(p);
        }
    ck_assert_str_eq(it_str(j, "stats.direction"), "forward");
    cJSON_Delete(j);
    /* Unreachable entries are null; paths on request. */
    j = post_ok(&s, "/v1/maps/u/table", "{\"sources\":[[0,0],[10,6]],\"paths\":true}", 200);
    ck_assert(cJSON_IsNull(it_get(j, "costs.0.1")));
    ck_assert(cJSON_IsNull(it_get(j, "paths.0.1")));
    ck_assert_double_eq(it_num(j, "costs.1.1"), 0.0);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "paths.1.1")), 1);
    cJSON_Delete(j);
    post_err(&s, "/v1/maps/u/table", "{\"sources\":[[0,0],[1,0],[2,0],[3,0]]}", 413,
             "limit_exceeded", "sources");
    post_err(&s, "/v1/maps/u/table",
             "{\"sources\":[[0,0],[1,0],[2,0]],\"targets\":[[0,1],[1,1],[2,1]],\"paths\":true}",
             413, "limit_exceeded", "paths");
    post_err(&s, "/v1/maps/u/table",
             "{\"sources\":[[0,0]],\"targets\":[[11,4],[0,7]],\"paths\":true}", 413,
             "limit_exceeded", "paths"); /* the paths pass 30 cells */
    post_err(&s, "/v1/maps/u/table", "{\"sources\":[[0,0]],\"targets\":[[50,0]]}", 422, "off_map",
             "targets[0]");
    post_err(&s, "/v1/maps/u/table", "{\"sources\":[]}", 422, "invalid_value", "sources");
    post_err(&s, "/v1/maps/u/table", "{\"targets\":[[0,0]]}", 400, "invalid_request", "sources");
    j = post_ok(&s, "/v1/maps/u/table",
                "{\"sources\":[[0,0]],\"targets\":[[0,4]],\"agent_size\":2}", 200);
    ck_assert(cJSON_IsNull(it_get(j, "costs.0.0"))); /* the door is too narrow */
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

START_TEST(units_generate_mazes) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-map-side", "200"));
    cJSON *j;
    char id[80], path[160];
    j = post_ok(&s, "/v1/maps/generate",
                "{\"type\":\"maze\",\"width\":41,\"height\":31,\"seed\":7}", 201);
    snprintf(id, sizeof(id), "%s", it_str(j, "id"));
    ck_assert(strncmp(id, "maze-", 5) == 0);
    ck_assert_int_eq((int)it_num(j, "width"), 41);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    /* The same parameters again: the same map, nothing built. */
    j = post_ok(&s, "/v1/maps/generate",
                "{\"seed\":7,\"height\":31,\"width\":41,\"type\":\"maze\",\"walls\":\"cells\"}",
                200);
    ck_assert_str_eq(it_str(j, "id"), id);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    /* Corner to corner: one way in a perfect maze. */
    snprintf(path, sizeof(path), "/v1/maps/%s/path", id);
    j = post_ok(&s, path, "{\"start\":[1,1],\"goal\":[39,29],\"algorithm\":\"bfs\"}", 200);
    ck_assert(it_truth(j, "found"));
    {
        double bfs_cost = it_num(j, "cost");
        cJSON_Delete(j);
        j = post_ok(&s, path, "{\"start\":[1,1],\"goal\":[39,29],\"algorithm\":\"astar\"}", 200);
        ck_assert_double_eq_tol(it_num(j, "cost"), bfs_cost, 1e-9);
        cJSON_Delete(j);
    }
    /* Named, with edges, loops and wide corridors. */
    j = post_ok(&s, "/v1/maps/generate",
                "{\"type\":\"maze\",\"width\":60,\"height\":40,\"seed\":3,\"walls\":\"edges\","
                "\"corridor_width\":3,\"loops\":0.2,\"id\":\"arena-3\"}",
                201);
    ck_assert_str_eq(it_str(j, "id"), "arena-3");
    cJSON_Delete(j);
    j = post_ok(&s, "/v1/maps/arena-3/path", "{\"start\":[0,0],\"goal\":[57,36],\"agent_size\":3}",
                200);
    ck_assert(it_truth(j, "found")); /* corridors three wide fit a 3x3 agent */
    cJSON_Delete(j);
    post_err(&s, "/v1/maps/generate", "{\"type\":\"maze\",\"width\":201,\"height\":31}", 413,
             "limit_exceeded", "width");
    post_err(&s, "/v1/maps/generate",
             "{\"type\":\"maze\",\"width\":41,\"height\":31,\"walls\":\"x\"}", 422, "invalid_value",
             "walls");
    post_err(&s, "/v1/maps/generate", "{\"type\":\"cave\",\"width\":41,\"height\":31}", 422,
             "invalid_value", "type");
    post_err(&s, "/v1/maps/generate", "{\"type\":\"maze\",\"width\":2,\"height\":31}", 422,
             "invalid_value", "width");
    post_err(&s, "/v1/maps/generate", "{\"type\":\"maze\",\"width\":9,\"height\":9,\"id\":\"a/b\"}",
             400, "invalid_map_id", "id");
    {
        hc_resp r = it_req(&s, "GET", "/v1/maps/generate", NULL, NULL);
        ck_assert_int_eq(r.status, 405);
        hc_free(&r);
    }
    it_stop(&s);
}
END_TEST

static char *create_session(const hc_server *s, const char *map, int sx, int sy, int gx, int gy) {
    char path[96], body[96];
    hc_resp r;
    cJSON *j;
    char *sid;
    snprintf(path, sizeof(path), "/v1/maps/%s/sessions", map);
    snprintf(body, sizeof(body), "{\"start\":[%d,%d],\"goal\":[%d,%d]}", sx, sy, gx, gy);
    r = it_req(s, "POST", path, "application/json", body);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    j = json_of(&r);
    sid = strdup(it_str(j, "session_id"));
    cJSON_Delete(j);
    hc_free(&r);
    return sid;
}

START_TEST(units_sessions_list) {
    hc_server s = it_start(ARGS("--workers", "2"));
    char *sids[5];
    hc_resp r;
    cJSON *j;
    put(&s, "u", units_map);
    put(&s, "v", units_map);
    for (int i = 0; i < 5; i++) sids[i] = create_session(&s, i < 4 ? "u" : "v", i, 0, 0, 7);
    r = it_req(&s, "GET", "/v1/maps/u/sessions", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    j = json_of(&r);
    ck_assert_int_eq((int)it_num(j, "count"), 4);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "sessions")), 4);
    ck_assert(cJSON_IsNull(it_get(j, "next")));
    for (int i = 0; i < 3; i++) /* sorted by id */
        ck_assert(strcmp(it_str(cJSON_GetArrayItem(it_get(j, "sessions"), i), "session_id"),
                         it_str(cJSON_GetArrayItem(it_get(j, "sessions"), i + 1), "session_id")) <
                  0);
    ck_assert_int_eq((int)it_num(j, "sessions.0.goal.1"), 7);
    cJSON_Delete(j);
    hc_free(&r);
    /* Pages of two. */
    r = it_req(&s, "GET", "/v1/maps/u/sessions?limit=2", NULL, NULL);
    j = json_of(&r);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "sessions")), 2);
    {
        char path[160];
        snprintf(path, sizeof(path), "/v1/maps/u/sessions?limit=2&after=%s", it_str(j, "next"));
        cJSON_Delete(j);
        hc_free(&r);
        r = it_req(&s, "GET", path, NULL, NULL);
        j = json_of(&r);
        ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "sessions")), 2);
        ck_assert(cJSON_IsNull(it_get(j, "next")));
    }
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/u/sessions?limit=0", NULL, NULL);
    expect_error(&r, 422, "invalid_value", "limit");
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/u/sessions?page=1", NULL, NULL);
    expect_error(&r, 400, "invalid_request", "page");
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/zz/sessions", NULL, NULL);
    expect_error(&r, 404, "map_not_found", NULL);
    hc_free(&r);
    for (int i = 0; i < 5; i++) free(sids[i]);
    it_stop(&s);
}
END_TEST

/* D* Lite sessions of a 2x2 agent: the one-cell door stops it until the
 * session opens the wall beside the door for itself. */
START_TEST(units_agent_sessions) {
    hc_server s = it_start(ARGS("--workers", "2", "--max-agent-size", "3"));
    hc_resp r;
    cJSON *j;
    char path[160];
    put(&s, "u", units_map);
    j = post_ok(&s, "/v1/maps/u/sessions", "{\"start\":[0,0],\"goal\":[0,4],\"agent_size\":2}",
                201);
    ck_assert(!it_truth(j, "found"));
    ck_assert_int_eq((int)it_num(j, "agent_size"), 2);
    snprintf(path, sizeof(path), "/v1/maps/u/sessions/%s/updates", it_str(j, "session_id"));
    cJSON_Delete(j);
    r = it_req(&s, "POST", path, "application/json", "{\"cells\":[{\"x\":6,\"y\":3,\"cost\":1}]}");
    ck_assert_int_eq(r.status, 200);
    j = json_of(&r);
    ck_assert(it_truth(j, "found"));
    ck_assert_int_eq((int)it_num(j, "path.0.0"), 0);
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "POST", path, "application/json", "{\"position\":[10,6]}");
    expect_error(&r, 422, "blocked", "position");
    hc_free(&r);
    post_err(&s, "/v1/maps/u/sessions", "{\"start\":[0,0],\"goal\":[0,4],\"agent_size\":4}", 422,
             "invalid_value", "agent_size");
    post_err(&s, "/v1/maps/u/sessions", "{\"start\":[11,0],\"goal\":[0,4],\"agent_size\":2}", 422,
             "blocked", "start");
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

START_TEST(units_mux_stream) {
    hc_server s = it_start(
        ARGS("--workers", "2", "--stream-max-sessions", "3", "--stream-max-inflight", "2"));
    int status, fd;
    char *sid[3], msg[512], body[256];
    cJSON *j;
    put(&s, "u", units_map);
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
    ck_assert(cJSON_IsNull(it_get(j, "body")));
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
    wsc_close(fd);
    for (int i = 0; i < 3; i++) free(sid[i]);
    it_stop(&s);
}
END_TEST

/* Many messages of a few sessions on one connection, side by side on the
 * pool: all answered, each session's in order. Regression: a job read its
 * message after handing it to the loop thread, which may already have
 * answered and freed it (a race ThreadSanitizer saw; ASan sees it when it
 * happens). */
START_TEST(units_mux_stream_many) {
    hc_server s = it_start(ARGS("--workers", "2", "--stream-max-inflight", "4"));
    enum { NS = 4, ROUNDS = 50 };
    int status, fd, last[NS];
    char *sid[NS], msg[256];
    put(&s, "u", units_map);
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

TU_SUITE(units) {
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("http");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, units_path_goals_agents_partial_snap);
    tcase_add_test(tc, units_flowfield_cache_patch_limits);
    tcase_add_test(tc, units_table_against_paths);
    tcase_add_test(tc, units_generate_mazes);
    tcase_add_test(tc, units_sessions_list);
    tcase_add_test(tc, units_agent_sessions);
    tcase_add_test(tc, units_mux_stream);
    tcase_add_test(tc, units_mux_stream_many);
    suite_add_tcase(s, tc);
    return s;
}
