/* store.c -- see store.h.
 *
 * File layout, little-endian:
 *   "PATHDMAP" | u32 format (1) | u32 width | u32 height | u8 connectivity |
 *   u8 corner_cutting | u16 0 | u64 version |
 *   width*height cost bytes | width*height wall bytes (bit 0: wall on the
 *   east side, bit 1: south), both as they are now (closed doors included) |
 *   u32 doors, each: u16 name length | name | u8 open | u32 cells |
 *   cells * (i32 x, i32 y, u8 cost when open) | u32 edges |
 *   edges * (i32 x, i32 y, i32 dir) |
 *   SHA-256 of everything before it.
 *
 * Reading declares each door over cells set to their open costs (so the door
 * remembers them, as at its declaration), then puts back every cell's cost
 * and wall as stored: exact even when doors share cells.
 */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "router.h"

#define MAGIC "PATHDMAP"
#define FORMAT 1u
#define SUFFIX ".map.bin"
#define NAV_MAGIC "PATHDNAV"
#define NAV_SUFFIX ".nav.bin"
#define HEADER_BYTES (8 + 4 + 4 + 4 + 4 + 8)

#define TMP_SUFFIX ".map.bin.tmp"
#define NAV_TMP_SUFFIX ".nav.bin.tmp"

struct pf_store {
    char *dir;
    uv_mutex_t mu;       /* guards rep */
    pf_store_report rep; /* what the last load found */
};

/* Writer over a growable buffer; sticky failure. */
typedef struct wbuf {
    unsigned char *b;
    size_t len, cap;
    bool failed;
} wbuf;

static void put(wbuf *w, const void *p, size_t n) {
    if (w->failed) return;
    if (w->len + n > w->cap) {
        size_t nc = w->cap ? w->cap : 4096;
        unsigned char *g;
        while (nc < w->len + n) nc *= 2;
        if (!(g = realloc(w->b, nc))) {
            w->failed = true;
            return;
        }
        w->b = g;
        w->cap = nc;
    }
    memcpy(w->b + w->len, p, n);
    w->len += n;
}

static void put_u(wbuf *w, uint64_t v, int bytes) {
    unsigned char t[8];
    for (int i = 0; i < bytes; i++) t[i] = (unsigned char)(v >> (8 * i));
    put(w, t, (size_t)bytes);
}

static void put_i32(wbuf *w, int32_t v) { put_u(w, (uint32_t)v, 4); }

pf_status pf_store_encode(const pf_grid *g, uint64_t version, unsigned char **out, size_t *len) {
    int32_t W = pf_grid_width(g), H = pf_grid_height(g), nd = pf_grid_door_count(g);
    size_t cells = (size_t)W * (size_t)H;
    wbuf w = {0};
    unsigned char *costs, *walls;
    struct sha256_ctx h;
    unsigned char digest[SHA256_DIGEST_SIZE];

    put(&w, MAGIC, 8);
    put_u(&w, FORMAT, 4);
    put_u(&w, (uint32_t)W, 4);
    put_u(&w, (uint32_t)H, 4);
    put_u(&w, (uint8_t)pf_grid_connectivity(g), 1);
    put_u(&w, pf_grid_corner_cutting(g) ? 1 : 0, 1);
    put_u(&w, 0, 2);
    put_u(&w, version, 8);
    if (!(costs = malloc(cells ? cells : 1)) || !(walls = calloc(cells ? cells : 1, 1))) {
        free(costs);
        free(w.b);
        return PF_ENOMEM;
    }
    for (int32_t y = 0; y < H; y++)
        for (int32_t x = 0; x < W; x++) {
            pf_point p = {x, y};
            costs[(size_t)y * W + x] = pf_grid_cost(g, p);
            if (x + 1 < W && pf_grid_is_wall(g, p, PF_DIR_E)) walls[(size_t)y * W + x] |= 1;
            if (y + 1 < H && pf_grid_is_wall(g, p, PF_DIR_S)) walls[(size_t)y * W + x] |= 2;
        }
    put(&w, costs, cells);
    put(&w, walls, cells);
    free(costs);
    free(walls);
    put_u(&w, (uint32_t)nd, 4);
    for (int32_t d = 0; d < nd; d++) {
        const char *name = pf_grid_door_name(g, d);
        size_t nc, ne;
        const pf_point *c = pf_grid_door_cells(g, d, &nc);
        const pf_edge *e = pf_grid_door_edges(g, d, &ne);
        put_u(&w, strlen(name), 2);
        put(&w, name, strlen(name));
        put_u(&w, pf_grid_door_is_open(g, d) ? 1 : 0, 1);
        put_u(&w, nc, 4);
        for (size_t k = 0; k < nc; k++) {
            put_i32(&w, c[k].x);
            put_i32(&w, c[k].y);
            put_u(&w, pf_grid_door_open_cost(g, d, k), 1);
        }
        put_u(&w, ne, 4);
        for (size_t k = 0; k < ne; k++) {
            put_i32(&w, e[k].a.x);
            put_i32(&w, e[k].a.y);
            put_i32(&w, e[k].dir);
        }
    }
    if (w.failed) {
        free(w.b);
        return PF_ENOMEM;
    }
    sha256_init(&h);
    sha256_update(&h, w.len, w.b);
    sha256_digest(&h, sizeof(digest), digest);
    put(&w, digest, sizeof(digest));
    if (w.failed) {
        free(w.b);
        return PF_ENOMEM;
    }
    *out = w.b;
    *len = w.len;
    return PF_OK;
}

/* Reader: every get checks the bytes are there. */
typedef struct rbuf {
    const unsigned char *b;
    size_t len, pos;
} rbuf;

static bool get(rbuf *r, void *p, size_t n) {
    if (n > r->len - r->pos) return false;
    memcpy(p, r->b + r->pos, n);
    r->pos += n;
    return true;
}

static bool get_u(rbuf *r, uint64_t *v, int bytes) {
    unsigned char t[8];
    if (!get(r, t, (size_t)bytes)) return false;
    *v = 0;
    for (int i = 0; i < bytes; i++) *v |= (uint64_t)t[i] << (8 * i);
    return true;
}

static bool get_i32(rbuf *r, int32_t *v) {
    uint64_t u;
    if (!get_u(r, &u, 4)) return false;
    *v = (int32_t)(uint32_t)u;
    return true;
}

pf_status pf_store_decode(const unsigned char *buf, size_t len, const pf_grid_limits *lim,
                          pf_grid **out, uint64_t *version) {
    rbuf r;
    struct sha256_ctx h;
    unsigned char digest[SHA256_DIGEST_SIZE], magic[8];
    uint64_t fmt, W, H, conn, cut, pad, nd;
    pf_grid *g = NULL;
    pf_status st = PF_EPARSE;
    const unsigned char *costs, *walls;
    size_t cells;

    if (len < HEADER_BYTES + SHA256_DIGEST_SIZE) return PF_EPARSE;
    r.b = buf;
    r.len = len - SHA256_DIGEST_SIZE;
    r.pos = 0;
    sha256_init(&h);
    sha256_update(&h, r.len, buf);
    sha256_digest(&h, sizeof(digest), digest);
    if (memcmp(digest, buf + r.len, sizeof(digest)) != 0) return PF_EPARSE;
    if (!get(&r, magic, 8) || memcmp(magic, MAGIC, 8) != 0) return PF_EPARSE;
    if (!get_u(&r, &fmt, 4) || fmt != FORMAT || !get_u(&r, &W, 4) || !get_u(&r, &H, 4) ||
        !get_u(&r, &conn, 1) || !get_u(&r, &cut, 1) || !get_u(&r, &pad, 2) ||
        !get_u(&r, version, 8))
        return PF_EPARSE;
    if (W > INT32_MAX || H > INT32_MAX) return PF_EPARSE;
    if ((st = pf_grid_create((int32_t)W, (int32_t)H, lim, &g))) return st;
    if ((st = pf_grid_set_rules(g, (int)conn, cut != 0))) goto fail;
    st = PF_EPARSE;
    cells = (size_t)W * (size_t)H;
    if (2 * cells > r.len - r.pos) goto fail;
    costs = r.b + r.pos;
    walls = costs + cells;
    r.pos += 2 * cells;
    for (size_t i = 0; i < cells; i++) /* no other bits, no wall off the map's edge */
        if ((walls[i] & ~3u) || ((walls[i] & 1) && i % W == W - 1) ||
            ((walls[i] & 2) && i / W == H - 1))
            goto fail;
    if (!get_u(&r, &nd, 4)) goto fail;
    for (uint64_t d = 0; d < nd; d++) {
        char name[PF_DOOR_NAME_MAX];
        uint64_t nl, open, nc, ne, cost;
        pf_point *c = NULL;
        pf_edge *e = NULL;
        int32_t index;
        bool ok;
        if (!get_u(&r, &nl, 2) || nl >= sizeof(name) || !get(&r, name, nl)) goto fail;
        name[nl] = '\0';
        if (!get_u(&r, &open, 1) || !get_u(&r, &nc, 4) || nc > (r.len - r.pos) / 9) goto fail;
        if (!(c = malloc((nc ? nc : 1) * sizeof(*c)))) {
            st = PF_ENOMEM;
            goto fail;
        }
        ok = true;
        for (uint64_t k = 0; ok && k < nc; k++)
            ok = get_i32(&r, &c[k].x) && get_i32(&r, &c[k].y) && get_u(&r, &cost, 1) &&
                 pf_grid_set_cost(g, c[k], (uint8_t)cost) == PF_OK;
        ok = ok && get_u(&r, &ne, 4) && ne <= (r.len - r.pos) / 12;
        if (ok && !(e = malloc((ne ? ne : 1) * sizeof(*e)))) {
            free(c);
            st = PF_ENOMEM;
            goto fail;
        }
        for (uint64_t k = 0; ok && k < ne; k++)
            ok = get_i32(&r, &e[k].a.x) && get_i32(&r, &e[k].a.y) && get_i32(&r, &e[k].dir);
        ok = ok && pf_grid_add_door(g, name, c, nc, e, ne, open != 0, &index) == PF_OK;
        free(c);
        free(e);
        if (!ok) goto fail;
    }
    for (size_t i = 0; i < cells; i++) {
        pf_point p = {(int32_t)(i % W), (int32_t)(i / W)};
        if (pf_grid_set_cost(g, p, costs[i])) goto fail;
        if (p.x + 1 < (int32_t)W && pf_grid_set_wall(g, p, PF_DIR_E, walls[i] & 1)) goto fail;
        if (p.y + 1 < (int32_t)H && pf_grid_set_wall(g, p, PF_DIR_S, (walls[i] & 2) != 0))
            goto fail;
    }
    if (r.pos != r.len) goto fail;
    *out = g;
    return PF_OK;
fail:
    pf_grid_destroy(g);
    return st;
}

pf_status pf_store_encode_nav(const char *bytes, size_t n, uint64_t version, unsigned char **out,
                              size_t *len) {
    wbuf w = {0};
    struct sha256_ctx h;
    unsigned char digest[SHA256_DIGEST_SIZE];
    put(&w, NAV_MAGIC, 8);
    put_u(&w, FORMAT, 4);
    put_u(&w, version, 8);
    put_u(&w, n, 8);
    put(&w, bytes, n);
    if (!w.failed) {
        sha256_init(&h);
        sha256_update(&h, w.len, w.b);
        sha256_digest(&h, sizeof(digest), digest);
        put(&w, digest, sizeof(digest));
    }
    if (w.failed) {
        free(w.b);
        return PF_ENOMEM;
    }
    *out = w.b;
    *len = w.len;
    return PF_OK;
}

pf_status pf_store_decode_nav(const unsigned char *buf, size_t len, const char **bytes, size_t *n,
                              uint64_t *version) {
    rbuf r;
    struct sha256_ctx h;
    unsigned char digest[SHA256_DIGEST_SIZE], magic[8];
    uint64_t fmt, blen;
    if (len < 8 + 4 + 8 + 8 + SHA256_DIGEST_SIZE) return PF_EPARSE;
    r.b = buf;
    r.len = len - SHA256_DIGEST_SIZE;
    r.pos = 0;
    sha256_init(&h);
    sha256_update(&h, r.len, buf);
    sha256_digest(&h, sizeof(digest), digest);
    if (memcmp(digest, buf + r.len, sizeof(digest)) != 0) return PF_EPARSE;
    if (!get(&r, magic, 8) || memcmp(magic, NAV_MAGIC, 8) != 0 || !get_u(&r, &fmt, 4) ||
        fmt != FORMAT || !get_u(&r, version, 8) || !get_u(&r, &blen, 8) || blen != r.len - r.pos)
        return PF_EPARSE;
    *bytes = (const char *)(r.b + r.pos);
    *n = (size_t)blen;
    return PF_OK;
}

pf_status pf_store_open(const char *dir, pf_store **out, char *err, size_t errlen) {
    struct stat sb;
    pf_store *st;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "--data-dir %s: %s", dir, strerror(errno));
        return PF_EINVAL;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(dir, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "--data-dir %s: not a writable directory", dir);
        return PF_EINVAL;
    }
    if (!(st = calloc(1, sizeof(*st))) || !(st->dir = strdup(dir))) {
        free(st);
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    if (uv_mutex_init(&st->mu)) {
        free(st->dir);
        free(st);
        snprintf(err, errlen, "out of memory");
        return PF_ENOMEM;
    }
    *out = st;
    return PF_OK;
}

void pf_store_close(pf_store *st) {
    if (!st) return;
    uv_mutex_destroy(&st->mu);
    free(st->dir);
    free(st);
}

void pf_store_get_report(pf_store *st, pf_store_report *out) {
    uv_mutex_lock(&st->mu);
    *out = st->rep;
    uv_mutex_unlock(&st->mu);
}

const char *pf_store_dir(const pf_store *st) { return st->dir; }

static pf_status io_error(char *err, size_t errlen, const char *what, const char *path) {
    snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
    return PF_EIO;
}

static pf_status sync_dir(const pf_store *st, char *err, size_t errlen) {
    int fd = open(st->dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || fsync(fd) != 0) {
        pf_status s = io_error(err, errlen, "syncing", st->dir);
        if (fd >= 0) close(fd);
        return s;
    }
    close(fd);
    return PF_OK;
}

/* Writes buf[0..len) as DIR/<id><suffix> atomically, then removes the
 * other kind's file of the id (other_suffix). Frees buf. */
static pf_status write_image(pf_store *st, const char *id, const char *suffix,
                             const char *other_suffix, unsigned char *buf, size_t len, char *err,
                             size_t errlen) {
    char path[4096], tmp[4160];
    size_t off = 0;
    pf_status s;
    int fd;

    snprintf(path, sizeof(path), "%s/%s%s", st->dir, id, suffix);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
        free(buf);
        return io_error(err, errlen, "creating", tmp);
    }
    while (off < len) {
        ssize_t n = write(fd, buf + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) goto fail;
        off += (size_t)n;
    }
    if (fsync(fd) != 0) goto fail;
    free(buf);
    buf = NULL;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) goto fail;
    /* A map replaced by the other kind leaves no file of the old kind. */
    snprintf(path, sizeof(path), "%s/%s%s", st->dir, id, other_suffix);
    if (unlink(path) != 0 && errno != ENOENT) return io_error(err, errlen, "removing", path);
    return sync_dir(st, err, errlen);
fail:
    s = io_error(err, errlen, "writing", tmp);
    if (fd >= 0) close(fd);
    unlink(tmp);
    free(buf);
    return s;
}

pf_status pf_store_write(pf_store *st, const char *id, uint64_t version, const pf_grid *g,
                         char *err, size_t errlen) {
    unsigned char *buf;
    size_t len;
    pf_status s;
    if ((s = pf_store_encode(g, version, &buf, &len))) {
        snprintf(err, errlen, "out of memory");
        return s;
    }
    return write_image(st, id, SUFFIX, NAV_SUFFIX, buf, len, err, errlen);
}

pf_status pf_store_write_nav(pf_store *st, const char *id, uint64_t version, const char *bytes,
                             size_t n, char *err, size_t errlen) {
    unsigned char *buf;
    size_t len;
    pf_status s;
    if ((s = pf_store_encode_nav(bytes, n, version, &buf, &len))) {
        snprintf(err, errlen, "out of memory");
        return s;
    }
    return write_image(st, id, NAV_SUFFIX, SUFFIX, buf, len, err, errlen);
}

pf_status pf_store_remove(pf_store *st, const char *id, char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s" SUFFIX, st->dir, id);
    if (unlink(path) != 0 && errno != ENOENT) return io_error(err, errlen, "removing", path);
    snprintf(path, sizeof(path), "%s/%s" NAV_SUFFIX, st->dir, id);
    if (unlink(path) != 0 && errno != ENOENT) return io_error(err, errlen, "removing", path);
    return sync_dir(st, err, errlen);
}

static bool read_file(const char *path, unsigned char **out, size_t *len) {
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long n;
    bool ok = false;
    if (!f) return false;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n) {
        *out = b;
        *len = (size_t)n;
        ok = true;
    }
    if (!ok) free(b);
    fclose(f);
    return ok;
}

static bool has_suffix(const char *name, size_t nl, const char *suffix, size_t *stem) {
    size_t sl = strlen(suffix);
    if (nl <= sl || strcmp(name + nl - sl, suffix) != 0) return false;
    *stem = nl - sl;
    return true;
}

/* Records one file the start could not use, and says so on stderr.
 * counter points into st->rep. */
static void report(pf_store *st, size_t *counter, const char *file, const char *moved_to,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void report(pf_store *st, size_t *counter, const char *file, const char *moved_to,
                   const char *fmt, ...) {
    va_list ap;
    char reason[sizeof(((pf_store_issue *)0)->reason)];
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (moved_to && *moved_to)
        fprintf(stderr, "pathd: %s/%s: %s; moved to %s/%s\n", st->dir, file, reason, st->dir,
                moved_to);
    else
        fprintf(stderr, "pathd: %s/%s: %s; left in place\n", st->dir, file, reason);
    uv_mutex_lock(&st->mu);
    (*counter)++;
    if (st->rep.nissues < PF_STORE_ISSUES_MAX) {
        pf_store_issue *is = &st->rep.issues[st->rep.nissues++];
        snprintf(is->file, sizeof(is->file), "%s", file);
        snprintf(is->moved_to, sizeof(is->moved_to), "%s", moved_to ? moved_to : "");
        snprintf(is->reason, sizeof(is->reason), "%s", reason);
    }
    uv_mutex_unlock(&st->mu);
}

static int sync_path(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY), rc;
    if (fd < 0) return -1;
    rc = fsync(fd);
    close(fd);
    return rc;
}

/* Moves DIR/file to DIR/quarantine/file.<UTC time>[-k]; the name it got
 * (relative to DIR) goes to moved. PF_EIO with errno's sentence in err. */
static pf_status quarantine(pf_store *st, const char *file, char *moved, size_t cap, char *err,
                            size_t errlen) {
    char qdir[4096], from[4096], to[4300], stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    struct stat sb;
    snprintf(qdir, sizeof(qdir), "%s/" PF_STORE_QUARANTINE, st->dir);
    snprintf(from, sizeof(from), "%s/%s", st->dir, file);
    if (mkdir(qdir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "creating " PF_STORE_QUARANTINE "/: %s", strerror(errno));
        return PF_EIO;
    }
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    for (int k = 0;; k++) {
        if (k == 0)
            snprintf(moved, cap, PF_STORE_QUARANTINE "/%s.%s", file, stamp);
        else
            snprintf(moved, cap, PF_STORE_QUARANTINE "/%s.%s-%d", file, stamp, k);
        snprintf(to, sizeof(to), "%s/%s", st->dir, moved);
        if (lstat(to, &sb) != 0 && errno == ENOENT) break;
        if (k == 1000) {
            snprintf(err, errlen, "no free name in " PF_STORE_QUARANTINE "/");
            return PF_EIO;
        }
    }
    if (rename(from, to) != 0) {
        snprintf(err, errlen, "moving it: %s", strerror(errno));
        return PF_EIO;
    }
    /* Both directories changed; a crash now must not bring the file back
     * (or lose it), so both are synced. */
    if (sync_path(qdir) != 0 || sync_path(st->dir) != 0) {
        snprintf(err, errlen, "syncing after the move: %s", strerror(errno));
        return PF_EIO;
    }
    return PF_OK;
}

/* The names in DIR, read before anything in it is renamed or removed
 * (readdir over a changing directory may skip or repeat entries). */
static char **list_dir(const char *dir, size_t *n) {
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t cap = 0;
    *n = 0;
    if (!d) return NULL;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            char **g = realloc(names, nc * sizeof(*g));
            if (!g) break;
            names = g;
            cap = nc;
        }
        if (!(names[*n] = strdup(de->d_name))) break;
        (*n)++;
    }
    closedir(d);
    if (!names) names = calloc(1, sizeof(*names));
    return names;
}

size_t pf_store_load_all(pf_store *st, const pf_grid_limits *lim, pf_store_load_fn fn,
                         pf_store_load_nav_fn fn_nav, void *ud) {
    size_t n = 0, loaded = 0, stem;
    char **names;
    uv_mutex_lock(&st->mu);
    memset(&st->rep, 0, sizeof(st->rep));
    st->rep.loading = true;
    uv_mutex_unlock(&st->mu);
    if (!(names = list_dir(st->dir, &n))) {
        fprintf(stderr, "pathd: --data-dir %s: %s\n", st->dir, strerror(errno));
        goto out;
    }
    /* First the temporary files a crash left: the rename never happened,
     * so the map file beside one (if any) is the map. */
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        if ((!has_suffix(names[i], strlen(names[i]), TMP_SUFFIX, &stem) &&
             !has_suffix(names[i], strlen(names[i]), NAV_TMP_SUFFIX, &stem)) ||
            !pf_map_id_is_valid(names[i], stem))
            continue;
        snprintf(path, sizeof(path), "%s/%s", st->dir, names[i]);
        if (unlink(path) == 0) {
            fprintf(stderr, "pathd: removed %s, a temporary file left by an earlier run\n", path);
            uv_mutex_lock(&st->mu);
            st->rep.temp_removed++;
            uv_mutex_unlock(&st->mu);
        } else if (errno != ENOENT) {
            report(st, &st->rep.skipped, names[i], NULL, "a stale temporary file: %s",
                   strerror(errno));
        }
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        char path[4096], moved[128], err[256];
        unsigned char *buf;
        size_t len;
        uint64_t version;
        pf_grid *g;
        pf_status s;
        bool nav = has_suffix(name, strlen(name), NAV_SUFFIX, &stem);
        if (!nav && !has_suffix(name, strlen(name), SUFFIX, &stem)) continue;
        snprintf(path, sizeof(path), "%s/%s", st->dir, name);
        if (!pf_map_id_is_valid(name, stem)) {
            report(st, &st->rep.skipped, name, NULL, "not a map id");
            continue;
        }
        if (!read_file(path, &buf, &len)) {
            report(st, &st->rep.skipped, name, NULL, "cannot be read: %s", strerror(errno));
            continue;
        }
        if (nav) {
            /* A navmesh: its envelope, built by fn_nav as an upload is. */
            const char *bytes;
            size_t nb;
            char id[PF_MAP_ID_MAX + 1], why[160] = "";
            memcpy(id, name, stem);
            id[stem] = '\0';
            s = pf_store_decode_nav(buf, len, &bytes, &nb, &version);
            if (s == PF_OK)
                s = fn_nav(ud, id, version, bytes, nb, why, sizeof(why));
            else
                snprintf(why, sizeof(why), "damaged (its digest or layout does not match)");
            free(buf);
            if (s == PF_ECANCELED) {
                report(st, &st->rep.skipped, name, NULL, "%s", why);
                continue;
            }
            if (s) {
                if (quarantine(st, name, moved, sizeof(moved), err, sizeof(err)) == PF_OK)
                    report(st, &st->rep.quarantined, name, moved, "%s", why);
                else
                    report(st, &st->rep.skipped, name, NULL, "%s; could not quarantine it: %s", why,
                           err);
                continue;
            }
            loaded++;
            uv_mutex_lock(&st->mu);
            st->rep.loaded++;
            uv_mutex_unlock(&st->mu);
            continue;
        }
        s = pf_store_decode(buf, len, lim, &g, &version);
        free(buf);
        if (s == PF_ENOMEM) {
            report(st, &st->rep.skipped, name, NULL, "out of memory while loading it");
            continue;
        }
        if (s) {
            const char *why = s == PF_EPARSE ? "damaged (its digest or layout does not match)"
                              : s == PF_ELIMIT
                                  ? "a map past this server's limits (--max-map-cells, "
                                    "--max-map-side)"
                                  : pf_status_str(s);
            if (quarantine(st, name, moved, sizeof(moved), err, sizeof(err)) == PF_OK)
                report(st, &st->rep.quarantined, name, moved, "%s", why);
            else
                report(st, &st->rep.skipped, name, NULL, "%s; could not quarantine it: %s", why,
                       err);
            continue;
        }
        {
            char id[PF_MAP_ID_MAX + 1];
            memcpy(id, name, stem);
            id[stem] = '\0';
            fn(ud, id, version, g);
        }
        loaded++;
        uv_mutex_lock(&st->mu);
        st->rep.loaded++;
        uv_mutex_unlock(&st->mu);
    }
out:
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    uv_mutex_lock(&st->mu);
    st->rep.loading = false;
    uv_mutex_unlock(&st->mu);
    return loaded;
}
