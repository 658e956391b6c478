/* b64dec.c -- see b64dec.h. */
#include "b64dec.h"

#include <stdlib.h>
#include <string.h>

static int digit(char c) {
    const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr(a, c) : NULL;
    return p ? (int)(p - a) : -1;
}

bool tu_b64_decode(const char *s, size_t n, unsigned char **out, size_t *len) {
    unsigned char *o;
    size_t k = 0;
    *out = NULL;
    *len = 0;
    if (n % 4) return false;
    o = malloc(n / 4 * 3 + 1);
    if (!o) return false;
    for (size_t i = 0; i < n; i += 4) {
        int v[4], pad = 0;
        for (int j = 0; j < 4; j++) {
            if (s[i + j] == '=' && i + 4 == n && j >= 2) {
                v[j] = 0;
                pad++;
                continue;
            }
            if (pad || (v[j] = digit(s[i + j])) < 0) {
                free(o);
                return false;
            }
        }
        unsigned long x = (unsigned long)v[0] << 18 | (unsigned long)v[1] << 12 |
                          (unsigned long)v[2] << 6 | (unsigned long)v[3];
        o[k++] = (unsigned char)(x >> 16);
        if (pad < 2) o[k++] = (unsigned char)(x >> 8);
        if (pad < 1) o[k++] = (unsigned char)x;
    }
    *out = o;
    *len = k;
    return true;
}
