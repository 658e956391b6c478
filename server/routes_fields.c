/* routes_fields.c -- the flow field route; see routes_fields.h. A flow field is
 * one of the features some kinds of map have (kind.h): routes_feature.c
 * does the rest. */
#include "routes_fields.h"

#include "routes_feature.h"

static const pf_kind_request_ops *ops(const pf_kind_ops *kind) { return kind->flowfield; }

static const pf_feature_route route = {PF_KIND_FLOWFIELDS, ops, "flow field"};

void pf__route_flowfield_post(pf_req *r, pf_fields_routes *m) {
    pf__route_feature(r, m->registry, m->kinds, m->cfg, m->mem, &route);
}
