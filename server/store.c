/* store.c -- see store.h. */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "router.h"

/* A map's file names have at most this many suffixes (kinds). */
#define MAX_SUFFIXES 8

struct pf_store {
    char *dir;
    const char *suffixes[MAX_SUFFIXES]; /* borrowed */
    size_t nsuffixes;
    uv_mutex_t mu;       /* guards rep */
    pf_store_report rep; /* what the last load found */
};

pf_status pf_store_open(const char *dir, const char *const *suffixes, pf_store **out, char *err,
                        size_t errlen) {
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
    for (size_t i = 0; suffixes && suffixes[i] && i < MAX_SUFFIXES; i++)
        st->suffixes[st->nsuffixes++] = suffixes[i];
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

pf_status pf_store_write(pf_store *st, const char *id, const char *suffix, const unsigned char *buf,
                         size_t len, char *err, size_t errlen) {
    char path[4096], tmp[4160];
    size_t off = 0;
    pf_status s;
    int fd;

    snprintf(path, sizeof(path), "%s/%s%s", st->dir, id, suffix);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return io_error(err, errlen, "creating", tmp);
    while (off < len) {
        ssize_t n = write(fd, buf + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) goto fail;
        off += (size_t)n;
    }
    if (fsync(fd) != 0) goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) goto fail;
    /* A map replaced by another kind leaves no file of the old kind. */
    for (size_t i = 0; i < st->nsuffixes; i++) {
        if (strcmp(st->suffixes[i], suffix) == 0) continue;
        snprintf(path, sizeof(path), "%s/%s%s", st->dir, id, st->suffixes[i]);
        if (unlink(path) != 0 && errno != ENOENT) return io_error(err, errlen, "removing", path);
    }
    return sync_dir(st, err, errlen);
fail:
    s = io_error(err, errlen, "writing", tmp);
    if (fd >= 0) close(fd);
    unlink(tmp);
    return s;
}

pf_status pf_store_remove(pf_store *st, const char *id, char *err, size_t errlen) {
    char path[4096];
    for (size_t i = 0; i < st->nsuffixes; i++) {
        snprintf(path, sizeof(path), "%s/%s%s", st->dir, id, st->suffixes[i]);
        if (unlink(path) != 0 && errno != ENOENT) return io_error(err, errlen, "removing", path);
    }
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

/* The suffix of a map file's name (stem: the id's length), or -1. With
 * tmp, of a temporary file of one ("<id><suffix>.tmp"). */
static int map_suffix(const pf_store *st, const char *name, bool tmp, size_t *stem) {
    size_t nl = strlen(name);
    for (size_t i = 0; i < st->nsuffixes; i++) {
        char s[64];
        snprintf(s, sizeof(s), "%s%s", st->suffixes[i], tmp ? ".tmp" : "");
        if (has_suffix(name, nl, s, stem)) return (int)i;
    }
    return -1;
}

/* The reason a file did not load, as the report says it. */
static void reason_of(const pf_kind_store_error *why, char *out, size_t n) {
    switch (why->fault) {
    case PF_KIND_STORE_DAMAGED:
        snprintf(out, n, "damaged (its digest or layout does not match)");
        break;
    case PF_KIND_STORE_LIMITS:
        snprintf(out, n, "a map past this server's limits (%.100s)", why->e.message);
        break;
    default:
        snprintf(out, n, "%.150s", why->e.message);
        break;
    }
}

size_t pf_store_load_all(pf_store *st, pf_store_load_fn fn, void *ud) {
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
        if (map_suffix(st, names[i], true, &stem) < 0 || !pf_map_id_is_valid(names[i], stem))
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
        char path[4096], moved[128], err[256], id[PF_MAP_ID_MAX + 1], reason[160];
        unsigned char *buf;
        size_t len;
        pf_kind_store_error why;
        pf_status s;
        int k = map_suffix(st, name, false, &stem);
        if (k < 0) continue;
        snprintf(path, sizeof(path), "%s/%s", st->dir, name);
        if (!pf_map_id_is_valid(name, stem)) {
            report(st, &st->rep.skipped, name, NULL, "not a map id");
            continue;
        }
        if (!read_file(path, &buf, &len)) {
            report(st, &st->rep.skipped, name, NULL, "cannot be read: %s", strerror(errno));
            continue;
        }
        memcpy(id, name, stem);
        id[stem] = '\0';
        memset(&why, 0, sizeof(why));
        s = fn(ud, id, st->suffixes[k], buf, len, &why);
        free(buf);
        if (s == PF_OK) {
            loaded++;
            uv_mutex_lock(&st->mu);
            st->rep.loaded++;
            uv_mutex_unlock(&st->mu);
            continue;
        }
        reason_of(&why, reason, sizeof(reason));
        if (why.fault == PF_KIND_STORE_LATER) {
            report(st, &st->rep.skipped, name, NULL, "%s", reason);
            continue;
        }
        if (quarantine(st, name, moved, sizeof(moved), err, sizeof(err)) == PF_OK)
            report(st, &st->rep.quarantined, name, moved, "%s", reason);
        else
            report(st, &st->rep.skipped, name, NULL, "%s; could not quarantine it: %s", reason,
                   err);
    }
out:
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    uv_mutex_lock(&st->mu);
    st->rep.loading = false;
    uv_mutex_unlock(&st->mu);
    return loaded;
}
