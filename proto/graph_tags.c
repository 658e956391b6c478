/* graph_tags.c -- a graph upload's tags as bits (graph_json.h's
 * pf_graph_doc_tag_bits): the first PF_GRAPH_TAG_BITS distinct tag names,
 * nodes' then edges', in upload order. */
#include <stdlib.h>
#include <string.h>

#include "graph_json.h"

/* The bit of tag `name` in t, added when new and there is room; -1 past
 * the last bit. */
static int bit_of(pf_graph_tag_names *t, const char *name) {
    for (uint32_t i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0) return (int)i;
    if (t->n == PF_GRAPH_TAG_BITS) {
        t->past = true;
        return -1;
    }
    strncpy(t->names[t->n], name, PF_GRAPH_TAG_MAX);
    t->names[t->n][PF_GRAPH_TAG_MAX] = '\0';
    return (int)t->n++;
}

/* The bits of the tags array text [off[i], off[i + 1]) of text. */
static pf_status bits_of(const char *text, const uint32_t *off, uint32_t n, pf_graph_tag_names *t,
                         uint64_t **out) {
    uint64_t *b = NULL;
    for (uint32_t i = 0; i < n; i++) {
        cJSON *arr, *it;
        if (off[i + 1] == off[i]) continue;
        if (!b && !(b = calloc(n, sizeof(uint64_t)))) return PF_ENOMEM;
        if (!(arr = cJSON_ParseWithLength(text + off[i], off[i + 1] - off[i]))) {
            free(b);
            return PF_ENOMEM; /* the text was written by the upload's reader */
        }
        cJSON_ArrayForEach(it, arr) {
            int k = cJSON_IsString(it) ? bit_of(t, it->valuestring) : -1;
            if (k >= 0) b[i] |= UINT64_C(1) << k;
        }
        cJSON_Delete(arr);
    }
    *out = b;
    return PF_OK;
}

pf_status pf_graph_doc_tag_bits(const pf_graph_doc *d, pf_graph_tag_names *names,
                                uint64_t **node_bits, uint64_t **edge_bits) {
    pf_status st;
    memset(names, 0, sizeof(*names));
    *node_bits = *edge_bits = NULL;
    if ((st = bits_of(d->ntags, d->ntag_off, d->n, names, node_bits))) return st;
    if ((st = bits_of(d->etags, d->etag_off, d->m, names, edge_bits))) {
        free(*node_bits);
        *node_bits = NULL;
    }
    return st;
}

uint64_t pf_graph_tag_mask(const pf_graph_tag_names *names, const char *name, bool *known) {
    for (uint32_t i = 0; i < names->n; i++)
        if (strcmp(names->names[i], name) == 0) {
            *known = true;
            return UINT64_C(1) << i;
        }
    *known = false;
    return 0;
}
