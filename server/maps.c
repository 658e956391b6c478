/* maps.c -- see maps.h: what every store shares (the kinds of map, the
 * PATCH's retry loop), and the call of the store's backend
 * (maps_internal.h). Building and changing a version is its kind's
 * (kind.h). */
#include "maps_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

pf_status pf_maps_create(const pf_maps_deps *d, pf_maps **out) {
    pf_maps *m = calloc(1, sizeof(*m));
    *out = NULL;
    if (!m) return PF_ENOMEM;
    m->d = *d;
    m->be = &pf__maps_memory;
    m->kinds = d->kinds;
    if (!m->kinds) {
        pf_kind_deps kd = {d->cfg, d->mem, NULL, NULL};
        char err[200];
        if (pf_kinds_create(&kd, &m->own_kinds, err, sizeof(err))) {
            free(m);
            return PF_ENOMEM;
        }
        m->kinds = m->own_kinds;
    }
    for (size_t i = 0; i < PF_KINDS_MAX && pf_kinds_registered[i]; i++)
        m->suffixes[i] = pf_kinds_registered[i]->store_suffix;
    atomic_init(&m->loading, false);
    if (uv_mutex_init(&m->mu)) {
        pf_kinds_destroy(m->own_kinds);
        free(m);
        return PF_ENOMEM;
    }
    *out = m;
    return PF_OK;
}

void pf_maps_destroy(pf_maps *m) {
    if (!m) return;
    m->be->close(m);
    uv_mutex_destroy(&m->mu);
    pf_kinds_destroy(m->own_kinds);
    free(m);
}

const pf_kinds *pf_maps_kinds(const pf_maps *m) { return m->kinds; }

pf_status pf_maps_open_store(pf_maps *m, char *err, size_t errlen) {
    const pf_config *cfg = m->d.cfg;
    if (cfg->store[0] && cfg->data_dir[0]) {
        snprintf(err, errlen,
                 "--store and --data-dir exclude each other: a fleet keeps its maps "
                 "in the shared store");
        return PF_EINVAL;
    }
    if (cfg->store[0]) return pf__maps_open_redis(m, cfg->store, err, errlen);
    if (cfg->data_dir[0]) return pf__maps_open_dir(m, cfg->data_dir, err, errlen);
    return PF_OK;
}

const char *pf_maps_store_kind(const pf_maps *m) { return m->be->kind; }

const char *pf_maps_store_dir(const pf_maps *m) { return m->dir ? pf_store_dir(m->dir) : NULL; }

const char *pf_maps_store_url(const pf_maps *m) { return m->fleet ? pf__maps_redis_url(m) : NULL; }

bool pf_maps_store_ready(const pf_maps *m, char *why, size_t n) {
    if (n) why[0] = '\0';
    return m->fleet ? pf__maps_redis_ready(m, why, n) : true;
}

bool pf_maps_store_write_trust(const pf_maps *m, pf_jsonw *w) {
    if (!m->fleet) return false;
    pf__maps_redis_write_json(m, w);
    return true;
}

bool pf_maps_store_trust(const pf_maps *m, struct pf_sguard_stats *out) {
    if (!m->fleet) return false;
    pf__maps_redis_stats(m, out);
    return true;
}

void pf__maps_end_users(pf_maps *m, const char *id, uint64_t keep_lineage) {
    pf_sessions_drop_map(m->d.sessions, id, keep_lineage);
    if (m->d.crowds) pf_crowds_drop_map(m->d.crowds, id, keep_lineage);
}

pf_status pf__maps_apply_body(pf_maps *m, const pf_mapver *cur, const char *body, size_t len,
                              pf_mapver **out, pf_proto_error *e) {
    const pf_kind_env *env = pf_kinds_env(m->kinds, cur->kind);
    void *patch = NULL;
    pf_status st;
    *out = NULL;
    if ((st = cur->kind->patch_parse(env, body, len, 0, &patch, e))) return st;
    st = cur->kind->patch_apply(env, cur, patch, false, out, e); /* stored: never refused */
    cur->kind->patch_free(patch);
    return st;
}

static bool has_hash(const uint8_t h[32]) {
    for (int i = 0; i < 32; i++)
        if (h[i]) return true;
    return false;
}

pf_mapver *pf_maps_find_upload(pf_maps *m, const char *id, const uint8_t hash[32]) {
    pf_mapver *cur;
    if (m->fleet) return NULL; /* the store decides, atomically with the upload */
    cur = pf_registry_get(m->d.registry, id);
    if (cur && has_hash(hash) && memcmp(cur->content_hash, hash, 32) == 0) return cur;
    pf_mapver_release(cur);
    return NULL;
}

pf_status pf__maps_no_map(pf_proto_error *e, const char *id) {
    return pf_proto_error_set(e, PF_ERANGE, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.", id);
}

pf_status pf__maps_precondition(pf_proto_error *e, const char *id, bool exists, uint64_t version,
                                uint64_t lineage) {
    char tag[PF_ETAG_LEN];
    if (!exists)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_PRECONDITION, NULL,
                                  "Map '%s' does not exist, so If-Match does not hold; nothing "
                                  "changed.",
                                  id);
    pf_etag_format(version, lineage, tag, sizeof(tag));
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_PRECONDITION, NULL,
                              "Map '%s' is at version %llu (ETag %s), so the precondition does "
                              "not hold; nothing changed.",
                              id, (unsigned long long)version, tag);
}

pf_status pf_maps_publish(pf_maps *m, pf_mapver *mv, const pf_maps_change *c, pf_maps_outcome *o,
                          pf_proto_error *e) {
    pf_status st;
    memset(o, 0, sizeof(*o));
    pf__maps_write_begin(m);
    st = m->be->publish(m, mv, c, o, e);
    pf__maps_write_end(m);
    return st;
}

/* The PATCH's tries: load, apply, swap, and again when another change came
 * first. */
static pf_status patch_tries(pf_maps *m, const char *id, const pf_kind_ops *kind, const void *patch,
                             const char *body, size_t body_len, const pf_maps_change *c,
                             pf_mapver **out, pf_proto_error *e) {
    const pf_kind_env *env = pf_kinds_env(m->kinds, kind);
    pf_status st;
    *out = NULL;
    for (int attempt = 0; attempt <= 16; attempt++) {
        pf_mapver *cur = pf_registry_get(m->d.registry, id), *mv;
        if (!cur && m->be->load) {
            if ((st = m->be->load(m, id, e))) return st;
            cur = pf_registry_get(m->d.registry, id);
        }
        if (!cur) return pf__maps_no_map(e, id);
        if (cur->kind != kind) {
            /* A PUT of another kind came first: this PATCH is not its. */
            st = pf_proto_error_set(e, PF_ECANCELED, PF_ERR_CONFLICT, NULL,
                                    "Map '%s' is a %s now (it was replaced): a %s PATCH does not "
                                    "apply; nothing changed.",
                                    id, cur->kind->name, kind->name);
            pf_mapver_release(cur);
            return st;
        }
        if ((st = kind->patch_apply(env, cur, patch, true, &mv, e))) {
            pf_mapver_release(cur);
            return st;
        }
        pf_mapver_retain(mv); /* ours, for the answer; the backend takes the other */
        st = m->be->swap(m, cur, mv, body, body_len, c, e);
        pf_mapver_release(cur);
        if (st == PF_OK) {
            *out = mv;
            return PF_OK;
        }
        pf_mapver_release(mv);
        if (st != PF_ECANCELED) return st;
    }
    return pf_proto_error_set(e, PF_ECANCELED, PF_ERR_CONFLICT, NULL,
                              "Map '%s' kept changing while this PATCH was applied; retry.", id);
}

pf_status pf_maps_patch(pf_maps *m, const char *id, const pf_kind_ops *kind, const void *patch,
                        const char *body, size_t body_len, const pf_maps_change *c, pf_mapver **out,
                        pf_proto_error *e) {
    pf_status st;
    pf__maps_write_begin(m);
    st = patch_tries(m, id, kind, patch, body, body_len, c, out, e);
    pf__maps_write_end(m);
    return st;
}

pf_status pf_maps_remove(pf_maps *m, const char *id, const pf_precond *cond, pf_proto_error *e) {
    static const pf_precond none;
    pf_status st;
    pf__maps_write_begin(m);
    st = m->be->remove(m, id, cond ? cond : &none, e);
    pf__maps_write_end(m);
    return st;
}

static int cmp_item(const void *a, const void *b) {
    return strcmp(((const pf_maps_item *)a)->id, ((const pf_maps_item *)b)->id);
}

pf_status pf_maps_list(pf_maps *m, pf_maps_listing *out, pf_proto_error *e) {
    pf_status st;
    memset(out, 0, sizeof(*out));
    if ((st = m->be->list(m, out, e))) return st;
    qsort(out->items, out->n, sizeof(*out->items), cmp_item);
    return PF_OK;
}

void pf_maps_listing_free(pf_maps_listing *l) {
    for (size_t i = 0; i < l->n; i++) pf_mapver_release(l->items[i].mv);
    free(l->items);
    if (l->store_free_) l->store_free_(l->store_);
    memset(l, 0, sizeof(*l));
}

bool pf_maps_needs_load(pf_maps *m, const char *id) {
    pf_mapver *mv;
    if (!m->be->load) return false;
    mv = pf_registry_get(m->d.registry, id); /* a use: the idle clock starts again */
    pf_mapver_release(mv);
    return mv == NULL;
}

pf_status pf_maps_load(pf_maps *m, const char *id, pf_proto_error *e) {
    pf_mapver *mv;
    if (m->be->load) return m->be->load(m, id, e);
    mv = pf_registry_peek(m->d.registry, id);
    pf_mapver_release(mv);
    return mv ? PF_OK : pf__maps_no_map(e, id);
}

pf_status pf_maps_add(pf_maps *m, pf_mapver *mv) { return m->be->add(m, mv); }

pf_status pf_maps_add_if_absent(pf_maps *m, pf_mapver *mv, bool *added) {
    pf_mapver *cur;
    *added = true;
    /* A shared store's add already keeps a map the store has. */
    if (m->fleet) return m->be->add(m, mv);
    if ((cur = pf_registry_get(m->d.registry, mv->id))) {
        pf_mapver_release(cur);
        pf_mapver_release(mv);
        *added = false;
        return PF_OK;
    }
    return m->be->add(m, mv);
}

size_t pf_maps_load_stored(pf_maps *m) { return m->dir ? pf__maps_load_dir(m) : 0; }

bool pf_maps_store_report(const pf_maps *m, pf_store_report *out) {
    if (!m->dir) return false;
    pf_store_get_report(m->dir, out);
    return true;
}

void pf_maps_set_loading(pf_maps *m, bool loading) { atomic_store(&m->loading, loading); }

bool pf_maps_loading(const pf_maps *m) {
    return atomic_load(&((pf_maps *)m)->loading); /* C11 atomics want a non-const object */
}
