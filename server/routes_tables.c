/* routes_tables.c -- the table route; see routes_tables.h. A table is
 * one of the features some kinds of map have (kind.h): routes_feature.c
 * does the rest. */
#include "routes_tables.h"

#include "routes_feature.h"

static const pf_kind_request_ops *ops(const pf_kind_ops *kind) { return kind->table; }

static const pf_feature_route route = {PF_KIND_TABLES, ops, "table"};

void pf__route_table_post(pf_req *r, pf_tables_routes *m) {
    pf__route_feature(r, m->registry, m->kinds, m->cfg, m->mem, &route);
}
