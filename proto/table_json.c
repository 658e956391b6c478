/* table_json.c -- see table_json.h. */
#include "table_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

static const char *const members[] = {"sources", "targets",     "agent_size",
                                      "paths",   "deadline_ms", NULL};

void pf_table_request_clear(pf_table_request *r) {
    if (r->targets != r->sources) free(r->targets);
    free(r->sources);
    r->sources = r->targets = NULL;
    r->nsources = r->ntargets = 0;
}

/* A non-empty array of points named `name`, at most `max` of them. */
static pf_status read_points(const cJSON *it, const char *name, size_t max, pf_point **out,
                             size_t *n, pf_proto_error *e) {
    size_t count = 0, i = 0;
    char f[40];
    pf_status st;
    *out = NULL;
    *n = 0;
    if (!cJSON_IsArray(it))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                  "Field '%s' must be an array of points [x, y].", name);
    for (const cJSON *p = it->child; p; p = p->next) count++;
    if (count == 0)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, name,
                                  "Field '%s' must hold at least one point.", name);
    if (count > max)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, name,
                                  "Field '%s' holds at most %zu points here (this server's "
                                  "max_table_entries); this one has %zu.",
                                  name, max, count);
    *out = malloc(count * sizeof(**out));
    if (!*out) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (const cJSON *p = it->child; p; p = p->next, i++) {
        snprintf(f, sizeof(f), "%s[%zu]", name, i);
        if ((st = pf_jsonr_point(p, f, &(*out)[i], e))) {
            free(*out);
            *out = NULL;
            return st;
        }
    }
    *n = count;
    return PF_OK;
}

pf_status pf_table_request_parse(const char *buf, size_t len, const pf_table_limits *lim,
                                 pf_table_request *out, pf_proto_error *e) {
    pf_table_request r;
    cJSON *root;
    const cJSON *it, *src, *tgt;
    int64_t iv;
    size_t entries;
    pf_status st;

    memset(out, 0, sizeof(*out));
    memset(&r, 0, sizeof(r));
    r.agent_size = 1;
    if ((st = pf_jsonr_parse(buf, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, NULL, e))) goto out;
    if ((st = pf_jsonr_check_members(root, members, "", e))) goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "agent_size"))) {
        if ((st = pf_jsonr_int(it, "agent_size", 1, INT32_MAX, &iv, e))) goto out;
        if (iv > lim->max_agent_size) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "agent_size",
                                    "Field 'agent_size' must be between 1 and %d (this "
                                    "server's max_agent_size).",
                                    (int)lim->max_agent_size);
            goto out;
        }
        r.agent_size = (int32_t)iv;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "paths")) &&
        (st = pf_jsonr_bool(it, "paths", &r.paths, e)))
        goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "deadline_ms")) &&
        (st = pf_jsonr_int(it, "deadline_ms", 1, 3600000, &r.deadline_ms, e)))
        goto out;
    src = cJSON_GetObjectItemCaseSensitive(root, "sources");
    tgt = cJSON_GetObjectItemCaseSensitive(root, "targets");
    if (!src) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "sources",
                                "Field 'sources' is required.");
        goto out;
    }
    /* Each side alone is bounded by the product's limit (the other side has
     * at least one point), before anything is allocated. */
    if ((st = read_points(src, "sources", lim->max_entries, &r.sources, &r.nsources, e))) goto out;
    if (tgt) {
        if ((st = read_points(tgt, "targets", lim->max_entries, &r.targets, &r.ntargets, e)))
            goto out_clear;
    } else {
        r.targets = r.sources;
        r.ntargets = r.nsources;
    }
    if (__builtin_mul_overflow(r.nsources, r.ntargets, &entries) || entries > lim->max_entries) {
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, tgt ? "targets" : "sources",
                                "A table holds at most %zu entries (this server's "
                                "max_table_entries); %zu sources x %zu targets is %zu.",
                                lim->max_entries, r.nsources, r.ntargets, entries);
        goto out_clear;
    }
    if (r.paths && entries > lim->max_path_entries) {
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "paths",
                                "A table with paths holds at most %zu entries (this server's "
                                "max_table_paths); this one has %zu.",
                                lim->max_path_entries, entries);
        goto out_clear;
    }
    *out = r;
    cJSON_Delete(root);
    return PF_OK;

out_clear:
    pf_table_request_clear(&r);
out:
    cJSON_Delete(root);
    return st;
}

void pf_table_write_row(pf_jsonw *w, const double *costs, size_t n) {
    pf_jsonw_arr_begin(w);
    for (size_t j = 0; j < n; j++) pf_jsonw_double(w, costs[j]); /* INFINITY is written null */
    pf_jsonw_arr_end(w);
}

void pf_table_write_path(pf_jsonw *w, const pf_point *path, size_t n) {
    if (n == 0) {
        pf_jsonw_null(w);
        return;
    }
    pf_jsonw_arr_begin(w);
    for (size_t i = 0; i < n; i++) pf_jsonw_point(w, path[i].x, path[i].y);
    pf_jsonw_arr_end(w);
}

void pf_table_write_answer(pf_jsonw *w, const pf_table_answer *a) {
    pf_jsonw_obj_begin(w);
    pf_jsonw_key(w, "costs");
    pf_jsonw_arr_begin(w);
    for (size_t i = 0; i < a->nsources; i++)
        pf_table_write_row(w, a->costs + i * a->ntargets, a->ntargets);
    pf_jsonw_arr_end(w);
    if (a->paths_json) {
        pf_jsonw_key(w, "paths");
        pf_jsonw_raw(w, a->paths_json, a->paths_len);
    }
    pf_jsonw_kint(w, "agent_size", a->agent_size);
    pf_jsonw_kuint(w, "map_version", a->map_version);
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "searches", a->searches);
    pf_jsonw_kuint(w, "expanded", a->expanded);
    pf_jsonw_kuint(w, "unreachable", a->unreachable);
    pf_jsonw_kstr(w, "direction", a->backward ? "backward" : "forward");
    pf_jsonw_kuint(w, "time_us", a->time_us);
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
}
