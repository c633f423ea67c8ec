/* numfmt.c: see numfmt.h. */
#include "numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put_u64(char *buf, size_t n, uint64_t u, int neg)
{
    char tmp[24];
    int i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0);
    if (neg)
        tmp[--i] = '-';
    size_t len = sizeof tmp - (size_t)i;
    if (len + 1 > n)
        return snprintf(buf, n, "?");
    memcpy(buf, tmp + i, len);
    buf[len] = '\0';
    return (int)len;
}

int numfmt_u64(char *buf, size_t n, uint64_t v)
{
    return put_u64(buf, n, v, 0);
}

/* 10^k for 0 <= k <= 27: exact in long double (5^27 < 2^63) */
static const long double pow10l_exact[28] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};

static const uint64_t pow10u[11] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                    100000000, 1000000000, 10000000000};

/* The p significant digits printf's %.<p>g gives for |v| (finite, non-zero,
 * p <= 10) and the decimal exponent of the first: 0, or -1 when the
 * rounding is too close to a tie to decide in long double (the caller then
 * asks snprintf).  |v| * 10^(p-1-e) is one correctly rounded long double
 * product or quotient of exact operands, within 1e-9 of the true value
 * below 10^10; a fraction further than 1e-7 from one half rounds the same
 * either way. */
static int sig_digits(double a, int p, uint64_t *digits, int *exp10)
{
    /* the decimal exponent from the binary one (log10 was a third of the
     * time); off by one at most, which the loop below corrects */
    int be;
    frexp(a, &be);
    int e = (int)floor((be - 1) * 0.30102999566398120);
    for (int tries = 0; tries < 3; tries++) {
        int k = p - 1 - e;
        if (k > 27 || k < -27)
            return -1;
        long double s = k >= 0 ? (long double)a * pow10l_exact[k] : (long double)a / pow10l_exact[-k];
        if (s >= pow10l_exact[p]) {
            e++;
            continue;
        }
        if (s < pow10l_exact[p - 1]) {
            e--;
            continue;
        }
        /* s is in [1, 10^p): one truncation is its floor (floorl's
         * frndint and the conversions after it were half of this
         * function's time in a million-op --out) */
        uint64_t m = (uint64_t)s;
        long double frac = s - (long double)m;
        if (fabsl(frac - 0.5L) < 1e-7L)
            return -1;
        uint64_t u = m + (frac > 0.5L);
        if (u == pow10u[p]) {
            u /= 10;
            e++;
        }
        *digits = u;
        *exp10 = e;
        return 0;
    }
    return -1;
}

int numfmt_gp(char *buf, size_t n, double v, int p)
{
    uint64_t u;
    int e;
    if (v == 0 && n >= 3) { /* %g of 0 and -0 (a run's many idle levels) */
        int k = 0;
        if (signbit(v))
            buf[k++] = '-';
        buf[k++] = '0';
        buf[k] = '\0';
        return k;
    }
    if (!isfinite(v) || v == 0 || p < 1 || p > 10 || n < 32 ||
        sig_digits(fabs(v), p, &u, &e) != 0)
        return snprintf(buf, n, "%.*g", p, v);
    char d[16];
    for (int i = p - 1; i >= 0; i--) {
        d[i] = (char)('0' + u % 10);
        u /= 10;
    }
    int nd = p;             /* %g drops trailing zeros (and a bare point) */
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    char *o = buf;
    if (v < 0)
        *o++ = '-';
    if (e >= -4 && e < p) {
        if (e >= 0) {
            int ip = e + 1;     /* digits before the point (ip <= p) */
            for (int i = 0; i < ip; i++)
                *o++ = i < nd ? d[i] : '0';
            if (nd > ip) {
                *o++ = '.';
                for (int i = ip; i < nd; i++)
                    *o++ = d[i];
            }
        } else {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -e - 1; i++)
                *o++ = '0';
            for (int i = 0; i < nd; i++)
                *o++ = d[i];
        }
    } else {
        *o++ = d[0];
        if (nd > 1) {
            *o++ = '.';
            for (int i = 1; i < nd; i++)
                *o++ = d[i];
        }
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae >= 100)
            *o++ = (char)('0' + ae / 100);
        *o++ = (char)('0' + ae / 10 % 10);
        *o++ = (char)('0' + ae % 10);
    }
    *o = '\0';
    return (int)(o - buf);
}

int numfmt_g(char *buf, size_t n, double v)
{
    if (isfinite(v) && fabs(v) < 1e15 && v == floor(v))
        return put_u64(buf, n, (uint64_t)fabs(v), v < 0);
    return numfmt_gp(buf, n, v, 10);
}

int numfmt_fix(char *buf, size_t n, double v, int decimals)
{
    static const double scale[7] = {1, 10, 100, 1000, 1e4, 1e5, 1e6};
    /* the scaled value must stay exact in a double (< 2^53) */
    if (decimals < 0 || decimals > 6 || !isfinite(v) || fabs(v) * scale[decimals] >= 9e15)
        return snprintf(buf, n, "%.*f", decimals < 0 ? 0 : decimals, v);
    int neg = v < 0;
    uint64_t m = (uint64_t)(fabs(v) * scale[decimals] + 0.5);
    if (m == 0)
        neg = 0;
    uint64_t p = (uint64_t)scale[decimals];
    int k = put_u64(buf, n, m / p, neg);
    if (decimals == 0 || (size_t)k + (size_t)decimals + 2 > n)
        return k;
    buf[k++] = '.';
    uint64_t f = m % p;
    for (int i = decimals - 1; i >= 0; i--) {
        buf[k + i] = (char)('0' + f % 10);
        f /= 10;
    }
    k += decimals;
    buf[k] = '\0';
    return k;
}

int numfmt_sig(char *buf, size_t n, double v, int sig)
{
    if (!isfinite(v) || sig < 1 || sig > 15)
        return snprintf(buf, n, "%.*g", sig < 1 ? 1 : sig, v);
    if (v == 0)
        return snprintf(buf, n, "0");
    int neg = v < 0;
    double a = fabs(v);
    /* the decimal exponent and the scaling by exact powers of ten (1e0 to
     * 1e22 are exact doubles); log10 and pow only outside that range */
    static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    int e;
    if (a >= 1.0 && a < 1e22) {
        int be;
        frexp(a, &be);
        e = (int)((be - 1) * 0.30102999566398120);  /* floor(log10(2^(be-1))) */
        while (e < 22 && a >= p10[e + 1])
            e++;
        while (e > 0 && a < p10[e])
            e--;
    } else {
        e = (int)floor(log10(a));
    }
    int k10 = e - sig + 1;
    uint64_t m;
    if (k10 >= -22 && k10 <= 22) {
        /* a scaled by an exact power of ten, rounded half to even on the
         * exact product or quotient (its rounding error is recovered with
         * fma), so the digits are the ones %e prints */
        double q, r;
        if (k10 >= 0) {
            q = a / p10[k10];
            r = fma(-q, p10[k10], a);   /* a - q * 10^k10, exactly; same sign as the error */
        } else {
            q = a * p10[-k10];
            r = fma(a, p10[-k10], -q);  /* a * 10^-k10 - q, exactly */
        }
        double f = floor(q), frac = q - f;
        m = (uint64_t)f;
        if (frac > 0.5 || (frac == 0.5 && (r > 0 || (r == 0 && (m & 1)))))
            m++;
    } else {
        m = (uint64_t)(a / pow(10.0, k10) + 0.5);
    }
    uint64_t top = 1;
    for (int i = 0; i < sig; i++)
        top *= 10;
    if (m >= top) { /* rounding carried into a new digit */
        m /= 10;
        e++;
    }
    char digits[24];
    int nd = put_u64(digits, sizeof digits, m, 0);
    char out[48];
    int k = 0;
    if (neg)
        out[k++] = '-';
    out[k++] = digits[0];
    /* drop trailing zeros of the fraction, as %g does */
    int last = nd - 1;
    while (last > 0 && digits[last] == '0')
        last--;
    if (last > 0) {
        out[k++] = '.';
        for (int i = 1; i <= last; i++)
            out[k++] = digits[i];
    }
    out[k++] = 'e';
    out[k++] = e < 0 ? '-' : '+';
    int ae = e < 0 ? -e : e;
    if (ae < 10)
        out[k++] = '0';
    char eb[8];
    int ne = put_u64(eb, sizeof eb, (uint64_t)ae, 0);
    memcpy(out + k, eb, (size_t)ne);
    k += ne;
    out[k] = '\0';
    if ((size_t)k + 1 > n)
        return snprintf(buf, n, "?");
    memcpy(buf, out, (size_t)k + 1);
    return k;
}

int num_is_decimal(const char *s)
{
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (digits == 0)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

int num_parse(const char *s, double *out)
{
    if (!num_is_decimal(s))
        return -1;
    double x = strtod(s, NULL);
    if (!isfinite(x))
        return -1;
    *out = x;
    return 0;
}

void numfmt_time(char *buf, size_t n, double s)
{
    double a = fabs(s);
    if (a >= 1.0)
        snprintf(buf, n, "%.3f s", s);
    else if (a >= 1e-3)
        snprintf(buf, n, "%.3f ms", s * 1e3);
    else if (a >= 1e-6)
        snprintf(buf, n, "%.3f us", s * 1e6);
    else
        snprintf(buf, n, "%.1f ns", s * 1e9);
}

void numfmt_si(char *buf, size_t n, double v, const char *unit)
{
    static const char *const pre[] = {"", "k", "M", "G", "T", "P", "E"};
    int i = 0;
    while (fabs(v) >= 1000.0 && i < 6) {
        v /= 1000.0;
        i++;
    }
    snprintf(buf, n, "%.3g %s%s", v, pre[i], unit);
}
