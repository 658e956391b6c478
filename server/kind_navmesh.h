/* kind_navmesh.h -- navigation meshes as a world kind (kind.h): Recast
 * builds from OBJ geometry or a grid (nav/navmesh.h), DetourTileCache
 * obstacles and areas, polyanya and Detour paths, path corridor sessions,
 * and crowds (crowd.h, this kind's own feature).
 *
 * The kind is the table pf_kind_navmesh; the rest of the server reaches a
 * navmesh through it. What this header adds is for the navmesh's own
 * modules (crowd.c, kind_navmesh_*.c) and for tests that make versions
 * without a server.
 *
 * Files: kind_navmesh.c (the table, the environment, the world, uploads,
 * PATCH, stores), kind_navmesh_image.c (the stores' image, C only),
 * kind_navmesh_path.c (path queries), kind_navmesh_session.c (corridor
 * sessions), kind_navmesh_export.c (GET .../mesh); kind_navmesh_internal.h is what they share.
 */
#ifndef PF_SERVER_KIND_NAVMESH_H
#define PF_SERVER_KIND_NAVMESH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kind.h"
#include "navmesh.h"
#include "navq.h"
#include "registry.h"

extern const pf_kind_ops pf_kind_navmesh;

/* A navmesh session's corridor holds at most this many polygons; a longer
 * path is answered partial, as far as the corridor reaches. */
#define PF_SESSION_NAV_MAX_POLYS 4096u
/* What the memory budget reserves for a new navmesh session: its record and
 * a corridor of PF_SESSION_NAV_MAX_POLYS polygons, with room to spare. */
#define PF_SESSION_NAV_RESERVE (64u * 1024u)

/* What a navmesh map was uploaded as, shared by all its versions: the
 * store's envelope source members (nav_json.h), reference counted. */
typedef struct pf_navsrc {
    atomic_int refs;
    size_t len;
    char members[]; /* len bytes, no NUL needed */
} pf_navsrc;

/* A source of len bytes copied from members, one reference. NULL on ENOMEM. */
pf_navsrc *pf_navsrc_create(const char *members, size_t len);
void pf_navsrc_retain(pf_navsrc *s);
void pf_navsrc_release(pf_navsrc *s);

/* The mesh of navmesh version mv, and the upload it came from. mv must be
 * a navmesh's. */
const pf_navmesh *pf_navmesh_of(const pf_mapver *mv);
pf_navsrc *pf_navmesh_source(const pf_mapver *mv);

/* A navmesh version of map id outside any server (env NULL): takes nav's
 * reference and src's (also on failure). NULL on ENOMEM. */
pf_mapver *pf_navmesh_mapver_create(const char *id, const pf_navmesh *nav, pf_navsrc *src,
                                    size_t cache_entries, size_t cache_bytes, uint64_t build_us,
                                    const uint8_t hash[32]);

/* The query scratch of env (navq.h: the jobs borrow one a job), for the
 * navmesh's own modules (crowds). */
pf_navq *pf_navmesh_navq(const pf_kind_env *env);

/* The stores' image of a navmesh map: its envelope (n bytes) at `version`
 * (free() the image), and its inverse (*bytes points into buf). Layout in
 * kind_navmesh_image.c. PF_EPARSE for a damaged image, PF_ENOMEM. */
pf_status pf_navmesh_image_encode(const char *bytes, size_t n, uint64_t version,
                                  unsigned char **out, size_t *len);
pf_status pf_navmesh_image_decode(const unsigned char *buf, size_t len, const char **bytes,
                                  size_t *n, uint64_t *version);

#endif
