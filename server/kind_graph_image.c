/* kind_graph_image.c -- the stores' image of a graph map (kind_graph.h;
 * image.h seals it). */
#include <string.h>

#include "image.h"
#include "kind_graph.h"

#define MAGIC "PATHDGRF"
#define FORMAT 1u

pf_status pf_graph_image_encode(const char *bytes, size_t n, uint64_t version, unsigned char **out,
                                size_t *len) {
    pf_image_w w = {0};
    pf_image_put(&w, MAGIC, 8);
    pf_image_put_u(&w, FORMAT, 4);
    pf_image_put_u(&w, version, 8);
    pf_image_put_u(&w, n, 8);
    pf_image_put(&w, bytes, n);
    return pf_image_seal(&w, out, len);
}

pf_status pf_graph_image_decode(const unsigned char *buf, size_t len, const char **bytes, size_t *n,
                                uint64_t *version) {
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
