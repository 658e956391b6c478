/* kinds.c -- the kinds this build serves, and the registry over them (see
 * kind.h). Adding a kind is one line in pf_kinds_registered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"
#include "kind.h"
#include "kind_graph.h"
#include "kind_grid.h"
#include "kind_navmesh.h"
#include "metrics.h"

/* The first is the default kind (kind.h). */
const pf_kind_ops *const pf_kinds_registered[] = {
    &pf_kind_grid,
    &pf_kind_navmesh,
    &pf_kind_graph,
    NULL,
};

struct pf_kinds {
    size_t n;
    pf_kind_env env[PF_KINDS_MAX];
};

const pf_kind_ops *pf_kind_by_name(const char *name) {
    for (size_t i = 0; pf_kinds_registered[i]; i++)
        if (strcmp(pf_kinds_registered[i]->name, name) == 0) return pf_kinds_registered[i];
    return NULL;
}

bool pf_kind_has(const pf_kind_ops *kind, unsigned features) {
    return (kind->features & features) == features;
}

/* What each feature is called in a refusal. */
static const struct {
    unsigned bit;
    const char *what;
} feature_names[] = {
    {PF_KIND_CELLS, "cells"},
    {PF_KIND_HIERARCHY, "HPA* hierarchy"},
    {PF_KIND_FLOWFIELDS, "flow fields"},
    {PF_KIND_TABLES, "distance tables"},
    {PF_KIND_CROWDS, "crowds"},
    {PF_KIND_MESH, "mesh export"},
};

pf_status pf_kind_refuse(pf_proto_error *e, const pf_kind_ops *kind, const char *map_id,
                         unsigned feature, const char *field) {
    const char *what = "such feature";
    char others[160] = "";
    size_t len = 0, n = 0;
    for (size_t i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++)
        if (feature_names[i].bit == feature) what = feature_names[i].what;
    /* "grid maps", "grid and graph maps": the kinds that have it. */
    for (size_t i = 0; pf_kinds_registered[i]; i++)
        if (pf_kind_has(pf_kinds_registered[i], feature)) n++;
    for (size_t i = 0, k = 0; pf_kinds_registered[i] && len < sizeof(others); i++) {
        if (!pf_kind_has(pf_kinds_registered[i], feature)) continue;
        k++;
        len += (size_t)snprintf(others + len, sizeof(others) - len, "%s%s",
                                k == 1   ? ""
                                : k == n ? " and "
                                         : ", ",
                                pf_kinds_registered[i]->name);
    }
    if (n == 0)
        return pf_proto_error_set(e, PF_EUNSUPPORTED, PF_ERR_UNSUPPORTED, field,
                                  "Map '%s' is a %s map: it has no %s.", map_id, kind->name, what);
    return pf_proto_error_set(e, PF_EUNSUPPORTED, PF_ERR_UNSUPPORTED, field,
                              "Map '%s' is a %s map: it has no %s (%s maps have them).", map_id,
                              kind->name, what, others);
}

bool pf_kind_cache_get(const pf_mapver *mv, pf_cache *cache, const pf_cache_key *k,
                       pf_cache_value *v) {
    bool hit = pf_cache_get(cache, k, v);
    if (mv->env && mv->env->d.metrics) pf_metrics_count_cache(mv->env->d.metrics, hit);
    return hit;
}

pf_status pf_kind_replay_log(const pf_kind_ops *kind, const pf_kind_env *env,
                             const pf_kind_stored *in, pf_mapver **mv, pf_kind_store_error *why) {
    for (size_t i = 0; i < in->nbodies; i++) {
        pf_mapver *next = NULL;
        void *patch = NULL;
        pf_status st = kind->patch_parse(env, in->bodies[i], in->lens[i], 0, &patch, &why->e);
        if (!st) {
            st = kind->patch_apply(env, *mv, patch, false, &next, &why->e);
            kind->patch_free(patch);
        }
        pf_mapver_release(*mv);
        *mv = next;
        if (st) {
            why->fault = PF_KIND_STORE_LOG;
            why->at = i;
            return st;
        }
    }
    return PF_OK;
}

size_t pf_kind_slot(const pf_kind_ops *kind, size_t i) {
    size_t base = 0;
    for (size_t k = 0; pf_kinds_registered[k] && pf_kinds_registered[k] != kind; k++)
        base += pf_kinds_registered[k]->nalgorithms;
    base += i;
    return base < PF_KINDS_ALGORITHMS_MAX ? base : PF_KINDS_ALGORITHMS_MAX - 1;
}

size_t pf_kinds_algorithm_slots(void) {
    size_t n = 0;
    for (size_t i = 0; pf_kinds_registered[i]; i++) n += pf_kinds_registered[i]->nalgorithms;
    return n < PF_KINDS_ALGORITHMS_MAX ? n : PF_KINDS_ALGORITHMS_MAX;
}

const char *pf_kinds_algorithm_label(size_t s) {
    for (size_t i = 0; pf_kinds_registered[i]; i++) {
        if (s < pf_kinds_registered[i]->nalgorithms)
            return pf_kinds_registered[i]->algorithm_name(s);
        s -= pf_kinds_registered[i]->nalgorithms;
    }
    return "unknown";
}

pf_status pf_kinds_create(const pf_kind_deps *d, pf_kinds **out, char *err, size_t errlen) {
    pf_kinds *k = calloc(1, sizeof(*k));
    size_t base = 0;
    pf_status st = PF_OK;
    *out = NULL;
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    for (size_t i = 0; pf_kinds_registered[i] && !st; i++) {
        pf_kind_env *env;
        const pf_kind_ops *kind = pf_kinds_registered[i];
        if (k->n == PF_KINDS_MAX || base + kind->nalgorithms > PF_KINDS_ALGORITHMS_MAX) {
            snprintf(err, errlen, "too many kinds or algorithms registered (kind.h)");
            st = PF_ELIMIT;
            break;
        }
        env = &k->env[k->n];
        env->kind = kind;
        env->d = *d;
        base += kind->nalgorithms;
        if (kind->env_create && (st = kind->env_create(&env->d, &env->state, err, errlen))) break;
        k->n++;
    }
    if (st) {
        pf_kinds_destroy(k);
        return st;
    }
    *out = k;
    return PF_OK;
}

void pf_kinds_destroy(pf_kinds *k) {
    if (!k) return;
    for (size_t i = 0; i < k->n; i++)
        if (k->env[i].kind->env_destroy) k->env[i].kind->env_destroy(k->env[i].state);
    free(k);
}

const pf_kind_env *pf_kinds_env(const pf_kinds *k, const pf_kind_ops *kind) {
    for (size_t i = 0; i < k->n; i++)
        if (k->env[i].kind == kind) return &k->env[i];
    return NULL;
}

const pf_kind_env *pf_kinds_default(const pf_kinds *k) { return &k->env[0]; }

pf_status pf_kinds_for_upload(const pf_kinds *k, pf_body_kind body_kind, const cJSON *root,
                              const pf_kind_env **out, pf_proto_error *e) {
    const cJSON *member;
    const char *name;
    char names[160] = "";
    size_t len = 0;
    *out = NULL;
    if (body_kind != PF_BODY_JSON) {
        for (size_t i = 0; i < k->n; i++)
            if (k->env[i].kind->upload_bodies & (unsigned)body_kind) {
                *out = &k->env[i];
                return PF_OK;
            }
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_UNSUPPORTED_MEDIA, "Content-Type",
                                  "No kind of map is uploaded with this Content-Type.");
    }
    member = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "kind") : NULL;
    if (!member) {
        for (size_t i = 0; i < k->n; i++)
            if (k->env[i].kind->default_json) {
                *out = &k->env[i];
                return PF_OK;
            }
    } else {
        if (pf_jsonr_string(member, "kind", &name, e)) return PF_EPARSE;
        for (size_t i = 0; i < k->n; i++)
            if (strcmp(k->env[i].kind->name, name) == 0) {
                *out = &k->env[i];
                return PF_OK;
            }
    }
    /* "\"grid\" or \"navmesh\"": every kind's name. */
    for (size_t i = 0; i < k->n && len < sizeof(names); i++)
        len += (size_t)snprintf(names + len, sizeof(names) - len, "%s\"%s\"",
                                i == 0          ? ""
                                : i + 1 == k->n ? " or "
                                                : ", ",
                                k->env[i].kind->name);
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "kind", "Field 'kind' is %s.",
                              names);
}

void pf_kinds_write_server_info(const pf_kinds *k, pf_jsonw *w) {
    for (size_t i = 0; i < k->n; i++)
        if (k->env[i].kind->write_server_info) k->env[i].kind->write_server_info(&k->env[i], w);
}
