/* graph_table_json.c -- distance table requests on a graph
 * (graph_table_json.h). */
#include "graph_table_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

/* The places of the array `name` in root into *out (*n of them). */
static pf_status read_places(const cJSON *root, const char *name, pf_graph_place **out, size_t *n,
                             pf_proto_error *e) {
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, name), *it;
    size_t i = 0;
    *out = NULL;
    *n = 0;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, name,
                                  "Field '%s' must be a non-empty array of node ids or "
                                  "{\"point\":[x,y(,z)]}.",
                                  name);
    if (!(*out = calloc((size_t)cJSON_GetArraySize(arr), sizeof(**out))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    cJSON_ArrayForEach(it, arr) {
        char f[48];
        snprintf(f, sizeof(f), "%s[%zu]", name, i);
        if (pf_graph_place_read(it, f, &(*out)[i], e)) {
            free(*out);
            *out = NULL;
            return e->status;
        }
        i++;
    }
    *n = i;
    return PF_OK;
}

pf_status pf_graph_table_request_parse(const char *body, size_t len, size_t max_entries,
                                       size_t max_path_entries, pf_graph_table_request *q,
                                       pf_proto_error *e) {
    static const char *const members[] = {"sources",      "targets",     "paths",
                                          "exclude_tags", "deadline_ms", NULL};
    cJSON *root = NULL;
    const cJSON *m;
    size_t cells;
    pf_status st;
    memset(q, 0, sizeof(*q));
    if ((st = pf_jsonr_parse(body, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, "", e)) || (st = pf_jsonr_check_members(root, members, "", e)))
        goto out;
    /* Counted before the places are read: a huge table is refused cheaply. */
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "sources"),
                    *t = cJSON_GetObjectItemCaseSensitive(root, "targets");
        size_t ns = cJSON_IsArray(s) ? (size_t)cJSON_GetArraySize(s) : 0;
        size_t nt = cJSON_IsArray(t) ? (size_t)cJSON_GetArraySize(t) : ns;
        bool paths = false;
        if ((m = cJSON_GetObjectItemCaseSensitive(root, "paths")) &&
            (st = pf_jsonr_bool(m, "paths", &paths, e)))
            goto out;
        cells = ns * nt; /* both below 2^31: cJSON counts in int */
        if (cells > max_entries) {
            st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "targets",
                                    "The table has %zu entries; this server takes at most %zu "
                                    "(--max-table-entries).",
                                    cells, max_entries);
            goto out;
        }
        if (paths && cells > max_path_entries) {
            st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "paths",
                                    "The table has %zu entries; with paths this server takes at "
                                    "most %zu (--max-table-paths).",
                                    cells, max_path_entries);
            goto out;
        }
        q->paths = paths;
    }
    if ((st = read_places(root, "sources", &q->sources, &q->nsources, e))) goto out;
    if (cJSON_GetObjectItemCaseSensitive(root, "targets")) {
        if ((st = read_places(root, "targets", &q->targets, &q->ntargets, e))) goto out;
    } else {
        q->targets = q->sources;
        q->ntargets = q->nsources;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(root, "exclude_tags")) &&
        (st = pf_graph_exclude_read(m, "exclude_tags", &q->exclude, e)))
        goto out;
    if ((m = cJSON_GetObjectItemCaseSensitive(root, "deadline_ms")) &&
        (st = pf_jsonr_int(m, "deadline_ms", 1, 3600000, &q->deadline_ms, e)))
        goto out;
out:
    cJSON_Delete(root);
    if (st) pf_graph_table_request_clear(q);
    return st;
}

void pf_graph_table_request_clear(pf_graph_table_request *q) {
    if (q->targets != q->sources) free(q->targets);
    free(q->sources);
    memset(q, 0, sizeof(*q));
}
