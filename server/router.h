/* router.h -- method + path -> route. The table of every route the server
 * answers lives in router.c; a newcomer reads it to see the whole API.
 *
 * Pure function of its inputs, thread-safe.
 */
#ifndef PF_SERVER_ROUTER_H
#define PF_SERVER_ROUTER_H

#include <stdbool.h>
#include <stddef.h>

#define PF_MAP_ID_MAX 64
/* Session ids are 32 lowercase hex digits; the router accepts any
 * [A-Za-z0-9_-]{1,64} there and lets the lookup answer 404. */
#define PF_SESSION_ID_MAX 64

typedef enum pf_route {
    PF_ROUTE_NONE = 0,
    PF_ROUTE_HEALTHZ,         /* GET /healthz */
    PF_ROUTE_READYZ,          /* GET /readyz */
    PF_ROUTE_METRICS,         /* GET /metrics */
    PF_ROUTE_INFO,            /* GET /v1/info */
    PF_ROUTE_MAPS_LIST,       /* GET /v1/maps */
    PF_ROUTE_MAPS_CREATE,     /* POST /v1/maps */
    PF_ROUTE_MAP_GET,         /* GET /v1/maps/{id} */
    PF_ROUTE_MAP_PUT,         /* PUT /v1/maps/{id} */
    PF_ROUTE_MAP_DELETE,      /* DELETE /v1/maps/{id} */
    PF_ROUTE_PATH_GET,        /* GET /v1/maps/{id}/path?start=x,y&goal=x,y */
    PF_ROUTE_PATH_POST,       /* POST /v1/maps/{id}/path */
    PF_ROUTE_PATHS_POST,      /* POST /v1/maps/{id}/paths (batch) */
    PF_ROUTE_MAP_PATCH,       /* PATCH /v1/maps/{id} (world changes) */
    PF_ROUTE_SESSIONS_CREATE, /* POST /v1/maps/{id}/sessions */
    PF_ROUTE_SESSION_GET,     /* GET /v1/maps/{id}/sessions/{sid} */
    PF_ROUTE_SESSION_DELETE,  /* DELETE /v1/maps/{id}/sessions/{sid} */
    PF_ROUTE_SESSION_UPDATES, /* POST /v1/maps/{id}/sessions/{sid}/updates */
    PF_ROUTE_SESSION_STREAM,  /* GET /v1/maps/{id}/sessions/{sid}/stream (WebSocket) */
    PF_ROUTE_MAP_CELLS,       /* GET /v1/maps/{id}/cells (every cell, walls, doors) */
    PF_ROUTE_VIEWER,          /* GET / (the debug viewer page) */
    PF_ROUTE_COUNT
} pf_route;

typedef enum pf_route_match {
    PF_MATCH_OK = 0,
    PF_MATCH_NOT_FOUND,  /* 404: no such resource */
    PF_MATCH_BAD_METHOD, /* 405: the path exists; `allow` lists its methods */
    PF_MATCH_BAD_ID      /* 400: a map id outside [A-Za-z0-9_.-]{1,64} */
} pf_route_match;

typedef struct pf_route_result {
    pf_route route;
    char map_id[PF_MAP_ID_MAX + 1];         /* for /v1/maps/{id}... */
    char session_id[PF_SESSION_ID_MAX + 1]; /* for .../sessions/{sid}... */
    const char *allow;                      /* "GET, PUT, DELETE" for 405 answers */
} pf_route_result;

/* Matches `method` (HEAD counts as GET) and `path` (no query string). */
pf_route_match pf_route_find(const char *method, const char *path, pf_route_result *out);

/* A short label of a route for metrics ("path_post"). */
const char *pf_route_name(pf_route r);

/* Whether id matches [A-Za-z0-9_.-]{1,64}. */
bool pf_map_id_is_valid(const char *id, size_t len);

#endif
