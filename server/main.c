/* main.c -- pathd: flags and environment, signals, the server's life.
 *
 * SIGTERM / SIGINT: stop accepting, finish the requests in flight (up to
 * --drain-timeout), exit 0. SIGHUP: reread --auth-token-file (a broken
 * file keeps the tokens in force). Signals are taken synchronously with
 * sigwait on the main thread; every other thread starts with them blocked.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "server.h"

int main(int argc, char **argv) {
    pf_config cfg;
    pf_server *srv = NULL;
    char err[512], how[1400];
    bool help;
    sigset_t sigs;
    int sig = 0;
    uint64_t left;

    pf_config_defaults(&cfg);
    if (pf_config_load(&cfg, argc, argv, &help, err, sizeof(err))) {
        fprintf(stderr, "pathd: %s\n", err);
        return 2;
    }
    if (help) {
        pf_config_print_help(stdout);
        return 0;
    }
    /* Block the signals before any thread starts, so they inherit the mask
     * and only sigwait below sees them. SIGPIPE is ignored: a client that
     * hangs up must not kill the server. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (pf_server_create(&cfg, &srv, err, sizeof(err))) {
        fprintf(stderr, "pathd: %s\n", err);
        return 1;
    }
    /* The store first; its maps, and then the demo maps whose names it does
     * not have (a shared store keeps the ones it has), load in the
     * background once the server listens (pf_server_start). */
    if ((cfg.store[0] || cfg.data_dir[0]) && pf_server_open_store(srv, err, sizeof(err))) {
        fprintf(stderr, "pathd: %s\n", err);
        pf_server_destroy(srv);
        return 1;
    }
    if (pf_server_start(srv, err, sizeof(err))) {
        fprintf(stderr, "pathd: %s\n", err);
        pf_server_destroy(srv);
        return 1;
    }
    pf_server_describe(srv, how, sizeof(how));
    printf(
        "pathd listening on %s:%u (%s; workers %lld, io threads %lld, queue %lld, instance %s)\n",
        cfg.bind, (unsigned)pf_server_port(srv), how, (long long)cfg.workers,
        (long long)cfg.io_threads, (long long)cfg.queue_limit, pf_server_instance(srv));
    if (pf_server_health_port(srv))
        printf("pathd health probes on %s:%u (/healthz, /readyz, /metrics)\n", cfg.bind,
               (unsigned)pf_server_health_port(srv));
    fflush(stdout);

    while (sig != SIGTERM && sig != SIGINT) {
        if (sigwait(&sigs, &sig) != 0) break;
        if (sig != SIGHUP) continue;
        if (pf_server_reload_tokens(srv, err, sizeof(err)))
            fprintf(stderr, "pathd: SIGHUP: %s; the tokens in force stay\n", err);
        else {
            pf_server_describe(srv, how, sizeof(how));
            fprintf(stderr, "pathd: SIGHUP: tokens reloaded (%s)\n", how);
        }
    }
    fprintf(stderr, "pathd: %s: draining requests in flight\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    left = pf_server_drain(srv, cfg.drain_timeout_s * 1000);
    pf_server_destroy(srv);
    if (left) {
        fprintf(stderr, "pathd: %llu requests still in flight after %lld s\n",
                (unsigned long long)left, (long long)cfg.drain_timeout_s);
        return 1;
    }
    fprintf(stderr, "pathd: stopped\n");
    return 0;
}
