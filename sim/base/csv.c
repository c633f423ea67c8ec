/* csv.c: see csv.h. */
#include "csv.h"

#include <string.h>

void csv_field(struct sb *b, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        sb_puts(b, s);
        return;
    }
    sb_putn(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            sb_putn(b, "\"", 1);
        sb_putn(b, s, 1);
    }
    sb_putn(b, "\"", 1);
}

/* One quoted field at p (after its opening quote) into w, unquoted in
 * place; returns where the field's text ends, or NULL if the quote does
 * not close. */
static char *unquote(char *p, char *w)
{
    for (;;) {
        if (*p == '\0')
            return NULL;
        if (*p == '"') {
            if (p[1] == '"') {
                *w++ = '"';
                p += 2;
                continue;
            }
            *w = '\0';
            return p + 1;
        }
        *w++ = *p++;
    }
}

int csv_split(char *line, char **cols, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max)
            return -1;
        if (*p == '"') {
            cols[n++] = p + 1;
            p = unquote(p + 1, p + 1);
            if (p == NULL)
                return -1;          /* unterminated quote */
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == '\0' || *p == '\r' || *p == '\n')
                return n;
            return -1;
        }
        cols[n++] = p;
        while (*p && *p != ',' && *p != '\r' && *p != '\n')
            p++;
        if (*p == ',') {
            *p++ = '\0';
            continue;
        }
        *p = '\0';
        return n;
    }
}

const char *csv_skip(const char *p)
{
    if (*p == '"') {
        for (p++; *p != '\0'; p++)
            if (*p == '"') {
                if (p[1] == '"')
                    p++;
                else {
                    p++;
                    break;
                }
            }
    } else {
        p += strcspn(p, ",\n");
    }
    return *p == ',' ? p + 1 : NULL;
}
