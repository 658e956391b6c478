/* links.cpp -- off-mesh links (Detour's off-mesh connections): their
 * checks, the tile each is filed in, and the area ids that carry their
 * cost. A link's cost is its length times its cost factor times its area's
 * cost; links of one area and factor share an area id (a link cost class)
 * whose cost Detour's filter holds, so a link costs what it says without a
 * custom filter.
 */
#include "nav_internal.h"

namespace pfnav {

int cmp_link(const void *a, const void *b) {
    return strcmp(((const pf_nav_link *)a)->id, ((const pf_nav_link *)b)->id);
}

namespace {

/* The tile grid cell of x/z point p; false when outside the grid. */
bool point_tile(const NavBase *b, const float *p, int *tx, int *tz) {
    if (b->solo) {
        *tx = *tz = 0;
        return p[0] >= b->bmin[0] && p[0] <= b->bmax[0] && p[2] >= b->bmin[2] && p[2] <= b->bmax[2];
    }
    const double fx = floor(((double)p[0] - b->bmin[0]) / b->tile_world);
    const double fz = floor(((double)p[2] - b->bmin[2]) / b->tile_world);
    if (fx < 0 || fz < 0 || fx >= b->tw || fz >= b->th) return false;
    *tx = (int)fx;
    *tz = (int)fz;
    return true;
}

/* The named area called name: its id, 0 when there is none. */
unsigned char named_area(const NavBase *b, const char *name) {
    for (uint32_t a = 0; a < b->nnamed; a++)
        if (strcmp(b->areas[a].name, name) == 0) return b->areas[a].id;
    return 0;
}

pf_status check_link(const NavBase *b, const pf_nav_link *l, const char *f, pf_nav_error *err) {
    char field[96];
    snprintf(field, sizeof field, "%s.id", f);
    if (!valid_name(l->id)) {
        set_err(err, field, "a link id is 1..63 characters of [A-Za-z0-9_.-]");
        return PF_EINVAL;
    }
    const float *pts[2] = {l->start, l->end};
    int tx[2] = {0, 0}, tz[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        snprintf(field, sizeof field, "%s.%s", f, k ? "end" : "start");
        const float *p = pts[k];
        if (!finite3(p) || !point_tile(b, p, &tx[k], &tz[k]) || p[1] < b->bmin[1] - 1.0f ||
            p[1] > b->bmax[1] + b->agents[0].height) {
            set_err(err, field,
                    "a link's %s must lie within the world's bounds (%g..%g, %g..%g, %g..%g)",
                    k ? "end" : "start", (double)b->bmin[0], (double)b->bmax[0], (double)b->bmin[1],
                    (double)b->bmax[1], (double)b->bmin[2], (double)b->bmax[2]);
            return PF_EINVAL;
        }
    }
    if (abs(tx[0] - tx[1]) > 1 || abs(tz[0] - tz[1]) > 1) {
        snprintf(field, sizeof field, "%s.end", f);
        set_err(err, field,
                "a link's end must lie in its start's tile or a neighbouring one (Detour connects "
                "no further): it is %d tiles away; use a larger tile_size or a shorter link",
                abs(tx[0] - tx[1]) > abs(tz[0] - tz[1]) ? abs(tx[0] - tx[1]) : abs(tz[0] - tz[1]));
        return PF_EINVAL;
    }
    snprintf(field, sizeof field, "%s.radius", f);
    if (!(isfinite(l->radius) && l->radius <= 1000)) {
        set_err(err, field,
                "a link's radius is a number in (0, 1000] (0 or less: the map's agent "
                "radius)");
        return PF_EINVAL;
    }
    snprintf(field, sizeof field, "%s.cost", f);
    if (!(isfinite(l->cost) && l->cost >= 0.01f && l->cost <= 1000)) {
        set_err(err, field, "a link's cost is a number in [0.01, 1000]");
        return PF_EINVAL;
    }
    snprintf(field, sizeof field, "%s.area", f);
    if (l->area[0] && !named_area(b, l->area)) {
        set_err(err, field, "no area '%.63s' on this map", l->area);
        return PF_EINVAL;
    }
    return PF_OK;
}

} /* namespace */

pf_status check_links(const NavBase *b, const pf_nav_link *links, size_t n, const char *prefix,
                      pf_nav_error *err) {
    for (size_t i = 0; i < n; i++) {
        char f[64];
        snprintf(f, sizeof f, "%s[%zu]", prefix, i);
        pf_status st = check_link(b, &links[i], f, err);
        if (st) return st;
    }
    return PF_OK;
}

int link_tile(const NavBase *b, const pf_nav_link *l) {
    int tx, tz;
    if (!point_tile(b, l->start, &tx, &tz)) return -1;
    return tx + tz * b->tw;
}

pf_status link_classes(const NavBase *b, const pf_nav_link *links, uint32_t n,
                       const LinkClass *prev, uint32_t nprev, LinkClass **classes,
                       uint32_t *nclasses, unsigned char **link_area, pf_nav_error *err) {
    *classes = NULL;
    *nclasses = 0;
    *link_area = (unsigned char *)malloc(n ? n : 1);
    LinkClass *cl = (LinkClass *)calloc(64, sizeof *cl);
    bool used[64];
    uint32_t nc = 0;
    memset(used, 0, sizeof used);
    if (!*link_area || !cl) {
        free(*link_area);
        *link_area = NULL;
        free(cl);
        set_err(err, "", "out of memory");
        return PF_ENOMEM;
    }
    /* Classes of prev that stay in use keep their ids: their tiles need no
     * rebuild for it. */
    for (uint32_t pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < n; i++) {
            const pf_nav_link *l = &links[i];
            const unsigned char base = l->area[0] ? named_area(b, l->area) : AREA_GROUND;
            if (l->cost == 1.0f) {
                (*link_area)[i] = base;
                continue;
            }
            int found = -1;
            for (uint32_t k = 0; k < nc && found < 0; k++)
                if (cl[k].base == base && cl[k].factor == l->cost) found = (int)k;
            if (found < 0 && pass == 0)
                for (uint32_t k = 0; k < nprev && found < 0; k++)
                    if (prev[k].base == base && prev[k].factor == l->cost) {
                        cl[nc] = prev[k];
                        used[prev[k].id] = true;
                        found = (int)nc++;
                    }
            if (found < 0 && pass == 1) {
                unsigned char id = b->first_link_area;
                while (id <= MAX_AREA_IDS && used[id]) id++;
                if (id > MAX_AREA_IDS) {
                    free(*link_area);
                    *link_area = NULL;
                    free(cl);
                    set_err(err, "links",
                            "the links have more distinct area and cost pairs than the %d area "
                            "ids the map has left",
                            MAX_AREA_IDS + 1 - (int)b->first_link_area);
                    return PF_ELIMIT;
                }
                used[id] = true;
                cl[nc].base = base;
                cl[nc].factor = l->cost;
                cl[nc].id = id;
                found = (int)nc++;
            }
            if (found >= 0) (*link_area)[i] = cl[found].id;
        }
    *classes = cl;
    *nclasses = nc;
    return PF_OK;
}

} /* namespace pfnav */
