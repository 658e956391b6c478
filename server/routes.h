/* routes.h -- every route of the API, one row each. A newcomer reads
 * PF_ROUTES to see the whole API; proto/openapi.yaml describes each route.
 *
 * A row says:
 *   ROUTE   the route's enum name, PF_ROUTE_<ROUTE> (metrics arrays, tests);
 *   name    its label in /metrics ("path_post"), and its handler's name:
 *           pf__route_<name>;
 *   method  GET, POST, PUT, PATCH or DELETE (HEAD is answered as GET);
 *   path    its shape: literal segments and placeholders, {id} a map id
 *           ([A-Za-z0-9_.-]{1,64}; anything else there is 400
 *           invalid_map_id) and {sid} a session id ([A-Za-z0-9_-]{1,64};
 *           anything else is 404). A trailing "/?" accepts one trailing
 *           slash. Where two shapes match a path, the one whose first
 *           differing segment is literal wins (a row for /v1/maps/generate
 *           would beat /v1/maps/{id}). router.c says how to add a
 *           placeholder;
 *   bodies  the request bodies it reads, one of the PF_BODIES_* sets below
 *           (a set of router.h's PF_BODY_* Content-Types); NONE: the route
 *           takes no body, one that comes is dropped unread. Any other
 *           Content-Type is 415;
 *   scope   the token a caller needs when the server has a token file
 *           (auth.h, checked by http.c through guard.h before the
 *           handler runs): OPEN (probes, the viewer page), READ (paths,
 *           sessions, every GET), WRITE (map uploads, PATCH, DELETE);
 *   module  the resource file its handler is in: ops (routes_ops.c), maps
 *           (routes_maps.c, the navmesh export in routes_mesh.c, the
 *           waypoint graph export in routes_graph.c),
 *           paths (routes_paths.c), fields (flow fields, routes_fields.c),
 *           tables (distance tables, routes_tables.c), sessions
 *           (routes_sessions.c), crowds (routes_crowds.c). The handler,
 *             void pf__route_<name>(pf_req *r, pf_<module>_routes *m),
 *           receives that module's context and nothing else.
 *
 * From these rows come the route enum, the metrics labels, the router's
 * table (404, 405 with its Allow header, 400 for a bad map id, 415), and
 * the call of each handler. Adding a route is a row here and its handler
 * in its resource file; nothing else names it.
 */
#ifndef PF_SERVER_ROUTES_H
#define PF_SERVER_ROUTES_H

#include <stdbool.h>

#include "auth.h" /* pf_scope */

/* clang-format off */
/*  ROUTE            name             method  path                                    bodies   scope  module */
#define PF_ROUTES(XX)                                                                                               \
    XX(HEALTHZ,         healthz,         GET,    "/healthz",                              NONE,    OPEN,  ops)      \
    XX(READYZ,          readyz,          GET,    "/readyz",                               NONE,    OPEN,  ops)      \
    XX(METRICS,         metrics,         GET,    "/metrics",                              NONE,    READ,  ops)      \
    XX(INFO,            info,            GET,    "/v1/info",                              NONE,    READ,  ops)      \
    XX(MAPS_LIST,       maps_list,       GET,    "/v1/maps/?",                            NONE,    READ,  maps)     \
    XX(MAPS_CREATE,     maps_create,     POST,   "/v1/maps/?",                            MAP,     WRITE, maps)     \
    XX(MAPS_GENERATE,   maps_generate,   POST,   "/v1/maps/generate",                     JSON,    WRITE, maps)     \
    XX(MAP_GET,         map_get,         GET,    "/v1/maps/{id}",                         NONE,    READ,  maps)     \
    XX(MAP_PUT,         map_put,         PUT,    "/v1/maps/{id}",                         MAP,     WRITE, maps)     \
    XX(MAP_DELETE,      map_delete,      DELETE, "/v1/maps/{id}",                         NONE,    WRITE, maps)     \
    XX(PATH_GET,        path_get,        GET,    "/v1/maps/{id}/path",                    NONE,    READ,  paths)    \
    XX(PATH_POST,       path_post,       POST,   "/v1/maps/{id}/path",                    QUERY,   READ,  paths)    \
    XX(PATHS_POST,      paths_post,      POST,   "/v1/maps/{id}/paths",                   QUERY,   READ,  paths)    \
    XX(FLOWFIELD_POST,  flowfield_post,  POST,   "/v1/maps/{id}/flowfield",               JSON,    READ,  fields)   \
    XX(TABLE_POST,      table_post,      POST,   "/v1/maps/{id}/table",                   JSON,    READ,  tables)   \
    XX(MAP_PATCH,       map_patch,       PATCH,  "/v1/maps/{id}",                         JSON,    WRITE, maps)     \
    XX(SESSIONS_LIST,   sessions_list,   GET,    "/v1/maps/{id}/sessions",                NONE,    READ,  sessions) \
    XX(SESSIONS_CREATE, sessions_create, POST,   "/v1/maps/{id}/sessions",                JSON,    READ,  sessions) \
    XX(SESSION_GET,     session_get,     GET,    "/v1/maps/{id}/sessions/{sid}",          NONE,    READ,  sessions) \
    XX(SESSION_DELETE,  session_delete,  DELETE, "/v1/maps/{id}/sessions/{sid}",          NONE,    READ,  sessions) \
    XX(SESSION_UPDATES, session_updates, POST,   "/v1/maps/{id}/sessions/{sid}/updates",  UPDATES, READ,  sessions) \
    XX(SESSION_STREAM,  session_stream,  GET,    "/v1/maps/{id}/sessions/{sid}/stream",   NONE,    READ,  sessions) \
    XX(STREAM,          stream,          GET,    "/v1/stream",                            NONE,    READ,  sessions) \
    XX(MAP_CELLS,       map_cells,       GET,    "/v1/maps/{id}/cells",                   NONE,    READ,  maps)     \
    XX(MAP_HIERARCHY,   map_hierarchy,   GET,    "/v1/maps/{id}/hierarchy",               NONE,    READ,  maps)     \
    XX(MAP_MESH,        map_mesh,        GET,    "/v1/maps/{id}/mesh",                    NONE,    READ,  maps)     \
    XX(MAP_GRAPH,       map_graph,       GET,    "/v1/maps/{id}/graph",                   NONE,    READ,  maps)     \
    XX(CROWDS_CREATE,   crowds_create,   POST,   "/v1/maps/{id}/crowds",                  JSON,    READ,  crowds)   \
    XX(CROWD_GET,       crowd_get,       GET,    "/v1/maps/{id}/crowds/{cid}",            NONE,    READ,  crowds)   \
    XX(CROWD_DELETE,    crowd_delete,    DELETE, "/v1/maps/{id}/crowds/{cid}",            NONE,    READ,  crowds)   \
    XX(CROWD_STEP,      crowd_step,      POST,   "/v1/maps/{id}/crowds/{cid}/step",       JSON,    READ,  crowds)   \
    XX(CROWD_STREAM,    crowd_stream,    GET,    "/v1/maps/{id}/crowds/{cid}/stream",     NONE,    READ,  crowds)   \
    XX(VIEWER,          viewer,          GET,    "/",                                     NONE,    OPEN,  ops)
/* clang-format on */

/* The body sets of the table. Anything that changes state must declare
 * its Content-Type, and only types a browser cannot send cross-site
 * without asking (a CORS preflight) are accepted for it: application/json,
 * application/x-ndjson, text/x-movingai-map; text/plain (the one such type
 * a form can send) only together with a valid bearer token, which a form
 * cannot add (http.c). ABSENT: a request without Content-Type is read as
 * JSON; only path queries, which change nothing, allow it. */
#define PF_BODIES_NONE 0u
#define PF_BODIES_QUERY (PF_BODY_ABSENT | PF_BODY_JSON)
#define PF_BODIES_JSON PF_BODY_JSON
#define PF_BODIES_MAP (PF_BODY_JSON | PF_BODY_TEXT | PF_BODY_MOVINGAI | PF_BODY_OBJ)
#define PF_BODIES_UPDATES (PF_BODY_JSON | PF_BODY_NDJSON)

typedef enum pf_route {
    PF_ROUTE_NONE = 0, /* not routed: 404, 405, 400 or 503 before a route was found */
#define PF_ROUTE_ENUM(route, name, method, path, bodies, scope, module) PF_ROUTE_##route,
    PF_ROUTES(PF_ROUTE_ENUM)
#undef PF_ROUTE_ENUM
        PF_ROUTE_COUNT
} pf_route;

typedef struct pf_req pf_req;
typedef struct pf_ops_routes pf_ops_routes;
typedef struct pf_maps_routes pf_maps_routes;
typedef struct pf_paths_routes pf_paths_routes;
typedef struct pf_fields_routes pf_fields_routes;
typedef struct pf_tables_routes pf_tables_routes;
typedef struct pf_sessions_routes pf_sessions_routes;
typedef struct pf_crowds_routes pf_crowds_routes;

/* The resource modules' contexts, made by server.c; the route table's
 * `module` column names a member. A new resource file adds its member
 * here and builds it in server.c. */
typedef struct pf_routes {
    pf_ops_routes *ops;
    pf_maps_routes *maps;
    pf_paths_routes *paths;
    pf_fields_routes *fields;
    pf_tables_routes *tables;
    pf_sessions_routes *sessions;
    pf_crowds_routes *crowds;
    struct pf_maps *store; /* for routes_load.c: a map not held here is loaded first */
} pf_routes;

#define PF_ROUTE_HANDLER_DECL(route, name, method, path, bodies, scope, module)                    \
    void pf__route_##name(pf_req *r, pf_##module##_routes *m);
PF_ROUTES(PF_ROUTE_HANDLER_DECL)
#undef PF_ROUTE_HANDLER_DECL

/* Runs route's handler with its module's context (route is a routed one,
 * not PF_ROUTE_NONE). The handler either answers r at once (request.h) or
 * hands it to a job on the pool (pf_req_dispatch) that answers it later.
 * With a shared store, a route of a map this instance does not hold first
 * loads it (routes_load.c), then runs the handler. */
void pf_routes_call(const pf_routes *rt, pf_route route, pf_req *r);

/* routes_load.c: true when r went to a load job (or was answered 503)
 * instead of its handler. */
bool pf__routes_load_first(const pf_routes *rt, pf_route route, pf_req *r);

#endif
