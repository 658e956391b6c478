/* graph_dimacs.c -- the 9th DIMACS Implementation Challenge's
 * shortest-path formats (Demetrescu, Goldberg and Johnson 2006): a .gr
 * file of arcs and a .co file of coordinates, read into a pf_graph_doc
 * (graph_json.h). Every refusal names the file and its line. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_doc_internal.h"

/* Lines longer than this are refused (a .gr or .co line is < 64 bytes). */
#define LINE_MAX_BYTES 255

typedef struct reader {
    const char *s, *end;
    const char *field; /* "dimacs.gr" */
    uint64_t line;
    char buf[LINE_MAX_BYTES + 1];
} reader;

/* The next line into r->buf ('\r' dropped); false at the end. -1 when the
 * line is too long. */
static int next_line(reader *r) {
    const char *nl;
    size_t n;
    if (r->s >= r->end) return 0;
    nl = memchr(r->s, '\n', (size_t)(r->end - r->s));
    n = (size_t)((nl ? nl : r->end) - r->s);
    r->line++;
    if (n > LINE_MAX_BYTES) return -1;
    memcpy(r->buf, r->s, n);
    if (n && r->buf[n - 1] == '\r') n--;
    r->buf[n] = '\0';
    r->s = nl ? nl + 1 : r->end;
    return 1;
}

static pf_status bad(reader *r, pf_proto_error *e, const char *why) {
    return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, r->field,
                              "%s line %" PRIu64 ": %s", r->field, r->line, why);
}

/* Whitespace-separated fields of r->buf: at most max, *n of them. */
static void split(char *s, char **tok, int max, int *n) {
    char *save = NULL;
    *n = 0;
    for (char *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (*n == max) {
            (*n)++;
            return;
        }
        tok[(*n)++] = t;
    }
}

static bool read_u64(const char *t, uint64_t max, uint64_t *out) {
    char *end;
    unsigned long long v;
    if (*t < '0' || *t > '9') return false;
    v = strtoull(t, &end, 10);
    if (*end || v > max) return false;
    *out = v;
    return true;
}

static bool read_num(const char *t, double min, double max, double *out) {
    char *end;
    double v = strtod(t, &end);
    if (end == t || *end || !isfinite(v) || v < min || v > max) return false;
    *out = v;
    return true;
}

/* The .gr file: the problem line, then the arcs. */
static pf_status read_gr(reader *r, const pf_graph_limits *lim, pf_graph_doc *d,
                         pf_proto_error *e) {
    uint64_t n = 0, m = 0, got = 0;
    bool have_p = false;
    int rc;
    while ((rc = next_line(r)) != 0) {
        char *tok[6];
        int nt;
        if (rc < 0) return bad(r, e, "the line is longer than 255 bytes.");
        split(r->buf, tok, 5, &nt);
        if (nt == 0 || tok[0][0] == 'c') continue;
        if (strcmp(tok[0], "p") == 0) {
            if (have_p) return bad(r, e, "a second problem line.");
            if (nt != 4 || strcmp(tok[1], "sp") != 0 || !read_u64(tok[2], UINT32_MAX, &n) ||
                !read_u64(tok[3], UINT32_MAX, &m) || n == 0)
                return bad(r, e, "the problem line is 'p sp <nodes> <arcs>', nodes >= 1.");
            if (n > lim->max_nodes)
                return pf__graph_limit(e, r->field, "nodes", n, lim->max_nodes,
                                       "--graph-max-nodes");
            if (m > lim->max_edges)
                return pf__graph_limit(e, r->field, "arcs", m, lim->max_edges, "--graph-max-edges");
            if (pf__graph_doc_alloc(d, (uint32_t)n, (uint32_t)m, 2))
                return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            have_p = true;
        } else if (strcmp(tok[0], "a") == 0) {
            uint64_t u, v;
            double w;
            if (!have_p) return bad(r, e, "an arc before the problem line.");
            if (nt != 4) return bad(r, e, "an arc is 'a <from> <to> <cost>'.");
            if (!read_u64(tok[1], n, &u) || u == 0 || !read_u64(tok[2], n, &v) || v == 0)
                return bad(r, e, "an arc's ends are node ids from 1 to the problem line's count.");
            if (!read_num(tok[3], 0, 1e300, &w))
                return bad(r, e, "an arc's cost is a finite number >= 0.");
            if (got == m) return bad(r, e, "more arcs than the problem line says.");
            d->from[got] = (uint32_t)(u - 1);
            d->to[got] = (uint32_t)(v - 1);
            d->cost[got] = w;
            d->both[got] = 0;
            got++;
        } else {
            return bad(r, e, "a line is 'c', 'p' or 'a'.");
        }
    }
    if (!have_p) return bad(r, e, "no problem line ('p sp <nodes> <arcs>').");
    if (got != m) return bad(r, e, "fewer arcs than the problem line says.");
    return PF_OK;
}

static pf_status read_co(reader *r, pf_graph_doc *d, pf_proto_error *e) {
    uint8_t *seen = calloc(d->n, 1);
    uint64_t n = 0, got = 0;
    bool have_p = false;
    pf_status st = PF_OK;
    int rc;
    if (!seen) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    while (!st && (rc = next_line(r)) != 0) {
        char *tok[7];
        int nt;
        if (rc < 0) {
            st = bad(r, e, "the line is longer than 255 bytes.");
            break;
        }
        split(r->buf, tok, 6, &nt);
        if (nt == 0 || tok[0][0] == 'c') continue;
        if (strcmp(tok[0], "p") == 0) {
            if (have_p)
                st = bad(r, e, "a second problem line.");
            else if (nt != 5 || strcmp(tok[1], "aux") != 0 || strcmp(tok[2], "sp") != 0 ||
                     strcmp(tok[3], "co") != 0 || !read_u64(tok[4], UINT32_MAX, &n))
                st = bad(r, e, "the problem line is 'p aux sp co <nodes>'.");
            else if (n != d->n)
                st = bad(r, e, "the node count differs from the .gr file's.");
            have_p = true;
        } else if (strcmp(tok[0], "v") == 0) {
            uint64_t v;
            double x, y;
            if (!have_p)
                st = bad(r, e, "a coordinate before the problem line.");
            else if (nt != 4)
                st = bad(r, e, "a coordinate is 'v <id> <x> <y>'.");
            else if (!read_u64(tok[1], n, &v) || v == 0)
                st = bad(r, e, "a coordinate's node id is from 1 to the node count.");
            else if (!read_num(tok[2], -PF_GRAPH_MAX_COORD, PF_GRAPH_MAX_COORD, &x) ||
                     !read_num(tok[3], -PF_GRAPH_MAX_COORD, PF_GRAPH_MAX_COORD, &y))
                st = bad(r, e, "coordinates are finite numbers within +-1e9.");
            else if (seen[v - 1])
                st = bad(r, e, "a node's coordinates are given twice.");
            else {
                seen[v - 1] = 1;
                d->pos[3 * (v - 1)] = x;
                d->pos[3 * (v - 1) + 1] = y;
                got++;
            }
        } else {
            st = bad(r, e, "a line is 'c', 'p' or 'v'.");
        }
    }
    if (!st && !have_p) st = bad(r, e, "no problem line ('p aux sp co <nodes>').");
    if (!st && got != d->n) {
        uint32_t v = 0;
        while (seen[v]) v++;
        st = pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, r->field,
                                "%s: node %" PRIu32 " has no coordinates.", r->field, v + 1);
    }
    free(seen);
    return st;
}

pf_status pf_graph_doc_from_dimacs(const char *gr, size_t grlen, const char *co, size_t colen,
                                   const pf_graph_limits *lim, pf_graph_doc *d, pf_proto_error *e) {
    reader *r = calloc(1, sizeof(*r));
    pf__gbuf ids = {0};
    pf_status st;
    memset(d, 0, sizeof(*d));
    if (!r) return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    *r = (reader){gr, gr + grlen, "dimacs.gr", 0, {0}};
    if ((st = read_gr(r, lim, d, e))) goto out;
    *r = (reader){co, co + colen, "dimacs.co", 0, {0}};
    if ((st = read_co(r, d, e))) goto out;
    for (uint32_t i = 0; i < d->n; i++) {
        char t[16];
        int n = snprintf(t, sizeof(t), "%" PRIu32, i + 1);
        d->id_off[i] = (uint32_t)ids.len;
        d->id_int[i] = 1;
        if (!pf__gbuf_put(&ids, t, (size_t)n + 1)) {
            st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            goto out;
        }
    }
    d->ids = ids.p;
    d->bytes += ids.cap;
    ids.p = NULL;
    if (!(st = pf__graph_doc_index_nodes(d, "nodes", e)))
        st = pf__graph_doc_finish(d, lim, "dimacs.gr arcs", e);
out:
    pf__gbuf_free(&ids);
    free(r);
    if (st) pf_graph_doc_free(d);
    return st;
}
