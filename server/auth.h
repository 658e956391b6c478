/* auth.h -- bearer tokens from --auth-token-file: who may do what.
 *
 * The file holds one token a line, "<scope> <token>":
 *
 *   # game servers of the EU fleet
 *   read  3q2+7w9ZbXk0PAl1sYvT8g
 *   write Zk9v1Q0c2b7mXy8Rt5Lw3A
 *
 * Blank lines and lines starting with '#' are skipped; fields are separated
 * by spaces or tabs, and nothing may follow the token. Scopes (Redis ACLs
 * have the same split between read-only and admin users):
 *   read   paths and batches, map listing and info, /cells, sessions of its
 *          own (create, read, update, stream, delete);
 *   write  everything read may, plus map uploads, PATCH and DELETE, and
 *          every session.
 * A token is 16 to PF_AUTH_TOKEN_MAX characters of RFC 6750's b64token
 * alphabet (A-Z a-z 0-9 - . _ ~ + / then trailing '=' padding), so it can
 * always be sent as `Authorization: Bearer <token>`. A token listed twice,
 * an unknown scope, a short token or a file without any token is an error
 * naming the line; the token itself is never copied into a message.
 *
 * Tokens are kept only as SHA-256 digests. A presented token is hashed and
 * its digest compared with every digest of the table in constant time
 * (word-wise XOR, no early exit, no branch on the bytes), so neither the
 * bytes of a token nor its length leak through the time a check takes:
 * that time depends on the number of tokens only. The first 16 bytes of
 * the digest name the token (pf_auth_id): sessions remember who created
 * them without keeping the secret, and the name survives a reload.
 *
 * Thread-safety: pf_auth_check may run on any thread at any time;
 * pf_auth_reload builds the new table aside and swaps it in under a write
 * lock, so a check sees the old table or the new one, never half of each.
 */
#ifndef PF_SERVER_AUTH_H
#define PF_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* Shortest and longest token accepted (characters). */
#define PF_AUTH_TOKEN_MIN 16
#define PF_AUTH_TOKEN_MAX 512
/* Largest token file read (bytes) and most tokens in it. */
#define PF_AUTH_FILE_MAX (1024 * 1024)
#define PF_AUTH_TOKENS_MAX 1024

/* What a route needs, and what a token has (never OPEN). */
typedef enum pf_scope { PF_SCOPE_OPEN = 0, PF_SCOPE_READ, PF_SCOPE_WRITE } pf_scope;

/* "open", "read", "write". */
const char *pf_scope_name(pf_scope s);
/* Whether `have` allows what `need` asks (write includes read). */
bool pf_scope_allows(pf_scope have, pf_scope need);

/* The name of a token: the first bytes of its SHA-256. All zero for "no
 * token" (a server without a token file). */
typedef struct pf_auth_id {
    uint8_t b[16];
} pf_auth_id;

bool pf_auth_id_equal(const pf_auth_id *a, const pf_auth_id *b);

/* What a check found. */
typedef enum pf_auth_result {
    PF_AUTH_OK = 0,    /* a known token: scope and id are set */
    PF_AUTH_MISSING,   /* no Authorization header */
    PF_AUTH_MALFORMED, /* not "Bearer <b64token>" */
    PF_AUTH_UNKNOWN    /* well formed, but no such token */
} pf_auth_result;

/* One parsed token file. Immutable once parsed; thread-safe to read. */
typedef struct pf_auth_table pf_auth_table;

/* Parses a token file's contents. PF_OK with *out (free with
 * pf_auth_table_free); PF_EPARSE with "line N: why" in err when a line is
 * wrong or no token is given; PF_ELIMIT past PF_AUTH_TOKENS_MAX tokens;
 * PF_ENOMEM. */
pf_status pf_auth_table_parse(const char *buf, size_t len, pf_auth_table **out, char *err,
                              size_t errlen);
void pf_auth_table_free(pf_auth_table *t);
/* Tokens of each scope. */
void pf_auth_table_counts(const pf_auth_table *t, size_t *read, size_t *write);
/* Checks an Authorization header value (NULL when absent) against t. On
 * PF_AUTH_OK fills *scope and *id (either may be NULL). */
pf_auth_result pf_auth_table_check(const pf_auth_table *t, const char *authorization,
                                   pf_scope *scope, pf_auth_id *id);

/* The b64token of a "Bearer <token>" header value, or NULL when the value
 * is not that (scheme compared without case, one or more spaces, optional
 * trailing spaces or tabs). *len gets the token's length. */
const char *pf_auth_bearer(const char *authorization, size_t *len);

/* A token file and the table read from it. */
typedef struct pf_auth pf_auth;

/* Reads and parses path. PF_EINVAL with a sentence in err when the file
 * cannot be read (or is larger than PF_AUTH_FILE_MAX), the status of
 * pf_auth_table_parse otherwise. */
pf_status pf_auth_open(const char *path, pf_auth **out, char *err, size_t errlen);
/* Reads the file again (SIGHUP). On success the new tokens replace the old
 * ones at once; on failure (err says why) the old ones stay in force. */
pf_status pf_auth_reload(pf_auth *a, char *err, size_t errlen);
/* NULL is a no-op. */
void pf_auth_close(pf_auth *a);
const char *pf_auth_path(const pf_auth *a);
/* pf_auth_table_check on the current table. */
pf_auth_result pf_auth_check(pf_auth *a, const char *authorization, pf_scope *scope,
                             pf_auth_id *id);
/* Tokens of each scope in the current table. */
void pf_auth_counts(pf_auth *a, size_t *read, size_t *write);
/* Whether the current table holds the token named id, and its scope
 * (scope may be NULL): what an open stream asks after a reload. */
bool pf_auth_find(pf_auth *a, const pf_auth_id *id, pf_scope *scope);
/* How many reloads replaced the table: a holder of a check's result
 * (an open stream) looks again when it changed. */
uint64_t pf_auth_generation(pf_auth *a);

#endif
