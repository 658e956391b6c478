/* http_status.h -- the one place a pf_status becomes an HTTP status code. */
#ifndef PF_SERVER_HTTP_STATUS_H
#define PF_SERVER_HTTP_STATUS_H

#include "status.h"

/* PF_OK, PF_NO_PATH and PF_EBUDGET answer 200 (found true / false);
 * PF_EPARSE 400; PF_EINVAL, PF_ERANGE, PF_EBLOCKED and PF_EUNSUPPORTED 422;
 * PF_ELIMIT 413; PF_ECANCELED 504 (a deadline passed); PF_ENOMEM 503. */
int pf_http_status(pf_status st);

/* The reason phrase of an HTTP code ("Unprocessable Entity"). */
const char *pf_http_reason(int code);

#endif
