/* test_kinds.c -- the registry of world kinds (server/kind.h, kinds.c): an
 * upload finds its kind by its "kind" member or its Content-Type, a
 * feature a kind lacks is refused naming the kinds that have it, the
 * by-algorithm metrics' slots follow the registration, and every
 * registered kind's table is whole for what its feature bits promise. */
#include <check.h>
#include <cjson/cJSON.h>
#include <string.h>

#include "kind.h"
#include "kind_graph.h"
#include "kind_grid.h"
#include "kind_navmesh.h"
#include "planner.h"
#include "testutil.h"

static pf_kinds *make_kinds(pf_config *cfg) {
    pf_kind_deps d;
    pf_kinds *k = NULL;
    char err[200];
    pf_config_defaults(cfg);
    memset(&d, 0, sizeof(d));
    d.cfg = cfg;
    ck_assert_int_eq(pf_kinds_create(&d, &k, err, sizeof(err)), PF_OK);
    return k;
}

/* What kind a JSON upload is, and why not: the kind its error names. */
static pf_status kind_of(const pf_kinds *k, const char *json, const pf_kind_ops **out,
                         pf_proto_error *e) {
    cJSON *root = cJSON_Parse(json);
    const pf_kind_env *env = NULL;
    pf_status st;
    ck_assert_ptr_nonnull(root);
    st = pf_kinds_for_upload(k, PF_BODY_JSON, root, &env, e);
    cJSON_Delete(root);
    *out = env ? env->kind : NULL;
    return st;
}

START_TEST(kinds_upload_by_member_or_content_type) {
    pf_config cfg;
    pf_kinds *k = make_kinds(&cfg);
    const pf_kind_ops *kind;
    const pf_kind_env *env;
    pf_proto_error e;
    ck_assert_int_eq(kind_of(k, "{\"rows\":[\".\"]}", &kind, &e), PF_OK);
    ck_assert_ptr_eq(kind, &pf_kind_grid); /* no "kind": the default JSON kind */
    ck_assert_int_eq(kind_of(k, "{\"kind\":\"grid\"}", &kind, &e), PF_OK);
    ck_assert_ptr_eq(kind, &pf_kind_grid);
    ck_assert_int_eq(kind_of(k, "{\"kind\":\"navmesh\"}", &kind, &e), PF_OK);
    ck_assert_ptr_eq(kind, &pf_kind_navmesh);
    ck_assert_int_eq(kind_of(k, "[1]", &kind, &e), PF_OK); /* not an object: the grid says why */
    ck_assert_ptr_eq(kind, &pf_kind_grid);
    ck_assert_int_eq(kind_of(k, "{\"kind\":\"mesh\"}", &kind, &e), PF_EINVAL);
    ck_assert_str_eq(pf_error_code(e.code), "invalid_value");
    ck_assert_str_eq(e.field, "kind");
    ck_assert_str_eq(e.message, "Field 'kind' is \"grid\", \"navmesh\" or \"graph\".");
    ck_assert_int_eq(kind_of(k, "{\"kind\":1}", &kind, &e), PF_EPARSE);
    ck_assert_str_eq(pf_error_code(e.code), "invalid_request");
    ck_assert_str_eq(e.field, "kind");
    ck_assert_int_eq(pf_kinds_for_upload(k, PF_BODY_OBJ, NULL, &env, &e), PF_OK);
    ck_assert_ptr_eq(env->kind, &pf_kind_navmesh);
    ck_assert_int_eq(pf_kinds_for_upload(k, PF_BODY_MOVINGAI, NULL, &env, &e), PF_OK);
    ck_assert_ptr_eq(env->kind, &pf_kind_grid);
    ck_assert_int_eq(pf_kinds_for_upload(k, PF_BODY_TEXT, NULL, &env, &e), PF_OK);
    ck_assert_ptr_eq(env->kind, &pf_kind_grid);
    ck_assert_ptr_eq(pf_kinds_default(k)->kind, pf_kinds_registered[0]);
    ck_assert_ptr_eq(pf_kind_by_name("navmesh"), &pf_kind_navmesh);
    ck_assert_ptr_eq(pf_kind_by_name("graph"), &pf_kind_graph);
    ck_assert_ptr_null(pf_kind_by_name("mesh"));
    pf_kinds_destroy(k);
}
END_TEST

START_TEST(kinds_refusal_names_the_kinds_that_have_it) {
    pf_proto_error e;
    ck_assert(!pf_kind_has(&pf_kind_navmesh, PF_KIND_FLOWFIELDS));
    ck_assert(pf_kind_has(&pf_kind_grid, PF_KIND_FLOWFIELDS | PF_KIND_TABLES));
    ck_assert_int_eq(pf_kind_refuse(&e, &pf_kind_navmesh, "n", PF_KIND_FLOWFIELDS, "id"),
                     PF_EUNSUPPORTED);
    ck_assert_str_eq(pf_error_code(e.code), "unsupported");
    ck_assert_str_eq(e.field, "id");
    ck_assert_str_eq(e.message, "Map 'n' is a navmesh map: it has no flow fields (grid maps have "
                                "them).");
    pf_kind_refuse(&e, &pf_kind_grid, "g", PF_KIND_CROWDS, NULL);
    ck_assert_str_eq(e.field, "");
    ck_assert_str_eq(e.message,
                     "Map 'g' is a grid map: it has no crowds (navmesh maps have them).");
    /* GET .../mesh (viewer31's route, the navmesh's feature since the merge). */
    ck_assert(pf_kind_has(&pf_kind_navmesh, PF_KIND_MESH));
    ck_assert(!pf_kind_has(&pf_kind_grid, PF_KIND_MESH));
    pf_kind_refuse(&e, &pf_kind_grid, "g", PF_KIND_MESH, NULL);
    ck_assert_str_eq(e.message,
                     "Map 'g' is a grid map: it has no mesh export (navmesh maps have them).");
}
END_TEST

/* The grid's slots are core's pf_algorithm, the navmesh's follow, and
 * every slot has its algorithm's label. */
START_TEST(kinds_algorithm_slots_follow_registration) {
    size_t n = 0;
    for (size_t i = 0; pf_kinds_registered[i]; i++) n += pf_kinds_registered[i]->nalgorithms;
    ck_assert_uint_eq(pf_kinds_algorithm_slots(), n);
    for (int a = 0; a < PF_ALGO_COUNT; a++) {
        ck_assert_uint_eq(pf_kind_slot(&pf_kind_grid, (size_t)a), (size_t)a);
        ck_assert_str_eq(pf_kinds_algorithm_label((size_t)a), pf_algorithm_name((pf_algorithm)a));
    }
    ck_assert_uint_eq(pf_kind_slot(&pf_kind_navmesh, 0), PF_ALGO_COUNT);
    ck_assert_str_eq(pf_kinds_algorithm_label(PF_ALGO_COUNT), "polyanya");
    ck_assert_str_eq(pf_kinds_algorithm_label(PF_ALGO_COUNT + 1), "detour");
    ck_assert_uint_eq(pf_kind_slot(&pf_kind_graph, 1), PF_ALGO_COUNT + 3);
    ck_assert_str_eq(pf_kinds_algorithm_label(PF_ALGO_COUNT + 3), "graph_astar");
    /* One label a slot: /metrics writes one series a label. */
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++)
            ck_assert_msg(strcmp(pf_kinds_algorithm_label(a), pf_kinds_algorithm_label(b)) != 0,
                          "slots %zu and %zu are both '%s'", a, b, pf_kinds_algorithm_label(a));
}
END_TEST

/* Every operation a route may call on any map is there, and so is each
 * feature's for a kind with its bit; names and suffixes are distinct. */
START_TEST(kinds_tables_are_whole) {
    for (size_t i = 0; pf_kinds_registered[i]; i++) {
        const pf_kind_ops *k = pf_kinds_registered[i];
        ck_assert_msg(k->name && k->store_suffix && k->algorithm_name && k->nalgorithms &&
                          k->world_free && k->world_memory && k->write_info && k->write_summary &&
                          k->upload_parse && k->upload_build && k->patch_parse && k->patch_apply &&
                          k->patch_free && k->store_encode && k->store_load && k->path_parse_one &&
                          k->path_parse_batch && k->paths_free && k->path_cached &&
                          k->scratch_get && k->scratch_put && k->path_run && k->session_create &&
                          k->session_free && k->session_memory && k->session_where &&
                          k->session_rebase && k->session_run,
                      "kind %s misses an operation", k->name);
        ck_assert(!pf_kind_has(k, PF_KIND_CELLS) || k->write_cells);
        ck_assert(!pf_kind_has(k, PF_KIND_HIERARCHY) || k->write_hierarchy);
        ck_assert(!pf_kind_has(k, PF_KIND_MESH) || k->write_mesh);
        ck_assert(!pf_kind_has(k, PF_KIND_FLOWFIELDS) ||
                  (k->flowfield && k->flowfield->parse && k->flowfield->run));
        ck_assert(!pf_kind_has(k, PF_KIND_TABLES) ||
                  (k->table && k->table->parse && k->table->run));
        for (size_t j = 0; j < i; j++) {
            ck_assert_str_ne(pf_kinds_registered[j]->name, k->name);
            ck_assert_str_ne(pf_kinds_registered[j]->store_suffix, k->store_suffix);
        }
    }
}
END_TEST

TU_SUITE(kinds) {
    Suite *s = suite_create("kinds");
    TCase *tc = tcase_create("kinds");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, kinds_upload_by_member_or_content_type);
    tcase_add_test(tc, kinds_refusal_names_the_kinds_that_have_it);
    tcase_add_test(tc, kinds_algorithm_slots_follow_registration);
    tcase_add_test(tc, kinds_tables_are_whole);
    suite_add_tcase(s, tc);
    return s;
}
