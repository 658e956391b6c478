/* graph_link_json.c -- a graph upload's auto_link object and the edges it
 * makes appended to the upload's document (graph_json.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_doc_internal.h"
#include "jsonr.h"

static const char *const link_members[] = {"max_distance",       "map", "agent_type", "cost_factor",
                                           "max_links_per_node", "tag", NULL};

/* A string member of 1..max bytes into out (absent: false in *given). */
static pf_status read_text(const cJSON *o, const char *name, size_t max, char *out, bool *given,
                           pf_proto_error *e) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, name);
    char f[48];
    const char *s;
    size_t n;
    *given = m != NULL;
    if (!m) return PF_OK;
    snprintf(f, sizeof(f), "auto_link.%s", name);
    if (pf_jsonr_string(m, f, &s, e)) return e->status;
    if ((n = strlen(s)) == 0 || n > max)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Field '%s' is a string of 1 to %zu bytes.", f, max);
    memcpy(out, s, n + 1);
    return PF_OK;
}

pf_status pf_graph_auto_link_from_json(const cJSON *root, pf_graph_auto_link *al,
                                       pf_proto_error *e) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "auto_link"), *m;
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(root, "cost_factor");
    bool given;
    memset(al, 0, sizeof(*al));
    al->cost_factor = 1;
    snprintf(al->tag, sizeof(al->tag), "auto");
    if (!o) return PF_OK;
    if (pf_jsonr_object(o, "auto_link", e) ||
        pf_jsonr_check_members(o, link_members, "auto_link.", e))
        return e->status;
    if (!(m = cJSON_GetObjectItemCaseSensitive(o, "max_distance")))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, "auto_link.max_distance",
                                  "Field 'auto_link.max_distance' is missing.");
    if (pf_jsonr_number(m, "auto_link.max_distance", 0, 2 * PF_GRAPH_MAX_COORD, &al->max_distance,
                        e))
        return e->status;
    if (!(al->max_distance > 0))
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, "auto_link.max_distance",
                                  "Field 'auto_link.max_distance' must be more than 0.");
    if (!cJSON_GetObjectItemCaseSensitive(o, "map"))
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_MALFORMED_MAP, "auto_link.map",
                                  "Field 'auto_link.map' is missing: the id of a grid or navmesh "
                                  "map whose line of sight keeps the links.");
    if (read_text(o, "map", PF_GRAPH_ID_MAX, al->map, &given, e) ||
        read_text(o, "agent_type", PF_GRAPH_ID_MAX, al->agent_type_buf, &given, e))
        return e->status;
    al->agent_type = given ? al->agent_type_buf : NULL;
    if (read_text(o, "tag", PF_GRAPH_TAG_MAX, al->tag, &given, e)) return e->status;
    /* The upload's cost_factor (checked by the upload) is the default. */
    if (cf && cJSON_IsNumber(cf)) al->cost_factor = cf->valuedouble;
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "cost_factor")) &&
        pf_jsonr_number(m, "auto_link.cost_factor", 0, 1e12, &al->cost_factor, e))
        return e->status;
    if ((m = cJSON_GetObjectItemCaseSensitive(o, "max_links_per_node"))) {
        int64_t k;
        if (pf_jsonr_int(m, "auto_link.max_links_per_node", 1, 1 << 24, &k, e)) return e->status;
        al->max_links_per_node = (uint32_t)k;
    }
    al->present = true;
    return PF_OK;
}

pf_status pf_graph_doc_append_edges(pf_graph_doc *d, const uint32_t *pairs, const double *cost,
                                    uint32_t k, const char *tag, const pf_graph_limits *lim,
                                    const char *field, pf_proto_error *e) {
    uint64_t m = (uint64_t)d->m + k;
    uint32_t *deg, *from, *to, *eid_off, *etag_off, empty_id = 0;
    double *c;
    uint8_t *both, *off;
    char *tags, tagjson[3 * PF_GRAPH_TAG_MAX + 8];
    size_t tlen, old_tags, per;
    pf_status st = PF_OK;
    if (k == 0) return PF_OK;
    if (m > lim->max_edges)
        return pf__graph_limit(e, field, "edges with the ones auto_link made", m, lim->max_edges,
                               "--graph-max-edges");
    if (!(deg = calloc(d->n, sizeof(uint32_t))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    for (uint32_t i = 0; i < d->m; i++) {
        deg[d->from[i]]++;
        if (d->both[i]) deg[d->to[i]]++;
    }
    for (uint32_t i = 0; i < 2 * k && !st; i++)
        if (++deg[pairs[i]] > lim->max_degree)
            st = pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, field,
                                    "Node '%.64s' has more than %" PRIu32
                                    " edges leaving it with the ones auto_link made, this "
                                    "server's limit (--graph-max-degree); lower "
                                    "auto_link.max_links_per_node.",
                                    d->ids + d->id_off[pairs[i]], lim->max_degree);
    free(deg);
    if (st) return st;
    /* The tag as a JSON array, its text escaped (a tag is plain bytes). */
    tlen = 0;
    tagjson[tlen++] = '[';
    tagjson[tlen++] = '"';
    for (const char *p = tag; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"' || ch == '\\') tagjson[tlen++] = '\\';
        if (ch < 0x20)
            tlen += (size_t)snprintf(tagjson + tlen, 7, "\\u%04x", ch);
        else
            tagjson[tlen++] = (char)ch;
    }
    tagjson[tlen++] = '"';
    tagjson[tlen++] = ']';
    tagjson[tlen] = '\0';
    old_tags = d->m ? d->etag_off[d->m] : 0;
    /* Every array grows to m; a failure leaves the grown ones (same
     * contents, d->m unchanged), which pf_graph_doc_free frees. */
    if (!(from = realloc(d->from, m * sizeof(*from))) || !(d->from = from, 1) ||
        !(to = realloc(d->to, m * sizeof(*to))) || !(d->to = to, 1) ||
        !(c = realloc(d->cost, m * sizeof(*c))) || !(d->cost = c, 1) ||
        !(both = realloc(d->both, m)) || !(d->both = both, 1) || !(off = realloc(d->edge_off, m)) ||
        !(d->edge_off = off, 1) || !(eid_off = realloc(d->eid_off, m * sizeof(*eid_off))) ||
        !(d->eid_off = eid_off, 1) ||
        !(etag_off = realloc(d->etag_off, (m + 1) * sizeof(*etag_off))) ||
        !(d->etag_off = etag_off, 1) || !(tags = realloc(d->etags, old_tags + tlen * k + 1)))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    d->etags = tags;
    /* An edge without an id points at an empty text: the last id's NUL. */
    if (d->eids && d->m)
        empty_id = d->eid_off[d->m - 1] + (uint32_t)strlen(d->eids + d->eid_off[d->m - 1]);
    if (d->m == 0) d->etag_off[0] = 0;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t j = d->m + i;
        d->from[j] = pairs[2 * i];
        d->to[j] = pairs[2 * i + 1];
        d->cost[j] = cost[i];
        d->both[j] = 1;
        d->edge_off[j] = 0;
        d->eid_off[j] = empty_id;
        memcpy(d->etags + old_tags + (size_t)i * tlen, tagjson, tlen);
        d->etag_off[j + 1] = (uint32_t)(old_tags + (size_t)(i + 1) * tlen);
    }
    d->etags[old_tags + tlen * k] = '\0';
    per = 2 * sizeof(uint32_t) + sizeof(double) + 2 + 2 * sizeof(uint32_t);
    d->bytes += (size_t)k * (per + tlen);
    d->m = (uint32_t)m;
    return PF_OK;
}
