/* mesh_json.h -- a navmesh version's geometry as JSON: the answer of
 * GET /v1/maps/{id}/mesh (server/routes_mesh.c), what the viewer draws in
 * 3D. Read-only; nav/navexport.h underneath.
 *
 * The answer (proto/openapi.yaml, NavMesh):
 *   {"id":"lvl","version":3,
 *    "navmesh":{...},                 the map info's member (bounds, settings,
 *                                     tiles, obstacles, areas), as GET /v1/maps/{id}
 *    "area_boxes":[[{"min":[x,y,z],"max":[x,y,z]},...],...],   per area, in
 *                                     navmesh.areas' order
 *    "counts":{"tiles","vertices","detail_vertices","polygons","triangles","links"},
 *    "tiles":[{"x":0,"z":0,"layer":0,"ref":N,
 *              "bounds":{"min":[..],"max":[..]},
 *              "vertices":[x,y,z, x,y,z, ...],       flat, 3 numbers a vertex
 *              "polygons":[[0,1,2,3],[...]],         indices into vertices; [a,b]
 *                                                    for an off-mesh link's polygon
 *              "areas":[63,...],                      Detour area id per polygon
 *              "walls":[5,...],                       bit j: edge j..j+1 is a wall
 *              "disabled":[4,...],                    polygons no query walks
 *              "detail_vertices":[x,y,z, ...],        flat (empty without a detail mesh)
 *              "triangles":[a,b,c, ...],              flat, indices into vertices
 *                                                     then detail_vertices
 *              "polygon_triangles":[2,4,...]}],       per polygon, in order
 *    "off_mesh_links":[{"start":[..],"end":[..],"radius":r,"bidirectional":true,
 *                       "area":n,"enabled":true,"ref":N}],
 *    "input":null | {"vertices":[...], "triangles":[...]}}
 * Polygon p of a tile has the reference ref + p (ref has p's bits clear):
 * the ids a path's corridor names. Numbers are rounded to 1e-4.
 *
 * Sizes: pf_mesh_size_bound is an upper bound of what pf_mesh_write
 * writes, computed from the counts alone, so a route refuses an answer
 * past its limit before it writes a byte. Thread-safe.
 */
#ifndef PF_PROTO_MESH_JSON_H
#define PF_PROTO_MESH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "jsonw.h"
#include "navexport.h"
#include "navmesh.h"
#include "obj.h"

typedef struct pf_mesh_options {
    bool triangles;      /* the surface triangles (and detail vertices) */
    const pf_obj *input; /* the input geometry to add, or NULL ("input": null) */
} pf_mesh_options;

/* Upper bound of the bytes pf_mesh_write writes for nm with o. */
uint64_t pf_mesh_size_bound(const pf_navmesh *nm, const pf_mesh_options *o);

/* Writes the answer (a whole object). */
void pf_mesh_write(pf_jsonw *w, const char *id, uint64_t version, const pf_navmesh *nm,
                   const pf_mesh_options *o);

/* The input geometry of a stored navmesh map: its source members (the
 * store's envelope without braces, registry.h's pf_navsrc) parsed, and
 * their "obj" read within max_vertices / max_triangles. PF_OK with *out
 * filled (pf_obj_free), or *out empty and *found false for a map made
 * from a grid (no OBJ). PF_ENOMEM; PF_EINVAL/PF_EPARSE/PF_ELIMIT with e set
 * when the members do not read back (they were written by this server). */
pf_status pf_mesh_source_obj(const char *members, size_t len, uint32_t max_vertices,
                             uint32_t max_triangles, pf_obj *out, bool *found, pf_proto_error *e);

#endif
