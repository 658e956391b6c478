/* kind_grid_image.c -- the stores' image of a grid (kind_grid.h; image.h
 * seals it).
 *
 * Layout, little-endian:
 *   "PATHDMAP" | u32 format (1) | u32 width | u32 height | u8 connectivity |
 *   u8 corner_cutting | u16 0 | u64 version |
 *   width*height cost bytes | width*height wall bytes (bit 0: wall on the
 *   east side, bit 1: south), both as they are now (closed doors included) |
 *   u32 doors, each: u16 name length | name | u8 open | u32 cells |
 *   cells * (i32 x, i32 y, u8 cost when open) | u32 edges |
 *   edges * (i32 x, i32 y, i32 dir) |
 *   SHA-256 of everything before it.
 *
 * Reading declares each door over cells set to their open costs (so the door
 * remembers them, as at its declaration), then puts back every cell's cost
 * and wall as stored: exact even when doors share cells.
 */
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "kind_grid.h"

#define MAGIC "PATHDMAP"
#define FORMAT 1u
#define HEADER_BYTES (8 + 4 + 4 + 4 + 4 + 8)

pf_status pf_grid_image_encode(const pf_grid *g, uint64_t version, unsigned char **out,
                               size_t *len) {
    int32_t W = pf_grid_width(g), H = pf_grid_height(g), nd = pf_grid_door_count(g);
    size_t cells = (size_t)W * (size_t)H;
    pf_image_w w = {0};
    unsigned char *costs, *walls;

    pf_image_put(&w, MAGIC, 8);
    pf_image_put_u(&w, FORMAT, 4);
    pf_image_put_u(&w, (uint32_t)W, 4);
    pf_image_put_u(&w, (uint32_t)H, 4);
    pf_image_put_u(&w, (uint8_t)pf_grid_connectivity(g), 1);
    pf_image_put_u(&w, pf_grid_corner_cutting(g) ? 1 : 0, 1);
    pf_image_put_u(&w, 0, 2);
    pf_image_put_u(&w, version, 8);
    if (!(costs = malloc(cells ? cells : 1)) || !(walls = calloc(cells ? cells : 1, 1))) {
        free(costs);
        pf_image_discard(&w);
        return PF_ENOMEM;
    }
    for (int32_t y = 0; y < H; y++)
        for (int32_t x = 0; x < W; x++) {
            pf_point p = {x, y};
            costs[(size_t)y * W + x] = pf_grid_cost(g, p);
            if (x + 1 < W && pf_grid_is_wall(g, p, PF_DIR_E)) walls[(size_t)y * W + x] |= 1;
            if (y + 1 < H && pf_grid_is_wall(g, p, PF_DIR_S)) walls[(size_t)y * W + x] |= 2;
        }
    pf_image_put(&w, costs, cells);
    pf_image_put(&w, walls, cells);
    free(costs);
    free(walls);
    pf_image_put_u(&w, (uint32_t)nd, 4);
    for (int32_t d = 0; d < nd; d++) {
        const char *name = pf_grid_door_name(g, d);
        size_t nc, ne;
        const pf_point *c = pf_grid_door_cells(g, d, &nc);
        const pf_edge *e = pf_grid_door_edges(g, d, &ne);
        pf_image_put_u(&w, strlen(name), 2);
        pf_image_put(&w, name, strlen(name));
        pf_image_put_u(&w, pf_grid_door_is_open(g, d) ? 1 : 0, 1);
        pf_image_put_u(&w, nc, 4);
        for (size_t k = 0; k < nc; k++) {
            pf_image_put_i32(&w, c[k].x);
            pf_image_put_i32(&w, c[k].y);
            pf_image_put_u(&w, pf_grid_door_open_cost(g, d, k), 1);
        }
        pf_image_put_u(&w, ne, 4);
        for (size_t k = 0; k < ne; k++) {
            pf_image_put_i32(&w, e[k].a.x);
            pf_image_put_i32(&w, e[k].a.y);
            pf_image_put_i32(&w, e[k].dir);
        }
    }
    return pf_image_seal(&w, out, len);
}

pf_status pf_grid_image_decode(const unsigned char *buf, size_t len, const pf_grid_limits *lim,
                               pf_grid **out, uint64_t *version) {
    pf_image_r r;
    unsigned char magic[8];
    uint64_t fmt, W, H, conn, cut, pad, nd;
    pf_grid *g = NULL;
    pf_status st = PF_EPARSE;
    const unsigned char *costs, *walls;
    size_t cells;

    if (!pf_image_open(&r, buf, len, HEADER_BYTES)) return PF_EPARSE;
    if (!pf_image_get(&r, magic, 8) || memcmp(magic, MAGIC, 8) != 0) return PF_EPARSE;
    if (!pf_image_get_u(&r, &fmt, 4) || fmt != FORMAT || !pf_image_get_u(&r, &W, 4) ||
        !pf_image_get_u(&r, &H, 4) || !pf_image_get_u(&r, &conn, 1) ||
        !pf_image_get_u(&r, &cut, 1) || !pf_image_get_u(&r, &pad, 2) ||
        !pf_image_get_u(&r, version, 8))
        return PF_EPARSE;
    if (W > INT32_MAX || H > INT32_MAX) return PF_EPARSE;
    if ((st = pf_grid_create((int32_t)W, (int32_t)H, lim, &g))) return st;
    if ((st = pf_grid_set_rules(g, (int)conn, cut != 0))) goto fail;
    st = PF_EPARSE;
    cells = (size_t)W * (size_t)H;
    if (2 * cells > r.len - r.pos) goto fail;
    costs = r.b + r.pos;
    walls = costs + cells;
    r.pos += 2 * cells;
    for (size_t i = 0; i < cells; i++) /* no other bits, no wall off the map's edge */
        if ((walls[i] & ~3u) || ((walls[i] & 1) && i % W == W - 1) ||
            ((walls[i] & 2) && i / W == H - 1))
            goto fail;
    if (!pf_image_get_u(&r, &nd, 4)) goto fail;
    for (uint64_t d = 0; d < nd; d++) {
        char name[PF_DOOR_NAME_MAX];
        uint64_t nl, open, nc, ne, cost;
        pf_point *c = NULL;
        pf_edge *e = NULL;
        int32_t index;
        bool ok;
        if (!pf_image_get_u(&r, &nl, 2) || nl >= sizeof(name) || !pf_image_get(&r, name, nl))
            goto fail;
        name[nl] = '\0';
        if (!pf_image_get_u(&r, &open, 1) || !pf_image_get_u(&r, &nc, 4) ||
            nc > (r.len - r.pos) / 9)
            goto fail;
        if (!(c = malloc((nc ? nc : 1) * sizeof(*c)))) {
            st = PF_ENOMEM;
            goto fail;
        }
        ok = true;
        for (uint64_t k = 0; ok && k < nc; k++)
            ok = pf_image_get_i32(&r, &c[k].x) && pf_image_get_i32(&r, &c[k].y) &&
                 pf_image_get_u(&r, &cost, 1) && pf_grid_set_cost(g, c[k], (uint8_t)cost) == PF_OK;
        ok = ok && pf_image_get_u(&r, &ne, 4) && ne <= (r.len - r.pos) / 12;
        if (ok && !(e = malloc((ne ? ne : 1) * sizeof(*e)))) {
            free(c);
            st = PF_ENOMEM;
            goto fail;
        }
        for (uint64_t k = 0; ok && k < ne; k++)
            ok = pf_image_get_i32(&r, &e[k].a.x) && pf_image_get_i32(&r, &e[k].a.y) &&
                 pf_image_get_i32(&r, &e[k].dir);
        ok = ok && pf_grid_add_door(g, name, c, nc, e, ne, open != 0, &index) == PF_OK;
        free(c);
        free(e);
        if (!ok) goto fail;
    }
    for (size_t i = 0; i < cells; i++) {
        pf_point p = {(int32_t)(i % W), (int32_t)(i / W)};
        if (pf_grid_set_cost(g, p, costs[i])) goto fail;
        if (p.x + 1 < (int32_t)W && pf_grid_set_wall(g, p, PF_DIR_E, walls[i] & 1)) goto fail;
        if (p.y + 1 < (int32_t)H && pf_grid_set_wall(g, p, PF_DIR_S, (walls[i] & 2) != 0))
            goto fail;
    }
    if (r.pos != r.len) goto fail;
    *out = g;
    return PF_OK;
fail:
    pf_grid_destroy(g);
    return st;
}
