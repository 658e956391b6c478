/* ground.cpp -- the ground's height at a point: the input triangles that
 * face up, by square cells, and the one under a point nearest to a height
 * (navmesh.h "Heights"). Steep triangles count: where the mesh covers one
 * (voxels are walkable when their top came from a walkable triangle, and a
 * voxel is wider than the seam), the ground there is that triangle.
 *
 * A Detour polygon's vertices sit on voxel tops (up to a cell height above
 * the ground, more on slopes: a contour vertex takes the highest of the
 * spans around its corner) and the detail mesh interpolates between
 * samples; the input triangles are the ground itself. A point's height is
 * looked up near the mesh's height there, within a window, so a floor above
 * or below is never taken for it.
 */
#include "nav_internal.h"

namespace pfnav {

namespace {

/* Cells of 8 voxels a side: a few triangles each on a typical level. */
const int CELL_VOXELS = 8;

void tri_bounds(const GroundIndex *gi, uint32_t t, float *x0, float *x1, float *z0, float *z1) {
    const uint32_t *tri = &gi->tris[3 * (size_t)t];
    *x0 = *z0 = FLT_MAX;
    *x1 = *z1 = -FLT_MAX;
    for (int k = 0; k < 3; k++) {
        const float *v = &gi->verts[3 * (size_t)tri[k]];
        *x0 = fminf(*x0, v[0]);
        *x1 = fmaxf(*x1, v[0]);
        *z0 = fminf(*z0, v[2]);
        *z1 = fmaxf(*z1, v[2]);
    }
}

/* The cell range a box covers, clamped to the grid. */
void cell_range(const NavBase *b, float x0, float x1, float z0, float z1, int *cx0, int *cx1,
                int *cz0, int *cz1) {
    const GroundIndex *gi = &b->ground;
    *cx0 = (int)floorf((x0 - b->bmin[0]) / gi->cell);
    *cx1 = (int)floorf((x1 - b->bmin[0]) / gi->cell);
    *cz0 = (int)floorf((z0 - b->bmin[2]) / gi->cell);
    *cz1 = (int)floorf((z1 - b->bmin[2]) / gi->cell);
    if (*cx0 < 0) *cx0 = 0;
    if (*cz0 < 0) *cz0 = 0;
    if (*cx1 >= gi->gx) *cx1 = gi->gx - 1;
    if (*cz1 >= gi->gz) *cz1 = gi->gz - 1;
}

/* Whether triangle t lies wholly on one side of the square (x, z) +- d on
 * x/z: then it is farther than d. A few comparisons, where tri_probe
 * measures the distance to all three edges of every triangle the point is
 * outside (most of a cell's on finely cut ground such as terrain). */
inline bool tri_far(const GroundIndex *gi, uint32_t t, float x, float z, float d) {
    const uint32_t *tri = &gi->tris[3 * (size_t)t];
    const float *a = &gi->verts[3 * (size_t)tri[0]], *b = &gi->verts[3 * (size_t)tri[1]],
                *c = &gi->verts[3 * (size_t)tri[2]];
    const float xl = x - d, xh = x + d, zl = z - d, zh = z + d;
    return (a[0] < xl && b[0] < xl && c[0] < xl) || (a[0] > xh && b[0] > xh && c[0] > xh) ||
           (a[2] < zl && b[2] < zl && c[2] < zl) || (a[2] > zh && b[2] > zh && c[2] > zh);
}

/* Distance on x/z from (x, z) to triangle t (0 inside) and the height of
 * its plane there. false for a triangle seen edge-on from above. */
bool tri_probe(const GroundIndex *gi, uint32_t t, float x, float z, float *dxz, float *h) {
    const uint32_t *tri = &gi->tris[3 * (size_t)t];
    const float *a = &gi->verts[3 * (size_t)tri[0]], *b = &gi->verts[3 * (size_t)tri[1]],
                *c = &gi->verts[3 * (size_t)tri[2]];
    const double v0x = c[0] - a[0], v0z = c[2] - a[2], v1x = b[0] - a[0], v1z = b[2] - a[2];
    const double v2x = x - a[0], v2z = z - a[2];
    const double den = v0x * v1z - v0z * v1x;
    if (fabs(den) < 1e-12) return false;
    const double u = (v2x * v1z - v2z * v1x) / den, v = (v0x * v2z - v0z * v2x) / den;
    *h = (float)(a[1] + (c[1] - a[1]) * u + (b[1] - a[1]) * v);
    if (u >= 0 && v >= 0 && u + v <= 1) {
        *dxz = 0;
        return true;
    }
    /* Outside: the x/z distance to the nearest edge. */
    float best = FLT_MAX;
    const float *p[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        const float *s = p[k], *e = p[(k + 1) % 3];
        const double ex = e[0] - s[0], ez = e[2] - s[2];
        const double l2 = ex * ex + ez * ez;
        double tt = l2 > 0 ? ((x - s[0]) * ex + (z - s[2]) * ez) / l2 : 0;
        tt = tt < 0 ? 0 : tt > 1 ? 1 : tt;
        const double qx = s[0] + tt * ex - x, qz = s[2] + tt * ez - z;
        const float d = (float)sqrt(qx * qx + qz * qz);
        if (d < best) best = d;
    }
    *dxz = best;
    return true;
}

/* The heights triangle t's plane takes within reach of it on x/z: its
 * vertices' range widened by its steepest slope times reach (the plane
 * changes by at most that between a point and the nearest point of the
 * triangle), plus a hair for rounding. Unbounded for an edge-on triangle. */
void tri_band(const GroundIndex *gi, uint32_t t, float reach, float *lo, float *hi) {
    const uint32_t *tri = &gi->tris[3 * (size_t)t];
    const float *a = &gi->verts[3 * (size_t)tri[0]], *b = &gi->verts[3 * (size_t)tri[1]],
                *c = &gi->verts[3 * (size_t)tri[2]];
    const double v0x = c[0] - a[0], v0z = c[2] - a[2], v1x = b[0] - a[0], v1z = b[2] - a[2];
    const double den = v0x * v1z - v0z * v1x;
    if (fabs(den) < 1e-12) {
        *lo = -FLT_MAX;
        *hi = FLT_MAX;
        return;
    }
    /* y = a.y + gx (x - a.x) + gz (z - a.z), from tri_probe's u and v. */
    const double dc = c[1] - a[1], db = b[1] - a[1];
    const double gx = (dc * v1z - db * v0z) / den, gz = (db * v0x - dc * v1x) / den;
    const double grow = sqrt(gx * gx + gz * gz) * reach;
    const double ymin = fmin(a[1], fmin(b[1], c[1])), ymax = fmax(a[1], fmax(b[1], c[1]));
    const double pad = grow * 1.001 + 1e-3 + 1e-5 * fmax(fabs(ymin), fabs(ymax));
    *lo = ymin - pad < -FLT_MAX ? -FLT_MAX : (float)(ymin - pad);
    *hi = ymax + pad > FLT_MAX ? FLT_MAX : (float)(ymax + pad);
}

/* How far ground_height probes on x/z: the cell size, and a hair more
 * against rounding. */
inline float probe_reach(const NavBase *b) { return b->cfg.cell_size * 1.001f + 1e-4f; }

} /* namespace */

void ground_free(GroundIndex *gi) {
    free(gi->verts);
    free(gi->tris);
    free(gi->first);
    free(gi->items);
    free(gi->yband);
    memset(gi, 0, sizeof *gi);
}

/* Whether triangle t of g faces up (Recast's normal (v1 - v0) x (v2 - v0)
 * has a positive y). */
static bool faces_up(const pf_nav_geom *g, uint32_t t) {
    const uint32_t *tri = &g->tris[3 * (size_t)t];
    const float *a = &g->verts[3 * (size_t)tri[0]], *b = &g->verts[3 * (size_t)tri[1]],
                *c = &g->verts[3 * (size_t)tri[2]];
    const double e0x = b[0] - a[0], e0z = b[2] - a[2], e1x = c[0] - a[0], e1z = c[2] - a[2];
    return e0z * e1x - e0x * e1z > 0;
}

bool ground_build(NavBase *b, const pf_nav_geom *g) {
    GroundIndex *gi = &b->ground;
    uint32_t n = 0;
    for (uint32_t t = 0; t < g->ntris; t++) n += faces_up(g, t);
    gi->cell = (float)CELL_VOXELS * b->cfg.cell_size;
    gi->gx = (int)ceilf((b->bmax[0] - b->bmin[0]) / gi->cell) + 1;
    gi->gz = (int)ceilf((b->bmax[2] - b->bmin[2]) / gi->cell) + 1;
    const size_t ncells = (size_t)gi->gx * (size_t)gi->gz;
    gi->verts = (float *)malloc((size_t)g->nverts * 3 * sizeof(float) + 1);
    gi->tris = (uint32_t *)malloc((size_t)n * 3 * sizeof(uint32_t) + 1);
    gi->first = (uint32_t *)calloc(ncells + 1, sizeof(uint32_t));
    gi->yband = (float *)malloc((size_t)n * 2 * sizeof(float) + 1);
    if (!gi->verts || !gi->tris || !gi->first || !gi->yband) goto out_free;
    memcpy(gi->verts, g->verts, (size_t)g->nverts * 3 * sizeof(float));
    gi->nverts = g->nverts;
    for (uint32_t t = 0; t < g->ntris; t++) {
        if (!faces_up(g, t)) continue;
        memcpy(&gi->tris[3 * (size_t)gi->ntris++], &g->tris[3 * (size_t)t], 3 * sizeof(uint32_t));
    }
    for (uint32_t t = 0; t < gi->ntris; t++)
        tri_band(gi, t, probe_reach(b), &gi->yband[2 * (size_t)t], &gi->yband[2 * (size_t)t + 1]);
    {
        /* Counted, then filled (CSR). */
        uint64_t total = 0;
        for (int pass = 0; pass < 2; pass++) {
            for (uint32_t t = 0; t < gi->ntris; t++) {
                float x0, x1, z0, z1;
                int cx0, cx1, cz0, cz1;
                tri_bounds(gi, t, &x0, &x1, &z0, &z1);
                cell_range(b, x0, x1, z0, z1, &cx0, &cx1, &cz0, &cz1);
                for (int cz = cz0; cz <= cz1; cz++)
                    for (int cx = cx0; cx <= cx1; cx++) {
                        const size_t c = (size_t)cx + (size_t)cz * (size_t)gi->gx;
                        if (pass == 0) {
                            gi->first[c + 1]++;
                            total++;
                        } else {
                            gi->items[gi->first[c]++] = t;
                        }
                    }
            }
            if (pass == 0) {
                if (total > UINT32_MAX) goto out_free;
                for (size_t c = 0; c < ncells; c++) gi->first[c + 1] += gi->first[c];
                gi->items = (uint32_t *)malloc((size_t)(total ? total : 1) * sizeof(uint32_t));
                if (!gi->items) goto out_free;
            }
        }
        for (size_t c = ncells; c > 0; c--) gi->first[c] = gi->first[c - 1];
        gi->first[0] = 0;
        gi->bytes =
            (size_t)gi->nverts * 12 + (size_t)gi->ntris * 20 + (ncells + 1) * 4 + (size_t)total * 4;
    }
    return true;
out_free:
    ground_free(gi);
    return false;
}

bool ground_height(const NavBase *b, const float p[3], float window, float *y) {
    const GroundIndex *gi = &b->ground;
    if (!gi->ntris) return false;
    const float tol = b->cfg.cell_size;
    /* tri_far's margin: tol and a hair more, against rounding (a triangle
     * it skips is farther than tol, which the probe would skip too). */
    const float slack = probe_reach(b);
    const float ylo = p[1] - window, yhi = p[1] + window;
    int cx0, cx1, cz0, cz1;
    cell_range(b, p[0] - tol, p[0] + tol, p[2] - tol, p[2] + tol, &cx0, &cx1, &cz0, &cz1);
    float best = FLT_MAX, best_h = 0;
    for (int cz = cz0; cz <= cz1; cz++)
        for (int cx = cx0; cx <= cx1; cx++) {
            const size_t c = (size_t)cx + (size_t)cz * (size_t)gi->gx;
            for (uint32_t k = gi->first[c]; k < gi->first[c + 1]; k++) {
                const uint32_t t = gi->items[k];
                float dxz, h;
                /* Another floor: its plane cannot come within window. */
                if (gi->yband[2 * (size_t)t] > yhi || gi->yband[2 * (size_t)t + 1] < ylo) continue;
                if (tri_far(gi, t, p[0], p[2], slack)) continue;
                if (!tri_probe(gi, t, p[0], p[2], &dxz, &h)) continue;
                if (dxz > tol) continue;
                const float dy = fabsf(h - p[1]);
                if (dy > window) continue;
                /* Inside first, then the nearest height. */
                const float score = dxz * 1000.0f + dy;
                if (score < best) {
                    best = score;
                    best_h = h;
                }
            }
        }
    if (best == FLT_MAX) return false;
    *y = best_h;
    return true;
}

} /* namespace pfnav */
