/* bench-auth.c -- what one bearer-token check costs (server/auth.c), with
 * 1, 16 and 1024 tokens, for a known and an unknown token side by side in
 * one process, in thread CPU time. `make bench-auth` builds and runs it.
 * The known and unknown figures of one table size should match: the check
 * compares every entry, whatever the token. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"

static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    static const int sizes[] = {1, 16, 1024};
    long iters = argc > 1 ? atol(argv[1]) : 200000;
    for (int si = 0; si < 3; si++) {
        int n = sizes[si];
        char *buf = malloc((size_t)n * 64), err[200], good[80], bad[80];
        size_t len = 0;
        pf_auth_table *t;
        volatile int ok = 0;
        double t0, t1, t2;
        for (int i = 0; i < n; i++) len += (size_t)sprintf(buf + len, "read token-%020d\n", i);
        if (pf_auth_table_parse(buf, len, &t, err, sizeof(err))) {
            fprintf(stderr, "bench-auth: %s\n", err);
            return 1;
        }
        snprintf(good, sizeof(good), "Bearer token-%020d", n - 1);
        snprintf(bad, sizeof(bad), "Bearer token-%020d", n + 5);
        t0 = cpu_s();
        for (long k = 0; k < iters; k++) ok += pf_auth_table_check(t, good, NULL, NULL) == 0;
        t1 = cpu_s();
        for (long k = 0; k < iters; k++) ok += pf_auth_table_check(t, bad, NULL, NULL) == 0;
        t2 = cpu_s();
        printf("tokens %5d: known %6.0f ns, unknown %6.0f ns per check\n", n,
               (t1 - t0) / (double)iters * 1e9, (t2 - t1) / (double)iters * 1e9);
        pf_auth_table_free(t);
        free(buf);
    }
    return 0;
}
