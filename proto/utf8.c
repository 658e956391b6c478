/* utf8.c -- see utf8.h. The ranges are RFC 3629's table of well-formed
 * sequences (section 4), byte by byte. */
#include "utf8.h"

#include <string.h>

size_t pf_utf8_seq_len(const unsigned char *s, size_t n) {
    unsigned char c, lo = 0x80, hi = 0xbf;
    size_t len;
    if (n == 0) return 0;
    c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xc2) return 0; /* continuation byte, or overlong C0/C1 */
    if (c < 0xe0) {
        len = 2;
    } else if (c < 0xf0) {
        len = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c < 0xf5) {
        len = 4;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return len;
}

size_t pf_utf8_check(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t k;
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        if (!(k = pf_utf8_seq_len(u + i, n - i))) return i;
        i += k;
    }
    return n;
}

bool pf_utf8_is_valid(const char *s, size_t n) { return pf_utf8_check(s, n) == n; }

size_t pf_utf8_cut(const char *s, size_t n, size_t max) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    if (max >= n) return n;
    while (i < max) {
        size_t k = pf_utf8_seq_len(u + i, n - i);
        if (!k) k = 1; /* not a character: it may be cut after */
        if (i + k > max) break;
        i += k;
    }
    return i;
}

void pf_utf8_sanitize(char *s) {
    size_t n = strlen(s), i = 0;
    while (i < n) {
        size_t k = pf_utf8_seq_len((const unsigned char *)s + i, n - i);
        if (!k) {
            s[i] = '?';
            k = 1;
        }
        i += k;
    }
}
