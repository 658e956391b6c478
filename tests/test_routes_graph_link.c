/* test_routes_graph_link.c -- a graph upload's auto_link over HTTP
 * (docs/graphs.md, "Auto-linking").
 *
 * The property test uploads random grid maps (random obstacles) and random
 * 2D graphs over them (a few hundred nodes, repeated positions, nodes off
 * the map, some uploaded edges, sometimes a degree cap) and holds the made
 * edges GET .../graph lists, and the info's counts, to a reference written
 * here: every pair by brute force, and a line of sight of its own (the
 * closed-square supercover: the segment between the two cells' centres
 * touches only walkable cells, corners included, which is what an
 * 8-connected grid without corner cutting allows), sharing no code with
 * the server. A navmesh level of two rooms joined by a door is checked
 * against its geometry. Then the refusals (422 naming auto_link's
 * fields, the pairs limit 413 and /v1/info), and a restart on the same
 * --data-dir after the named map is deleted keeping the edges. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet.h"
#include "itest.h"
#include "testutil.h"

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* A growing string. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

#define MAXW 40
#define MAXN 320

typedef struct world {
    int w, h;
    bool wall[MAXW][MAXW]; /* [y][x] */
    int n;
    double pos[MAXN][2];
    int m; /* uploaded edges */
    int ea[64], eb[64];
    double r;
    int cap; /* max_links_per_node, 0: none */
} world;

/* The reference line of sight: cells of the points (off the map: none),
 * then every cell whose closed square the segment between the cells'
 * centres meets must be walkable. Doubled coordinates keep it exact: a
 * centre is (2x + 1, 2y + 1), cell (cx, cy) the square [2cx, 2cx + 2] x
 * [2cy, 2cy + 2]; the segment meets it when their boxes overlap and the
 * square's corners are not all strictly on one side of the line. */
static bool ref_sight(const world *wd, const double *p, const double *q) {
    int ax = (int)floor(p[0]), ay = (int)floor(p[1]), bx = (int)floor(q[0]), by = (int)floor(q[1]);
    if (p[0] < 0 || p[1] < 0 || q[0] < 0 || q[1] < 0 || ax >= wd->w || ay >= wd->h || bx >= wd->w ||
        by >= wd->h)
        return false;
    long x0 = 2 * ax + 1, y0 = 2 * ay + 1, x1 = 2 * bx + 1, y1 = 2 * by + 1;
    int lx = ax < bx ? ax : bx, hx = ax < bx ? bx : ax, ly = ay < by ? ay : by,
        hy = ay < by ? by : ay;
    for (int cy = ly; cy <= hy; cy++)
        for (int cx = lx; cx <= hx; cx++) {
            int pos = 0, neg = 0;
            for (int k = 0; k < 4; k++) {
                long X = 2 * cx + 2 * (k & 1), Y = 2 * cy + 2 * (k >> 1);
                long c = (x1 - x0) * (Y - y0) - (y1 - y0) * (X - x0);
                pos += c > 0;
                neg += c < 0;
            }
            if (pos == 4 || neg == 4) continue;
            if (wd->wall[cy][cx]) return false;
        }
    return true;
}

static double ref_dist(const world *wd, int i, int j) {
    double dx = wd->pos[i][0] - wd->pos[j][0], dy = wd->pos[i][1] - wd->pos[j][1];
    return sqrt(dx * dx + dy * dy);
}

static bool joined(const world *wd, int i, int j) {
    for (int k = 0; k < wd->m; k++)
        if ((wd->ea[k] == i && wd->eb[k] == j) || (wd->ea[k] == j && wd->eb[k] == i)) return true;
    return false;
}

typedef struct rpair {
    double len;
    int a, b;
} rpair;

static int cmp_rpair(const void *x, const void *y) {
    const rpair *p = x, *q = y;
    if (p->len != q->len) return p->len < q->len ? -1 : 1;
    if (p->a != q->a) return p->a - q->a;
    return p->b - q->b;
}

/* The reference's links: made[i][j] (i < j); returns the candidates. */
static int reference(const world *wd, bool (*made)[MAXN], int *nlinked) {
    static rpair kept[MAXN * MAXN / 2];
    int nk = 0, cand = 0, deg[MAXN] = {0};
    for (int i = 0; i < wd->n; i++)
        for (int j = i + 1; j < wd->n; j++) {
            made[i][j] = false;
            if (!(ref_dist(wd, i, j) <= wd->r) || joined(wd, i, j)) continue;
            cand++;
            if (ref_sight(wd, wd->pos[i], wd->pos[j]))
                kept[nk++] = (rpair){ref_dist(wd, i, j), i, j};
        }
    qsort(kept, (size_t)nk, sizeof(kept[0]), cmp_rpair);
    *nlinked = 0;
    for (int k = 0; k < nk; k++) {
        if (wd->cap && (deg[kept[k].a] >= wd->cap || deg[kept[k].b] >= wd->cap)) continue;
        deg[kept[k].a]++;
        deg[kept[k].b]++;
        made[kept[k].a][kept[k].b] = true;
        (*nlinked)++;
    }
    return cand;
}

static void random_world(world *wd) {
    wd->w = 16 + (int)rnd(MAXW - 15);
    wd->h = 16 + (int)rnd(MAXW - 15);
    int density = 10 + (int)rnd(30);
    for (int y = 0; y < wd->h; y++)
        for (int x = 0; x < wd->w; x++) wd->wall[y][x] = (int)rnd(100) < density;
    wd->n = 200 + (int)rnd(MAXN - 199);
    for (int i = 0; i < wd->n; i++) {
        if (i > 4 && rnd(10) == 0) {
            /* A repeated position. */
            int o = (int)rnd((uint32_t)i);
            wd->pos[i][0] = wd->pos[o][0];
            wd->pos[i][1] = wd->pos[o][1];
            continue;
        }
        /* Quarters, a little past the map on every side; cell centres and
         * corners often. */
        wd->pos[i][0] = (double)((int)rnd((uint32_t)(4 * wd->w + 8)) - 4) / 4.0;
        wd->pos[i][1] = (double)((int)rnd((uint32_t)(4 * wd->h + 8)) - 4) / 4.0;
    }
    wd->m = (int)rnd(40);
    for (int k = 0; k < wd->m; k++) {
        wd->ea[k] = (int)rnd((uint32_t)wd->n);
        wd->eb[k] = (wd->ea[k] + 1 + (int)rnd((uint32_t)wd->n - 1)) % wd->n;
    }
    wd->r = 2.0 + (double)rnd(25) / 4.0;
    wd->cap = rnd(3) == 0 ? 1 + (int)rnd(4) : 0;
}

static char *grid_json(const world *wd) {
    sbuf b = {0};
    put(&b, "{\"rows\":[");
    for (int y = 0; y < wd->h; y++) {
        put(&b, "%s\"", y ? "," : "");
        for (int x = 0; x < wd->w; x++) put(&b, "%c", wd->wall[y][x] ? '#' : '.');
        put(&b, "\"");
    }
    put(&b, "]}");
    return b.p;
}

static char *graph_json(const world *wd, const char *map) {
    sbuf b = {0};
    put(&b, "{\"kind\":\"graph\",\"nodes\":[");
    for (int i = 0; i < wd->n; i++)
        put(&b, "%s{\"id\":%d,\"position\":[%.17g,%.17g]}", i ? "," : "", i, wd->pos[i][0],
            wd->pos[i][1]);
    put(&b, "],\"edges\":[");
    for (int k = 0; k < wd->m; k++)
        put(&b, "%s{\"from\":%d,\"to\":%d,\"cost\":1000}", k ? "," : "", wd->ea[k], wd->eb[k]);
    put(&b, "],\"auto_link\":{\"max_distance\":%.17g,\"map\":\"%s\"", wd->r, map);
    if (wd->cap) put(&b, ",\"max_links_per_node\":%d", wd->cap);
    put(&b, ",\"cost_factor\":2}}");
    return b.p;
}

/* The property test: graphs x pairs, counted for the report. */
START_TEST(routes_graph_link_grid_property) {
    static world wd;
    static bool made[MAXN][MAXN];
    hc_server s = it_start(ARGS("--workers", "2"));
    long graphs = 0, pairs = 0, cands = 0, links = 0, capped = 0;
    for (int seed = 1; seed <= 60; seed++) {
        char *gj, *lj;
        int ncand, nlinked, got = 0;
        cJSON *j;
        const cJSON *edges, *x;
        rng_state = 0x9e3779b97f4a7c15ull * (uint64_t)seed + 1;
        random_world(&wd);
        gj = grid_json(&wd);
        lj = graph_json(&wd, "level");
        it_put_map(&s, "level", "application/json", gj, seed == 1 ? 201 : 200);
        it_put_map(&s, "links", "application/json", lj, seed == 1 ? 201 : 200);
        ncand = reference(&wd, made, &nlinked);
        j = it_call(&s, "GET", "/v1/maps/links", NULL, NULL, 200);
        ck_assert_str_eq(it_str(j, "graph.auto_link.map"), "level");
        ck_assert_int_eq((int)it_num(j, "graph.auto_link.candidates"), ncand);
        ck_assert_int_eq((int)it_num(j, "graph.auto_link.linked"), nlinked);
        ck_assert_int_eq((int)it_num(j, "graph.edges"), wd.m + nlinked);
        cJSON_Delete(j);
        j = it_call(&s, "GET", "/v1/maps/links/graph", NULL, NULL, 200);
        edges = it_get(j, "edges");
        ck_assert_int_eq(cJSON_GetArraySize(edges), wd.m + nlinked);
        cJSON_ArrayForEach(x, edges) {
            int a = (int)it_num(x, "from"), c = (int)it_num(x, "to");
            const cJSON *tags = cJSON_GetObjectItem(x, "tags");
            if (!tags) continue; /* an uploaded edge */
            ck_assert_str_eq(cJSON_GetArrayItem(tags, 0)->valuestring, "auto");
            ck_assert_int_lt(a, c);
            ck_assert_msg(made[a][c], "seed %d: %d-%d made, the reference does not see it", seed, a,
                          c);
            ck_assert(cJSON_GetObjectItem(x, "oneway") == NULL);
            ck_assert_double_eq_tol(it_num(x, "cost"), 2 * ref_dist(&wd, a, c), 1e-9);
            made[a][c] = false;
            got++;
        }
        ck_assert_int_eq(got, nlinked);
        cJSON_Delete(j);
        graphs++;
        pairs += (long)wd.n * (wd.n - 1) / 2;
        cands += ncand;
        links += nlinked;
        capped += wd.cap != 0;
        free(gj);
        free(lj);
    }
    it_stop(&s);
    printf("routes_graph_link_grid_property: %ld graphs (%ld capped), %ld pairs, %ld candidates "
           "checked, %ld edges made\n",
           graphs, capped, pairs, cands, links);
    ck_assert_int_gt(links, 1000);
    ck_assert_int_gt(cands, links);
}
END_TEST

/* Two rooms of a navmesh level (from a grid: cell (x, y) is the floor
 * x..x+1, z y..y+1 at height 0) joined by a door 3 cells wide in the
 * wall between them (x 12..13, open for z 4..7). */
START_TEST(routes_graph_link_navmesh_rooms) {
    static const char rooms[] = "type octile\nheight 11\nwidth 25\nmap\n"
                                "............@............\n"
                                "............@............\n"
                                "............@............\n"
                                "............@............\n"
                                ".........................\n"
                                ".........................\n"
                                ".........................\n"
                                "............@............\n"
                                "............@............\n"
                                "............@............\n"
                                "............@............\n";
    hc_server s = it_start(ARGS("--workers", "2"));
    char *env = it_nav_envelope(rooms, NULL);
    cJSON *j;
    const cJSON *x;
    it_put_map(&s, "level", "application/json", env, 201);
    free(env);
    /* Nodes: 0 and 1 in the left room's top, 2 in its bottom; 3 and 4 in
     * the right room's top and bottom; 5 and 6 on the door's line in each
     * room; 7 far above the floor (no polygon in its box). */
    it_put_map(&s, "g", "application/json",
               "{\"kind\":\"graph\",\"nodes\":["
               "{\"id\":0,\"position\":[2,0,1.5]},{\"id\":1,\"position\":[9,0,2]},"
               "{\"id\":2,\"position\":[3,0,9]},{\"id\":3,\"position\":[20,0,1.5]},"
               "{\"id\":4,\"position\":[21,0,9]},{\"id\":5,\"position\":[4,0,5.5]},"
               "{\"id\":6,\"position\":[21,0,5.5]},{\"id\":7,\"position\":[2,30,2]}],"
               "\"auto_link\":{\"max_distance\":100,\"map\":\"level\",\"tag\":\"sight\"}}",
               201);
    j = it_call(&s, "GET", "/v1/maps/g/graph", NULL, NULL, 200);
    {
        bool seen[8][8] = {{false}};
        cJSON_ArrayForEach(x, it_get(j, "edges")) {
            int a = (int)it_num(x, "from"), c = (int)it_num(x, "to");
            ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(x, "tags"), 0)->valuestring,
                             "sight");
            seen[a][c] = seen[c][a] = true;
        }
        /* Within a room (convex): linked. */
        ck_assert(seen[0][1] && seen[0][2] && seen[1][2] && seen[0][5] && seen[2][5]);
        ck_assert(seen[3][4] && seen[3][6] && seen[4][6]);
        /* Through the door: linked; across the wall: not. */
        ck_assert(seen[5][6]);
        ck_assert(!seen[0][3] && !seen[2][4] && !seen[1][3] && !seen[1][4]);
        /* Off the mesh: nothing. */
        for (int k = 0; k < 7; k++) ck_assert(!seen[7][k]);
    }
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "graph.auto_link.candidates"), 28);
    cJSON_Delete(j);
    /* A 2D graph on a navmesh, an unknown agent type. */
    it_call_error(&s, "PUT", "/v1/maps/h", "application/json",
                  "{\"kind\":\"graph\",\"nodes\":[{\"id\":0,\"position\":[1,1]}],"
                  "\"auto_link\":{\"max_distance\":5,\"map\":\"level\"}}",
                  422, "invalid_value", "auto_link.map");
    it_call_error(&s, "PUT", "/v1/maps/h", "application/json",
                  "{\"kind\":\"graph\",\"nodes\":[{\"id\":0,\"position\":[1,0,1]}],"
                  "\"auto_link\":{\"max_distance\":5,\"map\":\"level\",\"agent_type\":\"giant\"}}",
                  422, "invalid_value", "auto_link.agent_type");
    it_stop(&s);
}
END_TEST

static const char small_grid[] = "{\"rows\":[\"......\",\"..##..\",\"......\"]}";
/* a sees c (one below), b sees d; across the wall none, c sees d. */
static const char small_graph[] =
    "{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0.5,1.5]},"
    "{\"id\":\"b\",\"position\":[5.5,1.5]},{\"id\":\"c\",\"position\":[0.5,0.5]},"
    "{\"id\":\"d\",\"position\":[5.5,0.5]}],\"edges\":[{\"from\":\"a\",\"to\":\"b\",\"cost\":3}],"
    "\"auto_link\":{\"max_distance\":10,\"map\":\"level\"}}";

static void put_bad(const hc_server *s, const char *link, int status, const char *code,
                    const char *field) {
    char body[512];
    snprintf(body, sizeof(body),
             "{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0.5,1.5]},"
             "{\"id\":\"b\",\"position\":[5.5,1.5]}],\"auto_link\":%s}",
             link);
    if (code) {
        it_call_error(s, "PUT", "/v1/maps/bad", "application/json", body, status, code, field);
    } else {
        /* 400: the type of a member (invalid_request) or a missing one
         * (malformed_map), as the rest of the upload answers them. */
        hc_resp r = it_req(s, "PUT", "/v1/maps/bad", "application/json", body);
        cJSON *j = it_json(&r);
        ck_assert_int_eq(r.status, status);
        ck_assert_str_eq(it_str(j, "error.field"), field);
        cJSON_Delete(j);
        hc_free(&r);
    }
}

START_TEST(routes_graph_link_refusals) {
    hc_server s = it_start(ARGS("--graph-max-auto-link-pairs", "8", "--graph-max-degree", "2"));
    char *chain = it_graph_chain_json(3);
    cJSON *j;
    it_put_map(&s, "level", "application/json", small_grid, 201);
    it_put_map(&s, "chain", "application/json", chain, 201);
    free(chain);
    j = it_call(&s, "GET", "/v1/info", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "limits.graph_max_auto_link_pairs"), 8);
    cJSON_Delete(j);
    put_bad(&s, "{\"max_distance\":5,\"map\":\"nope\"}", 422, "invalid_value", "auto_link.map");
    put_bad(&s, "{\"max_distance\":5,\"map\":\"chain\"}", 422, "unsupported", "auto_link.map");
    put_bad(&s, "{\"max_distance\":0,\"map\":\"level\"}", 422, "invalid_value",
            "auto_link.max_distance");
    put_bad(&s, "{\"max_distance\":-1,\"map\":\"level\"}", 422, "invalid_value",
            "auto_link.max_distance");
    put_bad(&s, "{\"max_distance\":\"far\",\"map\":\"level\"}", 400, NULL,
            "auto_link.max_distance");
    put_bad(&s, "{\"map\":\"level\"}", 400, NULL, "auto_link.max_distance");
    put_bad(&s, "{\"max_distance\":5}", 400, NULL, "auto_link.map");
    put_bad(&s, "{\"max_distance\":5,\"map\":\"level\",\"max_links_per_node\":0}", 422,
            "invalid_value", "auto_link.max_links_per_node");
    put_bad(&s, "{\"max_distance\":5,\"map\":\"level\",\"max_links_per_node\":3}", 422,
            "invalid_value", "auto_link.max_links_per_node");
    put_bad(&s, "{\"max_distance\":5,\"map\":\"level\",\"cost_factor\":-2}", 422, "invalid_value",
            "auto_link.cost_factor");
    put_bad(&s, "{\"max_distance\":5,\"map\":\"level\",\"agent_type\":\"default\"}", 422,
            "invalid_value", "auto_link.agent_type");
    put_bad(&s, "{\"max_distance\":5,\"map\":\"level\",\"tag\":\"\"}", 422, "invalid_value",
            "auto_link.tag");
    put_bad(&s, "{\"max_distance\":5,\"map\":\"level\",\"colour\":1}", 400, NULL,
            "auto_link.colour");
    /* A 3D graph on a grid. */
    it_call_error(&s, "PUT", "/v1/maps/bad", "application/json",
                  "{\"kind\":\"graph\",\"nodes\":[{\"id\":0,\"position\":[1,1,1]}],"
                  "\"auto_link\":{\"max_distance\":5,\"map\":\"level\"}}",
                  422, "invalid_value", "auto_link.map");
    /* Pairs past the limit (8): 6 nodes within reach of each other are 15. */
    it_call_error(&s, "PUT", "/v1/maps/bad", "application/json",
                  "{\"kind\":\"graph\",\"nodes\":[{\"id\":0,\"position\":[0,0]},"
                  "{\"id\":1,\"position\":[1,0]},{\"id\":2,\"position\":[2,0]},"
                  "{\"id\":3,\"position\":[3,0]},{\"id\":4,\"position\":[4,0]},"
                  "{\"id\":5,\"position\":[5,0]}],"
                  "\"auto_link\":{\"max_distance\":9,\"map\":\"level\"}}",
                  413, "limit_exceeded", "auto_link.max_distance");
    /* Made edges count against the degree limit (2): a sees b, c, d. */
    it_call_error(&s, "PUT", "/v1/maps/bad", "application/json",
                  "{\"kind\":\"graph\",\"nodes\":[{\"id\":0,\"position\":[0.5,0.5]},"
                  "{\"id\":1,\"position\":[1.5,0.5]},{\"id\":2,\"position\":[2.5,0.5]},"
                  "{\"id\":3,\"position\":[3.5,0.5]}],"
                  "\"auto_link\":{\"max_distance\":9,\"map\":\"level\"}}",
                  413, "limit_exceeded", "auto_link");
    /* With a cap of 1 a node, the nearest: 0-1 and 2-3. */
    it_put_map(&s, "ok", "application/json",
               "{\"kind\":\"graph\",\"nodes\":[{\"id\":0,\"position\":[0.5,0.5]},"
               "{\"id\":1,\"position\":[1.5,0.5]},{\"id\":2,\"position\":[2.5,0.5]},"
               "{\"id\":3,\"position\":[3.5,0.5]}],"
               "\"auto_link\":{\"max_distance\":9,\"map\":\"level\",\"max_links_per_node\":1}}",
               201);
    j = it_call(&s, "GET", "/v1/maps/ok/graph", NULL, NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "edges")), 2);
    ck_assert_int_eq((int)it_num(j, "edges.0.from"), 0);
    ck_assert_int_eq((int)it_num(j, "edges.0.to"), 1);
    ck_assert_int_eq((int)it_num(j, "edges.1.from"), 2);
    ck_assert_int_eq((int)it_num(j, "edges.1.to"), 3);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* The made edges live in the version: after the named map is deleted and
 * the server restarts on the same --data-dir they are there, with the
 * info block, and PATCHable by index. */
START_TEST(routes_graph_link_restart_after_delete) {
    char dir[] = "/tmp/pathd-graph-link-XXXXXX", f[128];
    hc_server s;
    cJSON *j;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    s = it_start(ARGS("--data-dir", dir));
    it_put_map(&s, "level", "application/json", small_grid, 201);
    it_put_map(&s, "g", "application/json", small_graph, 201);
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "graph.edges"), 4);
    ck_assert_int_eq((int)it_num(j, "graph.auto_link.candidates"), 5);
    ck_assert_int_eq((int)it_num(j, "graph.auto_link.linked"), 3);
    ck_assert_int_eq((int)it_num(j, "graph.auto_link.map_version"), 1);
    cJSON_Delete(j);
    it_call(&s, "DELETE", "/v1/maps/level", NULL, NULL, 204);
    it_stop(&s);
    s = it_start(ARGS("--data-dir", dir));
    it_call_error(&s, "GET", "/v1/maps/level", NULL, NULL, 404, "map_not_found", NULL);
    j = it_call(&s, "GET", "/v1/maps/g/graph", NULL, NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "edges")), 4);
    ck_assert_str_eq(it_str(j, "edges.1.from"), "a");
    ck_assert_str_eq(it_str(j, "edges.1.to"), "c");
    ck_assert_str_eq(it_str(j, "edges.3.from"), "c");
    ck_assert_str_eq(it_str(j, "edges.3.to"), "d");
    ck_assert_double_eq_tol(it_num(j, "edges.3.cost"), 5, 1e-12);
    ck_assert_str_eq(it_str(j, "edges.3.tags.0"), "auto");
    cJSON_Delete(j);
    j = it_call(&s, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_str_eq(it_str(j, "graph.auto_link.map"), "level");
    ck_assert_int_eq((int)it_num(j, "graph.auto_link.linked"), 3);
    cJSON_Delete(j);
    /* a -> d goes a, b, d (the uploaded 3, the made 1)... */
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=d", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 4, 1e-9);
    cJSON_Delete(j);
    /* ... and with the made b-d (index 2) disabled, a, c, d (1 + 5). */
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/g", "application/json",
                         "{\"edges\":[{\"index\":2,\"enabled\":false}]}", 200));
    j = it_call(&s, "GET", "/v1/maps/g/path?start=a&goal=d", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 6, 1e-9);
    ck_assert_str_eq(it_str(j, "path.1"), "c");
    cJSON_Delete(j);
    it_call(&s, "DELETE", "/v1/maps/g", NULL, NULL, 204);
    it_stop(&s);
    snprintf(f, sizeof(f), "%s", dir);
    ck_assert_int_eq(rmdir(f), 0);
}
END_TEST

/* --store redis://: the image has the made edges and the info, so an
 * instance started after the named map was deleted from the store builds
 * the graph without it and replays a PATCH of a made edge logged after. */
START_TEST(routes_graph_link_shared_store) {
    fl_proc redis;
    hc_server a, c;
    cJSON *j;
    ck_assert_msg(fl_have("redis-server"), "redis-server is not installed");
    redis = fl_redis_start();
    a = fl_pathd_start(fl_free_port(), redis.port, "a", NULL);
    it_put_map(&a, "level", "application/json", small_grid, 201);
    it_put_map(&a, "g", "application/json", small_graph, 201);
    it_call(&a, "DELETE", "/v1/maps/level", NULL, NULL, 204);
    cJSON_Delete(it_call(&a, "PATCH", "/v1/maps/g", "application/json",
                         "{\"edges\":[{\"index\":2,\"enabled\":false}]}", 200));
    /* Started now: the image and the logged PATCH, without the level. */
    c = fl_pathd_start(fl_free_port(), redis.port, "c", NULL);
    it_call_error(&c, "GET", "/v1/maps/level", NULL, NULL, 404, "map_not_found", NULL);
    j = it_call(&c, "GET", "/v1/maps/g", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    ck_assert_int_eq((int)it_num(j, "graph.edges"), 4);
    ck_assert_int_eq((int)it_num(j, "graph.disabled_edges"), 1);
    ck_assert_int_eq((int)it_num(j, "graph.auto_link.linked"), 3);
    ck_assert_int_eq((int)it_num(j, "graph.auto_link.candidates"), 5);
    cJSON_Delete(j);
    j = it_call(&c, "GET", "/v1/maps/g/path?start=a&goal=d", NULL, NULL, 200);
    ck_assert_double_eq_tol(it_num(j, "cost"), 6, 1e-9);
    cJSON_Delete(j);
    it_stop(&c);
    it_stop(&a);
    fl_stop(&redis, SIGTERM);
}
END_TEST

TU_SUITE(routes_graph_link) {
    Suite *s = suite_create("routes_graph_link");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, routes_graph_link_grid_property);
    tcase_add_test(tc, routes_graph_link_navmesh_rooms);
    tcase_add_test(tc, routes_graph_link_refusals);
    tcase_add_test(tc, routes_graph_link_restart_after_delete);
    tcase_add_test(tc, routes_graph_link_shared_store);
    suite_add_tcase(s, tc);
    return s;
}
