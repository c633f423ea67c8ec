/* textline.c: see textline.h. */
#include "textline.h"

enum textline textline_read(FILE *f, char *buf, size_t n, size_t *len)
{
    size_t i = 0;
    int c = EOF;
    *len = 0;
    buf[0] = '\0';
    while (i + 1 < n && (c = getc(f)) != EOF) {
        if (c == '\0')
            return TEXTLINE_NUL;
        buf[i++] = (char)c;
        if (c == '\n')
            break;
    }
    buf[i] = '\0';
    *len = i;
    if (c == EOF && ferror(f))
        return TEXTLINE_ERROR;
    if (i == 0)
        return TEXTLINE_EOF;
    if (buf[i - 1] != '\n' && i + 1 == n) {
        c = getc(f);   /* a line of exactly n - 1 bytes that ends the file fits */
        if (c != EOF) {
            ungetc(c, f);
            return TEXTLINE_LONG;
        }
    }
    return TEXTLINE_OK;
}

const char *textline_what(enum textline r)
{
    switch (r) {
    case TEXTLINE_LONG:
        return "line too long";
    case TEXTLINE_NUL:
        return "a NUL byte (is this a text file?)";
    case TEXTLINE_ERROR:
        return "read error";
    case TEXTLINE_OK:
    case TEXTLINE_EOF:
        break;
    }
    return "";
}
