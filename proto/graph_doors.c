/* graph_doors.c -- door groups of a waypoint graph upload (graph_json.h):
 * named sets of edges and nodes a PATCH opens or closes together. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_doc_internal.h"
#include "jsonr.h"

/* A growing array of indices. */
typedef struct idx_buf {
    uint32_t *p;
    size_t len, cap;
} idx_buf;

static bool idx_put(idx_buf *b, uint32_t v) {
    if (b->len == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        uint32_t *p =
            cap <= SIZE_MAX / sizeof(uint32_t) ? realloc(b->p, cap * sizeof(uint32_t)) : NULL;
        if (!p) return false;
        b->p = p;
        b->cap = cap;
    }
    b->p[b->len++] = v;
    return true;
}

typedef struct door_key {
    const char *name;
    uint32_t k;
} door_key;

static int key_cmp(const void *a, const void *b) {
    const door_key *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->k > y->k) - (x->k < y->k);
}

static pf_status nomem(pf_proto_error *e) {
    return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
}

/* Door i's members into eb / nb (checked against d), counted in *total. */
static pf_status read_members(const cJSON *door, uint32_t i, const pf_graph_limits *lim,
                              pf_graph_doc *d, idx_buf *eb, idx_buf *nb, uint64_t *total, bool open,
                              pf_proto_error *e) {
    static const char *const lists[2] = {"edges", "nodes"};
    size_t before = eb->len + nb->len;
    for (int l = 0; l < 2; l++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(door, lists[l]), *it;
        uint32_t j = 0;
        char f[96];
        if (!arr) continue;
        snprintf(f, sizeof(f), "doors[%" PRIu32 "].%s", i, lists[l]);
        if (!cJSON_IsArray(arr))
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, f,
                                      "Field '%s' must be an array.", f);
        cJSON_ArrayForEach(it, arr) {
            uint32_t x;
            snprintf(f, sizeof(f), "doors[%" PRIu32 "].%s[%" PRIu32 "]", i, lists[l], j);
            if (++*total > lim->max_door_members) {
                snprintf(f, sizeof(f), "doors[%" PRIu32 "]", i);
                return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, f,
                                          "The graph's doors have more than %" PRIu32
                                          " members together; this server takes at most that "
                                          "many (--graph-max-door-members).",
                                          lim->max_door_members);
            }
            if (l == 0 && cJSON_IsNumber(it)) {
                int64_t v;
                if (pf_jsonr_int(it, f, 0, INT64_C(1) << 53, &v, e)) return e->status;
                if (v >= (int64_t)d->m)
                    return pf_proto_error_set(
                        e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                        "Door edge %" PRId64 " is past the graph's %" PRIu32 " edges.", v, d->m);
                x = (uint32_t)v;
            } else {
                char id[PF_GRAPH_ID_MAX + 1];
                if (l == 0 && !cJSON_IsString(it))
                    return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, f,
                                              "Field '%s' must be an edge's index or id.", f);
                if (pf__graph_read_id(it, f, id, NULL, e)) return e->status;
                x = l == 0 ? pf_graph_doc_edge(d, id) : pf_graph_doc_node(d, id);
                if (x == PF_GRAPH_NONE)
                    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                              "The graph has no %s '%.64s'.",
                                              l == 0 ? "edge" : "node", id);
            }
            if (!idx_put(l == 0 ? eb : nb, x)) return nomem(e);
            if (!open) (l == 0 ? d->edge_off : d->node_off)[x] = 1;
            j++;
        }
    }
    if (eb->len + nb->len == before) {
        char f[48];
        snprintf(f, sizeof(f), "doors[%" PRIu32 "]", i);
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Door %" PRIu32 " has no edge and no node.", i);
    }
    return PF_OK;
}

/* 422 naming the first door whose name repeats an earlier one's. */
static pf_status check_names(const pf_graph_doc *d, door_key *keys, pf_proto_error *e) {
    uint32_t dup = PF_GRAPH_NONE, first = 0;
    for (uint32_t k = 0; k < d->ndoors; k++)
        keys[k] = (door_key){d->door_names + d->door_name_off[k], k};
    qsort(keys, d->ndoors, sizeof(*keys), key_cmp);
    for (uint32_t k = 1; k < d->ndoors; k++)
        if (strcmp(keys[k].name, keys[k - 1].name) == 0 && keys[k].k < dup) {
            dup = keys[k].k;
            first = keys[k - 1].k;
        }
    if (dup == PF_GRAPH_NONE) return PF_OK;
    {
        char f[48];
        snprintf(f, sizeof(f), "doors[%" PRIu32 "].name", dup);
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Door name '%.64s' of doors[%" PRIu32 "] repeats doors[%" PRIu32
                                  "]'s.",
                                  d->door_names + d->door_name_off[dup], dup, first);
    }
}

pf_status pf_graph_doors_from_json(const cJSON *doors, const pf_graph_limits *lim, pf_graph_doc *d,
                                   pf_proto_error *e) {
    static const char *const members[] = {"name", "edges", "nodes", "open", NULL};
    pf__gbuf names = {0};
    idx_buf eb = {0}, nb = {0};
    door_key *keys = NULL;
    const cJSON *it;
    uint64_t total = 0;
    uint32_t i = 0, nd;
    pf_status st = PF_OK;
    if (!cJSON_IsArray(doors))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, "doors",
                                  "Field 'doors' must be an array of door groups.");
    nd = (uint32_t)cJSON_GetArraySize(doors);
    if (nd > lim->max_doors)
        return pf__graph_limit(e, "doors", "doors", nd, lim->max_doors, "--graph-max-doors");
    if (nd == 0) return PF_OK;
    d->door_name_off = calloc(nd, sizeof(uint32_t));
    d->door_eoff = calloc((size_t)nd + 1, sizeof(uint32_t));
    d->door_noff = calloc((size_t)nd + 1, sizeof(uint32_t));
    keys = calloc(nd, sizeof(*keys));
    if (!d->door_name_off || !d->door_eoff || !d->door_noff || !keys) {
        st = nomem(e);
        goto out;
    }
    cJSON_ArrayForEach(it, doors) {
        char f[64], p[64];
        const cJSON *m;
        bool open = true;
        size_t len;
        snprintf(f, sizeof(f), "doors[%" PRIu32 "]", i);
        snprintf(p, sizeof(p), "doors[%" PRIu32 "].", i);
        if ((st = pf_jsonr_object(it, f, e)) || (st = pf_jsonr_check_members(it, members, p, e)))
            goto out;
        snprintf(f, sizeof(f), "doors[%" PRIu32 "].name", i);
        if (!cJSON_IsString(m = cJSON_GetObjectItemCaseSensitive(it, "name"))) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, f,
                                    "Field '%s' must be a string.", f);
            goto out;
        }
        if ((len = strlen(m->valuestring)) == 0 || len > PF_GRAPH_ID_MAX) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                    "Field '%s' must be 1 to %d bytes.", f, PF_GRAPH_ID_MAX);
            goto out;
        }
        d->door_name_off[i] = (uint32_t)names.len;
        if (!pf__gbuf_put(&names, m->valuestring, len + 1)) {
            st = nomem(e);
            goto out;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "open"))) {
            snprintf(f, sizeof(f), "doors[%" PRIu32 "].open", i);
            if ((st = pf_jsonr_bool(m, f, &open, e))) goto out;
        }
        if ((st = read_members(it, i, lim, d, &eb, &nb, &total, open, e))) goto out;
        d->door_eoff[i + 1] = (uint32_t)eb.len;
        d->door_noff[i + 1] = (uint32_t)nb.len;
        i++;
    }
    d->ndoors = nd;
    d->door_names = names.p;
    names.p = NULL;
    if ((!eb.p && !(eb.p = malloc(sizeof(uint32_t)))) ||
        (!nb.p && !(nb.p = malloc(sizeof(uint32_t))))) {
        st = nomem(e);
        goto out;
    }
    d->door_edges = eb.p;
    d->door_nodes = nb.p;
    eb.p = nb.p = NULL;
    if ((st = check_names(d, keys, e))) goto out;
    if (!(d->door_sorted = malloc((size_t)nd * sizeof(uint32_t)))) {
        st = nomem(e);
        goto out;
    }
    for (uint32_t k = 0; k < nd; k++) d->door_sorted[k] = keys[k].k;
    d->bytes += names.cap + (eb.cap + nb.cap + 4 * (size_t)nd + 2) * sizeof(uint32_t);
out:
    pf__gbuf_free(&names);
    free(eb.p);
    free(nb.p);
    free(keys);
    return st;
}

uint32_t pf_graph_doc_door(const pf_graph_doc *d, const char *name) {
    uint32_t lo = 0, hi = d->ndoors;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, k = d->door_sorted[mid];
        int c = strcmp(d->door_names + d->door_name_off[k], name);
        if (c == 0) return k;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return PF_GRAPH_NONE;
}

bool pf_graph_door_open(const pf_graph_doc *d, const pf_graph *g, uint32_t k) {
    for (uint32_t j = d->door_eoff[k]; j < d->door_eoff[k + 1]; j++) {
        uint32_t a, b;
        double c;
        bool both, on;
        pf_graph_edge(g, d->door_edges[j], &a, &b, &c, &both, &on);
        if (!on) return false;
    }
    for (uint32_t j = d->door_noff[k]; j < d->door_noff[k + 1]; j++)
        if (!pf_graph_node_enabled(g, d->door_nodes[j])) return false;
    return true;
}

void pf_graph_doors_write(pf_jsonw *w, const pf_graph_doc *d, const pf_graph *g) {
    if (!d->ndoors) return;
    pf_jsonw_key(w, "doors");
    pf_jsonw_arr_begin(w);
    for (uint32_t k = 0; k < d->ndoors; k++) {
        pf_jsonw_obj_begin(w);
        pf_jsonw_kstr(w, "name", d->door_names + d->door_name_off[k]);
        pf_jsonw_key(w, "edges");
        pf_jsonw_arr_begin(w);
        for (uint32_t j = d->door_eoff[k]; j < d->door_eoff[k + 1]; j++)
            pf_jsonw_uint(w, d->door_edges[j]);
        pf_jsonw_arr_end(w);
        pf_jsonw_key(w, "nodes");
        pf_jsonw_arr_begin(w);
        for (uint32_t j = d->door_noff[k]; j < d->door_noff[k + 1]; j++)
            pf_graph_doc_write_id(w, d, d->door_nodes[j]);
        pf_jsonw_arr_end(w);
        if (!pf_graph_door_open(d, g, k)) pf_jsonw_kbool(w, "open", false);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
}

uint64_t pf_graph_doors_size_bound(const pf_graph_doc *d) {
    /* ,"doors":[] */
    uint64_t total = 16;
    for (uint32_t k = 0; k < d->ndoors; k++) {
        /* {"name":..,"edges":[],"nodes":[],"open":false}, a string byte at
         * most 6 (\u00XX), an edge index at most 10 digits, a node id at
         * most its string's or an integer's 21 */
        total += 64 + 6 * (uint64_t)strlen(d->door_names + d->door_name_off[k]) +
                 11 * (uint64_t)(d->door_eoff[k + 1] - d->door_eoff[k]);
        for (uint32_t j = d->door_noff[k]; j < d->door_noff[k + 1]; j++) {
            uint64_t s = 6 * (uint64_t)strlen(d->ids + d->id_off[d->door_nodes[j]]) + 2;
            total += (s > 21 ? s : 21) + 1;
        }
    }
    return total;
}
