/* fuzz_inputs.c -- libFuzzer target over everything a client can send
 * (`make fuzz`; not part of `make test`).
 *
 * The first byte picks the reader, the rest is its input:
 *   0 JSON map, then searches on it      6 session updates (JSON)
 *   1 Moving AI map text, then searches  7 session updates (NDJSON)
 *   2 path request body                  8 map PATCH body
 *   3 batch body                         9 WebSocket frames, fed in pieces
 *   4 query string (k=v&k=v)            10 --data-dir map file
 *   5 session create body               11 Moving AI scenario text
 *                                       12 --auth-token-file, then the
 *                                          input's lines as Authorization
 *                                       13 strict HTTP checks: version,
 *                                          target, then header lines
 *                                       14 Host and Origin values against
 *                                          the guard's lists
 *  15 Wavefront OBJ (model/obj)         18 navmesh path request and batch
 *  16 navmesh upload envelope (JSON)    19 crowd create and command bodies
 *  17 navmesh PATCH body                20 --data-dir navmesh map file
 *  21 graph upload (JSON), then a build, 22 graph upload (DIMACS: .gr, a
 *     searches, a snap and the store       NUL, .co), then the same
 *     form parsed back                  23 graph path request and PATCH
 * Built with ASan and UBSan, so any out-of-bounds access, leak, overflow or
 * undefined behaviour is a crash. Readers must also keep their contract:
 * an error always comes with a message (valid UTF-8, whatever the input
 * held), a WebSocket text message handed over is valid UTF-8, a token file
 * error never holds a token, and maps that parse are searched
 * with astar, dijkstra, jps and hpa, which must agree on reachability and
 * cost (jps and dijkstra exactly; hpa never below the optimum), with every
 * returned path valid.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "crowd_json.h"
#include "graph.h"
#include "graph_json.h"
#include "graph_table_json.h"
#include "guard.h"
#include "http_strict.h"
#include "jsonr.h"
#include "kind_grid.h"
#include "kind_navmesh.h"
#include "map_io.h"
#include "map_json.h"
#include "nav_json.h"
#include "nav_path_json.h"
#include "obj.h"
#include "path.h"
#include "path_json.h"
#include "planner.h"
#include "search.h"
#include "session_json.h"
#include "store.h"
#include "utf8.h"
#include "ws.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_inputs: %s:%d: %s\n", __FILE__, __LINE__, #c);                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static pf_grid_limits small_limits(void) {
    pf_grid_limits lim = pf_grid_default_limits();
    lim.max_cells = 64 * 64; /* searches on every input must stay fast */
    lim.max_side = 256;
    lim.max_doors = 16;
    return lim;
}

static void check_error(pf_status st, const pf_proto_error *e) {
    if (st == PF_OK) return;
    CHECK(e->message[0] != '\0');
    CHECK(e->code != PF_ERR_NONE);
    CHECK(pf_utf8_is_valid(e->message, strlen(e->message)));
    CHECK(pf_utf8_is_valid(e->field, strlen(e->field)));
}

/* Searches a parsed map between cells picked from the input. */
static void search_map(pf_grid *g, const uint8_t *data, size_t size) {
    static pf_search_ctx *ctx;
    pf_planner_opts po = {true, 0, 1 << 20, 0, PF_JPS_DEFAULT_TABLE_BYTES, -1, 0, NULL};
    pf_planner *p = NULL;
    int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    if (!ctx) ctx = pf_search_ctx_create(); /* kept: scratch reuse is part of what runs */
    CHECK(ctx);
    if (pf_planner_create(g, &po, &p) != PF_OK) return;
    for (size_t i = 0; i + 4 <= size && i < 32; i += 4) {
        pf_point s = {data[i] % w, data[i + 1] % h}, t = {data[i + 2] % w, data[i + 3] % h};
        static const pf_algorithm algos[] = {PF_ALGO_DIJKSTRA, PF_ALGO_ASTAR, PF_ALGO_JPS,
                                             PF_ALGO_HPA};
        double costs[4];
        pf_status sts[4];
        if (!pf_grid_is_walkable(pf_planner_grid(p), s) ||
            !pf_grid_is_walkable(pf_planner_grid(p), t))
            continue;
        for (int a = 0; a < 4; a++) {
            pf_query q = pf_query_make(s, t, algos[a]);
            pf_result r;
            sts[a] = pf_planner_search(ctx, p, &q, &r);
            costs[a] = r.cost;
            CHECK(sts[a] == PF_OK || sts[a] == PF_NO_PATH);
            if (sts[a] == PF_OK) {
                double c;
                CHECK(pf_path_validate(pf_planner_grid(p), r.path, r.path_len, &c, NULL) == PF_OK);
                CHECK(r.path[0].x == s.x && r.path[0].y == s.y);
                CHECK(r.path[r.path_len - 1].x == t.x && r.path[r.path_len - 1].y == t.y);
                CHECK(fabs(c - r.cost) <= 1e-9 * (1 + c));
            }
        }
        for (int a = 1; a < 4; a++) {
            CHECK(sts[a] == sts[0]);
            if (sts[0] != PF_OK) continue;
            if (algos[a] == PF_ALGO_HPA)
                CHECK(costs[a] >= costs[0] - 1e-9 * (1 + costs[0]));
            else
                CHECK(fabs(costs[a] - costs[0]) <= 1e-9 * (1 + costs[0]));
        }
    }
    pf_planner_destroy(p);
}

/* A graph document that parsed: it builds, a search and a snap run on it,
 * and its store form parses back into the same counts. */
static void graph_doc_run(pf_graph_doc *d, const pf_graph_limits *lim) {
    static pf_graph_ctx *ctx;
    pf_graph_spec spec = {d->n,    d->dim,  d->pos, d->m, d->from, d->to,
                          d->cost, d->both, 0,      NULL, NULL};
    pf_graph *g = NULL;
    pf_graph_path p;
    pf_jsonw w;
    cJSON *root = NULL;
    pf_graph_doc back;
    pf_proto_error e;
    double at[3] = {0, 0, 0};
    if (!ctx) ctx = pf_graph_ctx_create();
    CHECK(pf_graph_build(&spec, &g, NULL) == PF_OK);
    for (int a = 0; a < PF_GRAPH_ALGORITHMS; a++) {
        pf_graph_query q = {
            0,    d->n - 1, (pf_graph_algorithm)a, 0, true, NULL, NULL, NULL, 0, NULL, NULL, 0,
            NULL, 0};
        pf_status st = pf_graph_search(g, ctx, &q, &p);
        CHECK(st == PF_OK || st == PF_NO_PATH);
        CHECK(p.len == 0 || (p.nodes[0] == 0 && p.end < d->n));
    }
    CHECK(pf_graph_nearest(g, at, NULL, NULL) < d->n);
    pf_jsonw_init(&w, 256);
    pf_jsonw_obj_begin(&w);
    pf_graph_doc_write(&w, d, g);
    pf_jsonw_obj_end(&w);
    CHECK(!pf_jsonw_failed(&w));
    CHECK(pf_jsonr_parse(w.buf, w.len, &root, &e) == PF_OK);
    CHECK(pf_graph_doc_from_json(root, lim, &back, &e) == PF_OK);
    CHECK(back.n == d->n && back.m == d->m);
    pf_graph_doc_free(&back);
    cJSON_Delete(root);
    pf_jsonw_free(&w);
    pf_graph_release(g);
}

static void fuzz_query_string(const char *s, size_t n) {
    /* Split like libmicrohttpd hands arguments over: k=v pairs on '&'. */
    char *buf = malloc(n + 1);
    pf_kv kv[32];
    size_t nkv = 0;
    pf_path_request q;
    pf_proto_error e;
    char *save = NULL, *tok;
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (tok = strtok_r(buf, "&", &save); tok && nkv < 32; tok = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(tok, '=');
        if (eq) *eq = '\0';
        kv[nkv].key = tok;
        kv[nkv].value = eq ? eq + 1 : NULL;
        nkv++;
    }
    check_error(pf_path_request_from_query(kv, nkv, &q, &e), &e);
    free(buf);
}

static void fuzz_ws(const uint8_t *d, size_t n) {
    pf_ws_decoder dec;
    size_t pos = 0;
    pf_ws_decoder_init(&dec, 4096);
    while (pos < n) {
        /* Feed in pieces whose sizes come from the input itself. */
        size_t piece = 1 + d[pos] % 64, used = 0;
        pf_ws_message m;
        bool got = false;
        pf_status st;
        if (piece > n - pos) piece = n - pos;
        st = pf_ws_decode(&dec, d + pos, piece, &used, &m, &got);
        if (st != PF_OK) {
            CHECK(dec.close_code != 0);
            break;
        }
        CHECK(used <= piece);
        if (got) CHECK(m.len <= 4096);
        if (got && m.op == PF_WS_OP_TEXT) CHECK(pf_utf8_is_valid((const char *)m.data, m.len));
        pos += used ? used : piece;
    }
    pf_ws_decoder_free(&dec);
}

/* A token file, then every line of the input as an Authorization value. */
static void fuzz_tokens(const char *s, size_t n) {
    pf_auth_table *t = NULL;
    char err[256], *line = malloc(n + 1);
    pf_status st = pf_auth_table_parse(s, n, &t, err, sizeof(err));
    if (st) CHECK(strncmp(err, "line ", 5) == 0 || strncmp(err, "no token", 8) == 0);
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t k = nl ? (size_t)(nl - (s + i)) : n - i, len;
        pf_scope sc = PF_SCOPE_OPEN;
        const char *tok;
        memcpy(line, s + i, k);
        line[k] = '\0';
        tok = pf_auth_bearer(line, &len);
        if (tok) CHECK(tok > line && tok + len <= line + k && len > 0);
        if (pf_auth_table_check(t, line, &sc, NULL) == PF_AUTH_OK) {
            CHECK(t && tok && (sc == PF_SCOPE_READ || sc == PF_SCOPE_WRITE));
            CHECK(len >= PF_AUTH_TOKEN_MIN && len <= PF_AUTH_TOKEN_MAX);
        }
        i += k + 1;
    }
    pf_auth_table_free(t);
    free(line);
}

/* Line 1 the version, line 2 the raw target, then "name:value" lines. */
static void fuzz_strict(const char *s, size_t n) {
    char *buf = malloc(n + 1), *save = NULL, *line;
    pf_http_header h[32];
    size_t nh = 0;
    pf_http_reqline rl = {"", "", false};
    pf_strict_reason why;
    pf_strict_verdict v;
    int k = 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    rl.target_has_nul = strlen(buf) < n; /* a NUL in the input */
    for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save), k++) {
        char *colon;
        if (k == 0) {
            rl.version = line;
            continue;
        }
        if (k == 1) {
            rl.raw_target = line;
            continue;
        }
        if (nh == 32 || !(colon = strchr(line, ':'))) continue;
        *colon = '\0';
        h[nh].name = line;
        h[nh].value = colon + 1;
        nh++;
    }
    v = pf_http_strict_check(&rl, h, nh, &why);
    CHECK(v == PF_STRICT_OK || v == PF_STRICT_BAD || v == PF_STRICT_NOT_IMPLEMENTED);
    if (v != PF_STRICT_OK) {
        CHECK(why.message[0] != '\0');
        CHECK(pf_utf8_is_valid(why.message, strlen(why.message)));
    }
    free(buf);
}

/* Every line as a Host and as an Origin, against a guard with lists and
 * one with the loopback rule. A loopback-only guard must refuse any name
 * that is not a loopback one, whatever follows it. */
static void fuzz_guard(const char *s, size_t n) {
    static pf_guard *lists, *loopback;
    char *buf = malloc(n + 1), *save = NULL, *line;
    if (!lists) {
        pf_config c;
        char err[256];
        pf_config_defaults(&c);
        snprintf(c.allowed_hosts, sizeof(c.allowed_hosts), "pathd.internal,.fleet.example,[::1]");
        snprintf(c.cors_origin, sizeof(c.cors_origin), "https://tool.example:8443");
        CHECK(pf_guard_create(&c, &lists, err, sizeof(err)) == PF_OK);
        pf_config_defaults(&c);
        CHECK(pf_guard_create(&c, &loopback, err, sizeof(err)) == PF_OK);
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        bool ok = pf_guard_host_allowed(loopback, line);
        (void)pf_guard_host_allowed(lists, line);
        (void)pf_guard_cors_allowed(lists, line);
        if (ok) { /* a loopback name (then a port at most) */
            char *low = strdup(line);
            CHECK(low);
            for (char *p = low; *p; p++)
                if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
            CHECK(strncmp(low, "localhost", 9) == 0 || strncmp(low, "127.", 4) == 0 ||
                  strncmp(low, "[::1]", 5) == 0 || strstr(low, ".localhost") != NULL);
            free(low);
        }
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pf_grid_limits lim = small_limits();
    pf_proto_error e;
    const char *s;
    size_t n;
    pf_status st;
    if (size < 1) return 0;
    s = (const char *)data + 1;
    n = size - 1;
    memset(&e, 0, sizeof(e));
    /* 24 readers; % 32 keeps the seeds' first bytes (0..23) stable when
     * readers are added. */
    switch (data[0] % 32) {
    case 0:
    case 1: {
        pf_grid *g = NULL;
        st = data[0] % 32 == 0 ? pf_map_json_parse(s, n, &lim, &g, &e)
                               : pf_map_text_parse(s, n, &lim, &g, &e);
        check_error(st, &e);
        if (st == PF_OK) search_map(g, data, size);
        break;
    }
    case 2: {
        pf_path_request q;
        check_error(pf_path_request_parse(s, n, &q, &e), &e);
        break;
    }
    case 3: {
        pf_path_request *qs = NULL;
        size_t nq = 0;
        int64_t dl;
        st = pf_path_batch_parse(s, n, 16, &qs, &nq, &dl, &e);
        check_error(st, &e);
        if (st == PF_OK) CHECK(nq >= 1 && nq <= 16);
        free(qs);
        break;
    }
    case 4:
        fuzz_query_string(s, n);
        break;
    case 5: {
        pf_session_request q;
        check_error(pf_session_request_parse(s, n, 3600, &q, &e), &e);
        break;
    }
    case 6:
    case 7: {
        pf_update_list l;
        st = pf_update_list_parse(s, n, data[0] % 32 == 7, 64, &l, &e);
        check_error(st, &e);
        if (st == PF_OK) pf_update_list_free(&l);
        break;
    }
    case 8: {
        pf_update u;
        st = pf_map_patch_parse(s, n, &u, &e);
        check_error(st, &e);
        if (st == PF_OK) pf_update_free(&u);
        break;
    }
    case 9:
        fuzz_ws(data + 1, n);
        break;
    case 10: {
        pf_grid *g = NULL;
        uint64_t v;
        if (pf_grid_image_decode(data + 1, n, &lim, &g, &v) == PF_OK) pf_grid_destroy(g);
        break;
    }
    case 11: {
        pf_scen sc;
        pf_parse_error pe;
        if (pf_scen_parse(s, n, 1000, &sc, &pe) == PF_OK) pf_scen_free(&sc);
        break;
    }
    case 12:
        fuzz_tokens(s, n);
        break;
    case 13:
        fuzz_strict(s, n);
        break;
    case 14:
        fuzz_guard(s, n);
        break;
    case 15: {
        pf_obj o;
        pf_nav_error ne;
        st = pf_obj_parse(s, n, 4096, 8192, &o, &ne);
        CHECK(st != PF_OK || (o.nverts <= 4096 && o.ntris <= 8192));
        for (uint32_t i = 0; st == PF_OK && i < 3 * o.ntris; i++) CHECK(o.tris[i] < o.nverts);
        CHECK(st == PF_OK || ne.message[0]);
        if (st == PF_OK) pf_obj_free(&o);
        break;
    }
    case 16: {
        pf_nav_limits nl = pf_nav_default_limits();
        pf_nav_upload u;
        cJSON *root = NULL;
        nl.max_vertices = 4096;
        nl.max_triangles = 8192;
        memset(&u, 0, sizeof(u));
        st = pf_jsonr_parse(s, n, &root, &e);
        if (st == PF_OK) st = pf_nav_upload_from_json(root, &lim, &nl, &u, &e);
        check_error(st, &e);
        cJSON_Delete(root);
        pf_nav_upload_free(&u);
        break;
    }
    case 17: {
        pf_nav_patch p;
        st = pf_nav_patch_parse(s, n, &p, &e);
        check_error(st, &e);
        if (st == PF_OK) pf_nav_patch_free(&p);
        break;
    }
    case 18: {
        pf_nav_path_request q, *qs = NULL;
        size_t nq = 0;
        int64_t dl;
        check_error(pf_nav_path_request_parse(s, n, 64, &q, &e), &e);
        st = pf_nav_path_batch_parse(s, n, 16, 64, &qs, &nq, &dl, &e);
        check_error(st, &e);
        if (st == PF_OK) CHECK(nq >= 1 && nq <= 16);
        free(qs);
        break;
    }
    case 19: {
        const pf_crowd_limits cl = {64, 60, 100, 3600};
        pf_crowd_request r;
        pf_crowd_command c;
        st = pf_crowd_request_parse(s, n, &cl, &r, &e);
        check_error(st, &e);
        if (st == PF_OK) {
            CHECK(r.nagents <= (size_t)r.max_agents);
            pf_crowd_request_free(&r);
        }
        st = pf_crowd_command_parse(s, n, &cl, &c, &e);
        check_error(st, &e);
        if (st == PF_OK) pf_crowd_command_free(&c);
        break;
    }
    case 20: {
        const char *bytes;
        size_t len;
        uint64_t v;
        if (pf_navmesh_image_decode(data + 1, n, &bytes, &len, &v) == PF_OK)
            CHECK((const uint8_t *)bytes >= data + 1 &&
                  (const uint8_t *)bytes + len <= data + size);
        break;
    }
    case 21:
    case 22: {
        /* A graph upload: JSON (21), or DIMACS .gr and .co split at the
         * first NUL (22). */
        static const pf_graph_limits glim = {64, 256, 16, 8, 64};
        pf_graph_doc d;
        if (data[0] % 32 == 21) {
            cJSON *root = NULL;
            st = pf_jsonr_parse(s, n, &root, &e);
            if (st == PF_OK) st = pf_graph_doc_from_json(root, &glim, &d, &e);
            cJSON_Delete(root);
        } else {
            const char *nul = memchr(s, '\0', n);
            size_t grlen = nul ? (size_t)(nul - s) : n;
            st = pf_graph_doc_from_dimacs(s, grlen, nul ? nul + 1 : s + n, nul ? n - grlen - 1 : 0,
                                          &glim, &d, &e);
        }
        check_error(st, &e);
        if (st == PF_OK) {
            graph_doc_run(&d, &glim);
            pf_graph_doc_free(&d);
        }
        break;
    }
    case 23: {
        pf_graph_path_request q;
        pf_graph_patch p;
        pf_graph_table_request tq;
        st = pf_graph_path_request_parse(s, n, 64, &q, &e);
        check_error(st, &e);
        pf_graph_path_request_clear(&q);
        memset(&e, 0, sizeof(e));
        st = pf_graph_table_request_parse(s, n, 1000, 100, &tq, &e);
        check_error(st, &e);
        if (st == PF_OK) pf_graph_table_request_clear(&tq);
        memset(&e, 0, sizeof(e));
        st = pf_graph_patch_parse(s, n, 64, &p, &e);
        check_error(st, &e);
        if (st == PF_OK) pf_graph_patch_free(&p);
        break;
    }
    }
    return 0;
}
