/* scen.c -- loading Moving AI scenario files and timing their queries
 * in-process through the planner. */
#include "scen.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "landmarks.h"
#include "path.h"

struct pf_bench_scen {
    char name[128];
    char *map_text;
    size_t map_len;
    pf_scen scen;       /* every entry of the file */
    pf_scen_entry *sel; /* the selected ones */
    size_t nsel;
    pf_planner *planner;
    double build_us;
    clockid_t clock; /* what queries are timed with */
    double *samples; /* per-query microseconds of the last run, sorted */
    size_t nsamples;
    double *subopts; /* cost / optimum - 1 of each query with a path, sorted */
    size_t nsubopts;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    if (!err || !errlen) return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static double now_us(void) { return pf_report_now_us(CLOCK_MONOTONIC); }

/* Reads a whole file into a NUL-terminated buffer. NULL with errno set on
 * error. */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        goto out_close;
    buf = malloc((size_t)n + 1);
    if (!buf) goto out_close;
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
        errno = EIO;
        goto out_close;
    }
    buf[n] = '\0';
    *len = (size_t)n;
out_close:
    fclose(f);
    return buf;
}

/* "dir/arena.map.scen" -> "arena". */
static void scen_name(const char *path, char *out, size_t cap) {
    const char *base = strrchr(path, '/');
    size_t n;
    base = base ? base + 1 : path;
    n = strlen(base);
    if (n > 9 && strcmp(base + n - 9, ".map.scen") == 0)
        n -= 9;
    else if (n > 5 && strcmp(base + n - 5, ".scen") == 0)
        n -= 5;
    if (n >= cap) n = cap - 1;
    memcpy(out, base, n);
    out[n] = '\0';
}

/* Keeps the entries whose bucket is in the longest buckets asked for, then
 * at most max_queries of them spread evenly. */
static pf_status select_entries(pf_bench_scen *s, const pf_bench_scen_opts *o) {
    size_t n = 0, keep;
    int32_t maxb = 0, minb = 0;
    pf_scen_entry *tmp;

    for (size_t i = 0; i < s->scen.count; i++)
        if (s->scen.entries[i].bucket > maxb) maxb = s->scen.entries[i].bucket;
    if (o->min_bucket_frac > 0) minb = (int32_t)floor(o->min_bucket_frac * (double)(maxb + 1));
    tmp = malloc((s->scen.count ? s->scen.count : 1) * sizeof(*tmp));
    if (!tmp) return PF_ENOMEM;
    for (size_t i = 0; i < s->scen.count; i++)
        if (s->scen.entries[i].bucket >= minb) tmp[n++] = s->scen.entries[i];
    keep = o->max_queries && o->max_queries < n ? o->max_queries : n;
    if (keep < n)
        for (size_t k = 0; k < keep; k++)
            tmp[k] = tmp[(size_t)((double)k * (double)n / (double)keep)];
    s->sel = tmp;
    s->nsel = keep;
    return PF_OK;
}

pf_status pf_bench_scen_load(const char *path, const pf_bench_scen_opts *o, pf_bench_scen **out,
                             char *err, size_t errlen) {
    static const pf_bench_scen_opts defaults;
    pf_bench_scen *s;
    char *scen_text = NULL, *map_path = NULL;
    size_t scen_len = 0, dirlen;
    const char *slash, *mapbase;
    pf_parse_error perr;
    pf_grid *g = NULL;
    pf_planner_opts popts;
    pf_status st;
    double t0;

    *out = NULL;
    if (!o) o = &defaults;
    s = calloc(1, sizeof(*s));
    if (!s) return PF_ENOMEM;
    scen_name(path, s->name, sizeof(s->name));
    s->clock = o->cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;

    scen_text = read_file(path, &scen_len);
    if (!scen_text) {
        set_err(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        st = PF_EINVAL;
        goto out_free_bench;
    }
    memset(&perr, 0, sizeof(perr));
    st = pf_scen_parse(scen_text, scen_len, 0, &s->scen, &perr);
    if (st) {
        set_err(err, errlen, "%s:%d: %s", path, (int)perr.line, perr.msg);
        goto out_free_scen_text;
    }
    if (s->scen.count == 0) {
        set_err(err, errlen, "%s: no scenario lines", path);
        st = PF_EINVAL;
        goto out_free_scen_text;
    }

    /* The map sits beside the .scen file under the basename of its map field. */
    slash = strrchr(path, '/');
    dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    mapbase = pf_scen_map_basename(s->scen.map);
    map_path = malloc(dirlen + strlen(mapbase) + 1);
    if (!map_path) {
        st = PF_ENOMEM;
        goto out_free_scen_text;
    }
    memcpy(map_path, path, dirlen);
    strcpy(map_path + dirlen, mapbase);
    s->map_text = read_file(map_path, &s->map_len);
    if (!s->map_text) {
        set_err(err, errlen, "%s: map '%s' not found beside it: %s", path, map_path,
                strerror(errno));
        st = PF_EINVAL;
        goto out_free_map_path;
    }
    memset(&perr, 0, sizeof(perr));
    st = pf_map_parse_movingai(s->map_text, s->map_len, NULL, &g, &perr);
    if (st) {
        set_err(err, errlen, "%s:%d: %s", map_path, (int)perr.line, perr.msg);
        goto out_free_map_path;
    }
    for (size_t i = 0; i < s->scen.count; i++) {
        const pf_scen_entry *e = &s->scen.entries[i];
        if (e->map_w != pf_grid_width(g) || e->map_h != pf_grid_height(g)) {
            set_err(err, errlen, "%s: line %zu says the map is %dx%d, %s is %dx%d", path, i + 2,
                    (int)e->map_w, (int)e->map_h, map_path, (int)pf_grid_width(g),
                    (int)pf_grid_height(g));
            st = PF_EINVAL;
            goto out_free_grid;
        }
    }
    st = select_entries(s, o);
    if (st) goto out_free_grid;

    memset(&popts, 0, sizeof(popts));
    popts.build_hpa = o->build_hpa;
    popts.cluster_size = o->cluster_size;
    popts.landmark_bytes = o->landmark_bytes;
    popts.landmark_min_cells = o->landmark_min_cells;
    t0 = now_us();
    st = pf_planner_create(g, &popts, &s->planner); /* takes g, also on failure */
    g = NULL;
    s->build_us = now_us() - t0;
    if (st) {
        set_err(err, errlen, "%s: building the planner failed: %s", path, pf_status_str(st));
        goto out_free_map_path;
    }
    free(map_path);
    free(scen_text);
    *out = s;
    return PF_OK;

out_free_grid:
    pf_grid_destroy(g);
out_free_map_path:
    free(map_path);
out_free_scen_text:
    free(scen_text);
out_free_bench:
    pf_bench_scen_destroy(s);
    return st;
}

void pf_bench_scen_destroy(pf_bench_scen *s) {
    if (!s) return;
    pf_planner_destroy(s->planner);
    free(s->samples);
    free(s->subopts);
    free(s->sel);
    pf_scen_free(&s->scen);
    free(s->map_text);
    free(s);
}

const char *pf_bench_scen_name(const pf_bench_scen *s) { return s->name; }

const pf_scen_entry *pf_bench_scen_entries(const pf_bench_scen *s, size_t *n) {
    *n = s->nsel;
    return s->sel;
}

const char *pf_bench_scen_map_text(const pf_bench_scen *s, size_t *len) {
    *len = s->map_len;
    return s->map_text;
}

const pf_planner *pf_bench_scen_planner(const pf_bench_scen *s) { return s->planner; }
double pf_bench_scen_build_us(const pf_bench_scen *s) { return s->build_us; }

const double *pf_bench_scen_samples(const pf_bench_scen *s, size_t *n) {
    *n = s->nsamples;
    return s->samples;
}

const double *pf_bench_scen_subopts(const pf_bench_scen *s, size_t *n) {
    *n = s->nsubopts;
    return s->subopts;
}

bool pf_bench_cost_matches(double cost, double optimal) {
    return fabs(cost - optimal) <= fmax(1e-3, 1e-5 * optimal);
}

/* Checks one answer against the map and the scenario and counts it in r.
 * cost / optimum - 1 of an answer with a path goes to subopt[*subopt_n]. */
static void check_answer(const pf_grid *g, const pf_scen_entry *e, const pf_result *res,
                         pf_report *r, double *subopt, uint64_t *subopt_n) {
    double walked, sub;
    if (res->status == PF_NO_PATH) {
        /* Every scenario line is solvable, start == goal included. */
        r->mismatches++;
        return;
    }
    r->checked++;
    if (pf_path_validate(g, res->path, res->path_len, &walked, NULL) != PF_OK ||
        res->path[0].x != e->start.x || res->path[0].y != e->start.y ||
        res->path[res->path_len - 1].x != e->goal.x ||
        res->path[res->path_len - 1].y != e->goal.y ||
        fabs(walked - res->cost) > 1e-6 * (1 + walked))
        r->invalid++;
    if (!pf_bench_cost_matches(res->cost, e->optimal)) {
        r->mismatches++;
        if (res->cost < e->optimal) r->invalid++; /* nothing beats the optimum */
    }
    if (e->optimal > 0) {
        sub = pf_bench_cost_matches(res->cost, e->optimal) ? 0.0 : res->cost / e->optimal - 1.0;
        subopt[(*subopt_n)++] = sub;
        if (isnan(r->max_subopt) || sub > r->max_subopt) r->max_subopt = sub;
    }
}

pf_status pf_bench_scen_run(pf_bench_scen *s, pf_search_ctx *ctx, pf_algorithm a, pf_report *r) {
    const pf_grid *g = pf_planner_grid(s->planner);
    double *samples, *subopts, total_us = 0, subopt_sum = 0, wall0;
    uint64_t expanded = 0, jump_points = 0, subopt_n = 0, fell_back = 0;
    pf_algorithm ran = a;
    pf_result res;
    pf_query q;
    pf_status st;

    pf_report_init(r);
    snprintf(r->map, sizeof(r->map), "%s", s->name);
    snprintf(r->algorithm, sizeof(r->algorithm), "%s", pf_algorithm_name(a));
    r->map_w = pf_grid_width(g);
    r->map_h = pf_grid_height(g);
    if (a == PF_ALGO_HPA || a == PF_ALGO_JPS) r->memory_bytes = pf_planner_memory(s->planner);
    if (a == PF_ALGO_JPS && pf_planner_landmarks(s->planner)) {
        r->landmarks = pf_planner_landmarks(s->planner)->k;
        r->landmarks_ms = (double)pf_planner_landmarks(s->planner)->build_us / 1e3;
    }
    if (a == PF_ALGO_HPA)
        r->build_ms = pf_planner_hpa_build_us(s->planner)
                          ? (double)pf_planner_hpa_build_us(s->planner) / 1e3
                          : s->build_us / 1e3;

    free(s->samples);
    free(s->subopts);
    s->samples = s->subopts = NULL;
    s->nsamples = s->nsubopts = 0;
    samples = malloc((s->nsel ? s->nsel : 1) * sizeof(*samples));
    subopts = malloc((s->nsel ? s->nsel : 1) * sizeof(*subopts));
    if (!samples || !subopts) {
        free(samples);
        free(subopts);
        return PF_ENOMEM;
    }

    /* Warm-up: the first search on a map size allocates the context's node
     * arrays and faults their pages in; the longest query touches most. */
    if (s->nsel) {
        const pf_scen_entry *e = &s->sel[s->nsel - 1];
        q = pf_query_make(e->start, e->goal, a);
        st = pf_planner_search(ctx, s->planner, &q, &res);
        if (st == PF_EUNSUPPORTED) {
            snprintf(r->note, sizeof(r->note),
                     "algorithm '%s' is not available in this build on this map "
                     "(pf_planner_search: %s)",
                     pf_algorithm_name(a), pf_status_str(st));
            free(samples);
            free(subopts);
            return PF_EUNSUPPORTED;
        }
    }

    wall0 = now_us();
    for (size_t i = 0; i < s->nsel; i++) {
        const pf_scen_entry *e = &s->sel[i];
        struct timespec t0, t1;
        double us;
        q = pf_query_make(e->start, e->goal, a);
        clock_gettime(s->clock, &t0);
        st = pf_planner_search(ctx, s->planner, &q, &res);
        clock_gettime(s->clock, &t1);
        us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
        r->requests++;
        if (st != PF_OK && st != PF_NO_PATH) {
            r->errors++;
            r->mismatches++;
            pf_report_add_error(r, pf_status_str(st), 1);
            continue;
        }
        samples[r->queries++] = us;
        total_us += us;
        expanded += res.expanded;
        jump_points += res.jump_points;
        if (res.algorithm != a) {
            fell_back++;
            ran = res.algorithm;
        }
        check_answer(g, e, &res, r, subopts, &subopt_n);
    }
    r->seconds = (now_us() - wall0) / 1e6;

    qsort(samples, r->queries, sizeof(*samples), pf_report_cmp_double);
    s->samples = samples;
    s->nsamples = r->queries;
    if (r->queries) {
        r->p50_us = pf_report_percentile(samples, r->queries, 50);
        r->p90_us = pf_report_percentile(samples, r->queries, 90);
        r->p99_us = pf_report_percentile(samples, r->queries, 99);
        r->p999_us = pf_report_percentile(samples, r->queries, 99.9);
        r->max_us = samples[r->queries - 1];
        r->mean_us = total_us / (double)r->queries;
        r->rps = total_us > 0 ? (double)r->queries / (total_us / 1e6) : NAN;
        r->mean_expanded = (double)expanded / (double)r->queries;
        r->ns_per_expansion = expanded ? total_us * 1e3 / (double)expanded : NAN;
        if (a == PF_ALGO_JPS) r->mean_jump_points = (double)jump_points / (double)r->queries;
    }
    r->expanded_total = expanded;
    r->search_seconds = total_us / 1e6;
    for (uint64_t i = 0; i < subopt_n; i++) subopt_sum += subopts[i];
    r->mean_subopt = subopt_n ? subopt_sum / (double)subopt_n : NAN;
    qsort(subopts, subopt_n, sizeof(*subopts), pf_report_cmp_double);
    r->p99_subopt = pf_report_percentile(subopts, subopt_n, 99);
    s->subopts = subopts;
    s->nsubopts = subopt_n;
    if (fell_back) {
        snprintf(r->note, sizeof(r->note), "%llu of %llu queries ran %s instead of %s",
                 (unsigned long long)fell_back, (unsigned long long)r->queries,
                 pf_algorithm_name(ran), pf_algorithm_name(a));
        if (fell_back == r->queries)
            snprintf(r->algorithm, sizeof(r->algorithm), "%s", pf_algorithm_name(ran));
    }
    return PF_OK;
}
