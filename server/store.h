/* store.h -- --data-dir: every map on disk, so a restart keeps them.
 *
 * One file per map, DIR/<id>.map.bin: the grid as it is in its current
 * version (cell costs, walls, doors with their state and their cells' open
 * costs, the connectivity rules) and the version number, followed by a
 * SHA-256 of everything before it (nettle). A file is written to a temporary
 * name, fsync'ed, renamed over the old one and the directory fsync'ed, so a
 * crash leaves either the old file or the new one, never a torn one; a file
 * whose digest does not match is reported and skipped at start.
 *
 * A navmesh map is DIR/<id>.nav.bin instead: "PATHDNAV", format, version,
 * the length and bytes of its envelope (proto/nav_json.h: the upload and
 * the version's obstacles and area states, which parse back into the same
 * map), and the SHA-256. Writing one kind of file for an id removes the
 * other kind's.
 *
 * Map ids are restricted by the router to [A-Za-z0-9_.-], so an id is a
 * safe file name. The HPA* hierarchy is not stored: it is rebuilt at start.
 *
 * Thread-safe as long as calls for one id do not overlap (the server holds
 * its store lock around a write and the publication it belongs to).
 */
#ifndef PF_SERVER_STORE_H
#define PF_SERVER_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "status.h"

typedef struct pf_store pf_store;

/* Opens (and creates, one level) the directory. PF_EINVAL with a sentence
 * in err when it is not a writable directory. */
pf_status pf_store_open(const char *dir, pf_store **out, char *err, size_t errlen);
void pf_store_close(pf_store *st);
const char *pf_store_dir(const pf_store *st);

/* Writes the map atomically. PF_EIO (with errno's sentence in err) when the
 * disk refuses; the previous file, if any, is then left as it was. */
pf_status pf_store_write(pf_store *st, const char *id, uint64_t version, const pf_grid *g,
                         char *err, size_t errlen);

/* Writes a navmesh map's envelope (len bytes) atomically, as pf_store_write. */
pf_status pf_store_write_nav(pf_store *st, const char *id, uint64_t version, const char *bytes,
                             size_t len, char *err, size_t errlen);

/* Removes the map's file; a missing file is not an error. */
pf_status pf_store_remove(pf_store *st, const char *id, char *err, size_t errlen);

/* Calls fn for every map file that reads back whole, in no particular
 * order; fn takes g. Files that do not (bad digest, truncated, a map past
 * `lim`, a name that is not a map id) are reported on stderr and skipped.
 * Returns how many maps were handed to fn. */
typedef void (*pf_store_load_fn)(void *ud, const char *id, uint64_t version, pf_grid *g);
/* For a navmesh file: its envelope, borrowed for the call. */
typedef void (*pf_store_load_nav_fn)(void *ud, const char *id, uint64_t version, const char *bytes,
                                     size_t len);
size_t pf_store_load_all(pf_store *st, const pf_grid_limits *lim, pf_store_load_fn fn,
                         pf_store_load_nav_fn fn_nav, void *ud);

/* Serialization, exposed for tests: a malloc'd image of g (free()), and its
 * inverse. pf_store_decode returns PF_EPARSE for a damaged image. */
pf_status pf_store_encode(const pf_grid *g, uint64_t version, unsigned char **out, size_t *len);
pf_status pf_store_decode(const unsigned char *buf, size_t len, const pf_grid_limits *lim,
                          pf_grid **out, uint64_t *version);
/* The navmesh file's image and its inverse (*bytes points into buf). */
pf_status pf_store_encode_nav(const char *bytes, size_t n, uint64_t version, unsigned char **out,
                              size_t *len);
pf_status pf_store_decode_nav(const unsigned char *buf, size_t len, const char **bytes, size_t *n,
                              uint64_t *version);

#endif
