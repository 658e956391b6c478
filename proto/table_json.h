/* table_json.h -- distance table requests in (POST /v1/maps/{id}/table)
 * and matrices out, after OSRM's table service.
 *
 * Request:
 *   sources      [[x, y], ...] (required, at least one)
 *   targets      [[x, y], ...] (default: the sources)
 *   agent_size   1..max_agent_size (default 1)
 *   paths        true adds the paths (default false)
 *   deadline_ms  1..3600000
 * sources x targets is limited to max_entries (PF_ELIMIT naming
 * "targets"), and to max_path_entries with paths (naming "paths").
 * Unknown fields are rejected; errors name the field ("sources[2]").
 *
 * Answer (a value):
 *   {"costs":[[c|null, ...], ...],      row i = source i, column j = target j;
 *                                       null where there is no path
 *    "paths":[[[[x,y],...]|null, ...], ...],   with paths only
 *    "agent_size":n, "map_version":V,
 *    "stats":{"searches","expanded","unreachable","direction":
 *             "forward"|"backward","time_us"}}
 * Thread-safe.
 */
#ifndef PF_PROTO_TABLE_JSON_H
#define PF_PROTO_TABLE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "grid.h"
#include "jsonw.h"

/* The server's named limits (--max-table-entries, --max-table-paths,
 * --max-agent-size). */
typedef struct pf_table_limits {
    size_t max_entries;      /* sources x targets */
    size_t max_path_entries; /* ... when paths are asked for */
    int32_t max_agent_size;
} pf_table_limits;

typedef struct pf_table_request {
    pf_point *sources; /* owned: pf_table_request_clear */
    size_t nsources;
    pf_point *targets; /* owned, or == sources when "targets" was not given */
    size_t ntargets;
    int32_t agent_size;
    bool paths;
    int64_t deadline_ms; /* 0 = not given */
} pf_table_request;

/* Parses a request body. Statuses: PF_EPARSE (malformed JSON, wrong types,
 * no sources, unknown fields), PF_EINVAL (an empty list, agent_size out of
 * range), PF_ERANGE (a coordinate beyond int32), PF_ELIMIT (the size
 * limits), PF_ENOMEM. On error nothing is owned. */
pf_status pf_table_request_parse(const char *buf, size_t len, const pf_table_limits *lim,
                                 pf_table_request *out, pf_proto_error *e);
void pf_table_request_clear(pf_table_request *r);

/* One row of costs as a value: [c, null, ...] (INFINITY -> null). */
void pf_table_write_row(pf_jsonw *w, const double *costs, size_t n);
/* A path as a value: [[x,y],...], or null for n == 0. */
void pf_table_write_path(pf_jsonw *w, const pf_point *path, size_t n);

typedef struct pf_table_answer {
    const double *costs; /* nsources x ntargets, row-major */
    size_t nsources, ntargets;
    const char *paths_json; /* the value of "paths", pre-written (borrowed); NULL = none */
    size_t paths_len;
    int32_t agent_size;
    uint64_t map_version;
    uint64_t searches, expanded, time_us;
    uint64_t unreachable; /* pairs answered from the components, unsearched */
    bool backward;
} pf_table_answer;

/* Writes the answer object as a value. */
void pf_table_write_answer(pf_jsonw *w, const pf_table_answer *a);

#endif
