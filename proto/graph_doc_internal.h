/* graph_doc_internal.h -- the builders graph_json.c and graph_dimacs.c
 * share to fill a pf_graph_doc (graph_json.h). */
#ifndef PF_PROTO_GRAPH_DOC_INTERNAL_H
#define PF_PROTO_GRAPH_DOC_INTERNAL_H

#include "graph_json.h"

/* A growing NUL-terminated byte buffer. */
typedef struct pf__gbuf {
    char *p;
    size_t len, cap;
} pf__gbuf;
bool pf__gbuf_put(pf__gbuf *b, const char *s, size_t n);
void pf__gbuf_free(pf__gbuf *b);

/* d with room for n nodes and m edges (zeroed); PF_ENOMEM (d empty). */
pf_status pf__graph_doc_alloc(pf_graph_doc *d, uint32_t n, uint32_t m, int dim);
/* The node id table; 422 naming field[i].id for a repeated id. */
pf_status pf__graph_doc_index_nodes(pf_graph_doc *d, const char *field, pf_proto_error *e);
/* The degree limit (413 naming edge_field[i]), the edge id table, the
 * byte count. */
pf_status pf__graph_doc_finish(pf_graph_doc *d, const pf_graph_limits *lim, const char *edge_field,
                               pf_proto_error *e);
/* An id: a string of 1..64 bytes or an integer within +-2^53, as text
 * (*is_int may be NULL). 400/422 naming field. */
pf_status pf__graph_read_id(const cJSON *it, const char *field, char out[PF_GRAPH_ID_MAX + 1],
                            bool *is_int, pf_proto_error *e);
/* 413 for n things past max (flag: the server's flag). */
pf_status pf__graph_limit(pf_proto_error *e, const char *field, const char *what, uint64_t n,
                          uint32_t max, const char *flag);

#endif
