/* store.h -- --data-dir: every map on disk, so a restart keeps them.
 *
 * One file per map, DIR/<id><suffix>, the suffix its kind's (kind.h:
 * ".map.bin" for a grid, ".nav.bin" for a navmesh): the image of the map
 * as it is in its current version, its version number inside, as the kind
 * encodes it (store_encode; image.h seals each with a SHA-256). A file is
 * written to a temporary name, fsync'ed, renamed over the old one and the
 * directory fsync'ed, so a crash leaves either the old file or the new one,
 * never a torn one. Writing one kind's file for an id removes the others'.
 *
 * Map ids are restricted by the router to [A-Za-z0-9_.-], so an id is a
 * safe file name. The HPA* hierarchy is not stored: it is rebuilt at start.
 *
 * At start (pf_store_load_all), nothing found is dropped in silence:
 *   - a temporary file left by a crash (DIR/<id><suffix>.tmp: the rename
 *     never happened, so the map file beside it is the one that counts) is
 *     removed;
 *   - a map file that does not load (damaged: digest or layout; a map past
 *     this server's limits; one that no longer builds) is moved to
 *     DIR/quarantine/<file>.<UTC time>, so a later upload of that id cannot
 *     overwrite the only copy; one that may load later (out of memory or
 *     time) is left where it is;
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

#include "kind.h"
#include "status.h"

typedef struct pf_store pf_store;

/* Opens (and creates, one level) the directory, whose map files end in
 * one of `suffixes` (NULL-terminated, borrowed for the store's life; at
 * most 8). PF_EINVAL with a sentence in err when it is not a writable
 * directory. */
pf_status pf_store_open(const char *dir, const char *const *suffixes, pf_store **out, char *err,
                        size_t errlen);
void pf_store_close(pf_store *st);
const char *pf_store_dir(const pf_store *st);

/* Writes img[0..len) (borrowed) as DIR/<id><suffix> atomically and removes
 * the id's file of every other suffix. PF_EIO (with errno's sentence in
 * err) when the disk refuses; the previous file, if any, is then left as
 * it was. */
pf_status pf_store_write(pf_store *st, const char *id, const char *suffix, const unsigned char *img,
                         size_t len, char *err, size_t errlen);

/* Removes the map's file (every suffix); a missing file is not an error. */
pf_status pf_store_remove(pf_store *st, const char *id, char *err, size_t errlen);

/* Removes stale temporary files, then calls fn for every map file whose
 * name is a map id and a suffix, in no particular order, with its bytes
 * (borrowed for the call). fn returns PF_OK when the map loaded, else
 * fills why: PF_KIND_STORE_LATER leaves the file where it is (it may load
 * next time), any other fault moves it to quarantine/. A file that cannot
 * be read, or whose name is not a map id, is left where it is. Each is
 * reported on stderr and in the report, with the reason the fault says
 * ("damaged (...)", "a map past this server's limits (<flags>)", or the
 * sentence in why->e.message). Returns how many maps loaded. */
typedef pf_status (*pf_store_load_fn)(void *ud, const char *id, const char *suffix,
                                      const unsigned char *img, size_t len,
                                      pf_kind_store_error *why);
size_t pf_store_load_all(pf_store *st, pf_store_load_fn fn, void *ud);

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
    size_t temp_removed; /* stale <id><suffix>.tmp files removed */
    size_t nissues;      /* entries in issues, at most PF_STORE_ISSUES_MAX */
    bool loading;        /* pf_store_load_all is running */
    pf_store_issue issues[PF_STORE_ISSUES_MAX];
} pf_store_report;

/* Copies what the last pf_store_load_all found (so far). */
void pf_store_get_report(pf_store *st, pf_store_report *out);

#endif
