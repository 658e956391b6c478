/* test_routes_mesh.c -- GET /v1/maps/{id}/mesh (server/routes_mesh.c over
 * proto/mesh_json.c and nav/navexport.cpp) against a real pathd: a
 * generated two-floor level with a ramp, checked against what the test
 * itself wrote and against plain references written here (polygon areas
 * against their triangles', walls against shared edges found by brute
 * force); parameters and refusals; the size limit proved an upper bound on
 * what is written; PATCHed obstacles and disabled areas seen in the export.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "testutil.h"

/* ---- a generated level: floor y=0 over [0,20]^2, a deck y=3 over
 * [0,20]x[0,6] above it, and a ramp x in [8,12] from the deck's edge (z=6,
 * y=3) down to the floor (z=16, y=0). Quads as two triangles, wound so
 * their normals point up. ---- */

typedef struct obj_text {
    char *s;
    size_t len, cap;
    int nv;
    float v[512][3];
    int ntri;
    int tri[512][3];
} obj_text;

static void put_text(obj_text *o, const char *line) {
    size_t n = strlen(line);
    if (o->len + n + 1 > o->cap) {
        o->cap = (o->len + n + 1) * 2;
        o->s = realloc(o->s, o->cap);
    }
    memcpy(o->s + o->len, line, n + 1);
    o->len += n;
}

/* The level sits far from the origin, as real levels do: its numbers are
 * long, which is what the size bound must hold. */
#define OX 1234.5678f
#define OY 100.25f
#define OZ -2345.6789f

static int vert(obj_text *o, float x, float y, float z) {
    char line[96];
    x += OX;
    y += OY;
    z += OZ;
    snprintf(line, sizeof(line), "v %.4f %.4f %.4f\n", (double)x, (double)y, (double)z);
    put_text(o, line);
    o->v[o->nv][0] = x;
    o->v[o->nv][1] = y;
    o->v[o->nv][2] = z;
    return o->nv++;
}

static void tri(obj_text *o, int a, int b, int c) {
    char line[64];
    snprintf(line, sizeof(line), "f %d %d %d\n", a + 1, b + 1, c + 1);
    put_text(o, line);
    o->tri[o->ntri][0] = a;
    o->tri[o->ntri][1] = b;
    o->tri[o->ntri][2] = c;
    o->ntri++;
}

/* Quad x0..x1, z0..z1 with heights y at z0 and z1. */
static void quad(obj_text *o, float x0, float x1, float z0, float z1, float y0, float y1) {
    int a = vert(o, x0, y0, z0), b = vert(o, x0, y1, z1), c = vert(o, x1, y1, z1),
        d = vert(o, x1, y0, z0);
    tri(o, a, b, c);
    tri(o, a, c, d);
}

static obj_text level(void) {
    obj_text o;
    memset(&o, 0, sizeof(o));
    put_text(&o, "# two floors and a ramp (tests/test_routes_mesh.c)\n");
    for (int i = 0; i < 10; i++) /* the floor in 2 x 2 squares */
        for (int k = 0; k < 10; k++) quad(&o, 2.0f * i, 2.0f * i + 2, 2.0f * k, 2.0f * k + 2, 0, 0);
    quad(&o, 0, 20, 0, 6, 3, 3);
    quad(&o, 8, 12, 6, 16, 3, 0);
    return o;
}

#define LEVEL_ARGS "?tile_size=32&agent_radius=0.5"

static void put_level(const hc_server *s, const char *id, const obj_text *o) {
    char path[128];
    snprintf(path, sizeof(path), "/v1/maps/%s" LEVEL_ARGS, id);
    it_put_map(s, path + strlen("/v1/maps/"), "model/obj", o->s, 201);
}

/* ---- reading the answer ---- */

static double num_at(const cJSON *arr, int i) { return cJSON_GetArrayItem(arr, i)->valuedouble; }

/* Vertex i of a tile (its vertices, then its detail vertices). */
static void tile_vertex(const cJSON *tile, int i, double out[3]) {
    const cJSON *v = it_get(tile, "vertices"), *d = it_get(tile, "detail_vertices");
    int nv = cJSON_GetArraySize(v) / 3;
    for (int k = 0; k < 3; k++)
        out[k] = i < nv ? num_at(v, 3 * i + k) : num_at(d, 3 * (i - nv) + k);
}

/* Twice the signed area in x/z of a polygon given by its points. */
static double area2(const double (*p)[3], int n) {
    double a = 0;
    for (int i = 0; i < n; i++) {
        const double *u = p[i], *w = p[(i + 1) % n];
        a += u[0] * w[2] - w[0] * u[2];
    }
    return a;
}

/* An edge of some polygon, in world coordinates. */
typedef struct edge {
    double a[3], b[3];
    int tile, poly;
    bool wall; /* what the answer says */
} edge;

/* Whether e and f lie on one line (x/z, y close) and overlap by more than
 * a hair: the plain reference of "this edge has a neighbour". */
static bool overlaps(const edge *e, const edge *f) {
    double dx = e->b[0] - e->a[0], dz = e->b[2] - e->a[2], len = sqrt(dx * dx + dz * dz);
    double t0, t1, lo, hi;
    if (len < 1e-6) return false;
    for (int k = 0; k < 2; k++) {
        const double *p = k ? f->b : f->a;
        double dist = fabs((p[0] - e->a[0]) * dz - (p[2] - e->a[2]) * dx) / len;
        if (dist > 1e-3) return false;
    }
    t0 = ((f->a[0] - e->a[0]) * dx + (f->a[2] - e->a[2]) * dz) / len;
    t1 = ((f->b[0] - e->a[0]) * dx + (f->b[2] - e->a[2]) * dz) / len;
    lo = fmax(0, fmin(t0, t1));
    hi = fmin(len, fmax(t0, t1));
    if (hi - lo < 1e-2) return false;
    /* The same floor: heights along the overlap within a step. */
    {
        double mid = (lo + hi) / 2, ye = e->a[1] + (e->b[1] - e->a[1]) * mid / len;
        double tf = (mid - t0) / (t1 - t0), yf = f->a[1] + (f->b[1] - f->a[1]) * tf;
        return fabs(ye - yf) < 1.0;
    }
}

/* Checks one answer's tiles; returns how many polygons it has. */
static int check_tiles(const cJSON *j, bool triangles) {
    const cJSON *tile;
    int npolys = 0, nedges = 0, ti = 0, walls = 0;
    edge *edges = NULL;
    cJSON_ArrayForEach(tile, it_get(j, "tiles")) {
        const cJSON *polys = it_get(tile, "polygons"), *areas = it_get(tile, "areas"),
                    *wl = it_get(tile, "walls"), *pt = it_get(tile, "polygon_triangles"),
                    *tris = it_get(tile, "triangles"), *poly;
        int nv = cJSON_GetArraySize(it_get(tile, "vertices")) / 3, p = 0, t = 0;
        int nd = triangles ? cJSON_GetArraySize(it_get(tile, "detail_vertices")) / 3 : 0;
        ck_assert_int_eq(cJSON_GetArraySize(areas), cJSON_GetArraySize(polys));
        ck_assert_int_eq(cJSON_GetArraySize(wl), cJSON_GetArraySize(polys));
        if (!triangles) {
            ck_assert_ptr_null(cJSON_GetObjectItem(tile, "triangles"));
            ck_assert_ptr_null(cJSON_GetObjectItem(tile, "detail_vertices"));
        } else {
            ck_assert_int_eq(cJSON_GetArraySize(pt), cJSON_GetArraySize(polys));
        }
        cJSON_ArrayForEach(poly, polys) {
            int n = cJSON_GetArraySize(poly), mask = cJSON_GetArrayItem(wl, p)->valueint;
            double pts[6][3], sum = 0;
            ck_assert_int_ge(n, 3);
            ck_assert_int_le(n, 6);
            for (int k = 0; k < n; k++) {
                int vi = cJSON_GetArrayItem(poly, k)->valueint;
                ck_assert_int_lt(vi, nv);
                tile_vertex(tile, vi, pts[k]);
            }
            for (int k = 0; k < n; k++) {
                edge *grown = realloc(edges, sizeof(*edges) * (size_t)(nedges + 1));
                ck_assert_ptr_nonnull(grown);
                edges = grown;
                memcpy(edges[nedges].a, pts[k], sizeof(pts[k]));
                memcpy(edges[nedges].b, pts[(k + 1) % n], sizeof(pts[k]));
                edges[nedges].tile = ti;
                edges[nedges].poly = p;
                edges[nedges].wall = (mask >> k) & 1;
                walls += edges[nedges].wall;
                nedges++;
            }
            if (triangles) {
                /* The surface covers the polygon: the triangles' areas add
                 * up to the polygon's, each corner a tile vertex. */
                int nt = cJSON_GetArrayItem(pt, p)->valueint;
                for (int k = 0; k < nt; k++, t++) {
                    double c[3][3];
                    for (int q = 0; q < 3; q++) {
                        int vi = (int)num_at(tris, 3 * t + q);
                        ck_assert_int_lt(vi, nv + nd);
                        tile_vertex(tile, vi, c[q]);
                    }
                    sum += fabs(area2((const double(*)[3])c, 3));
                }
                ck_assert_msg(fabs(sum - fabs(area2((const double(*)[3])pts, n))) < 1e-2,
                              "tile %d polygon %d: triangles cover %g of %g", ti, p, sum / 2,
                              fabs(area2((const double(*)[3])pts, n)) / 2);
            }
            p++;
        }
        if (triangles) ck_assert_int_eq(3 * t, cJSON_GetArraySize(tris));
        npolys += p;
        ti++;
    }
    /* Walls: an edge is a wall exactly when no other polygon's edge lies
     * along it (brute force over every pair). */
    for (int i = 0; i < nedges; i++) {
        bool shared = false;
        for (int k = 0; k < nedges && !shared; k++)
            shared = (edges[k].tile != edges[i].tile || edges[k].poly != edges[i].poly) &&
                     overlaps(&edges[i], &edges[k]);
        ck_assert_msg(shared == !edges[i].wall, "tile %d polygon %d edge (%g,%g,%g)-(%g,%g,%g): %s",
                      edges[i].tile, edges[i].poly, edges[i].a[0], edges[i].a[1], edges[i].a[2],
                      edges[i].b[0], edges[i].b[1], edges[i].b[2],
                      shared ? "shared but said a wall" : "a wall but said shared");
    }
    ck_assert_int_gt(walls, 0);
    free(edges);
    return npolys;
}

START_TEST(routes_mesh_export) {
    hc_server s = it_start(NULL);
    obj_text o = level();
    char tag[64], tag2[64];
    hc_resp r;
    cJSON *info, *j;
    const cJSON *in;
    int npolys;
    put_level(&s, "lvl", &o);
    info = it_call(&s, "GET", "/v1/maps/lvl", NULL, NULL, 200);

    r = it_req(&s, "GET", "/v1/maps/lvl/mesh?input=true", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(hc_header(&r, "ETag", tag, sizeof(tag)));
    j = it_json(&r);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/lvl", NULL, NULL);
    ck_assert_ptr_nonnull(hc_header(&r, "ETag", tag2, sizeof(tag2)));
    hc_free(&r);
    ck_assert_str_eq(tag, tag2);
    ck_assert_str_eq(it_str(j, "id"), "lvl");
    ck_assert_int_eq((int)it_num(j, "version"), 1);
    /* The info's member as it is, and counts that agree with it. */
    ck_assert_double_eq(it_num(j, "navmesh.polygons"), it_num(info, "navmesh.polygons"));
    ck_assert_double_eq(it_num(j, "counts.polygons"), it_num(info, "navmesh.polygons"));
    ck_assert_double_eq(it_num(j, "counts.vertices"), it_num(info, "navmesh.vertices"));
    ck_assert_int_eq((int)it_num(j, "counts.tiles"), cJSON_GetArraySize(it_get(j, "tiles")));
    ck_assert_int_eq((int)it_num(j, "counts.links"), 0);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "off_mesh_links")), 0);
    /* Two floors and the ramp: layers over one another. */
    ck_assert_int_gt((int)it_num(info, "navmesh.tiles.layers"), (int)it_num(j, "counts.tiles") / 2);
    npolys = check_tiles(j, true);
    ck_assert_int_eq(npolys, (int)it_num(j, "counts.polygons"));
    {
        /* Every height seen: the floor, the deck, and the ramp between
         * (a polygon climbing from one to the other). */
        bool low = false, high = false, mid = false;
        const cJSON *tile;
        cJSON_ArrayForEach(tile, it_get(j, "tiles")) {
            const cJSON *poly;
            cJSON_ArrayForEach(poly, it_get(tile, "polygons")) {
                double lo = 1e9, hi = -1e9, pt[3];
                const cJSON *vi;
                cJSON_ArrayForEach(vi, poly) {
                    tile_vertex(tile, vi->valueint, pt);
                    lo = fmin(lo, pt[1]);
                    hi = fmax(hi, pt[1]);
                }
                low |= hi - OY < 0.5;
                high |= lo - OY > 2.5;
                mid |= lo - OY < 1 && hi - OY > 2;
            }
        }
        ck_assert(low && high && mid);
    }
    /* The input is the OBJ this test wrote. */
    in = it_get(j, "input");
    ck_assert_int_eq(cJSON_GetArraySize(it_get(in, "vertices")), 3 * o.nv);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(in, "triangles")), 3 * o.ntri);
    for (int i = 0; i < o.nv; i++)
        for (int k = 0; k < 3; k++)
            ck_assert_double_eq_tol(num_at(it_get(in, "vertices"), 3 * i + k), o.v[i][k], 1e-3);
    for (int i = 0; i < o.ntri; i++)
        for (int k = 0; k < 3; k++)
            ck_assert_int_eq((int)num_at(it_get(in, "triangles"), 3 * i + k), o.tri[i][k]);
    cJSON_Delete(j);

    /* Without triangles and input: the same polygons. */
    j = it_call(&s, "GET", "/v1/maps/lvl/mesh?triangles=false", NULL, NULL, 200);
    ck_assert(cJSON_IsNull(it_get(j, "input")));
    ck_assert_int_eq(check_tiles(j, false), npolys);
    cJSON_Delete(j);
    cJSON_Delete(info);
    free(o.s);
    it_stop(&s);
}
END_TEST

START_TEST(routes_mesh_refusals) {
    hc_server s = it_start(NULL);
    cJSON *j;
    it_put_nav_open(&s, "n", 12, 8);
    it_put_map(&s, "g", "text/x-movingai-map", "type octile\nheight 1\nwidth 4\nmap\n....\n", 201);
    it_call_error(&s, "GET", "/v1/maps/n/mesh?detail=true", NULL, NULL, 400, "invalid_request",
                  "detail");
    it_call_error(&s, "GET", "/v1/maps/n/mesh?input=yes", NULL, NULL, 422, "invalid_value",
                  "input");
    it_call_error(&s, "GET", "/v1/maps/n/mesh?triangles=", NULL, NULL, 422, "invalid_value",
                  "triangles");
    it_call_error(&s, "GET", "/v1/maps/g/mesh", NULL, NULL, 422, "unsupported", NULL);
    it_call_error(&s, "GET", "/v1/maps/nope/mesh", NULL, NULL, 404, "map_not_found", NULL);
    it_call_error(&s, "POST", "/v1/maps/n/mesh", "application/json", "{}", 405,
                  "method_not_allowed", NULL);
    /* A map made from a grid has no input geometry. */
    j = it_call(&s, "GET", "/v1/maps/n/mesh?input=true", NULL, NULL, 200);
    ck_assert(cJSON_IsNull(it_get(j, "input")));
    ck_assert_int_gt(check_tiles(j, true), 0);
    cJSON_Delete(j);
    it_stop(&s);
}
END_TEST

/* GET path on a fresh pathd with --max-mesh-bytes limit: the status, and
 * the body's length or the error's field ("" for none). */
static int mesh_under(const obj_text *o, int64_t limit, const char *variant, size_t *len,
                      char *field, size_t cap) {
    char lim[32], path[96];
    hc_server s;
    hc_resp r;
    int status;
    snprintf(lim, sizeof(lim), "%lld", (long long)limit);
    s = it_start(ARGS("--max-mesh-bytes", lim));
    put_level(&s, "lvl", o);
    snprintf(path, sizeof(path), "/v1/maps/lvl/mesh%s", variant);
    r = it_req(&s, "GET", path, NULL, NULL);
    status = r.status;
    *len = r.body_len;
    field[0] = '\0';
    if (status != 200) {
        cJSON *e;
        it_expect_error(&r, 413, "limit_exceeded", NULL);
        e = it_json(&r);
        if (cJSON_GetObjectItem(it_get(e, "error"), "field"))
            snprintf(field, cap, "%s", it_str(e, "error.field"));
        cJSON_Delete(e);
    }
    hc_free(&r);
    it_stop(&s);
    return status;
}

/* The size check is an upper bound of what is written: for each variant
 * the smallest limit that answers (found by bisection) is at least the
 * answer's length, one byte less is refused; and at the smallest limit of
 * the variant without input (or without triangles) the fuller request is
 * refused naming "input" (or "triangles"). */
START_TEST(routes_mesh_limit) {
    static const char *const variants[] = {"?input=true", "", "?triangles=false"};
    obj_text o = level();
    int64_t least[3];
    size_t len;
    char field[80];
    for (int v = 0; v < 3; v++) {
        int64_t lo = 4096, hi = INT64_C(1) << 22; /* refused at lo - 1 or below; answered at hi */
        ck_assert_int_eq(mesh_under(&o, hi, variants[v], &len, field, sizeof(field)), 200);
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (mesh_under(&o, mid, variants[v], &len, field, sizeof(field)) == 200)
                hi = mid;
            else
                lo = mid + 1;
        }
        least[v] = lo;
        ck_assert_int_eq(mesh_under(&o, lo, variants[v], &len, field, sizeof(field)), 200);
        ck_assert_uint_le(len, (size_t)lo);
        if (lo > 4096)
            ck_assert_int_eq(mesh_under(&o, lo - 1, variants[v], &len, field, sizeof(field)), 413);
    }
    ck_assert_int_gt(least[0], least[1]);
    ck_assert_int_gt(least[1], least[2]);
    ck_assert_int_eq(mesh_under(&o, least[1], variants[0], &len, field, sizeof(field)), 413);
    ck_assert_str_eq(field, "input");
    ck_assert_int_eq(mesh_under(&o, least[2], variants[1], &len, field, sizeof(field)), 413);
    ck_assert_str_eq(field, "triangles");
    free(o.s);
}
END_TEST

/* Changes show: an obstacle PATCHed in is listed and cuts the polygons; a
 * disabled area's polygons are listed as disabled, all of them and only
 * them. */
START_TEST(routes_mesh_changes) {
    hc_server s = it_start(NULL);
    char *env;
    cJSON *j, *k;
    const cJSON *tile;
    int gate_area = -1, disabled = 0, in_area = 0;
    const char *grid = "type octile\nheight 8\nwidth 16\nmap\n................\n"
                       "................\n................\n................\n"
                       "................\n................\n................\n"
                       "................\n";
    env = it_nav_envelope(grid, ",\"areas\":[{\"id\":\"gate\",\"boxes\":[{\"min\":[6,-1,0],"
                                "\"max\":[10,1,8]}],\"cost\":2}]");
    it_put_map(&s, "n", "application/json", env, 201);
    free(env);
    j = it_call(&s, "GET", "/v1/maps/n/mesh", NULL, NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "navmesh.obstacles")), 0);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "area_boxes")),
                     cJSON_GetArraySize(it_get(j, "navmesh.areas")));
    {
        const cJSON *a;
        int i = 0;
        cJSON_ArrayForEach(a, it_get(j, "navmesh.areas")) {
            if (cJSON_IsString(it_get(a, "id")) && strcmp(it_str(a, "id"), "gate") == 0) {
                const cJSON *boxes = cJSON_GetArrayItem(it_get(j, "area_boxes"), i);
                gate_area = (int)it_num(a, "area");
                ck_assert_int_eq(cJSON_GetArraySize(boxes), 1);
                ck_assert_double_eq_tol(num_at(it_get(cJSON_GetArrayItem(boxes, 0), "max"), 0), 10,
                                        1e-4);
            }
            i++;
        }
    }
    ck_assert_int_gt(gate_area, 0);
    cJSON_Delete(
        it_call(&s, "PATCH", "/v1/maps/n", "application/json",
                "{\"obstacles\":[{\"id\":\"crate\",\"box\":{\"min\":[2,-1,2],\"max\":[4,1,4]}}],"
                "\"areas\":[{\"id\":\"gate\",\"enabled\":false}]}",
                200));
    k = it_call(&s, "GET", "/v1/maps/n/mesh", NULL, NULL, 200);
    ck_assert_int_eq((int)it_num(k, "version"), 2);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(k, "navmesh.obstacles")), 1);
    ck_assert_str_eq(it_str(cJSON_GetArrayItem(it_get(k, "navmesh.obstacles"), 0), "id"), "crate");
    ck_assert_int_ne((int)it_num(k, "counts.polygons"), (int)it_num(j, "counts.polygons"));
    cJSON_ArrayForEach(tile, it_get(k, "tiles")) {
        const cJSON *areas = it_get(tile, "areas"), *d;
        bool *off = calloc((size_t)cJSON_GetArraySize(areas) + 1, 1);
        cJSON_ArrayForEach(d, it_get(tile, "disabled")) {
            ck_assert_int_eq((int)num_at(areas, d->valueint), gate_area);
            off[d->valueint] = true;
            disabled++;
        }
        for (int p = 0; p < cJSON_GetArraySize(areas); p++) {
            if ((int)num_at(areas, p) != gate_area) continue;
            in_area++;
            ck_assert(off[p]);
        }
        /* The crate's footprint has no walkable polygon: no vertex of a
         * polygon strictly inside it. */
        {
            const cJSON *v = it_get(tile, "vertices");
            for (int i = 0; i + 2 < cJSON_GetArraySize(v); i += 3) {
                double x = num_at(v, i), z = num_at(v, i + 2); /* a grid: no offset */
                ck_assert(!(x > 2.01 && x < 3.99 && z > 2.01 && z < 3.99));
            }
        }
        free(off);
    }
    ck_assert_int_gt(disabled, 0);
    ck_assert_int_eq(disabled, in_area);
    check_tiles(k, true);
    cJSON_Delete(j);
    cJSON_Delete(k);
    it_stop(&s);
}
END_TEST

/* Whether point p (x/z) is inside polygon poly of tile (with a margin). */
static bool poly_has(const cJSON *tile, const cJSON *poly, const double p[3], double margin) {
    int n = cJSON_GetArraySize(poly), sign = 0;
    for (int k = 0; k < n; k++) {
        double a[3], b[3], cr;
        tile_vertex(tile, cJSON_GetArrayItem(poly, k)->valueint, a);
        tile_vertex(tile, cJSON_GetArrayItem(poly, (k + 1) % n)->valueint, b);
        cr = (b[0] - a[0]) * (p[2] - a[2]) - (b[2] - a[2]) * (p[0] - a[0]);
        cr /= fmax(1e-9, hypot(b[0] - a[0], b[2] - a[2]));
        if (fabs(cr) <= margin) continue;
        if (sign && (cr > 0 ? 1 : -1) != sign) return false;
        sign = cr > 0 ? 1 : -1;
    }
    return true;
}

/* The polygon of reference ref in the mesh answer: its tile and itself. */
static const cJSON *poly_of(const cJSON *mesh, uint32_t ref, const cJSON **tile_out) {
    const cJSON *tile;
    cJSON_ArrayForEach(tile, it_get(mesh, "tiles")) {
        uint32_t base = (uint32_t)it_num(tile, "ref");
        int n = cJSON_GetArraySize(it_get(tile, "polygons"));
        if (ref >= base && ref < base + (uint32_t)n) {
            *tile_out = tile;
            return cJSON_GetArrayItem(it_get(tile, "polygons"), (int)(ref - base));
        }
    }
    return NULL;
}

/* corridor=true names the corridor's polygons by the references the mesh
 * export gives: the first holds the snapped start, the last the goal, each
 * next one shares an edge with the one before (the walls reference), every
 * path point lies in one of them; such answers are never cached. */
START_TEST(routes_mesh_corridor) {
    hc_server s = it_start(NULL);
    obj_text o = level();
    cJSON *mesh;
    put_level(&s, "lvl", &o);
    mesh = it_call(&s, "GET", "/v1/maps/lvl/mesh", NULL, NULL, 200);
    for (int a = 0; a < 2; a++) {
        /* From the floor's far corner up the ramp onto the deck. */
        const float start[3] = {OX + 3, OY, OZ + 18}, goal[3] = {OX + 17, OY + 3, OZ + 2};
        const char *extra =
            a ? ",\"algorithm\":\"detour\",\"corridor\":true" : ",\"corridor\":true";
        cJSON *j = it_nav_path(&s, "lvl", start, goal, extra), *again;
        const cJSON *cor = it_get(j, "corridor"), *prev_tile = NULL, *prev = NULL, *ref;
        int n = cJSON_GetArraySize(cor);
        ck_assert(it_truth(j, "found"));
        ck_assert_int_eq(n, (int)it_num(j, "polygons"));
        ck_assert_int_gt(n, 2);
        cJSON_ArrayForEach(ref, cor) {
            const cJSON *tile = NULL, *poly = poly_of(mesh, (uint32_t)ref->valuedouble, &tile);
            ck_assert_msg(poly != NULL, "corridor ref %.0f is no polygon of the mesh",
                          ref->valuedouble);
            if (prev) {
                /* Adjacent: some edge of one lies along an edge of the other. */
                bool adjacent = false;
                int pn = cJSON_GetArraySize(prev), qn = cJSON_GetArraySize(poly);
                for (int i = 0; i < pn && !adjacent; i++)
                    for (int k = 0; k < qn && !adjacent; k++) {
                        edge e = {0}, f = {0};
                        tile_vertex(prev_tile, cJSON_GetArrayItem(prev, i)->valueint, e.a);
                        tile_vertex(prev_tile, cJSON_GetArrayItem(prev, (i + 1) % pn)->valueint,
                                    e.b);
                        tile_vertex(tile, cJSON_GetArrayItem(poly, k)->valueint, f.a);
                        tile_vertex(tile, cJSON_GetArrayItem(poly, (k + 1) % qn)->valueint, f.b);
                        adjacent = overlaps(&e, &f);
                    }
                ck_assert_msg(adjacent, "corridor polygons %.0f and the one before do not touch",
                              ref->valuedouble);
            }
            prev = poly;
            prev_tile = tile;
        }
        {
            const cJSON *tile = NULL, *poly;
            float p0[3], p1[3];
            double d0[3], d1[3];
            it_nav_point(j, 0, p0);
            it_nav_point(j, it_nav_npoints(j) - 1, p1);
            for (int k = 0; k < 3; k++) d0[k] = p0[k], d1[k] = p1[k];
            poly = poly_of(mesh, (uint32_t)cJSON_GetArrayItem(cor, 0)->valuedouble, &tile);
            ck_assert(poly_has(tile, poly, d0, 1e-3));
            poly = poly_of(mesh, (uint32_t)cJSON_GetArrayItem(cor, n - 1)->valuedouble, &tile);
            ck_assert(poly_has(tile, poly, d1, 1e-3));
        }
        /* Asked again: computed again, not served from the cache. */
        again = it_nav_path(&s, "lvl", start, goal, extra);
        ck_assert(!it_truth(again, "stats.cached"));
        ck_assert_int_eq(cJSON_GetArraySize(it_get(again, "corridor")), n);
        cJSON_Delete(again);
        cJSON_Delete(j);
    }
    /* Without it, no corridor member. */
    {
        const float start[3] = {OX + 3, OY, OZ + 18}, goal[3] = {OX + 5, OY, OZ + 15};
        cJSON *j = it_nav_path(&s, "lvl", start, goal, NULL);
        ck_assert_ptr_null(cJSON_GetObjectItem(j, "corridor"));
        cJSON_Delete(j);
    }
    it_call_error(&s, "POST", "/v1/maps/lvl/path", "application/json",
                  "{\"start\":[1,2,3],\"goal\":[1,2,3],\"corridor\":1}", 400, "invalid_request",
                  "corridor");
    cJSON_Delete(mesh);
    free(o.s);
    it_stop(&s);
}
END_TEST

/* ?agent_type= answers that type's own mesh: on a level uploaded with a
 * second, wider agent type, each type's answer names it and has the
 * polygons the map info gives for it (their counts differ), its tiles
 * check out; the default is "default"; a type the map lacks and a
 * malformed name are 422 naming agent_type. */
START_TEST(routes_mesh_agent_types) {
    hc_server s = it_start(NULL);
    obj_text o = level();
    char path[160];
    snprintf(path, sizeof(path), "lvl" LEVEL_ARGS "&agent_types=wide:1.2,2,0.9,45");
    it_put_map(&s, path, "model/obj", o.s, 201);
    cJSON *info = it_call(&s, "GET", "/v1/maps/lvl", NULL, NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(it_get(info, "navmesh.agent_types")), 2);
    ck_assert_str_eq(it_str(info, "navmesh.agent_types.1.id"), "wide");
    const int want[2] = {(int)it_num(info, "navmesh.agent_types.0.polygons"),
                         (int)it_num(info, "navmesh.agent_types.1.polygons")};
    ck_assert_int_ne(want[0], want[1]);
    static const char *const urls[3] = {"/v1/maps/lvl/mesh?triangles=false",
                                        "/v1/maps/lvl/mesh?triangles=false&agent_type=default",
                                        "/v1/maps/lvl/mesh?agent_type=wide&triangles=false"};
    for (int i = 0; i < 3; i++) {
        cJSON *j = it_call(&s, "GET", urls[i], NULL, NULL, 200);
        const int t = i == 2;
        ck_assert_str_eq(it_str(j, "agent_type"), t ? "wide" : "default");
        ck_assert_int_eq((int)it_num(j, "counts.polygons"), want[t]);
        ck_assert_int_eq((int)it_num(j, "navmesh.polygons"), want[t]);
        ck_assert_int_eq(check_tiles(j, false), want[t]);
        cJSON_Delete(j);
    }
    it_call_error(&s, "GET", "/v1/maps/lvl/mesh?agent_type=giant", NULL, NULL, 422, "invalid_value",
                  "agent_type");
    it_call_error(&s, "GET", "/v1/maps/lvl/mesh?agent_type=", NULL, NULL, 422, "invalid_value",
                  "agent_type");
    it_call_error(&s, "GET", "/v1/maps/lvl/mesh?agent_type=a%20b", NULL, NULL, 422, "invalid_value",
                  "agent_type");
    cJSON_Delete(info);
    free(o.s);
    it_stop(&s);
}
END_TEST

TU_SUITE(routes_mesh) {
    Suite *s = suite_create("routes_mesh");
    TCase *tc = tcase_create("routes_mesh");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes_mesh_export);
    tcase_add_test(tc, routes_mesh_refusals);
    tcase_add_test(tc, routes_mesh_limit);
    tcase_add_test(tc, routes_mesh_changes);
    tcase_add_test(tc, routes_mesh_corridor);
    tcase_add_test(tc, routes_mesh_agent_types);
    suite_add_tcase(s, tc);
    return s;
}
