/* kind_navmesh_sight.c -- a navmesh's line of sight for other maps
 * (kind.h's line_of_sight): a 3D graph's auto_link on a navmesh map.
 *
 * Coordinates: a point [x, y, z] is in world coordinates, y up, as the
 * mesh's. Its polygon is the nearest within the agent type's default
 * search box (x and z: the larger of twice the agent's radius and four
 * cells; y: the agent's height), so a node's height only picks its floor:
 * a node with no polygon in its box sees nothing. Two points see each
 * other when they are on one polygon, or when Detour's raycast
 * (dtNavMeshQuery::raycast, in the ground plane) from the first one's
 * polygon towards the second hits no wall and ends in the second one's
 * polygon (nav/navmesh.h's pf_nav_line_of_sight). A 2D graph is refused:
 * its points have no height to find a floor with. */
#include <stdio.h>

#include "clock.h"
#include "kind_navmesh_internal.h"
#include "navq.h"

pf_status pf__nav_line_of_sight(const pf_mapver *mv, const char *agent_type, int dim,
                                const double *pos, const uint32_t *pairs, size_t n,
                                uint8_t *visible, const uint64_t *deadline, const char *prefix,
                                pf_proto_error *e) {
    const pf_navmesh *view;
    pf_nav_query *q;
    pf_status st = PF_OK;
    char f[64];
    if (dim != 3) {
        snprintf(f, sizeof(f), "%smap", prefix);
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Map '%s' is a navmesh map: it links 3D graphs (world "
                                  "coordinates, y up), and this graph is %dD.",
                                  mv->id, dim);
    }
    snprintf(f, sizeof(f), "%sagent_type", prefix);
    if ((st = pf_nav_agent_view(pf_navmesh_of(mv), agent_type, f, &view, e))) return st;
    if (!mv->env || !(q = pf_navq_get(pf__nav_env_of(mv->env)->navq)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (size_t k = 0; k < n && !st; k++) {
        const double *a = pos + 3 * (size_t)pairs[2 * k], *b = pos + 3 * (size_t)pairs[2 * k + 1];
        float fa[3] = {(float)a[0], (float)a[1], (float)a[2]};
        float fb[3] = {(float)b[0], (float)b[1], (float)b[2]};
        bool seen = false;
        if ((k & 1023) == 1023 && deadline && pf_clock_now_ns() >= *deadline) {
            st = PF_ECANCELED;
            break;
        }
        st = pf_nav_line_of_sight(q, view, fa, fb, &seen);
        /* A point past float's range (ERANGE) sees nothing. */
        if (st == PF_ERANGE) st = PF_OK;
        visible[k] = seen;
    }
    pf_navq_put(pf__nav_env_of(mv->env)->navq, q);
    if (st == PF_ENOMEM)
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    return st;
}
