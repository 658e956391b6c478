/* test_maps.c -- server/maps.c in-process: map changes made on disk and in
 * the registry together (publish, PATCH, delete), version numbers kept
 * across a reload, sessions ended by a replace, preconditions, limits and a
 * failing disk that change nothing. (The shared store: test_fleet.c.) */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "maps.h"
#include "testutil.h"

typedef struct fixture {
    char dir[64];
    pf_config cfg;
    pf_registry *reg;
    pf_sessions *sessions;
    pf_maps *maps;
} fixture;

static void open_fixture(fixture *f, const char *dir) {
    pf_maps_deps d;
    char err[256];
    memset(&d, 0, sizeof(d)); /* no navmesh runner, no crowds */
    pf_config_defaults(&f->cfg);
    f->cfg.max_maps = 2;
    f->reg = pf_registry_create((size_t)f->cfg.max_maps);
    f->sessions = pf_sessions_create(8, 8);
    ck_assert(f->reg && f->sessions);
    d.registry = f->reg;
    d.sessions = f->sessions;
    d.cfg = &f->cfg;
    d.mem = NULL; /* no budget */
    snprintf(f->cfg.data_dir, sizeof(f->cfg.data_dir), "%s", dir);
    ck_assert_int_eq(pf_maps_create(&d, &f->maps), PF_OK);
    ck_assert_str_eq(pf_maps_store_dir(f->maps) ? "store" : "none", "none");
    ck_assert_str_eq(pf_maps_store_kind(f->maps), "memory");
    ck_assert_int_eq(pf_maps_open_store(f->maps, err, sizeof(err)), PF_OK);
    ck_assert_str_eq(pf_maps_store_dir(f->maps), dir);
    ck_assert_str_eq(pf_maps_store_kind(f->maps), "data-dir");
    /* What pf_server_start's loader does, here on the test's thread. */
    pf_maps_set_loading(f->maps, true);
    pf_maps_load_stored(f->maps);
    pf_maps_set_loading(f->maps, false);
    ck_assert(!pf_maps_loading(f->maps));
}

static void close_fixture(fixture *f) {
    pf_sessions_destroy(f->sessions);
    pf_registry_destroy(f->reg);
    pf_maps_destroy(f->maps);
}

/* A version of an open w x w map named id, with the caller's reference and
 * a second one for publishing. */
static pf_mapver *build(fixture *f, const char *id, int32_t w) {
    pf_grid *g = NULL;
    pf_mapver *mv;
    ck_assert_int_eq(pf_grid_create(w, w, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_maps_build(f->maps, id, g, NULL, pf_clock_now_ns(), 0, &mv, NULL), PF_OK);
    pf_mapver_retain(mv);
    return mv;
}

/* Publishes mv (the call takes one of its references) and drops the
 * outcome's reference to it. */
static pf_status publish(fixture *f, pf_mapver *mv, bool *created, pf_proto_error *e) {
    pf_maps_outcome o;
    pf_status st = pf_maps_publish(f->maps, mv, NULL, &o, e);
    if (st == PF_OK) {
        ck_assert_ptr_eq(o.current, mv);
        *created = o.created;
        pf_mapver_release(o.current);
    }
    return st;
}

static bool file_exists(const fixture *f, const char *id) {
    char path[160];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s.map.bin", f->dir, id);
    return stat(path, &st) == 0;
}

START_TEST(maps_changes_on_disk_and_in_registry) {
    fixture f;
    pf_mapver *a1, *a2, *a3, *cur, *b, *c;
    pf_session *s;
    bool created, total;
    pf_proto_error e;
    pf_update u;
    pf_cell_change cell = {{0, 0}, 5};
    pf_precond stale;
    snprintf(f.dir, sizeof(f.dir), "/tmp/pathd-maps-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f.dir));
    open_fixture(&f, f.dir);

    /* Publish: the file first, then the registry; version 1. */
    a1 = build(&f, "a", 4);
    ck_assert_int_eq(publish(&f, a1, &created, &e), PF_OK);
    ck_assert(created);
    ck_assert_uint_eq(a1->version, 1);
    ck_assert(file_exists(&f, "a"));
    /* A session on version 1 ends when the map is replaced. */
    ck_assert_int_eq(
        pf_sessions_add(f.sessions, a1, (pf_point){0, 0}, (pf_point){3, 3}, 60, 0, &s, &total),
        PF_OK);
    pf_sessions_release(f.sessions, s, 0);
    a2 = build(&f, "a", 5);
    ck_assert_int_eq(publish(&f, a2, &created, &e), PF_OK);
    ck_assert(!created);
    ck_assert_uint_eq(a2->version, 2);
    ck_assert_uint_eq(pf_sessions_count(f.sessions), 0);

    /* A PATCH continues the lineage; If-Match naming the version it
     * replaced fails afterwards (412) and changes nothing. */
    cur = pf_registry_get(f.reg, "a");
    ck_assert_ptr_eq(cur, a2);
    memset(&u, 0, sizeof(u));
    u.cells = &cell;
    u.ncells = 1;
    ck_assert_int_eq(pf_maps_patch(f.maps, "a", &u, "{}", 2, NULL, &a3, &e), PF_OK);
    ck_assert_uint_eq(a3->version, 3);
    ck_assert_uint_eq(a3->lineage, a2->lineage);
    memset(&stale, 0, sizeof(stale));
    stale.match.kind = PF_PRECOND_LIST;
    stale.match.n = 1;
    stale.match.tags[0] = (pf_etag){cur->version, cur->lineage, true};
    {
        pf_maps_change ch = {&stale, false};
        pf_mapver *none = NULL;
        ck_assert_int_eq(pf_maps_patch(f.maps, "a", &u, "{}", 2, &ch, &none, &e), PF_EINVAL);
        ck_assert_int_eq(e.code, PF_ERR_PRECONDITION);
        ck_assert_ptr_null(none);
        ck_assert_int_eq(pf_maps_remove(f.maps, "a", &stale, &e), PF_EINVAL);
        ck_assert_int_eq(e.code, PF_ERR_PRECONDITION);
    }
    pf_mapver_release(cur);

    /* The limit is checked before a file is written. */
    b = build(&f, "b", 4);
    ck_assert_int_eq(publish(&f, b, &created, &e), PF_OK);
    c = build(&f, "c", 4);
    ck_assert_int_eq(publish(&f, c, &created, &e), PF_ELIMIT);
    ck_assert_int_eq(e.code, PF_ERR_LIMIT_EXCEEDED);
    ck_assert(!file_exists(&f, "c"));
    ck_assert_ptr_null(pf_registry_get(f.reg, "c"));
    pf_mapver_release(c); /* the publication took the other reference */

    /* Another server on the same directory finds the maps at their
     * versions. */
    {
        fixture g;
        pf_mapver *ra, *rb;
        snprintf(g.dir, sizeof(g.dir), "%s", f.dir);
        open_fixture(&g, f.dir);
        ra = pf_registry_get(g.reg, "a");
        rb = pf_registry_get(g.reg, "b");
        ck_assert_ptr_nonnull(ra);
        ck_assert_ptr_nonnull(rb);
        ck_assert_uint_eq(ra->version, 3);
        ck_assert_uint_eq(rb->version, 1);
        ck_assert_int_eq(pf_grid_width(pf_planner_grid(ra->planner)), 5);
        ck_assert_int_eq(pf_grid_cost(pf_planner_grid(ra->planner), (pf_point){0, 0}), 5);
        pf_mapver_release(ra);
        pf_mapver_release(rb);
        close_fixture(&g);
    }

    /* Delete: the file, then the registry; a second delete finds nothing. */
    ck_assert_int_eq(pf_maps_remove(f.maps, "b", NULL, &e), PF_OK);
    ck_assert(!file_exists(&f, "b"));
    ck_assert_int_eq(pf_maps_remove(f.maps, "b", NULL, &e), PF_ERANGE);
    ck_assert_int_eq(e.code, PF_ERR_MAP_NOT_FOUND);

    /* The disk refuses (its directory is gone): nothing changes. */
    ck_assert_int_eq(pf_maps_remove(f.maps, "a", NULL, &e), PF_OK);
    ck_assert_int_eq(rmdir(f.dir), 0);
    c = build(&f, "c", 4);
    ck_assert_int_eq(publish(&f, c, &created, &e), PF_EIO);
    ck_assert_int_eq(e.code, PF_ERR_STORAGE);
    ck_assert(strlen(e.message) > 0);
    ck_assert_ptr_null(pf_registry_get(f.reg, "c"));
    ck_assert_uint_eq(pf_registry_count(f.reg), 0);
    pf_mapver_release(c);

    pf_mapver_release(a1);
    pf_mapver_release(a2);
    pf_mapver_release(a3);
    pf_mapver_release(b);
    close_fixture(&f);
}
END_TEST

/* Without a store the same calls are the registry's; the demo maps are
 * numbered as usual. */
START_TEST(maps_without_store) {
    pf_config cfg;
    pf_registry *reg = pf_registry_create(4);
    pf_sessions *sessions = pf_sessions_create(4, 4);
    pf_maps_deps d;
    pf_maps *m;
    pf_mapver *mv;
    pf_grid *g = NULL;
    pf_proto_error e;
    memset(&d, 0, sizeof(d));
    pf_config_defaults(&cfg);
    d.registry = reg;
    d.sessions = sessions;
    d.cfg = &cfg;
    d.mem = NULL; /* no budget */
    ck_assert_int_eq(pf_maps_create(&d, &m), PF_OK);
    ck_assert_ptr_null(pf_maps_store_dir(m));
    ck_assert_int_eq(pf_maps_limits(m)->max_cells, cfg.max_map_cells);
    ck_assert_int_eq(pf_grid_create(3, 3, NULL, &g), PF_OK);
    ck_assert_int_eq(pf_maps_add(m, "demo", g), PF_OK);
    mv = pf_registry_get(reg, "demo");
    ck_assert_ptr_nonnull(mv);
    ck_assert_uint_eq(mv->version, 1);
    ck_assert(pf_planner_has_hpa(mv->planner));
    pf_mapver_release(mv);
    ck_assert_int_eq(pf_maps_remove(m, "demo", NULL, &e), PF_OK);
    ck_assert_int_eq(pf_maps_remove(m, "demo", NULL, &e), PF_ERANGE);
    pf_maps_destroy(m);
    pf_sessions_destroy(sessions);
    pf_registry_destroy(reg);
}
END_TEST

TU_SUITE(maps) {
    Suite *s = suite_create("maps");
    TCase *tc = tcase_create("maps");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, maps_changes_on_disk_and_in_registry);
    tcase_add_test(tc, maps_without_store);
    suite_add_tcase(s, tc);
    return s;
}
