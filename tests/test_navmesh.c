/* test_navmesh.c -- navmesh maps (nav/): the OBJ reader, Recast builds from
 * geometry and from grids, paths (polyanya and Detour's findPath, both
 * through the funnel), obstacles and areas, corridors and crowds.
 *
 * The path properties are checked against independent references: the
 * grid's own reachability (tu_reference_reach, a BFS over the movement
 * rule) and optimal costs (tu_reference_cost on small random maps, the
 * Moving AI scenario files on the shared maps), and Detour's raycast for
 * every segment.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clearance.h"
#include "grid.h"
#include "map_io.h"
#include "navmesh.h"
#include "navref.h"
#include "obj.h"
#include "testutil.h"

/* A runner on two threads: each claims tile indices until none are left. */
typedef struct par_job {
    uint32_t n;
    pf_nav_task_fn fn;
    void *arg;
    uint32_t next; /* atomic */
} par_job;

static void *par_worker(void *a) {
    par_job *j = a;
    for (;;) {
        uint32_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n) break;
        j->fn(j->arg, i);
    }
    return NULL;
}

static void par_run(void *ctx, uint32_t n, pf_nav_task_fn fn, void *arg) {
    (void)ctx;
    par_job j = {n, fn, arg, 0};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, par_worker, &j), 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
}

static const pf_nav_runner par_runner = {par_run, NULL};

static pf_navmesh *build_grid(const pf_grid *g, const pf_nav_config *cfg) {
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.grid = g;
    in.config = cfg ? *cfg : pf_nav_default_grid_config();
    pf_navmesh *nm = NULL;
    pf_nav_error err;
    pf_status st = pf_nav_build(&in, NULL, &par_runner, &nm, &err);
    ck_assert_msg(st == PF_OK, "build: %s: %s", err.field, err.message);
    return nm;
}

static pf_nav_query *make_query(void) {
    pf_nav_query *q = NULL;
    ck_assert_int_eq(pf_nav_query_create(65535, &q), PF_OK);
    return q;
}

static void cell_centre(pf_point c, float out[3]) {
    out[0] = (float)c.x + 0.5f;
    out[1] = 0;
    out[2] = (float)c.y + 0.5f;
}

static double dist3(const float *a, const float *b) {
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Whether the segment a -> b passes Detour raycasts: a cast that stops
 * short is resumed 0.05 past where it stopped, provided that point is on
 * the mesh. Detour's raycast can stop where a segment grazes the boundary
 * (runs along a wall edge, as taut paths do, or through the end of a
 * tile-border link, which Detour quantises to 1/255 of the edge); a segment
 * through a wall cannot resume, its probe is off the mesh. Points every
 * 0.05 along it are on the mesh (within 0.01) too. */
static bool segment_passes(pf_nav_query *q, const pf_navmesh *nm, const float *a, const float *b,
                           char *why, size_t whylen) {
    const double len = dist3(a, b);
    for (double d = 0; d < len; d += 0.05) {
        float p[3];
        for (int k = 0; k < 3; k++) p[k] = a[k] + (float)(d / len) * (b[k] - a[k]);
        float off = pf_nav_distance_to_mesh(q, nm, p);
        if (!(off >= 0 && off < 0.01f)) {
            snprintf(why, whylen, "point at %.2f is %.3f off the mesh", d, off);
            return false;
        }
    }
    float from[3];
    memcpy(from, a, sizeof from);
    const int max_tries = (int)(len / 0.05) + 64;
    for (int tries = 0; tries < max_tries; tries++) {
        float t = 0;
        uint32_t visited = 0;
        if (pf_nav_raycast(q, nm, from, b, &t, &visited) != PF_OK) {
            snprintf(why, whylen, "raycast from (%.3f, %.3f) refused", from[0], from[2]);
            return false;
        }
        const double rest = dist3(from, b);
        if (t >= 1.0f || (1.0 - t) * rest < 0.02) return true;
        /* Resume a little past the stop. */
        const double step = t * rest + 0.05;
        if (step >= rest) return true;
        float next[3];
        for (int k = 0; k < 3; k++) next[k] = from[k] + (float)(step / rest) * (b[k] - from[k]);
        float off = pf_nav_distance_to_mesh(q, nm, next);
        if (!(off >= 0 && off < 0.01f)) {
            snprintf(why, whylen, "raycast hits a wall at (%.3f, %.3f)", next[0], next[2]);
            return false;
        }
        memcpy(from, next, sizeof from);
    }
    snprintf(why, whylen, "raycast does not get through");
    return false;
}

/* pf_nav_find_path, and every query of this suite also holds polyanya
 * against Detour's findPath on the same query: when both reach the same
 * end (found, or partial to the same closest point), polyanya's path is
 * never longer (it is the shortest on the mesh; Detour's corridor is not).
 * Detour runs first, so *out is the answer of `algo`, as asked. */
static pf_status find_path(pf_nav_query *q, const pf_navmesh *nm, const float start[3],
                           const float goal[3], const float extents[3], pf_nav_algorithm algo,
                           pf_nav_path *out, const char **which) {
    pf_nav_path other;
    const char *w2 = NULL;
    pf_nav_algorithm first = algo == PF_NAV_POLYANYA ? PF_NAV_DETOUR : PF_NAV_POLYANYA;
    pf_status st = pf_nav_find_path(q, nm, start, goal, extents, first, &other, &w2), st2;
    double other_len = other.length;
    float other_end[3];
    bool other_partial = other.partial, other_exact = other.exact;
    memcpy(other_end, other.goal, sizeof other_end);
    st2 = pf_nav_find_path(q, nm, start, goal, extents, algo, out, which);
    ck_assert_int_eq(st, st2);
    if (st2 != PF_OK) return st2;
    {
        const pf_nav_path *poly = algo == PF_NAV_POLYANYA ? out : NULL;
        double plen = poly ? poly->length : other_len, dlen = poly ? other_len : out->length;
        bool exact = poly ? poly->exact : other_exact;
        bool same_end = out->partial == other_partial && dist3(out->goal, other_end) < 1e-4;
        if (exact && same_end)
            ck_assert_msg(plen <= dlen + 1e-4 * (1 + dlen),
                          "(%.3f,%.3f)->(%.3f,%.3f): polyanya %.6f longer than detour %.6f",
                          (double)start[0], (double)start[2], (double)goal[0], (double)goal[2],
                          plen, dlen);
    }
    return st2;
}

/* Every waypoint lies on the mesh and every segment passes a Detour raycast
 * (segment_passes). The path joins the snapped start and goal; its length
 * is the sum of the segments. */
static void check_path_on_mesh(pf_nav_query *q, const pf_navmesh *nm, const pf_nav_path *p,
                               const char *what) {
    ck_assert_msg(p->npoints >= 1, "%s: empty path", what);
    if (p->npoints == 0) return;
    float pts[3 * 4096];
    const uint32_t n = p->npoints < 4096 ? p->npoints : 4096, last = n ? 3 * (n - 1) : 0;
    memcpy(pts, p->points, (size_t)n * 3 * sizeof(float)); /* the query reuses its buffer */
    ck_assert_msg(dist3(&pts[0], p->start) < 1e-3, "%s: path does not begin at the start", what);
    ck_assert_msg(dist3(&pts[last], p->goal) < 1e-3, "%s: path does not end at the goal", what);
    double len = 0;
    for (uint32_t i = 0; i < n; i++) {
        float d = pf_nav_distance_to_mesh(q, nm, &pts[3 * i]);
        ck_assert_msg(d >= 0 && d < 0.05f,
                      "%s: waypoint %u (%.3f, %.3f, %.3f) is %.3f off the mesh", what, i,
                      pts[3 * i], pts[3 * i + 1], pts[3 * i + 2], d);
        if (i + 1 == n) break;
        char why[120];
        ck_assert_msg(segment_passes(q, nm, &pts[3 * i], &pts[3 * (i + 1)], why, sizeof why),
                      "%s: segment %u (%.3f,%.3f)->(%.3f,%.3f): %s", what, i, pts[3 * i],
                      pts[3 * i + 2], pts[3 * (i + 1)], pts[3 * (i + 1) + 2], why);
        len += dist3(&pts[3 * i], &pts[3 * (i + 1)]);
    }
    ck_assert_msg(fabs(len - p->length) < 1e-3 * (1 + len), "%s: length %.4f vs segments %.4f",
                  what, p->length, len);
}

/* Prints a small grid, '.' walkable '#' blocked, for a failure report. */
static void dump_grid(const pf_grid *g) {
    for (int32_t y = 0; y < pf_grid_height(g); y++) {
        for (int32_t x = 0; x < pf_grid_width(g); x++)
            fputc(pf_grid_is_walkable(g, (pf_point){x, y}) ? '.' : '#', stderr);
        fputc('\n', stderr);
    }
}

/* Whether no waypoint of p lies inside the x/z box. */
static bool path_avoids(const pf_nav_path *p, float x0, float z0, float x1, float z1) {
    const float *pts = p->points;
    for (uint32_t i = 0; i < p->npoints; i++) {
        float x = pts[3 * i], z = pts[3 * i + 2];
        if (x > x0 && x < x1 && z > z0 && z < z1) return false;
    }
    return true;
}

/* ---- OBJ ---- */

static pf_status parse(const char *text, pf_obj *o, pf_nav_error *err) {
    return pf_obj_parse(text, strlen(text), 1000, 1000, o, err);
}

START_TEST(navmesh_obj_parses_faces_and_forms) {
    const char *text = "# a quad and a triangle\r\n"
                       "mtllib x.mtl\n"
                       "o floor\n"
                       "v 0 0 0\n"
                       "v 4 0 0 1.0\n"
                       "v 4 0 4 0.5 0.5 0.5\n"
                       "v 0 0 4\n"
                       "vt 0 0\n"
                       "vn 0 1 0\n"
                       "f 1/1/1 2/1/1 3//1 4\n"
                       "usemtl stone\n"
                       "s off\n"
                       "f -4 -2 -1   # negative indices\n"
                       "l 1 2\n";
    pf_obj o;
    pf_nav_error err;
    ck_assert_int_eq(parse(text, &o, &err), PF_OK);
    ck_assert_uint_eq(o.nverts, 4);
    ck_assert_uint_eq(o.ntris, 3);
    const uint32_t want[9] = {0, 1, 2, 0, 2, 3, 0, 2, 3};
    for (int i = 0; i < 9; i++) ck_assert_uint_eq(o.tris[i], want[i]);
    ck_assert(o.verts[3] == 4.0f && o.verts[8] == 4.0f);
    pf_obj_free(&o);
    pf_obj_free(NULL);
    /* A face may name a vertex read later. */
    ck_assert_int_eq(parse("f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 0 1\n", &o, &err), PF_OK);
    ck_assert_uint_eq(o.ntris, 1);
    pf_obj_free(&o);
}
END_TEST

START_TEST(navmesh_obj_rejects_malformed) {
    static const struct {
        const char *text;
        pf_status st;
        const char *field, *msg;
    } cases[] = {
        {"", PF_EINVAL, "obj", "no faces"},
        {"v 0 0 0\nv 1 0 0\nv 0 0 1\n", PF_EINVAL, "obj", "no faces"},
        {"v 0 0\n", PF_EPARSE, "obj", "line 1: a vertex needs x, y and z"},
        {"v 0 0 x\n", PF_EPARSE, "obj", "line 1: vertex coordinate 'x'"},
        {"v 0 0 nan\n", PF_EPARSE, "obj", "not a number"},
        {"v 0 0 inf\n", PF_EPARSE, "obj", "not a number"},
        {"v 0x10 0 0\n", PF_EPARSE, "obj", "not a number"},
        {"v 1e300 0 0\n", PF_EINVAL, "obj", "outside"},
        {"v 1e999 0 0\n", PF_EPARSE, "obj", "not a number"},
        {"v 2e7 0 0\n", PF_EINVAL, "obj", "outside"},
        {"v 0 0 0 1 2 3 4 5\n", PF_EPARSE, "obj", "more than 7"},
        {"v 0 0 0\nv 1 0 0\nf 1 2\n", PF_EPARSE, "obj", "line 3: a face needs at least 3"},
        {"v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 0\n", PF_EPARSE, "obj", "nonzero vertex index"},
        {"v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 4\n", PF_EINVAL, "obj", "past the last vertex"},
        {"v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 -4\n", PF_EINVAL, "obj", "before the first vertex"},
        {"v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3x\n", PF_EPARSE, "obj", "malformed"},
        {"v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 a\n", PF_EPARSE, "obj", "nonzero vertex index"},
        {"v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 99999999999999\n", PF_EPARSE, "obj", "vertex index"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pf_obj o;
        pf_nav_error err;
        memset(&err, 0, sizeof err);
        pf_status st = parse(cases[i].text, &o, &err);
        ck_assert_msg(st == cases[i].st, "case %zu: status %d, want %d (%s)", i, st, cases[i].st,
                      err.message);
        ck_assert_str_eq(err.field, cases[i].field);
        ck_assert_msg(strstr(err.message, cases[i].msg), "case %zu: '%s' lacks '%s'", i,
                      err.message, cases[i].msg);
        ck_assert_ptr_null(o.verts);
        ck_assert_ptr_null(o.tris);
    }
}
END_TEST

START_TEST(navmesh_obj_limits_named) {
    pf_obj o;
    pf_nav_error err;
    const char *text = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf 1 2 3 4\n";
    ck_assert_int_eq(pf_obj_parse(text, strlen(text), 3, 10, &o, &err), PF_ELIMIT);
    ck_assert_str_eq(err.field, "limits.max_vertices");
    ck_assert_int_eq(pf_obj_parse(text, strlen(text), 10, 1, &o, &err), PF_ELIMIT);
    ck_assert_str_eq(err.field, "limits.max_triangles");
    ck_assert_int_eq(pf_obj_parse(text, strlen(text), 4, 2, &o, &err), PF_OK);
    pf_obj_free(&o);
    /* A line past PF_OBJ_MAX_LINE. */
    size_t n = PF_OBJ_MAX_LINE + 10;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    big[0] = 'v';
    big[n] = '\0';
    ck_assert_int_eq(pf_obj_parse(big, n, 10, 10, &o, &err), PF_ELIMIT);
    ck_assert_str_eq(err.field, "obj");
    free(big);
}
END_TEST

/* Random bytes and random token soup: the reader answers (OK or an error)
 * and on error returns nothing; the sanitizer run checks the memory. */
START_TEST(navmesh_obj_random_input_bounded) {
    uint64_t st = tu_seed("navmesh_obj_random_input_bounded", 17);
    static const char *toks[] = {"v",    "f",  "vt",   "#", "1",  "-1", "0",  "2/3", "1//2", "0.5",
                                 "-3e2", "\n", "\r\n", " ", "\t", "x",  "1/", "/",   "nan",  "99"};
    char buf[512];
    for (int it = 0; it < 3000; it++) {
        size_t n = 0;
        if (it % 2) {
            n = tu_below(&st, sizeof buf);
            for (size_t i = 0; i < n; i++) buf[i] = (char)tu_below(&st, 256);
        } else {
            while (n < sizeof buf - 8) {
                const char *t = toks[tu_below(&st, sizeof toks / sizeof toks[0])];
                size_t l = strlen(t);
                memcpy(buf + n, t, l);
                n += l;
                buf[n++] = ' ';
                if (tu_below(&st, 8) == 0) break;
            }
        }
        pf_obj o;
        pf_nav_error err;
        pf_status s = pf_obj_parse(buf, n, 64, 64, &o, &err);
        if (s == PF_OK) {
            ck_assert_uint_ge(o.ntris, 1);
            for (uint32_t i = 0; i < 3 * o.ntris; i++) ck_assert_uint_lt(o.tris[i], o.nverts);
            pf_obj_free(&o);
        } else {
            ck_assert_ptr_null(o.verts);
            ck_assert(err.message[0] != '\0');
        }
    }
}
END_TEST

/* ---- builds ---- */

START_TEST(navmesh_build_rejects_bad_settings) {
    const char *rows[] = {"....", "...."};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 8);
    static const struct {
        int which;
        float v;
        const char *field;
    } cases[] = {
        {0, 0.0f, "cell_size"},     {0, NAN, "cell_size"},         {0, 11, "cell_size"},
        {1, 0.001f, "cell_height"}, {2, -1, "agent.radius"},       {2, 51, "agent.radius"},
        {3, 0.1f, "agent.height"},  {4, -0.5f, "agent.max_climb"}, {5, 90, "agent.max_slope"},
        {6, 8, "tile_size"},        {6, 1025, "tile_size"},        {7, 0, "edge_max_error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pf_nav_build_input in;
        memset(&in, 0, sizeof in);
        in.grid = g;
        in.config = pf_nav_default_grid_config();
        float *f[] = {&in.config.cell_size,
                      &in.config.cell_height,
                      &in.config.agent_radius,
                      &in.config.agent_height,
                      &in.config.agent_max_climb,
                      &in.config.agent_max_slope,
                      NULL,
                      &in.config.edge_max_error};
        if (cases[i].which == 6)
            in.config.tile_size = (int32_t)cases[i].v;
        else
            *f[cases[i].which] = cases[i].v;
        pf_navmesh *nm = NULL;
        pf_nav_error err;
        ck_assert_int_eq(pf_nav_build(&in, NULL, NULL, &nm, &err), PF_EINVAL);
        ck_assert_ptr_null(nm);
        ck_assert_msg(strcmp(err.field, cases[i].field) == 0, "case %zu: field %s, want %s", i,
                      err.field, cases[i].field);
    }
    /* Neither or both inputs. */
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.config = pf_nav_default_grid_config();
    pf_navmesh *nm = NULL;
    pf_nav_error err;
    ck_assert_int_eq(pf_nav_build(&in, NULL, NULL, &nm, &err), PF_EINVAL);
    ck_assert_str_eq(err.field, "kind");
    pf_grid_destroy(g);
}
END_TEST

START_TEST(navmesh_build_limits_named) {
    pf_grid *g = NULL;
    ck_assert_int_eq(pf_grid_create(200, 200, NULL, &g), PF_OK);
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.grid = g;
    in.config = pf_nav_default_grid_config();
    pf_navmesh *nm = NULL;
    pf_nav_error err;
    pf_nav_limits lim = pf_nav_default_limits();
    lim.max_voxels = 799 * 800; /* the grid is 800 x 800 voxels */
    ck_assert_int_eq(pf_nav_build(&in, &lim, NULL, &nm, &err), PF_ELIMIT);
    ck_assert_str_eq(err.field, "limits.max_voxels");
    lim = pf_nav_default_limits();
    lim.max_tiles = 100; /* 13 x 13 tiles */
    ck_assert_int_eq(pf_nav_build(&in, &lim, NULL, &nm, &err), PF_ELIMIT);
    ck_assert_str_eq(err.field, "limits.max_tiles");
    lim = pf_nav_default_limits();
    lim.build_ms = 0;
    ck_assert_int_eq(pf_nav_build(&in, &lim, &par_runner, &nm, &err), PF_ELIMIT);
    ck_assert_str_eq(err.field, "limits.build_ms");
    ck_assert_ptr_null(nm);
    /* Geometry limits. */
    float verts[] = {0, 0, 0, 1, 0, 0, 0, 0, 1};
    uint32_t tris[] = {0, 1, 2};
    pf_nav_geom geom = {verts, 3, tris, 1};
    memset(&in, 0, sizeof in);
    in.geom = &geom;
    in.config = pf_nav_default_grid_config();
    lim = pf_nav_default_limits();
    lim.max_vertices = 2;
    ck_assert_int_eq(pf_nav_build(&in, &lim, NULL, &nm, &err), PF_ELIMIT);
    ck_assert_str_eq(err.field, "limits.max_vertices");
    lim = pf_nav_default_limits();
    tris[2] = 3;
    ck_assert_int_eq(pf_nav_build(&in, &lim, NULL, &nm, &err), PF_EINVAL);
    ck_assert_str_eq(err.field, "obj");
    tris[2] = 2;
    verts[4] = NAN;
    ck_assert_int_eq(pf_nav_build(&in, &lim, NULL, &nm, &err), PF_EINVAL);
    ck_assert_str_eq(err.field, "obj");
    pf_grid_destroy(g);
}
END_TEST

START_TEST(navmesh_build_grid_walls_refused) {
    const char *rows[] = {"...", "..."};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 8);
    ck_assert_int_eq(pf_grid_set_wall(g, (pf_point){0, 0}, PF_DIR_E, true), PF_OK);
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.grid = g;
    in.config = pf_nav_default_grid_config();
    pf_navmesh *nm = NULL;
    pf_nav_error err;
    ck_assert_int_eq(pf_nav_build(&in, NULL, NULL, &nm, &err), PF_EUNSUPPORTED);
    ck_assert_str_eq(err.field, "from_grid.walls");
    pf_grid_destroy(g);
}
END_TEST

/* Cell (x, y) is the floor square x..x+1, z = y..y+1 at height 0. */
START_TEST(navmesh_grid_cell_geometry) {
    const char *rows[] = {"...#.", "#...."};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 8);
    pf_navmesh *nm = build_grid(g, NULL);
    pf_nav_query *q = make_query();
    pf_nav_info info;
    pf_navmesh_info(nm, &info);
    ck_assert(info.from_grid && info.grid_w == 5 && info.grid_h == 2);
    ck_assert(info.bmin[0] == 0 && info.bmin[2] == 0 && info.bmax[0] == 5 && info.bmax[2] == 2);
    ck_assert_uint_gt(info.polygons, 0);
    ck_assert_uint_gt(info.mesh_bytes, 0);
    float s[3] = {0.5f, 0, 0.5f}, t[3] = {4.5f, 0, 1.5f}, snapped[3];
    ck_assert_int_eq(pf_nav_nearest(q, nm, s, NULL, snapped), PF_OK);
    ck_assert(fabsf(snapped[0] - 0.5f) < 1e-3f && fabsf(snapped[1]) < 0.05f &&
              fabsf(snapped[2] - 0.5f) < 1e-3f);
    /* Inside the blocked cell (3, 0) the nearest floor is 0.25 away at
     * best: a box of +-0.1 finds none. */
    float in_wall[3] = {3.5f, 0, 0.5f}, small[3] = {0.1f, 1, 0.1f};
    ck_assert_int_eq(pf_nav_nearest(q, nm, in_wall, small, snapped), PF_EBLOCKED);
    pf_nav_path p;
    const char *which = NULL;
    for (int a = 0; a < 2; a++) {
        ck_assert_int_eq(find_path(q, nm, s, t, NULL, (pf_nav_algorithm)a, &p, &which), PF_OK);
        ck_assert(!p.partial);
        check_path_on_mesh(q, nm, &p, "cell geometry");
        /* Round the eroded corner of cell (3, 0): longer than the straight
         * line, shorter than the grid's 3 + sqrt 2. */
        double euclid = sqrt(16.0 + 1.0);
        ck_assert(p.length > euclid + 1e-4 && p.length <= 1.02 * (3 + M_SQRT2));
    }
    ck_assert(p.exact == false);
    /* Off-mesh ends name themselves. */
    ck_assert_int_eq(find_path(q, nm, in_wall, t, small, PF_NAV_POLYANYA, &p, &which), PF_EBLOCKED);
    ck_assert_str_eq(which, "start");
    ck_assert_int_eq(find_path(q, nm, s, in_wall, small, PF_NAV_POLYANYA, &p, &which), PF_EBLOCKED);
    ck_assert_str_eq(which, "goal");
    float bad[3] = {NAN, 0, 0};
    ck_assert_int_eq(find_path(q, nm, bad, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_ERANGE);
    pf_nav_query_destroy(q);
    pf_navmesh_release(nm);
    pf_grid_destroy(g);
}
END_TEST

/* Two cells that touch only at a corner are apart (no corner cutting). */
START_TEST(navmesh_grid_corner_contact_is_apart) {
    const char *rows[] = {".#", "#."};
    pf_grid *g = tu_grid_from_ascii(rows, 2, 8);
    pf_navmesh *nm = build_grid(g, NULL);
    pf_nav_query *q = make_query();
    float s[3] = {0.5f, 0, 0.5f}, t[3] = {1.5f, 0, 1.5f};
    pf_nav_path p;
    const char *which;
    ck_assert_int_eq(find_path(q, nm, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
    ck_assert(p.partial);
    ck_assert(p.goal[0] < 1.0f && p.goal[2] < 1.0f); /* ends in the start's cell */
    pf_nav_query_destroy(q);
    pf_navmesh_release(nm);
    pf_grid_destroy(g);
}
END_TEST

/* Random grids: a path is found exactly when the grid's BFS reaches the
 * goal; found paths lie on the mesh, are at least the straight line and at
 * most 1.02 x the grid optimum (tu_reference_cost, octile, no corner
 * cutting). Detour's findPath answers the same reachability. */
START_TEST(navmesh_grid_random_reachability_and_length) {
    uint64_t st = tu_seed("navmesh_grid_random_reachability_and_length", 2024);
    tu_map_opts o = {6, 28, 0.45, false, false, 8, 0};
    pf_nav_query *q = make_query();
    int found = 0, apart = 0;
    for (int it = 0; it < 60; it++) {
        pf_grid *g = tu_random_grid(&st, &o);
        pf_nav_config cfg = pf_nav_default_grid_config();
        cfg.tile_size = 16 + 8 * (int32_t)tu_below(&st, 4); /* tiles of 4..10 cells */
        pf_navmesh *nm = build_grid(g, &cfg);
        ck_assert_uint_eq(pf_navmesh_one_way_links(nm), 0);
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        bool *seen = malloc((size_t)w * h);
        for (int k = 0; k < 12; k++) {
            pf_point a, b;
            if (!tu_random_walkable(&st, g, &a) || !tu_random_walkable(&st, g, &b)) break;
            tu_reference_reach(g, a, -1, seen);
            bool reach = seen[b.y * w + b.x];
            float s[3], t[3];
            cell_centre(a, s);
            cell_centre(b, t);
            for (int algo = 0; algo < 2; algo++) {
                pf_nav_path p;
                const char *which;
                ck_assert_int_eq(find_path(q, nm, s, t, NULL, (pf_nav_algorithm)algo, &p, &which),
                                 PF_OK);
                ck_assert_msg(p.partial == !reach,
                              "seed run %d: (%d,%d)->(%d,%d) grid %s, mesh %s (algo %d)", it, a.x,
                              a.y, b.x, b.y, reach ? "reachable" : "apart",
                              p.partial ? "partial" : "found", algo);
                check_path_on_mesh(q, nm, &p, "random grid");
                if (!reach || algo == PF_NAV_DETOUR) continue;
                ck_assert(p.exact);
                double opt = tu_reference_cost(g, a, b);
                double euclid = hypot(b.x - a.x, b.y - a.y);
                if (p.length > 1.02 * opt + 1e-3) dump_grid(g);
                ck_assert_msg(p.length >= euclid - 1e-3, "shorter than the straight line");
                ck_assert_msg(p.length <= 1.02 * opt + 1e-3,
                              "(%d,%d)->(%d,%d): length %.4f > 1.02 x %.4f", a.x, a.y, b.x, b.y,
                              p.length, opt);
            }
            if (reach)
                found++;
            else
                apart++;
        }
        free(seen);
        pf_navmesh_release(nm);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(found, 100);
    ck_assert_int_gt(apart, 20);
    pf_nav_query_destroy(q);
}
END_TEST

/* A random grid for the polyanya property test: open ground with
 * rectangular obstacles (holes in the walkable region), single blocked
 * cells and walls with one-cell gaps (narrow passages), then unpinched
 * (navref.h). */
static pf_grid *holes_and_gaps(uint64_t *st, int32_t w, int32_t h) {
    pf_grid *g = NULL;
    ck_assert_int_eq(pf_grid_create(w, h, NULL, &g), PF_OK);
    int rects = 1 + (int)tu_below(st, 6), dots = (int)tu_below(st, (uint32_t)(w * h / 12 + 1));
    for (int i = 0; i < rects; i++) {
        int32_t rw = 1 + (int32_t)tu_below(st, (uint32_t)(w / 3)),
                rh = 1 + (int32_t)tu_below(st, (uint32_t)(h / 3));
        int32_t x0 = (int32_t)tu_below(st, (uint32_t)(w - rw + 1)),
                y0 = (int32_t)tu_below(st, (uint32_t)(h - rh + 1));
        for (int32_t y = y0; y < y0 + rh; y++)
            for (int32_t x = x0; x < x0 + rw; x++) pf_grid_set_cost(g, (pf_point){x, y}, 0);
    }
    for (int i = 0; i < dots; i++)
        pf_grid_set_cost(
            g, (pf_point){(int32_t)tu_below(st, (uint32_t)w), (int32_t)tu_below(st, (uint32_t)h)},
            0);
    if (tu_below(st, 2)) { /* a wall across, with one or two one-cell gaps */
        bool vertical = tu_below(st, 2);
        int32_t at = 1 + (int32_t)tu_below(st, (uint32_t)((vertical ? w : h) - 2)),
                len = vertical ? h : w;
        int32_t gap1 = (int32_t)tu_below(st, (uint32_t)len),
                gap2 = tu_below(st, 2) ? (int32_t)tu_below(st, (uint32_t)len) : gap1;
        for (int32_t k = 0; k < len; k++)
            if (k != gap1 && k != gap2)
                pf_grid_set_cost(g, vertical ? (pf_point){at, k} : (pf_point){k, at}, 0);
    }
    navref_unpinch(g, st);
    return g;
}

/* A random point inside a random walkable cell of g (as floats: the query's
 * own coordinates are what the reference gets). */
static bool random_point(uint64_t *st, const pf_grid *g, float out[3]) {
    pf_point c;
    if (!tu_random_walkable(st, g, &c)) return false;
    out[0] = (float)c.x + 0.02f + 0.96f * (float)tu_below(st, 10000) / 10000.0f;
    out[1] = 0;
    out[2] = (float)c.y + 0.02f + 0.96f * (float)tu_below(st, 10000) / 10000.0f;
    return true;
}

/* Polyanya is the shortest path on the mesh, to 1e-4 relative: on hundreds
 * of random grids with holes, narrow gaps and 3 to 7 tiles a side, built
 * with no erosion (agent radius 0) and contours kept to a tenth of a voxel
 * (so the mesh covers exactly the walkable cells: checked first, cell by
 * cell, with pf_nav_distance_to_mesh), its length equals the exact
 * Euclidean shortest path of the independent reference (tests/navref.c: a
 * visibility graph over the region's reflex corners, no Detour or polyanya
 * code); it is partial exactly when the reference finds no path; its
 * segments lie in the region; and Detour's findPath is never shorter
 * (find_path). Failing runs print the grid. */
#ifndef TIGHT_NODES
#define TIGHT_NODES 48
#endif
START_TEST(navmesh_polyanya_equals_reference_shortest_path) {
    uint64_t st = tu_seed("navmesh_polyanya_equals_reference_shortest_path", 2027);
    pf_nav_query *q = make_query(), *tight = NULL;
    int meshes = 0, found = 0, apart = 0, bent = 0, retried = 0, retried_found = 0;
    ck_assert_int_eq(pf_nav_query_create(TIGHT_NODES, &tight), PF_OK);
    double worst = 0;
    for (int it = 0; it < 300; it++) {
        int32_t w = 12 + (int32_t)tu_below(&st, 17), h = 12 + (int32_t)tu_below(&st, 17);
        pf_grid *g = holes_and_gaps(&st, w, h);
        pf_nav_config cfg = pf_nav_default_grid_config();
        pf_navmesh *nm;
        navref *ref;
        cfg.agent_radius = 0;
        cfg.edge_max_error = 0.1f;
        cfg.tile_size = 16; /* 4 cells a tile */
        nm = build_grid(g, &cfg);
        ck_assert_uint_eq(pf_navmesh_one_way_links(nm), 0);
        /* The mesh covers the walkable cells and nothing else. */
        for (int32_t y = 0; y < h; y++)
            for (int32_t x = 0; x < w; x++) {
                float c[3];
                cell_centre((pf_point){x, y}, c);
                float d = pf_nav_distance_to_mesh(q, nm, c);
                bool on = d >= 0 && d < 1e-3f;
                if (on != pf_grid_is_walkable(g, (pf_point){x, y})) dump_grid(g);
                ck_assert_msg(on == pf_grid_is_walkable(g, (pf_point){x, y}),
                              "run %d: cell (%d,%d) %s but %.3f from the mesh", it, x, y,
                              pf_grid_is_walkable(g, (pf_point){x, y}) ? "walkable" : "blocked", d);
            }
        ref = navref_create(g);
        ck_assert_ptr_nonnull(ref);
        for (int k = 0; k < 8; k++) {
            float s[3], t[3];
            pf_nav_path p;
            const char *which;
            double a[2], b[2], want;
            if (!random_point(&st, g, s) || !random_point(&st, g, t)) break;
            ck_assert_int_eq(find_path(q, nm, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
            a[0] = s[0], a[1] = s[2], b[0] = t[0], b[1] = t[2];
            want = navref_shortest(ref, a, b);
            if (p.partial != (want < 0)) dump_grid(g);
            ck_assert_msg(p.partial == (want < 0),
                          "run %d: (%.4f,%.4f)->(%.4f,%.4f): mesh %s, reference %s", it, a[0], a[1],
                          b[0], b[1], p.partial ? "partial" : "found",
                          want < 0 ? "apart" : "connected");
            if (want < 0) {
                apart++;
                continue;
            }
            ck_assert(p.exact);
            if (fabs(p.length - want) > 1e-4 * want) dump_grid(g);
            ck_assert_msg(fabs(p.length - want) <= 1e-4 * want,
                          "run %d: (%.4f,%.4f)->(%.4f,%.4f): polyanya %.6f, shortest %.6f", it,
                          a[0], a[1], b[0], b[1], p.length, want);
            for (uint32_t i = 0; i + 1 < p.npoints; i++) {
                double u[2] = {p.points[3 * i], p.points[3 * i + 2]},
                       v[2] = {p.points[3 * i + 3], p.points[3 * i + 5]};
                ck_assert_msg(navref_segment_inside(ref, u, v),
                              "run %d: segment %u (%.4f,%.4f)->(%.4f,%.4f) leaves the region", it,
                              i, u[0], u[1], v[0], v[1]);
            }
            if (want > 0 && fabs(p.length - want) / want > worst)
                worst = fabs(p.length - want) / want;
            bent += p.npoints > 2;
            found++;
            /* The same query on a budget the pruned pass can run out of:
             * a second pass without pruning, and when it reaches the goal
             * its answer is the shortest path too. */
            ck_assert_int_eq(find_path(tight, nm, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
            if (p.passes == 2) {
                retried++;
                /* Exact only when the unpruned pass fitted the budget;
                 * one that filled it too says so and is never shorter. */
                if (!p.partial) {
                    ck_assert(p.exact != p.out_of_nodes);
                    ck_assert_msg(p.length >= want * (1 - 1e-4), "run %d: %.6f, shortest %.6f", it,
                                  p.length, want);
                }
                if (p.exact && !p.partial) {
                    retried_found++;
                    ck_assert_msg(fabs(p.length - want) <= 1e-4 * want,
                                  "run %d: the unpruned pass: %.6f, shortest %.6f", it, p.length,
                                  want);
                }
            }
        }
        navref_destroy(ref);
        pf_navmesh_release(nm);
        pf_grid_destroy(g);
        meshes++;
    }
    fprintf(stderr,
            "navmesh_polyanya_equals_reference_shortest_path: %d meshes, %d paths (%d bent), %d "
            "apart, worst relative difference %.2e; with %d nodes %d ran out with pruning and "
            "ran again, %d of them to the goal\n",
            meshes, found, bent, apart, worst, TIGHT_NODES, retried, retried_found);
    ck_assert_int_gt(found, 1000);
    ck_assert_int_gt(bent, 300);
    ck_assert_int_gt(apart, 20);
    ck_assert_int_gt(retried_found, 0);
    pf_nav_query_destroy(tight);
    pf_nav_query_destroy(q);
}
END_TEST

/* Agent width: a mesh built for an agent of radius 0.6 (1.2 wide: it
 * takes gaps of two cells, not one) finds a path exactly when the grid
 * says a 2 x 2 agent reaches the goal (the agent grid of size 2,
 * clearance.h, searched by the independent BFS); start and goal are the
 * centres of the agent's squares. Found paths lie on the mesh and are no
 * shorter than the straight line. */
START_TEST(navmesh_grid_agent_width_reachability) {
    uint64_t st = tu_seed("navmesh_grid_agent_width_reachability", 4242);
    tu_map_opts o = {8, 26, 0.3, false, false, 8, 0};
    pf_nav_query *q = make_query();
    int found = 0, apart = 0, pockets = 0;
    for (int it = 0; it < 40; it++) {
        pf_grid *g = tu_random_grid(&st, &o), *ag = NULL;
        pf_clearance *cl = NULL;
        pf_nav_config cfg = pf_nav_default_grid_config();
        pf_navmesh *nm;
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        bool *seen;
        cfg.agent_radius = 0.75f;
        cfg.cell_size = 0.25f;
        ck_assert_int_eq(pf_clearance_build(g, 2, NULL, &cl), PF_OK);
        ck_assert_int_eq(pf_agent_grid_build(g, cl, 2, NULL, &ag), PF_OK);
        nm = build_grid(g, &cfg);
        seen = malloc((size_t)w * h);
        for (int k = 0; k < 10; k++) {
            pf_point a, b;
            float s[3], t[3];
            pf_nav_path p;
            const char *which;
            bool reach;
            pf_status st2;
            if (!tu_random_walkable(&st, ag, &a) || !tu_random_walkable(&st, ag, &b)) break;
            tu_reference_reach(ag, a, -1, seen);
            reach = seen[b.y * w + b.x];
            s[0] = (float)a.x + 1, s[1] = 0, s[2] = (float)a.y + 1;
            t[0] = (float)b.x + 1, t[1] = 0, t[2] = (float)b.y + 1;
            st2 = find_path(q, nm, s, t, NULL, PF_NAV_POLYANYA, &p, &which);
            if (st2 == PF_EBLOCKED) {
                /* No polygon at an endpoint: Recast keeps no polygon of an
                 * isolated pocket where the agent barely fits (its eroded
                 * floor a voxel or two wide). Then the grid's agent can go
                 * almost nowhere from there either. */
                pf_point e = which && strcmp(which, "goal") == 0 ? b : a;
                int n = 0;
                tu_reference_reach(ag, e, -1, seen);
                for (int32_t c = 0; c < w * h; c++) n += seen[c];
                ck_assert_msg(n <= 2, "run %d: no polygon at the agent (%d,%d), %d anchors reach",
                              it, e.x, e.y, n);
                pockets++;
                continue;
            }
            ck_assert_int_eq(st2, PF_OK);
            if (p.partial == reach) dump_grid(g);
            ck_assert_msg(p.partial == !reach,
                          "run %d: 2x2 agent (%d,%d)->(%d,%d) grid %s, mesh %s", it, a.x, a.y, b.x,
                          b.y, reach ? "reachable" : "apart", p.partial ? "partial" : "found");
            check_path_on_mesh(q, nm, &p, "agent width");
            if (reach) {
                ck_assert(p.length >= dist3(s, t) - 1e-3);
                found++;
            } else {
                apart++;
            }
        }
        free(seen);
        pf_navmesh_release(nm);
        pf_grid_destroy(ag);
        pf_clearance_destroy(cl);
        pf_grid_destroy(g);
    }
    fprintf(stderr, "navmesh_grid_agent_width_reachability: %d found, %d apart, %d pockets\n",
            found, apart, pockets);
    ck_assert_int_gt(found, 50);
    ck_assert_int_gt(apart, 10);
    pf_nav_query_destroy(q);
}
END_TEST

/* The shared Moving AI maps: every map builds; on a sample of every
 * scenario file, paths lie on the mesh, pass raycasts, are at least the
 * straight line and at most 1.02 x the listed optimum; random pairs are
 * found exactly when the grid's BFS says so. */
START_TEST(navmesh_movingai_scenarios_sampled) {
    const char *dir;
    TU_NEED_BENCH_DIR(dir);
    char **list = tu_list_scen(dir);
    ck_assert_ptr_nonnull(list);
    pf_nav_query *q = make_query();
    uint64_t st = tu_seed("navmesh_movingai_scenarios_sampled", 7);
    int files = 0, checked = 0, pairs = 0;
    for (char **f = list; *f; f++) {
        pf_scen sc;
        pf_grid *g = tu_load_scen(dir, *f, &sc);
        pf_navmesh *nm = build_grid(g, NULL);
        ck_assert_uint_eq(pf_navmesh_one_way_links(nm), 0);
        size_t step = sc.count / 12 + 1;
        for (size_t i = 0; i < sc.count; i += step) {
            const pf_scen_entry *e = &sc.entries[i];
            float s[3], t[3];
            cell_centre(e->start, s);
            cell_centre(e->goal, t);
            pf_nav_path p;
            const char *which;
            ck_assert_int_eq(find_path(q, nm, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
            char what[160];
            snprintf(what, sizeof what, "%s line %zu", *f, i + 2);
            ck_assert_msg(!p.partial && p.exact, "%s: partial %d exact %d", what, p.partial,
                          p.exact);
            check_path_on_mesh(q, nm, &p, what);
            double euclid = dist3(s, t);
            ck_assert_msg(p.length >= euclid - 1e-3, "%s: shorter than the straight line", what);
            ck_assert_msg(p.length <= 1.02 * e->optimal + 1e-3, "%s: %.4f > 1.02 x %.4f", what,
                          p.length, e->optimal);
            checked++;
        }
        /* Reachability on random cell pairs. */
        int32_t w = pf_grid_width(g), h = pf_grid_height(g);
        bool *seen = malloc((size_t)w * h);
        for (int k = 0; k < 3; k++) {
            pf_point a, b;
            tu_random_walkable(&st, g, &a);
            tu_reference_reach(g, a, -1, seen);
            for (int j = 0; j < 4; j++) {
                tu_random_walkable(&st, g, &b);
                float s[3], t[3];
                cell_centre(a, s);
                cell_centre(b, t);
                pf_nav_path p;
                const char *which;
                ck_assert_int_eq(find_path(q, nm, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
                ck_assert_msg(p.partial == !seen[b.y * w + b.x], "%s: (%d,%d)->(%d,%d) mismatch",
                              *f, a.x, a.y, b.x, b.y);
                pairs++;
            }
        }
        free(seen);
        files++;
        pf_navmesh_release(nm);
        pf_scen_free(&sc);
        pf_grid_destroy(g);
    }
    ck_assert_int_gt(files, 0);
    fprintf(stderr, "navmesh_movingai_scenarios_sampled: %d maps, %d scenarios, %d pairs\n", files,
            checked, pairs);
    tu_free_list(list);
    pf_nav_query_destroy(q);
}
END_TEST

/* A parallel build gives the mesh a sequential one gives. */
START_TEST(navmesh_build_parallel_matches_sequential) {
    uint64_t st = tu_seed("navmesh_build_parallel_matches_sequential", 99);
    tu_map_opts o = {40, 70, 0.3, false, false, 8, 0};
    pf_grid *g = tu_random_grid(&st, &o);
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.grid = g;
    in.config = pf_nav_default_grid_config();
    in.config.tile_size = 32;
    pf_navmesh *a = NULL, *b = NULL;
    pf_nav_error err;
    ck_assert_int_eq(pf_nav_build(&in, NULL, NULL, &a, &err), PF_OK);
    ck_assert_int_eq(pf_nav_build(&in, NULL, &par_runner, &b, &err), PF_OK);
    pf_nav_info ia, ib;
    pf_navmesh_info(a, &ia);
    pf_navmesh_info(b, &ib);
    ck_assert_uint_eq(ia.polygons, ib.polygons);
    ck_assert_uint_eq(ia.vertices, ib.vertices);
    ck_assert_uint_eq(ia.tiles, ib.tiles);
    ck_assert_uint_eq(ia.layer_bytes, ib.layer_bytes);
    pf_nav_query *q = make_query();
    for (int k = 0; k < 30; k++) {
        pf_point s, t;
        tu_random_walkable(&st, g, &s);
        tu_random_walkable(&st, g, &t);
        float fs[3], ft[3];
        cell_centre(s, fs);
        cell_centre(t, ft);
        pf_nav_path pa, pb;
        const char *which;
        ck_assert_int_eq(find_path(q, a, fs, ft, NULL, PF_NAV_DETOUR, &pa, &which), PF_OK);
        double la = pa.length;
        uint32_t na = pa.npoints;
        ck_assert_int_eq(find_path(q, b, fs, ft, NULL, PF_NAV_DETOUR, &pb, &which), PF_OK);
        ck_assert_uint_eq(na, pb.npoints);
        ck_assert(fabs(la - pb.length) < 1e-6);
    }
    pf_nav_query_destroy(q);
    pf_navmesh_release(a);
    pf_navmesh_release(b);
    pf_grid_destroy(g);
}
END_TEST

/* Geometry: a floor with a pillar (a closed box standing on it). Paths go
 * round the pillar, keeping the agent radius off it. */
START_TEST(navmesh_obj_floor_with_pillar) {
    char text[2048];
    /* Floor 0..20 x 0..20 at y 0; pillar box 8..12 x 8..12, 3 high. */
    snprintf(text, sizeof text,
             "v 0 0 0\nv 20 0 0\nv 20 0 20\nv 0 0 20\n"
             "f 1 4 3 2\n"
             "v 8 0 8\nv 12 0 8\nv 12 0 12\nv 8 0 12\n"
             "v 8 3 8\nv 12 3 8\nv 12 3 12\nv 8 3 12\n"
             "f 5 6 10 9\nf 6 7 11 10\nf 7 8 12 11\nf 8 5 9 12\nf 9 12 11 10\n");
    pf_obj obj;
    pf_nav_error err;
    ck_assert_int_eq(parse(text, &obj, &err), PF_OK);
    pf_nav_geom geom = pf_obj_geom(&obj);
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.geom = &geom;
    in.config = pf_nav_default_grid_config();
    in.config.agent_radius = 0.5f;
    in.config.cell_size = 0.25f;
    pf_navmesh *nm = NULL;
    ck_assert_int_eq(pf_nav_build(&in, NULL, &par_runner, &nm, &err), PF_OK);
    pf_nav_query *q = make_query();
    float s[3] = {10, 0, 2}, t[3] = {10, 0, 18};
    for (int algo = 0; algo < 2; algo++) {
        pf_nav_path p;
        const char *which;
        ck_assert_int_eq(find_path(q, nm, s, t, NULL, (pf_nav_algorithm)algo, &p, &which), PF_OK);
        ck_assert(!p.partial);
        check_path_on_mesh(q, nm, &p, "pillar");
        ck_assert(p.length > 16.5);
        /* No waypoint inside the pillar grown by the radius. */
        ck_assert(path_avoids(&p, 7.6f, 7.6f, 12.4f, 12.4f));
        if (algo == PF_NAV_POLYANYA) {
            /* Round a corner of the grown pillar: 2 x hypot(2.5, 6.5) + ... */
            double best = 2 * hypot(2.5, 6.0) + 4.0;
            ck_assert_msg(p.length <= best + 0.6, "length %.3f", p.length);
        }
    }
    /* The pillar's top is walkable too (3 up): a point there snaps to it. */
    float top[3] = {10, 3.2f, 10}, snapped[3];
    ck_assert_int_eq(pf_nav_nearest(q, nm, top, NULL, snapped), PF_OK);
    ck_assert(snapped[1] > 2.5f);
    pf_nav_query_destroy(q);
    pf_navmesh_release(nm);
    pf_obj_free(&obj);
}
END_TEST

/* Heights in the seams between input triangles (nav/ground.cpp): strips
 * 1.0 wide at heights 0.1 k, 0.2 apart (less than a voxel, so the mesh
 * covers the seams). A point snapped anywhere gets the height of the
 * strip nearest on x/z when one is within a cell size: inside a strip its
 * own, in a seam the nearer side's. The reference is the strips' formula;
 * random points over the level, both inside and in seams, all must agree. */
START_TEST(navmesh_ground_height_in_seams) {
    enum { STRIPS = 12 };
    char text[4096];
    size_t len = 0;
    for (int k = 0; k < STRIPS; k++) {
        float x0 = 1.2f * (float)k, x1 = x0 + 1.0f, y = 0.1f * (float)k;
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "v %g %g 0\nv %g %g 10\nv %g %g 10\nv %g %g 0\nf %d %d %d %d\n", x0,
                                y, x0, y, x1, y, x1, y, 4 * k + 1, 4 * k + 2, 4 * k + 3, 4 * k + 4);
    }
    pf_obj obj;
    pf_nav_error err;
    ck_assert_int_eq(parse(text, &obj, &err), PF_OK);
    pf_nav_geom geom = pf_obj_geom(&obj);
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.geom = &geom;
    in.config = pf_nav_default_config();
    pf_navmesh *nm = NULL;
    ck_assert_int_eq(pf_nav_build(&in, NULL, &par_runner, &nm, &err), PF_OK);
    pf_nav_query *q = make_query();
    const float tol = in.config.cell_size;
    uint64_t rng = 12345;
    int tested = 0, in_seams = 0, wrong = 0;
    for (int i = 0; i < 2000; i++) {
        float p[3] = {2.0f + (float)tu_below(&rng, 100000) / 10000.0f, 0.5f,
                      2.0f + (float)tu_below(&rng, 60000) / 10000.0f};
        float sn[3];
        if (pf_nav_nearest(q, nm, p, NULL, sn) != PF_OK) continue;
        /* The strip nearest on x, and how far. */
        int best = -1;
        float bd = 1e9f, second = 1e9f;
        for (int k = 0; k < STRIPS; k++) {
            float x0 = 1.2f * (float)k, x1 = x0 + 1.0f;
            float d = sn[0] < x0 ? x0 - sn[0] : sn[0] > x1 ? sn[0] - x1 : 0;
            if (d < bd) {
                second = bd;
                bd = d;
                best = k;
            } else if (d < second) {
                second = d;
            }
        }
        if (bd > tol || second - bd < 1e-3f) continue; /* no ground, or a tie */
        tested++;
        in_seams += bd > 0;
        if (fabsf(sn[1] - 0.1f * (float)best) > 1e-4f) wrong++;
    }
    ck_assert_int_eq(wrong, 0);
    ck_assert_int_gt(tested, 1500);
    ck_assert_int_gt(in_seams, 100);
    pf_nav_query_destroy(q);
    pf_navmesh_release(nm);
    pf_obj_free(&obj);
}
END_TEST

/* ---- obstacles and areas ---- */

/* A room with two doors in its top wall; the goal is above the wall. */
static const char *two_doors[] = {
    "..................", /* 0 */
    "..................", /* 1 */
    "###.##########.###", /* 2: doors at x = 3 and x = 14 */
    "..................", /* 3 */
    "..................", /* 4 */
    "..................", /* 5 */
};

static pf_nav_obstacle box_obstacle(const char *id, float x0, float z0, float x1, float z1) {
    pf_nav_obstacle o;
    memset(&o, 0, sizeof o);
    snprintf(o.id, sizeof o.id, "%s", id);
    o.shape = PF_NAV_BOX;
    o.bmin[0] = x0;
    o.bmin[1] = -1;
    o.bmin[2] = z0;
    o.bmax[0] = x1;
    o.bmax[1] = 2;
    o.bmax[2] = z1;
    return o;
}

static pf_navmesh *apply_ok(const pf_navmesh *prev, const pf_nav_change *ch) {
    pf_navmesh *next = NULL;
    pf_nav_error err;
    pf_status st = pf_nav_apply(prev, ch, NULL, &par_runner, &next, &err);
    ck_assert_msg(st == PF_OK, "apply: %s: %s", err.field, err.message);
    return next;
}

START_TEST(navmesh_obstacles_block_and_removal_restores) {
    pf_grid *g = tu_grid_from_ascii(two_doors, 6, 8);
    pf_nav_config cfg = pf_nav_default_grid_config();
    cfg.tile_size = 16; /* several tiles */
    pf_navmesh *v0 = build_grid(g, &cfg);
    pf_nav_query *q = make_query();
    float s[3] = {4.5f, 0, 4.5f}, t[3] = {4.5f, 0, 0.5f};
    pf_nav_path p;
    const char *which;
    ck_assert_int_eq(find_path(q, v0, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
    ck_assert(!p.partial);
    double len0 = p.length;
    uint32_t n0 = p.npoints;
    float pts0[3 * 64];
    memcpy(pts0, p.points, n0 * 3 * sizeof(float));
    ck_assert(len0 < 6);

    /* A crate in the near door: round through the far one. */
    pf_nav_obstacle crate = box_obstacle("crate", 3.0f, 2.0f, 4.0f, 3.0f);
    pf_nav_change ch;
    memset(&ch, 0, sizeof ch);
    ch.put = &crate;
    ch.nput = 1;
    pf_navmesh *v1 = apply_ok(v0, &ch);
    pf_nav_info info;
    pf_navmesh_info(v1, &info);
    ck_assert_uint_eq(info.obstacles, 1);
    ck_assert_uint_le(info.rebuilt_tiles, 4);
    ck_assert_uint_eq(pf_navmesh_generation(v1), 1);
    ck_assert_ptr_eq(pf_navmesh_lineage(v1), pf_navmesh_lineage(v0));
    ck_assert_int_eq(find_path(q, v1, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
    ck_assert(!p.partial);
    check_path_on_mesh(q, v1, &p, "round the crate");
    ck_assert(p.length > len0 + 10);
    ck_assert(path_avoids(&p, 2.9f, 1.9f, 4.1f, 3.1f));

    /* A cylinder in the far door too: nothing goes through, the path is
     * partial and ends on the room's side of the wall. */
    pf_nav_obstacle barrel;
    memset(&barrel, 0, sizeof barrel);
    snprintf(barrel.id, sizeof barrel.id, "barrel");
    barrel.shape = PF_NAV_CYLINDER;
    barrel.pos[0] = 14.5f;
    barrel.pos[1] = -0.5f;
    barrel.pos[2] = 2.5f;
    barrel.radius = 0.4f;
    barrel.height = 2;
    ch.put = &barrel;
    pf_navmesh *v2 = apply_ok(v1, &ch);
    ck_assert_int_eq(find_path(q, v2, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
    ck_assert(p.partial);
    ck_assert(p.goal[2] > 2.5f);
    /* The older versions still answer as before (immutable). */
    ck_assert_int_eq(find_path(q, v0, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
    ck_assert(!p.partial && fabs(p.length - len0) < 1e-6);

    /* Remove both: the very same path as at the start. */
    const char *ids[] = {"crate", "barrel"};
    memset(&ch, 0, sizeof ch);
    ch.remove = ids;
    ch.nremove = 2;
    pf_navmesh *v3 = apply_ok(v2, &ch);
    pf_navmesh_info(v3, &info);
    ck_assert_uint_eq(info.obstacles, 0);
    for (int algo = 0; algo < 2; algo++) {
        pf_nav_path a, b;
        ck_assert_int_eq(find_path(q, v0, s, t, NULL, (pf_nav_algorithm)algo, &a, &which), PF_OK);
        float pa[3 * 64];
        uint32_t na = a.npoints;
        memcpy(pa, a.points, na * 3 * sizeof(float));
        ck_assert_int_eq(find_path(q, v3, s, t, NULL, (pf_nav_algorithm)algo, &b, &which), PF_OK);
        ck_assert_uint_eq(na, b.npoints);
        for (uint32_t i = 0; i < 3 * na; i++) ck_assert(fabsf(pa[i] - b.points[i]) < 1e-5f);
    }
    pf_navmesh_release(v0);
    pf_navmesh_release(v1);
    pf_navmesh_release(v2);
    pf_navmesh_release(v3);
    pf_nav_query_destroy(q);
    pf_grid_destroy(g);
}
END_TEST

/* Putting an existing id moves the obstacle: the old place opens again. */
START_TEST(navmesh_obstacle_put_moves) {
    pf_grid *g = tu_grid_from_ascii(two_doors, 6, 8);
    pf_navmesh *v0 = build_grid(g, NULL);
    pf_nav_query *q = make_query();
    pf_nav_obstacle crate = box_obstacle("crate", 3.0f, 2.0f, 4.0f, 3.0f);
    pf_nav_change ch;
    memset(&ch, 0, sizeof ch);
    ch.put = &crate;
    ch.nput = 1;
    pf_navmesh *v1 = apply_ok(v0, &ch);
    crate = box_obstacle("crate", 14.0f, 2.0f, 15.0f, 3.0f);
    pf_navmesh *v2 = apply_ok(v1, &ch);
    ck_assert_uint_eq(pf_navmesh_obstacle_count(v2), 1);
    ck_assert(pf_navmesh_obstacle(v2, 0)->bmin[0] == 14.0f);
    ck_assert_ptr_null(pf_navmesh_obstacle(v2, 1));
    float near_door[3] = {3.5f, 0, 4.5f}, above[3] = {3.5f, 0, 0.5f},
          far_door[3] = {14.5f, 0, 4.5f};
    pf_nav_path p;
    const char *which;
    ck_assert_int_eq(find_path(q, v2, near_door, above, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
    ck_assert(!p.partial && p.length < 4.5);
    float above_far[3] = {14.5f, 0, 0.5f};
    ck_assert_int_eq(find_path(q, v2, far_door, above_far, NULL, PF_NAV_POLYANYA, &p, &which),
                     PF_OK);
    ck_assert(!p.partial && p.length > 8);
    pf_navmesh_release(v0);
    pf_navmesh_release(v1);
    pf_navmesh_release(v2);
    pf_nav_query_destroy(q);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(navmesh_apply_errors_name_fields) {
    pf_grid *g = tu_grid_from_ascii(two_doors, 6, 8);
    pf_navmesh *v0 = build_grid(g, NULL);
    pf_nav_obstacle ok = box_obstacle("ok", 1, 1, 2, 2);
    pf_nav_obstacle bad[6];
    bad[0] = box_obstacle("bad id!", 1, 1, 2, 2);
    bad[1] = box_obstacle("flat", 1, 1, 1, 2);
    bad[2] = box_obstacle("nan", NAN, 1, 2, 2);
    bad[3] = ok;
    bad[3].shape = PF_NAV_CYLINDER;
    bad[3].radius = 0;
    bad[3].height = 1;
    bad[4] = ok;
    bad[4].shape = PF_NAV_CYLINDER;
    bad[4].radius = 1;
    bad[4].height = -1;
    bad[5] = ok;
    bad[5].shape = 7;
    const char *fields[] = {"obstacles[1].id",     "obstacles[1].box",    "obstacles[1].box",
                            "obstacles[1].radius", "obstacles[1].height", "obstacles[1]"};
    for (int i = 0; i < 6; i++) {
        pf_nav_obstacle two[2] = {ok, bad[i]};
        pf_nav_change ch;
        memset(&ch, 0, sizeof ch);
        ch.put = two;
        ch.nput = 2;
        pf_navmesh *next = NULL;
        pf_nav_error err;
        ck_assert_int_eq(pf_nav_apply(v0, &ch, NULL, NULL, &next, &err), PF_EINVAL);
        ck_assert_ptr_null(next);
        ck_assert_msg(strcmp(err.field, fields[i]) == 0, "case %d: %s", i, err.field);
    }
    pf_nav_change ch;
    memset(&ch, 0, sizeof ch);
    pf_navmesh *next = NULL;
    pf_nav_error err;
    /* Twice in one change. */
    pf_nav_obstacle dup[2] = {ok, ok};
    ch.put = dup;
    ch.nput = 2;
    ck_assert_int_eq(pf_nav_apply(v0, &ch, NULL, NULL, &next, &err), PF_EINVAL);
    ck_assert_str_eq(err.field, "obstacles[1].id");
    /* Unknown remove. */
    const char *gone[] = {"nope"};
    memset(&ch, 0, sizeof ch);
    ch.remove = gone;
    ch.nremove = 1;
    ck_assert_int_eq(pf_nav_apply(v0, &ch, NULL, NULL, &next, &err), PF_EINVAL);
    ck_assert_str_eq(err.field, "remove[0]");
    /* Unknown area, bad cost. */
    pf_nav_area_change ac = {"nope", true, false, false, 0};
    memset(&ch, 0, sizeof ch);
    ch.areas = &ac;
    ch.nareas = 1;
    ck_assert_int_eq(pf_nav_apply(v0, &ch, NULL, NULL, &next, &err), PF_EINVAL);
    ck_assert_str_eq(err.field, "areas[0].id");
    /* The obstacle limit. */
    pf_nav_obstacle many[3] = {box_obstacle("a", 1, 1, 2, 2), box_obstacle("b", 1, 1, 2, 2),
                               box_obstacle("c", 1, 1, 2, 2)};
    pf_nav_limits lim = pf_nav_default_limits();
    lim.max_obstacles = 2;
    memset(&ch, 0, sizeof ch);
    ch.put = many;
    ch.nput = 3;
    ck_assert_int_eq(pf_nav_apply(v0, &ch, &lim, NULL, &next, &err), PF_ELIMIT);
    ck_assert_str_eq(err.field, "limits.max_obstacles");
    ck_assert_uint_eq(pf_navmesh_obstacle_count(v0), 0);
    pf_navmesh_release(v0);
    pf_grid_destroy(g);
}
END_TEST

/* A grid door becomes an area: closing it reroutes, opening restores; an
 * area cost change reroutes without rebuilding tiles. */
START_TEST(navmesh_area_door_toggles_and_costs) {
    pf_grid *g = tu_grid_from_ascii(two_doors, 6, 8);
    pf_point cells[] = {{3, 2}};
    int32_t di = -1;
    ck_assert_int_eq(pf_grid_add_door(g, "gate", cells, 1, NULL, 0, true, &di), PF_OK);
    pf_navmesh *v0 = build_grid(g, NULL);
    ck_assert_uint_eq(pf_navmesh_area_count(v0), 1);
    pf_nav_area_state as;
    ck_assert(pf_navmesh_area(v0, 0, &as));
    ck_assert_str_eq(as.name, "gate");
    ck_assert(as.enabled && as.cost == 1.0f && as.nboxes == 1);
    ck_assert(!pf_navmesh_area(v0, 1, &as));
    pf_nav_query *q = make_query();
    float s[3] = {4.5f, 0, 4.5f}, t[3] = {4.5f, 0, 0.5f};
    pf_nav_path p;
    const char *which;
    ck_assert_int_eq(find_path(q, v0, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
    double open_len = p.length;
    ck_assert(!p.partial && open_len < 6);

    pf_nav_area_change ac = {"gate", true, false, false, 0};
    pf_nav_change ch;
    memset(&ch, 0, sizeof ch);
    ch.areas = &ac;
    ch.nareas = 1;
    pf_navmesh *v1 = apply_ok(v0, &ch);
    pf_nav_info info;
    pf_navmesh_info(v1, &info);
    ck_assert_uint_ge(info.rebuilt_tiles, 1);
    ck_assert(pf_navmesh_area(v1, 0, &as) && !as.enabled);
    for (int algo = 0; algo < 2; algo++) {
        ck_assert_int_eq(find_path(q, v1, s, t, NULL, (pf_nav_algorithm)algo, &p, &which), PF_OK);
        ck_assert(!p.partial && p.length > open_len + 10);
        check_path_on_mesh(q, v1, &p, "door closed");
    }
    /* A point in the closed door is off the (enabled) mesh. */
    float in_door[3] = {3.5f, 0, 2.5f}, small[3] = {0.3f, 1, 0.3f}, snapped[3];
    ck_assert_int_eq(pf_nav_nearest(q, v1, in_door, small, snapped), PF_EBLOCKED);

    /* Open again, but make the door cost 40: the far door is cheaper. */
    pf_nav_area_change ac2 = {"gate", true, true, true, 40.0f};
    ch.areas = &ac2;
    pf_navmesh *v2 = apply_ok(v1, &ch);
    ck_assert_int_eq(find_path(q, v2, s, t, NULL, PF_NAV_POLYANYA, &p, &which), PF_OK);
    ck_assert(!p.partial);
    /* Detour weighs area costs; polyanya measures length, then the funnel
     * reports the cost along the corridor it found. */
    ck_assert(p.cost >= p.length);
    ck_assert_int_eq(find_path(q, v2, s, t, NULL, PF_NAV_DETOUR, &p, &which), PF_OK);
    ck_assert(!p.partial && p.length > open_len + 10);
    ck_assert(fabs(p.cost - p.length) < 1e-3);
    /* A cost change alone rebuilds nothing. */
    pf_nav_area_change ac3 = {"gate", false, false, true, 2.0f};
    ch.areas = &ac3;
    pf_navmesh *v3 = apply_ok(v2, &ch);
    pf_navmesh_info(v3, &info);
    ck_assert_uint_eq(info.rebuilt_tiles, 0);
    pf_navmesh_release(v0);
    pf_navmesh_release(v1);
    pf_navmesh_release(v2);
    pf_navmesh_release(v3);
    pf_nav_query_destroy(q);
    pf_grid_destroy(g);
}
END_TEST

/* ---- corridors ---- */

START_TEST(navmesh_corridor_follows_and_replans) {
    pf_grid *g = tu_grid_from_ascii(two_doors, 6, 8);
    pf_navmesh *v0 = build_grid(g, NULL);
    pf_nav_query *q = make_query();
    pf_nav_corridor *c = NULL;
    ck_assert_int_eq(pf_nav_corridor_create(4096, &c), PF_OK);
    float s[3] = {4.5f, 0, 4.5f}, t[3] = {4.5f, 0, 0.5f};
    pf_nav_path p;
    const char *which;
    bool replanned;
    ck_assert_int_eq(pf_nav_corridor_plan(c, q, v0, s, t, NULL, PF_NAV_POLYANYA, &p, &which),
                     PF_OK);
    ck_assert(!p.partial);
    double len0 = p.length;
    /* A small step along the path: followed, not replanned, shorter. */
    float step[3] = {4.3f, 0, 4.0f};
    ck_assert_int_eq(pf_nav_corridor_move(c, q, v0, step, 0.3f, &p, &replanned, &which), PF_OK);
    ck_assert(!replanned);
    ck_assert(p.length < len0);
    check_path_on_mesh(q, v0, &p, "corridor step");
    /* A long walk across the open room is still a move along the surface
     * (Detour's moveAlongSurface finds it). */
    float across[3] = {9.5f, 0, 5.5f};
    ck_assert_int_eq(pf_nav_corridor_move(c, q, v0, across, 0.3f, &p, &replanned, &which), PF_OK);
    ck_assert(!replanned);
    ck_assert(fabsf(p.start[0] - 9.5f) < 0.01f);
    check_path_on_mesh(q, v0, &p, "corridor across");
    /* A teleport through the wall, far from both doors: replanned there. */
    float far[3] = {9.5f, 0, 0.5f};
    ck_assert_int_eq(pf_nav_corridor_move(c, q, v0, far, 0.3f, &p, &replanned, &which), PF_OK);
    ck_assert(replanned);
    ck_assert(fabsf(p.start[0] - 9.5f) < 0.01f && fabsf(p.start[2] - 0.5f) < 0.01f);
    /* A new version (a crate in the near door) replans at once. */
    pf_nav_obstacle crate = box_obstacle("crate", 3.0f, 2.0f, 4.0f, 3.0f);
    pf_nav_change ch;
    memset(&ch, 0, sizeof ch);
    ch.put = &crate;
    ch.nput = 1;
    pf_navmesh *v1 = apply_ok(v0, &ch);
    ck_assert_int_eq(pf_nav_corridor_move(c, q, v0, s, 0.3f, &p, &replanned, &which), PF_OK);
    ck_assert_int_eq(pf_nav_corridor_move(c, q, v1, s, 0.3f, &p, &replanned, &which), PF_OK);
    ck_assert(replanned && !p.partial && p.length > len0 + 10);
    float pos[3], goal[3];
    pf_nav_corridor_position(c, pos, goal);
    ck_assert(goal[0] == t[0] && goal[2] == t[2]);
    /* The version stays alive while the corridor holds it. */
    pf_navmesh_release(v1);
    ck_assert_int_eq(pf_nav_corridor_move(c, q, v1, s, 0.3f, &p, &replanned, &which), PF_OK);
    ck_assert(!replanned);
    float bad[3] = {NAN, 0, 0};
    ck_assert_int_eq(pf_nav_corridor_move(c, q, v1, bad, 0.3f, &p, &replanned, &which), PF_ERANGE);
    ck_assert_str_eq(which, "position");
    pf_nav_corridor_destroy(c);
    pf_nav_corridor_destroy(NULL);
    pf_navmesh_release(v0);
    pf_nav_query_destroy(q);
    pf_grid_destroy(g);
}
END_TEST

/* ---- crowds ---- */

static double crowd_max_overlap(const pf_nav_crowd *c, const int32_t *ids, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++) {
        pf_nav_agent a;
        ck_assert(pf_nav_crowd_agent(c, ids[i], &a));
        for (int j = i + 1; j < n; j++) {
            pf_nav_agent b;
            pf_nav_crowd_agent(c, ids[j], &b);
            double d = hypot(a.pos[0] - b.pos[0], a.pos[2] - b.pos[2]);
            double o = a.radius + b.radius - d;
            if (o > worst) worst = o;
        }
    }
    return worst;
}

/* 200 agents in two blocks swap sides through each other on an open floor:
 * every one reaches its target (within two radii; then it stops, as a unit
 * would), and no two ever overlap by more than a quarter of a radius.
 * DetourCrowd's sampled velocity obstacles and collision resolution are
 * local: over seeds 3..16 the worst overlap was 0.004..0.05 (radius 0.3).
 * With CrowdTool's collision range of 12 radii instead of pathd's 8 agents
 * walk through each other here (overlaps near 0.6): see pf_nav_crowd_add. */
START_TEST(navmesh_crowd_200_cross_without_overlap) {
    pf_grid *g = NULL;
    ck_assert_int_eq(pf_grid_create(44, 44, NULL, &g), PF_OK);
    pf_nav_config cfg = pf_nav_default_grid_config();
    cfg.agent_radius = 0.3f;
    cfg.cell_size = 0.15f;
    pf_navmesh *nm = build_grid(g, &cfg);
    pf_nav_crowd *c = NULL;
    ck_assert_int_eq(pf_nav_crowd_create(nm, 200, &c), PF_OK);
    pf_nav_agent_params ap = pf_nav_default_agent(nm);
    ck_assert(ap.radius == 0.3f);
    int32_t ids[200];
    float targets[200][3];
    uint64_t st = tu_seed("navmesh_crowd_200_cross_without_overlap", 3);
    for (int i = 0; i < 200; i++) {
        /* Two blocks of 5 x 20, rows jittered (perfectly mirrored pairs
         * would meet head on, a degenerate case for velocity obstacles). */
        int row = i % 20, col = (i / 20) % 5, side = i / 100;
        float x = side ? 40.0f - (float)col * 1.5f : 4.0f + (float)col * 1.5f;
        float z = 3.0f + (float)row * 2.0f + 0.1f * (float)((int)tu_below(&st, 7) - 3);
        float pos[3] = {x, 0, z};
        /* The other side, same row, through the other group, into a block
         * with room between the slots; the leaders take the far slots. */
        targets[i][0] = side ? 12.0f - 2.0f * (float)col : 32.0f + 2.0f * (float)col;
        targets[i][1] = 0;
        targets[i][2] = z;
        const char *which;
        ck_assert_int_eq(pf_nav_crowd_add(c, pos, targets[i], &ap, &ids[i], &which), PF_OK);
    }
    ck_assert_uint_eq(pf_nav_crowd_count(c), 200);
    double worst = 0;
    int arrived = 0, steps = 0;
    bool done[200] = {false};
    for (steps = 0; steps < 1500 && arrived < 200; steps++) {
        ck_assert_int_eq(pf_nav_crowd_step(c, 0.05f, NULL), PF_OK);
        double o = crowd_max_overlap(c, ids, 200);
        if (o > worst) worst = o;
        /* An agent that has arrived stops (as a game unit would): with no
         * target it only yields to the agents still passing. */
        for (int i = 0; i < 200; i++) {
            pf_nav_agent a;
            pf_nav_crowd_agent(c, ids[i], &a);
            if (!done[i] && hypot(a.pos[0] - targets[i][0], a.pos[2] - targets[i][2]) < 0.6) {
                done[i] = true;
                arrived++;
                ck_assert_int_eq(pf_nav_crowd_set_target(c, ids[i], NULL), PF_OK);
            }
        }
    }
    fprintf(stderr,
            "navmesh_crowd_200_cross_without_overlap: %d arrived after %d steps (%.1f s), "
            "worst overlap %.3f\n",
            arrived, steps, pf_nav_crowd_time(c), worst);
    for (int i = 0; i < 200 && arrived < 200; i++) {
        pf_nav_agent a;
        pf_nav_crowd_agent(c, ids[i], &a);
        if (!done[i])
            fprintf(stderr, "  agent %d at (%.2f, %.2f) v (%.2f, %.2f) target (%.2f, %.2f) %s\n", i,
                    a.pos[0], a.pos[2], a.vel[0], a.vel[2], targets[i][0], targets[i][2],
                    pf_nav_agent_state_str(a.state));
    }
    ck_assert_int_eq(arrived, 200);
    ck_assert_msg(worst <= 0.25 * ap.radius, "overlap %.3f", worst);
    pf_nav_crowd_destroy(c);
    pf_navmesh_release(nm);
    pf_grid_destroy(g);
}
END_TEST

/* A crowd follows new versions: an obstacle put across the agents' way is
 * avoided (no agent ends inside it) and the crowd's mesh matches the
 * version it stepped on. */
START_TEST(navmesh_crowd_follows_new_obstacles) {
    pf_grid *g = tu_grid_from_ascii(two_doors, 6, 8);
    pf_navmesh *v0 = build_grid(g, NULL);
    pf_nav_crowd *c = NULL;
    ck_assert_int_eq(pf_nav_crowd_create(v0, 8, &c), PF_OK);
    pf_nav_agent_params ap = pf_nav_default_agent(v0);
    float pos[3] = {4.5f, 0, 4.5f}, target[3] = {4.5f, 0, 0.5f};
    int32_t id;
    const char *which;
    ck_assert_int_eq(pf_nav_crowd_add(c, pos, target, &ap, &id, &which), PF_OK);
    pf_nav_obstacle crate = box_obstacle("crate", 3.0f, 2.0f, 4.0f, 3.0f);
    pf_nav_change ch;
    memset(&ch, 0, sizeof ch);
    ch.put = &crate;
    ch.nput = 1;
    pf_navmesh *v1 = apply_ok(v0, &ch);
    pf_nav_agent a;
    bool through_near_door = false;
    for (int i = 0; i < 400; i++) {
        ck_assert_int_eq(pf_nav_crowd_step(c, 0.05f, v1), PF_OK);
        ck_assert(pf_nav_crowd_agent(c, id, &a));
        if (a.pos[0] < 5.0f && a.pos[2] > 1.9f && a.pos[2] < 3.1f) through_near_door = true;
    }
    ck_assert_ptr_eq(pf_nav_crowd_version(c), v1);
    ck_assert(!through_near_door);
    ck_assert_msg(hypot(a.pos[0] - target[0], a.pos[2] - target[2]) < 0.5, "at (%.2f, %.2f) %s",
                  a.pos[0], a.pos[2], pf_nav_agent_state_str(a.state));
    ck_assert_int_eq(a.state, PF_NAV_AGENT_ARRIVED);
    /* A version of another build is refused. */
    pf_navmesh *other = build_grid(g, NULL);
    ck_assert_int_eq(pf_nav_crowd_step(c, 0.05f, other), PF_EINVAL);
    pf_navmesh_release(other);
    pf_nav_crowd_destroy(c);
    pf_navmesh_release(v0);
    pf_navmesh_release(v1);
    pf_grid_destroy(g);
}
END_TEST

/* Crowd agents with long paths through a maze: DetourCrowd hands its
 * corridors paths of exactly its 256-polygon limit, which Debian's Detour
 * asserts against (an abort without pathd's hook); corridors of the full
 * length are cut one short. */
START_TEST(navmesh_crowd_long_paths_do_not_abort) {
    uint64_t st = tu_seed("navmesh_crowd_long_paths_do_not_abort", 11);
    pf_grid *g = tu_perfect_maze(&st, 40, 40, 8, false);
    pf_navmesh *nm = build_grid(g, NULL);
    pf_nav_crowd *c = NULL;
    ck_assert_int_eq(pf_nav_crowd_create(nm, 16, &c), PF_OK);
    pf_nav_agent_params ap = pf_nav_default_agent(nm);
    for (int i = 0; i < 16; i++) {
        pf_point a, b;
        tu_random_walkable(&st, g, &a);
        tu_random_walkable(&st, g, &b);
        float pa[3], pb[3];
        cell_centre(a, pa);
        cell_centre(b, pb);
        int32_t id;
        const char *which;
        ck_assert_int_eq(pf_nav_crowd_add(c, pa, pb, &ap, &id, &which), PF_OK);
    }
    for (int k = 0; k < 200; k++) ck_assert_int_eq(pf_nav_crowd_step(c, 0.1f, NULL), PF_OK);
    ck_assert_uint_gt(pf_nav_tolerated_asserts(), 0); /* the case did come up */
    /* A corridor planned through the whole maze holds at most its cap. */
    pf_nav_corridor *cor = NULL;
    pf_nav_query *q = make_query();
    ck_assert_int_eq(pf_nav_corridor_create(16, &cor), PF_OK);
    float s[3] = {1.5f, 0, 1.5f}, t[3] = {79.5f, 0, 79.5f};
    pf_nav_path p;
    const char *which;
    ck_assert_int_eq(pf_nav_corridor_plan(cor, q, nm, s, t, NULL, PF_NAV_POLYANYA, &p, &which),
                     PF_OK);
    ck_assert(p.partial && p.polygons == 15);
    pf_nav_corridor_destroy(cor);
    pf_nav_query_destroy(q);
    pf_nav_crowd_destroy(c);
    pf_navmesh_release(nm);
    pf_grid_destroy(g);
}
END_TEST

START_TEST(navmesh_crowd_limits_and_errors) {
    pf_grid *g = tu_grid_from_ascii(two_doors, 6, 8);
    pf_navmesh *nm = build_grid(g, NULL);
    pf_nav_crowd *c = NULL;
    ck_assert_int_eq(pf_nav_crowd_create(nm, 0, &c), PF_ERANGE);
    ck_assert_int_eq(pf_nav_crowd_create(nm, 2, &c), PF_OK);
    ck_assert_uint_eq(pf_nav_crowd_capacity(c), 2);
    pf_nav_agent_params ap = pf_nav_default_agent(nm);
    float pos[3] = {1.5f, 0, 4.5f}, off[3] = {50, 0, 50};
    int32_t id;
    const char *which = NULL;
    pf_nav_agent_params big = ap;
    big.radius = ap.radius * 2;
    ck_assert_int_eq(pf_nav_crowd_add(c, pos, NULL, &big, &id, &which), PF_EINVAL);
    ck_assert_str_eq(which, "radius");
    pf_nav_agent_params slow = ap;
    slow.max_speed = 0;
    ck_assert_int_eq(pf_nav_crowd_add(c, pos, NULL, &slow, &id, &which), PF_EINVAL);
    ck_assert_str_eq(which, "max_speed");
    ck_assert_int_eq(pf_nav_crowd_add(c, off, NULL, &ap, &id, &which), PF_EBLOCKED);
    ck_assert_str_eq(which, "position");
    ck_assert_int_eq(pf_nav_crowd_add(c, pos, off, &ap, &id, &which), PF_EBLOCKED);
    ck_assert_str_eq(which, "target");
    ck_assert_uint_eq(pf_nav_crowd_count(c), 0);
    int32_t a, b;
    ck_assert_int_eq(pf_nav_crowd_add(c, pos, NULL, &ap, &a, &which), PF_OK);
    ck_assert_int_eq(pf_nav_crowd_add(c, pos, NULL, &ap, &b, &which), PF_OK);
    ck_assert_int_eq(pf_nav_crowd_add(c, pos, NULL, &ap, &id, &which), PF_ELIMIT);
    pf_nav_agent ag;
    ck_assert(pf_nav_crowd_agent(c, a, &ag) && ag.state == PF_NAV_AGENT_IDLE);
    ck_assert_int_eq(pf_nav_crowd_set_target(c, 99, pos), PF_ERANGE);
    ck_assert_int_eq(pf_nav_crowd_set_target(c, a, off), PF_EBLOCKED);
    ck_assert_int_eq(pf_nav_crowd_remove(c, a), PF_OK);
    ck_assert_int_eq(pf_nav_crowd_remove(c, a), PF_ERANGE);
    ck_assert(!pf_nav_crowd_agent(c, a, &ag));
    ck_assert_int_eq(pf_nav_crowd_step(c, 0, NULL), PF_ERANGE);
    ck_assert_int_eq(pf_nav_crowd_step(c, 2, NULL), PF_ERANGE);
    ck_assert_uint_gt(pf_nav_crowd_memory(c), 0);
    pf_nav_crowd_destroy(c);
    pf_nav_crowd_destroy(NULL);
    pf_navmesh_release(nm);
    pf_grid_destroy(g);
}
END_TEST

/* ---- concurrency ---- */

typedef struct reader {
    const pf_navmesh *nm;
    const float (*pairs)[6];
    const double *want;
    int n, rounds, bad;
} reader;

static void *reader_thread(void *arg) {
    reader *r = arg;
    pf_nav_query *q = NULL;
    if (pf_nav_query_create(65535, &q) != PF_OK) return NULL;
    for (int k = 0; k < r->rounds; k++)
        for (int i = 0; i < r->n; i++) {
            pf_nav_path p;
            const char *which;
            if (pf_nav_find_path(q, r->nm, r->pairs[i], r->pairs[i] + 3, NULL,
                                 (pf_nav_algorithm)(i % 2), &p, &which) != PF_OK ||
                fabs(p.length - r->want[i]) > 1e-6)
                r->bad++;
        }
    pf_nav_query_destroy(q);
    return NULL;
}

/* Two threads query one version (polyanya builds its view on the first
 * search, racing) while the main thread makes new versions from it: the
 * answers on the old version never change. */
START_TEST(navmesh_concurrent_queries_during_changes) {
    uint64_t st = tu_seed("navmesh_concurrent_queries_during_changes", 5);
    tu_map_opts o = {50, 60, 0.25, false, false, 8, 0};
    pf_grid *g = tu_random_grid(&st, &o);
    pf_navmesh *nm = build_grid(g, NULL);
    enum { N = 24 };
    float pairs[N][6];
    double want[N];
    pf_navmesh *copy = build_grid(g, NULL); /* the reference answers, on a twin */
    pf_nav_query *q = make_query();
    for (int i = 0; i < N; i++) {
        pf_point a, b;
        tu_random_walkable(&st, g, &a);
        tu_random_walkable(&st, g, &b);
        cell_centre(a, pairs[i]);
        cell_centre(b, pairs[i] + 3);
        pf_nav_path p;
        const char *which;
        ck_assert_int_eq(
            find_path(q, copy, pairs[i], pairs[i] + 3, NULL, (pf_nav_algorithm)(i % 2), &p, &which),
            PF_OK);
        want[i] = p.length;
    }
    reader r[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        r[i] = (reader){nm, (const float(*)[6])pairs, want, N, 4, 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, reader_thread, &r[i]), 0);
    }
    for (int k = 0; k < 6; k++) {
        pf_nav_obstacle ob = box_obstacle("moving", (float)(5 + 5 * k), 10, (float)(7 + 5 * k), 12);
        pf_nav_change ch;
        memset(&ch, 0, sizeof ch);
        ch.put = &ob;
        ch.nput = 1;
        pf_navmesh *next = NULL;
        pf_nav_error err;
        ck_assert_int_eq(pf_nav_apply(nm, &ch, NULL, NULL, &next, &err), PF_OK);
        pf_navmesh_release(next);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(r[i].bad, 0);
    }
    pf_nav_query_destroy(q);
    pf_navmesh_release(copy);
    pf_navmesh_release(nm);
    pf_grid_destroy(g);
}
END_TEST

TU_SUITE(navmesh) {
    Suite *s = suite_create("navmesh");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, navmesh_obj_parses_faces_and_forms);
    tcase_add_test(tc, navmesh_obj_rejects_malformed);
    tcase_add_test(tc, navmesh_obj_limits_named);
    tcase_add_test(tc, navmesh_obj_random_input_bounded);
    tcase_add_test(tc, navmesh_build_rejects_bad_settings);
    tcase_add_test(tc, navmesh_build_limits_named);
    tcase_add_test(tc, navmesh_build_grid_walls_refused);
    tcase_add_test(tc, navmesh_grid_cell_geometry);
    tcase_add_test(tc, navmesh_grid_corner_contact_is_apart);
    tcase_add_test(tc, navmesh_build_parallel_matches_sequential);
    tcase_add_test(tc, navmesh_obj_floor_with_pillar);
    tcase_add_test(tc, navmesh_ground_height_in_seams);
    tcase_add_test(tc, navmesh_obstacles_block_and_removal_restores);
    tcase_add_test(tc, navmesh_obstacle_put_moves);
    tcase_add_test(tc, navmesh_apply_errors_name_fields);
    tcase_add_test(tc, navmesh_area_door_toggles_and_costs);
    tcase_add_test(tc, navmesh_corridor_follows_and_replans);
    tcase_add_test(tc, navmesh_crowd_limits_and_errors);
    tcase_add_test(tc, navmesh_crowd_follows_new_obstacles);
    tcase_add_test(tc, navmesh_concurrent_queries_during_changes);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("slow");
    tcase_set_timeout(slow, 900);
    tcase_add_test(slow, navmesh_grid_random_reachability_and_length);
    tcase_add_test(slow, navmesh_grid_agent_width_reachability);
    tcase_add_test(slow, navmesh_polyanya_equals_reference_shortest_path);
    tcase_add_test(slow, navmesh_crowd_200_cross_without_overlap);
    tcase_add_test(slow, navmesh_crowd_long_paths_do_not_abort);
    tcase_add_test(slow, navmesh_movingai_scenarios_sampled);
    suite_add_tcase(s, slow);
    return s;
}
