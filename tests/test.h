/* test.h: a tiny test harness.  Each test file is one executable; it runs
 * its cases, prints one line per failed check and ends with the plain
 * closing line "N passed, N failed" that CI understands.  Checks print
 * the values they compared. */
#ifndef STRATA_TEST_H
#define STRATA_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_passed_, test_failed_;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (cond) {                                                        \
            test_passed_++;                                                \
        } else {                                                           \
            test_failed_++;                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,         \
                    __LINE__, #cond);                                      \
        }                                                                  \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                 \
    do {                                                                   \
        long long a_ = (long long)(a), b_ = (long long)(b);                \
        if (a_ == b_) {                                                    \
            test_passed_++;                                                \
        } else {                                                           \
            test_failed_++;                                                \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",      \
                    __FILE__, __LINE__, #a, #b, a_, b_);                   \
        }                                                                  \
    } while (0)

/* |a - b| <= rel * |b| */
#define CHECK_NEAR_REL(a, b, rel)                                          \
    do {                                                                   \
        double a_ = (double)(a), b_ = (double)(b);                         \
        if (fabs(a_ - b_) <= (rel) * fabs(b_)) {                           \
            test_passed_++;                                                \
        } else {                                                           \
            test_failed_++;                                                \
            fprintf(stderr, "%s:%d: %s ~ %s failed: %.9g vs %.9g\n",       \
                    __FILE__, __LINE__, #a, #b, a_, b_);                   \
        }                                                                  \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                    \
    do {                                                                   \
        const char *h_ = (hay), *n_ = (needle);                            \
        if (h_ && strstr(h_, n_)) {                                        \
            test_passed_++;                                                \
        } else {                                                           \
            test_failed_++;                                                \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n",     \
                    __FILE__, __LINE__, h_ ? h_ : "(null)", n_);           \
        }                                                                  \
    } while (0)

#define TEST_MAIN_END()                                                    \
    do {                                                                   \
        printf("%d passed, %d failed\n", test_passed_, test_failed_);     \
        return test_failed_ ? 1 : 0;                                       \
    } while (0)

#endif
