/* test_graph_json.c -- the graph codecs (proto/graph_json.h): JSON uploads
 * and their refusals (each naming the element), DIMACS .gr/.co uploads
 * and malformed files (each naming the file and line), the limits, the
 * store's round trip, path queries and PATCHes. Tables of cases. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_json.h"
#include "jsonr.h"
#include "testutil.h"

static const pf_graph_limits lim = {100, 200, 8, 16, 64};

static pf_status upload(const char *text, pf_graph_doc *d, pf_proto_error *e) {
    cJSON *root = NULL;
    pf_status st = pf_jsonr_parse(text, strlen(text), &root, e);
    if (!st) st = pf_graph_doc_from_json(root, &lim, d, e);
    cJSON_Delete(root);
    return st;
}

START_TEST(graph_json_upload_reads_nodes_and_edges) {
    pf_graph_doc d;
    pf_proto_error e;
    const char *text =
        "{\"kind\":\"graph\",\"cost_factor\":2,\"nodes\":["
        "{\"id\":\"a\",\"position\":[0,0],\"tags\":[\"door\"]},{\"id\":7,\"position\":[3,4]},"
        "{\"id\":\"c\",\"position\":[3,0],\"enabled\":false}],"
        "\"edges\":[{\"from\":\"a\",\"to\":7},{\"from\":\"7\",\"to\":\"c\",\"cost\":1.5,"
        "\"oneway\":true,\"id\":\"e1\"},{\"from\":\"c\",\"to\":\"a\",\"factor\":0.5}]}";
    ck_assert_int_eq(upload(text, &d, &e), PF_OK);
    ck_assert_uint_eq(d.n, 3);
    ck_assert_uint_eq(d.m, 3);
    ck_assert_int_eq(d.dim, 2);
    ck_assert_double_eq_tol(d.cost[0], 10.0, 1e-12); /* length 5 x cost_factor 2 */
    ck_assert_double_eq(d.cost[1], 1.5);
    ck_assert_double_eq_tol(d.cost[2], 1.5, 1e-12); /* length 3 x factor 0.5 */
    ck_assert_uint_eq(d.both[0], 1);
    ck_assert_uint_eq(d.both[1], 0);
    ck_assert_uint_eq(d.node_off[2], 1);
    ck_assert_uint_eq(pf_graph_doc_node(&d, "7"), 1);
    ck_assert_uint_eq(pf_graph_doc_node(&d, "b"), PF_GRAPH_NONE);
    ck_assert_uint_eq(pf_graph_doc_edge(&d, "e1"), 1);
    pf_graph_doc_free(&d);
}
END_TEST

/* Each malformed upload: status, code, field. */
static const struct {
    const char *body;
    pf_status st;
    const char *field;
} bad_uploads[] = {
    {"{\"kind\":\"graph\",\"nodes\":[]}", PF_EINVAL, "nodes"},
    {"{\"kind\":\"graph\"}", PF_EPARSE, "nodes"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]},{\"id\":\"a\",\"position\":"
     "[1,0]}]}",
     PF_EINVAL, "nodes[1].id"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":3,\"position\":[0,0]},{\"id\":\"3\",\"position\":"
     "[1,0]}]}",
     PF_EINVAL, "nodes[1].id"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]}],\"edges\":[{\"from\":\"a\","
     "\"to\":\"zz\"}]}",
     PF_EINVAL, "edges[0].to"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]}],\"edges\":[{\"from\":\"a\","
     "\"to\":\"a\",\"cost\":-1}]}",
     PF_EINVAL, "edges[0].cost"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]}],\"edges\":[{\"from\":\"a\","
     "\"to\":\"a\",\"cost\":1e999}]}",
     PF_EPARSE, "edges[0].cost"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,1e999]}]}", PF_EINVAL,
     "nodes[0].position"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]},{\"id\":\"b\",\"position\":"
     "[0,0,0]}]}",
     PF_EINVAL, "nodes[1].position"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0]}]}", PF_EPARSE,
     "nodes[0].position"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"\",\"position\":[0,0]}]}", PF_EINVAL, "nodes[0].id"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":true,\"position\":[0,0]}]}", PF_EPARSE, "nodes[0].id"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0],\"colour\":1}]}", PF_EPARSE,
     "nodes[0].colour"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]}],\"edges\":[{\"from\":\"a\","
     "\"to\":\"a\",\"cost\":1,\"factor\":2}]}",
     PF_EINVAL, "edges[0]"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]}],\"edges\":[{\"from\":\"a\","
     "\"to\":\"a\",\"id\":\"x\"},{\"from\":\"a\",\"to\":\"a\",\"id\":\"x\"}]}",
     PF_EINVAL, "edges[1].id"},
    {"{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0],\"tags\":[\"\"]}]}",
     PF_EINVAL, "nodes[0].tags"},
    {"{\"kind\":\"graph\",\"dimacs\":{\"gr\":\"p sp 1 0\"}}", PF_EPARSE, "dimacs.co"},
    {"{\"kind\":\"graph\",\"dimacs\":{\"gr\":\"\",\"co\":\"\",\"x\":1}}", PF_EPARSE, "dimacs.x"},
};

START_TEST(graph_json_upload_refusals_name_the_element) {
    for (size_t i = 0; i < sizeof(bad_uploads) / sizeof(bad_uploads[0]); i++) {
        pf_graph_doc d;
        pf_proto_error e;
        memset(&e, 0, sizeof(e));
        pf_status st = upload(bad_uploads[i].body, &d, &e);
        ck_assert_msg(st == bad_uploads[i].st && strcmp(e.field, bad_uploads[i].field) == 0,
                      "case %zu: status %d field '%s' (%s), want %d '%s'", i, st, e.field,
                      e.message, bad_uploads[i].st, bad_uploads[i].field);
        ck_assert_ptr_null(d.pos);
    }
}
END_TEST

/* The limits: nodes, edges, degree, each 413 naming its flag. */
START_TEST(graph_json_limits) {
    pf_graph_doc d;
    pf_proto_error e;
    char *body = malloc(64 * 1024);
    size_t len = (size_t)sprintf(body, "{\"kind\":\"graph\",\"nodes\":[");
    for (int i = 0; i < 101; i++)
        len += (size_t)sprintf(body + len, "%s{\"id\":%d,\"position\":[%d,0]}", i ? "," : "", i, i);
    strcpy(body + len, "]}");
    ck_assert_int_eq(upload(body, &d, &e), PF_ELIMIT);
    ck_assert_str_eq(e.field, "nodes");
    ck_assert_ptr_nonnull(strstr(e.message, "--graph-max-nodes"));
    /* Degree: 9 edges leave node 0 (limit 8). */
    len = (size_t)sprintf(body, "{\"kind\":\"graph\",\"nodes\":[{\"id\":0,\"position\":[0,0]},"
                                "{\"id\":1,\"position\":[1,0]}],\"edges\":[");
    for (int i = 0; i < 9; i++)
        len += (size_t)sprintf(body + len, "%s{\"from\":0,\"to\":1,\"oneway\":true}", i ? "," : "");
    strcpy(body + len, "]}");
    ck_assert_int_eq(upload(body, &d, &e), PF_ELIMIT);
    ck_assert_str_eq(e.field, "edges[8]");
    ck_assert_ptr_nonnull(strstr(e.message, "--graph-max-degree"));
    /* Edges. */
    len = (size_t)sprintf(body, "{\"kind\":\"graph\",\"nodes\":[{\"id\":0,\"position\":[0,0]}],"
                                "\"edges\":[");
    for (int i = 0; i < 201; i++)
        len += (size_t)sprintf(body + len, "%s{\"from\":0,\"to\":0}", i ? "," : "");
    strcpy(body + len, "]}");
    ck_assert_int_eq(upload(body, &d, &e), PF_ELIMIT);
    ck_assert_str_eq(e.field, "edges");
    ck_assert_ptr_nonnull(strstr(e.message, "--graph-max-edges"));
    free(body);
}
END_TEST

static pf_status dimacs(const char *gr, const char *co, pf_graph_doc *d, pf_proto_error *e) {
    return pf_graph_doc_from_dimacs(gr, strlen(gr), co, strlen(co), &lim, d, e);
}

START_TEST(graph_json_dimacs_reads) {
    pf_graph_doc d;
    pf_proto_error e;
    const char *gr = "c a comment\r\np sp 3 3\na 1 2 7\na 2 3 5\n\na 3 1 0\n";
    const char *co = "c coords\np aux sp co 3\nv 2 10 0\nv 1 0 0\nv 3 -10 20\n";
    ck_assert_int_eq(dimacs(gr, co, &d, &e), PF_OK);
    ck_assert_uint_eq(d.n, 3);
    ck_assert_uint_eq(d.m, 3);
    ck_assert_uint_eq(d.from[1], 1);
    ck_assert_uint_eq(d.to[1], 2);
    ck_assert_double_eq(d.cost[0], 7);
    ck_assert_uint_eq(d.both[0], 0);
    ck_assert_double_eq(d.pos[3 * 2], -10);
    ck_assert_double_eq(d.pos[3 * 2 + 1], 20);
    ck_assert_uint_eq(pf_graph_doc_node(&d, "3"), 2);
    ck_assert_uint_eq(d.id_int[0], 1);
    pf_graph_doc_free(&d);
}
END_TEST

/* Malformed DIMACS: which file, which line. */
static const struct {
    const char *gr, *co;
    pf_status st;
    const char *field, *says;
} bad_dimacs[] = {
    {"a 1 2 3\np sp 2 1\n", "p aux sp co 2\nv 1 0 0\nv 2 0 0\n", PF_EINVAL, "dimacs.gr", "line 1"},
    {"p sp 2 1\np sp 2 1\n", "", PF_EINVAL, "dimacs.gr", "line 2: a second problem line"},
    {"p sp 2\n", "", PF_EINVAL, "dimacs.gr", "line 1"},
    {"p sp 0 0\n", "", PF_EINVAL, "dimacs.gr", "nodes >= 1"},
    {"p sp 2 1\na 1 3 1\n", "", PF_EINVAL, "dimacs.gr", "line 2: an arc's ends"},
    {"p sp 2 1\na 0 1 1\n", "", PF_EINVAL, "dimacs.gr", "line 2"},
    {"p sp 2 1\na 1 2 -4\n", "", PF_EINVAL, "dimacs.gr", "line 2: an arc's cost"},
    {"p sp 2 1\na 1 2 nan\n", "", PF_EINVAL, "dimacs.gr", "line 2: an arc's cost"},
    {"p sp 2 1\na 1 2 1e999\n", "", PF_EINVAL, "dimacs.gr", "line 2: an arc's cost"},
    {"p sp 2 1\na 1 2 1 9\n", "", PF_EINVAL, "dimacs.gr", "line 2: an arc is"},
    {"p sp 2 1\na 1 2 1\na 2 1 1\n", "", PF_EINVAL, "dimacs.gr", "line 3: more arcs"},
    {"p sp 2 2\na 1 2 1\n", "", PF_EINVAL, "dimacs.gr", "fewer arcs"},
    {"p sp 2 1\nx 1 2 1\n", "", PF_EINVAL, "dimacs.gr", "line 2: a line is"},
    {"c nothing\n", "", PF_EINVAL, "dimacs.gr", "no problem line"},
    {"p sp 101 0\n", "", PF_ELIMIT, "dimacs.gr", "--graph-max-nodes"},
    {"p sp 2 201\n", "", PF_ELIMIT, "dimacs.gr", "--graph-max-edges"},
    {"p sp 2 0\n", "p aux sp co 3\n", PF_EINVAL, "dimacs.co", "line 1: the node count differs"},
    {"p sp 2 0\n", "v 1 0 0\n", PF_EINVAL, "dimacs.co", "line 1: a coordinate before"},
    {"p sp 2 0\n", "p aux sp co 2\nv 1 0 0\nv 1 0 0\n", PF_EINVAL, "dimacs.co", "line 3: a node's"},
    {"p sp 2 0\n", "p aux sp co 2\nv 1 0 0\n", PF_EINVAL, "dimacs.co", "node 2 has no"},
    {"p sp 2 0\n", "p aux sp co 2\nv 3 0 0\n", PF_EINVAL, "dimacs.co", "line 2"},
    {"p sp 2 0\n", "p aux sp co 2\nv 1 0 1e10\n", PF_EINVAL, "dimacs.co", "line 2: coordinates"},
    {"p sp 2 0\n", "p aux sp co 2\nv 1 0\n", PF_EINVAL, "dimacs.co", "line 2: a coordinate is"},
    {"p sp 2 0\n", "p aux sp 2\n", PF_EINVAL, "dimacs.co", "line 1: the problem line"},
};

START_TEST(graph_json_dimacs_malformed) {
    char longline[400];
    pf_graph_doc d;
    pf_proto_error e;
    for (size_t i = 0; i < sizeof(bad_dimacs) / sizeof(bad_dimacs[0]); i++) {
        memset(&e, 0, sizeof(e));
        pf_status st = dimacs(bad_dimacs[i].gr, bad_dimacs[i].co, &d, &e);
        ck_assert_msg(st == bad_dimacs[i].st && strcmp(e.field, bad_dimacs[i].field) == 0 &&
                          strstr(e.message, bad_dimacs[i].says),
                      "case %zu: status %d field '%s' message '%s'", i, st, e.field, e.message);
        ck_assert_ptr_null(d.pos);
    }
    /* A line past 255 bytes. */
    memset(longline, ' ', sizeof(longline));
    memcpy(longline, "c", 1);
    longline[sizeof(longline) - 1] = '\0';
    ck_assert_int_eq(dimacs(longline, "", &d, &e), PF_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "longer than 255"));
}
END_TEST

/* The store's form parses back into the same graph, PATCHed state too. */
START_TEST(graph_json_store_round_trip) {
    pf_graph_doc d, d2;
    pf_proto_error e;
    pf_graph *g, *g2, *g3;
    pf_graph_patch p;
    pf_graph_change ch;
    pf_jsonw w;
    const char *text = "{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0.1,0,2]},"
                       "{\"id\":-5,\"position\":[3,4,1],\"tags\":[\"x\",\"y\"]}],"
                       "\"edges\":[{\"from\":\"a\",\"to\":-5,\"id\":\"e\",\"tags\":[\"t\"]},"
                       "{\"from\":-5,\"to\":\"a\",\"cost\":0.3,\"oneway\":true}]}";
    const char *patch = "{\"nodes\":[{\"id\":-5,\"enabled\":false}],"
                        "\"edges\":[{\"id\":\"e\",\"cost\":2.25},{\"index\":1,\"enabled\":false}]}";
    pf_graph_spec s;
    ck_assert_int_eq(upload(text, &d, &e), PF_OK);
    s = (pf_graph_spec){d.n, d.dim, d.pos, d.m, d.from, d.to, d.cost, d.both, 0, NULL, NULL};
    ck_assert_int_eq(pf_graph_build(&s, &g, NULL), PF_OK);
    ck_assert_int_eq(pf_graph_patch_parse(patch, strlen(patch), 0, &p, &e), PF_OK);
    ck_assert_int_eq(pf_graph_patch_resolve(&p, &d, &ch, &e), PF_OK);
    ck_assert_int_eq(pf_graph_change_apply(g, &ch, &g2, NULL), PF_OK);
    free((void *)ch.costs);
    free((void *)ch.edges);
    free((void *)ch.nodes);
    pf_graph_patch_free(&p);
    pf_jsonw_init(&w, 256);
    pf_jsonw_obj_begin(&w);
    pf_graph_doc_write(&w, &d, g2);
    pf_jsonw_obj_end(&w);
    ck_assert_int_eq(upload(w.buf, &d2, &e), PF_OK);
    ck_assert_uint_eq(d2.n, 2);
    ck_assert_uint_eq(d2.id_int[1], 1);
    ck_assert_uint_eq(pf_graph_doc_node(&d2, "-5"), 1);
    ck_assert_double_eq(d2.cost[0], 2.25);
    ck_assert_double_eq(d2.cost[1], 0.3);
    ck_assert_uint_eq(d2.node_off[1], 1);
    ck_assert_uint_eq(d2.edge_off[1], 1);
    ck_assert_uint_eq(d2.both[1], 0);
    ck_assert_double_eq(d2.pos[0], 0.1);
    ck_assert_int_eq(d2.dim, 3);
    /* Written again, the same text. */
    {
        pf_jsonw w2;
        pf_graph_toggle nodes[1] = {{1, false}}, edges[1] = {{1, false}};
        pf_graph_cost_change costs[1] = {{0, 2.25}};
        pf_graph_change c2 = {costs, 1, edges, nodes, 1, 1};
        s = (pf_graph_spec){d2.n,    d2.dim,  d2.pos, d2.m, d2.from, d2.to,
                            d2.cost, d2.both, 0,      NULL, NULL};
        ck_assert_int_eq(pf_graph_build(&s, &g3, NULL), PF_OK);
        pf_graph_release(g3 == NULL ? NULL : g3);
        ck_assert_int_eq(pf_graph_build(&s, &g3, NULL), PF_OK);
        {
            pf_graph *g4;
            ck_assert_int_eq(pf_graph_change_apply(g3, &c2, &g4, NULL), PF_OK);
            pf_jsonw_init(&w2, 256);
            pf_jsonw_obj_begin(&w2);
            pf_graph_doc_write(&w2, &d2, g4);
            pf_jsonw_obj_end(&w2);
            ck_assert_str_eq(w2.buf, w.buf);
            pf_jsonw_free(&w2);
            pf_graph_release(g4);
        }
        pf_graph_release(g3);
    }
    pf_jsonw_free(&w);
    pf_graph_release(g2);
    pf_graph_release(g);
    pf_graph_doc_free(&d);
    pf_graph_doc_free(&d2);
}
END_TEST

START_TEST(graph_json_path_requests) {
    pf_graph_path_request q, *qs;
    pf_proto_error e;
    size_t n;
    int64_t dl;
    const char *one = "{\"start\":\"a\",\"goal\":{\"point\":[1,2.5]},\"algorithm\":\"dijkstra\","
                      "\"max_expanded\":10,\"partial\":true,\"deadline_ms\":5}";
    const char *batch = "{\"queries\":[{\"start\":1,\"goal\":2},{\"start\":\"x\",\"goal\":"
                        "\"y\",\"deadline_ms\":3}]}";
    pf_kv kv[3] = {{"start", "door 1"}, {"goal_point", "1,2,3"}, {"algorithm", "auto"}};
    ck_assert_int_eq(pf_graph_path_request_parse(one, strlen(one), 64, &q, &e), PF_OK);
    ck_assert_str_eq(q.start.id, "a");
    ck_assert(q.goal.is_point);
    ck_assert_int_eq(q.goal.dims, 2);
    ck_assert_double_eq(q.goal.p[1], 2.5);
    ck_assert_int_eq(q.algorithm, PF_GRAPH_DIJKSTRA);
    ck_assert_uint_eq(q.max_expanded, 10);
    ck_assert(q.partial);
    ck_assert_int_eq(q.deadline_ms, 5);
    ck_assert_int_eq(pf_graph_path_batch_parse(batch, strlen(batch), 10, 64, &qs, &n, &dl, &e),
                     PF_EINVAL);
    ck_assert_str_eq(e.field, "queries[1].deadline_ms");
    ck_assert_int_eq(pf_graph_path_batch_parse(batch, strlen(batch), 1, 64, &qs, &n, &dl, &e),
                     PF_ELIMIT);
    ck_assert_int_eq(pf_graph_path_request_from_query(kv, 3, 64, &q, &e), PF_OK);
    ck_assert_str_eq(q.start.id, "door 1");
    ck_assert_int_eq(q.goal.dims, 3);
    ck_assert_int_eq(q.algorithm, PF_GRAPH_AUTO); /* resolved against the map when run */
    kv[1].value = "1,x";
    ck_assert_int_eq(pf_graph_path_request_from_query(kv, 3, 64, &q, &e), PF_EINVAL);
    ck_assert_str_eq(e.field, "goal_point");
    kv[2].key = "bogus";
    kv[1].value = "1,2";
    ck_assert_int_eq(pf_graph_path_request_from_query(kv, 3, 64, &q, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "bogus");
    ck_assert_int_eq(pf_graph_path_request_parse("{\"start\":\"a\"}", 13, 64, &q, &e), PF_EPARSE);
    ck_assert_str_eq(e.field, "goal");
    ck_assert_int_eq(pf_graph_path_request_parse(
                         "{\"start\":\"a\",\"goal\":\"b\",\"algorithm\":\"jps\"}", 42, 64, &q, &e),
                     PF_EINVAL);
    ck_assert_str_eq(e.field, "algorithm");
}
END_TEST

START_TEST(graph_json_patch_refusals) {
    static const struct {
        const char *body;
        size_t max;
        pf_status st;
        const char *field;
    } cases[] = {
        {"{}", 0, PF_EPARSE, ""},
        {"{\"nodes\":[{\"id\":\"a\"}]}", 0, PF_EPARSE, "nodes[0].id"},
        {"{\"edges\":[{\"index\":0}]}", 0, PF_EPARSE, "edges[0]"},
        {"{\"edges\":[{\"enabled\":true}]}", 0, PF_EPARSE, "edges[0]"},
        {"{\"edges\":[{\"index\":0,\"cost\":-2}]}", 0, PF_EINVAL, "edges[0].cost"},
        {"{\"edges\":[{\"index\":0,\"cost\":1},{\"index\":1,\"cost\":1}]}", 1, PF_ELIMIT, ""},
        {"{\"lines\":[]}", 0, PF_EPARSE, "lines"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pf_graph_patch p;
        pf_proto_error e;
        memset(&e, 0, sizeof(e));
        pf_status st =
            pf_graph_patch_parse(cases[i].body, strlen(cases[i].body), cases[i].max, &p, &e);
        ck_assert_msg(st == cases[i].st && strcmp(e.field, cases[i].field) == 0,
                      "case %zu: %d '%s' %s", i, st, e.field, e.message);
    }
    /* Resolve: unknown ids and indices past the edges. */
    {
        pf_graph_doc d;
        pf_proto_error e;
        pf_graph_patch p;
        pf_graph_change ch;
        const char *b1 = "{\"nodes\":[{\"id\":\"zz\",\"enabled\":false}]}";
        const char *b2 = "{\"edges\":[{\"index\":5,\"enabled\":false}]}";
        ck_assert_int_eq(upload("{\"kind\":\"graph\",\"nodes\":[{\"id\":\"a\",\"position\":[0,0]}],"
                                "\"edges\":[{\"from\":\"a\",\"to\":\"a\"}]}",
                                &d, &e),
                         PF_OK);
        ck_assert_int_eq(pf_graph_patch_parse(b1, strlen(b1), 0, &p, &e), PF_OK);
        ck_assert_int_eq(pf_graph_patch_resolve(&p, &d, &ch, &e), PF_EINVAL);
        ck_assert_str_eq(e.field, "nodes[0].id");
        pf_graph_patch_free(&p);
        ck_assert_int_eq(pf_graph_patch_parse(b2, strlen(b2), 0, &p, &e), PF_OK);
        ck_assert_int_eq(pf_graph_patch_resolve(&p, &d, &ch, &e), PF_EINVAL);
        ck_assert_str_eq(e.field, "edges[0].index");
        pf_graph_patch_free(&p);
        pf_graph_doc_free(&d);
    }
}
END_TEST

TU_SUITE(graph_json) {
    Suite *s = suite_create("graph_json");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, graph_json_upload_reads_nodes_and_edges);
    tcase_add_test(tc, graph_json_upload_refusals_name_the_element);
    tcase_add_test(tc, graph_json_limits);
    tcase_add_test(tc, graph_json_dimacs_reads);
    tcase_add_test(tc, graph_json_dimacs_malformed);
    tcase_add_test(tc, graph_json_store_round_trip);
    tcase_add_test(tc, graph_json_path_requests);
    tcase_add_test(tc, graph_json_patch_refusals);
    suite_add_tcase(s, tc);
    return s;
}
