/* clock.h -- the server's monotonic clock: request arrival and deadlines,
 * session idle times, build and search timings. Thread-safe. */
#ifndef PF_SERVER_CLOCK_H
#define PF_SERVER_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
static inline uint64_t pf_clock_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A search's stop callback (pf_stop_fn) for a job's deadline: ud points at
 * the deadline in pf_clock_now_ns nanoseconds (e.g. &job->deadline_ns), which
 * must stay valid while the search runs. */
static inline bool pf_clock_deadline_passed(void *ud) {
    return pf_clock_now_ns() >= *(const uint64_t *)ud;
}

#endif
