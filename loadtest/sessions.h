/* sessions.h -- `pathd-bench sessions`: bytes per D* Lite session on a shared
 * map, and repairs against a fresh A* (sessions.c explains the measure). */
#ifndef PF_BENCH_SESSIONS_H
#define PF_BENCH_SESSIONS_H

/* argv[0] is "sessions". Returns the process exit status. */
int pf_bench_sessions_main(int argc, char **argv);

#endif
