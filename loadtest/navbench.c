/* navbench.c -- see navbench.h. */
#include "navbench.h"

#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "navmesh.h"
#include "report.h"
#include "scen.h"

#define EXIT_MISMATCH 1
#define EXIT_USAGE 2

typedef struct nb_opts {
    size_t max_queries;
    bool cpu_clock;
    int threads;
    int obstacles;
    int crowd_sizes[8];
    int ncrowd;
    int crowd_steps;
    bool json;
    unsigned long long seed;
} nb_opts;

static void usage(FILE *f) {
    fputs("usage: pathd-bench navmesh [options] FILE.scen...\n"
          "\n"
          "Per scenario file, its map converted to a navmesh (cell 0.25, agent radius\n"
          "0.25, tiles of 64 voxels: the server's from_grid defaults):\n"
          "  build     wall ms on --threads threads and CPU ms, polygons, bytes\n"
          "  paths     the selected queries through jps (pf_planner_search) and through\n"
          "            the navmesh with polyanya and with Detour's findPath (both then\n"
          "            findStraightPath): p50/p99 us, the p50 ratio to jps, mean and\n"
          "            max length / listed optimum\n"
          "  obstacles --obstacles rounds of a 2x2 box put at a random walkable cell then\n"
          "            removed (pf_nav_apply, one version each): p50/p99 ms, tiles rebuilt\n"
          "  crowd     for each --crowd size, agents at random cells heading for random\n"
          "            cells; --crowd-steps steps of 50 ms after 10 to settle: p50/p99 ms\n"
          "\n"
          "  --max-queries N    queries per file, spread evenly (default 200)\n"
          "  --clock wall|cpu   time queries, changes and steps with CLOCK_MONOTONIC or\n"
          "                     the thread's CPU clock (cpu: leaves out time descheduled)\n"
          "  --threads N        build threads (default 2)\n"
          "  --obstacles N      put/remove rounds (default 40; 0 = none)\n"
          "  --crowd N[,N...]   crowd sizes (default none), e.g. 100,500,1000\n"
          "  --crowd-steps N    timed steps per crowd (default 50)\n"
          "  --seed N           obstacle and crowd placement (default 1)\n"
          "  --json             one JSON object per file\n"
          "\n"
          "Exit status: 0 good; 1 a scenario the navmesh did not reach, or a polyanya path\n"
          "longer than 1.02 x the optimum; 2 bad arguments or files.\n",
          f);
}

static double clock_us(bool cpu) {
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double process_cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p) {
    if (!n) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)ceil(p * (double)n) - 1;
    if (i >= n) i = n - 1;
    return v[i];
}

static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static pf_point random_cell(uint64_t *s, const pf_grid *g) {
    for (;;) {
        pf_point p = {(int32_t)(rnd(s) % (uint64_t)pf_grid_width(g)),
                      (int32_t)(rnd(s) % (uint64_t)pf_grid_height(g))};
        if (pf_grid_is_walkable(g, p)) return p;
    }
}

/* The build's runner: threads claiming tile indices. */
typedef struct nb_par {
    uint32_t n;
    pf_nav_task_fn fn;
    void *arg;
    uint32_t next;
} nb_par;

static void *nb_worker(void *a) {
    nb_par *j = a;
    for (;;) {
        uint32_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n) break;
        j->fn(j->arg, i);
    }
    return NULL;
}

static void nb_run(void *ctx, uint32_t n, pf_nav_task_fn fn, void *arg) {
    int threads = *(int *)ctx;
    nb_par j = {n, fn, arg, 0};
    pthread_t t[16];
    int started = 0;
    for (int i = 1; i < threads && i < 16; i++)
        if (pthread_create(&t[started], NULL, nb_worker, &j) == 0) started++;
    nb_worker(&j);
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
}

typedef struct nb_paths {
    double p50, p99, mean_ratio, max_ratio;
    int missed, over;
} nb_paths;

static void run_paths(pf_nav_query *q, const pf_navmesh *nm, const pf_scen_entry *e, size_t n,
                      pf_nav_algorithm algo, bool cpu, nb_paths *out) {
    double *t = malloc((n ? n : 1) * sizeof *t);
    double sum = 0, mx = 0;
    size_t ok = 0;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; n && i <= n; i++) {
        const pf_scen_entry *s = &e[i == 0 ? 0 : i - 1]; /* entry 0 once untimed: warm-up */
        float a[3] = {(float)s->start.x + 0.5f, 0, (float)s->start.y + 0.5f};
        float b[3] = {(float)s->goal.x + 0.5f, 0, (float)s->goal.y + 0.5f};
        pf_nav_path p;
        const char *which;
        double t0 = clock_us(cpu);
        pf_status st = pf_nav_find_path(q, nm, a, b, NULL, algo, &p, &which);
        double dt = clock_us(cpu) - t0;
        if (i == 0) continue;
        t[i - 1] = dt;
        if (st != PF_OK || p.partial) {
            out->missed++;
            continue;
        }
        double r = s->optimal > 0 ? p.length / s->optimal : 1.0;
        if (r > 1.02 + 1e-6 && algo == PF_NAV_POLYANYA) out->over++;
        sum += r;
        if (r > mx) mx = r;
        ok++;
    }
    out->p50 = pct(t, n, 0.50);
    out->p99 = pct(t, n, 0.99);
    out->mean_ratio = ok ? sum / (double)ok : NAN;
    out->max_ratio = ok ? mx : NAN;
    free(t);
}

static int bench_file(const char *path, const nb_opts *o) {
    pf_bench_scen_opts so;
    memset(&so, 0, sizeof so);
    so.max_queries = o->max_queries;
    so.cpu_clock = o->cpu_clock;
    so.landmark_bytes = PF_PLANNER_DEFAULT_LANDMARK_BYTES;
    so.landmark_min_cells = PF_PLANNER_DEFAULT_LANDMARK_MIN_CELLS;
    pf_bench_scen *sc = NULL;
    char err[256];
    if (pf_bench_scen_load(path, &so, &sc, err, sizeof err) != PF_OK) {
        fprintf(stderr, "pathd-bench: %s\n", err);
        return EXIT_USAGE;
    }
    const pf_grid *g = pf_planner_grid(pf_bench_scen_planner(sc));
    size_t n = 0;
    const pf_scen_entry *e = pf_bench_scen_entries(sc, &n);
    int rc = 0;

    /* Build. */
    pf_nav_build_input in;
    memset(&in, 0, sizeof in);
    in.grid = g;
    in.config = pf_nav_default_grid_config();
    int threads = o->threads;
    pf_nav_runner run = {nb_run, &threads};
    pf_navmesh *nm = NULL;
    pf_nav_error nerr;
    double w0 = clock_us(false), c0 = process_cpu_us();
    pf_status st = pf_nav_build(&in, NULL, &run, &nm, &nerr);
    double build_wall = (clock_us(false) - w0) / 1e3, build_cpu = (process_cpu_us() - c0) / 1e3;
    if (st != PF_OK) {
        fprintf(stderr, "pathd-bench: %s: navmesh build: %s: %s\n", path, nerr.field, nerr.message);
        pf_bench_scen_destroy(sc);
        return EXIT_MISMATCH;
    }
    pf_nav_info info;
    pf_navmesh_info(nm, &info);

    /* Paths: jps, then the navmesh on the same queries. */
    pf_search_ctx *ctx = pf_search_ctx_create();
    pf_report jr;
    pf_bench_scen_run(sc, ctx, PF_ALGO_JPS, &jr);
    pf_search_ctx_destroy(ctx);
    pf_nav_query *q = NULL;
    pf_nav_query_create(65535, &q);
    nb_paths pa, dt;
    run_paths(q, nm, e, n, PF_NAV_POLYANYA, o->cpu_clock, &pa);
    run_paths(q, nm, e, n, PF_NAV_DETOUR, o->cpu_clock, &dt);
    if (pa.missed || pa.over || dt.missed) rc = EXIT_MISMATCH;

    /* Obstacles: put a 2x2 box, then remove it, each from the build. */
    uint64_t seed = o->seed;
    double *put = malloc((size_t)(o->obstacles ? o->obstacles : 1) * sizeof(double));
    double *rem = malloc((size_t)(o->obstacles ? o->obstacles : 1) * sizeof(double));
    double rebuilt = 0;
    for (int k = 0; k < o->obstacles; k++) {
        pf_point c = random_cell(&seed, g);
        pf_nav_obstacle ob;
        memset(&ob, 0, sizeof ob);
        snprintf(ob.id, sizeof ob.id, "bench");
        ob.shape = PF_NAV_BOX;
        ob.bmin[0] = (float)c.x;
        ob.bmin[1] = -1;
        ob.bmin[2] = (float)c.y;
        ob.bmax[0] = (float)c.x + 2;
        ob.bmax[1] = 2;
        ob.bmax[2] = (float)c.y + 2;
        pf_nav_change ch;
        memset(&ch, 0, sizeof ch);
        ch.put = &ob;
        ch.nput = 1;
        pf_navmesh *v1 = NULL, *v2 = NULL;
        double t0 = clock_us(o->cpu_clock);
        st = pf_nav_apply(nm, &ch, NULL, &run, &v1, &nerr);
        put[k] = (clock_us(o->cpu_clock) - t0) / 1e3;
        if (st != PF_OK) {
            fprintf(stderr, "pathd-bench: %s: put: %s\n", path, nerr.message);
            rc = EXIT_MISMATCH;
            break;
        }
        pf_nav_info vi;
        pf_navmesh_info(v1, &vi);
        rebuilt += vi.rebuilt_tiles;
        const char *ids[] = {"bench"};
        memset(&ch, 0, sizeof ch);
        ch.remove = ids;
        ch.nremove = 1;
        t0 = clock_us(o->cpu_clock);
        st = pf_nav_apply(v1, &ch, NULL, &run, &v2, &nerr);
        rem[k] = (clock_us(o->cpu_clock) - t0) / 1e3;
        pf_navmesh_release(v1);
        pf_navmesh_release(v2);
        if (st != PF_OK) {
            rc = EXIT_MISMATCH;
            break;
        }
    }

    /* Crowds. */
    double crowd_p50[8], crowd_p99[8];
    for (int ci = 0; ci < o->ncrowd; ci++) {
        int na = o->crowd_sizes[ci];
        crowd_p50[ci] = crowd_p99[ci] = NAN;
        pf_nav_crowd *c = NULL;
        if (pf_nav_crowd_create(nm, (uint32_t)na, &c) != PF_OK) continue;
        pf_nav_agent_params ap = pf_nav_default_agent(nm);
        for (int i = 0, tries = 0; i < na && tries < 20 * na; tries++) {
            pf_point a = random_cell(&seed, g), b = random_cell(&seed, g);
            float pa3[3] = {(float)a.x + 0.5f, 0, (float)a.y + 0.5f};
            float pb3[3] = {(float)b.x + 0.5f, 0, (float)b.y + 0.5f};
            int32_t id;
            const char *which;
            if (pf_nav_crowd_add(c, pa3, pb3, &ap, &id, &which) == PF_OK) i++;
        }
        for (int s = 0; s < 10; s++) pf_nav_crowd_step(c, 0.05f, NULL);
        double *steps = malloc((size_t)(o->crowd_steps ? o->crowd_steps : 1) * sizeof(double));
        for (int s = 0; s < o->crowd_steps; s++) {
            double t0 = clock_us(o->cpu_clock);
            pf_nav_crowd_step(c, 0.05f, NULL);
            steps[s] = (clock_us(o->cpu_clock) - t0) / 1e3;
        }
        crowd_p50[ci] = pct(steps, (size_t)o->crowd_steps, 0.5);
        crowd_p99[ci] = pct(steps, (size_t)o->crowd_steps, 0.99);
        free(steps);
        pf_nav_crowd_destroy(c);
    }

    const char *name = pf_bench_scen_name(sc);
    double put50 = pct(put, (size_t)o->obstacles, 0.5),
           put99 = pct(put, (size_t)o->obstacles, 0.99);
    double rem50 = pct(rem, (size_t)o->obstacles, 0.5),
           rem99 = pct(rem, (size_t)o->obstacles, 0.99);
    if (o->json) {
        printf("{\"mode\":\"navmesh\",\"map\":\"%s\",\"map_w\":%d,\"map_h\":%d,\"clock\":\"%s\","
               "\"queries\":%zu,\"build_wall_ms\":%.1f,\"build_cpu_ms\":%.1f,\"threads\":%d,"
               "\"polygons\":%u,\"tiles\":%u,\"mesh_bytes\":%zu,\"layer_bytes\":%zu,"
               "\"jps_p50_us\":%.2f,\"jps_p99_us\":%.2f,"
               "\"polyanya_p50_us\":%.2f,\"polyanya_p99_us\":%.2f,\"polyanya_mean_ratio\":%.4f,"
               "\"polyanya_max_ratio\":%.4f,\"polyanya_missed\":%d,"
               "\"detour_p50_us\":%.2f,\"detour_p99_us\":%.2f,\"detour_mean_ratio\":%.4f,"
               "\"detour_max_ratio\":%.4f,\"detour_missed\":%d,"
               "\"obstacles\":%d,\"put_p50_ms\":%.3f,\"put_p99_ms\":%.3f,\"remove_p50_ms\":%.3f,"
               "\"remove_p99_ms\":%.3f,\"mean_rebuilt_tiles\":%.2f,\"crowds\":[",
               name, pf_grid_width(g), pf_grid_height(g), o->cpu_clock ? "cpu" : "wall", n,
               build_wall, build_cpu, o->threads, info.polygons, info.tiles, info.mesh_bytes,
               info.layer_bytes, jr.p50_us, jr.p99_us, pa.p50, pa.p99, pa.mean_ratio, pa.max_ratio,
               pa.missed, dt.p50, dt.p99, dt.mean_ratio, dt.max_ratio, dt.missed, o->obstacles,
               put50, put99, rem50, rem99, o->obstacles ? rebuilt / o->obstacles : 0.0);
        for (int ci = 0; ci < o->ncrowd; ci++)
            printf("%s{\"agents\":%d,\"step_p50_ms\":%.3f,\"step_p99_ms\":%.3f}", ci ? "," : "",
                   o->crowd_sizes[ci], crowd_p50[ci], crowd_p99[ci]);
        printf("]}\n");
    } else {
        printf("%s (%dx%d, %zu queries, %s clock)\n", name, pf_grid_width(g), pf_grid_height(g), n,
               o->cpu_clock ? "cpu" : "wall");
        printf("  build      %8.1f ms wall on %d threads, %8.1f ms cpu; %u polygons in %u tiles, "
               "mesh %zu KiB, layers %zu KiB\n",
               build_wall, o->threads, build_cpu, info.polygons, info.tiles, info.mesh_bytes / 1024,
               info.layer_bytes / 1024);
        printf("  jps        p50 %9.1f us  p99 %9.1f us\n", jr.p50_us, jr.p99_us);
        printf("  polyanya   p50 %9.1f us  p99 %9.1f us  x%.2f jps (p50)  length/optimum mean %.4f "
               "max %.4f  missed %d\n",
               pa.p50, pa.p99, pa.p50 / jr.p50_us, pa.mean_ratio, pa.max_ratio, pa.missed);
        printf("  detour     p50 %9.1f us  p99 %9.1f us  x%.2f jps (p50)  length/optimum mean %.4f "
               "max %.4f  missed %d\n",
               dt.p50, dt.p99, dt.p50 / jr.p50_us, dt.mean_ratio, dt.max_ratio, dt.missed);
        if (o->obstacles)
            printf("  obstacles  put p50 %.3f ms p99 %.3f ms; remove p50 %.3f ms p99 %.3f ms; "
                   "%.1f tiles rebuilt per change\n",
                   put50, put99, rem50, rem99, rebuilt / o->obstacles);
        for (int ci = 0; ci < o->ncrowd; ci++)
            printf("  crowd %5d step p50 %.3f ms p99 %.3f ms\n", o->crowd_sizes[ci], crowd_p50[ci],
                   crowd_p99[ci]);
    }
    fflush(stdout);
    free(put);
    free(rem);
    pf_nav_query_destroy(q);
    pf_navmesh_release(nm);
    pf_bench_scen_destroy(sc);
    return rc;
}

int pf_bench_navmesh_main(int argc, char **argv) {
    static const struct option longopts[] = {{"max-queries", required_argument, NULL, 'n'},
                                             {"clock", required_argument, NULL, 't'},
                                             {"threads", required_argument, NULL, 'T'},
                                             {"obstacles", required_argument, NULL, 'o'},
                                             {"crowd", required_argument, NULL, 'c'},
                                             {"crowd-steps", required_argument, NULL, 's'},
                                             {"seed", required_argument, NULL, 'S'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    nb_opts o;
    memset(&o, 0, sizeof o);
    o.max_queries = 200;
    o.threads = 2;
    o.obstacles = 40;
    o.crowd_steps = 50;
    o.seed = 1;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end = NULL;
        long v;
        switch (opt) {
        case 'n':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 1) goto bad;
            o.max_queries = (size_t)v;
            break;
        case 't':
            if (strcmp(optarg, "cpu") == 0)
                o.cpu_clock = true;
            else if (strcmp(optarg, "wall") != 0)
                goto bad;
            break;
        case 'T':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 1 || v > 16) goto bad;
            o.threads = (int)v;
            break;
        case 'o':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 0 || v > 100000) goto bad;
            o.obstacles = (int)v;
            break;
        case 's':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < 1 || v > 100000) goto bad;
            o.crowd_steps = (int)v;
            break;
        case 'S':
            o.seed = strtoull(optarg, &end, 0);
            if (!end || *end) goto bad;
            break;
        case 'c': {
            const char *p = optarg;
            o.ncrowd = 0;
            while (*p) {
                v = strtol(p, &end, 10);
                if (end == p || v < 1 || v > 65535 || o.ncrowd == 8) goto bad;
                o.crowd_sizes[o.ncrowd++] = (int)v;
                p = end;
                if (*p == ',')
                    p++;
                else if (*p)
                    goto bad;
            }
            break;
        }
        case 'j':
            o.json = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            goto bad;
        }
    }
    if (optind >= argc) goto bad;
    int rc = 0;
    for (int i = optind; i < argc; i++) {
        int r = bench_file(argv[i], &o);
        if (r > rc) rc = r;
    }
    return rc;
bad:
    usage(stderr);
    return EXIT_USAGE;
}
