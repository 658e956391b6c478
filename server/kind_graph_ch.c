/* kind_graph_ch.c -- the graph kind's contraction hierarchies (core
 * graph.h's pf_graph_ch_attach): when a version gets one, and what it
 * costs the memory budget. The rule (docs/graphs.md): every version of a
 * graph of at most --graph-ch-max-nodes nodes gets its own hierarchy,
 * built on the worker that makes the version (the upload's build, each
 * PATCH, a store's replay) before anyone can search it, within
 * --graph-ch-build-ms of its start; a hierarchy that fails (the deadline,
 * the shortcut cap, no memory, the budget) leaves the version without one,
 * and "auto" and "ch" run alt (or astar) there. The version keeps why
 * (GET /v1/maps/{id} graph.ch). */
#include "build_stop.h"
#include "clock.h"
#include "kind_graph_internal.h"

/* Shortcuts a build may add: twice the arcs plus one a node. */
static uint64_t max_shortcuts(const pf_graph_info *gi) {
    return 2 * (uint64_t)gi->arcs + gi->nodes;
}

const char *pf__graph_ch_prepare(const pf_kind_env *env, pf_graph *g) {
    const pf__graph_env *ge = pf__graph_env_of(env);
    pf_graph_info gi;
    uint64_t deadline_ns;
    pf_build_stop stop;
    pf_graph_ch_limits lim = {0, 0, NULL, 0};
    pf_status st;
    size_t est, labels;
    pf_graph_get_info(g, &gi);
    if (!ge->ch_max_nodes) return "disabled";
    if (gi.nodes > ge->ch_max_nodes) return "too_many_nodes";
    lim.max_shortcuts = max_shortcuts(&gi);
    /* The build's peak, at the cap: ~80 bytes a node (lists, witness
     * scratch, order), ~128 an arc or shortcut (the lists being
     * contracted, grown by doubling; the upward lists; records; the
     * final arrays). Reserved while it runs; the result is then charged
     * with the version (its bytes are in state_bytes). */
    est = (size_t)gi.nodes * 80 + ((size_t)gi.arcs + (size_t)lim.max_shortcuts) * 128;
    /* Hub labels: at most the cap, and at most every node a hub of every
     * other's two labels (16 bytes an entry); their arrays grow by
     * doubling, so twice that at the peak, plus the build's 20 bytes a
     * node of scratch. */
    labels = gi.nodes > (1u << 24) ? SIZE_MAX : (size_t)gi.nodes * gi.nodes * 32;
    if (ge->labels_max_bytes < labels) labels = ge->labels_max_bytes;
    lim.max_label_bytes = labels;
    if (labels) est += 2 * labels + (size_t)gi.nodes * 20;
    if (!pf_mem_try_charge(env->d.mem, PF_MEM_MAPS, est)) return "memory_budget";
    deadline_ns = pf_clock_now_ns() + (uint64_t)ge->ch_build_ms * 1000000ull;
    stop = pf_build_stop_make(pf_clock_deadline_passed, &deadline_ns);
    lim.stop = &stop;
    st = pf_graph_ch_attach(g, &lim);
    pf_mem_uncharge(env->d.mem, PF_MEM_MAPS, est);
    switch (st) {
    case PF_OK:
        return NULL;
    case PF_ECANCELED:
        return "build_deadline";
    case PF_ELIMIT:
        return "shortcut_cap";
    default:
        return "no_memory";
    }
}
