/* chase.h -- `pathd-bench chase`: chasers after random-walking targets under
 * replanning policies (chase.c explains the measure). */
#ifndef PF_BENCH_CHASE_H
#define PF_BENCH_CHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "scen.h"

/* argv[0] is "chase". Returns the process exit status. */
int pf_bench_chase_main(int argc, char **argv);

/* A target's random walk (the same in every mode, so every policy sees the
 * same targets): chaser i's walk state from the seed, and one frame of it
 * (with probability speed one cell along its heading, turning first with
 * probability turn or when the heading is blocked). */
void pf_bench_chase_walk_init(uint64_t seed, size_t i, uint64_t *rng, int *dir);
void pf_bench_chase_walk(pf_point *target, int *dir, uint64_t *rng, const pf_grid *g, double speed,
                         double turn);

/* `pathd-bench chase --url`: the chase against a running pathd over the
 * multiplexed WebSocket (chase_stream.c). */
typedef struct pf_chase_stream_run {
    const char *host, *prefix;
    int port;
    const char *map_id; /* uploaded before (PUT) */
    const pf_grid *g;
    const pf_scen_entry *e;
    size_t ne, chasers;
    const char *policy; /* every-frame, timer, threshold */
    double hysteresis, threshold, speed, turn;
    int frames, timer_frames;
    uint64_t seed;
    int server_pid; /* > 0: its CPU time from /proc, else from /metrics */
    bool json;
} pf_chase_stream_run;

/* PUTs map_text (Moving AI) as map_id. 0 or the exit status. */
int pf_bench_chase_stream_put(const pf_chase_stream_run *r, const char *map_text, size_t len);
/* One run: prints its row. 0, 1 (an answer was an error), 2 (no server). */
int pf_bench_chase_stream(const pf_chase_stream_run *r, const char *map_name);

/* `pathd-bench chase` on a navmesh (an OBJ file or gen:NAME), in-process
 * (chase_nav.c). */
typedef struct pf_chase_nav_opts {
    const size_t *chasers;
    size_t nchasers;
    int frames;
    uint64_t seed;
    double threshold, speed, turn, step;
    bool json;
} pf_chase_nav_opts;
int pf_bench_chase_nav(const char *path, const pf_chase_nav_opts *o);

#endif
