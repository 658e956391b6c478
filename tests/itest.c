/* itest.c -- see itest.h. */
#include "itest.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hc_server it_start(const char *const *args) {
    hc_server s;
    ck_assert_msg(hc_server_start(&s, args) == 0, "pathd did not start (PATHD_BIN=%s)",
                  getenv("PATHD_BIN") ? getenv("PATHD_BIN") : "unset");
    return s;
}

void it_stop(hc_server *s) { ck_assert_int_eq(hc_server_stop(s), 0); }

hc_resp it_req(const hc_server *s, const char *method, const char *path, const char *ctype,
               const char *body) {
    hc_resp r;
    ck_assert_int_eq(
        hc_request(s->port, method, path, ctype, body, body ? strlen(body) : 0, NULL, &r), 0);
    return r;
}

const cJSON *it_get(const cJSON *o, const char *path) {
    char buf[128], *tok, *save;
    snprintf(buf, sizeof(buf), "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save)) {
        char *end;
        long k = strtol(tok, &end, 10);
        if (cJSON_IsArray(o) && *tok && !*end) /* "path.0.1": array items by index */
            o = k >= 0 ? cJSON_GetArrayItem(o, (int)k) : NULL;
        else
            o = cJSON_GetObjectItemCaseSensitive(o, tok);
    }
    return o;
}

double it_num(const cJSON *o, const char *path) {
    const cJSON *it = it_get(o, path);
    ck_assert_msg(it && cJSON_IsNumber(it), "no number at %s", path);
    return it->valuedouble;
}

const char *it_str(const cJSON *o, const char *path) {
    const cJSON *it = it_get(o, path);
    ck_assert_msg(it && cJSON_IsString(it), "no string at %s", path);
    return it->valuestring;
}

bool it_truth(const cJSON *o, const char *path) {
    const cJSON *it = it_get(o, path);
    ck_assert_msg(it && cJSON_IsBool(it), "no bool at %s", path);
    return cJSON_IsTrue(it);
}
