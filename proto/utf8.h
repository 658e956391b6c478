/* utf8.h -- strict UTF-8 (RFC 3629): what every string a client sends must
 * be, and what every answer is.
 *
 * Valid means: shortest form only (no overlong encodings such as C0 AF),
 * no UTF-16 surrogates (U+D800..U+DFFF, ED A0..ED BF), nothing above
 * U+10FFFF, no truncated sequence at the end. Pure functions, thread-safe.
 */
#ifndef PF_PROTO_UTF8_H
#define PF_PROTO_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The length (1..4) of the valid UTF-8 sequence starting s[0..n), or 0 when
 * s does not start with one (n == 0 included). */
size_t pf_utf8_seq_len(const unsigned char *s, size_t n);

/* The byte offset of the first byte that does not start a valid sequence
 * in s[0..n), or n when all of it is valid. */
size_t pf_utf8_check(const char *s, size_t n);

/* pf_utf8_check(s, n) == n. */
bool pf_utf8_is_valid(const char *s, size_t n);

/* The length of the longest prefix of s[0..n) of at most max bytes that
 * does not end inside a valid sequence: where a string may be cut without
 * splitting a character (the cut drops the whole character). Bytes that
 * start no valid sequence count as one byte each (sanitize them). */
size_t pf_utf8_cut(const char *s, size_t n, size_t max);

/* Makes the NUL-terminated s valid UTF-8 in place: each byte that does not
 * start a valid sequence becomes '?' (a sentence cut by snprintf in the
 * middle of a character ends in '?'). */
void pf_utf8_sanitize(char *s);

#endif
