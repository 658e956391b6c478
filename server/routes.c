/* routes.c -- see routes.h: the call of each route's handler, generated
 * from the table. */
#include "routes.h"

void pf_routes_call(const pf_routes *rt, pf_route route, pf_req *r) {
    if (pf__routes_load_first(rt, route, r)) return;
    switch (route) {
#define PF_ROUTE_CALL(route, name, method, path, bodies, scope, module)                            \
    case PF_ROUTE_##route:                                                                         \
        pf__route_##name(r, rt->module);                                                           \
        break;
        PF_ROUTES(PF_ROUTE_CALL)
#undef PF_ROUTE_CALL
    case PF_ROUTE_NONE:
    case PF_ROUTE_COUNT:
        break;
    }
}
