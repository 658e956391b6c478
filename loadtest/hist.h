/* hist.h -- a log-bucketed latency histogram (after HdrHistogram, Gil Tene).
 *
 * Values are non-negative integers (the load generator records nanoseconds).
 * Values below 64 have a bucket each; above, every power of two is split into
 * 64 sub-buckets, so a value is known to within 1/64 (1.6%) of itself over
 * the whole 64-bit range, in a fixed 30 KB array: recording is O(1) and never
 * allocates, and two histograms merge by adding counts.
 *
 * Not thread-safe: one histogram per thread, merged at the end.
 */
#ifndef PF_HIST_H
#define PF_HIST_H

#include <stdint.h>

#define PF_HIST_SUB_BITS 6
#define PF_HIST_SUB (1u << PF_HIST_SUB_BITS)
/* 64 exact buckets, then 64 sub-buckets for each exponent 6..63. */
#define PF_HIST_BUCKETS (PF_HIST_SUB + (64 - PF_HIST_SUB_BITS) * PF_HIST_SUB)

typedef struct pf_hist {
    uint64_t counts[PF_HIST_BUCKETS];
    uint64_t total;
    uint64_t min, max; /* exact; min is UINT64_MAX while empty */
    double sum;        /* for the mean */
} pf_hist;

void pf_hist_init(pf_hist *h);
void pf_hist_record(pf_hist *h, uint64_t v);
/* Adds every count of `from` to `into`. */
void pf_hist_merge(pf_hist *into, const pf_hist *from);

/* The bucket index of v, and the largest value a bucket holds. */
uint32_t pf_hist_bucket(uint64_t v);
uint64_t pf_hist_bucket_max(uint32_t bucket);

/* The p-th percentile (0..100) by nearest rank: the upper end of the bucket
 * that holds the ceil(p/100 x total)-th smallest value, clamped to the exact
 * min and max. 0 for an empty histogram. */
uint64_t pf_hist_percentile(const pf_hist *h, double p);
double pf_hist_mean(const pf_hist *h);

#endif
