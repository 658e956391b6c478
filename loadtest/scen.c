/* scen.c -- loading Moving AI scenario files and timing their queries
 * in-process through the planner. */
#include "scen.h"

#include "deadends.h"

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
    size_t *sel_id;     /* ... and their indices in scen */
    size_t nsel;
    pf_planner *planner;
    double build_us;
    clockid_t clock;    /* what queries are timed with */
    double *samples[2]; /* per-query microseconds of the last run, sorted */
    size_t nsamples[2];
    double *subopts[2]; /* cost / optimum - 1 of each query with a path, sorted */
    size_t nsubopts[2];
    pf_bench_query *queries[2]; /* per query of the last run, in order */
    size_t nqueries[2];
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
    s->sel_id = malloc((s->scen.count ? s->scen.count : 1) * sizeof(*s->sel_id));
    if (!tmp || !s->sel_id) {
        free(tmp);
        return PF_ENOMEM;
    }
    for (size_t i = 0; i < s->scen.count; i++)
        if (s->scen.entries[i].bucket >= minb) {
            s->sel_id[n] = i;
            tmp[n++] = s->scen.entries[i];
        }
    keep = o->max_queries && o->max_queries < n ? o->max_queries : n;
    if (keep < n)
        for (size_t k = 0; k < keep; k++) {
            size_t from = (size_t)((double)k * (double)n / (double)keep);
            tmp[k] = tmp[from];
            s->sel_id[k] = s->sel_id[from];
        }
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
    popts.jps_table_bytes = o->jps_table_bytes;
    popts.subgoal_work_per_cell = o->subgoal_work;
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
    for (int k = 0; k < 2; k++) {
        free(s->samples[k]);
        free(s->subopts[k]);
        free(s->queries[k]);
    }
    free(s->sel);
    free(s->sel_id);
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
pf_planner *pf_bench_scen_planner_mut(pf_bench_scen *s) { return s->planner; }
double pf_bench_scen_build_us(const pf_bench_scen *s) { return s->build_us; }

const double *pf_bench_scen_samples(const pf_bench_scen *s, size_t *n) {
    return pf_bench_scen_samples_of(s, 0, n);
}

const double *pf_bench_scen_subopts(const pf_bench_scen *s, size_t *n) {
    return pf_bench_scen_subopts_of(s, 0, n);
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
        r->exact_mismatches++;
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
        if (pf_algorithm_is_optimal(res->algorithm)) r->exact_mismatches++;
        if (res->cost < e->optimal) r->invalid++; /* nothing beats the optimum */
    }
    if (e->optimal > 0) {
        sub = pf_bench_cost_matches(res->cost, e->optimal) ? 0.0 : res->cost / e->optimal - 1.0;
        subopt[(*subopt_n)++] = sub;
        if (isnan(r->max_subopt) || sub > r->max_subopt) r->max_subopt = sub;
    }
}

/* One algorithm's run over the selected queries, accumulated block by
 * block (see pf_bench_scen_run_pair). */
typedef struct run_acc {
    pf_algorithm a, ran;
    pf_report *r;
    pf_bench_query *queries; /* per selected query, in order */
    double *samples, *subopts, total_us;
    uint64_t expanded, jump_points, subopt_n, fell_back;
    uint64_t ran_count[PF_ALGO_COUNT]; /* answers by the algorithm that ran */
} run_acc;

/* Starts acc for algorithm a into r: header fields, buffers, and the
 * untimed warm-up query. PF_EUNSUPPORTED (r->note says why), PF_ENOMEM. */
static pf_status acc_begin(pf_bench_scen *s, pf_search_ctx *ctx, pf_algorithm a, pf_report *r,
                           run_acc *acc) {
    const pf_grid *g = pf_planner_grid(s->planner);
    memset(acc, 0, sizeof(*acc));
    acc->a = acc->ran = a;
    acc->r = r;
    pf_report_init(r);
    snprintf(r->map, sizeof(r->map), "%s", s->name);
    snprintf(r->algorithm, sizeof(r->algorithm), "%s", pf_algorithm_name(a));
    r->map_w = pf_grid_width(g);
    r->map_h = pf_grid_height(g);
    if (a == PF_ALGO_HPA || a == PF_ALGO_JPS) r->memory_bytes = pf_planner_memory(s->planner);
    if (a == PF_ALGO_JPS || a == PF_ALGO_AUTO) {
        static const char *const names[] = {"auto", "scan", "bits", "tables"};
        pf_jps_stats js;
        pf_planner_jps_stats(s->planner, &js);
        snprintf(r->jps_layout, sizeof(r->jps_layout), "%s", names[js.layout]);
        r->jps_table_bytes = js.table_bytes;
        r->jps_stop_density = js.stop_density;
    }
    if (a == PF_ALGO_JPS && pf_planner_landmarks(s->planner)) {
        r->landmarks = pf_planner_landmarks(s->planner)->k;
        r->landmarks_ms = (double)pf_planner_landmarks(s->planner)->build_us / 1e3;
        if (pf_planner_landmarks(s->planner)->dead)
            r->dead_ends = pf_planner_landmarks(s->planner)->dead->dead;
    }
    if (a == PF_ALGO_HPA)
        r->build_ms = pf_planner_hpa_build_us(s->planner)
                          ? (double)pf_planner_hpa_build_us(s->planner) / 1e3
                          : s->build_us / 1e3;
    acc->samples = malloc((s->nsel ? s->nsel : 1) * sizeof(*acc->samples));
    acc->subopts = malloc((s->nsel ? s->nsel : 1) * sizeof(*acc->subopts));
    acc->queries = calloc(s->nsel ? s->nsel : 1, sizeof(*acc->queries));
    if (!acc->samples || !acc->subopts || !acc->queries) {
        free(acc->samples);
        free(acc->subopts);
        free(acc->queries);
        return PF_ENOMEM;
    }
    /* Warm-up: the first search on a map size allocates the context's node
     * arrays and faults their pages in; the longest query touches most. */
    if (s->nsel) {
        const pf_scen_entry *e = &s->sel[s->nsel - 1];
        pf_query q = pf_query_make(e->start, e->goal, a);
        pf_result res;
        pf_status st = pf_planner_search(ctx, s->planner, &q, &res);
        if (st == PF_EUNSUPPORTED) {
            snprintf(r->note, sizeof(r->note),
                     "algorithm '%s' is not available in this build on this map "
                     "(pf_planner_search: %s)",
                     pf_algorithm_name(a), pf_status_str(st));
            free(acc->samples);
            free(acc->subopts);
            free(acc->queries);
            return PF_EUNSUPPORTED;
        }
    }
    return PF_OK;
}

/* Times selected queries i0 .. i1 - 1 with acc's algorithm. */
static void acc_block(pf_bench_scen *s, pf_search_ctx *ctx, run_acc *acc, size_t i0, size_t i1) {
    const pf_grid *g = pf_planner_grid(s->planner);
    pf_report *r = acc->r;
    for (size_t i = i0; i < i1; i++) {
        const pf_scen_entry *e = &s->sel[i];
        struct timespec t0, t1;
        pf_result res;
        pf_status st;
        double us;
        pf_query q = pf_query_make(e->start, e->goal, acc->a);
        clock_gettime(s->clock, &t0);
        st = pf_planner_search(ctx, s->planner, &q, &res);
        clock_gettime(s->clock, &t1);
        us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
        acc->queries[i] = (pf_bench_query){
            s->sel_id[i], e, st, res.algorithm, res.expanded, us, st == PF_OK ? res.cost : NAN};
        r->requests++;
        if (st != PF_OK && st != PF_NO_PATH) {
            acc->queries[i].us = NAN;
            r->errors++;
            r->mismatches++;
            pf_report_add_error(r, pf_status_str(st), 1);
            continue;
        }
        acc->samples[r->queries++] = us;
        acc->total_us += us;
        acc->expanded += res.expanded;
        acc->jump_points += res.jump_points;
        if ((unsigned)res.algorithm < PF_ALGO_COUNT) acc->ran_count[res.algorithm]++;
        if (res.algorithm != acc->a) {
            acc->fell_back++;
            acc->ran = res.algorithm;
        }
        check_answer(g, e, &res, r, acc->subopts, &acc->subopt_n);
    }
}

/* Fills the report's figures from acc and keeps its samples in slot k. */
static void acc_finish(pf_bench_scen *s, run_acc *acc, double seconds, int k) {
    pf_report *r = acc->r;
    double subopt_sum = 0;
    r->seconds = seconds;
    qsort(acc->samples, r->queries, sizeof(*acc->samples), pf_report_cmp_double);
    free(s->samples[k]);
    free(s->subopts[k]);
    s->samples[k] = acc->samples;
    s->nsamples[k] = r->queries;
    free(s->queries[k]);
    s->queries[k] = acc->queries;
    s->nqueries[k] = s->nsel;
    if (r->queries) {
        const double *samples = acc->samples;
        r->p50_us = pf_report_percentile(samples, r->queries, 50);
        r->p90_us = pf_report_percentile(samples, r->queries, 90);
        r->p99_us = pf_report_percentile(samples, r->queries, 99);
        r->p999_us = pf_report_percentile(samples, r->queries, 99.9);
        r->max_us = samples[r->queries - 1];
        r->mean_us = acc->total_us / (double)r->queries;
        r->rps = acc->total_us > 0 ? (double)r->queries / (acc->total_us / 1e6) : NAN;
        r->mean_expanded = (double)acc->expanded / (double)r->queries;
        r->ns_per_expansion = acc->expanded ? acc->total_us * 1e3 / (double)acc->expanded : NAN;
        if (acc->a == PF_ALGO_JPS)
            r->mean_jump_points = (double)acc->jump_points / (double)r->queries;
    }
    r->expanded_total = acc->expanded;
    r->search_seconds = acc->total_us / 1e6;
    for (uint64_t i = 0; i < acc->subopt_n; i++) subopt_sum += acc->subopts[i];
    r->mean_subopt = acc->subopt_n ? subopt_sum / (double)acc->subopt_n : NAN;
    qsort(acc->subopts, acc->subopt_n, sizeof(*acc->subopts), pf_report_cmp_double);
    r->p99_subopt = pf_report_percentile(acc->subopts, acc->subopt_n, 99);
    s->subopts[k] = acc->subopts;
    s->nsubopts[k] = acc->subopt_n;
    if (acc->a == PF_ALGO_AUTO) {
        /* What auto ran, by algorithm. */
        int n = 0;
        for (int a = 0; a < PF_ALGO_COUNT && n < (int)sizeof(r->note) - 40; a++)
            if (acc->ran_count[a])
                n += snprintf(r->note + n, sizeof(r->note) - (size_t)n, "%s%s %llu",
                              n ? ", " : "ran ", pf_algorithm_name((pf_algorithm)a),
                              (unsigned long long)acc->ran_count[a]);
    } else if (acc->fell_back) {
        snprintf(r->note, sizeof(r->note), "%llu of %llu queries ran %s instead of %s",
                 (unsigned long long)acc->fell_back, (unsigned long long)r->queries,
                 pf_algorithm_name(acc->ran), pf_algorithm_name(acc->a));
        if (acc->fell_back == r->queries)
            snprintf(r->algorithm, sizeof(r->algorithm), "%s", pf_algorithm_name(acc->ran));
    }
}

pf_status pf_bench_scen_run(pf_bench_scen *s, pf_search_ctx *ctx, pf_algorithm a, pf_report *r) {
    run_acc acc;
    double wall0;
    pf_status st = acc_begin(s, ctx, a, r, &acc);
    if (st) return st;
    wall0 = now_us();
    acc_block(s, ctx, &acc, 0, s->nsel);
    acc_finish(s, &acc, (now_us() - wall0) / 1e6, 0);
    return PF_OK;
}

pf_status pf_bench_scen_run_pair(pf_bench_scen *s, pf_search_ctx *ctx, const pf_algorithm a[2],
                                 void (*tune)(pf_bench_scen *, int, void *), void *ud, size_t block,
                                 pf_report r[2]) {
    run_acc acc[2];
    double wall[2] = {0, 0};
    pf_status st;
    if (!block) block = 1;
    for (int k = 0; k < 2; k++) {
        if (tune) tune(s, k, ud);
        st = acc_begin(s, ctx, a[k], &r[k], &acc[k]);
        if (st) {
            if (k) {
                free(acc[0].samples);
                free(acc[0].subopts);
                free(acc[0].queries);
            }
            return st;
        }
    }
    /* Blocks alternate, and so does which algorithm runs a block first, so
     * both see the same machine load and the same cache state on average. */
    for (size_t i0 = 0, n = 0; i0 < s->nsel; i0 += block, n++) {
        size_t i1 = i0 + block < s->nsel ? i0 + block : s->nsel;
        for (int t = 0; t < 2; t++) {
            int k = (int)((n + (size_t)t) & 1);
            double w0 = now_us();
            if (tune) tune(s, k, ud);
            acc_block(s, ctx, &acc[k], i0, i1);
            wall[k] += now_us() - w0;
        }
    }
    for (int k = 0; k < 2; k++) acc_finish(s, &acc[k], wall[k] / 1e6, k);
    return PF_OK;
}

const double *pf_bench_scen_samples_of(const pf_bench_scen *s, int k, size_t *n) {
    *n = s->nsamples[k];
    return s->samples[k];
}

const pf_bench_query *pf_bench_scen_queries_of(const pf_bench_scen *s, int k, size_t *n) {
    *n = s->nqueries[k];
    return s->queries[k];
}

const double *pf_bench_scen_subopts_of(const pf_bench_scen *s, int k, size_t *n) {
    *n = s->nsubopts[k];
    return s->subopts[k];
}
