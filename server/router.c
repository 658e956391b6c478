/* router.c -- see router.h. */
#include "router.h"

#include <string.h>

typedef enum shape { SHAPE_EXACT, SHAPE_MAP, SHAPE_MAP_SUB, SHAPE_SESSION } shape;

typedef struct route_def {
    shape shape;
    const char *path; /* exact path, the sub-resource after /v1/maps/{id}/, or
                         the one after /v1/maps/{id}/sessions/{sid} */
    const char *method;
    pf_route route;
} route_def;

/* Every route of the API (proto/openapi.yaml describes them). */
static const route_def routes[] = {
    {SHAPE_EXACT, "/healthz", "GET", PF_ROUTE_HEALTHZ},
    {SHAPE_EXACT, "/readyz", "GET", PF_ROUTE_READYZ},
    {SHAPE_EXACT, "/metrics", "GET", PF_ROUTE_METRICS},
    {SHAPE_EXACT, "/v1/info", "GET", PF_ROUTE_INFO},
    {SHAPE_EXACT, "/v1/maps", "GET", PF_ROUTE_MAPS_LIST},
    {SHAPE_EXACT, "/v1/maps", "POST", PF_ROUTE_MAPS_CREATE},
    {SHAPE_MAP, "", "GET", PF_ROUTE_MAP_GET},
    {SHAPE_MAP, "", "PUT", PF_ROUTE_MAP_PUT},
    {SHAPE_MAP, "", "DELETE", PF_ROUTE_MAP_DELETE},
    {SHAPE_MAP_SUB, "path", "GET", PF_ROUTE_PATH_GET},
    {SHAPE_MAP_SUB, "path", "POST", PF_ROUTE_PATH_POST},
    {SHAPE_MAP_SUB, "paths", "POST", PF_ROUTE_PATHS_POST},
    {SHAPE_MAP, "", "PATCH", PF_ROUTE_MAP_PATCH},
    {SHAPE_MAP_SUB, "sessions", "POST", PF_ROUTE_SESSIONS_CREATE},
    {SHAPE_SESSION, "", "GET", PF_ROUTE_SESSION_GET},
    {SHAPE_SESSION, "", "DELETE", PF_ROUTE_SESSION_DELETE},
    {SHAPE_SESSION, "/updates", "POST", PF_ROUTE_SESSION_UPDATES},
    {SHAPE_SESSION, "/stream", "GET", PF_ROUTE_SESSION_STREAM},
    {SHAPE_MAP_SUB, "cells", "GET", PF_ROUTE_MAP_CELLS},
    {SHAPE_EXACT, "/", "GET", PF_ROUTE_VIEWER},
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

static const char *const route_names[PF_ROUTE_COUNT] = {
    "none",        "healthz",        "readyz",          "metrics",        "info",
    "maps_list",   "maps_create",    "map_get",         "map_put",        "map_delete",
    "path_get",    "path_post",      "paths_post",      "map_patch",      "sessions_create",
    "session_get", "session_delete", "session_updates", "session_stream", "map_cells",
    "viewer"};

const char *pf_route_name(pf_route r) {
    return (unsigned)r < PF_ROUTE_COUNT ? route_names[r] : "none";
}

bool pf_map_id_is_valid(const char *id, size_t len) {
    if (len < 1 || len > PF_MAP_ID_MAX) return false;
    for (size_t i = 0; i < len; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

/* The Allow header of a path: its methods, in table order. */
static const char *allow_for(shape sh, const char *sub) {
    if (sh == SHAPE_EXACT) return strcmp(sub, "/v1/maps") == 0 ? "GET, POST" : "GET, HEAD";
    if (sh == SHAPE_MAP) return "GET, HEAD, PUT, PATCH, DELETE";
    if (sh == SHAPE_SESSION)
        return *sub == '\0'                  ? "GET, HEAD, DELETE"
               : strcmp(sub, "/stream") == 0 ? "GET, HEAD"
                                             : "POST";
    if (strcmp(sub, "cells") == 0) return "GET, HEAD";
    return strcmp(sub, "path") == 0 ? "GET, HEAD, POST" : "POST";
}

pf_route_match pf_route_find(const char *method, const char *path, pf_route_result *out) {
    static const char prefix[] = "/v1/maps/";
    const char *id, *slash, *sub = "";
    size_t idlen;
    shape sh;
    bool path_known = false;

    memset(out, 0, sizeof(*out));
    if (strcmp(method, "HEAD") == 0) method = "GET";
    if (strncmp(path, prefix, sizeof(prefix) - 1) == 0) {
        id = path + sizeof(prefix) - 1;
        slash = strchr(id, '/');
        idlen = slash ? (size_t)(slash - id) : strlen(id);
        if (slash) {
            sub = slash + 1;
            sh = SHAPE_MAP_SUB;
            if (strncmp(sub, "sessions/", 9) == 0) {
                /* sessions/{sid}[/updates|/stream] */
                const char *sid = sub + 9, *rest = strchr(sid, '/');
                size_t slen = rest ? (size_t)(rest - sid) : strlen(sid);
                if (slen < 1 || slen > PF_SESSION_ID_MAX) return PF_MATCH_NOT_FOUND;
                for (size_t i = 0; i < slen; i++) {
                    char c = sid[i];
                    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == '-'))
                        return PF_MATCH_NOT_FOUND;
                }
                memcpy(out->session_id, sid, slen);
                out->session_id[slen] = '\0';
                sub = rest ? rest : "";
                if (*sub && strcmp(sub, "/updates") != 0 && strcmp(sub, "/stream") != 0)
                    return PF_MATCH_NOT_FOUND;
                sh = SHAPE_SESSION;
            } else if (strcmp(sub, "path") != 0 && strcmp(sub, "paths") != 0 &&
                       strcmp(sub, "sessions") != 0 && strcmp(sub, "cells") != 0) {
                return PF_MATCH_NOT_FOUND;
            }
        } else {
            sh = SHAPE_MAP;
        }
        if (idlen == 0 && !slash) {
            /* "/v1/maps/" is the collection. */
            path = "/v1/maps";
            sh = SHAPE_EXACT;
            sub = path;
        } else if (!pf_map_id_is_valid(id, idlen)) {
            return PF_MATCH_BAD_ID;
        } else {
            memcpy(out->map_id, id, idlen);
            out->map_id[idlen] = '\0';
        }
    } else {
        sh = SHAPE_EXACT;
        sub = path;
    }
    for (size_t i = 0; i < NROUTES; i++) {
        if (routes[i].shape != sh || strcmp(routes[i].path, sh == SHAPE_MAP ? "" : sub) != 0)
            continue;
        path_known = true;
        if (strcmp(routes[i].method, method) == 0) {
            out->route = routes[i].route;
            return PF_MATCH_OK;
        }
    }
    if (!path_known) return PF_MATCH_NOT_FOUND;
    out->allow = allow_for(sh, sub);
    return PF_MATCH_BAD_METHOD;
}
