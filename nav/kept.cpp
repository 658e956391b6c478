/* kept.cpp -- kept voxels: one tile's compact heightfield for one agent
 * type (eroded, areas marked), compressed, and back. A rebuild (obstacles,
 * areas, links) starts from it, as RecastDemo's tile mesh sample would
 * start from a tile's kept intermediate results.
 *
 * The layout: a header, then the span data as planes (each cell's span
 * count, then per span the low and high byte of its floor, its clearance,
 * its three connection bytes and its area), run-length coded with
 * PackBits. Planes of one kind make long runs on floors and terraces; a
 * flat 72 x 72 tile keeps in a few hundred bytes.
 */
#include "nav_internal.h"

#include <RecastAlloc.h>

namespace pfnav {

size_t packbits_bound(size_t n) { return n + n / 128 + 2; }

size_t packbits_encode(const unsigned char *in, size_t n, unsigned char *out) {
    size_t i = 0, o = 0;
    while (i < n) {
        size_t run = 1;
        while (i + run < n && run < 129 && in[i + run] == in[i]) run++;
        if (run >= 2) {
            out[o++] = (unsigned char)(257 - run);
            out[o++] = in[i];
            i += run;
            continue;
        }
        /* Literals up to the next run of two (or 128 of them). */
        size_t lit = 1;
        while (i + lit < n && lit < 128 && !(i + lit + 1 < n && in[i + lit] == in[i + lit + 1]))
            lit++;
        out[o++] = (unsigned char)(lit - 1);
        memcpy(out + o, in + i, lit);
        o += lit;
        i += lit;
    }
    return o;
}

bool packbits_decode(const unsigned char *in, size_t n_in, unsigned char *out, size_t n) {
    size_t i = 0, o = 0;
    while (i < n_in) {
        unsigned h = in[i++];
        if (h < 128) {
            size_t lit = (size_t)h + 1;
            if (i + lit > n_in || o + lit > n) return false;
            memcpy(out + o, in + i, lit);
            i += lit;
            o += lit;
        } else {
            size_t run = 257 - (size_t)h;
            if (i >= n_in || o + run > n) return false;
            memset(out + o, in[i++], run);
            o += run;
        }
    }
    return o == n;
}

namespace {

struct KeptHeader {
    int32_t width, height, span_count;
    int32_t walkable_height, walkable_climb, border;
    float bmin[3], bmax[3], cs, ch;
};

/* Raw plane bytes of a heightfield of `cells` cells and `spans` spans. */
size_t raw_size(size_t cells, size_t spans) { return cells + 7 * spans; }

} /* namespace */

bool kept_store(const rcCompactHeightfield &chf, KeptTile *out) {
    out->data = NULL;
    out->size = 0;
    const size_t cells = (size_t)chf.width * (size_t)chf.height, spans = (size_t)chf.spanCount;
    const size_t raw = raw_size(cells, spans);
    unsigned char *plane = (unsigned char *)malloc(raw ? raw : 1);
    unsigned char *packed = (unsigned char *)malloc(sizeof(KeptHeader) + packbits_bound(raw));
    if (!plane || !packed) {
        free(plane);
        free(packed);
        return false;
    }
    for (size_t c = 0; c < cells; c++) plane[c] = (unsigned char)chf.cells[c].count;
    unsigned char *p = plane + cells;
    for (size_t i = 0; i < spans; i++) {
        const rcCompactSpan &s = chf.spans[i];
        p[i] = (unsigned char)(s.y & 0xff);
        p[spans + i] = (unsigned char)(s.y >> 8);
        p[2 * spans + i] = (unsigned char)s.h;
        p[3 * spans + i] = (unsigned char)(s.con & 0xff);
        p[4 * spans + i] = (unsigned char)((s.con >> 8) & 0xff);
        p[5 * spans + i] = (unsigned char)((s.con >> 16) & 0xff);
        p[6 * spans + i] = chf.areas[i];
    }
    KeptHeader h;
    memset(&h, 0, sizeof h);
    h.width = chf.width;
    h.height = chf.height;
    h.span_count = chf.spanCount;
    h.walkable_height = chf.walkableHeight;
    h.walkable_climb = chf.walkableClimb;
    h.border = chf.borderSize;
    dtVcopy(h.bmin, chf.bmin);
    dtVcopy(h.bmax, chf.bmax);
    h.cs = chf.cs;
    h.ch = chf.ch;
    memcpy(packed, &h, sizeof h);
    const size_t n = packbits_encode(plane, raw, packed + sizeof h);
    free(plane);
    unsigned char *fit = (unsigned char *)realloc(packed, sizeof h + n);
    out->data = fit ? fit : packed;
    out->size = (uint32_t)(sizeof h + n);
    return true;
}

rcCompactHeightfield *kept_load(const KeptTile *k) {
    if (!k->data || k->size < sizeof(KeptHeader)) return NULL;
    KeptHeader h;
    memcpy(&h, k->data, sizeof h);
    const size_t cells = (size_t)h.width * (size_t)h.height, spans = (size_t)h.span_count;
    const size_t raw = raw_size(cells, spans);
    unsigned char *plane = (unsigned char *)malloc(raw ? raw : 1);
    rcCompactHeightfield *chf = rcAllocCompactHeightfield();
    if (!plane || !chf) goto out_free;
    if (!packbits_decode(k->data + sizeof h, k->size - sizeof h, plane, raw)) goto out_free;
    chf->width = h.width;
    chf->height = h.height;
    chf->spanCount = h.span_count;
    chf->walkableHeight = h.walkable_height;
    chf->walkableClimb = h.walkable_climb;
    chf->borderSize = h.border;
    chf->maxDistance = 0;
    chf->maxRegions = 0;
    dtVcopy(chf->bmin, h.bmin);
    dtVcopy(chf->bmax, h.bmax);
    chf->cs = h.cs;
    chf->ch = h.ch;
    chf->cells =
        (rcCompactCell *)rcAlloc(sizeof(rcCompactCell) * (cells ? cells : 1), RC_ALLOC_PERM);
    chf->spans =
        (rcCompactSpan *)rcAlloc(sizeof(rcCompactSpan) * (spans ? spans : 1), RC_ALLOC_PERM);
    chf->areas = (unsigned char *)rcAlloc(spans ? spans : 1, RC_ALLOC_PERM);
    if (!chf->cells || !chf->spans || !chf->areas) goto out_free;
    {
        unsigned int index = 0;
        for (size_t c = 0; c < cells; c++) {
            chf->cells[c].index = index;
            chf->cells[c].count = plane[c];
            index += plane[c];
        }
        if (index != spans) goto out_free;
        const unsigned char *p = plane + cells;
        for (size_t i = 0; i < spans; i++) {
            rcCompactSpan &s = chf->spans[i];
            s.y = (unsigned short)(p[i] | (p[spans + i] << 8));
            s.reg = 0;
            s.h = p[2 * spans + i];
            s.con = (unsigned int)p[3 * spans + i] | ((unsigned int)p[4 * spans + i] << 8) |
                    ((unsigned int)p[5 * spans + i] << 16);
            chf->areas[i] = p[6 * spans + i];
        }
    }
    free(plane);
    return chf;
out_free:
    free(plane);
    rcFreeCompactHeightfield(chf);
    return NULL;
}

} /* namespace pfnav */
