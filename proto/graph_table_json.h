/* graph_table_json.h -- distance table requests on a waypoint graph
 * (POST /v1/maps/{id}/table on a graph map), after OSRM's table service
 * and the grids' table (table_json.h):
 *
 *   {"sources":[place, ...], "targets":[place, ...], "paths":false,
 *    "exclude_tags":["stairs"], "deadline_ms":50}
 *
 * A place is a node id or {"point":[x,y(,z)]} (graph_json.h's
 * pf_graph_place). targets default to the sources. sources x targets is
 * at most max_entries (PF_ELIMIT naming "targets"), max_path_entries with
 * paths (naming "paths"). Unknown members are refused; errors name the
 * field ("sources[2]"). Never aborts, logs or keeps globals. */
#ifndef PF_PROTO_GRAPH_TABLE_JSON_H
#define PF_PROTO_GRAPH_TABLE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph_json.h"

typedef struct pf_graph_table_request {
    pf_graph_place *sources; /* owned: pf_graph_table_request_clear */
    size_t nsources;
    pf_graph_place *targets; /* owned, or == sources without "targets" */
    size_t ntargets;
    bool paths;
    pf_graph_exclude exclude; /* "exclude_tags", as a path request's */
    int64_t deadline_ms;      /* 0: not given */
} pf_graph_table_request;

/* max_entries / max_path_entries: --max-table-entries, --max-table-paths.
 * PF_EPARSE (400: malformed, unknown members, no sources), PF_EINVAL
 * (422), PF_ELIMIT (413), PF_ENOMEM; nothing owned on error. */
pf_status pf_graph_table_request_parse(const char *body, size_t len, size_t max_entries,
                                       size_t max_path_entries, pf_graph_table_request *q,
                                       pf_proto_error *e);
void pf_graph_table_request_clear(pf_graph_table_request *q);

#endif
