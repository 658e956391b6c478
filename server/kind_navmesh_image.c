/* kind_navmesh_image.c -- the stores' image of a navmesh map
 * (kind_navmesh.h; image.h seals it): its envelope (proto/nav_json.h: the
 * upload and the version's obstacles and area states, which parse back
 * into the same map).
 *
 * Layout, little-endian:
 *   "PATHDNAV" | u32 format (1) | u64 version | u64 length | length bytes |
 *   SHA-256 of everything before it.
 *
 * C only (no nav/ library): the fuzz build reads images too.
 */
#include <string.h>

#include "image.h"
#include "kind_navmesh.h"

#define MAGIC "PATHDNAV"
#define FORMAT 1u

pf_status pf_navmesh_image_encode(const char *bytes, size_t n, uint64_t version,
                                  unsigned char **out, size_t *len) {
    pf_image_w w = {0};
    pf_image_put(&w, MAGIC, 8);
    pf_image_put_u(&w, FORMAT, 4);
    pf_image_put_u(&w, version, 8);
    pf_image_put_u(&w, n, 8);
    pf_image_put(&w, bytes, n);
    return pf_image_seal(&w, out, len);
}

pf_status pf_navmesh_image_decode(const unsigned char *buf, size_t len, const char **bytes,
                                  size_t *n, uint64_t *version) {
    pf_image_r r;
    unsigned char magic[8];
    uint64_t fmt, blen;
    if (!pf_image_open(&r, buf, len, 8 + 4 + 8 + 8)) return PF_EPARSE;
    if (!pf_image_get(&r, magic, 8) || memcmp(magic, MAGIC, 8) != 0 ||
        !pf_image_get_u(&r, &fmt, 4) || fmt != FORMAT || !pf_image_get_u(&r, version, 8) ||
        !pf_image_get_u(&r, &blen, 8) || blen != r.len - r.pos)
        return PF_EPARSE;
    *bytes = (const char *)(r.b + r.pos);
    *n = (size_t)blen;
    return PF_OK;
}
