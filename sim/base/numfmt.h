/* numfmt.h: number printing for the writers, and the one strict number
 * reader for the loaders.  printf's floating-point conversion dominated the
 * time of writing reports, so whole numbers, fixed-point values and "%.Ng"
 * (N <= 10) are formatted with integer arithmetic; anything else, and a
 * rounding too close to a tie, falls back to snprintf.
 * Output is deterministic either way. */
#ifndef STRATA_NUMFMT_H
#define STRATA_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

/* An unsigned integer in decimal. */
int numfmt_u64(char *buf, size_t n, uint64_t v);
/* Like "%.10g", exact for whole numbers below 1e15 (printed as integers). */
int numfmt_g(char *buf, size_t n, double v);
/* Exactly what "%.<p>g" prints, for p 1..10 (others: snprintf), with
 * integer arithmetic unless the rounding is within 1e-7 of a tie (then
 * snprintf decides); n must be at least 32. */
int numfmt_gp(char *buf, size_t n, double v, int p);
/* sig (1..15) significant digits in exponent form "1.2345e+09" for finite
 * non-zero v; "0" for zero.  Integer arithmetic apart from one log10/pow. */
int numfmt_sig(char *buf, size_t n, double v, int sig);
/* Like "%.*f" with 0..6 decimals (ties round away from zero, and -0 prints
 * as 0); values too large to scale exactly fall back to snprintf. */
int numfmt_fix(char *buf, size_t n, double v, int decimals);

/* Human-readable quantities for the text outputs (snprintf, 3 significant
 * digits): "9.532 ms" (s, ms, us, ns), "13.2 GB", "1.39 TB/s" (SI prefixes
 * up to E before unit). */
void numfmt_time(char *buf, size_t n, double seconds);
void numfmt_si(char *buf, size_t n, double v, const char *unit);

/* Strict decimal number: [+-]digits[.digits][(e|E)[+-]digits], at least one
 * digit before or after the point, nothing after.  No hexadecimal (strtod
 * reads "0x10" as 16), inf, nan, underscores or spaces.  1 if s is one. */
int num_is_decimal(const char *s);
/* num_is_decimal(s) and finite: stores the value and returns 0, else -1. */
int num_parse(const char *s, double *out);

#endif
