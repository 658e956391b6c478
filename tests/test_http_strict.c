/* test_http_strict.c -- strict HTTP: the checks of server/http_strict.c on
 * their own, and the real server over raw sockets for every malformed
 * request, whether pathd or libmicrohttpd answers it; after each, the
 * server must still answer /healthz. */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_strict.h"
#include "httpc.h"
#include "itest.h"
#include "testutil.h"
#include "utf8.h"

typedef struct hcase {
    const char *version, *target;
    bool nul;
    const char *headers; /* "Name: value\n..." */
    pf_strict_verdict want;
    const char *field;
} hcase;

/* Splits "Name: value\n" lines into a header array (static storage). */
static size_t split_headers(const char *text, pf_http_header *h, size_t cap, char *store,
                            size_t scap) {
    size_t n = 0, len = strlen(text);
    ck_assert_uint_lt(len, scap);
    memcpy(store, text, len + 1);
    for (char *line = strtok(store, "\n"); line && n < cap; line = strtok(NULL, "\n")) {
        char *colon = strchr(line, ':');
        ck_assert_ptr_nonnull(colon);
        *colon = '\0';
        h[n].name = line;
        h[n].value = colon + 1 + (colon[1] == ' ');
        n++;
    }
    return n;
}

START_TEST(http_strict_checks) {
    static const hcase cases[] = {
        {"HTTP/1.1", "/healthz", false, "Host: a", PF_STRICT_OK, NULL},
        {"HTTP/1.1", "/v1/maps/x/path?start=1,1&goal=2,2", false, "Host: pathd.internal:8080",
         PF_STRICT_OK, NULL},
        {"HTTP/1.1", "/", false, "Host: [::1]:80", PF_STRICT_OK, NULL},
        {"HTTP/1.1", "/", false, "Host: ", PF_STRICT_OK, NULL},
        {"HTTP/1.0", "/healthz", false, "", PF_STRICT_OK, NULL},
        {"HTTP/1.1", "/p", false, "Host: a\nContent-Length: 5\nContent-Length: 5", PF_STRICT_OK,
         NULL},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: chunked", PF_STRICT_OK, NULL},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: CHUNKED", PF_STRICT_OK, NULL},
        /* Framing. */
        {"HTTP/1.1", "/p", false, "Host: a\nContent-Length: 5\nContent-Length: 6", PF_STRICT_BAD,
         "Content-Length"},
        {"HTTP/1.1", "/p", false, "Host: a\nContent-Length: 5\nContent-Length: 05", PF_STRICT_BAD,
         "Content-Length"},
        {"HTTP/1.1", "/p", false, "Host: a\nContent-Length: 5\nTransfer-Encoding: chunked",
         PF_STRICT_BAD, "Transfer-Encoding"},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: gzip", PF_STRICT_NOT_IMPLEMENTED,
         "Transfer-Encoding"},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: gzip, chunked",
         PF_STRICT_NOT_IMPLEMENTED, "Transfer-Encoding"},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: identity", PF_STRICT_NOT_IMPLEMENTED,
         "Transfer-Encoding"},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: chunked, chunked", PF_STRICT_BAD,
         "Transfer-Encoding"},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: chunked\nTransfer-Encoding: chunked",
         PF_STRICT_BAD, "Transfer-Encoding"},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: ", PF_STRICT_BAD,
         "Transfer-Encoding"},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: , ,", PF_STRICT_BAD,
         "Transfer-Encoding"},
        {"HTTP/1.1", "/p", false, "Host: a\nTransfer-Encoding: chunked ", PF_STRICT_BAD,
         "Transfer-Encoding"},
        {"HTTP/1.0", "/p", false, "Transfer-Encoding: chunked", PF_STRICT_BAD, "Transfer-Encoding"},
        /* Host. */
        {"HTTP/1.1", "/healthz", false, "", PF_STRICT_BAD, "Host"},
        {"HTTP/1.1", "/healthz", false, "X-Host: a", PF_STRICT_BAD, "Host"},
        {"HTTP/1.2", "/healthz", false, "", PF_STRICT_BAD, "Host"},
        {"HTTP/1.1", "/healthz", false, "Host: a\nHost: a", PF_STRICT_BAD, "Host"},
        {"HTTP/1.1", "/healthz", false, "Host: a b", PF_STRICT_BAD, "Host"},
        {"HTTP/1.1", "/healthz", false, "Host: a:80x", PF_STRICT_BAD, "Host"},
        {"HTTP/1.1", "/healthz", false, "Host: [::1", PF_STRICT_BAD, "Host"},
        {"HTTP/1.1", "/healthz", false, "Host: a/b", PF_STRICT_BAD, "Host"},
        {"HTTP/1.1", "/healthz", false, "Host: \xc3\xa9", PF_STRICT_BAD, "Host"},
        /* Singletons read once by libmicrohttpd. */
        {"HTTP/1.1", "/p", false,
         "Host: a\nContent-Type: text/plain\nContent-Type: application/json", PF_STRICT_BAD,
         "Content-Type"},
        {"HTTP/1.1", "/p", false, "Host: a\nAuthorization: Bearer x\nAuthorization: Bearer y",
         PF_STRICT_BAD, "Authorization"},
        /* The target. */
        {"HTTP/1.1", "/heal", true, "Host: a", PF_STRICT_BAD, NULL},
        {"HTTP/1.1", "/v1/maps/a%00b", false, "Host: a", PF_STRICT_BAD, NULL},
        {"HTTP/1.1", "/v1/maps/a/path?start=1,1%00&goal=2,2", false, "Host: a", PF_STRICT_BAD,
         NULL},
        {"HTTP/1.1", "/heal thz", false, "Host: a", PF_STRICT_BAD, NULL},
        {"HTTP/1.1", "/a\tb", false, "Host: a", PF_STRICT_BAD, NULL},
        {"HTTP/1.1", "/a\x7f", false, "Host: a", PF_STRICT_BAD, NULL},
        {"HTTP/1.1", "/a%0", false, "Host: a", PF_STRICT_OK, NULL},
        {"HTTP/1.1", "/a%20b%2500", false, "Host: a", PF_STRICT_OK, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pf_http_header h[16];
        char store[512];
        size_t n = split_headers(cases[i].headers, h, 16, store, sizeof(store));
        pf_http_reqline rl = {cases[i].version, cases[i].target, cases[i].nul};
        pf_strict_reason why;
        pf_strict_verdict v = pf_http_strict_check(&rl, h, n, &why);
        ck_assert_msg(v == cases[i].want, "case %zu (%s %s): verdict %d, want %d: %s", i,
                      cases[i].target, cases[i].headers, v, cases[i].want, why.message);
        if (v == PF_STRICT_OK) continue;
        ck_assert(why.message[0] != '\0');
        ck_assert(pf_utf8_is_valid(why.message, strlen(why.message)));
        if (cases[i].field)
            ck_assert_str_eq(why.field, cases[i].field);
        else
            ck_assert_ptr_null(why.field);
    }
}
END_TEST

/* What one raw request got: the response (status 0 and no head when the
 * server closed without a word), and whether the server kept the
 * connection open past the deadline instead. */
typedef struct raw_result {
    hc_resp r;
    bool answered, closed, timed_out;
} raw_result;

/* The servers here keep an idle connection for a day: a connection the
 * server should have closed after its answer stays open, and the read
 * (timeout_ms -1: no clock) ends the test at its Check timeout. */
#define STRICT_ARGS ARGS("--workers", "1", "--conn-timeout", "86400", "--request-timeout", "3600")

static raw_result raw_send(uint16_t port, const char *raw, size_t len, int timeout_ms) {
    raw_result out;
    int fd = hc_send_only(port, raw, len);
    size_t cap = 1 << 16, got = 0;
    char *buf = malloc(cap);
    memset(&out, 0, sizeof(out));
    ck_assert_int_ge(fd, 0);
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t k;
        if (poll(&p, 1, timeout_ms) <= 0) {
            out.timed_out = true;
            break;
        }
        k = recv(fd, buf + got, cap - got - 1, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            out.closed = true;
            break;
        }
        got += (size_t)k;
        if (got + 1 >= cap) break;
    }
    close(fd);
    buf[got] = '\0';
    out.answered = got > 0;
    out.r.head = buf;
    out.r.body = strdup("");
    if (got) {
        char *sep = strstr(buf, "\r\n\r\n");
        if (sep && sscanf(buf, "HTTP/1.%*d %d", &out.r.status) == 1) {
            free(out.r.body);
            out.r.body = strdup(sep + 4);
            out.r.body_len = strlen(out.r.body);
            *sep = '\0';
        }
    }
    return out;
}

static void assert_healthy(const hc_server *s) {
    hc_resp r = it_req(s, "GET", "/healthz", NULL, NULL);
    ck_assert_msg(r.status == 200, "the server no longer answers /healthz: %d", r.status);
    hc_free(&r);
}

/* libmicrohttpd 0.9.75 answers these itself (an HTML body, or nothing at
 * all) before pathd sees the request; README.md lists them. Each must
 * leave the server healthy. */
START_TEST(http_strict_libmicrohttpd_own_answers) {
    static const struct {
        const char *name, *raw;
        int status; /* 0: closed without an answer */
    } cases[] = {
        {"no space in the request line", "GET\r\nHost: localhost\r\n\r\n", 0},
        {"no method", " /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", 0},
        {"no target", "GET HTTP/1.1\r\nHost: localhost\r\n\r\n", 400},
        {"no target, two spaces", "GET  HTTP/1.1\r\nHost: localhost\r\n\r\n", 400},
        {"HTTP/0.9", "GET /healthz\r\n\r\n", 400},
        {"a future version", "GET /healthz HTTP/2.5\r\nHost: localhost\r\n\r\n", 505},
        {"a header line without a colon", "GET /healthz HTTP/1.1\r\nHost a\r\n\r\n", 400},
        {"Content-Length as a list",
         "POST /v1/maps/x/path HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2, 3\r\n\r\n{}", 400},
        {"Content-Length not a number",
         "POST /v1/maps/x/path HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n{}", 400},
        {"Content-Length past 2^64",
         "POST /v1/maps/x/path HTTP/1.1\r\nHost: localhost\r\nContent-Length: "
         "99999999999999999999999\r\n"
         "\r\n",
         413},
        {"a broken chunk size",
         "POST /v1/maps/x/path HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
         "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
         400},
    };
    hc_server s = it_start(STRICT_ARGS);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        raw_result rr = raw_send(s.port, cases[i].raw, strlen(cases[i].raw), -1);
        ck_assert_msg(!rr.timed_out, "%s: no answer and no close", cases[i].name);
        if (cases[i].status == 0)
            ck_assert_msg(!rr.answered && rr.closed, "%s: expected a close, got '%s'",
                          cases[i].name, rr.r.head);
        else
            ck_assert_msg(rr.r.status == cases[i].status, "%s: expected %d, got '%s'",
                          cases[i].name, cases[i].status, rr.r.head);
        hc_free(&rr.r);
        assert_healthy(&s);
    }
    it_stop(&s);
}
END_TEST

/* What pathd answers where libmicrohttpd 0.9.75 would let the request
 * through: a JSON error naming the header, the connection closed after it
 * (the framing cannot be trusted), before a byte of the body is read; and
 * the server stays healthy. */
START_TEST(http_strict_pathd_answers) {
    static const struct {
        const char *name, *raw;
        int status;
        const char *code, *field; /* field NULL: none */
    } cases[] = {
        {"two different Content-Length values",
         "POST /v1/maps/room/path HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
         "Content-Length: 5\r\nContent-Length: 27\r\n\r\n{\"start\":[0,0],\"goal\":[1,1]}",
         400, "malformed_request", "Content-Length"},
        {"Content-Length with Transfer-Encoding",
         "POST /v1/maps/room/path HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
         "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
         400, "malformed_request", "Transfer-Encoding"},
        {"an unknown Transfer-Encoding",
         "POST /v1/maps/room/path HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
         "Transfer-Encoding: gzip\r\n\r\n{}",
         501, "not_implemented", "Transfer-Encoding"},
        {"an unknown Transfer-Encoding on a GET",
         "GET /healthz HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
         501, "not_implemented", "Transfer-Encoding"},
        {"chunked twice",
         "POST /v1/maps/room/path HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
         "Transfer-Encoding: chunked, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
         400, "malformed_request", "Transfer-Encoding"},
        {"Transfer-Encoding on HTTP/1.0",
         "POST /v1/maps/room/path HTTP/1.0\r\nContent-Type: application/json\r\n"
         "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
         400, "malformed_request", "Transfer-Encoding"},
        {"HTTP/1.1 without Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, "malformed_request",
         "Host"},
        {"two Host lines", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: other\r\n\r\n", 400,
         "malformed_request", "Host"},
        {"a Host that is not host[:port]", "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", 400,
         "malformed_request", "Host"},
        {"a NUL in the target", "GET /heal\0thz HTTP/1.1\r\nHost: localhost\r\n\r\n", 400,
         "malformed_request", NULL},
        {"%00 in the path", "GET /v1/maps/room%00x HTTP/1.1\r\nHost: localhost\r\n\r\n", 400,
         "malformed_request", NULL},
        {"%00 in the query",
         "GET /v1/maps/room/path?start=0,0%00&goal=1,1 HTTP/1.1\r\nHost: localhost\r\n\r\n", 400,
         "malformed_request", NULL},
        {"a space in the target", "GET /heal thz HTTP/1.1\r\nHost: localhost\r\n\r\n", 400,
         "malformed_request", NULL},
        {"two Content-Type lines",
         "POST /v1/maps/room/path HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n"
         "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
         400, "malformed_request", "Content-Type"},
    };
    hc_server s = it_start(STRICT_ARGS);
    hc_resp r =
        it_req(&s, "PUT", "/v1/maps/room", "application/json", "{\"rows\":[\"....\",\"....\"]}");
    ck_assert_int_eq(r.status, 201);
    hc_free(&r);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        /* The raw bytes may hold a NUL: their length is the literal's. */
        const char *raw = cases[i].raw;
        size_t len = strlen(raw);
        raw_result rr;
        cJSON *j;
        char conn[32];
        if (strstr(cases[i].name, "NUL")) len += 1 + strlen(raw + len + 1);
        rr = raw_send(s.port, raw, len, -1);
        ck_assert_msg(!rr.timed_out && rr.closed, "%s: the connection stayed open", cases[i].name);
        ck_assert_msg(rr.r.status == cases[i].status, "%s: expected %d, got '%s'", cases[i].name,
                      cases[i].status, rr.r.head);
        ck_assert_msg(hc_header(&rr.r, "Connection", conn, sizeof(conn)) &&
                          strcmp(conn, "close") == 0,
                      "%s: no Connection: close", cases[i].name);
        j = cJSON_ParseWithLength(rr.r.body, rr.r.body_len);
        ck_assert_msg(j != NULL, "%s: not JSON: %s", cases[i].name, rr.r.body);
        ck_assert_str_eq(it_str(j, "error.code"), cases[i].code);
        if (cases[i].field)
            ck_assert_str_eq(it_str(j, "error.field"), cases[i].field);
        else
            ck_assert_ptr_null(it_get(j, "error.field"));
        ck_assert(pf_utf8_is_valid(rr.r.body, rr.r.body_len));
        cJSON_Delete(j);
        hc_free(&rr.r);
        assert_healthy(&s);
    }
    it_stop(&s);
}
END_TEST

/* Every answer is valid JSON in valid UTF-8, whatever the request held:
 * bytes that are not UTF-8 in the path are echoed as U+FFFD in the 404, a
 * door name with them is refused (and never reaches /cells), and /cells
 * of a map whose door has a real non-ASCII name parses. */
START_TEST(http_strict_answers_are_valid_utf8) {
    static const char raw[] =
        "GET /v1/\xff\xfe\xc0\xaf HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    hc_server s = it_start(STRICT_ARGS);
    raw_result rr = raw_send(s.port, raw, sizeof(raw) - 1, -1);
    hc_resp r;
    cJSON *j;
    ck_assert_int_eq(rr.r.status, 404);
    ck_assert(pf_utf8_is_valid(rr.r.body, rr.r.body_len));
    ck_assert_ptr_nonnull(strstr(rr.r.body, "\\ufffd"));
    j = cJSON_ParseWithLength(rr.r.body, rr.r.body_len);
    ck_assert_ptr_nonnull(j);
    cJSON_Delete(j);
    hc_free(&rr.r);

    r = it_req(&s, "PUT", "/v1/maps/d", "application/json",
               "{\"rows\":[\"...\"],\"doors\":{\"g\xffte\":{\"cells\":[[1,0]]}}}");
    ck_assert_int_eq(r.status, 400);
    ck_assert(pf_utf8_is_valid(r.body, r.body_len));
    ck_assert(!strstr(r.body, "\xff"));
    hc_free(&r);
    r = it_req(&s, "PUT", "/v1/maps/d", "application/json",
               "{\"rows\":[\"...\"],\"doors\":{\"gr\xc3\xbcn\\u00e9\":{\"cells\":[[1,0]]}}}");
    ck_assert_int_eq(r.status, 201);
    hc_free(&r);
    r = it_req(&s, "GET", "/v1/maps/d/cells", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert(pf_utf8_is_valid(r.body, r.body_len));
    j = cJSON_ParseWithLength(r.body, r.body_len);
    ck_assert_ptr_nonnull(j);
    ck_assert_ptr_nonnull(it_get(j, "doors.gr\xc3\xbcn\xc3\xa9"));
    cJSON_Delete(j);
    hc_free(&r);
    it_stop(&s);
}
END_TEST

/* Request smuggling: a request hidden in the body a proxy would have sent
 * on (here after two Content-Length values, or after Content-Length with
 * chunked) is never answered. */
START_TEST(http_strict_no_smuggling) {
    static const char *const raws[] = {
        "POST /v1/maps/room/path HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Content-Length: 0\r\nContent-Length: 44\r\n\r\n"
        "GET /v1/maps HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "POST /v1/maps/room/path HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Content-Length: 49\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        "GET /v1/maps HTTP/1.1\r\nHost: localhost\r\n\r\n",
    };
    hc_server s = it_start(STRICT_ARGS);
    for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++) {
        raw_result rr = raw_send(s.port, raws[i], strlen(raws[i]), -1);
        ck_assert(!rr.timed_out && rr.closed);
        ck_assert_int_eq(rr.r.status, 400);
        /* One answer only: the hidden GET /v1/maps was not read. */
        ck_assert_msg(!strstr(rr.r.body, "HTTP/1.1"), "a second answer: %s", rr.r.body);
        ck_assert(!strstr(rr.r.body, "\"maps\""));
        hc_free(&rr.r);
        assert_healthy(&s);
    }
    it_stop(&s);
}
END_TEST

TU_SUITE(http_strict) {
    Suite *s = suite_create("http_strict");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, http_strict_checks);
    tcase_add_test(tc, http_strict_libmicrohttpd_own_answers);
    tcase_add_test(tc, http_strict_pathd_answers);
    tcase_add_test(tc, http_strict_no_smuggling);
    tcase_add_test(tc, http_strict_answers_are_valid_utf8);
    suite_add_tcase(s, tc);
    return s;
}
