/* main.c -- pathd-bench: the benchmark harness's command line.
 *
 *   pathd-bench scen [options] FILE.scen...   in-process, against core
 *   pathd-bench http --url URL [options]      against a running server
 *   pathd-bench sessions [options] FILE.scen... D* Lite memory per session
 *   pathd-bench chase [options] FILE.scen...    chasers under replanning policies
 *
 * Both subcommands print the report of report.h.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chase.h"
#include "gen.h"
#include "loadgen.h"
#include "navbench.h"
#include "report.h"
#include "scen.h"
#include "sessions.h"
#include "units.h"

#define EXIT_MISMATCH 1    /* an optimal algorithm missed the optimum, or an answer was invalid */
#define EXIT_USAGE 2       /* bad arguments or unreadable input */
#define EXIT_UNSUPPORTED 3 /* the algorithm is not available in this build */

static void usage(FILE *f) {
    fputs(
        "usage: pathd-bench scen [options] FILE.scen...\n"
        "       pathd-bench http --url URL --scen FILE.scen... [options]\n"
        "       pathd-bench sessions [--sessions N] [--repair] FILE.scen...\n"
        "       pathd-bench chase [options] FILE.scen...\n"
        "       pathd-bench navmesh [options] FILE.scen|FILE.obj|gen:LEVEL...\n"
        "       pathd-bench flowfield|table|agents [options] FILE.scen...\n"
        "       pathd-bench gen maze|rooms|random [--side N] [--param P] [--seed S] OUT\n"
        "       pathd-bench --help\n"
        "\n"
        "scen: runs Moving AI scenario files in-process through the planner (the\n"
        "dispatch the server uses). The map is found by basename beside each .scen\n"
        "file. Per file it prints queries, mismatches against the listed optimum\n"
        "(tolerance max(1e-3, 1e-5 x optimum)), invalid answers (a path the map does\n"
        "not allow, a cost below the optimum), mean, p99 and max suboptimality\n"
        "(cost/optimum - 1), p50/p99 microseconds per query (search only,\n"
        "CLOCK_MONOTONIC), mean expanded nodes and nanoseconds per expanded node\n"
        "(total search time / total expanded). hpa adds the hierarchy's build time\n"
        "and the planner's memory; jps adds jump points per query.\n"
        "\n"
        "  --algorithm NAME      bfs dijkstra astar weighted greedy jps hpa auto subgoal (default\n"
        "                        astar);\n"
        "                        jps:LAYOUT[+nodirect] picks jps's layout (auto scan bits\n"
        "                        tables) and turns its direct answers off\n"
        "  --compare A,B         run both algorithms on the same queries and print the\n"
        "                        ratio p50(A) / p50(B) per file (e.g. astar,jps: the JPS\n"
        "                        speed-up; astar,hpa: the HPA* speed-up), interleaved in\n"
        "                        alternating blocks of queries\n"
        "  --block N             queries per block of --compare (default 32)\n"
        "  --max-queries N       at most N queries per file, spread evenly over the file\n"
        "                        (entry floor(k*n/N), k = 0..N-1)\n"
        "  --min-bucket-frac F   only buckets >= floor(F x (largest bucket + 1))\n"
        "  --bucket-quarter      the longest quarter of buckets (= --min-bucket-frac 0.75)\n"
        "  --cluster-size N      HPA* cluster side (default: the library's)\n"
        "  --landmark-bytes N    jps landmark tables per map, as the server's flag\n"
        "                        (default 16 MiB; 0 = octile heuristic only)\n"
        "  --jps-table-bytes N   jps jump tables per map (default 24 MiB; 0 = none)\n"
        "  --subgoal-work-per-cell N  the subgoal hierarchy's work bound, as the server's\n"
        "                        flag (default 128; 0 = none); built for subgoal and auto\n"
        "  --clock wall|cpu      time queries with CLOCK_MONOTONIC (wall, the default) or\n"
        "                        the thread's CPU clock (cpu: leaves out time spent\n"
        "                        descheduled on a busy machine)\n"
        "  --json                one JSON object per file and algorithm, one per line:\n"
        "                        map, algorithm, queries, mismatches, mean_subopt, p99_subopt,\n"
        "                        max_subopt, p50_us, p99_us, mean_expanded,\n"
        "                        ns_per_expansion, and the http fields (requests, errors,\n"
        "                        rps, p50_ms..max_ms, invalid); extra keys build_ms,\n"
        "                        memory_bytes, jump_points where they apply\n"
        "  --per-query FILE      also write one line per query and algorithm to FILE\n"
        "                        (tab-separated, a header first): map, algorithm, id (the\n"
        "                        entry's index in the .scen file, from 0), bucket, start\n"
        "                        and goal x/y, expanded, time_us (the --clock used; nan for\n"
        "                        an error), cost (nan without a path), optimal, ran (what\n"
        "                        answered: auto's pick, jps's fallback), status; so an\n"
        "                        outside harness can line its queries up with these\n"
        "\n"
        "The human output ends with a total line and the median ns/expansion over\n"
        "the maps of at least 512x512 cells.\n"
        "\n"
        "http: the same queries against a server over keep-alive connections, closed\n"
        "or open loop (--rate); the same report plus rps and latency p50..max.\n"
        "See `pathd-bench http --help`.\n"
        "\n"
        "navmesh: the maps as navmeshes: build time, paths against jps, obstacle\n"
        "changes, crowd steps. See `pathd-bench navmesh --help`.\n"
        "flowfield, table, agents: many units (flow field build time and its break-even\n"
        "unit count against one astar per unit; an S x T distance table against S x T\n"
        "astar; agent sizes against size 1). See `pathd-bench flowfield --help` etc.\n"
        "\n"
        "gen: writes OUT.map and OUT.map.scen of a generated map: maze (corridors P\n"
        "wide, default 4), rooms (rooms of side P, default 8, one door a wall) or\n"
        "random (P percent blocked, default 20), 512x512 unless --side, K queries a\n"
        "bucket of 4 units of optimal length (--per-bucket, default 10), optima from\n"
        "a plain Dijkstra of its own. Deterministic per --seed.\n"
        "\n"
        "sessions: bytes per D* Lite session, N sessions on one shared map, and with\n"
        "--repair their repairs against a fresh A*. See `pathd-bench sessions --help`.\n"
        "\n"
        "chase: N chasers after N random-walking targets under replanning policies\n"
        "(every frame, timer, threshold, incremental): expansions, CPU per frame, paths\n"
        "pushed, route flips. See `pathd-bench chase --help`.\n"
        "\n"
        "scen exit status: 0 all good; 1 an optimal algorithm (dijkstra, astar, jps) missed\n"
        "an optimum, or any algorithm gave an invalid answer or an error; 2 bad\n"
        "arguments or files; 3 the algorithm is not available in this build\n"
        "(pf_planner_search answered PF_EUNSUPPORTED).\n",
        f);
}

/* Everything one algorithm did over all files, for the total line. */
typedef struct totals {
    pf_algorithm algo;
    pf_report sum;
    double *samples;
    size_t nsamples, cap;
    double subopt_sum;
    uint64_t subopt_n;
    double *subopts; /* every query's suboptimality, for the total's p99 */
    size_t nsubopts, subopt_cap;
    double big_ns[64]; /* ns/expansion of the maps of at least 512x512 */
    size_t nbig;
    double p50[64]; /* per file, for --compare */
    size_t np50;
} totals;

static void totals_init(totals *t, pf_algorithm a) {
    memset(t, 0, sizeof(*t));
    t->algo = a;
    pf_report_init(&t->sum);
    snprintf(t->sum.map, sizeof(t->sum.map), "TOTAL");
    snprintf(t->sum.algorithm, sizeof(t->sum.algorithm), "%s", pf_algorithm_name(a));
}

/* Appends n doubles to *buf (length *len, capacity *cap). */
static int append_doubles(double **buf, size_t *len, size_t *cap, const double *v, size_t n) {
    if (n && *len + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        double *p;
        while (c < *len + n) c *= 2;
        p = realloc(*buf, c * sizeof(*p));
        if (!p) return -1;
        *buf = p;
        *cap = c;
    }
    if (n) memcpy(*buf + *len, v, n * sizeof(*v));
    *len += n;
    return 0;
}

static int totals_add(totals *t, const pf_report *r, const double *samples, size_t n,
                      const double *subopts, size_t nsub) {
    if (append_doubles(&t->subopts, &t->nsubopts, &t->subopt_cap, subopts, nsub)) return -1;
    if (n && t->nsamples + n > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        double *p;
        while (cap < t->nsamples + n) cap *= 2;
        p = realloc(t->samples, cap * sizeof(*p));
        if (!p) return -1;
        t->samples = p;
        t->cap = cap;
    }
    if (n) memcpy(t->samples + t->nsamples, samples, n * sizeof(*samples));
    t->nsamples += n;
    t->sum.queries += r->queries;
    t->sum.requests += r->requests;
    t->sum.errors += r->errors;
    t->sum.mismatches += r->mismatches;
    t->sum.invalid += r->invalid;
    t->sum.checked += r->checked;
    t->sum.expanded_total += r->expanded_total;
    t->sum.search_seconds += r->search_seconds;
    if (!isnan(r->mean_subopt)) {
        /* Weighted by the queries that had a path, close enough to exact:
         * start == goal lines are the only ones left out. */
        t->subopt_sum += r->mean_subopt * (double)r->queries;
        t->subopt_n += r->queries;
    }
    if (!isnan(r->max_subopt) && (isnan(t->sum.max_subopt) || r->max_subopt > t->sum.max_subopt))
        t->sum.max_subopt = r->max_subopt;
    if (r->map_w >= 512 && r->map_h >= 512 && !isnan(r->ns_per_expansion) && t->nbig < 64)
        t->big_ns[t->nbig++] = r->ns_per_expansion;
    if (t->np50 < 64) t->p50[t->np50++] = r->p50_us;
    return 0;
}

static void totals_finish(totals *t) {
    pf_report *s = &t->sum;
    if (t->nsamples) {
        qsort(t->samples, t->nsamples, sizeof(*t->samples), pf_report_cmp_double);
        s->p50_us = pf_report_percentile(t->samples, t->nsamples, 50);
        s->p90_us = pf_report_percentile(t->samples, t->nsamples, 90);
        s->p99_us = pf_report_percentile(t->samples, t->nsamples, 99);
        s->p999_us = pf_report_percentile(t->samples, t->nsamples, 99.9);
        s->max_us = t->samples[t->nsamples - 1];
    }
    if (s->queries) {
        s->mean_us = s->search_seconds * 1e6 / (double)s->queries;
        s->mean_expanded = (double)s->expanded_total / (double)s->queries;
        s->rps = s->search_seconds > 0 ? (double)s->queries / s->search_seconds : NAN;
    }
    if (s->expanded_total)
        s->ns_per_expansion = s->search_seconds * 1e9 / (double)s->expanded_total;
    s->mean_subopt = t->subopt_n ? t->subopt_sum / (double)t->subopt_n : NAN;
    if (t->nsubopts) {
        qsort(t->subopts, t->nsubopts, sizeof(*t->subopts), pf_report_cmp_double);
        s->p99_subopt = pf_report_percentile(t->subopts, t->nsubopts, 99);
    }
}

static bool parse_size(const char *s, size_t *out) {
    char *end;
    unsigned long long v;
    if (!*s || *s == '-') return false;
    v = strtoull(s, &end, 10);
    if (*end) return false;
    *out = (size_t)v;
    return true;
}

/* An algorithm as the command line names it: NAME, or NAME:VARIANT for jps,
 * whose variants pick the layout (auto scan bits tables, pf_jps_set_layout)
 * and, with "+nodirect", turn direct answers off: jps:scan+nodirect is the
 * plain reference. */
typedef struct algo_spec {
    pf_algorithm algo;
    pf_jps_layout layout;
    bool direct;
    char name[32];
} algo_spec;

static bool spec_parse(const char *text, algo_spec *out) {
    static const char *const layouts[] = {"auto", "scan", "bits", "tables"};
    char buf[64], *colon, *v, *save = NULL;
    snprintf(buf, sizeof(buf), "%s", text);
    snprintf(out->name, sizeof(out->name), "%s", text);
    out->layout = PF_JPS_LAYOUT_AUTO;
    out->direct = true;
    colon = strchr(buf, ':');
    if (colon) *colon = '\0';
    if (!pf_algorithm_from_name(buf, &out->algo)) return false;
    if (!colon) return true;
    if (out->algo != PF_ALGO_JPS) return false;
    v = colon + 1;
    for (char *tok = strtok_r(v, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
        bool known = false;
        for (int k = 0; k < 4; k++)
            if (strcmp(tok, layouts[k]) == 0) {
                out->layout = (pf_jps_layout)k;
                known = true;
            }
        if (strcmp(tok, "nodirect") == 0) {
            out->direct = false;
            known = true;
        }
        if (!known) return false;
    }
    return true;
}

/* Before each run or block of algorithm k: its jps variant. */
static void tune_spec(pf_bench_scen *s, int k, void *ud) {
    const algo_spec *specs = ud;
    pf_planner_tune_jps(pf_bench_scen_planner_mut(s), specs[k].layout, specs[k].direct);
}

/* --per-query: slot k's queries of the last run on s, one line each. */
static void write_per_query(FILE *f, const pf_bench_scen *s, int k, const char *algorithm) {
    size_t n;
    const pf_bench_query *q = pf_bench_scen_queries_of(s, k, &n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\t%s\t%zu\t%d\t%d\t%d\t%d\t%d\t%llu\t%.3f\t%.6f\t%.6f\t%s\t%s\n",
                pf_bench_scen_name(s), algorithm, q[i].id, (int)q[i].e->bucket,
                (int)q[i].e->start.x, (int)q[i].e->start.y, (int)q[i].e->goal.x,
                (int)q[i].e->goal.y, (unsigned long long)q[i].expanded, q[i].us, q[i].cost,
                q[i].e->optimal, pf_algorithm_name(q[i].ran), pf_status_str(q[i].status));
}

static int cmd_scen(int argc, char **argv) {
    static const struct option longopts[] = {
        {"algorithm", required_argument, NULL, 'a'},
        {"compare", required_argument, NULL, 'c'},
        {"max-queries", required_argument, NULL, 'n'},
        {"min-bucket-frac", required_argument, NULL, 'b'},
        {"bucket-quarter", no_argument, NULL, 'q'},
        {"cluster-size", required_argument, NULL, 'k'},
        {"landmark-bytes", required_argument, NULL, 'L'},
        {"jps-table-bytes", required_argument, NULL, 'T'},
        {"subgoal-work-per-cell", required_argument, NULL, 'S'},
        {"block", required_argument, NULL, 'B'},
        {"json", no_argument, NULL, 'j'},
        {"clock", required_argument, NULL, 't'},
        {"per-query", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    pf_algorithm algos[2] = {PF_ALGO_ASTAR, PF_ALGO_ASTAR};
    algo_spec specs[2];
    int nalgos = 1, opt, rc = 0;
    bool json = false, any_unsupported = false;
    const char *per_query_path = NULL;
    FILE *per_query = NULL;
    pf_bench_scen_opts o;
    totals tot[2];
    pf_search_ctx *ctx;
    size_t sz, block = 32;

    memset(&o, 0, sizeof(o));
    o.landmark_bytes = PF_PLANNER_DEFAULT_LANDMARK_BYTES;
    o.landmark_min_cells = PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS;
    o.jps_table_bytes = PF_JPS_DEFAULT_TABLE_BYTES;
    o.subgoal_work = PF_PLANNER_DEFAULT_SUBGOAL_WORK_PER_CELL;
    spec_parse("astar", &specs[0]);
    spec_parse("astar", &specs[1]);
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'L':
            if (!parse_size(optarg, &o.landmark_bytes)) {
                fprintf(stderr, "pathd-bench: --landmark-bytes wants a byte count\n");
                return EXIT_USAGE;
            }
            break;
        case 'S': {
            size_t v;
            if (!parse_size(optarg, &v) || v > 1000000) {
                fprintf(stderr, "pathd-bench: --subgoal-work-per-cell wants 0..1000000\n");
                return EXIT_USAGE;
            }
            o.subgoal_work = (int64_t)v;
            break;
        }
        case 'B':
            if (!parse_size(optarg, &block) || block == 0) {
                fprintf(stderr, "pathd-bench: --block wants a positive integer\n");
                return EXIT_USAGE;
            }
            break;
        case 'T':
            if (!parse_size(optarg, &o.jps_table_bytes)) {
                fprintf(stderr, "pathd-bench: --jps-table-bytes wants a byte count\n");
                return EXIT_USAGE;
            }
            break;
        case 'a':
            if (!spec_parse(optarg, &specs[0])) {
                fprintf(stderr, "pathd-bench: unknown algorithm '%s'\n", optarg);
                return EXIT_USAGE;
            }
            algos[0] = specs[0].algo;
            nalgos = 1;
            break;
        case 'c': {
            char buf[64], *comma;
            snprintf(buf, sizeof(buf), "%s", optarg);
            comma = strchr(buf, ',');
            if (!comma) {
                fprintf(stderr, "pathd-bench: --compare wants two names: A,B\n");
                return EXIT_USAGE;
            }
            *comma = '\0';
            if (!spec_parse(buf, &specs[0]) || !spec_parse(comma + 1, &specs[1])) {
                fprintf(stderr, "pathd-bench: unknown algorithm in --compare '%s'\n", optarg);
                return EXIT_USAGE;
            }
            algos[0] = specs[0].algo;
            algos[1] = specs[1].algo;
            nalgos = 2;
            break;
        }
        case 'n':
            if (!parse_size(optarg, &sz) || sz == 0) {
                fprintf(stderr, "pathd-bench: --max-queries wants a positive integer\n");
                return EXIT_USAGE;
            }
            o.max_queries = sz;
            break;
        case 'b':
            if (!pf_report_bucket_frac(optarg, &o.min_bucket_frac)) return EXIT_USAGE;
            break;
        case 'q':
            o.min_bucket_frac = 0.75;
            break;
        case 'k':
            if (!parse_size(optarg, &sz) || sz < 2 || sz > 4096) {
                fprintf(stderr, "pathd-bench: --cluster-size wants an integer in 2..4096\n");
                return EXIT_USAGE;
            }
            o.cluster_size = (int32_t)sz;
            break;
        case 'j':
            json = true;
            break;
        case 'P':
            per_query_path = optarg;
            break;
        case 't': {
            clockid_t c;
            if (!pf_report_clock_from_name(optarg, &c)) {
                fprintf(stderr, "pathd-bench: --clock wants wall or cpu\n");
                return EXIT_USAGE;
            }
            o.cpu_clock = c == CLOCK_THREAD_CPUTIME_ID;
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "pathd-bench scen: no scenario files given\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    {
        /* Landmarks only serve jps and hpa: skip their build otherwise. */
        bool uses = false;
        for (int k = 0; k < nalgos; k++)
            uses = uses || algos[k] == PF_ALGO_JPS || algos[k] == PF_ALGO_HPA ||
                   algos[k] == PF_ALGO_AUTO;
        if (!uses) o.landmark_bytes = 0;
        /* The subgoal hierarchy serves subgoal and auto only. */
        uses = false;
        for (int k = 0; k < nalgos; k++)
            uses = uses || algos[k] == PF_ALGO_SUBGOAL || algos[k] == PF_ALGO_AUTO;
        if (!uses) o.subgoal_work = 0;
    }
    for (int k = 0; k < nalgos; k++) {
        if (algos[k] == PF_ALGO_HPA || algos[k] == PF_ALGO_AUTO) o.build_hpa = true;
        totals_init(&tot[k], algos[k]);
        snprintf(tot[k].sum.algorithm, sizeof(tot[k].sum.algorithm), "%s", specs[k].name);
    }
    if (per_query_path) {
        if (!(per_query = fopen(per_query_path, "w"))) {
            fprintf(stderr, "pathd-bench: --per-query %s: %s\n", per_query_path, strerror(errno));
            return EXIT_USAGE;
        }
        fprintf(per_query, "map\talgorithm\tid\tbucket\tstart_x\tstart_y\tgoal_x\tgoal_y\t"
                           "expanded\ttime_us\tcost\toptimal\tran\tstatus\n");
    }
    ctx = pf_search_ctx_create();
    if (!ctx) {
        fprintf(stderr, "pathd-bench: out of memory\n");
        if (per_query) fclose(per_query);
        return EXIT_USAGE;
    }
    if (!json) pf_report_print_header(stdout);

    for (int i = optind; i < argc; i++) {
        pf_bench_scen *s;
        char err[512] = "";
        pf_report r[2];
        bool ran[2] = {false, false};
        pf_status st = pf_bench_scen_load(argv[i], &o, &s, err, sizeof(err));
        if (st) {
            fprintf(stderr, "pathd-bench: %s\n", err[0] ? err : pf_status_str(st));
            rc = EXIT_USAGE;
            continue;
        }
        if (nalgos == 2) {
            st = pf_bench_scen_run_pair(s, ctx, algos, tune_spec, specs, block, r);
        } else {
            tune_spec(s, 0, specs);
            st = pf_bench_scen_run(s, ctx, algos[0], &r[0]);
        }
        for (int k = 0; k < nalgos; k++) {
            const double *samples;
            size_t n;
            if (st == PF_OK && strcmp(r[k].algorithm, pf_algorithm_name(algos[k])) == 0)
                snprintf(r[k].algorithm, sizeof(r[k].algorithm), "%s", specs[k].name);
            if (st == PF_EUNSUPPORTED) {
                any_unsupported = true;
                fprintf(stderr, "pathd-bench: %s: %s\n", r[k].map, r[k].note);
            } else if (st) {
                fprintf(stderr, "pathd-bench: %s: %s\n", pf_bench_scen_name(s), pf_status_str(st));
                rc = EXIT_USAGE;
                continue;
            } else {
                ran[k] = true;
                const double *subs;
                size_t nsub;
                samples = pf_bench_scen_samples_of(s, k, &n);
                subs = pf_bench_scen_subopts_of(s, k, &nsub);
                if (totals_add(&tot[k], &r[k], samples, n, subs, nsub)) {
                    fprintf(stderr, "pathd-bench: out of memory\n");
                    rc = EXIT_USAGE;
                }
                if (r[k].invalid || r[k].errors || r[k].exact_mismatches ||
                    (r[k].mismatches && pf_algorithm_is_optimal(algos[k])))
                    rc = rc ? rc : EXIT_MISMATCH;
                if (per_query) write_per_query(per_query, s, k, specs[k].name);
            }
            if (json)
                pf_report_print_json(stdout, &r[k]);
            else
                pf_report_print_row(stdout, &r[k]);
        }
        if (nalgos == 2 && ran[0] && ran[1]) {
            double p50r = r[0].p50_us / r[1].p50_us, meanr = r[0].mean_us / r[1].mean_us;
            if (json)
                printf("{\"map\":\"%s\",\"compare\":[\"%s\",\"%s\"],\"p50_ratio\":%.4f,"
                       "\"mean_ratio\":%.4f}\n",
                       r[0].map, r[0].algorithm, r[1].algorithm, p50r, meanr);
            else
                printf("%-16.16s p50 %s/%s = %.2fx  mean %s/%s = %.2fx\n", r[0].map, specs[0].name,
                       specs[1].name, p50r, specs[0].name, specs[1].name, meanr);
        }
        fflush(stdout);
        pf_bench_scen_destroy(s);
    }

    for (int k = 0; k < nalgos; k++) {
        totals_finish(&tot[k]);
        if (!json && tot[k].sum.queries) {
            pf_report_print_row(stdout, &tot[k].sum);
            if (tot[k].nbig)
                printf("%s: median ns/expansion over %zu maps of at least 512x512: %.1f\n",
                       specs[k].name, tot[k].nbig, pf_report_median(tot[k].big_ns, tot[k].nbig));
        }
    }
    if (!json && nalgos == 2 && tot[0].np50 && tot[0].np50 == tot[1].np50) {
        double ratios[64];
        for (size_t i = 0; i < tot[0].np50; i++) ratios[i] = tot[0].p50[i] / tot[1].p50[i];
        printf("median over files of p50 %s/%s: %.2fx\n", specs[0].name, specs[1].name,
               pf_report_median(ratios, tot[0].np50));
    }
    for (int k = 0; k < nalgos; k++) {
        free(tot[k].samples);
        free(tot[k].subopts);
    }
    pf_search_ctx_destroy(ctx);
    if (per_query && fclose(per_query) != 0) {
        fprintf(stderr, "pathd-bench: --per-query %s: %s\n", per_query_path, strerror(errno));
        rc = EXIT_USAGE;
    }
    if (!rc && any_unsupported) rc = EXIT_UNSUPPORTED;
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "scen") == 0) return cmd_scen(argc - 1, argv + 1);
    if (strcmp(argv[1], "http") == 0) return pf_bench_http_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "sessions") == 0) return pf_bench_sessions_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "chase") == 0) return pf_bench_chase_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "navmesh") == 0) return pf_bench_navmesh_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "flowfield") == 0) return pf_bench_flowfield_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "table") == 0) return pf_bench_table_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "agents") == 0) return pf_bench_agents_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "gen") == 0) return pf_bench_gen_main(argc - 1, argv + 1);
    fprintf(stderr, "pathd-bench: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
