/* hist.c -- the log-bucketed latency histogram. */
#include "hist.h"

#include <math.h>
#include <string.h>

void pf_hist_init(pf_hist *h) {
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

uint32_t pf_hist_bucket(uint64_t v) {
    uint32_t e;
    if (v < PF_HIST_SUB) return (uint32_t)v;
    e = 63u - (uint32_t)__builtin_clzll(v); /* floor(log2 v), >= 6 */
    /* The 6 bits below the leading one pick the sub-bucket. */
    return PF_HIST_SUB + (e - PF_HIST_SUB_BITS) * PF_HIST_SUB +
           (uint32_t)((v >> (e - PF_HIST_SUB_BITS)) & (PF_HIST_SUB - 1));
}

uint64_t pf_hist_bucket_max(uint32_t b) {
    uint32_t e, sub;
    if (b < PF_HIST_SUB) return b;
    e = (b - PF_HIST_SUB) / PF_HIST_SUB + PF_HIST_SUB_BITS;
    sub = (b - PF_HIST_SUB) % PF_HIST_SUB;
    /* Values (64 + sub) << s .. ((64 + sub + 1) << s) - 1 with s = e - 6;
     * computed so the top bucket ends at UINT64_MAX without overflowing. */
    return (((uint64_t)(PF_HIST_SUB + sub) << (e - PF_HIST_SUB_BITS)) - 1) +
           ((uint64_t)1 << (e - PF_HIST_SUB_BITS));
}

void pf_hist_record(pf_hist *h, uint64_t v) {
    h->counts[pf_hist_bucket(v)]++;
    h->total++;
    if (v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    h->sum += (double)v;
}

void pf_hist_merge(pf_hist *into, const pf_hist *from) {
    for (uint32_t i = 0; i < PF_HIST_BUCKETS; i++) into->counts[i] += from->counts[i];
    into->total += from->total;
    if (from->min < into->min) into->min = from->min;
    if (from->max > into->max) into->max = from->max;
    into->sum += from->sum;
}

uint64_t pf_hist_percentile(const pf_hist *h, double p) {
    uint64_t rank, seen = 0;
    if (h->total == 0) return 0;
    rank = (uint64_t)ceil(p / 100.0 * (double)h->total);
    if (rank < 1) rank = 1;
    if (rank > h->total) rank = h->total;
    for (uint32_t i = 0; i < PF_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t v = pf_hist_bucket_max(i);
            if (v > h->max) v = h->max;
            if (v < h->min) v = h->min;
            return v;
        }
    }
    return h->max;
}

double pf_hist_mean(const pf_hist *h) { return h->total ? h->sum / (double)h->total : NAN; }
