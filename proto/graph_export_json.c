/* graph_export_json.c -- a graph version's nodes and edges as JSON, and an
 * upper bound of their length (graph_export_json.h). */
#include "graph_export_json.h"

#include <string.h>

/* The longest a string of n bytes is written: every byte escaped as
 * \u00XX or \ufffd (6 bytes), and its quotes. */
static uint64_t str_bound(size_t n) { return 6 * (uint64_t)n + 2; }

/* Node i's id: a string, or an integer (|n| <= 2^53, at most 17 bytes). */
static uint64_t id_bound(const pf_graph_doc *d, uint32_t i) {
    uint64_t s = str_bound(strlen(d->ids + d->id_off[i]));
    return s > 21 ? s : 21;
}

/* A number as pf_jsonw_double writes it (pf_jsonw_fmt_double's 32 bytes
 * at most). */
#define NUM_BOUND 32u

uint64_t pf_graph_export_size_bound(const pf_graph_doc *d, const pf_graph *g, const char *map_id) {
    /* {"map":..,"version":<20>,"kind":"graph","dimensions":3,"nodes":[],"edges":[]} */
    uint64_t total = 128 + str_bound(strlen(map_id));
    for (uint32_t i = 0; i < d->n; i++)
        /* {"id":..,"position":[x,y,z],"tags":..,"enabled":false}, */
        total += 64 + 3 * (NUM_BOUND + 1) + id_bound(d, i) + (d->ntag_off[i + 1] - d->ntag_off[i]);
    for (uint32_t i = 0; i < d->m; i++) {
        uint32_t a, b;
        double c;
        bool both, on;
        pf_graph_edge(g, i, &a, &b, &c, &both, &on);
        /* {"from":..,"to":..,"cost":..,"oneway":true,"id":..,"tags":..,"enabled":false}, */
        total += 96 + NUM_BOUND + id_bound(d, a) + id_bound(d, b) +
                 (d->etag_off[i + 1] - d->etag_off[i]);
        if (d->eids) total += str_bound(strlen(d->eids + d->eid_off[i]));
    }
    return total + pf_graph_doors_size_bound(d);
}

void pf_graph_export_write(pf_jsonw *w, const pf_graph_doc *d, const pf_graph *g,
                           const char *map_id, uint64_t version) {
    pf_graph_info gi;
    pf_graph_get_info(g, &gi);
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "map", map_id);
    pf_jsonw_kuint(w, "version", version);
    pf_jsonw_kint(w, "dimensions", gi.dim);
    pf_graph_doc_write(w, d, g); /* "kind", "nodes", "edges" */
    pf_jsonw_obj_end(w);
}
