/* map_io.h -- parsers from memory buffers: Moving AI .map and .scen files and
 * ASCII rows with a legend of costs.
 *
 * Parsers never read files; the caller hands them a buffer and its length
 * (no NUL needed). Width x height is checked against the limits before any
 * allocation. Every error fills a pf_parse_error with the 1-based line and a
 * sentence saying what was wrong. Both "\n" and "\r\n" line ends are read.
 */
#ifndef PF_MAP_IO_H
#define PF_MAP_IO_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"

typedef struct pf_parse_error {
    int32_t line; /* 1-based; 0 when the error is not tied to a line */
    char msg[200];
} pf_parse_error;

/* Moving AI map: "type octile", "height H", "width W", "map", then H rows of
 * W characters. '.', 'G', 'S' are walkable (cost 1); '@', 'O', 'T', 'W' are
 * blocked. The grid is 8-connected without corner cutting. On success *out
 * owns the new grid. PF_EPARSE, PF_ELIMIT or PF_ENOMEM otherwise, *out NULL. */
pf_status pf_map_parse_movingai(const char *buf, size_t len, const pf_grid_limits *lim,
                                pf_grid **out, pf_parse_error *err);

/* legend[c] is the cost of character c (0..255), or -1 when c is not allowed. */
typedef int16_t pf_legend[256];

/* The legend '.'/'G'/'S' = 1, '@'/'O'/'T'/'W' = 0, everything else -1. */
void pf_legend_movingai(pf_legend legend);

/* Builds a grid from h rows (row y = rows[y], lens[y] bytes), every row the
 * same width, every character in the legend. 8-connected, no corner cutting. */
pf_status pf_map_from_rows(const char *const *rows, const size_t *lens, int32_t h,
                           const pf_legend legend, const pf_grid_limits *lim, pf_grid **out,
                           pf_parse_error *err);

/* ASCII rows separated by newlines (a trailing newline is allowed). */
pf_status pf_map_parse_ascii(const char *buf, size_t len, const pf_legend legend,
                             const pf_grid_limits *lim, pf_grid **out, pf_parse_error *err);

/* One line of a Moving AI scenario file. */
typedef struct pf_scen_entry {
    int32_t bucket;
    int32_t map_w, map_h;
    pf_point start, goal;
    double optimal; /* optimal length: 8-connected, sqrt(2) diagonals, no corner cutting */
} pf_scen_entry;

typedef struct pf_scen {
    char map[256]; /* the map field of the first entry, as written */
    pf_scen_entry *entries;
    size_t count;
} pf_scen;

/* Parses "version 1" then lines of 9 whitespace-separated fields: bucket map
 * width height start_x start_y goal_x goal_y optimal. At most max_entries
 * entries (0 = no limit, PF_ELIMIT past it). Free with pf_scen_free. */
pf_status pf_scen_parse(const char *buf, size_t len, size_t max_entries, pf_scen *out,
                        pf_parse_error *err);
void pf_scen_free(pf_scen *s);

/* The basename of a map path as written in a .scen file ("maps/dao/arena.map"
 * -> "arena.map"). Borrows from path. */
const char *pf_scen_map_basename(const char *path);

#endif
