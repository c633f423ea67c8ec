/* strbuf.c: see strbuf.h. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Room for n more bytes and a terminating NUL. */
static void sb_reserve(struct sb *b, size_t n)
{
    if (b->cap - b->n > n)
        return;
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap - b->n <= n)
        cap *= 2;
    b->s = sim_xrealloc(b->s, cap);
    b->cap = cap;
}

void sb_printf(struct sb *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->s ? b->s + b->n : NULL, room, fmt, ap);
        va_end(ap);
        if (k < 0)
            return;
        if ((size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        sb_reserve(b, (size_t)k);
    }
}

void sb_putn(struct sb *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

void sb_puts(struct sb *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

void sb_html(struct sb *b, const char *s)
{
    for (;;) {
        size_t run = strcspn(s, "<>&\"'");
        sb_putn(b, s, run);
        s += run;
        if (*s == '\0')
            break;
        switch (*s) {
        case '<': sb_puts(b, "&lt;"); break;
        case '>': sb_puts(b, "&gt;"); break;
        case '&': sb_puts(b, "&amp;"); break;
        case '"': sb_puts(b, "&quot;"); break;
        case '\'': sb_puts(b, "&#39;"); break;
        default: break;
        }
        s++;
    }
}

void sb_json(struct sb *b, const char *s)
{
    sb_putn(b, "\"", 1);
    for (;;) {
        size_t run = 0;
        while (s[run] != '\0' && s[run] != '"' && s[run] != '\\' && (unsigned char)s[run] >= 32)
            run++;
        sb_putn(b, s, run);
        s += run;
        if (*s == '\0')
            break;
        switch (*s) {
        case '"': sb_puts(b, "\\\""); break;
        case '\\': sb_puts(b, "\\\\"); break;
        case '\b': sb_puts(b, "\\b"); break;
        case '\f': sb_puts(b, "\\f"); break;
        case '\n': sb_puts(b, "\\n"); break;
        case '\r': sb_puts(b, "\\r"); break;
        case '\t': sb_puts(b, "\\t"); break;
        default: sb_printf(b, "\\u%04x", (unsigned char)*s); break;
        }
        s++;
    }
    sb_putn(b, "\"", 1);
}
