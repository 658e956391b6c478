/* common.cpp -- what every file of the nav/ shim uses: errors, names,
 * clocks, the task runner, a build's release, and Detour's assertion hook.
 *
 * nav/ is the only C++ in pathd: a shim over Recast/Detour behind the C
 * contract navmesh.h, C in style (no exceptions, no RTTI, no STL): every
 * allocation is checked, every library status looked at. nav_internal.h
 * lists its files.
 *
 * References: RecastDemo's Sample_TileMesh.cpp (buildTileMesh: the tile
 * pipeline and the tile and polygon bits) and Sample_SoloMesh.cpp (the
 * same over the whole world), Sample.cpp (the settings and their units),
 * NavMeshTesterTool.cpp (findPath / findStraightPath and the partial end
 * point) and CrowdTool.cpp (agent and avoidance settings), at the version
 * Debian packages (1.5.1+git20210215).
 */
#include "nav_internal.h"

#include <DetourAssert.h>
#include <pthread.h>

namespace pfnav {

uint64_t now_us() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t thread_cpu_us() {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void set_err(pf_nav_error *err, const char *field, const char *fmt, ...) {
    if (!err) return;
    snprintf(err->field, sizeof err->field, "%s", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

bool finite3(const float *v) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

bool valid_name(const char *s) {
    if (!s) return false;
    size_t n = strlen(s);
    if (n == 0 || n >= PF_NAV_NAME_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

unsigned int next_pow2(unsigned int v) {
    if (v <= 1) return 1;
    v--;
    v |= v >> 1;
    v |= v >> 2;
    v |= v >> 4;
    v |= v >> 8;
    v |= v >> 16;
    return v + 1;
}

int ilog2(unsigned int v) {
    int r = 0;
    while ((1u << r) < v) r++;
    return r;
}

void base_release(NavBase *b) {
    if (!b) return;
    if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    const uint32_t ntiles = (uint32_t)(b->tw * b->th);
    for (uint32_t t = 0; t < b->nagents; t++) {
        AgentType *at = &b->agents[t];
        if (at->kept)
            for (uint32_t i = 0; i < ntiles; i++) free(at->kept[i].data);
        free(at->kept);
    }
    free(b->agents);
    for (uint32_t i = 0; i < b->nareas; i++) free(b->areas[i].boxes);
    free(b->areas);
    ground_free(&b->ground);
    b->~NavBase();
    free(b);
}

void tile_bounds(const NavBase *b, int tx, int ty, float bmin[3], float bmax[3]) {
    const float cs = b->cfg.cell_size;
    const float pad = (float)b->border * cs;
    if (b->solo) {
        dtVcopy(bmin, b->bmin);
        dtVcopy(bmax, b->bmax);
        return;
    }
    /* Sample_TileMesh: the tile's bounds, grown by the border for the
     * heightfield; rcBuildContours takes the border off again. */
    const float tcs = (float)b->ts * cs;
    bmin[0] = ((b->bmin[0] + (float)tx * tcs) - pad) + pad;
    bmin[1] = b->bmin[1];
    bmin[2] = ((b->bmin[2] + (float)ty * tcs) - pad) + pad;
    bmax[0] = ((b->bmin[0] + (float)(tx + 1) * tcs) + pad) - pad;
    bmax[1] = b->bmax[1];
    bmax[2] = ((b->bmin[2] + (float)(ty + 1) * tcs) + pad) - pad;
}

/* A tile slot of a mesh (dtNavMesh's non-const getTile is private). */
const dtMeshTile *tile_at(const dtNavMesh *nav, int i) { return nav->getTile(i); }

void run_tasks(const pf_nav_runner *run, uint32_t n, pf_nav_task_fn fn, void *arg) {
    if (n == 0) return;
    if (run && run->run) {
        run->run(run->ctx, n, fn, arg);
        return;
    }
    for (uint32_t i = 0; i < n; i++) fn(arg, i);
}

pf_status check_box(const pf_nav_box *bx, pf_nav_error *err, const char *field) {
    if (!finite3(bx->bmin) || !finite3(bx->bmax) || fabsf(bx->bmin[0]) > 1e7f ||
        fabsf(bx->bmin[1]) > 1e7f || fabsf(bx->bmin[2]) > 1e7f || fabsf(bx->bmax[0]) > 1e7f ||
        fabsf(bx->bmax[1]) > 1e7f || fabsf(bx->bmax[2]) > 1e7f) {
        set_err(err, field, "a box needs finite min and max within +-1e7");
        return PF_EINVAL;
    }
    for (int k = 0; k < 3; k++)
        if (!(bx->bmin[k] < bx->bmax[k])) {
            set_err(err, field, "a box's min must be below its max on every axis");
            return PF_EINVAL;
        }
    return PF_OK;
}

namespace {
struct IdAt {
    const char *id;
    size_t at;
};

int cmp_id_at(const void *a, const void *b) {
    const IdAt *x = (const IdAt *)a, *y = (const IdAt *)b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->at < y->at ? -1 : x->at > y->at);
}
} /* namespace */

bool find_duplicate(const char *const *ids, size_t n, size_t *first, size_t *second, bool *oom) {
    *oom = false;
    if (n < 2) return false;
    IdAt *v = (IdAt *)malloc(n * sizeof *v);
    if (!v) {
        *oom = true;
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        v[i].id = ids[i];
        v[i].at = i;
    }
    qsort(v, n, sizeof *v, cmp_id_at);
    bool found = false;
    size_t run = 0; /* where the run of equal ids v[i] is in starts */
    for (size_t i = 1; i < n; i++) {
        if (strcmp(v[i - 1].id, v[i].id) != 0) {
            run = i;
            continue;
        }
        /* Sorted by position within a run: v[run] is the earliest, and
         * v[run + 1] the second, met first here. */
        if (i == run + 1 && (!found || v[i].at < *second)) {
            *first = v[run].at;
            *second = v[i].at;
            found = true;
        }
    }
    free(v);
    return found;
}

/* Debian builds Detour with its assertions on. dtPathCorridor::setCorridor
 * asserts npath < maxPath, one short of what it can hold, and DetourCrowd
 * hands it paths of exactly its 256-polygon limit (a long path through a
 * finely cut mesh): the default assert() would abort the server. That one
 * assertion is known to be harmless (the copy fits) and is counted; any
 * other failed Detour assertion still aborts, as it would have. The hook
 * is process-wide library state, installed once. */
static unsigned long assert_tolerated; /* atomic */

static void detour_assert(const char *expr, const char *file, int line) {
    if (strcmp(expr, "npath < m_maxPath") == 0) {
        __atomic_add_fetch(&assert_tolerated, 1, __ATOMIC_RELAXED);
        return;
    }
    fprintf(stderr, "Detour assertion failed: %s (%s:%d)\n", expr, file, line);
    abort();
}

static pthread_once_t assert_once = PTHREAD_ONCE_INIT;

static void install_assert_hook_once(void) { dtAssertFailSetCustom(detour_assert); }

void install_assert_hook(void) { pthread_once(&assert_once, install_assert_hook_once); }

} /* namespace pfnav */

extern "C" {

unsigned long pf_nav_tolerated_asserts(void) {
    return __atomic_load_n(&pfnav::assert_tolerated, __ATOMIC_RELAXED);
}

} /* extern "C" */
