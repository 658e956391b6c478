/* test_store.c -- --data-dir: the map file format (round trips, damage)
 * and the server keeping maps across a restart. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "router.h"
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

typedef struct loaded {
    char ids[8][PF_MAP_ID_MAX + 1];
    uint64_t versions[8];
    size_t n;
} loaded;

static void collect(void *ud, const char *id, uint64_t version, pf_grid *g) {
    loaded *l = ud;
    ck_assert_uint_lt(l->n, 8);
    snprintf(l->ids[l->n], sizeof(l->ids[0]), "%s", id);
    l->versions[l->n++] = version;
    pf_grid_destroy(g);
}

/* A navmesh file's envelope: "good" builds, "nobuild" does not (the
 * server's fn_nav would quarantine it), "later" is left for next time. */
static pf_status collect_nav(void *ud, const char *id, uint64_t version, const char *bytes,
                             size_t len, char *why, size_t whylen) {
    loaded *l = ud;
    ck_assert_uint_lt(l->n, 8);
    if (len == 7 && memcmp(bytes, "nobuild", 7) == 0) {
        snprintf(why, whylen, "a navmesh that does not build here");
        return PF_EINVAL;
    }
    if (len == 5 && memcmp(bytes, "later", 5) == 0) {
        snprintf(why, whylen, "its build ran out of time");
        return PF_ECANCELED;
    }
    snprintf(l->ids[l->n], sizeof(l->ids[0]), "%s", id);
    l->versions[l->n++] = version;
    return PF_OK;
}

static void write_bytes(const char *dir, const char *name, const void *b, size_t n) {
    char path[512];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ck_assert_ptr_nonnull(f = fopen(path, "wb"));
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static bool exists(const char *dir, const char *name) {
    char path[512];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &sb) == 0;
}

/* The names in dir/quarantine that start with prefix, contents compared
 * with want (len bytes): how many match. */
static int quarantined_copies(const char *dir, const char *prefix, const void *want, size_t len) {
    char q[512];
    DIR *d;
    struct dirent *de;
    int found = 0;
    snprintf(q, sizeof(q), "%s/quarantine", dir);
    if (!(d = opendir(q))) return 0;
    while ((de = readdir(d))) {
        char path[1024];
        size_t n;
        char *b;
        if (strncmp(de->d_name, prefix, strlen(prefix)) != 0) continue;
        snprintf(path, sizeof(path), "%s/%s", q, de->d_name);
        b = tu_read_file(path, &n);
        if (b && n == len && memcmp(b, want, len) == 0) found++;
        free(b);
    }
    closedir(d);
    return found;
}

static void rm_rf(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* What a start finds in the data directory: good maps load at their
 * version; damaged ones and maps past the limits go to quarantine/ with
 * their bytes intact; stale temporary files are removed; a file that is not
 * a map id is left; foreign files are not touched. Each is in the report. */
START_TEST(store_load_quarantines_and_cleans) {
    char dir[] = "/tmp/pathd-storeq-XXXXXX", err[256];
    const char *rows[] = {"....", ".#..", "...."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8), *big;
    pf_grid_limits lim = pf_grid_default_limits();
    pf_store *st;
    pf_store_report rep;
    unsigned char *img, *bigimg;
    size_t len, biglen;
    loaded l;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(pf_store_open(dir, &st, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(pf_store_write(st, "a", 3, g, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(pf_store_write(st, "b", 1, g, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(pf_store_encode(g, 5, &img, &len), PF_OK);
    ck_assert_int_eq(pf_grid_create(40, 40, NULL, &big), PF_OK);
    ck_assert_int_eq(pf_store_encode(big, 2, &bigimg, &biglen), PF_OK);
    write_bytes(dir, "big.map.bin", bigimg, biglen);
    img[len / 2] ^= 4;
    write_bytes(dir, "bad.map.bin", img, len);
    write_bytes(dir, "short.map.bin", img, 20);
    write_bytes(dir, "a.map.bin.tmp", img, 7);
    write_bytes(dir, "x y.map.bin", img, len);
    write_bytes(dir, "notes.txt", "hi", 2);
    write_bytes(dir, "x y.map.bin.tmp", "hi", 2);

    lim.max_cells = 1000; /* big (1600 cells) is past it */
    memset(&l, 0, sizeof(l));
    ck_assert_uint_eq(pf_store_load_all(st, &lim, collect, collect_nav, &l), 2);
    ck_assert_uint_eq(l.n, 2);
    for (size_t i = 0; i < 2; i++) {
        ck_assert(strcmp(l.ids[i], "a") == 0 || strcmp(l.ids[i], "b") == 0);
        ck_assert_uint_eq(l.versions[i], strcmp(l.ids[i], "a") == 0 ? 3 : 1);
    }
    pf_store_get_report(st, &rep);
    ck_assert(!rep.loading);
    ck_assert_uint_eq(rep.loaded, 2);
    ck_assert_uint_eq(rep.quarantined, 3);
    ck_assert_uint_eq(rep.skipped, 1);
    ck_assert_uint_eq(rep.temp_removed, 1);
    ck_assert_uint_eq(rep.nissues, 4);
    for (size_t i = 0; i < rep.nissues; i++) {
        const pf_store_issue *is = &rep.issues[i];
        if (strcmp(is->file, "x y.map.bin") == 0) {
            ck_assert_str_eq(is->moved_to, "");
            ck_assert_str_eq(is->reason, "not a map id");
            continue;
        }
        ck_assert_msg(strncmp(is->moved_to, "quarantine/", 11) == 0 &&
                          strncmp(is->moved_to + 11, is->file, strlen(is->file)) == 0,
                      "%s -> %s", is->file, is->moved_to);
        ck_assert(exists(dir, is->moved_to));
        ck_assert(strstr(is->reason, strcmp(is->file, "big.map.bin") == 0 ? "limits" : "damaged"));
    }
    /* The bytes are kept, the slots are free, the rest is untouched. */
    ck_assert_int_eq(quarantined_copies(dir, "bad.map.bin.", img, len), 1);
    ck_assert_int_eq(quarantined_copies(dir, "short.map.bin.", img, 20), 1);
    ck_assert_int_eq(quarantined_copies(dir, "big.map.bin.", bigimg, biglen), 1);
    ck_assert(!exists(dir, "bad.map.bin") && !exists(dir, "short.map.bin"));
    ck_assert(!exists(dir, "a.map.bin.tmp"));
    ck_assert(exists(dir, "a.map.bin") && exists(dir, "b.map.bin"));
    ck_assert(exists(dir, "x y.map.bin") && exists(dir, "notes.txt"));
    ck_assert(exists(dir, "x y.map.bin.tmp")); /* not ours: not a map id */

    /* The same damage again (in the same second, likely): a second name. */
    write_bytes(dir, "bad.map.bin", img, len);
    memset(&l, 0, sizeof(l));
    ck_assert_uint_eq(pf_store_load_all(st, NULL, collect, collect_nav, &l), 2);
    pf_store_get_report(st, &rep);
    ck_assert_uint_eq(rep.quarantined, 1);
    ck_assert_uint_eq(rep.temp_removed, 0);
    ck_assert_int_eq(quarantined_copies(dir, "bad.map.bin.", img, len), 2);

    free(img);
    free(bigimg);
    pf_grid_destroy(g);
    pf_grid_destroy(big);
    pf_store_close(st);
    rm_rf(dir);
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
    /* The damaged file went to quarantine/, the temporary one is gone. */
    snprintf(file, sizeof(file), "%s/junk.map.bin", dir);
    ck_assert(access(file, F_OK) != 0);
    snprintf(file, sizeof(file), "%s/doors.map.bin.tmp", dir);
    ck_assert(access(file, F_OK) != 0);
    ck_assert_int_eq(
        quarantined_copies(dir, "junk.map.bin.", "PATHDMAP and then nothing that makes sense", 42),
        1);
    /* ...and /readyz and /metrics say so. */
    r = it_req(&s, "GET", "/readyz", NULL, NULL);
    j = json_ok(&r, 200);
    ck_assert_str_eq(it_str(j, "status"), "ready");
    ck_assert_int_eq((int)it_num(j, "store.loaded"), 1);
    ck_assert_int_eq((int)it_num(j, "store.quarantined"), 1);
    ck_assert_int_eq((int)it_num(j, "store.temp_removed"), 1);
    {
        const cJSON *is = cJSON_GetArrayItem(it_get(j, "store.issues"), 0);
        ck_assert_ptr_nonnull(is);
        ck_assert_str_eq(it_str(is, "file"), "junk.map.bin");
        ck_assert(strncmp(it_str(is, "moved_to"), "quarantine/junk.map.bin.", 24) == 0);
        ck_assert(strstr(it_str(is, "reason"), "damaged") != NULL);
    }
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "GET", "/metrics", NULL, NULL);
    ck_assert(strstr(r.body, "\npathd_store_quarantined_files 1\n") != NULL);
    ck_assert(strstr(r.body, "\npathd_store_temp_removed 1\n") != NULL);
    ck_assert(strstr(r.body, "\npathd_maps_loading 0\n") != NULL);
    hc_free(&r);
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
    snprintf(file, sizeof(file), "%s/plain-file", dir);
    ck_assert_ptr_nonnull(f = fopen(file, "w"));
    fclose(f);
    snprintf(cmd, sizeof(cmd), "%s --port 0 --data-dir %s 2>/dev/null",
             bin && *bin ? bin : "build/pathd", file);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 1);
    unlink(file);

    /* Nothing else was left behind but the quarantined copy. */
    {
        DIR *d;
        struct dirent *de;
        int n = 0;
        snprintf(file, sizeof(file), "%s/quarantine", dir);
        ck_assert_ptr_nonnull(d = opendir(dir));
        while ((de = readdir(d)))
            if (de->d_name[0] != '.') {
                ck_assert_str_eq(de->d_name, "quarantine");
                n++;
            }
        closedir(d);
        ck_assert_int_eq(n, 1);
    }
    rm_rf(dir);
}
END_TEST

/* A stored map keeps its contents and version when --demo has a map of
 * that name: the stored one is loaded first and the demo map skipped. */
START_TEST(store_demo_keeps_stored_version) {
    char dir[] = "/tmp/pathd-storedemo-XXXXXX";
    hc_server s;
    hc_resp r;
    cJSON *j;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    s = it_start(ARGS("--data-dir", dir, "--demo"));
    /* The demo room, patched twice: stored at version 3 with a cost. */
    for (int i = 0; i < 2; i++) {
        r = it_req(&s, "PATCH", "/v1/maps/room", "application/json",
                   "{\"cells\":[{\"x\":1,\"y\":1,\"cost\":7}]}");
        hc_free(&r);
    }
    r = it_req(&s, "GET", "/v1/maps/room", NULL, NULL);
    j = json_ok(&r, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 3);
    cJSON_Delete(j);
    hc_free(&r);
    it_stop(&s);

    s = it_start(ARGS("--data-dir", dir, "--demo"));
    r = it_req(&s, "GET", "/v1/maps/room", NULL, NULL);
    j = json_ok(&r, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 3);
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/room/cells", NULL, NULL);
    j = json_ok(&r, 200);
    { /* cell (1,1) of the costs string is the stored 07 */
        const char *hex = it_str(j, "costs");
        int w = (int)it_num(j, "width");
        ck_assert(strncmp(hex + 2 * (w + 1), "07", 2) == 0);
    }
    cJSON_Delete(j);
    hc_free(&r);
    /* The other demo map, not stored, is there as usual. */
    r = it_req(&s, "GET", "/v1/maps/maze", NULL, NULL);
    j = json_ok(&r, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    cJSON_Delete(j);
    hc_free(&r);
    it_stop(&s);
    rm_rf(dir);
}
END_TEST

/* The server listens at once and answers 503 on /readyz (and on every map
 * route, with Retry-After) until every stored map is loaded. A FIFO named
 * like a map file holds the loader: opening it blocks until this test opens
 * its other end, so the "loading" state is seen without any timing. */
START_TEST(store_listens_while_loading) {
    char dir[] = "/tmp/pathd-storeload-XXXXXX", fifo[256], err[256], buf[64];
    const char *rows[] = {"....", "....", "...."};
    pf_grid *g = tu_grid_from_ascii(rows, 3, 8);
    hc_start_opts o = {NULL, true};
    pf_store *st;
    hc_server s;
    hc_resp r;
    cJSON *j;
    int fd;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(pf_store_open(dir, &st, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(pf_store_write(st, "good", 4, g, err, sizeof(err)), PF_OK);
    pf_store_close(st);
    pf_grid_destroy(g);
    snprintf(fifo, sizeof(fifo), "%s/held.map.bin", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);

    ck_assert_int_eq(hc_server_start_ex(&s, ARGS("--data-dir", dir), &o), 0);
    r = it_req(&s, "GET", "/readyz", NULL, NULL);
    ck_assert_int_eq(r.status, 503);
    ck_assert_ptr_nonnull(hc_header(&r, "Retry-After", buf, sizeof(buf)));
    j = cJSON_ParseWithLength(r.body, r.body_len);
    ck_assert_str_eq(it_str(j, "status"), "loading");
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "GET", "/healthz", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps", NULL, NULL);
    ck_assert_int_eq(r.status, 503);
    ck_assert_ptr_nonnull(hc_header(&r, "Retry-After", buf, sizeof(buf)));
    j = cJSON_ParseWithLength(r.body, r.body_len);
    ck_assert_str_eq(it_str(j, "error.code"), "not_ready");
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "PUT", "/v1/maps/good", "application/json", "{\"rows\":[\"..\"]}");
    ck_assert_int_eq(r.status, 503); /* an upload must not race the stored map */
    hc_free(&r);
    r = it_req(&s, "GET", "/metrics", NULL, NULL);
    ck_assert(strstr(r.body, "\npathd_maps_loading 1\n") != NULL);
    hc_free(&r);

    /* Let the loader go: the FIFO is not a map file (it is reported and
     * left), the good map loads at its version, and the server is ready. */
    ck_assert_int_ge(fd = open(fifo, O_WRONLY), 0);
    close(fd);
    for (unsigned polls = 0;;) {
        r = it_req(&s, "GET", "/readyz", NULL, NULL);
        if (r.status == 200) break;
        hc_free(&r);
        tu_waiting(&polls, "the loader to finish (/readyz 200)");
    }
    j = json_ok(&r, 200);
    ck_assert_int_eq((int)it_num(j, "store.loaded"), 1);
    ck_assert_int_eq((int)it_num(j, "store.skipped"), 1);
    cJSON_Delete(j);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/good", NULL, NULL);
    j = json_ok(&r, 200);
    ck_assert_int_eq((int)it_num(j, "version"), 4);
    cJSON_Delete(j);
    hc_free(&r);
    it_stop(&s);
    rm_rf(dir);
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

/* Navmesh files at start: one loads, a damaged one and one whose envelope
 * no longer builds are quarantined, one whose build must wait stays, and a
 * temporary file a crash left is removed. */
START_TEST(store_load_nav_files) {
    char dir[] = "/tmp/pathd-storen-XXXXXX", err[256];
    pf_store *st;
    pf_store_report rep;
    unsigned char *img;
    size_t len;
    loaded l;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(pf_store_open(dir, &st, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(pf_store_write_nav(st, "n", 4, "{\"kind\":\"navmesh\"}", 19, err, sizeof(err)),
                     PF_OK);
    ck_assert_int_eq(pf_store_write_nav(st, "old", 2, "nobuild", 7, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(pf_store_write_nav(st, "busy", 2, "later", 5, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(pf_store_encode_nav("abcdefgh", 8, 1, &img, &len), PF_OK);
    img[len - 3] ^= 1;
    write_bytes(dir, "bad.nav.bin", img, len);
    write_bytes(dir, "n.nav.bin.tmp", img, 5);
    memset(&l, 0, sizeof(l));
    ck_assert_uint_eq(pf_store_load_all(st, NULL, collect, collect_nav, &l), 1);
    ck_assert_str_eq(l.ids[0], "n");
    ck_assert_uint_eq(l.versions[0], 4);
    pf_store_get_report(st, &rep);
    ck_assert_uint_eq(rep.loaded, 1);
    ck_assert_uint_eq(rep.quarantined, 2);
    ck_assert_uint_eq(rep.skipped, 1);
    ck_assert_uint_eq(rep.temp_removed, 1);
    ck_assert(!exists(dir, "bad.nav.bin") && !exists(dir, "old.nav.bin"));
    ck_assert(exists(dir, "busy.nav.bin") && exists(dir, "n.nav.bin"));
    ck_assert(!exists(dir, "n.nav.bin.tmp"));
    ck_assert_int_eq(quarantined_copies(dir, "bad.nav.bin.", img, len), 1);
    for (size_t i = 0; i < rep.nissues; i++)
        if (strcmp(rep.issues[i].file, "old.nav.bin") == 0)
            ck_assert_ptr_nonnull(strstr(rep.issues[i].reason, "does not build"));
    free(img);
    pf_store_close(st);
    rm_rf(dir);
}
END_TEST

TU_SUITE(store) {
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, store_round_trip_and_damage);
    tcase_add_test(tc, store_nav_round_trip_and_damage);
    tcase_add_test(tc, store_load_quarantines_and_cleans);
    tcase_add_test(tc, store_load_nav_files);
    tcase_add_test(tc, store_server_keeps_maps_across_restart);
    tcase_add_test(tc, store_demo_keeps_stored_version);
    tcase_add_test(tc, store_listens_while_loading);
    suite_add_tcase(s, tc);
    return s;
}
