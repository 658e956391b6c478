/* course.h -- the course a grid agent keeps between replans: the route it
 * follows, and the hysteresis that keeps it from flipping between
 * near-equal routes.
 *
 * A pf_course holds the path an agent last adopted (cells, from where the
 * agent stood then to its goal). Between replans (replan.h) the agent walks
 * it: pf_course_locate finds the agent on it and pf_course_ahead gives the
 * route from there on, the answer to send. Before deciding, the caller
 * asks whether the route ahead is still open on the map as it is now
 * (pf_course_blocked): a blocked route is always replanned.
 *
 * Adopting a new plan (pf_course_adopt) with hysteresis h > 0. The kept
 * route K (from the agent on) and the new path N (optimal, from the agent)
 * start together and, however the goal moved, usually share cells further
 * on. Let J be their junction: the cell of K that lies furthest along N.
 * From the agent to J there are two ways, K's and N's; the new one is taken
 * only when it is cheaper than (1 - h) times the kept one, else the agent
 * keeps K up to J and follows N from there (so a moved goal is still
 * reached). The kept answer then costs at most 1 / (1 - h) times the
 * optimum on the part that was compared. Without a junction past the
 * agent's own cell (the routes part at once and never meet: another
 * goal, or parallel ways on open ground) the new path is taken. h = 0
 * turns hysteresis off: every new path is taken as it is.
 *
 * A route flip is the agent changing course: a new path taken whose part up
 * to the junction strays more than PF_COURSE_FLIP_CELLS cells (Chebyshev)
 * from the kept route's, so that the agent would visibly turn (ties between
 * diagonal and straight steps on open ground stray one cell and are not
 * flips). Without a junction, the new path's cells near its goal (within
 * the goals' distance plus PF_COURSE_FLIP_CELLS of it) are left out: a goal
 * that moved moves the route's end, which is no flip.
 *
 * Routes read the map through a pf_course_view: a grid's own costs and
 * moves, or a D* Lite session's effective map (its base grid under its
 * private overlay, dstar.h). Not thread-safe: one thread at a time per
 * route; views are only read.
 */
#ifndef PF_COURSE_H
#define PF_COURSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "status.h"

struct pf_dstar;

/* How far (Chebyshev, cells) a new route must stray from the kept one for
 * the change to count as a flip. */
#define PF_COURSE_FLIP_CELLS 2
/* The longest route kept (cells): a path of a map's every cell twice. */
#define PF_COURSE_MAX_POINTS ((size_t)1 << 28)

/* A read of a map: a cell's cost (0 blocked or off the map) and whether the
 * single step a -> b is allowed. ctx is the map (borrowed). */
typedef struct pf_course_view {
    const void *ctx;
    uint8_t (*cost)(const void *ctx, pf_point p);
    bool (*can_step)(const void *ctx, pf_point a, pf_point b);
} pf_course_view;

/* The view of a grid, and of a D* Lite session's effective map. Both borrow
 * their map for as long as the view is used. */
pf_course_view pf_course_view_grid(const pf_grid *g);
pf_course_view pf_course_view_dstar(const struct pf_dstar *d);

typedef struct pf_course pf_course;

/* NULL on allocation failure. An empty route (no path kept). */
pf_course *pf_course_create(void);
void pf_course_destroy(pf_course *r); /* NULL is a no-op */
/* Bytes the route holds (its points and its scratch). */
size_t pf_course_memory(const pf_course *r);

/* Forgets the kept path (pf_course_ahead is empty then). */
void pf_course_clear(pf_course *r);
/* Keeps path[0..n) (copied), the agent at its first point. n = 0 clears.
 * PF_ELIMIT past PF_COURSE_MAX_POINTS, PF_ENOMEM; the route is unchanged on
 * error. */
pf_status pf_course_set(pf_course *r, const pf_point *path, size_t n);

/* Finds the agent on the route: from where it was last found on (agents
 * move forward), then before. True when found (pf_course_ahead starts
 * there); false when the agent is not on the route (nothing changes). */
bool pf_course_locate(pf_course *r, pf_point agent);
/* The route from the agent's last found position on; *n = 0 when empty.
 * Borrowed until the route changes. */
const pf_point *pf_course_ahead(const pf_course *r, size_t *n);
/* Whether a cell or a step of the route ahead is not open on v now. */
bool pf_course_blocked(const pf_course *r, const pf_course_view *v);

/* The cost of walking p[0..n) on v: the cost of each cell entered times
 * the step's length (1 or sqrt 2), 0 for n < 2. Steps are not checked. */
double pf_course_cost(const pf_course_view *v, const pf_point *p, size_t n);

typedef enum pf_course_outcome {
    PF_COURSE_NEW,      /* nothing was kept: the new path is the route */
    PF_COURSE_SAME,     /* the new path is the kept route: nothing changes */
    PF_COURSE_UPDATED,  /* taken; it goes the kept route's way to the junction */
    PF_COURSE_SWITCHED, /* taken over a different way to the junction (or none) */
    PF_COURSE_KEPT      /* the kept way to the junction, the new path after it */
} pf_course_outcome;

typedef struct pf_course_adoption {
    pf_course_outcome outcome;
    bool changed; /* the route ahead is not what it was */
    bool flip;    /* the change is a route flip (see above) */
    /* The two ways from the agent to the junction that were compared
     * (PF_COURSE_SWITCHED and PF_COURSE_KEPT with hysteresis on), else 0. */
    double kept_cost, new_cost;
} pf_course_adoption;

/* Adopts path[0..n) (a new plan from the agent's position, n >= 1) with
 * hysteresis h in [0, 1) as described above, reading costs and steps from
 * v; out says what happened. The route ahead must start where the path
 * does (pf_course_locate found the agent), else the path is simply taken
 * (PF_COURSE_NEW). PF_EINVAL for n = 0 or a bad h, PF_ELIMIT, PF_ENOMEM;
 * the route is unchanged on error. */
pf_status pf_course_adopt(pf_course *r, const pf_point *path, size_t n, double h,
                          const pf_course_view *v, pf_course_adoption *out);

/* The outcome's name: "new", "same", "updated", "switched", "kept". */
const char *pf_course_outcome_name(pf_course_outcome o);

#endif
