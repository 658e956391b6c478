/* replan.h -- when an agent that follows a moving goal should plan again.
 *
 * A chasing agent (a guard after the player, a pet after its owner) gets a
 * new goal position every frame. Planning on every one of them costs a
 * search a frame and makes the agent twitch between near-equal routes;
 * the game cannot tell a chase that replans on a timer, or only when the
 * target strayed a few cells, from one that replans every frame. A policy
 * says when a new plan is worth it:
 *
 * - a minimum interval between replans (milliseconds of the caller's
 *   clock: a server sees updates at each client's own frame rate, and the
 *   interval bounds the search work per session whatever that rate is);
 * - a goal-moved threshold: the goal must have moved farther than this from
 *   where it was at the last replan (Euclidean, in the map's units: cells
 *   on a grid);
 * - a plan that cannot be followed is always replaced, interval or not:
 *   the route ahead is blocked, the agent left it, or it ran out short of
 *   the goal;
 * - hysteresis: a new route replaces the kept one only when it is cheaper
 *   by a set fraction (course.h applies it), so near-equal routes do not
 *   flip.
 *
 * Between replans the agent follows the kept route (course.h): the answer is
 * the route from its new position on, and the reason no replan happened.
 *
 * This module only decides and counts; it knows no map, search or clock
 * (the caller passes the time in). A pf_replan is a plain value, one per
 * agent; not thread-safe (one thread at a time per agent).
 */
#ifndef PF_REPLAN_H
#define PF_REPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* The limits of a policy's fields, checked by pf_replan_policy_check. */
#define PF_REPLAN_INTERVAL_MAX_MS 3600000u /* one hour */
#define PF_REPLAN_THRESHOLD_MAX 1e6        /* map units */
#define PF_REPLAN_HYSTERESIS_MAX 0.9       /* a kept route at most 10x the optimum's section */
#define PF_REPLAN_STEPS_MAX 1000000u       /* steps (a frame count) */

typedef struct pf_replan_policy {
    /* No replan sooner than this many milliseconds after the last one,
     * but for the reasons that always replan (pf_replan_reason_forced).
     * 0: none. [Limits: 0..PF_REPLAN_INTERVAL_MAX_MS] */
    uint32_t min_interval_ms;
    /* A goal move asks for a replan only once the goal is farther than this
     * from the goal of the last replan (Euclidean, map units). 0: any
     * move. [Limits: 0..PF_REPLAN_THRESHOLD_MAX, finite] */
    double goal_threshold;
    /* Keep the current route unless the new one is cheaper by this
     * fraction of it (course.h's pf_course_adopt). 0: hysteresis off, every
     * new plan is taken as it is. [Limits: 0..PF_REPLAN_HYSTERESIS_MAX,
     * finite] */
    double hysteresis;
    /* No replan sooner than this many steps (pf_replan_decide calls: a
     * frame count, the caller's updates) after the last one, but for the
     * forced reasons; counted like the interval (reason "interval"). 10
     * replans at most every 10th step. 0 or 1: none. A clock-free timer:
     * what a game ticking at a fixed rate means by "every n frames".
     * [Limits: 0..PF_REPLAN_STEPS_MAX] */
    uint32_t min_steps;
} pf_replan_policy;

/* Why a step replanned or did not: the first four always replan, the next
 * two replan when the interval allows, the last four do not
 * (pf_replan_decide never answers the last: its caller does, e.g. a
 * navmesh corridor whose target slid along with the goal). Names are
 * what the API and the metrics say. */
#define PF_REPLAN_REASONS(X)                                                                       \
    X(INITIAL, "initial")                 /* no route yet (or a plan to start over) */             \
    X(BLOCKED, "blocked")                 /* the route ahead is blocked on the map now */          \
    X(OFF_ROUTE, "off_route")             /* the agent is not on its route */                      \
    X(ROUTE_END, "route_end")             /* the agent is at the route's end, the goal is not */   \
    X(GOAL_MOVED, "goal_moved")           /* the goal moved past the threshold */                  \
    X(MAP_CHANGED, "map_changed")         /* the map changed, the route ahead is still open */     \
    X(UNCHANGED, "unchanged")             /* nothing moved or changed that asks for a plan */      \
    X(INTERVAL, "interval")               /* too soon after the last replan */                     \
    X(THRESHOLD, "threshold")             /* the goal moved, not past the threshold */             \
    X(TARGET_ADJUSTED, "target_adjusted") /* a goal move followed without a search */

typedef enum pf_replan_reason {
#define PF_REPLAN_ENUM(id, name) PF_REPLAN_##id,
    PF_REPLAN_REASONS(PF_REPLAN_ENUM)
#undef PF_REPLAN_ENUM
        PF_REPLAN_REASON_COUNT
} pf_replan_reason;

/* What the caller knows about the agent this step. */
typedef struct pf_replan_input {
    uint64_t now_ms;  /* the caller's monotonic clock */
    double goal[3];   /* the goal now (z 0 on a grid) */
    bool has_route;   /* a route is kept */
    bool blocked;     /* ... and a cell or step ahead on it is not open now */
    bool off_route;   /* ... and the agent is not on it */
    bool at_end;      /* ... and the agent is at its end, which is not the goal */
    bool map_changed; /* the map under the route changed since the last step */
} pf_replan_input;

/* An agent's replanning state: its policy, the last replan, and how many
 * steps ended for each reason. */
typedef struct pf_replan {
    pf_replan_policy policy;
    bool planned;     /* a replan happened (pf_replan_done) */
    uint64_t last_ms; /* when */
    double goal[3];   /* the goal it planned for */
    bool changed;     /* a map change waits for a replan */
    uint64_t steps;   /* pf_replan_decide calls since the last replan */
    uint64_t count[PF_REPLAN_REASON_COUNT];
} pf_replan;

/* PF_OK, or PF_EINVAL with *field (may be NULL) naming the bad member
 * ("min_interval_ms", "goal_threshold", "hysteresis", "min_steps"). */
pf_status pf_replan_policy_check(const pf_replan_policy *p, const char **field);

/* Starts r with policy p (copied, assumed checked) and nothing planned. */
void pf_replan_init(pf_replan *r, const pf_replan_policy *p);
/* Changes the policy from the next step on; the last replan's time and
 * goal stay (the interval and threshold count from them). */
void pf_replan_set_policy(pf_replan *r, const pf_replan_policy *p);

/* Decides this step and counts its reason. A step that replans must be
 * followed by pf_replan_done once the plan succeeded (a failed plan leaves
 * the next step to try again). A map change that did not replan (the
 * interval) is remembered until one does. */
pf_replan_reason pf_replan_decide(pf_replan *r, const pf_replan_input *in);
/* A replan happened at now_ms for goal[3]. */
void pf_replan_done(pf_replan *r, uint64_t now_ms, const double goal[3]);

/* Whether the reason replans, and whether it does so regardless of the
 * interval and threshold (the route cannot be followed). */
bool pf_replan_reason_replans(pf_replan_reason why);
bool pf_replan_reason_forced(pf_replan_reason why);
/* The reason's name ("goal_moved"), "unknown" out of range. */
const char *pf_replan_reason_name(pf_replan_reason why);

#endif
