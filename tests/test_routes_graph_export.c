/* test_routes_graph_export.c -- GET /v1/maps/{id}/graph: a waypoint
 * graph's nodes and edges as the version has them. A generated 3D graph
 * (string and integer ids, tags, one-way edges, edges and a node uploaded
 * disabled) is checked member by member against the test's own model of
 * what was uploaded, and again after a PATCH changes costs and states;
 * the ETag is the info's; door groups with their members and states, and
 * the export uploaded again building the same graph; the refusals; and
 * --max-graph-bytes: the bound
 * the 413 names is at least the answer's length, a server limited to it
 * answers, one byte less refuses, on ids written at their longest escape. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "testutil.h"

#define GN 120
#define GM 400

/* The test's model of the graph. */
typedef struct model {
    char id[GN][16];
    bool id_int[GN];
    double pos[GN][3];
    bool node_on[GN];
    int from[GM], to[GM];
    double cost[GM];
    bool oneway[GM], edge_on[GM], tagged[GM];
} model;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static void append(char **buf, size_t *len, size_t *cap, const char *s) {
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = realloc(*buf, *cap);
        ck_assert_ptr_nonnull(*buf);
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
}

/* The model and its upload. */
static char *make_graph(model *md) {
    char *b = NULL, t[256];
    size_t len = 0, cap = 0;
    append(&b, &len, &cap, "{\"kind\":\"graph\",\"nodes\":[");
    for (int i = 0; i < GN; i++) {
        md->id_int[i] = i % 3 == 0;
        snprintf(md->id[i], sizeof(md->id[i]), md->id_int[i] ? "%d" : "n%d", i * 7);
        for (int k = 0; k < 3; k++) md->pos[i][k] = (double)rnd(100000) / 64.0 - 500;
        md->node_on[i] = i != 5;
        snprintf(t, sizeof(t), "%s{\"id\":%s%s%s,\"position\":[%.17g,%.17g,%.17g]%s%s}",
                 i ? "," : "", md->id_int[i] ? "" : "\"", md->id[i], md->id_int[i] ? "" : "\"",
                 md->pos[i][0], md->pos[i][1], md->pos[i][2],
                 i % 7 == 0 ? ",\"tags\":[\"door\"]" : "",
                 md->node_on[i] ? "" : ",\"enabled\":false");
        append(&b, &len, &cap, t);
    }
    append(&b, &len, &cap, "],\"edges\":[");
    for (int j = 0; j < GM; j++) {
        int a = (int)rnd(GN), c = (int)rnd(GN);
        if (c == a) c = (a + 1) % GN;
        md->from[j] = a;
        md->to[j] = c;
        md->oneway[j] = rnd(4) == 0;
        md->edge_on[j] = j % 37 != 3;
        md->tagged[j] = j % 11 == 0;
        md->cost[j] = j % 2 ? (double)rnd(1000) / 8.0
                            : sqrt(pow(md->pos[a][0] - md->pos[c][0], 2) +
                                   pow(md->pos[a][1] - md->pos[c][1], 2) +
                                   pow(md->pos[a][2] - md->pos[c][2], 2));
        snprintf(t, sizeof(t), "%s{\"from\":%s%s%s,\"to\":%s%s%s", j ? "," : "",
                 md->id_int[a] ? "" : "\"", md->id[a], md->id_int[a] ? "" : "\"",
                 md->id_int[c] ? "" : "\"", md->id[c], md->id_int[c] ? "" : "\"");
        append(&b, &len, &cap, t);
        if (j % 2) {
            snprintf(t, sizeof(t), ",\"cost\":%.17g", md->cost[j]);
            append(&b, &len, &cap, t);
        }
        if (md->oneway[j]) append(&b, &len, &cap, ",\"oneway\":true");
        if (!md->edge_on[j]) append(&b, &len, &cap, ",\"enabled\":false");
        if (md->tagged[j]) append(&b, &len, &cap, ",\"tags\":[\"stairs\"],\"id\":\"s\"");
        if (md->tagged[j]) {
            snprintf(t, sizeof(t), "%d", j);
            b[len - 1] = '\0';
            len--;
            append(&b, &len, &cap, t);
            append(&b, &len, &cap, "\"");
        }
        append(&b, &len, &cap, "}");
    }
    append(&b, &len, &cap, "]}");
    return b;
}

/* Whether a JSON id is node i's as uploaded (an integer stays one). */
static bool id_is(const cJSON *v, const model *md, int i) {
    char t[32];
    if (md->id_int[i]) {
        if (!cJSON_IsNumber(v)) return false;
        snprintf(t, sizeof(t), "%d", (int)v->valuedouble);
        return strcmp(t, md->id[i]) == 0;
    }
    return cJSON_IsString(v) && strcmp(v->valuestring, md->id[i]) == 0;
}

/* The export against the model: how many members differ (0 expected). */
static int export_mismatches(const cJSON *j, const model *md) {
    const cJSON *nodes = it_get(j, "nodes"), *edges = it_get(j, "edges");
    int bad = 0;
    if (cJSON_GetArraySize(nodes) != GN || cJSON_GetArraySize(edges) != GM) return -1;
    for (int i = 0; i < GN; i++) {
        const cJSON *n = cJSON_GetArrayItem(nodes, i), *p = cJSON_GetObjectItem(n, "position");
        const cJSON *on = cJSON_GetObjectItem(n, "enabled"), *tags = cJSON_GetObjectItem(n, "tags");
        if (!id_is(cJSON_GetObjectItem(n, "id"), md, i)) bad++;
        if (cJSON_GetArraySize(p) != 3) bad++;
        for (int k = 0; k < 3 && cJSON_GetArraySize(p) == 3; k++)
            if (cJSON_GetArrayItem(p, k)->valuedouble != md->pos[i][k]) bad++;
        if (md->node_on[i] ? on != NULL : !cJSON_IsFalse(on)) bad++;
        if ((i % 7 == 0) != (tags != NULL)) bad++;
    }
    for (int e = 0; e < GM; e++) {
        const cJSON *x = cJSON_GetArrayItem(edges, e);
        const cJSON *ow = cJSON_GetObjectItem(x, "oneway"), *on = cJSON_GetObjectItem(x, "enabled");
        const cJSON *c = cJSON_GetObjectItem(x, "cost"), *tags = cJSON_GetObjectItem(x, "tags");
        if (!id_is(cJSON_GetObjectItem(x, "from"), md, md->from[e])) bad++;
        if (!id_is(cJSON_GetObjectItem(x, "to"), md, md->to[e])) bad++;
        if (!cJSON_IsNumber(c) || fabs(c->valuedouble - md->cost[e]) > 1e-9 * (1 + md->cost[e]))
            bad++;
        if (md->oneway[e] ? !cJSON_IsTrue(ow) : ow != NULL) bad++;
        if (md->edge_on[e] ? on != NULL : !cJSON_IsFalse(on)) bad++;
        if (md->tagged[e] != (tags != NULL)) bad++;
    }
    return bad;
}

static cJSON *get_export(const hc_server *s, const char *map, char *etag, size_t cap) {
    char p[128];
    hc_resp r;
    cJSON *j;
    snprintf(p, sizeof(p), "/v1/maps/%s/graph", map);
    r = it_req(s, "GET", p, NULL, NULL);
    ck_assert_msg(r.status == 200, "graph export %d: %s", r.status, r.body ? r.body : "");
    ck_assert_ptr_nonnull(hc_header(&r, "ETag", etag, cap));
    j = it_json(&r);
    hc_free(&r);
    return j;
}

START_TEST(routes_graph_export_equals_the_graph) {
    hc_server s = it_start(ARGS("--workers", "2"));
    static model md;
    char *body = make_graph(&md), etag[64], etag2[64], patch[512];
    hc_resp r;
    cJSON *j;
    it_put_map(&s, "g", "application/json", body, 201);
    free(body);
    j = get_export(&s, "g", etag, sizeof(etag));
    ck_assert_str_eq(it_str(j, "map"), "g");
    ck_assert_str_eq(it_str(j, "kind"), "graph");
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    ck_assert_int_eq((int)it_num(j, "dimensions"), 3);
    ck_assert_int_eq(export_mismatches(j, &md), 0);
    cJSON_Delete(j);
    r = it_req(&s, "GET", "/v1/maps/g", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(hc_header(&r, "ETag", etag2, sizeof(etag2)), etag);
    hc_free(&r);
    /* A PATCH: a node off, a disabled edge on, an edge off with a new cost. */
    snprintf(patch, sizeof(patch),
             "{\"nodes\":[{\"id\":%s%s%s,\"enabled\":false},{\"id\":\"%s\",\"enabled\":true}],"
             "\"edges\":[{\"index\":3,\"enabled\":true},{\"index\":10,\"enabled\":false,"
             "\"cost\":2.5},{\"id\":\"s22\",\"cost\":0}]}",
             md.id_int[9] ? "" : "\"", md.id[9], md.id_int[9] ? "" : "\"", md.id[5]);
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/g", "application/json", patch, 200));
    md.node_on[9] = false;
    md.node_on[5] = true;
    md.edge_on[3] = true;
    md.edge_on[10] = false;
    md.cost[10] = 2.5;
    md.cost[22] = 0;
    j = get_export(&s, "g", etag2, sizeof(etag2));
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    ck_assert_str_ne(etag2, etag);
    ck_assert_int_eq(export_mismatches(j, &md), 0);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* The door with this name in an export's "doors" (NULL: none). */
static const cJSON *door_named(const cJSON *j, const char *name) {
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(j, "doors")) {
        if (strcmp(it_str(d, "name"), name) == 0) return d;
    }
    return NULL;
}

/* Door groups: listed with their members (edges by index, nodes by id)
 * and "open":false while closed, after PATCHes that toggle them too; the
 * export uploaded again as it is builds the same graph, doors included. */
START_TEST(routes_graph_export_doors) {
    hc_server s = it_start(ARGS("--workers", "1"));
    char etag[64];
    cJSON *j, *k;
    const cJSON *front, *back;
    char *again;
    it_put_map(&s, "g", "application/json",
               "{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]},"
               "{\"id\":\"b\",\"position\":[1,0]},{\"id\":7,\"position\":[2,0]}],"
               "\"edges\":[{\"from\":\"a\",\"to\":\"b\",\"id\":\"ab\"},{\"from\":\"b\",\"to\":7}],"
               "\"doors\":[{\"name\":\"front\",\"edges\":[\"ab\"],\"nodes\":[\"b\"]},"
               "{\"name\":\"back\",\"edges\":[1],\"nodes\":[7],\"open\":false}]}",
               201);
    j = get_export(&s, "g", etag, sizeof(etag));
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "doors")), 2);
    ck_assert_ptr_nonnull(front = door_named(j, "front"));
    ck_assert_ptr_nonnull(back = door_named(j, "back"));
    ck_assert_ptr_null(cJSON_GetObjectItem(front, "open"));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(back, "open")));
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(front, "edges"), 0)->valueint, 0);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(front, "nodes"), 0)->valuestring, "b");
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(back, "edges"), 0)->valueint, 1);
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(back, "nodes"), 0)->valueint, 7);
    cJSON_Delete(j);
    cJSON_Delete(it_call(&s, "PATCH", "/v1/maps/g", "application/json",
                         "{\"doors\":[{\"name\":\"front\",\"open\":false},"
                         "{\"name\":\"back\",\"open\":true}]}",
                         200));
    j = get_export(&s, "g", etag, sizeof(etag));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(door_named(j, "front"), "open")));
    ck_assert_ptr_null(cJSON_GetObjectItem(door_named(j, "back"), "open"));
    /* The export, uploaded again, is the same graph. */
    cJSON_DeleteItemFromObject(j, "map");
    cJSON_DeleteItemFromObject(j, "version");
    cJSON_DeleteItemFromObject(j, "dimensions");
    again = cJSON_PrintUnformatted(j);
    it_put_map(&s, "g2", "application/json", again, 201);
    k = get_export(&s, "g2", etag, sizeof(etag));
    cJSON_DeleteItemFromObject(k, "map");
    cJSON_DeleteItemFromObject(k, "version");
    cJSON_DeleteItemFromObject(k, "dimensions");
    ck_assert_msg(cJSON_Compare(j, k, true), "%s", again);
    cJSON_free(again);
    cJSON_Delete(j);
    cJSON_Delete(k);
    it_stop(&s);
}
END_TEST

START_TEST(routes_graph_export_refusals) {
    hc_server s = it_start(ARGS("--workers", "1"));
    it_put_map(&s, "room", "application/json", it_room_json, 201);
    it_put_map(&s, "g", "application/json",
               "{\"kind\":\"graph\",\"nodes\":[{\"id\":1,\"position\":[0,0]}],\"edges\":[]}", 201);
    it_call_error(&s, "GET", "/v1/maps/room/graph", NULL, NULL, 422, "unsupported", NULL);
    it_call_error(&s, "GET", "/v1/maps/nope/graph", NULL, NULL, 404, "map_not_found", NULL);
    it_call_error(&s, "GET", "/v1/maps/g/graph?intra=true", NULL, NULL, 400, "invalid_request",
                  "intra");
    it_call_error(&s, "POST", "/v1/maps/g/graph", "application/json", "{}", 405,
                  "method_not_allowed", NULL);
    it_stop(&s);
}
END_TEST

/* The "may take N bytes" of a 413. */
static unsigned long long refused_bound(const hc_server *s) {
    hc_resp r = it_req(s, "GET", "/v1/maps/g/graph", NULL, NULL);
    const char *p;
    unsigned long long n = 0;
    it_expect_error(&r, 413, "limit_exceeded", NULL);
    ck_assert_ptr_nonnull(p = strstr(r.body, "may take "));
    n = strtoull(p + 9, NULL, 10);
    hc_free(&r);
    return n;
}

START_TEST(routes_graph_export_limit) {
    /* 300 nodes whose ids are 40 control characters each, written as
     * \u0001 (6 bytes a byte): the bound must hold at the longest escape. */
    char *b = NULL, t[1024], arg[32];
    size_t len = 0, cap = 0, exported;
    unsigned long long bound;
    hc_server s;
    hc_resp r;
    append(&b, &len, &cap, "{\"kind\":\"graph\",\"nodes\":[");
    for (int i = 0; i < 300; i++) {
        char id[256] = "";
        for (int k = 0; k < 37; k++) strcat(id, "\\u0001");
        snprintf(t, sizeof(t), "%s{\"id\":\"%s%03d\",\"position\":[%d.125,-%d]}", i ? "," : "", id,
                 i, i, i * 3);
        append(&b, &len, &cap, t);
    }
    append(&b, &len, &cap, "],\"edges\":[");
    for (int i = 0; i < 299; i++) {
        char id[256] = "";
        for (int k = 0; k < 37; k++) strcat(id, "\\u0001");
        snprintf(t, sizeof(t), "%s{\"from\":\"%s%03d\",\"to\":\"%s%03d\",\"oneway\":true}",
                 i ? "," : "", id, i, id, i + 1);
        append(&b, &len, &cap, t);
    }
    /* Doors whose names and member nodes are at their longest escape too
     * (1,200 node members in all). */
    append(&b, &len, &cap, "],\"doors\":[");
    for (int i = 0; i < 40; i++) {
        char id[256] = "";
        for (int k = 0; k < 10; k++) strcat(id, "\\u0001");
        snprintf(t, sizeof(t), "%s{\"name\":\"%s%03d\",\"edges\":[%d,%d],\"nodes\":[", i ? "," : "",
                 id, i, i, i + 1);
        append(&b, &len, &cap, t);
        for (int k = 0; k < 27; k++) strcat(id, "\\u0001"); /* a node's: 37 of them */
        for (int k = 0; k < 30; k++) { /* more door bytes than the numbers' slack */
            snprintf(t, sizeof(t), "%s\"%s%03d\"", k ? "," : "", id, (i * 7 + k) % 300);
            append(&b, &len, &cap, t);
        }
        snprintf(t, sizeof(t), "]%s}", i % 2 ? ",\"open\":false" : "");
        append(&b, &len, &cap, t);
    }
    append(&b, &len, &cap, "]}");
    /* The answer at the default limit. */
    s = it_start(ARGS("--workers", "1"));
    it_put_map(&s, "g", "application/json", b, 201);
    r = it_req(&s, "GET", "/v1/maps/g/graph", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    exported = r.body_len;
    hc_free(&r);
    it_stop(&s);
    ck_assert_uint_gt(exported, 4096);
    /* The bound a small limit names is at least the answer. */
    s = it_start(ARGS("--workers", "1", "--max-graph-bytes", "4096"));
    it_put_map(&s, "g", "application/json", b, 201);
    bound = refused_bound(&s);
    it_stop(&s);
    ck_assert_msg(bound >= exported, "bound %llu < answer %zu", bound, exported);
    ck_assert_msg(bound <= 4 * exported, "bound %llu > 4 x answer %zu", bound, exported);
    /* At the bound it answers; one byte less it refuses. */
    snprintf(arg, sizeof(arg), "%llu", bound);
    s = it_start(ARGS("--workers", "1", "--max-graph-bytes", arg));
    it_put_map(&s, "g", "application/json", b, 201);
    r = it_req(&s, "GET", "/v1/maps/g/graph", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.body_len, exported);
    hc_free(&r);
    it_stop(&s);
    snprintf(arg, sizeof(arg), "%llu", bound - 1);
    s = it_start(ARGS("--workers", "1", "--max-graph-bytes", arg));
    it_put_map(&s, "g", "application/json", b, 201);
    ck_assert_uint_eq(refused_bound(&s), bound);
    r = it_req(&s, "GET", "/v1/info", NULL, NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "\"max_graph_bytes\":"));
    hc_free(&r);
    it_stop(&s);
    free(b);
}
END_TEST

TU_SUITE(routes_graph_export) {
    Suite *s = suite_create("routes_graph_export");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_graph_export_equals_the_graph);
    tcase_add_test(tc, routes_graph_export_doors);
    tcase_add_test(tc, routes_graph_export_refusals);
    tcase_add_test(tc, routes_graph_export_limit);
    suite_add_tcase(s, tc);
    return s;
}
