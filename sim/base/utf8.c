/* utf8.c: see utf8.h.  The ranges are those of RFC 3629's UTF8-char. */
#include "utf8.h"

#include <string.h>

static int cont(unsigned char c, unsigned char lo, unsigned char hi)
{
    return c >= lo && c <= hi;
}

size_t utf8_char_len(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned char c = u[0];
    if (c < 0x80)
        return c >= 0x20 && c != 0x7f ? 1 : 0;
    if (c >= 0xc2 && c <= 0xdf)   /* U+0080..U+009F are the C1 controls */
        return n >= 2 && cont(u[1], 0x80, 0xbf) && !(c == 0xc2 && u[1] <= 0x9f) ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return n >= 3 && cont(u[1], lo, hi) && cont(u[2], 0x80, 0xbf) ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return n >= 4 && cont(u[1], lo, hi) && cont(u[2], 0x80, 0xbf) && cont(u[3], 0x80, 0xbf) ? 4 : 0;
    }
    return 0;
}

int utf8_printable(const char *s, size_t *bad)
{
    size_t n = strlen(s), i = 0;
    while (i < n) {
        size_t k = utf8_char_len(s + i, n - i);
        if (k == 0) {
            if (bad != NULL)
                *bad = i;
            return 0;
        }
        i += k;
    }
    return 1;
}
