/* precond.h -- the ETag of a map version, and the If-Match /
 * If-None-Match preconditions of a map change (RFC 9110, 13.1).
 *
 * A map version's entity tag is "<version>-<lineage>": the version number
 * and the lineage it belongs to (an upload starts a lineage, a PATCH
 * continues it), so a map deleted and created again at version 1 never has
 * the tag of the one before it. With a shared store (--store) the lineage
 * is numbered by the store and every instance gives a version the same tag;
 * in memory or with --data-dir it is numbered by the server and changes
 * when it restarts (a client then gets 412 once and reads the map again).
 *
 * A change (PUT, POST, PATCH, DELETE) checks its preconditions against the
 * map's current version atomically with the change itself:
 *   If-Match: *            the map exists;
 *   If-Match: "t1", "t2"   its current tag is one of these (strong
 *                          comparison: a weak W/"..." tag never matches);
 *   If-None-Match: *       the map does not exist (create only);
 *   If-None-Match: "t"...  its current tag is none of these.
 * A failed precondition is 412 precondition_failed and changes nothing.
 *
 * Thread-safe: plain values.
 */
#ifndef PF_SERVER_PRECOND_H
#define PF_SERVER_PRECOND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "status.h"

/* Entity tags one header may list. */
#define PF_PRECOND_TAGS 8
/* Room for a formatted tag with its quotes and NUL. */
#define PF_ETAG_LEN 48

typedef struct pf_etag {
    uint64_t version, lineage;
    bool ours; /* false: a tag this server never gives (it matches nothing) */
} pf_etag;

typedef enum pf_precond_kind {
    PF_PRECOND_ABSENT = 0, /* no such header */
    PF_PRECOND_ANY,        /* "*" */
    PF_PRECOND_LIST        /* entity tags */
} pf_precond_kind;

typedef struct pf_precond_list {
    pf_precond_kind kind;
    pf_etag tags[PF_PRECOND_TAGS];
    size_t n;
} pf_precond_list;

typedef struct pf_precond {
    pf_precond_list match, none_match; /* If-Match, If-None-Match */
} pf_precond;

/* "\"<version>-<lineage>\"" into buf (PF_ETAG_LEN bytes). */
void pf_etag_format(uint64_t version, uint64_t lineage, char *buf, size_t n);

/* Reads the two headers' values (NULL when absent) into *out. PF_EPARSE
 * with e naming the header (invalid_request) for a value that is neither
 * "*" nor a comma-separated list of quoted entity tags, or that lists more
 * than PF_PRECOND_TAGS. */
pf_status pf_precond_parse(const char *if_match, const char *if_none_match, pf_precond *out,
                           pf_proto_error *e);

/* Whether c holds for a map that exists (exists) at version/lineage. */
bool pf_precond_holds(const pf_precond *c, bool exists, uint64_t version, uint64_t lineage);

/* One list as the shared store's scripts read it: "" (absent), "*", or
 * "v-l,v-l" (tags this server never gives are left out: they match
 * nothing; a list of only those is "!", which matches nothing either). */
void pf_precond_list_arg(const pf_precond_list *l, char *buf, size_t n);

#endif
