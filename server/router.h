/* router.h -- method + path -> route, and what a route's body may be, all
 * read from the one table of routes (routes.h's PF_ROUTES).
 *
 * Pure functions of their inputs and of that constant table; thread-safe.
 */
#ifndef PF_SERVER_ROUTER_H
#define PF_SERVER_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "routes.h"

#define PF_MAP_ID_MAX 64
/* Session ids are 32 lowercase hex digits; the router accepts any
 * [A-Za-z0-9_-]{1,64} there and lets the lookup answer 404. */
#define PF_SESSION_ID_MAX 64

/* The kinds of request body, as flags for the table's body sets. A new
 * kind (model/obj for meshes) is a flag here and a row in router.c's
 * table of media types. */
typedef enum pf_body_kind {
    PF_BODY_ABSENT = 1u << 0,   /* no Content-Type header */
    PF_BODY_JSON = 1u << 1,     /* application/json */
    PF_BODY_TEXT = 1u << 2,     /* text/plain: a Moving AI map (with a bearer token only) */
    PF_BODY_NDJSON = 1u << 3,   /* application/x-ndjson: session updates, one a line */
    PF_BODY_MOVINGAI = 1u << 4, /* text/x-movingai-map: a Moving AI map */
    PF_BODY_OBJ = 1u << 5       /* model/obj: Wavefront OBJ geometry of a navmesh map */
} pf_body_kind;

typedef enum pf_route_match {
    PF_MATCH_OK = 0,
    PF_MATCH_NOT_FOUND,  /* 404: no such resource */
    PF_MATCH_BAD_METHOD, /* 405: the path exists; `allow` lists its methods */
    PF_MATCH_BAD_ID      /* 400: a map id outside [A-Za-z0-9_.-]{1,64} */
} pf_route_match;

/* Long enough for every method of one path: "GET, HEAD, POST, PUT, PATCH,
 * DELETE". */
#define PF_ALLOW_MAX 48

typedef struct pf_route_result {
    pf_route route;
    char map_id[PF_MAP_ID_MAX + 1];         /* {id} */
    char session_id[PF_SESSION_ID_MAX + 1]; /* {sid} */
    char crowd_id[PF_SESSION_ID_MAX + 1];   /* {cid}: the same form */
    char allow[PF_ALLOW_MAX];               /* PF_MATCH_BAD_METHOD: "GET, HEAD, DELETE" */
} pf_route_result;

/* Matches `method` (HEAD counts as GET) and `path` (no query string) against
 * the table; out is always filled (zeroed first). The Allow list of a
 * known path is its methods in the order GET, HEAD, POST, PUT, PATCH,
 * DELETE (HEAD wherever GET is). */
pf_route_match pf_route_find(const char *method, const char *path, pf_route_result *out);

/* A route's label for metrics ("path_post"); "none" for PF_ROUTE_NONE and
 * values outside the table. */
const char *pf_route_name(pf_route r);

/* The scope the route needs (routes.h). */
pf_scope pf_route_scope(pf_route r);
/* The route's method ("GET") and path shape ("/v1/maps/{id}/path"); ""
 * for PF_ROUTE_NONE. */
const char *pf_route_method(pf_route r);
const char *pf_route_shape(pf_route r);

/* Whether the route reads a request body (its body set is not NONE). */
bool pf_route_has_body(pf_route r);

/* The kind of a body sent to route r with Content-Type header `ct` (NULL or
 * "" when there was none): its media type, parameters (";charset=...")
 * ignored and compared case-insensitively, must be one the route accepts.
 * Returns the kind, or 0 when the route does not accept it (the server's
 * 415). */
pf_body_kind pf_route_body_kind(pf_route r, const char *ct);

/* Writes the media types route r accepts as a phrase for a 415 message
 * ("application/json or text/plain (a Moving AI map)") into buf. */
void pf_route_describe_bodies(pf_route r, char *buf, size_t len);

/* Whether id matches [A-Za-z0-9_.-]{1,64} and is not "generate" (reserved:
 * POST /v1/maps/generate is a route, so that map could not be reached). */
bool pf_map_id_is_valid(const char *id, size_t len);

/* Internal, exposed for tests: how path fits one shape. 2 (fits: the
 * captures are in *out and *spec says how specific the shape is, greater
 * wins), 1 (it would fit but for a bad map id), 0 (no). */
int pf__route_shape_fits(const char *shape, const char *path, pf_route_result *out, uint32_t *spec);

#endif
