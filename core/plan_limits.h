/* plan_limits.h -- what may stop one plan of an incremental search before
 * it is done: an expansion budget and a stop callback.
 *
 * The sessions' searches (D* Lite on a grid, dstar.h; on a waypoint graph,
 * graph_dstar.h) take one pf_plan_limits per plan. A plan its limits stop
 * keeps its search state consistent (every locally inconsistent vertex is
 * still on the open list with a key that is a lower bound), so the next plan
 * goes on with the same repair where this one stopped.
 *
 * Core reads no clock: the callback is how time reaches a search (the
 * server's reads the clock against a deadline, server/clock.h). It is
 * polled once every poll_every expansions of the plan, at expansion counts
 * poll_every, 2 x poll_every, ..., never twice at the same count, and only
 * while the plan has more to do; it says stop on its Nth poll, the plan
 * stops at once having done exactly N x poll_every expansions (fewer when
 * the budget stopped it first). The budget is checked first: a plan that
 * reaches max_expanded answers PF_EBUDGET without polling.
 *
 * Header only, no state: the per-plan poll counter is the caller's.
 */
#ifndef PF_PLAN_LIMITS_H
#define PF_PLAN_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

/* Expansions between two polls when pf_plan_limits.poll_every is 0. The
 * server's poll is one vDSO clock read (about 25 ns), a few hundred
 * expansions take microseconds: a deadline is seen within that. */
#define PF_PLAN_POLL_EVERY 256u

typedef struct pf_plan_limits {
    uint64_t max_expanded;   /* this plan's expansions before PF_EBUDGET; 0: none */
    bool (*stop)(void *arg); /* polled as said above; true: PF_ECANCELED. NULL: never */
    void *stop_arg;          /* stop's argument (borrowed for the plan) */
    uint32_t poll_every;     /* expansions between polls; 0: PF_PLAN_POLL_EVERY */
} pf_plan_limits;

/* The expansion count of the plan's first poll (lim may be NULL: never). A
 * search keeps this in a counter for the plan and hands it to
 * pf_plan_limits_check. */
static inline uint64_t pf_plan_limits_first_poll(const pf_plan_limits *lim) {
    if (!lim || !lim->stop) return UINT64_MAX;
    return lim->poll_every ? lim->poll_every : PF_PLAN_POLL_EVERY;
}

/* Whether a plan that has done `expanded` expansions (counted from the
 * start of the plan) and has more to do may do the next: PF_OK, or
 * PF_EBUDGET (max_expanded reached), or PF_ECANCELED (the callback, polled
 * because `expanded` reached *next_poll, said stop). Each poll moves
 * *next_poll on by the interval. lim may be NULL (PF_OK always). */
static inline pf_status pf_plan_limits_check(const pf_plan_limits *lim, uint64_t expanded,
                                             uint64_t *next_poll) {
    if (!lim) return PF_OK;
    if (lim->max_expanded && expanded >= lim->max_expanded) return PF_EBUDGET;
    if (lim->stop && expanded >= *next_poll) {
        *next_poll = expanded + (lim->poll_every ? lim->poll_every : PF_PLAN_POLL_EVERY);
        if (lim->stop(lim->stop_arg)) return PF_ECANCELED;
    }
    return PF_OK;
}

#endif
