/* cache.h -- an LRU cache of answered paths, one per map version.
 *
 * Keyed by (start, goal, algorithm, heuristic, weight, smooth, node budget,
 * map version, and a digest of anything else the request has), or for a
 * navmesh map (algorithm, map version, and a digest of start, goal and
 * search box). Bounded by an entry count and by the bytes of the paths it
 * holds; the least recently used entry goes first. Counts hits and misses
 * for the hit ratio /v1/info reports.
 *
 * A value is the answer's members as JSON (pf_path_write_members), so a hit
 * costs one copy, not a serialization of the path.
 *
 * Thread-safe: one mutex per cache; a lookup copies the bytes out, so an
 * entry evicted a moment later never dangles.
 */
#ifndef PF_SERVER_CACHE_H
#define PF_SERVER_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "memory.h"
#include "search.h"
#include "status.h"

typedef struct pf_cache_key {
    pf_point start, goal;
    int32_t algorithm; /* pf_algorithm actually requested */
    int32_t heuristic;
    double weight; /* 0 unless the algorithm is weighted */
    uint64_t max_expanded;
    uint64_t version;
    bool smooth;
    /* The rest of a request that has more to it (goals, agent size,
     * partial, snap; or a flow field's goals and region): a SHA-256 digest,
     * truncated, of its canonical bytes (pf_cache_key_extra); for a navmesh
     * query, of its start, goal and search box. All zero for a plain path
     * request. */
    uint8_t extra[16];
} pf_cache_key;

typedef struct pf_cache_value {
    char *json; /* get: owned by the caller, free() */
    size_t len;
} pf_cache_value;

typedef struct pf_cache pf_cache;

typedef struct pf_cache_stats {
    uint64_t hits, misses;
    size_t entries, bytes;
} pf_cache_stats;

/* A cache of at most max_entries entries and max_bytes bytes of answers;
 * max_entries 0 makes a cache that stores nothing. NULL on ENOMEM. */
pf_cache *pf_cache_create(size_t max_entries, size_t max_bytes);
void pf_cache_destroy(pf_cache *c);

/* Builds a key with every padding byte zeroed. */
pf_cache_key pf_cache_key_make(pf_point start, pf_point goal, pf_algorithm algo, pf_heuristic h,
                               double weight, bool smooth, uint64_t max_expanded, uint64_t version);

/* Sets k->extra to the digest of bytes[0..n): distinct requests get
 * distinct keys but for a SHA-256 collision, so a client cannot make its
 * answer be served for another's request. */
void pf_cache_key_extra(pf_cache_key *k, const void *bytes, size_t n);
/* The same over two pieces, a then b (b may be NULL with nb 0). */
void pf_cache_key_extra2(pf_cache_key *k, const void *a, size_t na, const void *b, size_t nb);

/* On a hit fills *out (out->json is a malloc'd copy) and returns true;
 * counts a hit or a miss. A hit whose copy cannot be allocated is a miss. */
bool pf_cache_get(pf_cache *c, const pf_cache_key *k, pf_cache_value *out);

/* Stores a copy of v under k, replacing an entry with the same key and
 * evicting the least recently used ones to stay within bounds. Entries
 * larger than the byte bound are not stored. PF_ENOMEM leaves the cache as
 * it was. */
pf_status pf_cache_put(pf_cache *c, const pf_cache_key *k, const pf_cache_value *v);

/* Charges the entries to the process budget mem from now on (call before
 * the first put): an entry that does not fit it is not stored. */
void pf_cache_set_mem(pf_cache *c, pf_mem *mem);

void pf_cache_get_stats(pf_cache *c, pf_cache_stats *st);

/* Drops every entry (a PATCH made them stale); the counters stay. */
void pf_cache_clear(pf_cache *c);

#endif
