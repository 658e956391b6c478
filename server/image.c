/* image.c -- see image.h. */
#include "image.h"

#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>

void pf_image_put(pf_image_w *w, const void *p, size_t n) {
    if (w->failed) return;
    if (w->len + n > w->cap) {
        size_t nc = w->cap ? w->cap : 4096;
        unsigned char *g;
        while (nc < w->len + n) nc *= 2;
        if (!(g = realloc(w->b, nc))) {
            w->failed = true;
            return;
        }
        w->b = g;
        w->cap = nc;
    }
    memcpy(w->b + w->len, p, n);
    w->len += n;
}

void pf_image_put_u(pf_image_w *w, uint64_t v, int bytes) {
    unsigned char t[8];
    for (int i = 0; i < bytes; i++) t[i] = (unsigned char)(v >> (8 * i));
    pf_image_put(w, t, (size_t)bytes);
}

void pf_image_put_i32(pf_image_w *w, int32_t v) { pf_image_put_u(w, (uint32_t)v, 4); }

void pf_image_discard(pf_image_w *w) {
    free(w->b);
    memset(w, 0, sizeof(*w));
}

pf_status pf_image_seal(pf_image_w *w, unsigned char **out, size_t *len) {
    struct sha256_ctx h;
    unsigned char digest[SHA256_DIGEST_SIZE];
    if (!w->failed) {
        sha256_init(&h);
        sha256_update(&h, w->len, w->b);
        sha256_digest(&h, sizeof(digest), digest);
        pf_image_put(w, digest, sizeof(digest));
    }
    if (w->failed) {
        pf_image_discard(w);
        return PF_ENOMEM;
    }
    *out = w->b;
    *len = w->len;
    memset(w, 0, sizeof(*w));
    return PF_OK;
}

bool pf_image_open(pf_image_r *r, const unsigned char *buf, size_t len, size_t min_len) {
    struct sha256_ctx h;
    unsigned char digest[SHA256_DIGEST_SIZE];
    if (len < min_len + SHA256_DIGEST_SIZE) return false;
    r->b = buf;
    r->len = len - SHA256_DIGEST_SIZE;
    r->pos = 0;
    sha256_init(&h);
    sha256_update(&h, r->len, buf);
    sha256_digest(&h, sizeof(digest), digest);
    return memcmp(digest, buf + r->len, sizeof(digest)) == 0;
}

bool pf_image_get(pf_image_r *r, void *p, size_t n) {
    if (n > r->len - r->pos) return false;
    memcpy(p, r->b + r->pos, n);
    r->pos += n;
    return true;
}

bool pf_image_get_u(pf_image_r *r, uint64_t *v, int bytes) {
    unsigned char t[8];
    if (!pf_image_get(r, t, (size_t)bytes)) return false;
    *v = 0;
    for (int i = 0; i < bytes; i++) *v |= (uint64_t)t[i] << (8 * i);
    return true;
}

bool pf_image_get_i32(pf_image_r *r, int32_t *v) {
    uint64_t u;
    if (!pf_image_get_u(r, &u, 4)) return false;
    *v = (int32_t)(uint32_t)u;
    return true;
}
