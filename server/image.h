/* image.h -- the stores' images of maps: little-endian fields appended to
 * a growing buffer and sealed with a SHA-256 of everything before it
 * (nettle), and read back with every field's bytes checked. Each kind lays
 * out its own image with these (kind_grid_image.c, kind_navmesh_image.c);
 * the data directory (store.h) and Redis (store_redis.h) keep the images
 * as they are.
 *
 * A writer's failure is sticky: after an allocation fails every put is a
 * no-op and pf_image_seal reports PF_ENOMEM. Thread-safe (no state).
 */
#ifndef PF_SERVER_IMAGE_H
#define PF_SERVER_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct pf_image_w {
    unsigned char *b;
    size_t len, cap;
    bool failed;
} pf_image_w;

/* Appends n bytes, an unsigned integer of `bytes` bytes (1..8), an int32. */
void pf_image_put(pf_image_w *w, const void *p, size_t n);
void pf_image_put_u(pf_image_w *w, uint64_t v, int bytes);
void pf_image_put_i32(pf_image_w *w, int32_t v);
/* Appends the SHA-256 of what was written and hands the buffer over
 * (free()). PF_ENOMEM when a put failed (the buffer is freed). */
pf_status pf_image_seal(pf_image_w *w, unsigned char **out, size_t *len);
/* Drops what was written. */
void pf_image_discard(pf_image_w *w);

typedef struct pf_image_r {
    const unsigned char *b;
    size_t len, pos;
} pf_image_r;

/* Opens buf[0..len): false when it is shorter than min_len bytes and the
 * digest, or its digest does not match. r then reads what is before the
 * digest. */
bool pf_image_open(pf_image_r *r, const unsigned char *buf, size_t len, size_t min_len);
/* Reads n bytes, an unsigned integer of `bytes` bytes, an int32: false
 * (nothing read) past the end. */
bool pf_image_get(pf_image_r *r, void *p, size_t n);
bool pf_image_get_u(pf_image_r *r, uint64_t *v, int bytes);
bool pf_image_get_i32(pf_image_r *r, int32_t *v);

#endif
