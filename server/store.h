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
 * At start (pf_store_load_all), nothing found is dropped in silence:
 *   - a temporary file left by a crash (DIR/<id>.map.bin.tmp or
 *     <id>.nav.bin.tmp: the rename never happened, so the map file beside
 *     it is the one that counts) is removed;
 *   - a map file that does not load (damaged: digest or layout; a map past
 *     this server's limits; a navmesh envelope that no longer builds) is
 *     moved to DIR/quarantine/<file>.<UTC time>, so a later upload of that
 *     id cannot overwrite the only copy;
 *   - every such event is reported on stderr and kept as an issue
 *     (pf_store_get_report) for /readyz and /metrics.
 *
 * Thread-safe as long as calls for one id do not overlap (the server holds
 * its store lock around a write and the publication it belongs to);
 * pf_store_get_report may run at any time, also during pf_store_load_all.
 */
#ifndef PF_SERVER_STORE_H
#define PF_SERVER_STORE_H

#include <stdbool.h>
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

/* Removes stale temporary files, then calls fn for every map file that
 * reads back whole, in no particular order; fn takes g. A file that does
 * not (bad digest, truncated, a map past `lim`) is moved to quarantine/; a
 * file that cannot be read, or whose name is not a map id, is left where
 * it is; out of memory skips the file and leaves it. Each is reported on
 * stderr and in the report. Returns how many maps were handed to fn. */
typedef void (*pf_store_load_fn)(void *ud, const char *id, uint64_t version, pf_grid *g);
/* For a navmesh file: its envelope, borrowed for the call. PF_OK when the
 * map was built from it; PF_ECANCELED skips the file (left in place: out
 * of memory, a build past its time limit), any other status quarantines
 * it (an envelope this server no longer accepts: its size limits, bad
 * geometry); either way with the sentence fn_nav wrote into why. */
typedef pf_status (*pf_store_load_nav_fn)(void *ud, const char *id, uint64_t version,
                                          const char *bytes, size_t len, char *why, size_t whylen);
size_t pf_store_load_all(pf_store *st, const pf_grid_limits *lim, pf_store_load_fn fn,
                         pf_store_load_nav_fn fn_nav, void *ud);

/* The name of the quarantine folder inside the data directory. */
#define PF_STORE_QUARANTINE "quarantine"
/* Issues kept in detail (the counts go on past it). */
#define PF_STORE_ISSUES_MAX 32

/* One file the start could not use. */
typedef struct pf_store_issue {
    char file[96];      /* the name in DIR: "arena.map.bin" (cut if longer) */
    char moved_to[128]; /* "quarantine/arena.map.bin.20261201T124329Z", or "" when left */
    char reason[160];   /* a sentence */
} pf_store_issue;

typedef struct pf_store_report {
    size_t loaded;       /* maps handed to fn */
    size_t quarantined;  /* files moved to quarantine/ */
    size_t skipped;      /* files left in place (unreadable, not a map id, no memory) */
    size_t temp_removed; /* stale *.map.bin.tmp files removed */
    size_t nissues;      /* entries in issues, at most PF_STORE_ISSUES_MAX */
    bool loading;        /* pf_store_load_all is running */
    pf_store_issue issues[PF_STORE_ISSUES_MAX];
} pf_store_report;

/* Copies what the last pf_store_load_all found (so far). */
void pf_store_get_report(pf_store *st, pf_store_report *out);

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
