/* status.h -- the one status enum of pathd.
 *
 * Every action in core/, proto/ and server/ returns a pf_status. PF_OK is 0 so
 * `if (st) goto out;` reads naturally. The mapping of a status to an HTTP code
 * lives in one place only (server/http_status.c).
 */
#ifndef PF_STATUS_H
#define PF_STATUS_H

typedef enum pf_status {
    PF_OK = 0,
    PF_NO_PATH,      /* the search finished; the goal is not reachable */
    PF_EBUDGET,      /* the per-query node budget ran out before an answer */
    PF_ECANCELED,    /* the caller's stop callback asked the search to stop */
    PF_EINVAL,       /* an argument is malformed or inconsistent */
    PF_ERANGE,       /* a coordinate or value is outside its allowed range */
    PF_EBLOCKED,     /* a start or goal cell is blocked */
    PF_ENOMEM,       /* an allocation failed; nothing was changed */
    PF_ELIMIT,       /* a named limit (cells, width, ...) would be exceeded */
    PF_EPARSE,       /* text input does not follow its format */
    PF_EUNSUPPORTED, /* the map does not support this operation */
    PF_EIO           /* the disk refused a read or write (the server's --data-dir) */
} pf_status;

/* A static English phrase for a status, e.g. "no path". Never NULL. */
const char *pf_status_str(pf_status st);

#endif
