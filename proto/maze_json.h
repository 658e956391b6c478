/* maze_json.h -- map generation requests (POST /v1/maps/generate).
 *
 *   {"type":"maze",              required; the one generator so far
 *    "width":W, "height":H,      required, the map's size in cells (the map
 *                                limits apply: PF_ELIMIT naming the field)
 *    "seed":S,                   0..2^53-1 (default 0): the same seed, the same maze
 *    "corridor_width":1,         1..64 (maze.h)
 *    "walls":"cells",            "cells" (one-cell walls of blocked cells) or
 *                                "edges" (wall edges between rooms)
 *    "loops":0,                  0..1: each remaining inner wall removed with
 *                                this probability (0: a perfect maze)
 *    "connectivity":8,           4 or 8
 *    "corner_cutting":false,
 *    "id":"name"}                optional: publish under this id (as PUT
 *                                /v1/maps/{id}); the server checks its form
 * Unknown fields are rejected; errors name the field. The maze fitting the
 * size (at least one room) is checked here: PF_ERANGE naming "width" or
 * "height". Thread-safe.
 */
#ifndef PF_PROTO_MAZE_JSON_H
#define PF_PROTO_MAZE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "errors.h"
#include "grid.h"
#include "maze.h"

#define PF_GENERATE_ID_MAX 64

typedef struct pf_generate_request {
    pf_maze_params maze;
    bool has_id;
    char id[PF_GENERATE_ID_MAX + 1];
} pf_generate_request;

/* Parses a generate body against the map limits `lim` (NULL = defaults).
 * PF_EPARSE (malformed JSON, wrong types, missing fields, unknown ones, an
 * id too long), PF_EINVAL (a value out of range, an unknown type or wall
 * mode), PF_ERANGE (too small for one room), PF_ELIMIT (larger than lim). */
pf_status pf_generate_request_parse(const char *buf, size_t len, const pf_grid_limits *lim,
                                    pf_generate_request *out, pf_proto_error *e);

/* A canonical text of the parameters (without the id), NUL-terminated in
 * buf (>= 160 bytes): the server derives a generated map's id from it, so
 * the same request finds the same map. Returns the length. */
size_t pf_generate_canonical(const pf_generate_request *r, char *buf, size_t cap);

#endif
