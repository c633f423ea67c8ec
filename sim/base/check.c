/* check.c: see check.h. */
#define _DEFAULT_SOURCE 1   /* madvise and MADV_HUGEPAGE (Linux; absent elsewhere) */
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "membudget.h"

void sim_check_fail(const char *file, int line, const char *expr, const char *detail)
{
    fprintf(stderr, "strata: internal error at %s:%d: check failed: %s %s\n",
            file, line, expr, detail);
    abort();
}

void sim_oom(size_t bytes)
{
    fprintf(stderr, "strata: out of memory allocating %zu bytes\n", bytes);
    abort();
}

/* A large request is held against the memory budget before it is made. */
static void budget(size_t n)
{
    if (n >= ((size_t)1 << 20) && membudget_exceeded(n))
        membudget_fail(n);
}

/* A large block asks for transparent huge pages before it is first
 * touched: a 1M-op run's arrays are hundreds of MB, and faulting them in
 * 4 KiB at a time cost a third of its time (one fault per 2 MiB instead).
 * Only where the kernel leaves huge pages to madvise; the contents and the
 * results are the same either way. */
#define HUGE_MIN ((size_t)8 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)
static void huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    if (n < HUGE_MIN)
        return;
    uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
    if (b > a)
        (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

void *sim_xrealloc(void *p, size_t n)
{
    budget(n);
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        sim_oom(n);
    huge(q, n);
    return q;
}

void *sim_xcalloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        sim_oom(SIZE_MAX);
    budget(n * size);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        sim_oom(n * size);
    huge(p, n * size);
    return p;
}
