/* planner_internal.h -- a planner's layout, shared by planner.c (versions,
 * dispatch) and planner_auto.c (the auto choice between the exact search
 * and HPA*). */
#ifndef PF_PLANNER_INTERNAL_H
#define PF_PLANNER_INTERNAL_H

#include <stdatomic.h>

#include "agents.h"
#include "cuts.h"
#include "hpa.h"
#include "jps.h"
#include "landmarks.h"
#include "planner.h"
#include "subgoal.h"

/* What the build measured for auto (see planner_auto.c). */
typedef struct pf__auto_model {
    bool calibrated;
    pf_algorithm exact; /* PF_ALGO_JPS or PF_ALGO_ASTAR */
    bool exact_faster;  /* no bin picks HPA*: every answer is optimal */
    bool all_exact;     /* every bin picks `exact` */
    int32_t cs;         /* the cluster side the bins are measured in */
    double exact_us[PF_PLANNER_AUTO_BINS], hpa_us[PF_PLANNER_AUTO_BINS];
    int samples[PF_PLANNER_AUTO_BINS];
    double subgoal_us[PF_PLANNER_AUTO_BINS]; /* 0: not measured (no hierarchy) */
    pf_algorithm pick[PF_PLANNER_AUTO_BINS];
    bool settled[PF_PLANNER_AUTO_BINS]; /* bins b.. all pick pick[b] */
    uint64_t calibrate_us;
} pf__auto_model;

struct pf_planner {
    pf_grid *grid;
    pf_jps *jps;
    pf_hpa *hpa;
    pf_hpa_lm *hpa_lm;  /* lm at hpa's nodes (hpa.h); NULL without either, or memory */
    pf_subgoal *sg;     /* the subgoal graph, kept only with its hierarchy */
    pf_subgoal_ch *sgh; /* (planner_subgoal.c); both NULL when not built */
    uint64_t sg_build_us;
    pf_landmarks *lm; /* shared by the versions that may use it */
    pf_planner_opts opts;
    uint64_t hpa_build_us;
    _Atomic(pf_cuts *) cuts; /* built on first use: see pf_planner_cuts */
    pf_agents *agents;       /* agent sizes > 1: built on first use, see agents.h */
    pf__auto_model autom;
};

/* Measures p's searches for auto (planner_auto.c); without a hierarchy, or
 * on maps too small to matter, auto simply runs the exact search. Out of
 * memory, the model stays uncalibrated (PF_OK). PF_ECANCELED when stop
 * (build_stop.h; NULL: never), polled by the sample searches, said stop. */
pf_status pf__auto_calibrate(pf_planner *p, pf_build_stop *stop);

/* The subgoal graph and its hierarchy of a new planner (planner_subgoal.c):
 * built, or repaired from old's after the cells changed[0..n) changed,
 * within p->opts.subgoal_work_per_cell; left NULL (PF_OK) where the map is
 * not one subgoal graphs serve, where the graph is too dense to contract,
 * or where the contraction would pass its work bound. PF_ENOMEM,
 * PF_ECANCELED (stop). */
pf_status pf__planner_subgoal(pf_planner *p, const pf_planner *old, const pf_point *changed,
                              size_t n, pf_build_stop *stop);
/* After auto's measurement of a new upload: the subgoal hierarchy is
 * dropped when auto measured it and no bin picks it. */
void pf__planner_subgoal_keep(pf_planner *p);
/* q by the subgoal hierarchy (agent size 1); PF_EUNSUPPORTED without one. */
pf_status pf__planner_subgoal_search(pf_search_ctx *ctx, const pf_planner *p, const pf_query *q,
                                     pf_result *out);

/* The exact search auto runs on p's grid: jps where JPS serves it, else
 * astar. */
pf_algorithm pf__auto_exact(const pf_planner *p);

#endif
