/* report.c -- printing the shared benchmark report as a table row or JSON. */
#include "report.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pf_report_init(pf_report *r) {
    memset(r, 0, sizeof(*r));
    r->mean_subopt = r->p99_subopt = r->max_subopt = NAN;
    r->p50_us = r->p90_us = r->p99_us = r->p999_us = r->max_us = r->mean_us = NAN;
    r->rps = r->seconds = NAN;
    r->mean_expanded = r->ns_per_expansion = r->mean_jump_points = NAN;
    r->jps_stop_density = NAN;
    r->build_ms = NAN;
}

void pf_report_add_error(pf_report *r, const char *kind, uint64_t n) {
    int i;
    for (i = 0; i < r->nerror_kinds; i++)
        if (strncmp(r->error_kinds[i].kind, kind, sizeof(r->error_kinds[i].kind) - 1) == 0) break;
    if (i == r->nerror_kinds) {
        if (r->nerror_kinds == PF_REPORT_ERROR_KINDS) {
            /* Full: the last slot becomes the catch-all. */
            i = PF_REPORT_ERROR_KINDS - 1;
            snprintf(r->error_kinds[i].kind, sizeof(r->error_kinds[i].kind), "other");
        } else {
            snprintf(r->error_kinds[i].kind, sizeof(r->error_kinds[i].kind), "%s", kind);
            r->nerror_kinds++;
        }
    }
    r->error_kinds[i].count += n;
}

bool pf_report_clock_from_name(const char *name, clockid_t *out) {
    if (strcmp(name, "cpu") == 0)
        *out = CLOCK_THREAD_CPUTIME_ID;
    else if (strcmp(name, "wall") == 0)
        *out = CLOCK_MONOTONIC;
    else
        return false;
    return true;
}

bool pf_report_bucket_frac(const char *arg, double *out) {
    char *end;
    double f = strtod(arg, &end);
    if (*end || !(f >= 0 && f < 1)) {
        fprintf(stderr, "pathd-bench: --min-bucket-frac wants a number in [0, 1)\n");
        return false;
    }
    *out = f;
    return true;
}

double pf_report_now_us(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int pf_report_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pf_report_median(double *v, size_t n) {
    if (n == 0) return NAN;
    qsort(v, n, sizeof(*v), pf_report_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double pf_report_percentile(const double *sorted, size_t n, double p) {
    size_t rank;
    if (n == 0) return NAN;
    /* Nearest rank: the smallest sample with at least p% of samples <= it. */
    rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

void pf_report_print_header(FILE *f) {
    fprintf(f, "%-16s %-8s %8s %5s %5s %9s %9s %9s %9s %9s %10s %8s  %s\n", "map", "algo",
            "queries", "mism", "inval", "mean_sub", "p99_sub", "max_sub", "p50_us", "p99_us",
            "mean_exp", "ns/exp", "extra");
}

/* A double in a fixed width, or "-" when it was not measured. */
static void put_num(FILE *f, int width, int prec, double v) {
    if (isnan(v))
        fprintf(f, " %*s", width, "-");
    else
        fprintf(f, " %*.*f", width, prec, v);
}

void pf_report_print_row(FILE *f, const pf_report *r) {
    fprintf(f, "%-16.16s %-8.8s %8llu %5llu %5llu", r->map, r->algorithm,
            (unsigned long long)r->queries, (unsigned long long)r->mismatches,
            (unsigned long long)r->invalid);
    put_num(f, 9, 6, r->mean_subopt);
    put_num(f, 9, 6, r->p99_subopt);
    put_num(f, 9, 6, r->max_subopt);
    put_num(f, 9, 1, r->p50_us);
    put_num(f, 9, 1, r->p99_us);
    put_num(f, 10, 1, r->mean_expanded);
    put_num(f, 8, 1, r->ns_per_expansion);
    fputs(" ", f);
    if (!isnan(r->build_ms)) fprintf(f, " build_ms=%.1f", r->build_ms);
    if (r->memory_bytes) fprintf(f, " mem_kb=%.0f", (double)r->memory_bytes / 1024.0);
    if (!isnan(r->mean_jump_points)) fprintf(f, " jump_points=%.1f", r->mean_jump_points);
    if (r->landmarks) fprintf(f, " landmarks=%d lm_ms=%.1f", r->landmarks, r->landmarks_ms);
    if (r->dead_ends > 0) fprintf(f, " dead=%.2f", r->dead_ends);
    if (r->jps_layout[0])
        fprintf(f, " layout=%s tables_kb=%.0f stops=%.2f", r->jps_layout,
                (double)r->jps_table_bytes / 1024.0, r->jps_stop_density);
    if (r->errors) {
        fprintf(f, " errors=%llu", (unsigned long long)r->errors);
        for (int i = 0; i < r->nerror_kinds; i++)
            fprintf(f, "%s%s:%llu", i ? "," : "(", r->error_kinds[i].kind,
                    (unsigned long long)r->error_kinds[i].count);
        if (r->nerror_kinds) fputs(")", f);
    }
    if (r->note[0]) fprintf(f, " NOTE: %s", r->note);
    fputs("\n", f);
}

void pf_report_print_latency(FILE *f, const pf_report *r) {
    fprintf(f, "requests %llu  answered queries %llu  errors %llu", (unsigned long long)r->requests,
            (unsigned long long)r->queries, (unsigned long long)r->errors);
    for (int i = 0; i < r->nerror_kinds; i++)
        fprintf(f, "%s%s:%llu", i ? "," : " (", r->error_kinds[i].kind,
                (unsigned long long)r->error_kinds[i].count);
    if (r->nerror_kinds) fputs(")", f);
    fprintf(f, "  rps %.1f  latency ms p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f max %.3f", r->rps,
            r->p50_us / 1e3, r->p90_us / 1e3, r->p99_us / 1e3, r->p999_us / 1e3, r->max_us / 1e3);
    fprintf(f, "  invalid %llu of %llu checked\n", (unsigned long long)r->invalid,
            (unsigned long long)r->checked);
}

/* NaN becomes null: JSON has no NaN. */
static bool add_num(cJSON *o, const char *key, double v) {
    cJSON *item = isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
    return item && cJSON_AddItemToObject(o, key, item);
}

static double us_to_ms(double us) { return us / 1000.0; }

bool pf_report_print_json(FILE *f, const pf_report *r) {
    cJSON *o = cJSON_CreateObject(), *kinds;
    char *text = NULL;
    bool ok = false;

    if (!o) return false;
    if (!cJSON_AddStringToObject(o, "map", r->map)) goto out_free_obj;
    if (!cJSON_AddStringToObject(o, "algorithm", r->algorithm)) goto out_free_obj;
    if (!add_num(o, "queries", (double)r->queries)) goto out_free_obj;
    if (!add_num(o, "mismatches", (double)r->mismatches)) goto out_free_obj;
    if (!add_num(o, "mean_subopt", r->mean_subopt)) goto out_free_obj;
    if (!add_num(o, "p99_subopt", r->p99_subopt)) goto out_free_obj;
    if (!add_num(o, "max_subopt", r->max_subopt)) goto out_free_obj;
    if (!add_num(o, "p50_us", r->p50_us)) goto out_free_obj;
    if (!add_num(o, "p99_us", r->p99_us)) goto out_free_obj;
    if (!add_num(o, "mean_us", r->mean_us)) goto out_free_obj;
    if (!add_num(o, "mean_expanded", r->mean_expanded)) goto out_free_obj;
    if (!add_num(o, "ns_per_expansion", r->ns_per_expansion)) goto out_free_obj;
    if (!add_num(o, "requests", (double)r->requests)) goto out_free_obj;
    if (!add_num(o, "errors", (double)r->errors)) goto out_free_obj;
    if (!add_num(o, "rps", r->rps)) goto out_free_obj;
    if (!add_num(o, "p50_ms", us_to_ms(r->p50_us))) goto out_free_obj;
    if (!add_num(o, "p90_ms", us_to_ms(r->p90_us))) goto out_free_obj;
    if (!add_num(o, "p99_ms", us_to_ms(r->p99_us))) goto out_free_obj;
    if (!add_num(o, "p999_ms", us_to_ms(r->p999_us))) goto out_free_obj;
    if (!add_num(o, "max_ms", us_to_ms(r->max_us))) goto out_free_obj;
    if (!add_num(o, "invalid", (double)r->invalid)) goto out_free_obj;
    if (!add_num(o, "checked", (double)r->checked)) goto out_free_obj;
    if (!add_num(o, "width", (double)r->map_w)) goto out_free_obj;
    if (!add_num(o, "height", (double)r->map_h)) goto out_free_obj;
    if (!add_num(o, "seconds", r->seconds)) goto out_free_obj;
    kinds = cJSON_AddObjectToObject(o, "errors_by_kind");
    if (!kinds) goto out_free_obj;
    for (int i = 0; i < r->nerror_kinds; i++)
        if (!add_num(kinds, r->error_kinds[i].kind, (double)r->error_kinds[i].count))
            goto out_free_obj;
    if (!isnan(r->build_ms) && !add_num(o, "build_ms", r->build_ms)) goto out_free_obj;
    if (r->memory_bytes && !add_num(o, "memory_bytes", (double)r->memory_bytes)) goto out_free_obj;
    if (!isnan(r->mean_jump_points) && !add_num(o, "jump_points", r->mean_jump_points))
        goto out_free_obj;
    if (r->jps_layout[0] && (!cJSON_AddStringToObject(o, "jps_layout", r->jps_layout) ||
                             !add_num(o, "jps_table_bytes", (double)r->jps_table_bytes) ||
                             !add_num(o, "jps_stop_density", r->jps_stop_density)))
        goto out_free_obj;
    if (r->server_json) {
        cJSON *srv = cJSON_Parse(r->server_json);
        if (srv && !cJSON_AddItemToObject(o, "server", srv)) {
            cJSON_Delete(srv);
            goto out_free_obj;
        }
    }
    if (r->kinds_json) {
        cJSON *k = cJSON_Parse(r->kinds_json);
        if (k && !cJSON_AddItemToObject(o, "latency_by_kind", k)) {
            cJSON_Delete(k);
            goto out_free_obj;
        }
    }
    if (r->session_updates_json) {
        cJSON *u = cJSON_Parse(r->session_updates_json);
        if (u && !cJSON_AddItemToObject(o, "session_updates", u)) {
            cJSON_Delete(u);
            goto out_free_obj;
        }
    }
    if (r->note[0] && !cJSON_AddStringToObject(o, "note", r->note)) goto out_free_obj;
    text = cJSON_PrintUnformatted(o);
    if (!text) goto out_free_obj;
    fprintf(f, "%s\n", text);
    ok = true;
    cJSON_free(text);
out_free_obj:
    cJSON_Delete(o);
    return ok;
}
