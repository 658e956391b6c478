/* store_guard.h -- whether this instance may acknowledge changes to the
 * shared store (--store), and what it knows of that store: the trust half
 * of the fleet (maps_shared.c keeps the copies, this decides and reports).
 *
 * Durability. A change is acknowledged (2xx) only when the store keeps it
 * through a crash of Redis: the last check found an append-only file, RDB
 * save points or a replica online (redis_info.h). Otherwise changes are
 * refused with 503 store_not_durable naming what is missing, unless the
 * operator started pathd with --store-accept-volatile (logged at start,
 * reported by /readyz and /v1/info). When CONFIG is refused (managed
 * Redis), only INFO counts: aof_enabled or connected_slaves; a provider
 * that snapshots by its own means is not visible, and the operator who
 * knows it accepts it with --store-accept-volatile.
 *
 * Checks. The follower runs one when it (re)connects and every
 * PF_SGUARD_CHECK_MS while connected (pf_sguard_review); until the first
 * one, and whenever a new connection meets a Redis with another run id (a
 * restart) or a change or catch-up shows the store lost data
 * (pf_sguard_report), changes are refused with 503 store_unavailable
 * until the next check.
 *
 * Loss. The store lost data when its epoch is another or missing (emptied,
 * replaced), its lineage counter is below the largest lineage this instance
 * saw, its events stream ends before where the follower read, or a copy
 * is newer than the store's map (store_redis.h's guard). The review then
 * answers PF_SGUARD_LOST: the loss is logged and counted (/readyz,
 * /v1/info, /metrics), changes are refused while the caller puts back the
 * copies it holds (pf_sguard_restored ends that), and nothing is dropped
 * because the store forgot it.
 *
 * Thread-safe: every function takes the guard's lock.
 */
#ifndef PF_SERVER_STORE_GUARD_H
#define PF_SERVER_STORE_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "errors.h"
#include "jsonw.h"
#include "redis_info.h"
#include "store_redis.h"

/* How often the follower checks a store it stays connected to. */
#define PF_SGUARD_CHECK_MS 5000

typedef struct pf_sguard pf_sguard;

/* For the store at url (printable, copied); accept_volatile: acknowledge
 * changes on a store that does not keep them. NULL on ENOMEM. */
pf_sguard *pf_sguard_create(const char *url, bool accept_volatile, int wait_replicas, int wait_ms);
void pf_sguard_destroy(pf_sguard *g);

/* Before a change: true with the guard the change carries, or false with
 * e set (nothing was sent): store_not_durable, or store_unavailable (not
 * checked yet, or putting back copies after a loss). Counted. */
bool pf_sguard_may_write(pf_sguard *g, pf_rstore_guard *out, pf_proto_error *e);

/* What this instance knows: the epoch ("" before the first check) and the
 * largest lineage it saw. */
void pf_sguard_known(pf_sguard *g, char epoch[PF_RSTORE_EPOCH_LEN + 1], uint64_t *min_lineage);

/* A lineage this instance saw (an acknowledged change, a load, an event). */
void pf_sguard_saw(pf_sguard *g, uint64_t lineage);

/* A new connection met the server run_id: true when it is the one the last
 * check verified, else false (changes wait for the next check). */
bool pf_sguard_knows_server(pf_sguard *g, const char *run_id);

/* Evidence that the store lost data (why: a sentence): changes are refused
 * and the next review answers PF_SGUARD_LOST with it. */
void pf_sguard_report(pf_sguard *g, const char *why);

/* Whether a check is wanted now (pf_sguard_report, a new run id). */
bool pf_sguard_wants_check(pf_sguard *g);

typedef enum pf_sguard_verdict {
    PF_SGUARD_SAME = 0, /* the store this instance knew: the check is done */
    PF_SGUARD_FIRST,    /* no epoch known yet: set or adopt one, then pf_sguard_adopt */
    PF_SGUARD_LOST,     /* it lost data (why): renew the epoch, pf_sguard_adopt, put back,
                           pf_sguard_restored */
    PF_SGUARD_RESTORE   /* the last putting back left copies out: put back again (no new
                           epoch), pf_sguard_restored */
} pf_sguard_verdict;

/* A check: the server's facts and the store's state (st) against what the
 * guard knows and the follower's position (NULL: none yet). Records the
 * durability (logged when it changes). */
pf_sguard_verdict pf_sguard_review(pf_sguard *g, const pf_redis_facts *f, const pf_rstore_state *st,
                                   const pf_rstore_pos *pos, char *why, size_t n);
/* The epoch and counter the store has now (after pf_rstore_epoch), on the
 * server run_id: the check is done (after a loss, changes stay refused
 * until pf_sguard_restored). */
void pf_sguard_adopt(pf_sguard *g, const pf_rstore_state *st, const char *run_id);
/* The copies were put back after a loss: how many went back, how many the
 * store had as new or newer, how many failed (then the next review answers
 * PF_SGUARD_RESTORE, so a copy is never dropped for a failed put back);
 * again: this was such a second try (its counts add to the first's).
 * Changes may go again. */
void pf_sguard_restored(pf_sguard *g, uint64_t restored, uint64_t newer, uint64_t failed,
                        bool again);

/* Whether copies the store lacks are to be kept, not dropped: copies are
 * being put back now. */
bool pf_sguard_keeps_copies(pf_sguard *g);

/* A change got no answer in time (outcome unknown), or fewer replicas
 * confirmed it than --store-wait-replicas. */
void pf_sguard_count_unknown(pf_sguard *g);
void pf_sguard_count_unconfirmed(pf_sguard *g);

typedef struct pf_sguard_stats {
    bool checked, durable, writes_ok, accept_volatile;
    uint64_t losses, restored, refused_not_durable, refused_unavailable, unknown, unconfirmed;
} pf_sguard_stats;

void pf_sguard_get_stats(pf_sguard *g, pf_sguard_stats *out);

/* The state as a JSON object (a value: the caller wrote the key), for
 * /readyz and /v1/info: writes, why, durability, durable, accept_volatile,
 * checked, run_id, epoch, wait_replicas, wait_ms, data_losses, last_loss,
 * counters. */
void pf_sguard_write_json(pf_sguard *g, pf_jsonw *w);

#endif
