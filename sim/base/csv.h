/* csv.h: the one CSV reader and writer of the tree (RFC 4180 quoting): the
 * report's ops.csv, the sweep's rows and merge, the validation CSVs and the
 * sweep plot's reading of its CSV all go through here. */
#ifndef STRATA_CSV_H
#define STRATA_CSV_H

#include "strbuf.h"

/* Appends field s: as it is, or quoted (quotes doubled) when it holds a
 * comma, a quote or a line break. */
void csv_field(struct sb *b, const char *s);
/* Splits one line in place into at most max fields (quotes removed, doubled
 * quotes made single; the line ends at its end, '\r' or '\n').  Returns the
 * field count, or -1 for an unterminated quote, text after a closing quote,
 * or more than max fields. */
int csv_split(char *line, char **cols, int max);
/* The field after the one p starts (quoted or not), past its comma; NULL
 * when p's field is the line's last. */
const char *csv_skip(const char *p);

#endif
