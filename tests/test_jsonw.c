/* test_jsonw.c -- proto/jsonw.c: the JSON writer. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "b64dec.h"
#include "jsonw.h"
#include "testutil.h"

START_TEST(jsonw_structure_and_escapes) {
    pf_jsonw w;
    char *s;
    pf_jsonw_init(&w, 4); /* tiny start: growth is exercised */
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kstr(&w, "a", "q\"b\\s\n\t\x01 é");
    pf_jsonw_kint(&w, "neg", INT64_MIN);
    pf_jsonw_kuint(&w, "big", UINT64_MAX);
    pf_jsonw_key(&w, "arr");
    pf_jsonw_arr_begin(&w);
    pf_jsonw_point(&w, -3, 0);
    pf_jsonw_point(&w, 2147483647, -2147483647 - 1);
    pf_jsonw_arr_begin(&w);
    pf_jsonw_arr_end(&w);
    pf_jsonw_null(&w);
    pf_jsonw_bool(&w, false);
    pf_jsonw_arr_end(&w);
    pf_jsonw_key(&w, "empty");
    pf_jsonw_obj_begin(&w);
    pf_jsonw_obj_end(&w);
    pf_jsonw_obj_end(&w);
    ck_assert(!pf_jsonw_failed(&w));
    s = tu_jsonw_text(&w);
    ck_assert_str_eq(s, "{\"a\":\"q\\\"b\\\\s\\n\\t\\u0001 é\",\"neg\":-9223372036854775808,"
                        "\"big\":18446744073709551615,\"arr\":[[-3,0],[2147483647,-2147483648],"
                        "[],null,false],\"empty\":{}}");
    free(s);
}
END_TEST

START_TEST(jsonw_doubles_roundtrip) {
    static const double vals[] = {0.0,
                                  1.0,
                                  -2.5,
                                  0.1,
                                  1.0 / 3.0,
                                  1e300,
                                  5e-324,
                                  123456789.0,
                                  12.071067811865476,
                                  41.012193308819754,
                                  -0.0,
                                  9007199254740993.0};
    char buf[40];
    uint64_t st = tu_seed("jsonw_doubles_roundtrip", 7);
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        pf_jsonw_fmt_double(vals[i], buf);
        ck_assert_msg(strtod(buf, NULL) == vals[i], "%.17g printed as %s", vals[i], buf);
    }
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = tu_rand(&st);
        double v;
        memcpy(&v, &bits, sizeof(v));
        if (!isfinite(v)) continue;
        pf_jsonw_fmt_double(v, buf);
        ck_assert_msg(strtod(buf, NULL) == v, "%.17g printed as %s", v, buf);
    }
    /* Shortest form: no 17-digit noise for simple values. */
    pf_jsonw_fmt_double(0.1, buf);
    ck_assert_str_eq(buf, "0.1");
    pf_jsonw_fmt_double(3.0, buf);
    ck_assert_str_eq(buf, "3");
    pf_jsonw_fmt_double(NAN, buf);
    ck_assert_str_eq(buf, "null");
}
END_TEST

/* pf_jsonw_points writes what one pf_jsonw_point per point writes, after a
 * key or after other values, for coordinates of every length and sign up
 * to the int32 extremes; no points write nothing. */
START_TEST(jsonw_points_as_point_by_point) {
    uint64_t st = tu_seed("jsonw_points_as_point_by_point", 0x5eed7001);
    for (int round = 0; round < 200; round++) {
        pf_point pts[64];
        size_t n = tu_below(&st, 64), la, lb;
        pf_jsonw a, b;
        char *sa, *sb;
        for (size_t i = 0; i < n; i++) {
            uint32_t mag = tu_below(&st, 10);
            int32_t v[2];
            for (int k = 0; k < 2; k++) {
                int32_t x = (int32_t)tu_below(&st, 1u << (3 * mag + 1));
                v[k] = mag == 9 ? (tu_below(&st, 2) ? INT32_MAX : INT32_MIN)
                                : (tu_below(&st, 2) ? -x : x);
            }
            pts[i] = (pf_point){v[0], v[1]};
        }
        pf_jsonw_init(&a, 16);
        pf_jsonw_init(&b, 16);
        pf_jsonw_obj_begin(&a);
        pf_jsonw_obj_begin(&b);
        pf_jsonw_key(&a, "p");
        pf_jsonw_key(&b, "p");
        pf_jsonw_arr_begin(&a);
        pf_jsonw_arr_begin(&b);
        if (round % 2) {
            pf_jsonw_int(&a, 7);
            pf_jsonw_int(&b, 7);
        }
        pf_jsonw_points(&a, pts, n);
        for (size_t i = 0; i < n; i++) pf_jsonw_point(&b, pts[i].x, pts[i].y);
        pf_jsonw_int(&a, 8);
        pf_jsonw_int(&b, 8);
        pf_jsonw_arr_end(&a);
        pf_jsonw_arr_end(&b);
        pf_jsonw_obj_end(&a);
        pf_jsonw_obj_end(&b);
        sa = pf_jsonw_take(&a, &la);
        sb = pf_jsonw_take(&b, &lb);
        ck_assert_ptr_nonnull(sa);
        ck_assert_ptr_nonnull(sb);
        ck_assert_str_eq(sa, sb);
        ck_assert_uint_eq(la, lb);
        free(sa);
        free(sb);
    }
}
END_TEST

/* pf_jsonw_point3 (and pf_jsonw_fixed4) write each coordinate as
 * pf_jsonw_double writes it rounded to 1e-4 (the general formatter, snprintf and strtod, is the
 * reference), for floats of every magnitude and sign, values on the
 * rounding halves, integers, zeros and non-finite values. */
START_TEST(jsonw_point3_as_rounded_doubles) {
    uint64_t st = tu_seed("jsonw_point3_as_rounded_doubles", 0x5eed7003);
    int bad = 0;
    char first[160] = "";
    for (int round_ = 0; round_ < 30000; round_++) {
        float p[3];
        for (int k = 0; k < 3; k++) {
            const uint32_t kind = tu_below(&st, 8);
            const double sign = tu_below(&st, 2) ? -1.0 : 1.0;
            const double mag = pow(10.0, (double)tu_below(&st, 22) - 10.0);
            double v;
            if (kind == 0)
                v = sign * (double)tu_below(&st, 100000); /* integers */
            else if (kind == 1)
                v = sign * ((double)tu_below(&st, 2000000) + 0.5) / 1e4; /* halves */
            else if (kind == 2)
                v = tu_below(&st, 2) ? 0.0 : -0.0;
            else if (kind == 3) {
                uint32_t bits = (uint32_t)tu_rand(&st);
                float f;
                memcpy(&f, &bits, sizeof f);
                v = f; /* any float, NaN and infinities included */
            } else
                v = sign * mag * (double)tu_below(&st, 1u << 24) / (double)(1u << 24);
            p[k] = (float)v;
        }
        pf_jsonw a, b;
        pf_jsonw_init(&a, 16);
        pf_jsonw_init(&b, 16);
        pf_jsonw_point3(&a, p);
        pf_jsonw_arr_begin(&b);
        for (int k = 0; k < 3; k++) pf_jsonw_double(&b, round((double)p[k] * 1e4) / 1e4);
        pf_jsonw_arr_end(&b);
        size_t la, lb;
        char *sa = pf_jsonw_take(&a, &la), *sb = pf_jsonw_take(&b, &lb);
        ck_assert_ptr_nonnull(sa);
        ck_assert_ptr_nonnull(sb);
        if (strcmp(sa, sb) != 0) {
            if (!bad) snprintf(first, sizeof first, "%s, reference %s", sa, sb);
            bad++;
        }
        free(sa);
        free(sb);
    }
    ck_assert_msg(bad == 0, "%d points differ, first: %s", bad, first);
    /* pf_jsonw_fixed4 on doubles (lengths, costs): the same. */
    for (int i = 0; i < 30000; i++) {
        double v;
        if (i % 3 == 0) {
            uint64_t bits = tu_rand(&st);
            memcpy(&v, &bits, sizeof v); /* any double */
        } else {
            const double mag = pow(10.0, (double)tu_below(&st, 24) - 10.0);
            v = (tu_below(&st, 2) ? -mag : mag) * (double)(tu_rand(&st) >> 11) / 9007199254740992.0;
            if (i % 3 == 2) v = round(v * 1e4) / 1e4 + (tu_below(&st, 2) ? 0.5e-4 : -0.5e-4);
        }
        pf_jsonw a, b;
        pf_jsonw_init(&a, 16);
        pf_jsonw_init(&b, 16);
        pf_jsonw_fixed4(&a, v);
        pf_jsonw_double(&b, round(v * 1e4) / 1e4);
        size_t la, lb;
        char *sa = pf_jsonw_take(&a, &la), *sb = pf_jsonw_take(&b, &lb);
        ck_assert_ptr_nonnull(sa);
        ck_assert_ptr_nonnull(sb);
        if (strcmp(sa, sb) != 0) {
            if (!bad) snprintf(first, sizeof first, "%.17g as %s, reference %s", v, sa, sb);
            bad++;
        }
        free(sa);
        free(sb);
    }
    ck_assert_msg(bad == 0, "%d doubles differ, first: %s", bad, first);
}
END_TEST

START_TEST(jsonw_depth_limit_fails_sticky) {
    pf_jsonw w;
    size_t n;
    pf_jsonw_init(&w, 0);
    for (int i = 0; i < PF_JSONW_MAX_DEPTH + 1; i++) pf_jsonw_arr_begin(&w);
    ck_assert(pf_jsonw_failed(&w));
    pf_jsonw_int(&w, 1);
    ck_assert_ptr_null(pf_jsonw_take(&w, &n));
    pf_jsonw_init(&w, 0);
    pf_jsonw_obj_end(&w); /* unbalanced */
    ck_assert(pf_jsonw_failed(&w));
    pf_jsonw_free(&w);
}
END_TEST

/* Base64 in one piece and in random pieces, against the decoder of
 * tests/b64dec.c. */
START_TEST(jsonw_base64_pieces) {
    uint64_t st = tu_seed("jsonw_base64_pieces", 0xb64);
    unsigned char data[300];
    for (int round = 0; round < 500; round++) {
        size_t n = tu_below(&st, sizeof(data) + 1);
        for (size_t i = 0; i < n; i++) data[i] = (unsigned char)tu_rand(&st);
        for (int pieces = 0; pieces < 2; pieces++) {
            pf_jsonw w;
            pf_jsonw_init(&w, 1);
            pf_jsonw_arr_begin(&w);
            pf_jsonw_int(&w, 1);
            if (!pieces) {
                pf_jsonw_base64(&w, data, n);
            } else {
                pf_jsonw_b64 b;
                size_t at = 0;
                pf_jsonw_b64_begin(&w, &b);
                while (at < n) {
                    size_t k = 1 + tu_below(&st, 7);
                    if (k > n - at) k = n - at;
                    pf_jsonw_b64_part(&w, &b, data + at, k);
                    at += k;
                }
                pf_jsonw_b64_end(&w, &b);
            }
            pf_jsonw_arr_end(&w);
            char *s = tu_jsonw_text(&w);
            size_t sl = strlen(s), dl;
            unsigned char *dec;
            ck_assert(strncmp(s, "[1,\"", 4) == 0 && strcmp(s + sl - 2, "\"]") == 0);
            ck_assert(tu_b64_decode(s + 4, sl - 6, &dec, &dl));
            ck_assert_uint_eq(dl, n);
            ck_assert(n == 0 || memcmp(dec, data, n) == 0);
            free(dec);
            free(s);
        }
    }
}
END_TEST

TU_SUITE(jsonw) {
    Suite *s = suite_create("jsonw");
    TCase *tc = tcase_create("jsonw");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, jsonw_structure_and_escapes);
    tcase_add_test(tc, jsonw_doubles_roundtrip);
    tcase_add_test(tc, jsonw_depth_limit_fails_sticky);
    tcase_add_test(tc, jsonw_points_as_point_by_point);
    tcase_add_test(tc, jsonw_point3_as_rounded_doubles);
    tcase_add_test(tc, jsonw_base64_pieces);
    suite_add_tcase(s, tc);
    return s;
}
