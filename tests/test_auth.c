/* test_auth.c -- the token file (server/auth.c): parsing, scopes, the
 * Authorization header, checks, reload, and checks racing reloads. */
#include <check.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "testutil.h"

#define TOK_R "readtoken-0123456789abcdef"
#define TOK_W "writetoken+0123456789/ABC=="

static pf_auth_table *parse_ok(const char *text) {
    pf_auth_table *t = NULL;
    char err[256] = "";
    pf_status st = pf_auth_table_parse(text, strlen(text), &t, err, sizeof(err));
    ck_assert_msg(st == PF_OK, "parse failed: %s", err);
    return t;
}

/* Parses text, which must fail with status st and a message starting with
 * `prefix` that never holds `secret`. */
static void parse_bad(const char *text, size_t len, pf_status st, const char *prefix,
                      const char *secret) {
    pf_auth_table *t = (pf_auth_table *)1;
    char err[256] = "";
    ck_assert_int_eq(pf_auth_table_parse(text, len, &t, err, sizeof(err)), st);
    ck_assert_ptr_null(t);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "'%s' does not start with '%s'", err,
                  prefix);
    if (secret) ck_assert_msg(!strstr(err, secret), "the message shows the token: %s", err);
}

static pf_auth_result check(const pf_auth_table *t, const char *hdr, pf_scope *sc) {
    pf_auth_id id;
    return pf_auth_table_check(t, hdr, sc, &id);
}

START_TEST(auth_parse_scopes_comments_crlf) {
    pf_auth_table *t =
        parse_ok("# fleet tokens\r\n\r\nread " TOK_R "\r\n  write\t" TOK_W "  \r\n   # indented\n"
                 "read " TOK_R "x");
    size_t nr, nw;
    pf_scope sc = PF_SCOPE_OPEN;
    pf_auth_table_counts(t, &nr, &nw);
    ck_assert_uint_eq(nr, 2);
    ck_assert_uint_eq(nw, 1);
    ck_assert_int_eq(check(t, "Bearer " TOK_R, &sc), PF_AUTH_OK);
    ck_assert_int_eq(sc, PF_SCOPE_READ);
    ck_assert_int_eq(check(t, "Bearer " TOK_W, &sc), PF_AUTH_OK);
    ck_assert_int_eq(sc, PF_SCOPE_WRITE);
    ck_assert_int_eq(check(t, "Bearer " TOK_R "x", &sc), PF_AUTH_OK);
    ck_assert_int_eq(sc, PF_SCOPE_READ);
    pf_auth_table_free(t);
}
END_TEST

/* Every wrong line is refused with its number, and the message never holds
 * the token. */
START_TEST(auth_parse_errors_name_the_line) {
    parse_bad("", 0, PF_EPARSE, "no token", NULL);
    parse_bad("# only a comment\n\n", 18, PF_EPARSE, "no token", NULL);
    parse_bad("read " TOK_R "\nadmin " TOK_W "\n", strlen("read " TOK_R "\nadmin " TOK_W "\n"),
              PF_EPARSE, "line 2: the scope", TOK_W);
    parse_bad("READ " TOK_R, strlen("READ " TOK_R), PF_EPARSE, "line 1: the scope", TOK_R);
    parse_bad("\n\nread\n", 7, PF_EPARSE, "line 3: the token is missing", NULL);
    parse_bad("read short1234567", 17, PF_EPARSE, "line 1: the token is shorter", "short1234567");
    parse_bad("read " TOK_R " extra", strlen("read " TOK_R " extra"), PF_EPARSE,
              "line 1: unexpected text", TOK_R);
    parse_bad("read " TOK_R "\"quote", strlen("read " TOK_R "\"quote"), PF_EPARSE,
              "line 1: the token holds", TOK_R);
    parse_bad("read abc==def0123456789012", 26, PF_EPARSE, "line 1: the token holds", "abc==def");
    parse_bad("read " TOK_R "\nwrite " TOK_R "\n", strlen("read " TOK_R "\nwrite " TOK_R "\n"),
              PF_EPARSE, "line 2: this token is listed twice", TOK_R);
    {
        /* A NUL inside a line. */
        char b[] = "read " TOK_R "\nread " TOK_W;
        size_t len = sizeof(b) - 1;
        b[strlen("read " TOK_R "\nread ") + 3] = '\0';
        parse_bad(b, len, PF_EPARSE, "line 2: a NUL byte", NULL);
    }
    {
        /* Longest token accepted, one more refused. */
        char b[PF_AUTH_TOKEN_MAX + 16];
        pf_auth_table *t;
        memcpy(b, "write ", 6);
        memset(b + 6, 'k', PF_AUTH_TOKEN_MAX);
        b[6 + PF_AUTH_TOKEN_MAX] = '\0';
        t = parse_ok(b);
        pf_auth_table_free(t);
        b[6 + PF_AUTH_TOKEN_MAX] = 'k';
        b[7 + PF_AUTH_TOKEN_MAX] = '\0';
        parse_bad(b, strlen(b), PF_EPARSE, "line 1: the token is longer", NULL);
    }
}
END_TEST

/* PF_AUTH_TOKENS_MAX tokens are accepted, one more is PF_ELIMIT. */
START_TEST(auth_parse_token_limit) {
    size_t n = PF_AUTH_TOKENS_MAX + 1, len = 0;
    char *b = malloc(n * 32);
    pf_auth_table *t = NULL;
    char err[256];
    for (size_t i = 0; i < n; i++) len += (size_t)sprintf(b + len, "read tok-%020zu\n", i);
    ck_assert_int_eq(pf_auth_table_parse(b, len, &t, err, sizeof(err)), PF_ELIMIT);
    {
        char want[32];
        snprintf(want, sizeof(want), "line %d:", PF_AUTH_TOKENS_MAX + 1);
        ck_assert_msg(strstr(err, want) != NULL, "%s", err);
    }
    len -= strlen("read tok-00000000000000000000\n"); /* every line is as long */
    ck_assert_int_eq(pf_auth_table_parse(b, len, &t, err, sizeof(err)), PF_OK);
    pf_auth_table_free(t);
    free(b);
}
END_TEST

START_TEST(auth_bearer_header_forms) {
    pf_auth_table *t = parse_ok("read " TOK_R "\nwrite " TOK_W "\n");
    pf_scope sc;
    size_t n;
    const char *tok;
    ck_assert_int_eq(check(t, NULL, &sc), PF_AUTH_MISSING);
    /* The scheme without case, any run of spaces, trailing blanks. */
    ck_assert_int_eq(check(t, "bearer " TOK_R, &sc), PF_AUTH_OK);
    ck_assert_int_eq(check(t, "BEARER    " TOK_R " \t", &sc), PF_AUTH_OK);
    tok = pf_auth_bearer("Bearer  " TOK_W "  ", &n);
    ck_assert_ptr_nonnull(tok);
    ck_assert_uint_eq(n, strlen(TOK_W));
    ck_assert(strncmp(tok, TOK_W, n) == 0);
    /* Not a bearer credential. */
    ck_assert_int_eq(check(t, "", &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, "Bearer", &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, "Bearer ", &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, "Bearer\t" TOK_R, &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, "Bearertoken" TOK_R, &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, "Basic dXNlcjpwYXNz", &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, TOK_R, &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, "Bearer " TOK_R " " TOK_W, &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, "Bearer " TOK_R ",", &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, "Bearer =abc", &sc), PF_AUTH_MALFORMED);
    ck_assert_int_eq(check(t, "Bearer \xc3\xa9t\xc3\xa9", &sc), PF_AUTH_MALFORMED);
    pf_auth_table_free(t);
}
END_TEST

/* Only the exact token passes: not a prefix, an extension, one changed
 * character, another case; the id is the first bytes of its SHA-256. */
START_TEST(auth_check_exact_token_and_id) {
    pf_auth_table *t = parse_ok("read " TOK_R "\nwrite " TOK_W "\n");
    const char *good = "Bearer " TOK_R;
    char buf[128];
    pf_scope sc;
    pf_auth_id id, id2;
    uint8_t d[SHA256_DIGEST_SIZE];
    struct sha256_ctx h;
    ck_assert_int_eq(pf_auth_table_check(t, good, &sc, &id), PF_AUTH_OK);
    sha256_init(&h);
    sha256_update(&h, strlen(TOK_R), (const uint8_t *)TOK_R);
    sha256_digest(&h, sizeof(d), d);
    ck_assert(memcmp(id.b, d, sizeof(id.b)) == 0);
    ck_assert_int_eq(pf_auth_table_check(t, "Bearer " TOK_W, &sc, &id2), PF_AUTH_OK);
    ck_assert(!pf_auth_id_equal(&id, &id2));
    for (size_t i = strlen("Bearer "); i < strlen(good); i++) {
        snprintf(buf, sizeof(buf), "%s", good);
        buf[i] = buf[i] == 'a' ? 'b' : 'a';
        ck_assert_int_eq(check(t, buf, &sc), PF_AUTH_UNKNOWN);
        snprintf(buf, sizeof(buf), "%.*s", (int)i, good); /* a prefix */
        if (i > strlen("Bearer ")) ck_assert_int_eq(check(t, buf, &sc), PF_AUTH_UNKNOWN);
    }
    ck_assert_int_eq(check(t, "Bearer " TOK_R "a", &sc), PF_AUTH_UNKNOWN);
    ck_assert_int_eq(check(t, "Bearer READTOKEN-0123456789ABCDEF", &sc), PF_AUTH_UNKNOWN);
    pf_auth_table_free(t);
}
END_TEST

START_TEST(auth_scope_allows) {
    ck_assert(pf_scope_allows(PF_SCOPE_OPEN, PF_SCOPE_OPEN));
    ck_assert(!pf_scope_allows(PF_SCOPE_OPEN, PF_SCOPE_READ));
    ck_assert(pf_scope_allows(PF_SCOPE_READ, PF_SCOPE_READ));
    ck_assert(!pf_scope_allows(PF_SCOPE_READ, PF_SCOPE_WRITE));
    ck_assert(pf_scope_allows(PF_SCOPE_WRITE, PF_SCOPE_READ));
    ck_assert(pf_scope_allows(PF_SCOPE_WRITE, PF_SCOPE_WRITE));
    ck_assert_str_eq(pf_scope_name(PF_SCOPE_WRITE), "write");
}
END_TEST

/* Random files: a token may sit among random junk lines; whatever the
 * parser says, a refusal never shows a token, and an accepted file accepts
 * exactly its tokens. */
START_TEST(auth_parse_random_files) {
    uint64_t rng = tu_seed("auth_parse_random_files", 0xa17a17);
    static const char alpha[] = "abcXYZ019-._~+/= \t#\r\"x";
    for (int it = 0; it < 2000; it++) {
        char buf[2048], toks[8][64], err[256];
        size_t len = 0, ntok = 0;
        int lines = 1 + (int)tu_below(&rng, 8);
        pf_auth_table *t = NULL;
        pf_status st;
        for (int l = 0; l < lines; l++) {
            if (tu_below(&rng, 3) == 0) { /* junk */
                int n = (int)tu_below(&rng, 40);
                for (int k = 0; k < n; k++) buf[len++] = alpha[tu_below(&rng, sizeof(alpha) - 1)];
            } else {
                int n = 16 + (int)tu_below(&rng, 40);
                char *tk = toks[ntok < 8 ? ntok : 7];
                for (int k = 0; k < n; k++)
                    tk[k] = "ABCDEFGHabcdefgh0123456789-._~+/"[tu_below(&rng, 32)];
                tk[n] = '\0';
                len +=
                    (size_t)sprintf(buf + len, "%s %s", tu_below(&rng, 2) ? "read" : "write", tk);
                if (ntok < 8) ntok++;
            }
            buf[len++] = '\n';
        }
        st = pf_auth_table_parse(buf, len, &t, err, sizeof(err));
        if (st) {
            ck_assert(strncmp(err, "line ", 5) == 0 || strncmp(err, "no token", 8) == 0);
            for (size_t k = 0; k < ntok; k++) ck_assert(!strstr(err, toks[k]));
            continue;
        }
        for (size_t k = 0; k < ntok; k++) {
            char hdr[96];
            pf_scope sc;
            snprintf(hdr, sizeof(hdr), "Bearer %s", toks[k]);
            ck_assert_int_eq(check(t, hdr, &sc), PF_AUTH_OK);
        }
        pf_auth_table_free(t);
    }
}
END_TEST

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static char *temp_file(void) {
    char *p = strdup("/tmp/pathd-auth-XXXXXX");
    int fd = mkstemp(p);
    ck_assert_int_ge(fd, 0);
    close(fd);
    return p;
}

/* A reload replaces the tokens at once; a broken file keeps the old ones. */
START_TEST(auth_reload_replaces_or_keeps) {
    char *path = temp_file(), err[512];
    pf_auth *a = NULL;
    pf_scope sc;
    size_t nr, nw;
    write_text(path, "read " TOK_R "\n");
    ck_assert_int_eq(pf_auth_open(path, &a, err, sizeof(err)), PF_OK);
    ck_assert_str_eq(pf_auth_path(a), path);
    ck_assert_int_eq(pf_auth_check(a, "Bearer " TOK_R, &sc, NULL), PF_AUTH_OK);
    ck_assert_int_eq(pf_auth_check(a, "Bearer " TOK_W, &sc, NULL), PF_AUTH_UNKNOWN);

    write_text(path, "write " TOK_W "\n");
    ck_assert_int_eq(pf_auth_reload(a, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(pf_auth_check(a, "Bearer " TOK_R, &sc, NULL), PF_AUTH_UNKNOWN);
    ck_assert_int_eq(pf_auth_check(a, "Bearer " TOK_W, &sc, NULL), PF_AUTH_OK);
    ck_assert_int_eq(sc, PF_SCOPE_WRITE);

    write_text(path, "write " TOK_W "\nsuper " TOK_R "\n");
    ck_assert_int_eq(pf_auth_reload(a, err, sizeof(err)), PF_EPARSE);
    ck_assert_msg(strstr(err, path) && strstr(err, "line 2"), "%s", err);
    ck_assert(!strstr(err, TOK_R) && !strstr(err, TOK_W));
    ck_assert_int_eq(pf_auth_check(a, "Bearer " TOK_W, &sc, NULL), PF_AUTH_OK);
    pf_auth_counts(a, &nr, &nw);
    ck_assert_uint_eq(nr + nw, 1);

    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(pf_auth_reload(a, err, sizeof(err)), PF_EINVAL);
    ck_assert(strstr(err, "No such file") != NULL);
    ck_assert_int_eq(pf_auth_check(a, "Bearer " TOK_W, &sc, NULL), PF_AUTH_OK);
    pf_auth_close(a);
    pf_auth_close(NULL);

    ck_assert_int_eq(pf_auth_open(path, &a, err, sizeof(err)), PF_EINVAL);
    ck_assert_ptr_null(a);
    ck_assert_int_eq(pf_auth_open("/tmp", &a, err, sizeof(err)), PF_EINVAL);
    ck_assert(strstr(err, "not a regular file") != NULL);
    free(path);
}
END_TEST

typedef struct race {
    pf_auth *a;
    atomic_bool stop;
    atomic_long bad, checks;
} race;

/* TOK_R is in every version of the file, TOK_W in every other one: a check
 * always finds TOK_R, and finds TOK_W with scope write or not at all. */
static void *race_checker(void *arg) {
    race *r = arg;
    while (!atomic_load(&r->stop)) {
        pf_scope sc = PF_SCOPE_OPEN;
        pf_auth_result res;
        if (pf_auth_check(r->a, "Bearer " TOK_R, &sc, NULL) != PF_AUTH_OK || sc != PF_SCOPE_READ)
            atomic_fetch_add(&r->bad, 1);
        res = pf_auth_check(r->a, "Bearer " TOK_W, &sc, NULL);
        if (!(res == PF_AUTH_UNKNOWN || (res == PF_AUTH_OK && sc == PF_SCOPE_WRITE)))
            atomic_fetch_add(&r->bad, 1);
        atomic_fetch_add(&r->checks, 1);
    }
    return NULL;
}

START_TEST(auth_checks_race_reloads) {
    char *path = temp_file(), err[512];
    pthread_t th[2];
    race r;
    memset(&r, 0, sizeof(r));
    write_text(path, "read " TOK_R "\n");
    ck_assert_int_eq(pf_auth_open(path, &r.a, err, sizeof(err)), PF_OK);
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, race_checker, &r);
    for (int i = 0; i < 300; i++) {
        /* rename() over the old file, as a secret mount swaps it. */
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "%s.new", path);
        write_text(tmp, i % 2 ? "read " TOK_R "\n" : "write " TOK_W "\nread " TOK_R "\n");
        ck_assert_int_eq(rename(tmp, path), 0);
        ck_assert_int_eq(pf_auth_reload(r.a, err, sizeof(err)), PF_OK);
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    ck_assert_int_eq(atomic_load(&r.bad), 0);
    ck_assert_int_gt(atomic_load(&r.checks), 0);
    pf_auth_close(r.a);
    unlink(path);
    free(path);
}
END_TEST

TU_SUITE(auth) {
    Suite *s = suite_create("auth");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, auth_parse_scopes_comments_crlf);
    tcase_add_test(tc, auth_parse_errors_name_the_line);
    tcase_add_test(tc, auth_parse_token_limit);
    tcase_add_test(tc, auth_bearer_header_forms);
    tcase_add_test(tc, auth_check_exact_token_and_id);
    tcase_add_test(tc, auth_scope_allows);
    tcase_add_test(tc, auth_parse_random_files);
    tcase_add_test(tc, auth_reload_replaces_or_keeps);
    tcase_add_test(tc, auth_checks_race_reloads);
    suite_add_tcase(s, tc);
    return s;
}
