/* bigmem.h -- the allocation of a per-map table that searches read at
 * random: the landmark distances (16 MiB on a 512x512 map) and the JPS+
 * jump tables (4 MiB).
 *
 * A search reads one 64-byte line of such a table per jump point, a few
 * hundred lines spread over the whole table. With 4 KiB pages each of those
 * reads is also a TLB miss once the table's pages no longer fit the TLB,
 * which is always the case on a server that answers other queries in
 * between (measured with pathd-bench scen --compare astar,jps on 8room_000:
 * jps's median fell by about 8%). So a table of 2 MiB or more is aligned to
 * 2 MiB and, where the system has transparent huge pages in "madvise" mode
 * (Debian's default), advised as huge pages. The advice is only a hint: a
 * system without it or refusing it keeps 4 KiB pages and the same answers.
 * Smaller tables are cache-line aligned. Free with free().
 */
#ifndef PF_BIGMEM_H
#define PF_BIGMEM_H

#include <stddef.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define PF__BIG_PAGE ((size_t)2 << 20)

/* The bytes an allocation of `bytes` takes: the memory reports count this. */
static inline size_t pf__big_size(size_t bytes) {
    size_t a = bytes >= PF__BIG_PAGE ? PF__BIG_PAGE : 64;
    return (bytes + a - 1) / a * a;
}

static inline void *pf__big_alloc(size_t bytes) {
    size_t n = pf__big_size(bytes ? bytes : 1);
    void *p = aligned_alloc(n >= PF__BIG_PAGE ? PF__BIG_PAGE : 64, n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p && n >= PF__BIG_PAGE) (void)madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}

#endif
