/* textline.h: one line of a text input (CSV, SCALE-Sim .cfg).  fgets
 * cannot tell a NUL byte from the end of the line, so a binary file or one
 * stray NUL read as a "line longer than ..." or as too few columns; this
 * reader says which it was. */
#ifndef STRATA_TEXTLINE_H
#define STRATA_TEXTLINE_H

#include <stddef.h>
#include <stdio.h>

enum textline {
    TEXTLINE_OK = 1,     /* a line, with its '\n' if it had one, NUL-terminated */
    TEXTLINE_EOF = 0,    /* nothing more */
    TEXTLINE_LONG = -1,  /* the line does not fit in n - 1 bytes */
    TEXTLINE_NUL = -2,   /* the line holds a NUL byte */
    TEXTLINE_ERROR = -3  /* a read error (errno) */
};

/* Reads the next line of f into buf (n >= 2 bytes); *len gets its length. */
enum textline textline_read(FILE *f, char *buf, size_t n, size_t *len);
/* "line longer than N bytes", "a NUL byte (is this a text file?)", ... */
const char *textline_what(enum textline r);

#endif
