/* maze_json.c -- see maze_json.h. */
#include "maze_json.h"

#include <stdio.h>
#include <string.h>

#include "jsonr.h"

static const char *const members[] = {"type",           "width", "height", "seed",
                                      "corridor_width", "walls", "loops",  "connectivity",
                                      "corner_cutting", "id",    NULL};

static pf_status required_int(const cJSON *root, const char *name, int64_t min, int64_t max,
                              int64_t *out, pf_proto_error *e) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, name);
    if (!it)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                  "Field '%s' is required.", name);
    return pf_jsonr_int(it, name, min, max, out, e);
}

pf_status pf_generate_request_parse(const char *buf, size_t len, const pf_grid_limits *lim,
                                    pf_generate_request *out, pf_proto_error *e) {
    pf_grid_limits l = lim ? *lim : pf_grid_default_limits();
    pf_generate_request r;
    cJSON *root;
    const cJSON *it;
    const char *s;
    int64_t w, h, iv;
    int32_t cols, rows;
    pf_status st;

    memset(&r, 0, sizeof(r));
    r.maze = pf_maze_params_make(0, 0, 0, 1);
    if ((st = pf_jsonr_parse(buf, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, NULL, e))) goto out;
    if ((st = pf_jsonr_check_members(root, members, "", e))) goto out;
    it = cJSON_GetObjectItemCaseSensitive(root, "type");
    if (!it) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "type",
                                "Field 'type' is required (\"maze\").");
        goto out;
    }
    if ((st = pf_jsonr_string(it, "type", &s, e))) goto out;
    if (strcmp(s, "maze") != 0) {
        st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "type",
                                "Unknown map type '%.40s'; the one generator is \"maze\".", s);
        goto out;
    }
    if ((st = required_int(root, "width", 1, INT32_MAX, &w, e))) goto out;
    if ((st = required_int(root, "height", 1, INT32_MAX, &h, e))) goto out;
    if (w > l.max_side || h > l.max_side) {
        const char *f = w > l.max_side ? "width" : "height";
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, f,
                                "Field '%s' is larger than this server's largest map side (%d).", f,
                                (int)l.max_side);
        goto out;
    }
    if (w * h > l.max_cells) {
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "width",
                                "A %lldx%lld map has more cells than this server allows (%lld).",
                                (long long)w, (long long)h, (long long)l.max_cells);
        goto out;
    }
    r.maze.width = (int32_t)w;
    r.maze.height = (int32_t)h;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "seed"))) {
        /* A JSON number is read as a double, exact for integers below
         * 2^53 only: 2^53 + 1 would read as 2^53 and give another seed's
         * maze. */
        if ((st = pf_jsonr_int(it, "seed", 0, (INT64_C(1) << 53) - 1, &iv, e))) goto out;
        r.maze.seed = (uint64_t)iv;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "corridor_width"))) {
        if ((st = pf_jsonr_int(it, "corridor_width", 1, PF_MAZE_MAX_CORRIDOR, &iv, e))) goto out;
        r.maze.corridor = (int32_t)iv;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "walls"))) {
        if ((st = pf_jsonr_string(it, "walls", &s, e))) goto out;
        if (strcmp(s, "cells") == 0) {
            r.maze.walls = PF_MAZE_WALL_CELLS;
        } else if (strcmp(s, "edges") == 0) {
            r.maze.walls = PF_MAZE_WALL_EDGES;
        } else {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "walls",
                                    "Unknown wall mode '%.40s'; use \"cells\" or \"edges\".", s);
            goto out;
        }
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "loops")) &&
        (st = pf_jsonr_number(it, "loops", 0.0, 1.0, &r.maze.loops, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "connectivity"))) {
        if ((st = pf_jsonr_int(it, "connectivity", 4, 8, &iv, e))) goto out;
        if (iv != 4 && iv != 8) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "connectivity",
                                    "Field 'connectivity' must be 4 or 8.");
            goto out;
        }
        r.maze.connectivity = (int)iv;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "corner_cutting")) &&
        (st = pf_jsonr_bool(it, "corner_cutting", &r.maze.corner_cutting, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "id"))) {
        if ((st = pf_jsonr_string(it, "id", &s, e))) goto out;
        if (!*s || strlen(s) > PF_GENERATE_ID_MAX) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "id",
                                    "Field 'id' must be 1 to %d characters.", PF_GENERATE_ID_MAX);
            goto out;
        }
        snprintf(r.id, sizeof(r.id), "%s", s);
        r.has_id = true;
    }
    if (pf_maze_rooms(&r.maze, &cols, &rows) == PF_ERANGE) {
        const char *f = r.maze.width < r.maze.height ? "width" : "height";
        int need = r.maze.corridor + (r.maze.walls == PF_MAZE_WALL_CELLS ? 2 : 0);
        st = pf_proto_error_set(e, PF_ERANGE, PF_ERR_INVALID_VALUE, f,
                                "A maze with corridor_width %d and walls \"%s\" needs a width and "
                                "height of at least %d.",
                                (int)r.maze.corridor,
                                r.maze.walls == PF_MAZE_WALL_CELLS ? "cells" : "edges", need);
        goto out;
    }
    *out = r;
out:
    cJSON_Delete(root);
    return st;
}

size_t pf_generate_canonical(const pf_generate_request *r, char *buf, size_t cap) {
    const pf_maze_params *m = &r->maze;
    int n = snprintf(buf, cap,
                     "maze w=%d h=%d seed=%llu corridor=%d walls=%s loops=%.17g conn=%d cut=%d",
                     (int)m->width, (int)m->height, (unsigned long long)m->seed, (int)m->corridor,
                     m->walls == PF_MAZE_WALL_CELLS ? "cells" : "edges", m->loops, m->connectivity,
                     (int)m->corner_cutting);
    return n < 0 ? 0 : (size_t)n;
}
