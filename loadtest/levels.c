/* levels.c -- see levels.h. */
#include "levels.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t lv_rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static float lv_uniform(uint64_t *s, float lo, float hi) {
    return lo + (hi - lo) * (float)(lv_rnd(s) >> 40) / (float)(1u << 24);
}

static uint32_t vert(pf_level *l, float x, float y, float z) {
    if (l->oom) return 0;
    if (l->nverts == l->vcap) {
        uint32_t cap = l->vcap ? 2 * l->vcap : 1024;
        float *v = realloc(l->verts, (size_t)cap * 3 * sizeof *v);
        if (!v) {
            l->oom = true;
            return 0;
        }
        l->verts = v;
        l->vcap = cap;
    }
    float *v = &l->verts[3 * (size_t)l->nverts];
    v[0] = x;
    v[1] = y;
    v[2] = z;
    return l->nverts++;
}

static void tri(pf_level *l, uint32_t a, uint32_t b, uint32_t c) {
    if (l->oom) return;
    if (l->ntris == l->tcap) {
        uint32_t cap = l->tcap ? 2 * l->tcap : 1024;
        uint32_t *t = realloc(l->tris, (size_t)cap * 3 * sizeof *t);
        if (!t) {
            l->oom = true;
            return;
        }
        l->tris = t;
        l->tcap = cap;
    }
    uint32_t *t = &l->tris[3 * (size_t)l->ntris++];
    t[0] = a;
    t[1] = b;
    t[2] = c;
}

/* a b c d in order; Recast calls a triangle walkable by its normal
 * (b - a) x (c - a), which points up for corners going +z then +x. */
static void quad(pf_level *l, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    tri(l, a, b, c);
    tri(l, a, c, d);
}

/* A level floor [x0,x1] x [z0,z1] at height y, facing up. */
static void flat(pf_level *l, float x0, float z0, float x1, float z1, float y) {
    quad(l, vert(l, x0, y, z0), vert(l, x0, y, z1), vert(l, x1, y, z1), vert(l, x1, y, z0));
}

/* A box: its top (walkable when low enough) and its four sides (walls). */
static void box(pf_level *l, float x0, float y0, float z0, float x1, float y1, float z1) {
    flat(l, x0, z0, x1, z1, y1);
    uint32_t b[4] = {vert(l, x0, y0, z0), vert(l, x0, y0, z1), vert(l, x1, y0, z1),
                     vert(l, x1, y0, z0)};
    uint32_t t[4] = {vert(l, x0, y1, z0), vert(l, x0, y1, z1), vert(l, x1, y1, z1),
                     vert(l, x1, y1, z0)};
    for (int i = 0; i < 4; i++) {
        int j = (i + 1) % 4;
        quad(l, b[i], t[i], t[j], b[j]);
    }
}

/* A ramp on [x0,x1] rising from ya at z0 to yb at z1, facing up. */
static void ramp(pf_level *l, float x0, float z0, float x1, float z1, float ya, float yb) {
    quad(l, vert(l, x0, ya, z0), vert(l, x0, yb, z1), vert(l, x1, yb, z1), vert(l, x1, ya, z0));
}

/* A wall 0.5 thick from y to y + h along z (at x) or along x (at z), from
 * lo to hi, with doorways 2.5 wide centred at door[0..ndoor). */
static void wall(pf_level *l, bool along_z, float at, float lo, float hi, float y, float h,
                 const float *door, int ndoor) {
    float from = lo;
    for (int i = 0; i <= ndoor; i++) {
        float to = i < ndoor ? door[i] - 1.25f : hi;
        if (to > from) {
            if (along_z)
                box(l, at - 0.25f, y, from, at + 0.25f, y + h, to);
            else
                box(l, from, y, at - 0.25f, to, y + h, at + 0.25f);
        }
        if (i < ndoor) from = door[i] + 1.25f;
    }
}

/* A floor slab at y over [0,48]^2 less the opening [hx0,hx1] x [hz0,hz1]
 * (no opening when hx1 <= hx0). */
static void slab(pf_level *l, float y, float hx0, float hz0, float hx1, float hz1) {
    if (hx1 <= hx0) {
        box(l, 0, y - 0.3f, 0, 48, y, 48);
        return;
    }
    box(l, 0, y - 0.3f, 0, 48, y, hz0);
    box(l, 0, y - 0.3f, hz1, 48, y, 48);
    box(l, 0, y - 0.3f, hz0, hx0, y, hz1);
    box(l, hx1, y - 0.3f, hz0, 48, y, hz1);
}

static void multifloor(pf_level *l, uint64_t *s) {
    /* Ramp A: floor 0 to 1 at x 4..7, z 10..20; ramp B: floor 1 to 2 at
     * x 40..43, z 28..38; each under an opening of the floor it reaches. */
    slab(l, 0, 0, 0, 0, 0);
    slab(l, 4, 4, 8, 7, 20);
    slab(l, 8, 40, 26, 43, 38);
    ramp(l, 4, 10, 7, 20, 0, 4);
    ramp(l, 40, 28, 43, 38, 4, 8);
    for (int f = 0; f < 3; f++) {
        float y = 4.0f * (float)f;
        /* Walls at x = 24 and z = 24, two doorways each, away from the
         * crossing. */
        float dz[2] = {lv_uniform(s, 4, 20), lv_uniform(s, 28, 44)};
        float dx[2] = {lv_uniform(s, 9, 20), lv_uniform(s, 28, 38)};
        wall(l, true, 24, 0, 48, y, 3.5f, dz, 2);
        wall(l, false, 24, 0, 23.75f, y, 3.5f, &dx[0], 1);
        wall(l, false, 24, 24.25f, 48, y, 3.5f, &dx[1], 1);
        /* Furniture: too tall to step on. */
        for (int k = 0; k < 6; k++) {
            float x = lv_uniform(s, 9, 38), z = lv_uniform(s, 1, 45);
            if (fabsf(x - 24) < 3 || fabsf(z - 24) < 3) continue;
            box(l, x, y, z, x + 1.5f, y + 1.0f, z + 1.5f);
        }
    }
    /* The roof terrace: 6 up from the top floor, no way up. */
    box(l, 18, 8, 38, 30, 14, 46);
}

static float ground(const float *ph, float x, float z) {
    const float tau = 6.2831853f;
    return 3.0f * sinf(tau * x / 32 + ph[0]) * cosf(tau * z / 32 + ph[1]) +
           0.6f * sinf(tau * (x + z) / 9 + ph[2]);
}

static void terrain(pf_level *l, uint64_t *s) {
    const int n = 96;
    float ph[3];
    for (int i = 0; i < 3; i++) ph[i] = lv_uniform(s, 0, 6.2831853f);
    uint32_t first = l->nverts;
    for (int z = 0; z <= n; z++)
        for (int x = 0; x <= n; x++) vert(l, (float)x, ground(ph, (float)x, (float)z), (float)z);
    for (int z = 0; z < n; z++)
        for (int x = 0; x < n; x++) {
            uint32_t a = first + (uint32_t)(z * (n + 1) + x);
            quad(l, a, a + (uint32_t)(n + 1), a + (uint32_t)(n + 2), a + 1);
        }
    /* Rocks: boxes 1-3 wide, 2-3 above the ground around them. */
    for (int k = 0; k < 30; k++) {
        float x = lv_uniform(s, 2, 90), z = lv_uniform(s, 2, 90);
        float w = lv_uniform(s, 1, 3), d = lv_uniform(s, 1, 3);
        box(l, x, -6, z, x + w, ground(ph, x, z) + lv_uniform(s, 2, 3), z + d);
    }
    /* The mesa: 12 x 12, its top 15 up, cliffs all round. */
    box(l, 70, -6, 14, 82, 15, 26);
}

pf_status pf_level_make(const char *name, uint64_t seed, pf_level *out) {
    memset(out, 0, sizeof *out);
    uint64_t s = seed;
    if (strcmp(name, "multifloor") == 0)
        multifloor(out, &s);
    else if (strcmp(name, "terrain") == 0)
        terrain(out, &s);
    else
        return PF_EINVAL;
    if (out->oom) {
        pf_level_free(out);
        return PF_ENOMEM;
    }
    return PF_OK;
}

void pf_level_free(pf_level *l) {
    if (!l) return;
    free(l->verts);
    free(l->tris);
    memset(l, 0, sizeof *l);
}

pf_nav_geom pf_level_geom(const pf_level *l) {
    pf_nav_geom g = {l->verts, l->nverts, l->tris, l->ntris};
    return g;
}

/* The whole file, NUL-terminated; NULL with errno set. */
static char *read_whole(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f) return NULL;
    for (;;) {
        if (n + 1 >= cap) {
            size_t nc = cap ? 2 * cap : 65536;
            char *b = realloc(buf, nc);
            if (!b) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = b;
            cap = nc;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    const bool err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

pf_status pf_bench_level_load(const char *path, uint64_t seed, const pf_nav_limits *lim,
                              const char *who, pf_bench_level *out) {
    memset(out, 0, sizeof *out);
    pf_status st;
    if (strncmp(path, "gen:", 4) == 0) {
        st = pf_level_make(path + 4, seed, &out->lv);
        if (st != PF_OK) {
            fprintf(stderr, "%s: %s: %s (levels: gen:multifloor, gen:terrain)\n", who, path,
                    pf_status_str(st));
            return st;
        }
        out->geom = pf_level_geom(&out->lv);
        return PF_OK;
    }
    size_t len = 0;
    char *text = read_whole(path, &len);
    if (!text) {
        st = errno == ENOMEM ? PF_ENOMEM : PF_EIO;
        fprintf(stderr, "%s: %s: %s\n", who, path, strerror(errno));
        return st;
    }
    pf_nav_error nerr;
    st = pf_obj_parse(text, len, lim->max_vertices, lim->max_triangles, &out->obj, &nerr);
    free(text);
    if (st != PF_OK) {
        fprintf(stderr, "%s: %s: %s: %s\n", who, path, nerr.field, nerr.message);
        return st;
    }
    out->geom = pf_obj_geom(&out->obj);
    return PF_OK;
}

void pf_bench_level_free(pf_bench_level *b) {
    if (!b) return;
    pf_obj_free(&b->obj);
    pf_level_free(&b->lv);
    memset(&b->geom, 0, sizeof b->geom);
}
