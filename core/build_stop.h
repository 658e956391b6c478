/* build_stop.h -- how a long build stops at its deadline.
 *
 * Building a map's data (jump tables, landmarks, dead ends, the HPA*
 * hierarchy, agent-size grids and hierarchies, auto's measurement, a maze)
 * and repairing it after a change take time proportional to the map: on a
 * map of tens of millions of cells, seconds. The caller hands a build a
 * pf_build_stop around its stop callback (search.h's pf_stop_fn: the
 * server's is its deadline, server/clock.h); the build counts its work in
 * units, each about one cell or node touched once, and polls the callback
 * whenever PF_BUILD_POLL_WORK more units are done, inside its long phases
 * (per row, per cluster, per settled node), not only between them. Once the
 * callback says stop, the build frees what it made and returns PF_ECANCELED
 * without doing (or counting) more work, so it answers within one slice of
 * work after its deadline, whatever the map.
 *
 * The counters say what happened, for tests and figures: `work` the units
 * done, `polls` the callback's calls, `stopped` whether it said stop. One
 * pf_build_stop serves one build (or a planner's builds one after the other)
 * on one thread: it is not thread-safe. Builds that take one accept NULL
 * (never stops, counts nothing).
 */
#ifndef PF_BUILD_STOP_H
#define PF_BUILD_STOP_H

#include <stdbool.h>
#include <stdint.h>

#include "search.h"

/* Units of work between two polls. The slowest unit (a node settled by a
 * hierarchy's in-cluster Dijkstra) takes about 50 ns, so a slice is about
 * a millisecond at most; a poll (the server's: one vDSO clock read) costs
 * about 25 ns. */
#define PF_BUILD_POLL_WORK 16384

typedef struct pf_build_stop {
    pf_stop_fn should_stop; /* NULL: never stops (work is still counted) */
    void *ud;
    uint64_t work;  /* units done so far */
    uint64_t polls; /* calls of should_stop */
    bool stopped;   /* should_stop said stop: the build returned PF_ECANCELED */
    uint64_t next;  /* work at which the next poll is due */
} pf_build_stop;

/* A stop around fn(ud) with its counters at zero. */
static inline pf_build_stop pf_build_stop_make(pf_stop_fn fn, void *ud) {
    pf_build_stop b = {fn, ud, 0, 0, false, PF_BUILD_POLL_WORK};
    return b;
}

/* Counts `units` more units of work and polls the callback when a slice is
 * full. True when the build must stop (now or earlier): it then returns
 * PF_ECANCELED. b may be NULL (never stops). */
static inline bool pf_build_tick(pf_build_stop *b, uint64_t units) {
    if (!b) return false;
    if (b->stopped) return true;
    b->work += units;
    if (b->work < b->next) return false;
    b->next = b->work + PF_BUILD_POLL_WORK;
    if (!b->should_stop) return false;
    b->polls++;
    b->stopped = b->should_stop(b->ud);
    return b->stopped;
}

/* For a loop over items i = 0, 1, ... of about a unit of work each:
 * counts them 4096 at a time, at i = 0, 4096, ... (pf_build_tick). */
static inline bool pf_build_tick_every(pf_build_stop *b, int64_t i) {
    return (i & 4095) == 0 && pf_build_tick(b, 4096);
}

/* Counts the rest of the current slice and polls: for work that keeps its
 * own time between polls (a search, which polls every few hundred
 * expansions: build_stop's poll is then one of those). As pf_build_tick. */
static inline bool pf_build_poll(pf_build_stop *b) {
    return pf_build_tick(b, b && b->next > b->work ? b->next - b->work : 0);
}

/* Whether the build was told to stop (a caller's check after a step that
 * does not return a status). */
static inline bool pf_build_stopped(const pf_build_stop *b) { return b && b->stopped; }

#endif
