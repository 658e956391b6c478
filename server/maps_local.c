/* maps_local.c -- the stores of one server: memory, and --data-dir (store.h)
 * written before the registry changes. The registry numbers the versions;
 * m->mu makes each change (precondition, disk, registry) one step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "maps_internal.h"

static pf_status storage_error(pf_proto_error *e, const char *id, const char *err) {
    fprintf(stderr, "pathd: map '%s': %s\n", id, err);
    return pf_proto_error_set(
        e, PF_EIO, PF_ERR_STORAGE, NULL,
        "The map could not be saved to the data directory (%s); nothing changed.", err);
}

/* Writes mv (a grid or a navmesh version) to the data directory as
 * `version`. */
static pf_status dir_write(pf_maps *m, const pf_mapver *mv, uint64_t version, char *err,
                           size_t errlen) {
    char *env;
    size_t len;
    pf_status st;
    if (!mv->nav)
        return pf_store_write(m->dir, mv->id, version, pf_planner_grid(mv->planner), err, errlen);
    if (!(env = pf__maps_nav_envelope(mv, &len))) {
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    st = pf_store_write_nav(m->dir, mv->id, version, env, len, err, errlen);
    free(env);
    return st;
}

static bool precondition_holds(const pf_maps_change *c, const pf_mapver *cur) {
    return !c || !c->cond ||
           pf_precond_holds(c->cond, cur != NULL, cur ? cur->version : 0, cur ? cur->lineage : 0);
}

static pf_status local_publish(pf_maps *m, pf_mapver *mv, const pf_maps_change *c,
                               pf_maps_outcome *o, pf_proto_error *e) {
    pf_registry *reg = m->d.registry;
    pf_mapver *cur;
    pf_status st = PF_OK;
    char err[256];

    uv_mutex_lock(&m->mu);
    cur = pf_registry_get(reg, mv->id);
    if (c && c->post && cur && memcmp(cur->content_hash, mv->content_hash, 32) == 0) {
        /* The same upload again: nothing changes. */
        uv_mutex_unlock(&m->mu);
        pf_mapver_release(mv);
        o->current = cur;
        o->unchanged = true;
        return PF_OK;
    }
    if (!precondition_holds(c, cur)) {
        st = pf__maps_precondition(e, mv->id, cur != NULL, cur ? cur->version : 0,
                                   cur ? cur->lineage : 0);
    } else if (!cur && pf_registry_count(reg) >= (size_t)m->d.cfg->max_maps) {
        /* Checked before writing a file that would not be published. */
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, NULL,
                                "The server holds %lld maps, its limit; delete one first.",
                                (long long)m->d.cfg->max_maps);
    } else if (m->dir && dir_write(m, mv, pf_mapver_next_version(cur), err, sizeof(err))) {
        st = storage_error(e, mv->id, err);
    } else {
        pf_mapver_retain(mv); /* the outcome's, beside the registry's */
        if ((st = pf_registry_publish(reg, mv, &o->created))) {
            pf_mapver_release(mv);
            if (m->dir) {
                /* Out of memory after the write: put the disk back as it was. */
                char e2[256];
                if (cur)
                    dir_write(m, cur, cur->version, e2, sizeof(e2));
                else
                    pf_store_remove(m->dir, mv->id, e2, sizeof(e2));
            }
            pf_proto_error_set(e, st, pf_error_for_status(st), NULL,
                               st == PF_ELIMIT ? "The server holds %lld maps, its limit; delete "
                                                 "one first."
                                               : "Out of memory (%lld maps held).",
                               (long long)m->d.cfg->max_maps);
        }
    }
    uv_mutex_unlock(&m->mu);
    pf_mapver_release(cur);
    if (st) {
        pf_mapver_release(mv);
        return st;
    }
    o->current = mv;
    if (!o->created) pf__maps_end_users(m, mv->id, mv->lineage);
    return PF_OK;
}

static pf_status local_swap(pf_maps *m, pf_mapver *cur, pf_mapver *mv, const char *body, size_t len,
                            const pf_maps_change *c, pf_proto_error *e) {
    pf_mapver *now;
    pf_status st = PF_ECANCELED;
    char err[256];
    (void)body;
    (void)len;
    uv_mutex_lock(&m->mu);
    now = pf_registry_get(m->d.registry, mv->id);
    if (now != cur) {
        st = PF_ECANCELED; /* changed since cur was read: start over */
    } else if (!precondition_holds(c, cur)) {
        st = pf__maps_precondition(e, cur->id, true, cur->version, cur->lineage);
    } else if (m->dir && dir_write(m, mv, pf_mapver_next_version(cur), err, sizeof(err))) {
        st = storage_error(e, mv->id, err);
    } else {
        st = pf_registry_swap(m->d.registry, cur, mv); /* cannot lose: we hold mu */
    }
    uv_mutex_unlock(&m->mu);
    pf_mapver_release(now);
    if (st) {
        pf_mapver_release(mv);
        return st;
    }
    /* Paths and flow fields cached for the old version must not be served
     * again: they are keyed by version, and dropping them frees the memory
     * while sessions still hold the old version. */
    pf_mapver_drop_caches(cur);
    return PF_OK;
}

static pf_status local_remove(pf_maps *m, const char *id, const pf_precond *cond,
                              pf_proto_error *e) {
    pf_mapver *cur;
    pf_status st = PF_OK;
    char err[256];
    uv_mutex_lock(&m->mu);
    if (!(cur = pf_registry_get(m->d.registry, id)))
        st = pf__maps_no_map(e, id);
    else if (!pf_precond_holds(cond, true, cur->version, cur->lineage))
        st = pf__maps_precondition(e, id, true, cur->version, cur->lineage);
    else if (m->dir && pf_store_remove(m->dir, id, err, sizeof(err)))
        st = storage_error(e, id, err);
    else
        pf_registry_remove(m->d.registry, id);
    uv_mutex_unlock(&m->mu);
    pf_mapver_release(cur);
    if (!st) pf__maps_end_users(m, id, 0);
    return st;
}

static pf_status local_list(pf_maps *m, pf_maps_listing *out, pf_proto_error *e) {
    pf_mapver **list;
    size_t n;
    if (pf_registry_list(m->d.registry, &list, &n))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    out->items = calloc(n ? n : 1, sizeof(*out->items));
    if (!out->items) {
        for (size_t i = 0; i < n; i++) pf_mapver_release(list[i]);
        free(list);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    for (size_t i = 0; i < n; i++) {
        pf_maps_item *it = &out->items[i];
        snprintf(it->id, sizeof(it->id), "%s", list[i]->id);
        it->version = list[i]->version;
        it->lineage = list[i]->lineage;
        it->mv = list[i]; /* the list's reference */
    }
    out->n = n;
    free(list);
    return PF_OK;
}

/* Builds g and publishes it in the registry only; version 0 numbers it as
 * usual, another number is a stored map's. */
static pf_status add(pf_maps *m, const char *id, pf_grid *g, uint64_t version) {
    pf_mapver *mv;
    bool created;
    pf_status st = pf_maps_build(m, id, g, NULL, pf_clock_now_ns(), 0, &mv, NULL);
    if (st) return st;
    st = pf_registry_restore(m->d.registry, mv, version, &created);
    if (st) pf_mapver_release(mv);
    return st;
}

static pf_status local_add(pf_maps *m, const char *id, pf_grid *g) { return add(m, id, g, 0); }

static void local_close(pf_maps *m) {
    pf_store_close(m->dir);
    m->dir = NULL;
}

const pf_maps_backend pf__maps_memory = {
    "memory", local_publish, local_swap, local_remove, local_list, NULL, local_add, local_close,
};

const pf_maps_backend pf__maps_dir = {
    "data-dir", local_publish, local_swap, local_remove, local_list, NULL, local_add, local_close,
};

static void load_stored_map(void *ud, const char *id, uint64_t version, pf_grid *g) {
    pf_status st = add(ud, id, g, version);
    if (st) fprintf(stderr, "pathd: map '%s' from the data directory: %s\n", id, pf_status_str(st));
}

/* A navmesh map's envelope: parsed and built as an upload would be. */
static pf_status load_stored_nav(void *ud, const char *id, uint64_t version, const char *bytes,
                                 size_t len, char *why, size_t whylen) {
    pf_maps *m = ud;
    pf_proto_error e;
    pf_mapver *mv = NULL;
    bool created;
    pf_status st = pf__maps_build_envelope(m, id, bytes, len, NULL, &mv, &e);
    if (st) {
        snprintf(why, whylen, "a navmesh that does not build here: %s%s%.100s",
                 e.field[0] ? e.field : "", e.field[0] ? ": " : "", e.message);
        /* Out of memory, or the build ran past --nav-build-ms (a busy
         * start): the file may well load next time, so it stays. */
        if (st == PF_ENOMEM || strcmp(e.field, "limits.nav_build_ms") == 0) return PF_ECANCELED;
        return PF_EINVAL;
    }
    if (pf_registry_restore(m->d.registry, mv, version, &created)) {
        pf_mapver_release(mv);
        return PF_ENOMEM;
    }
    return PF_OK;
}

pf_status pf__maps_open_dir(pf_maps *m, const char *dir, char *err, size_t errlen) {
    pf_status st;
    if ((st = pf_store_open(dir, &m->dir, err, errlen))) return st;
    m->be = &pf__maps_dir;
    return PF_OK;
}

size_t pf__maps_load_dir(pf_maps *m) {
    size_t n = pf_store_load_all(m->dir, &m->limits, load_stored_map, load_stored_nav, m);
    fprintf(stderr, "pathd: %zu maps loaded from %s\n", n, pf_store_dir(m->dir));
    return n;
}
