/* certs.h -- a throw-away TLS certificate for the tests, made by the
 * openssl command-line tool (Debian package openssl; `make test` installs
 * it when missing).
 *
 * The certificate is self-signed (it is its own CA, so a client trusts it
 * with --cacert), valid for one day, for DNS:localhost and IP:127.0.0.1,
 * with a P-256 key. */
#ifndef PF_TESTS_CERTS_H
#define PF_TESTS_CERTS_H

#include <stdbool.h>
#include <stddef.h>

/* Whether `tool` is on PATH. */
bool tc_have_tool(const char *tool);

/* Makes dir/cert.pem and dir/key.pem (dir must exist) for common name cn
 * and writes their paths to cert and key (cap bytes each). 0, or -1 with
 * the reason on stderr. */
int tc_make_cert(const char *dir, const char *cn, char *cert, char *key, size_t cap);

#endif
