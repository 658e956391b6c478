/* maps_shared.c -- --store: the maps live in a shared Redis (store_redis.h);
 * the registry holds this instance's copies of the maps it served lately.
 *
 * Versions. Redis numbers every change (its scripts assign version and
 * lineage atomically), and a copy enters the registry with that number
 * (pf_registry_install: only when newer, by lineage then version) or as
 * the swap of the version it PATCHes (pf_registry_swap: only from that
 * version), so whichever thread gets there first, a copy only ever moves
 * forward one logged version at a time, or jumps to a newer load.
 *
 * The follower: one thread reads the store's events stream (XREAD BLOCK, so
 * it waits in Redis, never on a lock a query needs) and, for each change of
 * a map it holds, catches its copy up: the PATCH log entries after its
 * version are applied in order by the map's kind (kind.h's patch_apply, as
 * the writing instance did); a copy of an older lineage (the map was replaced), or one further
 * behind than the log reaches (trimmed), is dropped and loaded again on its
 * next use (or loaded at once when sessions live on it); a deleted map's
 * copy is dropped with its sessions. Events missed while it was cut off
 * (reconnect, a trimmed stream) make it check every copy against the
 * store. Once a second it also drops copies unused for --map-idle-ttl
 * seconds that have no session.
 *
 * Loads on miss run on a worker (pf_maps_load); loads of one id at once
 * wait for the first. A change seen by the follower while a load of that
 * map is under way marks the load, which then catches up once its copy is
 * in: so a DELETE or a PATCH racing a load is never lost.
 *
 * Round trips: a path query on a held map makes none; a load makes one; an
 * upload, a PATCH or a DELETE one (a PATCH that lost a race: one more to
 * catch up, then it tries again; with --store-wait-replicas, one WAIT
 * more).
 *
 * Time. Every round trip of one change (its load, catch-ups, retries and
 * replica wait) shares one deadline, --store-timeout-ms after the change
 * first needs the store (pf__maps_write_begin), so the store never holds a
 * change's answer longer than that. A change sent whose answer did not
 * come in time is 503 store_outcome_unknown (it may have been made); one
 * not sent, or refused unrun, is 503 store_unavailable (nothing changed).
 *
 * Trust (store_guard.h). Changes are acknowledged only on a store that
 * keeps them (or with --store-accept-volatile), checked when the follower
 * (re)connects and every PF_SGUARD_CHECK_MS; every change carries the
 * store's epoch and the largest lineage this instance saw, so a store that
 * lost data refuses it. When the follower finds a loss it renews the
 * store's epoch and puts back every copy this instance holds, each only
 * where the store has none or an older one (restore_all): the newest copy
 * any instance holds wins, sessions on it live on, and nothing is dropped
 * because the store forgot it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "clock.h"
#include "jsonw.h"
#include "maps_internal.h"
#include "redis.h"
#include "redis_info.h"
#include "store_guard.h"
#include "store_redis.h"

#define KEY_PREFIX "pathd:"
/* How long the follower's XREAD waits in Redis before it looks around
 * (idle sweep, stop). */
#define BLOCK_MS 500
/* Events read at once. */
#define EVENTS_BATCH 256

typedef struct loading {
    char id[PF_MAP_ID_MAX + 1];
    bool dirty; /* the follower saw a change of this map while it loaded */
    bool done;
    int waiters;
    pf_status st;
    pf_proto_error e;
    struct loading *next;
} loading;

struct pf_fleet {
    pf_redis *redis;
    pf_rstore *rs;
    pf_sguard *guard;
    uint64_t timeout_ns; /* --store-timeout-ms */
    char url[600];
    uv_mutex_t mu; /* loads, stop, last_err */
    uv_cond_t cv;  /* a load is done; stop */
    loading *loads;
    bool stop;
    char last_err[256];
    _Atomic uint64_t last_ok_ns; /* the follower's last answer from Redis; 0: never */
    pf_rstore_pos pos;           /* where the follower reads the events from */
    /* Copies the last putting back could not store (under mu): kept when
     * the store says they are gone, and put back again by the next check. */
    char (*unplaced)[PF_MAP_ID_MAX + 1];
    size_t nunplaced;
    bool have_pos;
    uv_thread_t thread;
    bool started;
};

static pf_status no_memory(pf_proto_error *e) {
    return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
}

/* The deadline of the change this worker thread is making (0: none): set
 * by pf__maps_write_begin, so that every round trip of one change shares
 * it. */
static _Thread_local uint64_t write_deadline_ns;

void pf__maps_write_begin(pf_maps *m) {
    if (m->fleet && !write_deadline_ns)
        write_deadline_ns = pf_clock_now_ns() + m->fleet->timeout_ns;
}

void pf__maps_write_end(pf_maps *m) {
    if (m->fleet) write_deadline_ns = 0;
}

/* The deadline of a store call made now: the change's, else its own. */
static uint64_t deadline(const pf_fleet *f) {
    return write_deadline_ns ? write_deadline_ns : pf_clock_now_ns() + f->timeout_ns;
}

/* The listing members of a map (store_redis.h's info): its kind's. */
static char *summary(const pf_mapver *mv) {
    pf_jsonw w;
    size_t len;
    pf_jsonw_init(&w, 256);
    pf_jsonw_kstr(&w, "kind", mv->kind->name);
    mv->kind->write_summary(mv, &w);
    return pf_jsonw_take(&w, &len); /* NULL when it failed */
}

static void hash_hex(const uint8_t h[32], char out[65]) {
    bool any = false;
    for (int i = 0; i < 32; i++) any |= h[i] != 0;
    out[0] = '\0';
    if (!any) return;
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", h[i]);
}

static void hex_hash(const char *hex, uint8_t out[32]) {
    memset(out, 0, 32);
    if (strlen(hex) != 64) return;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return;
        out[i] = (uint8_t)v;
    }
}

/* Whether id is one of the copies the last putting back left out. Under
 * f->mu. */
static bool is_unplaced(const pf_fleet *f, const char *id) {
    for (size_t i = 0; i < f->nunplaced; i++)
        if (strcmp(f->unplaced[i], id) == 0) return true;
    return false;
}

/* Whether the copy of id is kept though the store has no such map: it is
 * being put back after a loss, or could not be yet. */
static bool keep_unstored(pf_fleet *f, const char *id) {
    bool keep;
    if (pf_sguard_keeps_copies(f->guard)) return true; /* putting back now */
    uv_mutex_lock(&f->mu);
    keep = is_unplaced(f, id);
    uv_mutex_unlock(&f->mu);
    return keep;
}

/* Drops the copy mv (if it is still the current one) and every session and
 * crowd of its map. */
static void drop_copy(pf_maps *m, const pf_mapver *mv) {
    if (pf_registry_remove_version(m->d.registry, mv)) pf__maps_end_users(m, mv->id, 0);
}

/* What the store keeps of mv: its kind's image. */
static pf_status encode(const pf_mapver *mv, unsigned char **img, size_t *len) {
    return mv->kind->store_encode(mv, 0, img, len);
}

/* Sessions or crowds live on map id: its copy is kept (and reloaded at
 * once when it must be). */
static bool in_use(pf_maps *m, const char *id) {
    return pf_sessions_count_map(m->d.sessions, id) > 0 ||
           (m->d.crowds && pf_crowds_count_map(m->d.crowds, id) > 0);
}

/* Loading */

/* Reads map id from the store, builds it, installs it if newer. PF_ERANGE
 * (map_not_found) when the store has no such map. */
static pf_status load_now(pf_maps *m, const char *id, pf_proto_error *e) {
    pf_fleet *f = m->fleet;
    uint64_t ver, lineage;
    pf_rstore_map sm;
    const pf_kind_ops *kind;
    pf_kind_stored in;
    pf_kind_store_error why;
    pf_mapver *mv;
    uint8_t hash[32];
    bool found, created;
    pf_status st;

    if ((st = pf_rstore_load(f->rs, deadline(f), id, &sm, &found, e))) return st;
    if (!found) {
        pf_rstore_map_free(&sm);
        return pf__maps_no_map(e, id);
    }
    if (!(kind = pf_kind_by_name(sm.kind))) {
        st = pf_proto_error_set(e, PF_EUNSUPPORTED, PF_ERR_STORAGE, NULL,
                                "Map '%s' in the store is of kind '%s', which this server cannot "
                                "serve.",
                                id, sm.kind);
        goto out_free_map;
    }
    /* Its image built, the PATCHes logged after it applied in order. */
    hex_hash(sm.hash_hex, hash);
    memset(&in, 0, sizeof(in));
    in.id = id;
    in.img = sm.img;
    in.img_len = sm.img_len;
    in.bodies = (const char *const *)sm.bodies;
    in.lens = sm.lens;
    in.nbodies = sm.nentries;
    in.hash = hash;
    if ((st = kind->store_load(pf_kinds_env(m->kinds, kind), &in, &mv, &ver, &why))) {
        switch (why.fault) {
        case PF_KIND_STORE_DAMAGED:
            st = pf_proto_error_set(e, PF_EIO, PF_ERR_STORAGE, NULL,
                                    "Map '%s' in the store is damaged (its digest or layout does "
                                    "not match).",
                                    id);
            break;
        case PF_KIND_STORE_LIMITS:
            st = pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, NULL,
                                    "Map '%s' in the store is larger than this server's limits "
                                    "(%s).",
                                    id, why.e.message);
            break;
        case PF_KIND_STORE_LOG:
            st = pf_proto_error_set(e, PF_EIO, PF_ERR_STORAGE, NULL,
                                    "Map '%s' in the store: the PATCH of version %llu does not "
                                    "apply (%s).",
                                    id, (unsigned long long)(sm.snap_version + 1 + why.at),
                                    why.e.message);
            break;
        default:
            *e = why.e;
            break;
        }
        goto out_free_map;
    }
    mv->version = sm.version;
    mv->lineage = lineage = sm.lineage;
    pf_rstore_map_free(&sm);
    pf_sguard_saw(f->guard, lineage);
    st = pf_registry_install(m->d.registry, mv, &created);
    if (st == PF_ECANCELED) {
        pf_mapver_release(mv); /* a copy as new or newer is there already */
        return PF_OK;
    }
    if (st) {
        pf_mapver_release(mv);
        return pf_proto_error_set(e, st, st == PF_ELIMIT ? PF_ERR_OVERLOADED : PF_ERR_NO_MEMORY,
                                  NULL,
                                  "This instance holds %lld map copies, its limit (--max-maps); "
                                  "retry later.",
                                  (long long)m->d.cfg->max_maps);
    }
    /* Sessions and crowds of an older lineage (the map was replaced) end.
     * The version installed may be released by a DELETE from here on: mv
     * not read. */
    pf__maps_end_users(m, id, lineage);
    return PF_OK;

out_free_map:
    pf_rstore_map_free(&sm);
    return st;
}

static loading *find_load(pf_fleet *f, const char *id) {
    for (loading *l = f->loads; l; l = l->next)
        if (strcmp(l->id, id) == 0) return l;
    return NULL;
}

static pf_status sync_map(pf_maps *m, const char *id, bool may_build, pf_proto_error *e);

static pf_status shared_load(pf_maps *m, const char *id, pf_proto_error *e) {
    pf_fleet *f = m->fleet;
    pf_mapver *held;
    loading *l, **pp;
    pf_status st;
    bool dirty;

    uv_mutex_lock(&f->mu);
    if ((held = pf_registry_peek(m->d.registry, id))) {
        uv_mutex_unlock(&f->mu);
        pf_mapver_release(held);
        return PF_OK;
    }
    if ((l = find_load(f, id))) {
        /* Another worker loads it: wait for its outcome. */
        l->waiters++;
        while (!l->done) uv_cond_wait(&f->cv, &f->mu);
        st = l->st;
        *e = l->e;
        if (--l->waiters == 0) free(l);
        uv_mutex_unlock(&f->mu);
        return st;
    }
    if (!(l = calloc(1, sizeof(*l)))) {
        uv_mutex_unlock(&f->mu);
        return no_memory(e);
    }
    snprintf(l->id, sizeof(l->id), "%s", id);
    l->next = f->loads;
    f->loads = l;
    uv_mutex_unlock(&f->mu);

    st = load_now(m, id, e);

    uv_mutex_lock(&f->mu);
    for (pp = &f->loads; *pp != l; pp = &(*pp)->next) {
    }
    *pp = l->next;
    dirty = l->dirty;
    l->done = true;
    l->st = st;
    l->e = *e;
    uv_cond_broadcast(&f->cv);
    if (l->waiters == 0) free(l);
    uv_mutex_unlock(&f->mu);
    /* A change came while it loaded: it may be newer than what was read. */
    if (dirty && st == PF_OK) {
        pf_proto_error e2;
        sync_map(m, id, true, &e2);
    }
    return st;
}

/* Catching up */

/* Brings the copy of id (if held) to the store's current version: see the
 * file comment. may_build: reload here when the log does not reach (a
 * worker); else (the follower) drop the copy unless sessions live on it. */
static pf_status sync_map(pf_maps *m, const char *id, bool may_build, pf_proto_error *e) {
    pf_fleet *f = m->fleet;
    pf_mapver *cur = pf_registry_peek(m->d.registry, id);
    pf_rstore_guard g;
    pf_rstore_sync y;
    pf_status st;
    char why[300];
    if (!cur) return PF_OK;
    pf_sguard_known(f->guard, g.epoch, &g.min_lineage);
    if ((st = pf_rstore_catch_up(f->rs, deadline(f), id, cur->lineage, cur->version,
                                 g.epoch[0] ? &g : NULL, &y, e))) {
        pf_mapver_release(cur);
        return st;
    }
    switch (y.kind) {
    case PF_RSTORE_SYNC_SAME:
        break;
    case PF_RSTORE_SYNC_EPOCH:
    case PF_RSTORE_SYNC_ROLLBACK:
    case PF_RSTORE_SYNC_BEHIND:
        /* The store forgot what it acknowledged: the copy stays (it is put
         * back once the follower has checked the store). */
        if (y.kind == PF_RSTORE_SYNC_BEHIND)
            snprintf(why, sizeof(why),
                     "map '%s' is at version %llu (lineage %llu) in the store, older than the "
                     "version %llu (lineage %llu) it acknowledged before",
                     id, (unsigned long long)y.version, (unsigned long long)y.lineage,
                     (unsigned long long)cur->version, (unsigned long long)cur->lineage);
        else
            snprintf(why, sizeof(why), "%s",
                     y.kind == PF_RSTORE_SYNC_EPOCH
                         ? "its epoch is not the one this instance knew"
                         : "its lineage counter is below a lineage this instance saw");
        pf_sguard_report(f->guard, why);
        break;
    case PF_RSTORE_SYNC_GONE:
        /* A copy a putting back after a loss has not stored yet stays. */
        if (!keep_unstored(f, id)) drop_copy(m, cur);
        break;
    case PF_RSTORE_SYNC_RELOAD:
        if (may_build || (y.lineage == cur->lineage && in_use(m, id))) {
            pf_rstore_sync_free(&y);
            st = load_now(m, id, e);
            if (st == PF_ERANGE) {
                drop_copy(m, cur);
                st = PF_OK;
            }
            pf_mapver_release(cur);
            return st;
        }
        drop_copy(m, cur); /* loaded again at its next use */
        break;
    case PF_RSTORE_SYNC_ENTRIES:
        for (size_t i = 0; i < y.nentries; i++) {
            pf_proto_error pe;
            pf_mapver *mv;
            /* The entry as sent, for the copy's kind (a grid's cells and
             * doors, a navmesh's obstacles and areas). */
            st = pf__maps_apply_body(m, cur, y.bodies[i], y.lens[i], &mv, &pe);
            if (st) {
                if (st != PF_ENOMEM) drop_copy(m, cur); /* cannot follow: load it afresh */
                st = PF_OK;
                break;
            }
            pf_mapver_retain(mv);
            if (pf_registry_swap(m->d.registry, cur, mv)) {
                /* Another thread moved the copy on (or dropped it): it is
                 * at least as new as what we were going to make. */
                pf_mapver_release(mv);
                pf_mapver_release(mv);
                break;
            }
            pf_mapver_drop_caches(cur);
            pf_mapver_release(cur);
            cur = mv; /* our reference */
        }
        break;
    }
    pf_rstore_sync_free(&y);
    pf_mapver_release(cur);
    return st;
}

/* Every held copy against the store (after a reconnect or a gap). */
static void sync_all(pf_maps *m) {
    pf_mapver **list;
    size_t n;
    if (pf_registry_list(m->d.registry, &list, &n)) return;
    for (size_t i = 0; i < n; i++) {
        pf_proto_error e;
        sync_map(m, list[i]->id, false, &e);
        pf_mapver_release(list[i]);
    }
    free(list);
}

/* The follower */

static bool stopping(pf_fleet *f) {
    bool s;
    uv_mutex_lock(&f->mu);
    s = f->stop;
    uv_mutex_unlock(&f->mu);
    return s;
}

/* Sleeps up to ms, woken by a stop. */
static void nap(pf_fleet *f, int ms) {
    uv_mutex_lock(&f->mu);
    if (!f->stop) uv_cond_timedwait(&f->cv, &f->mu, (uint64_t)ms * 1000000ull);
    uv_mutex_unlock(&f->mu);
}

static void note_error(pf_fleet *f, const pf_proto_error *e) {
    bool first;
    uv_mutex_lock(&f->mu);
    first = strcmp(f->last_err, e->message) != 0;
    snprintf(f->last_err, sizeof(f->last_err), "%s", e->message);
    uv_mutex_unlock(&f->mu);
    if (first) fprintf(stderr, "pathd: store: %s\n", e->message);
}

/* Whether event x may be newer than the copy mv. */
static bool newer_than(const pf_rstore_event *x, const pf_mapver *mv) {
    if (x->lineage != mv->lineage) return x->lineage > mv->lineage;
    return x->version > mv->version || x->op == 'd';
}

static void handle_events(pf_maps *m, const pf_rstore_event *ev, size_t n) {
    pf_fleet *f = m->fleet;
    for (size_t i = 0; i < n; i++) pf_sguard_saw(f->guard, ev[i].lineage);
    for (size_t i = 0; i < n; i++) {
        pf_mapver *cur;
        bool later = false, busy, behind = false;
        loading *l;
        pf_proto_error e;
        /* One catch-up per map and batch, at the last event of its id. */
        for (size_t k = i + 1; k < n && !later; k++) later = strcmp(ev[k].id, ev[i].id) == 0;
        if (later) continue;
        uv_mutex_lock(&f->mu);
        if ((l = find_load(f, ev[i].id))) l->dirty = true;
        busy = l != NULL;
        uv_mutex_unlock(&f->mu);
        if (busy || !(cur = pf_registry_peek(m->d.registry, ev[i].id))) continue;
        for (size_t k = 0; k <= i && !behind; k++)
            behind = strcmp(ev[k].id, ev[i].id) == 0 && newer_than(&ev[k], cur);
        if (behind) sync_map(m, ev[i].id, false, &e);
        pf_mapver_release(cur);
    }
}

/* Drops copies unused for --map-idle-ttl that have no session. */
static void sweep_idle(pf_maps *m) {
    uint64_t ttl_ns = (uint64_t)m->d.cfg->map_idle_ttl_s * 1000000000ull, now = pf_clock_now_ns();
    pf_mapver **list;
    size_t n;
    if (!ttl_ns || now <= ttl_ns || pf_registry_list(m->d.registry, &list, &n)) return;
    for (size_t i = 0; i < n; i++) {
        if (!in_use(m, list[i]->id)) pf_registry_remove_idle(m->d.registry, list[i], now - ttl_ns);
        pf_mapver_release(list[i]);
    }
    free(list);
}

/* Trust: the store's checks and putting back what it lost */

/* A fresh epoch: 32 random hex digits. */
static void fresh_epoch(char out[PF_RSTORE_EPOCH_LEN + 1]) {
    uint8_t b[PF_RSTORE_EPOCH_LEN / 2];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t k = getrandom(b + got, sizeof(b) - got, 0);
        if (k > 0) {
            got += (size_t)k;
        } else {
            /* No entropy to be had: the clock and the address still make
             * two instances' epochs differ. */
            uint64_t t = pf_clock_now_ns() ^ (uint64_t)(uintptr_t)out;
            for (; got < sizeof(b); got++, t = t * 6364136223846793005ull + 1)
                b[got] = (uint8_t)(t >> 56);
        }
    }
    for (size_t i = 0; i < sizeof(b); i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Puts the copies this instance holds back into the store (after a loss),
 * where the store has none or an older one: every copy, or (only_left)
 * the ones the last time left out. */
static void restore_all(pf_maps *m, bool only_left) {
    pf_fleet *f = m->fleet;
    uint64_t restored = 0, newer = 0, failed = 0;
    pf_rstore_guard g;
    pf_mapver **list;
    char(*left)[PF_MAP_ID_MAX + 1];
    size_t n;
    if (pf_registry_list(m->d.registry, &list, &n)) {
        fprintf(stderr, "pathd: store %s: out of memory listing the copies to put back\n", f->url);
        pf_sguard_restored(f->guard, 0, 0, 1, only_left); /* try again at the next check */
        return;
    }
    if (!(left = calloc(n ? n : 1, sizeof(*left)))) {
        for (size_t i = 0; i < n; i++) pf_mapver_release(list[i]);
        free(list);
        pf_sguard_restored(f->guard, 0, 0, 1, only_left);
        return;
    }
    pf_sguard_known(f->guard, g.epoch, &g.min_lineage);
    for (size_t i = 0; i < n; i++) {
        const pf_mapver *mv = list[i];
        unsigned char *img = NULL;
        size_t img_len = 0;
        char *info = NULL, hex[65];
        pf_rstore_restore p;
        pf_rstore_ack ack;
        pf_proto_error e;
        bool skip = false, ok = false;
        if (only_left) {
            uv_mutex_lock(&f->mu);
            skip = !is_unplaced(f, mv->id);
            uv_mutex_unlock(&f->mu);
        }
        if (skip) {
            ok = true;
        } else if (encode(mv, &img, &img_len) || !(info = summary(mv))) {
            fprintf(stderr, "pathd: store: map '%s': out of memory, not put back\n", mv->id);
            failed++;
        } else {
            hash_hex(mv->content_hash, hex);
            memset(&p, 0, sizeof(p));
            p.id = mv->id;
            p.kind = mv->kind->name;
            p.img = img;
            p.img_len = img_len;
            p.hash_hex = hex;
            p.info = info;
            p.version = mv->version;
            p.lineage = mv->lineage;
            p.guard = &g;
            if (pf_rstore_put_back(f->rs, deadline(f), &p, &ack, &e)) {
                fprintf(stderr, "pathd: store: map '%s' version %llu not put back: %s\n", mv->id,
                        (unsigned long long)mv->version, e.message);
                failed++;
            } else if (ack.result == PF_RSTORE_OK) {
                restored++;
                ok = true;
            } else if (ack.result == PF_RSTORE_NEWER) {
                newer++;
                ok = true;
            } else {
                fprintf(stderr,
                        "pathd: store: map '%s' not put back: the store's epoch changed "
                        "again\n",
                        mv->id);
                failed++;
            }
        }
        if (!ok) snprintf(left[failed - 1], sizeof(left[0]), "%s", mv->id);
        free(img);
        free(info);
        pf_mapver_release(list[i]);
    }
    free(list);
    uv_mutex_lock(&f->mu);
    free(f->unplaced);
    f->unplaced = left;
    f->nunplaced = (size_t)failed;
    uv_mutex_unlock(&f->mu);
    pf_sguard_restored(f->guard, restored, newer, failed, only_left);
}

/* The check (store_guard.h) on the follower's connection c: the server's
 * facts and the store's state; sets or adopts its epoch the first time;
 * after a loss renews the epoch and puts the copies back. false with the
 * error noted when Redis did not answer (c is then dropped). */
static bool check_store(pf_maps *m, redisContext *c) {
    pf_fleet *f = m->fleet;
    uint64_t dl = pf_clock_now_ns() + f->timeout_ns, mark = pf_redis_mark(f->redis);
    pf_redis_facts facts;
    pf_rstore_state st, now;
    pf_proto_error e;
    char why[400], known[PF_RSTORE_EPOCH_LEN + 1], fresh[PF_RSTORE_EPOCH_LEN + 1];
    uint64_t min_lineage;
    pf_sguard_verdict v;
    bool renewed;
    if (pf_redis_inspect(c, dl, &facts, &e) || pf_rstore_probe(f->rs, c, dl, &st, &e)) {
        note_error(f, &e);
        return false;
    }
    pf_redis_answered(f->redis, mark);
    v = pf_sguard_review(f->guard, &facts, &st, f->have_pos ? &f->pos : NULL, why, sizeof(why));
    if (v == PF_SGUARD_SAME) return true;
    if (v == PF_SGUARD_RESTORE) {
        bool listed;
        uv_mutex_lock(&f->mu);
        listed = f->nunplaced > 0;
        uv_mutex_unlock(&f->mu);
        restore_all(m, listed); /* the copies the last one left out (all if it listed none) */
        return true;
    }
    pf_sguard_known(f->guard, known, &min_lineage);
    fresh_epoch(fresh);
    if (pf_rstore_epoch(f->rs, c, dl, known, fresh, min_lineage, &renewed, &now, &e)) {
        note_error(f, &e);
        return false;
    }
    pf_sguard_adopt(f->guard, &now, facts.run_id);
    if (v == PF_SGUARD_FIRST) return true;
    /* The events stream went back (or is gone): read on from where it ends
     * now, which the copies put back below come after. */
    if (f->have_pos && pf_rstore_pos_after(f->pos, st.tail)) f->pos = st.tail;
    restore_all(m, false);
    return true;
}

static void follow(void *arg) {
    pf_maps *m = arg;
    pf_fleet *f = m->fleet;
    redisContext *c = NULL;
    pf_rstore_event *ev = malloc(EVENTS_BATCH * sizeof(*ev));
    uint64_t last_sweep = pf_clock_now_ns(), last_check = 0;
    if (!ev) {
        fprintf(stderr, "pathd: store: out of memory: copies are not followed\n");
        return;
    }
    while (!stopping(f)) {
        pf_proto_error e;
        size_t n = 0;
        bool gap = false;
        uint64_t now = pf_clock_now_ns(), mark;
        if (now - last_sweep >= 1000000000ull) {
            sweep_idle(m);
            last_sweep = now;
        }
        if (!c) {
            if (!(c = pf_redis_connect(f->redis, now + f->timeout_ns, &e))) {
                note_error(f, &e);
                nap(f, 250);
                continue;
            }
            /* A (re)connect: the store is checked before anything else. */
            last_check = 0;
        }
        if (!last_check || pf_sguard_wants_check(f->guard) ||
            now - last_check >= (uint64_t)PF_SGUARD_CHECK_MS * 1000000ull) {
            bool reconnect = !last_check, ok = check_store(m, c);
            if (ok && !f->have_pos &&
                pf_rstore_events_tail(f->rs, c, now + f->timeout_ns, &f->pos, &e)) {
                note_error(f, &e);
                ok = false;
            }
            if (!ok) {
                redisFree(c);
                c = NULL;
                nap(f, 250);
                continue;
            }
            f->have_pos = true;
            last_check = pf_clock_now_ns();
            /* Whatever happened while we were away: check every copy. */
            if (reconnect) sync_all(m);
        }
        mark = pf_redis_mark(f->redis);
        if (pf_rstore_events_read(f->rs, c,
                                  pf_clock_now_ns() + BLOCK_MS * 1000000ull + f->timeout_ns,
                                  &f->pos, BLOCK_MS, ev, EVENTS_BATCH, &n, &gap, &e)) {
            note_error(f, &e);
            if (c->err) {
                redisFree(c);
                c = NULL;
            }
            nap(f, 250);
            continue;
        }
        atomic_store(&f->last_ok_ns, pf_clock_now_ns());
        pf_redis_answered(f->redis, mark);
        if (gap)
            sync_all(m);
        else
            handle_events(m, ev, n);
    }
    redisFree(c);
    free(ev);
}

/* The backend */

/* A change the store refused because it lost data (EPOCH, ROLLBACK):
 * reported to the guard (the follower checks the store and puts the
 * copies back), answered 503; nothing changed. */
static pf_status store_lost(pf_fleet *f, const char *id, const pf_rstore_ack *ack,
                            pf_proto_error *e) {
    char why[300];
    if (ack->result == PF_RSTORE_EPOCH)
        snprintf(why, sizeof(why), "its epoch is not the one this instance knew");
    else if (ack->version)
        snprintf(why, sizeof(why),
                 "map '%s' is at version %llu (lineage %llu) in the store, older than this "
                 "instance's copy",
                 id, (unsigned long long)ack->version, (unsigned long long)ack->lineage);
    else
        snprintf(why, sizeof(why), "its lineage counter is below a lineage this instance saw");
    pf_sguard_report(f->guard, why);
    return pf_proto_error_set(e, PF_EIO, PF_ERR_STORE_UNAVAILABLE, NULL,
                              "The map store lost data (%.100s); this instance is checking it "
                              "and putting back the maps it holds: nothing changed; retry.",
                              why);
}

/* A store call of a change failed: counts an unknown outcome. */
static pf_status failed(pf_fleet *f, pf_proto_error *e) {
    if (e->code == PF_ERR_STORE_OUTCOME_UNKNOWN) pf_sguard_count_unknown(f->guard);
    return e->status;
}

/* A change the store made but fewer replicas confirmed in time than
 * --store-wait-replicas asks: 503 store_outcome_unknown (a failover now
 * could lose it). */
static pf_status unconfirmed(pf_maps *m, const char *id, const char *what, const pf_rstore_ack *ack,
                             pf_proto_error *e) {
    pf_sguard_count_unconfirmed(m->fleet->guard);
    return pf_proto_error_set(
        e, PF_EIO, PF_ERR_STORE_OUTCOME_UNKNOWN, NULL,
        "Redis made the %s of map '%.40s' (version %llu), but only %d of %lld replicas "
        "confirmed it within %lld ms (--store-wait-replicas): a failover could lose it. Read "
        "the map, or retry with If-Match.",
        what, id, (unsigned long long)ack->version, ack->replicas,
        (long long)m->d.cfg->store_wait_replicas, (long long)m->d.cfg->store_wait_ms);
}

static pf_status shared_publish(pf_maps *m, pf_mapver *mv, const pf_maps_change *c,
                                pf_maps_outcome *o, pf_proto_error *e) {
    static const pf_precond none;
    pf_fleet *f = m->fleet;
    unsigned char *img = NULL;
    size_t img_len = 0;
    char *info = NULL, hex[65], id[PF_MAP_ID_MAX + 1];
    pf_rstore_upload p;
    pf_rstore_guard g;
    pf_rstore_ack ack;
    pf_mapver *held;
    pf_status st;
    bool created;

    if (!pf_sguard_may_write(f->guard, &g, e)) {
        pf_mapver_release(mv);
        return e->status;
    }
    if (encode(mv, &img, &img_len) || !(info = summary(mv))) {
        free(img);
        pf_mapver_release(mv);
        return no_memory(e);
    }
    hash_hex(mv->content_hash, hex);
    snprintf(id, sizeof(id), "%s", mv->id); /* mv may be gone before the answer is written */
    memset(&p, 0, sizeof(p));
    p.id = id;
    p.cond = c && c->cond ? c->cond : &none;
    p.guard = &g;
    p.post = c && c->post;
    p.kind = mv->kind->name;
    p.img = img;
    p.img_len = img_len;
    p.hash_hex = hex;
    p.info = info;
    p.max_maps = m->d.cfg->max_maps;
    st = pf_rstore_put(f->rs, deadline(f), &p, &ack, e);
    free(img);
    free(info);
    if (st) {
        pf_mapver_release(mv);
        return failed(f, e);
    }
    switch (ack.result) {
    case PF_RSTORE_OK:
    case PF_RSTORE_UNCHANGED:
        break;
    case PF_RSTORE_PRECONDITION:
        pf_mapver_release(mv);
        return pf__maps_precondition(e, p.id, ack.version != 0, ack.version, ack.lineage);
    case PF_RSTORE_LIMIT:
        pf_mapver_release(mv);
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, NULL,
                                  "The store holds %lld maps, the limit (--max-maps); delete one "
                                  "first.",
                                  (long long)m->d.cfg->max_maps);
    case PF_RSTORE_EPOCH:
    case PF_RSTORE_ROLLBACK:
        pf_mapver_release(mv);
        return store_lost(f, id, &ack, e);
    default:
        pf_mapver_release(mv);
        return pf_proto_error_set(e, PF_EIO, PF_ERR_STORAGE, NULL, "The store refused the map.");
    }
    pf_sguard_saw(f->guard, ack.lineage);
    o->created = ack.created;
    o->unchanged = ack.result == PF_RSTORE_UNCHANGED;
    held = pf_registry_peek(m->d.registry, mv->id);
    if (o->unchanged && held && held->lineage == ack.lineage && held->version == ack.version) {
        pf_mapver_release(mv);
        o->current = held;
        return PF_OK;
    }
    pf_mapver_release(held);
    /* mv is what the store has at that version (for UNCHANGED: the same
     * upload, built again): hold it as our copy. */
    mv->version = ack.version;
    mv->lineage = ack.lineage;
    pf_mapver_retain(mv); /* the outcome's */
    if (pf_registry_install(m->d.registry, mv, &created)) pf_mapver_release(mv);
    pf__maps_end_users(m, mv->id, ack.lineage);
    if (ack.unconfirmed) {
        pf_mapver_release(mv);
        return unconfirmed(m, id, "upload", &ack, e);
    }
    o->current = mv;
    return PF_OK;
}

static pf_status shared_swap(pf_maps *m, pf_mapver *cur, pf_mapver *mv, const char *body,
                             size_t len, const pf_maps_change *c, pf_proto_error *e) {
    static const pf_precond none;
    pf_fleet *f = m->fleet;
    unsigned char *img = NULL;
    size_t img_len = 0;
    char *info;
    pf_rstore_edit p;
    pf_rstore_guard g;
    pf_rstore_ack ack;
    pf_status st;

    if (!pf_sguard_may_write(f->guard, &g, e)) {
        pf_mapver_release(mv);
        return e->status;
    }
    /* Every PF_RSTORE_SNAP_EVERY versions the store gets the whole map, so a
     * load replays fewer than that many PATCHes. */
    if ((cur->version + 1) % PF_RSTORE_SNAP_EVERY == 0 && encode(mv, &img, &img_len)) {
        pf_mapver_release(mv);
        return no_memory(e);
    }
    if (!(info = summary(mv))) {
        free(img);
        pf_mapver_release(mv);
        return no_memory(e);
    }
    memset(&p, 0, sizeof(p));
    p.id = cur->id;
    p.cond = c && c->cond ? c->cond : &none;
    p.guard = &g;
    p.base_version = cur->version;
    p.base_lineage = cur->lineage;
    p.body = body;
    p.body_len = len;
    p.img = img;
    p.img_len = img_len;
    p.info = info;
    st = pf_rstore_patch(f->rs, deadline(f), &p, &ack, e);
    free(img);
    free(info);
    if (st) {
        pf_mapver_release(mv);
        return failed(f, e);
    }
    switch (ack.result) {
    case PF_RSTORE_OK:
        if (pf_registry_swap(m->d.registry, cur, mv) == PF_OK) {
            pf_mapver_drop_caches(cur);
        } else {
            /* The follower installed this version first (or something
             * newer came): ours is not needed, but it is the answer. */
            mv->version = ack.version;
            mv->lineage = cur->lineage;
            pf_mapver_release(mv);
        }
        if (ack.unconfirmed) return unconfirmed(m, cur->id, "PATCH", &ack, e);
        return PF_OK;
    case PF_RSTORE_CONFLICT:
        /* Our copy is behind the store: catch up, then start over. */
        pf_mapver_release(mv);
        if ((st = sync_map(m, cur->id, true, e))) return st;
        return PF_ECANCELED;
    case PF_RSTORE_PRECONDITION:
        pf_mapver_release(mv);
        return pf__maps_precondition(e, cur->id, true, ack.version, ack.lineage);
    case PF_RSTORE_GONE:
        pf_mapver_release(mv);
        drop_copy(m, cur);
        return pf__maps_no_map(e, cur->id);
    case PF_RSTORE_EPOCH:
    case PF_RSTORE_ROLLBACK:
        pf_mapver_release(mv);
        return store_lost(f, cur->id, &ack, e);
    default:
        pf_mapver_release(mv);
        return pf_proto_error_set(e, PF_EIO, PF_ERR_STORAGE, NULL, "The store refused the PATCH.");
    }
}

static pf_status shared_remove(pf_maps *m, const char *id, const pf_precond *cond,
                               pf_proto_error *e) {
    pf_fleet *f = m->fleet;
    pf_rstore_guard g;
    pf_rstore_ack ack;
    pf_mapver *cur;
    pf_status st;
    if (!pf_sguard_may_write(f->guard, &g, e)) return e->status;
    if ((st = pf_rstore_remove(f->rs, deadline(f), id, cond, &g, &ack, e))) return failed(f, e);
    if (ack.result == PF_RSTORE_PRECONDITION)
        return pf__maps_precondition(e, id, true, ack.version, ack.lineage);
    if (ack.result == PF_RSTORE_EPOCH || ack.result == PF_RSTORE_ROLLBACK)
        return store_lost(f, id, &ack, e);
    /* Removed, or already gone: this instance's copy goes either way. */
    if ((cur = pf_registry_peek(m->d.registry, id))) {
        if (ack.result == PF_RSTORE_GONE || cur->lineage <= ack.lineage) drop_copy(m, cur);
        pf_mapver_release(cur);
    }
    if (ack.result != PF_RSTORE_OK) return pf__maps_no_map(e, id);
    if (ack.unconfirmed) return unconfirmed(m, id, "DELETE", &ack, e);
    return PF_OK;
}

static void free_rlist(void *p) {
    pf_rstore_list_free(p);
    free(p);
}

static pf_status shared_list(pf_maps *m, pf_maps_listing *out, pf_proto_error *e) {
    pf_rstore_list *l = calloc(1, sizeof(*l));
    pf_status st;
    if (!l) return no_memory(e);
    if ((st = pf_rstore_list_all(m->fleet->rs, deadline(m->fleet), l, e))) {
        free(l);
        return st;
    }
    out->store_ = l;
    out->store_free_ = free_rlist;
    if (!(out->items = calloc(l->n ? l->n : 1, sizeof(*out->items)))) return no_memory(e);
    for (size_t i = 0; i < l->n; i++) {
        pf_maps_item *it = &out->items[out->n];
        pf_mapver *mv;
        if (strlen(l->items[i].id) > PF_MAP_ID_MAX) continue; /* not one of ours */
        snprintf(it->id, sizeof(it->id), "%s", l->items[i].id);
        it->version = l->items[i].version;
        it->lineage = l->items[i].lineage;
        it->info = l->items[i].info;
        mv = pf_registry_peek(m->d.registry, it->id);
        if (mv && mv->version == it->version && mv->lineage == it->lineage)
            it->mv = mv;
        else
            pf_mapver_release(mv);
        out->n++;
    }
    return PF_OK;
}

static pf_status shared_add(pf_maps *m, pf_mapver *mv) {
    /* In the store unless it is there already (If-None-Match: *). */
    pf_precond absent;
    pf_maps_change c = {&absent, false};
    pf_maps_outcome o;
    pf_proto_error e;
    char id[PF_MAP_ID_MAX + 1];
    pf_status st;
    memset(&absent, 0, sizeof(absent));
    absent.none_match.kind = PF_PRECOND_ANY;
    snprintf(id, sizeof(id), "%s", mv->id);
    memset(&o, 0, sizeof(o));
    st = shared_publish(m, mv, &c, &o, &e);
    if (st == PF_OK) pf_mapver_release(o.current);
    if (st && e.code != PF_ERR_PRECONDITION) {
        fprintf(stderr, "pathd: map '%s': %s\n", id, e.message);
        return st;
    }
    return PF_OK;
}

static void shared_close(pf_maps *m) {
    pf_fleet *f = m->fleet;
    if (!f) return;
    if (f->started) {
        uv_mutex_lock(&f->mu);
        f->stop = true;
        uv_cond_broadcast(&f->cv);
        uv_mutex_unlock(&f->mu);
        uv_thread_join(&f->thread); /* at most BLOCK_MS + the timeout */
    }
    pf_rstore_destroy(f->rs);
    pf_redis_destroy(f->redis);
    pf_sguard_destroy(f->guard);
    free(f->unplaced);
    uv_cond_destroy(&f->cv);
    uv_mutex_destroy(&f->mu);
    free(f);
    m->fleet = NULL;
}

const pf_maps_backend pf__maps_redis = {
    "redis",     shared_publish, shared_swap, shared_remove,
    shared_list, shared_load,    shared_add,  shared_close,
};

/* The pool's connect hook: a new connection to a Redis that is not the one
 * the last check verified (it restarted: its run id changed) is refused
 * until the follower has checked it (woken here), so no change and no load
 * runs on a store nobody has looked at. */
static bool on_connect(void *ud, redisContext *c, uint64_t deadline_ns, pf_proto_error *e) {
    pf_fleet *f = ud;
    char run_id[41];
    if (pf_redis_run_id(c, deadline_ns, run_id, e)) return false;
    if (pf_sguard_knows_server(f->guard, run_id)) return true;
    uv_mutex_lock(&f->mu);
    uv_cond_broadcast(&f->cv); /* a napping follower checks now */
    uv_mutex_unlock(&f->mu);
    pf_proto_error_set(e, PF_EIO, PF_ERR_STORE_UNAVAILABLE, NULL,
                       "The map store restarted (run id %.12s...) and this instance is checking "
                       "it: nothing changed; retry.",
                       run_id);
    return false;
}

pf_status pf__maps_open_redis(pf_maps *m, const char *url, char *err, size_t errlen) {
    const pf_config *cfg = m->d.cfg;
    pf_redis_url u;
    pf_fleet *f;
    pf_status st;
    redisContext *c;
    pf_proto_error e;
    if ((st = pf_redis_url_parse(url, &u, err, errlen))) return st;
    if (!(f = calloc(1, sizeof(*f)))) goto out_nomem;
    if (uv_mutex_init(&f->mu)) goto out_free;
    if (uv_cond_init(&f->cv)) goto out_free_mu;
    pf_redis_url_print(&u, f->url, sizeof(f->url));
    f->timeout_ns = (uint64_t)cfg->store_timeout_ms * 1000000ull;
    /* A connection per worker that may be in a store call, and two more
     * (a load waiting on a busy one must not starve). */
    f->redis = pf_redis_create(&u, (int)cfg->workers + 2);
    f->guard = pf_sguard_create(f->url, cfg->store_accept_volatile, (int)cfg->store_wait_replicas,
                                (int)cfg->store_wait_ms);
    if (!f->redis || !f->guard || !(f->rs = pf_rstore_create(f->redis, KEY_PREFIX)))
        goto out_free_redis;
    pf_rstore_set_wait(f->rs, (int)cfg->store_wait_replicas, (int)cfg->store_wait_ms);
    pf_redis_set_connect_hook(f->redis, on_connect, f);
    m->fleet = f;
    m->be = &pf__maps_redis;
    if (cfg->store_accept_volatile)
        fprintf(stderr,
                "pathd: --store-accept-volatile: changes are acknowledged even when the store "
                "%s does not keep them (no appendonly, no RDB save points, no replica)\n",
                f->url);
    /* The first check and the follower's starting point, taken before any
     * load: a change after it is seen. Unreachable now: the follower does
     * both when it connects, and then checks every copy. */
    if ((c = pf_redis_connect(f->redis, pf_clock_now_ns() + f->timeout_ns, &e))) {
        if (check_store(m, c) && pf_rstore_events_tail(f->rs, c, pf_clock_now_ns() + f->timeout_ns,
                                                       &f->pos, &e) == PF_OK) {
            f->have_pos = true;
            atomic_store(&f->last_ok_ns, pf_clock_now_ns());
        } else if (f->last_err[0]) {
            snprintf(e.message, sizeof(e.message), "%s", f->last_err);
        }
        redisFree(c);
    }
    if (!f->have_pos) {
        fprintf(stderr, "pathd: store %s: %s (retrying; /readyz answers 503 meanwhile)\n", f->url,
                e.message);
        snprintf(f->last_err, sizeof(f->last_err), "%s", e.message);
    } else {
        fprintf(stderr, "pathd: maps in the shared store %s\n", f->url);
    }
    if (uv_thread_create(&f->thread, follow, m)) {
        snprintf(err, errlen, "cannot start the store's follower thread");
        return PF_ENOMEM; /* pf_maps_destroy frees f */
    }
    f->started = true;
    return PF_OK;

out_free_redis:
    pf_rstore_destroy(f->rs);
    pf_redis_destroy(f->redis);
    pf_sguard_destroy(f->guard);
    uv_cond_destroy(&f->cv);
out_free_mu:
    uv_mutex_destroy(&f->mu);
out_free:
    free(f);
out_nomem:
    snprintf(err, errlen, "out of memory");
    return PF_ENOMEM;
}

bool pf__maps_redis_ready(const pf_maps *m, char *why, size_t n) {
    pf_fleet *f = m->fleet;
    uint64_t ok = atomic_load(&f->last_ok_ns), now = pf_clock_now_ns();
    if (ok && now - ok <= (uint64_t)PF_MAPS_STALE_MS * 1000000ull) return true;
    uv_mutex_lock(&f->mu);
    snprintf(why, n, "the shared store %s has not answered for %s (%s)", f->url,
             ok ? "a while" : "ever since the start", f->last_err[0] ? f->last_err : "no answer");
    uv_mutex_unlock(&f->mu);
    return false;
}

const char *pf__maps_redis_url(const pf_maps *m) { return m->fleet->url; }

void pf__maps_redis_write_json(const pf_maps *m, pf_jsonw *w) {
    pf_sguard_write_json(m->fleet->guard, w);
}

void pf__maps_redis_stats(const pf_maps *m, pf_sguard_stats *out) {
    pf_sguard_get_stats(m->fleet->guard, out);
}
