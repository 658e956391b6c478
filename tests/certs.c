/* certs.c -- see certs.h. */
#include "certs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

bool tc_have_tool(const char *tool) {
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

int tc_make_cert(const char *dir, const char *cn, char *cert, char *key, size_t cap) {
    char cmd[2048];
    int rc;
    snprintf(cert, cap, "%s/cert.pem", dir);
    snprintf(key, cap, "%s/key.pem", dir);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout '%s' -out '%s' -days 1 -subj '/CN=%s' "
             "-addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' >'%s/openssl.log' 2>&1",
             key, cert, cn, dir);
    rc = system(cmd);
    if (rc != 0 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
        fprintf(stderr, "certs: openssl failed (%d); see %s/openssl.log\n", rc, dir);
        return -1;
    }
    return 0;
}
