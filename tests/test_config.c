/* test_config.c -- server/config.c: flags, PATHD_* variables, --help. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "config.h"
#include "testutil.h"

START_TEST(config_env_flags_help) {
    pf_config c;
    char err[200];
    bool help;
    char *argv1[] = {"pathd", "--workers=5", "--queue", "7", "--demo", NULL};
    char *argv2[] = {"pathd", "--workers", "0", NULL};
    char *argv3[] = {"pathd", "--nope", NULL};
    char *argv4[] = {"pathd", "--help", NULL};
    setenv("PATHD_WORKERS", "3", 1);
    setenv("PATHD_DEADLINE_MS", "250", 1);
    pf_config_defaults(&c);
    ck_assert_int_eq(pf_config_load(&c, 5, argv1, &help, err, sizeof(err)), PF_OK);
    ck_assert_int_eq(c.workers, 5); /* the flag wins over the variable */
    ck_assert_int_eq(c.deadline_ms, 250);
    ck_assert_int_eq(c.queue_limit, 7);
    ck_assert(c.demo);
    pf_config_defaults(&c);
    ck_assert_int_eq(pf_config_load(&c, 3, argv2, &help, err, sizeof(err)), PF_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--workers"));
    ck_assert_int_eq(pf_config_load(&c, 2, argv3, &help, err, sizeof(err)), PF_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--nope"));
    setenv("PATHD_WORKERS", "many", 1);
    ck_assert_int_eq(pf_config_load(&c, 1, argv1, &help, err, sizeof(err)), PF_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "PATHD_WORKERS"));
    ck_assert_int_eq(pf_config_load(&c, 2, argv4, &help, err, sizeof(err)), PF_OK);
    ck_assert(help);
    unsetenv("PATHD_WORKERS");
    unsetenv("PATHD_DEADLINE_MS");
}
END_TEST

/* The value /v1/info reports for an integer setting (pf_config_visit). */
typedef struct visit_find {
    const char *name;
    int64_t value;
    bool found;
} visit_find;

static void find_setting(void *ud, const char *name, int64_t value) {
    visit_find *f = ud;
    if (strcmp(name, f->name) == 0) {
        f->value = value;
        f->found = true;
    }
}

/* `pathd --help` against config.c's table (pf_config_option_at), every
 * flag: one help line a flag and none more, each with the flag's name,
 * its PATHD_* variable and its default; the default is the one
 * pf_config_defaults sets (and /v1/info reports); and each integer flag
 * and variable is accepted with its default by pf_config_load (so the
 * names --help prints are the names the parser takes). A bad flag is
 * refused with a sentence and exit status 2. */
START_TEST(config_help_lists_every_flag) {
    const char *bin = getenv("PATHD_BIN");
    char cmd[4096], *out = malloc(1 << 20), *line, *save;
    size_t n, lines = 0, options = 0;
    pf_config_option o;
    pf_config defaults;
    FILE *p;
    ck_assert_ptr_nonnull(out);
    snprintf(cmd, sizeof(cmd), "%s --help", bin && *bin ? bin : "build/pathd");
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    n = fread(out, 1, (1 << 20) - 1, p);
    out[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    pf_config_defaults(&defaults);
    while (pf_config_option_at(options, &o)) options++;
    ck_assert_uint_ge(options, 79);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char flag[80], w1[80], w2[80], w3[80], w4[80];
        const char *env, *dflt;
        bool found = false;
        int k = sscanf(line, " %79s %79s %79s %79s %79s", flag, w1, w2, w3, w4);
        if (strncmp(line, "  --", 4) != 0 || strcmp(flag, "--help") == 0) continue;
        lines++;
        /* "--flag [METAVAR] PATHD_X default VALUE help..." */
        if (strncmp(w1, "PATHD_", 6) == 0) {
            env = w1;
            ck_assert_msg(k >= 4 && strcmp(w2, "default") == 0, "%s: no default", line);
            dflt = w3;
        } else {
            env = w2;
            ck_assert_msg(k >= 5 && strcmp(w3, "default") == 0, "%s: no default", line);
            dflt = w4;
        }
        for (size_t i = 0; i < options && !found; i++) {
            ck_assert(pf_config_option_at(i, &o));
            if (strcmp(flag + 2, o.flag) != 0) continue;
            found = true;
            ck_assert_msg(strcmp(env, o.env) == 0, "--%s: help says %s, the table %s", o.flag, env,
                          o.env);
            ck_assert_msg(strcmp(dflt, o.dflt) == 0, "--%s: help says default %s, the table %s",
                          o.flag, dflt, o.dflt);
            ck_assert_msg(o.is_switch == (env == w1), "--%s: a switch takes no value", o.flag);
        }
        ck_assert_msg(found, "--help lists %s, which config.c's table does not have", flag);
    }
    ck_assert_uint_eq(lines, options);
    for (size_t i = 0; pf_config_option_at(i, &o); i++) {
        char arg[200], err[300];
        char *argv[] = {"pathd", arg, NULL};
        visit_find f = {o.info, 0, false};
        pf_config c;
        bool help;
        if (o.is_switch || strcmp(o.dflt, "unset") == 0) continue;
        pf_config_visit(&defaults, find_setting, &f);
        if (f.found)
            ck_assert_msg(f.value == strtoll(o.dflt, NULL, 10),
                          "--%s: default %s, pf_config_defaults %lld", o.flag, o.dflt,
                          (long long)f.value);
        snprintf(arg, sizeof(arg), "--%s=%s", o.flag, o.dflt);
        pf_config_defaults(&c);
        ck_assert_msg(pf_config_load(&c, 2, argv, &help, err, sizeof(err)) == PF_OK,
                      "%s refused: %s", arg, err);
        setenv(o.env, o.dflt, 1);
        pf_config_defaults(&c);
        ck_assert_msg(pf_config_load(&c, 1, argv, &help, err, sizeof(err)) == PF_OK,
                      "%s=%s refused: %s", o.env, o.dflt, err);
        unsetenv(o.env);
    }
    free(out);
    /* A bad flag is refused with a sentence and exit status 2. */
    snprintf(cmd, sizeof(cmd), "%s --workers 0 2>/dev/null", bin && *bin ? bin : "build/pathd");
    p = popen(cmd, "r");
    ck_assert_int_eq(WEXITSTATUS(pclose(p)), 2);
}
END_TEST

TU_SUITE(config) {
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, config_env_flags_help);
    tcase_add_test(tc, config_help_lists_every_flag);
    suite_add_tcase(s, tc);
    return s;
}
