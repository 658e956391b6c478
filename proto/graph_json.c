/* graph_json.c -- waypoint graph uploads, PATCHes and path queries in JSON
 * (graph_json.h). The DIMACS reader is graph_dimacs.c; both fill a
 * pf_graph_doc through the builders here (graph_doc_internal.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_doc_internal.h"
#include "jsonr.h"

/* Builders */

void pf__gbuf_free(pf__gbuf *b) {
    free(b->p);
    memset(b, 0, sizeof(*b));
}

bool pf__gbuf_put(pf__gbuf *b, const char *s, size_t n) {
    if (n > SIZE_MAX / 2 - b->len - 1) return false;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;
        while (cap < b->len + n + 1) cap *= 2;
        if (!(p = realloc(b->p, cap))) return false;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return true;
}

pf_status pf__graph_doc_alloc(pf_graph_doc *d, uint32_t n, uint32_t m, int dim) {
    size_t nn = n ? n : 1, mm = m ? m : 1;
    memset(d, 0, sizeof(*d));
    d->n = n;
    d->m = m;
    d->dim = dim;
    d->pos = calloc(3 * nn, sizeof(double));
    d->from = calloc(mm, sizeof(uint32_t));
    d->to = calloc(mm, sizeof(uint32_t));
    d->cost = calloc(mm, sizeof(double));
    d->both = calloc(mm, 1);
    d->node_off = calloc(nn, 1);
    d->edge_off = calloc(mm, 1);
    d->id_off = calloc(nn, sizeof(uint32_t));
    d->eid_off = calloc(mm, sizeof(uint32_t));
    d->id_int = calloc(nn, 1);
    d->ntag_off = calloc(nn + 1, sizeof(uint32_t));
    d->etag_off = calloc(mm + 1, sizeof(uint32_t));
    if (!d->pos || !d->from || !d->to || !d->cost || !d->both || !d->node_off || !d->edge_off ||
        !d->id_off || !d->eid_off || !d->id_int || !d->ntag_off || !d->etag_off) {
        pf_graph_doc_free(d);
        return PF_ENOMEM;
    }
    return PF_OK;
}

void pf_graph_doc_free(pf_graph_doc *d) {
    free(d->pos);
    free(d->from);
    free(d->to);
    free(d->cost);
    free(d->both);
    free(d->node_off);
    free(d->edge_off);
    free(d->ids);
    free(d->eids);
    free(d->id_off);
    free(d->eid_off);
    free(d->id_int);
    free(d->ntags);
    free(d->etags);
    free(d->ntag_off);
    free(d->etag_off);
    free(d->hash);
    free(d->ehash);
    free(d->door_names);
    free(d->door_name_off);
    free(d->door_eoff);
    free(d->door_edges);
    free(d->door_noff);
    free(d->door_nodes);
    free(d->door_sorted);
    memset(d, 0, sizeof(*d));
}

static uint32_t fnv(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* An open addressing table over n texts (blob + off[i]; "" skipped when
 * skip_empty): *dup gets the first index whose text repeats an earlier
 * one's (and *first that one), else PF_GRAPH_NONE. */
static pf_status make_table(const char *blob, const uint32_t *off, uint32_t n, bool skip_empty,
                            uint32_t **table, uint32_t *cap, uint32_t *dup, uint32_t *first) {
    uint32_t c = 16;
    *dup = PF_GRAPH_NONE;
    while (c < 2 * (uint64_t)n && c < (UINT32_C(1) << 31)) c *= 2;
    if (!(*table = calloc(c, sizeof(uint32_t)))) return PF_ENOMEM;
    *cap = c;
    for (uint32_t i = 0; i < n; i++) {
        const char *s = blob + off[i];
        uint32_t h;
        if (skip_empty && !*s) continue;
        for (h = fnv(s) & (c - 1); (*table)[h]; h = (h + 1) & (c - 1))
            if (strcmp(blob + off[(*table)[h] - 1], s) == 0) {
                *dup = i;
                *first = (*table)[h] - 1;
                return PF_OK;
            }
        (*table)[h] = i + 1;
    }
    return PF_OK;
}

static uint32_t lookup(const uint32_t *table, uint32_t cap, const char *blob, const uint32_t *off,
                       const char *id) {
    if (!table || !*id) return PF_GRAPH_NONE;
    for (uint32_t h = fnv(id) & (cap - 1); table[h]; h = (h + 1) & (cap - 1))
        if (strcmp(blob + off[table[h] - 1], id) == 0) return table[h] - 1;
    return PF_GRAPH_NONE;
}

uint32_t pf_graph_doc_node(const pf_graph_doc *d, const char *id) {
    return lookup(d->hash, d->hcap, d->ids, d->id_off, id);
}

uint32_t pf_graph_doc_edge(const pf_graph_doc *d, const char *id) {
    return lookup(d->ehash, d->ehcap, d->eids, d->eid_off, id);
}

pf_status pf__graph_doc_index_nodes(pf_graph_doc *d, const char *field, pf_proto_error *e) {
    uint32_t dup, first;
    if (make_table(d->ids, d->id_off, d->n, false, &d->hash, &d->hcap, &dup, &first))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (dup != PF_GRAPH_NONE) {
        char f[48];
        snprintf(f, sizeof(f), "%s[%" PRIu32 "].id", field, dup);
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Node id '%.64s' of %s[%" PRIu32 "] repeats %s[%" PRIu32 "]'s.",
                                  d->ids + d->id_off[dup], field, dup, field, first);
    }
    return PF_OK;
}

pf_status pf__graph_doc_finish(pf_graph_doc *d, const pf_graph_limits *lim, const char *field,
                               pf_proto_error *e) {
    uint32_t *deg = calloc(d->n ? d->n : 1, sizeof(uint32_t)), dup, first;
    pf_status st = PF_OK;
    if (!deg) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (uint32_t i = 0; i < d->m && !st; i++) {
        uint32_t v = d->from[i];
        if (++deg[v] > lim->max_degree ||
            (d->both[i] && (v = d->to[i], ++deg[v] > lim->max_degree))) {
            char f[48];
            snprintf(f, sizeof(f), "%s[%" PRIu32 "]", field, i);
            st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, f,
                                    "Node '%.64s' has more than %" PRIu32
                                    " edges leaving it, this server's limit "
                                    "(--graph-max-degree).",
                                    d->ids + d->id_off[v], lim->max_degree);
        }
    }
    free(deg);
    if (st) return st;
    if (d->eids) {
        if (make_table(d->eids, d->eid_off, d->m, true, &d->ehash, &d->ehcap, &dup, &first))
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        if (dup != PF_GRAPH_NONE) {
            char f[48];
            snprintf(f, sizeof(f), "edges[%" PRIu32 "].id", dup);
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "Edge id '%.64s' of edges[%" PRIu32 "] repeats edges[%" PRIu32
                                      "]'s.",
                                      d->eids + d->eid_off[dup], dup, first);
        }
    }
    d->bytes += sizeof(*d) + (size_t)d->n * (3 * sizeof(double) + 2 + 2 * sizeof(uint32_t)) +
                (size_t)d->m * (2 * sizeof(uint32_t) + sizeof(double) + 2 + 2 * sizeof(uint32_t)) +
                ((size_t)d->hcap + d->ehcap) * sizeof(uint32_t);
    return PF_OK;
}

pf_status pf__graph_limit(pf_proto_error *e, const char *field, const char *what, uint64_t n,
                          uint32_t max, const char *flag) {
    return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, field,
                              "The graph has %" PRIu64 " %s; this server takes at most %" PRIu32
                              " (%s).",
                              n, what, max, flag);
}

/* pf_jsonr_check_members under "prefix." (none when prefix is ""). */
static pf_status check_members(const cJSON *obj, const char *const *allowed, const char *prefix,
                               pf_proto_error *e) {
    char p[96];
    snprintf(p, sizeof(p), "%s%s", prefix, prefix[0] ? "." : "");
    return pf_jsonr_check_members(obj, allowed, p, e);
}

/* JSON upload */

/* An id: a string of 1..64 bytes or an integer within +-2^53, as text. */
pf_status pf__graph_read_id(const cJSON *it, const char *field, char out[PF_GRAPH_ID_MAX + 1],
                            bool *is_int, pf_proto_error *e) {
    if (cJSON_IsString(it)) {
        size_t n = strlen(it->valuestring);
        if (n == 0 || n > PF_GRAPH_ID_MAX)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                      "Field '%s' must be 1 to %d bytes.", field, PF_GRAPH_ID_MAX);
        memcpy(out, it->valuestring, n + 1);
        if (is_int) *is_int = false;
        return PF_OK;
    }
    if (cJSON_IsNumber(it)) {
        int64_t v;
        if (pf_jsonr_int(it, field, -(INT64_C(1) << 53), INT64_C(1) << 53, &v, e)) return e->status;
        snprintf(out, PF_GRAPH_ID_MAX + 1, "%" PRId64, v);
        if (is_int) *is_int = true;
        return PF_OK;
    }
    return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, field,
                              "Field '%s' must be a string or an integer.", field);
}

/* tags: an array of at most 8 strings of 1..32 bytes, appended to b as
 * its JSON text. */
static pf_status read_tags(const cJSON *it, const char *field, pf__gbuf *b, pf_proto_error *e) {
    const cJSON *t;
    int n = 0;
    if (!cJSON_IsArray(it))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, field,
                                  "Field '%s' must be an array of strings.", field);
    if (!pf__gbuf_put(b, "[", 1)) goto nomem;
    cJSON_ArrayForEach(t, it) {
        size_t len;
        if (!cJSON_IsString(t) || (len = strlen(t->valuestring)) == 0 || len > PF_GRAPH_TAG_MAX ||
            ++n > PF_GRAPH_TAGS_MAX)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                      "Field '%s' holds at most %d tags, each a string of 1 to %d "
                                      "bytes.",
                                      field, PF_GRAPH_TAGS_MAX, PF_GRAPH_TAG_MAX);
        {
            char *s = cJSON_PrintUnformatted(t);
            bool ok = s && (n == 1 || pf__gbuf_put(b, ",", 1)) && pf__gbuf_put(b, s, strlen(s));
            free(s);
            if (!ok) goto nomem;
        }
    }
    if (!pf__gbuf_put(b, "]", 1)) goto nomem;
    return PF_OK;
nomem:
    return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
}

static pf_status read_position(const cJSON *it, const char *field, int *dim, double out[3],
                               pf_proto_error *e) {
    int n = cJSON_IsArray(it) ? cJSON_GetArraySize(it) : 0;
    if (n != 2 && n != 3)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, field,
                                  "Field '%s' must be [x, y] or [x, y, z].", field);
    if (*dim && n != *dim)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "Field '%s' has %d coordinates; the graph's first node has %d.",
                                  field, n, *dim);
    *dim = n;
    out[2] = 0;
    for (int k = 0; k < n; k++)
        if (pf_jsonr_number(cJSON_GetArrayItem(it, k), field, -PF_GRAPH_MAX_COORD,
                            PF_GRAPH_MAX_COORD, &out[k], e)) {
            if (e->status == PF_EPARSE) e->code = PF_ERR_INVALID_VALUE, e->status = PF_EINVAL;
            return e->status;
        }
    return PF_OK;
}

static const char *const upload_members[] = {"kind",  "nodes",     "edges", "cost_factor",
                                             "doors", "auto_link", NULL};
static const char *const node_members[] = {"id", "position", "tags", "enabled", NULL};
static const char *const edge_members[] = {"from", "to",   "cost",    "factor", "oneway",
                                           "id",   "tags", "enabled", NULL};

static pf_status nodes_from_json(const cJSON *nodes, pf_graph_doc *d, pf_proto_error *e) {
    pf__gbuf ids = {0}, tags = {0};
    const cJSON *it;
    uint32_t i = 0;
    pf_status st = PF_OK;
    cJSON_ArrayForEach(it, nodes) {
        char f[64], id[PF_GRAPH_ID_MAX + 1];
        bool is_int = false, on = true;
        const cJSON *m;
        snprintf(f, sizeof(f), "nodes[%" PRIu32 "]", i);
        if ((st = pf_jsonr_object(it, f, e)) || (st = check_members(it, node_members, f, e))) break;
        snprintf(f, sizeof(f), "nodes[%" PRIu32 "].id", i);
        if (!(m = cJSON_GetObjectItemCaseSensitive(it, "id"))) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, f, "Field '%s' is missing.",
                                    f);
            break;
        }
        if ((st = pf__graph_read_id(m, f, id, &is_int, e))) break;
        snprintf(f, sizeof(f), "nodes[%" PRIu32 "].position", i);
        if (!(m = cJSON_GetObjectItemCaseSensitive(it, "position"))) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, f, "Field '%s' is missing.",
                                    f);
            break;
        }
        if ((st = read_position(m, f, &d->dim, d->pos + 3 * (size_t)i, e))) break;
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "tags"))) {
            snprintf(f, sizeof(f), "nodes[%" PRIu32 "].tags", i);
            if ((st = read_tags(m, f, &tags, e))) break;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "enabled"))) {
            snprintf(f, sizeof(f), "nodes[%" PRIu32 "].enabled", i);
            if ((st = pf_jsonr_bool(m, f, &on, e))) break;
        }
        d->node_off[i] = !on;
        d->id_int[i] = is_int;
        d->id_off[i] = (uint32_t)ids.len;
        d->ntag_off[i + 1] = (uint32_t)tags.len;
        if (!pf__gbuf_put(&ids, id, strlen(id) + 1)) {
            st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            break;
        }
        i++;
    }
    d->ids = ids.p;
    d->ntags = tags.p;
    d->bytes += ids.cap + tags.cap;
    if (!st && !d->ids)
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (!st) st = pf__graph_doc_index_nodes(d, "nodes", e);
    return st;
}

/* An edge's endpoint: a known node id. */
static pf_status endpoint(const pf_graph_doc *d, const cJSON *it, uint32_t i, const char *which,
                          uint32_t *out, pf_proto_error *e) {
    char f[64], id[PF_GRAPH_ID_MAX + 1];
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, which);
    snprintf(f, sizeof(f), "edges[%" PRIu32 "].%s", i, which);
    if (!m)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, f, "Field '%s' is missing.",
                                  f);
    if (pf__graph_read_id(m, f, id, NULL, e)) return e->status;
    if ((*out = pf_graph_doc_node(d, id)) == PF_GRAPH_NONE)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Edge %" PRIu32 " names node '%.64s', which the graph does not "
                                  "have.",
                                  i, id);
    return PF_OK;
}

static pf_status edges_from_json(const cJSON *edges, double factor, pf_graph_doc *d,
                                 pf_proto_error *e) {
    pf__gbuf eids = {0}, tags = {0};
    const cJSON *it;
    uint32_t i = 0;
    bool any_id = false;
    pf_status st = PF_OK;
    cJSON_ArrayForEach(it, edges) {
        char f[64], id[PF_GRAPH_ID_MAX + 1] = "";
        const cJSON *m, *c, *fa;
        bool oneway = false, on = true;
        double ef = factor;
        snprintf(f, sizeof(f), "edges[%" PRIu32 "]", i);
        if ((st = pf_jsonr_object(it, f, e)) || (st = check_members(it, edge_members, f, e))) break;
        if ((st = endpoint(d, it, i, "from", &d->from[i], e)) ||
            (st = endpoint(d, it, i, "to", &d->to[i], e)))
            break;
        c = cJSON_GetObjectItemCaseSensitive(it, "cost");
        fa = cJSON_GetObjectItemCaseSensitive(it, "factor");
        if (c && fa) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                    "Edge %" PRIu32 " has both 'cost' and 'factor'; give one.", i);
            break;
        }
        if (c) {
            snprintf(f, sizeof(f), "edges[%" PRIu32 "].cost", i);
            if ((st = pf_jsonr_number(c, f, 0, 1e300, &d->cost[i], e))) break;
        } else {
            const double *p = d->pos + 3 * (size_t)d->from[i], *q = d->pos + 3 * (size_t)d->to[i];
            double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
            if (fa) {
                snprintf(f, sizeof(f), "edges[%" PRIu32 "].factor", i);
                if ((st = pf_jsonr_number(fa, f, 0, 1e12, &ef, e))) break;
            }
            d->cost[i] = sqrt(dx * dx + dy * dy + dz * dz) * ef;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "oneway"))) {
            snprintf(f, sizeof(f), "edges[%" PRIu32 "].oneway", i);
            if ((st = pf_jsonr_bool(m, f, &oneway, e))) break;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "enabled"))) {
            snprintf(f, sizeof(f), "edges[%" PRIu32 "].enabled", i);
            if ((st = pf_jsonr_bool(m, f, &on, e))) break;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "id"))) {
            snprintf(f, sizeof(f), "edges[%" PRIu32 "].id", i);
            if (!cJSON_IsString(m)) {
                st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, f,
                                        "Field '%s' must be a string.", f);
                break;
            }
            if ((st = pf__graph_read_id(m, f, id, NULL, e))) break;
            any_id = true;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "tags"))) {
            snprintf(f, sizeof(f), "edges[%" PRIu32 "].tags", i);
            if ((st = read_tags(m, f, &tags, e))) break;
        }
        d->both[i] = !oneway;
        d->edge_off[i] = !on;
        d->eid_off[i] = (uint32_t)eids.len;
        d->etag_off[i + 1] = (uint32_t)tags.len;
        if (!pf__gbuf_put(&eids, id, strlen(id) + 1)) {
            st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            break;
        }
        i++;
    }
    d->bytes += eids.cap + tags.cap;
    d->etags = tags.p;
    if (any_id)
        d->eids = eids.p;
    else
        pf__gbuf_free(&eids);
    return st;
}

/* {"kind":"graph","dimacs":{"gr":"...","co":"..."}} */
static pf_status dimacs_envelope(const cJSON *root, const pf_graph_limits *lim, pf_graph_doc *d,
                                 pf_proto_error *e) {
    static const char *const members[] = {"kind", "dimacs", NULL};
    static const char *const parts[] = {"gr", "co", NULL};
    const cJSON *dm = cJSON_GetObjectItemCaseSensitive(root, "dimacs"), *gr, *co;
    if (pf_jsonr_check_members(root, members, "", e) || pf_jsonr_object(dm, "dimacs", e) ||
        check_members(dm, parts, "dimacs", e))
        return e->status;
    gr = cJSON_GetObjectItemCaseSensitive(dm, "gr");
    co = cJSON_GetObjectItemCaseSensitive(dm, "co");
    if (!cJSON_IsString(gr) || !cJSON_IsString(co))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP,
                                  !cJSON_IsString(gr) ? "dimacs.gr" : "dimacs.co",
                                  "Fields 'dimacs.gr' (the arcs) and 'dimacs.co' (the coordinates) "
                                  "are the two files' text.");
    return pf_graph_doc_from_dimacs(gr->valuestring, strlen(gr->valuestring), co->valuestring,
                                    strlen(co->valuestring), lim, d, e);
}

pf_status pf_graph_doc_from_json(const cJSON *root, const pf_graph_limits *lim, pf_graph_doc *d,
                                 pf_proto_error *e) {
    const cJSON *nodes, *edges, *cf, *doors;
    double factor = 1;
    int nn, ne;
    pf_status st;
    memset(d, 0, sizeof(*d));
    if ((st = pf_jsonr_object(root, "", e))) return st;
    if (cJSON_GetObjectItemCaseSensitive(root, "dimacs")) return dimacs_envelope(root, lim, d, e);
    if ((st = pf_jsonr_check_members(root, upload_members, "", e))) return st;
    nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    edges = cJSON_GetObjectItemCaseSensitive(root, "edges");
    if (!cJSON_IsArray(nodes))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, "nodes",
                                  "Field 'nodes' must be an array of nodes.");
    if (edges && !cJSON_IsArray(edges))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, "edges",
                                  "Field 'edges' must be an array of edges.");
    nn = cJSON_GetArraySize(nodes);
    ne = edges ? cJSON_GetArraySize(edges) : 0;
    if (nn == 0)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "nodes",
                                  "A graph has at least one node.");
    if ((uint64_t)nn > lim->max_nodes)
        return pf__graph_limit(e, "nodes", "nodes", (uint64_t)nn, lim->max_nodes,
                               "--graph-max-nodes");
    if ((uint64_t)ne > lim->max_edges)
        return pf__graph_limit(e, "edges", "edges", (uint64_t)ne, lim->max_edges,
                               "--graph-max-edges");
    if ((cf = cJSON_GetObjectItemCaseSensitive(root, "cost_factor")) &&
        (st = pf_jsonr_number(cf, "cost_factor", 0, 1e12, &factor, e)))
        return st;
    if (pf__graph_doc_alloc(d, (uint32_t)nn, (uint32_t)ne, 0))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (!(st = nodes_from_json(nodes, d, e)) && !(st = edges_from_json(edges, factor, d, e)) &&
        !(st = pf__graph_doc_finish(d, lim, "edges", e)) &&
        (doors = cJSON_GetObjectItemCaseSensitive(root, "doors")))
        st = pf_graph_doors_from_json(doors, lim, d, e);
    if (st) pf_graph_doc_free(d);
    return st;
}

void pf_graph_doc_write_id(pf_jsonw *w, const pf_graph_doc *d, uint32_t i) {
    const char *s = d->ids + d->id_off[i];
    if (d->id_int[i])
        pf_jsonw_int(w, strtoll(s, NULL, 10));
    else
        pf_jsonw_str(w, s);
}

static void write_pos(pf_jsonw *w, const pf_graph *g, int dim, uint32_t i) {
    const double *p = pf_graph_node_pos(g, i);
    pf_jsonw_arr_begin(w);
    for (int k = 0; k < dim; k++) pf_jsonw_double(w, p[k]);
    pf_jsonw_arr_end(w);
}

void pf_graph_doc_compact(pf_graph_doc *d) {
    const size_t nn = d->n, mm = d->m;
    free(d->pos);
    free(d->from);
    free(d->to);
    free(d->cost);
    free(d->both);
    free(d->node_off);
    free(d->edge_off);
    d->pos = d->cost = NULL;
    d->from = d->to = NULL;
    d->both = d->node_off = d->edge_off = NULL;
    d->bytes -= nn * (3 * sizeof(double) + 1) + mm * (2 * sizeof(uint32_t) + sizeof(double) + 2);
    if (!d->eids) {
        free(d->eid_off);
        d->eid_off = NULL;
        d->bytes -= mm * sizeof(uint32_t);
    }
}

void pf_graph_doc_write(pf_jsonw *w, const pf_graph_doc *d, const pf_graph *g) {
    pf_graph_info gi;
    pf_graph_get_info(g, &gi);
    pf_jsonw_kstr(w, "kind", "graph");
    pf_jsonw_key(w, "nodes");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < d->n; i++) {
        pf_jsonw_obj_begin(w);
        pf_jsonw_key(w, "id");
        pf_graph_doc_write_id(w, d, i);
        pf_jsonw_key(w, "position");
        write_pos(w, g, gi.dim, i);
        if (d->ntag_off[i + 1] > d->ntag_off[i]) {
            pf_jsonw_key(w, "tags");
            pf_jsonw_raw(w, d->ntags + d->ntag_off[i], d->ntag_off[i + 1] - d->ntag_off[i]);
        }
        if (!pf_graph_node_enabled(g, i)) pf_jsonw_kbool(w, "enabled", false);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
    pf_jsonw_key(w, "edges");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < d->m; i++) {
        uint32_t a, b;
        double c;
        bool both, on;
        pf_graph_edge(g, i, &a, &b, &c, &both, &on);
        pf_jsonw_obj_begin(w);
        pf_jsonw_key(w, "from");
        pf_graph_doc_write_id(w, d, a);
        pf_jsonw_key(w, "to");
        pf_graph_doc_write_id(w, d, b);
        pf_jsonw_kdouble(w, "cost", c);
        if (!both) pf_jsonw_kbool(w, "oneway", true);
        if (d->eids && d->eids[d->eid_off[i]]) pf_jsonw_kstr(w, "id", d->eids + d->eid_off[i]);
        if (d->etag_off[i + 1] > d->etag_off[i]) {
            pf_jsonw_key(w, "tags");
            pf_jsonw_raw(w, d->etags + d->etag_off[i], d->etag_off[i + 1] - d->etag_off[i]);
        }
        if (!on) pf_jsonw_kbool(w, "enabled", false);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
    pf_graph_doors_write(w, d, g);
}

/* Path queries */

static const char *const query_members[] = {"start",        "goal",         "goals", "algorithm",
                                            "max_expanded", "partial",      "cache", "deadline_ms",
                                            "snap",         "exclude_tags", NULL};

static pf_status read_place(const cJSON *it, const char *field, pf_graph_place *p,
                            pf_proto_error *e);

/* One more tag to keep off (1..PF_GRAPH_TAG_MAX bytes, at most
 * PF_GRAPH_EXCLUDE_MAX). */
static pf_status add_exclude(pf_graph_exclude *x, const char *tag, const char *field,
                             pf_proto_error *e) {
    size_t len = strlen(tag);
    if (len == 0 || len > PF_GRAPH_TAG_MAX)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "A tag is 1 to %d bytes.", PF_GRAPH_TAG_MAX);
    if (x->n == PF_GRAPH_EXCLUDE_MAX)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "At most %d tags to exclude.", PF_GRAPH_EXCLUDE_MAX);
    memcpy(x->tags[x->n++], tag, len + 1);
    return PF_OK;
}

pf_status pf_graph_exclude_read(const cJSON *m, const char *field, pf_graph_exclude *x,
                                pf_proto_error *e) {
    const cJSON *it;
    if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) > PF_GRAPH_EXCLUDE_MAX)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, field,
                                  "Field '%s' is an array of at most %d tags.", field,
                                  PF_GRAPH_EXCLUDE_MAX);
    cJSON_ArrayForEach(it, m) {
        const char *v;
        if (pf_jsonr_string(it, field, &v, e)) return e->status;
        if (add_exclude(x, v, field, e)) return e->status;
    }
    return PF_OK;
}

/* "node" (a point goes to the nearest node) or "edge" (to the nearest
 * point on an edge). */
static pf_status read_snap(const char *v, const char *field, bool *edge, pf_proto_error *e) {
    if (strcmp(v, "node") == 0 || strcmp(v, "edge") == 0) {
        *edge = v[0] == 'e';
        return PF_OK;
    }
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                              "Unknown snap '%.40s'; use node or edge.", v);
}

static pf_status read_algorithm(const char *s, const char *field, pf_graph_algorithm *a,
                                pf_proto_error *e) {
    if (strcmp(s, "auto") == 0)
        *a = PF_GRAPH_AUTO;
    else if (strcmp(s, "astar") == 0)
        *a = PF_GRAPH_ASTAR;
    else if (strcmp(s, "dijkstra") == 0)
        *a = PF_GRAPH_DIJKSTRA;
    else if (strcmp(s, "alt") == 0)
        *a = PF_GRAPH_ALT;
    else if (strcmp(s, "ch") == 0)
        *a = PF_GRAPH_CH;
    else
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                                  "Unknown algorithm '%.40s'; use auto, ch, alt, astar or "
                                  "dijkstra.",
                                  s);
    return PF_OK;
}

pf_status pf_graph_place_read(const cJSON *it, const char *field, pf_graph_place *p,
                              pf_proto_error *e) {
    return read_place(it, field, p, e);
}

/* A place: an id, or {"point":[x,y(,z)]}. */
static pf_status read_place(const cJSON *it, const char *field, pf_graph_place *p,
                            pf_proto_error *e) {
    memset(p, 0, sizeof(*p));
    if (cJSON_IsObject(it)) {
        static const char *const members[] = {"point", NULL};
        char f[96];
        const cJSON *pt = cJSON_GetObjectItemCaseSensitive(it, "point");
        if (check_members(it, members, field, e)) return e->status;
        snprintf(f, sizeof(f), "%s.point", field);
        if (!pt)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, f,
                                      "Field '%s' is missing.", f);
        p->is_point = true;
        if (read_position(pt, f, &p->dims, p->p, e)) {
            if (e->code == PF_ERR_MALFORMED_MAP) e->code = PF_ERR_MALFORMED_REQUEST;
            return e->status;
        }
        return PF_OK;
    }
    if (pf__graph_read_id(it, field, p->id, NULL, e)) {
        if (e->code == PF_ERR_MALFORMED_MAP) e->code = PF_ERR_MALFORMED_REQUEST;
        return e->status;
    }
    return PF_OK;
}

static void request_defaults(pf_graph_path_request *q) {
    memset(q, 0, sizeof(*q));
    q->algorithm = PF_GRAPH_AUTO;
    q->use_cache = true;
}

static pf_status request_options(const cJSON *o, const char *prefix, bool batch_item,
                                 pf_graph_path_request *q, pf_proto_error *e);

static pf_status request_from_object(const cJSON *o, const char *prefix, bool batch_item,
                                     size_t max_goals, pf_graph_path_request *q,
                                     pf_proto_error *e) {
    static const char *const names[] = {"start", "goal"};
    const cJSON *m;
    char f[64];
    pf_status st;
    request_defaults(q);
    if (!cJSON_IsObject(o))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, prefix[0] ? prefix : NULL,
                                  "A query is a JSON object.");
    if (check_members(o, query_members, prefix, e)) return e->status;
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "goals"))) {
        const cJSON *it;
        size_t n = cJSON_IsArray(m) ? (size_t)cJSON_GetArraySize(m) : 0, i = 0;
        snprintf(f, sizeof(f), "%s%sgoals", prefix, prefix[0] ? "." : "");
        if (cJSON_GetObjectItemCaseSensitive(o, "goal"))
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_REQUEST, f,
                                      "Give goal or goals, not both.");
        if (n == 0)
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, f,
                                      "Field '%s' must be a non-empty array of node ids or "
                                      "{\"point\":[x,y(,z)]}.",
                                      f);
        if (n > max_goals)
            return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, f,
                                      "%zu goals; this server takes at most %zu (--max-goals).", n,
                                      max_goals);
        if (!(q->goals = calloc(n, sizeof(*q->goals))))
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        cJSON_ArrayForEach(it, m) {
            char g[96];
            snprintf(g, sizeof(g), "%s[%zu]", f, i);
            if (read_place(it, g, &q->goals[i], e)) {
                pf_graph_path_request_clear(q);
                return e->status;
            }
            q->ngoals = ++i;
        }
    }
    for (int k = 0; k < 2; k++) {
        snprintf(f, sizeof(f), "%s%s%s", prefix, prefix[0] ? "." : "", names[k]);
        if (k == 1 && q->goals) break;
        if (!(m = cJSON_GetObjectItemCaseSensitive(o, names[k]))) {
            pf_graph_path_request_clear(q);
            return pf_proto_error_set(
                e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, f,
                k ? "Field '%s' (or goals) is missing." : "Field '%s' is missing.", f);
        }
        if (read_place(m, f, k ? &q->goal : &q->start, e)) {
            pf_graph_path_request_clear(q);
            return e->status;
        }
    }
    st = request_options(o, prefix, batch_item, q, e);
    if (st) pf_graph_path_request_clear(q);
    return st;
}

void pf_graph_path_request_clear(pf_graph_path_request *q) {
    free(q->goals);
    q->goals = NULL;
    q->ngoals = 0;
}

/* The members but the places. */
static pf_status request_options(const cJSON *o, const char *prefix, bool batch_item,
                                 pf_graph_path_request *q, pf_proto_error *e) {
    const cJSON *m;
    char f[64];
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "algorithm"))) {
        const char *s;
        snprintf(f, sizeof(f), "%s%salgorithm", prefix, prefix[0] ? "." : "");
        if (pf_jsonr_string(m, f, &s, e) || read_algorithm(s, f, &q->algorithm, e))
            return e->status;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "max_expanded"))) {
        int64_t v;
        snprintf(f, sizeof(f), "%s%smax_expanded", prefix, prefix[0] ? "." : "");
        if (pf_jsonr_int(m, f, 1, INT64_C(1) << 40, &v, e)) return e->status;
        q->max_expanded = (uint64_t)v;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "partial"))) {
        snprintf(f, sizeof(f), "%s%spartial", prefix, prefix[0] ? "." : "");
        if (pf_jsonr_bool(m, f, &q->partial, e)) return e->status;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "exclude_tags"))) {
        snprintf(f, sizeof(f), "%s%sexclude_tags", prefix, prefix[0] ? "." : "");
        if (pf_graph_exclude_read(m, f, &q->exclude, e)) return e->status;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "snap"))) {
        const char *v;
        snprintf(f, sizeof(f), "%s%ssnap", prefix, prefix[0] ? "." : "");
        if (pf_jsonr_string(m, f, &v, e) || read_snap(v, f, &q->snap_edge, e)) return e->status;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "cache"))) {
        snprintf(f, sizeof(f), "%s%scache", prefix, prefix[0] ? "." : "");
        if (pf_jsonr_bool(m, f, &q->use_cache, e)) return e->status;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "deadline_ms"))) {
        snprintf(f, sizeof(f), "%s%sdeadline_ms", prefix, prefix[0] ? "." : "");
        if (batch_item)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "A batch's queries share the batch's deadline_ms.");
        if (pf_jsonr_int(m, f, 1, 3600000, &q->deadline_ms, e)) return e->status;
    }
    return PF_OK;
}

pf_status pf_graph_path_request_parse(const char *body, size_t len, size_t max_goals,
                                      pf_graph_path_request *q, pf_proto_error *e) {
    cJSON *root = NULL;
    pf_status st;
    request_defaults(q);
    if ((st = pf_jsonr_parse(body, len, &root, e))) return st;
    st = request_from_object(root, "", false, max_goals, q, e);
    cJSON_Delete(root);
    return st;
}

/* "x,y" or "x,y,z" within +-1e9. */
static pf_status point_from_text(const char *v, const char *field, pf_graph_place *p,
                                 pf_proto_error *e) {
    const char *s = v;
    memset(p, 0, sizeof(*p));
    p->is_point = true;
    for (int k = 0; k < 3; k++) {
        char *end;
        double x = strtod(s, &end);
        if (end == s || !isfinite(x) || fabs(x) > PF_GRAPH_MAX_COORD) break;
        p->p[k] = x;
        p->dims = k + 1;
        if (*end == '\0') {
            if (p->dims >= 2) return PF_OK;
            break;
        }
        if (*end != ',') break;
        s = end + 1;
    }
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, field,
                              "Parameter '%s' must be x,y or x,y,z (finite numbers within +-1e9).",
                              field);
}

pf_status pf_graph_path_request_from_query(const pf_kv *kv, size_t nkv, size_t max_goals,
                                           pf_graph_path_request *q, pf_proto_error *e) {
    bool have[2] = {false, false};
    request_defaults(q);
    for (size_t i = 0; i < nkv; i++) {
        const char *k = kv[i].key, *v = kv[i].value ? kv[i].value : "";
        for (size_t j = 0; j < i; j++)
            if (strcmp(kv[j].key, k) == 0)
                return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                          "Parameter '%.40s' is given twice.", k);
        if (k[0] == 'g' && q->goals && strcmp(k, "goals") != 0)
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_REQUEST, k,
                                      "Give goal or goals, not both.");
        if (strcmp(k, "start") == 0 || strcmp(k, "goal") == 0) {
            pf_graph_place *p = k[0] == 's' ? &q->start : &q->goal;
            size_t n = strlen(v);
            if (n == 0 || n > PF_GRAPH_ID_MAX)
                return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, k,
                                          "Parameter '%s' is a node id of 1 to %d bytes.", k,
                                          PF_GRAPH_ID_MAX);
            memset(p, 0, sizeof(*p));
            memcpy(p->id, v, n + 1);
            have[k[0] == 'g'] = true;
        } else if (strcmp(k, "goals") == 0) {
            /* id;id;...: node ids only (points go in a POST body). */
            size_t n = 1;
            const char *c = v;
            if (have[1] || q->goals)
                return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_REQUEST, k,
                                          "Give goal or goals, not both.");
            for (const char *x = v; *x; x++) n += *x == ';';
            if (n > max_goals)
                return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, k,
                                          "%zu goals; this server takes at most %zu "
                                          "(--max-goals).",
                                          n, max_goals);
            if (!(q->goals = calloc(n, sizeof(*q->goals))))
                return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            for (size_t g = 0; g < n; g++) {
                const char *end = strchr(c, ';');
                size_t len = end ? (size_t)(end - c) : strlen(c);
                if (len == 0 || len > PF_GRAPH_ID_MAX) {
                    pf_graph_path_request_clear(q);
                    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, k,
                                              "Parameter 'goals' is node ids of 1 to %d bytes "
                                              "joined by ';'.",
                                              PF_GRAPH_ID_MAX);
                }
                memcpy(q->goals[g].id, c, len);
                c += len + 1;
            }
            q->ngoals = n;
            have[1] = true;
        } else if (strcmp(k, "start_point") == 0 || strcmp(k, "goal_point") == 0) {
            if (point_from_text(v, k, k[0] == 's' ? &q->start : &q->goal, e)) return e->status;
            have[k[0] == 'g'] = true;
        } else if (strcmp(k, "algorithm") == 0) {
            if (read_algorithm(v, k, &q->algorithm, e)) return e->status;
        } else if (strcmp(k, "max_expanded") == 0 || strcmp(k, "deadline_ms") == 0) {
            char *end;
            long long n = strtoll(v, &end, 10);
            long long max = k[0] == 'm' ? (1LL << 40) : 3600000;
            if (!*v || *end || n < 1 || n > max)
                return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, k,
                                          "Parameter '%s' is an integer from 1 to %lld.", k, max);
            if (k[0] == 'm')
                q->max_expanded = (uint64_t)n;
            else
                q->deadline_ms = n;
        } else if (strcmp(k, "exclude_tags") == 0) {
            const char *c = v;
            for (;;) {
                const char *end = strchr(c, ';');
                char tag[PF_GRAPH_TAG_MAX + 2];
                size_t len = end ? (size_t)(end - c) : strlen(c);
                if (len > PF_GRAPH_TAG_MAX) len = PF_GRAPH_TAG_MAX + 1; /* refused below */
                memcpy(tag, c, len);
                tag[len] = '\0';
                if (add_exclude(&q->exclude, tag, k, e)) return e->status;
                if (!end) break;
                c = end + 1;
            }
        } else if (strcmp(k, "snap") == 0) {
            if (read_snap(v, k, &q->snap_edge, e)) return e->status;
        } else if (strcmp(k, "partial") == 0 || strcmp(k, "cache") == 0) {
            bool *flag = k[0] == 'p' ? &q->partial : &q->use_cache;
            if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
                *flag = true;
            else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
                *flag = false;
            else
                return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, k,
                                          "Parameter '%s' is true or false.", k);
        } else {
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k,
                                      "Unknown parameter '%.40s'.", k);
        }
    }
    for (int k = 0; k < 2; k++)
        if (!have[k])
            return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, k ? "goal" : "start",
                                      "Parameter '%s' (a node id) or '%s_point' is missing.",
                                      k ? "goal" : "start", k ? "goal" : "start");
    return PF_OK;
}

pf_status pf_graph_path_batch_parse(const char *body, size_t len, size_t max, size_t max_goals,
                                    pf_graph_path_request **qs, size_t *n, int64_t *deadline_ms,
                                    pf_proto_error *e) {
    static const char *const members[] = {"queries", "deadline_ms", NULL};
    cJSON *root = NULL;
    const cJSON *arr, *it, *dl;
    size_t i = 0, count;
    pf_status st;
    *qs = NULL;
    *n = 0;
    *deadline_ms = 0;
    if ((st = pf_jsonr_parse(body, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, "", e)) || (st = pf_jsonr_check_members(root, members, "", e)))
        goto out;
    arr = cJSON_GetObjectItemCaseSensitive(root, "queries");
    if (!cJSON_IsArray(arr) || (count = (size_t)cJSON_GetArraySize(arr)) == 0) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, "queries",
                                "Field 'queries' must be a non-empty array of queries.");
        goto out;
    }
    if (count > max) {
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "queries",
                                "The batch has %zu queries; this server takes at most %zu "
                                "(--max-batch).",
                                count, max);
        goto out;
    }
    if ((dl = cJSON_GetObjectItemCaseSensitive(root, "deadline_ms")) &&
        (st = pf_jsonr_int(dl, "deadline_ms", 1, 3600000, deadline_ms, e)))
        goto out;
    if (!(*qs = calloc(count, sizeof(**qs)))) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out;
    }
    cJSON_ArrayForEach(it, arr) {
        char f[32];
        snprintf(f, sizeof(f), "queries[%zu]", i);
        if ((st = request_from_object(it, f, true, max_goals, &(*qs)[i], e))) break;
        i++;
    }
    if (st) {
        while (i-- > 0) pf_graph_path_request_clear(&(*qs)[i]);
        free(*qs);
        *qs = NULL;
    } else {
        *n = count;
    }
out:
    cJSON_Delete(root);
    return st;
}

/* PATCH */

pf_status pf_graph_patch_parse(const char *body, size_t len, size_t max, pf_graph_patch *p,
                               pf_proto_error *e) {
    static const char *const members[] = {"doors", "nodes", "edges", NULL};
    static const char *const nmembers[] = {"id", "enabled", NULL};
    static const char *const emembers[] = {"index", "id", "enabled", "cost", NULL};
    cJSON *root = NULL;
    const cJSON *nodes, *edges, *doors, *it;
    size_t nn, ne, nd, i;
    pf_status st;
    memset(p, 0, sizeof(*p));
    if ((st = pf_jsonr_parse(body, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, "", e)) || (st = pf_jsonr_check_members(root, members, "", e)))
        goto out;
    nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    edges = cJSON_GetObjectItemCaseSensitive(root, "edges");
    doors = cJSON_GetObjectItemCaseSensitive(root, "doors");
    if ((nodes && !cJSON_IsArray(nodes)) || (edges && !cJSON_IsArray(edges)) ||
        (doors && !cJSON_IsArray(doors))) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST,
                                nodes && !cJSON_IsArray(nodes)   ? "nodes"
                                : edges && !cJSON_IsArray(edges) ? "edges"
                                                                 : "doors",
                                "Fields 'doors', 'nodes' and 'edges' are arrays of changes.");
        goto out;
    }
    nn = nodes ? (size_t)cJSON_GetArraySize(nodes) : 0;
    ne = edges ? (size_t)cJSON_GetArraySize(edges) : 0;
    nd = doors ? (size_t)cJSON_GetArraySize(doors) : 0;
    if (nn + ne + nd == 0) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, NULL,
                                "A graph PATCH changes at least one door, node or edge.");
        goto out;
    }
    if (max && nn + ne + nd > max) {
        st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_TOO_MANY_CHANGES, NULL,
                                "The PATCH has %zu changes; this server applies at most %zu "
                                "(--max-patch-changes).",
                                nn + ne + nd, max);
        goto out;
    }
    p->nodes = calloc(nn ? nn : 1, sizeof(*p->nodes));
    p->edges = calloc(ne ? ne : 1, sizeof(*p->edges));
    p->doors = calloc(nd ? nd : 1, sizeof(*p->doors));
    if (!p->nodes || !p->edges || !p->doors) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out;
    }
    i = 0;
    cJSON_ArrayForEach(it, doors) {
        static const char *const dmembers[] = {"name", "open", NULL};
        char f[48];
        const cJSON *m;
        size_t nlen;
        snprintf(f, sizeof(f), "doors[%zu]", i);
        if ((st = pf_jsonr_object(it, f, e)) || (st = check_members(it, dmembers, f, e))) goto out;
        snprintf(f, sizeof(f), "doors[%zu].name", i);
        if (!cJSON_IsString(m = cJSON_GetObjectItemCaseSensitive(it, "name")) ||
            !cJSON_GetObjectItemCaseSensitive(it, "open")) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, f,
                                    "A door change has 'name' (a string) and 'open'.");
            goto out;
        }
        if ((nlen = strlen(m->valuestring)) == 0 || nlen > PF_GRAPH_ID_MAX) {
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                    "Field '%s' must be 1 to %d bytes.", f, PF_GRAPH_ID_MAX);
            goto out;
        }
        memcpy(p->doors[i].name, m->valuestring, nlen + 1);
        snprintf(f, sizeof(f), "doors[%zu].open", i);
        if ((st = pf_jsonr_bool(cJSON_GetObjectItemCaseSensitive(it, "open"), f, &p->doors[i].open,
                                e)))
            goto out;
        i++;
    }
    p->ndoors = i;
    i = 0;
    cJSON_ArrayForEach(it, nodes) {
        char f[48];
        const cJSON *m;
        snprintf(f, sizeof(f), "nodes[%zu]", i);
        if ((st = pf_jsonr_object(it, f, e)) || (st = check_members(it, nmembers, f, e))) goto out;
        snprintf(f, sizeof(f), "nodes[%zu].id", i);
        if (!(m = cJSON_GetObjectItemCaseSensitive(it, "id")) ||
            !cJSON_GetObjectItemCaseSensitive(it, "enabled")) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, f,
                                    "A node change has 'id' and 'enabled'.");
            goto out;
        }
        if ((st = pf__graph_read_id(m, f, p->nodes[i].id, NULL, e))) goto out;
        snprintf(f, sizeof(f), "nodes[%zu].enabled", i);
        if ((st = pf_jsonr_bool(cJSON_GetObjectItemCaseSensitive(it, "enabled"), f,
                                &p->nodes[i].enabled, e)))
            goto out;
        i++;
    }
    p->nnodes = i;
    i = 0;
    cJSON_ArrayForEach(it, edges) {
        char f[48];
        const cJSON *m;
        pf_graph_patch_edge *pe = &p->edges[i];
        snprintf(f, sizeof(f), "edges[%zu]", i);
        if ((st = pf_jsonr_object(it, f, e)) || (st = check_members(it, emembers, f, e))) goto out;
        pe->index = -1;
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "index"))) {
            snprintf(f, sizeof(f), "edges[%zu].index", i);
            if ((st = pf_jsonr_int(m, f, 0, UINT32_MAX - 1, &pe->index, e))) goto out;
        } else if ((m = cJSON_GetObjectItemCaseSensitive(it, "id"))) {
            snprintf(f, sizeof(f), "edges[%zu].id", i);
            if ((st = pf__graph_read_id(m, f, pe->id, NULL, e))) goto out;
        }
        if (!m || (cJSON_GetObjectItemCaseSensitive(it, "index") &&
                   cJSON_GetObjectItemCaseSensitive(it, "id"))) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, f,
                                    "An edge change names its edge by 'index' or by 'id'.");
            goto out;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "enabled"))) {
            snprintf(f, sizeof(f), "edges[%zu].enabled", i);
            if ((st = pf_jsonr_bool(m, f, &pe->enabled, e))) goto out;
            pe->has_enabled = true;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(it, "cost"))) {
            snprintf(f, sizeof(f), "edges[%zu].cost", i);
            if ((st = pf_jsonr_number(m, f, 0, 1e300, &pe->cost, e))) goto out;
            pe->has_cost = true;
        }
        if (!pe->has_enabled && !pe->has_cost) {
            snprintf(f, sizeof(f), "edges[%zu]", i);
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_REQUEST, f,
                                    "An edge change sets 'enabled', 'cost' or both.");
            goto out;
        }
        i++;
    }
    p->nedges = i;
out:
    cJSON_Delete(root);
    if (st) pf_graph_patch_free(p);
    return st;
}

void pf_graph_patch_free(pf_graph_patch *p) {
    free(p->nodes);
    free(p->edges);
    free(p->doors);
    memset(p, 0, sizeof(*p));
}

pf_status pf_graph_patch_resolve(const pf_graph_patch *p, const pf_graph_doc *d,
                                 pf_graph_change *ch, pf_proto_error *e) {
    size_t de = 0, dn = 0; /* the doors' members */
    pf_graph_cost_change *costs = NULL;
    pf_graph_toggle *edges = NULL, *nodes = NULL;
    pf_status st = PF_OK;
    memset(ch, 0, sizeof(*ch));
    for (size_t i = 0; i < p->ndoors; i++) {
        uint32_t k = pf_graph_doc_door(d, p->doors[i].name);
        if (k == PF_GRAPH_NONE) {
            char f[48];
            snprintf(f, sizeof(f), "doors[%zu].name", i);
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "The graph has no door '%.64s'.", p->doors[i].name);
        }
        de += d->door_eoff[k + 1] - d->door_eoff[k];
        dn += d->door_noff[k + 1] - d->door_noff[k];
    }
    costs = calloc(p->nedges + 1, sizeof(*costs));
    edges = calloc(p->nedges + de + 1, sizeof(*edges));
    nodes = calloc(p->nnodes + dn + 1, sizeof(*nodes));
    if (!costs || !edges || !nodes) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out;
    }
    for (size_t i = 0; i < p->ndoors; i++) {
        uint32_t k = pf_graph_doc_door(d, p->doors[i].name);
        for (uint32_t j = d->door_eoff[k]; j < d->door_eoff[k + 1]; j++)
            edges[ch->nedges++] = (pf_graph_toggle){d->door_edges[j], p->doors[i].open};
        for (uint32_t j = d->door_noff[k]; j < d->door_noff[k + 1]; j++)
            nodes[ch->nnodes++] = (pf_graph_toggle){d->door_nodes[j], p->doors[i].open};
    }
    for (size_t i = 0; i < p->nnodes; i++) {
        uint32_t v = pf_graph_doc_node(d, p->nodes[i].id);
        if (v == PF_GRAPH_NONE) {
            char f[48];
            snprintf(f, sizeof(f), "nodes[%zu].id", i);
            st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                    "The graph has no node '%.64s'.", p->nodes[i].id);
            goto out;
        }
        nodes[ch->nnodes++] = (pf_graph_toggle){v, p->nodes[i].enabled};
    }
    for (size_t i = 0; i < p->nedges; i++) {
        const pf_graph_patch_edge *pe = &p->edges[i];
        uint32_t x = pe->index >= 0
                         ? (pe->index < (int64_t)d->m ? (uint32_t)pe->index : PF_GRAPH_NONE)
                         : pf_graph_doc_edge(d, pe->id);
        if (x == PF_GRAPH_NONE) {
            char f[48];
            snprintf(f, sizeof(f), "edges[%zu].%s", i, pe->index >= 0 ? "index" : "id");
            st = pe->index >= 0 ? pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                                     "The graph has %" PRIu32
                                                     " edges; index %" PRId64 " is past them.",
                                                     d->m, pe->index)
                                : pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                                     "The graph has no edge '%.64s'.", pe->id);
            goto out;
        }
        if (pe->has_cost) costs[ch->ncosts++] = (pf_graph_cost_change){x, pe->cost};
        if (pe->has_enabled) edges[ch->nedges++] = (pf_graph_toggle){x, pe->enabled};
    }
out:
    if (st) {
        free(costs);
        free(edges);
        free(nodes);
        memset(ch, 0, sizeof(*ch));
        return st;
    }
    ch->costs = costs;
    ch->edges = edges;
    ch->nodes = nodes;
    return PF_OK;
}
