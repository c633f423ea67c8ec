/* numfmt.c: see numfmt.h. */
#include "numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
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

int numfmt_g(char *buf, size_t n, double v)
{
    if (isfinite(v) && fabs(v) < 1e15 && v == floor(v))
        return put_u64(buf, n, (uint64_t)fabs(v), v < 0);
    return snprintf(buf, n, "%.10g", v);
}

int numfmt_fix(char *buf, size_t n, double v, int decimals)
{
    static const double scale[7] = {1, 10, 100, 1000, 1e4, 1e5, 1e6};
    if (decimals < 0 || decimals > 6 || !isfinite(v) || fabs(v) >= 1e12)
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
