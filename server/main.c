/* main.c -- pathd: flags and environment, signals, the server's life.
 *
 * SIGTERM / SIGINT: stop accepting, finish the requests in flight (up to
 * --drain-timeout), exit 0. Signals are taken synchronously with sigwait on
 * the main thread; every other thread starts with them blocked.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "demo.h"
#include "server.h"

static int load_demo(pf_server *s) {
    pf_grid *g = NULL;
    if (pf_demo_room(&g) || pf_server_add_map(s, "room", g)) return -1;
    if (pf_demo_maze(64, 64, 42, &g) || pf_server_add_map(s, "maze", g)) return -1;
    return 0;
}

int main(int argc, char **argv) {
    pf_config cfg;
    pf_server *srv = NULL;
    char err[256];
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
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (pf_server_create(&cfg, &srv)) {
        fprintf(stderr, "pathd: out of memory at start\n");
        return 1;
    }
    /* The demo maps go into a shared store (when it lacks them), so it is
     * opened first; a data directory's maps replace the demo ones. */
    if (cfg.store[0] && pf_server_open_store(srv, err, sizeof(err))) {
        fprintf(stderr, "pathd: %s\n", err);
        pf_server_destroy(srv);
        return 1;
    }
    if (cfg.demo && load_demo(srv)) {
        fprintf(stderr, "pathd: cannot build the demo maps\n");
        pf_server_destroy(srv);
        return 1;
    }
    if (!cfg.store[0] && cfg.data_dir[0] && pf_server_open_store(srv, err, sizeof(err))) {
        fprintf(stderr, "pathd: %s\n", err);
        pf_server_destroy(srv);
        return 1;
    }
    if (pf_server_start(srv, err, sizeof(err))) {
        fprintf(stderr, "pathd: %s\n", err);
        pf_server_destroy(srv);
        return 1;
    }
    printf("pathd listening on %s:%u (workers %lld, io threads %lld, queue %lld, instance %s)\n",
           cfg.bind, (unsigned)pf_server_port(srv), (long long)cfg.workers,
           (long long)cfg.io_threads, (long long)cfg.queue_limit, pf_server_instance(srv));
    fflush(stdout);

    while (sig != SIGTERM && sig != SIGINT)
        if (sigwait(&sigs, &sig) != 0) break;
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
