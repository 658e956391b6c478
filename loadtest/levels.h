/* levels.h -- generated 3D levels for `pathd-bench navmesh`: triangle soups
 * made from fixed formulas and a seed, built in the process (nothing read,
 * nothing written), so the navmesh baseline runs on levels that are not
 * grid maps.
 *
 *   multifloor  a 48 x 48 building of three floors 4 apart, each floor cut
 *               by walls with doorways, joined by two ramps (about 22
 *               degrees) through openings in the floor above, and a roof
 *               terrace no ramp reaches (goals there are unreachable)
 *   terrain     rolling ground 96 x 96 (two octaves of sines, slopes up to
 *               about 35 degrees, seeded phases), rocks (boxes), and a mesa
 *               whose cliffs no agent climbs (goals on it are unreachable)
 *
 * Names: "gen:multifloor", "gen:terrain" on the command line.
 */
#ifndef PF_BENCH_LEVELS_H
#define PF_BENCH_LEVELS_H

#include <stdbool.h>
#include <stdint.h>

#include "navmesh.h"
#include "obj.h"
#include "status.h"

typedef struct pf_level {
    float *verts; /* 3 per vertex, owned */
    uint32_t nverts, vcap;
    uint32_t *tris; /* 3 per triangle, owned */
    uint32_t ntris, tcap;
    bool oom;
} pf_level;

/* Makes the level named `name` ("multifloor" or "terrain") from seed.
 * PF_EINVAL for another name, PF_ENOMEM; *out is emptied first. */
pf_status pf_level_make(const char *name, uint64_t seed, pf_level *out);
void pf_level_free(pf_level *l);
/* The geometry view for pf_nav_build (borrows l). */
pf_nav_geom pf_level_geom(const pf_level *l);

/* A level for a benchmark: an OBJ file or "gen:NAME", kept whole for the
 * navmesh build's lifetime (geom borrows obj or lv). */
typedef struct pf_bench_level {
    pf_obj obj;
    pf_level lv;
    pf_nav_geom geom;
} pf_bench_level;

/* Loads path: "gen:NAME" made from seed (pf_level_make), else an OBJ file
 * parsed within lim's vertex and triangle limits. On failure writes
 * "WHO: PATH: why" to stderr and returns the status (PF_EINVAL for a bad
 * name or OBJ, PF_EIO for a file that cannot be read, PF_ENOMEM); *out is
 * emptied either way and is freed with pf_bench_level_free. */
pf_status pf_bench_level_load(const char *path, uint64_t seed, const pf_nav_limits *lim,
                              const char *who, pf_bench_level *out);
void pf_bench_level_free(pf_bench_level *b);

#endif
