/* test_server.c -- server/server.c: the server's life (drain on SIGTERM). */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "itest.h"
#include "testutil.h"

START_TEST(server_sigterm_finishes_in_flight) {
    hc_server s = it_start(ARGS("--workers", "1"));
    char *map = it_open_map_text(512, 512), *batch = it_slow_batch(30, 20000);
    hc_resp r;
    int fd;
    it_put_map(&s, "open", "text/x-movingai-map", map, 201);
    it_wait_pool(&s, 0, 0);
    fd = it_send_json_post(s.port, "/v1/maps/open/paths", batch);
    it_wait_pool(&s, 1, 0);
    kill(s.pid, SIGTERM);
    /* The request in flight still gets its full answer. */
    ck_assert_int_eq(hc_read(fd, &r), 0);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    {
        cJSON *j = it_json(&r);
        ck_assert_int_eq(cJSON_GetArraySize(it_get(j, "results")), 30);
        cJSON_Delete(j);
    }
    hc_free(&r);
    ck_assert_int_eq(hc_server_stop(&s), 0);
    free(map);
    free(batch);
}
END_TEST

TU_SUITE(server) {
    Suite *s = suite_create("server");
    TCase *tc = tcase_create("server");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, server_sigterm_finishes_in_flight);
    suite_add_tcase(s, tc);
    return s;
}
