/* map_json.c -- see map_json.h. */
#include "map_json.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "jsonr.h"
#include "map_io.h"

/* "costs", "id" and "version" make the answer of GET /v1/maps/{id}/cells an
 * upload as it is (pf_map_write_cells). */
static const char *const map_members[] = {
    "width",          "height", "rows",  "legend", "connectivity",
    "corner_cutting", "walls",  "doors", "costs",  "id",
    "version",        "kind",   NULL};

static bool dir_from(const char *s, int *dir) {
    if (strcmp(s, "E") == 0)
        *dir = PF_DIR_E;
    else if (strcmp(s, "W") == 0)
        *dir = PF_DIR_W;
    else if (strcmp(s, "S") == 0)
        *dir = PF_DIR_S;
    else if (strcmp(s, "N") == 0)
        *dir = PF_DIR_N;
    else
        return false;
    return true;
}

/* [x, y, "E"] -> an edge. */
static pf_status read_edge(const cJSON *it, const char *field, pf_edge *out, pf_proto_error *e) {
    const cJSON *x, *y, *d;
    int64_t vx, vy;
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 3) goto bad;
    x = it->child;
    y = x->next;
    d = y->next;
    if (!cJSON_IsString(d) || !dir_from(d->valuestring, &out->dir)) goto bad;
    if (pf_jsonr_int(x, field, INT32_MIN, INT32_MAX, &vx, e) ||
        pf_jsonr_int(y, field, INT32_MIN, INT32_MAX, &vy, e))
        goto bad;
    out->a.x = (int32_t)vx;
    out->a.y = (int32_t)vy;
    return PF_OK;
bad:
    return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, field,
                              "Field '%s' must be a wall [x, y, side] with side E, W, S or N.",
                              field);
}

static pf_status build_legend(const cJSON *lg, pf_legend legend, pf_proto_error *e) {
    char f[48];
    pf_status st;
    pf_legend_movingai(legend);
    legend['#'] = 0;
    if (!lg) return PF_OK;
    if ((st = pf_jsonr_object(lg, "legend", e))) return st;
    for (const cJSON *m = lg->child; m; m = m->next) {
        int64_t cost;
        unsigned char c = m->string ? (unsigned char)m->string[0] : 0;
        snprintf(f, sizeof(f), "legend.%.32s", m->string ? m->string : "");
        if (!m->string || strlen(m->string) != 1 || c < 0x21 || c > 0x7e)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Legend keys must be single printable ASCII characters.");
        if ((st = pf_jsonr_int(m, f, 0, 255, &cost, e))) return st;
        legend[c] = (int16_t)cost;
    }
    return PF_OK;
}

/* Declares the doors of `doors`. A door's "costs" (one 1..255 a cell, the
 * cost the cell gets when the door opens) are given to its cells before it
 * is declared, so the declaration records them (pf_grid_add_door). */
static pf_status read_doors(const cJSON *doors, pf_grid *g, pf_proto_error *e) {
    static const char *const door_members[] = {"cells", "walls", "open", "costs", NULL};
    char f[160], prefix[96];
    pf_status st = PF_OK;
    if ((st = pf_jsonr_object(doors, "doors", e))) return st;
    for (const cJSON *d = doors->child; d; d = d->next) {
        const cJSON *cells, *walls, *open, *costs;
        pf_point *pts = NULL;
        pf_edge *edges = NULL;
        size_t npts = 0, nedges = 0, i;
        bool is_open = true;
        int32_t index;
        snprintf(prefix, sizeof(prefix), "doors.%.64s.", d->string);
        snprintf(f, sizeof(f), "doors.%.64s", d->string);
        if ((st = pf_jsonr_object(d, f, e))) return st;
        if ((st = pf_jsonr_check_members(d, door_members, prefix, e))) return st;
        cells = cJSON_GetObjectItemCaseSensitive(d, "cells");
        walls = cJSON_GetObjectItemCaseSensitive(d, "walls");
        open = cJSON_GetObjectItemCaseSensitive(d, "open");
        costs = cJSON_GetObjectItemCaseSensitive(d, "costs");
        if (open &&
            (st = pf_jsonr_bool(open, (snprintf(f, sizeof(f), "%sopen", prefix), f), &is_open, e)))
            return st;
        if ((cells && !cJSON_IsArray(cells)) || (walls && !cJSON_IsArray(walls)) ||
            (costs && !cJSON_IsArray(costs)))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST,
                                      (snprintf(f, sizeof(f), "%s%s", prefix,
                                                cells && !cJSON_IsArray(cells)   ? "cells"
                                                : walls && !cJSON_IsArray(walls) ? "walls"
                                                                                 : "costs"),
                                       f),
                                      "Field '%s' must be an array.", f);
        npts = cells ? (size_t)cJSON_GetArraySize(cells) : 0;
        nedges = walls ? (size_t)cJSON_GetArraySize(walls) : 0;
        if (costs && (size_t)cJSON_GetArraySize(costs) != npts)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE,
                                      (snprintf(f, sizeof(f), "%scosts", prefix), f),
                                      "Field '%s' has %d costs; the door has %zu cells.", f,
                                      cJSON_GetArraySize(costs), npts);
        if (npts + nedges == 0)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Door '%.64s' needs at least one cell or wall.", d->string);
        pts = calloc(npts ? npts : 1, sizeof(*pts));
        edges = calloc(nedges ? nedges : 1, sizeof(*edges));
        if (!pts || !edges) {
            st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            goto out_free;
        }
        i = 0;
        for (const cJSON *c = cells ? cells->child : NULL; c; c = c->next, i++) {
            snprintf(f, sizeof(f), "%scells[%zu]", prefix, i);
            if ((st = pf_jsonr_point(c, f, &pts[i], e))) goto out_free;
            if (!pf_grid_in_bounds(g, pts[i])) {
                st = pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                        "Door cell '%s' is outside the map.", f);
                goto out_free;
            }
        }
        i = 0;
        for (const cJSON *c = costs ? costs->child : NULL; c; c = c->next, i++) {
            int64_t cost;
            snprintf(f, sizeof(f), "%scosts[%zu]", prefix, i);
            if ((st = pf_jsonr_int(c, f, 1, 255, &cost, e))) goto out_free;
            pf_grid_set_cost(g, pts[i], (uint8_t)cost); /* in bounds: checked above */
        }
        i = 0;
        for (const cJSON *c = walls ? walls->child : NULL; c; c = c->next, i++) {
            pf_point b;
            snprintf(f, sizeof(f), "%swalls[%zu]", prefix, i);
            if ((st = read_edge(c, f, &edges[i], e))) goto out_free;
            b.x = edges[i].a.x + pf_dir_dx[edges[i].dir];
            b.y = edges[i].a.y + pf_dir_dy[edges[i].dir];
            if (!pf_grid_in_bounds(g, edges[i].a) || !pf_grid_in_bounds(g, b)) {
                st = pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                        "Door wall '%s' is not between two cells of the map.", f);
                goto out_free;
            }
        }
        snprintf(f, sizeof(f), "doors.%.64s", d->string);
        st = pf_grid_add_door(g, d->string, pts, npts, edges, nedges, is_open, &index);
        if (st == PF_ELIMIT)
            pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, "doors", "Too many doors.");
        else if (st == PF_ENOMEM)
            pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        else if (st)
            pf_proto_error_set(e, st, PF_ERR_INVALID_VALUE, f,
                               "Door '%.64s' is invalid: a name is 1 to %d bytes and unique.",
                               d->string, PF_DOOR_NAME_MAX - 1);
    out_free:
        free(pts);
        free(edges);
        if (st) return st;
    }
    return PF_OK;
}

/* The grid of the "rows" form: each character through the legend. */
static pf_status grid_from_rows(const cJSON *rows, int64_t width, int64_t height,
                                const pf_legend legend, const pf_grid_limits *L, pf_grid **out,
                                pf_proto_error *e) {
    const cJSON *it;
    const char **rowp = NULL;
    size_t *lens = NULL, nrows = 0, i;
    pf_parse_error perr;
    pf_status st;
    char f[48];

    if (!cJSON_IsArray(rows))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "rows",
                                  "Field 'rows' is required: an array of strings, one per row.");
    for (it = rows->child; it; it = it->next) nrows++;
    if (nrows == 0 || (height >= 0 && (size_t)height != nrows))
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "rows",
                                  "Field 'rows' has %zu rows; the map needs height (%lld) rows, "
                                  "at least one.",
                                  nrows, (long long)(height >= 0 ? height : 1));
    if (nrows > (size_t)L->max_side)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "rows",
                                  "The map has %zu rows; at most %d are accepted.", nrows,
                                  (int)L->max_side);
    rowp = calloc(nrows, sizeof(*rowp));
    lens = calloc(nrows, sizeof(*lens));
    if (!rowp || !lens) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_free_rows;
    }
    i = 0;
    for (it = rows->child; it; it = it->next, i++) {
        snprintf(f, sizeof(f), "rows[%zu]", i);
        if ((st = pf_jsonr_string(it, f, &rowp[i], e))) goto out_free_rows;
        lens[i] = strlen(rowp[i]);
        if (width >= 0 && lens[i] != (size_t)width) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                    "Row %zu has %zu cells; width is %lld.", i, lens[i],
                                    (long long)width);
            goto out_free_rows;
        }
    }
    st = pf_map_from_rows(rowp, lens, (int32_t)nrows, legend, L, out, &perr);
    if (st == PF_ELIMIT) {
        pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, "rows",
                           "The map is larger than this server accepts: %s", perr.msg);
    } else if (st == PF_ENOMEM) {
        pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    } else if (st) {
        snprintf(f, sizeof(f), "rows[%d]", perr.line > 0 ? (int)perr.line - 1 : 0);
        st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f, "%s: %s", f, perr.msg);
    }
out_free_rows:
    free(rowp);
    free(lens);
    return st;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The grid of the "costs" form (what GET .../cells writes): two hex digits a
 * cell, row by row. The cells are decoded into bytes and read as rows whose
 * legend maps every byte to itself, so both forms build the grid alike. The
 * size is checked against the limits before anything is allocated. */
static pf_status grid_from_costs(const cJSON *costs, int64_t width, int64_t height,
                                 const pf_grid_limits *L, pf_grid **out, pf_proto_error *e) {
    const char *hex;
    size_t n, cells;
    char *bytes = NULL;
    const char **rowp = NULL;
    size_t *lens = NULL;
    pf_legend identity;
    pf_parse_error perr;
    pf_status st;

    if ((st = pf_jsonr_string(costs, "costs", &hex, e))) return st;
    if (width * height > L->max_cells)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "costs",
                                  "The map of %lldx%lld cells is larger than this server accepts "
                                  "(%lld cells).",
                                  (long long)width, (long long)height, (long long)L->max_cells);
    cells = (size_t)(width * height);
    n = strlen(hex);
    if (n != 2 * cells)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "costs",
                                  "Field 'costs' has %zu hex digits; %lldx%lld cells need %zu (two "
                                  "a cell).",
                                  n, (long long)width, (long long)height, 2 * cells);
    bytes = malloc(cells);
    rowp = calloc((size_t)height, sizeof(*rowp));
    lens = calloc((size_t)height, sizeof(*lens));
    if (!bytes || !rowp || !lens) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_free;
    }
    for (size_t i = 0; i < cells; i++) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "costs",
                                    "Field 'costs': cell %zu (x %lld, y %lld) is not two hex "
                                    "digits.",
                                    i, (long long)(i % (size_t)width),
                                    (long long)(i / (size_t)width));
            goto out_free;
        }
        bytes[i] = (char)(hi << 4 | lo);
    }
    for (int64_t y = 0; y < height; y++) {
        rowp[y] = bytes + y * width;
        lens[y] = (size_t)width;
    }
    for (int c = 0; c < 256; c++) identity[c] = (int16_t)c;
    st = pf_map_from_rows(rowp, lens, (int32_t)height, identity, L, out, &perr);
    if (st == PF_ELIMIT)
        pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, "costs",
                           "The map is larger than this server accepts: %s", perr.msg);
    else if (st)
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
out_free:
    free(bytes);
    free(rowp);
    free(lens);
    return st;
}

/* After the doors of a "costs" upload: every door cell and door edge gets
 * the state `truth` (the grid as the costs and walls gave it) says, so an
 * export whose doors overlap, or whose cells a later switch changed, comes
 * back exactly as it was written. The doors keep their states and open
 * costs. */
static void restore_door_state(pf_grid *g, const pf_grid *truth) {
    for (int32_t d = 0; d < pf_grid_door_count(g); d++) {
        size_t nc, ne;
        const pf_point *c = pf_grid_door_cells(g, d, &nc);
        const pf_edge *ed = pf_grid_door_edges(g, d, &ne);
        for (size_t k = 0; k < nc; k++) pf_grid_set_cost(g, c[k], pf_grid_cost(truth, c[k]));
        for (size_t k = 0; k < ne; k++)
            pf_grid_set_wall(g, ed[k].a, ed[k].dir, pf_grid_is_wall(truth, ed[k].a, ed[k].dir));
    }
}

pf_status pf_map_json_parse(const char *buf, size_t len, const pf_grid_limits *lim, pf_grid **out,
                            pf_proto_error *e) {
    cJSON *root;
    const cJSON *it, *rows, *costs, *doors;
    size_t i;
    pf_legend legend;
    pf_grid *g = NULL, *truth = NULL;
    pf_grid_limits L = lim ? *lim : pf_grid_default_limits();
    int64_t width = -1, height = -1, conn = 8, ignored;
    bool cut = false;
    const char *id;
    char f[48];
    pf_status st = pf_jsonr_parse(buf, len, &root, e);

    *out = NULL;
    if (st) return st;
    if ((st = pf_jsonr_object(root, NULL, e))) goto out_free_root;
    if ((st = pf_jsonr_check_members(root, map_members, "", e))) goto out_free_root;
    /* An export's id and version are read-only there: the URL names the
     * map and the server counts its versions. Checked, then ignored. */
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "id")) &&
        (st = pf_jsonr_string(it, "id", &id, e)))
        goto out_free_root;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "version")) &&
        (st = pf_jsonr_int(it, "version", 0, INT64_MAX, &ignored, e)))
        goto out_free_root;
    /* "kind":"grid" says what it is (a navmesh upload says "navmesh"). */
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "kind")) &&
        ((st = pf_jsonr_string(it, "kind", &id, e)) || strcmp(id, "grid") != 0)) {
        if (!st)
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "kind",
                                    "Field 'kind' of a grid map is \"grid\".");
        goto out_free_root;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "width")) &&
        (st = pf_jsonr_int(it, "width", 1, L.max_side, &width, e)))
        goto out_free_root;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "height")) &&
        (st = pf_jsonr_int(it, "height", 1, L.max_side, &height, e)))
        goto out_free_root;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "connectivity"))) {
        if ((st = pf_jsonr_int(it, "connectivity", 4, 8, &conn, e))) goto out_free_root;
        if (conn != 4 && conn != 8) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "connectivity",
                                    "Field 'connectivity' must be 4 or 8.");
            goto out_free_root;
        }
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "corner_cutting")) &&
        (st = pf_jsonr_bool(it, "corner_cutting", &cut, e)))
        goto out_free_root;

    rows = cJSON_GetObjectItemCaseSensitive(root, "rows");
    costs = cJSON_GetObjectItemCaseSensitive(root, "costs");
    if (costs) {
        const char *missing = width < 0 ? "width" : height < 0 ? "height" : NULL;
        if (rows || cJSON_GetObjectItemCaseSensitive(root, "legend")) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, rows ? "rows" : "legend",
                                    "Field '%s' goes with 'rows'; 'costs' gives every cell's cost "
                                    "itself. Send one form.",
                                    rows ? "rows" : "legend");
            goto out_free_root;
        }
        if (missing) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, missing,
                                    "Field '%s' is required with 'costs'.", missing);
            goto out_free_root;
        }
        st = grid_from_costs(costs, width, height, &L, &g, e);
    } else if (!rows) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "rows",
                                "Field 'rows' is required: an array of strings, one per row (or "
                                "'costs' with width and height, as GET .../cells writes).");
    } else if (!(st = build_legend(cJSON_GetObjectItemCaseSensitive(root, "legend"), legend, e))) {
        st = grid_from_rows(rows, width, height, legend, &L, &g, e);
    }
    if (st) goto out_free_root;
    if (pf_grid_set_rules(g, (int)conn, cut) != PF_OK) {
        st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "connectivity",
                                "Field 'connectivity' must be 4 or 8.");
        goto out_free_grid;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "walls"))) {
        if (!cJSON_IsArray(it)) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "walls",
                                    "Field 'walls' must be an array of [x, y, side].");
            goto out_free_grid;
        }
        i = 0;
        for (const cJSON *w = it->child; w; w = w->next, i++) {
            pf_edge edge;
            snprintf(f, sizeof(f), "walls[%zu]", i);
            if ((st = read_edge(w, f, &edge, e))) goto out_free_grid;
            if ((st = pf_grid_set_wall(g, edge.a, edge.dir, true))) {
                st = pf_proto_error_set(e, PF_ERANGE, PF_ERR_OFF_MAP, f,
                                        "Wall '%s' is not between two cells of the map.", f);
                goto out_free_grid;
            }
        }
    }
    if ((doors = cJSON_GetObjectItemCaseSensitive(root, "doors"))) {
        if (costs && !(truth = pf_grid_clone(g))) {
            st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            goto out_free_grid;
        }
        if ((st = read_doors(doors, g, e))) goto out_free_grid;
        if (truth) restore_door_state(g, truth);
    }
    *out = g;
    g = NULL;
    st = PF_OK;

out_free_grid:
    pf_grid_destroy(truth);
    pf_grid_destroy(g);
out_free_root:
    cJSON_Delete(root);
    return st;
}

pf_status pf_map_text_parse(const char *buf, size_t len, const pf_grid_limits *lim, pf_grid **out,
                            pf_proto_error *e) {
    pf_parse_error perr;
    pf_status st = pf_map_parse_movingai(buf, len, lim, out, &perr);
    if (st == PF_OK) return PF_OK;
    if (st == PF_ELIMIT)
        return pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, NULL,
                                  "The map is larger than this server accepts: %s", perr.msg);
    if (st == PF_ENOMEM) return pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (perr.line > 0)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, NULL,
                                  "Moving AI map, line %d: %s", (int)perr.line, perr.msg);
    return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, NULL, "Moving AI map: %s",
                              perr.msg);
}

/* What the build measured for auto (planner.h), as MapInfo.auto. */
static void write_auto(pf_jsonw *w, const pf_planner *p) {
    pf_planner_auto_info ai;
    pf_planner_auto_info_get(p, &ai);
    pf_jsonw_key(w, "auto");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "exact", pf_algorithm_name(ai.exact));
    pf_jsonw_kbool(w, "measured", ai.calibrated);
    pf_jsonw_kbool(w, "always_exact", ai.exact_faster);
    pf_jsonw_kuint(w, "measure_us", ai.calibrate_us);
    pf_jsonw_key(w, "bins");
    pf_jsonw_arr_begin(w);
    for (int b = 0; ai.calibrated && b < PF_PLANNER_AUTO_BINS; b++) {
        pf_jsonw_obj_begin(w);
        pf_jsonw_key(w, "max_distance");
        if (isfinite(ai.bins[b].max_distance))
            pf_jsonw_double(w, ai.bins[b].max_distance);
        else
            pf_jsonw_null(w);
        pf_jsonw_kint(w, "samples", ai.bins[b].samples);
        pf_jsonw_key(w, "exact_us");
        if (ai.bins[b].samples && isfinite(ai.bins[b].exact_us))
            pf_jsonw_double(w, ai.bins[b].exact_us);
        else
            pf_jsonw_null(w);
        pf_jsonw_key(w, "hpa_us");
        if (ai.bins[b].samples)
            pf_jsonw_double(w, ai.bins[b].hpa_us);
        else
            pf_jsonw_null(w);
        pf_jsonw_key(w, "subgoal_us");
        if (ai.bins[b].samples && ai.bins[b].subgoal_us > 0)
            pf_jsonw_double(w, ai.bins[b].subgoal_us);
        else
            pf_jsonw_null(w);
        pf_jsonw_kstr(w, "pick", pf_algorithm_name(ai.bins[b].pick));
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
    pf_jsonw_obj_end(w);
}

void pf_map_write_shape(pf_jsonw *w, const pf_grid *g) {
    pf_jsonw_kint(w, "width", pf_grid_width(g));
    pf_jsonw_kint(w, "height", pf_grid_height(g));
    pf_jsonw_kint(w, "connectivity", pf_grid_connectivity(g));
    pf_jsonw_kbool(w, "corner_cutting", pf_grid_corner_cutting(g));
    pf_jsonw_kint(w, "walkable_cells", pf_grid_walkable_count(g));
    pf_jsonw_kbool(w, "uniform_cost", pf_grid_is_uniform(g));
    pf_jsonw_kint(w, "doors", pf_grid_door_count(g));
}

void pf_map_write_info(pf_jsonw *w, const pf_map_info *info) {
    const pf_grid *g = pf_planner_grid(info->planner);
    uint64_t lookups = info->cache_hits + info->cache_misses;
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "id", info->id);
    pf_jsonw_kuint(w, "version", info->version);
    pf_jsonw_kstr(w, "kind", "grid");
    pf_map_write_shape(w, g);
    pf_jsonw_kuint(w, "memory_bytes", pf_planner_memory(info->planner));
    pf_jsonw_kint(w, "jps_landmarks", pf_planner_landmark_count(info->planner));
    pf_jsonw_kdouble(w, "jps_dead_ends", pf_planner_dead_ends(info->planner));
    {
        pf_planner_subgoal_info si;
        pf_planner_subgoal_stats(info->planner, &si);
        pf_jsonw_key(w, "subgoal");
        pf_jsonw_obj_begin(w);
        pf_jsonw_kbool(w, "built", si.built);
        pf_jsonw_kint(w, "subgoals", si.subgoals);
        pf_jsonw_kint(w, "edges", si.edges);
        pf_jsonw_kint(w, "shortcuts", si.shortcuts);
        pf_jsonw_kint(w, "core", si.core);
        pf_jsonw_kuint(w, "work", si.work);
        pf_jsonw_kuint(w, "memory_bytes", si.memory_bytes);
        pf_jsonw_kuint(w, "build_us", si.build_us);
        pf_jsonw_obj_end(w);
    }
    {
        static const char *const layouts[] = {"auto", "scan", "bits", "tables"};
        pf_jps_stats js;
        pf_planner_jps_stats(info->planner, &js);
        pf_jsonw_kuint(w, "jps_table_bytes", js.table_bytes);
        pf_jsonw_kstr(w, "jps_layout", layouts[js.layout]);
    }
    pf_jsonw_kuint(w, "build_us", info->build_us);
    pf_jsonw_kstr(w, "default_algorithm", info->default_algorithm);
    pf_jsonw_key(w, "hierarchy");
    if (pf_planner_has_hpa(info->planner)) {
        pf_jsonw_obj_begin(w);
        pf_jsonw_kuint(w, "build_us", pf_planner_hpa_build_us(info->planner));
        pf_jsonw_obj_end(w);
    } else {
        pf_jsonw_null(w);
    }
    {
        /* Agent sizes used on this version so far (agents.h). */
        pf_agents_class_stats cls[PF_AGENT_SIZE_MAX];
        size_t n = pf_agents_stats(pf_planner_agents(info->planner), cls, PF_AGENT_SIZE_MAX);
        pf_jsonw_key(w, "agent_sizes");
        pf_jsonw_arr_begin(w);
        for (size_t i = 0; i < n && i < PF_AGENT_SIZE_MAX; i++) {
            pf_jsonw_obj_begin(w);
            pf_jsonw_kint(w, "size", cls[i].size);
            pf_jsonw_kbool(w, "hierarchy", cls[i].has_hpa);
            pf_jsonw_kuint(w, "grid_build_us", cls[i].grid_us);
            pf_jsonw_kuint(w, "hierarchy_build_us", cls[i].hpa_us);
            pf_jsonw_kuint(w, "memory_bytes", cls[i].memory_bytes);
            pf_jsonw_obj_end(w);
        }
        pf_jsonw_arr_end(w);
    }
    write_auto(w, info->planner);
    pf_jsonw_key(w, "cache");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "entries", info->cache_entries);
    pf_jsonw_kuint(w, "hits", info->cache_hits);
    pf_jsonw_kuint(w, "misses", info->cache_misses);
    pf_jsonw_kdouble(w, "hit_ratio", lookups ? (double)info->cache_hits / (double)lookups : 0.0);
    pf_jsonw_obj_end(w);
    pf_jsonw_key(w, "flowfield_cache");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "entries", info->field_cache_entries);
    pf_jsonw_kuint(w, "hits", info->field_cache_hits);
    pf_jsonw_kuint(w, "misses", info->field_cache_misses);
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
}

static void write_edge(pf_jsonw *w, pf_point a, int dir) {
    char name[2] = {0, 0};
    switch (dir) {
    case PF_DIR_E:
        name[0] = 'E';
        break;
    case PF_DIR_W:
        name[0] = 'W';
        break;
    case PF_DIR_S:
        name[0] = 'S';
        break;
    default:
        name[0] = 'N';
        break;
    }
    pf_jsonw_arr_begin(w);
    pf_jsonw_int(w, a.x);
    pf_jsonw_int(w, a.y);
    pf_jsonw_str(w, name);
    pf_jsonw_arr_end(w);
}

void pf_map_write_cells(pf_jsonw *w, const char *id, uint64_t version, const pf_grid *g) {
    static const char hex[] = "0123456789abcdef";
    int32_t W = pf_grid_width(g), H = pf_grid_height(g);
    char *row = malloc((size_t)W * 2 + 1);
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "id", id);
    pf_jsonw_kuint(w, "version", version);
    pf_jsonw_kint(w, "width", W);
    pf_jsonw_kint(w, "height", H);
    pf_jsonw_kint(w, "connectivity", pf_grid_connectivity(g));
    pf_jsonw_kbool(w, "corner_cutting", pf_grid_corner_cutting(g));
    pf_jsonw_key(w, "costs");
    if (!row) {
        pf_jsonw_null(w); /* the writer's own allocations fail too, and say so */
    } else {
        /* One string, appended a row at a time: hex needs no escaping. */
        pf_jsonw_raw(w, "\"", 1);
        for (int32_t y = 0; y < H; y++) {
            for (int32_t x = 0; x < W; x++) {
                uint8_t c = pf_grid_cost(g, (pf_point){x, y});
                row[2 * x] = hex[c >> 4];
                row[2 * x + 1] = hex[c & 15];
            }
            pf_jsonw_append(w, row, (size_t)W * 2);
        }
        pf_jsonw_append(w, "\"", 1);
        free(row);
    }
    pf_jsonw_key(w, "walls");
    pf_jsonw_arr_begin(w);
    if (pf_grid_has_walls(g))
        for (int32_t y = 0; y < H; y++)
            for (int32_t x = 0; x < W; x++) {
                pf_point p = {x, y};
                if (x + 1 < W && pf_grid_is_wall(g, p, PF_DIR_E)) write_edge(w, p, PF_DIR_E);
                if (y + 1 < H && pf_grid_is_wall(g, p, PF_DIR_S)) write_edge(w, p, PF_DIR_S);
            }
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "doors");
    pf_jsonw_obj_begin(w);
    for (int32_t d = 0; d < pf_grid_door_count(g); d++) {
        size_t nc, ne;
        const pf_point *c = pf_grid_door_cells(g, d, &nc);
        const pf_edge *e = pf_grid_door_edges(g, d, &ne);
        pf_jsonw_key(w, pf_grid_door_name(g, d));
        pf_jsonw_obj_begin(w);
        pf_jsonw_kbool(w, "open", pf_grid_door_is_open(g, d));
        pf_jsonw_key(w, "cells");
        pf_jsonw_arr_begin(w);
        for (size_t k = 0; k < nc; k++) pf_jsonw_point(w, c[k].x, c[k].y);
        pf_jsonw_arr_end(w);
        pf_jsonw_key(w, "walls");
        pf_jsonw_arr_begin(w);
        for (size_t k = 0; k < ne; k++) write_edge(w, e[k].a, e[k].dir);
        pf_jsonw_arr_end(w);
        pf_jsonw_key(w, "costs");
        pf_jsonw_arr_begin(w);
        for (size_t k = 0; k < nc; k++) pf_jsonw_int(w, pf_grid_door_open_cost(g, d, k));
        pf_jsonw_arr_end(w);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
}
