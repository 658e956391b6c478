/* bench-json.c -- what writing a 300-cell path answer costs with proto/'s
 * streaming writer (pf_path_write_answer) against building and printing a
 * cJSON tree of the same fields, side by side in one process, in thread
 * CPU time (median of 51 rounds of `iters` answers each). `make
 * bench-json` builds and runs it (`make bench` too). The budget was
 * microseconds for ours against ~150 us for the tree. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonw.h"
#include "path_json.h"

enum { ROUNDS = 51, CELLS = 300 };

static double cpu_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 200;
    pf_point pts[CELLS];
    pf_path_answer a;
    double ours[ROUNDS], tree[ROUNDS];
    size_t bytes = 0;
    for (int i = 0; i < CELLS; i++) pts[i] = (pf_point){i, 511 - i};
    memset(&a, 0, sizeof(a));
    a.status = PF_OK;
    a.algorithm = PF_ALGO_HPA;
    a.cost = 423.12345678901234;
    a.path = pts;
    a.path_len = CELLS;
    a.map_version = 3;
    for (int rep = 0; rep < ROUNDS; rep++) {
        double t0 = cpu_us();
        for (long k = 0; k < iters; k++) {
            pf_jsonw w;
            pf_jsonw_init(&w, 4096);
            pf_path_write_answer(&w, &a);
            if (pf_jsonw_failed(&w)) {
                fprintf(stderr, "bench-json: the writer failed\n");
                return 1;
            }
            bytes += w.len;
            pf_jsonw_free(&w);
        }
        ours[rep] = (cpu_us() - t0) / (double)iters;
        t0 = cpu_us();
        for (long k = 0; k < iters; k++) {
            cJSON *root = cJSON_CreateObject(), *arr;
            char *s;
            cJSON_AddBoolToObject(root, "found", 1);
            cJSON_AddNumberToObject(root, "cost", a.cost);
            arr = cJSON_AddArrayToObject(root, "path");
            for (int i = 0; i < CELLS; i++) {
                int xy[2] = {pts[i].x, pts[i].y};
                cJSON_AddItemToArray(arr, cJSON_CreateIntArray(xy, 2));
            }
            s = cJSON_PrintUnformatted(root);
            bytes += strlen(s);
            free(s);
            cJSON_Delete(root);
        }
        tree[rep] = (cpu_us() - t0) / (double)iters;
    }
    qsort(ours, ROUNDS, sizeof(double), cmp);
    qsort(tree, ROUNDS, sizeof(double), cmp);
    printf("bench-json: a %d-cell path answer: jsonw %.2f us, cJSON tree %.2f us (medians of %d "
           "rounds of %ld, thread CPU time); cJSON/jsonw = %.1fx (%zu bytes written)\n",
           CELLS, ours[ROUNDS / 2], tree[ROUNDS / 2], ROUNDS, iters,
           tree[ROUNDS / 2] / ours[ROUNDS / 2], bytes);
    return 0;
}
