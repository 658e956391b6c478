/* navq.h -- navmesh query scratch (nav/navmesh.h's pf_nav_query) for the
 * jobs that search navmesh maps: paths, sessions, crowds.
 *
 * A pf_nav_query holds Detour's node pool and the path buffers (about
 * 40 bytes a node, --nav-max-nodes nodes): too big to make per request,
 * and used by one thread at a time. The jobs borrow one for the length of
 * a job and give it back; at most `keep` idle ones are kept (the pool's
 * workers), more are freed when returned.
 *
 * Thread-safe.
 */
#ifndef PF_SERVER_NAVQ_H
#define PF_SERVER_NAVQ_H

#include <stddef.h>
#include <stdint.h>

#include "memory.h"
#include "navmesh.h"
#include "status.h"

typedef struct pf_navq pf_navq;

/* PF_ENOMEM. max_nodes [1, 65535]. */
pf_status pf_navq_create(uint32_t max_nodes, size_t keep, pf_navq **out);
/* Frees the idle queries; every borrowed one must be back. NULL: no-op. */
void pf_navq_destroy(pf_navq *qs);

/* An idle query, or a new one; NULL on ENOMEM. */
pf_nav_query *pf_navq_get(pf_navq *qs);
/* Gives q back (NULL: no-op). */
void pf_navq_put(pf_navq *qs, pf_nav_query *q);

/* The memory budget the queries are charged to (PF_MEM_MAPS: they serve
 * the navmesh maps) while they exist, borrowed or idle. Set before
 * serving; borrowed for the set's life. */
void pf_navq_set_mem(pf_navq *qs, pf_mem *mem);

#endif
