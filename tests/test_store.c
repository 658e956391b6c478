/* test_store.c -- --data-dir: the map file format (round trips, damage)
 * and the server keeping maps across a restart. */
#include <check.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "store.h"
#include "testutil.h"

/* Two grids say the same: rules, every cell's cost and walls, every door
 * with its state, cells, open costs and edges. */
static void assert_same_grid(const pf_grid *a, const pf_grid *b) {
    int32_t w = pf_grid_width(a), h = pf_grid_height(a);
    ck_assert_int_eq(pf_grid_width(b), w);
    ck_assert_int_eq(pf_grid_height(b), h);
    ck_assert_int_eq(pf_grid_connectivity(b), pf_grid_connectivity(a));
    ck_assert_int_eq(pf_grid_corner_cutting(b), pf_grid_corner_cutting(a));
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point p = {x, y};
            ck_assert_int_eq(pf_grid_cost(b, p), pf_grid_cost(a, p));
            ck_assert_int_eq(pf_grid_moves(b, p), pf_grid_moves(a, p));
            for (int d = 0; d < 4; d++)
                ck_assert_int_eq(pf_grid_is_wall(b, p, d), pf_grid_is_wall(a, p, d));
        }
    ck_assert_int_eq(pf_grid_door_count(b), pf_grid_door_count(a));
    for (int32_t d = 0; d < pf_grid_door_count(a); d++) {
        size_t na, nb, ea, eb;
        const pf_point *ca = pf_grid_door_cells(a, d, &na), *cb = pf_grid_door_cells(b, d, &nb);
        const pf_edge *xa = pf_grid_door_edges(a, d, &ea), *xb = pf_grid_door_edges(b, d, &eb);
        ck_assert_str_eq(pf_grid_door_name(b, d), pf_grid_door_name(a, d));
        ck_assert_int_eq(pf_grid_door_is_open(b, d), pf_grid_door_is_open(a, d));
        ck_assert_uint_eq(nb, na);
        ck_assert_uint_eq(eb, ea);
        for (size_t k = 0; k < na; k++) {
            ck_assert(ca[k].x == cb[k].x && ca[k].y == cb[k].y);
            ck_assert_int_eq(pf_grid_door_open_cost(b, d, k), pf_grid_door_open_cost(a, d, k));
        }
        for (size_t k = 0; k < ea; k++)
            ck_assert(xa[k].a.x == xb[k].a.x && xa[k].a.y == xb[k].a.y && xa[k].dir == xb[k].dir);
    }
}

/* --data-dir's file format: random maps with costs, walls and doors (open
 * and closed) read back identical; any damaged byte or a truncation is
 * refused. */
START_TEST(store_round_trip_and_damage) {
    uint64_t rng = tu_seed("store_round_trip_and_damage", 0x5eed570e);
    const tu_map_opts o = {2, 24, 0.3, true, true, 0, -1};
    for (int it = 0; it < 200; it++) {
        pf_grid *g = tu_random_grid(&rng, &o), *back = NULL;
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        unsigned char *img;
        size_t len;
        uint64_t version = 0;
        int ndoors = (int)tu_below(&rng, 4);
        for (int d = 0; d < ndoors; d++) {
            char name[16];
            pf_point c[3];
            pf_edge e[2];
            size_t nc = tu_below(&rng, 4), ne = w > 1 ? tu_below(&rng, 3) : 0;
            int32_t index;
            for (size_t k = 0; k < nc; k++)
                c[k] = (pf_point){(int32_t)tu_below(&rng, (uint32_t)w),
                                  (int32_t)tu_below(&rng, (uint32_t)h)};
            for (size_t k = 0; k < ne; k++)
                e[k] = (pf_edge){{(int32_t)tu_below(&rng, (uint32_t)(w - 1)),
                                  (int32_t)tu_below(&rng, (uint32_t)h)},
                                 PF_DIR_E};
            snprintf(name, sizeof(name), "door%d", d);
            ck_assert_int_eq(pf_grid_add_door(g, name, c, nc, e, ne, tu_below(&rng, 2), &index),
                             PF_OK);
        }
        ck_assert_int_eq(pf_store_encode(g, 7 + (uint64_t)it, &img, &len), PF_OK);
        ck_assert_int_eq(pf_store_decode(img, len, NULL, &back, &version), PF_OK);
        ck_assert_uint_eq(version, 7 + (uint64_t)it);
        assert_same_grid(g, back);
        /* A reopened door gets the same cells back in both. */
        for (int32_t d = 0; d < pf_grid_door_count(g); d++) {
            pf_grid_set_door(g, d, true);
            pf_grid_set_door(back, d, true);
        }
        assert_same_grid(g, back);
        pf_grid_destroy(back);
        {
            size_t at = tu_below(&rng, (uint32_t)len);
            unsigned char bit = (unsigned char)(1u << tu_below(&rng, 8));
            img[at] ^= bit;
            ck_assert_int_eq(pf_store_decode(img, len, NULL, &back, &version), PF_EPARSE);
            img[at] ^= bit;
            ck_assert_int_eq(
                pf_store_decode(img, tu_below(&rng, (uint32_t)len), NULL, &back, &version),
                PF_EPARSE);
            ck_assert_int_eq(pf_store_decode(img, len, NULL, &back, &version), PF_OK);
            pf_grid_destroy(back);
        }
        {
            /* Cut short but with a digest that matches: the layout checks
             * alone must refuse it, without reading past the end. */
            size_t cut = tu_below(&rng, (uint32_t)(len - SHA256_DIGEST_SIZE));
            unsigned char *t = malloc(cut + SHA256_DIGEST_SIZE);
            struct sha256_ctx hc;
            memcpy(t, img, cut);
            sha256_init(&hc);
            sha256_update(&hc, cut, t);
            sha256_digest(&hc, SHA256_DIGEST_SIZE, t + cut);
            ck_assert_int_eq(pf_store_decode(t, cut + SHA256_DIGEST_SIZE, NULL, &back, &version),
                             PF_EPARSE);
            free(t);
        }
        free(img);
        pf_grid_destroy(g);
    }
}
END_TEST

static cJSON *json_ok(const hc_resp *r, int status) {
    cJSON *j;
    ck_assert_msg(r->status == status, "expected %d, got %d: %.300s", status, r->status, r->body);
    j = cJSON_ParseWithLength(r->body, r->body_len);
    ck_assert_msg(j != NULL, "not JSON: %s", r->body);
    return j;
}

/* A map with costs, a wall and two doors. */
static const char doors_json[] =
    "{\"rows\":[\"....#\",\"..~.#\",\".....\"],\"legend\":{\"~\":5},\"walls\":[[0,0,\"E\"]],"
    "\"doors\":{\"gate\":{\"cells\":[[4,0]],\"open\":false},"
    "\"hatch\":{\"walls\":[[1,1,\"S\"]],\"open\":true}}}";

static double path_cost(const hc_server *s, const char *query, uint64_t *version) {
    char url[256];
    hc_resp r;
    cJSON *j;
    double c;
    snprintf(url, sizeof(url), "/v1/maps/doors/path?%s&algorithm=astar&cache=false", query);
    r = it_req(s, "GET", url, NULL, NULL);
    j = json_ok(&r, 200);
    c = it_truth(j, "found") ? it_num(j, "cost") : -1;
    *version = (uint64_t)it_num(j, "map_version");
    cJSON_Delete(j);
    hc_free(&r);
    return c;
}

/* Maps written under --data-dir come back after a restart at the same
 * version with the same answers; deleted maps stay deleted; damaged and
 * temporary files are skipped; an unusable directory stops the start. */
START_TEST(store_server_keeps_maps_across_restart) {
    char dir[] = "/tmp/pathd-store-XXXXXX", file[256], cmd[4096];
    const char *bin = getenv("PATHD_BIN");
    static const char *const queries[] = {"start=0,0&goal=4,0", "start=0,0&goal=4,2",
                                          "start=1,1&goal=1,2", "start=3,0&goal=0,2"};
    double before[4], after[4];
    uint64_t v;
    hc_server s;
    hc_resp r;
    cJSON *j;
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    s = it_start(ARGS("--data-dir", dir));
    r = it_req(&s, "PUT", "/v1/maps/doors", "application/json", doors_json);
    hc_free(&r);
    r = it_req(&s, "PUT", "/v1/maps/gone", "application/json", doors_json);
    hc_free(&r);
    /* Open the gate, close the hatch: version 2. */
    r = it_req(&s, "PATCH", "/v1/maps/doors", "application/json",
               "{\"doors\":[{\"id\":\"gate\",\"open\":true},{\"id\":\"hatch\",\"open\":false}],"
               "\"cells\":[{\"x\":1,\"y\":0,\"cost\":7}]}");
    j = json_ok(&r, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 2);
    cJSON_Delete(j);
    hc_free(&r);
    for (int i = 0; i < 4; i++) {
        before[i] = path_cost(&s, queries[i], &v);
        ck_assert_uint_eq(v, 2);
    }
    ck_assert(before[0] > 0); /* through the opened gate */
    r = it_req(&s, "DELETE", "/v1/maps/gone", NULL, NULL);
    ck_assert_int_eq(r.status, 204);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/info", NULL, NULL);
    j = json_ok(&r, 200);
    ck_assert_str_eq(it_str(j, "limits.data_dir"), dir);
    cJSON_Delete(j);
    hc_free(&r);
    it_stop(&s);

    /* Junk beside the maps: a damaged file and a temporary one. */
    snprintf(file, sizeof(file), "%s/junk.map.bin", dir);
    ck_assert_ptr_nonnull(f = fopen(file, "w"));
    fputs("PATHDMAP and then nothing that makes sense", f);
    fclose(f);
    snprintf(file, sizeof(file), "%s/doors.map.bin.tmp", dir);
    ck_assert_ptr_nonnull(f = fopen(file, "w"));
    fclose(f);

    s = it_start(ARGS("--data-dir", dir));
    for (int i = 0; i < 4; i++) {
        after[i] = path_cost(&s, queries[i], &v);
        ck_assert_uint_eq(v, 2);
        ck_assert_double_eq_tol(after[i], before[i], 1e-12);
    }
    r = it_req(&s, "GET", "/v1/maps/gone", NULL, NULL);
    ck_assert_int_eq(r.status, 404);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps", NULL, NULL);
    j = json_ok(&r, 200);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "maps")), 1);
    cJSON_Delete(j);
    hc_free(&r);
    /* The next change continues the version count. */
    r = it_req(&s, "PATCH", "/v1/maps/doors", "application/json",
               "{\"doors\":[{\"id\":\"hatch\",\"open\":true}]}");
    j = json_ok(&r, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 3);
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "DELETE", "/v1/maps/doors", NULL, NULL);
    hc_free(&r);
    it_stop(&s);

    /* A data directory that is a file: the server says so and exits 1. */
    snprintf(cmd, sizeof(cmd), "%s --port 0 --data-dir %s/junk.map.bin 2>/dev/null",
             bin && *bin ? bin : "build/pathd", dir);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 1);

    snprintf(file, sizeof(file), "%s/junk.map.bin", dir);
    unlink(file);
    snprintf(file, sizeof(file), "%s/doors.map.bin.tmp", dir);
    unlink(file);
    ck_assert_int_eq(rmdir(dir), 0); /* nothing else was left behind */
}
END_TEST

/* A navmesh map's file: its envelope bytes and version round trip, and any
 * flipped byte or cut is refused (the digest). */
START_TEST(store_nav_round_trip_and_damage) {
    static const char env[] = "{\"kind\":\"navmesh\",\"obj\":\"v 0 0 0\\n\",\"obstacles\":[]}";
    unsigned char *buf;
    const char *bytes;
    size_t len, n;
    uint64_t v;
    ck_assert_int_eq(pf_store_encode_nav(env, sizeof(env) - 1, 42, &buf, &len), PF_OK);
    ck_assert_int_eq(pf_store_decode_nav(buf, len, &bytes, &n, &v), PF_OK);
    ck_assert_uint_eq(v, 42);
    ck_assert_uint_eq(n, sizeof(env) - 1);
    ck_assert_mem_eq(bytes, env, n);
    for (size_t i = 0; i < len; i++) {
        buf[i] ^= 0x20;
        ck_assert_int_eq(pf_store_decode_nav(buf, len, &bytes, &n, &v), PF_EPARSE);
        buf[i] ^= 0x20;
    }
    for (size_t cut = 0; cut < len; cut++)
        ck_assert_int_eq(pf_store_decode_nav(buf, cut, &bytes, &n, &v), PF_EPARSE);
    /* A grid file is not a navmesh file, nor the other way round. */
    {
        pf_grid_limits lim = pf_grid_default_limits();
        pf_grid *g;
        ck_assert_int_eq(pf_store_decode(buf, len, &lim, &g, &v), PF_EPARSE);
    }
    free(buf);
}
END_TEST

TU_SUITE(store) {
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, store_round_trip_and_damage);
    tcase_add_test(tc, store_nav_round_trip_and_damage);
    tcase_add_test(tc, store_server_keeps_maps_across_restart);
    suite_add_tcase(s, tc);
    return s;
}
