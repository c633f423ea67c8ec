/* test_unit_numfmt.c: the writers' integer-based number formatting agrees
 * with printf: whole numbers exactly, fixed-point like "%.Nf", significant
 * digits like "%.Ng" (compared by value). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "numfmt.h"
#include "test.h"

int main(void)
{
    char a[64], b[64];
    static const double whole[] = {0, 1, -1, 42, 1e14, 123456789012345.0, -9007199254740.0};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        numfmt_g(a, sizeof a, whole[i]);
        snprintf(b, sizeof b, "%.0f", whole[i]);
        CHECK(strcmp(a, b) == 0);
    }
    numfmt_g(a, sizeof a, 0.1);
    CHECK(strcmp(a, "0.1") == 0);
    /* pseudo-random values over many magnitudes */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double mant = (double)(x % 1000000007ull) / 1000000007.0;
        int e = (int)(x >> 40) % 30 - 15;
        double v = mant * pow(10.0, e) * ((x & 1) ? -1 : 1);
        for (int d = 0; d <= 6; d++) {
            if (fabs(v) >= 1e12)
                break;
            numfmt_fix(a, sizeof a, v, d);
            snprintf(b, sizeof b, "%.*f", d, v);
            /* one unit in the last place apart at most (ties, and the scaling
             * multiplication); plus the doubles' own spacing at large values */
            double da = strtod(a, NULL), db = strtod(b, NULL);
            CHECK(fabs(da - db) <= pow(10.0, -d) * 1.0001 + fabs(db) * 4e-16);
        }
        for (int sig = 1; sig <= 12; sig++) {
            numfmt_sig(a, sizeof a, v, sig);
            double back = strtod(a, NULL);
            CHECK(fabs(back - v) <= fabs(v) * pow(10.0, 1 - sig) * 0.5001 + 1e-300);
        }
    }
    numfmt_sig(a, sizeof a, 999999.5, 6);
    CHECK(strcmp(a, "1e+06") == 0);
    /* at and next to each power of ten, where the exponent is decided */
    for (int i = -5; i <= 25; i++) {
        double p = pow(10.0, i);
        const double vs[3] = {p, nextafter(p, 0), nextafter(p, INFINITY)};
        for (int k = 0; k < 3; k++)
            for (int sig = 1; sig <= 15; sig += 7) {
                numfmt_sig(a, sizeof a, vs[k], sig);
                snprintf(b, sizeof b, "%.*e", sig - 1, vs[k]);
                CHECK(strtod(a, NULL) == strtod(b, NULL));
            }
    }
    /* between 1e-8 and 1e20 the digits are exactly those of %e (rounded
     * half to even), short decimals like 22.95 included */
    uint64_t y = 88172645463325252ull;
    int differ = 0;
    for (int i = 0; i < 200000; i++) {
        y ^= y << 13;
        y ^= y >> 7;
        y ^= y << 17;
        double v = (double)(y % 1000000007ull) / 1000000007.0 * 10 * pow(10.0, (int)((y >> 40) % 28) - 8);
        if ((y >> 20) % 3 == 0)
            v = round(v * 1000) / 1000;
        if (!(v >= 1e-8 && v < 1e20))
            continue;
        int sig = 1 + (int)((y >> 50) % 12);
        numfmt_sig(a, sizeof a, v, sig);
        snprintf(b, sizeof b, "%.*e", sig - 1, v);
        if (strtod(a, NULL) != strtod(b, NULL) && differ++ < 3)
            fprintf(stderr, "  %.17g with %d digits: %s, %%e: %s\n", v, sig, a, b);
    }
    CHECK_EQ_INT(differ, 0);
    numfmt_sig(a, sizeof a, 22.95, 3);
    CHECK(strcmp(a, "2.29e+01") == 0); /* 22.95 is 22.949999... in binary */
    numfmt_sig(a, sizeof a, 7.125, 3);
    CHECK(strcmp(a, "7.12e+00") == 0); /* an exact tie: to even, as %e */
    numfmt_sig(a, sizeof a, 1000.0, 3);
    CHECK(strcmp(a, "1e+03") == 0);
    numfmt_sig(a, sizeof a, 999.4, 3);
    CHECK(strcmp(a, "9.99e+02") == 0);

    /* the strict reader: what a config or CSV may say for a number */
    static const char *ok[] = {"1", "-2", "+3.5", ".5", "5.", "1e3", "1E-3", "0.25e+2"};
    static const char *no[] = {"", "0x10", "0x1p3", "inf", "nan", "1e", "e5", ".", "1_000", " 1", "1 ", "--1", "1e3.5"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        CHECK(num_is_decimal(ok[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECK(!num_is_decimal(no[i]));
    double pv = 0;
    CHECK(num_parse("2.5e1", &pv) == 0 && pv == 25.0);
    CHECK(num_parse("1e400", &pv) == -1);   /* decimal but not finite */
    CHECK(num_parse("0x10", &pv) == -1 && pv == 25.0);

    /* numfmt_gp prints exactly what "%.<p>g" does: report.json (p 10) and
     * ops.csv (p 9) depend on it byte for byte.  Random bit patterns,
     * picosecond multiples (the reports' times), values across 60 decades,
     * near-ties (x.5 at the last digit), powers of ten and their
     * neighbours, and negative fractions.  (40 million such values were
     * checked when it was written; this keeps 600 thousand.) */
    uint64_t st = 88172645463325252ull;
    long bad = 0;
    for (long i = 0; i < 300000; i++) {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        uint64_t r = st;
        double v;
        switch (i % 6) {
        case 0: memcpy(&v, &r, sizeof v); if (!isfinite(v)) continue; break;
        case 1: v = (double)(r % 100000000000ull) * 1e-12; break;
        case 2: v = (double)(r >> 11) / 9007199254740992.0 * pow(10, (int)(r % 60) - 30); break;
        case 3: v = ((double)(r % 2000000000ull) + 0.5) * pow(10, (int)(r % 30) - 15); break;
        case 4: v = nextafter(pow(10, (int)(r % 40) - 20), (r & 1) ? 1e300 : 0); break;
        default: v = (double)(r % 1000) / 7.0 * ((r >> 40) & 1 ? -1 : 1); break;
        }
        for (int p = 9; p <= 10; p++) {
            char gx[64], gy[64];
            numfmt_gp(gx, sizeof gx, v, p);
            snprintf(gy, sizeof gy, "%.*g", p, v);
            if (strcmp(gx, gy) != 0 && bad++ < 5)
                fprintf(stderr, "  %.17g p%d: %s, printf %s\n", v, p, gx, gy);
        }
    }
    CHECK_EQ_INT(bad, 0);
    static const double edge[] = {0.0, -0.0, 1e-300, 5e-324, 1.7976931348623157e308, 999999999.5,
                                  9999999999.5, 0.00012345678949999, 1e-5, 123456789012.0, 0.1};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        for (int p = 1; p <= 12; p++) {
            char gx[64], gy[64];
            numfmt_gp(gx, sizeof gx, edge[i], p);
            snprintf(gy, sizeof gy, "%.*g", p, edge[i]);
            CHECK(strcmp(gx, gy) == 0);
        }
    TEST_MAIN_END();
}
