/* test_utf8.c -- clean input and clean output: the UTF-8 validator against an
 * independent decoder, the writer never emitting invalid UTF-8, and every
 * JSON reader refusing strings that are not valid UTF-8, hold raw control
 * characters or \u0000, naming the field without echoing the bytes. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "jsonw.h"
#include "map_json.h"
#include "nav_json.h"
#include "navmesh.h"
#include "path_json.h"
#include "session_json.h"
#include "testutil.h"
#include "utf8.h"

/* Reference: decode by the bit patterns, then judge the code point (RFC
 * 3629 section 3: shortest form, no surrogates, at most U+10FFFF). Returns
 * the sequence length or 0. Written apart from proto/utf8.c's byte ranges. */
static size_t ref_seq_len(const unsigned char *s, size_t n) {
    size_t len;
    uint32_t cp;
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (n == 0) return 0;
    if ((s[0] & 0x80) == 0) return 1;
    if ((s[0] & 0xe0) == 0xc0) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

START_TEST(utf8_matches_reference_decoder) {
    unsigned char b[4];
    uint64_t rng = tu_seed("utf8_matches_reference_decoder", 0x07f8);
    /* Every 1- and 2-byte input. */
    for (unsigned a = 0; a < 256; a++) {
        b[0] = (unsigned char)a;
        ck_assert_uint_eq(pf_utf8_seq_len(b, 1), ref_seq_len(b, 1));
        for (unsigned c = 0; c < 256; c++) {
            b[1] = (unsigned char)c;
            ck_assert_uint_eq(pf_utf8_seq_len(b, 2), ref_seq_len(b, 2));
        }
    }
    /* Every 3-byte input. */
    for (unsigned a = 0xc0; a < 0x100; a++)
        for (unsigned c = 0; c < 256; c++)
            for (unsigned d = 0; d < 256; d++) {
                b[0] = (unsigned char)a;
                b[1] = (unsigned char)c;
                b[2] = (unsigned char)d;
                ck_assert_uint_eq(pf_utf8_seq_len(b, 3), ref_seq_len(b, 3));
            }
    /* 4-byte inputs: every lead and second byte, the rest at random. */
    for (unsigned a = 0xe0; a < 0x100; a++)
        for (unsigned c = 0; c < 256; c++)
            for (int k = 0; k < 16; k++) {
                uint64_t r = tu_rand(&rng);
                b[0] = (unsigned char)a;
                b[1] = (unsigned char)c;
                b[2] = (unsigned char)(k < 4 ? 0x80 + (r & 0x3f) : r);
                b[3] = (unsigned char)(k < 8 ? 0x80 + ((r >> 8) & 0x3f) : r >> 8);
                ck_assert_uint_eq(pf_utf8_seq_len(b, 4), ref_seq_len(b, 4));
            }
}
END_TEST

START_TEST(utf8_known_sequences) {
    static const struct {
        const char *s;
        size_t bad; /* first bad byte, or strlen when valid */
    } cases[] = {
        {"plain ascii", 11},
        {"gr\xc3\xbc\xc3\x9f", 6},   /* grüß */
        {"\xe2\x82\xac", 3},         /* U+20AC */
        {"\xf0\x9f\x98\x80", 4},     /* U+1F600 */
        {"\xf4\x8f\xbf\xbf", 4},     /* U+10FFFF */
        {"\xef\xbf\xbd", 3},         /* U+FFFD itself */
        {"a\xff", 1},                /* never valid */
        {"a\x80", 1},                /* lone continuation */
        {"\xc0\xaf", 0},             /* overlong '/' */
        {"\xe0\x80\xaf", 0},         /* overlong '/' */
        {"\xf0\x80\x80\xaf", 0},     /* overlong '/' */
        {"\xed\xa0\x80", 0},         /* U+D800, a surrogate */
        {"\xed\xbf\xbf", 0},         /* U+DFFF */
        {"\xf4\x90\x80\x80", 0},     /* U+110000 */
        {"ok\xe2\x82", 2},           /* truncated at the end */
        {"\xc3\xa9\xc3", 2},         /* truncated after a good one */
        {"\xf8\x88\x80\x80\x80", 0}, /* 5-byte form */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = strlen(cases[i].s);
        ck_assert_msg(pf_utf8_check(cases[i].s, n) == cases[i].bad, "case %zu: %zu", i,
                      pf_utf8_check(cases[i].s, n));
        ck_assert(pf_utf8_is_valid(cases[i].s, n) == (cases[i].bad == n));
    }
}
END_TEST

/* Whatever bytes a string holds, the writer's output is valid UTF-8 that
 * cJSON reads back; valid strings come back unchanged, and each bad byte
 * became U+FFFD. */
START_TEST(utf8_sanitize_in_place) {
    char a[] = "ok \xc3\xa9 \xff x\xe2\x82", b[] = "\xc0\xaf", c[] = "";
    pf_path_request q;
    pf_proto_error e;
    /* A 40-byte cut in the middle of a character (Unknown parameter
     * '%.40s'): the message stays valid UTF-8. */
    pf_kv kv[1] = {{"x\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
                    "\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "\xc3\xa9x\xc3\xa9",
                    "1"}};
    pf_utf8_sanitize(a);
    pf_utf8_sanitize(b);
    pf_utf8_sanitize(c);
    ck_assert_str_eq(a, "ok \xc3\xa9 ? x??");
    ck_assert_str_eq(b, "??");
    ck_assert_str_eq(c, "");
    ck_assert_int_eq(pf_path_request_from_query(kv, 1, &q, &e), PF_EPARSE);
    ck_assert(pf_utf8_is_valid(e.message, strlen(e.message)));
    ck_assert(pf_utf8_is_valid(e.field, strlen(e.field)));
}
END_TEST

START_TEST(utf8_writer_always_emits_valid_json) {
    uint64_t rng = tu_seed("utf8_writer_always_emits_valid_json", 0x3e7);
    static const unsigned char pool[] = {'a',  '"',  '\\', 0x01, 0x1f, 0x7f, 0x80, 0xbf, 0xc2,
                                         0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xed, 0xa0, 0xf0, 0x9f,
                                         0x98, 0xf4, 0x90, 0xff, 0xc0, 0xaf, '\n', 'z'};
    for (int it = 0; it < 20000; it++) {
        char s[24], *out;
        size_t n = tu_below(&rng, sizeof(s)), len, bad = 0;
        pf_jsonw w;
        cJSON *j;
        for (size_t i = 0; i < n; i++) s[i] = (char)pool[tu_below(&rng, sizeof(pool))];
        for (size_t i = 0; i < n;) {
            size_t k = pf_utf8_seq_len((const unsigned char *)s + i, n - i);
            if (!k) bad++;
            i += k ? k : 1;
        }
        pf_jsonw_init(&w, 0);
        pf_jsonw_obj_begin(&w);
        pf_jsonw_key(&w, "k");
        pf_jsonw_strn(&w, s, n);
        pf_jsonw_obj_end(&w);
        out = pf_jsonw_take(&w, &len);
        ck_assert(pf_utf8_is_valid(out, len));
        j = cJSON_ParseWithLength(out, len);
        ck_assert_msg(j != NULL, "not JSON: %s", out);
        {
            const char *v = cJSON_GetObjectItem(j, "k")->valuestring;
            size_t fffd = 0;
            for (const char *p = v; (p = strstr(p, "\xef\xbf\xbd")); p += 3) fffd++;
            if (bad == 0 && !memchr(s, 0, n)) ck_assert(strlen(v) == n && memcmp(v, s, n) == 0);
            ck_assert_uint_eq(fffd, bad);
        }
        cJSON_Delete(j);
        free(out);
    }
}
END_TEST

/* An error must not carry the client's bytes: message and field are valid
 * UTF-8 and hold none of the bad bytes. */
static void assert_clean_error(const pf_proto_error *e) {
    ck_assert(pf_utf8_is_valid(e->message, strlen(e->message)));
    ck_assert(pf_utf8_is_valid(e->field, strlen(e->field)));
    ck_assert_msg(!strstr(e->message, "\xff") && !strstr(e->message, "\xc0"), "%s", e->message);
}

static void expect(pf_status got, pf_status st, const pf_proto_error *e, const char *code,
                   const char *field) {
    ck_assert_msg(got == st, "status %d, expected %d: %s", got, st, e->message);
    if (st == PF_OK) return;
    ck_assert_str_eq(pf_error_code(e->code), code);
    ck_assert_msg(strcmp(e->field, field ? field : "") == 0, "field '%s', expected '%s' (%s)",
                  e->field, field ? field : "", e->message);
    assert_clean_error(e);
}

START_TEST(utf8_path_requests_refuse_bad_strings) {
    pf_path_request q, *qs = NULL;
    pf_proto_error e;
    size_t n;
    int64_t dl;
#define PATH(s) pf_path_request_parse(s, strlen(s), &q, &e)
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"algorithm\":\"a\xff\"}"), PF_EPARSE, &e,
           "malformed_json", "algorithm");
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"algorithm\":\"\xc0\xaf\"}"), PF_EPARSE, &e,
           "malformed_json", "algorithm");
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"heuristic\":\"\xed\xa0\x80\"}"), PF_EPARSE, &e,
           "malformed_json", "heuristic");
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"algorithm\":\"astar\\u0000x\"}"), PF_EPARSE, &e,
           "invalid_request", "algorithm");
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"algorithm\":\"ast\tar\"}"), PF_EPARSE, &e,
           "malformed_json", "algorithm");
    /* A bad member name: named by where it is. */
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"\xff\":1}"), PF_EPARSE, &e, "malformed_json",
           NULL);
    ck_assert(strstr(e.message, "member name") != NULL);
    /* Escapes that only look like \u0000, and good UTF-8, are fine. */
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"algorithm\":\"\\\\u0000\"}"), PF_EINVAL, &e,
           "invalid_value", "algorithm");
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"algorithm\":\"\xc3\xa9\"}"), PF_EINVAL, &e,
           "invalid_value", "algorithm");
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"algorithm\":\"\\u00e9\\ud83d\\ude00\"}"),
           PF_EINVAL, &e, "invalid_value", "algorithm");
    /* A lone surrogate escape: cJSON refuses it. */
    expect(PATH("{\"start\":[0,0],\"goal\":[1,1],\"algorithm\":\"\\ud800\"}"), PF_EPARSE, &e,
           "malformed_json", NULL);
    expect(PATH("\"\xff\""), PF_EPARSE, &e, "malformed_json", NULL);
#undef PATH
    {
        const char *b = "{\"queries\":[{\"start\":[0,0],\"goal\":[1,1]},{\"start\":[0,0],"
                        "\"goal\":[1,1],\"algorithm\":\"x\xf4\x90\x80\x80\"}]}";
        expect(pf_path_batch_parse(b, strlen(b), 16, &qs, &n, &dl, &e), PF_EPARSE, &e,
               "malformed_json", "queries[1].algorithm");
    }
    {
        pf_kv kv[3] = {{"start", "0,0"}, {"goal", "1,1"}, {"algorithm", "a\xff"}};
        expect(pf_path_request_from_query(kv, 3, &q, &e), PF_EPARSE, &e, "invalid_request",
               "algorithm");
        kv[2].value = "astar\x01";
        expect(pf_path_request_from_query(kv, 3, &q, &e), PF_EPARSE, &e, "invalid_request",
               "algorithm");
        kv[2].key = "\xc0\xaf";
        kv[2].value = "astar";
        expect(pf_path_request_from_query(kv, 3, &q, &e), PF_EPARSE, &e, "invalid_request", NULL);
    }
}
END_TEST

START_TEST(utf8_maps_and_updates_refuse_bad_strings) {
    pf_grid *g = NULL;
    pf_update u;
    pf_update_list l;
    pf_proto_error e;
    const char *m = "{\"rows\":[\"...\",\"...\"],\"doors\":{\"g\xffte\":{\"cells\":[[1,1]]}}}";
    expect(pf_map_json_parse(m, strlen(m), NULL, &g, &e), PF_EPARSE, &e, "malformed_json", "doors");
    ck_assert(strstr(e.message, "member name in 'doors'") != NULL);
    m = "{\"rows\":[\"...\",\"...\"],\"doors\":{\"gate\\u0000x\":{\"cells\":[[1,1]]}}}";
    expect(pf_map_json_parse(m, strlen(m), NULL, &g, &e), PF_EPARSE, &e, "invalid_request",
           "doors");
    m = "{\"rows\":[\"...\",\"..\xe2\x82\"]}";
    expect(pf_map_json_parse(m, strlen(m), NULL, &g, &e), PF_EPARSE, &e, "malformed_json",
           "rows[1]");
    m = "{\"rows\":[\"...\",\"...\"],\"doors\":{\"gate\":{\"cells\":[[1,1]]},\"\xc3\xa9\":"
        "{\"walls\":[[0,0,\"E\xff\"]]}}}";
    expect(pf_map_json_parse(m, strlen(m), NULL, &g, &e), PF_EPARSE, &e, "malformed_json",
           "doors.?.walls[0][2]");

    m = "{\"doors\":[{\"id\":\"ok\",\"open\":true},{\"id\":\"g\\u0000\",\"open\":true}]}";
    expect(pf_map_patch_parse(m, strlen(m), &u, &e), PF_EPARSE, &e, "invalid_request",
           "doors[1].id");
    m = "{\"doors\":[{\"id\":\"\xed\xbf\xbf\",\"open\":true}]}";
    expect(pf_update_list_parse(m, strlen(m), false, 8, &l, &e), PF_EPARSE, &e, "malformed_json",
           "doors[0].id");
    /* NDJSON: blank lines count, and the field goes under the line. */
    m = "\n\n{\"position\":[1,1]}\n\n{\"doors\":[{\"id\":\"\xff\",\"open\":true}]}\n";
    expect(pf_update_list_parse(m, strlen(m), true, 8, &l, &e), PF_EPARSE, &e, "malformed_json",
           "lines[4].doors[0].id");
    ck_assert(strncmp(e.message, "lines[4]: ", 10) == 0);
}
END_TEST

/* The line an NDJSON update came from, blank lines counted, is what later
 * errors (validation against the map, on the server) name. */
START_TEST(utf8_ndjson_prefix_counts_blank_lines) {
    const char *m = "\n \n{\"position\":[1,1]}\n\r\n{\"goal\":[2,2]}";
    pf_update_list l;
    pf_proto_error e;
    char buf[40];
    ck_assert_int_eq(pf_update_list_parse(m, strlen(m), true, 8, &l, &e), PF_OK);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(pf_update_prefix(&l, 0, buf, sizeof(buf)), "lines[2].");
    ck_assert_str_eq(pf_update_prefix(&l, 1, buf, sizeof(buf)), "lines[4].");
    pf_update_list_free(&l);
    m = "{\"goal\":[2,2]}";
    ck_assert_int_eq(pf_update_list_parse(m, strlen(m), false, 8, &l, &e), PF_OK);
    ck_assert_str_eq(pf_update_prefix(&l, 0, buf, sizeof(buf)), "");
    pf_update_list_free(&l);
}
END_TEST

/* Random bytes spliced into a valid request's string: refused exactly when
 * the string is not clean, and the error is always clean. */
START_TEST(utf8_random_strings_in_requests) {
    uint64_t rng = tu_seed("utf8_random_strings_in_requests", 0x5712);
    static const unsigned char pool[] = {'a',  'b',  0x01, 0x09, 0x7f, 0x80, 0xbf, 0xc3, 0xa9,
                                         0xe2, 0x82, 0xac, 0xed, 0xa0, 0xf0, 0x9f, 0x98, 0xff};
    for (int it = 0; it < 5000; it++) {
        char body[128], s[16];
        size_t n = 1 + tu_below(&rng, 8), len;
        bool clean = true;
        pf_update u;
        pf_proto_error e;
        pf_status st;
        for (size_t i = 0; i < n; i++) {
            s[i] = (char)pool[tu_below(&rng, sizeof(pool))];
            if ((unsigned char)s[i] < 0x20) clean = false;
        }
        if (!pf_utf8_is_valid(s, n)) clean = false;
        len = (size_t)snprintf(body, sizeof(body), "{\"doors\":[{\"id\":\"%.*s\",\"open\":false}]}",
                               (int)n, s);
        memset(&e, 0, sizeof(e));
        st = pf_map_patch_parse(body, len, &u, &e);
        if (clean) {
            ck_assert_msg(st == PF_OK, "refused a clean id: %s", e.message);
            ck_assert(strlen(u.doors[0].id) == n && memcmp(u.doors[0].id, s, n) == 0);
            pf_update_free(&u);
        } else {
            ck_assert_int_eq(st, PF_EPARSE);
            ck_assert_str_eq(e.field, "doors[0].id");
            assert_clean_error(&e);
        }
    }
}
END_TEST

/* The reference cut: walk the characters with ref_seq_len (a byte that
 * starts none counts alone) and keep the last boundary within max. */
static size_t ref_cut(const unsigned char *s, size_t n, size_t max) {
    size_t i = 0, keep = 0;
    while (i < n) {
        size_t k = ref_seq_len(s + i, n - i);
        i += k ? k : 1;
        if (i <= max) keep = i;
    }
    return n <= max ? n : keep;
}

START_TEST(utf8_cut_keeps_whole_characters) {
    uint64_t rng = tu_seed("utf8_cut_keeps_whole_characters", 0xc07);
    static const char *const parts[] = {"a",    "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                        "\xff", "\x80",     "\xe2\x82"};
    for (int it = 0; it < 5000; it++) {
        char s[64];
        size_t n = 0, parts_n = 1 + tu_below(&rng, 12);
        for (size_t i = 0; i < parts_n; i++) {
            const char *p = parts[tu_below(&rng, sizeof(parts) / sizeof(parts[0]))];
            size_t k = strlen(p);
            memcpy(s + n, p, k);
            n += k;
        }
        for (size_t max = 0; max <= n + 1; max++) {
            size_t len = pf_utf8_cut(s, n, max);
            ck_assert_uint_eq(len, ref_cut((const unsigned char *)s, n, max));
            /* A valid string cut stays valid. */
            if (pf_utf8_is_valid(s, n)) ck_assert(pf_utf8_is_valid(s, len));
        }
    }
}
END_TEST

/* An error's field is cut at a whole character, never inside one: set
 * longer than its buffer, nested under a parent (pf_proto_error_nest), and
 * a navmesh upload's from_grid field (the fuzz target's crash input in
 * tests/fuzz_seeds: a door named by 64 bytes of multi-byte characters,
 * "from_grid.doors.<name>" is longer than a field). */
START_TEST(utf8_error_fields_cut_whole_characters) {
    static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    for (size_t c = 0; c < 3; c++)
        for (size_t pad = 0; pad < 4; pad++) {
            char name[160], want[200];
            size_t n = pad;
            pf_proto_error e;
            memset(name, 'f', pad);
            while (n + strlen(chars[c]) < sizeof(name)) {
                memcpy(name + n, chars[c], strlen(chars[c]));
                n += strlen(chars[c]);
            }
            name[n] = '\0';
            pf_proto_error_set(&e, PF_EINVAL, PF_ERR_NONE, name, "Field '%s' is bad.", name);
            assert_clean_error(&e);
            ck_assert_uint_eq(strlen(e.field), pf_utf8_cut(name, n, sizeof(e.field) - 1));
            ck_assert(strncmp(e.field, name, strlen(e.field)) == 0);
            ck_assert_uint_eq(strlen(e.message),
                              pf_utf8_cut(e.message, strlen(e.message), sizeof(e.message) - 1));
            /* Nested: "lines[3]." + the field, cut again. */
            snprintf(want, sizeof(want), "lines[3].%s", e.field);
            pf_proto_error_nest(&e, "lines[3]");
            assert_clean_error(&e);
            ck_assert_uint_eq(strlen(e.field),
                              pf_utf8_cut(want, strlen(want), sizeof(e.field) - 1));
            ck_assert(strncmp(e.field, want, strlen(e.field)) == 0);
        }
    for (size_t c = 0; c < 3; c++)
        for (size_t pad = 1; pad < 4; pad++) {
            /* A door without cells, named by 64 bytes: "doors.<name>" under
             * "from_grid" is longer than a field. */
            char name[80], body[512], expect_field[160];
            size_t n = pad;
            cJSON *root;
            pf_grid_limits glim = pf_grid_default_limits();
            pf_nav_limits nlim = pf_nav_default_limits();
            pf_nav_upload u;
            pf_proto_error e;
            memset(name, 'd', pad);
            while (n + strlen(chars[c]) <= 64) {
                memcpy(name + n, chars[c], strlen(chars[c]));
                n += strlen(chars[c]);
            }
            name[n] = '\0';
            snprintf(body, sizeof(body),
                     "{\"kind\":\"navmesh\",\"from_grid\":{\"rows\":[\"..\",\"..\"],"
                     "\"doors\":{\"%s\":{}}}}",
                     name);
            root = cJSON_Parse(body);
            ck_assert_ptr_nonnull(root);
            memset(&u, 0, sizeof(u));
            memset(&e, 0, sizeof(e));
            ck_assert_int_ne(pf_nav_upload_from_json(root, &glim, &nlim, &u, &e), PF_OK);
            cJSON_Delete(root);
            pf_nav_upload_free(&u);
            assert_clean_error(&e);
            snprintf(expect_field, sizeof(expect_field), "from_grid.doors.%s", name);
            ck_assert_msg(strncmp(e.field, expect_field, strlen(e.field)) == 0, "%s", e.field);
            ck_assert_uint_eq(strlen(e.field),
                              pf_utf8_cut(expect_field, strlen(expect_field), sizeof(e.field) - 1));
        }
}
END_TEST

TU_SUITE(utf8) {
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, utf8_matches_reference_decoder);
    tcase_add_test(tc, utf8_known_sequences);
    tcase_add_test(tc, utf8_sanitize_in_place);
    tcase_add_test(tc, utf8_writer_always_emits_valid_json);
    tcase_add_test(tc, utf8_path_requests_refuse_bad_strings);
    tcase_add_test(tc, utf8_maps_and_updates_refuse_bad_strings);
    tcase_add_test(tc, utf8_ndjson_prefix_counts_blank_lines);
    tcase_add_test(tc, utf8_random_strings_in_requests);
    tcase_add_test(tc, utf8_cut_keeps_whole_characters);
    tcase_add_test(tc, utf8_error_fields_cut_whole_characters);
    suite_add_tcase(s, tc);
    return s;
}
