/* strbuf.h: a growable NUL-terminated string, for the writers that build a
 * file in memory before it goes out (plots, pages, sweep rows).  Out of
 * memory aborts with the size (sim_oom).  A zeroed struct sb is empty;
 * free(b.s) releases it. */
#ifndef STRATA_STRBUF_H
#define STRATA_STRBUF_H

#include <stddef.h>

struct sb {
    char *s;
    size_t n, cap;
};

void sb_printf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_putn(struct sb *b, const char *s, size_t n);
void sb_puts(struct sb *b, const char *s);
/* s with the HTML/XML special characters escaped. */
void sb_html(struct sb *b, const char *s);
/* s as a quoted JSON string, escaped as cJSON prints it (quote, backslash,
 * \b \f \n \r \t, other C0 controls as \u00XX; other bytes as they are). */
void sb_json(struct sb *b, const char *s);

#endif
