/* kind_graph.h -- the waypoint graph kind (kind.h): maps that are graphs of
 * nodes and edges (core/graph.h), uploaded as JSON or DIMACS
 * (proto/graph_json.h), searched with Dijkstra or A* between node ids or
 * points snapped to the nearest node, PATCHed by enabling and disabling
 * nodes and edges and changing costs. */
#ifndef PF_SERVER_KIND_GRAPH_H
#define PF_SERVER_KIND_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "kind.h"
#include "status.h"

extern const pf_kind_ops pf_kind_graph;

/* The stores' image of a graph map (image.h seals it): its upload text as
 * the store writes it (graph_json.h's pf_graph_doc_write, which parses back
 * into the same map) and its version.
 *   "PATHDGRF" | u32 format (1) | u64 version | u64 length | bytes | SHA-256 */
pf_status pf_graph_image_encode(const char *bytes, size_t n, uint64_t version, unsigned char **out,
                                size_t *len);
/* PF_EPARSE when it is not one (a digest or layout that does not match);
 * *bytes points into buf. */
pf_status pf_graph_image_decode(const unsigned char *buf, size_t len, const char **bytes, size_t *n,
                                uint64_t *version);

#endif
