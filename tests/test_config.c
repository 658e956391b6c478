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

START_TEST(config_help_lists_every_flag) {
    const char *bin = getenv("PATHD_BIN");
    char cmd[4096], out[16384];
    size_t n;
    FILE *p;
    static const char *const flags[] = {"--port",          "--bind",         "--workers",
                                        "--io-threads",    "--queue",        "--max-body",
                                        "--max-map-cells", "--max-batch",    "--max-connections",
                                        "--max-per-ip",    "--conn-timeout", "--deadline-ms",
                                        "--cache-entries", "PATHD_PORT",     "PATHD_WORKERS",
                                        "PATHD_MAX_BODY"};
    snprintf(cmd, sizeof(cmd), "%s --help", bin && *bin ? bin : "build/pathd");
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        ck_assert_msg(strstr(out, flags[i]) != NULL, "--help does not mention %s", flags[i]);
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
