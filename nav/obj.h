/* obj.h -- a bounded Wavefront OBJ reader: the geometry of navmesh uploads.
 *
 * Reads `v x y z [w]` (extra numbers such as vertex colours are ignored, up
 * to 7 in all) and `f a b c ...` faces (indices `i`, `i/t`, `i//n`, `i/t/n`;
 * negative indices count back from the last vertex read), fan-triangulated.
 * Every other statement (vt, vn, o, g, s, usemtl, mtllib, l, p, comments) is
 * skipped. The buffer needs no NUL; "\n" and "\r\n" line ends are read.
 *
 * Bounds: at most max_vertices vertices and max_triangles triangles (checked
 * as they are read, so memory stays within the limits), coordinates finite
 * and within +-PF_OBJ_MAX_COORD, lines of at most PF_OBJ_MAX_LINE bytes.
 * Errors name the field ("obj", or the limit "limits.max_vertices" /
 * "limits.max_triangles") and the 1-based line.
 *
 * Pure function of its input; thread-safe.
 */
#ifndef PF_NAV_OBJ_H
#define PF_NAV_OBJ_H

#include <stddef.h>
#include <stdint.h>

#include "navmesh.h"
#include "status.h"

#define PF_OBJ_MAX_COORD 1.0e7
#define PF_OBJ_MAX_LINE 65536

typedef struct pf_obj {
    float *verts; /* 3 per vertex, owned */
    uint32_t nverts;
    uint32_t *tris; /* 3 per triangle, owned */
    uint32_t ntris;
} pf_obj;

/* Parses buf[0..len). PF_OK: *out owns arrays (pf_obj_free); a mesh with no
 * face is PF_EINVAL. PF_EPARSE for malformed text, PF_ELIMIT past a limit,
 * PF_ENOMEM; then *out is empty and err says which line and why. */
pf_status pf_obj_parse(const char *buf, size_t len, uint32_t max_vertices, uint32_t max_triangles,
                       pf_obj *out, pf_nav_error *err);

/* Frees the arrays and empties *o. NULL is a no-op. */
void pf_obj_free(pf_obj *o);

/* The geometry view of o for pf_nav_build (borrows o). */
pf_nav_geom pf_obj_geom(const pf_obj *o);

#endif
