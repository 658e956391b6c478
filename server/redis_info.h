/* redis_info.h -- what a Redis server says about itself that decides
 * whether a change it acknowledged survives it: its run id (new at every
 * start), whether it persists (an append-only file, RDB save points) and
 * whether replicas follow it.
 *
 * Read with INFO (every Redis answers it, managed ones included: run id,
 * aof_enabled, role, the replicas and their states) and CONFIG GET save (the RDB save
 * points, which INFO does not show). Managed Redis services often refuse CONFIG
 * (renamed or not allowed: "ERR unknown command", NOPERM); then
 * config_readable is false, the RDB save points are not known, and only
 * what INFO shows counts: aof_enabled and the replicas online.
 *
 * Thread-safe: a pure function of the connection it is given.
 */
#ifndef PF_SERVER_REDIS_INFO_H
#define PF_SERVER_REDIS_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "redis.h"

typedef struct pf_redis_facts {
    char run_id[41];        /* INFO server run_id: 40 hex digits */
    char role[16];          /* INFO replication role: "master" or "slave" */
    char version[32];       /* INFO server redis_version */
    bool aof;               /* INFO persistence aof_enabled:1 */
    bool loading;           /* INFO persistence loading:1 (a restart reading its files) */
    int connected;          /* INFO replication connected_slaves */
    int replicas;           /* of those, online (state=online): they have the data */
    bool config_readable;   /* CONFIG GET answered */
    char save[128];         /* CONFIG GET save ("" = no RDB save points); with config_readable */
    char config_error[128]; /* why CONFIG GET was refused, without config_readable */
} pf_redis_facts;

/* Reads the facts of c's server before deadline_ns. PF_OK, or the error
 * of INFO (store_unavailable, storage_failed as redis.h says); a refused
 * CONFIG is not an error (config_readable false). PF_EIO with
 * storage_failed when INFO lacks run_id. */
pf_status pf_redis_inspect(redisContext *c, uint64_t deadline_ns, pf_redis_facts *out,
                           pf_proto_error *e);

/* Only the run id (INFO server), for a new connection. */
pf_status pf_redis_run_id(redisContext *c, uint64_t deadline_ns, char out[41], pf_proto_error *e);

/* Whether the facts promise that an acknowledged change survives a crash
 * of that server: an append-only file, RDB save points, or a connected
 * replica online. Writes into why (n bytes) what was found ("appendonly yes; 1
 * replica online") or, when false, what was missing ("appendonly no, no
 * RDB save points, no replica online"; with CONFIG refused, that the save
 * points are unknown). */
bool pf_redis_facts_durable(const pf_redis_facts *f, char *why, size_t n);

/* The INFO value of key in text ("" when absent), copied into out. Exposed
 * for tests. */
void pf_redis_info_value(const char *text, size_t len, const char *key, char *out, size_t n);

#endif
