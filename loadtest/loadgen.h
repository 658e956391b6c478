/* loadgen.h -- `pathd-bench http`: the HTTP load generator.
 *
 * One libuv loop drives C keep-alive connections to a pathd server. Closed
 * loop by default (each connection sends its next request when the answer
 * to the previous one arrives); with --rate R an open loop: request k of
 * connection c is due at start + (c + k x C) / R, and its latency is measured
 * from that due time, not from when it could actually be sent, so a stalled
 * server is charged for the requests it delayed (coordinated omission, after
 * Gil Tene and wrk2). Latencies go into a log-bucketed histogram (hist.h).
 *
 * The requests are the scenario queries that `pathd-bench scen` runs, chosen
 * by the same rule (scen.h), and the report has the same fields (report.h).
 */
#ifndef PF_BENCH_HTTP_H
#define PF_BENCH_HTTP_H

#include <stddef.h>

/* Runs the `http` subcommand; argv[0] is "http". Returns the exit status. */
int pf_bench_http_main(int argc, char **argv);

/* Splits "http://host[:port][/prefix]" into its parts (host without
 * brackets, port 80 by default, prefix without a trailing slash, possibly
 * empty). Returns 0, or -1 for anything else (https included). */
int pf_bench_parse_url(const char *url, char *host, size_t hostcap, int *port, char *prefix,
                       size_t prefixcap);

#endif
