/* clock_internal.h -- the monotonic clock core's builders time themselves
 * with (hierarchy, landmarks, cut vertices), for their build_us figures. */
#ifndef PF_CLOCK_INTERNAL_H
#define PF_CLOCK_INTERNAL_H

#include <stdint.h>
#include <time.h>

static inline uint64_t pf__mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#endif
