/* graph_json.h -- the wire forms of waypoint graphs (core/graph.h): the
 * upload (JSON nodes and edges, or the 9th DIMACS challenge's .gr and .co
 * text in a JSON envelope), the PATCH, path queries and their answers.
 *
 * Upload, JSON (Content-Type application/json):
 *   {"kind":"graph",
 *    "nodes":[{"id":"door1" | 17, "position":[x,y] | [x,y,z],
 *              "tags":["door"], "enabled":true}, ...],
 *    "edges":[{"from":"door1","to":17, "cost":4.5 | "factor":1.5,
 *              "oneway":false, "id":"e1", "tags":["stairs"], "enabled":true}, ...],
 *    "cost_factor":1.0}
 * A node id is a string (1..64 bytes) or an integer (|n| <= 2^53); both
 * are one namespace by their text, so 17 and "17" are the same id (a
 * duplicate) and a query may name either. Every position has the first
 * node's dimension (2 or 3), finite within +-1e9. An edge costs "cost"
 * (finite, >= 0) or, without it, its straight-line length times its
 * "factor" (finite, >= 0), or the graph's "cost_factor" (default 1). An
 * edge is two-way unless "oneway". Edge ids (optional, unique) and tags
 * (at most 8 strings of 1..32 bytes each) are kept and written back by the
 * stores; queries do not read tags yet.
 *
 * Upload, DIMACS (the 9th DIMACS Implementation Challenge's shortest-path
 * formats, one JSON envelope rather than a multipart body, so the upload
 * stays one JSON document with the routes' JSON limits and errors):
 *   {"kind":"graph","dimacs":{"gr":"p sp 3 2\na 1 2 7\n...",
 *                             "co":"p aux sp co 3\nv 1 10 20\n..."}}
 * .gr: "c" comments, one "p sp <nodes> <arcs>", then exactly <arcs> lines
 * "a <from> <to> <cost>" (ids 1..nodes, cost a finite number >= 0), each a
 * one-way edge. .co: "c" comments, one "p aux sp co <nodes>" with the same
 * count, then one "v <id> <x> <y>" per node (each once). Node ids are the
 * integers 1..n. A refusal names "dimacs.gr" or "dimacs.co" and the line.
 *
 * Limits (pf_graph_limits): nodes, edges, and arcs leaving one node
 * (degree: a two-way edge leaves both its ends); past one: PF_ELIMIT,
 * 413 limit_exceeded, naming the field and the server's flag.
 *
 * The proto layer never aborts, logs or keeps globals.
 */
#ifndef PF_PROTO_GRAPH_JSON_H
#define PF_PROTO_GRAPH_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "graph.h"
#include "jsonw.h"
#include "path_json.h"

#define PF_GRAPH_ID_MAX 64
#define PF_GRAPH_TAGS_MAX 8
#define PF_GRAPH_TAG_MAX 32
#define PF_GRAPH_MAX_COORD 1e9
#define PF_GRAPH_EXCLUDE_MAX 8

typedef struct pf_graph_limits {
    uint32_t max_nodes, max_edges, max_degree;
    /* Door groups: doors one upload declares, members over all of them. */
    uint32_t max_doors, max_door_members;
} pf_graph_limits;

/* A graph as uploaded: what core/graph.h builds from (pos, from, to, cost,
 * both) and what it does not keep (ids, tags, the initial states). */
typedef struct pf_graph_doc {
    uint32_t n, m;
    int dim;
    /* Until pf_graph_doc_compact: */
    double *pos; /* 3 a node */
    uint32_t *from, *to;
    double *cost;
    uint8_t *both;
    uint8_t *node_off, *edge_off; /* 1: uploaded with "enabled":false */
    /* Node ids: node i's text is ids + id_off[i] (NUL-terminated);
     * id_int[i]: it was an integer. Edge ids likewise ("" none). */
    char *ids, *eids;
    uint32_t *id_off, *eid_off;
    uint8_t *id_int;
    /* Tags: node i's are the JSON array ntags + ntag_off[i] .. ntag_off[i + 1]
     * (empty: none); edges' likewise. */
    char *ntags, *etags;
    uint32_t *ntag_off, *etag_off;
    /* Open addressing tables over the ids (index + 1; 0 empty). */
    uint32_t *hash, *ehash;
    uint32_t hcap, ehcap;
    /* Door groups ("doors" at upload, kept): door k is named door_names +
     * door_name_off[k]; its edges are door_edges[door_eoff[k] ..
     * door_eoff[k + 1]), its nodes door_nodes[door_noff[k] .. + 1]. */
    uint32_t ndoors;
    char *door_names;
    uint32_t *door_name_off, *door_eoff, *door_edges, *door_noff, *door_nodes;
    uint32_t *door_sorted; /* the doors by name */
    size_t bytes;          /* what it holds */
} pf_graph_doc;

/* Reads an upload (root: the JSON body, "kind":"graph") into d. PF_EPARSE
 * (400 malformed_map: wrong types, unknown members, naming the field),
 * PF_EINVAL (422 invalid_value naming the element: a duplicate id, an
 * edge to an unknown node, a negative or non-finite cost or position, a
 * dimension that differs), PF_ELIMIT (413), PF_ENOMEM. d is empty on
 * error. */
pf_status pf_graph_doc_from_json(const cJSON *root, const pf_graph_limits *lim, pf_graph_doc *d,
                                 pf_proto_error *e);
/* The DIMACS texts (gr, co: not NUL-terminated) into d, as above. */
pf_status pf_graph_doc_from_dimacs(const char *gr, size_t grlen, const char *co, size_t colen,
                                   const pf_graph_limits *lim, pf_graph_doc *d, pf_proto_error *e);
void pf_graph_doc_free(pf_graph_doc *d);
/* Frees what only the build reads (positions, endpoints, costs, initial
 * states: the built graph has them), keeping the ids, tags and their
 * tables; d->bytes follows. Call after pf_graph_build. */
void pf_graph_doc_compact(pf_graph_doc *d);

/* A JSON upload's auto_link (docs/graphs.md, "Auto-linking"):
 *   "auto_link":{"max_distance":12, "map":"level1", "agent_type":"default",
 *                "cost_factor":1.5, "max_links_per_node":8, "tag":"auto"}
 * max_distance finite and > 0; map a map id (1..64 bytes); agent_type
 * (NULL: not given); cost_factor as the upload's (default: the upload's
 * cost_factor, else 1); max_links_per_node 0: none; tag 1..32 bytes
 * (default "auto"). */
typedef struct pf_graph_auto_link {
    bool present;
    double max_distance, cost_factor;
    char map[PF_GRAPH_ID_MAX + 1];
    char agent_type_buf[PF_GRAPH_ID_MAX + 1];
    const char *agent_type; /* agent_type_buf, or NULL */
    uint32_t max_links_per_node;
    char tag[PF_GRAPH_TAG_MAX + 1];
} pf_graph_auto_link;

/* Reads root's "auto_link" (absent: al->present false). PF_EPARSE (400
 * naming the field: wrong types, unknown members, a missing max_distance
 * or map), PF_EINVAL (422 naming the field: a number out of range, an
 * empty or long string). */
pf_status pf_graph_auto_link_from_json(const cJSON *root, pf_graph_auto_link *al,
                                       pf_proto_error *e);
/* Appends k two-way edges to d (before pf_graph_doc_compact): edge
 * d->m + i joins pairs[2 i] and pairs[2 i + 1] at cost[i], enabled, no id,
 * tagged `tag`. Against lim: the edges (413 naming `field`,
 * --graph-max-edges) and every node's degree with them (413 naming
 * `field`, --graph-max-degree). PF_ENOMEM. d is unchanged on error. */
pf_status pf_graph_doc_append_edges(pf_graph_doc *d, const uint32_t *pairs, const double *cost,
                                    uint32_t k, const char *tag, const pf_graph_limits *lim,
                                    const char *field, pf_proto_error *e);

/* Door groups of a JSON upload:
 *   "doors":[{"name":"gate", "edges":[3, "e1"], "nodes":["a", 17],
 *             "open":true}, ...]
 * a member edge by index (an integer) or id (a string), a member node by
 * id; "open":false disables the members at upload. Read after the nodes
 * and edges (pf_graph_doc_from_json calls it). PF_EPARSE (400 naming the
 * field), PF_EINVAL (422: a repeated name doors[i].name, an unknown
 * member doors[i].edges[j] / doors[i].nodes[j]), PF_ELIMIT (413 past
 * lim's max_doors naming "doors", max_door_members naming doors[i]),
 * PF_ENOMEM. */
pf_status pf_graph_doors_from_json(const cJSON *doors, const pf_graph_limits *lim, pf_graph_doc *d,
                                   pf_proto_error *e);
/* The door named `name`, or PF_GRAPH_NONE (a binary search). */
uint32_t pf_graph_doc_door(const pf_graph_doc *d, const char *name);
/* Door k is open in g: every member enabled. */
bool pf_graph_door_open(const pf_graph_doc *d, const pf_graph *g, uint32_t k);
/* Writes "doors" (members: edges by index, nodes by id; "open":false for
 * a door g has closed, as an upload says it) when d has any. */
void pf_graph_doors_write(pf_jsonw *w, const pf_graph_doc *d, const pf_graph *g);
/* Bytes pf_graph_doors_write can take at most (a leading comma included),
 * every string byte at its longest escape. */
uint64_t pf_graph_doors_size_bound(const pf_graph_doc *d);

/* Node (edge) index of an id's text, or PF_GRAPH_NONE. */
uint32_t pf_graph_doc_node(const pf_graph_doc *d, const char *id);
uint32_t pf_graph_doc_edge(const pf_graph_doc *d, const char *id);
/* Writes node i's id as uploaded (a string or an integer). */
void pf_graph_doc_write_id(pf_jsonw *w, const pf_graph_doc *d, uint32_t i);
/* Writes the members of an upload that builds g again (d's ids, tags and
 * positions, g's costs and enabled states): "kind", "nodes", "edges". */
void pf_graph_doc_write(pf_jsonw *w, const pf_graph_doc *d, const pf_graph *g);

/* Tags as bits, for queries' exclude_tags: the first PF_GRAPH_TAG_BITS
 * distinct tag names of an upload (nodes' then edges', in upload order);
 * `past`: it has more, which no filter can name. */
#define PF_GRAPH_TAG_BITS 64
typedef struct pf_graph_tag_names {
    char names[PF_GRAPH_TAG_BITS][PF_GRAPH_TAG_MAX + 1];
    uint32_t n;
    bool past;
} pf_graph_tag_names;
/* d's tags (before pf_graph_doc_compact or after: tags are kept) as
 * names and bits: *node_bits n and *edge_bits m words, each NULL when no
 * such element has a tag (free()). PF_ENOMEM. */
pf_status pf_graph_doc_tag_bits(const pf_graph_doc *d, pf_graph_tag_names *names,
                                uint64_t **node_bits, uint64_t **edge_bits);
/* The bit of tag `name` (*known false and 0 when it is not one). */
uint64_t pf_graph_tag_mask(const pf_graph_tag_names *names, const char *name, bool *known);

/* A request's "exclude_tags" (paths, tables): at most PF_GRAPH_EXCLUDE_MAX
 * tags whose edges and nodes the search keeps off, resolved against the
 * map's tag names when the query runs. */
typedef struct pf_graph_exclude {
    char tags[PF_GRAPH_EXCLUDE_MAX][PF_GRAPH_TAG_MAX + 1];
    size_t n;
} pf_graph_exclude;
/* The JSON array m (strings of 1..PF_GRAPH_TAG_MAX bytes) into x; errors
 * name field. */
pf_status pf_graph_exclude_read(const cJSON *m, const char *field, pf_graph_exclude *x,
                                pf_proto_error *e);

/* A node named in a request: by id (its text) or by a point snapped to the
 * nearest enabled node. */
typedef struct pf_graph_place {
    bool is_point;
    int dims; /* of the point: 2 or 3 */
    double p[3];
    char id[PF_GRAPH_ID_MAX + 1];
} pf_graph_place;

/* "auto" in a request: resolved against the map when the query runs (alt
 * on a version with landmarks whose PATCH factor is positive, else
 * astar), so a pf_graph_path_request's algorithm may be this too. */
#define PF_GRAPH_AUTO ((pf_graph_algorithm)PF_GRAPH_ALGORITHMS)

/* A path query: JSON
 *   {"start":"a" | 3 | {"point":[x,y(,z)]}, "goal":...,
 *    "algorithm":"auto"|"astar"|"alt"|"dijkstra",
 *    "max_expanded":1000, "partial":true, "use_cache":true, "deadline_ms":50}
 * or a GET's query string: start=a&goal=b (ids) or start_point=x,y(,z),
 * goal_point=..., algorithm, max_expanded, partial, use_cache, deadline_ms.
 * "auto" is alt where the version has landmarks, else A* (both
 * heuristics are admissible on every graph). A batch is
 * {"queries":[...], "deadline_ms":...} of at most max queries. */
typedef struct pf_graph_path_request {
    pf_graph_place start, goal;
    /* "goals" instead of "goal" (1..max_goals places; GET: goals=id;id):
     * the path to the cheapest one to reach. Owned:
     * pf_graph_path_request_clear. */
    pf_graph_place *goals;
    size_t ngoals;
    pf_graph_algorithm algorithm;
    uint64_t max_expanded;
    bool partial, use_cache;
    /* "snap":"edge" (GET snap=edge): points go to the nearest point on an
     * enabled edge, the search starting (ending) at both its ends with
     * the part of the edge's cost to get there; "node" (default): to the
     * nearest enabled node. */
    bool snap_edge;
    /* "exclude_tags":["stairs"] (GET exclude_tags=a;b): at most
     * PF_GRAPH_EXCLUDE_MAX tags whose edges and nodes the search keeps off. */
    pf_graph_exclude exclude;
    int64_t deadline_ms;
} pf_graph_path_request;

/* max_goals: --max-goals (PF_ELIMIT naming "goals" past it). A request
 * may own goals even after an error: pf_graph_path_request_clear. */
pf_status pf_graph_path_request_parse(const char *body, size_t len, size_t max_goals,
                                      pf_graph_path_request *q, pf_proto_error *e);
pf_status pf_graph_path_request_from_query(const pf_kv *kv, size_t nkv, size_t max_goals,
                                           pf_graph_path_request *q, pf_proto_error *e);
void pf_graph_path_request_clear(pf_graph_path_request *q);
/* *qs gets *n queries (clear each, then free()); nothing on error. */
pf_status pf_graph_path_batch_parse(const char *body, size_t len, size_t max, size_t max_goals,
                                    pf_graph_path_request **qs, size_t *n, int64_t *deadline_ms,
                                    pf_proto_error *e);

/* The place at `it` (an id or {"point":[x,y(,z)]}), errors naming field. */
pf_status pf_graph_place_read(const cJSON *it, const char *field, pf_graph_place *p,
                              pf_proto_error *e);

/* A PATCH:
 *   {"doors":[{"name":"gate","open":false}],
 *    "nodes":[{"id":"a","enabled":false}],
 *    "edges":[{"index":3 | "id":"e1", "enabled":true, "cost":2.5}]}
 * at most max changes (0: any), node ids and edge ids resolved against the
 * map when applied (pf_graph_patch_resolve). */
typedef struct pf_graph_patch_node {
    char id[PF_GRAPH_ID_MAX + 1];
    bool enabled;
} pf_graph_patch_node;
typedef struct pf_graph_patch_edge {
    int64_t index; /* -1: by id */
    char id[PF_GRAPH_ID_MAX + 1];
    bool has_enabled, enabled, has_cost;
    double cost;
} pf_graph_patch_edge;
typedef struct pf_graph_patch_door {
    char name[PF_GRAPH_ID_MAX + 1];
    bool open;
} pf_graph_patch_door;
typedef struct pf_graph_patch {
    pf_graph_patch_node *nodes;
    pf_graph_patch_edge *edges;
    pf_graph_patch_door *doors;
    size_t nnodes, nedges, ndoors;
} pf_graph_patch;

pf_status pf_graph_patch_parse(const char *body, size_t len, size_t max, pf_graph_patch *p,
                               pf_proto_error *e);
void pf_graph_patch_free(pf_graph_patch *p);
/* p against d as core's change (arrays malloc'd into *ch: free ch->costs,
 * ch->edges, ch->nodes): doors' members first, in order, then p's nodes
 * and edges (which win over a door). PF_EINVAL naming "doors[i].name",
 * "nodes[i].id" / "edges[i]" when a name or id is unknown or an index out
 * of range; PF_ENOMEM. */
pf_status pf_graph_patch_resolve(const pf_graph_patch *p, const pf_graph_doc *d,
                                 pf_graph_change *ch, pf_proto_error *e);

#endif
