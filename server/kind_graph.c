/* kind_graph.c -- the waypoint graph kind's table (kind_graph.h): its
 * environment (limits, search contexts), its world (a graph version and
 * its shared upload document), uploads, PATCH, the stores, and the
 * table. Paths are in kind_graph_path.c, sessions in kind_graph_session.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "jsonr.h"
#include "jsonw.h"
#include "kind_graph_internal.h"

/* The by-algorithm metrics' labels: a grid's dijkstra and astar are core's
 * (kind.h: one label a slot), so a graph's carry the kind's name. */
static const char *const algorithm_labels[PF_GRAPH_ALGORITHMS] = {"graph_dijkstra", "graph_astar",
                                                                  "graph_alt", "graph_ch"};

/* The slot after the path algorithms' is the sessions' search
 * (kind_graph_session.c). */
static const char *algorithm_name(size_t i) {
    return i < PF_GRAPH_ALGORITHMS ? algorithm_labels[i] : "graph_dstar_lite";
}

/* Environment */

static pf_status graph_env_create(const pf_kind_deps *d, void **state, char *err, size_t errlen) {
    pf__graph_env *ge = calloc(1, sizeof(*ge));
    if (!ge || !(ge->free_ctx = calloc((size_t)d->cfg->workers + 2, sizeof(pf__graph_scratch *)))) {
        free(ge);
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    ge->max_free = (size_t)d->cfg->workers + 2;
    ge->limits.max_nodes = (uint32_t)d->cfg->graph_max_nodes;
    ge->limits.max_edges = (uint32_t)d->cfg->graph_max_edges;
    ge->limits.max_degree = (uint32_t)d->cfg->graph_max_degree;
    ge->limits.max_doors = (uint32_t)d->cfg->graph_max_doors;
    ge->limits.max_door_members = (uint32_t)d->cfg->graph_max_door_members;
    ge->landmarks = (uint32_t)d->cfg->graph_landmarks;
    ge->landmark_max_nodes = (uint32_t)d->cfg->graph_landmark_max_nodes;
    ge->ch_max_nodes = (uint32_t)d->cfg->graph_ch_max_nodes;
    ge->ch_build_ms = (uint32_t)d->cfg->graph_ch_build_ms;
    ge->labels_max_bytes = (size_t)d->cfg->graph_labels_max_bytes;
    ge->max_link_pairs = (uint64_t)d->cfg->graph_link_pairs;
    pthread_mutex_init(&ge->lock, NULL);
    *state = ge;
    return PF_OK;
}

static void graph_env_destroy(void *state) {
    pf__graph_env *ge = state;
    if (!ge) return;
    /* The server is ending: the budget goes with it, nothing to uncharge. */
    for (size_t i = 0; i < ge->nfree; i++) {
        pf_graph_ctx_destroy(ge->free_ctx[i]->ctx);
        free(ge->free_ctx[i]);
    }
    free(ge->free_ctx);
    pthread_mutex_destroy(&ge->lock);
    free(ge);
}

/* /v1/info: the algorithms a graph path request may name (its limits are
 * config.c's graph_max_* with every other flag). */
static void graph_write_server_info(const pf_kind_env *env, pf_jsonw *w) {
    (void)env;
    pf_jsonw_key(w, "graph_algorithms");
    pf_jsonw_arr_begin(w);
    pf_jsonw_str(w, "auto");
    for (int a = 0; a < PF_GRAPH_ALGORITHMS; a++)
        pf_jsonw_str(w, pf_graph_algorithm_name((pf_graph_algorithm)a));
    pf_jsonw_arr_end(w);
}

void pf__graph_count_search(pf_metrics *m, pf_graph_algorithm a, pf_metrics_outcome outcome,
                            uint64_t expanded, uint64_t us) {
    if (!m) return;
    pf_metrics_count_search_outcome(m, (int)pf_kind_slot(&pf_kind_graph, (size_t)a), outcome,
                                    expanded, us);
}

/* World */

static void docref_release(pf__graph_docref *r) {
    if (r && atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) {
        pf_mapver_release(r->link_map);
        pf_graph_doc_free(&r->d);
        free(r);
    }
}

static void graph_world_free(void *world) {
    pf__graph_world *gw = world;
    if (!gw) return;
    pf_graph_release(gw->g);
    docref_release(gw->doc);
    free(gw);
}

/* What a version holds: the topology and index, its state and the upload
 * document. The topology and the document are shared along a lineage and
 * charged to each version holding them (as a navmesh's build data). */
static size_t graph_world_memory(const void *world) {
    return ((const pf__graph_world *)world)->bytes;
}

/* A version around g and doc (both taken, also on failure), charged to
 * env's budget; ch_absent: why g has no hierarchy (pf__graph_ch_prepare). */
static pf_status wrap(const pf_kind_env *env, const char *id, const pf_graph *g,
                      pf__graph_docref *doc, const char *ch_absent, uint64_t build_us,
                      const uint8_t hash[32], pf_mapver **out, pf_proto_error *e) {
    const pf_config *cfg = env->d.cfg;
    pf__graph_world *gw = calloc(1, sizeof(*gw));
    pf_graph_info gi;
    *out = NULL;
    if (!gw) {
        pf_graph_release(g);
        docref_release(doc);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    gw->g = g;
    gw->doc = doc;
    gw->ch_absent = ch_absent;
    pf_graph_get_info(g, &gi);
    gw->bytes = sizeof(*gw) + gi.topo_bytes + gi.state_bytes + doc->d.bytes;
    *out = pf_mapver_create(id, &pf_kind_graph, env, gw, (size_t)cfg->cache_entries,
                            (size_t)cfg->cache_bytes, build_us, hash);
    if (!*out) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    pf_mapver_charge(*out, env->d.mem, gw->bytes);
    return PF_OK;
}

/* What auto_link did (an object): the info's graph.auto_link, and the
 * stores' "auto_linked". */
static void write_linked(pf_jsonw *w, const pf__graph_docref *doc) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "map", doc->linked.map);
    pf_jsonw_kuint(w, "map_version", doc->linked.map_version);
    pf_jsonw_kuint(w, "candidates", doc->linked.candidates);
    pf_jsonw_kuint(w, "linked", doc->linked.linked);
    pf_jsonw_obj_end(w);
}

static void graph_write_info(const pf_mapver *mv, pf_jsonw *w) {
    const pf__graph_world *gw = pf__graph_world_of(mv);
    pf_cache_stats cs;
    pf_graph_info gi;
    uint64_t lookups;
    pf_cache_get_stats(mv->cache, &cs);
    pf_graph_get_info(gw->g, &gi);
    lookups = cs.hits + cs.misses;
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "id", mv->id);
    pf_jsonw_kuint(w, "version", mv->version);
    pf_jsonw_kstr(w, "kind", "graph");
    pf_jsonw_kuint(w, "memory_bytes", gw->bytes);
    pf_jsonw_kuint(w, "build_us", mv->build_us);
    pf_jsonw_kstr(w, "default_algorithm",
                  pf_graph_algorithm_name(pf__graph_algorithm(mv, PF_GRAPH_AUTO)));
    pf_jsonw_key(w, "cache");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "entries", cs.entries);
    pf_jsonw_kuint(w, "hits", cs.hits);
    pf_jsonw_kuint(w, "misses", cs.misses);
    pf_jsonw_kdouble(w, "hit_ratio", lookups ? (double)cs.hits / (double)lookups : 0.0);
    pf_jsonw_obj_end(w);
    pf_jsonw_key(w, "graph");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "nodes", gi.nodes);
    pf_jsonw_kuint(w, "edges", gi.edges);
    pf_jsonw_kuint(w, "arcs", gi.arcs);
    pf_jsonw_kint(w, "dimensions", gi.dim);
    pf_jsonw_kuint(w, "max_degree", gi.max_degree);
    pf_jsonw_kuint(w, "disabled_nodes", gi.disabled_nodes);
    pf_jsonw_kuint(w, "disabled_edges", gi.disabled_edges);
    pf_jsonw_kdouble(w, "heuristic_ratio", gi.ratio);
    pf_jsonw_kuint(w, "landmarks", gi.landmarks);
    pf_jsonw_kdouble(w, "landmark_scale", gi.lm_scale);
    pf_jsonw_kuint(w, "components", gi.components);
    pf_jsonw_kuint(w, "ch_shortcuts", pf_graph_ch_shortcuts(gw->g));
    /* Whether this version has a hierarchy, and why not. */
    pf_jsonw_key(w, "ch");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kbool(w, "built", gw->ch_absent == NULL);
    if (gw->ch_absent) pf_jsonw_kstr(w, "absent", gw->ch_absent);
    if (!gw->ch_absent) {
        /* Its hub labels, or why it has none. */
        uint64_t entries;
        size_t bytes;
        const char *absent = pf_graph_ch_labels(gw->g, &entries, &bytes);
        pf_jsonw_key(w, "labels");
        pf_jsonw_obj_begin(w);
        pf_jsonw_kbool(w, "built", absent == NULL);
        if (absent) pf_jsonw_kstr(w, "absent", absent);
        pf_jsonw_kuint(w, "entries", entries);
        pf_jsonw_kuint(w, "bytes", bytes);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_obj_end(w);
    if (gw->doc->d.ndoors) {
        const pf_graph_doc *d = &gw->doc->d;
        pf_jsonw_key(w, "doors");
        pf_jsonw_arr_begin(w);
        for (uint32_t k = 0; k < d->ndoors; k++) {
            pf_jsonw_obj_begin(w);
            pf_jsonw_kstr(w, "name", d->door_names + d->door_name_off[k]);
            pf_jsonw_kbool(w, "open", pf_graph_door_open(d, gw->g, k));
            pf_jsonw_kuint(w, "edges", d->door_eoff[k + 1] - d->door_eoff[k]);
            pf_jsonw_kuint(w, "nodes", d->door_noff[k + 1] - d->door_noff[k]);
            pf_jsonw_obj_end(w);
        }
        pf_jsonw_arr_end(w);
    }
    if (gw->doc->linked.done) {
        pf_jsonw_key(w, "auto_link");
        write_linked(w, gw->doc);
    }
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
}

static void graph_write_summary(const pf_mapver *mv, pf_jsonw *w) {
    pf_graph_info gi;
    pf_graph_get_info(pf__graph_world_of(mv)->g, &gi);
    pf_jsonw_key(w, "graph");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "nodes", gi.nodes);
    pf_jsonw_kuint(w, "edges", gi.edges);
    pf_jsonw_obj_end(w);
}

/* Uploads: JSON ("kind":"graph", nodes and edges or the DIMACS envelope).
 * The upload is a pf__graph_docref. */

/* auto_link's map: the current version of the map it names, which must
 * have a line of sight (a grid or a navmesh). 422 naming auto_link.map. */
static pf_status link_map(const pf_kind_upload *in, pf__graph_docref *r, pf_proto_error *e) {
    pf_mapver *mv = NULL;
    if (!in->maps)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "auto_link.map",
                                  "This upload cannot name other maps.");
    if (in->maps->get(in->maps->ctx, r->al.map, &mv, e)) return e->status;
    if (!mv)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "auto_link.map",
                                  "There is no map '%s' on this server to link the graph on.",
                                  r->al.map);
    if (!mv->kind->line_of_sight) {
        pf_proto_error_set(e, PF_EUNSUPPORTED, PF_ERR_UNSUPPORTED, "auto_link.map",
                           "Map '%s' is a %s map: it has no line of sight to link a graph on "
                           "(grid and navmesh maps have).",
                           mv->id, mv->kind->name);
        pf_mapver_release(mv);
        return e->status;
    }
    r->link_map = mv;
    return PF_OK;
}

static pf_status graph_upload_parse(const pf_kind_env *env, const pf_kind_upload *in, void **up,
                                    pf_proto_error *e) {
    pf__graph_docref *r = calloc(1, sizeof(*r));
    pf_status st;
    *up = NULL;
    if (!r) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    atomic_init(&r->refs, 1);
    if ((st = pf_graph_doc_from_json(*in->root, &pf__graph_env_of(env)->limits, &r->d, e))) {
        free(r);
        return st;
    }
    if ((st = pf_graph_auto_link_from_json(*in->root, &r->al, e)) ||
        (r->al.present && (st = link_map(in, r, e)))) {
        docref_release(r);
        return st;
    }
    *up = r;
    return PF_OK;
}

/* The budget's refusal. Returns PF_ENOMEM. */
static pf_status no_room(const pf_kind_env *env, pf_proto_error *e, const char *what, size_t need) {
    uint64_t budget = pf_mem_budget(env->d.mem), used = pf_mem_used(env->d.mem);
    return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_INSUFFICIENT_STORAGE, NULL,
                              "%s needs up to %zu bytes; the memory budget (--max-memory) is %llu "
                              "bytes and %llu are in use. Delete maps or sessions, or raise it.",
                              what, need, (unsigned long long)budget,
                              (unsigned long long)(used < budget ? used : budget));
}

/* A core graph fault as the upload's element. */
static pf_status fault_to_proto(pf_status st, const pf_graph_fault *f, pf_proto_error *e) {
    if (st == PF_ENOMEM) return pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (f->what == PF_GRAPH_FAULT_NODE)
        return pf_proto_error_set(e, st, PF_ERR_INVALID_VALUE, "nodes", "Node %u is refused: %s.",
                                  (unsigned)f->index, pf_status_str(st));
    if (f->what == PF_GRAPH_FAULT_EDGE)
        return pf_proto_error_set(e, st, PF_ERR_INVALID_VALUE, "edges", "Edge %u is refused: %s.",
                                  (unsigned)f->index, pf_status_str(st));
    return pf_proto_error_set(e, st, pf_error_for_status(st), NULL, "The graph is refused: %s.",
                              pf_status_str(st));
}

/* Builds doc (taken) into a version: the graph, then the nodes and edges
 * uploaded disabled. The bytes are reserved first: a graph the budget
 * cannot hold is refused before it is built. */
static pf_status build(const pf_kind_env *env, pf__graph_docref *doc, const char *id,
                       const uint8_t hash[32], uint64_t t0_ns, pf_mapver **out, pf_proto_error *e) {
    const pf__graph_env *ge = pf__graph_env_of(env);
    const pf_graph_doc *d = &doc->d;
    uint32_t lm;
    pf_graph_spec s;
    uint64_t *ntags = NULL, *etags = NULL;
    pf_graph *g = NULL;
    pf_graph_fault f;
    size_t est;
    pf_status st;
    const char *ch_absent;
    *out = NULL;
    if (doc->link_map) {
        /* The made edges join the document before it is sized and built;
         * the named map is not needed after. */
        st = pf__graph_auto_link(env, doc, e);
        pf_mapver_release(doc->link_map);
        doc->link_map = NULL;
        if (st) {
            docref_release(doc);
            return st;
        }
    }
    /* Landmarks (graph.h's alt) for graphs up to the flag's size. */
    lm = d->n <= ge->landmark_max_nodes ? ge->landmarks : 0;
    s = (pf_graph_spec){d->n,    d->dim,  d->pos, d->m, d->from, d->to,
                        d->cost, d->both, lm,     NULL, NULL};
    /* The build's peak: the topology and a version (~64 bytes a node, 48
     * an edge), the landmarks' distances (16 bytes a node each, at most)
     * and base costs, and their build's reversed arcs and heap. */
    est = d->bytes + (size_t)d->n * 80 + (size_t)d->m * 64 +
          (lm ? (size_t)d->n * lm * 16 + (size_t)d->m * 8 + (size_t)d->m * 40 : 0);
    if (!pf_mem_try_charge(env->d.mem, PF_MEM_MAPS, est)) {
        docref_release(doc);
        return no_room(env, e, "The graph", est);
    }
    st = pf_graph_doc_tag_bits(d, &doc->tags, &ntags, &etags);
    s.node_tags = ntags;
    s.edge_tags = etags;
    if (!st) st = pf_graph_build(&s, &g, &f);
    free(ntags);
    free(etags);
    if (!st) {
        pf_graph_toggle *nodes = calloc(d->n, sizeof(*nodes)),
                        *edges = calloc(d->m + 1, sizeof(*edges));
        pf_graph_change ch = {NULL, 0, edges, nodes, 0, 0};
        for (uint32_t i = 0; nodes && i < d->n; i++)
            if (d->node_off[i]) nodes[ch.nnodes++] = (pf_graph_toggle){i, false};
        for (uint32_t i = 0; edges && i < d->m; i++)
            if (d->edge_off[i]) edges[ch.nedges++] = (pf_graph_toggle){i, false};
        if (!nodes || !edges) {
            st = PF_ENOMEM;
        } else if (ch.nnodes || ch.nedges) {
            pf_graph *next = NULL;
            st = pf_graph_change_apply(g, &ch, &next, &f);
            pf_graph_release(g);
            g = next;
        }
        free(nodes);
        free(edges);
    }
    pf_mem_uncharge(env->d.mem, PF_MEM_MAPS, est);
    if (st) {
        pf_graph_release(g);
        docref_release(doc);
        return fault_to_proto(st, &f, e);
    }
    ch_absent = pf__graph_ch_prepare(env, g);
    pf_graph_doc_compact(&doc->d);
    return wrap(env, id, g, doc, ch_absent, (pf_clock_now_ns() - t0_ns) / 1000, hash, out, e);
}

static pf_status graph_upload_build(const pf_kind_env *env, void *up, const char *id,
                                    const uint8_t hash[32], uint64_t t0_ns, pf_mapver **out,
                                    pf_proto_error *e) {
    return build(env, up, id, hash, t0_ns, out, e);
}

/* PATCH: nodes and edges enabled or disabled, costs (pf_graph_patch). */

static pf_status graph_patch_parse(const pf_kind_env *env, const char *body, size_t len, size_t max,
                                   void **patch, pf_proto_error *e) {
    pf_graph_patch *p = calloc(1, sizeof(*p));
    pf_status st;
    (void)env;
    *patch = NULL;
    if (!p) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if ((st = pf_graph_patch_parse(body, len, max, p, e))) {
        free(p);
        return st;
    }
    *patch = p;
    return PF_OK;
}

static void graph_patch_free(void *patch) {
    if (!patch) return;
    pf_graph_patch_free(patch);
    free(patch);
}

/* The next version: cur's topology and document, the changed state. Its
 * answers are new (the registry drops cur's cache when it is replaced). */
static pf_status graph_patch_apply(const pf_kind_env *env, const pf_mapver *cur, const void *patch,
                                   bool bounded, pf_mapver **out, pf_proto_error *e) {
    const pf__graph_world *gw = pf__graph_world_of(cur);
    pf_graph_change ch;
    pf_graph *next = NULL;
    pf_graph_fault f;
    pf_graph_info gi;
    uint64_t t0 = pf_clock_now_ns();
    const char *ch_absent;
    pf_status st;
    /* A change is linear in the graph's edges; the hierarchy's build is
     * bounded by --graph-ch-build-ms, a replay's too (without it the
     * version is served as alt). */
    (void)bounded;
    *out = NULL;
    if ((st = pf_graph_patch_resolve(patch, &gw->doc->d, &ch, e))) return st;
    pf_graph_get_info(gw->g, &gi);
    if (!pf_mem_try_charge(env->d.mem, PF_MEM_MAPS, gi.state_bytes)) {
        st = no_room(env, e, "The PATCH (a new version of the graph)", gi.state_bytes);
    } else {
        st = pf_graph_change_apply(gw->g, &ch, &next, &f);
        pf_mem_uncharge(env->d.mem, PF_MEM_MAPS, gi.state_bytes);
        if (st) fault_to_proto(st, &f, e);
    }
    free((void *)ch.costs);
    free((void *)ch.edges);
    free((void *)ch.nodes);
    if (st) return st;
    ch_absent = pf__graph_ch_prepare(env, next);
    atomic_fetch_add_explicit(&gw->doc->refs, 1, memory_order_relaxed);
    return wrap(env, cur->id, next, gw->doc, ch_absent, (pf_clock_now_ns() - t0) / 1000, NULL, out,
                e);
}

/* Stores: the upload as pf_graph_doc_write writes it (this version's costs
 * and states included), which parses back into the same map. */

static pf_status graph_store_encode(const pf_mapver *mv, uint64_t version, unsigned char **img,
                                    size_t *len) {
    const pf__graph_world *gw = pf__graph_world_of(mv);
    pf_jsonw w;
    pf_status st;
    pf_jsonw_init(&w, 64 + (size_t)gw->doc->d.n * 48 + (size_t)gw->doc->d.m * 48);
    pf_jsonw_obj_begin(&w);
    pf_graph_doc_write(&w, &gw->doc->d, gw->g);
    /* The edges auto_link made are in the document; what it did is kept
     * beside it (store_load takes it out before the upload's parse). */
    if (gw->doc->linked.done) {
        pf_jsonw_key(&w, "auto_linked");
        write_linked(&w, gw->doc);
    }
    pf_jsonw_obj_end(&w);
    if (pf_jsonw_failed(&w)) {
        pf_jsonw_free(&w);
        return PF_ENOMEM;
    }
    st = pf_graph_image_encode(w.buf, w.len, version, img, len);
    pf_jsonw_free(&w);
    return st;
}

/* The stores' "auto_linked" (write_linked's) back into doc. */
static void read_linked(const cJSON *o, pf__graph_docref *doc) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "map");
    if (!cJSON_IsString(m)) return;
    doc->linked.done = true;
    snprintf(doc->linked.map, sizeof(doc->linked.map), "%s", m->valuestring);
    doc->linked.map_version =
        (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "map_version"));
    doc->linked.candidates =
        (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "candidates"));
    doc->linked.linked =
        (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "linked"));
}

static pf_status graph_store_load(const pf_kind_env *env, const pf_kind_stored *in, pf_mapver **out,
                                  uint64_t *version, pf_kind_store_error *why) {
    const char *bytes;
    size_t n;
    cJSON *root = NULL, *linked = NULL;
    pf__graph_docref *doc = NULL;
    pf_mapver *mv = NULL;
    pf_status st;
    *out = NULL;
    memset(why, 0, sizeof(why[0]));
    if (pf_graph_image_decode(in->img, in->img_len, &bytes, &n, version)) {
        why->fault = PF_KIND_STORE_DAMAGED;
        return pf_proto_error_set(&why->e, PF_EPARSE, PF_ERR_STORAGE, NULL,
                                  "damaged (its digest or layout does not match)");
    }
    if (!(st = pf_jsonr_parse(bytes, n, &root, &why->e))) {
        pf_kind_upload up = {PF_BODY_JSON, bytes, n, &root, NULL, 0, false, NULL};
        linked = cJSON_DetachItemFromObjectCaseSensitive(root, "auto_linked");
        void *u = NULL;
        if (!(st = graph_upload_parse(env, &up, &u, &why->e))) {
            doc = u;
            if (linked) read_linked(linked, doc);
            st = build(env, doc, in->id, in->hash, pf_clock_now_ns(), &mv, &why->e);
        }
    }
    cJSON_Delete(root);
    cJSON_Delete(linked);
    if (st) {
        why->fault = st == PF_ENOMEM   ? PF_KIND_STORE_LATER
                     : st == PF_ELIMIT ? PF_KIND_STORE_LIMITS
                                       : PF_KIND_STORE_NO_BUILD;
        return st;
    }
    if ((st = pf_kind_replay_log(&pf_kind_graph, env, in, &mv, why))) return st;
    *out = mv;
    return PF_OK;
}

const pf_kind_ops pf_kind_graph = {
    .name = "graph",
    .features = PF_KIND_GRAPH_EXPORT | PF_KIND_TABLES,
    .upload_bodies = 0,
    .default_json = false,
    .algorithm_name = algorithm_name,
    .nalgorithms = PF_GRAPH_ALGORITHMS + 1,
    .store_suffix = ".graph.bin",
    .env_create = graph_env_create,
    .env_destroy = graph_env_destroy,
    .write_server_info = graph_write_server_info,
    .world_free = graph_world_free,
    .world_memory = graph_world_memory,
    .write_info = graph_write_info,
    .write_summary = graph_write_summary,
    .upload_parse = graph_upload_parse,
    .upload_build = graph_upload_build,
    .patch_parse = graph_patch_parse,
    .patch_apply = graph_patch_apply,
    .patch_free = graph_patch_free,
    .store_encode = graph_store_encode,
    .store_load = graph_store_load,
    .path_parse_one = pf__graph_path_parse_one,
    .path_parse_batch = pf__graph_path_parse_batch,
    .paths_free = pf__graph_paths_free,
    .path_cached = pf__graph_path_cached,
    .scratch_get = pf__graph_scratch_get,
    .scratch_put = pf__graph_scratch_put,
    .path_run = pf__graph_path_run,
    .session_create = pf__graph_session_create,
    .session_free = pf__graph_session_free,
    .session_memory = pf__graph_session_memory,
    .session_where = pf__graph_session_where,
    .session_rebase = pf__graph_session_rebase,
    .session_run = pf__graph_session_run,
    .write_graph = pf__graph_write_export,
    .table = &pf__graph_table,
};
