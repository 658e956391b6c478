/* b64dec.h -- a plain base64 decoder for the tests (RFC 4648, padding
 * required), written apart from proto/jsonw.c's encoder. */
#ifndef PF_TESTS_B64DEC_H
#define PF_TESTS_B64DEC_H

#include <stdbool.h>
#include <stddef.h>

/* Decodes s[0..n) into a malloc'd buffer (*out, free with free()) of *len
 * bytes; false for malformed input. */
bool tu_b64_decode(const char *s, size_t n, unsigned char **out, size_t *len);

#endif
