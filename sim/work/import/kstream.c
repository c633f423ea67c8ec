/* kstream.c: reading a Kineto trace as a stream (see kstream.h): the
 * extent of each JSON value is found by tracking strings and nesting, and
 * each event is parsed on its own. */
#include "kstream.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gz.h"

struct kstream {
    void *gz;                   /* gzFile, behind gz.h */
    const char *path;
    char *buf;
    size_t len, pos, cap;
    int eof;
    long line;                  /* 1-based line of buf[pos] */
    uint64_t bytes;             /* decompressed bytes read */
};

static int ks_fill(struct kstream *r, struct diag *d)
{
    if (r->eof)
        return 0;
    if (r->pos > 0) { /* keep the unread tail */
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len == r->cap) {
        if (r->cap >= ((size_t)1 << 28))
            return diag_set(d, DIAG_E_RANGE, r->path, (int)r->line, "traceEvents",
                            "an event longer than 256 MiB");
        r->cap *= 2;
        r->buf = sim_xrealloc(r->buf, r->cap + 1);
    }
    long got = gz_read_some(r->gz, r->buf + r->len, r->cap - r->len, r->path, d);
    if (got < 0)
        return -1;
    if (got == 0)
        r->eof = 1;
    r->len += (size_t)got;
    r->bytes += (uint64_t)got;
    return 0;
}

/* Next byte without consuming; -1 at the end. */
static int ks_peek(struct kstream *r, struct diag *d, int *err)
{
    while (r->pos == r->len) {
        if (r->eof)
            return -1;
        if (ks_fill(r, d) != 0) {
            *err = 1;
            return -1;
        }
    }
    return (unsigned char)r->buf[r->pos];
}

static void ks_skip_ws(struct kstream *r, struct diag *d, int *err)
{
    for (;;) {
        int c = ks_peek(r, d, err);
        if (c == '\n')
            r->line++;
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            return;
        r->pos++;
    }
}

/* The extent of the JSON value starting at pos: strings and nesting are
 * tracked so brackets inside strings do not count.  On success the value
 * is buf[start .. pos). */
static int ks_value(struct kstream *r, size_t *start, struct diag *d)
{
    int depth = 0, in_str = 0, esc = 0;
    size_t i = r->pos;
    *start = r->pos;
    for (;;) {
        while (i == r->len) {
            size_t off = *start;
            r->pos = off; /* ks_fill keeps from pos on */
            if (r->eof)
                return diag_set(d, DIAG_E_PARSE, r->path, (int)r->line, "traceEvents",
                                "the file ends inside an event (truncated?)");
            if (ks_fill(r, d) != 0)
                return -1;
            i = i - off;
            *start = 0;
        }
        char c = r->buf[i++];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"')
                in_str = 0;
            if (c == '\n')
                r->line++;
            if (depth == 0 && !in_str)
                break; /* a top-level string */
            continue;
        }
        if (depth == 0 && i - 1 > *start &&
            (c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
            i--; /* a number or literal ended */
            break;
        }
        if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth < 0)
                return diag_set(d, DIAG_E_PARSE, r->path, (int)r->line, "traceEvents", "unbalanced brackets");
            if (depth == 0)
                break;
        } else if (c == '\n') {
            r->line++;
        }
    }
    r->pos = i;
    return 0;
}
/* Past the opening of the top-level "traceEvents" array (after the top
 * level's '{'), skipping the other members.  0, 1 if there is none, or -1
 * with *d. */
static int find_events(struct kstream *r, const char *path, struct diag *d, int *err)
{
    for (;;) {
        ks_skip_ws(r, d, err);
        int c = ks_peek(r, d, err);
        if (*err)
            return -1;
        if (c == '}' || c < 0)
            return 1; /* no traceEvents */
        if (c == ',') {
            r->pos++;
            continue;
        }
        size_t ks;
        if (c != '"' || ks_value(r, &ks, d) != 0) {
            if (c != '"')
                return diag_set(d, DIAG_E_PARSE, path, (int)r->line, "", "expected a member name");
            return -1;
        }
        int is_events = r->pos - ks == 13 && memcmp(r->buf + ks, "\"traceEvents\"", 13) == 0;
        ks_skip_ws(r, d, err);
        if (ks_peek(r, d, err) != ':')
            return diag_set(d, DIAG_E_PARSE, path, (int)r->line, "", "expected ':'");
        r->pos++;
        ks_skip_ws(r, d, err);
        if (is_events) {
            if (ks_peek(r, d, err) != '[')
                return diag_set(d, DIAG_E_TYPE, path, (int)r->line, "traceEvents", "expected an array");
            r->pos++;
            return 0;
        }
        size_t vs;
        if (ks_value(r, &vs, d) != 0)
            return -1;
    }
}

/* The events, each parsed and read into S, up to the array's end.  0 or
 * -1 with *d. */
static int read_events(struct kstream *r, const char *path, struct kstate *S, struct diag *d,
                       int *err)
{
    for (;;) {
        ks_skip_ws(r, d, err);
        int c = ks_peek(r, d, err);
        if (*err)
            return -1;
        if (c < 0)
            return diag_set(d, DIAG_E_PARSE, path, (int)r->line, "traceEvents",
                            "the file ends inside traceEvents (truncated?)");
        if (c == ']')
            return 0;
        if (c == ',') {
            r->pos++;
            continue;
        }
        long line = r->line;
        size_t vs;
        if (ks_value(r, &vs, d) != 0)
            return -1;
        cJSON *e = cJSON_ParseWithLength(r->buf + vs, r->pos - vs);
        if (e == NULL)
            return diag_set(d, DIAG_E_PARSE, path, (int)line, "traceEvents", "malformed event");
        kineto_event(S, e);
        cJSON_Delete(e);
    }
}

int kstream_read(const char *path, struct kstate *S, struct diag *d)
{
    struct kstream r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.line = 1;
    r.cap = 1 << 20;
    r.buf = sim_xcalloc(r.cap + 1, 1);
    r.gz = gz_open_read(path, d);
    int rc = -1, err = 0;
    if (r.gz == NULL)
        goto out;
    ks_skip_ws(&r, d, &err);
    int c = ks_peek(&r, d, &err);
    if (err)
        goto out;
    int top_array = c == '[';
    if (c != '{' && c != '[') {
        rc = diag_set(d, DIAG_E_PARSE, path, (int)r.line, "", "not JSON (expected { or [)");
        goto out;
    }
    r.pos++;
    if (!top_array && (rc = find_events(&r, path, d, &err)) != 0)
        goto out;
    rc = read_events(&r, path, S, d, &err);
out:
    if (r.gz != NULL)
        gz_close(r.gz);
    free(r.buf);
    return rc;
}
