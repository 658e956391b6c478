/* replan.c -- the replanning policy's decision (see replan.h). */
#include "replan.h"

#include <math.h>
#include <string.h>

static const char *const reason_names[PF_REPLAN_REASON_COUNT] = {
#define PF_REPLAN_NAME(id, name) name,
    PF_REPLAN_REASONS(PF_REPLAN_NAME)
#undef PF_REPLAN_NAME
};

/* Checks each field against its limit (replan.h); the first bad one is
 * named in *field. */
pf_status pf_replan_policy_check(const pf_replan_policy *p, const char **field) {
    const char *bad = NULL;
    if (p->min_interval_ms > PF_REPLAN_INTERVAL_MAX_MS)
        bad = "min_interval_ms";
    else if (!isfinite(p->goal_threshold) || p->goal_threshold < 0 ||
             p->goal_threshold > PF_REPLAN_THRESHOLD_MAX)
        bad = "goal_threshold";
    else if (!isfinite(p->hysteresis) || p->hysteresis < 0 ||
             p->hysteresis > PF_REPLAN_HYSTERESIS_MAX)
        bad = "hysteresis";
    else if (p->min_steps > PF_REPLAN_STEPS_MAX)
        bad = "min_steps";
    if (field) *field = bad;
    return bad ? PF_EINVAL : PF_OK;
}

void pf_replan_init(pf_replan *r, const pf_replan_policy *p) {
    memset(r, 0, sizeof(*r));
    r->policy = *p;
}

void pf_replan_set_policy(pf_replan *r, const pf_replan_policy *p) { r->policy = *p; }

/* The Euclidean distance between the goal now and the last replan's. */
static double goal_moved_by(const pf_replan *r, const double g[3]) {
    double dx = g[0] - r->goal[0], dy = g[1] - r->goal[1], dz = g[2] - r->goal[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The reasons in order: a route that cannot be followed first (forced),
 * then what asks for a better one (the interval permitting), then why
 * nothing is done. */
static pf_replan_reason decide(pf_replan *r, const pf_replan_input *in) {
    if (!r->planned || !in->has_route) return PF_REPLAN_INITIAL;
    if (in->blocked) return PF_REPLAN_BLOCKED;
    if (in->off_route) return PF_REPLAN_OFF_ROUTE;
    if (in->at_end) return PF_REPLAN_ROUTE_END;
    double moved = goal_moved_by(r, in->goal);
    bool far = moved > r->policy.goal_threshold;
    if (!far && !r->changed) return moved > 0 ? PF_REPLAN_THRESHOLD : PF_REPLAN_UNCHANGED;
    /* The clock may not go backwards, but a caller's might: treat that as
     * no time passed. */
    uint64_t since = in->now_ms > r->last_ms ? in->now_ms - r->last_ms : 0;
    if (since < r->policy.min_interval_ms || r->steps < r->policy.min_steps)
        return PF_REPLAN_INTERVAL;
    return far ? PF_REPLAN_GOAL_MOVED : PF_REPLAN_MAP_CHANGED;
}

pf_replan_reason pf_replan_decide(pf_replan *r, const pf_replan_input *in) {
    if (in->map_changed) r->changed = true;
    r->steps++;
    pf_replan_reason why = decide(r, in);
    r->count[why]++;
    return why;
}

void pf_replan_done(pf_replan *r, uint64_t now_ms, const double goal[3]) {
    r->planned = true;
    r->changed = false;
    r->last_ms = now_ms;
    r->steps = 0;
    memcpy(r->goal, goal, sizeof(r->goal));
}

bool pf_replan_reason_replans(pf_replan_reason why) { return why <= PF_REPLAN_MAP_CHANGED; }

bool pf_replan_reason_forced(pf_replan_reason why) { return why <= PF_REPLAN_ROUTE_END; }

const char *pf_replan_reason_name(pf_replan_reason why) {
    return (unsigned)why < PF_REPLAN_REASON_COUNT ? reason_names[why] : "unknown";
}
