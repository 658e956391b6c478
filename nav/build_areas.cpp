/* build_areas.cpp -- the areas of a build: named areas from the input, a
 * converted grid's doors (one box a cell) and its cost classes (one unnamed
 * area per distinct cell cost above 1), and the area id of every grid cell.
 */
#include "nav_internal.h"

namespace pfnav {

namespace {

/* The input's named areas (names, costs, boxes) and the grid's doors (cells
 * only); the boxes in all (door cells included) within the limit. */
pf_status check_areas(const pf_nav_build_input *in, const pf_nav_limits *lim, uint32_t ndoors,
                      pf_nav_error *err) {
    const pf_grid *g = in->grid;
    uint64_t nboxes = 0;
    for (size_t i = 0; i < in->nareas; i++) {
        const pf_nav_area *a = &in->areas[i];
        char field[64];
        snprintf(field, sizeof field, "areas[%zu].id", i);
        if (!valid_name(a->name)) {
            set_err(err, field, "an area id is 1..63 characters of [A-Za-z0-9_.-]");
            return PF_EINVAL;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(in->areas[k].name, a->name) == 0) {
                set_err(err, field, "area '%s' is declared twice", a->name);
                return PF_EINVAL;
            }
        for (uint32_t d = 0; d < ndoors; d++)
            if (strcmp(pf_grid_door_name(g, (int32_t)d), a->name) == 0) {
                set_err(err, field, "area '%s' has the name of a door of the grid", a->name);
                return PF_EINVAL;
            }
        snprintf(field, sizeof field, "areas[%zu].cost", i);
        if (!(isfinite(a->cost) && a->cost >= 0.01f && a->cost <= 1000.0f)) {
            set_err(err, field, "an area's cost is a number in [0.01, 1000]");
            return PF_EINVAL;
        }
        snprintf(field, sizeof field, "areas[%zu].boxes", i);
        if (a->nboxes == 0) {
            set_err(err, field, "an area needs at least one box");
            return PF_EINVAL;
        }
        for (size_t k = 0; k < a->nboxes; k++) {
            snprintf(field, sizeof field, "areas[%zu].boxes[%zu]", i, k);
            pf_status st = check_box(&a->boxes[k], err, field);
            if (st) return st;
        }
        nboxes += a->nboxes;
    }
    for (uint32_t d = 0; d < ndoors; d++) {
        size_t nc = 0, ne = 0;
        pf_grid_door_cells(g, (int32_t)d, &nc);
        pf_grid_door_edges(g, (int32_t)d, &ne);
        if (ne) {
            set_err(err, "from_grid.doors",
                    "door '%s' has wall edges; navmesh conversion supports doors of cells only",
                    pf_grid_door_name(g, (int32_t)d));
            return PF_EUNSUPPORTED;
        }
        nboxes += nc;
    }
    if (nboxes > lim->max_area_boxes) {
        set_err(err, "limits.max_area_boxes", "%llu area boxes (door cells included), more than %u",
                (unsigned long long)nboxes, lim->max_area_boxes);
        return PF_ELIMIT;
    }
    return PF_OK;
}

/* A grid's cost classes: cost_class[c] = class of cost c > 1 (-1 none), in
 * order of first appearance (cells, then doors' open costs). */
uint32_t grid_cost_classes(const pf_grid *g, uint32_t ndoors, int cost_class[256]) {
    uint32_t nclasses = 0;
    const int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point p = {x, y};
            uint8_t c = pf_grid_cost(g, p);
            if (c > 1 && cost_class[c] < 0) cost_class[c] = (int)nclasses++;
        }
    /* Doors' cells: the cost they have when open. */
    for (uint32_t d = 0; d < ndoors; d++) {
        size_t nc = 0;
        pf_grid_door_cells(g, (int32_t)d, &nc);
        for (size_t k = 0; k < nc; k++) {
            uint8_t c = pf_grid_door_open_cost(g, (int32_t)d, k);
            if (c > 1 && cost_class[c] < 0) cost_class[c] = (int)nclasses++;
        }
    }
    return nclasses;
}

/* Area k: grid door d, one box a cell. False on ENOMEM. */
bool door_area(const pf_grid *g, uint32_t d, uint32_t k, AreaDef *ad) {
    size_t nc = 0;
    const pf_point *cells = pf_grid_door_cells(g, (int32_t)d, &nc);
    snprintf(ad->name, sizeof ad->name, "%s", pf_grid_door_name(g, (int32_t)d));
    ad->id = (unsigned char)(k + 1);
    ad->enabled0 = pf_grid_door_is_open(g, (int32_t)d);
    /* The door's cost: its cells' open cost (the largest, when they
     * differ: a door slows an agent at least as much as its worst
     * cell). */
    uint8_t c = 1;
    for (size_t q = 0; q < nc; q++) {
        uint8_t cq = pf_grid_door_open_cost(g, (int32_t)d, q);
        if (cq > c) c = cq;
    }
    ad->cost0 = (float)c;
    ad->boxes = (pf_nav_box *)malloc((nc ? nc : 1) * sizeof(pf_nav_box));
    if (!ad->boxes) return false;
    for (size_t q = 0; q < nc; q++) {
        pf_nav_box *bx = &ad->boxes[q];
        bx->bmin[0] = (float)cells[q].x;
        bx->bmin[1] = -1.0f;
        bx->bmin[2] = (float)cells[q].y;
        bx->bmax[0] = (float)cells[q].x + 1.0f;
        bx->bmax[1] = 1.0f;
        bx->bmax[2] = (float)cells[q].y + 1.0f;
    }
    ad->nboxes = nc;
    return true;
}

/* The base's areas: the input's, the doors', the cost classes'. False on
 * ENOMEM. */
bool fill_areas(NavBase *b, const pf_nav_build_input *in, uint32_t ndoors,
                const int cost_class[256]) {
    uint32_t k = 0;
    for (size_t i = 0; i < in->nareas; i++, k++) {
        const pf_nav_area *a = &in->areas[i];
        AreaDef *ad = &b->areas[k];
        snprintf(ad->name, sizeof ad->name, "%s", a->name);
        ad->id = (unsigned char)(k + 1);
        ad->cost0 = a->cost;
        ad->enabled0 = a->enabled;
        ad->boxes = (pf_nav_box *)malloc(a->nboxes * sizeof(pf_nav_box));
        if (!ad->boxes) return false;
        memcpy(ad->boxes, a->boxes, a->nboxes * sizeof(pf_nav_box));
        ad->nboxes = a->nboxes;
    }
    for (uint32_t d = 0; d < ndoors; d++, k++)
        if (!door_area(in->grid, d, k, &b->areas[k])) return false;
    for (int c = 2; c < 256; c++) {
        if (cost_class[c] < 0) continue;
        AreaDef *ad = &b->areas[b->nnamed + (uint32_t)cost_class[c]];
        ad->name[0] = '\0';
        ad->id = (unsigned char)(b->nnamed + (uint32_t)cost_class[c] + 1);
        ad->cost0 = (float)c;
        ad->enabled0 = true;
    }
    return true;
}

/* The area id of every grid cell: 0 blocked, plain ground, a cost class or
 * a door. */
void fill_cell_area(const NavBase *b, const pf_nav_build_input *in, uint32_t ndoors,
                    const int cost_class[256], unsigned char *cell_area) {
    const pf_grid *g = in->grid;
    const int32_t w = pf_grid_width(g), h = pf_grid_height(g);
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            pf_point p = {x, y};
            uint8_t c = pf_grid_cost(g, p);
            cell_area[(size_t)y * (size_t)w + (size_t)x] =
                c == 0   ? 0
                : c == 1 ? AREA_GROUND
                         : b->areas[b->nnamed + (uint32_t)cost_class[c]].id;
        }
    for (uint32_t d = 0; d < ndoors; d++) {
        size_t nc = 0;
        const pf_point *cells = pf_grid_door_cells(g, (int32_t)d, &nc);
        for (size_t q = 0; q < nc; q++)
            cell_area[(size_t)cells[q].y * (size_t)w + (size_t)cells[q].x] =
                b->areas[in->nareas + d].id;
    }
}

} /* namespace */

void mark_area_boxes(const NavBase *b, rcCompactHeightfield &chf) {
    for (uint32_t a = 0; a < b->nnamed; a++) {
        const AreaDef *ad = &b->areas[a];
        if (b->from_grid && ad->boxes == NULL) continue;
        for (size_t k = 0; k < ad->nboxes; k++) {
            const pf_nav_box *bx = &ad->boxes[k];
            int x0 = (int)ceilf((bx->bmin[0] - chf.bmin[0]) / chf.cs - 0.5f);
            int x1 = (int)floorf((bx->bmax[0] - chf.bmin[0]) / chf.cs - 0.5f);
            int z0 = (int)ceilf((bx->bmin[2] - chf.bmin[2]) / chf.cs - 0.5f);
            int z1 = (int)floorf((bx->bmax[2] - chf.bmin[2]) / chf.cs - 0.5f);
            if (x1 < 0 || z1 < 0 || x0 >= chf.width || z0 >= chf.height) continue;
            if (x0 < 0) x0 = 0;
            if (z0 < 0) z0 = 0;
            if (x1 >= chf.width) x1 = chf.width - 1;
            if (z1 >= chf.height) z1 = chf.height - 1;
            for (int z = z0; z <= z1; z++)
                for (int x = x0; x <= x1; x++) {
                    const rcCompactCell &c = chf.cells[x + z * chf.width];
                    for (unsigned i = c.index, ni = c.index + c.count; i < ni; i++) {
                        float top = chf.bmin[1] + (float)chf.spans[i].y * chf.ch;
                        if (top < bx->bmin[1] || top > bx->bmax[1]) continue;
                        if (chf.areas[i] != RC_NULL_AREA) chf.areas[i] = ad->id;
                    }
                }
        }
    }
}

uint64_t area_box_columns(const NavBase *b) {
    const float cs = b->cfg.cell_size;
    uint64_t n = 0;
    for (uint32_t a = 0; a < b->nnamed; a++)
        for (size_t k = 0; k < b->areas[a].nboxes; k++) {
            const pf_nav_box *bx = &b->areas[a].boxes[k];
            const double x0 = fmax(bx->bmin[0], b->bmin[0]), x1 = fmin(bx->bmax[0], b->bmax[0]);
            const double z0 = fmax(bx->bmin[2], b->bmin[2]), z1 = fmin(bx->bmax[2], b->bmax[2]);
            if (x1 < x0 || z1 < z0) continue;
            n += (uint64_t)(ceil((x1 - x0) / cs) + 1) * (uint64_t)(ceil((z1 - z0) / cs) + 1);
        }
    return n;
}

pf_status setup_areas(NavBase *b, const pf_nav_build_input *in, const pf_nav_limits *lim,
                      unsigned char **cell_area_out, pf_nav_error *err) {
    const pf_grid *g = in->grid;
    uint32_t ndoors = g ? (uint32_t)pf_grid_door_count(g) : 0;
    uint64_t nnamed = (uint64_t)in->nareas + ndoors;
    uint32_t max_areas = lim->max_areas < PF_NAV_MAX_AREAS ? lim->max_areas : PF_NAV_MAX_AREAS;
    if (nnamed > max_areas) {
        set_err(err, "limits.max_areas", "%llu named areas (with the grid's doors), more than %u",
                (unsigned long long)nnamed, max_areas);
        return PF_ELIMIT;
    }
    pf_status st = check_areas(in, lim, ndoors, err);
    if (st) return st;

    /* Cost classes of a grid: one per distinct cost > 1. */
    int cost_class[256];
    for (int c = 0; c < 256; c++) cost_class[c] = -1;
    uint32_t nclasses = 0;
    unsigned char *cell_area = NULL;
    if (g) {
        size_t ncells = (size_t)pf_grid_width(g) * (size_t)pf_grid_height(g);
        cell_area = (unsigned char *)malloc(ncells);
        if (!cell_area) {
            set_err(err, "from_grid", "out of memory");
            return PF_ENOMEM;
        }
        nclasses = grid_cost_classes(g, ndoors, cost_class);
        if (nnamed + nclasses > (uint64_t)MAX_AREA_IDS) {
            free(cell_area);
            set_err(err, "from_grid",
                    "%u distinct cell costs and %llu named areas need more than %d area ids",
                    nclasses, (unsigned long long)nnamed, MAX_AREA_IDS);
            return PF_ELIMIT;
        }
    }
    b->nnamed = (uint32_t)nnamed;
    b->nareas = (uint32_t)nnamed + nclasses;
    b->first_link_area = (unsigned char)(b->nareas + 1);
    b->areas = (AreaDef *)calloc(b->nareas ? b->nareas : 1, sizeof(AreaDef));
    if (!b->areas || !fill_areas(b, in, ndoors, cost_class)) {
        free(cell_area);
        set_err(err, "areas", "out of memory");
        return PF_ENOMEM;
    }
    if (g) fill_cell_area(b, in, ndoors, cost_class, cell_area);
    *cell_area_out = cell_area;
    return PF_OK;
}

} /* namespace pfnav */
