/* navrun.h -- the worker pool as a navmesh tile runner (nav/navmesh.h's
 * pf_nav_runner): a navmesh build or change runs its tiles in parallel.
 *
 * The job that calls run (a build, on a worker) works through the tiles
 * itself and queues up to `helpers` helper jobs that take tiles too. A
 * helper works for at most PF_NAVRUN_SLICE_NS, then queues itself again
 * while tiles are left, so queries waiting for a worker are never held up
 * longer than one slice by a big build. Helpers are search jobs (builds are
 * capped at workers - 1 at once, which would leave a build's helpers
 * waiting for the build). When the queue is full no helper is queued and
 * the caller does every tile. run returns once every tile has run; a
 * helper starting after that finds nothing to do and lets go of the shared
 * state it holds a reference to.
 *
 * Thread-safe: any number of runs at once.
 */
#ifndef PF_SERVER_NAVRUN_H
#define PF_SERVER_NAVRUN_H

#include "navmesh.h"
#include "pool.h"

#define PF_NAVRUN_SLICE_NS 5000000ull /* 5 ms */

typedef struct pf_navrun {
    pf_pool *pool;
    int helpers; /* helper jobs per run: workers - 1 */
} pf_navrun;

/* The runner of nr (borrowed for the runner's life). */
pf_nav_runner pf_navrun_runner(pf_navrun *nr);

#endif
