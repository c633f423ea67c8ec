/* numfmt.h: number printing for the writers.  printf's floating-point
 * conversion dominated the time of writing reports, so whole numbers and
 * fixed-point values are formatted with integer arithmetic; anything else
 * falls back to snprintf.  Output is deterministic either way. */
#ifndef STRATA_NUMFMT_H
#define STRATA_NUMFMT_H

#include <stddef.h>

/* Like "%.10g", exact for whole numbers below 1e15 (printed as integers). */
int numfmt_g(char *buf, size_t n, double v);
/* Like "%.*f" with 0..6 decimals, for |v| < 1e12 (else snprintf). */
int numfmt_fix(char *buf, size_t n, double v, int decimals);

#endif
