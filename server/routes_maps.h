/* routes_maps.h -- the map routes (routes.h's `maps` rows): list, upload
 * (POST, PUT), info, cells, PATCH and DELETE of /v1/maps[/{id}].
 *
 * Listing, info and DELETE answer on the I/O thread; an upload (parse,
 * preprocessing, publication), a PATCH (the next version with its cells
 * and doors) and /cells (megabytes of JSON on big maps) are jobs on the
 * pool. Every change goes through maps.h, which keeps the data directory
 * and the registry in agreement.
 */
#ifndef PF_SERVER_ROUTES_MAPS_H
#define PF_SERVER_ROUTES_MAPS_H

#include "config.h"
#include "maps.h"
#include "registry.h"
#include "routes.h"

/* Borrowed; filled by server.c. */
struct pf_maps_routes {
    pf_maps *maps;
    pf_registry *registry;
    const pf_config *cfg; /* max_maps, for the 413 sentence */
};

#endif
