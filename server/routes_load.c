/* routes_load.c -- load on miss: with a shared store (--store), a request
 * for a map this instance does not hold loads it first, on a worker
 * (pf_maps_load: one round trip to Redis, then the map is built here,
 * hierarchy and landmarks included), and then runs its route's handler as
 * if the map had been here all along. A map held here costs nothing: no
 * round trip, only the registry lookup every handler makes anyway.
 *
 * Every route with a map id loads first except those that do not need a
 * copy here: PUT and DELETE (they change the store itself), and the routes
 * of a session or a crowd (they live in the instance that made them: where
 * the map is not held there is none, 404 session_not_found or
 * crowd_not_found). */
#include "maps.h"
#include "request.h"
#include "routes.h"

static void run_load(pf_req *r, pf_search_ctx *ctx) {
    pf_proto_error e;
    (void)ctx;
    if (pf_maps_load(pf_req_state(r), pf_req_map_id(r), &e)) {
        pf_req_answer_perror(r, &e);
        pf_req_finish(r);
        return;
    }
    pf_req_finish_again(r);
}

bool pf__routes_load_first(const pf_routes *rt, pf_route route, pf_req *r) {
    const char *id = pf_req_map_id(r);
    if (!rt->store || !id[0] || pf_req_session_id(r)[0] || pf_req_crowd_id(r)[0] ||
        route == PF_ROUTE_MAP_PUT || route == PF_ROUTE_MAP_DELETE || pf_req_reruns(r) > 0)
        return false;
    if (!pf_maps_needs_load(rt->store, id)) return false;
    /* The handler sets its own state when it runs; this one frees nothing. */
    pf_req_set_state(r, rt->store, NULL);
    pf_req_dispatch(r, PF_JOB_BUILD, run_load);
    return true;
}
