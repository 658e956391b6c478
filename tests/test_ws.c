/* test_ws.c -- WebSocket handshake and framing (RFC 6455 examples). */
#include <check.h>
#include <string.h>

#include "testutil.h"
#include "ws.h"

START_TEST(ws_accept_key_rfc_example) {
    char out[PF_WS_ACCEPT_LEN + 1];
    ck_assert_int_eq(pf_ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", out), PF_OK);
    ck_assert_str_eq(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    ck_assert_int_eq(pf_ws_accept_key("short", out), PF_EINVAL);
    ck_assert_int_eq(pf_ws_accept_key("dGhlIHNhbXBsZSBub25j!Q==", out), PF_EINVAL);
    ck_assert_int_eq(pf_ws_accept_key(NULL, out), PF_EINVAL);
}
END_TEST

/* RFC 6455 5.7: a masked "Hello" and the same split in two fragments. */
static const uint8_t hello_masked[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d,
                                       0x7f, 0x9f, 0x4d, 0x51, 0x58};

START_TEST(ws_decode_masked_hello_byte_by_byte) {
    pf_ws_decoder d;
    pf_ws_message m = {0, NULL, 0};
    bool got = false;
    size_t used;
    pf_ws_decoder_init(&d, 1024);
    for (size_t i = 0; i < sizeof(hello_masked); i++) {
        ck_assert(!got);
        ck_assert_int_eq(pf_ws_decode(&d, hello_masked + i, 1, &used, &m, &got), PF_OK);
        ck_assert_uint_eq(used, 1);
    }
    ck_assert(got);
    ck_assert_int_eq(m.op, PF_WS_OP_TEXT);
    ck_assert_uint_eq(m.len, 5);
    ck_assert(memcmp(m.data, "Hello", 5) == 0);
    pf_ws_decoder_free(&d);
}
END_TEST

/* Masks a client frame. */
static size_t client_frame(uint8_t *out, int op, bool fin, const char *payload, size_t len) {
    const uint8_t mask[4] = {1, 2, 3, 4};
    size_t h = 2;
    out[0] = (uint8_t)((fin ? 0x80 : 0) | op);
    if (len < 126) {
        out[1] = (uint8_t)(0x80 | len);
    } else {
        out[1] = 0x80 | 126;
        out[2] = (uint8_t)(len >> 8);
        out[3] = (uint8_t)len;
        h = 4;
    }
    memcpy(out + h, mask, 4);
    for (size_t i = 0; i < len; i++) out[h + 4 + i] = (uint8_t)payload[i] ^ mask[i & 3];
    return h + 4 + len;
}

START_TEST(ws_decode_fragments_with_interleaved_ping) {
    uint8_t buf[512];
    size_t n = 0, used, off = 0;
    pf_ws_decoder d;
    pf_ws_message m;
    bool got;
    n += client_frame(buf + n, PF_WS_OP_TEXT, false, "Hel", 3);
    n += client_frame(buf + n, PF_WS_OP_PING, true, "p", 1);
    n += client_frame(buf + n, PF_WS_OP_CONT, true, "lo", 2);
    pf_ws_decoder_init(&d, 1024);
    ck_assert_int_eq(pf_ws_decode(&d, buf, n, &used, &m, &got), PF_OK);
    ck_assert(got);
    ck_assert_int_eq(m.op, PF_WS_OP_PING);
    off += used;
    ck_assert_int_eq(pf_ws_decode(&d, buf + off, n - off, &used, &m, &got), PF_OK);
    ck_assert(got);
    ck_assert_int_eq(m.op, PF_WS_OP_TEXT);
    ck_assert_uint_eq(m.len, 5);
    ck_assert(memcmp(m.data, "Hello", 5) == 0);
    ck_assert_uint_eq(off + used, n);
    pf_ws_decoder_free(&d);
}
END_TEST

START_TEST(ws_decode_rejects_violations) {
    uint8_t buf[512];
    size_t used;
    pf_ws_decoder d;
    pf_ws_message m;
    bool got;
    const uint8_t unmasked[] = {0x81, 0x01, 'x'};
    pf_ws_decoder_init(&d, 16);
    ck_assert_int_eq(pf_ws_decode(&d, unmasked, 3, &used, &m, &got), PF_EPARSE);
    ck_assert_int_eq(d.close_code, PF_WS_CLOSE_PROTOCOL);
    pf_ws_decoder_free(&d);

    char big[200];
    memset(big, 'a', sizeof(big));
    size_t n = client_frame(buf, PF_WS_OP_TEXT, true, big, sizeof(big));
    pf_ws_decoder_init(&d, 16);
    ck_assert_int_eq(pf_ws_decode(&d, buf, n, &used, &m, &got), PF_ELIMIT);
    ck_assert_int_eq(d.close_code, PF_WS_CLOSE_TOO_BIG);
    pf_ws_decoder_free(&d);

    n = client_frame(buf, PF_WS_OP_CONT, true, "x", 1); /* continuation of nothing */
    pf_ws_decoder_init(&d, 16);
    ck_assert_int_eq(pf_ws_decode(&d, buf, n, &used, &m, &got), PF_EPARSE);
    pf_ws_decoder_free(&d);

    n = client_frame(buf, PF_WS_OP_PING, false, "x", 1); /* fragmented control */
    pf_ws_decoder_init(&d, 16);
    ck_assert_int_eq(pf_ws_decode(&d, buf, n, &used, &m, &got), PF_EPARSE);
    pf_ws_decoder_free(&d);
}
END_TEST

/* Decodes one buffer fed whole; returns the status, close code in *code. */
static pf_status decode_all(const uint8_t *buf, size_t n, int *code, pf_ws_message *m, bool *got) {
    pf_ws_decoder d;
    size_t used = 0, off = 0;
    pf_status st = PF_OK;
    pf_ws_decoder_init(&d, 1024);
    *got = false;
    while (off < n && !st) {
        st = pf_ws_decode(&d, buf + off, n - off, &used, m, got);
        off += used;
    }
    *code = d.close_code;
    pf_ws_decoder_free(&d);
    return st;
}

/* RFC 6455 8.1: a text message that is not UTF-8 is close 1007, also when
 * each fragment alone looks fine or a character straddles two fragments
 * (which is valid); binary messages are not checked. */
START_TEST(ws_decode_text_must_be_utf8) {
    uint8_t buf[512];
    size_t n;
    int code;
    bool got;
    pf_ws_message m;
    static const char *const bad[] = {"{\"id\":\"\xff\"}", "\xc0\xaf", "\xed\xa0\x80", "ok\xe2\x82",
                                      "\xf4\x90\x80\x80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        n = client_frame(buf, PF_WS_OP_TEXT, true, bad[i], strlen(bad[i]));
        ck_assert_int_eq(decode_all(buf, n, &code, &m, &got), PF_EPARSE);
        ck_assert_int_eq(code, PF_WS_CLOSE_BAD_DATA);
    }
    /* U+20AC split across fragments: valid. */
    n = client_frame(buf, PF_WS_OP_TEXT, false, "\xe2", 1);
    n += client_frame(buf + n, PF_WS_OP_CONT, true, "\x82\xac", 2);
    ck_assert_int_eq(decode_all(buf, n, &code, &m, &got), PF_OK);
    ck_assert(got && m.len == 3);
    /* Fragments fine alone, bad together: "\xc3" then "(". */
    n = client_frame(buf, PF_WS_OP_TEXT, false, "\xc3", 1);
    n += client_frame(buf + n, PF_WS_OP_CONT, true, "(", 1);
    ck_assert_int_eq(decode_all(buf, n, &code, &m, &got), PF_EPARSE);
    ck_assert_int_eq(code, PF_WS_CLOSE_BAD_DATA);
    n = client_frame(buf, PF_WS_OP_BINARY, true, "\xff", 1);
    ck_assert_int_eq(decode_all(buf, n, &code, &m, &got), PF_OK);
    ck_assert(got && m.op == PF_WS_OP_BINARY);
}
END_TEST

/* Close frames: empty or code + UTF-8 reason; a 1-byte payload or a code no
 * peer may send is 1002, a reason that is not UTF-8 is 1007. */
START_TEST(ws_decode_close_payloads) {
    static const struct {
        const char *p;
        size_t n;
        pf_status st;
        int code;
    } cases[] = {
        {"", 0, PF_OK, 0},
        {"\x03\xe8", 2, PF_OK, 0},
        {"\x03\xe8"
         "bye \xc3\xa9",
         8, PF_OK, 0},
        {"\x0b\xb8", 2, PF_OK, 0}, /* 3000 */
        {"\x03", 1, PF_EPARSE, PF_WS_CLOSE_PROTOCOL},
        {"\x03\xe7", 2, PF_EPARSE, PF_WS_CLOSE_PROTOCOL}, /* 999 */
        {"\x03\xed", 2, PF_EPARSE, PF_WS_CLOSE_PROTOCOL}, /* 1005 */
        {"\x03\xee", 2, PF_EPARSE, PF_WS_CLOSE_PROTOCOL}, /* 1006 */
        {"\x07\xd0", 2, PF_EPARSE, PF_WS_CLOSE_PROTOCOL}, /* 2000 */
        {"\x13\x88", 2, PF_EPARSE, PF_WS_CLOSE_PROTOCOL}, /* 5000 */
        {"\x03\xe8\xff", 3, PF_EPARSE, PF_WS_CLOSE_BAD_DATA},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t buf[64];
        size_t n = client_frame(buf, PF_WS_OP_CLOSE, true, cases[i].p, cases[i].n);
        int code;
        bool got;
        pf_ws_message m;
        ck_assert_msg(decode_all(buf, n, &code, &m, &got) == cases[i].st, "case %zu", i);
        ck_assert_int_eq(code, cases[i].code);
        if (cases[i].st == PF_OK) ck_assert(got && m.op == PF_WS_OP_CLOSE);
    }
}
END_TEST

START_TEST(ws_encode_lengths) {
    uint8_t out[70000], payload[66000];
    memset(payload, 'z', sizeof(payload));
    ck_assert_uint_eq(pf_ws_encode(PF_WS_OP_TEXT, payload, 5, out, sizeof(out)), 7);
    ck_assert_uint_eq(out[0], 0x81);
    ck_assert_uint_eq(out[1], 5);
    ck_assert_uint_eq(pf_ws_encode(PF_WS_OP_TEXT, payload, 300, out, sizeof(out)), 304);
    ck_assert_uint_eq(out[1], 126);
    ck_assert_uint_eq((out[2] << 8) | out[3], 300);
    ck_assert_uint_eq(pf_ws_encode(PF_WS_OP_BINARY, payload, 66000, out, sizeof(out)), 66010);
    ck_assert_uint_eq(out[1], 127);
    ck_assert_uint_eq(pf_ws_encode(PF_WS_OP_TEXT, payload, 300, out, 100), 0);
}
END_TEST

/* RFC 6455 7.4: which close codes a peer may send, and UTF-8 reasons. */
START_TEST(ws_close_check_codes_and_reasons) {
    static const struct {
        const char *p;
        size_t n;
        pf_status st;
        int code;
    } cases[] = {
        {"", 0, PF_OK, 0},
        {"\x03", 1, PF_EPARSE, 1002},
        {"\x03\xe8", 2, PF_OK, 1000},
        {"\x03\xeb", 2, PF_OK, 1003},
        {"\x03\xec", 2, PF_EPARSE, 1002}, /* 1004 reserved */
        {"\x03\xed", 2, PF_EPARSE, 1002}, /* 1005 never sent */
        {"\x03\xee", 2, PF_EPARSE, 1002}, /* 1006 never sent */
        {"\x03\xf3", 2, PF_OK, 1011},
        {"\x03\xf7", 2, PF_EPARSE, 1002}, /* 1015 never sent */
        {"\x0b\xb7", 2, PF_EPARSE, 1002}, /* 2999 */
        {"\x0b\xb8", 2, PF_OK, 3000},
        {"\x13\x87", 2, PF_OK, 4999},
        {"\x13\x88", 2, PF_EPARSE, 1002}, /* 5000 */
        {"\x03\xe7", 2, PF_EPARSE, 1002}, /* 999 */
        {"\x03\xe8ok", 4, PF_OK, 1000},
        {"\x03\xe8\xc3\xa9", 4, PF_OK, 1000},             /* e-acute */
        {"\x03\xe8\xc3", 3, PF_EPARSE, 1007},             /* cut */
        {"\x03\xe8\xc0\xaf", 4, PF_EPARSE, 1007},         /* overlong '/' */
        {"\x03\xe8\xed\xa0\x80", 5, PF_EPARSE, 1007},     /* a surrogate */
        {"\x03\xe8\xf4\x90\x80\x80", 6, PF_EPARSE, 1007}, /* past U+10FFFF */
        {"\x03\xe8\xf0\x9f\x98\x80", 6, PF_OK, 1000},     /* U+1F600 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int code = -1;
        ck_assert_msg(pf_ws_close_check((const uint8_t *)cases[i].p, cases[i].n, &code) ==
                          cases[i].st,
                      "case %zu", i);
        ck_assert_msg(code == cases[i].code, "case %zu: code %d", i, code);
    }
}
END_TEST

/* A reason longer than a control frame allows is cut at a character
 * boundary. */
START_TEST(ws_close_payload_fits_a_control_frame) {
    uint8_t out[125];
    char reason[200];
    size_t n;
    int code;
    for (size_t i = 0; i + 2 < sizeof(reason); i += 2) memcpy(reason + i, "\xc3\xa9", 2);
    reason[sizeof(reason) - 2] = '\0';
    n = pf_ws_close_payload(1008, reason, out);
    ck_assert_uint_le(n, 125);
    ck_assert_int_eq(pf_ws_close_check(out, n, &code), PF_OK);
    ck_assert_int_eq(code, 1008);
    ck_assert_uint_eq(pf_ws_close_payload(1000, NULL, out), 2);
}
END_TEST

TU_SUITE(ws) {
    Suite *s = suite_create("ws");
    TCase *tc = tcase_create("framing");
    tcase_add_test(tc, ws_accept_key_rfc_example);
    tcase_add_test(tc, ws_close_check_codes_and_reasons);
    tcase_add_test(tc, ws_close_payload_fits_a_control_frame);
    tcase_add_test(tc, ws_decode_masked_hello_byte_by_byte);
    tcase_add_test(tc, ws_decode_fragments_with_interleaved_ping);
    tcase_add_test(tc, ws_decode_rejects_violations);
    tcase_add_test(tc, ws_decode_text_must_be_utf8);
    tcase_add_test(tc, ws_decode_close_payloads);
    tcase_add_test(tc, ws_encode_lengths);
    suite_add_tcase(s, tc);
    return s;
}
