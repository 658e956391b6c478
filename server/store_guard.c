/* store_guard.c -- see store_guard.h. */
#include "store_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

struct pf_sguard {
    uv_mutex_t mu;
    char url[600];
    bool accept_volatile;
    int wait_replicas, wait_ms;
    /* The last check. */
    bool checked;         /* done on run_id, and nothing said since that the store changed */
    bool want_check;      /* a new run id or a report came: the follower checks now */
    char run_id[41];      /* the server the last check verified ("" before) */
    bool durable;         /* its facts promise changes survive a crash */
    char durability[400]; /* what was found (or missing), a sentence */
    char epoch[PF_RSTORE_EPOCH_LEN + 1];
    uint64_t min_lineage;
    /* Loss. */
    char reported[300]; /* evidence of a loss not yet reviewed, "" for none */
    bool restoring;
    bool restore_again; /* the last putting back left copies out */
    uint64_t losses;
    char loss_why[400];
    char loss_at[32]; /* UTC, ISO 8601 */
    uint64_t loss_restored, loss_newer, loss_failed, restored_total;
    /* Counters. */
    uint64_t refused_not_durable, refused_unavailable, unknown, unconfirmed;
};

pf_sguard *pf_sguard_create(const char *url, bool accept_volatile, int wait_replicas, int wait_ms) {
    pf_sguard *g = calloc(1, sizeof(*g));
    if (!g) return NULL;
    if (uv_mutex_init(&g->mu)) {
        free(g);
        return NULL;
    }
    snprintf(g->url, sizeof(g->url), "%s", url);
    g->accept_volatile = accept_volatile;
    g->wait_replicas = wait_replicas;
    g->wait_ms = wait_ms;
    snprintf(g->durability, sizeof(g->durability), "not checked yet");
    return g;
}

void pf_sguard_destroy(pf_sguard *g) {
    if (!g) return;
    uv_mutex_destroy(&g->mu);
    free(g);
}

/* Whether changes may be acknowledged now; why (n bytes) and *code say
 * why not. Under the lock. */
static bool writable(const pf_sguard *g, pf_error *code, char *why, size_t n) {
    *code = PF_ERR_STORE_UNAVAILABLE;
    if (g->restoring) {
        snprintf(why, n,
                 "The map store lost data (%.90s); this instance is putting back the maps it "
                 "holds: nothing changed; retry.",
                 g->loss_why);
        return false;
    }
    if (!g->checked) {
        snprintf(why, n,
                 "This instance has not yet checked the map store since %s: nothing changed; "
                 "retry.",
                 g->run_id[0] ? "Redis restarted or answered oddly" : "it started");
        return false;
    }
    if (!g->durable && !g->accept_volatile) {
        *code = PF_ERR_STORE_NOT_DURABLE;
        snprintf(why, n,
                 "The map store would lose what it acknowledges (%.80s): changes are refused; "
                 "nothing changed. Turn on appendonly or a replica in Redis, or start pathd with "
                 "--store-accept-volatile.",
                 g->durability);
        return false;
    }
    return true;
}

bool pf_sguard_may_write(pf_sguard *g, pf_rstore_guard *out, pf_proto_error *e) {
    char why[400];
    pf_error code;
    bool ok;
    uv_mutex_lock(&g->mu);
    ok = writable(g, &code, why, sizeof(why));
    if (ok) {
        memcpy(out->epoch, g->epoch, sizeof(out->epoch));
        out->min_lineage = g->min_lineage;
    } else if (code == PF_ERR_STORE_NOT_DURABLE) {
        g->refused_not_durable++;
    } else {
        g->refused_unavailable++;
    }
    uv_mutex_unlock(&g->mu);
    if (!ok) pf_proto_error_set(e, PF_EIO, code, NULL, "%s", why);
    return ok;
}

void pf_sguard_known(pf_sguard *g, char epoch[PF_RSTORE_EPOCH_LEN + 1], uint64_t *min_lineage) {
    uv_mutex_lock(&g->mu);
    memcpy(epoch, g->epoch, PF_RSTORE_EPOCH_LEN + 1);
    *min_lineage = g->min_lineage;
    uv_mutex_unlock(&g->mu);
}

void pf_sguard_saw(pf_sguard *g, uint64_t lineage) {
    uv_mutex_lock(&g->mu);
    if (lineage > g->min_lineage) g->min_lineage = lineage;
    uv_mutex_unlock(&g->mu);
}

bool pf_sguard_knows_server(pf_sguard *g, const char *run_id) {
    bool same;
    uv_mutex_lock(&g->mu);
    same = g->run_id[0] && strcmp(g->run_id, run_id) == 0;
    if (!same) {
        g->checked = false;
        g->want_check = true;
    }
    uv_mutex_unlock(&g->mu);
    return same;
}

void pf_sguard_report(pf_sguard *g, const char *why) {
    uv_mutex_lock(&g->mu);
    if (!g->reported[0]) snprintf(g->reported, sizeof(g->reported), "%s", why);
    g->checked = false;
    g->want_check = true;
    uv_mutex_unlock(&g->mu);
}

bool pf_sguard_wants_check(pf_sguard *g) {
    bool w;
    uv_mutex_lock(&g->mu);
    w = g->want_check;
    uv_mutex_unlock(&g->mu);
    return w;
}

pf_sguard_verdict pf_sguard_review(pf_sguard *g, const pf_redis_facts *f, const pf_rstore_state *st,
                                   const pf_rstore_pos *pos, char *why, size_t n) {
    char dur[400];
    bool durable = pf_redis_facts_durable(f, dur, sizeof(dur)), changed;
    pf_sguard_verdict v = PF_SGUARD_SAME;
    uv_mutex_lock(&g->mu);
    changed = durable != g->durable || strcmp(dur, g->durability) != 0;
    g->durable = durable;
    snprintf(g->durability, sizeof(g->durability), "%s", dur);
    g->want_check = false;
    if (n) why[0] = '\0';
    if (!g->epoch[0]) {
        v = PF_SGUARD_FIRST;
    } else if (strcmp(st->epoch, g->epoch) != 0) {
        v = PF_SGUARD_LOST;
        if (st->epoch[0])
            snprintf(why, n, "its epoch changed from %s to %s: it was emptied or replaced",
                     g->epoch, st->epoch);
        else
            snprintf(why, n,
                     "its epoch %s is gone: it was emptied (a restart without "
                     "persistence, FLUSHALL) or replaced",
                     g->epoch);
    } else if (st->lineage < g->min_lineage) {
        v = PF_SGUARD_LOST;
        snprintf(why, n,
                 "its lineage counter went back from %llu to %llu: it restarted from an older "
                 "state",
                 (unsigned long long)g->min_lineage, (unsigned long long)st->lineage);
    } else if (pos && pf_rstore_pos_after(*pos, st->tail)) {
        v = PF_SGUARD_LOST;
        snprintf(why, n,
                 "its events stream ends at %llu-%llu, before %llu-%llu where this instance "
                 "read: it restarted from an older state",
                 (unsigned long long)st->tail.ms, (unsigned long long)st->tail.seq,
                 (unsigned long long)pos->ms, (unsigned long long)pos->seq);
    } else if (g->reported[0]) {
        v = PF_SGUARD_LOST;
        snprintf(why, n, "%s", g->reported);
    } else if (g->restore_again) {
        v = PF_SGUARD_RESTORE;
        snprintf(why, n, "%llu copies were not put back after the last loss",
                 (unsigned long long)g->loss_failed);
    }
    g->reported[0] = '\0';
    if (v == PF_SGUARD_SAME || v == PF_SGUARD_RESTORE) {
        snprintf(g->run_id, sizeof(g->run_id), "%s", f->run_id);
        g->checked = true;
    }
    if (v == PF_SGUARD_LOST) {
        time_t now = time(NULL);
        struct tm tm;
        g->losses++;
        g->restoring = true;
        g->checked = false;
        snprintf(g->loss_why, sizeof(g->loss_why), "%s", why);
        gmtime_r(&now, &tm);
        strftime(g->loss_at, sizeof(g->loss_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
        g->loss_restored = g->loss_newer = g->loss_failed = 0;
    }
    uv_mutex_unlock(&g->mu);
    if (changed) {
        if (durable)
            fprintf(stderr, "pathd: store %s keeps what it acknowledges (%s): changes accepted\n",
                    g->url, dur);
        else if (g->accept_volatile)
            fprintf(stderr,
                    "pathd: store %s does NOT keep what it acknowledges (%s); changes accepted "
                    "anyway (--store-accept-volatile): a restart of Redis loses what no instance "
                    "holds\n",
                    g->url, dur);
        else
            fprintf(stderr,
                    "pathd: store %s does NOT keep what it acknowledges (%s): changes are "
                    "refused (503 store_not_durable) until it does, or start with "
                    "--store-accept-volatile\n",
                    g->url, dur);
    }
    if (v == PF_SGUARD_LOST)
        fprintf(stderr,
                "pathd: store %s LOST DATA: %s; this instance keeps serving the maps it "
                "holds and puts them back\n",
                g->url, why);
    return v;
}

void pf_sguard_adopt(pf_sguard *g, const pf_rstore_state *st, const char *run_id) {
    uv_mutex_lock(&g->mu);
    memcpy(g->epoch, st->epoch, sizeof(g->epoch));
    if (st->lineage > g->min_lineage) g->min_lineage = st->lineage;
    snprintf(g->run_id, sizeof(g->run_id), "%s", run_id);
    g->checked = true;
    uv_mutex_unlock(&g->mu);
}

void pf_sguard_restored(pf_sguard *g, uint64_t restored, uint64_t newer, uint64_t failed,
                        bool again) {
    uv_mutex_lock(&g->mu);
    g->restoring = false;
    g->restore_again = failed > 0;
    g->loss_restored = (again ? g->loss_restored : 0) + restored;
    g->loss_newer = (again ? g->loss_newer : 0) + newer;
    g->loss_failed = failed;
    g->restored_total += restored;
    uv_mutex_unlock(&g->mu);
    fprintf(stderr,
            "pathd: store %s: put back %llu maps this instance holds; %llu the store had as new "
            "or newer; %llu failed%s\n",
            g->url, (unsigned long long)restored, (unsigned long long)newer,
            (unsigned long long)failed, failed ? " (kept, and tried again at the next check)" : "");
}

bool pf_sguard_keeps_copies(pf_sguard *g) {
    bool k;
    uv_mutex_lock(&g->mu);
    k = g->restoring;
    uv_mutex_unlock(&g->mu);
    return k;
}

void pf_sguard_count_unknown(pf_sguard *g) {
    uv_mutex_lock(&g->mu);
    g->unknown++;
    uv_mutex_unlock(&g->mu);
}

void pf_sguard_count_unconfirmed(pf_sguard *g) {
    uv_mutex_lock(&g->mu);
    g->unconfirmed++;
    uv_mutex_unlock(&g->mu);
}

void pf_sguard_get_stats(pf_sguard *g, pf_sguard_stats *out) {
    pf_error code;
    char why[8];
    uv_mutex_lock(&g->mu);
    out->checked = g->checked;
    out->durable = g->durable;
    out->writes_ok = writable(g, &code, why, sizeof(why));
    out->accept_volatile = g->accept_volatile;
    out->losses = g->losses;
    out->restored = g->restored_total;
    out->refused_not_durable = g->refused_not_durable;
    out->refused_unavailable = g->refused_unavailable;
    out->unknown = g->unknown;
    out->unconfirmed = g->unconfirmed;
    uv_mutex_unlock(&g->mu);
}

void pf_sguard_write_json(pf_sguard *g, pf_jsonw *w) {
    char why[400];
    pf_error code;
    bool ok;
    uv_mutex_lock(&g->mu);
    ok = writable(g, &code, why, sizeof(why));
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "writes", ok ? "accepted" : "refused");
    pf_jsonw_key(w, "why");
    if (ok)
        pf_jsonw_null(w);
    else
        pf_jsonw_str(w, why);
    pf_jsonw_key(w, "code");
    if (ok)
        pf_jsonw_null(w);
    else
        pf_jsonw_str(w, pf_error_code(code));
    pf_jsonw_kbool(w, "durable", g->durable);
    pf_jsonw_kstr(w, "durability", g->durability);
    pf_jsonw_kbool(w, "accept_volatile", g->accept_volatile);
    pf_jsonw_kbool(w, "checked", g->checked);
    pf_jsonw_kstr(w, "run_id", g->run_id);
    pf_jsonw_kstr(w, "epoch", g->epoch);
    pf_jsonw_kint(w, "wait_replicas", g->wait_replicas);
    pf_jsonw_kint(w, "wait_ms", g->wait_ms);
    pf_jsonw_kuint(w, "data_losses", g->losses);
    pf_jsonw_key(w, "last_loss");
    if (g->losses) {
        pf_jsonw_obj_begin(w);
        pf_jsonw_kstr(w, "at", g->loss_at);
        pf_jsonw_kstr(w, "why", g->loss_why);
        pf_jsonw_kbool(w, "restoring", g->restoring);
        pf_jsonw_kuint(w, "restored", g->loss_restored);
        pf_jsonw_kuint(w, "store_newer", g->loss_newer);
        pf_jsonw_kuint(w, "failed", g->loss_failed);
        pf_jsonw_obj_end(w);
    } else {
        pf_jsonw_null(w);
    }
    pf_jsonw_kuint(w, "refused_not_durable", g->refused_not_durable);
    pf_jsonw_kuint(w, "refused_unavailable", g->refused_unavailable);
    pf_jsonw_kuint(w, "outcome_unknown", g->unknown);
    pf_jsonw_kuint(w, "replicas_unconfirmed", g->unconfirmed);
    pf_jsonw_obj_end(w);
    uv_mutex_unlock(&g->mu);
}
