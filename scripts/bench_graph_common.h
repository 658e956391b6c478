/* bench_graph_common.h -- what scripts/bench-graph.c and
 * scripts/bench-graph-sessions.c share: this thread's CPU clock, a seeded
 * random stream (splitmix64), counts from the environment, percentiles. */
#ifndef PF_SCRIPTS_BENCH_GRAPH_COMMON_H
#define PF_SCRIPTS_BENCH_GRAPH_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* This thread's CPU time in microseconds (a loaded machine's waits do
 * not count). */
static inline double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The random stream; set rng to replay a sequence. */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static inline uint64_t next_u64(void) {
    uint64_t z = (rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}
static inline double unit(void) { return (double)(next_u64() >> 11) / 9007199254740992.0; }
static inline uint32_t below(uint32_t n) { return (uint32_t)(next_u64() % n); }

/* A count from the environment (a smaller run on a busy machine). */
static inline size_t env_count(const char *name, size_t dflt) {
    const char *v = getenv(name);
    return v && atol(v) > 0 ? (size_t)atol(v) : dflt;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The p-th percentile of v[0..n) (sorts v); 0 when n is 0. */
static inline double pct(double *v, size_t n, double p) {
    if (!n) return 0;
    qsort(v, n, sizeof(double), cmp_double);
    return v[(size_t)((double)(n - 1) * p)];
}

#endif
