/* http_parse.c -- the incremental HTTP/1.x response parser. */
#include "http_parse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
    ST_STATUS = 0, /* reading the status line */
    ST_HEADER,     /* reading header lines */
    ST_BODY_LEN,   /* Content-Length body */
    ST_BODY_EOF,   /* body until the connection closes */
    ST_CHUNK_SIZE, /* a chunk-size line */
    ST_CHUNK_DATA,
    ST_CHUNK_CRLF, /* the CRLF after a chunk's data */
    ST_TRAILER,    /* trailer lines after the last chunk */
    ST_DONE
};

void pf_http_resp_init(pf_http_resp *r, bool keep_body, size_t body_max) {
    memset(r, 0, sizeof(*r));
    r->keep_body = keep_body;
    r->body_max = body_max;
    pf_http_resp_reset(r);
}

void pf_http_resp_reset(pf_http_resp *r) {
    r->status = 0;
    r->minor = 1;
    r->keep_alive = true;
    r->content_length = -1;
    r->chunked = false;
    r->retry_after = -1;
    r->body_len = 0;
    r->body_truncated = false;
    if (r->body) r->body[0] = '\0';
    r->state = ST_STATUS;
    r->line_len = 0;
    r->remaining = 0;
    r->head_request = false;
}

void pf_http_resp_free(pf_http_resp *r) {
    free(r->body);
    r->body = NULL;
    r->body_cap = 0;
}

static bool keep(pf_http_resp *r, const char *p, size_t n) {
    size_t room, take;
    r->body_len += n;
    if (!r->keep_body) return true;
    room = r->body_max > r->body_len - n ? r->body_max - (r->body_len - n) : 0;
    take = n < room ? n : room;
    if (take < n) r->body_truncated = true;
    if (!take) return true;
    {
        size_t have = r->body_len - n; /* bytes kept so far (all, while under the cap) */
        if (have + take + 1 > r->body_cap) {
            size_t cap = r->body_cap ? r->body_cap : 1024;
            char *b;
            while (cap < have + take + 1) cap *= 2;
            b = realloc(r->body, cap);
            if (!b) return false;
            r->body = b;
            r->body_cap = cap;
        }
        memcpy(r->body + have, p, take);
        r->body[have + take] = '\0';
    }
    return true;
}

/* Whether the comma-separated header value contains the token (any case). */
static bool has_token(const char *v, const char *tok) {
    size_t n = strlen(tok);
    while (*v) {
        while (*v == ' ' || *v == '\t' || *v == ',') v++;
        if (strncasecmp(v, tok, n) == 0 &&
            (v[n] == '\0' || v[n] == ',' || v[n] == ' ' || v[n] == '\t'))
            return true;
        while (*v && *v != ',') v++;
    }
    return false;
}

static bool parse_u64(const char *s, int base, uint64_t *out) {
    uint64_t v = 0;
    int digits = 0;
    while (*s == ' ' || *s == '\t') s++;
    for (; *s; s++, digits++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (base == 16 && isxdigit((unsigned char)*s))
            d = tolower((unsigned char)*s) - 'a' + 10;
        else
            break;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (!digits) return false;
    /* Only spaces, or chunk extensions (";..."), may follow. */
    while (*s == ' ' || *s == '\t') s++;
    if (*s && !(base == 16 && *s == ';')) return false;
    *out = v;
    return true;
}

static bool on_status_line(pf_http_resp *r, char *line) {
    /* "HTTP/1.1 200 OK" */
    if (strncmp(line, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)line[7]) || line[8] != ' ')
        return false;
    r->minor = line[7] - '0';
    if (!isdigit((unsigned char)line[9]) || !isdigit((unsigned char)line[10]) ||
        !isdigit((unsigned char)line[11]) || (line[12] != ' ' && line[12] != '\0'))
        return false;
    r->status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
    if (r->status < 100 || r->status > 599) return false;
    r->keep_alive = r->minor >= 1;
    return true;
}

static bool on_header(pf_http_resp *r, char *line) {
    char *colon = strchr(line, ':'), *v, *end;
    if (!colon || colon == line) return false;
    *colon = '\0';
    v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    end = v + strlen(v);
    while (end > v && (end[-1] == ' ' || end[-1] == '\t')) *--end = '\0';
    if (strcasecmp(line, "Content-Length") == 0) {
        uint64_t n;
        if (!parse_u64(v, 10, &n) || n > INT64_MAX) return false;
        if (r->content_length >= 0 && (uint64_t)r->content_length != n) return false;
        r->content_length = (int64_t)n;
    } else if (strcasecmp(line, "Transfer-Encoding") == 0) {
        if (has_token(v, "chunked")) r->chunked = true;
    } else if (strcasecmp(line, "Connection") == 0) {
        if (has_token(v, "close")) r->keep_alive = false;
        if (has_token(v, "keep-alive")) r->keep_alive = true;
    } else if (strcasecmp(line, "Retry-After") == 0) {
        uint64_t n;
        if (parse_u64(v, 10, &n) && n <= INT32_MAX) r->retry_after = (int32_t)n;
    }
    return true;
}

/* The blank line after the headers: decides how the body is framed. */
static void on_headers_end(pf_http_resp *r) {
    if (r->status < 200 || r->status == 204 || r->status == 304 || r->head_request) {
        /* 1xx are interim: the real answer follows; callers see them as done
         * responses and reset. */
        r->state = ST_DONE;
    } else if (r->chunked) {
        r->state = ST_CHUNK_SIZE;
    } else if (r->content_length >= 0) {
        r->remaining = (uint64_t)r->content_length;
        r->state = r->remaining ? ST_BODY_LEN : ST_DONE;
    } else {
        r->keep_alive = false; /* the end of the connection ends the body */
        r->state = ST_BODY_EOF;
    }
}

/* Handles one complete line (CRLF stripped) in the states that read lines. */
static bool on_line(pf_http_resp *r, char *line) {
    switch (r->state) {
    case ST_STATUS:
        if (!on_status_line(r, line)) return false;
        r->state = ST_HEADER;
        return true;
    case ST_HEADER:
        if (!*line) {
            on_headers_end(r);
            return true;
        }
        return on_header(r, line);
    case ST_CHUNK_SIZE: {
        uint64_t n;
        if (!parse_u64(line, 16, &n)) return false;
        r->remaining = n;
        r->state = n ? ST_CHUNK_DATA : ST_TRAILER;
        return true;
    }
    case ST_CHUNK_CRLF:
        if (*line) return false;
        r->state = ST_CHUNK_SIZE;
        return true;
    case ST_TRAILER:
        if (!*line) r->state = ST_DONE;
        return true;
    default:
        return false;
    }
}

pf_http_feed pf_http_resp_feed(pf_http_resp *r, const char *buf, size_t len, size_t *used) {
    size_t i = 0;
    while (i < len && r->state != ST_DONE) {
        if (r->state == ST_BODY_LEN || r->state == ST_CHUNK_DATA) {
            size_t n = len - i;
            if ((uint64_t)n > r->remaining) n = (size_t)r->remaining;
            if (!keep(r, buf + i, n)) goto error;
            i += n;
            r->remaining -= n;
            if (r->remaining == 0) r->state = r->state == ST_BODY_LEN ? ST_DONE : ST_CHUNK_CRLF;
        } else if (r->state == ST_BODY_EOF) {
            if (!keep(r, buf + i, len - i)) goto error;
            i = len;
        } else {
            char c = buf[i++];
            if (c == '\n') {
                if (r->line_len && r->line[r->line_len - 1] == '\r') r->line_len--;
                r->line[r->line_len] = '\0';
                r->line_len = 0;
                if (!on_line(r, r->line)) goto error;
            } else {
                if (r->line_len + 1 >= sizeof(r->line)) goto error;
                r->line[r->line_len++] = c;
            }
        }
    }
    *used = i;
    return r->state == ST_DONE ? PF_HTTP_DONE : PF_HTTP_MORE;
error:
    *used = i;
    return PF_HTTP_ERROR;
}

pf_http_feed pf_http_resp_eof(pf_http_resp *r) {
    if (r->state == ST_BODY_EOF) {
        r->state = ST_DONE;
        return PF_HTTP_DONE;
    }
    return r->state == ST_DONE ? PF_HTTP_DONE : PF_HTTP_ERROR;
}
