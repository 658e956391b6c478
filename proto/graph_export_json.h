/* graph_export_json.h -- GET /v1/maps/{id}/graph's answer: a waypoint
 * graph version's nodes and edges as they are now, for the viewer and for
 * clients that draw or mirror the graph.
 *
 *   {"map":"rooms","version":3,"kind":"graph","dimensions":2,
 *    "nodes":[{"id":"hall","position":[0,0],"tags":["door"],"enabled":false}, ...],
 *    "edges":[{"from":"hall","to":"door","cost":10,"oneway":true,"id":"e1",
 *              "tags":["stairs"],"enabled":false}, ...],
 *    "doors":[{"name":"gate","edges":[0],"nodes":["door"],"open":false}, ...]}
 *
 * Node i and edge i are at index i of their arrays: the indices PATCH's
 * {"edges":[{"index":i}]} and path answers' "edges" use. The members of
 * each are graph_json.h's pf_graph_doc_write (an upload that builds this
 * version again): "oneway" and "enabled" only when true and false, "tags"
 * and edge "id" only when uploaded, costs as this version has them;
 * "doors" only when uploaded, members by edge index and node id, "open"
 * only when false.
 *
 * pf_graph_export_size_bound is an upper bound of the answer's length
 * from the document and graph alone (every string byte counted as its
 * longest escape, every number at its widest), so the server refuses an
 * answer past its limit before writing any of it. The proto layer never
 * aborts, logs or keeps globals.
 */
#ifndef PF_PROTO_GRAPH_EXPORT_JSON_H
#define PF_PROTO_GRAPH_EXPORT_JSON_H

#include <stdint.h>

#include "graph.h"
#include "graph_json.h"
#include "jsonw.h"

/* Bytes the answer for map_id can take at most (>= what
 * pf_graph_export_write writes). */
uint64_t pf_graph_export_size_bound(const pf_graph_doc *d, const pf_graph *g, const char *map_id);
/* Writes the answer (a whole object) for version `version` of map_id. */
void pf_graph_export_write(pf_jsonw *w, const pf_graph_doc *d, const pf_graph *g,
                           const char *map_id, uint64_t version);

#endif
