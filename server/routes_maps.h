/* routes_maps.h -- the map routes (routes.h's `maps` rows): list, upload
 * (POST, PUT), info, cells, hierarchy (HPA*, for the viewer), PATCH and
 * DELETE of /v1/maps[/{id}].
 *
 * Info answers on the I/O thread (with the version's ETag); every route
 * that reaches the store runs as a job on the pool: the listing (the
 * shared store's index), an upload (parse, preprocessing, publication), a
 * PATCH (the next version with its cells and doors), a DELETE, /cells and
 * /hierarchy (megabytes of JSON on big maps). If-Match / If-None-Match are read on
 * the I/O thread (400 when malformed) and checked by maps.h with the
 * change. Every change goes through maps.h, whichever store is behind it.
 */
#ifndef PF_SERVER_ROUTES_MAPS_H
#define PF_SERVER_ROUTES_MAPS_H

#include "config.h"
#include "maps.h"
#include "metrics.h"
#include "registry.h"
#include "routes.h"

/* Borrowed; filled by server.c. */
struct pf_maps_routes {
    pf_maps *maps;
    pf_registry *registry;
    const pf_config *cfg; /* max_maps, for the 413 sentence */
    pf_metrics *metrics;  /* build and repair durations */
};

#endif
