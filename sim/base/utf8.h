/* utf8.h: the one check for names that reach report.json, timeline.json,
 * HTML, gnuplot and the terminal.  JSON requires UTF-8, so a byte that is
 * not makes readers reject the whole report; a control character (an
 * escape sequence in an op name) would drive the terminal that `run`
 * prints to.  Loaders refuse such names; writers replace them. */
#ifndef STRATA_UTF8_H
#define STRATA_UTF8_H

#include <stddef.h>

/* Length in bytes (1-4) of the printable UTF-8 character at s (which has
 * n > 0 bytes), or 0 if s does not start one: a malformed or overlong
 * sequence, a surrogate, a code point over U+10FFFF, or a C0/C1 control
 * character or DEL. */
size_t utf8_char_len(const char *s, size_t n);
/* 1 if the NUL-terminated s is printable UTF-8 throughout; else 0 with
 * *bad (if not NULL) the offset of the first bad byte. */
int utf8_printable(const char *s, size_t *bad);
/* "\xEF\xBF\xBD", U+FFFD REPLACEMENT CHARACTER, what writers put for each
 * bad byte. */
#define UTF8_REPLACEMENT "\xEF\xBF\xBD"

#endif
